/* bench-classic.c - the classic (condor_procd FIFO) transport against the D-Bus one
 * (run by hand as root; not a test).
 *
 *   bench-classic [--short] [--families N] [--background N] [--calls N] [--daemon PATH]
 *                 [--no-state] [--state-tmpfs] [--fifo-usage-only] [--classic-only]
 *                 [--exact-reads] [--register-gap-ms MS] [--placement same|apart|both|any]
 *                                     (--short: 100 families, 1,000 background, 1,000 calls;
 *                                      --fifo-usage-only: no D-Bus GetUsage loop, so that a
 *                                      profiler attached to procd sees the classic path alone;
 *                                      --classic-only: procd without --socket, as HTCondor
 *                                      runs it: no D-Bus listener or client, every family
 *                                      through the FIFO;
 *                                      --exact-reads, with --daemon classic-floor: the floor
 *                                      also reads the counter files an exact answer needs,
 *                                      see exact_reads_setup)
 *
 * Starts build/procd/procd (or --daemon, FIFO only: HTCondor's condor_procd, or
 * build/tests/bench/classic-floor, the protocol alone with no work behind it) with
 * -A <tmp>/procd_pipe --socket <tmp>/procd.sock inside a cgroup of its own under
 * /procd-bench-classic.<pid> (so that every family gets a cgroup at REGISTER), N background
 * sleepers (default 5,000) and N families (default 1,000, half registered through each
 * transport), then reports, per transport, the daemon's CPU per call (all its threads'
 * schedstat run time, and utime+stime from /proc/PID/stat in clock ticks) and the client's
 * wall time per call, for REGISTER_SUBFAMILY (cgroup creation included), GET_USAGE and
 * KILL_FAMILY; then UNREGISTER_FAMILY of half the families while their processes live (the
 * cgroups wait for removal, the others still registered) and of the rest once their
 * processes are gone (the cgroup removed at once).  --no-state runs procd without its state
 * file (--state-file ""), to tell the state write's share; --state-tmpfs keeps it on a tmpfs
 * mounted for the run (a packaged procd keeps it under /run, a tmpfs on Debian nodes, where
 * fsync costs nothing; by default it lies next to the socket in /tmp, here on the disk).
 * --register-gap-ms MS pauses MS ms before each FIFO REGISTER (not counted): back to back,
 * a registration finds the kernel's cgroup migration lock still in its writer mode from the
 * one before and skips the RCU grace period the first move after a pause waits for (see
 * docs/admin.md, favordynmods); jobs on a node start seconds apart, so each pays it.
 * --placement: where the GET_USAGE loops run.  A request and its reply wake the other side
 * through a pipe (a sync wakeup), and the scheduler then sometimes keeps client and daemon on
 * one CPU and sometimes not; the two cost the daemon different CPU (here, with nothing else
 * running: the floor 8.5 us on one CPU, 19-21 us apart; procd 20 and 32 us), so a run left to
 * the scheduler measured one mode or the other or a mix (the floor's 8.2-21.6 us in NOTES
 * 14.19).  same: the client and every thread of the daemon on one CPU this program may use
 * (not CPU 0 where another is allowed); apart: the daemon on another (another core where
 * the topology shows one); both (the default): the loops once each way, same first; any:
 * unpinned, as before.  The CPUs are printed; only the loops are pinned, each side's mask is
 * restored after them, and a loop that could not be pinned is labelled "any".
 * Everything it started is killed
 * by pid and every cgroup it made is removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "classic-client.h"
#include "harness.h"
#include "procd/client.h"
#include "trackers/cgroup.h"
#include "trackers/util.h"

typedef struct cpu_mark {
        uint64_t run_ns;  /* Σ over the daemon's threads of schedstat's time on CPU */
        uint64_t ticks;   /* utime + stime of /proc/PID/stat */
        uint64_t wall_usec;
        uint64_t rw_syscalls; /* syscr + syscw of /proc/PID/io */
} cpu_mark;

static cpu_mark mark(pid_t pid)
{
        cpu_mark m = { .wall_usec = tr_now_usec() };
        bench_proc_cpu(pid, &m.ticks, &m.run_ns);
        m.rw_syscalls = bench_proc_rw_syscalls(pid);
        return m;
}

