/* test_registry.c - procd/core/registry.c on its own (no daemon, no transport): registration
 * and lookup, condor_procd's placement of a new subfamily (nearest registered ancestor; a
 * child the ancestor kept at registration stays with that ancestor's parent), unregister
 * folding subfamilies into the parent, and a watcher's exit unregistering its family (by
 * its pidfd, and without pidfds by one poll timer for every watcher).  Real
 * processes from tests/support (sleepers, chains), /proc families (no family cgroups). */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <glib.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "procd/core/registry.h"
#include "regtest.h"
#include "testsupport.h"
#include "trackers/util.h"

/* f's parent is the family rooted at want (0: the root family). */
#define CHECK_PARENT(r, f, want)                                                   \
        do {                                                                       \
                CU_ASSERT_PTR_NOT_NULL_FATAL(f);                                   \
                CU_ASSERT_PTR_EQUAL((f)->parent, pd_registry_find((r), (want)));   \
        } while (0)

static void test_register_and_find(void)
{
        pd_registry *r = rt_registry();
        pd_family *root = pd_registry_root(r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(root);
        CU_ASSERT_PTR_EQUAL(pd_registry_find(r, 0), root);
        CU_ASSERT_PTR_NULL(root->parent);
        CU_ASSERT_EQUAL(pd_registry_count(r), 0);

        pid_t a = ts_sleeper();
        CU_ASSERT_FATAL(a > 1);
        CU_ASSERT_PTR_NULL(pd_registry_find(r, a));
        pd_family *f = rt_register(r, a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(pd_registry_count(r), 1);
        CU_ASSERT_PTR_EQUAL(pd_registry_find(r, a), f);
        CU_ASSERT_EQUAL(f->root_pid, a);
        uint64_t start = 0;
        CU_ASSERT_EQUAL(tr_pid_start_ticks(a, &start), 0);
        CU_ASSERT_EQUAL(f->root_start_ticks, start); /* identity: pid + start time */
        CU_ASSERT_EQUAL(f->root_uid, getuid());
        CHECK_PARENT(r, f, 0);
        CU_ASSERT_STRING_EQUAL(pd_family_source(f), "proc"); /* no family cgroups here */
        char buf[256];
        CU_ASSERT_STRING_EQUAL(pd_family_tracking(f, buf, sizeof buf), "parent");

        /* an environment marker is added to the family's methods */
        CU_ASSERT_EQUAL(pd_registry_track_environment(r, f, "PROCD_TEST_JOB=1", NULL), 0);
        CU_ASSERT_STRING_EQUAL(pd_family_tracking(f, buf, sizeof buf), "environment:PROCD_TEST_JOB=1,parent");

        /* every family, the root first; the subtree post-order, f itself last */
        g_autoptr(GPtrArray) all = g_ptr_array_new();
        pd_registry_all(r, all);
        CU_ASSERT_EQUAL_FATAL(all->len, 2);
        CU_ASSERT_PTR_EQUAL(all->pdata[0], root);
        CU_ASSERT_PTR_EQUAL(all->pdata[1], f);

        CU_ASSERT_EQUAL(pd_registry_unregister(r, f), 0);
        CU_ASSERT_PTR_NULL(pd_registry_find(r, a));
        CU_ASSERT_EQUAL(pd_registry_count(r), 0);
        CU_ASSERT_EQUAL(pd_registry_unregister(r, root), -EINVAL); /* the root family stays */
        ts_kill_reap(a);
        pd_registry_free(r);
}

static void test_register_gone(void)
{
        pd_registry *r = rt_registry();
        pid_t gone = ts_sleeper();
        CU_ASSERT_FATAL(gone > 1);
        ts_kill_reap(gone);
        pd_family *f = NULL;
        bool bad_watcher = true;
        CU_ASSERT_EQUAL(pd_registry_register(r, gone, NULL, 0, 60, &f, &bad_watcher, NULL), -ESRCH);
        CU_ASSERT_FALSE(bad_watcher);

        /* a live root with a watcher that is gone: -ESRCH, and it says the watcher */
        pid_t a = ts_sleeper();
        CU_ASSERT_FATAL(a > 1);
        CU_ASSERT_EQUAL(pd_registry_register(r, a, NULL, gone, 60, &f, &bad_watcher, NULL), -ESRCH);
        CU_ASSERT_TRUE(bad_watcher);
        CU_ASSERT_EQUAL(pd_registry_count(r), 0);
        CU_ASSERT_PTR_NULL(pd_registry_find(r, a));
        ts_kill_reap(a);
        pd_registry_free(r);
}

/* A chain A -> B -> C forked after A's registration: C and B are placed below A (the
 * nearest registered ancestor); unregistering A folds both into the root family. */
static void test_placement_and_fold(void)
{
        pd_registry *r = rt_registry();
        pid_t p[3];
        int fds[2];
        CU_ASSERT_EQUAL_FATAL(ph_chain_start(2, p, fds), 0);
        pd_family *a = rt_register(r, p[0]);
        CU_ASSERT_EQUAL_FATAL(ph_chain_grow(2, p, fds), 0);
        CHECK_PARENT(r, a, 0);
        pd_family *c = rt_register(r, p[2]);
        CHECK_PARENT(r, c, p[0]); /* B, between them, is no family: A is the nearest */
        pd_family *b = rt_register(r, p[1]);
        CHECK_PARENT(r, b, p[0]);
        CU_ASSERT_EQUAL(pd_registry_count(r), 3);

        /* A's /proc members after a snapshot: its root, not its subfamilies' processes */
        CU_ASSERT_EQUAL(pd_registry_snapshot(r, NULL), 0);
        tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(pd_registry_members(r, a, &m, NULL), 0);
        CU_ASSERT_TRUE(tr_pidset_contains(&m, p[0]));
        CU_ASSERT_FALSE(tr_pidset_contains(&m, p[1]));
        CU_ASSERT_FALSE(tr_pidset_contains(&m, p[2]));
        tr_pidset_free(&m);
        CU_ASSERT_PTR_EQUAL(pd_registry_family_of(r, p[2]), c);

        /* the subtree of A, subfamilies first, A last */
        g_autoptr(GPtrArray) sub = g_ptr_array_new();
        pd_registry_subtree(a, sub);
        CU_ASSERT_EQUAL_FATAL(sub->len, 3);
        CU_ASSERT_PTR_EQUAL(sub->pdata[2], a);

        CU_ASSERT_EQUAL(pd_registry_unregister(r, a), 0);
        CHECK_PARENT(r, b, 0);
        CHECK_PARENT(r, c, 0);
        CU_ASSERT_EQUAL(pd_registry_count(r), 2);
        CU_ASSERT_EQUAL(pd_registry_unregister(r, b), 0);
        CU_ASSERT_EQUAL(pd_registry_unregister(r, c), 0);
        ph_chain_kill(2, p);
        pd_registry_free(r);
}

/* REGISTER takes the root alone: the child A had forked before its registration stays in
 * the parent family, so a family registered at that child is placed beside A, not below. */
static void test_kept_child_placement(void)
{
        pd_registry *r = rt_registry();
        pid_t p[2];
        CU_ASSERT_EQUAL_FATAL(ph_chain(1, p), 0);
        pd_family *a = rt_register(r, p[0]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(a->kept->len, 1);
        pd_family *k = rt_register(r, p[1]);
        CHECK_PARENT(r, k, 0);
        CU_ASSERT_EQUAL(pd_registry_unregister(r, k), 0);
        CU_ASSERT_EQUAL(pd_registry_unregister(r, a), 0);
        ph_chain_kill(1, p);
        pd_registry_free(r);
}

/* A family's watcher exits: the registry unregisters the family (its pidfd in the main loop). */
static void test_watcher_exit_unregisters(void)
{
        pd_registry *r = rt_registry();
        pid_t a = ts_sleeper(), w = ts_sleeper();
        CU_ASSERT_FATAL(a > 1 && w > 1);
        pd_family *f = NULL;
        bool bad_watcher = false;
        CU_ASSERT_EQUAL_FATAL(pd_registry_register(r, a, NULL, w, 60, &f, &bad_watcher, NULL), 0);
        CU_ASSERT_EQUAL(f->watcher.pid, w);
        ts_kill_reap(w);
        for (int i = 0; i < 500 && pd_registry_find(r, a); i++) /* up to 5 s: a bound, not a claim */
                if (!g_main_context_iteration(NULL, FALSE))
                        ts_msleep(10);
        CU_ASSERT_PTR_NULL(pd_registry_find(r, a));
        CU_ASSERT_EQUAL(pd_registry_count(r), 0);
        CU_ASSERT_TRUE(ts_alive(a)); /* unregistered, not killed */
        ts_kill_reap(a);
        pd_registry_free(r);
}

/* Iterate the main loop until root's family is gone (bounded at 5 s: a bound, not a claim). */
static void run_until_unregistered(pd_registry *r, pid_t root)
{
        for (int i = 0; i < 500 && pd_registry_find(r, root); i++)
                if (!g_main_context_iteration(NULL, FALSE))
                        ts_msleep(10);
}

/* In a child of the test (the filter stays for the process): pidfd_open refused with EPERM
 * as a seccomp filter would, two families with watchers; 0 when each step held, else the
 * number of the step that failed. */
static int polled_watchers_child(void)
{
        struct sock_filter insns[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = TR_ARRAY_SIZE(insns), .filter = insns };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                return 1;
        tr_hierarchies hs; /* not rt_registry(): no CUnit assertion may fail in this child */
        pd_fd_mux *mux = pd_fd_mux_new();
        pd_registry *r = NULL;
        if (tr_hierarchies_discover(&hs, NULL) < 0 || !mux || pd_registry_new(&hs, getpid(), 60, &r, NULL) < 0)
                return 2;
        pd_registry_set_fd_mux(r, mux);
        pid_t a = ts_sleeper(), b = ts_sleeper(), wa = ts_sleeper(), wb = ts_sleeper();
        pd_family *fa = NULL, *fb = NULL;
        bool bad = false;
        if (pd_registry_register(r, a, NULL, wa, 60, &fa, &bad, NULL) < 0 ||
            pd_registry_register(r, b, NULL, wb, 60, &fb, &bad, NULL) < 0)
                return 3;
        int step = 0;
        if (fa->watcher.pidfd >= 0 || !fa->watcher_polled || !fb->watcher_polled)
                step = 4; /* no pidfd: polled */
        else if (pd_fd_mux_count(mux) != 1)
                step = 5; /* one timer for both watchers */
        if (!step) {
                ts_kill_reap(wa);
                run_until_unregistered(r, a);
                if (pd_registry_find(r, a) || pd_registry_find(r, b) != fb || pd_fd_mux_count(mux) != 1)
                        step = 6; /* a's family went, b's stays, the timer too */
        }
        if (!step) {
                ts_kill_reap(wb);
                run_until_unregistered(r, b);
                if (pd_registry_find(r, b) || pd_fd_mux_count(mux) != 0)
                        step = 7; /* b's family went, and the timer with the last polled watcher */
        }
        pid_t all[] = { a, b, wa, wb };
        for (size_t i = 0; i < TR_ARRAY_SIZE(all); i++)
                if (ts_alive(all[i]))
                        ts_kill_reap(all[i]);
        pd_registry_free(r);
        pd_fd_mux_free(mux);
        return step;
}

static void test_polled_watchers(void)
{
        pid_t c = fork();
        CU_ASSERT_FATAL(c >= 0);
        if (c == 0)
                _exit(polled_watchers_child());
        int status = 0;
        CU_ASSERT_EQUAL(waitpid(c, &status, 0), c);
        CU_ASSERT_TRUE(WIFEXITED(status));
        if (WIFEXITED(status) && WEXITSTATUS(status))
                fprintf(stderr, "polled watchers: step %d failed\n", WEXITSTATUS(status));
        CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "register, find, unregister", test_register_and_find },
                { "a gone root or watcher: ESRCH", test_register_gone },
                { "placement below the nearest family; unregister folds into the parent", test_placement_and_fold },
                { "a child kept at registration: its family beside, not below", test_kept_child_placement },
                { "watcher exit unregisters", test_watcher_exit_unregisters },
                { "without pidfds: one poll timer for every watcher", test_polled_watchers },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("registry", rt_suite_init, NULL, tests);
}
