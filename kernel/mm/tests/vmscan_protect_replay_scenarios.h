/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scenarios of mm_vmscan_protect_replay and its seed-scale suite:
 * initialisers of struct vmscan_protect_replay_scenario, one field a
 * line, included by vmscan_protect_replay_kunit.h.
 *
 * The bounds, from the rules of the multi-gen LRU (W is LRU_REFS_WIDTH,
 * 1 or 2; C the capacity, H the hot pages, S the stream's 2C pages, N the
 * cycles):
 *
 *  - A read() of one page marks its folio accessed once (the read before
 *    ended in another page). The first access sets PG_referenced, each
 *    further one adds one to the refs field, and the one after the field
 *    is full sets PG_workingset: after BIT(W) + 1 reads (at most 5) the
 *    folio's refs and PG_workingset are all set, it is saturated. Moved
 *    to the next generation by sort_folio(), it loses PG_referenced and
 *    its refs, keeps PG_workingset, and is saturated again after BIT(W)
 *    more reads (at most 4).
 *  - A new memcg's lruvec has 4 generations (min_seq 0, max_seq 3). The
 *    page cache first exceeds C after the 8th round (H + 8 chunks: C/16
 *    over), when the hot set, read first and so the oldest of its
 *    generation, has been read 8 times (every round) or twice (every
 *    4th round), and no page has refaulted.
 *  - Eviction takes from the generations but the two youngest, oldest
 *    first; aging happens only when they cannot free enough, or at the
 *    start of a cycle where the row says.
 *
 * With the protection (7.3), read every round: a page read enters
 * max(max_seq - 2, min_seq), generation 1; generation 0 is empty, so the
 * first eviction moves min_seq to 1 and visits the hot set first: every
 * hot folio is saturated and moved to generation 2, whatever tier_idx
 * is, and the stream pages behind it (tier 0) are evicted. Every later
 * read enters generation 1, the oldest, which eviction never empties (it
 * holds C - H pages and a round evicts a chunk): nothing ages, the hot
 * set is never visited again, and never refaults: hot_refaults = 0.
 * Aged at each cycle's start, pages read enter the hot set's generation;
 * eviction empties the one below within the cycle (C - H pages, under 8
 * chunks), then visits the hot set, read every round since its last
 * move (at least 8 times): saturated again, moved up again, and never
 * evicted: hot_refaults = 0.
 *
 * Without it (the rules before the change), every page read
 * enters min_seq, generation 0, and the first eviction's C/16 = H pages
 * are the hot set: saturated, tier 3, but tier_idx is 3 (no tier has
 * refaulted) and only a tier above it is protected, so all of it is
 * evicted and refaults in the next round: hot_refaults >= H, and the
 * rows that want 0 fail.
 *
 * Read every 4th round, the hot set has been read twice when it is first
 * visited: PG_referenced and one in the refs field, tier 1, not
 * saturated at either width; tier_idx is 3, so it is evicted with and
 * without the protection, and refaults in its next round:
 * hot_refaults >= H in both.
 *
 * The stream: a page of it is read again only after the S - 1 others,
 * of which the page cache holds at most C; no stream page is ever
 * protected (tier 0 with its one read a cycle, never saturated) and
 * each enters the generation of the pages read after it or an older
 * one, so each is evicted before it is read again: every read after the
 * first cycle refaults, stream_refaults = (N - 1) * S, in every row and
 * build.
 *
 * Agings and advances of min_seq, with the protection: read every round
 * or every 4th, nothing ages, and min_seq advances once (over the empty
 * generation 0); aged at each cycle's start, the N - 1 agings are the
 * row's own, and min_seq advances once more in each of those cycles.
 * Without it min_seq stays (generation 0 never empties) but for the
 * aged row, whose agings each move it up with the whole of generation 0
 * (inc_min_seq() with 4 generations): the rows that read the hot set
 * every 4th round, where the builds must agree, bound agings only.
 *
 * The seed scale keeps the ratios at the memcg of the fio run the change
 * was reviewed with (memory.max 4G), scaled by 1/16: 65536 pages, 256 MiB
 * of 4 KiB pages.
 */
{
	.scale = VPR_SMALL,
	.desc = "hot set read every round beside a stream of twice the capacity",
	.capacity = 8192,
	.hot_pages = 512,
	.hot_period = 1,
	.chunk = 1024,
	.rounds = 16,
	.cycles = 4,
	.age_each_cycle = false,
	.want_hot_refaults = 0,
	.want_stream_refaults = 49152,
	.want_agings = 0,
	.want_turnovers = 1,
	.reverted_fails = true,
},
{
	.scale = VPR_SMALL,
	.desc = "the same, aged at each cycle's start",
	.capacity = 8192,
	.hot_pages = 512,
	.hot_period = 1,
	.chunk = 1024,
	.rounds = 16,
	.cycles = 4,
	.age_each_cycle = true,
	.want_hot_refaults = 0,
	.want_stream_refaults = 49152,
	.want_agings = 3,
	.want_turnovers = 4,
	.reverted_fails = true,
},
{
	.scale = VPR_SMALL,
	.desc = "hot set read every 4th round: not saturated when first visited",
	.capacity = 8192,
	.hot_pages = 512,
	.hot_period = 4,
	.chunk = 1024,
	.rounds = 16,
	.cycles = 4,
	.age_each_cycle = false,
	.min_hot_refaults = 512,
	.want_stream_refaults = 49152,
	.want_agings = 0,
	.reverted_fails = false,
},
{
	.scale = VPR_SEED,
	.desc = "hot set read every round beside a stream of twice the capacity",
	.capacity = 65536,
	.hot_pages = 4096,
	.hot_period = 1,
	.chunk = 8192,
	.rounds = 16,
	.cycles = 4,
	.age_each_cycle = false,
	.want_hot_refaults = 0,
	.want_stream_refaults = 393216,
	.want_agings = 0,
	.want_turnovers = 1,
	.reverted_fails = true,
},
{
	.scale = VPR_SEED,
	.desc = "the same, aged at each cycle's start",
	.capacity = 65536,
	.hot_pages = 4096,
	.hot_period = 1,
	.chunk = 8192,
	.rounds = 16,
	.cycles = 4,
	.age_each_cycle = true,
	.want_hot_refaults = 0,
	.want_stream_refaults = 393216,
	.want_agings = 3,
	.want_turnovers = 4,
	.reverted_fails = true,
},
