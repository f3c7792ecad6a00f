# SPDX-License-Identifier: GPL-2.0
"""Exporting the overlay as a git format-patch series, and checking it.

Each exported patch is one commit: the patch of kernel/patches plus the new
files the series file lists after it. The result applies with `git am` onto
the tree it was exported against (by default Debian's 7.3).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from mmkunit import overlay as ov
from mmkunit.session import HarnessError

# The scratch repositories ignore the user's git configuration. This identity
# only makes the synthetic base commit; the series is the exporter's (see
# Identity), who authors, signs off and commits it.
_GIT_ENV = {
	'GIT_AUTHOR_NAME': 'mm-kunit export',
	'GIT_AUTHOR_EMAIL': 'mm-kunit@localhost',
	'GIT_COMMITTER_NAME': 'mm-kunit export',
	'GIT_COMMITTER_EMAIL': 'mm-kunit@localhost',
	'GIT_CONFIG_NOSYSTEM': '1',
	'GIT_CONFIG_GLOBAL': os.devnull,
}


class ExportError(HarnessError):
	"""The series cannot be exported or does not pass its checks."""


@dataclasses.dataclass(frozen=True)
class Identity:
	"""Who exports the series: its author and the one who signs it off."""
	name: str
	email: str

	def __str__(self) -> str:
		return f'{self.name} <{self.email}>'


def user_identity(given: Optional[str] = None) -> Identity:
	"""--from "Name <email>" if given, else git config user.name and
	user.email (the user's own configuration, not the scratch repos')."""
	if given:
		m = re.fullmatch(r'\s*([^<>]+?)\s*<([^<>\s]+@[^<>\s]+)>\s*', given)
		if not m:
			raise ExportError(f'--from wants "Name <email>", not {given!r}')
		return Identity(m.group(1), m.group(2))

	def config(key: str) -> str:
		return subprocess.run(['git', 'config', '--get', key],
				      capture_output=True, text=True).stdout.strip()

	name, email = config('user.name'), config('user.email')
	if not name or not email:
		raise ExportError('no identity to author the series: set git config '
				  'user.name and user.email, or pass --from "Name <email>"')
	return Identity(name, email)


def _git(repo: Path, *args: str, stdin: bytes = b'',
	 who: Optional[Identity] = None) -> str:
	env = dict(os.environ, **_GIT_ENV,
		   GIT_CEILING_DIRECTORIES=str(repo.parent))
	if who:
		env.update(GIT_AUTHOR_NAME=who.name, GIT_AUTHOR_EMAIL=who.email,
			   GIT_COMMITTER_NAME=who.name, GIT_COMMITTER_EMAIL=who.email)
	proc = subprocess.run(['git', '-c', 'commit.gpgsign=false', *args],
			      cwd=repo, env=env, capture_output=True,
			      input=stdin.decode(errors='surrogateescape'),
			      text=True, errors='surrogateescape')
	if proc.returncode != 0:
		raise ExportError(f'git {" ".join(args)} failed in {repo}:\n'
				  f'{proc.stdout}{proc.stderr}'.rstrip())
	return proc.stdout


def base_repo(tree: Path, files: Sequence[str], dest: Path) -> None:
	"""A git repository holding only the given files of tree, committed
	(a file tree lacks is one an earlier patch of the series adds).

	That is all `git am` needs to check that a series applies to tree.
	"""
	dest.mkdir(parents=True)
	for name in files:
		if not (tree / name).is_file():
			continue
		(dest / name).parent.mkdir(parents=True, exist_ok=True)
		shutil.copy2(tree / name, dest / name)
	_git(dest, 'init', '-q')
	_git(dest, 'add', '-A')
	_git(dest, 'commit', '-q', '--allow-empty', '-m',
	     f'base: the files of {tree} that the series touches')
	_git(dest, 'tag', 'base')


def _touched(patches: Sequence[ov.Patch]) -> List[str]:
	files: List[str] = []
	for p in patches:
		files += [f for f in p.touched if f not in files]
	return files


# The cover letter's text, beside the series: its first paragraph is the
# subject, the rest the body; format-patch adds the shortlog and diffstat.
COVER_LETTER = 'cover-letter'


def _message(patch: ov.Patch, scratch: Path) -> str:
	"""The commit message a format-patch mail carries."""
	info = scratch / '.mailinfo'
	info.mkdir(exist_ok=True)
	head = _git(scratch, 'mailinfo', str(info / 'msg'), str(info / 'patch'),
		    stdin=patch.text)
	body = (info / 'msg').read_text()
	shutil.rmtree(info)
	m = re.search(r'^Subject: (.*)$', head, re.M)
	if not m:
		raise ExportError(f'{patch.path}: no Subject: header')
	return f'{m.group(1)}\n\n{body}'


def _signed_off(message: str, who: Identity) -> str:
	"""The commit message with the exporter's sign-off in place of any."""
	lines = [l for l in message.rstrip('\n').splitlines()
		 if not l.startswith('Signed-off-by:')]
	while lines and not lines[-1].strip():
		lines.pop()
	return '\n'.join(lines) + f'\n\nSigned-off-by: {who}\n'


def export(overlay: ov.Overlay, tree: Path, outdir: Path, who: Identity,
	   cover_letter: bool = True, local: bool = False,
	   base: Optional[str] = None) -> List[Path]:
	"""Writes the series for upstream (without the overlay's local
	patches) as format-patch files into outdir, authored, signed off and
	dated (now) by who, with a 0000 cover letter first if the overlay has
	one and cover_letter is set; with local, the local patches instead,
	for `git am` on top of the upstream series. base, if given, is named
	in a base-commit: line at the end of the first mail, as format-patch
	--base writes it. Returns the files."""
	names = overlay.local()
	if not local:
		overlay = overlay.without(names)
	first = len(overlay.patches) - len(names) if local else 0
	ov.stage(overlay, tree)  # names the patch and file that do not apply
	cover = overlay.root / 'patches' / COVER_LETTER
	with tempfile.TemporaryDirectory(prefix='mm-kunit-export-') as tmp:
		repo = Path(tmp) / 'repo'
		base_repo(tree, _touched(overlay.patches), repo)
		for patch in overlay.patches:
			# Applied as the overlay applies it: the hooks at the
			# ends of files whatever their last lines, which
			# format-patch then gives as their context.
			ov.apply_patch(patch, repo)
			if patch.new_files:
				ov.write_files(overlay, repo, patch.new_files)
			_git(repo, 'add', '-A')
			_git(repo, 'commit', '-q', '--allow-empty', '-F', '-',
			     stdin=_signed_off(_message(patch, repo),
					       who).encode(), who=who)
		outdir.mkdir(parents=True, exist_ok=True)
		for old in outdir.glob('*.patch'):
			old.unlink()
		args = ['format-patch', '--no-signature', '--zero-commit',
			'-o', str(outdir.resolve())]
		if local:
			args.append(f'--start-number={first + 1}')
		if cover_letter and cover.is_file() and not local:
			branch = _git(repo, 'symbolic-ref', '--short', 'HEAD').strip()
			_git(repo, 'config', f'branch.{branch}.description',
			     cover.read_text())
			args += ['--cover-letter', '--cover-from-description=subject']
		start = f'HEAD~{len(names)}' if local else 'base'
		out = _git(repo, *args, f'{start}..HEAD', who=who)
	mails = [Path(line) for line in out.splitlines() if line]
	if base and mails and not local:
		with open(mails[0], 'a') as f:
			f.write(f'\nbase-commit: {base}\n')
	return mails


def carried_copies(overlay: ov.Overlay) -> List[str]:
	"""The test files a patch of the series carries a copy of: each is
	kept once, in kernel/, and export puts it into its patch's mail
	(export --refresh takes the copies out)."""
	return [f'{p.name} carries a copy of {f}'
		for p in overlay.patches for f in p.new_files if f in p.carried]


# Where a stored patch's diffstat would be: what its commit adds besides.
_ADDED_NOTE = ('The commit adds these files too, from kernel/ when the '
	       'series is exported:\n')