static void report(const char *what, const char *transport, int calls, cpu_mark a, cpu_mark b)
{
        long hz = sysconf(_SC_CLK_TCK);
        double run_us = (double) (b.run_ns - a.run_ns) / 1e3 / calls;
        double tick_us = (double) (b.ticks - a.ticks) * 1e6 / (double) hz / calls;
        double wall_us = (double) (b.wall_usec - a.wall_usec) / calls;
        double rw_per_call = (double) (b.rw_syscalls - a.rw_syscalls) / calls;
        char load[96];
        printf("%-20s %-7s %6d calls  server CPU %9.1f us/call (stat ticks %9.1f us/call)  wall %9.1f us/call  "
               "read+write syscalls %6.1f/call  %s\n",
               what, transport, calls, run_us, tick_us, wall_us, rw_per_call, bench_load_note(load, sizeof load));
        fflush(stdout);
}

/* Every thread of pid onto the CPUs of mask (their scheduler affinity). */
static int pin_threads(pid_t pid, const cpu_set_t *mask)
{
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", (int) pid);
        DIR *d = opendir(path);
        if (!d)
                return -errno;
        int r = 0;
        for (struct dirent *de; (de = readdir(d));) {
                pid_t tid = atoi(de->d_name);
                if (tid > 0 && sched_setaffinity(tid, sizeof *mask, mask) < 0 && errno != ESRCH)
                        r = -errno;
        }
        closedir(d);
        return r;
}

typedef struct placement {
        const char *name; /* "same", "apart", "any" */
        int client_cpu, daemon_cpu; /* -1: unpinned */
} placement;

/* Whether cpu b is a hardware thread of cpu a's core (its thread_siblings_list, "0-1" or
 * "0,4"); false when the list cannot be read. */
static bool smt_siblings(int a, int b)
{
        char path[96], list[256] = "";
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", a);
        FILE *f = fopen(path, "re");
        if (!f)
                return false;
        bool in = false;
        if (fgets(list, sizeof list, f))
                for (char *p = list; *p && !in;) {
                        char *end;
                        long lo = strtol(p, &end, 10), hi = lo;
                        if (end == p)
                                break;
                        if (*end == '-')
                                hi = strtol(end + 1, &end, 10);
                        in = b >= lo && b <= hi;
                        p = *end == ',' ? end + 1 : end;
                        if (*end != ',')
                                break;
                }
        fclose(f);
        return in;
}

/* The placements --placement asks for (same, apart, both, any), from the CPUs this program
 * may use: at most 2.  The first CPU is the first allowed one other than CPU 0 where there is
 * one (CPU 0 takes most of the interrupts); apart, the daemon's is on another core where the
 * topology shows one (not a hardware thread of the first CPU's core). */
static int placements_for(const char *want, const cpu_set_t *allowed, placement out[2])
{
        int first = -1, second = -1, sibling = -1;
        for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, allowed) && (first < 0 || (first == 0 && c > 0)))
                        first = c;
        for (int c = 0; c < CPU_SETSIZE && second < 0; c++)
                if (c != first && CPU_ISSET(c, allowed)) {
                        if (!smt_siblings(first, c))
                                second = c;
                        else if (sibling < 0)
                                sibling = c;
                }
        if (second < 0)
                second = sibling;
        int n = 0;
        if (!strcmp(want, "any"))
                out[n++] = (placement) { "any", -1, -1 };
        if (!strcmp(want, "same") || !strcmp(want, "both"))
                out[n++] = (placement) { "same", first, first };
        if (!strcmp(want, "apart") || !strcmp(want, "both")) {
                if (second < 0)
                        printf("bench-classic: one CPU allowed: no \"apart\" placement\n");
                else
                        out[n++] = (placement) { "apart", first, second };
        }
        for (int i = 0; i < n; i++)
                if (out[i].client_cpu >= 0)
                        printf("bench-classic: placement %s: client on CPU %d, daemon on CPU %d%s\n", out[i].name,
                               out[i].client_cpu, out[i].daemon_cpu,
                               out[i].client_cpu != out[i].daemon_cpu && out[i].daemon_cpu == sibling
                                       ? " (hardware threads of one core: no other core allowed)"
                                       : "");
        return n;
}

/* Pin the client (this process) and every thread of the daemon as p says (p NULL: back to
 * the masks they had, client_mask and daemon_mask).  Whether both were pinned: when not,
 * the loops run where they are, and their figures are labelled "any". */
static bool place(const placement *p, pid_t daemon, const cpu_set_t *client_mask, const cpu_set_t *daemon_mask)
{
        cpu_set_t c = *client_mask, d = *daemon_mask;
        if (p && p->client_cpu >= 0) {
                CPU_ZERO(&c);
                CPU_SET(p->client_cpu, &c);
                CPU_ZERO(&d);
                CPU_SET(p->daemon_cpu, &d);
        }
        int r = sched_setaffinity(0, sizeof c, &c) < 0 ? -errno : 0;
        if (r == 0)
                r = pin_threads(daemon, &d);
        if (r < 0 && p) {
                printf("bench-classic: cannot pin for placement %s (%s): its figures are labelled \"any\"\n", p->name,
                       strerror(-r));
                (void) sched_setaffinity(0, sizeof *client_mask, client_mask);
                (void) pin_threads(daemon, daemon_mask);
        }
        return r == 0;
}

/* In batches of KILL_BATCH, each reaped before the next is killed: 5,000 processes killed
 * at once are runnable together, and the load average's next sample counts them (the
 * 1-minute average jumped from 0.4 to 56 and 387 between runs, 2026-11-26), so that the
 * runs after it printed a load warning for work that was this program's own. */
#define KILL_BATCH 16
static void kill_all(pid_t *pids, int n)
{
        for (int from = 0; from < n; from += KILL_BATCH) {
                int to = from + KILL_BATCH < n ? from + KILL_BATCH : n;
                for (int i = from; i < to; i++)
                        if (pids[i] > 1)
                                kill(pids[i], SIGKILL);
                for (int i = from; i < to; i++)
                        if (pids[i] > 1) {
                                waitpid(pids[i], NULL, 0);
                                pids[i] = 0; /* reaped: the pid may be reused */
                        }
        }
}

