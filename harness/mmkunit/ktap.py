# SPDX-License-Identifier: GPL-2.0
"""Reading the KTAP output of the kernel's console, test case by test case.

With CONFIG_PRINTK_TIME (the harness's kunit-configs enable it) each
console line carries a timestamp, which gives each leaf test case its
duration; KTAP itself has none.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from typing import Dict, List, Optional, Sequence

# printk's timestamp, "[   12.345678] ".
_TIMESTAMP = re.compile(r'^\[\s*(\d+\.\d+)\] ?')
_KTAP_START = re.compile(r'^(.*?)(?:KTAP|TAP) version [0-9]+$')
# Where the kernel's console output stops being test output.
_KTAP_END = re.compile(r'\s*(List of all partitions:|'
		       r'Kernel panic - not syncing: VFS:|reboot: System halted)')
_RESULT = re.compile(r'^(\s*)(not ok|ok) [0-9]+( - )?([^#]*)( # .*)?$')
_SKIP = re.compile(r'^ # SKIP ?(.*)$', re.IGNORECASE)
# Lines after which a new test's output starts.
_HEADER = re.compile(r'^\s*(KTAP version [0-9]+|# Subtest: .*|1\.\.[0-9]+)$')
_SUBTEST = re.compile(r'^(\s*)# Subtest: (.*)$')


@dataclasses.dataclass(frozen=True)
class KtapLine:
	text: str  # without the console prefix
	time: Optional[float]  # printk timestamp, seconds since boot


class KtapStream:
	"""ktap_lines() a console line at a time, as the kernel prints them."""

	def __init__(self) -> None:
		self.prefix_len: Optional[int] = None
		self.ended = False

	def feed(self, line: str) -> Optional[KtapLine]:
		"""The KTAP line a console line is, or None (before the KTAP
		output, or after its end)."""
		line = line.rstrip()
		if self.ended:
			return None
		if self.prefix_len is None:
			m = _KTAP_START.match(line)
			if not m:
				return None
			self.prefix_len = len(m.group(1))
		elif _KTAP_END.match(line):
			self.ended = True
			return None
		t = _TIMESTAMP.match(line)
		return KtapLine(line[self.prefix_len:],
				float(t.group(1)) if t else None)


def ktap_lines(console: str) -> List[KtapLine]:
	"""The KTAP lines of the kernel's console output, with their times.

	The same rule as kunit.py's: output starts at the first "(K)TAP
	version" line and ends at the kernel's halt; as many characters as
	stood in front of the version line (a console prefix) are cut from
	each line.
	"""
	stream = KtapStream()
	return [kl for kl in map(stream.feed, console.splitlines())
		if kl is not None]


def text(lines: Sequence[KtapLine]) -> str:
	"""The lines as text, one per line, without their timestamps."""
	return ''.join(line.text + '\n' for line in lines)


@dataclasses.dataclass(frozen=True)
class KtapCase:
	"""What the KTAP output says about one leaf test case."""
	name: str  # suite.test or suite.test.row, as kunit.py names it
	ok: bool
	skip_reason: Optional[str]
	log: str  # its lines, from after the previous result to its own
	duration: Optional[float]


def _open_subtest(names: Dict[int, str], text: str) -> bool:
	"""If text is a "# Subtest:" header, records it in names (indent ->
	the subtest it opens; a header has the indent of its results) and
	forgets the deeper ones; says whether it was one."""
	sub = _SUBTEST.match(text)
	if not sub:
		return False
	indent = len(sub.group(1))
	names[indent] = sub.group(2).strip()
	for deeper in [k for k in names if k > indent]:
		del names[deeper]
	return True


def ktap_cases(lines: Sequence[KtapLine]) -> List[KtapCase]:
	"""The leaf test cases (tests without subtests, and rows) of KTAP."""
	cases: List[KtapCase] = []
	names: Dict[int, str] = {}  # indent -> the subtest it opens
	start = 0  # first line of the current test's output
	# Indent of the last result line: a result less indented than the
	# one before closes a test that had subtests (rows), not a leaf.
	last_indent: Optional[int] = None
	for i, line in enumerate(lines):
		_open_subtest(names, line.text)
		m = _RESULT.match(line.text)
		if m:
			indent = len(m.group(1))
			is_leaf = last_indent is None or indent >= last_indent
			last_indent = indent
			if is_leaf and indent > 0:
				path = [names[k] for k in sorted(names) if k <= indent]
				directive = _SKIP.match(m.group(5) or '')
				t0 = lines[start - 1].time if start else None
				t1 = line.time
				cases.append(KtapCase(
					name='.'.join(path + [m.group(4).strip()]),
					ok=m.group(2) == 'ok',
					skip_reason=(directive.group(1).strip()
						     if directive else None),
					log=textwrap.dedent(''.join(
						ln.text + '\n' for ln in lines[start:i + 1])),
					duration=(round(t1 - t0, 6) if t0 is not None
						  and t1 is not None else None)))
			start = i + 1
		elif _HEADER.match(line.text):
			start = i + 1
	return cases


# What KTAP puts at the left margin: version and plan lines, results and
# diagnostics. Anything else there is the kernel talking (a driver probing
# a device on another CPU, a WARNING), not a test.
_KTAP_TOP = re.compile(r'^((K?TAP version [0-9]+)|(1\.\.[0-9]+)|'
		       r'((not )?ok [0-9]+.*)|(#.*))$')


def is_ktap(line: KtapLine) -> bool:
	"""Whether a line is KTAP's, not the kernel talking into it."""
	return (line.text.startswith((' ', '\t')) or not line.text
		or bool(_KTAP_TOP.match(line.text)))


def kernel_lines_inside(lines: Sequence[KtapLine]) -> bool:
	"""Whether kernel messages interrupt the KTAP output, as opposed to
	only following its end (UML's "reboot: System halted"): only those can
	upset kunit.py's parse."""
	flags = [is_ktap(line) for line in lines]
	last = max((i for i, ktap in enumerate(flags) if ktap), default=-1)
	return not all(flags[:last + 1])


def without_kernel_lines(lines: Sequence[KtapLine]) -> List[KtapLine]:
	"""KTAP without the kernel messages printed into it at the left margin.

	Such a line between a "KTAP version" line and its "# Subtest:" header
	makes kunit.py lose the suite's name (seen under QEMU: "input: AT Raw
	Set 2 keyboard ..." from a driver probe on another CPU). The lines
	stay in console.log and ktap.log; only the parse leaves them out.
	"""
	return [line for line in lines if is_ktap(line)]


_PLAN = re.compile(r'^1\.\.([0-9]+)$')


def finished_tests(lines: Sequence[KtapLine]) -> List[str]:
	"""The tests (suite.test) whose own result line the output holds.

	A parameterised test's rows do not count: the test is finished when
	its result follows its last row.
	"""
	done: List[str] = []
	names: Dict[int, str] = {}  # indent -> the subtest it opens
	for line in lines:
		if _open_subtest(names, line.text):
			continue
		m = _RESULT.match(line.text)
		if m:
			indent = len(m.group(1))
			path = [names[k] for k in sorted(names) if k <= indent]
			if len(path) == 1:
				done.append(f'{path[0]}.{m.group(4).strip()}')
	return done


def complete(lines: Sequence[KtapLine]) -> bool:
	"""Whether every suite the output announced has its result line: false
	when the kernel died (or was killed) before the end of the tests."""
	planned: Optional[int] = None
	results = 0
	for line in lines:
		plan = _PLAN.match(line.text)
		if plan and planned is None:
			planned = int(plan.group(1))
		m = _RESULT.match(line.text)
		if m and not m.group(1):
			results += 1
	return planned is not None and results >= planned
