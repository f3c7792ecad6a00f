# SPDX-License-Identifier: GPL-2.0
"""The Debian kernels the harness builds (--tree), and fetching their
sources.

The long-term kernels come from the machine's own Debian release: apt
installs linux-source-X.Y, whose tarball is in /usr/src. A newer kernel
comes from a suite the machine does not use (7.3 from trixie-backports):
it is downloaded through a private apt configuration in the cache, from
the Debian mirror the machine's apt already uses, checked against the
Debian archive keyring, and unpacked once. The system's apt sources, lists
and cache are never touched, so this works as a user too.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

from mmkunit.progress import step


@dataclasses.dataclass(frozen=True)
class DebianKernel:
	"""One kernel series Debian ships as linux-source-X.Y."""
	series: str
	# Set for a kernel fetched from another suite than the machine's:
	# the suite, and the version of the package the suites are pinned to.
	suite: Optional[str] = None
	version: Optional[str] = None

	@property
	def package(self) -> str:
		return f'linux-source-{self.series}'

	@property
	def system_tarball(self) -> Optional[Path]:
		"""Where apt installs the tarball, for a kernel of the machine's
		own release; None for a fetched one."""
		if self.suite:
			return None
		return Path('/usr/src') / f'{self.package}.tar.xz'


KERNELS: Dict[str, DebianKernel] = {k.series: k for k in (
	DebianKernel('7.3', suite='trixie-backports', version='7.3.4-1~bpo13+1'),
	DebianKernel('7.2', suite='sid', version='7.2.13-1'),
	DebianKernel('6.12'),
	DebianKernel('6.1'),
)}
# What every command but fixes builds unless told otherwise.
DEFAULT = '7.3'
# The port `check` runs and replays beside the default kernel.
CHECKED_PORT = '6.12'
# The older kernels `fixes` holds to their lists unless told otherwise.
OLDER = ('7.2', '6.12', '6.1')

KEYRING = Path('/usr/share/keyrings/debian-archive-keyring.gpg')
DEFAULT_MIRROR = 'http://deb.debian.org/debian'
APT_SOURCES = Path('/etc/apt')


class FetchError(Exception):
	"""A kernel's sources cannot be had; the message says why."""


def debian_mirror(etc: Path = APT_SOURCES) -> str:
	"""The Debian archive the machine's apt uses (not its security
	archive), from sources.list and sources.list.d; else deb.debian.org."""
	files = [etc / 'sources.list'] + sorted((etc / 'sources.list.d').glob('*'))
	for f in files:
		if f.suffix not in ('.list', '.sources') and f.name != 'sources.list':
			continue
		try:
			text = f.read_text(errors='replace')
		except OSError:
			continue
		if f.suffix == '.sources':
			uris = re.findall(r'^URIs:\s*(.+)$', text, re.M)
			candidates = [u for line in uris for u in line.split()]
		else:
			candidates = re.findall(
				r'^\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)', text, re.M)
		for uri in candidates:
			if re.fullmatch(r'(https?|file)://\S+/debian/?', str(uri)):
				return str(uri).rstrip('/')
	return DEFAULT_MIRROR


class Apt:
	"""apt-get and apt-cache with a configuration of their own under dir:
	one suite's sources list, lists and package cache."""

	def __init__(self, dir: Path, suite: str, mirror: str) -> None:
		self.dir = dir
		self.suite = suite
		self.mirror = mirror

	def options(self) -> List[str]:
		d = self.dir
		opts = ['-o', f'Dir::Etc::sourcelist={d / "sources.list"}',
			'-o', 'Dir::Etc::sourceparts=-',
			'-o', f'Dir::State::Lists={d / "lists"}',
			'-o', f'Dir::Cache={d / "cache"}',
			'-o', 'Debug::NoLocking=1', '-q']
		if os.geteuid() == 0:
			# apt's _apt user cannot write into root's cache.
			opts += ['-o', 'APT::Sandbox::User=root']
		return opts

	def _run(self, *args: str, cwd: Optional[Path] = None) -> str:
		proc = subprocess.run(list(args[:1]) + self.options() +
				      list(args[1:]), cwd=cwd, capture_output=True,
				      text=True, check=False)
		if proc.returncode != 0:
			last = (proc.stderr.strip() or proc.stdout.strip()
				).splitlines()[-1:] or ['no output']
			raise FetchError(f'{" ".join(args[:2])} ({self.suite}) '
					 f'failed: {last[0]}')
		return proc.stdout

	def update(self) -> None:
		for sub in ('lists/partial', 'cache/archives/partial'):
			(self.dir / sub).mkdir(parents=True, exist_ok=True)
		(self.dir / 'sources.list').write_text(
			f'deb [signed-by={KEYRING}] {self.mirror} {self.suite} main\n')
		self._run('apt-get', 'update')

	def versions(self, package: str) -> List[str]:
		"""The versions of package the suite has, newest first."""
		out = self._run('apt-cache', 'madison', package)
		return [f[1].strip() for line in out.splitlines()
			for f in [line.split('|')] if len(f) >= 3]

	def download(self, package: str, version: str, dest: Path) -> Path:
		dest.mkdir(parents=True, exist_ok=True)
		self._run('apt-get', 'download', f'{package}={version}', cwd=dest)
		debs = list(dest.glob(f'{package}_*.deb'))
		if len(debs) != 1:
			raise FetchError(f'apt-get download {package}={version} '
					 f'left {len(debs)} packages in {dest}')
		return debs[0]


def fetched_tarball(kernel: DebianKernel, cache: Path) -> Optional[Path]:
	"""The tarball of kernel fetched before, if any: the pinned version,
	else the one taken when the pinned one was gone."""
	base = cache / 'debian'
	chosen = base / f'{kernel.package}.version'
	for version in (kernel.version,
			chosen.read_text().strip() if chosen.is_file() else None):
		if version:
			tarball = base / f'{kernel.package}_{version}' / \
				f'{kernel.package}.tar.xz'
			if tarball.is_file():
				return tarball
	return None


def fetch(kernel: DebianKernel, cache: Path,
	  mirror: Optional[str] = None) -> Path:
	"""The kernel's tarball in the cache, downloaded once from its suite.

	The pinned version is taken if the suite still has it (backports drop
	old versions); else the newest of the same series, said in one line.
	"""
	assert kernel.suite and kernel.version
	have = fetched_tarball(kernel, cache)
	if have:
		return have
	base = cache / 'debian'
	base.mkdir(parents=True, exist_ok=True)
	apt = Apt(base / f'apt-{kernel.suite}', kernel.suite,
		  mirror or debian_mirror())
	with step(f'fetching {kernel.package} from Debian {kernel.suite} '
		  f'({apt.mirror})'):
		apt.update()
		versions = apt.versions(kernel.package)
		if not versions:
			raise FetchError(f'{apt.mirror} {kernel.suite} has no '
					 f'{kernel.package}')
		version = kernel.version
		if version not in versions:
			version = versions[0]
			# Said even with -q: the results are of another kernel.
			print(f'mm-kunit: {kernel.package} {kernel.version} is '
			      f'gone from {kernel.suite}; taking {version}',
			      file=sys.stderr)
		with tempfile.TemporaryDirectory(dir=base) as tmp:
			deb = apt.download(kernel.package, version, Path(tmp))
			_extract_tarball(deb, kernel, base / f'{kernel.package}_{version}')
	(base / f'{kernel.package}.version').write_text(version + '\n')
	tarball = fetched_tarball(kernel, cache)
	assert tarball is not None
	return tarball


def _extract_tarball(deb: Path, kernel: DebianKernel, dest: Path) -> None:
	"""Puts the package's /usr/src tarball into dest, whole or not at all."""
	unpacked = deb.parent / 'unpacked'
	subprocess.run(['dpkg-deb', '-x', str(deb), str(unpacked)], check=True)
	name = f'{kernel.package}.tar.xz'
	found = unpacked / 'usr' / 'src' / name
	if not found.is_file():
		raise FetchError(f'{deb.name} has no /usr/src/{name}')
	tmp = dest.with_name(dest.name + '.partial')
	shutil.rmtree(tmp, ignore_errors=True)
	tmp.mkdir(parents=True)
	os.replace(found, tmp / name)
	shutil.rmtree(dest, ignore_errors=True)
	os.replace(tmp, dest)


def version_of(tarball: Path) -> Optional[str]:
	"""The Debian version of a tarball fetch() put in the cache."""
	m = re.fullmatch(r'linux-source-[\d.]+_(.+)', tarball.parent.name)
	return m.group(1) if m else None
