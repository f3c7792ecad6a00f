# SPDX-License-Identifier: GPL-2.0
"""What the harness needs from Debian, and installing what is missing."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from mmkunit.kernels import DebianKernel
from mmkunit.progress import step


@dataclasses.dataclass(frozen=True)
class Requirement:
	"""Something the harness runs or reads, and the package that has it."""
	package: str
	command: Optional[str] = None
	path: Optional[Path] = None
	# A module of the Python that runs the harness.
	module: Optional[str] = None

	def present(self, which: Callable[[str], Optional[str]]) -> bool:
		if self.command is not None:
			return which(self.command) is not None
		if self.module is not None:
			return importlib.util.find_spec(self.module) is not None
		assert self.path is not None
		return self.path.exists()


# Building a UML kernel and running the harness.
BUILD = (
	Requirement('gcc', command='gcc'),
	Requirement('make', command='make'),
	Requirement('libc6-dev', path=Path('/usr/include/stdio.h')),
	Requirement('flex', command='flex'),
	Requirement('bison', command='bison'),
	Requirement('bc', command='bc'),
	Requirement('git', command='git'),
	Requirement('rsync', command='rsync'),
	Requirement('xz-utils', command='xz'),
	Requirement('perl', command='perl'),
)
# The compiler cache (not with --no-ccache).
CCACHE = (Requirement('ccache', command='ccache'),)


def source_for(tarball: Path) -> Tuple[Requirement, ...]:
	"""The Debian package of /usr/src/linux-source-X.Y.tar.xz, if that is
	the tarball (another tarball is the user's to provide)."""
	m = re.fullmatch(r'(linux-source-\d+\.\d+)\.tar\.xz', tarball.name)
	if m and tarball.parent == Path('/usr/src'):
		return (Requirement(m.group(1), path=tarball),)
	return ()


# Fetching a kernel from another Debian suite (kernels.py).
FETCH = (Requirement('apt', command='apt-get'),
	 Requirement('dpkg', command='dpkg-deb'))


def kernel_source(kernel: DebianKernel) -> Tuple[Requirement, ...]:
	"""What getting a Debian kernel's sources needs: its package, or
	what fetches it from another suite."""
	system = kernel.system_tarball
	return source_for(system) if system else FETCH


# Coverage reports (lcov and genhtml).
COVERAGE = (Requirement('lcov', command='lcov'),)
# Plotting the replay table.
REPLAY = (Requirement('gnuplot-nox', command='gnuplot'),)
# The harness's own tests.
SELFTEST = (Requirement('python3-pytest', module='pytest'),
	    Requirement('gnuplot-nox', command='gnuplot'),
	    Requirement('python3-pip', module='pip'))
# What the harness's own tests need from PyPI (not in Debian): the KCIDB
# schema the KCIDB reports are validated against.
# The C parser the generated mutants are made with (mutagen.py).
MUTANTS_PYPI = ('tree-sitter==0.26.1', 'tree-sitter-c==0.24.2')
SELFTEST_PYPI = ('kcidb-io==141', 'mypy==2.4.1', *MUTANTS_PYPI)
# `lint`: zizmor checks the GitHub Actions example (a binary wheel).
LINT_PYPI = ('zizmor==1.32.0',)



class MissingDependencies(Exception):
	"""Raised when packages are missing and cannot be installed here."""

	def __init__(self, packages: Sequence[str], message: str = '') -> None:
		self.packages = list(packages)
		super().__init__(
			message or 'missing Debian packages: ' + ' '.join(self.packages) +
			'\nInstall them as root with:\n  ' + install_command(self.packages))


def install_command(packages: Sequence[str]) -> str:
	return ('apt-get update && apt-get install -y --no-install-recommends ' +
		' '.join(packages))


def missing(reqs: Sequence[Requirement],
	    which: Callable[[str], Optional[str]] = shutil.which) -> List[str]:
	pkgs: List[str] = []
	for req in reqs:
		if not req.present(which) and req.package not in pkgs:
			pkgs.append(req.package)
	return pkgs


def ensure(reqs: Sequence[Requirement], allow_install: bool = True,
	   which: Callable[[str], Optional[str]] = shutil.which,
	   euid: Optional[int] = None) -> None:
	"""Installs what is missing when root, else raises MissingDependencies."""
	pkgs = missing(reqs, which)
	if not pkgs:
		return
	euid = os.geteuid() if euid is None else euid
	if euid != 0 or not allow_install:
		raise MissingDependencies(pkgs)
	env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
	with step(f'installing {" ".join(pkgs)} from Debian'):
		subprocess.run(['apt-get', 'update', '-q'], check=True, env=env,
			       stdout=subprocess.DEVNULL)
		subprocess.run(['apt-get', 'install', '-y', '-q',
				'--no-install-recommends'] + pkgs, check=True,
			       env=env, stdout=subprocess.DEVNULL)
	still = missing(reqs, which)
	if still:
		raise MissingDependencies(still)


def pip_command(packages: Sequence[str], target: Path) -> List[str]:
	return [sys.executable, '-m', 'pip', 'install', '-q', '--no-warn-conflicts',
		'--root-user-action=ignore',
		'--disable-pip-version-check', '--target', str(target),
		*packages]


def ensure_pypi(packages: Sequence[str], target: Path,
		allow_install: bool = True) -> Path:
	"""Installs PyPI packages into target, once, for the running Python.

	Nothing is installed into the system: target is a directory of the
	cache that goes on PYTHONPATH. Returns target.
	"""
	want = '\n'.join(packages) + '\n'
	stamp = target / '.mm-kunit-installed'
	if stamp.is_file() and stamp.read_text() == want:
		return target
	cmd = pip_command(packages, target)
	if not allow_install:
		raise MissingDependencies(
			[], f'missing PyPI packages: {" ".join(packages)}; install '
			f'them with:\n  {" ".join(cmd)}')
	tmp = target.with_name(target.name + '.installing')
	shutil.rmtree(tmp, ignore_errors=True)
	with step(f'installing {" ".join(packages)} from PyPI into {target}'):
		proc = subprocess.run(pip_command(packages, tmp), check=False)
	if proc.returncode != 0:
		shutil.rmtree(tmp, ignore_errors=True)
		raise MissingDependencies(
			[], f'pip could not install {" ".join(packages)} '
			f'(exit {proc.returncode}); the command was:\n  {" ".join(cmd)}')
	(tmp / stamp.name).write_text(want)
	shutil.rmtree(target, ignore_errors=True)
	os.replace(tmp, target)
	return target
