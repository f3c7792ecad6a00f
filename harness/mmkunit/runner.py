# SPDX-License-Identifier: GPL-2.0
"""Running kunit.py in a prepared tree and reading what it reports."""

from __future__ import annotations

import dataclasses
import enum
import fnmatch
import json
import os
import re
import select
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from mmkunit import arches
from mmkunit import ktap
from mmkunit import progress

KUNIT_PY = 'tools/testing/kunit/kunit.py'
# kunit.py's limit on a run's seconds (its --timeout default).
KUNIT_TIMEOUT = 300
# The project's suites, as a kunit.py --kunitconfig argument (a directory).
SUITES_KUNITCONFIG = 'mm/tests'


class Status(enum.Enum):
	PASS = 'PASS'
	FAIL = 'FAIL'
	SKIP = 'SKIP'
	ERROR = 'ERROR'  # the test crashed, or the kernel did


@dataclasses.dataclass(frozen=True)
class CaseResult:
	"""One leaf test case; a parameterised test gives one per row."""
	name: str  # suite.test or suite.test.row
	status: Status
	# From the KTAP output, where it has the case: its lines (the failed
	# expectations, the skip reason), its duration in seconds and, if it
	# was skipped, why.
	log: str = ''
	duration: Optional[float] = None
	skip_reason: Optional[str] = None


@dataclasses.dataclass
class RunResult:
	kunit_returncode: int
	cases: List[CaseResult]
	results_dir: Path
	error: str = ''
	# Kernel warnings printed while the tests ran.
	complaints: List[str] = dataclasses.field(default_factory=list)
	# Whether a kernel was built and booted (it printed KTAP).
	booted: bool = False
	# Whether a kernel was built and started: it left a console, with or
	# without KTAP in it.
	started: bool = False
	# Kernel boots the run took: more than one after a crash.
	boots: int = 1
	# Wall time of the whole run, build included.
	seconds: Optional[float] = None
	# kunit.py's (or make's) build time, in seconds.
	build_seconds: Optional[float] = None

	def count(self, status: Status) -> int:
		return sum(1 for c in self.cases if c.status == status)

	@property
	def untestable(self) -> bool:
		"""No kernel to test: it did not build, or did not boot."""
		return not self.booted and not self.cases

	@property
	def died_before_tests(self) -> bool:
		"""A kernel was built and started, but ran no test."""
		return self.started and self.untestable

	@property
	def failed(self) -> List[CaseResult]:
		return [c for c in self.cases
			if c.status in (Status.FAIL, Status.ERROR)]

	@property
	def ok(self) -> bool:
		return (self.kunit_returncode == 0 and not self.error and
			bool(self.cases) and not self.failed and
			not self.complaints)

	def summary(self) -> str:
		"""The closing line: 'mm-kunit: N passed, N failed, N skipped'."""
		return (f'mm-kunit: {self.count(Status.PASS)} passed, '
			f'{len(self.failed)} failed, {self.count(Status.SKIP)} skipped')


class ResultsError(Exception):
	"""kunit.py's JSON is missing or not what kunit.py writes."""


def parse_kunit_json(text: str) -> List[CaseResult]:
	"""Flattens kunit.py's --json output into leaf test cases."""
	try:
		root = json.loads(text)
	except ValueError as e:
		raise ResultsError(f'kunit.py JSON is not valid JSON: {e}') from e
	if not isinstance(root, dict) or 'sub_groups' not in root:
		raise ResultsError('kunit.py JSON has no "sub_groups": not a kunit.py result')
	cases: List[CaseResult] = []

	def walk(group: Dict[str, Any], prefix: str) -> None:
		for case in group.get('test_cases', []):
			try:
				status = Status(case['status'])
			except (KeyError, ValueError) as e:
				raise ResultsError(f'bad test case in kunit.py JSON: {case!r}') from e
			cases.append(CaseResult(prefix + case['name'], status))
		for sub in group.get('sub_groups', []):
			walk(sub, prefix + sub['name'] + '.')

	for suite in root['sub_groups']:
		walk(suite, suite['name'] + '.')
	return cases


def with_ktap(cases: List[CaseResult],
	      ktap_cases: Sequence[ktap.KtapCase]) -> List[CaseResult]:
	"""kunit.py's verdicts, with each case's log and duration from KTAP."""
	by_name: Dict[str, List[ktap.KtapCase]] = {}
	for kc in ktap_cases:
		by_name.setdefault(kc.name, []).append(kc)
	out = []
	for case in cases:
		found = by_name.get(case.name)
		if found:
			kc = found.pop(0)
			case = dataclasses.replace(case, log=kc.log,
						   duration=kc.duration,
						   skip_reason=kc.skip_reason)
		out.append(case)
	return out


