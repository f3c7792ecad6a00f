# SPDX-License-Identifier: GPL-2.0
"""Loading the overlay, staging it, and writing it into trees."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import (FOO_C, OVERLAYS, REPO, make_kernel_tree, snapshot,
		      unified_diff)
from mmkunit import overlay as ov
from mmkunit import trees


def test_load_finds_patches_and_new_files(overlay_dir: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	assert [p.name for p in o.patches] == ['0001-mm-foo-add-tests.patch']
	assert o.patches[0].touched == ('mm/Kconfig', 'mm/foo.c')
	assert o.patches[0].new_files == ('mm/tests/foo_kunit.h', 'mm/tests/.kunitconfig')
	assert o.files == ('mm/tests/.kunitconfig', 'mm/tests/foo_kunit.h')
	assert [m.name for m in o.mutants()] == ['foo-off-by-one.patch']


@pytest.mark.parametrize('root', OVERLAYS,
			 ids=[str(d.relative_to(REPO)) for d in OVERLAYS])
def test_the_repository_overlays_are_consistent(root: Path) -> None:
	o = ov.Overlay.load(root)
	assert o.patches, 'the series is empty'
	assert 'mm/tests/.kunitconfig' in o.files
	for m in o.mutants():
		assert not any(f.startswith('mm/tests/') for f in m.touched), \
			f'{m.name}: a mutant must break kernel code, not the tests'


@pytest.mark.parametrize('series, message', [
	('0001-mm-foo-add-tests.patch mm/tests/foo_kunit.h\n',
	 'no patch adds mm/tests/.kunitconfig'),
	('0001-mm-foo-add-tests.patch mm/tests/foo_kunit.h mm/tests/.kunitconfig mm/nope.h\n',
	 'mm/nope.h is not a file'),
	('0001-mm-foo-add-tests.patch mm/tests/foo_kunit.h mm/tests/.kunitconfig\n'
	 '0001-mm-foo-add-tests.patch\n', 'listed twice'),
	('0002-missing.patch mm/tests/foo_kunit.h mm/tests/.kunitconfig\n',
	 '0002-missing.patch: no such patch'),
])
def test_load_rejects_bad_series(overlay_dir: Path, series: str,
				 message: str) -> None:
	(overlay_dir / 'patches/series').write_text(series)
	with pytest.raises(ov.OverlayError, match=message):
		ov.Overlay.load(overlay_dir)


def test_load_rejects_unlisted_patch(overlay_dir: Path) -> None:
	(overlay_dir / 'patches/0002-stray.patch').write_text('diff --git a/x b/x\n')
	with pytest.raises(ov.OverlayError, match='not listed: 0002-stray.patch'):
		ov.Overlay.load(overlay_dir)


def test_load_rejects_non_patch(overlay_dir: Path) -> None:
	"""A patch with no diff is refused, unless it names the files its
	commit adds: then it is a commit of new files alone."""
	series = overlay_dir / 'patches/series'
	series.write_text(series.read_text() + '0002-hello.patch\n')
	(overlay_dir / 'patches/0002-hello.patch').write_text('hello\n')
	with pytest.raises(ov.OverlayError, match='not a patch'):
		ov.Overlay.load(overlay_dir)


def test_a_patch_of_new_files_alone(overlay_dir: Path,
				    kernel_tree: Path) -> None:
	(overlay_dir / 'mm/tests/bar_kunit.h').write_text('/* bar */\n')
	series = overlay_dir / 'patches/series'
	series.write_text(series.read_text() +
			  '0002-bar.patch mm/tests/bar_kunit.h\n')
	(overlay_dir / 'patches/0002-bar.patch').write_text(
		'mm: bar tests\n\n---\n')
	staged = ov.stage(ov.Overlay.load(overlay_dir), kernel_tree)
	assert staged['mm/tests/bar_kunit.h'] == b'/* bar */\n'


def test_stage_computes_result_without_writing(overlay_dir: Path,
					       kernel_tree: Path) -> None:
	before = snapshot(kernel_tree)
	files = ov.stage(ov.Overlay.load(overlay_dir), kernel_tree)
	assert snapshot(kernel_tree) == before
	assert files['mm/foo.c'].decode().endswith('#include "tests/foo_kunit.h"\n')
	assert b'FOO_KUNIT_TEST' in files['mm/Kconfig']
	assert files['mm/tests/foo_kunit.h'] == b'/* tests of foo */\n'


def test_stage_names_patch_and_file_that_do_not_apply(
		overlay_dir: Path, kernel_tree: Path) -> None:
	(kernel_tree / 'mm/foo.c').write_text('rewritten upstream\n')
	before = snapshot(kernel_tree)
	o = ov.Overlay.load(overlay_dir)
	with pytest.raises(ov.PatchFailed) as e:
		ov.stage(o, kernel_tree, o.mutants())
	assert e.value.patch.name == 'foo-off-by-one.patch'
	assert e.value.files == ['mm/foo.c']
	assert 'foo-off-by-one.patch does not apply to mm/foo.c' in str(e.value)
	assert snapshot(kernel_tree) == before


def test_stage_appends_hooks_whatever_the_files_last_lines(
		overlay_dir: Path, kernel_tree: Path) -> None:
	later_c = FOO_C.replace('x * 2', 'x * 3') + '\nstatic int baz;\n'
	(kernel_tree / 'mm/foo.c').write_text(later_c)
	o = ov.Overlay.load(overlay_dir)
	files = ov.stage(o, kernel_tree)
	assert files['mm/foo.c'].decode() == \
		later_c + '\n#include "tests/foo_kunit.h"\n'
	ov.sync_files(kernel_tree, dict(files))
	again, applied = ov.stage_detecting_applied(o, kernel_tree)
	assert applied
	assert again == files


def test_stage_refuses_a_hook_the_file_already_ends_with(
		overlay_dir: Path, kernel_tree: Path) -> None:
	(kernel_tree / 'mm/foo.c').write_text(
		'int x;\n\n#include "tests/foo_kunit.h"\n')
	with pytest.raises(ov.PatchFailed,
			   match='mm/foo.c already ends with the lines'):
		ov.stage(ov.Overlay.load(overlay_dir), kernel_tree)


def test_stage_applies_a_diff_without_a_git_header(
		overlay_dir: Path, kernel_tree: Path) -> None:
	"""A generated mutant's diff has only its ---/+++ lines: it is
	applied, not passed over."""
	o = ov.Overlay.load(overlay_dir)
	base = ov.stage(o, kernel_tree)['mm/foo.c'].decode()
	diff = unified_diff('mm/foo.c', base, base.replace('x * 2', 'x * 3'))
	plain = diff.split('\n', 1)[1]
	assert plain.startswith('--- a/mm/foo.c')
	mutant = ov.Patch('m.patch', Path('m'), plain.encode(), ('mm/foo.c',))
	files = ov.stage(o, kernel_tree, [mutant])
	assert files['mm/foo.c'].decode() == base.replace('x * 2', 'x * 3')


def test_stage_refuses_a_patch_with_nothing_to_apply(
		overlay_dir: Path, kernel_tree: Path) -> None:
	empty = ov.Patch('m.patch', Path('m'), b'a description\n', ())
	with pytest.raises(ov.PatchFailed, match='no hunk to apply'):
		ov.stage(ov.Overlay.load(overlay_dir), kernel_tree, [empty])


def test_split_appends_keeps_hunks_inside_a_file() -> None:
	middle = unified_diff('mm/foo.c', FOO_C, FOO_C.replace('x + 1', 'x'))
	end = unified_diff('mm/bar.c', FOO_C, FOO_C + '#include "b.h"\n')
	new = unified_diff('mm/new.h', '', 'int n;\n').replace(
		'--- a/mm/new.h', 'new file mode 100644\n--- /dev/null')
	text, appends = ov.split_appends((middle + end + new).encode())
	assert text.decode() == middle + new
	assert appends == {'mm/bar.c': b'#include "b.h"\n'}


def test_stage_names_missing_file(overlay_dir: Path, kernel_tree: Path) -> None:
	(kernel_tree / 'mm/Kconfig').unlink()
	with pytest.raises(ov.PatchFailed, match='does not apply to mm/Kconfig'):
		ov.stage(ov.Overlay.load(overlay_dir), kernel_tree)


def test_stage_refuses_to_overwrite_existing_file(overlay_dir: Path,
						  kernel_tree: Path) -> None:
	(kernel_tree / 'mm/tests').mkdir()
	(kernel_tree / 'mm/tests/foo_kunit.h').write_text('theirs\n')
	with pytest.raises(ov.OverlayError, match='already exists'):
		ov.stage(ov.Overlay.load(overlay_dir), kernel_tree)


def test_stage_rejects_non_kernel_tree(overlay_dir: Path, tmp_path: Path) -> None:
	(tmp_path / 'empty').mkdir()
	with pytest.raises(ov.OverlayError, match='not a kernel source tree'):
		ov.stage(ov.Overlay.load(overlay_dir), tmp_path / 'empty')
	with pytest.raises(ov.OverlayError, match='no such directory'):
		ov.stage(ov.Overlay.load(overlay_dir), tmp_path / 'nowhere')


def test_stage_with_mutant_on_top(overlay_dir: Path, kernel_tree: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	files = ov.stage(o, kernel_tree, o.mutants())
	assert b'x + 2' in files['mm/foo.c']
	assert b'tests/foo_kunit.h' in files['mm/foo.c']


def test_stage_detecting_applied(overlay_dir: Path, kernel_tree: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	first, applied = ov.stage_detecting_applied(o, kernel_tree)
	assert not applied
	ov.sync_files(kernel_tree, dict(first))
	again, applied = ov.stage_detecting_applied(o, kernel_tree)
	assert applied
	assert again == first


def test_sync_files_writes_only_changes(tmp_path: Path) -> None:
	(tmp_path / 'same').write_text('same\n')
	(tmp_path / 'old').write_text('old\n')
	(tmp_path / 'gone').write_text('gone\n')
	os.utime(tmp_path / 'same', (1000, 1000))
	changed = ov.sync_files(tmp_path, {'same': b'same\n', 'old': b'new\n',
					   'gone': None, 'dir/new': b'x\n'})
	assert changed == ['dir/new', 'gone', 'old']
	assert (tmp_path / 'same').stat().st_mtime == 1000
	assert (tmp_path / 'old').read_text() == 'new\n'
	assert not (tmp_path / 'gone').exists()
	assert (tmp_path / 'dir/new').read_text() == 'x\n'


def test_sync_files_rolls_back_on_error(tmp_path: Path) -> None:
	(tmp_path / 'a').write_text('a\n')
	(tmp_path / 'blocker').write_text('a file, not a directory\n')
	with pytest.raises(OSError):
		ov.sync_files(tmp_path, {'a': b'changed\n', 'blocker/x': b'x\n'})
	assert (tmp_path / 'a').read_text() == 'a\n'


# --- prepared trees -------------------------------------------------------

def test_prepare_copies_source_and_leaves_it_alone(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	before = snapshot(kernel_tree)
	tree = trees.user_tree(tmp_path / 'cache', kernel_tree)
	changed = tree.prepare(ov.Overlay.load(overlay_dir), refresh_source=True)
	assert snapshot(kernel_tree) == before
	assert sorted(changed) == ['mm/Kconfig', 'mm/foo.c',
				   'mm/tests/.kunitconfig', 'mm/tests/foo_kunit.h']
	assert b'tests/foo_kunit.h' in (tree.src / 'mm/foo.c').read_bytes()


def test_prepare_again_touches_nothing(overlay_dir: Path, kernel_tree: Path,
				       tmp_path: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	tree = trees.user_tree(tmp_path / 'cache', kernel_tree)
	tree.prepare(o, refresh_source=True)
	stamps = {p: p.stat().st_mtime_ns for p in tree.src.rglob('*') if p.is_file()}
	assert tree.prepare(o, refresh_source=True) == []
	assert stamps == {p: p.stat().st_mtime_ns
			  for p in tree.src.rglob('*') if p.is_file()}


def test_prepare_says_what_it_brought_over_from_the_users_tree(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	"""A refresh from a user's tree names each file rsync wrote or
	deleted (the overlay's files too, once each), not directories."""
	o = ov.Overlay.load(overlay_dir)
	(kernel_tree / 'mm/old.h').write_text('int old;\n')
	(kernel_tree / 'mm/gone/deeper').mkdir(parents=True)
	(kernel_tree / 'mm/gone/deeper/g.c').write_text('int g;\n')
	tree = trees.user_tree(tmp_path / 'cache', kernel_tree)
	tree.prepare(o, refresh_source=True)
	(kernel_tree / 'mm/new dir').mkdir()
	(kernel_tree / 'mm/new dir/bar.h').write_text('int bar;\n')
	(kernel_tree / 'mm/old.h').unlink()
	shutil.rmtree(kernel_tree / 'mm/gone')
	with open(kernel_tree / 'mm/foo.c', 'a') as f:
		f.write('/* edited */\n')
	changed = tree.prepare(o, refresh_source=True)
	assert sorted(changed) == ['mm/foo.c', 'mm/gone/deeper/g.c',
				   'mm/new dir/bar.h', 'mm/old.h']
	assert not (tree.src / 'mm/old.h').exists()
	assert not (tree.src / 'mm/gone').exists()
	assert tree.prepare(o, refresh_source=True) == []


def test_prepare_follows_overlay_changes(overlay_dir: Path, kernel_tree: Path,
					 tmp_path: Path) -> None:
	tree = trees.user_tree(tmp_path / 'cache', kernel_tree)
	tree.prepare(ov.Overlay.load(overlay_dir), refresh_source=True)
	(overlay_dir / 'mm/tests/foo_kunit.h').write_text('/* edited */\n')
	changed = tree.prepare(ov.Overlay.load(overlay_dir), refresh_source=True)
	assert changed == ['mm/tests/foo_kunit.h']
	assert (tree.src / 'mm/tests/foo_kunit.h').read_text() == '/* edited */\n'


def test_prepare_with_mutant_then_without(overlay_dir: Path, kernel_tree: Path,
					  tmp_path: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	tree = trees.user_tree(tmp_path / 'cache', kernel_tree)
	tree.prepare(o, o.mutants(), refresh_source=True)
	assert b'x + 2' in (tree.src / 'mm/foo.c').read_bytes()
	assert tree.prepare(o, refresh_source=True) == ['mm/foo.c']
	assert b'x + 1' in (tree.src / 'mm/foo.c').read_bytes()


def test_prepare_restores_files_the_overlay_dropped(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	tree = trees.user_tree(tmp_path / 'cache', kernel_tree)
	tree.prepare(ov.Overlay.load(overlay_dir), refresh_source=True)
	# Drop the .kunitconfig and the Kconfig hunk from the overlay.
	(overlay_dir / 'mm/tests/.kunitconfig').unlink()
	patch = overlay_dir / 'patches/0001-mm-foo-add-tests.patch'
	text = patch.read_text()
	head, rest = text.split('diff --git a/mm/Kconfig', 1)
	patch.write_text(head + 'diff --git a/mm/foo.c' + rest.split('diff --git a/mm/foo.c', 1)[1])
	(overlay_dir / 'patches/series').write_text(
		'0001-mm-foo-add-tests.patch mm/tests/foo_kunit.h\n')
	changed = tree.prepare(ov.Overlay.load(overlay_dir), refresh_source=True)
	assert sorted(changed) == ['mm/Kconfig', 'mm/tests/.kunitconfig']
	assert (tree.src / 'mm/Kconfig').read_bytes() == (kernel_tree / 'mm/Kconfig').read_bytes()
	assert not (tree.src / 'mm/tests/.kunitconfig').exists()


def test_prepare_picks_up_edits_in_users_tree(overlay_dir: Path,
					      kernel_tree: Path,
					      tmp_path: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	tree = trees.user_tree(tmp_path / 'cache', kernel_tree)
	tree.prepare(o, refresh_source=True)
	(kernel_tree / 'mm/foo.c').write_text(FOO_C.replace('x + 1', 'x + 3'))
	(kernel_tree / 'mm/new.c').write_text('/* new */\n')
	assert tree.prepare(o, refresh_source=True) == ['mm/new.c', 'mm/foo.c']
	foo = (tree.src / 'mm/foo.c').read_text()
	assert 'x + 3' in foo and 'tests/foo_kunit.h' in foo
	assert (tree.src / 'mm/new.c').read_text() == '/* new */\n'


def test_prepare_failure_changes_nothing(overlay_dir: Path, kernel_tree: Path,
					 tmp_path: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	tree = trees.user_tree(tmp_path / 'cache', kernel_tree)
	tree.prepare(o, refresh_source=True)
	prepared = snapshot(tree.src)
	(kernel_tree / 'mm/Kconfig').write_text('rewritten upstream\n')
	with pytest.raises(ov.PatchFailed, match='mm/Kconfig'):
		tree.prepare(o, refresh_source=True)
	assert snapshot(tree.src) == prepared


def test_unpack_tarball_once(tmp_path: Path, kernel_tree: Path) -> None:
	import subprocess
	tarball = tmp_path / 'linux-source-6.12.tar.xz'
	subprocess.run(['tar', '-cJf', str(tarball), '-C', str(kernel_tree.parent),
			kernel_tree.name], check=True)
	pristine = trees.unpack_tarball(tarball, tmp_path / 'cache')
	assert (pristine / 'mm/foo.c').read_text() == FOO_C
	(pristine / 'marker').write_text('still the same unpack\n')
	assert trees.unpack_tarball(tarball, tmp_path / 'cache') == pristine
	assert (pristine / 'marker').exists()


def test_unpack_rejects_non_kernel_tarball(tmp_path: Path) -> None:
	import subprocess
	(tmp_path / 'junk').mkdir()
	(tmp_path / 'junk/README').write_text('hello\n')
	tarball = tmp_path / 'junk.tar.xz'
	subprocess.run(['tar', '-cJf', str(tarball), '-C', str(tmp_path), 'junk'],
		       check=True)
	with pytest.raises(trees.TreeError, match='does not hold a kernel'):
		trees.unpack_tarball(tarball, tmp_path / 'cache')
	with pytest.raises(trees.TreeError, match='no such kernel tarball'):
		trees.unpack_tarball(tmp_path / 'none.tar.xz', tmp_path / 'cache')


def test_apply_in_place_is_idempotent(overlay_dir: Path, kernel_tree: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	assert len(trees.apply_in_place(o, kernel_tree)) == 4
	assert trees.apply_in_place(o, kernel_tree) == []


def test_apply_in_place_failure_changes_nothing(overlay_dir: Path,
						kernel_tree: Path) -> None:
	(kernel_tree / 'mm/Kconfig').write_text('menu "x"\nendmenu\n')
	before = snapshot(kernel_tree)
	with pytest.raises(ov.PatchFailed, match='does not apply to mm/Kconfig'):
		trees.apply_in_place(ov.Overlay.load(overlay_dir), kernel_tree)
	assert snapshot(kernel_tree) == before


def test_prepared_tree_lock_makes_a_second_run_wait(tmp_path: Path,
						    kernel_tree: Path) -> None:
	import threading
	tree = trees.user_tree(tmp_path / 'cache', kernel_tree)
	order = []
	with tree.locked():
		t = threading.Thread(target=lambda: (tree.locked().__enter__(),
						     order.append('second')))
		t.start()
		t.join(0.5)
		assert t.is_alive(), 'the second holder did not wait'
		order.append('first done')
	t.join(5)
	assert order == ['first done', 'second']


def test_prepared_tree_lock_may_be_taken_again_by_its_holder(
		tmp_path: Path, kernel_tree: Path) -> None:
	"""A run that holds its tree (a baseline, then the mutants measured
	against it) takes it again without waiting for itself, and still
	holds it after the inner hold ends."""
	import fcntl
	tree = trees.user_tree(tmp_path / 'cache', kernel_tree)
	with tree.locked():
		with tree.locked():
			pass
		with open(tree.base / 'lock') as f, pytest.raises(BlockingIOError):
			fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
	with open(tree.base / 'lock') as f:
		fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_overlay_is_a_snapshot(overlay_dir: Path, kernel_tree: Path) -> None:
	o = ov.Overlay.load(overlay_dir)
	(overlay_dir / 'mm/tests/foo_kunit.h').write_text('/* edited later */\n')
	(overlay_dir / 'patches/0001-mm-foo-add-tests.patch').write_text('broken\n')
	files = ov.stage(o, kernel_tree)
	assert files['mm/tests/foo_kunit.h'] == b'/* tests of foo */\n'
	assert b'tests/foo_kunit.h' in files['mm/foo.c']


def test_overlay_without_fixes_and_failing_here(overlay_dir: Path) -> None:
	(overlay_dir / 'expected').write_text(
		'# comment\nfails | foo.* | 0001-mm-foo-add-tests.patch\n'
		'fails | bar.* | an upstream fix the kernel lacks\n')
	o = ov.Overlay.load(overlay_dir)
	assert o.fixes() == {'0001-mm-foo-add-tests.patch': ('foo.*',)}
	# What the kernel fails with the whole series: not the tests of a
	# patch of it.
	assert o.failing_here() == [('bar.*', 'an upstream fix the kernel lacks')]
	w = o.without(['0001-mm-foo-add-tests.patch'])
	assert w.patches == () and w.files == ()
	with pytest.raises(ov.OverlayError, match='not in the series'):
		o.without(['0009-nope.patch'])
	(overlay_dir / 'expected').write_text('fails | foo | 0009-nope.patch\n')
	with pytest.raises(ov.OverlayError, match='not in the series'):
		ov.Overlay.load(overlay_dir).fixes()


def test_overlay_patch_may_edit_a_file_an_earlier_line_adds(
		tmp_path: Path) -> None:
	tree = make_kernel_tree(tmp_path / 'linux')
	root = tmp_path / 'port'
	(root / 'patches').mkdir(parents=True)
	(root / 'mm/tests').mkdir(parents=True)
	(root / 'mm/tests/t.h').write_text('a = new;\n')
	(root / 'expected').write_text('fails | x | y\n')
	(root / 'patches/0001-add.patch').write_text(
		'diff --git a/mm/foo.c b/mm/foo.c\n--- a/mm/foo.c\n+++ b/mm/foo.c\n'
		'@@ -1,2 +1,3 @@\n // SPDX-License-Identifier: GPL-2.0\n'
		'+#include "tests/t.h"\n #include <linux/mm.h>\n')
	(root / 'patches/0002-edit.patch').write_text(
		'diff --git a/mm/tests/t.h b/mm/tests/t.h\n--- a/mm/tests/t.h\n'
		'+++ b/mm/tests/t.h\n@@ -1 +1 @@\n-a = new;\n+a = old;\n')
	(root / 'patches/series').write_text(
		'0001-add.patch mm/tests/t.h\n0002-edit.patch\n')
	overlay = ov.Overlay.load(root)
	# `expected` is about the port, not a file for the tree.
	assert overlay.files == ('mm/tests/t.h',)
	files = ov.stage(overlay, tree)
	assert files['mm/tests/t.h'] == b'a = old;\n'
	assert b'tests/t.h' in files['mm/foo.c']


def test_what_the_kernels_fail_with_the_whole_series() -> None:
	"""7.3 fails nothing with the series: its list names the parts of
	the changes its reverts take out. 6.12 fails the rows of 7.3's
	filemap suite it does otherwise, not the tests of its own P1 and P2
	patches."""
	assert ov.Overlay.load(REPO / 'kernel').failing_here() == []
	port = ov.Overlay.load(REPO / 'kernel/compat/6.12')
	why = {w for _, w in port.failing_here()}
	assert why and not any(w.endswith('.patch') for w in why)
	assert 'mm_filemap_mmap_miss.filemap_test_sync_readahead_large_folio' \
		in {p for p, _ in port.failing_here()}
