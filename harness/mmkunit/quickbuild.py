# SPDX-License-Identifier: GPL-2.0
"""Rebuilding a configured UML kernel after an edit of C files, without
make's walk of the tree.

After an edit of one C file or header, most of what make does is look:
it parses the top Makefile (compiler probes), runs the preparation
steps and walks every directory of the tree (about 3 s here) to compile
the one object that changed; then the kernel's link steps run (1.3 s
where the configuration has kallsyms, whose table takes two links
more). The compile and the link are kbuild's own commands, which make
runs as recipes of its sub-makes. So, once per configuration, after a
build, the harness runs make again (with nothing left to build) with a
shell that writes down each recipe with the environment make gives it
(recording_options(), save(); runs.py runs that make); after that, for an edit of C files only
(stamp.config_holds()), it runs the same recipes itself: kbuild's
sub-make of each directory that holds an object depending on a changed
file (the objects' .cmd files, which kbuild's fixdep writes, name every
file each was compiled from), kbuild's own archive commands of the
directories above it, and the link recipes of the top Makefile (plan(),
build()). Each of them is a make of kbuild's, which decides what is out
of date as the whole make would; the kernel is the one a full make
gives, byte for byte, but for the build number and time of the link
before, which it keeps (kept_version(); docs/commands.md). The
sub-makes for the files a run wrote itself start before it knows what
else changed (Early).

Anything the recording does not cover (a changed file no object names,
or one that something other than an object depends on, such as the
generated headers of the preparation steps; another configuration or
build environment; an arch other than UML; a recipe that fails) makes
plan() or build() answer None or False, and the caller builds with make.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

RECIPES = 'mm-kunit-recipes.json'
# The shell make runs its commands with while it records: each recipe
# (a command of a make, which writes to the make's own output; not a
# $(shell) call, whose output make reads through a pipe) goes to a file
# of $MM_KUNIT_RECIPES with the make's process id, the command and the
# environment; then /bin/sh runs it. So every command of the recording
# make runs with /bin/sh, also those UML's Makefile gives to bash
# (SHELL := bash): the recording make has nothing to build (record()).
_SHELL = '''#!/bin/bash
if [ -n "$MM_KUNIT_RECIPES" ] && [ "$1" = -c ] &&
   [ /proc/$$/fd/1 -ef /proc/$PPID/fd/1 ]; then
	f="$MM_KUNIT_RECIPES/${EPOCHREALTIME/./}.$$"
	printf '%s\\0%s\\0%s\\0' "$PPID" "$$" "$2" > "$f"
	env -0 > "$f.env"
fi
exec /bin/sh "$@"
'''
_DESCENT = re.compile(r'-f \S+/scripts/Makefile\.build obj=(\S+)\s.*'
		      r'need-builtin=1', re.S)
_LINK = re.compile(r'-f \S+/scripts/Makefile\.vmlinux')
# What a recorded environment must not pass on: the recording's
# jobserver (its pipes are gone) and shell.
_MAKEFLAGS_DROPPED = re.compile(r'^(--jobserver-(auth|fds)=|SHELL=)')


@dataclasses.dataclass(frozen=True)
class Recipe:
	"""A command make ran, where and with what environment."""
	cwd: str
	command: str
	env: Dict[str, str]


@dataclasses.dataclass(frozen=True)
class Recording:
	"""What a make of a configured build directory ran, as plan() needs
	it: the sub-make of each directory it walked (by directory, relative
	to the build directory), and the top Makefile's recipes after the
	walk (the link)."""
	descents: Dict[str, Recipe]
	link: List[Recipe]


# The environment variables a kernel build reads (kbuild's and ccache's):
# a recording holds while they are as they were (key()). Not PATH, which
# changes with how Python was started (pyenv's shims put theirs first):
# the recipes run with the PATH of the make that recorded them.
_BUILD_ENV = re.compile(r'^(KBUILD_|KCONFIG_|KCFLAGS$|KCPPFLAGS$|KAFLAGS$|'
			r'KRUSTFLAGS$|LLVM|CROSS_COMPILE$|ARCH$|CCACHE_|'
			r'SOURCE_DATE_EPOCH$)')


def key(config: Optional[str], env: Dict[str, str], jobs: int,
	tools: Sequence[str] = ('gcc', 'ld')) -> Optional[str]:
	"""What a recording is for: the configuration (stamp.config_inputs()),
	the build's environment as far as a kernel build reads it, make's
	jobs (its recipes carry -j) and the compiler and linker (their size
	and time: a new one has make configure again, their versions being
	part of the .config)."""
	if not config:
		return None
	stats = []
	for tool in tools:
		path = shutil.which(tool, path=env.get('PATH'))
		st = os.stat(path) if path else None
		stats.append([st.st_size, st.st_mtime_ns] if st else None)
	return json.dumps([config, sorted((k, v) for k, v in env.items()
					 if _BUILD_ENV.match(k)), jobs, stats])


def recording_options(build_dir: Path) -> Dict[str, str]:
	"""The make variable and environment that record the recipes of a
	make into build_dir (then save()), as a dict of both: SHELL= for
	make's command line, MM_KUNIT_RECIPES for its environment."""
	rec = build_dir / 'mm-kunit-recipes.d'
	shutil.rmtree(rec, ignore_errors=True)
	rec.mkdir(parents=True)
	shell = build_dir / 'mm-kunit-shell'
	shell.write_text(_SHELL)
	shell.chmod(0o755)
	return {'SHELL': str(shell), 'MM_KUNIT_RECIPES': str(rec)}


def _records(rec: Path) -> Iterator[Dict[str, Any]]:
	"""The recipes the shell wrote into rec, in the order they ran."""
	for path in sorted(rec.glob('*[0-9]')):
		parts = path.read_bytes().split(b'\0')
		env_path = path.with_name(path.name + '.env')
		if len(parts) < 3 or not env_path.is_file():
			continue
		env = dict(kv.split('=', 1) for kv in
			   env_path.read_bytes().decode(errors='replace').split('\0')
			   if '=' in kv)
		yield {'ppid': parts[0].decode(), 'pid': parts[1].decode(),
		       'command': parts[2].decode(errors='replace'), 'env': env}


def _clean(env: Dict[str, str]) -> Dict[str, str]:
	"""A recorded environment without the recording's own parts."""
	out = {k: v for k, v in env.items() if k != 'MM_KUNIT_RECIPES'}
	for flags in ('MAKEFLAGS', 'MFLAGS'):
		if flags in out:
			out[flags] = ' '.join(t for t in out[flags].split(' ')
					      if not _MAKEFLAGS_DROPPED.match(t))
	return out


def save(build_dir: Path, config: Optional[str]) -> bool:
	"""After a make with recording_options(): keeps, for
	config (key()) and build_dir's .config as it is, what plan() needs,
	and removes the raw records. Whether it found what it needs (a link
	and the directories' sub-makes)."""
	rec = build_dir / 'mm-kunit-recipes.d'
	records = list(_records(rec)) if rec.is_dir() else []
	shutil.rmtree(rec, ignore_errors=True)
	(build_dir / RECIPES).unlink(missing_ok=True)
	# The top Makefile's link recipes, and the other recipes of the same
	# make after the first of them (UML: the image's hard link).
	first = next((i for i, r in enumerate(records)
		      if _LINK.search(r['command'])), None)
	if first is None or not config:
		return False
	top = records[first]['ppid']
	link = [r for r in records[first:] if r['ppid'] == top]
	descents = {}
	for r in records:
		m = _DESCENT.search(r['command'])
		if m:
			descents[m.group(1)] = r
	if not descents:
		return False
	cwd = str(build_dir)
	st = (build_dir / '.config').stat()
	# The base: the values most recipes have.
	counts = collections.Counter(
		kv for r in [*descents.values(), *link]
		for kv in _clean(r['env']).items())
	base: Dict[str, str] = {}
	for (k, v), _ in counts.most_common():
		base.setdefault(k, v)

	def kept(r: Dict[str, Any]) -> List[Any]:
		return [r['command'], _from_base(base, _clean(r['env']))]
	(build_dir / RECIPES).write_text(json.dumps({
		'config': config, '.config': [st.st_size, st.st_mtime_ns],
		'env': base,
		'descents': {d: kept(r) for d, r in descents.items()},
		'link': [kept(r) for r in link],
		'cwd': cwd}) + '\n')
	return True


# A recipe's environment as saved: what it sets that the saved base does
# not (or sets otherwise), and what of the base it does not have. A
# make's recipes share the most of their environments (a sub-make's
# differs in MAKELEVEL and MAKEFLAGS): the whole of each, hundreds of
# recipes long, would be megabytes for every run to read.
def _from_base(base: Dict[str, str], env: Dict[str, str]) -> List[Any]:
	return [{k: v for k, v in env.items() if base.get(k) != v},
		sorted(k for k in base if k not in env)]


def _on_base(base: Dict[str, str], saved: List[Any]) -> Dict[str, str]:
	sets, unset = saved[0], set(saved[1])
	return {**{k: v for k, v in base.items() if k not in unset}, **sets}


def load(build_dir: Path,
	 config: Optional[str]) -> Optional[Recording]:
	"""The recording of build_dir's make for config (key()), if there is
	one and the .config is still the one it was made with."""
	try:
		saved = json.loads((build_dir / RECIPES).read_text())
		st = (build_dir / '.config').stat()
	except (OSError, ValueError):
		return None
	if not config or saved.get('config') != config or \
	   saved.get('.config') != [st.st_size, st.st_mtime_ns] or \
	   saved.get('cwd') != str(build_dir):
		return None
	cwd, base = str(build_dir), saved.get('env')
	if not isinstance(base, dict):
		return None
	return Recording(
		descents={d: Recipe(cwd, c, _on_base(base, e))
			  for d, (c, e) in saved['descents'].items()},
		link=[Recipe(cwd, c, _on_base(base, e)) for c, e in saved['link']])


def forget(build_dir: Path) -> None:
	"""A build directory configured anew: its recording no longer
	holds."""
	(build_dir / RECIPES).unlink(missing_ok=True)


_MOST_CHANGED = 200


def _dependents(build_dir: Path,
		changed: Sequence[str]) -> Optional[List[str]]:
	"""The objects (relative to build_dir) whose .cmd files name one of
	changed (as fixdep wrote it: a path through '..' too). None (make
	decides) if one of changed is named by none, or by the .cmd file of
	something other than an object (the preparation steps' generated
	headers, a linker script), if grep fails, or if more files changed
	than _MOST_CHANGED (a checkout in a --kernel tree: make's jobs do
	better than one sub-make a directory in turn, and grep's pattern
	would grow past what one argument may hold)."""
	if len(changed) > _MOST_CHANGED:
		return None
	names = sorted({re.escape(os.path.basename(p)) for p in changed})
	# A path as fixdep writes it (after a space), or in a command (after
	# a quote, a parenthesis or '='), up to a space, quote, parenthesis
	# or ';'.
	try:
		found = subprocess.run(
			['grep', '-rEo', '--include=.*.cmd',
			 rf'(^|[ "\'(=])/[^ "\')]*/({"|".join(names)})'
			 r'([ "\');]|$)', '.'],
			cwd=build_dir, capture_output=True, text=True)
	except OSError:
		return None
	if found.returncode not in (0, 1):
		return None
	wanted = set(changed)
	objects, named = set(), set()
	for line in found.stdout.splitlines():
		cmd, _, match = line.partition(':')
		path = os.path.normpath(match.strip(' "\'(=);'))
		if path not in wanted:
			continue
		d, name = os.path.split(os.path.normpath(cmd))
		if not name.endswith('.o.cmd'):
			return None
		objects.add(os.path.join(d, name[1:-len('.cmd')]))
		named.add(path)
	if named != wanted:
		return None
	return sorted(objects)


def outdate(build_dir: Path, changed: Sequence[str]) -> bool:
	"""Makes the objects that depend on changed (files whose times do not
	tell make they changed) older than any source, so that make and
	kbuild's recipes compile them again; whether it found them all."""
	objects = _dependents(build_dir, changed)
	for obj in objects or []:
		try:
			os.utime(build_dir / obj, ns=(0, 0))
		except FileNotFoundError:
			pass
	return objects is not None


def _ancestors(d: str) -> List[str]:
	"""d's parent directories, nearest first, ending with '.'."""
	out = []
	while d not in ('', '.'):
		d = os.path.dirname(d) or '.'
		out.append(d)
	return out


@dataclasses.dataclass(frozen=True)
class Plan:
	"""The recipes that rebuild the kernel after the edit, in order, and
	the directories whose recorded sub-makes are among them: the first
	of the steps, one for each of walks, in walks' order."""
	steps: List[Recipe]
	walks: List[str]


def plan(build_dir: Path, rec: Recording,
	 changed: Sequence[str]) -> Optional[Plan]:
	"""The recipes to run for changed (the C files and headers newer than
	the stamp, stamp.TreeCheck.files()): the recorded
	sub-make of the nearest walked directory above each target that
	depends on one of them, kbuild's archive command (from its .cmd
	file) of each directory above those, that of vmlinux.a where the
	link's recipes do not make it (_vmlinux_a()), then the link. None
	(make decides) if nothing changed, if a changed file is named by no
	.cmd file, or if a target depending on one lies where no recorded
	sub-make walks."""
	if not changed:
		return None
	objects = _dependents(build_dir, changed)
	if objects is None:
		return None
	dirs = {os.path.dirname(o) or '.' for o in objects}
	walks = set()
	for d in dirs:
		walk = next((a for a in [d, *_ancestors(d)]
			     if a in rec.descents and a != '.'), None)
		if walk is None:
			return None
		walks.add(walk)
	# A walk inside another one is done by it.
	walks = {w for w in walks if not any(a in walks for a in _ancestors(w))}
	steps = [rec.descents[w] for w in sorted(walks)]
	above = sorted({a for w in walks for a in _ancestors(w)},
		       key=lambda a: (a == '.', -a.count('/'), a))
	env = rec.link[0].env if rec.link else {}
	for a in above:
		cmd = build_dir / a / '.built-in.a.cmd'
		if not cmd.is_file():
			continue
		m = re.search(r'^savedcmd_\S+ := (.*)$', cmd.read_text(), re.M)
		if not m:
			return None
		steps.append(Recipe(str(build_dir), _unescape(m.group(1)), env))
	archive = _vmlinux_a(build_dir, rec, env)
	if archive is None:
		return None
	steps += archive
	pins = kept_version(build_dir, env)
	return Plan(steps + [dataclasses.replace(r, env={**r.env, **pins})
			     for r in rec.link], sorted(walks))


def _vmlinux_a(build_dir: Path, rec: Recording,
	       env: Dict[str, str]) -> Optional[List[Recipe]]:
	"""The archive command of vmlinux.a (from its .cmd file) where the
	top Makefile makes it with a recipe of its own, if_changed: before
	scripts/Makefile.vmlinux_a (6.12 and 6.1), a make with nothing to
	build does not run that recipe, so the recording lacks it, and
	without a new vmlinux.a the link's own make (Makefile.vmlinux_o)
	sees nothing to do and leaves the kernel as it was. No recipe where
	a recorded link recipe makes vmlinux.a; None (make decides) where
	neither is found."""
	if any('/scripts/Makefile.vmlinux_a' in r.command for r in rec.link):
		return []
	try:
		text = (build_dir / '.vmlinux.a.cmd').read_text()
	except OSError:
		return None
	m = re.search(r'^savedcmd_vmlinux\.a := (.*)$', text, re.M)
	return [Recipe(str(build_dir), _unescape(m.group(1)), env)] if m else None


# The kernel's version string as init/Makefile writes it into
# include/generated/utsversion.h: '#', the build number, the flags of
# SMP and preemption, the time of the build, cut to 64 bytes.
_UTS_VERSION = re.compile(r'#define UTS_VERSION "#(\d+) ((?:(?:SMP|PREEMPT|'
			  r'PREEMPT_DYNAMIC|PREEMPT_RT) )*)(.*)"\n')
_VERSION_VARS = ('KBUILD_BUILD_VERSION', 'KBUILD_BUILD_TIMESTAMP',
		 'KBUILD_BUILD_VERSION_TIMESTAMP')


