/* test_cgroup_setup.c - create, attach, destroy (cgroup-setup.c) on real cgroups
 * (integration, root; see cgtest.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgtest.h"
#include "trackers/util.h"

static void check_destroy(const tr_hierarchies *hs, const char *tag)
{
        char name[64], deep[96];
        snprintf(name, sizeof name, "d-%s", tag);
        snprintf(deep, sizeof deep, "%s/a/b/c", name);
        _cleanup_cgroup_ tr_cgroup *cg = make_cg(hs, name);
        _cleanup_cgroup_ tr_cgroup *dc = make_cg(hs, deep);
        snprintf(deep, sizeof deep, "%s/a2", name);
        _cleanup_cgroup_ tr_cgroup *d2 = make_cg(hs, deep);
        if (!cg || !dc || !d2)
                return;
        tr_error err = { 0 };
        /* busy: a process inside - EBUSY at the bound, nothing lost */
        pid_t p = start_in(dc, run_sleeper, NULL);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, 100000, &err), -EBUSY);
        assert_everywhere(dc, true);
        ts_kill_reap(p);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, 5 * SEC, &err), 0);
        assert_everywhere(cg, false);
        assert_everywhere(dc, false);
        assert_everywhere(d2, false);
        /* already gone: fine */
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, SEC, &err), 0);
        tr_usage u;
        CU_ASSERT(tr_cgroup_usage(cg, &u, &err) < 0); /* gone everywhere: an error, not zeros */
        /* acting on a removed cgroup is reported, never a false "empty" (the family may
         * have been moved out before the rmdir: the caller falls back to /proc) */
        tr_kill_result res;
        tr_freeze_state st;
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, SEC, &res, &err), -ENODEV);
        tr_kill_result_free(&res);
        CU_ASSERT_EQUAL(tr_cgroup_freeze(cg, SEC, &st, &err), -ENODEV);
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGTERM, &err), -ENODEV);
        bool pop = true;
        int r = tr_cgroup_populated(cg, &pop, &err);
        CU_ASSERT(r < 0 || !pop);
}

HOST_TEST(destroy, "destroy")

int main(void)
{
        CU_TestInfo host[] = {
                { "destroy", host_destroy },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo v1[] = {
                { "destroy", v1_destroy },
                CU_TEST_INFO_NULL,
        };
        return cgt_run("cgroup-setup", host, v1, NULL);
}
