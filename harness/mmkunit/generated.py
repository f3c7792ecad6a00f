# SPDX-License-Identifier: GPL-2.0
"""`mutants --generated`: mutants made from the pinned functions' source
(mutagen.py), each classified as cargo-mutants does, and a score per
function that nobody chose.

  killed      a test failed (or crashed, or the run timed out, or the
              kernel died before its first test in two boots in a row:
              those are reported apart, and count as killed)
  survived    every test passed: a missing test, until argued otherwise
  unviable    it does not build (compile or link): not counted
  equivalent  the same object code as the original (tce.py), or listed,
              with a reason, in the overlay's `equivalent` file: not
              counted, and the former never built into a kernel

score = killed / (killed + survived), per function.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import difflib
import enum
import json
import math
import re
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from mmkunit import arches
from mmkunit import jobs
from mmkunit import kconfig
from mmkunit import listfile
from mmkunit import mutagen
from mmkunit import overlay as ov
from mmkunit import progress
from mmkunit import schemata
from mmkunit import tce
from mmkunit import trees
from mmkunit.request import EXIT_OK, EXIT_TESTS_FAILED, MutantsRequest
from mmkunit import runner
from mmkunit.runner import RunOptions, RunResult, Status
from mmkunit.session import KERNEL_DIR, HarnessError, Session

# Every pinned function must score at least this, in percent.
THRESHOLD = 95
# The baseline (the series without a mutant) is stopped after the arch's
# baseline_timeout (arches.py). A mutant's run longer than this many times
# the baseline's (boot and tests, not the build), and at least the arch's
# min_timeout, is stopped and counted as a timeout: cargo-mutants' rule.
# The margin covers a run slowed by the build in the other tree.
TIMEOUT_MULTIPLIER = 5
# The configurations the survivors of a run without one are run again
# in, in turn, before they count: the kernel's own checkers (lockdep, RCU
# lockdep, KASAN, DEBUG_VM) see what no assertion can, such as an RCU read
# lock left held; a distribution's mm configuration (MEMCG, and NUMA on
# x86_64) takes paths the minimal one compiles out; the multi-gen LRU on
# from boot runs what the kernel does only then (lru_gen_inc_refs()
# through folio_mark_accessed()). The cheapest boots first: a survivor
# one of them kills is not booted under KASAN and lockdep.
CHECKERS = ('mglru', 'distro', 'debug')
# The detail of a survivor TCE found equivalent without a configuration,
# and not under the one named after it (Scored.differs_under).
DIFFERS = "the original's object code without a configuration, not under --config "


class Outcome(enum.Enum):
	KILLED = 'killed'
	CRASHED = 'crashed'
	TIMEOUT = 'timeout'
	SURVIVED = 'survived'
	UNVIABLE = 'unviable'
	EQUIVALENT = 'equivalent (TCE)'
	REVIEWED = 'equivalent (reviewed)'
	NOT_HERE = 'not run on this arch'

	@property
	def killed(self) -> bool:
		return self in (Outcome.KILLED, Outcome.CRASHED, Outcome.TIMEOUT)


@dataclasses.dataclass
class Scored:
	mutant: mutagen.Mutant
	outcome: Outcome
	# The tests that failed (killed), or crashed.
	tests: List[str] = dataclasses.field(default_factory=list)
	detail: str = ''
	diff: str = ''
	seconds: float = 0.0
	# The checker's configuration under which the mutant's object
	# differs from the original's, where it is the same without one
	# (TCE): it is run there, and not without a configuration.
	differs_under: Optional[str] = None

	def to_json(self) -> Dict[str, Any]:
		m = self.mutant
		return {'id': m.id, 'function': m.function, 'path': m.path,
			'line': m.line, 'operator': m.operator,
			'outcome': self.outcome.value, 'tests': self.tests,
			'detail': self.detail, 'diff': self.diff,
			'seconds': round(self.seconds, 1),
			'differs_under': self.differs_under}

	@classmethod
	def from_json(cls, d: Dict[str, Any]) -> 'Scored':
		col, op = d['id'].split(':', 3)[2:]
		m = mutagen.Mutant(d['path'], d['function'], d['line'], int(col),
				   op, 0, 0, '', '')
		return cls(m, Outcome(d['outcome']), list(d['tests']),
			   d['detail'], d['diff'], d['seconds'],
			   d.get('differs_under'))


@dataclasses.dataclass(frozen=True)
class Equivalent:
	"""A survivor argued to be equivalent, on some arches or on all."""
	why: str
	arches: Tuple[str, ...] = ()

	def applies(self, arch: str) -> bool:
		return not self.arches or arch in self.arches


def load_equivalent(path: Path) -> Dict[str, Equivalent]:
	"""ID [| ARCH ...] | reason, one per line: survivors argued to be
	equivalent (on the arches named, or on all)."""
	out: Dict[str, Equivalent] = {}
	if not path.is_file():
		return out
	text = listfile.read_text(path, HarnessError)
	for where, raw, parts in listfile.entries(text, str(path)):
		if len(parts) not in (2, 3) or not all(parts):
			raise HarnessError(f'{where}: want "ID [| ARCH ...] | '
					   f'reason", got: {raw}')
		arches = tuple(parts[1].split()) if len(parts) == 3 else ()
		out[parts[0]] = Equivalent(parts[-1], arches)
	return out


# What the kernel's own stall detectors print before they panic it (7.3's
# kunit-configs/ARCH.config): a mutant that loops or sleeps for ever dies
# on one of them before the harness's timeout.
_STALL = re.compile(r'watchdog: BUG: soft lockup|rcu: INFO: \S+ '
		    r'(?:self-)?detected stall|INFO: task \S+ blocked for more '
		    r'than \d+ seconds')
# How a kernel that died before its first test ended, if it says.
_PANIC = re.compile(r'Kernel panic - not syncing: [^\n]*')


def in_consoles(results_dir: Path, pattern: 're.Pattern[str]') -> str:
	"""The first match of pattern in the consoles of a run (its boots
	after a crash included), or ''."""
	for console in sorted(results_dir.glob('**/console.log')):
		m = pattern.search(console.read_text(errors='replace'))
		if m:
			return m.group(0).strip()
	return ''


def classify(mutant: mutagen.Mutant, result: RunResult,
	     timeout: int) -> Scored:
	"""What a run of the suites with the mutant built in says of it."""
	crashed = [c.name for c in result.cases if c.status == Status.ERROR]
	failed = [c.name for c in result.failed]
	out = result.results_dir / 'kunit.out'
	timed_out = out.is_file() and f'timed out after {timeout} seconds' in \
		out.read_text(errors='replace')
	seconds = result.seconds or 0.0
	if timed_out:
		return Scored(mutant, Outcome.TIMEOUT, crashed or failed,
			      f'stopped after {timeout} s', seconds=seconds)
	stall = in_consoles(result.results_dir, _STALL) if crashed else ''
	if stall:
		return Scored(mutant, Outcome.TIMEOUT, crashed,
			      f'the kernel stalled: {stall}', seconds=seconds)
	if crashed:
		return Scored(mutant, Outcome.CRASHED, crashed, seconds=seconds)
	if failed or result.complaints:
		return Scored(mutant, Outcome.KILLED, failed,
			      '; '.join(result.complaints[:1]), seconds=seconds)
	if result.died_before_tests:
		return Scored(mutant, Outcome.CRASHED, [],
			      'the kernel ran no test: ' +
			      (in_consoles(result.results_dir, _PANIC) or
			       'no panic printed'),
			      seconds=seconds)
	if result.untestable:
		return Scored(mutant, Outcome.UNVIABLE, [],
			      result.error or 'does not build', seconds=seconds)
	if result.ok:
		return Scored(mutant, Outcome.SURVIVED, seconds=seconds)
	return Scored(mutant, Outcome.KILLED, [], result.error or
		      'kunit.py failed', seconds=seconds)


def changed_lines(diff: str) -> Dict[str, Set[int]]:
	"""The new-side line numbers a unified diff (-U0 or not) adds, by
	file."""
	out: Dict[str, Set[int]] = {}
	path = ''
	line = 0
	for text in diff.splitlines():
		if text.startswith('+++ '):
			path = text[4:].split('\t')[0]
			path = path[2:] if path.startswith('b/') else path
			continue
		if text.startswith('@@'):
			new = text.split('+', 1)[1].split(' ', 1)[0]
			line = int(new.split(',')[0])
			continue
		if not path or text.startswith(('---', '\\')):
			continue
		if text.startswith('+'):
			out.setdefault(path, set()).add(line)
			line += 1
		elif text.startswith(' '):
			line += 1
	return out


def moved_lines(old: str, new: str, lines: Set[int]) -> Set[int]:
	"""lines of old, as numbered in new (the series moves them)."""
	a, b = old.splitlines(), new.splitlines()
	out: Set[int] = set()
	for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
			None, a, b, autojunk=False).get_opcodes():
		if tag == 'equal':
			out |= {j1 + (n - 1 - i1) + 1 for n in lines
				if i1 < n <= i2}
	return out


def select(s: Session, req: MutantsRequest, tree: trees.PreparedTree,
	   pinned: Sequence[mutagen.Pinned]
	   ) -> Tuple[List[mutagen.Mutant], Dict[str, bytes]]:
	"""The mutants of the pinned functions, narrowed as asked, and the
	sources they were made from (the tree with the series)."""
	# A name is a function, or a mutant id (or the start of one).
	wanted = {name.split(':')[0] for name in req.mutants}
	chosen = [p for p in pinned if not wanted or p.function in wanted]
	unknown = wanted - {p.function for p in pinned}
	if unknown:
		raise HarnessError(f'not pinned by any suite: {" ".join(sorted(unknown))}'
				   f' (the list: {s.overlay.root / "pinned"})')
	sources: Dict[str, bytes] = {}
	found: List[mutagen.Mutant] = []
	for p in chosen:
		if p.path not in sources:
			sources[p.path] = (tree.src / p.path).read_bytes()
		try:
			found += mutagen.generate(sources[p.path], p.path, p.function)
		except mutagen.PinnedError as e:
			raise HarnessError(str(e)) from None
	ids = [name for name in req.mutants if ':' in name]
	if ids:
		found = [m for m in found
			 if m.function not in {i.split(':')[0] for i in ids} or
			 any(m.id == i or m.id.startswith(i + ':') for i in ids)]
	if req.operators:
		found = mutagen.of_operators(found, req.operators)
	if req.in_diff:
		if not s.source.kernel:
			raise HarnessError('--in-diff A..B needs --kernel DIR (a git tree)')
		kernel = s.source.kernel.resolve()
		diff = trees.git(kernel, 'diff', '-U0', req.in_diff, '--',
				 *sorted(sources))
		changed = {path: moved_lines((kernel / path).read_text(),
					     sources[path].decode(), lines)
			   for path, lines in changed_lines(diff).items()
			   if path in sources}
		found = mutagen.in_lines(found, changed)
	if req.sample is not None:
		found = mutagen.sample(found, req.sample, req.seed)
	if req.shard:
		found = mutagen.shard(found, *req.shard)
	return found, sources


def run_generated(s: Session, req: MutantsRequest) -> int:
	s.ensure_deps()
	mutagen.use_parser(s.cache, s.source.install)
	pinned = mutagen.load_pinned(s.overlay.root / 'pinned')
	reviewed = load_equivalent(s.overlay.root / 'equivalent')
	tree = s.sources.prepared_tree()
	# Held from the baseline to the last survivor's recheck: what the
	# mutants are measured against stays what it was.
	with tree.locked():
		s.prepare(tree)
		return _run(s, req, tree, pinned, reviewed)


def _run(s: Session, req: MutantsRequest, tree: trees.PreparedTree,
	 pinned: Sequence[mutagen.Pinned],
	 reviewed: Dict[str, Equivalent]) -> int:
	arch = s.build.arch
	found, sources = select(s, req, tree, pinned)
	here = {p.function for p in pinned if not p.arches or arch in p.arches}
	arches = {p.function: p.arches for p in pinned}
	results = s.results_dir(f'{arch}-generated')
	print(f'mm-kunit: {len(found)} generated mutants of '
	      f'{len({m.function for m in found})} functions')
	started = time.monotonic()
	timeout = 0
	if any(m.function in here for m in found):
		timeout = _baseline(s, tree)
	opts = _options(s, tree, timeout)
	globs = _globs(pinned)
	comparers: Dict[Path, tce.Comparer] = {}
	out: Dict[str, Scored] = {}
	for m in found:
		if m.function not in here:
			out[m.id] = Scored(m, Outcome.NOT_HERE,
					   diff=m.diff(sources[m.path]),
					   detail='scored on ' + ' '.join(
						   arches[m.function]))
	todo = [m for m in found if m.id not in out]
	try:
		if not _in_schemata(s, req):
			rebuilt = todo
		else:
			by_schema, rebuilt = _by_schema(
				s, req, tree, todo, sources, pinned, globs, opts,
				timeout, results, comparers,
				{i for i, e in reviewed.items() if e.applies(arch)})
			out.update((r.mutant.id, r) for r in by_schema)
		for r in _by_rebuild(s, req, tree, rebuilt, sources, globs, opts,
				     timeout, comparers):
			out[r.mutant.id] = r
		scored = [out[m.id] for m in found if m.id in out]
		for r in scored:
			if r.outcome == Outcome.SURVIVED and \
			   r.mutant.id in reviewed and \
			   reviewed[r.mutant.id].applies(arch):
				r.outcome = Outcome.REVIEWED
				r.detail = reviewed[r.mutant.id].why
		scored = _recheck(s, req, tree, scored, sources, pinned, globs,
				  comparers)
	finally:
		for c in comparers.values():
			c.close()
	if _in_schemata(s, req):
		scored = _confirm_alone(s, req, tree, scored, sources, globs,
					opts, timeout)
	(results / 'mutants.json').write_text(json.dumps(
		{'arch': arch, 'mutants': [r.to_json() for r in scored]},
		indent=1) + '\n')
	print(report(scored))
	# Listed for this arch, of a function run here, and not reviewed.
	stale = sorted({i for i, e in reviewed.items() if e.applies(arch) and
			i.split(':')[0] in here} -
		       {r.mutant.id for r in scored if r.outcome == Outcome.REVIEWED})
	if not req.mutants and not req.sample and not req.shard and \
	   not req.in_diff and not req.operators:
		for ident in stale:
			print(f'mm-kunit: {ident} is listed as equivalent but did '
			      'not survive (or is no longer generated)')
	print(f'mm-kunit: results in {results / "mutants.json"}')
	print(f'mm-kunit: generated mutants took '
	      f'{time.monotonic() - started:.0f} s')
	if req.sample is not None:
		score = total(scored)
		print(f'mm-kunit: the sample scores '
		      f'{"-" if score is None else f"{score:.0f}%"} as a whole '
		      f'(threshold {THRESHOLD}%)')
		return EXIT_OK if sample_passes(scored) else EXIT_TESTS_FAILED
	return EXIT_OK if passes(scored) else EXIT_TESTS_FAILED


def _in_schemata(s: Session, req: MutantsRequest) -> bool:
	"""Whether the mutants go into schemata: unless --rebuild, where the
	harness boots the kernel itself (UML: schemata.boot_uml())."""
	return not req.rebuild and arches.ARCHES[s.build.arch].uml


def _confirm_alone(s: Session, req: MutantsRequest,
		   tree: trees.PreparedTree, scored: List[Scored],
		   sources: Dict[str, bytes], globs: Dict[str, str],
		   opts: RunOptions, timeout: int) -> List[Scored]:
	"""Each survivor of the schemata built alone and run again, as the
	schemata ran it: without a configuration, then, if it survives, under
	each of CHECKERS in turn. In a schema the compiler may drop a
	mutant's branch as unreachable when the mutant makes something
	undefined on its path (a deleted assignment leaves a variable unset,
	which -ftrivial-auto-var-init makes 0 only where no branch sets it),
	and the kernel then runs the original there. A survivor killed alone
	is killed."""
	survivors = [r.mutant for r in scored if r.outcome == Outcome.SURVIVED]
	if not survivors:
		return scored
	print(f'mm-kunit: {len(survivors)} survivors of the schemata, each '
	      'built alone')
	killed: Dict[str, Scored] = {}
	# Not without a configuration where that compiles it to the original.
	same = {r.mutant.id for r in scored if r.outcome == Outcome.SURVIVED
		and r.differs_under}
	configs: List[Optional[str]] = [None, *_checkers(s)]
	for config in configs:
		todo = [m for m in survivors if m.id not in killed and
			(config or m.id not in same)]
		if not todo:
			break
		checked, how, wait = s, opts, timeout
		if config:
			checked = s.with_config(config)
			wait = _baseline(checked, tree)
			how = _options(checked, tree, wait)
		for r in _by_rebuild(checked, req, tree, todo, sources, globs,
				     how, wait, None):
			if r.outcome.killed:
				r.detail = '; '.join(x for x in (
					'built alone', config and f'under --config {config}',
					r.detail) if x)
				killed[r.mutant.id] = r
	out = []
	for r in scored:
		new = killed.get(r.mutant.id)
		if new is not None:
			new.diff = r.diff
			new.seconds += r.seconds
			r = new
		out.append(r)
	return out


def _globs(pinned: Sequence[mutagen.Pinned]) -> Dict[str, str]:
	"""The suites a mutant is run with, by its file: those pinned to
	the file's functions (a KUnit filter glob)."""
	return {path: schemata.suites_glob([suite for p in pinned
					    if p.path == path
					    for suite in p.suites])
		for path in {p.path for p in pinned}}


def _by_rebuild(s: Session, req: MutantsRequest, tree: trees.PreparedTree,
		mutants: Sequence[mutagen.Mutant], sources: Dict[str, bytes],
		globs: Dict[str, str], opts: RunOptions, timeout: int,
		comparers: Optional[Dict[Path, tce.Comparer]]) -> List[Scored]:
	"""Each mutant compiled alone (TCE, unless comparers is None), and
	built into a kernel and run unless that says it is equivalent or
	unviable."""
	def job(m: mutagen.Mutant) -> jobs.Job:
		def run(t: trees.PreparedTree) -> Scored:
			diff = m.diff(sources[m.path])
			patch = ov.Patch(f'{m.id}.patch', Path(m.id), diff.encode(),
					 (m.path,))
			scored = None
			if comparers is not None:
				_originals(s, t, [m], sources, comparers)
				scored = _tce(s, t, m, sources[m.path], comparers)
			if scored is None:
				scored = _run_mutant(
					s, t, m, patch, f'mutant {m.id}',
					dataclasses.replace(
						opts, filter_glob=globs[m.path]),
					timeout)
			scored.diff = diff
			return scored
		return run

	if not mutants:
		return []
	done = jobs.run_jobs(s, tree, req.workers, [job(m) for m in mutants],
			     opts, configured=bool(timeout))
	return [r for r in done if isinstance(r, Scored)]


def _by_schema(s: Session, req: MutantsRequest, tree: trees.PreparedTree,
	       mutants: Sequence[mutagen.Mutant], sources: Dict[str, bytes],
	       pinned: Sequence[mutagen.Pinned], globs: Dict[str, str],
	       opts: RunOptions, timeout: int, results: Path,
	       comparers: Dict[Path, tce.Comparer], reviewed: Set[str]
	       ) -> Tuple[List[Scored], List[mutagen.Mutant]]:
	"""The mutants in schemata (schemata.py): a kernel a layer, a boot a
	mutant; a survivor then compiled alone (TCE), which may find it
	equivalent or unviable, unless reviewed lists it (kernel/equivalent:
	its entry decides). A mutant no layer could hold is compiled alone
	too, and if that leaves it to be run, held in a copy of its function
	(_in_function_copies()). Returns what they scored, and the mutants
	left to be built alone."""
	scored = _schema_pass(s, req, tree, mutants, sources, pinned, globs,
			      opts, timeout, results / 'schemata')
	refused = [Scored(m, Outcome.SURVIVED, diff=m.diff(sources[m.path]))
		   for m in mutants if m.id not in {r.mutant.id for r in scored}]
	survivors = [r for r in scored if r.outcome == Outcome.SURVIVED and
		     r.mutant.id not in reviewed]

	def compared(r: Scored) -> Scored:
		same = _tce(s, tree, r.mutant, sources[r.mutant.path], comparers)
		if same is None:
			return r
		same.diff = r.diff or same.diff
		same.seconds += r.seconds
		return same

	todo = survivors + refused
	with tree.locked():
		_originals(s, tree, [r.mutant for r in todo], sources, comparers)
		with concurrent.futures.ThreadPoolExecutor(
				max(1, req.workers)) as pool:
			now = dict(zip((r.mutant.id for r in todo),
				       pool.map(compared, todo)))
	# Refused by the schemata, compiled alone to code of its own.
	left = [r.mutant for r in refused if now[r.mutant.id] is r]
	copied = _in_function_copies(s, req, tree, left, sources, pinned, globs,
				     opts, timeout, results / 'functions')
	decided = [now[r.mutant.id] for r in refused if now[r.mutant.id] is not r]
	held = {r.mutant.id for r in copied}
	return [now.get(r.mutant.id, r) for r in scored] + decided + copied, \
		[m for m in left if m.id not in held]


def _in_function_copies(s: Session, req: MutantsRequest,
			tree: trees.PreparedTree,
			mutants: Sequence[mutagen.Mutant],
			sources: Dict[str, bytes],
			pinned: Sequence[mutagen.Pinned], globs: Dict[str, str],
			opts: RunOptions, timeout: int,
			results: Path) -> List[Scored]:
	"""Mutants of .c files that no schema could hold as a choice (a
	constant made a choice is no longer one to min()'s checks, a
	declaration, a preprocessor line), held as the hand-written mutants
	are: a copy of the function with the mutant, which the original
	calls first thing when its number is live
	(schemata.functions_schema()); one kernel, a boot a mutant
	(_boot_all()). What they scored; those it could not hold are left
	out, to be built alone. A header's mutants are left out: the copy
	of an inline function would be compiled into every unit."""
	todo = [m for m in mutants if m.path.endswith('.c')]
	if not todo:
		return []
	definer = min(p.path for p in pinned if p.path.endswith('.c'))
	base = dict(sources)
	if definer not in base:
		base[definer] = (tree.src / definer).read_bytes()
	numbers = dict(enumerate(todo, start=1))
	mutated: Dict[str, Dict[int, bytes]] = {}
	for n, m in numbers.items():
		mutated.setdefault(m.path, {})[n] = m.apply(sources[m.path])
	results.mkdir(parents=True, exist_ok=True)
	with tree.locked():
		try:
			s.put_series(tree)
			patches, refused = schemata.build_functions(
				s, tree, base, mutated, definer, results / 'build.log')
			held = {n: m for n, m in numbers.items() if n not in refused}
			print(f'mm-kunit: {len(held)} mutants no schema held in '
			      f'copies of their functions, {len(todo) - len(held)} '
			      'to build alone')
			if not patches or not held:
				return []
			return _boot_all(s, req, tree.build_dir(s.build_key),
					 schemata.Built(held, patches, []), sources,
					 globs, opts, timeout, results)
		finally:
			s.put_series(tree)


