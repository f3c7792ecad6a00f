/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for mmap fault accounting in mm/filemap.c.
 *
 * This file is included at the bottom of mm/filemap.c so that the tests can
 * call its static functions.
 *
 * The file under test is a test-owned anonymous inode whose
 * address_space_operations are a stub backing store: it records which pages
 * it is asked to read and completes every read at once, with no I/O. The
 * tests map that file into an mm of their own with kunit_vm_mmap(), so the
 * VMAs, page tables and faults are real.
 *
 * Suites:
 *  - mm_filemap_mmap_miss: file->f_ra.mmap_miss, the per-file score of mmap
 *    page-cache misses that decides whether a major fault reads around;
 *  - mm_filemap_fault_around: the project's proposal to credit fault-around
 *    hits only for the faulting page (P1) and not on a retry (P2);
 *  - mm_filemap_pte_recheck: the PTE recheck before a major fault on
 *    mlocked VMAs.
 */

#ifdef CONFIG_MM_FILEMAP_KUNIT_TEST

#include <kunit/test.h>
#include <linux/anon_inodes.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/pgtable.h>
#include <linux/sched/mm.h>
#include <linux/swapops.h>

#include "mm_kunit.h"

/* The test file: 4096 pages (16 MiB with 4 KiB pages). */
#define FT_FILE_PAGES		4096UL
/* The read-around window most tests use. */
#define FT_RA_PAGES		32U
#define FT_MAX_READS		FT_FILE_PAGES
/* The flags of a first try from the arch fault handler: I/O drops the lock. */
#define FT_FAULT_FIRST		(FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE)

struct ft_file {
	struct file *file;
	/* Pages the backing store was asked to read, in order. */
	pgoff_t reads[FT_MAX_READS];
	unsigned long nr_reads;
	/*
	 * If set, told of each page read, with the folio locked (the
	 * replay's page-cache accounting).
	 */
	void (*on_read)(struct ft_file *ft, pgoff_t index);
};

/* -------------------------------------------------------------------------
 * The stub backing store
 */

static void ft_record_read(struct folio *folio)
{
	struct ft_file *ft = folio->mapping->host->i_private;
	long i;

	for (i = 0; i < folio_nr_pages(folio); i++) {
		if (ft->nr_reads < FT_MAX_READS)
			ft->reads[ft->nr_reads] = folio->index + i;
		ft->nr_reads++;
		if (ft->on_read)
			ft->on_read(ft, folio->index + i);
	}
	folio_mark_uptodate(folio);
	folio_unlock(folio);
}

static void ft_readahead(struct readahead_control *rac)
{
	struct folio *folio;

	while ((folio = readahead_folio(rac)))
		ft_record_read(folio);
}

static int ft_read_folio(struct file *file, struct folio *folio)
{
	ft_record_read(folio);
	return 0;
}

static const struct address_space_operations ft_aops = {
	.readahead	= ft_readahead,
	.read_folio	= ft_read_folio,
};

static const struct vm_operations_struct ft_vm_ops = {
	.fault		= filemap_fault,
	.map_pages	= filemap_map_pages,
};

static int ft_mmap(struct file *file, struct vm_area_struct *vma)
{
	vma->vm_ops = &ft_vm_ops;
	return 0;
}

static const struct file_operations ft_fops = {
	.mmap		= ft_mmap,
};

static void ft_put_file(void *data)
{
	struct file *file = data;

	truncate_inode_pages(file->f_mapping, 0);
	fput(file);
}

/*
 * A new file of @nr_pages pages for @ft, with the stub backing store and
 * nothing in the page cache; dropped (with its page cache) by an action.
 */
static struct file *ft_new_file(struct kunit *test, struct ft_file *ft,
				unsigned long nr_pages, unsigned int ra_pages)
{
	struct inode *inode;
	struct file *file;

	file = anon_inode_create_getfile("[mm_filemap_kunit]", &ft_fops, NULL,
					 O_RDWR, NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "anon inode: %ld",
			       PTR_ERR(file));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, ft_put_file, file));
	inode = file_inode(file);
	inode->i_private = ft;
	inode->i_mapping->a_ops = &ft_aops;
	i_size_write(inode, nr_pages << PAGE_SHIFT);
	file->f_ra.ra_pages = ra_pages;
	file->f_ra.mmap_miss = 0;
	return file;
}

/* A new file of FT_FILE_PAGES pages with nothing in the page cache. */
static struct ft_file *ft_create(struct kunit *test, unsigned int ra_pages)
{
	struct ft_file *ft;

	ft = kunit_kzalloc(test, sizeof(*ft), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ft);
	ft->file = ft_new_file(test, ft, FT_FILE_PAGES, ra_pages);
	return ft;
}

static void ft_put_shmem_file(void *data)
{
	fput(data);
}

/*
 * A new shmem file of FT_FILE_PAGES pages with nothing in the page cache:
 * fault-around as tmpfs runs it (shmem_vm_ops). No read goes through
 * @ft's stub backing store.
 */
static struct ft_file *ft_create_shmem(struct kunit *test)
{
	struct ft_file *ft;
	struct file *file;

	ft = kunit_kzalloc(test, sizeof(*ft), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ft);
	file = shmem_file_setup("[mm_filemap_kunit]",
				FT_FILE_PAGES << PAGE_SHIFT, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "shmem file: %ld",
			       PTR_ERR(file));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, ft_put_shmem_file,
						  file));
	ft->file = file;
	return ft;
}

static void ft_forget_reads(struct ft_file *ft)
{
	ft->nr_reads = 0;
}

static unsigned int ft_mmap_miss(struct ft_file *ft)
{
	return READ_ONCE(ft->file->f_ra.mmap_miss);
}

static void ft_set_mmap_miss(struct ft_file *ft, unsigned int val)
{
	WRITE_ONCE(ft->file->f_ra.mmap_miss, val);
}

/* Read page @index into the page cache, as an earlier read() would. */
static struct folio *ft_cache_page(struct kunit *test, struct ft_file *ft,
				   pgoff_t index)
{
	struct address_space *mapping = ft->file->f_mapping;
	struct folio *folio;

	if (shmem_mapping(mapping))
		folio = shmem_read_folio(mapping, index);
	else
		folio = read_mapping_folio(mapping, index, ft->file);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio), "caching page %lu", index);
	folio_put(folio);
	return folio;
}

/*
 * Check that the backing store was asked to read exactly the pages
 * [@start, @start + @nr), each once, in order.
 */
static void ft_expect_reads(struct kunit *test, struct ft_file *ft,
			    pgoff_t start, unsigned long nr, const char *what)
{
	unsigned long i;

	KUNIT_EXPECT_EQ_MSG(test, nr, ft->nr_reads, "%s: pages read", what);
	for (i = 0; i < min(nr, ft->nr_reads); i++) {
		if (ft->reads[i] != start + i) {
			KUNIT_FAIL(test, "%s: read %lu was page %lu, expected %lu",
				   what, i, ft->reads[i], start + i);
			return;
		}
	}
}

/* -------------------------------------------------------------------------
 * Mapping the file: real VMAs, page tables and faults
 */

struct ft_map {
	struct ft_file *ft;
	struct vm_area_struct *vma;
	struct mm_struct *mm;
};

struct ft_unmap {
	struct mm_struct *mm;
	unsigned long addr, len;
};

/*
 * Unmap the test's mapping before its file goes, as a process unmaps (or
 * exits) before the last reference to a file it mapped is dropped. KUnit
 * runs the cleanup in another thread than the test, while the test's mm
 * may still be exiting: truncating the file would then zap PTEs of that
 * dying mm from here, racing with its exit_mmap() (UML's flush_tlb_mm()
 * walks its VMA tree without the mmap lock). The reference taken at map
 * time keeps the mm until the mapping is gone.
 */
static void ft_unmap(void *data)
{
	struct ft_unmap *u = data;
	/* The cleanup thread has no mm of its own: it borrows the test's. */
	bool borrow = !current->mm;

	if (borrow)
		kthread_use_mm(u->mm);
	if (current->mm == u->mm)
		vm_munmap(u->addr, u->len);
	if (borrow)
		kthread_unuse_mm(u->mm);
	mmput(u->mm);
}

/*
 * Map @nr_pages of @file from its page @pgoff with @prot, MAP_PRIVATE, into
 * the test's own mm, at @hint if that is free (0: anywhere).
 */
static struct ft_map ft_mmap_at(struct kunit *test, struct file *file,
				unsigned long hint, pgoff_t pgoff,
				unsigned long nr_pages, unsigned long prot)
{
	struct ft_map map = { };
	struct ft_unmap *unmap;
	unsigned long addr;

	unmap = kunit_kzalloc(test, sizeof(*unmap), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, unmap);
	addr = kunit_vm_mmap(test, file, hint, nr_pages << PAGE_SHIFT, prot,
			     MAP_PRIVATE, pgoff << PAGE_SHIFT);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_VALUE(addr) || !addr,
			       "kunit_vm_mmap: %ld", (long)addr);
	KUNIT_ASSERT_TRUE_MSG(test, !hint || addr == hint,
			      "mapped at %lx, not at %lx", addr, hint);
	unmap->mm = current->mm;
	unmap->addr = addr;
	unmap->len = nr_pages << PAGE_SHIFT;
	mmget(unmap->mm);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, ft_unmap, unmap));
	map.mm = current->mm;
	mmap_read_lock(map.mm);
	map.vma = find_vma(map.mm, addr);
	mmap_read_unlock(map.mm);
	KUNIT_ASSERT_NOT_NULL(test, map.vma);
	KUNIT_ASSERT_EQ(test, addr, map.vma->vm_start);
	return map;
}

static struct ft_map ft_mmap_pages(struct kunit *test, struct file *file,
				   pgoff_t pgoff, unsigned long nr_pages,
				   unsigned long prot)
{
	return ft_mmap_at(test, file, 0, pgoff, nr_pages, prot);
}

/* Map the whole file with @prot, MAP_PRIVATE, into the test's own mm. */
static struct ft_map ft_mmap_file(struct kunit *test, struct ft_file *ft,
				  unsigned long prot)
{
	struct ft_map map = ft_mmap_pages(test, ft->file, 0, FT_FILE_PAGES,
					  prot);

	map.ft = ft;
	return map;
}

static unsigned long ft_addr(const struct ft_map *map, pgoff_t index)
{
	return map->vma->vm_start + ((index - map->vma->vm_pgoff) << PAGE_SHIFT);
}

