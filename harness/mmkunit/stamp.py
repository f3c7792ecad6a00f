# SPDX-License-Identifier: GPL-2.0
"""Whether a build directory holds the kernel a run would build.

kunit.py run always runs make, whose walk of the tree takes seconds when
there is nothing to build. After each build that booted, the harness
writes a stamp into the build directory: what went into the build (the
series, the configuration, make's options) and the size and time of
what came out of it (.config, .version, the kernel image). A run whose
tree the harness has just checked (nothing written into it), with the
same inputs, the outputs left as they were and no file of the tree
newer than the stamp, runs that kernel with kunit.py exec. Anything else
builds: a stamp is removed before each build, so a build that fails or
is stopped leaves none, and a build by another command (a mutant's)
changes the outputs.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

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


def _outputs(build_dir: Path, arch: str) -> Optional[Dict[str, List[int]]]:
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
	"""Before a build: whatever it leaves, it is not what was stamped."""
	(build_dir / STAMP).unlink(missing_ok=True)


def record(build_dir: Path, arch: str, digest: Optional[str]) -> None:
	"""After a build that booted: the build directory holds the kernel of
	digest's inputs."""
	outputs = _outputs(build_dir, arch) if digest else None
	if outputs:
		(build_dir / STAMP).write_text(json.dumps(
			{'inputs': digest, 'outputs': outputs}) + '\n')


def holds(build_dir: Path, src: Path, arch: str,
	  digest: Optional[str]) -> bool:
	"""Whether build_dir holds the kernel a build of digest's inputs
	from src makes, as it was left after that build."""
	path = build_dir / STAMP
	if not digest or not path.is_file():
		return False
	try:
		stamp = json.loads(path.read_text())
	except ValueError:
		return False
	if stamp.get('inputs') != digest or \
	   stamp.get('outputs') != _outputs(build_dir, arch):
		return False
	newer = subprocess.run(['find', str(src), '-newer', str(path),
				'-type', 'f', '-print', '-quit'],
			       capture_output=True, text=True)
	return newer.returncode == 0 and not newer.stdout
