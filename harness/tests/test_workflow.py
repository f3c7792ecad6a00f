# SPDX-License-Identifier: GPL-2.0
"""zizmor on the GitHub Actions example (workflow.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO
from mmkunit import deps, workflow


def test_the_workflow_is_the_ci_example() -> None:
	assert workflow.WORKFLOW == REPO / '.github/workflows/mm-kunit.yml'
	assert workflow.WORKFLOW.is_file()


@pytest.mark.parametrize('code, findings', [
	(0, ''),
	(14, 'zizmor --offline WORKFLOW\n  warning: one\n  warning: two'),
])
def test_findings_are_zizmors_output_indented(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int,
		findings: str) -> None:
	"""zizmor runs offline on the workflow from its own directory of the
	cache; its output is returned only if it found something, each line
	after the first indented for lint's report."""
	installed = []

	def ensure_pypi(packages: object, target: Path,
			allow_install: bool = True) -> Path:
		installed.append((packages, target, allow_install))
		return tmp_path / 'zizmor'

	(tmp_path / 'zizmor/bin').mkdir(parents=True)
	zizmor = tmp_path / 'zizmor/bin/zizmor'
	zizmor.write_text('#!/bin/sh\n'
			  f'[ "$2" = "{workflow.WORKFLOW}" ] && echo zizmor $1 WORKFLOW\n'
			  'echo "warning: one"\necho "warning: two" >&2\n'
			  f'exit {code}\n')
	zizmor.chmod(0o755)
	monkeypatch.setattr(deps, 'ensure_pypi', ensure_pypi)
	assert workflow.zizmor_findings(tmp_path / 'cache', False) == findings
	assert installed == [(deps.LINT_PYPI, tmp_path / 'cache/zizmor', False)]
