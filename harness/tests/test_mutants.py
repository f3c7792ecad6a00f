# SPDX-License-Identifier: GPL-2.0
"""The mutant matrix's verdicts and report (mutants.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mmkunit import mutants as mu
from mmkunit import overlay as ov
from mmkunit import runner

P, F, E = runner.Status.PASS, runner.Status.FAIL, runner.Status.ERROR


def _mutant(overlay_dir: Path) -> ov.Patch:
	return ov.Overlay.load(overlay_dir).mutants()[0]


def test_a_crash_kills_and_is_marked(tmp_path: Path, overlay_dir: Path) -> None:
	m = _mutant(overlay_dir)
	result = runner.RunResult(1, [runner.CaseResult('s.a', P),
				      runner.CaseResult('s.b', E),
				      runner.CaseResult('s.c', F)], tmp_path,
				  seconds=12.4)
	r = mu.judge(m, result)
	assert r.verdict == mu.Verdict.KILLED
	assert r.failed == ['s.b', 's.c'] and r.crashed == ['s.b']
	text = mu.format_matrix([r])
	assert '      - s.b (crashed)' in text
	assert '      - s.c\n' in text


def test_the_matrix_names_its_slowest_mutant(tmp_path: Path,
					      overlay_dir: Path) -> None:
	m = _mutant(overlay_dir)
	fast = mu.judge(m, runner.RunResult(1, [runner.CaseResult('a', F)],
					    tmp_path, seconds=3.0))
	slow = mu.judge(dataclasses.replace(m, name='slow.patch'),
			runner.RunResult(1, [runner.CaseResult('a', F)],
					 tmp_path, seconds=41.6))
	lines = mu.format_matrix([fast, slow]).splitlines()
	assert 'slowest mutant: slow.patch (42 s)' in lines
	# A mutant not run on this arch has no time and is never the slowest.
	skipped = mu.MutantResult(m, mu.Verdict.NOT_HERE, [])
	assert 'slowest mutant' not in mu.format_matrix([skipped])

