/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the mm/vmscan.c tests need on 6.1.
 *
 * Part of the harness's 6.1 port (see kunit_compat.h); included at the
 * bottom of mm/vmscan.c, after all of its code, so that only the tests see it.
 */

#ifdef CONFIG_MM_VMSCAN_KUNIT_TEST

#include "kunit_compat.h"

/* Renamed in 6.3 (struct lru_gen_folio) and 6.4 (prepare_scan_control). */
#define lru_gen_folio lru_gen_struct
#define prepare_scan_control prepare_scan_count

/*
 * No no_cache_trim_mode in 6.1's scan_control (added later). This only
 * lets the file build: skipped_deactivate is not read by
 * prepare_scan_count(), and the row that sets it is not judged here.
 */
#define no_cache_trim_mode skipped_deactivate

/* Named in 6.8; 6.1 writes 200 out. */
#define MIN_SWAPPINESS 0
#define MAX_SWAPPINESS 200

/* 6.1 flushes every memcg's stats at once (the root's, since 6.8). */
#define mem_cgroup_flush_stats(memcg) mem_cgroup_flush_stats()

#endif /* CONFIG_MM_VMSCAN_KUNIT_TEST */
