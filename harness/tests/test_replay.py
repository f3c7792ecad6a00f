# SPDX-License-Identifier: GPL-2.0
"""./run_kunit.sh replay: the replay suite's numbers, table, CSV and plot."""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

from conftest import FIXTURES, REPO, run_cli
from mmkunit import ktap, replay
from mmkunit import overlay as ov
from mmkunit.request import Scale

# The small scale's runs: stock, and P1+P2.
REPLAY_RUN = FIXTURES / 'kunit/replay-um'
REPLAY_FULL_RUN = FIXTURES / 'kunit/replay-um-full'
SCENARIOS = REPO / 'kernel/mm/tests/filemap_replay_scenarios.h'


def scenario_names(scale: str = 'RP_SMALL') -> List[str]:
	return re.findall(rf'^\t\.scale = {scale},\n\t\.desc = "([^"]+)",$',
			  SCENARIOS.read_text(), re.M)


def replay_ktap(run: Path = REPLAY_RUN) -> str:
	return ktap.text(ktap.ktap_lines((run / 'console.log').read_text()))


def test_parse_a_real_run_has_every_scenario_in_order() -> None:
	rows = replay.parse('P1+P2', replay_ktap())
	assert len(scenario_names()) >= 10
	assert [r.scenario for r in rows] == scenario_names()
	assert all(r.build == 'P1+P2' for r in rows)
	first = rows[0]
	assert first.get('touches') == 655  # 1% of 65536 pages
	assert first.get('pages_read') >= first.get('touches')
	assert first.get('page_size') == 4096
	assert first.get(replay.GIB_READ) == round(
		first.get('pages_read') * 4096 / 2**30, 2)


def test_scenarios_reads_every_row_of_the_table() -> None:
	rows = replay.scenarios(SCENARIOS.read_text())
	small = [s for s in rows if s.scale is Scale.SMALL]
	seed = [s for s in rows if s.scale is Scale.SEED]
	assert [s.name for s in small] == scenario_names()
	assert [s.name for s in seed] == scenario_names('RP_SEED')
	random = seed[0]
	# docs/replay.md, the bounds: a 20 GiB file, 1% touched, 100x fewer.
	assert (random.file_pages, random.expect, random.bound) == \
		(20 << 18, replay.Expect.SAVES, 100)
	# docs/replay.md: 3x fewer when the file fits, as read-around
	# otherwise reads all of it.
	fits = next(s for s in seed if s.file_pages <= s.cache_pages)
	assert (fits.name, fits.expect, fits.bound) == \
		('random 1% of 4 GiB', replay.Expect.SAVES, 3)


def test_scenarios_rejects_a_row_it_cannot_read() -> None:
	row = ('{\n\t.scale = RP_SEED,\n\t.desc = "x",\n\t.file_pages = 1,\n'
	       '\t.cache_pages = 2,\n%s},\n')
	assert replay.scenarios(row % '')[0].expect is replay.Expect.ANY
	assert replay.scenarios(row % '\t.same_pct = 10,\n')[0].bound == 10
	with pytest.raises(replay.ReplayError, match='"x": no scale'):
		replay.scenarios(row.replace('RP_SEED', 'RP_HUGE') % '')
	with pytest.raises(replay.ReplayError, match='"x": no scale'):
		replay.scenarios(row % '\t.saves = many,\n')
	with pytest.raises(replay.ReplayError, match='one field a line'):
		replay.scenarios(row % '\t.saves = 2, /* two */\n')
	with pytest.raises(replay.ReplayError, match='both'):
		replay.scenarios(row % '\t.saves = 2,\n\t.same_pct = 10,\n')


def test_memory_holds_the_largest_page_cache_with_headroom() -> None:
	seed = [s for s in replay.scenarios(SCENARIOS.read_text())
		if s.scale is Scale.SEED]
	# 7.5 GiB of page cache and 1 GiB beside it: 9 GiB in whole GiB.
	assert replay.memory(seed, 4096) == '9G'
	fits = replay.Scenario(Scale.SEED, 'f', 1 << 18, 1 << 30,
			       replay.Expect.ANY)
	assert replay.memory([fits], 4096) == '2G'


def test_the_full_build_holds_the_small_bounds_and_one_part_cannot() -> None:
	table_rows = replay.scenarios(SCENARIOS.read_text())
	rows = (replay.parse('stock', replay_ktap())
		+ replay.parse('P1+P2', replay_ktap(REPLAY_FULL_RUN)))
	vs = replay.verdicts(rows, table_rows)
	assert {v.scenario for v in vs} == {
		s.name for s in table_rows
		if s.scale is Scale.SMALL and s.expect is not replay.Expect.ANY}
	assert all(v.holds for v in vs), [str(v) for v in vs]
	assert replay.wrong_bounds(vs, 'P1+P2') == []
	# A build without P2 reads what stock reads: it fails every .saves bound.
	p1 = [dataclasses.replace(r, build='P1 only')
	      for r in replay.parse('stock', replay_ktap())]
	vs = replay.verdicts(rows + p1, table_rows)
	assert replay.wrong_bounds(vs, 'P1+P2') == []
	assert not any(v.holds for v in vs if v.build == 'P1 only'
		       and v.expect is replay.Expect.SAVES)
	# Judged as the full build, it fails: the check can fail.
	wrong = replay.wrong_bounds(vs, 'P1 only')
	fails = [w for w in wrong if 'FAILS' in w]
	assert len(fails) == 3
	assert any('random 1% under pressure' in w for w in fails)


def test_one_part_that_holds_a_saves_bound_is_wrong() -> None:
	table_rows = replay.scenarios(SCENARIOS.read_text())
	full = replay.parse('P1+P2', replay_ktap(REPLAY_FULL_RUN))
	stock = replay.parse('stock', replay_ktap())
	# Like stock but on one scenario, where it saves as the full build.
	part = [dataclasses.replace(f if f.scenario == 'random 1% under pressure'
				    else s, build='P2 only')
		for s, f in zip(stock, full)]
	wrong = replay.wrong_bounds(replay.verdicts(stock + full + part, table_rows),
			     'P1+P2')
	assert len(wrong) == 1
	assert wrong[0].startswith('P2 only: random 1% under pressure: ')
	assert wrong[0].endswith('holds, but part of the change must not hold it')


def test_verdict_bounds_at_their_edges() -> None:
	def v(expect: replay.Expect, bound: int, pages: int) -> replay.Verdict:
		return replay.Verdict('P1+P2', 's', expect, bound, 1000, pages)
	assert v(replay.Expect.SAVES, 10, 100).holds
	assert not v(replay.Expect.SAVES, 10, 101).holds
	assert v(replay.Expect.SAME, 10, 1100).holds
	assert v(replay.Expect.SAME, 10, 900).holds
	assert not v(replay.Expect.SAME, 10, 1101).holds
	assert not v(replay.Expect.SAME, 10, 899).holds


def test_parse_rejects_a_line_without_a_metric() -> None:
	with pytest.raises(replay.ReplayError, match='no mmap_miss$'):
		replay.parse('b', '# t: replay: x: touches=1 pages_read=2 '
			     'page_size=4096 major_faults=3 readaround_faults=4 '
			     'refaults=5 refault_activations=6\n')


def rows() -> List[replay.Row]:
	# touches, pages_read, page_size, major_faults, readaround_faults,
	# refaults, refault_activations, mmap_miss
	return [replay.Row('stock', 'random', (10, 2000, 4096, 9, 8, 6, 5, 7)),
		replay.Row('P1+P2', 'random', (10, 786432, 4096, 9, 1, 2, 1, 99)),
		replay.Row('stock', 'stride 1021', (5, 4000, 4096, 3, 3, 0, 0, 0))]


def test_csv_and_table() -> None:
	parsed = list(csv.reader(io.StringIO(replay.to_csv(rows()))))
	assert parsed[0] == ['build', 'scenario', 'touches', 'pages_read',
			     'gib_read', 'major_faults', 'readaround_faults',
			     'refaults', 'refault_activations', 'mmap_miss']
	# 786432 pages of 4 KiB: 3 GiB.
	assert parsed[2] == ['P1+P2', 'random', '10', '786432', '3.0', '9',
			     '1', '2', '1', '99']
	assert replay.table(rows(), 'pages_read').splitlines() == [
		'pages_read   stock   P1+P2',
		'random        2000  786432',
		'stride 1021   4000       -',
	]
	assert replay.table(rows(), 'gib_read').splitlines()[1] == \
		'random        0.01   3.00'


def _fixes_overlay(overlay_dir: Path, expected: str) -> ov.Overlay:
	(overlay_dir / 'expected').write_text(expected)
	return ov.Overlay.load(overlay_dir)


def test_replay_builds_stock_each_fix_alone_and_all(overlay_dir: Path) -> None:
	"""A port that carries the fixes as patches: left out in turn."""
	o = _fixes_overlay(overlay_dir, 'fails | a | 0002-a.patch\n'
			   'fails | b | 0003-b.patch\n')
	o = dataclasses.replace(o, patches=o.patches + (
		dataclasses.replace(o.patches[0], name='0002-a.patch'),
		dataclasses.replace(o.patches[0], name='0003-b.patch')))
	builds = replay.builds(o)
	assert [(b.label, b.without) for b in builds] == [
		('stock', ('0002-a.patch', '0003-b.patch')),
		('P1 only', ('0003-b.patch',)),
		('P2 only', ('0002-a.patch',)),
		('P1+P2', ())]
	assert replay.builds(_fixes_overlay(overlay_dir, '')) == [
		ov.BeforeFix('series', ())]


def test_replay_builds_each_revert(overlay_dir: Path) -> None:
	"""A kernel that has the fixes upstream: each revert, the one of all
	of them first, then the series as it is."""
	diff = (overlay_dir / 'mutants/foo-off-by-one.patch').read_text()
	diff = diff[diff.index('---'):]
	(overlay_dir / 'reverts').mkdir()
	(overlay_dir / 'reverts/all.patch').write_text(
		'Revert both\nReverts: a b\n\n' + diff)
	(overlay_dir / 'reverts/a.patch').write_text(
		'Revert a\nReverts: a (the first half)\n\n' + diff)
	o = _fixes_overlay(overlay_dir, 'fails | foo.x | a\nfails | foo.y | b\n')
	builds = replay.builds(o)
	assert [(b.label, b.lacking, b.revert.name if b.revert else None)
		for b in builds] == [
		('reverted', ('a', 'b'), 'all.patch'),
		('a reverted', ('a',), 'a.patch'),
		('as merged', (), None)]
	assert [b.label for b in o.before_fix_trees()] == [
		'revert a', 'revert all']
	# A replay of fix a alone: its revert is the build without it.
	assert [(b.label, b.lacking) for b in replay.builds(
		o, frozenset({'a'}))] == [('reverted', ('a',)), ('as merged', ())]


def test_a_revert_names_fixes_of_the_expected_list(overlay_dir: Path) -> None:
	diff = (overlay_dir / 'mutants/foo-off-by-one.patch').read_text()
	diff = diff[diff.index('---'):]
	(overlay_dir / 'reverts').mkdir()
	(overlay_dir / 'reverts/c.patch').write_text('Revert c\n\n' + diff)
	o = _fixes_overlay(overlay_dir, 'fails | foo.x | a\n')
	with pytest.raises(ov.OverlayError, match='no "Reverts: FIX'):
		o.reverts()
	(overlay_dir / 'reverts/c.patch').write_text(
		'Revert c\nReverts: c\n\n' + diff)
	with pytest.raises(ov.OverlayError, match='c: no test of'):
		o.reverts()


needs_gnuplot = pytest.mark.skipif(
	not shutil.which('gnuplot'),
	reason='gnuplot-nox not installed (./run_kunit.sh selftest installs it)')


def replay_overlay(overlay: Path) -> Path:
	"""The fake overlay with the scenario table, its one patch the fix."""
	(overlay / replay.SCENARIOS).write_text(SCENARIOS.read_text())
	series = overlay / 'patches/series'
	series.write_text(series.read_text().replace(
		'.kunitconfig', f'.kunitconfig {replay.SCENARIOS}'))
	(overlay / 'expected').write_text(
		'fails | foo.* | 0001-mm-foo-add-tests.patch\n')
	return overlay


def run_replay(overlay: Path, kernel_tree: Path, tmp_path: Path,
	       full_run: Path, *args: str) -> subprocess.CompletedProcess:
	"""replay on the fake tree: stock replays REPLAY_RUN, the build with
	the fix (which adds the include to mm/foo.c) full_run."""
	return run_cli('replay', '--kernel', str(kernel_tree), '--cache',
		       str(tmp_path / 'c'), '--no-install', '--results',
		       str(tmp_path / 'out'), *args,
		       env={'MM_KUNIT_OVERLAY': str(replay_overlay(overlay)),
			    'FAKE_KUNIT_RUN': str(REPLAY_RUN),
			    'FAKE_KUNIT_RUN_IF':
			    f'mm/foo.c:tests/foo_kunit.h:{full_run}'})


@needs_gnuplot
def test_replay_command(overlay_dir: Path, kernel_tree: Path,
			tmp_path: Path) -> None:
	p = run_replay(overlay_dir, kernel_tree, tmp_path, REPLAY_FULL_RUN)
	assert p.returncode == 0, p.stdout + p.stderr
	out = tmp_path / 'out'
	table = list(csv.DictReader(io.StringIO((out / 'replay.csv').read_text())))
	assert [r['build'] for r in table] == \
		['stock'] * len(scenario_names()) + ['P1'] * len(scenario_names())
	assert list(table[0])[:5] == ['build', 'scenario', 'touches',
				      'pages_read', 'gib_read']
	assert (out / 'replay.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
	argv = [line for f in sorted((tmp_path / 'c').glob(
			'trees/*/build-um*/kunit-argv.txt'))
		for line in f.read_text().splitlines()]
	# Configured once, with the replay's option; each build run once.
	assert [a.split()[0] for a in argv].count('config') == 1
	assert f'--kconfig_add={replay.KCONFIG}' in argv[0]
	assert [a.split()[-1] for a in argv[1:]] == \
		[replay.SUITES[Scale.SMALL]] * 2
	assert 'random 1% under pressure' in p.stdout
	assert re.search(r'^  random 1% under pressure: \d+\.\dx fewer '
			 r'\(at least 2x fewer\): holds$', p.stdout, re.M)
	assert 'FAILS' not in p.stdout


def run_in_process(overlay: Path, kernel_tree: Path, tmp_path: Path,
		   monkeypatch: pytest.MonkeyPatch, full_run: Path,
		   *args: str) -> int:
	"""replay on the fake tree as run_replay() runs it, in this
	process, so that a test may change the replays first."""
	from conftest import FAKE_BIN
	from mmkunit import cli, deps
	for k, v in {'MM_KUNIT_OVERLAY': str(replay_overlay(overlay)),
		     'FAKE_KUNIT_RUN': str(REPLAY_RUN),
		     'FAKE_KUNIT_RUN_IF': f'mm/foo.c:tests/foo_kunit.h:{full_run}',
		     'PATH': f'{FAKE_BIN}:{os.environ["PATH"]}'}.items():
		monkeypatch.setenv(k, v)
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	return cli.execute(cli.parse_args([
		'replay', '--kernel', str(kernel_tree), '--cache',
		str(tmp_path / 'c'), '--no-install', '--results',
		str(tmp_path / 'out'), *args]))


def replay_also(monkeypatch: pytest.MonkeyPatch, *also: str) -> None:
	monkeypatch.setitem(replay.REPLAYS, replay.MMAP_MISS, dataclasses.replace(
		replay.REPLAYS[replay.MMAP_MISS], also=also))


def argv_in(tmp_path: Path, build_dir: str) -> List[str]:
	return [line for f in sorted((tmp_path / 'c/trees').glob(
			f'*/{build_dir}/kunit-argv.txt'))
		for line in f.read_text().splitlines()]


# The first option of kunit-configs/um-debug.config.
DEBUG_OPTION = next(line for line in (REPO / 'kunit-configs/um-debug.config')
		    .read_text().splitlines() if line.startswith('CONFIG_'))


@needs_gnuplot
def test_a_further_configuration_builds_the_change_again_apart(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""A replay that runs in a further configuration builds the
	series with the change once more, that configuration's options
	added, in a build directory of its own; its rows, labelled with it,
	are reported and left out of the bounds."""
	replay_also(monkeypatch, 'debug')
	assert run_in_process(overlay_dir, kernel_tree, tmp_path, monkeypatch,
			      REPLAY_FULL_RUN) == 0
	table = list(csv.DictReader(io.StringIO(
		(tmp_path / 'out/replay.csv').read_text())))
	n = len(scenario_names())
	assert [r['build'] for r in table] == \
		['stock'] * n + ['P1'] * n + ['P1 (debug)'] * n
	assert [dict(r, build='P1') for r in table[2 * n:]] == table[n:2 * n]
	assert (tmp_path / 'out/P1-debug/ktap.log').is_file()
	argv = argv_in(tmp_path, 'build-um+debug')
	assert [a.split()[0] for a in argv] == ['config', 'exec']
	assert f'--kconfig_add={DEBUG_OPTION}' in argv[0]
	assert f'--kconfig_add={replay.KCONFIG}' in argv[0]
	assert not any(DEBUG_OPTION in a for a in argv_in(tmp_path, 'build-um'))


@needs_gnuplot
def test_a_further_configuration_named_is_every_build_s_and_unbounded(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch,
		capsys: pytest.CaptureFixture[str]) -> None:
	"""--config NAME of a further configuration: every build in it,
	once, reported without the bounds (here the effect is gone, which
	the replay's own configuration would fail)."""
	replay_also(monkeypatch, 'debug')
	assert run_in_process(overlay_dir, kernel_tree, tmp_path, monkeypatch,
			      REPLAY_RUN, '--config', 'debug') == 0
	table = list(csv.DictReader(io.StringIO(
		(tmp_path / 'out/replay.csv').read_text())))
	assert list(dict.fromkeys(r['build'] for r in table)) == [
		'stock (debug)', 'P1 (debug)']
	assert not argv_in(tmp_path, 'build-um-debug+debug')
	assert ("mm-kunit: replay mmap-miss in configuration debug: reported, "
		"not held to its bounds (they are the arch's configuration's)"
		in capsys.readouterr().out)


@needs_gnuplot
def test_bounded_leaves_the_further_configurations_out(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""--bounded: the builds held to bounds alone, no further
	configuration's column or build (check's replays)."""
	replay_also(monkeypatch, 'debug')
	assert run_in_process(overlay_dir, kernel_tree, tmp_path, monkeypatch,
			      REPLAY_FULL_RUN, '--bounded') == 0
	table = list(csv.DictReader(io.StringIO(
		(tmp_path / 'out/replay.csv').read_text())))
	n = len(scenario_names())
	assert [r['build'] for r in table] == ['stock'] * n + ['P1'] * n
	assert not argv_in(tmp_path, 'build-um+debug')
	assert argv_in(tmp_path, 'build-um')


def test_bounded_in_a_further_configuration_named_stops_at_once(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""--config NAME of a further configuration has no bounds: with
	--bounded, nothing to run."""
	replay_also(monkeypatch, 'debug')
	with pytest.raises(replay.ReplayError,
			   match='^replay mmap-miss has no bounds in '
			   'configuration debug: --bounded runs none of its '
			   'builds$'):
		run_in_process(overlay_dir, kernel_tree, tmp_path, monkeypatch,
			       REPLAY_RUN, '--config', 'debug', '--bounded')
	assert not list((tmp_path / 'c').rglob('kunit-argv.txt'))


def test_a_further_configuration_the_arch_has_not_stops_at_once(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	replay_also(monkeypatch, 'nosuch')
	with pytest.raises(replay.ReplayError,
			   match='^replay mmap-miss runs in configuration nosuch '
			   'too, which um has not$'):
		run_in_process(overlay_dir, kernel_tree, tmp_path, monkeypatch,
			       REPLAY_FULL_RUN)
	assert not list((tmp_path / 'c').rglob('kunit-argv.txt'))


def test_no_replay_runs_its_own_configuration_again() -> None:
	assert all(rp.config not in rp.also for rp in replay.REPLAYS.values())


@needs_gnuplot
def test_replay_command_fails_when_the_effect_is_gone(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	p = run_replay(overlay_dir, kernel_tree, tmp_path, REPLAY_RUN)
	assert p.returncode == 1, p.stdout + p.stderr
	assert re.search(r'mm-kunit: replay: P1: stride 2053 under pressure: '
			 r'1331019 pages read, stock 1331019 .*FAILS', p.stdout)


@needs_gnuplot
def test_replay_command_fails_without_replay_output(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	p = run_replay(overlay_dir, kernel_tree, tmp_path,
		       FIXTURES / 'kunit/swap-pass')
	assert p.returncode == 1, p.stdout + p.stderr
	assert 'mm-kunit: replay on P1: mm-kunit: 38 passed' in p.stdout


@needs_gnuplot
def test_seed_scale_on_qemu_without_kvm_stops_with_one_line(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""Said before any build, on a machine with QEMU installed or not."""
	from conftest import FAKE_BIN
	from mmkunit import cli, deps
	for k, v in {'MM_KUNIT_OVERLAY': str(replay_overlay(overlay_dir)),
		     'FAKE_KUNIT_RUN': str(REPLAY_RUN), 'MM_KUNIT_KVM': '0',
		     'PATH': f'{FAKE_BIN}:{os.environ["PATH"]}'}.items():
		monkeypatch.setenv(k, v)
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	req = cli.parse_args(['replay', '--scale', 'seed', '--arch', 'x86_64',
			      '--kernel', str(kernel_tree), '--cache',
			      str(tmp_path / 'c'), '--no-install'])
	with pytest.raises(replay.ReplayError) as e:
		cli.execute(req)
	assert str(e.value) == (
		'the seed scale on x86_64 needs KVM: under TCG a '
		"scenario outlasts KUnit's 300 s limit per test case (UML runs it "
		'in minutes)')
	assert not list((tmp_path / 'c').rglob('vmlinux'))


@needs_gnuplot
def test_seed_scale_on_smp_uml_builds_one_cpu_apart(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path) -> None:
	"""UML's configuration is SMP: the seed scale builds with
	kunit-configs/um-onecpu.config, in a build directory of its own."""
	run_replay(overlay_dir, kernel_tree, tmp_path, REPLAY_FULL_RUN,
		   '--scale', 'seed')
	trees = tmp_path / 'c' / 'trees'
	argv = [line for f in sorted(trees.glob('*/build-um-onecpu/kunit-argv.txt'))
		for line in f.read_text().splitlines()]
	assert argv and all('--kconfig_add=# CONFIG_SMP is not set' in a
			    for a in argv if a.split()[0] in ('config', 'run'))
	# um.config detects hung tasks; a seed scenario outlasts its limit.
	assert all(f'--kconfig_add={replay.NO_HUNG_TASK}' in a
		   for a in argv if a.split()[0] in ('config', 'run'))
	assert not list(trees.glob('*/build-um/kunit-argv.txt'))


def test_scales_case_limit_reads_the_kernel_s_kunit(tmp_path: Path) -> None:
	"""7.3's lib/kunit/test.c multiplies the limit by the case's speed
	(kunit_timeout_mult()); 6.12's holds every case to 300 s."""
	assert not replay.scales_case_limit(tmp_path)
	(tmp_path / 'lib/kunit').mkdir(parents=True)
	(tmp_path / 'lib/kunit/test.c').write_text(
		'static unsigned long kunit_test_timeout(void) { return 300; }\n')
	assert not replay.scales_case_limit(tmp_path)
	(tmp_path / 'lib/kunit/test.c').write_text(
		'static int kunit_timeout_mult(enum kunit_speed speed)\n')
	assert replay.scales_case_limit(tmp_path)


# The mlock-recheck replay's small scale on UML, as merged and reverted.
RECHECK_RUN = FIXTURES / 'kunit/recheck-replay-um'
RECHECK = replay.REPLAYS['mlock-recheck']


def recheck_rows(build: str, ktap_file: str) -> List[replay.Row]:
	return replay.parse(build, (RECHECK_RUN / ktap_file).read_text(),
			    RECHECK.metrics)


def recheck_cases() -> List[replay.Case]:
	return [c for c in replay.cases(
		(REPO / 'kernel' / RECHECK.scenarios).read_text(), RECHECK.metrics)
		if c.scale is Scale.SMALL]


def test_cases_reads_the_bounds_of_every_row() -> None:
	cases = replay.cases((REPO / 'kernel' / RECHECK.scenarios).read_text(),
			     RECHECK.metrics)
	assert [c.scale for c in cases].count(Scale.SEED) == 3
	first = cases[0]
	assert first.name == 'mlocked, PTE cleared by an update'
	assert first.reverted_fails
	assert [str(b) for b in first.bounds] == [
		'major_faults = 0', 'ptl_waits = 128', 'pages_read <= 0']


def test_cases_rejects_a_row_it_cannot_read() -> None:
	row = ('{\n\t.scale = RR_SMALL,\n\t.desc = "x",\n%s'
	       '\t.reverted_fails = true,\n},\n')
	metrics = ('faults', 'ptl_waits')
	assert replay.cases(row % '\t.min_faults = 3,\n', metrics)[0].bounds == (
		replay.Bound('min', 'faults', 3),)
	with pytest.raises(replay.ReplayError, match='no bound'):
		replay.cases(row % '', metrics)
	with pytest.raises(replay.ReplayError, match='"x": no scale'):
		replay.cases(row % '\t.want_faults = many,\n', metrics)
	with pytest.raises(replay.ReplayError, match='"x": no scale'):
		replay.cases((row % '\t.want_faults = 1,\n').replace(
			'true', 'yes'), metrics)
	with pytest.raises(replay.ReplayError,
			   match='"x": a bound on ptl_wait, which the replay '
			   'does not count'):
		replay.cases(row % '\t.want_ptl_wait = 1,\n', metrics)


def test_the_merged_build_holds_the_counts_and_the_revert_cannot() -> None:
	rows = (recheck_rows('reverted', 'reverted.ktap')
		+ recheck_rows('as merged', 'as-merged.ktap'))
	vs = replay.count_verdicts(rows, recheck_cases(), 'as merged')
	assert len(vs) == 8 and all(v.right for v in vs)
	assert [(v.build, v.case.name, [str(b) for b in v.broken])
		for v in vs if v.broken] == [
		('reverted', 'mlocked, PTE cleared by an update',
		 ['major_faults = 0', 'ptl_waits = 128', 'pages_read <= 0']),
		('reverted', 'mlocked, PTE none', ['ptl_waits = 128'])]


def test_a_revert_that_gives_the_counts_is_wrong() -> None:
	"""The reverted build that counts what the merged one does, and a
	merged build that counts what the reverted one does."""
	merged = recheck_rows('as merged', 'as-merged.ktap')
	reverted = recheck_rows('reverted', 'reverted.ktap')
	vs = replay.count_verdicts(
		merged + [dataclasses.replace(r, build='reverted') for r in merged],
		recheck_cases(), 'as merged')
	assert [(v.build, v.case.name) for v in vs if not v.right] == [
		('reverted', 'mlocked, PTE cleared by an update'),
		('reverted', 'mlocked, PTE none')]
	vs = replay.count_verdicts(
		[dataclasses.replace(r, build='as merged') for r in reverted],
		recheck_cases(), 'as merged')
	wrong = [str(v) for v in vs if not v.right]
	assert wrong == [
		'as merged: mlocked, PTE cleared by an update: major_faults 128, '
		'ptl_waits 0, pages_read 3228; must hold major_faults = 0, '
		'ptl_waits = 128, pages_read <= 0: breaks major_faults = 0, '
		'ptl_waits = 128, pages_read <= 0',
		'as merged: mlocked, PTE none: major_faults 128, ptl_waits 0, '
		'pages_read 3228; must hold major_faults = 128, ptl_waits = 128, '
		'pages_read = 3228: breaks ptl_waits = 128']


def test_a_row_a_build_did_not_print_is_wrong() -> None:
	rows = (recheck_rows('reverted', 'reverted.ktap')
		+ recheck_rows('as merged', 'as-merged.ktap')[1:])
	vs = replay.count_verdicts(rows, recheck_cases(), 'as merged')
	assert [str(v) for v in vs if not v.right] == [
		'as merged: mlocked, PTE cleared by an update: no counts']


def test_each_replay_builds_the_reverts_of_its_own_fixes() -> None:
	"""7.3's overlay reverts the mmap_miss change and the PTE recheck:
	each replay compares 7.3 with its own change reverted."""
	o = ov.Overlay.load(REPO / 'kernel')
	assert [(b.label, b.lacking) for b in replay.builds(
		o, RECHECK.fixes)] == [('reverted', ('pte-recheck',)),
				       ('as merged', ())]
	mmap_miss = replay.builds(o, replay.REPLAYS[replay.MMAP_MISS].fixes)
	assert [b.label for b in mmap_miss] == [
		'reverted', 'faulting-address reverted', 'retry reverted',
		'as merged']


@pytest.mark.parametrize('bound,count,holds', [
	(replay.Bound('want', 'm', 5), 5, True),
	(replay.Bound('want', 'm', 5), 4, False),
	(replay.Bound('want', 'm', 5), 6, False),
	(replay.Bound('min', 'm', 5), 5, True),
	(replay.Bound('min', 'm', 5), 4, False),
	(replay.Bound('max', 'm', 5), 5, True),
	(replay.Bound('max', 'm', 5), 6, False),
])
def test_bound_at_its_edges(bound: replay.Bound, count: int,
			    holds: bool) -> None:
	assert bound.holds(count) is holds


def test_a_replay_without_its_revert_stops_with_one_line(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	"""A kernel whose overlay does not revert the change (a port that
	carries fixes of its own): said before any build."""
	from mmkunit import cli, deps
	overlay = replay_overlay(overlay_dir)
	(overlay / RECHECK.scenarios).write_text(
		(REPO / 'kernel' / RECHECK.scenarios).read_text())
	series = overlay / 'patches/series'
	series.write_text(series.read_text().replace(
		replay.SCENARIOS, f'{replay.SCENARIOS} {RECHECK.scenarios}'))
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay))
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	req = cli.parse_args(['replay', 'mlock-recheck', '--kernel',
			      str(kernel_tree), '--cache', str(tmp_path / 'c'),
			      '--no-install'])
	with pytest.raises(replay.ReplayError) as e:
		cli.execute(req)
	assert str(e.value) == (
		'replay mlock-recheck: the overlay for this kernel has no revert '
		'of pte-recheck (kernel/reverts of 7.3 has)')
	assert not list((tmp_path / 'c').rglob('vmlinux'))


# The swap-ra replay's small scale on UML: one build, both algorithms.
SWAP_RA_RUN = FIXTURES / 'kunit/swap-ra-replay-um'
SWAP_RA = replay.REPLAYS['swap-ra']


def test_a_replay_of_both_algorithms_in_the_tree_builds_the_series() -> None:
	"""Cluster and VMA readahead are both in 7.3: no revert, one build,
	which must give every row's counts."""
	o = ov.Overlay.load(REPO / 'kernel')
	assert [(b.label, b.lacking) for b in replay.builds(
		o, SWAP_RA.fixes)] == [('series', ())]
	cases = replay.cases((REPO / 'kernel' / SWAP_RA.scenarios).read_text(),
			     SWAP_RA.metrics)
	assert cases and not any(c.reverted_fails for c in cases)
	cases = [c for c in cases if c.scale is Scale.SMALL]
	rows = replay.parse('series', (SWAP_RA_RUN / 'series.ktap').read_text(),
			    SWAP_RA.metrics)
	vs = replay.count_verdicts(rows, cases, 'series')
	assert len(vs) == 6 and all(v.right for v in vs)
	# A count one off a row's is wrong.
	off = [dataclasses.replace(rows[0], values=(rows[0].values[0],
						    rows[0].values[1] + 1,
						    *rows[0].values[2:]))]
	vs = replay.count_verdicts(off + rows[1:], cases, 'series')
	assert [str(b) for v in vs if not v.right for b in v.broken] == [
		'major_faults = 32']


@pytest.mark.parametrize('argv,error', [
	(['--scale', 'seed'], 'replay mlock-recheck has no seed scale'),
	([], 'swap_ra_replay_scenarios.h: a row has reverted_fails, but '
	     'replay swap-ra has no build without its change'),
])
def test_a_replay_refuses_what_it_has_not(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch, argv: List[str],
		error: str) -> None:
	"""A scale the replay has not, and a row that wants a build without
	the change of a replay that has none, are said before any build."""
	monkeypatch.setitem(replay.REPLAYS, 'mlock-recheck', dataclasses.replace(
		RECHECK, suites={Scale.SMALL: RECHECK.suites[Scale.SMALL]}))
	from mmkunit import cli, deps
	overlay = replay_overlay(overlay_dir)
	(overlay / SWAP_RA.scenarios).write_text(
		(REPO / 'kernel' / SWAP_RA.scenarios).read_text().replace(
			'.reverted_fails = false', '.reverted_fails = true', 1))
	series = overlay / 'patches/series'
	series.write_text(series.read_text().replace(
		replay.SCENARIOS, f'{replay.SCENARIOS} {SWAP_RA.scenarios}'))
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(overlay))
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	name = 'mlock-recheck' if argv else 'swap-ra'
	req = cli.parse_args(['replay', name, *argv, '--kernel',
			      str(kernel_tree), '--cache', str(tmp_path / 'c'),
			      '--no-install'])
	with pytest.raises(replay.ReplayError) as e:
		cli.execute(req)
	assert str(e.value).endswith(error)
	assert not list((tmp_path / 'c').rglob('vmlinux'))


def test_a_replay_of_no_fix_builds_the_series_alone_on_a_port() -> None:
	"""A port's overlay has before-fix trees that are not reverts (its
	own patches): a replay of no fix still builds the series alone."""
	o = ov.Overlay.load(REPO / 'kernel/compat/6.12')
	assert [b.label for b in replay.builds(o)][-1] != 'series'
	assert [(b.label, b.lacking) for b in replay.builds(
		o, frozenset())] == [('series', ())]


PROTECT = replay.REPLAYS['mglru-protect']


def test_the_mglru_protect_replay_builds_its_revert_in_its_configuration() -> None:
	"""7.3 with kernel/reverts/mglru-protect.patch against 7.3, under
	the multi-gen LRU; every small row says what the merged build
	counts."""
	o = ov.Overlay.load(REPO / 'kernel')
	assert [(b.label, b.lacking) for b in replay.builds(
		o, PROTECT.fixes)] == [
		('reverted', ('mglru-placement', 'mglru-saturated')),
		('as merged', ())]
	assert PROTECT.config == 'mglru'
	cases = replay.cases((REPO / 'kernel' / PROTECT.scenarios).read_text(),
			     PROTECT.metrics)
	small = [c for c in cases if c.scale is Scale.SMALL]
	assert [c.reverted_fails for c in small] == [True, True, False]
	assert [str(b) for b in small[0].bounds] == [
		'hot_refaults = 0', 'stream_refaults = 49152', 'agings = 0',
		'turnovers = 1']


def test_a_replay_stops_on_an_arch_without_its_configuration(
		overlay_dir: Path, kernel_tree: Path, tmp_path: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	from mmkunit import cli, deps
	monkeypatch.setenv('MM_KUNIT_OVERLAY', str(replay_overlay(overlay_dir)))
	monkeypatch.setattr(deps, 'ensure', lambda *a, **k: None)
	req = cli.parse_args(['replay', 'mglru-protect', '--arch', 'arm64',
			      '--kernel', str(kernel_tree), '--cache',
			      str(tmp_path / 'c'), '--no-install'])
	with pytest.raises(replay.ReplayError,
			   match='runs in configuration mglru, which arm64 '
			   'has not'):
		cli.execute(req)


THRASH = replay.REPLAYS['thrash']


def test_the_thrash_replay_reads_its_rounds_and_its_bounds() -> None:
	"""Per-round fields and bounds carry the round in their names; the
	revert of the rule is its build without the change; no row says
	that build must fail (the header says why)."""
	o = ov.Overlay.load(REPO / 'kernel')
	assert [(b.label, b.lacking) for b in replay.builds(
		o, THRASH.fixes)] == [
		('reverted', ('refault-stops-trim',)), ('as merged', ())]
	fields = ' '.join(f'{m}={i}' for i, m in enumerate(THRASH.metrics))
	[row] = replay.parse('as merged',
			     f'    # t: replay: a row: {fields}\n', THRASH.metrics)
	assert row.get('reads_9') == THRASH.metrics.index('reads_9')
	cases = replay.cases((REPO / 'kernel' / THRASH.scenarios).read_text(),
			     THRASH.metrics)
	small = [c for c in cases if c.scale is Scale.SMALL]
	assert [str(b) for b in small[0].bounds] == [
		'reads_0 = 6400', 'reads_1 >= 1', 'reads_last <= 0',
		'swapouts >= 6400']
	assert not any(c.reverted_fails for c in cases)
	assert set(THRASH.tabled) < set(THRASH.columns)
	# The multi-gen LRU, where the change does not act: reported.
	assert THRASH.also == ('mglru',)


def test_a_plotted_count_that_is_0_everywhere_gets_a_panel(
		tmp_path: Path) -> None:
	"""A log scale has no room for zeros alone: such a panel is drawn
	on a linear one, not refused by gnuplot."""
	metrics = ('reads', 'swapouts')
	rows = [replay.Row(b, 'a row', (100, 0), metrics)
		for b in ('reverted', 'as merged')]
	png = tmp_path / 'replay.png'
	replay.plot(rows, png, metrics, title='zeros')
	assert png.stat().st_size > 0
	assert (tmp_path / 'swapouts.tsv').read_text().splitlines()[1] == \
		'a row\t0\t0'
