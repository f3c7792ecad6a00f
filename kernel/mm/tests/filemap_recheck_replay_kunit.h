/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit replay of PTE updates racing with read faults on a private file
 * mapping, through the real fault path of mm/filemap.c: the major faults
 * and reads that the PTE recheck before a major fault
 * (filemap_fault_recheck_pte_none()) saves on mlocked VMAs, and the PT
 * lock it takes for them.
 *
 * This file is included at the bottom of mm/filemap.c, after
 * filemap_kunit.h, whose file, mapping, fault and race helpers it uses.
 *
 * Suites:
 *  - mm_filemap_recheck_replay: the small scenarios, a second;
 *  - mm_filemap_recheck_replay_seed: the counts the change was measured
 *    with (mm/tests/filemap_recheck_replay_scenarios.h says which).
 *
 * A scenario maps a file, private, whose stub backing store counts the
 * pages it reads, and takes read faults on its data pages in turn. Before
 * each fault the file's page cache is evicted (invalidate_mapping_pages()),
 * as memory pressure evicts the file folios that COW has left unmapped,
 * and another CPU updates the page's PTE as NUMA hinting does
 * (change_prot_numa(), do_numa_page()): under the mmap lock for read and
 * the PT lock, it clears the PTE and writes it back once the fault waits
 * for the PT lock or has returned. The fault runs through the real
 * handle_mm_fault(), retried with FAULT_FLAG_TRIED if it returns
 * VM_FAULT_RETRY.
 *
 * A data page is either COW'ed before the replay (an anon page the update
 * clears for a moment: the fault sees a PTE that is none only for now) or
 * not mapped (the update only takes the PT lock: the fault is a real miss,
 * and what it costs in PT lock waits is counted; the replay unmaps the
 * page, and the data pages fault-around mapped with it, after its fault).
 * Every other page of the VMA is COW'ed, so that the page table of a data
 * page exists even when its PTE is none. An mlocked VMA has VM_LOCKED set
 * and counted in locked_vm, as mlock() does, but its COW'ed folios are not
 * mlocked: the fault path reads the flag only. The replay holds a
 * reference on each COW'ed page, so that compaction does not move it.
 *
 * The suites report, per scenario, the faults, the major faults (the
 * task's maj_flt), the pages read and the faults that waited for the PT
 * lock the update held, as KTAP diagnostics ("# replay: ..."), to compare
 * builds with and without the recheck. They check what holds on every
 * build: each fault ends with its page mapped, a COW'ed page by the same
 * anon page as before, a major fault reads at least its page, and, at
 * small scale, a second replay gives the same numbers.
 */

#ifdef CONFIG_MM_FILEMAP_RECHECK_REPLAY_KUNIT_TEST

#include <linux/delay.h>

enum filemap_recheck_replay_scale {
	RR_SMALL,
	RR_SEED,
};

struct filemap_recheck_replay_scenario {
	enum filemap_recheck_replay_scale scale;
	const char *desc;
	/* The VMA is mlocked (VM_LOCKED). */
	bool vm_locked;
	/* The data pages are COW'ed and the update clears their PTEs. */
	bool cow;
	/* Data pages, faulted in turn, and the faults taken on them. */
	unsigned long pages;
	unsigned long faults;
	unsigned int ra_pages;
	/*
	 * Bounds the kernel does not check (the harness does, for the
	 * build with the recheck): counts exact (want_) or at most (max_),
	 * as far as the row gives them, and whether the build without the
	 * recheck must fail them.
	 */
	unsigned long want_major_faults;
	unsigned long want_ptl_waits;
	unsigned long want_pages_read;
	unsigned long max_pages_read;
	bool reverted_fails;
};

static const struct filemap_recheck_replay_scenario filemap_recheck_replay_scenarios[] = {
#include "filemap_recheck_replay_scenarios.h"
};

static const void *
filemap_recheck_replay_gen(const void *prev, char *desc,
			   enum filemap_recheck_replay_scale scale)
{
	const struct filemap_recheck_replay_scenario *sc = prev;

	sc = sc ? sc + 1 : filemap_recheck_replay_scenarios;
	for (; sc < filemap_recheck_replay_scenarios +
		    ARRAY_SIZE(filemap_recheck_replay_scenarios); sc++) {
		if (sc->scale == scale) {
			strscpy(desc, sc->desc, KUNIT_PARAM_DESC_SIZE);
			return sc;
		}
	}
	return NULL;
}

static const void *
filemap_recheck_replay_small_params(struct kunit *test, const void *prev,
				    char *desc)
{
	return filemap_recheck_replay_gen(prev, desc, RR_SMALL);
}

static const void *
filemap_recheck_replay_seed_params(struct kunit *test, const void *prev,
				   char *desc)
{
	return filemap_recheck_replay_gen(prev, desc, RR_SEED);
}

struct filemap_recheck_replay_counts {
	unsigned long faults;
	unsigned long major_faults;
	unsigned long pages_read;
	unsigned long ptl_waits;
};

/*
 * The page of the @i-th data page: one page in two, at an odd virtual page
 * number, so that it shares its page table with the page before it.
 */
static pgoff_t filemap_recheck_replay_page(const struct filemap_test_map *map,
					   unsigned long i)
{
	return 2 * i + 1 + ((map->vma->vm_start >> PAGE_SHIFT) & 1);
}

/*
 * The anon pages the replay COWed, each held by a reference, as
 * get_user_pages() holds them: compaction and khugepaged leave a page
 * with an extra reference where it is, so that a fault of the replay
 * finds the same page, and the counts do not depend on when they run.
 */
struct filemap_recheck_replay_pins {
	unsigned long nr;
	struct page *pages[];
};

static void filemap_recheck_replay_unpin(void *data)
{
	struct filemap_recheck_replay_pins *pins = data;

	while (pins->nr)
		put_page(pins->pages[--pins->nr]);
}

/*
 * A write fault at page @index: an anon copy of the file's page, which
 * @pins holds.
 */
static void filemap_recheck_replay_cow(struct kunit *test,
				       struct filemap_test_map *map,
				       pgoff_t index,
				       struct filemap_recheck_replay_pins *pins)
{
	vm_fault_t ret = filemap_test_handle_fault(map, index, FAULT_FLAG_WRITE);
	struct page *page = NULL;
	long nr;

	KUNIT_ASSERT_FALSE(test, ret & VM_FAULT_ERROR);
	mmap_read_lock(map->mm);
	nr = get_user_pages_remote(map->mm, filemap_test_addr(map, index), 1,
				   0, &page, NULL);
	mmap_read_unlock(map->mm);
	if (nr == 1)
		pins->pages[pins->nr++] = page;
	KUNIT_ASSERT_EQ(test, 1, nr);
	KUNIT_ASSERT_TRUE(test, PageAnon(page));
}

/*
 * Unmap the @i-th data page and those the fault-around of its retry may
 * have mapped with it (within a fault-around window of it), with
 * zap_vma_range() under the mmap lock for read, as MADV_DONTNEED_LOCKED
 * does.
 */
static void filemap_recheck_replay_unmap(const struct filemap_recheck_replay_scenario *sc,
					 struct filemap_test_map *map,
					 unsigned long i)
{
	unsigned long first = i - min(i, FILEMAP_TEST_FAULT_AROUND_PAGES);
	unsigned long last = min(i + FILEMAP_TEST_FAULT_AROUND_PAGES,
				 sc->pages - 1);
	pgoff_t index;

	mmap_read_lock(map->mm);
	for (; first <= last; first++) {
		index = filemap_recheck_replay_page(map, first);
		zap_vma_range(map->vma, filemap_test_addr(map, index), PAGE_SIZE);
	}
	mmap_read_unlock(map->mm);
}

/*
 * A read fault at page @index while another CPU updates its PTE; returns
 * whether the fault waited for the PT lock the update held.
 */
static bool filemap_recheck_replay_fault(struct kunit *test,
					 const struct filemap_recheck_replay_scenario *sc,
					 struct filemap_test_map *map,
					 pgoff_t index)
{
	unsigned int flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE |
			     FAULT_FLAG_USER;
	struct filemap_test_race race = { .lock_only = !sc->cow };
	vm_fault_t ret = 0;
	int err;

	migrate_disable();
	err = filemap_test_race_start(map, &race, index);
	if (!err) {
		if (race.pmd)
			ret = filemap_test_handle_fault(map, index, flags);
		filemap_test_race_end(&race);
	}
	migrate_enable();
	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_ASSERT_NOT_NULL_MSG(test, race.pmd, "%s: no page table at page %lu",
				  sc->desc, index);
	if (ret & VM_FAULT_RETRY)
		ret = filemap_test_handle_fault(map, index, flags | FAULT_FLAG_TRIED);
	KUNIT_ASSERT_FALSE_MSG(test, ret & (VM_FAULT_ERROR | VM_FAULT_RETRY),
			       "%s: fault at page %lu returned %#x", sc->desc,
			       index, ret);
	return race.fault_waited;
}

/*
 * Evict the file's page cache, as memory pressure does; returns the pages
 * left. A folio compaction holds for the moment (locked, or isolated with
 * a reference) is skipped: drain the LRU batches and try again, a few
 * times.
 */
static unsigned long filemap_recheck_replay_evict(struct address_space *mapping)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		/* A folio in a per-CPU LRU batch holds a reference of the batch. */
		lru_add_drain_all();
		invalidate_mapping_pages(mapping, 0, -1);
		if (!mapping->nrpages)
			break;
		usleep_range(1000, 2000);
	}
	return mapping->nrpages;
}

/* Whether @pte maps a page, or did until migration took it to move it. */
static bool filemap_recheck_replay_mapped(pte_t pte)
{
	return pte_present(pte) || softleaf_is_migration(softleaf_from_pte(pte));
}

/* Replay the scenario once, on a new file in a new mapping. */
static struct filemap_recheck_replay_counts
filemap_recheck_replay_once(struct kunit *test,
			    const struct filemap_recheck_replay_scenario *sc)
{
	struct filemap_recheck_replay_counts c = { };
	struct filemap_test_file *ft = filemap_test_create(test, sc->ra_pages);
	struct filemap_recheck_replay_pins *pins;
	struct address_space *mapping = ft->file->f_mapping;
	/* The VMA's pages: a data page at every other page, one spare. */
	unsigned long nr_pages = 2 * sc->pages + 2;
	unsigned long maj_flt, i;
	struct filemap_test_map map;
	pte_t before, after;
	pgoff_t index;

	KUNIT_ASSERT_LE(test, nr_pages, FILEMAP_TEST_FILE_PAGES);
	map = filemap_test_mmap_at(test, ft, 0, 0, nr_pages,
				   PROT_READ | PROT_WRITE);
	pins = kunit_kzalloc(test, struct_size(pins, pages, nr_pages),
			     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pins);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  filemap_recheck_replay_unpin,
						  pins));
	for (i = 0, index = 0; index < nr_pages; index++) {
		bool data = i < sc->pages &&
			    index == filemap_recheck_replay_page(&map, i);

		i += data;
		if (!data || sc->cow)
			filemap_recheck_replay_cow(test, &map, index, pins);
	}
	if (sc->vm_locked)
		filemap_test_vma_flags(&map, VM_LOCKED);
	filemap_test_forget_reads(ft);
	/* The COW faults above counted misses: the replay starts from none. */
	filemap_test_set_mmap_miss(ft, 0);
	maj_flt = current->maj_flt;

	for (i = 0; i < sc->faults; i++) {
		index = filemap_recheck_replay_page(&map, i % sc->pages);
		KUNIT_ASSERT_EQ_MSG(test, 0UL, filemap_recheck_replay_evict(mapping),
				    "%s: fault %lu: the page cache not evicted",
				    sc->desc, i);
		before = __pte(0);
		if (sc->cow)
			KUNIT_ASSERT_TRUE(test, filemap_test_read_pte(&map, index, &before));

		c.ptl_waits += filemap_recheck_replay_fault(test, sc, &map, index);
		c.faults++;

		KUNIT_ASSERT_TRUE_MSG(test, filemap_test_read_pte(&map, index, &after) &&
				      filemap_recheck_replay_mapped(after),
				      "%s: fault %lu: page %lu not mapped after its fault",
				      sc->desc, i, index);
		if (sc->cow)
			KUNIT_ASSERT_EQ_MSG(test, pte_pfn(before), pte_pfn(after),
					    "%s: fault %lu: page %lu no longer maps its anon page",
					    sc->desc, i, index);
		else
			filemap_recheck_replay_unmap(sc, &map, i % sc->pages);
	}
	c.major_faults = current->maj_flt - maj_flt;
	c.pages_read = ft->nr_reads;
	return c;
}

