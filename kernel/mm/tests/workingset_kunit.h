/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the multi-gen LRU's refault feedback in mm/workingset.c.
 *
 * This file is included at the end of mm/workingset.c so that the tests
 * can call its static functions.
 *
 * A test evicts a folio with the real lru_gen_eviction(), which counts the
 * eviction and returns the shadow entry reclaim would leave in the page
 * cache, then refaults a new folio with that shadow through the real
 * lru_gen_refault(), as workingset_refault() does. Both folios are real
 * folios, locked as the callers have them, and never on an LRU. They are
 * charged as page cache is to a memory cgroup of the test's own, so that
 * the lruvec they evict from and refault into, and whose generations the
 * test ages, is the test's alone. Without a memory controller the only
 * lruvec is the node's: the test takes the eviction and refault counts it
 * caused off its lrugen again, since reclaim reads them when the
 * multi-gen LRU is on. The node's WORKINGSET_* event counters keep the
 * events: those are monotonic, and a reader of them takes differences.
 *
 * These functions run only with the multi-gen LRU on; whether it is on
 * for the system changes nothing they read of a lruvec no reclaim visits.
 *
 * Suites:
 *  - mm_workingset_mglru: what lru_gen_refault() counts, in which tier,
 *    and which access history it gives the refaulting folio back.
 */

#ifdef CONFIG_MM_VMSCAN_KUNIT_TEST

#include <kunit/test.h>

#include "memcg_kunit.h"
#include "mm_kunit.h"

struct workingset_test_case {
	const char *desc;
	bool anon;		/* swap cache rather than page cache */
	unsigned int order;
	int refs;		/* folio_lru_refs() at eviction */
	bool workingset;	/* PG_workingset at eviction */
	bool in_fault;		/* lru_gen_in_fault() at refault */
	/* expected */
	int evicted_tier;
	int refaulted_tier;
	unsigned long refs_field;	/* of the refaulting folio */
	bool restored;		/* PG_workingset back, WORKINGSET_RESTORE */
	bool activated;		/* WORKINGSET_ACTIVATE */
};

/*
 * lru_gen_eviction() counts the folio's pages in evicted[][type][tier] of
 * the tier of its refs and PG_workingset, and records refs - 1 (or 0)
 * and PG_workingset. A refault from the window of generations is counted
 * in refaulted[][type][tier] of the tier of the recorded refs + 1 and
 * PG_workingset. A folio evicted with PG_workingset gets it back and
 * counts as WORKINGSET_RESTORE, and as WORKINGSET_ACTIVATE if it refaults
 * in a page fault; any other gets the recorded refs back in its refs
 * field. Every refault counts as WORKINGSET_REFAULT.
 */
static const struct workingset_test_case workingset_test_cases[] = {
	{
		.desc = "file, never referenced",
		.refs = 0,
		.evicted_tier = 0,
		.refaulted_tier = 0,
		.refs_field = 0,
	},
	{
		.desc = "file, referenced once",
		.refs = 1,
		.evicted_tier = 0,
		.refaulted_tier = 0,
		.refs_field = 0,
	},
	{
		.desc = "file, 2 refs: tier 1, refs field 1",
		.refs = 2,
		.evicted_tier = 1,
		.refaulted_tier = 1,
		.refs_field = 1,
	},
	{
		.desc = "file, 3 refs: tier 2, refs field 2",
		.refs = 3,
		.evicted_tier = 2,
		.refaulted_tier = 2,
		.refs_field = 2,
	},
	{
		.desc = "file, 3 refs, in a page fault: not activated",
		.refs = 3,
		.in_fault = true,
		.evicted_tier = 2,
		.refaulted_tier = 2,
		.refs_field = 2,
	},
	{
		.desc = "anon, 2 refs: tier 1, refs field 1",
		.anon = true,
		.refs = 2,
		.evicted_tier = 1,
		.refaulted_tier = 1,
		.refs_field = 1,
	},
	{
		.desc = "file, workingset, 2 refs: restored, last tier",
		.refs = 2,
		.workingset = true,
		.evicted_tier = MAX_NR_TIERS - 1,
		.refaulted_tier = MAX_NR_TIERS - 1,
		.refs_field = 0,
		.restored = true,
	},
	{
		.desc = "file, workingset, in a page fault: activated",
		.refs = 0,
		.workingset = true,
		.in_fault = true,
		.evicted_tier = MAX_NR_TIERS - 1,
		.refaulted_tier = MAX_NR_TIERS - 1,
		.refs_field = 0,
		.restored = true,
		.activated = true,
	},
	{
		.desc = "anon, workingset, in a page fault: activated",
		.anon = true,
		.refs = 1,
		.workingset = true,
		.in_fault = true,
		.evicted_tier = MAX_NR_TIERS - 1,
		.refaulted_tier = MAX_NR_TIERS - 1,
		.refs_field = 0,
		.restored = true,
		.activated = true,
	},
	{
		.desc = "order 2, 2 refs: counted by pages",
		.order = 2,
		.refs = 2,
		.evicted_tier = 1,
		.refaulted_tier = 1,
		.refs_field = 1,
	},
	{
		.desc = "order 2, workingset: counted by pages",
		.order = 2,
		.refs = 0,
		.workingset = true,
		.evicted_tier = MAX_NR_TIERS - 1,
		.refaulted_tier = MAX_NR_TIERS - 1,
		.refs_field = 0,
		.restored = true,
	},
};

KUNIT_ARRAY_PARAM_DESC(workingset_test, workingset_test_cases, desc);

struct workingset_test_folio {
	struct folio *folio;
	unsigned long flags;	/* as allocated, put back before freeing */
};

static void workingset_test_folio_free(void *data)
{
	struct workingset_test_folio *tf = data;

	WRITE_ONCE(tf->folio->flags.f, tf->flags);
	folio_put(tf->folio);
}

/*
 * The memcg the test's folios are charged to: one of the test's own, or
 * none (the root's charge, the node's lruvec) without a memory controller.
 */
static struct mem_cgroup *workingset_test_memcg(struct kunit *test)
{
	return mem_cgroup_disabled() ? NULL : mm_kunit_memcg_create(test);
}

/*
 * A new folio of the case's order and type on node @nid (NUMA_NO_NODE:
 * where the task's policy puts it), charged as page cache is to @memcg.
 */
static struct folio *
workingset_test_folio_create(struct kunit *test,
			     const struct workingset_test_case *c, int nid,
			     struct mem_cgroup *memcg)
{
	struct workingset_test_folio *tf;

	tf = kunit_kzalloc(test, sizeof(*tf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tf);
	if (nid == NUMA_NO_NODE)
		tf->folio = folio_alloc(GFP_KERNEL, c->order);
	else
		tf->folio = __folio_alloc_node(GFP_KERNEL | __GFP_THISNODE,
					       c->order, nid);
	KUNIT_ASSERT_NOT_NULL(test, tf->folio);
	tf->flags = READ_ONCE(tf->folio->flags.f);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  workingset_test_folio_free,
						  tf));
	KUNIT_ASSERT_EQ(test, 0, mm_kunit_memcg_charge(tf->folio, memcg));
	if (c->anon)
		WRITE_ONCE(tf->folio->flags.f, tf->flags |
			   BIT(PG_swapbacked) | BIT(PG_swapcache));
	return tf->folio;
}

/* Counts of one type of the lruvec's current history generation. */
struct workingset_test_counts {
	struct lruvec *lruvec;
	int type;
	int hist;
	long evicted[MAX_NR_TIERS];
	long refaulted[MAX_NR_TIERS];
};

/* Add @sign times the counts now: -1 before a call and 1 after it. */
static void workingset_test_count(struct workingset_test_counts *n, int sign)
{
	struct lru_gen_folio *lrugen = &n->lruvec->lrugen;
	int tier;

	for (tier = 0; tier < MAX_NR_TIERS; tier++) {
		n->evicted[tier] += sign *
			atomic_long_read(&lrugen->evicted[n->hist][n->type][tier]);
		n->refaulted[tier] += sign *
			atomic_long_read(&lrugen->refaulted[n->hist][n->type][tier]);
	}
}

/* Take the counts the test caused off the lruvec again. */
static void workingset_test_uncount(void *data)
{
	struct workingset_test_counts *n = data;
	struct lru_gen_folio *lrugen = &n->lruvec->lrugen;
	int tier;

	for (tier = 0; tier < MAX_NR_TIERS; tier++) {
		atomic_long_sub(n->evicted[tier],
				&lrugen->evicted[n->hist][n->type][tier]);
		atomic_long_sub(n->refaulted[tier],
				&lrugen->refaulted[n->hist][n->type][tier]);
	}
}

/*
 * Counts of @type on @lruvec, from its current history generation on,
 * taken off the lruvec again when the test ends. The lruvec is one of the
 * memcg of a charged folio of the test's, which keeps that memcg.
 */
static struct workingset_test_counts *
workingset_test_counts(struct kunit *test, struct lruvec *lruvec, int type)
{
	struct workingset_test_counts *n;

	n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, n);
	n->lruvec = lruvec;
	n->type = type;
	n->hist = lru_hist_from_seq(READ_ONCE(lruvec->lrugen.min_seq[type]));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, workingset_test_uncount,
						  n));
	return n;
}

/*
 * The node's count of @item: its total and this CPU's part not yet
 * folded into it. The caller keeps preemption off, so that the part stays
 * this CPU's; no other code moves these counts while a test runs.
 */
static long workingset_test_node_stat(struct pglist_data *pgdat,
				      enum node_stat_item item)
{
	long x = atomic_long_read(&pgdat->vm_stat[item]);

#ifdef CONFIG_SMP
	x += __this_cpu_read(pgdat->per_cpu_nodestats->vm_node_stat_diff[item]);
#endif
	return x;
}

/* What the refault moved of the node's WORKINGSET_* events. */
struct workingset_test_events {
	long refault;
	long restore;
	long activate;
};

static void workingset_test_count_events(struct workingset_test_events *e,
					 struct pglist_data *pgdat, int type,
					 int sign)
{
	e->refault += sign * workingset_test_node_stat(pgdat,
					WORKINGSET_REFAULT_BASE + type);
	e->restore += sign * workingset_test_node_stat(pgdat,
					WORKINGSET_RESTORE_BASE + type);
	e->activate += sign * workingset_test_node_stat(pgdat,
					WORKINGSET_ACTIVATE_BASE + type);
}

/*
 * Evict a folio on node @nid with the case's history and return the
 * shadow entry, counting the eviction in @n. The folio is as
 * __remove_mapping() hands it to workingset_eviction(): locked, its
 * references frozen (a count of 0), with IRQs off under the lock of the
 * cache it is leaving.
 */
static void *workingset_test_evict(struct kunit *test,
				   const struct workingset_test_case *c,
				   int nid, struct mem_cgroup *memcg,
				   struct workingset_test_counts *n)
{
	struct folio *folio = workingset_test_folio_create(test, c, nid, memcg);
	unsigned long flags = READ_ONCE(folio->flags.f) & ~LRU_REFS_FLAGS;
	void *shadow = NULL;
	bool frozen;

	if (c->refs > BIT(LRU_REFS_WIDTH))
		kunit_skip(test, "LRU_REFS_WIDTH is %d", LRU_REFS_WIDTH);
	if (c->refs)
		flags |= BIT(PG_referenced) |
			 ((c->refs - 1UL) << LRU_REFS_PGOFF);
	if (c->workingset)
		flags |= BIT(PG_workingset);
	WRITE_ONCE(folio->flags.f, flags);

	folio_lock(folio);
	frozen = folio_ref_freeze(folio, 1);
	if (frozen) {
		local_irq_disable();
		workingset_test_count(n, -1);
		shadow = lru_gen_eviction(folio);
		workingset_test_count(n, 1);
		local_irq_enable();
		folio_ref_unfreeze(folio, 1);
	}
	folio_unlock(folio);
	KUNIT_ASSERT_TRUE_MSG(test, frozen, "the test's folio has another user");
	return shadow;
}

/*
 * Evict and refault, with the lruvec aged @before times first and @agings
 * times between: returns the refaulting folio, with what the refault moved
 * of the node's events in @e and of the lrugen counts in the returned
 * counts.
 */
static struct workingset_test_counts *
workingset_test_refault(struct kunit *test,
			const struct workingset_test_case *c, int before,
			int agings, struct folio **foliop,
			struct workingset_test_events *e)
{
	struct mem_cgroup *memcg = workingset_test_memcg(test);
	struct folio *folio = workingset_test_folio_create(test, c,
							   NUMA_NO_NODE, memcg);
	struct workingset_test_counts *n;
	struct pglist_data *pgdat = folio_pgdat(folio);
	struct lruvec *lruvec;
	void *shadow;
	int i;

	rcu_read_lock();
	lruvec = folio_lruvec(folio);
	rcu_read_unlock();
	for (i = 0; i < before; i++)
		KUNIT_ASSERT_TRUE(test, mm_kunit_lru_gen_age(lruvec));
	n = workingset_test_counts(test, lruvec, folio_is_file_lru(folio));
	shadow = workingset_test_evict(test, c, folio_nid(folio), memcg, n);
	for (i = 0; i < agings; i++)
		KUNIT_ASSERT_TRUE(test, mm_kunit_lru_gen_age(lruvec));

	/* As workingset_refault(): the new folio is locked. */
	folio_lock(folio);
	preempt_disable();
	workingset_test_count_events(e, pgdat, n->type, -1);
	workingset_test_count(n, -1);
	current->in_lru_fault = c->in_fault;
	lru_gen_refault(folio, shadow);
	current->in_lru_fault = false;
	workingset_test_count(n, 1);
	workingset_test_count_events(e, pgdat, n->type, 1);
	preempt_enable();
	folio_unlock(folio);
	*foliop = folio;
	return n;
}

/* The case's eviction and refault, on an lruvec aged @before times first. */
static void workingset_test_lru_gen_refault_after(struct kunit *test,
						  int before)
{
	const struct workingset_test_case *c = test->param_value;
	struct workingset_test_events e = {};
	struct workingset_test_counts *n;
	unsigned long flags, field;
	struct folio *folio;
	long nr;
	int tier;

	n = workingset_test_refault(test, c, before, 0, &folio, &e);

	nr = folio_nr_pages(folio);
	flags = READ_ONCE(folio->flags.f);
	field = (flags & LRU_REFS_MASK) >> LRU_REFS_PGOFF;
	for (tier = 0; tier < MAX_NR_TIERS; tier++) {
		KUNIT_EXPECT_EQ_MSG(test, tier == c->evicted_tier ? nr : 0L,
				    n->evicted[tier], "evicted, tier %d", tier);
		KUNIT_EXPECT_EQ_MSG(test, tier == c->refaulted_tier ? nr : 0L,
				    n->refaulted[tier], "refaulted, tier %d",
				    tier);
	}
	KUNIT_EXPECT_EQ(test, c->restored, !!(flags & BIT(PG_workingset)));
	KUNIT_EXPECT_FALSE(test, flags & BIT(PG_referenced));
	KUNIT_EXPECT_EQ(test, c->refs_field, field);
	KUNIT_EXPECT_EQ(test, nr, e.refault);
	KUNIT_EXPECT_EQ(test, c->restored ? nr : 0L, e.restore);
	KUNIT_EXPECT_EQ(test, c->activated ? nr : 0L, e.activate);
}

static void workingset_test_lru_gen_refault(struct kunit *test)
{
	workingset_test_lru_gen_refault_after(test, 0);
}

/* Agings that take an lruvec past its first generations (min_seq 5). */
#define WORKINGSET_TEST_AGINGS	(MAX_NR_GENS + 1)

/*
 * The same on an lruvec aged past its first MAX_NR_GENS generations: the
 * shadow records the oldest generation's sequence number, not the
 * generation it is in, the counts go to that sequence's history slot, and
 * the refault is recent by the distance of the sequence numbers.
 */
static void workingset_test_lru_gen_refault_aged(struct kunit *test)
{
	if (mem_cgroup_disabled())
		kunit_skip(test, "needs a memcg of its own to age");
	workingset_test_lru_gen_refault_after(test, WORKINGSET_TEST_AGINGS);
}

/*
 * Refault @folio, a folio of @m's lruvec, with @shadow, a shadow of @n's
 * lruvec on another node: what it moves of both lruvecs' counts and of
 * the events of @n's node (@home) and @m's (@away).
 */
static void workingset_test_refault_away(struct folio *folio, void *shadow,
					 struct workingset_test_counts *n,
					 struct workingset_test_counts *m,
					 struct workingset_test_events *home,
					 struct workingset_test_events *away)
{
	struct pglist_data *home_pgdat = lruvec_pgdat(n->lruvec);
	struct pglist_data *away_pgdat = lruvec_pgdat(m->lruvec);

	folio_lock(folio);
	preempt_disable();
	workingset_test_count_events(home, home_pgdat, LRU_GEN_FILE, -1);
	workingset_test_count_events(away, away_pgdat, LRU_GEN_FILE, -1);
	workingset_test_count(n, -1);
	workingset_test_count(m, -1);
	lru_gen_refault(folio, shadow);
	workingset_test_count(m, 1);
	workingset_test_count(n, 1);
	workingset_test_count_events(away, away_pgdat, LRU_GEN_FILE, 1);
	workingset_test_count_events(home, home_pgdat, LRU_GEN_FILE, 1);
	preempt_enable();
	folio_unlock(folio);
}

/*
 * A shadow names the lruvec that evicted the folio, by memcg and node. A
 * folio that refaults into another lruvec, here another node's, is no
 * refault of that lruvec: lru_gen_refault() counts nothing on either
 * node and leaves the folio's history as it was, though the shadow is of
 * a workingset folio with refs.
 */
static void workingset_test_lru_gen_refault_other_node(struct kunit *test)
{
	static const struct workingset_test_case c = {
		.refs = 2,
		.workingset = true,
	};
	struct workingset_test_events home = {}, away = {};
	struct workingset_test_counts *n, *m;
	struct lruvec *lruvec, *home_lruvec;
	struct mem_cgroup *memcg;
	int nid = first_online_node;
	int other = next_online_node(nid);
	struct folio *folio;
	unsigned long flags;
	void *shadow;
	int tier;

	if (other == MAX_NUMNODES)
		kunit_skip(test, "needs a second online node");
	memcg = workingset_test_memcg(test);
	folio = workingset_test_folio_create(test, &c, other, memcg);
	KUNIT_ASSERT_EQ(test, other, folio_nid(folio));
	rcu_read_lock();
	lruvec = folio_lruvec(folio);
	home_lruvec = mem_cgroup_lruvec(folio_memcg(folio), NODE_DATA(nid));
	rcu_read_unlock();
	m = workingset_test_counts(test, lruvec, LRU_GEN_FILE);
	n = workingset_test_counts(test, home_lruvec, LRU_GEN_FILE);
	shadow = workingset_test_evict(test, &c, nid, memcg, n);
	flags = READ_ONCE(folio->flags.f);

	workingset_test_refault_away(folio, shadow, n, m, &home, &away);

	for (tier = 0; tier < MAX_NR_TIERS; tier++) {
		KUNIT_EXPECT_EQ_MSG(test, tier == MAX_NR_TIERS - 1 ? 1L : 0L,
				    n->evicted[tier], "evicted, tier %d", tier);
		KUNIT_EXPECT_EQ_MSG(test, 0L,
				    n->refaulted[tier] + m->refaulted[tier],
				    "refaulted, tier %d", tier);
	}
	KUNIT_EXPECT_EQ(test, flags, READ_ONCE(folio->flags.f));
	KUNIT_EXPECT_EQ(test, 0L, home.refault + away.refault);
	KUNIT_EXPECT_EQ(test, 0L, home.restore + away.restore);
}

/*
 * A shadow is recent while the lruvec's max_seq is less than MAX_NR_GENS
 * past the min_seq it recorded. The lruvec of a new memcg has max_seq
 * MIN_NR_GENS + 1 and min_seq 0: a shadow written then is recent, the
 * last generation that is (every test above refaults at that distance),
 * and is not once the lruvec has aged by one. A refault that is not
 * recent counts WORKINGSET_REFAULT and nothing else: no refaulted[], and
 * the folio gets neither PG_workingset nor refs back, though the shadow is
 * of a workingset folio with refs.
 */
static void workingset_test_lru_gen_refault_not_recent(struct kunit *test)
{
	static const struct workingset_test_case c = {
		.refs = 2,
		.workingset = true,
	};
	struct workingset_test_events e = {};
	struct workingset_test_counts *n;
	unsigned long flags, field, max_seq, min_seq;
	struct lru_gen_folio *lrugen;
	struct folio *folio;
	int hist, tier;

	if (mem_cgroup_disabled())
		kunit_skip(test, "needs a memcg of its own to age");
	n = workingset_test_refault(test, &c, 0, 1, &folio, &e);

	lrugen = &n->lruvec->lrugen;
	max_seq = READ_ONCE(lrugen->max_seq);
	min_seq = READ_ONCE(lrugen->min_seq[LRU_GEN_FILE]);
	flags = READ_ONCE(folio->flags.f);
	field = (flags & LRU_REFS_MASK) >> LRU_REFS_PGOFF;
	KUNIT_EXPECT_EQ(test, MAX_NR_GENS, max_seq);
	KUNIT_EXPECT_EQ(test, 1UL, min_seq);
	/* The lruvec is the test's: nothing but a refault counts there. */
	for (hist = 0; hist < NR_HIST_GENS; hist++) {
		for (tier = 0; tier < MAX_NR_TIERS; tier++) {
			atomic_long_t *refaulted =
				&lrugen->refaulted[hist][LRU_GEN_FILE][tier];

			KUNIT_EXPECT_EQ_MSG(test, 0L, atomic_long_read(refaulted),
					    "refaulted, history %d, tier %d",
					    hist, tier);
		}
	}
	KUNIT_EXPECT_FALSE(test, flags & BIT(PG_workingset));
	KUNIT_EXPECT_FALSE(test, flags & BIT(PG_referenced));
	KUNIT_EXPECT_EQ(test, 0UL, field);
	KUNIT_EXPECT_EQ(test, 1L, e.refault);
	KUNIT_EXPECT_EQ(test, 0L, e.restore);
	KUNIT_EXPECT_EQ(test, 0L, e.activate);
}

static struct kunit_case workingset_test_cases_list[] = {
	KUNIT_CASE_PARAM(workingset_test_lru_gen_refault,
			 workingset_test_gen_params),
	KUNIT_CASE_PARAM(workingset_test_lru_gen_refault_aged,
			 workingset_test_gen_params),
	KUNIT_CASE(workingset_test_lru_gen_refault_other_node),
	KUNIT_CASE(workingset_test_lru_gen_refault_not_recent),
	{}
};

static struct kunit_suite workingset_test_suite = {
	.name = "mm_workingset_mglru",
	.test_cases = workingset_test_cases_list,
};

kunit_test_suite(workingset_test_suite);

#endif /* CONFIG_MM_VMSCAN_KUNIT_TEST */
