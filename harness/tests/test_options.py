# SPDX-License-Identifier: GPL-2.0
"""kunit.py's options from a Build and the files of kunit-configs
(options.py)."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Tuple

import pytest

from mmkunit import kvm, options, runner
from mmkunit.request import Build


def test_the_files_and_the_build_make_the_options(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""The arch's configuration is a kunitconfig, a named one's options go
	on top of it (they may unset the arch's), each with the boot options
	of its .kernel_args; QEMU's arguments are one line; gcc is behind
	ccache; the given environment goes over ccache's."""
	monkeypatch.delenv('MM_KUNIT_CCACHE_DIR', raising=False)
	(tmp_path / 'x86_64.config').write_text('CONFIG_X=y\n')
	(tmp_path / 'x86_64-debug.config').write_text(
		'# Why\nCONFIG_Y=y\n  # CONFIG_X is not set\n\nCONFIG_Z="a b"\n')
	(tmp_path / 'x86_64.kernel_args').write_text('a=1\n  b=2\n')
	(tmp_path / 'x86_64-debug.kernel_args').write_text('c=3\n')
	(tmp_path / 'x86_64.qemu_args').write_text('-smp 2\n  -m 2G\n')
	build = Build(arch='x86_64', jobs=5, quiet=True,
		      kunit_args=('--raw_output',))
	opts = options.run_options(
		build, [tmp_path / 'x86_64.config', tmp_path / 'x86_64-debug.config'],
		tmp_path / 'x86_64.qemu_args', tmp_path / 'cache',
		{'CCACHE_NOHASHDIR': 'no', 'LIBRARY_PATH': '/l'}, 'mm_*')
	assert list(opts.kunitconfigs) == [tmp_path / 'x86_64.config']
	assert list(opts.kconfig_add) == [
		'CONFIG_Y=y', '# CONFIG_X is not set', 'CONFIG_Z="a b"']
	assert list(opts.kernel_args) == ['a=1', 'b=2', 'c=3']
	assert opts.qemu_args == '-smp 2 -m 2G'
	assert (opts.arch, opts.jobs, opts.quiet, opts.filter_glob) == \
		('x86_64', 5, True, 'mm_*')
	assert list(opts.kunit_args) == ['--raw_output']
	assert list(opts.make_options) == ['CC=ccache gcc', 'HOSTCC=ccache gcc']
	assert opts.env['CCACHE_DIR'] == str(tmp_path / 'cache/ccache')
	assert opts.env['CCACHE_NOHASHDIR'] == 'no'
	assert opts.env['LIBRARY_PATH'] == '/l'


def test_without_ccache_or_qemu_arguments(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.setenv('MM_KUNIT_CCACHE_DIR', str(tmp_path / 'elsewhere'))
	opts = options.run_options(Build(), [], tmp_path / 'none', tmp_path, {})
	assert opts.env['CCACHE_DIR'] == str(tmp_path / 'elsewhere')
	opts = options.run_options(Build(ccache=False), [], tmp_path / 'none',
				   tmp_path, {})
	assert (opts.qemu_args, list(opts.make_options), opts.env) == ('', [], {})


def test_qemu_with_kvm_or_tcg(tmp_path: Path,
			      monkeypatch: pytest.MonkeyPatch) -> None:
	"""KVM if it works; else TCG, with a qemu first on PATH that never
	asks for KVM."""
	opts = runner.RunOptions(arch='x86_64', qemu_args='-smp 2',
				 env={'A': 'b'})
	image = tmp_path / 'bzImage'
	monkeypatch.setattr(platform, 'machine', lambda: 'x86_64')
	monkeypatch.setattr(kvm, 'kvm_works', lambda *a, **k: (True, ''))
	fast = options.with_accel(opts, tmp_path, image)
	assert (fast.qemu_args, fast.env) == ('-accel kvm -smp 2', {'A': 'b'})
	bin_dir = tmp_path / 'bin'
	bin_dir.mkdir()
	(bin_dir / 'qemu-system-x86_64').write_text('#!/bin/sh\n')
	(bin_dir / 'qemu-system-x86_64').chmod(0o755)
	monkeypatch.setattr(kvm, 'kvm_works', lambda *a, **k: (False, 'no /dev/kvm'))
	slow = options.with_accel(
		runner.RunOptions(arch='x86_64', env={'PATH': str(bin_dir)}),
		tmp_path, image)
	assert slow.qemu_args == '-accel tcg'
	assert slow.env['PATH'] == os.pathsep.join(
		[str(tmp_path / 'qemu-tcg'), str(bin_dir)])
	assert (tmp_path / 'qemu-tcg/qemu-system-x86_64').is_file()


def test_qemu_of_another_arch_is_tcg_unprobed(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""An arch the host's KVM cannot run (arm64 on x86_64) runs under TCG
	without a boot to probe KVM."""
	def probe(*args: object, **kwargs: object) -> Tuple[bool, str]:
		raise AssertionError('KVM probed for arm64 on x86_64')
	monkeypatch.setattr(platform, 'machine', lambda: 'x86_64')
	monkeypatch.setattr(kvm, 'kvm_works', probe)
	opts = options.with_accel(runner.RunOptions(arch='arm64', env={}),
				  tmp_path, tmp_path / 'Image.gz')
	assert opts.qemu_args == '-accel tcg'
