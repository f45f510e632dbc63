/* test_cgroup_kill.c - signal, kill and populated (cgroup-kill.c): escapers killed,
 * hundreds of sleepers, the bound with a member held frozen elsewhere, signals without a
 * freezer and across pid reuse (integration, root; see cgtest.h).  The refusals of the
 * safety gate are test_cgroup_gate.c's. */
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


HOST_TEST(kill_escapers, "kill escapers")
HOST_TEST(kill_many, "kill many")
HOST_TEST(kill_timeout, "kill timeout")
HOST_TEST(signal, "signal")

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
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo v1[] = {
                { "kill_escapers", v1_kill_escapers },
                { "kill_many", v1_kill_many },
                { "kill_timeout", v1_kill_timeout },
                { "signal", v1_signal },
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