/* Whether pid runs /bin/sleep now (its comm). */
static bool root_execd(pid_t pid)
{
        char path[64], comm[32] = "";
        snprintf(path, sizeof path, "/proc/%d/comm", (int) pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return true; /* gone: nothing to wait for */
        bool sleeping = fgets(comm, sizeof comm, f) && strncmp(comm, "sleep", 5) == 0;
        fclose(f);
        return sleeping;
}

/* --exact-reads: the kernel files an exact GET_USAGE answer needs, read per request by
 * classic-floor (CLASSIC_FLOOR_READS), to measure the floor plus the counters alone: no
 * parsing, no safety check, nothing of procd's.  The cgroup base/exact with one sleeper in
 * its child leaf, as procd lays out a family; the set is the fewest files that give the
 * classic record exactly in this mode (what procd reads, less its checks that nobody put a
 * process into the family cgroup itself or made a sub-cgroup there: the family cgroup's own
 * cgroup.procs and two directory fstats):
 *   CPU: v2 cpu.stat (core accounting, in every v2 cgroup: hybrid too), else v1
 *        cpuacct.usage_all (the user and system times a CPU, in one read; the record has
 *        no total, so cpuacct.usage is not read: TR_WANT_CPU_SPLIT);
 *   memory: v2 memory.current, memory.peak, memory.stat (anon: RSS); v1
 *        memory.numa_stat (anon and all LRU pages) and memory.max_usage_in_bytes;
 *   processes: the leaf's cgroup.procs (pids.current counts threads);
 *   block I/O: v2 io.stat where the io controller is enabled in the family's cgroup (v1
 *        blkio is not read: procd reads it only when a throttle rule asks, cgroup-stats.c).
 * The floor keeps every file open but a v1 cgroup.procs: a kept one rereads a pid list the
 * kernel caches for up to 1 s, so an exact v1 reader opens it each time, as procd does and
 * the floor does too ("@" in the list: classic-floor.c).
 * The list goes into the environment the daemon inherits; 0, or -1 with the reason printed. */
static int exact_reads_setup(const tr_hierarchies *hs, const char *base, pid_t sleeper, tr_cgroup **out)
{
        char fam[96], leaf[128], list[4096] = "", dir[PATH_MAX];
        tr_error err = { 0 };
        snprintf(fam, sizeof fam, "%s/exact", base);
        snprintf(leaf, sizeof leaf, "%s/%s", fam, TR_CG_LEAF);
        if (tr_cgroup_create(hs, leaf, out, &err) < 0 || tr_cgroup_attach(*out, sleeper, &err) < 0) {
                fprintf(stderr, "bench-classic: --exact-reads: %s: %s\n", leaf, err.msg);
                return -1;
        }
        int mem = tr_hierarchies_best(hs, TR_CTRL_MEMORY), cpuacct = hs->v1_of[TR_CTRL_CPUACCT];
        int procs = hs->v2 >= 0 ? hs->v2 : mem;
        struct {
                int i;
                const char *cg, *files;
                bool if_there; /* only where the file exists (io.stat: io enabled there) */
        } want[] = {
                { hs->v2 >= 0 ? hs->v2 : cpuacct, fam,
                  hs->v2 >= 0 ? "cpu.stat" : "cpuacct.usage_all", false },
                { mem, fam,
                  mem >= 0 && hs->h[mem].is_v2 ? "memory.current memory.peak memory.stat"
                                               : "memory.numa_stat memory.max_usage_in_bytes",
                  false },
                { procs, leaf, hs->v2 >= 0 ? "cgroup.procs" : "@cgroup.procs", false },
                { hs->v2, fam, "io.stat", true }, /* the record's block I/O bytes */
        };
        for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
                bool found = want[k].i >= 0 && tr_hierarchy_fs_path(&hs->h[want[k].i], want[k].cg, dir, sizeof dir, &err) == 0;
                char file[PATH_MAX + 16];
                if (want[k].if_there &&
                    (!found || snprintf(file, sizeof file, "%s/%s", dir, want[k].files) < 0 || access(file, F_OK) < 0))
                        continue;
                if (!found) {
                        fprintf(stderr, "bench-classic: --exact-reads: no hierarchy for %s\n", want[k].files);
                        return -1;
                }
                char files[128];
                snprintf(files, sizeof files, "%s", want[k].files);
                for (char *save = NULL, *f = strtok_r(files, " ", &save); f; f = strtok_r(NULL, " ", &save)) {
                        size_t used = strlen(list);
                        bool each_time = f[0] == '@';
                        snprintf(list + used, sizeof list - used, "%s%s%s/%s", used ? " " : "", each_time ? "@" : "", dir,
                                 f + each_time);
                }
        }
        printf("bench-classic: --exact-reads: classic-floor reads per GET_USAGE: %s\n", list);
        return setenv("CLASSIC_FLOOR_READS", list, 1);
}

