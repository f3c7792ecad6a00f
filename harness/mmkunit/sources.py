# SPDX-License-Identifier: GPL-2.0
"""Where a command's kernel comes from: the user's tree (--kernel), a
tarball (--tarball), or a Debian kernel's package, fetched into the cache
the first time it is needed; and the harness's prepared copy of it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from mmkunit import kernels
from mmkunit import overlay as ov
from mmkunit import progress
from mmkunit import trees
from mmkunit.request import Source


class KernelSources:
	"""The kernel sources one command builds, from its Source."""

	def __init__(self, source: Source, tree: str = kernels.DEFAULT) -> None:
		self.request = source
		# The Debian kernel, unless source names a tree or tarball.
		self.kernel = kernels.KERNELS[source.tree or tree]
		self.cache = (source.cache.resolve() if source.cache
			      else trees.cache_dir())
		self._tarball = source.tarball

	@property
	def tarball(self) -> Path:
		"""The kernel tarball: --tarball's, or the Debian kernel's,
		fetched into the cache the first time it is needed."""
		if self._tarball is None:
			self._tarball = (self.kernel.system_tarball or
					 kernels.fetch(self.kernel, self.cache))
			fetched = kernels.version_of(self._tarball)
			if fetched:
				progress.progress(f'Debian\'s {self.kernel.package} '
						  f'{fetched}')
		return self._tarball

	@property
	def version(self) -> str:
		"""The kernel's version: the user's tree's, the tarball's (from
		its name; it need not be unpacked yet), or the Debian kernel's
		series (it need not be fetched yet)."""
		if self.request.kernel:
			return trees.kernel_version(self.request.kernel)
		if not self.request.tarball:
			return self.kernel.series
		m = re.search(r'(\d+\.\d+(\.\d+)?)\.tar', self.tarball.name)
		if m:
			return m.group(1)
		return trees.kernel_version(self.unmodified())

	@property
	def package(self) -> Optional[str]:
		"""The Debian package and version built, for the reports; None
		for the user's tree or tarball."""
		if self.request.kernel or self.request.tarball:
			return None
		fetched = kernels.version_of(self.tarball)
		return f'{self.kernel.package} {fetched}' if fetched else None

	def unmodified(self) -> Path:
		"""The unmodified kernel sources: the user's or the tarball's."""
		if self.request.kernel:
			ov.check_kernel_tree(self.request.kernel.resolve())
			return self.request.kernel.resolve()
		return trees.unpack_tarball(self.tarball, self.cache)

	def prepared_tree(self) -> trees.PreparedTree:
		"""The harness's copy of the sources, which the series goes
		onto, and its build directories."""
		if self.request.kernel:
			return trees.user_tree(self.cache, self.request.kernel)
		return trees.default_tree(self.cache, self.tarball)

	@property
	def may_change(self) -> bool:
		"""Whether a prepared tree is refreshed from its source before
		each use: the user's tree may change between runs, a tarball
		does not."""
		return bool(self.request.kernel)

	def reported(self, tree: trees.PreparedTree) -> Path:
		"""The sources a run of tree is a run of, for the reports."""
		if self.request.kernel:
			return self.request.kernel.resolve()
		return tree.source
