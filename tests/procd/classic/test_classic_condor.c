/* test_classic_condor.c - a job's life as HTCondor drives it, over the classic protocol.
 *
 * The test process is the "master": it starts the daemon as ProcFamilyProxy does (argv
 * -A -L -R -S -C, stderr a pipe whose EOF is readiness) and is its watcher.  A "starter"
 * child registers itself from its own process with the master's client (as DaemonCore
 * children do), then forks the job: the job's child registers itself before exec
 * (REGISTER_SUBFAMILY + TRACK_FAMILY_VIA_ENVIRONMENT, with the starter's client), and the
 * exec'd job forks a child, double-forks a setsid sleeper and a setsid burner that exits.
 * Then: GET_USAGE exact (the exited orphan's CPU included), SUSPEND holds every member,
 * CONTINUE releases them, KILL leaves nothing, UNREGISTER removes the family's cgroup,
 * QUIT ends the daemon.  A second daemon checks that the death of the root family's
 * process (its launcher) ends it when no -P was given.
 *
 * The per-family cgroup asserts apply when the daemon moved the job into a cgroup of its
 * own at REGISTER; otherwise they are printed as not checked. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classic-client.h"
#include "classic-procs.h"
#include "harness.h"
#include "testsupport.h"
#include "trackers/cgroup.h"

#define JOB_BURN_MS 500
#define ORPHAN_BURN_MS 2500
#define PID_SNAPSHOT_INTERVAL 15

/* One line of the job's report: who, and (for the burners) their CPU time at the end. */
typedef struct job_record {
        char tag; /* 'J' the job, 'A' its child, 'C' the setsid sleeper, 'E' the burner */
        pid_t pid;
        long long cpu_usec;
} job_record;

static long long self_cpu_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (long long) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void report(int fd, char tag, long long cpu)
{
        job_record r = { .tag = tag, .pid = getpid(), .cpu_usec = cpu };
        if (write(fd, &r, sizeof r) != sizeof r)
                _exit(1);
}

/* The exec'd job. */
static int job_main(int fd)
{
        if (fork() == 0) {              /* A: a plain child */
                report(fd, 'A', 0);
                for (;;)
                        pause();
        }
        pid_t m1 = fork();
        if (m1 == 0) {                  /* double fork: C sleeps in its own session */
                if (fork() == 0) {
                        setsid();
                        report(fd, 'C', 0);
                        for (;;)
                                pause();
                }
                _exit(0);
        }
        pid_t m2 = fork();
        if (m2 == 0) {                  /* double fork: E burns in its own session, exits */
                if (fork() == 0) {
                        setsid();
                        cp_burn_cpu_ms(ORPHAN_BURN_MS);
                        report(fd, 'E', self_cpu_usec());
                        _exit(0);
                }
                _exit(0);
        }
        waitpid(m1, NULL, 0); /* the two middle processes */
        waitpid(m2, NULL, 0);
        cp_burn_cpu_ms(JOB_BURN_MS);
        report(fd, 'J', self_cpu_usec());
        for (;;)
                pause();
}

static cc_daemon D;
static struct tr_cgroup *service_cg; /* where our daemon runs, as under a service manager */
static char self_exe[4096];

static int suite_init(void)
{
        ssize_t k = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        if (k <= 0)
                return 1;
        self_exe[k] = '\0';
        /* the argv ProcFamilyProxy builds: -A, -L $(PROCD_LOG), -R $(MAX_PROCD_LOG),
         * -S $(PROCD_MAX_SNAPSHOT_INTERVAL), -C <condor uid> */
        static const char *const args[] = { "-L", "@LOG", "-R", "1000000", "-S", "60", "-C", "65534", NULL };
        if (!cc_daemon_is_condor())
                service_cg = cp_service_cgroup("condor");
        return cc_daemon_start_with(&D, args, service_cg ? cp_enter_cgroup : NULL, service_cg) < 0;
}

static int suite_clean(void)
{
        int st = cc_daemon_stop(&D);
        tr_cgroup_free(service_cg);
        service_cg = NULL;
        return !(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The starter: registered by itself (master's client), forks the job; the job's child
 * registers itself before exec with the starter's client, as DaemonCore's Create_Process
 * does; a registration failure is _exit(4) (ERRNO_REGISTRATION_FAILED).  The starter
 * reports the job's pid on `out`, then waits for the job. */
static _Noreturn void starter_main(const cc_client *master_client, int out, int report_fd, int go)
{
        cc_client mc = *master_client; /* inherited: the master's pid and serial */
        int r = cc_register(&mc, getpid(), getppid(), 60);
        cc_client sc;
        if (r != 0 || cc_open(&sc, mc.addr, 0, 0) < 0) /* the starter's own client */
                _exit(3);
        int errpipe[2];
        if (pipe2(errpipe, O_CLOEXEC) < 0)
                _exit(3);
        pid_t job = fork();
        if (job == 0) {
                close(errpipe[0]);
                pid_t me = getpid();
                char envid[CC_ENVID_SIZE];
                snprintf(envid, sizeof envid, "_CONDOR_ANCESTOR_%d=%d:%ld:%u", (int) getppid(), (int) me,
                         (long) time(NULL), 1234567u);
                const char *ids[] = { envid };
                uint8_t env[CC_PIDENVID_BYTES];
                cc_pidenvid(env, ids, 1);
                int e = cc_register(&sc, me, getppid(), PID_SNAPSHOT_INTERVAL);
                if (e == 0)
                        e = cc_track_env(&sc, me, env);
                if (e != 0) {
                        if (write(errpipe[1], &e, sizeof e) != sizeof e)
                                _exit(4);
                        cc_simple(&sc, CC_UNREGISTER_FAMILY, me);
                        _exit(4);
                }
                char fdarg[16];
                snprintf(fdarg, sizeof fdarg, "%d", report_fd);
                setenv("_CONDOR_ANCESTOR_TEST", envid, 1);
                execl(self_exe, self_exe, "--job", fdarg, (char *) NULL);
                e = -errno;
                if (write(errpipe[1], &e, sizeof e) != sizeof e)
                        _exit(4);
                _exit(4);
        }
        close(errpipe[1]);
        int e = 0;
        pid_t answer = job;
        if (read(errpipe[0], &e, sizeof e) == sizeof e) /* EOF: the exec happened */
                answer = -abs(e ? e : 1);
        if (write(out, &answer, sizeof answer) != sizeof answer)
                _exit(1);
        int st;
        waitpid(job, &st, 0);
        char b;
        (void) !read(go, &b, 1); /* until the master closes it */
        _exit(0);
}

static bool cgroup_exists(const char *v2path)
{
        char p[1200];
        struct stat st;
        snprintf(p, sizeof p, "/sys/fs/cgroup/unified%s", v2path);
        if (stat("/sys/fs/cgroup/unified/cgroup.procs", &st) == 0)
                return stat(p, &st) == 0;
        snprintf(p, sizeof p, "/sys/fs/cgroup%s", v2path);
        return stat(p, &st) == 0;
}

static void not_checked(const char *what)
{
        printf("  NOT CHECKED (the daemon gave the family no cgroup of its own): %s\n", what);
}

static void test_job_life(void)
{
        cc_client master;
        CU_ASSERT_FATAL(cc_open(&master, D.addr, 0, 0) == 0);
        int rep[2], sp[2], go[2];
        CU_ASSERT_FATAL(pipe(rep) == 0 && pipe2(sp, O_CLOEXEC) == 0 && pipe2(go, O_CLOEXEC) == 0);
        fflush(NULL);
        pid_t starter = fork();
        CU_ASSERT_FATAL(starter >= 0);
        if (starter == 0) {
                close(rep[0]);
                close(sp[0]);
                close(go[1]);
                starter_main(&master, sp[1], rep[1], go[0]);
        }
        close(rep[1]);
        close(sp[1]);
        close(go[0]);
        pid_t job = -1;
        CU_ASSERT(read(sp[0], &job, sizeof job) == sizeof job);
        close(sp[0]);
        if (job <= 1) {
                fprintf(stderr, "job registration failed: %d\n", (int) job);
                CU_FAIL("REGISTER_SUBFAMILY + TRACK_FAMILY_VIA_ENVIRONMENT from the child before exec");
                close(go[1]);
                ts_kill_reap(starter);
                cc_close(&master);
                return;
        }
        /* the job's report: A, C, E (after its burn) and J (after its burn) */
        job_record recs[4];
        pid_t a = 0, c = 0, e = 0;
        long long cpu_usec = 0, orphan_usec = 0;
        for (int i = 0; i < 4; i++) {
                if (read(rep[0], &recs[i], sizeof recs[i]) != sizeof recs[i]) {
                        CU_FAIL("the job's report");
                        recs[i].tag = '?';
                        break;
                }
                switch (recs[i].tag) {
                case 'A': a = recs[i].pid; break;
                case 'C': c = recs[i].pid; break;
                case 'E': e = recs[i].pid; orphan_usec = recs[i].cpu_usec; cpu_usec += orphan_usec; break;
                case 'J': CU_ASSERT_EQUAL(recs[i].pid, job); cpu_usec += recs[i].cpu_usec; break;
                }
        }
        close(rep[0]);
        CU_ASSERT(a > 1 && c > 1 && e > 1);
        if (a <= 1 || c <= 1 || e <= 1) {
                pid_t all[] = { c, a, job };
                for (size_t i = 0; i < 3; i++)
                        if (all[i] > 1)
                                kill(all[i], SIGKILL);
                close(go[1]);
                ts_kill_reap(starter);
                ts_reap_orphans(2000);
                cc_close(&master);
                return;
        }
        CU_ASSERT(ph_wait_gone(e, 60000));

        char master_cg[1024] = "", job_cg[1024] = "";
        cp_v2_cgroup(getpid(), master_cg, sizeof master_cg);
        cp_v2_cgroup(job, job_cg, sizeof job_cg);
        bool own_cgroup = job_cg[0] && strcmp(job_cg, master_cg) != 0;
        printf("  master cgroup %s, job cgroup %s\n", master_cg, job_cg);

        /* DUMP: master's family, the starter's below it, the job's below that */
        cc_dump_family *f = NULL;
        size_t n = 0;
        CU_ASSERT_EQUAL(cc_dump(&master, 0, &f, &n), 0);
        const cc_dump_family *fs = cc_dump_find(f, n, starter), *fj = cc_dump_find(f, n, job);
        CU_ASSERT(n >= 3 && f[0].root == getpid() && f[0].parent_root == 0);
        CU_ASSERT(fs && fs->parent_root == getpid() && fs->watcher == getpid());
        CU_ASSERT(fj && fj->parent_root == starter && fj->watcher == starter);
        cc_dump_free(f, n);

        /* GET_USAGE: every live member, and the CPU of the exited orphan */
        CU_ASSERT_EQUAL(cc_snapshot(&master), 0);
        cc_usage u;
        CU_ASSERT_EQUAL(cc_get_usage(&master, job, &u), 0);
        long long reported = u.user_cpu_sec + u.sys_cpu_sec;
        printf("  GET_USAGE(job): %lld s CPU (burned %.2f s, %.2f s of it by the exited setsid orphan), %d procs\n",
               reported, cpu_usec / 1e6, orphan_usec / 1e6, u.num_procs);
        if (own_cgroup) {
                CU_ASSERT_EQUAL(u.num_procs, 3); /* J, A, C */
                /* whole seconds, user and system each rounded down */
                CU_ASSERT(reported >= cpu_usec / 1000000 - 1);
                CU_ASSERT(reported <= cpu_usec / 1000000 + 1);
                /* the starter's family holds the job's: its usage includes it */
                cc_usage su;
                CU_ASSERT_EQUAL(cc_get_usage(&master, starter, &su), 0);
                CU_ASSERT(su.num_procs >= u.num_procs + 1);
                CU_ASSERT(su.user_cpu_sec + su.sys_cpu_sec >= reported);
        } else {
                CU_ASSERT(u.num_procs >= 2); /* J and A at least */
                not_checked("num_procs includes the setsid grandchild; the exited orphan's CPU is counted");
        }

        /* SUSPEND holds every member, CONTINUE releases them */
        CU_ASSERT_EQUAL(cc_simple(&master, CC_SUSPEND_FAMILY, job), 0);
        CU_ASSERT(cp_held(job));
        CU_ASSERT(cp_held(a));
        if (own_cgroup) {
                CU_ASSERT(cp_held(c));
        } else {
                not_checked("SUSPEND holds the setsid grandchild");
        }
        CU_ASSERT_EQUAL(cc_simple(&master, CC_CONTINUE_FAMILY, job), 0);
        for (int i = 0; i < 300 && (cp_held(job) || cp_held(a) || cp_held(c)); i++)
                usleep(10000);
        CU_ASSERT_FALSE(cp_held(job));
        CU_ASSERT_FALSE(cp_held(a));
        CU_ASSERT_FALSE(cp_held(c));

        /* KILL leaves nothing (zombies awaiting their reaper count as gone) */
        CU_ASSERT_EQUAL(cc_simple(&master, CC_KILL_FAMILY, job), 0);
        if (own_cgroup) {
                CU_ASSERT_FALSE(ts_alive(job));
                CU_ASSERT_FALSE(ts_alive(a));
                CU_ASSERT_FALSE(ts_alive(c));
        } else {
                CU_ASSERT(ph_wait_gone(job, 30000));
                CU_ASSERT(ph_wait_gone(a, 30000));
                not_checked("KILL reaches the setsid grandchild");
        }
        /* the family stays registered until UNREGISTER, which removes its cgroup */
        CU_ASSERT_EQUAL(cc_get_usage(&master, job, &u), 0);
        CU_ASSERT_EQUAL(cc_simple(&master, CC_UNREGISTER_FAMILY, job), 0);
        if (own_cgroup) {
                CU_ASSERT_FALSE(cgroup_exists(job_cg));
        } else {
                not_checked("UNREGISTER removes the family's cgroup");
        }
        CU_ASSERT_EQUAL(cc_simple(&master, CC_UNREGISTER_FAMILY, job), CC_FAMILY_NOT_FOUND);

        close(go[1]); /* the starter may go */
        int st = ts_wait(starter, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (st < 0)
                ts_kill_reap(starter);
        CU_ASSERT_EQUAL(cc_simple(&master, CC_UNREGISTER_FAMILY, starter), 0);
        if (c > 1 && ts_alive(c))
                kill(c, SIGKILL);
        ts_reap_orphans(2000);
        cc_close(&master);
}

/* A registration that fails in the child before exec makes it _exit(4), as DaemonCore's
 * child does: here the root pid is already a family root. */
static void test_registration_failure(void)
{
        cc_client master;
        CU_ASSERT_FATAL(cc_open(&master, D.addr, 0, 0) == 0);
        pid_t child = fork();
        if (child == 0) {
                cc_client mc = master;
                if (cc_register(&mc, getpid(), getppid(), 60) != 0)
                        _exit(3);
                int r = cc_register(&mc, getpid(), getppid(), 60);
                cc_simple(&mc, CC_UNREGISTER_FAMILY, getpid());
                _exit(r == CC_ALREADY_REGISTERED ? 4 : 5);
        }
        int st = ts_wait(child, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 4);
        cc_close(&master);
}

/* No -P: the daemon's parent is the root family and its watcher; when it dies the daemon
 * exits (condor_procd at its next snapshot, here -S 1). */
static void test_exit_with_launcher(void)
{
        int p[2];
        CU_ASSERT_FATAL(pipe(p) == 0);
        fflush(NULL);
        pid_t launcher = fork();
        if (launcher == 0) {
                close(p[0]);
                static const char *const args[] = { "-S", "1", NULL };
                cc_daemon d;
                if (cc_daemon_start(&d, args) < 0)
                        _exit(1);
                if (write(p[1], &d, sizeof d) != sizeof d)
                        _exit(1);
                _exit(0); /* the master dies; the daemon is now an orphan of the test */
        }
        close(p[1]);
        cc_daemon d;
        bool got = read(p[0], &d, sizeof d) == sizeof d;
        close(p[0]);
        int st = ts_wait(launcher, 30000);
        CU_ASSERT_FATAL(got && st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        int dst = ts_wait(d.pid, 60000); /* reaped here: the test is the subreaper */
        CU_ASSERT(dst >= 0);
        if (dst < 0)
                ts_kill_reap(d.pid);
        cc_daemon_cleanup_dir(&d);
}

static void test_quit(void)
{
        cc_client master;
        CU_ASSERT_FATAL(cc_open(&master, D.addr, 0, 0) == 0);
        CU_ASSERT_EQUAL(cc_quit(&master), 0);
        cc_close(&master);
        int st = ts_wait(D.pid, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (st < 0)
                ts_kill_reap(D.pid);
        D.pid = 0;
        CU_ASSERT(access(D.addr, F_OK) < 0);
        cc_daemon_cleanup_dir(&D); /* its log */
        /* restart so that suite_clean has a daemon to stop */
        static const char *const args[] = { "-S", "60", NULL };
        CU_ASSERT_EQUAL(cc_daemon_start(&D, args), 0);
}

static CU_TestInfo tests[] = {
        { "a job's life (register before exec, usage, suspend, kill, unregister)", test_job_life },
        { "registration failure: child exits 4", test_registration_failure },
        { "daemon exits when its launcher dies (no -P)", test_exit_with_launcher },
        { "QUIT ends the daemon and removes the FIFOs", test_quit },
        CU_TEST_INFO_NULL,
};


int main(int argc, char **argv)
{
        if (argc == 3 && strcmp(argv[1], "--job") == 0)
                return job_main(atoi(argv[2]));
        signal(SIGPIPE, SIG_IGN);
        static const char *const args[] = { "-S", "60", NULL };
        int skip = cc_can_run("HTCondor-shaped test", args);
        return skip ? skip : ts_run_suite("HTCondor-shaped job life", suite_init, suite_clean, tests);
}
