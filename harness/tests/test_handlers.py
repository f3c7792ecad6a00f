# SPDX-License-Identifier: GPL-2.0
"""The requests check is made of, and how check runs them (handlers.py)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import List

import pytest

from conftest import PASS_RUN, env_for


def test_check_steps_run_the_real_commands(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""Each step of `check` is its command's own request, with the
	step's arch, config and filter, and check's request is left as it
	was."""
	from conftest import FAKE_BIN
	from mmkunit import cli, deps, handlers, request
	for k, v in env_for(overlay_dir, PASS_RUN).items():
		monkeypatch.setenv(k, v)
	monkeypatch.setenv('MM_KUNIT_KVM', '0')
	monkeypatch.setenv('PATH', f'{FAKE_BIN}{os.pathsep}{os.environ["PATH"]}')
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	args = ['check', '--kernel', str(kernel_tree), '--cache',
		str(tmp_path / 'c'), '--no-install', '-q']
	req = cli.parse_args(args)
	assert isinstance(req, request.CheckRequest)
	uml = ['selftest', 'lint', 'run um', 'run um debug', 'run um distro',
	       'run um mglru', 'run arm64 64k', 'mutants um']
	# What CI runs on each commit: UML's steps and arm64 with 64 KiB
	# pages.
	assert list(handlers.check_steps(req)) == uml
	req = cli.parse_args([*args, '--all'])
	assert isinstance(req, request.CheckRequest)
	steps = handlers.check_steps(req)
	# A kernel given to check --all: its steps only, no port and no
	# fixes.
	assert list(steps) == [*uml, 'run x86_64', 'run x86_64 debug',
			       'run x86_64 distro', 'run arm64']
	for name in ('run um', 'run um debug', 'run um distro', 'run um mglru',
		     'run x86_64', 'run x86_64 debug', 'run x86_64 distro',
		     'run arm64', 'run arm64 64k'):
		assert cli.execute(steps[name]) == 0, name
	# The fake overlay's mutant survives the saved passing run.
	assert cli.execute(steps['mutants um']) == request.EXIT_TESTS_FAILED
	build = tmp_path / 'c/trees'
	argv = {p.parent.name: p.read_text().splitlines()
		for p in build.rglob('kunit-argv.txt')}
	assert sorted(argv) == ['build-arm64', 'build-arm64-64k', 'build-um',
				'build-um-debug', 'build-um-distro',
				'build-um-mglru', 'build-x86_64',
				'build-x86_64-debug', 'build-x86_64-distro']
	# arm64 is built with its cross compiler, behind ccache too.
	assert '--cross_compile=aarch64-linux-gnu-' in argv['build-arm64'][-1]
	assert '--make_options=CC=ccache aarch64-linux-gnu-gcc' in \
		argv['build-arm64-64k'][-1]
	assert '--kconfig_add=CONFIG_ARM64_64K_PAGES=y' in \
		argv['build-arm64-64k'][-1]
	debug = argv['build-x86_64-debug'][-1]
	assert '--kconfig_add=CONFIG_KASAN=y' in debug
	assert '--kernel_args=page_poison=1' in debug
	assert '--kconfig_add=CONFIG_KASAN=y' in argv['build-um-debug'][-1]
	# UML boots two CPUs, which need its seccomp userspace.
	assert '--kernel_args=seccomp=on' in argv['build-um'][-1]
	assert '--kconfig_add=CONFIG_MEMCG=y' in argv['build-um-distro'][-1]
	assert '--kconfig_add=CONFIG_LRU_GEN_ENABLED=y' in \
		argv['build-um-mglru'][-1]


def test_check_steps_carry_checks_options_and_keep_their_defaults() -> None:
	"""A step gets what was given to check, and otherwise its command's
	own defaults; the port's steps and fixes name their kernels."""
	from mmkunit import cli, handlers, kernels, request
	from mmkunit import session
	req = cli.parse_args(['check', '--no-install', '--cache', '/c',
			      '--jobs', '1'])
	assert isinstance(req, request.CheckRequest)
	uml = handlers.check_steps(req)
	# UML's steps, and arm64's suites with 64 KiB pages.
	assert all(isinstance(r, request.SelftestRequest | request.LintRequest)
		   or r.build.arch == 'um' for n, r in uml.items()
		   if n != 'run arm64 64k')
	arm64 = uml['run arm64 64k']
	assert isinstance(arm64, request.RunRequest)
	assert (arm64.build.arch, arm64.build.config) == ('arm64', '64k')
	assert not any(isinstance(r, request.FixesRequest)
		       or r.source.tree for r in uml.values())
	req = cli.parse_args(['check', '--no-install', '--cache', '/c',
			      '--jobs', '1', '--all'])
	assert isinstance(req, request.CheckRequest)
	steps = handlers.check_steps(req)
	# --all adds steps after UML's, and changes none of them but the
	# replays, which add their columns without bounds.
	assert list(steps)[:len(uml)] == list(uml)
	for name, r in uml.items():
		if isinstance(r, request.ReplayRequest):
			assert r.bounded, name
			r = dataclasses.replace(r, bounded=False)
		assert steps[name] == r, name
	for tree in kernels.OLDER:
		step = steps[f'fixes {tree} um']
		assert isinstance(step, request.FixesRequest)
		assert session.Session(step.source).sources.kernel == \
			kernels.KERNELS[tree]
		assert (step.source.cache, step.source.install,
			step.build.jobs) == (Path('/c'), False, 1)
	run = steps['run x86_64 distro']
	assert isinstance(run, request.RunRequest)
	assert session.Session(run.source).sources.kernel == \
		kernels.KERNELS[kernels.DEFAULT]
	assert (run.build.arch, run.build.config, run.bisect) == \
		('x86_64', 'distro', False)
	every = steps['mutants um generated']
	assert isinstance(every, request.MutantsRequest)
	assert (every.generated, every.sample, every.shard, every.mutants,
		every.rebuild, every.build.arch, every.build.config) == (
			True, None, None, (), False, 'um', None)
	assert list(steps).index('mutants um generated') == \
		list(steps).index('mutants um') + 1
	# The hand mutants limited to the distro configuration run there,
	# each by name, and only they.
	distro = steps['mutants um distro']
	assert isinstance(distro, request.MutantsRequest)
	assert (distro.build.arch, distro.build.config) == ('um', 'distro')
	overlay = session.Session(distro.source).overlay
	assert distro.mutants == tuple(
		m.name for m in overlay.mutants()
		if 'distro' in m.field('Config'))
	assert 'vmscan-protection-ignored.patch' in distro.mutants
	assert 'swap-cluster-reads-swap-header.patch' not in distro.mutants
	mglru = steps['mutants um mglru']
	assert isinstance(mglru, request.MutantsRequest)
	assert (mglru.build.arch, mglru.build.config) == ('um', 'mglru')
	assert 'mglru-inc-refs-unevictable-counted.patch' in mglru.mutants
	assert 'vmscan-protection-ignored.patch' not in mglru.mutants
	port = [r for name, r in steps.items() if kernels.CHECKED_PORT in name
		and not name.startswith('fixes')]
	assert [type(r).__name__ for r in port] == [
		'RunRequest', 'ReplayRequest']
	# The port's run is held to its list of what it fails by design.
	assert isinstance(port[0], request.RunRequest) and port[0].held_to_list
	for r in port:
		assert session.Session(r.source).sources.kernel == \
			kernels.KERNELS[kernels.CHECKED_PORT]
	# The port replays at the benchmark's scale, the default kernel (with
	# the reverts of kernel/reverts/) at the small one.
	seed = steps[f'replay {kernels.CHECKED_PORT} um seed']
	small = steps['replay um']
	assert isinstance(seed, request.ReplayRequest)
	assert isinstance(small, request.ReplayRequest)
	assert (seed.scale, small.scale) == (request.Scale.SEED,
					     request.Scale.SMALL)
	assert seed.workers == 1
	assert session.Session(small.source).sources.kernel == \
		kernels.KERNELS[kernels.DEFAULT]
	# Each other change 7.3 reverts, at the small scale.
	recheck = steps['replay um mlock-recheck']
	assert isinstance(recheck, request.ReplayRequest)
	assert (recheck.replay, recheck.scale) == ('mlock-recheck',
						   request.Scale.SMALL)
	req = cli.parse_args(['check', '--tarball', '/t/linux-source-6.1.tar.xz'])
	assert isinstance(req, request.CheckRequest)
	run = handlers.check_steps(req)['run um']
	assert session.Session(run.source).sources.tarball == \
		Path('/t/linux-source-6.1.tar.xz')


@pytest.mark.parametrize('args, older, x86_64', [
	# What CI runs: UML's and arm64's packages, no other kernel's
	# sources.
	([], False, False),
	# --all: x86_64's packages too, and each older kernel's sources
	# (the package, or what fetches it from another suite).
	(['--all'], True, True),
	# A kernel given: no port and no fixes, so no other sources.
	(['--all', '--kernel', 'KERNEL'], False, True),
])
def test_check_installs_what_its_steps_use(
		args: List[str], older: bool, x86_64: bool,
		kernel_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	from mmkunit import arches, cli, deps, handlers, kernels, request
	asked: List[deps.Requirement] = []
	monkeypatch.setattr(deps, 'ensure',
			    lambda reqs, **k: asked.extend(reqs))
	req = cli.parse_args(['check', '--no-install', *(
		str(kernel_tree) if a == 'KERNEL' else a for a in args)])
	assert isinstance(req, request.CheckRequest)
	assert handlers.check_handler(req, lambda r: 0) == request.EXIT_OK
	# Those of Debian 12's own archive (7.2 is fetched as 7.3 is).
	packaged = [deps.kernel_source(kernels.KERNELS[t])
		    for t in kernels.OLDER
		    if kernels.KERNELS[t].system_tarball]
	assert packaged
	for wanted in packaged:
		assert all(w in asked for w in wanted) == older, wanted
	assert all(q in asked for q in arches.ARCHES['arm64'].requirements)
	assert all(q in asked for q in arches.ARCHES['x86_64'].requirements) \
		== x86_64
	# No step of check runs coverage.
	assert not any(c in asked for c in deps.COVERAGE)


def test_check_runs_each_step_and_counts_them(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch,
		capsys: pytest.CaptureFixture[str]) -> None:
	"""check runs its steps in turn, a step's setup error does not stop
	the others, and it ends with one line per step and the counts."""
	from conftest import FAKE_BIN
	from mmkunit import cli, deps, handlers, request
	for k, v in env_for(overlay_dir, PASS_RUN).items():
		monkeypatch.setenv(k, v)
	monkeypatch.setenv('PATH', f'{FAKE_BIN}{os.pathsep}{os.environ["PATH"]}')
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	src = request.Source(cache=tmp_path / 'c', install=False,
			     kernel=kernel_tree)
	(tmp_path / 'notakernel').mkdir()
	steps = {
		'run um': request.RunRequest(src, request.Build(quiet=True)),
		'prepare elsewhere': request.PrepareRequest(dataclasses.replace(
			src, kernel=tmp_path / 'notakernel')),
	}
	monkeypatch.setattr(handlers, 'check_steps', lambda req: steps)
	monkeypatch.setattr(cli.signal, 'signal', lambda *a: None)
	assert cli.main(['check', '--kernel', str(kernel_tree), '--cache',
			 str(tmp_path / 'c'), '--no-install', '-q']) == \
		request.EXIT_TESTS_FAILED
	out, err = capsys.readouterr()
	lines = out.splitlines()
	assert '=== check: run um ===' in lines
	assert '=== check: prepare elsewhere ===' in lines
	assert lines.index('=== check: run um ===') < \
		lines.index('=== check: prepare elsewhere ===')
	assert 'not a kernel source tree' in err
	assert lines[-3:] == ['check run um: ok',
			      'check prepare elsewhere: FAILED (exit 2)',
			      'check: 1 passed, 1 failed']
