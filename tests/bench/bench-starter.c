/* bench-starter - what procd-starter adds to a job launch, and how fast it empties a family.
 *
 *  1. plain fork + execve(/bin/true) + waitpid                           (baseline)
 *  2. the starter's path in-process: job cgroup create (all hierarchies) + limits (none) +
 *     clone3(CLONE_INTO_CGROUP) + register (embedded tr_family) + wait + kill/usage +
 *     cleanup (rmdir everywhere)                                         median of 100
 *     (also split into its phases)
 *  3. the procd-starter binary end to end (fork/exec of procd-starter -- /bin/true)
 *     and, with BENCH_SYSTEMD_ADDRESS=unix:path=..., the same in a systemd scope
 *  4. kill-to-empty of a 500-process family: the embedded tracker through the job cgroup
 *     vs the same family tracked by /proc only (kill spree)
 *
 * Everything lives under the cgroup /procd-bench-starter.<pid> and is removed at the end;
 * it signals only processes it started.  Needs root.  Run once; prints one table. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "starter/jobcg.h"
#include "starter/launch.h"
#include "starter/options.h"
#include "starter/track.h"
#include "trackers/util.h"
#include "benchutil.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define RUNS 100

static char base[64];
static char self_exe[PATH_MAX];

static uint64_t plain_fork_exec(void)
{
        uint64_t t0 = tr_now_usec();
        pid_t pid = fork();
        if (pid == 0) {
                char *argv[] = { "/bin/true", NULL };
                execve("/bin/true", argv, (char *[]) { NULL });
                _exit(127);
        }
        if (pid < 0)
                return 0;
        waitpid(pid, NULL, 0);
        return tr_now_usec() - t0;
}

typedef struct phases {
        uint64_t create, launch, reg, wait, end, cleanup, total;
} phases;

/* One job through the starter's modules; argv is the command. */
static int starter_once(const char *name, char **cmd, phases *ph, bool proc_only, uint64_t *kill_usec,
                        size_t wait_members)
{
        char *argv[32] = { "bench", "--no-procd", "--systemd=no", "--quiet", "--cgroup-base", base, "--name",
                           (char *) name, "--" };
        int n = 9;
        for (int i = 0; cmd[i] && n < 31; i++)
                argv[n++] = cmd[i];
        argv[n] = NULL;
        st_options o;
        tr_error err = { 0 };
        if (st_options_parse(n, argv, &o, &err) < 0) {
                fprintf(stderr, "options: %s\n", err.msg);
                return -1;
        }
        tr_hierarchies hs;
        static tr_hierarchies hs_cached;
        static bool have_hs;
        if (!have_hs) {
                if (tr_hierarchies_discover(&hs_cached, &err) < 0)
                        return -1;
                have_hs = true;
        }
        hs = hs_cached;
        st_launch l;
        uint64_t t0 = tr_now_usec();
        if (st_launch_prepare(&l, &o, &err) < 0) {
                fprintf(stderr, "prepare: %s\n", err.msg);
                return -1;
        }
        st_jobcg jc;
        if (st_jobcg_create(&jc, &hs, &o, &err) < 0) {
                fprintf(stderr, "cgroup: %s\n", err.msg);
                st_jobcg_destroy(&jc, 1000000);
                return -1;
        }
        uint64_t t1 = tr_now_usec();
        pid_t pid;
        int pidfd;
        if (st_launch_place(&l, jc.job, &err) < 0 || st_launch_start(&l, &pid, &pidfd, &err) < 0) {
                fprintf(stderr, "launch: %s\n", err.msg);
                st_jobcg_destroy(&jc, 1000000);
                return -1;
        }
        uint64_t t2 = tr_now_usec();
        uint64_t ticks = 0;
        tr_pid_start_ticks(pid, &ticks);
        st_track t;
        int r;
        if (proc_only) {
                memset(&t, 0, sizeof t);
                tr_procfam_spec spec = { .root_pid = pid, .root_start_ticks = ticks };
                r = tr_family_new(&spec, NULL, &t.family, &err);
        } else {
                r = st_track_open(&t, &o, &jc, pid, ticks, getuid(), &err);
        }
        if (r < 0) {
                fprintf(stderr, "track: %s\n", err.msg);
                return -1;
        }
        uint64_t t3 = tr_now_usec();
        if (wait_members) {
                /* a family of wait_members processes: wait until all are there, then kill */
                tr_cgroup *cg = jc.job;
                for (int i = 0; i < 3000; i++) {
                        tr_pidset s = TR_PIDSET_INIT;
                        tr_cgroup_members(cg, &s, NULL);
                        size_t have = s.n;
                        tr_pidset_free(&s);
                        if (have >= wait_members)
                                break;
                        usleep(10000);
                }
                tr_kill_result kr;
                memset(&kr, 0, sizeof kr);
                uint64_t k0 = tr_now_usec();
                tr_family_kill(t.family, 30000000, &kr, &err);
                /* empty = the cgroup holds nobody (the same check for both trackers) */
                bool pop = true;
                while (pop && tr_now_usec() - k0 < 30000000) {
                        if (tr_cgroup_populated(cg, &pop, NULL) < 0)
                                break;
                        if (pop)
                                usleep(1000);
                }
                *kill_usec = tr_now_usec() - k0;
                printf("  kill %s: method %s, rounds %u, empty %d, %zu survivors\n",
                       proc_only ? "/proc" : "cgroup", kr.method ? kr.method : "?", kr.rounds, kr.empty,
                       kr.survivors.n);
                tr_kill_result_free(&kr);
        }
        siginfo_t si;
        waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED);
        close(pidfd);
        uint64_t t4 = tr_now_usec();
        if (!proc_only) {
                bool empty;
                t.ops->kill(&t, 5000000, &empty, &err);
                tr_usage u;
                st_track_usage(&t, &u, &err);
        }
        if (proc_only)
                tr_family_free(t.family);
        else
                st_track_close(&t);
        uint64_t t5 = tr_now_usec();
        int left = st_jobcg_destroy(&jc, 5000000);
        uint64_t t6 = tr_now_usec();
        st_launch_free(&l);
        st_options_free(&o);
        if (ph) {
                ph->create = t1 - t0;
                ph->launch = t2 - t1;
                ph->reg = t3 - t2;
                ph->wait = t4 - t3;
                ph->end = t5 - t4;
                ph->cleanup = t6 - t5;
                ph->total = t6 - t0;
        }
        return left ? -1 : 0;
}

static uint64_t binary_once(const char *starter, const char *systemd_address)
{
        char name[64];
        static int k;
        snprintf(name, sizeof name, "bin%d", k++);
        uint64_t t0 = tr_now_usec();
        pid_t pid = fork();
        if (pid == 0) {
                int nul = open("/dev/null", O_WRONLY);
                if (nul >= 0)
                        dup2(nul, 2);
                if (systemd_address)
                        execl(starter, "procd-starter", "--no-procd", "--systemd=yes", "--systemd-address",
                              systemd_address, "--quiet", "--name", name, "--", "/bin/true", (char *) NULL);
                else
                        execl(starter, "procd-starter", "--no-procd", "--systemd=no", "--quiet", "--cgroup-base",
                              base, "--name", name, "--", "/bin/true", (char *) NULL);
                _exit(127);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                fprintf(stderr, "procd-starter run failed (%d)\n", st);
        return tr_now_usec() - t0;
}

static int spawn_family(int n)
{
        for (int i = 1; i < n; i++) {
                pid_t p = fork();
                if (p == 0) {
                        for (;;)
                                pause();
                }
                if (p < 0)
                        return 1;
        }
        for (;;)
                pause();
}

static void remove_base(void)
{
        tr_hierarchies hs;
        if (tr_hierarchies_discover(&hs, NULL) < 0)
                return;
        for (int i = 0; i < hs.n; i++) {
                char dir[PATH_MAX];
                if (tr_hierarchy_fs_path(&hs.h[i], base, dir, sizeof dir, NULL) >= 0 && access(dir, F_OK) == 0 &&
                    rmdir(dir) < 0)
                        fprintf(stderr, "could not remove %s: %s\n", dir, strerror(errno));
        }
}

int main(int argc, char **argv)
{
        if (argc > 2 && strcmp(argv[1], "spawn") == 0)
                return spawn_family(atoi(argv[2]));
        if (geteuid() != 0) {
                fprintf(stderr, "bench-starter needs root (cgroups)\n");
                return 2;
        }
        ssize_t sl = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        if (sl <= 0)
                return 2;
        self_exe[sl] = '\0';
        snprintf(base, sizeof base, "/procd-bench-starter.%d", (int) getpid());
        char starter[PATH_MAX];
        snprintf(starter, sizeof starter, "%s", self_exe);
        char *slash = strrchr(starter, '/');
        *slash = '\0';
        snprintf(starter + strlen(starter), sizeof starter - strlen(starter), "/../../starter/procd-starter");
        /* orphans of killed families come to us, not to a PID 1 that never reaps */
        prctl(PR_SET_CHILD_SUBREAPER, 1);

        static uint64_t plain[RUNS], total[RUNS], create[RUNS], launch[RUNS], reg[RUNS], waitv[RUNS], endv[RUNS],
                cleanup[RUNS], bin[RUNS];
        char *cmd_true[] = { "/bin/true", NULL };
        for (int i = 0; i < 5; i++) { /* warm up */
                plain_fork_exec();
                starter_once("warm", cmd_true, NULL, false, NULL, 0);
        }
        int fails = 0;
        for (int i = 0; i < RUNS; i++) {
                plain[i] = plain_fork_exec();
                phases ph;
                char name[32];
                snprintf(name, sizeof name, "j%d", i);
                if (starter_once(name, cmd_true, &ph, false, NULL, 0) < 0)
                        fails++;
                total[i] = ph.total;
                create[i] = ph.create;
                launch[i] = ph.launch;
                reg[i] = ph.reg;
                waitv[i] = ph.wait;
                endv[i] = ph.end;
                cleanup[i] = ph.cleanup;
        }
        bool have_bin = access(starter, X_OK) == 0;
        if (have_bin)
                for (int i = 0; i < RUNS; i++)
                        bin[i] = binary_once(starter, NULL);
        /* systemd mode, when a manager's address is given (e.g. the test manager of FACTS.md) */
        const char *sd_addr = getenv("BENCH_SYSTEMD_ADDRESS");
        static uint64_t sd[RUNS];
        if (have_bin && sd_addr)
                for (int i = 0; i < RUNS; i++)
                        sd[i] = binary_once(starter, sd_addr);

        /* kill-to-empty of 500 processes, 3 runs each, median */
        char nbuf[16];
        snprintf(nbuf, sizeof nbuf, "%d", 500);
        char *cmd_fam[] = { self_exe, "spawn", nbuf, NULL };
        uint64_t kcg[3], kproc[3];
        for (int i = 0; i < 3; i++) {
                char name[32];
                snprintf(name, sizeof name, "kcg%d", i);
                kcg[i] = 0;
                if (starter_once(name, cmd_fam, NULL, false, &kcg[i], 500) < 0)
                        fails++;
                snprintf(name, sizeof name, "kproc%d", i);
                kproc[i] = 0;
                if (starter_once(name, cmd_fam, NULL, true, &kproc[i], 500) < 0)
                        fails++;
                while (waitpid(-1, NULL, WNOHANG) > 0) /* our own reparented orphans */
                        ;
        }
        remove_base();

        uint64_t mp = bench_median(plain, RUNS), mt = bench_median(total, RUNS);
        printf("\nprocd-starter benchmark (%d runs each, medians, microseconds; hierarchies: %s)\n", RUNS,
               "this host");
        printf("| what | median | ratio |\n|---|---:|---:|\n");
        printf("| plain fork+exec+wait of /bin/true | %llu us | 1.0x |\n", (unsigned long long) mp);
        printf("| starter path in-process (create+clone3+register+wait+end+cleanup) | %llu us | %.1fx |\n",
               (unsigned long long) mt, (double) mt / (double) mp);
        printf("|   job cgroup create (all hierarchies) | %llu us | |\n", (unsigned long long) bench_median(create, RUNS));
        printf("|   clone3 into the cgroup + exec handshake | %llu us | |\n", (unsigned long long) bench_median(launch, RUNS));
        printf("|   register (embedded tr_family) | %llu us | |\n", (unsigned long long) bench_median(reg, RUNS));
        printf("|   wait for /bin/true | %llu us | |\n", (unsigned long long) bench_median(waitv, RUNS));
        printf("|   end (kill check + final usage) | %llu us | |\n", (unsigned long long) bench_median(endv, RUNS));
        printf("|   cleanup (rmdir everywhere) | %llu us | |\n", (unsigned long long) bench_median(cleanup, RUNS));
        if (have_bin) {
                uint64_t mb = bench_median(bin, RUNS);
                printf("| procd-starter binary end to end | %llu us | %.1fx |\n", (unsigned long long) mb,
                       (double) mb / (double) mp);
        }
        if (have_bin && sd_addr) {
                uint64_t ms = bench_median(sd, RUNS);
                printf("| procd-starter binary, systemd scope (systemd --user) | %llu us | %.1fx |\n",
                       (unsigned long long) ms, (double) ms / (double) mp);
        }
        uint64_t mk = bench_median(kcg, 3), mkp = bench_median(kproc, 3);
        printf("| kill-to-empty, 500 processes, job cgroup (embedded) | %llu us | 1.0x |\n", (unsigned long long) mk);
        printf("| kill-to-empty, 500 processes, /proc tracker (spree) | %llu us | %.1fx |\n",
               (unsigned long long) mkp, mk ? (double) mkp / (double) mk : 0.0);
        if (fails)
                printf("(%d runs failed)\n", fails);
        return fails ? 1 : 0;
}
