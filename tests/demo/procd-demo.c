/* procd-demo - the tracker library on a live job: a job tree (with a double-forked, setsid'd
 * escaper) in a fresh cgroup, usage from both trackers side by side, suspend and resume, kill,
 * zero survivors, cgroups removed.  Needs root.  Everything lives under /procd-demo.<pid>. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trackers/tracker.h"
#include "trackers/pidref.h"
#include "trackers/util.h"

#define SEC 1000000ull

/* Busy for duty_pct of every 100 ms, forever. */
static void worker(int duty_pct)
{
        for (;;) {
                uint64_t start = tr_now_usec();
                volatile uint64_t x = 0;
                while (tr_now_usec() - start < (uint64_t) duty_pct * 1000)
                        x++;
                usleep((useconds_t) (100 - duty_pct) * 1000);
        }
}

static void job(void)
{
        for (int i = 0; i < 2; i++)
                if (fork() == 0)
                        worker(20);
        /* the escaper: double fork + setsid; its parent exits at once, so a /proc tracker that
         * did not see it before it detached has no way to know it belongs to the job */
        if (fork() == 0) {
                if (fork() == 0) {
                        setsid();
                        /* 64 MiB resident; volatile, or the compiler drops the unused buffer */
                        volatile char *big = malloc(64u << 20);
                        for (size_t off = 0; big && off < (64u << 20); off += 4096)
                                big[off] = 1;
                        worker(10);
                }
                _exit(0);
        }
        for (;;)
                pause();
}

static void print_row(const char *who, const tr_usage *u)
{
        char src[64];
        printf("  %-8s procs %-3llu cpu %8.3f s  rss %7.1f MiB  peak %7s  source %s%s\n", who,
               u->num_procs.available ? (unsigned long long) u->num_procs.value : 0ull,
               u->cpu_usec.available ? (double) u->cpu_usec.value / 1e6 : -1.0,
               u->rss_bytes.available ? (double) u->rss_bytes.value / 1048576.0 : -1.0,
               u->memory_peak_bytes.available ? "yes" : "n/a", tr_usage_source_name(u, src, sizeof src),
               u->fallback ? " (fallback)" : "");
}

static int abandon(pid_t root, tr_cgroup *cg)
{
        tr_safe_kill(root, 0, SIGKILL);
        waitpid(root, NULL, 0);
        tr_cgroup_destroy(cg, 5 * SEC, NULL);
        tr_cgroup_free(cg);
        return 1;
}

int main(void)
{
        if (geteuid() != 0) {
                fprintf(stderr, "procd-demo: needs root (it creates cgroups)\n");
                return 2;
        }
        /* PID 1 may not reap orphans (it does not on the machine this was written on):
         * reap our own escapers. */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        setvbuf(stdout, NULL, _IOLBF, 0);
        tr_hierarchies hs;
        tr_error err = { 0 };
        if (tr_hierarchies_discover(&hs, &err) < 0) {
                fprintf(stderr, "procd-demo: %s\n", err.msg);
                return 1;
        }
        printf("cgroup mode: %s (", tr_cgroup_mode_name(hs.mode));
        for (int i = 0; i < hs.n; i++)
                printf("%s%s", i ? ", " : "", hs.h[i].mount_point);
        printf(")\n");

        char base[64], path[96];
        snprintf(base, sizeof base, "/procd-demo.%d", (int) getpid());
        snprintf(path, sizeof path, "%s/job", base);
        tr_cgroup *cg = NULL;
        if (tr_cgroup_create(&hs, path, &cg, &err) < 0) {
                fprintf(stderr, "procd-demo: %s\n", err.msg);
                return 1;
        }
        printf("job cgroup: %s in every hierarchy\n", path);

        int go[2];
        if (pipe2(go, O_CLOEXEC) < 0)
                return 1;
        pid_t root = fork();
        if (root == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) == 1)
                        job();
                _exit(1);
        }
        close(go[0]);
        int rc = 1;
        if (tr_cgroup_attach(cg, root, &err) < 0 || write(go[1], "g", 1) != 1) {
                fprintf(stderr, "procd-demo: cannot start the job: %s\n", err.msg);
                return abandon(root, cg);
        }
        close(go[1]);
        printf("job root pid %d: 2 workers + a double-forked setsid escaper (64 MiB)\n\n", (int) root);

        tr_procfam_spec spec = { .root_pid = root };
        tr_family *viacg = NULL, *viaproc = NULL;
        if (tr_family_new(&spec, cg, &viacg, &err) < 0 || tr_family_new(&spec, NULL, &viaproc, &err) < 0) {
                fprintf(stderr, "procd-demo: %s\n", err.msg);
                return 1;
        }
        usleep(300000);

        tr_usage u;
        for (int i = 1; i <= 3; i++) {
                printf("usage, look %d:\n", i);
                tr_family_usage(viacg, &u, NULL);
                print_row("cgroup", &u);
                tr_family_usage(viaproc, &u, NULL);
                print_row("/proc", &u);
                usleep(500000);
        }

        tr_freeze_state st;
        tr_family_freeze(viacg, 2 * SEC, &st, NULL);
        tr_family_usage(viacg, &u, NULL);
        uint64_t before = u.cpu_usec.value;
        usleep(500000);
        tr_family_usage(viacg, &u, NULL);
        printf("\nsuspend: %s; CPU advanced %llu us in 0.5 s while frozen\n", tr_freeze_state_name(st),
               (unsigned long long) (u.cpu_usec.value - before));
        tr_family_thaw(viacg, 2 * SEC, &st, NULL);
        before = u.cpu_usec.value;
        usleep(500000);
        tr_family_usage(viacg, &u, NULL);
        printf("resume:  %s; CPU advanced %llu us in 0.5 s\n", tr_freeze_state_name(st),
               (unsigned long long) (u.cpu_usec.value - before));

        tr_pidset members = TR_PIDSET_INIT;
        tr_family_members(viacg, &members, NULL);
        tr_kill_result kr = { 0 };
        int r = tr_family_kill(viacg, 5 * SEC, &kr, &err);
        waitpid(root, NULL, 0);
        size_t alive = 0;
        for (size_t i = 0; i < members.n; i++)
                if (tr_pid_alive(members.pids[i]))
                        alive++;
        printf("\nkill: %s via %s in %.1f ms; %zu of %zu recorded members still alive\n",
               r >= 0 && kr.empty ? "empty" : "NOT empty", kr.method ? kr.method : "?",
               (double) kr.elapsed_usec / 1000, alive, members.n);
        tr_kill_result_free(&kr);
        tr_pidset_free(&members);

        tr_family_free(viaproc);
        int d = tr_cgroup_destroy(tr_family_cgroup(viacg), 5 * SEC, &err);
        tr_family_free(viacg);
        tr_cgroup *b = NULL;
        if (tr_cgroup_open(&hs, base, TR_CG_MAY_ACT | TR_CG_OWNED, &b, NULL) == 0) {
                tr_cgroup_destroy(b, 5 * SEC, NULL);
                tr_cgroup_free(b);
        }
        size_t left = 0;
        for (int i = 0; i < hs.n; i++) {
                char fs[PATH_MAX];
                if (tr_hierarchy_fs_path(&hs.h[i], base, fs, sizeof fs, NULL) == 0 && access(fs, F_OK) == 0)
                        left++;
        }
        printf("cleanup: %s; cgroup dirs left: %zu\n", d == 0 ? "job cgroups removed" : err.msg, left);
        rc = (alive == 0 && left == 0 && d == 0) ? 0 : 1;
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        return rc;
}
