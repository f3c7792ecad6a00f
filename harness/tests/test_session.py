# SPDX-License-Identifier: GPL-2.0
"""What a command works with (session.py): the overlay for the kernel,
the kernel and its version, and the options kunit.py is run with."""

from __future__ import annotations

from pathlib import Path
from typing import List

import pytest

from conftest import REPO
from mmkunit import kernels, session
from mmkunit import overlay as ov
from mmkunit.request import Build, Source

CONFIGS = REPO / 'kunit-configs'


def _words(*files: Path) -> List[str]:
	return [w for f in files for w in f.read_text().split()]


def _options(config: Path) -> List[str]:
	"""The lines of a configuration that set or unset an option."""
	return [line for line in config.read_text().splitlines()
		if line.startswith('CONFIG_') or line.endswith(' is not set')]


def test_overlay_dir_picks_the_port(monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.delenv('MM_KUNIT_OVERLAY', raising=False)
	assert session.overlay_dir('7.3.4') == REPO / 'kernel'
	assert session.overlay_dir('6.12.117') == REPO / 'kernel/compat/6.12'
	assert session.overlay_dir('6.1.192') == REPO / 'kernel/compat/6.1'
	assert session.overlay_dir('6.1') == REPO / 'kernel/compat/6.1'
	assert session.overlay_dir('5.15.1') == REPO / 'kernel'
	assert session.overlay_dir('') == REPO / 'kernel'
	monkeypatch.setenv('MM_KUNIT_OVERLAY', '/x')
	assert session.overlay_dir('6.1.192') == Path('/x')


def test_the_build_directory_and_results(tmp_path: Path) -> None:
	s = session.Session(Source(cache=tmp_path))
	assert s.cache == tmp_path.resolve()
	assert s.build_key == 'um'
	results = s.results_dir('um')
	assert results.parent == tmp_path / 'results' and results.is_dir()
	s = session.Session(Source(cache=tmp_path),
			    Build(arch='x86_64', config='debug',
				  results=tmp_path / 'mine'))
	assert s.build_key == 'x86_64-debug'
	assert s.results_dir('x86_64') == (tmp_path / 'mine').resolve()
	# Another configuration's options on top: a directory of its own,
	# kept by additions, not by another configuration.
	apart = s.apart('mglru')
	assert apart.build_key == 'x86_64-debug+mglru'
	assert apart.build.config == 'debug' and s.build_key == 'x86_64-debug'
	assert apart.with_additions(env={'A': '1'}).build_key == \
		'x86_64-debug+mglru'
	assert apart.with_config('distro').build_key == 'x86_64-distro'


def test_run_options_from_the_configuration(
		tmp_path: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""The arch's kunitconfig, the configuration's options on top of it,
	and the boot options that go with each (ARCH[-NAME].kernel_args); QEMU's
	arguments on one line; the compiler behind ccache; the session's
	environment on top."""
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	monkeypatch.setenv('MM_KUNIT_CCACHE_DIR', str(tmp_path / 'ccache'))
	s = session.Session(Source(cache=tmp_path),
			    Build(arch='um', config='debug', jobs=3, quiet=True,
				  kunit_args=('--raw_output',)))
	s.env['LIBRARY_PATH'] = '/lib/gcov'
	opts = s.run_options('mm_swap*')
	assert list(opts.kunitconfigs) == [CONFIGS / 'um.config']
	assert list(opts.kconfig_add) == _options(CONFIGS / 'um-debug.config')
	assert list(opts.kernel_args) == _words(CONFIGS / 'um.kernel_args',
						CONFIGS / 'um-debug.kernel_args')
	assert (opts.arch, opts.filter_glob, opts.jobs, opts.quiet) == \
		('um', 'mm_swap*', 3, True)
	assert list(opts.kunit_args) == ['--raw_output']
	assert list(opts.make_options) == ['CC=ccache gcc', 'HOSTCC=ccache gcc']
	assert opts.env['CCACHE_DIR'] == str(tmp_path / 'ccache')
	assert opts.env['LIBRARY_PATH'] == '/lib/gcov'
	# UML runs without an accelerator to choose.
	assert s.with_accel(opts, None) is opts
	x86 = session.Session(Source(cache=tmp_path),
			      Build(arch='x86_64', ccache=False)).run_options()
	assert x86.qemu_args == ' '.join(_words(CONFIGS / 'x86_64.qemu_args'))
	assert list(x86.make_options) == [] and 'CCACHE_DIR' not in x86.env


def test_an_unknown_configuration_names_the_known_ones(
		tmp_path: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	s = session.Session(Source(cache=tmp_path), Build(config='nope'))
	known = sorted(p.stem[len('um-'):] for p in CONFIGS.glob('um-*.config'))
	with pytest.raises(session.HarnessError) as e:
		s.run_options()
	assert str(e.value) == (f'no um-nope.config in {CONFIGS} (configs '
				f'for um: {", ".join(known)})')


def test_a_port_has_its_own_configuration(
		tmp_path: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""A file of the overlay's kunit-configs/ stands in for the
	repository's, with its own boot options; the others are the
	repository's."""
	own = overlay_dir / 'kunit-configs'
	own.mkdir()
	(own / 'um.config').write_text('CONFIG_X=y\n')
	(own / 'um.kernel_args').write_text('mem=2G\n')
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	s = session.Session(Source(cache=tmp_path), Build(config='debug'))
	opts = s.run_options()
	assert list(opts.kunitconfigs) == [own / 'um.config']
	assert list(opts.kconfig_add) == _options(CONFIGS / 'um-debug.config')
	assert list(opts.kernel_args) == ['mem=2G', *_words(
		CONFIGS / 'um-debug.kernel_args')]


def test_another_configuration_shares_sources_and_overlay(
		tmp_path: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""with_config() changes the configuration only: the sources, the
	overlay as loaded, the environment and the extra patches carry
	over, and the original session is left as it was."""
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	s = session.Session(Source(cache=tmp_path), Build(arch='x86_64'),
			    tree='6.12')
	s.env['X'] = '1'
	other = s.with_config('debug')
	assert other.build == Build(arch='x86_64', config='debug')
	assert s.build == Build(arch='x86_64')
	assert other.sources is s.sources
	assert other.sources.kernel == kernels.KERNELS['6.12']
	assert other.overlay is s.overlay
	assert other.cache == tmp_path.resolve()
	assert other.env == {'X': '1'} and other.env is not s.env


def test_additions_leave_the_original_session_as_it_was(
		tmp_path: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	s = session.Session(Source(cache=tmp_path), Build(config='debug'))
	s.env['X'] = '1'
	patch = ov.Patch('gcov.patch', tmp_path / 'gcov.patch', b'', ())
	other = s.with_additions([patch], {'Y': '2'})
	assert other.extra == [patch] and other.env == {'X': '1', 'Y': '2'}
	assert other.build == s.build and other.sources is s.sources
	assert s.extra == [] and s.env == {'X': '1'}


def test_run_options_held_to_the_ports_list(tmp_path: Path) -> None:
	"""run_options(held_to_list=True) carries the tests the port's list
	says its kernel fails with the series; without it, none."""
	port = session.Session(Source(cache=tmp_path, tree='6.12'))
	held = port.run_options(held_to_list=True).failing_here
	assert list(held) == port.overlay.failing_here() and held
	assert not port.run_options().failing_here
