# SPDX-License-Identifier: GPL-2.0
"""`lint`'s report (lint.py): one line per check, and the count.

export.lint() and zizmor are stood in for here; their own tests are in
test_export.py and test_workflow.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

import pytest

from mmkunit import deps, export, lint, workflow
from mmkunit.request import EXIT_OK, EXIT_TESTS_FAILED, LintRequest, Source

WORKFLOW = '.github/workflows/mm-kunit.yml'


def _lint(tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
	  monkeypatch: pytest.MonkeyPatch, report: export.LintReport,
	  zizmor: str, capsys: pytest.CaptureFixture[str],
	  port: bool = False) -> List[str]:
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	# The overlay is the series itself, or a port of it.
	monkeypatch.setattr(lint, 'KERNEL_DIR',
			    tmp_path / 'series' if port else overlay_dir)
	signed = []

	def fake_lint(overlay: object, tree: Path, outdir: Path,
		      who: export.Identity, ends_only: bool) -> export.LintReport:
		assert ends_only == (not port)
		signed.append(who)
		for name in ('0001-a.patch', '0002-b.patch'):
			(outdir / name).write_text('')
		return report

	monkeypatch.setattr(export, 'lint', fake_lint)
	monkeypatch.setattr(workflow, 'zizmor_findings', lambda *a: zizmor)
	rc = lint.lint_handler(LintRequest(Source(
		cache=tmp_path / 'c', install=False, kernel=kernel_tree)))
	assert signed == [lint.LINT_IDENTITY]
	return [str(rc)] + capsys.readouterr().out.splitlines()


def test_a_clean_series(tmp_path: Path, kernel_tree: Path,
			overlay_dir: Path, monkeypatch: pytest.MonkeyPatch,
			capsys: pytest.CaptureFixture[str]) -> None:
	out = _lint(tmp_path, kernel_tree, overlay_dir, monkeypatch,
		    export.LintReport({}), '', capsys)
	assert out == [
		str(EXIT_OK),
		'checkpatch --strict: ok: 0001-a.patch',
		'checkpatch --strict: ok: 0002-b.patch',
		f'git am onto {kernel_tree.resolve()}: ok',
		'the patches carry no copy of kernel/\'s test files: ok',
		'the series edits existing files only at their ends: ok',
		f'zizmor --offline {WORKFLOW}: ok',
		'lint: 6 passed, 0 failed']


def test_each_finding_fails_its_check(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch,
		capsys: pytest.CaptureFixture[str]) -> None:
	"""A patch checkpatch complains of, a patch carrying a copy of a test
	file, an edit in the middle of a kernel file and a zizmor finding:
	four checks failed, each with why."""
	report = export.LintReport(
		{'0002-b.patch': 'WARNING: one\nWARNING: two'},
		maintainers={'0001-a.patch': 'MEMORY MANAGEMENT'},
		copies=['0001-a.patch carries a copy of mm/tests/foo_kunit.h'],
		mid_file=['0002-b.patch edits mm/Kconfig other than at its end'])
	out = _lint(tmp_path, kernel_tree, overlay_dir, monkeypatch, report,
		    'a finding', capsys)
	assert out == [
		str(EXIT_TESTS_FAILED),
		'checkpatch --strict: ok: 0001-a.patch',
		'  new files already in MAINTAINERS: MEMORY MANAGEMENT',
		'checkpatch --strict: FAIL: 0002-b.patch',
		'  WARNING: one',
		'  WARNING: two',
		f'git am onto {kernel_tree.resolve()}: ok',
		'the patches carry no copy of kernel/\'s test files: FAIL',
		'  0001-a.patch carries a copy of mm/tests/foo_kunit.h',
		'  (./run_kunit.sh export --refresh takes them out)',
		'the series edits existing files only at their ends: FAIL',
		'  0002-b.patch edits mm/Kconfig other than at its end',
		f'zizmor --offline {WORKFLOW}: FAIL',
		'  a finding',
		'lint: 2 passed, 4 failed']


def test_a_port_is_not_held_to_appending(
		tmp_path: Path, kernel_tree: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch,
		capsys: pytest.CaptureFixture[str]) -> None:
	"""A port's fixes edit the middle of a function: the check is the
	series' alone, and a port's lint has one check fewer."""
	out = _lint(tmp_path, kernel_tree, overlay_dir, monkeypatch,
		    export.LintReport({}), '', capsys, port=True)
	assert not any('only at their ends' in line for line in out)
	assert out[0] == str(EXIT_OK) and out[-1] == 'lint: 5 passed, 0 failed'
