/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for VMA-based swap readahead (mm/swap_state.c).
 *
 * This file is included at the bottom of mm/swap_state.c so that the tests
 * can call the static functions of that file and reach its static state.
 *
 * Suite mm_swap_readahead:
 *  - __swapin_nr_pages(), the readahead window heuristic, and
 *    swapin_nr_pages(), the state it keeps between calls;
 *  - swap_vma_ra_win(): where the window lies around the faulting address,
 *    how it is clipped, and what is kept in vma->swap_readahead_info;
 *  - swap_update_readahead(): how a swap cache hit on a readahead folio is
 *    counted, per VMA or globally;
 *  - swap_cache_get_folio(), a plain lookup, and what it does when the
 *    swap cache changes under it (with CONFIG_DEBUG_PAGE_REF);
 *  - swap_vma_readahead(), through swapin_readahead(): which swap entries
 *    of the window's PTEs it reads into the swap cache, how it leaves
 *    them, and, under an interleave policy, on which node;
 *  - swapin_readahead() without VMA readahead: swap_cluster_readahead()
 *    reads the aligned block of slots around the target's.
 *
 * The swap cache tests need a swap device: swap_state_test_swapon()
 * (mm/tests/swapfile_kunit.h) gives one whose slots read as zero-filled
 * pages without I/O, or, once a test clears a slot's zero mark, through
 * the device's swap_ops from a backing store of zeros.
 *
 * Every global knob a test changes (page_cluster, enable_vma_readahead,
 * nr_rotate_swap, swapin_readahead_hits) is set with mm_kunit_set_knob(),
 * which puts it back whether the test passes or fails.
 */

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST

#include <kunit/test.h>
#include <linux/mman.h>
#ifdef CONFIG_DEBUG_PAGE_REF
#include <trace/events/page_ref.h>
#endif

#include "mm_kunit.h"
#include "swap_kunit.h"

/* -------------------------------------------------------------------------
 * __swapin_nr_pages() and swapin_nr_pages(): the window heuristic
 */

struct swap_state_test_nr_pages_case {
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
static const struct swap_state_test_nr_pages_case swap_state_test_nr_pages_cases[] = {
	{
		.desc = "no hits, adjacent forward",
		.prev_offset = 100,
		.offset = 101,
		.hits = 0,
		.max_pages = 8,
		.prev_win = 0,
		.expected = 2,
	},
	{
		.desc = "no hits, adjacent backward",
		.prev_offset = 100,
		.offset = 99,
		.hits = 0,
		.max_pages = 8,
		.prev_win = 0,
		.expected = 2,
	},
	{
		.desc = "no hits, not adjacent",
		.prev_offset = 100,
		.offset = 103,
		.hits = 0,
		.max_pages = 8,
		.prev_win = 0,
		.expected = 1,
	},
	{
		.desc = "no hits, same offset",
		.prev_offset = 100,
		.offset = 100,
		.hits = 0,
		.max_pages = 8,
		.prev_win = 0,
		.expected = 1,
	},
	{
		.desc = "1 hit rounds 3 up to the floor of 4",
		.prev_offset = 100,
		.offset = 500,
		.hits = 1,
		.max_pages = 32,
		.prev_win = 0,
		.expected = 4,
	},
	{
		.desc = "2 hits give 4",
		.prev_offset = 100,
		.offset = 500,
		.hits = 2,
		.max_pages = 32,
		.prev_win = 0,
		.expected = 4,
	},
	{
		.desc = "3 hits round 5 up to 8",
		.prev_offset = 100,
		.offset = 500,
		.hits = 3,
		.max_pages = 32,
		.prev_win = 0,
		.expected = 8,
	},
	{
		.desc = "6 hits give 8",
		.prev_offset = 100,
		.offset = 500,
		.hits = 6,
		.max_pages = 32,
		.prev_win = 0,
		.expected = 8,
	},
	{
		.desc = "7 hits round 9 up to 16",
		.prev_offset = 100,
		.offset = 500,
		.hits = 7,
		.max_pages = 32,
		.prev_win = 0,
		.expected = 16,
	},
	{
		.desc = "hits: adjacency does not matter",
		.prev_offset = 100,
		.offset = 101,
		.hits = 7,
		.max_pages = 32,
		.prev_win = 0,
		.expected = 16,
	},
	{
		.desc = "capped at max_pages",
		.prev_offset = 100,
		.offset = 500,
		.hits = 7,
		.max_pages = 8,
		.prev_win = 0,
		.expected = 8,
	},
	{
		.desc = "cap applies below the floor of 4",
		.prev_offset = 100,
		.offset = 500,
		.hits = 1,
		.max_pages = 2,
		.prev_win = 0,
		.expected = 2,
	},
	{
		.desc = "cap of 1 stops adjacent readahead",
		.prev_offset = 100,
		.offset = 101,
		.hits = 0,
		.max_pages = 1,
		.prev_win = 0,
		.expected = 1,
	},
	{
		.desc = "no hits: half the previous window",
		.prev_offset = 100,
		.offset = 500,
		.hits = 0,
		.max_pages = 8,
		.prev_win = 8,
		.expected = 4,
	},
	{
		.desc = "half of an odd previous window rounds down",
		.prev_offset = 100,
		.offset = 500,
		.hits = 0,
		.max_pages = 8,
		.prev_win = 7,
		.expected = 3,
	},
	{
		.desc = "hits: half the previous window when larger",
		.prev_offset = 100,
		.offset = 500,
		.hits = 2,
		.max_pages = 32,
		.prev_win = 16,
		.expected = 8,
	},
	{
		.desc = "half the previous window beats the cap",
		.prev_offset = 100,
		.offset = 500,
		.hits = 0,
		.max_pages = 4,
		.prev_win = 16,
		.expected = 8,
	},
};

KUNIT_ARRAY_PARAM_DESC(swap_state_test_nr_pages, swap_state_test_nr_pages_cases,
		       desc);

static void swap_state_test_nr_pages(struct kunit *test)
{
	const struct swap_state_test_nr_pages_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, c->expected,
			__swapin_nr_pages(c->prev_offset, c->offset, c->hits,
					  c->max_pages, c->prev_win));
}

/*
 * Forget the window swapin_nr_pages() keeps, as it would after swap-ins
 * without hits: each halves it, down to 1. Its static state cannot be put
 * back; the test leaves it as any swap-in would. page_cluster and the
 * global hits are put back when the test ends.
 */
static void swap_state_test_forget_window(struct kunit *test)
{
	int i;

	mm_kunit_set_knob(test, page_cluster, 3);
	mm_kunit_set_knob(test, swapin_readahead_hits,
			  (atomic_t)ATOMIC_INIT(0));
	for (i = 0; i < 20; i++)
		swapin_nr_pages(1000 + 10 * i);
}

/*
 * swapin_nr_pages(), the window of the swap readahead that no VMA guides,
 * keeps state between calls: it takes the readahead hits counted since the
 * last call (and leaves none), remembers the offset of a call that had no
 * hits (adjacency is judged against it), and the window it gave (the next
 * is never less than half of it). With page_cluster 0 there is no
 * readahead, and the hits are left for later.
 *
 * The offset and window it remembers are static to swapin_nr_pages() and
 * cannot be put back: the test leaves them as any swap-in would.
 */
static void swap_state_test_nr_pages_keeps_state(struct kunit *test)
{
	/*
	 * Whatever earlier calls left: 20 calls without hits, none adjacent
	 * to the last, halve any window there was down to 1, and remember
	 * offset 1190.
	 */
	swap_state_test_forget_window(test);

	/* No hits, adjacent to the offset remembered: 2. */
	KUNIT_EXPECT_EQ(test, 2UL, swapin_nr_pages(1191));
	/* A hit: 1 + 2 rounds up to 4, capped at 2; 1191 stays remembered. */
	WRITE_ONCE(page_cluster, 1);
	atomic_set(&swapin_readahead_hits, 1);
	KUNIT_EXPECT_EQ(test, 2UL, swapin_nr_pages(5000));
	/* The hits are taken. */
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&swapin_readahead_hits));
	/* No hits, adjacent to 1191, not to 5000: 2. */
	KUNIT_EXPECT_EQ(test, 2UL, swapin_nr_pages(1192));
	/* 3 hits: 3 + 2 rounds up to 8. */
	WRITE_ONCE(page_cluster, 3);
	atomic_set(&swapin_readahead_hits, 3);
	KUNIT_EXPECT_EQ(test, 8UL, swapin_nr_pages(7000));
	/* No hits, not adjacent: 1, but never less than half of 8. */
	KUNIT_EXPECT_EQ(test, 4UL, swapin_nr_pages(9000));
	/* page_cluster 0: no readahead, the hits are left for later. */
	WRITE_ONCE(page_cluster, 0);
	atomic_set(&swapin_readahead_hits, 5);
	KUNIT_EXPECT_EQ(test, 1UL, swapin_nr_pages(9001));
	KUNIT_EXPECT_EQ(test, 5, atomic_read(&swapin_readahead_hits));
}

/* -------------------------------------------------------------------------
 * swap_vma_ra_win(): placing and clipping the window
 */

/* Addresses in the tables are page numbers from a PMD-aligned base. */
#define SWAP_STATE_TEST_BASE		(16 * PMD_SIZE)
#define SWAP_STATE_TEST_PMD_PAGES	(PMD_SIZE >> PAGE_SHIFT)
/* A fault in the middle of the second PMD-sized region from the base. */
#define SWAP_STATE_TEST_MID		(SWAP_STATE_TEST_PMD_PAGES + 100)
/* The page at address 0, counted from the base. */
#define SWAP_STATE_TEST_PAGE_0		\
	(-(long)(SWAP_STATE_TEST_BASE >> PAGE_SHIFT))
