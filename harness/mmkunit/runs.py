# SPDX-License-Identifier: GPL-2.0
"""One run of the suites, as `run` does it: prepare the tree, build, run
kunit.py, write the reports, and say what happened."""

from __future__ import annotations

import dataclasses
import io
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Callable, List, Optional, Tuple

from mmkunit import arches
from mmkunit import mirror
from mmkunit import progress
from mmkunit import quickbuild
from mmkunit import repeat
from mmkunit import runner
from mmkunit import stamp
from mmkunit.session import Session, write_reports
from mmkunit.trees import PreparedTree


def boot_options(s: Session, tree: PreparedTree, filter_glob: Optional[str],
		 held_to_list: bool = False) -> runner.RunOptions:
	"""How a run of s boots the kernel of tree."""
	opts = s.with_accel(s.run_options(filter_glob, held_to_list), tree)
	if filter_glob:
		# A few suites boot in a fraction of the time on one CPU
		# (UML's SMP); a test that needs two runs again.
		opts = dataclasses.replace(
			opts, few_cpus=arches.ARCHES[opts.arch].one_cpu)
	return opts


def run_suites(s: Session, in_place: bool = False,
	       filter_glob: Optional[str] = None,
	       times: int = 1, held_to_list: bool = False,
	       seen: Optional[mirror.Seen] = None,
	       on_prepared: Optional[Callable[[List[str]], None]] = None
	       ) -> runner.RunResult:
	"""Prepares the tree, builds, runs and reports: what `run` does;
	with held_to_list, the tests the port's list says fail on its kernel
	are held to that (runner.held_to_list()). seen: what changed in the
	user's tree and its copy since the last refresh, if known;
	on_prepared is given the files the preparation wrote."""
	s.ensure_deps()
	with s.prepared(in_place, seen) as (tree, src, written):
		if on_prepared:
			on_prepared(written or [])
		build = tree.build_dir(s.build_key)
		results = s.results_dir(s.build.arch)
		opts = boot_options(s, tree, filter_glob, held_to_list)
		ctx = s.report_context(s.sources.reported(tree), opts)
		inputs = stamp.inputs(str(tree.source),
				      s.overlay.digest(s.extra), opts)
		config = stamp.config_inputs(str(tree.source), opts)
		# The tree's check runs while the stamped kernel boots; a copy
		# of the user's tree the refresh found unchanged needs none.
		check = stamp.holding(build, src, opts.arch, inputs,
				      walk=not tree.refreshed) \
			if written == [] else None
		result: Optional[runner.RunResult] = None
		if check:
			progress.progress(f'nothing changed since the last build '
					  f'in {build}: running its kernel')
			result = runner.run_kunit(src, build, opts, results,
						  exec_only=True)
			if not check.none_newer():
				progress.progress(f'a file of {src} is newer than the '
						  'last build: building')
				shutil.rmtree(results)
				result = None
		if result is None:
			started = time.time()
			result, recipes = _build_and_run(src, build, opts, results,
							 config, written)
			if result.booted:
				stamp.record(build, opts.arch, inputs, config,
					     since=started)
				if recipes:
					_record_recipes(src, build, opts, results,
							recipes)
		write_reports(result, ctx)
		repeats = repeat.run_again(result, src, build, opts, times)
	return _print_outcome(result, results, repeats)


def run_built(s: Session, filter_glob: Optional[str],
	      unchanged: Callable[[], bool]) -> Optional[runner.RunResult]:
	"""Runs the kernel the last run of s built, as it is, and reports:
	a re-run of watch.py's that knows nothing changed since. None, and
	nothing run, if unchanged() says otherwise once the tree is held
	(another run of the harness built in it meanwhile)."""
	tree = s.sources.prepared_tree()
	with tree.locked():
		if not unchanged():
			return None
		build = tree.build_dir(s.build_key)
		results = s.results_dir(s.build.arch)
		opts = boot_options(s, tree, filter_glob)
		ctx = s.report_context(s.sources.reported(tree), opts)
		result = runner.run_kunit(tree.src, build, opts, results,
					  exec_only=True)
		write_reports(result, ctx)
	return _print_outcome(result, results, [])


def _print_outcome(result: runner.RunResult, results: Path,
		   repeats: List[runner.RunResult]) -> runner.RunResult:
	"""Prints what a run found (failures, warnings, where its results
	are, the counts); returns result."""
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


def _build_and_run(src: Path, build: Path, opts: runner.RunOptions,
		   results: Path, config: Optional[str],
		   written: Optional[List[str]]
		   ) -> Tuple[runner.RunResult, Optional[str]]:
	"""Builds the kernel in build, no more of it than the edit needs,
	and runs it: after an edit of C files only, kbuild's own recipes of
	the directories concerned and the link (quickbuild.py), or plain make;
	else kunit.py run. Returns the result, and what to write kbuild's
	recipes down for once it is stamped (_record_recipes()), if the
	build directory has none for it."""
	uml = arches.ARCHES[opts.arch].uml
	newer = stamp.TreeCheck(src, build)
	recipes = quickbuild.key(config, {**os.environ, **opts.env}, opts.jobs,
				 _tools(opts)) if uml and stamp.config_held(
					 build, opts.arch, config, written) else None
	rec = quickbuild.load(build, recipes)
	started = time.monotonic()
	paths = [src / f for f in written or []]
	# Files written with times make would not see as a change: their
	# objects are made older than them, and the plan covers them too.
	hidden = stamp.not_newer(build, [p for p in paths
					if p.name.endswith(stamp.CONFIG_FREE)])
	if hidden and not quickbuild.outdate(build, hidden):
		progress.progress(f'{progress.names(hidden)}: older than the last '
				  f'build in {build}, and not all their objects '
				  'known: make decides by their times')
	# What the harness wrote compiles while find looks at the tree.
	early = quickbuild.start(build, rec, [str(p) for p in paths]
				 ) if rec else None
	early_log = io.StringIO()
	try:
		configured = stamp.config_holds(build, src, opts.arch, config,
						written, newer)
		sources = sorted({*newer.files(stamp.CONFIG_FREE),  # waits
				  *hidden})
	finally:
		walked = early.join(early_log) if early else []
	p = None
	if rec and configured:
		p = early.plan if early and early.changed == sources else \
			quickbuild.plan(build, rec, sources)
	stamp.forget(build)
	if p:
		progress.progress(f'only C files changed since the last build in '
				  f'{build}: kbuild\'s recipes for '
				  f'{", ".join(p.walks)} and the link, without '
				  'make\'s walk of the tree')
		results.mkdir(parents=True, exist_ok=True)
		image = stamp.outputs(build, opts.arch)
		with open(results / 'quickbuild.log', 'w') as out:
			out.write(early_log.getvalue())
			built = quickbuild.build(p, out, walked)
		seconds = time.monotonic() - started
		if not built:
			progress.progress('a recipe failed (see '
					  f'{results}/quickbuild.log): make')
		# Each plan compiles, so it links: a kernel left as it was is
		# one the recipes did not make again, whatever they said.
		elif stamp.outputs(build, opts.arch) == image:
			progress.progress('the recipes left the kernel as it was '
					  f'(see {results}/quickbuild.log): make')
		else:
			result = runner.run_kunit(src, build, opts, results,
						  exec_only=True)
			result.build_seconds = seconds
			return result, None
	if not configured:
		progress.progress(f'running kunit.py in {src} (build: {build})')
		quickbuild.forget(build)
		return runner.run_kunit(src, build, opts, results), None
	progress.progress(f'only C files changed since the last build in '
			  f'{build}: make, then the kernel')
	return (runner.run_kunit(src, build, opts, results, prebuilt_config=True),
		None if rec else recipes)


def _tools(opts: runner.RunOptions) -> Tuple[str, ...]:
	"""The compiler and linker of opts's builds (their make options'
	CC= and LD=, kbuild's defaults otherwise)."""
	def tool(var: str, default: str) -> str:
		value = next((o.split('=', 1)[1] for o in opts.make_options
			      if o.startswith(f'{var}=')), default)
		return value.split()[-1] if value.split() else default
	return tool('CC', 'gcc'), tool('LD', 'ld')


def _record_recipes(src: Path, build: Path, opts: runner.RunOptions,
		    results: Path, recipes: str) -> None:
	"""Once a configuration, after a build with plain make that booted:
	make again, with nothing left to build, through quickbuild's shell,
	which writes down kbuild's recipes for the next edits. If that make
	built anything (a file saved while the kernel booted), the kernel is
	no longer the one that ran: neither it nor the recipes are kept."""
	progress.progress('writing down kbuild\'s recipes for the next edits '
			  '(make again, nothing to build)')
	record = quickbuild.recording_options(build)
	env = {**opts.env, 'MM_KUNIT_RECIPES': record['MM_KUNIT_RECIPES']}
	# make's --output-sync would give each recipe an output of its own,
	# which is how the shell tells a recipe from a $(shell) call.
	flags = os.environ.get('MAKEFLAGS')
	if flags:
		env['MAKEFLAGS'] = ' '.join(
			t for t in flags.split()
			if not t.startswith(('-O', '--output-sync')))
	made = dataclasses.replace(
		opts, quiet=True, env=env,
		make_options=[*opts.make_options, f'SHELL={record["SHELL"]}'])
	before = stamp.outputs(build, opts.arch)
	built = runner.make(src, build, made, results / 'recipes.log')
	if built is None or stamp.outputs(build, opts.arch) != before:
		progress.progress('make built again while writing down kbuild\'s '
				  f'recipes (see {results}/recipes.log): the next '
				  'run builds with make')
		quickbuild.forget(build)
		stamp.forget(build)
	elif not quickbuild.save(build, recipes):
		progress.progress('kbuild\'s recipes were not found in '
				  f'{results}/recipes.log: edits build with make')
