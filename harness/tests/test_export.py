# SPDX-License-Identifier: GPL-2.0
"""The series for `git am`, and its checks (export.py)."""

from __future__ import annotations

import email.utils
import os
import re
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
	started = int(time.time())
	out = export.export(o, kernel_tree, tmp_path / 'out', WHO)
	ended = time.time()
	assert snapshot(kernel_tree) == before
	assert [p.name for p in out] == ['0001-mm-foo-add-tests.patch']
	text = out[0].read_text()
	assert 'Subject: [PATCH] mm/foo: add tests' in text
	# The exporter's series: authored, signed off and dated now.
	assert 'From: A U Thor <author@example.org>' in text
	assert 'Signed-off-by: A U Thor <author@example.org>\n---' in text
	assert 'Test Author' not in text
	date = re.search(r'^Date: (.*)$', text, re.MULTILINE)
	assert date
	dated = email.utils.parsedate_to_datetime(date.group(1)).timestamp()
	assert started <= dated <= ended
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


def test_refresh_keeps_each_test_file_once_in_kernel(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	"""A test file is kept once, in kernel/: a patch of kernel/patches
	holds its message and the diffs of the files it changes, and export
	puts the files it adds into its mail. lint says which patch carries a
	copy; export --refresh takes it out, keeping each patch's author, date
	and subject, and rewrites a message export would make otherwise."""
	patch = overlay_dir / 'patches/0001-mm-foo-add-tests.patch'
	header = patch.read_text().partition('\n\n')[0]
	# A patch as the series kept them before: with a copy of a new file.
	patch.write_text(patch.read_text() +
			 'diff --git a/mm/tests/foo_kunit.h b/mm/tests/foo_kunit.h\n'
			 'new file mode 100644\n--- /dev/null\n'
			 '+++ b/mm/tests/foo_kunit.h\n@@ -0,0 +1 @@\n+/* old */\n')
	o = ov.Overlay.load(overlay_dir)
	assert export.carried_copies(o) == [
		'0001-mm-foo-add-tests.patch carries a copy of mm/tests/foo_kunit.h']

	assert export.refresh(o, kernel_tree) == [patch]
	text = patch.read_text()
	assert text.partition('\n\n')[0] == header
	assert 'foo_kunit.h\n@@' not in text
	assert ('---\nThe commit adds these files too, from kernel/ when the '
		'series is exported:\n mm/tests/foo_kunit.h\n mm/tests/.kunitconfig\n'
		'\ndiff --git a/mm/Kconfig b/mm/Kconfig\n') in text
	o = ov.Overlay.load(overlay_dir)
	assert export.carried_copies(o) == []
	assert export.refresh(o, kernel_tree) == []
	assert ov.stage(o, kernel_tree)['mm/tests/foo_kunit.h'] == \
		b'/* tests of foo */\n'

	# The mail has the file, as kernel/ has it now.
	(overlay_dir / 'mm/tests/foo_kunit.h').write_text('/* edited */\n')
	o = ov.Overlay.load(overlay_dir)
	(mail,) = export.export(o, kernel_tree, tmp_path / 'out', WHO,
				cover_letter=False)
	assert '+++ b/mm/tests/foo_kunit.h\n@@ -0,0 +1 @@\n+/* edited */\n' \
		in mail.read_text()
	assert ' mm/tests/foo_kunit.h  ' in mail.read_text()  # the diffstat
	assert export.refresh(o, kernel_tree) == []


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


def test_mid_file_edits_names_a_hunk_inside_an_existing_file(
		overlay_dir: Path) -> None:
	"""A hunk in the middle of mm/Kconfig needs the neighbours of one
	release; lines appended to a file's end, or edits of a file the
	series adds, do not."""
	from conftest import FOO_C, KCONFIG, mail, unified_diff
	patch = overlay_dir / 'patches/0001-mm-foo-add-tests.patch'
	assert export.mid_file_edits(ov.Overlay.load(overlay_dir)) == [
		'0001-mm-foo-add-tests.patch edits mm/Kconfig other than at '
		'its end']

	(overlay_dir / 'mm/tests/Kconfig').write_text('config FOO_KUNIT_TEST\n')
	(overlay_dir / 'patches/series').write_text(
		'0001-mm-foo-add-tests.patch mm/tests/foo_kunit.h '
		'mm/tests/.kunitconfig mm/tests/Kconfig\n'
		'0002-mm-bar-add-tests.patch\n')
	patch.write_text(mail('mm/foo: add tests', unified_diff(
		'mm/Kconfig', KCONFIG, KCONFIG + 'source "mm/tests/Kconfig"\n')
		+ unified_diff('mm/foo.c', FOO_C,
			       FOO_C + '\n#include "tests/foo_kunit.h"\n')))
	(overlay_dir / 'patches/0002-mm-bar-add-tests.patch').write_text(
		mail('mm/bar: add tests', unified_diff(
			'mm/tests/Kconfig', 'config FOO_KUNIT_TEST\n',
			'config BAR_KUNIT_TEST\nconfig FOO_KUNIT_TEST\n')))
	assert export.mid_file_edits(ov.Overlay.load(overlay_dir)) == []


@pytest.mark.parametrize('port', ['', 'compat/7.2'])
def test_the_series_edits_kernel_files_only_at_their_ends(port: str) -> None:
	"""7.3's series, and the 7.2 port made of it, apply to a tree one
	release either way: no hunk needs a kernel file's middle."""
	from mmkunit.session import KERNEL_DIR
	assert export.mid_file_edits(ov.Overlay.load(KERNEL_DIR / port)) == []