/* Start and end are left alone when there is no readahead. */
#define SWAP_STATE_TEST_UNTOUCHED	ULONG_MAX

static unsigned long swap_state_test_addr(long page)
{
	return SWAP_STATE_TEST_BASE + (page << PAGE_SHIFT);
}

/*
 * An anonymous VMA at exactly the pages [@start, @end) from the base, in
 * the test's own mm, as a swap fault finds it, with @ra_info as its
 * readahead state.
 */
static struct vm_area_struct *swap_state_test_vma(struct kunit *test,
						  long start, long end,
						  unsigned long ra_info)
{
	unsigned long addr, vm_start = swap_state_test_addr(start);
	unsigned long vm_end = swap_state_test_addr(end);
	struct vm_area_struct *vma;

	/*
	 * Not charged to the commit limit: the VMA spans PMD-sized regions
	 * (2 GiB with 64 KiB pages) of which the test fills a few PTEs.
	 */
	addr = kunit_vm_mmap(test, NULL, vm_start, vm_end - vm_start,
			     PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			     MAP_FIXED_NOREPLACE, 0);
	KUNIT_ASSERT_EQ_MSG(test, vm_start, addr, "kunit_vm_mmap: %ld",
			    (long)addr);
	mmap_read_lock(current->mm);
	vma = find_vma(current->mm, vm_start);
	mmap_read_unlock(current->mm);
	KUNIT_ASSERT_NOT_NULL(test, vma);
	KUNIT_ASSERT_EQ(test, vm_start, vma->vm_start);
	KUNIT_ASSERT_EQ(test, vm_end, vma->vm_end);
	atomic_long_set(&vma->swap_readahead_info, ra_info);
	return vma;
}

struct swap_state_test_ra_win_case {
	const char *desc;
	int page_cluster;
	long vm_start;			/* pages from the base */
	long vm_end;
	long prev;			/* page of the last fault */
	long fault;
	unsigned int prev_win;
	unsigned int hits;
	bool no_info;			/* no fault recorded: info 0 */
	unsigned int win;		/* expected */
	long start;			/* expected, pages from the base */
	long end;
	bool no_readahead;		/* expected: start and end untouched */
	bool info_untouched;		/* expected: info not rewritten */
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
static const struct swap_state_test_ra_win_case swap_state_test_ra_win_cases[] = {
	{
		.desc = "forward sequential starts at the fault",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID - 1,
		.fault = SWAP_STATE_TEST_MID,
		.prev_win = 4,
		.hits = 2,
		.win = 4,
		.start = SWAP_STATE_TEST_MID,
		.end = SWAP_STATE_TEST_MID + 4,
	},
	{
		.desc = "forward sequential without hits reads 2",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID - 1,
		.fault = SWAP_STATE_TEST_MID,
		.prev_win = 0,
		.hits = 0,
		.win = 2,
		.start = SWAP_STATE_TEST_MID,
		.end = SWAP_STATE_TEST_MID + 2,
	},
	{
		.desc = "backward sequential ends at the fault",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID + 1,
		.fault = SWAP_STATE_TEST_MID,
		.prev_win = 4,
		.hits = 2,
		.win = 4,
		.start = SWAP_STATE_TEST_MID - 3,
		.end = SWAP_STATE_TEST_MID + 1,
	},
	{
		.desc = "random access centres a 4-page window",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID + 50,
		.fault = SWAP_STATE_TEST_MID,
		.prev_win = 4,
		.hits = 2,
		.win = 4,
		.start = SWAP_STATE_TEST_MID - 1,
		.end = SWAP_STATE_TEST_MID + 3,
	},
	{
		.desc = "random access centres an 8-page window",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID + 50,
		.fault = SWAP_STATE_TEST_MID,
		.prev_win = 4,
		.hits = 5,
		.win = 8,
		.start = SWAP_STATE_TEST_MID - 3,
		.end = SWAP_STATE_TEST_MID + 5,
	},
	{
		.desc = "without hits, random access keeps half the last window",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID + 50,
		.fault = SWAP_STATE_TEST_MID,
		.prev_win = 8,
		.hits = 0,
		.win = 4,
		.start = SWAP_STATE_TEST_MID - 1,
		.end = SWAP_STATE_TEST_MID + 3,
	},
	{
		.desc = "clipped to the VMA start",
		.page_cluster = 3,
		.vm_start = SWAP_STATE_TEST_PMD_PAGES + 16,
		.vm_end = 3 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID + 50,
		.fault = SWAP_STATE_TEST_PMD_PAGES + 17,
		.prev_win = 4,
		.hits = 5,
		.win = 8,
		.start = SWAP_STATE_TEST_PMD_PAGES + 16,
		.end = SWAP_STATE_TEST_PMD_PAGES + 22,
	},
	{
		.desc = "clipped to the VMA end",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = SWAP_STATE_TEST_PMD_PAGES + 200,
		.prev = SWAP_STATE_TEST_MID,
		.fault = SWAP_STATE_TEST_PMD_PAGES + 198,
		.prev_win = 4,
		.hits = 5,
		.win = 8,
		.start = SWAP_STATE_TEST_PMD_PAGES + 195,
		.end = SWAP_STATE_TEST_PMD_PAGES + 200,
	},
	{
		.desc = "clipped to the start of the PMD region",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID,
		.fault = SWAP_STATE_TEST_PMD_PAGES + 1,
		.prev_win = 4,
		.hits = 5,
		.win = 8,
		.start = SWAP_STATE_TEST_PMD_PAGES,
		.end = SWAP_STATE_TEST_PMD_PAGES + 6,
	},
	{
		.desc = "clipped to the end of the PMD region",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID,
		.fault = 2 * SWAP_STATE_TEST_PMD_PAGES - 2,
		.prev_win = 4,
		.hits = 5,
		.win = 8,
		.start = 2 * SWAP_STATE_TEST_PMD_PAGES - 5,
		.end = 2 * SWAP_STATE_TEST_PMD_PAGES,
	},
	{
		.desc = "a window that would start below address 0 starts at 0",
		.page_cluster = 3,
		.vm_start = SWAP_STATE_TEST_PAGE_0,
		.vm_end = SWAP_STATE_TEST_PAGE_0 + 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_PAGE_0 + 50,
		.fault = SWAP_STATE_TEST_PAGE_0 + 1,
		.prev_win = 4,
		.hits = 5,
		.win = 8,
		.start = SWAP_STATE_TEST_PAGE_0,
		.end = SWAP_STATE_TEST_PAGE_0 + 6,
	},
	{
		.desc = "forward sequential clipped to the PMD region",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = 2 * SWAP_STATE_TEST_PMD_PAGES - 3,
		.fault = 2 * SWAP_STATE_TEST_PMD_PAGES - 2,
		.prev_win = 4,
		.hits = 2,
		.win = 4,
		.start = 2 * SWAP_STATE_TEST_PMD_PAGES - 2,
		.end = 2 * SWAP_STATE_TEST_PMD_PAGES,
	},
	{
		.desc = "page_cluster above the ceiling reads at most 32",
		.page_cluster = 8,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID + 50,
		.fault = SWAP_STATE_TEST_MID,
		.prev_win = 4,
		.hits = 40,
		.win = 32,
		.start = SWAP_STATE_TEST_MID - 15,
		.end = SWAP_STATE_TEST_MID + 17,
	},
	{
		.desc = "no fault recorded yet: 4 hits centre an 8-page window",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.no_info = true,
		.fault = SWAP_STATE_TEST_MID,
		.win = 8,
		.start = SWAP_STATE_TEST_MID - 3,
		.end = SWAP_STATE_TEST_MID + 5,
	},
	{
		.desc = "a 1-page window is no readahead",
		.page_cluster = 3,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID + 50,
		.fault = SWAP_STATE_TEST_MID,
		.prev_win = 0,
		.hits = 0,
		.win = 1,
		.no_readahead = true,
	},
	{
		.desc = "page_cluster 0 disables readahead",
		.page_cluster = 0,
		.vm_start = 0,
		.vm_end = 4 * SWAP_STATE_TEST_PMD_PAGES,
		.prev = SWAP_STATE_TEST_MID - 1,
		.fault = SWAP_STATE_TEST_MID,
		.prev_win = 4,
		.hits = 5,
		.win = 1,
		.no_readahead = true,
		.info_untouched = true,
	},
};

KUNIT_ARRAY_PARAM_DESC(swap_state_test_ra_win, swap_state_test_ra_win_cases,
		       desc);

/*
 * Run swap_vma_ra_win() for a fault at @address in @vma, under the mmap
 * lock as swap_vma_readahead() runs it in a fault.
 */
static unsigned int swap_state_test_win_at(struct vm_area_struct *vma,
					   unsigned long address,
					   unsigned long *start,
					   unsigned long *end)
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

static void swap_state_test_ra_win(struct kunit *test)
{
	const struct swap_state_test_ra_win_case *c = test->param_value;
	unsigned long prev_info = 0, info;
	unsigned long start = SWAP_STATE_TEST_UNTOUCHED;
	unsigned long end = SWAP_STATE_TEST_UNTOUCHED;
	struct vm_area_struct *vma;
	unsigned int win;

	mm_kunit_set_knob(test, page_cluster, c->page_cluster);
	if (!c->no_info)
		prev_info = SWAP_RA_VAL(swap_state_test_addr(c->prev),
					(unsigned long)c->prev_win, c->hits);
	vma = swap_state_test_vma(test, c->vm_start, c->vm_end, prev_info);
	win = swap_state_test_win_at(vma, swap_state_test_addr(c->fault),
				     &start, &end);
	info = atomic_long_read(&vma->swap_readahead_info);

	KUNIT_EXPECT_EQ(test, c->win, win);
	if (c->no_readahead) {
		KUNIT_EXPECT_EQ(test, SWAP_STATE_TEST_UNTOUCHED, start);
		KUNIT_EXPECT_EQ(test, SWAP_STATE_TEST_UNTOUCHED, end);
	} else {
		KUNIT_EXPECT_EQ(test, swap_state_test_addr(c->start), start);
		KUNIT_EXPECT_EQ(test, swap_state_test_addr(c->end), end);
	}
	if (c->info_untouched) {
		KUNIT_EXPECT_EQ(test, prev_info, info);
		return;
	}
	/* The fault address and window are kept, the hits reset. */
	KUNIT_EXPECT_EQ(test, swap_state_test_addr(c->fault),
			SWAP_RA_ADDR(info));
	KUNIT_EXPECT_EQ(test, (unsigned long)c->win, SWAP_RA_WIN(info));
	KUNIT_EXPECT_EQ(test, 0UL, SWAP_RA_HITS(info));
}

/* -------------------------------------------------------------------------
 * swap_update_readahead(): counting readahead hits
 */

#define SWAP_STATE_TEST_FAULT	swap_state_test_addr(SWAP_STATE_TEST_MID)
/* The readahead info of a VMA whose last fault was 10 pages away. */
#define SWAP_STATE_TEST_INFO(hits)					\
	SWAP_RA_VAL(SWAP_STATE_TEST_FAULT - 10 * PAGE_SIZE, 4UL, (hits))

static struct vm_area_struct *
swap_state_test_hits_vma(struct kunit *test, unsigned long info)
{
	return swap_state_test_vma(test, 0, 4 * SWAP_STATE_TEST_PMD_PAGES,
				   info);
}

/* Choose VMA-based readahead and zero the global hit counter. */
static void swap_state_test_use_vma_readahead(struct kunit *test)
{
	mm_kunit_set_knob(test, enable_vma_readahead, true);
	mm_kunit_set_knob(test, nr_rotate_swap, (atomic_t)ATOMIC_INIT(0));
	mm_kunit_set_knob(test, swapin_readahead_hits,
			  (atomic_t)ATOMIC_INIT(0));
}

static void swap_state_test_put_folio(void *folio)
{
	folio_put(folio);
}

/*
 * A folio as a swap cache lookup returns it; swap_update_readahead() looks
 * at nothing but its size and PG_readahead.
 */
static struct folio *swap_state_test_folio(struct kunit *test,
					   unsigned int order, bool readahead)
{
	struct folio *folio = folio_alloc(GFP_KERNEL, order);

	KUNIT_ASSERT_NOT_NULL(test, folio);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  swap_state_test_put_folio,
						  folio));
	if (readahead)
		folio_set_readahead(folio);
	return folio;
}

/* A swap cache hit at the test fault address, as do_swap_page() counts it. */
static unsigned long swap_state_test_hit(struct kunit *test,
					 struct folio *folio,
					 struct vm_area_struct *vma)
{
	unsigned long events = mm_kunit_vm_event(test, SWAP_RA_HIT);

	if (vma)
		mmap_read_lock(vma->vm_mm);
	swap_update_readahead(folio, vma, vma ? SWAP_STATE_TEST_FAULT : 0);
	if (vma)
		mmap_read_unlock(vma->vm_mm);
	return mm_kunit_vm_event(test, SWAP_RA_HIT) - events;
}

struct swap_state_test_vma_hit_case {
	const char *desc;
	bool readahead;			/* the folio found is PG_readahead */
	unsigned long hits;
	unsigned long expected_hits;
};

/* Hits on readahead folios count per VMA, up to SWAP_RA_HITS_MAX. */
static const struct swap_state_test_vma_hit_case swap_state_test_vma_hit_cases[] = {
	{
		.desc = "readahead folio: one more hit",
		.readahead = true,
		.hits = 2,
		.expected_hits = 3,
	},
	{
		.desc = "not a readahead folio: no hit",
		.readahead = false,
		.hits = 2,
		.expected_hits = 2,
	},
	{
		.desc = "readahead folio at SWAP_RA_HITS_MAX: saturated",
		.readahead = true,
		.hits = SWAP_RA_HITS_MAX,
		.expected_hits = SWAP_RA_HITS_MAX,
	},
};

KUNIT_ARRAY_PARAM_DESC(swap_state_test_vma_hit, swap_state_test_vma_hit_cases,
		       desc);

/*
 * With VMA readahead, the VMA's info becomes the hit's address with the
 * same window, and one more hit for a readahead folio.
 */
static void swap_state_test_update_vma_hit(struct kunit *test)
{
	const struct swap_state_test_vma_hit_case *c = test->param_value;
	struct vm_area_struct *vma;
	struct folio *folio;
	unsigned long events;

	swap_state_test_use_vma_readahead(test);
	folio = swap_state_test_folio(test, 0, c->readahead);
	vma = swap_state_test_hits_vma(test, SWAP_STATE_TEST_INFO(c->hits));

	events = swap_state_test_hit(test, folio, vma);

	KUNIT_EXPECT_EQ(test,
			SWAP_RA_VAL(SWAP_STATE_TEST_FAULT, 4UL, c->expected_hits),
			atomic_long_read(&vma->swap_readahead_info));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&swapin_readahead_hits));
	/* The event counts every hit, also past SWAP_RA_HITS_MAX. */
	KUNIT_EXPECT_EQ(test, c->readahead ? 1UL : 0UL, events);
	KUNIT_EXPECT_FALSE(test, folio_test_readahead(folio));
}

/* One readahead folio is one hit, however often it is found. */
static void swap_state_test_update_hit_once(struct kunit *test)
{
	struct vm_area_struct *vma;
	struct folio *folio;
	unsigned long events;

	swap_state_test_use_vma_readahead(test);
	folio = swap_state_test_folio(test, 0, true);
	vma = swap_state_test_hits_vma(test, SWAP_STATE_TEST_INFO(2));

	events = swap_state_test_hit(test, folio, vma);
	events += swap_state_test_hit(test, folio, vma);

	KUNIT_EXPECT_EQ(test, SWAP_RA_VAL(SWAP_STATE_TEST_FAULT, 4UL, 3UL),
			atomic_long_read(&vma->swap_readahead_info));
	KUNIT_EXPECT_EQ(test, 1UL, events);
}

/*
 * A hit in a VMA with no fault recorded yet counts from the 4 hits such a
 * VMA starts with, and records the address of the hit, with no window.
 */
static void swap_state_test_update_first_hit(struct kunit *test)
{
	struct vm_area_struct *vma;
	struct folio *folio;

	swap_state_test_use_vma_readahead(test);
	folio = swap_state_test_folio(test, 0, true);
	vma = swap_state_test_hits_vma(test, 0);

	KUNIT_EXPECT_EQ(test, 1UL, swap_state_test_hit(test, folio, vma));
	KUNIT_EXPECT_EQ(test, SWAP_RA_VAL(SWAP_STATE_TEST_FAULT, 0UL, 5UL),
			atomic_long_read(&vma->swap_readahead_info));
}

/*
 * A large folio changes nothing: PG_readahead is not used for them, so it
 * stays set and no hit is counted anywhere.
 */
static void swap_state_test_update_large_folio(struct kunit *test)
{
	struct vm_area_struct *vma;
	struct folio *folio;

	swap_state_test_use_vma_readahead(test);
	folio = swap_state_test_folio(test, 2, true);
	vma = swap_state_test_hits_vma(test, SWAP_STATE_TEST_INFO(2));

	KUNIT_EXPECT_EQ(test, 0UL, swap_state_test_hit(test, folio, vma));
	KUNIT_EXPECT_TRUE(test, folio_test_readahead(folio));
	KUNIT_EXPECT_EQ(test, SWAP_STATE_TEST_INFO(2),
			atomic_long_read(&vma->swap_readahead_info));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&swapin_readahead_hits));
}

enum swap_state_test_global_reason {
	SWAP_STATE_TEST_NO_VMA,
	SWAP_STATE_TEST_VMA_RA_DISABLED,
	SWAP_STATE_TEST_ROTATIONAL_SWAP,
};

struct swap_state_test_global_case {
	const char *desc;
	enum swap_state_test_global_reason reason;
	bool readahead;			/* the folio found is PG_readahead */
};

/*
 * Without a VMA, or without VMA readahead (disabled in sysfs, or a
 * rotational swap device active), a hit counts in the global counter.
 */
static const struct swap_state_test_global_case swap_state_test_global_cases[] = {
	{
		.desc = "no VMA",
		.reason = SWAP_STATE_TEST_NO_VMA,
		.readahead = true,
	},
	{
		.desc = "VMA readahead disabled in sysfs",
		.reason = SWAP_STATE_TEST_VMA_RA_DISABLED,
		.readahead = true,
	},
	{
		.desc = "rotational swap device active",
		.reason = SWAP_STATE_TEST_ROTATIONAL_SWAP,
		.readahead = true,
	},
	{
		.desc = "no VMA, not a readahead folio: no hit",
		.reason = SWAP_STATE_TEST_NO_VMA,
		.readahead = false,
	},
	{
		.desc = "VMA readahead disabled, not a readahead folio: no hit",
		.reason = SWAP_STATE_TEST_VMA_RA_DISABLED,
		.readahead = false,
	},
};

KUNIT_ARRAY_PARAM_DESC(swap_state_test_global, swap_state_test_global_cases,
		       desc);

