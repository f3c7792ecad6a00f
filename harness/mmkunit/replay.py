# SPDX-License-Identifier: GPL-2.0
"""The replay suites' numbers: parsed, tabulated, plotted, and held
against the bounds their scenario table states.

A replay (REPLAYS) is a pair of suites, one a scale, that replay one
change's workload through the real code and print one KTAP diagnostic a
scenario,

  # filemap_replay_test: replay: <scenario>: touches=N pages_read=N ...

with the replay's metrics. ./run_kunit.sh replay NAME runs one scale of
them on several builds (the before-fix trees of the overlay that lack the
replay's fixes, builds(), and the series itself; the series alone for a
replay of no fix, whose rows run both ways the tree has), collects the
lines into a CSV and a PNG plot, and checks the builds against the
bounds: the mmap_miss replay's against the build that lacks every fix
(verdicts()), the others' as counts the build with the change must give
and the build without it must not (count_verdicts()). A replay may run
the build with the change again in further configurations (Replay.also),
columns it reports without bounds.
"""

from __future__ import annotations

import csv
import dataclasses
import enum
import io
import math
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from mmkunit import arches
from mmkunit import deps
from mmkunit import jobs
from mmkunit import options as options_
from mmkunit import overlay as ov
from mmkunit import progress
from mmkunit import runner
from mmkunit import trees
from mmkunit.request import EXIT_OK, EXIT_TESTS_FAILED, ReplayRequest, Scale
from mmkunit.session import HarnessError, Session

SUITES = {Scale.SMALL: 'mm_filemap_replay',
	  Scale.SEED: 'mm_filemap_replay_seed'}
KCONFIG = 'CONFIG_MM_FILEMAP_REPLAY_KUNIT_TEST=y'
# A scenario keeps KUnit's runner waiting for minutes, which a hung-task
# detector in the configuration (20 s, then a panic) would take for a
# stall: the replay's builds turn it off, and have SEED_TIMEOUT for a bound.
HUNG_TASK = 'CONFIG_DETECT_HUNG_TASK=y'
NO_HUNG_TASK = 'CONFIG_DEFAULT_HUNG_TASK_TIMEOUT=0'
SCENARIOS = 'mm/tests/filemap_replay_scenarios.h'
METRICS = ('touches', 'pages_read', 'page_size', 'major_faults',
	   'readaround_faults', 'refaults', 'refault_activations', 'mmap_miss')
# What the tables, the CSV and the plot show: the metrics and GiB read.
GIB_READ = 'gib_read'
COLUMNS = ('touches', 'pages_read', GIB_READ, 'major_faults',
	   'readaround_faults', 'refaults', 'refault_activations', 'mmap_miss')
# Memory the kernel needs besides the scenario's page cache: itself, the
# test's arrays, the page tables and the xarray's shadow entries, and
# enough above the watermarks that kswapd never wakes.
HEADROOM = 1 << 30
# The build the bounds hold for, and the stock build it is compared with.
STOCK = 'stock'

_LINE = re.compile(r'# (?:\S+: )?replay: (?P<scenario>.+?): '
		   r'(?P<fields>(?:[a-z][a-z_0-9]*=\d+ ?)+)$')
# A row: one initialiser of struct filemap_replay_scenario, its fields
# one a line.
_ROW = re.compile(r'^\{\n(?P<fields>(?:\t\.\w+ = [^\n]*,\n)*)\},$', re.M)
_FIELD = re.compile(r'^\t\.(\w+) = (.*),$', re.M)
# A row's scale: an enumerator ending in the scale's name.
_SCALES = {'_SMALL': Scale.SMALL, '_SEED': Scale.SEED}


def _scale(value: str) -> Scale:
	for suffix, scale in _SCALES.items():
		if re.fullmatch(r'[A-Z]+' + suffix, value):
			return scale
	raise KeyError(value)



