# SPDX-License-Identifier: GPL-2.0
"""The mm_filemap_replay suite's numbers: parsed, tabulated, plotted.

The suite prints one KTAP diagnostic per scenario,

  # filemap_replay_test: replay: <scenario>: touches=N pages_read=N
    major_faults=N readaround_faults=N mmap_miss=N

and ./run_kunit.sh replay runs it on several builds (stock 6.12, each fix
alone, all fixes), collecting the lines into a CSV and a PNG plot.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from mmkunit import deps
from mmkunit import overlay as ov
from mmkunit import progress
from mmkunit import runner
from mmkunit.request import EXIT_OK, EXIT_TESTS_FAILED, ReplayRequest
from mmkunit.session import Session

SUITE = 'mm_filemap_replay'
KCONFIG = 'CONFIG_MM_FILEMAP_REPLAY_KUNIT_TEST=y'
METRICS = ('touches', 'pages_read', 'major_faults', 'readaround_faults',
	   'mmap_miss')

_LINE = re.compile(r'# (?:\S+: )?replay: (?P<scenario>.+?): '
		   r'(?P<fields>(?:[a-z_]+=\d+ ?)+)$')


@dataclasses.dataclass(frozen=True)
class Row:
	build: str
	scenario: str
	values: Tuple[int, ...]  # in METRICS order

	def get(self, metric: str) -> int:
		return self.values[METRICS.index(metric)]


class ReplayError(Exception):
	"""A diagnostic line the harness cannot read."""


def parse(build: str, ktap: str) -> List[Row]:
	"""The replay lines of a run's KTAP output, in order."""
	rows: List[Row] = []
	for line in ktap.splitlines():
		m = _LINE.search(line.strip())
		if not m:
			continue
		fields = dict(f.split('=') for f in m.group('fields').split())
		missing = [k for k in METRICS if k not in fields]
		if missing:
			raise ReplayError(f'{line.strip()}: no {", ".join(missing)}')
		rows.append(Row(build, m.group('scenario'),
				tuple(int(fields[k]) for k in METRICS)))
	return rows


def to_csv(rows: Sequence[Row]) -> str:
	out = io.StringIO()
	w = csv.writer(out, lineterminator='\n')
	w.writerow(('build', 'scenario') + METRICS)
	for r in rows:
		w.writerow((r.build, r.scenario) + r.values)
	return out.getvalue()


def table(rows: Sequence[Row], metric: str) -> str:
	"""scenario x build for one metric, as aligned text."""
	builds = list(dict.fromkeys(r.build for r in rows))
	scenarios = list(dict.fromkeys(r.scenario for r in rows))
	cell: Dict[Tuple[str, str], str] = {
		(r.scenario, r.build): str(r.get(metric)) for r in rows}
	lines = [[metric] + builds]
	lines += [[s] + [cell.get((s, b), '-') for b in builds] for s in scenarios]
	widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
	return '\n'.join(
		'  '.join(c.ljust(w) if i == 0 else c.rjust(w)
			  for i, (c, w) in enumerate(zip(line, widths)))
		for line in lines)


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
set yrange [1:*]
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
		out.append(s + '\t' + '\t'.join(str(cell.get((s, b), 'NaN'))
						  for b in builds))
	return '\n'.join(out) + '\n'


def plot(rows: Sequence[Row], png: Path,
	 metrics: Sequence[str] = ('pages_read', 'major_faults'),
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
		script += (f'set title "{metric} (log scale)"\n'
			   f'plot for [i=2:{nbuilds + 1}] "{data}" using i:xtic(1) '
			   'title columnheader(i)\n')
	script += 'unset multiplot\n'
	png.unlink(missing_ok=True)
	proc = subprocess.run(['gnuplot'], input=script, text=True,
			      capture_output=True, check=False)
	if proc.returncode != 0 or not png.is_file():
		raise ReplayError(f'gnuplot failed: {proc.stderr.strip()}')


def builds(overlay: ov.Overlay) -> List[Tuple[str, List[str]]]:
	"""(label, patches left out): stock, each fix alone, all fixes.

	The fixes are P1, P2, ... in the order kernel/expected names them."""
	fixes = list(overlay.fixes())
	if not fixes:
		return [('series', [])]
	labels = {name: f'P{i}' for i, name in enumerate(fixes, 1)}
	out = [('stock', list(fixes))]
	if len(fixes) > 1:
		out += [(f'{labels[f]} only', [g for g in fixes if g != f])
			for f in fixes]
	out.append(('+'.join(labels[f] for f in fixes), []))
	return out


def run_replay(s: Session, req: ReplayRequest) -> int:
	"""The suite on each build; the table, the CSV and the plot."""
	s.ensure_deps(deps.REPLAY)
	opts = s.run_options(filter_glob=SUITE)
	opts.kunit_args = [f'--kconfig_add={KCONFIG}', *opts.kunit_args]
	base = s.results_dir(f'{s.build.arch}-replay')
	tree = s.prepared_tree()
	rows: List[Row] = []
	failed: List[str] = []
	started = time.monotonic()
	with tree.locked():
		try:
			for label, without in builds(s.overlay):
				tree.prepare(s.overlay.without(without),
					     refresh_source=s.refresh_source)
				progress.progress(f'replay on {label}')
				result = runner.run_kunit(
					tree.src, tree.build_dir(s.build_key), opts,
					base / re.sub(r'[^A-Za-z0-9]+', '-', label))
				ktap = result.results_dir / 'ktap.log'
				found = parse(label, ktap.read_text()
					      if ktap.is_file() else '')
				if not result.ok or not found:
					failed.append(label)
					print(f'mm-kunit: replay on {label}: '
					      f'{result.error or result.summary()}')
					for case in result.failed:
						print(f'mm-kunit: {case.status.value}: {case.name}')
				rows += found
		finally:
			tree.prepare(s.overlay, refresh_source=s.refresh_source)
	(base / 'replay.csv').write_text(to_csv(rows))
	for metric in METRICS[1:]:
		print(table(rows, metric) + '\n')
	if rows:
		plot(rows, base / 'replay.png',
		     title=f'mm_filemap_replay ({s.build.arch}): stock vs the '
		     'mmap_miss proposal')
	print(f'mm-kunit: replay table in {base / "replay.csv"}'
	      + (f' and {base / "replay.png"}' if rows else ''))
	print(f'mm-kunit: replay took {time.monotonic() - started:.0f} s')
	return EXIT_OK if not failed else EXIT_TESTS_FAILED
