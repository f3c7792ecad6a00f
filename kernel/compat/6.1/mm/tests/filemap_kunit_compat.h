/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the mm/filemap.c tests need on 6.1. Where 6.1 lacks a function
 * under test, the stand-in does what 6.1 does in its place, so that the
 * tests of that fix fail there.
 *
 * Part of the harness's 6.1 port (see kunit_compat.h); included at the
 * bottom of mm/filemap.c, after all of its code, so that only the
 * tests see it.
 */

#ifdef CONFIG_MM_FILEMAP_KUNIT_TEST

#include "kunit_compat.h"

/* mm->rss_stat is a percpu_counter since 6.2; in 6.1 an exact atomic. */
static inline unsigned long get_mm_counter_sum(struct mm_struct *mm,
					       int member)
{
	return get_mm_counter(mm, member);
}

/* shmem_read_folio() came in 6.2; 6.1 reads a shmem page as a page. */
static inline struct folio *
kunit_compat_shmem_read_folio(struct address_space *mapping, pgoff_t index)
{
	struct page *page = shmem_read_mapping_page(mapping, index);

	return IS_ERR(page) ? ERR_CAST(page) : page_folio(page);
}

#define shmem_read_folio kunit_compat_shmem_read_folio

/*
 * The PTE recheck before a major fault (6.9): 6.1's filemap_fault() goes
 * on to the page cache whatever the PTE holds, as if the recheck said 0.
 */
static inline vm_fault_t filemap_fault_recheck_pte_none(struct vm_fault *vmf)
{
	return 0;
}

#include "filemap_names_compat.h"

/* pmdp_get() (6.6), the generic definition. */
#ifndef pmdp_get
static inline pmd_t pmdp_get(pmd_t *pmdp)
{
	return READ_ONCE(*pmdp);
}
#endif

/*
 * Per-VMA locks came in 6.4: as later kernels without CONFIG_PER_VMA_LOCK,
 * no VMA is found locked, and the tests that need one skip.
 */
#define FAULT_FLAG_VMA_LOCK 0
static inline struct vm_area_struct *lock_vma_under_rcu(struct mm_struct *mm,
							unsigned long address)
{
	return NULL;
}

static inline void vma_end_read(struct vm_area_struct *vma)
{
}

/*
 * Large folios in the page cache of a file need 6.2's fgf_set_order();
 * 6.1 makes order-0 folios, and the tests that need large folios skip
 * without THP, which the port's configurations do not have.
 */
#define fgf_set_order(size) 0

/*
 * A mapping's range of folio orders (6.11): 6.1's mapping takes large
 * folios or none. Capped or not, it takes them here, so a test of a cap
 * fails on 6.1 by design (where it runs: with THP).
 */
static inline void
kunit_compat_mapping_set_folio_order_range(struct address_space *mapping,
					   unsigned int min, unsigned int max)
{
	if (max)
		mapping_set_large_folios(mapping);
}

#define mapping_set_folio_order_range kunit_compat_mapping_set_folio_order_range

#endif /* CONFIG_MM_FILEMAP_KUNIT_TEST */
