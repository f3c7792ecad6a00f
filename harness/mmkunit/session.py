# SPDX-License-Identifier: GPL-2.0
"""What a command works with, derived from its request: its kernel's
sources (sources.py), the overlay for their version, the prepared tree,
the options kunit.py is run with, and the context of its reports."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import os
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from mmkunit import arches
from mmkunit import deps
from mmkunit import kernels
from mmkunit import mirror
from mmkunit import options
from mmkunit import overlay as ov
from mmkunit import progress
from mmkunit import reports
from mmkunit import runner
from mmkunit import trees
from mmkunit.request import Build, Source
from mmkunit.sources import KernelSources

REPO = Path(__file__).resolve().parents[2]
KERNEL_DIR = REPO / 'kernel'
KUNIT_CONFIGS = REPO / 'kunit-configs'


class HarnessError(Exception):
	"""A setup error: printed as is, exit code 2."""


def overlay_dir(version: str = '') -> Path:
	"""$MM_KUNIT_OVERLAY, else the port of the series to the kernel's
	VERSION.PATCHLEVEL (kernel/compat/X.Y) if there is one, else kernel/."""
	if os.environ.get('MM_KUNIT_OVERLAY'):
		return Path(os.environ['MM_KUNIT_OVERLAY'])
	port = KERNEL_DIR / 'compat' / '.'.join(version.split('.')[:2])
	return port if version and port.is_dir() else KERNEL_DIR


class Session:
	"""What one command works with: its kernel's sources, the overlay
	for their version, and how it builds and runs them."""

	def __init__(self, source: Source, build: Build = Build(),
		     without: Sequence[str] = (),
		     tree: str = kernels.DEFAULT,
		     sources: Optional[KernelSources] = None) -> None:
		self.source = source
		self.sources = sources or KernelSources(source, tree)
		self.build = build
		self.without = list(without)
		self._overlay: Optional[ov.Overlay] = None
		# Added to the environment of kunit.py and make.
		self.env: Dict[str, str] = {}
		# Patches put on top of the series for this command's builds.
		self.extra: List[ov.Patch] = []
		# The build directory's name, where apart() gave it one.
		self._key: Optional[str] = None

	def with_config(self, config: Optional[str]) -> Session:
		"""This session built under another configuration: the same
		sources and the same overlay, as this session loaded it."""
		other = Session(self.source, dataclasses.replace(
			self.build, config=config), self.without,
			sources=self.sources)
		other._overlay = self.overlay
		other.env = dict(self.env)
		other.extra = list(self.extra)
		return other

	def reread(self) -> Session:
		"""This session with the overlay read again from its files (a
		session reads them once)."""
		other = self.with_config(self.build.config)
		other._overlay = None
		other._key = self._key
		return other

	def apart(self, name: str) -> Session:
		"""This session building in a directory of its own, its
		name this one's with "+name" (another configuration's options
		added to this one's, say)."""
		other = self.with_config(self.build.config)
		other._key = f'{self.build_key}+{name}'
		return other

	def with_additions(self, extra: Sequence[ov.Patch] = (),
			   env: Optional[Dict[str, str]] = None) -> Session:
		"""This session with patches put on top of the series for its
		builds, and variables added to kunit.py's and make's
		environment."""
		other = self.with_config(self.build.config)
		other._key = self._key
		other.extra += extra
		other.env.update(env or {})
		return other

	@property
	def cache(self) -> Path:
		"""The harness's cache directory."""
		return self.sources.cache

	@property
	def overlay(self) -> ov.Overlay:
		if self._overlay is None:
			self._overlay = ov.Overlay.load(
				overlay_dir(self.sources.version))
			if self.without:
				self._overlay = self._overlay.without(self.without)
		return self._overlay

	def ensure_deps(self, *extra: Sequence[deps.Requirement]) -> None:
		deps.ensure(self.requirements(*extra),
			    allow_install=self.source.install)

	def requirements(self, *extra: Sequence[deps.Requirement]
			 ) -> List[deps.Requirement]:
		"""What a run of this session needs: the build's tools, the
		kernel's sources, the arch's packages, and extra."""
		reqs: List[deps.Requirement] = list(deps.BUILD)
		if self.source.tarball:
			reqs += deps.source_for(self.source.tarball)
		elif not self.source.kernel:
			reqs += deps.kernel_source(self.sources.kernel)
		reqs += arches.ARCHES[self.build.arch].requirements
		if self.build.ccache:
			reqs += deps.CCACHE
		for group in extra:
			reqs += group
		return reqs

	def put_series(self, tree: trees.PreparedTree,
		       extra: Sequence[ov.Patch] = (),
		       overlay: Optional[ov.Overlay] = None,
		       seen: Optional[mirror.Seen] = None) -> List[str]:
		"""Puts the series (overlay, else this session's) and extra
		onto tree, refreshing it from the sources first if they may
		have changed (seen: what changed, if known); returns the files
		written."""
		return tree.prepare(self.overlay if overlay is None else overlay,
				    list(extra),
				    refresh_source=self.sources.may_change,
				    seen=seen)

	def prepare(self, tree: trees.PreparedTree,
		    seen: Optional[mirror.Seen] = None) -> List[str]:
		"""Puts the series and this session's extra patches onto the
		tree, and says what that changed; returns the files written."""
		changed = self.put_series(tree, self.extra, seen=seen)
		if changed:
			progress.progress(f'updated in {tree.src}: '
					  f'{progress.names(changed)}')
		return changed

	@contextlib.contextmanager
	def prepared(self, in_place: bool = False,
		     seen: Optional[mirror.Seen] = None
		     ) -> Iterator[Tuple[trees.PreparedTree, Path,
					 Optional[List[str]]]]:
		"""Holds the tree for this run, with the overlay applied.

		Yields the harness's tree (its build directories), the source
		tree to build (in place, the user's own tree, which the overlay
		is applied into; otherwise the harness's prepared copy), and
		what changed in that source tree since the harness last left
		it: the files it wrote into its own copy (of a Debian kernel, or
		of the user's tree, as mirror.py brought over what changed;
		none: it is as it was), or None if it cannot tell (the user's
		tree itself). seen: what changed in the user's tree and the
		copy since the last refresh, if that is known.
		"""
		src = self.source.kernel.resolve() if (in_place and
						       self.source.kernel) else None
		tree = (trees.user_tree(self.cache, src) if src
			else self.sources.prepared_tree())
		with tree.locked():
			if src:
				changed = trees.apply_in_place(self.overlay, src)
				print(f'mm-kunit: overlay applied in {src}'
				      f' ({len(changed)} files written)')
				yield tree, src, None
			else:
				changed = self.prepare(tree, seen)
				yield tree, tree.src, changed

	@property
	def build_key(self) -> str:
		"""Names the build directory: the arch, and the config if any
		(and the name apart() gave)."""
		b = self.build
		if self._key:
			return self._key
		return f'{b.arch}-{b.config}' if b.config else b.arch

	def results_dir(self, label: str) -> Path:
		"""Where a run's logs and reports go: --results, else a new
		directory under CACHE/results."""
		if self.build.results:
			path = self.build.results.resolve()
			path.mkdir(parents=True, exist_ok=True)
			return path
		return runner.new_results_dir(self.cache, label)

	def config_file(self, name: str) -> Path:
		"""kunit-configs/NAME: the port's own (kernel/compat/X.Y/
		kunit-configs/) if it has that file, else the repository's."""
		own = self.overlay.root / 'kunit-configs' / name
		return own if own.is_file() else KUNIT_CONFIGS / name

	def run_options(self, filter_glob: Optional[str] = None,
			held_to_list: bool = False) -> runner.RunOptions:
		"""kunit.py's options (options.run_options), with the arch's
		kunitconfig and the configuration's, the port's own if it has
		them; HarnessError for a configuration there is no file of. With
		held_to_list, the tests the port's list says the kernel fails
		with the series are held to it (RunOptions.failing_here)."""
		b = self.build
		configs = [self.config_file(f'{b.arch}.config')]
		if b.config:
			extra = self.config_file(f'{b.arch}-{b.config}.config')
			if not extra.is_file():
				known = sorted(p.stem[len(b.arch) + 1:] for p in
					       KUNIT_CONFIGS.glob(f'{b.arch}-*.config'))
				raise HarnessError(
					f'no {extra.name} in {KUNIT_CONFIGS} (configs for '
					f'{b.arch}: {", ".join(known) or "none"})')
			configs.append(extra)
		opts = options.run_options(
			b, configs, self.config_file(f'{b.arch}.qemu_args'),
			self.cache, self.env, filter_glob)
		if held_to_list:
			opts = dataclasses.replace(
				opts, failing_here=self.overlay.failing_here())
		return opts

	def with_accel(self, opts: runner.RunOptions,
		       tree: trees.PreparedTree) -> runner.RunOptions:
		"""QEMU runs use KVM if it really works here, else TCG
		(options.with_accel); other runs are left as they are."""
		arch = arches.ARCHES[opts.arch]
		if not arch.qemu:
			return opts
		return options.with_accel(
			opts, self.cache, tree.build_dir(self.build_key) / arch.image)

	def report_context(self, source: Path,
			   opts: runner.RunOptions) -> reports.Context:
		"""What the JUnit and KCIDB reports say about a run of source."""
		ov_ = self.overlay
		patches = [(p.name, p.text + b''.join(ov_.contents[f]
						      for f in p.new_files))
			   for p in ov_.patches]
		env = ('UML' if arches.ARCHES[opts.arch].uml else
		       f'QEMU {opts.arch} (TCG) {opts.qemu_args}'.strip())
		return reports.Context(
			arch=opts.arch,
			started=datetime.datetime.now(datetime.timezone.utc),
			source=source, patches=patches, environment=env,
			package=self.sources.package or '',
			command=' '.join(['./run_kunit.sh'] + sys.argv[1:]))


def write_reports(result: runner.RunResult, ctx: reports.Context) -> None:
	"""junit.xml and kcidb.json in the run's results directory."""
	d = result.results_dir
	(d / 'junit.xml').write_text(reports.junit_xml(result, ctx))
	(d / 'kcidb.json').write_text(
		json.dumps(reports.kcidb(result, ctx), indent=1) + '\n')
