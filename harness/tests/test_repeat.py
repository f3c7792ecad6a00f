# SPDX-License-Identifier: GPL-2.0
"""--repeat N: the built kernel run N times, the flaky tests named."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, run_cli
from mmkunit import repeat
from mmkunit import runner

P, F = runner.Status.PASS, runner.Status.FAIL


def _run(tmp_path: Path, **statuses: runner.Status) -> runner.RunResult:
	return runner.RunResult(0, [runner.CaseResult(n, s)
				    for n, s in statuses.items()], tmp_path)


def test_same_results_are_no_flakes(tmp_path: Path) -> None:
	runs = [_run(tmp_path, a=P, b=F) for _ in range(3)]
	assert repeat.flakes(runs) == []


def test_a_changed_result_names_its_runs(tmp_path: Path) -> None:
	runs = [_run(tmp_path, a=P, b=P), _run(tmp_path, a=P, b=F),
		_run(tmp_path, a=P, b=F), _run(tmp_path, a=P, b=P),
		_run(tmp_path, a=P, b=F)]
	found = repeat.flakes(runs)
	assert [f.name for f in found] == ['b']
	assert found[0].runs == {'PASS': [1, 4], 'FAIL': [2, 3, 5]}
	assert found[0].describe() == 'b: PASS in runs 1, 4; FAIL in runs 2-3, 5'


def test_a_test_that_did_not_run_and_a_broken_run(tmp_path: Path) -> None:
	crashed = _run(tmp_path, a=P)
	crashed.error = 'the kernel crashed'
	found = repeat.flakes([_run(tmp_path, a=P, b=P), crashed])
	assert {f.name: f.runs for f in found} == {
		'b': {'PASS': [1], 'not run': [2]},
		repeat.RUN_CASE: {'ok': [1], 'broken': [2]}}


def test_repeat_end_to_end(overlay_dir: Path, kernel_tree: Path,
			   tmp_path: Path) -> None:
	"""One build, then kunit.py exec for each further run; a test whose
	result changed is named with its runs, and the run fails."""
	env = {'MM_KUNIT_OVERLAY': str(overlay_dir),
	       'FAKE_KUNIT_RUN': str(FIXTURES / 'kunit/swap-pass'),
	       'FAKE_KUNIT_EXEC_RUN': str(FIXTURES / 'kunit/swap-fail')}
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', '--repeat', '3', env=env)
	assert p.returncode == 1, p.stdout + p.stderr
	assert ('mm-kunit: flaky: mm_swap_readahead.swapin_nr_pages_test.'
		'no hits, adjacent backward: PASS in run 1; FAIL in runs 2-3'
		in p.stdout), p.stdout
	assert 'mm-kunit: 3 runs, 1 flaky' in p.stdout
	argv = next((tmp_path / 'c/trees').rglob('kunit-argv.txt'))
	assert [line.split()[0] for line in argv.read_text().splitlines()] == \
		['run', 'exec', 'exec']
	env['FAKE_KUNIT_EXEC_RUN'] = env['FAKE_KUNIT_RUN']
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', '--repeat', '2', env=env)
	assert p.returncode == 0, p.stdout + p.stderr
	assert 'mm-kunit: 2 runs, 0 flaky' in p.stdout
