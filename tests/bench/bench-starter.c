/* bench-starter - what procd-starter adds to a job launch, and how fast it empties a family.
 *
 *  1. plain fork + execve(/bin/true) + waitpid                           (baseline)
 *  2. the starter's path in-process, as starter/main.c runs it: job cgroup create + guard,
 *     clone3(CLONE_INTO_CGROUP) to the gate, register (embedded tr_family), open the gate,
 *     sweep the base's orphans (none here), wait, end (kill when populated, final usage),
 *     cleanup (guard dismissed, rmdir, guard reaped) (also split into its phases)
 *  3. the procd-starter binary end to end (fork/exec of procd-starter -- /bin/true):
 *     embedded (--no-procd --quiet: no figure read but the OOM count), embedded with a
 *     report (--report: every figure), and registered with a procd (build/procd/procd
 *     started here in a cgroup of its own, its socket and state file on a tmpfs mounted for
 *     the run, as /run is on a Debian node; procd-starter --socket ... --require-procd); with
 *     BENCH_SYSTEMD_ADDRESS=unix:path=..., also in a systemd scope
 *  4. kill-to-empty of a 500-process family: the embedded tracker through the job cgroup
 *     vs the same family tracked by /proc only (kill spree)
 * Medians of RUNS launches each, the plain fork+exec measured in the same run, the load
 * average and the target (issue 20) beside each row.
 *
 * Everything lives under the cgroup /procd-bench-starter.<pid> (jobs/ holds the job
 * cgroups, procd/ the daemon) and is removed at the end; it signals only processes it
 * started.  Every phase runs under an alarm: a phase that does not end in time is named on
 * stderr, what the bench started is killed, the cgroups removed, and the bench exits 1.
 * Needs root.  Run once; prints one table. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classic-client.h"
#include "starter/guard.h"
#include "starter/jobcg.h"
#include "starter/launch.h"
#include "starter/options.h"
#include "starter/track.h"
#include "trackers/util.h"
#include "benchutil.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define RUNS 200 /* issue 20: the median of 200 launches */
#define WARMUP 5
#define LAUNCH_TIMEOUT_S 30  /* one launch, in-process or the binary */
#define KILL_TIMEOUT_S 120   /* one kill-to-empty of 500 processes */
#define TARGET_EMBEDDED_USEC 3000
#define TARGET_PROCD_USEC 4000

/* What the run made and what a timed-out phase must undo. */
typedef struct bench {
        char top[64];               /* /procd-bench-starter.<pid> */
        char jobs[80];              /* <top>/jobs: the jobs' --cgroup-base */
        char self_exe[PATH_MAX];
        char starter[PATH_MAX];     /* build/starter/procd-starter */
        tr_hierarchies hs;
        tr_cgroup *svc_cg;          /* <top>/procd: the daemon's cgroup */
        cc_daemon procd;            /* pid 0: not running */
        char state_dir[64];         /* tmpfs for procd's socket and state file ("": none) */
        char sock[96];
        char report[64];            /* the report file of the --report runs */
        const char *volatile phase; /* what runs now, for the alarm */
        volatile int run;
        volatile pid_t child;       /* a procd-starter binary or guard in flight (0: none) */
        sigjmp_buf timed_out;
} bench;

/* The alarm's way back to main (a handler has no argument): set while phases run. */
static bench *alarm_bench;

static void on_alarm(int sig)
{
        (void) sig;
        char msg[160];
        int n = snprintf(msg, sizeof msg, "bench-starter: phase \"%s\" (run %d) did not end in time; stopping\n",
                         alarm_bench->phase, alarm_bench->run);
        if (n > 0 && write(2, msg, (size_t) n) < 0)
                _exit(1);
        siglongjmp(alarm_bench->timed_out, 1);
}

static void phase_start(bench *b, const char *phase, int run, unsigned timeout_s)
{
        b->phase = phase;
        b->run = run;
        alarm(timeout_s);
}

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

/* One job through the starter's modules in main.c's order; cmd is the command.  proc_only:
 * tracked by /proc alone (the kill-to-empty comparison). */
