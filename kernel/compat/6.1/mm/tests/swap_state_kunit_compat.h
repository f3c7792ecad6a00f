/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What 7.3's swap readahead suite uses that 6.1 has under another name or
 * in another shape, beyond what the 6.12 port gives it (kunit_compat.h
 * and swap_names_compat.h of kernel/compat/6.12).
 *
 * Part of the harness's 6.1 port (see kunit_compat.h); included at the
 * bottom of mm/swap_state.c, after all of its code, so that only the
 * tests see it.
 */

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST

#include <linux/memcontrol.h>

#include "kunit_compat.h"

/*
 * swap_vma_ra_win() (6.6) was swap_ra_info(), which also points into the
 * PTEs of the window through vmf->pmd and gives the window as an offset and
 * a count of pages. The tests' windows need no page table; on 64-bit
 * swap_ra_info() only computes the PTE pointer, so a zero PMD stands in.
 */
static inline int swap_vma_ra_win(struct vm_fault *vmf, unsigned long *start,
				  unsigned long *end)
{
	struct vma_swap_readahead ra_info = { };
	unsigned long first;
	pmd_t pmd = __pmd(0);

	BUILD_BUG_ON(!IS_ENABLED(CONFIG_64BIT));
	vmf->pmd = &pmd;
	swap_ra_info(vmf, &ra_info);
	vmf->pmd = NULL;
	if (ra_info.win == 1)
		return 1;
	first = PFN_DOWN(vmf->address) - ra_info.offset;
	*start = first << PAGE_SHIFT;
	*end = (first + ra_info.nr_pte) << PAGE_SHIFT;
	return ra_info.win;
}

/* swap_cache_index() (6.10): 6.1 indexes a swap address space by offset. */
static inline pgoff_t swap_cache_index(swp_entry_t entry)
{
	return swp_offset(entry);
}

/*
 * read_swap_cache_async() and swapin_readahead() return folios since 6.8;
 * 6.1's return pages, and read_swap_cache_async() also takes do_poll.
 * swap_io_compat.h calls the former through swap_io_compat_read_async().
 */
static inline struct folio *
swap_state_test_read_async(swp_entry_t entry, gfp_t gfp_mask,
			   struct vm_area_struct *vma, unsigned long addr,
			   struct swap_iocb **plug)
{
	struct page *page = read_swap_cache_async(entry, gfp_mask, vma, addr,
						  false, plug);

	return page ? page_folio(page) : NULL;
}

#define swap_io_compat_read_async swap_state_test_read_async

static inline struct folio *
kunit_compat_swapin_readahead(swp_entry_t entry, gfp_t gfp_mask,
			      struct vm_fault *vmf)
{
	struct page *page = swapin_readahead(entry, gfp_mask, vmf);

	return page ? page_folio(page) : NULL;
}

#define swapin_readahead kunit_compat_swapin_readahead

/*
 * swapcache_prepare() and swapcache_clear() take a count of entries since
 * 6.10.
 */
static inline int kunit_compat_swapcache_prepare(swp_entry_t entry, int nr)
{
	return swapcache_prepare(entry);
}

#define swapcache_prepare kunit_compat_swapcache_prepare

static inline void kunit_compat_swapcache_clear(struct swap_info_struct *si,
						swp_entry_t entry, int nr)
{
	swapcache_clear(si, entry);
}

#define swapcache_clear kunit_compat_swapcache_clear

/*
 * mem_cgroup_replace_folio() (6.8) was mem_cgroup_migrate(), which
 * shmem_replace_page() calls in 6.1 to charge the new folio as well.
 */
#define mem_cgroup_replace_folio(old, new) mem_cgroup_migrate(old, new)

#include "swap_io_compat.h"
#include "swap_names_compat.h"

#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */
