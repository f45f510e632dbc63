/* bench-trackers - per-family usage query cost, cgroup tracker vs /proc tracker, with 100,
 * 1,000 and 5,000 background processes on the host; kill-to-empty time of a 500-process
 * family, cgroup.kill vs the /proc kill spree.  Prints one table; ratios are from one run.
 *
 * Everything it creates lives under the cgroup /procd-bench.<pid> (every hierarchy) and is
 * removed at the end; it signals only processes it started.  Needs root. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trackers/tracker.h"
#include "trackers/util.h"
#include "benchutil.h"

#define SEC 1000000ull

typedef struct bench {
        tr_hierarchies hs;
        char base[64];
} bench;

/* Start n sleeping processes placed in cg (the parent attaches each before releasing it
 * through a pipe).  Returns how many started; pids go into out. */
static size_t spawn_sleepers(tr_cgroup *cg, size_t n, pid_t *out)
{
        size_t started = 0;
        for (; started < n; started++) {
                int go[2];
                if (pipe2(go, O_CLOEXEC) < 0)
                        break;
                pid_t pid = fork();
                if (pid < 0) {
                        close(go[0]);
                        close(go[1]);
                        break;
                }
                if (pid == 0) {
                        char c;
                        close(go[1]);
                        if (read(go[0], &c, 1) != 1)
                                _exit(1);
                        for (;;)
                                pause();
                }
                close(go[0]);
                if (cg)
                        tr_cgroup_attach(cg, pid, NULL);
                if (write(go[1], "g", 1) != 1) {
                        /* the child will exit on EOF */
                }
                close(go[1]);
                out[started] = pid;
        }
        return started;
}

static void reap_all(pid_t *pids, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (pids[i] > 1)
                        waitpid(pids[i], NULL, 0);
}

static tr_cgroup *make_cgroup(bench *b, const char *name)
{
        char path[256];
        snprintf(path, sizeof path, "%s/%s", b->base, name);
        tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        if (tr_cgroup_create(&b->hs, path, &cg, &err) < 0) {
                fprintf(stderr, "bench: create %s: %s\n", path, err.msg);
                return NULL;
        }
        return cg;
}

static void kill_and_destroy(tr_cgroup *cg, pid_t *pids, size_t n)
{
        tr_kill_result kr = { 0 };
        tr_cgroup_kill(cg, 10 * SEC, &kr, NULL);
        tr_kill_result_free(&kr);
        reap_all(pids, n);
        tr_cgroup_destroy(cg, 5 * SEC, NULL);
        tr_cgroup_free(cg);
}

/* A 10-process family in its own cgroup; time usage through the cgroup and through /proc. */
static void bench_usage(bench *b, size_t background, uint64_t *cg_ns, uint64_t *proc_ns, size_t *host_procs)
{
        pid_t *bg = calloc(background, sizeof *bg);
        pid_t fam_pids[10];
        tr_cgroup *bgcg = make_cgroup(b, "background");
        tr_cgroup *famcg = make_cgroup(b, "family");
        size_t nbg = spawn_sleepers(bgcg, background, bg);
        size_t nfam = spawn_sleepers(famcg, 10, fam_pids);

        /* family root: the first process; the others are its "descendants" only through the
         * cgroup, so give the /proc side the same members as seeds to compare like with like */
        tr_procfam_spec spec = { .root_pid = fam_pids[0] };
        tr_family *viacg = NULL, *viaproc = NULL;
        tr_family_new(&spec, famcg, &viacg, NULL);
        tr_family_new(&spec, NULL, &viaproc, NULL);
        tr_pidset seeds = TR_PIDSET_INIT;
        for (size_t i = 0; i < nfam; i++)
                tr_pidset_add(&seeds, fam_pids[i]);
        tr_pidset_normalize(&seeds);
        tr_procfam_set_seeds(tr_family_procfam(viaproc), &seeds);

        enum { CG_CALLS = 2000, PROC_CALLS = 15 };
        uint64_t t[PROC_CALLS];
        tr_usage u;
        /* a batch average: one cgroup call is near the clock's microsecond resolution */
        tr_family_usage(viacg, &u, NULL); /* warm: hot files opened */
        uint64_t s0 = tr_now_usec();
        for (int i = 0; i < CG_CALLS; i++)
                tr_family_usage(viacg, &u, NULL);
        *cg_ns = (tr_now_usec() - s0) * 1000 / CG_CALLS;
        for (int i = 0; i < PROC_CALLS; i++) {
                uint64_t s = tr_now_usec();
                tr_family_usage(viaproc, &u, NULL);
                t[i] = tr_now_usec() - s;
        }
        *proc_ns = bench_median(t, PROC_CALLS) * 1000;

        tr_scan scan = { 0 };
        tr_scan_opts o = { 0 };
        tr_scan_take(&scan, &o, NULL);
        *host_procs = scan.n;
        tr_scan_free(&scan);

        tr_pidset_free(&seeds);
        tr_family_free(viaproc);
        /* viacg owns famcg */
        tr_kill_result kr = { 0 };
        tr_cgroup_kill(tr_family_cgroup(viacg), 10 * SEC, &kr, NULL);
        tr_kill_result_free(&kr);
        reap_all(fam_pids, nfam);
        tr_cgroup_destroy(tr_family_cgroup(viacg), 5 * SEC, NULL);
        tr_family_free(viacg);
        kill_and_destroy(bgcg, bg, nbg);
        free(bg);
}

/* Kill-to-empty of a 500-process family: cgroup kill vs /proc spree. */
static void bench_kill(bench *b, uint64_t *cg_usec, uint64_t *proc_usec, const char **cg_method)
{
        enum { N = 500 };
        static pid_t pids[N];
        tr_cgroup *cg = make_cgroup(b, "kill-cg");
        size_t n = spawn_sleepers(cg, N, pids);
        tr_kill_result kr = { 0 };
        uint64_t s = tr_now_usec();
        tr_cgroup_kill(cg, 30 * SEC, &kr, NULL);
        *cg_usec = tr_now_usec() - s;
        *cg_method = kr.method;
        if (!kr.empty)
                fprintf(stderr, "bench: cgroup kill left %zu\n", kr.survivors.n);
        tr_kill_result_free(&kr);
        reap_all(pids, n);
        tr_cgroup_destroy(cg, 5 * SEC, NULL);
        tr_cgroup_free(cg);

        /* the /proc family: a root whose 499 children are its descendants */
        pid_t root = fork();
        if (root == 0) {
                for (int i = 0; i < N - 1; i++)
                        if (fork() == 0)
                                for (;;)
                                        pause();
                for (;;)
                        pause();
        }
        tr_procfam_spec spec = { .root_pid = root };
        tr_procfam *pf = NULL;
        tr_procfam_new(&spec, &pf, NULL);
        tr_pidset m = TR_PIDSET_INIT;
        for (int i = 0; i < 500; i++) {
                tr_pidset_clear(&m);
                tr_procfam_members(pf, &m, NULL);
                if (m.n >= N)
                        break;
                usleep(10000);
        }
        memset(&kr, 0, sizeof kr);
        s = tr_now_usec();
        tr_procfam_kill(pf, 30 * SEC, &kr, NULL);
        *proc_usec = tr_now_usec() - s;
        if (!kr.empty)
                fprintf(stderr, "bench: /proc spree left %zu\n", kr.survivors.n);
        tr_kill_result_free(&kr);
        waitpid(root, NULL, 0);
        tr_pidset_free(&m);
        tr_procfam_free(pf);
}

int main(void)
{
        if (geteuid() != 0) {
                fprintf(stderr, "bench-trackers: needs root (creates cgroups)\n");
                return 2;
        }
        /* PID 1 may not reap orphans (it does not on the machine this was written on):
         * reap our own escapers. */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        bench b;
        tr_error err = { 0 };
        if (tr_hierarchies_discover(&b.hs, &err) < 0) {
                fprintf(stderr, "bench-trackers: %s\n", err.msg);
                return 1;
        }
        snprintf(b.base, sizeof b.base, "/procd-bench.%d", (int) getpid());
        tr_cgroup *base = NULL;
        if (tr_cgroup_create(&b.hs, b.base, &base, &err) < 0) {
                fprintf(stderr, "bench-trackers: %s\n", err.msg);
                return 1;
        }
        printf("cgroup mode: %s\n\n", tr_cgroup_mode_name(b.hs.mode));
        printf("Per-family GetUsage cost (10-process family)\n");
        printf("%-12s %-11s %-14s %-14s %-8s\n", "background", "host procs", "cgroup (us)", "/proc (us)", "ratio");
        size_t backgrounds[] = { 100, 1000, 5000 };
        for (size_t i = 0; i < 3; i++) {
                uint64_t cg_ns = 0, proc_ns = 0;
                size_t host = 0;
                bench_usage(&b, backgrounds[i], &cg_ns, &proc_ns, &host);
                printf("%-12zu %-11zu %-14.2f %-14.1f %.0fx\n", backgrounds[i], host, (double) cg_ns / 1000,
                       (double) proc_ns / 1000, cg_ns ? (double) proc_ns / (double) cg_ns : 0);
                fflush(stdout);
        }
        uint64_t kcg = 0, kproc = 0;
        const char *method = "?";
        bench_kill(&b, &kcg, &kproc, &method);
        printf("\nKill-to-empty, 500-process family\n");
        printf("%-26s %10.1f ms\n", method ? method : "cgroup", (double) kcg / 1000);
        printf("%-26s %10.1f ms\n", "/proc spree", (double) kproc / 1000);
        printf("ratio (/proc / cgroup)     %10.1fx\n", kcg ? (double) kproc / (double) kcg : 0);
        tr_cgroup_destroy(base, 5 * SEC, NULL);
        tr_cgroup_free(base);
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        return 0;
}
