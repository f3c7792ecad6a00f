/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the 7.3 mm KUnit suites use of 7.3 that 7.2 does not have.
 *
 * Part of the harness's 7.2 port only (kernel/compat/7.2), never sent
 * upstream: with the port's patch (0003a), it lets the 7.3 test files
 * build on Debian's linux-source-7.2. Each shim gives 7.3's name to what
 * 7.2 does the same way, but NRSWPIN, which only lets its rows build; none
 * changes what the code under test does. Where 7.2 does it otherwise, and
 * for the rows of NRSWPIN, the tests are listed in
 * kernel/compat/7.2/expected.
 */

#ifndef MM_TESTS_KUNIT_COMPAT_H
#define MM_TESTS_KUNIT_COMPAT_H

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST
#include "swap_io_compat.h"

/*
 * 7.3 counts each submission to a swap device in NRSWPIN; 7.2 counts no
 * submissions, only pages (PSWPIN), which this reads in its place so that
 * the rows build. The rows that count submissions fail on 7.2 for that
 * (kernel/compat/7.2/expected).
 */
#define NRSWPIN PSWPIN
#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */

/*
 * MM_TESTS_LRU_COST is left undefined: 7.2 has no struct lru_cost, and
 * the tests of 7.3's scan cost model are left out (the port's 0003a).
 */

#endif /* MM_TESTS_KUNIT_COMPAT_H */
