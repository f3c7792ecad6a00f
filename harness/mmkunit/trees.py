# SPDX-License-Identifier: GPL-2.0
"""Kernel sources and the prepared trees the harness builds in.

Everything lives under the cache directory (by default
$XDG_CACHE_HOME/mm-kunit), never in the repository:

  pristine/<tarball>/       the unpacked Debian tarball, never modified
  trees/<key>/src/          a prepared tree: a copy of a source with the
                            overlay applied
  trees/<key>/build-<arch>/ its kunit.py build directory, kept so that the
                            next build is incremental
  trees/<key>/state.json    what the overlay last wrote into src/
  results/<run>/            the logs and results of each run
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import fnmatch
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import threading
import time
from pathlib import Path
from typing import (Any, Dict, Iterable, Iterator, List, Optional, Sequence,
		    Set, Tuple)

from mmkunit import overlay as ov
from mmkunit.progress import progress, step

class TreeError(Exception):
	"""A source or tree cannot be used; the message says why."""


# The trees this thread holds (PreparedTree.locked()): flock() would make
# a second hold of the same tree wait for the first.
_LOCAL = threading.local()


def _held() -> Set[Path]:
	held: Optional[Set[Path]] = getattr(_LOCAL, 'held', None)
	if held is None:
		held = _LOCAL.held = set()
	return held


def cache_dir() -> Path:
	env = os.environ.get('MM_KUNIT_CACHE')
	if env:
		return Path(env).resolve()
	xdg = os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache')
	return Path(xdg).resolve() / 'mm-kunit'


def kernel_version(tree: Path) -> str:
	"""VERSION.PATCHLEVEL.SUBLEVEL from the tree's Makefile."""
	fields: Dict[str, str] = {}
	try:
		head = (tree / 'Makefile').read_text(errors='replace')[:2000]
	except OSError:
		return ''
	for key in ('VERSION', 'PATCHLEVEL', 'SUBLEVEL'):
		m = re.search(rf'^{key} = (\S+)', head, re.M)
		if m:
			fields[key] = m.group(1)
	return '.'.join(fields[k] for k in ('VERSION', 'PATCHLEVEL', 'SUBLEVEL')
			if k in fields)


def _stamp(path: Path) -> str:
	st = path.stat()
	return f'{path}:{st.st_size}:{int(st.st_mtime)}'


def unpack_tarball(tarball: Path, cache: Path) -> Path:
	"""Unpacks the kernel tarball once; returns the pristine tree.

	The tree is unpacked next to its final place and renamed into it, so an
	interrupted unpack never leaves a half tree that looks complete.
	"""
	if not tarball.is_file():
		raise TreeError(f'{tarball}: no such kernel tarball (Debian\'s are in the linux-source-X.Y packages)')
	name = re.sub(r'\.tar(\.\w+)?$', '', tarball.name)
	dest = cache / 'pristine' / name
	stamp_file = cache / 'pristine' / f'{name}.stamp'
	if dest.is_dir() and stamp_file.is_file() and \
	   stamp_file.read_text() == _stamp(tarball):
		return dest
	dest.parent.mkdir(parents=True, exist_ok=True)
	tmp = dest.parent / f'.{name}.unpacking'
	shutil.rmtree(tmp, ignore_errors=True)
	tmp.mkdir()
	# tar(1) is several times faster than the tarfile module here.
	with step(f'unpacking {tarball} into {dest} (once)'):
		subprocess.run(['tar', '-xf', str(tarball), '-C', str(tmp)],
			       check=True)
	entries = list(tmp.iterdir())
	top = entries[0] if len(entries) == 1 and entries[0].is_dir() else tmp
	if not ov.is_kernel_tree(top):
		shutil.rmtree(tmp)
		raise TreeError(f'{tarball} does not hold a kernel source tree')
	shutil.rmtree(dest, ignore_errors=True)
	stamp_file.unlink(missing_ok=True)
	os.replace(top, dest)
	shutil.rmtree(tmp, ignore_errors=True)
	stamp_file.write_text(_stamp(tarball))
	return dest


