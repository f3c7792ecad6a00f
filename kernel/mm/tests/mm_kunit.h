/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the mm KUnit suites share: global knobs set for one test and put
 * back when it ends, also when it fails, by a KUnit action.
 */

#ifndef _MM_TESTS_MM_KUNIT_H
#define _MM_TESTS_MM_KUNIT_H

#include <kunit/test.h>
#include <linux/string.h>

struct mm_kunit_knob {
	void *addr;
	size_t size;
	u64 old;
};

static void mm_kunit_restore_knob(void *data)
{
	struct mm_kunit_knob *knob = data;

	memcpy(knob->addr, &knob->old, knob->size);
}

static void __mm_kunit_set_knob(struct kunit *test, void *addr,
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

#endif /* _MM_TESTS_MM_KUNIT_H */