static void swap_state_test_update_global_hit(struct kunit *test)
{
	const struct swap_state_test_global_case *c = test->param_value;
	unsigned long expected = c->readahead ? 1 : 0, events;
	struct vm_area_struct *vma;
	struct folio *folio;

	swap_state_test_use_vma_readahead(test);
	if (c->reason == SWAP_STATE_TEST_VMA_RA_DISABLED)
		mm_kunit_set_knob(test, enable_vma_readahead, false);
	if (c->reason == SWAP_STATE_TEST_ROTATIONAL_SWAP)
		mm_kunit_set_knob(test, nr_rotate_swap,
				  (atomic_t)ATOMIC_INIT(1));
	folio = swap_state_test_folio(test, 0, c->readahead);
	vma = swap_state_test_hits_vma(test, SWAP_STATE_TEST_INFO(2));

	events = swap_state_test_hit(test, folio,
				     c->reason == SWAP_STATE_TEST_NO_VMA ?
				     NULL : vma);

	KUNIT_EXPECT_EQ(test, (int)expected,
			atomic_read(&swapin_readahead_hits));
	KUNIT_EXPECT_EQ(test, expected, events);
	/* The VMA keeps its info: the hit went global. */
	KUNIT_EXPECT_EQ(test, SWAP_STATE_TEST_INFO(2),
			atomic_long_read(&vma->swap_readahead_info));
	KUNIT_EXPECT_FALSE(test, folio_test_readahead(folio));
}

/* -------------------------------------------------------------------------
 * The swap cache of a test swap device
 */

#define SWAP_STATE_TEST_SWAP_PAGES	64

static void swap_state_test_swapoff_action(void *si)
{
	swap_state_test_swapoff(si);
}

/*
 * The folio the swap cache holds for @offset of @si, or NULL, to look at:
 * the swap cache keeps its reference until the test ends. This reads the
 * swap table as swap_cache_get_folio() does, but also for a device being
 * swapped off.
 */
static struct folio *swap_state_test_cached(struct swap_info_struct *si,
					    unsigned long offset)
{
	struct swap_cluster_info *ci;
	unsigned long swp_tb;

	ci = &si->cluster_info[offset / SWAPFILE_CLUSTER];
	swp_tb = swap_table_get(ci, offset % SWAPFILE_CLUSTER);
	return swp_tb_is_folio(swp_tb) ? swp_tb_to_folio(swp_tb) : NULL;
}

/* Empty the swap cache of @si, as swapoff would, before it goes away. */
static void swap_state_test_drop_swap_cache(void *data)
{
	struct swap_info_struct *si = data;
	unsigned long offset;
	struct folio *folio;

	for (offset = 0; offset < si->max; offset++) {
		swp_entry_t entry = swp_entry(si->type, offset);

		folio = swap_cache_get_folio(entry);
		if (!folio)
			continue;
		/*
		 * Reclaim or migration may hold the lock for a moment. The
		 * backing store completes every read before it returns, so a
		 * swap-in that never unlocked the folio leaves it locked for
		 * good: then this waits until the hung-task detector names the
		 * test.
		 */
		folio_lock(folio);
		if (folio_matches_swap_entry(folio, entry))
			swap_cache_del_folio(folio);
		folio_unlock(folio);
		folio_put(folio);
	}
}

/*
 * A swap device of @nr_pages slots, with its swap cache emptied when the
 * test ends: every slot swapped out once and zero-filled.
 */
static struct swap_info_struct *
swap_state_test_swapon_dev(struct kunit *test, unsigned int nr_pages)
{
	struct swap_info_struct *si;

	si = swap_state_test_swapon(nr_pages);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(si), "swap_state_test_swapon: %d",
			       PTR_ERR_OR_ZERO(si));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  swap_state_test_swapoff_action,
						  si));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  swap_state_test_drop_swap_cache,
						  si));
	return si;
}

/*
 * Read @offset of @si into the swap cache, as a swap-in of the page at
 * @addr in @vma would.
 */
static struct folio *swap_state_test_read(struct kunit *test,
					  struct swap_info_struct *si,
					  unsigned long offset,
					  struct vm_area_struct *vma,
					  unsigned long addr)
{
	struct swap_io_ctx ctx = {};
	struct folio *folio;

	mmap_read_lock(vma->vm_mm);
	folio = read_swap_cache_async(&ctx, swp_entry(si->type, offset),
				      GFP_HIGHUSER_MOVABLE, vma, addr);
	mmap_read_unlock(vma->vm_mm);
	swap_read_submit(&ctx);
	KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "slot %lu", offset);
	folio_put(folio);
	return folio;
}

/*
 * swap_cache_get_folio() is a plain lookup: it takes a reference on the
 * folio cached for the entry, or finds none, and counts no hit.
 */
static void swap_state_test_cache_get_folio(struct kunit *test)
{
	struct folio *folio, *found, *missing;
	struct swap_info_struct *si;
	struct vm_area_struct *vma;
	unsigned long events;
	int refs;

	swap_state_test_use_vma_readahead(test);
	si = swap_state_test_swapon_dev(test, SWAP_STATE_TEST_SWAP_PAGES);
	vma = swap_state_test_hits_vma(test, SWAP_STATE_TEST_INFO(2));
	folio = swap_state_test_read(test, si, 10, vma, SWAP_STATE_TEST_FAULT);
	folio_set_readahead(folio);
	refs = folio_ref_count(folio);

	events = mm_kunit_vm_event(test, SWAP_RA_HIT);
	/* As do_swap_page() looks up, with the swap device held. */
	KUNIT_ASSERT_PTR_EQ(test, si, get_swap_device(swp_entry(si->type, 10)));
	found = swap_cache_get_folio(swp_entry(si->type, 10));
	missing = swap_cache_get_folio(swp_entry(si->type, 11));
	put_swap_device(si);
	events = mm_kunit_vm_event(test, SWAP_RA_HIT) - events;
	KUNIT_ASSERT_PTR_EQ(test, folio, found);
	KUNIT_EXPECT_EQ(test, refs + 1, folio_ref_count(folio));
	folio_put(found);

	KUNIT_EXPECT_NULL(test, missing);
	KUNIT_EXPECT_TRUE(test, folio_test_readahead(folio));
	KUNIT_EXPECT_EQ(test, SWAP_STATE_TEST_INFO(2),
			atomic_long_read(&vma->swap_readahead_info));
	KUNIT_EXPECT_EQ(test, 0UL, events);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&swapin_readahead_hits));
}

/* -------------------------------------------------------------------------
 * swap_cache_get_folio() against a swap cache that changes under it
 *
 * The lookup reads the slot, takes a reference with folio_try_get(), and
 * reads the slot again. Another CPU can change the slot in between: it can
 * hold the folio's references frozen (migration, split), replace the folio
 * (migration) or delete it. The test makes each change at that point
 * deterministically: a probe on the page_ref_mod_unless tracepoint, which
 * folio_try_get() fires after its attempt, makes it there, on the lookup's
 * own CPU, as the kernel's own code does it. The test holds the folios
 * locked across the lookup, as the other CPU would.
 */

enum swap_state_test_change {
	SWAP_STATE_TEST_THAWED,		/* references frozen, thawed */
	SWAP_STATE_TEST_REPLACED,	/* replaced by a new folio */
	SWAP_STATE_TEST_DELETED,	/* deleted from the swap cache */
};

enum swap_state_test_found {
	SWAP_STATE_TEST_FOUND_OLD,
	SWAP_STATE_TEST_FOUND_NEW,
	SWAP_STATE_TEST_FOUND_NONE,
};

struct swap_state_test_change_case {
	const char *desc;
	enum swap_state_test_change change;
	/* expected */
	enum swap_state_test_found found;
	int tries;		/* folio_try_get() calls on the old folio */
	int old_refs;		/* what the lookup moved of its references */
};

/*
 * Frozen references make folio_try_get() fail, and the lookup tries again:
 * it returns the folio once they thaw, with a reference taken. A folio
 * replaced or deleted after the reference was taken is not the slot's: the
 * lookup puts it back and returns what the slot holds now. The old folio
 * also lost the swap cache's reference.
 */
static const struct swap_state_test_change_case
swap_state_test_change_cases[] = {
	{
		.desc = "references frozen, then thawed: the folio",
		.change = SWAP_STATE_TEST_THAWED,
		.found = SWAP_STATE_TEST_FOUND_OLD,
		.tries = 2,
		.old_refs = 1,
	},
	{
		.desc = "replaced after the reference: the new folio",
		.change = SWAP_STATE_TEST_REPLACED,
		.found = SWAP_STATE_TEST_FOUND_NEW,
		.tries = 1,
		.old_refs = -1,
	},
	{
		.desc = "deleted after the reference: none",
		.change = SWAP_STATE_TEST_DELETED,
		.found = SWAP_STATE_TEST_FOUND_NONE,
		.tries = 1,
		.old_refs = -1,
	},
};

KUNIT_ARRAY_PARAM_DESC(swap_state_test_change, swap_state_test_change_cases,
		       desc);

#ifdef CONFIG_DEBUG_PAGE_REF

/* What the probe changes, and on which folio. */
struct swap_state_test_race {
	enum swap_state_test_change change;
	struct task_struct *task;	/* the lookup's */
	struct folio *old;		/* in the slot when the lookup starts */
	struct folio *new;		/* SWAP_STATE_TEST_REPLACED's */
	int frozen_refs;		/* SWAP_STATE_TEST_THAWED's */
	bool armed;
	int tries;
};

/* Replace @old by @new in the swap cache, as shmem_replace_folio() does. */
static void swap_state_test_replace(struct folio *old, struct folio *new)
{
	struct swap_cluster_info *ci;

	ci = swap_cluster_get_and_lock_irq(old);
	__swap_cache_replace_folio(ci, old, new);
	mem_cgroup_replace_folio(old, new);
	swap_cluster_unlock_irq(ci);
	folio_clear_swapcache(old);
	old->private = NULL;
	folio_ref_sub(old, folio_nr_pages(old));
}

static void swap_state_test_probe(void *data, struct page *page, int v,
				  int ret)
{
	struct swap_state_test_race *r = data;

	if (current != r->task || page != &r->old->page)
		return;
	r->tries++;
	if (!r->armed)
		return;
	r->armed = false;
	switch (r->change) {
	case SWAP_STATE_TEST_THAWED:
		folio_ref_unfreeze(r->old, r->frozen_refs);
		break;
	case SWAP_STATE_TEST_REPLACED:
		swap_state_test_replace(r->old, r->new);
		break;
	case SWAP_STATE_TEST_DELETED:
		swap_cache_del_folio(r->old);
		break;
	}
}

static void swap_state_test_unprobe(void *data)
{
	unregister_trace_page_ref_mod_unless(swap_state_test_probe, data);
	tracepoint_synchronize_unregister();
}

/*
 * A folio to replace @old in the swap cache, set up as
 * shmem_replace_folio() sets up its new folio, with the swap cache's
 * reference and @old's swap entry, on @old's node (the node's swap cache
 * counts stay as they were); the lookup locks it.
 */
static struct folio *swap_state_test_new_folio(struct kunit *test,
					       struct folio *old)
{
	struct folio *new = __folio_alloc_node(GFP_HIGHUSER_MOVABLE |
					       __GFP_THISNODE, 0,
					       folio_nid(old));

	KUNIT_ASSERT_NOT_NULL(test, new);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  swap_state_test_put_folio,
						  new));
	folio_ref_add(new, folio_nr_pages(new));
	__folio_set_swapbacked(new);
	folio_mark_uptodate(new);
	new->swap = old->swap;
	folio_set_swapcache(new);
	return new;
}

/*
 * The probe for @c on the folio in slot @offset of @si, registered until
 * the test ends; the test holds a reference on that folio meanwhile.
 */
static struct swap_state_test_race *
swap_state_test_race(struct kunit *test,
		     const struct swap_state_test_change_case *c,
		     struct swap_info_struct *si, unsigned long offset)
{
	struct swap_state_test_race *r;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->change = c->change;
	r->task = current;
	r->old = swap_state_test_cached(si, offset);
	KUNIT_ASSERT_NOT_NULL(test, r->old);
	folio_get(r->old);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  swap_state_test_put_folio,
						  r->old));
	if (c->change == SWAP_STATE_TEST_REPLACED)
		r->new = swap_state_test_new_folio(test, r->old);
	KUNIT_ASSERT_EQ(test, 0,
			register_trace_page_ref_mod_unless(swap_state_test_probe,
							   r));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, swap_state_test_unprobe,
						  r));
	return r;
}

/*
 * Look slot @offset of @si up with the change armed: the old folio's
 * references frozen before, or the old (and new) folio locked, as the
 * CPU that changes them would have them.
 */
static struct folio *swap_state_test_lookup_changed(struct kunit *test,
						    struct swap_state_test_race *r,
						    struct swap_info_struct *si,
						    unsigned long offset)
{
	swp_entry_t entry = swp_entry(si->type, offset);
	struct folio *found;

	KUNIT_ASSERT_PTR_EQ(test, si, get_swap_device(entry));
	if (r->change == SWAP_STATE_TEST_THAWED) {
		r->frozen_refs = folio_ref_count(r->old);
		if (!folio_ref_freeze(r->old, r->frozen_refs)) {
			put_swap_device(si);
			KUNIT_FAIL(test, "references changed while freezing");
			return NULL;
		}
	} else {
		folio_lock(r->old);
	}
	if (r->new)
		folio_lock(r->new);
	r->armed = true;
	found = swap_cache_get_folio(entry);
	r->armed = false;
	if (r->change != SWAP_STATE_TEST_THAWED)
		folio_unlock(r->old);
	if (r->new)
		folio_unlock(r->new);
	put_swap_device(si);
	return found;
}

static void swap_state_test_cache_get_changed(struct kunit *test)
{
	const struct swap_state_test_change_case *c = test->param_value;
	int old_refs, new_refs = 0, old_after, new_after = 0;
	struct folio *found, *want = NULL;
	struct swap_state_test_race *r;
	struct swap_info_struct *si;
	struct vm_area_struct *vma;

	si = swap_state_test_swapon_dev(test, SWAP_STATE_TEST_SWAP_PAGES);
	vma = swap_state_test_hits_vma(test, SWAP_STATE_TEST_INFO(2));
	swap_state_test_read(test, si, 10, vma, SWAP_STATE_TEST_FAULT);
	/* No CPU's LRU batch may hold a reference the test cannot see. */
	lru_add_drain_all();
	r = swap_state_test_race(test, c, si, 10);
	old_refs = folio_ref_count(r->old);
	if (r->new)
		new_refs = folio_ref_count(r->new);

	found = swap_state_test_lookup_changed(test, r, si, 10);
	old_after = folio_ref_count(r->old);
	if (r->new)
		new_after = folio_ref_count(r->new);
	if (found)
		folio_put(found);

	if (c->found == SWAP_STATE_TEST_FOUND_OLD)
		want = r->old;
	else if (c->found == SWAP_STATE_TEST_FOUND_NEW)
		want = r->new;
	KUNIT_EXPECT_PTR_EQ(test, want, found);
	KUNIT_EXPECT_PTR_EQ(test, want, swap_state_test_cached(si, 10));
	KUNIT_EXPECT_EQ(test, c->tries, r->tries);
	KUNIT_EXPECT_EQ(test, old_refs + c->old_refs, old_after);
	KUNIT_EXPECT_EQ(test, new_refs + (c->found == SWAP_STATE_TEST_FOUND_NEW),
			new_after);
}

#else /* !CONFIG_DEBUG_PAGE_REF */

static void swap_state_test_cache_get_changed(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_DEBUG_PAGE_REF's tracepoint");
}

#endif /* CONFIG_DEBUG_PAGE_REF */

/* -------------------------------------------------------------------------
 * swap_vma_readahead(): reading the window in
 */

/* The pages around a fault at MID, from MID - RA_BEFORE. */
#define SWAP_STATE_TEST_RA_BEFORE	4
#define SWAP_STATE_TEST_RA_SPAN		10
/* Page i of the span is swapped out to slot 16 + i of its device. */
#define SWAP_STATE_TEST_RA_SLOT(i)	(16 + (i))

static unsigned long swap_state_test_ra_addr(int i)
{
	return swap_state_test_addr(SWAP_STATE_TEST_MID -
				    SWAP_STATE_TEST_RA_BEFORE + i);
}

/*
 * Take the swap PTE at @addr under @pmd down, as unmapping would, if it is
 * one; the caller holds the mmap lock. False if there is no page table.
 */
static bool swap_state_test_clear_swap_pte(struct mm_struct *mm, pmd_t *pmd,
					   unsigned long addr)
{
	spinlock_t *ptl;	/* the PT lock of the PTE page */
	pte_t *ptep;

	ptep = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (!ptep)
		return false;
	if (softleaf_is_swap(softleaf_from_pte(ptep_get(ptep)))) {
		ptep_get_and_clear(mm, addr, ptep);
		dec_mm_counter(mm, MM_SWAPENTS);
	}
	pte_unmap_unlock(ptep, ptl);
	return true;
}

/*
 * Take the span's swap PTEs down, as unmapping would, and drop the mm.
 * The swap counts they stand for go with the devices.
 *
 * This runs before the swap devices go, in KUnit's cleanup thread. The
 * test thread's mm is not torn down in time for that: KUnit is told the
 * thread is done before its exit drops the mm, so the last mmput() could
 * race with the swap device's removal. The reference taken in
 * swap_state_test_hold_ptes() keeps the page tables for this walk.
 */
static void swap_state_test_unmap_ptes(void *data)
{
	struct mm_struct *mm = data;
	pmd_t *pmd;
	int i;

	mmap_read_lock(mm);
	pmd = mm_find_pmd(mm, swap_state_test_ra_addr(0));
	for (i = 0; pmd && i < SWAP_STATE_TEST_RA_SPAN; i++) {
		if (!swap_state_test_clear_swap_pte(mm, pmd,
						    swap_state_test_ra_addr(i)))
			break;
	}
	mmap_read_unlock(mm);
	mmput(mm);
}

static void swap_state_test_hold_ptes(struct kunit *test,
				      struct mm_struct *mm)
{
	mmget(mm);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  swap_state_test_unmap_ptes,
						  mm));
}

struct swap_state_test_ra_case {
	const char *desc;
	long prev;			/* page of the last fault */
	unsigned int prev_win;
	unsigned int hits;
	/*
	 * One character per page of the span; the fault is at MID, page
	 * RA_BEFORE of the span, for the swap entry of that page's slot on
	 * the first device.
	 *
	 * @ptes: 's' a swap PTE of the page's slot on the first device; 'o'
	 * the same on a second device; 'c' as 's', the slot already in the
	 * swap cache; 'f' as 's', the slot since freed; 'd' as 's', the slot
	 * not zero-filled, so that it is read through the device's I/O;
	 * 'e' a swap-in error
	 * marker (not a swap entry); 'z' a present PTE (the zero page); '-'
	 * none.
	 *
	 * @expected, the page's slot afterwards: '.' not in the swap cache;
	 * 'R' read ahead: up to date, unlocked, PG_readahead, held by the
	 * swap cache and this CPU's LRU batch, not yet on the LRU; 'T' read
	 * as the target: up to date, unlocked, not PG_readahead, and
	 * returned; 'C' the folio that was cached, untouched.
	 */
	const char *ptes;
	const char *expected;
	bool second_dying;		/* the second device is going away */
	bool no_table;			/* the span's PMD has no page table */
};

