/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for VMA-based swap readahead (mm/swap_state.c).
 *
 * This file is included at the bottom of mm/swap_state.c so that the tests
 * can call the static functions of that file and reach its static state.
 *
 * Suite:
 *  - mm_swap_readahead: __swapin_nr_pages(), the readahead window
 *    heuristic; swap_vma_ra_win(), where the window lies around the
 *    faulting address, how it is clipped, and what is remembered in
 *    vma->swap_readahead_info; swap_cache_get_folio(), how hits on
 *    readahead folios are counted, per VMA or globally;
 *    swap_vma_readahead(), which swap entries of the window's PTEs it
 *    reads into the swap cache, and how it leaves them.
 *
 * The swap cache the tests use belongs to a swap type no device uses.
 * swap_vma_readahead() also needs a device behind it: mm_kunit_swapon()
 * (mm/tests/swapfile_kunit.h) gives one with no I/O, whose slots all read
 * as zero-filled pages.
 *
 * Every global knob a test changes (page_cluster, enable_vma_readahead,
 * nr_rotate_swap, swapin_readahead_hits) is set with mm_kunit_set_knob(),
 * which puts it back whether the test passes or fails.
 */

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST

#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/mman.h>

#include "mm_kunit.h"
#include "swap_kunit.h"

/* -------------------------------------------------------------------------
 * Test objects: a VMA and a swap cache that no swap device backs
 */

/*
 * An anonymous VMA at exactly [@start, @end) in the test's own mm, as a
 * swap fault finds it, with @ra_info as its readahead state.
 */
static struct vm_area_struct *st_alloc_vma(struct kunit *test,
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
#define ST_TEST_TYPE	(MAX_SWAPFILES - 1)

static void st_exit_swap_space(void *unused)
{
	exit_swap_address_space(ST_TEST_TYPE);
}

static void st_init_swap_space(struct kunit *test)
{
	if (swapper_spaces[ST_TEST_TYPE])
		kunit_skip(test, "swap type %d is in use", ST_TEST_TYPE);
	KUNIT_ASSERT_EQ(test, 0,
			init_swap_address_space(ST_TEST_TYPE,
						SWAP_ADDRESS_SPACE_PAGES));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, st_exit_swap_space,
						  NULL));
}

static void st_remove_folio(void *data)
{
	struct folio *folio = data;

	if (folio_test_swapcache(folio)) {
		swp_entry_t entry = folio->swap;
		struct address_space *space = swap_address_space(entry);

		xa_lock_irq(&space->i_pages);
		__delete_from_swap_cache(folio, entry, NULL);
		xa_unlock_irq(&space->i_pages);
		folio_ref_sub(folio, folio_nr_pages(folio));
	}
	folio_clear_readahead(folio);
	__folio_clear_swapbacked(folio);
	folio_unlock(folio);
	folio_put(folio);
}

/*
 * Add a new folio of @order for swap offsets from @offset (a multiple of its
 * size) to the test swap cache, as swap-in would, optionally marked as
 * brought in by readahead. The folio is removed and freed when the test ends.
 */
static struct folio *st_add_large_folio(struct kunit *test,
					unsigned long offset,
					unsigned int order, bool readahead)
{
	swp_entry_t entry = swp_entry(ST_TEST_TYPE, offset);
	struct folio *folio;

	folio = folio_alloc(GFP_KERNEL, order);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	__folio_set_locked(folio);
	__folio_set_swapbacked(folio);
	if (readahead)
		folio_set_readahead(folio);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, st_remove_folio,
						  folio));
	KUNIT_ASSERT_EQ(test, 0,
			add_to_swap_cache(folio, entry, GFP_KERNEL, NULL));
	return folio;
}

static struct folio *st_add_folio(struct kunit *test,
				  unsigned long offset, bool readahead)
{
	return st_add_large_folio(test, offset, 0, readahead);
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
	{ .desc = "no hits, adjacent forward", .prev_offset = 100,
	  .offset = 101, .hits = 0, .max_pages = 8, .prev_win = 0,
	  .expected = 2 },
	{ .desc = "no hits, adjacent backward", .prev_offset = 100,
	  .offset = 99, .hits = 0, .max_pages = 8, .prev_win = 0,
	  .expected = 2 },
	{ .desc = "no hits, not adjacent", .prev_offset = 100, .offset = 103,
	  .hits = 0, .max_pages = 8, .prev_win = 0, .expected = 1 },
	{ .desc = "no hits, same offset", .prev_offset = 100, .offset = 100,
	  .hits = 0, .max_pages = 8, .prev_win = 0, .expected = 1 },
	{ .desc = "1 hit rounds 3 up to the floor of 4", .prev_offset = 100,
	  .offset = 500, .hits = 1, .max_pages = 32, .prev_win = 0,
	  .expected = 4 },
	{ .desc = "2 hits give 4", .prev_offset = 100, .offset = 500,
	  .hits = 2, .max_pages = 32, .prev_win = 0, .expected = 4 },
	{ .desc = "3 hits round 5 up to 8", .prev_offset = 100, .offset = 500,
	  .hits = 3, .max_pages = 32, .prev_win = 0, .expected = 8 },
	{ .desc = "6 hits give 8", .prev_offset = 100, .offset = 500,
	  .hits = 6, .max_pages = 32, .prev_win = 0, .expected = 8 },
	{ .desc = "7 hits round 9 up to 16", .prev_offset = 100,
	  .offset = 500, .hits = 7, .max_pages = 32, .prev_win = 0,
	  .expected = 16 },
	{ .desc = "hits: adjacency does not matter", .prev_offset = 100,
	  .offset = 101, .hits = 7, .max_pages = 32, .prev_win = 0,
	  .expected = 16 },
	{ .desc = "capped at max_pages", .prev_offset = 100, .offset = 500,
	  .hits = 7, .max_pages = 8, .prev_win = 0, .expected = 8 },
	{ .desc = "cap applies below the floor of 4", .prev_offset = 100,
	  .offset = 500, .hits = 1, .max_pages = 2, .prev_win = 0,
	  .expected = 2 },
	{ .desc = "cap of 1 stops adjacent readahead", .prev_offset = 100,
	  .offset = 101, .hits = 0, .max_pages = 1, .prev_win = 0,
	  .expected = 1 },
	{ .desc = "no hits: half the previous window", .prev_offset = 100,
	  .offset = 500, .hits = 0, .max_pages = 8, .prev_win = 8,
	  .expected = 4 },
	{ .desc = "half of an odd previous window rounds down",
	  .prev_offset = 100, .offset = 500, .hits = 0, .max_pages = 8,
	  .prev_win = 7, .expected = 3 },
	{ .desc = "hits: half the previous window when larger",
	  .prev_offset = 100, .offset = 500, .hits = 2, .max_pages = 32,
	  .prev_win = 16, .expected = 8 },
	{ .desc = "half the previous window beats the cap",
	  .prev_offset = 100, .offset = 500, .hits = 0, .max_pages = 4,
	  .prev_win = 16, .expected = 8 },
};

KUNIT_ARRAY_PARAM_DESC(swapin_nr_pages, swapin_nr_pages_cases, desc);

static void swapin_nr_pages_test(struct kunit *test)
{
	const struct swapin_nr_pages_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, c->expected,
			    __swapin_nr_pages(c->prev_offset, c->offset,
					      c->hits, c->max_pages,
					      c->prev_win),
			    "prev_offset=%lu offset=%lu hits=%d max=%d prev_win=%d",
			    c->prev_offset, c->offset, c->hits, c->max_pages,
			    c->prev_win);
}

/*
 * swapin_nr_pages(), the window of the swap readahead that no VMA guides,
 * keeps state between calls: it takes the readahead hits counted since the
 * last call (and leaves none), remembers the offset of a call that had no
 * hits (adjacency is judged against it), and the window it gave (the next
 * is never less than half of it). With page_cluster 0 there is no
 * readahead, and the hits are left for later.
 */
static void swapin_nr_pages_keeps_state_test(struct kunit *test)
{
	unsigned long win[6];
	int hits[2];
	int i;

	mm_kunit_set_knob(test, page_cluster, 3);
	mm_kunit_set_knob(test, swapin_readahead_hits, (atomic_t)ATOMIC_INIT(0));
	/*
	 * Whatever earlier calls left: 20 calls without hits, none adjacent
	 * to the last, halve any window there was down to 1, and remember
	 * offset 1190.
	 */
	for (i = 0; i < 20; i++)
		swapin_nr_pages(1000 + 10 * i);

	/* No hits, adjacent to the offset remembered: 2. */
	win[0] = swapin_nr_pages(1191);
	/* A hit: 1 + 2 rounds up to 4, capped at 2; 1191 stays remembered. */
	WRITE_ONCE(page_cluster, 1);
	atomic_set(&swapin_readahead_hits, 1);
	win[1] = swapin_nr_pages(5000);
	hits[0] = atomic_read(&swapin_readahead_hits);
	/* No hits, adjacent to 1191, not to 5000: 2. */
	win[2] = swapin_nr_pages(1192);
	/* 3 hits: 3 + 2 rounds up to 8. */
	WRITE_ONCE(page_cluster, 3);
	atomic_set(&swapin_readahead_hits, 3);
	win[3] = swapin_nr_pages(7000);
	/* No hits, not adjacent: 1, but never less than half of 8. */
	win[4] = swapin_nr_pages(9000);
	/* page_cluster 0: no readahead, the hits are not taken. */
	WRITE_ONCE(page_cluster, 0);
	atomic_set(&swapin_readahead_hits, 5);
	win[5] = swapin_nr_pages(9001);
	hits[1] = atomic_read(&swapin_readahead_hits);

	KUNIT_EXPECT_EQ_MSG(test, 2UL, win[0], "adjacent, no hits");
	KUNIT_EXPECT_EQ_MSG(test, 2UL, win[1], "one hit, capped at 2");
	KUNIT_EXPECT_EQ_MSG(test, 0, hits[0], "hits taken");
	KUNIT_EXPECT_EQ_MSG(test, 2UL, win[2],
			    "adjacent to the offset of the last call without hits");
	KUNIT_EXPECT_EQ_MSG(test, 8UL, win[3], "three hits");
	KUNIT_EXPECT_EQ_MSG(test, 4UL, win[4], "half the last window");
	KUNIT_EXPECT_EQ_MSG(test, 1UL, win[5], "page_cluster 0");
	KUNIT_EXPECT_EQ_MSG(test, 5, hits[1], "hits left for later");
}

/* -------------------------------------------------------------------------
 * swap_vma_ra_win(): placing and clipping the window
 */

/* Addresses in the table are page numbers from a PMD-aligned base. */
#define ST_BASE		(16 * PMD_SIZE)
#define ST_PMD_PAGES	(PMD_SIZE >> PAGE_SHIFT)
#define ST_ADDR_OF(pg)	(ST_BASE + ((unsigned long)(pg) << PAGE_SHIFT))
/* A fault in the middle of the second PMD-sized region from the base. */
#define ST_MID		(ST_PMD_PAGES + 100)
/* The page at address 0, as ST_ADDR_OF() counts pages. */
#define ST_PAGE_0	(-(long)(ST_BASE >> PAGE_SHIFT))
/* Start and end are left alone when there is no readahead. */
#define ST_UNTOUCHED	ULONG_MAX

struct swap_vma_ra_win_case {
	const char *desc;
	int page_cluster;
	unsigned long vm_start, vm_end;	/* pages */
	unsigned long prev, fault;	/* pages */
	unsigned int prev_win, hits;
	bool no_info;			/* no fault recorded: info 0 */
	unsigned int win;		/* expected */
	unsigned long start, end;	/* expected, pages, or UNTOUCHED */
	bool info_untouched;		/* expected: ra info not rewritten */
};

