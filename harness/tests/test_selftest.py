# SPDX-License-Identifier: GPL-2.0
"""What `selftest` runs (selftest.py): mypy --strict on the harness and
pytest on its tests, with the PyPI packages on PYTHONPATH."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import REPO
from mmkunit import deps, selftest
from mmkunit.request import SelftestRequest, Source


@pytest.mark.parametrize('mypy, tests, code', [
	(0, 0, 0), (1, 0, 1), (0, 2, 2), (1, 2, 2)])
def test_selftest_runs_mypy_and_pytest(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mypy: int,
		tests: int, code: int) -> None:
	"""The exit code is pytest's, else mypy's."""
	ran: List[List[str]] = []
	envs: List[Dict[str, str]] = []
	pypi = tmp_path / 'pypi'
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	monkeypatch.setattr(deps, 'ensure_pypi', lambda *a, **k: pypi)
	monkeypatch.setenv('PYTHONPATH', '/elsewhere')

	def run(cmd: List[str], cwd: Path, env: Dict[str, str],
		**kw: Any) -> subprocess.CompletedProcess[str]:
		assert cwd == REPO
		ran.append(cmd)
		envs.append(env)
		rc = mypy if cmd[2] == 'mypy' else tests
		return subprocess.CompletedProcess(cmd, rc)

	monkeypatch.setattr(selftest.subprocess, 'run', run)
	req = SelftestRequest(Source(cache=tmp_path / 'c', install=False),
			      pytest_args=('-k', 'cli'))
	assert selftest.selftest_handler(req) == code
	assert ran == [
		[sys.executable, '-m', 'mypy', '--strict', '--cache-dir',
		 str(tmp_path / 'c/mypy-cache'), str(REPO / 'harness/mmkunit'),
		 str(REPO / 'harness/benchmark.py')],
		[sys.executable, '-m', 'pytest', '-q', str(REPO / 'harness/tests'),
		 '-k', 'cli']]
	assert all(e['PYTHONPATH'] == f'{pypi}:/elsewhere' for e in envs)
