/* test_procd_command.c - the command layer in-process, without any transport: the
 * authorization matrix with made-up caller uids, registry placement and folding, the
 * snapshot timer's on/off rule, and 3,000 families in one registry.  (This program plays
 * procd: the root family is this program.) */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "procd/core/command.h"
#include "testsupport.h"
#include "trackers/util.h"

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
        pd_cmd_clear(&CM);
        pd_registry_free(R);
        return 0;
}

static void test_authorization_matrix(void)
{
        pid_t a = ts_sleeper();
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
        CU_ASSERT_EQUAL(pd_cmd_get_usage(&CM, &USER, a, TR_WANT_ALL, &u, NULL, &e), PROCD_OK);
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
        pid_t b = ts_sleeper();
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
        pid_t a = ts_sleeper(), b = ts_sleeper();
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
                kids[made] = ts_sleeper();
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
        CU_ASSERT_EQUAL(pd_cmd_get_usage(&CM, &ROOT, kids[N - 1], TR_WANT_ALL, &u, NULL, &e), PROCD_OK);
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


/* A process A, registered as a family, that then forks B and drops to uid USER (B stays
 * root): A's family belongs to USER, B's (a subfamily below it once registered: B is forked
 * after A's registration, so A's family holds it) to root. */
static int owner_split(pid_t *a, pid_t *b)
{
        int p[2], go[2];
        int r = ts_pipes(p, go);
        if (r < 0)
                return r;
        fflush(NULL);
        pid_t top = fork();
        if (top < 0)
                return -errno;
        if (top == 0) {
                close(p[0]);
                close(go[1]);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                char g;
                if (read(go[0], &g, 1) != 1)
                        _exit(1);
                pid_t c = ts_sleeper();
                if (c < 0 || setresuid(4242, 4242, 4242) < 0 || write(p[1], &c, sizeof c) != sizeof c)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(p[1]);
        close(go[0]);
        *a = top;
        procd_error e;
        procd_status st = pd_cmd_register_subfamily(&CM, &ROOT, top, 0, 60, &e);
        ssize_t n = st == PROCD_OK && write(go[1], "g", 1) == 1 ? read(p[0], b, sizeof *b) : -1;
        close(go[1]);
        close(p[0]);
        for (int i = 0; i < 200; i++) { /* until A's setresuid shows */
                uid_t u = 0;
                if (tr_proc_uid(top, &u) == 0 && u == 4242)
                        break;
                usleep(5000);
        }
        return n == sizeof *b ? 0 : -EIO;
}

/* Owning a family does not lend a say over a subfamily another uid owns: suspend,
 * continue and kill act on the whole subtree, so each family in it must be the caller's. */
static void test_subtree_authorization(void)
{
        if (!ts_need_root("subtree authorization")) /* A drops to another uid (setresuid) */
                return;
        pid_t a = 0, b = 0;
        CU_ASSERT_FATAL(owner_split(&a, &b) == 0); /* A registered */
        procd_error e;
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, b, 0, 60, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_registry_find(R, b)->parent, pd_registry_find(R, a));
        CU_ASSERT_EQUAL(pd_cmd_suspend_family(&CM, &USER, a, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_continue_family(&CM, &USER, a, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_cmd_kill_family(&CM, &USER, a, &e), PROCD_E_PERMISSION);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "uid 0"));
        CU_ASSERT(ts_alive(b));
        CU_ASSERT_EQUAL(pd_cmd_kill_family(&CM, &USER, b, &e), PROCD_E_PERMISSION);
        /* A itself is USER's: its own process may be signalled, the family unregistered */
        CU_ASSERT_EQUAL(pd_cmd_signal_process(&CM, &USER, a, SIGCONT, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_signal_process(&CM, &USER, b, SIGCONT, &e), PROCD_E_PERMISSION);
        /* without the root-owned subfamily the kill is USER's to do */
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, b, &e), PROCD_OK);
        /* B's process now belongs to A's family, but it is root's: not USER's to signal */
        CU_ASSERT(pd_registry_family_of(R, b) == pd_registry_find(R, a));
        CU_ASSERT_EQUAL(pd_cmd_signal_process(&CM, &USER, b, SIGCONT, &e), PROCD_E_PERMISSION);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "belongs to uid 0"));
        CU_ASSERT_EQUAL(pd_cmd_signal_process(&CM, &ROOT, b, SIGCONT, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_suspend_family(&CM, &USER, a, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_continue_family(&CM, &USER, a, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, a, &e), PROCD_OK);
        kill(b, SIGKILL);
        ts_kill_reap(a);
}

/* A child at exactly pid `want` (clone3 set_tid, root only): 0 in the child, like fork. */
static pid_t fork_at(pid_t want)
{
        pid_t tid = want;
        struct clone_args ca = { .exit_signal = SIGCHLD, .set_tid = (uint64_t) (uintptr_t) &tid, .set_tid_size = 1 };
        fflush(NULL);
        return (pid_t) syscall(SYS_clone3, &ca, sizeof ca);
}

static pid_t sleeper_at(pid_t want)
{
        pid_t p = fork_at(want);
        if (p == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;)
                        pause();
        }
        return p;
}

static bool parent_is(pid_t child, pid_t want)
{
        pd_family *f = pd_registry_find(R, child);
        return f && f->parent && f->parent->root_pid == want;
}

/* Pid identity is pid + start time: a new process with the pid of a registered family's
 * dead root may be registered once nothing of that family is left; while it still has
 * members it stays (its owner can kill it); and a family whose root was an earlier
 * process with that pid never adopts the new process's descendants. */
static void test_reused_pid(void)
{
        if (!ts_need_root("clone3 set_tid"))
                return;
        procd_error e;
        /* an empty family of a dead root gives way */
        pid_t x = ts_sleeper();
        CU_ASSERT_EQUAL_FATAL(pd_cmd_register_subfamily(&CM, &ROOT, x, 0, 60, &e), PROCD_OK);
        uint64_t old_start = pd_registry_find(R, x)->root_start_ticks;
        ts_kill_reap(x);
        usleep(30000); /* a later start time (clock ticks of 10 ms) */
        pid_t y = sleeper_at(x);
        if (y != x) {
                ts_skip("reused pid", "clone3 set_tid gave %d (%s)", (int) y, strerror(errno));
                CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, x, &e), PROCD_OK);
                if (y > 0)
                        ts_kill_reap(y);
                return;
        }
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, y, 0, 60, &e), PROCD_OK);
        uint64_t ystart = 0;
        CU_ASSERT_EQUAL(tr_pid_start_ticks(y, &ystart), 0);
        CU_ASSERT_NOT_EQUAL(ystart, old_start);
        CU_ASSERT_EQUAL(pd_registry_find(R, y)->root_start_ticks, ystart);
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, y, 0, 60, &e), PROCD_E_ALREADY_REGISTERED);
        CU_ASSERT_EQUAL(pd_registry_count(R), 1);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, y, &e), PROCD_OK);
        ts_kill_reap(y);

        /* a family with members left stays; the new process's child is not adopted by it */
        pid_t ch[2];
        int fds[2];
        CU_ASSERT_FATAL(ph_chain_start(1, ch, fds) == 0);
        CU_ASSERT_EQUAL_FATAL(pd_cmd_register_subfamily(&CM, &ROOT, ch[0], 0, 60, &e), PROCD_OK);
        CU_ASSERT_FATAL(ph_chain_grow(1, ch, fds) == 0);
        CU_ASSERT_EQUAL(pd_cmd_snapshot(&CM, &ROOT, &e), PROCD_OK); /* ch[1] seen as a member */
        ts_kill_reap(ch[0]);
        usleep(30000);
        int p[2], go[2];
        CU_ASSERT_FATAL(pipe(p) == 0 && pipe(go) == 0);
        pid_t z = 0, z2 = 0;
        y = fork_at(ch[0]);
        if (y == 0) { /* the new process at the old root's pid forks a child of its own, and
                         a second one when told to */
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                close(go[1]);
                for (int i = 0; i < 2; i++) {
                        char g;
                        if (i == 1 && read(go[0], &g, 1) != 1)
                                _exit(1);
                        pid_t c = ts_sleeper();
                        if (write(p[1], &c, sizeof c) != sizeof c)
                                _exit(1);
                }
                for (;;)
                        pause();
        }
        close(p[1]);
        close(go[0]);
        if (y != ch[0] || read(p[0], &z, sizeof z) != sizeof z) {
                ts_skip("reused pid (members left)", "clone3 set_tid gave %d", (int) y);
                close(go[1]);
                close(p[0]);
                if (y > 0)
                        ts_kill_reap(y);
                kill(ch[1], SIGKILL);
                ts_reap_orphans(0);
                CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, ch[0], &e), PROCD_OK);
                return;
        }
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, y, 0, 60, &e), PROCD_E_ALREADY_REGISTERED);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "still has members"));
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, z, 0, 60, &e), PROCD_OK);
        CU_ASSERT(parent_is(z, getpid())); /* the root family, not the stale family at y's pid */
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, z, &e), PROCD_OK);
        /* the stale family's last member ends: now the pid's new process may register */
        kill(ch[1], SIGKILL);
        ts_reap_orphans(0);
        CU_ASSERT(ph_wait_gone(ch[1], 2000));
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, y, 0, 60, &e), PROCD_OK);
        /* z, forked before, stays with the family that held it (condor_procd's rule); what y
         * forks now is y's family's */
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, z, 0, 60, &e), PROCD_OK);
        CU_ASSERT(parent_is(z, getpid()));
        CU_ASSERT(write(go[1], "g", 1) == 1 && read(p[0], &z2, sizeof z2) == sizeof z2);
        close(go[1]);
        close(p[0]);
        CU_ASSERT_FATAL(z2 > 1);
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, z2, 0, 60, &e), PROCD_OK);
        CU_ASSERT(parent_is(z2, y));
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, z2, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, z, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, y, &e), PROCD_OK);
        kill(z2, SIGKILL);
        kill(z, SIGKILL);
        ts_kill_reap(y);
        ts_reap_orphans(0);
}

/* The asynchronous calls: done() exactly once; a later continue answers a pending suspend;
 * the caller's right is checked again before every round. */
typedef struct done_rec {
        int calls;
        procd_status s;
} done_rec;

static void on_done(procd_status s, const procd_error *err, void *data)
{
        (void) err;
        done_rec *d = data;
        d->calls++;
        d->s = s;
}

static void test_async_suspend_continue(void)
{
        pid_t ch[3];
        int fds[2];
        CU_ASSERT_FATAL(ph_chain_start(2, ch, fds) == 0);
        procd_error e;
        CU_ASSERT_EQUAL_FATAL(pd_cmd_register_subfamily(&CM, &ROOT, ch[0], 0, 60, &e), PROCD_OK);
        CU_ASSERT_FATAL(ph_chain_grow(2, ch, fds) == 0);
        done_rec d = { 0 };
        pd_cmd_family_async(&CM, &ROOT, PD_JOB_SUSPEND, ch[0], on_done, &d);
        /* rounds run from the main loop until every member is stopped */
        for (int i = 0; i < 300 && d.calls == 0; i++)
                g_main_context_iteration(NULL, TRUE);
        CU_ASSERT_EQUAL(d.calls, 1);
        CU_ASSERT_EQUAL(d.s, PROCD_OK);
        for (int i = 0; i < 3; i++)
                CU_ASSERT_EQUAL(ts_proc_state(ch[i]), 'T');
        done_rec c = { 0 };
        pd_cmd_family_async(&CM, &ROOT, PD_JOB_CONTINUE, ch[0], on_done, &c);
        for (int i = 0; i < 300 && c.calls == 0; i++)
                g_main_context_iteration(NULL, TRUE);
        CU_ASSERT_EQUAL(c.calls, 1);
        CU_ASSERT_EQUAL(c.s, PROCD_OK);
        for (int i = 0; i < 3; i++)
                CU_ASSERT_NOT_EQUAL(ts_proc_state(ch[i]), 'T');
        done_rec u = { 0 };
        pd_cmd_family_async(&CM, &USER, PD_JOB_SUSPEND, ch[0], on_done, &u);
        CU_ASSERT_EQUAL(u.calls, 1);
        CU_ASSERT_EQUAL(u.s, PROCD_E_PERMISSION);
        done_rec n = { 0 };
        pd_cmd_family_async(&CM, &ROOT, PD_JOB_SUSPEND, 999999, on_done, &n);
        CU_ASSERT_EQUAL(n.calls, 1);
        CU_ASSERT_EQUAL(n.s, PROCD_E_FAMILY_NOT_FOUND);
        CU_ASSERT_PTR_NULL(CM.pending_jobs);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, ch[0], &e), PROCD_OK);
        ph_chain_kill(2, ch);
}

static void count_save(void *data) { (*(int *) data)++; }

/* Whether the pid roots a registered family, and its process lives: one line per case. */
static void check_kept(pid_t pid, const char *what)
{
        bool kept = pd_registry_find(R, pid) != NULL && ts_alive(pid);
        if (!kept)
                fprintf(stderr, "%s: family %d gone after a refused KillAndUnregisterFamily\n", what, (int) pid);
        CU_ASSERT_TRUE(kept);
}

/* KillAndUnregisterFamily: refused, with nothing changed (no state save, the families and
 * their processes kept), wherever KillFamily would be (a subfamily of another uid's
 * included); otherwise done() once the family is killed and unregistered, saved once when
 * the first round finished it (the call's flags and the unregistration in one write). */
static void test_kill_and_unregister(void)
{
        if (!ts_need_root("KillAndUnregisterFamily refusals")) /* A drops to another uid (setresuid) */
                return;
        pid_t a = 0, b = 0;
        CU_ASSERT_FATAL(owner_split(&a, &b) == 0); /* A USER's, registered; B root's, below it */
        procd_error e;
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, b, 0, 60, &e), PROCD_OK);
        int saves = 0;
        pd_registry_set_changed_hook(R, count_save, &saves);
        const struct {
                const pd_caller *who;
                pid_t pid;
                procd_status want;
        } refused[] = {
                { &USER, a, PROCD_E_PERMISSION },       /* B below A is root's */
                { &USER, b, PROCD_E_PERMISSION },       /* root's */
                { &ROOT, 0, PROCD_E_ROOT_FAMILY },      /* holds procd */
                { &ROOT, 1, PROCD_E_BAD_ROOT_PID },
                { &ROOT, 999999, PROCD_E_FAMILY_NOT_FOUND },
        };
        for (size_t i = 0; i < TR_ARRAY_SIZE(refused); i++) {
                done_rec d = { 0 };
                pd_cmd_kill_and_unregister_async(&CM, refused[i].who, refused[i].pid, on_done, &d);
                if (d.calls != 1 || d.s != refused[i].want)
                        fprintf(stderr, "case %zu (pid %d): %d calls, %s\n", i, (int) refused[i].pid, d.calls,
                                procd_status_name(d.s));
                CU_ASSERT_EQUAL(d.calls, 1);
                CU_ASSERT_EQUAL(d.s, refused[i].want);
        }
        check_kept(a, "A");
        check_kept(b, "B");
        CU_ASSERT_EQUAL(saves, 0);
        CU_ASSERT_PTR_NULL(CM.pending_jobs);

        /* root's own family: killed, unregistered, one save */
        pid_t s = ts_sleeper();
        CU_ASSERT_FATAL(s > 1);
        CU_ASSERT_EQUAL_FATAL(pd_cmd_register_subfamily(&CM, &ROOT, s, 0, 60, &e), PROCD_OK);
        saves = 0;
        done_rec d = { 0 };
        pd_cmd_kill_and_unregister_async(&CM, &ROOT, s, on_done, &d);
        bool first_round = d.calls == 1;
        for (int i = 0; i < 300 && d.calls == 0; i++)
                g_main_context_iteration(NULL, TRUE);
        CU_ASSERT_EQUAL(d.calls, 1);
        CU_ASSERT_EQUAL(d.s, PROCD_OK);
        CU_ASSERT_PTR_NULL(pd_registry_find(R, s));
        CU_ASSERT_FALSE(ts_alive(s));
        /* a call left for a later round saves its flags before the loop runs again */
        CU_ASSERT_EQUAL(saves, first_round ? 1 : 2);
        CU_ASSERT_PTR_NULL(CM.pending_jobs);
        pd_registry_set_changed_hook(R, NULL, NULL);
        ts_kill_reap(s);

        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, b, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, a, &e), PROCD_OK);
        kill(b, SIGKILL);
        ts_kill_reap(a);
}

static void *thread_sleep(void *arg)
{
        pid_t *tid = arg;
        __atomic_store_n(tid, (pid_t) syscall(SYS_gettid), __ATOMIC_SEQ_CST);
        for (;;)
                pause();
        return NULL;
}

/* A thread id has a /proc/TID too (hidden from readdir): it is not a process and never the
 * root of a family; procd's own threads are never signalled. */
static void test_thread_ids(void)
{
        pid_t tid = 0;
        pthread_t th;
        CU_ASSERT_FATAL(pthread_create(&th, NULL, thread_sleep, &tid) == 0);
        for (int i = 0; i < 200 && __atomic_load_n(&tid, __ATOMIC_SEQ_CST) == 0; i++)
                usleep(5000);
        CU_ASSERT_FATAL(tid > 1 && tid != getpid());
        procd_error e;
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, tid, 0, 60, &e), PROCD_E_BAD_ROOT_PID);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "thread"));
        /* this program plays procd: its thread is procd's */
        CU_ASSERT_EQUAL(pd_cmd_signal_process(&CM, &ROOT, tid, SIGCONT, &e), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(pd_registry_count(R), 0);
        pthread_cancel(th);
        pthread_join(th, NULL);
}

/* A cgroup family whose root is gone can still be re-tracked (its cgroup is opened by the
 * named path, never through whatever process now has the root's pid); usage and kill still
 * answer for the processes left in the cgroup. */
static void test_root_gone_retrack(void)
{
        if (!ts_cgroup_base()) {
                ts_skip("root gone", "needs root and cgroups");
                return;
        }
        char path[256];
        tr_cgroup *cg = NULL;
        pid_t root = ph_sleeper_in_cgroup("cmd-rootgone", path, sizeof path, &cg);
        CU_ASSERT_FATAL(root > 1 && cg);
        pid_t other = ts_sleeper();
        tr_error terr = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_attach(cg, other, &terr), 0);
        procd_error e;
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, root, 0, 60, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_track_cgroup(&CM, &ROOT, root, path, &e), PROCD_OK);
        ts_kill_reap(root);
        CU_ASSERT_EQUAL(pd_cmd_track_environment(&CM, &ROOT, root, "PROCD_CMD_GONE=1", &e), PROCD_OK);
        if (e.status != PROCD_OK)
                fprintf(stderr, "track-env: %s\n", e.msg);
        CU_ASSERT_EQUAL(pd_cmd_track_login(&CM, &ROOT, root, "nobody", &e), PROCD_OK);
        pd_family *f = pd_registry_find(R, root);
        CU_ASSERT_FATAL(f != NULL);
        CU_ASSERT_STRING_EQUAL(pd_family_source(f), "cgroup");
        tr_usage u;
        CU_ASSERT_EQUAL(pd_cmd_get_usage(&CM, &ROOT, root, TR_WANT_ALL, &u, NULL, &e), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 1);
        CU_ASSERT_EQUAL(pd_cmd_kill_family(&CM, &ROOT, root, &e), PROCD_OK);
        CU_ASSERT(ts_wait(other, 2000) >= 0);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, root, &e), PROCD_OK);
        tr_cgroup_destroy(cg, 2000000, NULL);
        tr_cgroup_free(cg);
}

static int user_sleep(void *arg)
{
        (void) arg;
        if (setresuid(4242, 4242, 4242) < 0)
                return 1;
        for (;;)
                pause();
        return 0;
}

/* Pending asynchronous calls are capped per uid: a user whose families cannot be frozen
 * (members frozen in a v1 freezer cgroup procd was not handed) gets "try again later" past
 * PD_MAX_PENDING_JOBS_PER_UID, while root's call is still taken. */
static void test_pending_cap_per_uid(void)
{
        const tr_hierarchies *hs = ts_hierarchies();
        int fz = hs->v1_of[TR_CTRL_FREEZER];
        if (!ts_cgroup_base() || fz < 0) {
                ts_skip("pending cap", "needs root and a v1 freezer hierarchy");
                return;
        }
        enum { N = PD_MAX_PENDING_JOBS_PER_UID + 1 };
        char path[256], dir[512], f[600];
        ts_cgroup_path(path, sizeof path, "cmd-cap-frozen");
        CU_ASSERT_FATAL(tr_hierarchy_fs_path(&hs->h[fz], path, dir, sizeof dir, NULL) >= 0);
        CU_ASSERT_FATAL(mkdir(dir, 0755) == 0 || errno == EEXIST);
        snprintf(f, sizeof f, "%s/cgroup.procs", dir);
        pid_t kids[N];
        procd_error e;
        for (int i = 0; i < N; i++) {
                kids[i] = ts_fork(user_sleep, NULL);
                char pidbuf[16];
                snprintf(pidbuf, sizeof pidbuf, "%d", (int) kids[i]);
                CU_ASSERT(tr_write_file_at(AT_FDCWD, f, pidbuf, NULL) == 0);
        }
        for (int i = 0; i < N; i++) { /* owned by USER once setresuid shows */
                uid_t u = 0;
                for (int t = 0; t < 6000 && (tr_proc_uid(kids[i], &u) < 0 || u != USER.uid); t++) /* a bound, not a timing: 30 s */
                        usleep(5000);
                CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, kids[i], 0, 60, &e), PROCD_OK);
        }
        snprintf(f, sizeof f, "%s/freezer.state", dir);
        CU_ASSERT_FATAL(tr_write_file_at(AT_FDCWD, f, "FROZEN", NULL) == 0);
        char state[64] = ""; /* FREEZING until every kid is frozen (slow on a loaded host) */
        for (int t = 0; t < 6000 && strncmp(state, "FROZEN", 6) != 0; t++) {
                tr_read_file_at(AT_FDCWD, f, state, sizeof state, NULL);
                if (strncmp(state, "FROZEN", 6) != 0)
                        usleep(5000);
        }
        CU_ASSERT_FATAL(strncmp(state, "FROZEN", 6) == 0);
        done_rec d[N + 1];
        memset(d, 0, sizeof d);
        /* a round is a private /proc scan: with thousands of processes on a loaded host it
         * can outlast the 2 s bound, and a call past its bound is answered (OK) at once */
        uint64_t bound = CM.freeze_timeout_usec;
        CM.freeze_timeout_usec = 600000000ull;
        for (int i = 0; i < N; i++)
                pd_cmd_family_async(&CM, &USER, PD_JOB_SUSPEND, kids[i], on_done, &d[i]);
        for (int i = 0; i < N - 1; i++)
                CU_ASSERT_EQUAL(d[i].calls, 0); /* pending: the member does not stop */
        CU_ASSERT_EQUAL(d[N - 1].calls, 1);
        CU_ASSERT_EQUAL(d[N - 1].s, PROCD_E_INTERNAL); /* USER's share is used up */
        pd_cmd_family_async(&CM, &ROOT, PD_JOB_SUSPEND, kids[N - 1], on_done, &d[N]);
        CU_ASSERT_EQUAL(d[N].calls, 0); /* root's is taken */
        CU_ASSERT_EQUAL(g_slist_length(CM.pending_jobs), N); /* USER's 16 + root's 1 */
        pd_cmd_cancel_pending(&CM);
        CM.freeze_timeout_usec = bound;
        CU_ASSERT_PTR_NULL(CM.pending_jobs);
        for (int i = 0; i <= N; i++)
                CU_ASSERT_EQUAL(d[i].calls, 1);
        CU_ASSERT_EQUAL(d[0].s, PROCD_E_INTERNAL); /* shutting down */
        tr_write_file_at(AT_FDCWD, f, "THAWED", NULL);
        for (int i = 0; i < N; i++) {
                CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, kids[i], &e), PROCD_OK);
                kill(kids[i], SIGCONT);
                ts_kill_reap(kids[i]);
        }
        rmdir(dir);
}

/* One meter behind every transport's usage query: the second metered query of a family has
 * an interval (whoever asked first), an unregistered family's readings are forgotten, and
 * an unmetered query (NULL reading) leaves the meter alone. */
static void test_one_usage_meter(void)
{
        pid_t a = ts_sleeper();
        CU_ASSERT_FATAL(a > 1);
        procd_error e;
        tr_usage u;
        pd_usage_reading first, second, again;
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, a, 0, 60, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_get_usage(&CM, &USER, a, TR_WANT_CPU, &u, &first, &e), PROCD_OK);
        CU_ASSERT_FALSE(first.percent_cpu_known);
        CU_ASSERT_EQUAL(pd_cmd_get_usage(&CM, &ROOT, a, TR_WANT_ALL, &u, NULL, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_get_usage(&CM, &ROOT, a, TR_WANT_ALL, &u, &second, &e), PROCD_OK);
        bool cpu = u.cpu_usec.available || u.cpu_user_usec.available;
        CU_ASSERT_EQUAL(second.percent_cpu_known, cpu);
        CU_ASSERT(!cpu || second.interval_usec > 0);
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, a, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_register_subfamily(&CM, &ROOT, a, 0, 60, &e), PROCD_OK);
        CU_ASSERT_EQUAL(pd_cmd_get_usage(&CM, &ROOT, a, TR_WANT_ALL, &u, &again, &e), PROCD_OK);
        CU_ASSERT_FALSE(again.percent_cpu_known); /* forgotten at the unregister */
        CU_ASSERT_EQUAL(pd_cmd_unregister_family(&CM, &ROOT, a, &e), PROCD_OK);
        kill(a, SIGKILL);
        waitpid(a, NULL, 0);
}

static CU_TestInfo tests[] = {
        { "authorization matrix", test_authorization_matrix },
        { "snapshot timer on/off rule", test_timer_rule },
        { "3,000 families", test_many_families },
        { "subtree authorization", test_subtree_authorization },
        { "reused root pid", test_reused_pid },
        { "asynchronous suspend/continue", test_async_suspend_continue },
        { "KillAndUnregisterFamily: refusals change nothing, one save", test_kill_and_unregister },
        { "thread ids", test_thread_ids },
        { "root gone: re-track a cgroup family", test_root_gone_retrack },
        { "pending calls capped per uid", test_pending_cap_per_uid },
        { "one usage meter for every transport", test_one_usage_meter },
        CU_TEST_INFO_NULL,
};


int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        return ts_run_suite("procd command layer", suite_init, suite_clean, tests);
}
