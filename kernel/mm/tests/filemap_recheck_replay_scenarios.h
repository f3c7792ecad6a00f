/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scenarios of mm_filemap_recheck_replay and its seed-scale suite:
 * initialisers of struct filemap_recheck_replay_scenario, one field a
 * line, included by filemap_recheck_replay_kunit.h.
 *
 * The bounds, from the mechanism of filemap_fault_recheck_pte_none()
 * (a read fault that misses the page cache on a VM_LOCKED VMA rereads
 * the PTE, locklessly and then under the PT lock, before it counts a
 * major fault, and returns VM_FAULT_NOPAGE if the PTE is not none):
 *
 *  - mlocked, PTE cleared by an update: the fault's lockless reads see
 *    the PTE none, so the recheck takes the PT lock, waits for the
 *    update, and finds the anon page mapped again: no major fault, no
 *    page read, and one PT lock wait a fault. Without the recheck every
 *    fault misses the page cache (the file's page was evicted): a major
 *    fault that reads at least its page, and no PT lock wait.
 *  - not mlocked, PTE cleared: the recheck returns at once: a major fault
 *    a fault, and no PT lock wait, with the recheck and without.
 *  - mlocked, PTE none: the page is not mapped; the recheck takes the PT
 *    lock once and finds it none: still a major fault a fault, and one
 *    PT lock wait a fault, the recheck's cost (none without it).
 *  - not mlocked, PTE none: a major fault a fault and no PT lock wait,
 *    with and without the recheck: it costs nothing outside VM_LOCKED.
 *
 * The pages a major fault reads: the replay starts with mmap_miss 0 and
 * nothing takes a miss off it (a retry with FAULT_FLAG_TRIED credits no
 * hit, in fault-around or in filemap_fault()), so the first
 * MMAP_LOTSAMISS (100) misses read around ra_pages (32) pages each and
 * every later one its page alone: 128 faults read 100 * 32 + 28 = 3228
 * pages, 32768 faults 100 * 32 + 32668 = 35868. The read-around window
 * lies inside the file and the page cache is empty before each fault.
 *
 * The seed scale has the counts the change was measured with: 7 faults
 * that race with an update on mlocked memory (the service's 7 major
 * faults in 12 hours), and 32768 faults on pages that are not mapped,
 * mlocked or not (will-it-scale's private file read faults over 128 MiB
 * of 4 KiB pages), on 1024 data pages.
 */
{
	.scale = RR_SMALL,
	.desc = "mlocked, PTE cleared by an update",
	.vm_locked = true,
	.cow = true,
	.pages = 64,
	.faults = 128,
	.ra_pages = 32,
	.want_major_faults = 0,
	.want_ptl_waits = 128,
	.max_pages_read = 0,
	.reverted_fails = true,
},
{
	.scale = RR_SMALL,
	.desc = "not mlocked, PTE cleared by an update",
	.vm_locked = false,
	.cow = true,
	.pages = 64,
	.faults = 128,
	.ra_pages = 32,
	.want_major_faults = 128,
	.want_ptl_waits = 0,
	.want_pages_read = 3228,
	.reverted_fails = false,
},
{
	.scale = RR_SMALL,
	.desc = "mlocked, PTE none",
	.vm_locked = true,
	.cow = false,
	.pages = 64,
	.faults = 128,
	.ra_pages = 32,
	.want_major_faults = 128,
	.want_ptl_waits = 128,
	.want_pages_read = 3228,
	.reverted_fails = true,
},
{
	.scale = RR_SMALL,
	.desc = "not mlocked, PTE none",
	.vm_locked = false,
	.cow = false,
	.pages = 64,
	.faults = 128,
	.ra_pages = 32,
	.want_major_faults = 128,
	.want_ptl_waits = 0,
	.want_pages_read = 3228,
	.reverted_fails = false,
},
{
	.scale = RR_SEED,
	.desc = "mlocked, PTE cleared by an update",
	.vm_locked = true,
	.cow = true,
	.pages = 7,
	.faults = 7,
	.ra_pages = 32,
	.want_major_faults = 0,
	.want_ptl_waits = 7,
	.max_pages_read = 0,
	.reverted_fails = true,
},
{
	.scale = RR_SEED,
	.desc = "mlocked, PTE none",
	.vm_locked = true,
	.cow = false,
	.pages = 1024,
	.faults = 32768,
	.ra_pages = 32,
	.want_major_faults = 32768,
	.want_ptl_waits = 32768,
	.want_pages_read = 35868,
	.reverted_fails = true,
},
{
	.scale = RR_SEED,
	.desc = "not mlocked, PTE none",
	.vm_locked = false,
	.cow = false,
	.pages = 1024,
	.faults = 32768,
	.ra_pages = 32,
	.want_major_faults = 32768,
	.want_ptl_waits = 0,
	.want_pages_read = 35868,
	.reverted_fails = false,
},
