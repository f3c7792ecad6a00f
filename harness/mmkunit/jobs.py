# SPDX-License-Identifier: GPL-2.0
"""Many builds of one tree, each with some patches on top (a mutant, a
fix left out), run in one or more copies of the tree at once."""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
from typing import Callable, List, Sequence

from mmkunit import overlay as ov
from mmkunit import progress
from mmkunit import runner
from mmkunit import trees
from mmkunit.session import HarnessError, Session

# A job runs in the tree it is given and returns its result.
Job = Callable[[trees.PreparedTree], object]


def code_only(extra: Sequence[ov.Patch]) -> bool:
	"""Whether the patches change C code only: then the configuration
	made once (run_jobs) holds, and plain make rebuilds what changed."""
	return all(f.endswith(('.c', '.h')) for p in extra for f in p.touched)


def run_in(s: Session, t: trees.PreparedTree, overlay: ov.Overlay,
	   extra: Sequence[ov.Patch], label: str, opts: runner.RunOptions,
	   show_tree: bool = False) -> runner.RunResult:
	"""Puts overlay and extra onto t, builds incrementally and runs."""
	s.put_series(t, extra, overlay)
	progress.progress(label + (f' ({t.base.name})' if show_tree else ''))
	return runner.run_kunit(
		t.src, t.build_dir(s.build_key), opts,
		runner.new_results_dir(s.cache, label.replace(' ', '-')),
		prebuilt_config=code_only(extra))


def baseline(s: Session, tree: trees.PreparedTree,
	     opts: runner.RunOptions) -> runner.RunResult:
	"""The bare series configured, built and run in tree, before any
	job: what the jobs are measured against. It must pass, or every
	mutant would look killed; its build is what a job builds on, and
	its run time sets the jobs' timeout. HarnessError if it fails."""
	with tree.locked():
		s.put_series(tree)
		results = runner.new_results_dir(s.cache, 'baseline')
		runner.configure(tree.src, tree.build_dir(s.build_key), opts,
				 results / 'kunit-config.out')
		progress.progress('baseline: the series without a mutant')
		result = runner.run_kunit(tree.src, tree.build_dir(s.build_key),
					  opts, results, prebuilt_config=True)
	if not result.ok:
		why = (f'{len(result.failed)} tests failed' if result.failed
		       else result.complaints[0] if result.complaints
		       else result.error or 'kunit.py failed')
		raise HarnessError(f'the suites do not pass without a mutant '
				   f'({why}; see {results}), so no mutant can '
				   'be measured')
	return result


def run_seconds(result: runner.RunResult) -> float:
	"""How long a run's kernel ran (boot and tests), its build left out."""
	return max(0.0, (result.seconds or 0.0) - (result.build_seconds or 0.0))


def run_jobs(s: Session, tree: trees.PreparedTree, workers: int,
	     jobs: Sequence[Job], opts: runner.RunOptions,
	     configured: bool = False) -> List[object]:
	"""Runs the jobs in tree and up to workers - 1 copies of it, each
	tree one job at a time; returns their results in the jobs' order.
	configured: baseline() has just configured and built tree. Every
	tree holds the bare series again afterwards, also when
	interrupted."""
	copies = trees_for(tree, workers, len(jobs))
	with contextlib.ExitStack() as stack:
		for t in copies:
			stack.enter_context(t.locked())
		return _run(s, tree, copies, jobs, opts, configured)


def trees_for(tree: trees.PreparedTree, workers: int,
	      jobs: int) -> List[trees.PreparedTree]:
	"""tree and the copies of it that run_jobs() runs jobs in."""
	return [tree] + [tree.worker(n) for n in
			 range(2, min(workers, jobs) + 1)]


def copy_now(s: Session, tree: trees.PreparedTree, workers: int,
	     jobs: int) -> None:
	"""Makes the copies run_jobs() will run jobs in now, from tree as
	built (trees.PreparedTree.clone_from(); a copy made before is
	kept): before a build of something else in tree that the jobs then
	undo (a schema), whose objects a copy made after it would have to
	compile again, with no compiler cache at its path."""
	for t in trees_for(tree, workers, jobs)[1:]:
		with t.locked():
			t.clone_from(tree, s.build_key)


def _run(s: Session, tree: trees.PreparedTree,
	 workers: Sequence[trees.PreparedTree], jobs: Sequence[Job],
	 opts: runner.RunOptions, configured: bool) -> List[object]:
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
		s.put_series(tree)
		if not configured:
			runner.configure(tree.src, tree.build_dir(s.build_key),
					 opts, runner.new_results_dir(
						 s.cache, 'mutants-config')
					 / 'kunit-config.out')
		if len(workers) > 1 and todo and \
		   not (tree.build_dir(s.build_key) / 'vmlinux').is_file():
			# Build once here, so that the other trees copy a built
			# tree instead of each building from cold.
			i = todo.pop(0)
			results[i] = jobs[i](tree)
		for t in workers[1:]:
			t.clone_from(tree, s.build_key)
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
			s.put_series(t)
	return results
