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
  loop       (with --loop) the edit loop beside its bounds, for a test file
             and for mm/filemap.c (in a tree of the user's, --kernel):
             one suite's result after an edit, and its parts on their own
             (the changed object compiled, the kernel linked once, the
             kernel run with the harness's boot options), against bare
             kunit.py run doing the same edit in a build directory of its
             own; and a re-run with nothing changed against the kernel's
             own run, of every suite and of each edit's suite; the same
             edits and re-runs (Enter) through run --watch, from the
             edit or the Enter to the run's summary
  replay     (with --replay) each replay of ./run_kunit.sh replay, at small
             scale and then at the seed's where it has one (mmap-miss: a
             20 GiB file, an 8 GiB guest)
  mutants    the whole mutant matrix (with --mutants), then again with the
             ccache the first matrix filled (two trees, the default on two
             or more CPUs), then again in one tree (--workers 1)

Usage: harness/benchmark.py [--mutants] [--replay] [--loop] [--keep] [--arch ARCH]
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
from typing import Callable, Dict, List, Optional

from mmkunit.arches import ARCHES
from mmkunit.replay import REPLAYS
from mmkunit.runner import RunOptions, uml_command

REPO = Path(__file__).resolve().parents[1]


def timed(label: str, cmd: List[str], env: Dict[str, str],
	  cwd: Path = REPO, shell: bool = False) -> float:
	"""The wall time of one command (a shell line with shell), which
	must succeed."""
	print(f'[bench] {label}: {" ".join(cmd)[:200]}', file=sys.stderr,
	      flush=True)
	start = time.monotonic()
	proc = subprocess.run(' '.join(cmd) if shell else cmd, cwd=cwd,
			      env=env, shell=shell, stdout=subprocess.PIPE,
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


def median(label: str, run: Callable[[], float], n: int = 3) -> float:
	times = sorted(run() for _ in range(n))
	print(f'[bench] {label}: {" ".join(f"{x:.2f}" for x in times)}',
	      file=sys.stderr, flush=True)
	return times[n // 2]


# The edit loop's cases: the file edited (under kernel/, or a file of the
# kernel tree), the object it is compiled into, the suite run. A file of
# the kernel is edited as a developer edits it: in a tree of their own,
# which the harness runs with --kernel (its own copy of a Debian kernel
# it puts back as the tarball has it).
LOOP_CASES = (
	('test file', 'mm/tests/swap_state_kunit.h', 'mm/swap_state.o',
	 'mm_swap_readahead'),
	('mm/filemap.c', 'mm/filemap.c', 'mm/filemap.o',
	 'mm_filemap_mmap_miss'),
)


def edit_loop(work: Path, overlay: Path, env: Dict[str, str],
	      arch: str) -> List[str]:
	"""The edit loop and the re-run, each beside its bounds (#43): at
	most 1.5 times its parts on their own and half of bare kunit.py run
	for the same edit; a re-run at most 1.2 times the kernel's own run."""
	tree = next((work / 'cache/trees').glob('*/src'))
	build = tree.parent / f'build-{arch}'
	user = work / 'user-tree'
	shutil.copytree(next(d for d in (work / 'cache/pristine').iterdir()
			     if d.is_dir()), user, symlinks=True)
	bare = work / 'bare-loop'
	kernel_args = (REPO / f'kunit-configs/{arch}.kernel_args').read_text().split()
	configs = [f'--kunitconfig={REPO / "kunit-configs" / f"{arch}.config"}']
	kunit = [sys.executable, 'tools/testing/kunit/kunit.py', 'run',
		 '--kunitconfig=mm/tests', *configs, f'--arch={arch}',
		 f'--build_dir={bare}', *(f'--kernel_args={a}' for a in kernel_args)]
	timed('bare-loop cold', kunit, env, cwd=tree)
	rows: List[str] = []
	# Every suite, as #43 states the re-run's bound: the harness's run
	# with nothing changed against the kernel booted as the harness
	# boots it for every suite (two CPUs).
	every = [str(REPO / 'run_kunit.sh'), 'run', '-q', f'--arch={arch}']
	timed('run every suite', every, env)
	boot_all = uml_command(build, RunOptions(arch=arch,
						 kernel_args=kernel_args))
	all_s = median('run every suite', lambda: timed(
		'run every suite', boot_all, env, build))
	rerun_all = median('rerun every suite', lambda: timed(
		'rerun every suite', every, env))
	rows.append(f'rerun every suite: {rerun_all:.1f} s; bound: 1.2 x run '
		    f'{all_s:.1f} = {1.2 * all_s:.1f} '
		    f'[{"holds" if rerun_all <= 1.2 * all_s else "EXCEEDED"}]')
	for label, path, obj, suite in LOOP_CASES:
		edited = (overlay / path) if path.startswith('mm/tests/') else None
		run = [str(REPO / 'run_kunit.sh'), 'run', '-q', f'--arch={arch}',
		       *([] if edited else [f'--kernel={user}']), suite]
		n = [0]

		def edit(where: Optional[Path] = None) -> None:
			# A comment line, first: the series appends at the end.
			n[0] += 1
			f = edited if edited else (where or user) / path
			f.write_text(f'/* benchmark edit {n[0]} */\n' + f.read_text())

		if not edited:
			timed(f'first run of {user}', run, env)

		def harness() -> float:
			edit()
			return timed(f'edit {label}', run, env)
		# The first edit after a full build has make record kbuild's
		# recipes (quickbuild.py), once: not one of the timed ones.
		harness()
		loop = median(f'edit {label}', harness)
		# The same edit, in the tree, for bare kunit.py: the harness
		# wrote the overlay's file into the tree.
		def bare_run() -> float:
			edit(tree)
			if edited:
				timed('sync', run, env)  # writes the file, builds
			return timed(f'bare {label}', kunit + [suite], env, tree)
		bare_s = median(f'bare {label}', bare_run)
		saved = re.search(r'^savedcmd_\S+ := (.*)$',
				  (build / Path(obj).parent /
				   f'.{Path(obj).name}.cmd').read_text(), re.M)
		assert saved
		compile_cmd = saved.group(1).replace('ccache ', '', 1)
		compile_s = median(f'compile {obj}', lambda: timed(
			f'compile {obj}', [compile_cmd], env, build, shell=True))
		# The link of the kernel itself, as link-vmlinux.sh runs it
		# (its set -x, on stderr): vmlinux.unstripped on 7.3, the last
		# of three where the configuration has kallsyms.
		made = subprocess.run(
			['make', f'ARCH={arch}', f'O={build}', 'V=1', '--jobs=2',
			 'CC=ccache gcc'], cwd=tree, env=env, capture_output=True,
			text=True, errors='replace')
		links = [l for l in (made.stdout + made.stderr).splitlines()
			 if re.search(r'\s-o\s+vmlinux(\.unstripped)?(\s|$)', l)]
		link_cmd = links[-1].lstrip('+ ') if links else ''
		link_s = median('link vmlinux once', lambda: timed(
			'link', [link_cmd], env, build, shell=True)) if link_cmd else 0.0
		# As the harness boots a run of one suite: on one CPU first.
		boot = uml_command(build, RunOptions(
			arch=arch, filter_glob=suite,
			kernel_args=[*kernel_args, *ARCHES[arch].one_cpu]))
		run_s = median(f'run {suite}', lambda: timed(
			f'run {suite}', boot, env, build))
		# The compile and the links above wrote into the build
		# directory: the run after them builds again, and is not a
		# re-run with nothing changed.
		timed(f'run {suite} after the parts', run, env)
		rerun_s = median(f'rerun {suite}', lambda: timed(
			f'rerun {suite}', run, env))
		with Watching(run, env) as w:
			w.after(edit)
			w_loop = median(f'watch: edit {label}',
					lambda: w.after(edit), 3)
			w_rerun = median(f'watch: Enter {suite}',
					 lambda: w.after(w.enter), 5)
		parts = compile_s + link_s + run_s
		for how, edit_s, again_s in (('run', loop, rerun_s),
					     ('run --watch', w_loop, w_rerun)):
			rows += [
				f'{how}: edit {label} -> {suite}: {edit_s:.2f} s; '
				f'parts: compile {compile_s:.2f} + link {link_s:.2f} + '
				f'run {run_s:.2f}; bounds: 1.5 x parts = '
				f'{1.5 * parts:.2f} [{_holds(edit_s, 1.5 * parts)}], '
				f'half of bare {bare_s:.2f} = {bare_s / 2:.2f} '
				f'[{_holds(edit_s, bare_s / 2)}]',
				f'{how}: rerun {suite}: {again_s:.3f} s; bound: 1.2 x '
				f'run {run_s:.3f} = {1.2 * run_s:.3f} '
				f'[{_holds(again_s, 1.2 * run_s)}]']
	return rows


def _holds(seconds: float, bound: float) -> str:
	return 'holds' if seconds <= bound else 'EXCEEDED'


class Watching:
	"""`run --watch` (the command run with it added) in the background:
	the time from an edit, or from Enter, to its summary line."""

	def __init__(self, run: List[str], env: Dict[str, str]) -> None:
		self.cmd = [*run[:3], '--watch', *run[3:]]
		self.env = env

	def __enter__(self) -> 'Watching':
		print(f'[bench] watch: {" ".join(self.cmd)}', file=sys.stderr,
		      flush=True)
		self.proc = subprocess.Popen(
			self.cmd, cwd=REPO, env=self.env, text=True,
			stdin=subprocess.PIPE, stdout=subprocess.PIPE,
			stderr=subprocess.DEVNULL)
		self._summary()
		# The first edit after a run by make has kbuild's recipes
		# written down (as for run), once: not one of the timed ones.
		return self

	def __exit__(self, *exc: object) -> None:
		assert self.proc.stdin
		self.proc.stdin.close()
		self.proc.wait()

	def enter(self) -> None:
		assert self.proc.stdin
		self.proc.stdin.write('\n')
		self.proc.stdin.flush()

	def after(self, do: Callable[[], None]) -> float:
		"""Seconds from do() to the summary of the run it starts."""
		time.sleep(0.5)  # the watch waits for input
		start = time.monotonic()
		do()
		self._summary()
		return time.monotonic() - start

	def _summary(self) -> None:
		assert self.proc.stdout
		for line in self.proc.stdout:
			if re.match(r'mm-kunit: \d+ passed, \d+ failed', line):
				return
		sys.exit(f'[bench] {" ".join(self.cmd)} ended '
			 f'(exit {self.proc.wait()})')


def main() -> int:
	parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
	parser.add_argument('--mutants', action='store_true',
			    help='also time the whole mutant matrix')
	parser.add_argument('--replay', action='store_true',
			    help='also time ./run_kunit.sh replay')
	parser.add_argument('--loop', action='store_true',
			    help='also the edit loop and the re-run beside '
			    'their bounds')
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
	loop_rows: List[str] = []
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
		if args.loop:
			loop_rows = edit_loop(work, overlay, env, args.arch)
		if args.replay:
			for name, rp in REPLAYS.items():
				for scale in (sc.value for sc in rp.suites):
					figures[f'replay {name} --scale {scale}'] = timed(
						f'replay-{name}-{scale}',
						[str(REPO / 'run_kunit.sh'), 'replay', name,
						 '-q', '--scale', scale,
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
	for row in loop_rows:
		print(f'  {row}')
	return 0


if __name__ == '__main__':
	sys.exit(main())
