# SPDX-License-Identifier: GPL-2.0
"""The build stamp (stamp.py): when a run may boot the kernel it built
last time instead of building."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from mmkunit import runner, stamp


def _built(build: Path, arch: str = 'um') -> None:
	image = build / ('linux' if arch == 'um' else 'arch/x86/boot/bzImage')
	image.parent.mkdir(parents=True, exist_ok=True)
	for path, text in ((build / '.config', 'CONFIG_KUNIT=y\n'),
			   (build / '.version', '3\n'), (image, 'ELF')):
		path.write_text(text)
		os.utime(path, ns=(10**18, 10**18))


def _src(tmp_path: Path) -> Path:
	src = tmp_path / 'src'
	(src / 'mm').mkdir(parents=True)
	(src / 'mm/filemap.c').write_text('int x;\n')
	os.utime(src / 'mm/filemap.c', ns=(10**9, 10**9))
	return src


def test_inputs_change_with_what_decides_the_build(tmp_path: Path) -> None:
	config = tmp_path / 'um.config'
	config.write_text('CONFIG_KUNIT=y\n')
	opts = runner.RunOptions(kunitconfigs=[config],
				 make_options=('CC=ccache gcc',))
	base = stamp.inputs('tarball', 'series', opts)
	assert base and base == stamp.inputs('tarball', 'series', opts)
	# What a run changes but its build does not: the same inputs.
	assert base == stamp.inputs('tarball', 'series', dataclasses.replace(
		opts, filter_glob='mm_*', kernel_args=['mem=2G'], timeout=9))
	others = {
		stamp.inputs('other tarball', 'series', opts),
		stamp.inputs('tarball', 'edited series', opts),
		stamp.inputs('tarball', 'series', dataclasses.replace(
			opts, make_options=())),
		stamp.inputs('tarball', 'series', dataclasses.replace(
			opts, kconfig_add=('CONFIG_KASAN=y',))),
		stamp.inputs('tarball', 'series', dataclasses.replace(
			opts, arch='x86_64')),
	}
	config.write_text('CONFIG_KUNIT=y\nCONFIG_MEMCG=y\n')
	others.add(stamp.inputs('tarball', 'series', opts))
	assert len(others) == 6 and base not in others
	# kunit.py arguments of the user's own: the harness cannot tell.
	assert stamp.inputs('tarball', 'series', dataclasses.replace(
		opts, kunit_args=['--kconfig_add=CONFIG_X=y'])) is None


def test_a_stamp_holds_until_anything_changes(tmp_path: Path) -> None:
	build, src = tmp_path / 'build', _src(tmp_path)
	_built(build)
	assert not stamp.holds(build, src, 'um', 'digest')
	stamp.record(build, 'um', 'digest')
	assert stamp.holds(build, src, 'um', 'digest')
	assert not stamp.holds(build, src, 'um', 'another digest')
	assert not stamp.holds(build, src, 'um', None)
	# Another build in the directory (a mutant's) relinks the kernel.
	os.utime(build / 'linux', ns=(2 * 10**18, 2 * 10**18))
	assert not stamp.holds(build, src, 'um', 'digest')
	stamp.record(build, 'um', 'digest')
	assert stamp.holds(build, src, 'um', 'digest')
	# The bytecode kunit.py's Python writes beside it while it runs.
	(src / 'tools/__pycache__').mkdir(parents=True)
	(src / 'tools/__pycache__/kunit.cpython-311.pyc').write_text('')
	assert stamp.holds(build, src, 'um', 'digest')
	# A file of the tree edited after the build.
	(src / 'mm/filemap.c').write_text('int y;\n')
	assert not stamp.holds(build, src, 'um', 'digest')


def test_a_build_leaves_no_stamp_until_it_booted(tmp_path: Path) -> None:
	build, src = tmp_path / 'build', _src(tmp_path)
	_built(build, 'x86_64')
	stamp.record(build, 'x86_64', 'digest')
	assert stamp.holds(build, src, 'x86_64', 'digest')
	stamp.forget(build)
	assert not (build / stamp.STAMP).exists()
	stamp.forget(build)
	# A stamp with the configuration keeps it, and its time, for the
	# build that follows (which may fail): the kernel is not stamped.
	stamp.record(build, 'x86_64', 'digest', 'config')
	os.utime(build / stamp.STAMP, ns=(10**18, 10**18))
	stamp.forget(build)
	assert not stamp.holds(build, src, 'x86_64', 'digest')
	assert stamp.config_holds(build, src, 'x86_64', 'config', [])
	assert (build / stamp.STAMP).stat().st_mtime_ns == 10**18
	(build / stamp.STAMP).unlink()
	# No kernel image: nothing to stamp.
	(build / 'arch/x86/boot/bzImage').unlink()
	stamp.record(build, 'x86_64', 'digest')
	assert not (build / stamp.STAMP).exists()
	stamp.record(build, 'x86_64', None)
	assert not (build / stamp.STAMP).exists()


def test_a_configuration_holds_while_only_c_files_change(
		tmp_path: Path) -> None:
	"""After an edit of C sources and headers alone, the .config the last
	build was configured with is kept (plain make, no kunit.py run);
	anything else, or a tree the harness cannot account for, configures
	again."""
	build, src = tmp_path / 'build', _src(tmp_path)
	_built(build)
	written = ['mm/filemap.c', 'mm/tests/filemap_kunit.h']
	assert not stamp.config_holds(build, src, 'um', 'config', written)
	stamp.record(build, 'um', 'digest', 'config')
	assert stamp.config_holds(build, src, 'um', 'config', written)
	assert stamp.config_holds(build, src, 'um', 'config', [])
	# Another configuration, or no stamp of one.
	assert not stamp.config_holds(build, src, 'um', 'other', written)
	assert not stamp.config_holds(build, src, 'um', None, written)
	stamp.record(build, 'um', 'digest')
	assert not stamp.config_holds(build, src, 'um', 'config', written)
	stamp.record(build, 'um', 'digest', 'config')
	# What the harness wrote: a Kconfig or a kunitconfig, or unknown.
	for other in ('mm/tests/Kconfig', 'mm/tests/.kunitconfig'):
		assert not stamp.config_holds(build, src, 'um', 'config',
					      [*written, other])
	assert not stamp.config_holds(build, src, 'um', 'config', None)
	# A C file edited in the tree itself is make's to see; a Makefile
	# is not.
	(src / 'mm/filemap.c').write_text('int y;\n')
	assert stamp.config_holds(build, src, 'um', 'config', [])
	(src / 'mm/Makefile').write_text('obj-y += filemap.o\n')
	assert not stamp.config_holds(build, src, 'um', 'config', [])
	os.utime(src / 'mm/Makefile', ns=(10**9, 10**9))
	assert stamp.config_holds(build, src, 'um', 'config', [])
	# The .config rewritten by another command's build.
	os.utime(build / '.config', ns=(2 * 10**18, 2 * 10**18))
	assert not stamp.config_holds(build, src, 'um', 'config', [])


def test_the_c_files_changed_since_a_stamp_are_listed(tmp_path: Path) -> None:
	"""Every C file and header newer than the stamp, and nothing else;
	none without a stamp."""
	build, src = tmp_path / 'build', _src(tmp_path)
	_built(build)
	assert stamp.TreeCheck(src, build).files(stamp.CONFIG_FREE) == []
	stamp.record(build, 'um', 'digest', 'config')
	os.utime(build / stamp.STAMP, ns=(10**18, 10**18))
	assert stamp.TreeCheck(src, build).files(stamp.CONFIG_FREE) == []
	for name in ('mm/filemap.c', 'mm/internal.h', 'mm/Makefile'):
		(src / name).write_text('/* new */\n')
	check = stamp.TreeCheck(src, build)
	assert check.files(stamp.CONFIG_FREE) == [
		str(src / 'mm/filemap.c'), str(src / 'mm/internal.h')]
	# One find answers every question asked of it.
	assert not check.none_newer() and not check.only(stamp.CONFIG_FREE)
	assert not stamp.config_holds(build, src, 'um', 'config', [], check)


def test_files_written_with_old_times_are_named(tmp_path: Path) -> None:
	"""A file written since the build but with a time not after its
	stamp's (rsync keeps the user's) is one find and make miss."""
	(tmp_path / stamp.STAMP).write_text('{}\n')
	os.utime(tmp_path / stamp.STAMP, (100, 100))
	for name, t in (('old.c', 50), ('same.h', 100), ('new.c', 150)):
		(tmp_path / name).write_text('')
		os.utime(tmp_path / name, (t, t))
	files = [tmp_path / n for n in ('old.c', 'same.h', 'new.c', 'gone.c')]
	assert stamp.not_newer(tmp_path, files) == [
		str(tmp_path / 'old.c'), str(tmp_path / 'same.h')]
	(tmp_path / stamp.STAMP).unlink()
	assert stamp.not_newer(tmp_path, files) == []
