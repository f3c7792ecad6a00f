/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A swap device for the mm KUnit suites, with no I/O behind it.
 *
 * This file is included at the bottom of mm/swapfile.c, which keeps the
 * table of swap devices (swap_info[]) to itself.
 *
 * mm_kunit_swapon() puts a device in the table for one swap type, as
 * swapon would, but leaves it out of every list that allocates swap, so
 * nothing but a test's own swap entries ever reach it. Each of its slots is
 * in use once (a swap count of 1, as if one PTE held it) and recorded as
 * a zero-filled page, so swap_read_folio() serves every read from the
 * zeromap and never submits I/O. A test may free a slot by zeroing its
 * swap_map count. mm_kunit_swapoff() takes the device out again; the test
 * must have emptied the swap cache of its entries first.
 */

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST

#include <linux/swap_cgroup.h>

#include "swap_kunit.h"

struct swap_info_struct *mm_kunit_swapon(unsigned int type,
					 unsigned int nr_pages)
{
	struct swap_info_struct *si;
	int err = -ENOMEM;

	if (type >= MAX_SWAPFILES)
		return ERR_PTR(-EINVAL);
	if (READ_ONCE(swap_info[type]))
		return ERR_PTR(-EBUSY);

	si = kvzalloc(struct_size(si, avail_lists, nr_node_ids), GFP_KERNEL);
	if (!si)
		return ERR_PTR(-ENOMEM);
	if (percpu_ref_init(&si->users, swap_users_ref_free,
			    PERCPU_REF_INIT_DEAD, GFP_KERNEL))
		goto free_si;
	spin_lock_init(&si->lock);
	spin_lock_init(&si->cont_lock);
	init_completion(&si->comp);
	si->type = type;
	si->max = nr_pages;
	si->pages = nr_pages;
	si->swap_map = vmalloc(nr_pages);
	si->zeromap = bitmap_zalloc(nr_pages, GFP_KERNEL);
	if (!si->swap_map || !si->zeromap)
		goto free_maps;
	memset(si->swap_map, 1, nr_pages);
	bitmap_fill(si->zeromap, nr_pages);
	err = swap_cgroup_swapon(type, nr_pages);
	if (err)
		goto free_maps;
	si->flags = SWP_USED | SWP_WRITEOK;

	/* As swapon: the fields are set before users goes live. */
	spin_lock(&swap_lock);
	percpu_ref_resurrect(&si->users);
	/* Pairs with the READ_ONCE() of swp_swap_info(). */
	smp_store_release(&swap_info[type], si);
	spin_unlock(&swap_lock);
	return si;

free_maps:
	bitmap_free(si->zeromap);
	vfree(si->swap_map);
	percpu_ref_exit(&si->users);
free_si:
	kvfree(si);
	return ERR_PTR(err);
}

void mm_kunit_swapoff(struct swap_info_struct *si)
{
	unsigned int type = si->type;

	/* As swapoff: no new users, wait for the ones there are. */
	percpu_ref_kill(&si->users);
	synchronize_rcu();
	wait_for_completion(&si->comp);

	spin_lock(&swap_lock);
	WRITE_ONCE(swap_info[type], NULL);
	spin_unlock(&swap_lock);
	synchronize_rcu();

	swap_cgroup_swapoff(type);
	bitmap_free(si->zeromap);
	vfree(si->swap_map);
	percpu_ref_exit(&si->users);
	kvfree(si);
}

#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */
