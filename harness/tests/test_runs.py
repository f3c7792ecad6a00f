# SPDX-License-Identifier: GPL-2.0
"""One run of the suites as `run` does it (runs.py): what it prints and
writes, from what kunit.py's run gave. kunit.py is stood in for here;
test_cli.py runs it end to end."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

import pytest

from conftest import FAKE_BIN
from mmkunit import deps, runner, runs
from mmkunit.request import Build, Source
from mmkunit.session import Session

P, F, E = runner.Status.PASS, runner.Status.FAIL, runner.Status.ERROR


@pytest.fixture
def session(tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
	    monkeypatch: pytest.MonkeyPatch) -> Session:
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	monkeypatch.setenv('PATH', f'{FAKE_BIN}{os.pathsep}{os.environ["PATH"]}')
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	return Session(Source(cache=tmp_path / 'c', install=False,
			      kernel=kernel_tree), Build(quiet=True))


def _stand_in(monkeypatch: pytest.MonkeyPatch,
	      make: List[Any]) -> List[Path]:
	"""runner.run_kunit gives the results of make, one a call, in the
	results directory it is given; returns those directories."""
	dirs: List[Path] = []

	def run_kunit(tree: Path, build: Path, opts: runner.RunOptions,
		      results: Path, prebuilt_config: bool = False,
		      exec_only: bool = False) -> runner.RunResult:
		results.mkdir(parents=True, exist_ok=True)
		dirs.append(results)
		return make.pop(0)(results)

	monkeypatch.setattr(runner, 'run_kunit', run_kunit)
	return dirs


def test_a_run_with_a_crash_and_a_warning(
		session: Session, monkeypatch: pytest.MonkeyPatch,
		capsys: pytest.CaptureFixture[str]) -> None:
	"""The failed and crashed tests, the kernel's warning and its boots
	are named, then the results directory and the counts; the reports
	are written there."""
	dirs = _stand_in(monkeypatch, [lambda d: runner.RunResult(
		1, [runner.CaseResult('s.a', P), runner.CaseResult('s.b', E),
		    runner.CaseResult('s.c', F)], d,
		complaints=['WARNING: CPU: 0 PID: 1 at mm/x.c:1'], booted=True,
		boots=2)])
	result = runs.run_suites(session)
	assert not result.ok
	results, = dirs
	assert capsys.readouterr().out.splitlines() == [
		'mm-kunit: ERROR: s.b',
		'mm-kunit: FAIL: s.c',
		'mm-kunit: kernel warning while the tests ran: '
		'WARNING: CPU: 0 PID: 1 at mm/x.c:1',
		'mm-kunit: the kernel died before the end; the tests after each '
		'crash ran in further boots (2 in all)',
		f'mm-kunit: results in {results}',
		'mm-kunit: 1 passed, 2 failed, 0 skipped']
	junit = (results / 'junit.xml').read_text()
	assert all(f'name="{n}"' in junit for n in ('a', 'b', 'c')), junit
	assert json.loads((results / 'kcidb.json').read_text())['tests']


def test_a_kernel_that_did_not_build(
		session: Session, monkeypatch: pytest.MonkeyPatch,
		capsys: pytest.CaptureFixture[str]) -> None:
	"""The error and the compiler's errors go to stderr."""
	def broken(d: Path) -> runner.RunResult:
		(d / 'kunit.out').write_text(
			'../src/mm/filemap.c:12:3: error: expected ";"\n')
		return runner.RunResult(2, [], d, error='the kernel did not build')

	_stand_in(monkeypatch, [broken])
	assert runs.run_suites(session).untestable
	out, err = capsys.readouterr()
	assert [l for l in err.splitlines() if l.startswith('mm-kunit:')] == [
		'mm-kunit: error: the kernel did not build',
		'mm-kunit: build: ../src/mm/filemap.c:12:3: error: expected ";"']
	assert out.splitlines()[-1] == 'mm-kunit: 0 passed, 0 failed, 0 skipped'


def test_a_result_that_varies_between_runs_is_flaky(
		session: Session, monkeypatch: pytest.MonkeyPatch,
		capsys: pytest.CaptureFixture[str]) -> None:
	"""--repeat 3: the kernel is run twice more; a test that failed in
	one of the three runs is named with the runs, and fails the run."""
	def passing(d: Path) -> runner.RunResult:
		return runner.RunResult(0, [runner.CaseResult('s.a', P)], d,
					booted=True)

	def failing(d: Path) -> runner.RunResult:
		return runner.RunResult(1, [runner.CaseResult('s.a', F)], d,
					booted=True)

	dirs = _stand_in(monkeypatch, [passing, passing, failing])
	result = runs.run_suites(session, times=3)
	assert [d.name for d in dirs[1:]] == ['repeat-2', 'repeat-3']
	assert capsys.readouterr().out.splitlines()[-4:] == [
		f'mm-kunit: results in {dirs[0]}',
		'mm-kunit: 1 passed, 0 failed, 0 skipped',
		'mm-kunit: flaky: s.a: PASS in runs 1-2; FAIL in run 3',
		'mm-kunit: 3 runs, 1 flaky']
	assert result.error == '1 flaky' and not result.ok


def _edits(tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
	   monkeypatch: pytest.MonkeyPatch, boots: Optional[List[bool]] = None,
	   users: bool = False
	   ) -> Tuple[List[str], Callable[[Optional[str]], None]]:
	"""Runs of the suites in the harness's copy of a kernel tarball (of
	kernel_tree itself with users, as --kernel does), kunit.py stood in
	for, its kernels booting as boots says in turn (all of them if None):
	the list of how each run built ('kunit.py run', 'make', 'exec' of a
	kernel built otherwise), and a run after an edit of a test file (with
	users, of kernel_tree's mm/bar.c, which the series does not touch:
	rsync brings it over) to the text given (None: no edit)."""
	import tarfile
	tarball = tmp_path / 'linux-source-6.12.tar.xz'
	with tarfile.open(tarball, 'w:xz') as t:
		t.add(kernel_tree, arcname='linux-source-6.12')
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	if users:
		(kernel_tree / 'mm/bar.c').write_text('int bar;\n')
	calls: List[str] = []

	def run_kunit(tree: Path, build: Path, opts: runner.RunOptions,
		      results: Path, prebuilt_config: bool = False,
		      exec_only: bool = False) -> runner.RunResult:
		calls.append('exec' if exec_only else
			     'make' if prebuilt_config else 'kunit.py run')
		results.mkdir(parents=True, exist_ok=True)
		build.mkdir(parents=True, exist_ok=True)
		for name in ('.config', '.version', 'linux'):
			if not exec_only and (name != '.config' or
					      not prebuilt_config):
				(build / name).write_text(f'built {len(calls)}\n')
		return runner.RunResult(0, [runner.CaseResult('s.a', P)],
					results,
					booted=boots.pop(0) if boots else True)

	def run(text: Optional[str]) -> None:
		if text is not None and users:
			with open(kernel_tree / 'mm/bar.c', 'a') as f:
				f.write(text)
		elif text is not None:
			(overlay_dir / 'mm/tests/foo_kunit.h').write_text(text)
		source = Source(cache=tmp_path / 'c', install=False,
				kernel=kernel_tree if users else None,
				tarball=None if users else tarball)
		runs.run_suites(Session(source, Build(quiet=True)))

	monkeypatch.setattr(runner, 'run_kunit', run_kunit)
	return calls, run



def test_a_run_with_nothing_changed_boots_the_last_build(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""In the harness's copy of a kernel tarball: a run after a build
	that booted, with nothing written into the tree since, runs that
	kernel (kunit.py exec); an edited test file builds again, and so does
	every run after a build that did not boot."""
	calls, run = _edits(tmp_path, kernel_tree, overlay_dir, monkeypatch,
			    boots=[True, True, True, True, False, True])
	run(None)
	run(None)
	assert [c == 'exec' for c in calls] == [False, True]
	run('/* edited */\n')
	run(None)
	assert [c == 'exec' for c in calls] == [False, True, False, True]
	run('/* broken */\n')
	run(None)
	assert [c == 'exec' for c in calls] == [
		False, True, False, True, False, False]


def test_a_users_tree_is_built_as_the_harness_copy_of_it_changed(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""--kernel: the harness knows what changed in its copy from what
	rsync brought over, so a run with nothing changed boots the last
	build, and an edit of a C file of the user's tree builds with make
	(then kbuild's recipes), not kunit.py run (nor boots the last build
	first, as it would if it thought nothing was written)."""
	calls, run = _edits(tmp_path, kernel_tree, overlay_dir, monkeypatch,
			    users=True)
	run(None)
	run(None)
	assert calls == ['kunit.py run', 'exec']
	run('/* edited */\n')
	assert calls[2:] == ['make']
	with open(kernel_tree / 'Makefile', 'a') as f:
		f.write('# edited\n')
	run(None)
	assert calls[3:] == ['kunit.py run']


def test_a_rerun_of_a_users_tree_walks_no_copy_the_refresh_looked_at(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""--kernel with nothing changed: the refresh has put back whatever
	changed in the harness's copy since the refresh before, so the last
	build boots without a walk of the copy; an edit made in the copy
	itself is put back and built; a build made in the copy (its .config,
	which no refresh looks at) has the copy walked again, and built."""
	from mmkunit import stamp
	walks: List[bool] = []
	check = stamp.TreeCheck

	def tree_check(src: Path, build: Path, walk: bool = True
		       ) -> stamp.TreeCheck:
		walks.append(walk)
		return check(src, build, walk)

	monkeypatch.setattr(stamp, 'TreeCheck', tree_check)
	calls, run = _edits(tmp_path, kernel_tree, overlay_dir, monkeypatch,
			    users=True)
	run(None)
	walks.clear()
	run(None)
	assert calls == ['kunit.py run', 'exec'] and walks == [False]
	copy = next((tmp_path / 'c/trees').glob('user-*/src'))
	(copy / 'mm/bar.c').write_text('int bar = 3;\n')
	run(None)
	assert calls[2:] == ['make']
	assert (copy / 'mm/bar.c').read_text() == 'int bar;\n'
	walks.clear()
	(copy / '.config').write_text('CONFIG_MMU=y\n')
	run(None)
	assert calls[3:] == ['exec', 'kunit.py run'] and walks[0] is True


def test_a_file_of_a_users_tree_with_an_old_time_is_built(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""A file rsync brings over with a time older than the last build
	(restored from a backup in the user's tree): its objects are made
	older, and the plan is for it too."""
	from mmkunit import quickbuild
	calls, run = _edits(tmp_path, kernel_tree, overlay_dir, monkeypatch,
			    users=True)
	outdated: List[List[str]] = []
	planned: List[List[str]] = []
	monkeypatch.setattr(quickbuild, 'outdate', lambda b, c: bool(
		outdated.append([os.path.relpath(f, b.parent) for f in c])) or True)
	monkeypatch.setattr(quickbuild, 'load',
			    lambda b, k: quickbuild.Recording({}, []))
	monkeypatch.setattr(quickbuild, 'plan', lambda b, r, c: bool(
		planned.append([os.path.relpath(f, b.parent) for f in c])) or None)
	run(None)
	(kernel_tree / 'mm/bar.c').write_text('int bar = 2;\n')
	os.utime(kernel_tree / 'mm/bar.c', (1, 1))
	run(None)
	assert outdated == [['src/mm/bar.c']]
	assert planned[-1] == ['src/mm/bar.c'] and calls[1:] == ['make']


def test_an_edit_of_c_files_is_built_from_the_recorded_recipes(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""After an edit of C files only: with no recording, make builds,
	then make again with the recording shell (nothing to build) writes
	the recipes down; with one, the walks of the files the harness wrote
	start at once (quickbuild.Early), the rest of the plan after them, and
	the kernel is booted as it is; a plan whose recipe fails is built
	with make, and a walk that failed early runs again, as is a plan that
	leaves the kernel as it was. The build before the first edit is
	kunit.py run's."""
	from mmkunit import quickbuild
	calls, edited_run = _edits(tmp_path, kernel_tree, overlay_dir,
				   monkeypatch)

	def make(tree: Path, build: Path, opts: runner.RunOptions,
		 log: Path) -> float:
		assert any(o.startswith('SHELL=') for o in opts.make_options)
		assert 'MM_KUNIT_RECIPES' in opts.env
		calls.append('record')
		return 1.0

	def build(p: quickbuild.Plan, out: Any,
		  walked: Tuple[str, ...] = ()) -> bool:
		ran = [s.command for i, s in enumerate(p.steps)
		       if not (i < len(p.walks) and p.walks[i] in walked)]
		calls.append('+'.join(ran))
		if any(c in failing for c in ran):
			return False
		if 'link' in ran and not stale:
			(Path(p.steps[-1].cwd) / 'linux').write_text(
				f'linked {len(calls)}\n')
		return True

	recorded: List[str] = []
	failing: List[str] = []
	stale: List[bool] = []

	def plan(b: Path, r: quickbuild.Recording,
		 c: List[str]) -> Optional[quickbuild.Plan]:
		return quickbuild.Plan([quickbuild.Recipe(str(b), c, {})
					for c in ('walk mm', 'link')],
				       ['mm']) if c else None
	monkeypatch.setattr(runner, 'make', make)
	monkeypatch.setattr(quickbuild, 'save',
			    lambda b, k: recorded.append(k or '') or True)
	monkeypatch.setattr(quickbuild, 'load', lambda b, k: (
		quickbuild.Recording({}, []) if k in recorded else None))
	monkeypatch.setattr(quickbuild, 'plan', plan)
	monkeypatch.setattr(quickbuild, 'build', build)

	edited_run('/* first */\n')
	assert calls == ['kunit.py run']
	edited_run('/* one */\n')
	assert calls[1:] == ['make', 'record']
	edited_run('/* two */\n')
	assert calls[3:] == ['walk mm', 'link', 'exec']
	# A recipe fails (a compile error): make builds and says why.
	failing[:] = ['link']
	edited_run('/* three */\n')
	assert calls[6:] == ['walk mm', 'link', 'make']
	failing[:] = ['walk mm']
	edited_run('/* four */\n')
	assert calls[9:] == ['walk mm', 'walk mm+link', 'make']
	# Recipes that succeed but leave the kernel as it was (a link whose
	# make found nothing newer): make builds.
	failing[:] = []
	stale[:] = [True]
	edited_run('/* five */\n')
	assert calls[12:] == ['walk mm', 'link', 'make']


def test_a_recording_make_that_builds_keeps_nothing(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""If the make that writes kbuild's recipes down builds anything (a
	file saved while the kernel booted), the kernel is not the one that
	ran: no recipes are kept and the next run builds."""
	from mmkunit import quickbuild
	calls, edited_run = _edits(tmp_path, kernel_tree, overlay_dir,
				   monkeypatch)

	def make(tree: Path, build: Path, opts: runner.RunOptions,
		 log: Path) -> float:
		calls.append('record')
		(build / 'linux').write_text('built again\n')
		return 1.0

	saved: List[str] = []
	monkeypatch.setattr(runner, 'make', make)
	monkeypatch.setattr(quickbuild, 'save',
			    lambda b, k: saved.append(k or '') or True)
	edited_run('/* first */\n')
	edited_run('/* one */\n')
	assert calls == ['kunit.py run', 'make', 'record'] and not saved
	# Not the stamped kernel: built again, with make.
	edited_run(None)
	assert calls[3:] == ['make', 'record']
