# SPDX-License-Identifier: GPL-2.0
"""Prepared trees and their copies (trees.py)."""

from __future__ import annotations

import os
from pathlib import Path


def test_clone_from_rewrites_paths_keeps_times(tmp_path: Path) -> None:
	from mmkunit import trees
	a = trees.PreparedTree('k', tmp_path / 'pristine', tmp_path / 'trees/k')
	(a.src / 'mm').mkdir(parents=True)
	(a.src / 'Makefile').write_text('all:\n')
	(a.src / 'mm/foo.c').write_text('int foo;\n')
	a._save_state({'source': str(a.source), 'files': ['mm/foo.c']})
	build = a.build_dir('um')
	(build / 'mm').mkdir(parents=True)
	(build / '.config').write_text('CONFIG_X=y\n')
	cmd = build / 'mm/.foo.o.cmd'
	cmd.write_text(f'savedcmd_mm/foo.o := gcc -I{a.src}/include {a.src}/mm/foo.c\n')
	os.utime(cmd, (1000, 1000))
	blob = build / 'mm/foo.o'
	blob.write_bytes(b'\x7fELF\0' + str(a.src).encode())
	(build / 'source').symlink_to(a.src)

	b = a.worker(2)
	assert b.base == tmp_path / 'trees/k.w2'
	b.clone_from(a, 'um')
	copy = b.build_dir('um')
	assert (copy / 'mm/.foo.o.cmd').read_text() == \
		f'savedcmd_mm/foo.o := gcc -I{b.src}/include {b.src}/mm/foo.c\n'
	assert (copy / 'mm/.foo.o.cmd').stat().st_mtime == 1000
	assert (copy / 'mm/foo.o').read_bytes() == blob.read_bytes()
	assert os.readlink(copy / 'source') == str(b.src)
	assert (b.src / 'mm/foo.c').read_text() == 'int foo;\n'
	assert b._load_state()['files'] == ['mm/foo.c']
	# The original is untouched; a tree with a build of its own is kept.
	assert str(a.src) in cmd.read_text()
	(copy / 'mm/.foo.o.cmd').write_text('mine\n')
	b.clone_from(a, 'um')
	assert (copy / 'mm/.foo.o.cmd').read_text() == 'mine\n'
	# ... but it takes the configuration the first tree was given since.
	(build / '.config').write_text('CONFIG_X=y\nCONFIG_REPLAY=y\n')
	b.clone_from(a, 'um')
	assert (copy / '.config').read_text() == 'CONFIG_X=y\nCONFIG_REPLAY=y\n'
	assert (copy / 'mm/.foo.o.cmd').read_text() == 'mine\n'


def test_clone_from_touches_sources_the_copied_objects_may_not_match(
		tmp_path: Path) -> None:
	"""A worker with sources of its own gets a build directory whose
	objects were compiled from another text (a mutant's, put back since
	in the first tree): make must see its sources as newer than them."""
	from mmkunit import trees
	a = trees.PreparedTree('k', tmp_path / 'pristine', tmp_path / 'trees/k')
	(a.src / 'mm').mkdir(parents=True)
	(a.src / 'Makefile').write_text('all:\n')
	for name in ('same', 'put-back', 'mine'):
		(a.src / f'mm/{name}.c').write_text(f'int {name};\n')
		os.utime(a.src / f'mm/{name}.c', (1000, 1000))
	a._save_state({'source': str(a.source), 'files': []})
	b = a.worker(2)
	b.clone_from(a, 'um')  # no build there yet: the sources alone
	assert (b.src / 'mm/same.c').stat().st_mtime == 1000
	# The first tree builds a mutant of put-back.c, then puts it back;
	# the worker's mine.c is its own (a mutant of its own, say).
	build = a.build_dir('um')
	(build / 'mm').mkdir(parents=True)
	(build / '.config').write_text('CONFIG_X=y\n')
	for name in ('same', 'put-back', 'mine'):
		(build / f'mm/{name}.o').write_bytes(b'\x7fELF\0')
		os.utime(build / f'mm/{name}.o', (3000, 3000))
	os.utime(a.src / 'mm/put-back.c', (4000, 4000))
	(b.src / 'mm/mine.c').write_text('int mine = 1;\n')
	os.utime(b.src / 'mm/mine.c', (2000, 2000))
	b.clone_from(a, 'um')
	copy = b.build_dir('um')
	assert (copy / 'mm/same.o').stat().st_mtime == 3000
	assert (b.src / 'mm/same.c').stat().st_mtime == 1000
	for name in ('put-back', 'mine'):
		assert (b.src / f'mm/{name}.c').stat().st_mtime > 4000, name
	assert (b.src / 'mm/mine.c').read_text() == 'int mine = 1;\n'
