/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the 7.3 mm KUnit suites use of 7.3 that 6.12 has under another name.
 *
 * Part of the harness's 6.12 port only (kernel/compat/6.12), never sent
 * upstream: with the port's patches (0005a, 0005b), it lets the 7.3
 * filemap and swap readahead suites build on Debian's linux-source-6.12.
 * Each shim gives 7.3's name to what 6.12 does the same way; none changes
 * what the code under test does. Where 6.12 does it otherwise, the tests
 * are listed in kernel/compat/6.12/expected.
 */

#ifndef MM_TESTS_KUNIT_COMPAT_H
#define MM_TESTS_KUNIT_COMPAT_H

#ifdef CONFIG_MM_FILEMAP_KUNIT_TEST
#include "filemap_names_compat.h"
#endif /* CONFIG_MM_FILEMAP_KUNIT_TEST */

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST
/* folio->swap (6.5) under 6.1's name, which swap_names_compat.h uses. */
#define folio_swap_entry(folio) ((folio)->swap)

#include "swap_io_compat.h"
#include "swap_names_compat.h"
#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */

#endif /* MM_TESTS_KUNIT_COMPAT_H */
