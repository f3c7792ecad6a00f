/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit replay of swappers sharing one swap device, through the real
 * swap-in path of mm/swap_state.c: the pages that cluster readahead and
 * VMA-based readahead read ahead for each, and how many of them are hit.
 *
 * This file is included at the bottom of mm/swap_state.c, after
 * swap_state_kunit.h, whose swap device, VMA and knob helpers it uses.
 *
 * Suites:
 *  - mm_swap_ra_replay: the small scenarios, each replayed twice;
 *  - mm_swap_ra_replay_seed: the seed's swappers, scaled to the test
 *    swap device (mm/tests/swap_ra_replay_scenarios.h says how).
 *
 * A scenario gives each sequential and each random swapper a VMA,
 * PMD-aligned and apart, whose PTEs are swap entries of one test device
 * in the layout swap-out left (the scenario table says which), and
 * faults their pages, in turn or by a clock each (the scenario says), as
 * do_swap_page() does before it maps one:
 * under the mmap read lock and a reference on the device, a swap cache
 * lookup, counted by swap_update_readahead() if it finds the page, else
 * swapin_readahead() (cluster or VMA readahead, as the row's
 * enable_vma_readahead says), whose pages read ahead the replay tracks
 * by the fault that read them. The pages are not mapped, and stay in
 * the swap cache: each is faulted once. The device reads every slot as
 * a zero-filled page, without I/O.
 *
 * Where the kernel has memory cgroups, the pages swapped in are charged
 * to a memcg of the replay's own, named in every slot's swap cgroup
 * record as swap-out names it; it has no limit.
 *
 * A page read ahead lives in the swap cache until the row's number of
 * pages have been read after it: if it is still unhit then, it is
 * deleted from the swap cache, as reclaim drops a clean swap cache folio
 * (without leaving a shadow entry), so that a later fault reads it
 * again. The replay evicts, not reclaim, whose eviction would move the
 * root memcg's workingset state and depends on what else the system
 * holds. The pages faulted, and those hit, stay cached.
 *
 * The suites report per scenario the faults, the major faults (swap
 * cache misses), the pages read ahead (SWAP_RA) and hit (SWAP_RA_HIT),
 * the hit rate in per mille, each again for the faults of the sequential
 * and of the random swappers, and the pages evicted, as KTAP diagnostics
 * ("# replay: ..."). They check what holds on every build: the counts
 * the replay keeps are the kernel's SWAP_RA and SWAP_RA_HIT, no page
 * read ahead is lost but by the replay's eviction, and, at small scale,
 * a second replay gives the same numbers.
 */

#ifdef CONFIG_MM_SWAP_RA_REPLAY_KUNIT_TEST

#include <linux/gcd.h>
#include <linux/sort.h>

#include "memcg_kunit.h"

enum swap_ra_replay_scale {
	SRR_SMALL,
	SRR_SEED,
};

struct swap_ra_replay_scenario {
	enum swap_ra_replay_scale scale;
	const char *desc;
	/* VMA-based readahead, else cluster readahead. */
	bool vma_ra;
	/*
	 * The sequential swappers and their pages each, faulted in address
	 * order; the random ones, whose page j in the order of their faults
	 * is at virtual page rand_stride * j modulo rand_pages, and whether
	 * they fault (else they are idle).
	 */
	unsigned int seq_streams;
	unsigned int seq_pages;
	unsigned int rand_streams;
	unsigned int rand_pages;
	bool rand_faults;
	unsigned int rand_stride;
	/*
	 * The layout: runs of up to this many pages of a swapper, each run
	 * to the swapper with the least of its pages written (ties to the
	 * first, sequential ones first); a random swapper's pages in the
	 * order of its faults, or in address order.
	 */
	unsigned int run;
	bool rand_out_by_address;
	/*
	 * The faults: a page of each faulting swapper in turn, or each
	 * swapper by its own clock, the next fault the earliest's, a hit
	 * costing 1 and a major fault 100 (ties to the first swapper).
	 */
	bool timed;
	/* The pages read after a page read ahead before it is evicted. */
	unsigned int cache;
	/*
	 * Bounds the kernel does not check (the harness does): exact
	 * counts, and whether a build without the change must fail them
	 * (false in every row: both algorithms are in the tree, and there
	 * is no such build).
	 */
	unsigned long want_faults;
	unsigned long want_major_faults;
	unsigned long want_swap_ra;
	unsigned long want_swap_ra_hit;
	unsigned long want_hit_permille;
	unsigned long want_seq_major_faults;
	unsigned long want_seq_ra;
	unsigned long want_seq_ra_hit;
	unsigned long want_rand_major_faults;
	unsigned long want_rand_ra;
	unsigned long want_rand_ra_hit;
	unsigned long want_evicted;
	bool reverted_fails;
};

static const struct swap_ra_replay_scenario swap_ra_replay_scenarios[] = {
#include "swap_ra_replay_scenarios.h"
};

static const void *swap_ra_replay_gen(const void *prev, char *desc,
				      enum swap_ra_replay_scale scale)
{
	const struct swap_ra_replay_scenario *sc = prev;

	sc = sc ? sc + 1 : swap_ra_replay_scenarios;
	for (; sc < swap_ra_replay_scenarios +
		    ARRAY_SIZE(swap_ra_replay_scenarios); sc++) {
		if (sc->scale == scale) {
			strscpy(desc, sc->desc, KUNIT_PARAM_DESC_SIZE);
			return sc;
		}
	}
	return NULL;
}

static const void *swap_ra_replay_small_params(struct kunit *test,
					       const void *prev, char *desc)
{
	return swap_ra_replay_gen(prev, desc, SRR_SMALL);
}

static const void *swap_ra_replay_seed_params(struct kunit *test,
					      const void *prev, char *desc)
{
	return swap_ra_replay_gen(prev, desc, SRR_SEED);
}

/* The kinds of swapper: the counts are kept per kind. */
enum swap_ra_replay_kind {
	SRR_SEQ,
	SRR_RAND,
	SRR_KINDS,
};

/* What the replay knows of a slot. */
enum swap_ra_replay_state {
	SRR_SWAPPED,	/* not in the swap cache */
	SRR_AHEAD,	/* read ahead, not hit yet */
	SRR_READ,	/* faulted, or read ahead and hit */
};

#define SRR_MAX_STREAMS	16
/* The most pages a fault reads: the window of page_cluster 3. */
#define SRR_WINDOW	8
/* What a fault costs on a swapper's clock. */
#define SRR_HIT_COST	1
#define SRR_MAJOR_COST	100

struct swap_ra_replay_counts {
	unsigned long faults;
	unsigned long major_faults[SRR_KINDS];
	unsigned long ra[SRR_KINDS];
	unsigned long ra_hit[SRR_KINDS];
	unsigned long evicted;
};

struct swap_ra_replay_stream {
	enum swap_ra_replay_kind kind;
	unsigned int pages;
	struct vm_area_struct *vma;
	long first_page;
	/* Per virtual page of the VMA: its slot. */
	unsigned int *slot_at;
	unsigned int next;
	unsigned long clock;
};

struct swap_ra_replay {
	const struct swap_ra_replay_scenario *sc;
	struct swap_info_struct *si;
	struct mem_cgroup *memcg;	/* the replay's own, or NULL */
	unsigned int nr_slots;
	unsigned int nr_streams;
	struct swap_ra_replay_stream stream[SRR_MAX_STREAMS];
	/* Per slot: its state, and the kind of swapper whose fault read it. */
	u8 *state;
	u8 *reader;
	/* The slots read, oldest first: a ring of sc->cache + 2 windows. */
	unsigned int *fifo;
	unsigned int fifo_size;
	unsigned int fifo_head;
	unsigned int fifo_len;
	struct swap_ra_replay_counts c;
};

/* The virtual page, in its VMA, of page @j of @st. */
static unsigned int swap_ra_replay_vpage(const struct swap_ra_replay *r,
					 const struct swap_ra_replay_stream *st,
					 unsigned int j)
{
	if (st->kind == SRR_SEQ)
		return j;
	return (unsigned long)r->sc->rand_stride * j % st->pages;
}

/* The slot of page @j of @st. */
static unsigned int swap_ra_replay_slot(const struct swap_ra_replay *r,
					const struct swap_ra_replay_stream *st,
					unsigned int j)
{
	return st->slot_at[swap_ra_replay_vpage(r, st, j)];
}

static unsigned long swap_ra_replay_addr(const struct swap_ra_replay *r,
					 const struct swap_ra_replay_stream *st,
					 unsigned int j)
{
	return swap_state_test_addr(st->first_page +
				    swap_ra_replay_vpage(r, st, j));
}

/*
 * The slots, from 1, as swap-out wrote them: runs of up to sc->run pages,
 * each to the swapper with the least part of its pages written. A
 * swapper's pages are written in address order, a random one's in the
 * order of its faults unless sc->rand_out_by_address.
 */
static void swap_ra_replay_layout(struct swap_ra_replay *r)
{
	unsigned int written[SRR_MAX_STREAMS] = {};
	unsigned int slot = 1, s, best, n;

	for (;;) {
		best = r->nr_streams;
		for (s = 0; s < r->nr_streams; s++) {
			if (written[s] == r->stream[s].pages)
				continue;
			if (best == r->nr_streams ||
			    (u64)written[s] * r->stream[best].pages <
			    (u64)written[best] * r->stream[s].pages)
				best = s;
		}
		if (best == r->nr_streams)
			return;
		n = min(r->sc->run, r->stream[best].pages - written[best]);
		for (; n; n--, written[best]++) {
			struct swap_ra_replay_stream *st = &r->stream[best];
			unsigned int w = written[best];

			/*
			 * w counts the pages in the order they are written:
			 * by address (virtual page w) or, for a random
			 * swapper unless rand_out_by_address, by fault.
			 */
			if (!r->sc->rand_out_by_address)
				w = swap_ra_replay_vpage(r, st, w);
			st->slot_at[w] = slot++;
		}
	}
}

struct swap_ra_replay_memcg_records {
	struct swap_info_struct *si;
	unsigned int nr_slots;
};

/*
 * Write @id into the swap cgroup record of every slot but 0, or clear the
 * records if @id is 0: a cluster at a time, under its lock.
 */
static void swap_ra_replay_set_records(struct swap_info_struct *si,
				       unsigned int nr_slots, unsigned short id)
{
	struct swap_cluster_info *ci;
	unsigned int offset, end;

	for (offset = 1; offset < nr_slots; offset = end) {
		end = round_down(offset, SWAPFILE_CLUSTER) + SWAPFILE_CLUSTER;
		end = min(end, nr_slots);
		ci = swap_cluster_lock(si, offset);
		if (id)
			__swap_cgroup_set(ci, offset % SWAPFILE_CLUSTER,
					  end - offset, id);
		else
			__swap_cgroup_clear(ci, offset % SWAPFILE_CLUSTER,
					    end - offset);
		swap_cluster_unlock(ci);
	}
}

static void swap_ra_replay_clear_records(void *data)
{
	struct swap_ra_replay_memcg_records *rec = data;

	swap_ra_replay_set_records(rec->si, rec->nr_slots, 0);
}

/*
 * @memcg's id in every slot's swap cgroup record, as a cgroup2 swap-out
 * of its task leaves it, so that every page swapped in is charged to it
 * (mem_cgroup_swapin_charge_folio()) and sits on its LRU lists, not on
 * the root's. No swap is charged for the records, and none uncharged:
 * they are cleared before the device goes (which checks that they are).
 */
static void swap_ra_replay_record_memcg(struct kunit *test,
					struct swap_ra_replay *r,
					struct mem_cgroup *memcg)
{
	struct swap_ra_replay_memcg_records *rec;

	rec = kunit_kzalloc(test, sizeof(*rec), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rec);
	rec->si = r->si;
	rec->nr_slots = r->nr_slots;
	swap_ra_replay_set_records(r->si, r->nr_slots,
				   mem_cgroup_private_id(memcg));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  swap_ra_replay_clear_records,
						  rec));
}

/*
 * A lower bound of the pages charged to @memcg; for NULL (no memcg of the
 * replay's own), ULONG_MAX, which bounds nothing.
 */
static unsigned long swap_ra_replay_charged(struct mem_cgroup *memcg)
{
#ifdef CONFIG_MEMCG
	if (memcg)
		return page_counter_read(&memcg->memory);
#endif
	return ULONG_MAX;
}

struct swap_ra_replay_ptes {
	struct swap_ra_replay *r;
	struct mm_struct *mm;
};

/*
 * Take the replay's swap PTEs down, as unmapping would, before the swap
 * device goes (swap_state_test_unmap_ptes() says why here).
 */
static void swap_ra_replay_unmap(void *data)
{
	struct swap_ra_replay_ptes *p = data;
	struct swap_ra_replay *r = p->r;
	unsigned int s, j;
	pmd_t *pmd;

	mmap_read_lock(p->mm);
	for (s = 0; s < r->nr_streams; s++) {
		for (j = 0; j < r->stream[s].pages; j++) {
			unsigned long addr = swap_ra_replay_addr(r, &r->stream[s], j);

			pmd = mm_find_pmd(p->mm, addr);
			if (pmd)
				swap_state_test_clear_swap_pte(p->mm, pmd, addr);
		}
	}
	mmap_read_unlock(p->mm);
	mmput(p->mm);
}

/* The regions of PMD size a stream's VMA may take, and a run's VMAs. */
#define SRR_STREAM_PMDS	8
#define SRR_RUN_PMDS	(SRR_STREAM_PMDS * SRR_MAX_STREAMS)

/*
 * The device, the knobs and the VMAs of the scenario, in @run's region:
 * every page a swap PTE for its slot.
 */
static void swap_ra_replay_setup(struct kunit *test, struct swap_ra_replay *r,
				 int run)
{
	const struct swap_ra_replay_scenario *sc = r->sc;
	struct swap_ra_replay_ptes *p;
	struct mm_struct *mm;
	unsigned int s, j;

	r->nr_streams = sc->seq_streams + sc->rand_streams;
	r->nr_slots = 1 + sc->seq_streams * sc->seq_pages +
		sc->rand_streams * sc->rand_pages;
	KUNIT_ASSERT_GT(test, r->nr_streams, 0);
	KUNIT_ASSERT_LE(test, r->nr_streams, SRR_MAX_STREAMS);
	KUNIT_ASSERT_LE(test, r->nr_slots, SWAP_STATE_TEST_MAX_PAGES);
	KUNIT_ASSERT_GE(test, sc->cache, SRR_WINDOW);
	KUNIT_ASSERT_GT(test, sc->run, 0);
	r->state = kunit_kcalloc(test, r->nr_slots, sizeof(*r->state), GFP_KERNEL);
	r->reader = kunit_kcalloc(test, r->nr_slots, sizeof(*r->reader), GFP_KERNEL);
	r->fifo_size = sc->cache + 2 * SRR_WINDOW;
	r->fifo = kunit_kcalloc(test, r->fifo_size, sizeof(*r->fifo), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, r->state && r->reader && r->fifo);
	for (s = 0; s < r->nr_streams; s++) {
		struct swap_ra_replay_stream *st = &r->stream[s];

		st->kind = s < sc->seq_streams ? SRR_SEQ : SRR_RAND;
		st->pages = st->kind == SRR_SEQ ? sc->seq_pages : sc->rand_pages;
		KUNIT_ASSERT_LE(test, st->pages,
				(SRR_STREAM_PMDS - 1) * SWAP_STATE_TEST_PMD_PAGES);
		KUNIT_ASSERT_TRUE(test, st->kind == SRR_SEQ ||
				  gcd(sc->rand_stride, st->pages) == 1);
		st->slot_at = kunit_kcalloc(test, st->pages,
					    sizeof(*st->slot_at), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, st->slot_at);
	}
	swap_ra_replay_layout(r);

	/* As swap_state_test_cluster_setup(), with the hits a boot leaves. */
	swap_state_test_use_vma_readahead(test);
	mm_kunit_set_knob(test, enable_vma_readahead, sc->vma_ra);
	swap_state_test_forget_window(test);
	atomic_set(&swapin_readahead_hits, 4);
	/*
	 * A memcg of the replay's own, where the kernel has memory cgroups,
	 * made before the device and so removed after it. It has no limit:
	 * the replay bounds the swap cache itself.
	 */
	r->memcg = mem_cgroup_disabled() ? NULL : mm_kunit_memcg_create(test);
	r->si = swap_state_test_swapon_dev(test, r->nr_slots);
	if (r->memcg)
		swap_ra_replay_record_memcg(test, r, r->memcg);

	for (s = 0; s < r->nr_streams; s++) {
		struct swap_ra_replay_stream *st = &r->stream[s];

		st->first_page = (long)SWAP_STATE_TEST_PMD_PAGES *
			(SRR_RUN_PMDS * run + SRR_STREAM_PMDS * s);
		st->vma = swap_state_test_vma(test, st->first_page,
					      st->first_page + st->pages, 0);
	}
	mm = current->mm;
	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->r = r;
	p->mm = mm;
	mmget(mm);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   swap_ra_replay_unmap,
							   p));
	for (s = 0; s < r->nr_streams; s++) {
		for (j = 0; j < r->stream[s].pages; j++) {
			unsigned long addr = swap_ra_replay_addr(r, &r->stream[s], j);
			swp_entry_t entry = swp_entry(r->si->type,
						      swap_ra_replay_slot(r, &r->stream[s], j));

			KUNIT_ASSERT_TRUE(test, mm_kunit_set_pte(mm, addr,
								 softleaf_to_pte(entry)));
			inc_mm_counter(mm, MM_SWAPENTS);
		}
	}
}

/*
 * Let go of the oldest pages read until the ring holds at most the
 * scenario's number: one still read ahead and unhit is deleted from the
 * swap cache; its slot keeps its swap count, and a fault reads it again.
 */
static void swap_ra_replay_trim(struct kunit *test, struct swap_ra_replay *r)
{
	while (r->fifo_len > r->sc->cache) {
		unsigned long offset = r->fifo[r->fifo_head];
		swp_entry_t entry = swp_entry(r->si->type, offset);
		struct swap_info_struct *si;
		struct folio *folio;
		bool deleted = false;

		r->fifo_head = (r->fifo_head + 1) % r->fifo_size;
		r->fifo_len--;
		if (r->state[offset] != SRR_AHEAD)
			continue;
		si = get_swap_device(entry);
		folio = si ? swap_cache_get_folio(entry) : NULL;
		if (folio) {
			folio_lock(folio);
			if (folio_matches_swap_entry(folio, entry)) {
				swap_cache_del_folio(folio);
				deleted = true;
			}
			folio_unlock(folio);
			folio_put(folio);
		}
		if (si)
			put_swap_device(si);
		KUNIT_ASSERT_TRUE_MSG(test, deleted, "%s: slot %lu lost",
				      r->sc->desc, offset);
		r->state[offset] = SRR_SWAPPED;
		r->c.evicted++;
	}
}

static int swap_ra_replay_cmp(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

/*
 * The slots a fault of @st on its page @j may read, in slot order, each
 * once: the aligned block of slots around its own (cluster readahead),
 * and those of the pages of its VMA less than a window away (VMA
 * readahead). Returns how many.
 */
static unsigned int swap_ra_replay_candidates(const struct swap_ra_replay *r,
					      const struct swap_ra_replay_stream *st,
					      unsigned int j, unsigned int *out)
{
	unsigned int target = swap_ra_replay_slot(r, st, j);
	unsigned int vp = swap_ra_replay_vpage(r, st, j);
	unsigned int block = round_down(target, SRR_WINDOW);
	unsigned int n = 0, i, o, v;

	for (o = block; o < block + SRR_WINDOW; o++) {
		if (o && o < r->nr_slots)
			out[n++] = o;
	}
	for (v = vp > SRR_WINDOW - 1 ? vp - (SRR_WINDOW - 1) : 0;
	     v < st->pages && v <= vp + SRR_WINDOW - 1; v++)
		out[n++] = st->slot_at[v];
	sort(out, n, sizeof(*out), swap_ra_replay_cmp, NULL);
	for (i = 0, o = 0; i < n; i++) {
		if (!o || out[i] != out[o - 1])
			out[o++] = out[i];
	}
	return o;
}

/*
 * After a major fault of @st on its page @j: every slot the fault read
 * into the swap cache, in slot order (the order of the reads of cluster
 * readahead). Returns the pages whose PG_readahead is not what it must
 * be: set on those read ahead, clear on the target; and one more, at
 * once, if the fault read more pages than the ring has room for (more
 * than two windows).
 */
static unsigned long swap_ra_replay_adopt(struct swap_ra_replay *r,
					  struct swap_ra_replay_stream *st,
					  unsigned int j)
{
	unsigned int slots[4 * SRR_WINDOW], n, i;
	unsigned long wrong = 0;
	struct folio *folio;
	bool is_target;

	n = swap_ra_replay_candidates(r, st, j, slots);
	for (i = 0; i < n; i++) {
		unsigned int offset = slots[i];

		if (r->state[offset] != SRR_SWAPPED)
			continue;
		folio = swap_state_test_cached(r->si, offset);
		if (!folio)
			continue;
		if (r->fifo_len == r->fifo_size)
			return wrong + 1;
		is_target = offset == swap_ra_replay_slot(r, st, j);
		if (folio_test_readahead(folio) == is_target)
			wrong++;
		if (is_target) {
			r->state[offset] = SRR_READ;
		} else {
			r->state[offset] = SRR_AHEAD;
			r->reader[offset] = st->kind;
			r->c.ra[st->kind]++;
		}
		r->fifo[(r->fifo_head + r->fifo_len) % r->fifo_size] = offset;
		r->fifo_len++;
	}
	return wrong;
}

/*
 * The fault of @st on its next page, as do_swap_page() begins it; whether
 * it was a hit.
 */
static bool swap_ra_replay_fault(struct kunit *test, struct swap_ra_replay *r,
				 struct swap_ra_replay_stream *st)
{
	unsigned long offset = swap_ra_replay_slot(r, st, st->next);
	unsigned long address = swap_ra_replay_addr(r, st, st->next);
	swp_entry_t entry = swp_entry(r->si->type, offset);
	struct vm_area_struct *vma = st->vma;
	struct vm_fault vmf = {
		.vma = vma,
		.address = address,
		.real_address = address,
		.flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE |
			 FAULT_FLAG_USER,
	};
	bool was_ahead = r->state[offset] == SRR_AHEAD;
	bool hit = false, ok = false;
	struct swap_info_struct *si;
	unsigned long wrong = 0;
	struct folio *folio;

	mmap_read_lock(vma->vm_mm);
	si = get_swap_device(entry);
	if (si) {
		folio = swap_cache_get_folio(entry);
		if (folio) {
			hit = folio_test_readahead(folio);
			swap_update_readahead(folio, vma, address);
		} else {
			vmf.pmd = mm_find_pmd(vma->vm_mm, address);
			folio = vmf.pmd ? swapin_readahead(entry,
							   GFP_HIGHUSER_MOVABLE,
							   &vmf) : NULL;
		}
		if (folio) {
			/* As do_swap_page(): the folio locked, and still ours. */
			folio_lock(folio);
			ok = folio_matches_swap_entry(folio, entry) &&
			     folio_test_uptodate(folio);
			folio_unlock(folio);
			folio_put(folio);
		}
		put_swap_device(si);
	}
	mmap_read_unlock(vma->vm_mm);

	KUNIT_ASSERT_TRUE_MSG(test, ok, "%s: slot %lu not read", r->sc->desc,
			      offset);
	/* A page read ahead is hit until it is evicted, and only then. */
	KUNIT_ASSERT_EQ_MSG(test, was_ahead, hit, "%s: slot %lu", r->sc->desc,
			    offset);
	KUNIT_ASSERT_NE_MSG(test, r->state[offset], SRR_READ,
			    "%s: slot %lu faulted twice", r->sc->desc, offset);
	r->c.faults++;
	if (hit) {
		r->c.ra_hit[r->reader[offset]]++;
		r->state[offset] = SRR_READ;
	} else {
		r->c.major_faults[st->kind]++;
		wrong = swap_ra_replay_adopt(r, st, st->next);
	}
	st->next++;
	KUNIT_ASSERT_EQ_MSG(test, 0UL, wrong,
			    "%s: fault on slot %lu: what it read is not marked as read",
			    r->sc->desc, offset);
	swap_ra_replay_trim(test, r);
	return hit;
}

/* Whether @st has a page left to fault. */
static bool swap_ra_replay_has_next(const struct swap_ra_replay *r,
				    const struct swap_ra_replay_stream *st)
{
	return st->next < st->pages && (st->kind == SRR_SEQ || r->sc->rand_faults);
}

/*
 * The swapper whose fault is next: by the clocks, the earliest; else the
 * first after @last that has a page left. NULL when none has.
 */
static struct swap_ra_replay_stream *
swap_ra_replay_next(struct swap_ra_replay *r, unsigned int *last)
{
	struct swap_ra_replay_stream *best = NULL;
	unsigned int i, s;

	for (i = 1; i <= r->nr_streams; i++) {
		s = r->sc->timed ? i - 1 : (*last + i) % r->nr_streams;
		if (!swap_ra_replay_has_next(r, &r->stream[s]))
			continue;
		if (!r->sc->timed) {
			*last = s;
			return &r->stream[s];
		}
		if (!best || r->stream[s].clock < best->clock)
			best = &r->stream[s];
	}
	return best;
}

static struct swap_ra_replay_counts
swap_ra_replay_once(struct kunit *test, const struct swap_ra_replay_scenario *sc,
		    int run)
{
	unsigned long swap_ra, swap_ra_hit, held;
	struct swap_ra_replay_stream *st;
	struct swap_ra_replay *r;
	unsigned int last, i;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->sc = sc;
	swap_ra_replay_setup(test, r, run);
	last = r->nr_streams - 1;

	swap_ra = mm_kunit_vm_event(test, SWAP_RA);
	swap_ra_hit = mm_kunit_vm_event(test, SWAP_RA_HIT);
	while ((st = swap_ra_replay_next(r, &last)))
		st->clock += swap_ra_replay_fault(test, r, st) ? SRR_HIT_COST :
			     SRR_MAJOR_COST;
	swap_ra = mm_kunit_vm_event(test, SWAP_RA) - swap_ra;
	swap_ra_hit = mm_kunit_vm_event(test, SWAP_RA_HIT) - swap_ra_hit;

	/* Every page the replay holds in the swap cache is its memcg's. */
	for (held = 0, i = 1; i < r->nr_slots; i++)
		held += r->state[i] != SRR_SWAPPED;
	KUNIT_EXPECT_GE(test, swap_ra_replay_charged(r->memcg), held);
	/* The kernel counted what the replay did. */
	KUNIT_EXPECT_EQ(test, swap_ra, r->c.ra[SRR_SEQ] + r->c.ra[SRR_RAND]);
	KUNIT_EXPECT_EQ(test, swap_ra_hit,
			r->c.ra_hit[SRR_SEQ] + r->c.ra_hit[SRR_RAND]);
	return r->c;
}

static struct swap_ra_replay_counts
swap_ra_replay_and_report(struct kunit *test,
			  const struct swap_ra_replay_scenario *sc)
{
	struct swap_ra_replay_counts c;
	unsigned long ra, hits;

	if (sc->scale == SRR_SEED && SWAP_STATE_TEST_PMD_PAGES != 512)
		kunit_skip(test, "the seed's counts assume 512 PTEs a page table");
	c = swap_ra_replay_once(test, sc, 0);
	ra = c.ra[SRR_SEQ] + c.ra[SRR_RAND];
	hits = c.ra_hit[SRR_SEQ] + c.ra_hit[SRR_RAND];
	kunit_info(test,
		   "replay: %s: faults=%lu major_faults=%lu swap_ra=%lu swap_ra_hit=%lu hit_permille=%lu seq_major_faults=%lu seq_ra=%lu seq_ra_hit=%lu rand_major_faults=%lu rand_ra=%lu rand_ra_hit=%lu evicted=%lu\n",
		   sc->desc, c.faults,
		   c.major_faults[SRR_SEQ] + c.major_faults[SRR_RAND], ra, hits,
		   ra ? 1000 * hits / ra : 0,
		   c.major_faults[SRR_SEQ], c.ra[SRR_SEQ], c.ra_hit[SRR_SEQ],
		   c.major_faults[SRR_RAND], c.ra[SRR_RAND], c.ra_hit[SRR_RAND],
		   c.evicted);
	return c;
}

static void swap_ra_replay_test_small(struct kunit *test)
{
	const struct swap_ra_replay_scenario *sc = test->param_value;
	struct swap_ra_replay_counts c, again;

	c = swap_ra_replay_and_report(test, sc);

	/* The same faults on a new device and new VMAs: the same numbers. */
	again = swap_ra_replay_once(test, sc, 1);
	KUNIT_EXPECT_EQ(test, 0, memcmp(&c, &again, sizeof(c)));
}

static void swap_ra_replay_test_seed(struct kunit *test)
{
	swap_ra_replay_and_report(test, test->param_value);
}

static struct kunit_case swap_ra_replay_cases[] = {
	KUNIT_CASE_PARAM_ATTR(swap_ra_replay_test_small,
			      swap_ra_replay_small_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite swap_ra_replay_suite = {
	.name = "mm_swap_ra_replay",
	.test_cases = swap_ra_replay_cases,
};

static struct kunit_case swap_ra_replay_seed_cases[] = {
	KUNIT_CASE_PARAM_ATTR(swap_ra_replay_test_seed,
			      swap_ra_replay_seed_params,
			      { .speed = KUNIT_SPEED_VERY_SLOW }),
	{}
};

static struct kunit_suite swap_ra_replay_seed_suite = {
	.name = "mm_swap_ra_replay_seed",
	.test_cases = swap_ra_replay_seed_cases,
};

kunit_test_suites(&swap_ra_replay_suite, &swap_ra_replay_seed_suite);

#endif /* CONFIG_MM_SWAP_RA_REPLAY_KUNIT_TEST */
