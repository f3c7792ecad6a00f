# SPDX-License-Identifier: GPL-2.0
"""KTAP as the kernel prints it (ktap.py)."""

from __future__ import annotations

from conftest import suites_ktap
from mmkunit import ktap

CONSOLE = """\
[    0.512000] KTAP version 1
[    0.512100] 1..1
[    0.512200]     KTAP version 1
[    0.512300]     # Subtest: s
[    0.512400]     # module: filemap
[    0.512500]     1..2
[    0.520000]     # t1: EXPECTATION FAILED at mm/tests/x.h:10
[    0.520100]     Expected 1 == 2
[    0.530000]     not ok 1 t1
[    0.531000]         KTAP version 1
[    0.531100]         # Subtest: t2
[    0.540000]         ok 1 row one
[    0.545000]         ok 2 row two # SKIP needs THP
[    0.550000]     # t2: pass:1 fail:0 skip:1 total:2
[    0.550100]     ok 2 t2
[    0.560000] # s: pass:1 fail:1 skip:0 total:2
[    0.560100] not ok 1 s
"""


def test_finished_tests_and_complete() -> None:
	lines = suites_ktap({'s1': ['a', 'b']}, finished=False)
	assert ktap.finished_tests(lines) == ['s1.a', 's1.b']
	assert not ktap.complete(lines)
	assert ktap.complete(suites_ktap({'s1': ['a', 'b']}, finished=True))


def test_rows_are_not_tests() -> None:
	lines = ktap.ktap_lines(
		'KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: s\n'
		'    1..1\n        KTAP version 1\n        # Subtest: t\n'
		'        ok 1 row one\n        ok 2 row two\n    ok 1 t\n'
		'ok 1 s\n')
	assert ktap.finished_tests(lines) == ['s.t']
	assert ktap.complete(lines)


def test_the_ktap_of_a_console_strips_its_prefixes() -> None:
	console = ('[    0.1] booting\n'
		   '[    0.2] KTAP version 1\n'
		   '[    0.2] 1..1\n'
		   '[    0.3] ok 1 suite\n'
		   'reboot: System halted\n'
		   'after the end\n')
	assert ktap.text(ktap.ktap_lines(console)) == \
		'KTAP version 1\n1..1\nok 1 suite\n'
	assert ktap.text(ktap.ktap_lines('no tests here\n')) == ''


def test_console_prefix_and_timestamps() -> None:
	lines = ktap.ktap_lines(CONSOLE)
	assert lines[0].text == 'KTAP version 1'
	assert lines[0].time == 0.512
	assert lines[3].text == '    # Subtest: s'


def test_cases_rows_skips_logs_and_durations() -> None:
	cases = {c.name: c for c in ktap.ktap_cases(ktap.ktap_lines(CONSOLE))}
	assert sorted(cases) == ['s.t1', 's.t2.row one', 's.t2.row two']
	t1 = cases['s.t1']
	assert not t1.ok and 'EXPECTATION FAILED at mm/tests/x.h:10' in t1.log
	assert 'Expected 1 == 2' in t1.log
	assert cases['s.t2.row one'].ok and cases['s.t2.row one'].skip_reason is None
	assert cases['s.t2.row two'].skip_reason == 'needs THP'
	# From the line before its output (here the suite's plan) to its result.
	assert t1.duration == round(0.530 - 0.5125, 6)


def test_kernel_lines_inside_the_ktap() -> None:
	lines = ktap.ktap_lines(CONSOLE.replace(
		'[    0.520100]     Expected 1 == 2\n',
		'[    0.520100]     Expected 1 == 2\n'
		'[    0.520200] ------------[ cut here ]------------\n'))
	assert ktap.kernel_lines_inside(lines)
	assert not ktap.kernel_lines_inside(ktap.without_kernel_lines(lines))
	assert not ktap.kernel_lines_inside(ktap.ktap_lines(CONSOLE))


def test_a_run_that_stops_inside_a_suite_is_not_complete() -> None:
	lines = ktap.ktap_lines(CONSOLE)
	assert ktap.complete(lines)
	cut = ktap.ktap_lines(CONSOLE.split('[    0.531000]')[0])
	assert not ktap.complete(cut)
	assert ktap.finished_tests(cut) == ['s.t1']
