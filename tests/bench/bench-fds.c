/* bench-fds.c - procd's open files and memory per family, and its answer at the fd limit
 * (run by hand as root, or by `make bench`; not a test).
 *
 *   bench-fds [--families N] [--short]
 *
 * Starts build/procd/procd in a cgroup of its own under /procd-bench-fds.<pid> (so that
 * every family gets a cgroup) under an fd limit of 2 per family (20,000 for 10,000
 * families, the shape; set before its start, so it sizes its awake set by it), N
 * families (default 10,000; --short 1,000) of one sleeper each, registered through the
 * classic FIFO with this program as their watcher; then polls each twice (GET_USAGE), acts
 * on the first 1,000 (SUSPEND_FAMILY, CONTINUE_FAMILY, SIGNAL_PROCESS) and DUMPs them all.
 * Reports the daemon's open fds (/proc/PID/fd, by kind: pidfds, cgroup files, other) and
 * VmRSS after each step, per family, each beside its target (issue 20: at most 3 fds per
 * family at rest, whatever was asked of it; RSS at 10,000 polled families at most 40 MB).
 * Then lowers the daemon's fd limit (prlimit) to what it holds plus a few and registers
 * until REGISTER fails: the answer must be UNEXPECTED (15), not a number that blames the
 * process or the watcher, and procd's log must say "out of file descriptors" with the
 * errno (the lines are printed).  Exit status 0 only when every target is met.  Counts,
 * not times: valid under load too (the load average is printed all the same).
 * Everything it started is killed by pid and every cgroup it made is removed.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "benchutil.h"
#include "classic-client.h"
#include "trackers/cgroup.h"
#include "trackers/util.h"

#define LIMIT_SLACK 6   /* fds the daemon may still open once its limit is lowered */
#define LIMIT_TRIES 200 /* REGISTERs tried at the lowered limit */
#define ACTED 1000      /* families suspended, continued and signalled */

typedef struct fd_kinds {
        long all, pidfds, cgroup, other;
} fd_kinds;

/* The daemon's open fds, by what they point at. */
static fd_kinds count_fds(pid_t pid)
{
        fd_kinds k = { -1, 0, 0, 0 };
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd", (int) pid);
        DIR *d = opendir(path);
        if (!d)
                return k;
        k.all = 0;
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_name[0] == '.')
                        continue;
                char link[64], target[256];
                snprintf(link, sizeof link, "%s/%s", path, e->d_name);
                ssize_t len = readlink(link, target, sizeof target - 1);
                target[len > 0 ? len : 0] = '\0';
                k.all++;
                if (strstr(target, "pidfd"))
                        k.pidfds++;
                else if (!strncmp(target, "/sys/fs/cgroup", 14))
                        k.cgroup++;
                else
                        k.other++;
        }
        closedir(d);
        return k;
}

static long rss_kb(pid_t pid)
{
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        FILE *f = fopen(path, "re");
        long kb = -1;
        while (f && fgets(line, sizeof line, f))
                if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
                        break;
        if (f)
                fclose(f);
        return kb;
}

/* One line of figures; returns the fds per family above fds0 (0 for n == 0). */
static double mark(const char *what, pid_t pid, long fds0, long rss0, int n)
{
        fd_kinds k = count_fds(pid);
        long rss = rss_kb(pid);
        double per = n ? (double) (k.all - fds0) / n : 0.0;
        printf("%-13s %6d families  fds %6ld (%4.2f per family; pidfds %ld, cgroup files %ld, other %ld)  RSS %6.1f MB "
               "(%5.2f kB per family)  load %.2f\n",
               what, n, k.all, per, k.pidfds, k.cgroup, k.other, (double) rss / 1024.0,
               n ? (double) (rss - rss0) / n : 0.0, bench_loadavg());
        fflush(stdout);
        return per;
}

static bool target(const char *what, double value, double most, const char *unit)
{
        bool met = value <= most;
        printf("target: %-30s %6.2f%s%s  (at most %g%s%s) %s\n", what, value, *unit ? " " : "", unit, most,
               *unit ? " " : "", unit, met ? "MET" : "MISSED");
        return met;
}

/* Prints procd's log lines about its fds; true when one says it is out of file descriptors
 * and names the errno. */
static bool log_names_limit(const cc_daemon *d)
{
        char path[128], line[1024];
        snprintf(path, sizeof path, "%s/procd.log", d->dir);
        FILE *f = fopen(path, "re");
        bool found = false;
        int shown = 0;
        while (f && fgets(line, sizeof line, f)) {
                bool limit = strstr(line, "out of file descriptors") && strstr(line, "errno");
                found = found || limit;
                if ((limit || strstr(line, "Too many open files") || strstr(line, "keep their files open")) &&
                    shown++ < 6)
                        printf("  procd log: %s", line);
        }
        if (f)
                fclose(f);
        return found;
}

static const char *status_name(int status)
{
        switch (status) {
        case CC_SUCCESS:
                return "SUCCESS: the limit was never reached";
        case CC_BAD_WATCHER_PID:
                return "BAD_WATCHER_PID: misleading";
        case CC_PROCESS_NOT_FAMILY:
                return "PROCESS_NOT_FAMILY: blames the process";
        case CC_UNEXPECTED:
                return "UNEXPECTED: HTCondor's client logs \"Unexpected return code\"";
        default:
                return status < 0 ? "no answer" : "another error";
        }
}

int main(int argc, char **argv)
{
        int families = 10000;
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--families") && i + 1 < argc)
                        families = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--short"))
                        families = 1000;
                else {
                        fprintf(stderr, "usage: bench-fds [--families N] [--short]\n");
                        return 2;
                }
        }
        tr_hierarchies hs;
        int setup = bench_daemon_setup("bench-fds", &hs);
        if (setup)
                return setup;
        char base[64], svc[96];
        snprintf(base, sizeof base, "/procd-bench-fds.%d", (int) getpid());
        snprintf(svc, sizeof svc, "%s/procd", base);
        tr_cgroup *svc_cg = NULL;
        tr_error err = { 0 };
        if (tr_cgroup_create(&hs, svc, &svc_cg, &err) < 0) {
                fprintf(stderr, "bench-fds: cgroup %s: %s\n", svc, err.msg);
                return 1;
        }
        int total = families + LIMIT_TRIES;
        pid_t *roots = calloc((size_t) total, sizeof *roots);
        int n = 0, rc = 1;
        for (; roots && n < total; n++)
                if ((roots[n] = ts_sleeper()) < 0)
                        break;
        struct rlimit rl = { 0 };
        getrlimit(RLIMIT_NOFILE, &rl);
        printf("bench-fds: %s, %d families (%d sleepers made)\n", cc_daemon_exe(), families, n);
        /* the shape: 10,000 families under a 20,000-fd limit, 2 fds per family; the
         * daemon inherits it, so it sizes its awake set (cgroup-budget.c) by it at start */
        int limit = families * 2 > families + 256 ? families * 2 : families + 256; /* a floor for small runs */
        struct rlimit two = { (rlim_t) limit, (rlim_t) limit };
        const char *const args[] = { "-S", "60", "-L", "@LOG", NULL };
        cc_daemon d;
        cc_client cc;
        if (n < total) {
                fprintf(stderr, "bench-fds: too few processes (%d of %d)\n", n, total);
                goto out;
        }
        if (setrlimit(RLIMIT_NOFILE, &two) < 0) {
                fprintf(stderr, "bench-fds: fd limit %d: %s (raising a hard limit needs CAP_SYS_RESOURCE)\n", limit,
                        strerror(errno));
                goto out;
        }
        int started = cc_daemon_start_with(&d, args, bench_enter_cgroup, svc_cg);
        (void) setrlimit(RLIMIT_NOFILE, &rl); /* ours back, where CAP_SYS_RESOURCE allows */
        if (started < 0) {
                fprintf(stderr, "bench-fds: the daemon did not start: %s\n", d.errtext);
                goto out;
        }
        printf("daemon fd limit %d from its start (2 per family, at least 256 more than the families)\n", limit);
        if (cc_open(&cc, d.addr, 0, 0) < 0) {
                fprintf(stderr, "bench-fds: cannot connect\n");
                goto stop;
        }
        long fds0 = count_fds(d.pid).all, rss0 = rss_kb(d.pid);
        mark("started", d.pid, fds0, rss0, 0);
        int failed = 0, first_error = 0;
        for (int i = 0; i < families; i++) {
                int k = cc_register(&cc, roots[i], getpid(), -1);
                if (k != 0 && !failed++)
                        first_error = k;
        }
        double per_registered = mark("registered", d.pid, fds0, rss0, families);
        cc_usage cu;
        for (int i = 0; i < families; i++) {
                int k = cc_get_usage(&cc, roots[i], &cu);
                if (k != 0 && !failed++)
                        first_error = k;
        }
        mark("polled once", d.pid, fds0, rss0, families);
        for (int i = 0; i < families; i++) {
                int k = cc_get_usage(&cc, roots[i], &cu);
                if (k != 0 && !failed++)
                        first_error = k;
        }
        double per_polled = mark("polled twice", d.pid, fds0, rss0, families);
        double rss_mb = rss_kb(d.pid) / 1024.0;
        /* the other requests a starter makes of a family (of the first ACTED, several times
         * the awake set: each SUSPEND and CONTINUE saves the state file, whose size grows
         * with the families), then a DUMP of them all */
        int acted = families < ACTED ? families : ACTED;
        uint64_t t_act = tr_now_usec();
        for (int i = 0; i < acted; i++) {
                int k = cc_simple(&cc, CC_SUSPEND_FAMILY, roots[i]);
                k = k ? k : cc_simple(&cc, CC_CONTINUE_FAMILY, roots[i]);
                k = k ? k : cc_signal(&cc, roots[i], SIGCONT);
                if (k != 0 && !failed++)
                        first_error = k;
        }
        cc_dump_family *dump = NULL;
        size_t dumped = 0;
        int k = cc_dump(&cc, 0, &dump, &dumped); /* every family's members */
        if (k != 0 && !failed++)
                first_error = k;
        cc_dump_free(dump, dumped);
        printf("acted on: SUSPEND_FAMILY, CONTINUE_FAMILY and SIGNAL_PROCESS of %d families, then one DUMP of all (%.1f s)\n",
               acted, (double) (tr_now_usec() - t_act) / 1e6);
        double per_acted = mark("acted on", d.pid, fds0, rss0, families);
        bool met = target("fds per family, registered", per_registered, 3, "");
        met &= target("fds per family, polled", per_polled, 3, "");
        met &= target("fds per family, acted on", per_acted, 3, "");
        if (families >= 10000)
                met &= target("RSS at 10,000 polled families", rss_mb, 40, "MB");
        else
                printf("target: RSS at most 40 MB applies at 10,000 polled families (this run: %d, %.1f MB)\n", families,
                       rss_mb);
        if (failed)
                printf("bench-fds: %d calls failed (first error %d)\n", failed, first_error);

        /* the fd limit: what it holds now and a few more */
        long held = count_fds(d.pid).all;
        rlim_t lowered = (rlim_t) (held + LIMIT_SLACK) < two.rlim_max ? (rlim_t) (held + LIMIT_SLACK) : two.rlim_max;
        struct rlimit low = { lowered, lowered };
        int status = 0, tried = 0;
        if (prlimit(d.pid, RLIMIT_NOFILE, &low, NULL) < 0) {
                fprintf(stderr, "bench-fds: prlimit: %s\n", strerror(errno));
                met = false;
        } else {
                printf("daemon fd limit lowered to %llu (what it holds, %ld, and up to %d more)\n",
                       (unsigned long long) lowered, held, LIMIT_SLACK);
                for (int i = families; i < total && status == 0; i++, tried++)
                        status = cc_register(&cc, roots[i], getpid(), -1);
                bool logged = log_names_limit(&d);
                bool clear = status == CC_UNEXPECTED; /* not an error that blames the caller */
                printf("target: at the fd limit, a clear error with its errno, logged: REGISTER %d failed with error %d "
                       "(%s), %s %s\n",
                       tried, status, status_name(status), logged ? "logged with its errno" : "NOT logged with its errno",
                       clear && logged ? "MET" : "MISSED");
                met &= clear && logged;
        }
        rc = !failed && met ? 0 : 1;
stop:
        cc_close(&cc);
        cc_daemon_stop(&d);
out:
        for (int i = 0; i < n; i++)
                ts_kill_reap(roots[i]);
        free(roots);
        tr_cgroup *bcg = NULL;
        if (tr_cgroup_open(&hs, base, TR_CG_MAY_ACT | TR_CG_OWNED, &bcg, NULL) >= 0) {
                tr_cgroup_destroy(bcg, 5000000, NULL);
                tr_cgroup_free(bcg);
        }
        tr_cgroup_free(svc_cg);
        return rc;
}
