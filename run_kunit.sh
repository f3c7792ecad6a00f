#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a kernel with the project's mm KUnit suites and run them.
# See README.md, or ./run_kunit.sh --help.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The harness is Python: the distribution's own, whose packages (pytest,
# mypy) the harness installs with apt, unless MM_KUNIT_PYTHON names
# another; python3 from PATH where the system has none. A wrapper in
# PATH (pyenv's shim) would cost each run a tenth of a second before
# Python starts. Everything else it needs, it installs itself.
python=${MM_KUNIT_PYTHON:-}
if [ -z "$python" ] && [ -x /usr/bin/python3 ]; then
	python=/usr/bin/python3
fi
if [ -z "$python" ] && ! command -v python3 >/dev/null 2>&1; then
	cmd="apt-get update && apt-get install -y --no-install-recommends python3"
	if [ "$(id -u)" -ne 0 ]; then
		echo "mm-kunit: python3 is missing. Install it as root with:" >&2
		echo "  $cmd" >&2
		exit 2
	fi
	echo "[mm-kunit] installing python3 from Debian" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends python3 >/dev/null
fi

# Python's compiled modules, the harness's and kunit.py's, in the
# harness's cache: each start then loads them instead of compiling them
# again (0.1 s of a re-run where PYTHONDONTWRITEBYTECODE is set), and
# none is written into the repository or a kernel tree, which leaves
# PYTHONDONTWRITEBYTECODE nothing to keep clean.
base=${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}
cache=${MM_KUNIT_CACHE:-${base:+$base/mm-kunit}}
if [ -n "$cache" ]; then
	export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$cache/pycache}"
	unset PYTHONDONTWRITEBYTECODE
fi

PYTHONPATH="$here/harness${PYTHONPATH:+:$PYTHONPATH}" \
	exec "${python:-python3}" -m mmkunit "$@"
