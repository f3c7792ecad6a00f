# SPDX-License-Identifier: GPL-2.0
"""The harness's copy of a user's tree, kept up to date (mirror.py): each
refresh must leave the copy as rsync -a --delete would, looking only at
what changed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest

from conftest import make_kernel_tree, make_overlay
from mmkunit import mirror
from mmkunit import overlay as ov
from mmkunit import trees

KEEP = {'mm/tests/ours_kunit.h'}


def files(top: Path, skip: Sequence[str] = ()) -> Dict[str, object]:
	"""Every entry under top with what it holds (a link's target)."""
	found: Dict[str, object] = {}
	for p in sorted(top.rglob('*')):
		name = str(p.relative_to(top))
		if any(name == s or name.startswith(f'{s}/') for s in skip):
			continue
		found[name] = os.readlink(p) if p.is_symlink() else \
			'dir' if p.is_dir() else p.read_bytes()
	return found


def write(top: Path, name: str, text: str) -> None:
	(top / name).parent.mkdir(parents=True, exist_ok=True)
	(top / name).write_text(text)


class Mirror:
	"""A user's tree and its copy, the copy made as prepare() makes it
	(the overlay's file in it), and what it was refreshed from."""

	def __init__(self, tmp_path: Path, names: Sequence[str],
		     monkeypatch: pytest.MonkeyPatch) -> None:
		# Files here are written milliseconds apart, on a file
		# system with ctimes to the nanosecond.
		monkeypatch.setattr(mirror, 'MARGIN', 0.01)
		self.user, self.copy = tmp_path / 'user', tmp_path / 'copy'
		for name in [*names, 'mm/tests/theirs_kunit.c', 'Makefile']:
			write(self.user, name, f'/* {name} */\n')
		# The kernel's coarse clock stamps ctimes a tick (10 ms at
		# most) apart: the tree is older than its Makefile written
		# again now, the newest file the copy's look sees, and than
		# what the tests change after the copy. (The first refresh
		# looks at the Makefile again: the look starts a margin
		# before the newest file.)
		time.sleep(0.05)
		write(self.user, 'Makefile', '/* Makefile */\n')
		self.state = mirror.copy_of(self.user, self.copy, True)
		write(self.copy, 'mm/tests/ours_kunit.h', '/* the overlay */\n')
		time.sleep(0.05)
		self.listed: List[List[str]] = []
		self.subtrees: List[str] = []

	def refresh(self, monkeypatch: pytest.MonkeyPatch) -> List[str]:
		listed = mirror._rsync_listed

		def spy(src: Path, dest: Path, names: Sequence[str]
			) -> Tuple[List[str], bool]:
			self.listed.append(sorted(names))
			return listed(src, dest, names)
		real = mirror.rsync

		def subtree(src: Path, dest: Path, exclude: Sequence[str],
			    under: str = '') -> List[str]:
			assert under, 'rsync compared every file'
			self.subtrees.append(under)
			return real(src, dest, exclude, under)
		with monkeypatch.context() as m:
			m.setattr(mirror, '_rsync_listed', spy)
			m.setattr(mirror, 'rsync', subtree)
			written, self.state = mirror.refresh(
				self.user, self.copy, KEEP, self.state)
		return written

	def same(self) -> bool:
		"""The copy is the user's tree, and the state knows each of its
		directories."""
		dirs = {'': mirror._ident(self.user.lstat())}
		dirs.update({str(p.relative_to(self.user)): mirror._ident(p.lstat())
			     for p in self.user.rglob('*')
			     if p.is_dir() and not p.is_symlink()})
		return files(self.copy, skip=['mm/tests/ours_kunit.h']) == \
			files(self.user) and self.state['dirs'] == dirs


def no_rsync(*args: object, **kwargs: object) -> List[str]:
	raise AssertionError('rsync compared every file')


def test_a_refresh_copies_what_changed_and_looks_at_nothing_else(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	t = Mirror(tmp_path, ['mm/a.c', 'mm/same.c', 'mm/old/o.c', 'lib/l.c',
			      '.git/HEAD'], monkeypatch)
	write(t.user, 'mm/a.c', '/* edited */\n')
	write(t.user, 'mm/same.c', '/* mm/same.d */\n')	# same size
	os.utime(t.user / 'mm/same.c', (1577836800, 1577836800))
	shutil.rmtree(t.user / 'mm/old')
	write(t.user, 'mm/new/n.c', 'int n;\n')
	write(t.user, 'mm/tests/new_kunit.c', 'int k;\n')
	(t.user / 'mm/link').symlink_to('new/n.c')
	write(t.user, '.git/HEAD', 'ref\n')
	assert t.refresh(monkeypatch) == [
		'mm/a.c', 'mm/link', 'mm/new/n.c', 'mm/old/o.c', 'mm/same.c',
		'mm/tests/new_kunit.c']
	assert files(t.copy, skip=['mm/tests/ours_kunit.h']) == \
		files(t.user, skip=['.git'])
	assert (t.copy / 'mm/tests/ours_kunit.h').read_text() == \
		'/* the overlay */\n'
	# Nor lib/ and what else did not change, nor the overlay's file.
	assert t.listed == [['Makefile', 'mm', 'mm/a.c', 'mm/link', 'mm/same.c',
			     'mm/tests', 'mm/tests/new_kunit.c']]
	assert t.subtrees == ['mm/new']
	assert 'mm/old' not in t.state['dirs']
	assert t.state['dirs']['mm/new'] == \
		mirror._ident((t.user / 'mm/new').lstat())
	assert t.refresh(monkeypatch) == []


def test_the_overlays_files_stay_when_their_directory_is_another(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	write(tmp_path, 'elsewhere/tests/ours_kunit.h', '/* theirs */\n')
	t = Mirror(tmp_path, [], monkeypatch)
	shutil.rmtree(t.user / 'mm/tests')
	(tmp_path / 'elsewhere/tests').rename(t.user / 'mm/tests')
	assert t.refresh(monkeypatch) == ['mm/tests/theirs_kunit.c']
	assert (t.copy / 'mm/tests/ours_kunit.h').read_text() == \
		'/* the overlay */\n'


@pytest.mark.parametrize('change', ['replaced', 'swapped', 'moved in',
				    'moved in under a new name'])
def test_a_directory_that_is_another_now_is_copied_whole(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
		change: str) -> None:
	"""A directory moved keeps its files' ctimes: only it and the
	directory that holds it show the change."""
	# Made before the copy, moved into the tree after it.
	write(tmp_path, 'elsewhere/d/x.c', 'int elsewhere;\n')
	t = Mirror(tmp_path, ['mm/a/x.c', 'mm/a/sub/s.c', 'mm/a/only_a.c',
			      'mm/a/sub/only_a.c', 'mm/b/x.c', 'mm/b/sub/s.c',
			      'mm/b/only_b.c'], monkeypatch)
	if change == 'replaced':
		shutil.rmtree(t.user / 'mm/a')
		(t.user / 'mm/b').rename(t.user / 'mm/a')
	elif change == 'swapped':
		(t.user / 'mm/a').rename(t.user / 'mm/c')
		(t.user / 'mm/b').rename(t.user / 'mm/a')
		(t.user / 'mm/c').rename(t.user / 'mm/b')
	elif change == 'moved in':
		shutil.rmtree(t.user / 'mm/a')
		(tmp_path / 'elsewhere/d').rename(t.user / 'mm/a')
	else:
		(tmp_path / 'elsewhere/d').rename(t.user / 'mm/d')
	t.refresh(monkeypatch)
	assert t.same()


def test_a_changed_directory_is_compared_entry_by_entry(tmp_path: Path
							) -> None:
	"""Where an entry moved in keeps its ctime, only the directory that
	holds it shows the change: what its entries differ in is copied."""
	user, copy = tmp_path / 'user', tmp_path / 'copy'
	for name in ['mm/a.c', 'mm/b.c', 'mm/sub/s.c']:
		write(user, name, f'/* {name} */\n')
	state = mirror.copy_of(user, copy, True)
	# The same size, and a nanosecond later.
	mtime = (copy / 'mm/a.c').stat().st_mtime_ns
	write(user, 'mm/a.c', '/* mm/A.c */\n')
	os.utime(user / 'mm/a.c', ns=(mtime, mtime + 1))
	assert mirror._bring_over(user, copy, [('d', 'mm')], [], set(),
				  state['dirs']) == ['mm/a.c']
	assert files(copy) == files(user)


def test_a_tree_that_is_another_now_is_compared_whole(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	write(tmp_path, 'other/mm/a.c', 'int other;\n')
	t = Mirror(tmp_path, ['mm/a.c'], monkeypatch)
	t.user.rename(tmp_path / 'old')
	(tmp_path / 'other').rename(t.user)
	compared: List[Path] = []
	rsync = mirror.rsync

	def spy(src: Path, dest: Path, exclude: Sequence[str],
		under: str = '') -> List[str]:
		compared.append(src / under)
		return rsync(src, dest, exclude, under)
	monkeypatch.setattr(mirror, 'rsync', spy)
	written, _ = mirror.refresh(t.user, t.copy, KEEP, t.state)
	assert compared == [t.user]
	assert written == ['Makefile', 'mm/a.c']
	# (rsync keeps what the directory of the overlay's files holds.)
	assert files(t.copy, skip=['mm/tests']) == files(t.user)


@pytest.mark.parametrize('instead', ['link', 'file'])
def test_a_directory_that_is_not_one_now_is_not_looked_into(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
		instead: str) -> None:
	"""What the copy's walk names under it (mm/x/f.c, written by the
	refresh before) is not in the user's tree: a link to a directory
	would lead elsewhere."""
	t = Mirror(tmp_path, ['mm/x/f.c', 'mm/x/g.c', 'mm/y/f.c'], monkeypatch)
	write(t.user, 'mm/x/f.c', '/* edited */\n')
	assert t.refresh(monkeypatch) == ['mm/x/f.c']
	shutil.rmtree(t.user / 'mm/x')
	if instead == 'link':
		(t.user / 'mm/x').symlink_to('y')
	else:
		write(t.user, 'mm/x', 'not a directory\n')
	assert t.refresh(monkeypatch) == ['mm/x', 'mm/x/f.c', 'mm/x/g.c']
	assert t.same()


def test_directories_moved_in_the_copy_are_put_back(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	t = Mirror(tmp_path, ['mm/a/sub/s.c', 'mm/b/sub/s.c'], monkeypatch)
	(t.copy / 'mm/a').rename(t.copy / 'mm/c')
	(t.copy / 'mm/b').rename(t.copy / 'mm/a')
	(t.copy / 'mm/c').rename(t.copy / 'mm/b')
	t.refresh(monkeypatch)
	assert t.same()


def test_the_overlays_directory_stays_whole_as_rsync_keeps_it(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""rsync's protect rule keeps the directory of the overlay's files,
	and all it holds, when the user's tree has it no more."""
	t = Mirror(tmp_path, ['mm/a.c'], monkeypatch)
	shutil.rmtree(t.user / 'mm/tests')
	assert t.refresh(monkeypatch) == []
	assert sorted(os.listdir(t.copy / 'mm/tests')) == [
		'ours_kunit.h', 'theirs_kunit.c']


def test_a_directory_rsync_failed_to_copy_whole_makes_it_look_at_all(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	write(tmp_path, 'elsewhere/d/x.c', 'int elsewhere;\n')
	t = Mirror(tmp_path, ['mm/a.c'], monkeypatch)
	(tmp_path / 'elsewhere/d').rename(t.user / 'mm/d')
	rsync = mirror.rsync
	compared: List[str] = []

	def failing(src: Path, dest: Path, exclude: Sequence[str],
		    under: str = '') -> List[str]:
		compared.append(under)
		if under:
			raise subprocess.CalledProcessError(24, 'rsync')
		return rsync(src, dest, exclude, under)
	monkeypatch.setattr(mirror, 'rsync', failing)
	written, t.state = mirror.refresh(t.user, t.copy, KEEP, t.state)
	assert compared == ['mm/d', 'mm/tests', ''] and written == ['mm/d/x.c']
	assert t.same()


@pytest.mark.parametrize('under, patterns', [
	('', mirror.RSYNC_EXCLUDES),
	('include', ['/config/', '/generated/']),
	('arch/x86', ['/include/generated/']),
	('arch/x86/include', ['/generated/']),
	('arch/x86/include/asm', []),
	('mm', []),
	('include/config', []),	# itself left out: nothing under it to say
])
def test_what_rsync_leaves_out_of_a_directory(under: str,
					      patterns: List[str]) -> None:
	assert mirror._anchored(under) == patterns


def test_a_path_through_a_file_is_not_there(tmp_path: Path) -> None:
	write(tmp_path, 'mm/x', 'a file\n')
	assert mirror._lstat(tmp_path / 'mm/x/f.c') is None
	assert mirror._lstat(tmp_path / 'mm/y') is None


def test_edits_of_the_copy_are_put_back(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	t = Mirror(tmp_path, ['mm/a.c', 'mm/b.c', 'lib/l.c'], monkeypatch)
	write(t.copy, 'mm/a.c', '/* a debugging hack */\n')
	write(t.copy, 'lib/stray.c', 'int stray;\n')
	(t.copy / 'mm/b.c').unlink()
	assert t.refresh(monkeypatch) == ['lib/stray.c', 'mm/a.c', 'mm/b.c']
	assert t.same()


def test_an_entry_gone_before_rsync_copied_it_makes_rsync_look_at_all(
		tmp_path: Path) -> None:
	"""The look is out of date then: what else changed since may not be
	in it (here mm/b.c)."""
	user, copy = tmp_path / 'user', tmp_path / 'copy'
	write(user, 'mm/a.c', 'int a;\n')
	write(user, 'mm/b.c', 'int b;\n')
	(copy / 'mm').mkdir(parents=True)
	real = mirror._lstat

	def vanishing(path: Path) -> Optional[os.stat_result]:
		st = real(path)
		if path == user / 'mm/a.c':
			os.unlink(path)
		return st
	with pytest.MonkeyPatch.context() as m:
		m.setattr(mirror, '_lstat', vanishing)
		assert mirror._bring_over(user, copy, [('f', 'mm/a.c')], [],
					  set(), {}) == ['mm/b.c']
	assert files(copy) == files(user)


def test_the_walk_leaves_out_what_rsync_leaves_out(tmp_path: Path) -> None:
	for name in ['.git/HEAD', '.kunit/.config', 'include/config/auto.conf',
		     'include/generated/a.h', 'arch/x86/include/generated/b.h',
		     'arch/x86/include/asm/c.h', '.config', '.kunitconfig',
		     'mm/.config', 'mm/foo.c', 'mm/.git/HEAD',
		     # Files: rsync leaves out only directories of these names.
		     'mm/include/config', 'arch/arm64/include/generated']:
		write(tmp_path, name, '\n')
	whole = mirror.walk(tmp_path, None)
	assert whole is not None and whole.entries == []
	assert sorted(whole.dirs) == ['', 'arch', 'arch/arm64',
				      'arch/arm64/include', 'arch/x86',
				      'arch/x86/include', 'arch/x86/include/asm',
				      'include', 'mm', 'mm/.git', 'mm/include']
	assert whole.dirs['mm'] == mirror._ident((tmp_path / 'mm').lstat())
	seen = mirror.walk(tmp_path, 0.0)
	assert seen is not None and seen.newest == whole.newest
	assert sorted(seen.entries) == [
		('d', ''), ('d', 'arch'), ('d', 'arch/arm64'),
		('d', 'arch/arm64/include'), ('d', 'arch/x86'),
		('d', 'arch/x86/include'), ('d', 'arch/x86/include/asm'),
		('d', 'include'), ('d', 'mm'), ('d', 'mm/.git'),
		('d', 'mm/include'), ('f', 'arch/arm64/include/generated'),
		('f', 'arch/x86/include/asm/c.h'), ('f', 'mm/.config'),
		('f', 'mm/.git/HEAD'), ('f', 'mm/foo.c'),
		('f', 'mm/include/config')]
	assert seen.newest is not None
	later = mirror.walk(tmp_path, seen.newest + 0.001)
	assert later is not None and (later.entries, later.newest) == ([], None)
	assert mirror.walk(tmp_path / 'nowhere', None) is None


@pytest.mark.parametrize('name, held', [
	('mm/.config', False), ('.config', True), ('.kunit/x', True),
	('arch/um/include/generated/asm/x.h', True),
	('arch/um/include/asm/x.h', False), ('include/config/x', True),
])
def test_a_copy_that_holds_what_rsync_leaves_out(tmp_path: Path, name: str,
						held: bool) -> None:
	write(tmp_path, 'mm/a.c', 'int a;\n')
	assert mirror.holds_no_excluded(tmp_path)
	write(tmp_path, name, '\n')
	assert mirror.holds_no_excluded(tmp_path) is not held


@pytest.mark.parametrize('name, is_dir, left_out', [
	('.git', True, True), ('.config', False, True), ('.configs', False, False),
	('mm/.config', False, False), ('include/config', True, True),
	('include/config', False, False), ('include/config/x', False, True),
	('arch/arm64/include/generated/asm', True, True),
	('arch/arm64/include/asm', True, False), ('', True, False),
])
def test_what_rsync_leaves_out(name: str, is_dir: bool, left_out: bool) -> None:
	assert mirror.excluded(name, is_dir) == left_out


@pytest.mark.parametrize('newest, since, later', [
	(100.0, None, 97.0),	# the walk's 1 s and the margin's 2 before it
	(100.0, 50.0, 97.0),
	(100.0, 99.0, 99.0),	# never back
	(None, 50.0, 50.0),	# nothing changed: where it was
	(None, None, 0.0),
	(1e12, 50.0, 1997.0),	# ahead of this machine's clock (2000): now
])
def test_the_next_look_starts_before_the_walk_began(
		newest: Optional[float], since: Optional[float], later: float,
		monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.setattr(time, 'time', lambda: 2000.0)
	assert mirror.Walk([], newest, 1.0).next_since(since) == later


@pytest.mark.parametrize('then, now, back', [
	(('b', 100.0, 10.0), ('b', 200.0, 110.0), False),
	(('b', 100.0, 10.0), ('b', 199.5, 110.0), False),	# slewed
	(('b', 100.0, 10.0), ('b', 150.0, 110.0), True),	# set back 50 s
	(('b', 100.0, 10.0), ('c', 200.0, 5.0), True),	# rebooted
	(('', 100.0, 10.0), ('', 200.0, 110.0), True),	# boot not known
])
def test_a_clock_set_back_is_seen(then: Tuple[str, float, float],
				  now: Tuple[str, float, float],
				  back: bool) -> None:
	assert mirror.Clock(*then).went_back_by(mirror.Clock(*now)) == back


def test_after_a_clock_set_back_every_file_is_compared_and_looked_at_anew(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""The look's start taken with the clock ahead is not kept."""
	t = Mirror(tmp_path, ['mm/a.c'], monkeypatch)
	ahead: Dict[str, Any] = json.loads(json.dumps(t.state))
	ahead['since'] += 3600
	ahead['clock']['boot'] = 'another boot'
	t.state = ahead
	rsync = mirror.rsync
	compared: List[Path] = []

	def spy(src: Path, dest: Path, exclude: Sequence[str],
		under: str = '') -> List[str]:
		compared.append(src / under)
		return rsync(src, dest, exclude, under)
	with monkeypatch.context() as m:
		m.setattr(mirror, 'rsync', spy)
		written, t.state = mirror.refresh(t.user, t.copy, KEEP, t.state)
	assert compared == [t.user] and written == []
	assert t.state['since'] < ahead['since'] - 3000
	time.sleep(0.05)
	write(t.user, 'mm/a.c', '/* edited */\n')
	assert t.refresh(monkeypatch) == ['mm/a.c']
	assert t.same()


def test_prepare_refreshes_a_users_tree_from_what_changed(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""From the copy on: the overlay's files are the overlay's."""
	monkeypatch.setattr(mirror, 'MARGIN', 0.01)
	kernel = make_kernel_tree(tmp_path / 'linux')
	o = ov.Overlay.load(make_overlay(tmp_path / 'overlay'))
	tree = trees.user_tree(tmp_path / 'cache', kernel)
	tree.prepare(o, refresh_source=True)
	state = json.loads((tree.base / 'state.json').read_text())
	assert mirror.State.load(state['scanned']) is not None
	time.sleep(0.05)
	write(kernel, 'mm/new.c', 'int n;\n')
	with open(kernel / 'mm/foo.c', 'a') as f:
		f.write('/* edited */\n')
	monkeypatch.setattr(mirror, 'rsync', no_rsync)
	assert tree.prepare(o, refresh_source=True) == ['mm/new.c', 'mm/foo.c']
	assert (tree.src / 'mm/new.c').read_text() == 'int n;\n'
	assert '/* edited */' in (tree.src / 'mm/foo.c').read_text()
	assert (tree.src / 'mm/tests/foo_kunit.h').is_file()


def test_rsync_changes_are_files_written_or_deleted() -> None:
	assert mirror.rsync_changes(
		'.d..t...... ./\ncd+++++++++ mm/d/\n>f+++++++++ mm/d/a b.c\n'
		'>f.st...... mm/x.c\ncL+++++++++ l\n*deleting   mm/y.h\n'
		'>f+++++++++  lead.c\n*deleting   d/e/z.c\n*deleting   d/e/\n'
		'*deleting   d/\n') == [
		'mm/d/a b.c', 'mm/x.c', 'l', 'mm/y.h', ' lead.c', 'd/e/z.c']


def test_a_workers_copy_is_refreshed_from_where_its_original_was(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""Not every file of it looked at again as an edit of the copy."""
	monkeypatch.setattr(mirror, 'MARGIN', 0.01)
	kernel = make_kernel_tree(tmp_path / 'linux')
	o = ov.Overlay.load(make_overlay(tmp_path / 'overlay'))
	# The newest file of the tree, looked at again (as Mirror's).
	time.sleep(0.05)
	(kernel / 'Makefile').write_bytes((kernel / 'Makefile').read_bytes())
	tree = trees.user_tree(tmp_path / 'cache', kernel)
	tree.prepare(o, refresh_source=True)
	worker = tree.worker(1)
	worker.clone_from(tree, 'um')
	time.sleep(0.05)
	write(kernel, 'mm/new.c', 'int n;\n')
	listed: List[str] = []
	real = mirror._rsync_listed

	def spy(src: Path, dest: Path, names: Sequence[str]
		) -> Tuple[List[str], bool]:
		listed.extend(names)
		return real(src, dest, names)
	monkeypatch.setattr(mirror, '_rsync_listed', spy)
	monkeypatch.setattr(mirror, 'rsync', no_rsync)
	assert worker.prepare(o, refresh_source=True) == ['mm/new.c']
	assert sorted(listed) == ['Makefile', 'mm', 'mm/new.c']


def test_a_refresh_without_rsync_says_so(tmp_path: Path,
					  monkeypatch: pytest.MonkeyPatch) -> None:
	kernel = make_kernel_tree(tmp_path / 'linux')
	o = ov.Overlay.load(make_overlay(tmp_path / 'overlay'))
	tree = trees.user_tree(tmp_path / 'cache', kernel)
	tree.prepare(o, refresh_source=True)
	monkeypatch.setattr(shutil, 'which', lambda name: None)
	with pytest.raises(trees.TreeError, match='rsync is missing'):
		tree.prepare(o, refresh_source=True)


def test_a_refresh_told_what_changed_looks_for_nothing(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""Given what changed (run --watch's events), a refresh walks
	neither tree and brings over only that: what it is not told of
	stays as it was. The next walk looks at all since the last one."""
	t = Mirror(tmp_path, ['mm/a.c', 'mm/b.c', 'lib/l.c'], monkeypatch)
	write(t.user, 'mm/a.c', '/* edited */\n')
	write(t.user, 'mm/b.c', '/* edited, not told */\n')
	write(t.copy, 'lib/l.c', '/* edited in the copy */\n')
	monkeypatch.setattr(mirror, '_find', lambda *a: pytest.fail('walked'))
	before = mirror.State.load(t.state)
	written, state = mirror.refresh(
		t.user, t.copy, KEEP, t.state,
		mirror.Seen([('f', 'mm/a.c')], [('f', 'lib/l.c')]))
	assert written == ['lib/l.c', 'mm/a.c']
	assert (t.copy / 'mm/b.c').read_text() == '/* mm/b.c */\n'
	assert (t.copy / 'lib/l.c').read_text() == '/* lib/l.c */\n'
	assert mirror.State.load(state) == before
