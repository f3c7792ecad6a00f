# SPDX-License-Identifier: GPL-2.0
"""One run of the suites, as `run` does it: prepare the tree, build, run
kunit.py, write the reports, and say what happened."""

from __future__ import annotations

import dataclasses
import shutil
import sys
from typing import Optional

from mmkunit import arches
from mmkunit import progress
from mmkunit import repeat
from mmkunit import runner
from mmkunit import stamp
from mmkunit.session import Session, write_reports


def run_suites(s: Session, in_place: bool = False,
	       filter_glob: Optional[str] = None,
	       times: int = 1) -> runner.RunResult:
	"""Prepares the tree, builds, runs and reports: what `run` does."""
	s.ensure_deps()
	with s.prepared(in_place) as (tree, src, written):
		build = tree.build_dir(s.build_key)
		results = s.results_dir(s.build.arch)
		opts = s.with_accel(s.run_options(filter_glob), tree)
		if filter_glob:
			# A few suites boot in a fraction of the time on one
			# CPU (UML's SMP); a test that needs two runs again.
			opts = dataclasses.replace(
				opts, few_cpus=arches.ARCHES[opts.arch].one_cpu)
		ctx = s.report_context(s.sources.reported(tree), opts)
		inputs = stamp.inputs(str(tree.source),
				      s.overlay.digest(s.extra), opts)
		config = stamp.config_inputs(str(tree.source), opts)
		# The tree's check runs while the stamped kernel boots.
		check = stamp.holding(build, src, opts.arch, inputs) \
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
			configured = stamp.config_holds(build, src, opts.arch,
							config, written)
			if configured:
				progress.progress(f'only C files changed since the '
						  f'last build in {build}: make, '
						  'then kunit.py exec')
			else:
				progress.progress(f'running kunit.py in {src} '
						  f'(build: {build})')
			stamp.forget(build)
			result = runner.run_kunit(src, build, opts, results,
						  prebuilt_config=configured)
			if result.booted:
				stamp.record(build, opts.arch, inputs, config)
		write_reports(result, ctx)
		repeats = repeat.run_again(result, src, build, opts, times)
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
