/* bench-procd.c - procd benchmark (run by hand as root; not a test).
 *
 *   bench-procd [--short] [--families N] [--background N] [--calls N]
 *
 * Starts build/procd/procd on a temporary socket, N background sleeping processes (default
 * 5,000) and N cgroup families (default 1,000: one sleeping root each, in a cgroup of its
 * own under /procd-bench.<pid>) plus one /proc family, then measures:
 *   - GetUsage round-trip latency and throughput on a cgroup family and on a /proc family;
 *   - Snapshot (one shared /proc scan over every process on the host);
 *   - procd RSS with the families registered;
 *   - procd CPU while idle for 60 s (--short: 5 s) with only cgroup families.
 * Everything it started is killed by pid and every cgroup it made is removed at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procd/client.h"
#include "trackers/cgroup.h"
#include "trackers/util.h"
#include "benchutil.h"

typedef struct bench {
        int families, background, calls;
        unsigned idle_sec;
        char dir[64], socket[128], base[64];
        pid_t procd;
        pid_t *bg;
        int n_bg;
        pid_t *roots;
        tr_cgroup **cgs;
        int n_roots;
        pid_t proc_root;
        tr_hierarchies hs;
} bench;

static double now_s(void) { return (double) tr_now_usec() / 1e6; }

static int start_procd(bench *b)
{
        char exe[PATH_MAX], self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n < 0)
                return -errno;
        self[n] = '\0';
        /* build/tests/bench/bench-procd -> build/procd/procd */
        for (int i = 0; i < 3; i++) {
                char *sl = strrchr(self, '/');
                if (sl)
                        *sl = '\0';
        }
        snprintf(exe, sizeof exe, "%s/procd/procd", self);
        snprintf(b->dir, sizeof b->dir, "/tmp/procd-bench.XXXXXX");
        if (!mkdtemp(b->dir))
                return -errno;
        snprintf(b->socket, sizeof b->socket, "%s/procd.sock", b->dir);
        int p[2];
        if (pipe(p) < 0)
                return -errno;
        char fd[16];
        snprintf(fd, sizeof fd, "%d", p[1]);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                close(p[0]);
                int nul = open("/dev/null", O_WRONLY);
                dup2(nul, 2);
                execl(exe, exe, "--foreground", "--socket", b->socket, "--ready-fd", fd, (char *) NULL);
                _exit(127);
        }
        close(p[1]);
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        char c;
        int ok = poll(&pfd, 1, 10000) > 0 && read(p[0], &c, 1) == 0;
        close(p[0]);
        b->procd = pid;
        if (!ok) {
                fprintf(stderr, "procd (%s) did not start\n", exe);
                return -EIO;
        }
        return 0;
}

/* utime+stime (ticks) and VmRSS (kB) of pid. */
static void proc_cpu_rss(pid_t pid, uint64_t *ticks, uint64_t *rss_kb)
{
        char path[64], buf[4096];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        *ticks = 0;
        if (tr_read_file_at(AT_FDCWD, path, buf, sizeof buf, NULL) >= 0) {
                const char *p = strrchr(buf, ')');
                unsigned long long ut = 0, st = 0;
                if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2)
                        *ticks = ut + st;
        }
        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        *rss_kb = 0;
        if (tr_read_file_at(AT_FDCWD, path, buf, sizeof buf, NULL) >= 0) {
                const char *p = strstr(buf, "VmRSS:");
                if (p)
                        *rss_kb = strtoull(p + 6, NULL, 10);
        }
}

static int cmp_d(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

typedef struct lat {
        double p50_us, p99_us, mean_us, per_sec;
        int errors;
} lat;

static lat measure_usage(procd_client *c, pid_t pid, int calls)
{
        lat r = { 0 };
        double *t = calloc((size_t) calls, sizeof *t);
        double start = now_s();
        for (int i = 0; i < calls; i++) {
                procd_usage u;
                double t0 = now_s();
                if (procd_get_usage(c, pid, &u, NULL) != PROCD_OK)
                        r.errors++;
                t[i] = (now_s() - t0) * 1e6;
        }
        double total = now_s() - start;
        qsort(t, (size_t) calls, sizeof *t, cmp_d);
        r.p50_us = t[calls / 2];
        r.p99_us = t[(calls * 99) / 100];
        r.mean_us = total * 1e6 / calls;
        r.per_sec = calls / total;
        free(t);
        return r;
}

static void cleanup(bench *b)
{
        if (b->procd > 1) {
                procd_client *c = NULL;
                if (procd_connect(b->socket, &c, NULL) == PROCD_OK) {
                        procd_quit(c, NULL);
                        procd_disconnect(c);
                } else {
                        kill(b->procd, SIGTERM);
                }
                waitpid(b->procd, NULL, 0);
        }
        for (int i = 0; i < b->n_roots; i++)
                if (b->roots[i] > 1)
                        kill(b->roots[i], SIGKILL);
        for (int i = 0; i < b->n_bg; i++)
                if (b->bg[i] > 1)
                        kill(b->bg[i], SIGKILL);
        if (b->proc_root > 1)
                kill(b->proc_root, SIGKILL);
        for (int i = 0; i < b->n_roots; i++)
                waitpid(b->roots[i], NULL, 0);
        for (int i = 0; i < b->n_bg; i++)
                waitpid(b->bg[i], NULL, 0);
        if (b->proc_root > 1)
                waitpid(b->proc_root, NULL, 0);
        for (int i = 0; i < b->n_roots; i++)
                if (b->cgs[i]) {
                        tr_cgroup_destroy(b->cgs[i], 2000000, NULL);
                        tr_cgroup_free(b->cgs[i]);
                }
        tr_cgroup *base = NULL;
        if (tr_cgroup_open(&b->hs, b->base, TR_CG_MAY_ACT | TR_CG_OWNED, &base, NULL) >= 0) {
                tr_cgroup_destroy(base, 2000000, NULL);
                tr_cgroup_free(base);
        }
        unlink(b->socket);
        rmdir(b->dir);
}

int main(int argc, char **argv)
{
        bench b = { .families = 1000, .background = 5000, .calls = 5000, .idle_sec = 60 };
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--short") == 0)
                        b.idle_sec = 5;
                else if (strcmp(argv[i], "--families") == 0 && i + 1 < argc)
                        b.families = atoi(argv[++i]);
                else if (strcmp(argv[i], "--background") == 0 && i + 1 < argc)
                        b.background = atoi(argv[++i]);
                else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
                        b.calls = atoi(argv[++i]);
                else {
                        fprintf(stderr, "usage: bench-procd [--short] [--families N] [--background N] [--calls N]\n");
                        return 2;
                }
        }
        if (geteuid() != 0) {
                fprintf(stderr, "bench-procd: needs root (cgroups)\n");
                return 2;
        }
        if (b.families < 1 || b.background < 0 || b.calls < 10)
                return 2;
        signal(SIGPIPE, SIG_IGN);
        tr_error err = { 0 };
        if (tr_hierarchies_discover(&b.hs, &err) < 0) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
        }
        snprintf(b.base, sizeof b.base, "/procd-bench.%d", (int) getpid());
        b.bg = calloc((size_t) b.background + 1, sizeof(pid_t));
        b.roots = calloc((size_t) b.families, sizeof(pid_t));
        b.cgs = calloc((size_t) b.families, sizeof(tr_cgroup *));
        int rc = 1;
        if (start_procd(&b) < 0)
                goto out;
        uint64_t ticks0, rss0;
        proc_cpu_rss(b.procd, &ticks0, &rss0);

        double t0 = now_s();
        for (int i = 0; i < b.background; i++) {
                pid_t p = ts_sleeper();
                if (p <= 0)
                        break;
                b.bg[b.n_bg++] = p;
        }
        printf("started %d background processes in %.2f s\n", b.n_bg, now_s() - t0);

        procd_client *c = NULL;
        procd_error e = { 0 };
        if (procd_connect(b.socket, &c, &e) != PROCD_OK) {
                fprintf(stderr, "%s\n", e.msg);
                goto out;
        }
        t0 = now_s();
        double calls_s = 0;
        for (int i = 0; i < b.families; i++) {
                char path[128];
                snprintf(path, sizeof path, "%s/f%d", b.base, i);
                if (tr_cgroup_create(&b.hs, path, &b.cgs[i], &err) < 0) {
                        fprintf(stderr, "cgroup %s: %s\n", path, err.msg);
                        break;
                }
                pid_t p = ts_sleeper();
                if (p <= 0)
                        break;
                b.roots[b.n_roots++] = p;
                if (tr_cgroup_attach(b.cgs[i], p, &err) < 0)
                        fprintf(stderr, "attach: %s\n", err.msg);
                double tc = now_s();
                if (procd_register_subfamily(c, p, 0, 60, &e) != PROCD_OK ||
                    procd_track_via_cgroup(c, p, path, &e) != PROCD_OK) {
                        fprintf(stderr, "register %d: %s\n", (int) p, e.msg);
                        break;
                }
                calls_s += now_s() - tc;
        }
        double reg_s = now_s() - t0;
        printf("registered %d cgroup families in %.2f s (cgroup creation and forks included)\n", b.n_roots, reg_s);
        if (b.n_roots < b.families)
                goto out;
        b.proc_root = ts_sleeper();
        if (procd_register_subfamily(c, b.proc_root, 0, 60, &e) != PROCD_OK) {
                fprintf(stderr, "register /proc family: %s\n", e.msg);
                goto out;
        }
        /* first call builds the /proc family's data */
        procd_usage u;
        procd_get_usage(c, b.proc_root, &u, NULL);

        pid_t cg_fam = b.roots[b.n_roots / 2];
        lat lc = measure_usage(c, cg_fam, b.calls);
        lat lp = measure_usage(c, b.proc_root, b.calls);
        lat lr = measure_usage(c, 0, b.calls / 10 > 10 ? b.calls / 10 : 10);
        int snaps = 20;
        double ts = now_s();
        for (int i = 0; i < snaps; i++)
                procd_snapshot(c, NULL);
        double snap_ms = (now_s() - ts) * 1e3 / snaps;
        procd_get_usage(c, cg_fam, &u, NULL);
        char src[64];
        procd_usage_source_name(&u, src, sizeof src);

        uint64_t ticks1, rss1;
        proc_cpu_rss(b.procd, &ticks1, &rss1);

        /* idle: only cgroup families (the /proc family unregistered: no snapshot timer) */
        procd_unregister_family(c, b.proc_root, NULL);
        uint64_t ti0, ti1, rss2;
        proc_cpu_rss(b.procd, &ti0, &rss2);
        sleep(b.idle_sec);
        proc_cpu_rss(b.procd, &ti1, &rss2);
        long hz = sysconf(_SC_CLK_TCK);
        double idle_cpu_ms = (double) (ti1 - ti0) * 1000.0 / (double) hz;

        /* then as many /proc families (background processes registered as roots): the
         * shared snapshot updates each of them */
        int n_pf = b.families < b.n_bg ? b.families : b.n_bg;
        for (int i = 0; i < n_pf; i++)
                procd_register_subfamily(c, b.bg[i], 0, 60, NULL);
        procd_snapshot(c, NULL);
        ts = now_s();
        for (int i = 0; i < 5; i++)
                procd_snapshot(c, NULL);
        double snap_pf_ms = (now_s() - ts) * 1e3 / 5;
        lat lpf = measure_usage(c, n_pf ? b.bg[n_pf / 2] : 0, b.calls);
        uint64_t ticks3, rss3;
        proc_cpu_rss(b.procd, &ticks3, &rss3);
        for (int i = 0; i < n_pf; i++)
                procd_unregister_family(c, b.bg[i], NULL);
        procd_disconnect(c);

        int nprocs = 0;
        {
                DIR *d = opendir("/proc");
                struct dirent *de;
                while (d && (de = readdir(d)))
                        nprocs += de->d_name[0] >= '1' && de->d_name[0] <= '9';
                if (d)
                        closedir(d);
        }
        printf("\nprocd benchmark: %d cgroup families + 1 /proc family, %d background processes, "
               "%d processes on the host, %d GetUsage calls per row (one client, sequential)\n\n",
               b.n_roots, b.n_bg, nprocs, b.calls);
        printf("| %-40s | %10s | %10s | %10s | %12s | %6s |\n", "GetUsage on", "p50 us", "p99 us", "mean us",
               "calls/s", "errors");
        printf("|%s|%s|%s|%s|%s|%s|\n", "------------------------------------------", "------------", "------------",
               "------------", "--------------", "--------");
        printf("| %-40s | %10.1f | %10.1f | %10.1f | %12.0f | %6d |\n", "cgroup family (source cgroup...)", lc.p50_us,
               lc.p99_us, lc.mean_us, lc.per_sec, lc.errors);
        printf("| %-40s | %10.1f | %10.1f | %10.1f | %12.0f | %6d |\n", "/proc family (last snapshot)", lp.p50_us,
               lp.p99_us, lp.mean_us, lp.per_sec, lp.errors);
        printf("| %-40s | %10.1f | %10.1f | %10.1f | %12.0f | %6d |\n", "root family (/proc)", lr.p50_us, lr.p99_us,
               lr.mean_us, lr.per_sec, lr.errors);
        char lbl[64];
        snprintf(lbl, sizeof lbl, "/proc family, with +%d /proc families", n_pf);
        printf("| %-40s | %10.1f | %10.1f | %10.1f | %12.0f | %6d |\n", lbl, lpf.p50_us,
               lpf.p99_us, lpf.mean_us, lpf.per_sec, lpf.errors);
        printf("\n| %-44s | %14s |\n", "measure", "value");
        printf("|----------------------------------------------|----------------|\n");
        printf("| %-44s | %11.1f ms |\n", "Snapshot (one shared /proc scan), mean", snap_ms);
        printf("| %-44s | %14s |\n", "usage source of a cgroup family", src);
        snprintf(lbl, sizeof lbl, "Snapshot with +%d /proc families, mean", n_pf);
        printf("| %-44s | %11.1f ms |\n", lbl, snap_pf_ms);
        snprintf(lbl, sizeof lbl, "procd RSS with +%d /proc families", n_pf);
        printf("| %-44s | %11llu kB |\n", lbl, (unsigned long long) rss3);
        printf("| %-44s | %11.2f ms |\n", "Register+TrackViaCgroup, per family", calls_s * 1e3 / b.n_roots);
        printf("| %-44s | %11llu kB |\n", "procd RSS at start", (unsigned long long) rss0);
        printf("| %-44s | %11llu kB |\n", "procd RSS with the families", (unsigned long long) rss1);
        printf("| %-44s | %11.2f kB |\n", "RSS per family", (double) (rss1 - rss0) / (b.n_roots + 1));
        printf("| %-44s | %11.1f ms |\n", "procd CPU idle, cgroup families only", idle_cpu_ms);
        printf("| %-44s | %14u |\n", "  over seconds", b.idle_sec);
        printf("\nratios: /proc-family GetUsage p50 / cgroup-family p50 = %.2f; "
               "Snapshot / cgroup GetUsage p50 = %.0fx\n",
               lp.p50_us / lc.p50_us, snap_ms * 1e3 / lc.p50_us);
        rc = 0;
out:
        cleanup(&b);
        free(b.bg);
        free(b.roots);
        free(b.cgs);
        return rc;
}
