# SPDX-License-Identifier: GPL-2.0
"""Running kunit.py and reading its results (runner.py): kunit.py's JSON,
the KTAP, kernel warnings, build errors, and a kernel that dies mid-run,
whose remaining tests run in further boots."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from conftest import FAIL_RUN, PASS_RUN, make_kernel_tree, suites_ktap
from mmkunit import ktap
from mmkunit import runner


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


def test_run_result_ok_and_summary(tmp_path: Path) -> None:
	P, F, S = runner.Status.PASS, runner.Status.FAIL, runner.Status.SKIP
	r = runner.RunResult(0, [runner.CaseResult('a', P),
				 runner.CaseResult('b', S)], tmp_path)
	assert r.ok and r.summary() == 'mm-kunit: 1 passed, 0 failed, 1 skipped'
	r.cases.append(runner.CaseResult('c', F))
	assert not r.ok and r.summary() == 'mm-kunit: 1 passed, 1 failed, 1 skipped'
	assert not runner.RunResult(0, [], tmp_path).ok  # no test ran
	assert not runner.RunResult(1, [runner.CaseResult('a', P)], tmp_path).ok


def test_kernel_warnings_during_tests_fail_the_run(tmp_path: Path) -> None:
	text = ktap.text(ktap.ktap_lines((PASS_RUN / 'console.log').read_text()))
	assert runner.kernel_complaints(text) == [], 'boot warnings are not ours'
	noisy = text.replace('    # Subtest: mm_swap_readahead\n',
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


P, E = runner.Status.PASS, runner.Status.ERROR


LISTED = ['s1.a', 's1.b', 's1.c', 's2.x', 's2.y', 's3.z']


def _result(tmp_path: Path, suites: Dict[str, List[str]]) -> runner.RunResult:
	return runner.RunResult(
		0 if suites else 1,
		[runner.CaseResult(f'{s}.{t}', P) for s, ts in suites.items()
		 for t in ts], tmp_path, booted=True)


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
		return _result(res, suites), suites_ktap(suites, finished)

	monkeypatch.setattr(runner, '_run_once', run_once)
	monkeypatch.setattr(runner, 'list_tests', lambda *a: LISTED)
	first = _result(tmp_path, {'s1': ['a']})
	first.kunit_returncode = 1
	first.cases.append(runner.CaseResult('s1.', E))  # kunit.py's placeholder
	merged = runner._run_the_rest(tmp_path, tmp_path, runner.RunOptions(),
				      first, suites_ktap({'s1': ['a']}, False))
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
				      first, suites_ktap({'s1': ['a']}, False))
	assert [(c.name, c.status) for c in merged.cases] == [('s1.a', P),
							       ('s1.b', E)]
	assert merged.boots == 1


def test_a_test_that_needs_more_cpus_boots_again_with_them(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""A run on few_cpus: each test that skipped saying it needs more
	CPUs boots again, alone, with the arch's boot options, and its
	results (every row) replace its skips; other skips stay. A test the
	kernel dies in on that boot is a crash."""
	two = 'needs two CPUs: boot with ncpus=2 (UML SMP)'
	S = runner.Status.SKIP
	first = [runner.CaseResult('s1.a', P),
		 runner.CaseResult('s1.race', S, skip_reason=two),
		 runner.CaseResult('s1.nodes', S,
				   skip_reason='needs two nodes with memory'),
		 runner.CaseResult('s2.rows.one', S, skip_reason=two),
		 runner.CaseResult('s2.rows.two', S, skip_reason=two),
		 runner.CaseResult('s3.dies', S, skip_reason=two)]
	again = {'s1.race': [runner.CaseResult('s1.race', P)],
		 's2.rows': [runner.CaseResult('s2.rows.one', P),
			     runner.CaseResult('s2.rows.two', runner.Status.FAIL)],
		 's3.dies': []}
	boots: List[Tuple[Optional[str], List[str], bool]] = []

	def run_once(tree: Path, build: Path, opts: runner.RunOptions,
		     res: Path, prebuilt_config: bool = False,
		     exec_only: bool = False
		     ) -> Tuple[runner.RunResult, List[ktap.KtapLine]]:
		glob = opts.filter_glob or ''
		boots.append((glob, list(opts.kernel_args), exec_only))
		cases = again[glob] if exec_only else first
		result = runner.RunResult(0, list(cases), res, booted=True)
		return result, suites_ktap({'s': []}, glob != 's3.dies')

	monkeypatch.setattr(runner, '_run_once', run_once)
	opts = runner.RunOptions(filter_glob='s*', kernel_args=['ncpus=2'],
				 few_cpus=('ncpus=1',))
	merged = runner.run_kunit(tmp_path, tmp_path, opts, tmp_path)
	assert boots == [('s*', ['ncpus=2', 'ncpus=1'], False),
			 ('s1.race', ['ncpus=2'], True),
			 ('s2.rows', ['ncpus=2'], True),
			 ('s3.dies', ['ncpus=2'], True)]
	assert sorted((c.name, c.status) for c in merged.cases) == [
		('s1.a', P), ('s1.nodes', S), ('s1.race', P),
		('s2.rows.one', P), ('s2.rows.two', runner.Status.FAIL),
		('s3.dies', E)]
	assert 'the kernel died in this test' in merged.cases[-1].log
	# Without few_cpus: one boot, the skips as they are.
	boots.clear()
	runner.run_kunit(tmp_path, tmp_path,
			 dataclasses.replace(opts, few_cpus=()), tmp_path)
	assert boots == [('s*', ['ncpus=2'], False)]


def test_uml_with_more_memory_boots_the_binary_itself(tmp_path: Path) -> None:
	"""kunit.py would append mem=1G: the kernel is booted with the mem=
	asked for, and kunit.py parses what it printed."""
	tree = make_kernel_tree(tmp_path / 'linux')
	build = tmp_path / 'build'
	build.mkdir()
	linux = build / 'linux'
	linux.write_text('#!/bin/sh\necho "$@" > argv\n'
			 f'cat {PASS_RUN / "console.log"}\n')
	linux.chmod(0o755)
	opts = runner.RunOptions(filter_glob='mm_swap*', memory='9G',
				 kernel_args=['foo=1'],
				 env={'FAKE_KUNIT_RUN': str(PASS_RUN)})
	result = runner.run_kunit(tree, build, opts, tmp_path / 'r',
				  exec_only=True)
	assert (build / 'argv').read_text().split() == [
		'foo=1', 'kunit.filter_glob=mm_swap*', 'kunit.enable=1',
		'mem=9G', 'console=tty', 'kunit_shutdown=halt']
	assert result.ok and result.cases, result.error
	assert (tmp_path / 'r/console.log').read_text() == \
		(PASS_RUN / 'console.log').read_text()


def test_uml_without_a_kernel_to_boot_fails(tmp_path: Path) -> None:
	tree = make_kernel_tree(tmp_path / 'linux')
	(tmp_path / 'build').mkdir()
	opts = runner.RunOptions(memory='9G',
				 env={'FAKE_KUNIT_RUN': str(PASS_RUN)})
	result = runner.run_kunit(tree, tmp_path / 'build', opts,
				  tmp_path / 'r', exec_only=True)
	assert not result.ok
	assert 'cannot boot' in (tmp_path / 'r/kunit.out').read_text()


# A kunit.py whose parse keeps what it was given (stdin) and gives the
# JSON of a saved run ($RESULTS, else the passing one) and exit code
# ($RC, else 0).
RECORDING_PARSE = f"""#!/usr/bin/env python3
import os, shutil, sys
assert sys.argv[1] == 'parse' and len(sys.argv) == 3, sys.argv
open('parsed.ktap', 'w').write(sys.stdin.read())
shutil.copy(os.environ.get('RESULTS', '{PASS_RUN / "results.json"}'),
	    sys.argv[2].split('=', 1)[1])
print('parsed')
sys.exit(int(os.environ.get('RC', '0')))
"""


def _booted_tree(tmp_path: Path, linux: str) -> Tuple[Path, Path]:
	"""A tree whose kunit.py parse records its input, and a build
	directory whose kernel is the shell script linux."""
	tree = make_kernel_tree(tmp_path / 'linux')
	(tree / runner.KUNIT_PY).write_text(RECORDING_PARSE)
	build = tmp_path / 'build'
	build.mkdir()
	(build / 'linux').write_text('#!/bin/sh\n' + linux)
	(build / 'linux').chmod(0o755)
	return tree, build


def test_a_built_uml_kernel_is_parsed_as_it_runs_without_kernel_lines(
		tmp_path: Path) -> None:
	"""The harness boots a built UML kernel itself and kunit.py parse
	reads its KTAP, the lines the kernel printed into it left out: one
	parse, none again afterwards."""
	console = ('Linux version 7.3\n[    1.0] KTAP version 1\n[    1.0] 1..1\n'
		   '[    1.1] random: crng init done\n'
		   '[    1.2]     ok 1 - t\n[    1.2] ok 1 - s\n'
		   'reboot: System halted')
	(tmp_path / 'console').write_text(console)
	tree, build = _booted_tree(tmp_path, f'cat {tmp_path / "console"}\n')
	result = runner.run_kunit(tree, build, runner.RunOptions(quiet=True),
				  tmp_path / 'r', exec_only=True)
	assert result.booted and result.cases, result.error
	assert (tree / 'parsed.ktap').read_text() == \
		'KTAP version 1\n1..1\n    ok 1 - t\nok 1 - s\n'
	assert (tmp_path / 'r/console.log').read_text() == console
	assert 'parsed' in (tmp_path / 'r/kunit.out').read_text()
	assert not (tmp_path / 'r/ktap-parsed.log').exists()


def test_a_parser_made_ready_reads_the_next_boot(tmp_path: Path) -> None:
	"""The parser ready_parser() started reads the next boot of its
	tree, and its JSON is the run's; one of another tree is ended, and
	the boot starts its own."""
	tree, build = _booted_tree(tmp_path, f'cat {PASS_RUN / "console.log"}\n')
	opts = runner.RunOptions(quiet=True)

	def boot(results: Path) -> str:
		"""The kernel booted, its results in results: its kunit.out."""
		result = runner.run_kunit(tree, build, opts, results,
					  exec_only=True)
		assert result.ok, result.error
		return (results / 'kunit.out').read_text()
	runner.ready_parser(tree, opts, tmp_path / 'ready.json')
	assert f'--json={tmp_path / "ready.json"}' in boot(tmp_path / 'r')
	assert not (tmp_path / 'ready.json').exists()
	other = make_kernel_tree(tmp_path / 'other')
	runner.ready_parser(other, opts, tmp_path / 'other.json')
	assert f'--json={tmp_path / "r2/results.json"}' in boot(tmp_path / 'r2')
	assert not runner._ready and not (tmp_path / 'other.json').exists()


def test_a_script_without_the_teardown(tmp_path: Path) -> None:
	"""no_teardown.py runs a script with its arguments and keeps its
	exit status, its output and the files it wrote; the script imports
	from its own directory, not the harness's (progress.py)."""
	script = tmp_path / 's.py'
	script.write_text('import importlib.util, sys\n'
			  'open(sys.argv[1], "w").write("written")\n'
			  'print("out", importlib.util.find_spec("progress"),'
			  ' end="")\n'
			  'sys.exit(3)\n')
	p = subprocess.run([sys.executable, str(Path(runner.__file__).parent /
						'no_teardown.py'),
			    str(script), str(tmp_path / 'f')],
			   capture_output=True, text=True,
			   env={k: v for k, v in os.environ.items()
				if k != 'PYTHONUNBUFFERED'})
	assert (p.returncode, p.stdout) == (3, 'out None')
	assert (tmp_path / 'f').read_text() == 'written'


def test_a_built_uml_kernel_that_hangs_is_killed(tmp_path: Path) -> None:
	"""After the run's timeout the kernel is killed, and kunit.out says
	so in kunit.py's words; a process it left holding its console open
	is not waited for."""
	tree, build = _booted_tree(
		tmp_path, 'echo "KTAP version 1"\nsleep 30 &\nsleep 30\n')
	result = runner.run_kunit(tree, build,
				  runner.RunOptions(quiet=True, timeout=1),
				  tmp_path / 'r', exec_only=True)
	assert result.seconds is not None and result.seconds < 10
	assert 'timed out after 1 seconds' in \
		(tmp_path / 'r/kunit.out').read_text()
	assert 'killed after 1 s' in (tmp_path / 'r/console.log').read_text()


def test_a_kernel_that_ended_is_not_waited_for_a_process_it_left(
		tmp_path: Path) -> None:
	tree, build = _booted_tree(
		tmp_path, f'cat {PASS_RUN / "console.log"}\nsleep 30 &\n')
	result = runner.run_kunit(tree, build,
				  runner.RunOptions(quiet=True, memory='2G'),
				  tmp_path / 'r', exec_only=True)
	assert result.ok, result.error
	assert result.seconds is not None and result.seconds < 10


def test_a_run_whose_tests_all_skip_is_a_success_as_for_kunit_py_exec(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""kunit.py parse exits 1 when every test skipped, where kunit.py
	exec exits 0; a failure still fails."""
	tree, build = _booted_tree(tmp_path, f'cat {PASS_RUN / "console.log"}\n')
	skipped = tmp_path / 'skipped.json'
	skipped.write_text((PASS_RUN / 'results.json').read_text().replace(
		'"status": "PASS"', '"status": "SKIP"'))
	monkeypatch.setenv('RESULTS', str(skipped))
	monkeypatch.setenv('RC', '1')
	result = runner.run_kunit(tree, build, runner.RunOptions(quiet=True),
				  tmp_path / 'r', exec_only=True)
	assert result.kunit_returncode == 0
	assert result.cases and all(c.status is runner.Status.SKIP
				    for c in result.cases)
	monkeypatch.setenv('RESULTS', str(FAIL_RUN / 'results.json'))
	result = runner.run_kunit(tree, build, runner.RunOptions(quiet=True),
				  tmp_path / 'r2', exec_only=True)
	assert result.kunit_returncode == 1 and not result.ok


def test_kunit_py_arguments_of_the_users_own_have_kunit_py_run_it(
		tmp_path: Path) -> None:
	tree = make_kernel_tree(tmp_path / 'linux')
	build = tmp_path / 'build'
	build.mkdir()
	opts = runner.RunOptions(kunit_args=['--raw_output'],
				 env={'FAKE_KUNIT_RUN': str(PASS_RUN)})
	result = runner.run_kunit(tree, build, opts, tmp_path / 'r',
				  exec_only=True)
	assert result.ok, result.error
	argv = (build / 'kunit-argv.txt').read_text().split()
	assert argv[0] == 'exec' and '--raw_output' in argv


def test_qemu_memory_and_timeout_go_to_kunit_py() -> None:
	opts = runner.RunOptions(arch='x86_64', qemu_args='-accel kvm',
				 memory='9G', timeout=3600,
				 kconfig_add=['CONFIG_FOO=y'])
	cmd = runner.kunit_command(Path('/t'), Path('/b'), opts, Path('/j'))
	assert '--qemu_args=-accel kvm -m 9G' in cmd
	assert '--timeout=3600' in cmd
	assert '--kconfig_add=CONFIG_FOO=y' in cmd


def test_a_slash_in_a_label_stays_in_the_directory_name(tmp_path: Path) -> None:
	# A generated mutant's id may end in 'aor:/'; its re-run under the
	# checkers adds '-debug' after it.
	d = runner.new_results_dir(tmp_path, 'mutant-f:3:20:aor:/-debug')
	assert d.parent == tmp_path / 'results'
	assert d.name.endswith('-mutant-f:3:20:aor:%2F-debug')


def test_ccache_rebuilds_what_an_incbin_reads(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""x86_64's bzImage embeds the kernel through piggy.S's .incbin, and
	piggy.S changes only with the kernel's sizes: with the harness's
	ccache options, a unit whose .incbin'd file changed is compiled
	again, not taken from the cache (depend mode took it, and QEMU booted
	a kernel built before), also if ccache.conf asks for depend mode."""
	import os
	import shutil
	import subprocess
	if not shutil.which('ccache') or not shutil.which('gcc'):
		pytest.skip('needs ccache and gcc')
	opts = runner.ccache_options(tmp_path / 'ccache')
	monkeypatch.setenv('CCACHE_DEPEND', 'true')
	(tmp_path / 'piggy.S').write_text(
		'.section .rodata\n.globl input_data\ninput_data:\n'
		'.incbin "vmlinux.bin"\n')
	embedded = []
	for kernel in (b'old kernel', b'new kernel'):
		(tmp_path / 'vmlinux.bin').write_bytes(kernel)
		subprocess.run(['ccache', 'gcc', '-Wp,-MMD,.piggy.o.d', '-c',
				'piggy.S', '-o', 'piggy.o'], cwd=tmp_path,
			       env={**os.environ, **opts.env},
			       check=True)
		embedded.append(subprocess.run(
			['objcopy', '-O', 'binary', '-j', '.rodata', 'piggy.o',
			 '/dev/stdout'], cwd=tmp_path, check=True,
			capture_output=True).stdout)
	assert embedded == [b'old kernel', b'new kernel']


def test_a_kernel_other_than_the_one_built_is_no_result(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""The console's banner names the build that booted; one other than
	the build directory's last (kbuild's .version) stops the run."""
	monkeypatch.delenv('KBUILD_BUILD_VERSION', raising=False)
	banner = ('Linux version 6.12.117 (root@vm) (gcc (Debian 12.2.0) 12.2.0, '
		  'GNU ld 2.40) #{} SMP PREEMPT_DYNAMIC Wed Nov 25 06:16:33 UTC '
		  '2026\n')
	(tmp_path / '.version').write_text('30\n')
	runner.check_booted(tmp_path, banner.format(30), {})
	with pytest.raises(runner.StaleKernelError,
			   match='the kernel that booted is build #1, but .* '
			   'last built #30'):
		runner.check_booted(tmp_path, banner.format(1), {})
	# A build number the user set, no banner, or no .version: no check.
	runner.check_booted(tmp_path, banner.format(1),
			    {'KBUILD_BUILD_VERSION': '1'})
	runner.check_booted(tmp_path, 'KTAP version 1\n', {})
	(tmp_path / '.version').unlink()
	runner.check_booted(tmp_path, banner.format(1), {})


def _kunit_py(tree: Path, json_text: str, printed: str = '',
	      code: int = 0) -> None:
	"""A kunit.py that prints printed, writes json_text to --json, and
	exits with code."""
	(tree / 'json.txt').write_text(json_text)
	(tree / runner.KUNIT_PY).write_text(
		'#!/usr/bin/env python3\nimport sys\n'
		'for a in sys.argv[1:]:\n'
		'    if a.startswith("--json="):\n'
		'        open(a[7:], "w").write(open("json.txt").read())\n'
		f'print({printed!r})\nsys.exit({code})\n')


def test_the_build_time_is_kunit_pys(tmp_path: Path) -> None:
	tree = make_kernel_tree(tmp_path / 'linux')
	_kunit_py(tree, (PASS_RUN / 'results.json').read_text(),
		  'Elapsed time: 9.8s total, 0.1s configuring, 3.3s building, '
		  '6.4s running')
	result = runner.run_kunit(tree, tmp_path / 'build', runner.RunOptions(),
				  tmp_path / 'r')
	assert result.ok and len(result.cases) == 38
	assert result.build_seconds == 3.3
	assert result.seconds is not None


@pytest.mark.parametrize('json_text, error', [
	('not json', 'kunit.py JSON is not valid JSON'),
	('{"name": "main", "sub_groups": []}',
	 'no test ran (does the filter match any test?)'),
])
def test_results_that_say_nothing(tmp_path: Path, json_text: str,
				  error: str) -> None:
	tree = make_kernel_tree(tmp_path / 'linux')
	_kunit_py(tree, json_text)
	result = runner.run_kunit(tree, tmp_path / 'build', runner.RunOptions(),
				  tmp_path / 'r')
	assert result.error.startswith(error) and not result.ok


def test_a_kernel_that_dies_before_its_first_test(tmp_path: Path) -> None:
	"""A kernel that leaves a console without KTAP started but ran no
	test; one that leaves no console did not start."""
	tree = make_kernel_tree(tmp_path / 'linux')
	died = tmp_path / 'died'
	died.mkdir()
	(died / 'console.log').write_text(
		"Kernel panic - not syncing: IO-APIC + timer doesn't work!\n")
	(died / 'exit-code').write_text('1\n')
	result = runner.run_kunit(tree, tmp_path / 'build',
				  runner.RunOptions(env={'FAKE_KUNIT_RUN': str(died)}),
				  tmp_path / 'r')
	assert (result.started, result.booted, result.died_before_tests) == \
		(True, False, True)
	(died / 'console.log').unlink()
	result = runner.run_kunit(tree, tmp_path / 'build',
				  runner.RunOptions(env={'FAKE_KUNIT_RUN': str(died)}),
				  tmp_path / 'r2')
	assert (result.started, result.died_before_tests) == (False, False)


def test_a_configured_build_is_built_with_make(tmp_path: Path) -> None:
	"""prebuilt_config: make builds the kernel and the harness boots it
	(as kunit.py exec would); a kernel that does not build is a run
	without results."""
	tree = make_kernel_tree(tmp_path / 'linux')
	build = tmp_path / 'build'
	result = runner.run_kunit(
		tree, build, runner.RunOptions(env={'FAKE_KUNIT_RUN': str(PASS_RUN)}),
		tmp_path / 'r', prebuilt_config=True)
	assert result.ok, result.error
	assert (build / 'kunit-argv.txt').read_text().startswith('exec ')
	assert 'fake kernel build' in (tmp_path / 'r/kunit.out').read_text()
	assert result.build_seconds is not None
	(tree / 'Makefile').write_text('all:\n\t@false\n')
	result = runner.run_kunit(tree, build, runner.RunOptions(),
				  tmp_path / 'r2', prebuilt_config=True)
	assert (result.kunit_returncode, result.cases, result.booted) == \
		(2, [], False)
	assert result.error == ('the kernel did not build; see '
				f'{tmp_path / "r2/kunit.out"}')


def test_a_run_is_held_to_the_ports_list() -> None:
	"""held_to_list(): a test the list names (a pattern covers a test's
	rows) is skipped with the list's reason if it failed, and failed if
	it passed; a crash stays a crash, and the others are as they were."""
	P, F, S, E = (runner.Status.PASS, runner.Status.FAIL,
		      runner.Status.SKIP, runner.Status.ERROR)
	cases = [runner.CaseResult(n, st) for n, st in (
		('s.a.row one', F), ('s.a.row two', P), ('s.b', F), ('s.c', E),
		('s.d', S), ('t.e', P))]
	held = runner.held_to_list(cases, [('s.a', 'VM_EXEC (7.2)'),
					   ('s.[cd]', 'by design')])
	assert [(c.name, c.status) for c in held] == [
		('s.a.row one', S), ('s.a.row two', F), ('s.b', F), ('s.c', E),
		('s.d', S), ('t.e', P)]
	assert held[0].skip_reason == \
		'fails on this kernel as its list says: VM_EXEC (7.2)'
	assert 'the port\'s list says it fails: VM_EXEC (7.2)' in held[1].log
	assert runner.held_to_list(cases, []) == cases


def test_kunit_pys_failure_is_the_lists_if_its_failures_are(
		tmp_path: Path) -> None:
	"""kunit.py exits 1 when a test fails: a run whose failures are all
	the list's is ok once held to it; one with another failure, a crash
	or an error is not."""
	P, F, E = runner.Status.PASS, runner.Status.FAIL, runner.Status.ERROR
	listed = [('s.a', 'by design')]

	def held(*cases: Tuple[str, runner.Status], error: str = '') -> bool:
		r = runner.RunResult(1, [runner.CaseResult(n, st) for n, st in cases],
				     tmp_path, error=error)
		runner._hold_to_list(r, listed)
		return r.ok
	assert held(('s.a', F), ('s.b', P))
	assert not held(('s.a', F), ('s.b', F))
	assert not held(('s.a', F), ('s.b', E))
	assert not held(('s.a', F), ('s.b', P), error='kunit.py failed')
	assert not held(('s.a', P), ('s.b', P))