# kunit.py run's last line: "Elapsed time: 9.8s total, 0.0s configuring,
# 3.3s building, 6.5s running".
_ELAPSED = re.compile(r'Elapsed time: [0-9.]+s total, [0-9.]+s configuring, '
		      r'([0-9.]+)s building')


# What the kernel's checkers print when they find something: WARN_ON()
# ("WARNING: CPU: ..."), lockdep and RCU lockdep ("WARNING: possible
# circular locking dependency detected", "WARNING: suspicious RCU usage"),
# KASAN, KFENCE and sleeping in atomic ("BUG: ..."), the slab checks,
# UBSAN, bad page state, page poisoning, list and debug-object checks.
_KERNEL_COMPLAINT = re.compile(
	r'(WARNING: CPU: \d+ PID: \d+ at \S+|WARNING: [a-z].*|BUG: .*|'
	r'kernel BUG at .*|BUG [^ ]+ \(.*\): .*|UBSAN: .*|Bad page state.*|'
	r'pagealloc: (?:memory corruption|single bit error).*|'
	r'list_(?:add|del) corruption.*|ODEBUG: .*)')


def kernel_complaints(ktap: str) -> List[str]:
	"""WARNINGs, BUGs and bad page states the kernel printed while the
	tests ran. KUnit does not fail a test for them; the harness does."""
	return [m.group(1) for m in
		(_KERNEL_COMPLAINT.search(line) for line in ktap.splitlines()) if m]


@dataclasses.dataclass(frozen=True)
class RunOptions:
	"""How kunit.py is run; a variant is made with dataclasses.replace()."""
	arch: str = 'um'
	filter_glob: Optional[str] = None
	kunit_args: Sequence[str] = ()
	jobs: int = os.cpu_count() or 1
	kunitconfigs: Sequence[Path] = ()
	qemu_args: str = ''
	# Kernel command-line options (kunit.py --kernel_args), one a string.
	kernel_args: Sequence[str] = ()
	quiet: bool = False
	# make VAR=value options for every build (the compiler cache's CC=).
	make_options: Sequence[str] = ()
	# Added to the environment of kunit.py and make.
	env: Dict[str, str] = dataclasses.field(default_factory=dict)
	# After a crash, run the tests after it in further boots (run_kunit).
	rerun_after_crash: bool = True
	# Options added to the configuration (kunit.py --kconfig_add).
	kconfig_add: Sequence[str] = ()
	# The kernel's memory, as mem= takes it ('9G'); None: kunit.py's 1 GiB.
	memory: Optional[str] = None
	# Seconds the tests may run (kunit.py --timeout); None: kunit.py's.
	timeout: Optional[int] = None
	# Boot options that put the kernel on fewer CPUs than kernel_args
	# give it (the arch's one_cpu), for the first boot of a run: a test
	# that skips for want of CPUs boots again without them (run_kunit).
	few_cpus: Sequence[str] = ()
	# The tests that fail on this kernel with the series, as its port's
	# list of expected failures says (name pattern, why): a mutant run
	# measures against the others. held_to_list() reports one that fails
	# as skipped, and one that passes as failed: the list is wrong then.
	failing_here: Sequence[Tuple[str, str]] = ()


def ccache_options(ccache_dir: Path,
		   cross_compile: Optional[str] = None) -> RunOptions:
	"""Options that put gcc (the kernel's: cross_compile's, if the arch
	has a cross compiler) behind ccache, its cache in ccache_dir.

	ccache's base_dir is left unset: it would make ccache compile with
	relative paths, which the kernel's -fmacro-prefix-map does not strip
	from __FILE__ (test failures would name ../src/mm/...). A tree
	prepared anew at the same place (a CI machine with the same cache
	path) hits the cache as it is.

	ccache runs in its default (direct) mode, never in depend mode: depend
	mode knows a unit's inputs only from the -MMD list, which leaves out
	what an .incbin directive reads. x86_64's bzImage embeds the
	compressed kernel through arch/x86/boot/compressed/piggy.S, whose
	text changes only with the kernel's sizes: in depend mode a rebuilt
	kernel of the same sizes as one built before got that build's
	piggy.o, and QEMU booted the old kernel. Direct mode sees .incbin
	and compiles such a unit every time.
	"""
	return RunOptions(
		make_options=(f'CC=ccache {cross_compile or ""}gcc',
			      'HOSTCC=ccache gcc'),
		env={'CCACHE_DIR': str(ccache_dir),
		     # Builds in other directories may share the cache.
		     'CCACHE_NOHASHDIR': 'true',
		     # Not depend mode, whatever ccache.conf says (above).
		     'CCACHE_NODEPEND': 'true'})


