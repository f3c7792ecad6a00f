# SPDX-License-Identifier: GPL-2.0
"""Which tests a tree lacking some fixes must fail: one list, and each
run held against it.

Each overlay (kernel/, and each port kernel/compat/X.Y/) has an `expected`
file. It names, for each fix, the tests that stand for it: a tree that
lacks the fix must fail them, and a tree that has it must pass them. It
also names the tests that cannot run on that overlay's kernel at all.
Every other test must pass (or be skipped by the arch). hold_against()
holds a run against the list; the before-fix trees of `mutants` and the
older kernels of `fixes` are held against it alike.

One entry per line ('#' starts a comment):

    fails | TEST | FIX
    unsupported | TEST | why the test cannot run on that kernel

TEST is a case name as the results give it (suite.test or
suite.test.row), or an fnmatch pattern of them; a pattern also covers the
rows of the tests it names. FIX is the fix the test stands for: the file
name of a patch of the series (kernel/expected: a before-fix tree leaves
that patch out), or, for a port, a description of the upstream fix the
older kernel lacks.
"""

from __future__ import annotations

import dataclasses
import enum
from pathlib import Path
from typing import Collection, Dict, List, Optional, Sequence

from mmkunit import listfile
from mmkunit.runner import CaseResult, Status, case_matches


class ExpectedError(Exception):
	"""The expected file cannot be read."""


class Kind(enum.Enum):
	FAILS = 'fails'
	UNSUPPORTED = 'unsupported'


@dataclasses.dataclass(frozen=True)
class Entry:
	kind: Kind
	pattern: str
	why: str
	where: str  # file:line, for messages

	def matches(self, name: str) -> bool:
		return case_matches(name, self.pattern)


def parse_expected(text: str, path: str = 'expected') -> List[Entry]:
	entries: List[Entry] = []
	for where, raw, parts in listfile.entries(text, path):
		if len(parts) != 3 or not all(parts):
			raise ExpectedError(f'{where}: want "fails|unsupported | TEST '
					    f'| why", got: {raw}')
		try:
			kind = Kind(parts[0])
		except ValueError:
			raise ExpectedError(f'{where}: "{parts[0]}" is neither '
					    '"fails" nor "unsupported"') from None
		entries.append(Entry(kind, parts[1], parts[2], where))
	return entries


def load_expected(path: Path) -> List[Entry]:
	return parse_expected(listfile.read_text(path, ExpectedError),
			      str(path))


class Verdict(enum.Enum):
	LACKS_FIX = 'fails: lacks the fix'  # as expected
	PASSED = 'passed'
	SKIPPED = 'skipped'
	UNSUPPORTED = 'not judged'
	UNEXPECTED_PASS = 'PASSED, expected to fail'
	UNEXPECTED_FAIL = 'FAILED, expected to pass'
	CRASHED = 'CRASHED'  # the test or the kernel did: never as expected

	@property
	def ok(self) -> bool:
		return self not in (Verdict.UNEXPECTED_PASS,
				    Verdict.UNEXPECTED_FAIL, Verdict.CRASHED)


@dataclasses.dataclass
class Judged:
	case: CaseResult
	verdict: Verdict
	entry: Optional[Entry] = None


@dataclasses.dataclass
class Report:
	judged: List[Judged]
	unmatched: List[Entry]  # entries that name no test of the run

	@property
	def ok(self) -> bool:
		return (not self.unmatched and bool(self.judged) and
			all(j.verdict.ok for j in self.judged))

	def lines(self) -> List[str]:
		out: List[str] = []
		# Per fix: the tests that stand for it and what they did.
		by_fix: Dict[str, List[Judged]] = {}
		for j in self.judged:
			if j.entry and j.entry.kind == Kind.FAILS:
				by_fix.setdefault(j.entry.why, []).append(j)
		for why, js in by_fix.items():
			failed = sum(1 for j in js if j.verdict == Verdict.LACKS_FIX)
			ran = sum(1 for j in js if j.verdict != Verdict.SKIPPED)
			state = ('missing' if ran and failed == ran else
				 'not tested here' if not ran else
				 'PRESENT?' if not failed else 'MIXED')
			out.append(f'  {state:15} {why} ({failed} of {ran} '
				   f'tests fail{", " + str(len(js) - ran) + " skipped" if ran < len(js) else ""})')
		unsupported = [j for j in self.judged if j.verdict == Verdict.UNSUPPORTED]
		if unsupported:
			reasons = sorted({j.entry.why for j in unsupported if j.entry})
			out.append(f'  {"not judged":15} {len(unsupported)} tests: '
				   + '; '.join(reasons))
		for j in self.judged:
			if not j.verdict.ok:
				note = f' ({j.entry.why})' if j.entry else ''
				out.append(f'  {j.verdict.value}: {j.case.name}{note}')
		for e in self.unmatched:
			out.append(f'  {e.where}: "{e.pattern}" names no test of this run')
		return out


def hold_against(cases: Sequence[CaseResult], entries: Sequence[Entry],
		 lacking: Optional[Collection[str]] = None) -> Report:
	"""Holds a run's cases against the list, for a tree that lacks the
	fixes named in lacking (None: every fix the list names)."""
	judged: List[Judged] = []
	used = set()
	for case in cases:
		matching = [e for e in entries if e.matches(case.name)]
		used.update(matching)
		unsupported = next((e for e in matching
				    if e.kind == Kind.UNSUPPORTED), None)
		entry = unsupported or next(
			(e for e in matching
			 if lacking is None or e.why in lacking), None)
		if unsupported:
			verdict = Verdict.UNSUPPORTED
		elif case.status == Status.SKIP:
			verdict = Verdict.SKIPPED
		elif case.status == Status.ERROR:
			verdict = Verdict.CRASHED
		elif entry:  # expected to fail
			verdict = (Verdict.UNEXPECTED_PASS if case.status == Status.PASS
				   else Verdict.LACKS_FIX)
		else:
			verdict = (Verdict.PASSED if case.status == Status.PASS
				   else Verdict.UNEXPECTED_FAIL)
		judged.append(Judged(case, verdict, entry))
	return Report(judged, [e for e in entries if e not in used])
