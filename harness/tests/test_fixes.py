# SPDX-License-Identifier: GPL-2.0
"""`fixes` end to end on the fake tree (fixes.py): a kernel's run held
against its port's list of the fixes it lacks."""

from __future__ import annotations

from pathlib import Path

from conftest import FAIL_RUN, PASS_RUN, env_for, make_kernel_tree, run_cli

# The row of the swap suite that fails in FAIL_RUN.
ROW = 'mm_swap_readahead.swapin_nr_pages_test.no hits, adjacent backward'


def _fixes(overlay_dir: Path, kernel_tree: Path, tmp_path: Path, run: Path,
	   *args: str, why: str = 'the upstream fix'):
	(overlay_dir / 'expected').write_text(f'fails | {ROW} | {why}\n')
	return run_cli('fixes', '--kernel', str(kernel_tree), '--cache',
		       str(tmp_path / 'c'), '--no-install', *args,
		       env=env_for(overlay_dir, run))


def test_a_kernel_that_lacks_the_fix(overlay_dir: Path, kernel_tree: Path,
				     tmp_path: Path) -> None:
	"""The listed test fails, every other passes: as expected."""
	p = _fixes(overlay_dir, kernel_tree, tmp_path, FAIL_RUN)
	assert p.returncode == 0, p.stdout + p.stderr
	out = p.stdout.splitlines()
	assert out[0] == f'mm-kunit: 6.12 through {overlay_dir}'
	assert f'  {"missing":15} the upstream fix (1 of 1 tests fail)' in out
	assert out[-1] == 'fixes: as expected'
	foo, = (tmp_path / 'c').glob('trees/*/src/mm/foo.c')
	assert 'foo_kunit.h' in foo.read_text()


def test_a_kernel_that_has_the_fix(overlay_dir: Path, kernel_tree: Path,
				   tmp_path: Path) -> None:
	"""The listed test passes: not as expected, and named."""
	p = _fixes(overlay_dir, kernel_tree, tmp_path, PASS_RUN)
	assert p.returncode == 1, p.stdout + p.stderr
	out = p.stdout.splitlines()
	assert f'  {"PRESENT?":15} the upstream fix (0 of 1 tests fail)' in out
	assert f'  PASSED, expected to fail: {ROW} (the upstream fix)' in out
	assert out[-1] == 'fixes: NOT as expected'


def test_a_fix_the_port_carries_is_left_out(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	"""A fix the list names by a patch of the port is built without it."""
	p = _fixes(overlay_dir, kernel_tree, tmp_path, FAIL_RUN,
		   why='0001-mm-foo-add-tests.patch')
	assert p.returncode == 0, p.stdout + p.stderr
	assert p.stdout.splitlines()[0] == (
		f'mm-kunit: 6.12 through {overlay_dir}, without '
		'0001-mm-foo-add-tests.patch')
	foo, = (tmp_path / 'c').glob('trees/*/src/mm/foo.c')
	assert 'foo_kunit.h' not in foo.read_text()


def test_fixes_runs_uml_only(overlay_dir: Path, kernel_tree: Path,
			     tmp_path: Path) -> None:
	p = _fixes(overlay_dir, kernel_tree, tmp_path, PASS_RUN,
		   '--arch', 'x86_64')
	assert p.returncode == 2
	assert 'fixes runs --arch um only' in p.stderr


def test_fixes_without_a_port_says_so(tmp_path: Path) -> None:
	tree = make_kernel_tree(tmp_path / 'linux')
	(tree / 'Makefile').write_text('VERSION = 5\nPATCHLEVEL = 15\n')
	p = run_cli('fixes', '--kernel', str(tree), '--cache',
		    str(tmp_path / 'c'), '--no-install',
		    env={'MM_KUNIT_OVERLAY': ''})
	assert p.returncode != 0
	assert 'no port of the series to 5.15' in p.stderr
	assert 'ports: 6.1, 6.12' in p.stderr
