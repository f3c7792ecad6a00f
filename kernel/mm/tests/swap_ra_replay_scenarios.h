/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scenarios of mm_swap_ra_replay: initialisers of struct
 * swap_ra_replay_scenario, one field a line, included by
 * swap_ra_replay_kunit.h.
 *
 * Each scenario is two rows, one with cluster readahead and one with VMA
 * readahead (.vma_ra), page_cluster 3 (a window of at most 8 pages either
 * way). Swap-out wrote the swappers' pages from slot 1 in runs of .run
 * pages, each run to the swapper with the least part of its pages
 * written: at small scale a page each, so a sequential swapper's page i
 * is in slot i + 1 (alone) or 2i + 1 (beside a random swapper, whose page
 * j is in slot 2j + 2); the device has one slot more than the pages, and
 * slot 0 is never read (cluster readahead skips it as the swap header's).
 * Cluster readahead
 * starts with the 4 hits a booted kernel has, and a window that earlier
 * swap-ins without hits have shrunk to 1; a new VMA has the same 4 hits.
 * Every page is faulted once. A page read ahead is evicted if it is
 * still unhit once .cache more pages have been read (in read order).
 *
 * The bounds, from the window rules of swapin_nr_pages() and
 * swap_vma_ra_win() (hits + 2 rounded up to a power of two, at least
 * 4, at most 8; without hits, 2 if the fault is next to the last one,
 * else 1, but never less than half the last window) and the layout:
 *
 *  - one sequential swapper, 254 pages in slots 1-254. Cluster: a hit
 *    every page read ahead, so every window is 8, aligned: slots 1-7
 *    (slot 0 is skipped), then 31 blocks of 8 up to 248-254 (the device
 *    ends at 255): 32 major faults, 6 + 30 * 7 + 6 = 222 pages read
 *    ahead, all hit. VMA: the first fault, with no fault before it,
 *    centres its window of 8 on page 0, clipped to the VMA: pages 0-4,
 *    4 read ahead; every later major fault follows the last hit and
 *    reads pages 5 + 8k to 12 + 8k forward; the last, at 253, is clipped
 *    to itself: 33 major faults, 4 + 31 * 7 = 221 read ahead, all hit.
 *  - a sequential swapper of 127 pages beside an idle random one of 127
 *    (never faulted), in alternate slots: the share a cluster block
 *    gives the faulting stream. Cluster: each block of 8 holds 4 slots
 *    of the stream, so 3 of its 7 pages read ahead are hit (block 0,
 *    slots 1-7: 3 of 6; the last, 248-254: 2 of 6): 32 major faults,
 *    222 read ahead, 95 hit (427 per mille); the 127 random pages read
 *    ahead are evicted but the 16 among the last 32 the cache holds:
 *    111. VMA reads the stream's own VMA only, as the first row on 127
 *    pages: 17 major faults, 4 + 15 * 7 + 1 = 110 read ahead, all hit.
 *  - both swappers faulting, a page each in turn, in the order they were
 *    swapped out (seq 0, rand 0, seq 1, ...), the random one's pages at
 *    virtual page 33j mod 127 of its VMA, no two consecutive faults of
 *    it adjacent. Cluster reads slots in the order they are faulted: as
 *    the first row, 32 major faults and 222 pages read ahead, all hit;
 *    the faults at slots 1 (sequential) and 8, 16, ..., 248 (random)
 *    read them: 1 + 31 major faults, 6 + 216 read ahead. VMA: the
 *    sequential VMA as in the second row (17, 110, 110: each of its
 *    pages read ahead is hit with at most 12 pages read after it, fewer
 *    than its 32); the random VMA reads around its first three faults,
 *    at pages 0, 33 and 66, windows of 8 (clipped to 0-4), 4 and 2: 4 +
 *    3 + 1 pages, then windows of 1; those 8 are next faulted at least
 *    50 newer pages later, evicted by then: 127 major faults, 8 read
 *    ahead, none hit, 8 evicted.
 *
 * The seed scale: vm-scalability's 4 sequential swappers of 50 GB and 8
 * random ones of 30 GB in 32 GB, scaled by 1/3840 to the test device:
 * 4 of 3413 pages and 8 of 1024 (5 : 3, as 50 : 30), 21845 slots, a swap
 * cache of 120 pages. Swap-out wrote runs of 31 pages (a per-CPU LRU
 * batch), each in address order; a random swapper faults its page at
 * 129j modulo 1024 (j the order of its faults), each page once, and a
 * sequential one its pages once in order. Each swapper faults by its own
 * clock: a hit costs 1, a major fault 100 (the seed's 1-2 us and ~100
 * us), so that sequential swappers run through their pages read ahead
 * while random ones wait for reads, as on the seed's 72 threads.
 *
 *  - VMA readahead: a sequential VMA spans 7 page tables (512 PTEs each)
 *    and a window never crosses one: the first table as in the first
 *    row, 65 major faults and 4 + 63 * 7 + 2 = 447 read ahead (the last
 *    window clipped at the table's end, 509-511); the second, entered
 *    with 2 hits (a window of 4: 512-515), 65 and 3 + 63 * 7 + 3 = 447;
 *    the next four, entered with 3 or 7 hits, 64 and 64 * 7 = 448 each;
 *    the last, 341 pages, 43 and 42 * 7 + 4 = 298: 429 major faults and
 *    2984 read ahead a swapper, all hit. A random VMA reads around its
 *    first three faults, at pages 0, 129 and 258, 4 + 3 + 1 pages
 *    (windows of 8 clipped to 0-4, 4 and 2), then windows of 1 (no two
 *    consecutive faults adjacent); between the read of one of those 8
 *    and its fault come at least 126 of the swapper's own faults, each
 *    of which reads a page: all 64 evicted unhit. A sequential page
 *    read ahead is hit with at most 89 pages read after it (at worst at
 *    the start, where the sequential swappers' first faults read 5
 *    pages each and the random ones' 5, then 4; later, within the 106
 *    time units from its read to its hit, every other sequential
 *    swapper reads at most a window and every random one at most two
 *    pages): fewer than 120. In all, 1716 + 8192 = 9908 major faults,
 *    11936 + 64 = 12000 pages read ahead, 11936 hit (994 per mille).
 *  - Cluster readahead: its one window and its hits are global, so every
 *    swapper's faults move them for all. The counts are as deterministic
 *    as the others, but no hand derivation of them is given: the row
 *    bounds only the faults and reports the rest.
 *
 * No small bound depends on the arch or the LRU: the same on UML and
 * x86_64, MGLRU or not, with 4 KiB or 64 KiB pages. The seed scale's
 * VMA counts assume 512 PTEs a page table: the suite skips it
 * elsewhere.
 */
{
	.scale = SRR_SMALL,
	.desc = "one sequential swapper, cluster readahead",
	.vma_ra = false,
	.seq_streams = 1,
	.seq_pages = 254,
	.rand_streams = 0,
	.rand_pages = 0,
	.rand_faults = false,
	.rand_stride = 1,
	.run = 1,
	.rand_out_by_address = false,
	.timed = false,
	.cache = 32,
	.want_faults = 254,
	.want_major_faults = 32,
	.want_swap_ra = 222,
	.want_swap_ra_hit = 222,
	.want_hit_permille = 1000,
	.want_seq_major_faults = 32,
	.want_seq_ra = 222,
	.want_seq_ra_hit = 222,
	.want_rand_major_faults = 0,
	.want_rand_ra = 0,
	.want_rand_ra_hit = 0,
	.want_evicted = 0,
	.reverted_fails = false,
},
{
	.scale = SRR_SMALL,
	.desc = "one sequential swapper, VMA readahead",
	.vma_ra = true,
	.seq_streams = 1,
	.seq_pages = 254,
	.rand_streams = 0,
	.rand_pages = 0,
	.rand_faults = false,
	.rand_stride = 1,
	.run = 1,
	.rand_out_by_address = false,
	.timed = false,
	.cache = 32,
	.want_faults = 254,
	.want_major_faults = 33,
	.want_swap_ra = 221,
	.want_swap_ra_hit = 221,
	.want_hit_permille = 1000,
	.want_seq_major_faults = 33,
	.want_seq_ra = 221,
	.want_seq_ra_hit = 221,
	.want_rand_major_faults = 0,
	.want_rand_ra = 0,
	.want_rand_ra_hit = 0,
	.want_evicted = 0,
	.reverted_fails = false,
},
{
	.scale = SRR_SMALL,
	.desc = "beside an idle swapper, cluster readahead",
	.vma_ra = false,
	.seq_streams = 1,
	.seq_pages = 127,
	.rand_streams = 1,
	.rand_pages = 127,
	.rand_faults = false,
	.rand_stride = 1,
	.run = 1,
	.rand_out_by_address = false,
	.timed = false,
	.cache = 32,
	.want_faults = 127,
	.want_major_faults = 32,
	.want_swap_ra = 222,
	.want_swap_ra_hit = 95,
	.want_hit_permille = 427,
	.want_seq_major_faults = 32,
	.want_seq_ra = 222,
	.want_seq_ra_hit = 95,
	.want_rand_major_faults = 0,
	.want_rand_ra = 0,
	.want_rand_ra_hit = 0,
	.want_evicted = 111,
	.reverted_fails = false,
},
{
	.scale = SRR_SMALL,
	.desc = "beside an idle swapper, VMA readahead",
	.vma_ra = true,
	.seq_streams = 1,
	.seq_pages = 127,
	.rand_streams = 1,
	.rand_pages = 127,
	.rand_faults = false,
	.rand_stride = 1,
	.run = 1,
	.rand_out_by_address = false,
	.timed = false,
	.cache = 32,
	.want_faults = 127,
	.want_major_faults = 17,
	.want_swap_ra = 110,
	.want_swap_ra_hit = 110,
	.want_hit_permille = 1000,
	.want_seq_major_faults = 17,
	.want_seq_ra = 110,
	.want_seq_ra_hit = 110,
	.want_rand_major_faults = 0,
	.want_rand_ra = 0,
	.want_rand_ra_hit = 0,
	.want_evicted = 0,
	.reverted_fails = false,
},
{
	.scale = SRR_SMALL,
	.desc = "both in swap-out order, cluster readahead",
	.vma_ra = false,
	.seq_streams = 1,
	.seq_pages = 127,
	.rand_streams = 1,
	.rand_pages = 127,
	.rand_faults = true,
	.rand_stride = 33,
	.run = 1,
	.rand_out_by_address = false,
	.timed = false,
	.cache = 32,
	.want_faults = 254,
	.want_major_faults = 32,
	.want_swap_ra = 222,
	.want_swap_ra_hit = 222,
	.want_hit_permille = 1000,
	.want_seq_major_faults = 1,
	.want_seq_ra = 6,
	.want_seq_ra_hit = 6,
	.want_rand_major_faults = 31,
	.want_rand_ra = 216,
	.want_rand_ra_hit = 216,
	.want_evicted = 0,
	.reverted_fails = false,
},
{
	.scale = SRR_SMALL,
	.desc = "both in swap-out order, VMA readahead",
	.vma_ra = true,
	.seq_streams = 1,
	.seq_pages = 127,
	.rand_streams = 1,
	.rand_pages = 127,
	.rand_faults = true,
	.rand_stride = 33,
	.run = 1,
	.rand_out_by_address = false,
	.timed = false,
	.cache = 32,
	.want_faults = 254,
	.want_major_faults = 144,
	.want_swap_ra = 118,
	.want_swap_ra_hit = 110,
	.want_hit_permille = 932,
	.want_seq_major_faults = 17,
	.want_seq_ra = 110,
	.want_seq_ra_hit = 110,
	.want_rand_major_faults = 127,
	.want_rand_ra = 8,
	.want_rand_ra_hit = 0,
	.want_evicted = 8,
	.reverted_fails = false,
},
{
	.scale = SRR_SEED,
	.desc = "4 sequential beside 8 random swappers, cluster readahead",
	.vma_ra = false,
	.seq_streams = 4,
	.seq_pages = 3413,
	.rand_streams = 8,
	.rand_pages = 1024,
	.rand_faults = true,
	.rand_stride = 129,
	.run = 31,
	.rand_out_by_address = true,
	.timed = true,
	.cache = 120,
	.want_faults = 21844,
	.reverted_fails = false,
},
{
	.scale = SRR_SEED,
	.desc = "4 sequential beside 8 random swappers, VMA readahead",
	.vma_ra = true,
	.seq_streams = 4,
	.seq_pages = 3413,
	.rand_streams = 8,
	.rand_pages = 1024,
	.rand_faults = true,
	.rand_stride = 129,
	.run = 31,
	.rand_out_by_address = true,
	.timed = true,
	.cache = 120,
	.want_faults = 21844,
	.want_major_faults = 9908,
	.want_swap_ra = 12000,
	.want_swap_ra_hit = 11936,
	.want_hit_permille = 994,
	.want_seq_major_faults = 1716,
	.want_seq_ra = 11936,
	.want_seq_ra_hit = 11936,
	.want_rand_major_faults = 8192,
	.want_rand_ra = 64,
	.want_rand_ra_hit = 0,
	.want_evicted = 64,
	.reverted_fails = false,
},