static int starter_once(bench *b, const char *name, char **cmd, phases *ph, bool proc_only, uint64_t *kill_usec,
                        size_t wait_members)
{
        char *argv[32] = { "bench", "--no-procd", "--systemd=no", "--quiet", "--cgroup-base", b->jobs, "--name",
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
        st_launch l;
        uint64_t t0 = tr_now_usec();
        if (st_launch_prepare(&l, &o, &err) < 0) {
                fprintf(stderr, "prepare: %s\n", err.msg);
                st_launch_free(&l);
                st_options_free(&o);
                return -1;
        }
        st_jobcg jc;
        st_guard guard = ST_GUARD_INIT;
        int rc = -1;
        if (st_jobcg_create(&jc, &b->hs, &o, &err) < 0 || st_guard_start(&guard, &jc, &l.ns, -1, b->starter, &err) < 0) {
                fprintf(stderr, "cgroup/guard: %s\n", err.msg);
                goto destroy;
        }
        b->child = guard.pid;
        uint64_t t1 = tr_now_usec();
        pid_t pid;
        int pidfd = -1;
        if (st_launch_place(&l, jc.job, &err) < 0 || st_launch_start(&l, &pid, &pidfd, &err) < 0) {
                fprintf(stderr, "launch: %s\n", err.msg);
                goto destroy;
        }
        uint64_t t2 = tr_now_usec();
        uint64_t ticks = 0;
        tr_pid_start_ticks(pid, &ticks);
        st_track t;
        memset(&t, 0, sizeof t);
        int r;
        if (proc_only) {
                tr_procfam_spec spec = { .root_pid = pid, .root_start_ticks = ticks };
                r = tr_family_new(&spec, NULL, &t.family, &err);
        } else {
                r = st_track_open(&t, &o, &jc, pid, ticks, getuid(), NULL, &err);
        }
        /* tracked: the gate opens and the command runs (as main.c does) */
        if (r < 0 || st_launch_release(&l, pid, &pidfd, &err) < 0) {
                fprintf(stderr, "track/release: %s\n", err.msg);
                st_launch_close_gate(&l);
                tr_kill_result kr;
                memset(&kr, 0, sizeof kr);
                tr_cgroup_kill(jc.job, 5000000, &kr, NULL);
                tr_kill_result_free(&kr);
                if (pidfd >= 0) {
                        siginfo_t si;
                        waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED);
                        close(pidfd);
                }
                if (r >= 0 && !proc_only)
                        st_track_close(&t);
                else if (r >= 0)
                        tr_family_free(t.family);
                goto destroy;
        }
        st_jobcg_sweep(&b->hs, &o); /* as main.c: while the job's exec goes on */
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
        if (pidfd >= 0) { /* -1: exec failed, the child was reaped by the release */
                waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED);
                close(pidfd);
        }
        uint64_t t4 = tr_now_usec();
        if (!proc_only) {
                /* main.c's end: kill only what is left (nothing, for /bin/true), final usage */
                bool populated = true, empty;
                tr_family_populated(t.family, &populated, &err);
                if (populated)
                        t.ops->kill(&t, 5000000, &empty, &err);
                tr_usage u;
                st_track_usage(&t, st_track_usage_wanted(&o), &u, &err);
                st_track_close(&t);
        } else {
                tr_family_free(t.family);
        }
        uint64_t t5 = tr_now_usec();
        rc = 0;
        st_guard_dismiss(&guard); /* as main.c: it dies while the cgroups go */
        if (st_jobcg_destroy(&jc, 5000000) != 0)
                rc = -1;
        st_guard_stop(&guard);
        b->child = 0;
        uint64_t t6 = tr_now_usec();
        if (ph) {
                ph->create = t1 - t0;
                ph->launch = t2 - t1;
                ph->reg = t3 - t2;
                ph->wait = t4 - t3;
                ph->end = t5 - t4;
                ph->cleanup = t6 - t5;
                ph->total = t6 - t0;
        }
        st_launch_free(&l);
        st_options_free(&o);
        return rc;
destroy:
        st_jobcg_destroy(&jc, 5000000);
        st_guard_stop(&guard);
        b->child = 0;
        st_launch_free(&l);
        st_options_free(&o);
        return -1;
}

typedef enum { BIN_EMBEDDED, BIN_REPORT, BIN_PROCD, BIN_SYSTEMD } bin_mode;

