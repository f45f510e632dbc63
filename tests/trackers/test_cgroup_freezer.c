/* test_cgroup_freezer.c - freeze and thaw (cgroup-freezer.c): CPU flat while frozen,
 * resumed at thaw (integration, root; see cgtest.h). */
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

/* a bound on the wait, not a timing claim: freeze and thaw return as soon as the kernel is done */
#define FREEZE_WAIT (30 * SEC)

static void check_freeze(const tr_hierarchies *hs, const char *tag)
{
        tr_cgroup *cg = make_cg_tagged(hs, "fz", tag);
        if (!cg)
                return;
        pid_t a = start_in(cg, run_spinner, NULL);
        pid_t b = start_in(cg, run_spinner, NULL);
        ts_msleep(100);
        tr_freeze_state st = TR_THAWED;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_freeze(cg, FREEZE_WAIT, &st, &err), 0);
        CU_ASSERT_EQUAL(st, TR_FROZEN);
        printf("\n    freeze (%s): %s\n", tag, tr_freeze_state_name(st));
        tr_usage u0, u1;
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u0, &err), 0);
        long long a0 = cpu_ticks(a), b0 = cpu_ticks(b);
        ts_msleep(300);
        long long a1 = cpu_ticks(a), b1 = cpu_ticks(b);
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u1, &err), 0);
        CU_ASSERT(a0 >= 0 && b0 >= 0);
        CU_ASSERT_EQUAL(a1, a0); /* no member's CPU time advances while frozen */
        CU_ASSERT_EQUAL(b1, b0);
        if (u0.cpu_usec.available && u1.cpu_usec.available)
                CU_ASSERT(u1.cpu_usec.value - u0.cpu_usec.value < 10000); /* accounting noise only */
        /* a second freeze of a frozen cgroup is fine */
        CU_ASSERT_EQUAL(tr_cgroup_freeze(cg, FREEZE_WAIT, &st, &err), 0);
        CU_ASSERT_EQUAL(st, TR_FROZEN);

        CU_ASSERT_EQUAL(tr_cgroup_thaw(cg, FREEZE_WAIT, &st, &err), 0);
        CU_ASSERT_EQUAL(st, TR_THAWED);
        /* thaw resumes: both spin again (polled: a loaded machine may not run them at once) */
        for (int i = 0; i < 100 && !(cpu_ticks(a) > a1 && cpu_ticks(b) > b1); i++)
                ts_msleep(100);
        CU_ASSERT(cpu_ticks(a) > a1);
        CU_ASSERT(cpu_ticks(b) > b1);
        kill_destroy(cg);
        ts_kill_reap(a);
        ts_kill_reap(b);
}

HOST_TEST(freeze, "freeze")

int main(void)
{
        CU_TestInfo host[] = {
                { "freeze", host_freeze },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo v1[] = {
                { "freeze", v1_freeze },
                CU_TEST_INFO_NULL,
        };
        return cgt_run("cgroup-freezer", host, v1, NULL);
}
