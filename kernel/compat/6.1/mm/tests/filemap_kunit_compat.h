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

/*
 * filemap_get_folio() returns ERR_PTR(-ENOENT) on a miss since 6.4, NULL
 * before. This header comes after the code of filemap.c: only the tests
 * see the macro.
 */
static inline struct folio *
kunit_compat_filemap_get_folio(struct address_space *mapping, pgoff_t index)
{
	struct folio *folio = __filemap_get_folio(mapping, index, 0, 0);

	return folio ?: ERR_PTR(-ENOENT);
}

#define filemap_get_folio kunit_compat_filemap_get_folio

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

/*
 * PTE markers: 6.1 has only uffd-wp's, and only with CONFIG_PTE_MARKER,
 * which needs userfaultfd write protection (not on UML). Where 6.1 cannot
 * make a marker, the faulting-PTE tests' marker row gets a read-only
 * zero-page PTE in its place: a populated PTE that fault-around leaves
 * alone and that unmapping the test's mm takes down safely. That row is
 * not judged on 6.1 (kernel/compat/6.1/expected).
 */
#ifndef PTE_MARKER_POISONED
#define PTE_MARKER_POISONED	PTE_MARKER_UFFD_WP
#endif

#ifndef CONFIG_PTE_MARKER
static inline pte_t kunit_compat_make_pte_marker(pte_marker marker)
{
	return pfn_pte(my_zero_pfn(0), PAGE_READONLY);
}

#define make_pte_marker kunit_compat_make_pte_marker
#endif

#endif /* CONFIG_MM_FILEMAP_KUNIT_TEST */