static void ft_vma_flags(struct ft_map *map, vm_flags_t set, vm_flags_t clear)
{
	mmap_write_lock(map->mm);
	vm_flags_mod(map->vma, set, clear);
	mmap_write_unlock(map->mm);
}

/*
 * Read the PTE that maps @addr, under the mmap lock, allocating nothing.
 * Returns false if no page table covers @addr.
 */
static bool ft_read_pte(struct ft_map *map, unsigned long addr, pte_t *ptent)
{
	bool found = false;
	pmd_t *pmd;
	pte_t *pte;

	mmap_read_lock(map->mm);
	pmd = mm_find_pmd(map->mm, addr);
	pte = pmd ? pte_offset_map(pmd, addr) : NULL;
	if (pte) {
		*ptent = ptep_get(pte);
		pte_unmap(pte);
		found = true;
	}
	mmap_read_unlock(map->mm);
	return found;
}

/* Whether a present PTE maps @addr. */
static bool ft_pte_present(struct ft_map *map, unsigned long addr)
{
	pte_t pte;

	return ft_read_pte(map, addr, &pte) && pte_present(pte);
}

/*
 * After a call that may drop the mmap lock for I/O
 * (maybe_unlock_mmap_for_io()): the lock is gone if the call returned the
 * file it pinned. Release what is left and say whether the call dropped it.
 */
static bool ft_release_fault_lock(struct ft_map *map, struct file *fpin)
{
	if (fpin) {
		fput(fpin);
		return true;
	}
	mmap_read_unlock(map->mm);
	return false;
}

/*
 * A fault at page @index of the mapping, as the arch fault handler and
 * do_read_fault() describe it to ->fault and ->map_pages.
 */
static struct vm_fault ft_vmf(const struct ft_map *map, pgoff_t index,
			      unsigned int flags)
{
	struct vm_fault vmf = {
		.vma = map->vma,
		.address = ft_addr(map, index),
		.real_address = ft_addr(map, index),
		.pgoff = index,
		.gfp_mask = mapping_gfp_mask(map->ft->file->f_mapping),
		.flags = flags,
	};

	return vmf;
}

/* Run the real fault handler for a read (or write) fault at @index. */
static vm_fault_t ft_handle_fault(struct ft_map *map, pgoff_t index,
				  unsigned int flags)
{
	vm_fault_t ret;

	mmap_read_lock(map->mm);
	ret = handle_mm_fault(map->vma, ft_addr(map, index), flags, NULL);
	if (!(ret & VM_FAULT_RETRY))
		mmap_read_unlock(map->mm);
	return ret;
}

/* -------------------------------------------------------------------------
 * mm_filemap_mmap_miss: do_sync_mmap_readahead()
 */

#define FT_RA_UNSET	0xdeadUL

struct ft_sync_case {
	const char *desc;
	vm_flags_t vm_flags;
	unsigned int ra_pages;
	pgoff_t pgoff;
	unsigned int miss_before, miss_after;
	/* Expected read-around window, or size 0 for none. */
	pgoff_t start;
	unsigned long size, async_size;
};

/*
 * On a page-cache miss: VM_RAND_READ, ra_pages == 0 and VM_SEQ_READ leave
 * mmap_miss alone. Otherwise mmap_miss goes up by one, saturating at
 * MMAP_LOTSAMISS * 10 = 1000; if the new value is above MMAP_LOTSAMISS =
 * 100 there is no read-around, else read-around reads ra_pages pages from
 * max(0, pgoff - ra_pages / 2), a quarter of them async.
 */
static const struct ft_sync_case ft_sync_cases[] = {
	{ .desc = "first miss reads around", .ra_pages = 32, .pgoff = 1000,
	  .miss_before = 0, .miss_after = 1, .start = 984, .size = 32,
	  .async_size = 8 },
	{ .desc = "miss 100 still reads around", .ra_pages = 32,
	  .pgoff = 1000, .miss_before = 99, .miss_after = 100, .start = 984,
	  .size = 32, .async_size = 8 },
	{ .desc = "miss 101 stops read-around", .ra_pages = 32, .pgoff = 1000,
	  .miss_before = 100, .miss_after = 101, .start = FT_RA_UNSET,
	  .size = 0, .async_size = 0 },
	{ .desc = "miss 999 counts to the cap", .ra_pages = 32, .pgoff = 1000,
	  .miss_before = 999, .miss_after = 1000, .start = FT_RA_UNSET,
	  .size = 0, .async_size = 0 },
	{ .desc = "saturated at 1000", .ra_pages = 32, .pgoff = 1000,
	  .miss_before = 1000, .miss_after = 1000, .start = FT_RA_UNSET,
	  .size = 0, .async_size = 0 },
	{ .desc = "window start clamped at 0", .ra_pages = 32, .pgoff = 5,
	  .miss_before = 0, .miss_after = 1, .start = 0, .size = 32,
	  .async_size = 8 },
	{ .desc = "window start at the file start", .ra_pages = 32,
	  .pgoff = 16, .miss_before = 0, .miss_after = 1, .start = 0,
	  .size = 32, .async_size = 8 },
	{ .desc = "a 64-page window", .ra_pages = 64, .pgoff = 1000,
	  .miss_before = 7, .miss_after = 8, .start = 968, .size = 64,
	  .async_size = 16 },
	{ .desc = "VM_RAND_READ leaves mmap_miss", .vm_flags = VM_RAND_READ,
	  .ra_pages = 32, .pgoff = 1000, .miss_before = 7, .miss_after = 7,
	  .start = FT_RA_UNSET, .size = 0, .async_size = 0 },
	{ .desc = "ra_pages 0 leaves mmap_miss", .ra_pages = 0, .pgoff = 1000,
	  .miss_before = 7, .miss_after = 7, .start = FT_RA_UNSET, .size = 0,
	  .async_size = 0 },
};

KUNIT_ARRAY_PARAM_DESC(ft_sync, ft_sync_cases, desc);

static void do_sync_mmap_readahead_test(struct kunit *test)
{
	const struct ft_sync_case *c = test->param_value;
	struct ft_file *ft = ft_create(test, c->ra_pages);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	struct file_ra_state *ra = &ft->file->f_ra;
	struct vm_fault vmf = ft_vmf(&map, c->pgoff, FT_FAULT_FIRST);
	bool dropped;

	if (c->vm_flags)
		ft_vma_flags(&map, c->vm_flags, 0);
	ft_set_mmap_miss(ft, c->miss_before);
	ra->start = FT_RA_UNSET;
	ra->size = FT_RA_UNSET;
	ra->async_size = FT_RA_UNSET;

	mmap_read_lock(map.mm);
	dropped = ft_release_fault_lock(&map, do_sync_mmap_readahead(&vmf));

	/* The mmap lock is dropped for the I/O, and only for it. */
	KUNIT_EXPECT_EQ_MSG(test, c->size != 0, dropped, "mmap lock dropped");
	KUNIT_EXPECT_EQ_MSG(test, c->miss_after, ft_mmap_miss(ft),
			    "mmap_miss (was %u)", c->miss_before);
	if (!c->size) {
		KUNIT_EXPECT_EQ_MSG(test, 0UL, ft->nr_reads, "pages read");
		KUNIT_EXPECT_EQ_MSG(test, FT_RA_UNSET, ra->start, "ra->start");
		return;
	}
	KUNIT_EXPECT_EQ_MSG(test, c->start, ra->start, "ra->start");
	KUNIT_EXPECT_EQ_MSG(test, (unsigned int)c->size, ra->size, "ra->size");
	KUNIT_EXPECT_EQ_MSG(test, (unsigned int)c->async_size, ra->async_size,
			    "ra->async_size");
	ft_expect_reads(test, ft, c->start, c->size, c->desc);
}

static void do_sync_mmap_readahead_seq_test(struct kunit *test)
{
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	struct vm_fault vmf = ft_vmf(&map, 1000, FT_FAULT_FIRST);
	bool dropped;

	ft_vma_flags(&map, VM_SEQ_READ, 0);
	ft_set_mmap_miss(ft, 7);

	mmap_read_lock(map.mm);
	dropped = ft_release_fault_lock(&map, do_sync_mmap_readahead(&vmf));

	/* Plain sync readahead from the fault on; mmap_miss is left alone. */
	KUNIT_EXPECT_TRUE_MSG(test, dropped, "mmap lock dropped for the read");
	KUNIT_EXPECT_EQ(test, 7U, ft_mmap_miss(ft));
	KUNIT_ASSERT_GT(test, ft->nr_reads, 0UL);
	KUNIT_EXPECT_EQ(test, 1000UL, ft->reads[0]);
}

/* Repeated misses count up one by one and stop reading around after 100. */
static void do_sync_mmap_readahead_threshold_test(struct kunit *test)
{
	struct ft_file *ft = ft_create(test, 2);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	unsigned int i;

	for (i = 1; i <= 110; i++) {
		/* Every other page: each fault is a miss. */
		struct vm_fault vmf = ft_vmf(&map, 4 * i, 0);

		ft_forget_reads(ft);
		mmap_read_lock(map.mm);
		ft_release_fault_lock(&map, do_sync_mmap_readahead(&vmf));
		KUNIT_ASSERT_EQ_MSG(test, i, ft_mmap_miss(ft), "miss %u", i);
		KUNIT_ASSERT_EQ_MSG(test, i <= 100 ? 2UL : 0UL, ft->nr_reads,
				    "miss %u (mmap_miss %u): pages read", i,
				    ft_mmap_miss(ft));
	}
}

/*
 * Read-around starts readahead's ramp of folio sizes afresh: it asks
 * page_cache_ra_order() for order 0, which on a mapping that takes large
 * folios reads two orders up, so the whole window comes in folios of 4
 * pages, each at its own aligned index.
 */
static void do_sync_mmap_readahead_large_folio_test(struct kunit *test)
{
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	struct vm_fault vmf = ft_vmf(&map, 1000, FT_FAULT_FIRST);
	pgoff_t start = 1000 - FT_RA_PAGES / 2;
	pgoff_t index;

	mapping_set_large_folios(ft->file->f_mapping);
	mmap_read_lock(map.mm);
	ft_release_fault_lock(&map, do_sync_mmap_readahead(&vmf));

	ft_expect_reads(test, ft, start, FT_RA_PAGES, "read-around");
	for (index = start; index < start + FT_RA_PAGES; index += 4) {
		struct folio *folio = filemap_get_folio(ft->file->f_mapping,
							index);
		unsigned int order;
		pgoff_t first;

		KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio), "page %lu cached",
				       index);
		order = folio_order(folio);
		first = folio_index(folio);
		folio_put(folio);
		KUNIT_EXPECT_EQ_MSG(test, 2U, order,
				    "order of the folio at page %lu", index);
		KUNIT_EXPECT_EQ_MSG(test, index, first,
				    "first page of the folio at page %lu", index);
	}
#else
	kunit_skip(test, "needs CONFIG_TRANSPARENT_HUGEPAGE: run with --arch=x86_64");
#endif
}

/* -------------------------------------------------------------------------
 * mm_filemap_mmap_miss: page-cache hits, do_async_mmap_readahead()
 */

/*
 * VM_HUGEPAGE (THP kernels only): on a miss, read PMD-sized units from the
 * PMD-aligned index: two PMDs unless VM_RAND_READ, the last PMD async (its
 * first page PG_readahead). Neither ra_pages nor mmap_miss plays a part,
 * and mmap_miss is left alone. Sizes are in PMDs.
 */
struct ft_huge_case {
	const char *desc;
	vm_flags_t vm_flags;
	unsigned int ra_pages;
	unsigned int miss;
	/* The fault: at page @offset of PMD @pmd of the file. */
	unsigned long pmd, offset;
	/* PMDs read, from the fault's PMD. */
	unsigned long pmds;
	/* The file's mapping takes large folios. */
	bool large_folios;
};

static const struct ft_huge_case ft_huge_cases[] = {
	{ .desc = "fault at a PMD boundary: two PMDs",
	  .ra_pages = FT_RA_PAGES, .miss = 0, .pmd = 2, .offset = 0, .pmds = 2 },
	{ .desc = "fault inside a PMD: from the PMD's start",
	  .ra_pages = FT_RA_PAGES, .miss = 0, .pmd = 2, .offset = 100,
	  .pmds = 2 },
	{ .desc = "VM_RAND_READ: one PMD", .vm_flags = VM_RAND_READ,
	  .ra_pages = FT_RA_PAGES, .miss = 0, .pmd = 2, .offset = 100,
	  .pmds = 1 },
	{ .desc = "ra_pages 0: still two PMDs", .ra_pages = 0, .miss = 0,
	  .pmd = 2, .offset = 100, .pmds = 2 },
	{ .desc = "mmap_miss past the threshold: still read, and kept",
	  .ra_pages = FT_RA_PAGES, .miss = 500, .pmd = 2, .offset = 100,
	  .pmds = 2 },
	{ .desc = "large folios: read as PMD-sized folios",
	  .ra_pages = FT_RA_PAGES, .miss = 0, .pmd = 2, .offset = 100,
	  .pmds = 2, .large_folios = true },
};

KUNIT_ARRAY_PARAM_DESC(ft_huge, ft_huge_cases, desc);

#ifdef CONFIG_TRANSPARENT_HUGEPAGE
static void ft_huge_readahead(struct kunit *test, const struct ft_huge_case *c,
			      struct ft_file *ft, struct ft_map *map)
{
	struct file_ra_state *ra = &ft->file->f_ra;
	pgoff_t start = c->pmd * HPAGE_PMD_NR;
	pgoff_t async = start + (c->pmds - 1) * HPAGE_PMD_NR;
	struct vm_fault vmf = ft_vmf(map, start + c->offset, FT_FAULT_FIRST);
	struct folio *folio;
	bool dropped;

	mmap_read_lock(map->mm);
	dropped = ft_release_fault_lock(map, do_sync_mmap_readahead(&vmf));
	KUNIT_EXPECT_TRUE_MSG(test, dropped, "mmap lock dropped for the read");
	KUNIT_EXPECT_EQ_MSG(test, c->miss, ft_mmap_miss(ft), "mmap_miss");
	KUNIT_EXPECT_EQ_MSG(test, (unsigned int)(c->pmds * HPAGE_PMD_NR),
			    ra->size, "ra->size");
	KUNIT_EXPECT_EQ_MSG(test, (unsigned int)HPAGE_PMD_NR, ra->async_size,
			    "ra->async_size");
	ft_expect_reads(test, ft, start, c->pmds * HPAGE_PMD_NR, c->desc);

	folio = filemap_get_folio(ft->file->f_mapping, async);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio), "page %lu cached", async);
	KUNIT_EXPECT_TRUE_MSG(test,
			      folio_test_readahead(folio) &&
			      folio_index(folio) == async,
			      "PG_readahead at page %lu", async);
	if (c->large_folios)
		KUNIT_EXPECT_EQ_MSG(test, (unsigned int)HPAGE_PMD_ORDER,
				    folio_order(folio), "folio order");
	folio_put(folio);
}
#endif

static void do_sync_mmap_readahead_hugepage_test(struct kunit *test)
{
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	const struct ft_huge_case *c = test->param_value;
	struct ft_file *ft = ft_create(test, c->ra_pages);
	struct ft_map map;

	if (HPAGE_PMD_ORDER > MAX_PAGECACHE_ORDER)
		kunit_skip(test, "PMD order %u is above the page cache's %u",
			   HPAGE_PMD_ORDER, MAX_PAGECACHE_ORDER);
	if (c->large_folios)
		mapping_set_large_folios(ft->file->f_mapping);
	map = ft_mmap_file(test, ft, PROT_READ);
	ft_vma_flags(&map, VM_HUGEPAGE | c->vm_flags, 0);
	ft_set_mmap_miss(ft, c->miss);
	ft_huge_readahead(test, c, ft, &map);
#else
	kunit_skip(test, "needs CONFIG_TRANSPARENT_HUGEPAGE: run with --arch=x86_64");
#endif
}

struct ft_async_case {
	const char *desc;
	vm_flags_t vm_flags;
	unsigned int ra_pages;
	unsigned int miss_before, miss_after;
	bool readahead_mark;
	/* Async readahead runs: it reads ahead of the hit. */
	bool reads;
};

/*
 * A hit takes one off mmap_miss, never below 0; PG_readahead reads ahead.
 * VM_RAND_READ and ra_pages 0 stop the async path before either.
 */
static const struct ft_async_case ft_async_cases[] = {
	{ .desc = "hit takes one off", .ra_pages = FT_RA_PAGES,
	  .miss_before = 5, .miss_after = 4 },
	{ .desc = "hit at 1 gives 0", .ra_pages = FT_RA_PAGES,
	  .miss_before = 1, .miss_after = 0 },
	{ .desc = "hit at 0 stays 0", .ra_pages = FT_RA_PAGES,
	  .miss_before = 0, .miss_after = 0 },
	{ .desc = "hit at the cap", .ra_pages = FT_RA_PAGES,
	  .miss_before = 1000, .miss_after = 999 },
	{ .desc = "hit on a readahead mark", .ra_pages = FT_RA_PAGES,
	  .miss_before = 5, .miss_after = 4, .readahead_mark = true,
	  .reads = true },
	{ .desc = "VM_RAND_READ: mmap_miss left, no readahead",
	  .vm_flags = VM_RAND_READ, .ra_pages = FT_RA_PAGES,
	  .miss_before = 5, .miss_after = 5, .readahead_mark = true },
	{ .desc = "ra_pages 0: mmap_miss left, no readahead",
	  .miss_before = 5, .miss_after = 5, .readahead_mark = true },
};

KUNIT_ARRAY_PARAM_DESC(ft_async, ft_async_cases, desc);

static void do_async_mmap_readahead_test(struct kunit *test)
{
	const struct ft_async_case *c = test->param_value;
	struct ft_file *ft = ft_create(test, c->ra_pages);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	struct vm_fault vmf = ft_vmf(&map, 1000, FT_FAULT_FIRST);
	struct folio *folio;
	bool dropped;

	if (c->vm_flags)
		ft_vma_flags(&map, c->vm_flags, 0);
	folio = ft_cache_page(test, ft, 1000);
	if (c->readahead_mark)
		folio_set_readahead(folio);
	ft_forget_reads(ft);
	ft_set_mmap_miss(ft, c->miss_before);

	mmap_read_lock(map.mm);
	dropped = ft_release_fault_lock(&map,
					do_async_mmap_readahead(&vmf, folio));

	/* The mmap lock is dropped for the async read, and only for it. */
	KUNIT_EXPECT_EQ_MSG(test, c->reads, dropped, "mmap lock dropped");
	KUNIT_EXPECT_EQ_MSG(test, c->miss_after, ft_mmap_miss(ft),
			    "mmap_miss (was %u)", c->miss_before);
	if (c->reads) {
		KUNIT_EXPECT_GT_MSG(test, ft->nr_reads, 0UL, "async readahead");
		KUNIT_EXPECT_GT_MSG(test, ft->reads[0], 1000UL,
				    "reads ahead of the hit");
	} else {
		KUNIT_EXPECT_EQ_MSG(test, 0UL, ft->nr_reads, "pages read");
	}
}

/* -------------------------------------------------------------------------
 * mm_filemap_mmap_miss: filemap_fault() on a hit, and FAULT_FLAG_TRIED
 */

struct ft_hit_case {
	const char *desc;
	unsigned int flags;
	unsigned int miss_after;
};

/* A hit is a hit only on the first try: a retry found what the miss read. */
static const struct ft_hit_case ft_hit_cases[] = {
	{ .desc = "first try takes one off", .miss_after = 9 },
	{ .desc = "FAULT_FLAG_TRIED retry leaves mmap_miss",
	  .flags = FAULT_FLAG_TRIED, .miss_after = 10 },
};

KUNIT_ARRAY_PARAM_DESC(ft_hit, ft_hit_cases, desc);

static void filemap_fault_hit_test(struct kunit *test)
{
	const struct ft_hit_case *c = test->param_value;
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	struct vm_fault vmf = ft_vmf(&map, 1000, c->flags);
	struct folio *folio;
	vm_fault_t ret;

	folio = ft_cache_page(test, ft, 1000);
	ft_forget_reads(ft);
	ft_set_mmap_miss(ft, 10);

	mmap_read_lock(map.mm);
	ret = filemap_fault(&vmf);
	mmap_read_unlock(map.mm);
	if (ret & VM_FAULT_LOCKED) {
		folio_unlock(page_folio(vmf.page));
		folio_put(page_folio(vmf.page));
	}

	KUNIT_EXPECT_EQ_MSG(test, VM_FAULT_LOCKED, ret, "fault");
	if (ret & VM_FAULT_LOCKED)
		KUNIT_EXPECT_PTR_EQ_MSG(test, folio, page_folio(vmf.page),
					"page");
	KUNIT_EXPECT_EQ_MSG(test, c->miss_after, ft_mmap_miss(ft), "mmap_miss");
	KUNIT_EXPECT_EQ_MSG(test, 0UL, ft->nr_reads, "pages read");
}

/*
 * A miss through filemap_fault(): counted, read around, major. Called
 * directly, filemap_fault() counts no per-task maj_flt (handle_mm_fault()
 * does), hence the system-wide count.
 */
static void filemap_fault_miss_test(struct kunit *test)
{
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	struct vm_fault vmf = ft_vmf(&map, 1000, 0);
	unsigned long majfault = mm_kunit_vm_event(test, PGMAJFAULT);
	vm_fault_t ret;

	ft_set_mmap_miss(ft, 10);

	mmap_read_lock(map.mm);
	ret = filemap_fault(&vmf);
	mmap_read_unlock(map.mm);
	if (ret & VM_FAULT_LOCKED) {
		folio_unlock(page_folio(vmf.page));
		folio_put(page_folio(vmf.page));
	}

	KUNIT_EXPECT_EQ(test, VM_FAULT_MAJOR | VM_FAULT_LOCKED, ret);
	KUNIT_EXPECT_EQ(test, 11U, ft_mmap_miss(ft));
	KUNIT_EXPECT_EQ(test, majfault + 1, mm_kunit_vm_event(test, PGMAJFAULT));
	ft_expect_reads(test, ft, 1000 - FT_RA_PAGES / 2, FT_RA_PAGES,
			"read-around");
}

/* -------------------------------------------------------------------------
 * mm_filemap_mmap_miss: filemap_map_pages() crediting
 */

/*
 * Fault-around at page @index of a mapping with pages [@first, @last]
 * cached: maps what is cached in [@first, @last] and returns the result.
 */
static vm_fault_t ft_map_pages(struct kunit *test, struct ft_map *map,
			       pgoff_t index, pgoff_t first, pgoff_t last,
			       unsigned int flags)
{
	struct vm_fault vmf = ft_vmf(map, index, flags);
	vm_fault_t ret = 0;

	mmap_read_lock(map->mm);
	vmf.pmd = mm_kunit_alloc_pmd(map->mm, vmf.address, true);
	if (vmf.pmd)
		ret = filemap_map_pages(&vmf, first, last);
	mmap_read_unlock(map->mm);
	KUNIT_ASSERT_NOT_NULL_MSG(test, vmf.pmd, "page table for page %lu",
				  index);
	return ret;
}

struct ft_credit_case {
	const char *desc;
	unsigned int miss_before, miss_after;
	bool workingset;
};

/*
 * The page mapped at the faulting address is a hit unless its folio is
 * PG_workingset; mmap_miss is reduced by the hits and clamped at 0.
 */
static const struct ft_credit_case ft_credit_cases[] = {
	{ .desc = "faulting page is a hit", .miss_before = 10, .miss_after = 9 },
	{ .desc = "workingset page is no hit", .miss_before = 10,
	  .miss_after = 10, .workingset = true },
	{ .desc = "hit at 1 gives 0", .miss_before = 1, .miss_after = 0 },
	{ .desc = "hit at 0 is clamped at 0", .miss_before = 0,
	  .miss_after = 0 },
};

KUNIT_ARRAY_PARAM_DESC(ft_credit, ft_credit_cases, desc);

static void filemap_map_pages_credit_test(struct kunit *test)
{
	const struct ft_credit_case *c = test->param_value;
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	struct folio *folio;

	folio = ft_cache_page(test, ft, 1000);
	if (c->workingset)
		folio_set_workingset(folio);
	ft_set_mmap_miss(ft, c->miss_before);

	KUNIT_EXPECT_EQ_MSG(test, VM_FAULT_NOPAGE,
			    ft_map_pages(test, &map, 1000, 1000, 1000, 0),
			    "mapped the faulting page");
	KUNIT_EXPECT_TRUE_MSG(test, ft_pte_present(&map, ft_addr(&map, 1000)),
			      "PTE");
	KUNIT_EXPECT_EQ_MSG(test, c->miss_after, ft_mmap_miss(ft),
			    "mmap_miss (was %u)", c->miss_before);
}

/*
 * Fault-around adds each page it maps to the mm's file RSS once: a page
 * already mapped by an earlier fault-around is not counted again. The
 * counter is summed over the CPUs: on SMP get_mm_counter() leaves out
 * the other CPUs' unfolded parts.
 */
static void filemap_map_pages_rss_test(struct kunit *test)
{
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	long before, first, second;
	pgoff_t index;

	for (index = 998; index <= 1002; index++)
		ft_cache_page(test, ft, index);
	before = get_mm_counter_sum(map.mm, MM_FILEPAGES);
	ft_map_pages(test, &map, 1001, 1001, 1001, 0);
	first = get_mm_counter_sum(map.mm, MM_FILEPAGES);
	ft_map_pages(test, &map, 1000, 996, 1003, 0);
	second = get_mm_counter_sum(map.mm, MM_FILEPAGES);

	KUNIT_EXPECT_EQ_MSG(test, 1L, first - before, "one page mapped");
	KUNIT_EXPECT_EQ_MSG(test, 4L, second - first,
			    "four more mapped, the fifth was already");
	for (index = 998; index <= 1002; index++)
		KUNIT_EXPECT_TRUE_MSG(test,
				      ft_pte_present(&map, ft_addr(&map, index)),
				      "PTE of page %lu", index);
}

/* The references on page @index's folio, less the lookup's own. */
static int ft_page_refs(struct kunit *test, struct ft_file *ft, pgoff_t index,
			bool *locked)
{
	struct folio *folio;
	int refs;

	/* A folio in a per-CPU LRU batch holds a reference of the batch. */
	lru_add_drain_all();
	folio = filemap_get_folio(ft->file->f_mapping, index);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio), "page %lu cached", index);
	refs = folio_ref_count(folio) - 1;
	*locked = folio_test_locked(folio);
	folio_put(folio);
	return refs;
}

/* The last page of the FT_FILE_PAGES test files. */
#define FT_LAST_PAGE	(FT_FILE_PAGES - 1)

struct ft_range_case {
	const char *desc;
	bool shmem;
	pgoff_t vm_pgoff;		/* the file page the mapping starts at */
	bool no_table;			/* no page table: one preallocated */
	pgoff_t cached_first, cached_last;	/* in the page cache */
	pgoff_t index, first, last;	/* the fault, the range around it */
	/* expected: every cached page mapped, or none */
	bool mapped;
};

/*
 * Fault-around maps the cached pages of [first, last] that lie inside the
 * file, each at the address its file page has in the VMA, with one
 * reference for its PTE and its folio unlocked again, counts them in the
 * mm's file RSS (shmem RSS for a shmem file), and returns
 * VM_FAULT_NOPAGE if it mapped the faulting page. Where no page table
 * covers the range yet, it installs the one do_fault_around()
 * preallocated only if it may map large: for shmem, or if the first folio
 * it finds ends before the file's last page (no PTE beyond i_size, no PMD
 * across it); otherwise it maps nothing and leaves the fault to map the
 * page.
 */
static const struct ft_range_case ft_range_cases[] = {
	{ .desc = "the file's last page is mapped",
	  .cached_first = FT_LAST_PAGE - 3, .cached_last = FT_LAST_PAGE,
	  .index = FT_LAST_PAGE - 1, .first = FT_LAST_PAGE - 5,
	  .last = FT_LAST_PAGE + 4, .mapped = true },
	{ .desc = "a mapping from file page 512: mapped at the pages' addresses",
	  .vm_pgoff = 512, .cached_first = 1000, .cached_last = 1002,
	  .index = 1001, .first = 998, .last = 1003, .mapped = true },
	{ .desc = "no page table, first folio ends before the last page: installed",
	  .no_table = true,
	  .cached_first = FT_LAST_PAGE - 1, .cached_last = FT_LAST_PAGE,
	  .index = FT_LAST_PAGE, .first = FT_LAST_PAGE - 1,
	  .last = FT_LAST_PAGE, .mapped = true },
	{ .desc = "no page table, first folio is the last page: nothing mapped",
	  .no_table = true,
	  .cached_first = FT_LAST_PAGE, .cached_last = FT_LAST_PAGE,
	  .index = FT_LAST_PAGE, .first = FT_LAST_PAGE - 7,
	  .last = FT_LAST_PAGE, .mapped = false },
	{ .desc = "shmem: counted as shmem pages", .shmem = true,
	  .cached_first = 1000, .cached_last = 1002,
	  .index = 1001, .first = 998, .last = 1003, .mapped = true },
	{ .desc = "shmem, no page table, the last page: installed all the same",
	  .shmem = true, .no_table = true,
	  .cached_first = FT_LAST_PAGE, .cached_last = FT_LAST_PAGE,
	  .index = FT_LAST_PAGE, .first = FT_LAST_PAGE - 7,
	  .last = FT_LAST_PAGE, .mapped = true },
};

KUNIT_ARRAY_PARAM_DESC(ft_range, ft_range_cases, desc);

/*
 * Fault-around at page @index as do_fault_around() runs it when no page
 * table covers the address yet: the PMD entry none, a page table
 * preallocated in vmf->prealloc_pte. Frees the table if it was not
 * installed and says whether it was.
 */
static vm_fault_t ft_map_pages_no_table(struct kunit *test, struct ft_map *map,
					pgoff_t index, pgoff_t first,
					pgoff_t last, bool *installed)
{
	struct vm_fault vmf = ft_vmf(map, index, 0);
	bool pmd_was_none = false;
	vm_fault_t ret = 0;

	mmap_read_lock(map->mm);
	vmf.pmd = mm_kunit_alloc_pmd(map->mm, vmf.address, false);
	vmf.prealloc_pte = pte_alloc_one(map->mm);
	if (vmf.pmd && vmf.prealloc_pte) {
		pmd_was_none = pmd_none(*vmf.pmd);
		if (pmd_was_none)
			ret = filemap_map_pages(&vmf, first, last);
	}
	mmap_read_unlock(map->mm);
	*installed = vmf.pmd && !vmf.prealloc_pte;
	if (vmf.prealloc_pte)
		pte_free(map->mm, vmf.prealloc_pte);
	KUNIT_ASSERT_NOT_NULL_MSG(test, vmf.pmd, "PMD for page %lu", index);
	KUNIT_ASSERT_TRUE_MSG(test, pmd_was_none,
			      "a page table covered page %lu already", index);
	return ret;
}

static void filemap_map_pages_range_test(struct kunit *test)
{
	const struct ft_range_case *c = test->param_value;
	struct ft_file *ft = c->shmem ? ft_create_shmem(test) :
				       ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_pages(test, ft->file, c->vm_pgoff,
					  FT_FILE_PAGES - c->vm_pgoff,
					  PROT_READ);
	int rss = c->shmem ? MM_SHMEMPAGES : MM_FILEPAGES;
	int other = c->shmem ? MM_FILEPAGES : MM_SHMEMPAGES;
	unsigned long nr = c->cached_last - c->cached_first + 1, i;
	int *refs = kunit_kcalloc(test, nr, sizeof(*refs), GFP_KERNEL);
	long rss_before, other_before;
	bool locked, installed = false;
	vm_fault_t ret;

	KUNIT_ASSERT_NOT_NULL(test, refs);
	map.ft = ft;
	for (i = 0; i < nr; i++) {
		ft_cache_page(test, ft, c->cached_first + i);
		refs[i] = ft_page_refs(test, ft, c->cached_first + i, &locked);
	}
	rss_before = get_mm_counter_sum(map.mm, rss);
	other_before = get_mm_counter_sum(map.mm, other);

	if (c->no_table)
		ret = ft_map_pages_no_table(test, &map, c->index, c->first,
					    c->last, &installed);
	else
		ret = ft_map_pages(test, &map, c->index, c->first, c->last, 0);

	KUNIT_EXPECT_EQ(test, c->mapped ? VM_FAULT_NOPAGE : 0, ret);
	if (c->no_table)
		KUNIT_EXPECT_EQ_MSG(test, c->mapped, installed,
				    "preallocated page table installed");
	KUNIT_EXPECT_EQ_MSG(test, c->mapped ? (long)nr : 0L,
			    get_mm_counter_sum(map.mm, rss) - rss_before,
			    "RSS of its kind");
	KUNIT_EXPECT_EQ_MSG(test, 0L,
			    get_mm_counter_sum(map.mm, other) - other_before,
			    "RSS of the other kind");
	for (i = 0; i < nr; i++) {
		pgoff_t index = c->cached_first + i;

		KUNIT_EXPECT_EQ_MSG(test, c->mapped,
				    ft_pte_present(&map, ft_addr(&map, index)),
				    "PTE of page %lu", index);
		KUNIT_EXPECT_EQ_MSG(test, refs[i] + (c->mapped ? 1 : 0),
				    ft_page_refs(test, ft, index, &locked),
				    "references of page %lu", index);
		KUNIT_EXPECT_FALSE_MSG(test, locked, "page %lu locked", index);
	}
}

#ifdef CONFIG_TRANSPARENT_HUGEPAGE
/* A folio of 2^@order pages at @index (aligned), in the page cache. */
static void ft_cache_large_folio(struct kunit *test, struct ft_file *ft,
				 pgoff_t index, unsigned int order)
{
	struct address_space *mapping = ft->file->f_mapping;
	struct folio *folio;

	mapping_set_large_folios(mapping);
	folio = __filemap_get_folio(mapping, index,
				    FGP_LOCK | FGP_CREAT |
				    fgf_set_order(PAGE_SIZE << order),
				    mapping_gfp_mask(mapping));
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio), "folio at %lu", index);
	folio_mark_uptodate(folio);
	folio_unlock(folio);
	folio_put(folio);
	/* The page cache holds the folio: its order stays as it is. */
	KUNIT_ASSERT_EQ_MSG(test, order, folio_order(folio),
			    "order of the folio at %lu", index);
}
#endif

struct ft_large_range_case {
	const char *desc;
	pgoff_t index;			/* the large folio's first page */
	unsigned int order;
	pgoff_t eof;			/* i_size, in pages, once cached */
	pgoff_t populated;		/* 0, or a page a write fault mapped */
	unsigned int after;		/* order-0 pages cached after the folio */
	pgoff_t fault, first, last;	/* the fault, the range around it */
	/* expected: the pages mapped, each its own page cache page */
	pgoff_t mapped_first, mapped_last;
};

/*
 * Fault-around maps each page of a large folio that lies in [first, last]
 * and inside the file, each by its own page of the folio at the address
 * its file page has in the VMA: from the window's start when the folio
 * begins before it, up to the folio's end and never past it, and no PTE
 * beyond i_size when the folio crosses it. A PTE that is populated
 * already is left as it is, and the pages on either side of it mapped;
 * a folio after the large one is mapped at its own addresses.
 * It returns VM_FAULT_NOPAGE for the faulting page, and counts what it
 * mapped in the file RSS.
 */
static const struct ft_large_range_case ft_large_range_cases[] = {
	{ .desc = "window past the folio's end: the folio, nothing after",
	  .index = 992, .order = 4, .eof = FT_FILE_PAGES,
	  .fault = 1000, .first = 984, .last = 1015,
	  .mapped_first = 992, .mapped_last = 1007 },
	{ .desc = "window from inside the folio: from the window's start",
	  .index = 992, .order = 4, .eof = FT_FILE_PAGES,
	  .fault = 1000, .first = 996, .last = 1015,
	  .mapped_first = 996, .mapped_last = 1007 },
	{ .desc = "a populated PTE inside the folio: left, the rest mapped",
	  .index = 992, .order = 4, .eof = FT_FILE_PAGES, .populated = 1000,
	  .fault = 996, .first = 984, .last = 1015,
	  .mapped_first = 992, .mapped_last = 1007 },
	{ .desc = "a populated PTE before the fault: the fault's page mapped",
	  .index = 992, .order = 4, .eof = FT_FILE_PAGES, .populated = 1000,
	  .fault = 1004, .first = 984, .last = 1015,
	  .mapped_first = 992, .mapped_last = 1007 },
	{ .desc = "order-0 pages after the folio: at their own addresses",
	  .index = 992, .order = 4, .eof = FT_FILE_PAGES, .after = 2,
	  .fault = 1000, .first = 984, .last = 1015,
	  .mapped_first = 992, .mapped_last = 1009 },
	{ .desc = "a populated PTE in the folio, pages after it: their own PTEs",
	  .index = 992, .order = 4, .eof = FT_FILE_PAGES, .populated = 1000,
	  .after = 2, .fault = 996, .first = 984, .last = 1015,
	  .mapped_first = 992, .mapped_last = 1009 },
	{ .desc = "folio across i_size: no PTE beyond it",
	  .index = FT_FILE_PAGES - 4, .order = 2, .eof = FT_FILE_PAGES - 2,
	  .fault = FT_FILE_PAGES - 4, .first = FT_FILE_PAGES - 8,
	  .last = FT_LAST_PAGE,
	  .mapped_first = FT_FILE_PAGES - 4, .mapped_last = FT_FILE_PAGES - 3 },
};

KUNIT_ARRAY_PARAM_DESC(ft_large_range, ft_large_range_cases, desc);

static void filemap_map_pages_large_folio_range_test(struct kunit *test)
{
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	const struct ft_large_range_case *c = test->param_value;
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct inode *inode = file_inode(ft->file);
	struct ft_map map = ft_mmap_file(test, ft,
					 PROT_READ | PROT_WRITE);
	unsigned long mapped = c->mapped_last - c->mapped_first + 1 -
			       (c->populated ? 1 : 0);
	pgoff_t folio_last = c->index + (1UL << c->order) - 1;
	struct folio *folio, *f;
	long rss_before;
	int refs_before;
	pgoff_t i;
	pte_t pte;

	ft_cache_large_folio(test, ft, c->index, c->order);
	for (i = folio_last + 1; i <= folio_last + c->after; i++)
		ft_cache_page(test, ft, i);
	if (c->populated)
		KUNIT_ASSERT_EQ_MSG(test, 0,
				    ft_handle_fault(&map, c->populated,
						    FAULT_FLAG_WRITE) &
				    VM_FAULT_ERROR, "write fault at page %lu",
				    c->populated);
	inode_lock(inode);
	i_size_write(inode, c->eof << PAGE_SHIFT);
	inode_unlock(inode);
	folio = filemap_get_folio(ft->file->f_mapping, c->index);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	/* A folio in a per-CPU LRU batch holds a reference of the batch. */
	lru_add_drain_all();
	refs_before = folio_ref_count(folio);
	rss_before = get_mm_counter_sum(map.mm, MM_FILEPAGES);

	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE,
			ft_map_pages(test, &map, c->fault, c->first, c->last, 0));
	KUNIT_EXPECT_EQ_MSG(test, (long)mapped,
			    get_mm_counter_sum(map.mm, MM_FILEPAGES) - rss_before,
			    "file RSS");
	KUNIT_EXPECT_EQ_MSG(test, refs_before + (int)(mapped - c->after),
			    folio_ref_count(folio), "one reference per PTE");
	KUNIT_EXPECT_FALSE(test, folio_test_locked(folio));
	for (i = c->first; i <= c->last; i++) {
		bool want = i >= c->mapped_first && i <= c->mapped_last;
		bool present = ft_read_pte(&map, ft_addr(&map, i), &pte) &&
			       pte_present(pte);

		KUNIT_EXPECT_EQ_MSG(test, want, present, "PTE of page %lu", i);
		if (!want || !present)
			continue;
		f = filemap_get_folio(ft->file->f_mapping, i);
		if (IS_ERR(f)) {
			KUNIT_FAIL(test, "page %lu mapped, not cached", i);
			continue;
		}
		if (i == c->populated)
			KUNIT_EXPECT_NE_MSG(test, page_to_pfn(folio_file_page(f, i)),
					    pte_pfn(pte), "populated page %lu left", i);
		else
			KUNIT_EXPECT_EQ_MSG(test, page_to_pfn(folio_file_page(f, i)),
					    pte_pfn(pte), "page of %lu", i);
		folio_put(f);
	}
	folio_put(folio);
#else
	kunit_skip(test, "needs large folios (THP): run with --arch=x86_64");
#endif
}

/*
 * Fault-around maps a PMD-sized folio with one PMD where no page table
 * covers it yet and the VMA lets it (its file offset aligned with a PMD
 * of the address space): no page table is installed, no PTE mapped, the
 * folio's pages are counted in the file RSS, and the fault is handled,
 * VM_FAULT_NOPAGE.
 */
static void filemap_map_pages_pmd_test(struct kunit *test)
{
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	unsigned long len = FT_FILE_PAGES << PAGE_SHIFT, addr;
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	pgoff_t fault = HPAGE_PMD_NR + 8;
	bool installed, huge;
	struct ft_map map;
	long rss_before;
	vm_fault_t ret;
	pmd_t *pmd;

	if (HPAGE_PMD_ORDER > MAX_PAGECACHE_ORDER)
		kunit_skip(test, "PMD order %u is above the page cache's %u",
			   HPAGE_PMD_ORDER, MAX_PAGECACHE_ORDER);
	/* Find room for the file and a PMD more, and map it PMD-aligned. */
	addr = kunit_vm_mmap(test, NULL, 0, len + PMD_SIZE, PROT_READ,
			     MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr) || !addr);
	KUNIT_ASSERT_EQ(test, 0, vm_munmap(addr, len + PMD_SIZE));
	map = ft_mmap_at(test, ft->file, ALIGN(addr, PMD_SIZE), 0,
			 FT_FILE_PAGES, PROT_READ);
	map.ft = ft;
	ft_cache_large_folio(test, ft, HPAGE_PMD_NR, HPAGE_PMD_ORDER);
	rss_before = get_mm_counter_sum(map.mm, MM_FILEPAGES);

	ret = ft_map_pages_no_table(test, &map, fault, HPAGE_PMD_NR,
				    2 * HPAGE_PMD_NR - 1, &installed);
	mmap_read_lock(map.mm);
	pmd = mm_find_pmd(map.mm, ft_addr(&map, fault));
	huge = pmd && pmd_trans_huge(pmdp_get(pmd));
	mmap_read_unlock(map.mm);

	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE, ret);
	KUNIT_EXPECT_TRUE_MSG(test, huge, "a PMD maps page %lu", fault);
	KUNIT_EXPECT_FALSE_MSG(test, installed, "page table installed");
	KUNIT_EXPECT_EQ_MSG(test, (long)HPAGE_PMD_NR,
			    get_mm_counter_sum(map.mm, MM_FILEPAGES) - rss_before,
			    "file RSS");
#else
	kunit_skip(test, "needs THP: run with --arch=x86_64");
#endif
}

#ifdef CONFIG_TRACEPOINTS
struct ft_map_pages_trace {
	struct address_space *mapping;	/* the test's: others are not counted */
	pgoff_t start, end;
	unsigned int calls;
};

static void ft_trace_map_pages(void *data, struct address_space *mapping,
			       pgoff_t start, pgoff_t end)
{
	struct ft_map_pages_trace *t = data;

	if (mapping != t->mapping)
		return;
	t->start = start;
	t->end = end;
	t->calls++;
}

static void ft_untrace_map_pages(void *data)
{
	unregister_trace_mm_filemap_map_pages(ft_trace_map_pages, data);
	tracepoint_synchronize_unregister();
}
#endif

/*
 * Fault-around that maps pages reports it once on the mm_filemap_map_pages
 * tracepoint, for its mapping: the range it looked at, its end clamped to
 * the file's last page.
 */
static void filemap_map_pages_tracepoint_test(struct kunit *test)
{
#ifdef CONFIG_TRACEPOINTS
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	struct ft_map_pages_trace *t;
	pgoff_t index;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->mapping = ft->file->f_mapping;
	for (index = FT_LAST_PAGE - 3; index <= FT_LAST_PAGE; index++)
		ft_cache_page(test, ft, index);
	KUNIT_ASSERT_EQ(test, 0,
			register_trace_mm_filemap_map_pages(ft_trace_map_pages,
							    t));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   ft_untrace_map_pages,
							   t));

	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE,
			ft_map_pages(test, &map, FT_LAST_PAGE - 1,
				     FT_LAST_PAGE - 5, FT_LAST_PAGE + 4, 0));
	KUNIT_EXPECT_EQ(test, 1U, t->calls);
	KUNIT_EXPECT_EQ(test, FT_LAST_PAGE - 5, t->start);
	KUNIT_EXPECT_EQ(test, FT_LAST_PAGE, t->end);
#else
	kunit_skip(test, "needs CONFIG_TRACEPOINTS: run with --arch=x86_64");
#endif
}

static struct kunit_case ft_mmap_miss_cases[] = {
	KUNIT_CASE_PARAM(do_sync_mmap_readahead_test, ft_sync_gen_params),
	KUNIT_CASE(do_sync_mmap_readahead_seq_test),
	KUNIT_CASE(do_sync_mmap_readahead_threshold_test),
	KUNIT_CASE(do_sync_mmap_readahead_large_folio_test),
	KUNIT_CASE_PARAM(do_sync_mmap_readahead_hugepage_test,
			 ft_huge_gen_params),
	KUNIT_CASE_PARAM(do_async_mmap_readahead_test, ft_async_gen_params),
	KUNIT_CASE_PARAM(filemap_fault_hit_test, ft_hit_gen_params),
	KUNIT_CASE(filemap_fault_miss_test),
	KUNIT_CASE_PARAM(filemap_map_pages_credit_test, ft_credit_gen_params),
	KUNIT_CASE(filemap_map_pages_rss_test),
	KUNIT_CASE_PARAM(filemap_map_pages_range_test, ft_range_gen_params),
	KUNIT_CASE_PARAM(filemap_map_pages_large_folio_range_test,
			 ft_large_range_gen_params),
	KUNIT_CASE(filemap_map_pages_pmd_test),
	KUNIT_CASE(filemap_map_pages_tracepoint_test),
	{}
};

static struct kunit_suite ft_mmap_miss_suite = {
	.name = "mm_filemap_mmap_miss",
	.test_cases = ft_mmap_miss_cases,
};

/* -------------------------------------------------------------------------
 * mm_filemap_fault_around: the proposal to tighten mmap_miss hit accounting
 *
 * P1: fault-around credits a hit only when it maps the faulting address
 *     itself: not for the neighbours it maps along with it, and not when
 *     the PTE there is already populated.
 * P2: fault-around credits nothing on a FAULT_FLAG_TRIED retry.
 *
 * These tests fail on a tree without the patch they name.
 */

static void ft_cache_pages(struct kunit *test, struct ft_file *ft,
			   pgoff_t first, pgoff_t last, pgoff_t skip)
{
	pgoff_t i;

	for (i = first; i <= last; i++)
		if (i != skip)
			ft_cache_page(test, ft, i);
}

/*
 * What the PTE at the faulting address holds before fault-around runs:
 * nothing, a page that a racing fault mapped, or a PTE marker.
 */
enum ft_faulting_pte {
	FT_FAULTING_PTE_NONE,
	FT_FAULTING_PTE_PRESENT,
	FT_FAULTING_PTE_MARKER,
};

static void ft_populate_faulting_pte(struct kunit *test, struct ft_map *map,
				     pgoff_t index, enum ft_faulting_pte state)
{
	switch (state) {
	case FT_FAULTING_PTE_NONE:
		break;
	case FT_FAULTING_PTE_PRESENT:
		/*
		 * The racing fault: a write fault on the private mapping maps
		 * its copy of the page there, and nothing around it.
		 */
		KUNIT_ASSERT_EQ_MSG(test, 0,
				    ft_handle_fault(map, index, FAULT_FLAG_WRITE) &
				    VM_FAULT_ERROR, "write fault at page %lu", index);
		break;
	case FT_FAULTING_PTE_MARKER:
		/* A poisoned swap-in: fault-around leaves it to the fault path. */
		KUNIT_ASSERT_TRUE_MSG(test,
				      mm_kunit_set_pte(map->mm, ft_addr(map, index),
						       make_pte_marker(PTE_MARKER_POISONED)),
				      "PTE marker at page %lu", index);
		break;
	}
}

struct ft_faulting_pte_case {
	const char *desc;
	enum ft_faulting_pte pte;
	/* mmap_miss after fault-around, from FT_FAULTING_PTE_MISS */
	unsigned int miss_after;
};

#define FT_FAULTING_PTE_MISS	10U

/*
 * P1 credits a hit only when this call maps the faulting address. A PTE
 * already populated there (a racing fault mapped it, or a marker sits
 * there) is left alone and earns nothing; the neighbours are mapped in
 * every case.
 */
static const struct ft_faulting_pte_case ft_faulting_pte_cases[] = {
	{
		.desc = "faulting PTE none: mapped, one hit",
		.pte = FT_FAULTING_PTE_NONE,
		.miss_after = FT_FAULTING_PTE_MISS - 1,
	},
	{
		.desc = "faulting PTE present: left, no hit",
		.pte = FT_FAULTING_PTE_PRESENT,
		.miss_after = FT_FAULTING_PTE_MISS,
	},
	{
		.desc = "faulting PTE marker: left, no hit",
		.pte = FT_FAULTING_PTE_MARKER,
		.miss_after = FT_FAULTING_PTE_MISS,
	},
};

KUNIT_ARRAY_PARAM_DESC(ft_faulting_pte, ft_faulting_pte_cases, desc);

/*
 * Fault-around at page 1000 over [992, 1007], all cached (in order-0
 * folios, or in one 16-page folio if @large), with the faulting PTE as the
 * case says.
 */
static void ft_faulting_pte_fault_around(struct kunit *test, bool large)
{
	const struct ft_faulting_pte_case *c = test->param_value;
	bool none = c->pte == FT_FAULTING_PTE_NONE;
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map;
	vm_fault_t ret;
	pte_t pte;

#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	if (large)
		ft_cache_large_folio(test, ft, 992, 4);
#endif
	if (!large)
		ft_cache_pages(test, ft, 992, 1007, ULONG_MAX);
	map = ft_mmap_file(test, ft, PROT_READ | PROT_WRITE);
	ft_populate_faulting_pte(test, &map, 1000, c->pte);
	ft_set_mmap_miss(ft, FT_FAULTING_PTE_MISS);

	ret = ft_map_pages(test, &map, 1000, 992, 1007, 0);

	KUNIT_EXPECT_EQ(test, c->miss_after, ft_mmap_miss(ft));
	KUNIT_EXPECT_EQ_MSG(test, none ? VM_FAULT_NOPAGE : 0, ret,
			    "fault-around maps the faulting page only if its PTE is none");
	KUNIT_EXPECT_TRUE(test, ft_pte_present(&map, ft_addr(&map, 999)));
	KUNIT_EXPECT_TRUE(test, ft_pte_present(&map, ft_addr(&map, 1001)));
	KUNIT_ASSERT_TRUE(test, ft_read_pte(&map, ft_addr(&map, 1000), &pte));
	KUNIT_EXPECT_EQ_MSG(test, c->pte == FT_FAULTING_PTE_MARKER,
			    is_pte_marker(pte), "the marker is left in place");
	KUNIT_EXPECT_EQ_MSG(test, c->pte != FT_FAULTING_PTE_MARKER,
			    pte_present(pte), "the faulting page is mapped");
}

static void fault_around_credit_needs_faulting_pte_none_test(struct kunit *test)
{
	ft_faulting_pte_fault_around(test, false);
}

static void fault_around_credit_large_folio_needs_pte_none_test(struct kunit *test)
{
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	ft_faulting_pte_fault_around(test, true);
#else
	kunit_skip(test, "needs large folios (THP): run with --arch=x86_64");
#endif
}

/* P1: the neighbours are mapped, but only the faulting page is a hit. */
static void fault_around_credit_faulting_page_only_test(struct kunit *test)
{
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	pgoff_t i;

	ft_cache_pages(test, ft, 998, 1002, ULONG_MAX);
	ft_set_mmap_miss(ft, 10);

	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE,
			ft_map_pages(test, &map, 1000, 992, 1007, 0));
	for (i = 998; i <= 1002; i++)
		KUNIT_EXPECT_TRUE_MSG(test, ft_pte_present(&map, ft_addr(&map, i)),
				      "page %lu mapped by fault-around", i);
	KUNIT_EXPECT_EQ(test, 9U, ft_mmap_miss(ft));
}

/* P1: cached neighbours of a faulting page that is not cached: no hit. */
static void fault_around_credit_none_for_neighbours_test(struct kunit *test)
{
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);

	ft_cache_pages(test, ft, 998, 1002, 1000);
	ft_set_mmap_miss(ft, 10);

	KUNIT_EXPECT_EQ(test, 0, ft_map_pages(test, &map, 1000, 992, 1007, 0));
	KUNIT_EXPECT_TRUE(test, ft_pte_present(&map, ft_addr(&map, 999)));
	KUNIT_EXPECT_FALSE(test, ft_pte_present(&map, ft_addr(&map, 1000)));
	KUNIT_EXPECT_EQ(test, 10U, ft_mmap_miss(ft));
}

/* P1 keeps the PG_workingset exclusion for the faulting page. */
static void fault_around_credit_none_for_workingset_test(struct kunit *test)
{
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);

	ft_cache_pages(test, ft, 998, 1002, 1000);
	folio_set_workingset(ft_cache_page(test, ft, 1000));
	ft_set_mmap_miss(ft, 10);

	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE,
			ft_map_pages(test, &map, 1000, 992, 1007, 0));
	KUNIT_EXPECT_EQ(test, 10U, ft_mmap_miss(ft));
}

/* P2: a retry maps what is cached but credits nothing. */
static void fault_around_retry_credits_nothing_test(struct kunit *test)
{
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);

	ft_cache_pages(test, ft, 1000, 1000, ULONG_MAX);
	ft_set_mmap_miss(ft, 10);

	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE,
			ft_map_pages(test, &map, 1000, 992, 1007,
				     FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_TRIED));
	KUNIT_EXPECT_TRUE(test, ft_pte_present(&map, ft_addr(&map, 1000)));
	KUNIT_EXPECT_EQ(test, 10U, ft_mmap_miss(ft));
}

/*
 * The first half of a miss at page 1000: sync read-around with the lock
 * dropped, VM_FAULT_RETRY, and one miss counted.
 */
static void ft_expect_miss_unlocked(struct kunit *test, struct ft_file *ft,
				    vm_fault_t ret, const char *lock)
{
	KUNIT_ASSERT_EQ_MSG(test, VM_FAULT_MAJOR | VM_FAULT_RETRY, ret,
			    "the miss reads around with the %s dropped", lock);
	KUNIT_EXPECT_EQ(test, 1U, ft_mmap_miss(ft));
	ft_expect_reads(test, ft, 1000 - FT_RA_PAGES / 2, FT_RA_PAGES,
			"read-around");
	ft_forget_reads(ft);
}

/*
 * The second half: the retry under the mmap lock, with FAULT_FLAG_TRIED,
 * maps the page through fault-around, reads nothing, and keeps the miss.
 */
static void ft_expect_retry_keeps_miss(struct kunit *test, struct ft_map *map,
				       unsigned int flags)
{
	struct ft_file *ft = map->ft;
	vm_fault_t ret = ft_handle_fault(map, 1000, flags | FAULT_FLAG_TRIED);

	KUNIT_ASSERT_EQ_MSG(test, VM_FAULT_NOPAGE, ret,
			    "the retry maps the page through fault-around");
	KUNIT_EXPECT_TRUE(test, ft_pte_present(map, ft_addr(map, 1000)));
	KUNIT_EXPECT_EQ(test, 0UL, ft->nr_reads);
	KUNIT_EXPECT_EQ_MSG(test, 1U, ft_mmap_miss(ft), "the retry kept the miss");
}

/*
 * P2, the whole sequence through the real fault handler: a read fault
 * misses, reads around with the mmap lock dropped and returns
 * VM_FAULT_RETRY; the retry, with FAULT_FLAG_TRIED, maps the faulting page
 * through fault-around. The retry must keep the miss.
 */
static void fault_around_retry_keeps_the_miss_test(struct kunit *test)
{
	unsigned int flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE;
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);

	ft_expect_miss_unlocked(test, ft, ft_handle_fault(&map, 1000, flags),
				"mmap lock");
	ft_expect_retry_keeps_miss(test, &map, flags);
}

/*
 * P1 and P2 on a large folio, mapped by filemap_map_folio_range(): a
 * 16-page folio fills the fault-around window. Fault-around maps all of
 * it; P1 credits only the faulting page, P2 nothing on a retry.
 */
static void ft_large_folio_fault_around(struct kunit *test, unsigned int flags,
					unsigned int miss_after)
{
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map;
	pgoff_t i;

	ft_cache_large_folio(test, ft, 992, 4);
	map = ft_mmap_file(test, ft, PROT_READ);
	ft_set_mmap_miss(ft, 20);

	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE,
			ft_map_pages(test, &map, 1000, 992, 1007, flags));
	for (i = 992; i <= 1007; i++)
		KUNIT_EXPECT_TRUE_MSG(test, ft_pte_present(&map, ft_addr(&map, i)),
				      "page %lu mapped by fault-around", i);
	KUNIT_EXPECT_EQ(test, miss_after, ft_mmap_miss(ft));
#else
	kunit_skip(test, "needs large folios (THP): run with --arch=x86_64");
#endif
}

static void fault_around_credit_large_folio_faulting_page_only_test(struct kunit *test)
{
	ft_large_folio_fault_around(test, 0, 19);
}

static void fault_around_retry_large_folio_credits_nothing_test(struct kunit *test)
{
	ft_large_folio_fault_around(test, FAULT_FLAG_TRIED, 20);
}

/*
 * P2 under the per-VMA lock: a read fault that misses under
 * FAULT_FLAG_VMA_LOCK reads around, drops the VMA lock and returns
 * VM_FAULT_RETRY; the arch handler retries under the mmap lock with
 * FAULT_FLAG_TRIED, and that retry must keep the miss.
 */
static void fault_around_retry_after_vma_lock_keeps_the_miss_test(struct kunit *test)
{
#ifdef CONFIG_PER_VMA_LOCK
	unsigned int flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE;
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	struct vm_area_struct *vma;
	vm_fault_t ret;

	vma = lock_vma_under_rcu(map.mm, ft_addr(&map, 1000));
	if (vma && vma != map.vma)
		vma_end_read(vma);
	KUNIT_ASSERT_PTR_EQ_MSG(test, map.vma, vma, "the VMA's lock");
	ret = handle_mm_fault(vma, ft_addr(&map, 1000),
			      flags | FAULT_FLAG_VMA_LOCK, NULL);
	if (!(ret & (VM_FAULT_RETRY | VM_FAULT_COMPLETED)))
		vma_end_read(vma);
	ft_expect_miss_unlocked(test, ft, ret, "VMA lock");
	ft_expect_retry_keeps_miss(test, &map, flags);
#else
	kunit_skip(test, "needs CONFIG_PER_VMA_LOCK (SMP): run with --arch=x86_64");
#endif
}

static struct kunit_case ft_fault_around_cases[] = {
	KUNIT_CASE(fault_around_credit_faulting_page_only_test),
	KUNIT_CASE(fault_around_credit_none_for_neighbours_test),
	KUNIT_CASE_PARAM(fault_around_credit_needs_faulting_pte_none_test,
			 ft_faulting_pte_gen_params),
	KUNIT_CASE_PARAM(fault_around_credit_large_folio_needs_pte_none_test,
			 ft_faulting_pte_gen_params),
	KUNIT_CASE(fault_around_credit_large_folio_faulting_page_only_test),
	KUNIT_CASE(fault_around_retry_large_folio_credits_nothing_test),
	KUNIT_CASE(fault_around_retry_after_vma_lock_keeps_the_miss_test),
	KUNIT_CASE(fault_around_credit_none_for_workingset_test),
	KUNIT_CASE(fault_around_retry_credits_nothing_test),
	KUNIT_CASE(fault_around_retry_keeps_the_miss_test),
	{}
};

static struct kunit_suite ft_fault_around_suite = {
	.name = "mm_filemap_fault_around",
	.test_cases = ft_fault_around_cases,
};

/* -------------------------------------------------------------------------
 * mm_filemap_pte_recheck: filemap_fault_recheck_pte_none()
 */

/*
 * Mark the VMA VM_LOCKED, as mlock() would, without populating it. The VMA
 * belongs to the test's own mm, which goes away with the test.
 */
static void ft_set_vm_locked(struct ft_map *map)
{
	ft_vma_flags(map, VM_LOCKED, 0);
}

struct ft_recheck_case {
	const char *desc;
	bool vm_locked, orig_pte_valid, pte_table, pte_present;
	vm_fault_t expected;
};

/*
 * Proceed (0) unless the VMA is VM_LOCKED and the fault saw a PTE
 * (FAULT_FLAG_ORIG_PTE_VALID); then VM_FAULT_NOPAGE if there is no page
 * table or the PTE is not none.
 */
