# SPDX-License-Identifier: GPL-2.0
"""Mutant schemata: many generated mutants compiled into one kernel, each
behind a number that the boot command line chooses, as Mull and Dextool
do in userland. One build then stands for hundreds of mutants, and a
mutant costs one boot instead of one build and one boot.

Each mutant (mutagen.py) edits one expression or statement of a pinned
function, its region. In the schema the region becomes a choice made at
run time, on the lines the region had:

  expression  ((mm_kunit_mutant == 7) ? (MUTATED) : (ORIGINAL))
  statement   { if (mm_kunit_mutant == 7) { MUTATED } else { ORIGINAL } }

MUTATED is the mutant's text of the region, its comments dropped and its
line breaks made spaces; ORIGINAL keeps its lines, with the regions
inside it made choices in turn. So no line moves and only one mutant is
live at a time. mm_kunit_mutant is set by the early parameter of the
same name; 0 (no parameter) is the unmutated kernel.

A family of regions nested in one another or apart is one schema; two
mutants whose regions overlap otherwise (adjacent swapped statements)
go into different layers (layers()), each a kernel of its own. A mutant
whose region holds a preprocessor line cannot be made a choice; nor can
one that does not compile as a choice (a constant where the compiler
needs one: a case label, a static initialiser, BUILD_BUG_ON()). Those
are built alone, as before (generated.py).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import difflib
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import (Callable, Dict, Iterable, List, Optional, Sequence, Set,
		    Tuple, TypeVar)

from mmkunit import ktap
from mmkunit import mutagen
from mmkunit import overlay as ov
from mmkunit import progress
from mmkunit import runner
from mmkunit import tce
from mmkunit import trees
from mmkunit.session import Session

# The kernel parameter, and the variable it sets.
SWITCH = 'mm_kunit_mutant'
DECLARATION = f'extern unsigned long {SWITCH}; '
DEFINITION = f'''
/* The mutant this kernel runs (mm-kunit's mutant schemata); 0: none. */
unsigned long {SWITCH} __read_mostly;

static int __init {SWITCH}_setup(char *arg)
{{
	return kstrtoul(arg, 0, &{SWITCH});
}}
early_param("{SWITCH}", {SWITCH}_setup);
'''


def layers(mutants: Sequence[mutagen.Mutant]) -> List[List[mutagen.Mutant]]:
	"""The mutants in layers, each a family of regions that are nested or
	apart, never overlapping in part; the first layers take the most."""
	out: List[List[mutagen.Mutant]] = []
	spans: List[List[Tuple[int, int]]] = []
	for m in sorted(mutants, key=lambda m: (m.region_start, -m.region_end)):
		s, e = m.region_start, m.region_end
		for layer, taken in zip(out, spans):
			if all(e <= a or b <= s or (a <= s and e <= b) or
			       (s <= a and b <= e) for a, b in taken):
				layer.append(m)
				taken.append((s, e))
				break
		else:
			out.append([m])
			spans.append([(s, e)])
	return out


_TOKEN = re.compile(rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|'
		    rb'/\*.*?\*/|//[^\n]*|\n', re.DOTALL)


def flat(text: bytes) -> Optional[bytes]:
	"""text on one line: comments dropped, line breaks made spaces; None
	if it holds a preprocessor line, which no line can hold."""
	if any(line.lstrip().startswith(b'#') for line in
	       text.splitlines()[1:]):
		return None

	def one(m: 're.Match[bytes]') -> bytes:
		tok = m.group(0)
		return tok if tok[:1] in (b'"', b"'") else b' '
	return _TOKEN.sub(one, text)


def _choice(numbered: Sequence[Tuple[int, bytes]], original: bytes,
	    statement: bool) -> bytes:
	sw = SWITCH.encode()
	if statement:
		out = b'{ '
		for n, mutated in numbered:
			out += b'if (%s == %d) { %s } else ' % (sw, n, mutated)
		return out + b'{ ' + original + b' } }'
	out = b'('
	for n, mutated in numbered:
		out += b'(%s == %d) ? (%s) : ' % (sw, n, mutated)
	return out + b'(' + original + b'))'


@dataclasses.dataclass
class Schema:
	"""One file's schema of one layer."""
	path: str
	text: bytes
	# The mutants it holds, by number; and those it could not hold.
	numbers: Dict[int, mutagen.Mutant]
	refused: List[mutagen.Mutant]
	# Where each held mutant's own text stands in text (byte offsets).
	spans: Dict[int, Tuple[int, int]] = dataclasses.field(
		default_factory=dict)


def render(source: bytes, path: str, mutants: Sequence[mutagen.Mutant],
	   numbers: Dict[str, int], define: bool = False) -> Schema:
	"""source with the mutants (one layer of one file) as choices, each
	by its number. The switch is declared before each function that has
	a choice; with define, also defined at the end of the file."""
	refused: List[mutagen.Mutant] = []
	# Region -> the mutants that choose in it, with their flat text.
	regions: Dict[Tuple[int, int, bool],
		      List[Tuple[int, bytes]]] = {}
	held: Dict[int, mutagen.Mutant] = {}
	for m in mutants:
		text = flat(m.mutated_region(source))
		plain = flat(source[m.region_start:m.region_end])
		if text is None or plain is None or not m.region_end:
			refused.append(m)
			continue
		if m.operator.startswith('arg:'):
			# A call replaced by an argument of another type would give
			# the choice a type of its own, and the unmutated branch
			# with it (int < 0 compared unsigned): the argument takes
			# the call's type instead, converted as an initialisation
			# converts it, implicitly, so that what the compiler
			# refuses in the mutant alone (a bool returned as a
			# pointer) it refuses here too, and the mutant is
			# unviable both ways.
			text = (b'({ __typeof__(%s) __mm_kunit_arg = (%s); '
				b'__mm_kunit_arg; })' % (plain, text))
		n = numbers[m.id]
		regions.setdefault((m.region_start, m.region_end, m.statement),
				   []).append((n, text))
		held[n] = m
	order = sorted(regions, key=lambda r: (r[0], -r[1], not r[2]))

	def node(i: int) -> Tuple[bytes, int]:
		"""The choice of region order[i] with those inside it; the index
		of the next region after them."""
		start, end, statement = order[i]
		parts: List[bytes] = []
		at, j = start, i + 1
		while j < len(order) and order[j][0] < end:
			parts.append(source[at:order[j][0]])
			text, k = node(j)
			parts.append(text)
			at, j = order[j][1], k
		parts.append(source[at:end])
		return _choice(regions[order[i]], b''.join(parts), statement), j

	out: List[bytes] = []
	at, i = 0, 0
	starts = sorted(_function_starts(
		source, {m.function for m in held.values()}))
	while i < len(order):
		start, end, _ = order[i]
		while starts and starts[0] <= start:
			out += [source[at:starts[0]], DECLARATION.encode()]
			at = starts.pop(0)
		out.append(source[at:start])
		text, i = node(i)
		out.append(text)
		at = end
	out.append(source[at:])
	text = b''.join(out)
	if define:
		text += DEFINITION.encode()
	spans: Dict[int, Tuple[int, int]] = {}
	for choices in regions.values():
		for n, mutated in choices:
			start = text.index(b'(%s == %d) ' % (SWITCH.encode(), n))
			start = text.index(mutated, start)
			spans[n] = (start, start + len(mutated))
	return Schema(path, text, held, refused, spans)


def _function_starts(source: bytes, names: Iterable[str]) -> Set[int]:
	defs = mutagen.functions(source)
	return {fn.start_byte for name in names for fn in defs.get(name, [])}


# A compiler's diagnostic, or a note of one (where a macro it names was
# used), at a line of a file: "mm/filemap.c:3345:12: error: ...". Not
# "In file included from" nor "inlined from" lines: those name the
# callers, not the code at fault.
_AT = re.compile(r'^((?:/[^\s:]*/)?[\w./-]+\.[ch]):(\d+):(?:(\d+):)? '
		 r'(?:fatal )?(error|warning|note):')
_ANSI = re.compile(r'\x1b\[[0-9;]*[mK]')


@dataclasses.dataclass
class Blame:
	"""What a failed build's errors blame."""
	# Mutants an error stands inside the own text of.
	own: Set[int] = dataclasses.field(default_factory=set)
	# Mutants whose regions hold a line an error (or its note) names.
	lines: Set[int] = dataclasses.field(default_factory=set)
	# Files of the schemata an error names, where no region holds the
	# line (a function the compiler found wrong after a choice was
	# inlined into it, say): the culprits must be looked for.
	files: Set[str] = dataclasses.field(default_factory=set)


def blamed(output: str, schemas: Sequence[Schema],
	   sources: Dict[str, bytes], columns: bool = False) -> Blame:
	"""What a failed build's output blames. With columns (counted in
	bytes: tce.compiles()), an error inside a mutant's own text blames
	that mutant alone."""
	out = Blame()
	files: Set[str] = set()
	by_path = {s.path: s for s in schemas if s.numbers}
	spans = {path: [(n, _lines(sources[path], m))
			for n, m in sc.numbers.items()]
		 for path, sc in by_path.items()}
	error = False
	for raw in _ANSI.sub('', output).splitlines():
		m = _AT.match(raw.strip())
		if m is None:
			continue
		# A note belongs to the diagnostic before it: a warning's notes
		# are no more at fault than the warning, unless -Werror.
		kind = m.group(4)
		if kind != 'note':
			error = kind == 'error'
		if not error:
			continue
		path = next((p for p in by_path if m.group(1) == p or
			     m.group(1).endswith('/' + p)), None)
		if path is None:
			continue
		line = int(m.group(2))
		files.add(path)
		own = _own(by_path[path], line, int(m.group(3) or 0)) \
			if columns else None
		if own is not None:
			out.own.add(own)
		else:
			out.lines |= {n for n, (first, last) in spans[path]
				      if first <= line <= last}
	if not out.own and not out.lines:
		out.files = files
	return out


def _own(schema: Schema, line: int, column: int) -> Optional[int]:
	"""The mutant whose own text holds that byte of schema's text."""
	if not column:
		return None
	at = 0
	for _ in range(line - 1):
		at = schema.text.index(b'\n', at) + 1
	at += column - 1
	inside = [(e - s, n) for n, (s, e) in schema.spans.items()
		  if s <= at < e]
	return min(inside)[1] if inside else None


def _lines(source: bytes, m: mutagen.Mutant) -> Tuple[int, int]:
	"""The first and last line (1-based) of m's region."""
	first = source.count(b'\n', 0, m.region_start) + 1
	return first, first + source.count(b'\n', m.region_start, m.region_end)


# Macros that declare what follows them uses (DEFINE_READAHEAD(ractl,
# ...), XA_STATE(xas, ...)): a statement of one cannot be put inside a
# choice's braces.
_DECLARES = re.compile(r'\s*(?:(?:DEFINE|DECLARE)_\w+|\w+_STATE(?:_\w+)?|'
		       r'L?LIST_HEAD)\s*\(')


def declares(m: mutagen.Mutant) -> bool:
	"""Whether m deletes or moves a statement that declares a name."""
	return m.statement and bool(_DECLARES.match(m.original))


def numbering(mutants: Sequence[mutagen.Mutant]) -> Dict[str, int]:
	"""Each mutant's number, from 1 in the order given."""
	return {m.id: i + 1 for i, m in enumerate(mutants)}


def suites_glob(suites: Sequence[str]) -> str:
	"""A KUnit filter glob that matches these suites (their common
	start and '*', if more than one)."""
	names = sorted(set(suites))
	if len(names) == 1:
		return names[0]
	prefix = names[0]
	for name in names[1:]:
		while not name.startswith(prefix):
			prefix = prefix[:-1]
	return prefix + '*'


# The operators whose mutants may give an expression another type: the
# first suspects of an error on their line.
_RETYPING = ('arg', 'swap')

# A mutant's boot is stopped after TIMEOUT_MULTIPLIER (generated.py)
# times what its suites took with no mutant, and no sooner than this
# many seconds: a loaded machine may run a boot a few times slower.
MIN_TIMEOUT = 10.0
# ... and, booted on one CPU, once it has used this many seconds of the
# host's CPU, if that comes first: a kernel that loops in a mutant uses
# the CPU all the time, where the suites with no mutant use a tenth of a
# second of it (UML), however loaded the machine.
MIN_CPU = 2.0

# A layer's build is tried this many times, each without the mutants the
# last one's errors blamed, before the rest of the layer is built alone.
ATTEMPTS = 10


@dataclasses.dataclass
class Built:
	"""A layer's kernel, built: the mutants it holds by number, the
	patches that made it, and the layer's mutants it could not hold."""
	numbers: Dict[int, mutagen.Mutant]
	patches: List[ov.Patch]
	refused: List[mutagen.Mutant]
	seconds: float = 0.0
	# Why each refused mutant was (by id).
	why: Dict[str, str] = dataclasses.field(default_factory=dict)


def patch_of(path: str, original: bytes, text: bytes) -> ov.Patch:
	"""The patch that makes original (the file at path) text."""
	def lines(b: bytes) -> List[str]:
		return b.decode(errors='surrogateescape').splitlines(True)
	diff = ''.join(difflib.unified_diff(lines(original), lines(text),
					    f'a/{path}', f'b/{path}', n=3))
	name = 'schema-' + path.replace('/', '-')
	return ov.Patch(name, Path(name + '.patch'),
			diff.encode(errors='surrogateescape'), (path,))


def has_command(build_dir: Path, obj: str) -> bool:
	"""Whether kbuild saved the command that compiles obj: a schema is
	compiled unit by unit with it before the kernel is built."""
	try:
		tce.compile_command(build_dir, obj)
	except FileNotFoundError:
		return False
	return True


def units(sources: Dict[str, bytes]) -> List[str]:
	"""The objects to compile to see whether the schemata of sources
	compile: the .c files' (which include the headers' too)."""
	return sorted(o for o in map(tce.object_of, sources) if o)


def _render_all(sources: Dict[str, bytes], held: Sequence[mutagen.Mutant],
		numbers: Dict[str, int], definer: str) -> List[Schema]:
	return [render(text, path, [m for m in held if m.path == path],
		       numbers, define=path == definer)
		for path, text in sorted(sources.items())]


def build(s: Session, tree: trees.PreparedTree,
	  mutants: Sequence[mutagen.Mutant], sources: Dict[str, bytes],
	  numbers: Dict[str, int], definer: str, log: Path) -> Built:
	"""Puts the schemata of mutants (one layer) onto tree and builds its
	kernel. A mutant the compiler blames (or the bisection of a unit it
	blames as a whole) is left out, and the rest built again. sources
	holds definer (a .c file, which defines the switch)."""
	build_dir = tree.build_dir(s.build_key)
	opts = s.run_options()
	if not all(has_command(build_dir, o) for o in units(sources)):
		return Built({}, [], list(mutants), why={
			m.id: 'kbuild saved no command to compile its file with'
			for m in mutants})
	refused = [m for m in mutants if declares(m)]
	held = [m for m in mutants if not declares(m)]
	why = {m.id: 'it declares a name' for m in refused}

	# The schema texts each unit last compiled cleanly with: a unit
	# whose own file and the headers are as they were is not compiled
	# again.
	texts: Dict[str, bytes] = {}
	clean: Dict[str, Tuple[bytes, ...]] = {}

	def put(chosen: Sequence[mutagen.Mutant]) -> Tuple[List[Schema],
							     List[ov.Patch]]:
		schemas = _render_all(sources, chosen, numbers, definer)
		patches = [patch_of(sc.path, sources[sc.path], sc.text)
			   for sc in schemas if sc.text != sources[sc.path]]
		s.put_series(tree, patches)
		texts.update((sc.path, sc.text) for sc in schemas)
		return schemas, patches

	def key(obj: str) -> Tuple[bytes, ...]:
		return tuple(texts[p] for p in sorted(texts)
			     if not p.endswith('.c') or tce.object_of(p) == obj)

	def compile_errors(objs: Sequence[str]) -> str:
		todo = [o for o in objs if clean.get(o) != key(o)]
		with concurrent.futures.ThreadPoolExecutor(2) as pool:
			done = list(pool.map(lambda o: tce.compiles(build_dir, o),
					     todo))
		for o, (ok, _) in zip(todo, done):
			if ok:
				clean[o] = key(o)
		return '\n'.join(why for ok, why in done if not ok)

	for attempt in range(ATTEMPTS):
		schemas, patches = put(held)
		for sc in schemas:
			refused += sc.refused
			why.update((m.id, 'a preprocessor line in its region')
				   for m in sc.refused)
		gone = {m.id for sc in schemas for m in sc.refused}
		held = [m for m in held if m.id not in gone]
		progress.progress(f'mutant schemata: compiling {len(held)} '
				  'mutants into one kernel')
		output = compile_errors(units(sources))
		columns = bool(output)
		if not output:
			seconds = runner.make(tree.src, build_dir,
					      dataclasses.replace(opts, quiet=True), log)
			if seconds is not None:
				numbers_held = {n: m for sc in schemas
						for n, m in sc.numbers.items()}
				_write_why(log, why)
				return Built(numbers_held, patches, refused, seconds,
					     why)
			output = log.read_text(errors='replace')
		blame = blamed(output, schemas, sources, columns)
		ids = {n: m.id for sc in schemas for n, m in sc.numbers.items()}
		# Of the mutants on a line an error names, those that can give
		# an expression another type (an argument for a call, two
		# arguments swapped) are the likely culprits: they go first,
		# and the others only if the error stays.
		on_lines = {ids[n] for n in blame.lines}
		retyped = {i for i in on_lines if i.split(':')[3] in _RETYPING}
		out_ids = {ids[n] for n in blame.own} | (retyped or on_lines)
		first = next((line for line in _ANSI.sub('', output).splitlines()
			      if 'error' in line), '').strip()
		why.update((i, f'the compiler blames it: {first}')
			   for i in out_ids)
		files = blame.files
		for path in sorted(files):
			# No line of a region named: find the culprits by halves.
			others = [m for m in held if m.path != path]
			objs = units(sources) if tce.object_of(path) is None \
				else [str(tce.object_of(path))]

			def compiles(ms: Sequence[mutagen.Mutant]) -> bool:
				put(others + list(ms))
				return not compile_errors(objs)
			progress.progress(f'mutant schemata: {path} does not compile;'
					  ' looking for the mutants at fault')
			found = {m.id for m in _bisect(
				[m for m in held if m.path == path], compiles)}
			why.update((i, f'the compiler blames {path} as a whole: '
				    f'{first}; bisected') for i in found)
			out_ids |= found
		if not out_ids:
			# Nothing to blame: build them all alone.
			out_ids = {m.id for m in held}
			why.update((i, f'the build fails: {first}') for i in out_ids)
		refused += [m for m in held if m.id in out_ids]
		held = [m for m in held if m.id not in out_ids]
		if not held:
			break
	put([])
	why.update((m.id, f'no schema compiled in {ATTEMPTS} attempts')
		   for m in held)
	_write_why(log, why)
	return Built({}, [], refused + held, why=why)