/*
 * page_cluster 3 allows at most 8 pages. With 2 hits the window is 4 pages,
 * with 5 hits 8 pages; with none, 1 page (2 if sequential), but never less
 * than half the last window. A VMA with no fault recorded yet starts from 4
 * hits. Forward sequential: the window starts at the fault.
 * Backward sequential: it ends at (and includes) the fault. Otherwise it is
 * centred on the fault, (win - 1) / 2 pages before it. The result is clipped
 * to the VMA and to the PMD-sized region that holds the fault.
 */
static const struct swap_vma_ra_win_case swap_vma_ra_win_cases[] = {
	{
		.desc = "forward sequential starts at the fault",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID - 1, .fault = ST_MID,
		.prev_win = 4, .hits = 2, .win = 4,
		.start = ST_MID, .end = ST_MID + 4,
	},
	{
		.desc = "forward sequential without hits reads 2",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID - 1, .fault = ST_MID,
		.prev_win = 0, .hits = 0, .win = 2,
		.start = ST_MID, .end = ST_MID + 2,
	},
	{
		.desc = "backward sequential ends at the fault",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID + 1, .fault = ST_MID,
		.prev_win = 4, .hits = 2, .win = 4,
		.start = ST_MID - 3, .end = ST_MID + 1,
	},
	{
		.desc = "random access centres a 4-page window",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID + 50, .fault = ST_MID,
		.prev_win = 4, .hits = 2, .win = 4,
		.start = ST_MID - 1, .end = ST_MID + 3,
	},
	{
		.desc = "random access centres an 8-page window",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID + 50, .fault = ST_MID,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = ST_MID - 3, .end = ST_MID + 5,
	},
	{
		.desc = "without hits, random access keeps half the last window",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID + 50, .fault = ST_MID,
		.prev_win = 8, .hits = 0, .win = 4,
		.start = ST_MID - 1, .end = ST_MID + 3,
	},
	{
		.desc = "clipped to the VMA start",
		.page_cluster = 3,
		.vm_start = ST_PMD_PAGES + 16, .vm_end = 3 * ST_PMD_PAGES,
		.prev = ST_MID + 50, .fault = ST_PMD_PAGES + 17,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = ST_PMD_PAGES + 16, .end = ST_PMD_PAGES + 22,
	},
	{
		.desc = "clipped to the VMA end",
		.page_cluster = 3,
		.vm_start = 0, .vm_end = ST_PMD_PAGES + 200,
		.prev = ST_MID, .fault = ST_PMD_PAGES + 198,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = ST_PMD_PAGES + 195, .end = ST_PMD_PAGES + 200,
	},
	{
		.desc = "clipped to the start of the PMD region",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID, .fault = ST_PMD_PAGES + 1,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = ST_PMD_PAGES, .end = ST_PMD_PAGES + 6,
	},
	{
		.desc = "clipped to the end of the PMD region",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID, .fault = 2 * ST_PMD_PAGES - 2,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = 2 * ST_PMD_PAGES - 5, .end = 2 * ST_PMD_PAGES,
	},
	{
		.desc = "a window that would start below address 0 starts at 0",
		.page_cluster = 3,
		.vm_start = ST_PAGE_0, .vm_end = ST_PAGE_0 + 4 * ST_PMD_PAGES,
		.prev = ST_PAGE_0 + 50, .fault = ST_PAGE_0 + 1,
		.prev_win = 4, .hits = 5, .win = 8,
		.start = ST_PAGE_0, .end = ST_PAGE_0 + 6,
	},
	{
		.desc = "forward sequential clipped to the PMD region",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = 2 * ST_PMD_PAGES - 3, .fault = 2 * ST_PMD_PAGES - 2,
		.prev_win = 4, .hits = 2, .win = 4,
		.start = 2 * ST_PMD_PAGES - 2, .end = 2 * ST_PMD_PAGES,
	},
	{
		.desc = "page_cluster above the ceiling reads at most 32",
		.page_cluster = 8, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID + 50, .fault = ST_MID,
		.prev_win = 4, .hits = 40, .win = 32,
		.start = ST_MID - 15, .end = ST_MID + 17,
	},
	{
		.desc = "no fault recorded yet: 4 hits centre an 8-page window",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.no_info = true, .fault = ST_MID, .win = 8,
		.start = ST_MID - 3, .end = ST_MID + 5,
	},
	{
		.desc = "a 1-page window is no readahead",
		.page_cluster = 3, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID + 50, .fault = ST_MID,
		.prev_win = 0, .hits = 0, .win = 1,
		.start = ST_UNTOUCHED, .end = ST_UNTOUCHED,
	},
	{
		.desc = "page_cluster 0 disables readahead",
		.page_cluster = 0, .vm_start = 0, .vm_end = 4 * ST_PMD_PAGES,
		.prev = ST_MID - 1, .fault = ST_MID,
		.prev_win = 4, .hits = 5, .win = 1,
		.start = ST_UNTOUCHED, .end = ST_UNTOUCHED,
		.info_untouched = true,
	},
};

KUNIT_ARRAY_PARAM_DESC(swap_vma_ra_win, swap_vma_ra_win_cases, desc);

/*
 * Run swap_vma_ra_win() for a fault at @address in @vma, under the mmap
 * lock as swap_vma_readahead() runs it in a fault.
 */
