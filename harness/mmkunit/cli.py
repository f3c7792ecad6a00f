# SPDX-License-Identifier: GPL-2.0
"""run_kunit.sh: build and run the mm KUnit suites on the real mm code."""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import datetime
import json
import re
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from mmkunit import deps
from mmkunit import export as ex
from mmkunit import fixes as fx
from mmkunit import kvm
from mmkunit import mutants as mu
from mmkunit import overlay as ov
from mmkunit import progress
from mmkunit import repeat
from mmkunit import replay
from mmkunit import reports
from mmkunit import runner
from mmkunit import trees

REPO = Path(__file__).resolve().parents[2]
KERNEL_DIR = REPO / 'kernel'
KUNIT_CONFIGS = REPO / 'kunit-configs'
WORKFLOW = REPO / '.github' / 'workflows' / 'mm-kunit.yml'
# Who signs the series `lint` checks: the same on every machine.
LINT_IDENTITY = ex.Identity('mm-kunit lint', 'lint@mm-kunit.example.org')

EXIT_OK = 0
EXIT_TESTS_FAILED = 1
EXIT_ERROR = 2

COMMANDS = ('run', 'prepare', 'export', 'lint', 'mutants', 'replay', 'fixes',
	    'selftest', 'check')

DESCRIPTION = """\
Build a kernel with the project's mm KUnit suites and run them.

commands (default: run):
  run        prepare the tree, build incrementally and run the suites
  prepare    prepare the tree (or, with --in-place, the user's tree) only
  export     write the series as git format-patch files for `git am`
  lint       checkpatch.pl --strict and a `git am` check of the series
  mutants    run the suites against every mutant and print the matrix
  replay     replay mmap access patterns on stock 6.12, P1, P2 and P1+P2 and
             tabulate and plot the I/O (CSV, PNG)
  fixes      run the suites on an older kernel (default: Debian's 6.1) and
             say which fixes it lacks, against kernel/compat/X.Y/expected
  selftest   the harness's own tests (no kernel build)
  check      everything CI runs: selftest, lint, run, mutants, replay and
             fixes (UML), run and the x86_64-only mutants (x86_64)

Run `./run_kunit.sh COMMAND --help` for a command's options.
"""


def overlay_dir(version: str = '') -> Path:
	"""$MM_KUNIT_OVERLAY, else the port of the series to the kernel's
	VERSION.PATCHLEVEL (kernel/compat/X.Y) if there is one, else kernel/."""
	if os.environ.get('MM_KUNIT_OVERLAY'):
		return Path(os.environ['MM_KUNIT_OVERLAY'])
	port = KERNEL_DIR / 'compat' / '.'.join(version.split('.')[:2])
	return port if version and port.is_dir() else KERNEL_DIR


class HarnessError(Exception):
	"""A setup error: printed as is, exit code 2."""


# What stops a command before or beside its tests: the setup, not a test.
SETUP_ERRORS = (HarnessError, ov.OverlayError, trees.TreeError,
		ex.ExportError, runner.ConfigError, replay.ReplayError,
		fx.ExpectedError)


def _common(p: argparse.ArgumentParser, tree_opts: bool = True) -> None:
	p.add_argument('--cache', type=Path, metavar='DIR',
		       help='where sources, trees, builds and results live '
		       '(default: $MM_KUNIT_CACHE, else $XDG_CACHE_HOME/mm-kunit)')
	p.add_argument('--no-install', action='store_true',
		       help='never install packages; say what is missing and stop')
	if tree_opts:
		p.add_argument('--kernel', type=Path, metavar='DIR',
			       help='use this kernel tree instead of Debian\'s '
			       'linux-source-6.12; it is only read, the overlay '
			       'goes onto a copy in the cache')
		p.add_argument('--tarball', type=Path, default=trees.DEFAULT_TARBALL,
			       help='kernel tarball for the default tree '
			       '(default: %(default)s)')


def _run_opts(p: argparse.ArgumentParser) -> None:
	p.add_argument('--arch', default='um',
		       help='kunit.py --arch: um (default, UML) or x86_64 (QEMU)')
	p.add_argument('--jobs', type=int, default=os.cpu_count() or 1,
		       help='parallel make jobs (default: %(default)s)')
	p.add_argument('--results', type=Path, metavar='DIR',
		       help='write the logs and JSON here (default: a new '
		       'directory under CACHE/results)')
	p.add_argument('-q', '--quiet', action='store_true',
		       help='do not echo kunit.py; print only the summary')
	p.add_argument('--config', metavar='NAME',
		       help='add kunit-configs/ARCH-NAME.config to the arch\'s '
		       'configuration, in a build directory of its own (e.g. '
		       '--arch x86_64 --config refs)')
	p.add_argument('--no-ccache', action='store_true',
		       help='compile without ccache (default: with ccache, its '
		       'cache in CACHE/ccache or $MM_KUNIT_CCACHE_DIR)')


def build_parser() -> argparse.ArgumentParser:
	parser = argparse.ArgumentParser(
		prog='run_kunit.sh', description=DESCRIPTION,
		formatter_class=argparse.RawDescriptionHelpFormatter)
	sub = parser.add_subparsers(dest='command', metavar='COMMAND')

	p = sub.add_parser('run', help='build and run the suites (default)',
			   description='Prepare the tree, build and run the suites. '
			   'Arguments after -- go to kunit.py run.')
	_common(p)
	_run_opts(p)
	p.add_argument('--in-place', action='store_true',
		       help='with --kernel: apply the overlay into DIR itself '
		       'and build there')
	p.add_argument('--without', action='append', default=[], metavar='PATCH',
		       help='leave this patch of the series out (repeatable), '
		       'e.g. to build a before-fix tree')
	p.add_argument('--each-commit', metavar='A..B',
		       help='with --kernel (a git tree): run each commit of '
		       'A..B in turn and print a commit x suite table')
	p.add_argument('--bisect', action='store_true',
		       help='exit codes for `git bisect run`: 0 passed, 1 a '
		       'test failed, 125 the commit cannot be tested (the '
		       'series does not apply, the kernel does not build), '
		       '128 a setup error (stops the bisection)')
	p.add_argument('--repeat', type=int, default=1, metavar='N',
		       help='run the built kernel N times (one build) and '
		       'report every test whose result was not the same in '
		       'each run, with the run numbers')
	p.add_argument('filter_glob', nargs='?',
		       help='which suites/tests to run, as kunit.py\'s '
		       'filter_glob, e.g. "mm_swap_readahead.swap_vma*"')

	p = sub.add_parser('prepare', help='prepare the tree only',
			   description='Prepare the tree and print its path. With '
			   '--kernel DIR --in-place, apply the overlay into DIR so '
			   'that kunit.py can be run there directly.')
	_common(p)
	p.add_argument('--in-place', action='store_true',
		       help='with --kernel: apply the overlay into DIR itself')
	p.add_argument('--without', action='append', default=[], metavar='PATCH',
		       help='leave this patch of the series out (repeatable)')

	p = sub.add_parser('export', help='write the series for git am',
			   description='Write the series as git format-patch '
			   'files that `git am` applies onto the kernel tree.')
	_common(p)
	p.add_argument('-o', '--output', type=Path, default=Path('series-out'),
		       help='output directory (default: %(default)s)')
	p.add_argument('--from', dest='from_', metavar='"NAME <EMAIL>"',
		       help='author and sign off the series as this (default: '
		       'git config user.name and user.email)')

	p = sub.add_parser('lint', help='checkpatch and git am check',
			   description='Export the series, run scripts/checkpatch.pl '
			   '--strict on each patch and check that `git am` applies '
			   'it onto the kernel tree.')
	_common(p)

	p = sub.add_parser('mutants', help='run the mutant matrix',
			   description='Apply each mutant of kernel/mutants on top '
			   'of the series, build incrementally, run the suites and '
			   'print which tests failed. Exits non-zero if a mutant '
			   'survives or does not build.')
	_common(p)
	_run_opts(p)
	p.add_argument('--workers', type=int, default=min(2, os.cpu_count() or 1),
		       metavar='N',
		       help='run mutants in N trees at once (default: %(default)s); '
		       'the extra trees are copies of the first, made once')
	p.add_argument('mutant', nargs='*',
		       help='only these mutants (file name globs)')

	p = sub.add_parser('replay', help='mmap access patterns on four builds',
			   description='Run the mm_filemap_replay suite on stock '
			   '6.12 (the series without its fixes), each fix alone '
			   'and all fixes, and write the pages read, major faults, '
			   'read-around faults and mmap_miss of each scenario as a '
			   'table, a CSV and a PNG plot.')
	_common(p)
	_run_opts(p)

	p = sub.add_parser('fixes', help='which fixes an older kernel lacks',
			   description='Build the suites on an older kernel through '
			   'the port of the series in kernel/compat/X.Y and hold '
			   'the results against its list of expected failures '
			   '(kernel/compat/X.Y/expected): each listed test must '
			   'fail, every other must pass. Prints the fixes the '
			   'kernel lacks; exits non-zero if the run differs from '
			   'the list.')
	_common(p)
	_run_opts(p)
	p.set_defaults(tarball=trees.FIXES_TARBALL, in_place=False)

	p = sub.add_parser('selftest', help='the harness\'s own tests',
			   description='Run the harness\'s own tests with pytest; '
			   'no kernel is built.')
	_common(p, tree_opts=False)
	p.add_argument('pytest_args', nargs='*')

	p = sub.add_parser('check', help='everything CI runs',
			   description='selftest, lint, run and mutants, in that '
			   'order; exits non-zero if any fails.')
	_common(p)
	_run_opts(p)
	return parser


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
	argv = list(argv)
	extra: List[str] = []
	if '--' in argv:
		i = argv.index('--')
		argv, extra = argv[:i], argv[i + 1:]
	if not argv or (argv[0] not in COMMANDS and argv[0] not in ('-h', '--help')):
		argv.insert(0, 'run')
	args = build_parser().parse_args(argv)
	args.kunit_args = extra
	if extra and args.command not in ('run', 'mutants', 'check'):
		build_parser().error(f'{args.command} takes no kunit.py arguments')
	if getattr(args, 'in_place', False) and not args.kernel:
		build_parser().error('--in-place needs --kernel DIR')
	if getattr(args, 'each_commit', None):
		if not args.kernel:
			build_parser().error('--each-commit needs --kernel DIR '
					     '(a git tree)')
		if args.in_place:
			build_parser().error('--each-commit builds in a clone; '
					     'it does not go with --in-place')
	return args