def _write_why(log: Path, why: Dict[str, str]) -> None:
	"""Beside the build's log: each mutant left out, and why."""
	log.with_suffix('.refused').write_text(''.join(
		f'{i}: {w}\n' for i, w in sorted(why.items())))


T = TypeVar('T')


def _bisect(mutants: Sequence[T], compiles: Callable[[Sequence[T]], bool],
	    failed: bool = True) -> List[T]:
	"""The mutants that keep a unit from compiling (with all of them, it
	did not if failed), found by halving; all of them if the halves
	compile apart but not together."""
	if not failed and compiles(mutants):
		return []
	if len(mutants) <= 1:
		return list(mutants)
	half = len(mutants) // 2
	bad = _bisect(mutants[:half], compiles, False) + \
		_bisect(mutants[half:], compiles, False)
	return bad or list(mutants)


@dataclasses.dataclass(frozen=True)
class Boot:
	"""What one boot of a schema kernel with one mutant live said."""
	# 'failed' (a test failed or the kernel complained), 'crashed' (it
	# died before the end), 'timeout', 'passed', or 'no tests' (it ran
	# none: died at boot).
	verdict: str
	tests: Tuple[str, ...] = ()
	detail: str = ''
	seconds: float = 0.0
	# The host's CPU time the kernel used.
	cpu: float = 0.0


_NOT_OK = re.compile(r'^\s*not ok \d+ (?:- )?([^#]*)')
# What says a test will fail, before its "not ok" line: a failed
# expectation or assertion (the test may hang after it, holding what
# the mutant broke), or the kernel dying.
_FAILING = re.compile(r'^\s*# (\S+): (?:EXPECTATION|ASSERTION) FAILED at |'
		      r'Kernel panic - not syncing')


