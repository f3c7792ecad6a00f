/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for VMA-based swap readahead (mm/swap_state.c).
 *
 * This file is included at the bottom of mm/swap_state.c so that the tests
 * can call the static functions of that file and reach its static state.
 *
 * The tests pin down:
 *  - __swapin_nr_pages(): the readahead window heuristic;
 *  - swap_vma_ra_win(): where the window lies around the faulting address,
 *    how it is clipped, and what is remembered in vma->swap_readahead_info;
 *  - swap_cache_get_folio(): how hits on readahead folios are counted, per
 *    VMA or globally.
 *
 * Every global knob a test changes (page_cluster, enable_vma_readahead,
 * nr_rotate_swap, swapin_readahead_hits) is restored by a KUnit action, so
 * it is restored whether the test passes or fails.
 */

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST

#include <kunit/test.h>
#include <linux/mman.h>

/* -------------------------------------------------------------------------
 * Restoring global state
 */

static void swap_ra_restore_page_cluster(void *old)
{
	WRITE_ONCE(page_cluster, (int)(long)old);
}

static void swap_ra_set_page_cluster(struct kunit *test, int val)
{
	void *old = (void *)(long)READ_ONCE(page_cluster);

	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, swap_ra_restore_page_cluster, old));
	WRITE_ONCE(page_cluster, val);
}

static void swap_ra_restore_vma_readahead(void *old)
{
	WRITE_ONCE(enable_vma_readahead, (bool)(long)old);
}

static void swap_ra_set_vma_readahead(struct kunit *test, bool val)
{
	void *old = (void *)(long)READ_ONCE(enable_vma_readahead);

	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, swap_ra_restore_vma_readahead, old));
	WRITE_ONCE(enable_vma_readahead, val);
}

static void swap_ra_restore_rotate_swap(void *old)
{
	atomic_set(&nr_rotate_swap, (int)(long)old);
}

static void swap_ra_set_rotate_swap(struct kunit *test, int val)
{
	void *old = (void *)(long)atomic_read(&nr_rotate_swap);

	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, swap_ra_restore_rotate_swap, old));
	atomic_set(&nr_rotate_swap, val);
}

static void swap_ra_restore_global_hits(void *old)
{
	atomic_set(&swapin_readahead_hits, (int)(long)old);
}

static void swap_ra_set_global_hits(struct kunit *test, int val)
{
	void *old = (void *)(long)atomic_read(&swapin_readahead_hits);

	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, swap_ra_restore_global_hits, old));
	atomic_set(&swapin_readahead_hits, val);
}

/* -------------------------------------------------------------------------
 * Test objects: a VMA and a swap cache that no swap device backs
 */

/*
 * An anonymous VMA at exactly [@start, @end) in the test's own mm, as a
 * swap fault finds it, with @ra_info as its readahead state.
 */
static struct vm_area_struct *swap_ra_alloc_vma(struct kunit *test,
						unsigned long start,
						unsigned long end,
						unsigned long ra_info)
{
	struct vm_area_struct *vma;
	unsigned long addr;

	addr = kunit_vm_mmap(test, NULL, start, end - start,
			     PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, 0);
	KUNIT_ASSERT_EQ_MSG(test, start, addr, "kunit_vm_mmap: %ld", (long)addr);
	mmap_read_lock(current->mm);
	vma = find_vma(current->mm, start);
	mmap_read_unlock(current->mm);
	KUNIT_ASSERT_NOT_NULL(test, vma);
	KUNIT_ASSERT_EQ(test, start, vma->vm_start);
	KUNIT_ASSERT_EQ(test, end, vma->vm_end);
	atomic_long_set(&vma->swap_readahead_info, ra_info);
	return vma;
}

/*
 * A KUnit boot has no swap device. The tests give the last swap type a swap
 * address space of its own, through the real init/exit functions, and put
 * test-owned folios into it.
 */
#define SWAP_RA_TEST_TYPE	(MAX_SWAPFILES - 1)

static void swap_ra_exit_swap_space(void *unused)
{
	exit_swap_address_space(SWAP_RA_TEST_TYPE);
}