def kunit_command(tree: Path, build_dir: Path, opts: RunOptions,
		  json_path: Path, subcommand: str = 'run',
		  list_tests: bool = False) -> List[str]:
	"""kunit.py run (configure, build, run), or exec (run only)."""
	arch = arches.ARCHES[opts.arch]
	cmd = [sys.executable, str(tree / KUNIT_PY), subcommand,
	       f'--build_dir={build_dir}', f'--arch={arch.name}',
	       f'--kunitconfig={SUITES_KUNITCONFIG}']
	if arch.cross_compile:
		cmd.append(f'--cross_compile={arch.cross_compile}')
	if subcommand in ('run', 'build'):
		cmd.append(f'--jobs={opts.jobs}')
	if subcommand in ('run', 'build', 'config'):
		cmd += [f'--make_options={o}' for o in opts.make_options]
		cmd += [f'--kconfig_add={o}' for o in opts.kconfig_add]
	cmd += [f'--kunitconfig={k}' for k in opts.kunitconfigs]
	qemu_args = opts.qemu_args
	if opts.memory and arch.qemu:
		# QEMU takes the last -m: this one, after kunit.py's.
		qemu_args = f'{qemu_args} -m {opts.memory}'.strip()
	if qemu_args:
		cmd.append(f'--qemu_args={qemu_args}')
	if subcommand in ('run', 'exec'):
		cmd += [f'--kernel_args={k}' for k in opts.kernel_args]
		cmd += ['--list_tests'] if list_tests else [f'--json={json_path}']
		cmd += list(opts.kunit_args)
		# After the user's own: the harness's limit is the one it
		# looks for (generated.classify()).
		if opts.timeout:
			cmd.append(f'--timeout={opts.timeout}')
		if opts.filter_glob:
			cmd.append(opts.filter_glob)
	return cmd


def _stream(cmd: List[str], cwd: Path, out: Any, quiet: bool,
	    env: Optional[Dict[str, str]] = None,
	    build_dir: Optional[Path] = None) -> int:
	"""Runs cmd, logging its output to out and, unless quiet, echoing it.

	While it runs silent (a build), a heartbeat says it is still working
	and, given the build directory, how many objects it compiled.
	"""
	out.write('$ ' + ' '.join(cmd) + '\n')
	out.flush()
	what = (f'in kunit.py {cmd[2]}' if cmd[1:2] and cmd[1].endswith(KUNIT_PY)
		else f'in {cmd[0]}')
	detail = progress.objects_built(build_dir, time.time()) if build_dir else None
	with progress.Heartbeat(what, detail) as hb:
		proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE,
					stderr=subprocess.STDOUT, text=True,
					errors='replace',
					env=dict(os.environ, **env) if env else None)
		_echo(proc.stdout, out, quiet, hb)
		return proc.wait()


class ConfigError(Exception):
	"""kunit.py could not configure the build directory."""


class StaleKernelError(Exception):
	"""The kernel that booted is not the one the build directory holds."""


# The banner a kernel prints first: "Linux version 6.12.117 (...) #85 ...".
_BANNER = re.compile(r'Linux version \S+ \(.*\) #(\d+) ')


def check_booted(build_dir: Path, console: str, env: Dict[str, str]) -> None:
	"""StaleKernelError unless the kernel whose console this is has the
	build number of the last build in build_dir (kbuild's .version): a
	test result of another kernel is no result of this one."""
	m = _BANNER.search(console)
	version = build_dir / '.version'
	if not m or not version.is_file() or \
	   'KBUILD_BUILD_VERSION' in {**os.environ, **env}:
		return
	built = version.read_text().strip()
	if m.group(1) != built:
		raise StaleKernelError(
			f'the kernel that booted is build #{m.group(1)}, but '
			f'{build_dir} last built #{built}: its results would be '
			'another kernel\'s')


def configure(tree: Path, build_dir: Path, opts: RunOptions,
	      log: Path) -> None:
	"""kunit.py config: writes build_dir/.config for the suites."""
	with open(log, 'w') as out:
		rc = _stream(kunit_command(tree, build_dir, opts, Path(),
					   'config'), tree, out, opts.quiet, opts.env)
	if rc != 0:
		raise ConfigError(f'kunit.py config failed; see {log}')


def run_kunit(tree: Path, build_dir: Path, opts: RunOptions,
	      results_dir: Path, prebuilt_config: bool = False,
	      exec_only: bool = False) -> RunResult:
	"""Builds and runs the suites (see _run_once). If the kernel died
	before the end, names the test it died in and runs, in further boots,
	the tests that did not run (see _run_the_rest)."""
	started = time.monotonic()
	first = dataclasses.replace(
		opts, kernel_args=[*opts.kernel_args, *opts.few_cpus], few_cpus=())
	result, lines = _run_once(tree, build_dir, first, results_dir,
				  prebuilt_config, exec_only)
	if result.booted and not ktap.complete(lines) and opts.rerun_after_crash:
		result = _run_the_rest(tree, build_dir, first, result, lines)
	if opts.few_cpus:
		result = _run_needing_cpus(tree, build_dir, opts, result)
	_hold_to_list(result, opts.failing_here)
	result.seconds = time.monotonic() - started
	return result


def _hold_to_list(result: RunResult,
		  failing: Sequence[Tuple[str, str]]) -> None:
	"""result's cases held to failing (held_to_list()); kunit.py's exit
	status 1 with them, if the failures it reported are all the list's."""
	cases = held_to_list(result.cases, failing)
	bad = (Status.FAIL, Status.ERROR)
	if result.kunit_returncode == 1 and not result.error and \
	   any(c.status in bad for c in result.cases) and \
	   not any(c.status in bad for c in cases):
		result.kunit_returncode = 0
	result.cases = cases


def case_matches(name: str, pattern: str) -> bool:
	"""Whether a test's name matches a pattern of a list of tests (a
	glob; suite.test also covers its parameterised rows)."""
	return (fnmatch.fnmatchcase(name, pattern) or
		fnmatch.fnmatchcase(name, pattern + '.*'))


def held_to_list(cases: List[CaseResult],
		 failing: Sequence[Tuple[str, str]]) -> List[CaseResult]:
	"""cases, each that failing names (RunOptions.failing_here) skipped
	if it failed, with the list's reason, and failed if it passed."""
	out = []
	for c in cases:
		why = next((w for p, w in failing if case_matches(c.name, p)), None)
		if why is not None and c.status == Status.FAIL:
			c = dataclasses.replace(
				c, status=Status.SKIP,
				skip_reason=f'fails on this kernel as its list says: {why}')
		elif why is not None and c.status == Status.PASS:
			c = dataclasses.replace(
				c, status=Status.FAIL,
				log=f'passed, but the port\'s list says it fails: {why}\n'
				+ c.log)
		out.append(c)
	return out


# What a test that needs more CPUs than the kernel booted with says as it
# skips (the suites' kunit_skip(test, "needs two CPUs: ...")).
_NEEDS_CPUS = re.compile(r'needs (?:two|[0-9]+) CPUs')


def needing_cpus(cases: Sequence[CaseResult]) -> List[str]:
	"""The tests (suite.test) of cases that skipped for want of CPUs."""
	return sorted({'.'.join(c.name.split('.')[:2]) for c in cases
		       if c.status is Status.SKIP and
		       _NEEDS_CPUS.match(c.skip_reason or '')})


def replaced(cases: Sequence[CaseResult], test: str,
	     again: Sequence[CaseResult]) -> List[CaseResult]:
	"""cases with those of test (suite.test, its parameters too) put
	aside for again, a boot's results of it."""
	return [c for c in cases if c.name != test and
		not c.name.startswith(test + '.')] + list(again)


def _run_needing_cpus(tree: Path, build_dir: Path, opts: RunOptions,
		      first: RunResult) -> RunResult:
	"""After a first boot on opts.few_cpus: each test that skipped for
	want of CPUs boots again with opts.kernel_args alone (a boot a test),
	and its results replace the skips."""
	tests = needing_cpus(first.cases)
	if not tests:
		return first
	merged = dataclasses.replace(first, cases=list(first.cases),
				     complaints=list(first.complaints))
	for n, test in enumerate(tests, start=1):
		progress.progress(f'{test} needs more CPUs: booting again with '
				  f'{" ".join(opts.kernel_args)}')
		again, lines = _run_once(
			tree, build_dir, dataclasses.replace(
				opts, filter_glob=test, few_cpus=(), quiet=True),
			first.results_dir / f'cpus-{n}', exec_only=True)
		cases = _named(again.cases)
		if not ktap.complete(lines) and \
		   not any(c.status is Status.ERROR for c in cases):
			# The kernel died in it (or never ran it).
			cases.append(CaseResult(test, Status.ERROR,
						log=_crash_log(again, lines)))
		merged.cases = replaced(merged.cases, test, cases)
		merged.complaints += again.complaints
		merged.error = merged.error or again.error
	return merged


def _run_once(tree: Path, build_dir: Path, opts: RunOptions,
	      results_dir: Path, prebuilt_config: bool = False,
	      exec_only: bool = False) -> Tuple[RunResult, List[ktap.KtapLine]]:
	"""Builds and runs the suites with kunit.py; keeps its logs.

	With prebuilt_config, build_dir already holds the right .config
	(see configure()): the kernel is built with plain make, which skips
	kunit.py's configuration steps, and run as exec_only does. With
	exec_only, the kernel in build_dir is run as it is, with no build
	(kunit.py exec, or _boot_uml()).

	Writes into results_dir: kunit.out (what was run and printed),
	console.log (the kernel's raw console output), ktap.log (the KTAP
	lines of it) and results.json (kunit.py --json).
	"""
	results_dir.mkdir(parents=True, exist_ok=True)
	json_path = results_dir / 'results.json'
	json_path.unlink(missing_ok=True)
	(build_dir / 'test.log').unlink(missing_ok=True)
	kunit_out = results_dir / 'kunit.out'
	build_seconds: Optional[float] = None
	with open(kunit_out, 'w') as out:
		if prebuilt_config:
			build_seconds = _make(tree, build_dir, opts, out)
			if build_seconds is None:
				return RunResult(2, [], results_dir,
						 error='the kernel did not build; see '
						 f'{kunit_out}'), []
		build = not (prebuilt_config or exec_only)
		returncode = _run_kernel(tree, build_dir, opts, json_path, out,
					 build)
	result = RunResult(returncode, [], results_dir)
	m = _ELAPSED.search(kunit_out.read_text(errors='replace'))
	result.build_seconds = float(m.group(1)) if m else build_seconds
	lines = _read_console(tree, build_dir, opts, json_path, result,
			      reparse=not _boots_itself(opts, build))
	if not json_path.is_file():
		result.error = (f'kunit.py exited {returncode} without results '
				f'(see {kunit_out})')
		return result, lines
	_read_cases(json_path, lines, result)
	return result, lines


def make(tree: Path, build_dir: Path, opts: RunOptions,
	 log: Path) -> Optional[float]:
	"""Builds the kernel of a configured build_dir, make's output in
	log; the seconds it took, or None if it did not build."""
	with open(log, 'w') as out:
		return _make(tree, build_dir, opts, out)


def _make(tree: Path, build_dir: Path, opts: RunOptions,
	  out: Any) -> Optional[float]:
	"""Builds the kernel of a configured build_dir with plain make; the
	seconds it took, or None if it did not build."""
	arch = arches.ARCHES[opts.arch]
	make = ['make', f'ARCH={arch.name}', f'O={build_dir}',
		f'--jobs={opts.jobs}', *opts.make_options]
	if arch.cross_compile:
		make.append(f'CROSS_COMPILE={arch.cross_compile}')
	started = time.monotonic()
	if _stream(make, tree, out, opts.quiet, opts.env, build_dir) != 0:
		return None
	return time.monotonic() - started


def _boots_itself(opts: RunOptions, build: bool) -> bool:
	"""Whether the harness boots the kernel itself (_boot_uml()) rather
	than kunit.py: UML, unless kunit.py builds it first with its default
	memory or is given arguments of the user's own."""
	return arches.ARCHES[opts.arch].uml and not opts.kunit_args and \
		(not build or bool(opts.memory))


def _run_kernel(tree: Path, build_dir: Path, opts: RunOptions,
		json_path: Path, out: Any, build: bool) -> int:
	"""Runs the kernel of build_dir, built first if build: kunit.py run
	(or exec), or _boot_uml() where _boots_itself(). Returns kunit.py's
	exit code."""
	if _boots_itself(opts, build):
		return _boot_uml(tree, build_dir, opts, json_path, out, build)
	return _stream(kunit_command(tree, build_dir, opts, json_path,
				     'run' if build else 'exec'),
		       tree, out, opts.quiet, opts.env, build_dir)


def _read_console(tree: Path, build_dir: Path, opts: RunOptions,
		  json_path: Path, result: RunResult,
		  reparse: bool) -> List[ktap.KtapLine]:
	"""The KTAP lines of the kernel's console (build_dir/test.log), if it
	printed one. Keeps it as console.log and its KTAP as ktap.log in the
	results directory, notes the kernel's warnings and whether it booted
	in result and, if reparse (kunit.py parsed the kernel's lines too),
	has kunit.py parse the KTAP again without the kernel's lines if it
	has some inside (_reparse())."""
	console = build_dir / 'test.log'
	if not console.is_file():
		return []
	results_dir = result.results_dir
	shutil.copyfile(console, results_dir / 'console.log')
	text = console.read_text(errors='replace')
	check_booted(build_dir, text, opts.env)
	lines = ktap.ktap_lines(text)
	text = ktap.text(lines)
	(results_dir / 'ktap.log').write_text(text)
	result.complaints = kernel_complaints(text)
	result.started = True
	result.booted = bool(lines)
	if reparse and ktap.kernel_lines_inside(lines) and json_path.is_file():
		result.kunit_returncode = _as_exec(
			_reparse(tree, lines, json_path, results_dir), json_path)
	return lines


