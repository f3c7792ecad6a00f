# SPDX-License-Identifier: GPL-2.0
"""Trivial compiler equivalence: a mutant whose translation unit compiles
to the same object code as the original's cannot be told apart by any
test, so it is neither built into a kernel nor run.

The translation unit is compiled with the exact command kbuild used for it
(its .o.cmd file), into a file of its own, and compared with the original
after the debug information is stripped: what is left is the code, the
data and their relocations. A mutant never moves a line (mutagen.py), so
the line numbers that WARN_ON() and BUG_ON() record are the same.

The names of local symbols are canonicalised before the comparison: a
local symbol is reached only through the relocations that point at it, so
its name is not part of what the code does, but it often carries a
counter. Deleting a min() or a max() takes a few values of __COUNTER__
away, which renames every later __UNIQUE_ID_*N and __initcall__kmod_*
symbol of the unit (and gcc numbers function-local statics such as
__already_done.N) while the code stays byte for byte the same. Strings
are compared as they are: a KUnit assertion that stringifies min() or
READ_ONCE() stores the expansion, counters and all, so the suites
compute such values into a local first.
"""

from __future__ import annotations

import enum
import re
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple


class Compiled(enum.Enum):
	SAME = 'same object code'
	DIFFERENT = 'different object code'
	FAILED = 'does not compile'


def compile_command(build_dir: Path, obj: str) -> str:
	"""kbuild's command for obj (e.g. mm/filemap.o), run in build_dir."""
	cmd_file = build_dir / Path(obj).parent / f'.{Path(obj).name}.cmd'
	text = cmd_file.read_text() if cmd_file.is_file() else ''
	m = re.match(r'savedcmd_\S+ := (.*)', text)
	if not m:
		raise FileNotFoundError(f'{cmd_file}: no saved command (is '
					f'{obj} built?)')
	return m.group(1).strip()


def _object_code(build_dir: Path, command: str, obj: str,
		 out: Path) -> Tuple[Optional[bytes], str]:
	"""Compiles into out with command; the stripped object, or None and
	the compiler's complaint."""
	dep = out.with_suffix('.d')
	cmd = re.sub(r'-Wp,-MMD,\S+', f'-Wp,-MMD,{shlex.quote(str(dep))}', command)
	cmd = re.sub(rf'(?<=\s){re.escape(obj)}(?=\s|$)', shlex.quote(str(out)),
		     cmd)
	proc = subprocess.run(['sh', '-c', cmd], cwd=build_dir, text=True,
			      capture_output=True)
	if proc.returncode != 0:
		return None, (proc.stderr or proc.stdout).strip()
	stripped = out.with_suffix('.stripped')
	subprocess.run(['objcopy', '--strip-debug', '--remove-section=.comment',
			str(out), str(stripped)], check=True, capture_output=True)
	names = out.with_suffix('.names')
	names.write_text(''.join(f'{name} .Ltce{i}\n' for i, name in
				 enumerate(_local_names(stripped))))
	subprocess.run(['objcopy', f'--redefine-syms={names}', str(stripped)],
		       check=True, capture_output=True)
	return stripped.read_bytes(), ''


def _local_names(obj: Path) -> List[str]:
	"""The names of obj's local functions and data, in symbol table
	order, each once."""
	out = subprocess.run(['readelf', '-sW', str(obj)], check=True,
			     capture_output=True, text=True).stdout
	names: Dict[str, None] = {}
	for line in out.splitlines():
		f = line.split()
		# Num: Value Size Type Bind Vis Ndx Name
		if (len(f) == 8 and f[0].endswith(':') and f[4] == 'LOCAL' and
		    f[3] in ('OBJECT', 'FUNC', 'NOTYPE')):
			names.setdefault(f[7])
	return list(names)


def compiles(build_dir: Path, obj: str) -> Tuple[bool, str]:
	"""Whether obj's unit compiles as the tree is now, with kbuild's
	command (its object thrown away); the compiler's complaint if not,
	its columns counted in bytes."""
	with tempfile.TemporaryDirectory(prefix='mm-kunit-cc-') as tmp:
		out = Path(tmp) / 'unit.o'
		command = compile_command(build_dir, obj)
		# Columns in bytes, not in tabs expanded to 8 (schemata.blamed()).
		cmd = re.sub(r'-Wp,-MMD,\S+', '-fdiagnostics-column-unit=byte',
			     command)
		cmd = re.sub(rf'(?<=\s){re.escape(obj)}(?=\s|$)',
			     shlex.quote(str(out)), cmd)
		proc = subprocess.run(['sh', '-c', cmd], cwd=build_dir,
				      text=True, capture_output=True)
	return proc.returncode == 0, (proc.stderr or proc.stdout).strip()


class Comparer:
	"""Compiles translation units of one build directory and compares
	them with their original, which is compiled once per unit."""

	def __init__(self, build_dir: Path) -> None:
		self.build_dir = build_dir
		self._original: Dict[str, bytes] = {}
		self._tmp = tempfile.TemporaryDirectory(prefix='mm-kunit-tce-')

	def has_original(self, obj: str) -> bool:
		return obj in self._original

	def original(self, obj: str) -> None:
		"""Compiles obj from the tree as it is now: the original."""
		code, why = _object_code(self.build_dir,
					 compile_command(self.build_dir, obj), obj,
					 Path(self._tmp.name) / 'orig.o')
		if code is None:
			raise RuntimeError(f'{obj} does not compile unmutated: {why}')
		self._original[obj] = code

	def compare(self, obj: str) -> Tuple[Compiled, str]:
		"""Compiles obj from the tree as it is now (a mutant applied)."""
		if obj not in self._original:
			raise KeyError(f'{obj}: no original compiled')
		code, why = _object_code(self.build_dir,
					 compile_command(self.build_dir, obj), obj,
					 Path(self._tmp.name) / 'mutant.o')
		if code is None:
			return Compiled.FAILED, why
		return (Compiled.SAME if code == self._original[obj]
			else Compiled.DIFFERENT), ''

	def close(self) -> None:
		self._tmp.cleanup()


def object_of(path: str) -> Optional[str]:
	"""The object a source file compiles to; None for a header, which
	many units include (its mutants are built and run, unless the
	configuration leaves their line out: kconfig.py)."""
	return str(Path(path).with_suffix('.o')) if path.endswith('.c') else None
