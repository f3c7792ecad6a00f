/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flushes of memory cgroup statistics, for a KUnit replay that needs
 * reclaim to read the statistics its own steps left, not the ones the
 * periodic flusher happened to have flushed
 * (mm/tests/filemap_thrash_replay_kunit.h, at the end of mm/filemap.c).
 *
 * This file is included at the bottom of mm/memcontrol.c, which keeps the
 * periodic flusher (stats_flush_dwork) to itself.
 *
 * Reclaim on the classic LRU reads the statistics of the memcg it
 * reclaims (prepare_scan_control(), inactive_is_low(),
 * workingset_test_recent()) as they were last flushed, and the periodic
 * flusher flushes every memcg every FLUSH_TIME, wherever reclaim is: a
 * flush in the middle of a reclaim changes what its later steps read.
 * memcg_replay_stats_pause() stops that flusher until
 * memcg_replay_stats_resume(); meanwhile the replay flushes every memcg
 * with memcg_replay_stats_flush() before each of its steps, as the
 * flusher would (flush_last_time included, so that the rate-limited
 * flushes of readers find the statistics fresh), so that the system's
 * statistics are no older than the replay's last step.
 */

#ifdef CONFIG_MM_FILEMAP_THRASH_REPLAY_KUNIT_TEST

#include "thrash_replay_hooks.h"

void memcg_replay_stats_pause(void)
{
	disable_delayed_work_sync(&stats_flush_dwork);
}

void memcg_replay_stats_resume(void)
{
	if (enable_delayed_work(&stats_flush_dwork))
		queue_delayed_work(system_dfl_wq, &stats_flush_dwork,
				   FLUSH_TIME);
}

void memcg_replay_stats_flush(void)
{
	__mem_cgroup_flush_stats(root_mem_cgroup, true);
}

#endif /* CONFIG_MM_FILEMAP_THRASH_REPLAY_KUNIT_TEST */
