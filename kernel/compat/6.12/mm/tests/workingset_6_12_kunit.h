/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of 6.12's multi-gen LRU refault feedback, which works
 * otherwise than 7.3's by design (7.3 has "mm/mglru: rework workingset
 * protection", 6.14): the rows of 7.3's mm_workingset_mglru, which 6.12
 * fails (kernel/compat/6.12/expected), with what 6.12 does.
 *
 * 6.12 folds PG_workingset into a folio's refs: lru_gen_eviction() takes
 * refs as the refs field plus PG_workingset, counts the eviction in tier
 * order_base_2(refs + 1), and records refs - 1 (or 0) and, as the shadow's
 * workingset bit, whether refs is not 0. A refault from the oldest
 * generation gives back refs as the recorded refs plus that bit, counts in
 * the tier of those, and as WORKINGSET_ACTIVATE whatever the folio's
 * history. It restores the folio (PG_workingset, a full refs field,
 * WORKINGSET_RESTORE) if it refaults in a page fault or its refs reach
 * BIT(LRU_REFS_WIDTH) - 1; any other refaulting folio is left as it came.
 *
 * Part of the harness's 6.12 port only (kernel/compat/6.12), never sent
 * upstream: the port's patch (0005c) includes it at the end of
 * workingset_kunit.h, whose test functions its rows run through.
 */

#ifndef MM_TESTS_WORKINGSET_6_12_KUNIT_H
#define MM_TESTS_WORKINGSET_6_12_KUNIT_H

#include "lru_refs_6_12_kunit.h"

/*
 * The inputs of 7.3's rows and two of 6.12's own, where refs reach
 * BIT(LRU_REFS_WIDTH) - 1 = 3 without a fault. A refs field at
 * BIT(LRU_REFS_WIDTH) - 1 is 3.
 */
static const struct workingset_test_case workingset_6_12_test_cases[] = {
	{
		.desc = "file, never referenced: activated",
		.refs = 0,
		.evicted_tier = 0,
		.refaulted_tier = 0,
		.activated = true,
	},
	{
		.desc = "file, referenced once: activated",
		.refs = 1,
		.evicted_tier = 0,
		.refaulted_tier = 0,
		.activated = true,
	},
	{
		.desc = "file, 2 refs: tier 1, refs field left",
		.refs = 2,
		.evicted_tier = 1,
		.refaulted_tier = 1,
		.activated = true,
	},
	{
		.desc = "file, 3 refs: tier 2, not restored",
		.refs = 3,
		.evicted_tier = 2,
		.refaulted_tier = 2,
		.activated = true,
	},
	{
		.desc = "file, 3 refs, in a page fault: restored",
		.refs = 3,
		.in_fault = true,
		.evicted_tier = 2,
		.refaulted_tier = 2,
		.refs_field = 3,
		.restored = true,
		.activated = true,
	},
	{
		.desc = "file, 4 refs: restored",
		.refs = 4,
		.evicted_tier = 2,
		.refaulted_tier = 2,
		.refs_field = 3,
		.restored = true,
		.activated = true,
	},
	{
		.desc = "anon, 2 refs: tier 1",
		.anon = true,
		.refs = 2,
		.evicted_tier = 1,
		.refaulted_tier = 1,
		.activated = true,
	},
	{
		.desc = "file, workingset, 2 refs: tier 2, not restored",
		.refs = 2,
		.workingset = true,
		.evicted_tier = 2,
		.refaulted_tier = 2,
		.activated = true,
	},
	{
		.desc = "file, workingset, 3 refs: restored",
		.refs = 3,
		.workingset = true,
		.evicted_tier = 2,
		.refaulted_tier = 2,
		.refs_field = 3,
		.restored = true,
		.activated = true,
	},
	{
		.desc = "file, workingset, in a page fault: tier 1, restored",
		.refs = 0,
		.workingset = true,
		.in_fault = true,
		.evicted_tier = 1,
		.refaulted_tier = 1,
		.refs_field = 3,
		.restored = true,
		.activated = true,
	},
	{
		.desc = "anon, workingset, in a page fault: tier 1, restored",
		.anon = true,
		.refs = 1,
		.workingset = true,
		.in_fault = true,
		.evicted_tier = 1,
		.refaulted_tier = 1,
		.refs_field = 3,
		.restored = true,
		.activated = true,
	},
	{
		.desc = "order 2, 2 refs: counted by pages",
		.order = 2,
		.refs = 2,
		.evicted_tier = 1,
		.refaulted_tier = 1,
		.activated = true,
	},
	{
		.desc = "order 2, workingset: counted by pages",
		.order = 2,
		.refs = 0,
		.workingset = true,
		.evicted_tier = 1,
		.refaulted_tier = 1,
		.activated = true,
	},
};

KUNIT_ARRAY_PARAM_DESC(workingset_6_12_test, workingset_6_12_test_cases,
		       desc);

static void workingset_6_12_test_lru_gen_refault(struct kunit *test)
{
	lru_refs_6_12_need_width(test);
	workingset_test_lru_gen_refault(test);
}

static void workingset_6_12_test_lru_gen_refault_aged(struct kunit *test)
{
	lru_refs_6_12_need_width(test);
	workingset_test_lru_gen_refault_aged(test);
}

static struct kunit_case workingset_6_12_test_cases_list[] = {
	KUNIT_CASE_PARAM(workingset_6_12_test_lru_gen_refault,
			 workingset_6_12_test_gen_params),
	KUNIT_CASE_PARAM(workingset_6_12_test_lru_gen_refault_aged,
			 workingset_6_12_test_gen_params),
	{}
};

static struct kunit_suite workingset_6_12_test_suite = {
	.name = "mm_workingset_6_12",
	.test_cases = workingset_6_12_test_cases_list,
};

kunit_test_suite(workingset_6_12_test_suite);

#endif /* MM_TESTS_WORKINGSET_6_12_KUNIT_H */
