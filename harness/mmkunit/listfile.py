# SPDX-License-Identifier: GPL-2.0
"""The project's list files (kernel/expected, kernel/pinned,
kernel/equivalent): one entry per line, its fields separated by '|',
'#' starting a comment."""

from __future__ import annotations

from typing import Iterator, List, Tuple


def entries(text: str, path: str) -> Iterator[Tuple[str, str, List[str]]]:
	"""(file:line, the line, its fields stripped) for each entry."""
	for lineno, raw in enumerate(text.splitlines(), 1):
		line = raw.split('#', 1)[0].strip()
		if line:
			yield (f'{path}:{lineno}', raw.strip(),
			       [p.strip() for p in line.split('|')])
