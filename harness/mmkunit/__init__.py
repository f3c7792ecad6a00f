# SPDX-License-Identifier: GPL-2.0
"""mm-kunit: a KUnit harness for Linux memory management."""
