/* test_procd_command.c - the command layer in-process, without any transport: the
 * authorization matrix with made-up caller uids, registry placement and folding, the
 * snapshot timer's on/off rule, and 3,000 families in one registry.  (This program plays
 * procd: the root family is this program.) */
#include <CUnit/CUnit.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "procd/command.h"
#include "testsupport.h"

static tr_hierarchies HS;
static pd_registry *R;
static pd_commands CM;
static const pd_caller ROOT = { .uid = 0, .pid = 1234 };
static const pd_caller USER = { .uid = 4242, .pid = 1235 };
static bool quit_called;

static void on_quit(void *data)
{
        (void) data;
        quit_called = true;
}

static int suite_init(void)
{
        if (tr_hierarchies_discover(&HS, NULL) < 0)
                return 1;
        if (pd_registry_new(&HS, getpid(), 60, &R, NULL) < 0)
                return 1;
        CM = (pd_commands) { .reg = R, .gid_min = 71000, .gid_max = 71000, .kill_timeout_usec = 5000000,
                             .freeze_timeout_usec = 2000000, .quit = on_quit };
        return 0;
}

static int suite_clean(void)
{
        pd_registry_free(R);
        return 0;
}

static void test_authorization_matrix(void)
{
        pid_t a = ph_sleeper();
        procd_error e;
        tr_usage u;
        gid_t g;
        procd_family_info *fi = NULL;
        size_t n = 0;
        /* root-only operations */
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &USER, a, 0, 60, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, a, 0, 60, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_track_cgroup(&CM, &USER, a, "/x", &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_track_environment(&CM, &USER, a, "A=1", &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_track_login(&CM, &USER, a, "nobody", &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_track_allocated_group(&CM, &USER, a, &g, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_track_associated_group(&CM, &USER, a, 5000, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_snapshot(&CM, &USER, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_quit(&CM, &USER, &e), PROCD_E_PERMISSION);
        CU_ASSERT_FALSE(quit_called);
        /* anyone: usage and dump */
        CU_ASSERT_EQUAL(pd_cmd_get_usage(&CM, &USER, a, &u, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_dump(&CM, &USER, 0, &fi, &n, &e), PROCD_OK);
        procd_family_info_free(fi, n);
        /* the family's root belongs to uid 0, not to the caller */
        CU_ASSERT_EQUAL(pd_cmd_signal_process(&CM, &USER, a, SIGCONT, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_suspend_family(&CM, &USER, a, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_continue_family(&CM, &USER, a, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_kill_family(&CM, &USER, a, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &USER, a, &e), PROCD_E_PERMISSION);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "uid 4242"));
        /* one gid in the range */
        CU_ASSERT_EQUAL(pd_cmd_track_allocated_group(&CM, &ROOT, a, &g, &e), PROCD_OK);
        CU_ASSERT_EQUAL(g, 71000);
        CU_ASSERT_EQUAL(pd_cmd_track_allocated_group(&CM, &ROOT, a, &g, &e), PROCD_OK); /* same family: same gid */
        CU_ASSERT_EQUAL(g, 71000);
        pid_t b = ph_sleeper();
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, b, 0, 60, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_track_allocated_group(&CM, &ROOT, b, &g, &e), PROCD_E_NO_GID);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, a, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_track_allocated_group(&CM, &ROOT, b, &g, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, b, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_quit(&CM, &ROOT, &e), PROCD_OK);
        CU_ASSERT(quit_called);
        ts_kill_reap(a);
        ts_kill_reap(b);
}

/* The snapshot timer runs only while a registered subfamily is /proc-tracked, at the
 * smallest interval asked; a cgroup family stops it. */
static void test_timer_rule(void)
{
        procd_error e;
        CU_ASSERT_EQUAL(pd_registry_timer_interval(R), 0);
        pid_t a = ph_sleeper(), b = ph_sleeper();
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, a, 0, 30, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_registry_timer_interval(R), 30);
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, b, 0, 7, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_registry_timer_interval(R), 7);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, b, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_registry_timer_interval(R), 30);
        if (ts_cgroup_base()) {
                char path[256];
                tr_cgroup *cg = NULL;
                pid_t c = ph_sleeper_in_cgroup("cmd-timer", path, sizeof path, &cg);
                CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, c, 0, 3, &e), PROCD_OK);
                CU_ASSERT_EQUAL(pd_registry_timer_interval(R), 3);
                CU_ASSERT_EQUAL(pd_cmd_track_cgroup(&CM, &ROOT, c, path, &e), PROCD_OK);
                CU_ASSERT_EQUAL(pd_registry_timer_interval(R), 30); /* cgroup families need none */
                CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, a, &e), PROCD_OK);
                CU_ASSERT_EQUAL(pd_registry_timer_interval(R), 0);
                CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, c, &e), PROCD_OK);
                ts_kill_reap(c);
                tr_cgroup_destroy(cg, 2000000, NULL);
                tr_cgroup_free(cg);
        } else {
                CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, a, &e), PROCD_OK);
        }
        CU_ASSERT_EQUAL(pd_registry_timer_interval(R), 0);
        ts_kill_reap(a);
        ts_kill_reap(b);
}

/* The registry holds 3,000 families: register, look up, usage of one, unregister. */
static void test_many_families(void)
{
        enum { N = 3000 };
        pid_t *kids = calloc(N, sizeof *kids);
        int made = 0;
        for (; made < N; made++) {
                kids[made] = ph_sleeper();
                if (kids[made] <= 1)
                        break;
        }
        CU_ASSERT_EQUAL_FATAL(made, N);
        procd_error e;
        int ok = 0;
        for (int i = 0; i < N; i++)
                ok += pd_cmd_register_subfamily(&CM, &ROOT, kids[i], 0, 60, &e) == PROCD_OK;
        CU_ASSERT_EQUAL(ok, N);
        CU_ASSERT_EQUAL(pd_registry_count(R), N);
        tr_usage u;
        CU_ASSERT_EQUAL(pd_cmd_get_usage(&CM, &ROOT, kids[N - 1], &u, &e), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 1);
        CU_ASSERT_EQUAL(pd_cmd_signal_process(&CM, &ROOT, kids[N / 3], SIGCONT, &e), PROCD_OK);
        int un = 0;
        for (int i = 0; i < N; i++)
                un += pd_cmd_unregister_family(&CM, &ROOT, kids[i], &e) == PROCD_OK;
        CU_ASSERT_EQUAL(un, N);
        CU_ASSERT_EQUAL(pd_registry_count(R), 0);
        for (int i = 0; i < N; i++)
                kill(kids[i], SIGKILL);
        for (int i = 0; i < N; i++)
                waitpid(kids[i], NULL, 0);
        free(kids);
}

static CU_TestInfo tests[] = {
        { "authorization matrix", test_authorization_matrix },
        { "snapshot timer on/off rule", test_timer_rule },
        { "3,000 families", test_many_families },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "procd command layer", suite_init, suite_clean, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        return ts_run(suites);
}
