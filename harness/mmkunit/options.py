# SPDX-License-Identifier: GPL-2.0
"""The options kunit.py is run with (runner.RunOptions), from a Build and
the files of kunit-configs/: the kunitconfigs, the boot options that go
with each, QEMU's arguments and accelerator, and the compiler cache."""

from __future__ import annotations

import dataclasses
import os
import platform
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from mmkunit import arches
from mmkunit import kvm
from mmkunit import progress
from mmkunit import runner
from mmkunit.request import Build


def config_options(configs: Sequence[Path]) -> List[str]:
	"""The options of configurations (ARCH-NAME.config), as kunit.py's
	--kconfig_add, which, unlike a second --kunitconfig, may set an
	option the arch's sets otherwise (onecpu turns SMP off)."""
	return [line for c in configs if c.is_file()
		for line in map(str.strip, c.read_text().splitlines())
		if line.startswith('CONFIG_') or line.endswith(' is not set')]


def config_kernel_args(configs: Sequence[Path]) -> List[str]:
	"""The boot options that go with configurations: the words of each
	one's ARCH[-NAME].kernel_args."""
	return [arg for c in configs
		for f in [c.with_suffix('.kernel_args')] if f.is_file()
		for arg in f.read_text().split()]


def run_options(build: Build, configs: Sequence[Path], qemu_args: Path,
		cache: Path, env: Dict[str, str],
		filter_glob: Optional[str] = None) -> runner.RunOptions:
	"""kunit.py's options for build: configs[0], the arch's, as a
	kunitconfig and the options of the others (ARCH-NAME.config) on top
	of it, each with the boot options of its ARCH[-NAME].kernel_args;
	QEMU's arguments from the file qemu_args, if there is one; gcc behind
	ccache (its cache in $MM_KUNIT_CCACHE_DIR, else CACHE/ccache) unless
	build says not; env added to the environment."""
	cc = runner.RunOptions()
	if build.ccache:
		cc = runner.ccache_options(
			Path(os.environ.get('MM_KUNIT_CCACHE_DIR') or
			     cache / 'ccache'),
			arches.ARCHES[build.arch].cross_compile)
	return runner.RunOptions(
		arch=build.arch, filter_glob=filter_glob,
		kunit_args=list(build.kunit_args), jobs=build.jobs,
		kunitconfigs=[c for c in configs[:1] if c.is_file()],
		kconfig_add=config_options(configs[1:]),
		qemu_args=(' '.join(qemu_args.read_text().split())
			   if qemu_args.is_file() else ''),
		kernel_args=config_kernel_args(configs), quiet=build.quiet,
		make_options=cc.make_options, env={**cc.env, **env})


def with_accel(opts: runner.RunOptions, cache: Path,
	       image: Path) -> runner.RunOptions:
	"""A QEMU run of image with KVM if it really works here (kvm.py),
	else with TCG, and a qemu on PATH that never asks for KVM."""
	arch = arches.ARCHES[opts.arch]
	assert arch.qemu, f'{arch.name} runs without QEMU'
	if arch.host_machine != platform.machine():
		usable, why = False, (f'no KVM for {arch.name} on a '
				      f'{platform.machine()} host')
	else:
		usable, why = kvm.kvm_works(
			cache, image, arch.qemu, arch.console,
			extra=(*arch.qemu_params, *opts.qemu_args.split()))
	progress.progress('QEMU with KVM' if usable
			  else f'QEMU with TCG ({why})')
	qemu_args = ' '.join(
		['-accel', 'kvm' if usable else 'tcg', opts.qemu_args]).strip()
	env = opts.env
	if not usable:
		env = {**env, 'PATH': kvm.tcg_only_path(
			cache, arch.qemu,
			env.get('PATH') or os.environ.get('PATH', os.defpath))}
	return dataclasses.replace(opts, qemu_args=qemu_args, env=env)
