# SPDX-License-Identifier: GPL-2.0
"""Flake hunting: the same built kernel run N times, results compared.

A test is flaky if its result was not the same in every run. A run that
broke down (no results, a kernel warning) counts as a result of its own,
under the name RUN_CASE, so that a run-level failure in one run of N is
reported too.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Dict, List, Sequence

from mmkunit import progress
from mmkunit import runner

# The name a run's own outcome is reported under.
RUN_CASE = 'mm_kunit.run'


@dataclasses.dataclass(frozen=True)
class Flake:
	"""A test whose result changed between runs."""
	name: str
	# Result -> the 1-based numbers of the runs that gave it.
	runs: Dict[str, List[int]]

	def describe(self) -> str:
		parts = [f'{status} in run{"s" if len(nums) > 1 else ""} '
			 f'{_ranges(nums)}' for status, nums in
			 sorted(self.runs.items(), key=lambda kv: kv[1][0])]
		return f'{self.name}: {"; ".join(parts)}'


def _ranges(nums: Sequence[int]) -> str:
	"""1, 2, 3, 5 -> '1-3, 5'."""
	out: List[str] = []
	start = prev = nums[0]
	for n in list(nums[1:]) + [0]:
		if n == prev + 1:
			prev = n
			continue
		out.append(f'{start}-{prev}' if prev > start else str(start))
		start = prev = n
	return ', '.join(out)


def _outcomes(result: runner.RunResult) -> Dict[str, str]:
	"""Every test's result in one run, and the run's own."""
	out = {c.name: c.status.value for c in result.cases}
	broken = result.error or result.complaints or not result.cases
	out[RUN_CASE] = 'broken' if broken else 'ok'
	return out


def flakes(results: Sequence[runner.RunResult]) -> List[Flake]:
	"""The tests whose result was not the same in every run.

	A test missing from a run (it never ran: the kernel crashed before
	it) counts as 'not run' there.
	"""
	outcomes = [_outcomes(r) for r in results]
	names = sorted({n for o in outcomes for n in o})
	found: List[Flake] = []
	for name in names:
		runs: Dict[str, List[int]] = {}
		for i, o in enumerate(outcomes, 1):
			runs.setdefault(o.get(name, 'not run'), []).append(i)
		if len(runs) > 1:
			found.append(Flake(name, runs))
	return found


def run_again(first: runner.RunResult, src: Path, build: Path,
	      opts: runner.RunOptions, times: int) -> List[runner.RunResult]:
	"""Runs the kernel the first run built times - 1 more times.

	Returns all the runs, the first included; none if times is 1 or the
	first run built nothing to run again.
	"""
	if times <= 1 or not first.booted:
		return []
	runs = [first]
	again = dataclasses.replace(opts, quiet=True)
	with progress.step(f'running the built kernel {times - 1} more times'):
		for n in range(2, times + 1):
			runs.append(runner.run_kunit(
				src, build, again, first.results_dir / f'repeat-{n}',
				exec_only=True))
	return runs
