/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scenarios of mm_filemap_thrash_replay and its seed-scale suite:
 * initialisers of struct filemap_thrash_replay_scenario, one field a
 * line, included by filemap_thrash_replay_kunit.h.
 *
 * The seed ("mm: vmscan: scan anonymous pages on file refaults") ran its
 * thrash program in a 2 GB machine: 2048 MB of anonymous memory written
 * once, then a 200 MB file read ten times, half through a PROT_EXEC
 * mapping, page i of each half in turn; and 2000 MB of anonymous memory
 * beside a 2200 MB file, 100 MB of it PROT_EXEC, read five times. The
 * seed scale is that machine as a memcg of 524288 pages (2 GiB of 4 KiB
 * pages); the small scale keeps the first ratios at an eighth (65536
 * pages) and the second's at an eighth of the memcg.
 *
 * The bounds, from the rules of the classic LRU in 7.3 (C the capacity,
 * A the anonymous pages, F the file's pages):
 *
 *  - Nothing is cached before round 0, a round touches each page once
 *    and a miss reads its page alone: reads_0 = F.
 *  - Round 0 reads every page for the first time: no refault, so
 *    nothing turns cache trim mode off for refaults. Once the inactive
 *    file list holds 4096 pages (its size >> DEF_PRIORITY is then 1; F is
 *    larger) and is not low, reclaim scans the file alone and evicts
 *    pages of it that round 1 reads again: reads_1 >= 1.
 *  - Where the file fits beside what is left of the anonymous memory
 *    (F < C), it stays whole once A + F - C anonymous pages are out: no
 *    page of it is read again, nothing is charged, nothing reclaimed,
 *    and no later round reads a page. From round 1 every reclaim scans
 *    anonymous pages: each refault is activated (workingset_test_recent()
 *    counts the anonymous lists in the workingset while swap is on, and
 *    a refault's distance, the pages evicted and activated since its
 *    eviction, is shorter than those lists), which turns cache trim mode
 *    off (the change's rule), and the
 *    activations grow the active file list past the inactive one, which
 *    turns it off too (inactive_is_low()). The anonymous pages, written
 *    once and unreferenced since, go out and stay out (nothing touches
 *    them again), so by the last round the file is whole:
 *    reads_last = 0 and swapouts >= A + F - C.
 *  - Where it does not fit (the seed's second run), a page of the data
 *    part is evicted before the round that touches it again, whose read
 *    is a refault beyond the workingset: not activated, and the rule
 *    never fires. Only the rounds' first bounds hold there.
 *
 * Without the change (the rule reverted: kernel/reverts in the harness)
 * the second way to leave cache trim mode stays: the activations of
 * refaults still make the inactive file list low, since "mm: workingset:
 * let cache workingset challenge anon" (5.8) counts the anonymous lists
 * in a file refault's workingset. So every bound
 * holds with and without it (reverted_fails is false in every row): on
 * 7.3 the seed's "before", every round read from disk, does not come
 * back when its rule alone is reverted. The replay shows where the rule
 * still acts: the rounds' counts differ where no page is VM_EXEC (the
 * active list then grows only by refaults).
 *
 * Under the multi-gen LRU the change does not act: prepare_scan_control()
 * returns at once while it is on (and no switch between the LRUs is under
 * way), and which type reclaim evicts is get_type_to_scan()'s, from the
 * refaults of each type's tiers. Of the bounds above only the first
 * follows from rules both LRUs share (reads_0 = F, which the suite checks
 * on every build); the rest are the classic LRU's, and the counts under
 * the multi-gen LRU are reported, not bounded.
 */
{
	.scale = FTR_SMALL,
	.desc = "anon fills the memcg and a file of a tenth of it half VM_EXEC",
	.capacity = 65536,
	.anon_pages = 65536,
	.exec_pages = 3200,
	.data_pages = 3200,
	.interleaved = true,
	.rounds = 10,
	.want_reads_0 = 6400,
	.min_reads_1 = 1,
	.max_reads_last = 0,
	.min_swapouts = 6400,
	.reverted_fails = false,
},
{
	.scale = FTR_SMALL,
	.desc = "anon fills the memcg and a file of a tenth of it not VM_EXEC",
	.capacity = 65536,
	.anon_pages = 65536,
	.exec_pages = 0,
	.data_pages = 6400,
	.interleaved = false,
	.rounds = 10,
	.want_reads_0 = 6400,
	.min_reads_1 = 1,
	.max_reads_last = 0,
	.min_swapouts = 6400,
	.reverted_fails = false,
},
{
	.scale = FTR_SMALL,
	.desc = "anon nearly fills the memcg and a file larger than it 1/22 VM_EXEC",
	.capacity = 65536,
	.anon_pages = 64000,
	.exec_pages = 3200,
	.data_pages = 67200,
	.interleaved = false,
	.rounds = 5,
	.want_reads_0 = 70400,
	.min_reads_1 = 1,
	.reverted_fails = false,
},
{
	.scale = FTR_SEED,
	.desc = "thrash 2048 200 10: a 200 MB file half VM_EXEC",
	.capacity = 524288,
	.anon_pages = 524288,
	.exec_pages = 25600,
	.data_pages = 25600,
	.interleaved = true,
	.rounds = 10,
	.want_reads_0 = 51200,
	.min_reads_1 = 1,
	.max_reads_last = 0,
	.min_swapouts = 51200,
	.reverted_fails = false,
},
{
	.scale = FTR_SEED,
	.desc = "2048 MB anon and a 200 MB file not VM_EXEC",
	.capacity = 524288,
	.anon_pages = 524288,
	.exec_pages = 0,
	.data_pages = 51200,
	.interleaved = false,
	.rounds = 10,
	.want_reads_0 = 51200,
	.min_reads_1 = 1,
	.max_reads_last = 0,
	.min_swapouts = 51200,
	.reverted_fails = false,
},
{
	.scale = FTR_SEED,
	.desc = "thrash 2000 100 2100 5: a 2200 MB file 100 MB VM_EXEC",
	.capacity = 524288,
	.anon_pages = 512000,
	.exec_pages = 25600,
	.data_pages = 537600,
	.interleaved = false,
	.rounds = 5,
	.want_reads_0 = 563200,
	.min_reads_1 = 1,
	.reverted_fails = false,
},