@dataclasses.dataclass(frozen=True)
class Replay:
	"""One change's replay: its suites, its table and what it reports."""
	name: str
	# The change, as the plot's title names it.
	change: str
	suites: Mapping[Scale, str]
	kconfig: str
	scenarios: str
	# The fields of its diagnostic lines; what the tables and the CSV
	# show; what the plot shows.
	metrics: Tuple[str, ...]
	columns: Tuple[str, ...]
	plotted: Tuple[str, ...]
	# The fixes of the expected list whose reverts are its builds
	# without the change.
	fixes: FrozenSet[str]
	# Bounds against the build without every fix (.saves, .same_pct:
	# scenarios()), else counts the build with the change gives
	# (want_, min_, max_: cases()).
	relative: bool = False
	# A port's own patches are the change (the 6.12 port's mmap_miss).
	port_patches: bool = False
	# Two CPUs race in it: never built on one.
	smp: bool = False
	# Its scenarios' page cache sizes the kernel's memory (memory()).
	sized: bool = False
	# The configuration it runs in (kunit-configs/ARCH-NAME.config)
	# where none is named.
	config: Optional[str] = None
	# The kernel's memory at each scale (mem=, -m), where kunit.py's 1 GiB
	# cannot hold it, or holds it only under pressure of its own.
	memory: Tuple[Tuple[Scale, str], ...] = ()
	# The columns printed as tables (the CSV has every column); all if
	# empty.
	tabled: Tuple[str, ...] = ()
	# Further configurations (kunit-configs/ARCH-NAME.config), each added
	# to the one it runs in: the build with the change again, labelled
	# "BUILD (NAME)", reported, not held to the bounds (they are the
	# replay's configuration's). Named by --config, one of them is the
	# configuration of every build, each reported alone.
	also: Tuple[str, ...] = ()


MMAP_MISS = 'mmap-miss'
SWAP_RA_METRICS = ('faults', 'major_faults', 'swap_ra', 'swap_ra_hit',
		   'hit_permille', 'seq_major_faults', 'seq_ra', 'seq_ra_hit',
		   'rand_major_faults', 'rand_ra', 'rand_ra_hit', 'evicted')
PROTECT_METRICS = ('hot_reads', 'hot_refaults', 'stream_reads',
		   'stream_refaults', 'refaults', 'agings', 'turnovers')
# The seed's rounds (FTR_ROUNDS in filemap_thrash_replay_kunit.h).
THRASH_ROUNDS = 10
THRASH_TOTALS = ('reads', 'swapouts', 'fill_swapouts', 'settled',
		 'reads_last')
THRASH_METRICS = THRASH_TOTALS + tuple(
	f'{m}_{r}' for r in range(THRASH_ROUNDS) for m in ('reads', 'swapouts'))
REPLAYS: Dict[str, Replay] = {r.name: r for r in (
	Replay(MMAP_MISS, 'the mmap_miss change', SUITES, KCONFIG, SCENARIOS,
	       METRICS, COLUMNS, (GIB_READ, 'major_faults'),
	       frozenset({'faulting-address', 'retry', 'seq-exec',
			  'locked-folio'}),
	       relative=True, port_patches=True, sized=True),
	Replay('mlock-recheck', 'the PTE recheck before a major fault',
	       {Scale.SMALL: 'mm_filemap_recheck_replay',
		Scale.SEED: 'mm_filemap_recheck_replay_seed'},
	       'CONFIG_MM_FILEMAP_RECHECK_REPLAY_KUNIT_TEST=y',
	       'mm/tests/filemap_recheck_replay_scenarios.h',
	       ('faults', 'major_faults', 'pages_read', 'ptl_waits'),
	       ('faults', 'major_faults', 'pages_read', 'ptl_waits'),
	       ('major_faults', 'ptl_waits'), frozenset({'pte-recheck'}),
	       smp=True),
	# Both algorithms are in the tree: one build, no revert.
	Replay('swap-ra', 'VMA-based swap readahead',
	       {Scale.SMALL: 'mm_swap_ra_replay',
		Scale.SEED: 'mm_swap_ra_replay_seed'},
	       'CONFIG_MM_SWAP_RA_REPLAY_KUNIT_TEST=y',
	       'mm/tests/swap_ra_replay_scenarios.h',
	       SWAP_RA_METRICS, SWAP_RA_METRICS,
	       ('hit_permille', 'major_faults'), frozenset()),
	Replay('mglru-protect',
	       "MGLRU's protection of page cache read through file descriptors",
	       {Scale.SMALL: 'mm_vmscan_protect_replay',
		Scale.SEED: 'mm_vmscan_protect_replay_seed'},
	       'CONFIG_MM_VMSCAN_PROTECT_REPLAY_KUNIT_TEST=y',
	       'mm/tests/vmscan_protect_replay_scenarios.h',
	       PROTECT_METRICS, PROTECT_METRICS,
	       ('hot_refaults', 'refaults'),
	       frozenset({'mglru-placement', 'mglru-saturated'}),
	       config='mglru'),
	Replay('thrash', 'scanning anon pages on file refaults',
	       {Scale.SMALL: 'mm_filemap_thrash_replay',
		Scale.SEED: 'mm_filemap_thrash_replay_seed'},
	       'CONFIG_MM_FILEMAP_THRASH_REPLAY_KUNIT_TEST=y',
	       'mm/tests/filemap_thrash_replay_scenarios.h',
	       THRASH_METRICS, THRASH_METRICS, ('reads', 'swapouts'),
	       frozenset({'refault-stops-trim'}),
	       config='distro', tabled=THRASH_TOTALS,
	       # The seed predates the multi-gen LRU, and the change does
	       # not act under it: what it does there.
	       also=('mglru',),
	       # x86_64's distro configuration splits memory into 4 nodes
	       # (numa=fake=4): each node holds a scenario's memcg, so that
	       # no node's kswapd reclaims it meanwhile.
	       memory=((Scale.SMALL, '4G'), (Scale.SEED, '12G'))),
)}

class Expect(enum.Enum):
	SAVES = 'saves'		# stock reads at least n times as many pages
	SAME = 'same_pct'	# within n per cent of stock
	ANY = 'none'		# no bound


@dataclasses.dataclass(frozen=True)
class Scenario:
	"""A row of the scenario table, as far as the harness needs it."""
	scale: Scale
	name: str
	file_pages: int
	cache_pages: int
	expect: Expect
	bound: int = 0


@dataclasses.dataclass(frozen=True)
class Row:
	build: str
	scenario: str
	values: Tuple[int, ...]  # in the order of metrics
	metrics: Tuple[str, ...] = METRICS

	def get(self, metric: str) -> float:
		if metric == GIB_READ:
			return round(self.get('pages_read') * self.get('page_size')
				     / (1 << 30), 2)
		return self.values[self.metrics.index(metric)]


class ReplayError(HarnessError):
	"""A diagnostic line or a scenario the harness cannot read."""


def _rows(text: str) -> List[Tuple[str, Dict[str, str]]]:
	"""Each row of a scenario table (a struct's initialisers, one field
	a line): its description and its fields, as written."""
	rows = list(_ROW.finditer(text))
	if len(rows) != len(re.findall(r'^\{$', text, re.M)):
		raise ReplayError('a scenario is not written one field a line '
				  '(a tab, .field = value,)')
	out = []
	for m in rows:
		fields = dict(_FIELD.findall(m.group('fields')))
		out.append((fields.get('desc', '').strip('"'), fields))
	return out


def scenarios(text: str) -> List[Scenario]:
	"""The rows of the scenario table (filemap_replay_scenarios.h)."""
	out: List[Scenario] = []
	for name, fields in _rows(text):
		bounds = [b for b in (Expect.SAVES, Expect.SAME)
			  if b.value in fields]
		try:
			scale = _scale(fields['scale'])
			file_pages = int(fields['file_pages'])
			cache_pages = int(fields['cache_pages'])
			bound = int(fields[bounds[0].value]) if bounds else 0
		except (KeyError, ValueError) as e:
			raise ReplayError(f'scenario "{name}": no scale, size or '
					  f'bound the harness can read ({e})')
		if len(bounds) > 1:
			raise ReplayError(f'scenario "{name}": both .saves and '
					  '.same_pct')
		out.append(Scenario(scale, name, file_pages, cache_pages,
				    bounds[0] if bounds else Expect.ANY, bound))
	return out


def memory(rows: Sequence[Scenario], page_size: int) -> str:
	"""The mem= a kernel of pages of page_size bytes needs to hold the
	largest page cache of rows with HEADROOM to spare, in whole GiB."""
	cached = max(min(s.file_pages, s.cache_pages) for s in rows)
	return f'{math.ceil((cached * page_size + HEADROOM) / (1 << 30))}G'


def parse(build: str, ktap: str,
	  metrics: Tuple[str, ...] = METRICS) -> List[Row]:
	"""The replay lines of a run's KTAP output, in order."""
	rows: List[Row] = []
	for line in ktap.splitlines():
		m = _LINE.search(line.strip())
		if not m:
			continue
		fields = dict(f.split('=') for f in m.group('fields').split())
		missing = [k for k in metrics if k not in fields]
		if missing:
			raise ReplayError(f'{line.strip()}: no {", ".join(missing)}')
		rows.append(Row(build, m.group('scenario'),
				tuple(int(fields[k]) for k in metrics), metrics))
	return rows


def to_csv(rows: Sequence[Row], columns: Sequence[str] = COLUMNS) -> str:
	out = io.StringIO()
	w = csv.writer(out, lineterminator='\n')
	w.writerow(('build', 'scenario') + tuple(columns))
	for r in rows:
		w.writerow((r.build, r.scenario) + tuple(r.get(c) for c in columns))
	return out.getvalue()


def _fmt(value: float) -> str:
	return f'{value:.2f}' if isinstance(value, float) else str(value)


def table(rows: Sequence[Row], metric: str) -> str:
	"""scenario x build for one metric, as aligned text."""
	builds = list(dict.fromkeys(r.build for r in rows))
	scenarios = list(dict.fromkeys(r.scenario for r in rows))
	cell: Dict[Tuple[str, str], str] = {
		(r.scenario, r.build): _fmt(r.get(metric)) for r in rows}
	lines = [[metric] + builds]
	lines += [[s] + [cell.get((s, b), '-') for b in builds] for s in scenarios]
	widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
	return '\n'.join(
		'  '.join(c.ljust(w) if i == 0 else c.rjust(w)
			  for i, (c, w) in enumerate(zip(line, widths)))
		for line in lines)


@dataclasses.dataclass(frozen=True)
class Verdict:
	build: str
	scenario: str
	expect: Expect
	bound: int
	stock: int
	pages: int
	# The label of the build stock is, the one without the change.
	baseline: str = STOCK

	@property
	def holds(self) -> bool:
		if self.expect is Expect.SAVES:
			return self.stock >= self.bound * self.pages
		return abs(self.pages - self.stock) * 100 <= self.bound * self.stock

	@property
	def ratio(self) -> str:
		return (f'{self.stock / self.pages:.1f}x fewer' if self.pages
			else 'none')

	@property
	def want(self) -> str:
		return (f'at least {self.bound}x fewer'
			if self.expect is Expect.SAVES
			else f'within {self.bound}% of {self.baseline}')

	@property
	def verdict(self) -> str:
		return 'holds' if self.holds else 'FAILS'

	def __str__(self) -> str:
		return (f'{self.build}: {self.scenario}: {self.pages} pages read, '
			f'{self.baseline} {self.stock} ({self.ratio}); must be '
			f'{self.want}: '
			f'{self.verdict}')


def verdicts(rows: Sequence[Row], table_rows: Sequence[Scenario],
	     baseline: str = STOCK) -> List[Verdict]:
	"""Every build's pages read against the baseline's (the build
	without any fix), by the bound of each scenario that has one."""
	pages = {(r.build, r.scenario): r.get('pages_read') for r in rows}
	out = []
	for sc in table_rows:
		stock = pages.get((baseline, sc.name))
		if sc.expect is Expect.ANY or stock is None:
			continue
		out += [Verdict(r.build, sc.name, sc.expect, sc.bound, int(stock),
				int(r.get('pages_read')), baseline)
			for r in rows if r.scenario == sc.name and r.build != baseline]
	return out


def summary(vs: Sequence[Verdict], full: str) -> str:
	"""The full build's verdicts, one a line, and how many bounds each
	partial build fails."""
	baseline = vs[0].baseline if vs else STOCK
	out = [f'bounds, {full} against {baseline}:']
	out += [f'  {v.scenario}: {v.ratio} ({v.want}): {v.verdict}'
		for v in vs if v.build == full]
	for build in dict.fromkeys(v.build for v in vs if v.build != full):
		mine = [v for v in vs if v.build == build]
		out.append(f'  {build}: fails {sum(not v.holds for v in mine)} '
			   f'of {len(mine)}')
	return '\n'.join(out)


def wrong_bounds(vs: Sequence[Verdict], full: str) -> List[str]:
	"""What is wrong with the verdicts: the build with the whole change
	(full) must hold every bound; a build with only part of it must fail
	every .saves bound (either half alone leaves the misses cancelled
	by the other: filemap_replay_scenarios.h)."""
	wrong = [f'{v}' for v in vs if v.build == full and not v.holds]
	wrong += [f'{v}, but part of the change must not hold it'
		  for v in vs if v.build != full and v.expect is Expect.SAVES
		  and v.holds]
	return wrong


# A bound of a table of counts: a metric the build with the change counts
# exactly (want_), at least (min_) or at most (max_).
_BOUND = re.compile(r'(want|min|max)_([a-z][a-z_0-9]*)$')
# A row whose counts the build without the change must not give.
REVERTED_FAILS = 'reverted_fails'


@dataclasses.dataclass(frozen=True)
class Bound:
	kind: str
	metric: str
	value: int

	def holds(self, count: int) -> bool:
		if self.kind == 'want':
			return count == self.value
		if self.kind == 'min':
			return count >= self.value
		return count <= self.value

	def __str__(self) -> str:
		op = {'want': '=', 'min': '>=', 'max': '<='}[self.kind]
		return f'{self.metric} {op} {self.value}'


@dataclasses.dataclass(frozen=True)
class Case:
	"""A row of a table of counts, as far as the harness needs it."""
	scale: Scale
	name: str
	bounds: Tuple[Bound, ...]
	reverted_fails: bool


def cases(text: str, metrics: Sequence[str]) -> List[Case]:
	"""The rows of a table of counts (a struct's initialisers, one field
	a line, as _rows() reads them) with their bounds, each on one of
	metrics."""
	out: List[Case] = []
	for name, fields in _rows(text):
		try:
			scale = _scale(fields['scale'])
			bounds = tuple(Bound(b.group(1), b.group(2), int(v))
				       for k, v in fields.items()
				       for b in [_BOUND.match(k)] if b)
			fails = {'true': True, 'false': False}[
				fields[REVERTED_FAILS]]
		except (KeyError, ValueError) as e:
			raise ReplayError(f'scenario "{name}": no scale, bound or '
					  f'{REVERTED_FAILS} the harness can read '
					  f'({e})')
		if not bounds:
			raise ReplayError(f'scenario "{name}": no bound')
		unknown = [b.metric for b in bounds if b.metric not in metrics]
		if unknown:
			raise ReplayError(f'scenario "{name}": a bound on '
					  f'{", ".join(unknown)}, which the replay '
					  f'does not count ({", ".join(metrics)})')
		out.append(Case(scale, name, bounds, fails))
	return out


@dataclasses.dataclass(frozen=True)
class CountVerdict:
	build: str
	case: Case
	# The bounds the build's counts do not hold.
	broken: Tuple[Bound, ...]
	# None: the build printed no line for the row.
	counts: Optional[Tuple[Tuple[str, int], ...]]
	# Whether the build must hold every bound (it has the change), or
	# fail one (the row says the build without it must).
	must_hold: bool

	@property
	def right(self) -> bool:
		if self.counts is None:
			return False
		return not self.broken if self.must_hold else bool(self.broken)

	def __str__(self) -> str:
		if self.counts is None:
			return f'{self.build}: {self.case.name}: no counts'
		got = ', '.join(f'{m} {v}' for m, v in self.counts)
		if self.must_hold:
			want = 'must hold ' + ', '.join(map(str, self.case.bounds))
		else:
			want = 'must not hold them all, the change is what gives them'
		return (f'{self.build}: {self.case.name}: {got}; {want}: '
			f'{"holds" if not self.broken else "breaks " + ", ".join(map(str, self.broken))}')


def count_verdicts(rows: Sequence[Row], table_rows: Sequence[Case],
		   full: str) -> List[CountVerdict]:
	"""Each build's counts against each row's bounds: the full build
	(the change as it is) holds them all; another build (the change
	reverted) fails one where the row says the change gives them, and
	holds them all where it says the change makes no difference."""
	by_key = {(r.build, r.scenario): r for r in rows}
	out = []
	for case in table_rows:
		for build in dict.fromkeys(r.build for r in rows):
			row = by_key.get((build, case.name))
			if row is None:
				out.append(CountVerdict(build, case, case.bounds,
							None, True))
				continue
			broken = tuple(b for b in case.bounds
				       if not b.holds(int(row.get(b.metric))))
			counts = tuple((m, int(row.get(m)))
				       for m in dict.fromkeys(b.metric
							      for b in case.bounds))
			out.append(CountVerdict(
				build, case, broken, counts,
				build == full or not case.reverted_fails))
	return out


def count_summary(vs: Sequence[CountVerdict]) -> str:
	out = ['bounds:']
	out += [f'  {v.build}: {v.case.name}: '
		+ ('no counts' if v.counts is None else 'holds' if not v.broken
		   else 'fails ' + ', '.join(map(str, v.broken)))
		+ ('' if v.right else ' (WRONG)') for v in vs]
	return '\n'.join(out)


_GNUPLOT = '''\
set terminal pngcairo noenhanced size 1400,{height} font "sans,10"
set output "{png}"
set datafile separator "\\t"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside right top
set grid ytics
set logscale y
set yrange [0.01:*]
set xtics rotate by -30 left nomirror
set bmargin 8
set multiplot layout {panels},1 title "{title}"
'''


def wide(rows: Sequence[Row], metric: str) -> str:
	"""One metric as tab-separated scenario x build, with a header."""
	builds = list(dict.fromkeys(r.build for r in rows))
	scenarios = list(dict.fromkeys(r.scenario for r in rows))
	cell = {(r.scenario, r.build): r.get(metric) for r in rows}
	out = ['scenario\t' + '\t'.join(builds)]
	for s in scenarios:
		out.append(s + '\t' + '\t'.join(_fmt(cell[(s, b)])
						  if (s, b) in cell else 'NaN'
						  for b in builds))
	return '\n'.join(out) + '\n'


def plot(rows: Sequence[Row], png: Path,
	 metrics: Sequence[str] = (GIB_READ, 'major_faults'),
	 title: str = 'mm_filemap_replay') -> None:
	"""A PNG with a clustered bar chart per metric, by gnuplot.

	The data gnuplot reads is kept next to it, as <metric>.tsv.
	"""
	if not shutil.which('gnuplot'):
		raise ReplayError('gnuplot is missing (apt-get install gnuplot-nox)')
	nbuilds = len(dict.fromkeys(r.build for r in rows))
	script = _GNUPLOT.format(png=png, panels=len(metrics), title=title,
				 height=460 * len(metrics))
	for metric in metrics:
		data = png.with_name(f'{metric}.tsv')
		data.write_text(wide(rows, metric))
		# A log scale has no place for a panel of zeros alone.
		zeros = all(r.get(metric) <= 0 for r in rows)
		script += ('unset logscale y\nset yrange [0:1]\n'
			   f'set title "{metric} (0 in every build)"\n'
			   if zeros else
			   'set logscale y\nset yrange [0.01:*]\n'
			   f'set title "{metric} (log scale)"\n')
		script += (f'plot for [i=2:{nbuilds + 1}] "{data}" using i:xtic(1) '
			   'title columnheader(i)\n')
	script += 'unset multiplot\n'
	png.unlink(missing_ok=True)
	proc = subprocess.run(['gnuplot'], input=script, text=True,
			      capture_output=True, check=False)
	if proc.returncode != 0 or not png.is_file():
		raise ReplayError(f'gnuplot failed: {proc.stderr.strip()}')


def builds(overlay: ov.Overlay,
	   fixes: Optional[FrozenSet[str]] = None) -> List[ov.BeforeFix]:
	"""The builds to compare: the tree that lacks every fix (the one
	the bounds are against, first), each tree that lacks some, and the
	series with every fix (last).

	A port's fixes are its own patches, P1, P2, ... in the order the
	expected list names them: stock, "P2 only", ..., "P1+P2". A kernel
	that has them upstream is built with each revert of fixes (all
	reverts if None): "reverted" (all), "retry reverted", ..., and "as
	merged". No fixes (a replay of two ways both in the tree): the
	series alone."""
	trees = overlay.before_fix_trees()
	if fixes is not None and not fixes:
		return [ov.BeforeFix('series', ())]
	if fixes is not None and trees and trees[-1].revert:
		trees = [t for t in trees if set(t.lacking) <= fixes]
	if not trees:
		return [ov.BeforeFix('series', ())]
	every = trees[-1].lacking
	if trees[-1].revert:
		def label(lacking: Sequence[str]) -> str:
			return ('reverted' if lacking == every
				else ' '.join(lacking) + ' reverted')
		full = 'as merged'
	else:
		p = {name: f'P{i}' for i, name in enumerate(every, 1)}

		def label(lacking: Sequence[str]) -> str:
			return (STOCK if lacking == every else '+'.join(
				p[f] for f in every if f not in lacking) + ' only')
		full = '+'.join(p.values())
	partial = sorted((dataclasses.replace(t, label=label(t.lacking))
			  for t in trees[:-1]), key=lambda t: t.label)
	return ([dataclasses.replace(trees[-1], label=label(every))] + partial
		+ [ov.BeforeFix(full, ())])


# The configuration the seed scale runs in unless one is named, where the
# arch has it and its configuration is SMP (kunit-configs/um-onecpu.config
# says why).
ONE_CPU = 'onecpu'
SMP = 'CONFIG_SMP=y'
# The longest a seed-scale build may run before it counts as hung.
SEED_TIMEOUT = 3600
# KUnit's limit on one test case (lib/kunit/try-catch.c). A seed-scale
# scenario that reads 10^8 pages takes minutes under QEMU's TCG: more than
# this where the limit is fixed (6.12), not where KUnit multiplies it by a
# case's speed attribute (7.3: x12 for KUNIT_SPEED_VERY_SLOW, which the
# seed cases are).
KUNIT_CASE_TIMEOUT = 300


def scales_case_limit(source: Path) -> bool:
	"""Whether the KUnit of the kernel source multiplies its limit on a
	test case by the case's speed attribute."""
	test_c = source / 'lib/kunit/test.c'
	return test_c.is_file() and 'kunit_timeout_mult' in test_c.read_text()


def _with_configs(opts: runner.RunOptions,
		  configs: Sequence[Path]) -> runner.RunOptions:
	"""opts with the options and boot options of configurations
	(ARCH-NAME.config) added."""
	return dataclasses.replace(
		opts, kconfig_add=[*opts.kconfig_add,
				   *options_.config_options(configs)],
		kernel_args=[*opts.kernel_args,
			     *options_.config_kernel_args(configs)])


def _hung_task_off(opts: runner.RunOptions) -> runner.RunOptions:
	"""opts with the hung-task detector off where the arch's kunitconfig
	or a configuration's options (--kconfig_add) turn it on."""
	options = [*opts.kconfig_add, *(line for c in opts.kunitconfigs
					for line in c.read_text().splitlines())]
	if HUNG_TASK not in options or NO_HUNG_TASK in opts.kconfig_add:
		return opts
	return dataclasses.replace(opts,
				   kconfig_add=[*opts.kconfig_add, NO_HUNG_TASK])


def run_replay(s: Session, req: ReplayRequest) -> int:
	"""The suite of one scale of a replay on each build, in req.workers
	trees at once; the table, the CSV, the plot and the bounds."""
	rp = REPLAYS[req.replay]
	if req.scale not in rp.suites:
		raise ReplayError(f'replay {rp.name} has no {req.scale.value} '
				  'scale')
	# A further configuration named (--config mglru): every build in it,
	# reported alone.
	named = s.build.config if s.build.config in rp.also else None
	if named and req.bounded:
		raise ReplayError(f'replay {rp.name} has no bounds in '
				  f'configuration {named}: --bounded runs none '
				  'of its builds')
	# The options and boot options of the replay's configuration, added
	# to another one that is named (--config debug: its checkers over the
	# replay).
	needs: List[Path] = []
	if rp.config:
		needed = s.config_file(f'{s.build.arch}-{rp.config}.config')
		if not needed.is_file():
			raise ReplayError(f'replay {rp.name} runs in configuration '
					  f'{rp.config}, which {s.build.arch} has not')
		if s.build.config is None:
			s = s.with_config(rp.config)
		elif s.build.config != rp.config:
			needs = [needed]
	# Each further configuration it runs in, but the one named.
	also = {name: s.config_file(f'{s.build.arch}-{name}.config')
		for name in rp.also if name != named and not req.bounded}
	for name, path in also.items():
		if not path.is_file():
			raise ReplayError(f'replay {rp.name} runs in configuration '
					  f'{name} too, which {s.build.arch} has '
					  'not')
	s.ensure_deps(deps.REPLAY)
	if req.scale is Scale.SEED and not rp.smp and not s.build.config and \
	   s.config_file(f'{s.build.arch}-{ONE_CPU}.config').is_file() and \
	   SMP in s.config_file(f'{s.build.arch}.config').read_text().split():
		s = s.with_config(ONE_CPU)
	text = s.overlay.contents.get(rp.scenarios, b'').decode()
	if rp.relative:
		table_rows: Sequence[Scenario] = [
			sc for sc in scenarios(text) if sc.scale is req.scale]
		names = [sc.name for sc in table_rows]
	else:
		counted = [c for c in cases(text, rp.metrics)
			   if c.scale is req.scale]
		names = [c.name for c in counted]
	if not names:
		raise ReplayError(f'{rp.scenarios}: no {req.scale.value} scenario')
	if not rp.fixes and not rp.relative and \
	   any(c.reverted_fails for c in counted):
		raise ReplayError(f'{rp.scenarios}: a row has reverted_fails, '
				  f'but replay {rp.name} has no build without '
				  'its change')
	labels = builds(s.overlay, rp.fixes)
	if rp.fixes and not rp.port_patches and not labels[0].revert:
		raise ReplayError(
			f'replay {rp.name}: the overlay for this kernel has no '
			f'revert of {", ".join(sorted(rp.fixes))} (kernel/reverts '
			'of 7.3 has)')
	opts = s.run_options(filter_glob=rp.suites[req.scale])
	opts = _with_configs(opts, needs)
	opts = dataclasses.replace(opts,
				   kconfig_add=[*opts.kconfig_add, rp.kconfig])
	if req.scale is Scale.SEED:
		opts = dataclasses.replace(opts, timeout=SEED_TIMEOUT)
	scale_memory = dict(rp.memory).get(req.scale)
	if scale_memory:
		opts = dataclasses.replace(opts, memory=scale_memory)
	if req.scale is Scale.SEED and rp.relative and rp.sized:
		opts = dataclasses.replace(opts, memory=memory(
			table_rows, arches.ARCHES[s.build.arch].page_size))
	suffix = '' if rp.name == MMAP_MISS else f'-{rp.name}'
	base = s.results_dir(f'{s.build.arch}-replay{suffix}-{req.scale.value}')
	tree = s.sources.prepared_tree()
	opts = s.with_accel(opts, tree)
	if req.scale is Scale.SEED and '-accel tcg' in opts.qemu_args and \
	   not scales_case_limit(s.sources.unmodified()):
		raise ReplayError(
			f'the seed scale on {s.build.arch} needs KVM: under TCG a '
			f'scenario outlasts KUnit\'s {KUNIT_CASE_TIMEOUT} s limit '
			'per test case (UML runs it in minutes)')

	# The replay's own builds, and the build with the change again in
	# each further configuration, its options added, in a build
	# directory of its own.
	Column = Tuple[Optional[str], Session, runner.RunOptions,
		       Sequence[ov.BeforeFix]]
	own: Column = (named, s, _hung_task_off(opts), labels)
	further: List[Column] = [
		(name, s.apart(name), _hung_task_off(_with_configs(opts, [path])),
		 labels[-1:]) for name, path in also.items()]

	def in_column(label: str, config: Optional[str]) -> str:
		return label if config is None else f'{label} ({config})'

	def job(b: ov.BeforeFix, config: Optional[str], cs: Session,
		copts: runner.RunOptions) -> jobs.Job:
		label = in_column(b.label, config)

		def run(t: trees.PreparedTree) -> runner.RunResult:
			cs.put_series(t, b.extra, cs.overlay.without(b.without))
			progress.progress(f'replay {rp.name} ({req.scale.value}) '
					  f'on {label}'
					  + (f', mem={copts.memory}'
					     if copts.memory else ''))
			return runner.run_kunit(
				t.src, t.build_dir(cs.build_key), copts,
				base / re.sub(r'[^A-Za-z0-9]+', '-', label).strip('-'),
				prebuilt_config=True)
		return run

	started = time.monotonic()
	# The last build (all fixes) is the quickest: it goes first, alone,
	# while the other trees are made from its tree. Where CPUs race, the
	# builds run in turn: two kernels at once would leave a CPU of each
	# spinning for a lock the other's descheduled CPU holds.
	workers = 1 if rp.smp else req.workers
	results: Dict[str, object] = {}
	with tree.locked():
		# The further configurations first: one that does not hold
		# stops the replay before its longest builds.
		for config, cs, copts, built in [*further, own]:
			order = list(reversed(built))
			results.update(zip(
				(in_column(b.label, config) for b in order),
				jobs.run_jobs(cs, tree, workers,
					      [job(b, config, cs, copts)
					       for b in order], copts)))
	shown = [in_column(b.label, config)
		 for config, _, _, built in [own, *further] for b in built]
	rows: List[Row] = []
	failed: List[str] = []
	for label in shown:
		result = results[label]
		assert isinstance(result, runner.RunResult)
		ktap = result.results_dir / 'ktap.log'
		found = parse(label, ktap.read_text() if ktap.is_file() else '',
			      rp.metrics)
		if not result.ok or sorted(r.scenario for r in found) != \
		   sorted(names):
			failed.append(label)
			print(f'mm-kunit: replay on {label}: '
			      f'{result.error or result.summary()}')
			for case in result.failed:
				print(f'mm-kunit: {case.status.value}: {case.name}')
		rows += found
	(base / 'replay.csv').write_text(to_csv(rows, rp.columns))
	for metric in rp.tabled or rp.columns[1:]:
		print(table(rows, metric) + '\n')
	if rows:
		plot(rows, base / 'replay.png', rp.plotted,
		     title=f'replay {rp.name}, {req.scale.value} scale '
		     f'({s.build.arch}): without and with {rp.change}')
	print(f'mm-kunit: replay table in {base / "replay.csv"}'
	      + (f' and {base / "replay.png"}' if rows else ''))
	wrong: List[str] = []
	# The bounds are the replay's configuration's: its builds' alone.
	bounded = [r for r in rows if r.build in {b.label for b in labels}]
	if named:
		whose = (f"configuration {rp.config}'s" if rp.config
			 else "the arch's configuration's")
		print(f'mm-kunit: replay {rp.name} in configuration {named}: '
		      f'reported, not held to its bounds (they are {whose})')
	elif len(labels) > 1 and not failed and rp.relative:
		vs = verdicts(bounded, table_rows, labels[0].label)
		print(summary(vs, labels[-1].label))
		wrong = wrong_bounds(vs, labels[-1].label)
	elif not rp.relative and not failed:
		cvs = count_verdicts(bounded, counted, labels[-1].label)
		print(count_summary(cvs))
		wrong = [str(v) for v in cvs if not v.right]
	for w in wrong:
		print(f'mm-kunit: replay: {w}')
	print(f'mm-kunit: replay took {time.monotonic() - started:.0f} s')
	return EXIT_OK if not failed and not wrong else EXIT_TESTS_FAILED