static unsigned int st_win_at(struct vm_area_struct *vma,
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

static unsigned long st_expected_addr(unsigned long pg)
{
	return pg == ST_UNTOUCHED ? ST_UNTOUCHED : ST_ADDR_OF(pg);
}

static void swap_vma_ra_win_test(struct kunit *test)
{
	const struct swap_vma_ra_win_case *c = test->param_value;
	unsigned long prev_info, info, start, end;
	struct vm_area_struct *vma;
	unsigned int win;

	mm_kunit_set_knob(test, page_cluster, c->page_cluster);
	prev_info = c->no_info ? 0 :
		    SWAP_RA_VAL(ST_ADDR_OF(c->prev), c->prev_win, c->hits);
	vma = st_alloc_vma(test, ST_ADDR_OF(c->vm_start),
			   ST_ADDR_OF(c->vm_end), prev_info);
	start = ST_UNTOUCHED;
	end = ST_UNTOUCHED;
	win = st_win_at(vma, ST_ADDR_OF(c->fault), &start, &end);
	info = atomic_long_read(&vma->swap_readahead_info);

	KUNIT_EXPECT_EQ_MSG(test, c->win, win, "window");
	KUNIT_EXPECT_EQ_MSG(test, st_expected_addr(c->start), start,
			    "start (page %ld from base)",
			    (long)(start - ST_BASE) >> PAGE_SHIFT);
	KUNIT_EXPECT_EQ_MSG(test, st_expected_addr(c->end), end,
			    "end (page %ld from base)",
			    (long)(end - ST_BASE) >> PAGE_SHIFT);
	if (c->info_untouched) {
		KUNIT_EXPECT_EQ_MSG(test, prev_info, info,
				    "swap_readahead_info rewritten");
	} else {
		/* The fault address and window are kept, the hits reset. */
		KUNIT_EXPECT_EQ_MSG(test, ST_ADDR_OF(c->fault),
				    SWAP_RA_ADDR(info), "stored address");
		KUNIT_EXPECT_EQ_MSG(test, (unsigned long)c->win,
				    SWAP_RA_WIN(info), "stored window");
		KUNIT_EXPECT_EQ_MSG(test, 0UL, SWAP_RA_HITS(info),
				    "stored hits");
	}
}

/* -------------------------------------------------------------------------
 * swap_cache_get_folio(): counting readahead hits
 */

#define ST_OFFSET		42
#define ST_FAULT		(ST_ADDR_OF(ST_MID))

/* A VMA whose last fault was 10 pages away, with a 4-page window. */
static struct vm_area_struct *st_hits_vma(struct kunit *test,
					  unsigned int hits)
{
	return st_alloc_vma(test, ST_BASE,
			    ST_ADDR_OF(4 * ST_PMD_PAGES),
			    SWAP_RA_VAL(ST_FAULT - 10 * PAGE_SIZE,
					4, hits));
}

/* Choose VMA-based readahead and zero the global hit counter. */
static void st_use_vma_readahead(struct kunit *test)
{
	st_init_swap_space(test);
	mm_kunit_set_knob(test, enable_vma_readahead, true);
	mm_kunit_set_knob(test, nr_rotate_swap, (atomic_t)ATOMIC_INIT(0));
	mm_kunit_set_knob(test, swapin_readahead_hits, (atomic_t)ATOMIC_INIT(0));
}

static struct folio *st_lookup(struct kunit *test,
			       struct vm_area_struct *vma)
{
	swp_entry_t entry = swp_entry(ST_TEST_TYPE, ST_OFFSET);
	struct folio *found;

	/* do_swap_page() looks a VMA's entry up under the mmap lock. */
	if (vma)
		mmap_read_lock(vma->vm_mm);
	found = swap_cache_get_folio(entry, vma, ST_FAULT);
	if (vma)
		mmap_read_unlock(vma->vm_mm);
	if (found)
		folio_put(found);
	return found;
}

struct st_vma_hit_case {
	const char *desc;
	bool readahead;		/* the folio found is marked readahead */
	unsigned long hits, expected_hits;
};

/* Hits on readahead folios count per VMA, up to SWAP_RA_HITS_MAX. */
static const struct st_vma_hit_case st_vma_hit_cases[] = {
	{ .desc = "readahead folio: one more hit", .readahead = true,
	  .hits = 2, .expected_hits = 3 },
	{ .desc = "not a readahead folio: no hit", .hits = 2,
	  .expected_hits = 2 },
	{ .desc = "readahead folio at SWAP_RA_HITS_MAX: saturated",
	  .readahead = true, .hits = SWAP_RA_HITS_MAX,
	  .expected_hits = SWAP_RA_HITS_MAX },
};

KUNIT_ARRAY_PARAM_DESC(st_vma_hit, st_vma_hit_cases, desc);

static void swap_cache_get_folio_vma_hit_test(struct kunit *test)
{
	const struct st_vma_hit_case *c = test->param_value;
	unsigned long info, events;
	struct vm_area_struct *vma;
	struct folio *folio;

	st_use_vma_readahead(test);
	folio = st_add_folio(test, ST_OFFSET, c->readahead);
	vma = st_hits_vma(test, c->hits);

	events = mm_kunit_vm_event(test, SWAP_RA_HIT);
	KUNIT_ASSERT_PTR_EQ_MSG(test, folio, st_lookup(test, vma),
				"lookup");
	events = mm_kunit_vm_event(test, SWAP_RA_HIT) - events;

	/* The hits neither wrap nor spill into the window bits. */
	info = atomic_long_read(&vma->swap_readahead_info);
	KUNIT_EXPECT_EQ_MSG(test, c->expected_hits, SWAP_RA_HITS(info),
			    "VMA hits");
	KUNIT_EXPECT_EQ_MSG(test, 4UL, SWAP_RA_WIN(info), "window");
	KUNIT_EXPECT_EQ_MSG(test, 0, atomic_read(&swapin_readahead_hits),
			    "global hits");
	/* The event counts every hit, also past SWAP_RA_HITS_MAX. */
	KUNIT_EXPECT_EQ_MSG(test, c->readahead ? 1UL : 0UL, events,
			    "SWAP_RA_HIT events");
}

static void swap_cache_get_folio_vma_hit_once_test(struct kunit *test)
{
	struct vm_area_struct *vma;
	struct folio *folio;

	st_use_vma_readahead(test);
	folio = st_add_folio(test, ST_OFFSET, true);
	vma = st_hits_vma(test, 2);

	KUNIT_ASSERT_PTR_EQ(test, folio, st_lookup(test, vma));
	KUNIT_ASSERT_PTR_EQ(test, folio, st_lookup(test, vma));

	/* One readahead folio is one hit, however often it is found. */
	KUNIT_EXPECT_EQ(test, 3UL,
			SWAP_RA_HITS(atomic_long_read(&vma->swap_readahead_info)));
	KUNIT_EXPECT_FALSE(test, folio_test_readahead(folio));
}

/*
 * A hit in a VMA with no fault recorded yet counts from the 4 hits such a
 * VMA starts with, and records the address of the hit, with no window.
 */
static void swap_cache_get_folio_first_hit_test(struct kunit *test)
{
	struct vm_area_struct *vma;
	struct folio *folio;
	unsigned long info;

	st_use_vma_readahead(test);
	folio = st_add_folio(test, ST_OFFSET, true);
	vma = st_alloc_vma(test, ST_BASE, ST_ADDR_OF(4 * ST_PMD_PAGES), 0);

	KUNIT_ASSERT_PTR_EQ(test, folio, st_lookup(test, vma));

	info = atomic_long_read(&vma->swap_readahead_info);
	KUNIT_EXPECT_EQ_MSG(test, 5UL, SWAP_RA_HITS(info), "VMA hits");
	KUNIT_EXPECT_EQ_MSG(test, 0UL, SWAP_RA_WIN(info), "window");
	KUNIT_EXPECT_EQ_MSG(test, ST_FAULT, SWAP_RA_ADDR(info), "address");
}

static void swap_cache_get_folio_miss_test(struct kunit *test)
{
	struct vm_area_struct *vma;

	st_use_vma_readahead(test);
	vma = st_hits_vma(test, 2);

	KUNIT_EXPECT_NULL(test, st_lookup(test, vma));
	KUNIT_EXPECT_EQ(test, SWAP_RA_VAL(ST_FAULT - 10 * PAGE_SIZE, 4, 2),
			atomic_long_read(&vma->swap_readahead_info));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&swapin_readahead_hits));
}

/*
 * A large folio is returned as it is: PG_readahead is not supported for
 * them, so it stays set and no hit is counted anywhere.
 */
static void swap_cache_get_folio_large_folio_no_hit_test(struct kunit *test)
{
	struct vm_area_struct *vma;
	struct folio *folio;
	unsigned long events;

	st_use_vma_readahead(test);
	folio = st_add_large_folio(test, ALIGN_DOWN(ST_OFFSET, 4), 2, true);
	vma = st_hits_vma(test, 2);

	events = mm_kunit_vm_event(test, SWAP_RA_HIT);
	KUNIT_ASSERT_PTR_EQ_MSG(test, folio, st_lookup(test, vma), "lookup");
	events = mm_kunit_vm_event(test, SWAP_RA_HIT) - events;

	KUNIT_EXPECT_TRUE(test, folio_test_readahead(folio));
	KUNIT_EXPECT_EQ(test, SWAP_RA_VAL(ST_FAULT - 10 * PAGE_SIZE, 4, 2),
			atomic_long_read(&vma->swap_readahead_info));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&swapin_readahead_hits));
	KUNIT_EXPECT_EQ(test, 0UL, events);
}

enum st_global_reason {
	ST_NO_VMA,
	ST_VMA_RA_DISABLED,
	ST_ROTATIONAL_SWAP,
};

struct st_global_case {
	const char *desc;
	enum st_global_reason reason;
};

static const struct st_global_case st_global_cases[] = {
	{ .desc = "no VMA", .reason = ST_NO_VMA },
	{ .desc = "VMA readahead disabled in sysfs",
	  .reason = ST_VMA_RA_DISABLED },
	{ .desc = "rotational swap device active",
	  .reason = ST_ROTATIONAL_SWAP },
};

KUNIT_ARRAY_PARAM_DESC(st_global, st_global_cases, desc);

static void swap_cache_get_folio_global_hit_test(struct kunit *test)
{
	const struct st_global_case *c = test->param_value;
	unsigned long prev_info = SWAP_RA_VAL(ST_FAULT - 10 * PAGE_SIZE,
					      4, 2);
	struct vm_area_struct *vma;
	struct folio *folio;
	unsigned long events;

	st_use_vma_readahead(test);
	if (c->reason == ST_VMA_RA_DISABLED)
		mm_kunit_set_knob(test, enable_vma_readahead, false);
	if (c->reason == ST_ROTATIONAL_SWAP)
		mm_kunit_set_knob(test, nr_rotate_swap, (atomic_t)ATOMIC_INIT(1));
	folio = st_add_folio(test, ST_OFFSET, true);
	vma = st_hits_vma(test, 2);

	events = mm_kunit_vm_event(test, SWAP_RA_HIT);
	KUNIT_ASSERT_PTR_EQ_MSG(test, folio,
				st_lookup(test, c->reason == ST_NO_VMA ?
					  NULL : vma),
				"lookup");
	events = mm_kunit_vm_event(test, SWAP_RA_HIT) - events;

	KUNIT_EXPECT_EQ_MSG(test, 1, atomic_read(&swapin_readahead_hits),
			    "global hits");
	KUNIT_EXPECT_EQ_MSG(test, 1UL, events, "SWAP_RA_HIT events");
	/* A VMA the lookup was given keeps its hits: they went global. */
	if (c->reason != ST_NO_VMA)
		KUNIT_EXPECT_EQ_MSG(test, prev_info,
				    atomic_long_read(&vma->swap_readahead_info),
				    "VMA readahead info");
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_readahead(folio),
			       "readahead flag");
}

/* -------------------------------------------------------------------------
 * swap_vma_readahead(): reading the window in
 */

#define ST_SWAP_PAGES		64
/* The pages around a fault at ST_MID, from ST_MID - ST_RA_BEFORE. */
#define ST_RA_BEFORE		4
#define ST_RA_SPAN		10
#define ST_RA_ADDR(i)		ST_ADDR_OF(ST_MID - ST_RA_BEFORE + (i))
/* Page i of the span is swapped out to slot ST_RA_SLOT(i). */
#define ST_RA_SLOT(i)		(16 + (i))
#define ST_RA_ENTRY(i)		swp_entry(ST_TEST_TYPE, ST_RA_SLOT(i))

static void st_swapoff(void *si)
{
	mm_kunit_swapoff(si);
}

/* The folio the test swap cache holds for @entry, referenced, or NULL. */
static struct folio *st_get_cached(swp_entry_t entry)
{
	struct folio *folio;

	folio = filemap_get_folio(swap_address_space(entry),
				  swap_cache_index(entry));
	return IS_ERR(folio) ? NULL : folio;
}

/*
 * The same without a reference, to look at: the swap cache keeps its own
 * until st_drop_swap_cache().
 */
static struct folio *st_cached(swp_entry_t entry)
{
	struct folio *folio = st_get_cached(entry);

	if (folio)
		folio_put(folio);
	return folio;
}

/* Empty the test swap cache, as swapoff would, before it goes away. */
static void st_drop_swap_cache(void *unused)
{
	unsigned long offset;

	for (offset = 0; offset < ST_SWAP_PAGES; offset++) {
		struct folio *folio;

		folio = st_get_cached(swp_entry(ST_TEST_TYPE, offset));
		if (!folio)
			continue;
		/*
		 * A folio the code under test left locked has no one else to
		 * unlock it: its lock is ours.
		 */
		folio_trylock(folio);
		if (folio_test_swapcache(folio))
			delete_from_swap_cache(folio);
		folio_unlock(folio);
		folio_put(folio);
	}
}

/*
 * A swap device for the test type, with its swap cache, for VMA-based
 * readahead: every slot is in use and reads as a zero-filled page.
 */
static struct swap_info_struct *st_swapon(struct kunit *test)
{
	struct swap_info_struct *si;

	si = mm_kunit_swapon(ST_TEST_TYPE, ST_SWAP_PAGES);
	if (PTR_ERR_OR_ZERO(si) == -EBUSY)
		kunit_skip(test, "swap type %d is in use", ST_TEST_TYPE);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(si), "mm_kunit_swapon: %d",
			       PTR_ERR_OR_ZERO(si));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, st_swapoff, si));
	st_use_vma_readahead(test);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, st_drop_swap_cache,
						  NULL));
	return si;
}

/*
 * Put page @i of the span out to its swap slot: a swap PTE that holds a
 * reference to the slot, counted in the mm, as fork copies one. The slot
 * keeps the device's own reference.
 */
static void st_swap_out(struct kunit *test, struct vm_area_struct *vma, int i)
{
	KUNIT_ASSERT_EQ_MSG(test, 0, swap_duplicate(ST_RA_ENTRY(i)),
			    "swap_duplicate(page %d)", i);
	inc_mm_counter(vma->vm_mm, MM_SWAPENTS);
	KUNIT_ASSERT_TRUE_MSG(test,
			      mm_kunit_set_pte(vma->vm_mm, ST_RA_ADDR(i),
					       swp_entry_to_pte(ST_RA_ENTRY(i))),
			      "PTE of page %d", i);
}

/*
 * Take the span's swap PTEs down, as unmapping would, and drop the mm.
 *
 * This runs before the swap device goes, in KUnit's cleanup thread. The
 * test thread's mm is not torn down in time for that: KUnit is told the
 * thread is done before its exit drops the mm, so the last mmput() could
 * race with the swap device's removal. The reference taken in
 * st_hold_swap_ptes() keeps the page tables for this walk.
 */
static void st_unmap_swap_ptes(void *data)
{
	struct mm_struct *mm = data;
	spinlock_t *ptl;	/* the PT lock of the PTE page */
	pte_t *ptep, pte;
	bool swapped;
	pmd_t *pmd;
	int i;

	mmap_read_lock(mm);
	pmd = mm_find_pmd(mm, ST_RA_ADDR(0));
	for (i = 0; pmd && i < ST_RA_SPAN; i++) {
		ptep = pte_offset_map_lock(mm, pmd, ST_RA_ADDR(i), &ptl);
		if (!ptep)
			break;
		pte = ptep_get(ptep);
		swapped = is_swap_pte(pte) &&
			  !non_swap_entry(pte_to_swp_entry(pte));
		if (swapped) {
			ptep_get_and_clear(mm, ST_RA_ADDR(i), ptep);
			dec_mm_counter(mm, MM_SWAPENTS);
		}
		pte_unmap_unlock(ptep, ptl);
		if (swapped)
			swap_free(pte_to_swp_entry(pte));
	}
	mmap_read_unlock(mm);
	mmput(mm);
}

static void st_hold_swap_ptes(struct kunit *test, struct mm_struct *mm)
{
	mmget(mm);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, st_unmap_swap_ptes,
						  mm));
}

/*
 * Free the slots of the pages marked 'f' in @ptes, as a racing unmap would
 * after swap_vma_readahead() read their PTEs (@freed), or give them back
 * their counts (!@freed).
 */
static void st_free_slots(struct swap_info_struct *si, const char *ptes,
			  unsigned char *counts, bool freed)
{
	int i;

	spin_lock(&si->lock);
	for (i = 0; i < ST_RA_SPAN; i++) {
		if (ptes[i] != 'f')
			continue;
		if (freed) {
			counts[i] = si->swap_map[ST_RA_SLOT(i)];
			si->swap_map[ST_RA_SLOT(i)] = 0;
		} else {
			si->swap_map[ST_RA_SLOT(i)] = counts[i];
		}
	}
	spin_unlock(&si->lock);
}

struct swap_vma_readahead_case {
	const char *desc;
	unsigned long prev;		/* page of the last fault */
	unsigned int prev_win, hits;
	/*
	 * One character per page of the span; the fault is at ST_MID, page
	 * ST_RA_BEFORE, for the swap entry of that page's slot.
	 *
	 * @ptes: 's' a swap PTE of the page's slot; 'c' the same, the slot
	 * already in the swap cache; 'f' the same, the slot since freed; 'e'
	 * a swap-in error marker (not a swap entry); 'z' a present PTE (the
	 * zero page); '-' none.
	 *
	 * @expected, the page's slot afterwards: '.' not in the swap cache;
	 * 'R' read ahead: up to date, unlocked, PG_readahead, on the LRU and
	 * held by the swap cache alone; 'T' read as the target: up to date,
	 * unlocked, not PG_readahead, and returned; 'C' the folio that was
	 * cached, untouched.
	 */
	const char *ptes;
	const char *expected;
};

