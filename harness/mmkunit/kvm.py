# SPDX-License-Identifier: GPL-2.0
"""Whether QEMU may use KVM here: only when it really works.

/dev/kvm can exist and still fail a guest: nested virtualisation that
rejects an MSR, or an instruction KVM cannot emulate (seen on this
project's CI machines: "KVM internal error. Suberror: 1" on a locked
cmpxchg16b, after which QEMU hangs). So the probe boots the kernel the
harness built, under KVM, with KUnit off, and calls KVM usable only if the
boot reaches its end (the panic for want of a root file system). The answer
is kept in the cache per host kernel and QEMU version; until a kernel has
been built, runs use TCG.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Dict, Optional, Tuple

KVM_DEVICE = Path('/dev/kvm')
# The end of a boot with nothing to run: the kernel looked for a root fs.
_BOOTED = ('Kernel panic - not syncing: VFS', 'Kernel panic - not syncing: No working init')
_KVM_BROKEN = ('KVM internal error', 'failed to initialize kvm',
	       'Could not access KVM kernel module', 'kvm_buf_set_msrs')


def _qemu_version(qemu: str) -> str:
	try:
		out = subprocess.run([qemu, '--version'], capture_output=True,
				     text=True, check=False).stdout
	except OSError:
		return ''
	return out.splitlines()[0] if out else ''


def probe_key(qemu: str) -> str:
	return f'{os.uname().release} | {_qemu_version(qemu)}'


def boot_under_kvm(qemu: str, image: Path, console: str,
		   extra: Tuple[str, ...] = (),
		   timeout: float = 30) -> Tuple[bool, str]:
	"""Boots image under KVM with KUnit off, its console on console;
	(usable, why not).

	Stops QEMU as soon as its output tells: the boot's end, or KVM's
	failure (after which QEMU may hang).
	"""
	cmd = [qemu, '-accel', 'kvm', '-nodefaults', '-m', '1024',
	       '-kernel', str(image), '-append',
	       f'console={console} kunit.enable=0 panic=-1', '-no-reboot',
	       '-nographic', '-serial', 'stdio', *extra]
	try:
		proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
					stderr=subprocess.STDOUT,
					stdin=subprocess.DEVNULL)
	except OSError as e:
		return False, str(e)
	assert proc.stdout is not None
	deadline = time.monotonic() + timeout
	out = ''
	verdict: Optional[Tuple[bool, str]] = None
	try:
		while verdict is None:
			left = deadline - time.monotonic()
			if left <= 0:
				verdict = (False, 'the boot under KVM did not end '
					   f'in {timeout:.0f} s')
				break
			ready, _, _ = select.select([proc.stdout], [], [], left)
			chunk = os.read(proc.stdout.fileno(), 65536) if ready else b''
			if ready and not chunk:
				proc.wait()
				break
			out += chunk.decode(errors='replace')
			broken = next((b for b in _KVM_BROKEN if b in out), None)
			if broken:
				verdict = (False, f'the boot under KVM failed: {broken}')
			elif any(b in out for b in _BOOTED):
				verdict = (True, '')
	finally:
		if proc.poll() is None:
			proc.kill()
			proc.wait()
		proc.stdout.close()
	if verdict is None:
		tail = out.strip().splitlines()[-1:] or ['no output']
		verdict = (False, f'the boot under KVM did not finish: {tail[0]}')
	return verdict


def kvm_works(cache: Path, image: Optional[Path], qemu: str, console: str,
	      extra: Tuple[str, ...] = ()) -> Tuple[bool, str]:
	"""Whether to run QEMU (qemu, the arch's) with KVM; (usable, why
	not). Cached."""
	if os.environ.get('MM_KUNIT_KVM') == '0':
		return False, 'MM_KUNIT_KVM=0'
	if not os.access(KVM_DEVICE, os.R_OK | os.W_OK):
		return False, f'{KVM_DEVICE} is missing or not accessible'
	if not shutil.which(qemu):
		return False, f'{qemu} is missing'
	store = cache / 'kvm-probe.json'
	key = probe_key(qemu)
	try:
		known: Dict[str, Dict[str, object]] = json.loads(store.read_text())
	except (OSError, ValueError):
		known = {}
	if key in known:
		return bool(known[key]['usable']), str(known[key]['why'])
	if image is None or not image.is_file():
		return False, 'not probed yet: no kernel built to probe with'
	usable, why = boot_under_kvm(qemu, image, console, extra)
	known[key] = {'usable': usable, 'why': why}
	cache.mkdir(parents=True, exist_ok=True)
	tmp = store.with_suffix('.tmp')
	tmp.write_text(json.dumps(known, indent=1, sort_keys=True))
	os.replace(tmp, store)
	return usable, why


# Written into the cache for runs without KVM: kunit.py (7.x) starts QEMU
# with "-accel kvm -accel hvf -accel tcg" before any of the harness's
# arguments, and QEMU takes the first that opens, so a /dev/kvm that opens
# and then fails a guest would be used. This drops the first two.
_TCG_WRAPPER = """#!/bin/bash
# mm-kunit: QEMU without KVM or HVF (harness/mmkunit/kvm.py).
args=()
while [ $# -gt 0 ]; do
	if [ "$1" = -accel ] && { [ "$2" = kvm ] || [ "$2" = hvf ]; }; then
		shift 2
		continue
	fi
	args+=("$1")
	shift
done
exec @QEMU@ "${args[@]}"
"""


def tcg_only_path(cache: Path, qemu: str, path: str) -> str:
	"""PATH with a directory first whose qemu (named as qemu, the real one
	found in path) never asks for KVM: for kunit.py, which does."""
	real = shutil.which(qemu, path=path)
	if not real:
		return path
	wrapper_dir = cache / 'qemu-tcg'
	wrapper = wrapper_dir / qemu
	text = _TCG_WRAPPER.replace('@QEMU@', real)
	if not wrapper.is_file() or wrapper.read_text() != text:
		wrapper_dir.mkdir(parents=True, exist_ok=True)
		tmp = wrapper.with_suffix('.tmp')
		tmp.write_text(text)
		tmp.chmod(0o755)
		os.replace(tmp, wrapper)
	return os.pathsep.join([str(wrapper_dir), path])

