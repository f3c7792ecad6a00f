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
		    Tuple)

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
			# the call's type instead.
			text = b'(__typeof__(%s))(%s)' % (plain, text)
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


def blamed(output: str, schemas: Sequence[Schema],
	   sources: Dict[str, bytes],
	   columns: bool = False) -> Tuple[Set[int], Set[str]]:
	"""What a failed build's output blames: the numbers of the mutants
	whose regions hold a line its errors (and their notes) name; if
	none do, the files of the schemata they name (a function the
	compiler found wrong after a choice was inlined into it, say).
	With columns (byte columns: tce.compiles()), an error inside a
	mutant's own text blames that mutant alone."""
	numbers: Set[int] = set()
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
		numbers |= {own} if own is not None else \
			{n for n, (first, last) in spans[path]
			 if first <= line <= last}
	return numbers, set() if numbers else files


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


# A mutant's boot is stopped after TIMEOUT_MULTIPLIER (generated.py)
# times what its suites took with no mutant, and no sooner than this
# many seconds: a loaded machine may run a boot a few times slower.
MIN_TIMEOUT = 10.0

# A layer's build is tried this many times, each without the mutants the
# last one's errors blamed, before the rest of the layer is built alone.
ATTEMPTS = 6


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
	refused = [m for m in mutants if declares(m)]
	held = [m for m in mutants if not declares(m)]
	why = {m.id: 'it declares a name' for m in refused}

	def put(chosen: Sequence[mutagen.Mutant]) -> Tuple[List[Schema],
							     List[ov.Patch]]:
		schemas = _render_all(sources, chosen, numbers, definer)
		patches = [patch_of(sc.path, sources[sc.path], sc.text)
			   for sc in schemas if sc.text != sources[sc.path]]
		s.put_series(tree, patches)
		return schemas, patches

	def compile_errors(objs: Sequence[str]) -> str:
		with concurrent.futures.ThreadPoolExecutor(2) as pool:
			done = list(pool.map(lambda o: tce.compiles(build_dir, o),
					     objs))
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
		bad, files = blamed(output, schemas, sources, columns)
		out_ids = {m.id for sc in schemas for m in sc.numbers.values()
			   if numbers[m.id] in bad}
		first = next((line for line in _ANSI.sub('', output).splitlines()
			      if 'error' in line), '').strip()
		why.update((i, f'the compiler blames its lines: {first}')
			   for i in out_ids)
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


def _bisect(mutants: Sequence[mutagen.Mutant],
	    compiles: Callable[[Sequence[mutagen.Mutant]], bool],
	    failed: bool = True) -> List[mutagen.Mutant]:
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


_NOT_OK = re.compile(r'^\s*not ok \d+ (?:- )?([^#]*)')
# What says a test will fail, before its "not ok" line: a failed
# expectation or assertion (the test may hang after it, holding what
# the mutant broke), or the kernel dying.
_FAILING = re.compile(r'^\s*# (\S+): (?:EXPECTATION|ASSERTION) FAILED at |'
		      r'Kernel panic - not syncing')


def boot_uml(build_dir: Path, opts: runner.RunOptions, number: int,
	     timeout: float, console: Path) -> Boot:
	"""Boots the UML kernel of build_dir with mutant number live and runs
	the suites of opts.filter_glob; stops it at the first failed test or
	kernel complaint (the mutant is killed: the rest cannot change
	that), or after timeout seconds. The console is kept in console."""
	cmd = runner.uml_command(build_dir, dataclasses.replace(
		opts, kernel_args=[*opts.kernel_args, f'{SWITCH}={number}']))
	started = time.monotonic()
	lines: List[str] = []
	verdict = ''
	tests = False
	with open(console, 'w') as log:
		proc = subprocess.Popen(cmd, cwd=build_dir, stdin=subprocess.DEVNULL,
					stdout=subprocess.PIPE,
					stderr=subprocess.STDOUT, text=True,
					errors='replace', start_new_session=True)
		assert proc.stdout is not None
		timer = threading.Timer(timeout, lambda: os.killpg(
			proc.pid, signal.SIGKILL))
		timer.start()
		try:
			for line in proc.stdout:
				log.write(line)
				lines.append(line)
				text = _strip_time(line)
				# What the kernel says before the tests start is
				# not theirs (runner.kernel_complaints()).
				tests = tests or 'TAP version' in text
				if tests and (_NOT_OK.match(text) or
					      _FAILING.search(text) or
					      runner.kernel_complaints(text)):
					verdict = 'failed'
					break
		finally:
			timer.cancel()
			if proc.poll() is None:
				try:
					os.killpg(proc.pid, signal.SIGKILL)
				except ProcessLookupError:
					pass
			proc.wait()
	seconds = time.monotonic() - started
	kl = ktap.ktap_lines(''.join(lines))
	if verdict == 'failed':
		text = _strip_time(lines[-1])
		m = _NOT_OK.match(text) or _FAILING.search(text)
		name = m.group(1) if m and m.group(1) else ''
		return Boot('failed', (name.strip(),) if name else (),
			    text.strip(), seconds)
	if seconds >= timeout:
		return Boot('timeout', detail=f'stopped after {timeout:.0f} s',
			    seconds=seconds)
	if not kl:
		return Boot('no tests', seconds=seconds)
	if not ktap.complete(kl):
		done = ktap.finished_tests(kl)
		return Boot('crashed', detail='the kernel died after ' +
			    (done[-1] if done else 'no test'), seconds=seconds)
	return Boot('passed', seconds=seconds)


_PRINTK_TIME = re.compile(r'^\[\s*\d+\.\d+\] ?')


def _strip_time(line: str) -> str:
	return _PRINTK_TIME.sub('', line)
