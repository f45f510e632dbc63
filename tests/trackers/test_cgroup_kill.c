/* test_cgroup_kill.c - the safety gate, signal, kill and populated (cgroup-kill.c): escapers
 * killed, hundreds of sleepers, the bound with a member held frozen elsewhere, signals
 * without a freezer and across pid reuse, every refusal (integration, root; see cgtest.h). */
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
#include "trackers/proc-read.h"
#include "trackers/util.h"

static int run_escapers(void *arg)
{
        (void) arg;
        /* double fork: the grandchild is orphaned at once */
        pid_t c = fork();
        if (c == 0) {
                if (fork() == 0)
                        for (;;)
                                pause();
                _exit(0);
        }
        if (c > 0)
                waitpid(c, NULL, 0);
        /* a new session */
        if (fork() == 0) {
                setsid();
                for (;;)
                        pause();
        }
        /* nohup env -i: no SIGHUP, no environment to be found by */
        if (fork() == 0) {
                int fd = open("/dev/null", O_RDWR);
                if (fd >= 0) {
                        dup2(fd, 0);
                        dup2(fd, 1);
                        dup2(fd, 2);
                }
                execlp("nohup", "nohup", "env", "-i", "/bin/sleep", "1000", (char *) NULL);
                _exit(127);
        }
        /* keeps forking while we kill */
        if (fork() == 0) {
                for (int i = 0; i < 400; i++) {
                        if (fork() == 0)
                                for (;;)
                                        pause();
                        ts_msleep(2);
                }
                for (;;)
                        pause();
        }
        for (;;)
                pause();
        return 0;
}

static void check_kill_escapers(const tr_hierarchies *hs, const char *tag)
{
        tr_cgroup *cg = make_cg_tagged(hs, "esc", tag);
        if (!cg)
                return;
        pid_t a = start_gated(cg, run_escapers, NULL);
        size_t n = wait_members(cg, 20, 10000);
        CU_ASSERT(n >= 20);
        _cleanup_pidset_ tr_pidset rec = TR_PIDSET_INIT;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &rec, &err), 0);
        uint64_t *ticks = calloc(rec.n ? rec.n : 1, sizeof *ticks);
        CU_ASSERT_FATAL(ticks != NULL);
        for (size_t k = 0; k < rec.n; k++)
                (void) tr_pid_start_ticks(rec.pids[k], &ticks[k]);

        tr_kill_result res;
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, 10 * SEC, &res, &err), 0);
        printf("\n    kill (%s): %zu recorded, method %s, rounds %u, empty %d, %.1f ms\n", tag, rec.n, res.method,
               res.rounds, res.empty, (double) res.elapsed_usec / 1000.0);
        CU_ASSERT_TRUE(res.empty);
        CU_ASSERT_EQUAL(res.survivors.n, 0);
        tr_kill_result_free(&res);
        waitpid(a, NULL, 0);
        size_t alive = 0;
        for (size_t k = 0; k < rec.n; k++)
                if (ticks[k] && alive_same(rec.pids[k], ticks[k])) {
                        printf("    still alive: %d\n", (int) rec.pids[k]);
                        alive++;
                }
        CU_ASSERT_EQUAL(alive, 0);
        free(ticks);
        bool pop = true;
        CU_ASSERT_EQUAL(tr_cgroup_populated(cg, &pop, &err), 0);
        CU_ASSERT_FALSE(pop);
        ts_reap_orphans(0); /* the escapers' orphans, reparented to us */
        kill_destroy(cg);
        ts_reap_orphans(0);
}

/* Measurement only (no timed assertion): kill-to-empty of a few hundred sleepers. */
static void check_kill_many(const tr_hierarchies *hs, const char *tag)
{
        tr_cgroup *cg = make_cg_tagged(hs, "many", tag);
        if (!cg)
                return;
        pid_t a = start_gated(cg, run_many, (void *) (intptr_t) 300);
        size_t n = wait_members(cg, 301, 20000);
        CU_ASSERT_EQUAL(n, 301);
        tr_kill_result res;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, 20 * SEC, &res, &err), 0);
        printf("\n    kill %zu sleepers (%s): method %s, rounds %u, %.1f ms\n", n, tag, res.method, res.rounds,
               (double) res.elapsed_usec / 1000.0);
        CU_ASSERT_TRUE(res.empty);
        tr_kill_result_free(&res);
        waitpid(a, NULL, 0);
        ts_reap_orphans(0);
        kill_destroy(cg);
        ts_reap_orphans(0);
}

/* The bound: a member frozen by a v1 freezer cgroup the handle does not know cannot die;
 * kill must return at the timeout and name it. */
static void check_kill_timeout(const tr_hierarchies *hs, const char *tag)
{
        int fi = hs->v1_of[TR_CTRL_FREEZER];
        if (fi < 0) {
                ts_skip("kill timeout", "%s: no v1 freezer to hold a member", tag);
                return;
        }
        char name[64], fname[64];
        snprintf(name, sizeof name, "kt-%s", tag);
        snprintf(fname, sizeof fname, "ktfrz-%s", tag);
        tr_cgroup *cg = make_cg(hs, name);
        tr_cgroup *frz = make_cg(hs, fname);
        if (!cg || !frz)
                return;
        pid_t p = start_in(cg, ts_sleep_forever, NULL);
        pid_t q = start_in(cg, ts_sleep_forever, NULL);
        char v[32];
        snprintf(v, sizeof v, "%d", (int) p);
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_write(frz, fi, "cgroup.procs", v, &err), 0);
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_write(frz, fi, "freezer.state", "FROZEN", &err), 0);
        char buf[64] = "";
        for (int i = 0; i < 200; i++) {
                if (tr_cgroup_read(frz, fi, "freezer.state", buf, sizeof buf, NULL) > 0 &&
                    strncmp(buf, "FROZEN", 6) == 0)
                        break;
                ts_msleep(10);
        }
        CU_ASSERT_STRING_EQUAL(buf, "FROZEN\n");

        tr_kill_result res;
        uint64_t timeout = 300000;
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, timeout, &res, &err), 0);
        printf("\n    kill timeout (%s): method %s, rounds %u, empty %d, survivors %zu, %.1f ms\n", tag, res.method,
               res.rounds, res.empty, res.survivors.n, (double) res.elapsed_usec / 1000.0);
        CU_ASSERT_FALSE(res.empty);
        CU_ASSERT_EQUAL(res.survivors.n, 1);
        CU_ASSERT_TRUE(res.survivors.n == 1 && res.survivors.pids[0] == p);
        CU_ASSERT(res.elapsed_usec >= timeout);
        CU_ASSERT(res.elapsed_usec < timeout + 2 * SEC);
        tr_kill_result_free(&res);
        CU_ASSERT_FALSE(ts_alive(q)); /* the other member died */

        CU_ASSERT_EQUAL(tr_cgroup_write(frz, fi, "freezer.state", "THAWED", &err), 0);
        kill_destroy(cg);
        kill_destroy(frz);
        ts_kill_reap(p);
        ts_kill_reap(q);
}

static bool wait_state(pid_t pid, char want)
{
        for (int i = 0; i < 200; i++) {
                if (ts_proc_state(pid) == want)
                        return true;
                ts_msleep(10);
        }
        return false;
}

static void check_signal(const tr_hierarchies *hs, const char *tag)
{
        tr_cgroup *cg = make_cg_tagged(hs, "sig", tag);
        if (!cg)
                return;
        pid_t a = start_in(cg, ts_sleep_forever, NULL);
        pid_t b = start_in(cg, ts_sleep_forever, NULL);
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGSTOP, &err), 0);
        CU_ASSERT_TRUE(wait_state(a, 'T'));
        CU_ASSERT_TRUE(wait_state(b, 'T'));
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGCONT, &err), 0);
        CU_ASSERT_TRUE(wait_state(a, 'S'));
        CU_ASSERT_TRUE(wait_state(b, 'S'));
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGTERM, &err), 0);
        int sa = ts_wait(a, 5000), sb = ts_wait(b, 5000);
        CU_ASSERT(sa >= 0 && WIFSIGNALED(sa) && WTERMSIG(sa) == SIGTERM);
        CU_ASSERT(sb >= 0 && WIFSIGNALED(sb) && WTERMSIG(sb) == SIGTERM);
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, 999, &err), -EINVAL);
        kill_destroy(cg);
}

/* Pid reuse between listing and signalling: the hook (run after the members are listed,
 * before any is signalled) kills member A, reaps it and starts a stranger outside the
 * cgroup with A's very pid (clone3 set_tid).  The signal must reach member B and never the
 * stranger.  Run where no freezer holds the family ("nofreezer" view) and on the host's v2
 * freezer (a frozen v2 member still dies of SIGKILL, so its pid can be freed there too). */
struct reuse_ctx {
        pid_t victim;
        pid_t stranger; /* > 0 once started; -errno when set_tid failed */
        bool done;
};

struct ts_clone_args {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
                set_tid_size, cgroup;
};

static pid_t fork_with_pid(pid_t want)
{
        pid_t tid = want;
        struct ts_clone_args a;
        memset(&a, 0, sizeof a);
        a.exit_signal = SIGCHLD;
        a.set_tid = (uint64_t) (uintptr_t) &tid;
        a.set_tid_size = 1;
        fflush(NULL);
        long r = syscall(SYS_clone3, &a, sizeof a);
        if (r == 0) {
                for (;;)
                        pause();
        }
        return r < 0 ? -errno : (pid_t) r;
}

static void reuse_hook(void *ud)
{
        struct reuse_ctx *c = ud;
        if (c->done)
                return;
        c->done = true;
        if (c->victim <= 1)
                return;
        kill(c->victim, SIGKILL); /* our own child */
        waitpid(c->victim, NULL, 0);
        c->stranger = fork_with_pid(c->victim);
}

static void check_signal_reuse(const tr_hierarchies *hs, const char *tag)
{
        tr_cgroup *cg = make_cg_tagged(hs, "sigreuse", tag);
        if (!cg)
                return;
        pid_t a = start_in(cg, ts_sleep_forever, NULL);
        pid_t b = start_in(cg, ts_sleep_forever, NULL);
        ts_msleep(50); /* the stranger's start time (10 ms ticks) must differ from A's */
        struct reuse_ctx ctx = { .victim = a };
        tr_cgroup_set_signal_hook(reuse_hook, &ctx);
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGTERM, &err), 0);
        tr_cgroup_set_signal_hook(NULL, NULL);
        CU_ASSERT_TRUE(ctx.done);
        int sb = ts_wait(b, 5000);
        CU_ASSERT(sb >= 0 && WIFSIGNALED(sb) && WTERMSIG(sb) == SIGTERM);
        if (ctx.stranger > 1) {
                CU_ASSERT_EQUAL(ctx.stranger, a);
                ts_msleep(50);
                CU_ASSERT_TRUE(ts_alive(ctx.stranger)); /* the reused pid was not signalled */
                CU_ASSERT_EQUAL(ts_wait(ctx.stranger, 0), -ETIMEDOUT);
                ts_kill_reap(ctx.stranger);
        } else {
                ts_skip("pid reuse", "%s: clone3 set_tid: %s", tag, strerror(-ctx.stranger));
        }
        kill_destroy(cg);
}

static int refusals(tr_cgroup *cg, bool destroy_too)
{
        tr_kill_result res;
        tr_freeze_state st;
        int bad = 0;
        if (tr_cgroup_kill(cg, SEC, &res, NULL) != -EPERM)
                bad |= 1;
        tr_kill_result_free(&res);
        if (tr_cgroup_freeze(cg, SEC, &st, NULL) != -EPERM)
                bad |= 2;
        if (tr_cgroup_thaw(cg, SEC, &st, NULL) != -EPERM)
                bad |= 4;
        if (tr_cgroup_signal(cg, SIGCONT, NULL) != -EPERM)
                bad |= 8;
        if (destroy_too && tr_cgroup_destroy(cg, SEC, NULL) != -EPERM)
                bad |= 16;
        return bad;
}

typedef struct self_arg {
        const tr_hierarchies *hs;
        const char *path;
} self_arg;

/* In a child: move ourselves into the cgroup, then every destructive op must refuse. */
static int run_self_check(void *arg)
{
        self_arg *sa = arg;
        tr_cgroup *cg = NULL;
        if (tr_cgroup_open(sa->hs, sa->path, TR_CG_MAY_ACT | TR_CG_OWNED, &cg, NULL) < 0)
                return 100;
        if (tr_cgroup_attach(cg, getpid(), NULL) < 0)
                return 101;
        int bad = refusals(cg, true);
        tr_cgroup_free(cg);
        return bad;
}

typedef struct anc_arg {
        const tr_hierarchies *hs;
        const char *parent_cg; /* A sits here */
        const char *child_cg;  /* B moves here */
} anc_arg;

static int run_anc_child(void *arg)
{
        anc_arg *aa = arg;
        tr_cgroup *mine = NULL, *theirs = NULL;
        if (tr_cgroup_open(aa->hs, aa->child_cg, TR_CG_MAY_ACT, &mine, NULL) < 0 ||
            tr_cgroup_attach(mine, getpid(), NULL) < 0)
                return 100;
        if (tr_cgroup_open(aa->hs, aa->parent_cg, TR_CG_MAY_ACT | TR_CG_OWNED, &theirs, NULL) < 0)
                return 101;
        int bad = refusals(theirs, false);
        tr_cgroup_free(theirs);
        tr_cgroup_free(mine);
        return bad;
}

/* A moves itself into parent_cg and forks B; B moves to child_cg: parent_cg no longer holds
 * B but holds its parent A, so B must refuse to kill/freeze/signal it. */
static int run_anc_parent(void *arg)
{
        anc_arg *aa = arg;
        tr_cgroup *cg = NULL;
        if (tr_cgroup_open(aa->hs, aa->parent_cg, TR_CG_MAY_ACT, &cg, NULL) < 0 ||
            tr_cgroup_attach(cg, getpid(), NULL) < 0)
                return 110;
        tr_cgroup_free(cg);
        pid_t b = ts_fork(run_anc_child, aa);
        if (b <= 1)
                return 111;
        int st = ts_wait(b, 20000);
        return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 112;
}

static void check_safety(const tr_hierarchies *hs, const char *tag)
{
        tr_error err = { 0 };
        /* hierarchy roots */
        _cleanup_cgroup_ tr_cgroup *root = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(hs, "/", TR_CG_MAY_ACT | TR_CG_OWNED, &root, &err), 0);
        CU_ASSERT_EQUAL(refusals(root, true), 0);
        CU_ASSERT_EQUAL(tr_cgroup_kill(root, SEC, &(tr_kill_result){ 0 }, &err), -EPERM);
        CU_ASSERT_EQUAL(err.code, EPERM);

        char name[64], path[PATH_MAX];
        snprintf(name, sizeof name, "safe-%s", tag);
        tr_cgroup *mine = make_cg(hs, name);
        if (!mine)
                return;
        ts_cgroup_path(path, sizeof path, name);
        /* without MAY_ACT */
        _cleanup_cgroup_ tr_cgroup *ro = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(hs, path, 0, &ro, &err), 0);
        CU_ASSERT_EQUAL(refusals(ro, true), 0);
        /* attach and write change the cgroup: refused too */
        pid_t outsider = ts_fork(ts_sleep_forever, NULL);
        CU_ASSERT_FATAL(outsider > 1);
        CU_ASSERT_EQUAL(tr_cgroup_attach(ro, outsider, &err), -EPERM);
        CU_ASSERT_EQUAL(err.code, EPERM);
        for (int i = 0; i < hs->n; i++) {
                if (tr_cgroup_dirfd(ro, i) < 0)
                        continue;
                char v[32];
                snprintf(v, sizeof v, "%d", (int) outsider);
                CU_ASSERT_EQUAL(tr_cgroup_write(ro, i, "cgroup.procs", v, &err), -EPERM);
        }
        _cleanup_pidset_ tr_pidset none = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_cgroup_members(ro, &none, &err), 0);
        CU_ASSERT_FALSE(tr_pidset_contains(&none, outsider));
        ts_kill_reap(outsider);
        tr_usage u; /* reading is fine */
        CU_ASSERT_EQUAL(tr_cgroup_usage(ro, &u, &err), 0);

        /* a cgroup holding the caller */
        self_arg sa = { hs, path };
        pid_t c = ts_fork(run_self_check, &sa);
        CU_ASSERT_FATAL(c > 1);
        int st = ts_wait(c, 20000);
        CU_ASSERT(st >= 0 && WIFEXITED(st));
        if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st))
                printf("\n    self-check child: status %d\n", WEXITSTATUS(st));
        CU_ASSERT_EQUAL(WEXITSTATUS(st), 0);

        /* a cgroup holding an ancestor process of the caller (its parent) */
        char aname[64], apath[PATH_MAX], bpath[PATH_MAX];
        snprintf(aname, sizeof aname, "safe-anc-%s", tag);
        tr_cgroup *acg = make_cg(hs, aname);
        snprintf(aname, sizeof aname, "safe-anc-b-%s", tag);
        tr_cgroup *bcg = make_cg(hs, aname);
        if (acg && bcg) {
                anc_arg aa = { hs, tr_cgroup_path(acg, 0), tr_cgroup_path(bcg, 0) };
                snprintf(apath, sizeof apath, "%s", aa.parent_cg);
                snprintf(bpath, sizeof bpath, "%s", aa.child_cg);
                aa.parent_cg = apath;
                aa.child_cg = bpath;
                pid_t a = ts_fork(run_anc_parent, &aa);
                CU_ASSERT_FATAL(a > 1);
                st = ts_wait(a, 30000);
                if (!(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0))
                        printf("\n    ancestor check: status 0x%x\n", st);
                CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        kill_destroy(acg);
        kill_destroy(bcg);

        /* bad paths */
        tr_cgroup *x = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open(hs, "relative", 0, &x, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_open(hs, "/a/../b", 0, &x, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_create(hs, "/x/..", &x, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_create(hs, "/", &x, &err), -EINVAL);
        ts_cgroup_path(path, sizeof path, "never-created");
        CU_ASSERT_EQUAL(tr_cgroup_open(hs, path, 0, &x, &err), -ENOENT);
        CU_ASSERT_PTR_NULL(x);
        kill_destroy(mine);
}


HOST_TEST(kill_escapers, "kill escapers")
HOST_TEST(kill_many, "kill many")
HOST_TEST(kill_timeout, "kill timeout")
HOST_TEST(signal, "signal")
HOST_TEST(safety, "safety")

static void host_signal_reuse(void)
{
        if (!root_and_base("signal with pid reuse (v2 freezer)"))
                return;
        /* the hook kills and reaps a member while signal holds the family frozen: a member
         * frozen by the v1 freezer cannot die, so the wait would never end (pure v1); the
         * "no freezer" view covers pid reuse there */
        if (ts_hierarchies()->v2 < 0) {
                ts_skip("signal with pid reuse (v2 freezer)", "no cgroup2 here, signal freezes with the v1 freezer");
                return;
        }
        check_signal_reuse(ts_hierarchies(), "host");
}

static void nofreezer_signal_reuse(void)
{
        if (!root_and_base("signal with pid reuse (no freezer)"))
                return;
        if (!nofreezer_hs()) {
                ts_skip("signal with pid reuse (no freezer)", "no v1 view without a freezer");
                return;
        }
        check_signal_reuse(nofreezer_hs(), "nofrz");
}

static void nofreezer_signal(void)
{
        if (!root_and_base("signal (no freezer)"))
                return;
        if (!nofreezer_hs()) {
                ts_skip("signal (no freezer)", "no v1 view without a freezer");
                return;
        }
        check_signal(nofreezer_hs(), "nofrz");
}

int main(void)
{
        CU_TestInfo host[] = {
                { "kill_escapers", host_kill_escapers },
                { "kill_many", host_kill_many },
                { "kill_timeout", host_kill_timeout },
                { "signal", host_signal },
                { "signal_reuse", host_signal_reuse },
                { "safety", host_safety },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo v1[] = {
                { "kill_escapers", v1_kill_escapers },
                { "kill_many", v1_kill_many },
                { "kill_timeout", v1_kill_timeout },
                { "signal", v1_signal },
                { "safety", v1_safety },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo nofrz[] = {
                { "signal", nofreezer_signal },
                { "signal_reuse", nofreezer_signal_reuse },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo extra[] = {
                { "cgroup-no-freezer-view", NULL, NULL, NULL, NULL, nofrz },
                CU_SUITE_INFO_NULL,
        };
        return cgt_run("cgroup-kill", host, v1, extra);
}
