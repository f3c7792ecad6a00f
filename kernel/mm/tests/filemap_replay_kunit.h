/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit replay of mmap access patterns through the real fault path of
 * mm/filemap.c, counting the I/O they cause.
 *
 * This file is included at the bottom of mm/filemap.c, after
 * filemap_kunit.h, whose test file, mapping and fault helpers it uses.
 *
 * Suite:
 *  - mm_filemap_replay: the pages read, major faults and read-around
 *    faults of each scenario, on the build at hand (stock or patched).
 *
 * Each scenario (mm/tests/filemap_replay_scenarios.h) maps a file whose
 * backing store is a stub that counts the pages it is asked to read, and
 * touches pages of it in a given order. A touch of a page no PTE maps is a
 * read fault, driven as the arch fault handler and do_read_fault() drive
 * it: fault-around through filemap_map_pages(); on a miss, filemap_fault()
 * with synchronous read-around, which drops the mmap lock and returns
 * VM_FAULT_RETRY; then the retry with FAULT_FLAG_TRIED. The page cache is
 * bounded: after each touch the test evicts the least recently used pages
 * beyond the scenario's capacity (unmapping them first), as memory pressure
 * would.
 *
 * The suite reports, per scenario, the pages read, the major faults, the
 * faults that read around and the final mmap_miss, as KTAP diagnostics
 * ("# replay: ..."), which ./run_kunit.sh replay collects for four builds
 * (stock 6.12, P1 only, P2 only, P1 and P2). It checks what holds on every
 * build: each touch is mapped at the end of its fault, the cache stays
 * within its capacity, and a second replay of the scenario gives the same
 * numbers.
 */

#ifdef CONFIG_MM_FILEMAP_REPLAY_KUNIT_TEST

#include <linux/prandom.h>
#include <linux/vmalloc.h>

enum rp_order {
	RP_RANDOM,
	RP_STRIDE,
	RP_SEQUENTIAL,
};

struct rp_scenario {
	const char *desc;
	unsigned long file_pages;
	unsigned long cache_pages;
	unsigned int ra_pages;
	enum rp_order order;
	unsigned long stride;
	u64 seed;
	unsigned int touch_permille;
};

static const struct rp_scenario rp_scenarios[] = {
#define REPLAY_SCENARIO(_desc, _file, _cache, _ra, _order, _stride, _seed, _pm) \
	{ .desc = _desc, .file_pages = _file, .cache_pages = _cache,	\
	  .ra_pages = _ra, .order = _order, .stride = _stride,		\
	  .seed = _seed, .touch_permille = _pm },
#include "filemap_replay_scenarios.h"
#undef REPLAY_SCENARIO
};

KUNIT_ARRAY_PARAM_DESC(rp, rp_scenarios, desc);

/* What a replay counts. */
struct rp_counts {
	unsigned long touches;
	unsigned long pages_read;
	unsigned long major_faults;
	unsigned long readaround_faults;
	unsigned int mmap_miss;
};

struct rp_state {
	const struct rp_scenario *sc;
	/* For each page: when it was last used (read or touched); 0: not cached. */
	unsigned long *last_use;
	unsigned long clock;
	unsigned long cached;
	unsigned long pages_read;
};

/* The stub backing store: counts pages read; a read page is a used page. */
static void rp_read(struct folio *folio)
{
	struct rp_state *rp = folio->mapping->host->i_private;
	long i;

	for (i = 0; i < folio_nr_pages(folio); i++) {
		rp->last_use[folio->index + i] = rp->clock;
		rp->cached++;
	}
	rp->pages_read += folio_nr_pages(folio);
	folio_mark_uptodate(folio);
	folio_unlock(folio);
}

static void rp_readahead(struct readahead_control *rac)
{
	struct folio *folio;

	while ((folio = readahead_folio(rac)))
		rp_read(folio);
}

static int rp_read_folio(struct file *file, struct folio *folio)
{
	rp_read(folio);
	return 0;
}

static const struct address_space_operations rp_aops = {
	.readahead	= rp_readahead,
	.read_folio	= rp_read_folio,
};

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

/* A zeroed array of @n elements of @size, freed when the test ends. */
static void *rp_kvcalloc(struct kunit *test, size_t n, size_t size)
{
	void *p = kvcalloc(n, size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, rp_kvfree, p));
	return p;
}

/* A random order of distinct pages: Fisher-Yates from the scenario's seed. */
static u32 *rp_random_pages(struct kunit *test, const struct rp_scenario *sc)
{
	struct rnd_state rnd;
	unsigned long i;
	u32 *perm;

	perm = rp_kvcalloc(test, sc->file_pages, sizeof(*perm));
	for (i = 0; i < sc->file_pages; i++)
		perm[i] = i;
	prandom_seed_state(&rnd, sc->seed);
	for (i = sc->file_pages - 1; i > 0; i--)
		swap(perm[i], perm[prandom_u32_state(&rnd) % (i + 1)]);
	return perm;
}

/* Evict the page at @index: unmap it, then take it out of the page cache. */
static void rp_evict(struct kunit *test, struct rp_state *rp,
		     struct address_space *mapping, pgoff_t index)
{
	struct folio *folio;
	long evicted;

	folio = filemap_lock_folio(mapping, index);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio),
			       "%s: page %lu is not in the page cache",
			       rp->sc->desc, index);
	if (folio_mapped(folio))
		unmap_mapping_folio(folio);
	evicted = mapping_evict_folio(mapping, folio);
	folio_unlock(folio);
	folio_put(folio);
	KUNIT_ASSERT_EQ_MSG(test, 1L, evicted, "%s: evicting page %lu",
			    rp->sc->desc, index);
	rp->last_use[index] = 0;
	rp->cached--;
}

/* Evict least recently used pages (lowest index first) down to capacity. */
static void rp_shrink(struct kunit *test, struct rp_state *rp,
		      struct address_space *mapping)
{
	const struct rp_scenario *sc = rp->sc;
	unsigned long oldest, i;

	if (rp->cached <= sc->cache_pages)
		return;
	/* Pages still in a per-CPU LRU batch hold a reference. */
	lru_add_drain_all();
	while (rp->cached > sc->cache_pages) {
		oldest = ULONG_MAX;
		for (i = 0; i < sc->file_pages; i++)
			if (rp->last_use[i] && rp->last_use[i] < oldest)
				oldest = rp->last_use[i];
		for (i = 0; i < sc->file_pages && rp->cached > sc->cache_pages; i++)
			if (rp->last_use[i] == oldest)
				rp_evict(test, rp, mapping, i);
	}
	KUNIT_ASSERT_EQ_MSG(test, rp->cached, mapping->nrpages,
			    "%s: pages cached", sc->desc);
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
	unsigned long read_before = rp->pages_read;
	vm_fault_t ret;

	rp->clock++;
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
		if (rp->pages_read - read_before > 1)
			c->readaround_faults++;
	}
	rp->last_use[index] = rp->clock;
	c->touches++;
}

/* Replay the scenario once, on a new file in a new mapping. */
static struct rp_counts rp_replay(struct kunit *test,
				  const struct rp_scenario *sc, const u32 *perm)
{
	unsigned long nr = sc->file_pages * sc->touch_permille / 1000;
	unsigned long maj_flt = current->maj_flt;
	struct rp_counts c = { };
	struct rp_state *rp;
	struct file *file;
	struct ft_map map;
	unsigned long i;

	rp = kunit_kzalloc(test, sizeof(*rp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rp);
	rp->sc = sc;
	rp->last_use = rp_kvcalloc(test, sc->file_pages, sizeof(*rp->last_use));
	file = ft_new_file(test, &rp_aops, rp, sc->file_pages, sc->ra_pages);
	map = ft_mmap_pages(test, file, sc->file_pages, PROT_READ);

	for (i = 0; i < nr; i++) {
		rp_touch(test, rp, &map, rp_page(sc, perm, i), &c);
		rp_shrink(test, rp, file->f_mapping);
	}
	c.pages_read = rp->pages_read;
	c.major_faults = current->maj_flt - maj_flt;
	c.mmap_miss = READ_ONCE(file->f_ra.mmap_miss);
	return c;
}

static void filemap_replay_test(struct kunit *test)
{
	const struct rp_scenario *sc = test->param_value;
	struct rp_counts first, again;
	u32 *perm = NULL;

	if (sc->order == RP_RANDOM)
		perm = rp_random_pages(test, sc);
	first = rp_replay(test, sc, perm);
	kunit_info(test,
		   "replay: %s: touches=%lu pages_read=%lu major_faults=%lu readaround_faults=%lu mmap_miss=%u\n",
		   sc->desc, first.touches, first.pages_read, first.major_faults,
		   first.readaround_faults, first.mmap_miss);

	/* Every touched page was read at least once. */
	KUNIT_EXPECT_GE_MSG(test, first.pages_read,
			    min(first.touches, sc->file_pages),
			    "%s: pages read", sc->desc);

	/* The same pattern on a new file: the same numbers. */
	again = rp_replay(test, sc, perm);
	KUNIT_EXPECT_EQ_MSG(test, first.pages_read, again.pages_read,
			    "%s: pages read, replayed", sc->desc);
	KUNIT_EXPECT_EQ_MSG(test, first.major_faults, again.major_faults,
			    "%s: major faults, replayed", sc->desc);
	KUNIT_EXPECT_EQ_MSG(test, first.readaround_faults,
			    again.readaround_faults,
			    "%s: read-around faults, replayed", sc->desc);
	KUNIT_EXPECT_EQ_MSG(test, first.mmap_miss, again.mmap_miss,
			    "%s: mmap_miss, replayed", sc->desc);
}

static struct kunit_case rp_cases[] = {
	KUNIT_CASE_PARAM_ATTR(filemap_replay_test, rp_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite rp_suite = {
	.name = "mm_filemap_replay",
	.test_cases = rp_cases,
};

kunit_test_suite(rp_suite);

#endif /* CONFIG_MM_FILEMAP_REPLAY_KUNIT_TEST */
