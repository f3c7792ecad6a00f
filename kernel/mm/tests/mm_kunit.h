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

#ifdef CONFIG_MEMCG
#include <linux/cgroup.h>
#include <linux/fs.h>
#include <linux/memcontrol.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/sched/mm.h>

/*
 * A memory cgroup of the test's own, made as user space makes one: a
 * directory in the cgroup2 hierarchy, under the root, with the memory
 * controller enabled in the root's cgroup.subtree_control. Its lruvecs
 * hold nothing but what the test charges to it. Global reclaim visits
 * them too, as it visits every memcg, but finds no folio it can isolate
 * there while the test's folios lack PG_lru, and a child of the root gets
 * the same effective protection whoever works it out; so a test may move
 * its counts, age it and reclaim from it.
 */
struct mm_kunit_memcg {
	struct vfsmount *mnt;	/* cgroup2, mounted for the test */
	struct mem_cgroup *memcg;
	bool made;		/* the directory exists */
	bool enabled;		/* the test enabled the controller */
	char name[32];
};

/* Write @text into the file @path of the cgroup2 mount @mnt. */
static inline int mm_kunit_cgroup_write(struct vfsmount *mnt,
					const char *path, const char *text)
{
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;

	file = file_open_root_mnt(mnt, path, O_WRONLY, 0);
	if (IS_ERR(file))
		return PTR_ERR(file);
	ret = kernel_write(file, text, strlen(text), &pos);
	fput(file);
	return ret < 0 ? ret : 0;
}

static inline int mm_kunit_subtree_control(struct vfsmount *mnt,
					   const char *cmd)
{
	return mm_kunit_cgroup_write(mnt, "cgroup.subtree_control", cmd);
}

/*
 * Mount cgroup2 with the hierarchy's options as they are: a mount from the
 * initial cgroup namespace sets them all, for every mount.
 */
static inline struct vfsmount *mm_kunit_cgroup2_mount(void)
{
	/* The options, as cgroup_show_options() names them. */
	static const struct {
		unsigned int flag;
		const char *name;
	} opts[] = {
		{ CGRP_ROOT_NS_DELEGATE, "nsdelegate" },
		{ CGRP_ROOT_FAVOR_DYNMODS, "favordynmods" },
		{ CGRP_ROOT_MEMORY_LOCAL_EVENTS, "memory_localevents" },
		{ CGRP_ROOT_MEMORY_RECURSIVE_PROT, "memory_recursiveprot" },
		{ CGRP_ROOT_MEMORY_HUGETLB_ACCOUNTING,
		  "memory_hugetlb_accounting" },
		{ CGRP_ROOT_PIDS_LOCAL_EVENTS, "pids_localevents" },
	};
	unsigned int flags = READ_ONCE(cgrp_dfl_root.flags);
	struct file_system_type *fs;
	struct vfsmount *mnt;
	char data[128] = "";
	int i;

	for (i = 0; i < ARRAY_SIZE(opts); i++) {
		if (!(flags & opts[i].flag))
			continue;
		if (data[0])
			strlcat(data, ",", sizeof(data));
		strlcat(data, opts[i].name, sizeof(data));
	}
	fs = get_fs_type("cgroup2");
	if (!fs)
		return ERR_PTR(-ENODEV);
	mnt = vfs_kern_mount(fs, SB_KERNMOUNT, fs->name, data);
	put_filesystem(fs);
	return mnt;
}

/* rmdir of the cgroup: its memcg goes offline, and away once unused. */
static inline int mm_kunit_memcg_rmdir(struct mm_kunit_memcg *m)
{
	struct dentry *root = m->mnt->mnt_root;
	struct dentry *dir;
	int err;

	dir = start_removing(&nop_mnt_idmap, root, &QSTR(m->name));
	if (IS_ERR(dir))
		return PTR_ERR(dir);
	err = vfs_rmdir(&nop_mnt_idmap, d_inode(root), dir, NULL);
	end_removing(dir);
	if (!err)
		m->made = false;
	return err;
}

static inline void mm_kunit_memcg_remove(void *data)
{
	struct mm_kunit_memcg *m = data;

	if (m->memcg)
		css_put(&m->memcg->css);
	if (m->made)
		WARN_ON(mm_kunit_memcg_rmdir(m));
	if (m->enabled)
		WARN_ON(mm_kunit_subtree_control(m->mnt, "-memory"));
	mntput(m->mnt);
}

static inline int mm_kunit_memcg_mkdir(struct mm_kunit_memcg *m)
{
	struct dentry *root = m->mnt->mnt_root;
	struct cgroup_subsys_state *css;
	struct dentry *dir;

	dir = start_creating(&nop_mnt_idmap, root, &QSTR(m->name));
	if (IS_ERR(dir))
		return PTR_ERR(dir);
	dir = vfs_mkdir(&nop_mnt_idmap, d_inode(root), dir, 0755, NULL);
	end_creating(dir);
	if (IS_ERR(dir))
		return PTR_ERR(dir);
	m->made = true;
	/* kernfs leaves the dentry it was given negative: look it up. */
	dir = lookup_one_positive_unlocked(&nop_mnt_idmap, &QSTR(m->name),
					   root);
	if (IS_ERR(dir))
		return PTR_ERR(dir);
	css = css_tryget_online_from_dir(dir, &memory_cgrp_subsys);
	dput(dir);
	if (IS_ERR(css))
		return PTR_ERR(css);
	m->memcg = mem_cgroup_from_css(css);
	return 0;
}

/*
 * A memory cgroup of the test's own, removed when the test ends; skips the
 * test when memory cgroups are disabled or their controller cannot be had
 * on the cgroup2 hierarchy (bound to cgroup1).
 */
static inline struct mm_kunit_memcg *__mm_kunit_memcg_create(struct kunit *test)
{
	static atomic_t serial = ATOMIC_INIT(0);
	struct mm_kunit_memcg *m;
	int err;

	if (mem_cgroup_disabled())
		kunit_skip(test, "memory cgroups are disabled");
	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	snprintf(m->name, sizeof(m->name), "mm_kunit.%d",
		 atomic_inc_return(&serial));
	m->mnt = mm_kunit_cgroup2_mount();
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(m->mnt), "cgroup2 mount: %ld",
			       PTR_ERR(m->mnt));
	m->enabled = !(READ_ONCE(cgrp_dfl_root.cgrp.subtree_control) &
		       BIT(memory_cgrp_id));
	err = m->enabled ? mm_kunit_subtree_control(m->mnt, "+memory") : 0;
	if (err)
		m->enabled = false;
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, mm_kunit_memcg_remove,
						  m));
	if (err)
		kunit_skip(test, "no memory controller on cgroup2: %d", err);
	KUNIT_ASSERT_EQ(test, 0, mm_kunit_memcg_mkdir(m));
	return m;
}

static inline struct mem_cgroup *mm_kunit_memcg_create(struct kunit *test)
{
	return __mm_kunit_memcg_create(test)->memcg;
}

/*
 * A memory cgroup of the test's own that has gone offline: removed as
 * rmdir removes it, and waited for until the cgroup core has taken it
 * offline (the RCU callback that confirms the kill of its references
 * queues the offlining, after a grace period, as an RCU work). The test
 * holds a reference to it until it ends.
 */
static inline struct mem_cgroup *
mm_kunit_memcg_create_offline(struct kunit *test)
{
	struct mm_kunit_memcg *m = __mm_kunit_memcg_create(test);

	KUNIT_ASSERT_EQ(test, 0, mm_kunit_memcg_rmdir(m));
	rcu_barrier();
	flush_rcu_work(&m->memcg->css.destroy_rwork);
	return m->memcg;
}

#else /* !CONFIG_MEMCG */
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>

static inline struct mem_cgroup *mm_kunit_memcg_create(struct kunit *test)
{
	kunit_skip(test, "no memory controller");
	return NULL;
}

static inline struct mem_cgroup *
mm_kunit_memcg_create_offline(struct kunit *test)
{
	return mm_kunit_memcg_create(test);
}
#endif /* CONFIG_MEMCG */

/*
 * Charge @folio to @memcg (NULL: the current task's, the root in a
 * kernel thread), as a fault in a task of that cgroup would.
 */
static inline int mm_kunit_memcg_charge(struct folio *folio,
					struct mem_cgroup *memcg)
{
	struct mem_cgroup *old = set_active_memcg(memcg);
	int err = mem_cgroup_charge(folio, NULL, GFP_KERNEL);

	set_active_memcg(old);
	return err;
}

#ifdef CONFIG_MM_VMSCAN_KUNIT_TEST
/* In mm/tests/vmscan_kunit.h, for the workingset tests. */
bool mm_kunit_lru_gen_age(struct lruvec *lruvec);
#endif

#endif /* _MM_TESTS_MM_KUNIT_H */
