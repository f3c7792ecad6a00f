/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the mm KUnit suites use from 6.12 that 6.1 lacks.
 *
 * This lets the same test files build on Debian's linux-source-6.1, a
 * before-fix tree: run there, the suites should fail exactly the tests of
 * the fixes 6.1 does not have. It is part of the harness's 6.1 port only
 * and never goes upstream.
 *
 * Two kinds of shims:
 *  - KUnit API that appeared after 6.1, built from what 6.1 has (actions
 *    on resources, kunit_vm_mmap(), KUNIT_ARRAY_PARAM_DESC());
 *  - mm API renamed or added after 6.1, mapped to the 6.1 equivalent.
 *    None of these changes behaviour: a fix 6.1 lacks stays lacking.
 */

#ifndef MM_TESTS_KUNIT_COMPAT_H
#define MM_TESTS_KUNIT_COMPAT_H

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/anon_inodes.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/swapops.h>

/* KUnit actions (6.5), as resources: freed in reverse order at test end. */
typedef void (kunit_action_t)(void *);

struct kunit_compat_action {
	kunit_action_t *fn;
	void *data;
};

static void kunit_compat_action_free(struct kunit_resource *res)
{
	struct kunit_compat_action *action = res->data;

	action->fn(action->data);
	kfree(action);
}

static inline int kunit_add_action(struct kunit *test, kunit_action_t *fn,
				   void *data)
{
	struct kunit_compat_action *action;

	action = kmalloc(sizeof(*action), GFP_KERNEL);
	if (!action)
		return -ENOMEM;
	action->fn = fn;
	action->data = data;
	/* Without an init function the resource's data is the action. */
	if (!kunit_alloc_resource(test, NULL, kunit_compat_action_free,
				  GFP_KERNEL, action)) {
		kfree(action);
		return -ENOMEM;
	}
	return 0;
}

static inline int kunit_add_action_or_reset(struct kunit *test,
					    kunit_action_t *fn, void *data)
{
	int ret = kunit_add_action(test, fn, data);

	if (ret)
		fn(data);
	return ret;
}

#define KUNIT_DEFINE_ACTION_WRAPPER(wrapper, orig, arg_type)	\
	static void wrapper(void *in)				\
	{							\
		orig((arg_type)in);				\
	}

/* Each argument used once, but in typeof(). */
#define KUNIT_ARRAY_PARAM_DESC(name, array, desc_member)			\
	static const void *name##_gen_params(const void *prev, char *desc)	\
	{									\
		static typeof(array) *const __array = &(array);			\
		typeof(&(*__array)[0]) __next = prev ?				\
			(typeof(__next))prev + 1 : *__array;			\
		if (__next - *__array < ARRAY_SIZE(*__array)) {			\
			strscpy(desc, (*__next).desc_member,			\
				KUNIT_PARAM_DESC_SIZE);				\
			return __next;						\
		}								\
		return NULL;							\
	}

/*
 * kunit_vm_mmap() (6.10): give the test kthread an mm of its own and map
 * into it. The mm goes when the test kthread exits.
 */
static inline unsigned long kunit_vm_mmap(struct kunit *test,
					  struct file *file,
					  unsigned long addr, unsigned long len,
					  unsigned long prot,
					  unsigned long flag,
					  unsigned long offset)
{
	struct mm_struct *mm;

	if (!current->mm) {
		mm = mm_alloc();
		if (!mm)
			return 0;
		mm->task_size = TASK_SIZE;
		arch_pick_mmap_layout(mm, &current->signal->rlim[RLIMIT_STACK]);
		kthread_use_mm(mm);
	}
	return vm_mmap(file, addr, len, prot, flag, offset);
}

/* anon_inode_create_getfile() (6.7) was anon_inode_getfile_secure(). */
#define anon_inode_create_getfile anon_inode_getfile_secure

/* vm_flags_mod() (6.3): 6.1 writes vma->vm_flags directly. */
static inline void vm_flags_mod(struct vm_area_struct *vma, vm_flags_t set,
				vm_flags_t clear)
{
	mmap_assert_write_locked(vma->vm_mm);
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
}

/*
 * filemap_get_folio() returns ERR_PTR(-ENOENT) on a miss since 6.4, NULL
 * before. The compat headers come after the code of the file under test:
 * only the tests see the macro.
 */
static inline struct folio *
kunit_compat_filemap_get_folio(struct address_space *mapping, pgoff_t index)
{
	struct folio *folio = __filemap_get_folio(mapping, index, 0, 0);

	return folio ?: ERR_PTR(-ENOENT);
}

#define filemap_get_folio kunit_compat_filemap_get_folio

/*
 * PTE markers: 6.1 has only uffd-wp's, and only with CONFIG_PTE_MARKER,
 * which needs userfaultfd write protection (not on UML). Where 6.1 cannot
 * make a marker, a test's marker gets a read-only zero-page PTE in its
 * place: a populated PTE that fault-around leaves alone and that
 * unmapping the test's mm takes down safely. The rows that need a marker
 * are not judged on 6.1 (kernel/compat/6.1/expected).
 */
#ifndef PTE_MARKER_POISONED
#define PTE_MARKER_POISONED	PTE_MARKER_UFFD_WP
#endif

#ifndef CONFIG_PTE_MARKER
static inline pte_t kunit_compat_make_pte_marker(pte_marker marker)
{
	return pfn_pte(my_zero_pfn(0), PAGE_READONLY);
}

#define make_pte_marker kunit_compat_make_pte_marker
#endif

#ifdef CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST
/* The test swap device (mm/tests/swapfile_kunit.h) as 6.1 keeps one. */
#define SWAP_STATE_TEST_6_1

/*
 * zswap keeps a tree per swap type since 6.8; 6.1's zswap is a frontswap
 * backend, which swapon sets up through frontswap_init(). The test swap
 * device (mm/tests/swapfile_kunit.h) has no frontswap map, so that
 * frontswap_load() finds none of its slots and swap_readpage() reads them
 * from the device.
 */
static inline int zswap_swapon(int type, unsigned long nr_pages)
{
	return 0;
}

static inline void zswap_swapoff(int type)
{
}
#endif /* CONFIG_MM_SWAP_READAHEAD_KUNIT_TEST */

#endif /* MM_TESTS_KUNIT_COMPAT_H */
