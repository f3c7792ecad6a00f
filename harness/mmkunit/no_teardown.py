# SPDX-License-Identifier: GPL-2.0
"""python3 no_teardown.py SCRIPT ARGS...: runs SCRIPT with ARGS as its
command line, and ends the process as soon as it returns, without the
interpreter's teardown of its modules (its output flushed, its exit
status kept; every file it wrote closed by then, as kunit.py closes
them). kunit.py parse runs so beside each boot (runner._Parser): its
teardown took 10 to 15 ms, more than its parse of a suite's KTAP."""

import os
import runpy
import sys


def main() -> None:
	script = sys.argv[1]
	sys.argv = sys.argv[1:]
	# As python3 SCRIPT would have it: the script's directory first, and
	# not this one's.
	sys.path[0] = os.path.dirname(os.path.abspath(script))
	code = 0
	try:
		runpy.run_path(script, run_name='__main__')
	except SystemExit as e:
		code = e.code if isinstance(e.code, int) else \
			0 if e.code is None else 1
		if not isinstance(e.code, (int, type(None))):
			print(e.code, file=sys.stderr)
	sys.stdout.flush()
	sys.stderr.flush()
	os._exit(code)


if __name__ == '__main__':
	main()
