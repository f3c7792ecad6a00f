# SPDX-License-Identifier: GPL-2.0
"""run --watch: the suites run again when a file their kernel is made from
changes, and when Enter is pressed.

inotify(7) watches every directory of the user's tree (--kernel), of the
harness's copy of the kernel, of the overlay and of kunit-configs/. After
a change (once no event came for SETTLE seconds), the run refreshes the
copy from what the events name (mirror.Seen): neither tree is walked.
What the run itself writes into the copy is told from an edit made there
by the files its preparation wrote. Enter with nothing changed since a
run that booted runs the kernel that run built as it is
(runs.run_built()), unless the kernel or the tree's state changed
meanwhile (another run of the harness in the same tree). Events lost (the
queue overflowed) or a root replaced make the next run walk, as a run
without --watch does, with every directory watched anew; so does every
run of a tree on a file system another machine may change (_REMOTE),
whose changes inotify does not see.

Editors' swap and backup files (EDITOR_FILES) start no run; what is in
them is copied with the next run's changes, as a run without --watch
would copy it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import fnmatch
import os
import re
import select
import stat
import struct
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

from mmkunit import arches
from mmkunit import handlers
from mmkunit import mirror
from mmkunit import progress
from mmkunit import runner
from mmkunit import runs
from mmkunit.session import KERNEL_DIR, KUNIT_CONFIGS, HarnessError, Session

# <sys/inotify.h>
IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x1000000
IN_DONT_FOLLOW = 0x2000000
IN_EXCL_UNLINK = 0x4000000
IN_ISDIR = 0x40000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM |
	IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF |
	IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
# An entry of a directory added, removed or renamed.
_LISTING = IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
_SELF = IN_DELETE_SELF | IN_MOVE_SELF
_EVENT = struct.Struct('iIII')

# A change is whole once no event came for this long (an editor's save
# is a few writes, renames and a chmod).
SETTLE = 0.05

# What editors write beside a file (vim's swap files and its test of
# the directory, Emacs's lock and auto-save files, backups).
EDITOR_FILES = ('.*.sw?', '*~', '.#*', '#*#', '4913')


@dataclasses.dataclass(frozen=True)
class Event:
	"""A change in a watched tree (root): the entry named (rel, relative
	to root; '' the top), in the directory dir, as inotify's mask."""
	root: Path
	rel: str
	dir: str
	mask: int

	@property
	def listing(self) -> bool:
		"""Whether the entries of dir changed (not only rel's data)."""
		return bool(self.mask & (_LISTING | _SELF))

	@property
	def editors(self) -> bool:
		"""Whether an editor's file of its own changed (EDITOR_FILES)."""
		name = self.rel.rpartition('/')[2]
		return any(fnmatch.fnmatch(name, p) for p in EDITOR_FILES)

	def entries(self) -> List[Tuple[str, str]]:
		"""What mirror.refresh() is to look at for it, as walk() names
		entries: the directory whose entries changed, the entry whose
		data did (a directory moved or deleted: the one that held it)."""
		if self.listing or self.rel == self.dir:
			return [('d', self.dir)]
		st = mirror._lstat(self.root / self.rel)
		if st is None:
			return [('d', self.dir)]
		kind = 'd' if stat.S_ISDIR(st.st_mode) else 'l' if \
			stat.S_ISLNK(st.st_mode) else 'f'
		return [(kind, self.rel)]


_libc = ctypes.CDLL(None, use_errno=True)


class Watcher:
	"""inotify watches on every directory of some trees (but what rsync
	leaves out of a kernel tree, mirror.excluded(), and the paths of
	skip)."""

	def __init__(self, skip: Sequence[Path] = ()) -> None:
		self.fd: int = _libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
		if self.fd < 0:
			raise HarnessError('--watch: inotify_init1: '
					   f'{os.strerror(ctypes.get_errno())}')
		self._dirs: Dict[int, Tuple[Path, str]] = {}
		self.roots: List[Path] = []
		self.skip = {str(p) for p in skip}
		# Events were lost, or a root is watched no longer: what
		# changed is not known.
		self.lost = False

	def close(self) -> None:
		if self.fd >= 0:
			os.close(self.fd)
			self.fd = -1

	def add(self, root: Path) -> None:
		"""Watches root and every directory under it."""
		self.roots.append(root)
		self._add(root, '')

	def _add(self, root: Path, top: str) -> List[str]:
		"""Watches top (relative to root) and every directory under it,
		each before its entries are listed (one made after the listing
		has an event); the directories watched."""
		added = []
		todo = [top]
		while todo:
			rel = todo.pop()
			path = root / rel if rel else root
			wd = _libc.inotify_add_watch(self.fd, os.fsencode(path),
						     MASK)
			if wd < 0:
				if ctypes.get_errno() == errno.ENOSPC:
					raise HarnessError(
						f'--watch: no inotify watch left for '
						f'{path} (sysctl '
						'fs.inotify.max_user_watches)')
				# Gone since, or not a directory now: its
				# parent's event says so.
				continue
			self._dirs[wd] = (root, rel)
			added.append(rel)
			try:
				with os.scandir(path) as entries:
					subs = [e.name for e in entries
						if e.is_dir(follow_symlinks=False)]
			except OSError:
				continue
			for name in subs:
				sub = f'{rel}/{name}' if rel else name
				if not mirror.excluded(sub, True) and \
				   str(root / sub) not in self.skip:
					todo.append(sub)
		return added

	def read(self) -> List[Event]:
		"""The events queued now (none: nothing changed)."""
		events: List[Event] = []
		while True:
			try:
				buf = os.read(self.fd, 1 << 16)
			except BlockingIOError:
				return events
			off = 0
			while off < len(buf):
				wd, mask, _, size = _EVENT.unpack_from(buf, off)
				raw = buf[off + _EVENT.size:off + _EVENT.size + size]
				off += _EVENT.size + size
				self._event(wd, mask, os.fsdecode(raw.rstrip(b'\0')),
					    events)

	def _event(self, wd: int, mask: int, name: str,
		   events: List[Event]) -> None:
		if mask & IN_Q_OVERFLOW:
			self.lost = True
			return
		if mask & IN_IGNORED:
			if self._dirs.pop(wd, (None, None))[1] == '':
				# A root deleted or replaced.
				self.lost = True
			return
		if wd not in self._dirs:
			return
		root, d = self._dirs[wd]
		if mask & _SELF:
			events.append(Event(root, d, d.rpartition('/')[0], mask))
			return
		# No name: the event is of the directory itself.
		rel = f'{d}/{name}' if d and name else name or d
		if mask & ~IN_ISDIR == IN_ATTRIB and (mask & IN_ISDIR or
						      not name):
			# A directory's times or mode: no build reads them.
			return
		if mirror.excluded(rel, bool(mask & IN_ISDIR)) or \
		   str(root / rel) in self.skip:
			return
		events.append(Event(root, rel, d, mask))
		if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
			# What was made in it before its watch: each directory
			# under it is compared with its copy.
			events += [Event(root, sub, sub, IN_CREATE | IN_ISDIR)
				   for sub in self._add(root, rel)]

	def settled(self) -> List[Event]:
		"""The events of a change: those queued now and those that come
		until none has for SETTLE seconds."""
		events = self.read()
		while select.select([self.fd], [], [], SETTLE)[0]:
			events += self.read()
		return events

	def renewed(self) -> 'Watcher':
		"""A watcher of the same roots, made anew (after lost events:
		what moved or was replaced is watched where it is now)."""
		other = Watcher([Path(p) for p in self.skip])
		for root in self.roots:
			if root.is_dir():
				other.add(root)
		self.close()
		return other


def _stat(path: Path) -> Optional[Tuple[int, int]]:
	try:
		st = path.stat()
	except OSError:
		return None
	return st.st_size, st.st_mtime_ns


# The names rsync (.NAME.XXXXXX) and overlay.py (.mm-kunit-XXXXXXXX) write
# a file as before they rename it to its own.
_TEMPORARY = re.compile(r'\.mm-kunit-\w+|\..+\.\w{6}')

# File systems another machine may change: inotify sees only this one's
# changes (mount(8)'s types; fuse.* are sshfs, virtiofs and the like).
_REMOTE = ('nfs', 'nfs4', 'cifs', 'smb3', 'smbfs', '9p', 'afs', 'ceph',
	   'glusterfs', 'lustre', 'virtiofs', 'fuse')


def _remote(path: Path) -> bool:
	"""Whether path is on a file system of _REMOTE."""
	try:
		mounts = Path('/proc/self/mountinfo').read_text()
	except OSError:
		return True
	return fstype(path, mounts).split('.')[0] in _REMOTE


def fstype(path: Path, mountinfo: str) -> str:
	"""The type of the file system path is on, by the mount that holds
	it in mountinfo (proc(5)'s /proc/PID/mountinfo)."""
	best, found = '', ''
	for line in mountinfo.splitlines():
		fields = line.split(' - ', 1)
		mine, theirs = fields[0].split(), fields[-1].split()
		if len(fields) < 2 or len(mine) < 5 or not theirs:
			continue
		point = mine[4].replace('\\040', ' ')
		inside = str(path) == point or str(path).startswith(
			point.rstrip('/') + '/')
		if inside and len(point) >= len(best):
			best, found = point, theirs[0]
	return found


def _ancestors(names: Sequence[str]) -> Set[str]:
	"""The directories that hold names (relative), up to the top ('')."""
	out = {''}
	for name in names:
		parts = name.split('/')[:-1]
		out.update('/'.join(parts[:i]) for i in range(1, len(parts) + 1))
	return out


class Watch:
	"""The runs of one `run --watch`."""

	def __init__(self, s: Session, filter_glob: Optional[str]) -> None:
		self.s = s
		self.filter_glob = filter_glob
		self.tree = s.sources.prepared_tree()
		self.user = s.source.kernel.resolve() if s.source.kernel else None
		# What the runs write: not watched, should it be in a tree.
		self.watcher = Watcher([p.resolve() for p in (
			s.cache, s.build.results) if p])
		# inotify sees no change another machine makes to a network
		# file system: there, every run walks, as run does.
		self.remote = [r for r in (self.user, s.overlay.root.resolve())
			       if r and _remote(r)]
		# Changes not yet run.
		self.pending: List[Event] = []
		# The kernel and the tree's state as the last run that booted
		# left them (_marker()); None: run_built() will not do.
		self.built: Optional[Tuple[Optional[Tuple[int, int]], ...]] = None
		# Whether the copy was last refreshed with the trees watched:
		# from then on the events say what changed.
		self.refreshed = False

	def _marker(self) -> Tuple[Optional[Tuple[int, int]], ...]:
		"""The kernel image, the build's .config and .version, and the
		tree's state (trees.py), as (size, mtime), None where missing."""
		build = self.tree.build_dir(self.s.build_key)
		image = arches.ARCHES[self.s.build.arch].image
		return tuple(_stat(p) for p in (
			build / image, build / '.config', build / '.version',
			self.tree.base / 'state.json'))

	def _watch_trees(self) -> None:
		roots = [self.user] if self.user else []
		overlay = self.s.overlay.root.resolve()
		roots += [KERNEL_DIR, KUNIT_CONFIGS]
		if not overlay.is_relative_to(KERNEL_DIR):
			roots.append(overlay)
		if self.tree.src.is_dir():
			roots.append(self.tree.src)
		for root in roots:
			if root not in self.watcher.roots:
				self.watcher.add(root)

	def _ours(self, written: List[str]) -> None:
		"""Drops the events of what the preparation wrote into the
		copy: of the files written, of the directories made to hold
		them and of the files they were first written as (rsync's and
		overlay.py's temporary names) beside them; an edit made in the
		copy is kept for the next run."""
		events = self.watcher.read()
		if any(n.startswith(runner.KUNIT_PY.rpartition('/')[0])
		       for n in written):
			runner.drop_parser()
		names = set(written)
		dirs = _ancestors(written)

		def ours(e: Event) -> bool:
			if e.rel in names or (e.rel in dirs and not e.mask & _SELF):
				return True
			return e.dir in dirs and bool(_TEMPORARY.fullmatch(
				e.rel.rpartition('/')[2]))
		self.pending += [e for e in events
				 if e.root != self.tree.src or not ours(e)]

	def _seen(self, events: Sequence[Event]) -> Optional[mirror.Seen]:
		if self.watcher.lost or self.user is None or \
		   not self.refreshed or self.remote:
			return None
		theirs: List[Tuple[str, str]] = []
		edited: List[Tuple[str, str]] = []
		for e in events:
			if e.root == self.user:
				theirs += e.entries()
			elif e.root == self.tree.src:
				edited += e.entries()
		return mirror.Seen(theirs, edited)

	def run(self) -> runner.RunResult:
		"""One run: the last kernel again if nothing changed since it
		booted, else prepare, build and run with what changed."""
		events, self.pending = self.pending + self.watcher.read(), []
		result: Optional[runner.RunResult] = None
		if self.built and all(e.editors for e in events) and \
		   not self.watcher.lost and not self.remote:
			# No file a build reads changed.
			self.pending = events
			progress.progress('nothing changed since the last run: '
					  'running the kernel of the last build '
					  'as it is')
			result = runs.run_built(self.s, self.filter_glob,
						lambda: self._marker() == self.built)
		if result is None:
			seen = self._seen(events)
			if self.watcher.lost:
				# What moved or was replaced, watched anew
				# before the walk.
				self.watcher = self.watcher.renewed()
			self.s = self.s.reread()
			self.built = None
			self.refreshed = False
			try:
				result = runs.run_suites(
					self.s, filter_glob=self.filter_glob,
					seen=seen, on_prepared=self._ours)
			except (*handlers.SETUP_ERRORS,
				subprocess.CalledProcessError) as e:
				# Not a run of the tree as it is now (the series
				# does not apply, rsync failed): the next one
				# looks at all that changed, as run does.
				print(f'mm-kunit: error: {e}', file=sys.stderr)
				return runner.RunResult(2, [], Path(), error=str(e))
			self.refreshed = True
			self._watch_trees()
		marker = self._marker()
		self.built = marker if result.booted and marker[0] else None
		if self.built and arches.ARCHES[self.s.build.arch].uml:
			opts = runs.boot_options(self.s, self.tree, self.filter_glob)
			runner.ready_parser(self.tree.src, opts,
					    self.s.cache / f'watch-{os.getpid()}.json')
		return result

	def loop(self) -> runner.RunResult:
		"""The runs, until standard input ends; the last one's result."""
		self._watch_trees()
		result = self.run()
		stdin = sys.stdin.fileno()
		while True:
			print('mm-kunit: watching for changes (Enter: run again, '
			      'Ctrl-D: stop)', flush=True)
			# What changed while the last run prepared is run now.
			while not self._changed():
				ready = select.select([self.watcher.fd, stdin],
						      [], [])[0]
				if stdin in ready:
					if not self._line(stdin):
						return result
					break
				self.pending += self.watcher.settled()
			progress.progress('running again')
			result = self.run()

	def _changed(self) -> bool:
		"""Whether a file a build reads may have changed since the last
		run, as far as the events have said."""
		return self.watcher.lost or \
			not all(e.editors for e in self.pending)

	@staticmethod
	def _line(fd: int) -> bool:
		"""Whether standard input asks for a run (a line), not an end
		(end of file)."""
		return os.read(fd, 4096) != b''


def watch_suites(s: Session, filter_glob: Optional[str]) -> runner.RunResult:
	"""Runs the suites (as run_suites() does), then again after each
	change and each Enter, until standard input ends; the last run's
	result."""
	s.ensure_deps()
	w = Watch(s, filter_glob)
	try:
		return w.loop()
	finally:
		runner.drop_parser()
		w.watcher.close()