@dataclasses.dataclass
class PreparedTree:
	"""A tree the harness owns, with the overlay applied."""
	key: str
	# Where the unmodified kernel sources come from.
	source: Path
	base: Path  # cache/trees/<key>

	@property
	def src(self) -> Path:
		return self.base / 'src'

	def build_dir(self, arch: str) -> Path:
		return self.base / f'build-{arch}'

	@property
	def _state_file(self) -> Path:
		return self.base / 'state.json'

	@contextlib.contextmanager
	def locked(self) -> Iterator[None]:
		"""Holds the tree for one harness run; another run waits. A
		thread that holds it already may take it again (a baseline,
		then the jobs that are measured against it)."""
		held = _held()
		if self.base in held:
			yield
			return
		self.base.mkdir(parents=True, exist_ok=True)
		with open(self.base / 'lock', 'w') as f:
			try:
				fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
			except BlockingIOError:
				progress(f'waiting for another run using {self.base}')
				fcntl.flock(f, fcntl.LOCK_EX)
			held.add(self.base)
			try:
				yield
			finally:
				held.discard(self.base)

	def _load_state(self) -> Dict[str, Any]:
		try:
			state = json.loads(self._state_file.read_text())
		except (OSError, ValueError):
			return {}
		return state if isinstance(state, dict) else {}

	def _save_state(self, state: Dict[str, Any]) -> None:
		tmp = self._state_file.with_suffix('.tmp')
		tmp.write_text(json.dumps(state, indent=1, sort_keys=True))
		os.replace(tmp, self._state_file)

	def prepare(self, overlay: ov.Overlay, extra: Sequence[ov.Patch] = (),
		    refresh_source: bool = False) -> List[str]:
		"""Makes src/ the source plus the overlay (plus extra patches).

		The whole series is staged against the source first: if it does
		not apply, OverlayError is raised and nothing is changed. Returns
		the files written: those the refresh from a source that may
		change (refresh_source) brought over or deleted, then the
		overlay's.
		"""
		desired = _stage(overlay, self.source, extra)
		state = self._load_state()
		refreshed: List[str] = []
		if not (self.src / 'Makefile').is_file() or \
		   state.get('source') != str(self.source):
			# What the next refresh starts from: looked at first.
			seen = changed_since(self.source, None) \
				if refresh_source else None
			self._copy_source()
			state = {'source': str(self.source), 'files': []}
			if seen is not None:
				state['scanned'] = seen.next_scan(None).to_state()
		elif refresh_source:
			refreshed, state['scanned'] = self._refresh_source(
				set(state.get('files', [])) | set(desired),
				state.get('scanned'))
		previous = set(state.get('files', [])) - set(desired)
		want: Dict[str, Optional[bytes]] = dict(desired)
		for name in previous:
			orig = self.source / name
			want[name] = orig.read_bytes() if orig.is_file() else None
		# Record the union first: if we are interrupted, the next run
		# still knows every file it may have to put back.
		state['files'] = sorted(set(want))
		self._save_state(state)
		changed = ov.sync_files(self.src, want)
		state['files'] = sorted(desired)
		state['overlay'] = overlay.digest(extra)
		self._save_state(state)
		return refreshed + sorted(set(changed) - set(refreshed))

	def worker(self, n: int) -> 'PreparedTree':
		"""The n-th tree of a parallel run (mutants), next to this one."""
		key = f'{self.key}.w{n}'
		return PreparedTree(key, self.source, self.base.parent / key)

	def clone_from(self, other: 'PreparedTree', build_key: str) -> None:
		"""Makes this tree a copy of other (its sources as prepared, and
		the build directory build_key) unless it has one of its own;
		one of its own gets other's configuration.

		The copy keeps the files' times, and the absolute paths in the
		build directory's text files (kbuild's saved commands and
		dependency lists) are rewritten to this tree's: make then
		rebuilds in the copy exactly what changed in it, and a first
		build costs a relink instead of a cold build. Where this tree
		has sources of its own, each that differs from other's, or that
		other wrote since (a mutant's text put back), is touched first
		(_touch_what_differs()).
		"""
		if not (self.src / 'Makefile').is_file() or \
		   self._load_state().get('source') != str(self.source):
			self._copy_source(other.src)
			shutil.copyfile(other._state_file, self._state_file)
		build, theirs = self.build_dir(build_key), other.build_dir(build_key)
		if not (theirs / '.config').is_file():
			return
		if (build / '.config').is_file():
			# A copy made before: it takes the configuration other
			# was just given (the replay's option added, or taken
			# out again), which make applies on its next build.
			if (build / '.config').read_bytes() != \
			   (theirs / '.config').read_bytes():
				shutil.copyfile(theirs / '.config', build / '.config')
			return
		tmp = self.base / f'.{build.name}.copying'
		shutil.rmtree(tmp, ignore_errors=True)
		with step(f'copying {theirs} to {build} (once)'):
			shutil.copytree(theirs, tmp, symlinks=True)
			_rewrite_paths(tmp, f'{other.base}/'.encode(),
				       f'{self.base}/'.encode())
			source = tmp / 'source'
			if source.is_symlink():
				source.unlink()
				source.symlink_to(self.src)
			_touch_what_differs(self.src, other.src)
		os.replace(tmp, build)

	def _copy_source(self, origin: Optional[Path] = None) -> None:
		"""Copies the source (or origin) to src/, keeping file times."""
		origin = origin or self.source
		shutil.rmtree(self.src, ignore_errors=True)
		self.base.mkdir(parents=True, exist_ok=True)
		tmp = self.base / '.src.copying'
		shutil.rmtree(tmp, ignore_errors=True)
		with step(f'copying {origin} to {self.src} (once)'):
			_rsync(origin, tmp, exclude=())
		os.replace(tmp, self.src)

	def _refresh_source(self, overlay_files: Set[str], scanned: Any
			    ) -> Tuple[List[str], Dict[str, float]]:
		"""Brings src/ up to date with a user's tree that may have
		changed; the files it wrote or deleted, and what the next
		refresh starts from.

		scanned is what the last refresh saw (Scanned.to_state()): then
		only what find(1) names as changed since is looked at (one walk
		of the tree, a third of rsync's two); without it, or when this
		machine's clock went back since, rsync compares every file.
		"""
		last = Scanned.from_state(scanned)
		if last is None or last.clock > time.time():
			seen = changed_since(self.source, None)
			written = _rsync(self.source, self.src,
					 exclude=sorted(overlay_files))
		else:
			seen = changed_since(self.source, last.since)
			if seen is None:
				written = _rsync(self.source, self.src,
						 exclude=sorted(overlay_files))
			else:
				written = _bring_over(self.source, self.src,
						      seen.entries,
						      overlay_files)
		if seen is None:
			return written, {}
		return written, seen.next_scan(last).to_state()


def _touch_what_differs(mine: Path, theirs: Path) -> None:
	"""Touches each file of mine whose build output, copied from the
	build directory of theirs, may be out of date though make would
	not see it: a file that holds other text than theirs, or that
	theirs last wrote after mine did (an object there may have been
	compiled from a mutant's text since, which make saw undone only by
	that write)."""
	now = time.time_ns()
	for dirpath, _, filenames in os.walk(theirs):
		rel = Path(dirpath).relative_to(theirs)
		for name in filenames:
			t, m = Path(dirpath) / name, mine / rel / name
			try:
				ts, ms = t.lstat(), m.lstat()
			except FileNotFoundError:
				continue
			if stat.S_ISLNK(ts.st_mode) or stat.S_ISLNK(ms.st_mode) or \
			   (ts.st_size, ts.st_mtime_ns) == (ms.st_size, ms.st_mtime_ns):
				continue
			if ms.st_mtime_ns >= ts.st_mtime_ns and \
			   m.read_bytes() == t.read_bytes():
				continue
			os.utime(m, ns=(now, now))


def _rewrite_paths(top: Path, old: bytes, new: bytes) -> None:
	"""Replaces old by new in the text files under top, keeping times."""
	for dirpath, _, filenames in os.walk(top):
		for name in filenames:
			path = Path(dirpath) / name
			if path.is_symlink():
				continue
			data = path.read_bytes()
			if old not in data or b'\0' in data:
				continue  # binary files keep what they say
			st = path.stat()
			path.write_bytes(data.replace(old, new))
			os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


# In a user's tree: what is not source, and would make a tree unusable for
# an out-of-tree build ("source tree is not clean").
_RSYNC_EXCLUDES = ['/.git', '/.config', '/.config.old', '/include/config/',
		   '/include/generated/', '/arch/*/include/generated/',
		   '/.kunitconfig', '/.kunit/']


def _rsync(src: Path, dest: Path, exclude: Sequence[str]) -> List[str]:
	"""Makes dest a copy of src, keeping file times; the files (not
	directories) it wrote or deleted, relative to dest."""
	if not shutil.which('rsync'):
		raise TreeError('rsync is missing (apt-get install rsync)')
	cmd = ['rsync', '-a', '--delete', '--out-format=%i %n']
	for pattern in _RSYNC_EXCLUDES:
		cmd.append(f'--exclude={pattern}')
	for name in exclude:
		cmd.append(f'--exclude=/{name}')
	# The directories of files the overlay adds (mm/tests/) are not in
	# the source: keep them, and rsync from trying to delete them.
	for parent in sorted({str(Path(n).parent) for n in exclude} - {'.'}):
		cmd.append(f'--filter=protect /{parent}/')
	dest.mkdir(parents=True, exist_ok=True)
	done = subprocess.run(cmd + [f'{src}/', f'{dest}/'], check=True,
			      stdout=subprocess.PIPE, text=True,
			      errors='surrogateescape')
	return rsync_changes(done.stdout)


# A file system's ctime granularity, at most (a second on some), and then
# some: what find(1) saw changed since a time, it sees again the next time.
_SCAN_MARGIN = 2.0


@dataclasses.dataclass(frozen=True)
class Scanned:
	"""Where the next look at a user's tree starts: since, a time of the
	tree's own file system (its ctimes, which neither `cp -p` nor
	`touch -d` set back, unlike the mtimes make and rsync compare), and
	clock, this machine's time when it was taken."""
	since: float
	clock: float

	@staticmethod
	def from_state(state: Any) -> Optional['Scanned']:
		try:
			return Scanned(float(state['since']), float(state['clock']))
		except (KeyError, TypeError, ValueError):
			return None

	def to_state(self) -> Dict[str, float]:
		return {'since': self.since, 'clock': self.clock}


@dataclasses.dataclass(frozen=True)
class Changes:
	"""What find(1) saw in a user's tree: the entries whose ctime is after
	a time, each as find's %y type and a path relative to the tree."""
	entries: List[Tuple[str, str]]
	newest: Optional[float]
	seconds: float

	def next_scan(self, last: Optional[Scanned]) -> Scanned:
		"""Where the next look starts. A change made after the walk
		passed its file has a ctime after the walk began, and the newest
		ctime the walk saw is before it ended: the walk's length and
		_SCAN_MARGIN before that newest ctime is before the walk began.
		A ctime ahead of this machine's clock (the file system's clock
		ahead, or this one's set back since) counts as now."""
		now = time.time()
		since = last.since if last is not None else 0.0
		if self.newest is not None:
			since = max(since, min(self.newest, now) - self.seconds -
				    _SCAN_MARGIN)
		return Scanned(since, now)


# _RSYNC_EXCLUDES's directories, as find(1)'s -path patterns: not walked.
_SCAN_PRUNED = ['./.git', './.kunit', './include/config', './include/generated',
		'./arch/*/include/generated']


def changed_since(tree: Path, since: Optional[float]) -> Optional[Changes]:
	"""The entries of tree changed after since, not those rsync leaves
	out; with since None, the newest ctime alone (rsync looks at every
	file then). None when find(1) fails."""
	cmd = ['find', '.', '(']
	for pattern in _SCAN_PRUNED:
		cmd += ['-path', pattern, '-o']
	cmd[-1:] = [')', '-prune', '-o']
	if since is None:
		cmd += ['-printf', '%C@\\0']
	else:
		# Whole seconds: at most one earlier than since.
		cmd += ['-newerct', f'@{int(since)}', '-printf', '%C@ %y %P\\0']
	start = time.monotonic()
	try:
		done = subprocess.run(cmd, cwd=tree, stdout=subprocess.PIPE,
				      stderr=subprocess.DEVNULL,
				      env=dict(os.environ, LC_ALL='C'))
	except OSError:
		return None
	seconds = time.monotonic() - start
	if done.returncode != 0:
		return None
	records = done.stdout.split(b'\0')[:-1]
	if since is None:
		return Changes([], max(map(float, records), default=None),
			       seconds)
	entries: List[Tuple[str, str]] = []
	newest: Optional[float] = None
	for record in records:
		ctime, kind, raw = record.split(b' ', 2)
		newest = max(newest or 0.0, float(ctime))
		name = os.fsdecode(raw)  # '' for the tree itself
		if not _rsync_excluded(name, kind == b'd'):
			entries.append((kind.decode(), name))
	return Changes(entries, newest, seconds)


# The first components of _RSYNC_EXCLUDES's patterns.
_EXCLUDED_TOP = {p.split('/')[1] for p in _RSYNC_EXCLUDES}


def _rsync_excluded(name: str, is_dir: bool) -> bool:
	"""Whether _RSYNC_EXCLUDES leaves name (relative) out."""
	parts = name.split('/')
	if parts[0] not in _EXCLUDED_TOP:
		return False
	for pattern in _RSYNC_EXCLUDES:
		want = pattern.strip('/').split('/')
		if len(parts) < len(want) or not all(
				fnmatch.fnmatchcase(p, w) for p, w in zip(parts, want)):
			continue
		if len(parts) > len(want) or is_dir or not pattern.endswith('/'):
			return True
	return False


def _bring_over(src: Path, dest: Path, entries: Iterable[Tuple[str, str]],
		keep: Set[str]) -> List[str]:
	"""Makes dest a copy of src where entries (changed_since()'s) say src
	changed, keeping keep (the overlay's files) and the directories that
	hold them; the files written or deleted, as _rsync() names them.

	A changed directory is compared with its copy: what the copy has
	beyond it is deleted, and what it has beyond the copy is copied
	whole (a directory moved into the tree keeps its files' ctimes:
	only the directory itself shows the change).
	"""
	kept = set(keep)
	for name in keep:
		kept.update(str(p) for p in Path(name).parents if str(p) != '.')
	listed: List[str] = []
	deleted: List[str] = []
	for kind, name in entries:
		if name in keep:
			continue
		if name:
			# Not the top: rsync would copy "." with all it holds.
			listed.append(name)
		if kind != 'd':
			continue
		try:
			theirs = set(os.listdir(src / name))
		except OSError:
			continue  # gone since: its parent shows that
		mine_dir = dest / name
		mine = set(os.listdir(mine_dir)) if mine_dir.is_dir() and \
			not mine_dir.is_symlink() else set()
		for entry in sorted(mine | theirs):
			rel = f'{name}/{entry}' if name else entry
			if rel in kept or _rsync_excluded(rel, (src / rel).is_dir()):
				continue
			theirs_dir = entry in theirs and (src / rel).is_dir() and \
				not (src / rel).is_symlink()
			mine_is_dir = entry in mine and (dest / rel).is_dir() and \
				not (dest / rel).is_symlink()
			if entry in mine and (entry not in theirs or
					      theirs_dir != mine_is_dir):
				deleted += _remove(dest, rel, kept)
			if theirs_dir and not mine_is_dir:
				listed += _walk(src, rel)
	written, whole = _rsync_listed(src, dest, listed)
	if not whole:
		# A file gone between find and rsync: rsync looks at all.
		written += _rsync(src, dest, exclude=sorted(keep))
	return sorted(set(deleted) | set(written))


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
			   not _rsync_excluded(str(rel / n), False):
				(Path(dirpath) / n).unlink()
				gone.append(str(rel / n))
		if str(rel) not in kept and not _rsync_excluded(str(rel), True):
			with contextlib.suppress(OSError):  # holds what is kept
				os.rmdir(dirpath)
	return sorted(gone)


def _walk(top: Path, name: str) -> List[str]:
	"""name and all it holds, relative to top; not what rsync leaves out."""
	found = [name]
	for dirpath, dirnames, filenames in os.walk(top / name):
		rel = Path(dirpath).relative_to(top)
		dirnames[:] = [n for n in dirnames
			       if not _rsync_excluded(str(rel / n), True)]
		found += [str(rel / n) for n in dirnames + filenames
			  if not _rsync_excluded(str(rel / n), False)]
	return found


def _rsync_listed(src: Path, dest: Path, names: Sequence[str]
		  ) -> Tuple[List[str], bool]:
	"""Copies the names (relative to src) to dest, a directory named
	without what it holds; the files written, and whether all were."""
	if not names:
		return [], True
	done = subprocess.run(
		['rsync', '-a', '--from0', '--files-from=-',
		 '--out-format=%i %n', f'{src}/', f'{dest}/'],
		input='\0'.join(names),
		stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
		errors='surrogateescape')
	return rsync_changes(done.stdout), done.returncode == 0


def rsync_changes(itemized: str) -> List[str]:
	"""The files rsync's itemized output (--out-format='%i %n': eleven
	characters of flags, '*deleting' padded to as many, a space, the
	name) names as written or deleted; not directories (their names end
	in '/')."""
	return [line[12:] for line in itemized.splitlines()
		if line[12:] and not line.endswith('/')]


def default_tree(cache: Path, tarball: Path) -> PreparedTree:
	pristine = unpack_tarball(tarball, cache)
	key = f'debian-{pristine.name}'
	return PreparedTree(key, pristine, cache / 'trees' / key)


def user_tree(cache: Path, kernel: Path) -> PreparedTree:
	"""A prepared copy of the user's tree; the user's tree is only read."""
	kernel = kernel.resolve()
	ov.check_kernel_tree(kernel)
	digest = hashlib.sha256(str(kernel).encode()).hexdigest()[:12]
	key = f'user-{re.sub(r"[^A-Za-z0-9_.-]", "_", kernel.name)}-{digest}'
	return PreparedTree(key, kernel, cache / 'trees' / key)


def apply_in_place(overlay: ov.Overlay, kernel: Path) -> List[str]:
	"""Applies the overlay into the user's own tree.

	Checks first that the whole series applies (or is already applied, in
	which case the files are brought up to date); changes nothing if not.
	"""
	kernel = kernel.resolve()
	return ov.sync_files(kernel, dict(_stage(overlay, kernel)))


def _stage(overlay: ov.Overlay, source: Path,
	   extra: Sequence[ov.Patch] = ()) -> Dict[str, bytes]:
	"""ov.stage() of a user's tree with or without the series: a tree the
	series was applied into (--in-place) is taken as it is, in copy mode
	and in place alike, and the user is told so."""
	desired, applied = ov.stage_detecting_applied(overlay, source, extra)
	if applied:
		progress(f'{source} already holds the series (applied in place); '
			 'taking it as it is')
	return desired


@dataclasses.dataclass(frozen=True)
class Commit:
	sha: str
	subject: str

	@property
	def short(self) -> str:
		return self.sha[:12]


def git(repo: Path, *args: str) -> str:
	"""git's output in repo; TreeError if git fails."""
	proc = subprocess.run(['git', '-C', str(repo), *args],
			      capture_output=True, text=True, check=False)
	if proc.returncode != 0:
		raise TreeError(f'git {" ".join(args)} in {repo} failed: '
				f'{proc.stderr.strip()}')
	return proc.stdout


def clean_head(kernel: Path) -> Optional[str]:
	"""The commit the user's git tree has checked out, if its files are
	that commit's (nothing changed, nothing staged); None otherwise."""
	try:
		top = git(kernel, 'rev-parse', '--show-toplevel').strip()
		head = git(kernel, 'rev-parse', '--verify', '-q', 'HEAD^{commit}')
		changed = git(kernel, 'status', '--porcelain',
			      '--untracked-files=no')
	except TreeError:
		return None
	return head.strip() if top == str(kernel.resolve()) and not changed \
		else None


def commit_range(kernel: Path, spec: str) -> List[Commit]:
	"""The commits of A..B (oldest first) in the user's git tree."""
	try:
		git(kernel, 'rev-parse', '--git-dir')
	except TreeError as e:
		raise TreeError(f'{kernel}: not a git tree, so no commits to '
				'run each of') from e
	if '..' not in spec:
		raise TreeError(f'{spec}: give a commit range A..B')
	out = git(kernel, 'rev-list', '--reverse', '--format=%H %s',
		  '--no-commit-header', spec, '--')
	commits = [Commit(*line.split(' ', 1)) if ' ' in line
		   else Commit(line, '') for line in out.splitlines() if line]
	if not commits:
		raise TreeError(f'{spec}: no commits in that range')
	return commits


def commits_tree(cache: Path, kernel: Path) -> PreparedTree:
	"""A tree for running a user's commits one by one.

	checkout/ is a clone of the user's repository sharing its objects
	(the user's tree is only read); each commit is checked out there and
	src/ follows it, so only the files a commit changes are rebuilt.
	"""
	kernel = kernel.resolve()
	digest = hashlib.sha256(str(kernel).encode()).hexdigest()[:12]
	key = f'commits-{re.sub(r"[^A-Za-z0-9_.-]", "_", kernel.name)}-{digest}'
	base = cache / 'trees' / key
	return PreparedTree(key, base / 'checkout', base)


def checkout_commit(tree: PreparedTree, kernel: Path, commit: Commit) -> None:
	"""Makes tree.source (the harness's clone) the commit's sources."""
	checkout = tree.source
	if not (checkout / '.git').is_dir():
		shutil.rmtree(checkout, ignore_errors=True)
		checkout.parent.mkdir(parents=True, exist_ok=True)
		with step(f'cloning {kernel} (sharing its objects) into {checkout}'):
			git(checkout.parent, 'clone', '--quiet', '--shared',
			    '--no-checkout', str(kernel.resolve()), checkout.name)
	git(checkout, 'checkout', '--quiet', '--force', '--detach', commit.sha)
	git(checkout, 'clean', '--quiet', '-dffx')
