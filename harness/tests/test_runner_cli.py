# SPDX-License-Identifier: GPL-2.0
"""Results handling, and run_kunit.sh end to end on a fake kernel tree.

The fake tree's kunit.py replays a saved run from fixtures/kunit/: the
harness's handling of passing, failing and broken runs is tested without a
kernel build.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, Tuple

import pytest

from conftest import FIXTURES, run_cli, snapshot
from mmkunit import mutants as mu
from mmkunit import overlay as ov
from mmkunit import runner

PASS_RUN = FIXTURES / 'kunit/swap-pass'
FAIL_RUN = FIXTURES / 'kunit/swap-fail'


def test_parse_kunit_json_flattens_rows() -> None:
	cases = runner.parse_kunit_json((PASS_RUN / 'results.json').read_text())
	assert len(cases) == 38
	assert all(c.status == runner.Status.PASS for c in cases)
	names = [c.name for c in cases]
	assert ('mm_swap_readahead.swapin_nr_pages_test.'
		'no hits, adjacent forward') in names
	assert 'mm_swap_readahead.swap_cache_get_folio_vma_hit_test' in names
	assert len(set(names)) == len(names)


def test_parse_kunit_json_failures() -> None:
	cases = runner.parse_kunit_json((FAIL_RUN / 'results.json').read_text())
	failed = [c.name for c in cases if c.status == runner.Status.FAIL]
	assert failed == ['mm_swap_readahead.swapin_nr_pages_test.'
			  'no hits, adjacent backward']


@pytest.mark.parametrize('text, message', [
	('{', 'not valid JSON'),
	('[]', 'not a kunit.py result'),
	('{"sub_groups": [{"name": "s", "test_cases": [{"name": "t"}]}]}',
	 'bad test case'),
	('{"sub_groups": [{"name": "s", "test_cases": '
	 '[{"name": "t", "status": "MAYBE"}]}]}', 'bad test case'),
])
def test_parse_kunit_json_rejects_bad_input(text: str, message: str) -> None:
	with pytest.raises(runner.ResultsError, match=message):
		runner.parse_kunit_json(text)


def test_extract_ktap_strips_console_prefix() -> None:
	console = ('[    0.1] booting\n'
		   '[    0.2] KTAP version 1\n'
		   '[    0.2] 1..1\n'
		   '[    0.3] ok 1 suite\n'
		   'reboot: System halted\n'
		   'after the end\n')
	assert runner.extract_ktap(console) == 'KTAP version 1\n1..1\nok 1 suite\n'
	assert runner.extract_ktap('no tests here\n') == ''


def test_run_result_ok_and_summary(tmp_path: Path) -> None:
	P, F, S = runner.Status.PASS, runner.Status.FAIL, runner.Status.SKIP
	r = runner.RunResult(0, [runner.CaseResult('a', P),
				 runner.CaseResult('b', S)], tmp_path)
	assert r.ok and r.summary() == 'mm-kunit: 1 passed, 0 failed, 1 skipped'
	r.cases.append(runner.CaseResult('c', F))
	assert not r.ok and r.summary() == 'mm-kunit: 1 passed, 1 failed, 1 skipped'
	assert not runner.RunResult(0, [], tmp_path).ok  # no test ran
	assert not runner.RunResult(1, [runner.CaseResult('a', P)], tmp_path).ok


def test_mutant_verdicts(tmp_path: Path, overlay_dir: Path) -> None:
	m = ov.Overlay.load(overlay_dir).mutants()[0]
	P, F = runner.Status.PASS, runner.Status.FAIL
	killed = mu.judge(m, runner.RunResult(1, [runner.CaseResult('a', F)], tmp_path))
	survived = mu.judge(m, runner.RunResult(0, [runner.CaseResult('a', P)], tmp_path))
	broken = mu.judge(m, runner.RunResult(1, [], tmp_path, error='build failed'))
	assert killed.verdict == mu.Verdict.KILLED and killed.failed == ['a']
	assert survived.verdict == mu.Verdict.SURVIVED
	assert broken.verdict == mu.Verdict.NO_RESULT
	text = mu.format_matrix([killed, survived, broken])
	assert 'foo: returns x + 2' in text
	assert text.splitlines()[-1] == 'mutants: 1 passed, 2 failed, 0 skipped'


# --- run_kunit.sh end to end ------------------------------------------------

def env_for(overlay_dir: Path, run: Path) -> Dict[str, str]:
	return {'MM_KUNIT_OVERLAY': str(overlay_dir), 'FAKE_KUNIT_RUN': str(run)}


def results_dir(stdout: str) -> Path:
	m = re.search(r'^mm-kunit: results in (.+)$', stdout, re.M)
	assert m, stdout
	return Path(m.group(1))


def test_run_passing(overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	before = snapshot(kernel_tree)
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 0, p.stdout + p.stderr
	assert p.stdout.splitlines()[-1] == 'mm-kunit: 38 passed, 0 failed, 0 skipped'
	assert 'fake kunit.py: replaying swap-pass' in p.stdout
	res = results_dir(p.stdout)
	assert json.loads((res / 'results.json').read_text())['sub_groups']
	assert (res / 'ktap.log').read_text().startswith('KTAP version 1\n')
	assert (res / 'console.log').is_file() and (res / 'kunit.out').is_file()
	junit = ET.parse(res / 'junit.xml').getroot()
	assert (junit.get('tests'), junit.get('failures')) == ('38', '0')
	kcidb = json.loads((res / 'kcidb.json').read_text())
	assert len(kcidb['tests']) == 38
	assert kcidb['builds'][0]['architecture'] == 'um'
	assert snapshot(kernel_tree) == before


@pytest.mark.parametrize('flags, ccache', [((), True), (('--no-ccache',), False)])
def test_run_compiles_through_ccache(overlay_dir: Path, kernel_tree: Path,
				     tmp_path: Path, flags: Tuple[str, ...],
				     ccache: bool) -> None:
	cache = tmp_path / 'c'
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(cache),
		    '--no-install', *flags, env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 0, p.stderr
	argv = next(cache.glob('trees/*/build-um/kunit-argv.txt')).read_text()
	assert ('--make_options=CC=ccache gcc' in argv) == ccache
	assert ('--make_options=HOSTCC=ccache gcc' in argv) == ccache


def test_run_failing(overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', env=env_for(overlay_dir, FAIL_RUN))
	assert p.returncode == 1
	assert ('mm-kunit: FAIL: mm_swap_readahead.swapin_nr_pages_test.'
		'no hits, adjacent backward') in p.stdout
	assert p.stdout.splitlines()[-1] == 'mm-kunit: 37 passed, 1 failed, 0 skipped'
	failures = ET.parse(results_dir(p.stdout) / 'junit.xml').findall('.//failure')
	assert len(failures) == 1
	assert 'swap_state_kunit.h:224' in failures[0].get('message')


def test_run_without_results(overlay_dir: Path, kernel_tree: Path,
			     tmp_path: Path) -> None:
	broken = tmp_path / 'broken-run'
	broken.mkdir()
	(broken / 'exit-code').write_text('1\n')
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', env=env_for(overlay_dir, broken))
	assert p.returncode == 1
	assert 'kunit.py exited 1 without results' in p.stderr
	assert p.stdout.splitlines()[-1] == 'mm-kunit: 0 passed, 0 failed, 0 skipped'


def test_run_passes_filter_and_kunit_args(overlay_dir: Path, kernel_tree: Path,
					  tmp_path: Path) -> None:
	cache = tmp_path / 'c'
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(cache),
		    '--no-install', 'mm_swap*', '--', '--timeout=60',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 0, p.stderr
	argv = next(cache.glob('trees/*/build-um/kunit-argv.txt')).read_text()
	assert '--kunitconfig=mm/tests' in argv
	assert '--arch=um' in argv
	assert argv.rstrip().endswith('--timeout=60 mm_swap*')


def test_run_rejects_non_kernel_tree(overlay_dir: Path, tmp_path: Path) -> None:
	(tmp_path / 'notakernel').mkdir()
	p = run_cli('--kernel', str(tmp_path / 'notakernel'), '--cache',
		    str(tmp_path / 'c'), '--no-install',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 2
	assert 'not a kernel source tree' in p.stderr


def test_run_patch_does_not_apply(overlay_dir: Path, kernel_tree: Path,
				  tmp_path: Path) -> None:
	(kernel_tree / 'mm/foo.c').write_text('rewritten upstream\n')
	before = snapshot(kernel_tree)
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 2
	assert '0001-mm-foo-add-tests.patch does not apply to mm/foo.c' in p.stderr
	assert snapshot(kernel_tree) == before
	assert not list((tmp_path / 'c').glob('trees/*/src'))


def test_in_place_applies_then_leaves_tree_alone_on_failure(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	p = run_cli('prepare', '--kernel', str(kernel_tree), '--in-place',
		    '--cache', str(tmp_path / 'c'), '--no-install',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 0, p.stderr
	assert 'kunit.py run --kunitconfig=mm/tests' in p.stdout
	assert (kernel_tree / 'mm/tests/foo_kunit.h').is_file()
	# Again: recognised as applied, nothing to do.
	p = run_cli('prepare', '--kernel', str(kernel_tree), '--in-place',
		    '--cache', str(tmp_path / 'c'), '--no-install',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 0 and '(0 files written)' in p.stdout
	# Copy mode on the same tree takes the applied series as it is.
	applied = snapshot(kernel_tree)
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 0, p.stdout + p.stderr
	assert 'already holds the series (applied in place)' in p.stderr
	assert snapshot(kernel_tree) == applied
	# A series that does not apply: named, and the tree is not touched.
	(kernel_tree / 'mm/Kconfig').write_text('menu "x"\nendmenu\n')
	before = snapshot(kernel_tree)
	p = run_cli('prepare', '--kernel', str(kernel_tree), '--in-place',
		    '--no-install', '--cache', str(tmp_path / 'c'),
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 2
	assert 'does not apply to mm/Kconfig' in p.stderr
	assert snapshot(kernel_tree) == before


def test_in_place_needs_kernel() -> None:
	p = run_cli('--in-place')
	assert p.returncode == 2 and '--in-place needs --kernel' in p.stderr


def test_missing_tools_without_root_rights(overlay_dir: Path, kernel_tree: Path,
					   tmp_path: Path) -> None:
	bin_dir = tmp_path / 'bin'
	bin_dir.mkdir()
	for tool in ('bash', 'python3', 'dirname', 'id', 'env'):
		os.symlink(shutil.which(tool), bin_dir / tool)
	env = env_for(overlay_dir, PASS_RUN)
	env['PATH'] = str(bin_dir)
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', env=env)
	assert p.returncode == 2
	assert 'missing Debian packages: gcc make' in p.stderr
	assert 'apt-get install -y --no-install-recommends gcc make' in p.stderr


def test_export_command(overlay_dir: Path, kernel_tree: Path,
			tmp_path: Path) -> None:
	p = run_cli('export', '--kernel', str(kernel_tree), '-o',
		    str(tmp_path / 'out'), '--no-install',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 0, p.stderr
	assert (tmp_path / 'out/0001-mm-foo-add-tests.patch').is_file()


@pytest.mark.parametrize('run, args, code, verdict', [
	(FAIL_RUN, ['foo-off-by-one'], 0, 'killed'),
	(PASS_RUN, [], 1, 'SURVIVED'),
	(PASS_RUN, ['foo-*'], 1, 'SURVIVED'),
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
	# Configured once; each mutant is built with make and run with exec.
	calls = [line.split()[0] for line in
		 next(cache.glob('trees/*/build-um/kunit-argv.txt'))
		 .read_text().splitlines()]
	assert calls == ['config', 'exec']


def test_full_mutant_run_fails_on_tests_no_mutant_fails(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	p = run_cli('mutants', '--kernel', str(kernel_tree), '--cache',
		    str(tmp_path / 'c'), '--no-install',
		    env=env_for(overlay_dir, FAIL_RUN))
	assert p.returncode == 1
	assert 'foo-off-by-one.patch: killed' in p.stdout
	assert ('mm-kunit: no mutant makes this test fail: mm_swap_readahead.'
		'swapin_nr_pages_test.no hits, adjacent forward') in p.stdout


def test_help() -> None:
	p = run_cli('--help')
	assert p.returncode == 0 and 'commands (default: run)' in p.stdout


def test_unguarded_lists_tests_no_mutant_fails(tmp_path: Path,
					       overlay_dir: Path) -> None:
	m = ov.Overlay.load(overlay_dir).mutants()[0]
	P, F = runner.Status.PASS, runner.Status.FAIL
	r1 = mu.judge(m, runner.RunResult(1, [runner.CaseResult('a', F),
					       runner.CaseResult('b', P),
					       runner.CaseResult('c', P)], tmp_path))
	r2 = mu.judge(m, runner.RunResult(1, [runner.CaseResult('a', P),
					       runner.CaseResult('b', F),
					       runner.CaseResult('c', P)], tmp_path))
	assert mu.unguarded([r1, r2]) == ['c']
	skipped = mu.judge(m, runner.RunResult(1, [runner.CaseResult('a', F),
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
		'mutants: 0 passed, 0 failed, 1 skipped'


def test_before_fix_verdicts(tmp_path: Path) -> None:
	from mmkunit import expected
	P, F = runner.Status.PASS, runner.Status.FAIL
	entries = expected.parse_expected(
		'fails | s.p1_* | 0002.patch\nfails | s.p2 | 0003.patch\n')
	cases = [runner.CaseResult('s.p1_a', F), runner.CaseResult('s.p1_b.row', F),
		 runner.CaseResult('s.p2', P), runner.CaseResult('s.other', P)]
	good = mu.judge_before_fix(['0002.patch'], entries,
				   runner.RunResult(1, cases, tmp_path))
	assert good.ok
	# A needed test this arch skips (needs THP, say) cannot show the fix.
	skipped = mu.judge_before_fix(
		['0002.patch'], entries, runner.RunResult(
			1, cases + [runner.CaseResult('s.p1_thp', runner.Status.SKIP)],
			tmp_path))
	assert skipped.ok
	cases[3] = runner.CaseResult('s.other', F)
	cases[1] = runner.CaseResult('s.p1_b.row', P)
	bad = mu.judge_before_fix(['0002.patch'], entries + expected.parse_expected(
		'fails | s.gone | 0002.patch\n', 'exp'),
				  runner.RunResult(1, cases, tmp_path))
	assert not bad.ok
	# A tree that fails nothing has not shown that it lacks the fix.
	none = mu.judge_before_fix(['0002.patch'], entries, runner.RunResult(
		0, [runner.CaseResult('s.other', P)], tmp_path))
	assert not none.ok
	text = mu.format_before_fix([good, bad])
	assert '- s.other  (unexpected)' in text
	assert '+ s.p1_b.row  (passed, but needs the fix)' in text
	assert 'exp:1: no test matches s.gone' in text
	assert text.splitlines()[-1] == 'before-fix: 1 passed, 1 failed'


def test_overlay_without_and_fixes(overlay_dir: Path) -> None:
	(overlay_dir / 'expected').write_text(
		'# comment\nfails | foo.* | 0001-mm-foo-add-tests.patch\n'
		'fails | bar.* | an upstream fix the kernel lacks\n')
	o = ov.Overlay.load(overlay_dir)
	assert o.fixes() == {'0001-mm-foo-add-tests.patch': ('foo.*',)}
	w = o.without(['0001-mm-foo-add-tests.patch'])
	assert w.patches == () and w.files == ()
	with pytest.raises(ov.OverlayError, match='not in the series'):
		o.without(['0009-nope.patch'])
	(overlay_dir / 'expected').write_text('fails | foo | 0009-nope.patch\n')
	with pytest.raises(ov.OverlayError, match='not in the series'):
		ov.Overlay.load(overlay_dir).fixes()


def test_kernel_warnings_during_tests_fail_the_run(tmp_path: Path) -> None:
	ktap = runner.extract_ktap((PASS_RUN / 'console.log').read_text())
	assert runner.kernel_complaints(ktap) == [], 'boot warnings are not ours'
	noisy = ktap.replace('    # Subtest: mm_swap_readahead\n',
			     '    # Subtest: mm_swap_readahead\n'
			     'WARNING: CPU: 0 PID: 78 at mm/swap_state.c:120 x+0x1/0x2\n'
			     'BUG: Bad page state in process kunit_try_catch  pfn:1234\n'
			     'WARNING: suspicious RCU usage\n'
			     'WARNING: possible circular locking dependency detected\n'
			     'BUG: KASAN: slab-use-after-free in foo+0x1/0x2\n'
			     'pagealloc: memory corruption\n'
			     'list_del corruption. next->prev should be 0000\n'
			     'ODEBUG: free active (active state 0) object: 0000\n')
	assert runner.kernel_complaints(noisy) == [
		'WARNING: CPU: 0 PID: 78 at mm/swap_state.c:120',
		'BUG: Bad page state in process kunit_try_catch  pfn:1234',
		'WARNING: suspicious RCU usage',
		'WARNING: possible circular locking dependency detected',
		'BUG: KASAN: slab-use-after-free in foo+0x1/0x2',
		'pagealloc: memory corruption',
		'list_del corruption. next->prev should be 0000',
		'ODEBUG: free active (active state 0) object: 0000']
	r = runner.RunResult(0, [runner.CaseResult('a', runner.Status.PASS)],
			     tmp_path, complaints=['WARNING: x'])
	assert not r.ok


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


def git(repo: Path, *args: str) -> str:
	return subprocess.run(['git', '-C', str(repo), *args], check=True,
			      capture_output=True, text=True).stdout.strip()


def commit_all(repo: Path, subject: str) -> str:
	git(repo, 'add', '-A')
	git(repo, '-c', 'user.name=T', '-c', 'user.email=t@example.org',
	    'commit', '-q', '-m', subject)
	return git(repo, 'rev-parse', 'HEAD')


def test_each_commit(overlay_dir: Path, kernel_tree: Path,
		     tmp_path: Path) -> None:
	"""Four commits: passing, failing tests, series conflict, not built."""
	git(kernel_tree, 'init', '-q')
	base = commit_all(kernel_tree, 'base')
	(kernel_tree / 'README').write_text('a change the series does not touch\n')
	good = commit_all(kernel_tree, 'mm: good')
	(kernel_tree / 'fake-kunit-run').write_text(str(FAIL_RUN))
	bad = commit_all(kernel_tree, 'mm: breaks swap readahead')
	(kernel_tree / 'fake-kunit-run').unlink()
	foo = (kernel_tree / 'mm/foo.c').read_text()
	(kernel_tree / 'mm/foo.c').write_text(foo.replace('x * 2', 'x << 1'))
	conflict = commit_all(kernel_tree, 'mm: rewrite foo')
	(kernel_tree / 'mm/foo.c').write_text(foo)
	broken = tmp_path / 'no-build'
	broken.mkdir()
	(broken / 'exit-code').write_text('1\n')
	(kernel_tree / 'fake-kunit-run').write_text(str(broken))
	nobuild = commit_all(kernel_tree, 'mm: does not build')
	before = snapshot(kernel_tree)
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', '--each-commit', f'{base}..HEAD',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 1, p.stdout + p.stderr
	table = p.stdout[p.stdout.index('commit  '):].splitlines()
	assert table[0].split() == ['commit', 'mm_swap_readahead', 'exit', 'subject']
	assert table[1].split()[:3] == [good[:12], 'ok', '38/38']
	assert table[1].split()[3] == '0'
	assert table[2].split()[:4] == [bad[:12], 'FAIL', '1/38', '1']
	assert table[3].split()[:3] == [conflict[:12], '-', '125']
	assert 'conflict: 0001-mm-foo-add-tests.patch does not apply to mm/foo.c' \
		in table[3]
	assert table[4].split()[:3] == [nobuild[:12], '-', '125']
	assert 'mm-kunit: 1 of 4 commits passed' in p.stdout
	# Each commit's reports, under the run's results directory.
	res = results_dir(p.stdout)
	assert (res / good[:12] / 'junit.xml').is_file()
	kcidb = json.loads((res / bad[:12] / 'kcidb.json').read_text())
	assert kcidb['checkouts'][0]['git_commit_hash'] == bad
	# The user's tree and its repository were only read.
	assert snapshot(kernel_tree) == before


def test_each_commit_needs_a_git_range(overlay_dir: Path, kernel_tree: Path,
				       tmp_path: Path) -> None:
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', '--each-commit', 'HEAD~1..HEAD',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 2
	assert 'not a git tree' in p.stderr
	p = run_cli('--each-commit', 'A..B', '--no-install')
	assert p.returncode == 2 and '--each-commit needs --kernel' in p.stderr


@pytest.mark.parametrize('case, code', [
	('pass', 0), ('fail', 1), ('conflict', 125), ('nobuild', 125),
	('setup', 128)])
def test_bisect_exit_codes(overlay_dir: Path, kernel_tree: Path,
			   tmp_path: Path, case: str, code: int) -> None:
	run = {'fail': FAIL_RUN}.get(case, PASS_RUN)
	if case == 'conflict':
		(kernel_tree / 'mm/foo.c').write_text('rewritten upstream\n')
	if case == 'nobuild':
		run = tmp_path / 'no-build'
		run.mkdir()
		(run / 'exit-code').write_text('1\n')
	kernel = tmp_path / 'nope' if case == 'setup' else kernel_tree
	p = run_cli('--kernel', str(kernel), '--cache', str(tmp_path / 'c'),
		    '--no-install', '--bisect', env=env_for(overlay_dir, run))
	assert p.returncode == code, p.stdout + p.stderr


def test_build_errors_name_the_compiler_errors(tmp_path: Path) -> None:
	(tmp_path / 'kunit.out').write_text(
		'$ make ...\nERROR:root:In file included from ../src/mm/filemap.c:4514:\n'
		'../src/mm/tests/filemap_kunit.h:492:13: error: assignment of '
		'read-only variable \u2018vmf\u2019\n'
		'make[4]: *** [scripts/Makefile.build:234: mm/filemap.o] Error 1\n')
	assert runner.build_errors(tmp_path) == [
		'../src/mm/tests/filemap_kunit.h:492:13: error: assignment of '
		'read-only variable \u2018vmf\u2019']
	assert runner.build_errors(tmp_path / 'missing') == []


def test_run_with_a_named_config(overlay_dir: Path, kernel_tree: Path,
				 tmp_path: Path) -> None:
	cache = tmp_path / 'c'
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(cache),
		    '--no-install', '--config', 'nope',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 2
	assert 'no um-nope.config in' in p.stderr
	if not shutil.which('qemu-system-x86_64'):
		pytest.skip('qemu-system-x86 not installed')
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(cache),
		    '--no-install', '--arch', 'x86_64', '--config', 'refs',
		    env=dict(env_for(overlay_dir, PASS_RUN), MM_KUNIT_KVM='0'))
	assert p.returncode == 0, p.stdout + p.stderr
	argv = next(cache.glob('trees/*/build-x86_64-refs/kunit-argv.txt')).read_text()
	assert '/kunit-configs/x86_64.config' in argv
	assert '/kunit-configs/x86_64-refs.config' in argv


def test_run_reparses_without_interleaved_kernel_lines(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', env=env_for(overlay_dir, FIXTURES / 'kunit/x86-interleaved'))
	res = results_dir(p.stdout)
	argv = (res / 'kunit-argv.txt').read_text()
	assert argv.startswith('parse --json=')
	assert argv.rstrip().endswith('ktap-parsed.log')
	parsed = (res / 'ktap-parsed.log').read_text()
	assert 'input: AT Raw Set 2 keyboard' not in parsed
	assert 'input: AT Raw Set 2 keyboard' in (res / 'ktap.log').read_text()
	# A run without such lines is parsed once, by kunit.py run.
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c2'),
		    '--no-install', env=env_for(overlay_dir, PASS_RUN))
	assert not (results_dir(p.stdout) / 'ktap-parsed.log').exists()


def test_check_steps_run_the_real_commands(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""Each step of `check` is its command's own request, with the
	step's arch, config and filter, and check's request is left as it
	was."""
	from conftest import FAKE_BIN
	from mmkunit import cli, deps, plan, request
	for k, v in env_for(overlay_dir, PASS_RUN).items():
		monkeypatch.setenv(k, v)
	monkeypatch.setenv('MM_KUNIT_KVM', '0')
	monkeypatch.setenv('PATH', f'{FAKE_BIN}{os.pathsep}{os.environ["PATH"]}')
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	req = cli.parse_args(['check', '--kernel', str(kernel_tree),
			      '--cache', str(tmp_path / 'c'), '--no-install', '-q'])
	assert isinstance(req, request.CheckRequest)
	steps = plan.check_steps(req)
	assert list(steps)[:2] == ['selftest', 'lint']
	for name in ('run um', 'run um debug', 'run x86_64', 'run x86_64 debug',
		     'run x86_64 refs'):
		assert plan.execute(steps[name]) == 0, name
	# The fake overlay's mutant survives the saved passing run.
	assert plan.execute(steps['mutants um']) == request.EXIT_TESTS_FAILED
	build = tmp_path / 'c/trees'
	argv = {p.parent.name: p.read_text().splitlines()
		for p in build.rglob('kunit-argv.txt')}
	assert sorted(argv) == ['build-um', 'build-um-debug', 'build-x86_64',
				'build-x86_64-debug', 'build-x86_64-refs']
	debug = argv['build-x86_64-debug'][-1]
	assert 'x86_64-debug.config' in debug
	assert '--kernel_args=page_poison=1' in debug
	assert 'um-debug.config' in argv['build-um-debug'][-1]
	assert '--kernel_args' not in argv['build-um'][-1]
	refs = argv['build-x86_64-refs'][-1]
	assert '--arch=x86_64' in refs and refs.endswith('mm_vmscan_mglru')
	assert 'x86_64-refs.config' in refs
	assert not any('mm_vmscan_mglru' in line for line in argv['build-um'])


def test_check_steps_carry_checks_options_and_keep_their_defaults() -> None:
	"""A step gets what was given to check, and otherwise its command's
	own defaults: fixes keeps its older kernel's tarball."""
	from mmkunit import cli, plan, request, session, trees
	req = cli.parse_args(['check', '--no-install', '--cache', '/c',
			      '--jobs', '1'])
	assert isinstance(req, request.CheckRequest)
	steps = plan.check_steps(req)
	fixes = steps['fixes 6.1 um']
	assert isinstance(fixes, request.FixesRequest)
	assert session.Session(fixes.source, tarball=trees.FIXES_TARBALL
			       ).tarball == trees.FIXES_TARBALL
	assert (fixes.source.cache, fixes.source.install, fixes.build.jobs) == \
		(Path('/c'), False, 1)
	run = steps['run x86_64 refs']
	assert isinstance(run, request.RunRequest)
	assert session.Session(run.source).tarball == trees.DEFAULT_TARBALL
	assert (run.build.arch, run.build.config, run.filter_glob, run.bisect) == \
		('x86_64', 'refs', 'mm_vmscan_mglru', False)
	req = cli.parse_args(['check', '--tarball', '/t/linux-source-6.1.tar.xz'])
	assert isinstance(req, request.CheckRequest)
	run = plan.check_steps(req)['run um']
	assert session.Session(run.source).tarball == \
		Path('/t/linux-source-6.1.tar.xz')


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


def test_clone_from_rewrites_paths_keeps_times(tmp_path: Path) -> None:
	from mmkunit import trees
	a = trees.PreparedTree('k', tmp_path / 'pristine', tmp_path / 'trees/k')
	(a.src / 'mm').mkdir(parents=True)
	(a.src / 'Makefile').write_text('all:\n')
	(a.src / 'mm/foo.c').write_text('int foo;\n')
	a._save_state({'source': str(a.source), 'files': ['mm/foo.c']})
	build = a.build_dir('um')
	(build / 'mm').mkdir(parents=True)
	(build / '.config').write_text('CONFIG_X=y\n')
	cmd = build / 'mm/.foo.o.cmd'
	cmd.write_text(f'savedcmd_mm/foo.o := gcc -I{a.src}/include {a.src}/mm/foo.c\n')
	os.utime(cmd, (1000, 1000))
	blob = build / 'mm/foo.o'
	blob.write_bytes(b'\x7fELF\0' + str(a.src).encode())
	(build / 'source').symlink_to(a.src)

	b = a.worker(2)
	assert b.base == tmp_path / 'trees/k.w2'
	b.clone_from(a, 'um')
	copy = b.build_dir('um')
	assert (copy / 'mm/.foo.o.cmd').read_text() == \
		f'savedcmd_mm/foo.o := gcc -I{b.src}/include {b.src}/mm/foo.c\n'
	assert (copy / 'mm/.foo.o.cmd').stat().st_mtime == 1000
	assert (copy / 'mm/foo.o').read_bytes() == blob.read_bytes()
	assert os.readlink(copy / 'source') == str(b.src)
	assert (b.src / 'mm/foo.c').read_text() == 'int foo;\n'
	assert b._load_state()['files'] == ['mm/foo.c']
	# The original is untouched; a tree with a build of its own is kept.
	assert str(a.src) in cmd.read_text()
	(copy / 'mm/.foo.o.cmd').write_text('mine\n')
	b.clone_from(a, 'um')
	assert (copy / 'mm/.foo.o.cmd').read_text() == 'mine\n'
