/* test_pidset.c - trackers/pidset.c: the growable pid set families keep their members in. */
#include <CUnit/CUnit.h>

#include "testsupport.h"
#include "trackers/pidset.h"

static void test_add_normalize_contains(void)
{
        _cleanup_pidset_ tr_pidset s = TR_PIDSET_INIT;
        CU_ASSERT_FALSE(tr_pidset_contains(&s, 1)); /* empty */
        tr_pidset_normalize(&s);
        CU_ASSERT_EQUAL(s.n, 0);
        const pid_t in[] = { 42, 7, 42, 1000, 7, 3 };
        for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
                CU_ASSERT_EQUAL(tr_pidset_add(&s, in[i]), 0);
        CU_ASSERT_EQUAL(s.n, 6); /* duplicates kept until normalized */
        tr_pidset_normalize(&s);
        CU_ASSERT_EQUAL_FATAL(s.n, 4);
        const pid_t want[] = { 3, 7, 42, 1000 };
        for (size_t i = 0; i < 4; i++)
                CU_ASSERT_EQUAL(s.pids[i], want[i]);
        CU_ASSERT_TRUE(tr_pidset_contains(&s, 42));
        CU_ASSERT_TRUE(tr_pidset_contains(&s, 3));
        CU_ASSERT_FALSE(tr_pidset_contains(&s, 8));
        CU_ASSERT_FALSE(tr_pidset_contains(&s, 0));
}

static void test_grow_clear_free(void)
{
        tr_pidset s = TR_PIDSET_INIT;
        for (pid_t p = 10000; p > 0; p--) /* past the first allocation, in reverse */
                CU_ASSERT_EQUAL_FATAL(tr_pidset_add(&s, p), 0);
        CU_ASSERT_EQUAL(s.n, 10000);
        CU_ASSERT(s.cap >= s.n);
        tr_pidset_normalize(&s);
        CU_ASSERT_EQUAL(s.n, 10000);
        CU_ASSERT_EQUAL(s.pids[0], 1);
        CU_ASSERT_TRUE(tr_pidset_contains(&s, 9999));
        size_t cap = s.cap;
        tr_pidset_clear(&s); /* empty, memory kept */
        CU_ASSERT_EQUAL(s.n, 0);
        CU_ASSERT_EQUAL(s.cap, cap);
        CU_ASSERT_FALSE(tr_pidset_contains(&s, 1));
        tr_pidset_free(&s);
        CU_ASSERT_PTR_NULL(s.pids);
        CU_ASSERT_EQUAL(s.cap, 0);
        tr_pidset_free(&s); /* twice: harmless */
}

/* A set in the caller's array stays there until it outgrows it, then moves to the heap
 * with what it held (ASan/valgrind: the array is never freed, the heap copy is). */
static void test_on_callers_array(void)
{
        pid_t small[4];
        _cleanup_pidset_ tr_pidset s = TR_PIDSET_ON(small);
        for (pid_t p = 1; p <= 4; p++)
                CU_ASSERT_EQUAL_FATAL(tr_pidset_add(&s, p), 0);
        CU_ASSERT_PTR_EQUAL(s.pids, small); /* full, not grown */
        CU_ASSERT_EQUAL(tr_pidset_add(&s, 5), 0);
        CU_ASSERT_PTR_NOT_EQUAL(s.pids, small);
        CU_ASSERT_FALSE(s.borrowed);
        CU_ASSERT_EQUAL_FATAL(s.n, 5);
        for (pid_t p = 1; p <= 5; p++)
                CU_ASSERT_EQUAL(s.pids[p - 1], p);
        pid_t one[1];
        tr_pidset t = TR_PIDSET_ON(one);
        CU_ASSERT_EQUAL(tr_pidset_add(&t, 9), 0);
        tr_pidset_free(&t); /* not grown: nothing to free */
        CU_ASSERT_PTR_NULL(t.pids);
        CU_ASSERT_FALSE(t.borrowed);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "add, normalize, contains", test_add_normalize_contains },
                { "grow, clear, free", test_grow_clear_free },
                { "on the caller's array", test_on_callers_array },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("pidset", NULL, NULL, tests);
}