def _schema_pass(s: Session, req: MutantsRequest, tree: trees.PreparedTree,
		 mutants: Sequence[mutagen.Mutant], sources: Dict[str, bytes],
		 pinned: Sequence[mutagen.Pinned], globs: Dict[str, str],
		 opts: RunOptions, timeout: int, results: Path) -> List[Scored]:
	"""Each layer's schemata built into tree's kernel, and each mutant it
	holds booted with its suites."""
	if not mutants:
		return []
	definer = min(p.path for p in pinned if p.path.endswith('.c'))
	files = dict(sources)
	if definer not in files:
		files[definer] = (tree.src / definer).read_bytes()
	numbers = schemata.numbering(mutants)
	build_dir = tree.build_dir(s.build_key)
	out: List[Scored] = []
	results.mkdir(parents=True, exist_ok=True)
	with tree.locked():
		try:
			for i, layer in enumerate(schemata.layers(mutants)):
				built = schemata.build(s, tree, layer, files, numbers,
						       definer,
						       results / f'build-{i + 1}.log')
				print(f'mm-kunit: schema {i + 1}: {len(built.numbers)} '
				      f'mutants in one kernel ({built.seconds:.0f} s '
				      f'to build), {len(built.refused)} to build alone')
				out += _boot_all(s, req, build_dir, built, sources,
						 globs, opts, timeout,
						 results / f'schema-{i + 1}')
		finally:
			s.put_series(tree)
	return out


def _boot_all(s: Session, req: MutantsRequest, build_dir: Path,
	      built: schemata.Built, sources: Dict[str, bytes],
	      globs: Dict[str, str], opts: RunOptions, timeout: int,
	      results: Path) -> List[Scored]:
	"""Boots the schema kernel for each mutant it holds, with its file's
	suites, as _plan() says, until a boot does not pass."""
	results.mkdir(parents=True, exist_ok=True)
	todo = sorted(built.numbers.items())
	plans = {path: _plan(build_dir, dataclasses.replace(
				opts, filter_glob=globs[path]),
			     arches.ARCHES[s.build.arch], results,
			     path.replace('/', '-'))
		 for path in sorted({m.path for _, m in todo})}

	def one(item: Tuple[int, mutagen.Mutant]) -> Scored:
		n, m = item
		console = results / f'{n}.log'
		b, seconds = _boot_through(build_dir, plans[m.path], n, console)
		outcome = {'failed': Outcome.KILLED, 'crashed': Outcome.CRASHED,
			   'timeout': Outcome.TIMEOUT, 'passed': Outcome.SURVIVED,
			   'no tests': Outcome.CRASHED}[b.verdict]
		if b.verdict == 'failed':
			console.unlink()
		detail = b.detail or ('the kernel ran no test'
				      if b.verdict == 'no tests' else '')
		return Scored(m, outcome, list(b.tests), detail,
			      m.diff(sources[m.path]), seconds)

	done = 0
	out: List[Scored] = []
	with concurrent.futures.ThreadPoolExecutor(max(1, req.workers)) as pool:
		for r in pool.map(one, todo):
			out.append(r)
			done += 1
			if done % 100 == 0:
				progress.progress(f'mutant schemata: {done} of '
						  f'{len(todo)} booted')
	return out


# A boot of _plan(): its options, and the mutant's limits (the wall
# clock's seconds, the CPU's or None).
Way = Tuple[RunOptions, float, Optional[float]]


def _boot_through(build_dir: Path, plan: Sequence[Way], number: int,
		  console: Path) -> Tuple[schemata.Boot, float]:
	"""Boots mutant number as plan says, until a boot does not pass:
	the last boot, and the seconds of them all."""
	seconds = 0.0
	for way, wall, cpu in plan:
		b = schemata.boot_uml(build_dir, way, number, wall, console, cpu)
		seconds += b.seconds
		if b.verdict != 'passed':
			break
	return b, seconds


