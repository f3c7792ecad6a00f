# SPDX-License-Identifier: GPL-2.0
import os
import sys
import threading

from mmkunit.cli import main

code = main()
sys.stdout.flush()
sys.stderr.flush()
if threading.active_count() == 1:
	# Every file is closed and every child waited for by now: the
	# interpreter's teardown of its modules would only add a hundredth
	# of a second to each run.
	os._exit(code)
sys.exit(code)