static void swap_ra_init_swap_space(struct kunit *test)
{
	if (swapper_spaces[SWAP_RA_TEST_TYPE])
		kunit_skip(test, "swap type %d is in use", SWAP_RA_TEST_TYPE);
	KUNIT_ASSERT_EQ(test, 0,
			init_swap_address_space(SWAP_RA_TEST_TYPE,
						SWAP_ADDRESS_SPACE_PAGES));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, swap_ra_exit_swap_space,
						  NULL));
}

static void swap_ra_remove_folio(void *data)
{
	struct folio *folio = data;

	if (folio_test_swapcache(folio)) {
		swp_entry_t entry = folio->swap;
		struct address_space *space = swap_address_space(entry);

		xa_lock_irq(&space->i_pages);
		__delete_from_swap_cache(folio, entry, NULL);
		xa_unlock_irq(&space->i_pages);
		folio_ref_sub(folio, 1);
	}
	folio_clear_readahead(folio);
	__folio_clear_swapbacked(folio);
	folio_unlock(folio);
	folio_put(folio);
}

/*
 * Add a new order-0 folio for swap offset @offset to the test swap cache, as
 * swap-in would, optionally marked as brought in by readahead. The folio is
 * removed and freed when the test ends.
 */
static struct folio *swap_ra_add_folio(struct kunit *test,
				       unsigned long offset, bool readahead)
{
	swp_entry_t entry = swp_entry(SWAP_RA_TEST_TYPE, offset);
	struct folio *folio;

	folio = folio_alloc(GFP_KERNEL, 0);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	__folio_set_locked(folio);
	__folio_set_swapbacked(folio);
	if (readahead)
		folio_set_readahead(folio);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, swap_ra_remove_folio,
						  folio));
	KUNIT_ASSERT_EQ(test, 0,
			add_to_swap_cache(folio, entry, GFP_KERNEL, NULL));
	return folio;
}

/* -------------------------------------------------------------------------
 * __swapin_nr_pages(): the window heuristic
 */

struct swapin_nr_pages_case {
	const char *desc;
	unsigned long prev_offset;
	unsigned long offset;
	int hits;
	int max_pages;
	int prev_win;
	unsigned int expected;
};

/*
 * Expected values follow the heuristic: window = hits + 2; with no hits the
 * window is 2 only if the offset is adjacent to the previous one, else 1;
 * with hits it is rounded up to a power of two of at least 4; then capped at
 * max_pages; and never less than half the previous window.
 */
static const struct swapin_nr_pages_case swapin_nr_pages_cases[] = {
	{ "no hits, adjacent forward", 100, 101, 0, 8, 0, 2 },
	{ "no hits, adjacent backward", 100, 99, 0, 8, 0, 2 },
	{ "no hits, not adjacent", 100, 103, 0, 8, 0, 1 },
	{ "no hits, same offset", 100, 100, 0, 8, 0, 1 },
	{ "1 hit rounds 3 up to the floor of 4", 100, 500, 1, 32, 0, 4 },
	{ "2 hits give 4", 100, 500, 2, 32, 0, 4 },
	{ "3 hits round 5 up to 8", 100, 500, 3, 32, 0, 8 },
	{ "6 hits give 8", 100, 500, 6, 32, 0, 8 },
	{ "7 hits round 9 up to 16", 100, 500, 7, 32, 0, 16 },
	{ "hits: adjacency does not matter", 100, 101, 7, 32, 0, 16 },
	{ "capped at max_pages", 100, 500, 7, 8, 0, 8 },
	{ "cap applies below the floor of 4", 100, 500, 1, 2, 0, 2 },
	{ "cap of 1 stops adjacent readahead", 100, 101, 0, 1, 0, 1 },
	{ "no hits: half the previous window", 100, 500, 0, 8, 8, 4 },
	{ "half of an odd previous window rounds down", 100, 500, 0, 8, 7, 3 },
	{ "hits: half the previous window when larger", 100, 500, 2, 32, 16, 8 },
	{ "half the previous window beats the cap", 100, 500, 0, 4, 16, 8 },
};

KUNIT_ARRAY_PARAM_DESC(swapin_nr_pages, swapin_nr_pages_cases, desc);

static void swapin_nr_pages_test(struct kunit *test)
{
	const struct swapin_nr_pages_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, c->expected,
			    __swapin_nr_pages(c->prev_offset, c->offset,
					      c->hits, c->max_pages,
					      c->prev_win),
			    "%s: prev_offset=%lu offset=%lu hits=%d max=%d prev_win=%d",
			    c->desc, c->prev_offset, c->offset, c->hits,
			    c->max_pages, c->prev_win);
}

