# SPDX-License-Identifier: GPL-2.0
"""Missing packages: found, installed as root, or named (deps.py)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import pytest

from mmkunit import deps


def which_none_of(*missing: str):
	def which(cmd: str) -> Optional[str]:
		return None if cmd in missing else f'/usr/bin/{cmd}'
	return which


def test_nothing_missing_installs_nothing(monkeypatch) -> None:
	calls: List[List[str]] = []
	monkeypatch.setattr(deps.subprocess, 'run',
			    lambda cmd, **kw: calls.append(cmd))
	deps.ensure([deps.Requirement('flex', command='flex')],
		    which=which_none_of(), euid=0)
	assert calls == []


def test_missing_as_user_prints_the_install_command() -> None:
	reqs = [deps.Requirement('flex', command='flex'),
		deps.Requirement('bison', command='bison'),
		deps.Requirement('gcc', command='gcc')]
	with pytest.raises(deps.MissingDependencies) as e:
		deps.ensure(reqs, which=which_none_of('flex', 'bison'), euid=1000)
	assert e.value.packages == ['flex', 'bison']
	assert ('apt-get update && apt-get install -y --no-install-recommends '
		'flex bison') in str(e.value)


def test_missing_as_root_installs_them(monkeypatch) -> None:
	installed: List[str] = []
	calls: List[List[str]] = []

	def run(cmd: List[str], **kw) -> None:
		calls.append(cmd)
		if cmd[:2] == ['apt-get', 'install']:
			installed.extend(c for c in cmd if not c.startswith('-') and
					 c not in ('apt-get', 'install'))

	def which(cmd: str) -> Optional[str]:
		return f'/usr/bin/{cmd}' if cmd in installed else None

	monkeypatch.setattr(deps.subprocess, 'run', run)
	deps.ensure([deps.Requirement('flex', command='flex')], which=which, euid=0)
	assert calls[0][:2] == ['apt-get', 'update']
	assert calls[1][:2] == ['apt-get', 'install'] and 'flex' in calls[1]


def test_install_that_does_not_help_is_an_error(monkeypatch) -> None:
	monkeypatch.setattr(deps.subprocess, 'run', lambda cmd, **kw: None)
	with pytest.raises(deps.MissingDependencies, match='flex'):
		deps.ensure([deps.Requirement('flex', command='flex')],
			    which=which_none_of('flex'), euid=0)


def test_no_install_refuses_even_as_root() -> None:
	with pytest.raises(deps.MissingDependencies):
		deps.ensure([deps.Requirement('flex', command='flex')],
			    which=which_none_of('flex'), euid=0, allow_install=False)


def test_file_requirement(tmp_path: Path) -> None:
	req = deps.Requirement('linux-source-6.12', path=tmp_path / 'x.tar.xz')
	assert deps.missing([req]) == ['linux-source-6.12']
	(tmp_path / 'x.tar.xz').write_text('')
	assert deps.missing([req]) == []


def test_source_for() -> None:
	assert deps.source_for(Path('/usr/src/linux-source-6.1.tar.xz')) == (
		deps.Requirement('linux-source-6.1',
				 path=Path('/usr/src/linux-source-6.1.tar.xz')),)
	assert deps.source_for(Path('/tmp/linux-source-6.1.tar.xz')) == ()
	assert deps.source_for(Path('/usr/src/linux-6.1.tar.gz')) == ()
