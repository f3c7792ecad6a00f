/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A swap device with no I/O behind it, for the swap readahead KUnit tests
 * (mm/tests/swap_state_kunit.h).
 *
 * This file is included at the bottom of mm/swapfile.c, which keeps the
 * table of swap devices (swap_info[], swap_lock) and the swap table
 * allocation to itself.
 *
 * swap_state_test_swapon() takes a free swap type, as swapon does, and
 * gives it the clusters of swap slots its size needs (at most
 * SWAP_STATE_TEST_MAX_PAGES slots). Every slot is swapped out once (a
 * swap count of 1, which stands for the swap PTE a test writes) and marked
 * zero-filled in its swap table entry, so swap_read_folio() serves the
 * read of a slot as a zero-filled page and submits no I/O. A test may
 * clear that mark: the slot is then read through the device's swap_ops,
 * as a swap file's is, from a backing store of zeros that completes each
 * submission before it returns. The device is in no list that swap is
 * allocated from (it is never SWP_WRITEOK), so nothing but a test's own
 * swap entries ever reach it, and nothing is ever written to it.
 * swap_state_test_swapoff() takes it down again as swapoff does; the test
 * must have emptied the swap cache of its slots first.
 */

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST

#include <linux/swap_ops.h>
#include <linux/uio.h>

#include "swap_kunit.h"

/* The backing store: zeros, read at once, completed as a swap file's. */
static void swap_state_test_submit_read(struct swap_io_ctx *ctx)
{
	struct swap_iocb *sio = ctx->sio;
	struct iov_iter iter;

	swap_fs_prepare_rw(ctx, READ, &iter);
	iov_iter_zero(sio->len, &iter);
	sio->iocb.ki_complete(&sio->iocb, sio->len);
}

static const struct swap_ops swap_state_test_ops = {
	.can_merge = swap_fs_can_merge,
	.submit_read = swap_state_test_submit_read,
};

/*
 * Cluster @i of a device of @nr_pages slots, its table allocated: every
 * slot swapped out once and zero-filled, the slots past the device's end
 * bad, as swapon marks them; full, on the device's list of full clusters.
 */
static void swap_state_test_fill_cluster(struct swap_info_struct *si,
					 struct swap_cluster_info *ci,
					 unsigned int i, unsigned int nr_pages)
{
	unsigned int ci_off;

	spin_lock(&ci->lock);
	for (ci_off = 0; ci_off < SWAPFILE_CLUSTER; ci_off++) {
		if (i * SWAPFILE_CLUSTER + ci_off >= nr_pages) {
			__swap_table_set(ci, ci_off, SWP_TB_BAD);
			continue;
		}
		__swap_table_set(ci, ci_off,
				 __swp_tb_mk_count(shadow_to_swp_tb(NULL, 0), 1));
		__swap_table_set_zero(ci, ci_off);
	}
	ci->count = SWAPFILE_CLUSTER;
	ci->flags = CLUSTER_FLAG_FULL;
	spin_unlock(&ci->lock);
	list_add_tail(&ci->list, &si->full_clusters);
}

/*
 * Drop the swap counts of cluster @i of a device of @max slots; its bad
 * slots stay counted, as free_swap_cluster_info() expects at swapoff.
 */
static void swap_state_test_empty_cluster(struct swap_cluster_info *ci,
					  unsigned int i, unsigned long max)
{
	unsigned int ci_off;

	spin_lock(&ci->lock);
	for (ci_off = 0; ci_off < SWAPFILE_CLUSTER; ci_off++) {
		if (i * SWAPFILE_CLUSTER + ci_off >= max)
			break;
		WARN_ON_ONCE(swp_tb_is_folio(__swap_table_get(ci, ci_off)));
		if (!SWAP_TABLE_HAS_ZEROFLAG)
			__swap_table_clear_zero(ci, ci_off);
		__swap_table_set(ci, ci_off, null_to_swp_tb());
		ci->count--;
	}
	list_del(&ci->list);
	spin_unlock(&ci->lock);
}

struct swap_info_struct *swap_state_test_swapon(unsigned int nr_pages)
{
	unsigned int i, nr = DIV_ROUND_UP(nr_pages, SWAPFILE_CLUSTER);
	struct swap_cluster_info *ci;
	struct swap_info_struct *si;
	int err = -ENOMEM;

	if (!nr_pages || nr_pages > SWAP_STATE_TEST_MAX_PAGES)
		return ERR_PTR(-EINVAL);

	/* A free type, its users dead until the device is ready. */
	si = alloc_swap_info();
	if (IS_ERR(si))
		return si;
	INIT_WORK(&si->discard_work, swap_discard_work);
	INIT_WORK(&si->reclaim_work, swap_reclaim_work);

	/* As setup_swap_extents(): the I/O contexts' pool, once. */
	err = sio_pool_init();
	if (err)
		goto free_si;
	err = -ENOMEM;
	si->swap_file = shmem_kernel_file_setup("swap_state_test",
						(loff_t)nr_pages << PAGE_SHIFT,
						EMPTY_VMA_FLAGS);
	if (IS_ERR(si->swap_file)) {
		err = PTR_ERR(si->swap_file);
		goto free_si;
	}
	si->ops = &swap_state_test_ops;
	ci = kvzalloc_objs(*ci, nr);
	if (!ci)
		goto put_file;
	for (i = 0; i < nr; i++)
		spin_lock_init(&ci[i].lock);
	for (i = 0; i < nr; i++) {
		if (swap_cluster_alloc_table(&ci[i], GFP_KERNEL))
			goto free_ci;
	}

	INIT_LIST_HEAD(&si->free_clusters);
	INIT_LIST_HEAD(&si->full_clusters);
	INIT_LIST_HEAD(&si->discard_clusters);
	for (i = 0; i < SWAP_NR_ORDERS; i++) {
		INIT_LIST_HEAD(&si->nonfull_clusters[i]);
		INIT_LIST_HEAD(&si->frag_clusters[i]);
	}
	for (i = 0; i < nr; i++)
		swap_state_test_fill_cluster(si, &ci[i], i, nr_pages);
	si->cluster_info = ci;
	si->max = nr_pages;
	si->pages = nr_pages;
	atomic_long_add(nr_pages, &si->inuse_pages);
	si->flags |= SWP_SOLIDSTATE;

	/* Pairs with the smp_rmb() in get_swap_device_info(). */
	smp_wmb();
	percpu_ref_resurrect(&si->users);
	return si;

free_ci:
	/* The tables allocated, still empty, and the clusters. */
	free_swap_cluster_info(ci, nr * SWAPFILE_CLUSTER);
put_file:
	fput(si->swap_file);
	si->swap_file = NULL;
	si->ops = NULL;
free_si:
	spin_lock(&swap_lock);
	si->flags = 0;
	spin_unlock(&swap_lock);
	return ERR_PTR(err);
}

void swap_state_test_swapoff(struct swap_info_struct *si)
{
	struct swap_cluster_info *ci = si->cluster_info;
	unsigned long max = si->max;
	unsigned int i;

	/* As swapoff: no new users, wait for the ones there are. */
	if (!percpu_ref_is_dying(&si->users))
		percpu_ref_kill(&si->users);
	synchronize_rcu();
	wait_for_completion(&si->comp);
	flush_work(&si->discard_work);
	flush_work(&si->reclaim_work);

	for (i = 0; i < DIV_ROUND_UP(max, SWAPFILE_CLUSTER); i++)
		swap_state_test_empty_cluster(&ci[i], i, max);

	spin_lock(&swap_lock);
	spin_lock(&si->lock);
	si->cluster_info = NULL;
	si->max = 0;
	spin_unlock(&si->lock);
	spin_unlock(&swap_lock);
	free_swap_cluster_info(ci, max);
	fput(si->swap_file);
	si->swap_file = NULL;
	si->ops = NULL;

	/* As swapoff, last: alloc_swap_info() may reuse the type now. */
	spin_lock(&swap_lock);
	si->flags = 0;
	spin_unlock(&swap_lock);
}

#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */
