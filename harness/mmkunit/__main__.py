# SPDX-License-Identifier: GPL-2.0
import sys

from mmkunit.cli import main

sys.exit(main())