def boot_uml(build_dir: Path, opts: runner.RunOptions, number: int,
	     timeout: float, console: Path,
	     cpu_limit: Optional[float] = None) -> Boot:
	"""Boots the UML kernel of build_dir with mutant number live and runs
	the suites of opts.filter_glob; stops it at the first failed test or
	kernel complaint (the mutant is killed: the rest cannot change
	that), after timeout seconds, or once it has used cpu_limit seconds
	of the host's CPU (a mutant that loops: what load on the machine
	cannot stretch, where the wall clock's timeout has to allow for it).
	The console is kept in console. A test the port's list says fails
	here (opts.failing_here) does not stop it: the boot runs to its end,
	and its cases are held to the list then (runner.held_to_list())."""
	cmd = runner.uml_command(build_dir, dataclasses.replace(
		opts, kernel_args=[*opts.kernel_args, f'{SWITCH}={number}']))
	started = time.monotonic()
	lines: List[str] = []
	verdict = ''
	tests = False
	held = bool(opts.failing_here)
	stopped: List[str] = []
	with open(console, 'w') as log:
		proc = subprocess.Popen(cmd, cwd=build_dir, stdin=subprocess.DEVNULL,
					stdout=subprocess.PIPE,
					stderr=subprocess.STDOUT, text=True,
					errors='replace', start_new_session=True)
		assert proc.stdout is not None
		done = threading.Event()
		watchdog = threading.Thread(target=_watch, args=(
			proc.pid, started + timeout, cpu_limit, done, stopped),
					    daemon=True)
		try:
			watchdog.start()
			for line in proc.stdout:
				log.write(line)
				lines.append(line)
				text = _strip_time(line)
				# What the kernel says before the tests start is
				# not theirs (runner.kernel_complaints()).
				tests = tests or 'TAP version' in text
				if tests and (runner.kernel_complaints(text) or
					      not held and (_NOT_OK.match(text) or
							    _FAILING.search(text))):
					verdict = 'failed'
					break
		finally:
			# The watchdog is done before the kernel is reaped, so
			# it never signals a pid that may be another's by then;
			# reaped by _reap() alone (not Popen.poll()), for its
			# CPU time: until then the group is there to kill.
			done.set()
			if watchdog.ident is not None:
				watchdog.join()
			try:
				_kill_group(proc.pid)
			finally:
				cpu = _reap(proc)
	seconds = time.monotonic() - started
	kl = ktap.ktap_lines(''.join(lines))
	if verdict == 'failed':
		text = _strip_time(lines[-1])
		m = _NOT_OK.match(text) or _FAILING.search(text)
		name = m.group(1) if m and m.group(1) else ''
		return Boot('failed', (name.strip(),) if name else (),
			    text.strip(), seconds, cpu)
	if stopped:
		return Boot('timeout', detail=stopped[0], seconds=seconds, cpu=cpu)
	if not kl:
		return Boot('no tests', seconds=seconds, cpu=cpu)
	if not ktap.complete(kl):
		done_tests = ktap.finished_tests(kl)
		return Boot('crashed', detail='the kernel died after ' +
			    (done_tests[-1] if done_tests else 'no test'),
			    seconds=seconds, cpu=cpu)
	failed = tuple(c.name for c in runner.held_to_list(
		_cases(kl), opts.failing_here) if c.status == runner.Status.FAIL
	) if held else ()
	if failed:
		return Boot('failed', failed, f'{failed[0]} failed', seconds, cpu)
	return Boot('passed', seconds=seconds, cpu=cpu)


# How often boot_uml()'s watchdog looks at the kernel's clock and CPU.
_WATCH_EVERY = 0.05


def _watch(pid: int, deadline: float, cpu_limit: Optional[float],
	   done: threading.Event, stopped: List[str]) -> None:
	"""Kills the process group of pid (a UML kernel: one host process,
	a thread a CPU) at deadline (time.monotonic()'s) or once it has
	used cpu_limit seconds of CPU, saying which in stopped; returns
	when done is set first."""
	started = time.monotonic()
	while not done.wait(_WATCH_EVERY):
		now = time.monotonic()
		if now >= deadline:
			stopped.append(f'stopped after {now - started:.0f} s')
			break
		used = _cpu_seconds(pid) if cpu_limit is not None else None
		if used is not None and cpu_limit is not None and \
		   used >= cpu_limit:
			stopped.append(f'stopped after {used:.1f} s of CPU time')
			break
	else:
		return
	# Not yet reaped: boot_uml() waits for this thread first.
	_kill_group(pid)


def _kill_group(pid: int) -> None:
	"""Kills the process group pid leads (started with
	start_new_session), if any of it is there."""
	try:
		os.killpg(pid, signal.SIGKILL)
	except ProcessLookupError:
		pass


_CLOCK_TICKS = os.sysconf('SC_CLK_TCK')


def _cpu_seconds(pid: int) -> Optional[float]:
	"""The CPU time a running process has used, as wait4() will count
	it: user and system, of all its threads and of the children it has
	reaped (UML's host processes of each mm), from /proc; None if it
	cannot be read."""
	try:
		stat = Path(f'/proc/{pid}/stat').read_bytes()
		# After the command's ')': state is field 3; utime, stime,
		# cutime and cstime are fields 14 to 17.
		fields = stat.rsplit(b')', 1)[1].split()
		return sum(int(f) for f in fields[11:15]) / _CLOCK_TICKS
	except (OSError, IndexError, ValueError):
		return None


def _reap(proc: 'subprocess.Popen[str]') -> float:
	"""Waits for proc and returns the CPU time it used (user and system,
	its threads too)."""
	_, status, usage = os.wait4(proc.pid, 0)
	proc.returncode = os.waitstatus_to_exitcode(status)
	return usage.ru_utime + usage.ru_stime


_PRINTK_TIME = re.compile(r'^\[\s*\d+\.\d+\] ?')


def _strip_time(line: str) -> str:
	return _PRINTK_TIME.sub('', line)


# Hand-written mutants (kernel/mutants/) are patches, which may add and
# remove lines: each is held as a copy of every function it changes,
# which the original calls first thing when its number is live.


def _declarator_name(fn: object) -> object:
	"""The identifier node that names a function definition."""
	d = fn.child_by_field_name('declarator')  # type: ignore[attr-defined]
	while d is not None and d.type != 'identifier':
		d = d.child_by_field_name('declarator')
	return d


def _call_of(fn: object, name: str) -> Optional[str]:
	"""A call of name with fn's parameters, as fn's body would make it,
	returning its value unless fn returns void; None if fn's parameters
	cannot be passed on (a variadic function)."""
	decl = fn.child_by_field_name('declarator')  # type: ignore[attr-defined]
	while decl is not None and decl.type != 'function_declarator':
		decl = decl.child_by_field_name('declarator')
	if decl is None:
		return None
	args: List[str] = []
	for p in decl.child_by_field_name('parameters').named_children:
		if p.type == 'variadic_parameter':
			return None
		if p.type != 'parameter_declaration':
			continue
		d = p.child_by_field_name('declarator')
		if d is None:
			# (void)
			continue
		while d is not None and d.type != 'identifier':
			d = d.child_by_field_name('declarator')
		if d is None:
			return None
		args.append(d.text.decode())
	call = f'{name}({", ".join(args)})'
	kind = fn.child_by_field_name('type')  # type: ignore[attr-defined]
	void = kind is not None and kind.text == b'void' and \
		fn.child_by_field_name('declarator').type == 'function_declarator'  # type: ignore[attr-defined]
	return f'{{ {call}; return; }}' if void else f'return {call};'


def _outside_functions(source: bytes) -> bytes:
	"""source without the text of its function definitions."""
	defs = sorted((fn.start_byte, fn.end_byte)
		      for fns in mutagen.functions(source).values() for fn in fns)
	out, at = [], 0
	for start, end in defs:
		out.append(source[at:start])
		at = end
	out.append(source[at:])
	return b''.join(out)


def functions_schema(source: bytes, mutated: Dict[int, bytes],
		     define: bool = False) -> Tuple[bytes, List[int]]:
	"""source with each mutated copy of it (by number) held as copies of
	the functions it changes: each original calls its copy first thing
	when the copy's number is live. Returns the text and the numbers it
	could not hold: a copy that changes more than function bodies, or
	a function whose parameters cannot be passed on."""
	orig = mutagen.functions(source)
	outside = _outside_functions(source)
	# Byte offset -> text to insert there.
	inserts: Dict[int, List[bytes]] = {}
	refused: List[int] = []
	for n, text in sorted(mutated.items()):
		mut = mutagen.functions(text)
		if _outside_functions(text) != outside or \
		   {k: len(v) for k, v in mut.items()} != \
		   {k: len(v) for k, v in orig.items()}:
			refused.append(n)
			continue
		changes = [(o, m) for name in orig
			   for o, m in zip(orig[name], mut[name]) if o.text != m.text]
		adds: Dict[int, List[bytes]] = {}
		for o, m in changes:
			name = _declarator_name(o).text.decode()  # type: ignore[attr-defined]
			copy = f'{name}__mm_kunit_mutant_{n}'
			call = _call_of(o, copy)
			if call is None:
				break
			ident = _declarator_name(m)
			body = m.child_by_field_name('body')
			head = text[m.start_byte:body.start_byte]
			at = ident.start_byte - m.start_byte  # type: ignore[attr-defined]
			head = head[:at] + copy.encode() + head[at + len(name):]
			proto = (flat(head) or head).strip() + b';'
			definition = head + text[body.start_byte:m.end_byte]
			start = o.start_byte
			adds.setdefault(start, []).append(
				DECLARATION.encode() + proto + b'\n')
			brace = o.child_by_field_name('body').start_byte + 1
			adds.setdefault(brace, []).append(
				b' if (%s == %d) %s' % (SWITCH.encode(), n,
							call.encode()))
			adds.setdefault(o.end_byte, []).append(b'\n\n' + definition)
		else:
			for at, texts in adds.items():
				inserts.setdefault(at, []).extend(texts)
			continue
		refused.append(n)
	out, at = [], 0
	for offset in sorted(inserts):
		out += [source[at:offset], *inserts[offset]]
		at = offset
	out.append(source[at:])
	result = b''.join(out)
	if define:
		result += DEFINITION.encode()
	return result, refused


