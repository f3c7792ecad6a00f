/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit replay of a set of file pages read through a file descriptor
 * again and again beside a stream read once, in a memory cgroup too
 * small for both, through the real read path of mm/filemap.c and the
 * multi-gen LRU's own aging and eviction: the refaults of each, which
 * MGLRU's protection of page cache accessed through file descriptors
 * (placement in the second oldest generation, and the promotion of a
 * folio whose refs and PG_workingset are all set) saves.
 *
 * This file is included at the bottom of mm/vmscan.c, after
 * vmscan_kunit.h, to reach the commands of the lru_gen debugfs file.
 *
 * Suites:
 *  - mm_vmscan_protect_replay: the small scenarios, each replayed twice;
 *  - mm_vmscan_protect_replay_seed: the memcg of the fio run the
 *    change was reviewed with, scaled
 *    (mm/tests/vmscan_protect_replay_scenarios.h says how).
 *
 * A scenario makes a memcg of its own and two files whose stub backing
 * store counts the pages it reads, without I/O and without readahead:
 * the hot file, read whole in every round the row names, and the stream,
 * twice the memcg's capacity, read once a cycle in rounds' chunks. Each
 * page is read by a read() of its own (kernel_read(), which marks the
 * folio accessed), charged to the memcg; then the LRU batch of the CPU
 * that read it is drained, so that every folio enters the LRU in the
 * order it was read, marked as the read left it.
 *
 * After each round the replay brings the memcg's page cache back to its
 * capacity as a proactive reclaimer does through the lru_gen debugfs
 * file, under the same reclaim state: eviction ("- memcg node seq 0
 * nr", file only) from every generation but the two youngest, and
 * aging ("+ memcg node max_seq") only when that cannot free enough,
 * which is when the kernel's own reclaim ages too (should_run_aging());
 * a row may also age once at the start of each cycle after the first.
 * A page evicted leaves a shadow entry, so the kernel sees its next read
 * as a refault.
 *
 * The suites report per scenario the pages read of each file, the
 * refaults of each (the reads of a page read before), both together,
 * and the agings and the oldest generation's advances, as KTAP
 * diagnostics ("# replay: ..."), to compare builds with and without the
 * protection. They check what holds on every build: the page cache is
 * back to the capacity after each round, every page is read at least
 * once, and, at small scale, a second replay gives the same numbers.
 */

#ifdef CONFIG_MM_VMSCAN_PROTECT_REPLAY_KUNIT_TEST

#include <linux/anon_inodes.h>

#include "memcg_kunit.h"

enum vmscan_protect_replay_scale {
	VPR_SMALL,
	VPR_SEED,
};

struct vmscan_protect_replay_scenario {
	enum vmscan_protect_replay_scale scale;
	const char *desc;
	/* Pages the memcg's page cache is brought back to after a round. */
	unsigned long capacity;
	/* The hot file's pages, read whole every hot_period-th round. */
	unsigned long hot_pages;
	unsigned int hot_period;
	/* Pages of the stream read a round; a cycle reads all of it. */
	unsigned long chunk;
	unsigned int rounds;
	unsigned int cycles;
	/* Age the memcg once at the start of every cycle but the first. */
	bool age_each_cycle;
	/*
	 * Bounds the kernel does not check (the harness does, for the
	 * build with the protection): counts exact (want_) or at least
	 * (min_), and whether the build without it must fail them.
	 */
	unsigned long want_hot_refaults;
	unsigned long min_hot_refaults;
	unsigned long want_stream_refaults;
	unsigned long want_agings;
	unsigned long want_turnovers;
	bool reverted_fails;
};

static const struct vmscan_protect_replay_scenario vmscan_protect_replay_scenarios[] = {
#include "vmscan_protect_replay_scenarios.h"
};

static const void *
vmscan_protect_replay_gen(const void *prev, char *desc,
			  enum vmscan_protect_replay_scale scale)
{
	const struct vmscan_protect_replay_scenario *sc = prev;

	sc = sc ? sc + 1 : vmscan_protect_replay_scenarios;
	for (; sc < vmscan_protect_replay_scenarios +
		    ARRAY_SIZE(vmscan_protect_replay_scenarios); sc++) {
		if (sc->scale == scale) {
			strscpy(desc, sc->desc, KUNIT_PARAM_DESC_SIZE);
			return sc;
		}
	}
	return NULL;
}

static const void *
vmscan_protect_replay_small_params(struct kunit *test, const void *prev,
				   char *desc)
{
	return vmscan_protect_replay_gen(prev, desc, VPR_SMALL);
}

static const void *
vmscan_protect_replay_seed_params(struct kunit *test, const void *prev,
				  char *desc)
{
	return vmscan_protect_replay_gen(prev, desc, VPR_SEED);
}

struct vmscan_protect_replay_counts {
	unsigned long hot_reads;
	unsigned long hot_refaults;
	unsigned long stream_reads;
	unsigned long stream_refaults;
	unsigned long agings;
	unsigned long turnovers;
};

/* A file of the replay: its pages read from the backing store. */
struct vmscan_protect_replay_file {
	struct file *file;
	unsigned long reads;
};

static int vmscan_protect_replay_read_folio(struct file *file,
					    struct folio *folio)
{
	struct vmscan_protect_replay_file *f = folio->mapping->host->i_private;

	f->reads += folio_nr_pages(folio);
	folio_mark_uptodate(folio);
	folio_unlock(folio);
	return 0;
}

static void vmscan_protect_replay_readahead(struct readahead_control *rac)
{
	struct folio *folio;

	while ((folio = readahead_folio(rac)))
		vmscan_protect_replay_read_folio(rac->file, folio);
}

static const struct address_space_operations vmscan_protect_replay_aops = {
	.read_folio	= vmscan_protect_replay_read_folio,
	.readahead	= vmscan_protect_replay_readahead,
};

static const struct file_operations vmscan_protect_replay_fops = {
	.read_iter	= generic_file_read_iter,
};

static void vmscan_protect_replay_put_file(void *data)
{
	struct file *file = data;

	truncate_inode_pages(file->f_mapping, 0);
	fput(file);
}

/*
 * A file of @pages pages with the stub backing store, nothing cached and
 * no readahead (a read reads its page alone); dropped, with its page
 * cache, by an action.
 */
static struct vmscan_protect_replay_file *
vmscan_protect_replay_file(struct kunit *test, unsigned long pages)
{
	struct vmscan_protect_replay_file *f;
	struct inode *inode;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->file = anon_inode_create_getfile("[mm_vmscan_protect_replay]",
					    &vmscan_protect_replay_fops, NULL,
					    O_RDONLY, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f->file));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  vmscan_protect_replay_put_file,
						  f->file));
	inode = file_inode(f->file);
	inode->i_private = f;
	inode->i_mapping->a_ops = &vmscan_protect_replay_aops;
	i_size_write(inode, pages << PAGE_SHIFT);
	f->file->f_ra.ra_pages = 0;
	return f;
}

/*
 * read() of page @index of @f, charged to @memcg; the folio then enters
 * the LRU from this CPU's batch, as the read left it.
 */
static int vmscan_protect_replay_read(struct vmscan_protect_replay_file *f,
				      pgoff_t index, struct mem_cgroup *memcg,
				      void *buf)
{
	struct mem_cgroup *old = set_active_memcg(memcg);
	loff_t pos = (loff_t)index << PAGE_SHIFT;
	ssize_t ret;

	migrate_disable();
	ret = kernel_read(f->file, buf, PAGE_SIZE, &pos);
	lru_add_drain();
	migrate_enable();
	set_active_memcg(old);
	return ret == PAGE_SIZE ? 0 : ret < 0 ? ret : -EIO;
}

/*
 * One command of the lru_gen debugfs file on @lruvec, file only, in the
 * reclaim state lru_gen_seq_write() runs its commands in. The replay
 * reads what a command did from the page cache and the generations, not
 * from its error: eviction stops short when the generations it may
 * evict from run out, and aging when there is nothing to age.
 */
static void vmscan_protect_replay_cmd(struct lruvec *lruvec, char cmd,
				      unsigned long seq, unsigned long opt)
{
	struct scan_control sc = {
		.may_writepage = true,
		.may_unmap = true,
		.may_swap = true,
		.reclaim_idx = MAX_NR_ZONES - 1,
		.gfp_mask = GFP_KERNEL,
		.proactive = true,
	};
	struct blk_plug plug;
	unsigned int flags;

	set_task_reclaim_state(current, &sc.reclaim_state);
	flags = memalloc_noreclaim_save();
	blk_start_plug(&plug);
	if (set_mm_walk(NULL, true))
		run_cmd(cmd, mem_cgroup_id(lruvec_memcg(lruvec)),
			lruvec_pgdat(lruvec)->node_id, seq, &sc, 0, opt);
	clear_mm_walk();
	blk_finish_plug(&plug);
	memalloc_noreclaim_restore(flags);
	set_task_reclaim_state(current, NULL);
}

static unsigned long
vmscan_protect_replay_cached(struct vmscan_protect_replay_file *hot,
			     struct vmscan_protect_replay_file *stream)
{
	return hot->file->f_mapping->nrpages + stream->file->f_mapping->nrpages;
}

/* The file pages on @lruvec's generations. */
static unsigned long vmscan_protect_replay_lru_pages(struct lruvec *lruvec)
{
	long nr = 0;
	int gen, zone;

	for (gen = 0; gen < MAX_NR_GENS; gen++)
		for (zone = 0; zone < MAX_NR_ZONES; zone++)
			nr += READ_ONCE(lruvec->lrugen.nr_pages[gen][LRU_GEN_FILE][zone]);
	return max(nr, 0L);
}

/*
 * Bring the page cache of @hot and @stream back to @capacity pages:
 * evict from each node's lruvec of @memcg that holds file pages, from all
 * but its two youngest generations, and age it when that did not free
 * enough. Returns false if the page cache stays above it.
 */
static bool vmscan_protect_replay_reclaim(struct mem_cgroup *memcg,
					  struct vmscan_protect_replay_file *hot,
					  struct vmscan_protect_replay_file *stream,
					  unsigned long capacity)
{
	unsigned long cached = vmscan_protect_replay_cached(hot, stream);
	int nid, tries;

	for (tries = 0; cached > capacity && tries < MAX_NR_GENS; tries++) {
		for_each_node_state(nid, N_MEMORY) {
			struct lruvec *lruvec = mem_cgroup_lruvec(memcg, NODE_DATA(nid));
			unsigned long max_seq = READ_ONCE(lruvec->lrugen.max_seq);

			if (cached <= capacity)
				break;
			if (!vmscan_protect_replay_lru_pages(lruvec))
				continue;
			vmscan_protect_replay_cmd(lruvec, '-', max_seq - MIN_NR_GENS,
						  cached - capacity);
			cached = vmscan_protect_replay_cached(hot, stream);
			if (cached > capacity)
				vmscan_protect_replay_cmd(lruvec, '+', max_seq, 0);
		}
	}
	return cached <= capacity;
}

static void vmscan_protect_replay_seqs(struct mem_cgroup *memcg,
				       unsigned long *max_seq,
				       unsigned long *min_seq)
{
	int nid;

	*max_seq = *min_seq = 0;
	for_each_node_state(nid, N_MEMORY) {
		struct lruvec *lruvec = mem_cgroup_lruvec(memcg, NODE_DATA(nid));

		*max_seq += READ_ONCE(lruvec->lrugen.max_seq);
		*min_seq += READ_ONCE(lruvec->lrugen.min_seq[LRU_GEN_FILE]);
	}
}

static void vmscan_protect_replay_age(struct mem_cgroup *memcg)
{
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		struct lruvec *lruvec = mem_cgroup_lruvec(memcg, NODE_DATA(nid));

		vmscan_protect_replay_cmd(lruvec, '+',
					  READ_ONCE(lruvec->lrugen.max_seq), 0);
	}
}

