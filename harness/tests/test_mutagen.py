# SPDX-License-Identifier: GPL-2.0
"""Mutants generated from C source (mutagen.py), with tree-sitter's C
grammar (installed by `./run_kunit.sh selftest`)."""

from __future__ import annotations

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


def test_parse_pinned() -> None:
	pinned = mutagen.parse_pinned('# c\ns | mm/a.c | f\ns | mm/a.c | g | x86_64\n')
	assert pinned == [mutagen.Pinned('s', 'mm/a.c', 'f'),
			  mutagen.Pinned('s', 'mm/a.c', 'g', ('x86_64',))]
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
		head = f'| `{p.suite}` | {p.path} | '
		if rows and rows[-1].startswith(head):
			rows[-1] = rows[-1][:-2] + f', {fn} |'
		else:
			rows.append(head + fn + ' |')
	doc = (REPO / 'docs/suites.md').read_text()
	table = doc.split('<!-- pinned')[1].split('<!-- end pinned')[0]
	assert [l for l in table.splitlines() if l.startswith('| `')] == rows