def kept_version(build_dir: Path, env: Dict[str, str]) -> Dict[str, str]:
	"""KBUILD_BUILD_VERSION and KBUILD_BUILD_TIMESTAMP as the last
	link of build_dir wrote them (its utsversion.h), for the link of an
	edit: left to itself, each link numbers the kernel anew and stamps it
	with the time, so make compiles init/version-timestamp.o again (0.3 s
	of a 4 s edit loop here); with the last link's, the version string
	stays as it was and the object with it. Nothing if env sets one of
	them (the user's), or if the header is not as the harness reads it
	(make numbers the kernel then). The kernel differs from the one a
	plain make would give in its version string (uname -v) and the build
	ID that hashes it, and its build number stays the .version that
	runner.check_booted() reads."""
	if any(v in env for v in _VERSION_VARS):
		return {}
	try:
		text = (build_dir / 'include/generated/utsversion.h').read_text()
	except OSError:
		return {}
	m = _UTS_VERSION.fullmatch(text)
	if not m:
		return {}
	return {'KBUILD_BUILD_VERSION': m[1], 'KBUILD_BUILD_TIMESTAMP': m[3]}


def _unescape(cmd: str) -> str:
	"""A command as kbuild saves it in a .cmd file (for make to read)
	as the shell runs it."""
	return cmd.replace('$(pound)', '#').replace('$$', '$')


# What ccache does in the recipes of an edit: it looks a compile up in
# direct mode alone and stores nothing. An object an edit changed is one
# ccache has not seen, most times (an edit undone is a direct-mode hit);
# after the direct-mode miss, ccache's default would preprocess the unit
# to look it up again, then store it: 0.15-0.2 s of a compile of
# mm/swap_state.o here. ccache gives the compiler's output either way.
_CCACHE_ENV = {'CCACHE_READONLY_DIRECT': 'true'}


def build(p: Plan, out: Any, walked: Sequence[str] = ()) -> bool:
	"""Runs the plan's recipes in turn, but for the sub-makes of the
	walks already made since the edit (Early), their output into out;
	whether every one succeeded."""
	for i, step in enumerate(p.steps):
		if i < len(p.walks) and p.walks[i] in walked:
			continue
		out.write(f'$ {step.command.strip()}\n')
		out.flush()
		done = subprocess.run(['/bin/sh', '-c', step.command], cwd=step.cwd,
				      env={**step.env, **_CCACHE_ENV}, stdout=out,
				      stderr=subprocess.STDOUT)
		if done.returncode != 0:
			return False
	return True


class Early:
	"""The sub-makes of a plan's walks (what compiles), run in a thread of
	their own from the start of a run that wrote the files the plan is
	for: they compile while find looks for what else changed in the
	tree (stamp.TreeCheck, 0.2 s of a kernel tree here), which the
	rest of the plan waits for. A sub-make is kbuild's own and compiles
	what is out of date then, as make would; run early, it compiles
	nothing that make would not. The build does not run a walk made
	early again: a file saved in its directory after the sub-make looked
	is, like any file saved while a build runs, newer than the stamp,
	and the next run builds it."""

	def __init__(self, p: Plan, changed: Sequence[str]) -> None:
		self.plan = p
		self.changed = sorted(changed)
		self._log = tempfile.TemporaryFile('w+', errors='replace')
		self._made = False
		self._thread = threading.Thread(target=self._make)
		self._thread.start()

	def _make(self) -> None:
		self._made = build(Plan(self.plan.steps[:len(self.plan.walks)],
					self.plan.walks), self._log)

	def join(self, out: Optional[Any] = None) -> List[str]:
		"""Waits for the sub-makes; copies their output into out; the
		walks made (none if one failed: a build runs it again)."""
		self._thread.join()
		self._log.seek(0)
		if out is not None:
			shutil.copyfileobj(self._log, out)
		self._log.close()
		return list(self.plan.walks) if self._made else []


def start(build_dir: Path, rec: Recording,
	  changed: Sequence[str]) -> Optional[Early]:
	"""The walks of the plan for changed (the files the run wrote into
	the tree), started; None if there is no such plan."""
	p = plan(build_dir, rec, changed) if changed else None
	return Early(p, changed) if p and p.walks else None