/* -------------------------------------------------------------------------
 * swap_vma_ra_win(): placing and clipping the window
 */

/* Addresses in the table are page numbers from a PMD-aligned base. */
#define SWAP_RA_BASE		(16 * PMD_SIZE)
#define SWAP_RA_PMD_PAGES	(PMD_SIZE >> PAGE_SHIFT)
#define SWAP_RA_ADDR_OF(pg)	(SWAP_RA_BASE + ((unsigned long)(pg) << PAGE_SHIFT))
/* A fault in the middle of the second PMD-sized region from the base. */
#define SWAP_RA_MID		(SWAP_RA_PMD_PAGES + 100)
/* Start and end are left alone when there is no readahead. */
#define SWAP_RA_UNTOUCHED	ULONG_MAX

struct swap_vma_ra_win_case {
	const char *desc;
	int page_cluster;
	unsigned long vm_start, vm_end;	/* pages */
	unsigned long prev, fault;	/* pages */
	unsigned int prev_win, hits;
	unsigned int win;		/* expected */
	unsigned long start, end;	/* expected, pages, or UNTOUCHED */
	bool info_untouched;		/* expected: ra info not rewritten */
};

/*
 * page_cluster 3 allows at most 8 pages. With 2 hits the window is 4 pages,
 * with 5 hits 8 pages. Forward sequential: the window starts at the fault.
 * Backward sequential: it ends at (and includes) the fault. Otherwise it is
 * centred on the fault, (win - 1) / 2 pages before it. The result is clipped
 * to the VMA and to the PMD-sized region that holds the fault.
 */
static const struct swap_vma_ra_win_case swap_vma_ra_win_cases[] = {
	{
		.desc = "forward sequential starts at the fault",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID - 1, .fault = SWAP_RA_MID,
		.prev_win = 4, .hits = 2, .win = 4,
		.start = SWAP_RA_MID, .end = SWAP_RA_MID + 4,
	},
	{
		.desc = "forward sequential without hits reads 2",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID - 1, .fault = SWAP_RA_MID,
		.prev_win = 0, .hits = 0, .win = 2,
		.start = SWAP_RA_MID, .end = SWAP_RA_MID + 2,
	},
	{
		.desc = "backward sequential ends at the fault",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID + 1, .fault = SWAP_RA_MID,
		.prev_win = 4, .hits = 2, .win = 4,
		.start = SWAP_RA_MID - 3, .end = SWAP_RA_MID + 1,
	},
	{
		.desc = "random access centres a 4-page window",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID + 50, .fault = SWAP_RA_MID,
		.prev_win = 4, .hits = 2, .win = 4,
		.start = SWAP_RA_MID - 1, .end = SWAP_RA_MID + 3,
	},
	{
		.desc = "random access centres an 8-page window",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID + 50, .fault = SWAP_RA_MID,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = SWAP_RA_MID - 3, .end = SWAP_RA_MID + 5,
	},
	{
		.desc = "clipped to the VMA start",
		.page_cluster = 3,
		.vm_start = SWAP_RA_PMD_PAGES + 16, .vm_end = 3 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID + 50, .fault = SWAP_RA_PMD_PAGES + 17,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = SWAP_RA_PMD_PAGES + 16, .end = SWAP_RA_PMD_PAGES + 22,
	},
	{
		.desc = "clipped to the VMA end",
		.page_cluster = 3,
		.vm_start = 0, .vm_end = SWAP_RA_PMD_PAGES + 200,
		.prev = SWAP_RA_MID, .fault = SWAP_RA_PMD_PAGES + 198,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = SWAP_RA_PMD_PAGES + 195, .end = SWAP_RA_PMD_PAGES + 200,
	},
	{
		.desc = "clipped to the start of the PMD region",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID, .fault = SWAP_RA_PMD_PAGES + 1,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = SWAP_RA_PMD_PAGES, .end = SWAP_RA_PMD_PAGES + 6,
	},
	{
		.desc = "clipped to the end of the PMD region",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID, .fault = 2 * SWAP_RA_PMD_PAGES - 2,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = 2 * SWAP_RA_PMD_PAGES - 5, .end = 2 * SWAP_RA_PMD_PAGES,
	},
	{
		.desc = "forward sequential clipped to the PMD region",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = 2 * SWAP_RA_PMD_PAGES - 3, .fault = 2 * SWAP_RA_PMD_PAGES - 2,
		.prev_win = 4, .hits = 2, .win = 4,
		.start = 2 * SWAP_RA_PMD_PAGES - 2, .end = 2 * SWAP_RA_PMD_PAGES,
	},
	{
		.desc = "page_cluster above the ceiling reads at most 32",
		.page_cluster = 8, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID + 50, .fault = SWAP_RA_MID,
		.prev_win = 4, .hits = 40, .win = 32,
		.start = SWAP_RA_MID - 15, .end = SWAP_RA_MID + 17,
	},
	{
		.desc = "a 1-page window is no readahead",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID + 50, .fault = SWAP_RA_MID,
		.prev_win = 0, .hits = 0, .win = 1,
		.start = SWAP_RA_UNTOUCHED, .end = SWAP_RA_UNTOUCHED,
	},
	{
		.desc = "page_cluster 0 disables readahead",
		.page_cluster = 0, .vm_start = 0, .vm_end = 4 * SWAP_RA_PMD_PAGES,
		.prev = SWAP_RA_MID - 1, .fault = SWAP_RA_MID,
		.prev_win = 4, .hits = 5, .win = 1,
		.start = SWAP_RA_UNTOUCHED, .end = SWAP_RA_UNTOUCHED,
		.info_untouched = true,
	},
};

KUNIT_ARRAY_PARAM_DESC(swap_vma_ra_win, swap_vma_ra_win_cases, desc);

/*
 * Run swap_vma_ra_win() for a fault at @address in @vma, under the mmap
 * lock as swap_vma_readahead() runs it in a fault.
 */
static unsigned int swap_ra_win_at(struct vm_area_struct *vma,
				   unsigned long address,
				   unsigned long *start, unsigned long *end)
{
	struct vm_fault vmf = {
		.vma = vma,
		.address = address,
	};
	unsigned int win;

	mmap_read_lock(vma->vm_mm);
	win = swap_vma_ra_win(&vmf, start, end);
	mmap_read_unlock(vma->vm_mm);
	return win;
}

static unsigned long swap_ra_expected_addr(unsigned long pg)
{
	return pg == SWAP_RA_UNTOUCHED ? SWAP_RA_UNTOUCHED : SWAP_RA_ADDR_OF(pg);
}

static void swap_vma_ra_win_test(struct kunit *test)
{
	const struct swap_vma_ra_win_case *c = test->param_value;
	unsigned long prev_info, info, start, end;
	struct vm_area_struct *vma;
	unsigned int win;

	swap_ra_set_page_cluster(test, c->page_cluster);
	prev_info = SWAP_RA_VAL(SWAP_RA_ADDR_OF(c->prev), c->prev_win, c->hits);
	vma = swap_ra_alloc_vma(test, SWAP_RA_ADDR_OF(c->vm_start),
				SWAP_RA_ADDR_OF(c->vm_end), prev_info);
	start = SWAP_RA_UNTOUCHED;
	end = SWAP_RA_UNTOUCHED;
	win = swap_ra_win_at(vma, SWAP_RA_ADDR_OF(c->fault), &start, &end);
	info = atomic_long_read(&vma->swap_readahead_info);

	KUNIT_EXPECT_EQ_MSG(test, c->win, win, "%s: window", c->desc);
	KUNIT_EXPECT_EQ_MSG(test, swap_ra_expected_addr(c->start), start,
			    "%s: start (page %ld from base)", c->desc,
			    (long)(start - SWAP_RA_BASE) >> PAGE_SHIFT);
	KUNIT_EXPECT_EQ_MSG(test, swap_ra_expected_addr(c->end), end,
			    "%s: end (page %ld from base)", c->desc,
			    (long)(end - SWAP_RA_BASE) >> PAGE_SHIFT);
	if (c->info_untouched) {
		KUNIT_EXPECT_EQ_MSG(test, prev_info, info,
				    "%s: swap_readahead_info rewritten", c->desc);
	} else {
		/* The fault address and window are kept, the hits reset. */
		KUNIT_EXPECT_EQ_MSG(test, SWAP_RA_ADDR_OF(c->fault),
				    SWAP_RA_ADDR(info), "%s: stored address",
				    c->desc);
		KUNIT_EXPECT_EQ_MSG(test, (unsigned long)c->win,
				    SWAP_RA_WIN(info), "%s: stored window",
				    c->desc);
		KUNIT_EXPECT_EQ_MSG(test, 0UL, SWAP_RA_HITS(info),
				    "%s: stored hits", c->desc);
	}
}

/* -------------------------------------------------------------------------
 * swap_cache_get_folio(): counting readahead hits
 */

#define SWAP_RA_OFFSET		42
#define SWAP_RA_FAULT		(SWAP_RA_ADDR_OF(SWAP_RA_MID))

/* A VMA whose last fault was 10 pages away, with a 4-page window. */
static struct vm_area_struct *swap_ra_hits_vma(struct kunit *test,
					       unsigned int hits)
{
	return swap_ra_alloc_vma(test, SWAP_RA_BASE,
				 SWAP_RA_ADDR_OF(4 * SWAP_RA_PMD_PAGES),
				 SWAP_RA_VAL(SWAP_RA_FAULT - 10 * PAGE_SIZE,
					     4, hits));
}

/* Choose VMA-based readahead and zero the global hit counter. */
static void swap_ra_use_vma_readahead(struct kunit *test)
{
	swap_ra_init_swap_space(test);
	swap_ra_set_vma_readahead(test, true);
	swap_ra_set_rotate_swap(test, 0);
	swap_ra_set_global_hits(test, 0);
}

static struct folio *swap_ra_lookup(struct kunit *test,
				    struct vm_area_struct *vma)
{
	swp_entry_t entry = swp_entry(SWAP_RA_TEST_TYPE, SWAP_RA_OFFSET);
	struct folio *found;

	/* do_swap_page() looks a VMA's entry up under the mmap lock. */
	if (vma)
		mmap_read_lock(vma->vm_mm);
	found = swap_cache_get_folio(entry, vma, SWAP_RA_FAULT);
	if (vma)
		mmap_read_unlock(vma->vm_mm);
	if (found)
		folio_put(found);
	return found;
}

struct swap_ra_vma_hit_case {
	const char *desc;
	bool readahead;		/* the folio found is marked readahead */
	unsigned long hits, expected_hits;
};

/* Hits on readahead folios count per VMA, up to SWAP_RA_HITS_MAX. */
static const struct swap_ra_vma_hit_case swap_ra_vma_hit_cases[] = {
	{ "readahead folio: one more hit", true, 2, 3 },
	{ "not a readahead folio: no hit", false, 2, 2 },
	{ "readahead folio at SWAP_RA_HITS_MAX: saturated", true,
	  SWAP_RA_HITS_MAX, SWAP_RA_HITS_MAX },
};

KUNIT_ARRAY_PARAM_DESC(swap_ra_vma_hit, swap_ra_vma_hit_cases, desc);

static void swap_cache_get_folio_vma_hit_test(struct kunit *test)
{
	const struct swap_ra_vma_hit_case *c = test->param_value;
	struct vm_area_struct *vma;
	struct folio *folio;
	unsigned long info;

	swap_ra_use_vma_readahead(test);
	folio = swap_ra_add_folio(test, SWAP_RA_OFFSET, c->readahead);
	vma = swap_ra_hits_vma(test, c->hits);

	KUNIT_ASSERT_PTR_EQ_MSG(test, folio, swap_ra_lookup(test, vma),
				"%s: lookup", c->desc);

	/* The hits neither wrap nor spill into the window bits. */
	info = atomic_long_read(&vma->swap_readahead_info);
	KUNIT_EXPECT_EQ_MSG(test, c->expected_hits, SWAP_RA_HITS(info),
			    "%s: VMA hits", c->desc);
	KUNIT_EXPECT_EQ_MSG(test, 4UL, SWAP_RA_WIN(info), "%s: window", c->desc);
	KUNIT_EXPECT_EQ_MSG(test, 0, atomic_read(&swapin_readahead_hits),
			    "%s: global hits", c->desc);
}

static void swap_cache_get_folio_vma_hit_once_test(struct kunit *test)
{
	struct vm_area_struct *vma;
	struct folio *folio;

	swap_ra_use_vma_readahead(test);
	folio = swap_ra_add_folio(test, SWAP_RA_OFFSET, true);
	vma = swap_ra_hits_vma(test, 2);

	KUNIT_ASSERT_PTR_EQ(test, folio, swap_ra_lookup(test, vma));
	KUNIT_ASSERT_PTR_EQ(test, folio, swap_ra_lookup(test, vma));

	/* One readahead folio is one hit, however often it is found. */
	KUNIT_EXPECT_EQ(test, 3UL,
			SWAP_RA_HITS(atomic_long_read(&vma->swap_readahead_info)));
	KUNIT_EXPECT_FALSE(test, folio_test_readahead(folio));
}

static void swap_cache_get_folio_miss_test(struct kunit *test)
{
	struct vm_area_struct *vma;

	swap_ra_use_vma_readahead(test);
	vma = swap_ra_hits_vma(test, 2);

	KUNIT_EXPECT_NULL(test, swap_ra_lookup(test, vma));
	KUNIT_EXPECT_EQ(test, SWAP_RA_VAL(SWAP_RA_FAULT - 10 * PAGE_SIZE, 4, 2),
			atomic_long_read(&vma->swap_readahead_info));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&swapin_readahead_hits));
}

enum swap_ra_global_reason {
	SWAP_RA_NO_VMA,
	SWAP_RA_VMA_RA_DISABLED,
	SWAP_RA_ROTATIONAL_SWAP,
};

struct swap_ra_global_case {
	const char *desc;
	enum swap_ra_global_reason reason;
};

static const struct swap_ra_global_case swap_ra_global_cases[] = {
	{ "no VMA", SWAP_RA_NO_VMA },
	{ "VMA readahead disabled in sysfs", SWAP_RA_VMA_RA_DISABLED },
	{ "rotational swap device active", SWAP_RA_ROTATIONAL_SWAP },
};

KUNIT_ARRAY_PARAM_DESC(swap_ra_global, swap_ra_global_cases, desc);

static void swap_cache_get_folio_global_hit_test(struct kunit *test)
{
	const struct swap_ra_global_case *c = test->param_value;
	unsigned long prev_info = SWAP_RA_VAL(SWAP_RA_FAULT - 10 * PAGE_SIZE,
					      4, 2);
	struct vm_area_struct *vma;
	struct folio *folio;

	swap_ra_use_vma_readahead(test);
	if (c->reason == SWAP_RA_VMA_RA_DISABLED)
		swap_ra_set_vma_readahead(test, false);
	if (c->reason == SWAP_RA_ROTATIONAL_SWAP)
		swap_ra_set_rotate_swap(test, 1);
	folio = swap_ra_add_folio(test, SWAP_RA_OFFSET, true);
	vma = swap_ra_hits_vma(test, 2);

	KUNIT_ASSERT_PTR_EQ_MSG(test, folio,
				swap_ra_lookup(test, c->reason == SWAP_RA_NO_VMA ?
						     NULL : vma),
				"%s: lookup", c->desc);

	KUNIT_EXPECT_EQ_MSG(test, 1, atomic_read(&swapin_readahead_hits),
			    "%s: global hits", c->desc);
	/* A VMA the lookup was given keeps its hits: they went global. */
	if (c->reason != SWAP_RA_NO_VMA)
		KUNIT_EXPECT_EQ_MSG(test, prev_info,
				    atomic_long_read(&vma->swap_readahead_info),
				    "%s: VMA readahead info", c->desc);
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_readahead(folio),
			       "%s: readahead flag", c->desc);
}

static struct kunit_case swap_readahead_test_cases[] = {
	KUNIT_CASE_PARAM(swapin_nr_pages_test, swapin_nr_pages_gen_params),
	KUNIT_CASE_PARAM(swap_vma_ra_win_test, swap_vma_ra_win_gen_params),
	KUNIT_CASE_PARAM(swap_cache_get_folio_vma_hit_test,
			 swap_ra_vma_hit_gen_params),
	KUNIT_CASE(swap_cache_get_folio_vma_hit_once_test),
	KUNIT_CASE(swap_cache_get_folio_miss_test),
	KUNIT_CASE_PARAM(swap_cache_get_folio_global_hit_test,
			 swap_ra_global_gen_params),
	{}
};

static struct kunit_suite swap_readahead_test_suite = {
	.name = "mm_swap_readahead",
	.test_cases = swap_readahead_test_cases,
};

kunit_test_suite(swap_readahead_test_suite);

#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */
