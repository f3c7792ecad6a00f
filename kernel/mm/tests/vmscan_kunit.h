/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for reclaim in mm/vmscan.c.
 *
 * This file is included at the end of mm/vmscan.c so that the tests can
 * call its static functions.
 *
 * Suites:
 *  - mm_vmscan_mglru: the multi-gen LRU. Which generation
 *    lru_gen_folio_seq() gives a folio and where lru_gen_add_folio() puts
 *    it; the access count and tier of a folio; what sort_folio() does with
 *    a folio of the oldest generation; the refault controller
 *    (positive_ctrl_err(), and read_ctrl_pos() through get_type_to_scan()
 *    and get_tier_idx(): its min(tier, MAX_NR_TIERS - 1) builds only
 *    where the compiler can see the tier is not negative).
 *  - mm_vmscan_scan_balance: the classic LRU's choice between anon and
 *    file: prepare_scan_control() and get_scan_count().
 *
 * Folios are real folios, charged as page cache is (to the root memcg,
 * when there is a memory controller), and go on the lruvec the kernel's
 * own folio_lruvec_lock_irq() finds for them: a real lruvec of a real
 * node. A test that puts folios on that lruvec does so under its lru_lock,
 * as every caller of lru_gen_add_folio(), lru_gen_del_folio() and
 * sort_folio() does, and takes them off again, and puts back whatever
 * else it changed on the lruvec, before it drops the lock: no other user
 * of the lruvec ever sees them. Only the prepare_scan_control() and
 * get_scan_count() tests leave their folios on the lists while they drop
 * the lock (those functions run without it), without PG_lru, which makes
 * reclaim pass them over. The controller functions read
 * nothing of an lruvec but its lrugen counts: they are tested on an
 * lruvec of the test's own that no node or memcg holds.
 */

#ifdef CONFIG_MM_VMSCAN_KUNIT_TEST

#include <kunit/test.h>

#include "memcg_kunit.h"
#include "mm_kunit.h"

/* -------------------------------------------------------------------------
 * Test folios
 */

struct vmscan_test_folio {
	struct folio *folio;
	unsigned long flags;	/* as allocated, put back before freeing */
};

static void vmscan_test_folio_free(void *data)
{
	struct vmscan_test_folio *tf = data;

	WRITE_ONCE(tf->folio->flags.f, tf->flags);
	folio_put(tf->folio);
}

/*
 * A new folio of @order with the page flags @flags on top of those it was
 * allocated with. It is charged as page cache is, to @memcg (NULL: the
 * memcg of the current task, the root memcg in a kernel thread), so that
 * folio_lruvec() is the lruvec reclaim would find it on.
 */
static struct folio *vmscan_test_memcg_folio_create(struct kunit *test,
						    unsigned int order,
						    unsigned long flags,
						    struct mem_cgroup *memcg)
{
	struct vmscan_test_folio *tf;

	tf = kunit_kzalloc(test, sizeof(*tf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tf);
	tf->folio = folio_alloc(GFP_KERNEL, order);
	KUNIT_ASSERT_NOT_NULL(test, tf->folio);
	tf->flags = READ_ONCE(tf->folio->flags.f);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, vmscan_test_folio_free,
						  tf));
	KUNIT_ASSERT_EQ(test, 0, mm_kunit_memcg_charge(tf->folio, memcg));
	WRITE_ONCE(tf->folio->flags.f, tf->flags | flags);
	return tf->folio;
}

static struct folio *vmscan_test_folio_create(struct kunit *test,
					      unsigned int order,
					      unsigned long flags)
{
	return vmscan_test_memcg_folio_create(test, order, flags, NULL);
}

/* Skip unless the multi-gen LRU is on (@on) or off (!@on). */
static void vmscan_test_need_lru_gen(struct kunit *test, bool on)
{
	if (lru_gen_enabled() != on)
		kunit_skip(test, "the multi-gen LRU is %s", on ? "off" : "on");
}

/* Skip unless this configuration's LRU_REFS_WIDTH fits the row. */
static void vmscan_test_need_refs_width(struct kunit *test, bool fits)
{
	if (!fits)
		kunit_skip(test, "LRU_REFS_WIDTH is %d", LRU_REFS_WIDTH);
}

/* The access count beyond PG_referenced, without PG_workingset. */
static unsigned long vmscan_test_refs_field(unsigned long flags)
{
	return (flags & LRU_REFS_MASK) >> LRU_REFS_PGOFF;
}

/* -1 in a row's refs: BIT(LRU_REFS_WIDTH), the most the refs field holds. */
#define VMSCAN_TEST_REFS_FULL	(-1)

/*
 * Give @folio the access count folio_lru_refs() is to read: PG_referenced
 * and @refs - 1 in the refs field, or nothing for 0. False if this
 * configuration's refs field is too narrow for @refs.
 */
static bool vmscan_test_set_refs(struct folio *folio, int refs)
{
	unsigned long flags = READ_ONCE(folio->flags.f) & ~LRU_REFS_FLAGS;

	if (refs == VMSCAN_TEST_REFS_FULL)
		refs = BIT(LRU_REFS_WIDTH);
	if (refs > BIT(LRU_REFS_WIDTH))
		return false;
	if (refs)
		flags |= BIT(PG_referenced) |
			 ((refs - 1UL) << LRU_REFS_PGOFF);
	WRITE_ONCE(folio->flags.f, flags);
	return true;
}

/* -------------------------------------------------------------------------
 * The lruvec of the test's folios
 */

/*
 * Lock the lruvec of @folio, as reclaim and mm/swap.c do, and let
 * lru_gen_add_folio() take folios on it, as lru_gen_change_state() does
 * under the same lock when the multi-gen LRU is switched on. Returns
 * whether it took them already; vmscan_test_unlock() puts that back.
 */
static struct lruvec *vmscan_test_lock(struct folio *folio, bool *enabled)
{
	struct lruvec *lruvec = folio_lruvec_lock_irq(folio);

	*enabled = lruvec->lrugen.enabled;
	lruvec->lrugen.enabled = true;
	return lruvec;
}

/* Take @folio off the lruvec if it is on one of its generations. */
static void vmscan_test_del(struct lruvec *lruvec, struct folio *folio)
{
	if (folio_lru_gen(folio) >= 0)
		lru_gen_del_folio(lruvec, folio, true);
}

static void vmscan_test_unlock(struct lruvec *lruvec, bool enabled)
{
	lruvec->lrugen.enabled = enabled;
	lruvec_unlock_irq(lruvec);
}

/* The agings that take an lruvec's generations past its first ones. */
#define VMSCAN_TEST_AGINGS	(MAX_NR_GENS + 1)

/*
 * A memcg of the test's own whose lruvecs, one a node, have been aged
 * VMSCAN_TEST_AGINGS times, as the debugfs file ages them: past the first
 * MAX_NR_GENS generations, so that a sequence number and the generation it
 * is in (lru_gen_from_seq()), or its history slot (lru_hist_from_seq()),
 * differ. The node's own lruvecs are the system's to age: without a memory
 * controller the test is skipped.
 */
static struct mem_cgroup *vmscan_test_aged_memcg(struct kunit *test)
{
	struct mem_cgroup *memcg;
	int nid, i;

	if (mem_cgroup_disabled())
		kunit_skip(test, "needs a memcg of the test's own to age");
	memcg = mm_kunit_memcg_create(test);
	for_each_node_state(nid, N_MEMORY) {
		struct lruvec *lruvec = mem_cgroup_lruvec(memcg, NODE_DATA(nid));

		for (i = 0; i < VMSCAN_TEST_AGINGS; i++)
			KUNIT_ASSERT_TRUE(test, mm_kunit_lru_gen_age(lruvec));
		KUNIT_ASSERT_GE(test, READ_ONCE(lruvec->lrugen.min_seq[LRU_GEN_FILE]),
				(unsigned long)MAX_NR_GENS);
	}
	return memcg;
}

/* -------------------------------------------------------------------------
 * mm_vmscan_mglru: lru_gen_folio_seq()
 */

/*
 * The generation a folio enters, by the rules of lru_gen_folio_seq()'s
 * table: how many generations below max_seq (plus one) it goes, then no
 * lower than the oldest generation of its type.
 */
static unsigned long vmscan_test_model_seq(unsigned long flags,
					   bool reclaiming,
					   unsigned long max_seq,
					   unsigned long min_seq)
{
	bool anon = flags & BIT(PG_swapbacked);
	bool swapcache = anon && (flags & BIT(PG_swapcache));
	bool workingset = flags & BIT(PG_workingset);
	unsigned long age;

	if (flags & BIT(PG_active))
		age = workingset ? MIN_NR_GENS - 1 : MIN_NR_GENS;
	else if (reclaiming)
		age = MAX_NR_GENS;
	else if ((anon && !swapcache) ||
		 ((flags & BIT(PG_reclaim)) &&
		  (flags & (BIT(PG_dirty) | BIT(PG_writeback)))))
		age = MIN_NR_GENS;
	else if (workingset || (flags & BIT(PG_referenced)))
		age = MAX_NR_GENS - 1;
	else
		age = MAX_NR_GENS;
	return max(max_seq + 1 - age, min_seq);
}

struct vmscan_test_seq_case {
	const char *desc;
	unsigned long flags;
	bool reclaiming;
	unsigned long max_seq;
	unsigned long min_seq_anon;
	unsigned long min_seq_file;
	unsigned long seq;	/* expected */
};

/*
 * max_seq 7 with four generations (oldest 4): an active folio enters the
 * youngest (7) with PG_workingset, else the second youngest (6); one added
 * by reclaim the oldest (4); anon not in the swap cache, or under reclaim
 * and dirty or under writeback, the second youngest (6); anything else
 * the oldest (4), or the second oldest (5) with PG_workingset or
 * PG_referenced. With fewer generations, never below the oldest of the
 * folio's own type.
 */
static const struct vmscan_test_seq_case vmscan_test_seq_cases[] = {
	{
		.desc = "active, workingset: youngest",
		.flags = BIT(PG_active) | BIT(PG_workingset),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 7,
	},
	{
		.desc = "active: second youngest",
		.flags = BIT(PG_active),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 6,
	},
	{
		.desc = "active, referenced: second youngest",
		.flags = BIT(PG_active) | BIT(PG_referenced),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 6,
	},
	{
		.desc = "active anon, workingset, reclaiming: youngest",
		.flags = BIT(PG_swapbacked) | BIT(PG_active) |
			 BIT(PG_workingset),
		.reclaiming = true,
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 7,
	},
	{
		.desc = "reclaiming: oldest",
		.flags = BIT(PG_workingset) | BIT(PG_referenced),
		.reclaiming = true,
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 4,
	},
	{
		.desc = "reclaiming anon not in the swap cache: oldest",
		.flags = BIT(PG_swapbacked),
		.reclaiming = true,
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 4,
	},
	{
		.desc = "anon not in the swap cache: second youngest",
		.flags = BIT(PG_swapbacked),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 6,
	},
	{
		.desc = "anon in the swap cache: oldest",
		.flags = BIT(PG_swapbacked) | BIT(PG_swapcache),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 4,
	},
	{
		.desc = "anon in the swap cache, referenced: second oldest",
		.flags = BIT(PG_swapbacked) | BIT(PG_swapcache) |
			 BIT(PG_referenced),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 5,
	},
	{
		.desc = "under reclaim, dirty: second youngest",
		.flags = BIT(PG_reclaim) | BIT(PG_dirty),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 6,
	},
	{
		.desc = "under reclaim, writeback: second youngest",
		.flags = BIT(PG_reclaim) | BIT(PG_writeback),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 6,
	},
	{
		.desc = "under reclaim, clean: oldest",
		.flags = BIT(PG_reclaim),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 4,
	},
	{
		.desc = "dirty, not under reclaim: oldest",
		.flags = BIT(PG_dirty) | BIT(PG_writeback),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 4,
	},
	{
		.desc = "page cache: oldest",
		.flags = 0,
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 4,
	},
	{
		.desc = "page cache, workingset: second oldest",
		.flags = BIT(PG_workingset),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 5,
	},
	{
		.desc = "page cache, referenced: second oldest",
		.flags = BIT(PG_referenced),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 4,
		.seq = 5,
	},
	{
		.desc = "two generations of file: oldest file",
		.flags = BIT(PG_workingset),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 6,
		.seq = 6,
	},
	{
		.desc = "three generations of file: second oldest is the oldest",
		.flags = BIT(PG_referenced),
		.max_seq = 7,
		.min_seq_anon = 4,
		.min_seq_file = 5,
		.seq = 5,
	},
	{
		.desc = "two generations of anon, not of file: file's rules",
		.flags = 0,
		.max_seq = 7,
		.min_seq_anon = 6,
		.min_seq_file = 4,
		.seq = 4,
	},
	{
		.desc = "two generations of anon: oldest anon",
		.flags = BIT(PG_swapbacked) | BIT(PG_swapcache),
		.max_seq = 7,
		.min_seq_anon = 6,
		.min_seq_file = 4,
		.seq = 6,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_seq, vmscan_test_seq_cases, desc);

/*
 * An lruvec of the test's own for the functions that read nothing of an
 * lruvec but lruvec->lrugen: no node or memcg holds it, so no other code
 * can see it, and the test can give it any counts.
 */
static struct lruvec *vmscan_test_lrugen_create(struct kunit *test)
{
	struct lruvec *lruvec = kunit_kzalloc(test, sizeof(*lruvec),
					      GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, lruvec);
	return lruvec;
}

static void vmscan_test_folio_seq(struct kunit *test)
{
	const struct vmscan_test_seq_case *c = test->param_value;
	struct lruvec *lruvec = vmscan_test_lrugen_create(test);
	struct folio *folio = vmscan_test_folio_create(test, 0, c->flags);

	lruvec->lrugen.max_seq = c->max_seq;
	lruvec->lrugen.min_seq[LRU_GEN_ANON] = c->min_seq_anon;
	lruvec->lrugen.min_seq[LRU_GEN_FILE] = c->min_seq_file;

	KUNIT_EXPECT_EQ(test, c->seq,
			lru_gen_folio_seq(lruvec, folio, c->reclaiming));
}

/* -------------------------------------------------------------------------
 * mm_vmscan_mglru: lru_gen_add_folio()
 */

struct vmscan_test_add_case {
	const char *desc;
	unsigned int order;
	unsigned long flags;	/* PG_referenced means 2 refs */
	bool reclaiming;
	bool added;		/* expected */
};

/*
 * lru_gen_add_folio() puts the folio on the list of the generation
 * lru_gen_folio_seq() gives it, at the head, or at the tail when reclaim
 * adds it (to be evicted first), and counts its pages in that
 * generation. It clears PG_active, whose meaning the generation now
 * carries, and keeps PG_referenced, the refs field and PG_workingset. An
 * unevictable folio is not taken.
 */
static const struct vmscan_test_add_case vmscan_test_add_cases[] = {
	{
		.desc = "page cache",
		.order = 0,
		.flags = 0,
		.added = true,
	},
	{
		.desc = "page cache, referenced twice",
		.order = 0,
		.flags = BIT(PG_referenced),
		.added = true,
	},
	{
		.desc = "active, workingset, referenced twice",
		.order = 0,
		.flags = BIT(PG_active) | BIT(PG_workingset) |
			 BIT(PG_referenced),
		.added = true,
	},
	{
		.desc = "active, referenced twice",
		.order = 0,
		.flags = BIT(PG_active) | BIT(PG_referenced),
		.added = true,
	},
	{
		.desc = "reclaiming, workingset, referenced twice: at the tail",
		.order = 0,
		.flags = BIT(PG_workingset) | BIT(PG_referenced),
		.reclaiming = true,
		.added = true,
	},
	{
		.desc = "anon not in the swap cache",
		.order = 0,
		.flags = BIT(PG_swapbacked),
		.added = true,
	},
	{
		.desc = "anon in the swap cache, referenced twice",
		.order = 0,
		.flags = BIT(PG_swapbacked) | BIT(PG_swapcache) |
			 BIT(PG_referenced),
		.added = true,
	},
	{
		.desc = "under reclaim, dirty",
		.order = 0,
		.flags = BIT(PG_reclaim) | BIT(PG_dirty),
		.added = true,
	},
	{
		.desc = "order 2, active",
		.order = 2,
		.flags = BIT(PG_active),
		.added = true,
	},
	{
		.desc = "order 2, reclaiming: at the tail",
		.order = 2,
		.flags = 0,
		.reclaiming = true,
		.added = true,
	},
	{
		.desc = "unevictable: not taken",
		.order = 0,
		.flags = BIT(PG_unevictable),
		.added = false,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_add, vmscan_test_add_cases, desc);

/* What lru_gen_add_folio() did, seen under the lru_lock. */
struct vmscan_test_added {
	bool added;
	unsigned long max_seq;
	unsigned long min_seq;	/* of the folio's type */
	int gen;
	bool at_head;
	bool at_tail;
	long nr_pages;		/* added to the generation's count */
	unsigned long flags;	/* of the folio, once added */
};

/*
 * Add @folio after @earlier, a folio that goes to the same generation, so
 * that head and tail differ; record, take both off again.
 */
static void vmscan_test_add(struct folio *folio, struct folio *earlier,
			    bool reclaiming, struct vmscan_test_added *out)
{
	int type = folio_is_file_lru(folio);
	int zone = folio_zonenum(folio);
	struct lru_gen_folio *lrugen;
	struct lruvec *lruvec;
	struct list_head *list;
	bool enabled;
	long before;
	int gen;

	lruvec = vmscan_test_lock(folio, &enabled);
	lrugen = &lruvec->lrugen;
	out->max_seq = lrugen->max_seq;
	out->min_seq = lrugen->min_seq[type];
	gen = lru_gen_from_seq(vmscan_test_model_seq(folio->flags.f, reclaiming,
						     out->max_seq,
						     out->min_seq));
	lru_gen_add_folio(lruvec, earlier, reclaiming);
	before = lrugen->nr_pages[gen][type][zone];

	out->added = lru_gen_add_folio(lruvec, folio, reclaiming);

	out->gen = folio_lru_gen(folio);
	out->flags = READ_ONCE(folio->flags.f);
	out->nr_pages = lrugen->nr_pages[gen][type][zone] - before;
	list = &lrugen->folios[gen][type][zone];
	out->at_head = list_first_entry(list, struct folio, lru) == folio;
	out->at_tail = list_last_entry(list, struct folio, lru) == folio;
	vmscan_test_del(lruvec, folio);
	vmscan_test_del(lruvec, earlier);
	vmscan_test_unlock(lruvec, enabled);
}

/* The case's folio added to the lruvec of @memcg (NULL: the root's). */
static void vmscan_test_add_folio_of(struct kunit *test,
				     struct mem_cgroup *memcg)
{
	const struct vmscan_test_add_case *c = test->param_value;
	unsigned long keep = BIT(PG_referenced) | BIT(PG_workingset) |
			     LRU_REFS_MASK;
	struct folio *earlier, *folio;
	struct vmscan_test_added out;
	unsigned long flags, seq;

	earlier = vmscan_test_memcg_folio_create(test, 0, c->flags, memcg);
	folio = vmscan_test_memcg_folio_create(test, c->order, c->flags, memcg);
	if (c->flags & BIT(PG_referenced))
		KUNIT_ASSERT_TRUE(test, vmscan_test_set_refs(folio, 2));
	flags = READ_ONCE(folio->flags.f);

	vmscan_test_add(folio, earlier, c->reclaiming, &out);

	KUNIT_ASSERT_EQ(test, c->added, out.added);
	if (!c->added) {
		KUNIT_EXPECT_EQ(test, -1, out.gen);
		return;
	}
	seq = vmscan_test_model_seq(flags, c->reclaiming, out.max_seq,
				    out.min_seq);
	KUNIT_EXPECT_EQ_MSG(test, lru_gen_from_seq(seq), out.gen,
			    "seq %lu of max_seq %lu, min_seq %lu", seq,
			    out.max_seq, out.min_seq);
	KUNIT_EXPECT_EQ(test, (long)folio_nr_pages(folio), out.nr_pages);
	KUNIT_EXPECT_EQ(test, !c->reclaiming, out.at_head);
	KUNIT_EXPECT_EQ(test, c->reclaiming, out.at_tail);
	KUNIT_EXPECT_FALSE(test, out.flags & BIT(PG_active));
	KUNIT_EXPECT_EQ(test, flags & keep, out.flags & keep);
}

static void vmscan_test_add_folio(struct kunit *test)
{
	vmscan_test_add_folio_of(test, NULL);
}

/* The same, on an lruvec whose sequence numbers are past its generations'. */
static void vmscan_test_add_folio_aged(struct kunit *test)
{
	vmscan_test_add_folio_of(test, vmscan_test_aged_memcg(test));
}

/* -------------------------------------------------------------------------
 * mm_vmscan_mglru: access counts and tiers
 */

struct vmscan_test_refs_case {
	const char *desc;
	unsigned long flags;
	unsigned long field;	/* the refs field */
	int refs;		/* expected */
	int tier;		/* expected */
};

/*
 * folio_lru_refs() is 0 without PG_referenced, whatever the refs field
 * holds, else the refs field plus one; the tier is order_base_2() of
 * that, or the last tier for a PG_workingset folio.
 */
static const struct vmscan_test_refs_case vmscan_test_refs_cases[] = {
	{
		.desc = "nothing: tier 0",
		.flags = 0,
		.field = 0,
		.refs = 0,
		.tier = 0,
	},
	{
		.desc = "refs field without PG_referenced: ignored",
		.flags = 0,
		.field = 1,
		.refs = 0,
		.tier = 0,
	},
	{
		.desc = "PG_referenced: 1 ref, tier 0",
		.flags = BIT(PG_referenced),
		.field = 0,
		.refs = 1,
		.tier = 0,
	},
	{
		.desc = "PG_referenced and 1: 2 refs, tier 1",
		.flags = BIT(PG_referenced),
		.field = 1,
		.refs = 2,
		.tier = 1,
	},
	{
		.desc = "PG_referenced and 2: 3 refs, tier 2",
		.flags = BIT(PG_referenced),
		.field = 2,
		.refs = 3,
		.tier = 2,
	},
	{
		.desc = "PG_referenced and 3: 4 refs, tier 2",
		.flags = BIT(PG_referenced),
		.field = 3,
		.refs = 4,
		.tier = 2,
	},
	{
		.desc = "PG_workingset: last tier",
		.flags = BIT(PG_workingset),
		.field = 0,
		.refs = 0,
		.tier = MAX_NR_TIERS - 1,
	},
	{
		.desc = "PG_workingset, PG_referenced and 1: last tier",
		.flags = BIT(PG_workingset) | BIT(PG_referenced),
		.field = 1,
		.refs = 2,
		.tier = MAX_NR_TIERS - 1,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_refs, vmscan_test_refs_cases, desc);

static void vmscan_test_refs_tier(struct kunit *test)
{
	const struct vmscan_test_refs_case *c = test->param_value;
	struct folio *folio = vmscan_test_folio_create(test, 0, c->flags);
	int refs;

	vmscan_test_need_refs_width(test, c->field < BIT(LRU_REFS_WIDTH));
	WRITE_ONCE(folio->flags.f,
		   folio->flags.f | (c->field << LRU_REFS_PGOFF));

	refs = folio_lru_refs(folio);
	KUNIT_EXPECT_EQ(test, c->refs, refs);
	KUNIT_EXPECT_EQ(test, c->tier,
			lru_tier_from_refs(refs, folio_test_workingset(folio)));
}

/*
 * An access through a file descriptor under the multi-gen LRU: the first
 * sets PG_referenced, each next one adds to the refs field, and once that
 * is full PG_workingset is set.
 */
static void vmscan_test_mark_accessed(struct kunit *test)
{
	struct folio *folio = vmscan_test_folio_create(test, 0, 0);
	unsigned long n, full = BIT(LRU_REFS_WIDTH) - 1;
	unsigned long flags, field;

	vmscan_test_need_lru_gen(test, true);
	for (n = 1; n <= full + 3; n++) {
		folio_mark_accessed(folio);
		flags = READ_ONCE(folio->flags.f);
		field = min(n - 1, full);
		KUNIT_EXPECT_TRUE_MSG(test, flags & BIT(PG_referenced),
				      "access %lu", n);
		KUNIT_EXPECT_EQ_MSG(test, field, vmscan_test_refs_field(flags),
				    "access %lu", n);
		KUNIT_EXPECT_EQ_MSG(test, n > full + 1,
				    !!(flags & BIT(PG_workingset)),
				    "access %lu", n);
	}
}

struct vmscan_test_access_case {
	const char *desc;
	unsigned long flags;	/* page flags before the access */
	bool stale_refs;	/* the refs field full, without PG_referenced */
	unsigned long after;	/* PG_referenced and PG_workingset after it */
};

/*
 * One access through a file descriptor to a folio not yet counted: the
 * refs field counts only while PG_referenced is set (mmzone.h), so the
 * access starts it over at 0 whatever it held, and leaves PG_workingset
 * as it was; an unevictable folio is on no generation, and its access
 * counts nothing.
 */
static const struct vmscan_test_access_case vmscan_test_access_cases[] = {
	{
		.desc = "stale refs: started over",
		.stale_refs = true,
		.after = BIT(PG_referenced),
	},
	{
		.desc = "stale refs, workingset: started over, workingset kept",
		.flags = BIT(PG_workingset),
		.stale_refs = true,
		.after = BIT(PG_referenced) | BIT(PG_workingset),
	},
	{
		.desc = "unevictable: not counted",
		.flags = BIT(PG_unevictable),
	},
	{
		.desc = "unevictable, referenced: not counted",
		.flags = BIT(PG_unevictable) | BIT(PG_referenced),
		.after = BIT(PG_referenced),
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_access, vmscan_test_access_cases, desc);

static void vmscan_test_mark_accessed_once(struct kunit *test)
{
	const struct vmscan_test_access_case *c = test->param_value;
	unsigned long full = BIT(LRU_REFS_WIDTH) - 1;
	struct folio *folio;
	unsigned long flags;

	vmscan_test_need_lru_gen(test, true);
	vmscan_test_need_refs_width(test, !c->stale_refs || full >= 1);
	folio = vmscan_test_folio_create(test, 0, c->flags |
					 (c->stale_refs ? full << LRU_REFS_PGOFF : 0));

	folio_mark_accessed(folio);

	flags = READ_ONCE(folio->flags.f);
	KUNIT_EXPECT_EQ(test, c->after,
			flags & (BIT(PG_referenced) | BIT(PG_workingset)));
	KUNIT_EXPECT_EQ(test, 0UL, vmscan_test_refs_field(flags));
}

/* -------------------------------------------------------------------------
 * mm_vmscan_mglru: sort_folio()
 */

enum vmscan_test_sort_result {
	VMSCAN_TEST_LEFT,	/* false: left to be isolated */
	VMSCAN_TEST_PROMOTED,	/* true: to the head of its own generation */
	VMSCAN_TEST_PROTECTED,	/* true: to the head of the next one */
	VMSCAN_TEST_INELIGIBLE,	/* true: to the tail of the next one */
};

struct vmscan_test_sort_case {
	const char *desc;
	bool anon;		/* in the swap cache */
	unsigned int order;
	int refs;		/* folio_lru_refs() */
	bool workingset;
	bool promoted;		/* not in the oldest generation */
	bool mlocked;		/* once on the LRU */
	int tier_idx;
	bool below_zone;	/* reclaim_idx below the folio's zone */
	enum vmscan_test_sort_result result;	/* expected */
	int tier;		/* expected: in protected[], or -1 */
};

/*
 * sort_folio() on a folio of the oldest generation, in this order: an
 * unevictable folio is left for the generic path to cull; a promoted one
 * (its generation is no longer the oldest) goes to the head of its own
 * list; one whose tier is above tier_idx, or whose refs and PG_workingset
 * are all set (BIT(LRU_REFS_WIDTH) + 1), goes to the head of the next
 * generation, losing PG_referenced and its refs, and counts, by its
 * pages, in protected[][type][tier] unless it was that saturated
 * workingset; one in a zone above reclaim_idx goes to the tail of the
 * next generation; anything else is left to be isolated.
 */
static const struct vmscan_test_sort_case vmscan_test_sort_cases[] = {
	{
		.desc = "unevictable, tier 1: left",
		.refs = 2,
		.mlocked = true,
		.tier_idx = 0,
		.result = VMSCAN_TEST_LEFT,
		.tier = -1,
	},
	{
		.desc = "promoted: head of its generation",
		.refs = 2,
		.promoted = true,
		.tier_idx = 0,
		.result = VMSCAN_TEST_PROMOTED,
		.tier = -1,
	},
	{
		.desc = "tier 1 above tier_idx 0: protected",
		.refs = 2,
		.tier_idx = 0,
		.result = VMSCAN_TEST_PROTECTED,
		.tier = 1,
	},
	{
		.desc = "tier 1 at tier_idx 1: left",
		.refs = 2,
		.tier_idx = 1,
		.result = VMSCAN_TEST_LEFT,
		.tier = -1,
	},
	{
		.desc = "tier 2 above tier_idx 1: protected",
		.refs = 3,
		.tier_idx = 1,
		.result = VMSCAN_TEST_PROTECTED,
		.tier = 2,
	},
	{
		.desc = "anon, tier 1 above tier_idx 0: protected",
		.anon = true,
		.refs = 2,
		.tier_idx = 0,
		.result = VMSCAN_TEST_PROTECTED,
		.tier = 1,
	},
	{
		.desc = "order 2, tier 1 above tier_idx 0: protected, 4 pages",
		.order = 2,
		.refs = 2,
		.tier_idx = 0,
		.result = VMSCAN_TEST_PROTECTED,
		.tier = 1,
	},
	{
		.desc = "workingset, 2 refs, tier_idx 2: protected in tier 3",
		.refs = 2,
		.workingset = true,
		.tier_idx = 2,
		.result = VMSCAN_TEST_PROTECTED,
		.tier = 3,
	},
	{
		.desc = "workingset, no refs, tier_idx 3: left",
		.refs = 0,
		.workingset = true,
		.tier_idx = 3,
		.result = VMSCAN_TEST_LEFT,
		.tier = -1,
	},
	{
		.desc = "refs full without workingset, tier_idx 3: left",
		.refs = VMSCAN_TEST_REFS_FULL,
		.tier_idx = 3,
		.result = VMSCAN_TEST_LEFT,
		.tier = -1,
	},
	{
		.desc = "refs full and workingset, tier_idx 3: moved, not counted",
		.refs = VMSCAN_TEST_REFS_FULL,
		.workingset = true,
		.tier_idx = 3,
		.result = VMSCAN_TEST_PROTECTED,
		.tier = -1,
	},
	{
		.desc = "refs full and workingset, tier_idx 2: not counted",
		.refs = VMSCAN_TEST_REFS_FULL,
		.workingset = true,
		.tier_idx = 2,
		.result = VMSCAN_TEST_PROTECTED,
		.tier = -1,
	},
	{
		.desc = "zone above reclaim_idx: tail of the next generation",
		.refs = 1,
		.tier_idx = 0,
		.below_zone = true,
		.result = VMSCAN_TEST_INELIGIBLE,
		.tier = -1,
	},
	{
		.desc = "protected before ineligible",
		.refs = 2,
		.tier_idx = 0,
		.below_zone = true,
		.result = VMSCAN_TEST_PROTECTED,
		.tier = 1,
	},
	{
		.desc = "tier 0, zone at reclaim_idx: left",
		.refs = 1,
		.tier_idx = 0,
		.result = VMSCAN_TEST_LEFT,
		.tier = -1,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_sort, vmscan_test_sort_cases, desc);

/* What sort_folio() did, seen under the lru_lock. */
struct vmscan_test_sorted {
	bool moved;
	unsigned long min_seq;	/* of the folio's type */
	int old_gen;
	int gen;
	bool at_head;
	bool at_tail;
	unsigned long flags;	/* of the folio, once sorted */
	long protected[ANON_AND_FILE][MAX_NR_TIERS];	/* added */
};

/*
 * Page flags that make lru_gen_add_folio() put a folio of the type of
 * @folio into generation @seq, of the lruvec's window: the folio the
 * sorted one is to land before or after.
 */
static unsigned long vmscan_test_flags_for_seq(struct lru_gen_folio *lrugen,
					       struct folio *folio,
					       unsigned long seq)
{
	unsigned long type = folio_is_file_lru(folio) ? 0 :
			     BIT(PG_swapbacked) | BIT(PG_swapcache);

	switch (lrugen->max_seq - seq) {
	case 0:
		return type | BIT(PG_active) | BIT(PG_workingset);
	case 1:
		return type | BIT(PG_active);
	default:
		return type | BIT(PG_referenced);
	}
}

/*
 * Record in @out what was added to the protected counts of history @hist
 * since @saved, and put the counts back to @saved.
 */
static void
vmscan_test_take_protected(struct lru_gen_folio *lrugen, int hist,
			   unsigned long saved[ANON_AND_FILE][MAX_NR_TIERS],
			   struct vmscan_test_sorted *out)
{
	int t, i;

	for (t = 0; t < ANON_AND_FILE; t++) {
		for (i = 0; i < MAX_NR_TIERS; i++) {
			out->protected[t][i] = lrugen->protected[hist][t][i] -
					       saved[t][i];
			WRITE_ONCE(lrugen->protected[hist][t][i], saved[t][i]);
		}
	}
}

/*
 * Put @folio on the LRU (in the oldest generation, unless @c->promoted),
 * @other into the generation @folio is to end up in, after it, then sort
 * @folio; record, put the protected counts back, take both off again.
 */
static void vmscan_test_sort(const struct vmscan_test_sort_case *c,
			     struct folio *folio, struct folio *other,
			     struct vmscan_test_sorted *out)
{
	int type = folio_is_file_lru(folio);
	int zone = folio_zonenum(folio);
	struct scan_control sc = {
		.reclaim_idx = c->below_zone ? zone - 1 : zone,
	};
	unsigned long saved[ANON_AND_FILE][MAX_NR_TIERS];
	struct lru_gen_folio *lrugen;
	struct lruvec *lruvec;
	struct list_head *list;
	bool enabled;
	int hist;

	lruvec = vmscan_test_lock(folio, &enabled);
	lrugen = &lruvec->lrugen;
	out->min_seq = lrugen->min_seq[type];
	hist = lru_hist_from_seq(out->min_seq);
	memcpy(saved, lrugen->protected[hist], sizeof(saved));
	lru_gen_add_folio(lruvec, folio, !c->promoted);
	out->old_gen = folio_lru_gen(folio);
	other->flags.f |= vmscan_test_flags_for_seq(lrugen, folio, c->promoted ?
						    lrugen->max_seq :
						    out->min_seq + 1);
	lru_gen_add_folio(lruvec, other, false);
	if (c->mlocked)
		folio_set_mlocked(folio);

	out->moved = sort_folio(lruvec, folio, &sc, c->tier_idx);

	out->gen = folio_lru_gen(folio);
	out->flags = READ_ONCE(folio->flags.f);
	list = &lrugen->folios[out->gen][type][zone];
	out->at_head = list_first_entry(list, struct folio, lru) == folio;
	out->at_tail = list_last_entry(list, struct folio, lru) == folio;
	vmscan_test_take_protected(lrugen, hist, saved, out);
	folio_clear_mlocked(folio);
	vmscan_test_del(lruvec, folio);
	vmscan_test_del(lruvec, other);
	vmscan_test_unlock(lruvec, enabled);
}

/* The generation, list end and flags the case expects. */
static void vmscan_test_check_sorted(struct kunit *test,
				     const struct vmscan_test_sort_case *c,
				     const struct vmscan_test_sorted *out,
				     unsigned long flags)
{
	unsigned long cleared = LRU_REFS_FLAGS;
	unsigned long history = LRU_REFS_FLAGS | BIT(PG_workingset);
	unsigned long kept = out->flags & history;
	int next = lru_gen_from_seq(out->min_seq + 1);

	switch (c->result) {
	case VMSCAN_TEST_LEFT:
		KUNIT_EXPECT_FALSE(test, out->moved);
		KUNIT_EXPECT_EQ(test, out->old_gen, out->gen);
		cleared = 0;
		break;
	case VMSCAN_TEST_PROMOTED:
		KUNIT_EXPECT_TRUE(test, out->moved);
		KUNIT_EXPECT_EQ(test, out->old_gen, out->gen);
		KUNIT_EXPECT_TRUE(test, out->at_head);
		cleared = 0;
		break;
	case VMSCAN_TEST_PROTECTED:
		KUNIT_EXPECT_TRUE(test, out->moved);
		KUNIT_EXPECT_EQ(test, next, out->gen);
		KUNIT_EXPECT_TRUE(test, out->at_head);
		break;
	case VMSCAN_TEST_INELIGIBLE:
		KUNIT_EXPECT_TRUE(test, out->moved);
		KUNIT_EXPECT_EQ(test, next, out->gen);
		KUNIT_EXPECT_TRUE(test, out->at_tail);
		break;
	}
	KUNIT_EXPECT_EQ_MSG(test, flags & ~cleared, kept,
			    "PG_referenced, refs and PG_workingset");
}

/* The case's folio sorted on the lruvec of @memcg (NULL: the root's). */
static void vmscan_test_sort_folio_of(struct kunit *test,
				      struct mem_cgroup *memcg)
{
	const struct vmscan_test_sort_case *c = test->param_value;
	unsigned long type = c->anon ?
			     BIT(PG_swapbacked) | BIT(PG_swapcache) : 0;
	struct folio *folio, *other;
	struct vmscan_test_sorted out;
	unsigned long flags;
	int t, i;

	folio = vmscan_test_memcg_folio_create(test, c->order, type |
			(c->promoted ? BIT(PG_active) | BIT(PG_workingset) : 0) |
			(c->workingset ? BIT(PG_workingset) : 0), memcg);
	other = vmscan_test_memcg_folio_create(test, 0, 0, memcg);
	vmscan_test_need_refs_width(test, vmscan_test_set_refs(folio, c->refs));
	/* Only the rows that say so are for a saturated folio. */
	vmscan_test_need_refs_width(test, c->refs == VMSCAN_TEST_REFS_FULL ||
				    folio_lru_refs(folio) + c->workingset !=
				    BIT(LRU_REFS_WIDTH) + 1);
	flags = READ_ONCE(folio->flags.f) & (LRU_REFS_FLAGS | BIT(PG_workingset));

	vmscan_test_sort(c, folio, other, &out);

	vmscan_test_check_sorted(test, c, &out, flags);
	for (t = 0; t < ANON_AND_FILE; t++)
		for (i = 0; i < MAX_NR_TIERS; i++) {
			long want = t == !c->anon && i == c->tier ?
				    (long)folio_nr_pages(folio) : 0L;

			KUNIT_EXPECT_EQ_MSG(test, want, out.protected[t][i],
					    "protected[type %d][tier %d]", t, i);
		}
}

static void vmscan_test_sort_folio(struct kunit *test)
{
	vmscan_test_sort_folio_of(test, NULL);
}

/* The same, on an lruvec whose sequence numbers are past its generations'. */
static void vmscan_test_sort_folio_aged(struct kunit *test)
{
	vmscan_test_sort_folio_of(test, vmscan_test_aged_memcg(test));
}

/* -------------------------------------------------------------------------
 * mm_vmscan_mglru: the refault controller
 */

/* The counts of the generations the controller does not read. */
#define VMSCAN_TEST_ELSEWHERE	1000000UL

/*
 * Give every count of the controller VMSCAN_TEST_ELSEWHERE, then the
 * current history generation of @type (min_seq 5) the counts of each
 * tier: refaults avg @avg_refaulted plus @refaulted, evictions avg
 * @avg_total plus @protected plus @evicted.
 */
struct vmscan_test_ctrl_counts {
	unsigned long avg_refaulted[MAX_NR_TIERS];
	unsigned long refaulted[MAX_NR_TIERS];
	unsigned long avg_total[MAX_NR_TIERS];
	unsigned long protected[MAX_NR_TIERS];
	unsigned long evicted[MAX_NR_TIERS];
};

static void vmscan_test_seed_elsewhere(struct lru_gen_folio *lrugen)
{
	int hist, type, tier;

	for (type = 0; type < ANON_AND_FILE; type++) {
		lrugen->min_seq[type] = 5;
		for (tier = 0; tier < MAX_NR_TIERS; tier++) {
			lrugen->avg_refaulted[type][tier] = VMSCAN_TEST_ELSEWHERE;
			lrugen->avg_total[type][tier] = VMSCAN_TEST_ELSEWHERE;
			for (hist = 0; hist < NR_HIST_GENS; hist++) {
				atomic_long_set(&lrugen->refaulted[hist][type][tier],
						VMSCAN_TEST_ELSEWHERE);
				atomic_long_set(&lrugen->evicted[hist][type][tier],
						VMSCAN_TEST_ELSEWHERE);
				lrugen->protected[hist][type][tier] =
					VMSCAN_TEST_ELSEWHERE;
			}
		}
	}
}

static void vmscan_test_seed(struct lru_gen_folio *lrugen, int type,
			     const struct vmscan_test_ctrl_counts *n)
{
	int hist = lru_hist_from_seq(lrugen->min_seq[type]);
	int tier;

	for (tier = 0; tier < MAX_NR_TIERS; tier++) {
		lrugen->avg_refaulted[type][tier] = n->avg_refaulted[tier];
		lrugen->avg_total[type][tier] = n->avg_total[tier];
		atomic_long_set(&lrugen->refaulted[hist][type][tier],
				n->refaulted[tier]);
		atomic_long_set(&lrugen->evicted[hist][type][tier],
				n->evicted[tier]);
		lrugen->protected[hist][type][tier] = n->protected[tier];
	}
}

struct vmscan_test_err_case {
	const char *desc;
	struct ctrl_pos sp;
	struct ctrl_pos pv;
	bool positive;		/* expected */
};

/*
 * positive_ctrl_err(): true when the PV has under MIN_LRU_BATCH refaults,
 * or when pv.refaulted * (sp.total + MIN_LRU_BATCH) * sp.gain is at most
 * (sp.refaulted + 1) * pv.total * pv.gain. With sp 99 of 1000 -
 * MIN_LRU_BATCH at gain 2 and pv of 1000 at gain 3: up to 150 refaults.
 */
static const struct vmscan_test_err_case vmscan_test_err_cases[] = {
	{
		.desc = "at the setpoint: positive",
		.sp = {
			.refaulted = 99,
			.total = 1000 - MIN_LRU_BATCH,
			.gain = 2,
		},
		.pv = {
			.refaulted = 150,
			.total = 1000,
			.gain = 3,
		},
		.positive = true,
	},
	{
		.desc = "one refault over: negative",
		.sp = {
			.refaulted = 99,
			.total = 1000 - MIN_LRU_BATCH,
			.gain = 2,
		},
		.pv = {
			.refaulted = 151,
			.total = 1000,
			.gain = 3,
		},
		.positive = false,
	},
	{
		.desc = "gains swapped: negative",
		.sp = {
			.refaulted = 99,
			.total = 1000 - MIN_LRU_BATCH,
			.gain = 3,
		},
		.pv = {
			.refaulted = 150,
			.total = 1000,
			.gain = 2,
		},
		.positive = false,
	},
	{
		.desc = "under MIN_LRU_BATCH refaults: positive",
		.sp = {
			.refaulted = 0,
			.total = 1000,
			.gain = 1,
		},
		.pv = {
			.refaulted = MIN_LRU_BATCH - 1,
			.total = MIN_LRU_BATCH,
			.gain = 1,
		},
		.positive = true,
	},
	{
		.desc = "MIN_LRU_BATCH refaults: judged, negative",
		.sp = {
			.refaulted = 0,
			.total = 1000,
			.gain = 1,
		},
		.pv = {
			.refaulted = MIN_LRU_BATCH,
			.total = MIN_LRU_BATCH,
			.gain = 1,
		},
		.positive = false,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_err, vmscan_test_err_cases, desc);

static void vmscan_test_positive_ctrl_err(struct kunit *test)
{
	const struct vmscan_test_err_case *c = test->param_value;
	struct ctrl_pos sp = c->sp, pv = c->pv;

	KUNIT_EXPECT_EQ(test, c->positive, positive_ctrl_err(&sp, &pv));
}

struct vmscan_test_type_case {
	const char *desc;
	struct vmscan_test_ctrl_counts anon;
	struct vmscan_test_ctrl_counts file;
	int swappiness;
	int type;		/* expected */
};

/*
 * get_type_to_scan(): file at swappiness MIN_SWAPPINESS + 1 or below,
 * anon at MAX_SWAPPINESS or above; in between the sums over all tiers of
 * anon (the setpoint, gain swappiness) and of file (gain MAX_SWAPPINESS -
 * swappiness): file while its error is positive, else anon.
 */
static const struct vmscan_test_type_case vmscan_test_type_cases[] = {
	{
		.desc = "swappiness 1: file",
		.anon = {
			.avg_refaulted = { 0 },
			.avg_total = { 10000 },
		},
		.file = {
			.avg_refaulted = { 9000 },
			.avg_total = { 10000 },
		},
		.swappiness = 1,
		.type = LRU_GEN_FILE,
	},
	{
		.desc = "swappiness 2, file refaults far more: anon",
		.anon = {
			.avg_refaulted = { 0 },
			.avg_total = { 10000 },
		},
		.file = {
			.avg_refaulted = { 9000 },
			.avg_total = { 10000 },
		},
		.swappiness = 2,
		.type = LRU_GEN_ANON,
	},
	/* at gain 199 to 1, file is held to 1/199 of anon's rate: 64 of 12736 */
	{
		.desc = "swappiness 199, anon refaults 199 times more: file",
		.anon = {
			.avg_refaulted = { 9999 },
			.avg_total = { 10000 - MIN_LRU_BATCH },
		},
		.file = {
			.avg_refaulted = { 64 },
			.avg_total = { 12736 },
		},
		.swappiness = 199,
		.type = LRU_GEN_FILE,
	},
	/* file's refaults alone, too few to judge, would say file */
	{
		.desc = "swappiness 200: anon",
		.anon = {
			.avg_refaulted = { 9999 },
			.avg_total = { 10000 - MIN_LRU_BATCH },
		},
		.file = {
			.avg_refaulted = { MIN_LRU_BATCH - 1 },
			.avg_total = { 12736 },
		},
		.swappiness = 200,
		.type = LRU_GEN_ANON,
	},
	{
		.desc = "SWAPPINESS_ANON_ONLY: anon",
		.anon = {
			.avg_refaulted = { 9999 },
			.avg_total = { 10000 - MIN_LRU_BATCH },
		},
		.file = {
			.avg_refaulted = { 64 },
			.avg_total = { 12736 },
		},
		.swappiness = SWAPPINESS_ANON_ONLY,
		.type = LRU_GEN_ANON,
	},
	{
		.desc = "equal rates, swappiness 100: anon",
		.anon = {
			.avg_refaulted = { 1000 },
			.avg_total = { 10000 },
		},
		.file = {
			.avg_refaulted = { 1000 },
			.avg_total = { 10000 },
		},
		.swappiness = 100,
		.type = LRU_GEN_ANON,
	},
	{
		.desc = "equal rates, swappiness 60: file",
		.anon = {
			.avg_refaulted = { 1000 },
			.avg_total = { 10000 },
		},
		.file = {
			.avg_refaulted = { 1000 },
			.avg_total = { 10000 },
		},
		.swappiness = 60,
		.type = LRU_GEN_FILE,
	},
	{
		.desc = "equal rates, swappiness 140: anon",
		.anon = {
			.avg_refaulted = { 1000 },
			.avg_total = { 10000 },
		},
		.file = {
			.avg_refaulted = { 1000 },
			.avg_total = { 10000 },
		},
		.swappiness = 140,
		.type = LRU_GEN_ANON,
	},
	/* tier 0 alone: 50 file refaults, too few to judge, would say file */
	{
		.desc = "file refaults in its upper tiers: anon",
		.anon = {
			.avg_refaulted = { 100 },
			.avg_total = { 1000 },
		},
		.file = {
			.avg_refaulted = { 50, 1000, 1000, 1000 },
			.avg_total = { 1000, 1000, 1000, 1000 },
		},
		.swappiness = 100,
		.type = LRU_GEN_ANON,
	},
	/* tier 0 alone: 100 of 1000 against 100 of 1000 would say anon */
	{
		.desc = "anon refaults in its upper tiers: file",
		.anon = {
			.avg_refaulted = { 100, 1000, 1000, 1000 },
			.avg_total = { 1000, 1000, 1000, 1000 },
		},
		.file = {
			.avg_refaulted = { 100 },
			.avg_total = { 1000 },
		},
		.swappiness = 100,
		.type = LRU_GEN_FILE,
	},
	/* without anon's protected, 1000 of 1000 would say file */
	{
		.desc = "current refaults, protected and evicted count: anon",
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
		.type = LRU_GEN_ANON,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_type, vmscan_test_type_cases, desc);

static void vmscan_test_type_to_scan(struct kunit *test)
{
	const struct vmscan_test_type_case *c = test->param_value;
	struct lruvec *lruvec = vmscan_test_lrugen_create(test);

	vmscan_test_seed_elsewhere(&lruvec->lrugen);
	vmscan_test_seed(&lruvec->lrugen, LRU_GEN_ANON, &c->anon);
	vmscan_test_seed(&lruvec->lrugen, LRU_GEN_FILE, &c->file);

	KUNIT_EXPECT_EQ(test, c->type,
			get_type_to_scan(lruvec, c->swappiness));
}

struct vmscan_test_tier_case {
	const char *desc;
	int type;
	struct vmscan_test_ctrl_counts counts;	/* of @type */
	struct vmscan_test_ctrl_counts other;	/* of the other type */
	int tier_idx;		/* expected */
};

/*
 * get_tier_idx(): the setpoint is tier 0 of the same type at gain 2; each
 * tier above it, at gain 3, is evicted while its error is positive, and
 * the last tier to evict is the one below the first that is not. With sp
 * 1999 of 10000 - MIN_LRU_BATCH, a tier of 10000 may refault 3000 times.
 * Tier 0 is only the setpoint: judged against itself at gain 3, 100
 * refaults of 100 would not be positive. Each tier is judged on its own
 * counts: tier 1's 3000 of 10000 and tier 2's 63 of 63 together would not.
 */
static const struct vmscan_test_tier_case vmscan_test_tier_cases[] = {
	{
		.desc = "no refaults above tier 0: every tier evicted",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 100 },
			.avg_total = { 10000 },
		},
		.tier_idx = 3,
	},
	{
		.desc = "tier 1 refaults more: tier 0 last",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 100, 5000 },
			.avg_total = { 10000, 10000 },
		},
		.tier_idx = 0,
	},
	{
		.desc = "tier 2 refaults more, tier 1 too few: tier 1 last",
		.type = LRU_GEN_ANON,
		.counts = {
			.avg_refaulted = { 100, MIN_LRU_BATCH - 1, 5000 },
			.avg_total = { 10000, 100, 10000 },
		},
		.tier_idx = 1,
	},
	{
		.desc = "tier 3 refaults more: tier 2 last",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 100, 0, 0, 5000 },
			.avg_total = { 10000, 0, 0, 10000 },
		},
		.tier_idx = 2,
	},
	{
		.desc = "tier 1 at the setpoint's rate: evicted",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 1999, 3000 },
			.avg_total = { 10000 - MIN_LRU_BATCH, 10000 },
		},
		.tier_idx = 3,
	},
	{
		.desc = "tier 0 refaulting all it evicts is no tier above it",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 100 },
			.avg_total = { 100 },
		},
		.tier_idx = 3,
	},
	{
		.desc = "tier 2's counts are its own, not tier 1's too",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 1999, 3000, MIN_LRU_BATCH - 1 },
			.avg_total = { 10000 - MIN_LRU_BATCH, 10000,
				       MIN_LRU_BATCH - 1 },
		},
		.tier_idx = 3,
	},
	{
		.desc = "tier 1 one refault above: tier 0 last",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 1999, 3001 },
			.avg_total = { 10000 - MIN_LRU_BATCH, 10000 },
		},
		.tier_idx = 0,
	},
	{
		.desc = "tier 1's refaults of the current generation count",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 100 },
			.refaulted = { 0, 5000 },
			.avg_total = { 10000, 10000 },
		},
		.tier_idx = 0,
	},
	{
		.desc = "tier 1's protected count in its total",
		.type = LRU_GEN_ANON,
		.counts = {
			.avg_refaulted = { 100, 5000 },
			.avg_total = { 10000 },
			.protected = { 0, 400000 },
		},
		.tier_idx = 3,
	},
	/* 5000 of 700000 is evicted, of 400000 - 300000 it would not be */
	{
		.desc = "tier 1's protected count added to its evictions",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 100, 5000 },
			.avg_total = { 10000, 400000 },
			.protected = { 0, 300000 },
		},
		.tier_idx = 3,
	},
	{
		.desc = "tier 1's evictions count in its total",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 100, 5000 },
			.avg_total = { 10000 },
			.evicted = { 0, 400000 },
		},
		.tier_idx = 3,
	},
	{
		.desc = "tier 0's refaults of the current generation count",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 0, 3000 },
			.refaulted = { 5000 },
			.avg_total = { 10000, 10000 },
		},
		.tier_idx = 3,
	},
	/* the boundary row above, tier 0's total made of the current counts */
	{
		.desc = "tier 0's protected and evicted count in its total",
		.type = LRU_GEN_ANON,
		.counts = {
			.avg_refaulted = { 1999, 3001 },
			.avg_total = { 0, 10000 },
			.protected = { 5000 },
			.evicted = { 10000 - MIN_LRU_BATCH - 5000 },
		},
		.tier_idx = 0,
	},
	{
		.desc = "against its own tier 0, not the other type's",
		.type = LRU_GEN_FILE,
		.counts = {
			.avg_refaulted = { 5000, 3000 },
			.avg_total = { 10000, 10000 },
		},
		.other = {
			.avg_refaulted = { 100 },
			.avg_total = { 10000 },
		},
		.tier_idx = 3,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_tier, vmscan_test_tier_cases, desc);

static void vmscan_test_tier_idx(struct kunit *test)
{
	const struct vmscan_test_tier_case *c = test->param_value;
	struct lruvec *lruvec = vmscan_test_lrugen_create(test);

	vmscan_test_seed_elsewhere(&lruvec->lrugen);
	vmscan_test_seed(&lruvec->lrugen, c->type, &c->counts);
	vmscan_test_seed(&lruvec->lrugen, !c->type, &c->other);

	KUNIT_EXPECT_EQ(test, c->tier_idx, get_tier_idx(lruvec, c->type));
}

static struct kunit_case vmscan_test_mglru_cases[] = {
	KUNIT_CASE_PARAM(vmscan_test_folio_seq, vmscan_test_seq_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_add_folio, vmscan_test_add_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_add_folio_aged, vmscan_test_add_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_refs_tier, vmscan_test_refs_gen_params),
	KUNIT_CASE(vmscan_test_mark_accessed),
	KUNIT_CASE_PARAM(vmscan_test_mark_accessed_once,
			 vmscan_test_access_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_sort_folio, vmscan_test_sort_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_sort_folio_aged,
			 vmscan_test_sort_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_positive_ctrl_err,
			 vmscan_test_err_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_type_to_scan, vmscan_test_type_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_tier_idx, vmscan_test_tier_gen_params),
	{}
};

static struct kunit_suite vmscan_test_mglru_suite = {
	.name = "mm_vmscan_mglru",
	.test_cases = vmscan_test_mglru_cases,
};

/* -------------------------------------------------------------------------
 * mm_vmscan_scan_balance: the pressure balance
 */

struct vmscan_test_pressure_case {
	const char *desc;
	unsigned long anon_cost;
	unsigned long file_cost;
	int swappiness;
	u64 anon;		/* expected fraction */
	u64 file;		/* expected fraction */
};

/*
 * calculate_pressure_balance(), with T = anon_cost + file_cost: anon
 * swappiness * (3T + 1) / (T + anon_cost + 1), file (MAX_SWAPPINESS -
 * swappiness) * (3T + 1) / (T + file_cost + 1), rounded down; the
 * denominator is their sum. The T in each denominator keeps at least a
 * third of the pressure on each list, before swappiness.
 */
static const struct vmscan_test_pressure_case vmscan_test_pressure_cases[] = {
	{
		.desc = "no costs, swappiness 100: 100 and 100",
		.anon_cost = 0,
		.file_cost = 0,
		.swappiness = 100,
		.anon = 100,
		.file = 100,
	},
	{
		.desc = "equal costs, swappiness 60: 60 * 7 / 4, 140 * 7 / 4",
		.anon_cost = 1,
		.file_cost = 1,
		.swappiness = 60,
		.anon = 105,
		.file = 245,
	},
	{
		.desc = "anon 3 file 1, swappiness 100: 1300 / 8, 1300 / 6",
		.anon_cost = 3,
		.file_cost = 1,
		.swappiness = 100,
		.anon = 162,
		.file = 216,
	},
	{
		.desc = "anon 1 file 5, swappiness 60: 1140 / 8, 2660 / 12",
		.anon_cost = 1,
		.file_cost = 5,
		.swappiness = 60,
		.anon = 142,
		.file = 221,
	},
	{
		.desc = "only anon costs: a third of the pressure, not none",
		.anon_cost = 1000,
		.file_cost = 0,
		.swappiness = 100,
		.anon = 149,
		.file = 299,
	},
	{
		.desc = "swappiness 0: no anon",
		.anon_cost = 1,
		.file_cost = 1,
		.swappiness = 0,
		.anon = 0,
		.file = 350,
	},
	{
		.desc = "swappiness 200: no file",
		.anon_cost = 1,
		.file_cost = 1,
		.swappiness = 200,
		.anon = 350,
		.file = 0,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_pressure, vmscan_test_pressure_cases,
		       desc);

static void vmscan_test_pressure_balance(struct kunit *test)
{
	const struct vmscan_test_pressure_case *c = test->param_value;
	struct scan_control sc = {
		.anon_cost = c->anon_cost,
		.file_cost = c->file_cost,
	};
	u64 fraction[ANON_AND_FILE], denominator;

	calculate_pressure_balance(&sc, c->swappiness, fraction, &denominator);

	KUNIT_EXPECT_EQ(test, c->anon, fraction[WORKINGSET_ANON]);
	KUNIT_EXPECT_EQ(test, c->file, fraction[WORKINGSET_FILE]);
	KUNIT_EXPECT_EQ(test, c->anon + c->file, denominator);
}

/* -------------------------------------------------------------------------
 * mm_vmscan_scan_balance: get_scan_count()
 */

enum vmscan_test_scan {
	VMSCAN_TEST_SCAN_NONE,
	VMSCAN_TEST_SCAN_EQUAL,
	VMSCAN_TEST_SCAN_FRACT,
	VMSCAN_TEST_SCAN_ANON,
	VMSCAN_TEST_SCAN_FILE,
};

struct vmscan_test_count_case {
	const char *desc;
	bool swap;		/* free swap space */
	bool may_swap;
	/* of the lruvec's memcg itself, as memory.reclaim; else global */
	bool memcg_reclaim;
	/* The memcg's memory.min and memory.low, in pages */
	unsigned long min;
	unsigned long low;
	bool low_reclaim;	/* the pass that overrides memory.low */
	/*
	 * Proactive reclaim with swappiness as its own, else other reclaim
	 * with swappiness as vm.swappiness, the proactive one set apart.
	 */
	bool not_proactive;
	int swappiness;
	int priority;
	bool file_is_tiny;
	bool cache_trim_mode;
	unsigned long anon_cost;
	unsigned long file_cost;
	enum vmscan_test_scan scan;	/* expected */
	bool low_skipped;		/* expected */
};

/*
 * get_scan_count(), first match: SWAPPINESS_ANON_ONLY scans anon only, or
 * nothing without swap; no swap or !may_swap, file only; memcg reclaim at
 * swappiness 0, file only; priority 0 with swappiness, every list by its
 * size; file_is_tiny, anon only; cache trim mode, file only; otherwise the
 * fractions of calculate_pressure_balance(). Each list's target is its
 * size >> priority, then its share: a list shorter than 1 << priority is
 * not scanned. (Only an offline memcg's would be, SWAP_CLUSTER_MAX of it,
 * but offlining moves a memcg's folios to its parent's lists.) The
 * swappiness is proactive reclaim's own if it gives one, else
 * vm.swappiness (the root memcg's).
 *
 * Protection, before the shift by priority: reclaim that does not target
 * the memcg itself takes from each list's size its share of the memcg's
 * usage that memory.min protects, or memory.low where that is higher,
 * except in the pass that overrides memory.low, and notes that it
 * skipped low protection; the usage counts as at least the protection,
 * and at least SWAP_CLUSTER_MAX pages are left to scan.
 */
static const struct vmscan_test_count_case vmscan_test_count_cases[] = {
	{
		.desc = "SWAPPINESS_ANON_ONLY: anon only",
		.swap = true,
		.may_swap = true,
		.swappiness = SWAPPINESS_ANON_ONLY,
		.priority = 2,
		.cache_trim_mode = true,
		.scan = VMSCAN_TEST_SCAN_ANON,
	},
	{
		.desc = "SWAPPINESS_ANON_ONLY, may_swap clear: anon only",
		.swap = true,
		.may_swap = false,
		.swappiness = SWAPPINESS_ANON_ONLY,
		.priority = 0,
		.scan = VMSCAN_TEST_SCAN_ANON,
	},
	{
		.desc = "SWAPPINESS_ANON_ONLY without swap: nothing",
		.swap = false,
		.may_swap = true,
		.swappiness = SWAPPINESS_ANON_ONLY,
		.priority = 0,
		.scan = VMSCAN_TEST_SCAN_NONE,
	},
	{
		.desc = "no swap: file only",
		.swap = false,
		.may_swap = true,
		.swappiness = 60,
		.priority = 0,
		.file_is_tiny = true,
		.scan = VMSCAN_TEST_SCAN_FILE,
	},
	{
		.desc = "may_swap clear: file only",
		.swap = true,
		.may_swap = false,
		.swappiness = 60,
		.priority = 0,
		.file_is_tiny = true,
		.scan = VMSCAN_TEST_SCAN_FILE,
	},
	{
		.desc = "memcg reclaim at swappiness 0: file only",
		.swap = true,
		.may_swap = true,
		.memcg_reclaim = true,
		.swappiness = 0,
		.priority = 0,
		.file_is_tiny = true,
		.scan = VMSCAN_TEST_SCAN_FILE,
	},
	{
		.desc = "memcg reclaim at swappiness 1, priority 0: every list",
		.swap = true,
		.may_swap = true,
		.memcg_reclaim = true,
		.swappiness = 1,
		.priority = 0,
		.scan = VMSCAN_TEST_SCAN_EQUAL,
	},
	{
		.desc = "priority 0: every list, before tiny file and cache trim",
		.swap = true,
		.may_swap = true,
		.swappiness = 60,
		.priority = 0,
		.file_is_tiny = true,
		.cache_trim_mode = true,
		.scan = VMSCAN_TEST_SCAN_EQUAL,
	},
	{
		.desc = "global reclaim, priority 0, swappiness 0: fractions",
		.swap = true,
		.may_swap = true,
		.swappiness = 0,
		.priority = 0,
		.anon_cost = 1,
		.file_cost = 1,
		.scan = VMSCAN_TEST_SCAN_FRACT,
	},
	{
		.desc = "global reclaim at swappiness 0, file tiny: anon only",
		.swap = true,
		.may_swap = true,
		.swappiness = 0,
		.priority = 1,
		.file_is_tiny = true,
		.scan = VMSCAN_TEST_SCAN_ANON,
	},
	{
		.desc = "file tiny: anon only, before cache trim",
		.swap = true,
		.may_swap = true,
		.swappiness = 60,
		.priority = 1,
		.file_is_tiny = true,
		.cache_trim_mode = true,
		.scan = VMSCAN_TEST_SCAN_ANON,
	},
	{
		.desc = "cache trim: file only",
		.swap = true,
		.may_swap = true,
		.swappiness = 60,
		.priority = 1,
		.cache_trim_mode = true,
		.scan = VMSCAN_TEST_SCAN_FILE,
	},
	{
		.desc = "equal costs, swappiness 60, priority 1: fractions",
		.swap = true,
		.may_swap = true,
		.swappiness = 60,
		.priority = 1,
		.anon_cost = 1,
		.file_cost = 1,
		.scan = VMSCAN_TEST_SCAN_FRACT,
	},
	{
		.desc = "not proactive: vm.swappiness 140, not the proactive one",
		.swap = true,
		.may_swap = true,
		.not_proactive = true,
		.swappiness = 140,
		.priority = 1,
		.anon_cost = 1,
		.file_cost = 1,
		.scan = VMSCAN_TEST_SCAN_FRACT,
	},
	{
		.desc = "anon costs 3 to 1, swappiness 100, priority 2: fractions",
		.swap = true,
		.may_swap = true,
		.swappiness = 100,
		.priority = 2,
		.anon_cost = 3,
		.file_cost = 1,
		.scan = VMSCAN_TEST_SCAN_FRACT,
	},
	{
		.desc = "file costs 5 to 1, swappiness 140, priority 3: fractions",
		.swap = true,
		.may_swap = true,
		.swappiness = 140,
		.priority = 3,
		.anon_cost = 1,
		.file_cost = 5,
		.scan = VMSCAN_TEST_SCAN_FRACT,
	},
	{
		.desc = "memory.min a quarter of the usage: each list less a quarter",
		.swap = true,
		.may_swap = true,
		.swappiness = 60,
		.priority = 0,
		.min = 480,
		.scan = VMSCAN_TEST_SCAN_EQUAL,
	},
	{
		.desc = "memory.low over memory.min: low protects, skipped noted",
		.swap = true,
		.may_swap = true,
		.swappiness = 60,
		.priority = 0,
		.min = 100,
		.low = 960,
		.scan = VMSCAN_TEST_SCAN_EQUAL,
		.low_skipped = true,
	},
	{
		.desc = "memory.low, the pass overriding it: only memory.min protects",
		.swap = true,
		.may_swap = true,
		.swappiness = 60,
		.priority = 0,
		.min = 100,
		.low = 960,
		.low_reclaim = true,
		.scan = VMSCAN_TEST_SCAN_EQUAL,
	},
	{
		.desc = "memory.low at memory.min: min protects, nothing skipped",
		.swap = true,
		.may_swap = true,
		.swappiness = 60,
		.priority = 0,
		.min = 960,
		.low = 960,
		.scan = VMSCAN_TEST_SCAN_EQUAL,
	},
	{
		.desc = "memory.min over the usage: SWAP_CLUSTER_MAX of each list",
		.swap = true,
		.may_swap = true,
		.swappiness = 60,
		.priority = 0,
		.min = 4096,
		.scan = VMSCAN_TEST_SCAN_EQUAL,
	},
	{
		.desc = "memory.min, fractions at priority 2: protection first",
		.swap = true,
		.may_swap = true,
		.swappiness = 100,
		.priority = 2,
		.anon_cost = 3,
		.file_cost = 1,
		.min = 1000,
		.scan = VMSCAN_TEST_SCAN_FRACT,
	},
	{
		.desc = "reclaim of the memcg itself: its memory.min does not count",
		.swap = true,
		.may_swap = true,
		.memcg_reclaim = true,
		.swappiness = 60,
		.priority = 0,
		.min = 960,
		.low = 1500,
		.scan = VMSCAN_TEST_SCAN_EQUAL,
	},
	{
		.desc = "DEF_PRIORITY: fractions of size >> 12, none of a short list",
		.swap = true,
		.may_swap = true,
		.swappiness = 60,
		.priority = DEF_PRIORITY,
		.anon_cost = 1,
		.file_cost = 1,
		.scan = VMSCAN_TEST_SCAN_FRACT,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_count, vmscan_test_count_cases, desc);

/*
 * What get_scan_count() is to ask of list @lru of @size pages, by the
 * rules above; the fractions written as the rule states them.
 */
static unsigned long vmscan_test_model_scan(const struct vmscan_test_count_case *c,
					    enum lru_list lru,
					    unsigned long size,
					    unsigned long usage)
{
	u64 t = c->anon_cost + c->file_cost, anon, file;
	unsigned long protection = c->min, scan = size;

	if (!c->memcg_reclaim && (c->min || c->low)) {
		if (!c->low_reclaim && c->low > c->min)
			protection = c->low;
		usage = max(usage, protection);
		scan = max(scan - scan * protection / (usage + 1),
			   SWAP_CLUSTER_MAX);
	}
	scan >>= c->priority;

	switch (c->scan) {
	case VMSCAN_TEST_SCAN_NONE:
		return 0;
	case VMSCAN_TEST_SCAN_EQUAL:
		return scan;
	case VMSCAN_TEST_SCAN_ANON:
		return is_file_lru(lru) ? 0 : scan;
	case VMSCAN_TEST_SCAN_FILE:
		return is_file_lru(lru) ? scan : 0;
	case VMSCAN_TEST_SCAN_FRACT:
		break;
	}
	anon = div64_u64(c->swappiness * (3 * t + 1), t + c->anon_cost + 1);
	file = div64_u64((MAX_SWAPPINESS - c->swappiness) * (3 * t + 1),
			 t + c->file_cost + 1);
	return div64_u64(scan * (is_file_lru(lru) ? file : anon), anon + file);
}

/* Folios of the test's own on each evictable list, of these orders. */
static const unsigned int vmscan_test_list_orders[NR_LRU_LISTS] = {
	[LRU_INACTIVE_ANON] = 9,
	[LRU_ACTIVE_ANON] = 8,
	[LRU_INACTIVE_FILE] = 10,
	[LRU_ACTIVE_FILE] = 7,
};

/*
 * Orders whose active folios outweigh the inactive ones: on a node whose
 * own lists hold fewer pages than these, both inactive lists are low.
 */
static const unsigned int vmscan_test_low_orders[NR_LRU_LISTS] = {
	[LRU_INACTIVE_ANON] = 0,
	[LRU_ACTIVE_ANON] = 9,
	[LRU_INACTIVE_FILE] = 0,
	[LRU_ACTIVE_FILE] = 9,
};

/*
 * A folio of the test's own for each evictable list, of @orders, charged
 * to @memcg.
 */
static void vmscan_test_list_folios(struct kunit *test, struct folio **folios,
				    const unsigned int *orders,
				    struct mem_cgroup *memcg)
{
	enum lru_list lru;

	for_each_evictable_lru(lru) {
		unsigned int order = orders[lru];
		unsigned long flags = is_file_lru(lru) ? 0 : BIT(PG_swapbacked);

		if (is_active_lru(lru))
			flags |= BIT(PG_active);
		folios[lru] = vmscan_test_memcg_folio_create(test, order, flags,
							     memcg);
	}
}

static const char * const vmscan_test_lru_names[NR_LRU_LISTS] = {
	[LRU_INACTIVE_ANON] = "inactive anon",
	[LRU_ACTIVE_ANON] = "active anon",
	[LRU_INACTIVE_FILE] = "inactive file",
	[LRU_ACTIVE_FILE] = "active file",
	[LRU_UNEVICTABLE] = "unevictable",
};

struct vmscan_test_counted {
	int tries;
	unsigned long size[NR_LRU_LISTS];
	unsigned long nr[NR_LRU_LISTS];
};

/*
 * Put @folios on the lists of their lruvec without PG_lru: reclaim, which
 * isolates only folios it can clear PG_lru on, passes them over, as it
 * does a folio another isolation is taking. They make each list hold
 * pages whatever the node holds.
 */
static struct lruvec *vmscan_test_lists_add(struct folio **folios)
{
	struct lruvec *lruvec = folio_lruvec_lock_irq(folios[0]);
	enum lru_list lru;

	for_each_evictable_lru(lru)
		lruvec_add_folio(lruvec, folios[lru]);
	lruvec_unlock_irq(lruvec);
	mem_cgroup_flush_stats(root_mem_cgroup);
	return lruvec;
}

static void vmscan_test_lists_del(struct folio **folios)
{
	struct lruvec *lruvec = folio_lruvec_lock_irq(folios[0]);
	enum lru_list lru;

	for_each_evictable_lru(lru)
		lruvec_del_folio(lruvec, folios[lru]);
	lruvec_unlock_irq(lruvec);
}

/*
 * get_scan_count() on the lruvec of @folios, with them on its lists, as
 * shrink_lruvec() calls it: no lock held, IRQs on. With a memory
 * controller the folios are a memcg's of the test's own, and its lruvec
 * holds nothing else; without one, the lruvec is the node's and holds
 * its other folios too: the sizes are read before and after the call,
 * which is repeated until they held still.
 */
static void vmscan_test_scan_count(struct folio **folios,
				   struct scan_control *sc,
				   struct vmscan_test_counted *out)
{
	unsigned long size[NR_LRU_LISTS];
	struct lruvec *lruvec;
	enum lru_list lru;

	lruvec = vmscan_test_lists_add(folios);
	for (out->tries = 1; out->tries <= 10; out->tries++) {
		for_each_evictable_lru(lru)
			size[lru] = lruvec_lru_size(lruvec, lru,
						    sc->reclaim_idx);
		/* As a round before left them: every count is set anew. */
		memset(out->nr, 0xff, sizeof(out->nr));
		get_scan_count(lruvec, sc, out->nr);
		for_each_evictable_lru(lru)
			out->size[lru] = lruvec_lru_size(lruvec, lru,
							 sc->reclaim_idx);
		if (!memcmp(size, out->size, sizeof(size)))
			break;
	}
	vmscan_test_lists_del(folios);
}

#ifdef CONFIG_MEMCG
/*
 * Reclaim of the case's kind over @memcg with the case's memory.min and
 * memory.low, whose effective values are worked out as
 * shrink_node_memcgs() does before it shrinks the memcg: returns its
 * usage.
 */
static unsigned long vmscan_test_protect(const struct vmscan_test_count_case *c,
					 struct mem_cgroup *memcg,
					 struct scan_control *sc)
{
	page_counter_set_min(&memcg->memory, c->min);
	page_counter_set_low(&memcg->memory, c->low);
	if (c->memcg_reclaim)
		sc->target_mem_cgroup = memcg;
	sc->memcg_low_reclaim = c->low_reclaim;
	mem_cgroup_calculate_protection(sc->target_mem_cgroup, memcg);
	return page_counter_read(&memcg->memory);
}
#else
static unsigned long vmscan_test_protect(const struct vmscan_test_count_case *c,
					 struct mem_cgroup *memcg,
					 struct scan_control *sc)
{
	return 0;
}
#endif

static void vmscan_test_get_scan_count(struct kunit *test)
{
	const struct vmscan_test_count_case *c = test->param_value;
	int swappiness = c->not_proactive ? MAX_SWAPPINESS - c->swappiness :
					    c->swappiness;
	struct scan_control sc = {
		.may_swap = c->may_swap,
		.priority = c->priority,
		.reclaim_idx = MAX_NR_ZONES - 1,
		.file_is_tiny = c->file_is_tiny,
		.cache_trim_mode = c->cache_trim_mode,
		.anon_cost = c->anon_cost,
		.file_cost = c->file_cost,
		.proactive = !c->not_proactive,
		.proactive_swappiness = &swappiness,
	};
	struct folio *folios[NR_LRU_LISTS];
	struct vmscan_test_counted out = {};
	struct mem_cgroup *memcg = NULL;
	unsigned long usage = 0;
	enum lru_list lru;

	vmscan_test_need_lru_gen(test, false);
	if ((c->memcg_reclaim || c->min || c->low) && mem_cgroup_disabled())
		kunit_skip(test, "no memory controller");
	if (c->not_proactive)
		mm_kunit_set_knob(test, vm_swappiness, c->swappiness);
	mm_kunit_set_swap(test, c->swap ? SZ_1G >> PAGE_SHIFT : 0);
	if (!mem_cgroup_disabled())
		memcg = mm_kunit_memcg_create(test);
	vmscan_test_list_folios(test, folios, vmscan_test_list_orders, memcg);
	if (memcg)
		usage = vmscan_test_protect(c, memcg, &sc);

	vmscan_test_scan_count(folios, &sc, &out);

	KUNIT_ASSERT_LE_MSG(test, out.tries, 10, "the lists never held still");
	for_each_evictable_lru(lru)
		KUNIT_EXPECT_EQ_MSG(test,
				    vmscan_test_model_scan(c, lru, out.size[lru],
							   usage),
				    out.nr[lru], "%s of %lu pages",
				    vmscan_test_lru_names[lru], out.size[lru]);
	KUNIT_EXPECT_EQ(test, c->low_skipped, (bool)sc.memcg_low_skipped);
	/* The memcg's usage is the test's folios, which the rows assume. */
	if (memcg)
		KUNIT_EXPECT_EQ(test, 1920UL, usage);
}

/*
 * get_scan_count() over a memcg that has gone offline. Reclaim would take
 * SWAP_CLUSTER_MAX pages of a list of it that gets nothing to scan, to
 * scrape out what is left, and round its share of each list up; but
 * offlining moved its folios and their counts to its parent, so every
 * list of it is empty, and of an empty list it takes nothing.
 */
static void vmscan_test_get_scan_count_offline(struct kunit *test)
{
	struct scan_control sc = {
		.may_swap = true,
		.priority = DEF_PRIORITY,
		.reclaim_idx = MAX_NR_ZONES - 1,
	};
	unsigned long nr[NR_LRU_LISTS];
	struct mem_cgroup *memcg;
	struct lruvec *lruvec;
	enum lru_list lru;

	vmscan_test_need_lru_gen(test, false);
	/*
	 * Swap space and the highest swappiness: the lists are split by
	 * fractions (SCAN_FRACT), file's 0, which an offline memcg's share
	 * rounds up from.
	 */
	mm_kunit_set_knob(test, vm_swappiness, MAX_SWAPPINESS);
	mm_kunit_set_swap(test, SZ_1G >> PAGE_SHIFT);
	memcg = mm_kunit_memcg_create_offline(test);
	KUNIT_ASSERT_FALSE(test, mem_cgroup_online(memcg));
	sc.target_mem_cgroup = memcg;
	lruvec = mem_cgroup_lruvec(memcg, NODE_DATA(first_memory_node));

	memset(nr, 0xff, sizeof(nr));
	get_scan_count(lruvec, &sc, nr);

	for_each_evictable_lru(lru) {
		KUNIT_EXPECT_EQ_MSG(test, 0UL,
				    lruvec_lru_size(lruvec, lru, sc.reclaim_idx),
				    "%s size", vmscan_test_lru_names[lru]);
		KUNIT_EXPECT_EQ_MSG(test, 0UL, nr[lru], "%s",
				    vmscan_test_lru_names[lru]);
	}
}

/* -------------------------------------------------------------------------
 * mm_vmscan_scan_balance: prepare_scan_control()
 */

struct vmscan_test_prepare_case {
	const char *desc;
	int priority;
	bool force_deactivate;
	bool no_cache_trim_mode;
	bool anon_refaulted;	/* WORKINGSET_ACTIVATE_ANON since the snapshot */
	bool file_refaulted;	/* WORKINGSET_ACTIVATE_FILE since the snapshot */
	unsigned long anon_count;	/* the decaying counts, before */
	unsigned long file_count;
	/*
	 * Instead of anon_count: the anon count that brings the sum to a
	 * quarter of the pages on the lists, plus over_quarter.
	 */
	bool at_quarter;
	unsigned long over_quarter;
	unsigned long anon_rotated;	/* PGROTATE_ANON since the last call */
	unsigned long file_rotated;
	unsigned long anon_io;	/* WORKINGSET_RESTORE_ANON, NR_VMSCAN_WRITE */
	unsigned long file_io;	/* WORKINGSET_RESTORE_FILE */
	/*
	 * Global reclaim only: the node's high watermark set to its file and
	 * free pages, less over_wmark: file and free are over_wmark pages
	 * over it.
	 */
	bool at_wmark;
	unsigned long over_wmark;
	/* The test's folios of vmscan_test_low_orders: inactive lists low. */
	bool lists_low;
};

/*
 * prepare_scan_control() for cgroup reclaim of a memcg of the test's own
 * (with a memory controller) or global reclaim of a node of the test's
 * own (without one; the watermark rows run only there): each output by
 * the rules, from the counts the call read. Costs: for each type, count
 * += new I/O * SWAP_CLUSTER_MAX + new rotations, then both halved while
 * their sum is over a quarter of the LRU. Deactivation of a type when its
 * WORKINGSET_ACTIVATE moved since the lruvec's snapshot or its inactive
 * list is low, of both with force_deactivate. Cache trim mode with
 * inactive file >> priority, file not being deactivated and no
 * no_cache_trim_mode. File is tiny when file and free pages are at most
 * the high watermarks, anon is not being deactivated and inactive anon >>
 * priority, in global reclaim; cgroup reclaim leaves file_is_tiny as it
 * was.
 */
static const struct vmscan_test_prepare_case vmscan_test_prepare_cases[] = {
	{
		.desc = "nothing new: counts kept",
		.priority = DEF_PRIORITY,
		.anon_count = 3,
		.file_count = 5,
	},
	{
		.desc = "rotations and I/O since the last call",
		.priority = DEF_PRIORITY,
		.anon_rotated = 5,
		.file_rotated = 7,
		.anon_io = 2,
		.file_io = 1,
	},
	{
		.desc = "an I/O weighs SWAP_CLUSTER_MAX rotations",
		.priority = DEF_PRIORITY,
		.anon_count = 1,
		.file_count = 1,
		.anon_io = 1,
		.file_rotated = SWAP_CLUSTER_MAX,
	},
	{
		.desc = "counts at a quarter of the LRU: kept",
		.priority = DEF_PRIORITY,
		.file_count = 1,
		.at_quarter = true,
	},
	{
		.desc = "counts one over a quarter of the LRU: halved once",
		.priority = DEF_PRIORITY,
		.file_count = 1,
		.at_quarter = true,
		.over_quarter = 1,
	},
	{
		.desc = "counts over a quarter of the LRU: halved together",
		.priority = DEF_PRIORITY,
		.anon_count = 3UL << 40,
		.file_count = 1UL << 40,
		.anon_rotated = 1UL << 38,
	},
	{
		.desc = "anon refaults: anon deactivated",
		.priority = 0,
		.anon_refaulted = true,
	},
	{
		.desc = "file refaults: file deactivated, no cache trim",
		.priority = 0,
		.file_refaulted = true,
	},
	{
		.desc = "force_deactivate: both deactivated, no cache trim",
		.priority = 0,
		.force_deactivate = true,
	},
	{
		.desc = "no_cache_trim_mode: no cache trim",
		.priority = 0,
		.no_cache_trim_mode = true,
	},
	{
		.desc = "no refaults, priority 0: cache trim",
		.priority = 0,
	},
	{
		.desc = "inactive lists low, no refaults: both deactivated",
		.priority = 0,
		.lists_low = true,
	},
	{
		.desc = "file and free at the high watermarks: file is tiny",
		.priority = 0,
		.at_wmark = true,
	},
	{
		.desc = "file and free one over the high watermarks: not tiny",
		.priority = 0,
		.at_wmark = true,
		.over_wmark = 1,
	},
	{
		.desc = "at the high watermarks, anon refaults: not tiny",
		.priority = 0,
		.anon_refaulted = true,
		.at_wmark = true,
	},
	{
		.desc = "at the high watermarks, inactive anon >> priority 10",
		.priority = 10,
		.at_wmark = true,
	},
};

KUNIT_ARRAY_PARAM_DESC(vmscan_test_prepare, vmscan_test_prepare_cases, desc);

/* The counts prepare_scan_control() reads, as it reads them. */
struct vmscan_test_view {
	unsigned long rotated[ANON_AND_FILE];
	unsigned long io[ANON_AND_FILE];
	unsigned long activate[ANON_AND_FILE];
	unsigned long lru[NR_LRU_LISTS];
	unsigned long node_file;
	unsigned long node_anon;	/* inactive */
	unsigned long free;
	unsigned long high_wmark;
};

/* The sum of the high watermarks of the node's managed zones. */
static unsigned long vmscan_test_high_wmark(struct pglist_data *pgdat)
{
	unsigned long sum = 0;
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++)
		if (managed_zone(&pgdat->node_zones[z]))
			sum += high_wmark_pages(&pgdat->node_zones[z]);
	return sum;
}

static void vmscan_test_read_view(struct lruvec *lruvec,
				  struct vmscan_test_view *v)
{
	struct pglist_data *pgdat = lruvec_pgdat(lruvec);
	enum lru_list lru;
	int f;

	memset(v, 0, sizeof(*v));
	for (f = 0; f < ANON_AND_FILE; f++) {
		v->rotated[f] = lruvec_page_state_monotonic(lruvec,
							    PGROTATE_ANON + f);
		v->io[f] = lruvec_page_state_monotonic(lruvec,
						       WORKINGSET_RESTORE_BASE + f);
		v->activate[f] = lruvec_page_state(lruvec,
						   WORKINGSET_ACTIVATE_BASE + f);
	}
	v->io[WORKINGSET_ANON] += lruvec_page_state_monotonic(lruvec,
							      NR_VMSCAN_WRITE);
	for_each_evictable_lru(lru)
		v->lru[lru] = lruvec_page_state(lruvec, NR_LRU_BASE + lru);
	v->node_file = node_page_state(pgdat, NR_ACTIVE_FILE) +
		       node_page_state(pgdat, NR_INACTIVE_FILE);
	v->node_anon = node_page_state(pgdat, NR_INACTIVE_ANON);
	v->free = sum_zone_node_page_state(pgdat->node_id, NR_FREE_PAGES);
	v->high_wmark = vmscan_test_high_wmark(pgdat);
}

/* What prepare_scan_control() left: the scan_control and the costs. */
struct vmscan_test_prepared {
	int tries;
	struct vmscan_test_view view;
	struct scan_control sc;
	struct lru_cost cost[ANON_AND_FILE];
};

/*
 * The counts prepare_scan_control() reads, each moved by an amount of its
 * own: a count read in the place of another, or not read at all, then
 * gives another cost or another deactivation.
 */
static const struct vmscan_test_move {
	enum node_stat_item item;
	int nr;
} vmscan_test_moves[] = {
	{
		.item = PGROTATE_ANON,
		.nr = 1,
	},
	{
		.item = PGROTATE_FILE,
		.nr = 2,
	},
	{
		.item = WORKINGSET_RESTORE_ANON,
		.nr = 4,
	},
	{
		.item = WORKINGSET_RESTORE_FILE,
		.nr = 8,
	},
	{
		.item = NR_VMSCAN_WRITE,
		.nr = 16,
	},
	{
		.item = WORKINGSET_ACTIVATE_ANON,
		.nr = 32,
	},
	{
		.item = WORKINGSET_ACTIVATE_FILE,
		.nr = 64,
	},
};

/*
 * Where prepare_scan_control() runs for a case: cgroup reclaim of a memcg
 * of the test's own, with a memory controller, whose lruvec and counts
 * are the test's alone; or global reclaim, without one, of a node of the
 * test's own that stands for the real one in what the call keeps and the
 * watermarks it reads.
 */
struct vmscan_test_target {
	struct mem_cgroup *memcg;	/* the reclaim's target; NULL: global */
	struct pglist_data *pgdat;
	struct lruvec *lruvec;
	struct lruvec *node_lruvec;	/* global: the real node's */
	struct folio *folios[NR_LRU_LISTS];
};

static void vmscan_test_lists_del_action(void *folios)
{
	vmscan_test_lists_del(folios);
}

#ifdef CONFIG_MEMCG
/*
 * Count the events of vmscan_test_moves on the memcg's lruvec, and flush
 * them, so that its lruvec reads them at once. Only the memcg's counts
 * move (mod_memcg_lruvec_state()), and its ancestors', as any memcg's
 * events count there; the node's do not. Like any events they stay
 * counted: their readers take differences.
 */
static void vmscan_test_move(struct vmscan_test_target *t)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(vmscan_test_moves); i++)
		mod_memcg_lruvec_state(t->lruvec, vmscan_test_moves[i].item,
				       vmscan_test_moves[i].nr);
	css_rstat_flush(&t->memcg->css);
}

/*
 * Cgroup reclaim of a memcg of the test's own: the case's folios, charged
 * to it, on its lruvec of their node, which holds nothing else.
 */
static void vmscan_test_target_init(struct kunit *test,
				    const unsigned int *orders,
				    struct vmscan_test_target *t)
{
	t->memcg = mm_kunit_memcg_create(test);
	vmscan_test_list_folios(test, t->folios, orders, t->memcg);
	t->lruvec = vmscan_test_lists_add(t->folios);
	t->pgdat = lruvec_pgdat(t->lruvec);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  vmscan_test_lists_del_action,
						  t->folios));
}
#else
/*
 * Without a memory controller or NUMA, the node's counts are the system's
 * (node_page_state() reads global_node_page_state()): the events of
 * vmscan_test_moves are counted on the node's lruvec, 1024 times their
 * values, more than any per-CPU threshold, so that they reach the counts
 * at once. Like any events they stay counted: their readers take
 * differences, and a count taken back would read as a negative one.
 */
static void vmscan_test_move(struct vmscan_test_target *t)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(vmscan_test_moves); i++)
		mod_lruvec_state(t->node_lruvec, vmscan_test_moves[i].item,
				 vmscan_test_moves[i].nr * 1024);
}

/*
 * Global reclaim without a memory controller. The case's folios go on the
 * node's lruvec, without PG_lru, since its lists and counts are the ones
 * reclaim reads. What prepare_scan_control() keeps of a node, the costs
 * and the refault snapshot of its lruvec, and the zones' watermarks it
 * reads, are those of a node of the test's own: a pglist_data in no list
 * of nodes, with the real node's id (by which the free pages are read),
 * whose first zone is managed with a high watermark the test sets. No
 * real zone's watermark changes.
 */
static void vmscan_test_target_init(struct kunit *test,
				    const unsigned int *orders,
				    struct vmscan_test_target *t)
{
	struct pglist_data *pgdat;

	if (IS_ENABLED(CONFIG_NUMA))
		kunit_skip(test, "a node's counts are its own with NUMA");
	pgdat = kunit_kzalloc(test, sizeof(*pgdat), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pgdat);
	vmscan_test_list_folios(test, t->folios, orders, NULL);
	t->node_lruvec = vmscan_test_lists_add(t->folios);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  vmscan_test_lists_del_action,
						  t->folios));
	pgdat->node_id = lruvec_pgdat(t->node_lruvec)->node_id;
	pgdat->node_zones[0].zone_pgdat = pgdat;
	atomic_long_set(&pgdat->node_zones[0].managed_pages, 1);
	lruvec_init(&pgdat->__lruvec);
	t->pgdat = pgdat;
	t->lruvec = &pgdat->__lruvec;
}
#endif

/*
 * The lruvec and node prepare_scan_control() is given for a case with
 * lists of @orders, and its counts moved.
 */
static void vmscan_test_target(struct kunit *test, const unsigned int *orders,
			       struct vmscan_test_target *t)
{
	vmscan_test_target_init(test, orders, t);
	vmscan_test_move(t);
}

/*
 * Set the high watermark of the test's node so that its file and free
 * pages in @v are the case's over_wmark pages over it, and read the sum of
 * its watermarks into @v.
 */
static void vmscan_test_set_wmark(const struct vmscan_test_prepare_case *c,
				  struct pglist_data *pgdat,
				  struct vmscan_test_view *v)
{
	struct zone *zone = &pgdat->node_zones[0];

	zone->_watermark[WMARK_HIGH] = v->node_file + v->free - c->over_wmark;
	v->high_wmark = vmscan_test_high_wmark(pgdat);
}

/* The pages on the evictable lists in @v. */
static unsigned long vmscan_test_lrusize(const struct vmscan_test_view *v)
{
	return v->lru[LRU_INACTIVE_ANON] + v->lru[LRU_ACTIVE_ANON] +
	       v->lru[LRU_INACTIVE_FILE] + v->lru[LRU_ACTIVE_FILE];
}

/* The case's anon count before the call, for the lists in @v. */
static unsigned long
vmscan_test_anon_count(const struct vmscan_test_prepare_case *c,
		       const struct vmscan_test_view *v)
{
	if (!c->at_quarter)
		return c->anon_count;
	return vmscan_test_lrusize(v) / 4 - c->file_count + c->over_quarter;
}

/*
 * Give the lruvec the case's costs and refault snapshot, relative to the
 * counts in @v: what the last call and the last reclaim round would have
 * left.
 */
static void vmscan_test_set_costs(struct lruvec *lruvec,
				  const struct vmscan_test_prepare_case *c,
				  const struct vmscan_test_view *v)
{
	const unsigned long count[] = { vmscan_test_anon_count(c, v),
					c->file_count };
	const unsigned long rotated[] = { c->anon_rotated, c->file_rotated };
	const unsigned long io[] = { c->anon_io, c->file_io };
	const bool refaulted[] = { c->anon_refaulted, c->file_refaulted };
	int f;

	spin_lock(&lruvec->cost_lock);
	for (f = 0; f < ANON_AND_FILE; f++) {
		lruvec->cost[f].count = count[f];
		lruvec->cost[f].last_rotated = v->rotated[f] - rotated[f];
		lruvec->cost[f].last_io = v->io[f] - io[f];
	}
	spin_unlock(&lruvec->cost_lock);
	for (f = 0; f < ANON_AND_FILE; f++)
		WRITE_ONCE(lruvec->refaults[f], v->activate[f] - refaulted[f]);
}

/* inactive_is_low() as the table above it states it. */
static bool vmscan_test_model_low(const struct vmscan_test_view *v,
				  enum lru_list inactive)
{
	unsigned long gb = (v->lru[inactive] + v->lru[inactive + LRU_ACTIVE]) >>
			   (30 - PAGE_SHIFT);
	unsigned long ratio = gb ? int_sqrt(10 * gb) : 1;

	return v->lru[inactive] * ratio < v->lru[inactive + LRU_ACTIVE];
}

/* The DEACTIVATE_* bits prepare_scan_control() sets for the case. */
static unsigned int
vmscan_test_model_deactivate(const struct vmscan_test_prepare_case *c,
			     const struct vmscan_test_view *v)
{
	unsigned int deactivate = 0;

	if (c->force_deactivate)
		return DEACTIVATE_ANON | DEACTIVATE_FILE;
	if (c->anon_refaulted || vmscan_test_model_low(v, LRU_INACTIVE_ANON))
		deactivate |= DEACTIVATE_ANON;
	if (c->file_refaulted || vmscan_test_model_low(v, LRU_INACTIVE_FILE))
		deactivate |= DEACTIVATE_FILE;
	return deactivate;
}

/*
 * Call prepare_scan_control() for @t until the counts it reads held still
 * across the call (only the real node's free pages can move); the
 * scan_control starts as the opposite of what the case expects, as the
 * round before may have left it.
 */
static void vmscan_test_prepare(const struct vmscan_test_prepare_case *c,
				const struct vmscan_test_target *t,
				struct vmscan_test_prepared *out)
{
	struct lruvec *lruvec = t->lruvec;
	struct vmscan_test_view after;
	unsigned int deactivate;

	for (out->tries = 1; out->tries <= 10; out->tries++) {
		vmscan_test_read_view(lruvec, &out->view);
		if (c->at_wmark)
			vmscan_test_set_wmark(c, t->pgdat, &out->view);
		vmscan_test_set_costs(lruvec, c, &out->view);
		deactivate = vmscan_test_model_deactivate(c, &out->view);
		out->sc = (struct scan_control) {
			.target_mem_cgroup = t->memcg,
			.priority = c->priority,
			.reclaim_idx = MAX_NR_ZONES - 1,
			.force_deactivate = c->force_deactivate,
			.no_cache_trim_mode = c->no_cache_trim_mode,
			.may_deactivate = (DEACTIVATE_ANON | DEACTIVATE_FILE) &
					  ~deactivate,
			.cache_trim_mode = c->file_refaulted ||
					   c->no_cache_trim_mode,
			.file_is_tiny = 1,
			.anon_cost = 7,
			.file_cost = 11,
		};
		prepare_scan_control(t->pgdat, &out->sc);
		spin_lock(&lruvec->cost_lock);
		memcpy(out->cost, lruvec->cost, sizeof(out->cost));
		spin_unlock(&lruvec->cost_lock);
		vmscan_test_read_view(lruvec, &after);
		after.high_wmark = out->view.high_wmark;
		if (!memcmp(&out->view, &after, sizeof(after)))
			break;
	}
}

/*
 * The costs prepare_scan_control() leaves: the case's count, I/O and
 * rotations of each type, halved together until they are at most a
 * quarter of the pages on the lists.
 */
static void vmscan_test_model_costs(const struct vmscan_test_prepare_case *c,
				    const struct vmscan_test_view *v,
				    unsigned long *anon, unsigned long *file)
{
	unsigned long lrusize = vmscan_test_lrusize(v);

	*anon = vmscan_test_anon_count(c, v) + c->anon_io * SWAP_CLUSTER_MAX +
		c->anon_rotated;
	*file = c->file_count + c->file_io * SWAP_CLUSTER_MAX +
		c->file_rotated;
	while (*anon + *file > lrusize / 4) {
		*anon /= 2;
		*file /= 2;
	}
}

/*
 * Each output by the rules, from the counts the call read. Only global
 * reclaim decides file_is_tiny: cgroup reclaim leaves it as it was.
 */
static void vmscan_test_check_prepared(struct kunit *test,
				       const struct vmscan_test_prepare_case *c,
				       const struct vmscan_test_target *t,
				       const struct vmscan_test_prepared *out)
{
	const struct vmscan_test_view *v = &out->view;
	unsigned int deactivate = vmscan_test_model_deactivate(c, v);
	unsigned long anon, file;
	bool trim, tiny;

	vmscan_test_model_costs(c, v, &anon, &file);
	trim = (v->lru[LRU_INACTIVE_FILE] >> c->priority) &&
	       !(deactivate & DEACTIVATE_FILE) && !c->no_cache_trim_mode;
	if (t->memcg)
		tiny = true;
	else
		tiny = v->node_file + v->free <= v->high_wmark &&
		       !(deactivate & DEACTIVATE_ANON) &&
		       (v->node_anon >> c->priority);

	KUNIT_EXPECT_EQ(test, anon, out->sc.anon_cost);
	KUNIT_EXPECT_EQ(test, file, out->sc.file_cost);
	KUNIT_EXPECT_EQ(test, anon, out->cost[WORKINGSET_ANON].count);
	KUNIT_EXPECT_EQ(test, file, out->cost[WORKINGSET_FILE].count);
	KUNIT_EXPECT_EQ(test, v->rotated[WORKINGSET_ANON],
			out->cost[WORKINGSET_ANON].last_rotated);
	KUNIT_EXPECT_EQ(test, v->rotated[WORKINGSET_FILE],
			out->cost[WORKINGSET_FILE].last_rotated);
	KUNIT_EXPECT_EQ(test, v->io[WORKINGSET_ANON],
			out->cost[WORKINGSET_ANON].last_io);
	KUNIT_EXPECT_EQ(test, v->io[WORKINGSET_FILE],
			out->cost[WORKINGSET_FILE].last_io);
	KUNIT_EXPECT_EQ(test, deactivate, (unsigned int)out->sc.may_deactivate);
	KUNIT_EXPECT_EQ(test, trim, (bool)out->sc.cache_trim_mode);
	KUNIT_EXPECT_EQ(test, tiny, (bool)out->sc.file_is_tiny);
}

static void vmscan_test_prepare_scan_control(struct kunit *test)
{
	const struct vmscan_test_prepare_case *c = test->param_value;
	struct vmscan_test_target *t;
	struct vmscan_test_prepared out;

	vmscan_test_need_lru_gen(test, false);
	/*
	 * Global reclaim with a memory controller reads and writes the root
	 * memcg's lruvec, and a node of the test's own cannot stand in for
	 * the real one there (mem_cgroup_lruvec() would take it for the
	 * root's): the watermark rows run without one.
	 */
	if (c->at_wmark && IS_ENABLED(CONFIG_MEMCG))
		kunit_skip(test, "global reclaim needs a node of its own");
	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	vmscan_test_target(test, c->lists_low ? vmscan_test_low_orders :
						vmscan_test_list_orders, t);

	vmscan_test_prepare(c, t, &out);

	KUNIT_ASSERT_LE_MSG(test, out.tries, 10, "the counts never held still");
	vmscan_test_check_prepared(test, c, t, &out);
	/* The row's lists were low, as it says, not only by the model. */
	if (c->lists_low)
		KUNIT_EXPECT_EQ(test, DEACTIVATE_ANON | DEACTIVATE_FILE,
				vmscan_test_model_deactivate(c, &out.view));
}

/*
 * Under the multi-gen LRU (not while switching to or from it),
 * prepare_scan_control() decides nothing: the scan_control keeps what the
 * round before left in it, and the lruvec's costs are not touched.
 */
static void vmscan_test_prepare_mglru(struct kunit *test)
{
	struct scan_control sc = {
		.priority = 0,
		.reclaim_idx = MAX_NR_ZONES - 1,
		.force_deactivate = 1,
		.may_deactivate = 0,
		.cache_trim_mode = 1,
		.file_is_tiny = 1,
		.anon_cost = 7,
		.file_cost = 11,
	};
	struct lru_cost cost[ANON_AND_FILE];
	struct vmscan_test_target *t;

	if (!lru_gen_enabled() || lru_gen_switching())
		kunit_skip(test, "the multi-gen LRU is off");
	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	vmscan_test_target(test, vmscan_test_list_orders, t);
	sc.target_mem_cgroup = t->memcg;
	spin_lock(&t->lruvec->cost_lock);
	memcpy(cost, t->lruvec->cost, sizeof(cost));
	spin_unlock(&t->lruvec->cost_lock);

	prepare_scan_control(t->pgdat, &sc);

	KUNIT_EXPECT_EQ(test, 0U, (unsigned int)sc.may_deactivate);
	KUNIT_EXPECT_TRUE(test, sc.cache_trim_mode);
	KUNIT_EXPECT_TRUE(test, sc.file_is_tiny);
	KUNIT_EXPECT_EQ(test, 7UL, sc.anon_cost);
	KUNIT_EXPECT_EQ(test, 11UL, sc.file_cost);
	KUNIT_EXPECT_EQ(test, cost[WORKINGSET_ANON].count,
			t->lruvec->cost[WORKINGSET_ANON].count);
	KUNIT_EXPECT_EQ(test, cost[WORKINGSET_FILE].count,
			t->lruvec->cost[WORKINGSET_FILE].count);
}

static struct kunit_case vmscan_test_balance_cases[] = {
	KUNIT_CASE_PARAM(vmscan_test_prepare_scan_control,
			 vmscan_test_prepare_gen_params),
	KUNIT_CASE(vmscan_test_prepare_mglru),
	KUNIT_CASE_PARAM(vmscan_test_pressure_balance,
			 vmscan_test_pressure_gen_params),
	KUNIT_CASE_PARAM(vmscan_test_get_scan_count,
			 vmscan_test_count_gen_params),
	KUNIT_CASE(vmscan_test_get_scan_count_offline),
	{}
};

static struct kunit_suite vmscan_test_balance_suite = {
	.name = "mm_vmscan_scan_balance",
	.test_cases = vmscan_test_balance_cases,
};

kunit_test_suites(&vmscan_test_mglru_suite, &vmscan_test_balance_suite);

#include "lru_gen_age_kunit.h"

#endif /* CONFIG_MM_VMSCAN_KUNIT_TEST */
