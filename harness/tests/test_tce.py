# SPDX-License-Identifier: GPL-2.0
"""Trivial compiler equivalence (tce.py): a unit compiled with kbuild's
saved command, and compared with its original."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mmkunit import tce


def unit(tmp_path: Path, text: str, flags: str = '-O2 -g') -> Path:
	"""mm/x.c of a tree under tmp_path, holding text, and its build
	directory's saved command for mm/x.o; the source's path."""
	src = tmp_path / 'src/mm'
	src.mkdir(parents=True)
	(tmp_path / 'build/mm').mkdir(parents=True)
	c = src / 'x.c'
	c.write_text(text)
	(tmp_path / 'build/mm/.x.o.cmd').write_text(
		f'savedcmd_mm/x.o := gcc -Wp,-MMD,mm/.x.o.d {flags} -c -o mm/x.o '
		f'{c}\nsource_mm/x.o := {c}\n')
	return c


def test_compile_command_is_kbuilds_saved_one(tmp_path: Path) -> None:
	(tmp_path / 'mm').mkdir()
	(tmp_path / 'mm/.x.o.cmd').write_text(
		'savedcmd_mm/x.o := gcc -O2 -c -o mm/x.o ../src/mm/x.c \n'
		'\nsource_mm/x.o := ../src/mm/x.c\n')
	assert tce.compile_command(tmp_path, 'mm/x.o') == \
		'gcc -O2 -c -o mm/x.o ../src/mm/x.c'
	with pytest.raises(FileNotFoundError, match='is mm/y.o built'):
		tce.compile_command(tmp_path, 'mm/y.o')


def test_a_header_has_no_object_of_its_own() -> None:
	assert tce.object_of('mm/filemap.c') == 'mm/filemap.o'
	assert tce.object_of('mm/tests/filemap_kunit.h') is None


@pytest.mark.skipif(not shutil.which('gcc') or not shutil.which('objcopy'),
		    reason='needs gcc and binutils')
def test_tce_tells_same_code_from_different(tmp_path: Path) -> None:
	"""The unit is compiled with its saved kbuild command; a change that
	compiles to the same code is SAME, one that does not, DIFFERENT."""
	c = unit(tmp_path, 'int f(int a)\n{\n\treturn a < 3 ? 1 : 0;\n}\n')
	build = tmp_path / 'build/mm'
	comparer = tce.Comparer(tmp_path / 'build')
	comparer.original('mm/x.o', c.read_bytes())

	def compare(text: str) -> tce.Compiled:
		same, why = comparer.compare('mm/x.o', text.encode(), text)
		assert ('error' in why) == (same == tce.Compiled.FAILED)
		return same

	assert compare('int f(int a)\n{\n\treturn a <= 2 ? 1 : 0;\n}\n') == \
		tce.Compiled.SAME
	assert compare('int f(int a)\n{\n\treturn a <= 3 ? 1 : 0;\n}\n') == \
		tce.Compiled.DIFFERENT
	assert compare('int f(int a)\n{\n\treturn a <= ;\n}\n') == \
		tce.Compiled.FAILED
	assert not (build / 'x.o').exists()
	comparer.close()


@pytest.mark.skipif(not shutil.which('gcc') or not shutil.which('objcopy'),
		    reason='needs gcc and binutils')
def test_tce_compiles_a_copy_as_the_tree_would(tmp_path: Path) -> None:
	"""The copy a mutant is compiled from finds the headers beside the
	source first, and keeps the source's __FILE__; the tree is left as
	it is, and an original that only compiles in the tree is refused."""
	src = tmp_path / 'src'
	(src / 'mm').mkdir(parents=True)
	(src / 'include').mkdir()
	build = tmp_path / 'build/mm'
	build.mkdir(parents=True)
	(src / 'mm/internal.h').write_text('#define K 3\n')
	(src / 'include/internal.h').write_text('#define K 4\n')
	c = src / 'mm/x.c'
	c.write_text('#include "internal.h"\n'
		     'const char *f(int *a) { *a = K; return __FILE__; }\n')
	(build / '.x.o.cmd').write_text(
		f'savedcmd_mm/x.o := gcc -Wp,-MMD,mm/.x.o.d -I{src}/include '
		f'-fmacro-prefix-map={src}/= -O2 -c -o mm/x.o {c}\n'
		f'\nsource_mm/x.o := {c}\n')
	comparer = tce.Comparer(tmp_path / 'build')
	comparer.original('mm/x.o', c.read_bytes())
	assert comparer.compare('mm/x.o', c.read_bytes().replace(
		b'__FILE__', b'"mm/x.c"'), 'file')[0] == tce.Compiled.SAME
	assert comparer.compare('mm/x.o', c.read_bytes().replace(
		b'= K', b'= 4'), 'k')[0] == tce.Compiled.DIFFERENT
	assert c.read_bytes().startswith(b'#include')
	other = tce.Comparer(tmp_path / 'build')
	with pytest.raises(RuntimeError, match='from a copy'):
		other.original('mm/x.o', b'int g;\n')
	comparer.close()
	other.close()


@pytest.mark.skipif(not shutil.which('gcc') or not shutil.which('readelf'),
		    reason='needs gcc and binutils')
def test_tce_ignores_counters_in_local_names(tmp_path: Path) -> None:
	"""A change that only shifts __COUNTER__, and so renames a later local
	symbol, is SAME; a renamed global symbol is DIFFERENT."""
	text = ('#define ID(a, b) a##b\n'
		'#define NAMED(n) ID(counted_, n)\n'
		'#define DEFINE(n, fn) static int NAMED(n) = 4; '
		'int *fn(void) { return &NAMED(n); }\n'
		'%s'
		'DEFINE(__COUNTER__, %s)\n')
	c = unit(tmp_path, text % ('', 'f'))
	comparer = tce.Comparer(tmp_path / 'build')
	comparer.original('mm/x.o', c.read_bytes())
	assert comparer.compare('mm/x.o', (text % (
		'enum { SKIPPED = __COUNTER__ };\n', 'f')).encode(), 'counter'
	)[0] == tce.Compiled.SAME
	assert comparer.compare('mm/x.o', (text % ('', 'g')).encode(), 'g'
				)[0] == tce.Compiled.DIFFERENT
	comparer.close()


@pytest.mark.skipif(not shutil.which('gcc') or not shutil.which('objcopy'),
		    reason='needs gcc and binutils')
def test_tce_compares_a_unit_that_names_its_path_at_one_place(
		tmp_path: Path) -> None:
	"""Under KASAN a unit's object names its source's path, so no copy's
	object is the tree's: a mutant is compared with the original
	compiled at the place it is compiled at, and is the same if its code
	is. A copy that differs from the tree's in more than its path is
	still refused."""
	c = unit(tmp_path,
		 'int g[10];\nint *f(int a)\n{\n\treturn a < 3 ? g : 0;\n}\n',
		 '-fsanitize=address -O2')
	comparer = tce.Comparer(tmp_path / 'build')
	comparer.original('mm/x.o', c.read_bytes())
	for key in 'abcdefgh':
		assert comparer.compare('mm/x.o', c.read_bytes().replace(
			b'a < 3', b'a <= 2'), key)[0] == tce.Compiled.SAME
		assert comparer.compare('mm/x.o', c.read_bytes().replace(
			b'a < 3', b'a <= 3'), key)[0] == tce.Compiled.DIFFERENT
	other = tce.Comparer(tmp_path / 'build')
	with pytest.raises(RuntimeError, match='from a copy'):
		other.original('mm/x.o', b'int g[11];\n')
	comparer.close()
	other.close()