def _plan(build_dir: Path, opts: RunOptions, arch: arches.Arch,
	  results: Path, label: str) -> List[Way]:
	"""The boots that run a mutant with the tests of opts.filter_glob,
	in turn, each with its limits (the wall clock's seconds, the CPU's):
	every test on one CPU where the arch can (UML's SMP costs each boot
	about twice its time), then each that skipped there for want of
	CPUs alone, as opts boot it (the PTE recheck's race needs two). Each
	is booted first with no mutant live: it must pass, and a mutant's
	boot is stopped after TIMEOUT_MULTIPLIER times what it took
	(schemata.MIN_TIMEOUT at least) and, on one CPU, after as many times
	the CPU time it used (schemata.MIN_CPU at least): on two, a test
	may spin on one CPU while it waits for the other, which the host
	may keep waiting for longer on a loaded machine."""
	def none(way: RunOptions, name: str, cpu: bool) -> Way:
		b = schemata.boot_uml(build_dir, way, 0, arch.baseline_timeout,
				      results / f'none-{name}.log')
		if b.verdict != 'passed':
			raise HarnessError(
				f'the schema kernel fails {way.filter_glob} with no '
				f'mutant ({b.verdict}: {b.detail}; see {results})')
		return (way, max(schemata.MIN_TIMEOUT,
				 TIMEOUT_MULTIPLIER * b.seconds),
			max(schemata.MIN_CPU, TIMEOUT_MULTIPLIER * b.cpu)
			if cpu else None)

	if not arch.one_cpu:
		return [none(opts, label, False)]
	plan = [none(dataclasses.replace(opts, kernel_args=[
		*opts.kernel_args, *arch.one_cpu]), label, True)]
	cases = schemata.cases_of(results / f'none-{label}.log') or []
	for n, test in enumerate(runner.needing_cpus(cases), start=1):
		plan.append(none(dataclasses.replace(opts, filter_glob=test),
				 f'{label}-cpus-{n}', False))
	return plan


def _run_mutant(s: Session, t: trees.PreparedTree, m: mutagen.Mutant,
		patch: ov.Patch, label: str, opts: RunOptions,
		timeout: int) -> Scored:
	"""Builds and runs the suites with m (patch) in t, and classifies
	the run. A kernel that starts but dies before its first test is
	booted once more: the baseline's kernel ran them all, but a boot can
	also fail for the machine's reasons (under TCG on a loaded machine,
	the IO-APIC timer check); two in a row are the mutant's doing."""
	result = jobs.run_in(s, t, s.overlay, [patch], label, opts)
	if result.died_before_tests:
		result = jobs.run_in(s, t, s.overlay, [patch], label + ' again',
				     opts)
	return classify(m, result, timeout)


def _options(s: Session, tree: trees.PreparedTree,
	     timeout: int) -> RunOptions:
	"""How a mutant's kernel is run: quietly, stopped after timeout, and
	once (a crash kills the mutant; the tests after it need not run);
	measured against the tests the kernel passes (failing_here)."""
	opts = s.with_accel(s.run_options(held_to_list=True), tree)
	if timeout:
		opts = dataclasses.replace(opts, timeout=timeout)
	return dataclasses.replace(opts, quiet=True, rerun_after_crash=False)


def mutant_timeout(arch: str, baseline: RunResult) -> int:
	"""The seconds a mutant's run may take, from the baseline's."""
	return max(arches.ARCHES[arch].min_timeout,
		   math.ceil(TIMEOUT_MULTIPLIER * jobs.run_seconds(baseline)))


def _baseline(s: Session, tree: trees.PreparedTree) -> int:
	"""Builds and runs the series without a mutant (jobs.baseline(), which
	fails if it does not pass); returns the mutants' timeout."""
	arch = s.build.arch
	base = jobs.baseline(s, tree, _options(
		s, tree, arches.ARCHES[arch].baseline_timeout))
	timeout = mutant_timeout(arch, base)
	print(f'mm-kunit: baseline{" --config " + s.build.config if s.build.config else ""}: '
	      f'{base.count(Status.PASS)} passed, {base.count(Status.SKIP)} '
	      f'skipped, its kernel ran {jobs.run_seconds(base):.0f} s; a '
	      f'mutant\'s run is stopped after {timeout} s')
	return timeout


def _recheck(s: Session, req: MutantsRequest, tree: trees.PreparedTree,
	     scored: List[Scored], sources: Dict[str, bytes],
	     pinned: Sequence[mutagen.Pinned], globs: Dict[str, str],
	     comparers: Dict[Path, tce.Comparer]) -> List[Scored]:
	"""Runs the survivors again under each configuration of _checkers(),
	in turn: a mutant that fails there is killed, with the configuration
	in its detail. A mutant TCE found equivalent is compared again under
	each first: code that only a checker's configuration compiles in
	(MEMCG's, DEBUG_VM's) is dead without it, so its mutants compile to
	the original there and not under the checker; one whose object
	differs there is a survivor, run under that configuration like the
	others."""
	for config in _checkers(s):
		scored = _recheck_under(s, req, tree, scored, config, sources,
					pinned, globs, comparers)
	return scored


def _checkers(s: Session) -> List[str]:
	"""The configurations of CHECKERS that survivors run again under,
	in turn, if the run was without one: those the arch has. On a port
	of kernel/compat/, only those it has files of its own for: its
	suites need not run under the others (6.12's make no memcg of their
	own, and MEMCG is in mglru's and distro's)."""
	if s.build.config:
		return []
	port = s.overlay.root.resolve().is_relative_to(
		(KERNEL_DIR / 'compat').resolve())

	def file(name: str) -> Path:
		return s.overlay.root / 'kunit-configs' / name if port \
			else s.config_file(name)
	return [c for c in CHECKERS
		if file(f'{s.build.arch}-{c}.config').is_file()]


def _recheck_under(s: Session, req: MutantsRequest,
		   tree: trees.PreparedTree, scored: List[Scored],
		   config: str, sources: Dict[str, bytes],
		   pinned: Sequence[mutagen.Pinned], globs: Dict[str, str],
		   comparers: Dict[Path, tce.Comparer]) -> List[Scored]:
	"""The survivors of scored, run again under --config config, with
	those TCE found equivalent whose object differs there: in
	schemata of their own (or each alone, with --rebuild or where no
	schema holds it)."""
	if not any(r.outcome in (Outcome.SURVIVED, Outcome.EQUIVALENT)
		   for r in scored):
		return scored
	# The suites the first pass ran, even if kernel/ changed since.
	checked = s.with_config(config)
	timeout = _baseline(checked, tree)
	scored = _compared_under(checked, req, tree, scored, config, sources,
				 comparers)
	survivors = [i for i, r in enumerate(scored)
		     if r.outcome == Outcome.SURVIVED]
	if not survivors:
		return scored
	print(f'mm-kunit: {len(survivors)} survivors again, under '
	      f'--config {config}')
	opts = _options(checked, tree, timeout)
	todo = [scored[i].mutant for i in survivors]
	again: Dict[str, Scored] = {}
	if _in_schemata(s, req):
		results = runner.new_results_dir(
			s.cache, f'{s.build.arch}-{config}-schemata')
		again = {r.mutant.id: r for r in _schema_pass(
			checked, req, tree, todo, sources, pinned, globs, opts,
			timeout, results)}
		# They compiled alone in the first pass.
		again.update((r.mutant.id, r) for r in _in_function_copies(
			checked, req, tree, [m for m in todo if m.id not in again],
			sources, pinned, globs, opts, timeout,
			results / 'functions'))
	for r in _by_rebuild(checked, req, tree,
			     [m for m in todo if m.id not in again], sources,
			     globs, opts, timeout, None):
		again[r.mutant.id] = r
	out = list(scored)
	for i in survivors:
		r, new = scored[i], again.get(scored[i].mutant.id)
		if new is None or not new.outcome.killed:
			continue
		new.diff = r.diff
		new.seconds += r.seconds
		new.detail = '; '.join(x for x in (f'under --config {config}',
						   new.detail) if x)
		out[i] = new
	return out


def _compared_under(checked: Session, req: MutantsRequest,
		    tree: trees.PreparedTree, scored: List[Scored], config: str,
		    sources: Dict[str, bytes],
		    comparers: Dict[Path, tce.Comparer]) -> List[Scored]:
	"""The mutants of scored TCE found equivalent so far, compared
	again in checked's build (built): those still the same stay
	equivalent; one that differs is a survivor (DIFFERS), one that does
	not compile there unviable."""
	equal = [r for r in scored if r.outcome == Outcome.EQUIVALENT]
	if not equal:
		return scored
	with tree.locked():
		_originals(checked, tree, [r.mutant for r in equal], sources,
			   comparers)
		with concurrent.futures.ThreadPoolExecutor(
				max(1, req.workers)) as pool:
			now = dict(zip((r.mutant.id for r in equal), pool.map(
				lambda r: _tce(checked, tree, r.mutant,
					       sources[r.mutant.path], comparers),
				equal)))
	out = []
	for r in scored:
		if r.mutant.id in now:
			new = now[r.mutant.id]
			if new is None:
				r = dataclasses.replace(
					r, outcome=Outcome.SURVIVED,
					detail=f'{DIFFERS}{config}',
					differs_under=config)
			elif new.outcome == Outcome.UNVIABLE:
				r = dataclasses.replace(
					r, outcome=Outcome.UNVIABLE,
					detail=f'under --config {config}: {new.detail}')
		out.append(r)
	print(f'mm-kunit: {len(equal)} equivalent (TCE) compared again under '
	      f'--config {config}: '
	      f'{sum(new is None for new in now.values())} differ there')
	return out


def _tce(s: Session, t: trees.PreparedTree, m: mutagen.Mutant,
	 source: bytes, comparers: Dict[Path, tce.Comparer]
	 ) -> Optional[Scored]:
	"""Compiles the mutant's unit on its own: unviable or equivalent, or
	None if it has to be built into a kernel and run. A header's mutant
	is equivalent if the configuration leaves its line out (kconfig.py),
	and otherwise always built and run. The unit's original must have
	been compiled (_originals()); the tree is not touched, so mutants of
	one tree may be compared side by side."""
	build = t.build_dir(s.build_key)
	obj = tce.object_of(m.path)
	if obj is None:
		# A header: no one unit to compare, but the configuration may
		# leave the line out of every unit.
		config = build / '.config'
		why = kconfig.left_out(mutagen.guards(source, m.start),
				       kconfig.load(config)) \
			if config.is_file() else None
		return None if why is None else Scored(
			m, Outcome.EQUIVALENT, detail=f'never compiled: {why}')
	started = time.monotonic()
	same, why = comparers[build].compare(obj, m.apply(source), m.id)
	seconds = time.monotonic() - started
	if same == tce.Compiled.SAME:
		return Scored(m, Outcome.EQUIVALENT, seconds=seconds)
	if same == tce.Compiled.FAILED:
		first = next((l for l in why.splitlines() if 'error' in l), why[:200])
		return Scored(m, Outcome.UNVIABLE, detail=first.strip(),
			      seconds=seconds)
	return None


def _originals(s: Session, t: trees.PreparedTree,
	       mutants: Sequence[mutagen.Mutant], sources: Dict[str, bytes],
	       comparers: Dict[Path, tce.Comparer]) -> None:
	"""Compiles, in t with the series and nothing else on it, the
	original of each unit the mutants are in that t's comparer lacks."""
	build = t.build_dir(s.build_key)
	comparer = comparers.get(build)
	if comparer is None:
		comparer = comparers[build] = tce.Comparer(
			build, build.with_name(f'{build.name}-tce'))
	objs = {(o, m.path) for m in mutants
		for o in [tce.object_of(m.path)] if o is not None}
	lacking = sorted((o, p) for o, p in objs if not comparer.has_original(o))
	if lacking:
		s.put_series(t)
	for obj, path in lacking:
		comparer.original(obj, sources[path])


@dataclasses.dataclass
class Row:
	function: str
	generated: int = 0
	unviable: int = 0
	equivalent: int = 0
	killed: int = 0
	crashed: int = 0
	timeout: int = 0
	survived: int = 0

	@property
	def score(self) -> Optional[float]:
		counted = self.killed + self.survived
		return 100.0 * self.killed / counted if counted else None


def rows(scored: Sequence[Scored]) -> List[Row]:
	by: Dict[str, Row] = {}
	for r in scored:
		if r.outcome == Outcome.NOT_HERE:
			continue
		row = by.setdefault(r.mutant.function, Row(r.mutant.function))
		row.generated += 1
		o = r.outcome
		row.unviable += o == Outcome.UNVIABLE
		row.equivalent += o in (Outcome.EQUIVALENT, Outcome.REVIEWED)
		row.killed += o.killed
		row.crashed += o == Outcome.CRASHED
		row.timeout += o == Outcome.TIMEOUT
		row.survived += o == Outcome.SURVIVED
	return list(by.values())


def passes(scored: Sequence[Scored]) -> bool:
	"""Every function at the threshold or above."""
	return all(r.score is None or r.score >= THRESHOLD for r in rows(scored))


def total(scored: Sequence[Scored]) -> Optional[float]:
	"""The score of all the mutants as one set."""
	killed = sum(r.outcome.killed for r in scored)
	counted = killed + sum(r.outcome == Outcome.SURVIVED for r in scored)
	return 100.0 * killed / counted if counted else None


def sample_passes(scored: Sequence[Scored]) -> bool:
	"""A sample, at the threshold or above as a whole: a few mutants of a
	function say little of its own score."""
	score = total(scored)
	return score is None or score >= THRESHOLD


def report(scored: Sequence[Scored]) -> str:
	head = ('function', 'generated', 'unviable', 'equivalent',
		'killed (crashed/timeout)', 'survived', 'score')
	table = [head]
	for r in rows(scored):
		table.append((r.function, str(r.generated), str(r.unviable),
			      str(r.equivalent),
			      f'{r.killed} ({r.crashed}/{r.timeout})',
			      str(r.survived),
			      '-' if r.score is None else
			      f'{r.score:.0f}%{"" if r.score >= THRESHOLD else " LOW"}'))
	widths = [max(len(row[i]) for row in table) for i in range(len(head))]
	lines = ['', 'Survivors (each a missing test, until argued otherwise)']
	for sc in scored:
		if sc.outcome == Outcome.SURVIVED:
			lines.append(f'  {sc.mutant.id}')
			lines += ['    ' + l for l in sc.diff.splitlines()[2:]]
	if len(lines) == 2:
		lines.append('  none')
	late = [sc for sc in scored if sc.outcome.killed and
		sc.detail.startswith('under --config ')]
	if late:
		lines += ['', 'Killed only under '
			  f'{" or ".join("--config " + c for c in CHECKERS)}']
		lines += [f'  {sc.mutant.id}: {", ".join(sc.tests) or sc.detail}'
			  for sc in late]
	alone = [sc for sc in scored if sc.outcome.killed and
		 sc.detail.startswith('built alone')]
	if alone:
		lines += ['', 'Survived their schema, killed built alone (the '
			  'compiler dropped their branch)']
		lines += [f'  {sc.mutant.id}: {", ".join(sc.tests) or sc.detail}'
			  for sc in alone]
	lines += ['', f'Generated mutants (threshold {THRESHOLD}%)']
	lines += ['  ' + '  '.join(c.ljust(w) for c, w in zip(row, widths))
		  for row in table]
	killed = sum(r.outcome.killed for r in scored)
	survived = sum(r.outcome == Outcome.SURVIVED for r in scored)
	lines.append(f'mutants: {killed} killed, {survived} survived, '
		     f'{sum(r.outcome == Outcome.UNVIABLE for r in scored)} unviable, '
		     f'{sum(r.outcome in (Outcome.EQUIVALENT, Outcome.REVIEWED) for r in scored)} equivalent, '
		     f'{sum(r.outcome == Outcome.NOT_HERE for r in scored)} not run on this arch')
	return '\n'.join(lines)


def merge(paths: Sequence[Path]) -> int:
	"""The shards' JSON files as one table (a CI matrix's final job)."""
	scored: List[Scored] = []
	for path in paths:
		try:
			data = json.loads(path.read_text())
		except (OSError, ValueError) as e:
			raise HarnessError(f'{path}: {e}') from None
		scored += [Scored.from_json(d) for d in data['mutants']]
	scored.sort(key=lambda r: (r.mutant.path, r.mutant.line,
				   r.mutant.column, r.mutant.operator))
	print(report(scored))
	return EXIT_OK if passes(scored) else EXIT_TESTS_FAILED
