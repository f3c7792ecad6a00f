# SPDX-License-Identifier: GPL-2.0
"""Many builds of one tree (jobs.py): the baseline they are measured
against, and the jobs shared between the tree and its copies."""

from __future__ import annotations

import contextlib
import threading
import types
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest

from mmkunit import jobs
from mmkunit import overlay as ov
from mmkunit import runner

P, F = runner.Status.PASS, runner.Status.FAIL


class _Tree:
	"""What jobs.py asks of a prepared tree; it records what was done."""
	def __init__(self, root: Path, name: str = 'k') -> None:
		self.root = root
		self.base = root / name
		self.src = self.base / 'src'
		# The extra patches of each prepare(): () is the bare series.
		self.prepared: List[Tuple[Any, ...]] = []
		self.cloned: Optional['_Tree'] = None
		self.copies: List['_Tree'] = []

	def locked(self) -> Any:
		return contextlib.nullcontext()

	def prepare(self, overlay: Any, extra: Any = (),
		    refresh_source: bool = False, seen: Any = None) -> None:
		self.prepared.append(tuple(extra))

	def build_dir(self, key: str) -> Path:
		return self.base / f'build-{key}'

	def worker(self, n: int) -> '_Tree':
		copy = _Tree(self.root, f'{self.base.name}.w{n}')
		self.copies.append(copy)
		return copy

	def clone_from(self, other: '_Tree', key: str) -> None:
		self.cloned = other


def _patch(*touched: str) -> ov.Patch:
	return ov.Patch('p.patch', Path('p.patch'), b'', touched)


def test_only_code_keeps_the_configuration() -> None:
	"""Patches of .c and .h files build on the configuration made once;
	one of a Kconfig file or a Makefile does not."""
	assert jobs.code_only([_patch('mm/filemap.c', 'mm/tests/x.h')])
	assert jobs.code_only([])
	assert not jobs.code_only([_patch('mm/filemap.c'), _patch('mm/Kconfig')])
	assert not jobs.code_only([_patch('mm/Makefile')])


def test_run_seconds_leave_the_build_out(tmp_path: Path) -> None:
	def result(seconds: Optional[float],
		   build: Optional[float]) -> runner.RunResult:
		return runner.RunResult(0, [], tmp_path, seconds=seconds,
					build_seconds=build)
	assert jobs.run_seconds(result(50.0, 20.0)) == 30.0
	assert jobs.run_seconds(result(50.0, None)) == 50.0
	assert jobs.run_seconds(result(None, None)) == 0.0
	assert jobs.run_seconds(result(10.0, 12.0)) == 0.0


def _session(tmp_path: Path) -> Any:
	def put_series(tree: _Tree, extra: Any = (), overlay: Any = None) -> None:
		tree.prepare(overlay or 'the series', extra)
	return types.SimpleNamespace(put_series=put_series, cache=tmp_path,
				     build_key='um')


def test_jobs_share_the_trees_and_keep_their_order(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""Two trees for three jobs: the tree is configured and built by the
	first job before its copy is made from it; the results come in the
	jobs' order, and both trees hold the bare series afterwards."""
	configured = []
	monkeypatch.setattr(jobs.runner, 'configure',
			    lambda *a: configured.append(a[1]))
	monkeypatch.setattr(jobs.runner, 'new_results_dir',
			    lambda cache, label: tmp_path)
	tree = _Tree(tmp_path)
	ran = []
	lock = threading.Lock()

	def job(i: int) -> jobs.Job:
		def run(t: Any) -> int:
			with lock:
				ran.append((i, t.base.name, t.cloned))
			return i * 10
		return run

	out = jobs.run_jobs(_session(tmp_path), tree, 2,
			    [job(i) for i in range(3)], runner.RunOptions())
	assert out == [0, 10, 20]
	assert configured == [tree.build_dir('um')]
	copy, = tree.copies
	assert copy.cloned is tree
	# The first job ran in the first tree, before any copy was made.
	assert ran[0] == (0, 'k', None)
	assert sorted(i for i, _, _ in ran) == [0, 1, 2]
	assert tree.prepared[-1] == () and copy.prepared[-1] == ()


def test_a_failing_job_leaves_every_tree_bare(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.setattr(jobs.runner, 'configure', lambda *a: None)
	tree = _Tree(tmp_path)
	tree.build_dir('um').mkdir(parents=True)
	(tree.build_dir('um') / 'vmlinux').write_text('')

	def job(t: Any) -> None:
		t.prepare('the series', ['a mutant'])
		raise RuntimeError('the job broke')

	with pytest.raises(RuntimeError, match='the job broke'):
		jobs.run_jobs(_session(tmp_path), tree, 2, [job, job],
			      runner.RunOptions(), configured=True)
	for t in [tree, *tree.copies]:
		assert t.prepared[-1] == (), t.base


def test_no_more_copies_than_jobs(tmp_path: Path) -> None:
	tree = _Tree(tmp_path)
	assert jobs.run_jobs(_session(tmp_path), tree, 4, [lambda t: 'one'],
			     runner.RunOptions(), configured=True) == ['one']
	assert tree.copies == []


def test_copies_made_now_are_those_the_jobs_run_in(tmp_path: Path) -> None:
	"""copy_now() makes, from the tree as it is, the copies run_jobs()
	then runs the same number of jobs in; none for a single job."""
	tree = _Tree(tmp_path)
	jobs.copy_now(_session(tmp_path), tree, 2, 1)
	assert tree.copies == []
	jobs.copy_now(_session(tmp_path), tree, 2, 6)
	assert [(c.base.name, c.cloned) for c in tree.copies] == [('k.w2', tree)]
	assert [t.base.name for t in jobs.trees_for(tree, 2, 6)] == ['k', 'k.w2']


@pytest.mark.parametrize('result, why', [
	(runner.RunResult(1, [runner.CaseResult('s.a', P),
			      runner.CaseResult('s.b', F)], Path()),
	 '1 tests failed'),
	(runner.RunResult(0, [runner.CaseResult('s.a', P)], Path(),
			  complaints=['WARNING: suspicious RCU usage']),
	 'WARNING: suspicious RCU usage'),
	(runner.RunResult(2, [], Path(), error='the kernel did not build'),
	 'the kernel did not build'),
])
def test_baseline_that_does_not_pass_measures_nothing(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
		result: runner.RunResult, why: str) -> None:
	"""Without a passing baseline every mutant would look killed: the
	run stops with a one-line error that says why."""
	from mmkunit import request
	from mmkunit.session import HarnessError, Session
	monkeypatch.setattr(jobs.runner, 'configure', lambda *a: None)
	monkeypatch.setattr(jobs.runner, 'run_kunit', lambda *a, **k: result)
	s = Session(request.Source(cache=tmp_path))
	with pytest.raises(HarnessError) as e:
		jobs.baseline(s, _Tree(tmp_path), runner.RunOptions())
	assert f'the suites do not pass without a mutant ({why};' in \
		str(e.value)
	assert '\n' not in str(e.value)
	good = runner.RunResult(0, [runner.CaseResult('s.a', P)], tmp_path,
				booted=True)
	monkeypatch.setattr(jobs.runner, 'run_kunit', lambda *a, **k: good)
	tree = _Tree(tmp_path)
	assert jobs.baseline(s, tree, runner.RunOptions()) is good
	assert tree.prepared == [()]