class Harness:
	"""What the commands share: the cache, the overlay and the tree."""

	def __init__(self, args: argparse.Namespace) -> None:
		self.args = args
		self.cache = (args.cache.resolve() if args.cache
			      else trees.cache_dir())
		self._overlay: Optional[ov.Overlay] = None

	@property
	def overlay(self) -> ov.Overlay:
		if self._overlay is None:
			self._overlay = ov.Overlay.load(overlay_dir(self.version))
			without = getattr(self.args, 'without', [])
			if without:
				self._overlay = self._overlay.without(without)
		return self._overlay

	@property
	def version(self) -> str:
		"""The kernel's version: the user's tree's or the tarball's (from
		its name; it need not be unpacked yet)."""
		a = self.args
		if getattr(a, 'kernel', None):
			return trees.kernel_version(a.kernel)
		if getattr(a, 'tarball', None):
			m = re.search(r'(\d+\.\d+(\.\d+)?)\.tar', a.tarball.name)
			if m:
				return m.group(1)
			return trees.kernel_version(self.source_tree())
		return ''

	def ensure_deps(self, *extra: Sequence[deps.Requirement]) -> None:
		reqs: List[deps.Requirement] = list(deps.BUILD)
		if not getattr(self.args, 'kernel', None):
			reqs += deps.source_for(self.args.tarball)
		if getattr(self.args, 'arch', 'um') == 'x86_64':
			reqs += deps.X86_64
		if self.ccache:
			reqs += deps.CCACHE
		for group in extra:
			reqs += group
		deps.ensure(reqs, allow_install=not self.args.no_install)

	@property
	def ccache(self) -> bool:
		"""Whether builds go through ccache (the commands that build)."""
		return (hasattr(self.args, 'no_ccache') and
			not self.args.no_ccache)

	def source_tree(self) -> Path:
		"""The unmodified kernel sources: the user's or the tarball's."""
		kernel: Optional[Path] = self.args.kernel
		if kernel:
			ov.check_kernel_tree(kernel.resolve())
			return kernel.resolve()
		return trees.unpack_tarball(self.args.tarball, self.cache)

	def prepared_tree(self) -> trees.PreparedTree:
		if self.args.kernel:
			return trees.user_tree(self.cache, self.args.kernel)
		return trees.default_tree(self.cache, self.args.tarball)

	def prepare(self, tree: trees.PreparedTree,
		    refresh_source: Optional[bool] = None) -> trees.PreparedTree:
		if refresh_source is None:
			refresh_source = bool(self.args.kernel)
		changed = tree.prepare(self.overlay, refresh_source=refresh_source)
		if changed:
			progress.progress(f'updated in {tree.src}: {", ".join(changed)}')
		return tree

	@property
	def build_key(self) -> str:
		"""Names the build directory: the arch, and the --config if any."""
		a = self.args
		name = getattr(a, 'config', None)
		return f'{a.arch}-{name}' if name else a.arch

	def run_options(self) -> runner.RunOptions:
		a = self.args
		configs = [KUNIT_CONFIGS / f'{a.arch}.config']
		if getattr(a, 'config', None):
			extra = KUNIT_CONFIGS / f'{a.arch}-{a.config}.config'
			if not extra.is_file():
				known = sorted(p.stem[len(a.arch) + 1:] for p in
					       KUNIT_CONFIGS.glob(f'{a.arch}-*.config'))
				raise HarnessError(
					f'no {extra.name} in {KUNIT_CONFIGS} (configs for '
					f'{a.arch}: {", ".join(known) or "none"})')
			configs.append(extra)
		qemu_args = KUNIT_CONFIGS / f'{a.arch}.qemu_args'
		# Boot options that go with a configuration: ARCH[-NAME].kernel_args.
		kernel_args = [arg for c in configs
			       for f in [c.with_suffix('.kernel_args')] if f.is_file()
			       for arg in f.read_text().split()]
		cc = runner.RunOptions()
		if self.ccache:
			cc = runner.ccache_options(
				Path(os.environ.get('MM_KUNIT_CCACHE_DIR') or
				     self.cache / 'ccache'))
		return runner.RunOptions(
			arch=a.arch, filter_glob=getattr(a, 'filter_glob', None),
			kunit_args=a.kunit_args, jobs=a.jobs,
			kunitconfigs=[c for c in configs if c.is_file()],
			qemu_args=(' '.join(qemu_args.read_text().split())
				   if qemu_args.is_file() else ''),
			kernel_args=kernel_args, quiet=a.quiet,
			make_options=cc.make_options, env=cc.env)


	def with_accel(self, opts: runner.RunOptions,
		       tree: trees.PreparedTree) -> runner.RunOptions:
		"""QEMU runs use KVM if it really works here (kvm.py), else TCG."""
		if opts.arch != 'x86_64':
			return opts
		image = tree.build_dir(self.build_key) / 'arch/x86/boot/bzImage'
		usable, why = kvm.kvm_works(
			self.cache, image,
			extra=('-bios', 'qboot.rom', *opts.qemu_args.split()))
		progress.progress('QEMU with KVM' if usable
				  else f'QEMU with TCG ({why})')
		opts.qemu_args = ' '.join(
			['-accel', 'kvm' if usable else 'tcg', opts.qemu_args]).strip()
		return opts

	def report_context(self, tree: trees.PreparedTree,
			   opts: runner.RunOptions) -> reports.Context:
		"""What the JUnit and KCIDB reports say about a run."""
		ov_ = self.overlay
		patches = [(p.name, p.text + b''.join(ov_.contents[f]
						      for f in p.new_files))
			   for p in ov_.patches]
		env = ('UML' if opts.arch == 'um' else
		       f'QEMU {opts.arch} (TCG) {opts.qemu_args}'.strip())
		return reports.Context(
			arch=opts.arch,
			started=datetime.datetime.now(datetime.timezone.utc),
			source=(self.args.kernel.resolve() if self.args.kernel
				else tree.source),
			patches=patches, environment=env,
			command=' '.join(['./run_kunit.sh'] + sys.argv[1:]))


