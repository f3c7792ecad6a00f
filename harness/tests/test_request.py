# SPDX-License-Identifier: GPL-2.0
"""The requests (request.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mmkunit import request


def test_a_kernel_is_named_by_tree_kernel_or_tarball() -> None:
	assert not request.Source().names_kernel
	assert not request.Source(cache=Path('c'), install=False).names_kernel
	assert request.Source(tree='6.1').names_kernel
	assert request.Source(kernel=Path('linux')).names_kernel
	assert request.Source(tarball=Path('linux.tar.xz')).names_kernel


def test_requests_are_frozen() -> None:
	req = request.RunRequest()
	with pytest.raises(dataclasses.FrozenInstanceError):
		req.repeat = 2
	with pytest.raises(dataclasses.FrozenInstanceError):
		req.build.arch = 'x86_64'
