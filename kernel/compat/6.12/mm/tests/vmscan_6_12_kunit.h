/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of 6.12's reclaim in mm/vmscan.c where it works otherwise
 * than 7.3's; beside 7.3's suites (vmscan_kunit.h), whose rows 6.12 fails
 * are listed in kernel/compat/6.12/expected and given with 6.12's
 * outcomes in vmscan_6_12_rows_kunit.h. 6.1 runs them all as 6.12 does.
 *
 * Part of the harness's 6.12 port only (kernel/compat/6.12), never sent
 * upstream: the port's patch (0005f) includes it at the end of
 * vmscan_kunit.h.
 *
 * The tests work on a node and lruvec of their own: a pglist_data allocated
 * here, with its lruvec initialised by the real lruvec_init(). Folios are
 * real folios, allocated here and never put on the system's LRU; each is
 * taken off the test's lruvec again when the test ends. Every call that
 * adds, sorts or removes a folio holds the lruvec's lru_lock, as reclaim
 * and mm/swap.c do.
 *
 * Suites:
 *  - mm_vmscan_6_12_mglru: which generation lru_gen_add_folio() gives a
 *    folio, and what sort_folio() does with a folio of the oldest
 *    generation;
 *  - mm_vmscan_6_12_scan_balance: the classic LRU's prepare_scan_control()
 *    and get_scan_count().
 */

#ifndef MM_TESTS_VMSCAN_6_12_KUNIT_H
#define MM_TESTS_VMSCAN_6_12_KUNIT_H

#ifdef CONFIG_MM_VMSCAN_KUNIT_TEST

#include <kunit/test.h>

#include "mm_kunit.h"

/*
 * 6.12's own signatures, where vmscan_names_compat.h gives 7.3's to 7.3's
 * tests included before these.
 */
#undef lru_tier_from_refs
#undef get_type_to_scan

/* -------------------------------------------------------------------------
 * A test-owned node
 */

struct vt_node {
	struct pglist_data *pgdat;
	struct lruvec *lruvec;
};

static void vt_free_node(void *data)
{
	struct pglist_data *pgdat = data;
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++)
		free_percpu(pgdat->node_zones[z].per_cpu_zonestats);
	free_percpu(pgdat->per_cpu_nodestats);
	kvfree(pgdat);
}

/*
 * A node of the test's own. On SMP its statistics stay in its per-CPU
 * counters: with the largest threshold, the few pages a test moves never
 * fold into the system's totals. Without SMP every update goes to the
 * node's and the system's counters at once; they balance out again when
 * the test's folios are taken off the lruvec at the end of the test.
 *
 * Its lruvec is the node's own, which only a kernel without the memory
 * controller uses: with it, the LRU code takes the memcg's per-node data
 * around any lruvec it is given (container_of()), which this one has not.
 * The test is skipped then.
 */
static struct vt_node vt_node_create(struct kunit *test)
{
	struct vt_node node = {};
	struct pglist_data *pgdat;
	int z;

	if (!mem_cgroup_disabled())
		kunit_skip(test, "a node of the test's own has no memcg lruvec");
	pgdat = kvzalloc(sizeof(*pgdat), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pgdat);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, vt_free_node, pgdat));
	for (z = 0; z < MAX_NR_ZONES; z++)
		pgdat->node_zones[z].zone_pgdat = pgdat;
#ifdef CONFIG_SMP
	{
		int cpu;

		pgdat->per_cpu_nodestats = alloc_percpu(struct per_cpu_nodestat);
		KUNIT_ASSERT_NOT_NULL(test, pgdat->per_cpu_nodestats);
		for (z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &pgdat->node_zones[z];

			zone->per_cpu_zonestats = alloc_percpu(struct per_cpu_zonestat);
			KUNIT_ASSERT_NOT_NULL(test, zone->per_cpu_zonestats);
		}
		for_each_possible_cpu(cpu) {
			per_cpu_ptr(pgdat->per_cpu_nodestats, cpu)->stat_threshold = S8_MAX;
			for (z = 0; z < MAX_NR_ZONES; z++)
				per_cpu_ptr(pgdat->node_zones[z].per_cpu_zonestats,
					    cpu)->stat_threshold = S8_MAX;
		}
	}
#endif

	node.pgdat = pgdat;
	node.lruvec = &pgdat->__lruvec;
	lruvec_init(node.lruvec);
#ifdef CONFIG_MEMCG
	node.lruvec->pgdat = pgdat;
#endif
	return node;
}

/* -------------------------------------------------------------------------
 * Test folios
 */

struct vt_folio {
	struct folio *folio;
	struct lruvec *lruvec;
	unsigned long flags;	/* as allocated, restored before freeing */
};

/* lru_gen_add_folio() under the lru_lock, as lruvec_add_folio()'s callers. */
static bool vt_add_folio(struct lruvec *lruvec, struct folio *folio,
			 bool reclaiming)
{
	bool added;

	spin_lock_irq(&lruvec->lru_lock);
	added = lru_gen_add_folio(lruvec, folio, reclaiming);
	spin_unlock_irq(&lruvec->lru_lock);
	return added;
}

/* sort_folio() under the lru_lock, as scan_folios() calls it. */
static bool vt_sort_folio(struct lruvec *lruvec, struct folio *folio,
			  struct scan_control *sc, int tier_idx)
{
	bool moved;

	spin_lock_irq(&lruvec->lru_lock);
	moved = sort_folio(lruvec, folio, sc, tier_idx);
	spin_unlock_irq(&lruvec->lru_lock);
	return moved;
}

static bool vt_on_list(struct list_head *head, struct folio *folio)
{
	struct folio *pos;

	list_for_each_entry(pos, head, lru)
		if (pos == folio)
			return true;
	return false;
}

/* Whether @folio is on any generation list of @lruvec. */
static bool vt_on_lruvec(struct lruvec *lruvec, struct folio *folio)
{
	int gen, type, zone;

	for (gen = 0; gen < MAX_NR_GENS; gen++)
		for (type = 0; type < ANON_AND_FILE; type++)
			for (zone = 0; zone < MAX_NR_ZONES; zone++)
				if (vt_on_list(&lruvec->lrugen.folios[gen][type][zone],
					       folio))
					return true;
	return false;
}

/*
 * Take the folio off the test's lruvec, if a test put it there, and free
 * it. Whether it is on a list is read from the lists, not from the folio's
 * flags: a bug in the code under test may have corrupted the generation
 * its flags claim, and the folio must still go away without a crash.
 */
static void vt_free_folio(void *data)
{
	struct vt_folio *vf = data;
	struct lruvec *lruvec = vf->lruvec;

	spin_lock_irq(&lruvec->lru_lock);
	if (vt_on_lruvec(lruvec, vf->folio) &&
	    !lru_gen_del_folio(lruvec, vf->folio, false))
		list_del(&vf->folio->lru);
	spin_unlock_irq(&lruvec->lru_lock);
	WRITE_ONCE(vf->folio->flags, vf->flags);
	folio_put(vf->folio);
}

/* A new order-0 folio; @flags are page flags to set on it. */
static struct folio *vt_folio_create(struct kunit *test, struct vt_node *node,
				     unsigned long flags)
{
	struct vt_folio *vf;

	vf = kunit_kzalloc(test, sizeof(*vf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vf);
	vf->folio = folio_alloc(GFP_KERNEL, 0);
	KUNIT_ASSERT_NOT_NULL(test, vf->folio);
	vf->lruvec = node->lruvec;
	vf->flags = READ_ONCE(vf->folio->flags);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, vt_free_folio, vf));
	WRITE_ONCE(vf->folio->flags, vf->flags | flags);
	return vf->folio;
}

/* Set the access count beyond PG_referenced that folio_lru_refs() reads. */
static void vt_set_refs(struct folio *folio, unsigned long refs)
{
	unsigned long flags = READ_ONCE(folio->flags) & ~LRU_REFS_MASK;

	WRITE_ONCE(folio->flags, flags | (refs << LRU_REFS_PGOFF));
}

/* The generation lists a folio of @type in @zone can be on. */
#define vt_list(lruvec, gen, type, zone) \
	(&(lruvec)->lrugen.folios[gen][type][zone])

/* -------------------------------------------------------------------------
 * mm_vmscan_6_12_mglru: lru_gen_add_folio()
 */

#define VT_FILE		LRU_GEN_FILE
#define VT_ANON		LRU_GEN_ANON

/* Generations of a test lruvec: max_seq 3, so 0 (oldest) to 3 (youngest). */
#define VT_MAX_SEQ	(MIN_NR_GENS + 1)

struct vt_add_case {
	const char *desc;
	unsigned long flags;	/* page flags of the folio */
	bool reclaiming;
	unsigned long min_seq;	/* of the folio's type */
	unsigned long seq;	/* expected */
	unsigned long aged;	/* added to max_seq, min_seq and seq */
};

/*
 * Active: the youngest generation (max_seq). Anon not in the swap cache,
 * or under reclaim and dirty or under writeback: max_seq - 1. Added by
 * reclaim, or with only MIN_NR_GENS generations: the oldest (min_seq).
 * Anything else: the second oldest (min_seq + 1), so that page cache is
 * not evicted before the refault feedback can act.
 */
static const struct vt_add_case vt_add_cases[] = {
	{ .desc = "active page cache: youngest", .flags = BIT(PG_active),
	  .min_seq = 0, .seq = VT_MAX_SEQ },
	{ .desc = "active anon: youngest",
	  .flags = BIT(PG_active) | BIT(PG_swapbacked), .min_seq = 0,
	  .seq = VT_MAX_SEQ },
	{ .desc = "anon not in swap cache: second youngest",
	  .flags = BIT(PG_swapbacked), .min_seq = 0, .seq = VT_MAX_SEQ - 1 },
	{ .desc = "anon in swap cache: second oldest",
	  .flags = BIT(PG_swapbacked) | BIT(PG_swapcache), .min_seq = 0,
	  .seq = 1 },
	{ .desc = "under reclaim and dirty: second youngest",
	  .flags = BIT(PG_reclaim) | BIT(PG_dirty), .min_seq = 0,
	  .seq = VT_MAX_SEQ - 1 },
	{ .desc = "under reclaim and writeback: second youngest",
	  .flags = BIT(PG_reclaim) | BIT(PG_writeback), .min_seq = 0,
	  .seq = VT_MAX_SEQ - 1 },
	{ .desc = "under reclaim, clean: second oldest",
	  .flags = BIT(PG_reclaim), .min_seq = 0, .seq = 1 },
	{ .desc = "dirty, not under reclaim: second oldest",
	  .flags = BIT(PG_dirty), .min_seq = 0, .seq = 1 },
	{ .desc = "added by reclaim: oldest", .reclaiming = true,
	  .min_seq = 0, .seq = 0 },
	{ .desc = "only MIN_NR_GENS generations: oldest",
	  .min_seq = VT_MAX_SEQ - MIN_NR_GENS, .seq = VT_MAX_SEQ - MIN_NR_GENS },
	{ .desc = "inactive page cache: second oldest", .min_seq = 0, .seq = 1 },
	/* a generation is its sequence number modulo MAX_NR_GENS */
	{ .desc = "active page cache, aged by MAX_NR_GENS: youngest",
	  .flags = BIT(PG_active), .min_seq = 0, .seq = VT_MAX_SEQ,
	  .aged = MAX_NR_GENS },
};

KUNIT_ARRAY_PARAM_DESC(vt_add, vt_add_cases, desc);

/* The access count beyond PG_referenced, without PG_workingset. */
static unsigned long vt_refs_field(struct folio *folio)
{
	return (READ_ONCE(folio->flags) & LRU_REFS_MASK) >> LRU_REFS_PGOFF;
}

static void lru_gen_add_folio_test(struct kunit *test)
{
	const struct vt_add_case *c = test->param_value;
	struct vt_node node = vt_node_create(test);
	struct lru_gen_folio *lrugen = &node.lruvec->lrugen;
	bool active = c->flags & BIT(PG_active);
	struct folio *folio, *earlier;
	struct list_head *list;
	int type, zone, gen;

	/* An earlier folio just like it, already in its generation. */
	earlier = vt_folio_create(test, &node, c->flags);
	/* An access history: referenced, once more, and workingset. */
	folio = vt_folio_create(test, &node, c->flags | BIT(PG_referenced) |
				BIT(PG_workingset));
	vt_set_refs(folio, 1);
	type = folio_is_file_lru(folio);
	zone = folio_zonenum(folio);
	lrugen->enabled = true;
	lrugen->max_seq += c->aged;
	lrugen->min_seq[type] = c->min_seq + c->aged;
	gen = lru_gen_from_seq(c->seq + c->aged);
	list = vt_list(node.lruvec, gen, type, zone);
	KUNIT_ASSERT_TRUE(test, vt_add_folio(node.lruvec, earlier, c->reclaiming));

	KUNIT_ASSERT_TRUE_MSG(test,
			      vt_add_folio(node.lruvec, folio, c->reclaiming),
			      "added");
	KUNIT_EXPECT_EQ_MSG(test, gen, folio_lru_gen(folio),
			    "generation (seq %lu expected)", c->seq + c->aged);
	KUNIT_EXPECT_TRUE_MSG(test, vt_on_list(list, folio),
			      "on the list of its generation");
	KUNIT_EXPECT_EQ_MSG(test, 2L, lrugen->nr_pages[gen][type][zone],
			    "pages in the generation");
	/*
	 * A folio added back by reclaim goes to the tail, to be evicted
	 * first; any other to the head.
	 */
	KUNIT_EXPECT_PTR_EQ_MSG(test, folio,
				c->reclaiming ? list_last_entry(list, struct folio, lru) :
						list_first_entry(list, struct folio, lru),
				"at the %s", c->reclaiming ? "tail" : "head");
	/*
	 * The generation now says what PG_active said: an active folio loses
	 * PG_active, PG_referenced and its access count (not PG_workingset);
	 * the others keep their access history.
	 */
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_active(folio), "PG_active");
	KUNIT_EXPECT_EQ_MSG(test, !active, folio_test_referenced(folio),
			    "PG_referenced");
	KUNIT_EXPECT_EQ_MSG(test, active ? 0UL : 1UL, vt_refs_field(folio),
			    "access count");
	KUNIT_EXPECT_TRUE_MSG(test, folio_test_workingset(folio),
			      "PG_workingset");
}

/* -------------------------------------------------------------------------
 * mm_vmscan_6_12_mglru: sort_folio()
 */

enum vt_sort_result {
	VT_LEFT,		/* false: left for eviction */
	VT_PROTECTED,		/* true: next generation, counted protected */
	VT_INELIGIBLE,		/* true: next generation, not counted */
};

enum vt_reclaim_idx {
	VT_ALL_ZONES,		/* reclaim_idx: the highest zone */
	VT_BELOW_ZONE,		/* the zone below the folio's */
};

