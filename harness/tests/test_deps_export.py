# SPDX-License-Identifier: GPL-2.0
"""Missing tools, and exporting the series for `git am`."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import List, Optional

import pytest

from conftest import snapshot
from mmkunit import deps
from mmkunit import export as ex
from mmkunit import overlay as ov

WHO = ex.Identity('A U Thor', 'author@example.org')


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


# --- export -----------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
	env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@e',
		   GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@e')
	return subprocess.run(['git', *args], cwd=repo, env=env, check=True,
			      capture_output=True, text=True).stdout


def test_export_gives_git_am_series_with_new_files(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	before = snapshot(kernel_tree)
	out = ex.export(o, kernel_tree, tmp_path / 'out', WHO)
	assert snapshot(kernel_tree) == before
	assert [p.name for p in out] == ['0001-mm-foo-add-tests.patch']
	text = out[0].read_text()
	assert 'Subject: [PATCH] mm/foo: add tests' in text
	# The exporter's series: authored, signed off and dated now.
	assert 'From: A U Thor <author@example.org>' in text
	assert 'Signed-off-by: A U Thor <author@example.org>\n---' in text
	assert 'Test Author' not in text
	assert time.strftime('%d %b %Y', time.gmtime()) in text
	assert 'create mode 100644 mm/tests/foo_kunit.h' in text
	assert 'create mode 100644 mm/tests/.kunitconfig' in text

	# A user's own git tree: git am applies it, giving what the harness tests.
	repo = tmp_path / 'user'
	subprocess.run(['cp', '-a', str(kernel_tree), str(repo)], check=True)
	git(repo, 'init', '-q')
	git(repo, 'add', '-A')
	git(repo, 'commit', '-qm', 'v6.12')
	git(repo, 'am', '-q', str(out[0]))
	assert git(repo, 'log', '--format=%s', '-1').strip() == 'mm/foo: add tests'
	for name, data in ov.stage(o, kernel_tree).items():
		assert (repo / name).read_bytes() == data, name


def test_export_writes_the_cover_letter(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	(overlay_dir / 'patches' / ex.COVER_LETTER).write_text(
		'mm/foo: tests\n\nWhat the series pins, and how to run it.\n')
	o = ov.Overlay.load(overlay_dir)
	out = ex.export(o, kernel_tree, tmp_path / 'out', WHO)
	assert [p.name for p in out] == ['0000-cover-letter.patch',
					 '0001-mm-foo-add-tests.patch']
	cover = out[0].read_text()
	assert 'Subject: [PATCH 0/1] mm/foo: tests' in cover
	assert 'From: A U Thor <author@example.org>' in cover
	assert 'What the series pins, and how to run it.' in cover
	assert 'mm/foo: add tests' in cover  # the shortlog
	assert ex.export(o, kernel_tree, tmp_path / 'lint', WHO,
			 cover_letter=False)[0].name == '0001-mm-foo-add-tests.patch'


def test_user_identity(monkeypatch: pytest.MonkeyPatch) -> None:
	assert ex.user_identity('A U Thor <author@example.org>') == WHO
	with pytest.raises(ex.ExportError, match='Name <email>'):
		ex.user_identity('author@example.org')
	monkeypatch.setenv('GIT_CONFIG_GLOBAL', os.devnull)
	monkeypatch.setenv('GIT_CONFIG_NOSYSTEM', '1')
	monkeypatch.chdir('/')
	with pytest.raises(ex.ExportError, match='git config user.name'):
		ex.user_identity()


def test_export_names_patch_that_does_not_apply(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	(kernel_tree / 'mm/foo.c').write_text('rewritten\n')
	with pytest.raises(ov.PatchFailed, match='0001-mm-foo-add-tests.patch does '
			   'not apply to mm/foo.c'):
		ex.export(ov.Overlay.load(overlay_dir), kernel_tree, tmp_path / 'out',
			  WHO)


def test_check_am_detects_difference(overlay_dir: Path, kernel_tree: Path,
				     tmp_path: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	out = ex.export(o, kernel_tree, tmp_path / 'out', WHO)
	expected = ov.stage(o, kernel_tree)
	assert ex.check_am(kernel_tree, out, expected) == ''
	expected['mm/foo.c'] += b'/* more */\n'
	assert 'mm/foo.c differs' in ex.check_am(kernel_tree, out, expected)
	(kernel_tree / 'mm/Kconfig').write_text('other\n')
	assert 'git am' in ex.check_am(kernel_tree, out, {})
