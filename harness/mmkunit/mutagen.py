# SPDX-License-Identifier: GPL-2.0
"""Mutants generated from the source of the functions the suites pin.

The source is parsed with tree-sitter's C grammar; each operator below
rewrites one node of a pinned function's body:

  ror     a relational operator to its boundary (< <=, > >=) or == to !=
  aor     an arithmetic operator (+ -, * /, % *, << >>, += -=, ++ --)
  bor     a bitwise operator (& |, ^ &, &= |=)
  lor     && to || and back
  negate  the condition of an if, while or ?: negated
  const   an integer constant to 0, 1, N+1, N-1; true and false swapped
  delete  a statement deleted (a call, an assignment, an increment)
  return  the returned value replaced (0, 1, true/false swapped)
  swap    two adjacent arguments of a call, of the same declared type
  arg     a call whose value is used replaced by one of its arguments
          (min(a, b) to (a); not READ_ONCE(x), whose value is x's)
  order   two adjacent statements (calls, assignments, increments),
          each alone on its line, swapped, unless neither calls and
          neither writes what the other reads or writes (a swap that
          is equivalent by construction)

A mutant never adds or removes a line, so __LINE__ (WARN_ON's and
BUG_ON's tables) is the same as in the original: that is what lets the
compiled object be compared with the original's (tce.py).

The same source gives the same mutants in the same order, each with an id
made of the function, the line, the column and the operator, e.g.
"do_sync_mmap_readahead:3160:13:ror:<=".
"""

from __future__ import annotations

import dataclasses
import difflib
import random
import re
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from mmkunit import deps
from mmkunit import listfile


class PinnedError(Exception):
	"""The list of pinned functions cannot be read, or names a function
	that is not in the source."""


@dataclasses.dataclass(frozen=True)
class Pinned:
	"""A function the suites are responsible for: the suite written for
	it, and any a port adds where that kernel does otherwise."""
	suites: Tuple[str, ...]
	path: str  # in the kernel tree, e.g. mm/filemap.c
	function: str
	# The arches its paths run on (x86_64 for large folios, say); none:
	# every arch.
	arches: Tuple[str, ...] = ()


def parse_pinned(text: str, where: str = 'pinned') -> List[Pinned]:
	"""SUITE... | FILE | FUNCTION [| ARCH ...], one per line, '#'
	comments."""
	out: List[Pinned] = []
	for at, raw, parts in listfile.entries(text, where):
		if len(parts) not in (3, 4) or not all(parts[:3]):
			raise PinnedError(f'{at}: want "SUITE... | FILE | '
					  f'FUNCTION [| ARCH ...]", got: {raw}')
		arches = tuple(parts[3].split()) if len(parts) == 4 else ()
		out.append(Pinned(tuple(parts[0].split()), parts[1], parts[2],
				  arches))
	return out


def load_pinned(path: Path) -> List[Pinned]:
	return parse_pinned(listfile.read_text(path, PinnedError), str(path))


@dataclasses.dataclass(frozen=True)
class Mutant:
	"""One edit of one pinned function."""
	path: str
	function: str
	line: int  # 1-based
	column: int  # 1-based, in bytes
	operator: str  # e.g. 'ror:<=', 'const:0', 'delete'
	start: int  # byte offsets of the replaced text in the file
	end: int
	original: str
	replacement: str
	# The smallest whole expression or statement the edit lies in (its
	# byte offsets), and whether it is a statement (a deleted one, two
	# swapped): what a schema (schemata.py) chooses between. 0, 0: not
	# known (a mutant read back from a report).
	region_start: int = 0
	region_end: int = 0
	statement: bool = False

	@property
	def id(self) -> str:
		return f'{self.function}:{self.line}:{self.column}:{self.operator}'

	def apply(self, source: bytes) -> bytes:
		return (source[:self.start] + self.replacement.encode() +
			source[self.end:])

	def mutated_region(self, source: bytes) -> bytes:
		"""The text of the region with the edit made."""
		return (source[self.region_start:self.start] +
			self.replacement.encode() +
			source[self.end:self.region_end])

	def diff(self, source: bytes) -> str:
		"""The mutant as a unified diff of its file (for `patch -p1`)."""
		old = source.decode(errors='surrogateescape').splitlines(True)
		new = self.apply(source).decode(
			errors='surrogateescape').splitlines(True)
		return ''.join(difflib.unified_diff(
			old, new, f'a/{self.path}', f'b/{self.path}', n=3))


