# SPDX-License-Identifier: GPL-2.0
"""`mutants --generated`: classification, the table, the JSON and its
merge, --in-diff's lines (generated.py)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import List, Optional

import pytest

from mmkunit import arches
from mmkunit import generated as gen
from mmkunit import mutagen
from mmkunit import runner

P, F, E = runner.Status.PASS, runner.Status.FAIL, runner.Status.ERROR


def mutant(function: str = 'f', line: int = 3) -> mutagen.Mutant:
	return mutagen.Mutant('mm/x.c', function, line, 5, 'ror:<=', 0, 1,
			      '<', '<=')


class Tree:
	"""A prepared tree's lock, and nothing else."""
	def locked(self) -> 'contextlib.AbstractContextManager[None]':
		return contextlib.nullcontext()


def run(tmp_path: Path, *cases: runner.CaseResult, code: int = 0,
	out: str = '') -> runner.RunResult:
	(tmp_path / 'kunit.out').write_text(out)
	return runner.RunResult(code, list(cases), tmp_path, booted=bool(cases))


def test_classify(tmp_path: Path) -> None:
	m = mutant()
	c = runner.CaseResult
	assert gen.classify(m, run(tmp_path, c('s.a', P), c('s.b', F), code=1),
			    60).outcome == gen.Outcome.KILLED
	crashed = gen.classify(m, run(tmp_path, c('s.a', E), code=1), 60)
	assert crashed.outcome == gen.Outcome.CRASHED and crashed.tests == ['s.a']
	timeout = gen.classify(m, run(tmp_path, c('s.a', E), code=1,
				      out="Command 'x' timed out after 60 seconds"),
			       60)
	assert timeout.outcome == gen.Outcome.TIMEOUT
	boot = tmp_path / 'boot-2'
	boot.mkdir()
	(boot / 'console.log').write_text(
		'[   21.06] rcu: INFO: rcu_sched self-detected stall on CPU\n')
	stall = gen.classify(m, run(tmp_path, c('s.a', E), code=1), 60)
	assert stall.outcome == gen.Outcome.TIMEOUT
	assert stall.tests == ['s.a']
	assert 'self-detected stall' in stall.detail
	(boot / 'console.log').write_text(
		'[   40.80] INFO: task kunit_try_catch:34 blocked for more than '
		'20 seconds.\n')
	assert gen.classify(m, run(tmp_path, c('s.a', E), code=1),
			    60).outcome == gen.Outcome.TIMEOUT
	(boot / 'console.log').write_text('[    1.00] Oops: 0000\n')
	assert gen.classify(m, run(tmp_path, c('s.a', E), code=1),
			    60).outcome == gen.Outcome.CRASHED
	assert gen.classify(m, run(tmp_path, c('s.a', P)), 60).outcome == \
		gen.Outcome.SURVIVED
	assert gen.classify(m, run(tmp_path, code=1), 60).outcome == \
		gen.Outcome.UNVIABLE
	(boot / 'console.log').write_text(
		'[    0.12] Kernel panic - not syncing: IO-APIC + timer doesn\'t '
		'work!\n[    0.12] ---[ end Kernel panic ]---\n')
	no_test = run(tmp_path, code=1)
	no_test.started = True
	died = gen.classify(m, no_test, 60)
	assert died.outcome == gen.Outcome.CRASHED and died.tests == []
	assert died.detail == ('the kernel ran no test: Kernel panic - not '
			       "syncing: IO-APIC + timer doesn't work!")
	assert all(o.killed for o in (gen.Outcome.KILLED, gen.Outcome.CRASHED,
				      gen.Outcome.TIMEOUT))


def scored(function: str, *outcomes: gen.Outcome) -> list:
	return [gen.Scored(mutant(function, n), o, diff='--- a\n+++ b\n-x\n+y\n')
		for n, o in enumerate(outcomes, 1)]


def test_score_per_function_and_threshold() -> None:
	O = gen.Outcome
	rs = scored('f', *[O.KILLED] * 18, O.CRASHED, O.SURVIVED, O.UNVIABLE,
		    O.EQUIVALENT) + scored('g', O.KILLED, O.TIMEOUT, O.NOT_HERE)
	rows = {r.function: r for r in gen.rows(rs)}
	assert (rows['f'].generated, rows['f'].killed, rows['f'].survived,
		rows['f'].unviable, rows['f'].equivalent) == (22, 19, 1, 1, 1)
	assert rows['f'].score == pytest.approx(95.0)
	assert rows['g'].generated == 2 and rows['g'].score == 100.0
	assert gen.passes(rs)
	assert not gen.passes(rs + scored('f', O.SURVIVED))
	# A sample is held to the threshold as a whole: 21 of 22 is 95%.
	assert gen.total(rs) == pytest.approx(100.0 * 21 / 22)
	assert gen.sample_passes(rs + scored('g', O.KILLED))
	assert not gen.sample_passes(rs + scored('g', O.SURVIVED))
	text = gen.report(rs)
	assert '  f:20:5:ror:<=' in text and '    -x' in text
	assert 'LOW' not in text
	assert '95% LOW' not in gen.report(rs) and 'LOW' in \
		gen.report(rs + scored('f', O.SURVIVED))


def test_json_round_trip_and_merge(tmp_path: Path,
				   capsys: pytest.CaptureFixture[str]) -> None:
	O = gen.Outcome
	a, b = scored('f', O.KILLED, O.SURVIVED), scored('g', O.EQUIVALENT)
	for name, rs in (('a.json', a), ('b.json', b)):
		(tmp_path / name).write_text(json.dumps(
			{'arch': 'um', 'mutants': [r.to_json() for r in rs]}))
	back = gen.Scored.from_json(a[1].to_json())
	assert (back.mutant.id, back.outcome) == (a[1].mutant.id, O.SURVIVED)
	assert gen.merge([tmp_path / 'a.json', tmp_path / 'b.json']) == 1
	out = capsys.readouterr().out
	assert 'f:2:5:ror:<=' in out and '50% LOW' in out


def test_survivors_run_again_under_the_checkers(
		tmp_path: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""A survivor of a run without a configuration is run again under
	--config mglru, then, if it survives that, under --config distro,
	then --config debug: a checker's report kills it there, with the
	reason; a survivor of all three stays one, and the other outcomes
	are not run again. The suites are those the first pass ran, even if
	kernel/ changed since."""
	from mmkunit import request
	from mmkunit.session import Session
	O = gen.Outcome
	rs = scored('f', O.KILLED, O.SURVIVED, O.SURVIVED, O.EQUIVALENT)
	seen = []

	def run_in(s, t, overlay, extra, label, opts):
		assert overlay is main.overlay
		seen.append((s.build.config, extra[0].name))
		line = int(extra[0].name.split(':')[1])
		return runner.RunResult(0, [runner.CaseResult('s.a', P)], tmp_path,
					complaints=['WARNING: suspicious RCU usage']
					if line == 2 else [], booted=True)

	def baseline(s, tree, opts):
		seen.append((s.build.config, 'baseline'))
		return runner.RunResult(0, [runner.CaseResult('s.a', P)], tmp_path,
					booted=True, seconds=10.0)

	monkeypatch.setattr(gen.jobs, 'run_in', run_in)
	monkeypatch.setattr(gen.jobs, 'baseline', baseline)
	monkeypatch.setattr(gen.jobs, 'run_jobs',
			    lambda s, tree, workers, jobs, opts, configured:
			    [j(tree) for j in jobs])
	# The equivalent one compiles to the original under each, too.
	monkeypatch.setattr(gen, '_originals', lambda *a: None)
	monkeypatch.setattr(gen, '_tce', lambda s, t, m, source, comparers:
			    gen.Scored(m, O.EQUIVALENT))
	(tmp_path / 'kunit.out').write_text('')
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	main = Session(request.Source(cache=tmp_path))
	main.overlay
	# The survivors run against the suites the first pass loaded.
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(tmp_path / 'changed'))
	sources = {'mm/x.c': b'a < b\n'}
	globs = {'mm/x.c': 's'}
	out = gen._recheck(main, request.MutantsRequest(rebuild=True), Tree(),
			   rs, sources, [], globs, {})
	assert seen == [('mglru', 'baseline'), ('mglru', 'f:2:5:ror:<=.patch'),
			('mglru', 'f:3:5:ror:<=.patch'),
			('distro', 'baseline'), ('distro', 'f:3:5:ror:<=.patch'),
			('debug', 'baseline'), ('debug', 'f:3:5:ror:<=.patch')]
	assert [r.outcome for r in out] == [O.KILLED, O.KILLED, O.SURVIVED,
					    O.EQUIVALENT]
	assert out[1].detail.startswith('under --config mglru')
	assert out[1].diff == rs[1].diff
	assert 'Killed only under --config mglru or --config distro or ' \
		'--config debug' in gen.report(out)
	debug = Session(request.Source(cache=tmp_path),
			request.Build(config='debug'))
	seen.clear()
	assert gen._recheck(debug, request.MutantsRequest(), Tree(), rs,
			    sources, [], globs, {}) == rs
	assert not seen
	# In schemata (the default), the same survivors, the same outcomes;
	# a survivor no schema holds is built alone.
	seen.clear()

	def schema_pass(s, req, tree, mutants, sources, pinned, globs, opts,
			timeout, results):
		seen.append((s.build.config, 'schema', [m.line for m in mutants]))
		return [gen.Scored(m, O.KILLED if m.line == 2 else O.SURVIVED)
			for m in mutants if m.line != 3 or s.build.config != 'distro']

	def in_function_copies(s, req, tree, mutants, sources, pinned, globs,
			       opts, timeout, results):
		if mutants:
			seen.append((s.build.config, 'copies',
				     [m.line for m in mutants]))
		return []

	monkeypatch.setattr(gen, '_schema_pass', schema_pass)
	monkeypatch.setattr(gen, '_in_function_copies', in_function_copies)
	out = gen._recheck(main, request.MutantsRequest(), Tree(), rs, sources,
			   [], globs, {})
	# One no schema holds goes into copies of its function, and is
	# built alone if they do not hold it either.
	assert seen == [('mglru', 'baseline'), ('mglru', 'schema', [2, 3]),
			('distro', 'baseline'), ('distro', 'schema', [3]),
			('distro', 'copies', [3]),
			('distro', 'f:3:5:ror:<=.patch'),
			('debug', 'baseline'), ('debug', 'schema', [3])]
	assert [r.outcome for r in out] == [O.KILLED, O.KILLED, O.SURVIVED,
					    O.EQUIVALENT]
	assert out[1].detail == 'under --config mglru'


def test_an_equivalent_is_compared_again_under_the_checkers(
		tmp_path: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""TCE's verdict without a configuration holds for that one only:
	code only MEMCG or DEBUG_VM compiles in is dead there. Under each
	checker, in turn, the mutants still equivalent are compiled again:
	one whose object differs there is a survivor, run under that
	configuration (and, surviving, under the next); one that does not
	compile there is unviable; the others stay equivalent."""
	from mmkunit import request
	from mmkunit.session import Session
	O = gen.Outcome
	rs = scored('f', O.EQUIVALENT, O.EQUIVALENT, O.EQUIVALENT, O.SURVIVED,
		    O.EQUIVALENT)
	seen = []

	def tce(s, t, m, source, comparers):
		seen.append((s.build.config, 'tce', m.line))
		if (s.build.config, m.line) in (('distro', 1), ('mglru', 5)):
			return None
		if (s.build.config, m.line) == ('mglru', 2):
			return gen.Scored(m, O.UNVIABLE, detail='error: x')
		return gen.Scored(m, O.EQUIVALENT)

	def by_rebuild(s, req, tree, mutants, sources, globs, opts, timeout,
		       comparers):
		seen.append((s.build.config, 'run', [m.line for m in mutants]))
		return [gen.Scored(m, O.KILLED if m.line == 1 else O.SURVIVED)
			for m in mutants]

	monkeypatch.setattr(gen, '_tce', tce)
	monkeypatch.setattr(gen, '_originals', lambda *a: None)
	monkeypatch.setattr(gen, '_by_rebuild', by_rebuild)
	monkeypatch.setattr(gen, '_baseline', lambda s, tree: 30)
	monkeypatch.setattr(gen, '_options', lambda s, tree, timeout: None)
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	main = Session(request.Source(cache=tmp_path))
	out = gen._recheck(main, request.MutantsRequest(rebuild=True), Tree(),
			   rs, {'mm/x.c': b'a < b\n'}, [], {'mm/x.c': 's'}, {})
	assert seen == [('mglru', 'tce', 1), ('mglru', 'tce', 2),
			('mglru', 'tce', 3), ('mglru', 'tce', 5),
			('mglru', 'run', [4, 5]),
			('distro', 'tce', 1), ('distro', 'tce', 3),
			('distro', 'run', [1, 4, 5]),
			('debug', 'tce', 3), ('debug', 'run', [4, 5])]
	assert [r.outcome for r in out] == [O.KILLED, O.UNVIABLE, O.EQUIVALENT,
					    O.SURVIVED, O.SURVIVED]
	assert out[0].detail.startswith('under --config distro')
	assert out[1].detail == 'under --config mglru: error: x'
	assert out[4].detail == gen.DIFFERS + 'mglru'
	assert out[4].differs_under == 'mglru'
	assert gen.Scored.from_json(out[4].to_json()).differs_under == 'mglru'
	assert out[3].differs_under is None
	# Built alone, such a survivor is not run without a configuration:
	# its object there is the original's.
	built = []

	def alone(s, req, tree, mutants, sources, globs, opts, timeout,
		  comparers):
		built.append((s.build.config, [m.line for m in mutants]))
		return [gen.Scored(m, O.SURVIVED) for m in mutants]
	monkeypatch.setattr(gen, '_by_rebuild', alone)
	gen._confirm_alone(main, None, None, out, {}, {}, None, 30)
	assert built == [(None, [4]), ('mglru', [4, 5]), ('distro', [4, 5]),
			 ('debug', [4, 5])]


def test_a_kernel_that_runs_no_test_is_booted_once_more(
		tmp_path: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""A mutant whose kernel starts but dies before its first test is run
	again: if that run passes, it survived (the first boot failed for
	the machine's reasons); if it dies again, it is killed. One that
	does not build is unviable, without a second run."""
	from mmkunit import request
	from mmkunit.session import Session
	O = gen.Outcome
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	s = Session(request.Source(cache=tmp_path))
	(tmp_path / 'kunit.out').write_text('')
	died = runner.RunResult(1, [], tmp_path, started=True)
	passed = runner.RunResult(0, [runner.CaseResult('s.a', P)], tmp_path,
				  booted=True, started=True)
	unbuilt = runner.RunResult(2, [], tmp_path,
				   error='the kernel did not build')
	m = mutant()
	for runs, outcome, labels in (
			([died, passed], O.SURVIVED, ['mutant x', 'mutant x again']),
			([died, died], O.CRASHED, ['mutant x', 'mutant x again']),
			([unbuilt], O.UNVIABLE, ['mutant x']),
			([passed], O.SURVIVED, ['mutant x'])):
		seen = []

		def run_in(s, t, overlay, extra, label, opts, runs=list(runs)):
			seen.append(label)
			return runs.pop(0)

		monkeypatch.setattr(gen.jobs, 'run_in', run_in)
		patch = gen.ov.Patch('x.patch', Path('x'), b'', ('mm/x.c',))
		assert gen._run_mutant(s, None, m, patch, 'mutant x', None,
				       60).outcome == outcome
		assert seen == labels


def test_timeout_is_five_baselines_and_at_least_the_minimum(
		tmp_path: Path) -> None:
	"""cargo-mutants' rule: a mutant's run may take five times the
	baseline's kernel run (its build left out), never less than the
	arch's minimum."""
	def base(seconds: float, build: float) -> runner.RunResult:
		return runner.RunResult(0, [], tmp_path, seconds=seconds,
					build_seconds=build)
	assert gen.mutant_timeout('x86_64', base(50.0, 20.0)) == 150
	assert gen.mutant_timeout('um', base(40.2, 34.0)) == 32
	assert gen.mutant_timeout('um', base(9.0, 4.0)) == \
		arches.ARCHES['um'].min_timeout
	assert gen.mutant_timeout('x86_64', base(30.0, 25.0)) == \
		arches.ARCHES['x86_64'].min_timeout


def test_a_mutant_boots_on_one_cpu_then_the_test_needing_two_alone(
		two_cpu_uml: Path) -> None:
	"""_plan(): every test of the file's suites on one CPU, then the
	test that skipped there for want of CPUs alone, as the arch boots,
	each tried with no mutant first; a survivor of the first boot is not
	booted again with every test on two CPUs."""
	tmp_path = two_cpu_uml
	opts = runner.RunOptions(arch='um', kernel_args=['ncpus=2'],
				 filter_glob='s')
	plan = gen._plan(tmp_path, opts, arches.ARCHES['um'], tmp_path, 'f')
	assert [(w.filter_glob, list(w.kernel_args)) for w, _, _ in plan] == [
		('s', ['ncpus=2', 'ncpus=1']), ('s.b', ['ncpus=2'])]
	# The CPU's limit on one CPU only: on two, a test may spin on one
	# while the host keeps the other waiting.
	assert [cpu is not None and cpu >= 2 for _, _, cpu in plan] == [
		True, False]
	assert all(wall >= 10 for _, wall, _ in plan)
	boots = (tmp_path / 'boots').read_text().splitlines()
	assert len(boots) == 2 and all('mm_kunit_mutant=0' in b for b in boots)

	def verdicts(n: int) -> List[str]:
		(tmp_path / 'boots').unlink()
		last, _ = gen._boot_through(tmp_path, plan, n, tmp_path / f'{n}.log')
		boots = (tmp_path / 'boots').read_text().splitlines()
		return ['passed'] * (len(boots) - 1) + [last.verdict]
	assert verdicts(7) == ['passed', 'failed']
	assert verdicts(8) == ['failed']
	assert verdicts(9) == ['passed', 'passed']


def test_a_mutants_run_is_quiet_once_and_stopped_at_the_timeout(
		tmp_path: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""A mutant's kernel runs quietly, once (a crash kills the mutant),
	and is stopped after the timeout (by the harness, or by kunit.py
	where the user's own kunit.py arguments have kunit.py run it)."""
	from mmkunit import request
	from mmkunit.session import Session
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	s = Session(request.Source(cache=tmp_path),
		    request.Build(kunit_args=('--raw_output',)))
	opts = gen._options(s, None, 45)
	assert (opts.quiet, opts.rerun_after_crash) == (True, False)
	assert (opts.timeout, list(opts.kunit_args)) == (45, ['--raw_output'])
	assert gen._options(s, None, 0).timeout is None
	plain = s.run_options()
	assert (plain.quiet, plain.rerun_after_crash) == (False, True)
	assert list(plain.kunit_args) == ['--raw_output']


def test_select_narrows_to_the_operators_then_samples(tmp_path: Path) -> None:
	"""--operator keeps the mutants of the operators named, and
	--sample then draws from those."""
	pytest.importorskip('tree_sitter_c')
	import types
	from mmkunit import request
	(tmp_path / 'mm').mkdir()
	(tmp_path / 'mm/x.c').write_text(
		'int f(int a, int b)\n{\n\ta = min(a, b);\n\tb++;\n'
		'\treturn a < b;\n}\n')
	tree = types.SimpleNamespace(src=tmp_path)
	pinned = [mutagen.Pinned(('s',), 'mm/x.c', 'f')]

	def select(**kw: object) -> list:
		found, sources = gen.select(
			None, request.MutantsRequest(generated=True, **kw),
			tree, pinned)
		assert sources == {'mm/x.c': (tmp_path / 'mm/x.c').read_bytes()}
		return [m.operator for m in found]

	assert len(select()) > 4
	assert select(operators=('arg', 'order')) == ['order', 'arg:0',
						       'arg:1']
	assert select(operators=('ror', 'aor')) == ['aor:--', 'ror:<=']
	sample = select(operators=('arg', 'order'), sample=2, seed=1)
	assert len(sample) == 2 and set(sample) < {'order', 'arg:0', 'arg:1'}


def test_changed_lines_and_moved_lines() -> None:
	diff = ('diff --git a/mm/x.c b/mm/x.c\n--- a/mm/x.c\n+++ b/mm/x.c\n'
		'@@ -3,0 +4,2 @@\n+new\n+new2\n@@ -9 +11 @@\n-old\n+changed\n')
	assert gen.changed_lines(diff) == {'mm/x.c': {4, 5, 11}}
	old = 'a\nb\nc\nd\n'
	new = 'a\ninserted\nb\nc\nd\n'
	assert gen.moved_lines(old, new, {2, 4}) == {3, 5}


def test_equivalent_list(tmp_path: Path) -> None:
	(tmp_path / 'equivalent').write_text(
		'# c\nf:1:2:ror:<= | why not\ng:3:4:delete | um | no THP on UML\n')
	eq = gen.load_equivalent(tmp_path / 'equivalent')
	assert eq == {'f:1:2:ror:<=': gen.Equivalent('why not'),
		      'g:3:4:delete': gen.Equivalent('no THP on UML', ('um',))}
	assert eq['g:3:4:delete'].applies('um')
	assert not eq['g:3:4:delete'].applies('x86_64')
	assert eq['f:1:2:ror:<='].applies('x86_64')
	(tmp_path / 'equivalent').write_text('f:1:2:ror:<=\n')
	with pytest.raises(Exception, match='want "ID'):
		gen.load_equivalent(tmp_path / 'equivalent')


def test_equivalent_ids_may_hold_a_bar(tmp_path: Path) -> None:
	"""The mutants of || and | have ids that end in bars: the id ends at
	its first blank, and the fields after it are split at bars."""
	(tmp_path / 'equivalent').write_text('f:1:2:lor:|| | um | no THP\n'
					     'g:3:4:bor:| | why not\n')
	assert gen.load_equivalent(tmp_path / 'equivalent') == {
		'f:1:2:lor:||': gen.Equivalent('no THP', ('um',)),
		'g:3:4:bor:|': gen.Equivalent('why not')}


def test_survivors_of_the_schemata_are_built_alone(
		tmp_path: Path, overlay_dir: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""A schema's compiler may drop a mutant's branch (it made something
	undefined on its path), so a survivor of the schemata counts as one
	only when its own builds say so too: without a configuration, then
	under each checker's; equivalent ones are left."""
	from mmkunit import request
	from mmkunit.session import Session
	O = gen.Outcome
	rs = scored('f', O.SURVIVED, O.KILLED, O.SURVIVED, O.REVIEWED,
		    O.SURVIVED)
	seen = []

	def by_rebuild(s, req, tree, mutants, sources, globs, opts, timeout,
		       comparers):
		seen.append((s.build.config, [m.line for m in mutants], comparers))
		dies = {None: 1, 'debug': 3}.get(s.build.config)
		return [gen.Scored(m, O.KILLED if m.line == dies else O.SURVIVED,
				   ['s.t'])
			for m in mutants]

	monkeypatch.setattr(gen, '_by_rebuild', by_rebuild)
	monkeypatch.setattr(gen, '_baseline', lambda s, tree: 30)
	monkeypatch.setattr(gen, '_options', lambda s, tree, timeout: None)
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay_dir))
	s = Session(request.Source(cache=tmp_path))
	out = gen._confirm_alone(s, None, None, rs, {}, {}, None, 30)
	# Built alone, with no TCE (the schema pass compared them already),
	# under each configuration while they survive.
	assert seen == [(None, [1, 3, 5], None), ('mglru', [3, 5], None),
			('distro', [3, 5], None), ('debug', [3, 5], None)]
	assert [r.outcome for r in out] == [O.KILLED, O.KILLED, O.KILLED,
					    O.REVIEWED, O.SURVIVED]
	assert out[0].detail == 'built alone' and out[0].diff == rs[0].diff
	assert out[2].detail == 'built alone; under --config debug'
	assert 'killed built alone' in gen.report(out)


def test_a_reviewed_survivor_is_not_compiled_alone(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""TCE compiles the survivors of the schemata alone, but not those
	kernel/equivalent lists: their entries decide (REVIEWED), and the
	compile would only cost time."""
	O = gen.Outcome
	rs = scored('f', O.SURVIVED, O.KILLED, O.SURVIVED)
	compiled = []

	def tce(s, t, m, source, comparers):
		compiled.append(m.line)
		return gen.Scored(m, O.EQUIVALENT)

	monkeypatch.setattr(gen, '_schema_pass', lambda *a: rs)
	monkeypatch.setattr(gen, '_tce', tce)
	monkeypatch.setattr(gen, '_originals', lambda *a: None)
	from mmkunit import request
	out, rebuilt = gen._by_schema(
		None, request.MutantsRequest(), Tree(), [r.mutant for r in rs],
		{'mm/x.c': b''}, [], {}, None, 30, tmp_path, {},
		{rs[2].mutant.id})
	assert compiled == [1]
	assert [r.outcome for r in out] == [O.EQUIVALENT, O.KILLED, O.SURVIVED]
	assert rebuilt == []


def test_what_no_schema_holds_is_compiled_then_held_in_function_copies(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""A mutant no schema holds is compiled alone (TCE) first: unviable
	or equivalent, it needs no kernel; if not, copies of its function
	hold it, and one they cannot hold is left to be built alone."""
	O = gen.Outcome
	ms = [mutant('f', n) for n in (1, 2, 3, 4)]
	header = mutagen.Mutant('include/linux/x.h', 'g', 5, 5, 'ror:<=', 0, 1,
				'<', '<=')
	compiled, copied = [], []

	def tce(s, t, m, source, comparers):
		compiled.append(m.line)
		return gen.Scored(m, O.UNVIABLE) if m.line == 2 else None

	def in_function_copies(s, req, tree, mutants, sources, pinned, globs,
			       opts, timeout, results):
		copied.append([m.line for m in mutants])
		return [gen.Scored(m, O.KILLED) for m in mutants if m.line == 3]

	monkeypatch.setattr(gen, '_schema_pass',
			    lambda *a: [gen.Scored(ms[0], O.KILLED)])
	monkeypatch.setattr(gen, '_tce', tce)
	monkeypatch.setattr(gen, '_originals', lambda *a: None)
	monkeypatch.setattr(gen, '_in_function_copies', in_function_copies)
	from mmkunit import request
	out, rebuilt = gen._by_schema(
		None, request.MutantsRequest(), Tree(), ms + [header],
		{'mm/x.c': b'a < b\n', 'include/linux/x.h': b'a < b\n'}, [], {},
		None, 30, tmp_path, {}, set())
	assert sorted(compiled) == [2, 3, 4, 5]
	assert copied == [[3, 4, 5]]
	assert [(r.mutant.line, r.outcome) for r in out] == [
		(1, O.KILLED), (2, O.UNVIABLE), (3, O.KILLED)]
	assert out[1].diff
	assert [m.line for m in rebuilt] == [4, 5]


def test_a_port_rechecks_under_its_own_configurations_only(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""The survivors on a port of kernel/compat/ run again (after the
	schemata, and each built alone) only under the configurations the
	port has files of (6.12's suites make no memcg, which mglru's and
	distro's have); elsewhere under each the repository has; with a
	configuration given, under none."""
	from mmkunit import request
	from mmkunit.session import Session
	O = gen.Outcome
	rs = scored('f', O.SURVIVED)
	seen: List[Optional[str]] = []

	def under(s: Session, req: request.MutantsRequest, tree: object,
		  sc: List[gen.Scored], config: str, *rest: object
		  ) -> List[gen.Scored]:
		seen.append(config)
		return sc
	monkeypatch.setattr(gen, '_recheck_under', under)
	port = Session(request.Source(cache=tmp_path, tree='6.12'))
	assert gen._recheck(port, request.MutantsRequest(), None, rs, {}, [],
			    {}, {}) == rs
	assert seen == gen._checkers(port) == ['debug']
	assert not (port.overlay.root / 'kunit-configs/um-mglru.config').exists()
	assert gen._checkers(Session(request.Source(cache=tmp_path))) == \
		list(gen.CHECKERS)
	assert gen._checkers(Session(request.Source(cache=tmp_path),
				     request.Build(config='debug'))) == []


def test_a_port_suite_runs_with_the_mutants_of_the_functions_it_pins() -> None:
	"""A mutant of a file runs with every suite pinned to one of the
	file's functions: the 7.3 suite's and the port's own."""
	pinned = mutagen.parse_pinned('a_swap | mm/s.c | f\n'
				      'a_swap a_swap_6_12 | mm/s.c | g\n'
				      'b | mm/t.c | h\n')
	assert gen._globs(pinned) == {'mm/s.c': 'a_swap*', 'mm/t.c': 'b'}
