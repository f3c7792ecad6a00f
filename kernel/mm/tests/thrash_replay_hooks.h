/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the KUnit replay of a file thrashing beside anonymous memory
 * (mm/tests/filemap_thrash_replay_kunit.h, at the end of mm/filemap.c)
 * reaches in other files: a swap device reclaim swaps out to
 * (mm/tests/swapfile_replay_kunit.h, at the end of mm/swapfile.c) and the
 * flushes of memory cgroup statistics
 * (mm/tests/memcontrol_replay_kunit.h, at the end of mm/memcontrol.c).
 */
#ifndef _MM_TESTS_THRASH_REPLAY_HOOKS_H
#define _MM_TESTS_THRASH_REPLAY_HOOKS_H

struct swap_info_struct;

struct swap_info_struct *swap_replay_swapon(unsigned int nr_pages, int prio);
int swap_replay_swapoff(struct swap_info_struct *si);

void memcg_replay_stats_pause(void);
void memcg_replay_stats_resume(void);
void memcg_replay_stats_flush(void);

#endif /* _MM_TESTS_THRASH_REPLAY_HOOKS_H */
