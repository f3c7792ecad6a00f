# SPDX-License-Identifier: GPL-2.0
"""The handlers of the commands without a module of their own (lint,
fixes and selftest have theirs): run, prepare, export, mutants, replay and
coverage, each making the Session its request asks for and calling what
does the work (runs.py, commits.py, export.py, mutants.py, generated.py,
replay.py, coverage.py); and check, whose steps are requests of the other
commands, run in turn. SETUP_ERRORS: the errors that are no test's."""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Optional

from mmkunit import commits
from mmkunit import deps
from mmkunit import expected
from mmkunit import kernels
from mmkunit import overlay as ov
from mmkunit import runs
from mmkunit import runner
from mmkunit import trees
from mmkunit.request import (
	EXIT_OK, EXIT_TESTS_FAILED, Build, CheckRequest,
	CoverageRequest, ExportRequest, FixesRequest, LintRequest,
	MutantsRequest, PrepareRequest, ReplayRequest, Request, RunRequest,
	Scale, SelftestRequest)
from mmkunit.session import HarnessError, Session

# What stops a command before or beside its tests: the setup, not a test
# (export's and replay's errors are HarnessErrors). The modules of the
# commands other than run are imported by their handlers: a run does not
# wait for them.
SETUP_ERRORS = (HarnessError, ov.OverlayError, trees.TreeError,
		kernels.FetchError, runner.ConfigError,
		runner.StaleKernelError, expected.ExpectedError)


def run_handler(req: RunRequest) -> int:
	s = Session(req.source, req.build, req.without)
	if req.each_commit and req.source.kernel:
		return commits.each_commit(s, req.source.kernel, req.each_commit,
					   req.filter_glob)
	if req.watch:
		from mmkunit import watch
		result = watch.watch_suites(s, req.filter_glob)
	else:
		result = runs.run_suites(s, req.in_place, req.filter_glob,
					 req.repeat, req.held_to_list)
	if req.bisect and result.untestable:
		return commits.BISECT_SKIP
	return EXIT_OK if result.ok else EXIT_TESTS_FAILED


def prepare_handler(req: PrepareRequest) -> int:
	s = Session(req.source, without=req.without)
	s.ensure_deps()
	with s.prepared(req.in_place) as (_, src, _):
		if not req.in_place:
			print(f'mm-kunit: prepared tree: {src}')
	print('Run the suites there with:\n'
	      f'  cd {src} && ./tools/testing/kunit/kunit.py run '
	      f'--kunitconfig={runner.SUITES_KUNITCONFIG}')
	return EXIT_OK


def export_handler(req: ExportRequest) -> int:
	from mmkunit import export
	s = Session(req.source)
	s.ensure_deps()
	if req.refresh:
		for p in export.refresh(s.overlay, s.sources.unmodified()):
			print(f'mm-kunit: refreshed {p}')
		return EXIT_OK
	who = export.user_identity(req.author)
	base = req.base
	if not base and req.source.kernel:
		base = trees.clean_head(req.source.kernel)
	out = export.export(s.overlay, s.sources.unmodified(), req.output, who,
			local=req.local, base=base)
	for p in out:
		print(p)
	if not base and not req.local:
		print('mm-kunit: no base-commit: line (the tree is not a git '
		      'tree without changes); give one with --base COMMIT')
	cover = [p for p in out if p.name.startswith('0000-')]
	print(f'mm-kunit: {len(out) - len(cover)} patches'
	      f'{" and a cover letter" if cover else ""} in {req.output}, '
	      f'from {who}; apply with `git am`' +
	      (' on top of the series' if req.local else ''))
	return EXIT_OK


def mutants_handler(req: MutantsRequest) -> int:
	from mmkunit import generated
	from mmkunit import mutants as mu
	if req.merge:
		return generated.merge(req.merge)
	if req.generated:
		return generated.run_generated(Session(req.source, req.build), req)
	return mu.run_matrix(Session(req.source, req.build), req)


def replay_handler(req: ReplayRequest) -> int:
	from mmkunit import replay
	return replay.run_replay(Session(req.source, req.build), req)


def coverage_handler(req: CoverageRequest) -> int:
	from mmkunit import coverage
	return coverage.run_coverage(Session(req.source, dataclasses.replace(
		req.build, config=coverage.CONFIG)))


def check_steps(req: CheckRequest) -> Dict[str, Request]:
	"""What `check` runs, in order: check's options, each step's arch.

	The default kernel (or the one given) gets every UML step, the
	replays of the changes it reverts among them, and its suites on
	arm64 with 64 KiB pages: what CI runs on each commit. With --all
	(req.everything), then the other QEMU runs and arm64's mutants; for
	the default kernel, the 6.12 port is run and replays its own
	version of the change at a benchmark's scale, and the older kernels
	are held to their lists (fixes). Coverage, the replay of 7.3 at
	that scale and the 6.12 port's own matrices are commands of their
	own (docs/costs.md)."""
	from mmkunit import mutants as mu
	from mmkunit import replay
	src = req.source

	def on(arch: str, config: Optional[str] = None) -> Build:
		return dataclasses.replace(req.build, arch=arch, config=config)

	overlay = Session(src).overlay
	steps: Dict[str, Request] = {
		'selftest': SelftestRequest(src),
		'lint': LintRequest(src),
		'run um': RunRequest(src, on('um')),
		# The kernel's own checkers (kunit-configs/um-debug.config).
		'run um debug': RunRequest(src, on('um', 'debug')),
		# MEMCG and the rest of a distribution's mm configuration.
		'run um distro': RunRequest(src, on('um', 'distro')),
		# The multi-gen LRU on from boot: the tests of what the kernel
		# does only then.
		'run um mglru': RunRequest(src, on('um', 'mglru')),
		# arm64 with 64 KiB pages under QEMU: a PMD maps 512 MiB, the
		# fault-around window is one page and exec_folio_order() is
		# not 0, what no 4 KiB arch shows (docs/arm64.md).
		'run arm64 64k': RunRequest(src, on('arm64', '64k')),
	}
	if overlay.mutants():
		steps['mutants um'] = MutantsRequest(src, on('um'))
	if overlay.pins_functions():
		# Every generated mutant, each function held to the threshold:
		# in schemata, minutes (docs/costs.md).
		steps['mutants um generated'] = MutantsRequest(
			src, on('um'), generated=True)
	# The hand mutants only another configuration runs (memcg reclaim, a
	# memcg of a test's own; the multi-gen LRU on), there.
	for config in ('distro', 'mglru'):
		limited = tuple(m.name for m in overlay.mutants()
				if config in mu.configs(m))
		if limited:
			steps[f'mutants um {config}'] = MutantsRequest(
				src, on('um', config), mutants=limited)
	# The replays' columns of further configurations, which have no
	# bounds, with --all alone: each is a build and a run more (thrash's
	# multi-gen LRU column).
	bounded = not req.everything
	if overlay.before_fix_trees():
		steps['replay um'] = ReplayRequest(src, on('um'), bounded=bounded)
	# The other changes' replays, where the kernel's series carries them
	# and its overlay reverts their changes (none for a replay of two
	# algorithms both in the tree).
	reverted = {f for t in overlay.before_fix_trees() if t.revert
		    for f in t.lacking}
	for rp in replay.REPLAYS.values():
		if rp.name != replay.MMAP_MISS and rp.fixes <= reverted and \
		   rp.scenarios in overlay.contents:
			steps[f'replay um {rp.name}'] = ReplayRequest(
				src, on('um'), replay=rp.name, bounded=bounded)
	if not req.everything:
		return steps
	steps.update({
		'run x86_64': RunRequest(src, on('x86_64')),
		'run x86_64 debug': RunRequest(src, on('x86_64', 'debug')),
		'run x86_64 distro': RunRequest(src, on('x86_64', 'distro')),
		# 4 KiB pages, where exec_folio_order() is not 0 either, and
		# the hand mutants that only arm64 runs (the VM_EXEC window's
		# rounding) or that need its THP.
		'run arm64': RunRequest(src, on('arm64')),
	})
	on_arm64 = tuple(m.name for m in overlay.mutants()
			 if 'arm64' in mu.arches(m))
	if on_arm64:
		steps['mutants arm64'] = MutantsRequest(src, on('arm64'),
							mutants=on_arm64)
	if src.names_kernel:
		return steps
	port = dataclasses.replace(src, tree=kernels.CHECKED_PORT)
	steps.update({
		# Held to the port's list: the 7.3 rows it fails by design.
		f'run {kernels.CHECKED_PORT} um': RunRequest(port, on('um'),
							     held_to_list=True),
		# A 20 GiB file in an 8 GiB guest, as the change was measured;
		# in the port's one tree: a second would be built for it alone.
		f'replay {kernels.CHECKED_PORT} um seed': ReplayRequest(
			port, on('um'), scale=Scale.SEED, workers=1),
	})
	for tree in kernels.OLDER:
		steps[f'fixes {tree} um'] = FixesRequest(
			dataclasses.replace(src, tree=tree), on('um'))
	return steps


def check_handler(req: CheckRequest,
		  execute: Callable[[Request], int]) -> int:
	"""Runs check's steps in turn with execute (cli.py's
	execute_reporting: a request run with its command's handler, an
	error the harness expects printed and turned into an exit code)."""
	steps = check_steps(req)
	outcome: Dict[str, int] = {}
	# Install everything first, what each step's session needs (its
	# arch's packages, its kernel's sources): the selftests run the
	# harness too.
	Session(req.source, req.build).ensure_deps(
		deps.SELFTEST, deps.REPLAY,
		*(Session(r.source, getattr(r, 'build', req.build)).requirements()
		  for r in steps.values()))
	for name, step in steps.items():
		print(f'\n=== check: {name} ===', flush=True)
		outcome[name] = execute(step)
	print()
	for name, rc in outcome.items():
		print(f'check {name}: {"ok" if rc == 0 else f"FAILED (exit {rc})"}')
	failed = sum(1 for rc in outcome.values() if rc != 0)
	print(f'check: {len(outcome) - failed} passed, {failed} failed')
	return EXIT_OK if not failed else EXIT_TESTS_FAILED
