/* test_family_usage.c - procd/core/family-usage.c: a family's usage with its subtree of
 * families, each process counted once (condor_procd's GET_USAGE), over /proc families of
 * real processes: a chain A -> B -> C with A and C registered. */
#include <CUnit/CUnit.h>
#include <errno.h>

#include "harness.h"
#include "procd/core/family-usage.h"
#include "regtest.h"
#include "testsupport.h"

/* num_procs of f: its own record (own) or with its subfamilies; -1 when unknown. */
static long procs_of(pd_registry *r, pd_family *f, bool own)
{
        tr_usage u;
        tr_usage_init(&u);
        tr_error err = { 0 };
        int k = own ? pd_family_own_usage(r, f, TR_WANT_PROCS, &u, &err)
                    : pd_family_usage(r, f, TR_WANT_PROCS, &u, &err);
        if (k < 0)
                fprintf(stderr, "usage of %d: %s\n", (int) f->root_pid, err.msg);
        CU_ASSERT_EQUAL(k, 0);
        return k == 0 && u.num_procs.available ? (long) u.num_procs.value : -1;
}

static void test_subtree_counted_once(void)
{
        pd_registry *r = rt_registry();
        pid_t p[3];
        int fds[2];
        CU_ASSERT_EQUAL_FATAL(ph_chain_start(2, p, fds), 0);
        pd_family *a = rt_register(r, p[0]);
        CU_ASSERT_EQUAL_FATAL(ph_chain_grow(2, p, fds), 0);
        pd_family *c = rt_register(r, p[2]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_EQUAL(pd_registry_snapshot(r, NULL), 0);
        CU_ASSERT_EQUAL(procs_of(r, a, true), 2);  /* A and B: C is its subfamily's */
        CU_ASSERT_EQUAL(procs_of(r, c, true), 1);
        CU_ASSERT_EQUAL(procs_of(r, a, false), 3); /* with C's, each once */
        CU_ASSERT_EQUAL(procs_of(r, c, false), 1); /* no subfamilies */

        /* C unregistered: its process folds into A's own record, the sum unchanged */
        CU_ASSERT_EQUAL(pd_registry_unregister(r, c), 0);
        CU_ASSERT_EQUAL(pd_registry_snapshot(r, NULL), 0);
        CU_ASSERT_EQUAL(procs_of(r, a, true), 3);
        CU_ASSERT_EQUAL(procs_of(r, a, false), 3);
        CU_ASSERT_EQUAL(pd_registry_unregister(r, a), 0);
        ph_chain_kill(2, p);
        pd_registry_free(r);
}

/* A family whose processes are gone: its record says none, it is not an error. */
static void test_gone_members(void)
{
        pd_registry *r = rt_registry();
        pid_t a = ts_sleeper();
        CU_ASSERT_FATAL(a > 1);
        pd_family *f = rt_register(r, a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(pd_registry_snapshot(r, NULL), 0);
        CU_ASSERT_EQUAL(procs_of(r, f, false), 1);
        ts_kill_reap(a);
        CU_ASSERT_EQUAL(pd_registry_snapshot(r, NULL), 0);
        CU_ASSERT_EQUAL(procs_of(r, f, false), 0);
        CU_ASSERT_EQUAL(pd_registry_unregister(r, f), 0);
        pd_registry_free(r);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "a subtree of /proc families: each process counted once", test_subtree_counted_once },
                { "a family whose processes are gone: zero", test_gone_members },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("family usage", rt_suite_init, NULL, tests);
}
