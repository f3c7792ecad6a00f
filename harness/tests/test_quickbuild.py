# SPDX-License-Identifier: GPL-2.0
"""Rebuilding after an edit of C files from kbuild's recorded recipes
(quickbuild.py): what a make records, what an edit then runs, and when
the harness leaves it to make."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

from mmkunit import quickbuild

# A top Makefile shaped as kbuild's: a $(shell) call while it is read,
# a walk of the tree (the sub-make of ., which walks mm, which walks
# mm/sub), then the link sub-makes and the image's hard link.
TOP_MK = '''\
probe := $(shell echo probed)
late = $(shell echo late >> shells.log)
all: image
link: walk
\t$(MAKE) -f $(CURDIR)/scripts/Makefile.vmlinux_a
image: link
\t$(MAKE) -f $(CURDIR)/scripts/Makefile.vmlinux$(late)
\tln -f vmlinux linux
walk:
\t$(MAKE) -f $(CURDIR)/scripts/Makefile.build obj=. need-builtin=1 need-modorder=1
'''
BUILD_MK = '''\
x := $(shell echo $(obj))
all:
ifeq ($(obj),.)
\t$(MAKE) -f $(CURDIR)/scripts/Makefile.build obj=mm need-builtin=1 \\
\tneed-modorder=1
else ifeq ($(obj),mm)
\t$(MAKE) -f $(CURDIR)/scripts/Makefile.build obj=mm/sub need-builtin=1
endif
\techo built $(obj) >> built.log
'''
LINK_MK = 'all:\n\techo linked $(notdir $(firstword $(MAKEFILE_LIST))) >> built.log\n'


def _record(build: Path) -> bool:
	for name, text in (('Makefile', TOP_MK),
			   ('scripts/Makefile.build', BUILD_MK),
			   ('scripts/Makefile.vmlinux_a', LINK_MK),
			   ('scripts/Makefile.vmlinux', LINK_MK),
			   ('vmlinux', ''), ('.config', 'CONFIG_X=y\n')):
		(build / name).parent.mkdir(parents=True, exist_ok=True)
		(build / name).write_text(text)
	record = quickbuild.recording_options(build)
	env = dict(os.environ, MM_KUNIT_RECIPES=record['MM_KUNIT_RECIPES'])
	subprocess.run(['make', '-s', '-j2', f'SHELL={record["SHELL"]}'],
		       cwd=build, env=env, check=True, capture_output=True)
	return quickbuild.save(build, 'config digest')


def test_a_make_records_its_walks_and_its_link(tmp_path: Path) -> None:
	"""Each directory's sub-make is kept by directory and the top
	Makefile's recipes from the first link sub-make on as the link, with
	the environment make gave them but the recording's jobserver and
	shell; no $(shell) call of a make is taken for a recipe, also one
	made while the link's recipes are expanded."""
	assert _record(tmp_path)
	assert (tmp_path / 'shells.log').read_text() == 'late\n'
	rec = quickbuild.load(tmp_path, 'config digest')
	assert rec is not None
	assert sorted(rec.descents) == ['.', 'mm', 'mm/sub']
	assert [r.command.split()[-1] for r in rec.link] == [
		f'{tmp_path}/scripts/Makefile.vmlinux_a',
		f'{tmp_path}/scripts/Makefile.vmlinux', 'linux']
	for recipe in [*rec.descents.values(), *rec.link]:
		assert 'MM_KUNIT_RECIPES' not in recipe.env
		assert 'jobserver' not in recipe.env['MAKEFLAGS']
		assert 'SHELL=' not in recipe.env['MAKEFLAGS']
		assert recipe.cwd == str(tmp_path)
	assert not (tmp_path / 'mm-kunit-recipes.d').exists()


def test_each_recipe_gets_back_the_environment_make_gave_it(
		tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""Saved as what each adds to, changes in and drops from the values
	most recipes share."""
	envs = [{'A': '1', 'B': '2', 'MAKELEVEL': '1'},
		{'A': '1', 'B': '2', 'MAKELEVEL': '2'},
		{'A': '1', 'MAKELEVEL': '2', 'C': '3'}]
	real = quickbuild._records

	def records(rec: Path) -> Iterator[Dict[str, Any]]:
		yield from real(rec)
		# Two sub-makes more, with environments of their own.
		for d, env in (('lib', envs[1]), ('fs', envs[2])):
			yield {'ppid': 0, 'command': f'make -f x/scripts/'
			       f'Makefile.build obj={d} need-builtin=1', 'env': env}
	monkeypatch.setattr(quickbuild, '_records', records)
	assert _record(tmp_path)
	rec = quickbuild.load(tmp_path, 'config digest')
	assert rec is not None
	assert rec.descents['lib'].env == envs[1]
	assert rec.descents['fs'].env == envs[2]
	# A recording of the format before, each environment whole: made
	# again.
	saved = json.loads((tmp_path / quickbuild.RECIPES).read_text())
	del saved['env']
	(tmp_path / quickbuild.RECIPES).write_text(json.dumps(saved))
	assert quickbuild.load(tmp_path, 'config digest') is None


def test_a_recording_holds_for_its_configuration_only(tmp_path: Path) -> None:
	assert _record(tmp_path)
	assert quickbuild.load(tmp_path, 'config digest')
	assert quickbuild.load(tmp_path, 'another digest') is None
	assert quickbuild.load(tmp_path, None) is None
	# kunit.py configured the directory again.
	(tmp_path / '.config').write_text('CONFIG_X=y\nCONFIG_Y=y\n')
	assert quickbuild.load(tmp_path, 'config digest') is None
	quickbuild.forget(tmp_path)
	assert not (tmp_path / quickbuild.RECIPES).exists()


def test_a_make_with_no_link_records_nothing(tmp_path: Path) -> None:
	(tmp_path / 'Makefile').write_text('all:\n\ttrue\n')
	(tmp_path / '.config').write_text('')
	record = quickbuild.recording_options(tmp_path)
	subprocess.run(['make', '-s', f'SHELL={record["SHELL"]}'], cwd=tmp_path,
		       env=dict(os.environ,
				MM_KUNIT_RECIPES=record['MM_KUNIT_RECIPES']),
		       check=True)
	assert not quickbuild.save(tmp_path, 'config digest')
	assert quickbuild.load(tmp_path, 'config digest') is None


def _cmd(build: Path, target: str, deps: List[str]) -> None:
	d, name = os.path.split(target)
	path = build / d / f'.{name}.cmd'
	path.parent.mkdir(parents=True, exist_ok=True)
	path.write_text(f'savedcmd_{target} := gcc -c -o {target}\n\n'
			f'deps_{target} := \\\n'
			+ ''.join(f'  {p} \\\n' for p in deps) + '\n')


# The first link recipe of a top Makefile from 6.13 on (7.3's): the
# archive vmlinux.a made by a sub-make.
VMLINUX_A = 'make -f /src/scripts/Makefile.vmlinux_a'


def _recording(build: Path) -> quickbuild.Recording:
	def r(cmd: str) -> quickbuild.Recipe:
		return quickbuild.Recipe(str(build), cmd, {'LINK': '1'})
	return quickbuild.Recording(
		descents={d: r(f'walk {d}')
			  for d in ('.', 'mm', 'mm/sub', 'init', 'kernel')},
		link=[r(VMLINUX_A), r('link b')])


def test_an_edit_walks_the_directories_of_what_depends_on_it(
		tmp_path: Path) -> None:
	"""The nearest recorded walk above each dependent, none inside
	another one, the archives above them (deepest first, those with a
	.cmd), then the link; never the walk of the whole tree."""
	src = '/src'
	_cmd(tmp_path, 'mm/filemap.o', [f'{src}/mm/filemap.c', f'{src}/mm/t.h'])
	_cmd(tmp_path, 'mm/sub/a.o', [f'{src}/mm/sub/a.c', f'{src}/mm/t.h'])
	_cmd(tmp_path, 'mm/sub/deeper/b.o', [f'{src}/mm/sub/deeper/b.c'])
	_cmd(tmp_path, 'init/main.o', [f'{src}/init/main.c'])
	# fixdep writes a header included through '..' as it was.
	_cmd(tmp_path, 'kernel/fork.o', [f'{src}/kernel/fork.c',
					 f'{src}/kernel/../mm/u.h'])
	# A path in a command, between a parenthesis and ';'.
	(tmp_path / 'init/.version.o.cmd').write_text(
		f'savedcmd_init/version.o := x=$$(cat {src}/mm/w.h); gcc\n')
	for d in ('.', 'mm', 'mm/sub'):
		(tmp_path / d / '.built-in.a.cmd').write_text(
			f'savedcmd_{d}/built-in.a := ar $(pound) $$X {d}\n')
	rec = _recording(tmp_path)

	def steps(*changed: str) -> List[str]:
		p = quickbuild.plan(tmp_path, rec, list(changed))
		assert p is not None
		return [s.command for s in p.steps]

	assert steps(f'{src}/mm/t.h') == [
		'walk mm', 'ar # $X .', VMLINUX_A, 'link b']
	assert steps(f'{src}/mm/sub/deeper/b.c') == [
		'walk mm/sub', 'ar # $X mm', 'ar # $X .', VMLINUX_A, 'link b']
	assert steps(f'{src}/mm/u.h') == ['walk kernel', 'ar # $X .', VMLINUX_A,
					 'link b']
	assert steps(f'{src}/mm/w.h') == ['walk init', 'ar # $X .', VMLINUX_A,
					 'link b']
	assert steps(f'{src}/mm/sub/a.c', f'{src}/init/main.c') == [
		'walk init', 'walk mm/sub', 'ar # $X mm', 'ar # $X .', VMLINUX_A,
		'link b']
	# The archive commands run with the link's environment.
	p = quickbuild.plan(tmp_path, rec, [f'{src}/mm/t.h'])
	assert p is not None and p.steps[1].env == {'LINK': '1'}
	p = quickbuild.plan(tmp_path, rec, [f'{src}/mm/sub/a.c',
					    f'{src}/mm/sub/deeper/b.c',
					    f'{src}/init/main.c'])
	assert p is not None and p.walks == ['init', 'mm/sub']


def test_the_archive_vmlinux_a_is_made_where_the_link_does_not(
		tmp_path: Path) -> None:
	"""A top Makefile that makes vmlinux.a with a recipe of its own
	(6.12's, 6.1's) runs it only when it is out of date, which it is not
	in the recording make: the plan runs its command from .vmlinux.a.cmd
	after the archives of the directories, or make decides if there is
	none. Without a new vmlinux.a, the link's make keeps the kernel."""
	_cmd(tmp_path, 'mm/filemap.o', ['/src/mm/filemap.c'])
	(tmp_path / '.built-in.a.cmd').write_text(
		'savedcmd_built-in.a := ar top\n')
	rec = _recording(tmp_path)
	rec.link[:] = [quickbuild.Recipe(
		str(tmp_path), 'make -f /src/scripts/Makefile.vmlinux_o', {}),
		       *rec.link[1:]]

	def steps() -> Optional[List[str]]:
		p = quickbuild.plan(tmp_path, rec, ['/src/mm/filemap.c'])
		return p and [s.command for s in p.steps]
	assert steps() is None
	(tmp_path / '.vmlinux.a.cmd').write_text(
		'savedcmd_vmlinux.a := rm -f vmlinux.a; ar $$(ar t x) vmlinux.a\n')
	assert steps() == ['walk mm', 'ar top', 'rm -f vmlinux.a; ar $(ar t x) '
			   'vmlinux.a', 'make -f /src/scripts/Makefile.vmlinux_o',
			   'link b']
	(tmp_path / '.vmlinux.a.cmd').write_text('savedcmd_other := ar\n')
	assert steps() is None


def test_the_link_of_an_edit_keeps_the_version_string(
		tmp_path: Path) -> None:
	"""The link recipes run with the build number and time of the last
	link (include/generated/utsversion.h), so that make need not compile
	init/version-timestamp.o again; not where the header is not as
	init/Makefile writes it, or the build's environment sets them."""
	_cmd(tmp_path, 'mm/filemap.o', ['/src/mm/filemap.c'])
	uts = tmp_path / 'include/generated/utsversion.h'
	uts.parent.mkdir(parents=True)

	def pins(version: str, env: Optional[Dict[str, str]] = None
		 ) -> List[Dict[str, str]]:
		uts.write_text(f'#define UTS_VERSION "{version}"\n')
		rec = _recording(tmp_path)
		rec.link[:] = [quickbuild.Recipe(r.cwd, r.command,
						 {**r.env, **(env or {})})
			       for r in rec.link]
		p = quickbuild.plan(tmp_path, rec, ['/src/mm/filemap.c'])
		assert p is not None
		assert [s.command for s in p.steps[-2:]] == [VMLINUX_A, 'link b']
		assert p.steps[-1].env == p.steps[-2].env
		return [{k: v for k, v in p.steps[-1].env.items()
			 if k != 'LINK'}]

	def kept(number: str, time: str) -> List[Dict[str, str]]:
		return [{'KBUILD_BUILD_VERSION': number,
			 'KBUILD_BUILD_TIMESTAMP': time}]
	stamp = 'Thu Dec  3 08:04:22 UTC 2026'
	assert pins(f'#76 SMP {stamp}') == kept('76', stamp)
	assert pins(f'#1 {stamp}') == kept('1', stamp)
	assert pins(f'#9 SMP PREEMPT_DYNAMIC {stamp}') == kept('9', stamp)
	# Cut to 64 bytes: the same cut of the same parts.
	long = f'#12 SMP PREEMPT_RT {stamp} and a long suffix of a builder'
	assert pins(long[:64]) == kept('12', long[len('#12 SMP PREEMPT_RT '):64])
	# Not init/Makefile's format: make numbers the kernel.
	assert pins(stamp) == [{}]
	assert pins(f'#x SMP {stamp}') == [{}]
	# The user's own.
	assert pins(f'#76 SMP {stamp}', {'KBUILD_BUILD_VERSION': '3'}) == [
		{'KBUILD_BUILD_VERSION': '3'}]
	assert pins(f'#76 SMP {stamp}', {'KBUILD_BUILD_TIMESTAMP': 'now'}) == [
		{'KBUILD_BUILD_TIMESTAMP': 'now'}]
	uts.unlink()
	assert quickbuild.kept_version(tmp_path, {}) == {}


def test_make_decides_what_the_recording_does_not_cover(
		tmp_path: Path) -> None:
	src = '/src'
	_cmd(tmp_path, 'mm/filemap.o', [f'{src}/mm/filemap.c'])
	_cmd(tmp_path, 'fs/inode.o', [f'{src}/fs/inode.c', f'{src}/mm/t.h'])
	_cmd(tmp_path, 'top.o', [f'{src}/top.c'])
	# A generated header of the preparation steps (kernel/bounds.s:
	# include/generated/bounds.h), which no walk makes again.
	_cmd(tmp_path, 'kernel/bounds.s', [f'{src}/include/linux/mmzone.h'])
	_cmd(tmp_path, 'mm/vmscan.o', [f'{src}/mm/vmscan.c',
				       f'{src}/include/linux/mmzone.h'])
	rec = _recording(tmp_path)
	# Nothing changed; a header no target names (which target includes
	# it, the harness cannot tell); a dependent no recorded sub-make
	# walks (fs), or only the walk of the whole tree does.
	for changed in ([], [f'{src}/mm/new.h'],
			[f'{src}/mm/filemap.c', f'{src}/mm/new.h'],
			[f'{src}/mm/t.h'], [f'{src}/top.c'],
			[f'{src}/include/linux/mmzone.h']):
		assert quickbuild.plan(tmp_path, rec, changed) is None, changed
	assert quickbuild.plan(tmp_path, rec, [f'{src}/mm/filemap.c'])
	# A checkout: more files than one grep pattern should name.
	many = [f'{src}/mm/filemap.c'] + [f'{src}/mm/f{i}.h'
					   for i in range(200)]
	for i in range(200):
		_cmd(tmp_path, f'mm/f{i}.o', [f'{src}/mm/f{i}.h'])
	assert quickbuild.plan(tmp_path, rec, many[:200])
	assert quickbuild.plan(tmp_path, rec, many) is None


def test_objects_of_files_make_would_miss_are_made_older(
		tmp_path: Path) -> None:
	src = '/src'
	_cmd(tmp_path, 'mm/filemap.o', [f'{src}/mm/filemap.c', f'{src}/mm/t.h'])
	_cmd(tmp_path, 'mm/sub/a.o', [f'{src}/mm/t.h'])
	_cmd(tmp_path, 'init/main.o', [f'{src}/init/main.c'])
	for obj in ('mm/filemap.o', 'mm/sub/a.o', 'init/main.o'):
		(tmp_path / obj).write_text('')
	assert quickbuild.outdate(tmp_path, [f'{src}/mm/t.h'])
	assert [(tmp_path / o).stat().st_mtime_ns for o in (
		'mm/filemap.o', 'mm/sub/a.o')] == [0, 0]
	assert (tmp_path / 'init/main.o').stat().st_mtime_ns > 0
	# A file no object names: make decides.
	assert not quickbuild.outdate(tmp_path, [f'{src}/mm/new.h'])


def test_a_failed_recipe_stops_the_build(tmp_path: Path) -> None:
	env: Dict[str, str] = dict(os.environ)
	steps = [quickbuild.Recipe(str(tmp_path), cmd, env) for cmd in (
		'echo one >> log', 'false', 'echo three >> log')]
	with open(tmp_path / 'out', 'w') as f:
		assert not quickbuild.build(quickbuild.Plan(steps, []), f)
	assert (tmp_path / 'log').read_text() == 'one\n'
	assert (tmp_path / 'out').read_text().splitlines()[-1] == '$ false'
	with open(tmp_path / 'out', 'w') as f:
		assert quickbuild.build(quickbuild.Plan(steps[:1], []), f)
	assert (tmp_path / 'log').read_text() == 'one\none\n'


def test_the_walks_of_an_edit_run_early_and_once(tmp_path: Path) -> None:
	"""Early runs a plan's walks (their sub-makes) and nothing else; the
	build after it runs the rest; ccache stores nothing and looks up in
	direct mode alone; a walk that failed early is no walk made."""
	env: Dict[str, str] = dict(os.environ)
	(tmp_path / 'a.h').write_text('')
	_cmd(tmp_path, 'mm/a.o', [f'{tmp_path}/a.h'])
	rec = quickbuild.Recording(
		descents={'mm': quickbuild.Recipe(
			str(tmp_path), 'echo "walk $CCACHE_READONLY_DIRECT" >> log',
			env)},
		link=[quickbuild.Recipe(str(tmp_path), 'echo link >> log', env)])
	# A top Makefile that makes vmlinux.a itself (before 6.13).
	(tmp_path / '.vmlinux.a.cmd').write_text(
		'savedcmd_vmlinux.a := echo ar >> log\n')
	early = quickbuild.start(tmp_path, rec, [f'{tmp_path}/a.h'])
	assert early is not None and early.changed == [f'{tmp_path}/a.h']
	out = io.StringIO()
	walked = early.join(out)
	assert walked == ['mm'] and '$ echo "walk' in out.getvalue()
	assert (tmp_path / 'log').read_text() == 'walk true\n'
	with open(tmp_path / 'out', 'w') as f:
		assert quickbuild.build(early.plan, f, walked)
	assert (tmp_path / 'log').read_text() == 'walk true\nar\nlink\n'
	assert quickbuild.start(tmp_path, rec, []) is None
	rec.descents['mm'] = quickbuild.Recipe(str(tmp_path), 'false', env)
	early = quickbuild.start(tmp_path, rec, [f'{tmp_path}/a.h'])
	assert early is not None and early.join() == []


def qkey(config: Optional[str], env: Dict[str, str],
	 jobs: int = 2) -> Optional[str]:
	return quickbuild.key(config, env, jobs, ('gcc', 'ld'))


def test_a_recording_is_for_the_environment_a_build_reads(
		tmp_path: Path) -> None:
	gcc, ld = tmp_path / 'gcc', tmp_path / 'ld'
	for tool in (gcc, ld):
		tool.write_text('#!/bin/sh\n')
		tool.chmod(0o755)
	base = {'PATH': str(tmp_path), 'CCACHE_DIR': '/c', 'TERM': 'xterm'}
	# PATH differs with how Python was started (pyenv's shims).
	assert qkey('config', base) == qkey(
		'config', {**base, 'PATH': f'/py/bin:{tmp_path}'})
	k = qkey('config', base)
	assert k == qkey('config', {**base, 'TERM': 'dumb',
					      'OLDPWD': '/'})
	assert len({k, qkey('other config', base),
		    qkey('config', {**base, 'KBUILD_BUILD_VERSION': '7'}),
		    qkey('config', {**base, 'CCACHE_DIR': '/d'}),
		    qkey('config', {**base, 'KCFLAGS': '-O1'})}) == 5
	assert qkey(None, base) is None
	# make's jobs (the recipes carry -j).
	assert qkey('config', base, 4) != k
	# Another compiler or linker (their versions are in the .config).
	gcc.write_text('#!/bin/sh\n# 13\n')
	k13 = qkey('config', base)
	assert k13 != k
	ld.write_text('#!/bin/sh\n# 2.41\n')
	assert qkey('config', base) not in (k, k13)
