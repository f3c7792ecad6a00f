# SPDX-License-Identifier: GPL-2.0
"""Each commit of a range, and the exit codes of git bisect run
(commits.py), end to end on a fake git kernel tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FAIL_RUN, PASS_RUN, env_for, git, results_dir, run_cli, snapshot


def commit_all(repo: Path, subject: str) -> str:
	git(repo, 'add', '-A')
	git(repo, '-c', 'user.name=T', '-c', 'user.email=t@example.org',
	    'commit', '-q', '-m', subject)
	return git(repo, 'rev-parse', 'HEAD')


def test_each_commit(overlay_dir: Path, kernel_tree: Path,
		     tmp_path: Path) -> None:
	"""Four commits: passing, failing tests, series conflict, not built."""
	git(kernel_tree, 'init', '-q')
	base = commit_all(kernel_tree, 'base')
	(kernel_tree / 'README').write_text('a change the series does not touch\n')
	good = commit_all(kernel_tree, 'mm: good')
	(kernel_tree / 'fake-kunit-run').write_text(str(FAIL_RUN))
	bad = commit_all(kernel_tree, 'mm: breaks swap readahead')
	(kernel_tree / 'fake-kunit-run').unlink()
	kconfig = (kernel_tree / 'mm/Kconfig').read_text()
	(kernel_tree / 'mm/Kconfig').write_text(kconfig.replace('bool', 'def_bool y'))
	conflict = commit_all(kernel_tree, 'mm: rewrite Kconfig')
	(kernel_tree / 'mm/Kconfig').write_text(kconfig)
	broken = tmp_path / 'no-build'
	broken.mkdir()
	(broken / 'exit-code').write_text('1\n')
	(kernel_tree / 'fake-kunit-run').write_text(str(broken))
	nobuild = commit_all(kernel_tree, 'mm: does not build')
	before = snapshot(kernel_tree)
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', '--each-commit', f'{base}..HEAD',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 1, p.stdout + p.stderr
	table = p.stdout[p.stdout.index('commit  '):].splitlines()
	assert table[0].split() == ['commit', 'mm_swap_readahead', 'exit', 'subject']
	assert table[1].split()[:3] == [good[:12], 'ok', '38/38']
	assert table[1].split()[3] == '0'
	assert table[2].split()[:4] == [bad[:12], 'FAIL', '1/38', '1']
	assert table[3].split()[:3] == [conflict[:12], '-', '125']
	assert 'conflict: 0001-mm-foo-add-tests.patch does not apply to mm/Kconfig' \
		in table[3]
	assert table[4].split()[:3] == [nobuild[:12], '-', '125']
	assert 'mm-kunit: 1 of 4 commits passed' in p.stdout
	# Each commit's reports, under the run's results directory.
	res = results_dir(p.stdout)
	assert (res / good[:12] / 'junit.xml').is_file()
	kcidb = json.loads((res / bad[:12] / 'kcidb.json').read_text())
	assert kcidb['checkouts'][0]['git_commit_hash'] == bad
	# The user's tree and its repository were only read.
	assert snapshot(kernel_tree) == before


def test_each_commit_runs_the_suites_named(overlay_dir: Path,
					   kernel_tree: Path,
					   tmp_path: Path) -> None:
	git(kernel_tree, 'init', '-q')
	base = commit_all(kernel_tree, 'base')
	(kernel_tree / 'README').write_text('a change\n')
	commit_all(kernel_tree, 'mm: a change')
	cache = tmp_path / 'c'
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(cache),
		    '--no-install', '--each-commit', f'{base}..HEAD',
		    'mm_swap_readahead', env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 0, p.stdout + p.stderr
	argv = next(cache.glob('trees/*/build-um/kunit-argv.txt')).read_text()
	assert argv.split()[-1] == 'mm_swap_readahead'


def test_each_commit_needs_a_git_range(overlay_dir: Path, kernel_tree: Path,
				       tmp_path: Path) -> None:
	p = run_cli('--kernel', str(kernel_tree), '--cache', str(tmp_path / 'c'),
		    '--no-install', '--each-commit', 'HEAD~1..HEAD',
		    env=env_for(overlay_dir, PASS_RUN))
	assert p.returncode == 2
	assert 'not a git tree' in p.stderr
	p = run_cli('--each-commit', 'A..B', '--no-install')
	assert p.returncode == 2 and '--each-commit needs --kernel' in p.stderr


@pytest.mark.parametrize('case, code', [
	('pass', 0), ('fail', 1), ('conflict', 125), ('nobuild', 125),
	('setup', 128)])
def test_bisect_exit_codes(overlay_dir: Path, kernel_tree: Path,
			   tmp_path: Path, case: str, code: int) -> None:
	run = {'fail': FAIL_RUN}.get(case, PASS_RUN)
	if case == 'conflict':
		(kernel_tree / 'mm/Kconfig').write_text('rewritten upstream\n')
	if case == 'nobuild':
		run = tmp_path / 'no-build'
		run.mkdir()
		(run / 'exit-code').write_text('1\n')
	kernel = tmp_path / 'nope' if case == 'setup' else kernel_tree
	p = run_cli('--kernel', str(kernel), '--cache', str(tmp_path / 'c'),
		    '--no-install', '--bisect', env=env_for(overlay_dir, run))
	assert p.returncode == code, p.stdout + p.stderr
