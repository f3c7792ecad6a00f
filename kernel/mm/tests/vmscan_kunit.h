/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for reclaim in mm/vmscan.c.
 *
 * This file is included at the bottom of mm/vmscan.c so that the tests can
 * call its static functions.
 *
 * The tests work on a node and lruvec of their own: a pglist_data allocated
 * here, with its lruvec initialised by the real lruvec_init(). Folios are
 * real folios, allocated here and never put on the system's LRU; each is
 * taken off the test's lruvec again when the test ends.
 *
 * Suites:
 *  - mm_vmscan_mglru: which generation lru_gen_add_folio() gives a folio,
 *    and what sort_folio() does with a folio of the oldest generation.
 */

#ifdef CONFIG_MM_VMSCAN_KUNIT_TEST

#include <kunit/test.h>

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
 */
static struct vt_node vt_node_create(struct kunit *test)
{
	struct vt_node node = {};
	struct pglist_data *pgdat;
	int z;

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

static void vt_free_folio(void *data)
{
	struct vt_folio *vf = data;

	if (folio_lru_gen(vf->folio) >= 0)
		lru_gen_del_folio(vf->lruvec, vf->folio, false);
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

static bool vt_on_list(struct list_head *head, struct folio *folio)
{
	struct folio *pos;

	list_for_each_entry(pos, head, lru)
		if (pos == folio)
			return true;
	return false;
}

/* The generation lists a folio of @type in @zone can be on. */
#define vt_list(lruvec, gen, type, zone) \
	(&(lruvec)->lrugen.folios[gen][type][zone])

/* -------------------------------------------------------------------------
 * mm_vmscan_mglru: lru_gen_add_folio()
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
};

/*
 * Active: the youngest generation (max_seq). Anon not in the swap cache,
 * or under reclaim and dirty or under writeback: max_seq - 1. Added by
 * reclaim, or with only MIN_NR_GENS generations: the oldest (min_seq).
 * Anything else: the second oldest (min_seq + 1), so that page cache is
 * not evicted before the refault feedback can act.
 */
static const struct vt_add_case vt_add_cases[] = {
	{ "active page cache: youngest", BIT(PG_active), false, 0, VT_MAX_SEQ },
	{ "active anon: youngest", BIT(PG_active) | BIT(PG_swapbacked), false, 0,
	  VT_MAX_SEQ },
	{ "anon not in swap cache: second youngest", BIT(PG_swapbacked), false, 0,
	  VT_MAX_SEQ - 1 },
	{ "anon in swap cache: second oldest",
	  BIT(PG_swapbacked) | BIT(PG_swapcache), false, 0, 1 },
	{ "under reclaim and dirty: second youngest",
	  BIT(PG_reclaim) | BIT(PG_dirty), false, 0, VT_MAX_SEQ - 1 },
	{ "under reclaim and writeback: second youngest",
	  BIT(PG_reclaim) | BIT(PG_writeback), false, 0, VT_MAX_SEQ - 1 },
	{ "under reclaim, clean: second oldest", BIT(PG_reclaim), false, 0, 1 },
	{ "added by reclaim: oldest", 0, true, 0, 0 },
	{ "only MIN_NR_GENS generations: oldest", 0, false, VT_MAX_SEQ - MIN_NR_GENS,
	  VT_MAX_SEQ - MIN_NR_GENS },
	{ "inactive page cache: second oldest", 0, false, 0, 1 },
};

static void vt_add_case_desc(const struct vt_add_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vt_add, vt_add_cases, vt_add_case_desc);

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
	lrugen->min_seq[type] = c->min_seq;
	gen = lru_gen_from_seq(c->seq);
	list = vt_list(node.lruvec, gen, type, zone);
	KUNIT_ASSERT_TRUE(test, lru_gen_add_folio(node.lruvec, earlier,
						  c->reclaiming));

	KUNIT_ASSERT_TRUE_MSG(test,
			      lru_gen_add_folio(node.lruvec, folio, c->reclaiming),
			      "%s: added", c->desc);
	KUNIT_EXPECT_EQ_MSG(test, gen, folio_lru_gen(folio),
			    "%s: generation (seq %lu expected)", c->desc, c->seq);
	KUNIT_EXPECT_TRUE_MSG(test, vt_on_list(list, folio),
			      "%s: on the list of its generation", c->desc);
	KUNIT_EXPECT_EQ_MSG(test, 2L, lrugen->nr_pages[gen][type][zone],
			    "%s: pages in the generation", c->desc);
	/*
	 * A folio added back by reclaim goes to the tail, to be evicted
	 * first; any other to the head.
	 */
	KUNIT_EXPECT_PTR_EQ_MSG(test, folio,
				c->reclaiming ? list_last_entry(list, struct folio, lru) :
						list_first_entry(list, struct folio, lru),
				"%s: at the %s", c->desc,
				c->reclaiming ? "tail" : "head");
	/*
	 * The generation now says what PG_active said: an active folio loses
	 * PG_active, PG_referenced and its access count (not PG_workingset);
	 * the others keep their access history.
	 */
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_active(folio),
			       "%s: PG_active", c->desc);
	KUNIT_EXPECT_EQ_MSG(test, !active, folio_test_referenced(folio),
			    "%s: PG_referenced", c->desc);
	KUNIT_EXPECT_EQ_MSG(test, active ? 0UL : 1UL, vt_refs_field(folio),
			    "%s: access count", c->desc);
	KUNIT_EXPECT_TRUE_MSG(test, folio_test_workingset(folio),
			      "%s: PG_workingset", c->desc);
}

static void lru_gen_add_folio_unevictable_test(struct kunit *test)
{
	struct vt_node node = vt_node_create(test);
	struct folio *folio = vt_folio_create(test, &node, BIT(PG_unevictable));

	node.lruvec->lrugen.enabled = true;
	KUNIT_EXPECT_FALSE(test, lru_gen_add_folio(node.lruvec, folio, false));
	KUNIT_EXPECT_EQ(test, -1, folio_lru_gen(folio));
}

/* -------------------------------------------------------------------------
 * mm_vmscan_mglru: sort_folio()
 */

enum vt_sort_result {
	VT_LEFT,		/* false: left for eviction */
	VT_PROMOTED,		/* true: moved to the generation it has */
	VT_PROTECTED,		/* true: next generation, counted protected */
	VT_INELIGIBLE,		/* true: next generation, not counted */
};

struct vt_sort_case {
	const char *desc;
	bool promoted;		/* the folio is not in the oldest generation */
	int refs;		/* folio_lru_refs(); -1: saturated */
	int tier_idx;
	bool ineligible;	/* the folio's zone is above reclaim_idx */
	enum vt_sort_result result;
};

/* BIT(LRU_REFS_WIDTH): the access count has saturated. */
#define VT_REFS_SATURATED	(-1)

/*
 * A folio whose generation is no longer the oldest was promoted: it moves
 * to its generation. One whose tier (order_base_2(refs + 1)) is above
 * tier_idx, or whose refs have saturated at BIT(LRU_REFS_WIDTH), is
 * protected: it moves to the next generation and is counted in
 * lrugen->protected for its tier. One in a zone above reclaim_idx moves to
 * the next generation. Anything else is left for eviction.
 */
static const struct vt_sort_case vt_sort_cases[] = {
	{ "promoted", true, 0, 0, false, VT_PROMOTED },
	{ "tier 1 above tier_idx 0: protected", false, 1, 0, false, VT_PROTECTED },
	{ "tier 1 at tier_idx 1: left", false, 1, 1, false, VT_LEFT },
	{ "saturated refs: protected at any tier_idx", false, VT_REFS_SATURATED,
	  MAX_NR_TIERS - 1, false, VT_PROTECTED },
	{ "zone above reclaim_idx: moved on", false, 0, 0, true, VT_INELIGIBLE },
	{ "no refs: left for eviction", false, 0, 0, false, VT_LEFT },
};

static void vt_sort_case_desc(const struct vt_sort_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vt_sort, vt_sort_cases, vt_sort_case_desc);

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
	unsigned long protected_before[MAX_NR_TIERS - 1];
	struct folio *folio;
	int type, zone, gen, old_gen, refs, tier, hist, i;
	bool moved;

	folio = vt_folio_create(test, &node, 0);
	type = folio_is_file_lru(folio);
	zone = folio_zonenum(folio);
	lrugen->enabled = true;
	/* reclaiming: the oldest generation; otherwise the second oldest. */
	KUNIT_ASSERT_TRUE(test, lru_gen_add_folio(node.lruvec, folio, !c->promoted));
	old_gen = folio_lru_gen(folio);
	refs = vt_give_refs(folio, c->refs);
	KUNIT_ASSERT_EQ_MSG(test, refs, folio_lru_refs(folio), "%s: refs", c->desc);
	tier = lru_tier_from_refs(refs);
	if (c->ineligible)
		sc.reclaim_idx = zone - 1;
	hist = lru_hist_from_seq(lrugen->min_seq[type]);
	for (i = 0; i < MAX_NR_TIERS - 1; i++)
		protected_before[i] = lrugen->protected[hist][type][i];

	moved = sort_folio(node.lruvec, folio, &sc, c->tier_idx);

	gen = folio_lru_gen(folio);
	switch (c->result) {
	case VT_LEFT:
		KUNIT_EXPECT_FALSE_MSG(test, moved, "%s", c->desc);
		KUNIT_EXPECT_EQ_MSG(test, old_gen, gen, "%s: generation", c->desc);
		break;
	case VT_PROMOTED:
		KUNIT_EXPECT_TRUE_MSG(test, moved, "%s", c->desc);
		KUNIT_EXPECT_EQ_MSG(test, old_gen, gen, "%s: generation", c->desc);
		break;
	case VT_PROTECTED:
	case VT_INELIGIBLE:
		KUNIT_EXPECT_TRUE_MSG(test, moved, "%s", c->desc);
		KUNIT_EXPECT_EQ_MSG(test, (old_gen + 1) % (int)MAX_NR_GENS, gen,
				    "%s: next generation", c->desc);
		KUNIT_EXPECT_EQ_MSG(test, 0, folio_lru_refs(folio),
				    "%s: access history cleared", c->desc);
		break;
	}
	KUNIT_EXPECT_TRUE_MSG(test, vt_on_list(vt_list(node.lruvec, gen, type, zone),
					       folio),
			      "%s: on the list of generation %d", c->desc, gen);
	for (i = 0; i < MAX_NR_TIERS - 1; i++) {
		unsigned long expected = protected_before[i] +
			(c->result == VT_PROTECTED && i == tier - 1 ? 1 : 0);

		KUNIT_EXPECT_EQ_MSG(test, expected, lrugen->protected[hist][type][i],
				    "%s: protected[tier %d] (folio in tier %d)",
				    c->desc, i + 1, tier);
	}
}

/* -------------------------------------------------------------------------
 * mm_vmscan_mglru: counting accesses up to saturation
 */

static void vt_restore_lru_gen(void *enabled)
{
	lru_gen_change_state((bool)(long)enabled);
}

/* Turn the multi-gen LRU on for the system, until the test ends. */
static void vt_enable_lru_gen(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, vt_restore_lru_gen,
						  (void *)(long)lru_gen_enabled()));
	lru_gen_change_state(true);
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
	int n;

	vt_enable_lru_gen(test);
	for (n = 1; n <= max + 3; n++) {
		folio_mark_accessed(folio);
		KUNIT_ASSERT_EQ_MSG(test, min(n - 1, max), folio_lru_refs(folio),
				    "refs after %d accesses (LRU_REFS_WIDTH %d)",
				    n, LRU_REFS_WIDTH);
	}

	node.lruvec->lrugen.enabled = true;
	KUNIT_ASSERT_TRUE(test, lru_gen_add_folio(node.lruvec, folio, true));
	KUNIT_ASSERT_EQ(test, 0, folio_lru_gen(folio));
	KUNIT_EXPECT_TRUE(test, sort_folio(node.lruvec, folio, &sc,
					   MAX_NR_TIERS - 1));
	KUNIT_EXPECT_EQ_MSG(test, 1, folio_lru_gen(folio),
			    "saturated folio moved to the next generation");
}

static struct kunit_case vt_mglru_cases[] = {
	KUNIT_CASE_PARAM(lru_gen_add_folio_test, vt_add_gen_params),
	KUNIT_CASE(lru_gen_add_folio_unevictable_test),
	KUNIT_CASE_PARAM(sort_folio_test, vt_sort_gen_params),
	KUNIT_CASE(folio_mark_accessed_refs_test),
	{}
};

static struct kunit_suite vt_mglru_suite = {
	.name = "mm_vmscan_mglru",
	.test_cases = vt_mglru_cases,
};

kunit_test_suites(&vt_mglru_suite);

#endif /* CONFIG_MM_VMSCAN_KUNIT_TEST */
