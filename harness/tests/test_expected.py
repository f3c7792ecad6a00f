# SPDX-License-Identifier: GPL-2.0
"""The expected list and the runs held against it (expected.py), and the
6.1 port's list against the suites."""

from __future__ import annotations

from pathlib import Path
from typing import List

import pytest

from conftest import REPO
from mmkunit import expected as fx
from mmkunit import overlay as ov
from mmkunit.runner import CaseResult, Status

P, F, S, E = Status.PASS, Status.FAIL, Status.SKIP, Status.ERROR

EXPECTED = '''\
# comment
fails | s.fix_a_* | fix A
fails | s.fix_b_test.row one | fix B
unsupported | s.needs_device_* | no device here
'''


def cases(*pairs) -> List[CaseResult]:
	return [CaseResult(name, status) for name, status in pairs]


def test_parse_expected() -> None:
	entries = fx.parse_expected(EXPECTED)
	assert [(e.kind, e.pattern, e.why) for e in entries] == [
		(fx.Kind.FAILS, 's.fix_a_*', 'fix A'),
		(fx.Kind.FAILS, 's.fix_b_test.row one', 'fix B'),
		(fx.Kind.UNSUPPORTED, 's.needs_device_*', 'no device here')]
	assert entries[0].where == 'expected:2'


@pytest.mark.parametrize('line, message', [
	('fails | s.t', 'want "fails|unsupported'),
	('fails | | why', 'want "fails|unsupported'),
	('maybe | s.t | why', '"maybe" is neither'),
])
def test_parse_expected_rejects(line: str, message: str) -> None:
	with pytest.raises(fx.ExpectedError, match=message):
		fx.parse_expected('\n' + line, 'x')


def test_hold_against_as_expected() -> None:
	report = fx.hold_against(cases(('s.fix_a_1', F), ('s.fix_a_2', S),
				('s.fix_b_test.row one', F),
				('s.fix_b_test.row two', P),
				('s.needs_device_test', F), ('s.other', P),
				('s.arch_only', S)),
			  fx.parse_expected(EXPECTED))
	assert report.ok
	verdicts = {j.case.name: j.verdict for j in report.judged}
	assert verdicts == {
		's.fix_a_1': fx.Verdict.LACKS_FIX, 's.fix_a_2': fx.Verdict.SKIPPED,
		's.fix_b_test.row one': fx.Verdict.LACKS_FIX,
		's.fix_b_test.row two': fx.Verdict.PASSED,
		's.needs_device_test': fx.Verdict.UNSUPPORTED,
		's.other': fx.Verdict.PASSED, 's.arch_only': fx.Verdict.SKIPPED}
	text = '\n'.join(report.lines())
	assert 'missing         fix A (1 of 1 tests fail, 1 skipped)' in text
	assert 'missing         fix B (1 of 1 tests fail)' in text
	assert 'not judged      1 tests: no device here' in text


@pytest.mark.parametrize('results, complaint', [
	# The tree has a fix the list says it lacks (or the test is weak).
	((('s.fix_a_1', P), ('s.fix_b_test.row one', F)),
	 'PASSED, expected to fail: s.fix_a_1 (fix A)'),
	# A test fails that no fix accounts for.
	((('s.fix_a_1', F), ('s.fix_b_test.row one', F), ('s.other', F)),
	 'FAILED, expected to pass: s.other'),
	# A crash is never the expected failure.
	((('s.fix_a_1', E), ('s.fix_b_test.row one', F)),
	 'CRASHED: s.fix_a_1 (fix A)'),
	# A stale entry: it names no test of the run.
	((('s.fix_a_1', F),), '"s.fix_b_test.row one" names no test of this run'),
])
def test_hold_against_not_as_expected(results, complaint: str) -> None:
	report = fx.hold_against(cases(*results), fx.parse_expected(EXPECTED))
	assert not report.ok
	assert any(complaint in line for line in report.lines()), report.lines()


def test_hold_against_no_results_is_not_ok() -> None:
	assert not fx.hold_against([], []).ok


def test_hold_against_a_tree_that_lacks_some_fixes() -> None:
	"""Tests of a fix the tree has must pass; a pattern covers rows."""
	entries = fx.parse_expected(EXPECTED)
	report = fx.hold_against(cases(('s.fix_a_1.row', F), ('s.fix_b_test.row one', P),
				('s.needs_device_x', F), ('s.other', P)),
			  entries, lacking=['fix A'])
	assert report.ok, report.lines()
	assert [j.verdict for j in report.judged] == [
		fx.Verdict.LACKS_FIX, fx.Verdict.PASSED, fx.Verdict.UNSUPPORTED,
		fx.Verdict.PASSED]
	report = fx.hold_against(cases(('s.fix_a_1', F), ('s.fix_b_test.row one', F)),
			  entries, lacking=['fix A'])
	assert not report.ok
	assert '  FAILED, expected to pass: s.fix_b_test.row one' in \
		report.lines()


def test_the_6_1_port_loads_and_lists_real_tests() -> None:
	"""Every test the 6.1 list names is a test of the suites."""
	port = ov.Overlay.load(REPO / 'kernel/compat/6.1')
	assert 'mm/tests/filemap_kunit_compat.h' in port.files
	# The filemap, swap, workingset and vmscan suites are 7.3's, as on
	# 6.12; the tests of what 6.12 does otherwise by design, and the rows
	# of 7.3's MGLRU tests with 6.12's outcomes, are the 6.12 port's.
	names = ('filemap_kunit.h', 'swap_state_kunit.h', 'workingset_kunit.h',
		 'vmscan_kunit.h')
	ported = ('filemap_6_12_kunit.h', 'swap_6_12_kunit.h',
		  'workingset_6_12_kunit.h', 'vmscan_6_12_kunit.h',
		  'vmscan_6_12_rows_kunit.h')
	for name in names:
		assert port.contents[f'mm/tests/{name}'] == \
			(REPO / 'kernel/mm/tests' / name).read_bytes()
	for name in ported:
		assert port.contents[f'mm/tests/{name}'] == \
			(REPO / 'kernel/compat/6.12/mm/tests' / name).read_bytes()
	entries = fx.load_expected(REPO / 'kernel/compat/6.1/expected')
	sources = ''.join(port.contents[f'mm/tests/{n}'].decode()
			  for n in names + ported)
	for e in entries:
		suite, test = e.pattern.split('.')[:2]
		assert f'"{suite}"' in sources, e
		assert test.split('*')[0] in sources, e
