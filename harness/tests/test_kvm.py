# SPDX-License-Identifier: GPL-2.0
"""The KVM probe: KVM only when a boot under it really works."""

from __future__ import annotations

import os
import subprocess
import textwrap
import time
from pathlib import Path
from typing import Optional, Tuple

import pytest

from mmkunit import kvm


def fake_qemu(tmp_path: Path, output: str, code: int = 0) -> Path:
	"""A qemu-system-x86_64 that prints @output and counts its boots."""
	qemu = tmp_path / 'qemu-system-x86_64'
	qemu.write_text(textwrap.dedent(f'''\
		#!/bin/sh
		if [ "$1" = --version ]; then echo "QEMU emulator version 7.2.22"; exit 0; fi
		echo boot >> {tmp_path}/boots
		printf '%s\\n' '{output}'
		exit {code}
		'''))
	qemu.chmod(0o755)
	return qemu


def kvm_works(cache: Path, image: Optional[Path],
	      qemu: str) -> Tuple[bool, str]:
	"""kvm.kvm_works() with x86_64's console."""
	return kvm.kvm_works(cache, image, qemu, 'ttyS0')


@pytest.fixture
def kvm_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
	dev = tmp_path / 'kvm'
	dev.write_text('')
	monkeypatch.setattr(kvm, 'KVM_DEVICE', dev)
	monkeypatch.delenv('MM_KUNIT_KVM', raising=False)
	return dev


@pytest.mark.parametrize('output, code, usable, why', [
	('[ 1.0] Kernel panic - not syncing: VFS: Unable to mount root fs', 0,
	 True, ''),
	('KVM internal error. Suberror: 1', 1, False, 'KVM internal error'),
	('qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69', 134,
	 False, 'did not finish'),
	('Linux version 6.12.117', 0, False, 'did not finish'),
])
def test_probe_boot(tmp_path: Path, kvm_device: Path, output: str, code: int,
		    usable: bool, why: str) -> None:
	image = tmp_path / 'bzImage'
	image.write_text('')
	got, reason = kvm_works(tmp_path / 'cache', image,
				qemu=str(fake_qemu(tmp_path, output, code)))
	assert got == usable
	assert why in reason


def test_probe_is_cached_per_host(tmp_path: Path, kvm_device: Path) -> None:
	image = tmp_path / 'bzImage'
	image.write_text('')
	qemu = str(fake_qemu(tmp_path, 'KVM internal error. Suberror: 1', 1))
	first = kvm_works(tmp_path / 'cache', image, qemu=qemu)
	second = kvm_works(tmp_path / 'cache', image, qemu=qemu)
	assert first == second and not first[0]
	assert (tmp_path / 'boots').read_text().count('boot') == 1


def test_no_probe_without_device_image_or_consent(
		tmp_path: Path, kvm_device: Path,
		monkeypatch: pytest.MonkeyPatch) -> None:
	qemu = str(fake_qemu(tmp_path, 'Kernel panic - not syncing: VFS'))
	assert kvm_works(tmp_path / 'c', None, qemu=qemu) == \
		(False, 'not probed yet: no kernel built to probe with')
	monkeypatch.setenv('MM_KUNIT_KVM', '0')
	assert kvm_works(tmp_path / 'c', tmp_path, qemu=qemu)[0] is False
	monkeypatch.delenv('MM_KUNIT_KVM')
	kvm_device.unlink()
	assert 'is missing' in kvm_works(tmp_path / 'c', tmp_path, qemu=qemu)[1]
	assert not (tmp_path / 'boots').exists()


def test_probe_stops_a_hung_qemu_early(tmp_path: Path) -> None:
	"""KVM's error is enough: the probe does not wait for a hung QEMU."""
	qemu = tmp_path / 'qemu'
	qemu.write_text('#!/bin/sh\necho "KVM internal error. Suberror: 1"\nexec sleep 30\n')
	qemu.chmod(0o755)
	start = time.monotonic()
	usable, why = kvm.boot_under_kvm(str(qemu), tmp_path, 'ttyS0', timeout=20)
	assert (usable, why) == (False, 'the boot under KVM failed: KVM internal error')
	assert time.monotonic() - start < 10


def test_probe_gives_up_on_silence(tmp_path: Path) -> None:
	qemu = tmp_path / 'qemu'
	qemu.write_text('#!/bin/sh\nexec sleep 30\n')
	qemu.chmod(0o755)
	assert kvm.boot_under_kvm(str(qemu), tmp_path, 'ttyS0', timeout=1) == \
		(False, 'the boot under KVM did not end in 1 s')


def test_tcg_only_qemu_drops_kunit_pys_kvm_and_hvf(tmp_path: Path) -> None:
	"""kunit.py 7.x asks for KVM before the harness's -accel tcg; the
	wrapper on PATH takes KVM and HVF out and keeps everything else."""
	bin_dir = tmp_path / 'bin'
	bin_dir.mkdir()
	fake = bin_dir / 'qemu-system-x86_64'
	fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
	fake.chmod(0o755)
	path = kvm.tcg_only_path(tmp_path / 'cache', 'qemu-system-x86_64',
				 str(bin_dir))
	assert path.split(os.pathsep)[1] == str(bin_dir)
	out = subprocess.run(['qemu-system-x86_64', '-m', '1024', '-accel', 'kvm',
			      '-accel', 'hvf', '-accel', 'tcg', '-append', 'a b'],
			     env={'PATH': path}, capture_output=True, text=True,
			     check=True).stdout
	assert out.splitlines() == ['-m', '1024', '-accel', 'tcg', '-append',
				    'a b']
