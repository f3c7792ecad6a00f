# SPDX-License-Identifier: GPL-2.0
"""KTAP read case by case, and the JUnit XML and KCIDB reports."""

from __future__ import annotations

import datetime
import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import List

import pytest

from conftest import FIXTURES
from mmkunit import ktap, reports, runner
from mmkunit.runner import CaseResult, RunResult, Status

FAIL_RUN = FIXTURES / 'kunit/swap-fail'
# A whole UML run of the suites, with console timestamps.
ALL_UM = FIXTURES / 'kunit/all-um'
FAILED_ROW = 'mm_swap_readahead.swapin_nr_pages_test.no hits, adjacent backward'

# KTAP as the kernel prints it with CONFIG_PRINTK_TIME: a plain test, a
# parameterised one with a failing row, a skipped test, a second suite.
TIMED_CONSOLE = textwrap.dedent('''\
	[    0.100000] Linux version 6.12.117
	[    1.000000] KTAP version 1
	[    1.000000] 1..2
	[    1.000000]     KTAP version 1
	[    1.000000]     # Subtest: suite_a
	[    1.000000]     # module: a
	[    1.000000]     1..3
	[    1.250000]     ok 1 plain_test
	[    1.250000]         KTAP version 1
	[    1.250000]         # Subtest: table_test
	[    1.500000]         ok 1 first row
	[    1.600000]     # table_test: EXPECTATION FAILED at mm/tests/a.h:10
	[    1.600000]     Expected x == 2, but
	[    1.600000]         x == 3 (0x3)
	[    2.000000]         not ok 2 second row: 2.5x
	[    2.000000]     # table_test: pass:1 fail:1 skip:0 total:2
	[    2.000000]     not ok 2 table_test
	[    2.125000]     ok 3 skipped_test # SKIP needs two CPUs
	[    2.125000] # suite_a: pass:1 fail:1 skip:1 total:3
	[    2.125000] # Totals: pass:2 fail:1 skip:1 total:4
	[    2.125000] not ok 1 suite_a
	[    2.125000]     KTAP version 1
	[    2.125000]     # Subtest: suite_b
	[    2.125000]     1..1
	[    3.125000]     ok 1 only_test
	[    3.125000] ok 2 suite_b
	[    3.200000] reboot: System halted
	''')

TIMED_CASES = [
	CaseResult('suite_a.plain_test', Status.PASS),
	CaseResult('suite_a.table_test.first row', Status.PASS),
	CaseResult('suite_a.table_test.second row: 2.5x', Status.FAIL),
	CaseResult('suite_a.skipped_test', Status.SKIP),
	CaseResult('suite_b.only_test', Status.PASS),
]


def test_ktap_cases_names_verdicts_and_durations() -> None:
	cases = ktap.ktap_cases(ktap.ktap_lines(TIMED_CONSOLE))
	assert [(c.name, c.ok, c.skip_reason, c.duration) for c in cases] == [
		('suite_a.plain_test', True, None, 0.25),
		('suite_a.table_test.first row', True, None, 0.25),
		('suite_a.table_test.second row: 2.5x', False, None, 0.5),
		('suite_a.skipped_test', True, 'needs two CPUs', 0.125),
		('suite_b.only_test', True, None, 1.0),
	]


def test_ktap_case_log_holds_its_failed_expectation() -> None:
	cases = {c.name: c for c in ktap.ktap_cases(ktap.ktap_lines(TIMED_CONSOLE))}
	assert cases['suite_a.table_test.second row: 2.5x'].log == textwrap.dedent('''\
		# table_test: EXPECTATION FAILED at mm/tests/a.h:10
		Expected x == 2, but
		    x == 3 (0x3)
		    not ok 2 second row: 2.5x
		''')
	assert 'EXPECTATION' not in cases['suite_a.table_test.first row'].log
	assert cases['suite_b.only_test'].log == 'ok 1 only_test\n'


def test_ktap_cases_agree_with_kunit_py_on_a_real_run() -> None:
	"""The same cases and verdicts as kunit.py's JSON for a saved run
	(kunit.py lists a suite's plain tests before its parameterised ones)."""
	console = (FAIL_RUN / 'console.log').read_text()
	from_json = runner.parse_kunit_json((FAIL_RUN / 'results.json').read_text())
	from_ktap = ktap.ktap_cases(ktap.ktap_lines(console))
	assert sorted(c.name for c in from_ktap) == sorted(c.name for c in from_json)
	assert {c.name: c.ok for c in from_ktap} == \
		{c.name: c.status != Status.FAIL for c in from_json}
	failed = next(c for c in from_ktap if c.name == FAILED_ROW)
	assert 'EXPECTATION FAILED at mm/tests/swap_state_kunit.h:224' in failed.log
	# No timestamps in this console: no durations rather than wrong ones.
	assert all(c.duration is None for c in from_ktap)


