/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit replay of mmap access patterns through the real fault path of
 * mm/filemap.c, counting the I/O they cause.
 *
 * This file is included at the bottom of mm/filemap.c, after
 * filemap_kunit.h, whose test file, mapping and fault helpers it uses.
 *
 * Suites:
 *  - mm_filemap_replay: the small scenarios (a 256 MiB file), seconds;
 *  - mm_filemap_replay_seed: the proposal's setup (a 20 GiB file under the
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
 * ("# replay: ..."), which ./run_kunit.sh replay collects for four builds
 * (stock 6.12, P1 only, P2 only, P1 and P2) and holds against the bounds
 * the scenario table states. The suites check what holds on every build:
 * each touch is mapped at the end of its fault, the page cache holds
 * exactly the pages the test accounts for (nothing else evicts them), and,
 * at small scale, a second replay of the scenario gives the same numbers.
 */

#ifdef CONFIG_MM_FILEMAP_REPLAY_KUNIT_TEST

#include <linux/prandom.h>
#include <linux/vmalloc.h>
#include <linux/vmstat.h>

enum rp_scale {
	RP_SMALL,
	RP_SEED,
};

enum rp_order {
	RP_RANDOM,
	RP_STRIDE,
	RP_SEQUENTIAL,
};

struct rp_scenario {
	enum rp_scale scale;
	const char *desc;
	unsigned long file_pages;
	unsigned long cache_pages;
	unsigned int ra_pages;
	enum rp_order order;
	unsigned long stride;
	u64 seed;
	unsigned int touch_permille;
	/*
	 * The bound on the pages P1 and P2 together read against stock,
	 * which ./run_kunit.sh replay checks across builds: at least
	 * @saves times fewer, or within @same_pct per cent; 0: none.
	 */
	unsigned int saves;
	unsigned int same_pct;
};

static const struct rp_scenario rp_scenarios[] = {
#include "filemap_replay_scenarios.h"
};

/* The scenarios of one scale, as KUnit parameters. */
static const void *rp_gen_scale(const void *prev, char *desc,
				enum rp_scale scale)
{
	const struct rp_scenario *sc = prev ? prev : rp_scenarios - 1;

	while (++sc < rp_scenarios + ARRAY_SIZE(rp_scenarios)) {
		if (sc->scale == scale) {
			strscpy(desc, sc->desc, KUNIT_PARAM_DESC_SIZE);
			return sc;
		}
	}
	return NULL;
}

static const void *rp_small_params(const void *prev, char *desc)
{
	return rp_gen_scale(prev, desc, RP_SMALL);
}

static const void *rp_seed_params(const void *prev, char *desc)
{
	return rp_gen_scale(prev, desc, RP_SEED);
}

/* What a replay counts. */
struct rp_counts {
	unsigned long touches;
	unsigned long pages_read;
	unsigned long major_faults;
	unsigned long readaround_faults;
	unsigned long refaults;
	unsigned long refault_activations;
	unsigned int mmap_miss;
};

/* Marks a page that is not in the test's LRU (not cached). */
#define RP_NOT_CACHED	U32_MAX

struct rp_state {
	/* The file, its stub backing store and the pages it read. */
	struct ft_file ft;
	const struct rp_scenario *sc;
	/*
	 * The cached pages, least recently used first: a circular list
	 * threaded through lru_prev[] and lru_next[], indexed by page, with
	 * its head at index file_pages. A page not cached has
	 * lru_next[page] == RP_NOT_CACHED.
	 */
	u32 *lru_prev;
	u32 *lru_next;
	unsigned long cached;
	/* Pages read again while the test still had them cached. */
	unsigned long lost;
};

static bool rp_cached(const struct rp_state *rp, pgoff_t index)
{
	return rp->lru_next[index] != RP_NOT_CACHED;
}

static void rp_lru_del(struct rp_state *rp, pgoff_t index)
{
	u32 prev = rp->lru_prev[index], next = rp->lru_next[index];

	rp->lru_next[prev] = next;
	rp->lru_prev[next] = prev;
	rp->lru_next[index] = RP_NOT_CACHED;
	rp->cached--;
}

/* Make @index the most recently used page. */
static void rp_lru_use(struct rp_state *rp, pgoff_t index)
{
	u32 head = rp->sc->file_pages, last;

	if (rp_cached(rp, index))
		rp_lru_del(rp, index);
	last = rp->lru_prev[head];
	rp->lru_prev[index] = last;
	rp->lru_next[index] = head;
	rp->lru_next[last] = index;
	rp->lru_prev[head] = index;
	rp->cached++;
}

static pgoff_t rp_lru_oldest(const struct rp_state *rp)
{
	return rp->lru_next[rp->sc->file_pages];
}

/*
 * A page the stub backing store read is the most recently used. Called
 * with the folio locked, so it only counts: a page the test still had
 * cached was evicted behind its back, which the test reports later.
 */
static void rp_page_read(struct ft_file *ft, pgoff_t index)
{
	struct rp_state *rp = container_of(ft, struct rp_state, ft);

	if (rp_cached(rp, index))
		rp->lost++;
	rp_lru_use(rp, index);
}

/* How many pages the scenario touches. */
static unsigned long rp_touches(const struct rp_scenario *sc)
{
	return sc->file_pages * sc->touch_permille / 1000;
}

/* The page the @i-th touch of the scenario goes to. */
static pgoff_t rp_page(const struct rp_scenario *sc, const u32 *perm,
		       unsigned long i)
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

KUNIT_DEFINE_ACTION_WRAPPER(rp_kvfree, kvfree, const void *);

/* An array of @n elements of @size, freed when the test ends. */
static void *rp_kvmalloc(struct kunit *test, size_t n, size_t size)
{
	void *p = kvmalloc_array(n, size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, rp_kvfree, p));
	return p;
}

/*
 * The first @nr pages of a random order of distinct pages: Fisher-Yates
 * from the scenario's seed, drawn from the end of the array.
 */
static u32 *rp_random_pages(struct kunit *test, const struct rp_scenario *sc,
			    unsigned long nr)
{
	struct rnd_state rnd;
	unsigned long i, n = sc->file_pages;
	u32 *perm;

	perm = rp_kvmalloc(test, n, sizeof(*perm));
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
static unsigned long rp_node_stat(enum node_stat_item item)
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
static long rp_isolate(struct address_space *mapping, pgoff_t index,
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
static void rp_shrink(struct kunit *test, struct rp_state *rp,
		      struct address_space *mapping)
{
	const struct rp_scenario *sc = rp->sc;
	unsigned long isolated = 0, reclaimed;
	pgoff_t index = 0;
	LIST_HEAD(victims);
	long nr;

	if (rp->cached <= sc->cache_pages)
		return;
	lru_add_drain();
	while (rp->cached > sc->cache_pages) {
		index = rp_lru_oldest(rp);
		nr = rp_isolate(mapping, index, &victims);
		if (!nr)
			break;
		isolated += nr;
		while (nr--)
			rp_lru_del(rp, index++);
	}
	reclaimed = reclaim_pages(&victims);

	KUNIT_ASSERT_LE_MSG(test, rp->cached, sc->cache_pages,
			    "%s: page %lu could not be isolated for reclaim",
			    sc->desc, index);
	KUNIT_ASSERT_EQ_MSG(test, isolated, reclaimed,
			    "%s: pages reclaimed of those isolated", sc->desc);
}

/*
 * Touch page @index: nothing happens if a PTE maps it; otherwise a read
 * fault, retried with FAULT_FLAG_TRIED if it returns VM_FAULT_RETRY.
 */
static void rp_touch(struct kunit *test, struct rp_state *rp,
		     struct ft_map *map, pgoff_t index, struct rp_counts *c)
{
	unsigned int flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE |
			     FAULT_FLAG_USER;
	unsigned long addr = ft_addr(map, index);
	unsigned long read_before = rp->ft.nr_reads;
	vm_fault_t ret;

	if (!ft_pte_present(map, addr)) {
		ret = ft_handle_fault(map, index, flags);
		if (ret & VM_FAULT_RETRY)
			ret = ft_handle_fault(map, index,
					      flags | FAULT_FLAG_TRIED);
		KUNIT_ASSERT_FALSE_MSG(test, ret & (VM_FAULT_ERROR | VM_FAULT_RETRY),
				       "%s: touch %lu of page %lu: fault returned %#x",
				       rp->sc->desc, c->touches, index, ret);
		KUNIT_ASSERT_TRUE_MSG(test, ft_pte_present(map, addr),
				      "%s: touch %lu: page %lu not mapped after its fault",
				      rp->sc->desc, c->touches, index);
		if (rp->ft.nr_reads - read_before > 1)
			c->readaround_faults++;
	}
	KUNIT_ASSERT_TRUE_MSG(test, rp_cached(rp, index),
			      "%s: touch %lu: page %lu mapped but never read",
			      rp->sc->desc, c->touches, index);
	rp_lru_use(rp, index);
	c->touches++;
}

/* Replay the scenario once, on a new file in a new mapping. */
static struct rp_counts rp_replay(struct kunit *test,
				  const struct rp_scenario *sc, const u32 *perm)
{
	unsigned long nr = rp_touches(sc);
	unsigned long refaults = rp_node_stat(WORKINGSET_REFAULT_FILE);
	unsigned long activations = rp_node_stat(WORKINGSET_ACTIVATE_FILE);
	unsigned long maj_flt = current->maj_flt;
	struct rp_counts c = { };
	struct rp_state *rp;
	struct file *file;
	struct ft_map map;
	unsigned long i;

	rp = kunit_kzalloc(test, sizeof(*rp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rp);
	rp->sc = sc;
	rp->lru_prev = rp_kvmalloc(test, sc->file_pages + 1, sizeof(u32));
	rp->lru_next = rp_kvmalloc(test, sc->file_pages + 1, sizeof(u32));
	memset(rp->lru_next, 0xff, sc->file_pages * sizeof(u32));
	rp->lru_prev[sc->file_pages] = sc->file_pages;
	rp->lru_next[sc->file_pages] = sc->file_pages;
	rp->ft.on_read = rp_page_read;
	file = ft_new_file(test, &rp->ft, sc->file_pages, sc->ra_pages);
	rp->ft.file = file;
	map = ft_mmap_pages(test, file, 0, sc->file_pages, PROT_READ);
	map.ft = &rp->ft;

	for (i = 0; i < nr; i++) {
		rp_touch(test, rp, &map, rp_page(sc, perm, i), &c);
		rp_shrink(test, rp, file->f_mapping);
		KUNIT_ASSERT_EQ_MSG(test, 0UL, rp->lost,
				    "%s: touch %lu: pages evicted by something else than the test (too little memory?)",
				    sc->desc, i);
		KUNIT_ASSERT_EQ_MSG(test, rp->cached, file->f_mapping->nrpages,
				    "%s: touch %lu: pages cached", sc->desc, i);
	}
	c.pages_read = rp->ft.nr_reads;
	c.major_faults = current->maj_flt - maj_flt;
	c.refaults = rp_node_stat(WORKINGSET_REFAULT_FILE) - refaults;
	c.refault_activations = rp_node_stat(WORKINGSET_ACTIVATE_FILE) -
				activations;
	c.mmap_miss = READ_ONCE(file->f_ra.mmap_miss);
	/* Give the memory back before anything else runs. */
	truncate_inode_pages(file->f_mapping, 0);
	return c;
}

static struct rp_counts rp_replay_and_report(struct kunit *test,
					     const struct rp_scenario *sc,
					     const u32 *perm)
{
	struct rp_counts c = rp_replay(test, sc, perm);
	unsigned long touched_pages = min(c.touches, sc->file_pages);

	kunit_info(test,
		   "replay: %s: touches=%lu pages_read=%lu page_size=%lu major_faults=%lu readaround_faults=%lu refaults=%lu refault_activations=%lu mmap_miss=%u\n",
		   sc->desc, c.touches, c.pages_read, PAGE_SIZE, c.major_faults,
		   c.readaround_faults, c.refaults, c.refault_activations,
		   c.mmap_miss);

	/* Every touched page was read at least once. */
	KUNIT_EXPECT_GE_MSG(test, c.pages_read, touched_pages,
			    "%s: pages read", sc->desc);
	return c;
}

static const u32 *rp_order_pages(struct kunit *test,
				 const struct rp_scenario *sc)
{
	if (sc->order != RP_RANDOM)
		return NULL;
	return rp_random_pages(test, sc, rp_touches(sc));
}

static void filemap_replay_test(struct kunit *test)
{
	const struct rp_scenario *sc = test->param_value;
	const u32 *perm = rp_order_pages(test, sc);
	struct rp_counts first, again;

	first = rp_replay_and_report(test, sc, perm);

	/* The same pattern on a new file: the same numbers. */
	again = rp_replay(test, sc, perm);
	KUNIT_EXPECT_EQ_MSG(test, first.pages_read, again.pages_read,
			    "%s: pages read, replayed", sc->desc);
	KUNIT_EXPECT_EQ_MSG(test, first.major_faults, again.major_faults,
			    "%s: major faults, replayed", sc->desc);
	KUNIT_EXPECT_EQ_MSG(test, first.readaround_faults,
			    again.readaround_faults,
			    "%s: read-around faults, replayed", sc->desc);
	KUNIT_EXPECT_EQ_MSG(test, first.refaults, again.refaults,
			    "%s: refaults, replayed", sc->desc);
	KUNIT_EXPECT_EQ_MSG(test, first.mmap_miss, again.mmap_miss,
			    "%s: mmap_miss, replayed", sc->desc);
}

/* The seed scale replays once: a second replay would double minutes. */
static void filemap_replay_seed_test(struct kunit *test)
{
	const struct rp_scenario *sc = test->param_value;

	rp_replay_and_report(test, sc, rp_order_pages(test, sc));
}

static struct kunit_case rp_cases[] = {
	KUNIT_CASE_PARAM_ATTR(filemap_replay_test, rp_small_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite rp_suite = {
	.name = "mm_filemap_replay",
	.test_cases = rp_cases,
};

static struct kunit_case rp_seed_cases[] = {
	KUNIT_CASE_PARAM_ATTR(filemap_replay_seed_test, rp_seed_params,
			      { .speed = KUNIT_SPEED_VERY_SLOW }),
	{}
};

static struct kunit_suite rp_seed_suite = {
	.name = "mm_filemap_replay_seed",
	.test_cases = rp_seed_cases,
};

kunit_test_suites(&rp_suite, &rp_seed_suite);

#endif /* CONFIG_MM_FILEMAP_REPLAY_KUNIT_TEST */
