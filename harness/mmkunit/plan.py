# SPDX-License-Identifier: GPL-2.0
"""Runs a request: dependencies, tree, overlay, accelerator, kunit.py,
reports, in that order. `check` is a list of requests run in turn."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, Optional

from mmkunit import commits
from mmkunit import coverage
from mmkunit import deps
from mmkunit import export as ex
from mmkunit import expected
from mmkunit import generated
from mmkunit import kernels
from mmkunit import mutants as mu
from mmkunit import overlay as ov
from mmkunit import replay
from mmkunit import runs
from mmkunit import runner
from mmkunit import trees
from mmkunit import workflow
from mmkunit.request import (
	EXIT_ERROR, EXIT_OK, EXIT_TESTS_FAILED, Build, CheckRequest,
	CoverageRequest, ExportRequest, FixesRequest, LintRequest,
	MutantsRequest, PrepareRequest, ReplayRequest, Request, RunRequest,
	Scale, SelftestRequest)
from mmkunit.session import KERNEL_DIR, REPO, HarnessError, Session

# Who signs the series `lint` checks: the same on every machine.
LINT_IDENTITY = ex.Identity('mm-kunit lint', 'lint@mm-kunit.example.org')

# The port `check` runs beside the default kernel, and replays at a
# benchmark's scale (its own mmap_miss patches left out in turn).
PORT_TREE = '6.12'
# The older kernels `fixes` runs unless told otherwise.
FIXES_TREES = ('6.12', '6.1')

# What stops a command before or beside its tests: the setup, not a test.
SETUP_ERRORS = (HarnessError, ov.OverlayError, trees.TreeError,
		ex.ExportError, kernels.FetchError, runner.ConfigError,
		runner.StaleKernelError, replay.ReplayError,
		expected.ExpectedError)


def run_handler(req: RunRequest) -> int:
	s = Session(req.source, req.build, req.without)
	if req.each_commit and req.source.kernel:
		return commits.each_commit(s, req.source.kernel, req.each_commit,
					   req.filter_glob)
	result = runs.run_suites(s, req.in_place, req.filter_glob, req.repeat)
	if req.bisect and result.untestable:
		return commits.BISECT_SKIP
	return EXIT_OK if result.ok else EXIT_TESTS_FAILED


def prepare_handler(req: PrepareRequest) -> int:
	s = Session(req.source, without=req.without)
	s.ensure_deps()
	with s.prepared(req.in_place) as (_, src):
		if not req.in_place:
			print(f'mm-kunit: prepared tree: {src}')
	print('Run the suites there with:\n'
	      f'  cd {src} && ./tools/testing/kunit/kunit.py run '
	      f'--kunitconfig={runner.SUITES_KUNITCONFIG}')
	return EXIT_OK


def export_handler(req: ExportRequest) -> int:
	s = Session(req.source)
	s.ensure_deps()
	if req.refresh:
		for p in ex.refresh(s.overlay, s.source_tree()):
			print(f'mm-kunit: refreshed {p}')
		return EXIT_OK
	who = ex.user_identity(req.author)
	base = req.base
	if not base and req.source.kernel:
		base = trees.clean_head(req.source.kernel)
	out = ex.export(s.overlay, s.source_tree(), req.output, who,
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


def lint_handler(req: LintRequest) -> int:
	s = Session(req.source)
	s.ensure_deps()
	tree = s.source_tree()
	with tempfile.TemporaryDirectory(prefix='mm-kunit-lint-') as tmp:
		report = ex.lint(s.overlay, tree, Path(tmp), LINT_IDENTITY)
		names = sorted(p.name for p in Path(tmp).rglob('*.patch'))
	for name in names:
		status = 'FAIL' if name in report.checkpatch else 'ok'
		print(f'checkpatch --strict: {status}: {name}')
		if name in report.checkpatch:
			print('  ' + report.checkpatch[name].replace('\n', '\n  '))
		if name in report.maintainers:
			print('  new files already in MAINTAINERS: ' +
			      report.maintainers[name])
	print('git am onto ' + str(tree) + ': ' +
	      ('ok' if not report.am_error else 'FAIL\n  ' + report.am_error))
	print('the series carries kernel/\'s test files: ' +
	      ('ok' if not report.stale else 'FAIL\n  ' +
	       '\n  '.join(report.stale) +
	       '\n  (./run_kunit.sh export --refresh writes them in)'))
	found = workflow.zizmor_findings(s.cache, req.source.install)
	print(f'zizmor --offline {workflow.WORKFLOW.relative_to(REPO)}: ' +
	      ('ok' if not found else 'FAIL\n  ' + found))
	failed = (len(report.checkpatch) + bool(report.am_error)
		  + bool(report.stale) + bool(found))
	print(f'lint: {len(names) + 3 - failed} passed, {failed} failed')
	return EXIT_OK if not failed else EXIT_TESTS_FAILED


def mutants_handler(req: MutantsRequest) -> int:
	if req.merge:
		return generated.merge(req.merge)
	if req.generated:
		return generated.run_generated(Session(req.source, req.build), req)
	return mu.run_matrix(Session(req.source, req.build), req)


def replay_handler(req: ReplayRequest) -> int:
	return replay.run_replay(Session(req.source, req.build), req)


def fixes_handler(req: FixesRequest) -> int:
	"""Runs the suites on each older kernel (or the one given), through
	its port of the series, and holds the results against the port's
	list of expected failures."""
	src = req.source
	if src.names_kernel:
		return _fixes_on(Session(src, req.build))
	rcs = [_fixes_on(Session(src, req.build, tree=tree))
	       for tree in FIXES_TREES]
	return max(rcs)


def _fixes_on(s: Session) -> int:
	"""fixes on one kernel. A port that carries fixes of its own as
	patches (the 6.12 port's mmap_miss patches) is built without them:
	the kernel as it is must fail the tests its list names for them."""
	# The list that goes with the port the run applies.
	root = s.overlay.root
	listed = root / 'expected'
	if root.resolve() == KERNEL_DIR.resolve() or not listed.is_file():
		ports = sorted(p.name for p in (KERNEL_DIR / 'compat').glob('*')
			       if (p / 'expected').is_file())
		raise HarnessError(
			f'no port of the series to {s.version or "this kernel"} '
			f'with a list of expected failures ({listed}); ports: '
			f'{", ".join(ports) or "none"}')
	if s.build.arch != 'um':
		raise HarnessError('the lists of expected failures are worked out '
				   'for UML; fixes runs --arch um only')
	entries = s.overlay.expected()
	own = sorted({e.why for e in entries if e.kind == expected.Kind.FAILS} &
		     {p.name for p in s.overlay.patches})
	if own:
		s = Session(s.source, s.build, own, tree=s.kernel.series)
	# Relative to the repository, unless $MM_KUNIT_OVERLAY is elsewhere.
	shown = root.relative_to(REPO) if root.is_relative_to(REPO) else root
	print(f'mm-kunit: {s.version} through {shown}' +
	      (f', without {", ".join(own)}' if own else ''))
	result = runs.run_suites(s)
	if result.untestable:
		return EXIT_ERROR
	report = expected.judge(result.cases, entries)
	print(f'\nFixes {s.version} lacks, by the tests that stand for them '
	      f'({shown / "expected"}):')
	for line in report.lines():
		print(line)
	print(f'fixes: {"as expected" if report.ok else "NOT as expected"}')
	return EXIT_OK if report.ok else EXIT_TESTS_FAILED


def coverage_handler(req: CoverageRequest) -> int:
	return coverage.run_coverage(Session(req.source, dataclasses.replace(
		req.build, config=coverage.CONFIG)))


def selftest_handler(req: SelftestRequest) -> int:
	s = Session(req.source)
	install = req.source.install
	deps.ensure(deps.SELFTEST + deps.BUILD, allow_install=install)
	pypi = deps.ensure_pypi(
		deps.SELFTEST_PYPI,
		s.cache / f'python{sys.version_info[0]}.{sys.version_info[1]}',
		allow_install=install)
	path = os.pathsep.join(filter(None, [str(pypi),
					     os.environ.get('PYTHONPATH')]))
	env = dict(os.environ, PYTHONPATH=path)
	# The harness's type hints, checked strictly.
	mypy = subprocess.run([sys.executable, '-m', 'mypy', '--strict',
			       '--cache-dir', str(s.cache / 'mypy-cache'),
			       str(REPO / 'harness' / 'mmkunit'),
			       str(REPO / 'harness' / 'benchmark.py')],
			      cwd=REPO, env=env).returncode
	cmd = [sys.executable, '-m', 'pytest', '-q', str(REPO / 'harness' / 'tests')]
	tests = subprocess.run(cmd + list(req.pytest_args), cwd=REPO,
			       env=env).returncode
	return tests or mypy


def check_steps(req: CheckRequest) -> Dict[str, Request]:
	"""What `check` runs, in order: check's options, each step's arch.

	The default kernel (or the one given) gets every step, the replay of
	the mmap_miss change among them; the 6.12 port is run, and replays
	its own version of the change at a benchmark's scale; the older
	kernels are held to their lists (fixes). The generated mutants,
	coverage, the replay of 7.3 at that scale and the 6.12 port's own
	matrix are commands of their own (docs/costs.md)."""
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
	}
	if overlay.mutants():
		steps['mutants um'] = MutantsRequest(src, on('um'))
	if overlay.before_fix_trees():
		steps['replay um'] = ReplayRequest(src, on('um'))
	steps.update({
		'run x86_64': RunRequest(src, on('x86_64')),
		'run x86_64 debug': RunRequest(src, on('x86_64', 'debug')),
		'run x86_64 distro': RunRequest(src, on('x86_64', 'distro')),
	})
	if src.names_kernel:
		return steps
	port = dataclasses.replace(src, tree=PORT_TREE)
	steps.update({
		f'run {PORT_TREE} um': RunRequest(port, on('um')),
		# A 20 GiB file in an 8 GiB guest, as the change was measured;
		# in the port's one tree: a second would be built for it alone.
		f'replay {PORT_TREE} um seed': ReplayRequest(
			port, on('um'), scale=Scale.SEED, workers=1),
	})
	for tree in FIXES_TREES:
		steps[f'fixes {tree} um'] = FixesRequest(
			dataclasses.replace(src, tree=tree), on('um'))
	return steps


def check_handler(req: CheckRequest,
		  execute: Callable[[Request], int]) -> int:
	"""Runs check's steps in turn with execute (cli.py's, which runs a
	request with its command's handler)."""
	steps = check_steps(req)
	outcome: Dict[str, int] = {}
	# Install everything first: the selftests run the harness too.
	Session(req.source, req.build).ensure_deps(
		deps.SELFTEST, deps.X86_64, deps.REPLAY, deps.COVERAGE,
		*(deps.kernel_source(kernels.KERNELS[t]) for t in FIXES_TREES))
	for name, step in steps.items():
		print(f'\n=== check: {name} ===', flush=True)
		try:
			outcome[name] = execute(step)
		except (deps.MissingDependencies, *SETUP_ERRORS) as e:
			print(f'mm-kunit: error: {e}', file=sys.stderr)
			outcome[name] = EXIT_ERROR
	print()
	for name, rc in outcome.items():
		print(f'check {name}: {"ok" if rc == 0 else f"FAILED (exit {rc})"}')
	failed = sum(1 for rc in outcome.values() if rc != 0)
	print(f'check: {len(outcome) - failed} passed, {failed} failed')
	return EXIT_OK if not failed else EXIT_TESTS_FAILED
