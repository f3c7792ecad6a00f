# SPDX-License-Identifier: GPL-2.0
"""Which lines of a header a configuration leaves out (mutagen.guards()
and kconfig.py): a header's mutant there is equivalent without a build."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Optional

import pytest

pytest.importorskip('tree_sitter_c')

from mmkunit import kconfig  # noqa: E402
from mmkunit import mutagen  # noqa: E402

HEADER = textwrap.dedent('''\
	#ifndef GUARD_H
	#define GUARD_H
	#ifdef CONFIG_LRU_GEN
	static inline bool add(int a)
	{
		return a > 1;
	}
	#elif defined(CONFIG_B) && !IS_ENABLED(CONFIG_M)
	static inline bool add(int a)
	{
		return a > 2;
	}
	#else /* !CONFIG_LRU_GEN */
	static inline bool add(int a)
	{
	#if CONFIG_PAGE_SHIFT >= 14 || defined(ARCH_THING)
		a++;
	#endif
		return a > 3;
	}
	#endif
	#endif
	''').encode()

CONFIG = {'CONFIG_LRU_GEN': 'y', 'CONFIG_M': 'm', 'CONFIG_PAGE_SHIFT': '12'}


def left_out(marker: bytes, config: kconfig.Config) -> Optional[str]:
	return kconfig.left_out(mutagen.guards(HEADER, HEADER.index(marker)),
				config)


def test_the_taken_branch_is_compiled() -> None:
	assert left_out(b'a > 1', CONFIG) is None


def test_a_branch_after_a_taken_one_is_left_out() -> None:
	assert 'CONFIG_LRU_GEN' in left_out(b'a > 2', CONFIG)
	assert 'CONFIG_LRU_GEN' in left_out(b'a > 3', CONFIG)
	assert 'CONFIG_LRU_GEN' in left_out(b'a++', CONFIG)


def test_elif_and_else_follow_the_configuration() -> None:
	# CONFIG_B set and CONFIG_M off: the #elif branch, not the #else.
	config = {'CONFIG_B': 'y'}
	assert left_out(b'a > 1', config) is not None
	assert left_out(b'a > 2', config) is None
	assert 'CONFIG_B' in left_out(b'a > 3', config)
	# IS_ENABLED() is true for a module too: the #elif is left out.
	config = {'CONFIG_B': 'y', 'CONFIG_M': 'm'}
	assert 'IS_ENABLED(CONFIG_M)' in left_out(b'a > 2', config)
	assert left_out(b'a > 3', config) is None


def test_a_macro_the_configuration_does_not_decide_keeps_the_line() -> None:
	# CONFIG_PAGE_SHIFT >= 14 is false, but ARCH_THING is no option:
	# the line may be compiled.
	assert left_out(b'a++', {}) is None
	# The include guard never takes a line out either.
	assert left_out(b'a > 3', {}) is None


def test_numbers_and_modules() -> None:
	config = {'CONFIG_X': 'm', 'CONFIG_N': '0x10', 'CONFIG_S': '"s"'}

	def value(text: str) -> kconfig.Value:
		source = f'#if {text}\nint x;\n#endif\n'.encode()
		branch = mutagen.guards(source, source.index(b'int x'))[0]
		assert branch.own is not None
		return kconfig.evaluate(branch.own, config)

	assert value('defined(CONFIG_X)') == 0
	assert value('defined(CONFIG_X_MODULE)') == 1
	assert value('IS_MODULE(CONFIG_X) && !IS_BUILTIN(CONFIG_X)') == 1
	assert value('IS_REACHABLE(CONFIG_X)') is None
	assert value('CONFIG_N == 16') == 1
	assert value('CONFIG_N > 16 || CONFIG_UNSET') == 0
	assert value('CONFIG_S') is None
	assert value('0 && FOO') == 0
	assert value('1 || FOO') == 1
	assert value('1 && FOO') is None


def test_load(tmp_path: Path) -> None:
	path = tmp_path / '.config'
	path.write_text('# comment\nCONFIG_A=y\n# CONFIG_B is not set\n'
			'CONFIG_C="x=y"\n')
	assert kconfig.load(path) == {'CONFIG_A': 'y', 'CONFIG_C': '"x=y"'}