static struct filemap_recheck_replay_counts
filemap_recheck_replay_and_report(struct kunit *test,
				  const struct filemap_recheck_replay_scenario *sc)
{
	struct filemap_recheck_replay_counts c;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs: boot with ncpus=2 (UML SMP)");
	c = filemap_recheck_replay_once(test, sc);
	kunit_info(test,
		   "replay: %s: faults=%lu major_faults=%lu pages_read=%lu ptl_waits=%lu\n",
		   sc->desc, c.faults, c.major_faults, c.pages_read, c.ptl_waits);

	KUNIT_EXPECT_LE(test, c.major_faults, c.faults);
	KUNIT_EXPECT_LE(test, c.ptl_waits, c.faults);
	/* A major fault reads at least the page it faults on. */
	KUNIT_EXPECT_GE(test, c.pages_read, c.major_faults);
	return c;
}

static void filemap_recheck_replay_test_small(struct kunit *test)
{
	const struct filemap_recheck_replay_scenario *sc = test->param_value;
	struct filemap_recheck_replay_counts first, again;

	first = filemap_recheck_replay_and_report(test, sc);

	/* The same faults on a new file: the same numbers. */
	again = filemap_recheck_replay_once(test, sc);
	KUNIT_EXPECT_EQ(test, first.major_faults, again.major_faults);
	KUNIT_EXPECT_EQ(test, first.pages_read, again.pages_read);
	KUNIT_EXPECT_EQ(test, first.ptl_waits, again.ptl_waits);
}

static void filemap_recheck_replay_test_seed(struct kunit *test)
{
	filemap_recheck_replay_and_report(test, test->param_value);
}

static struct kunit_case filemap_recheck_replay_cases[] = {
	KUNIT_CASE_PARAM_ATTR(filemap_recheck_replay_test_small,
			      filemap_recheck_replay_small_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite filemap_recheck_replay_suite = {
	.name = "mm_filemap_recheck_replay",
	.test_cases = filemap_recheck_replay_cases,
};

static struct kunit_case filemap_recheck_replay_seed_cases[] = {
	KUNIT_CASE_PARAM_ATTR(filemap_recheck_replay_test_seed,
			      filemap_recheck_replay_seed_params,
			      { .speed = KUNIT_SPEED_VERY_SLOW }),
	{}
};

static struct kunit_suite filemap_recheck_replay_seed_suite = {
	.name = "mm_filemap_recheck_replay_seed",
	.test_cases = filemap_recheck_replay_seed_cases,
};

kunit_test_suites(&filemap_recheck_replay_suite,
		  &filemap_recheck_replay_seed_suite);

#endif /* CONFIG_MM_FILEMAP_RECHECK_REPLAY_KUNIT_TEST */
