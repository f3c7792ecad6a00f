# SPDX-License-Identifier: GPL-2.0
"""The harness's copy of a user's kernel tree (`run --kernel DIR`), kept
up to date with it.

rsync -a --delete compares every file of both trees: two walks of about
100k files, 0.6 s of every run. So rsync makes the copy, and each later
refresh asks find(1) which entries of the user's tree changed since the
refresh before, by their ctime, and brings over those alone. It relies on
what Linux's file systems do, and compares every file again where it
cannot tell:

- A write, chmod, link or rename sets the entry's ctime to the file
  system's clock, and nothing sets it back (`cp -p`, `tar` and
  `touch -d` set the mtime, which make and rsync compare). A directory's
  ctime moves when an entry is added, removed or renamed in it.
- The next look starts at the newest ctime the walk saw, less the walk's
  length and a margin: a change made while find walked is seen again.
- A changed directory is compared with its copy, entry by entry: what
  the copy has beyond it is deleted, what it has beyond the copy is
  copied, a file whose size, mtime (to the nanosecond) or type differ is
  copied (an entry moved in keeps its ctime on file systems that do not
  move it). What is under a name that is not a directory now (a link to
  one, a file) is not looked into: the directory that holds the name
  says what it is.
- A directory is the one the copy was made from while it keeps its
  inode number (recorded for every directory): one whose number changed
  (moved in over a deleted one, two swapped) is copied whole, by rsync
  --delete of that directory alone.
- What changed in the copy itself since the last refresh is looked up
  too, in a walk of the copy run at the same time, and put back as the
  user's tree has it, as rsync did: a file edited there is copied again,
  a directory whose entries changed there (or that moved) is copied
  whole.
- This machine's clock did not go back between two refreshes: after a
  reboot, or a wall clock behind CLOCK_BOOTTIME's count since the last
  refresh, every file is compared again.

- `run --watch` (watch.py) has inotify name what changed in both trees
  since its last refresh (Seen): no walk then. The state is left as the
  last walk left it, and the next walk looks at all since.

Not seen: a file server's clock set back. Costly: a cache on a file
system that keeps coarser times than the user's tree's (ext3's seconds)
has every file the look names copied again, as a change, on every run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import math
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from mmkunit.progress import progress

# In a user's tree: what is not source, and would make a tree unusable for
# an out-of-tree build ("source tree is not clean").
RSYNC_EXCLUDES = ['/.git', '/.config', '/.config.old', '/include/config/',
		  '/include/generated/', '/arch/*/include/generated/',
		  '/.kunitconfig', '/.kunit/']
# The first components of RSYNC_EXCLUDES's patterns.
_EXCLUDED_TOP = {p.split('/')[1] for p in RSYNC_EXCLUDES}

# rsync's look at a file compares its size and mtime, the mtime to the
# second unless told otherwise: an edit that keeps a file's size (++ made
# --) within the second of the text before it would look unchanged.
_RSYNC_TIMES = ['--modify-window=-1']

# A file system's ctime granularity, at most (a second on some), and then
# some: what find(1) saw changed since a time, it sees again the next time.
MARGIN = 2.0


def rsync(src: Path, dest: Path, exclude: Sequence[str], under: str = ''
	  ) -> List[str]:
	"""Makes dest a copy of src (or of its directory under: the rest is
	left alone), keeping file times, but for exclude (names relative to
	src) and the directories that hold them; the files (not
	directories) it wrote or deleted, relative to dest."""
	cmd = ['rsync', '-a', '--delete', *_RSYNC_TIMES, '--out-format=%i %n']
	for pattern in _anchored(under):
		cmd.append(f'--exclude={pattern}')
	inner = [n[len(under) + 1:] if under else n for n in exclude
		 if not under or n.startswith(f'{under}/')]
	for name in inner:
		cmd.append(f'--exclude=/{name}')
	# The directories of files the overlay adds (mm/tests/) are not in
	# the source: keep them, and rsync from trying to delete them.
	for parent in sorted({str(Path(n).parent) for n in inner} - {'.'}):
		cmd.append(f'--filter=protect /{parent}/')
	(dest / under).mkdir(parents=True, exist_ok=True)
	done = subprocess.run(cmd + [f'{src / under}/', f'{dest / under}/'],
			      check=True, stdout=subprocess.PIPE, text=True,
			      errors='surrogateescape')
	return [f'{under}/{n}' if under else n
		for n in rsync_changes(done.stdout)]


def _anchored(under: str) -> List[str]:
	"""RSYNC_EXCLUDES as patterns of a copy of the directory under."""
	if not under:
		return RSYNC_EXCLUDES
	have = under.split('/')
	found = []
	for pattern in RSYNC_EXCLUDES:
		want = pattern.strip('/').split('/')
		if len(want) > len(have) and all(
				fnmatch.fnmatchcase(h, w) for h, w in zip(have, want)):
			found.append('/' + '/'.join(want[len(have):]) +
				     ('/' if pattern.endswith('/') else ''))
	return found


def rsync_changes(itemized: str) -> List[str]:
	"""The files rsync's itemized output (--out-format='%i %n': eleven
	characters of flags, '*deleting' padded to as many, a space, the
	name) names as written or deleted; not directories (their names end
	in '/')."""
	return [line[12:] for line in itemized.splitlines()
		if line[12:] and not line.endswith('/')]


def excluded(name: str, is_dir: bool) -> bool:
	"""Whether RSYNC_EXCLUDES leaves name (relative to the tree) out."""
	parts = name.split('/')
	if parts[0] not in _EXCLUDED_TOP:
		return False
	for pattern in RSYNC_EXCLUDES:
		want = pattern.strip('/').split('/')
		if len(parts) < len(want) or not all(
				fnmatch.fnmatchcase(p, w) for p, w in zip(parts, want)):
			continue
		if len(parts) > len(want) or is_dir or not pattern.endswith('/'):
			return True
	return False


def holds_no_excluded(copy: Path) -> bool:
	"""Whether nothing RSYNC_EXCLUDES leaves out is in copy: what no
	refresh looks at (a .config or generated headers of a build made in
	it, which kbuild's builds elsewhere refuse)."""
	for pattern in RSYNC_EXCLUDES:
		if any(True for _ in copy.glob(pattern.strip('/'))):
			return False
	return True


@dataclasses.dataclass(frozen=True)
class Clock:
	"""This machine's boot, and its wall and boot-time clocks."""
	boot: str
	wall: float
	up: float

	@staticmethod
	def now() -> 'Clock':
		try:
			boot = Path('/proc/sys/kernel/random/boot_id').read_text().strip()
		except OSError:
			boot = ''
		return Clock(boot, time.time(), time.clock_gettime(time.CLOCK_BOOTTIME))

	def went_back_by(self, later: 'Clock') -> bool:
		"""Whether the wall clock may have been set back between self and
		later: another boot (or none known), or less wall time passed
		than boot time (a second of slack)."""
		return not self.boot or later.boot != self.boot or \
			later.wall - self.wall < later.up - self.up - 1.0


@dataclasses.dataclass(frozen=True)
class State:
	"""What a refresh leaves for the next: since, a time of the user's
	file system from which its ctimes are looked at; copied, this
	machine's time when the refresh began (the copy's ctimes from then
	on are edits of the copy); clock, when that was; dirs, each
	directory of the user's tree as 'device:inode'."""
	since: float
	copied: float
	clock: Clock
	dirs: Dict[str, str]

	@staticmethod
	def load(state: Any) -> Optional['State']:
		try:
			c = state['clock']
			dirs = state['dirs']
			if not isinstance(dirs, dict):
				return None
			return State(float(state['since']), float(state['copied']),
				     Clock(str(c['boot']), float(c['wall']),
					   float(c['up'])),
				     {str(k): str(v) for k, v in dirs.items()})
		except (KeyError, TypeError, ValueError):
			return None

	def to_state(self) -> Dict[str, Any]:
		return {'since': self.since, 'copied': self.copied,
			'clock': dataclasses.asdict(self.clock), 'dirs': self.dirs}


@dataclasses.dataclass(frozen=True)
class Walk:
	"""What find(1) saw in a tree: the entries changed after a time, each
	as find's %y type and a path relative to the tree ('' for the tree
	itself); the newest ctime; how long it took; with a look at the
	whole tree, its directories' identities (State.dirs)."""
	entries: List[Tuple[str, str]]
	newest: Optional[float]
	seconds: float
	dirs: Dict[str, str] = dataclasses.field(default_factory=dict)

	def next_since(self, since: Optional[float]) -> float:
		"""Where the next look starts. A change made after the walk
		passed its file has a ctime after the walk began, and the newest
		ctime the walk saw is before it ended: the walk's length and
		MARGIN before that newest ctime is before the walk began. A
		ctime ahead of this machine's clock counts as now."""
		start = since or 0.0
		if self.newest is None:
			return start
		return max(start, min(self.newest, time.time()) - self.seconds -
			   MARGIN)


def _find(tree: Path, since: Optional[float], whole: bool
	  ) -> Optional['subprocess.Popen[bytes]']:
	"""find(1) over tree's top-level entries that rsync does not leave
	out (what it leaves out deeper, _finish() does): a test of every
	entry's path would cost a third of the walk. None if there are
	none."""
	starts = []
	with os.scandir(tree) as entries:
		for e in entries:
			if not excluded(e.name, e.is_dir(follow_symlinks=False)):
				# Not an option or an operator of find's.
				starts.append(f'./{e.name}')
	if not starts:
		return None
	cmd = ['find', *sorted(starts)]
	if since is not None:
		cmd += ['-newerct', _find_time(since)]
	if whole:
		# Each entry's ctime, and each directory's identity.
		cmd += ['-printf', '%C@\\0', '(', '-type', 'd', '-printf',
			'd%D:%i %p\\0', ')']
	else:
		cmd += ['-printf', '%C@ %y %p\\0']
	return subprocess.Popen(cmd, cwd=tree, stdout=subprocess.PIPE,
				stderr=subprocess.DEVNULL,
				env=dict(os.environ, LC_ALL='C'))


def _micros(since: float) -> int:
	"""since as find(1) is given it: to the microsecond, rounded down."""
	return math.floor(since * 1e6)


def _find_time(since: float) -> str:
	seconds, micros = divmod(_micros(since), 1000000)
	return f'@{seconds}.{micros:06d}'


def _finish(tree: Path, find: Optional['subprocess.Popen[bytes]'],
	    since: Optional[float], started: float) -> Optional[Walk]:
	"""The walk of tree by find (_find()), and of the tree itself, which
	find's walk from its entries does not see."""
	out = b''
	if find is not None:
		out, _ = find.communicate()
		if find.returncode != 0:
			return None
	top = _lstat(tree)
	seconds = time.monotonic() - started
	if top is None:
		return None
	records = out.split(b'\0')[:-1]
	ctime = top.st_ctime_ns / 1e9
	if since is None:
		times = [ctime] + [float(r) for r in records
				   if not r.startswith(b'd')]
		dirs = {'': _ident(top)}
		for r in records:
			if r.startswith(b'd'):
				ident, raw = r[1:].split(b' ', 1)
				name = os.fsdecode(raw[2:])
				if not excluded(name, True):
					dirs[name] = ident.decode()
		return Walk([], max(times), seconds, dirs)
	entries: List[Tuple[str, str]] = []
	newest: Optional[float] = None
	if top.st_ctime_ns > _micros(since) * 1000:
		entries.append(('d', ''))
		newest = ctime
	for record in records:
		ctime_s, kind, raw = record.split(b' ', 2)
		newest = max(newest or 0.0, float(ctime_s))
		name = os.fsdecode(raw[2:])
		if not excluded(name, kind == b'd'):
			entries.append((kind.decode(), name))
	return Walk(entries, newest, seconds)


def walk(tree: Path, since: Optional[float]) -> Optional[Walk]:
	"""The entries of tree changed after since, not those rsync leaves
	out; with since None, the newest ctime and every directory's
	identity instead. None when find(1) fails."""
	started = time.monotonic()
	try:
		find = _find(tree, since, since is None)
	except OSError:
		return None
	return _finish(tree, find, since, started)


def _ident(st: os.stat_result) -> str:
	return f'{st.st_dev}:{st.st_ino}'


def _lstat(path: Path) -> Optional[os.stat_result]:
	try:
		return path.lstat()
	except (FileNotFoundError, NotADirectoryError):
		return None


def _is_dir(st: Optional[os.stat_result]) -> bool:
	return st is not None and stat.S_ISDIR(st.st_mode)


@dataclasses.dataclass(frozen=True)
class Seen:
	"""What changed since the last refresh, as walk() names entries:
	theirs in the user's tree, edited in the copy. Whoever gives it
	(watch.py) saw every change made since that refresh began."""
	theirs: List[Tuple[str, str]]
	edited: List[Tuple[str, str]]


def refresh(user: Path, copy: Path, keep: Set[str], last: Any,
	    seen: Optional[Seen] = None) -> Tuple[List[str], Dict[str, Any]]:
	"""Brings copy (made by copy_of()) up to date with user, but for keep
	(the overlay's files, relative) and what rsync leaves out; the files
	written or deleted, and the state for the next refresh. With seen,
	what changed is not looked for: seen says it."""
	clock = Clock.now()
	prev = State.load(last)
	if prev is None or prev.clock.went_back_by(clock):
		return _whole(user, copy, keep, clock)
	top = _lstat(user)
	if seen is not None and top is not None and \
	   prev.dirs.get('') == _ident(top):
		dirs = dict(prev.dirs)
		written = _bring_over(user, copy, seen.theirs, seen.edited,
				      keep, dirs)
		# The next walk looks at all since the last one.
		return written, dataclasses.replace(prev, dirs=dirs).to_state()
	started = time.monotonic()
	try:
		mine = _find(copy, prev.copied - MARGIN, False)
	except OSError:
		return _whole(user, copy, keep, clock)
	theirs = walk(user, prev.since)
	edited = _finish(copy, mine, prev.copied - MARGIN, started)
	top = _lstat(user)
	if theirs is None or edited is None or top is None or \
	   prev.dirs.get('') != _ident(top):
		return _whole(user, copy, keep, clock)
	dirs = dict(prev.dirs)
	written = _bring_over(user, copy, theirs.entries, edited.entries,
			      keep, dirs)
	return written, State(theirs.next_since(prev.since), clock.wall, clock,
			      dirs).to_state()


def copy_of(user: Path, copy: Path, refreshed: bool) -> Dict[str, Any]:
	"""Makes copy, a new directory, a copy of user (rsync); the state for
	its refreshes, if it is to be refreshed."""
	if not refreshed:
		rsync(user, copy, [])
		return {}
	# Nothing else writes the new copy while rsync makes it: its
	# edits are those made after.
	return _whole(user, copy, set(), Clock.now(), copied_after=True)[1]


def copied_now(state: Any) -> Dict[str, Any]:
	"""state, of a copy's refreshes, for a copy of that copy made just
	now (what changed in it since is an edit)."""
	last = State.load(state)
	if last is None:
		return {}
	return dataclasses.replace(last, copied=time.time()).to_state()


def _whole(user: Path, copy: Path, keep: Set[str], clock: Clock,
	   copied_after: bool = False) -> Tuple[List[str], Dict[str, Any]]:
	"""rsync's look at every file; the state from a walk before it."""
	seen = walk(user, None)
	written = rsync(user, copy, sorted(keep))
	if seen is None:
		return written, {}
	return written, State(seen.next_since(None),
			      time.time() if copied_after else clock.wall,
			      clock, seen.dirs).to_state()


def _bring_over(src: Path, dest: Path, entries: Sequence[Tuple[str, str]],
		edited: Sequence[Tuple[str, str]], keep: Set[str],
		dirs: Dict[str, str]) -> List[str]:
	"""Makes dest a copy of src where entries (walk()'s of src) say src
	changed, or edited (walk()'s of dest) says dest did, keeping keep
	and the directories that hold them; dirs (State.dirs) says which
	directories dest was copied from, and is brought up to date. The
	files written or deleted, as rsync() names them.

	A changed directory of src is compared with its copy entry by entry;
	a directory of src that is another now (its identity changed), and
	a directory of dest that changed, is copied whole (rsync --delete).
	"""
	kept = set(keep)
	for name in keep:
		kept.update(str(p) for p in Path(name).parents if str(p) != '.')
	listed: Dict[str, None] = {}  # in order, each once
	written: List[str] = []
	wholes: Set[str] = set()
	real: Dict[str, bool] = {'': True}
	complete = True

	def real_dir(rel: str) -> bool:
		"""Whether src/rel and all above it are directories (not links
		to them: what rsync would copy is the link)."""
		if rel not in real:
			real[rel] = real_dir(rel.rpartition('/')[0]) and \
				_is_dir(_lstat(src / rel))
		return real[rel]

	def within(rel: str) -> bool:
		parts = rel.split('/')
		return any('/'.join(parts[:i]) in wholes
			   for i in range(1, len(parts) + 1))

	def forget(rel: str) -> None:
		"""What dirs says of rel and what is under it."""
		for d in [d for d in dirs if d == rel or d.startswith(f'{rel}/')]:
			del dirs[d]

	def remove(rel: str) -> None:
		"""dest/rel deleted."""
		written.extend(_remove(dest, rel, kept))
		forget(rel)

	def whole(rel: str) -> None:
		"""src/rel, a directory, copied whole."""
		nonlocal complete
		if _lstat(dest / rel) is not None and \
		   not _is_dir(_lstat(dest / rel)):
			remove(rel)
		wholes.add(rel)
		forget(rel)
		try:
			written.extend(rsync(src, dest, sorted(keep), under=rel))
		except subprocess.CalledProcessError:
			complete = False
		dirs.update(_dir_idents(src, rel))

	done: Set[str] = set()
	for kind, name, ours in [(k, n, False) for k, n in entries] + \
				[(k, n, True) for k, n in edited]:
		if name in done or name in keep or within(name) or \
		   excluded(name, kind == 'd'):
			continue
		done.add(name)
		# Gone from src, or under what is not a directory there now:
		# the directory that held it changed, and is compared.
		if not real_dir(name.rpartition('/')[0]):
			continue
		theirs = _lstat(src / name)
		if theirs is None:
			continue
		if not _is_dir(theirs):
			listed[name] = None
			continue
		if ours and name:
			# Changed in dest: entries added, deleted or moved
			# there, or the directory itself moved. (The top is
			# compared: the copy is moved into its place once
			# made, and what moved in it is named too.)
			whole(name)
			continue
		if name:
			# Not the top: rsync would copy "." with all it holds.
			listed[name] = None
		mine = set(os.listdir(dest / name)) \
			if _is_dir(_lstat(dest / name)) else set()
		for entry in sorted(mine | set(os.listdir(src / name))):
			rel = f'{name}/{entry}' if name else entry
			t, m = _lstat(src / rel), _lstat(dest / rel)
			if rel in keep or excluded(rel, _is_dir(t or m)):
				continue
			if _is_dir(t):
				assert t is not None
				if not _is_dir(m) or dirs.get(rel) != _ident(t):
					whole(rel)
			elif t is not None:
				if _is_dir(m):
					remove(rel)
					m = None
				if m is None or t.st_size != m.st_size or \
				   t.st_mtime_ns != m.st_mtime_ns or \
				   stat.S_IFMT(t.st_mode) != stat.S_IFMT(m.st_mode):
					listed[rel] = None
			elif m is not None and rel not in kept:
				remove(rel)
	copied, listed_all = _rsync_listed(src, dest, list(listed))
	written += copied
	if not (complete and listed_all):
		# An entry gone between the look and rsync: rsync looks at all.
		progress(f'{src} changed while it was copied: comparing every '
			 'file')
		written += rsync(src, dest, sorted(keep))
	return sorted(set(written))


def _remove(top: Path, name: str, kept: Set[str]) -> List[str]:
	"""Deletes top/name, a directory with all it holds but kept and
	what rsync leaves out (as rsync's --delete does); the files (not
	directories) deleted, relative to top."""
	path = top / name
	if not path.is_dir() or path.is_symlink():
		path.unlink()
		return [name]
	gone = []
	for dirpath, dirnames, filenames in os.walk(path, topdown=False):
		rel = Path(dirpath).relative_to(top)
		for n in filenames + [d for d in dirnames
				      if (Path(dirpath) / d).is_symlink()]:
			if str(rel / n) not in kept and \
			   not excluded(str(rel / n), False):
				(Path(dirpath) / n).unlink()
				gone.append(str(rel / n))
		if str(rel) not in kept and not excluded(str(rel), True):
			with contextlib.suppress(OSError):  # holds what is kept
				os.rmdir(dirpath)
	return sorted(gone)


def _dir_idents(top: Path, name: str) -> Dict[str, str]:
	"""The identities of the directory top/name and those under it, but
	what rsync leaves out, by their names relative to top."""
	idents = {}
	for dirpath, dirnames, _ in os.walk(top / name):
		rel = Path(dirpath).relative_to(top)
		with contextlib.suppress(OSError):
			idents[str(rel)] = _ident(os.lstat(dirpath))
		dirnames[:] = [n for n in dirnames
			       if not excluded(str(rel / n), True)]
	return idents


def _rsync_listed(src: Path, dest: Path, names: Sequence[str]
		  ) -> Tuple[List[str], bool]:
	"""Copies the names (relative to src) to dest, a directory named
	without what it holds; the files written, and whether all were."""
	if not names:
		return [], True
	done = subprocess.run(
		['rsync', '-a', '--from0', '--files-from=-', *_RSYNC_TIMES,
		 '--out-format=%i %n', f'{src}/', f'{dest}/'],
		input='\0'.join(names), stdout=subprocess.PIPE,
		stderr=subprocess.DEVNULL, text=True, errors='surrogateescape')
	return rsync_changes(done.stdout), done.returncode == 0

