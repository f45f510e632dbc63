/* bench-node.c - a whole execute node, HTCondor-shaped, against procd and (when given)
 * HTCondor's condor_procd: both daemons' CPU for the same load (run by hand as root, or by
 * `make bench`; not a test).
 *
 *   bench-node [--short] [--seconds S] [--jobs N] [--background N] [--poll S]
 *              [--condor-procd PATH]      (or $CONDOR_PROCD)
 *
 * For each daemon in turn: N background sleepers (default 5,000; --short 1,000), N job
 * slots (default 20), each job a process that forks a short-lived child every 500 ms
 * (churn inside the family), registered through the classic FIFO (REGISTER_SUBFAMILY, this
 * program as the watcher, as a starter), every job polled (GET_USAGE) every S seconds
 * (default 5), each job ending after 10-30 s (KILL_FAMILY, UNREGISTER_FAMILY) and replaced
 * at once, for S seconds (default 220; --short 40).  procd runs in a cgroup of its own
 * (every family gets a cgroup), condor_procd as condor_master starts it.  Prints each
 * daemon's server CPU over the run (schedstat of every thread, utime+stime beside it) in
 * seconds and per poll (the run's CPU over its polls: churn included), the calls made and
 * failed, the load average beside each figure (warned above 2: then the CPU figures are not
 * figures), and condor_procd's CPU over procd's.  Everything it
 * started is killed by pid and every cgroup it made is removed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "classic-client.h"
#include "trackers/cgroup.h"
#include "trackers/util.h"

typedef struct opts {
        int seconds, jobs, background, poll_sec;
        const char *condor;
} opts;

typedef struct job {
        pid_t root;
        uint64_t end_usec;
} job;

/* A job: forks a child that exits at once every 500 ms, until killed. */
static pid_t job_process(void)
{
        pid_t pid = fork();
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                signal(SIGCHLD, SIG_IGN); /* the churned children reap themselves */
                for (;;) {
                        if (fork() == 0)
                                _exit(0);
                        usleep(500000);
                }
        }
        return pid;
}

static uint64_t job_life_usec(unsigned *seed) { return (10 + (uint64_t) (rand_r(seed) % 21)) * 1000000u; }

static int start_job(cc_client *cc, job *j, uint64_t now, unsigned *seed, int *failed)
{
        j->root = job_process();
        if (j->root < 0)
                return -1;
        j->end_usec = now + job_life_usec(seed);
        *failed += cc_register(cc, j->root, getpid(), -1) != 0;
        return 0;
}

static void end_job(cc_client *cc, job *j, int *failed)
{
        *failed += cc_simple(cc, CC_KILL_FAMILY, j->root) != 0;
        ts_kill_reap(j->root); /* as the starter reaps its job */
        *failed += cc_simple(cc, CC_UNREGISTER_FAMILY, j->root) != 0;
        j->root = 0;
}

/* One daemon under the load: 0, or 1 when it could not run. */
static int run_one(const opts *o, const char *exe, bool condor, const tr_hierarchies *hs, double *cpu_sec)
{
        setenv("PROCD_CLASSIC_DAEMON", exe, 1);
        char base[64], svc[96];
        snprintf(base, sizeof base, "/procd-bench-node.%d", (int) getpid());
        snprintf(svc, sizeof svc, "%s/procd", base);
        tr_cgroup *svc_cg = NULL;
        tr_error err = { 0 };
        if (!condor && tr_cgroup_create(hs, svc, &svc_cg, &err) < 0) {
                fprintf(stderr, "bench-node: cgroup %s: %s\n", svc, err.msg);
                return 1;
        }
        pid_t *bg = calloc((size_t) o->background, sizeof *bg);
        job *jobs = calloc((size_t) o->jobs, sizeof *jobs);
        int n_bg = 0, rc = 1, failed = 0, calls = 0, polls = 0, ended = 0;
        for (; bg && n_bg < o->background; n_bg++)
                if ((bg[n_bg] = ts_sleeper()) < 0)
                        break;
        const char *const args[] = { "-S", "60", NULL };
        cc_daemon d;
        cc_client cc;
        if (!jobs || cc_daemon_start_with(&d, args, condor ? NULL : bench_enter_cgroup, svc_cg) < 0) {
                fprintf(stderr, "bench-node: %s did not start\n", exe);
                goto out;
        }
        if (cc_open(&cc, d.addr, 0, 0) < 0) {
                fprintf(stderr, "bench-node: cannot connect to %s\n", exe);
                goto stop;
        }
        unsigned seed = 42;
        double load0 = bench_loadavg();
        uint64_t t0 = tr_now_usec(), ticks0, ns0;
        bench_proc_cpu(d.pid, &ticks0, &ns0);
        for (int i = 0; i < o->jobs; i++) {
                start_job(&cc, &jobs[i], t0, &seed, &failed);
                calls++;
        }
        uint64_t next_poll = t0, end = t0 + (uint64_t) o->seconds * 1000000u;
        for (uint64_t now = t0; now < end; now = tr_now_usec()) {
                for (int i = 0; i < o->jobs; i++)
                        if (jobs[i].root > 0 && now >= jobs[i].end_usec) {
                                end_job(&cc, &jobs[i], &failed);
                                start_job(&cc, &jobs[i], now, &seed, &failed);
                                calls += 3;
                                ended++;
                        }
                if (now >= next_poll) {
                        cc_usage cu;
                        for (int i = 0; i < o->jobs; i++, calls++)
                                failed += cc_get_usage(&cc, jobs[i].root, &cu) != 0;
                        polls++;
                        next_poll += (uint64_t) o->poll_sec * 1000000u;
                }
                usleep(100000);
        }
        uint64_t ticks1, ns1;
        bench_proc_cpu(d.pid, &ticks1, &ns1);
        double secs = (double) (tr_now_usec() - t0) / 1e6, cpu = (double) (ns1 - ns0) / 1e9;
        char load[96];
        const char *name = condor ? "condor_procd" : "procd";
        printf("%s: %.0f s, %d jobs (%d ended and replaced), %d polls of every job, %d calls (%d failed), %d "
               "background processes (load %.2f at the start)\n",
               name, secs, o->jobs, ended, polls, calls, failed, o->background, load0);
        printf("  %-12s server CPU %8.3f s (schedstat; utime+stime %.2f s)  %s\n", name, cpu,
               (double) (ticks1 - ticks0) / (double) sysconf(_SC_CLK_TCK), bench_load_note(load, sizeof load));
        printf("  %-12s server CPU %8.2f ms per poll (the run's CPU over its %d polls of %d jobs, churn included)  %s\n",
               name, polls ? cpu * 1e3 / polls : 0.0, polls, o->jobs, bench_load_note(load, sizeof load));
        fflush(stdout);
        *cpu_sec = cpu;
        for (int i = 0; i < o->jobs; i++)
                if (jobs[i].root > 0)
                        end_job(&cc, &jobs[i], &failed);
        rc = 0;
        cc_close(&cc);
stop:
        cc_daemon_stop(&d);
out:
        for (int i = 0; jobs && i < o->jobs; i++)
                ts_kill_reap(jobs[i].root);
        for (int i = 0; i < n_bg; i++)
                ts_kill_reap(bg[i]);
        free(bg);
        free(jobs);
        if (svc_cg) {
                tr_cgroup *bcg = NULL;
                if (tr_cgroup_open(hs, base, TR_CG_MAY_ACT | TR_CG_OWNED, &bcg, NULL) >= 0) {
                        tr_cgroup_destroy(bcg, 5000000, NULL);
                        tr_cgroup_free(bcg);
                }
                tr_cgroup_free(svc_cg);
        }
        return rc;
}

int main(int argc, char **argv)
{
        opts o = { .seconds = 220, .jobs = 20, .background = 5000, .poll_sec = 5, .condor = getenv("CONDOR_PROCD") };
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--short")) {
                        o.seconds = 40;
                        o.background = 1000;
                } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
                        o.seconds = atoi(argv[++i]);
                } else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
                        o.jobs = atoi(argv[++i]);
                } else if (!strcmp(argv[i], "--background") && i + 1 < argc) {
                        o.background = atoi(argv[++i]);
                } else if (!strcmp(argv[i], "--poll") && i + 1 < argc) {
                        o.poll_sec = atoi(argv[++i]);
                } else if (!strcmp(argv[i], "--condor-procd") && i + 1 < argc) {
                        o.condor = argv[++i];
                } else {
                        fprintf(stderr, "usage: bench-node [--short] [--seconds S] [--jobs N] [--background N] [--poll S] "
                                        "[--condor-procd PATH]\n");
                        return 2;
                }
        }
        if (o.jobs < 1 || o.seconds < 1 || o.poll_sec < 1 || o.background < 0) {
                fprintf(stderr, "bench-node: bad arguments\n");
                return 2;
        }
        tr_hierarchies hs;
        int setup = bench_daemon_setup("bench-node", &hs);
        if (setup)
                return setup;
        printf("bench-node: %d jobs polled every %d s, each replaced after 10-30 s, %d background processes, %d s "
               "per daemon\n",
               o.jobs, o.poll_sec, o.background, o.seconds);
        fflush(stdout);
        double procd_cpu = 0, condor_cpu = 0;
        int rc = run_one(&o, cc_daemon_exe(), false, &hs, &procd_cpu);
        if (o.condor && *o.condor) {
                rc |= run_one(&o, o.condor, true, &hs, &condor_cpu);
                char load[96];
                if (!rc && procd_cpu > 0)
                        printf("condor_procd / procd server CPU: %.1f  %s\n", condor_cpu / procd_cpu,
                               bench_load_note(load, sizeof load));
        } else {
                printf("condor_procd: not run (give --condor-procd PATH or CONDOR_PROCD)\n");
        }
        return rc;
}
