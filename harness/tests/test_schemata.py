# SPDX-License-Identifier: GPL-2.0
"""Mutant schemata (schemata.py): many mutants in one program, each
chosen by a number at run time. The test that matters compiles a
schema with the host's gcc and runs every mutant it holds against the
same mutant compiled alone: each must print what its own program
prints, and number 0 what the original prints."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
import threading
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

pytest.importorskip('tree_sitter_c')

from mmkunit import mutagen, runner, schemata  # noqa: E402

# A function with every operator's node, nested expressions and
# statements side by side (the order operator's overlapping pairs).
PROGRAM = textwrap.dedent('''\
	// SPDX-License-Identifier: GPL-2.0
	#include <stdio.h>
	#include <stdlib.h>

	#define min(a, b) ((a) < (b) ? (a) : (b))

	static int twice(int a)
	{
		return 2 * a;
	}

	static long pinned(int a, int b, unsigned int u)
	{
		long x = min(a, b);
		int y = 3, i;
		/* A comment
		   over lines */
		if (x < 10 && a != b)
			x++;
		y = y + twice(a) -
			b; // a comment at the end of a line
		x += y;
		y = twice(b);
		x = x * 4 + (long)(u >> 2);
		if (!(u & 1))
			return x - 1;
		for (i = 0; i < 4 && y > 0; i++)
			y -= 3;
		return x + y + (u < 0 ? 5 : 6);
	}

	int main(int argc, char **argv)
	{
		int a, b;

		for (a = -3; a < 14; a += 4)
			for (b = -2; b < 13; b += 5)
				printf("%ld ", pinned(a, b, (unsigned int)(a * 7 + b)));
		printf("\\n");
		return 0;
	}
	''').encode()

DEFINE = b'unsigned long mm_kunit_mutant;\n'


def _build(tmp_path: Path, name: str, source: bytes) -> Path:
	c = tmp_path / f'{name}.c'
	c.write_bytes(source)
	exe = tmp_path / name
	cc = subprocess.run(['gcc', '-O1', '-w', '-fwrapv', '-o', str(exe),
			     str(c)], capture_output=True, text=True)
	assert cc.returncode == 0, cc.stderr
	return exe


def _out(exe: Path, arg: str = '') -> str:
	"""What exe prints (with arg), or that it ran for ever."""
	try:
		return subprocess.run([str(exe), arg] if arg else [str(exe)],
				      capture_output=True, text=True,
				      timeout=5).stdout
	except subprocess.TimeoutExpired:
		return 'timed out'



def _schema_main(text: bytes) -> bytes:
	"""The schema with the switch set from argv[1], as the kernel's early
	parameter sets it."""
	return text.replace(b'int main(int argc, char **argv)\n{\n',
			    b'int main(int argc, char **argv)\n{\n'
			    b'\tmm_kunit_mutant = argc > 1 ? '
			    b'strtoul(argv[1], 0, 0) : 0;\n') + DEFINE


@pytest.mark.skipif(not shutil.which('gcc'), reason='needs gcc')
def test_each_mutant_of_a_schema_does_what_it_does_alone(
		tmp_path: Path) -> None:
	mutants = mutagen.generate(PROGRAM, 'p.c', 'pinned')
	assert {m.operator.split(':')[0] for m in mutants} >= {
		'ror', 'aor', 'bor', 'lor', 'negate', 'const', 'delete',
		'return', 'arg', 'order'}
	numbers = schemata.numbering(mutants)
	layers = schemata.layers(mutants)
	# Adjacent statement pairs overlap: they need a second layer.
	assert len(layers) == 2
	assert sum(map(len, layers)) == len(mutants)
	original = _out(_build(tmp_path, 'original', PROGRAM))
	for i, layer in enumerate(layers):
		sc = schemata.render(PROGRAM, 'p.c', layer, numbers)
		assert not sc.refused
		# No line moved: a compiler's line numbers (and __LINE__)
		# are the original's.
		assert sc.text.count(b'\n') == PROGRAM.count(b'\n')
		exe = _build(tmp_path, f'layer{i}', _schema_main(sc.text))
		assert _out(exe) == original
		for n, m in sc.numbers.items():
			alone = _out(_build(tmp_path, 'alone', m.apply(PROGRAM)))
			assert _out(exe, str(n)) == alone, m.id


def test_layers_keep_nested_regions_together() -> None:
	def m(start: int, end: int, op: str = 'delete') -> mutagen.Mutant:
		return mutagen.Mutant('p.c', 'f', 1, 1, op, start, end, '', '',
				      start, end, True)
	inner, outer, pair1, pair2, apart = (m(2, 4), m(0, 10), m(0, 20, 'order'),
					     m(10, 30, 'order'), m(40, 50))
	layers = schemata.layers([inner, outer, pair1, pair2, apart])
	assert layers == [[pair1, outer, inner, apart], [pair2]]


def test_flat() -> None:
	assert schemata.flat(b'a(x, /* y\n z */ "//s",\n\t\'/\') // c\n') == \
		b'a(x,   "//s", \t\'/\')   '
	assert schemata.flat(b'a(x,\n#ifdef C\n y\n#endif\n )') is None


def test_a_region_with_a_preprocessor_line_is_refused() -> None:
	"""No line can hold a preprocessor line: a mutant whose region has
	one is left to be built alone. (The grammar reads code with one
	inside an expression as an error, where mutagen.py makes no
	mutant; this is the guard behind that.)"""
	source = b'int f(int a)\n{\n\treturn g(a,\n#ifdef X\n1\n#endif\n);\n}\n'
	start = source.index(b'g(a')
	end = source.index(b');') + 1
	m = mutagen.Mutant('p.c', 'f', 3, 9, 'arg:0', start, end,
			   source[start:end].decode(), '(a)', start, end)
	sc = schemata.render(source, 'p.c', [m], {m.id: 1})
	assert sc.refused == [m] and not sc.numbers
	assert sc.text == source


def test_declaring_statements_are_not_schema_material() -> None:
	source = b'static void pinned(void)\n{\n\tDEFINE_READAHEAD(r, 1);\n' \
		 b'\tXA_STATE(xas, 0, 0);\n\tfoo(&r);\n}\n'
	found = {m.original.split('(')[0]: schemata.declares(m)
		 for m in mutagen.generate(source, 'p.c', 'pinned')
		 if m.operator == 'delete'}
	assert found == {'DEFINE_READAHEAD': True, 'XA_STATE': True,
			 'foo': False}


def test_blamed_names_the_mutants_of_an_error_and_its_notes() -> None:
	source = b'int f(int a)\n{\n\treturn a +\n\t\t1;\n}\n\n\nint g;\n'
	mutants = mutagen.generate(source, 'mm/x.c', 'f')
	numbers = schemata.numbering(mutants)
	sc = schemata.render(source, 'mm/x.c', mutants, numbers)
	src = {'mm/x.c': source}
	# Line 3 holds the regions of the return and the addition, line 4
	# those and the constant's.
	line_3 = {n for n, m in sc.numbers.items() if m.line == 3}
	line_4 = set(sc.numbers)
	assert line_3 and line_3 < line_4
	# A warning and its note blame nothing; an error and its notes do
	# (not "inlined from" lines: they name callers).
	blame = schemata.blamed(
		'/t/src/mm/x.c:4:3: warning: w\n/t/src/mm/x.c:4:3: note: n\n',
		[sc], src)
	assert (blame.own, blame.lines, blame.files) == (set(), set(), set())
	blame = schemata.blamed(
		'\x1b[01m/t/src/mm/x.c:3:3: error: e\x1b[m\n'
		'    inlined from g at /t/src/mm/x.c:4:1,\n', [sc], src)
	assert (blame.own, blame.lines, blame.files) == (set(), line_3, set())
	blame = schemata.blamed('include/y.h:9:1: error: e\n'
				'mm/x.c:4:5: note: in expansion of macro\n',
				[sc], src)
	assert blame.lines == line_4
	# An error at a line no region holds: the file, to be bisected.
	blame = schemata.blamed('include/y.h:9:1: error: e\n'
				'mm/x.c:8:5: note: in expansion of macro\n',
				[sc], src)
	assert (blame.own, blame.lines, blame.files) == (set(), set(), {'mm/x.c'})
	# With byte columns, an error inside one mutant's own text blames
	# that mutant alone, not its neighbours on the line.
	n = next(n for n, m in sc.numbers.items() if m.line == 4)
	start = sc.spans[n][0]
	line = sc.text.count(b'\n', 0, start) + 1
	column = start - sc.text.rfind(b'\n', 0, start)
	blame = schemata.blamed(f'mm/x.c:{line}:{column}: error: e\n', [sc],
				src, columns=True)
	assert (blame.own, blame.lines) == ({n}, set())


def test_bisect_finds_the_mutants_that_do_not_compile() -> None:
	ms = [mutagen.Mutant('p.c', 'f', i, 1, 'const:0', 0, 1, '', '')
	      for i in range(1, 65)]
	bad = {3, 40}
	tried: List[int] = []

	def compiles(chosen: List[mutagen.Mutant]) -> bool:
		tried.append(len(chosen))
		return not bad & {m.line for m in chosen}
	assert [m.line for m in schemata._bisect(ms, compiles)] == [3, 40]
	# Halving: far fewer compiles than one a mutant.
	assert len(tried) < len(ms) / 2
	# Two that fail only together are given up on whole.
	assert schemata._bisect(ms[:2], lambda c: len(c) < 2) == ms[:2]


def test_suites_glob() -> None:
	assert schemata.suites_glob(['mm_filemap_mmap_miss',
				     'mm_filemap_fault_around',
				     'mm_filemap_mmap_miss']) == 'mm_filemap_*'
	assert schemata.suites_glob(['mm_swap_readahead']) == 'mm_swap_readahead'


def test_the_switch_is_defined_once_and_declared_before_each_function(
		) -> None:
	mutants = mutagen.generate(PROGRAM, 'p.c', 'pinned')
	numbers: Dict[str, int] = schemata.numbering(mutants)
	text = schemata.render(PROGRAM, 'p.c', mutants[:3], numbers,
			       define=True).text
	assert text.count(schemata.DECLARATION.encode()) == 1
	assert text.index(schemata.DECLARATION.encode()) < \
		text.index(b'pinned(int a')
	assert text.endswith(schemata.DEFINITION.encode())
	assert b'early_param("mm_kunit_mutant"' in text


HAND = textwrap.dedent('''\
	#include <stdio.h>
	#include <stdlib.h>

	static int helper(int a)
	{
		return a + 1;
	}

	static void note(int *out, int a)
	{
		*out = a;
	}

	static long pinned(int a, int b)
	{
		long x = helper(a);

		if (x > b)
			x -= b;
		note(&b, 3);
		return x * b;
	}

	int main(int argc, char **argv)
	{
		int a;

		for (a = -3; a < 6; a++)
			printf("%ld ", pinned(a, 2));
		printf("\\n");
		return 0;
	}
	''').encode()


@pytest.mark.skipif(not shutil.which('gcc'), reason='needs gcc')
def test_hand_mutants_as_function_copies_do_what_they_do_alone(
		tmp_path: Path) -> None:
	"""Patches that add and remove lines, in one function or two, each
	held as copies of the functions it changes."""
	edits = {
		1: HAND.replace(b'\tif (x > b)\n\t\tx -= b;\n', b''),
		2: HAND.replace(b'return a + 1;', b'return a;\n\t/* two */'),
		3: HAND.replace(b'*out = a;', b'*out = a + 1;').replace(
			b'x -= b;', b'x -= b + 1;'),
		4: HAND.replace(b'#include <stdlib.h>\n', b''),
	}
	text, refused = schemata.functions_schema(HAND, edits)
	# One changes what is outside the functions: it cannot be held.
	assert refused == [4]
	exe = _build(tmp_path, 'schema', _schema_main(text))
	assert _out(exe) == _out(_build(tmp_path, 'original', HAND))
	for n in (1, 2, 3):
		assert _out(exe, str(n)) == \
			_out(_build(tmp_path, f'alone{n}', edits[n])), n


@pytest.mark.skipif(not shutil.which('gcc'), reason='needs gcc')
def test_an_argument_the_call_cannot_become_does_not_compile_in_a_schema(
		tmp_path: Path) -> None:
	"""A call replaced by an argument the compiler would not convert to
	the call's type (a bool returned as a pointer) does not compile
	alone, so it must not compile in a schema either: there it would be
	run (and killed), built alone it is unviable."""
	source = textwrap.dedent('''\
		#include <stdbool.h>

		static void *make(long a, bool w)
		{
			return w ? (void *)a : NULL;
		}

		void *pinned(long a, bool w)
		{
			return make(a, w);
		}
		''').encode().replace(b'NULL', b'(void *)0')
	(m,) = [m for m in mutagen.generate(source, 'p.c', 'pinned')
		if m.operator == 'arg:1']

	def compiles(name: str, text: bytes) -> bool:
		c = tmp_path / f'{name}.c'
		c.write_bytes(text)
		return subprocess.run(['gcc', '-c', '-o', str(tmp_path / 'x.o'),
				       str(c)], capture_output=True).returncode == 0

	assert compiles('original', source)
	assert not compiles('alone', m.apply(source))
	sc = schemata.render(source, 'p.c', [m], schemata.numbering([m]))
	assert sc.numbers and not compiles('schema', sc.text)


def test_a_test_that_needs_two_cpus_boots_again_on_two(
		two_cpu_uml: Path) -> None:
	"""boot_all_tests() with the arch's one-CPU arguments: every suite
	on one CPU, then the test that skipped for want of CPUs alone, as
	the options boot it; its result stands for the skip."""
	tmp_path = two_cpu_uml
	opts = runner.RunOptions(arch='um', kernel_args=['ncpus=2'])
	cases = schemata.boot_all_tests(tmp_path, opts, 7, 30,
					tmp_path / '7.log', ('ncpus=1',))
	assert cases is not None
	assert [(c.name, c.status) for c in cases] == [
		('s.a', runner.Status.PASS), ('s.b', runner.Status.FAIL)]
	boots = (tmp_path / 'boots').read_text().splitlines()
	assert len(boots) == 2
	assert 'mm_kunit_mutant=7' in boots[0] and 'ncpus=1' in boots[0]
	assert 'kunit.filter_glob=s.b' in boots[1] and \
		'ncpus=1' not in boots[1] and 'mm_kunit_mutant=7' in boots[1]
	assert (tmp_path / '7-cpus-1.log').exists()


# A UML kernel whose mutant 5 loops: it prints that its tests started,
# then uses a CPU until it is killed.
LOOPING_UML = textwrap.dedent('''\
	#!/bin/sh
	echo 'KTAP version 1'
	echo '1..1'
	case "$*" in
	*mm_kunit_mutant=5*) while :; do :; done;;
	esac
	echo 'ok 1 s'
	''')


def test_a_looping_mutant_is_stopped_by_its_cpu_time(tmp_path: Path) -> None:
	"""boot_uml() stops a kernel once it has used cpu_limit seconds of
	CPU, long before the wall clock's timeout, and says so; the same
	kernel with no mutant live passes and reports the little CPU it
	used."""
	linux = tmp_path / 'linux'
	linux.write_text(LOOPING_UML)
	linux.chmod(0o755)
	opts = runner.RunOptions(arch='um')
	threads = threading.active_count()
	none = schemata.boot_uml(tmp_path, opts, 0, 60, tmp_path / '0.log', 0.5)
	assert none.verdict == 'passed'
	assert none.cpu < 0.5
	looped = schemata.boot_uml(tmp_path, opts, 5, 60, tmp_path / '5.log', 0.5)
	assert looped.verdict == 'timeout'
	assert 'of CPU time' in looped.detail
	assert 0.5 <= looped.cpu < 30
	assert looped.seconds < 30
	# No watchdog is left behind.
	assert threading.active_count() == threads


def test_a_sleeping_mutant_is_stopped_by_the_clock(tmp_path: Path) -> None:
	"""A kernel that hangs without using the CPU is stopped at the wall
	clock's timeout."""
	linux = tmp_path / 'linux'
	linux.write_text("#!/bin/sh\necho 'KTAP version 1'\necho '1..1'\n"
			 'exec sleep 60\n')
	linux.chmod(0o755)
	b = schemata.boot_uml(tmp_path, runner.RunOptions(arch='um'), 3, 0.5,
			      tmp_path / '3.log', 10)
	assert b.verdict == 'timeout'
	assert b.detail.startswith('stopped after ') and 'CPU' not in b.detail
	assert b.seconds < 10


