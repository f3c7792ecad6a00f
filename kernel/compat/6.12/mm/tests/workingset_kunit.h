/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the multi-gen LRU's refault feedback in mm/workingset.c.
 *
 * This file is included at the bottom of mm/workingset.c so that the tests
 * can call its static functions.
 *
 * A refaulting folio is a new folio, locked, not yet on an LRU, with the
 * shadow entry its evicted predecessor left in the page cache. The tests
 * make that shadow with the real pack_shadow() from what eviction records
 * (the generation, the access count, PG_workingset) and hand both to the
 * real lru_gen_refault(), as workingset_refault() does. The folio's lruvec
 * is its node's: the tests restore every counter of it that the call moved.
 *
 * Suites:
 *  - mm_workingset_mglru: which refaults lru_gen_refault() counts in which
 *    tier, and which it takes for a stall: a folio whose access count had
 *    reached BIT(LRU_REFS_WIDTH) - 1, or that refaults in a page fault,
 *    gets PG_workingset and its access count back, and
 *    WORKINGSET_RESTORE_{ANON,FILE} counts it.
 */

#ifdef CONFIG_MM_VMSCAN_KUNIT_TEST

#include <kunit/test.h>

struct wt_case {
	const char *desc;
	bool anon;		/* PG_swapbacked */
	/*
	 * What eviction recorded: BIT(LRU_REFS_WIDTH) - 1 - @refs_below, or
	 * no refs (WT_NO_REFS) ...
	 */
	int refs_below;
	/* ... and PG_workingset */
	bool workingset;
	bool in_fault;		/* lru_gen_in_fault(): a page fault */
	bool recent;		/* evicted from the current oldest generation */
	/* expected */
	bool restored;
};

/* LRU_REFS_WIDTH is no constant expression: a row cannot name 0 refs. */
#define WT_NO_REFS	(-1)

/*
 * A refault of a folio evicted from the current oldest generation counts
 * in the tier of its refs, the recorded access count plus PG_workingset,
 * and as an activation (WORKINGSET_ACTIVATE). It is a stall, and the folio
 * gets PG_workingset and a full access count, if those refs reach
 * BIT(LRU_REFS_WIDTH) - 1 (sort_folio() would have protected it) or if it
 * refaults in a page fault. A refault from an older generation is counted
 * as a refault (WORKINGSET_REFAULT, as every refault is) and nothing else.
 */
static const struct wt_case wt_cases[] = {
	{
		.desc = "refs at BIT(LRU_REFS_WIDTH) - 1: restored",
		.refs_below = 0, .recent = true,
		.restored = true,
	},
	{
		.desc = "refs one below, PG_workingset makes up: restored",
		.refs_below = 1, .workingset = true, .recent = true,
		.restored = true,
	},
	{
		.desc = "refs one below: not a stall",
		.refs_below = 1, .recent = true,
		.restored = false,
	},
	{
		.desc = "refs one below, in a page fault: restored",
		.refs_below = 1, .in_fault = true, .recent = true,
		.restored = true,
	},
	{
		.desc = "no refs: tier 0, not a stall",
		.refs_below = WT_NO_REFS, .recent = true,
		.restored = false,
	},
	{
		.desc = "anon, refs at BIT(LRU_REFS_WIDTH) - 1: restored",
		.anon = true, .refs_below = 0, .recent = true,
		.restored = true,
	},
	{
		.desc = "evicted from an older generation: not counted",
		.refs_below = 0, .workingset = true, .recent = false,
		.restored = false,
	},
};

KUNIT_ARRAY_PARAM_DESC(wt, wt_cases, desc);

/* The refs eviction recorded, as the row gives them. */
static int wt_refs(const struct wt_case *c)
{
	if (c->refs_below == WT_NO_REFS)
		return 0;
	return BIT(LRU_REFS_WIDTH) - 1 - c->refs_below;
}

/*
 * The node's count of @item, exactly: its total and this CPU's part not
 * yet folded into it. The caller keeps preemption off, so that the part
 * stays this CPU's and no fold of it runs meanwhile.
 */
static long wt_node_stat(struct pglist_data *pgdat, enum node_stat_item item)
{
	long x = atomic_long_read(&pgdat->vm_stat[item]);

#ifdef CONFIG_SMP
	x += __this_cpu_read(pgdat->per_cpu_nodestats->vm_node_stat_diff[item]);
#endif
	return x;
}

/* What lru_gen_refault() moved on the node's lruvec, to be undone. */
struct wt_moved {
	struct lruvec *lruvec;
	int type, hist;
	long restore, refault, activate;
	long refaulted[MAX_NR_TIERS];
};

/*
 * Add @sign times the counters lru_gen_refault() may move: -1 before the
 * call and +1 after it leave what it moved. Preemption is off.
 */
static void wt_count(struct wt_moved *m, struct pglist_data *pgdat, int sign)
{
	struct lru_gen_folio *lrugen = &m->lruvec->lrugen;
	int tier;

	m->restore += sign * wt_node_stat(pgdat, WORKINGSET_RESTORE_BASE + m->type);
	m->refault += sign * wt_node_stat(pgdat, WORKINGSET_REFAULT_BASE + m->type);
	m->activate += sign * wt_node_stat(pgdat, WORKINGSET_ACTIVATE_BASE + m->type);
	for (tier = 0; tier < MAX_NR_TIERS; tier++)
		m->refaulted[tier] += sign *
			atomic_long_read(&lrugen->refaulted[m->hist][m->type][tier]);
}

static void wt_undo(void *data)
{
	struct wt_moved *m = data;
	struct lru_gen_folio *lrugen = &m->lruvec->lrugen;
	int tier;

	mod_lruvec_state(m->lruvec, WORKINGSET_RESTORE_BASE + m->type, -m->restore);
	mod_lruvec_state(m->lruvec, WORKINGSET_REFAULT_BASE + m->type, -m->refault);
	mod_lruvec_state(m->lruvec, WORKINGSET_ACTIVATE_BASE + m->type, -m->activate);
	for (tier = 0; tier < MAX_NR_TIERS; tier++)
		atomic_long_sub(m->refaulted[tier],
				&lrugen->refaulted[m->hist][m->type][tier]);
}

static void wt_put_folio(void *folio)
{
	folio_put(folio);
}

/*
 * Refault a new folio as the row describes; returns what the call moved.
 * The folio is the test's until it ends.
 */
static struct wt_moved *wt_refault(struct kunit *test, const struct wt_case *c,
				   struct folio **foliop)
{
	int refs = wt_refs(c);
	struct lru_gen_folio *lrugen;
	struct pglist_data *pgdat;
	unsigned long token, seq;
	struct wt_moved *moved;
	struct folio *folio;
	void *shadow;

	moved = kunit_kzalloc(test, sizeof(*moved), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, moved);
	folio = folio_alloc(GFP_KERNEL, 0);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, wt_put_folio, folio));
	if (c->anon)
		__folio_set_swapbacked(folio);
	pgdat = folio_pgdat(folio);
	moved->lruvec = folio_lruvec(folio);
	moved->type = folio_is_file_lru(folio);
	lrugen = &moved->lruvec->lrugen;
	seq = READ_ONCE(lrugen->min_seq[moved->type]) + (c->recent ? 0 : 1);
	moved->hist = lru_hist_from_seq(READ_ONCE(lrugen->min_seq[moved->type]));
	/* What lru_gen_eviction() records: the generation and refs - 1. */
	token = (seq << LRU_REFS_WIDTH) | refs;
	shadow = pack_shadow(mem_cgroup_id(folio_memcg(folio)), pgdat, token,
			     c->workingset);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, wt_undo, moved));

	/* As workingset_refault(): the new folio is locked. */
	folio_lock(folio);
	preempt_disable();
	wt_count(moved, pgdat, -1);
	current->in_lru_fault = c->in_fault;
	lru_gen_refault(folio, shadow);
	current->in_lru_fault = false;
	wt_count(moved, pgdat, 1);
	preempt_enable();
	folio_unlock(folio);
	*foliop = folio;
	return moved;
}

/* The stall: PG_workingset, the access count, and the tier counted. */
static void lru_gen_refault_test(struct kunit *test)
{
	const struct wt_case *c = test->param_value;
	int refs = wt_refs(c);
	unsigned long full = c->restored ? LRU_REFS_MASK : 0, count;
	struct wt_moved *moved;
	struct folio *folio;
	int tier;

	moved = wt_refault(test, c, &folio);

	count = READ_ONCE(folio->flags) & LRU_REFS_MASK;
	KUNIT_EXPECT_EQ(test, c->restored, folio_test_workingset(folio));
	KUNIT_EXPECT_EQ_MSG(test, full, count,
			    "access count (LRU_REFS_WIDTH %d)", LRU_REFS_WIDTH);
	KUNIT_EXPECT_EQ_MSG(test, c->restored ? 1L : 0L, moved->restore,
			    "WORKINGSET_RESTORE counted");
	/* The tier of refs + PG_workingset, order_base_2(refs + 1). */
	refs += c->workingset;
	for (tier = 0; tier < MAX_NR_TIERS; tier++)
		KUNIT_EXPECT_EQ_MSG(test,
				    c->recent && tier == order_base_2(refs + 1) ? 1L : 0L,
				    moved->refaulted[tier],
				    "refaults counted in tier %d (refs %d)", tier, refs);
}

/* Every refault is a refault; one from the oldest generation activates. */
static void lru_gen_refault_stats_test(struct kunit *test)
{
	const struct wt_case *c = test->param_value;
	struct wt_moved *moved;
	struct folio *folio;

	moved = wt_refault(test, c, &folio);

	KUNIT_EXPECT_EQ_MSG(test, 1L, moved->refault,
			    "WORKINGSET_REFAULT counted");
	KUNIT_EXPECT_EQ_MSG(test, c->recent ? 1L : 0L, moved->activate,
			    "WORKINGSET_ACTIVATE counted");
}

static struct kunit_case wt_cases_list[] = {
	KUNIT_CASE_PARAM(lru_gen_refault_test, wt_gen_params),
	KUNIT_CASE_PARAM(lru_gen_refault_stats_test, wt_gen_params),
	{}
};

static struct kunit_suite wt_suite = {
	.name = "mm_workingset_mglru",
	.test_cases = wt_cases_list,
};

kunit_test_suite(wt_suite);

#endif /* CONFIG_MM_VMSCAN_KUNIT_TEST */
