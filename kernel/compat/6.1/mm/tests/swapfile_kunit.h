/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test swap device on 6.1: none.
 *
 * 6.12's mm_kunit_swapon() serves every read from the device's zeromap
 * (6.12), so that no I/O is needed. 6.1 has no zeromap: a read from a swap
 * device always goes to its block device or file, and the tests have
 * neither. Their tests fail on the assertion that the device was made,
 * and are not judged on 6.1 (kernel/compat/6.1/expected).
 *
 * Part of the harness's 6.1 port; included at the bottom of mm/swapfile.c.
 */

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST

#include "kunit_compat.h"
#include "swap_kunit.h"

struct swap_info_struct *mm_kunit_swapon(unsigned int type,
					 unsigned int nr_pages)
{
	return ERR_PTR(-EOPNOTSUPP);
}

void mm_kunit_swapoff(struct swap_info_struct *si)
{
}

#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */
