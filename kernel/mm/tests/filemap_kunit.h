/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the mmap fault paths of mm/filemap.c.
 *
 * This file is included at the end of mm/filemap.c, so that the tests can
 * call its static functions (do_sync_mmap_readahead(),
 * do_async_mmap_readahead(), filemap_fault_recheck_pte_none(), ...).
 *
 * The file under test is a test-owned anonymous inode whose
 * address_space_operations are a stub backing store: it records which pages
 * it is asked to read and completes every read at once, with no I/O. The
 * tests map that file into an mm of their own with kunit_vm_mmap(), so the
 * VMAs, page tables and faults are real.
 *
 * Suites:
 *  - mm_filemap_mmap_miss: file->f_ra.mmap_miss, the per-file score of mmap
 *    page-cache misses that decides whether a major fault reads around, and
 *    the readahead each fault path starts;
 *  - mm_filemap_fault_around: filemap_map_pages(), which pages it maps and
 *    when it credits mmap_miss with a hit (only for the faulting address,
 *    only when it mapped it, never on a FAULT_FLAG_TRIED retry);
 *  - mm_filemap_pte_recheck: the PTE recheck before a major fault on
 *    mlocked VMAs, filemap_fault_recheck_pte_none().
 */

#ifdef CONFIG_MM_FILEMAP_KUNIT_TEST

#include <kunit/test.h>
#include <linux/anon_inodes.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/leafops.h>
#include <linux/mman.h>
#include <linux/pgtable.h>
#include <linux/sched/mm.h>
#include <linux/swapops.h>

#include "mm_kunit.h"

/* The test file: 4096 pages (16 MiB with 4 KiB pages). */
#define FILEMAP_TEST_FILE_PAGES		4096UL
/* The last page of the test files. */
#define FILEMAP_TEST_LAST_PAGE		(FILEMAP_TEST_FILE_PAGES - 1)
/* The read-around window most tests use. */
#define FILEMAP_TEST_RA_PAGES		32U
#define FILEMAP_TEST_MAX_READS		FILEMAP_TEST_FILE_PAGES
/* The flags of a first try from the arch fault handler: I/O drops the lock. */
#define FILEMAP_TEST_FAULT_FIRST	(FAULT_FLAG_ALLOW_RETRY | \
					 FAULT_FLAG_KILLABLE)
/* A value no readahead window takes in these tests. */
#define FILEMAP_TEST_RA_UNSET		0xdeadU
/* The order of a PMD mapping, defined without THP too. */
#define FILEMAP_TEST_PMD_ORDER		(PMD_SHIFT - PAGE_SHIFT)
#define FILEMAP_TEST_PMD_PAGES		BIT(FILEMAP_TEST_PMD_ORDER)
/*
 * The folios a VM_HUGEPAGE miss reads on a mapping that takes large
 * folios: the mapping's largest, at most 2 MiB (the PMD's size with 4 KiB
 * pages, 32 pages with 64 KiB pages).
 */
#define FILEMAP_TEST_HUGE_ORDER		min_t(unsigned int, \
					      MAX_PAGECACHE_ORDER, \
					      get_order(SZ_2M))
/*
 * The pages do_read_fault() maps around a fault at boot (fault_around_bytes,
 * 64 KiB, in mm/memory.c): with one page (64 KiB pages) it runs no
 * fault-around at all, and a fault on a cached page maps it through
 * ->fault() and finish_fault().
 */
#define FILEMAP_TEST_FAULT_AROUND_PAGES	(SZ_64K >> PAGE_SHIFT)

struct filemap_test_file {
	struct file *file;
	/* Pages the backing store was asked to read, in order. */
	pgoff_t reads[FILEMAP_TEST_MAX_READS];
	unsigned long nr_reads;
	/* The mm the file is mapped into, and the reads made under its lock. */
	struct mm_struct *mm;
	unsigned long locked_reads;
};

/* Large folios in the page cache need THP (x86_64 and arm64, not UML). */
static void filemap_test_need_thp(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE))
		kunit_skip(test, "needs CONFIG_TRANSPARENT_HUGEPAGE");
}

/*
 * A folio mapped by a PMD needs THP and a page cache that holds folios of
 * the PMD's order (not arm64 with 64 KiB pages: a PMD maps 512 MiB there).
 */
static void filemap_test_need_pmd_folio(struct kunit *test)
{
	filemap_test_need_thp(test);
	if (FILEMAP_TEST_PMD_ORDER > MAX_PAGECACHE_ORDER)
		kunit_skip(test, "PMD order %d is above the page cache's %u",
			   FILEMAP_TEST_PMD_ORDER, MAX_PAGECACHE_ORDER);
}

/*
 * What handle_mm_fault() returns for a read fault on a cached page that it
 * maps: VM_FAULT_NOPAGE from fault-around, else VM_FAULT_LOCKED from
 * filemap_fault(), which finish_fault() leaves.
 */
static vm_fault_t filemap_test_cached_fault_ret(void)
{
	return FILEMAP_TEST_FAULT_AROUND_PAGES > 1 ? VM_FAULT_NOPAGE :
						     VM_FAULT_LOCKED;
}

/* -------------------------------------------------------------------------
 * The stub backing store
 */

static void filemap_test_record_read(struct folio *folio)
{
	struct filemap_test_file *ft = folio->mapping->host->i_private;
	long i;

	for (i = 0; i < folio_nr_pages(folio); i++) {
		if (ft->nr_reads < FILEMAP_TEST_MAX_READS)
			ft->reads[ft->nr_reads] = folio->index + i;
		ft->nr_reads++;
	}
	if (ft->mm && rwsem_is_locked(&ft->mm->mmap_lock))
		ft->locked_reads += folio_nr_pages(folio);
	folio_mark_uptodate(folio);
	folio_unlock(folio);
}

static void filemap_test_readahead(struct readahead_control *rac)
{
	struct folio *folio;

	while ((folio = readahead_folio(rac)))
		filemap_test_record_read(folio);
}

static int filemap_test_read_folio(struct file *file, struct folio *folio)
{
	filemap_test_record_read(folio);
	return 0;
}

static const struct address_space_operations filemap_test_aops = {
	.readahead	= filemap_test_readahead,
	.read_folio	= filemap_test_read_folio,
};

static const struct vm_operations_struct filemap_test_vm_ops = {
	.fault		= filemap_fault,
	.map_pages	= filemap_map_pages,
};

static int filemap_test_mmap(struct file *file, struct vm_area_struct *vma)
{
	vma->vm_ops = &filemap_test_vm_ops;
	return 0;
}

static const struct file_operations filemap_test_fops = {
	.mmap		= filemap_test_mmap,
};

static void filemap_test_put_file(void *data)
{
	struct file *file = data;

	truncate_inode_pages(file->f_mapping, 0);
	fput(file);
}

/*
 * A new file @name of @nr_pages pages whose page cache @aops reads, with
 * @private as its inode's, a read-around window of @ra_pages and nothing
 * in the page cache; dropped (with its page cache) by an action.
 */
static struct file *
filemap_test_new_file(struct kunit *test, const char *name,
		      const struct address_space_operations *aops,
		      void *private, unsigned long nr_pages,
		      unsigned int ra_pages)
{
	struct inode *inode;
	struct file *file;

	file = anon_inode_create_getfile(name, &filemap_test_fops, NULL,
					 O_RDWR, NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "anon inode: %ld",
			       PTR_ERR(file));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, filemap_test_put_file,
						  file));
	inode = file_inode(file);
	inode->i_private = private;
	inode->i_mapping->a_ops = aops;
	i_size_write(inode, nr_pages << PAGE_SHIFT);
	file->f_ra.ra_pages = ra_pages;
	file->f_ra.mmap_miss = 0;
	return file;
}

/*
 * A new file of FILEMAP_TEST_FILE_PAGES pages with the stub backing store,
 * a read-around window of @ra_pages and nothing in the page cache; dropped
 * (with its page cache) by an action.
 */
static struct filemap_test_file *filemap_test_create(struct kunit *test,
						     unsigned int ra_pages)
{
	struct filemap_test_file *ft;

	ft = kunit_kzalloc(test, sizeof(*ft), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ft);
	ft->file = filemap_test_new_file(test, "[mm_filemap_kunit]",
					 &filemap_test_aops, ft,
					 FILEMAP_TEST_FILE_PAGES, ra_pages);
	return ft;
}

static void filemap_test_put_shmem_file(void *data)
{
	fput(data);
}

/*
 * A new shmem file of FILEMAP_TEST_FILE_PAGES pages with nothing in the
 * page cache: fault-around as tmpfs runs it. No read goes through the stub
 * backing store.
 */
static struct filemap_test_file *filemap_test_create_shmem(struct kunit *test)
{
	struct filemap_test_file *ft;
	struct file *file;

	ft = kunit_kzalloc(test, sizeof(*ft), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ft);
	file = shmem_file_setup("[mm_filemap_kunit]",
				FILEMAP_TEST_FILE_PAGES << PAGE_SHIFT,
				EMPTY_VMA_FLAGS);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "shmem file: %ld",
			       PTR_ERR(file));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  filemap_test_put_shmem_file,
						  file));
	ft->file = file;
	return ft;
}

static void filemap_test_forget_reads(struct filemap_test_file *ft)
{
	ft->nr_reads = 0;
	ft->locked_reads = 0;
}

static unsigned short filemap_test_mmap_miss(struct filemap_test_file *ft)
{
	return READ_ONCE(ft->file->f_ra.mmap_miss);
}

static void filemap_test_set_mmap_miss(struct filemap_test_file *ft,
				       unsigned short val)
{
	WRITE_ONCE(ft->file->f_ra.mmap_miss, val);
}

/* Read page @index into the page cache, as an earlier read() would. */
static struct folio *filemap_test_cache_page(struct kunit *test,
					     struct filemap_test_file *ft,
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

/* Cache pages [@first, @last] but @skip. */
static void filemap_test_cache_pages(struct kunit *test,
				     struct filemap_test_file *ft,
				     pgoff_t first, pgoff_t last, pgoff_t skip)
{
	pgoff_t i;

	for (i = first; i <= last; i++)
		if (i != skip)
			filemap_test_cache_page(test, ft, i);
}

/*
 * Check that the backing store was asked to read exactly the pages
 * [@start, @start + @nr), each once, in order.
 */
static void filemap_test_expect_reads(struct kunit *test,
				      struct filemap_test_file *ft,
				      pgoff_t start, unsigned long nr,
				      const char *what)
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

struct filemap_test_map {
	struct filemap_test_file *ft;
	struct vm_area_struct *vma;
	struct mm_struct *mm;
};

struct filemap_test_unmap {
	struct mm_struct *mm;
	unsigned long addr, len;
};

/*
 * Unmap the test's mapping before its file goes, as a process unmaps (or
 * exits) before the last reference to a file it mapped is dropped. KUnit
 * runs the cleanup in another thread than the test, while the test's mm
 * may still be exiting: truncating the file would then zap PTEs of that
 * dying mm from here, racing with its exit_mmap(). The reference taken at
 * map time keeps the mm until the mapping is gone.
 */
static void filemap_test_unmap(void *data)
{
	struct filemap_test_unmap *u = data;
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
 * Map @nr_pages of @ft's file from its page @pgoff with @prot, MAP_PRIVATE,
 * into the test's own mm, at @hint if that is free (0: anywhere).
 */
static struct filemap_test_map filemap_test_mmap_at(struct kunit *test,
						    struct filemap_test_file *ft,
						    unsigned long hint,
						    pgoff_t pgoff,
						    unsigned long nr_pages,
						    unsigned long prot)
{
	struct filemap_test_map map = { .ft = ft };
	struct filemap_test_unmap *unmap;
	unsigned long addr;

	unmap = kunit_kzalloc(test, sizeof(*unmap), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, unmap);
	addr = kunit_vm_mmap(test, ft->file, hint, nr_pages << PAGE_SHIFT,
			     prot, MAP_PRIVATE, pgoff << PAGE_SHIFT);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_VALUE(addr) || !addr,
			       "kunit_vm_mmap: %ld", (long)addr);
	KUNIT_ASSERT_TRUE_MSG(test, !hint || addr == hint,
			      "mapped at %lx, not at %lx", addr, hint);
	unmap->mm = current->mm;
	unmap->addr = addr;
	unmap->len = nr_pages << PAGE_SHIFT;
	mmget(unmap->mm);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, filemap_test_unmap,
						  unmap));
	map.mm = current->mm;
	ft->mm = map.mm;
	mmap_read_lock(map.mm);
	map.vma = find_vma(map.mm, addr);
	mmap_read_unlock(map.mm);
	KUNIT_ASSERT_NOT_NULL(test, map.vma);
	KUNIT_ASSERT_EQ(test, addr, map.vma->vm_start);
	return map;
}

/* Map the whole file with @prot, MAP_PRIVATE, into the test's own mm. */
static struct filemap_test_map filemap_test_mmap_file(struct kunit *test,
						      struct filemap_test_file *ft,
						      unsigned long prot)
{
	return filemap_test_mmap_at(test, ft, 0, 0, FILEMAP_TEST_FILE_PAGES,
				    prot);
}

static unsigned long filemap_test_addr(const struct filemap_test_map *map,
				       pgoff_t index)
{
	return map->vma->vm_start +
	       ((index - map->vma->vm_pgoff) << PAGE_SHIFT);
}

/*
 * Add @set to the VMA's flags, accounting the VMA as mprotect() and
 * mlock() would (exec_vm, locked_vm), so that munmap() finds the counts
 * it takes the VMA off.
 */
static void filemap_test_vma_flags(struct filemap_test_map *map,
				   vm_flags_t set)
{
	struct vm_area_struct *vma = map->vma;
	long nr_pages = vma_pages(vma);

	mmap_write_lock(map->mm);
	vm_stat_account(map->mm, vma->vm_flags, -nr_pages);
	if ((set & VM_LOCKED) && !(vma->vm_flags & VM_LOCKED))
		map->mm->locked_vm += nr_pages;
	vm_flags_mod(vma, set, 0);
	vm_stat_account(map->mm, vma->vm_flags, nr_pages);
	mmap_write_unlock(map->mm);
}

/*
 * Read the PTE that maps page @index, under the mmap lock, allocating
 * nothing. Returns false if no page table covers it.
 */
static bool filemap_test_read_pte(struct filemap_test_map *map, pgoff_t index,
				  pte_t *ptent)
{
	unsigned long addr = filemap_test_addr(map, index);
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

/* Whether a present PTE maps page @index. */
static bool filemap_test_pte_present(struct filemap_test_map *map,
				     pgoff_t index)
{
	pte_t pte;

	return filemap_test_read_pte(map, index, &pte) && pte_present(pte);
}

/*
 * After a call that may drop the mmap lock for I/O
 * (maybe_unlock_mmap_for_io()): the lock is gone if the call returned the
 * file it pinned. Release what is left and say whether the call dropped it.
 */
static bool filemap_test_release_fault_lock(struct filemap_test_map *map,
					    struct file *fpin)
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
static struct vm_fault filemap_test_vmf(const struct filemap_test_map *map,
					pgoff_t index, unsigned int flags)
{
	struct vm_fault vmf = {
		.vma = map->vma,
		.address = filemap_test_addr(map, index),
		.real_address = filemap_test_addr(map, index),
		.pgoff = index,
		.gfp_mask = mapping_gfp_mask(map->ft->file->f_mapping),
		.flags = flags,
	};

	return vmf;
}

/* Run the real fault handler for a fault at page @index. */
static vm_fault_t filemap_test_handle_fault(struct filemap_test_map *map,
					    pgoff_t index, unsigned int flags)
{
	vm_fault_t ret;

	mmap_read_lock(map->mm);
	ret = handle_mm_fault(map->vma, filemap_test_addr(map, index), flags,
			      NULL);
	if (!(ret & VM_FAULT_RETRY))
		mmap_read_unlock(map->mm);
	return ret;
}

/* Run filemap_fault() at page @index, and release the page it returns. */
static vm_fault_t filemap_test_filemap_fault(struct filemap_test_map *map,
					     pgoff_t index, unsigned int flags,
					     struct folio **found)
{
	struct vm_fault vmf = filemap_test_vmf(map, index, flags);
	vm_fault_t ret;

	mmap_read_lock(map->mm);
	vmf.pmd = mm_find_pmd(map->mm, vmf.address);
	ret = filemap_fault(&vmf);
	if (!(ret & VM_FAULT_RETRY))
		mmap_read_unlock(map->mm);
	*found = NULL;
	if (ret & VM_FAULT_LOCKED) {
		*found = page_folio(vmf.page);
		folio_unlock(*found);
		folio_put(*found);
	}
	return ret;
}

/* -------------------------------------------------------------------------
 * mm_filemap_mmap_miss: do_sync_mmap_readahead()
 */

/*
 * do_sync_mmap_readahead() for a first try at page @index, under the mmap
 * lock; says whether it dropped the lock for the I/O.
 */
static bool filemap_test_sync_ra(struct filemap_test_map *map, pgoff_t index,
				 unsigned int flags)
{
	struct vm_fault vmf = filemap_test_vmf(map, index, flags);

	mmap_read_lock(map->mm);
	return filemap_test_release_fault_lock(map,
					       do_sync_mmap_readahead(&vmf));
}

struct filemap_test_sync_case {
	const char *desc;
	vm_flags_t vm_flags;
	unsigned int ra_pages;
	/* The VMA: file pages [vma_pgoff, vma_pgoff + vma_pages). */
	pgoff_t vma_pgoff;
	unsigned long vma_pages;
	pgoff_t pgoff;
	/*
	 * The values of exec_folio_order() a VM_EXEC row is for, as a mask;
	 * 0: any. The row runs only where it is one of them.
	 */
	unsigned int exec_orders;
	/* file->f_ra.order before the miss, as a readahead left it. */
	unsigned int ra_order;
	unsigned short miss_before;
	unsigned short miss_after;
	/* The window left in file->f_ra, FILEMAP_TEST_RA_UNSET if none. */
	pgoff_t ra_start;
	unsigned int ra_size;
	unsigned int ra_async_size;
	/* The pages read: [read_start, read_start + nr_read). */
	pgoff_t read_start;
	unsigned long nr_read;
};

/*
 * On a page-cache miss: VM_RAND_READ without VM_EXEC and ra_pages == 0
 * read nothing and leave mmap_miss; VM_SEQ_READ reads ra_pages from the
 * fault (a small random read to page_cache_sync_ra(): the window state is
 * left) and leaves mmap_miss. Otherwise, unless the VMA has VM_SEQ_READ or
 * VM_EXEC, mmap_miss goes up by one, saturating at MMAP_LOTSAMISS * 10 =
 * 1000, and above MMAP_LOTSAMISS = 100 nothing is read. VM_EXEC reads
 * from the fault rounded down to a folio of exec_folio_order() (whatever
 * order the last readahead used), not before the VMA's start, to ra_pages
 * on rounded up to such a folio, not past the VMA's end, nothing async;
 * read-around reads ra_pages from max(0, pgoff - ra_pages / 2), a quarter
 * of them async.
 *
 * exec_folio_order() is 0 but on arm64, where it is the order of 64 KiB:
 * 4 with 4 KiB pages, 0 with 64 KiB pages. The VM_EXEC rows are given for
 * orders 0 and 4, each run where it is the kernel's order.
 */
static const struct filemap_test_sync_case filemap_test_sync_cases[] = {
	{
		.desc = "first miss reads around",
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 0,
		.miss_after = 1,
		.ra_start = 984,
		.ra_size = 32,
		.ra_async_size = 8,
		.read_start = 984,
		.nr_read = 32,
	},
	{
		.desc = "miss 100 still reads around",
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 99,
		.miss_after = 100,
		.ra_start = 984,
		.ra_size = 32,
		.ra_async_size = 8,
		.read_start = 984,
		.nr_read = 32,
	},
	{
		.desc = "miss 101 reads nothing",
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 100,
		.miss_after = 101,
		.ra_start = FILEMAP_TEST_RA_UNSET,
		.ra_size = FILEMAP_TEST_RA_UNSET,
		.ra_async_size = FILEMAP_TEST_RA_UNSET,
		.read_start = 0,
		.nr_read = 0,
	},
	{
		.desc = "miss 999 counts to the cap",
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 999,
		.miss_after = 1000,
		.ra_start = FILEMAP_TEST_RA_UNSET,
		.ra_size = FILEMAP_TEST_RA_UNSET,
		.ra_async_size = FILEMAP_TEST_RA_UNSET,
		.read_start = 0,
		.nr_read = 0,
	},
	{
		.desc = "saturated at 1000",
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 1000,
		.miss_after = 1000,
		.ra_start = FILEMAP_TEST_RA_UNSET,
		.ra_size = FILEMAP_TEST_RA_UNSET,
		.ra_async_size = FILEMAP_TEST_RA_UNSET,
		.read_start = 0,
		.nr_read = 0,
	},
	{
		.desc = "window start clamped at 0",
		.ra_pages = 32,
		.pgoff = 5,
		.miss_before = 0,
		.miss_after = 1,
		.ra_start = 0,
		.ra_size = 32,
		.ra_async_size = 8,
		.read_start = 0,
		.nr_read = 32,
	},
	{
		.desc = "window start at the file start",
		.ra_pages = 32,
		.pgoff = 16,
		.miss_before = 0,
		.miss_after = 1,
		.ra_start = 0,
		.ra_size = 32,
		.ra_async_size = 8,
		.read_start = 0,
		.nr_read = 32,
	},
	{
		.desc = "a 64-page window",
		.ra_pages = 64,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 8,
		.ra_start = 968,
		.ra_size = 64,
		.ra_async_size = 16,
		.read_start = 968,
		.nr_read = 64,
	},
	{
		.desc = "VM_RAND_READ reads nothing, leaves mmap_miss",
		.vm_flags = VM_RAND_READ,
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = FILEMAP_TEST_RA_UNSET,
		.ra_size = FILEMAP_TEST_RA_UNSET,
		.ra_async_size = FILEMAP_TEST_RA_UNSET,
		.read_start = 0,
		.nr_read = 0,
	},
	{
		.desc = "ra_pages 0 reads nothing, leaves mmap_miss",
		.ra_pages = 0,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = FILEMAP_TEST_RA_UNSET,
		.ra_size = FILEMAP_TEST_RA_UNSET,
		.ra_async_size = FILEMAP_TEST_RA_UNSET,
		.read_start = 0,
		.nr_read = 0,
	},
	{
		.desc = "VM_SEQ_READ reads ra_pages from the fault, leaves mmap_miss",
		.vm_flags = VM_SEQ_READ,
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = FILEMAP_TEST_RA_UNSET,
		.ra_size = FILEMAP_TEST_RA_UNSET,
		.ra_async_size = FILEMAP_TEST_RA_UNSET,
		.read_start = 1000,
		.nr_read = 32,
	},
	{
		.desc = "VM_SEQ_READ above the threshold still reads",
		.vm_flags = VM_SEQ_READ,
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 500,
		.miss_after = 500,
		.ra_start = FILEMAP_TEST_RA_UNSET,
		.ra_size = FILEMAP_TEST_RA_UNSET,
		.ra_async_size = FILEMAP_TEST_RA_UNSET,
		.read_start = 1000,
		.nr_read = 32,
	},
	{
		.desc = "VM_SEQ_READ with ra_pages 0 reads nothing",
		.vm_flags = VM_SEQ_READ,
		.ra_pages = 0,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = FILEMAP_TEST_RA_UNSET,
		.ra_size = FILEMAP_TEST_RA_UNSET,
		.ra_async_size = FILEMAP_TEST_RA_UNSET,
		.read_start = 0,
		.nr_read = 0,
	},
	{
		.desc = "VM_EXEC reads from the fault, leaves mmap_miss",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(0),
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 1000,
		.ra_size = 32,
		.ra_async_size = 0,
		.read_start = 1000,
		.nr_read = 32,
	},
	{
		.desc = "VM_EXEC at an odd page reads from it",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(0),
		.ra_pages = 32,
		.pgoff = 1001,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 1001,
		.ra_size = 32,
		.ra_async_size = 0,
		.read_start = 1001,
		.nr_read = 32,
	},
	{
		.desc = "VM_EXEC rounds to exec_folio_order(), not the last order",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(0),
		.ra_pages = 32,
		.pgoff = 1001,
		.ra_order = 2,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 1001,
		.ra_size = 32,
		.ra_async_size = 0,
		.read_start = 1001,
		.nr_read = 32,
	},
	{
		.desc = "VM_EXEC reads ra_pages, not rounded",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(0),
		.ra_pages = 40,
		.pgoff = 1001,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 1001,
		.ra_size = 40,
		.ra_async_size = 0,
		.read_start = 1001,
		.nr_read = 40,
	},
	{
		.desc = "VM_EXEC above the threshold still reads",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(0),
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 500,
		.miss_after = 500,
		.ra_start = 1000,
		.ra_size = 32,
		.ra_async_size = 0,
		.read_start = 1000,
		.nr_read = 32,
	},
	{
		.desc = "VM_EXEC window ends at the VMA's end",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(0),
		.ra_pages = 32,
		.vma_pgoff = 990,
		.vma_pages = 30,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 1000,
		.ra_size = 20,
		.ra_async_size = 0,
		.read_start = 1000,
		.nr_read = 20,
	},
	{
		.desc = "VM_RAND_READ | VM_EXEC reads the VM_EXEC window",
		.vm_flags = VM_RAND_READ | VM_EXEC,
		.exec_orders = BIT(0),
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 1000,
		.ra_size = 32,
		.ra_async_size = 0,
		.read_start = 1000,
		.nr_read = 32,
	},
	{
		.desc = "VM_EXEC reads from the fault's 16-page folio",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(4),
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 992,
		.ra_size = 32,
		.ra_async_size = 0,
		.read_start = 992,
		.nr_read = 32,
	},
	{
		.desc = "VM_EXEC at an odd page reads from its 16-page folio",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(4),
		.ra_pages = 32,
		.pgoff = 1001,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 992,
		.ra_size = 32,
		.ra_async_size = 0,
		.read_start = 992,
		.nr_read = 32,
	},
	{
		.desc = "VM_EXEC rounds to exec_folio_order() 4, not the last order",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(4),
		.ra_pages = 32,
		.pgoff = 1001,
		.ra_order = 2,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 992,
		.ra_size = 32,
		.ra_async_size = 0,
		.read_start = 992,
		.nr_read = 32,
	},
	{
		.desc = "VM_EXEC rounds the window's end up to a 16-page folio",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(4),
		.ra_pages = 40,
		.pgoff = 1001,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 992,
		.ra_size = 48,
		.ra_async_size = 0,
		.read_start = 992,
		.nr_read = 48,
	},
	{
		.desc = "VM_EXEC with order 4 above the threshold still reads",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(4),
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 500,
		.miss_after = 500,
		.ra_start = 992,
		.ra_size = 32,
		.ra_async_size = 0,
		.read_start = 992,
		.nr_read = 32,
	},
	{
		.desc = "VM_EXEC window with order 4 ends at the VMA's end",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(4),
		.ra_pages = 32,
		.vma_pgoff = 990,
		.vma_pages = 30,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 992,
		.ra_size = 28,
		.ra_async_size = 0,
		.read_start = 992,
		.nr_read = 28,
	},
	{
		.desc = "VM_EXEC window with order 4 starts at the VMA's start",
		.vm_flags = VM_EXEC,
		.exec_orders = BIT(4),
		.ra_pages = 32,
		.vma_pgoff = 995,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 995,
		.ra_size = 45,
		.ra_async_size = 0,
		.read_start = 995,
		.nr_read = 45,
	},
	{
		.desc = "VM_RAND_READ | VM_EXEC reads the order-4 VM_EXEC window",
		.vm_flags = VM_RAND_READ | VM_EXEC,
		.exec_orders = BIT(4),
		.ra_pages = 32,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = 992,
		.ra_size = 32,
		.ra_async_size = 0,
		.read_start = 992,
		.nr_read = 32,
	},
	{
		.desc = "VM_EXEC with ra_pages 0 reads nothing",
		.vm_flags = VM_EXEC,
		.ra_pages = 0,
		.pgoff = 1000,
		.miss_before = 7,
		.miss_after = 7,
		.ra_start = FILEMAP_TEST_RA_UNSET,
		.ra_size = FILEMAP_TEST_RA_UNSET,
		.ra_async_size = FILEMAP_TEST_RA_UNSET,
		.read_start = 0,
		.nr_read = 0,
	},
};

static bool filemap_test_sync_case_runs(const struct filemap_test_sync_case *c)
{
	return !c->exec_orders || (c->exec_orders & BIT(exec_folio_order()));
}

/* Run where no VM_EXEC row is for this kernel's exec_folio_order(). */
static const struct filemap_test_sync_case filemap_test_sync_no_exec_rows = {
	.desc = "no VM_EXEC rows for this exec_folio_order()",
};

/*
 * The rows of filemap_test_sync_cases[] for this kernel's
 * exec_folio_order(), and filemap_test_sync_no_exec_rows after them if
 * none of its VM_EXEC rows is.
 */
static const void *filemap_test_sync_gen_params(struct kunit *test,
						const void *prev, char *desc)
{
	const struct filemap_test_sync_case *end =
		filemap_test_sync_cases + ARRAY_SIZE(filemap_test_sync_cases);
	const struct filemap_test_sync_case *c;
	bool exec_rows = false;

	if (prev == &filemap_test_sync_no_exec_rows)
		return NULL;
	c = prev ? (const struct filemap_test_sync_case *)prev + 1 :
		   filemap_test_sync_cases;
	for (; c < end; c++) {
		if (filemap_test_sync_case_runs(c)) {
			strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
			return c;
		}
	}
	for (c = filemap_test_sync_cases; c < end; c++)
		exec_rows |= c->exec_orders && filemap_test_sync_case_runs(c);
	if (exec_rows)
		return NULL;
	strscpy(desc, filemap_test_sync_no_exec_rows.desc,
		KUNIT_PARAM_DESC_SIZE);
	return &filemap_test_sync_no_exec_rows;
}

static void filemap_test_sync_readahead(struct kunit *test)
{
	const struct filemap_test_sync_case *c = test->param_value;
	struct filemap_test_file *ft = filemap_test_create(test, c->ra_pages);
	unsigned long vma_pages = c->vma_pages ?:
				  FILEMAP_TEST_FILE_PAGES - c->vma_pgoff;
	struct filemap_test_map map = filemap_test_mmap_at(test, ft, 0,
							   c->vma_pgoff,
							   vma_pages,
							   PROT_READ);
	struct file_ra_state *ra = &ft->file->f_ra;
	bool dropped;

	if (c == &filemap_test_sync_no_exec_rows) {
		KUNIT_FAIL(test, "no VM_EXEC rows for exec_folio_order() %u",
			   exec_folio_order());
		return;
	}
	if (c->vm_flags)
		filemap_test_vma_flags(&map, c->vm_flags);
	filemap_test_set_mmap_miss(ft, c->miss_before);
	ra->start = FILEMAP_TEST_RA_UNSET;
	ra->size = FILEMAP_TEST_RA_UNSET;
	ra->async_size = FILEMAP_TEST_RA_UNSET;
	ra->order = c->ra_order;

	dropped = filemap_test_sync_ra(&map, c->pgoff, FILEMAP_TEST_FAULT_FIRST);

	/* The mmap lock is dropped for the I/O, before it, and only for it. */
	KUNIT_EXPECT_EQ(test, c->nr_read != 0, dropped);
	KUNIT_EXPECT_EQ(test, 0UL, ft->locked_reads);
	KUNIT_EXPECT_EQ(test, c->miss_after, filemap_test_mmap_miss(ft));
	KUNIT_EXPECT_EQ(test, c->ra_start, ra->start);
	KUNIT_EXPECT_EQ(test, c->ra_size, ra->size);
	KUNIT_EXPECT_EQ(test, c->ra_async_size, ra->async_size);
	filemap_test_expect_reads(test, ft, c->read_start, c->nr_read, c->desc);
}

/* Repeated misses count up one by one and stop reading around after 100. */
static void filemap_test_sync_readahead_threshold(struct kunit *test)
{
	struct filemap_test_file *ft = filemap_test_create(test, 2);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ);
	unsigned int i;

	for (i = 1; i <= 110; i++) {
		filemap_test_forget_reads(ft);
		/* Every fourth page: each fault is a miss. */
		filemap_test_sync_ra(&map, 4 * i, 0);
		KUNIT_ASSERT_EQ_MSG(test, i, filemap_test_mmap_miss(ft),
				    "miss %u", i);
		KUNIT_ASSERT_EQ_MSG(test, i <= 100 ? 2UL : 0UL, ft->nr_reads,
				    "miss %u: pages read", i);
	}
}

/* -------------------------------------------------------------------------
 * mm_filemap_mmap_miss: do_sync_mmap_readahead() on large folios (THP)
 */

struct filemap_test_huge_case {
	const char *desc;
	vm_flags_t vm_flags;
	unsigned int ra_pages;
	unsigned short miss_before;
	unsigned short miss_after;
	/*
	 * The mapping's largest folio order, set below 2 MiB's; 0: as
	 * mapping_set_large_folios() leaves it.
	 */
	unsigned int max_order;
	/* The fault: at page @offset of the file's @folio'th huge folio. */
	unsigned long folio;
	unsigned long offset;
	/* Huge folios read, from the fault's. */
	unsigned long folios;
};

/*
 * VM_HUGEPAGE on a mapping that takes large folios: read huge folios
 * (FILEMAP_TEST_HUGE_ORDER: min(the mapping's max order, order of 2 MiB))
 * from the aligned index: two unless VM_RAND_READ, the last async
 * (PG_readahead). Neither VM_RAND_READ nor ra_pages == 0 stops it; the
 * mmap_miss count and its threshold do (not for VM_SEQ_READ or VM_EXEC).
 * A mapping whose largest order is below 2 MiB's reads folios of that order.
 */
static const struct filemap_test_huge_case filemap_test_huge_cases[] = {
	{
		.desc = "fault at a folio boundary: two folios",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.miss_before = 0,
		.miss_after = 1,
		.folio = 2,
		.offset = 0,
		.folios = 2,
	},
	{
		.desc = "fault inside a folio: from the folio's start",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.miss_before = 0,
		.miss_after = 1,
		.folio = 2,
		.offset = 20,
		.folios = 2,
	},
	{
		.desc = "VM_RAND_READ: one folio",
		.vm_flags = VM_RAND_READ,
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.miss_before = 0,
		.miss_after = 1,
		.folio = 2,
		.offset = 20,
		.folios = 1,
	},
	{
		.desc = "ra_pages 0: still two folios",
		.ra_pages = 0,
		.miss_before = 0,
		.miss_after = 1,
		.folio = 2,
		.offset = 20,
		.folios = 2,
	},
	{
		.desc = "mmap_miss past the threshold: nothing read",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.miss_before = 100,
		.miss_after = 101,
		.folio = 2,
		.offset = 20,
		.folios = 0,
	},
	{
		.desc = "largest order 2: two order-2 folios",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.miss_before = 0,
		.miss_after = 1,
		.max_order = 2,
		.folio = 2,
		.offset = 3,
		.folios = 2,
	},
	{
		.desc = "VM_SEQ_READ: two folios, mmap_miss left",
		.vm_flags = VM_SEQ_READ,
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.miss_before = 500,
		.miss_after = 500,
		.folio = 2,
		.offset = 20,
		.folios = 2,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_test_huge, filemap_test_huge_cases, desc);

static void filemap_test_sync_readahead_hugepage(struct kunit *test)
{
	const struct filemap_test_huge_case *c = test->param_value;
	unsigned int order = c->max_order ?: FILEMAP_TEST_HUGE_ORDER;
	struct filemap_test_file *ft;
	struct filemap_test_map map;
	pgoff_t start = c->folio << order;
	pgoff_t async = start + ((c->folios - 1) << order);
	struct folio *folio;

	filemap_test_need_thp(test);
	ft = filemap_test_create(test, c->ra_pages);
	if (c->max_order)
		mapping_set_folio_order_range(ft->file->f_mapping, 0,
					      c->max_order);
	else
		mapping_set_large_folios(ft->file->f_mapping);
	map = filemap_test_mmap_file(test, ft, PROT_READ);
	filemap_test_vma_flags(&map, VM_HUGEPAGE | c->vm_flags);
	filemap_test_set_mmap_miss(ft, c->miss_before);

	filemap_test_sync_ra(&map, start + c->offset, FILEMAP_TEST_FAULT_FIRST);

	KUNIT_EXPECT_EQ(test, c->miss_after, filemap_test_mmap_miss(ft));
	filemap_test_expect_reads(test, ft, start, c->folios << order, c->desc);
	if (!c->folios)
		return;
	folio = filemap_get_folio(ft->file->f_mapping, async);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio), "page %lu cached", async);
	KUNIT_EXPECT_EQ(test, order, folio_order(folio));
	KUNIT_EXPECT_EQ(test, async, folio->index);
	KUNIT_EXPECT_TRUE(test, folio_test_readahead(folio));
	folio_put(folio);
}

struct filemap_test_large_ra_case {
	const char *desc;
	unsigned int ra_order;		/* the order the last readahead used */
	/* expected: the window's folios, each of this order at its index */
	unsigned int order;
};

/*
 * Read-around at page 1000 on a mapping that takes large folios asks
 * page_cache_ra_order() for order 0, whatever order the last readahead
 * used: the window, [984, 1016), comes in order-0 folios, and the miss
 * counts.
 */
static const struct filemap_test_large_ra_case filemap_test_large_ra_cases[] = {
	{
		.desc = "last readahead at order 2: order-0 folios",
		.ra_order = 2,
		.order = 0,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_test_large_ra, filemap_test_large_ra_cases,
		       desc);

static void filemap_test_sync_readahead_large_folio(struct kunit *test)
{
	const struct filemap_test_large_ra_case *c = test->param_value;
	struct filemap_test_file *ft;
	struct filemap_test_map map;
	pgoff_t start = 1000 - FILEMAP_TEST_RA_PAGES / 2;
	struct folio *folio;
	pgoff_t index;

	filemap_test_need_thp(test);
	ft = filemap_test_create(test, FILEMAP_TEST_RA_PAGES);
	mapping_set_large_folios(ft->file->f_mapping);
	map = filemap_test_mmap_file(test, ft, PROT_READ);
	filemap_test_set_mmap_miss(ft, 0);
	ft->file->f_ra.order = c->ra_order;
	filemap_test_sync_ra(&map, 1000, FILEMAP_TEST_FAULT_FIRST);

	KUNIT_EXPECT_EQ(test, 1, filemap_test_mmap_miss(ft));
	filemap_test_expect_reads(test, ft, start, FILEMAP_TEST_RA_PAGES,
				  "read-around");
	for (index = start; index < start + FILEMAP_TEST_RA_PAGES;
	     index += 1 << c->order) {
		folio = filemap_get_folio(ft->file->f_mapping, index);
		KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio), "page %lu cached",
				       index);
		KUNIT_EXPECT_EQ_MSG(test, c->order, folio_order(folio),
				    "order of the folio at page %lu", index);
		KUNIT_EXPECT_EQ_MSG(test, index, folio->index,
				    "first page of the folio at page %lu", index);
		folio_put(folio);
	}
}

/* -------------------------------------------------------------------------
 * mm_filemap_mmap_miss: page-cache hits, do_async_mmap_readahead()
 */

struct filemap_test_async_case {
	const char *desc;
	vm_flags_t vm_flags;
	unsigned int ra_pages;
	/* The hit, and its folio's state. */
	pgoff_t index;
	bool locked;
	bool readahead_mark;
	/* file->f_ra's window before the hit. */
	pgoff_t ra_start;
	unsigned int ra_size;
	unsigned int ra_async_size;
	unsigned short miss_before;
	unsigned short miss_after;
	/* The pages read: [read_start, read_start + nr_read). */
	pgoff_t read_start;
	unsigned long nr_read;
};

/*
 * A hit takes one off mmap_miss, never below 0, unless its folio is locked
 * or the VMA has VM_SEQ_READ or VM_EXEC. On a PG_readahead folio it then
 * asks page_cache_async_ra() for ra_pages: at the async mark of the window
 * in file->f_ra that reads the next window, ra_pages pages; without one,
 * from the first page not cached, up to ra_pages ahead and trimmed to the
 * order-2 alignment readahead ramps up to (31 of 32 pages from page 1001).
 * mmap_miss gates only the synchronous read-around of a miss: the async
 * read of a hit is the same at 0 and at the cap. VM_RAND_READ and
 * ra_pages 0 stop the async path before either.
 */
static const struct filemap_test_async_case filemap_test_async_cases[] = {
	{
		.desc = "hit takes one off",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1000,
		.miss_before = 5,
		.miss_after = 4,
	},
	{
		.desc = "hit at 1 gives 0",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1000,
		.miss_before = 1,
		.miss_after = 0,
	},
	{
		.desc = "hit at 0 stays 0",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1000,
		.miss_before = 0,
		.miss_after = 0,
	},
	{
		.desc = "hit at the cap",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1000,
		.miss_before = 1000,
		.miss_after = 999,
	},
	{
		.desc = "locked folio leaves mmap_miss",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1000,
		.locked = true,
		.miss_before = 5,
		.miss_after = 5,
	},
	{
		.desc = "VM_SEQ_READ leaves mmap_miss",
		.vm_flags = VM_SEQ_READ,
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1000,
		.miss_before = 5,
		.miss_after = 5,
	},
	{
		.desc = "VM_EXEC leaves mmap_miss",
		.vm_flags = VM_EXEC,
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1000,
		.miss_before = 5,
		.miss_after = 5,
	},
	{
		.desc = "readahead mark at the window's async mark: next window",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1008,
		.readahead_mark = true,
		.ra_start = 984,
		.ra_size = 32,
		.ra_async_size = 8,
		.miss_before = 5,
		.miss_after = 4,
		.read_start = 1016,
		.nr_read = 32,
	},
	{
		.desc = "readahead mark without a window: up to ra_pages ahead",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1000,
		.readahead_mark = true,
		.miss_before = 5,
		.miss_after = 4,
		.read_start = 1001,
		.nr_read = 31,
	},
	{
		.desc = "readahead mark at mmap_miss 0: read all the same",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1008,
		.readahead_mark = true,
		.ra_start = 984,
		.ra_size = 32,
		.ra_async_size = 8,
		.miss_before = 0,
		.miss_after = 0,
		.read_start = 1016,
		.nr_read = 32,
	},
	{
		.desc = "readahead mark at the cap: read all the same",
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1008,
		.readahead_mark = true,
		.ra_start = 984,
		.ra_size = 32,
		.ra_async_size = 8,
		.miss_before = MMAP_LOTSAMISS * 10,
		.miss_after = MMAP_LOTSAMISS * 10 - 1,
		.read_start = 1016,
		.nr_read = 32,
	},
	{
		.desc = "VM_SEQ_READ, readahead mark: read, mmap_miss left",
		.vm_flags = VM_SEQ_READ,
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1008,
		.readahead_mark = true,
		.ra_start = 984,
		.ra_size = 32,
		.ra_async_size = 8,
		.miss_before = 5,
		.miss_after = 5,
		.read_start = 1016,
		.nr_read = 32,
	},
	{
		.desc = "VM_RAND_READ: mmap_miss left, no readahead",
		.vm_flags = VM_RAND_READ,
		.ra_pages = FILEMAP_TEST_RA_PAGES,
		.index = 1000,
		.readahead_mark = true,
		.miss_before = 5,
		.miss_after = 5,
	},
	{
		.desc = "ra_pages 0: mmap_miss left, no readahead",
		.ra_pages = 0,
		.index = 1000,
		.readahead_mark = true,
		.miss_before = 5,
		.miss_after = 5,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_test_async, filemap_test_async_cases, desc);

/*
 * The row's VMA flags, readahead state and mmap_miss, and the folio of
 * the page it faults on, cached (PG_readahead if the row says so).
 */
static struct folio *
filemap_test_async_setup(struct kunit *test,
			 const struct filemap_test_async_case *c,
			 struct filemap_test_map *map)
{
	struct filemap_test_file *ft = map->ft;
	struct file_ra_state *ra = &ft->file->f_ra;
	struct folio *folio;

	if (c->vm_flags)
		filemap_test_vma_flags(map, c->vm_flags);
	folio = filemap_test_cache_page(test, ft, c->index);
	if (c->readahead_mark)
		folio_set_readahead(folio);
	filemap_test_forget_reads(ft);
	filemap_test_set_mmap_miss(ft, c->miss_before);
	ra->start = c->ra_start;
	ra->size = c->ra_size;
	ra->async_size = c->ra_async_size;
	ra->order = 0;
	return folio;
}

static void filemap_test_async_readahead(struct kunit *test)
{
	const struct filemap_test_async_case *c = test->param_value;
	struct filemap_test_file *ft = filemap_test_create(test, c->ra_pages);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ);
	struct vm_fault vmf = filemap_test_vmf(&map, c->index,
					       FILEMAP_TEST_FAULT_FIRST);
	struct folio *folio;
	struct file *fpin;
	bool dropped;

	folio = filemap_test_async_setup(test, c, &map);

	mmap_read_lock(map.mm);
	if (c->locked)
		folio_lock(folio);
	fpin = do_async_mmap_readahead(&vmf, folio);
	if (c->locked)
		folio_unlock(folio);
	dropped = filemap_test_release_fault_lock(&map, fpin);

	/*
	 * The mmap lock is dropped for the async read, before it, and only
	 * for it.
	 */
	KUNIT_EXPECT_EQ(test, c->nr_read != 0, dropped);
	KUNIT_EXPECT_EQ(test, 0UL, ft->locked_reads);
	KUNIT_EXPECT_EQ(test, c->miss_after, filemap_test_mmap_miss(ft));
	filemap_test_expect_reads(test, ft, c->read_start, c->nr_read, c->desc);
}

/* -------------------------------------------------------------------------
 * mm_filemap_mmap_miss: filemap_fault()
 */

struct filemap_test_hit_case {
	const char *desc;
	unsigned int flags;
	unsigned short miss_after;
};

/* A hit is a hit only on the first try: a retry found what the miss read. */
static const struct filemap_test_hit_case filemap_test_hit_cases[] = {
	{
		.desc = "first try takes one off",
		.flags = 0,
		.miss_after = 9,
	},
	{
		.desc = "FAULT_FLAG_TRIED retry leaves mmap_miss",
		.flags = FAULT_FLAG_TRIED,
		.miss_after = 10,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_test_hit, filemap_test_hit_cases, desc);

static void filemap_test_fault_hit(struct kunit *test)
{
	const struct filemap_test_hit_case *c = test->param_value;
	struct filemap_test_file *ft = filemap_test_create(test,
							   FILEMAP_TEST_RA_PAGES);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ);
	struct folio *folio, *found;
	vm_fault_t ret;

	folio = filemap_test_cache_page(test, ft, 1000);
	filemap_test_forget_reads(ft);
	filemap_test_set_mmap_miss(ft, 10);

	ret = filemap_test_filemap_fault(&map, 1000, c->flags, &found);

	KUNIT_EXPECT_EQ(test, VM_FAULT_LOCKED, ret);
	KUNIT_EXPECT_PTR_EQ(test, folio, found);
	KUNIT_EXPECT_EQ(test, c->miss_after, filemap_test_mmap_miss(ft));
	KUNIT_EXPECT_EQ(test, 0UL, ft->nr_reads);
}

/*
 * A miss through filemap_fault(): counted, read around, major. Called
 * directly, filemap_fault() counts no per-task maj_flt (handle_mm_fault()
 * does), hence the system-wide count.
 */
static void filemap_test_fault_miss(struct kunit *test)
{
	struct filemap_test_file *ft = filemap_test_create(test,
							   FILEMAP_TEST_RA_PAGES);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ);
	unsigned long majfault = mm_kunit_vm_event(test, PGMAJFAULT);
	struct folio *found;
	vm_fault_t ret;

	filemap_test_set_mmap_miss(ft, 10);

	ret = filemap_test_filemap_fault(&map, 1000, 0, &found);

	KUNIT_EXPECT_EQ(test, VM_FAULT_MAJOR | VM_FAULT_LOCKED, ret);
	KUNIT_EXPECT_EQ(test, 11, filemap_test_mmap_miss(ft));
	KUNIT_EXPECT_EQ(test, majfault + 1,
			mm_kunit_vm_event(test, PGMAJFAULT));
	filemap_test_expect_reads(test, ft, 1000 - FILEMAP_TEST_RA_PAGES / 2,
				  FILEMAP_TEST_RA_PAGES, "read-around");
}

/*
 * The first half of a miss at page 1000 through handle_mm_fault(): sync
 * read-around with the lock dropped, VM_FAULT_RETRY, and one miss counted.
 */
static void filemap_test_expect_miss_unlocked(struct kunit *test,
					      struct filemap_test_file *ft,
					      vm_fault_t ret)
{
	KUNIT_ASSERT_EQ(test, VM_FAULT_MAJOR | VM_FAULT_RETRY, ret);
	KUNIT_EXPECT_EQ(test, 1, filemap_test_mmap_miss(ft));
	filemap_test_expect_reads(test, ft, 1000 - FILEMAP_TEST_RA_PAGES / 2,
				  FILEMAP_TEST_RA_PAGES, "read-around");
	filemap_test_forget_reads(ft);
}

/*
 * The second half: the retry under the mmap lock, with FAULT_FLAG_TRIED,
 * maps the page (through fault-around where it runs), reads nothing and
 * keeps the miss.
 */
static void filemap_test_expect_retry_keeps_miss(struct kunit *test,
						 struct filemap_test_map *map)
{
	struct filemap_test_file *ft = map->ft;
	vm_fault_t ret;

	ret = filemap_test_handle_fault(map, 1000, FILEMAP_TEST_FAULT_FIRST |
					FAULT_FLAG_TRIED);
	KUNIT_ASSERT_EQ(test, filemap_test_cached_fault_ret(), ret);
	KUNIT_EXPECT_TRUE(test, filemap_test_pte_present(map, 1000));
	KUNIT_EXPECT_EQ(test, 0UL, ft->nr_reads);
	KUNIT_EXPECT_EQ(test, 1, filemap_test_mmap_miss(ft));
}

/*
 * Through handle_mm_fault(), as the arch fault handler runs it: a miss at
 * page 1000 reads around [984, 1016), marks page 1008 PG_readahead (a
 * quarter of the window async) and returns VM_FAULT_RETRY; its retry maps
 * the page and keeps the miss. A fault at page 1008 then finds it cached
 * but skipped by fault-around (PG_readahead): filemap_fault() counts the
 * hit and reads the next window, [1016, 1048), with the lock dropped; the
 * retry maps the page and credits nothing.
 */
static void filemap_test_fault_readahead_mark(struct kunit *test)
{
	struct filemap_test_file *ft = filemap_test_create(test,
							   FILEMAP_TEST_RA_PAGES);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ);
	unsigned int flags = FILEMAP_TEST_FAULT_FIRST;
	vm_fault_t ret;

	ret = filemap_test_handle_fault(&map, 1000, flags);
	filemap_test_expect_miss_unlocked(test, ft, ret);
	filemap_test_expect_retry_keeps_miss(test, &map);
	KUNIT_EXPECT_FALSE(test, filemap_test_pte_present(&map, 1008));

	KUNIT_EXPECT_EQ(test, VM_FAULT_RETRY,
			filemap_test_handle_fault(&map, 1008, flags));
	KUNIT_EXPECT_EQ(test, 0, filemap_test_mmap_miss(ft));
	filemap_test_expect_reads(test, ft, 1016, FILEMAP_TEST_RA_PAGES,
				  "async readahead");
	filemap_test_forget_reads(ft);
	KUNIT_EXPECT_EQ(test, filemap_test_cached_fault_ret(),
			filemap_test_handle_fault(&map, 1008,
						  flags | FAULT_FLAG_TRIED));
	KUNIT_EXPECT_TRUE(test, filemap_test_pte_present(&map, 1008));
	KUNIT_EXPECT_EQ(test, 0, filemap_test_mmap_miss(ft));
	KUNIT_EXPECT_EQ(test, 0UL, ft->nr_reads);
}

static struct kunit_case filemap_test_mmap_miss_cases[] = {
	KUNIT_CASE_PARAM(filemap_test_sync_readahead,
			 filemap_test_sync_gen_params),
	KUNIT_CASE(filemap_test_sync_readahead_threshold),
	KUNIT_CASE_PARAM(filemap_test_sync_readahead_hugepage,
			 filemap_test_huge_gen_params),
	KUNIT_CASE_PARAM(filemap_test_sync_readahead_large_folio,
			 filemap_test_large_ra_gen_params),
	KUNIT_CASE_PARAM(filemap_test_async_readahead,
			 filemap_test_async_gen_params),
	KUNIT_CASE_PARAM(filemap_test_fault_hit, filemap_test_hit_gen_params),
	KUNIT_CASE(filemap_test_fault_miss),
	KUNIT_CASE(filemap_test_fault_readahead_mark),
	{}
};

static struct kunit_suite filemap_test_mmap_miss_suite = {
	.name = "mm_filemap_mmap_miss",
	.test_cases = filemap_test_mmap_miss_cases,
};

/* -------------------------------------------------------------------------
 * mm_filemap_fault_around: filemap_map_pages()
 */

/*
 * Fault-around at page @index as do_fault_around() runs it over
 * [@first, @last] with a page table in place; returns what it returned.
 */
static vm_fault_t filemap_test_map_pages(struct kunit *test,
					 struct filemap_test_map *map,
					 pgoff_t index, pgoff_t first,
					 pgoff_t last, unsigned int flags)
{
	struct vm_fault vmf = filemap_test_vmf(map, index, flags);
	vm_fault_t ret = 0;

	mmap_read_lock(map->mm);
	vmf.pmd = mm_kunit_alloc_pmd(map->mm, vmf.address, true);
	if (vmf.pmd) {
		rcu_read_lock();
		ret = filemap_map_pages(&vmf, first, last);
		rcu_read_unlock();
	}
	mmap_read_unlock(map->mm);
	KUNIT_ASSERT_NOT_NULL_MSG(test, vmf.pmd, "page table for page %lu",
				  index);
	return ret;
}

/*
 * What the PTE at the faulting address holds before fault-around runs:
 * nothing, a page that a racing fault mapped, or a PTE marker.
 */
enum filemap_test_pte {
	FILEMAP_TEST_PTE_NONE,
	FILEMAP_TEST_PTE_PRESENT,
	FILEMAP_TEST_PTE_MARKER,
};

static void filemap_test_populate_pte(struct kunit *test,
				      struct filemap_test_map *map,
				      pgoff_t index, enum filemap_test_pte state)
{
	switch (state) {
	case FILEMAP_TEST_PTE_NONE:
		break;
	case FILEMAP_TEST_PTE_PRESENT:
		/*
		 * The racing fault: a write fault on the private mapping maps
		 * its copy of the page there, and nothing around it.
		 */
		KUNIT_ASSERT_EQ_MSG(test, 0,
				    filemap_test_handle_fault(map, index,
							      FAULT_FLAG_WRITE) &
				    VM_FAULT_ERROR,
				    "write fault at page %lu", index);
		break;
	case FILEMAP_TEST_PTE_MARKER:
		/* A poisoned swap-in: fault-around leaves it to the fault path. */
		KUNIT_ASSERT_TRUE_MSG(test,
				      mm_kunit_set_pte(map->mm,
						       filemap_test_addr(map, index),
						       make_pte_marker(PTE_MARKER_POISONED)),
				      "PTE marker at page %lu", index);
		break;
	}
}

struct filemap_test_credit_case {
	const char *desc;
	vm_flags_t vm_flags;
	unsigned int fault_flags;
	/* The faulting page 1000: cached, PG_workingset, its PTE. */
	bool faulting_cached;
	bool faulting_workingset;
	enum filemap_test_pte pte;
	/* The other cached pages, 998-1002, are PG_workingset. */
	bool neighbours_workingset;
	unsigned short miss_before;
	unsigned short miss_after;
	vm_fault_t ret;
};

/*
 * Fault-around at page 1000 over [992, 1007] with pages 998-1002 cached
 * maps the cached pages whose PTEs are none, and returns VM_FAULT_NOPAGE
 * if it mapped the faulting address. It takes one off mmap_miss (never
 * below 0) only then, only once, and not on a FAULT_FLAG_TRIED retry, not
 * for a PG_workingset folio, not in a VM_SEQ_READ or VM_EXEC VMA.
 */
static const struct filemap_test_credit_case filemap_test_credit_cases[] = {
	{
		.desc = "faulting page mapped: one credit",
		.faulting_cached = true,
		.pte = FILEMAP_TEST_PTE_NONE,
		.miss_before = 10,
		.miss_after = 9,
		.ret = VM_FAULT_NOPAGE,
	},
	{
		.desc = "faulting page at 1: to 0",
		.faulting_cached = true,
		.pte = FILEMAP_TEST_PTE_NONE,
		.miss_before = 1,
		.miss_after = 0,
		.ret = VM_FAULT_NOPAGE,
	},
	{
		.desc = "faulting page at 0: stays 0",
		.faulting_cached = true,
		.pte = FILEMAP_TEST_PTE_NONE,
		.miss_before = 0,
		.miss_after = 0,
		.ret = VM_FAULT_NOPAGE,
	},
	{
		.desc = "faulting page not cached: no credit for the neighbours",
		.faulting_cached = false,
		.pte = FILEMAP_TEST_PTE_NONE,
		.miss_before = 10,
		.miss_after = 10,
		.ret = 0,
	},
	{
		.desc = "faulting PTE present: left, no credit",
		.faulting_cached = true,
		.pte = FILEMAP_TEST_PTE_PRESENT,
		.miss_before = 10,
		.miss_after = 10,
		.ret = 0,
	},
	{
		.desc = "faulting PTE a marker: left, no credit",
		.faulting_cached = true,
		.pte = FILEMAP_TEST_PTE_MARKER,
		.miss_before = 10,
		.miss_after = 10,
		.ret = 0,
	},
	{
		.desc = "FAULT_FLAG_TRIED retry: mapped, no credit",
		.fault_flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_TRIED,
		.faulting_cached = true,
		.pte = FILEMAP_TEST_PTE_NONE,
		.miss_before = 10,
		.miss_after = 10,
		.ret = VM_FAULT_NOPAGE,
	},
	{
		.desc = "faulting folio PG_workingset: mapped, no credit",
		.faulting_cached = true,
		.faulting_workingset = true,
		.pte = FILEMAP_TEST_PTE_NONE,
		.miss_before = 10,
		.miss_after = 10,
		.ret = VM_FAULT_NOPAGE,
	},
	{
		.desc = "only the neighbours PG_workingset: one credit",
		.faulting_cached = true,
		.pte = FILEMAP_TEST_PTE_NONE,
		.neighbours_workingset = true,
		.miss_before = 10,
		.miss_after = 9,
		.ret = VM_FAULT_NOPAGE,
	},
	{
		.desc = "VM_SEQ_READ: mapped, no credit",
		.vm_flags = VM_SEQ_READ,
		.faulting_cached = true,
		.pte = FILEMAP_TEST_PTE_NONE,
		.miss_before = 10,
		.miss_after = 10,
		.ret = VM_FAULT_NOPAGE,
	},
	{
		.desc = "VM_EXEC: mapped, no credit",
		.vm_flags = VM_EXEC,
		.faulting_cached = true,
		.pte = FILEMAP_TEST_PTE_NONE,
		.miss_before = 10,
		.miss_after = 10,
		.ret = VM_FAULT_NOPAGE,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_test_credit, filemap_test_credit_cases, desc);

/*
 * Cache pages 998-1002, page 1000 (the faulting page) only if the row
 * says so, PG_workingset as the row says.
 */
static void filemap_test_credit_cache(struct kunit *test,
				      const struct filemap_test_credit_case *c,
				      struct filemap_test_file *ft)
{
	struct folio *folio;
	bool workingset;
	pgoff_t i;

	for (i = 998; i <= 1002; i++) {
		if (i == 1000 && !c->faulting_cached)
			continue;
		folio = filemap_test_cache_page(test, ft, i);
		workingset = i == 1000 ? c->faulting_workingset :
					 c->neighbours_workingset;
		if (workingset)
			folio_set_workingset(folio);
	}
}

static void filemap_test_map_pages_credit(struct kunit *test)
{
	const struct filemap_test_credit_case *c = test->param_value;
	struct filemap_test_file *ft = filemap_test_create(test,
							   FILEMAP_TEST_RA_PAGES);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ | PROT_WRITE);
	pte_t pte;

	filemap_test_credit_cache(test, c, ft);
	if (c->vm_flags)
		filemap_test_vma_flags(&map, c->vm_flags);
	filemap_test_populate_pte(test, &map, 1000, c->pte);
	filemap_test_set_mmap_miss(ft, c->miss_before);

	KUNIT_EXPECT_EQ(test, c->ret,
			filemap_test_map_pages(test, &map, 1000, 992, 1007,
					       c->fault_flags));
	KUNIT_EXPECT_EQ(test, c->miss_after, filemap_test_mmap_miss(ft));
	KUNIT_EXPECT_TRUE(test, filemap_test_pte_present(&map, 999));
	KUNIT_EXPECT_TRUE(test, filemap_test_pte_present(&map, 1001));
	/* The faulting page: mapped if cached, unless it holds a marker. */
	KUNIT_ASSERT_TRUE(test, filemap_test_read_pte(&map, 1000, &pte));
	KUNIT_EXPECT_EQ(test, c->pte == FILEMAP_TEST_PTE_MARKER,
			pte_is_marker(pte));
	KUNIT_EXPECT_EQ(test, c->faulting_cached &&
			c->pte != FILEMAP_TEST_PTE_MARKER, pte_present(pte));
}

/* The references on page @index's folio, less the lookup's own. */
static int filemap_test_page_refs(struct kunit *test,
				  struct filemap_test_file *ft, pgoff_t index,
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

/*
 * Fault-around adds each page it maps to the mm's file RSS once: a page
 * already mapped by an earlier fault-around is not counted again, and
 * keeps the references it had. The counter is summed over the CPUs: on
 * SMP get_mm_counter() leaves out the other CPUs' unfolded parts.
 */
static void filemap_test_map_pages_rss(struct kunit *test)
{
	struct filemap_test_file *ft = filemap_test_create(test,
							   FILEMAP_TEST_RA_PAGES);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ);
	long before, first, second;
	int refs, refs_after;
	pgoff_t index;
	bool locked;

	filemap_test_cache_pages(test, ft, 998, 1002, ULONG_MAX);
	before = get_mm_counter_sum(map.mm, MM_FILEPAGES);
	filemap_test_map_pages(test, &map, 1001, 1001, 1001, 0);
	first = get_mm_counter_sum(map.mm, MM_FILEPAGES);
	refs = filemap_test_page_refs(test, ft, 1001, &locked);
	filemap_test_map_pages(test, &map, 1000, 996, 1003, 0);
	second = get_mm_counter_sum(map.mm, MM_FILEPAGES);
	refs_after = filemap_test_page_refs(test, ft, 1001, &locked);

	/* One page mapped, then four more: the fifth was already. */
	KUNIT_EXPECT_EQ(test, 1L, first - before);
	KUNIT_EXPECT_EQ(test, 4L, second - first);
	KUNIT_EXPECT_EQ(test, refs, refs_after);
	for (index = 998; index <= 1002; index++)
		KUNIT_EXPECT_TRUE_MSG(test,
				      filemap_test_pte_present(&map, index),
				      "PTE of page %lu", index);
}

struct filemap_test_range_case {
	const char *desc;
	bool shmem;
	/* Pages the file has past FILEMAP_TEST_FILE_PAGES. */
	unsigned long longer;
	/* The file page the mapping starts at. */
	pgoff_t vm_pgoff;
	/* No page table yet: one preallocated, as do_fault_around() does. */
	bool no_table;
	/* Pages [cached_first, cached_last] are in the page cache. */
	pgoff_t cached_first;
	pgoff_t cached_last;
	/* The fault, and the range around it. */
	pgoff_t index;
	pgoff_t first;
	pgoff_t last;
	/* Every cached page mapped, or none. */
	bool mapped;
};

/*
 * Fault-around maps the cached pages of [first, last] that lie inside the
 * file, each at the address its file page has in the VMA, with one
 * reference for its PTE and its folio unlocked again, counts them in the
 * mm's file RSS (shmem RSS for a shmem file), and returns
 * VM_FAULT_NOPAGE if it mapped the faulting page. Where no page table
 * covers the range yet, it installs the one do_fault_around()
 * preallocated only if the first folio it finds ends before the file's
 * last page (no PMD across i_size) or the file is shmem; otherwise it
 * maps nothing and leaves the fault to map the page.
 */
static const struct filemap_test_range_case filemap_test_range_cases[] = {
	{
		.desc = "the file's last page is mapped",
		.cached_first = FILEMAP_TEST_LAST_PAGE - 3,
		.cached_last = FILEMAP_TEST_LAST_PAGE,
		.index = FILEMAP_TEST_LAST_PAGE - 1,
		.first = FILEMAP_TEST_LAST_PAGE - 5,
		.last = FILEMAP_TEST_LAST_PAGE + 4,
		.mapped = true,
	},
	{
		/* A length no power of two has, nor a multiple of a PMD. */
		.desc = "a file 17 pages longer: its last page is mapped",
		.longer = 17,
		.cached_first = FILEMAP_TEST_LAST_PAGE + 14,
		.cached_last = FILEMAP_TEST_LAST_PAGE + 17,
		.index = FILEMAP_TEST_LAST_PAGE + 16,
		.first = FILEMAP_TEST_LAST_PAGE + 12,
		.last = FILEMAP_TEST_LAST_PAGE + 21,
		.mapped = true,
	},
	{
		.desc = "a mapping from file page 512: at the pages' addresses",
		.vm_pgoff = 512,
		.cached_first = 1000,
		.cached_last = 1002,
		.index = 1001,
		.first = 998,
		.last = 1003,
		.mapped = true,
	},
	{
		.desc = "no page table, first folio ends before the last page: installed",
		.no_table = true,
		.cached_first = FILEMAP_TEST_LAST_PAGE - 1,
		.cached_last = FILEMAP_TEST_LAST_PAGE,
		.index = FILEMAP_TEST_LAST_PAGE,
		.first = FILEMAP_TEST_LAST_PAGE - 1,
		.last = FILEMAP_TEST_LAST_PAGE,
		.mapped = true,
	},
	{
		.desc = "no page table, first folio is the last page: nothing mapped",
		.no_table = true,
		.cached_first = FILEMAP_TEST_LAST_PAGE,
		.cached_last = FILEMAP_TEST_LAST_PAGE,
		.index = FILEMAP_TEST_LAST_PAGE,
		.first = FILEMAP_TEST_LAST_PAGE - 7,
		.last = FILEMAP_TEST_LAST_PAGE,
		.mapped = false,
	},
	{
		.desc = "shmem: counted as shmem pages",
		.shmem = true,
		.cached_first = 1000,
		.cached_last = 1002,
		.index = 1001,
		.first = 998,
		.last = 1003,
		.mapped = true,
	},
	{
		.desc = "shmem, no page table, the last page: installed all the same",
		.shmem = true,
		.no_table = true,
		.cached_first = FILEMAP_TEST_LAST_PAGE,
		.cached_last = FILEMAP_TEST_LAST_PAGE,
		.index = FILEMAP_TEST_LAST_PAGE,
		.first = FILEMAP_TEST_LAST_PAGE - 7,
		.last = FILEMAP_TEST_LAST_PAGE,
		.mapped = true,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_test_range, filemap_test_range_cases, desc);

/*
 * Fault-around at page @index as do_fault_around() runs it when no page
 * table covers the address yet: the PMD entry none, a page table
 * preallocated in vmf->prealloc_pte. Frees the table if it was not
 * installed and says whether it was.
 */
static vm_fault_t filemap_test_map_pages_no_table(struct kunit *test,
						  struct filemap_test_map *map,
						  pgoff_t index, pgoff_t first,
						  pgoff_t last, bool *installed)
{
	struct vm_fault vmf = filemap_test_vmf(map, index, 0);
	bool pmd_was_none = false;
	vm_fault_t ret = 0;

	mmap_read_lock(map->mm);
	vmf.pmd = mm_kunit_alloc_pmd(map->mm, vmf.address, false);
	vmf.prealloc_pte = pte_alloc_one(map->mm);
	if (vmf.pmd && vmf.prealloc_pte) {
		pmd_was_none = pmd_none(*vmf.pmd);
		if (pmd_was_none) {
			rcu_read_lock();
			ret = filemap_map_pages(&vmf, first, last);
			rcu_read_unlock();
		}
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

static void filemap_test_expect_range(struct kunit *test,
				      const struct filemap_test_range_case *c,
				      struct filemap_test_map *map,
				      const int *refs)
{
	unsigned long nr = c->cached_last - c->cached_first + 1, i;
	bool locked;

	for (i = 0; i < nr; i++) {
		pgoff_t index = c->cached_first + i;

		KUNIT_EXPECT_EQ_MSG(test, c->mapped,
				    filemap_test_pte_present(map, index),
				    "PTE of page %lu", index);
		KUNIT_EXPECT_EQ_MSG(test, refs[i] + (c->mapped ? 1 : 0),
				    filemap_test_page_refs(test, map->ft, index,
							   &locked),
				    "references of page %lu", index);
		KUNIT_EXPECT_FALSE_MSG(test, locked, "page %lu locked", index);
	}
}

/* Cache the row's pages; returns the references each has once cached. */
static int *filemap_test_cache_range(struct kunit *test,
				     const struct filemap_test_range_case *c,
				     struct filemap_test_file *ft)
{
	unsigned long nr = c->cached_last - c->cached_first + 1, i;
	int *refs = kunit_kcalloc(test, nr, sizeof(*refs), GFP_KERNEL);
	bool locked;

	KUNIT_ASSERT_NOT_NULL(test, refs);
	for (i = 0; i < nr; i++) {
		filemap_test_cache_page(test, ft, c->cached_first + i);
		refs[i] = filemap_test_page_refs(test, ft, c->cached_first + i,
						 &locked);
	}
	return refs;
}

/* Fault-around over the row's range, with no page table if it says so. */
static vm_fault_t
filemap_test_map_range(struct kunit *test,
		       const struct filemap_test_range_case *c,
		       struct filemap_test_map *map, bool *installed)
{
	if (c->no_table)
		return filemap_test_map_pages_no_table(test, map, c->index,
						       c->first, c->last,
						       installed);
	return filemap_test_map_pages(test, map, c->index, c->first, c->last,
				      0);
}

static void filemap_test_map_pages_range(struct kunit *test)
{
	const struct filemap_test_range_case *c = test->param_value;
	struct filemap_test_file *ft = c->shmem ? filemap_test_create_shmem(test) :
				       filemap_test_create(test, FILEMAP_TEST_RA_PAGES);
	unsigned long pages = FILEMAP_TEST_FILE_PAGES + c->longer;
	struct filemap_test_map map;
	int rss = c->shmem ? MM_SHMEMPAGES : MM_FILEPAGES;
	int other = c->shmem ? MM_FILEPAGES : MM_SHMEMPAGES;
	unsigned long nr = c->cached_last - c->cached_first + 1;
	long rss_before, other_before;
	bool installed = false;
	vm_fault_t ret;
	int *refs;

	if (c->longer)
		i_size_write(file_inode(ft->file), pages << PAGE_SHIFT);
	map = filemap_test_mmap_at(test, ft, 0, c->vm_pgoff,
				   pages - c->vm_pgoff, PROT_READ);
	refs = filemap_test_cache_range(test, c, ft);
	rss_before = get_mm_counter_sum(map.mm, rss);
	other_before = get_mm_counter_sum(map.mm, other);

	ret = filemap_test_map_range(test, c, &map, &installed);

	KUNIT_EXPECT_EQ(test, c->mapped ? VM_FAULT_NOPAGE : 0, ret);
	KUNIT_EXPECT_EQ(test, c->mapped && c->no_table, installed);
	KUNIT_EXPECT_EQ(test, c->mapped ? (long)nr : 0L,
			get_mm_counter_sum(map.mm, rss) - rss_before);
	KUNIT_EXPECT_EQ(test, 0L,
			get_mm_counter_sum(map.mm, other) - other_before);
	filemap_test_expect_range(test, c, &map, refs);
}

#ifdef CONFIG_TRACEPOINTS
struct filemap_test_trace {
	/* The test's mapping: others are not counted. */
	struct address_space *mapping;
	pgoff_t start, end;
	unsigned int calls;
};

static void filemap_test_trace_map_pages(void *data,
					 struct address_space *mapping,
					 pgoff_t start, pgoff_t end)
{
	struct filemap_test_trace *t = data;

	if (mapping != t->mapping)
		return;
	t->start = start;
	t->end = end;
	t->calls++;
}

static void filemap_test_untrace_map_pages(void *data)
{
	unregister_trace_mm_filemap_map_pages(filemap_test_trace_map_pages,
					      data);
	tracepoint_synchronize_unregister();
}
#endif

/*
 * Fault-around that maps pages reports it once on the mm_filemap_map_pages
 * tracepoint, for its mapping: the range it looked at, its end clamped to
 * the file's last page.
 */
static void filemap_test_map_pages_tracepoint(struct kunit *test)
{
#ifdef CONFIG_TRACEPOINTS
	struct filemap_test_file *ft = filemap_test_create(test,
							   FILEMAP_TEST_RA_PAGES);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ);
	struct filemap_test_trace *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->mapping = ft->file->f_mapping;
	filemap_test_cache_pages(test, ft, FILEMAP_TEST_LAST_PAGE - 3,
				 FILEMAP_TEST_LAST_PAGE, ULONG_MAX);
	KUNIT_ASSERT_EQ(test, 0,
			register_trace_mm_filemap_map_pages(filemap_test_trace_map_pages,
							    t));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  filemap_test_untrace_map_pages,
						  t));

	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE,
			filemap_test_map_pages(test, &map,
					       FILEMAP_TEST_LAST_PAGE - 1,
					       FILEMAP_TEST_LAST_PAGE - 5,
					       FILEMAP_TEST_LAST_PAGE + 4, 0));
	KUNIT_EXPECT_EQ(test, 1U, t->calls);
	KUNIT_EXPECT_EQ(test, FILEMAP_TEST_LAST_PAGE - 5, t->start);
	KUNIT_EXPECT_EQ(test, FILEMAP_TEST_LAST_PAGE, t->end);
#else
	kunit_skip(test, "needs CONFIG_TRACEPOINTS");
#endif
}

/*
 * Through handle_mm_fault(): a read fault misses, reads around with the
 * mmap lock dropped and returns VM_FAULT_RETRY; the retry, with
 * FAULT_FLAG_TRIED, maps the faulting page through fault-around and keeps
 * the miss.
 */
static void filemap_test_fault_retry_keeps_miss(struct kunit *test)
{
	struct filemap_test_file *ft = filemap_test_create(test,
							   FILEMAP_TEST_RA_PAGES);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ);
	vm_fault_t ret;

	ret = filemap_test_handle_fault(&map, 1000, FILEMAP_TEST_FAULT_FIRST);
	filemap_test_expect_miss_unlocked(test, ft, ret);
	filemap_test_expect_retry_keeps_miss(test, &map);
}

/*
 * The same under the per-VMA lock: a read fault that misses under
 * FAULT_FLAG_VMA_LOCK reads around, drops the VMA lock and returns
 * VM_FAULT_RETRY; the arch handler retries under the mmap lock with
 * FAULT_FLAG_TRIED, and that retry keeps the miss.
 */
static void filemap_test_fault_retry_after_vma_lock(struct kunit *test)
{
	struct filemap_test_file *ft;
	struct filemap_test_map map;
	struct vm_area_struct *vma;
	vm_fault_t ret;

	if (!IS_ENABLED(CONFIG_PER_VMA_LOCK))
		kunit_skip(test, "needs CONFIG_PER_VMA_LOCK");
	ft = filemap_test_create(test, FILEMAP_TEST_RA_PAGES);
	map = filemap_test_mmap_file(test, ft, PROT_READ);
	vma = lock_vma_under_rcu(map.mm, filemap_test_addr(&map, 1000));
	if (vma && vma != map.vma)
		vma_end_read(vma);
	KUNIT_ASSERT_PTR_EQ(test, map.vma, vma);
	ret = handle_mm_fault(vma, filemap_test_addr(&map, 1000),
			      FILEMAP_TEST_FAULT_FIRST | FAULT_FLAG_VMA_LOCK,
			      NULL);
	if (!(ret & (VM_FAULT_RETRY | VM_FAULT_COMPLETED)))
		vma_end_read(vma);
	filemap_test_expect_miss_unlocked(test, ft, ret);
	filemap_test_expect_retry_keeps_miss(test, &map);
}

/* A folio of 2^@order pages at @index (aligned), in the page cache. */
static void filemap_test_cache_large_folio(struct kunit *test,
					   struct filemap_test_file *ft,
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

struct filemap_test_large_case {
	const char *desc;
	unsigned int fault_flags;
	enum filemap_test_pte pte;
	unsigned short miss_after;
	vm_fault_t ret;
};

/*
 * A 16-page folio at [992, 1007] in the window, mapped by
 * filemap_map_folio_range(): whole, as it lies inside i_size, the VMA and
 * one PMD, but for a populated faulting PTE, which is left. One credit
 * (from 20) if it mapped the faulting page, none on a retry.
 */
static const struct filemap_test_large_case filemap_test_large_cases[] = {
	{
		.desc = "faulting PTE none: one credit",
		.pte = FILEMAP_TEST_PTE_NONE,
		.miss_after = 19,
		.ret = VM_FAULT_NOPAGE,
	},
	{
		.desc = "faulting PTE present: left, no credit",
		.pte = FILEMAP_TEST_PTE_PRESENT,
		.miss_after = 20,
		.ret = 0,
	},
	{
		.desc = "faulting PTE a marker: left, no credit",
		.pte = FILEMAP_TEST_PTE_MARKER,
		.miss_after = 20,
		.ret = 0,
	},
	{
		.desc = "FAULT_FLAG_TRIED retry: no credit",
		.fault_flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_TRIED,
		.pte = FILEMAP_TEST_PTE_NONE,
		.miss_after = 20,
		.ret = VM_FAULT_NOPAGE,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_test_large, filemap_test_large_cases, desc);

static void filemap_test_map_pages_large_folio(struct kunit *test)
{
	const struct filemap_test_large_case *c = test->param_value;
	struct filemap_test_file *ft;
	struct filemap_test_map map;
	pgoff_t i;
	pte_t pte;

	filemap_test_need_thp(test);
	ft = filemap_test_create(test, FILEMAP_TEST_RA_PAGES);
	filemap_test_cache_large_folio(test, ft, 992, 4);
	map = filemap_test_mmap_file(test, ft, PROT_READ | PROT_WRITE);
	filemap_test_populate_pte(test, &map, 1000, c->pte);
	filemap_test_set_mmap_miss(ft, 20);

	KUNIT_EXPECT_EQ(test, c->ret,
			filemap_test_map_pages(test, &map, 1000, 992, 1007,
					       c->fault_flags));
	KUNIT_EXPECT_EQ(test, c->miss_after, filemap_test_mmap_miss(ft));
	for (i = 992; i <= 1007; i++) {
		KUNIT_ASSERT_TRUE(test, filemap_test_read_pte(&map, i, &pte));
		KUNIT_EXPECT_EQ_MSG(test, i != 1000 ||
				    c->pte != FILEMAP_TEST_PTE_MARKER,
				    pte_present(pte), "PTE of page %lu", i);
	}
}

/*
 * File pages [@pgoff, the file's end) mapped with @prot at the addresses
 * that put file page @table at a PMD-aligned address, where a page table
 * starts: each page table maps FILEMAP_TEST_PMD_PAGES file pages from
 * @table on (and before it).
 */
static struct filemap_test_map
filemap_test_mmap_table_at(struct kunit *test, struct filemap_test_file *ft,
			   pgoff_t pgoff, pgoff_t table, unsigned long prot)
{
	unsigned long len = FILEMAP_TEST_FILE_PAGES << PAGE_SHIFT, addr, base;

	/* Find room for the file and a PMD more, and map it there. */
	addr = kunit_vm_mmap(test, NULL, 0, len + PMD_SIZE, PROT_READ,
			     MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr) || !addr);
	KUNIT_ASSERT_EQ(test, 0, vm_munmap(addr, len + PMD_SIZE));
	/* Where file page 0 goes: within the room, and so is the end. */
	base = ALIGN(addr + (table << PAGE_SHIFT), PMD_SIZE) -
	       (table << PAGE_SHIFT);
	return filemap_test_mmap_at(test, ft, base + (pgoff << PAGE_SHIFT),
				    pgoff, FILEMAP_TEST_FILE_PAGES - pgoff,
				    prot);
}

/* Whether a PMD maps page @index of @map. */
static bool filemap_test_pmd_maps(struct filemap_test_map *map, pgoff_t index)
{
	bool huge;
	pmd_t *pmd;

	mmap_read_lock(map->mm);
	pmd = mm_find_pmd(map->mm, filemap_test_addr(map, index));
	huge = pmd && pmd_trans_huge(pmdp_get(pmd));
	mmap_read_unlock(map->mm);
	return huge;
}

/*
 * Fault-around maps a PMD-sized folio with one PMD where no page table
 * covers it yet and the VMA lets it (its file offset aligned with a PMD
 * of the address space): no page table is installed, the folio's pages
 * are counted in the file RSS, the fault is handled (VM_FAULT_NOPAGE),
 * and mmap_miss gets no credit.
 */
static void filemap_test_map_pages_pmd(struct kunit *test)
{
	pgoff_t fault = FILEMAP_TEST_PMD_PAGES + 8;
	struct filemap_test_file *ft;
	struct filemap_test_map map;
	bool installed, huge;
	long rss_before;
	vm_fault_t ret;

	filemap_test_need_pmd_folio(test);
	ft = filemap_test_create(test, FILEMAP_TEST_RA_PAGES);
	map = filemap_test_mmap_table_at(test, ft, 0, 0, PROT_READ);
	filemap_test_cache_large_folio(test, ft, FILEMAP_TEST_PMD_PAGES,
				       FILEMAP_TEST_PMD_ORDER);
	filemap_test_set_mmap_miss(ft, 10);
	rss_before = get_mm_counter_sum(map.mm, MM_FILEPAGES);

	ret = filemap_test_map_pages_no_table(test, &map, fault,
					      FILEMAP_TEST_PMD_PAGES,
					      2 * FILEMAP_TEST_PMD_PAGES - 1,
					      &installed);
	huge = filemap_test_pmd_maps(&map, fault);

	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE, ret);
	KUNIT_EXPECT_TRUE_MSG(test, huge, "a PMD maps page %lu", fault);
	KUNIT_EXPECT_FALSE(test, installed);
	KUNIT_EXPECT_EQ(test, (long)FILEMAP_TEST_PMD_PAGES,
			get_mm_counter_sum(map.mm, MM_FILEPAGES) - rss_before);
	KUNIT_EXPECT_EQ(test, 10, filemap_test_mmap_miss(ft));
}

struct filemap_test_large_range_case {
	const char *desc;
	/* The VMA maps file pages [vm_pgoff, the file's end). */
	pgoff_t vm_pgoff;
	/* A file page that starts a page table. */
	pgoff_t table;
	/* A folio of 2^order pages at index, order-0 pages after it. */
	pgoff_t index;
	unsigned int order;
	unsigned int after;
	/* i_size in pages, if not the whole file (0). */
	pgoff_t eof;
	/* A page of the folio a racing fault mapped first (0: none). */
	pgoff_t populated;
	/* The fault, and the window around it in its page table. */
	pgoff_t fault;
	pgoff_t first;
	pgoff_t last;
	/* Fault-around maps [mapped_first, mapped_last], but populated. */
	pgoff_t mapped_first;
	pgoff_t mapped_last;
};

/*
 * Fault-around maps a large folio page by page, each PTE to that page of
 * the folio: the whole folio, even from a window that begins or ends
 * inside it, when the folio lies inside i_size (ending before the file's
 * last page), the VMA and one page table (up to its last page); else
 * only its pages inside the window, the VMA and i_size, and never past
 * the folio's end. A PTE that is populated already is left as it is and
 * the pages on either side of it mapped; the pages after the folio are
 * mapped each at its own PTE. It returns VM_FAULT_NOPAGE for the
 * faulting page, counts what it mapped in the file RSS, takes one
 * reference of the folio per PTE (none if it maps none of the folio)
 * and leaves the folio unlocked.
 */
static const struct filemap_test_large_range_case
filemap_test_large_range_cases[] = {
	{
		.desc = "window past the folio's end: the folio, nothing after",
		.index = 992,
		.order = 4,
		.fault = 1000,
		.first = 984,
		.last = 1015,
		.mapped_first = 992,
		.mapped_last = 1007,
	},
	{
		.desc = "window from inside the folio: the whole folio",
		.index = 992,
		.order = 4,
		.fault = 1000,
		.first = 996,
		.last = 1015,
		.mapped_first = 992,
		.mapped_last = 1007,
	},
	{
		.desc = "window ends inside the folio: the whole folio",
		.index = 992,
		.order = 4,
		.fault = 1000,
		.first = 984,
		.last = 1003,
		.mapped_first = 992,
		.mapped_last = 1007,
	},
	{
		.desc = "a populated PTE in the folio: left, the rest mapped",
		.index = 992,
		.order = 4,
		.populated = 1000,
		.fault = 996,
		.first = 984,
		.last = 1015,
		.mapped_first = 992,
		.mapped_last = 1007,
	},
	{
		.desc = "VMA from inside the folio: up to the folio's end",
		.vm_pgoff = 996,
		.index = 992,
		.order = 4,
		.fault = 1000,
		.first = 996,
		.last = 1015,
		.mapped_first = 996,
		.mapped_last = 1007,
	},
	{
		.desc = "VMA from inside the folio, pages after: own PTEs",
		.vm_pgoff = 996,
		.index = 992,
		.order = 4,
		.after = 2,
		.fault = 1000,
		.first = 996,
		.last = 1015,
		.mapped_first = 996,
		.mapped_last = 1009,
	},
	{
		.desc = "VMA from inside the folio, a populated PTE: left",
		.vm_pgoff = 996,
		.index = 992,
		.order = 4,
		.populated = 1000,
		.fault = 1004,
		.first = 996,
		.last = 1015,
		.mapped_first = 996,
		.mapped_last = 1007,
	},
	{
		.desc = "folio across page tables: its part in the second",
		.table = 1000,
		.index = 992,
		.order = 4,
		.fault = 1002,
		.first = 1000,
		.last = 1015,
		.mapped_first = 1000,
		.mapped_last = 1007,
	},
	{
		.desc = "folio across page tables: its part in the first",
		.table = 1000,
		.index = 992,
		.order = 4,
		.fault = 996,
		.first = 984,
		.last = 999,
		.mapped_first = 992,
		.mapped_last = 999,
	},
	{
		.desc = "folio ends at a page table's end: the whole folio",
		.table = 1008,
		.index = 992,
		.order = 4,
		.fault = 1000,
		.first = 1000,
		.last = 1007,
		.mapped_first = 992,
		.mapped_last = 1007,
	},
	{
		.desc = "populated PTE between window and fault: NOPAGE",
		.index = 992,
		.order = 4,
		.populated = 995,
		.fault = 996,
		.first = 993,
		.last = 1015,
		.mapped_first = 992,
		.mapped_last = 1007,
	},
	{
		.desc = "none of the folio mapped: its reference put back",
		.table = 999,
		.index = 996,
		.order = 2,
		.after = 11,
		.populated = 999,
		.fault = 1002,
		.first = 999,
		.last = 1010,
		.mapped_first = 999,
		.mapped_last = 1010,
	},
	{
		.desc = "folio ends before i_size's last page: the whole folio",
		.index = FILEMAP_TEST_FILE_PAGES - 8,
		.order = 2,
		.eof = FILEMAP_TEST_FILE_PAGES - 3,
		.fault = FILEMAP_TEST_FILE_PAGES - 6,
		.first = FILEMAP_TEST_FILE_PAGES - 6,
		.last = FILEMAP_TEST_LAST_PAGE,
		.mapped_first = FILEMAP_TEST_FILE_PAGES - 8,
		.mapped_last = FILEMAP_TEST_FILE_PAGES - 5,
	},
	{
		.desc = "folio across i_size: no PTE beyond it",
		.index = FILEMAP_TEST_FILE_PAGES - 4,
		.order = 2,
		.eof = FILEMAP_TEST_FILE_PAGES - 2,
		.fault = FILEMAP_TEST_FILE_PAGES - 4,
		.first = FILEMAP_TEST_FILE_PAGES - 8,
		.last = FILEMAP_TEST_LAST_PAGE,
		.mapped_first = FILEMAP_TEST_FILE_PAGES - 4,
		.mapped_last = FILEMAP_TEST_FILE_PAGES - 3,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_test_large_range,
		       filemap_test_large_range_cases, desc);

/* The pfn of the page the page cache holds at @index. */
static unsigned long filemap_test_cached_pfn(struct kunit *test,
					     struct filemap_test_file *ft,
					     pgoff_t index)
{
	struct folio *folio = filemap_get_folio(ft->file->f_mapping, index);
	unsigned long pfn;

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio), "page %lu cached", index);
	pfn = page_to_pfn(folio_file_page(folio, index));
	folio_put(folio);
	return pfn;
}

/*
 * Whether page @index of the row is mapped, and, if it is, by the page
 * the page cache holds there, or by the racing fault's own copy of it.
 */
static void
filemap_test_expect_large_pte(struct kunit *test,
			      const struct filemap_test_large_range_case *c,
			      struct filemap_test_map *map, pgoff_t index)
{
	bool want = index >= c->mapped_first && index <= c->mapped_last;
	unsigned long pfn;
	bool present;
	pte_t pte;

	present = filemap_test_read_pte(map, index, &pte) && pte_present(pte);
	KUNIT_EXPECT_EQ_MSG(test, want, present, "PTE of page %lu", index);
	if (!want || !present)
		return;
	pfn = filemap_test_cached_pfn(test, map->ft, index);
	if (index == c->populated)
		KUNIT_EXPECT_NE_MSG(test, pfn, pte_pfn(pte),
				    "populated page %lu", index);
	else
		KUNIT_EXPECT_EQ_MSG(test, pfn, pte_pfn(pte), "page %lu", index);
}

static void filemap_test_map_pages_large_folio_range(struct kunit *test)
{
	const struct filemap_test_large_range_case *c = test->param_value;
	pgoff_t folio_last = c->index + BIT(c->order) - 1;
	long mapped = c->mapped_last - c->mapped_first + 1 -
		      (c->populated ? 1 : 0);
	struct filemap_test_file *ft;
	struct filemap_test_map map;
	struct inode *inode;
	int refs_before;
	long rss_before;
	bool locked;
	pgoff_t i;

	filemap_test_need_thp(test);
	ft = filemap_test_create(test, FILEMAP_TEST_RA_PAGES);
	filemap_test_cache_large_folio(test, ft, c->index, c->order);
	filemap_test_cache_pages(test, ft, folio_last + 1,
				 folio_last + c->after, ULONG_MAX);
	map = filemap_test_mmap_table_at(test, ft, c->vm_pgoff, c->table,
					 PROT_READ | PROT_WRITE);
	if (c->populated)
		filemap_test_populate_pte(test, &map, c->populated,
					  FILEMAP_TEST_PTE_PRESENT);
	if (c->eof) {
		inode = file_inode(ft->file);
		inode_lock(inode);
		i_size_write(inode, c->eof << PAGE_SHIFT);
		inode_unlock(inode);
	}
	refs_before = filemap_test_page_refs(test, ft, c->index, &locked);
	rss_before = get_mm_counter_sum(map.mm, MM_FILEPAGES);

	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE,
			filemap_test_map_pages(test, &map, c->fault, c->first,
					       c->last, 0));
	KUNIT_EXPECT_EQ(test, mapped,
			get_mm_counter_sum(map.mm, MM_FILEPAGES) - rss_before);
	/* One reference per PTE of the folio; the pages after have theirs. */
	KUNIT_EXPECT_EQ(test, refs_before + (int)(mapped - c->after),
			filemap_test_page_refs(test, ft, c->index, &locked));
	KUNIT_EXPECT_FALSE(test, locked);
	for (i = max(c->vm_pgoff, min(c->first, c->index)); i <= c->last; i++)
		filemap_test_expect_large_pte(test, c, &map, i);
}

static struct kunit_case filemap_test_fault_around_cases[] = {
	KUNIT_CASE_PARAM(filemap_test_map_pages_credit,
			 filemap_test_credit_gen_params),
	KUNIT_CASE(filemap_test_map_pages_rss),
	KUNIT_CASE_PARAM(filemap_test_map_pages_range,
			 filemap_test_range_gen_params),
	KUNIT_CASE(filemap_test_map_pages_tracepoint),
	KUNIT_CASE(filemap_test_fault_retry_keeps_miss),
	KUNIT_CASE(filemap_test_fault_retry_after_vma_lock),
	KUNIT_CASE_PARAM(filemap_test_map_pages_large_folio,
			 filemap_test_large_gen_params),
	KUNIT_CASE_PARAM(filemap_test_map_pages_large_folio_range,
			 filemap_test_large_range_gen_params),
	KUNIT_CASE(filemap_test_map_pages_pmd),
	{}
};

static struct kunit_suite filemap_test_fault_around_suite = {
	.name = "mm_filemap_fault_around",
	.test_cases = filemap_test_fault_around_cases,
};

/* -------------------------------------------------------------------------
 * mm_filemap_pte_recheck: filemap_fault_recheck_pte_none()
 */

struct filemap_test_recheck_case {
	const char *desc;
	bool vm_locked;
	bool orig_pte_valid;
	bool pte_table;
	bool pte_present;
	vm_fault_t expected;
};

/*
 * Proceed (0) unless the VMA is VM_LOCKED and the fault saw a PTE
 * (FAULT_FLAG_ORIG_PTE_VALID); then VM_FAULT_NOPAGE if there is no page
 * table or the PTE is not none.
 */
static const struct filemap_test_recheck_case filemap_test_recheck_cases[] = {
	{
		.desc = "not VM_LOCKED",
		.vm_locked = false,
		.orig_pte_valid = true,
		.pte_table = true,
		.pte_present = true,
		.expected = 0,
	},
	{
		.desc = "no FAULT_FLAG_ORIG_PTE_VALID",
		.vm_locked = true,
		.orig_pte_valid = false,
		.pte_table = true,
		.pte_present = true,
		.expected = 0,
	},
	{
		.desc = "no page table",
		.vm_locked = true,
		.orig_pte_valid = true,
		.pte_table = false,
		.pte_present = false,
		.expected = VM_FAULT_NOPAGE,
	},
	{
		.desc = "PTE present",
		.vm_locked = true,
		.orig_pte_valid = true,
		.pte_table = true,
		.pte_present = true,
		.expected = VM_FAULT_NOPAGE,
	},
	{
		.desc = "PTE none",
		.vm_locked = true,
		.orig_pte_valid = true,
		.pte_table = true,
		.pte_present = false,
		.expected = 0,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_test_recheck, filemap_test_recheck_cases, desc);

static void filemap_test_recheck_pte_none(struct kunit *test)
{
	const struct filemap_test_recheck_case *c = test->param_value;
	struct filemap_test_file *ft = filemap_test_create(test,
							   FILEMAP_TEST_RA_PAGES);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ);
	/* A page in a PMD region of its own, so "no page table" holds. */
	pgoff_t index = c->pte_table ? 1000 : 3000;
	struct vm_fault vmf = filemap_test_vmf(&map, index,
			c->orig_pte_valid ? FAULT_FLAG_ORIG_PTE_VALID : 0);
	vm_fault_t ret = 0;

	if (c->pte_present)
		KUNIT_ASSERT_EQ(test, 0,
				filemap_test_handle_fault(&map, index, 0) &
				VM_FAULT_ERROR);
	if (c->vm_locked)
		filemap_test_vma_flags(&map, VM_LOCKED);

	mmap_read_lock(map.mm);
	vmf.pmd = mm_kunit_alloc_pmd(map.mm, vmf.address, c->pte_table);
	if (vmf.pmd)
		ret = filemap_fault_recheck_pte_none(&vmf);
	mmap_read_unlock(map.mm);
	KUNIT_ASSERT_NOT_NULL(test, vmf.pmd);

	KUNIT_EXPECT_EQ(test, c->expected, ret);
	KUNIT_EXPECT_EQ(test, c->pte_present,
			filemap_test_pte_present(&map, index));
}

/*
 * A private mapping whose page 1000 was copied on write (the PTE maps the
 * anon copy) and whose file folio was then reclaimed, with mmap_miss 5:
 * a fault there that saw the PTE (FAULT_FLAG_ORIG_PTE_VALID) finds no
 * folio in the page cache.
 */
static void filemap_test_cow_then_reclaim(struct kunit *test,
					  struct filemap_test_map *map,
					  bool vm_locked)
{
	struct address_space *mapping = map->ft->file->f_mapping;
	struct folio *folio;

	KUNIT_ASSERT_EQ(test, 0,
			filemap_test_handle_fault(map, 1000, FAULT_FLAG_WRITE) &
			VM_FAULT_ERROR);
	/* A folio in a per-CPU LRU batch holds a reference of the batch. */
	lru_add_drain_all();
	invalidate_mapping_pages(mapping, 0, -1);
	/* The file folio is reclaimed. */
	folio = filemap_get_folio(mapping, 1000);
	KUNIT_ASSERT_TRUE(test, IS_ERR(folio));
	KUNIT_ASSERT_TRUE(test, filemap_test_pte_present(map, 1000));
	if (vm_locked)
		filemap_test_vma_flags(map, VM_LOCKED);
	filemap_test_forget_reads(map->ft);
	filemap_test_set_mmap_miss(map->ft, 5);
}

struct filemap_test_no_major_case {
	const char *desc;
	bool vm_locked;
	vm_fault_t ret;
	unsigned long majfault;
	unsigned short miss_after;
	unsigned long nr_read;
};

/*
 * On a VM_LOCKED VMA filemap_fault() rechecks the PTE before the major
 * fault, finds it present: VM_FAULT_NOPAGE, no PGMAJFAULT, no read, and
 * mmap_miss left. Elsewhere the fault proceeds as a major fault and
 * reads around.
 */
static const struct filemap_test_no_major_case filemap_test_no_major_cases[] = {
	{
		.desc = "VM_LOCKED: NOPAGE, no major fault",
		.vm_locked = true,
		.ret = VM_FAULT_NOPAGE,
		.majfault = 0,
		.miss_after = 5,
		.nr_read = 0,
	},
	{
		.desc = "not VM_LOCKED: a major fault",
		.vm_locked = false,
		.ret = VM_FAULT_MAJOR | VM_FAULT_LOCKED,
		.majfault = 1,
		.miss_after = 6,
		.nr_read = FILEMAP_TEST_RA_PAGES,
	},
};

KUNIT_ARRAY_PARAM_DESC(filemap_test_no_major, filemap_test_no_major_cases,
		       desc);

static void filemap_test_recheck_caller(struct kunit *test)
{
	const struct filemap_test_no_major_case *c = test->param_value;
	struct filemap_test_file *ft = filemap_test_create(test,
							   FILEMAP_TEST_RA_PAGES);
	struct filemap_test_map map = filemap_test_mmap_file(test, ft,
							     PROT_READ | PROT_WRITE);
	unsigned long majfault;
	struct folio *found;
	vm_fault_t ret;

	filemap_test_cow_then_reclaim(test, &map, c->vm_locked);
	majfault = mm_kunit_vm_event(test, PGMAJFAULT);

	ret = filemap_test_filemap_fault(&map, 1000, FAULT_FLAG_ORIG_PTE_VALID,
					 &found);

	KUNIT_EXPECT_EQ(test, c->ret, ret);
	KUNIT_EXPECT_EQ(test, majfault + c->majfault,
			mm_kunit_vm_event(test, PGMAJFAULT));
	KUNIT_EXPECT_EQ(test, c->miss_after, filemap_test_mmap_miss(ft));
	filemap_test_expect_reads(test, ft, 1000 - FILEMAP_TEST_RA_PAGES / 2,
				  c->nr_read, c->desc);
}

/*
 * The race the recheck is for. Another CPU updates the PTE the way NUMA
 * hinting or mprotect() do: under the PT lock it clears the PTE, then
 * writes it back. The fault's lockless read sees the PTE none and must not
 * trust it: it takes the PT lock, waits for the update and finds the PTE
 * present.
 */
struct filemap_test_race {
	struct mm_struct *mm;
	unsigned long addr;
	/* Only hold the PT lock, leaving the PTE as it is (none, say). */
	bool lock_only;
	struct completion cleared, restored;
	/* Where the updater found the page table; NULL: none. */
	pmd_t *pmd;
	/* The fault returned without waiting for the PT lock. */
	bool fault_returned;
	/* The fault waited for the PT lock. */
	bool fault_waited;
};

static int filemap_test_race_pte_update(void *data)
{
	struct filemap_test_race *r = data;
	/* The PT lock of the PTE page. */
	spinlock_t *ptl;
	pte_t *ptep = NULL, pte;

	/* As NUMA hinting does, under the mmap lock for read. */
	mmap_read_lock(r->mm);
	r->pmd = mm_find_pmd(r->mm, r->addr);
	if (r->pmd)
		ptep = pte_offset_map_lock(r->mm, r->pmd, r->addr, &ptl);
	if (!ptep) {
		r->pmd = NULL;
		mmap_read_unlock(r->mm);
		complete(&r->cleared);
		complete(&r->restored);
		return 0;
	}
	if (!r->lock_only)
		pte = ptep_get_and_clear(r->mm, r->addr, ptep);
	complete(&r->cleared);
	/* Hold the PTE cleared until the fault waits for the lock. */
	while (!spin_is_contended(ptl) && !READ_ONCE(r->fault_returned))
		cpu_relax();
	r->fault_waited = spin_is_contended(ptl);
	if (!r->lock_only)
		set_pte_at(r->mm, r->addr, ptep, pte);
	pte_unmap_unlock(ptep, ptl);
	mmap_read_unlock(r->mm);
	complete(&r->restored);
	return 0;
}

/*
 * Start the updater on another CPU than the fault's, and wait until it
 * holds the PT lock of page @index with its PTE cleared (with
 * race->lock_only, as it is); race->pmd is NULL if no page table maps the
 * page. The caller has migration disabled and holds no mmap lock (the
 * updater takes it), and must call filemap_test_race_end() once the
 * fault has returned.
 */
static int filemap_test_race_start(struct filemap_test_map *map,
				   struct filemap_test_race *race, pgoff_t index)
{
	struct task_struct *updater;
	int cpu;

	race->mm = map->mm;
	race->addr = filemap_test_addr(map, index);
	init_completion(&race->cleared);
	init_completion(&race->restored);
	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	updater = kthread_create(filemap_test_race_pte_update, race,
				 "filemap_test_pte_update");
	if (IS_ERR(updater))
		return PTR_ERR(updater);
	kthread_bind(updater, cpu);
	wake_up_process(updater);
	wait_for_completion(&race->cleared);
	return 0;
}

/* Let the updater write the PTE back and wait until it is done. */
static void filemap_test_race_end(struct filemap_test_race *race)
{
	WRITE_ONCE(race->fault_returned, true);
	wait_for_completion(&race->restored);
}

/*
 * filemap_fault() at page 1000 while the updater holds its PTE cleared;
 * the folio it may return is released.
 */
static vm_fault_t filemap_test_race_fault(struct filemap_test_map *map,
					  struct filemap_test_race *race)
{
	struct vm_fault vmf = filemap_test_vmf(map, 1000,
					       FAULT_FLAG_ORIG_PTE_VALID);
	vm_fault_t ret;

	mmap_read_lock(map->mm);
	vmf.pmd = race->pmd;
	ret = filemap_fault(&vmf);
	mmap_read_unlock(map->mm);
	if (ret & VM_FAULT_LOCKED) {
		folio_unlock(page_folio(vmf.page));
		folio_put(page_folio(vmf.page));
	}
	return ret;
}

/*
 * The whole fault: filemap_fault() on the COW'ed, reclaimed page of a
 * VM_LOCKED VMA while the updater holds its PTE cleared returns
 * VM_FAULT_NOPAGE once the PTE is back, with no PGMAJFAULT and no read.
 */
static void filemap_test_recheck_race(struct kunit *test)
{
	struct filemap_test_file *ft;
	struct filemap_test_map map;
	struct filemap_test_race race = {};
	unsigned long majfault;
	vm_fault_t ret = 0;
	int err;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs: boot with ncpus=2 (UML SMP)");
	ft = filemap_test_create(test, FILEMAP_TEST_RA_PAGES);
	map = filemap_test_mmap_file(test, ft, PROT_READ | PROT_WRITE);
	filemap_test_cow_then_reclaim(test, &map, true);
	majfault = mm_kunit_vm_event(test, PGMAJFAULT);

	migrate_disable();
	err = filemap_test_race_start(&map, &race, 1000);
	if (!err) {
		if (race.pmd)
			ret = filemap_test_race_fault(&map, &race);
		filemap_test_race_end(&race);
	}
	migrate_enable();

	KUNIT_ASSERT_EQ(test, 0, err);
	KUNIT_ASSERT_NOT_NULL(test, race.pmd);
	/* The fault waited for the PT lock. */
	KUNIT_EXPECT_TRUE(test, race.fault_waited);
	KUNIT_EXPECT_EQ(test, VM_FAULT_NOPAGE, ret);
	KUNIT_EXPECT_EQ(test, majfault, mm_kunit_vm_event(test, PGMAJFAULT));
	KUNIT_EXPECT_EQ(test, 0UL, ft->nr_reads);
	KUNIT_EXPECT_EQ(test, 5, filemap_test_mmap_miss(ft));
	KUNIT_EXPECT_TRUE(test, filemap_test_pte_present(&map, 1000));
}

static struct kunit_case filemap_test_pte_recheck_cases[] = {
	KUNIT_CASE_PARAM(filemap_test_recheck_pte_none,
			 filemap_test_recheck_gen_params),
	KUNIT_CASE_PARAM(filemap_test_recheck_caller,
			 filemap_test_no_major_gen_params),
	KUNIT_CASE(filemap_test_recheck_race),
	{}
};

static struct kunit_suite filemap_test_pte_recheck_suite = {
	.name = "mm_filemap_pte_recheck",
	.test_cases = filemap_test_pte_recheck_cases,
};

kunit_test_suites(&filemap_test_mmap_miss_suite,
		  &filemap_test_fault_around_suite,
		  &filemap_test_pte_recheck_suite);

#endif /* CONFIG_MM_FILEMAP_KUNIT_TEST */