/*
 * page_cluster 3: the windows are those of swap_vma_ra_win_cases. Centred
 * (8 pages): pages 1-8 of the span; forward (4): pages 4-7; forward
 * without hits (2): pages 4-5; backward (4): pages 1-4; a 1-page window:
 * the target alone.
 */
#define ST_RA_CENTRED	.prev = ST_MID + 50, .prev_win = 4, .hits = 5
#define ST_RA_FORWARD	.prev = ST_MID - 1, .prev_win = 4, .hits = 2
#define ST_RA_FORWARD_2	.prev = ST_MID - 1, .prev_win = 0, .hits = 0
#define ST_RA_BACKWARD	.prev = ST_MID + 1, .prev_win = 4, .hits = 2
#define ST_RA_NONE	.prev = ST_MID + 50, .prev_win = 0, .hits = 0

static const struct swap_vma_readahead_case swap_vma_readahead_cases[] = {
	{ .desc = "centred window: every swap PTE in it is read",
	  ST_RA_CENTRED, .ptes = "ssssssssss", .expected = ".RRRTRRRR." },
	{ .desc = "forward window: from the fault on",
	  ST_RA_FORWARD, .ptes = "ssssssssss", .expected = "....TRRR.." },
	{ .desc = "2-page window: the target and the page after it",
	  ST_RA_FORWARD_2, .ptes = "ssssssssss", .expected = "....TR...." },
	{ .desc = "backward window: up to the fault",
	  ST_RA_BACKWARD, .ptes = "ssssssssss", .expected = ".RRRT....." },
	{ .desc = "none, present and non-swap PTEs are skipped",
	  ST_RA_CENTRED, .ptes = "s-zeszes-s", .expected = "....T..R.." },
	{ .desc = "an entry already in the swap cache is not read again",
	  ST_RA_CENTRED, .ptes = "sscsssscss", .expected = ".RCRTRRCR." },
	{ .desc = "a freed entry is skipped",
	  ST_RA_CENTRED, .ptes = "sfssssfsss", .expected = "..RRTR.RR." },
	{ .desc = "a 1-page window reads the target alone",
	  ST_RA_NONE, .ptes = "ssssssssss", .expected = "....T....." },
	{ .desc = "faulting PTE no longer swap: the target is still read",
	  ST_RA_CENTRED, .ptes = "ssss-sssss", .expected = ".RRRTRRRR." },
	{ .desc = "target already cached: returned, not read again",
	  ST_RA_CENTRED, .ptes = "sssscsssss", .expected = ".RRRCRRRR." },
};

KUNIT_ARRAY_PARAM_DESC(swap_vma_readahead, swap_vma_readahead_cases, desc);

/* Set up page @i of the span as @kind says; the folio cached for 'c'. */
static struct folio *st_ra_setup_page(struct kunit *test,
				      struct vm_area_struct *vma, int i,
				      char kind)
{
	unsigned long addr = ST_RA_ADDR(i);
	struct folio *folio = NULL;
	pte_t pte = __pte(0);

	switch (kind) {
	case 's':
	case 'f':
		st_swap_out(test, vma, i);
		return NULL;
	case 'c':
		st_swap_out(test, vma, i);
		folio = read_swap_cache_async(ST_RA_ENTRY(i),
					      GFP_HIGHUSER_MOVABLE, vma, addr,
					      NULL);
		KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "page %d cached", i);
		folio_put(folio);
		return folio;
	case 'e':
		pte = make_pte_marker(PTE_MARKER_POISONED);
		break;
	case 'z':
		pte = pte_mkspecial(pfn_pte(my_zero_pfn(addr),
					    vma->vm_page_prot));
		break;
	case '-':
		return NULL;
	}
	KUNIT_ASSERT_TRUE_MSG(test, mm_kunit_set_pte(vma->vm_mm, addr, pte),
			      "PTE of page %d", i);
	return NULL;
}

/* A swap fault at ST_MID, in swapin_readahead() as do_swap_page() calls it. */
static struct folio *st_swap_fault(struct vm_area_struct *vma)
{
	unsigned long address = ST_ADDR_OF(ST_MID);
	struct vm_fault vmf = {
		.vma = vma,
		.address = address,
		.real_address = address,
		.flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE,
	};
	struct folio *folio;

	mmap_read_lock(vma->vm_mm);
	vmf.pmd = mm_find_pmd(vma->vm_mm, address);
	/* The LRU batch drained is the one filled: stay on this CPU. */
	migrate_disable();
	folio = swapin_readahead(ST_RA_ENTRY(ST_RA_BEFORE),
				 GFP_HIGHUSER_MOVABLE, &vmf);
	migrate_enable();
	mmap_read_unlock(vma->vm_mm);
	return folio;
}

