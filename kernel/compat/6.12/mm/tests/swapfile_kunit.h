/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A swap device with no I/O behind it, for the swap readahead KUnit tests
 * (mm/tests/swap_state_kunit.h), on 6.12 and 6.1.
 *
 * Part of the harness's 6.12 and 6.1 ports (kernel/compat/), never sent
 * upstream: 7.3's device (this file in 7.3) is built on the per-cluster
 * swap table and on struct swap_ops, which 6.12 has neither of. This one
 * gives the same device through the same calls (mm/tests/swap_kunit.h)
 * the way 6.12 keeps a device: a swap_map count per slot, a zeromap, a
 * swap address space per device. On 6.1 (SWAP_STATE_TEST_6_1, from its
 * kunit_compat.h), which has no zeromap (6.12), no swap reclaim work
 * (6.11) and no zswap tree per swap type (6.8), every slot is read as a
 * cleared one is below.
 *
 * This file is included at the bottom of mm/swapfile.c, which keeps the
 * table of swap devices (swap_info[], swap_lock) to itself.
 *
 * swap_state_test_swapon() takes a free swap type, as swapon does, and
 * gives it @nr_pages slots (at most SWAP_STATE_TEST_MAX_PAGES). Every slot
 * is swapped out once (a swap count of 1, which stands for the swap PTE a
 * test writes) and marked zero-filled in the zeromap, so swap_read_folio()
 * serves the read of a slot as a zero-filled page and submits no I/O. A
 * test may clear that mark: the slot is then read as a swap file's is,
 * through its mapping's swap_rw(), from a backing store of zeros that
 * completes each submission before it returns. The device is in no list
 * that swap is allocated from (it is never SWP_WRITEOK), so nothing but a
 * test's own swap entries ever reach it, and nothing is ever written to
 * it. swap_state_test_swapoff() takes it down again as swapoff does; the
 * test must have emptied the swap cache of its slots first.
 */

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST

#include <linux/anon_inodes.h>
#include <linux/swap_cgroup.h>
#include <linux/uio.h>

#include "swap_kunit.h"
#include "kunit_compat.h"

#ifndef SWAP_STATE_TEST_6_1
#include <linux/zswap.h>
#endif

static atomic_long_t swap_state_test_nr_submissions;

/* The submissions to every test device's backing store so far. */
unsigned long swap_state_test_submissions(void)
{
	return atomic_long_read(&swap_state_test_nr_submissions);
}

/* The backing store: zeros, read at once; each call one submission. */
static int swap_state_test_swap_rw(struct kiocb *iocb, struct iov_iter *iter)
{
	atomic_long_inc(&swap_state_test_nr_submissions);
	return iov_iter_zero(iov_iter_count(iter), iter);
}

static const struct address_space_operations swap_state_test_aops = {
	.swap_rw = swap_state_test_swap_rw,
};

static const struct file_operations swap_state_test_fops;

struct swap_info_struct *swap_state_test_swapon(unsigned int nr_pages)
{
	struct swap_info_struct *si;
	int err;

	if (!nr_pages || nr_pages > SWAP_STATE_TEST_MAX_PAGES)
		return ERR_PTR(-EINVAL);

	/* A free type, its users dead until the device is ready. */
	si = alloc_swap_info();
	if (IS_ERR(si))
		return si;
	INIT_WORK(&si->discard_work, swap_discard_work);
#ifndef SWAP_STATE_TEST_6_1
	INIT_WORK(&si->reclaim_work, swap_reclaim_work);
#endif

	/* As setup_swap_extents() for a swap file: the I/O contexts' pool. */
	err = sio_pool_init();
	if (err)
		goto free_si;
	si->swap_file = anon_inode_create_getfile("[swap_state_test]",
						  &swap_state_test_fops, NULL,
						  O_RDWR, NULL);
	if (IS_ERR(si->swap_file)) {
		err = PTR_ERR(si->swap_file);
		si->swap_file = NULL;
		goto free_si;
	}
	si->swap_file->f_mapping->a_ops = &swap_state_test_aops;

	err = -ENOMEM;
	si->swap_map = vmalloc(nr_pages);
	if (!si->swap_map)
		goto free_maps;
	memset(si->swap_map, 1, nr_pages);
#ifndef SWAP_STATE_TEST_6_1
	si->zeromap = bitmap_zalloc(nr_pages, GFP_KERNEL);
	if (!si->zeromap)
		goto free_maps;
	bitmap_fill(si->zeromap, nr_pages);
#endif

	/* As swapon: the swap accounting, the swap cache, zswap's tree. */
	err = swap_cgroup_swapon(si->type, nr_pages);
	if (err)
		goto free_maps;
	err = init_swap_address_space(si->type, nr_pages);
	if (err)
		goto free_cgroup;
	err = zswap_swapon(si->type, nr_pages);
	if (err)
		goto free_space;

	/* As enable_swap_info(): the fields are set before users go live. */
	spin_lock(&swap_lock);
	spin_lock(&si->lock);
	si->max = nr_pages;
	si->pages = nr_pages;
	si->inuse_pages = nr_pages;
	si->flags |= SWP_FS_OPS;
	spin_unlock(&si->lock);
	spin_unlock(&swap_lock);
	percpu_ref_resurrect(&si->users);
	return si;

free_space:
	exit_swap_address_space(si->type);
free_cgroup:
	swap_cgroup_swapoff(si->type);
free_maps:
#ifndef SWAP_STATE_TEST_6_1
	bitmap_free(si->zeromap);
	si->zeromap = NULL;
#endif
	vfree(si->swap_map);
	si->swap_map = NULL;
	fput(si->swap_file);
	si->swap_file = NULL;
free_si:
	spin_lock(&swap_lock);
	si->flags = 0;
	spin_unlock(&swap_lock);
	return ERR_PTR(err);
}

void swap_state_test_swapoff(struct swap_info_struct *si)
{
	unsigned long *zeromap = NULL;
	unsigned char *swap_map;
	struct file *swap_file;

	/* As swapoff: no new users, wait for the ones there are. */
	if (!percpu_ref_is_dying(&si->users))
		percpu_ref_kill(&si->users);
	synchronize_rcu();
	wait_for_completion(&si->comp);
	flush_work(&si->discard_work);
#ifndef SWAP_STATE_TEST_6_1
	flush_work(&si->reclaim_work);
#endif

	spin_lock(&swap_lock);
	spin_lock(&si->lock);
	swap_file = si->swap_file;
	si->swap_file = NULL;
	si->max = 0;
	swap_map = si->swap_map;
	si->swap_map = NULL;
#ifndef SWAP_STATE_TEST_6_1
	zeromap = si->zeromap;
	si->zeromap = NULL;
#endif
	si->inuse_pages = 0;
	spin_unlock(&si->lock);
	spin_unlock(&swap_lock);
	zswap_swapoff(si->type);
	vfree(swap_map);
	bitmap_free(zeromap);
	swap_cgroup_swapoff(si->type);
	exit_swap_address_space(si->type);
	fput(swap_file);

	/* As swapoff, last: alloc_swap_info() may reuse the type now. */
	spin_lock(&swap_lock);
	si->flags = 0;
	spin_unlock(&swap_lock);
}

#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */
