# SPDX-License-Identifier: GPL-2.0
"""run_kunit.sh end to end on a fake kernel tree (cli.py, handlers.py,
session.py).

The fake tree's kunit.py replays a saved run from fixtures/kunit/: the
harness's handling of passing, failing and broken runs is tested without a
kernel build.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import List, Tuple

import pytest

from conftest import (FAIL_RUN, FIXTURES, PASS_RUN, REPO, env_for, git,
		      results_dir, run_cli, snapshot)


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
	(kernel_tree / 'mm/Kconfig').write_text('rewritten upstream\n')
	before = snapshot(kernel_tree)
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 2
	assert '0001-mm-foo-add-tests.patch does not apply to mm/Kconfig' in p.stderr
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
	assert 'no base-commit: line' in p.stdout


def test_export_names_the_git_trees_head_as_base(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	(kernel_tree / 'README').write_text('Linux\n')
	git(kernel_tree, 'init', '-q')
	git(kernel_tree, 'add', '-A')
	git(kernel_tree, 'commit', '-qm', 'v7.3')
	head = git(kernel_tree, 'rev-parse', 'HEAD')
	out = tmp_path / 'out'
	p = run_cli('export', '--kernel', str(kernel_tree), '-o', str(out),
		    '--no-install', env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 0, p.stderr
	assert 'base-commit' not in p.stdout
	mail = out / '0001-mm-foo-add-tests.patch'
	assert mail.read_text().endswith(f'\nbase-commit: {head}\n')
	git(tmp_path, 'clone', '-q', str(kernel_tree), 'clone')
	git(tmp_path / 'clone', 'am', '-q', str(mail))
	# A tree with changes is not its HEAD: no base unless --base names it.
	(kernel_tree / 'README').write_text('Linux, changed\n')
	p = run_cli('export', '--kernel', str(kernel_tree), '-o', str(out),
		    '--no-install', env=env_for(overlay_dir, PASS_RUN))
	assert 'no base-commit: line' in p.stdout
	assert 'base-commit' not in mail.read_text()
	p = run_cli('export', '--kernel', str(kernel_tree), '-o', str(out),
		    '--no-install', '--base', 'a' * 40,
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 0, p.stderr
	assert mail.read_text().endswith(f'\nbase-commit: {"a" * 40}\n')
	p = run_cli('export', '--kernel', str(kernel_tree), '-o', str(out),
		    '--no-install', '--base', 'v7.3',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 2
	assert '--base v7.3: not a commit id' in p.stderr


def test_an_unknown_operator_stops_before_any_work(tmp_path: Path) -> None:
	p = run_cli('mutants', '--generated', '--operator', 'argh', '--cache',
		    str(tmp_path / 'c'), '--no-install')
	assert p.returncode == 2
	assert p.stderr.splitlines()[-1].endswith(
		'argument --operator: unknown operator: argh (the operators: '
		'ror,aor,bor,lor,negate,const,delete,return,swap,arg,order)')
	assert not (tmp_path / 'c').exists()


def test_help() -> None:
	p = run_cli('--help')
	assert p.returncode == 0 and 'commands (default: run)' in p.stdout


def test_the_wrapper_runs_the_python_it_is_given(tmp_path: Path) -> None:
	fake = tmp_path / 'python'
	fake.write_text('#!/bin/sh\necho "fake python: $*"\n')
	fake.chmod(0o755)
	p = run_cli('--help', env={'MM_KUNIT_PYTHON': str(fake)})
	assert p.returncode == 0
	assert p.stdout == 'fake python: -m mmkunit --help\n'


def test_a_run_imports_none_of_the_other_commands_modules() -> None:
	# Each module a run imports is time before the kernel boots.
	others = {'mmkunit.coverage', 'mmkunit.export', 'mmkunit.generated',
		  'mmkunit.lint', 'mmkunit.mutagen', 'mmkunit.mutants',
		  'mmkunit.replay', 'mmkunit.schemata', 'mmkunit.tce'}
	p = subprocess.run([sys.executable, '-c', (
		'import sys\n'
		'from mmkunit import cli\n'
		'cli.parse_args(["run", "--no-install", "mm_swap_readahead"])\n'
		'print(" ".join(sys.modules))')],
		env=dict(os.environ, PYTHONPATH=str(REPO / 'harness')),
		capture_output=True, text=True, check=True)
	assert others.isdisjoint(p.stdout.split())


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
	# Its options on top of the arch's, which they may override.
	assert '--kconfig_add=CONFIG_NUMA=y' in argv


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
	# kunit.py parse exits 1 when every test skipped, kunit.py run 0.
	skipped = tmp_path / 'skipped'
	shutil.copytree(FIXTURES / 'kunit/x86-interleaved', skipped)
	results = skipped / 'results.json'
	results.write_text(re.sub(r'"status": "[A-Z]+"', '"status": "SKIP"',
				  results.read_text()))
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c3'),
		    '--no-install', env=env_for(overlay_dir, skipped))
	assert (results_dir(p.stdout) / 'ktap-parsed.log').exists()
	assert p.returncode == 0, p.stdout + p.stderr


def test_each_command_parses_into_its_request() -> None:
	"""Each command's options go into the fields of its own request, and
	the ones it is not given keep the request's defaults."""
	from mmkunit import cli
	from mmkunit.request import (
		Build, CheckRequest, CoverageRequest, ExportRequest,
		FixesRequest, LintRequest, MutantsRequest, PrepareRequest,
		ReplayRequest, RunRequest, Scale, SelftestRequest, Source)
	src = Source(cache=Path('c'), install=False)
	common = ['--cache', 'c', '--no-install']
	build = Build(arch='x86_64', jobs=3, results=Path('r'), quiet=True,
		      config='debug', ccache=False)
	build_opts = ['--arch', 'x86_64', '--jobs', '3', '--results', 'r', '-q',
		      '--config', 'debug', '--no-ccache']
	one = Build(jobs=1)
	cases = [
		(['f*', '--kernel', 'k', '--in-place', '--without', 'a.patch',
		  '--without', 'b.patch', '--bisect', '--repeat', '4', *common,
		  *build_opts, '--', '--timeout=9'],
		 RunRequest(Source(cache=Path('c'), install=False,
				   kernel=Path('k')),
			    Build(arch='x86_64', jobs=3, results=Path('r'),
				  quiet=True, config='debug', ccache=False,
				  kunit_args=('--timeout=9',)),
			    in_place=True, without=('a.patch', 'b.patch'),
			    bisect=True, repeat=4, filter_glob='f*')),
		(['run', '--kernel', 'k', '--each-commit', 'A..B', *common,
		  '--jobs', '1'],
		 RunRequest(Source(cache=Path('c'), install=False,
				   kernel=Path('k')), one, each_commit='A..B')),
		(['prepare', '--tree', '6.1', '--without', 'x.patch', *common],
		 PrepareRequest(Source(cache=Path('c'), install=False,
				       tree='6.1'), without=('x.patch',))),
		(['export', '-o', 'o', '--from', 'A <a@b>', '--local', '--refresh',
		  '--base', 'a' * 40, *common],
		 ExportRequest(src, output=Path('o'), author='A <a@b>',
			       local=True, refresh=True, base='a' * 40)),
		(['lint', *common], LintRequest(src)),
		(['mutants', '--generated', '--in-diff', 'A..B', '--sample', '5',
		  '--seed', '3', '--shard', '1/4', '--workers', '3',
		  '--operator', 'arg,order', 'f', 'g', *common, *build_opts],
		 MutantsRequest(src, build, workers=3, mutants=('f', 'g'),
				generated=True, in_diff='A..B',
				operators=('arg', 'order'), sample=5, seed=3,
				shard=(1, 4))),
		(['mutants', '--merge', 'a.json', 'b.json', *common, '--jobs', '1'],
		 MutantsRequest(src, one, merge=(Path('a.json'), Path('b.json')))),
		(['replay', '--scale', 'seed', '--workers', '1', *common,
		  *build_opts],
		 ReplayRequest(src, build, scale=Scale.SEED, workers=1)),
		(['replay', 'mlock-recheck', *common, *build_opts],
		 ReplayRequest(src, build, replay='mlock-recheck')),
		(['fixes', *common, *build_opts], FixesRequest(src, build)),
		(['coverage', *common, *build_opts], CoverageRequest(src, build)),
		(['selftest', *common, 'harness/tests/test_cli.py'],
		 SelftestRequest(src, pytest_args=('harness/tests/test_cli.py',))),
		(['check', *common, *build_opts, '--', '--timeout=9'],
		 CheckRequest(src, dataclasses.replace(
			 build, kunit_args=('--timeout=9',)))),
	]
	for argv, want in cases:
		assert cli.parse_args(argv) == want, argv


