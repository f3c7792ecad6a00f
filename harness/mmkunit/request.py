# SPDX-License-Identifier: GPL-2.0
"""What each command is asked to do: one typed request per command.

cli.py parses the command line into one of these; its command's handler
(cli.COMMANDS) runs it. The requests hold the user's choices only; what
follows from them (the tree, the overlay, the kunit.py options) is worked
out by session.py.
"""

from __future__ import annotations

import dataclasses
import enum
import os
from pathlib import Path
from typing import Optional, Tuple, Union

EXIT_OK = 0
EXIT_TESTS_FAILED = 1
EXIT_ERROR = 2


class Scale(enum.Enum):
	"""Which replay scenarios run: the fast default, or those of the
	setup the change was measured with (a 20 GiB file, an 8 GiB guest)."""
	SMALL = 'small'
	SEED = 'seed'


@dataclasses.dataclass(frozen=True)
class Source:
	"""Where the kernel comes from, and where the harness keeps its state."""
	# None: $MM_KUNIT_CACHE, else $XDG_CACHE_HOME/mm-kunit.
	cache: Optional[Path] = None
	install: bool = True
	# The user's kernel tree, only read unless a command says otherwise.
	kernel: Optional[Path] = None
	# A Debian kernel of kernels.KERNELS; None: the command's own (the
	# default, or the older kernels for fixes).
	tree: Optional[str] = None
	# A kernel tarball instead of a Debian kernel's.
	tarball: Optional[Path] = None

	@property
	def names_kernel(self) -> bool:
		"""Whether the user chose the kernel (--tree, --kernel or
		--tarball), rather than leaving it to the command."""
		return bool(self.tree or self.kernel or self.tarball)


# Trees the mutants and the replay builds run in at once: one a CPU, two
# at most (a third tree's builds would only share the two CPUs).
WORKERS = min(2, os.cpu_count() or 1)


@dataclasses.dataclass(frozen=True)
class Build:
	"""How a kernel is built and run by kunit.py."""
	arch: str = 'um'
	jobs: int = os.cpu_count() or 1
	# None: a new directory under CACHE/results.
	results: Optional[Path] = None
	quiet: bool = False
	# kunit-configs/ARCH-CONFIG.config added, in a build directory of its own.
	config: Optional[str] = None
	ccache: bool = True
	# Arguments after --, for kunit.py run.
	kunit_args: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class RunRequest:
	source: Source = Source()
	build: Build = Build()
	in_place: bool = False
	without: Tuple[str, ...] = ()
	# A..B: each commit of the user's git tree in turn.
	each_commit: Optional[str] = None
	bisect: bool = False
	repeat: int = 1
	filter_glob: Optional[str] = None
	# The tests the port's list says the kernel fails with the series
	# are reported skipped if they fail, and failed if they pass (check's
	# run of a port: runner.held_to_list()).
	held_to_list: bool = False
	# Run again after each change and each Enter (watch.py).
	watch: bool = False


@dataclasses.dataclass(frozen=True)
class PrepareRequest:
	source: Source = Source()
	in_place: bool = False
	without: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class ExportRequest:
	source: Source = Source()
	output: Path = Path('series-out')
	# "NAME <EMAIL>"; None: git config user.name and user.email.
	author: Optional[str] = None
	# The project's local patches (kernel/patches/local) instead.
	local: bool = False
	# Rewrite kernel/patches with the new files each commit adds.
	refresh: bool = False
	# The commit the series applies to; None: the --kernel tree's HEAD,
	# if it is a git tree without changes.
	base: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class LintRequest:
	source: Source = Source()


@dataclasses.dataclass(frozen=True)
class MutantsRequest:
	source: Source = Source()
	build: Build = Build()
	workers: int = WORKERS
	# File name globs; none: every mutant, and the before-fix trees.
	# Generated: the pinned functions to mutate; none: all of them.
	mutants: Tuple[str, ...] = ()
	# Mutants generated from the pinned functions instead of kernel/mutants.
	generated: bool = False
	# Only the mutants on lines this commit range of the kernel changes.
	in_diff: Optional[str] = None
	# Only the mutants of these operators (mutagen.OPERATORS); none: all.
	operators: Tuple[str, ...] = ()
	# A sample of this many, drawn with seed.
	sample: Optional[int] = None
	seed: int = 0
	# (k, n): the k-th of n shares, 0-based.
	shard: Optional[Tuple[int, int]] = None
	# Shards' JSON files, merged into one table; nothing is run.
	merge: Tuple[Path, ...] = ()
	# Each mutant built into a kernel of its own, not many
	# into one (schemata.py).
	rebuild: bool = False


@dataclasses.dataclass(frozen=True)
class ReplayRequest:
	source: Source = Source()
	build: Build = Build()
	# Which replay (replay.REPLAYS): the mmap_miss change's by default.
	replay: str = 'mmap-miss'
	scale: Scale = Scale.SMALL
	workers: int = WORKERS
	# The builds held to bounds alone: no column of a further
	# configuration (replay.Replay.also), which has none.
	bounded: bool = False


@dataclasses.dataclass(frozen=True)
class FixesRequest:
	source: Source = Source()
	build: Build = Build()


@dataclasses.dataclass(frozen=True)
class CoverageRequest:
	source: Source = Source()
	build: Build = Build()


@dataclasses.dataclass(frozen=True)
class SelftestRequest:
	source: Source = Source()
	pytest_args: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class CheckRequest:
	source: Source = Source()
	build: Build = Build()
	# check --all: beyond what CI runs on each commit, the QEMU arches,
	# the 6.12 port, the older kernels' fixes and the replays' columns
	# without bounds.
	everything: bool = False


Request = Union[RunRequest, PrepareRequest, ExportRequest, LintRequest,
		MutantsRequest, ReplayRequest, FixesRequest, CoverageRequest,
		SelftestRequest, CheckRequest]
