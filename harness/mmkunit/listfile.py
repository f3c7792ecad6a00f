# SPDX-License-Identifier: GPL-2.0
"""The project's list files (kernel/expected, kernel/pinned,
kernel/equivalent, kernel/untaken): one entry per line, its fields
separated by a '|' with a blank on each side, so that a field may hold a
'|' of its own (a mutant id's `lor:||`); '#' starts a comment."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, List, Tuple, Type

_SEPARATOR = re.compile(r'\s\|\s')


def read_text(path: Path, error: Type[Exception]) -> str:
	"""The list file's text; error, with the file and why, if it cannot
	be read."""
	try:
		return path.read_text()
	except OSError as e:
		raise error(f'{path}: {e.strerror}') from None


def entries(text: str, path: str) -> Iterator[Tuple[str, str, List[str]]]:
	"""(file:line, the line, its fields stripped) for each entry."""
	for lineno, raw in enumerate(text.splitlines(), 1):
		line = raw.split('#', 1)[0].strip()
		if line:
			yield (f'{path}:{lineno}', raw.strip(),
			       [p.strip() for p in _SEPARATOR.split(line)])