@pytest.mark.parametrize('argv, message', [
	(['export', '--', '--timeout=9'], 'export takes no kunit.py arguments'),
	(['replay', '--', '--timeout=9'], 'replay takes no kunit.py arguments'),
	(['selftest', '--tree', '6.1'], 'unrecognized arguments: --tree'),
	(['lint', '--arch', 'um'], 'unrecognized arguments: --arch um'),
	(['mutants', '--shard', '4/4'], 'want K/N with 0 <= K < N, got 4/4'),
	(['mutants', '--generated', '--operator', 'arg,nope,ror:<'],
	 'argument --operator: unknown operator: nope ror:< (the operators: '
	 'ror,aor,'),
	(['mutants', '--operator', 'arg'], '--operator needs --generated'),
	(['--tree', '6.1', '--kernel', 'k'], '--tree and --kernel: give one'),
	(['prepare', '--in-place'], '--in-place needs --kernel DIR'),
	(['run', '--in-place'], '--in-place needs --kernel DIR'),
	(['--each-commit', 'A..B'], '--each-commit needs --kernel DIR'),
	(['--kernel', 'k', '--in-place', '--each-commit', 'A..B'],
	 '--each-commit builds in a clone; it does not go with --in-place'),
	(['export', '--base', 'HEAD'], '--base HEAD: not a commit id'),
	(['--arch', 'sparc'],
	 '--arch sparc: unsupported (the arches: um, x86_64, arm64)'),
	(['mutants', '--arch', 'sparc'], '--arch sparc: unsupported'),
	(['replay', '--arch', 'sparc64'], '--arch sparc64: unsupported'),
	(['replay', 'kswapd'], "argument replay: invalid choice: 'kswapd'"),
	(['fixes', '--arch', 'x86'], '--arch x86: unsupported'),
	(['coverage', '--arch', 'UM'], '--arch UM: unsupported'),
	(['check', '--arch', ''], '--arch : unsupported'),
])
def test_a_command_rejects_what_it_does_not_take(
		argv: List[str], message: str,
		capsys: pytest.CaptureFixture[str]) -> None:
	from mmkunit import cli
	with pytest.raises(SystemExit) as e:
		cli.parse_args(argv)
	assert e.value.code == 2
	assert message in capsys.readouterr().err
