/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit replay of mmap access patterns through the real fault path of
 * mm/filemap.c, counting the I/O they cause.
 *
 * This file is included at the bottom of mm/filemap.c, after
 * filemap_kunit.h, whose file, mapping and fault helpers it uses.
 *
 * Suites:
 *  - mm_filemap_replay: the small scenarios (a 256 MiB file), seconds;
 *  - mm_filemap_replay_seed: a benchmark's scale (a 20 GiB file under the
 *    pressure of an 8 GiB guest, a 4 GiB file that fits), minutes, and a
 *    kernel with the memory to hold its page cache.
 *
 * Each scenario (mm/tests/filemap_replay_scenarios.h) maps a file whose
 * backing store is a stub that counts the pages it is asked to read, and
 * touches pages of it in a given order. A touch of a page no PTE maps is a
 * read fault, driven as the arch fault handler and do_read_fault() drive
 * it: fault-around through filemap_map_pages(); on a miss, filemap_fault()
 * with synchronous read-around, which drops the mmap lock and returns
 * VM_FAULT_RETRY; then the retry with FAULT_FLAG_TRIED.
 *
 * The page cache is bounded. The test keeps its own LRU of the file's
 * cached pages (a list threaded through two arrays indexed by page: O(1)
 * per page read, touched or evicted) and, after each touch, reclaims the
 * least recently used pages beyond the scenario's capacity through the
 * kernel's reclaim: isolated from the LRU and handed to reclaim_pages(),
 * which unmaps them and evicts them with shadow entries in
 * shrink_folio_list(), as MADV_PAGEOUT does. An active victim is marked
 * workingset first, as reclaim's deactivation does. A later read of an
 * evicted page is then a refault that workingset_refault() judges, and
 * folios it finds to be part of the working set come back PG_workingset,
 * which fault-around does not credit. The replay runs on the classic LRU:
 * the test picks the victims, so multi-gen LRU generations would never age
 * and every refault would look recent, which no real machine sees.
 *
 * The suites report, per scenario, the pages read, the page size, the major
 * faults, the faults that read around, the refaults and the refaults that
 * were activated, and the final mmap_miss, as KTAP diagnostics
 * ("# replay: ..."), to compare builds of the kernel with and without
 * changes to the fault path's accounting. The suites check what holds on
 * every build: each touch is mapped at the end of its fault, the page
 * cache holds exactly the pages the test accounts for (nothing else
 * evicts them), and, at small scale, a second replay of the scenario gives
 * the same numbers.
 */

#ifdef CONFIG_MM_FILEMAP_REPLAY_KUNIT_TEST

#include <linux/prandom.h>
#include <linux/vmalloc.h>
#include <linux/vmstat.h>

enum filemap_replay_scale {
	RP_SMALL,
	RP_SEED,
};

enum filemap_replay_order {
	RP_RANDOM,
	RP_STRIDE,
	RP_SEQUENTIAL,
};

struct filemap_replay_scenario {
	enum filemap_replay_scale scale;
	const char *desc;
	unsigned long file_pages;
	unsigned long cache_pages;
	unsigned int ra_pages;
	enum filemap_replay_order order;
	unsigned long stride;
	u64 seed;
	unsigned int touch_permille;
	/*
	 * A bound on the pages read across builds, which the kernel does
	 * not check: at least @saves times fewer than a build without the
	 * change the scenario measures, or within @same_pct per cent; 0:
	 * none.
	 */
	unsigned int saves;
	unsigned int same_pct;
};

static const struct filemap_replay_scenario filemap_replay_scenarios[] = {
#include "filemap_replay_scenarios.h"
};

/* The scenarios of one scale, as KUnit parameters. */
static const void *
filemap_replay_gen_scale(const void *prev, char *desc,
			 enum filemap_replay_scale scale)
{
	const struct filemap_replay_scenario *sc = prev ? prev : filemap_replay_scenarios - 1;

	while (++sc < filemap_replay_scenarios + ARRAY_SIZE(filemap_replay_scenarios)) {
		if (sc->scale == scale) {
			strscpy(desc, sc->desc, KUNIT_PARAM_DESC_SIZE);
			return sc;
		}
	}
	return NULL;
}

static const void *
filemap_replay_small_params(struct kunit *test, const void *prev, char *desc)
{
	return filemap_replay_gen_scale(prev, desc, RP_SMALL);
}

static const void *
filemap_replay_seed_params(struct kunit *test, const void *prev, char *desc)
{
	return filemap_replay_gen_scale(prev, desc, RP_SEED);
}

/* What a replay counts. */
struct filemap_replay_counts {
	unsigned long touches;
	unsigned long pages_read;
	unsigned long major_faults;
	unsigned long readaround_faults;
	unsigned long refaults;
	unsigned long refault_activations;
	unsigned int mmap_miss;
};

/* Marks a page that is not in the test's LRU (not cached). */
#define FILEMAP_REPLAY_NOT_CACHED	U32_MAX

struct filemap_replay_state {
	/* The file and the pages its stub backing store read. */
	struct filemap_test_file ft;
	const struct filemap_replay_scenario *sc;
	/*
	 * The cached pages, least recently used first: a circular list
	 * threaded through lru_prev[] and lru_next[], indexed by page, with
	 * its head at index file_pages. A page not cached has
	 * lru_next[page] == FILEMAP_REPLAY_NOT_CACHED.
	 */
	u32 *lru_prev;
	u32 *lru_next;
	unsigned long cached;
	/* Pages read again while the test still had them cached. */
	unsigned long lost;
};

static bool filemap_replay_cached(const struct filemap_replay_state *rp, pgoff_t index)
{
	return rp->lru_next[index] != FILEMAP_REPLAY_NOT_CACHED;
}

static void filemap_replay_lru_del(struct filemap_replay_state *rp, pgoff_t index)
{
	u32 prev = rp->lru_prev[index], next = rp->lru_next[index];

	rp->lru_next[prev] = next;
	rp->lru_prev[next] = prev;
	rp->lru_next[index] = FILEMAP_REPLAY_NOT_CACHED;
	rp->cached--;
}

/* Make @index the most recently used page. */
static void filemap_replay_lru_use(struct filemap_replay_state *rp, pgoff_t index)
{
	u32 head = rp->sc->file_pages, last;

	if (filemap_replay_cached(rp, index))
		filemap_replay_lru_del(rp, index);
	last = rp->lru_prev[head];
	rp->lru_prev[index] = last;
	rp->lru_next[index] = head;
	rp->lru_next[last] = index;
	rp->lru_prev[head] = index;
	rp->cached++;
}

static pgoff_t filemap_replay_lru_oldest(const struct filemap_replay_state *rp)
{
	return rp->lru_next[rp->sc->file_pages];
}

/*
 * The stub backing store: a page it reads is the most recently used. It
 * runs with the folio locked, so it only counts: a page the test still
 * had cached was evicted behind its back, which the test reports later.
 */
static void filemap_replay_read(struct folio *folio)
{
	struct filemap_replay_state *rp = folio->mapping->host->i_private;
	pgoff_t index;

	for (index = folio->index; index < folio_next_index(folio); index++) {
		if (filemap_replay_cached(rp, index))
			rp->lost++;
		filemap_replay_lru_use(rp, index);
		rp->ft.nr_reads++;
	}
	folio_mark_uptodate(folio);
	folio_unlock(folio);
}

static void filemap_replay_readahead(struct readahead_control *rac)
{
	struct folio *folio;

	while ((folio = readahead_folio(rac)))
		filemap_replay_read(folio);
}

static int filemap_replay_read_folio(struct file *file, struct folio *folio)
{
	filemap_replay_read(folio);
	return 0;
}

static const struct address_space_operations filemap_replay_aops = {
	.readahead	= filemap_replay_readahead,
	.read_folio	= filemap_replay_read_folio,
};

/*
 * A new file of the scenario's size on the stub backing store, mapped
 * as filemap_kunit.h's files are, with the scenario's read-around window
 * and nothing in the page cache; dropped (with its page cache) by an
 * action.
 */
static void filemap_replay_create(struct kunit *test,
				  struct filemap_replay_state *rp)
{
	rp->ft.file = filemap_test_new_file(test, "[mm_filemap_replay]",
					    &filemap_replay_aops, rp,
					    rp->sc->file_pages,
					    rp->sc->ra_pages);
}

/* How many pages the scenario touches. */
static unsigned long filemap_replay_touches(const struct filemap_replay_scenario *sc)
{
	return sc->file_pages * sc->touch_permille / 1000;
}

/* The page the @i-th touch of the scenario goes to. */
static pgoff_t filemap_replay_page(const struct filemap_replay_scenario *sc,
				   const u32 *perm, unsigned long i)
{
	switch (sc->order) {
	case RP_RANDOM:
		return perm[i];
	case RP_STRIDE:
		return (i * sc->stride) % sc->file_pages;
	case RP_SEQUENTIAL:
	default:
		return i % sc->file_pages;
	}
}

KUNIT_DEFINE_ACTION_WRAPPER(filemap_replay_kvfree, kvfree, const void *);

/* An array of @n elements of @size, freed when the test ends. */
static void *filemap_replay_kvmalloc(struct kunit *test, size_t n, size_t size)
{
	void *p = kvmalloc_array(n, size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, filemap_replay_kvfree, p));
	return p;
}

/*
 * The first @nr pages of a random order of distinct pages: Fisher-Yates
 * from the scenario's seed, drawn from the end of the array.
 */
static u32 *filemap_replay_random_pages(struct kunit *test,
					const struct filemap_replay_scenario *sc,
					unsigned long nr)
{
	struct rnd_state rnd;
	unsigned long i, n = sc->file_pages;
	u32 *perm;

	perm = filemap_replay_kvmalloc(test, n, sizeof(*perm));
	for (i = 0; i < n; i++)
		perm[i] = i;
	prandom_seed_state(&rnd, sc->seed);
	for (i = 0; i < nr && i < n - 1; i++)
		swap(perm[i], perm[i + prandom_u32_state(&rnd) % (n - i)]);
	return perm;
}

/*
 * A node counter summed exactly over the CPUs. The replay's file is the
 * only file that refaults meanwhile: built-in KUnit tests run before any
 * user space exists, and the replay runs on its own.
 */
static unsigned long filemap_replay_node_stat(enum node_stat_item item)
{
	long val = 0;
	int nid, cpu;

	for_each_online_node(nid) {
		struct pglist_data *pgdat = NODE_DATA(nid);

		val += atomic_long_read(&pgdat->vm_stat[item]);
		for_each_online_cpu(cpu)
			val += per_cpu_ptr(pgdat->per_cpu_nodestats,
					   cpu)->vm_node_stat_diff[item];
	}
	return max(val, 0L);
}

/*
 * Take the folio caching @index off the LRU, for reclaim, as
 * MADV_PAGEOUT does (madvise_cold_or_pageout_pte_range()): an active
 * folio is marked workingset, as reclaim marks the folios it deactivates
 * (shrink_active_list()), so that its shadow entry says so. Returns the
 * pages isolated, 0 if the folio is not cached or not on the LRU.
 */
static long filemap_replay_isolate(struct address_space *mapping, pgoff_t index,
				   struct list_head *victims)
{
	struct folio *folio;
	long nr = 0;

	folio = filemap_get_folio(mapping, index);
	if (IS_ERR(folio))
		return 0;
	if (folio_test_active(folio))
		folio_set_workingset(folio);
	if (!folio_isolate_lru(folio)) {
		/* Still in another CPU's LRU batch. */
		lru_add_drain_all();
		if (!folio_isolate_lru(folio))
			goto out;
	}
	list_add_tail(&folio->lru, victims);
	nr = folio_nr_pages(folio);
out:
	folio_put(folio);
	return nr;
}

/*
 * Reclaim the least recently used pages beyond the capacity, through
 * reclaim_pages(), which unmaps them and leaves shadow entries.
 */
static void filemap_replay_shrink(struct kunit *test,
				  struct filemap_replay_state *rp,
				  struct address_space *mapping)
{
	const struct filemap_replay_scenario *sc = rp->sc;
	unsigned long isolated = 0, reclaimed;
	pgoff_t index = 0;
	LIST_HEAD(victims);
	long nr;

	if (rp->cached <= sc->cache_pages)
		return;
	lru_add_drain();
	while (rp->cached > sc->cache_pages) {
		index = filemap_replay_lru_oldest(rp);
		nr = filemap_replay_isolate(mapping, index, &victims);
		if (!nr)
			break;
		isolated += nr;
		while (nr--)
			filemap_replay_lru_del(rp, index++);
	}
	reclaimed = reclaim_pages(&victims);

	KUNIT_ASSERT_LE_MSG(test, rp->cached, sc->cache_pages,
			    "%s: page %lu could not be isolated for reclaim",
			    sc->desc, index);
	KUNIT_ASSERT_EQ(test, isolated, reclaimed);
}

/*
 * Touch page @index: nothing happens if a PTE maps it; otherwise a read
 * fault, retried with FAULT_FLAG_TRIED if it returns VM_FAULT_RETRY.
 */
static void filemap_replay_touch(struct kunit *test,
				 struct filemap_replay_state *rp,
				 struct filemap_test_map *map, pgoff_t index,
				 struct filemap_replay_counts *c)
{
	unsigned int flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE |
			     FAULT_FLAG_USER;
	unsigned long read_before = rp->ft.nr_reads;
	vm_fault_t ret;

	if (!filemap_test_pte_present(map, index)) {
		ret = filemap_test_handle_fault(map, index, flags);
		if (ret & VM_FAULT_RETRY)
			ret = filemap_test_handle_fault(map, index,
							flags | FAULT_FLAG_TRIED);
		KUNIT_ASSERT_FALSE_MSG(test, ret & (VM_FAULT_ERROR | VM_FAULT_RETRY),
				       "%s: touch %lu of page %lu: fault returned %#x",
				       rp->sc->desc, c->touches, index, ret);
		KUNIT_ASSERT_TRUE_MSG(test, filemap_test_pte_present(map, index),
				      "%s: touch %lu: page %lu not mapped after its fault",
				      rp->sc->desc, c->touches, index);
		if (rp->ft.nr_reads - read_before > 1)
			c->readaround_faults++;
	}
	KUNIT_ASSERT_TRUE_MSG(test, filemap_replay_cached(rp, index),
			      "%s: touch %lu: page %lu mapped but never read",
			      rp->sc->desc, c->touches, index);
	filemap_replay_lru_use(rp, index);
	c->touches++;
}

/* Replay the scenario once, on a new file in a new mapping. */
static struct filemap_replay_counts
filemap_replay_once(struct kunit *test,
		    const struct filemap_replay_scenario *sc, const u32 *perm)
{
	unsigned long nr = filemap_replay_touches(sc);
	unsigned long refaults = filemap_replay_node_stat(WORKINGSET_REFAULT_FILE);
	unsigned long activations = filemap_replay_node_stat(WORKINGSET_ACTIVATE_FILE);
	unsigned long maj_flt = current->maj_flt;
	struct filemap_replay_counts c = { };
	struct filemap_replay_state *rp;
	struct file *file;
	struct filemap_test_map map;
	unsigned long i;

	rp = kunit_kzalloc(test, sizeof(*rp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rp);
	rp->sc = sc;
	rp->lru_prev = filemap_replay_kvmalloc(test, sc->file_pages + 1, sizeof(u32));
	rp->lru_next = filemap_replay_kvmalloc(test, sc->file_pages + 1, sizeof(u32));
	memset(rp->lru_next, 0xff, sc->file_pages * sizeof(u32));
	rp->lru_prev[sc->file_pages] = sc->file_pages;
	rp->lru_next[sc->file_pages] = sc->file_pages;
	filemap_replay_create(test, rp);
	file = rp->ft.file;
	map = filemap_test_mmap_at(test, &rp->ft, 0, 0, sc->file_pages,
				   PROT_READ);

	for (i = 0; i < nr; i++) {
		filemap_replay_touch(test, rp, &map, filemap_replay_page(sc, perm, i), &c);
		filemap_replay_shrink(test, rp, file->f_mapping);
		KUNIT_ASSERT_EQ_MSG(test, 0UL, rp->lost,
				    "%s: touch %lu: pages evicted by something else than the test (too little memory?)",
				    sc->desc, i);
		KUNIT_ASSERT_EQ_MSG(test, rp->cached, file->f_mapping->nrpages,
				    "%s: touch %lu: pages cached", sc->desc, i);
	}
	c.pages_read = rp->ft.nr_reads;
	c.major_faults = current->maj_flt - maj_flt;
	c.refaults = filemap_replay_node_stat(WORKINGSET_REFAULT_FILE) - refaults;
	c.refault_activations = filemap_replay_node_stat(WORKINGSET_ACTIVATE_FILE) -
				activations;
	c.mmap_miss = READ_ONCE(file->f_ra.mmap_miss);
	/* Give the memory back before anything else runs. */
	truncate_inode_pages(file->f_mapping, 0);
	return c;
}

static struct filemap_replay_counts
filemap_replay_and_report(struct kunit *test,
			  const struct filemap_replay_scenario *sc,
			  const u32 *perm)
{
	struct filemap_replay_counts c = filemap_replay_once(test, sc, perm);
	unsigned long touched_pages = min(c.touches, sc->file_pages);

	kunit_info(test,
		   "replay: %s: touches=%lu pages_read=%lu page_size=%lu major_faults=%lu readaround_faults=%lu refaults=%lu refault_activations=%lu mmap_miss=%u\n",
		   sc->desc, c.touches, c.pages_read, PAGE_SIZE, c.major_faults,
		   c.readaround_faults, c.refaults, c.refault_activations,
		   c.mmap_miss);

	/* Every touched page was read at least once. */
	KUNIT_EXPECT_GE(test, c.pages_read, touched_pages);
	return c;
}

static const u32 *
filemap_replay_order_pages(struct kunit *test,
			   const struct filemap_replay_scenario *sc)
{
	if (sc->order != RP_RANDOM)
		return NULL;
	return filemap_replay_random_pages(test, sc, filemap_replay_touches(sc));
}

static void filemap_replay_test_small(struct kunit *test)
{
	const struct filemap_replay_scenario *sc = test->param_value;
	const u32 *perm = filemap_replay_order_pages(test, sc);
	struct filemap_replay_counts first, again;

	first = filemap_replay_and_report(test, sc, perm);

	/* The same pattern on a new file: the same numbers. */
	again = filemap_replay_once(test, sc, perm);
	KUNIT_EXPECT_EQ(test, first.pages_read, again.pages_read);
	KUNIT_EXPECT_EQ(test, first.major_faults, again.major_faults);
	KUNIT_EXPECT_EQ(test, first.readaround_faults, again.readaround_faults);
	KUNIT_EXPECT_EQ(test, first.refaults, again.refaults);
	KUNIT_EXPECT_EQ(test, first.mmap_miss, again.mmap_miss);
}

/* The seed scale replays once: a second replay would double minutes. */
static void filemap_replay_test_seed(struct kunit *test)
{
	const struct filemap_replay_scenario *sc = test->param_value;

	filemap_replay_and_report(test, sc, filemap_replay_order_pages(test, sc));
}

static struct kunit_case filemap_replay_cases[] = {
	KUNIT_CASE_PARAM_ATTR(filemap_replay_test_small,
			      filemap_replay_small_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite filemap_replay_suite = {
	.name = "mm_filemap_replay",
	.test_cases = filemap_replay_cases,
};

static struct kunit_case filemap_replay_seed_cases[] = {
	KUNIT_CASE_PARAM_ATTR(filemap_replay_test_seed, filemap_replay_seed_params,
			      { .speed = KUNIT_SPEED_VERY_SLOW }),
	{}
};

static struct kunit_suite filemap_replay_seed_suite = {
	.name = "mm_filemap_replay_seed",
	.test_cases = filemap_replay_seed_cases,
};

kunit_test_suites(&filemap_replay_suite, &filemap_replay_seed_suite);

#endif /* CONFIG_MM_FILEMAP_REPLAY_KUNIT_TEST */