def write_reports(result: runner.RunResult, ctx: reports.Context) -> None:
	"""junit.xml and kcidb.json in the run's results directory."""
	d = result.results_dir
	(d / 'junit.xml').write_text(reports.junit_xml(result, ctx))
	(d / 'kcidb.json').write_text(
		json.dumps(reports.kcidb(result, ctx), indent=1) + '\n')


@contextlib.contextmanager
def _prepared(h: Harness) -> Iterator[Tuple[trees.PreparedTree, Path]]:
	"""Holds the tree for this run, with the overlay applied.

	Yields the harness's tree (its build directories) and the source tree
	to build: with --in-place the user's own tree, which the overlay is
	applied into; otherwise the harness's prepared copy.
	"""
	src = h.args.kernel.resolve() if h.args.in_place else None
	tree = trees.user_tree(h.cache, src) if src else h.prepared_tree()
	with tree.locked():
		if src:
			changed = trees.apply_in_place(h.overlay, src)
			print(f'mm-kunit: overlay applied in {src}'
			      f' ({len(changed)} files written)')
		else:
			h.prepare(tree)
			src = tree.src
		yield tree, src


def _run(h: Harness) -> runner.RunResult:
	"""Prepares the tree, builds, runs and reports: what `run` does."""
	a = h.args
	h.ensure_deps()
	with _prepared(h) as (tree, src):
		build = tree.build_dir(h.build_key)
		results = a.results.resolve() if a.results else \
			runner.new_results_dir(h.cache, a.arch)
		progress.progress(f'running kunit.py in {src} (build: {build})')
		opts = h.with_accel(h.run_options(), tree)
		ctx = h.report_context(tree, opts)
		result = runner.run_kunit(src, build, opts, results)
		write_reports(result, ctx)
		repeats = _repeat(result, src, build, opts,
				  getattr(a, 'repeat', 1))
	if result.error:
		print(f'mm-kunit: error: {result.error}', file=sys.stderr)
	for line in ([] if result.booted else runner.build_errors(results)):
		print(f'mm-kunit: build: {line}', file=sys.stderr)
	for case in result.failed:
		print(f'mm-kunit: {case.status.value}: {case.name}')
	for complaint in result.complaints:
		print(f'mm-kunit: kernel warning while the tests ran: {complaint}')
	if result.boots > 1:
		print(f'mm-kunit: the kernel died before the end; the tests after '
		      f'each crash ran in further boots ({result.boots} in all)')
	print(f'mm-kunit: results in {results}')
	print(result.summary())
	if repeats:
		found = repeat.flakes(repeats)
		for flake in found:
			print(f'mm-kunit: flaky: {flake.describe()}')
		print(f'mm-kunit: {len(repeats)} runs, {len(found)} flaky')
		if found:
			result.error = result.error or f'{len(found)} flaky'
	return result


def _repeat(first: runner.RunResult, src: Path, build: Path,
	    opts: runner.RunOptions, times: int) -> List[runner.RunResult]:
	"""Runs the kernel the first run built times - 1 more times.

	Returns all the runs, the first included; none if times is 1 or the
	first run built nothing to run again.
	"""
	if times <= 1 or not first.booted:
		return []
	runs = [first]
	again = dataclasses.replace(opts, quiet=True)
	with progress.step(f'running the built kernel {times - 1} more times'):
		for n in range(2, times + 1):
			runs.append(runner.run_kunit(
				src, build, again, first.results_dir / f'repeat-{n}',
				exec_only=True))
	return runs


def cmd_run(h: Harness) -> int:
	if getattr(h.args, 'each_commit', None):
		return cmd_each_commit(h)
	result = _run(h)
	if h.args.bisect and result.untestable:
		return BISECT_SKIP
	return EXIT_OK if result.ok else EXIT_TESTS_FAILED


def cmd_fixes(h: Harness) -> int:
	"""Runs the suites on an older kernel, through its port of the series,
	and holds the results against the port's list of expected failures."""
	# The list that goes with the port the run applies.
	root = h.overlay.root
	expected = root / 'expected'
	if not expected.is_file():
		ports = sorted(p.name for p in (KERNEL_DIR / 'compat').glob('*')
			       if (p / 'expected').is_file())
		raise HarnessError(
			f'no port of the series to {h.version or "this kernel"} '
			f'with a list of expected failures ({expected}); ports: '
			f'{", ".join(ports) or "none"}')
	if h.args.arch != 'um':
		raise HarnessError('the lists of expected failures are worked out '
				   'for UML; fixes runs --arch um only')
	entries = fx.load_expected(expected)
	# Relative to the repository, unless $MM_KUNIT_OVERLAY is elsewhere.
	shown = root.relative_to(REPO) if root.is_relative_to(REPO) else root
	print(f'mm-kunit: {h.version} through {shown}')
	result = _run(h)
	if result.untestable:
		return EXIT_ERROR
	report = fx.judge(result.cases, entries)
	print(f'\nFixes {h.version} lacks, by the tests that stand for them '
	      f'({shown / "expected"}):')
	for line in report.lines():
		print(line)
	print(f'fixes: {"as expected" if report.ok else "NOT as expected"}')
	return EXIT_OK if report.ok else EXIT_TESTS_FAILED


# Exit codes for `git bisect run`, per commit.
BISECT_GOOD = 0
BISECT_BAD = 1
BISECT_SKIP = 125  # cannot be tested: does not apply or does not build
BISECT_ABORT = 128  # a setup error: stop the bisection


@dataclasses.dataclass
class CommitOutcome:
	commit: trees.Commit
	code: int  # a BISECT_* code
	note: str = ''  # why it could not be tested
	result: Optional[runner.RunResult] = None


def run_commit(h: Harness, tree: trees.PreparedTree, commit: trees.Commit,
	       results: Path) -> CommitOutcome:
	"""Prepares one commit of the user's tree, builds it and runs it."""
	trees.checkout_commit(tree, h.args.kernel, commit)
	try:
		h.prepare(tree, refresh_source=True)
	except ov.OverlayError as e:
		return CommitOutcome(commit, BISECT_SKIP,
				     'conflict: ' + str(e).splitlines()[0])
	opts = h.run_options()
	ctx = h.report_context(tree, opts)
	ctx.source = tree.source
	result = runner.run_kunit(tree.src, tree.build_dir(h.build_key), opts,
				  results)
	write_reports(result, ctx)
	if result.untestable:
		return CommitOutcome(commit, BISECT_SKIP, 'does not build or boot',
				     result)
	return CommitOutcome(commit, BISECT_GOOD if result.ok else BISECT_BAD,
			     '', result)


def format_commit_table(outcomes: Sequence[CommitOutcome]) -> str:
	"""commit x suite: passed/total per suite, and the bisect code."""
	suites: List[str] = []
	for o in outcomes:
		for case in (o.result.cases if o.result else []):
			suite = case.name.partition('.')[0]
			if suite not in suites:
				suites.append(suite)
	header = ['commit', *suites, 'exit', 'subject']
	rows = [header]
	for o in outcomes:
		cells = [o.commit.short]
		for suite in suites:
			cases = [c for c in (o.result.cases if o.result else [])
				 if c.name.partition('.')[0] == suite]
			bad = sum(1 for c in (o.result.failed if o.result else [])
				  if c.name.partition('.')[0] == suite)
			cells.append('-' if not cases else
				     f'ok {len(cases) - bad}/{len(cases)}' if not bad
				     else f'FAIL {bad}/{len(cases)}')
		cells += [str(o.code), o.commit.subject[:50] +
			  (f' ({o.note})' if o.note else '')]
		rows.append(cells)
	widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
	return '\n'.join('  '.join(c.ljust(w) for c, w in zip(r, widths)) +
			 '  ' + r[-1] for r in rows)


def cmd_each_commit(h: Harness) -> int:
	"""--each-commit A..B: each commit prepared, built and run in turn."""
	a = h.args
	h.ensure_deps()
	kernel = a.kernel.resolve()
	ov.check_kernel_tree(kernel)
	commits = trees.commit_range(kernel, a.each_commit)
	tree = trees.commits_tree(h.cache, kernel)
	base = a.results.resolve() if a.results else \
		runner.new_results_dir(h.cache, f'{a.arch}-commits')
	outcomes: List[CommitOutcome] = []
	with tree.locked():
		for n, commit in enumerate(commits, 1):
			progress.progress(f'commit {n}/{len(commits)}: {commit.short} '
					  f'{commit.subject}')
			o = run_commit(h, tree, commit, base / commit.short)
			if o.note:
				print(f'mm-kunit: {commit.short}: cannot be tested: {o.note}')
			if o.result:
				print(f'mm-kunit: {commit.short}: {o.result.summary()[10:]}')
			outcomes.append(o)
	print(format_commit_table(outcomes))
	print(f'mm-kunit: results in {base}')
	good = sum(1 for o in outcomes if o.code == BISECT_GOOD)
	print(f'mm-kunit: {good} of {len(outcomes)} commits passed')
	return EXIT_OK if good == len(outcomes) else EXIT_TESTS_FAILED


def cmd_prepare(h: Harness) -> int:
	h.ensure_deps()
	with _prepared(h) as (_, src):
		if not h.args.in_place:
			print(f'mm-kunit: prepared tree: {src}')
	print('Run the suites there with:\n'
	      f'  cd {src} && ./tools/testing/kunit/kunit.py run '
	      f'--kunitconfig={runner.SUITES_KUNITCONFIG}')
	return EXIT_OK


def cmd_export(h: Harness) -> int:
	h.ensure_deps()
	who = ex.user_identity(h.args.from_)
	out = ex.export(h.overlay, h.source_tree(), h.args.output, who)
	for p in out:
		print(p)
	cover = [p for p in out if p.name.startswith('0000-')]
	print(f'mm-kunit: {len(out) - len(cover)} patches'
	      f'{" and a cover letter" if cover else ""} in {h.args.output}, '
	      f'from {who}; apply with `git am`')
	return EXIT_OK


def cmd_lint(h: Harness) -> int:
	h.ensure_deps()
	tree = h.source_tree()
	with tempfile.TemporaryDirectory(prefix='mm-kunit-lint-') as tmp:
		report = ex.lint(h.overlay, tree, Path(tmp), LINT_IDENTITY)
		names = sorted(p.name for p in Path(tmp).glob('*.patch'))
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
	workflow_error = _zizmor(h)
	print(f'zizmor --offline {WORKFLOW.relative_to(REPO)}: ' +
	      ('ok' if not workflow_error else 'FAIL\n  ' + workflow_error))
	failed = len(report.checkpatch) + bool(report.am_error) + bool(workflow_error)
	print(f'lint: {len(names) + 2 - failed} passed, {failed} failed')
	return EXIT_OK if not failed else EXIT_TESTS_FAILED


def _zizmor(h: Harness) -> str:
	"""zizmor's findings on the GitHub Actions example, or ''."""
	target = deps.ensure_pypi(deps.LINT_PYPI, h.cache / 'zizmor',
				  allow_install=not h.args.no_install)
	proc = subprocess.run([str(target / 'bin' / 'zizmor'), '--offline',
			       str(WORKFLOW)], capture_output=True, text=True)
	return '' if proc.returncode == 0 else \
		(proc.stdout + proc.stderr).strip().replace('\n', '\n  ')


def cmd_mutants(h: Harness) -> int:
	a = h.args
	h.ensure_deps()
	chosen = mu.build_order(mu.select(h.overlay.mutants(),
					  getattr(a, 'mutant', [])))
	if not chosen:
		raise HarnessError(f'no mutants in {h.overlay.root / "mutants"}')
	full = not getattr(a, 'mutant', [])
	tree = h.prepared_tree()
	refresh = bool(a.kernel)
	# Check that every mutant applies before building anything.
	for m in chosen:
		ov.stage(h.overlay, tree.source, [m])
	opts = h.with_accel(h.run_options(), tree)
	opts.quiet = True
	started = time.monotonic()

	def run(t: trees.PreparedTree, overlay: ov.Overlay,
		extra: Sequence[ov.Patch], label: str) -> runner.RunResult:
		t.prepare(overlay, extra, refresh_source=refresh)
		progress.progress(label + (f' ({t.base.name})' if t is not tree else ''))
		# Mutants change C code only: the configuration made once
		# below holds, and plain make rebuilds what changed.
		code_only = all(f.endswith(('.c', '.h'))
				for p in extra for f in p.touched)
		return runner.run_kunit(
			t.src, t.build_dir(h.build_key), opts,
			runner.new_results_dir(h.cache, label.replace(' ', '-')),
			prebuilt_config=code_only)

	# The jobs, in order: each mutant, then the before-fix trees. Each
	# gives a function of the tree it runs in.
	jobs: List[Callable[[trees.PreparedTree], object]] = []
	def mutant_job(m: ov.Patch) -> Callable[[trees.PreparedTree], object]:
		if not mu.runs_on(m, a.arch):
			return lambda t: mu.not_here(m, a.arch)
		return lambda t: mu.judge(
			m, run(t, h.overlay, [m], f'mutant {Path(m.name).stem}'))

	def before_fix_job(names: List[str], globs: List[str]
			   ) -> Callable[[trees.PreparedTree], object]:
		label = 'before-fix without ' + ' '.join(n.split('-')[0] for n in names)
		return lambda t: mu.judge_before_fix(names, globs, run(
			t, h.overlay.without(names), [], label))

	jobs += [mutant_job(m) for m in chosen]
	jobs += [before_fix_job(names, globs) for names, globs in
		 (before_fix_trees(h.overlay) if full else [])]
	workers = [tree] + [tree.worker(n) for n in
			    range(2, min(a.workers, len(jobs)) + 1)]
	with contextlib.ExitStack() as stack:
		for t in workers:
			stack.enter_context(t.locked())
		done = _run_jobs(h, tree, workers, jobs, refresh, opts)
	results = [r for r in done if isinstance(r, mu.MutantResult)]
	before_fix = [r for r in done if isinstance(r, mu.BeforeFixResult)]

	print(mu.format_matrix(results))
	ok = all(r.verdict in (mu.Verdict.KILLED, mu.Verdict.NOT_HERE)
		 for r in results)
	if full:
		print(mu.format_before_fix(before_fix))
		ok = ok and all(r.ok for r in before_fix)
		# With every mutant run, each test must have failed at least once.
		never = mu.unguarded(results)
		for name in never:
			print(f'mm-kunit: no mutant makes this test fail: {name}')
		ok = ok and not never
	print(f'mm-kunit: mutant matrix took {time.monotonic() - started:.0f} s')
	return EXIT_OK if ok else EXIT_TESTS_FAILED


def _run_jobs(h: Harness, tree: trees.PreparedTree,
	      workers: Sequence[trees.PreparedTree],
	      jobs: Sequence[Callable[[trees.PreparedTree], object]],
	      refresh: bool, opts: runner.RunOptions) -> List[object]:
	"""Runs the jobs on the worker trees, each tree one job at a time;
	returns their results in the jobs' order. Every tree holds the bare
	series again afterwards, also when interrupted."""
	results: List[object] = [None] * len(jobs)
	todo = list(range(len(jobs)))
	lock = threading.Lock()
	stop = threading.Event()

	def work(t: trees.PreparedTree) -> None:
		while not stop.is_set():
			with lock:
				if not todo:
					return
				i = todo.pop(0)
			results[i] = jobs[i](t)

	ready = [tree]
	try:
		tree.prepare(h.overlay, refresh_source=refresh)
		runner.configure(tree.src, tree.build_dir(h.build_key), opts,
				 runner.new_results_dir(h.cache, 'mutants-config')
				 / 'kunit-config.out')
		if len(workers) > 1 and todo and \
		   not (tree.build_dir(h.build_key) / 'vmlinux').is_file():
			# Build once here, so that the other trees copy a built
			# tree instead of each building from cold.
			i = todo.pop(0)
			results[i] = jobs[i](tree)
		for t in workers[1:]:
			t.clone_from(tree, h.build_key)
			ready.append(t)
		with concurrent.futures.ThreadPoolExecutor(len(workers)) as pool:
			futures = [pool.submit(work, t) for t in workers]
			try:
				for f in futures:
					f.result()
			finally:
				stop.set()
	finally:
		for t in ready:
			t.prepare(h.overlay, refresh_source=refresh)
	return results


def before_fix_trees(overlay: ov.Overlay) -> List[Tuple[List[str], List[str]]]:
	"""Each fix alone taken out, then (if several) all of them at once."""
	fixes = overlay.fixes()
	trees_: List[Tuple[List[str], List[str]]] = [
		([name], list(globs)) for name, globs in fixes.items()]
	if len(fixes) > 1:
		trees_.append((list(fixes), [g for globs in fixes.values() for g in globs]))
	return trees_


def replay_builds(overlay: ov.Overlay) -> List[Tuple[str, List[str]]]:
	"""(label, patches left out): stock, each fix alone, all fixes.

	The fixes are P1, P2, ... in the order of kernel/patches/fixes."""
	fixes = list(overlay.fixes())
	if not fixes:
		return [('series', [])]
	labels = {name: f'P{i}' for i, name in enumerate(fixes, 1)}
	builds = [('stock', list(fixes))]
	if len(fixes) > 1:
		builds += [(f'{labels[f]} only', [g for g in fixes if g != f])
			   for f in fixes]
	builds.append(('+'.join(labels[f] for f in fixes), []))
	return builds


def cmd_replay(h: Harness) -> int:
	a = h.args
	h.ensure_deps(deps.REPLAY)
	opts = h.run_options()
	opts.filter_glob = replay.SUITE
	opts.kunit_args = [f'--kconfig_add={replay.KCONFIG}', *a.kunit_args]
	base = a.results.resolve() if a.results else \
		runner.new_results_dir(h.cache, f'{a.arch}-replay')
	tree = h.prepared_tree()
	rows: List[replay.Row] = []
	failed: List[str] = []
	started = time.monotonic()
	with tree.locked():
		try:
			for label, without in replay_builds(h.overlay):
				tree.prepare(h.overlay.without(without),
					     refresh_source=bool(a.kernel))
				progress.progress(f'replay on {label}')
				result = runner.run_kunit(
					tree.src, tree.build_dir(h.build_key), opts,
					base / re.sub(r'[^A-Za-z0-9]+', '-', label))
				ktap = result.results_dir / 'ktap.log'
				found = replay.parse(label, ktap.read_text()
						     if ktap.is_file() else '')
				if not result.ok or not found:
					failed.append(label)
					print(f'mm-kunit: replay on {label}: '
					      f'{result.error or result.summary()}')
					for case in result.failed:
						print(f'mm-kunit: {case.status.value}: {case.name}')
				rows += found
		finally:
			tree.prepare(h.overlay, refresh_source=bool(a.kernel))
	(base / 'replay.csv').write_text(replay.to_csv(rows))
	for metric in replay.METRICS[1:]:
		print(replay.table(rows, metric) + '\n')
	if rows:
		replay.plot(rows, base / 'replay.png',
			    title=f'mm_filemap_replay ({a.arch}): stock vs the '
			    'mmap_miss proposal')
	print(f'mm-kunit: replay table in {base / "replay.csv"}'
	      + (f' and {base / "replay.png"}' if rows else ''))
	print(f'mm-kunit: replay took {time.monotonic() - started:.0f} s')
	return EXIT_OK if not failed else EXIT_TESTS_FAILED


def cmd_selftest(h: Harness) -> int:
	deps.ensure(deps.SELFTEST + deps.BUILD, allow_install=not h.args.no_install)
	pypi = deps.ensure_pypi(
		deps.SELFTEST_PYPI,
		h.cache / f'python{sys.version_info[0]}.{sys.version_info[1]}',
		allow_install=not h.args.no_install)
	path = os.pathsep.join(filter(None, [str(pypi),
					     os.environ.get('PYTHONPATH')]))
	env = dict(os.environ, PYTHONPATH=path)
	# The harness's type hints, checked strictly.
	mypy = subprocess.run([sys.executable, '-m', 'mypy', '--strict',
			       '--cache-dir', str(h.cache / 'mypy-cache'),
			       str(REPO / 'harness' / 'mmkunit'),
			       str(REPO / 'harness' / 'benchmark.py')],
			      cwd=REPO, env=env).returncode
	cmd = [sys.executable, '-m', 'pytest', '-q', str(REPO / 'harness' / 'tests')]
	tests = subprocess.run(cmd + list(h.args.pytest_args), cwd=REPO,
			       env=env).returncode
	return tests or mypy


def _step_args(check: argparse.Namespace, command: str, arch: str,
	       mutants: Sequence[str], config: Optional[str],
	       filter_glob: Optional[str]) -> argparse.Namespace:
	"""The arguments `command` would have been given on the command line,
	with check's shared options (--kernel, --cache, ...) carried over."""
	args = build_parser().parse_args([command])
	defaults = vars(build_parser().parse_args(['check']))
	for name, value in vars(check).items():
		# What was given to check; the command keeps its own defaults
		# (fixes its older kernel's tarball, say).
		if (name != 'command' and hasattr(args, name) and
		    (name not in defaults or value != defaults[name])):
			setattr(args, name, value)
	args.kunit_args = list(check.kunit_args)
	for name, value in (('arch', arch), ('config', config),
			    ('filter_glob', filter_glob),
			    ('mutant', list(mutants))):
		if hasattr(args, name):
			setattr(args, name, value)
	return args


def _step(command: str, arch: str = 'um', mutants: Sequence[str] = (),
	  config: Optional[str] = None,
	  filter_glob: Optional[str] = None) -> Callable[[Harness], int]:
	"""A check step that runs a command with --arch (and --config, a
	filter), with the arguments that command's own parser gives."""
	def step(h: Harness) -> int:
		args = _step_args(h.args, command, arch, mutants, config,
				  filter_glob)
		return HANDLERS[command](Harness(args))
	return step


def check_steps(h: Harness) -> Dict[str, Callable[[Harness], int]]:
	"""What `check` runs, in order."""
	# The mutants only another arch can kill, run on that arch.
	x86_only = [m.name for m in h.overlay.mutants()
		    if mu.arches(m) and 'um' not in mu.arches(m)
		    and 'x86_64' in mu.arches(m)]
	steps: Dict[str, Callable[[Harness], int]] = {
		'selftest': _step('selftest'),
		'lint': _step('lint'),
		'run um': _step('run'),
		# The kernel's own checkers (kunit-configs/um-debug.config).
		'run um debug': _step('run', config='debug'),
		'mutants um': _step('mutants'),
		'replay um': _step('replay'),
		# Debian's 6.1 as a second before-fix tree (kernel/compat/6.1).
		'fixes 6.1 um': _step('fixes'),
		'run x86_64': _step('run', 'x86_64'),
		'run x86_64 debug': _step('run', 'x86_64', config='debug'),
		# Another LRU_REFS_WIDTH (kunit-configs/x86_64-refs.config).
		'run x86_64 refs': _step('run', 'x86_64', config='refs',
					 filter_glob='mm_vmscan_mglru'),
	}
	if x86_only:
		steps['mutants x86_64'] = _step('mutants', 'x86_64', x86_only)
	return steps


def cmd_check(h: Harness) -> int:
	steps = check_steps(h)
	outcome: Dict[str, int] = {}
	# Install everything first: the selftests run the harness too.
	h.ensure_deps(deps.SELFTEST, deps.X86_64, deps.REPLAY,
		      deps.source_for(trees.FIXES_TARBALL))
	for name, fn in steps.items():
		print(f'\n=== check: {name} ===', flush=True)
		try:
			outcome[name] = fn(h)
		except (deps.MissingDependencies, *SETUP_ERRORS) as e:
			print(f'mm-kunit: error: {e}', file=sys.stderr)
			outcome[name] = EXIT_ERROR
	print()
	for name, rc in outcome.items():
		print(f'check {name}: {"ok" if rc == 0 else f"FAILED (exit {rc})"}')
	failed = sum(1 for rc in outcome.values() if rc != 0)
	print(f'check: {len(outcome) - failed} passed, {failed} failed')
	return EXIT_OK if not failed else EXIT_TESTS_FAILED


HANDLERS: Dict[str, Callable[[Harness], int]] = {
	'run': cmd_run, 'prepare': cmd_prepare, 'export': cmd_export,
	'lint': cmd_lint, 'mutants': cmd_mutants, 'replay': cmd_replay,
	'fixes': cmd_fixes,
	'selftest': cmd_selftest,
	'check': cmd_check,
}


def _exit_on_sigterm(signum: int, frame: object) -> None:
	# Unwind like Ctrl-C, so that a cancelled run (a CI job, say) takes a
	# mutant out of the prepared tree again before it exits.
	raise SystemExit(128 + signum)


def main(argv: Optional[Sequence[str]] = None) -> int:
	signal.signal(signal.SIGTERM, _exit_on_sigterm)
	args = parse_args(sys.argv[1:] if argv is None else argv)
	progress.set_quiet(getattr(args, 'quiet', False))
	bisect = getattr(args, 'bisect', False)
	setup_error = BISECT_ABORT if bisect else EXIT_ERROR
	try:
		return HANDLERS[args.command](Harness(args))
	except deps.MissingDependencies as e:
		print(f'mm-kunit: {e}', file=sys.stderr)
		return setup_error
	except ov.PatchFailed as e:
		# The series does not apply to this tree: for git bisect, a
		# commit that cannot be tested.
		print(f'mm-kunit: error: {e}', file=sys.stderr)
		return BISECT_SKIP if bisect else EXIT_ERROR
	except SETUP_ERRORS as e:
		print(f'mm-kunit: error: {e}', file=sys.stderr)
		return setup_error
	except KeyboardInterrupt:
		print('mm-kunit: interrupted', file=sys.stderr)
		return 130
