# SPDX-License-Identifier: GPL-2.0
"""Where a command's kernel comes from (sources.py): the Debian kernel
chosen and the version of each kind of source."""

from __future__ import annotations

from pathlib import Path

from mmkunit import kernels
from mmkunit.request import Source
from mmkunit.sources import KernelSources


def test_the_kernel_and_its_version(kernel_tree: Path) -> None:
	"""--tree's Debian kernel, else the command's; the version of a
	kernel tree from its Makefile, of a tarball from its name."""
	s = KernelSources(Source())
	assert s.kernel == kernels.KERNELS[kernels.DEFAULT]
	assert s.version == kernels.DEFAULT
	s = KernelSources(Source(), tree='6.1')
	assert (s.kernel, s.version) == (kernels.KERNELS['6.1'], '6.1')
	s = KernelSources(Source(tree='6.12'), tree='6.1')
	assert s.kernel == kernels.KERNELS['6.12']
	assert KernelSources(Source(kernel=kernel_tree)).version == '6.12'
	assert KernelSources(Source(tarball=Path(
		'/t/linux-source-6.1.tar.xz'))).version == '6.1'
	assert KernelSources(Source(tarball=Path(
		'/t/linux-6.12.57.tar.gz'))).version == '6.12.57'