static const struct ft_recheck_case ft_recheck_cases[] = {
	{ .desc = "not VM_LOCKED", .orig_pte_valid = true, .pte_table = true,
	  .pte_present = true, .expected = 0 },
	{ .desc = "no FAULT_FLAG_ORIG_PTE_VALID", .vm_locked = true,
	  .pte_table = true, .pte_present = true, .expected = 0 },
	{ .desc = "no page table", .vm_locked = true, .orig_pte_valid = true,
	  .expected = VM_FAULT_NOPAGE },
	{ .desc = "PTE present", .vm_locked = true, .orig_pte_valid = true,
	  .pte_table = true, .pte_present = true, .expected = VM_FAULT_NOPAGE },
	{ .desc = "PTE none", .vm_locked = true, .orig_pte_valid = true,
	  .pte_table = true, .expected = 0 },
};

KUNIT_ARRAY_PARAM_DESC(ft_recheck, ft_recheck_cases, desc);

static void filemap_fault_recheck_pte_none_test(struct kunit *test)
{
	const struct ft_recheck_case *c = test->param_value;
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	/* A page in a PMD region of its own, so "no page table" holds. */
	pgoff_t index = c->pte_table ? 1000 : 3000;
	struct vm_fault vmf = ft_vmf(&map, index,
				     c->orig_pte_valid ? FAULT_FLAG_ORIG_PTE_VALID : 0);
	vm_fault_t ret = 0;

	if (c->pte_present)
		KUNIT_ASSERT_EQ_MSG(test, 0,
				    ft_handle_fault(&map, index, 0) & VM_FAULT_ERROR,
				    "mapping the page");
	if (c->vm_locked)
		ft_set_vm_locked(&map);

	mmap_read_lock(map.mm);
	vmf.pmd = mm_kunit_alloc_pmd(map.mm, vmf.address, c->pte_table);
	if (vmf.pmd)
		ret = filemap_fault_recheck_pte_none(&vmf);
	mmap_read_unlock(map.mm);
	KUNIT_ASSERT_NOT_NULL_MSG(test, vmf.pmd, "PMD");

	KUNIT_EXPECT_EQ(test, c->expected, ret);
	KUNIT_EXPECT_EQ_MSG(test, c->pte_present,
			    ft_pte_present(&map, vmf.address), "PTE");
}

struct ft_no_major_case {
	const char *desc;
	bool vm_locked;
};

static const struct ft_no_major_case ft_no_major_cases[] = {
	{ .desc = "VM_LOCKED: NOPAGE, no major fault", .vm_locked = true },
	{ .desc = "not VM_LOCKED: a major fault" },
};

KUNIT_ARRAY_PARAM_DESC(ft_no_major, ft_no_major_cases, desc);

/*
 * What filemap_fault() does with the recheck: a private mapping whose page
 * was copied on write (the PTE maps the anon copy) and whose file folio was
 * then reclaimed. A fault there that saw the PTE (ORIG_PTE_VALID) while it
 * was briefly cleared finds no folio in the page cache. On a VM_LOCKED VMA
 * the recheck finds the PTE present: VM_FAULT_NOPAGE, no PGMAJFAULT, no
 * read. Elsewhere the fault proceeds as a major fault.
 */
static void filemap_fault_recheck_caller_test(struct kunit *test)
{
	const struct ft_no_major_case *c = test->param_value;
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ | PROT_WRITE);
	struct address_space *mapping = ft->file->f_mapping;
	struct vm_fault vmf = ft_vmf(&map, 1000, FAULT_FLAG_ORIG_PTE_VALID);
	unsigned long majfault;
	struct folio *folio;
	vm_fault_t ret;

	ret = ft_handle_fault(&map, 1000, FAULT_FLAG_WRITE);
	KUNIT_ASSERT_EQ_MSG(test, 0, ret & VM_FAULT_ERROR, "COW fault");
	lru_add_drain();
	invalidate_mapping_pages(mapping, 0, -1);
	folio = filemap_get_folio(mapping, 1000);
	KUNIT_ASSERT_TRUE_MSG(test, IS_ERR(folio), "file folio reclaimed");
	KUNIT_ASSERT_TRUE(test, ft_pte_present(&map, vmf.address));
	if (c->vm_locked)
		ft_set_vm_locked(&map);
	ft_forget_reads(ft);
	ft_set_mmap_miss(ft, 5);
	majfault = mm_kunit_vm_event(test, PGMAJFAULT);

	mmap_read_lock(map.mm);
	vmf.pmd = mm_find_pmd(map.mm, vmf.address);
	ret = vmf.pmd ? filemap_fault(&vmf) : 0;
	mmap_read_unlock(map.mm);
	KUNIT_ASSERT_NOT_NULL_MSG(test, vmf.pmd, "PMD");
	if (ret & VM_FAULT_LOCKED) {
		folio_unlock(page_folio(vmf.page));
		folio_put(page_folio(vmf.page));
	}

	if (c->vm_locked) {
		KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE, ret);
		KUNIT_EXPECT_EQ_MSG(test, majfault,
				    mm_kunit_vm_event(test, PGMAJFAULT),
				    "PGMAJFAULT");
		KUNIT_EXPECT_EQ_MSG(test, 0UL, ft->nr_reads, "pages read");
		KUNIT_EXPECT_EQ_MSG(test, 5U, ft_mmap_miss(ft), "mmap_miss");
	} else {
		KUNIT_EXPECT_EQ(test, VM_FAULT_MAJOR | VM_FAULT_LOCKED, ret);
		KUNIT_EXPECT_EQ_MSG(test, majfault + 1,
				    mm_kunit_vm_event(test, PGMAJFAULT),
				    "PGMAJFAULT");
		KUNIT_EXPECT_GT_MSG(test, ft->nr_reads, 0UL, "pages read");
	}
}

/*
 * The race the recheck is for. Another CPU updates the PTE the way NUMA
 * hinting or mprotect() do: under the PT lock it clears the PTE, then writes
 * it back. The fault's lockless read sees the PTE none and must not trust
 * it: it takes the PT lock, waits for the update and finds the PTE present.
 */
struct ft_race {
	struct mm_struct *mm;
	pmd_t *pmd;
	unsigned long addr;
	struct completion cleared, restored;
	bool no_pte;		/* the updater found no page table */
	bool fault_returned;	/* the fault returned without the lock */
	bool fault_waited;	/* the fault waited for the PT lock */
};

static int ft_race_pte_update(void *data)
{
	struct ft_race *r = data;
	spinlock_t *ptl;	/* the PT lock of the PTE page */
	pte_t *ptep, pte;

	ptep = pte_offset_map_nolock(r->mm, r->pmd, r->addr, &ptl);
	if (!ptep) {
		r->no_pte = true;
		complete(&r->cleared);
		complete(&r->restored);
		return 0;
	}
	spin_lock(ptl);
	pte = ptep_get_and_clear(r->mm, r->addr, ptep);
	complete(&r->cleared);
	/* Hold the PTE cleared until the fault waits for the lock. */
	while (!spin_is_contended(ptl) && !READ_ONCE(r->fault_returned))
		cpu_relax();
	r->fault_waited = spin_is_contended(ptl);
	set_pte_at(r->mm, r->addr, ptep, pte);
	spin_unlock(ptl);
	pte_unmap(ptep);
	complete(&r->restored);
	return 0;
}

static void ft_recheck_race(struct kunit *test)
{
	struct ft_file *ft = ft_create(test, FT_RA_PAGES);
	struct ft_map map = ft_mmap_file(test, ft, PROT_READ);
	struct vm_fault vmf = ft_vmf(&map, 1000, FAULT_FLAG_ORIG_PTE_VALID);
	struct task_struct *updater;
	struct ft_race race = {};
	vm_fault_t ret;
	int cpu;

	KUNIT_ASSERT_EQ(test, 0, ft_handle_fault(&map, 1000, 0) & VM_FAULT_ERROR);
	ft_set_vm_locked(&map);

	/* The mmap lock keeps the page tables while the updater uses them. */
	mmap_read_lock(map.mm);
	vmf.pmd = mm_find_pmd(map.mm, vmf.address);
	if (!vmf.pmd) {
		mmap_read_unlock(map.mm);
		KUNIT_FAIL(test, "no PMD for the mapped page");
		return;
	}
	race.mm = map.mm;
	race.pmd = vmf.pmd;
	race.addr = vmf.address;
	init_completion(&race.cleared);
	init_completion(&race.restored);

	/* The fault stays on this CPU, the update runs on another. */
	migrate_disable();
	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	updater = kthread_create(ft_race_pte_update, &race, "ft_pte_update");
	if (IS_ERR(updater)) {
		migrate_enable();
		mmap_read_unlock(map.mm);
		KUNIT_FAIL(test, "kthread_create: %ld", PTR_ERR(updater));
		return;
	}
	kthread_bind(updater, cpu);
	wake_up_process(updater);
	wait_for_completion(&race.cleared);

	ret = race.no_pte ? 0 : filemap_fault_recheck_pte_none(&vmf);
	WRITE_ONCE(race.fault_returned, true);
	wait_for_completion(&race.restored);
	migrate_enable();
	mmap_read_unlock(map.mm);

	KUNIT_ASSERT_FALSE_MSG(test, race.no_pte, "no page table for the mapped page");
	KUNIT_EXPECT_TRUE_MSG(test, race.fault_waited,
			      "the fault did not wait for the PT lock");
	KUNIT_EXPECT_EQ_MSG(test, VM_FAULT_NOPAGE, ret,
			    "the PTE cleared under the PT lock was taken as none");
	KUNIT_EXPECT_TRUE(test, ft_pte_present(&map, vmf.address));
}

static void filemap_fault_recheck_race_test(struct kunit *test)
{
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs (UML is uniprocessor): run with --arch=x86_64");
	ft_recheck_race(test);
}

static struct kunit_case ft_pte_recheck_cases[] = {
	KUNIT_CASE_PARAM(filemap_fault_recheck_pte_none_test,
			 ft_recheck_gen_params),
	KUNIT_CASE_PARAM(filemap_fault_recheck_caller_test,
			 ft_no_major_gen_params),
	KUNIT_CASE(filemap_fault_recheck_race_test),
	{}
};

static struct kunit_suite ft_pte_recheck_suite = {
	.name = "mm_filemap_pte_recheck",
	.test_cases = ft_pte_recheck_cases,
};

kunit_test_suites(&ft_mmap_miss_suite, &ft_fault_around_suite,
		  &ft_pte_recheck_suite);

#endif /* CONFIG_MM_FILEMAP_KUNIT_TEST */