def boot_all_tests(build_dir: Path, opts: runner.RunOptions, number: int,
		   timeout: float, console: Path,
		   one_cpu: Sequence[str] = ()) -> Optional[List[runner.CaseResult]]:
	"""Boots the UML kernel of build_dir with mutant number live and runs
	every test of opts.filter_glob to its end: each test case's result,
	or None if a boot did not get to the end (crashed, or stopped after
	timeout seconds).

	With one_cpu (the arch's arguments for one CPU), the first boot has
	them: every suite runs in less than half the time it takes on two
	(UML's SMP). Each test that skipped there for want of CPUs boots
	again alone, as opts boots it (its console beside console's), and
	its results stand for the skip."""
	first = dataclasses.replace(opts, kernel_args=[*opts.kernel_args,
						       *one_cpu])
	cases = _boot_once(build_dir, first, number, timeout, console)
	if not one_cpu or cases is None:
		return cases
	for n, test in enumerate(runner.needing_cpus(cases), start=1):
		again = _boot_once(
			build_dir, dataclasses.replace(opts, filter_glob=test),
			number, timeout,
			console.with_name(f'{console.stem}-cpus-{n}{console.suffix}'))
		if again is None:
			return None
		cases = runner.replaced(cases, test, again)
	return cases


def _boot_once(build_dir: Path, opts: runner.RunOptions, number: int,
	       timeout: float, console: Path) -> Optional[List[runner.CaseResult]]:
	"""One boot of boot_all_tests()."""
	cmd = runner.uml_command(build_dir, dataclasses.replace(
		opts, kernel_args=[*opts.kernel_args, f'{SWITCH}={number}']))
	with open(console, 'w') as log:
		try:
			subprocess.run(cmd, cwd=build_dir, stdin=subprocess.DEVNULL,
				       stdout=log, stderr=subprocess.STDOUT,
				       timeout=timeout, start_new_session=True)
		except subprocess.TimeoutExpired:
			return None
	cases = cases_of(console)
	return None if cases is None else runner.held_to_list(cases,
							      opts.failing_here)


def cases_of(console: Path) -> Optional[List[runner.CaseResult]]:
	"""Each test case's result in a kernel's console, or None if the
	kernel did not get to the end of its tests."""
	lines = ktap.ktap_lines(console.read_text(errors='replace'))
	if not lines or not ktap.complete(lines):
		return None
	return _cases(lines)


def _cases(lines: Sequence[ktap.KtapLine]) -> List[runner.CaseResult]:
	"""The test cases of the KTAP lines of a boot that ran to the end."""
	status = {True: runner.Status.PASS, False: runner.Status.FAIL}
	return [runner.CaseResult(
		c.name, runner.Status.SKIP if c.skip_reason is not None
		else status[c.ok], c.log, c.duration, c.skip_reason)
		for c in ktap.ktap_cases(lines)]


def build_functions(s: Session, tree: trees.PreparedTree,
		    base: Dict[str, bytes], mutated: Dict[str, Dict[int, bytes]],
		    definer: str, log: Path) -> Tuple[List[ov.Patch], Set[int]]:
	"""Puts the function schemata of the mutated files (file -> number ->
	its text with that mutant) onto tree and builds its kernel; the
	patches, and the numbers it could not hold (found by halving when a
	unit does not compile)."""
	build_dir = tree.build_dir(s.build_key)
	files = dict(mutated)
	files.setdefault(definer, {})
	refused: Set[int] = set()

	def put(out: Set[int]) -> List[ov.Patch]:
		patches = []
		for path, muts in sorted(files.items()):
			text, no = functions_schema(
				base[path], {n: t for n, t in muts.items()
					     if n not in out}, define=path == definer)
			refused.update(no)
			if text != base[path]:
				patches.append(patch_of(path, base[path], text))
		s.put_series(tree, patches)
		return patches

	objs = units({p: b'' for p in files})
	held = sorted({n for muts in files.values() for n in muts})
	if not all(has_command(build_dir, o) for o in objs):
		return [], set(held)

	def compiles(chosen: Sequence[int]) -> bool:
		put(set(held) - set(chosen))
		return all(tce.compiles(build_dir, o)[0] for o in objs)

	if not compiles(held):
		progress.progress('hand-written mutants in one kernel: a unit '
				  'does not compile; looking for the mutants at '
				  'fault')
		refused.update(_bisect(held, compiles))
	patches = put(refused)
	if runner.make(tree.src, build_dir, dataclasses.replace(
			s.run_options(), quiet=True), log) is None:
		put(set(held))
		return [], set(held)
	return patches, refused
