/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the mm KUnit suites that reclaim share: memory cgroups of a test's
 * own, folios charged to them, and aging the multi-gen LRU of an lruvec.
 */

#ifndef _MM_TESTS_MEMCG_KUNIT_H
#define _MM_TESTS_MEMCG_KUNIT_H

#include <kunit/test.h>
#include <linux/mm.h>

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

#endif /* _MM_TESTS_MEMCG_KUNIT_H */