/*
 * page_cluster 3: the windows are those of swap_state_test_ra_win_cases.
 * A VMA whose last fault was 50 pages away with 5 hits centres an 8-page
 * window: pages 1-8 of the span. Forward, 2 hits: 4 pages from the fault,
 * pages 4-7; forward without hits: pages 4-5; backward, 2 hits: pages 1-4.
 */
static const struct swap_state_test_ra_case swap_state_test_ra_cases[] = {
	{
		.desc = "centred window: every swap PTE in it is read",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "ssssssssss",
		.expected = ".RRRTRRRR.",
	},
	{
		.desc = "slots with data: the window read in one submission",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "dddddddddd",
		.expected = ".RRRTRRRR.",
	},
	{
		.desc = "a zero-filled slot between: a submission on each side",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "ddsddddddd",
		.expected = ".RRRTRRRR.",
	},
	{
		.desc = "forward window: from the fault on",
		.prev = SWAP_STATE_TEST_MID - 1,
		.prev_win = 4,
		.hits = 2,
		.ptes = "ssssssssss",
		.expected = "....TRRR..",
	},
	{
		.desc = "2-page window: the target and the page after it",
		.prev = SWAP_STATE_TEST_MID - 1,
		.prev_win = 0,
		.hits = 0,
		.ptes = "ssssssssss",
		.expected = "....TR....",
	},
	{
		.desc = "backward window: up to the fault",
		.prev = SWAP_STATE_TEST_MID + 1,
		.prev_win = 4,
		.hits = 2,
		.ptes = "ssssssssss",
		.expected = ".RRRT.....",
	},
	{
		.desc = "none, present and non-swap PTEs are skipped",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "s-zeszes-s",
		.expected = "....T..R..",
	},
	{
		.desc = "an entry already in the swap cache is not read again",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "sscsssscss",
		.expected = ".RCRTRRCR.",
	},
	{
		.desc = "a freed entry is skipped",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "sfssssfsss",
		.expected = "..RRTR.RR.",
	},
	{
		.desc = "an entry of another swap device is read",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "soosssosss",
		.expected = ".RRRTRRRR.",
	},
	{
		.desc = "an entry of a device being swapped off is skipped",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "soosssosss",
		.expected = "...RTR.RR.",
		.second_dying = true,
	},
	{
		.desc = "a 1-page window reads the target alone",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 0,
		.hits = 0,
		.ptes = "ssssssssss",
		.expected = "....T.....",
	},
	{
		.desc = "faulting PTE no longer swap: the target is still read",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "ssss-sssss",
		.expected = ".RRRTRRRR.",
	},
	{
		.desc = "target already cached: returned, not read again",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "sssscsssss",
		.expected = ".RRRCRRRR.",
	},
	{
		.desc = "no page table: the target alone is read",
		.prev = SWAP_STATE_TEST_MID + 50,
		.prev_win = 4,
		.hits = 5,
		.ptes = "----------",
		.expected = "....T.....",
		.no_table = true,
	},
};

KUNIT_ARRAY_PARAM_DESC(swap_state_test_ra, swap_state_test_ra_cases, desc);

/* What one readahead test works on. */
struct swap_state_test_ra {
	const struct swap_state_test_ra_case *c;
	struct swap_info_struct *si[2];	/* first and second device */
	struct vm_area_struct *vma;
	struct folio *cached[SWAP_STATE_TEST_RA_SPAN];
	unsigned long saved_tb[SWAP_STATE_TEST_RA_SPAN];
};

static struct swap_info_struct *
swap_state_test_dev_of(struct swap_state_test_ra *ra, int i)
{
	return ra->si[ra->c->ptes[i] == 'o'];
}

static swp_entry_t swap_state_test_ra_entry(struct swap_state_test_ra *ra,
					    int i)
{
	return swp_entry(swap_state_test_dev_of(ra, i)->type,
			 SWAP_STATE_TEST_RA_SLOT(i));
}

/* Have the slot's reads go through the device's I/O, not be zero-filled. */
static void swap_state_test_clear_zero(struct swap_info_struct *si,
				       unsigned long offset)
{
	struct swap_cluster_info *ci = swap_cluster_lock(si, offset);

	__swap_table_clear_zero(ci, offset % SWAPFILE_CLUSTER);
	swap_cluster_unlock(ci);
}

/* Set up page @i of the span as its character in @ptes says. */
static void swap_state_test_ra_setup_page(struct kunit *test,
					  struct swap_state_test_ra *ra, int i)
{
	unsigned long addr = swap_state_test_ra_addr(i);
	struct mm_struct *mm = ra->vma->vm_mm;
	pte_t pte;

	switch (ra->c->ptes[i]) {
	case 'c':
		ra->cached[i] = swap_state_test_read(test, ra->si[0],
						     SWAP_STATE_TEST_RA_SLOT(i),
						     ra->vma, addr);
		fallthrough;
	case 'd':
		swap_state_test_clear_zero(ra->si[0], SWAP_STATE_TEST_RA_SLOT(i));
		fallthrough;
	case 's':
	case 'f':
	case 'o':
		pte = softleaf_to_pte(swap_state_test_ra_entry(ra, i));
		inc_mm_counter(mm, MM_SWAPENTS);
		break;
	case 'e':
		pte = make_pte_marker(PTE_MARKER_POISONED);
		break;
	case 'z':
		pte = pte_mkspecial(pfn_pte(zero_pfn(addr),
					    ra->vma->vm_page_prot));
		break;
	default:
		return;
	}
	KUNIT_ASSERT_TRUE_MSG(test, mm_kunit_set_pte(mm, addr, pte),
			      "PTE of page %d", i);
}

/*
 * The PMD entry of the span without a page table under it, as after a
 * racing thread freed the table (the mmap read lock allows that).
 */
static void swap_state_test_ra_pmd_only(struct kunit *test,
					struct mm_struct *mm)
{
	pmd_t *pmd;

	mmap_read_lock(mm);
	pmd = mm_kunit_alloc_pmd(mm, swap_state_test_ra_addr(0), false);
	mmap_read_unlock(mm);
	KUNIT_ASSERT_NOT_NULL(test, pmd);
}

/*
 * Free the slots of the pages marked 'f', as a racing unmap would after
 * swap_vma_readahead() read their PTEs (@freed), or give them back their
 * swap counts (!@freed).
 */
static void swap_state_test_free_slots(struct swap_state_test_ra *ra,
				       bool freed)
{
	struct swap_cluster_info *ci;
	unsigned int ci_off;
	int i;

	for (i = 0; i < SWAP_STATE_TEST_RA_SPAN; i++) {
		if (ra->c->ptes[i] != 'f')
			continue;
		ci_off = SWAP_STATE_TEST_RA_SLOT(i) % SWAPFILE_CLUSTER;
		ci = swap_cluster_lock(ra->si[0], SWAP_STATE_TEST_RA_SLOT(i));
		if (freed) {
			ra->saved_tb[i] = __swap_table_get(ci, ci_off);
			__swap_table_set(ci, ci_off, null_to_swp_tb());
		} else {
			__swap_table_set(ci, ci_off, ra->saved_tb[i]);
		}
		swap_cluster_unlock(ci);
	}
}

/*
 * The swap-in events of a fault: pages read ahead, pages served as
 * zero-filled, pages read through the device, and the submissions that
 * read them.
 */
struct swap_state_test_events {
	unsigned long swap_ra;
	unsigned long swpin_zero;
	unsigned long pswpin;
	unsigned long nrswpin;
};

static void swap_state_test_events_before(struct kunit *test,
					  struct swap_state_test_events *ev)
{
	ev->swap_ra = mm_kunit_vm_event(test, SWAP_RA);
	ev->swpin_zero = mm_kunit_vm_event(test, SWPIN_ZERO);
	ev->pswpin = mm_kunit_vm_event(test, PSWPIN);
	ev->nrswpin = mm_kunit_vm_event(test, NRSWPIN);
}

/* The events since swap_state_test_events_before(). */
static void swap_state_test_events_since(struct kunit *test,
					 struct swap_state_test_events *ev)
{
	ev->swap_ra = mm_kunit_vm_event(test, SWAP_RA) - ev->swap_ra;
	ev->swpin_zero = mm_kunit_vm_event(test, SWPIN_ZERO) - ev->swpin_zero;
	ev->pswpin = mm_kunit_vm_event(test, PSWPIN) - ev->pswpin;
	ev->nrswpin = mm_kunit_vm_event(test, NRSWPIN) - ev->nrswpin;
}

/*
 * A swap fault on @entry at MID, in swapin_readahead() as do_swap_page()
 * calls it: under the mmap lock, with the entry's swap device held.
 */
static struct folio *swap_state_test_swap_fault(struct vm_area_struct *vma,
						swp_entry_t entry)
{
	unsigned long address = swap_state_test_addr(SWAP_STATE_TEST_MID);
	struct vm_fault vmf = {
		.vma = vma,
		.address = address,
		.real_address = address,
		.flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE,
	};
	struct swap_info_struct *si;
	struct folio *folio = NULL;

	mmap_read_lock(vma->vm_mm);
	vmf.pmd = mm_find_pmd(vma->vm_mm, address);
	si = get_swap_device(entry);
	if (vmf.pmd && si) {
		/*
		 * Stay on this CPU, its LRU batch empty, to see what the
		 * readahead leaves in it.
		 */
		migrate_disable();
		lru_add_drain();
		folio = swapin_readahead(entry, GFP_HIGHUSER_MOVABLE, &vmf);
		migrate_enable();
	}
	if (si)
		put_swap_device(si);
	mmap_read_unlock(vma->vm_mm);
	return folio;
}

