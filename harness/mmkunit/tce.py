# SPDX-License-Identifier: GPL-2.0
"""Trivial compiler equivalence: a mutant whose translation unit compiles
to the same object code as the original's cannot be told apart by any
test, so it is neither built into a kernel nor run.

The translation unit is compiled with the exact command kbuild used for it
(its .o.cmd file), from a copy of the mutated source outside the tree (so
that mutants compile side by side), into a file of its own, and compared
with the original after the debug information is stripped: what is left
is the code, the data and their relocations. A mutant never moves a line
(mutagen.py), so the line numbers that WARN_ON() and BUG_ON() record are
the same.

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
import hashlib
import re
import shlex
import shutil
import struct
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Dict, List, Optional, Tuple


class Compiled(enum.Enum):
	SAME = 'same object code'
	DIFFERENT = 'different object code'
	FAILED = 'does not compile'


def _saved(build_dir: Path, obj: str, key: str) -> str:
	"""A line kbuild saved for obj in its .o.cmd file: the command
	(savedcmd_) or the source (source_)."""
	cmd_file = build_dir / Path(obj).parent / f'.{Path(obj).name}.cmd'
	text = cmd_file.read_text() if cmd_file.is_file() else ''
	m = re.search(rf'^{key}_\S+ := (.*)', text, re.M)
	if not m:
		raise FileNotFoundError(f'{cmd_file}: no saved {key} (is '
					f'{obj} built?)')
	return m.group(1).strip()


def compile_command(build_dir: Path, obj: str) -> str:
	"""kbuild's command for obj (e.g. mm/filemap.o), run in build_dir."""
	return _saved(build_dir, obj, 'savedcmd')


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


def _from_copy(build_dir: Path, obj: str, text: bytes,
	       root: Path) -> Tuple[Optional[bytes], str]:
	"""obj's unit compiled from text, a copy of its source written under
	root at the source's place in the tree, not from the tree: compiles
	of one unit may then run side by side, and the tree is never
	touched. The copy reads what the source reads: quoted includes are
	looked for beside the source (-iquote) before the include path, as
	for the source itself, and __FILE__ is the source's (the prefix map
	kbuild gives the tree, given the copy's root)."""
	command = compile_command(build_dir, obj)
	source = _saved(build_dir, obj, 'source')
	copy = root / _relative(source, obj)
	copy.parent.mkdir(parents=True, exist_ok=True)
	copy.write_bytes(text)
	flags = (f'-iquote {shlex.quote(str(Path(source).parent))} '
		 f'-fmacro-prefix-map={shlex.quote(str(root))}/=')
	cmd, n = re.subn(rf'(?<=\s){re.escape(source)}(?=\s|$)',
			 lambda _: f'{flags} {shlex.quote(str(copy))}', command)
	if n != 1:
		raise RuntimeError(f'{obj}: {source} not once in its command')
	return _object_code(build_dir, cmd, obj, root / 'unit.o')


def _relative(source: str, obj: str) -> str:
	"""The source's path in its tree: obj's, as a .c file."""
	rel = str(Path(obj).with_suffix('.c'))
	if source != rel and not source.endswith('/' + rel):
		raise RuntimeError(f'{obj}: its source is {source}')
	return rel


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


# Copies at this many places in turn, for a unit whose object names its
# own path (Comparer.original()).
PLACES = 4


class Comparer:
	"""Compiles translation units of one build directory and compares
	them with their original, which is compiled once per unit. compare()
	compiles from a copy (_from_copy()): several threads may call it at
	once, while the tree stays as it is. Each copy is written under
	scratch at a path its key names, the same in every run, so that
	ccache finds a unit compiled before (its hash covers the path); a
	temporary directory if scratch is None.

	KASAN's descriptors of a unit's globals name the unit's source by
	its path, which no prefix map reaches, so there a copy's object
	never is the tree's: such a unit's copies are compiled at one of
	PLACES places, chosen by key, and compared with the original
	compiled at the same place."""

	def __init__(self, build_dir: Path,
		     scratch: Optional[Path] = None) -> None:
		self.build_dir = build_dir
		self._original: Dict[str, bytes] = {}
		# The units whose objects name their path: their source, and
		# the original's object at each place it was compiled at.
		self._text: Dict[str, bytes] = {}
		self._placed: Dict[Tuple[str, int], bytes] = {}
		self._places = [threading.Lock() for _ in range(PLACES)]
		self._tmp = tempfile.TemporaryDirectory(prefix='mm-kunit-tce-')
		self._scratch = scratch or Path(self._tmp.name)

	def has_original(self, obj: str) -> bool:
		return obj in self._original

	def original(self, obj: str, text: bytes) -> None:
		"""Compiles obj from the tree as it is now, the original, whose
		source is text: compiled from a copy of it, the object must be
		the same, or the copies would tell nothing; unless the tree's
		object names its source's path, and the copy's its own."""
		code, why = _object_code(self.build_dir,
					 compile_command(self.build_dir, obj), obj,
					 Path(self._tmp.name) / 'orig.o')
		if code is None:
			raise RuntimeError(f'{obj} does not compile unmutated: {why}')
		copied, why = self._compile(obj, text, 'original')
		source = _saved(self.build_dir, obj, 'source')
		if copied != code:
			copy = self._root(obj, 'original') / _relative(source, obj)
			if copied is None or source.encode() not in code or \
			   str(copy).encode() not in copied or \
			   _code(copied) != _code(code):
				raise RuntimeError(
					f'{obj}: compiled from a copy of its source, its '
					f'object is not the one the tree gives {why}')
			self._text[obj] = text
		self._original[obj] = code

	def compare(self, obj: str, text: bytes,
		    key: str) -> Tuple[Compiled, str]:
		"""Compiles obj's unit from text, its source mutated; key names
		the mutant, one key a thread at a time."""
		if obj not in self._original:
			raise KeyError(f'{obj}: no original compiled')
		if obj in self._text:
			code, why, original = self._compile_placed(obj, text, key)
		else:
			(code, why), original = self._compile(obj, text, key), \
				self._original[obj]
		if code is None:
			return Compiled.FAILED, why
		return (Compiled.SAME if code == original
			else Compiled.DIFFERENT), ''

	def _compile_placed(self, obj: str, text: bytes, key: str
			    ) -> Tuple[Optional[bytes], str, bytes]:
		"""Compiles text, and the original if it has not been, at the
		place key falls to: the object, the compiler's complaint, the
		original's object there."""
		place = int(hashlib.sha1(key.encode()).hexdigest(), 16) % PLACES
		at = f'place {place}'
		with self._places[place]:
			original = self._placed.get((obj, place))
			if original is None:
				original, why = self._compile(obj, self._text[obj], at)
				if original is None:
					raise RuntimeError(f'{obj} does not compile '
							   f'unmutated: {why}')
				self._placed[obj, place] = original
			code, why = self._compile(obj, text, at)
		return code, why, original

	def _root(self, obj: str, key: str) -> Path:
		return self._scratch / hashlib.sha1(
			f'{obj} {key}'.encode()).hexdigest()[:16]

	def _compile(self, obj: str, text: bytes,
		     key: str) -> Tuple[Optional[bytes], str]:
		root = self._root(obj, key)
		shutil.rmtree(root, ignore_errors=True)
		try:
			return _from_copy(self.build_dir, obj, text, root)
		finally:
			shutil.rmtree(root, ignore_errors=True)

	def close(self) -> None:
		self._tmp.cleanup()


def _code(elf: bytes) -> Dict[str, bytes]:
	"""The executable sections of a relocatable ELF object, by name:
	the code, without the data that may name a path."""
	fmt = '<' if elf[5] == 1 else '>'
	if elf[4] == 2:
		shoff, = struct.unpack_from(fmt + 'Q', elf, 0x28)
		shentsize, shnum, shstrndx = struct.unpack_from(fmt + 'HHH', elf, 0x3a)
		entry = fmt + 'IIQQQQ'
	else:
		shoff, = struct.unpack_from(fmt + 'I', elf, 0x20)
		shentsize, shnum, shstrndx = struct.unpack_from(fmt + 'HHH', elf, 0x2e)
		entry = fmt + 'IIIIII'
	heads = [struct.unpack_from(entry, elf, shoff + i * shentsize)
		 for i in range(shnum)]
	names = heads[shstrndx]
	out = {}
	for name, kind, flags, _, offset, size in heads:
		if kind == 1 and flags & 4:	# SHT_PROGBITS, SHF_EXECINSTR
			at = names[4] + name
			out[elf[at:elf.index(b'\0', at)].decode()] = \
				elf[offset:offset + size]
	return out


def object_of(path: str) -> Optional[str]:
	"""The object a source file compiles to; None for a header, which
	many units include (its mutants are built and run, unless the
	configuration leaves their line out: kconfig.py)."""
	return str(Path(path).with_suffix('.o')) if path.endswith('.c') else None
