# SPDX-License-Identifier: GPL-2.0
"""`coverage`: line and branch coverage of the pinned functions by the
suites, under UML.

This is kunit.py's documented flow (running_tips.rst): the suites are built
with kunit-configs/um-coverage.config (CONFIG_GCOV, UML's --coverage
build) in a build directory of their own, the UML process writes the
.gcda files when it exits, and lcov reads them. The report is genhtml's
HTML for the files under test and a table per pinned function: lines and
branches taken, and every branch not taken, by line.

running_tips.rst warns of compile errors and missing .gcda files with gcc 7
and later. Both happen with Debian 12's gcc 12, and both are worked around
for the coverage build only:
- the link fails: libgcov defines a mangle_path() of its own, and so does
  fs/seq_file.c. The build links against a copy of libgcov.a whose
  mangle_path() is renamed (__gcov_mangle_path, references included), kept
  in the cache and found before gcc's own through LIBRARY_PATH;
- no .gcda file is written: gcc puts the destructors that write them in
  .fini_array.00100, which UML's linker script leaves out of the
  .fini_array the C library runs at exit.
  kunit-configs/um-coverage.patch adds them, on top of the series, for
  this build; the tree holds the bare series again afterwards.
The run is checked for .gcda files and fails with running_tips.rst's
words if the build directory has none.

Only UML: x86_64 would need gcov-kernel in the QEMU guest and the data
copied out of debugfs. What only runs under x86_64 (large folios, THP,
two CPUs) is therefore not measured here; the pinned functions marked for
x86_64 in kernel/pinned are listed as such.

Every branch of a pinned function must be taken, or its line listed in the
overlay's `untaken` file with the reason no test can take it under UML
(FUNCTION:LINE | reason): a branch not taken and not listed is a missing
test, and fails the command, as does an entry whose line has no branch
left untaken.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

from mmkunit import arches
from mmkunit import deps
from mmkunit import listfile
from mmkunit import mutagen
from mmkunit import progress
from mmkunit import runs
from mmkunit.request import EXIT_OK, EXIT_TESTS_FAILED
from mmkunit import overlay as ov
from mmkunit.session import HarnessError, Session

CONFIG = 'coverage'
_BRANCHES = ['--rc', 'lcov_branch_coverage=1']


@dataclasses.dataclass
class FileData:
	"""What one lcov record says of a source file."""
	lines: Dict[int, int] = dataclasses.field(default_factory=dict)
	# (line, block, branch) -> times taken; None: its line never ran.
	branches: Dict[Tuple[int, int, int], Optional[int]] = \
		dataclasses.field(default_factory=dict)


def parse_info(text: str) -> Dict[str, FileData]:
	"""lcov's tracefile: per source file, line and branch counts."""
	files: Dict[str, FileData] = {}
	cur: Optional[FileData] = None
	for line in text.splitlines():
		key, _, value = line.partition(':')
		if key == 'SF':
			cur = files.setdefault(value, FileData())
		elif cur is None:
			continue
		elif key == 'DA':
			n, count = value.split(',')[:2]
			cur.lines[int(n)] = cur.lines.get(int(n), 0) + int(count)
		elif key == 'BRDA':
			n, block, branch, taken = value.split(',')
			k = (int(n), int(block), int(branch))
			old = cur.branches.get(k)
			new = None if taken == '-' else int(taken)
			cur.branches[k] = (new if old is None else
					   old + (new or 0))
		elif key == 'end_of_record':
			cur = None
	return files


@dataclasses.dataclass
class Row:
	function: str
	path: str
	lines: int = 0
	lines_hit: int = 0
	branches: int = 0
	branches_taken: int = 0
	# Lines with a branch never taken, each with how many.
	untaken: Dict[int, int] = dataclasses.field(default_factory=dict)
	note: str = ''

	def unlisted(self, listed: Dict[str, str]) -> List[int]:
		"""The lines with a branch not taken that listed gives no
		reason for."""
		return [n for n in sorted(self.untaken)
			if f'{self.function}:{n}' not in listed]


def load_untaken(path: Path) -> Dict[str, str]:
	"""FUNCTION:LINE | reason, one per line: lines of the pinned functions
	with a branch no test can take on this arch, and why."""
	out: Dict[str, str] = {}
	if not path.is_file():
		return out
	text = listfile.read_text(path, HarnessError)
	for where, raw, parts in listfile.entries(text, str(path)):
		key = parts[0].split(':')
		if len(parts) != 2 or not parts[1] or len(key) != 2 or \
		   not key[1].isdigit():
			raise HarnessError(f'{where}: want "FUNCTION:LINE | reason", '
					   f'got: {raw}')
		out[parts[0]] = parts[1]
	return out


def stale(table: Sequence[Row], listed: Dict[str, str]) -> List[str]:
	"""Entries of listed whose line has no branch left untaken (the tests
	take it now, or the line moved), among the functions measured."""
	measured = {r.function: r for r in table if not r.note}
	return [key for key in listed
		if key.split(':')[0] in measured and
		int(key.split(':')[1]) not in measured[key.split(':')[0]].untaken]


def rows(pinned: Sequence[mutagen.Pinned], data: Dict[str, FileData],
	 sources: Dict[str, bytes], arch: str) -> List[Row]:
	"""A row per pinned function, from the lines its definitions span."""
	out: List[Row] = []
	for p in pinned:
		row = Row(p.function, p.path)
		out.append(row)
		if p.arches and arch not in p.arches:
			row.note = f'runs on {" ".join(p.arches)} only: not measured'
			continue
		fd = next((d for name, d in data.items()
			   if name.endswith('/' + p.path)), None)
		if fd is None:
			row.note = 'no coverage data for its file'
			continue
		span: Set[int] = set()
		for fn in mutagen.functions(sources[p.path]).get(p.function, []):
			span |= set(range(fn.start_point[0] + 1, fn.end_point[0] + 2))
		for n, count in fd.lines.items():
			if n in span:
				row.lines += 1
				row.lines_hit += count > 0
		for (n, _, _), taken in fd.branches.items():
			if n in span:
				row.branches += 1
				row.branches_taken += bool(taken)
				if not taken:
					row.untaken[n] = row.untaken.get(n, 0) + 1
	return out


def _pct(part: int, whole: int) -> str:
	return f'{100.0 * part / whole:.0f}%' if whole else '-'


def report(table: Sequence[Row], listed: Dict[str, str]) -> str:
	"""The table, then each listed line with its reason."""
	head = ('function', 'lines', 'branches',
		'branches not taken (line: how many), * if listed')
	cells = [head]
	for r in table:
		cells.append((r.function,
			      r.note and '-' or f'{r.lines_hit}/{r.lines} {_pct(r.lines_hit, r.lines)}',
			      r.note and '-' or f'{r.branches_taken}/{r.branches} '
			      f'{_pct(r.branches_taken, r.branches)}',
			      r.note or ', '.join(
				      f'{n}: {c}' + ('*' if f'{r.function}:{n}' in listed
						     else '')
				      for n, c in sorted(r.untaken.items())) or 'none'))
	widths = [max(len(c[i]) for c in cells) for i in range(3)]
	lines = ['  ' + '  '.join(c.ljust(w) for c, w in zip(row[:3], widths))
		 + '  ' + row[3] for row in cells]
	shown = [(f'{r.function}:{n}', listed[f'{r.function}:{n}'])
		 for r in table for n in sorted(r.untaken)
		 if f'{r.function}:{n}' in listed]
	if shown:
		lines += ['', '* Not taken under UML, and why']
		lines += [f'  {key}: {why}' for key, why in shown]
	return '\n'.join(lines)


def verdict(table: Sequence[Row], listed: Dict[str, str],
	    path: Path) -> List[str]:
	"""One line for each branch not taken that path does not list, and
	for each entry of path that no longer names one: empty if none."""
	out = [f'mm-kunit: {r.function}:{n}: {r.untaken[n]} branch'
	       f'{"es" if r.untaken[n] > 1 else ""} never taken, and not '
	       f'listed in {path} with why no test can take it'
	       for r in table for n in r.unlisted(listed)]
	out += [f'mm-kunit: {key} is listed in {path} but has no branch left '
		'untaken' for key in stale(table, listed)]
	return out


def libgcov_dir(cache: Path) -> Path:
	"""A directory with gcc's libgcov.a, its mangle_path() renamed so
	that it does not clash with fs/seq_file.c's when UML links."""
	found = subprocess.run(['gcc', '-print-file-name=libgcov.a'],
			       capture_output=True, text=True, check=True)
	libgcov = Path(found.stdout.strip())
	version = subprocess.run(['gcc', '-dumpfullversion'], capture_output=True,
				 text=True, check=True).stdout.strip()
	# gcc puts a LIBRARY_PATH entry ahead of its own directories only in
	# its multilib form, DIR/../lib: a directory named lib is its own.
	out = cache / f'libgcov-{version}' / 'lib'
	if not (out / 'libgcov.a').is_file():
		out.mkdir(parents=True, exist_ok=True)
		tmp = out / 'libgcov.a.tmp'
		subprocess.run(['objcopy', '--redefine-sym',
				'mangle_path=__gcov_mangle_path', str(libgcov),
				str(tmp)], check=True)
		tmp.rename(out / 'libgcov.a')
	return out


def run_coverage(s: Session) -> int:
	if not arches.ARCHES[s.build.arch].uml:
		raise HarnessError('coverage runs under UML only (see docs/coverage.md)')
	s.ensure_deps(deps.COVERAGE)
	mutagen.use_parser(s.cache, s.source.install)
	pinned = mutagen.load_pinned(s.overlay.root / 'pinned')
	untaken_list = s.overlay.root / 'untaken'
	listed = load_untaken(untaken_list)
	tree = s.sources.prepared_tree()
	build = tree.build_dir(s.build_key)
	gcov = s.with_additions(
		[ov.Patch.from_file(s.config_file('um-coverage.patch'))],
		{'LIBRARY_PATH': ':'.join(filter(None, [
			str(libgcov_dir(s.cache)), os.environ.get('LIBRARY_PATH')]))})
	# Counts of an earlier run must not add up with this one's.
	for old in build.rglob('*.gcda'):
		old.unlink()
	try:
		result = runs.run_suites(gcov)
	finally:
		with tree.locked():
			s.put_series(tree)
	if result.untestable:
		return EXIT_TESTS_FAILED
	if not any(build.rglob('*.gcda')):
		raise HarnessError(f'no .gcda files in {build}: the UML process did '
				   'not write its coverage data (running_tips.rst: '
				   '"missing .gcda files")')
	out = result.results_dir
	info = out / 'coverage.info'
	files = sorted({p.path for p in pinned})
	with progress.step('lcov: reading the coverage data'):
		# Debian 12's lcov prints perl warnings on every run: only a
		# failure's output is shown.
		for cmd in (['lcov', '-q', '-c', '-d', str(build), '-o',
			     str(out / 'all.info'), *_BRANCHES],
			    ['lcov', '-q', '-e', str(out / 'all.info'),
			     *[f'*/{f}' for f in files], '-o', str(info),
			     *_BRANCHES]):
			proc = subprocess.run(cmd, capture_output=True, text=True)
			if proc.returncode != 0:
				raise HarnessError(f'{" ".join(cmd[:3])} failed: '
						   f'{proc.stderr.strip()[-500:]}')
		subprocess.run(['genhtml', '-q', '--branch-coverage', '-o',
				str(out / 'coverage-html'), str(info)], check=True,
			       capture_output=True)
	sources = {f: (tree.src / f).read_bytes() for f in files}
	table = rows(pinned, parse_info(info.read_text()), sources,
		     s.build.arch)
	print('\nCoverage of the pinned functions by the suites (UML)')
	print(report(table, listed))
	problems = verdict(table, listed, untaken_list)
	for line in problems:
		print(line)
	print(f'mm-kunit: HTML in {out / "coverage-html" / "index.html"}')
	return EXIT_OK if result.ok and not problems else EXIT_TESTS_FAILED
