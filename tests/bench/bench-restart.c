/* bench-restart.c - time for procd to restore its families after a SIGKILL (run by hand
 * as root; not a test).
 *
 *   bench-restart [--families N] [--kind cgroup|family|proc] [--hold] [--restarts N] [--procd PATH]...
 *
 * For each kind (cgroup: one sleeping root each in a cgroup of its own under
 * /procd-bench-restart.<pid>, handed to procd by TrackFamilyViaCgroup; family: procd makes
 * each family's fam.* cgroup under /procd-bench-restart.<pid>/fams (--family-cgroup-base);
 * proc: /proc families, --no-family-cgroups), starts build/procd/procd on a temporary
 * socket, registers N families, SIGKILLs procd and starts it again on the same state file.
 * --restarts N: restart N times in a row (SIGKILL, start) on the same families, one row each.
 * --procd PATH (up to 4 times): the procd binaries to restart with, in turn (default: this
 * build's); the families are registered with the first.  Two binaries, e.g. main before and
 * after a change, are so measured on the same state file in the same minute.
 * --hold: after the restart, print the state file and wait for a line on stdin before
 * cleaning up (to profile further restarts of a copy of the state file by hand).  Prints procd's own figure ("restored N of M families
 * in X ms", from its log), the wall time from exec to listening, the same wall time for a
 * start with no state file, and the state file's size.  Everything it started is killed by
 * pid and every cgroup it made is removed at the end.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procd/client.h"
#include "trackers/cgroup.h"
#include "trackers/util.h"
#include "benchutil.h"

enum kind { K_CGROUP, K_FAMILY, K_PROC };
static const char *const kind_names[] = { "cgroup", "family", "proc" };

#define MAX_EXES 4

typedef struct run {
        char dir[64], socket[128], log[128], exe[PATH_MAX], fambase[128];
        enum kind kind;
        pid_t procd;
} run;

/* Start procd on r's socket; returns the wall time to readiness in ms, or < 0. */
static double start_procd(run *r)
{
        int p[2];
        if (pipe(p) < 0)
                return -1;
        char fd[16];
        snprintf(fd, sizeof fd, "%d", p[1]);
        uint64_t t0 = tr_now_usec();
        pid_t pid = fork();
        if (pid == 0) {
                close(p[0]);
                int lf = open(r->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (lf >= 0)
                        dup2(lf, 2);
                if (r->kind == K_FAMILY)
                        execl(r->exe, "procd", "--foreground", "--socket", r->socket, "--ready-fd", fd,
                              "--family-cgroup-base", r->fambase, (char *) NULL);
                else
                        execl(r->exe, "procd", "--foreground", "--socket", r->socket, "--ready-fd", fd,
                              "--no-family-cgroups", (char *) NULL);
                _exit(127);
        }
        close(p[1]);
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        int k = poll(&pfd, 1, 120000);
        char c;
        ssize_t got = k > 0 ? read(p[0], &c, 1) : -1;
        close(p[0]);
        r->procd = pid;
        if (k <= 0 || got != 0)
                return -1;
        return (double) (tr_now_usec() - t0) / 1000.0;
}

/* rmdir cgroup path in every hierarchy (gone or busy is fine: the base's destroy follows). */
static void remove_everywhere(const tr_hierarchies *hs, const char *path)
{
        for (int i = 0; i < hs->n; i++) {
                char fs[PATH_MAX];
                if (tr_hierarchy_fs_path(&hs->h[i], path, fs, sizeof fs, NULL) == 0)
                        rmdir(fs);
        }
}

/* The fam.<pid>.<start> cgroup procd made for root (its self leaf first); the root is
 * reaped already, so its start time is read from the directory name. */
static void remove_family_cgroup(const tr_hierarchies *hs, const char *fambase, pid_t root)
{
        int idx = hs->v2 >= 0 ? hs->v2 : 0;
        char dir[PATH_MAX], prefix[32];
        if (tr_hierarchy_fs_path(&hs->h[idx], fambase, dir, sizeof dir, NULL) < 0)
                return;
        snprintf(prefix, sizeof prefix, "fam.%d.", (int) root);
        DIR *d = opendir(dir);
        if (!d)
                return;
        for (struct dirent *e; (e = readdir(d));) {
                if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
                        continue;
                char cg[PATH_MAX];
                snprintf(cg, sizeof cg, "%s/%s/self", fambase, e->d_name);
                remove_everywhere(hs, cg);
                snprintf(cg, sizeof cg, "%s/%s", fambase, e->d_name);
                remove_everywhere(hs, cg);
        }
        closedir(d);
}

/* procd's own "restored N of M families in X ms (CPU Y ms)" (the last one in the log). */
static double restored_ms(const run *r, size_t *restored, double *cpu_ms)
{
        char *text = NULL;
        size_t len = 0;
        double ms = -1;
        if (tr_read_file_alloc_at(AT_FDCWD, r->log, &text, &len, NULL) < 0)
                return -1;
        for (char *p = text; (p = strstr(p, "restored ")); p++) {
                size_t a, b;
                double x;
                double c = -1;
                if (sscanf(p, "restored %zu of %zu families in %lf ms (CPU %lf ms)", &a, &b, &x, &c) >= 3) {
                        ms = x;
                        *cpu_ms = c;
                        *restored = a;
                }
        }
        free(text);
        return ms;
}

typedef struct bench_opts {
        int families, restarts, n_exes;
        bool hold;
        const char *exes[MAX_EXES];
} bench_opts;

static int bench_kind(const bench_opts *bo, enum kind kind, const tr_hierarchies *hs, const char *base)
{
        run r = { .kind = kind };
        int n = bo->families;
        bool cgroup = kind == K_CGROUP;
        snprintf(r.exe, sizeof r.exe, "%s", bo->exes[0]);
        snprintf(r.fambase, sizeof r.fambase, "%s/fams", base);
        snprintf(r.dir, sizeof r.dir, "/tmp/procd-bench-restart.XXXXXX");
        if (!mkdtemp(r.dir))
                return -1;
        snprintf(r.socket, sizeof r.socket, "%s/procd.sock", r.dir);
        snprintf(r.log, sizeof r.log, "%s/procd.log", r.dir);
        double empty_ms = start_procd(&r);
        if (empty_ms < 0) {
                fprintf(stderr, "procd did not start\n");
                return -1;
        }
        procd_client *c = NULL;
        if (procd_connect(r.socket, &c, NULL) != PROCD_OK)
                return -1;
        pid_t *roots = calloc((size_t) n, sizeof *roots);
        tr_cgroup **cgs = calloc((size_t) n, sizeof *cgs);
        int failed = 0;
        for (int i = 0; i < n; i++) {
                roots[i] = ts_sleeper();
                char path[256];
                if (cgroup) {
                        snprintf(path, sizeof path, "%s/f%d", base, i);
                        if (tr_cgroup_create(hs, path, &cgs[i], NULL) < 0 || tr_cgroup_attach(cgs[i], roots[i], NULL) < 0)
                                failed++;
                }
                if (procd_register_subfamily(c, roots[i], getpid(), 60, NULL) != PROCD_OK ||
                    (cgroup && procd_track_via_cgroup(c, roots[i], path, NULL) != PROCD_OK))
                        failed++;
        }
        procd_disconnect(c);
        char state[128];
        snprintf(state, sizeof state, "%s/procd.state", r.dir);
        struct stat st = { 0 };
        stat(state, &st);
        for (int round = 0; round < bo->restarts; round++) {
                for (int e = 0; e < bo->n_exes; e++) {
                        ts_kill_reap(r.procd);
                        snprintf(r.exe, sizeof r.exe, "%s", bo->exes[e]);
                        double wall_ms = start_procd(&r);
                        size_t restored = 0;
                        double cpu_ms = -1, ms = restored_ms(&r, &restored, &cpu_ms);
                        printf("| %-6s | %5d | %8zu | %8.1f ms | %8.1f ms | %10.1f ms | %8.1f ms | %8lld B |", kind_names[kind],
                               n, restored, ms, cpu_ms, wall_ms, empty_ms, (long long) st.st_size);
                        if (bo->n_exes > 1)
                                printf(" %s", bo->exes[e]);
                        printf("\n");
                        fflush(stdout);
                }
        }
        if (failed)
                printf("(%d registrations failed)\n", failed);
        if (bo->hold) {
                printf("holding: state file %s, procd log %s; press Enter to clean up\n", state, r.log);
                fflush(stdout);
                char line[16];
                if (!fgets(line, sizeof line, stdin))
                        line[0] = '\0';
        }
        if (procd_connect(r.socket, &c, NULL) == PROCD_OK) {
                procd_quit(c, NULL);
                procd_disconnect(c);
        }
        waitpid(r.procd, NULL, 0);
        for (int i = 0; i < n; i++) {
                ts_kill_reap(roots[i]);
                if (kind == K_FAMILY)
                        remove_family_cgroup(hs, r.fambase, roots[i]);
                if (cgs[i]) {
                        tr_cgroup_destroy(cgs[i], 2000000, NULL);
                        tr_cgroup_free(cgs[i]);
                }
        }
        free(roots);
        free(cgs);
        unlink(state);
        unlink(r.log);
        unlink(r.socket);
        rmdir(r.dir);
        return 0;
}

int main(int argc, char **argv)
{
        bench_opts bo = { .families = 1000, .restarts = 1 };
        int only = -1;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--families") == 0 && i + 1 < argc) {
                        bo.families = atoi(argv[++i]);
                } else if (strcmp(argv[i], "--restarts") == 0 && i + 1 < argc) {
                        bo.restarts = atoi(argv[++i]);
                } else if (strcmp(argv[i], "--procd") == 0 && i + 1 < argc && bo.n_exes < MAX_EXES) {
                        bo.exes[bo.n_exes++] = argv[++i];
                } else if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc) {
                        i++;
                        for (int k = 0; k < 3; k++)
                                if (strcmp(argv[i], kind_names[k]) == 0)
                                        only = k;
                        if (only < 0) {
                                fprintf(stderr, "bench-restart: unknown kind %s\n", argv[i]);
                                return 2;
                        }
                } else if (strcmp(argv[i], "--hold") == 0) {
                        bo.hold = true;
                } else {
                        fprintf(stderr, "usage: bench-restart [--families N] [--kind cgroup|family|proc] [--hold] "
                                        "[--restarts N] [--procd PATH]...\n");
                        return 2;
                }
        }
        if (geteuid() != 0) {
                fprintf(stderr, "bench-restart: needs root\n");
                return 77;
        }
        char self[PATH_MAX], exe[PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len < 0)
                return 1;
        self[len] = '\0';
        for (int i = 0; i < 3; i++) { /* build/tests/bench/bench-restart -> build/procd/procd */
                char *sl = strrchr(self, '/');
                if (sl)
                        *sl = '\0';
        }
        snprintf(exe, sizeof exe, "%s/procd/procd", self);
        if (bo.n_exes == 0)
                bo.exes[bo.n_exes++] = exe;
        if (bo.families < 1 || bo.restarts < 1) {
                fprintf(stderr, "bench-restart: --families and --restarts need a positive number\n");
                return 2;
        }
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        tr_hierarchies hs;
        tr_error err = { 0 };
        if (tr_hierarchies_discover(&hs, &err) < 0) {
                fprintf(stderr, "bench-restart: %s\n", err.msg);
                return 1;
        }
        char base[64];
        snprintf(base, sizeof base, "/procd-bench-restart.%d", (int) getpid());
        tr_cgroup *b = NULL;
        if (tr_cgroup_create(&hs, base, &b, &err) < 0) {
                fprintf(stderr, "bench-restart: %s\n", err.msg);
                return 1;
        }
        printf("| kind   | fams  | restored | restore     | its CPU     | exec to ready | empty start | state file |\n");
        printf("|--------|-------|----------|-------------|-------------|---------------|-------------|------------|\n");
        int r = 0;
        for (int k = 0; k < 3 && r == 0; k++)
                if (only < 0 || only == k)
                        r = bench_kind(&bo, (enum kind) k, &hs, base);
        char fams[160];
        snprintf(fams, sizeof fams, "%s/fams", base);
        remove_everywhere(&hs, fams);
        tr_cgroup_destroy(b, 2000000, NULL);
        tr_cgroup_free(b);
        return r == 0 ? 0 : 1;
}
