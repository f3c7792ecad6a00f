# SPDX-License-Identifier: GPL-2.0
"""The requests check is made of, run as plan.py runs them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import PASS_RUN, env_for


def test_check_steps_run_the_real_commands(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""Each step of `check` is its command's own request, with the
	step's arch, config and filter, and check's request is left as it
	was."""
	from conftest import FAKE_BIN
	from mmkunit import cli, deps, plan, request
	for k, v in env_for(overlay_dir, PASS_RUN).items():
		monkeypatch.setenv(k, v)
	monkeypatch.setenv('MM_KUNIT_KVM', '0')
	monkeypatch.setenv('PATH', f'{FAKE_BIN}{os.pathsep}{os.environ["PATH"]}')
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	req = cli.parse_args(['check', '--kernel', str(kernel_tree),
			      '--cache', str(tmp_path / 'c'), '--no-install', '-q'])
	assert isinstance(req, request.CheckRequest)
	steps = plan.check_steps(req)
	assert list(steps)[:2] == ['selftest', 'lint']
	replays = [r for r in steps.values()
		   if isinstance(r, request.ReplayRequest)]
	assert [(r.build.arch, r.scale) for r in replays] == [
		('um', request.Scale.SMALL), ('um', request.Scale.SEED)]
	for name in ('run um', 'run um debug', 'run x86_64', 'run x86_64 debug',
		     'run x86_64 refs'):
		assert plan.execute(steps[name]) == 0, name
	# The fake overlay's mutant survives the saved passing run.
	assert plan.execute(steps['mutants um']) == request.EXIT_TESTS_FAILED
	build = tmp_path / 'c/trees'
	argv = {p.parent.name: p.read_text().splitlines()
		for p in build.rglob('kunit-argv.txt')}
	assert sorted(argv) == ['build-um', 'build-um-debug', 'build-x86_64',
				'build-x86_64-debug', 'build-x86_64-refs']
	debug = argv['build-x86_64-debug'][-1]
	assert 'x86_64-debug.config' in debug
	assert '--kernel_args=page_poison=1' in debug
	assert 'um-debug.config' in argv['build-um-debug'][-1]
	assert '--kernel_args' not in argv['build-um'][-1]
	refs = argv['build-x86_64-refs'][-1]
	assert '--arch=x86_64' in refs and refs.endswith('mm_vmscan_mglru')
	assert 'x86_64-refs.config' in refs
	assert not any('mm_vmscan_mglru' in line for line in argv['build-um'])


def test_check_steps_carry_checks_options_and_keep_their_defaults() -> None:
	"""A step gets what was given to check, and otherwise its command's
	own defaults: fixes keeps its older kernel."""
	from mmkunit import cli, generated, kernels, plan, request, session
	req = cli.parse_args(['check', '--no-install', '--cache', '/c',
			      '--jobs', '1'])
	assert isinstance(req, request.CheckRequest)
	steps = plan.check_steps(req)
	fixes = steps['fixes 6.1 um']
	assert isinstance(fixes, request.FixesRequest)
	assert session.Session(fixes.source, tree=plan.FIXES_TREE
			       ).kernel == kernels.KERNELS[plan.FIXES_TREE]
	assert (fixes.source.cache, fixes.source.install, fixes.build.jobs) == \
		(Path('/c'), False, 1)
	sample = steps['mutants um generated']
	assert isinstance(sample, request.MutantsRequest)
	assert (sample.generated, sample.sample, sample.seed,
		sample.build.arch) == (True, generated.CHECK_SAMPLE,
				       generated.CHECK_SEED, 'um')
	cov = steps['coverage um']
	assert isinstance(cov, request.CoverageRequest)
	assert (cov.build.arch, cov.build.config) == ('um', None)
	run = steps['run x86_64 refs']
	assert isinstance(run, request.RunRequest)
	assert session.Session(run.source).kernel == \
		kernels.KERNELS[kernels.DEFAULT]
	assert (run.build.arch, run.build.config, run.filter_glob, run.bisect) == \
		('x86_64', 'refs', 'mm_vmscan_mglru', False)
	req = cli.parse_args(['check', '--tarball', '/t/linux-source-6.1.tar.xz'])
	assert isinstance(req, request.CheckRequest)
	run = plan.check_steps(req)['run um']
	assert session.Session(run.source).tarball == \
		Path('/t/linux-source-6.1.tar.xz')
