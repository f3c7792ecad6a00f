# SPDX-License-Identifier: GPL-2.0
"""run --watch (watch.py): what inotify's events say changed, the refresh
of the copy from them alone, and the runs a change and Enter start, end
to end on the fake kernel tree."""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from conftest import FAKE_BIN, PASS_RUN, REPO, env_for, snapshot
from mmkunit import mirror, overlay as ov, watch


def _tree(root: Path) -> Path:
	(root / 'mm/sub').mkdir(parents=True)
	(root / 'mm/a.c').write_text('a\n')
	(root / 'mm/sub/b.c').write_text('b\n')
	(root / 'lib').mkdir()
	(root / 'lib/x.c').write_text('x\n')
	(root / '.git').mkdir()
	(root / '.git/HEAD').write_text('ref\n')
	return root


@pytest.fixture
def watched(tmp_path: Path) -> Tuple[Path, watch.Watcher]:
	root = _tree(tmp_path / 't')
	w = watch.Watcher()
	w.add(root)
	yield root, w
	w.close()


def _entries(events: List[watch.Event]) -> Set[Tuple[str, str]]:
	return {x for e in events for x in e.entries()}


def test_a_write_names_the_file(watched: Tuple[Path, watch.Watcher]) -> None:
	root, w = watched
	(root / 'mm/sub/b.c').write_text('b2\n')
	events = w.settled()
	assert _entries(events) == {('f', 'mm/sub/b.c')}
	assert not any(e.editors for e in events)


def test_a_new_directory_is_watched(
		watched: Tuple[Path, watch.Watcher]) -> None:
	"""A directory made after the watch began: its parent's entries
	changed, and its own (what was made in it before its watch: each
	directory under it is compared); what is written in it later is
	seen."""
	root, w = watched
	(root / 'mm/new/deeper').mkdir(parents=True)
	assert _entries(w.settled()) == {('d', 'mm'), ('d', 'mm/new'),
					 ('d', 'mm/new/deeper')}
	(root / 'mm/new/deeper/c.c').write_text('c\n')
	assert ('d', 'mm/new/deeper') in _entries(w.settled())


def test_deleted_and_renamed(watched: Tuple[Path, watch.Watcher]) -> None:
	root, w = watched
	(root / 'mm/a.c').unlink()
	(root / 'mm/sub/b.c').rename(root / 'mm/b.c')
	assert _entries(w.settled()) == {('d', 'mm'), ('d', 'mm/sub')}


def test_what_rsync_leaves_out_is_not_watched(
		watched: Tuple[Path, watch.Watcher]) -> None:
	""".git (RSYNC_EXCLUDES) is not watched; a .config at the top names
	nothing; a directory's times changed name nothing."""
	root, w = watched
	(root / '.git/HEAD').write_text('other\n')
	(root / '.config').write_text('CONFIG_X=y\n')
	os.utime(root / 'mm/sub', (1, 1))
	assert w.settled() == []


def test_editors_files(watched: Tuple[Path, watch.Watcher]) -> None:
	root, w = watched
	for name in ('.a.c.swp', 'a.c~', '.#a.c', '4913'):
		(root / 'mm' / name).write_text('x')
	events = w.settled()
	assert events and all(e.editors for e in events)


def test_lost_events(watched: Tuple[Path, watch.Watcher]) -> None:
	_, w = watched
	w._event(-1, watch.IN_Q_OVERFLOW, '', [])
	assert w.lost


def _same(a: Path, b: Path, keep: Set[str] = set()) -> None:
	"""a and b hold the same files, but keep and what rsync leaves out."""
	def files(t: Path) -> Dict[str, bytes]:
		return {k: v for k, v in snapshot(t).items()
			if k not in keep and not mirror.excluded(k, False) and
			not k.startswith('.git/')}
	assert files(a) == files(b)


def test_refresh_from_what_was_seen(tmp_path: Path) -> None:
	"""The copy brought up to date from the events alone is the copy a
	refresh that walks would make: edits, a new directory, a deletion,
	a rename in the user's tree; an edit made in the copy put back."""
	user = _tree(tmp_path / 'user')
	copy = tmp_path / 'copy'
	state = mirror.copy_of(user, copy, True)
	w = watch.Watcher()
	w.add(user)
	w.add(copy)
	try:
		(user / 'mm/a.c').write_text('a, edited\n')
		(user / 'mm/new').mkdir()
		(user / 'mm/new/c.c').write_text('c\n')
		(user / 'mm/sub/b.c').rename(user / 'mm/b.c')
		(copy / 'lib/x.c').write_text('edited in the copy\n')
		(copy / 'lib/y.c').write_text('made in the copy\n')
		events = w.settled()
	finally:
		w.close()
	seen = mirror.Seen(
		[x for e in events if e.root == user for x in e.entries()],
		[x for e in events if e.root == copy for x in e.entries()])
	written, after = mirror.refresh(user, copy, set(), state, seen)
	_same(user, copy)
	assert set(written) == {'mm/a.c', 'mm/new/c.c', 'mm/b.c', 'mm/sub/b.c',
				'lib/x.c', 'lib/y.c'}
	# The walk that follows looks at all since the last walk.
	assert mirror.State.load(after).since == mirror.State.load(state).since


def test_a_refresh_tells_its_writes_from_an_edit_of_the_copy(
		tmp_path: Path) -> None:
	"""The events of what the preparation wrote (the refresh's rsync and
	the overlay's files, each through a file of another name, renamed;
	a directory made) are dropped; edits made in the copy beside them,
	a file made and one deleted in the same directories, are kept."""
	user = _tree(tmp_path / 'user')
	copy = tmp_path / 'src'
	state = mirror.copy_of(user, copy, True)

	class _T:
		src = copy
	w = watch.Watch.__new__(watch.Watch)
	w.tree, w.pending = _T, []  # type: ignore[assignment]
	w.watcher = watch.Watcher()
	w.watcher.add(copy)
	try:
		(user / 'mm/a.c').write_text('a, edited\n')
		written, _ = mirror.refresh(user, copy, set(), state,
					    mirror.Seen([('f', 'mm/a.c')], []))
		written += ov.sync_files(copy, {'mm/sub/b.c': b'patched\n',
						'mm/tests/t.h': b'new\n'})
		(copy / 'mm/sub/c.c').write_text('made in the copy\n')
		(copy / 'mm/x.c').write_text('made in the copy\n')
		(copy / 'lib/x.c').unlink()
		w._ours(written)
	finally:
		w.watcher.close()
	assert sorted(written) == ['mm/a.c', 'mm/sub/b.c', 'mm/tests/t.h']
	assert _entries(w.pending) == {('f', 'mm/sub/c.c'), ('d', 'mm/sub'),
				       ('f', 'mm/x.c'), ('d', 'mm'),
				       ('d', 'lib')}


class _Watching:
	"""run_kunit.sh run --watch on the fake kernel tree."""

	def __init__(self, *args: str, env: Dict[str, str]) -> None:
		full = dict(os.environ, **env)
		full['PATH'] = f'{FAKE_BIN}{os.pathsep}{full["PATH"]}'
		self.proc = subprocess.Popen(
			[str(REPO / 'run_kunit.sh'), 'run', '--watch', *args],
			cwd=REPO, env=full, text=True, stdin=subprocess.PIPE,
			stdout=subprocess.PIPE, stderr=subprocess.PIPE)
		self.out: 'queue.Queue[str]' = queue.Queue()
		self.err: List[str] = []
		assert self.proc.stdout and self.proc.stderr
		for f, put in ((self.proc.stdout, self.out.put),
			       (self.proc.stderr, self.err.append)):
			threading.Thread(target=lambda f=f, put=put: [
				put(line) for line in f], daemon=True).start()

	def run(self) -> List[str]:
		"""What the next run printed, to its summary."""
		out: List[str] = []
		while True:
			try:
				line = self.out.get(timeout=60)
			except queue.Empty:
				raise AssertionError(''.join(out + self.err))
			out.append(line.rstrip('\n'))
			if re.match(r'mm-kunit: \d+ passed', line):
				return out

	def enter(self) -> None:
		assert self.proc.stdin
		self.proc.stdin.write('\n')
		self.proc.stdin.flush()

	def stop(self) -> int:
		assert self.proc.stdin
		self.proc.stdin.close()
		return self.proc.wait(timeout=30)


