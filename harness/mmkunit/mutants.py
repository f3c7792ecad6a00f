# SPDX-License-Identifier: GPL-2.0
"""The mutant matrix: does each deliberate bug make some test fail?

A mutant is a patch in kernel/mutants/ that puts a bug back into the kernel
code under test (never into the tests). It is applied on top of the series;
the suites are built incrementally and run; the mutant is killed if at least
one test fails. A mutant that no test catches, or that does not build, is a
defect of the suites or of the mutant.
"""

from __future__ import annotations

import dataclasses
import enum
from pathlib import Path
from typing import Callable, List, Sequence

from mmkunit import overlay as ov
from mmkunit.runner import RunResult


class Verdict(enum.Enum):
	KILLED = 'killed'
	SURVIVED = 'SURVIVED'
	NO_RESULT = 'NO RESULT'  # did not build, or kunit.py gave no results


@dataclasses.dataclass
class MutantResult:
	mutant: ov.Patch
	verdict: Verdict
	failed: List[str]
	detail: str = ''
	# Every test case the run reported, failed or not.
	cases: List[str] = dataclasses.field(default_factory=list)


def describe(mutant: ov.Patch) -> str:
	"""The first line of the mutant's description (before the diff)."""
	for line in mutant.path.read_text(errors='replace').splitlines():
		if line.startswith(('diff --git', '--- ')):
			break
		if line.strip():
			return line.strip()
	return mutant.name


def judge(mutant: ov.Patch, result: RunResult) -> MutantResult:
	failed = [c.name for c in result.failed]
	cases = [c.name for c in result.cases]
	if failed:
		return MutantResult(mutant, Verdict.KILLED, failed, cases=cases)
	if result.error or not result.cases or result.kunit_returncode != 0:
		return MutantResult(mutant, Verdict.NO_RESULT, [],
				    result.error or 'kunit.py failed; see '
				    f'{result.results_dir / "kunit.out"}',
				    cases=cases)
	return MutantResult(mutant, Verdict.SURVIVED, [], cases=cases)


def unguarded(results: Sequence[MutantResult]) -> List[str]:
	"""Test cases that no mutant made fail: tests not yet seen to fail."""
	seen: List[str] = []
	for r in results:
		seen += [c for c in r.cases if c not in seen]
	failed = {name for r in results for name in r.failed}
	return [c for c in seen if c not in failed]


def run_matrix(mutants: Sequence[ov.Patch],
	       run_one: Callable[[ov.Patch], RunResult]) -> List[MutantResult]:
	return [judge(m, run_one(m)) for m in mutants]


def format_matrix(results: Sequence[MutantResult]) -> str:
	lines = ['', 'Mutant matrix (mutant: verdict: tests that failed)']
	for r in results:
		lines.append(f'  {r.mutant.name}: {r.verdict.value}')
		lines.append(f'      {describe(r.mutant)}')
		for name in r.failed:
			lines.append(f'      - {name}')
		if r.detail:
			lines.append(f'      {r.detail}')
	killed = sum(1 for r in results if r.verdict == Verdict.KILLED)
	lines.append(f'mutants: {killed} passed, {len(results) - killed} failed')
	return '\n'.join(lines)


def select(mutants: Sequence[ov.Patch], patterns: Sequence[str]) -> List[ov.Patch]:
	if not patterns:
		return list(mutants)
	import fnmatch
	chosen = [m for m in mutants
		  if any(fnmatch.fnmatch(m.name, p) or fnmatch.fnmatch(Path(m.name).stem, p)
			 for p in patterns)]
	if not chosen:
		raise ov.OverlayError(f'no mutant matches {" ".join(patterns)}')
	return chosen
