/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The swap devices of the swap KUnit tests: defined in
 * mm/tests/swapfile_kunit.h, at the end of mm/swapfile.c, and used by
 * mm/tests/swap_state_kunit.h, at the end of mm/swap_state.c, and by
 * mm/tests/filemap_thrash_replay_kunit.h, at the end of mm/filemap.c.
 */
#ifndef _MM_TESTS_SWAP_KUNIT_H
#define _MM_TESTS_SWAP_KUNIT_H

struct swap_info_struct;

/* The most slots a test swap device has. */
#define SWAP_STATE_TEST_MAX_PAGES	BIT(15)

struct swap_info_struct *swap_state_test_swapon(unsigned int nr_pages);
void swap_state_test_swapoff(struct swap_info_struct *si);
struct swap_info_struct *swap_state_test_swapon_writable(unsigned int nr_pages,
							 int prio);
int swap_state_test_swapoff_writable(struct swap_info_struct *si);

#endif /* _MM_TESTS_SWAP_KUNIT_H */
