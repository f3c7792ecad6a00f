/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What 7.3's filemap suite names otherwise than 6.12 and 6.1, where they
 * do the same thing.
 *
 * Part of the harness's 6.12 and 6.1 ports only (kernel/compat/), never
 * sent upstream: included by their mm/tests/kunit_compat.h (6.12) and
 * mm/tests/filemap_kunit_compat.h (6.1).
 */

#ifndef MM_TESTS_FILEMAP_NAMES_COMPAT_H
#define MM_TESTS_FILEMAP_NAMES_COMPAT_H

#include <linux/swapops.h>

/* 7.3's <linux/leafops.h> names a PTE marker test pte_is_marker(). */
static inline bool pte_is_marker(pte_t pte)
{
	return is_pte_marker(pte);
}

/*
 * No folio order of its own for executable mappings: a VM_EXEC fault
 * reads around as any other, which the rows of 7.3's exec window (order 0)
 * fail on (the port's expected list).
 */
#ifndef exec_folio_order
#define exec_folio_order() 0U
#endif

/* shmem_file_setup() takes its VM_* flags as an unsigned long. */
#define EMPTY_VMA_FLAGS 0UL

#endif /* MM_TESTS_FILEMAP_NAMES_COMPAT_H */
