/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The swap device of the swap readahead KUnit tests on 6.1: defined in
 * mm/tests/swapfile_kunit.h, at the end of mm/swapfile.c (it makes none),
 * and used by mm/tests/swap_state_kunit.h, at the end of mm/swap_state.c.
 */
#ifndef _MM_TESTS_SWAP_KUNIT_H
#define _MM_TESTS_SWAP_KUNIT_H

struct swap_info_struct;

/*
 * A swap device for swap type @type with @nr_pages slots, each in use once
 * and read as a zero-filled page, with no I/O (mm/tests/swapfile_kunit.h).
 */
struct swap_info_struct *mm_kunit_swapon(unsigned int type,
					 unsigned int nr_pages);
void mm_kunit_swapoff(struct swap_info_struct *si);

#endif /* _MM_TESTS_SWAP_KUNIT_H */
