/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What 7.3's vmscan suites name otherwise than 6.12, where 6.12 does the
 * same thing.
 *
 * Part of the harness's 6.12 port only (kernel/compat/6.12), never sent
 * upstream: the port's patch (0005f) includes it in vmscan_kunit.h, at the
 * end of mm/vmscan.c, so that only the tests see it. Where 6.12 does it
 * otherwise, the tests are listed in kernel/compat/6.12/expected.
 */

#ifndef MM_TESTS_VMSCAN_NAMES_COMPAT_H
#define MM_TESTS_VMSCAN_NAMES_COMPAT_H

/* The unlock of folio_lruvec_lock_irq(). */
#define lruvec_unlock_irq(lruvec) unlock_page_lruvec_irq(lruvec)

#ifndef CONFIG_MEMCG
/* 6.12 declares the root memcg only with CONFIG_MEMCG. */
#define root_mem_cgroup ((struct mem_cgroup *)NULL)
#endif

/*
 * 6.12's folio_lru_refs() adds PG_workingset to the refs itself, and its
 * tier is that of the refs alone.
 */
static inline int vmscan_names_tier_from_refs(int refs, bool workingset)
{
	return lru_tier_from_refs(refs);
}

#define lru_tier_from_refs(refs, workingset) \
	vmscan_names_tier_from_refs(refs, workingset)

/* 6.12's get_type_to_scan() works out the tier index too. */
static inline int vmscan_names_type_to_scan(struct lruvec *lruvec,
					    int swappiness)
{
	int tier_idx;

	return get_type_to_scan(lruvec, swappiness, &tier_idx);
}

#define get_type_to_scan(lruvec, swappiness) \
	vmscan_names_type_to_scan(lruvec, swappiness)

/*
 * A folio's access history as 7.3 names it: the refs field and
 * PG_referenced (6.12's LRU_REFS_FLAGS are PG_referenced and
 * PG_workingset).
 */
#undef LRU_REFS_FLAGS
#define LRU_REFS_FLAGS (LRU_REFS_MASK | BIT(PG_referenced))

/*
 * 7.3's swappiness that scans anon only (200 + 1); 6.12 has none, so its
 * rows only build here, and fail (the port's expected list).
 */
#define SWAPPINESS_ANON_ONLY (MAX_SWAPPINESS + 1)

/*
 * MM_TESTS_LRU_GEN_FOLIO_SEQ, MM_TESTS_PRESSURE_BALANCE and
 * MM_TESTS_LRU_COST are left undefined: 6.12 has no lru_gen_folio_seq()
 * (lru_gen_add_folio() works the generation out itself), no
 * calculate_pressure_balance() (get_scan_count() does) and no struct
 * lru_cost; those tests are left out (the port's 0005f).
 */

#endif /* MM_TESTS_VMSCAN_NAMES_COMPAT_H */
