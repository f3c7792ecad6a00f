/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 7.3's mm_vmscan_mglru tests, with rows of what 6.12's multi-gen LRU
 * does by design where 7.3's rows fail on it (kernel/compat/6.12/expected;
 * 7.3 has "mm/mglru: rework workingset protection", 6.14, and the
 * refault controller's gains changed with it). Each outcome is worked
 * out from 6.12's code:
 *
 *  - folio_lru_refs() is the refs field plus PG_workingset, whatever
 *    PG_referenced says, and the tier is order_base_2(refs + 1);
 *  - an access through folio_mark_accessed() sets PG_referenced, then
 *    PG_workingset, and only then counts the refs field up;
 *  - sort_folio() moves a protected folio as it moves an ineligible one,
 *    to the tail of the next generation (VMSCAN_TEST_INELIGIBLE's
 *    place), clearing PG_referenced, PG_workingset and the refs field,
 *    and counts it in protected[][type][tier - 1]: tier t's count is the
 *    harness's protected[t] (the port's 0005f); lru_gen_add_folio()
 *    clears an active folio's refs, so a promoted folio keeps only
 *    PG_workingset;
 *  - get_type_to_scan() compares the two types' first tiers alone, and
 *    leaves the swappiness extremes to isolate_folios();
 *  - get_tier_idx() holds each tier to tier 0 at gains 1:2 (7.3: 2:3), and
 *    tier 0's total is its evictions alone (6.12 counts no protected
 *    folio in tier 0).
 *
 * Part of the harness's 6.12 port only (kernel/compat/6.12), never sent
 * upstream: the port's patch (0005f) includes it at the end of
 * vmscan_kunit.h, whose test functions its rows run through.
 */

#ifndef MM_TESTS_VMSCAN_6_12_ROWS_KUNIT_H
#define MM_TESTS_VMSCAN_6_12_ROWS_KUNIT_H

#include "lru_refs_6_12_kunit.h"

/* A refs field of BIT(LRU_REFS_WIDTH) - 1 is 3 in these rows. */
static const struct vmscan_test_refs_case vmscan_6_12_test_refs_cases[] = {
	{
		.desc = "refs field without PG_referenced: counted",
		.flags = 0,
		.field = 1,
		.refs = 1,
		.tier = 1,
	},
	{
		.desc = "PG_referenced alone: no refs, tier 0",
		.flags = BIT(PG_referenced),
		.field = 0,
		.refs = 0,
		.tier = 0,
	},
	{
		.desc = "PG_referenced and 1: 1 ref, tier 1",
		.flags = BIT(PG_referenced),
		.field = 1,
		.refs = 1,
		.tier = 1,
	},
	{
		.desc = "PG_referenced and 2: 2 refs, tier 2",
		.flags = BIT(PG_referenced),
		.field = 2,
		.refs = 2,
		.tier = 2,
	},
	{
		.desc = "PG_referenced and 3: 3 refs, tier 2",
		.flags = BIT(PG_referenced),
		.field = 3,
		.refs = 3,
		.tier = 2,
	},
	{
		.desc = "PG_workingset: 1 ref, tier 1",
		.flags = BIT(PG_workingset),
		.field = 0,
		.refs = 1,
		.tier = 1,
	},
	{
		.desc = "PG_workingset, PG_referenced and 1: 2 refs, tier 2",
		.flags = BIT(PG_workingset) | BIT(PG_referenced),
		.field = 1,
		.refs = 2,
		.tier = 2,
	},
	{
		.desc = "PG_workingset and 3: 4 refs, the last tier",
		.flags = BIT(PG_workingset),
		.field = 3,
		.refs = 4,
		.tier = MAX_NR_TIERS - 1,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_6_12_test_refs, vmscan_6_12_test_refs_cases,
		       desc);

static const struct vmscan_test_access_case vmscan_6_12_test_access_cases[] = {
	{
		.desc = "referenced: the second access sets PG_workingset",
		.flags = BIT(PG_referenced),
		.after = BIT(PG_referenced) | BIT(PG_workingset),
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_6_12_test_access,
		       vmscan_6_12_test_access_cases, desc);

/*
 * A row's refs are 7.3's (PG_referenced and the field one below them):
 * 6.12 reads refs 2 as 1, tier 1; refs 3 as 2, tier 2; full (4) as 3,
 * tier 2, and with PG_workingset as 4, tier 3.
 */
static const struct vmscan_test_sort_case vmscan_6_12_test_sort_cases[] = {
	{
		.desc = "promoted, no refs: head of its generation",
		.refs = 0,
		.promoted = true,
		.tier_idx = 0,
		.result = VMSCAN_TEST_PROMOTED,
		.tier = -1,
	},
	{
		.desc = "tier 1 above tier_idx 0: protected, at the tail",
		.refs = 2,
		.tier_idx = 0,
		.result = VMSCAN_TEST_INELIGIBLE,
		.tier = 1,
	},
	{
		.desc = "tier 2 above tier_idx 1: protected, at the tail",
		.refs = 3,
		.tier_idx = 1,
		.result = VMSCAN_TEST_INELIGIBLE,
		.tier = 2,
	},
	{
		.desc = "anon, tier 1 above tier_idx 0: protected, at the tail",
		.anon = true,
		.refs = 2,
		.tier_idx = 0,
		.result = VMSCAN_TEST_INELIGIBLE,
		.tier = 1,
	},
	{
		.desc = "order 2, tier 1 above tier_idx 0: protected, 4 pages",
		.order = 2,
		.refs = 2,
		.tier_idx = 0,
		.result = VMSCAN_TEST_INELIGIBLE,
		.tier = 1,
	},
	{
		.desc = "workingset, 2 refs: tier 2 at tier_idx 2, left",
		.refs = 2,
		.workingset = true,
		.tier_idx = 2,
		.result = VMSCAN_TEST_LEFT,
		.tier = -1,
	},
	{
		.desc = "refs full without workingset, tier_idx 1: tier 2",
		.refs = VMSCAN_TEST_REFS_FULL,
		.tier_idx = 1,
		.result = VMSCAN_TEST_INELIGIBLE,
		.tier = 2,
	},
	{
		.desc = "protected before ineligible",
		.refs = 2,
		.tier_idx = 0,
		.below_zone = true,
		.result = VMSCAN_TEST_INELIGIBLE,
		.tier = 1,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_6_12_test_sort, vmscan_6_12_test_sort_cases,
		       desc);

/*
 * 6.12's get_type_to_scan() compares the first tiers alone, anon's (the
 * setpoint, gain swappiness) against file's (gain MAX_SWAPPINESS -
 * swappiness), and leaves the swappiness extremes to isolate_folios().
 */
static const struct vmscan_test_type_case vmscan_6_12_test_type_cases[] = {
	{
		.desc = "swappiness 1, file refaults far more: anon",
		.anon = {
			.avg_refaulted = { 0 },
			.avg_total = { 10000 },
		},
		.file = {
			.avg_refaulted = { 9000 },
			.avg_total = { 10000 },
		},
		.swappiness = 1,
		.type = LRU_GEN_ANON,
	},
	{
		.desc = "swappiness 200, file refaults too few to judge: file",
		.anon = {
			.avg_refaulted = { 9999 },
			.avg_total = { 10000 - MIN_LRU_BATCH },
		},
		.file = {
			.avg_refaulted = { MIN_LRU_BATCH - 1 },
			.avg_total = { 12736 },
		},
		.swappiness = 200,
		.type = LRU_GEN_FILE,
	},
	{
		.desc = "file's tier 0 refaults too few to judge: file",
		.anon = {
			.avg_refaulted = { 100 },
			.avg_total = { 1000 },
		},
		.file = {
			.avg_refaulted = { 50, 1000, 1000, 1000 },
			.avg_total = { 1000, 1000, 1000, 1000 },
		},
		.swappiness = 100,
		.type = LRU_GEN_FILE,
	},
	/* file's 100 of 1000 is above anon's 100 + 1 of 1000 + MIN_LRU_BATCH */
	{
		.desc = "tier 0 of each at the same rate: anon",
		.anon = {
			.avg_refaulted = { 100, 1000, 1000, 1000 },
			.avg_total = { 1000, 1000, 1000, 1000 },
		},
		.file = {
			.avg_refaulted = { 100 },
			.avg_total = { 1000 },
		},
		.swappiness = 100,
		.type = LRU_GEN_ANON,
	},
	{
		.desc = "current refaults count, tier 0 has no protected: file",
		.anon = {
			.refaulted = { 1000 },
			.protected = { 9000 },
			.evicted = { 1000 },
		},
		.file = {
			.refaulted = { 1000 },
			.evicted = { 5000 },
		},
		.swappiness = 100,
		.type = LRU_GEN_FILE,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_6_12_test_type, vmscan_6_12_test_type_cases,
		       desc);

/*
 * With sp 1999 of 10000 - MIN_LRU_BATCH at gain 1, a tier of 10000 at
 * gain 2 may refault 4000 times.
 */
static const struct vmscan_test_tier_case vmscan_6_12_test_tier_cases[] = {
	{
		.desc = "tier 1 at twice the setpoint's rate: evicted",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 1999, 4000 },
			.avg_total = { 10000 - MIN_LRU_BATCH, 10000 },
		},
		.tier_idx = MAX_NR_TIERS - 1,
	},
	{
		.desc = "tier 1 one refault above: tier 0 last",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 1999, 4001 },
			.avg_total = { 10000 - MIN_LRU_BATCH, 10000 },
		},
		.tier_idx = 0,
	},
	/*
	 * Tier 0 is only the setpoint: judged against itself at gains 1:2,
	 * 1000 refaults of 60 would not be positive (7.3's row of 100 of
	 * 100 is, at these gains).
	 */
	{
		.desc = "tier 0 refaulting more than it evicts is no tier above it",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 1000 },
			.avg_total = { 60 },
		},
		.tier_idx = MAX_NR_TIERS - 1,
	},
	{
		.desc = "tier 0's evictions are its total",
		.type = LRU_GEN_ANON,
		.counts = {
			.avg_refaulted = { 1999, 4001 },
			.avg_total = { 0, 10000 },
			.evicted = { 10000 - MIN_LRU_BATCH },
		},
		.tier_idx = 0,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_6_12_test_tier, vmscan_6_12_test_tier_cases,
		       desc);

static void vmscan_6_12_test_refs_tier(struct kunit *test)
{
	lru_refs_6_12_need_width(test);
	vmscan_test_refs_tier(test);
}

static void vmscan_6_12_test_sort_folio(struct kunit *test)
{
	lru_refs_6_12_need_width(test);
	vmscan_test_sort_folio(test);
}

static void vmscan_6_12_test_sort_folio_aged(struct kunit *test)
{
	lru_refs_6_12_need_width(test);
	vmscan_test_sort_folio_aged(test);
}

static struct kunit_case vmscan_6_12_test_rows_cases[] = {
	KUNIT_CASE_PARAM(vmscan_6_12_test_refs_tier,
			 vmscan_6_12_test_refs_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_mark_accessed_once,
			 vmscan_6_12_test_access_gen_params),
	KUNIT_CASE_PARAM(vmscan_6_12_test_sort_folio,
			 vmscan_6_12_test_sort_gen_params),
	KUNIT_CASE_PARAM(vmscan_6_12_test_sort_folio_aged,
			 vmscan_6_12_test_sort_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_type_to_scan,
			 vmscan_6_12_test_type_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_tier_idx, vmscan_6_12_test_tier_gen_params),
	{}
};

static struct kunit_suite vmscan_6_12_test_rows_suite = {
	.name = "mm_vmscan_6_12_rows",
	.test_cases = vmscan_6_12_test_rows_cases,
};

kunit_test_suite(vmscan_6_12_test_rows_suite);

#endif /* MM_TESTS_VMSCAN_6_12_ROWS_KUNIT_H */
