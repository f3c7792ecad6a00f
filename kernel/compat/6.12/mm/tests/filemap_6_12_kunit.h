/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of 6.12's mmap readahead where it works otherwise than 7.3's
 * by design, which the 7.3 suites in filemap_kunit.h expect and 6.12 fails
 * (kernel/compat/6.12/expected):
 *
 *  - read-around on a mapping that takes large folios asks
 *    page_cache_ra_order() for order 0, which reads two orders up: the
 *    window comes in order-2 folios (7.3 reads order 0);
 *  - a VM_HUGEPAGE miss reads PMD-sized units before mmap_miss is counted
 *    or its threshold looked at, also on a mapping that takes no large
 *    folios, in order-0 folios then (7.3 counts the miss, stops above
 *    MMAP_LOTSAMISS and needs large folios);
 *  - a hit on a PG_readahead folio without a readahead window reads
 *    ra_pages pages from the first page not cached (7.3 trims them to the
 *    folio order it ramps to).
 *
 * Part of the harness's 6.12 port only (kernel/compat/6.12), never sent
 * upstream: the port's patch (0005a) includes it at the end of
 * filemap_kunit.h, whose file, mapping and fault helpers it uses.
 */

#ifndef MM_TESTS_FILEMAP_6_12_KUNIT_H
#define MM_TESTS_FILEMAP_6_12_KUNIT_H

/*
 * Read-around at page 1000 with a 32-page window on a mapping that takes
 * large folios: [984, 1016), 984 aligned to 4 pages, in folios of order 2
 * (0 plus the two of page_cache_ra_order()'s ramp), each at its aligned
 * index. 6.12 keeps no order of the last readahead.
 */
static const struct filemap_test_large_ra_case filemap_6_12_test_large_ra_cases[] = {
	{
		.desc = "read-around: order-2 folios",
		.order = 2,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_6_12_test_large_ra,
		       filemap_6_12_test_large_ra_cases, desc);

struct filemap_6_12_test_huge_case {
	const char *desc;
	vm_flags_t vm_flags;
	unsigned int ra_pages;
	bool large_folios;
	unsigned short miss;
	/* The fault: at page @offset of PMD-sized unit @unit of the file. */
	pgoff_t unit;
	pgoff_t offset;
	/* The units read from the fault's unit's start: 2, 1 if VM_RAND_READ. */
	unsigned long units;
};

/*
 * A VM_HUGEPAGE miss reads from the PMD-aligned index: two PMD-sized units
 * unless VM_RAND_READ, the last one async (its first page PG_readahead),
 * whatever ra_pages and mmap_miss are, and leaves mmap_miss as it was. On
 * a mapping that takes large folios each unit is one folio; on one that
 * takes none, page_cache_ra_order() falls back to order-0 pages.
 */
static const struct filemap_6_12_test_huge_case filemap_6_12_test_huge_cases[] = {
	{
		.desc = "fault at a unit's start: two units, mmap_miss left",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.large_folios = true,
		.miss = 0,
		.unit = 2,
		.offset = 0,
		.units = 2,
	},
	{
		.desc = "fault inside a unit: from its start",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.large_folios = true,
		.miss = 5,
		.unit = 2,
		.offset = 20,
		.units = 2,
	},
	{
		.desc = "VM_RAND_READ: one unit",
		.vm_flags = VM_RAND_READ,
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.large_folios = true,
		.miss = 5,
		.unit = 2,
		.offset = 20,
		.units = 1,
	},
	{
		.desc = "ra_pages 0: still two units",
		.ra_pages = 0,
		.large_folios = true,
		.miss = 5,
		.unit = 2,
		.offset = 20,
		.units = 2,
	},
	{
		.desc = "mmap_miss past the threshold: still read, and left",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.large_folios = true,
		.miss = MMAP_LOTSAMISS * 5,
		.unit = 2,
		.offset = 20,
		.units = 2,
	},
	{
		.desc = "no large folios: two units of order-0 pages",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.miss = 5,
		.unit = 2,
		.offset = 20,
		.units = 2,
	},
	{
		.desc = "no large folios, past the threshold: still read",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.miss = MMAP_LOTSAMISS * 5,
		.unit = 2,
		.offset = 20,
		.units = 2,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_6_12_test_huge, filemap_6_12_test_huge_cases,
		       desc);

static void filemap_6_12_test_hugepage(struct kunit *test)
{
	const struct filemap_6_12_test_huge_case *c = test->param_value;
	pgoff_t start = c->unit * FILEMAP_TEST_PMD_PAGES;
	pgoff_t async = start + (c->units - 1) * FILEMAP_TEST_PMD_PAGES;
	struct filemap_test_file *ft;
	struct filemap_test_map map;
	struct folio *folio;
	pgoff_t index;

	/* 6.12 takes the VM_HUGEPAGE path only for a PMD the cache holds. */
	filemap_test_need_pmd_folio(test);
	ft = filemap_test_create(test, c->ra_pages);
	if (c->large_folios)
		mapping_set_large_folios(ft->file->f_mapping);
	map = filemap_test_mmap_file(test, ft, PROT_READ);
	filemap_test_vma_flags(&map, VM_HUGEPAGE | c->vm_flags);
	filemap_test_set_mmap_miss(ft, c->miss);

	KUNIT_EXPECT_TRUE(test, filemap_test_sync_ra(&map, start + c->offset,
						     FILEMAP_TEST_FAULT_FIRST));

	KUNIT_EXPECT_EQ(test, c->miss, filemap_test_mmap_miss(ft));
	filemap_test_expect_reads(test, ft, start,
				  c->units * FILEMAP_TEST_PMD_PAGES, c->desc);
	for (index = start; index <= async; index += FILEMAP_TEST_PMD_PAGES) {
		folio = filemap_get_folio(ft->file->f_mapping, index);
		KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio), "page %lu cached",
				       index);
		KUNIT_EXPECT_EQ(test, c->large_folios ?
				(unsigned int)FILEMAP_TEST_PMD_ORDER : 0U,
				folio_order(folio));
		KUNIT_EXPECT_EQ(test, index == async,
				folio_test_readahead(folio));
		folio_put(folio);
	}
}

/*
 * A hit at page 1000 on a PG_readahead folio with no window in f_ra: the
 * pages from the first one not cached (1001) are the old async part, one,
 * plus the 32 asked for, which get_next_ra_size() caps at ra_pages: 32
 * pages from 1001, in order-0 folios, all of them async.
 */
static const struct filemap_test_async_case filemap_6_12_test_async_cases[] = {
	{
		.desc = "readahead mark without a window: ra_pages ahead",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1000,
		.readahead_mark = true,
		.miss_before = 5,
		.miss_after = 4,
		.read_start = 1001,
		.nr_read = FILEMAP_TEST_RA_PAGES,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_6_12_test_async, filemap_6_12_test_async_cases,
		       desc);

static struct kunit_case filemap_6_12_test_cases[] = {
	KUNIT_CASE_PARAM(filemap_test_sync_readahead_large_folio,
			 filemap_6_12_test_large_ra_gen_params),
	KUNIT_CASE_PARAM(filemap_6_12_test_hugepage,
			 filemap_6_12_test_huge_gen_params),
	KUNIT_CASE_PARAM(filemap_test_async_readahead,
			 filemap_6_12_test_async_gen_params),
	{}
};

static struct kunit_suite filemap_6_12_test_suite = {
	.name = "mm_filemap_6_12",
	.test_cases = filemap_6_12_test_cases,
};

kunit_test_suites(&filemap_6_12_test_suite);

#endif /* MM_TESTS_FILEMAP_6_12_KUNIT_H */