static void swap_vma_readahead_test(struct kunit *test)
{
	const struct swap_vma_readahead_case *c = test->param_value;
	struct folio *cached[ST_RA_SPAN] = { }, *folio, *target;
	unsigned char counts[ST_RA_SPAN];
	unsigned long swap_ra, nr_ra = 0;
	struct swap_info_struct *si;
	struct vm_area_struct *vma;
	int i;

	si = st_swapon(test);
	mm_kunit_set_knob(test, page_cluster, 3);
	vma = st_alloc_vma(test, ST_BASE, ST_ADDR_OF(4 * ST_PMD_PAGES),
			   SWAP_RA_VAL(ST_ADDR_OF(c->prev), c->prev_win,
				       c->hits));
	st_hold_swap_ptes(test, vma->vm_mm);
	for (i = 0; i < ST_RA_SPAN; i++)
		cached[i] = st_ra_setup_page(test, vma, i, c->ptes[i]);

	swap_ra = mm_kunit_vm_event(test, SWAP_RA);
	st_free_slots(si, c->ptes, counts, true);
	target = st_swap_fault(vma);
	st_free_slots(si, c->ptes, counts, false);
	swap_ra = mm_kunit_vm_event(test, SWAP_RA) - swap_ra;
	KUNIT_EXPECT_NULL_MSG(test, current->plug, "block plug left behind");
	KUNIT_ASSERT_NOT_NULL(test, target);
	folio_put(target);
	KUNIT_EXPECT_PTR_EQ_MSG(test, st_cached(ST_RA_ENTRY(ST_RA_BEFORE)),
				target, "returned folio");

	for (i = 0; i < ST_RA_SPAN; i++) {
		char expected = c->expected[i];

		folio = st_cached(ST_RA_ENTRY(i));
		if (expected == '.') {
			KUNIT_EXPECT_NULL_MSG(test, folio, "page %d cached", i);
			continue;
		}
		KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "page %d cached", i);
		KUNIT_EXPECT_TRUE_MSG(test, folio_test_uptodate(folio),
				      "page %d up to date", i);
		KUNIT_EXPECT_FALSE_MSG(test, folio_test_locked(folio),
				       "page %d locked", i);
		KUNIT_EXPECT_EQ_MSG(test, expected == 'R',
				    folio_test_readahead(folio),
				    "page %d PG_readahead", i);
		if (expected == 'C')
			KUNIT_EXPECT_PTR_EQ_MSG(test, cached[i], folio,
						"page %d replaced", i);
		if (expected != 'R')
			continue;
		nr_ra++;
		KUNIT_EXPECT_TRUE_MSG(test, folio_test_lru(folio),
				      "page %d on the LRU", i);
		KUNIT_EXPECT_EQ_MSG(test, 1, folio_ref_count(folio),
				    "page %d references", i);
	}
	KUNIT_EXPECT_EQ_MSG(test, nr_ra, swap_ra, "SWAP_RA events");
}

/*
 * Another swap-in of the target's slot, which took SWAP_HAS_CACHE before the
 * fault got there and gives it up (say its memcg charge failed) once the
 * fault waits for it: in schedule_timeout_uninterruptible(), the only place
 * the fault sleeps.
 */
struct st_racer {
	struct task_struct *fault;	/* the task that faults */
	struct swap_info_struct *si;
	bool released;
};

static int st_racer_fn(void *data)
{
	struct st_racer *r = data;

	while (!kthread_should_stop()) {
		if (!r->released &&
		    READ_ONCE(r->fault->__state) == TASK_UNINTERRUPTIBLE) {
			swapcache_clear(r->si, ST_RA_ENTRY(ST_RA_BEFORE), 1);
			WRITE_ONCE(r->released, true);
		}
		schedule_timeout_interruptible(1);
	}
	return 0;
}

/*
 * The fault must wait for a swap-in of its own slot that is under way
 * elsewhere, not give up: a NULL return would fail the fault.
 */
static void swap_vma_readahead_waits_for_target_swapin_test(struct kunit *test)
{
	struct st_racer racer = { .fault = current };
	struct task_struct *thread;
	struct vm_area_struct *vma;
	struct folio *target;

	racer.si = st_swapon(test);
	mm_kunit_set_knob(test, page_cluster, 3);
	vma = st_alloc_vma(test, ST_BASE, ST_ADDR_OF(4 * ST_PMD_PAGES),
			   SWAP_RA_VAL(ST_ADDR_OF(ST_MID + 50), 0, 0));
	st_hold_swap_ptes(test, vma->vm_mm);
	st_swap_out(test, vma, ST_RA_BEFORE);
	KUNIT_ASSERT_EQ(test, 0,
			swapcache_prepare(ST_RA_ENTRY(ST_RA_BEFORE), 1));
	thread = kthread_run(st_racer_fn, &racer, "st_racer");
	if (IS_ERR(thread))
		swapcache_clear(racer.si, ST_RA_ENTRY(ST_RA_BEFORE), 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(thread));

	target = st_swap_fault(vma);
	kthread_stop(thread);
	if (!racer.released)
		swapcache_clear(racer.si, ST_RA_ENTRY(ST_RA_BEFORE), 1);

	KUNIT_EXPECT_TRUE_MSG(test, racer.released,
			      "the fault did not wait for the other swap-in");
	KUNIT_ASSERT_NOT_NULL(test, target);
	folio_put(target);
	KUNIT_EXPECT_PTR_EQ(test, st_cached(ST_RA_ENTRY(ST_RA_BEFORE)), target);
	KUNIT_EXPECT_TRUE(test, folio_test_uptodate(target));
	KUNIT_EXPECT_FALSE(test, folio_test_locked(target));
}

static struct kunit_case swap_readahead_test_cases[] = {
	KUNIT_CASE_PARAM(swapin_nr_pages_test, swapin_nr_pages_gen_params),
	KUNIT_CASE(swapin_nr_pages_keeps_state_test),
	KUNIT_CASE_PARAM(swap_vma_ra_win_test, swap_vma_ra_win_gen_params),
	KUNIT_CASE_PARAM(swap_cache_get_folio_vma_hit_test,
			 st_vma_hit_gen_params),
	KUNIT_CASE(swap_cache_get_folio_vma_hit_once_test),
	KUNIT_CASE(swap_cache_get_folio_first_hit_test),
	KUNIT_CASE(swap_cache_get_folio_miss_test),
	KUNIT_CASE(swap_cache_get_folio_large_folio_no_hit_test),
	KUNIT_CASE_PARAM(swap_cache_get_folio_global_hit_test,
			 st_global_gen_params),
	KUNIT_CASE_PARAM(swap_vma_readahead_test,
			 swap_vma_readahead_gen_params),
	KUNIT_CASE(swap_vma_readahead_waits_for_target_swapin_test),
	{}
};

static struct kunit_suite swap_readahead_test_suite = {
	.name = "mm_swap_readahead",
	.test_cases = swap_readahead_test_cases,
};

kunit_test_suite(swap_readahead_test_suite);

#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */
