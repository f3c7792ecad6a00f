# SPDX-License-Identifier: GPL-2.0
"""The coverage table of the pinned functions (coverage.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip('tree_sitter_c')

from mmkunit import coverage  # noqa: E402
from mmkunit import mutagen  # noqa: E402

SOURCE = textwrap.dedent('''\
	int other(int a)
	{
		return a;
	}

	int pinned(int a)
	{
		if (a > 1)
			return 1;
		return 0;
	}
	''').encode()

# Two units include the file: their counts add up.
INFO = textwrap.dedent('''\
	TN:
	SF:/src/mm/x.c
	DA:3,5
	DA:8,4
	DA:9,0
	DA:10,4
	BRDA:8,0,0,0
	BRDA:8,0,1,4
	BRDA:3,0,0,1
	end_of_record
	SF:/src/mm/x.c
	DA:9,1
	BRDA:8,0,0,-
	end_of_record
	''')


def test_parse_info_adds_up_records() -> None:
	fd = coverage.parse_info(INFO)['/src/mm/x.c']
	assert fd.lines == {3: 5, 8: 4, 9: 1, 10: 4}
	assert fd.branches[(8, 0, 0)] == 0 and fd.branches[(8, 0, 1)] == 4


def test_rows_count_only_the_pinned_function() -> None:
	pinned = [mutagen.Pinned(('s',), 'mm/x.c', 'pinned'),
		  mutagen.Pinned(('s',), 'mm/x.c', 'pinned', ('x86_64',))]
	data = coverage.parse_info(INFO)
	row, elsewhere = coverage.rows(pinned, data, {'mm/x.c': SOURCE}, 'um')
	assert (row.lines, row.lines_hit) == (3, 3)
	assert (row.branches, row.branches_taken, row.untaken) == (2, 1, {8: 1})
	assert 'x86_64 only' in elsewhere.note
	lines = [' '.join(l.split()) for l in
		 coverage.report([row, elsewhere], {}).splitlines()]
	assert 'pinned 3/3 100% 1/2 50% 8: 1' in lines
	assert 'pinned - - runs on x86_64 only: not measured' in lines


def test_a_branch_not_taken_is_listed_with_why_or_fails(
		tmp_path: Path) -> None:
	"""A branch no test takes fails the command unless its line is listed
	with a reason; a listed line whose branches are all taken fails it
	too, so that the list cannot outlive what it excuses."""
	row = coverage.Row('pinned', 'mm/x.c', branches=4, branches_taken=1,
			   untaken={8: 2, 12: 1})
	path = tmp_path / 'untaken'
	path.write_text('# why\npinned:8 | only a bug takes it\n'
			'pinned:20 | moved away\nother:5 | not measured here\n')
	listed = coverage.load_untaken(path)
	assert listed['pinned:8'] == 'only a bug takes it'
	assert row.unlisted(listed) == [12]
	other = coverage.Row('other', 'mm/y.c', note='runs on x86_64 only')
	problems = coverage.verdict([row, other], listed, path)
	assert problems == [
		f'mm-kunit: pinned:12: 1 branch never taken, and not listed in '
		f'{path} with why no test can take it',
		f'mm-kunit: pinned:20 is listed in {path} but has no branch '
		'left untaken']
	text = coverage.report([row], listed)
	assert '8: 2*, 12: 1' in text
	assert '  pinned:8: only a bug takes it' in text
	assert coverage.verdict([coverage.Row('pinned', 'mm/x.c', branches=2,
					      branches_taken=2)], {}, path) == []


@pytest.mark.parametrize('text', ['pinned:8\n', 'pinned | why\n',
				  'pinned:x | why\n', 'pinned:8 | \n'])
def test_untaken_list_entries_need_a_line_and_a_reason(
		tmp_path: Path, text: str) -> None:
	from mmkunit.session import HarnessError
	path = tmp_path / 'untaken'
	path.write_text(text)
	with pytest.raises(HarnessError, match='want "FUNCTION:LINE | reason"'):
		coverage.load_untaken(path)
