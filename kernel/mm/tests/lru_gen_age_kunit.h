/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Aging the multi-gen LRU of one lruvec, for the KUnit tests of other
 * files (mm/tests/workingset_kunit.h). It calls static functions of
 * mm/vmscan.c: the tests of that file include it at its end.
 */

#ifndef _MM_TESTS_LRU_GEN_AGE_KUNIT_H
#define _MM_TESTS_LRU_GEN_AGE_KUNIT_H

#include "memcg_kunit.h"

/*
 * Age @lruvec by one generation, as a write of "+ memcg_id node_id
 * max_gen" to the lru_gen debugfs file does (lru_gen_seq_write() and
 * run_aging()): with a reclaim state and an mm walk of the task's own,
 * no reclaim from its allocations, and the lruvec's swappiness. For the
 * workingset tests (mm/tests/workingset_kunit.h), on an lruvec of a memcg
 * of their own.
 */
bool mm_kunit_lru_gen_age(struct lruvec *lruvec)
{
	struct scan_control sc = {
		.may_writepage = true,
		.may_unmap = true,
		.may_swap = true,
		.reclaim_idx = MAX_NR_ZONES - 1,
		.gfp_mask = GFP_KERNEL,
		.proactive = true,
		.target_mem_cgroup = lruvec_memcg(lruvec),
	};
	unsigned int flags;
	bool aged = false;

	set_task_reclaim_state(current, &sc.reclaim_state);
	flags = memalloc_noreclaim_save();
	if (set_mm_walk(NULL, true))
		aged = try_to_inc_max_seq(lruvec,
					  READ_ONCE(lruvec->lrugen.max_seq),
					  get_swappiness(lruvec, &sc), false);
	clear_mm_walk();
	memalloc_noreclaim_restore(flags);
	set_task_reclaim_state(current, NULL);
	return aged;
}

#endif /* _MM_TESTS_LRU_GEN_AGE_KUNIT_H */
