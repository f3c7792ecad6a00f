# SPDX-License-Identifier: GPL-2.0
"""`lint`: the series exported and checked (checkpatch --strict, git am,
no copy of a test file, edits only at the ends of existing files;
export.lint), and zizmor on the CI example
(workflow.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from mmkunit import export
from mmkunit import workflow
from mmkunit.request import EXIT_OK, EXIT_TESTS_FAILED, LintRequest
from mmkunit.session import KERNEL_DIR, REPO, Session

# Who signs the series `lint` checks: the same on every machine.
LINT_IDENTITY = export.Identity('mm-kunit lint', 'lint@mm-kunit.example.org')


def lint_handler(req: LintRequest) -> int:
	s = Session(req.source)
	s.ensure_deps()
	tree = s.sources.unmodified()
	with tempfile.TemporaryDirectory(prefix='mm-kunit-lint-') as tmp:
		# A port carries what its kernel needs where it needs it (a fix
		# in the middle of a function, an older Kconfig's entries): only
		# the series itself is held to appending.
		ends_only = s.overlay.root.resolve() == KERNEL_DIR.resolve()
		report = export.lint(s.overlay, tree, Path(tmp), LINT_IDENTITY,
				     ends_only)
		names = sorted(p.name for p in Path(tmp).rglob('*.patch'))
	for name in names:
		status = 'FAIL' if name in report.checkpatch else 'ok'
		print(f'checkpatch --strict: {status}: {name}')
		if name in report.checkpatch:
			print('  ' + report.checkpatch[name].replace('\n', '\n  '))
		if name in report.maintainers:
			print('  new files already in MAINTAINERS: ' +
			      report.maintainers[name])
	print('git am onto ' + str(tree) + ': ' +
	      ('ok' if not report.am_error else 'FAIL\n  ' + report.am_error))
	print('the patches carry no copy of kernel/\'s test files: ' +
	      ('ok' if not report.copies else 'FAIL\n  ' +
	       '\n  '.join(report.copies) +
	       '\n  (./run_kunit.sh export --refresh takes them out)'))
	if ends_only:
		print('the series edits existing files only at their ends: ' +
		      ('ok' if not report.mid_file else 'FAIL\n  ' +
		       '\n  '.join(report.mid_file)))
	found = workflow.zizmor_findings(s.cache, req.source.install)
	print(f'zizmor --offline {workflow.WORKFLOW.relative_to(REPO)}: ' +
	      ('ok' if not found else 'FAIL\n  ' + found))
	failed = (len(report.checkpatch) + bool(report.am_error)
		  + bool(report.copies) + bool(report.mid_file) + bool(found))
	print(f'lint: {len(names) + 3 + ends_only - failed} passed, '
	      f'{failed} failed')
	return EXIT_OK if not failed else EXIT_TESTS_FAILED
