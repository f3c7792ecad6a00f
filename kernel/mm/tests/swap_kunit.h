/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The swap device of the swap readahead KUnit tests: defined in
 * mm/tests/swapfile_kunit.h, at the end of mm/swapfile.c, and used by
 * mm/tests/swap_state_kunit.h, at the end of mm/swap_state.c.
 */
#ifndef _MM_TESTS_SWAP_KUNIT_H
#define _MM_TESTS_SWAP_KUNIT_H

struct swap_info_struct;

/* The most slots a test swap device has. */
#define SWAP_STATE_TEST_MAX_PAGES	BIT(15)

struct swap_info_struct *swap_state_test_swapon(unsigned int nr_pages);
void swap_state_test_swapoff(struct swap_info_struct *si);

#endif /* _MM_TESTS_SWAP_KUNIT_H */
