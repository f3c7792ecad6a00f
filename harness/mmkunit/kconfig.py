# SPDX-License-Identifier: GPL-2.0
"""What a kernel configuration (.config) says of a preprocessor condition.

A mutant of a header cannot be compared object by object (tce.py): many
units include the header. But a mutant inside an #ifdef branch that the
configuration leaves out is never compiled, and so is equivalent without
any build. Only what the configuration decides is decided here: an
option that is set (`y`, or a value) is defined, one set to `m` defines
CONFIG_X_MODULE instead, and any other macro (an include guard, an arch
macro) leaves the condition undecided, which never takes a mutant out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional, Sequence, Union

from mmkunit.mutagen import Branch, Cond

# A decided value: an int (a bool is one); None when the configuration
# does not decide it.
Value = Optional[int]
Config = Dict[str, str]


def load(path: Path) -> Config:
	"""CONFIG_X -> its value ('y', 'm', a number or a quoted string)."""
	out: Config = {}
	for line in path.read_text().splitlines():
		name, eq, value = line.partition('=')
		if eq and name.startswith('CONFIG_'):
			out[name] = value
	return out


def _defined(name: str, config: Config) -> Value:
	if not name.startswith('CONFIG_'):
		return None
	if name in config:
		return int(config[name] != 'm')
	base = name[:-len('_MODULE')]
	return int(name.endswith('_MODULE') and config.get(base) == 'm')


def _value(name: str, config: Config) -> Value:
	if not name.startswith('CONFIG_'):
		return None
	value = config.get(name)
	if value is None or value == 'm':
		return 0
	if value == 'y':
		return 1
	try:
		return int(value, 0)
	except ValueError:
		return None


# IS_ENABLED() and its kin (include/linux/kconfig.h), by what they say of
# y and m; IS_REACHABLE() of m depends on the unit (MODULE).
_CALLS = {'IS_ENABLED': (1, 1), 'IS_BUILTIN': (1, 0), 'IS_MODULE': (0, 1),
	  'IS_REACHABLE': (1, None)}


def evaluate(cond: Cond, config: Config) -> Value:
	"""The condition's value under config, or None if it does not
	decide it."""
	op, args = cond.op, cond.args
	if op == 'defined':
		return _defined(args[0], config)
	if op == 'value':
		return _value(args[0], config)
	if op == 'number':
		return int(args[0])
	if op == 'call':
		if args[0] not in _CALLS or not args[1].startswith('CONFIG_'):
			return None
		y, m = _CALLS[args[0]]
		value = config.get(args[1])
		if value not in ('y', 'm', None):
			return None  # an int option that happens to be 1, say
		return y if value == 'y' else m if value == 'm' else 0
	if op == '!':
		v = evaluate(args[0], config)
		return None if v is None else int(not v)
	if op in ('&&', '||'):
		sides = [evaluate(a, config) for a in args]
		truth = [None if v is None else bool(v) for v in sides]
		decisive = op == '||'  # the value that decides it either side
		if decisive in truth:
			return int(decisive)
		return None if None in truth else int(not decisive)
	if op in ('==', '!=', '<', '<=', '>', '>='):
		left, right = (evaluate(a, config) for a in args)
		if left is None or right is None:
			return None
		return int({'==': left == right, '!=': left != right,
			    '<': left < right, '<=': left <= right,
			    '>': left > right, '>=': left >= right}[op])
	return None


def _text(cond: Union[Cond, None]) -> str:
	if cond is None:
		return '#else'
	if cond.op in ('defined', 'value', 'number'):
		return str(cond.args[0])
	if cond.op == 'call':
		return f'{cond.args[0]}({cond.args[1]})'
	if cond.op == '!':
		return '!' + _text(cond.args[0])
	if cond.op == 'unknown':
		return str(cond.args[0])
	return f'({_text(cond.args[0])} {cond.op} {_text(cond.args[1])})'


def left_out(branches: Sequence[Branch], config: Config) -> Optional[str]:
	"""Why config leaves a line inside branches out of every unit, or
	None if it may be compiled."""
	for b in branches:
		for cond in b.earlier:
			if evaluate(cond, config):
				return (f'an earlier branch of its #if chain is '
					f'taken: {_text(cond)}')
		if b.own is not None and evaluate(b.own, config) == 0:
			return f'its branch needs {_text(b.own)}'
	return None
