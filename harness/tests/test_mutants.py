# SPDX-License-Identifier: GPL-2.0
"""The mutant matrix's verdicts and report (mutants.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import FAIL_RUN, PASS_RUN, env_for, run_cli
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
	r = mu.judge_mutant(m, result)
	assert r.verdict == mu.Verdict.KILLED
	assert r.failed == ['s.b', 's.c'] and r.crashed == ['s.b']
	text = mu.format_matrix([r])
	assert '      - s.b (crashed)' in text
	assert '      - s.c\n' in text


def test_the_matrix_names_its_slowest_mutant(tmp_path: Path,
					      overlay_dir: Path) -> None:
	m = _mutant(overlay_dir)
	fast = mu.judge_mutant(m, runner.RunResult(1, [runner.CaseResult('a', F)],
					    tmp_path, seconds=3.0))
	slow = mu.judge_mutant(dataclasses.replace(m, name='slow.patch'),
			runner.RunResult(1, [runner.CaseResult('a', F)],
					 tmp_path, seconds=41.6))
	lines = mu.format_matrix([fast, slow]).splitlines()
	assert 'slowest mutant: slow.patch (42 s)' in lines
	# A mutant not run on this arch has no time and is never the slowest.
	skipped = mu.MutantResult(m, mu.Verdict.NOT_HERE, [])
	assert 'slowest mutant' not in mu.format_matrix([skipped])


def test_mutant_verdicts(tmp_path: Path, overlay_dir: Path) -> None:
	m = ov.Overlay.load(overlay_dir).mutants()[0]
	P, F = runner.Status.PASS, runner.Status.FAIL
	killed = mu.judge_mutant(m, runner.RunResult(1, [runner.CaseResult('a', F)], tmp_path))
	survived = mu.judge_mutant(m, runner.RunResult(0, [runner.CaseResult('a', P)], tmp_path))
	broken = mu.judge_mutant(m, runner.RunResult(1, [], tmp_path, error='build failed'))
	assert killed.verdict == mu.Verdict.KILLED and killed.failed == ['a']
	assert survived.verdict == mu.Verdict.SURVIVED
	assert broken.verdict == mu.Verdict.NO_RESULT
	text = mu.format_matrix([killed, survived, broken])
	assert 'foo: returns x + 2' in text
	assert text.splitlines()[-1] == 'mutants: 1 killed, 2 failed, 0 skipped'


@pytest.mark.parametrize('run, args, code, verdict', [
	(FAIL_RUN, ['foo-off-by-one'], 0, 'killed'),
	(PASS_RUN, [], 1, 'survived'),
	(PASS_RUN, ['foo-*'], 1, 'survived'),
])
def test_mutants_command(overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
			 run: Path, args: list, code: int, verdict: str) -> None:
	cache = tmp_path / 'c'
	p = run_cli('mutants', '--kernel', str(kernel_tree), '--cache', str(cache),
		    '--no-install', *args, env=env_for(overlay_dir, run))
	assert p.returncode == code, p.stdout + p.stderr
	assert f'foo-off-by-one.patch: {verdict}' in p.stdout
	# The mutant is taken out of the prepared tree again.
	src = next(cache.glob('trees/*/src'))
	assert b'x + 1' in (src / 'mm/foo.c').read_bytes()
	# Configured once; the baseline, then each mutant, is built with
	# make and run with exec.
	calls = [line.split()[0] for line in
		 next(cache.glob('trees/*/build-um/kunit-argv.txt'))
		 .read_text().splitlines()]
	assert calls == ['config', 'exec', 'exec']


def test_mutants_need_a_baseline_that_passes(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	"""If the suites fail without a mutant, every mutant would look
	killed: the matrix stops before any, with a one-line error."""
	cache = tmp_path / 'c'
	env = dict(env_for(overlay_dir, FAIL_RUN),
		   FAKE_KUNIT_BASELINE_RUN=str(FAIL_RUN))
	p = run_cli('mutants', '--kernel', str(kernel_tree), '--cache', str(cache),
		    '--no-install', 'foo-off-by-one', env=env)
	assert p.returncode == 2, p.stdout + p.stderr
	assert 'the suites do not pass without a mutant (' in p.stderr
	assert 'foo-off-by-one.patch: killed' not in p.stdout
	calls = next(cache.glob('trees/*/build-um/kunit-argv.txt')).read_text()
	assert len(calls.splitlines()) == 2, calls


def test_full_mutant_run_fails_on_tests_no_mutant_fails(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	p = run_cli('mutants', '--kernel', str(kernel_tree), '--cache',
		    str(tmp_path / 'c'), '--no-install',
		    env=env_for(overlay_dir, FAIL_RUN))
	assert p.returncode == 1
	assert 'foo-off-by-one.patch: killed' in p.stdout
	assert ('mm-kunit: no mutant makes this test fail: mm_swap_readahead.'
		'swapin_nr_pages_test.no hits, adjacent forward') in p.stdout


def test_unguarded_lists_tests_no_mutant_fails(tmp_path: Path,
					       overlay_dir: Path) -> None:
	m = ov.Overlay.load(overlay_dir).mutants()[0]
	P, F = runner.Status.PASS, runner.Status.FAIL
	r1 = mu.judge_mutant(m, runner.RunResult(1, [runner.CaseResult('a', F),
					       runner.CaseResult('b', P),
					       runner.CaseResult('c', P)], tmp_path))
	r2 = mu.judge_mutant(m, runner.RunResult(1, [runner.CaseResult('a', P),
					       runner.CaseResult('b', F),
					       runner.CaseResult('c', P)], tmp_path))
	assert mu.unguarded([r1, r2]) == ['c']
	skipped = mu.judge_mutant(m, runner.RunResult(1, [runner.CaseResult('a', F),
						    runner.CaseResult('s', runner.Status.SKIP)],
					       tmp_path))
	assert mu.unguarded([skipped]) == []


def test_mutant_limited_to_an_arch(tmp_path: Path, overlay_dir: Path) -> None:
	path = overlay_dir / 'mutants/foo-off-by-one.patch'
	path.write_text('foo: needs two CPUs\nArch: x86_64 arm64 (SMP only)\n\n' +
			path.read_text().split('\n\n', 1)[1])
	m = ov.Patch.from_file(path)
	assert mu.arches(m) == ['x86_64', 'arm64']
	assert mu.runs_on(m, 'x86_64') and not mu.runs_on(m, 'um')
	r = mu.not_here(m, 'um')
	assert r.verdict == mu.Verdict.NOT_HERE
	assert 'um: Arch: x86_64 arm64 (SMP only)' in r.detail
	assert mu.format_matrix([r]).splitlines()[-1] == \
		'mutants: 0 killed, 0 failed, 1 skipped'


def test_mutant_limited_to_a_configuration(tmp_path: Path,
					   overlay_dir: Path) -> None:
	"""A mutant only MEMCG can show runs in --config distro builds only,
	and is not counted against the default configuration's matrix."""
	path = overlay_dir / 'mutants/foo-off-by-one.patch'
	path.write_text('foo: memcg reclaim\nConfig: distro (needs MEMCG)\n\n' +
			path.read_text().split('\n\n', 1)[1])
	m = ov.Patch.from_file(path)
	assert mu.configs(m) == ['distro'] and mu.arches(m) == []
	assert mu.runs_on(m, 'um', 'distro') and mu.runs_on(m, 'x86_64', 'distro')
	assert not mu.runs_on(m, 'um') and not mu.runs_on(m, 'um', 'debug')
	r = mu.not_here(m, 'um', 'debug')
	assert r.verdict == mu.Verdict.NOT_HERE
	assert 'um-debug: Config: distro (needs MEMCG)' in r.detail
	# With an Arch: line too, the reason is the line that leaves it out.
	path.write_text('foo: THP and memcg\nArch: x86_64 (THP)\n'
			'Config: distro (needs MEMCG)\n\n' +
			path.read_text().split('\n\n', 1)[1])
	m = ov.Patch.from_file(path)
	assert 'x86_64: Config: distro' in mu.not_here(m, 'x86_64').detail
	assert 'um-distro: Arch: x86_64' in mu.not_here(m, 'um', 'distro').detail
	# "default": the arch's own configuration, without --config.
	path.write_text('foo: 4 KiB pages\nArch: arm64 (exec_folio_order())\n'
			'Config: default (64k: order 0)\n\n' +
			path.read_text().split('\n\n', 1)[1])
	m = ov.Patch.from_file(path)
	assert mu.runs_on(m, 'arm64') and not mu.runs_on(m, 'arm64', '64k')
	assert 'arm64-64k: Config: default' in \
		mu.not_here(m, 'arm64', '64k').detail


def test_before_fix_verdicts(tmp_path: Path) -> None:
	from mmkunit import expected
	P, F = runner.Status.PASS, runner.Status.FAIL
	entries = expected.parse_expected(
		'fails | s.p1_* | 0002.patch\nfails | s.p2 | 0003.patch\n')
	cases = [runner.CaseResult('s.p1_a', F), runner.CaseResult('s.p1_b.row', F),
		 runner.CaseResult('s.p2', P), runner.CaseResult('s.other', P)]
	bf = ov.BeforeFix('without 0002', ('0002.patch',), ('0002.patch',))
	good = mu.judge_before_fix(bf, entries,
				   runner.RunResult(1, cases, tmp_path))
	assert good.ok
	# A needed test this arch skips (needs THP, say) cannot show the fix.
	skipped = mu.judge_before_fix(
		bf, entries, runner.RunResult(
			1, cases + [runner.CaseResult('s.p1_thp', runner.Status.SKIP)],
			tmp_path))
	assert skipped.ok
	cases[3] = runner.CaseResult('s.other', F)
	cases[1] = runner.CaseResult('s.p1_b.row', P)
	bad = mu.judge_before_fix(bf, entries + expected.parse_expected(
		'fails | s.gone | 0002.patch\n', 'exp'),
				  runner.RunResult(1, cases, tmp_path))
	assert not bad.ok
	# A tree that fails nothing has not shown that it lacks the fix.
	none = mu.judge_before_fix(bf, entries, runner.RunResult(
		0, [runner.CaseResult('s.other', P)], tmp_path))
	assert not none.ok
	text = mu.format_before_fix([good, bad])
	assert '- s.other  (unexpected)' in text
	assert '+ s.p1_b.row  (passed, but needs the fix)' in text
	assert 'exp:1: no test matches s.gone' in text
	assert text.splitlines()[-1] == 'before-fix: 1 passed, 1 failed'


def test_header_mutants_build_last(overlay_dir: Path) -> None:
	m = ov.Overlay.load(overlay_dir).mutants()[0]
	h = ov.Patch('a-header.patch', m.path, m.text, ('include/linux/x.h',))
	c = ov.Patch('z-code.patch', m.path, m.text, ('mm/x.c',))
	assert [p.name for p in mu.build_order([h, c])] == ['z-code.patch',
							    'a-header.patch']


def test_terminated_mutant_run_takes_the_mutant_out(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	cache = tmp_path / 'c'
	env = env_for(overlay_dir, PASS_RUN)
	env['FAKE_KUNIT_TERM_PARENT'] = '1'
	p = run_cli('mutants', '--kernel', str(kernel_tree), '--cache', str(cache),
		    '--no-install', env=env)
	assert p.returncode == 143, p.stdout + p.stderr
	src = next(cache.glob('trees/*/src'))
	assert b'x + 1' in (src / 'mm/foo.c').read_bytes(), 'mutant left applied'


def test_mutants_in_two_trees(overlay_dir: Path, kernel_tree: Path,
			      tmp_path: Path) -> None:
	"""--workers 2: the mutants are shared between two trees, the matrix
	keeps their order, and both trees hold the bare series afterwards."""
	from conftest import FOO_C, unified_diff
	for name, old, new in (('bar-plus-one', 'x * 2', 'x * 2 + 1'),
			       ('bar-times-three', 'x * 2', 'x * 3'),
			       ('foo-minus-one', 'x + 1', 'x - 1')):
		(overlay_dir / f'mutants/{name}.patch').write_text(
			f'{name}\n\n' + unified_diff('mm/foo.c', FOO_C,
						      FOO_C.replace(old, new)))
	cache = tmp_path / 'c'
	p = run_cli('mutants', '--kernel', str(kernel_tree), '--cache', str(cache),
		    '--no-install', '--workers', '2',
		    env=env_for(overlay_dir, FAIL_RUN))
	matrix = [line.strip().split(':')[0] for line in p.stdout.splitlines()
		  if line.strip().endswith(': killed')]
	assert matrix == ['bar-plus-one.patch', 'bar-times-three.patch',
			  'foo-minus-one.patch', 'foo-off-by-one.patch'], p.stdout
	srcs = sorted(cache.glob('trees/*/src'))
	assert [s.parent.name.endswith('.w2') for s in srcs] == [False, True]
	for src in srcs:
		text = (src / 'mm/foo.c').read_text()
		assert 'x + 1' in text and 'x * 2;' in text, src
	# Both trees ran mutants: kunit.py exec was called in each.
	for build in sorted(cache.glob('trees/*/build-um')):
		calls = (build / 'kunit-argv.txt').read_text().split()
		assert 'exec' in calls, build