_ROR = {'<': '<=', '<=': '<', '>': '>=', '>=': '>', '==': '!=', '!=': '=='}
_AOR = {'+': '-', '-': '+', '*': '/', '/': '*', '%': '*', '<<': '>>',
	'>>': '<<', '+=': '-=', '-=': '+=', '<<=': '>>=', '>>=': '<<='}
_BOR = {'&': '|', '|': '&', '^': '&', '&=': '|=', '|=': '&='}
_LOR = {'&&': '||', '||': '&&'}
_INT = re.compile(r'^(0[xX][0-9a-fA-F]+|[0-9]+)([uUlL]*)$')
_DELETABLE = ('call_expression', 'assignment_expression', 'update_expression')
# Every operator, as a mutant's operator starts (ror in 'ror:<=').
OPERATORS = ('ror', 'aor', 'bor', 'lor', 'negate', 'const', 'delete',
	     'return', 'swap', 'arg', 'order')
# Calls whose value is their argument's: hints to the compiler, and the
# markers of a racy access (which only keep the compiler from tearing or
# refetching it: without a race, which no deterministic test has, the
# value is the same). A call replaced by its argument is equivalent by
# construction.
_HINTS = (b'likely', b'unlikely', b'READ_ONCE', b'data_race')
_STRINGS = ('string_literal', 'concatenated_string')
# Function-like macros of <linux/minmax.h>, <linux/math.h> and the like
# that compute a value from their arguments and do nothing else: a
# statement that calls only these calls nothing, for the order operator.
_PURE = (b'min', b'max', b'min_t', b'max_t', b'min3', b'max3', b'clamp',
	 b'clamp_t', b'round_up', b'round_down', b'ALIGN', b'ALIGN_DOWN',
	 b'DIV_ROUND_UP', b'BIT', b'PFN_DOWN', b'PFN_UP', b'abs_diff')
# An argument that is no value: a type (min_t()'s first; the grammar
# reads one in an argument list as an identifier), or a configuration
# symbol (IS_ENABLED()'s: 1 or not defined at all).
_NOT_VALUE = re.compile(r'^(?:(?:unsigned|signed|long|short|int|char|bool|'
			r'float|double|void|[us](?:8|16|32|64)|\w+_t)\b\s*)+$|'
			r'^CONFIG_\w+$')


def use_parser(cache: Path, install: bool) -> None:
	"""Makes tree-sitter and its C grammar importable: installed from
	PyPI into the cache (for the running Python) if need be."""
	site = deps.ensure_pypi(
		deps.MUTANTS_PYPI, cache / 'tree-sitter-python{}.{}'.format(
			*sys.version_info[:2]), allow_install=install)
	if str(site) not in sys.path:
		sys.path.insert(0, str(site))


def _parser() -> Any:
	# tree-sitter is installed into the cache (deps.MUTANTS_PYPI).
	import tree_sitter_c
	from tree_sitter import Language, Parser
	return Parser(Language(tree_sitter_c.language()))


def _name(declarator: Any) -> Optional[str]:
	while declarator is not None and declarator.type != 'identifier':
		declarator = declarator.child_by_field_name('declarator')
	return declarator.text.decode() if declarator is not None else None


def functions(source: bytes) -> Dict[str, List[Any]]:
	"""Every function definition of source, by name (a function defined
	under #ifdef and #else has two)."""
	found: Dict[str, List[Any]] = {}
	stack = [_parser().parse(source).root_node]
	while stack:
		node = stack.pop()
		if node.type == 'function_definition':
			name = _name(node.child_by_field_name('declarator'))
			if name:
				found.setdefault(name, []).append(node)
			continue
		stack.extend(reversed(node.children))
	for nodes in found.values():
		nodes.sort(key=lambda n: n.start_byte)
	return found


def _declared_types(function: Any) -> Dict[str, str]:
	"""The declared type of each parameter and local variable, as text."""
	types: Dict[str, str] = {}
	stack = [function]
	while stack:
		node = stack.pop()
		if node.type in ('parameter_declaration', 'declaration'):
			base = node.child_by_field_name('type')
			for d in node.children_by_field_name('declarator'):
				name = _name(d)
				if name and base is not None:
					stars = d.text.decode().split(name)[0].count('*')
					types[name] = base.text.decode() + '*' * stars
		stack.extend(node.children)
	return types


def _inside_error(node: Any, top: Any) -> bool:
	while node is not None and node != top:
		if node.type == 'ERROR' or node.is_missing:
			return True
		node = node.parent
	return False


def _int_variants(text: str) -> List[Tuple[str, str]]:
	m = _INT.match(text)
	if not m:
		return []
	value = int(m.group(1), 0)
	out: List[Tuple[str, str]] = []
	for op, new in (('const:0', 0), ('const:1', 1), ('const:+1', value + 1),
			('const:-1', value - 1)):
		if new != value and new >= 0 and \
		   str(new) not in [v for _, v in out]:
			out.append((op, str(new)))
	return out


def _edits(node: Any, types: Dict[str, str], source: bytes,
	   returns_pointer: bool) -> Iterator[Tuple[Any, str, str]]:
	"""(node to replace, operator, replacement) for one node."""
	t = node.type
	if t == 'update_expression':
		op = node.child_by_field_name('operator')
		if op is not None and op.text in (b'++', b'--'):
			new = '--' if op.text == b'++' else '++'
			yield op, f'aor:{new}', new
	elif t in ('binary_expression', 'assignment_expression'):
		op = node.child_by_field_name('operator')
		if op is not None:
			sym = op.text.decode()
			for table, kind in ((_ROR, 'ror'), (_AOR, 'aor'),
					    (_BOR, 'bor'), (_LOR, 'lor')):
				if sym in table:
					yield op, f'{kind}:{table[sym]}', table[sym]
	elif t in ('if_statement', 'while_statement', 'conditional_expression'):
		cond = node.child_by_field_name('condition')
		if cond is not None:
			text = cond.text.decode()
			if cond.type == 'parenthesized_expression':
				yield cond, 'negate', f'(!{text})'
			else:
				yield cond, 'negate', f'!({text})'
	elif t == 'number_literal':
		for op, new in _int_variants(node.text.decode()):
			yield node, op, new
	elif t in ('true', 'false'):
		yield node, 'const:' + ('false' if t == 'true' else 'true'), \
			'false' if t == 'true' else 'true'
	elif t == 'expression_statement':
		expr = node.named_children[0] if node.named_children else None
		if expr is not None and expr.type in _DELETABLE:
			# Keep the line breaks: the line numbers do not move.
			keep = '\n' * node.text.decode().count('\n')
			yield node, 'delete', ';' + keep
	elif t == 'return_statement':
		expr = node.named_children[0] if node.named_children else None
		if expr is not None:
			text = expr.text.decode()
			keep = '\n' * text.count('\n')
			if text in ('true', 'false'):
				values: Tuple[str, ...] = ('false', 'true')
			else:
				# A pointer is replaced by NULL only.
				values = ('0',) if returns_pointer else ('0', '1')
			for new in values:
				if new != text:
					yield expr, f'return:{new}', new + keep
	elif t == 'argument_list':
		args = node.named_children
		for a, b in zip(args, args[1:]):
			same = (a.type == b.type == 'identifier' and
				a.text != b.text and a.text.decode() in types and
				types.get(a.text.decode()) == types.get(b.text.decode()))
			if same:
				yield _Span(a.start_byte, b.end_byte, a.start_point), \
					'swap', (b.text + source[a.end_byte:b.start_byte] +
						 a.text).decode()
	elif t == 'call_expression':
		if _discarded(node) or _in_broken_statement(node) or \
		   _looks_like_cast(node) or \
		   node.child_by_field_name('function').text in _HINTS:
			return
		text = node.text.decode()
		keep = '\n' * text.count('\n')
		for i, arg in enumerate(_arguments(node)):
			if arg is None or arg.type in _STRINGS or \
			   _NOT_VALUE.match(arg.text.decode()) or \
			   arg.start_point[0] != arg.end_point[0]:
				continue
			new = f'({arg.text.decode()})'
			if new != text:
				yield node, f'arg:{i}', new + keep
	elif t == 'compound_statement':
		stmts = node.children
		for a, b in zip(stmts, stmts[1:]):
			if _alone(a, source) and _alone(b, source) and \
			   a.text != b.text and not _independent(a, b):
				yield _Span(a.start_byte, b.end_byte, a.start_point), \
					'order', (b.text + source[a.end_byte:b.start_byte] +
						  a.text).decode()


def _arguments(call: Any) -> List[Optional[Any]]:
	"""The arguments of a call, in order, split at its commas: each an
	expression node, or None if it is not one (a type, as min_t()'s
	first, or nothing the grammar can read)."""
	args = call.child_by_field_name('arguments')
	if args is None:
		return []
	groups: List[List[Any]] = [[]]
	for child in args.children:
		if child.type == ',':
			groups.append([])
		elif child.is_named and child.type != 'comment':
			groups[-1].append(child)
	if groups == [[]]:
		return []
	return [g[0] if len(g) == 1 and not g[0].has_error else None
		for g in groups]


def _discarded(node: Any) -> bool:
	"""Whether the value of node is thrown away: a statement of its own
	(perhaps in parentheses, cast to void or before a comma), or a for
	loop's first or third clause."""
	while node.parent is not None:
		parent = node.parent
		t = parent.type
		if t == 'expression_statement':
			return True
		if t == 'cast_expression':
			return bool(parent.child_by_field_name('type').text ==
				    b'void')
		if t == 'comma_expression' and _is_field(parent, 'left', node):
			return True
		if t == 'for_statement':
			return _is_field(parent, 'initializer', node) or \
				_is_field(parent, 'update', node)
		if t not in ('parenthesized_expression', 'comma_expression'):
			return False
		node = parent
	return False


def _in_broken_statement(node: Any) -> bool:
	"""Whether the grammar could not read the statement around node (a
	macro it does not know, such as a for_each loop), outside node. An
	argument list may hold what it cannot read (min_t()'s type): that
	stays in its own argument."""
	while node.parent is not None and \
	      not node.type.endswith('statement') and node.type != 'declaration':
		node = node.parent
		if node.type != 'argument_list' and any(
				c.type == 'ERROR' or c.is_missing
				for c in node.children):
			return True
	return False


def _looks_like_cast(call: Any) -> bool:
	"""(pgoff_t)(x): a cast to a type the grammar does not know, read as
	a call."""
	fn = call.child_by_field_name('function')
	return fn.type == 'parenthesized_expression' and \
		len(fn.named_children) == 1 and \
		fn.named_children[0].type == 'identifier'


def _alone(stmt: Any, source: bytes) -> bool:
	"""Whether stmt is a call, an assignment or an increment statement,
	alone on a line of its own."""
	if stmt.type != 'expression_statement' or stmt.has_error or \
	   not stmt.named_children or \
	   stmt.named_children[0].type not in _DELETABLE or \
	   stmt.start_point[0] != stmt.end_point[0]:
		return False
	start = source.rfind(b'\n', 0, stmt.start_byte) + 1
	end = source.find(b'\n', stmt.end_byte)
	end = len(source) if end < 0 else end
	return not source[start:stmt.start_byte].strip() and \
		not source[stmt.end_byte:end].strip()


def _region(node: Any, target: Any, op: str) -> Tuple[Any, bool]:
	"""The whole expression or statement an edit of target (which
	_edits() found at node) lies in, and whether it is a statement."""
	kind = op.split(':')[0]
	if kind in ('delete', 'order'):
		return target, True
	if kind == 'swap':
		# Two arguments: the call they are passed to.
		return node.parent, False
	if kind in ('ror', 'aor', 'bor', 'lor'):
		# An operator: the expression it is the operator of.
		return node, False
	# The edit replaces an expression whole: a condition, a constant,
	# a returned value, a call.
	return target, False


