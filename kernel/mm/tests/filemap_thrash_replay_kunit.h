/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit replay of a file read again and again through mappings in a
 * memory cgroup full of anonymous memory, through the real fault path of
 * mm/filemap.c and the kernel's own reclaim of the memcg: the pages read
 * from the file and the anonymous pages swapped out each round, which
 * scanning anonymous pages when file pages refault ("mm: vmscan: scan
 * anonymous pages on file refaults") changes under the classic LRU. Under
 * the multi-gen LRU the suites run too, and report what it does.
 *
 * This file is included at the bottom of mm/filemap.c, after
 * filemap_kunit.h, whose file, mapping and fault helpers it uses.
 *
 * Suites:
 *  - mm_filemap_thrash_replay: the small scenarios, each replayed twice,
 *    the second time after every first replay ended;
 *  - mm_filemap_thrash_replay_seed: the seed's 2 GiB machine, 2048 MB of
 *    anonymous memory and a 200 MB file
 *    (mm/tests/filemap_thrash_replay_scenarios.h says how).
 *
 * A scenario keeps the test's thread on the first online CPU, makes a
 * memcg of its own and moves the thread into it (as a task is moved,
 * through cgroup.procs), so that the thread's faults charge it: the
 * test's mm is the thread's. It makes a swap device that reclaim may swap
 * out to (mm/tests/swapfile_replay_kunit.h, on while the scenario runs,
 * at the lowest priority), an anonymous VMA, and a file
 * on a stub backing store that counts the pages it reads, without I/O
 * and without readahead, its first part mapped VM_EXEC, the rest not,
 * as the seed's program maps it. First every page of the anonymous VMA
 * is written (a write fault, then the page filled with ones, as the
 * seed's memset() fills it); then the file is touched in rounds, in file
 * order or page i of each part in turn, as the seed reads it. An access
 * through a PTE that maps the page sets its accessed bit, as the MMU
 * does; where none does, handle_mm_fault() takes the fault first, as the
 * arch fault handler runs it, retried with FAULT_FLAG_TRIED.
 *
 * The memcg's limit is its capacity, in pages on its LRU lists: after
 * each access (its LRU batch drained, on the CPU that filled it), the
 * memcg is reclaimed with try_to_free_mem_cgroup_pages() while it holds
 * more, as a charge above memory.max reclaims it, until it holds no more
 * or reclaim gives up (a failure of the scenario). Reclaim reads the
 * memcg's statistics as last flushed: the periodic flusher is paused
 * while a scenario runs and every memcg's statistics are flushed before
 * each access and each reclaim instead (mm/tests/memcontrol_replay_kunit.h), so
 * that what reclaim reads depends on the accesses alone, not on when a
 * flush happened to run.
 *
 * The suites report per scenario the pages read and the pages swapped
 * out in all and in each round (and while the anonymous memory was
 * written), the first round from which no round reads a page and the
 * last round's reads, as KTAP diagnostics ("# replay: ..."), to compare
 * builds with and without the change. They check what holds on every
 * build: every access ends with its page mapped by a young PTE, the
 * memcg is back at its capacity after each access, no kswapd scanned
 * meanwhile (a node too small for the memcg would reclaim it behind the
 * replay's back), round 0 reads the whole file, and, at small scale, a
 * second replay gives the same numbers.
 */

#ifdef CONFIG_MM_FILEMAP_THRASH_REPLAY_KUNIT_TEST

#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/swap.h>

#include "memcg_kunit.h"
#include "thrash_replay_hooks.h"

/* The most rounds a scenario runs (the seed's first run: ten). */
#define FTR_ROUNDS	10

enum filemap_thrash_replay_scale {
	FTR_SMALL,
	FTR_SEED,
};

struct filemap_thrash_replay_scenario {
	enum filemap_thrash_replay_scale scale;
	const char *desc;
	/* Pages the memcg's LRU lists may hold. */
	unsigned long capacity;
	/* Anonymous pages written first. */
	unsigned long anon_pages;
	/*
	 * The file: its first exec_pages mapped VM_EXEC, the data_pages
	 * after them not. A round touches page i of each part in turn
	 * (interleaved), or the VM_EXEC part whole and then the other.
	 */
	unsigned long exec_pages;
	unsigned long data_pages;
	bool interleaved;
	unsigned int rounds;
	/*
	 * Bounds under the classic LRU, which the harness checks (the
	 * suite checks round 0's too): counts exact (want_), at least
	 * (min_) or at most (max_) for the build with the change, and
	 * whether the build without it must fail them.
	 */
	unsigned long want_reads_0;
	unsigned long min_reads_1;
	unsigned long max_reads_last;
	unsigned long min_swapouts;
	bool reverted_fails;
};

static const struct filemap_thrash_replay_scenario filemap_thrash_replay_scenarios[] = {
#include "filemap_thrash_replay_scenarios.h"
};

static const void *
filemap_thrash_replay_gen(const void *prev, char *desc,
			  enum filemap_thrash_replay_scale scale)
{
	const struct filemap_thrash_replay_scenario *sc = prev;

	sc = sc ? sc + 1 : filemap_thrash_replay_scenarios;
	for (; sc < filemap_thrash_replay_scenarios +
		    ARRAY_SIZE(filemap_thrash_replay_scenarios); sc++) {
		if (sc->scale == scale) {
			strscpy(desc, sc->desc, KUNIT_PARAM_DESC_SIZE);
			return sc;
		}
	}
	return NULL;
}

static const void *
filemap_thrash_replay_small_params(struct kunit *test, const void *prev,
				   char *desc)
{
	return filemap_thrash_replay_gen(prev, desc, FTR_SMALL);
}

static const void *
filemap_thrash_replay_seed_params(struct kunit *test, const void *prev,
				  char *desc)
{
	return filemap_thrash_replay_gen(prev, desc, FTR_SEED);
}

struct filemap_thrash_replay_counts {
	unsigned long reads[FTR_ROUNDS];
	unsigned long swapouts[FTR_ROUNDS];
	/* Swapped out while the anonymous pages were written. */
	unsigned long fill_swapouts;
};

struct filemap_thrash_replay {
	const struct filemap_thrash_replay_scenario *sc;
	struct filemap_test_file ft;
	struct mem_cgroup *memcg;
	struct vm_area_struct *anon;
	struct filemap_test_map exec, data;
};

/* The stub backing store: counts the pages it reads. */
static int filemap_thrash_replay_read_folio(struct file *file,
					    struct folio *folio)
{
	struct filemap_thrash_replay *r = folio->mapping->host->i_private;

	r->ft.nr_reads += folio_nr_pages(folio);
	folio_mark_uptodate(folio);
	folio_unlock(folio);
	return 0;
}

static void filemap_thrash_replay_readahead(struct readahead_control *rac)
{
	struct folio *folio;

	while ((folio = readahead_folio(rac)))
		filemap_thrash_replay_read_folio(rac->file, folio);
}

static const struct address_space_operations filemap_thrash_replay_aops = {
	.read_folio	= filemap_thrash_replay_read_folio,
	.readahead	= filemap_thrash_replay_readahead,
};

static void filemap_thrash_replay_swapoff(void *data)
{
	WARN_ON(swap_replay_swapoff(data));
}

/*
 * A swap device for every anonymous page of the scenario, on until the
 * test ends, at the lowest priority, so that a swap device of the
 * system's own is used before it.
 */
static void filemap_thrash_replay_swapon(struct kunit *test,
					 unsigned long pages)
{
	struct swap_info_struct *si;

	si = swap_replay_swapon(pages + 1, SHRT_MIN);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(si), "swapon: %ld", PTR_ERR(si));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  filemap_thrash_replay_swapoff,
						  si));
}

static void filemap_thrash_replay_stats_resume(void *data)
{
	memcg_replay_stats_resume();
}

struct filemap_thrash_replay_pin {
	struct task_struct *task;
	struct cpumask allowed;
};

static void filemap_thrash_replay_unpin(void *data)
{
	struct filemap_thrash_replay_pin *pin = data;

	set_cpus_allowed_ptr(pin->task, &pin->allowed);
	put_task_struct(pin->task);
}

/*
 * Keep the test's thread on the first online CPU until the test ends, so
 * that every page it faults comes from that CPU's node, and reclaim of
 * the memcg starts from it, run after run.
 */
static void filemap_thrash_replay_pin(struct kunit *test)
{
	struct filemap_thrash_replay_pin *pin;

	pin = kunit_kzalloc(test, sizeof(*pin), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pin);
	pin->task = get_task_struct(current);
	cpumask_copy(&pin->allowed, current->cpus_ptr);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, filemap_thrash_replay_unpin,
						  pin));
	KUNIT_ASSERT_EQ(test, 0,
			set_cpus_allowed_ptr(current,
					     cpumask_of(cpumask_first(cpu_online_mask))));
}

/* Write @pid into the cgroup.procs of @dir ("": the root) of @mnt. */
static int filemap_thrash_replay_procs(struct vfsmount *mnt, const char *dir,
				       pid_t pid)
{
	char path[48], buf[16];

	snprintf(path, sizeof(path), "%s%scgroup.procs", dir, *dir ? "/" : "");
	snprintf(buf, sizeof(buf), "%d", pid);
	return mm_kunit_cgroup_write(mnt, path, buf);
}

