# SPDX-License-Identifier: GPL-2.0
"""The Debian kernels and fetching one from another suite (kernels.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import List

import pytest

from mmkunit import kernels

K73 = kernels.DebianKernel('7.3', suite='trixie-backports',
			   version='7.3.4-1~bpo13+1')


def test_mirror_from_deb822_sources_skips_the_security_archive(
		tmp_path: Path) -> None:
	(tmp_path / 'sources.list.d').mkdir()
	(tmp_path / 'sources.list.d' / 'debian.sources').write_text(
		'Types: deb\nURIs: http://security.example/debian-security\n'
		'Suites: bookworm-security\n\n'
		'Types: deb\nURIs: http://mirror.example/debian/\n'
		'Suites: bookworm\n')
	assert kernels.debian_mirror(tmp_path) == 'http://mirror.example/debian'


def test_mirror_from_one_line_sources(tmp_path: Path) -> None:
	(tmp_path / 'sources.list').write_text(
		'# deb http://old.example/debian bookworm main\n'
		'deb [arch=amd64] http://m.example/debian bookworm main\n')
	assert kernels.debian_mirror(tmp_path) == 'http://m.example/debian'


def test_mirror_defaults_to_debs_own(tmp_path: Path) -> None:
	assert kernels.debian_mirror(tmp_path) == kernels.DEFAULT_MIRROR


def test_private_apt_leaves_the_systems_configuration_alone(
		tmp_path: Path) -> None:
	opts = ' '.join(kernels.Apt(tmp_path, 'trixie-backports',
				    'http://m/debian').options())
	assert f'Dir::Etc::sourcelist={tmp_path}/sources.list' in opts
	assert 'Dir::Etc::sourceparts=-' in opts
	assert f'Dir::State::Lists={tmp_path}/lists' in opts
	assert f'Dir::Cache={tmp_path}/cache' in opts


class FakeApt:
	"""The suite's versions; download() builds a real .deb of each."""

	def __init__(self, versions: List[str]) -> None:
		self.available = versions
		self.downloaded: List[str] = []

	def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
		fake = self
		monkeypatch.setattr(kernels.Apt, 'update', lambda self: None)
		monkeypatch.setattr(kernels.Apt, 'versions',
				    lambda self, package: list(fake.available))

		def download(self: kernels.Apt, package: str, version: str,
			     dest: Path) -> Path:
			fake.downloaded.append(version)
			root = dest / 'root'
			(root / 'DEBIAN').mkdir(parents=True)
			(root / 'DEBIAN' / 'control').write_text(
				f'Package: {package}\nVersion: {version}\n'
				'Architecture: all\nMaintainer: x <x@example.org>\n'
				'Description: x\n')
			(root / 'usr' / 'src').mkdir(parents=True)
			(root / 'usr' / 'src' / f'{package}.tar.xz').write_text(
				version)
			deb = dest / f'{package}_{version}_all.deb'
			subprocess.run(['dpkg-deb', '-b', str(root), str(deb)],
				       check=True, capture_output=True)
			return deb
		monkeypatch.setattr(kernels.Apt, 'download', download)


def test_fetch_takes_the_pinned_version_once(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	apt = FakeApt(['7.3.5-1~bpo13+1', K73.version or ''])
	apt.install(monkeypatch)
	tarball = kernels.fetch(K73, tmp_path, mirror='http://m/debian')
	assert tarball.read_text() == K73.version
	assert kernels.version_of(tarball) == K73.version
	assert kernels.fetch(K73, tmp_path, mirror='http://m/debian') == tarball
	assert apt.downloaded == [K73.version]


def test_fetch_takes_the_newest_when_the_pinned_one_is_gone(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
		capsys: pytest.CaptureFixture[str]) -> None:
	apt = FakeApt(['7.3.6-1~bpo13+1', '7.3.5-1~bpo13+1'])
	apt.install(monkeypatch)
	tarball = kernels.fetch(K73, tmp_path, mirror='http://m/debian')
	assert kernels.version_of(tarball) == '7.3.6-1~bpo13+1'
	err = capsys.readouterr().err
	assert ('linux-source-7.3 7.3.4-1~bpo13+1 is gone from '
		'trixie-backports; taking 7.3.6-1~bpo13+1') in err
	# The one taken is kept: the next run asks apt nothing.
	assert kernels.fetch(K73, tmp_path, mirror='http://m/debian') == tarball
	assert apt.downloaded == ['7.3.6-1~bpo13+1']


def test_fetch_says_when_the_suite_has_no_such_kernel(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	FakeApt([]).install(monkeypatch)
	with pytest.raises(kernels.FetchError,
			   match='trixie-backports has no linux-source-7.3'):
		kernels.fetch(K73, tmp_path, mirror='http://m/debian')


def test_the_long_term_kernels_come_from_the_systems_apt() -> None:
	assert kernels.KERNELS['6.12'].system_tarball == \
		Path('/usr/src/linux-source-6.12.tar.xz')
	assert kernels.KERNELS['7.3'].system_tarball is None
	assert kernels.DEFAULT in kernels.KERNELS
