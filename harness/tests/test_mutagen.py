# SPDX-License-Identifier: GPL-2.0
"""Mutants generated from C source (mutagen.py), with tree-sitter's C
grammar (installed by `./run_kunit.sh selftest`)."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path
from typing import List

import pytest

pytest.importorskip('tree_sitter_c')

from mmkunit import kernels, mutagen, session  # noqa: E402

# The overlay of the kernel the harness builds by default.
DEFAULT_OVERLAY = session.overlay_dir(kernels.DEFAULT)

SOURCE = textwrap.dedent('''\
	static int other(int a)
	{
		return a;
	}

	static struct file *pinned(struct vm_fault *vmf, unsigned int a,
				   unsigned int b)
	{
		unsigned int miss = READ_ONCE(vmf->miss);

		if (miss < 100 && a)
			miss++;
		vmf->miss = miss + 2;
		helper(a, b);
		if (!b)
			return NULL;
		return vmf->file;
	}
	''').encode()


# Calls used as values, calls whose value is thrown away, and statements
# side by side: the arg and order operators' cases.
CALLS = textwrap.dedent('''\
	static unsigned long pinned(struct vm_fault *vmf, unsigned long a,
				    unsigned long b)
	{
		unsigned long x = min(a, b);
		unsigned long y = 0;
		char buf[8];

		if (READ_ONCE(vmf->flags))
			y = max(x, foo(bar(a)));
		helper(a, b);
		(void)helper(b, a);
		y = snprintf(buf, 8, "%lu", a);
		y = clamp(x,
			  a, b);
		x = min_t(unsigned long, a, b) + (pgoff_t)(y);
		if (unlikely(!tick()))
			return 0;
		list_for_each_entry(pos, head, lru)
			x++;
		y = combine(a +
			    b, x);
		x++;
		helper(x, a);
		y = x;
		y = x;
		vmf->b = a; vmf->c = b;
		vmf->d = b; /* why */
		vmf->e = a;
		vmf->f = IS_ENABLED(CONFIG_X);
		if (y) {
			folio_unlock(vmf->folio);
			folio_put(vmf->folio);
		}
		return max(x, y);
	}
	''').encode()

# The mutants of CALLS that the other operators make, as they made them
# before arg and order were added: id:original->replacement.
CALLS_EXISTING = [
	'pinned:4:24:swap:a, b->b, a',
	'pinned:5:20:const:1:0->1',
	'pinned:6:11:const:+1:8->9',
	'pinned:6:11:const:-1:8->7',
	'pinned:6:11:const:0:8->0',
	'pinned:6:11:const:1:8->1',
	'pinned:8:5:negate:(READ_ONCE(vmf->flags))->(!(READ_ONCE(vmf->flags)))',
	'pinned:9:3:delete:y = max(x, foo(bar(a)));->;',
	'pinned:10:2:delete:helper(a, b);->;',
	'pinned:10:9:swap:a, b->b, a',
	'pinned:11:15:swap:b, a->a, b',
	'pinned:12:2:delete:y = snprintf(buf, 8, "%lu", a);->;',
	'pinned:12:20:const:+1:8->9',
	'pinned:12:20:const:-1:8->7',
	'pinned:12:20:const:0:8->0',
	'pinned:12:20:const:1:8->1',
	'pinned:13:2:delete:y = clamp(x,\n\t\t  a, b);->;\n',
	'pinned:13:12:swap:x,\n\t\t  a->a,\n\t\t  x',
	'pinned:14:5:swap:a, b->b, a',
	'pinned:15:2:delete:x = min_t(unsigned long, a, b) + (pgoff_t)(y);->;',
	'pinned:15:27:swap:a, b->b, a',
	'pinned:15:33:aor:-:+->-',
	'pinned:16:5:negate:(unlikely(!tick()))->(!(unlikely(!tick())))',
	'pinned:17:10:const:1:0->1',
	'pinned:17:10:return:1:0->1',
	'pinned:18:2:delete:list_for_each_entry(pos, head, lru)\n\t\tx++;->;\n',
	'pinned:19:4:aor:--:++->--',
	'pinned:20:2:delete:y = combine(a +\n\t\t    b, x);->;\n',
	'pinned:20:16:aor:-:+->-',
	'pinned:22:2:delete:x++;->;',
	'pinned:22:3:aor:--:++->--',
	'pinned:23:2:delete:helper(x, a);->;',
	'pinned:23:9:swap:x, a->a, x',
	'pinned:24:2:delete:y = x;->;',
	'pinned:25:2:delete:y = x;->;',
	'pinned:26:2:delete:vmf->b = a;->;',
	'pinned:26:14:delete:vmf->c = b;->;',
	'pinned:27:2:delete:vmf->d = b;->;',
	'pinned:28:2:delete:vmf->e = a;->;',
	'pinned:29:2:delete:vmf->f = IS_ENABLED(CONFIG_X);->;',
	'pinned:30:5:negate:(y)->(!(y))',
	'pinned:31:3:delete:folio_unlock(vmf->folio);->;',
	'pinned:32:3:delete:folio_put(vmf->folio);->;',
	'pinned:34:9:return:0:max(x, y)->0',
	'pinned:34:9:return:1:max(x, y)->1',
	'pinned:34:13:swap:x, y->y, x',
]


def ops(mutants: List[mutagen.Mutant]) -> List[str]:
	return [f'{m.line}:{m.operator}:{m.original}->{m.replacement}'
		for m in mutants]


def test_every_operator_on_its_node() -> None:
	got = ops(mutagen.generate(SOURCE, 'mm/x.c', 'pinned'))
	for want in ('11:negate:(miss < 100 && a)->(!(miss < 100 && a))',
		     '11:ror:<=:<-><=', '11:lor:||:&&->||',
		     '11:const:0:100->0', '11:const:1:100->1',
		     '11:const:+1:100->101', '11:const:-1:100->99',
		     '12:aor:--:++->--', '12:delete:miss++;->;',
		     '13:aor:-:+->-', '13:const:0:2->0', '13:const:+1:2->3',
		     '14:swap:a, b->b, a', '14:delete:helper(a, b);->;',
		     '17:return:0:vmf->file->0'):
		assert want in got, (want, got)
	# The function returns a pointer: NULL only, never 1.
	assert '17:return:1:vmf->file->1' not in got
	# Only the pinned function is mutated.
	assert all(m.function == 'pinned' and m.line > 5
		   for m in mutagen.generate(SOURCE, 'mm/x.c', 'pinned'))


def test_ids_are_stable_readable_and_unique() -> None:
	a = mutagen.generate(SOURCE, 'mm/x.c', 'pinned')
	b = mutagen.generate(SOURCE, 'mm/x.c', 'pinned')
	assert [m.id for m in a] == [m.id for m in b]
	assert len({m.id for m in a}) == len(a)
	assert 'pinned:11:11:ror:<=' in [m.id for m in a]


def test_a_mutant_keeps_every_line_where_it_was() -> None:
	for m in mutagen.generate(SOURCE, 'mm/x.c', 'pinned'):
		assert m.apply(SOURCE).count(b'\n') == SOURCE.count(b'\n'), m.id


def test_the_diff_applies(tmp_path: Path) -> None:
	(tmp_path / 'mm').mkdir()
	(tmp_path / 'mm/x.c').write_bytes(SOURCE)
	m = next(m for m in mutagen.generate(SOURCE, 'mm/x.c', 'pinned')
		 if m.operator == 'ror:<=')
	subprocess.run(['patch', '-p1', '-s'], input=m.diff(SOURCE).encode(),
		       cwd=tmp_path, check=True)
	assert (tmp_path / 'mm/x.c').read_bytes() == m.apply(SOURCE)
	assert b'miss <= 100' in m.apply(SOURCE)


def new_ops(source: bytes) -> List[str]:
	return ops([m for m in mutagen.generate(source, 'mm/x.c', 'pinned')
		    if m.operator.startswith('arg:') or m.operator == 'order'])


def test_the_other_operators_mutants_are_as_they_were() -> None:
	got = mutagen.generate(CALLS, 'mm/x.c', 'pinned')
	assert [f'{m.id}:{m.original}->{m.replacement}' for m in got
		if not m.operator.startswith('arg:') and m.operator != 'order'] \
		== CALLS_EXISTING


def test_arg_replaces_a_call_whose_value_is_used_by_each_argument() -> None:
	got = new_ops(CALLS)
	for want in (
			# min() and max(), each argument in turn.
			'4:arg:0:min(a, b)->(a)', '4:arg:1:min(a, b)->(b)',
			'9:arg:0:max(x, foo(bar(a)))->(x)',
			'9:arg:1:max(x, foo(bar(a)))->(foo(bar(a)))',
			# A call in a call's arguments, and the one in that.
			'9:arg:0:foo(bar(a))->(bar(a))', '9:arg:0:bar(a)->(a)',
			# A returned call.
			'34:arg:0:max(x, y)->(x)', '34:arg:1:max(x, y)->(y)',
			# min_t()'s type is no argument to put in its place.
			'15:arg:1:min_t(unsigned long, a, b)->(a)',
			'15:arg:2:min_t(unsigned long, a, b)->(b)'):
		assert want in got, (want, got)
	ids = [m.id for m in mutagen.generate(CALLS, 'mm/x.c', 'pinned')]
	assert {'pinned:4:20:arg:1', 'pinned:9:14:arg:0', 'pinned:9:18:arg:0',
		'pinned:34:9:arg:0'} <= set(ids)


def test_arg_skips_what_is_no_value_to_replace() -> None:
	got = [o for o in new_ops(CALLS) if ':arg:' in o]
	at = {int(o.split(':')[0]) for o in got}
	# A call whose value is thrown away (delete has those), in a
	# statement of its own or cast to void.
	assert not at & {10, 11, 23, 31, 32}
	# A string literal.
	assert [o for o in got if o.startswith('12:')] == [
		'12:arg:0:snprintf(buf, 8, "%lu", a)->(buf)',
		'12:arg:1:snprintf(buf, 8, "%lu", a)->(8)',
		'12:arg:3:snprintf(buf, 8, "%lu", a)->(a)']
	# A type: min_t()'s, and a cast the grammar reads as a call.
	assert not [o for o in got if 'unsigned' in o.split('->')[1] or
		    'pgoff_t' in o]
	# A call with no argument (tick()), a hint whose value is its
	# argument's (unlikely()), and a racy access's marker, whose value is
	# its argument's without a race (READ_ONCE()).
	assert not at & {8, 16}
	# A loop macro the grammar cannot read.
	assert not at & {18, 19}
	# An argument over several lines; the call's other arguments stay.
	assert [o for o in got if o.startswith('20:')] == [
		'20:arg:1:combine(a +\n\t\t    b, x)->(x)\n']
	# A configuration symbol.
	assert 29 not in at
	# In any context: a for loop's first and third clauses, left of a
	# comma; a call in min_t()'s arguments is a value.
	source = textwrap.dedent('''\
		static int pinned(int a, int b)
		{
			int x;

			for (start(a); x < a; next(x))
				a = (f(x), g(b));
			return min_t(unsigned long, h(a), b);
		}
		''').encode()
	assert new_ops(source) == [
		'6:arg:0:g(b)->(b)',
		'7:arg:1:min_t(unsigned long, h(a), b)->(h(a))',
		'7:arg:2:min_t(unsigned long, h(a), b)->(b)', '7:arg:0:h(a)->(a)']


def test_order_swaps_two_statements_alone_on_their_lines() -> None:
	got = [o for o in new_ops(CALLS) if ':order:' in o]
	assert got == [
		# An increment and a call; a call and an assignment.
		'22:order:x++;\n\thelper(x, a);->helper(x, a);\n\tx++;',
		'23:order:helper(x, a);\n\ty = x;->y = x;\n\thelper(x, a);',
		'28:order:vmf->e = a;\n\tvmf->f = IS_ENABLED(CONFIG_X);'
		'->vmf->f = IS_ENABLED(CONFIG_X);\n\tvmf->e = a;',
		# In a nested block: each line keeps its indentation.
		'31:order:folio_unlock(vmf->folio);\n\t\tfolio_put(vmf->folio);'
		'->folio_put(vmf->folio);\n\t\tfolio_unlock(vmf->folio);']
	# Not: two equal statements (24, 25), two on one line (26), one
	# with a comment after it (27), one over two lines (20, 13), a
	# statement that is no call, assignment or increment (11, a cast;
	# declarations), a loop macro the grammar cannot read (18).
	source = textwrap.dedent('''\
		static void pinned(int a, int b)
		{
			if (b) b--; a = 1;
			b = 2;
			/* between */
			a = 3;
			b = a;
		}
		''').encode()
	# Not: one with a statement before it on its line, or with a comment
	# between.
	assert new_ops(source) == ['6:order:a = 3;\n\tb = a;->b = a;\n\ta = 3;']
	m = next(m for m in mutagen.generate(CALLS, 'mm/x.c', 'pinned')
		 if m.operator == 'order' and m.line == 31)
	assert m.id == 'pinned:31:3:order'
	assert b'\t\tfolio_put(vmf->folio);\n\t\tfolio_unlock(vmf->folio);\n' \
		in m.apply(CALLS)


def test_order_leaves_out_swaps_that_change_nothing() -> None:
	"""Two statements neither of which calls, and neither of which
	writes a name or field the other reads or writes, do the same in
	either order: no mutant swaps them."""
	source = textwrap.dedent('''\
		static void pinned(struct ra *ra, int *p, int *q, int n, int i)
		{
			int x, y;

			x = n;
			y = i;
			ra->size = n;
			ra->async = n / 4;
			ra->start = ra->size;
			ra->size++;
			ra = 0;
			x += y;
			*p = 1;
			y = 2;
			q[i] = 3;
			x = 4;
			y = f(x);
			ra->size = min(n, i);
			ra->start = max_t(long, 0, i - n / 2);
		}
		''').encode()
	got = [o.split(':')[0] for o in new_ops(source) if ':order:' in o]
	# Left out: x and y (5, 6), fields of ra no other statement of the
	# pair writes (6, 7, 8: reading the pointer ra is not reading them),
	# ra and x (11). Swapped: ra->size written and read (9), a field of
	# ra, then ra (10), an lvalue through a pointer or an index, which
	# may be anything (12 to 15), a call (16, 17). Not: two fields that
	# only value macros such as min() compute (18).
	assert got == ['9', '10', '12', '13', '14', '15', '16', '17']


def test_new_mutants_keep_the_lines_and_their_diffs_apply(
		tmp_path: Path) -> None:
	ms = mutagen.generate(CALLS, 'mm/x.c', 'pinned')
	for m in ms:
		assert m.apply(CALLS).count(b'\n') == CALLS.count(b'\n'), m.id
	assert len({m.id for m in ms}) == len(ms)
	(tmp_path / 'mm').mkdir()
	new = [m for m in ms if m.operator.startswith('arg:') or
	       m.operator == 'order']
	assert len(new) == 21
	for m in new:
		(tmp_path / 'mm/x.c').write_bytes(CALLS)
		subprocess.run(['patch', '-p1', '-s'],
			       input=m.diff(CALLS).encode(), cwd=tmp_path,
			       check=True)
		assert (tmp_path / 'mm/x.c').read_bytes() == m.apply(CALLS), m.id


def test_a_function_that_is_not_there() -> None:
	with pytest.raises(mutagen.PinnedError, match='no function nothere'):
		mutagen.generate(SOURCE, 'mm/x.c', 'nothere')


def test_sample_and_shard_are_deterministic_and_cover_all() -> None:
	ms = mutagen.generate(SOURCE, 'mm/x.c', 'pinned')
	s = mutagen.sample(ms, 5, 7)
	assert s == mutagen.sample(ms, 5, 7) and len(s) == 5
	assert [ms.index(m) for m in s] == sorted(ms.index(m) for m in s)
	shards = [mutagen.shard(ms, k, 3) for k in range(3)]
	assert sorted((m.id for sh in shards for m in sh)) == sorted(m.id for m in ms)


def test_of_operators_and_every_operator_is_named() -> None:
	# The operators the module's docstring lists, in its order.
	assert re.findall(r'^  (\w+) ', mutagen.__doc__ or '', re.M) == \
		list(mutagen.OPERATORS)
	ms = mutagen.generate(CALLS, 'mm/x.c', 'pinned') + \
		mutagen.generate(SOURCE, 'mm/x.c', 'pinned')
	assert {m.operator.split(':')[0] for m in ms} <= set(mutagen.OPERATORS)
	assert mutagen.of_operators(ms, ('arg', 'order')) == [
		m for m in ms if m.operator.startswith('arg:') or
		m.operator == 'order']
	assert [m.operator for m in mutagen.of_operators(ms, ('ror',))] == \
		['ror:<=']


def test_parse_pinned() -> None:
	pinned = mutagen.parse_pinned('# c\ns | mm/a.c | f\n'
				      's t | mm/a.c | g | x86_64\n')
	assert pinned == [mutagen.Pinned(('s',), 'mm/a.c', 'f'),
			  mutagen.Pinned(('s', 't'), 'mm/a.c', 'g', ('x86_64',))]
	with pytest.raises(mutagen.PinnedError, match='x:1: want'):
		mutagen.parse_pinned('s | f\n', 'x')


def test_the_pinned_list_names_each_function_once() -> None:
	from conftest import OVERLAYS
	for overlay in OVERLAYS:
		if not (overlay / 'pinned').is_file():
			continue
		pinned = mutagen.load_pinned(overlay / 'pinned')
		assert len({p.function for p in pinned}) == len(pinned)
	pinned = mutagen.load_pinned(DEFAULT_OVERLAY / 'pinned')
	assert len(pinned) >= 15
	assert len({p.function for p in pinned}) == len(pinned)


def test_docs_show_the_pinned_list() -> None:
	"""docs/suites.md's table of pinned functions is the default
	kernel's, grouped by suite and file, in its order."""
	from conftest import REPO
	pinned = mutagen.load_pinned(DEFAULT_OVERLAY / 'pinned')
	rows: List[str] = []
	for p in pinned:
		fn = f'`{p.function}()`' + (f' ({" ".join(p.arches)})' if p.arches else '')
		head = f'| `{" ".join(p.suites)}` | {p.path} | '
		if rows and rows[-1].startswith(head):
			rows[-1] = rows[-1][:-2] + f', {fn} |'
		else:
			rows.append(head + fn + ' |')
	doc = (REPO / 'docs/suites.md').read_text()
	table = doc.split('<!-- pinned')[1].split('<!-- end pinned')[0]
	assert [l for l in table.splitlines() if l.startswith('| `')] == rows
