/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of what 6.12's swap readahead does otherwise than 7.3's, by
 * design, where 7.3's rows of mm/tests/swap_state_kunit.h would leave a
 * branch of 6.12's code unpinned:
 *
 *  - swap_vma_readahead() and swap_cluster_readahead() drain this CPU's
 *    LRU batch after the window's reads: the folios read ahead are on the
 *    LRU, held by the swap cache alone (7.3's VMA rows expect them still
 *    in the batch and fail on 6.12: kernel/compat/6.12/expected);
 *  - swap_cache_get_folio() looks the entry up and counts the hit in one:
 *    it returns the folio found, and a lookup that misses counts nothing;
 *  - the cluster read skips the slots it finds cached or freed (7.3's
 *    cluster rows have neither);
 *  - the entry of swap type 0 and offset 0 is no swap entry: the cluster
 *    read's skip of slot 0 shows on a second swap type only;
 *  - the target's swap-in, and the readahead's of a slot ahead, wait for
 *    one of the slot that is under way elsewhere (SWAP_HAS_CACHE, which
 *    7.3 does not have).
 *
 * Part of the harness's 6.12 port only (kernel/compat/6.12), never sent
 * upstream: included at the end of mm/tests/swap_state_kunit.h (the port's
 * patch 0005b), whose objects and helpers it uses.
 */

#include <linux/kthread.h>

/* The rows of swap_state_test_ra_cases, each folio read ahead drained. */
static void swap_6_12_test_vma_readahead(struct kunit *test)
{
	struct swap_state_test_ra ra = { .c = test->param_value };
	struct swap_state_test_events ev;
	struct folio *folio;
	int i;

	swap_state_test_ra_fault(test, &ra, &ev);

	for (i = 0; i < SWAP_STATE_TEST_RA_SPAN; i++) {
		if (ra.c->expected[i] != 'R') {
			swap_state_test_ra_check_page(test, &ra, i);
			continue;
		}
		folio = swap_state_test_cached(swap_state_test_dev_of(&ra, i),
					       SWAP_STATE_TEST_RA_SLOT(i));
		KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "page %d cached", i);
		KUNIT_EXPECT_TRUE_MSG(test, folio_test_uptodate(folio),
				      "page %d up to date", i);
		KUNIT_EXPECT_FALSE_MSG(test, folio_test_locked(folio),
				       "page %d locked", i);
		KUNIT_EXPECT_TRUE_MSG(test, folio_test_readahead(folio),
				      "page %d PG_readahead", i);
		KUNIT_EXPECT_TRUE_MSG(test, folio_test_lru(folio),
				      "page %d on the LRU", i);
		KUNIT_EXPECT_EQ_MSG(test, 1, folio_ref_count(folio),
				    "page %d references", i);
	}
	swap_state_test_ra_check_events(test, &ra, &ev);
}

/*
 * The block swap_cluster_readahead() reads (the first cluster row's,
 * 16-23 around 20) is on the LRU once it returns, each slot's folio held
 * by the swap cache alone.
 */
static void swap_6_12_test_cluster_drained(struct kunit *test)
{
	const struct swap_state_test_cluster_case *c =
		&swap_state_test_cluster_cases[0];
	struct swap_info_struct *si;
	struct vm_area_struct *vma;
	struct folio *target, *folio;
	unsigned long offset;

	vma = swap_state_test_cluster_setup(test, c, &si);
	target = swap_state_test_swap_fault(vma, swp_entry(si->type, c->target));
	KUNIT_ASSERT_NOT_NULL(test, target);
	folio_put(target);

	for (offset = c->first; offset <= c->last; offset++) {
		folio = swap_state_test_cached(si, offset);
		KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "slot %lu cached", offset);
		KUNIT_EXPECT_TRUE_MSG(test, folio_test_lru(folio),
				      "slot %lu on the LRU", offset);
		KUNIT_EXPECT_EQ_MSG(test, 1, folio_ref_count(folio),
				    "slot %lu references", offset);
	}
}

/*
 * The cluster read skips a slot the swap cache already holds (its folio
 * left as it was, not PG_readahead nor counted as SWAP_RA) and a slot
 * freed since the fault read its PTE (nothing read there), and reads the
 * rest of the block (the first cluster row's, 16-23 around 20).
 */
static void swap_6_12_test_cluster_skips(struct kunit *test)
{
	const struct swap_state_test_cluster_case *c =
		&swap_state_test_cluster_cases[0];
	unsigned long cached_slot = 17, freed_slot = 22, offset;
	struct folio *cached, *target, *folio;
	struct swap_state_test_events ev;
	struct swap_info_struct *si;
	struct vm_area_struct *vma;
	unsigned char count;

	vma = swap_state_test_cluster_setup(test, c, &si);
	cached = swap_state_test_read(test, si, cached_slot, vma,
				      swap_state_test_addr(SWAP_STATE_TEST_MID));

	swap_state_test_events_before(test, &ev);
	/* A device without clusters locks its swap_map so. */
	spin_lock(&si->lock);
	count = si->swap_map[freed_slot];
	si->swap_map[freed_slot] = 0;
	spin_unlock(&si->lock);
	target = swap_state_test_swap_fault(vma, swp_entry(si->type, c->target));
	spin_lock(&si->lock);
	si->swap_map[freed_slot] = count;
	spin_unlock(&si->lock);
	swap_state_test_events_since(test, &ev);

	KUNIT_ASSERT_NOT_NULL(test, target);
	folio_put(target);
	KUNIT_EXPECT_PTR_EQ(test, cached, swap_state_test_cached(si, cached_slot));
	for (offset = c->first; offset <= c->last; offset++) {
		folio = swap_state_test_cached(si, offset);
		if (offset == freed_slot) {
			KUNIT_EXPECT_NULL_MSG(test, folio, "slot %lu cached",
					      offset);
			continue;
		}
		KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "slot %lu cached", offset);
		KUNIT_EXPECT_EQ_MSG(test,
				    offset != c->target && offset != cached_slot,
				    folio_test_readahead(folio),
				    "slot %lu PG_readahead", offset);
	}
	/* The block less the target, the cached slot and the freed one. */
	KUNIT_EXPECT_EQ(test, c->last - c->first + 1 - 3, ev.swap_ra);
}

/*
 * The cluster row of slot 0's block (1-7 around 2) on the second swap
 * type: 6.12 takes the entry of type 0 and offset 0 for no entry at all
 * (get_swap_device() refuses it), so on the first type slot 0 is never
 * read, whatever swap_cluster_readahead() asks. The test device's slot 0
 * is an ordinary slot, not a header swapon marks bad: on another type only
 * swap_cluster_readahead()'s own skip of the swap header keeps it out.
 */
static void swap_6_12_test_cluster_header(struct kunit *test)
{
	const struct swap_state_test_cluster_case *c =
		&swap_state_test_cluster_cases[3];
	struct swap_info_struct *si;
	struct vm_area_struct *vma;
	struct folio *target;
	unsigned long offset;

	/* The first type, for the case's device to take the second. */
	swap_state_test_swapon_dev(test, 1);
	vma = swap_state_test_cluster_setup(test, c, &si);
	KUNIT_ASSERT_NE(test, 0, si->type);
	KUNIT_ASSERT_EQ(test, 0, c->first - 1);

	target = swap_state_test_swap_fault(vma, swp_entry(si->type, c->target));
	KUNIT_ASSERT_NOT_NULL(test, target);
	folio_put(target);
	for (offset = 0; offset < SWAP_STATE_TEST_SWAP_PAGES; offset++)
		swap_state_test_check_cluster_slot(test, c, si, offset);
}

/*
 * 6.12's swap_cache_get_folio() of @entry at the test fault address, as
 * do_swap_page() looks up, with the swap device held.
 */
static struct folio *swap_6_12_test_lookup(struct kunit *test,
					   swp_entry_t entry,
					   struct vm_area_struct *vma)
{
	struct swap_info_struct *si = get_swap_device(entry);
	struct folio *found;

	KUNIT_ASSERT_NOT_NULL(test, si);
	mmap_read_lock(vma->vm_mm);
	found = (swap_cache_get_folio)(entry, vma, SWAP_STATE_TEST_FAULT);
	mmap_read_unlock(vma->vm_mm);
	put_swap_device(si);
	return found;
}

/*
 * The lookup of page @page of a folio of @order in the swap cache returns
 * the folio, with a reference taken.
 */
static void swap_6_12_test_check_lookup(struct kunit *test,
					unsigned int order, unsigned long page)
{
	struct vm_area_struct *vma;
	struct folio *folio, *found;
	swp_entry_t entry;
	int refs;

	swap_state_test_use_vma_readahead(test);
	folio = swap_state_test_folio(test, order, false);
	vma = swap_state_test_hits_vma(test, SWAP_STATE_TEST_INFO(2));
	entry = swp_entry(swp_type(folio_swap_entry(folio)),
			  swp_offset(folio_swap_entry(folio)) + page);

	refs = folio_ref_count(folio);
	found = swap_6_12_test_lookup(test, entry, vma);
	KUNIT_EXPECT_PTR_EQ(test, folio, found);
	KUNIT_EXPECT_EQ(test, refs + 1, folio_ref_count(folio));
	if (found)
		folio_put(found);
}

static void swap_6_12_test_lookup_hit(struct kunit *test)
{
	swap_6_12_test_check_lookup(test, 0, 0);
}

/* A large folio is found for the entry of any of its pages, too. */
static void swap_6_12_test_lookup_hit_large(struct kunit *test)
{
	swap_6_12_test_check_lookup(test, 2, 1);
}

/*
 * 6.12's swap_cache_get_folio() on a slot the swap cache does not hold
 * finds none and counts no hit: the VMA's readahead info, the global hits
 * and the SWAP_RA_HIT events stay as they were.
 */
static void swap_6_12_test_lookup_miss(struct kunit *test)
{
	struct swap_info_struct *si;
	struct vm_area_struct *vma;
	unsigned long events;
	struct folio *found;

	swap_state_test_use_vma_readahead(test);
	si = swap_state_test_swapon_dev(test, SWAP_STATE_TEST_SWAP_PAGES);
	vma = swap_state_test_hits_vma(test, SWAP_STATE_TEST_INFO(2));

	events = mm_kunit_vm_event(test, SWAP_RA_HIT);
	found = swap_6_12_test_lookup(test, swp_entry(si->type, 10), vma);
	events = mm_kunit_vm_event(test, SWAP_RA_HIT) - events;
	if (found)
		folio_put(found);

	KUNIT_EXPECT_NULL(test, found);
	KUNIT_EXPECT_EQ(test, SWAP_STATE_TEST_INFO(2),
			atomic_long_read(&vma->swap_readahead_info));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&swapin_readahead_hits));
	KUNIT_EXPECT_EQ(test, 0UL, events);
}

/*
 * Another swap-in of the target's slot, which took SWAP_HAS_CACHE before
 * the fault got there and gives it up (say its memcg charge failed) once
 * the fault waits for it: in schedule_timeout_uninterruptible(), the only
 * place the fault sleeps.
 */
struct swap_6_12_test_racer {
	struct task_struct *fault;	/* the task that faults */
	struct swap_info_struct *si;
	swp_entry_t entry;
	bool released;
};

static int swap_6_12_test_racer_fn(void *data)
{
	struct swap_6_12_test_racer *r = data;

	while (!kthread_should_stop()) {
		if (!r->released &&
		    READ_ONCE(r->fault->__state) == TASK_UNINTERRUPTIBLE) {
			swapcache_clear(r->si, r->entry, 1);
			WRITE_ONCE(r->released, true);
		}
		schedule_timeout_interruptible(1);
	}
	return 0;
}

struct swap_6_12_test_wait_case {
	const char *desc;
	bool vma_ra;		/* else swap_cluster_readahead() */
};

/*
 * Both paths read the target alone here: a VMA window of one page (no
 * hits, the last fault far away), page_cluster 0 on the cluster path.
 */
static const struct swap_6_12_test_wait_case swap_6_12_test_wait_cases[] = {
	{ .desc = "VMA readahead, a 1-page window", .vma_ra = true },
	{ .desc = "cluster readahead, page_cluster 0", .vma_ra = false },
};

KUNIT_ARRAY_PARAM_DESC(swap_6_12_test_wait, swap_6_12_test_wait_cases, desc);

/*
 * The fault must wait for a swap-in of its own slot that is under way
 * elsewhere, not give up: a NULL return would fail the fault.
 */
static void swap_6_12_test_waits_for_target_swapin(struct kunit *test)
{
	const struct swap_6_12_test_wait_case *c = test->param_value;
	struct swap_6_12_test_racer racer = { .fault = current };
	unsigned long addr = swap_state_test_addr(SWAP_STATE_TEST_MID);
	unsigned long far = swap_state_test_addr(SWAP_STATE_TEST_MID + 50);
	struct task_struct *thread;
	struct vm_area_struct *vma;
	struct folio *target;

	swap_state_test_use_vma_readahead(test);
	if (!c->vma_ra)
		mm_kunit_set_knob(test, enable_vma_readahead, false);
	mm_kunit_set_knob(test, page_cluster, c->vma_ra ? 3 : 0);
	racer.si = swap_state_test_swapon_dev(test, SWAP_STATE_TEST_SWAP_PAGES);
	racer.entry = swp_entry(racer.si->type, 20);
	vma = swap_state_test_hits_vma(test, SWAP_RA_VAL(far, 0UL, 0UL));
	swap_state_test_hold_ptes(test, vma->vm_mm);
	inc_mm_counter(vma->vm_mm, MM_SWAPENTS);
	KUNIT_ASSERT_TRUE(test, mm_kunit_set_pte(vma->vm_mm, addr,
						 softleaf_to_pte(racer.entry)));
	KUNIT_ASSERT_EQ(test, 0, swapcache_prepare(racer.entry, 1));
	thread = kthread_run(swap_6_12_test_racer_fn, &racer, "swap_6_12_racer");
	if (IS_ERR(thread))
		swapcache_clear(racer.si, racer.entry, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(thread));

	target = swap_state_test_swap_fault(vma, racer.entry);
	kthread_stop(thread);
	if (!racer.released)
		swapcache_clear(racer.si, racer.entry, 1);

	KUNIT_EXPECT_TRUE(test, racer.released);
	KUNIT_ASSERT_NOT_NULL(test, target);
	folio_put(target);
	KUNIT_EXPECT_PTR_EQ(test, target, swap_state_test_cached(racer.si, 20));
	KUNIT_EXPECT_TRUE(test, folio_test_uptodate(target));
	KUNIT_EXPECT_FALSE(test, folio_test_locked(target));
}

struct swap_6_12_test_ahead_case {
	const char *desc;
	bool vma_ra;		/* else swap_cluster_readahead() */
};

/*
 * The window of 7.3's "forward window: from the fault on" row (pages 4-7
 * of the span, slots 20-23), and the block of the first cluster row
 * (16-23 around 20): slot 21, after the target's, is read ahead in both.
 */
static const struct swap_6_12_test_ahead_case swap_6_12_test_ahead_cases[] = {
	{ .desc = "VMA readahead, a forward window", .vma_ra = true },
	{ .desc = "cluster readahead, a block", .vma_ra = false },
};

KUNIT_ARRAY_PARAM_DESC(swap_6_12_test_ahead, swap_6_12_test_ahead_cases, desc);

/*
 * A slot of the window that another swap-in holds (SWAP_HAS_CACHE) and
 * gives up while the readahead waits for it: the readahead waits, then
 * reads the slot ahead as the others, PG_readahead, not skipping it.
 */
static void swap_6_12_test_waits_for_slot_ahead(struct kunit *test)
{
	const struct swap_6_12_test_ahead_case *c = test->param_value;
	struct swap_state_test_ra ra = { .c = &swap_state_test_ra_cases[3] };
	struct swap_6_12_test_racer racer = { .fault = current };
	struct task_struct *thread;
	struct vm_area_struct *vma;
	struct folio *target, *folio;
	swp_entry_t entry;

	if (c->vma_ra) {
		swap_state_test_ra_setup(test, &ra);
		vma = ra.vma;
		racer.si = ra.si[0];
		entry = swap_state_test_ra_entry(&ra, SWAP_STATE_TEST_RA_BEFORE);
	} else {
		vma = swap_state_test_cluster_setup(test,
						    &swap_state_test_cluster_cases[0],
						    &racer.si);
		entry = swp_entry(racer.si->type,
				  swap_state_test_cluster_cases[0].target);
	}
	racer.entry = swp_entry(racer.si->type, swp_offset(entry) + 1);
	KUNIT_ASSERT_EQ(test, 0, swapcache_prepare(racer.entry, 1));
	thread = kthread_run(swap_6_12_test_racer_fn, &racer, "swap_6_12_racer");
	if (IS_ERR(thread))
		swapcache_clear(racer.si, racer.entry, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(thread));

	target = swap_state_test_swap_fault(vma, entry);
	kthread_stop(thread);
	if (!racer.released)
		swapcache_clear(racer.si, racer.entry, 1);

	KUNIT_EXPECT_TRUE(test, racer.released);
	KUNIT_ASSERT_NOT_NULL(test, target);
	folio_put(target);
	folio = swap_state_test_cached(racer.si, swp_offset(racer.entry));
	KUNIT_ASSERT_NOT_NULL(test, folio);
	KUNIT_EXPECT_TRUE(test, folio_test_uptodate(folio));
	KUNIT_EXPECT_TRUE(test, folio_test_readahead(folio));
}

static struct kunit_case swap_6_12_test_cases[] = {
	KUNIT_CASE_PARAM(swap_6_12_test_vma_readahead,
			 swap_state_test_ra_gen_params),
	KUNIT_CASE(swap_6_12_test_cluster_drained),
	KUNIT_CASE(swap_6_12_test_cluster_skips),
	KUNIT_CASE(swap_6_12_test_cluster_header),
	KUNIT_CASE(swap_6_12_test_lookup_hit),
	KUNIT_CASE(swap_6_12_test_lookup_hit_large),
	KUNIT_CASE(swap_6_12_test_lookup_miss),
	KUNIT_CASE_PARAM(swap_6_12_test_waits_for_target_swapin,
			 swap_6_12_test_wait_gen_params),
	KUNIT_CASE_PARAM(swap_6_12_test_waits_for_slot_ahead,
			 swap_6_12_test_ahead_gen_params),
	{}
};

static struct kunit_suite swap_6_12_test_suite = {
	.name = "mm_swap_6_12",
	.test_cases = swap_6_12_test_cases,
};

kunit_test_suite(swap_6_12_test_suite);