def _paths(node: Any) -> Optional[Tuple[Set[str], Set[str]]]:
	"""What an assignment or increment statement without a call writes
	and reads, as names and field paths ('ra', 'ra->size'); None if it
	has a call (which may do anything) but to a value macro (_PURE), or an lvalue that is no plain
	name or field path (*p, a[i]: it may be anything)."""
	expr = node.named_children[0]
	written: Set[str] = set()
	read: Set[str] = set()
	stack = [expr]
	while stack:
		n = stack.pop()
		if n.type == 'call_expression' and \
		   n.child_by_field_name('function').text not in _PURE:
			return None
		if n.type in ('assignment_expression', 'update_expression'):
			target = n.child_by_field_name(
				'left' if n.type == 'assignment_expression'
				else 'argument')
			if target is None or target.type not in (
					'identifier', 'field_expression') or \
			   any(c.type not in ('identifier', 'field_expression',
					      'field_identifier', '->', '.')
			       for c in _descendants(target)):
				return None
			written.add(target.text.decode())
			op = n.child_by_field_name('operator')
			if n.type == 'update_expression' or \
			   (op is not None and op.text != b'='):
				read.add(target.text.decode())
			stack.extend(c for c in n.children if c.id != target.id)
			continue
		if n.type in ('identifier', 'field_expression'):
			read.add(n.text.decode())
			if n.type == 'identifier':
				continue
		stack.extend(n.children)
	return written, read


def _descendants(node: Any) -> Iterator[Any]:
	stack = list(node.children)
	while stack:
		n = stack.pop()
		yield n
		stack.extend(n.children)


def _touches(written: str, other: str) -> bool:
	"""Whether writing one name or field path may change what another
	reads or writes: the same, a field of what was written ('ra', then
	'ra->size'), or the struct a written field is part of ('s.a', then
	's'). Reading a pointer ('ra') is not reading what it points at."""
	return written == other or \
		other.startswith((written + '->', written + '.')) or \
		written.startswith(other + '.')


def _independent(a: Any, b: Any) -> bool:
	"""Whether swapping two statements can change nothing: neither
	calls a function (but the value macros of _PURE), and neither writes a name or field path the other
	reads or writes. (Two distinct names, or fields, are taken to be
	distinct memory: a pointer that aliases another is not seen.) Such
	a swap is equivalent by construction; it is not generated."""
	pa, pb = _paths(a), _paths(b)
	if pa is None or pb is None:
		return False
	(wa, ra), (wb, rb) = pa, pb
	return not any(_touches(w, x) for w in wa for x in wb | rb) and \
		not any(_touches(w, x) for w in wb for x in wa | ra)


@dataclasses.dataclass(frozen=True)
class _Span:
	"""Two sibling nodes and what lies between them, as one node."""
	start_byte: int
	end_byte: int
	start_point: Tuple[int, int]


def generate(source: bytes, path: str, function: str) -> List[Mutant]:
	"""The mutants of every definition of function in source, in source
	order."""
	defs = functions(source).get(function)
	if not defs:
		raise PinnedError(f'{path}: no function {function}()')
	out: List[Mutant] = []
	seen: Set[Tuple[int, int, str]] = set()
	for fn in defs:
		body = fn.child_by_field_name('body')
		types = _declared_types(fn)
		returns_pointer = fn.child_by_field_name(
			'declarator').type == 'pointer_declarator'
		stack = [body]
		nodes = []
		while stack:
			node = stack.pop()
			nodes.append(node)
			stack.extend(reversed(node.children))
		for node in nodes:
			if _inside_error(node, fn):
				continue
			for target, op, new in _edits(node, types, source,
						      returns_pointer):
				key = (target.start_byte, target.end_byte, op)
				if key in seen:
					continue
				seen.add(key)
				row, col = target.start_point
				region, statement = _region(node, target, op)
				out.append(Mutant(
					path, function, row + 1, col + 1, op,
					target.start_byte, target.end_byte,
					source[target.start_byte:target.end_byte].decode(),
					new, region.start_byte, region.end_byte,
					statement))
	out.sort(key=lambda m: (m.start, m.end, m.operator))
	return out


@dataclasses.dataclass(frozen=True)
class Cond:
	"""A preprocessor condition: op is 'defined' (args: a name), 'value'
	(a name used as a number), 'number', 'call' (IS_ENABLED and the
	like: the macro, then a name), '!', '&&', '||', a comparison, or
	'unknown' (args: its text)."""
	op: str
	args: Tuple[Any, ...]


@dataclasses.dataclass(frozen=True)
class Branch:
	"""One branch of an #if chain that encloses a line: compiled when
	every earlier condition of the chain is false and its own (None for
	#else) is true."""
	earlier: Tuple[Cond, ...]
	own: Optional[Cond]


_CHAIN = ('preproc_if', 'preproc_ifdef', 'preproc_elif', 'preproc_elifdef')
_COMPARISONS = ('==', '!=', '<', '<=', '>', '>=')


def _cond(node: Any) -> Cond:
	t = node.type
	text = node.text.decode()
	if t in ('preproc_ifdef', 'preproc_elifdef'):
		name = node.child_by_field_name('name')
		if name is None:
			return Cond('unknown', (text,))
		defined = Cond('defined', (name.text.decode(),))
		negated = node.children[0].type in ('#ifndef', '#elifndef')
		return Cond('!', (defined,)) if negated else defined
	if t in ('preproc_if', 'preproc_elif'):
		cond = node.child_by_field_name('condition')
		return _cond(cond) if cond is not None else Cond('unknown', (text,))
	if t == 'parenthesized_expression' and len(node.named_children) == 1:
		return _cond(node.named_children[0])
	if t == 'preproc_defined' and node.named_children:
		return Cond('defined', (node.named_children[0].text.decode(),))
	if t == 'identifier':
		return Cond('value', (text,))
	number = _INT.match(text) if t == 'number_literal' else None
	if number:
		return Cond('number', (int(number.group(1), 0),))
	if t == 'unary_expression' and node.child_by_field_name('operator') \
	   is not None and node.child_by_field_name('operator').text == b'!':
		return Cond('!', (_cond(node.child_by_field_name('argument')),))
	if t == 'binary_expression':
		op = node.child_by_field_name('operator').text.decode()
		if op in ('&&', '||') + _COMPARISONS:
			return Cond(op, (_cond(node.child_by_field_name('left')),
					 _cond(node.child_by_field_name('right'))))
	if t == 'call_expression':
		fn = node.child_by_field_name('function')
		args = node.child_by_field_name('arguments')
		if fn is not None and fn.type == 'identifier' and args is not None \
		   and len(args.named_children) == 1 and \
		   args.named_children[0].type == 'identifier':
			return Cond('call', (fn.text.decode(),
					     args.named_children[0].text.decode()))
	return Cond('unknown', (text,))


def _is_field(parent: Any, field: str, node: Any) -> bool:
	child = parent.child_by_field_name(field)
	return child is not None and child.id == node.id


def guards(source: bytes, offset: int) -> List[Branch]:
	"""The branches of #if, #ifdef and #ifndef chains that enclose the
	byte at offset, innermost first."""
	node = _parser().parse(source).root_node.descendant_for_byte_range(
		offset, offset)
	out: List[Branch] = []
	while node is not None and node.parent is not None:
		parent = node.parent
		# In a branch's body, not in its condition or a later branch.
		if parent.type not in _CHAIN + ('preproc_else',) or \
		   _is_field(parent, 'alternative', node) or \
		   _is_field(parent, 'condition', node):
			node = parent
			continue
		own = None if parent.type == 'preproc_else' else _cond(parent)
		earlier: List[Cond] = []
		link = parent
		while link.parent is not None and link.parent.type in _CHAIN \
		      and _is_field(link.parent, 'alternative', link):
			link = link.parent
			earlier.append(_cond(link))
		out.append(Branch(tuple(reversed(earlier)), own))
		node = link
	return out


def of_operators(mutants: Sequence[Mutant],
		 operators: Sequence[str]) -> List[Mutant]:
	"""The mutants of these operators (OPERATORS' names)."""
	return [m for m in mutants if m.operator.split(':')[0] in operators]


def in_lines(mutants: Sequence[Mutant],
	     changed: Dict[str, Set[int]]) -> List[Mutant]:
	"""The mutants on changed lines (path -> line numbers)."""
	return [m for m in mutants if m.line in changed.get(m.path, set())]


def sample(mutants: Sequence[Mutant], n: int, seed: int) -> List[Mutant]:
	"""n mutants drawn with seed, kept in their order."""
	if n >= len(mutants):
		return list(mutants)
	chosen = set(random.Random(seed).sample(range(len(mutants)), n))
	return [m for i, m in enumerate(mutants) if i in chosen]


def shard(mutants: Sequence[Mutant], k: int, n: int) -> List[Mutant]:
	"""Shard k of n (0-based, as cargo-mutants --shard K/N): every n-th
	mutant from the k-th."""
	return list(mutants[k::n])