/* The procd-starter binary, end to end; 0 when it failed. */
static uint64_t binary_once(bench *b, bin_mode mode, const char *systemd_address)
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
                if (mode == BIN_SYSTEMD)
                        execl(b->starter, "procd-starter", "--no-procd", "--systemd=yes", "--systemd-address",
                              systemd_address, "--quiet", "--name", name, "--", "/bin/true", (char *) NULL);
                else if (mode == BIN_PROCD)
                        execl(b->starter, "procd-starter", "--socket", b->sock, "--require-procd", "--systemd=no",
                              "--quiet", "--cgroup-base", b->jobs, "--name", name, "--", "/bin/true", (char *) NULL);
                else if (mode == BIN_REPORT)
                        execl(b->starter, "procd-starter", "--no-procd", "--systemd=no", "--quiet", "--report",
                              b->report, "--cgroup-base", b->jobs, "--name", name, "--", "/bin/true", (char *) NULL);
                else
                        execl(b->starter, "procd-starter", "--no-procd", "--systemd=no", "--quiet", "--cgroup-base",
                              b->jobs, "--name", name, "--", "/bin/true", (char *) NULL);
                _exit(127);
        }
        if (pid < 0)
                return 0;
        b->child = pid;
        int st = 0;
        waitpid(pid, &st, 0);
        b->child = 0;
        uint64_t dt = tr_now_usec() - t0;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "procd-starter run failed (status %#x)\n", (unsigned) st);
                return 0;
        }
        return dt;
}

/* RUNS launches of the binary after WARMUP; the median (0 when any failed), the load then. */
static uint64_t binary_median(bench *b, bin_mode mode, const char *phase, const char *systemd_address, char *load,
                              size_t load_size)
{
        static uint64_t v[RUNS];
        uint64_t failed = 0;
        for (int i = -WARMUP; i < RUNS; i++) {
                phase_start(b, phase, i, LAUNCH_TIMEOUT_S);
                uint64_t dt = binary_once(b, mode, systemd_address);
                failed += dt == 0;
                if (i >= 0)
                        v[i] = dt;
        }
        alarm(0);
        bench_load_note(load, load_size);
        return failed ? 0 : bench_median(v, RUNS);
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

/* procd in <top>/procd, its socket and state file on a tmpfs: 0, or -1 (said why). */
static int procd_start(bench *b)
{
        char svc[96];
        tr_error err = { 0 };
        snprintf(svc, sizeof svc, "%s/procd", b->top);
        if (tr_cgroup_create(&b->hs, svc, &b->svc_cg, &err) < 0) {
                fprintf(stderr, "bench-starter: cgroup %s: %s\n", svc, err.msg);
                return -1;
        }
        if (bench_tmpfs_mount("bench-starter", b->state_dir, sizeof b->state_dir) < 0)
                return -1;
        char state[96];
        snprintf(b->sock, sizeof b->sock, "%s/procd.sock", b->state_dir);
        snprintf(state, sizeof state, "%s/procd.state", b->state_dir);
        const char *const args[] = { "--socket", b->sock, "--state-file", state, NULL };
        if (cc_daemon_start_with(&b->procd, args, bench_enter_cgroup, b->svc_cg) < 0) {
                fprintf(stderr, "bench-starter: procd did not start: %s\n", b->procd.errtext);
                return -1;
        }
        return 0;
}

/* Stop what runs (a binary or guard in flight, procd), kill and remove <top>, the tmpfs. */
static void cleanup(bench *b)
{
        if (b->child > 1) { /* ours, by pid */
                kill(b->child, SIGKILL);
                waitpid(b->child, NULL, 0);
                b->child = 0;
        }
        if (b->procd.pid > 1)
                cc_daemon_stop(&b->procd);
        bench_tmpfs_drop(b->state_dir);
        b->state_dir[0] = '\0';
        if (b->report[0]) /* a --report run cut short */
                unlink(b->report);
        tr_cgroup_free(b->svc_cg);
        b->svc_cg = NULL;
        tr_cgroup *top = NULL;
        if (tr_cgroup_open(&b->hs, b->top, TR_CG_MAY_ACT | TR_CG_OWNED, &top, NULL) >= 0) {
                tr_kill_result kr;
                memset(&kr, 0, sizeof kr);
                tr_cgroup_kill(top, 5000000, &kr, NULL); /* jobs left at a gate, procd */
                tr_kill_result_free(&kr);
                tr_error err = { 0 };
                if (tr_cgroup_destroy(top, 5000000, &err) < 0)
                        fprintf(stderr, "bench-starter: could not remove %s: %s\n", b->top, err.msg);
                tr_cgroup_free(top);
        }
        while (waitpid(-1, NULL, WNOHANG) > 0) /* our own reparented orphans */
                ;
}

static void row(const char *what, uint64_t median, uint64_t plain, uint64_t target, const char *load)
{
        char tgt[48] = "";
        if (target)
                snprintf(tgt, sizeof tgt, "<= %.1f ms: %s", (double) target / 1000.0,
                         median && median <= target ? "met" : "NOT met");
        if (!median) {
                printf("| %s | failed | | %s | %s |\n", what, tgt, load);
                return;
        }
        char ratio[16] = "";
        if (plain)
                snprintf(ratio, sizeof ratio, "%.1fx", (double) median / (double) plain);
        printf("| %s | %llu us | %s | %s | %s |\n", what, (unsigned long long) median, ratio, tgt, load);
}

int main(int argc, char **argv)
{
        if (argc > 2 && strcmp(argv[1], "spawn") == 0)
                return spawn_family(atoi(argv[2]));
        static bench b;
        int r = bench_daemon_setup("bench-starter", &b.hs);
        if (r)
                return r;
        ssize_t sl = readlink("/proc/self/exe", b.self_exe, sizeof b.self_exe - 1);
        if (sl <= 0)
                return 2;
        b.self_exe[sl] = '\0';
        snprintf(b.top, sizeof b.top, "/procd-bench-starter.%d", (int) getpid());
        snprintf(b.jobs, sizeof b.jobs, "%s/jobs", b.top);
        snprintf(b.starter, sizeof b.starter, "%s", b.self_exe);
        char *slash = strrchr(b.starter, '/');
        *slash = '\0';
        snprintf(b.starter + strlen(b.starter), sizeof b.starter - strlen(b.starter), "/../../starter/procd-starter");

        alarm_bench = &b;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sigaction(SIGALRM, &sa, NULL);
        if (sigsetjmp(b.timed_out, 1)) {
                cleanup(&b);
                return 1;
        }

        static uint64_t plain[RUNS], total[RUNS], create[RUNS], launch[RUNS], reg[RUNS], waitv[RUNS], endv[RUNS],
                cleanupv[RUNS];
        char *cmd_true[] = { "/bin/true", NULL };
        int fails = 0;
        for (int i = -WARMUP; i < RUNS; i++) {
                phase_start(&b, "plain fork+exec, in-process starter path", i, LAUNCH_TIMEOUT_S);
                uint64_t p = plain_fork_exec();
                phases ph = { 0 };
                char name[32];
                snprintf(name, sizeof name, "j%d", i + WARMUP);
                if (starter_once(&b, name, cmd_true, &ph, false, NULL, 0) < 0)
                        fails++;
                if (i < 0)
                        continue;
                plain[i] = p;
                total[i] = ph.total;
                create[i] = ph.create;
                launch[i] = ph.launch;
                reg[i] = ph.reg;
                waitv[i] = ph.wait;
                endv[i] = ph.end;
                cleanupv[i] = ph.cleanup;
        }
        alarm(0);
        char load_inproc[96], load_emb[96] = "", load_procd[96] = "", load_sd[96] = "", load_kill[96];
        bench_load_note(load_inproc, sizeof load_inproc);

        bool have_bin = access(b.starter, X_OK) == 0;
        uint64_t m_emb = 0, m_rep = 0, m_procd = 0, m_sd = 0, m_plain_bin = 0;
        char load_rep[96] = "";
        bool procd_up = false;
        if (have_bin) {
                static uint64_t plain2[RUNS];
                m_emb = binary_median(&b, BIN_EMBEDDED, "procd-starter --no-procd", NULL, load_emb, sizeof load_emb);
                /* with a report every figure is read: the job's cgroup in v1 blkio and pids too */
                snprintf(b.report, sizeof b.report, "/tmp/procd-bench-starter.%d.json", (int) getpid());
                m_rep = binary_median(&b, BIN_REPORT, "procd-starter --no-procd --report", NULL, load_rep,
                                      sizeof load_rep);
                unlink(b.report);
                b.report[0] = '\0'; /* gone: nothing for cleanup() */
                procd_up = procd_start(&b) == 0;
                if (procd_up)
                        m_procd = binary_median(&b, BIN_PROCD, "procd-starter with procd", NULL, load_procd,
                                                sizeof load_procd);
                /* the baseline again, right after the binaries (same run) */
                for (int i = 0; i < RUNS; i++) {
                        phase_start(&b, "plain fork+exec", i, LAUNCH_TIMEOUT_S);
                        plain2[i] = plain_fork_exec();
                }
                alarm(0);
                m_plain_bin = bench_median(plain2, RUNS);
                if (procd_up)
                        cc_daemon_stop(&b.procd);
        }
        /* systemd mode, when a manager's address is given (e.g. the test manager of FACTS.md) */
        const char *sd_addr = getenv("BENCH_SYSTEMD_ADDRESS");
        if (have_bin && sd_addr)
                m_sd = binary_median(&b, BIN_SYSTEMD, "procd-starter --systemd=yes", sd_addr, load_sd, sizeof load_sd);

        /* kill-to-empty of 500 processes, 3 runs each, median */
        char nbuf[16];
        snprintf(nbuf, sizeof nbuf, "%d", 500);
        char *cmd_fam[] = { b.self_exe, "spawn", nbuf, NULL };
        uint64_t kcg[3], kproc[3];
        for (int i = 0; i < 3; i++) {
                char name[32];
                snprintf(name, sizeof name, "kcg%d", i);
                kcg[i] = 0;
                phase_start(&b, "kill-to-empty, job cgroup", i, KILL_TIMEOUT_S);
                if (starter_once(&b, name, cmd_fam, NULL, false, &kcg[i], 500) < 0)
                        fails++;
                snprintf(name, sizeof name, "kproc%d", i);
                kproc[i] = 0;
                phase_start(&b, "kill-to-empty, /proc", i, KILL_TIMEOUT_S);
                if (starter_once(&b, name, cmd_fam, NULL, true, &kproc[i], 500) < 0)
                        fails++;
                while (waitpid(-1, NULL, WNOHANG) > 0) /* our own reparented orphans */
                        ;
        }
        alarm(0);
        bench_load_note(load_kill, sizeof load_kill);
        alarm_bench = NULL;
        cleanup(&b);

        uint64_t mp = bench_median(plain, RUNS), mt = bench_median(total, RUNS);
        printf("\nprocd-starter benchmark (%d runs each after %d to warm up, medians; target: issue 20)\n", RUNS, WARMUP);
        printf("| what | median | ratio | target | load |\n|---|---:|---:|---|---|\n");
        row("plain fork+exec+wait of /bin/true", mp, mp, 0, load_inproc);
        row("starter path in-process (create+guard+clone3+register+gate+wait+end+cleanup)", mt, mp, 0, load_inproc);
        row("  job cgroup create + guard", bench_median(create, RUNS), 0, 0, "");
        row("  clone3 into the cgroup, to the gate", bench_median(launch, RUNS), 0, 0, "");
        row("  register (embedded tr_family) + open the gate + sweep", bench_median(reg, RUNS), 0, 0, "");
        row("  wait for /bin/true", bench_median(waitv, RUNS), 0, 0, "");
        row("  end (kill when populated + final usage)", bench_median(endv, RUNS), 0, 0, "");
        row("  cleanup (guard dismissed, rmdir, guard reaped)", bench_median(cleanupv, RUNS), 0, 0, "");
        if (have_bin) {
                row("plain fork+exec+wait of /bin/true (after the binaries)", m_plain_bin, m_plain_bin, 0,
                    load_procd[0] ? load_procd : load_emb);
                row("procd-starter binary end to end, embedded (--no-procd)", m_emb, m_plain_bin, TARGET_EMBEDDED_USEC,
                    load_emb);
                row("procd-starter binary end to end, embedded with its report (--report: every figure)", m_rep,
                    m_plain_bin, 0, load_rep);
                if (procd_up)
                        row("procd-starter binary end to end, with procd (--socket, --require-procd)", m_procd,
                            m_plain_bin, TARGET_PROCD_USEC, load_procd);
                else
                        printf("| procd-starter binary end to end, with procd | procd did not start | | <= 4.0 ms | |\n");
        } else {
                printf("(no %s: the binary rows are missing)\n", b.starter);
        }
        if (have_bin && sd_addr)
                row("procd-starter binary, systemd scope (systemd --user)", m_sd, m_plain_bin, 0, load_sd);
        uint64_t mk = bench_median(kcg, 3), mkp = bench_median(kproc, 3);
        row("kill-to-empty, 500 processes, job cgroup (embedded)", mk, mk, 0, load_kill);
        row("kill-to-empty, 500 processes, /proc tracker (spree)", mkp, mk, 0, load_kill);
        bool bin_failed = have_bin && (!m_emb || !m_rep || (procd_up && !m_procd) || (sd_addr && !m_sd));
        if (fails)
                printf("(%d in-process runs failed)\n", fails);
        if (bin_failed)
                printf("(procd-starter binary runs failed)\n");
        return fails || bin_failed || (have_bin && !procd_up) ? 1 : 0;
}
