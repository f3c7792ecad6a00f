# SPDX-License-Identifier: GPL-2.0
"""Fixtures: a tiny fake kernel tree and overlay, and saved kunit.py output.

The fake tree has just what the harness looks at (Makefile, mm/,
tools/testing/kunit/kunit.py). Its kunit.py replays a saved run from
fixtures/kunit/ instead of building a kernel, so these tests need no kernel
build and run in seconds.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / 'fixtures'
sys.path.insert(0, str(REPO / 'harness'))
# Every overlay of the repository: the series (kernel/) and its ports.
OVERLAYS = [d for d in [REPO / 'kernel',
			*sorted((REPO / 'kernel/compat').iterdir())]
	    if (d / 'patches/series').is_file()]

FOO_C = textwrap.dedent('''\
	// SPDX-License-Identifier: GPL-2.0
	#include <linux/mm.h>

	static int foo(int x)
	{
		return x + 1;
	}

	static int bar(int x)
	{
		return x * 2;
	}
	''')

KCONFIG = textwrap.dedent('''\
	config FOO
		bool "foo"

	config ZED
		bool "zed"
	''')

# A stand-in for tools/testing/kunit/kunit.py: copies the saved run named
# by $FAKE_KUNIT_RUN into the build directory and the --json file, and
# exits with the code the saved run had. A build leaves a copy of it as
# the kernel, build_dir/linux, which prints the saved run's console when
# the harness boots it (as kunit.py exec would run it); kunit.py parse of
# the KTAP on its stdin gives the JSON of the saved run exec would give.
FAKE_KUNIT_PY = textwrap.dedent('''\
	#!/usr/bin/env python3
	import os, shutil, sys
	args = sys.argv[1:]
	# The kernel a build left, booted by the harness: what kunit.py exec
	# would run (its argv as exec's), in the tree that built it.
	booted = os.path.basename(sys.argv[0]) == 'linux'
	if booted:
		ours = ('kunit.enable=', 'mem=', 'console=', 'kunit_shutdown=')
		args = ['exec', f'--build_dir={os.getcwd()}'] + [
			f'--kernel_args={a}' for a in args
			if not a.startswith(ours + ('kunit.filter_glob=',))] + [
			a.split('=', 1)[1] for a in args
			if a.startswith('kunit.filter_glob=')]
		os.chdir(open('fake-tree').read().strip())
	opts = dict(a[2:].split('=', 1) for a in args if a.startswith('--') and '=' in a)
	run = os.environ['FAKE_KUNIT_RUN']
	# A tree can name its own saved run (a commit that fails, say).
	if os.path.exists('fake-kunit-run'):
		run = open('fake-kunit-run').read().strip()
	# FILE:TEXT:RUN: a tree whose FILE holds TEXT replays RUN (a patch
	# of the series is applied, say).
	if os.environ.get('FAKE_KUNIT_RUN_IF'):
		path, text, other = os.environ['FAKE_KUNIT_RUN_IF'].split(':', 2)
		if os.path.exists(path) and text in open(path).read():
			run = other
	# Runs of a built kernel (exec, or the harness's boot of it and its
	# parse) may replay another saved run.
	if (args[0] == 'exec' or args[0] == 'parse' and len(args) == 2) and \
	   os.environ.get('FAKE_KUNIT_EXEC_RUN'):
		run = os.environ['FAKE_KUNIT_EXEC_RUN']
	# A baseline (its results directory says so) may replay its own.
	if 'baseline' in opts.get('json', '') and \
	   os.environ.get('FAKE_KUNIT_BASELINE_RUN'):
		run = os.environ['FAKE_KUNIT_BASELINE_RUN']
	if args[0] == 'parse' and len(args) == 2:
		# The KTAP of a kernel the harness booted, on stdin: the JSON
		# of the run a kunit.py exec of it would have replayed.
		if not sys.stdin.read().strip():
			sys.exit('fake kunit.py parse: no KTAP')
		shutil.copy(os.path.join(run, 'results.json'), opts['json'])
		sys.exit(int(open(os.path.join(run, 'exit-code')).read()))
	log_dir = opts.get('build_dir') or os.path.dirname(opts['json'])
	os.makedirs(log_dir, exist_ok=True)
	with open(os.path.join(log_dir, 'kunit-argv.txt'), 'a') as f:
		f.write(' '.join(args) + '\\n')
	# Like kunit.py: --jobs is a build option, config and exec reject it.
	if args[0] in ('config', 'exec') and 'jobs' in opts:
		sys.exit('kunit.py: error: unrecognized arguments: --jobs')
	if args[0] == 'config':
		sys.exit(0)
	# What a results directory's runs replayed, for its parse to follow.
	replayed = os.path.join(os.path.dirname(opts.get('json', '.')), 'fake-run')
	if args[0] == 'parse':
		# The saved run's JSON stands for what kunit.py would parse.
		if os.path.exists(replayed):
			run = open(replayed).read()
		shutil.copy(os.path.join(run, 'results.json'), opts['json'])
		sys.exit(int(open(os.path.join(run, 'exit-code')).read()))
	if os.environ.get('FAKE_KUNIT_TERM_PARENT'):
		import signal, time
		os.kill(os.getppid(), signal.SIGTERM)
		time.sleep(2)
	if args[0] in ('run', 'build'):
		shutil.copy(__file__, os.path.join(opts['build_dir'], 'linux'))
		open(os.path.join(opts['build_dir'], 'fake-tree'), 'w').write(
			os.getcwd())
	if args[0] == 'build':
		sys.exit(0)
	if booted:
		print(open(os.path.join(run, 'console.log')).read(), end='')
		sys.exit(0)
	if os.path.exists(os.path.join(run, 'console.log')):
		shutil.copy(os.path.join(run, 'console.log'),
			    os.path.join(opts['build_dir'], 'test.log'))
	if os.path.exists(os.path.join(run, 'results.json')) and 'json' in opts:
		shutil.copy(os.path.join(run, 'results.json'), opts['json'])
		open(replayed, 'w').write(run)
	print('fake kunit.py: replaying', os.path.basename(run))
	sys.exit(int(open(os.path.join(run, 'exit-code')).read()))
	''')


def unified_diff(path: str, old: str, new: str) -> str:
	body = ''.join(difflib.unified_diff(
		old.splitlines(True), new.splitlines(True),
		f'a/{path}', f'b/{path}'))
	return f'diff --git a/{path} b/{path}\n' + body


def mail(subject: str, diff: str) -> str:
	return textwrap.dedent(f'''\
		From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
		From: Test Author <test@example.org>
		Date: Sun, 22 Nov 2026 10:00:00 +0000
		Subject: [PATCH] {subject}

		A test patch.

		Signed-off-by: Test Author <test@example.org>
		---
		''') + diff


def make_kernel_tree(root: Path) -> Path:
	(root / 'mm').mkdir(parents=True)
	(root / 'Makefile').write_text(
		'VERSION = 6\nPATCHLEVEL = 12\n'
		'all: $(O)/linux\n\t@echo fake kernel build\n'
		'$(O)/linux: tools/testing/kunit/kunit.py\n'
		'\t@mkdir -p $(O) && cp $< $@ && pwd > $(O)/fake-tree\n')
	(root / 'mm/foo.c').write_text(FOO_C)
	(root / 'mm/Kconfig').write_text(KCONFIG)
	kunit = root / 'tools/testing/kunit'
	kunit.mkdir(parents=True)
	(kunit / 'kunit.py').write_text(FAKE_KUNIT_PY)
	(kunit / 'kunit.py').chmod(0o755)
	return root


def make_overlay(root: Path) -> Path:
	"""An overlay with one patch (Kconfig + include) and two new files."""
	(root / 'patches').mkdir(parents=True)
	(root / 'mutants').mkdir()
	(root / 'mm/tests').mkdir(parents=True)
	(root / 'mm/tests/foo_kunit.h').write_text('/* tests of foo */\n')
	(root / 'mm/tests/.kunitconfig').write_text('CONFIG_KUNIT=y\n')
	diff = unified_diff('mm/Kconfig', KCONFIG, KCONFIG.replace(
		'\nconfig ZED', '\nconfig FOO_KUNIT_TEST\n\tbool\n\nconfig ZED'))
	diff += unified_diff('mm/foo.c', FOO_C,
			     FOO_C + '\n#include "tests/foo_kunit.h"\n')
	(root / 'patches/0001-mm-foo-add-tests.patch').write_text(
		mail('mm/foo: add tests', diff))
	(root / 'patches/series').write_text(
		'# the series\n'
		'0001-mm-foo-add-tests.patch mm/tests/foo_kunit.h mm/tests/.kunitconfig\n')
	(root / 'mutants/foo-off-by-one.patch').write_text(
		'foo: returns x + 2\n\n' + unified_diff(
			'mm/foo.c', FOO_C, FOO_C.replace('x + 1', 'x + 2')))
	return root


@pytest.fixture
def kernel_tree(tmp_path: Path) -> Path:
	return make_kernel_tree(tmp_path / 'linux')


@pytest.fixture
def overlay_dir(tmp_path: Path) -> Path:
	return make_overlay(tmp_path / 'overlay')


def snapshot(tree: Path) -> Dict[str, bytes]:
	"""Every file of a tree with its content, to check nothing changed."""
	return {str(p.relative_to(tree)): p.read_bytes()
		for p in sorted(tree.rglob('*')) if p.is_file()}


# What the harness finds on PATH in these tests besides the system's: a
# ccache that is never run (the fake kunit.py compiles nothing), so that the
# tests do not depend on the host having one.
FAKE_BIN = Path(__file__).resolve().parent / 'bin'


def run_cli(*args: str, env: Dict[str, str] = {},
	    cwd: Path = REPO) -> subprocess.CompletedProcess:
	full_env = dict(os.environ, **env)
	full_env['PATH'] = f'{FAKE_BIN}{os.pathsep}{full_env.get("PATH", "")}'

	return subprocess.run([str(REPO / 'run_kunit.sh'), *args], cwd=cwd,
			      env=full_env, capture_output=True, text=True,
			      timeout=120)


# Saved kunit.py runs of the swap suite, passing and failing.
PASS_RUN = FIXTURES / 'kunit/swap-pass'
FAIL_RUN = FIXTURES / 'kunit/swap-fail'


def env_for(overlay_dir: Path, run: Path) -> Dict[str, str]:
	"""The environment that points run_kunit.sh at the fake overlay and
	makes the fake kunit.py replay run."""
	return {'MM_KUNIT_OVERLAY': str(overlay_dir), 'FAKE_KUNIT_RUN': str(run),
		'FAKE_KUNIT_BASELINE_RUN': str(PASS_RUN)}


def results_dir(stdout: str) -> Path:
	"""The results directory a run printed."""
	m = re.search(r'^mm-kunit: results in (.+)$', stdout, re.M)
	assert m, stdout
	return Path(m.group(1))


def git(repo: Path, *args: str) -> str:
	"""git in repo, committing as a fixed identity; its output, stripped."""
	env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@e',
		   GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@e')
	return subprocess.run(['git', '-C', str(repo), *args], env=env,
			      check=True, capture_output=True,
			      text=True).stdout.strip()


def suites_ktap(suites: Dict[str, List[str]], finished: bool) -> List[Any]:
	"""KTAP of suites whose tests passed; without the last suite's result
	line unless finished (the kernel died after its last test's line)."""
	from mmkunit import ktap
	out = ['KTAP version 1', f'1..{len(suites)}']
	for n, (suite, tests) in enumerate(suites.items(), 1):
		out += ['    KTAP version 1', f'    # Subtest: {suite}',
			f'    1..{len(tests)}']
		out += [f'    ok {i} {t}' for i, t in enumerate(tests, 1)]
		if finished or n < len(suites):
			out.append(f'ok {n} {suite}')
	return ktap.ktap_lines('\n'.join(out) + '\n')


# A UML kernel that runs one suite, s. On one CPU (ncpus=1), test a
# passes (fails with mutant 8 live) and test b skips for want of CPUs;
# booted for s.b alone, b passes (fails with mutant 7 live). Each boot's
# arguments go to "boots" beside it.
TWO_CPU_UML = textwrap.dedent('''\
	#!/bin/sh
	echo "$*" >> "$(dirname "$0")/boots"
	echo 'KTAP version 1'
	echo '1..1'
	echo '    KTAP version 1'
	echo '    # Subtest: s'
	case "$*" in
	*ncpus=1*)
		echo '    1..2'
		case "$*" in
		*"mm_kunit_mutant=8 "*) echo '    not ok 1 a';;
		*) echo '    ok 1 a';;
		esac
		echo '    ok 2 b # SKIP needs two CPUs: boot with ncpus=2';;
	*kunit.filter_glob=s.b*)
		echo '    1..1'
		case "$*" in
		*"mm_kunit_mutant=7 "*) echo '    not ok 1 b';;
		*) echo '    ok 1 b';;
		esac;;
	esac
	echo 'ok 1 s'
	''')


@pytest.fixture
def two_cpu_uml(tmp_path: Path) -> Path:
	"""A build directory whose UML kernel is TWO_CPU_UML."""
	linux = tmp_path / 'linux'
	linux.write_text(TWO_CPU_UML)
	linux.chmod(0o755)
	return tmp_path