def _without_new_files(mail: str, new_files: Sequence[str]) -> str:
	"""A format-patch mail as kernel/patches keeps it: its message, a
	line naming the new files in place of the diffstat, and the diffs of
	the files it changes; the new files' diffs left out."""
	head, sep, rest = mail.partition('\n---\n')
	blocks = re.split(r'(?m)^(?=diff --git )', rest)
	kept = [b for b in blocks[1:]
		if not any(b.startswith(f'diff --git a/{f} b/{f}\n')
			   for f in new_files)]
	note = ''.join(f' {f}\n' for f in new_files)
	return (head + sep + (_ADDED_NOTE + note + '\n' if note else '') +
		''.join(kept))


def _mail_header(text: str) -> Tuple[str, str]:
	"""A format-patch mail as its header (From, Date, Subject) and the
	rest (message, diffstat, diffs)."""
	head, sep, rest = text.partition('\n\n')
	if not sep or not head.startswith('From '):
		raise ExportError(f'not a format-patch mail: {head[:60]!r}')
	return head + sep, rest


def _author(patch: ov.Patch) -> Identity:
	head, _ = _mail_header(patch.path.read_text())
	m = re.search(r'^From: (.+(?:\n .+)*)', head, re.M)
	if not m:
		raise ExportError(f'{patch.path}: no From: header')
	return user_identity(' '.join(m.group(1).split()))


def refresh(overlay: ov.Overlay, tree: Path) -> List[Path]:
	"""Rewrites each patch of kernel/patches that is not as export makes
	it: its message and the diffs of the files it changes, without the
	files it adds (_without_new_files()); its header (author, date,
	subject) as it was. Returns the patches it rewrote."""
	linked = [p.name for p in overlay.patches if p.path.is_symlink()]
	if linked:
		raise ExportError(
			f'{overlay.root}: {", ".join(linked)} are links to the '
			'series of another overlay; refresh that one')
	local = overlay.local()
	authors = {_author(p) for p in overlay.patches}
	if len(authors) != 1:
		raise ExportError('export --refresh wants one author for the '
				  f'series, found {len(authors)}')
	who = authors.pop()
	rewritten: List[Path] = []
	with tempfile.TemporaryDirectory(prefix='mm-kunit-refresh-') as tmp:
		made = export(overlay, tree, Path(tmp) / 'upstream', who,
			      cover_letter=False)
		if local:
			made += export(overlay, tree, Path(tmp) / 'local', who,
				       local=True)
		ordered = ([p for p in overlay.patches if p.name not in local]
			   + [p for p in overlay.patches if p.name in local])
		for patch, mail in zip(ordered, made):
			head, _ = _mail_header(patch.path.read_text())
			_, rest = _mail_header(_without_new_files(
				mail.read_text(), patch.new_files))
			if patch.path.read_text() != head + rest:
				patch.path.write_text(head + rest)
				rewritten.append(patch.path)
	return rewritten


@dataclasses.dataclass
class LintReport:
	checkpatch: Dict[str, str]  # patch name -> checkpatch output, if not clean
	# patch name -> how checkpatch's MAINTAINERS question was answered
	maintainers: Dict[str, str] = dataclasses.field(default_factory=dict)
	am_error: str = ''
	# Test files a patch carries a copy of (kept once, in kernel/).
	copies: List[str] = dataclasses.field(default_factory=list)
	# Existing kernel files the series edits other than at their ends.
	mid_file: List[str] = dataclasses.field(default_factory=list)

	@property
	def ok(self) -> bool:
		return (not self.checkpatch and not self.am_error and
			not self.copies and not self.mid_file)


def mid_file_edits(overlay: ov.Overlay) -> List[str]:
	"""Where the series edits a file it does not add other than by
	appending lines to its end: such a hunk needs its neighbours as they
	are in one release, and the next change to them breaks it. The
	series' Kconfig symbols and declarations go in files it adds."""
	out = []
	for p in overlay.patches:
		rest, _ = ov.split_appends(p.text)
		for name in ov.patch_touched_files(rest.decode(errors='replace')):
			if name not in overlay.files:
				out.append(f'{p.name} edits {name} other than at '
					   'its end')
	return out


def check_am(tree: Path, patches: Sequence[Path],
	     expected: Dict[str, bytes]) -> str:
	"""Runs `git am` of patches onto tree's files; '' if all is well.

	Also checks that the result is exactly what the harness tests
	(expected, from overlay.stage()).
	"""
	files = [f for f in _touched([ov.Patch.from_file(p) for p in patches])
		 if (tree / f).is_file()]
	with tempfile.TemporaryDirectory(prefix='mm-kunit-am-') as tmp:
		repo = Path(tmp) / 'repo'
		base_repo(tree, files, repo)
		try:
			_git(repo, 'am', '-q', *[str(p) for p in patches])
		except ExportError as e:
			return str(e)
		for name, data in expected.items():
			path = repo / name
			if not path.is_file() or path.read_bytes() != data:
				return (f'after git am, {name} differs from what the '
					'harness builds')
	return ''


def checkpatch(tree: Path, patch: Path) -> List[str]:
	"""Runs scripts/checkpatch.pl --strict; returns its findings."""
	proc = subprocess.run(
		['perl', 'scripts/checkpatch.pl', '--strict', '--terse',
		 '--no-summary', '--show-types', str(patch.resolve())],
		cwd=tree, capture_output=True, text=True)
	lines = [l for l in (proc.stdout + proc.stderr).splitlines() if l.strip()]
	if proc.returncode != 0 and not lines:
		lines = [f'checkpatch.pl exited {proc.returncode}']
	return lines


def maintainer_sections(tree: Path, path: str) -> List[str]:
	"""The MAINTAINERS sections that cover path, a file that may not exist.

	get_maintainer.pl reads a patch that creates the file, which is how it
	would see the file in a submitted patch.
	"""
	stub = (f'diff --git a/{path} b/{path}\nnew file mode 100644\n'
		f'--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n')
	with tempfile.NamedTemporaryFile('w', suffix='.patch') as f:
		f.write(stub)
		f.flush()
		proc = subprocess.run(
			['perl', 'scripts/get_maintainer.pl', '--no-git',
			 '--no-git-fallback', '--subsystem', '--no-email', '--no-l',
			 '--no-r', '--no-rolestats', f.name],
			cwd=tree, capture_output=True, text=True)
	return [l.strip() for l in proc.stdout.splitlines()
		if l.strip() and l.strip() != 'THE REST']


def _new_files(patch: Path) -> List[str]:
	"""The files a patch creates."""
	return re.findall(r'^--- /dev/null\n\+\+\+ b/(\S+)$',
			  patch.read_text(errors='replace'), re.M)


def lint(overlay: ov.Overlay, tree: Path, outdir: Path,
	 who: Identity, ends_only: bool = True) -> LintReport:
	"""checkpatch --strict on each exported patch, a git am check, no
	copies of test files in the patches and, with ends_only, kernel files
	edited only at their ends.

	checkpatch asks, for every new file, whether MAINTAINERS needs an
	update (FILE_PATH_CHANGES). That question is answered here: it is
	settled if get_maintainer.pl finds a section other than THE REST for
	each new file; otherwise it stays a finding.
	"""
	patches = export(overlay, tree, outdir, who, cover_letter=False)
	if overlay.local():
		patches += export(overlay, tree, outdir / 'local', who, local=True)
	report = LintReport({})
	for patch in patches:
		findings = checkpatch(tree, patch)
		if any('FILE_PATH_CHANGES' in f for f in findings):
			covered = {f: maintainer_sections(tree, f)
				   for f in _new_files(patch)}
			if covered and all(covered.values()):
				findings = [f for f in findings
					    if 'FILE_PATH_CHANGES' not in f]
				report.maintainers[patch.name] = '; '.join(
					f'{f}: {", ".join(s)}' for f, s in covered.items())
		if findings:
			report.checkpatch[patch.name] = '\n'.join(findings)
	report.am_error = check_am(tree, patches, ov.stage(overlay, tree))
	report.copies = carried_copies(overlay)
	if ends_only:
		report.mid_file = mid_file_edits(overlay)
	return report
