/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 7.3 gathers swap reads in a struct swap_io_ctx and submits them with
 * swap_read_submit(); 7.2, 6.12 and 6.1 plug them in a struct swap_iocb
 * and submit them with swap_read_unplug().
 *
 * Part of the harness's 7.2, 6.12 and 6.1 ports only (kernel/compat/),
 * never sent upstream: included by their mm/tests/kunit_compat.h (6.1's
 * mm/tests/swap_state_kunit_compat.h).
 */

#ifndef MM_TESTS_SWAP_IO_COMPAT_H
#define MM_TESTS_SWAP_IO_COMPAT_H

struct swap_io_ctx {
	struct swap_iocb *plug;
};

/* 6.1 gives its own, which also turns its page into a folio. */
#ifndef swap_io_compat_read_async
#define swap_io_compat_read_async read_swap_cache_async
#endif

#define read_swap_cache_async(ctx, entry, gfp, vma, addr)		\
	((swap_io_compat_read_async)(entry, gfp, vma, addr, &(ctx)->plug))

static inline void swap_read_submit(struct swap_io_ctx *ctx)
{
	swap_read_unplug(ctx->plug);
	ctx->plug = NULL;
}

#endif /* MM_TESTS_SWAP_IO_COMPAT_H */
