# SPDX-License-Identifier: GPL-2.0
"""run_kunit.sh: the command line, parsed into one request (request.py)
that plan.py runs."""

from __future__ import annotations

import argparse
import os
import re
import resource
import signal
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from mmkunit import kernels
from mmkunit import plan
from mmkunit import progress
from mmkunit.request import (
	Build, CheckRequest, CoverageRequest, ExportRequest,
	FixesRequest, LintRequest, MutantsRequest, PrepareRequest,
	ReplayRequest, Request, RunRequest, Scale, SelftestRequest, Source)

COMMANDS = ('run', 'prepare', 'export', 'lint', 'mutants', 'replay', 'fixes',
	    'coverage', 'selftest', 'check')

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
			       f'{" and ".join(plan.FIXES_TREES)} in turn)')
		p.add_argument('--kernel', type=Path, metavar='DIR',
			       help='use this kernel tree instead of a Debian '
			       'kernel; it is only read, the overlay goes onto '
			       'a copy in the cache')
		p.add_argument('--tarball', type=Path,
			       help='a kernel tarball instead of a Debian kernel')


def _workers(p: argparse.ArgumentParser, what: str) -> None:
	p.add_argument('--workers', type=int, default=min(2, os.cpu_count() or 1),
		       metavar='N',
		       help=f'run {what} in N trees at once (default: %(default)s); '
		       'the extra trees are copies of the first, made once')


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
	sub = parser.add_subparsers(dest='command', metavar='COMMAND',
				    title='commands (default: run)')

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
	p.add_argument('--local', action='store_true',
		       help='the project\'s own patches (kernel/patches/local: '
		       'the replay benchmark) instead of the series for '
		       'upstream, to apply on top of it')
	p.add_argument('--base', metavar='COMMIT',
		       help='the commit the series applies to, named in a '
		       'base-commit: line (default: HEAD of a --kernel git '
		       'tree without changes)')
	p.add_argument('--refresh', action='store_true',
		       help='rewrite kernel/patches so that each patch carries '
		       'the test files it adds as kernel/ has them (lint checks)')

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
	_workers(p, 'mutants')
	p.add_argument('--generated', action='store_true',
		       help='mutants generated from the source of the pinned '
		       'functions (kernel/pinned), each classified as killed, '
		       'survived, unviable or equivalent, and a score per '
		       'function; MUTANT names functions then')
	p.add_argument('--in-diff', metavar='A..B',
		       help='with --generated and --kernel (a git tree): only '
		       'the mutants on lines that A..B changes')
	p.add_argument('--sample', type=int, metavar='N',
		       help='with --generated: N mutants drawn with --seed')
	p.add_argument('--seed', type=int, default=0,
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

	p = sub.add_parser('replay', help='mmap access patterns on four builds',
			   description='Replay the scenarios of one scale on the '
			   'kernel without the mmap_miss change, without each '
			   'half of it, and with it (7.3: its reverts; --tree '
			   '6.12: its own patches); write what each read as '
			   'tables, a CSV and a PNG, and check the bounds of the '
			   'scenario table (docs/replay.md).')
	_common(p)
	_run_opts(p)
	p.add_argument('--scale', choices=[s.value for s in Scale],
		       default=Scale.SMALL.value,
		       help='small (default, seconds) or seed (the proposal\'s '
		       'setup: a 20 GiB file, an 8 GiB guest; minutes)')
	_workers(p, 'the builds')

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

	p = sub.add_parser('coverage', help='coverage of the pinned functions',
			   description='Build the suites with UML\'s gcov '
			   '(kunit-configs/um-coverage.config), run them, and '
			   'print the line and branch coverage of each function '
			   'in kernel/pinned, with the branches not taken; '
			   'writes lcov\'s HTML into the results directory.')
	_common(p)
	_run_opts(p)

	p = sub.add_parser('selftest', help='the harness\'s own tests and mypy',
			   description='Run the harness\'s own tests with pytest; '
			   'no kernel is built.')
	_common(p, tree_opts=False)
	p.add_argument('pytest_args', nargs='*')

	p = sub.add_parser('check', help='everything CI runs',
			   description='selftest, lint, run, mutants, replay and '
			   'fixes (UML), then run and the x86_64-only mutants '
			   '(x86_64), in that order; exits non-zero if any fails.')
	_common(p)
	_run_opts(p)
	return parser


def _shard(text: str) -> Tuple[int, int]:
	k, _, n = text.partition('/')
	if not (k.isdigit() and n.isdigit() and int(k) < int(n)):
		raise argparse.ArgumentTypeError(f'want K/N with 0 <= K < N, '
						  f'got {text}')
	return int(k), int(n)


def _source(a: argparse.Namespace) -> Source:
	return Source(cache=a.cache, install=not a.no_install,
		      tree=getattr(a, 'tree', None),
		      kernel=getattr(a, 'kernel', None),
		      tarball=getattr(a, 'tarball', None))


def _build(a: argparse.Namespace) -> Build:
	return Build(arch=a.arch, jobs=a.jobs, results=a.results, quiet=a.quiet,
		     config=a.config, ccache=not a.no_ccache,
		     kunit_args=tuple(a.kunit_args))


def to_request(a: argparse.Namespace) -> Request:
	"""The request the parsed command line stands for."""
	src = _source(a)
	if a.command == 'run':
		return RunRequest(src, _build(a), in_place=a.in_place,
				  without=tuple(a.without),
				  each_commit=a.each_commit, bisect=a.bisect,
				  repeat=a.repeat, filter_glob=a.filter_glob)
	if a.command == 'prepare':
		return PrepareRequest(src, in_place=a.in_place,
				      without=tuple(a.without))
	if a.command == 'export':
		return ExportRequest(src, output=a.output, author=a.from_,
				     local=a.local, refresh=a.refresh,
				     base=a.base)
	if a.command == 'lint':
		return LintRequest(src)
	if a.command == 'mutants':
		return MutantsRequest(src, _build(a), workers=a.workers,
				      mutants=tuple(a.mutant),
				      generated=a.generated, in_diff=a.in_diff,
				      sample=a.sample, seed=a.seed,
				      shard=a.shard, merge=tuple(a.merge))
	if a.command == 'replay':
		return ReplayRequest(src, _build(a), scale=Scale(a.scale),
				     workers=a.workers)
	if a.command == 'fixes':
		return FixesRequest(src, _build(a))
	if a.command == 'coverage':
		return CoverageRequest(src, _build(a))
	if a.command == 'selftest':
		return SelftestRequest(src, pytest_args=tuple(a.pytest_args))
	return CheckRequest(src, _build(a))


def parse_args(argv: Sequence[str]) -> Request:
	argv = list(argv)
	extra: List[str] = []
	if '--' in argv:
		i = argv.index('--')
		argv, extra = argv[:i], argv[i + 1:]
	if not argv or (argv[0] not in COMMANDS and argv[0] not in ('-h', '--help')):
		argv.insert(0, 'run')
	parser = build_parser()
	args = parser.parse_args(argv)
	args.kunit_args = extra
	if extra and args.command not in ('run', 'mutants', 'check'):
		parser.error(f'{args.command} takes no kunit.py arguments')
	given = [o for o, v in (('--tree', getattr(args, 'tree', None)),
				('--kernel', getattr(args, 'kernel', None)),
				('--tarball', getattr(args, 'tarball', None)))
		 if v]
	if len(given) > 1:
		parser.error(f'{" and ".join(given)}: give one kernel')
	if getattr(args, 'base', None) and \
	   not re.fullmatch(r'[0-9a-f]{40}', args.base):
		parser.error(f'--base {args.base}: not a commit id (40 hex '
			     'digits)')
	if getattr(args, 'in_place', False) and not args.kernel:
		parser.error('--in-place needs --kernel DIR')
	if getattr(args, 'each_commit', None):
		if not args.kernel:
			parser.error('--each-commit needs --kernel DIR (a git tree)')
		if args.in_place:
			parser.error('--each-commit builds in a clone; '
				     'it does not go with --in-place')
	return to_request(args)


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
	return plan.main(req)
