# SPDX-License-Identifier: GPL-2.0
"""The table of arches (arches.py): what the repository, the harness and
the command line hold of each."""

from __future__ import annotations

import re

import pytest

from conftest import REPO
from mmkunit import arches, cli
from mmkunit.request import Build

KUNIT_CONFIGS = REPO / 'kunit-configs'


def test_each_arch_has_its_kunitconfig() -> None:
	for name, arch in arches.ARCHES.items():
		assert arch.name == name
		assert (KUNIT_CONFIGS / f'{name}.config').is_file(), name
	assert Build.arch in arches.ARCHES


def test_each_kunitconfig_is_of_an_arch_in_the_table() -> None:
	"""kunit-configs/ARCH.config and ARCH-NAME.config: no file of an arch
	the harness would refuse."""
	for path in KUNIT_CONFIGS.glob('*.config'):
		assert any(path.stem == a or path.stem.startswith(f'{a}-')
			   for a in arches.ARCHES), path.name


def test_qemu_arches_name_their_qemu_and_its_package() -> None:
	"""An arch under QEMU installs it (deps.py) and boots it with KVM if
	it can (kvm.py); UML needs neither."""
	for arch in arches.ARCHES.values():
		if arch.uml:
			assert not (arch.qemu_package or arch.qemu_params)
			assert arch.runs_under == 'UML'
			continue
		assert arch.qemu and arch.qemu_package
		assert (arch.qemu_package, arch.qemu) in [
			(r.package, r.command) for r in arch.requirements]
		assert arch.runs_under == 'QEMU'


def test_arch_help_lists_exactly_the_table(
		capsys: pytest.CaptureFixture[str]) -> None:
	with pytest.raises(SystemExit):
		cli.parse_args(['run', '--help'])
	text = ' '.join(capsys.readouterr().out.split())
	m = re.search(r'--arch ARCH (.*?) --jobs', text)
	assert m, text
	assert re.findall(r'(\S+) \((?:UML|QEMU)', m.group(1)) == \
		list(arches.ARCHES)
	assert f'{Build.arch} (UML, the default)' in m.group(1)
