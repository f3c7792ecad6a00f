# SPDX-License-Identifier: GPL-2.0
"""The GitHub Actions example, checked by zizmor as `lint` runs it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from mmkunit import deps

WORKFLOW = Path(__file__).resolve().parents[2] / '.github' / 'workflows' / \
	'mm-kunit.yml'


def zizmor_findings(cache: Path, install: bool) -> str:
	"""zizmor's findings on the workflow, or '' if it has none."""
	target = deps.ensure_pypi(deps.LINT_PYPI, cache / 'zizmor',
				  allow_install=install)
	proc = subprocess.run([str(target / 'bin' / 'zizmor'), '--offline',
			       str(WORKFLOW)], capture_output=True, text=True)
	return '' if proc.returncode == 0 else \
		(proc.stdout + proc.stderr).strip().replace('\n', '\n  ')
