# SPDX-License-Identifier: GPL-2.0
"""`selftest`: the harness's own tests (pytest, harness/tests/) and
`mypy --strict` on it; no kernel is built."""

from __future__ import annotations

import os
import subprocess
import sys

from mmkunit import deps
from mmkunit.request import SelftestRequest
from mmkunit.session import REPO, Session


def selftest_handler(req: SelftestRequest) -> int:
	s = Session(req.source)
	install = req.source.install
	deps.ensure(deps.SELFTEST + deps.BUILD, allow_install=install)
	pypi = deps.ensure_pypi(
		deps.SELFTEST_PYPI,
		s.cache / f'python{sys.version_info[0]}.{sys.version_info[1]}',
		allow_install=install)
	path = os.pathsep.join(filter(None, [str(pypi),
					     os.environ.get('PYTHONPATH')]))
	env = dict(os.environ, PYTHONPATH=path)
	# The harness's type hints, checked strictly.
	mypy = subprocess.run([sys.executable, '-m', 'mypy', '--strict',
			       '--cache-dir', str(s.cache / 'mypy-cache'),
			       str(REPO / 'harness' / 'mmkunit'),
			       str(REPO / 'harness' / 'benchmark.py')],
			      cwd=REPO, env=env).returncode
	cmd = [sys.executable, '-m', 'pytest', '-q', str(REPO / 'harness' / 'tests')]
	tests = subprocess.run(cmd + list(req.pytest_args), cwd=REPO,
			       env=env).returncode
	return tests or mypy
