/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the mm/workingset.c tests need on 6.1.
 *
 * Part of the harness's 6.1 port (see kunit_compat.h); included at the
 * bottom of mm/workingset.c, after all of its code, so that only the tests
 * see it.
 */

#ifdef CONFIG_MM_VMSCAN_KUNIT_TEST

#include "kunit_compat.h"

/* Renamed in 6.3. */
#define lru_gen_folio lru_gen_struct

/* Later kernels' name for the flags of a folio's access history. */
#define LRU_REFS_FLAGS (BIT(PG_referenced) | BIT(PG_workingset))

#endif /* CONFIG_MM_VMSCAN_KUNIT_TEST */
