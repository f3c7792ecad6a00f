/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the mm KUnit suites share: global knobs set for one test and put
 * back when it ends, also when it fails, by a KUnit action; page tables
 * allocated as a fault would; VM event counts.
 */

#ifndef _MM_TESTS_MM_KUNIT_H
#define _MM_TESTS_MM_KUNIT_H

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/vmstat.h>

struct mm_kunit_knob {
	void *addr;
	size_t size;
	u64 old;
};

static inline void mm_kunit_restore_knob(void *data)
{
	struct mm_kunit_knob *knob = data;

	memcpy(knob->addr, &knob->old, knob->size);
}

static inline void __mm_kunit_set_knob(struct kunit *test, void *addr,
				       const void *val, size_t size)
{
	struct mm_kunit_knob *knob;

	KUNIT_ASSERT_LE(test, size, sizeof(knob->old));
	knob = kunit_kzalloc(test, sizeof(*knob), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, knob);
	knob->addr = addr;
	knob->size = size;
	memcpy(&knob->old, addr, size);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, mm_kunit_restore_knob,
						  knob));
	memcpy(addr, val, size);
}

/* Set the global @knob to @val until the test ends. */
#define mm_kunit_set_knob(test, knob, val)				\
	do {								\
		typeof(knob) __mm_kunit_val = (val);			\
									\
		__mm_kunit_set_knob((test), &(knob), &__mm_kunit_val,	\
				    sizeof(knob));			\
	} while (0)

/*
 * Pretend there is @pages of free swap space, until the test ends. A KUnit
 * boot has no swap device, so anon reclaim would never be considered.
 */
static inline void mm_kunit_set_swap(struct kunit *test, long pages)
{
	if (total_swap_pages || atomic_long_read(&nr_swap_pages))
		kunit_skip(test, "a swap device is active");
	mm_kunit_set_knob(test, nr_swap_pages,
			  (atomic_long_t)ATOMIC_LONG_INIT(pages));
	mm_kunit_set_knob(test, total_swap_pages, pages);
}

/*
 * The PMD entry covering @addr, with a PTE table under it if @pte_table,
 * allocated as a fault would; NULL if an allocation failed. The caller
 * holds the mmap lock and checks the result once it has dropped it.
 */
static inline pmd_t *mm_kunit_alloc_pmd(struct mm_struct *mm,
					unsigned long addr, bool pte_table)
{
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd;

	mmap_assert_locked(mm);
	p4d = p4d_alloc(mm, pgd_offset(mm, addr), addr);
	pud = p4d ? pud_alloc(mm, p4d, addr) : NULL;
	pmd = pud ? pmd_alloc(mm, pud, addr) : NULL;
	if (pmd && pte_table && pte_alloc(mm, pmd))
		return NULL;
	return pmd;
}

/*
 * Write @pte into @mm's page table at @addr, allocating the table as a
 * fault would, under the mmap read lock and the PT lock. False if the
 * table could not be had.
 */
static inline bool mm_kunit_set_pte(struct mm_struct *mm, unsigned long addr,
				    pte_t pte)
{
	spinlock_t *ptl;	/* the PT lock of the PTE page */
	pte_t *ptep = NULL;
	pmd_t *pmd;

	mmap_read_lock(mm);
	pmd = mm_kunit_alloc_pmd(mm, addr, true);
	if (pmd)
		ptep = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (ptep) {
		set_pte_at(mm, addr, ptep, pte);
		pte_unmap_unlock(ptep, ptl);
	}
	mmap_read_unlock(mm);
	return ptep;
}

/*
 * A system-wide VM event count, summed over all CPUs exactly (no per-CPU
 * threshold). For the events the suites count (major faults on a test's
 * file, readahead from a test's swap device) that is as good as the
 * test's own: built-in KUnit tests run before any user space exists, so
 * nothing else moves them meanwhile.
 */
static inline unsigned long mm_kunit_vm_event(struct kunit *test,
					      enum vm_event_item item)
{
	unsigned long *events, val;

	events = kcalloc(NR_VM_EVENT_ITEMS, sizeof(*events), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, events);
	all_vm_events(events);
	val = events[item];
	kfree(events);
	return val;
}

#endif /* _MM_TESTS_MM_KUNIT_H */
