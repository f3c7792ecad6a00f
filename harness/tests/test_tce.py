# SPDX-License-Identifier: GPL-2.0
"""Trivial compiler equivalence (tce.py): a unit compiled with kbuild's
saved command, and compared with its original."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mmkunit import tce


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
	src = tmp_path / 'src/mm'
	src.mkdir(parents=True)
	build = tmp_path / 'build/mm'
	build.mkdir(parents=True)
	c = src / 'x.c'
	c.write_text('int f(int a)\n{\n\treturn a < 3 ? 1 : 0;\n}\n')
	(build / '.x.o.cmd').write_text(
		f'savedcmd_mm/x.o := gcc -Wp,-MMD,mm/.x.o.d -O2 -g -c -o mm/x.o {c}\n'
		'\nsource_mm/x.o := x\n')
	comparer = tce.Comparer(tmp_path / 'build')
	comparer.original('mm/x.o')
	c.write_text('int f(int a)\n{\n\treturn a <= 2 ? 1 : 0;\n}\n')
	assert comparer.compare('mm/x.o')[0] == tce.Compiled.SAME
	c.write_text('int f(int a)\n{\n\treturn a <= 3 ? 1 : 0;\n}\n')
	assert comparer.compare('mm/x.o')[0] == tce.Compiled.DIFFERENT
	c.write_text('int f(int a)\n{\n\treturn a <= ;\n}\n')
	same, why = comparer.compare('mm/x.o')
	assert same == tce.Compiled.FAILED and 'error' in why
	assert not (build / 'x.o').exists()
	comparer.close()


@pytest.mark.skipif(not shutil.which('gcc') or not shutil.which('readelf'),
		    reason='needs gcc and binutils')
def test_tce_ignores_counters_in_local_names(tmp_path: Path) -> None:
	"""A change that only shifts __COUNTER__, and so renames a later local
	symbol, is SAME; a renamed global symbol is DIFFERENT."""
	src = tmp_path / 'src/mm'
	src.mkdir(parents=True)
	build = tmp_path / 'build/mm'
	build.mkdir(parents=True)
	c = src / 'x.c'
	unit = ('#define ID(a, b) a##b\n'
		'#define NAMED(n) ID(counted_, n)\n'
		'#define DEFINE(n, fn) static int NAMED(n) = 4; '
		'int *fn(void) { return &NAMED(n); }\n'
		'%s'
		'DEFINE(__COUNTER__, %s)\n')
	(build / '.x.o.cmd').write_text(
		f'savedcmd_mm/x.o := gcc -Wp,-MMD,mm/.x.o.d -O2 -g -c -o mm/x.o {c}\n')
	comparer = tce.Comparer(tmp_path / 'build')
	c.write_text(unit % ('', 'f'))
	comparer.original('mm/x.o')
	c.write_text(unit % ('enum { SKIPPED = __COUNTER__ };\n', 'f'))
	assert comparer.compare('mm/x.o')[0] == tce.Compiled.SAME
	c.write_text(unit % ('', 'g'))
	assert comparer.compare('mm/x.o')[0] == tce.Compiled.DIFFERENT
	comparer.close()