struct filemap_thrash_replay_task {
	struct mm_kunit_memcg *m;
	pid_t pid;
};

/*
 * Move the test's thread back to the root cgroup, from KUnit's cleanup
 * thread. If the test thread is exiting (a failed assertion ends it),
 * wait until it has left the cgroup, so that its rmdir finds it empty.
 */
static void filemap_thrash_replay_leave(void *data)
{
	struct filemap_thrash_replay_task *t = data;
	struct cgroup *cgrp = t->m->memcg->css.cgroup;
	int tries;

	filemap_thrash_replay_procs(t->m->mnt, "", t->pid);
	for (tries = 0; tries < 500 && cgroup_is_populated(cgrp); tries++)
		msleep(20);
	WARN_ON(cgroup_is_populated(cgrp));
}

/*
 * A memory cgroup of the test's own, with the test's thread moved into
 * it as user space moves a task (its pid written to cgroup.procs), so
 * that what the thread charges goes to it: the folios of faults in the
 * test's mm (whose owner the thread is) and of page cache it adds. The
 * thread goes back to the root cgroup when the test ends, before the
 * memcg goes; filemap_thrash_replay_leave_now() moves it back earlier.
 */
static struct filemap_thrash_replay_task *
filemap_thrash_replay_enter(struct kunit *test)
{
	struct filemap_thrash_replay_task *t;
	bool in;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->m = __mm_kunit_memcg_create(test);
	t->pid = task_pid_nr(current);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, filemap_thrash_replay_leave, t));
	KUNIT_ASSERT_EQ(test, 0,
			filemap_thrash_replay_procs(t->m->mnt, t->m->name, t->pid));
	rcu_read_lock();
	in = mem_cgroup_from_task(current) == t->m->memcg;
	rcu_read_unlock();
	KUNIT_ASSERT_TRUE(test, in);
	return t;
}

static int filemap_thrash_replay_leave_now(struct filemap_thrash_replay_task *t)
{
	return filemap_thrash_replay_procs(t->m->mnt, "", t->pid);
}

/* The file, on the stub backing store, nothing cached, no readahead. */
static void filemap_thrash_replay_file(struct kunit *test,
				       struct filemap_thrash_replay *r)
{
	r->ft.file = filemap_test_new_file(test, "[mm_filemap_thrash_replay]",
					   &filemap_thrash_replay_aops, r,
					   r->sc->exec_pages + r->sc->data_pages,
					   0);
}

/*
 * Where the replay maps its VMAs: at fixed addresses, each on a PMD
 * boundary a PMD above the end of the one before, the anonymous VMA
 * first, at 1 GiB. The multi-gen LRU's look-around and page table walk
 * stop at PMD boundaries, so what they see of a VMA depends on where it
 * starts within its PMD; where the kernel places a mapping made
 * anywhere depends on the configuration (an anonymous mapping made
 * without a hint, a multiple of PMD_SIZE long, is PMD-aligned with
 * CONFIG_TRANSPARENT_HUGEPAGE, not without).
 */
