# SPDX-License-Identifier: GPL-2.0
"""The arches the suites build and run on, one row each in ARCHES: what
kunit.py, make, QEMU and the KVM probe, the build stamp, the generated
mutants' timeouts and the replay need to know of each. The harness looks
an arch up here rather than testing its name, and cli.py refuses one that
is not here before any work. Each has its kunit-configs/ARCH.config."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Dict, Optional, Tuple

from mmkunit.deps import Requirement


@dataclasses.dataclass(frozen=True)
class Arch:
	"""One arch: how it is built, booted and timed."""
	# kunit.py's --arch and make's ARCH=, and the ARCH of
	# kunit-configs/ARCH.config and ARCH-NAME.config.
	name: str
	# The kernel image kunit.py exec boots, relative to the build
	# directory (what stamp.py checks a build left).
	image: str
	# The kernel's console: the console= of the harness's own boots (the
	# KVM probe's, a UML boot with more memory than kunit.py gives).
	console: str
	# The generated mutants' baseline (the series without a mutant) is
	# stopped after this many seconds: a clean run of every suite takes
	# seconds on UML, well under a minute under TCG, and several times
	# that under --config debug (generated.py).
	baseline_timeout: int
	# A mutant's run may take at least this many seconds, whatever the
	# baseline took (generated.mutant_timeout()).
	min_timeout: int
	# The QEMU that boots the kernel and the Debian package that has it;
	# None: UML, whose kernel the host runs as a program.
	qemu: Optional[str] = None
	qemu_package: Optional[str] = None
	# QEMU's arguments from kunit.py's qemu_configs/ARCH.py, which the
	# KVM probe boots with too.
	qemu_params: Tuple[str, ...] = ()
	# What building the kernel needs besides deps.BUILD.
	build_deps: Tuple[Requirement, ...] = ()
	# The cross compiler's prefix (kunit.py --cross_compile, make's
	# CROSS_COMPILE=); None: the host's gcc.
	cross_compile: Optional[str] = None
	# The kernel's page size under ARCH.config (not under a --config that
	# changes it, such as arm64's 64k, where no replay is run): the memory
	# a replay scale needs is worked out with it (replay.memory()).
	page_size: int = 4096
	# Boot options that put the kernel on one CPU, after the arch's own:
	# mutants in schemata boot so (UML's SMP costs each boot about twice
	# its time), and a test that skips there for want of CPUs boots
	# again alone, as the arch boots (generated._plan(),
	# schemata.boot_all_tests()). Empty: the arch's boots are as they are.
	one_cpu: Tuple[str, ...] = ()
	# uname -m of the hosts whose KVM runs the arch's kernel; on any other
	# host QEMU emulates it (TCG) without probing KVM. None: UML.
	host_machine: Optional[str] = None

	@property
	def uml(self) -> bool:
		"""Whether the kernel is UML: the host runs it, with no QEMU; UML's
		gcov (coverage) and the lists of expected failures (fixes) are
		UML's only."""
		return self.qemu is None

	@property
	def runs_under(self) -> str:
		"""What runs the kernel, as --help and the reports say it."""
		return 'UML' if self.uml else 'QEMU'

	@property
	def requirements(self) -> Tuple[Requirement, ...]:
		"""The Debian packages building and running the arch's kernel
		needs besides deps.BUILD."""
		qemu = ((Requirement(self.qemu_package, command=self.qemu),)
			if self.qemu and self.qemu_package else ())
		return qemu + self.build_deps


ARCHES: Dict[str, Arch] = {a.name: a for a in (
	Arch(name='um', image='linux', console='tty',
	     baseline_timeout=300, min_timeout=30, one_cpu=('ncpus=1',)),
	Arch(name='x86_64', image='arch/x86/boot/bzImage', console='ttyS0',
	     qemu='qemu-system-x86_64', qemu_package='qemu-system-x86',
	     host_machine='x86_64',
	     # qemu_configs/x86_64.py's firmware.
	     qemu_params=('-bios', 'qboot.rom'),
	     # objtool's.
	     build_deps=(Requirement('libelf-dev',
				     path=Path('/usr/include/libelf.h')),),
	     baseline_timeout=900, min_timeout=60),
	Arch(name='arm64', image='arch/arm64/boot/Image.gz', console='ttyAMA0',
	     qemu='qemu-system-aarch64', qemu_package='qemu-system-arm',
	     # qemu_configs/arm64.py's machine and CPU.
	     qemu_params=('-machine', 'virt', '-cpu', 'max'),
	     build_deps=(Requirement('gcc-aarch64-linux-gnu',
				     command='aarch64-linux-gnu-gcc'),),
	     cross_compile='aarch64-linux-gnu-',
	     # TCG emulates every instruction: several times x86_64's.
	     baseline_timeout=1800, min_timeout=120, host_machine='aarch64'),
)}