int main(int argc, char **argv)
{
        int families = 1000, background = 5000, calls = 5000;
        bool no_state = false, state_tmpfs = false, fifo_usage_only = false, classic_only = false, exact_reads = false;
        int register_gap_ms = 0;
        const char *placement_arg = "both";
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--families") && i + 1 < argc)
                        families = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--background") && i + 1 < argc)
                        background = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
                        calls = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--daemon") && i + 1 < argc)
                        setenv("PROCD_CLASSIC_DAEMON", argv[++i], 1);
                else if (!strcmp(argv[i], "--short")) { /* `make bench` on a quiet 2-core machine */
                        families = 100;
                        background = 1000;
                        calls = 1000;
                } else if (!strcmp(argv[i], "--no-state"))
                        no_state = true;
                else if (!strcmp(argv[i], "--state-tmpfs"))
                        state_tmpfs = true;
                else if (!strcmp(argv[i], "--fifo-usage-only")) /* to profile the classic path alone */
                        fifo_usage_only = true;
                else if (!strcmp(argv[i], "--classic-only")) /* procd as HTCondor runs it: no D-Bus */
                        classic_only = true;
                else if (!strcmp(argv[i], "--exact-reads")) /* classic-floor: and the counter files */
                        exact_reads = true;
                else if (!strcmp(argv[i], "--register-gap-ms") && i + 1 < argc)
                        register_gap_ms = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--placement") && i + 1 < argc &&
                         (!strcmp(argv[i + 1], "same") || !strcmp(argv[i + 1], "apart") ||
                          !strcmp(argv[i + 1], "both") || !strcmp(argv[i + 1], "any")))
                        placement_arg = argv[++i];
                else {
                        fprintf(stderr, "usage: bench-classic [--short] [--families N] [--background N] [--calls N] "
                                        "[--daemon PATH] [--no-state] [--state-tmpfs] [--fifo-usage-only] [--classic-only] "
                                        "[--exact-reads] [--register-gap-ms MS] [--placement same|apart|both|any]\n");
                        return 2;
                }
        }
        if (geteuid() != 0) {
                fprintf(stderr, "bench-classic: needs root\n");
                return 2;
        }
        if (families < 4)
                families = 4;
        signal(SIGPIPE, SIG_IGN);
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        /* FIFO only: HTCondor's daemon, or the protocol's floor (classic-floor) */
        const char *exe_base = strrchr(cc_daemon_exe(), '/');
        bool is_floor = !strcmp(exe_base ? exe_base + 1 : cc_daemon_exe(), "classic-floor");
        bool condor = cc_daemon_is_condor() || is_floor;
        if (exact_reads && !is_floor) {
                fprintf(stderr, "bench-classic: --exact-reads needs --daemon <path of classic-floor>\n");
                return 2;
        }
        if (!exact_reads)
                unsetenv("CLASSIC_FLOOR_READS"); /* a plain floor reads nothing */
        char state_dir[64] = "", state_file[96] = "";
        if (state_tmpfs && !no_state) {
                if (bench_tmpfs_mount("procd-bench", state_dir, sizeof state_dir) < 0)
                        return 1;
                snprintf(state_file, sizeof state_file, "%s/procd.state", state_dir);
        }
        tr_hierarchies hs;
        tr_error err = { 0 };
        if (tr_hierarchies_discover(&hs, &err) < 0) {
                fprintf(stderr, "bench-classic: %s\n", err.msg);
                bench_tmpfs_drop(state_dir);
                return 1;
        }
        char base[64], svc[96], sock[160];
        snprintf(base, sizeof base, "/procd-bench-classic.%d", (int) getpid());
        snprintf(svc, sizeof svc, "%s/procd", base);
        tr_cgroup *svc_cg = NULL;
        /* every daemon runs in a cgroup of its own at the same depth: the scheduler's cost of
         * a wakeup grows with the depth of the sleeper's cgroup, so the floor and condor_procd
         * pay what procd pays there */
        if (tr_cgroup_create(&hs, svc, &svc_cg, &err) < 0) {
                fprintf(stderr, "bench-classic: cgroup %s: %s\n", svc, err.msg);
                bench_tmpfs_drop(state_dir);
                return 1;
        }
        snprintf(sock, sizeof sock, "/tmp/procd-bench-classic.%d.sock", (int) getpid());
        /* the daemon's arguments: -S 60, then --socket unless --classic-only, then the state
         * file's when one is asked for */
        const char *ours[8] = { "-S", "60" };
        size_t n_ours = 2;
        if (!classic_only) {
                ours[n_ours++] = "--socket";
                ours[n_ours++] = sock;
        }
        if (no_state || *state_file) {
                ours[n_ours++] = "--state-file";
                ours[n_ours++] = state_file;
        }
        const char *const theirs[] = { "-S", "60", NULL };
        pid_t *bg = calloc((size_t) background, sizeof *bg);
        pid_t *roots = calloc((size_t) families, sizeof *roots);
        int n_bg = 0, n_roots = 0, rc = 1;
        for (; n_bg < background; n_bg++)
                if ((bg[n_bg] = ts_sleeper()) < 0)
                        break;
        int gate[2] = { -1, -1 };
        if (pipe2(gate, O_CLOEXEC) < 0) {
                perror("bench-classic: pipe");
                bench_tmpfs_drop(state_dir);
                return 1;
        }
        for (; n_roots < families; n_roots++)
                /* as HTCondor's job children: registered, then exec (a byte on the gate
                 * once every family is registered); procd moved the pre-exec image */
                if ((roots[n_roots] = ts_fork(ts_exec_sleep_at_gate, gate)) < 0)
                        break;
        close(gate[0]);
        pid_t *roots_copy = calloc((size_t) families, sizeof *roots_copy); /* kill_all clears roots */
        if (roots_copy)
                memcpy(roots_copy, roots, (size_t) n_roots * sizeof *roots);
        printf("bench-classic: %s, %d background processes, %d families, %d GET_USAGE calls per transport, "
               "state file %s, %d ms before each FIFO REGISTER\n",
               cc_daemon_exe(), n_bg, n_roots, calls,
               no_state ? "none" : *state_file ? "on a tmpfs" : "next to the socket (/tmp)", register_gap_ms);
        tr_cgroup *exact_cg = NULL;
        if (exact_reads && (n_bg < 1 || exact_reads_setup(&hs, base, bg[0], &exact_cg) < 0)) {
                if (n_bg < 1)
                        fprintf(stderr, "bench-classic: --exact-reads: no background process to put in its cgroup\n");
                goto out;
        }
        cc_daemon d;
        int r = cc_daemon_start_with(&d, condor ? theirs : ours, svc_cg ? bench_enter_cgroup : NULL, svc_cg);
        if (r < 0) {
                fprintf(stderr, "bench-classic: daemon: %s\n", d.errtext);
                goto out;
        }
        cc_client cc;
        procd_client *dc = NULL;
        if (cc_open(&cc, d.addr, 0, 0) < 0 || (!condor && !classic_only && procd_connect(sock, &dc, NULL) != PROCD_OK)) {
                fprintf(stderr, "bench-classic: cannot connect\n");
                goto stop;
        }
        int half = condor || classic_only ? n_roots : n_roots / 2;
        int failed = 0;

        /* REGISTER_SUBFAMILY: half the families through each transport */
        uint64_t *walls = calloc((size_t) (half > 0 ? half : 1), sizeof *walls);
        const struct timespec gap = { register_gap_ms / 1000, (long) (register_gap_ms % 1000) * 1000000L };
        cpu_mark a = mark(d.pid);
        uint64_t paused_usec = 0;
        for (int i = 0; i < half; i++) {
                if (register_gap_ms > 0) {
                        uint64_t p = tr_now_usec();
                        nanosleep(&gap, NULL);
                        paused_usec += tr_now_usec() - p;
                }
                uint64_t t = tr_now_usec();
                failed += cc_register(&cc, roots[i], getpid(), -1) != 0;
                if (walls)
                        walls[i] = tr_now_usec() - t;
        }
        cpu_mark b = mark(d.pid);
        b.wall_usec -= paused_usec;
        report("REGISTER_SUBFAMILY", "fifo", half, a, b);
        if (walls && half > 0) {
                char load[96];
                printf("REGISTER_SUBFAMILY   fifo   p50 wall %.2f ms (target under 2 ms at 1,000 families, state file on "
                       "a tmpfs)  %s\n",
                       (double) bench_median(walls, (size_t) half) / 1000.0, bench_load_note(load, sizeof load));
        }
        free(walls);
        if (dc) {
                a = mark(d.pid);
                for (int i = half; i < n_roots; i++)
                        failed += procd_register_subfamily(dc, roots[i], getpid(), 60, NULL) != PROCD_OK;
                b = mark(d.pid);
                report("RegisterSubfamily", "dbus", n_roots - half, a, b);
        }

        /* the roots exec their job, as after HTCondor's REGISTER; then wait until they did.
         * KILL_BATCH at a time, 5 ms apart: 1,000 execs at once were counted by the load
         * average's next sample (1.4 -> 31 before a GET_USAGE loop, 2026-11-26) */
        const struct timespec pace = { 0, 5000000L };
        for (int i = 0; i < n_roots; i++) {
                if (write(gate[1], "g", 1) != 1)
                        failed++;
                if (i % KILL_BATCH == KILL_BATCH - 1)
                        nanosleep(&pace, NULL);
        }
        for (int i = 0; i < n_roots; i++)
                for (int tries = 0; tries < 2000 && !root_execd(roots[i]); tries++)
                        usleep(1000);

        /* GET_USAGE of one family, in each placement asked for */
        cpu_set_t allowed, daemon_allowed;
        placement where[2];
        int n_where = 0;
        if (sched_getaffinity(0, sizeof allowed, &allowed) < 0 || sched_getaffinity(d.pid, sizeof daemon_allowed,
                                                                                    &daemon_allowed) < 0) {
                printf("bench-classic: cannot read the CPU masks (%s): the loops run unpinned\n", strerror(errno));
                where[n_where++] = (placement) { "any", -1, -1 };
        } else {
                n_where = placements_for(placement_arg, &allowed, where);
        }
        for (int w = 0; w < n_where; w++) {
                char what[32];
                bool pinned = where[w].client_cpu < 0 || place(&where[w], d.pid, &allowed, &daemon_allowed);
                const char *label = pinned ? where[w].name : "any";
                cc_usage cu;
                a = mark(d.pid);
                for (int i = 0; i < calls; i++)
                        failed += cc_get_usage(&cc, roots[1], &cu) != 0;
                b = mark(d.pid);
                snprintf(what, sizeof what, "GET_USAGE/%s", label);
                report(what, "fifo", calls, a, b);
                if (dc && !fifo_usage_only) {
                        procd_usage tu;
                        a = mark(d.pid);
                        for (int i = 0; i < calls; i++)
                                failed += procd_get_usage(dc, roots[half + 1], &tu, NULL) != PROCD_OK;
                        b = mark(d.pid);
                        snprintf(what, sizeof what, "GetUsage/%s", label);
                        report(what, "dbus", calls, a, b);
                }
                if (where[w].client_cpu >= 0 && pinned)
                        (void) place(NULL, d.pid, &allowed, &daemon_allowed);
        }

        /* KILL_FAMILY: a tenth of each half */
        int kills = half / 10 ? half / 10 : 1;
        a = mark(d.pid);
        for (int i = 0; i < kills; i++)
                failed += cc_simple(&cc, CC_KILL_FAMILY, roots[i]) != 0;
        b = mark(d.pid);
        report("KILL_FAMILY", "fifo", kills, a, b);
        if (dc) {
                a = mark(d.pid);
                for (int i = half; i < half + kills; i++)
                        failed += procd_kill_family(dc, roots[i], NULL) != PROCD_OK;
                b = mark(d.pid);
                report("KillFamily", "dbus", kills, a, b);
        }
        /* UNREGISTER_FAMILY while the processes live (the first half but the killed ones):
         * each cgroup waits for removal; its cost must not grow with the number waiting */
        a = mark(d.pid);
        for (int i = kills; i < half; i++)
                failed += cc_simple(&cc, CC_UNREGISTER_FAMILY, roots[i]) != 0;
        b = mark(d.pid);
        if (half > kills)
                report("UNREGISTER (live)", "fifo", half - kills, a, b);
        /* the rest as HTCondor ends a job (its processes gone, then UNREGISTER; the daemon
         * removes the family's cgroup at once) */
        kill_all(roots, n_roots);
        a = mark(d.pid);
        int unreg = 0;
        for (int i = 0; i < n_roots; i++)
                if (i < kills || i >= half) {
                        failed += !roots_copy || cc_simple(&cc, CC_UNREGISTER_FAMILY, roots_copy[i]) != 0;
                        unreg++;
                }
        b = mark(d.pid);
        report("UNREGISTER (empty)", "fifo", unreg, a, b);
        if (failed)
                printf("bench-classic: %d calls failed\n", failed);
        rc = failed ? 1 : 0;
stop:
        if (dc)
                procd_disconnect(dc);
        cc_close(&cc);
        cc_daemon_stop(&d);
out:
        close(gate[1]); /* roots still at the gate end */
        kill_all(roots, n_roots);
        kill_all(bg, n_bg);
        unlink(sock);
        bench_tmpfs_drop(state_dir);
        if (svc_cg) {
                tr_cgroup *bcg = NULL;
                if (tr_cgroup_open(&hs, base, TR_CG_MAY_ACT | TR_CG_OWNED, &bcg, NULL) >= 0) {
                        tr_cgroup_destroy(bcg, 5000000, NULL);
                        tr_cgroup_free(bcg);
                }
                tr_cgroup_free(svc_cg);
        }
        tr_cgroup_free(exact_cg);
        free(bg);
        free(roots);
        free(roots_copy);
        return rc;
}
