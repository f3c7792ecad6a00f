# SPDX-License-Identifier: GPL-2.0
"""./run_kunit.sh replay: the replay suite's numbers, table, CSV and plot."""

from __future__ import annotations

import csv
import io
import re
import shutil
from pathlib import Path
from typing import Dict, List

import pytest

from conftest import FIXTURES, run_cli
from mmkunit import ktap, replay

REPLAY_RUN = FIXTURES / 'kunit/replay-um'
SCENARIOS = FIXTURES / 'replay/scenarios.h'


def scenario_names() -> List[str]:
	return re.findall(r'^REPLAY_SCENARIO\("([^"]+)"', SCENARIOS.read_text(), re.M)


def replay_ktap() -> str:
	return ktap.text(ktap.ktap_lines((REPLAY_RUN / 'console.log').read_text()))


def test_parse_a_real_run_has_every_scenario_in_order() -> None:
	rows = replay.parse('P1+P2', replay_ktap())
	assert len(scenario_names()) >= 10
	assert [r.scenario for r in rows] == scenario_names()
	assert all(r.build == 'P1+P2' for r in rows)
	first = rows[0]
	assert first.get('touches') == 655  # 1% of 65536 pages
	assert first.get('pages_read') >= first.get('touches')


def test_parse_rejects_a_line_without_a_metric() -> None:
	with pytest.raises(replay.ReplayError, match='no mmap_miss'):
		replay.parse('b', '# t: replay: x: touches=1 pages_read=2 '
			     'major_faults=3 readaround_faults=4\n')


def rows() -> List[replay.Row]:
	return [replay.Row('stock', 'random', (10, 2000, 9, 8, 7)),
		replay.Row('P1+P2', 'random', (10, 30, 9, 1, 99)),
		replay.Row('stock', 'stride 1021', (5, 4000, 3, 3, 0))]


def test_csv_and_table() -> None:
	parsed = list(csv.reader(io.StringIO(replay.to_csv(rows()))))
	assert parsed[0] == ['build', 'scenario', 'touches', 'pages_read',
			     'major_faults', 'readaround_faults', 'mmap_miss']
	assert parsed[2] == ['P1+P2', 'random', '10', '30', '9', '1', '99']
	assert replay.table(rows(), 'pages_read').splitlines() == [
		'pages_read   stock  P1+P2',
		'random        2000     30',
		'stride 1021   4000      -',
	]


class FakeOverlay:
	def __init__(self, fixes: Dict[str, tuple]) -> None:
		self._fixes = fixes

	def fixes(self) -> Dict[str, tuple]:
		return self._fixes


def test_replay_builds_stock_each_fix_alone_and_all() -> None:
	builds = replay.builds(FakeOverlay({'0002-a.patch': (), '0003-b.patch': ()}))
	assert builds == [('stock', ['0002-a.patch', '0003-b.patch']),
			  ('P1 only', ['0003-b.patch']),
			  ('P2 only', ['0002-a.patch']),
			  ('P1+P2', [])]
	assert replay.builds(FakeOverlay({})) == [('series', [])]


needs_gnuplot = pytest.mark.skipif(
	not shutil.which('gnuplot'),
	reason='gnuplot-nox not installed (./run_kunit.sh selftest installs it)')


@needs_gnuplot
def test_replay_command(overlay_dir: Path, kernel_tree: Path,
			tmp_path: Path) -> None:
	(overlay_dir / 'expected').write_text(
		'fails | foo.* | 0001-mm-foo-add-tests.patch\n')
	out = tmp_path / 'out'
	p = run_cli('replay', '--kernel', str(kernel_tree), '--cache',
		    str(tmp_path / 'c'), '--no-install', '--results', str(out),
		    env={'MM_KUNIT_OVERLAY': str(overlay_dir),
			 'FAKE_KUNIT_RUN': str(REPLAY_RUN)})
	assert p.returncode == 0, p.stdout + p.stderr
	table = list(csv.DictReader(io.StringIO((out / 'replay.csv').read_text())))
	assert [r['build'] for r in table] == \
		['stock'] * len(scenario_names()) + ['P1'] * len(scenario_names())
	assert (out / 'replay.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
	argv = next((tmp_path / 'c').glob('trees/*/build-um/kunit-argv.txt')).read_text()
	assert argv.count(f'--kconfig_add={replay.KCONFIG}') == 2
	assert argv.count(replay.SUITE) == 2
	assert 'random 1% under pressure' in p.stdout


@needs_gnuplot
def test_replay_command_fails_without_replay_output(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	p = run_cli('replay', '--kernel', str(kernel_tree), '--cache',
		    str(tmp_path / 'c'), '--no-install',
		    env={'MM_KUNIT_OVERLAY': str(overlay_dir),
			 'FAKE_KUNIT_RUN': str(FIXTURES / 'kunit/swap-pass')})
	assert p.returncode == 1, p.stdout + p.stderr
	assert 'mm-kunit: replay on series: mm-kunit: 38 passed' in p.stdout
