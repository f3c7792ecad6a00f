/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 6.12 port's rows of a folio's refs (workingset_6_12_kunit.h,
 * vmscan_6_12_rows_kunit.h) work out their outcomes for LRU_REFS_WIDTH 2,
 * where a full refs field is 3; with another width they skip.
 *
 * Part of the harness's 6.12 port only (kernel/compat/6.12), never sent
 * upstream.
 */

#ifndef MM_TESTS_LRU_REFS_6_12_KUNIT_H
#define MM_TESTS_LRU_REFS_6_12_KUNIT_H

#include <kunit/test.h>

static inline void lru_refs_6_12_need_width(struct kunit *test)
{
	if (LRU_REFS_WIDTH != 2)
		kunit_skip(test, "the rows assume LRU_REFS_WIDTH 2, not %d",
			   LRU_REFS_WIDTH);
}

#endif /* MM_TESTS_LRU_REFS_6_12_KUNIT_H */
