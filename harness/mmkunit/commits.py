# SPDX-License-Identifier: GPL-2.0
"""A commit range of the user's git tree, each commit prepared, built and
run in turn (--each-commit), and the exit codes of `git bisect run`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import List, Optional, Sequence

from mmkunit import overlay as ov
from mmkunit import progress
from mmkunit import runner
from mmkunit import trees
from mmkunit.request import EXIT_OK, EXIT_TESTS_FAILED
from mmkunit.session import Session, write_reports

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


def run_commit(s: Session, tree: trees.PreparedTree, kernel: Path,
	       commit: trees.Commit, results: Path,
	       filter_glob: Optional[str] = None) -> CommitOutcome:
	"""Prepares one commit of the user's tree, builds it and runs the
	suites (those filter_glob names, if given)."""
	trees.checkout_commit(tree, kernel, commit)
	try:
		changed = tree.prepare(s.overlay, refresh_source=True)
	except ov.OverlayError as e:
		return CommitOutcome(commit, BISECT_SKIP,
				     'conflict: ' + str(e).splitlines()[0])
	if changed:
		progress.progress(f'updated in {tree.src}: '
				  f'{progress.names(changed)}')
	opts = s.with_accel(s.run_options(filter_glob), tree)
	ctx = s.report_context(tree.source, opts)
	result = runner.run_kunit(tree.src, tree.build_dir(s.build_key), opts,
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


def each_commit(s: Session, kernel: Path, spec: str,
		filter_glob: Optional[str] = None) -> int:
	"""Each commit of spec (A..B) prepared, built and run in turn."""
	s.ensure_deps()
	kernel = kernel.resolve()
	ov.check_kernel_tree(kernel)
	commits = trees.commit_range(kernel, spec)
	tree = trees.commits_tree(s.cache, kernel)
	base = s.results_dir(f'{s.build.arch}-commits')
	outcomes: List[CommitOutcome] = []
	with tree.locked():
		for n, commit in enumerate(commits, 1):
			progress.progress(f'commit {n}/{len(commits)}: {commit.short} '
					  f'{commit.subject}')
			o = run_commit(s, tree, kernel, commit, base / commit.short,
				       filter_glob)
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
