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

#endif /* CONFIG_MM_VMSCAN_KUNIT_TEST */
