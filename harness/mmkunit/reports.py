# SPDX-License-Identifier: GPL-2.0
"""Results in the formats CI systems read.

Every run writes, next to kunit.py's own results:

  junit.xml    JUnit XML, as Jenkins, GitLab and GitHub test reporters read
               it: one <testcase> per KUnit case (each row of a
               parameterised test is one), with the failed expectations and
               the case's KTAP lines, and its duration from the console
               timestamps.
  kcidb.json   KernelCI's KCIDB report data (schema v5.3): the checkout
               (the kernel sources and the overlay), the build, and one test
               per KUnit case, ready for kcidb-submit.

kunit.py's own --junit is not used: 6.12's and 6.1's kunit.py have none,
and 7.3's gives a failure no message but "Test Failed", no durations,
and no case for a kernel warning outside the tests.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import re
import subprocess
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from mmkunit import trees
from mmkunit.runner import CaseResult, RunResult, Status

KCIDB_VERSION = {'major': 5, 'minor': 3}
# KCIDB's limit for log_excerpt.
LOG_EXCERPT_MAX = 16384
# The KCIDB test path every case's path starts with.
KCIDB_ROOT = 'kunit'


@dataclasses.dataclass
class Context:
	"""What a report says about where the results come from."""
	arch: str
	started: datetime.datetime
	# The kernel sources: the tarball's or the user's tree.
	source: Path
	# The Debian package the sources came from, with its version, if
	# the harness fetched it ('linux-source-7.3 7.3.4-1~bpo13+1').
	package: str = ''
	# The overlay's patches, in order, as (name, content).
	patches: Sequence[Tuple[str, bytes]] = ()
	command: str = ''
	config_name: str = 'mm/tests'
	environment: str = ''
	origin: str = 'mm_kunit'
	run_id: str = dataclasses.field(
		default_factory=lambda: uuid.uuid4().hex)


def _case_parts(case: CaseResult) -> Tuple[str, str]:
	"""JUnit classname and name: suite[.test] and test or row."""
	suite, _, rest = case.name.partition('.')
	test, dot, row = rest.partition('.')
	if dot:
		return f'{suite}.{test}', row
	return suite, test


def _first_failure(log: str) -> str:
	for line in log.splitlines():
		if 'EXPECTATION FAILED' in line or 'ASSERTION FAILED' in line:
			return line.strip().lstrip('# ')
	return 'failed'


def _seconds(value: Optional[float]) -> str:
	return f'{value or 0.0:.6f}'


# XML 1.0 cannot hold most control characters.
_XML_BAD = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f]')


def _xml_text(text: str) -> str:
	return _XML_BAD.sub('?', text)


def junit_xml(result: RunResult, ctx: Context) -> str:
	"""The run as JUnit XML: a testsuite per KUnit suite."""
	root = ET.Element('testsuites', name=f'mm-kunit {ctx.arch}')
	suites: Dict[str, ET.Element] = {}
	counts: Dict[str, Dict[str, float]] = {}
	cases = list(result.cases)
	harness_case = _harness_verdict(result)
	for case in cases + ([harness_case] if harness_case else []):
		suite = case.name.partition('.')[0]
		if suite not in suites:
			suites[suite] = ET.SubElement(
				root, 'testsuite', name=suite,
				timestamp=ctx.started.isoformat(timespec='seconds'))
			props = ET.SubElement(suites[suite], 'properties')
			for key, value in (('arch', ctx.arch),
					   ('environment', ctx.environment),
					   ('source', str(ctx.source)),
					   ('package', ctx.package)):
				if value:
					ET.SubElement(props, 'property', name=key,
						      value=value)
			counts[suite] = dict(tests=0, failures=0, errors=0,
					     skipped=0, time=0.0)
		classname, name = _case_parts(case)
		tc = ET.SubElement(suites[suite], 'testcase', classname=classname,
				   name=name, time=_seconds(case.duration))
		c = counts[suite]
		c['tests'] += 1
		c['time'] += case.duration or 0.0
		log = _xml_text(case.log)
		if case.status == Status.FAIL:
			c['failures'] += 1
			ET.SubElement(tc, 'failure', type='FAIL',
				      message=_xml_text(_first_failure(case.log))
				      ).text = log
		elif case.status == Status.ERROR:
			c['errors'] += 1
			ET.SubElement(tc, 'error', type='ERROR',
				      message='the test crashed, or the kernel did'
				      ).text = log
		elif case.status == Status.SKIP:
			c['skipped'] += 1
			ET.SubElement(tc, 'skipped',
				      message=_xml_text(case.skip_reason or 'skipped'))
		if log:
			ET.SubElement(tc, 'system-out').text = log
	total: Dict[str, float] = dict(tests=0, failures=0, errors=0, skipped=0,
				       time=0.0)
	for suite, el in suites.items():
		for key, amount in counts[suite].items():
			el.set(key, _seconds(amount) if key == 'time' else str(int(amount)))
			total[key] += amount
	for key, amount in total.items():
		root.set(key, _seconds(amount) if key == 'time' else str(int(amount)))
	ET.indent(root)
	return ET.tostring(root, encoding='unicode', xml_declaration=True) + '\n'


def _harness_verdict(result: RunResult) -> Optional[CaseResult]:
	"""A case for what fails a run besides its tests, if anything did:
	no results, or kernel warnings while the tests ran."""
	problems = ([result.error] if result.error else []) + [
		f'kernel warning while the tests ran: {c}' for c in result.complaints]
	if not problems:
		return None
	return CaseResult('mm_kunit.run', Status.FAIL,
			  log=''.join(f'# {p}\n' for p in problems))


_PATH_BAD = re.compile(r'[^A-Za-z0-9_-]+')


def kcidb_path(name: str) -> str:
	"""A KUnit case name as a KCIDB test path: kunit.suite.test.row.

	KCIDB path components hold only [A-Za-z0-9_-]; anything else in a row
	description (dots included) becomes '_' (the name as KUnit printed it
	is kept in the test's misc).
	"""
	parts = [_PATH_BAD.sub('_', p).strip('_') or '_'
		 for p in name.split('.', 2)]
	return '.'.join([KCIDB_ROOT] + parts)


def _excerpt(text: str) -> str:
	text = text.replace('\0', '')
	return text if len(text) <= LOG_EXCERPT_MAX else text[-LOG_EXCERPT_MAX:]


def _git(tree: Path, *args: str) -> Optional[str]:
	"""git's output in tree, or None if tree is no git tree (one in a
	git tree of something else is not)."""
	if not (tree / '.git').exists():
		return None
	try:
		return trees.git(tree, *args).strip()
	except trees.TreeError:
		return None


def patchset_hash(patches: Sequence[Tuple[str, bytes]]) -> str:
	"""KCIDB's patchset hash: the sha256 of the patches' sha256 hashes,
	each followed by a newline, in the order they apply."""
	inner = ''.join(hashlib.sha256(data).hexdigest() + '\n'
			for _, data in patches)
	return hashlib.sha256(inner.encode()).hexdigest() if patches else ''


@functools.lru_cache(maxsize=None)
def _compiler() -> str:
	"""gcc's version, once a process (run --watch reports many runs)."""
	try:
		out = subprocess.run(['gcc', '--version'], capture_output=True,
				     text=True, check=False).stdout
	except OSError:
		return ''
	return out.splitlines()[0] if out else ''


def kcidb(result: RunResult, ctx: Context) -> Dict[str, Any]:
	"""The run as KCIDB report data (validates against kcidb-io)."""
	origin = ctx.origin
	started = ctx.started.isoformat(timespec='seconds')
	checkout: Dict[str, Any] = {
		'id': f'{origin}:checkout-{ctx.run_id}',
		'origin': origin,
		'tree_name': ctx.source.name,
		'start_time': started,
		'valid': True,
		'misc': {'kernel_version': trees.kernel_version(ctx.source),
			 'source': str(ctx.source),
			 'patches': [name for name, _ in ctx.patches]},
	}
	if ctx.package:
		checkout['misc']['debian_package'] = ctx.package
	commit = _git(ctx.source, 'rev-parse', '--verify', '-q', 'HEAD')
	if commit and re.fullmatch('[0-9a-f]{40}', commit):
		checkout['git_commit_hash'] = commit
		name = _git(ctx.source, 'describe', '--always', 'HEAD')
		if name:
			checkout['git_commit_name'] = name
	if ctx.patches:
		checkout['patchset_hash'] = patchset_hash(ctx.patches)
	build: Dict[str, Any] = {
		'id': f'{origin}:build-{ctx.run_id}',
		'checkout_id': checkout['id'],
		'origin': origin,
		'start_time': started,
		'architecture': re.sub('[^a-z0-9_]', '_', ctx.arch.lower()),
		'config_name': ctx.config_name,
		'compiler': _compiler(),
		'status': 'PASS' if result.booted else 'FAIL',
	}
	if ctx.command:
		build['command'] = ctx.command
	if result.build_seconds is not None:
		build['duration'] = round(result.build_seconds, 3)
	if not result.booted:
		out = result.results_dir / 'kunit.out'
		build['log_excerpt'] = _excerpt(
			out.read_text(errors='replace') if out.is_file()
			else result.error)
	env = {'comment': ctx.environment} if ctx.environment else None
	tests: List[Dict[str, Any]] = []
	harness_case = _harness_verdict(result)
	for case in list(result.cases) + ([harness_case] if harness_case else []):
		test: Dict[str, Any] = {
			'id': f'{build["id"]}:{case.name}',
			'build_id': build['id'],
			'origin': origin,
			'path': kcidb_path(case.name),
			'status': case.status.value,
			'misc': {'kunit_name': case.name},
		}
		if case.duration is not None:
			test['duration'] = case.duration
		if case.log:
			test['log_excerpt'] = _excerpt(case.log)
		if env:
			test['environment'] = env
		tests.append(test)
	return {'version': dict(KCIDB_VERSION), 'checkouts': [checkout],
		'builds': [build], 'tests': tests}
