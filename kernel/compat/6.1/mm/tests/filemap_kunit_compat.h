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

/*
 * The PTE recheck before a major fault (6.9): 6.1's filemap_fault() goes
 * on to the page cache whatever the PTE holds, as if the recheck said 0.
 */
static inline vm_fault_t filemap_fault_recheck_pte_none(struct vm_fault *vmf)
{
	return 0;
}

#endif /* CONFIG_MM_FILEMAP_KUNIT_TEST */
