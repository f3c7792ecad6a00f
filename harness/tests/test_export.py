# SPDX-License-Identifier: GPL-2.0
"""The series for `git am`, and its checks (export.py)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import git, snapshot
from mmkunit import export
from mmkunit import overlay as ov


WHO = export.Identity('A U Thor', 'author@example.org')


def test_export_gives_git_am_series_with_new_files(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	before = snapshot(kernel_tree)
	out = export.export(o, kernel_tree, tmp_path / 'out', WHO)
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
	(overlay_dir / 'patches' / export.COVER_LETTER).write_text(
		'mm/foo: tests\n\nWhat the series pins, and how to run it.\n')
	o = ov.Overlay.load(overlay_dir)
	out = export.export(o, kernel_tree, tmp_path / 'out', WHO)
	assert [p.name for p in out] == ['0000-cover-letter.patch',
					 '0001-mm-foo-add-tests.patch']
	cover = out[0].read_text()
	assert 'Subject: [PATCH 0/1] mm/foo: tests' in cover
	assert 'From: A U Thor <author@example.org>' in cover
	assert 'What the series pins, and how to run it.' in cover
	assert 'mm/foo: add tests' in cover  # the shortlog
	assert export.export(o, kernel_tree, tmp_path / 'lint', WHO,
			 cover_letter=False)[0].name == '0001-mm-foo-add-tests.patch'


def test_user_identity(monkeypatch: pytest.MonkeyPatch) -> None:
	assert export.user_identity('A U Thor <author@example.org>') == WHO
	with pytest.raises(export.ExportError, match='Name <email>'):
		export.user_identity('author@example.org')
	monkeypatch.setenv('GIT_CONFIG_GLOBAL', os.devnull)
	monkeypatch.setenv('GIT_CONFIG_NOSYSTEM', '1')
	monkeypatch.chdir('/')
	with pytest.raises(export.ExportError, match='git config user.name'):
		export.user_identity()


def test_export_names_patch_that_does_not_apply(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	(kernel_tree / 'mm/Kconfig').write_text('rewritten\n')
	with pytest.raises(ov.PatchFailed, match='0001-mm-foo-add-tests.patch does '
			   'not apply to mm/Kconfig'):
		export.export(ov.Overlay.load(overlay_dir), kernel_tree, tmp_path / 'out',
			  WHO)


def test_check_am_detects_difference(overlay_dir: Path, kernel_tree: Path,
				     tmp_path: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	out = export.export(o, kernel_tree, tmp_path / 'out', WHO)
	expected = ov.stage(o, kernel_tree)
	assert export.check_am(kernel_tree, out, expected) == ''
	expected['mm/foo.c'] += b'/* more */\n'
	assert 'mm/foo.c differs' in export.check_am(kernel_tree, out, expected)
	(kernel_tree / 'mm/Kconfig').write_text('other\n')
	assert 'git am' in export.check_am(kernel_tree, out, {})


def test_local_patches_stay_out_of_the_upstream_series(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	"""patches/local names the project's own patches: `export` leaves
	them out, `export --local` writes them alone, numbered after the
	series, to apply on top of it."""
	from conftest import FOO_C, mail, unified_diff
	(overlay_dir / 'patches/0002-mm-foo-bench.patch').write_text(mail(
		'mm/foo: add a benchmark', unified_diff(
			'mm/foo.c', FOO_C + '\n#include "tests/foo_kunit.h"\n',
			FOO_C + '\n#include "tests/foo_kunit.h"\n'
			'#include "tests/foo_bench.h"\n')))
	(overlay_dir / 'mm/tests/foo_bench.h').write_text('/* bench */\n')
	with open(overlay_dir / 'patches/series', 'a') as f:
		f.write('0002-mm-foo-bench.patch mm/tests/foo_bench.h\n')
	(overlay_dir / 'patches/local').write_text('# ours\n0002-mm-foo-bench.patch\n')
	o = ov.Overlay.load(overlay_dir)
	assert o.local() == ['0002-mm-foo-bench.patch']
	up = export.export(o, kernel_tree, tmp_path / 'up', WHO)
	assert [p.name for p in up] == ['0001-mm-foo-add-tests.patch']
	assert 'foo_bench' not in up[0].read_text()
	local = export.export(o, kernel_tree, tmp_path / 'local', WHO, local=True)
	assert [p.name for p in local] == ['0002-mm-foo-add-a-benchmark.patch']
	assert 'new file mode' in local[0].read_text()
	repo = tmp_path / 'repo'
	subprocess.run(['cp', '-a', str(kernel_tree), str(repo)], check=True)
	git(repo, 'init', '-q')
	git(repo, 'add', '-A')
	git(repo, 'commit', '-qm', 'v6.12')
	git(repo, 'am', '-q', str(up[0]), str(local[0]))
	for name, data in ov.stage(o, kernel_tree).items():
		assert (repo / name).read_bytes() == data, name
	(overlay_dir / 'patches/local').write_text('0001-mm-foo-add-tests.patch\n')
	with pytest.raises(ov.OverlayError, match='must come last'):
		ov.Overlay.load(overlay_dir).local()


def test_refresh_makes_each_patch_carry_its_new_files(
		overlay_dir: Path, kernel_tree: Path) -> None:
	"""The series and kernel/ hold the same test files: lint says which
	patch does not carry one, or carries an old copy; export --refresh
	writes them in, keeping each patch's author, date and subject."""
	patch = overlay_dir / 'patches/0001-mm-foo-add-tests.patch'
	header = patch.read_text().partition('\n\n')[0]
	o = ov.Overlay.load(overlay_dir)
	assert export.stale_copies(o) == [
		'0001-mm-foo-add-tests.patch does not carry mm/tests/foo_kunit.h',
		'0001-mm-foo-add-tests.patch does not carry mm/tests/.kunitconfig']

	assert export.refresh(o, kernel_tree) == [patch]
	text = patch.read_text()
	assert text.partition('\n\n')[0] == header
	assert '+++ b/mm/tests/foo_kunit.h\n@@ -0,0 +1 @@\n+/* tests of foo */\n' in text
	o = ov.Overlay.load(overlay_dir)
	assert export.stale_copies(o) == []
	assert export.refresh(o, kernel_tree) == []
	# The copies are left out of what is applied: the files come from
	# kernel/, once.
	(o_patch,) = o.patches
	assert b'foo_kunit.h\n' not in o_patch.text.split(b'diff --git')[-1]
	assert o_patch.carried['mm/tests/foo_kunit.h'] == b'/* tests of foo */\n'
	assert ov.stage(o, kernel_tree)['mm/tests/foo_kunit.h'] == \
		b'/* tests of foo */\n'

	(overlay_dir / 'mm/tests/foo_kunit.h').write_text('/* edited */\n')
	assert export.stale_copies(ov.Overlay.load(overlay_dir)) == [
		'0001-mm-foo-add-tests.patch carries an old copy of '
		'mm/tests/foo_kunit.h']


def test_split_carried_keeps_other_diffs_and_files_without_newline() -> None:
	from conftest import unified_diff
	diff = (unified_diff('mm/foo.c', 'a\n', 'b\n')
		+ 'diff --git a/mm/new.h b/mm/new.h\nnew file mode 100644\n'
		'index 0000000..1111111\n--- /dev/null\n+++ b/mm/new.h\n'
		'@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n'
		+ 'diff --git a/mm/other.h b/mm/other.h\nnew file mode 100644\n'
		'--- /dev/null\n+++ b/mm/other.h\n@@ -0,0 +1 @@\n+x\n')
	text, carried = ov.split_carried(diff.encode(), ['mm/new.h'])
	assert carried == {'mm/new.h': b'one\ntwo'}
	assert b'mm/new.h' not in text
	assert b'+++ b/mm/other.h' in text and b'+++ b/mm/foo.c' in text