def test_watch_runs_after_an_edit_and_on_enter(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	"""A run, then one after an edit of the user's tree (the copy has
	it), one after an edit made in the copy (put back as the user's tree
	has it), one on Enter with nothing changed (the last kernel booted
	as it is); Ctrl-D ends it with the last run's exit code."""
	before = snapshot(kernel_tree)
	w = _Watching('--kernel', str(kernel_tree), '--cache',
		      str(tmp_path / 'c'), '--no-install',
		      env=env_for(overlay_dir, PASS_RUN))
	try:
		first = w.run()
		assert first[-1] == 'mm-kunit: 38 passed, 0 failed, 0 skipped'
		copy = next((tmp_path / 'c/trees').glob('user-*/src'))
		(kernel_tree / 'mm/foo.c').write_text(
			(kernel_tree / 'mm/foo.c').read_text() + '/* edit */\n')
		assert w.run()[-1] == first[-1]
		assert (copy / 'mm/foo.c').read_text().count('/* edit */') == 1
		(copy / 'mm/Kconfig').write_text('edited in the copy\n')
		assert w.run()[-1] == first[-1]
		assert 'config FOO_KUNIT_TEST' in (copy / 'mm/Kconfig').read_text()
		test = overlay_dir / 'mm/tests/foo_kunit.h'
		test.write_text(test.read_text() + '/* a test more */\n')
		assert w.run()[-1] == first[-1]
		assert (copy / 'mm/tests/foo_kunit.h').read_text() == \
			test.read_text()
		w.enter()
		again = w.run()
		assert again[-1] == first[-1]
	finally:
		code = w.stop()
	assert code == 0, ''.join(w.err)
	assert any('running the kernel of the last build as it is' in e
		   for e in w.err), ''.join(w.err)
	# What each run wrote into the copy: the overlay onto the new copy,
	# the user's edit, the file edited in the copy put back (each
	# patched again), the edited test; nothing on Enter.
	assert [e.split(': ', 1)[1].strip() for e in w.err
		if 'updated in' in e] == [
		'mm/Kconfig, mm/foo.c, mm/tests/.kunitconfig, '
		'mm/tests/foo_kunit.h', 'mm/foo.c', 'mm/Kconfig',
		'mm/tests/foo_kunit.h'], ''.join(w.err)
	assert snapshot(kernel_tree) == {**before, 'mm/foo.c': (
		before['mm/foo.c'] + b'/* edit */\n')}


def test_watch_needs_no_other_mode() -> None:
	from conftest import run_cli
	for flags in (['--repeat', '2'], ['--bisect'], ['--in-place']):
		p = run_cli('run', '--watch', *flags)
		assert p.returncode == 2
		assert '--watch does not go with' in p.stderr or \
			'--in-place needs --kernel' in p.stderr, p.stderr


def _in_process(tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> watch.Watch:
	"""A watch of kernel_tree whose runs boot no kernel (each leaves an
	image in the build directory, and passes)."""
	from mmkunit import deps, runner
	from mmkunit.request import Build, Source
	from mmkunit.session import Session
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)

	def run_kunit(tree: Path, build: Path, opts: runner.RunOptions,
		      results: Path, **kw: object) -> runner.RunResult:
		build.mkdir(parents=True, exist_ok=True)
		(build / 'linux').write_text('a kernel\n')
		return runner.RunResult(0, [runner.CaseResult(
			's.a', runner.Status.PASS)], results, booted=True)
	monkeypatch.setattr(runner, 'run_kunit', run_kunit)
	return watch.Watch(Session(Source(cache=tmp_path / 'c', install=False,
					  kernel=kernel_tree),
				   Build(quiet=True)), None)


def test_a_run_after_a_change_walks_neither_tree(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""The first run walks (mirror.py); a run after an edit brings it
	over from the events alone, with no find over the user's tree or the
	copy (stamp.py's look for newer files aside), even if it began
	before the watch read them."""
	w = _in_process(tmp_path, kernel_tree, overlay_dir, monkeypatch)
	try:
		w._watch_trees()
		assert w.run().ok
		finds: List[object] = []
		monkeypatch.setattr(mirror, '_find', lambda *a: finds.append(a))
		foo = kernel_tree / 'mm/foo.c'
		foo.write_text('/* edited */\n' + foo.read_text())
		# Not waited for (an Enter that came with it): still a run of
		# the change, not of the last kernel as it is.
		assert w.run().ok
	finally:
		w.watcher.close()
	assert finds == []
	assert (w.tree.src / 'mm/foo.c').read_text().startswith(
		'/* edited */\n')


def test_a_tree_another_machine_may_change_is_walked_each_run(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""On a network file system (inotify sees only this machine's
	changes) a run with no event walks, and never boots the last kernel
	as it is."""
	monkeypatch.setattr(watch, '_remote', lambda p: p == kernel_tree)
	w = _in_process(tmp_path, kernel_tree, overlay_dir, monkeypatch)
	monkeypatch.setattr(watch.runs, 'run_built',
			    lambda *a: pytest.fail('the last kernel as it is'))
	try:
		w._watch_trees()
		assert w.run().ok
		walked = mirror.walk
		finds: List[object] = []
		monkeypatch.setattr(mirror, 'walk', lambda *a: finds.append(a)
				    or walked(*a))
		assert w.run().ok
	finally:
		w.watcher.close()
	assert finds


def test_a_run_the_series_does_not_apply_to_is_not_the_last(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	"""An edit the series no longer applies to is a setup error of that
	run: said, and the watch goes on; the edit undone, the next run
	brings over all that changed since and passes."""
	kconfig = kernel_tree / 'mm/Kconfig'
	good = kconfig.read_text()
	w = _Watching('--kernel', str(kernel_tree), '--cache',
		      str(tmp_path / 'c'), '--no-install', '-q',
		      env=env_for(overlay_dir, PASS_RUN))
	try:
		w.run()
		kconfig.write_text('config FOO\n\tbool "foo"\n')
		deadline = time.monotonic() + 30
		while time.monotonic() < deadline and not any(
				'does not apply' in e for e in w.err):
			time.sleep(0.1)
		assert any(e.startswith('mm-kunit: error: 0001-mm-foo-add-tests'
					'.patch does not apply to mm/Kconfig')
			   for e in w.err), ''.join(w.err)
		kconfig.write_text(good + '# fixed\n')
		assert w.run()[-1] == 'mm-kunit: 38 passed, 0 failed, 0 skipped'
	finally:
		code = w.stop()
	assert code == 0, ''.join(w.err)
	copy = next((tmp_path / 'c/trees').glob('user-*/src'))
	assert (copy / 'mm/Kconfig').read_text().endswith('# fixed\n')


def test_a_moved_directory_is_watched_where_it_is(
		watched: Tuple[Path, watch.Watcher]) -> None:
	"""A directory renamed: an edit in it is named by its new path."""
	root, w = watched
	(root / 'mm/sub').rename(root / 'mm/moved')
	w.settled()
	(root / 'mm/moved/b.c').write_text('b, moved\n')
	assert _entries(w.settled()) == {('f', 'mm/moved/b.c')}


def test_a_root_replaced_is_lost_and_watched_anew(
		watched: Tuple[Path, watch.Watcher]) -> None:
	"""A watched tree deleted and made again (a new clone at the same
	path): what changed is not known, and a renewed watcher sees it."""
	root, w = watched
	shutil.rmtree(root)
	_tree(root)
	w.settled()
	assert w.lost
	w2 = w.renewed()
	try:
		(root / 'mm/a.c').write_text('a, new clone\n')
		assert _entries(w2.settled()) == {('f', 'mm/a.c')}
		assert not w2.lost
	finally:
		w2.close()


def test_what_a_run_writes_is_not_watched(tmp_path: Path) -> None:
	"""The cache (results, trees) inside a watched tree is left out."""
	root = _tree(tmp_path / 't')
	(root / 'cache/results').mkdir(parents=True)
	w = watch.Watcher([root / 'cache'])
	try:
		w.add(root)
		(root / 'cache/results/r.json').write_text('{}')
		(root / 'cache/x').write_text('x')
		assert w.settled() == []
	finally:
		w.close()


MOUNTINFO = '''\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 0:40 / /home/me rw shared:9 - nfs4 srv:/home rw,vers=4.2
31 30 0:41 / /home/me/scratch rw shared:10 - tmpfs tmpfs rw
32 22 0:42 / /mnt/my\\040disk rw shared:11 - fuse.sshfs me@host: rw
'''


def test_a_file_system_of_another_machine() -> None:
	"""The type of the file system a path is on is the innermost
	mount's that holds it."""
	assert [watch.fstype(Path(p), MOUNTINFO) for p in (
		'/home/me/linux', '/home/me', '/home/me/scratch/linux',
		'/home/meta', '/mnt/my disk/linux', '/')] == [
		'nfs4', 'nfs4', 'tmpfs', 'ext4', 'fuse.sshfs', 'ext4']
	assert not watch._remote(Path('/tmp'))


def test_an_edit_made_while_a_run_prepared_is_run(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""An edit whose events the run read as it prepared (after what it
	brought over) starts the next run at once, with no event or Enter
	after it; the end of standard input then ends the watch."""
	w = _in_process(tmp_path, kernel_tree, overlay_dir, monkeypatch)
	ours = w._ours
	foo = kernel_tree / 'mm/foo.c'

	def edited_meanwhile(written: List[str]) -> None:
		if not foo.read_text().startswith('/* edited */'):
			foo.write_text('/* edited */\n' + foo.read_text())
		ours(written)
	monkeypatch.setattr(w, '_ours', edited_meanwhile)
	r, wr = os.pipe()
	os.close(wr)
	with os.fdopen(r) as stdin:
		monkeypatch.setattr(watch.sys, 'stdin', stdin)
		try:
			assert w.loop().ok
		finally:
			w.watcher.close()
	assert (w.tree.src / 'mm/foo.c').read_text().startswith(
		'/* edited */\n')
