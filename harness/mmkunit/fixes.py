# SPDX-License-Identifier: GPL-2.0
"""`fixes`: the suites on the older kernels, each through its port of the
series, held against the port's list of the fixes it lacks (expected.py,
docs/ports.md)."""

from __future__ import annotations

from mmkunit import arches
from mmkunit import expected
from mmkunit import kernels
from mmkunit import runs
from mmkunit.request import (EXIT_ERROR, EXIT_OK, EXIT_TESTS_FAILED,
			     FixesRequest)
from mmkunit.session import KERNEL_DIR, REPO, HarnessError, Session


def fixes_handler(req: FixesRequest) -> int:
	"""Runs the suites on each older kernel (or the one given), through
	its port of the series, and holds the results against the port's
	list of expected failures."""
	src = req.source
	if src.names_kernel:
		return _fixes_on(Session(src, req.build))
	rcs = [_fixes_on(Session(src, req.build, tree=tree))
	       for tree in kernels.OLDER]
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
			f'no port of the series to {s.sources.version or "this kernel"} '
			f'with a list of expected failures ({listed}); ports: '
			f'{", ".join(ports) or "none"}')
	if not arches.ARCHES[s.build.arch].uml:
		raise HarnessError('the lists of expected failures are worked out '
				   'for UML; fixes runs --arch um only')
	entries = s.overlay.expected()
	own = sorted({e.why for e in entries if e.kind == expected.Kind.FAILS} &
		     {p.name for p in s.overlay.patches})
	if own:
		s = Session(s.source, s.build, own, sources=s.sources)
	# Relative to the repository, unless $MM_KUNIT_OVERLAY is elsewhere.
	shown = root.relative_to(REPO) if root.is_relative_to(REPO) else root
	print(f'mm-kunit: {s.sources.version} through {shown}' +
	      (f', without {", ".join(own)}' if own else ''))
	result = runs.run_suites(s)
	if result.untestable:
		return EXIT_ERROR
	report = expected.hold_against(result.cases, entries)
	print(f'\nFixes {s.sources.version} lacks, by the tests that stand for them '
	      f'({shown / "expected"}):')
	for line in report.lines():
		print(line)
	print(f'fixes: {"as expected" if report.ok else "NOT as expected"}')
	return EXIT_OK if report.ok else EXIT_TESTS_FAILED
