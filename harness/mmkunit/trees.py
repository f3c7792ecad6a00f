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
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set

from mmkunit import mirror
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
	# Whether prepare() refreshed src from a source that may change
	# (mirror.refresh()), which puts back what changed in src since the
	# refresh before, and src holds nothing rsync leaves out of it: then
	# no file of src changed since the last build but those prepare()
	# wrote, and no walk of src need look for one (stamp.holding()).
	refreshed: bool = dataclasses.field(default=False, compare=False)

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
		    refresh_source: bool = False,
		    seen: Optional[mirror.Seen] = None) -> List[str]:
		"""Makes src/ the source plus the overlay (plus extra patches).

		The whole series is staged against the source first: if it does
		not apply, OverlayError is raised and nothing is changed. Returns
		the files written: those the refresh from a source that may
		change (refresh_source) brought over or deleted, then the
		overlay's. seen: what changed in the source and in src since
		the last refresh, if that is known (mirror.refresh()).
		"""
		desired = _stage(overlay, self.source, extra)
		state = self._load_state()
		refreshed: List[str] = []
		if not (self.src / 'Makefile').is_file() or \
		   state.get('source') != str(self.source):
			scanned = self._copy_source(refreshed=refresh_source)
			state = {'source': str(self.source), 'files': [],
				 'scanned': scanned}
		elif refresh_source:
			_need_rsync()
			# mirror.py: what changed since the last refresh.
			refreshed, state['scanned'] = mirror.refresh(
				self.source, self.src,
				set(state.get('files', [])) | set(desired),
				state.get('scanned'), seen)
			self.refreshed = mirror.holds_no_excluded(self.src)
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
			state = other._load_state()
			if 'scanned' in state:
				# Refreshed from where other's copy was, the
				# copy's own edits counted from now.
				state['scanned'] = mirror.copied_now(
					state['scanned'])
			self._save_state(state)
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

	def _copy_source(self, origin: Optional[Path] = None,
			 refreshed: bool = False) -> Dict[str, Any]:
		"""Copies the source (or origin) to src/, keeping file times;
		the state of its refreshes (mirror.py), if it is refreshed."""
		origin = origin or self.source
		shutil.rmtree(self.src, ignore_errors=True)
		self.base.mkdir(parents=True, exist_ok=True)
		tmp = self.base / '.src.copying'
		shutil.rmtree(tmp, ignore_errors=True)
		_need_rsync()
		with step(f'copying {origin} to {self.src} (once)'):
			scanned = mirror.copy_of(origin, tmp, refreshed)
		os.replace(tmp, self.src)
		return scanned


def _need_rsync() -> None:
	"""TreeError unless rsync, which copies and refreshes src/, is here."""
	if not shutil.which('rsync'):
		raise TreeError('rsync is missing (apt-get install rsync)')


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