/* Replay the scenario once, in a new memcg on new files. */
static struct vmscan_protect_replay_counts
vmscan_protect_replay_once(struct kunit *test,
			   const struct vmscan_protect_replay_scenario *sc)
{
	struct vmscan_protect_replay_counts c = { };
	unsigned long stream_pages = sc->chunk * sc->rounds;
	struct vmscan_protect_replay_file *hot, *stream;
	unsigned long max_seq, min_seq, max_start, min_start;
	unsigned long cycle, round, i;
	struct mem_cgroup *memcg;
	pgoff_t next = 0;
	void *buf;
	bool ok;
	int err;

	memcg = mm_kunit_memcg_create(test);
	hot = vmscan_protect_replay_file(test, sc->hot_pages);
	stream = vmscan_protect_replay_file(test, stream_pages);
	buf = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	vmscan_protect_replay_seqs(memcg, &max_start, &min_start);

	for (cycle = 0; cycle < sc->cycles; cycle++) {
		if (cycle && sc->age_each_cycle)
			vmscan_protect_replay_age(memcg);
		for (round = 0; round < sc->rounds; round++) {
			bool hot_round = round % sc->hot_period == 0;

			for (i = 0; hot_round && i < sc->hot_pages; i++) {
				err = vmscan_protect_replay_read(hot, i, memcg, buf);
				KUNIT_ASSERT_EQ(test, 0, err);
			}
			for (i = 0; i < sc->chunk; i++) {
				err = vmscan_protect_replay_read(stream, next, memcg, buf);
				KUNIT_ASSERT_EQ(test, 0, err);
				next = (next + 1) % stream_pages;
			}
			ok = vmscan_protect_replay_reclaim(memcg, hot, stream,
							   sc->capacity);
			KUNIT_ASSERT_TRUE_MSG(test, ok,
					      "%s: cycle %lu round %lu: %lu pages cached",
					      sc->desc, cycle, round,
					      vmscan_protect_replay_cached(hot, stream));
		}
	}

	vmscan_protect_replay_seqs(memcg, &max_seq, &min_seq);
	c.agings = max_seq - max_start;
	c.turnovers = min_seq - min_start;
	c.hot_reads = hot->reads;
	c.stream_reads = stream->reads;
	/* Every page of each file is read in the first cycle. */
	KUNIT_EXPECT_GE(test, c.hot_reads, sc->hot_pages);
	KUNIT_EXPECT_GE(test, c.stream_reads, stream_pages);
	c.hot_refaults = c.hot_reads - min(c.hot_reads, sc->hot_pages);
	c.stream_refaults = c.stream_reads - min(c.stream_reads, stream_pages);
	return c;
}

static struct vmscan_protect_replay_counts
vmscan_protect_replay_and_report(struct kunit *test,
				 const struct vmscan_protect_replay_scenario *sc)
{
	struct vmscan_protect_replay_counts c;

	if (!lru_gen_enabled())
		kunit_skip(test, "needs the multi-gen LRU on (CONFIG_LRU_GEN_ENABLED)");
	c = vmscan_protect_replay_once(test, sc);
	kunit_info(test,
		   "replay: %s: hot_reads=%lu hot_refaults=%lu stream_reads=%lu stream_refaults=%lu refaults=%lu agings=%lu turnovers=%lu\n",
		   sc->desc, c.hot_reads, c.hot_refaults, c.stream_reads,
		   c.stream_refaults, c.hot_refaults + c.stream_refaults,
		   c.agings, c.turnovers);
	return c;
}

static void vmscan_protect_replay_test_small(struct kunit *test)
{
	const struct vmscan_protect_replay_scenario *sc = test->param_value;
	struct vmscan_protect_replay_counts first, again;

	first = vmscan_protect_replay_and_report(test, sc);

	/* The same reads in a new memcg on new files: the same numbers. */
	again = vmscan_protect_replay_once(test, sc);
	KUNIT_EXPECT_EQ(test, first.hot_reads, again.hot_reads);
	KUNIT_EXPECT_EQ(test, first.stream_reads, again.stream_reads);
	KUNIT_EXPECT_EQ(test, first.agings, again.agings);
	KUNIT_EXPECT_EQ(test, first.turnovers, again.turnovers);
}

static void vmscan_protect_replay_test_seed(struct kunit *test)
{
	vmscan_protect_replay_and_report(test, test->param_value);
}

static struct kunit_case vmscan_protect_replay_cases[] = {
	KUNIT_CASE_PARAM_ATTR(vmscan_protect_replay_test_small,
			      vmscan_protect_replay_small_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite vmscan_protect_replay_suite = {
	.name = "mm_vmscan_protect_replay",
	.test_cases = vmscan_protect_replay_cases,
};

static struct kunit_case vmscan_protect_replay_seed_cases[] = {
	KUNIT_CASE_PARAM_ATTR(vmscan_protect_replay_test_seed,
			      vmscan_protect_replay_seed_params,
			      { .speed = KUNIT_SPEED_VERY_SLOW }),
	{}
};

static struct kunit_suite vmscan_protect_replay_seed_suite = {
	.name = "mm_vmscan_protect_replay_seed",
	.test_cases = vmscan_protect_replay_seed_cases,
};

kunit_test_suites(&vmscan_protect_replay_suite,
		  &vmscan_protect_replay_seed_suite);

#endif /* CONFIG_MM_VMSCAN_PROTECT_REPLAY_KUNIT_TEST */
