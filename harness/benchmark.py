#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Prints how long the harness takes, cold and warm, on this machine.

Not a test: it measures and prints. Each figure is the wall time of one
command, run in a cache directory of its own (so the user's cache is not
touched), with the dependencies already installed:

  cold       nothing cached -> results (unpack, copy, build, run); ccache
             starts empty
  ccache     the cache directory emptied but for the ccache the cold run
             filled (unpack, copy, build, run): a fresh CI machine that
             restored its compiler cache
  rerun      the same command again, nothing changed
  edit       after one test file of the overlay changes
  bare       kunit.py run --kunitconfig=mm/tests in the prepared tree, with a
             new build directory: a cold build without the harness
  replay     ./run_kunit.sh replay: the replay table on four builds, then
             replay --scale seed: a 20 GiB file, an 8 GiB guest (with --replay)
  mutants    the whole mutant matrix (with --mutants), then again with the
             ccache the first matrix filled (two trees, the default on two
             or more CPUs), then again in one tree (--workers 1)

Usage: harness/benchmark.py [--mutants] [--replay] [--keep] [--arch ARCH]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]


def timed(label: str, cmd: List[str], env: Dict[str, str],
	  cwd: Path = REPO) -> float:
	print(f'[bench] {label}: {" ".join(cmd)}', file=sys.stderr, flush=True)
	start = time.monotonic()
	proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
			      stderr=subprocess.STDOUT, text=True)
	elapsed = time.monotonic() - start
	if proc.returncode != 0:
		sys.exit(f'[bench] {label} failed (exit {proc.returncode}):\n'
			 f'{proc.stdout[-3000:]}')
	return elapsed


def build_seconds(results: Path) -> Optional[float]:
	"""kunit.py's own "building" time in the newest run under results."""
	runs = sorted(results.iterdir(), key=lambda p: p.stat().st_mtime)
	if not runs:
		return None
	m = re.search(r'([0-9.]+)s building',
		      (runs[-1] / 'kunit.out').read_text(errors='replace'))
	return float(m.group(1)) if m else None


def main() -> int:
	parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
	parser.add_argument('--mutants', action='store_true',
			    help='also time the whole mutant matrix')
	parser.add_argument('--replay', action='store_true',
			    help='also time ./run_kunit.sh replay')
	parser.add_argument('--keep', action='store_true',
			    help='keep the benchmark cache directory')
	parser.add_argument('--arch', default='um')
	args = parser.parse_args()

	work = Path(tempfile.mkdtemp(prefix='mm-kunit-bench-'))
	overlay = work / 'kernel'
	shutil.copytree(REPO / 'kernel', overlay)
	env = dict(os.environ, MM_KUNIT_CACHE=str(work / 'cache'),
		   MM_KUNIT_OVERLAY=str(overlay))
	run = [str(REPO / 'run_kunit.sh'), 'run', '-q', f'--arch={args.arch}']
	figures: Dict[str, float] = {}
	try:
		figures['cold: nothing cached -> results'] = timed('cold', run, env)
		# A new machine that restored only the compiler cache: the
		# cache directory emptied but for ccache/.
		for sub in (work / 'cache').iterdir():
			if sub.name != 'ccache':
				shutil.rmtree(sub)
		figures['fresh tree, ccache warm -> results'] = timed('ccache', run, env)
		building = build_seconds(work / 'cache/results')
		if building is not None:
			figures['  of which kunit.py building'] = building
		figures['rerun: no change'] = timed('rerun', run, env)
		test_file = overlay / 'mm/tests/swap_state_kunit.h'
		test_file.write_text(test_file.read_text() + '/* benchmark edit */\n')
		figures['edit: one test file changed'] = timed('edit', run, env)
		src = next((work / 'cache/trees').glob('*/src'))
		figures['bare kunit.py: cold build, same kunitconfig'] = timed(
			'bare', [sys.executable, 'tools/testing/kunit/kunit.py', 'run',
				 '--kunitconfig=mm/tests', f'--arch={args.arch}',
				 f'--build_dir={work / "bare-build"}'], env, cwd=src)
		if args.replay:
			figures['replay: the table on four builds'] = timed(
				'replay', [str(REPO / 'run_kunit.sh'), 'replay', '-q',
					   f'--arch={args.arch}'], env)
			figures['replay --scale seed: four builds'] = timed(
				'replay-seed', [str(REPO / 'run_kunit.sh'), 'replay',
						'-q', '--scale', 'seed',
						f'--arch={args.arch}'], env)
		if args.mutants:
			matrix = [str(REPO / 'run_kunit.sh'), 'mutants', '-q',
				  f'--arch={args.arch}']
			figures['mutants: whole matrix'] = timed('mutants', matrix, env)
			figures['mutants: again, ccache warm'] = timed(
				'mutants-warm', matrix, env)
			figures['mutants: again, one tree (--workers 1)'] = timed(
				'mutants-one-tree', matrix + ['--workers', '1'], env)
	finally:
		if not args.keep:
			shutil.rmtree(work, ignore_errors=True)
	print(f'\nmm-kunit benchmark, arch {args.arch}, {os.cpu_count()} CPUs '
	      '(wall time, seconds)')
	for label, secs in figures.items():
		print(f'  {label:<46} {secs:7.1f}')
	return 0


if __name__ == '__main__':
	sys.exit(main())
