# SPDX-License-Identifier: GPL-2.0
"""The overlay: what the project puts into a kernel tree.

The overlay lives in the repository's kernel/ directory:

  kernel/patches/series   the patch series, in order; each line names a
                          patch and, after it, the new files that the
                          patch's commit adds (for export)
  kernel/patches/*.patch  edits to existing kernel files, as git
                          format-patch mails
  kernel/mutants/*.patch  deliberate bugs, applied on top for mutant runs
  kernel/reverts/*.patch  reverts of upstream fixes the suites stand for,
                          applied on top for before-fix trees
  kernel/<path>           every other file: a new file at that path in the
                          kernel tree (for example mm/tests/...)

Applying never edits a tree in place piece by piece: the result of the whole
series is first computed in a scratch directory from the tree's own files
(stage()), so a patch that does not apply is found before anything is
touched. Only then are the files written (sync_files()), each one only if its
content changes, so that make sees unchanged files as unchanged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from mmkunit.expected import Entry, Kind, load_expected

# Directories of kernel/ that are not copied into the tree as files.
_NON_FILE_DIRS = ('patches', 'mutants', 'reverts', 'compat', 'kunit-configs')
# Files at the top of an overlay that are about it, not for the tree: a
# list of the tests each fix stands for (expected.py), the functions the
# suites pin and the survivors argued equivalent (generated.py), and the
# branches no test can take (coverage.py).
_NON_FILE_FILES = ('expected', 'pinned', 'equivalent', 'untaken')

_DIFF_GIT_RE = re.compile(r'^diff --git a/(\S+) b/(\S+)$')
_PLUS_RE = re.compile(r'^\+\+\+ b/(\S+)')
_FAILED_FILE_RES = (
	re.compile(r'^error: patch failed: (.+?):\d+$'),
	re.compile(r'^error: (.+?): patch does not apply$'),
	re.compile(r'^error: (.+?): No such file or directory$'),
	re.compile(r'^error: (.+?): does not exist in index$'),
)


class OverlayError(Exception):
	"""The overlay is malformed or does not apply; nothing was changed."""


@dataclasses.dataclass(frozen=True)
class Patch:
	"""One patch of the series (or a mutant), as read when loaded."""
	name: str
	path: Path
	text: bytes
	# Files of the tree that the patch modifies.
	touched: Tuple[str, ...]
	# New overlay files that belong to this patch's commit on export.
	new_files: Tuple[str, ...] = ()
	# The copies of new_files the patch file carries (its new-file diffs),
	# which text leaves out: the overlay writes the files from kernel/.
	carried: Dict[str, bytes] = dataclasses.field(
		default_factory=dict, compare=False, repr=False)

	@classmethod
	def from_file(cls, path: Path,
		      new_files: Sequence[str] = ()) -> 'Patch':
		if not path.is_file():
			raise OverlayError(f'{path}: no such patch')
		text, carried = split_carried(path.read_bytes(), new_files)
		touched = patch_touched_files(text.decode(errors='replace'))
		if not touched and not new_files:
			raise OverlayError(f'{path}: not a patch (no "diff --git" or "+++" header)')
		return cls(path.name, path, text, touched, tuple(new_files),
			   carried)

	def description(self) -> List[str]:
		"""The non-blank lines before the diff."""
		lines: List[str] = []
		for line in self.text.decode(errors='replace').splitlines():
			if line.startswith(('diff --git', '--- ')):
				break
			if line.strip():
				lines.append(line.strip())
		return lines

	def field(self, key: str) -> List[str]:
		"""The names a "KEY: a b (why)" line of the description gives."""
		for line in self.description():
			if line.startswith(f'{key}:'):
				return line[len(key) + 1:].split('(')[0].split()
		return []


@dataclasses.dataclass(frozen=True)
class BeforeFix:
	"""A tree that lacks some of the fixes the expected list names: the
	series without the patches that carry them (a port that carries a fix
	as its own patch), or with a revert of them on top (a kernel that has
	them upstream)."""
	label: str
	lacking: Tuple[str, ...]
	without: Tuple[str, ...] = ()
	revert: Optional[Patch] = None

	@property
	def extra(self) -> Tuple[Patch, ...]:
		return (self.revert,) if self.revert else ()


_NEW_FILE_DIFF = re.compile(
	r'diff --git a/(\S+) b/\1\nnew file mode \d+\n(?:index \S+\n)?'
	r'--- /dev/null\n\+\+\+ b/\1\n@@ -0,0 \+1(?:,\d+)? @@[^\n]*\n')


def split_carried(text: bytes, new_files: Sequence[str]
		  ) -> Tuple[bytes, Dict[str, bytes]]:
	"""A patch without its new-file diffs of new_files, and the files
	those diffs create."""
	blocks = re.split(r'(?m)^(?=diff --git )', text.decode())
	kept = blocks[:1]
	carried: Dict[str, bytes] = {}
	for block in blocks[1:]:
		m = _NEW_FILE_DIFF.match(block)
		if not m or m.group(1) not in new_files:
			kept.append(block)
			continue
		lines = block[m.end():].split('\n')
		content = [line[1:] + '\n' for line in lines if line.startswith('+')]
		if '\\ No newline at end of file' in lines and content:
			content[-1] = content[-1][:-1]
		carried[m.group(1)] = ''.join(content).encode()
	return ''.join(kept).encode(), carried


def patch_touched_files(text: str) -> Tuple[str, ...]:
	"""Returns the tree paths a unified diff modifies, in order."""
	files: List[str] = []
	for line in text.splitlines():
		m = _DIFF_GIT_RE.match(line) or _PLUS_RE.match(line)
		if m:
			name = m.group(m.lastindex or 1)
			if name not in files:
				files.append(name)
	return tuple(files)


@dataclasses.dataclass(frozen=True)
class Overlay:
	"""The series and the new files, as found under kernel/.

	Everything is read when the overlay is loaded: a long run (the mutant
	matrix) is not affected by edits made while it runs.
	"""
	root: Path
	patches: Tuple[Patch, ...]
	# New files, as paths relative to root (== paths in the kernel tree).
	files: Tuple[str, ...]
	contents: Dict[str, bytes] = dataclasses.field(compare=False, repr=False)

	@classmethod
	def load(cls, root: Path) -> 'Overlay':
		root = root.resolve()
		series = root / 'patches' / 'series'
		if not series.is_file():
			raise OverlayError(f'{series}: no series file')
		files = tuple(sorted(_overlay_files(root)))
		patches: List[Patch] = []
		claimed: Dict[str, str] = {}
		for lineno, raw in enumerate(series.read_text().splitlines(), 1):
			line = raw.split('#', 1)[0].strip()
			if not line:
				continue
			name, *new_files = line.split()
			where = f'{series}:{lineno}'
			for f in new_files:
				if f not in files:
					raise OverlayError(f'{where}: {f} is not a file under {root}')
				if f in claimed:
					raise OverlayError(f'{where}: {f} is already added by {claimed[f]}')
				claimed[f] = name
			if any(p.name == name for p in patches):
				raise OverlayError(f'{where}: {name} is listed twice')
			patches.append(Patch.from_file(root / 'patches' / name, new_files))
		unclaimed = [f for f in files if f not in claimed]
		if unclaimed:
			raise OverlayError(
				f'{series}: no patch adds {", ".join(unclaimed)}; '
				'list each new file after the patch whose commit adds it')
		listed = {p.name for p in patches}
		stray = sorted(p.name for p in (root / 'patches').glob('*.patch')
			       if p.name not in listed)
		if stray:
			raise OverlayError(f'{series}: not listed: {", ".join(stray)}')
		return cls(root, tuple(patches), files,
			   {f: (root / f).read_bytes() for f in files})

	def without(self, names: Sequence[str]) -> 'Overlay':
		"""The overlay less the named patches and the files they add."""
		unknown = [n for n in names if n not in {p.name for p in self.patches}]
		if unknown:
			raise OverlayError(f'not in the series: {", ".join(unknown)}')
		dropped = [p for p in self.patches if p.name in names]
		gone = {f for p in dropped for f in p.new_files}
		files = tuple(f for f in self.files if f not in gone)
		return dataclasses.replace(
			self, patches=tuple(p for p in self.patches if p not in dropped),
			files=files, contents={f: self.contents[f] for f in files})

	def local(self) -> List[str]:
		"""patches/local: the patches that are the project's own tools
		(the replay benchmark), kept out of the series for upstream. They
		come last in the series."""
		path = self.root / 'patches' / 'local'
		if not path.is_file():
			return []
		names = [l.split('#', 1)[0].strip() for l in path.read_text().splitlines()]
		names = [n for n in names if n]
		order = [p.name for p in self.patches]
		unknown = [n for n in names if n not in order]
		if unknown:
			raise OverlayError(f'{path}: not in the series: {", ".join(unknown)}')
		if sorted(order.index(n) for n in names) != \
		   list(range(len(order) - len(names), len(order))):
			raise OverlayError(f'{path}: the local patches must come last '
					   'in the series')
		return names

	def expected(self) -> List[Entry]:
		"""The list of the tests each fix stands for (expected.py)."""
		path = self.root / 'expected'
		return load_expected(path) if path.is_file() else []

	def failing_here(self) -> List[Tuple[str, str]]:
		"""The tests the kernel fails with the whole series, by design or
		for want of a later fix, each with the reason: the list's entries
		that no before-fix tree lacks (not the tests of a fix patch of
		the series, nor those of a part of a change a revert takes out,
		which the kernel has)."""
		lacked = {w for t in self.before_fix_trees() for w in t.lacking}
		return [(e.pattern, e.why) for e in self.expected()
			if e.kind == Kind.FAILS and e.why not in lacked and
			not e.why.endswith('.patch')]

	def fixes(self) -> Dict[str, Tuple[str, ...]]:
		"""The patches of the series that are fixes, in the order the
		expected list names them, each with the tests that need it."""
		names = {p.name for p in self.patches}
		fixes: Dict[str, Tuple[str, ...]] = {}
		for e in self.expected():
			if e.kind == Kind.FAILS and e.why.endswith('.patch'):
				if e.why not in names:
					raise OverlayError(f'{e.where}: {e.why} is not '
							   'in the series')
				fixes[e.why] = fixes.get(e.why, ()) + (e.pattern,)
		return fixes

	def reverts(self) -> List[Patch]:
		"""reverts/*.patch, each with a "Reverts: FIX ..." line naming
		the fixes of the expected list it takes out."""
		named = {e.why for e in self.expected() if e.kind == Kind.FAILS}
		out = [Patch.from_file(p)
		       for p in sorted((self.root / 'reverts').glob('*.patch'))]
		for p in out:
			if not p.field('Reverts'):
				raise OverlayError(f'{p.path}: no "Reverts: FIX ..." line')
			unknown = [f for f in p.field('Reverts') if f not in named]
			if unknown:
				raise OverlayError(
					f'{p.path}: {", ".join(unknown)}: no test of '
					f'{self.root / "expected"} stands for it')
		return out

	def before_fix_trees(self) -> List[BeforeFix]:
		"""The trees that lack fixes, the one that lacks them all last:
		each revert, or else each fix patch left out alone and then all
		of them."""
		reverts = self.reverts()
		if reverts:
			trees = [BeforeFix(f'revert {Path(p.name).stem}',
					   tuple(p.field('Reverts')), revert=p)
				 for p in reverts]
			return sorted(trees, key=lambda t: len(t.lacking))
		fixes = tuple(self.fixes())
		trees = [BeforeFix(f'without {n.split("-")[0]}', (n,), (n,))
			 for n in fixes]
		if len(fixes) > 1:
			trees.append(BeforeFix(
				'without ' + ' '.join(n.split('-')[0] for n in fixes),
				fixes, fixes))
		return trees

	def pins_functions(self) -> bool:
		"""Whether the overlay names the functions its suites pin
		(`pinned`), which generated mutants are made from."""
		return (self.root / 'pinned').is_file()

	def mutants(self) -> List[Patch]:
		return [Patch.from_file(p)
			for p in sorted((self.root / 'mutants').glob('*.patch'))]

	def digest(self, extra: Sequence[Patch] = ()) -> str:
		"""A hash of everything that decides the overlay's result."""
		h = hashlib.sha256()
		for p in list(self.patches) + list(extra):
			h.update(p.name.encode() + b'\0' + p.text + b'\0')
		for f in self.files:
			h.update(f.encode() + b'\0' + self.contents[f] + b'\0')
		return h.hexdigest()


def _overlay_files(root: Path) -> Iterable[str]:
	for dirpath, dirnames, filenames in os.walk(root):
		rel = Path(dirpath).relative_to(root)
		if rel == Path('.'):
			dirnames[:] = [d for d in dirnames if d not in _NON_FILE_DIRS]
		dirnames[:] = [d for d in dirnames if d != '__pycache__']
		for f in filenames:
			if rel == Path('.') and f in _NON_FILE_FILES:
				continue
			yield str(rel / f) if rel != Path('.') else f


_HUNK_RE = re.compile(r'^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@')


def split_appends(text: bytes) -> Tuple[bytes, Dict[str, bytes]]:
	"""A patch without the hunks that only append to the end of a file,
	and the lines each such hunk appends, by file.

	Such a hunk (context, then added lines, no context after them) is how
	a suite hooks into the file it tests: an include line at its end. Its
	context is the file's last lines, which change from release to
	release; the lines are appended whatever they are.
	"""
	blocks = re.split(r'(?m)^(?=diff --git )', text.decode())
	kept = blocks[:1]
	appends: Dict[str, bytes] = {}
	for block in blocks[1:]:
		m = _DIFF_GIT_RE.match(block.split('\n', 1)[0])
		parts = re.split(r'(?m)^(?=@@ )', block)
		last = parts[-1].rstrip('\n').split('\n')
		body = last[1:]
		n_ctx = next((i for i, line in enumerate(body)
			      if not line.startswith(' ')), len(body))
		added = body[n_ctx:]
		if (not m or len(parts) < 2 or not _HUNK_RE.match(last[0]) or
		    '\nnew file mode' in parts[0] or n_ctx == 0 or not added or
		    not all(line.startswith('+') for line in added)):
			kept.append(block)
			continue
		appends[m.group(2)] = ''.join(line[1:] + '\n'
					      for line in added).encode()
		if len(parts) > 2:
			kept.append(''.join(parts[:-1]))
	return ''.join(kept).encode(), appends


def apply_patch(patch: Patch, workdir: Path, reverse: bool = False) -> None:
	"""Applies one patch to the files in workdir: strictly (no fuzz),
	but for appends to the end of a file (split_appends())."""
	text, appends = split_appends(patch.text)
	hunks = re.search(rb'(?m)^(diff --git |@@ )', text)
	if not hunks and not appends:
		if patch.new_files:
			return  # a commit that only adds files: written from kernel/
		# Never a silent no-op: a mutant that changes nothing survives.
		raise PatchFailed(patch, [], 'it has no hunk to apply')
	if reverse:
		_apply_appends(patch, workdir, appends, reverse)
	if hunks:
		cmd = ['git', 'apply', '-p1', '--whitespace=nowarn']
		if reverse:
			cmd.append('-R')
		# Never let git find a repository around the scratch directory.
		env = dict(os.environ,
			   GIT_CEILING_DIRECTORIES=str(workdir.parent))
		proc = subprocess.run(cmd, input=text, cwd=workdir, env=env,
				      capture_output=True)
		if proc.returncode != 0:
			err = proc.stderr.decode(errors='replace')
			raise PatchFailed(patch, _failed_files(err), err)
	if not reverse:
		_apply_appends(patch, workdir, appends, reverse)


def _apply_appends(patch: Patch, workdir: Path, appends: Dict[str, bytes],
		   reverse: bool) -> None:
	"""Appends each file's lines to its end, or takes them off it again;
	refuses a file that already ends with them (or, reversing, does
	not)."""
	for name, lines in appends.items():
		path = workdir / name
		if not path.is_file():
			raise PatchFailed(patch, [name], f'{name}: no such file')
		data = path.read_bytes()
		if data.endswith(lines) != reverse:
			what = 'does not end' if reverse else 'already ends'
			raise PatchFailed(patch, [name],
					  f'{name} {what} with the lines the '
					  'patch appends')
		if reverse:
			path.write_bytes(data[:len(data) - len(lines)])
		elif data and not data.endswith(b'\n'):
			raise PatchFailed(patch, [name],
					  f'{name}: no newline at its end')
		else:
			path.write_bytes(data + lines)


class PatchFailed(OverlayError):
	"""A patch does not apply: names the patch and the files."""

	def __init__(self, patch: Patch, files: List[str], detail: str) -> None:
		self.patch = patch
		self.files = files
		where = ', '.join(files) if files else 'the tree'
		super().__init__(f'{patch.name} does not apply to {where}\n'
				 f'{detail.rstrip()}')


def _failed_files(stderr: str) -> List[str]:
	files: List[str] = []
	for line in stderr.splitlines():
		for regex in _FAILED_FILE_RES:
			m = regex.match(line.strip())
			if m and m.group(1) not in files:
				files.append(m.group(1))
	return files


def _apply_series(patches: Sequence[Patch], base: Dict[str, bytes],
		  reverse: bool = False) -> Dict[str, bytes]:
	"""Applies patches to the given file contents in a scratch directory."""
	with tempfile.TemporaryDirectory(prefix='mm-kunit-stage-') as tmp:
		work = Path(tmp) / 'tree'
		for name, data in base.items():
			dest = work / name
			dest.parent.mkdir(parents=True, exist_ok=True)
			dest.write_bytes(data)
		work.mkdir(exist_ok=True)
		for patch in (reversed(patches) if reverse else patches):
			apply_patch(patch, work, reverse=reverse)
		return {name: (work / name).read_bytes() for name in base}


def is_kernel_tree(tree: Path) -> bool:
	return ((tree / 'Makefile').is_file() and (tree / 'mm').is_dir() and
		(tree / 'tools/testing/kunit/kunit.py').is_file())


def check_kernel_tree(tree: Path) -> None:
	if not tree.is_dir():
		raise OverlayError(f'{tree}: no such directory')
	if not is_kernel_tree(tree):
		raise OverlayError(
			f'{tree}: not a kernel source tree (no Makefile, mm/ or '
			'tools/testing/kunit/kunit.py)')


def _read_base(tree: Path, patches: Sequence[Patch],
	       new_files: Optional[Dict[str, bytes]] = None) -> Dict[str, bytes]:
	"""The files the patches touch: from the tree, or, for a file an
	earlier line of the series adds (and the tree does not have yet),
	from the overlay."""
	base: Dict[str, bytes] = {}
	for patch in patches:
		for name in patch.touched:
			if name in base:
				continue
			path = tree / name
			if not path.is_file() and new_files and name in new_files:
				base[name] = new_files[name]
				continue
			if not path.is_file():
				raise PatchFailed(patch, [name],
						  f'{name}: no such file in {tree}')
			base[name] = path.read_bytes()
	return base


def stage(overlay: Overlay, tree: Path, extra: Sequence[Patch] = (),
	  already_applied: bool = False) -> Dict[str, bytes]:
	"""Computes every file the overlay writes into tree, without writing.

	tree must be without the overlay, unless already_applied is set: then
	the series is first taken out again (reverse-applied), which fails if
	the tree does not hold exactly this series.

	Raises OverlayError, naming the patch and the file, if anything does
	not apply or a new file of the overlay already exists in the tree.
	"""
	check_kernel_tree(tree)
	patches = list(overlay.patches) + list(extra)
	base = _read_base(tree, patches, overlay.contents)
	if already_applied:
		base = _apply_series(overlay.patches, base, reverse=True)
	result = _apply_series(patches, base)
	for name in overlay.files:
		if not already_applied and (tree / name).exists():
			raise OverlayError(
				f'{tree / name} already exists: the overlay only adds '
				'new files; edits to existing files go in a patch')
		# A later patch of the series may edit a file an earlier adds.
		result.setdefault(name, overlay.contents[name])
	return result


def stage_detecting_applied(overlay: Overlay, tree: Path,
			    extra: Sequence[Patch] = ()) -> Tuple[Dict[str, bytes], bool]:
	"""Like stage(), but also accepts a tree that already has the series.

	Returns the files and whether the series was already applied.
	"""
	try:
		return stage(overlay, tree, extra), False
	except PatchFailed as first:
		try:
			return stage(overlay, tree, extra, already_applied=True), True
		except OverlayError:
			raise first from None


def _write_atomic(path: Path, data: bytes, mode: Optional[int]) -> None:
	path.parent.mkdir(parents=True, exist_ok=True)
	fd, tmp = tempfile.mkstemp(prefix='.mm-kunit-', dir=path.parent)
	try:
		with os.fdopen(fd, 'wb') as f:
			f.write(data)
		os.chmod(tmp, mode if mode is not None else 0o644)
		os.replace(tmp, path)
	except BaseException:
		os.unlink(tmp)
		raise


def sync_files(tree: Path, desired: Dict[str, Optional[bytes]]) -> List[str]:
	"""Makes the files of tree hold the desired contents.

	None means the file must not exist. Files that already hold the desired
	content are not written, so their timestamps stay. If a write fails,
	the files already written are put back as they were.
	"""
	undo: List[Tuple[Path, Optional[bytes], Optional[int]]] = []
	changed: List[str] = []
	try:
		for name in sorted(desired):
			path = tree / name
			old = path.read_bytes() if path.is_file() else None
			new = desired[name]
			if old == new:
				continue
			mode = path.stat().st_mode & 0o7777 if old is not None else None
			# Each write is atomic: one that fails leaves the old file.
			if new is None:
				path.unlink()
			else:
				_write_atomic(path, new, mode)
			undo.append((path, old, mode))
			changed.append(name)
	except BaseException:
		for path, old, mode in reversed(undo):
			try:
				if old is None:
					path.unlink(missing_ok=True)
				else:
					_write_atomic(path, old, mode)
			except OSError:
				pass  # keep restoring the others
		raise
	return changed


def write_files(overlay: Overlay, dest: Path, names: Iterable[str]) -> None:
	"""Writes the named new files of the overlay under dest."""
	for name in names:
		(dest / name).parent.mkdir(parents=True, exist_ok=True)
		(dest / name).write_bytes(overlay.contents[name])