struct vt_sort_case {
	const char *desc;
	int refs;		/* folio_lru_refs(); -1: saturated */
	int tier_idx;
	enum vt_reclaim_idx reclaim_idx;
	unsigned long aged;	/* added to max_seq and both min_seq */
	enum vt_sort_result result;
};

/* BIT(LRU_REFS_WIDTH): the access count has saturated. */
#define VT_REFS_SATURATED	(-1)

/*
 * A folio of the oldest generation whose tier (order_base_2(refs + 1)) is
 * above tier_idx, or whose refs have saturated at BIT(LRU_REFS_WIDTH), is
 * protected: it moves to the next generation and is counted in
 * lrugen->protected for its tier. One in a zone above reclaim_idx moves to
 * the next generation. Anything else is left for eviction. A folio moved
 * on goes to the tail of the next generation's list, where eviction looks
 * first when that generation is the oldest. No folio leaves with
 * PG_reclaim: sort_folio() does not start writeback.
 */
static const struct vt_sort_case vt_sort_cases[] = {
	/*
	 * 6.12 clears the PG_workingset of a saturated folio it protects;
	 * 7.3's sort test wants it kept, so no row of it can say this.
	 */
	{ .desc = "saturated refs: protected at any tier_idx",
	  .refs = VT_REFS_SATURATED, .tier_idx = MAX_NR_TIERS - 1,
	  .result = VT_PROTECTED },
	/*
	 * 6.12's folio_inc_gen() sets PG_reclaim when asked to; 7.3's sort
	 * test, whose folio_inc_gen() has no such flag, does not look.
	 */
	{ .desc = "zone above reclaim_idx: moved on", .refs = 0,
	  .tier_idx = 0, .reclaim_idx = VT_BELOW_ZONE,
	  .result = VT_INELIGIBLE },
	/*
	 * Sequence numbers past MAX_NR_GENS: the oldest generation and the
	 * history one are min_seq's modulo MAX_NR_GENS and NR_HIST_GENS.
	 * (7.3's aged rows run only with a memcg, which no configuration of
	 * the port has.)
	 */
	{ .desc = "aged by MAX_NR_GENS, no refs: left", .aged = MAX_NR_GENS,
	  .refs = 0, .tier_idx = 0, .result = VT_LEFT },
	{ .desc = "aged by MAX_NR_GENS, tier 1 above tier_idx 0: protected",
	  .aged = MAX_NR_GENS, .refs = 1, .tier_idx = 0,
	  .result = VT_PROTECTED },
};

KUNIT_ARRAY_PARAM_DESC(vt_sort, vt_sort_cases, desc);

/* What sort_folio_test() seeds lrugen->protected[hist][type][tier] with. */
#define VT_PROTECTED_SEED(type, tier)	(100UL * ((type) * MAX_NR_TIERS + (tier) + 1))

/* Give @folio the refs folio_lru_refs() reports: -1 for saturated. */
static int vt_give_refs(struct folio *folio, int refs)
{
	if (refs == VT_REFS_SATURATED) {
		/* The counter at its maximum plus PG_workingset. */
		vt_set_refs(folio, BIT(LRU_REFS_WIDTH) - 1);
		folio_set_workingset(folio);
		return BIT(LRU_REFS_WIDTH);
	}
	vt_set_refs(folio, refs);
	return refs;
}

static void sort_folio_test(struct kunit *test)
{
	const struct vt_sort_case *c = test->param_value;
	struct vt_node node = vt_node_create(test);
	struct lru_gen_folio *lrugen = &node.lruvec->lrugen;
	struct scan_control sc = { .reclaim_idx = MAX_NR_ZONES - 1 };
	struct folio *folio, *neighbour;
	struct list_head *list;
	int type, zone, gen, old_gen, refs, tier, hist, t, i;
	bool moved;

	folio = vt_folio_create(test, &node, 0);
	neighbour = vt_folio_create(test, &node, 0);
	type = folio_is_file_lru(folio);
	zone = folio_zonenum(folio);
	lrugen->enabled = true;
	lrugen->max_seq += c->aged;
	for (t = 0; t < ANON_AND_FILE; t++)
		lrugen->min_seq[t] += c->aged;
	/*
	 * The folio in the oldest generation (reclaiming); the neighbour in
	 * the second oldest: the list the folio is moved on to.
	 */
	KUNIT_ASSERT_TRUE(test, vt_add_folio(node.lruvec, folio, true));
	KUNIT_ASSERT_TRUE(test, vt_add_folio(node.lruvec, neighbour, false));
	old_gen = folio_lru_gen(folio);
	refs = vt_give_refs(folio, c->refs);
	KUNIT_ASSERT_EQ_MSG(test, refs, folio_lru_refs(folio), "refs");
	tier = lru_tier_from_refs(refs);
	if (c->reclaim_idx == VT_BELOW_ZONE)
		sc.reclaim_idx = zone - 1;
	/* A count of its own in every tier, so that a wrong tier shows. */
	hist = lru_hist_from_seq(lrugen->min_seq[type]);
	for (t = 0; t < ANON_AND_FILE; t++)
		for (i = 0; i < MAX_NR_TIERS - 1; i++)
			lrugen->protected[hist][t][i] = VT_PROTECTED_SEED(t, i);

	moved = vt_sort_folio(node.lruvec, folio, &sc, c->tier_idx);

	gen = folio_lru_gen(folio);
	list = vt_list(node.lruvec, gen, type, zone);
	switch (c->result) {
	case VT_LEFT:
		KUNIT_EXPECT_FALSE(test, moved);
		KUNIT_EXPECT_EQ_MSG(test, old_gen, gen, "generation");
		break;
	case VT_PROTECTED:
	case VT_INELIGIBLE:
		KUNIT_EXPECT_TRUE(test, moved);
		KUNIT_EXPECT_EQ_MSG(test, (old_gen + 1) % (int)MAX_NR_GENS, gen,
				    "next generation");
		KUNIT_EXPECT_EQ_MSG(test, 0, folio_lru_refs(folio),
				    "access history cleared");
		KUNIT_EXPECT_PTR_EQ_MSG(test, folio,
					list_last_entry(list, struct folio, lru),
					"at the tail of the next generation");
		break;
	}
	KUNIT_EXPECT_TRUE_MSG(test, vt_on_list(list, folio),
			      "on the list of generation %d", gen);
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_reclaim(folio), "PG_reclaim");
	for (i = 0; i < MAX_NR_TIERS - 1; i++) {
		unsigned long expected = VT_PROTECTED_SEED(type, i) +
			(c->result == VT_PROTECTED && i == tier - 1 ? 1 : 0);

		KUNIT_EXPECT_EQ_MSG(test, expected,
				    lrugen->protected[hist][type][i],
				    "protected[tier %d] (folio in tier %d)",
				    i + 1, tier);
	}
}

/* -------------------------------------------------------------------------
 * mm_vmscan_6_12_mglru: counting accesses up to saturation
 */

static void vt_set_lru_gen_key(bool enabled)
{
	if (enabled)
		static_branch_enable(&lru_gen_caps[LRU_GEN_CORE]);
	else
		static_branch_disable(&lru_gen_caps[LRU_GEN_CORE]);
}

static void vt_restore_lru_gen(void *enabled)
{
	vt_set_lru_gen_key((bool)(long)enabled);
}

/*
 * Make lru_gen_enabled() say @enabled until the test ends, without moving
 * a single folio of the system. lru_gen_change_state() would move every
 * folio on the system's LRUs to the other kind of list, and on the way
 * into the multi-gen LRU an active folio loses PG_referenced and its access
 * count. Only the static key is switched here: the system's lruvecs keep
 * their lrugen.enabled, which is what lru_gen_add_folio() and
 * lru_gen_del_folio() go by, so their folios stay on the lists they are
 * on, as they do between the key switch and the lruvec walk of
 * lru_gen_change_state() itself. The test's own lruvec sets lrugen.enabled
 * as it needs.
 */
static void vt_switch_lru_gen(struct kunit *test, bool enabled)
{
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, vt_restore_lru_gen,
						  (void *)(long)lru_gen_enabled()));
	vt_set_lru_gen_key(enabled);
}

/*
 * Under the multi-gen LRU, folio_mark_accessed() counts accesses: after N
 * of them folio_lru_refs() is N - 1, up to BIT(LRU_REFS_WIDTH), where it
 * saturates (accesses through file descriptors beyond what the tiers
 * track). A saturated folio in the oldest generation is protected by
 * sort_folio() even at the highest tier_idx.
 */
static void folio_mark_accessed_refs_test(struct kunit *test)
{
	struct vt_node node = vt_node_create(test);
	struct folio *folio = vt_folio_create(test, &node, 0);
	struct scan_control sc = { .reclaim_idx = MAX_NR_ZONES - 1 };
	int max = BIT(LRU_REFS_WIDTH);
	int n, expected;

	kunit_info(test, "LRU_REFS_WIDTH is %d in this configuration\n",
		   LRU_REFS_WIDTH);
	vt_switch_lru_gen(test, true);
	for (n = 1; n <= max + 3; n++) {
		folio_mark_accessed(folio);
		expected = min(n - 1, max);
		KUNIT_ASSERT_EQ_MSG(test, expected, folio_lru_refs(folio),
				    "refs after %d accesses (LRU_REFS_WIDTH %d)",
				    n, LRU_REFS_WIDTH);
	}

	node.lruvec->lrugen.enabled = true;
	KUNIT_ASSERT_TRUE(test, vt_add_folio(node.lruvec, folio, true));
	KUNIT_ASSERT_EQ(test, 0, folio_lru_gen(folio));
	KUNIT_EXPECT_TRUE(test, vt_sort_folio(node.lruvec, folio, &sc,
					      MAX_NR_TIERS - 1));
	KUNIT_EXPECT_EQ_MSG(test, 1, folio_lru_gen(folio),
			    "saturated folio moved to the next generation");
}

/* -------------------------------------------------------------------------
 * mm_vmscan_6_12_mglru: get_type_to_scan(), the refault feedback
 */

struct vt_type_case {
	const char *desc;
	unsigned long anon_refaulted, anon_total;	/* first tier */
	unsigned long file_refaulted, file_total;
	/* Tier @tier of the type chosen (0: none beyond the first) */
	int tier;
	unsigned long tier_refaulted, tier_total;
	int swappiness;
	/* expected */
	int type;		/* LRU_GEN_ANON or LRU_GEN_FILE */
	int tier_idx;
};

/*
 * The controller scans file if file's refault rate in the first tier,
 * weighted by the gains (swappiness for anon, MAX_SWAPPINESS - swappiness
 * for file), is not above anon's, or if file has had too few refaults
 * (under MIN_LRU_BATCH) to judge; otherwise anon.
 *
 * Then the tiers of the chosen type above the first are held against the
 * first tier of the other type: the first one that refaults more (and
 * often enough to judge) is protected, and tier_idx, the last tier to
 * evict, is the one below it. Tiers with too few refaults to judge are
 * evicted: with none, tier_idx is the highest tier.
 */
static const struct vt_type_case vt_type_cases[] = {
	{
		.desc = "file refaults more: anon",
		.anon_refaulted = 100, .anon_total = 10000,
		.file_refaulted = 5000, .file_total = 10000,
		.swappiness = 100,
		.type = LRU_GEN_ANON, .tier_idx = MAX_NR_TIERS - 1,
	},
	{
		.desc = "file refaults less: file",
		.anon_refaulted = 5000, .anon_total = 10000,
		.file_refaulted = 100, .file_total = 10000,
		.swappiness = 100,
		.type = LRU_GEN_FILE, .tier_idx = MAX_NR_TIERS - 1,
	},
	{
		.desc = "too few file refaults to judge: file",
		.anon_refaulted = 100, .anon_total = 10000,
		.file_refaulted = 10, .file_total = 20,
		.swappiness = 100,
		.type = LRU_GEN_FILE, .tier_idx = MAX_NR_TIERS - 1,
	},
	{
		.desc = "MIN_LRU_BATCH file refaults are enough to judge: anon",
		.anon_refaulted = 100, .anon_total = 10000,
		.file_refaulted = MIN_LRU_BATCH, .file_total = 100,
		.swappiness = 100,
		.type = LRU_GEN_ANON, .tier_idx = MAX_NR_TIERS - 1,
	},
	/*
	 * With equal gains, the first tier of anon is held to
	 * (refaulted + 1) / (total + MIN_LRU_BATCH): at equal rates, file's
	 * is above it and anon is scanned; the tiers of anon start at 1.
	 */
	{
		.desc = "equal rates, swappiness 100: anon, every tier evicted",
		.anon_refaulted = 1000, .anon_total = 10000,
		.file_refaulted = 1000, .file_total = 10000,
		.swappiness = 100,
		.type = LRU_GEN_ANON, .tier_idx = MAX_NR_TIERS - 1,
	},
	{
		.desc = "equal rates, swappiness 60 (file cheaper): file",
		.anon_refaulted = 1000, .anon_total = 10000,
		.file_refaulted = 1000, .file_total = 10000,
		.swappiness = 60,
		.type = LRU_GEN_FILE, .tier_idx = MAX_NR_TIERS - 1,
	},
	{
		.desc = "equal rates, swappiness 140 (anon cheaper): anon",
		.anon_refaulted = 1000, .anon_total = 10000,
		.file_refaulted = 1000, .file_total = 10000,
		.swappiness = 140,
		.type = LRU_GEN_ANON, .tier_idx = MAX_NR_TIERS - 1,
	},
	{
		.desc = "anon tier 1 refaults more than file's first: tier 0 last",
		.anon_refaulted = 100, .anon_total = 10000,
		.file_refaulted = 5000, .file_total = 10000,
		.tier = 1, .tier_refaulted = 8000, .tier_total = 10000,
		.swappiness = 100,
		.type = LRU_GEN_ANON, .tier_idx = 0,
	},
	{
		.desc = "anon tier 1 between its first tier and file's: evicted",
		.anon_refaulted = 100, .anon_total = 10000,
		.file_refaulted = 5000, .file_total = 10000,
		.tier = 1, .tier_refaulted = 1000, .tier_total = 10000,
		.swappiness = 100,
		.type = LRU_GEN_ANON, .tier_idx = MAX_NR_TIERS - 1,
	},
	{
		.desc = "file tier 2 refaults more than anon's first: tier 1 last",
		.anon_refaulted = 5000, .anon_total = 10000,
		.file_refaulted = 100, .file_total = 10000,
		.tier = 2, .tier_refaulted = 8000, .tier_total = 10000,
		.swappiness = 100,
		.type = LRU_GEN_FILE, .tier_idx = 1,
	},
	/*
	 * The boundary: (anon_refaulted + 1) / (anon_total + MIN_LRU_BATCH)
	 * is 1/2 exactly; a tier refaulting at 1/2 is not above it.
	 */
	{
		.desc = "file tier 2 refaults at anon's first tier rate: evicted",
		.anon_refaulted = 4999, .anon_total = 10000 - MIN_LRU_BATCH,
		.file_refaulted = 100, .file_total = 10000,
		.tier = 2, .tier_refaulted = 5000, .tier_total = 10000,
		.swappiness = 100,
		.type = LRU_GEN_FILE, .tier_idx = MAX_NR_TIERS - 1,
	},
	{
		.desc = "file tier 2 refaults just above anon's first: tier 1 last",
		.anon_refaulted = 4999, .anon_total = 10000 - MIN_LRU_BATCH,
		.file_refaulted = 100, .file_total = 10000,
		.tier = 2, .tier_refaulted = 5001, .tier_total = 10000,
		.swappiness = 100,
		.type = LRU_GEN_FILE, .tier_idx = 1,
	},
	{
		.desc = "file tier 2 refaults too few times to judge: evicted",
		.anon_refaulted = 5000, .anon_total = 10000,
		.file_refaulted = 100, .file_total = 10000,
		.tier = 2, .tier_refaulted = MIN_LRU_BATCH - 1, .tier_total = 100,
		.swappiness = 100,
		.type = LRU_GEN_FILE, .tier_idx = MAX_NR_TIERS - 1,
	},
};

KUNIT_ARRAY_PARAM_DESC(vt_type, vt_type_cases, desc);

static void get_type_to_scan_test(struct kunit *test)
{
	const struct vt_type_case *c = test->param_value;
	struct vt_node node = vt_node_create(test);
	struct lru_gen_folio *lrugen = &node.lruvec->lrugen;
	int tier_idx = -1;

	lrugen->avg_refaulted[LRU_GEN_ANON][0] = c->anon_refaulted;
	lrugen->avg_total[LRU_GEN_ANON][0] = c->anon_total;
	lrugen->avg_refaulted[LRU_GEN_FILE][0] = c->file_refaulted;
	lrugen->avg_total[LRU_GEN_FILE][0] = c->file_total;
	if (c->tier) {
		lrugen->avg_refaulted[c->type][c->tier] = c->tier_refaulted;
		lrugen->avg_total[c->type][c->tier] = c->tier_total;
	}

	KUNIT_EXPECT_EQ_MSG(test, c->type,
			    get_type_to_scan(node.lruvec, c->swappiness, &tier_idx),
			    "type (0 anon, 1 file)");
	KUNIT_EXPECT_EQ(test, c->tier_idx, tier_idx);
}

static struct kunit_case vt_mglru_cases[] = {
	KUNIT_CASE_PARAM(lru_gen_add_folio_test, vt_add_gen_params),
	KUNIT_CASE_PARAM(sort_folio_test, vt_sort_gen_params),
	KUNIT_CASE(folio_mark_accessed_refs_test),
	KUNIT_CASE_PARAM(get_type_to_scan_test, vt_type_gen_params),
	{}
};

static struct kunit_suite vt_mglru_suite = {
	.name = "mm_vmscan_6_12_mglru",
	.test_cases = vt_mglru_cases,
};

/* -------------------------------------------------------------------------
 * mm_vmscan_6_12_scan_balance: classic LRU, anon scanning when file refaults
 */

struct vt_stat_shift {
	atomic_long_t *counter;
	long delta;
};

static void vt_unshift_stat(void *data)
{
	struct vt_stat_shift *shift = data;

	atomic_long_sub(shift->delta, shift->counter);
}

/*
 * Make node_page_state(@node, @item) read @pages until the test ends.
 * Without NUMA, node_page_state() reads the system's counter whatever the
 * node: that counter is shifted by the difference and shifted back by the
 * same amount at the end, so that what the rest of the system adds or
 * takes meanwhile is kept.
 *
 * On SMP a per-CPU fold can move the system's counter by a few pages at
 * any time, so it is not checked for an exact value here. The cases set
 * list sizes of millions of pages, far from any threshold those pages
 * could cross; and the refault counters move only on a refault, which a
 * KUnit boot (no user space, no memory pressure) does not have.
 */
static void vt_set_node_stat(struct kunit *test, struct vt_node *node,
			     enum node_stat_item item, unsigned long pages)
{
	struct vt_stat_shift *shift;

	shift = kunit_kzalloc(test, sizeof(*shift), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, shift);
#ifdef CONFIG_NUMA
	shift->counter = &node->pgdat->vm_stat[item];
#else
	shift->counter = &vm_node_stat[item];
#endif
	shift->delta = (long)pages - atomic_long_read(shift->counter);
	atomic_long_add(shift->delta, shift->counter);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, vt_unshift_stat, shift));
}

/* Set an LRU list's size, for the node and for its highest zone. */
static void vt_set_lru_size(struct kunit *test, struct vt_node *node,
			    enum lru_list lru, unsigned long pages)
{
	struct zone *zone = &node->pgdat->node_zones[MAX_NR_ZONES - 1];

	vt_set_node_stat(test, node, NR_LRU_BASE + lru, pages);
	atomic_long_set(&zone->vm_stat[NR_ZONE_LRU_BASE + lru], pages);
}

#define VT_LOTS		BIT(20)		/* 4 GiB of 4 KiB pages */

/* The sizes of the four evictable lists, for vt_set_lists(). */
#define VT_LISTS(inactive_anon, active_anon, inactive_file, active_file) { \
	[LRU_INACTIVE_ANON] = (inactive_anon),				\
	[LRU_ACTIVE_ANON] = (active_anon),				\
	[LRU_INACTIVE_FILE] = (inactive_file),				\
	[LRU_ACTIVE_FILE] = (active_file),				\
}

static const char * const vt_lru_names[] = {
	[LRU_INACTIVE_ANON] = "inactive anon",
	[LRU_ACTIVE_ANON] = "active anon",
	[LRU_INACTIVE_FILE] = "inactive file",
	[LRU_ACTIVE_FILE] = "active file",
};

/*
 * Give the node's highest zone memory and the evictable lists the sizes in
 * @lists. The zone below it, which has no memory, gets a high watermark
 * larger than all of memory, which reclaim must not count.
 */
static void vt_set_lists(struct kunit *test, struct vt_node *node,
			 const unsigned long *lists)
{
	struct zone *zone = &node->pgdat->node_zones[MAX_NR_ZONES - 1];
	enum lru_list lru;

	atomic_long_set(&zone->managed_pages, 4 * VT_LOTS);
	if (MAX_NR_ZONES > 1)
		node->pgdat->node_zones[0]._watermark[WMARK_HIGH] =
			4 * totalram_pages();
	for_each_evictable_lru(lru)
		vt_set_lru_size(test, node, lru, lists[lru]);
}

/*
 * The refault snapshot the last reclaim round took, 1000 activations of
 * each type, and since then 100 more of anon if @anon, of file if @file.
 */
static void vt_set_refaults(struct kunit *test, struct vt_node *node,
			    bool anon, bool file)
{
	vt_set_node_stat(test, node, WORKINGSET_ACTIVATE_ANON,
			 anon ? 1100 : 1000);
	vt_set_node_stat(test, node, WORKINGSET_ACTIVATE_FILE,
			 file ? 1100 : 1000);
	node->lruvec->refaults[WORKINGSET_ANON] = 1000;
	node->lruvec->refaults[WORKINGSET_FILE] = 1000;
}

enum vt_wmark {
	VT_WMARK_ZERO,		/* file + free is above it */
	VT_WMARK_ABOVE,		/* above file + all of memory */
	VT_WMARK_AT,		/* file + free, as reclaim reads them */
	VT_WMARK_BELOW,		/* one page below file + free */
	VT_WMARK_AT_TWO_ZONES,	/* file + free, shared by two zones */
};

struct vt_prepare_case {
	const char *desc;
	unsigned long lists[NR_LRU_LISTS];
	bool anon_refaulted;		/* WORKINGSET_ACTIVATE_ANON moved */
	bool file_refaulted;		/* WORKINGSET_ACTIVATE_FILE moved */
	bool force_deactivate;
	bool no_cache_trim_mode;
	enum vt_wmark high_wmark;
	/* expected */
	unsigned int may_deactivate;
	bool cache_trim_mode;
	bool file_is_tiny;
};

#define VT_BALANCED	VT_LISTS(VT_LOTS, VT_LOTS, VT_LOTS, VT_LOTS / 2)

/*
 * prepare_scan_control() at DEF_PRIORITY (12): each output from the rule
 * mm-kunit's docs/suites.md states (scan balance).
 *
 * A list is low when inactive * int_sqrt(10 * GiB of both lists) < active:
 * 2^20 inactive to 2^20 active anon, or 2^20 to 2^19 file, is not low (8
 * and 7 times); 2^14 to 2^20 anon (ratio 6) or 2^14 to 2^19 file (ratio 4)
 * is. Cache trim mode needs inactive file >> priority, so 4096 pages but not
 * 4095 (with no active file, which is then not low either). File is tiny
 * when active + inactive file + free pages are at most the sum of the high
 * watermarks of the zones with memory, anon is not being deactivated and
 * inactive anon >> priority: 4096 pages, not 4095.
 */
static const struct vt_prepare_case vt_prepare_cases[] = {
	{ .desc = "no refaults, lists balanced: nothing deactivated, cache trim",
	  .lists = VT_BALANCED, .cache_trim_mode = true },
	{ .desc = "file refaults: file deactivated, no cache trim",
	  .lists = VT_BALANCED, .file_refaulted = true,
	  .may_deactivate = DEACTIVATE_FILE },
	{ .desc = "anon refaults: anon deactivated, cache trim",
	  .lists = VT_BALANCED, .anon_refaulted = true,
	  .may_deactivate = DEACTIVATE_ANON, .cache_trim_mode = true },
	{ .desc = "inactive file low: file deactivated, no cache trim",
	  .lists = VT_LISTS(VT_LOTS, VT_LOTS, VT_LOTS / 64, VT_LOTS / 2),
	  .may_deactivate = DEACTIVATE_FILE },
	{ .desc = "inactive anon low: anon deactivated, cache trim",
	  .lists = VT_LISTS(VT_LOTS / 64, VT_LOTS, VT_LOTS, VT_LOTS / 2),
	  .may_deactivate = DEACTIVATE_ANON, .cache_trim_mode = true },
	{ .desc = "force_deactivate: both deactivated, no cache trim",
	  .lists = VT_BALANCED, .force_deactivate = true,
	  .may_deactivate = DEACTIVATE_ANON | DEACTIVATE_FILE },
	{ .desc = "no_cache_trim_mode: no cache trim",
	  .lists = VT_BALANCED, .no_cache_trim_mode = true },
	{ .desc = "inactive file of 2^priority pages: cache trim",
	  .lists = VT_LISTS(VT_LOTS, VT_LOTS, 4096, 0),
	  .cache_trim_mode = true },
	{ .desc = "inactive file one page short of 2^priority: no cache trim",
	  .lists = VT_LISTS(VT_LOTS, VT_LOTS, 4095, 0) },
	{ .desc = "file and free under the high watermark: file is tiny",
	  .lists = VT_BALANCED, .high_wmark = VT_WMARK_ABOVE,
	  .cache_trim_mode = true, .file_is_tiny = true },
	{ .desc = "file and free at the high watermark: file is tiny",
	  .lists = VT_BALANCED, .high_wmark = VT_WMARK_AT,
	  .cache_trim_mode = true, .file_is_tiny = true },
	{ .desc = "file and free at two zones' high watermarks: file is tiny",
	  .lists = VT_BALANCED, .high_wmark = VT_WMARK_AT_TWO_ZONES,
	  .cache_trim_mode = true, .file_is_tiny = true },
	{ .desc = "file and free a page over the high watermark: not tiny",
	  .lists = VT_BALANCED, .high_wmark = VT_WMARK_BELOW,
	  .cache_trim_mode = true },
	{ .desc = "file under the watermark, anon refaults: not tiny",
	  .lists = VT_BALANCED, .high_wmark = VT_WMARK_ABOVE,
	  .anon_refaulted = true, .may_deactivate = DEACTIVATE_ANON,
	  .cache_trim_mode = true },
	{ .desc = "file under the watermark, force_deactivate: not tiny",
	  .lists = VT_BALANCED, .high_wmark = VT_WMARK_ABOVE,
	  .force_deactivate = true,
	  .may_deactivate = DEACTIVATE_ANON | DEACTIVATE_FILE },
	{ .desc = "file under the watermark, inactive anon of 2^priority: tiny",
	  .lists = VT_LISTS(4096, 0, VT_LOTS, VT_LOTS / 2),
	  .high_wmark = VT_WMARK_ABOVE, .cache_trim_mode = true,
	  .file_is_tiny = true },
	{ .desc = "file under the watermark, inactive anon under 2^priority: not tiny",
	  .lists = VT_LISTS(4095, 0, VT_LOTS, VT_LOTS / 2),
	  .high_wmark = VT_WMARK_ABOVE, .cache_trim_mode = true },
};

KUNIT_ARRAY_PARAM_DESC(vt_prepare, vt_prepare_cases, desc);

/*
 * The free pages prepare_scan_control() reads: the system's, of the node
 * whose id the test's node has, which no test owns.
 */
static unsigned long vt_free_pages(struct vt_node *node)
{
	return sum_zone_node_page_state(node->pgdat->node_id, NR_FREE_PAGES);
}

static unsigned long vt_high_wmark(const struct vt_prepare_case *c,
				   unsigned long free)
{
	unsigned long file = c->lists[LRU_INACTIVE_FILE] +
			     c->lists[LRU_ACTIVE_FILE];

	switch (c->high_wmark) {
	case VT_WMARK_ABOVE:
		return file + totalram_pages();
	case VT_WMARK_AT:
	case VT_WMARK_AT_TWO_ZONES:
		return file + free;
	case VT_WMARK_BELOW:
		return file + free - 1;
	default:
		return 0;
	}
}

/*
 * Set the high watermarks of the node's zones with memory to add up to
 * @wmark: all of it in the highest zone, or for VT_WMARK_AT_TWO_ZONES half
 * of it in the lowest, which then has memory too.
 */
static void vt_set_high_wmarks(struct vt_node *node,
			       const struct vt_prepare_case *c,
			       unsigned long wmark)
{
	struct zone *low = &node->pgdat->node_zones[0];
	struct zone *high = &node->pgdat->node_zones[MAX_NR_ZONES - 1];

	if (c->high_wmark == VT_WMARK_AT_TWO_ZONES) {
		atomic_long_set(&low->managed_pages, VT_LOTS);
		low->_watermark[WMARK_HIGH] = wmark / 2;
		wmark -= wmark / 2;
	}
	high->_watermark[WMARK_HIGH] = wmark;
}

/*
 * prepare_scan_control() on the classic LRU. Reclaim calls it at the start
 * of every round with the scan_control of the round before: each output
 * starts as the opposite of what the case expects, so that one it leaves
 * alone shows. Free memory is the system's and may move while the test
 * runs: the call is repeated until free memory was the same before and
 * after it.
 */
static void prepare_scan_control_outputs_test(struct kunit *test)
{
	const struct vt_prepare_case *c = test->param_value;
	struct vt_node node = vt_node_create(test);
	struct lruvec *lruvec = node.lruvec;
	struct scan_control sc;
	unsigned long free;
	int tries;

	if (c->high_wmark == VT_WMARK_AT_TWO_ZONES && MAX_NR_ZONES < 2)
		kunit_skip(test, "one zone only");
	vt_switch_lru_gen(test, false);
	lruvec->anon_cost = 3;
	lruvec->file_cost = 5;
	vt_set_refaults(test, &node, c->anon_refaulted, c->file_refaulted);
	vt_set_lists(test, &node, c->lists);

	for (tries = 0; tries < 10; tries++) {
		free = vt_free_pages(&node);
		vt_set_high_wmarks(&node, c, vt_high_wmark(c, free));
		sc = (struct scan_control) {
			.priority = DEF_PRIORITY,
			.reclaim_idx = MAX_NR_ZONES - 1,
			.force_deactivate = c->force_deactivate,
			.no_cache_trim_mode = c->no_cache_trim_mode,
			.may_deactivate = ~c->may_deactivate &
					  (DEACTIVATE_ANON | DEACTIVATE_FILE),
			.cache_trim_mode = !c->cache_trim_mode,
			.file_is_tiny = !c->file_is_tiny,
		};
		prepare_scan_control(node.pgdat, &sc);
		if (vt_free_pages(&node) == free)
			break;
	}
	KUNIT_ASSERT_LT_MSG(test, tries, 10, "free memory never held still");

	KUNIT_EXPECT_EQ_MSG(test, c->may_deactivate,
			    (unsigned int)sc.may_deactivate, "may_deactivate");
	KUNIT_EXPECT_EQ_MSG(test, c->cache_trim_mode, (bool)sc.cache_trim_mode,
			    "cache_trim_mode");
	KUNIT_EXPECT_EQ_MSG(test, c->file_is_tiny, (bool)sc.file_is_tiny,
			    "file_is_tiny");
	KUNIT_EXPECT_EQ_MSG(test, 3UL, sc.anon_cost, "anon_cost");
	KUNIT_EXPECT_EQ_MSG(test, 5UL, sc.file_cost, "file_cost");
}

/*
 * Under the multi-gen LRU, prepare_scan_control() decides nothing: the
 * classic LRU's outputs stay as the round before left them, though file
 * refaulted and the lruvec's costs moved, which on the classic LRU would
 * change every one of them.
 */
static void prepare_scan_control_mglru_decides_nothing_test(struct kunit *test)
{
	struct vt_node node = vt_node_create(test);
	const unsigned long lists[NR_LRU_LISTS] = VT_BALANCED;
	struct scan_control sc = {
		.priority = DEF_PRIORITY,
		.reclaim_idx = MAX_NR_ZONES - 1,
		.may_deactivate = DEACTIVATE_ANON,
		.cache_trim_mode = 1,
		.file_is_tiny = 1,
		.anon_cost = 7,
		.file_cost = 11,
	};

	vt_switch_lru_gen(test, true);
	node.lruvec->anon_cost = 3;
	node.lruvec->file_cost = 5;
	vt_set_refaults(test, &node, false, true);
	vt_set_lists(test, &node, lists);

	prepare_scan_control(node.pgdat, &sc);

	KUNIT_EXPECT_EQ_MSG(test, (unsigned int)DEACTIVATE_ANON,
			    (unsigned int)sc.may_deactivate, "may_deactivate");
	KUNIT_EXPECT_TRUE_MSG(test, sc.cache_trim_mode, "cache_trim_mode");
	KUNIT_EXPECT_TRUE_MSG(test, sc.file_is_tiny, "file_is_tiny");
	KUNIT_EXPECT_EQ_MSG(test, 7UL, sc.anon_cost, "anon_cost");
	KUNIT_EXPECT_EQ_MSG(test, 11UL, sc.file_cost, "file_cost");
}

struct vt_count_case {
	const char *desc;
	bool no_swap;
	bool may_swap_off;
	int swappiness;
	int priority;
	bool file_is_tiny;
	bool cache_trim_mode;
	unsigned long anon_cost;
	unsigned long file_cost;
	const unsigned long *lists;	/* NULL: vt_count_lists */
	/* expected */
	unsigned long nr[NR_LRU_LISTS];
};

/* 1000, 500, 2000 and 250 pages to scan at priority 2, before balancing. */
static const unsigned long vt_count_lists[NR_LRU_LISTS] =
	VT_LISTS(4000, 2000, 8000, 1000);

/* Every list shorter than SWAP_CLUSTER_MAX (32) pages. */
static const unsigned long vt_short_lists[NR_LRU_LISTS] =
	VT_LISTS(31, 5, 20, 1);

/*
 * get_scan_count()'s page counts: each list's size >> priority, then for
 * the fractions docs/suites.md states, with anon_cost' = anon + file +
 * anon_cost and file_cost' = anon + file + file_cost, and total' their sum:
 * anon swappiness * (total' + 1) / (anon_cost' + 1), file (200 -
 * swappiness) * (total' + 1) / (file_cost' + 1), each list its share of
 * anon + file, all rounded down. Costs 1 and 1 give 3, 3 and 6: anon 60 *
 * 7 / 4 = 105 and file 140 * 7 / 4 = 245 at swappiness 60, 3/10 and 7/10.
 * 6.12 works the fractions out inside get_scan_count() (7.3's test of
 * calculate_pressure_balance() is left out there): these exact counts pin
 * their rounding, which 7.3's get_scan_count rows do not.
 */
static const struct vt_count_case vt_count_cases[] = {
	{ .desc = "no swap space: file only",
	  .no_swap = true, .swappiness = 60, .priority = 2,
	  .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(0, 0, 2000, 250) },
	{ .desc = "may_swap clear: file only",
	  .may_swap_off = true, .swappiness = 60, .priority = 2,
	  .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(0, 0, 2000, 250) },
	{ .desc = "priority 0: every list whole, before tiny file and cache trim",
	  .swappiness = 60, .priority = 0, .file_is_tiny = true,
	  .cache_trim_mode = true, .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(4000, 2000, 8000, 1000) },
	{ .desc = "priority 0, lists under SWAP_CLUSTER_MAX: every list whole",
	  .swappiness = 60, .priority = 0, .anon_cost = 1, .file_cost = 1,
	  .lists = vt_short_lists, .nr = VT_LISTS(31, 5, 20, 1) },
	{ .desc = "priority 0, swappiness 0: by fraction, file only",
	  .swappiness = 0, .priority = 0, .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(0, 0, 8000, 1000) },
	{ .desc = "priority 0, swappiness 0, file tiny: anon only",
	  .swappiness = 0, .priority = 0, .file_is_tiny = true,
	  .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(4000, 2000, 0, 0) },
	{ .desc = "priority 1: half of each list, by fraction",
	  .swappiness = 60, .priority = 1, .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(600, 300, 2800, 350) },
	{ .desc = "file tiny: anon only, before cache trim",
	  .swappiness = 60, .priority = 2, .file_is_tiny = true,
	  .cache_trim_mode = true, .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(1000, 500, 0, 0) },
	{ .desc = "cache trim: file only",
	  .swappiness = 60, .priority = 2, .cache_trim_mode = true,
	  .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(0, 0, 2000, 250) },
	{ .desc = "equal costs, swappiness 60: anon 3/10, file 7/10",
	  .swappiness = 60, .priority = 2, .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(300, 150, 1400, 175) },
	/* 0, 0: anon 100 * 1 / 1, file 100 * 1 / 1 */
	{ .desc = "no costs yet, swappiness 100: half each",
	  .swappiness = 100, .priority = 2,
	  .nr = VT_LISTS(500, 250, 1000, 125) },
	/* 3, 1: 7, 5 and 12; anon 1300 / 8 = 162, file 1300 / 6 = 216 */
	{ .desc = "anon three times as costly, swappiness 100: less anon",
	  .swappiness = 100, .priority = 2, .anon_cost = 3, .file_cost = 1,
	  .nr = VT_LISTS(428, 214, 1142, 142) },
	/* 1, 5: 7, 11 and 18; anon 1140 / 8 = 142, file 2660 / 12 = 221 */
	{ .desc = "file five times as costly, swappiness 60: more anon",
	  .swappiness = 60, .priority = 2, .anon_cost = 1, .file_cost = 5,
	  .nr = VT_LISTS(391, 195, 1217, 152) },
	{ .desc = "swappiness 200: by fraction, anon only",
	  .swappiness = 200, .priority = 2, .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(1000, 500, 0, 0) },
	/* 0, 0, 1 and 0 pages before balancing; 1 * 7/10 rounds down */
	{ .desc = "lists under 2^priority pages: nothing to scan",
	  .swappiness = 60, .priority = DEF_PRIORITY,
	  .anon_cost = 1, .file_cost = 1,
	  .nr = VT_LISTS(0, 0, 0, 0) },
};

KUNIT_ARRAY_PARAM_DESC(vt_count, vt_count_cases, desc);

/* get_scan_count() as shrink_lruvec() calls it: no lock held. */
static void get_scan_count_test(struct kunit *test)
{
	const struct vt_count_case *c = test->param_value;
	struct vt_node node = vt_node_create(test);
	struct scan_control sc = {
		.may_swap = !c->may_swap_off,
		.priority = c->priority,
		.reclaim_idx = MAX_NR_ZONES - 1,
		.file_is_tiny = c->file_is_tiny,
		.cache_trim_mode = c->cache_trim_mode,
		.anon_cost = c->anon_cost,
		.file_cost = c->file_cost,
	};
	unsigned long nr[NR_LRU_LISTS] = {};
	enum lru_list lru;

	mm_kunit_set_swap(test, c->no_swap ? 0 : VT_LOTS);
	mm_kunit_set_knob(test, vm_swappiness, c->swappiness);
	vt_set_lists(test, &node, c->lists ?: vt_count_lists);

	get_scan_count(node.lruvec, &sc, nr);

	for_each_evictable_lru(lru)
		KUNIT_EXPECT_EQ_MSG(test, c->nr[lru], nr[lru], "%s",
				    vt_lru_names[lru]);
}

struct vt_balance_case {
	const char *desc;
	bool file_refaulted;		/* WORKINGSET_ACTIVATE_FILE moved */
	bool inactive_file_low;
	bool force_deactivate;
	bool no_swap;
	int swappiness;
	/* expected */
	bool cache_trim_mode;
	bool deactivate_file;
	bool scan_anon;
};

/*
 * File refaults since the last snapshot, or a low inactive file list, let
 * reclaim deactivate file and turn cache trim mode off; only plenty of
 * inactive file that is not thrashing turns it on, and then only file is
 * scanned. With swap and file refaulting, anon must be scanned too. Without
 * swap, or with swappiness 0, anon is not scanned.
 */
static const struct vt_balance_case vt_balance_cases[] = {
	{ .desc = "no refaults, plenty of inactive file: cache trim, file only",
	  .swappiness = 60, .cache_trim_mode = true },
	{ .desc = "file refaults: no cache trim, anon scanned",
	  .file_refaulted = true, .swappiness = 60, .deactivate_file = true,
	  .scan_anon = true },
	{ .desc = "inactive file low: no cache trim, anon scanned",
	  .inactive_file_low = true, .swappiness = 60,
	  .deactivate_file = true, .scan_anon = true },
	{ .desc = "force_deactivate: no cache trim, anon scanned",
	  .force_deactivate = true, .swappiness = 60, .deactivate_file = true,
	  .scan_anon = true },
	{ .desc = "file refaults but no swap: file only",
	  .file_refaulted = true, .no_swap = true, .swappiness = 60,
	  .deactivate_file = true },
	{ .desc = "file refaults but swappiness 0: file only",
	  .file_refaulted = true, .swappiness = 0, .deactivate_file = true },
};

KUNIT_ARRAY_PARAM_DESC(vt_balance, vt_balance_cases, desc);

static void prepare_scan_control_test(struct kunit *test)
{
	const struct vt_balance_case *c = test->param_value;
	struct vt_node node = vt_node_create(test);
	struct lruvec *lruvec = node.lruvec;
	struct scan_control sc = {
		.gfp_mask = GFP_KERNEL,
		.priority = DEF_PRIORITY,
		.may_swap = 1,
		.reclaim_idx = MAX_NR_ZONES - 1,
		.force_deactivate = c->force_deactivate,
	};
	const unsigned long lists[NR_LRU_LISTS] =
		VT_LISTS(VT_LOTS, VT_LOTS,
			 c->inactive_file_low ? VT_LOTS / 64 : VT_LOTS,
			 VT_LOTS / 2);
	unsigned long nr[NR_LRU_LISTS] = {};

	vt_switch_lru_gen(test, false);
	mm_kunit_set_swap(test, c->no_swap ? 0 : VT_LOTS);
	mm_kunit_set_knob(test, vm_swappiness, c->swappiness);
	vt_set_lists(test, &node, lists);
	lruvec->anon_cost = 1;
	lruvec->file_cost = 1;
	vt_set_refaults(test, &node, false, c->file_refaulted);

	prepare_scan_control(node.pgdat, &sc);
	get_scan_count(lruvec, &sc, nr);

	KUNIT_EXPECT_EQ_MSG(test, c->cache_trim_mode, (bool)sc.cache_trim_mode,
			    "cache_trim_mode");
	KUNIT_EXPECT_EQ_MSG(test, c->deactivate_file,
			    !!(sc.may_deactivate & DEACTIVATE_FILE),
			    "may deactivate file");
	KUNIT_EXPECT_FALSE_MSG(test, sc.file_is_tiny, "file_is_tiny");
	KUNIT_EXPECT_GT_MSG(test, nr[LRU_INACTIVE_FILE], 0UL,
			    "inactive file scanned");
	KUNIT_EXPECT_EQ_MSG(test, c->scan_anon, nr[LRU_INACTIVE_ANON] > 0,
			    "inactive anon scanned (nr %lu)",
			    nr[LRU_INACTIVE_ANON]);
}

static struct kunit_case vt_balance_test_cases[] = {
	KUNIT_CASE_PARAM(prepare_scan_control_test, vt_balance_gen_params),
	KUNIT_CASE_PARAM(prepare_scan_control_outputs_test, vt_prepare_gen_params),
	KUNIT_CASE(prepare_scan_control_mglru_decides_nothing_test),
	KUNIT_CASE_PARAM(get_scan_count_test, vt_count_gen_params),
	{}
};

static struct kunit_suite vt_balance_suite = {
	.name = "mm_vmscan_6_12_scan_balance",
	.test_cases = vt_balance_test_cases,
};

kunit_test_suites(&vt_mglru_suite, &vt_balance_suite);

/* 7.3's aging of an lruvec, for 7.3's workingset suite. */
#include "lru_gen_age_kunit.h"

#endif /* CONFIG_MM_VMSCAN_KUNIT_TEST */

#endif /* MM_TESTS_VMSCAN_6_12_KUNIT_H */
