# SPDX-License-Identifier: GPL-2.0
"""A kernel that dies mid-run: the test it died in is named, and the tests
after it run in further boots of the same kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from mmkunit import ktap
from mmkunit import runner

P, E = runner.Status.PASS, runner.Status.ERROR
LISTED = ['s1.a', 's1.b', 's1.c', 's2.x', 's2.y', 's3.z']


def _ktap(suites: Dict[str, List[str]], finished: bool) -> List[ktap.KtapLine]:
	"""KTAP of suites whose tests passed; without the last suite's result
	line unless finished (the kernel died after its last test's line)."""
	out = ['KTAP version 1', f'1..{len(suites)}']
	for n, (suite, tests) in enumerate(suites.items(), 1):
		out += ['    KTAP version 1', f'    # Subtest: {suite}',
			f'    1..{len(tests)}']
		out += [f'    ok {i} {t}' for i, t in enumerate(tests, 1)]
		if finished or n < len(suites):
			out.append(f'ok {n} {suite}')
	return ktap.ktap_lines('\n'.join(out) + '\n')


def _result(tmp_path: Path, suites: Dict[str, List[str]]) -> runner.RunResult:
	return runner.RunResult(
		0 if suites else 1,
		[runner.CaseResult(f'{s}.{t}', P) for s, ts in suites.items()
		 for t in ts], tmp_path, booted=True)


def test_finished_tests_and_complete() -> None:
	lines = _ktap({'s1': ['a', 'b']}, finished=False)
	assert ktap.finished_tests(lines) == ['s1.a', 's1.b']
	assert not ktap.complete(lines)
	assert ktap.complete(_ktap({'s1': ['a', 'b']}, finished=True))


def test_rows_are_not_tests() -> None:
	lines = ktap.ktap_lines(
		'KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: s\n'
		'    1..1\n        KTAP version 1\n        # Subtest: t\n'
		'        ok 1 row one\n        ok 2 row two\n    ok 1 t\n'
		'ok 1 s\n')
	assert ktap.finished_tests(lines) == ['s.t']
	assert ktap.complete(lines)


def test_run_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	# Boot 1 died in s1.b; boot 2 (s1.c) ran; boot 3 (s2) died in s2.x;
	# boot 4 (s2.y) and boot 5 (s3) ran.
	boots: Dict[str, Tuple[Dict[str, List[str]], bool]] = {
		's1.c': ({'s1': ['c']}, True),
		's2': ({}, False),
		's2.y': ({'s2': ['y']}, True),
		's3': ({'s3': ['z']}, True),
	}
	globs: List[str] = []

	def run_once(tree: Path, build: Path, opts: runner.RunOptions,
		     res: Path, prebuilt_config: bool = False,
		     exec_only: bool = False
		     ) -> Tuple[runner.RunResult, List[ktap.KtapLine]]:
		assert exec_only and opts.filter_glob
		globs.append(opts.filter_glob)
		suites, finished = boots[opts.filter_glob]
		return _result(res, suites), _ktap(suites, finished)

	monkeypatch.setattr(runner, '_run_once', run_once)
	monkeypatch.setattr(runner, 'list_tests', lambda *a: LISTED)
	first = _result(tmp_path, {'s1': ['a']})
	first.kunit_returncode = 1
	first.cases.append(runner.CaseResult('s1.', E))  # kunit.py's placeholder
	merged = runner._run_the_rest(tmp_path, tmp_path, runner.RunOptions(),
				      first, _ktap({'s1': ['a']}, False))
	assert globs == ['s1.c', 's2', 's2.y', 's3']
	assert [(c.name, c.status) for c in merged.cases] == [
		('s1.a', P), ('s1.b', E), ('s1.c', P), ('s2.x', E), ('s2.y', P),
		('s3.z', P)]
	assert 'the kernel died in this test' in merged.cases[1].log
	assert merged.boots == 5 and not merged.ok


def test_a_crash_in_the_last_test_needs_no_boot(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.setattr(runner, 'list_tests', lambda *a: ['s1.a', 's1.b'])
	first = _result(tmp_path, {'s1': ['a']})
	merged = runner._run_the_rest(tmp_path, tmp_path, runner.RunOptions(),
				      first, _ktap({'s1': ['a']}, False))
	assert [(c.name, c.status) for c in merged.cases] == [('s1.a', P),
							       ('s1.b', E)]
	assert merged.boots == 1