def test_ktap_cases_of_a_whole_timed_run() -> None:
	"""Every case of every suite found, each with a duration."""
	from_json = runner.parse_kunit_json((ALL_UM / 'results.json').read_text())
	from_ktap = ktap.ktap_cases(ktap.ktap_lines(
		(ALL_UM / 'console.log').read_text()))
	assert len(from_json) > 100
	assert sorted(c.name for c in from_ktap) == sorted(c.name for c in from_json)
	assert all(c.duration is not None and c.duration >= 0 for c in from_ktap)
	skipped = [c for c in from_ktap if c.skip_reason]
	assert [c.name for c in skipped] == [
		'mm_filemap_pte_recheck.filemap_fault_recheck_race_test']
	assert skipped[0].skip_reason.startswith('needs two CPUs')


def timed_result(tmp_path: Path, error: str = '',
		 complaints: List[str] = []) -> RunResult:
	cases = runner.with_ktap(list(TIMED_CASES),
				 ktap.ktap_cases(ktap.ktap_lines(TIMED_CONSOLE)))
	return RunResult(1, cases, tmp_path, error=error,
			 complaints=list(complaints), booted=True,
			 build_seconds=12.5)


def context(tmp_path: Path) -> reports.Context:
	src = tmp_path / 'linux-source-6.12'
	src.mkdir(exist_ok=True)
	(src / 'Makefile').write_text('VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 117\n')
	return reports.Context(
		arch='um', source=src,
		started=datetime.datetime(2026, 11, 22, 10, 0,
					  tzinfo=datetime.timezone.utc),
		patches=[('0001-a.patch', b'a'), ('0002-b.patch', b'b')],
		environment='UML', run_id='r1')


def test_junit_one_testcase_per_case(tmp_path: Path) -> None:
	root = ET.fromstring(reports.junit_xml(timed_result(tmp_path),
					       context(tmp_path)))
	assert root.tag == 'testsuites'
	assert (root.get('tests'), root.get('failures'), root.get('skipped'),
		root.get('errors')) == ('5', '1', '1', '0')
	assert float(root.get('time')) == pytest.approx(2.125)
	suites = {s.get('name'): s for s in root.iter('testsuite')}
	assert list(suites) == ['suite_a', 'suite_b']
	assert suites['suite_a'].get('tests') == '4'
	cases = [(c.get('classname'), c.get('name'), c.get('time'))
		 for c in root.iter('testcase')]
	assert cases == [
		('suite_a', 'plain_test', '0.250000'),
		('suite_a.table_test', 'first row', '0.250000'),
		('suite_a.table_test', 'second row: 2.5x', '0.500000'),
		('suite_a', 'skipped_test', '0.125000'),
		('suite_b', 'only_test', '1.000000'),
	]


def test_junit_failure_and_skip_carry_the_ktap_lines(tmp_path: Path) -> None:
	root = ET.fromstring(reports.junit_xml(timed_result(tmp_path),
					       context(tmp_path)))
	by_name = {c.get('name'): c for c in root.iter('testcase')}
	failure = by_name['second row: 2.5x'].find('failure')
	assert failure is not None
	assert failure.get('message') == \
		'table_test: EXPECTATION FAILED at mm/tests/a.h:10'
	assert 'x == 3 (0x3)' in failure.text
	skipped = by_name['skipped_test'].find('skipped')
	assert skipped is not None and skipped.get('message') == 'needs two CPUs'
	assert by_name['first row'].find('failure') is None


def test_run_problems_besides_tests_are_a_failed_case(tmp_path: Path) -> None:
	result = timed_result(tmp_path, complaints=['BUG: Bad rss-counter'])
	root = ET.fromstring(reports.junit_xml(result, context(tmp_path)))
	run = [c for c in root.iter('testcase') if c.get('classname') == 'mm_kunit']
	assert len(run) == 1 and run[0].get('name') == 'run'
	assert 'BUG: Bad rss-counter' in run[0].find('failure').text
	data = reports.kcidb(result, context(tmp_path))
	assert [t['status'] for t in data['tests']
		if t['path'] == 'kunit.mm_kunit.run'] == ['FAIL']


@pytest.mark.parametrize('name, path', [
	('suite_a.plain_test', 'kunit.suite_a.plain_test'),
	('suite_a.table_test.second row: 2.5x', 'kunit.suite_a.table_test.second_row_2_5x'),
	('s.t.anon not in swap cache: second youngest',
	 'kunit.s.t.anon_not_in_swap_cache_second_youngest'),
	('s.t.a-b', 'kunit.s.t.a-b'),
	('s.t.: ', 'kunit.s.t._'),
])
def test_kcidb_path(name: str, path: str) -> None:
	assert reports.kcidb_path(name) == path


def test_kcidb_report_content(tmp_path: Path) -> None:
	data = reports.kcidb(timed_result(tmp_path), context(tmp_path))
	(checkout,), (build,) = data['checkouts'], data['builds']
	assert checkout['misc']['kernel_version'] == '6.12.117'
	assert checkout['patchset_hash'] == reports.patchset_hash(
		[('0001-a.patch', b'a'), ('0002-b.patch', b'b')])
	assert build['checkout_id'] == checkout['id']
	assert (build['architecture'], build['status'], build['duration']) == \
		('um', 'PASS', 12.5)
	tests = data['tests']
	assert [t['status'] for t in tests] == ['PASS', 'PASS', 'FAIL', 'SKIP', 'PASS']
	assert all(t['build_id'] == build['id'] for t in tests)
	assert len({t['id'] for t in tests}) == len(tests)
	assert tests[2]['misc']['kunit_name'] == 'suite_a.table_test.second row: 2.5x'
	assert tests[2]['duration'] == 0.5
	assert 'EXPECTATION FAILED' in tests[2]['log_excerpt']


def test_kcidb_patchset_hash_follows_the_patches() -> None:
	a = reports.patchset_hash([('1', b'a'), ('2', b'b')])
	assert a != reports.patchset_hash([('1', b'b'), ('2', b'a')])
	assert a != reports.patchset_hash([('1', b'a')])
	assert len(a) == 64 and reports.patchset_hash([]) == ''


def test_kcidb_build_that_did_not_boot(tmp_path: Path) -> None:
	(tmp_path / 'kunit.out').write_text('make: *** [Makefile] Error 2\n')
	result = RunResult(2, [], tmp_path, error='the kernel did not build')
	data = reports.kcidb(result, context(tmp_path))
	assert data['builds'][0]['status'] == 'FAIL'
	assert 'Error 2' in data['builds'][0]['log_excerpt']
	assert [t['path'] for t in data['tests']] == ['kunit.mm_kunit.run']


def test_kcidb_validates_against_the_schema(tmp_path: Path) -> None:
	kcidb_io = pytest.importorskip(
		'kcidb_io', reason='kcidb-io from PyPI (./run_kunit.sh selftest '
		'installs it)')
	for result in (timed_result(tmp_path),
		       timed_result(tmp_path, error='x', complaints=['BUG: y']),
		       RunResult(2, [], tmp_path, error='did not build')):
		data = json.loads(json.dumps(reports.kcidb(result, context(tmp_path))))
		kcidb_io.schema.LATEST.validate(data)
		assert kcidb_io.schema.LATEST.is_valid(data)


def test_kcidb_schema_rejects_a_bad_path(tmp_path: Path) -> None:
	"""The validation above can fail: a raw row name is not a path."""
	kcidb_io = pytest.importorskip('kcidb_io')
	data = reports.kcidb(timed_result(tmp_path), context(tmp_path))
	data['tests'][2]['path'] = 'kunit.' + TIMED_CASES[2].name
	assert not kcidb_io.schema.LATEST.is_valid(data)


INTERLEAVED = FIXTURES / 'kunit/x86-interleaved'


def test_kernel_lines_are_left_out_of_the_parse() -> None:
	"""A driver's message between a suite's KTAP version line and its
	header (seen under QEMU) is not KTAP; KUnit's own lines all stay."""
	lines = ktap.ktap_lines((INTERLEAVED / 'console.log').read_text())
	kept = ktap.without_kernel_lines(lines)
	dropped = [line.text for line in lines if line not in kept]
	assert dropped[0] == ('input: AT Raw Set 2 keyboard as '
			      '/devices/platform/i8042/serio0/input/input0')
	texts = [line.text for line in kept]
	assert texts[2:4] == ['    KTAP version 1', '    # Subtest: mm_filemap_mmap_miss']
	assert sum(1 for t in texts if ' ok ' in f' {t.strip()} ') == \
		sum(1 for line in lines if ' ok ' in f' {line.text.strip()} ')
	# The JSON kunit.py wrote from the garbled output lost the suite name.
	assert runner.parse_kunit_json((INTERLEAVED / 'results.json').read_text())[0] \
		.name.startswith('.')


def test_kernel_lines_inside_only_when_they_interrupt_ktap() -> None:
	"""A message after the KTAP output ends (UML's "reboot: System
	halted") needs no second parse; one inside it does."""
	lines = ktap.ktap_lines((INTERLEAVED / 'console.log').read_text())
	assert ktap.kernel_lines_inside(lines)
	tail = ktap.ktap_lines('[0.1] KTAP version 1\n[0.1] 1..1\n'
			       '[0.2] ok 1 mm_swap_readahead\n'
			       '[0.3] reboot: System halted\n')
	assert [line.text for line in tail][-1] == 'reboot: System halted'
	assert not ktap.kernel_lines_inside(tail)
	assert not ktap.kernel_lines_inside([])


def test_kcidb_commit_of_the_tree_not_of_a_tree_around_it(
		tmp_path: Path) -> None:
	"""A git tree's checkout names its HEAD; a tree in a git tree of
	something else (a tarball unpacked in a repository) names none."""
	from conftest import git
	ctx = context(tmp_path)
	git(tmp_path, 'init', '-q')
	git(tmp_path, 'commit', '-q', '--allow-empty', '-m', 'around')
	data = reports.kcidb(timed_result(tmp_path), ctx)
	assert 'git_commit_hash' not in data['checkouts'][0]
	git(ctx.source, 'init', '-q')
	git(ctx.source, 'add', 'Makefile')
	git(ctx.source, 'commit', '-q', '-m', 'the kernel')
	data = reports.kcidb(timed_result(tmp_path), ctx)
	assert data['checkouts'][0]['git_commit_hash'] == \
		git(ctx.source, 'rev-parse', 'HEAD')