def _reparse(tree: Path, lines: Sequence[ktap.KtapLine], json_path: Path,
	     results_dir: Path) -> int:
	"""kunit.py parse of the KTAP without the kernel's lines, which can
	garble kunit.py's reading of a suite header, kept as ktap-parsed.log;
	rewrites json_path. Returns kunit.py's exit code."""
	kept = results_dir / 'ktap-parsed.log'
	kept.write_text(ktap.text(ktap.without_kernel_lines(lines)))
	with open(results_dir / 'kunit.out', 'a') as out:
		return _stream([sys.executable, str(tree / KUNIT_PY), 'parse',
				f'--json={json_path}', str(kept)], tree, out, True)


def _read_cases(json_path: Path, lines: Sequence[ktap.KtapLine],
		result: RunResult) -> None:
	"""result's cases from kunit.py's JSON, each with its KTAP; or, if
	there are none, why."""
	try:
		result.cases = with_ktap(parse_kunit_json(json_path.read_text()),
					 ktap.ktap_cases(lines))
	except ResultsError as e:
		result.error = str(e)
		return
	if not result.cases:
		result.error = 'no test ran (does the filter match any test?)'


def uml_command(build_dir: Path, opts: RunOptions) -> List[str]:
	"""The UML kernel of build_dir with the arguments kunit.py boots it
	with (its memory opts.memory, else kunit.py's 1G)."""
	arch = arches.ARCHES[opts.arch]
	params = [str(build_dir / arch.image), *opts.kernel_args]
	if opts.filter_glob:
		params.append(f'kunit.filter_glob={opts.filter_glob}')
	return params + ['kunit.enable=1', f'mem={opts.memory or "1G"}',
			 f'console={arch.console}', 'kunit_shutdown=halt']


def _boot_uml(tree: Path, build_dir: Path, opts: RunOptions,
	      json_path: Path, out: Any, build: bool) -> int:
	"""Builds (with kunit.py build, if build) and boots the UML kernel
	with the arguments kunit.py exec gives it (uml_command()), while
	kunit.py parse reads its KTAP, the kernel's own lines left out
	(ktap.without_kernel_lines()), and writes json_path. The console
	goes to build_dir/test.log, as kunit.py writes it. Returns the exit
	code kunit.py exec would have given (_as_exec()).

	kunit.py (7.3's kunit_kernel.py too) starts UML with mem=1G after any
	--kernel_args, and UML takes the last mem=, so a kernel that needs
	more is booted here. So is every kernel already built: a parse that
	runs beside the kernel takes none of the run's time, where kunit.py
	exec's start and a second parse of a console with the kernel's lines
	in it took about a third of a second of each.
	"""
	if build:
		rc = _stream(kunit_command(tree, build_dir, opts, json_path,
					   'build'),
			     tree, out, opts.quiet, opts.env, build_dir)
		if rc != 0:
			return rc
	params = uml_command(build_dir, opts)
	out.write('$ ' + ' '.join(params) + '\n')
	out.flush()
	# kunit.py's limit where kunit.py would have booted it; none for
	# a kernel of more memory (a replay) unless opts say.
	timeout = opts.timeout or (None if opts.memory else KUNIT_TIMEOUT)
	env = _parse_env(opts)
	ready = _ready.pop() if _ready else None
	if ready and (ready.tree, ready.env) != (tree, env):
		ready.stop()
		ready = None
	parser = ready or _Parser.start(tree, json_path, env)
	out.write('$ ' + ' '.join(parser.command) + '\n')
	out.flush()
	with progress.Heartbeat('in the UML kernel', None) as hb:
		echoing = threading.Thread(target=_echo, args=(
			parser.proc.stdout, out, opts.quiet, hb))
		echoing.start()
		try:
			# In the harness's process group, as kunit.py started
			# it: a Ctrl-C stops it too.
			uml = subprocess.Popen(
				params, cwd=build_dir, stdin=subprocess.DEVNULL,
				stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
				env=env)
		except OSError as e:
			out.write(f'mm-kunit: cannot boot {params[0]}: {e}\n')
			uml = None
		try:
			if uml:
				with open(build_dir / 'test.log', 'w') as log:
					killed = _console_into(uml, parser.proc.stdin,
							       log, timeout)
		finally:
			_feed(parser.proc.stdin, None)
			echoing.join()
	rc = parser.proc.wait()
	if parser.json != json_path and parser.json.is_file():
		os.replace(parser.json, json_path)
	if not uml:
		return 1
	if killed:
		# kunit.py's words, which generated.classify() looks for.
		out.write(f'mm-kunit: the kernel timed out after {timeout} '
			  'seconds: killed\n')
	return _as_exec(rc, json_path)


