/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What 7.3's swap readahead suite names otherwise than 6.12 and 6.1, where
 * they do the same thing: the swap cache lookup and its hit, the swap
 * cache's deletion, the leaf entry of a PTE.
 *
 * Part of the harness's 6.12 and 6.1 ports only (kernel/compat/), never
 * sent upstream: included by their mm/tests/kunit_compat.h (6.12) and
 * mm/tests/swap_state_kunit_compat.h (6.1), which give it
 * folio_swap_entry() (6.1's name for 6.12's folio->swap), and 6.1
 * swap_cache_index().
 */

#ifndef MM_TESTS_SWAP_NAMES_COMPAT_H
#define MM_TESTS_SWAP_NAMES_COMPAT_H

#include <kunit/test-bug.h>
#include <linux/pagemap.h>
#include <linux/swapops.h>

/*
 * 7.3's swap_cache_get_folio() is a plain lookup of the folio a swap cache
 * slot holds; 6.12's and 6.1's lookup of it is filemap_get_folio() on the
 * device's swap address space (as __read_swap_cache_async() does it).
 * Their swap_cache_get_folio(), which also counts the readahead hit, stays
 * reachable as (swap_cache_get_folio)(entry, vma, addr).
 */
static inline struct folio *swap_state_test_lookup(swp_entry_t entry)
{
	struct folio *folio = filemap_get_folio(swap_address_space(entry),
						swap_cache_index(entry));

	return IS_ERR(folio) ? NULL : folio;
}

#define swap_cache_get_folio(entry) swap_state_test_lookup(entry)

/*
 * 7.3 counts the readahead hit of a folio the swap cache holds in
 * swap_update_readahead(), after the lookup; 6.12 and 6.1 count it in
 * swap_cache_get_folio(), on the folio the lookup finds, with the same
 * code. Looking @folio's entry up counts the hit on @folio, as do_swap_page()
 * does, with the swap device held. A lookup that cannot be made, or that
 * finds another folio, fails the test: it would count nothing on @folio.
 */
static inline void swap_update_readahead(struct folio *folio,
					 struct vm_area_struct *vma,
					 unsigned long addr)
{
	struct swap_info_struct *si = get_swap_device(folio_swap_entry(folio));
	struct folio *found;

	if (!si) {
		kunit_fail_current_test("no swap device for the folio's entry");
		return;
	}
	found = (swap_cache_get_folio)(folio_swap_entry(folio), vma, addr);
	put_swap_device(si);
	if (found != folio)
		kunit_fail_current_test("the lookup did not find the folio");
	if (found)
		folio_put(found);
}

/* 6.12 and 6.1 also drop the slot's SWAP_HAS_CACHE, which 7.3 does not have. */
#define swap_cache_del_folio(folio) delete_from_swap_cache(folio)

/* 7.3's test of the swap cache's folio against an entry (mm/swap.h). */
static inline bool folio_matches_swap_entry(struct folio *folio,
					    swp_entry_t entry)
{
	swp_entry_t folio_entry = folio_swap_entry(folio);
	long nr_pages = folio_nr_pages(folio);

	VM_WARN_ON_ONCE_FOLIO(!folio_test_locked(folio), folio);
	if (!folio_test_swapcache(folio))
		return false;
	VM_WARN_ON_ONCE_FOLIO(!IS_ALIGNED(folio_entry.val, nr_pages), folio);
	return folio_entry.val == round_down(entry.val, nr_pages);
}

/*
 * 7.3's <linux/leafops.h>: the leaf entry of a PTE, none for a none or
 * present one (6.12's transitional softleaf_from_pte() decodes any PTE;
 * 6.1 has none),
 * and whether it is a swap entry.
 */
static inline swp_entry_t swap_state_test_softleaf_from_pte(pte_t pte)
{
	if (!is_swap_pte(pte))
		return swp_entry(MAX_SWAPFILES, 0);	/* no swap type */
	return pte_to_swp_entry(pte);
}

#undef softleaf_from_pte
#define softleaf_from_pte(pte) swap_state_test_softleaf_from_pte(pte)

static inline bool softleaf_is_swap(swp_entry_t entry)
{
	return !non_swap_entry(entry);
}

#define softleaf_to_pte(entry) swp_entry_to_pte(entry)

/* 7.3's zero_pfn(addr) is my_zero_pfn(addr) before. */
#define zero_pfn(addr) my_zero_pfn(addr)

/*
 * 7.3 counts each submission to a swap device in NRSWPIN; 6.12 and 6.1
 * count only pages. The test device counts the submissions to its backing
 * store (mm/tests/swapfile_kunit.h): each swap_rw() call is one.
 */
unsigned long swap_state_test_submissions(void);

#endif /* MM_TESTS_SWAP_NAMES_COMPAT_H */