#define FILEMAP_THRASH_REPLAY_ANON_ADDR	SZ_1G

static unsigned long filemap_thrash_replay_next_addr(unsigned long end)
{
	return ALIGN(end, PMD_SIZE) + PMD_SIZE;
}

/*
 * The anonymous VMA, in the test's own mm, mapped with pages of its own
 * (no THP), unmapped by an action.
 */
static void filemap_thrash_replay_anon_vma(struct kunit *test,
					   struct filemap_thrash_replay *r)
{
	unsigned long len = r->sc->anon_pages << PAGE_SHIFT;
	unsigned long hint = FILEMAP_THRASH_REPLAY_ANON_ADDR;
	struct filemap_test_unmap *unmap;
	unsigned long addr;

	unmap = kunit_kzalloc(test, sizeof(*unmap), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, unmap);
	addr = kunit_vm_mmap(test, NULL, hint, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_VALUE(addr) || !addr,
			       "kunit_vm_mmap: %ld", (long)addr);
	KUNIT_ASSERT_EQ(test, addr, hint);
	unmap->mm = current->mm;
	unmap->addr = addr;
	unmap->len = len;
	mmget(unmap->mm);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, filemap_test_unmap,
						  unmap));
	/* Pages of its own, not THPs, as madvise(MADV_NOHUGEPAGE) makes. */
	mmap_write_lock(current->mm);
	r->anon = find_vma(current->mm, addr);
	if (r->anon && r->anon->vm_start == addr)
		vm_flags_set(r->anon, VM_NOHUGEPAGE);
	mmap_write_unlock(current->mm);
	KUNIT_ASSERT_NOT_NULL(test, r->anon);
	KUNIT_ASSERT_EQ(test, addr, r->anon->vm_start);
}

/*
 * The access to @addr of @vma through a present PTE (writable, for a
 * write), as the MMU and the CPU make it, under the PT lock: the PTE's
 * accessed bit set (and its dirty bit, for a write), and a write stores
 * ones in the whole page, as the seed's memset() fills its anonymous
 * memory. Returns false if no such PTE maps @addr.
 */
static bool filemap_thrash_replay_mkyoung(struct vm_area_struct *vma,
					  unsigned long addr, bool write)
{
	struct mm_struct *mm = vma->vm_mm;
	spinlock_t *ptl;	/* the PT lock of the PTE page */
	struct page *page = NULL;
	pte_t *ptep = NULL;
	bool mapped = false;
	pmd_t *pmd;

	mmap_read_lock(mm);
	pmd = mm_find_pmd(mm, addr);
	if (pmd)
		ptep = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (ptep) {
		pte_t pte = ptep_get(ptep);

		mapped = pte_present(pte) && (!write || pte_write(pte));
		if (mapped && write)
			page = vm_normal_page(vma, addr, pte);
		mapped &= !write || page;
		if (mapped && (!pte_young(pte) || (write && !pte_dirty(pte)))) {
			pte = pte_mkyoung(pte);
			if (write)
				pte = pte_mkdirty(pte);
			set_pte_at(mm, addr, ptep, pte);
		}
		if (page)
			memset_page(page, 0, 1, PAGE_SIZE);
		pte_unmap_unlock(ptep, ptl);
	}
	mmap_read_unlock(mm);
	return mapped;
}

/*
 * An access to @addr of @vma, a write if @write: where a PTE maps the page
 * (writable, for a write), the MMU marks it accessed; else a fault,
 * handle_mm_fault() as the arch fault handler runs it, retried with
 * FAULT_FLAG_TRIED if it returns VM_FAULT_RETRY, and then the access.
 * Returns 0 or the fault's error bits.
 */
static vm_fault_t filemap_thrash_replay_access(struct vm_area_struct *vma,
					       unsigned long addr, bool write)
{
	unsigned int flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE |
			     FAULT_FLAG_USER | (write ? FAULT_FLAG_WRITE : 0);
	struct mm_struct *mm = vma->vm_mm;
	vm_fault_t ret;
	int tries;

	for (tries = 0; tries < 3; tries++) {
		if (filemap_thrash_replay_mkyoung(vma, addr, write))
			return 0;
		mmap_read_lock(mm);
		ret = handle_mm_fault(vma, addr, flags, NULL);
		if (!(ret & VM_FAULT_RETRY))
			mmap_read_unlock(mm);
		if (ret & VM_FAULT_ERROR)
			return ret & VM_FAULT_ERROR;
		if (ret & VM_FAULT_RETRY)
			flags |= FAULT_FLAG_TRIED;
	}
	return VM_FAULT_RETRY;
}

/*
 * The pages on @memcg's evictable LRU lists, exactly: its statistics
 * flushed, which both LRUs keep (the classic LRU's per-zone sizes do not
 * count the multi-gen LRU's folios).
 */
static unsigned long filemap_thrash_replay_lru_pages(struct mem_cgroup *memcg)
{
	unsigned long nr = 0;
	enum lru_list lru;
	int nid;

	memcg_replay_stats_flush();
	for_each_node_state(nid, N_MEMORY) {
		struct lruvec *lruvec = mem_cgroup_lruvec(memcg, NODE_DATA(nid));

		for_each_evictable_lru(lru)
			nr += lruvec_page_state(lruvec, NR_LRU_BASE + lru);
	}
	return nr;
}

/*
 * Drain this CPU's LRU batches, then reclaim the memcg while it holds
 * more than its capacity, as the charge path would (at most
 * MAX_RECLAIM_RETRIES times). The caller keeps the task on this CPU.
 * Returns false if the memcg stays above it.
 */
static bool filemap_thrash_replay_reclaim(struct filemap_thrash_replay *r)
{
	unsigned long pages;
	int tries;

	lru_add_drain();
	for (tries = 0; tries < MAX_RECLAIM_RETRIES; tries++) {
		pages = filemap_thrash_replay_lru_pages(r->memcg);
		if (pages <= r->sc->capacity)
			return true;
		try_to_free_mem_cgroup_pages(r->memcg, pages - r->sc->capacity,
					     GFP_KERNEL, MEMCG_RECLAIM_MAY_SWAP,
					     NULL);
		lru_add_drain();
	}
	return filemap_thrash_replay_lru_pages(r->memcg) <= r->sc->capacity;
}

/* The pages the memcg has swapped out so far. */
static unsigned long filemap_thrash_replay_swapouts(struct mem_cgroup *memcg)
{
	memcg_replay_stats_flush();
	return memcg_events(memcg, PSWPOUT);
}

/*
 * Access @addr of @vma (a write fills the page with ones), then bring
 * the memcg back to its capacity, on one CPU throughout. Returns 0, or
 * the fault's error bits, or VM_FAULT_OOM if reclaim could not bring the
 * memcg back.
 */
static vm_fault_t filemap_thrash_replay_touch(struct filemap_thrash_replay *r,
					      struct vm_area_struct *vma,
					      unsigned long addr, bool write)
{
	vm_fault_t ret;

	migrate_disable();
	memcg_replay_stats_flush();
	ret = filemap_thrash_replay_access(vma, addr, write);
	if (!ret && !filemap_thrash_replay_reclaim(r))
		ret = VM_FAULT_OOM;
	migrate_enable();
	return ret;
}

/*
 * The page of the file the @i-th touch of a round goes to: in file order,
 * or page i / 2 of each part in turn (the parts' sizes are then equal).
 */
static pgoff_t
filemap_thrash_replay_page(const struct filemap_thrash_replay_scenario *sc,
			   unsigned long i)
{
	if (!sc->interleaved)
		return i;
	return i % 2 ? sc->exec_pages + i / 2 : i / 2;
}

/* Replay the scenario once, in a new memcg on a new file and VMAs. */
static struct filemap_thrash_replay_counts
filemap_thrash_replay_once(struct kunit *test,
			   const struct filemap_thrash_replay_scenario *sc)
{
	struct filemap_thrash_replay_counts c = { };
	unsigned long exec = sc->exec_pages, data = sc->data_pages;
	unsigned long i, reads, swapouts, start, kswapd, addr;
	struct filemap_thrash_replay_task *t;
	struct filemap_thrash_replay *r;
	unsigned int round;
	vm_fault_t ret;

	KUNIT_ASSERT_TRUE(test, sc->rounds <= FTR_ROUNDS);
	KUNIT_ASSERT_TRUE(test, !sc->interleaved || exec == data);
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->sc = sc;
	filemap_thrash_replay_pin(test);
	filemap_thrash_replay_swapon(test, sc->anon_pages);
	memcg_replay_stats_pause();
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  filemap_thrash_replay_stats_resume,
						  NULL));
	t = filemap_thrash_replay_enter(test);
	r->memcg = t->m->memcg;
	filemap_thrash_replay_file(test, r);
	filemap_thrash_replay_anon_vma(test, r);
	addr = filemap_thrash_replay_next_addr(r->anon->vm_end);
	if (exec) {
		r->exec = filemap_test_mmap_at(test, &r->ft, addr, 0, exec,
					       PROT_READ);
		filemap_test_vma_flags(&r->exec, VM_EXEC);
		addr = filemap_thrash_replay_next_addr(r->exec.vma->vm_end);
	}
	r->data = filemap_test_mmap_at(test, &r->ft, addr, exec, data,
				       PROT_READ);

	kswapd = mm_kunit_vm_event(test, PGSCAN_KSWAPD);
	start = filemap_thrash_replay_swapouts(r->memcg);
	for (i = 0; i < sc->anon_pages; i++) {
		ret = filemap_thrash_replay_touch(r, r->anon,
						  r->anon->vm_start + (i << PAGE_SHIFT),
						  true);
		KUNIT_ASSERT_EQ_MSG(test, 0, ret, "%s: anon page %lu", sc->desc, i);
	}
	swapouts = filemap_thrash_replay_swapouts(r->memcg);
	c.fill_swapouts = swapouts - start;

	for (round = 0; round < sc->rounds; round++) {
		reads = r->ft.nr_reads;
		start = swapouts;
		for (i = 0; i < exec + data; i++) {
			pgoff_t index = filemap_thrash_replay_page(sc, i);

			struct filemap_test_map *map = index < exec ? &r->exec : &r->data;

			ret = filemap_thrash_replay_touch(r, map->vma,
							  filemap_test_addr(map, index),
							  false);
			KUNIT_ASSERT_EQ_MSG(test, 0, ret,
					    "%s: round %u: page %lu", sc->desc,
					    round, index);
		}
		swapouts = filemap_thrash_replay_swapouts(r->memcg);
		c.reads[round] = r->ft.nr_reads - reads;
		c.swapouts[round] = swapouts - start;
	}
	/* Nothing but the replay's reclaim scanned: no kswapd woke. */
	KUNIT_EXPECT_EQ_MSG(test, kswapd, mm_kunit_vm_event(test, PGSCAN_KSWAPD),
			    "%s: kswapd scanned meanwhile: a node of the kernel is too small for the memcg",
			    sc->desc);
	/* Back to the root cgroup while the test thread lives. */
	KUNIT_EXPECT_EQ(test, 0, filemap_thrash_replay_leave_now(t));
	/* Nothing is cached before round 0, which touches each page once. */
	KUNIT_EXPECT_EQ(test, c.reads[0], exec + data);
	return c;
}

/* The first round from which no round reads a page; @rounds if none. */
static unsigned int
filemap_thrash_replay_settled(const struct filemap_thrash_replay_counts *c,
			      unsigned int rounds)
{
	unsigned int round = rounds;

	while (round && !c->reads[round - 1])
		round--;
	return round;
}

static struct filemap_thrash_replay_counts
filemap_thrash_replay_and_report(struct kunit *test,
				 const struct filemap_thrash_replay_scenario *sc)
{
	struct filemap_thrash_replay_counts c;
	unsigned long reads = 0, swapouts = 0;
	char rounds[FTR_ROUNDS * 48] = "";
	unsigned int round;
	int n = 0;

	c = filemap_thrash_replay_once(test, sc);
	for (round = 0; round < FTR_ROUNDS; round++) {
		reads += c.reads[round];
		swapouts += c.swapouts[round];
		n += scnprintf(rounds + n, sizeof(rounds) - n,
			       " reads_%u=%lu swapouts_%u=%lu", round,
			       c.reads[round], round, c.swapouts[round]);
	}
	kunit_info(test,
		   "replay: %s: reads=%lu swapouts=%lu fill_swapouts=%lu settled=%u reads_last=%lu%s\n",
		   sc->desc, reads, swapouts, c.fill_swapouts,
		   filemap_thrash_replay_settled(&c, sc->rounds), c.reads[sc->rounds - 1],
		   rounds);
	return c;
}

/*
 * Each small scenario's counts, by row, from its first replay, for the
 * second. The second runs in a test case of its own, after the first's
 * cleanup, so that none of the first's VMAs, pages or memcg are left
 * beside its own (the multi-gen LRU looks at the PTEs around a young
 * one, whatever VMA they map).
 */
static struct filemap_thrash_replay_counts
filemap_thrash_replay_first[ARRAY_SIZE(filemap_thrash_replay_scenarios)];
static bool filemap_thrash_replay_ran[ARRAY_SIZE(filemap_thrash_replay_scenarios)];

static void filemap_thrash_replay_test_small(struct kunit *test)
{
	const struct filemap_thrash_replay_scenario *sc = test->param_value;
	size_t row = sc - filemap_thrash_replay_scenarios;

	filemap_thrash_replay_ran[row] = false;
	filemap_thrash_replay_first[row] = filemap_thrash_replay_and_report(test, sc);
	filemap_thrash_replay_ran[row] = true;
}

static void filemap_thrash_replay_test_small_again(struct kunit *test)
{
	const struct filemap_thrash_replay_scenario *sc = test->param_value;
	size_t row = sc - filemap_thrash_replay_scenarios;
	struct filemap_thrash_replay_counts *first, again;
	unsigned int round;

	if (!filemap_thrash_replay_ran[row])
		kunit_skip(test, "its first replay did not run or did not end in this boot");
	first = &filemap_thrash_replay_first[row];

	/* The same touches in a new memcg on a new file: the same numbers. */
	again = filemap_thrash_replay_once(test, sc);
	KUNIT_EXPECT_EQ(test, first->fill_swapouts, again.fill_swapouts);
	for (round = 0; round < FTR_ROUNDS; round++) {
		KUNIT_EXPECT_EQ(test, first->reads[round], again.reads[round]);
		KUNIT_EXPECT_EQ(test, first->swapouts[round], again.swapouts[round]);
	}
}

static void filemap_thrash_replay_test_seed(struct kunit *test)
{
	filemap_thrash_replay_and_report(test, test->param_value);
}

static int filemap_thrash_replay_suite_init(struct kunit_suite *suite)
{
	memset(filemap_thrash_replay_ran, 0, sizeof(filemap_thrash_replay_ran));
	return 0;
}

/* The second case compares with what the first stored: in this order. */
static struct kunit_case filemap_thrash_replay_cases[] = {
	KUNIT_CASE_PARAM_ATTR(filemap_thrash_replay_test_small,
			      filemap_thrash_replay_small_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE_PARAM_ATTR(filemap_thrash_replay_test_small_again,
			      filemap_thrash_replay_small_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite filemap_thrash_replay_suite = {
	.name = "mm_filemap_thrash_replay",
	.suite_init = filemap_thrash_replay_suite_init,
	.test_cases = filemap_thrash_replay_cases,
};

static struct kunit_case filemap_thrash_replay_seed_cases[] = {
	KUNIT_CASE_PARAM_ATTR(filemap_thrash_replay_test_seed,
			      filemap_thrash_replay_seed_params,
			      { .speed = KUNIT_SPEED_VERY_SLOW }),
	{}
};

static struct kunit_suite filemap_thrash_replay_seed_suite = {
	.name = "mm_filemap_thrash_replay_seed",
	.test_cases = filemap_thrash_replay_seed_cases,
};

kunit_test_suites(&filemap_thrash_replay_suite,
		  &filemap_thrash_replay_seed_suite);

#endif /* CONFIG_MM_FILEMAP_THRASH_REPLAY_KUNIT_TEST */
