# SPDX-License-Identifier: GPL-2.0
"""The mutant matrix: does each deliberate bug make some test fail?

A mutant is a patch in kernel/mutants/ that puts a bug back into the kernel
code under test (never into the tests). It is applied on top of the series;
the suites are built incrementally and run; the mutant is killed if at least
one test fails. A mutant that no test catches, or that does not build, is a
defect of the suites or of the mutant.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import enum
import fnmatch
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from mmkunit import expected
from mmkunit import generated
from mmkunit import jobs
from mmkunit import mutagen
from mmkunit import overlay as ov
from mmkunit import runner
from mmkunit import schemata
from mmkunit import trees
from mmkunit.arches import ARCHES
from mmkunit.request import EXIT_OK, EXIT_TESTS_FAILED, MutantsRequest
from mmkunit.runner import RunResult, Status
from mmkunit.session import HarnessError, Session


class Verdict(enum.Enum):
	KILLED = 'killed'
	SURVIVED = 'survived'
	NO_RESULT = 'no result'  # did not build, or kunit.py gave no results
	NOT_HERE = 'not run on this arch or configuration'


@dataclasses.dataclass
class MutantResult:
	mutant: ov.Patch
	verdict: Verdict
	failed: List[str]
	detail: str = ''
	# Every test case the run reported, failed or not.
	cases: List[str] = dataclasses.field(default_factory=list)
	# The failed tests the kernel died in.
	crashed: List[str] = dataclasses.field(default_factory=list)
	# Wall time of the mutant's build and run.
	seconds: Optional[float] = None


def describe(mutant: ov.Patch) -> str:
	"""The first line of the mutant's description (before the diff)."""
	lines = mutant.description()
	return lines[0] if lines else mutant.name


def arches(mutant: ov.Patch) -> List[str]:
	"""The arches an "Arch: a b (why)" line limits the mutant to, if any."""
	return mutant.field('Arch')


# The name a "Config:" line gives the arch's own configuration (no
# --config): what a configuration would hide, such as arm64's 4 KiB pages.
DEFAULT_CONFIG = 'default'


def configs(mutant: ov.Patch) -> List[str]:
	"""The configurations (--config NAME, or DEFAULT_CONFIG) a "Config: a
	b (why)" line limits the mutant to, if any: what only MEMCG, say, can
	show."""
	return mutant.field('Config')


def runs_on(mutant: ov.Patch, arch: str,
	    config: Optional[str] = None) -> bool:
	return ((not arches(mutant) or arch in arches(mutant)) and
		(not configs(mutant) or
		 (config or DEFAULT_CONFIG) in configs(mutant)))


def not_here(mutant: ov.Patch, arch: str,
	     config: Optional[str] = None) -> MutantResult:
	# The line that leaves it out here: its arch's, else its config's.
	key = 'Arch:' if arch not in (arches(mutant) or [arch]) else 'Config:'
	why = [l for l in mutant.description() if l.startswith(key)][0]
	where = f'{arch}-{config}' if config else arch
	return MutantResult(mutant, Verdict.NOT_HERE, [], f'{where}: {why}')


def judge_mutant(mutant: ov.Patch, result: RunResult) -> MutantResult:
	"""What a run with the mutant says of it: killed if a test failed."""
	failed = [c.name for c in result.failed]
	# A skipped test cannot fail: only the tests that ran count.
	cases = [c.name for c in result.cases if c.status != Status.SKIP]
	crashed = [c.name for c in result.cases if c.status == Status.ERROR]
	if failed:
		return MutantResult(mutant, Verdict.KILLED, failed, cases=cases,
				    crashed=crashed, seconds=result.seconds)
	if result.error or not result.cases or result.kunit_returncode != 0:
		return MutantResult(mutant, Verdict.NO_RESULT, [],
				    result.error or 'kunit.py failed; see '
				    f'{result.results_dir / "kunit.out"}',
				    cases=cases, seconds=result.seconds)
	return MutantResult(mutant, Verdict.SURVIVED, [], cases=cases,
			    seconds=result.seconds)


def unguarded(results: Sequence[MutantResult]) -> List[str]:
	"""Test cases that no mutant made fail: tests not yet seen to fail."""
	seen: List[str] = []
	for r in results:
		seen += [c for c in r.cases if c not in seen]
	failed = {name for r in results for name in r.failed}
	return [c for c in seen if c not in failed]


def format_matrix(results: Sequence[MutantResult]) -> str:
	lines = ['', 'Mutant matrix (mutant: verdict: tests that failed)']
	for r in results:
		lines.append(f'  {r.mutant.name}: {r.verdict.value}')
		lines.append(f'      {describe(r.mutant)}')
		for name in r.failed:
			lines.append(f'      - {name}' +
				     (' (crashed)' if name in r.crashed else ''))
		if r.detail:
			lines.append(f'      {r.detail}')
	killed = sum(1 for r in results if r.verdict == Verdict.KILLED)
	skipped = sum(1 for r in results if r.verdict == Verdict.NOT_HERE)
	timed = [r for r in results if r.seconds is not None]
	if timed:
		slowest = max(timed, key=lambda r: r.seconds or 0.0)
		lines.append(f'slowest mutant: {slowest.mutant.name} '
			     f'({slowest.seconds:.0f} s)')
	lines.append(f'mutants: {killed} killed, '
		     f'{len(results) - killed - skipped} failed, {skipped} skipped')
	return '\n'.join(lines)


def build_order(mutants: Sequence[ov.Patch]) -> List[ov.Patch]:
	"""Mutants of .c files first, then those of headers, each by name.

	A header mutant rebuilds every file that includes the header, and so
	does the next build without it: grouping them pays for that once per
	header mutant instead of also after each one.
	"""
	def headers(m: ov.Patch) -> bool:
		return any(f.endswith('.h') for f in m.touched)
	return sorted(mutants, key=lambda m: (headers(m), m.name))


def select(mutants: Sequence[ov.Patch], patterns: Sequence[str]) -> List[ov.Patch]:
	if not patterns:
		return list(mutants)
	chosen = [m for m in mutants
		  if any(fnmatch.fnmatch(m.name, p) or fnmatch.fnmatch(Path(m.name).stem, p)
			 for p in patterns)]
	if not chosen:
		raise ov.OverlayError(f'no mutant matches {" ".join(patterns)}')
	return chosen


@dataclasses.dataclass
class BeforeFixResult:
	"""A tree that lacks some fixes must fail exactly the tests that the
	expected list names for them (expected.py), and pass all others."""
	tree: ov.BeforeFix
	report: expected.Report
	detail: str = ''

	@property
	def ok(self) -> bool:
		return (not self.detail and self.report.ok and
			any(j.verdict == expected.Verdict.LACKS_FIX
			    for j in self.report.judged))


def judge_before_fix(tree: ov.BeforeFix, entries: Sequence[expected.Entry],
		     result: RunResult) -> BeforeFixResult:
	r = BeforeFixResult(tree, expected.hold_against(
		result.cases, entries, lacking=tree.lacking))
	if result.error or not result.cases:
		r.detail = result.error or 'no test ran'
	return r


def format_before_fix(results: Sequence[BeforeFixResult]) -> str:
	lines = ['', 'Before-fix trees (a tree without a fix must fail '
		 'exactly the tests that need it)']
	failed = (expected.Verdict.LACKS_FIX, expected.Verdict.UNEXPECTED_FAIL,
		  expected.Verdict.CRASHED)
	for r in results:
		verdict = 'ok' if r.ok else 'WRONG'
		lines.append(f'  {r.tree.label}: {verdict}')
		for j in r.report.judged:
			if j.verdict in failed:
				mark = {expected.Verdict.UNEXPECTED_FAIL: '  (unexpected)',
					expected.Verdict.CRASHED: '  (crashed)'}
				lines.append(f'      - {j.case.name}'
					     f'{mark.get(j.verdict, "")}')
		for j in r.report.judged:
			if j.verdict == expected.Verdict.UNEXPECTED_PASS:
				lines.append(f'      + {j.case.name}  (passed, but '
					     'needs the fix)')
		for e in r.report.unmatched:
			lines.append(f'      {e.where}: no test matches {e.pattern}')
		if r.detail:
			lines.append(f'      {r.detail}')
	good = sum(1 for r in results if r.ok)
	lines.append(f'before-fix: {good} passed, {len(results) - good} failed')
	return '\n'.join(lines)


def run_matrix(s: Session, req: MutantsRequest) -> int:
	"""Runs the chosen mutants (all, and then the before-fix trees, if
	none are named) and prints the matrix."""
	s.ensure_deps()
	chosen = build_order(select(s.overlay.mutants(), req.mutants))
	if not chosen:
		raise HarnessError(f'no mutants in {s.overlay.root / "mutants"}')
	full = not req.mutants
	arch = s.build.arch
	tree = s.sources.prepared_tree()
	# Check that every mutant and revert applies before building anything.
	for m in chosen:
		ov.stage(s.overlay, tree.source, [m])
	before_fix = s.overlay.before_fix_trees() if full else []
	for bf in before_fix:
		ov.stage(s.overlay.without(bf.without), tree.source, bf.extra)
	opts = dataclasses.replace(
		s.with_accel(s.run_options(held_to_list=True), tree), quiet=True)
	started = time.monotonic()

	def run(t: trees.PreparedTree, overlay: ov.Overlay,
		extra: Sequence[ov.Patch], label: str) -> RunResult:
		return jobs.run_in(s, t, overlay, extra, label, opts,
				   show_tree=t is not tree)

	# The jobs, in order: each mutant, then the before-fix trees.
	config = s.build.config

	def mutant_job(m: ov.Patch) -> jobs.Job:
		if not runs_on(m, arch, config):
			return lambda t: not_here(m, arch, config)
		return lambda t: judge_mutant(
			m, run(t, s.overlay, [m], f'mutant {Path(m.name).stem}'))

	def before_fix_job(bf: ov.BeforeFix) -> jobs.Job:
		return lambda t: judge_before_fix(bf, s.overlay.expected(), run(
			t, s.overlay.without(bf.without), bf.extra,
			f'before-fix: {bf.label}'))

	with tree.locked():
		# A mutant is killed if a test fails: only if every test passes
		# without one (jobs.baseline(), which stops the run if not).
		base = jobs.baseline(s, tree, opts)
		held: Dict[str, MutantResult] = {}
		if not req.rebuild and ARCHES[arch].uml:
			# The before-fix trees' copies of the tree are made
			# from it as built, not with the schema's objects.
			jobs.copy_now(s, tree, req.workers, len(before_fix))
			held = _in_one_kernel(s, req, tree, [
				m for m in chosen if runs_on(m, arch, config)],
				opts, jobs.run_seconds(base))
		todo = [mutant_job(m) for m in chosen if m.name not in held]
		todo += [before_fix_job(bf) for bf in before_fix]
		done = jobs.run_jobs(s, tree, req.workers, todo, opts,
				     configured=True)
	alone = iter(r for r in done if isinstance(r, MutantResult))
	results = [held[m.name] if m.name in held else next(alone)
		   for m in chosen]
	judged = [r for r in done if isinstance(r, BeforeFixResult)]

	print(format_matrix(results))
	ok = all(r.verdict in (Verdict.KILLED, Verdict.NOT_HERE)
		 for r in results)
	if full:
		print(format_before_fix(judged))
		ok = ok and all(r.ok for r in judged)
		# With every mutant run, each test must have failed at least once.
		never = unguarded(results)
		for name in never:
			print(f'mm-kunit: no mutant makes this test fail: {name}')
		ok = ok and not never
	print(f'mm-kunit: mutant matrix took {time.monotonic() - started:.0f} s')
	return EXIT_OK if ok else EXIT_TESTS_FAILED


def _in_one_kernel(s: Session, req: MutantsRequest,
		   tree: trees.PreparedTree, mutants: Sequence[ov.Patch],
		   opts: runner.RunOptions,
		   baseline_seconds: float) -> Dict[str, MutantResult]:
	"""The mutants that one kernel can hold, each as copies of the
	functions it changes (schemata.functions_schema()), judged by a boot
	of that kernel each with every suite (on one CPU, the tests that
	need two again on two; a survivor of that again as the arch boots):
	a test that fails kills it.
	A boot that does not reach the end (a crash) is run again as any
	mutant's is (exec_only, the tests after the crash in further
	boots). The mutants it cannot hold are left out of the result, to be
	built alone."""
	build_dir = tree.build_dir(s.build_key)
	touched = {f for m in mutants for f in m.touched}
	if not all(schemata.has_command(build_dir, o)
		   for o in schemata.units(dict.fromkeys(touched, b''))):
		# Not a tree kbuild built: each is built alone.
		return {}
	mutagen.use_parser(s.cache, s.source.install)
	base = ov.stage(s.overlay, tree.source)
	numbers = {m.name: i + 1 for i, m in enumerate(mutants)}
	mutated: Dict[str, Dict[int, bytes]] = {}
	for m in mutants:
		staged = ov.stage(s.overlay, tree.source, [m])
		for f in m.touched:
			mutated.setdefault(f, {})[numbers[m.name]] = staged[f]
			# A file the series leaves as it is.
			if f not in base:
				base[f] = (tree.source / f).read_bytes()
	c_files = sorted(f for f in mutated if f.endswith('.c'))
	if not c_files:
		return {}
	results = runner.new_results_dir(s.cache, 'mutants-in-one-kernel')
	timeout = max(schemata.MIN_TIMEOUT,
		      generated.TIMEOUT_MULTIPLIER * baseline_seconds)
	# Every suite on one CPU, the tests that need two again on two.
	one_cpu = ARCHES[s.build.arch].one_cpu
	out: Dict[str, MutantResult] = {}
	try:
		_, refused = schemata.build_functions(
			s, tree, base, mutated, c_files[0], results / 'build.log')
		held = [m for m in mutants if numbers[m.name] not in refused]
		print(f'mm-kunit: {len(held)} hand-written mutants in one kernel, '
		      f'{len(mutants) - len(held)} to build alone')
		if not held:
			return {}
		# With none live, as the mutants boot (one CPU first), every
		# test must pass, or it would kill every mutant.
		none = schemata.boot_all_tests(build_dir, opts, 0, timeout,
					       results / '0.log', one_cpu)
		failed = [c.name for c in none or [] if c.status is Status.FAIL]
		if none is None or failed:
			raise HarnessError('the kernel of the hand-written mutants '
					   'does not pass every test with none live'
					   f'{": " + failed[0] if failed else ""} '
					   f'(see {results / "0.log"})')
		lock = threading.Lock()

		def one(m: ov.Patch) -> MutantResult:
			n = numbers[m.name]
			started = time.monotonic()
			cases = schemata.boot_all_tests(build_dir, opts, n, timeout,
							results / f'{n}.log', one_cpu)
			if one_cpu and cases is not None and \
			   not any(c.status is Status.FAIL for c in cases):
				# A survivor on one CPU: every test as the arch
				# boots them (generated.py's survivors are, as
				# each is built alone and run).
				cases = schemata.boot_all_tests(
					build_dir, opts, n, timeout,
					results / f'{n}-as-booted.log')
			if cases is None:
				with lock:
					result = runner.run_kunit(
						tree.src, build_dir, dataclasses.replace(
							opts, kernel_args=[
								*opts.kernel_args,
								f'{schemata.SWITCH}={n}']),
						results / f'{n}', exec_only=True)
			else:
				result = RunResult(
					0, cases, results, booted=True, started=True,
					seconds=time.monotonic() - started)
			return judge_mutant(m, result)

		with concurrent.futures.ThreadPoolExecutor(
				max(1, req.workers)) as pool:
			for m, r in zip(held, pool.map(one, held)):
				out[m.name] = r
	finally:
		s.put_series(tree)
	return out