/* Check page @i of the span as its character in @expected says. */
static void swap_state_test_ra_check_page(struct kunit *test,
					  struct swap_state_test_ra *ra, int i)
{
	char expected = ra->c->expected[i];
	struct folio *folio;

	folio = swap_state_test_cached(swap_state_test_dev_of(ra, i),
				       SWAP_STATE_TEST_RA_SLOT(i));
	if (expected == '.') {
		KUNIT_EXPECT_NULL_MSG(test, folio, "page %d cached", i);
		return;
	}
	KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "page %d cached", i);
	KUNIT_EXPECT_TRUE_MSG(test, folio_test_uptodate(folio),
			      "page %d up to date", i);
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_locked(folio),
			       "page %d locked", i);
	KUNIT_EXPECT_EQ_MSG(test, expected == 'R', folio_test_readahead(folio),
			    "page %d PG_readahead", i);
	if (expected == 'C')
		KUNIT_EXPECT_PTR_EQ_MSG(test, ra->cached[i], folio,
					"page %d replaced", i);
	if (expected != 'R')
		return;
	/* The LRU batch was not drained: the folio waits in it. */
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_lru(folio),
			       "page %d on the LRU", i);
	KUNIT_EXPECT_EQ_MSG(test, 2, folio_ref_count(folio),
			    "page %d references", i);
}

/*
 * Undo swap_state_test_ra_setup()'s percpu_ref_kill() before the swap
 * cache of the device is emptied: swapoff empties it while the device's
 * users are live (try_to_unuse()), and the swap cache's helpers warn
 * about a device whose users reached zero. Wait for the kill to settle
 * first, as swapoff does, then resurrect the reference as swapon does:
 * the same state whether or not an RCU grace period passed in the test.
 */
static void swap_state_test_revive(void *data)
{
	struct swap_info_struct *si = data;

	synchronize_rcu();
	wait_for_completion(&si->comp);
	percpu_ref_resurrect(&si->users);
}

/*
 * The two devices, and the VMA with the case's readahead state and the
 * span's PTEs.
 */
static void swap_state_test_ra_setup(struct kunit *test,
				     struct swap_state_test_ra *ra)
{
	unsigned long info;
	int i;

	swap_state_test_use_vma_readahead(test);
	mm_kunit_set_knob(test, page_cluster, 3);
	ra->si[0] = swap_state_test_swapon_dev(test, SWAP_STATE_TEST_SWAP_PAGES);
	ra->si[1] = swap_state_test_swapon_dev(test, SWAP_STATE_TEST_SWAP_PAGES);
	info = SWAP_RA_VAL(swap_state_test_addr(ra->c->prev),
			   (unsigned long)ra->c->prev_win, ra->c->hits);
	ra->vma = swap_state_test_hits_vma(test, info);
	swap_state_test_hold_ptes(test, ra->vma->vm_mm);
	if (ra->c->no_table)
		swap_state_test_ra_pmd_only(test, ra->vma->vm_mm);
	for (i = 0; i < SWAP_STATE_TEST_RA_SPAN; i++)
		swap_state_test_ra_setup_page(test, ra, i);
	if (!ra->c->second_dying)
		return;
	percpu_ref_kill(&ra->si[1]->users);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, swap_state_test_revive,
						  ra->si[1]));
}

/* Whether page @i of the span is read, as the target or ahead. */
static bool swap_state_test_ra_read(struct swap_state_test_ra *ra, int i)
{
	return ra->c->expected[i] == 'R' || ra->c->expected[i] == 'T';
}

/* Whether page @i is read through the device's I/O. */
static bool swap_state_test_ra_read_io(struct swap_state_test_ra *ra, int i)
{
	return swap_state_test_ra_read(ra, i) && ra->c->ptes[i] == 'd';
}

/*
 * Set up @ra's case and take its swap fault at MID, with the events it
 * counts in @ev: the target is returned and left in the swap cache, and
 * no block plug is left behind.
 */
static void swap_state_test_ra_fault(struct kunit *test,
				     struct swap_state_test_ra *ra,
				     struct swap_state_test_events *ev)
{
	struct folio *target;
	swp_entry_t entry;

	swap_state_test_ra_setup(test, ra);

	swap_state_test_events_before(test, ev);
	swap_state_test_free_slots(ra, true);
	entry = swap_state_test_ra_entry(ra, SWAP_STATE_TEST_RA_BEFORE);
	target = swap_state_test_swap_fault(ra->vma, entry);
	swap_state_test_free_slots(ra, false);
	swap_state_test_events_since(test, ev);

	KUNIT_EXPECT_NULL(test, current->plug);
	KUNIT_ASSERT_NOT_NULL(test, target);
	folio_put(target);
	KUNIT_EXPECT_PTR_EQ(test, target,
			    swap_state_test_cached(ra->si[0], swp_offset(entry)));
}

/*
 * The window's reads through the device's I/O are submitted together
 * before swap_vma_readahead() returns: reads of adjacent slots in one
 * submission.
 */
static void swap_state_test_ra_check_events(struct kunit *test,
					    struct swap_state_test_ra *ra,
					    struct swap_state_test_events *ev)
{
	unsigned long nr_ra = 0, nr_zero = 0, nr_io = 0, nr_submit = 0;
	int i;

	for (i = 0; i < SWAP_STATE_TEST_RA_SPAN; i++) {
		nr_ra += ra->c->expected[i] == 'R';
		if (!swap_state_test_ra_read(ra, i))
			continue;
		if (ra->c->ptes[i] != 'd') {
			nr_zero++;
			continue;
		}
		nr_io++;
		/* A read of the slot before it goes in the same submission. */
		if (!i || !swap_state_test_ra_read_io(ra, i - 1))
			nr_submit++;
	}
	KUNIT_EXPECT_EQ(test, nr_ra, ev->swap_ra);
	KUNIT_EXPECT_EQ(test, nr_zero, ev->swpin_zero);
	KUNIT_EXPECT_EQ(test, nr_io, ev->pswpin);
	KUNIT_EXPECT_EQ(test, nr_submit, ev->nrswpin);
}

/* A swap fault with VMA readahead. */
static void swap_state_test_vma_readahead(struct kunit *test)
{
	struct swap_state_test_ra ra = { .c = test->param_value };
	struct swap_state_test_events ev;
	int i;

	swap_state_test_ra_fault(test, &ra, &ev);

	for (i = 0; i < SWAP_STATE_TEST_RA_SPAN; i++)
		swap_state_test_ra_check_page(test, &ra, i);
	swap_state_test_ra_check_events(test, &ra, &ev);
}

#if IS_ENABLED(CONFIG_NUMA) && IS_ENABLED(CONFIG_TMPFS)

/*
 * The node an interleave policy over every node with memory gives the
 * page at @addr of @vma: the page's interleave index (its offset in the
 * VMA's pages, from vm_pgoff) modulo the number of nodes picks the node,
 * counted from the first (Documentation/admin-guide/mm/numa_memory_policy.rst).
 */
static int swap_state_test_interleave_node(struct vm_area_struct *vma,
					   unsigned long addr)
{
	pgoff_t ilx = vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);
	unsigned int n = ilx % num_node_state(N_MEMORY);
	int nid = first_node(node_states[N_MEMORY]);

	while (n--)
		nid = next_node(nid, node_states[N_MEMORY]);
	return nid;
}

/*
 * Under a VMA's interleave policy, each page of the window is allocated
 * on the node the policy gives that page's address, as a fault on it
 * would allocate it: the window's pages do not all follow the target's
 * node. The window is the first case's: 8 pages from 3 before the fault.
 */
static void swap_state_test_vma_readahead_interleave(struct kunit *test)
{
	struct swap_state_test_ra ra = { .c = &swap_state_test_ra_cases[0] };
	char mode[] = "interleave";	/* every node with memory */
	struct folio *target, *folio;
	struct mempolicy *pol;
	swp_entry_t entry;
	int i, nid;

	if (num_node_state(N_MEMORY) < 2)
		kunit_skip(test, "needs two nodes with memory");
	swap_state_test_ra_setup(test, &ra);
	KUNIT_ASSERT_EQ(test, 0, mpol_parse_str(mode, &pol));
	/* The VMA takes the policy's reference: munmap() puts it. */
	mmap_write_lock(ra.vma->vm_mm);
	vma_start_write(ra.vma);
	ra.vma->vm_policy = pol;
	mmap_write_unlock(ra.vma->vm_mm);

	entry = swap_state_test_ra_entry(&ra, SWAP_STATE_TEST_RA_BEFORE);
	target = swap_state_test_swap_fault(ra.vma, entry);
	KUNIT_ASSERT_NOT_NULL(test, target);
	folio_put(target);
	for (i = 0; i < SWAP_STATE_TEST_RA_SPAN; i++) {
		if (!swap_state_test_ra_read(&ra, i))
			continue;
		folio = swap_state_test_cached(ra.si[0],
					       SWAP_STATE_TEST_RA_SLOT(i));
		KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "page %d cached", i);
		nid = swap_state_test_interleave_node(ra.vma,
						      swap_state_test_ra_addr(i));
		KUNIT_EXPECT_EQ_MSG(test, nid, folio_nid(folio), "page %d", i);
	}
}

#else /* !(CONFIG_NUMA && CONFIG_TMPFS) */

static void swap_state_test_vma_readahead_interleave(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_NUMA, and CONFIG_TMPFS's mpol_parse_str()");
}

#endif /* CONFIG_NUMA && CONFIG_TMPFS */

/* -------------------------------------------------------------------------
 * swapin_readahead() without VMA readahead: swap_cluster_readahead()
 */

struct swap_state_test_cluster_case {
	const char *desc;
	bool vma_ra_disabled;		/* else a rotational device is active */
	unsigned int nr_pages;		/* the device's slots */
	int page_cluster;
	int hits;			/* swapin_readahead_hits before */
	unsigned long target;		/* the slot faulted on */
	/* the slots read through the device's I/O, else zero-filled */
	bool io;
	/* expected: the slots read, [first, last] */
	unsigned long first;
	unsigned long last;
};

/*
 * swap_cluster_readahead() reads the block of swap slots, aligned to its
 * size, that holds the target's: the window of swapin_nr_pages(), hits + 2
 * rounded up to a power of two of at least 4 and capped at 1 <<
 * page_cluster (the last window forgotten). It never reads slot 0, the
 * swap header, nor a slot past the device's end. A window of one page
 * (page_cluster 0) reads the target alone and leaves the hits. Reads
 * through the device's I/O are submitted together, the target's among
 * them: adjacent slots, one submission.
 */
static const struct swap_state_test_cluster_case swap_state_test_cluster_cases[] = {
	{
		.desc = "VMA readahead disabled in sysfs: 16-23 around 20",
		.vma_ra_disabled = true,
		.nr_pages = SWAP_STATE_TEST_SWAP_PAGES,
		.page_cluster = 3,
		.hits = 5,
		.target = 20,
		.first = 16,
		.last = 23,
	},
	{
		.desc = "rotational swap device active: 16-23 around 20",
		.vma_ra_disabled = false,
		.nr_pages = SWAP_STATE_TEST_SWAP_PAGES,
		.page_cluster = 3,
		.hits = 5,
		.target = 20,
		.first = 16,
		.last = 23,
	},
	{
		.desc = "one hit: 3 rounds up to 4, 20-23 around 21",
		.vma_ra_disabled = true,
		.nr_pages = SWAP_STATE_TEST_SWAP_PAGES,
		.page_cluster = 3,
		.hits = 1,
		.target = 21,
		.first = 20,
		.last = 23,
	},
	{
		.desc = "the block of slot 0, the swap header: 1-7 around 2",
		.vma_ra_disabled = true,
		.nr_pages = SWAP_STATE_TEST_SWAP_PAGES,
		.page_cluster = 3,
		.hits = 5,
		.target = 2,
		.first = 1,
		.last = 7,
	},
	{
		.desc = "the block past the device's end: 40-44 of 45 around 42",
		.vma_ra_disabled = true,
		.nr_pages = 45,
		.page_cluster = 3,
		.hits = 5,
		.target = 42,
		.first = 40,
		.last = 44,
	},
	{
		.desc = "the block ending at the device's end: 40-46 of 47 around 42",
		.vma_ra_disabled = true,
		.nr_pages = 47,
		.page_cluster = 3,
		.hits = 5,
		.target = 42,
		.first = 40,
		.last = 46,
	},
	{
		.desc = "through the device's I/O: 16-23 around 20, one submission",
		.vma_ra_disabled = true,
		.nr_pages = SWAP_STATE_TEST_SWAP_PAGES,
		.page_cluster = 3,
		.hits = 5,
		.target = 20,
		.io = true,
		.first = 16,
		.last = 23,
	},
	{
		.desc = "page_cluster 0: the target alone, the hits left",
		.vma_ra_disabled = true,
		.nr_pages = SWAP_STATE_TEST_SWAP_PAGES,
		.page_cluster = 0,
		.hits = 5,
		.target = 20,
		.first = 20,
		.last = 20,
	},
};

KUNIT_ARRAY_PARAM_DESC(swap_state_test_cluster, swap_state_test_cluster_cases,
		       desc);

/* The case's slots are read, the target's as the target, the others ahead. */
static void swap_state_test_check_cluster_slot(struct kunit *test,
					       const struct swap_state_test_cluster_case *c,
					       struct swap_info_struct *si,
					       unsigned long offset)
{
	struct folio *folio = swap_state_test_cached(si, offset);

	if (offset < c->first || offset > c->last) {
		KUNIT_EXPECT_NULL_MSG(test, folio, "slot %lu cached", offset);
		return;
	}
	KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "slot %lu cached", offset);
	KUNIT_EXPECT_TRUE_MSG(test, folio_test_uptodate(folio),
			      "slot %lu up to date", offset);
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_locked(folio),
			       "slot %lu locked", offset);
	KUNIT_EXPECT_EQ_MSG(test, offset != c->target,
			    folio_test_readahead(folio),
			    "slot %lu PG_readahead", offset);
	/*
	 * The readahead keeps no reference: the swap cache's is left, and
	 * the LRU batch's while the folio waits in it (the batch this CPU
	 * had empty may have been drained since).
	 */
	KUNIT_EXPECT_EQ_MSG(test, 1 + !folio_test_lru(folio),
			    folio_ref_count(folio), "slot %lu references",
			    offset);
}

/*
 * Without VMA readahead (as the case says), with the case's global hits
 * and page_cluster: a device of its size in @si, and a VMA with a swap PTE
 * for its target slot at MID.
 */
static struct vm_area_struct *
swap_state_test_cluster_setup(struct kunit *test,
			      const struct swap_state_test_cluster_case *c,
			      struct swap_info_struct **si)
{
	unsigned long addr = swap_state_test_addr(SWAP_STATE_TEST_MID);
	struct vm_area_struct *vma;
	unsigned long offset;
	swp_entry_t entry;

	swap_state_test_use_vma_readahead(test);
	if (c->vma_ra_disabled)
		mm_kunit_set_knob(test, enable_vma_readahead, false);
	else
		mm_kunit_set_knob(test, nr_rotate_swap,
				  (atomic_t)ATOMIC_INIT(1));
	swap_state_test_forget_window(test);
	WRITE_ONCE(page_cluster, c->page_cluster);
	atomic_set(&swapin_readahead_hits, c->hits);
	*si = swap_state_test_swapon_dev(test, c->nr_pages);
	for (offset = 1; c->io && offset < c->nr_pages; offset++)
		swap_state_test_clear_zero(*si, offset);
	entry = swp_entry((*si)->type, c->target);
	vma = swap_state_test_hits_vma(test, SWAP_STATE_TEST_INFO(2));
	swap_state_test_hold_ptes(test, vma->vm_mm);
	inc_mm_counter(vma->vm_mm, MM_SWAPENTS);
	KUNIT_ASSERT_TRUE(test, mm_kunit_set_pte(vma->vm_mm, addr,
						 softleaf_to_pte(entry)));
	return vma;
}

/*
 * Without VMA readahead, a swap fault reads the block of the case's slots,
 * whatever the PTEs and the VMA's readahead state: every slot of it a
 * zero-filled page or read through the device, all but the target marked
 * PG_readahead.
 */
static void swap_state_test_cluster_readahead(struct kunit *test)
{
	const struct swap_state_test_cluster_case *c = test->param_value;
	unsigned long nr = c->last - c->first + 1;
	struct swap_state_test_events ev;
	struct swap_info_struct *si;
	struct vm_area_struct *vma;
	struct folio *target;
	unsigned long offset;

	vma = swap_state_test_cluster_setup(test, c, &si);

	swap_state_test_events_before(test, &ev);
	target = swap_state_test_swap_fault(vma, swp_entry(si->type, c->target));
	swap_state_test_events_since(test, &ev);

	KUNIT_ASSERT_NOT_NULL(test, target);
	folio_put(target);
	KUNIT_EXPECT_PTR_EQ(test, target, swap_state_test_cached(si, c->target));
	for (offset = 0; offset < SWAP_STATE_TEST_SWAP_PAGES; offset++)
		swap_state_test_check_cluster_slot(test, c, si, offset);
	KUNIT_EXPECT_EQ(test, nr - 1, ev.swap_ra);
	KUNIT_EXPECT_EQ(test, c->io ? 0 : nr, ev.swpin_zero);
	KUNIT_EXPECT_EQ(test, c->io ? nr : 0, ev.pswpin);
	KUNIT_EXPECT_EQ(test, c->io ? 1 : 0, ev.nrswpin);
	KUNIT_EXPECT_EQ(test, c->page_cluster ? 0 : c->hits,
			atomic_read(&swapin_readahead_hits));
	KUNIT_EXPECT_EQ(test, SWAP_STATE_TEST_INFO(2),
			atomic_long_read(&vma->swap_readahead_info));
}

static struct kunit_case swap_state_test_cases[] = {
	KUNIT_CASE_PARAM(swap_state_test_nr_pages,
			 swap_state_test_nr_pages_gen_params),
	KUNIT_CASE(swap_state_test_nr_pages_keeps_state),
	KUNIT_CASE_PARAM(swap_state_test_ra_win,
			 swap_state_test_ra_win_gen_params),
	KUNIT_CASE_PARAM(swap_state_test_update_vma_hit,
			 swap_state_test_vma_hit_gen_params),
	KUNIT_CASE(swap_state_test_update_hit_once),
	KUNIT_CASE(swap_state_test_update_first_hit),
	KUNIT_CASE(swap_state_test_update_large_folio),
	KUNIT_CASE_PARAM(swap_state_test_update_global_hit,
			 swap_state_test_global_gen_params),
	KUNIT_CASE(swap_state_test_cache_get_folio),
	KUNIT_CASE_PARAM(swap_state_test_cache_get_changed,
			 swap_state_test_change_gen_params),
	KUNIT_CASE_PARAM(swap_state_test_vma_readahead,
			 swap_state_test_ra_gen_params),
	KUNIT_CASE(swap_state_test_vma_readahead_interleave),
	KUNIT_CASE_PARAM(swap_state_test_cluster_readahead,
			 swap_state_test_cluster_gen_params),
	{}
};

static struct kunit_suite swap_state_test_suite = {
	.name = "mm_swap_readahead",
	.test_cases = swap_state_test_cases,
};

kunit_test_suite(swap_state_test_suite);

#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */
