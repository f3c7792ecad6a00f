# SPDX-License-Identifier: GPL-2.0
"""Progress messages and the heartbeat of long steps."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Iterator

import pytest

from mmkunit import progress


@pytest.fixture(autouse=True)
def not_quiet() -> Iterator[None]:
	progress.set_quiet(False)
	yield
	progress.set_quiet(False)


def test_heartbeat_speaks_when_silent(capsys: pytest.CaptureFixture) -> None:
	with progress.Heartbeat('building', lambda: '7 objects compiled',
				interval=0.2):
		time.sleep(1.3)
	err = capsys.readouterr().err
	assert '[mm-kunit] still building (0s, 7 objects compiled)' in err


def test_heartbeat_quiet_while_output_flows(capsys: pytest.CaptureFixture) -> None:
	with progress.Heartbeat('building', interval=0.5) as hb:
		for _ in range(12):
			hb.touch()
			time.sleep(0.1)
	assert capsys.readouterr().err == ''


def test_quiet_mode_silences_progress(capsys: pytest.CaptureFixture) -> None:
	progress.set_quiet(True)
	with progress.step('unpacking'):
		with progress.Heartbeat('building', interval=0.1):
			time.sleep(1.2)
	progress.progress('hello')
	assert capsys.readouterr().err == ''


def test_step_says_start_and_how_long_a_long_one_took(
		capsys: pytest.CaptureFixture,
		monkeypatch: pytest.MonkeyPatch) -> None:
	with progress.step('copying y'):
		pass
	assert capsys.readouterr().err.splitlines() == ['[mm-kunit] copying y ...']
	clock = iter([100.0, 175.0])
	monkeypatch.setattr(progress.time, 'monotonic', lambda: next(clock))
	with progress.step('unpacking x'):
		pass
	assert capsys.readouterr().err.splitlines() == [
		'[mm-kunit] unpacking x ...', '[mm-kunit] unpacking x: done in 1m15s']


def test_objects_built_counts_new_objects(tmp_path: Path) -> None:
	(tmp_path / 'old.o').write_text('')
	os.utime(tmp_path / 'old.o', (1000, 1000))
	since = time.time() - 1
	(tmp_path / 'mm').mkdir()
	for name in ('mm/filemap.o', 'mm/vmscan.o', 'mm/filemap.c'):
		(tmp_path / name).write_text('')
	assert progress.objects_built(tmp_path, since)() == '2 objects compiled'
