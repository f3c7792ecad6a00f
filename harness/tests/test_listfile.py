# SPDX-License-Identifier: GPL-2.0
"""The project's list files (listfile.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmkunit import listfile


def test_entries_skip_comments_and_blank_lines_and_split_fields() -> None:
	text = ('# the header\n'
		'\n'
		'fails | s.a | fix.patch  # a note\n'
		'   \n'
		'  unsupported\t|  s.b* | no THP \n')
	assert list(listfile.entries(text, 'kernel/expected')) == [
		('kernel/expected:3', 'fails | s.a | fix.patch  # a note',
		 ['fails', 's.a', 'fix.patch']),
		('kernel/expected:5', 'unsupported\t|  s.b* | no THP',
		 ['unsupported', 's.b*', 'no THP'])]


def test_an_entry_of_one_field_and_empty_fields() -> None:
	assert list(listfile.entries('filemap_fault\n', 'pinned')) == [
		('pinned:1', 'filemap_fault', ['filemap_fault'])]
	assert list(listfile.entries('a |  | b\n', 'x'))[0][2] == ['a', '', 'b']
	# A bar without a blank on each side belongs to its field.
	assert list(listfile.entries('f:1:lor:|| | why\n', 'x'))[0][2] == [
		'f:1:lor:||', 'why']
	assert list(listfile.entries('g:2:bor:| | um | b|c\n', 'x'))[0][2] == [
		'g:2:bor:|', 'um', 'b|c']


def test_a_file_that_cannot_be_read_is_the_callers_error(
		tmp_path: Path) -> None:
	(tmp_path / 'pinned').write_text('s | f.c | fn\n')
	assert listfile.read_text(tmp_path / 'pinned', ValueError) == \
		's | f.c | fn\n'
	with pytest.raises(ValueError) as e:
		listfile.read_text(tmp_path / 'nope', ValueError)
	assert str(e.value) == f'{tmp_path / "nope"}: No such file or directory'
