# SPDX-License-Identifier: GPL-2.0
"""Progress messages on stderr, and a heartbeat during long silent steps.

A cold build prints nothing for minutes; a user (or a CI system that kills
silent jobs) should see that it is working. While a step runs, the
heartbeat prints what it is doing and for how long, after every INTERVAL
seconds without other output. -q (quiet) turns all of it off.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

# Seconds of silence before the heartbeat speaks.
INTERVAL = float(os.environ.get('MM_KUNIT_PROGRESS_INTERVAL') or 30)


class _State:
	quiet = False


def set_quiet(quiet: bool) -> None:
	"""-q: no progress messages, no heartbeat; failures and summaries only."""
	_State.quiet = quiet


def progress(msg: str) -> None:
	if not _State.quiet:
		print(f'[mm-kunit] {msg}', file=sys.stderr, flush=True)


def names(files: Sequence[str], most: int = 8) -> str:
	"""Files for a message: the first few, then how many more."""
	more = len(files) - most
	return ', '.join(files[:most]) + (f' and {more} more' if more > 0 else '')


def _duration(seconds: float) -> str:
	m, s = divmod(int(seconds), 60)
	return f'{m}m{s:02d}s' if m else f'{s}s'


def objects_built(build_dir: Path, since: float) -> Callable[[], str]:
	"""A heartbeat detail: how many object files a build wrote so far."""
	def count() -> str:
		n = 0
		for root, _, files in os.walk(build_dir):
			for name in files:
				if name.endswith('.o'):
					try:
						if os.stat(os.path.join(root, name)).st_mtime >= since:
							n += 1
					except OSError:
						pass
		return f'{n} objects compiled'
	return count


class Heartbeat:
	"""Prints '[mm-kunit] still <what> (1m30s, <detail>)' when silent."""

	def __init__(self, what: str,
		     detail: Optional[Callable[[], str]] = None,
		     interval: Optional[float] = None) -> None:
		self.what = what
		self.detail = detail
		self.interval = INTERVAL if interval is None else interval
		self.started = time.monotonic()
		self._last = self.started
		self._stop = threading.Event()
		self._thread: Optional[threading.Thread] = None

	def touch(self) -> None:
		"""Something else was printed: stay silent for another interval."""
		self._last = time.monotonic()

	def _run(self) -> None:
		while not self._stop.wait(min(self.interval, 1.0)):
			now = time.monotonic()
			if now - self._last < self.interval:
				continue
			self._last = now
			extra = ''
			if self.detail:
				try:
					extra = ', ' + self.detail()
				except OSError:
					pass
			progress(f'still {self.what} '
				 f'({_duration(now - self.started)}{extra})')

	def __enter__(self) -> 'Heartbeat':
		if not _State.quiet and self.interval > 0:
			self._thread = threading.Thread(target=self._run, daemon=True)
			self._thread.start()
		return self

	def __exit__(self, *exc: object) -> None:
		self._stop.set()
		if self._thread:
			self._thread.join()


@contextlib.contextmanager
def step(what: str, detail: Optional[Callable[[], str]] = None
	 ) -> Iterator[Heartbeat]:
	"""A long step: says it started, beats while it runs, and says how
	long it took if that was long."""
	progress(f'{what} ...')
	with Heartbeat(what, detail) as hb:
		yield hb
	took = time.monotonic() - hb.started
	if took >= 10:
		progress(f'{what}: done in {_duration(took)}')
