/* test_cgroup_tick.c - the host-wide count of cgroup changes kept by BPF (cgroup-tick.c):
 * it moves with each change a cgroup tracepoint traces, in the v2 tree and in every v1
 * hierarchy, on real cgroups under the test base.  Other programs on the host change
 * cgroups too, so a case asserts that the count moved, never that it stood still. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgtest.h"
#include "trackers/cgroup-tick.h"

/* Whether the count moved across a change (printing which one did not). */
static void check_moved(const tr_cg_tick *t, uint64_t before, const char *what)
{
        uint64_t now = tr_cg_tick_now(t);
        if (now <= before)
                printf("\n  case '%s': the count stayed at %llu", what, (unsigned long long) now);
        CU_ASSERT(now > before);
}

static tr_cg_tick *tick_or_skip(const char *what)
{
        tr_cg_tick *t = NULL;
        int r = tr_cg_tick_new(&t);
        if (r < 0)
                ts_skip(what, "no cgroup tick here: %s (bpf(2) raw tracepoints and mmapable arrays, as root)",
                        strerror(-r));
        return t;
}

/* Made, a process moved in, its thread group moved out again, removed: each moves it. */
static void check_changes(const tr_hierarchies *hs, const char *tag)
{
        char what[64];
        snprintf(what, sizeof what, "cgroup tick (%s)", tag);
        tr_cg_tick *t = tick_or_skip(what);
        if (!t)
                return;
        uint64_t c = tr_cg_tick_now(t);
        tr_cgroup *a = make_cg_tagged(hs, "tick-a", tag);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        check_moved(t, c, "a cgroup made");
        tr_cgroup *b = make_cg_tagged(hs, "tick-b", tag);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        pid_t p = ts_fork(ts_sleep_forever, NULL);
        CU_ASSERT_FATAL(p > 1);
        tr_error err = { 0 };
        c = tr_cg_tick_now(t);
        CU_ASSERT_EQUAL(tr_cgroup_attach(a, p, &err), 0);
        check_moved(t, c, "a process moved in");
        c = tr_cg_tick_now(t);
        CU_ASSERT_EQUAL(tr_cgroup_attach(b, p, &err), 0);
        check_moved(t, c, "the process moved on");
        ts_kill_reap(p);
        c = tr_cg_tick_now(t);
        kill_destroy(a);
        check_moved(t, c, "a cgroup removed");
        kill_destroy(b);
        tr_cg_tick_free(t);
}

HOST_TEST(changes, "cgroup tick")

/* Two counts at once: each its own program and links, each moving; freed apart. */
static void test_two(void)
{
        if (!root_and_base("two cgroup ticks"))
                return;
        tr_cg_tick *t1 = tick_or_skip("two cgroup ticks");
        if (!t1)
                return;
        tr_cg_tick *t2 = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cg_tick_new(&t2), 0);
        uint64_t c1 = tr_cg_tick_now(t1), c2 = tr_cg_tick_now(t2);
        tr_cgroup *cg = make_cg(ts_hierarchies(), "tick-two");
        CU_ASSERT_PTR_NOT_NULL_FATAL(cg);
        check_moved(t1, c1, "first count");
        check_moved(t2, c2, "second count");
        int fds = count_fds();
        tr_cg_tick_free(t2);
        CU_ASSERT_EQUAL(count_fds(), fds - 5); /* its five links, and nothing else */
        c1 = tr_cg_tick_now(t1);
        kill_destroy(cg);
        check_moved(t1, c1, "first count, the second freed");
        tr_cg_tick_free(t1);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "made, moved in, moved on, removed (host)", host_changes },
                { "made, moved in, moved on, removed (v1 view)", v1_changes },
                { "two counts", test_two },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("cgroup tick", NULL, NULL, tests);
}
