/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the 7.3 mm KUnit suites use of 7.3 that 6.12 has under another name.
 *
 * Part of the harness's 6.12 port only (kernel/compat/6.12), never sent
 * upstream: with the port's patch (0005a), it lets the 7.3 filemap suite
 * build on Debian's linux-source-6.12. Each shim gives 7.3's name to what
 * 6.12 does the same way; none changes what the code under test does.
 * Where 6.12 does it otherwise, the tests are listed in
 * kernel/compat/6.12/expected.
 */

#ifndef MM_TESTS_KUNIT_COMPAT_H
#define MM_TESTS_KUNIT_COMPAT_H

#ifdef CONFIG_MM_FILEMAP_KUNIT_TEST
#include <linux/swapops.h>

/* 7.3's <linux/leafops.h> names a PTE marker test pte_is_marker(). */
static inline bool pte_is_marker(pte_t pte)
{
	return is_pte_marker(pte);
}

/*
 * 6.12 has no folio order of its own for executable mappings: a VM_EXEC
 * fault reads around as any other, which the rows of 7.3's exec window
 * (order 0) fail on (kernel/compat/6.12/expected).
 */
#ifndef exec_folio_order
#define exec_folio_order() 0U
#endif

/* 6.12's shmem_file_setup() takes its VM_* flags as an unsigned long. */
#define EMPTY_VMA_FLAGS 0UL
#endif /* CONFIG_MM_FILEMAP_KUNIT_TEST */

#endif /* MM_TESTS_KUNIT_COMPAT_H */
