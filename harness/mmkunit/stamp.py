# SPDX-License-Identifier: GPL-2.0
"""Whether a build directory holds the kernel a run would build.

kunit.py run always runs make, whose walk of the tree takes seconds when
there is nothing to build. After each build that booted, the harness
writes a stamp into the build directory: what went into the build (the
series, the configuration, make's options) and the size and time of
what came out of it (.config, .version, the kernel image). A run whose
tree the harness has just checked (nothing written into it), with the
same inputs, the outputs left as they were and no file of the tree
newer than the stamp, runs that kernel as it is. Anything else
builds: a stamp loses its kernel before each build (forget(); what the
.config was made from stays), so a build that fails or is stopped
leaves none, and a build by another command (a mutant's) changes the
outputs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from mmkunit import arches
from mmkunit import runner

STAMP = 'mm-kunit-build.json'


def inputs(source: str, series: str,
	   opts: runner.RunOptions) -> Optional[str]:
	"""A digest of what decides the kernel a build of opts makes from a
	tree of source with series on it (Overlay.digest()), or None if the
	harness cannot tell (kunit.py arguments of the user's own, an arch it
	does not know)."""
	if opts.kunit_args or opts.arch not in arches.ARCHES:
		return None
	h = hashlib.sha256()
	for part in (source, series, opts.arch, *opts.make_options, '\0',
		     *opts.kconfig_add, '\0'):
		h.update(part.encode() + b'\0')
	for config in opts.kunitconfigs:
		h.update(str(config).encode() + b'\0' + config.read_bytes() + b'\0')
	return h.hexdigest()


def config_inputs(source: str, opts: runner.RunOptions) -> Optional[str]:
	"""inputs() without the series: what decides the .config kunit.py
	makes, but for the files of the series (its Kconfig and kunitconfig),
	which a run that writes them configures anew (config_holds())."""
	return inputs(source, '', opts)


# What an edit may write into the tree and still leave the .config as it
# is: C sources and headers. Anything else (a Kconfig, a Makefile, a
# kunitconfig) has kunit.py configure the build again.
CONFIG_FREE = ('.c', '.h')


def outputs(build_dir: Path, arch: str) -> Optional[Dict[str, List[int]]]:
	"""The size and time of what a build of build_dir left (the
	.config, .version, the kernel image), or None if one is missing."""
	out = {}
	# What a build leaves, besides its objects: kunit.py exec boots the
	# image.
	for name in ('.config', '.version', arches.ARCHES[arch].image):
		path = build_dir / name
		if not path.is_file():
			return None
		st = path.stat()
		out[name] = [st.st_size, st.st_mtime_ns]
	return out


def forget(build_dir: Path) -> None:
	"""Before a build: whatever it leaves, it is not the kernel that was
	stamped (holds() fails). What the .config was configured from still
	is, from the same time on (config_holds() keeps working after a
	build that fails, so that the next edit is built with make)."""
	path = build_dir / STAMP
	stamp = _read(build_dir)
	made = stamp.get('outputs')
	if not (stamp.get('config') and isinstance(made, dict) and
		'.config' in made):
		path.unlink(missing_ok=True)
		return
	st = path.stat()
	path.write_text(json.dumps({'inputs': None, 'config': stamp['config'],
				    'outputs': {'.config': made['.config']}}) + '\n')
	os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def record(build_dir: Path, arch: str, digest: Optional[str],
	   config: Optional[str] = None, since: Optional[float] = None) -> None:
	"""After a build that booted: the build directory holds the kernel of
	digest's inputs, configured from config's (config_inputs()), built
	from the tree as it was at time since (when the build started: a
	file saved while it built or booted is newer than the stamp)."""
	left = outputs(build_dir, arch) if digest else None
	if left:
		path = build_dir / STAMP
		path.write_text(json.dumps(
			{'inputs': digest, 'config': config,
			 'outputs': left}) + '\n')
		if since is not None:
			os.utime(path, (since, since))


def _read(build_dir: Path) -> Dict[str, object]:
	"""build_dir's stamp, or {} if it has none it can read."""
	try:
		stamp: Dict[str, object] = json.loads(
			(build_dir / STAMP).read_text())
	except (OSError, ValueError):
		return {}
	return stamp


class TreeCheck:
	"""find over a tree for the files newer than a build's stamp, started
	at once and left to run while the caller does something else (boots
	the stamped kernel) until it asks for the answer. The bytecode
	kunit.py's Python writes beside it while a build runs does not count
	(the stamp takes the time the build started)."""

	def __init__(self, src: Path, build_dir: Path, walk: bool = True
		     ) -> None:
		"""Without walk, a check that finds no file newer, for a tree
		known to be as the last build left it (trees.PreparedTree.
		refreshed)."""
		# Niced: it runs beside a kernel booting or a compile, which
		# wait for no answer of its before they end. None once it has
		# answered, or if there is no walk.
		self._find = subprocess.Popen(
			['nice', '-n19', 'find', str(src), '-newer',
			 str(build_dir / STAMP), '-type', 'f', '!', '-name',
			 '*.pyc'],
			stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
			text=True) if walk else None
		self._newer: Optional[List[str]] = None if walk else []

	def _found(self) -> Optional[List[str]]:
		"""The newer files (absolute paths), None if find failed (no
		stamp)."""
		if self._find is not None:
			out, _ = self._find.communicate()
			if self._find.returncode == 0:
				self._newer = sorted(out.split())
			self._find = None
		return self._newer

	def none_newer(self) -> bool:
		"""Whether no file of the tree is newer than the stamp."""
		return self._found() == []

	def only(self, suffixes: Sequence[str]) -> bool:
		"""Whether every newer file's name ends in one of suffixes."""
		found = self._found()
		return found is not None and \
			all(f.endswith(tuple(suffixes)) for f in found)

	def files(self, suffixes: Sequence[str]) -> List[str]:
		"""The newer files whose names end in one of suffixes (none if
		there is no stamp)."""
		return [f for f in self._found() or []
			if f.endswith(tuple(suffixes))]


def not_newer(build_dir: Path, files: Sequence[Path]) -> List[str]:
	"""Those of files (written since the last build) that are not newer
	than build_dir's stamp, as paths: a file brought over from a
	user's tree keeps the time it has there (one restored from a backup,
	or saved while the last build ran), which neither find nor make
	then sees as changed."""
	try:
		since = (build_dir / STAMP).stat().st_mtime_ns
	except OSError:
		return []
	out = []
	for f in files:
		try:
			if f.stat().st_mtime_ns <= since:
				out.append(str(f))
		except OSError:
			pass  # deleted: make sees that
	return out


def config_held(build_dir: Path, arch: str, config: Optional[str],
		written: Optional[Sequence[str]]) -> bool:
	"""config_holds() but for its look at the tree: what it knows before
	find has answered."""
	stamp = _read(build_dir)
	left = outputs(build_dir, arch)
	made = stamp.get('outputs')
	return bool(config and written is not None and left and
		    stamp.get('config') == config and isinstance(made, dict) and
		    made.get('.config') == left['.config'] and
		    all(f.endswith(CONFIG_FREE) for f in written))


def config_holds(build_dir: Path, src: Path, arch: str,
		 config: Optional[str],
		 written: Optional[Sequence[str]],
		 newer: Optional[TreeCheck] = None) -> bool:
	"""Whether build_dir's .config is the one kunit.py would make now:
	the last build (stamped) was configured from config's inputs, its
	.config is as that build left it, the harness wrote only C sources
	and headers into src since (written; None: it cannot tell), and no
	other file of src is newer than the stamp (newer: that check of src,
	if the caller has started it). Then plain make builds what kunit.py
	run would."""
	if not config_held(build_dir, arch, config, written):
		return False
	if newer is None:
		newer = TreeCheck(src, build_dir)
	return newer.only(CONFIG_FREE)


def holding(build_dir: Path, src: Path, arch: str,
	    digest: Optional[str], walk: bool = True) -> Optional[TreeCheck]:
	"""If build_dir holds the kernel a build of digest's inputs makes, as
	it was left after that build, the check (started) that no file of
	src changed since, which must also pass; else None. Without walk,
	src is known to be as that build left it (a refreshed copy with
	nothing written): the check finds nothing."""
	stamp = _read(build_dir)
	if not digest or stamp.get('inputs') != digest or \
	   stamp.get('outputs') != outputs(build_dir, arch):
		return None
	return TreeCheck(src, build_dir, walk)


def holds(build_dir: Path, src: Path, arch: str,
	  digest: Optional[str]) -> bool:
	"""Whether build_dir holds the kernel a build of digest's inputs
	from src makes, as it was left after that build."""
	check = holding(build_dir, src, arch, digest)
	return check is not None and check.none_newer()
