/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A swap device that reclaim swaps out to, with no I/O behind it, for the
 * KUnit replay of a file thrashing beside anonymous memory
 * (mm/tests/filemap_thrash_replay_kunit.h, at the end of mm/filemap.c).
 *
 * This file is included at the bottom of mm/swapfile.c, which keeps the
 * table of swap devices, the lists swap is allocated from and the steps
 * of swapon and swapoff to itself.
 *
 * swap_replay_swapon() sets a device up as swapon does: a free type, its
 * clusters from a swap header (the first slot is the header's), free,
 * writable, on the lists swap is allocated from at the priority given.
 * While it is on it is the system's, as any swap device is: its backing
 * store keeps every page written to it, so any anonymous page swapped out
 * to it reads back as it was. swap_replay_swapoff() takes it down through
 * swapoff's steps, which swap back in whatever is still out on it.
 *
 * The backing store completes each submission before it returns, as a
 * synchronous device does: a read copies the page last written to the
 * slot, or zeros if none was; a write copies the page.
 */

#ifdef CONFIG_MM_FILEMAP_THRASH_REPLAY_KUNIT_TEST

#include <linux/swap_ops.h>
#include <linux/uio.h>

#include "thrash_replay_hooks.h"

/* The pages written to the devices, by swap entry. */
static DEFINE_XARRAY(swap_replay_store);

/* Read each page of the submission from the store, completed at once. */
static void swap_replay_submit_read(struct swap_io_ctx *ctx)
{
	struct swap_iocb *sio = ctx->sio;
	struct iov_iter iter;
	int i;
	long j;

	swap_fs_prepare_rw(ctx, READ, &iter);
	for (i = 0; i < sio->nr_bvecs; i++) {
		struct folio *folio = bvec_folio(&sio->bvecs[i]);

		for (j = 0; j < folio_nr_pages(folio); j++) {
			struct page *page = folio_page(folio, j);
			struct page *stored;

			stored = xa_load(&swap_replay_store,
					 folio->swap.val + j);
			if (stored)
				copy_highpage(page, stored);
			else
				clear_highpage(page);
		}
	}
	sio->iocb.ki_complete(&sio->iocb, sio->len);
}

static int swap_replay_store_page(unsigned long index, struct page *page)
{
	struct page *copy = alloc_page(GFP_NOIO | __GFP_NOWARN);
	void *old;

	if (!copy)
		return -ENOMEM;
	copy_highpage(copy, page);
	old = xa_store(&swap_replay_store, index, copy,
		       GFP_NOIO | __GFP_NOWARN);
	if (xa_is_err(old)) {
		__free_page(copy);
		return xa_err(old);
	}
	if (old)
		__free_page(old);
	return 0;
}

/*
 * Copy each page of the submission into the store, completed at once; a
 * page the store cannot take fails the write, as an I/O error would.
 */
static void swap_replay_submit_write(struct swap_io_ctx *ctx)
{
	struct swap_iocb *sio = ctx->sio;
	long ret = sio->len;
	struct iov_iter iter;
	int i;
	long j;

	swap_fs_prepare_rw(ctx, WRITE, &iter);
	for (i = 0; i < sio->nr_bvecs && ret > 0; i++) {
		struct folio *folio = bvec_folio(&sio->bvecs[i]);

		for (j = 0; j < folio_nr_pages(folio) && ret > 0; j++) {
			if (swap_replay_store_page(folio->swap.val + j,
						   folio_page(folio, j)))
				ret = -ENOMEM;
		}
	}
	sio->iocb.ki_complete(&sio->iocb, ret);
}

static const struct swap_ops swap_replay_ops = {
	.can_merge = swap_fs_can_merge,
	.submit_read = swap_replay_submit_read,
	.submit_write = swap_replay_submit_write,
};

/* Free what the store holds for the @max slots of device @type. */
static void swap_replay_drop_store(unsigned int type, unsigned long max)
{
	unsigned long index;
	struct page *page;

	xa_for_each_range(&swap_replay_store, index, page,
			  swp_entry(type, 0).val, swp_entry(type, max).val) {
		xa_erase(&swap_replay_store, index);
		__free_page(page);
	}
}

/*
 * As swapon: a free type, its clusters set up from a swap header of
 * @nr_pages slots (the first is the header's, as on a swap file), then
 * exposed to the allocator at priority @prio.
 */
struct swap_info_struct *swap_replay_swapon(unsigned int nr_pages, int prio)
{
	union swap_header *header;
	struct swap_info_struct *si;
	int err;

	if (nr_pages < 2 || nr_pages > arch_max_swapfile_size() ||
	    prio < SHRT_MIN || prio > SWAP_FLAG_PRIO_MASK)
		return ERR_PTR(-EINVAL);
	header = kzalloc_obj(*header);
	if (!header)
		return ERR_PTR(-ENOMEM);
	header->info.last_page = nr_pages - 1;

	si = alloc_swap_info();
	if (IS_ERR(si)) {
		kfree(header);
		return si;
	}
	INIT_WORK(&si->discard_work, swap_discard_work);
	INIT_WORK(&si->reclaim_work, swap_reclaim_work);
	err = sio_pool_init();
	if (err)
		goto free_si;
	si->swap_file = shmem_kernel_file_setup("swap_replay",
						(loff_t)nr_pages << PAGE_SHIFT,
						EMPTY_VMA_FLAGS);
	if (IS_ERR(si->swap_file)) {
		err = PTR_ERR(si->swap_file);
		si->swap_file = NULL;
		goto free_si;
	}
	si->ops = &swap_replay_ops;
	si->max = nr_pages;
	si->pages = nr_pages - 1;
	si->flags |= SWP_SOLIDSTATE | SWP_SYNCHRONOUS_IO;
	err = setup_swap_clusters_info(si, header, nr_pages);
	if (err)
		goto put_file;
	err = zswap_swapon(si->type, nr_pages);
	if (err)
		goto free_clusters;
	kfree(header);

	mutex_lock(&swapon_mutex);
	si->prio = prio;
	si->list.prio = -prio;
	si->avail_list.prio = -prio;
	enable_swap_info(si);
	mutex_unlock(&swapon_mutex);
	return si;

free_clusters:
	free_swap_cluster_info(si->cluster_info, si->max);
	si->cluster_info = NULL;
put_file:
	fput(si->swap_file);
	si->swap_file = NULL;
	si->ops = NULL;
	si->max = 0;
	si->pages = 0;
free_si:
	kfree(header);
	spin_lock(&swap_lock);
	si->flags = 0;
	spin_unlock(&swap_lock);
	return ERR_PTR(err);
}

/*
 * As swapoff: no more allocations, every page still out on the device
 * swapped back in (try_to_unuse()), its users waited for, its clusters
 * and its store freed. Returns try_to_unuse()'s error, the device then
 * back on, as swapoff leaves it.
 */
int swap_replay_swapoff(struct swap_info_struct *si)
{
	struct swap_cluster_info *ci;
	struct file *swap_file;
	unsigned long max;
	int err;

	spin_lock(&swap_lock);
	spin_lock(&si->lock);
	del_from_avail_list(si, true);
	plist_del(&si->list, &swap_active_head);
	atomic_long_sub(si->pages, &nr_swap_pages);
	total_swap_pages -= si->pages;
	spin_unlock(&si->lock);
	spin_unlock(&swap_lock);
	wait_for_allocation(si);

	err = try_to_unuse(si->type);
	if (err) {
		reinsert_swap_info(si);
		return err;
	}

	percpu_ref_kill(&si->users);
	synchronize_rcu();
	wait_for_completion(&si->comp);
	flush_work(&si->discard_work);
	flush_work(&si->reclaim_work);
	flush_percpu_swap_cluster(si);
	destroy_swap_extents(si, si->swap_file);

	mutex_lock(&swapon_mutex);
	spin_lock(&swap_lock);
	spin_lock(&si->lock);
	drain_mmlist();
	swap_file = si->swap_file;
	si->swap_file = NULL;
	max = si->max;
	ci = si->cluster_info;
	si->max = 0;
	si->cluster_info = NULL;
	spin_unlock(&si->lock);
	spin_unlock(&swap_lock);
	arch_swap_invalidate_area(si->type);
	zswap_swapoff(si->type);
	mutex_unlock(&swapon_mutex);
	kfree(si->global_cluster);
	si->global_cluster = NULL;
	free_swap_cluster_info(ci, max);
	swap_replay_drop_store(si->type, max);
	fput(swap_file);
	si->ops = NULL;

	/* As swapoff, last: alloc_swap_info() may reuse the type now. */
	spin_lock(&swap_lock);
	si->flags = 0;
	spin_unlock(&swap_lock);
	return 0;
}

#endif /* CONFIG_MM_FILEMAP_THRASH_REPLAY_KUNIT_TEST */
