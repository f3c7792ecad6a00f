/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit replay of swappers sharing one swap device, through the real
 * swap-in path of mm/swap_state.c: the pages that cluster readahead and
 * VMA-based readahead read ahead for each, and how many of them are hit.
 *
 * This file is included at the bottom of mm/swap_state.c, after
 * swap_state_kunit.h, whose swap device, VMA and knob helpers it uses.
 *
 * Suite mm_swap_ra_replay: the scenarios of
 * mm/tests/swap_ra_replay_scenarios.h, each replayed twice.
 *
 * A scenario gives a sequential swapper and a random one a VMA each,
 * PMD-aligned and apart, whose PTEs are swap entries of one test device
 * in the layout swap-out left (the scenario table says which), and
 * faults their pages in turn as do_swap_page() does before it maps one:
 * under the mmap read lock and a reference on the device, a swap cache
 * lookup, counted by swap_update_readahead() if it finds the page, else
 * swapin_readahead() (cluster or VMA readahead, as the row's
 * enable_vma_readahead says), whose pages read ahead the replay tracks
 * by the fault that read them. The pages are not mapped, and stay in
 * the swap cache: each is faulted once. The device reads every slot as
 * a zero-filled page, without I/O.
 *
 * The swap cache holds at most the row's number of the pages the replay
 * read, oldest out first: an unhit readahead page that leaves it is
 * deleted from the swap cache (as swapoff deletes a page it finds no
 * user of), so that a later fault reads it again. The swap cache is
 * bounded by the replay, not by reclaim, whose eviction would move the
 * root memcg's workingset state and depends on what else the system
 * holds.
 *
 * The suite reports per scenario the faults, the major faults (swap
 * cache misses), the pages read ahead (SWAP_RA) and hit (SWAP_RA_HIT),
 * the hit rate in per mille, each again for the faults of each swapper,
 * and the pages evicted, as KTAP diagnostics ("# replay: ..."). It
 * checks what holds on every build: the counts the replay keeps are the
 * kernel's SWAP_RA and SWAP_RA_HIT, no page read ahead is lost but by
 * the replay's eviction, and a second replay gives the same numbers.
 */

#ifdef CONFIG_MM_SWAP_RA_REPLAY_KUNIT_TEST

enum swap_ra_replay_scale {
	SRR_SMALL,
};

struct swap_ra_replay_scenario {
	enum swap_ra_replay_scale scale;
	const char *desc;
	/* VMA-based readahead, else cluster readahead. */
	bool vma_ra;
	/*
	 * The sequential swapper's pages, faulted in address order; the
	 * random swapper's, page j at virtual page rand_stride * j modulo
	 * rand_pages, and whether it faults them (a page each after the
	 * sequential one's, in the order of their slots) or is idle.
	 */
	unsigned int seq_pages;
	unsigned int rand_pages;
	bool rand_faults;
	unsigned int rand_stride;
	/* The pages read the swap cache holds at most. */
	unsigned int cache;
	/*
	 * Bounds the kernel does not check (the harness does): exact
	 * counts, and whether the build without the change must fail them
	 * (no row: both algorithms are in the tree).
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

static void swap_ra_replay_desc(const struct swap_ra_replay_scenario *sc,
				char *desc)
{
	strscpy(desc, sc->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(swap_ra_replay, swap_ra_replay_scenarios,
		  swap_ra_replay_desc);

/* The swappers, the index of their counts. */
enum swap_ra_replay_stream {
	SRR_SEQ,
	SRR_RAND,
	SRR_STREAMS,
};

/* What the replay knows of a slot. */
enum swap_ra_replay_state {
	SRR_SWAPPED,	/* not in the swap cache */
	SRR_AHEAD,	/* read ahead, not hit yet */
	SRR_READ,	/* faulted, or read ahead and hit */
};

#define SRR_SLOTS	256
/* The VMAs, in PMD-sized regions from the suite's base, one run apart. */
#define SRR_RUN_PMDS	8

struct swap_ra_replay_counts {
	unsigned long faults;
	unsigned long major_faults[SRR_STREAMS];
	unsigned long ra[SRR_STREAMS];
	unsigned long ra_hit[SRR_STREAMS];
	unsigned long evicted;
};

struct swap_ra_replay {
	const struct swap_ra_replay_scenario *sc;
	struct swap_info_struct *si;
	struct vm_area_struct *vma[SRR_STREAMS];
	long first_page[SRR_STREAMS];
	/* Per slot: its state, and the stream whose fault read it ahead. */
	u8 state[SRR_SLOTS];
	u8 reader[SRR_SLOTS];
	/* The slots read, oldest first: a ring of at most sc->cache. */
	u16 fifo[SRR_SLOTS];
	unsigned int fifo_head;
	unsigned int fifo_len;
	struct swap_ra_replay_counts c;
};

static unsigned int swap_ra_replay_nr_slots(const struct swap_ra_replay_scenario *sc)
{
	return 1 + sc->seq_pages + sc->rand_pages;
}

/* The slot page @i of @stream was swapped out to. */
static unsigned long swap_ra_replay_slot(const struct swap_ra_replay_scenario *sc,
					 int stream, unsigned int i)
{
	if (!sc->rand_pages)
		return i + 1;
	return stream == SRR_SEQ ? 2 * i + 1 : 2 * i + 2;
}

/* The virtual page, in its VMA, of page @i of @stream. */
static unsigned int swap_ra_replay_vpage(const struct swap_ra_replay_scenario *sc,
					 int stream, unsigned int i)
{
	if (stream == SRR_SEQ)
		return i;
	return (unsigned long)sc->rand_stride * i % sc->rand_pages;
}

static unsigned long swap_ra_replay_addr(struct swap_ra_replay *r, int stream,
					 unsigned int i)
{
	return swap_state_test_addr(r->first_page[stream] +
				    swap_ra_replay_vpage(r->sc, stream, i));
}

static unsigned int swap_ra_replay_pages(const struct swap_ra_replay_scenario *sc,
					 int stream)
{
	return stream == SRR_SEQ ? sc->seq_pages : sc->rand_pages;
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
	spinlock_t *ptl;	/* the PT lock of the PTE page */
	unsigned int i;
	pte_t *ptep;
	pmd_t *pmd;
	int stream;

	mmap_read_lock(p->mm);
	for (stream = 0; stream < SRR_STREAMS; stream++) {
		for (i = 0; i < swap_ra_replay_pages(r->sc, stream); i++) {
			unsigned long addr = swap_ra_replay_addr(r, stream, i);

			pmd = mm_find_pmd(p->mm, addr);
			if (!pmd)
				continue;
			ptep = pte_offset_map_lock(p->mm, pmd, addr, &ptl);
			if (!ptep)
				continue;
			if (softleaf_is_swap(softleaf_from_pte(ptep_get(ptep)))) {
				ptep_get_and_clear(p->mm, addr, ptep);
				dec_mm_counter(p->mm, MM_SWAPENTS);
			}
			pte_unmap_unlock(ptep, ptl);
		}
	}
	mmap_read_unlock(p->mm);
	mmput(p->mm);
}

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
	unsigned int i;
	int stream;

	KUNIT_ASSERT_LE(test, swap_ra_replay_nr_slots(sc), SRR_SLOTS);
	KUNIT_ASSERT_GT(test, sc->cache, 0);
	/* As swap_state_test_cluster_setup(), with the hits a boot leaves. */
	swap_state_test_use_vma_readahead(test);
	mm_kunit_set_knob(test, enable_vma_readahead, sc->vma_ra);
	swap_state_test_forget_window(test);
	atomic_set(&swapin_readahead_hits, 4);
	r->si = swap_state_test_swapon_dev(test, swap_ra_replay_nr_slots(sc));

	for (stream = 0; stream < SRR_STREAMS; stream++) {
		unsigned int pages = swap_ra_replay_pages(sc, stream);

		if (!pages)
			continue;
		r->first_page[stream] = (long)SWAP_STATE_TEST_PMD_PAGES *
			(SRR_RUN_PMDS * run + 2 * stream);
		r->vma[stream] = swap_state_test_vma(test, r->first_page[stream],
						     r->first_page[stream] + pages,
						     0);
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
	for (stream = 0; stream < SRR_STREAMS; stream++) {
		for (i = 0; i < swap_ra_replay_pages(sc, stream); i++) {
			swp_entry_t entry = swp_entry(r->si->type,
						      swap_ra_replay_slot(sc, stream, i));

			unsigned long addr = swap_ra_replay_addr(r, stream, i);

			inc_mm_counter(mm, MM_SWAPENTS);
			KUNIT_ASSERT_TRUE(test, mm_kunit_set_pte(mm, addr,
								 softleaf_to_pte(entry)));
		}
	}
}

/*
 * Evict the oldest pages read until the swap cache holds at most the
 * scenario's number: an unhit readahead page is deleted from the swap
 * cache; its slot keeps its swap count, and a fault reads it again.
 */
static void swap_ra_replay_trim(struct kunit *test, struct swap_ra_replay *r)
{
	while (r->fifo_len > r->sc->cache) {
		unsigned long offset = r->fifo[r->fifo_head];
		swp_entry_t entry = swp_entry(r->si->type, offset);
		struct folio *folio;
		bool deleted = false;

		r->fifo_head = (r->fifo_head + 1) % SRR_SLOTS;
		r->fifo_len--;
		if (r->state[offset] != SRR_AHEAD)
			continue;
		folio = swap_cache_get_folio(entry);
		if (folio) {
			folio_lock(folio);
			if (folio_matches_swap_entry(folio, entry)) {
				swap_cache_del_folio(folio);
				deleted = true;
			}
			folio_unlock(folio);
			folio_put(folio);
		}
		KUNIT_ASSERT_TRUE_MSG(test, deleted, "%s: slot %lu lost",
				      r->sc->desc, offset);
		r->state[offset] = SRR_SWAPPED;
		r->c.evicted++;
	}
}

/*
 * After a major fault of @stream on @target: every slot the fault read
 * into the swap cache, in slot order, which is the order of the reads
 * (cluster readahead) or of the stream's addresses (VMA readahead, for
 * the sequential swapper). Returns the slots read ahead that are not
 * marked as such, or the target if it is.
 */
static unsigned long swap_ra_replay_adopt(struct swap_ra_replay *r, int stream,
					  unsigned long target)
{
	unsigned long offset, wrong = 0;
	struct folio *folio;
	bool is_target;

	for (offset = 1; offset < swap_ra_replay_nr_slots(r->sc); offset++) {
		if (r->state[offset] != SRR_SWAPPED)
			continue;
		folio = swap_state_test_cached(r->si, offset);
		if (!folio)
			continue;
		is_target = offset == target;
		if (folio_test_readahead(folio) == is_target)
			wrong++;
		if (is_target) {
			r->state[offset] = SRR_READ;
		} else {
			r->state[offset] = SRR_AHEAD;
			r->reader[offset] = stream;
			r->c.ra[stream]++;
		}
		r->fifo[(r->fifo_head + r->fifo_len) % SRR_SLOTS] = offset;
		r->fifo_len++;
	}
	return wrong;
}

/* One fault of @stream on its page @i, as do_swap_page() begins it. */
static void swap_ra_replay_fault(struct kunit *test, struct swap_ra_replay *r,
				 int stream, unsigned int i)
{
	unsigned long offset = swap_ra_replay_slot(r->sc, stream, i);
	unsigned long address = swap_ra_replay_addr(r, stream, i);
	swp_entry_t entry = swp_entry(r->si->type, offset);
	struct vm_area_struct *vma = r->vma[stream];
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
		r->c.major_faults[stream]++;
		wrong = swap_ra_replay_adopt(r, stream, offset);
	}
	KUNIT_ASSERT_EQ_MSG(test, 0UL, wrong,
			    "%s: fault on slot %lu: pages read not marked as readahead is",
			    r->sc->desc, offset);
	swap_ra_replay_trim(test, r);
}

static struct swap_ra_replay_counts
swap_ra_replay_once(struct kunit *test, const struct swap_ra_replay_scenario *sc,
		    int run)
{
	unsigned long swap_ra, swap_ra_hit;
	struct swap_ra_replay *r;
	unsigned int i;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->sc = sc;
	swap_ra_replay_setup(test, r, run);

	swap_ra = mm_kunit_vm_event(test, SWAP_RA);
	swap_ra_hit = mm_kunit_vm_event(test, SWAP_RA_HIT);
	for (i = 0; i < sc->seq_pages || (sc->rand_faults && i < sc->rand_pages);
	     i++) {
		if (i < sc->seq_pages)
			swap_ra_replay_fault(test, r, SRR_SEQ, i);
		if (sc->rand_faults && i < sc->rand_pages)
			swap_ra_replay_fault(test, r, SRR_RAND, i);
	}
	swap_ra = mm_kunit_vm_event(test, SWAP_RA) - swap_ra;
	swap_ra_hit = mm_kunit_vm_event(test, SWAP_RA_HIT) - swap_ra_hit;

	/* The kernel counted what the replay did. */
	KUNIT_EXPECT_EQ(test, swap_ra, r->c.ra[SRR_SEQ] + r->c.ra[SRR_RAND]);
	KUNIT_EXPECT_EQ(test, swap_ra_hit,
			r->c.ra_hit[SRR_SEQ] + r->c.ra_hit[SRR_RAND]);
	return r->c;
}

static void swap_ra_replay_test(struct kunit *test)
{
	const struct swap_ra_replay_scenario *sc = test->param_value;
	struct swap_ra_replay_counts c, again;
	unsigned long ra, hits;

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

	/* The same faults on a new device and new VMAs: the same numbers. */
	again = swap_ra_replay_once(test, sc, 1);
	KUNIT_EXPECT_EQ(test, 0, memcmp(&c, &again, sizeof(c)));
}

static struct kunit_case swap_ra_replay_cases[] = {
	KUNIT_CASE_PARAM_ATTR(swap_ra_replay_test, swap_ra_replay_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite swap_ra_replay_suite = {
	.name = "mm_swap_ra_replay",
	.test_cases = swap_ra_replay_cases,
};

kunit_test_suite(swap_ra_replay_suite);

#endif /* CONFIG_MM_SWAP_RA_REPLAY_KUNIT_TEST */
