/* bench-fds.c - procd's open files and memory per family, and its answer at the fd limit
 * (run by hand as root, or by `make bench`; not a test).
 *
 *   bench-fds [--families N] [--short]
 *
 * Starts build/procd/procd in a cgroup of its own under /procd-bench-fds.<pid> (so that
 * every family gets a cgroup), N families (default 10,000; --short 1,000) of one sleeper
 * each, registered through the classic FIFO with this program as their watcher, then
 * polls each once (GET_USAGE), under an fd limit of 2 per family (prlimit).  Reports the daemon's open fds (/proc/PID/fd) and VmRSS
 * before, registered and polled, per family, against the targets (at most 3 fds per family
 * at rest, 40 MB RSS at 10,000 polled families).  Then lowers the daemon's fd limit
 * (prlimit) to what it holds plus a few and registers until REGISTER fails: the status must
 * not be BAD_WATCHER_PID and the log must name the fd limit.  Counts, not times: valid
 * under load too (the load average is printed all the same).  Everything it started is
 * killed by pid and every cgroup it made is removed.
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

#define LIMIT_SLACK 6   /* fds the daemon may still open once its limit is lowered */
#define LIMIT_TRIES 200 /* REGISTERs tried at the lowered limit */

static long count_fds(pid_t pid)
{
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd", (int) pid);
        DIR *d = opendir(path);
        if (!d)
                return -1;
        long n = 0;
        for (struct dirent *e; (e = readdir(d));)
                n += e->d_name[0] != '.';
        closedir(d);
        return n;
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

static void mark(const char *what, pid_t pid, long fds0, long rss0, int n)
{
        char load[96];
        long fds = count_fds(pid), rss = rss_kb(pid);
        printf("%-22s %6d families  fds %6ld (%5.2f per family)  RSS %7.1f MB (%6.2f kB per family)  %s\n", what, n,
               fds, n ? (double) (fds - fds0) / n : 0.0, (double) rss / 1024.0, n ? (double) (rss - rss0) / n : 0.0,
               bench_load_note(load, sizeof load));
        fflush(stdout);
}

static bool log_names_limit(const cc_daemon *d)
{
        char path[128], line[1024];
        snprintf(path, sizeof path, "%s/procd.log", d->dir);
        FILE *f = fopen(path, "re");
        bool found = false;
        int shown = 0;
        while (f && fgets(line, sizeof line, f)) {
                bool limit = strstr(line, "out of file descriptors") != NULL;
                found = found || limit;
                if ((limit || strstr(line, "Too many open files") || strstr(line, "favordynmods") ||
                              strstr(line, "keep their files open")) &&
                    shown++ < 6)
                        printf("  log: %s", line);
        }
        if (f)
                fclose(f);
        return found;
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
        printf("bench-fds: %s, %d families (%d made), fd limit %llu\n", cc_daemon_exe(), families, n,
               (unsigned long long) rl.rlim_max);
        const char *const args[] = { "-S", "60", "-L", "@LOG", NULL };
        cc_daemon d;
        cc_client cc;
        if (n < total || cc_daemon_start_with(&d, args, bench_enter_cgroup, svc_cg) < 0) {
                fprintf(stderr, "bench-fds: no daemon or too few processes\n");
                goto out;
        }
        if (cc_open(&cc, d.addr, 0, 0) < 0) {
                fprintf(stderr, "bench-fds: cannot connect\n");
                goto stop;
        }
        /* the shape: 10,000 families under a 20,000-fd limit, 2 fds per family */
        int limit = families * 2 > families + 256 ? families * 2 : families + 256; /* a floor for small runs */
        struct rlimit two = { (rlim_t) limit, (rlim_t) limit };
        if (prlimit(d.pid, RLIMIT_NOFILE, &two, NULL) < 0)
                fprintf(stderr, "bench-fds: prlimit %d: %s\n", limit, strerror(errno));
        else
                printf("daemon fd limit set to %d (2 per family, at least 256 more than the families)\n", limit);
        long fds0 = count_fds(d.pid), rss0 = rss_kb(d.pid);
        mark("started", d.pid, fds0, rss0, 0);
        int failed = 0, first_error = 0;
        for (int i = 0; i < families; i++) {
                int k = cc_register(&cc, roots[i], getpid(), -1);
                if (k != 0 && !failed++)
                        first_error = k;
        }
        mark("registered", d.pid, fds0, rss0, families);
        cc_usage cu;
        for (int i = 0; i < families; i++)
                failed += cc_get_usage(&cc, roots[i], &cu) != 0;
        mark("polled once", d.pid, fds0, rss0, families);
        for (int i = 0; i < families; i++)
                failed += cc_get_usage(&cc, roots[i], &cu) != 0;
        mark("polled twice", d.pid, fds0, rss0, families);
        double per = (double) (count_fds(d.pid) - fds0) / families;
        printf("target: at most 3 fds per family at rest: %.2f %s\n", per, per <= 3.0 ? "MET" : "MISSED");
        if (families >= 10000)
                printf("target: RSS at 10,000 polled families at most 40 MB: %.1f MB %s\n", rss_kb(d.pid) / 1024.0,
                       rss_kb(d.pid) <= 40 * 1024 ? "MET" : "MISSED");
        if (failed)
                printf("bench-fds: %d calls failed (first error %d)\n", failed, first_error);

        /* the fd limit: what it holds now and a few more */
        long held = count_fds(d.pid);
        struct rlimit low = { (rlim_t) (held + LIMIT_SLACK), (rlim_t) (held + LIMIT_SLACK) };
        int status = 0, tried = 0;
        if (prlimit(d.pid, RLIMIT_NOFILE, &low, NULL) < 0) {
                fprintf(stderr, "bench-fds: prlimit: %s\n", strerror(errno));
        } else {
                for (int i = families; i < total && status == 0; i++, tried++)
                        status = cc_register(&cc, roots[i], getpid(), -1);
                bool logged = log_names_limit(&d);
                printf("at the fd limit (%ld): REGISTER %d failed with error %d (%s), %s\n", held + LIMIT_SLACK, tried,
                       status, status == 0 ? "none: never reached" : status == 2 ? "BAD_WATCHER_PID: misleading" : "ok",
                       logged ? "logged" : "NOT logged");
                rc = !failed && status != 0 && status != 2 && logged ? 0 : 1;
        }
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
