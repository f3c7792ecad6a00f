# SPDX-License-Identifier: GPL-2.0
"""run_kunit.sh: the table of commands (each one's options, the request
they are parsed into (request.py) and the handler that runs it), the
command line parsed by it, and the harness's errors as exit codes."""

from __future__ import annotations

import argparse
import dataclasses
import re
import resource
import signal
import sys
from pathlib import Path
from typing import (Any, Callable, Dict, Generic, List, Optional, Sequence,
		    Tuple, Type, TypeVar)

from mmkunit import arches
from mmkunit import commits
from mmkunit import deps
from mmkunit import fixes
from mmkunit import kernels
from mmkunit import overlay as ov
from mmkunit import handlers
from mmkunit import progress
from mmkunit import selftest
from mmkunit.request import (
	EXIT_ERROR, Build, CheckRequest, CoverageRequest, ExportRequest,
	FixesRequest, LintRequest, MutantsRequest, PrepareRequest,
	ReplayRequest, Request, RunRequest, Scale, SelftestRequest, Source,
	WORKERS)

DESCRIPTION = """\
Build a kernel with the project's mm KUnit suites and run them. The default
command is run; `./run_kunit.sh COMMAND --help` lists a command's options.
"""


def _common(p: argparse.ArgumentParser, tree_opts: bool = True) -> None:
	p.add_argument('--cache', type=Path, metavar='DIR',
		       help='where sources, trees, builds and results live '
		       '(default: $MM_KUNIT_CACHE, else $XDG_CACHE_HOME/mm-kunit)')
	p.add_argument('--no-install', action='store_true',
		       help='never install packages; say what is missing and stop')
	if tree_opts:
		p.add_argument('--tree', choices=list(kernels.KERNELS),
			       help='which Debian kernel (linux-source-X.Y) to '
			       f'build (default: {kernels.DEFAULT}; for fixes, '
			       f'{" and ".join(kernels.OLDER)} in turn)')
		p.add_argument('--kernel', type=Path, metavar='DIR',
			       help='use this kernel tree instead of a Debian '
			       'kernel; it is only read, the overlay goes onto '
			       'a copy in the cache')
		p.add_argument('--tarball', type=Path,
			       help='a kernel tarball instead of a Debian kernel')


def _workers(p: argparse.ArgumentParser, what: str) -> None:
	p.add_argument('--workers', type=int, default=WORKERS,
		       metavar='N',
		       help=f'run {what} in N trees at once (default: %(default)s); '
		       'the extra trees are copies of the first, made once')


def _build_opts(p: argparse.ArgumentParser) -> None:
	p.add_argument('--arch', default=Build.arch,
		       help='kunit.py --arch, one of: ' + ', '.join(
			       f'{a.name} ({a.runs_under}'
			       f'{", the default" if a.name == Build.arch else ""})'
			       for a in arches.ARCHES.values()))
	p.add_argument('--jobs', type=int, default=Build.jobs,
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


def _with_build(p: argparse.ArgumentParser) -> None:
	"""The options of a command that builds and runs the suites."""
	_common(p)
	_build_opts(p)


def _check_args(p: argparse.ArgumentParser) -> None:
	_with_build(p)
	p.add_argument('--all', action='store_true',
		       help='the QEMU arches, the 6.12 port, the older '
		       'kernels and the replays\' columns without bounds too '
		       '(hours: docs/costs.md)')


def _series_opts(p: argparse.ArgumentParser) -> None:
	"""Where the series goes, and which of its patches."""
	p.add_argument('--in-place', action='store_true',
		       help='with --kernel: apply the overlay into DIR itself '
		       '(and build there)')
	p.add_argument('--without', action='append', default=[], metavar='PATCH',
		       help='leave this patch of the series out (repeatable), '
		       'e.g. to build a before-fix tree')


def _run_args(p: argparse.ArgumentParser) -> None:
	_with_build(p)
	_series_opts(p)
	p.add_argument('--each-commit', metavar='A..B',
		       help='with --kernel (a git tree): run each commit of '
		       'A..B in turn and print a commit x suite table')
	p.add_argument('--bisect', action='store_true',
		       help='exit codes for `git bisect run`: 0 passed, 1 a '
		       'test failed, 125 the commit cannot be tested (the '
		       'series does not apply, the kernel does not build), '
		       '128 a setup error (stops the bisection)')
	p.add_argument('--repeat', type=int, default=RunRequest.repeat,
		       metavar='N',
		       help='run the built kernel N times (one build) and '
		       'report every test whose result was not the same in '
		       'each run, with the run numbers')
	p.add_argument('--watch', action='store_true',
		       help='stay and run again: after each change of the '
		       'kernel tree (--kernel), the overlay or kunit-configs, '
		       'and on Enter; Ctrl-D stops')
	p.add_argument('filter_glob', nargs='?',
		       help='which suites/tests to run, as kunit.py\'s '
		       'filter_glob, e.g. "mm_swap_readahead.swap_vma*"')


def _prepare_args(p: argparse.ArgumentParser) -> None:
	_common(p)
	_series_opts(p)


def _export_args(p: argparse.ArgumentParser) -> None:
	_common(p)
	p.add_argument('-o', '--output', type=Path,
		       default=ExportRequest.output,
		       help='output directory (default: %(default)s)')
	p.add_argument('--from', dest='from_', metavar='"NAME <EMAIL>"',
		       help='author and sign off the series as this (default: '
		       'git config user.name and user.email)')
	p.add_argument('--local', action='store_true',
		       help='the project\'s own patches (kernel/patches/local: '
		       'the replay benchmark) instead of the series for '
		       'upstream, to apply on top of it')
	p.add_argument('--base', metavar='COMMIT',
		       help='the commit the series applies to, named in a '
		       'base-commit: line (default: HEAD of a --kernel git '
		       'tree without changes)')
	p.add_argument('--refresh', action='store_true',
		       help='rewrite kernel/patches as export makes them: each '
		       'patch its message and hooks, the test files it adds '
		       'named, not copied (lint checks)')


def _mutants_args(p: argparse.ArgumentParser) -> None:
	from mmkunit import mutagen
	_with_build(p)
	_workers(p, 'mutants')
	p.add_argument('--generated', action='store_true',
		       help='mutants generated from the source of the pinned '
		       'functions (kernel/pinned), each classified as killed, '
		       'survived, unviable or equivalent, and a score per '
		       'function; MUTANT names functions then')
	p.add_argument('--rebuild', action='store_true',
		       help='build each mutant into a kernel of its own, '
		       'instead of many into one behind a boot option (mutant '
		       'schemata; slower, for checking them)')
	p.add_argument('--in-diff', metavar='A..B',
		       help='with --generated and --kernel (a git tree): only '
		       'the mutants on lines that A..B changes')
	p.add_argument('--operator', type=_operators, default=(),
		       metavar='OP[,OP]',
		       help='with --generated: only the mutants of these '
		       f'operators ({", ".join(mutagen.OPERATORS)})')
	p.add_argument('--sample', type=int, metavar='N',
		       help='with --generated: N mutants drawn with --seed')
	p.add_argument('--seed', type=int, default=MutantsRequest.seed,
		       help='the seed of --sample (default: %(default)s)')
	p.add_argument('--shard', type=_shard, metavar='K/N',
		       help='with --generated: the K-th of N shares (0-based), '
		       'for a CI matrix; merge their JSON with --merge')
	p.add_argument('--merge', type=Path, nargs='+', metavar='JSON',
		       default=[], help='print the table of these shards\' '
		       'mutants.json files, and check the threshold')
	p.add_argument('mutant', nargs='*',
		       help='only these mutants (file name globs); with '
		       '--generated, only these functions, or mutant ids '
		       '(function:line:column:operator, or the start of one)')


def _replay_args(p: argparse.ArgumentParser) -> None:
	from mmkunit import replay
	_with_build(p)
	p.add_argument('replay', nargs='?', choices=list(replay.REPLAYS),
		       default=ReplayRequest.replay,
		       help='which change\'s replay (default: %(default)s)')
	p.add_argument('--scale', choices=[s.value for s in Scale],
		       default=ReplayRequest.scale.value,
		       help='small (default, seconds) or seed (a 20 GiB file in '
		       'an 8 GiB guest, as the change was measured; minutes)')
	p.add_argument('--bounded', action='store_true',
		       help='only the builds held to bounds: not the columns '
		       'of further configurations (thrash: mglru)')
	_workers(p, 'the builds')


def _selftest_args(p: argparse.ArgumentParser) -> None:
	_common(p, tree_opts=False)
	p.add_argument('pytest_args', nargs='*')


def _shard(text: str) -> Tuple[int, int]:
	k, _, n = text.partition('/')
	if not (k.isdigit() and n.isdigit() and int(k) < int(n)):
		raise argparse.ArgumentTypeError(f'want K/N with 0 <= K < N, '
						  f'got {text}')
	return int(k), int(n)


def _operators(text: str) -> Tuple[str, ...]:
	from mmkunit import mutagen
	ops = tuple(text.split(','))
	unknown = [op for op in ops if op not in mutagen.OPERATORS]
	if unknown:
		raise argparse.ArgumentTypeError(
			f'unknown operator: {" ".join(unknown)} (the operators: '
			f'{",".join(mutagen.OPERATORS)})')
	return ops


def _source(a: argparse.Namespace) -> Source:
	return Source(cache=a.cache, install=not a.no_install,
		      tree=getattr(a, 'tree', None),
		      kernel=getattr(a, 'kernel', None),
		      tarball=getattr(a, 'tarball', None))


def _build(a: argparse.Namespace) -> Build:
	if a.arch not in arches.ARCHES:
		raise UsageError(f'--arch {a.arch}: unsupported (the arches: '
				 f'{", ".join(arches.ARCHES)})')
	return Build(arch=a.arch, jobs=a.jobs, results=a.results, quiet=a.quiet,
		     config=a.config, ccache=not a.no_ccache,
		     kunit_args=tuple(a.kunit_args))


class UsageError(Exception):
	"""Options that do not go together: argparse's error, exit code 2."""


def _in_place_needs_kernel(a: argparse.Namespace) -> None:
	if a.in_place and not a.kernel:
		raise UsageError('--in-place needs --kernel DIR')


def _run_request(a: argparse.Namespace, src: Source) -> RunRequest:
	_in_place_needs_kernel(a)
	if a.each_commit:
		if not a.kernel:
			raise UsageError('--each-commit needs --kernel DIR (a git '
					 'tree)')
		if a.in_place:
			raise UsageError('--each-commit builds in a clone; it does '
					 'not go with --in-place')
	if a.watch:
		given = [o for o, v in (('--in-place', a.in_place),
					('--each-commit', a.each_commit),
					('--bisect', a.bisect),
					('--repeat', a.repeat != 1)) if v]
		if given:
			raise UsageError(f'--watch does not go with {given[0]}')
	return RunRequest(src, _build(a), in_place=a.in_place,
			  without=tuple(a.without), each_commit=a.each_commit,
			  bisect=a.bisect, repeat=a.repeat,
			  filter_glob=a.filter_glob, watch=a.watch)


def _prepare_request(a: argparse.Namespace, src: Source) -> PrepareRequest:
	_in_place_needs_kernel(a)
	return PrepareRequest(src, in_place=a.in_place, without=tuple(a.without))


def _export_request(a: argparse.Namespace, src: Source) -> ExportRequest:
	if a.base and not re.fullmatch(r'[0-9a-f]{40}', a.base):
		raise UsageError(f'--base {a.base}: not a commit id (40 hex '
				 'digits)')
	return ExportRequest(src, output=a.output, author=a.from_,
			     local=a.local, refresh=a.refresh, base=a.base)


def _mutants_request(a: argparse.Namespace, src: Source) -> MutantsRequest:
	if a.operator and not a.generated:
		raise UsageError('--operator needs --generated')
	return MutantsRequest(src, _build(a), workers=a.workers,
			      mutants=tuple(a.mutant), generated=a.generated,
			      in_diff=a.in_diff, operators=a.operator,
			      sample=a.sample, seed=a.seed, shard=a.shard,
			      merge=tuple(a.merge), rebuild=a.rebuild)


def _lint(req: LintRequest) -> int:
	# export.py's and lint's modules, imported by the command alone.
	from mmkunit import lint
	return lint.lint_handler(req)


R = TypeVar('R', bound=Request)


@dataclasses.dataclass(frozen=True)
class Command(Generic[R]):
	"""A command: what --help says of it, its options, the request they
	are parsed into and the handler that runs that request."""
	request_type: Type[R]
	help: str
	description: str
	add_options: Callable[[argparse.ArgumentParser], None]
	make_request: Callable[[argparse.Namespace, Source], R]
	handler: Callable[[R], int]
	# Whether it takes arguments for kunit.py run, after --.
	kunit_args: bool = False


# Every command, in the order --help lists them.
COMMANDS: Dict[str, Command[Any]] = {
	'run': Command(
		RunRequest, 'build and run the suites (default)',
		'Prepare the tree, build and run the suites. Arguments after '
		'-- go to kunit.py run.',
		_run_args, _run_request, handlers.run_handler, kunit_args=True),
	'prepare': Command(
		PrepareRequest, 'prepare the tree only',
		'Prepare the tree and print its path. With --kernel DIR '
		'--in-place, apply the overlay into DIR so that kunit.py can be '
		'run there directly.',
		_prepare_args, _prepare_request, handlers.prepare_handler),
	'export': Command(
		ExportRequest, 'write the series for git am',
		'Write the series as git format-patch files that `git am` '
		'applies onto the kernel tree.',
		_export_args, _export_request, handlers.export_handler),
	'lint': Command(
		LintRequest, 'checkpatch and git am check',
		'Export the series, run scripts/checkpatch.pl --strict on each '
		'patch, check that `git am` applies it onto the kernel tree and '
		'that the patches carry kernel/\'s test files as they are, and '
		'run zizmor on the CI example.',
		_common, lambda a, src: LintRequest(src), _lint),
	'mutants': Command(
		MutantsRequest, 'run the mutant matrix',
		'Apply each mutant of kernel/mutants on top of the series, build '
		'incrementally, run the suites and print which tests failed. '
		'Exits non-zero if a mutant survives or does not build.',
		_mutants_args, _mutants_request, handlers.mutants_handler,
		kunit_args=True),
	'replay': Command(
		ReplayRequest, 'a change\'s workload, without and with it',
		'Replay the scenarios of one scale of a change (mmap-miss: mmap '
		'access patterns; mlock-recheck: faults racing with PTE '
		'updates) on the kernel without the change, without each part '
		'of it, and with it (7.3: its reverts; --tree 6.12: the port\'s '
		'own patches, mmap-miss only); write the counts as tables, a '
		'CSV and a PNG, and check the bounds of the scenario table '
		'(docs/replay.md).',
		_replay_args,
		lambda a, src: ReplayRequest(src, _build(a), replay=a.replay,
					     scale=Scale(a.scale),
					     workers=a.workers,
					     bounded=a.bounded),
		handlers.replay_handler),
	'fixes': Command(
		FixesRequest, 'which fixes an older kernel lacks',
		'Build the suites on an older kernel through the port of the '
		'series in kernel/compat/X.Y and hold the results against its '
		'list of expected failures (kernel/compat/X.Y/expected): each '
		'listed test must fail, every other must pass. Prints the fixes '
		'the kernel lacks; exits non-zero if the run differs from the '
		'list.',
		_with_build, lambda a, src: FixesRequest(src, _build(a)),
		fixes.fixes_handler),
	'coverage': Command(
		CoverageRequest, 'coverage of the pinned functions',
		'Build the suites with UML\'s gcov '
		'(kunit-configs/um-coverage.config), run them, and print the '
		'line and branch coverage of each function in kernel/pinned, '
		'with the branches not taken; writes lcov\'s HTML into the '
		'results directory.',
		_with_build, lambda a, src: CoverageRequest(src, _build(a)),
		handlers.coverage_handler),
	'selftest': Command(
		SelftestRequest, 'the harness\'s own tests and mypy',
		'Run the harness\'s own tests with pytest; no kernel is built.',
		_selftest_args,
		lambda a, src: SelftestRequest(
			src, pytest_args=tuple(a.pytest_args)),
		selftest.selftest_handler),
	'check': Command(
		CheckRequest, 'what CI runs (--all: every arch and kernel)',
		'selftest, lint, run under the default, debug, distro and mglru '
		'configurations, the hand mutants (those limited to distro or '
		'mglru under that configuration), every generated mutant and '
		'the replays held to their bounds, all under UML: what CI runs on '
		'every commit. With --all, the replays\' columns without bounds '
		'too, then run under x86_64 (default, debug and distro) and '
		'arm64 (4 KiB pages with its own hand mutants, then 64 KiB), and '
		'for the default kernel the 6.12 port\'s run and its replay at '
		'the seed scale, and fixes on 7.2, 6.12 and 6.1; in that order. '
		'Exits non-zero if any fails.',
		_check_args,
		lambda a, src: CheckRequest(src, _build(a), everything=a.all),
		lambda r: handlers.check_handler(r, execute_reporting),
		kunit_args=True),
}

# Which command a request is of, for execute().
_BY_TYPE: Dict[type, Command[Any]] = {
	c.request_type: c for c in COMMANDS.values()}


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
	"""The parser of every command; with command, only that one's
	options are added (the others' are not read then, and the modules
	their choices come from, replay's and mutagen's, not imported)."""
	parser = argparse.ArgumentParser(
		prog='run_kunit.sh', description=DESCRIPTION,
		formatter_class=argparse.RawDescriptionHelpFormatter)
	sub = parser.add_subparsers(dest='command', metavar='COMMAND',
				    title='commands (default: run)')
	for name, c in COMMANDS.items():
		p = sub.add_parser(name, help=c.help, description=c.description)
		if command in (None, name):
			c.add_options(p)
	return parser


def to_request(a: argparse.Namespace) -> Request:
	"""The request the parsed command line stands for."""
	req: Request = COMMANDS[a.command].make_request(a, _source(a))
	return req


def execute(req: Request) -> int:
	"""Runs one request with its command's handler; returns the command's
	exit code."""
	code: int = _BY_TYPE[type(req)].handler(req)
	return code


def parse_args(argv: Sequence[str]) -> Request:
	argv = list(argv)
	extra: List[str] = []
	if '--' in argv:
		i = argv.index('--')
		argv, extra = argv[:i], argv[i + 1:]
	if not argv or (argv[0] not in COMMANDS and argv[0] not in ('-h', '--help')):
		argv.insert(0, 'run')
	parser = build_parser(argv[0] if argv[0] in COMMANDS else None)
	args = parser.parse_args(argv)
	args.kunit_args = extra
	if extra and not COMMANDS[args.command].kunit_args:
		parser.error(f'{args.command} takes no kunit.py arguments')
	given = [o for o, v in (('--tree', getattr(args, 'tree', None)),
				('--kernel', getattr(args, 'kernel', None)),
				('--tarball', getattr(args, 'tarball', None)))
		 if v]
	if len(given) > 1:
		parser.error(f'{" and ".join(given)}: give one kernel')
	try:
		return to_request(args)
	except UsageError as e:
		parser.error(str(e))


def _exit_on_sigterm(signum: int, frame: object) -> None:
	# Unwind like Ctrl-C, so that a cancelled run (a CI job, say) takes a
	# mutant out of the prepared tree again before it exits.
	raise SystemExit(128 + signum)


def main(argv: Optional[Sequence[str]] = None) -> int:
	signal.signal(signal.SIGTERM, _exit_on_sigterm)
	# A UML kernel that panics (oops=panic, kunit-configs/um.kernel_args)
	# dumps core: not into the user's directory, and not a gigabyte.
	resource.setrlimit(resource.RLIMIT_CORE,
			   (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
	req = parse_args(sys.argv[1:] if argv is None else argv)
	build = getattr(req, 'build', None)
	progress.set_quiet(bool(build and build.quiet))
	try:
		return execute_reporting(req)
	except KeyboardInterrupt:
		print('mm-kunit: interrupted', file=sys.stderr)
		return 130


def execute_reporting(req: Request) -> int:
	"""execute(req), with each error the harness expects printed as one
	line and turned into its exit code (git bisect's, with --bisect)."""
	bisect = isinstance(req, RunRequest) and req.bisect
	setup_error = commits.BISECT_ABORT if bisect else EXIT_ERROR
	try:
		return execute(req)
	except deps.MissingDependencies as e:
		print(f'mm-kunit: {e}', file=sys.stderr)
		return setup_error
	except ov.PatchFailed as e:
		# The series does not apply to this tree: for git bisect, a
		# commit that cannot be tested.
		print(f'mm-kunit: error: {e}', file=sys.stderr)
		return commits.BISECT_SKIP if bisect else EXIT_ERROR
	except handlers.SETUP_ERRORS as e:
		print(f'mm-kunit: error: {e}', file=sys.stderr)
		return setup_error