@dataclasses.dataclass(frozen=True)
class _Parser:
	"""kunit.py parse of tree's kernel's KTAP, with its environment, as
	_boot_uml() runs it beside the kernel; it writes json."""
	tree: Path
	env: Optional[Dict[str, str]]
	json: Path
	command: List[str]
	proc: 'subprocess.Popen[str]'

	@staticmethod
	def start(tree: Path, json_path: Path,
		  env: Optional[Dict[str, str]]) -> '_Parser':
		cmd = [sys.executable, str(Path(__file__).parent /
					  'no_teardown.py'),
		       str(tree / KUNIT_PY), 'parse', f'--json={json_path}']
		# Line-buffered: it parses (and shows) each line as the
		# kernel prints it.
		return _Parser(tree, env, json_path, cmd, subprocess.Popen(
			cmd, cwd=tree, stdin=subprocess.PIPE,
			stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
			text=True, errors='replace', bufsize=1, env=env))

	def stop(self) -> None:
		"""Ends it without a kernel to read."""
		self.proc.kill()
		self.proc.communicate()
		self.json.unlink(missing_ok=True)


# The parser ready_parser() started for the next boot, if none took it.
_ready: List[_Parser] = []


def _parse_env(opts: RunOptions) -> Optional[Dict[str, str]]:
	return dict(os.environ, **opts.env) if opts.env else None


def ready_parser(tree: Path, opts: RunOptions, json_path: Path) -> None:
	"""Starts kunit.py parse for the next boot of tree's UML kernel with
	opts (its JSON in json_path until then), the Python start and
	kunit.py's imports out of that run's time: `run --watch` does
	between its runs. A boot of another tree, or in another
	environment, ends it and starts its own."""
	if not _ready:
		_ready.append(_Parser.start(tree, json_path, _parse_env(opts)))


def drop_parser() -> None:
	"""Ends the parser ready_parser() started, if no boot took it."""
	while _ready:
		_ready.pop().stop()


def _as_exec(rc: int, json_path: Path) -> int:
	"""kunit.py parse's exit code as kunit.py exec's would be: exec
	counts a run whose tests all skipped as a success, parse does not."""
	if rc != 1 or not json_path.is_file():
		return rc
	try:
		cases = parse_kunit_json(json_path.read_text())
	except ResultsError:
		return rc
	return 0 if cases and all(c.status in (Status.PASS, Status.SKIP)
				  for c in cases) else rc


def _echo(lines: Any, out: Any, quiet: bool, hb: progress.Heartbeat) -> None:
	"""Copies kunit.py's lines into out and, unless quiet, to stdout."""
	for line in lines:
		out.write(line)
		if not quiet:
			sys.stdout.write(line)
			sys.stdout.flush()
			hb.touch()


def _console_into(uml: 'subprocess.Popen[bytes]', pipe: Any, log: Any,
		  timeout: Optional[int]) -> bool:
	"""Writes the console of a booting UML kernel into log and its KTAP,
	without the kernel's own lines, into pipe, until the kernel has
	ended and printed all it had (a process it left that holds the
	console open is not waited for), or kills it after timeout seconds.
	Says whether it was killed."""
	assert uml.stdout is not None
	fd = uml.stdout.fileno()
	deadline = time.monotonic() + timeout if timeout else None
	killed = False
	stream = ktap.KtapStream()
	feeding = True
	rest = b''

	def lines(chunk: bytes) -> None:
		nonlocal feeding
		for raw in chunk.splitlines(keepends=True):
			line = raw.decode(errors='replace')
			log.write(line)
			kl = stream.feed(line)
			if feeding and kl is not None and ktap.is_ktap(kl):
				feeding = _feed(pipe, kl.text)
	try:
		while True:
			if deadline and not killed and time.monotonic() > deadline:
				uml.kill()
				killed = True
			ready, _, _ = select.select([fd], [], [], 0.2)
			if not ready:
				if uml.poll() is not None:
					break
				continue
			chunk = os.read(fd, 1 << 16)
			if not chunk:
				break
			whole, nl, rest = (rest + chunk).rpartition(b'\n')
			lines(whole + nl)
		lines(rest)
		uml.wait()
	finally:
		if uml.poll() is None:
			uml.kill()
			uml.wait()
	if killed:
		log.write(f'\nmm-kunit: killed after {timeout} s\n')
	return killed


def _feed(pipe: Any, line: Optional[str]) -> bool:
	"""Writes a line into pipe, or closes it if line is None; False if
	the reader is gone (kunit.py parse stopped)."""
	try:
		if line is None:
			pipe.close()
		else:
			pipe.write(line + '\n')
		return True
	except BrokenPipeError:
		return False


def list_tests(tree: Path, build_dir: Path, opts: RunOptions,
	       log: Path) -> List[str]:
	"""The tests (suite.test) the built kernel runs, in the order it runs
	them, as kunit.py exec --list_tests gives them (one boot)."""
	with open(log, 'w') as out:
		_stream(kunit_command(tree, build_dir, opts, Path(), 'exec',
				      list_tests=True), tree, out, True, opts.env)
	return [line.strip() for line in log.read_text(errors='replace').splitlines()
		if re.fullmatch(r'[^\s.$]+\.[^\s.]+', line.strip())]


def _next_boot(pending: Sequence[str],
	       listed: Sequence[str]) -> Tuple[str, List[str]]:
	"""What the next boot runs: the whole suite of the first pending test
	if none of that suite ran yet, else that one test (a filter glob
	names one suite or one test). Returns the glob and its tests."""
	suite = pending[0].split('.')[0]
	of_suite = [t for t in listed if t.split('.')[0] == suite]
	if all(t in pending for t in of_suite):
		return suite, of_suite
	return pending[0], [pending[0]]


def _named(cases: Sequence[CaseResult]) -> List[CaseResult]:
	return [c for c in cases if c.name and not c.name.endswith('.')]


def _crash_log(result: RunResult, lines: Sequence[ktap.KtapLine]) -> str:
	"""The end of the output the kernel died in, for the crashed test."""
	tail = ktap.text(lines[-40:])
	return f'the kernel died in this test (see {result.results_dir})\n{tail}'


def _run_the_rest(tree: Path, build_dir: Path, opts: RunOptions,
		  first: RunResult, lines: List[ktap.KtapLine]) -> RunResult:
	"""After a run the kernel did not finish: the first test that has no
	result is the one it died in (the tests run one at a time, in order);
	it is reported as crashed (ERROR), and the tests after it are run in
	further boots of the same kernel, each boot a suite or a test, until
	every test has run or crashed. Their results join the first run's.
	Rows of a parameterised test after the one that crashed are lost:
	a filter names tests, not rows. (kunit.py's --run_isolated boots once
	per suite or test on every run, not only after a crash.)"""
	res = first.results_dir
	listed = list_tests(tree, build_dir, opts, res / 'list-tests.out')
	done = set(ktap.finished_tests(lines))
	pending = [t for t in listed if t not in done]
	# kunit.py stands a nameless ERROR in for each test it found missing;
	# the tests themselves are named below.
	merged = dataclasses.replace(first, cases=_named(first.cases),
				     complaints=list(first.complaints))
	last, boot = first, 1
	# The tests the last boot was to run: the first of them without a
	# result is the one the kernel died in.
	expected = set(pending)
	while pending:
		if pending[0] in expected:
			crashed = pending.pop(0)
			if not any(c.name == crashed for c in merged.cases):
				merged.cases.append(CaseResult(
					crashed, Status.ERROR,
					log=_crash_log(last, lines)))
			progress.progress(f'the kernel died in {crashed}; '
					  f'{len(pending)} tests left to run')
			if not pending:
				break
		glob, batch = _next_boot(pending, listed)
		boot += 1
		last, lines = _run_once(
			tree, build_dir,
			dataclasses.replace(opts, filter_glob=glob, quiet=True),
			res / f'boot-{boot}', exec_only=True)
		merged.cases += _named(last.cases)
		merged.complaints += last.complaints
		ran = set(ktap.finished_tests(lines))
		expected = set(batch)
		pending = ([t for t in batch if t not in ran] +
			   [t for t in pending if t not in batch])
	merged.boots = boot
	return merged


_BUILD_ERROR = re.compile(r'(?:^|\s)(\S+:\d+:\d+: (?:fatal )?error: .*)$')


def build_errors(results_dir: Path, limit: int = 5) -> List[str]:
	"""The compiler's first errors in a run's kunit.out, if it has any."""
	try:
		text = (results_dir / 'kunit.out').read_text(errors='replace')
	except OSError:
		return []
	found = [m.group(1) for m in map(_BUILD_ERROR.search, text.splitlines())
		 if m]
	return found[:limit]


def new_results_dir(cache: Path, label: str) -> Path:
	"""A new directory under results/, named for the time and label (a
	slash in it, as in the mutant id '...:aor:/', becomes '%2F')."""
	stamp = time.strftime('%Y%m%d-%H%M%S')
	base = cache / 'results'
	base.mkdir(parents=True, exist_ok=True)
	name = label.replace('/', '%2F')
	for n in range(1000):
		d = base / (f'{stamp}-{name}' + (f'-{n}' if n else ''))
		try:
			d.mkdir()
			return d
		except FileExistsError:
			continue
	raise RuntimeError(f'cannot make a results directory in {base}')
