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
queue overflowed) make the next run walk, as a run without --watch does.

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
import select
import struct
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
		kind = 'd' if mirror._is_dir(st) else 'l' if \
			os.path.islink(self.root / self.rel) else 'f'
		return [(kind, self.rel)]


_libc = ctypes.CDLL(None, use_errno=True)


class Watcher:
	"""inotify watches on every directory of some trees (but what rsync
	leaves out of a kernel tree, mirror.excluded())."""

	def __init__(self) -> None:
		self.fd: int = _libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
		if self.fd < 0:
			raise HarnessError('--watch: inotify_init1: '
					   f'{os.strerror(ctypes.get_errno())}')
		self._dirs: Dict[int, Tuple[Path, str]] = {}
		self.roots: List[Path] = []
		# Events were lost: what changed is not known.
		self.lost = False

	def close(self) -> None:
		os.close(self.fd)

	def add(self, root: Path) -> None:
		"""Watches root and every directory under it."""
		self.roots.append(root)
		self._add(root, '')

	def _add(self, root: Path, top: str) -> None:
		for path, dirnames, _ in os.walk(root / top):
			rel = os.path.relpath(path, root)
			rel = '' if rel == '.' else rel
			wd = _libc.inotify_add_watch(self.fd, os.fsencode(path),
						     MASK)
			if wd < 0:
				err = ctypes.get_errno()
				if err == errno.ENOSPC:
					raise HarnessError(
						f'--watch: no inotify watch left for '
						f'{path} (sysctl '
						'fs.inotify.max_user_watches)')
				# Gone since, or not a directory now: its
				# parent's event says so.
				dirnames[:] = []
				continue
			self._dirs[wd] = (root, rel)
			dirnames[:] = [d for d in dirnames if not mirror.excluded(
				f'{rel}/{d}' if rel else d, True)]

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
			self._dirs.pop(wd, None)
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
		if mirror.excluded(rel, bool(mask & IN_ISDIR)):
			return
		if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
			self._add(root, rel)
		events.append(Event(root, rel, d, mask))

	def settled(self) -> List[Event]:
		"""The events of a change: those queued now and those that come
		until none has for SETTLE seconds."""
		events = self.read()
		while select.select([self.fd], [], [], SETTLE)[0]:
			events += self.read()
		return events


def _stat(path: Path) -> Optional[Tuple[int, int]]:
	try:
		st = path.stat()
	except OSError:
		return None
	return st.st_size, st.st_mtime_ns


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
		self.watcher = Watcher()
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
		copy: of the files written, of the directories that hold them
		and of what is gone from those again (the files written first
		under another name); an edit made in the copy is kept for the
		next run."""
		events = self.watcher.read()
		if any(n.startswith(runner.KUNIT_PY.rpartition('/')[0])
		       for n in written):
			runner.drop_parser()
		names = set(written)
		dirs = _ancestors(written)

		def ours(e: Event) -> bool:
			if e.rel in names or (e.rel in dirs and not e.mask & _SELF):
				return True
			return e.dir in dirs and (e.listing or mirror._lstat(
				self.tree.src / e.rel) is None)
		self.pending += [e for e in events
				 if e.root != self.tree.src or not ours(e)]

	def _seen(self, events: Sequence[Event]) -> Optional[mirror.Seen]:
		if self.watcher.lost or self.user is None or \
		   not self.refreshed:
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
		if self.built and all(e.editors for e in events) and \
		   not self.watcher.lost and self._marker() == self.built:
			# No file a build reads changed.
			self.pending = events
			progress.progress('nothing changed since the last run: '
					  'running the kernel of the last build '
					  'as it is')
			result = runs.run_built(self.s, self.filter_glob)
		else:
			seen = self._seen(events)
			self.s = self.s.reread()
			self.watcher.lost = False
			self.built = None
			self.refreshed = False
			try:
				result = runs.run_suites(
					self.s, filter_glob=self.filter_glob,
					seen=seen, on_prepared=self._ours)
			except handlers.SETUP_ERRORS as e:
				# Not a run of the tree as it is now: the next
				# one looks at all that changed, as run does.
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
			while True:
				ready = select.select([self.watcher.fd, stdin],
						      [], [])[0]
				if stdin in ready:
					if not self._line(stdin):
						return result
					break
				self.pending += self.watcher.settled()
				if self.watcher.lost or \
				   not all(e.editors for e in self.pending):
					break
			progress.progress('running again')
			result = self.run()

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