# A UML kernel whose suite s has a test a that fails unless mutant 4 is
# live (a row the port's kernel does otherwise), and a test b that
# mutant 6 makes fail.
PORT_UML = textwrap.dedent('''\
	#!/bin/sh
	echo 'KTAP version 1'
	echo '1..1'
	echo '    KTAP version 1'
	echo '    # Subtest: s'
	echo '    1..2'
	case "$*" in
	*mm_kunit_mutant=4*) echo '    ok 1 a';;
	*) echo '    # a: EXPECTATION FAILED at x.h:1'
	   echo '    not ok 1 a';;
	esac
	case "$*" in
	*mm_kunit_mutant=6*) echo '    # b: EXPECTATION FAILED at x.h:2'
	   echo '    not ok 2 b'
	   echo 'not ok 1 s';;
	*) echo '    ok 2 b'
	   echo 'not ok 1 s';;
	esac
	''')


def test_a_test_the_ports_list_says_fails_does_not_stop_a_boot(
		tmp_path: Path) -> None:
	"""On a port, a test its list says fails there (failing_here) does
	not stop boot_uml() at its failure: the boot runs to the end, and
	fails only for another test, or for that one passing; without the
	list, its failure stops the boot. boot_all_tests() holds its cases
	to the list too."""
	linux = tmp_path / 'linux'
	linux.write_text(PORT_UML)
	linux.chmod(0o755)
	held = runner.RunOptions(arch='um', failing_here=(('s.a', 'by design'),))

	def boot(opts: runner.RunOptions, n: int) -> schemata.Boot:
		return schemata.boot_uml(tmp_path, opts, n, 30,
					 tmp_path / f'{n}.log')
	def verdict(opts: runner.RunOptions, n: int) -> Tuple[str, Tuple[str, ...]]:
		b = boot(opts, n)
		return b.verdict, b.tests
	assert verdict(held, 0) == ('passed', ())
	assert verdict(held, 6) == ('failed', ('s.b',))
	assert verdict(held, 4) == ('failed', ('s.a',))
	unheld = boot(runner.RunOptions(arch='um'), 0)
	assert unheld.verdict == 'failed' and 'a' in unheld.detail
	cases = schemata.boot_all_tests(tmp_path, held, 0, 30,
					tmp_path / 'all.log')
	assert cases is not None
	assert [(c.name, c.status) for c in cases] == [
		('s.a', runner.Status.SKIP), ('s.b', runner.Status.PASS)]
	assert cases[0].skip_reason == \
		'fails on this kernel as its list says: by design'
