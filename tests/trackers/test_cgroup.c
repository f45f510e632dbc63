/* test_cgroup.c - the cgroup handle with real processes and cgroups (integration, root).
 *
 * Every cgroup lives under ts_cgroup_base(); every process signalled is one this program
 * started (or a descendant of one).  On a hybrid host the same tests also run against a
 * "v1 view" of the host (the mountinfo without its cgroup2 line) so that the v1 paths -
 * freezer.state, freeze+kill rounds, v1 membership - run for real too.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/cgroup.h"
#include "trackers/util.h"

#define SEC 1000000ull
#define MB (1024ull * 1024ull)

/* ---- helpers ------------------------------------------------------------------------ */

static void msleep(unsigned ms)
{
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static int run_sleeper(void *arg)
{
        (void) arg;
        for (;;)
                pause();
        return 0;
}

static int run_spinner(void *arg)
{
        (void) arg;
        volatile unsigned long x = 0;
        for (;;)
                x++;
        return 0;
}

/* A host view without the cgroup2 mount: pure v1 on a hybrid host.  false when the host
 * has no v1 controller hierarchy.  no_freezer: without the v1 freezer hierarchy too (a
 * family no freezer can hold still). */
static bool v1_view_ex(tr_hierarchies *out, bool no_freezer)
{
        _cleanup_free_ char *text = NULL;
        if (tr_read_file_alloc_at(AT_FDCWD, "/proc/self/mountinfo", &text, NULL, NULL) < 0)
                return false;
        char *w = text;
        for (char *p = text; *p;) {
                size_t len = strcspn(p, "\n");
                bool keep = !memmem(p, len, " - cgroup2 ", 11) && !(no_freezer && memmem(p, len, "freezer", 7));
                if (keep) {
                        memmove(w, p, len);
                        w += len;
                        *w++ = '\n';
                }
                p += len;
                if (*p)
                        p++;
        }
        *w = '\0';
        if (tr_hierarchies_parse(out, text, NULL) < 0)
                return false;
        return out->mode == TR_MODE_V1 && (!no_freezer || out->v1_of[TR_CTRL_FREEZER] < 0);
}

static bool v1_view(tr_hierarchies *out) { return v1_view_ex(out, false); }

static tr_cgroup *make_cg(const tr_hierarchies *hs, const char *name)
{
        char path[PATH_MAX];
        ts_cgroup_path(path, sizeof path, name);
        tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        int r = tr_cgroup_create(hs, path, &cg, &err);
        if (r < 0)
                printf("\n    create %s: %s\n", path, err.msg);
        CU_ASSERT_EQUAL(r, 0);
        return cg;
}

static pid_t start_in(tr_cgroup *cg, int (*fn)(void *), void *arg)
{
        pid_t pid = ts_fork(fn, arg);
        CU_ASSERT_FATAL(pid > 1);
        tr_error err = { 0 };
        int r = tr_cgroup_attach(cg, pid, &err);
        if (r < 0)
                printf("\n    attach: %s\n", err.msg);
        CU_ASSERT_EQUAL(r, 0);
        return pid;
}

/* Every hierarchy of the handle's hierarchies holds the cgroup (created everywhere). */
static void assert_everywhere(tr_cgroup *cg, bool present)
{
        const tr_hierarchies *hs = tr_cgroup_hierarchies(cg);
        for (int i = 0; i < hs->n; i++) {
                char fs[PATH_MAX];
                const char *p = tr_cgroup_path(cg, i);
                CU_ASSERT_PTR_NOT_NULL_FATAL(p);
                CU_ASSERT_EQUAL_FATAL(tr_hierarchy_fs_path(&hs->h[i], p, fs, sizeof fs, NULL), 0);
                bool exists = access(fs, F_OK) == 0;
                if (exists != present)
                        printf("\n    %s: expected %s\n", fs, present ? "present" : "gone");
                CU_ASSERT_EQUAL(exists, present);
        }
}

static void kill_destroy(tr_cgroup *cg)
{
        if (!cg)
                return;
        tr_kill_result res;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, 10 * SEC, &res, &err), 0);
        CU_ASSERT_TRUE(res.empty);
        tr_kill_result_free(&res);
        int r = tr_cgroup_destroy(cg, 5 * SEC, &err);
        if (r < 0)
                printf("\n    destroy: %s\n", err.msg);
        CU_ASSERT_EQUAL(r, 0);
        assert_everywhere(cg, false);
        tr_cgroup_free(cg);
}

/* utime + stime of pid in ticks, or -1. */
static long long cpu_ticks(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        if (tr_read_file_at(AT_FDCWD, path, buf, sizeof buf, NULL) < 0)
                return -1;
        const char *p = strrchr(buf, ')');
        if (!p)
                return -1;
        long long ut, st;
        /* after ')': state(3) ... utime(14) stime(15) */
        if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld", &ut, &st) != 2)
                return -1;
        return ut + st;
}

static char proc_state(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        if (tr_read_file_at(AT_FDCWD, path, buf, sizeof buf, NULL) < 0)
                return '?';
        const char *p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : '?';
}

/* Wait until the cgroup lists at least n members (bounded). */
static size_t wait_members(tr_cgroup *cg, size_t n, unsigned timeout_ms)
{
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        for (unsigned waited = 0;; waited += 10) {
                if (tr_cgroup_members(cg, &m, NULL) == 0 && m.n >= n)
                        return m.n;
                if (waited >= timeout_ms)
                        return m.n;
                msleep(10);
        }
}

/* ---- create, attach, members, usage ------------------------------------------------- */

static void check_create_members(const tr_hierarchies *hs, const char *tag)
{
        char name[64];
        snprintf(name, sizeof name, "ca-%s", tag);
        tr_cgroup *top = make_cg(hs, name);
        if (!top)
                return;
        assert_everywhere(top, true);
        char sub[80], deep[96];
        snprintf(sub, sizeof sub, "%s/sub1", name);
        snprintf(deep, sizeof deep, "%s/sub2/deep", name);
        _cleanup_cgroup_ tr_cgroup *c1 = make_cg(hs, sub);
        _cleanup_cgroup_ tr_cgroup *c2 = make_cg(hs, deep);
        CU_ASSERT_FATAL(c1 && c2);
        assert_everywhere(c2, true);

        pid_t p0 = start_in(top, run_sleeper, NULL);
        pid_t p1 = start_in(c1, run_sleeper, NULL);
        pid_t p2 = start_in(c2, run_sleeper, NULL);

        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_members(top, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 3);
        CU_ASSERT_TRUE(tr_pidset_contains(&m, p0));
        CU_ASSERT_TRUE(tr_pidset_contains(&m, p1));
        CU_ASSERT_TRUE(tr_pidset_contains(&m, p2));
        CU_ASSERT_EQUAL(tr_cgroup_members(c2, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 1);

        /* p2 sits in .../sub2/deep in every hierarchy */
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_read(hs, p2, &pc, NULL), 0);
        for (int i = 0; i < hs->n; i++) {
                CU_ASSERT_PTR_NOT_NULL(pc.paths[i]);
                if (pc.paths[i])
                        CU_ASSERT_STRING_EQUAL(pc.paths[i], tr_cgroup_path(c2, i));
        }
        tr_pid_cgroups_clear(&pc);
        _cleanup_cgroup_ tr_cgroup *byp = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open_pid(hs, p2, 0, &byp, &err), 0);
        if (byp)
                for (int i = 0; i < hs->n; i++)
                        CU_ASSERT_STRING_EQUAL(tr_cgroup_path(byp, i), tr_cgroup_path(c2, i));
        /* TrackFamilyViaCgroup lookup: where the root sits deeper than the path, its
         * most-specific cgroup is used; a pid outside the path gets the path as named */
        _cleanup_cgroup_ tr_cgroup *fp = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open_for_pid(hs, tr_cgroup_path(top, 0), p2, 0, &fp, &err), 0);
        if (fp)
                for (int i = 0; i < hs->n; i++)
                        CU_ASSERT_STRING_EQUAL(tr_cgroup_path(fp, i), tr_cgroup_path(c2, i));
        _cleanup_cgroup_ tr_cgroup *fo = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open_for_pid(hs, tr_cgroup_path(top, 0), getpid(), 0, &fo, &err), 0);
        if (fo)
                for (int i = 0; i < hs->n; i++)
                        CU_ASSERT_STRING_EQUAL(tr_cgroup_path(fo, i), tr_cgroup_path(top, i));

        bool pop = false;
        CU_ASSERT_EQUAL(tr_cgroup_populated(top, &pop, &err), 0);
        CU_ASSERT_TRUE(pop);

        tr_usage u;
        CU_ASSERT_EQUAL(tr_cgroup_usage(top, &u, &err), 0);
        CU_ASSERT_TRUE(u.num_procs.available);
        CU_ASSERT_EQUAL(u.num_procs.value, 3);
        CU_ASSERT_TRUE(u.cpu_usec.available);
        CU_ASSERT_TRUE(u.memory_current_bytes.available);
        CU_ASSERT_TRUE(u.rss_bytes.available);
        CU_ASSERT_TRUE(u.pids_current.available);
        if (u.pids_current.available)
                CU_ASSERT(u.pids_current.value >= 3);
        if (hs->mode == TR_MODE_HYBRID) {
                /* each field from the best place: cpu.stat and PSI from v2, memory from v1 */
                CU_ASSERT_EQUAL(u.cpu_usec.source, TR_SRC_CGROUP_V2);
                CU_ASSERT_EQUAL(u.memory_current_bytes.source, TR_SRC_CGROUP_V1);
                CU_ASSERT_TRUE(u.psi_cpu_some_usec.available);
                CU_ASSERT_TRUE(u.oom_kills.available);
        } else if (hs->mode == TR_MODE_V1) {
                CU_ASSERT_EQUAL(u.cpu_usec.source, TR_SRC_CGROUP_V1);
                CU_ASSERT_FALSE(u.psi_cpu_some_usec.available);
        }
        char srcs[64];
        printf("\n    usage sources (%s): %s\n", tag, tr_usage_source_name(&u, srcs, sizeof srcs));
        /* a second read goes through the kept-open files */
        CU_ASSERT_EQUAL(tr_cgroup_usage(top, &u, &err), 0);
        CU_ASSERT_EQUAL(u.num_procs.value, 3);

        kill_destroy(top); /* c1, c2 go with it; their handles are freed at scope exit */
        ts_kill_reap(p0);
        ts_kill_reap(p1);
        ts_kill_reap(p2);
}

/* ---- gated children: attached before they run their payload ------------------------- */

typedef struct gate {
        int rfd;
        int (*fn)(void *);
        void *arg;
} gate;

static int run_gated(void *arg)
{
        gate *g = arg;
        char c;
        while (read(g->rfd, &c, 1) < 0 && errno == EINTR)
                ;
        return g->fn(g->arg);
}

static pid_t start_gated(tr_cgroup *cg, int (*fn)(void *), void *arg)
{
        int p[2];
        CU_ASSERT_FATAL(pipe2(p, O_CLOEXEC) == 0);
        gate g = { .rfd = p[0], .fn = fn, .arg = arg };
        pid_t pid = ts_fork(run_gated, &g);
        close(p[0]);
        CU_ASSERT_FATAL(pid > 1);
        tr_error err = { 0 };
        int r = tr_cgroup_attach(cg, pid, &err);
        if (r < 0)
                printf("\n    attach: %s\n", err.msg);
        CU_ASSERT_EQUAL(r, 0);
        (void) !write(p[1], "g", 1);
        close(p[1]);
        return pid;
}

static int run_touch(void *arg)
{
        size_t n = (size_t) (uintptr_t) arg;
        char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return 3;
        for (size_t off = 0; off < n; off += 4096)
                p[off] = 1;
        munmap(p, n);
        return 0;
}

static int run_escapers(void *arg)
{
        (void) arg;
        /* double fork: the grandchild is orphaned at once */
        pid_t c = fork();
        if (c == 0) {
                if (fork() == 0)
                        for (;;)
                                pause();
                _exit(0);
        }
        if (c > 0)
                waitpid(c, NULL, 0);
        /* a new session */
        if (fork() == 0) {
                setsid();
                for (;;)
                        pause();
        }
        /* nohup env -i: no SIGHUP, no environment to be found by */
        if (fork() == 0) {
                int fd = open("/dev/null", O_RDWR);
                if (fd >= 0) {
                        dup2(fd, 0);
                        dup2(fd, 1);
                        dup2(fd, 2);
                }
                execlp("nohup", "nohup", "env", "-i", "/bin/sleep", "1000", (char *) NULL);
                _exit(127);
        }
        /* keeps forking while we kill */
        if (fork() == 0) {
                for (int i = 0; i < 400; i++) {
                        if (fork() == 0)
                                for (;;)
                                        pause();
                        msleep(2);
                }
                for (;;)
                        pause();
        }
        for (;;)
                pause();
        return 0;
}

/* pid still the process that had start time `ticks`, and not a zombie */
static bool alive_same(pid_t pid, uint64_t ticks)
{
        uint64_t now;
        return tr_pid_start_ticks(pid, &now) == 0 && now == ticks && ts_alive(pid);
}

static bool root_and_base(const char *what)
{
        return ts_need_root(what) && ts_cgroup_base() != NULL;
}

/* ---- freeze ------------------------------------------------------------------------- */

static void check_freeze(const tr_hierarchies *hs, const char *tag)
{
        char name[64];
        snprintf(name, sizeof name, "fz-%s", tag);
        tr_cgroup *cg = make_cg(hs, name);
        if (!cg)
                return;
        pid_t a = start_in(cg, run_spinner, NULL);
        pid_t b = start_in(cg, run_spinner, NULL);
        msleep(100);
        tr_freeze_state st = TR_THAWED;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_freeze(cg, 2 * SEC, &st, &err), 0);
        CU_ASSERT_EQUAL(st, TR_FROZEN);
        printf("\n    freeze (%s): %s\n", tag, tr_freeze_state_name(st));
        tr_usage u0, u1;
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u0, &err), 0);
        long long a0 = cpu_ticks(a), b0 = cpu_ticks(b);
        msleep(300);
        long long a1 = cpu_ticks(a), b1 = cpu_ticks(b);
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u1, &err), 0);
        CU_ASSERT(a0 >= 0 && b0 >= 0);
        CU_ASSERT_EQUAL(a1, a0); /* no member's CPU time advances while frozen */
        CU_ASSERT_EQUAL(b1, b0);
        if (u0.cpu_usec.available && u1.cpu_usec.available)
                CU_ASSERT(u1.cpu_usec.value - u0.cpu_usec.value < 10000); /* accounting noise only */
        /* a second freeze of a frozen cgroup is fine */
        CU_ASSERT_EQUAL(tr_cgroup_freeze(cg, 2 * SEC, &st, &err), 0);
        CU_ASSERT_EQUAL(st, TR_FROZEN);

        CU_ASSERT_EQUAL(tr_cgroup_thaw(cg, 2 * SEC, &st, &err), 0);
        CU_ASSERT_EQUAL(st, TR_THAWED);
        msleep(300);
        CU_ASSERT(cpu_ticks(a) > a1); /* thaw resumes */
        CU_ASSERT(cpu_ticks(b) > b1);
        kill_destroy(cg);
        ts_kill_reap(a);
        ts_kill_reap(b);
}

/* ---- peak memory, OOM --------------------------------------------------------------- */

static void check_peak_memory(const tr_hierarchies *hs, const char *tag)
{
        char name[64];
        snprintf(name, sizeof name, "mem-%s", tag);
        tr_cgroup *cg = make_cg(hs, name);
        if (!cg)
                return;
        pid_t p = start_gated(cg, run_touch, (void *) (uintptr_t) (200 * MB));
        int st = ts_wait(p, 60000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        tr_usage u;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        if (!u.memory_peak_bytes.available) {
                printf("\n    SKIP peak memory (%s): no memory.peak / max_usage_in_bytes here\n", tag);
        } else {
                printf("\n    peak (%s): %llu MB\n", tag, (unsigned long long) (u.memory_peak_bytes.value / MB));
                CU_ASSERT(u.memory_peak_bytes.value >= 200 * MB);
        }
        CU_ASSERT_EQUAL(u.num_procs.value, 0);
        kill_destroy(cg);
}

static void check_oom(const tr_hierarchies *hs, const char *tag)
{
        char name[64], sub[80];
        snprintf(name, sizeof name, "oom-%s", tag);
        snprintf(sub, sizeof sub, "%s/sub", name);
        tr_cgroup *cg = make_cg(hs, name);
        _cleanup_cgroup_ tr_cgroup *child = make_cg(hs, sub);
        if (!cg || !child)
                return;
        tr_error err = { 0 };
        int mi = tr_hierarchies_best(hs, TR_CTRL_MEMORY);
        int r;
        if (tr_cgroup_has_file(cg, mi, "memory.limit_in_bytes")) {
                r = tr_cgroup_write(cg, mi, "memory.limit_in_bytes", "67108864", &err);
                if (r == 0 && tr_cgroup_has_file(cg, mi, "memory.memsw.limit_in_bytes"))
                        r = tr_cgroup_write(cg, mi, "memory.memsw.limit_in_bytes", "67108864", &err);
        } else if (tr_cgroup_has_file(cg, mi, "memory.max")) {
                r = tr_cgroup_write(cg, mi, "memory.max", "67108864", &err);
                if (r == 0 && tr_cgroup_has_file(cg, mi, "memory.swap.max"))
                        r = tr_cgroup_write(cg, mi, "memory.swap.max", "0", &err);
        } else {
                printf("\n    SKIP oom (%s): no memory limit file\n", tag);
                kill_destroy(cg);
                return;
        }
        if (r < 0)
                printf("\n    limit: %s\n", err.msg);
        CU_ASSERT_EQUAL_FATAL(r, 0);
        /* the victim sits in a child cgroup: v1 counts the kill there only */
        pid_t p = start_gated(child, run_touch, (void *) (uintptr_t) (512 * MB));
        int st = ts_wait(p, 60000);
        CU_ASSERT(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        tr_usage u;
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_TRUE(u.oom_kills.available);
        printf("\n    oom_kills (%s): %llu\n", tag, (unsigned long long) u.oom_kills.value);
        CU_ASSERT(u.oom_kills.value >= 1);
        kill_destroy(cg);
}

/* ---- kill ------------------------------------------------------------------------- */

static void check_kill_escapers(const tr_hierarchies *hs, const char *tag)
{
        char name[64];
        snprintf(name, sizeof name, "esc-%s", tag);
        tr_cgroup *cg = make_cg(hs, name);
        if (!cg)
                return;
        pid_t a = start_gated(cg, run_escapers, NULL);
        size_t n = wait_members(cg, 20, 10000);
        CU_ASSERT(n >= 20);
        _cleanup_pidset_ tr_pidset rec = TR_PIDSET_INIT;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &rec, &err), 0);
        uint64_t *ticks = calloc(rec.n ? rec.n : 1, sizeof *ticks);
        CU_ASSERT_FATAL(ticks != NULL);
        for (size_t k = 0; k < rec.n; k++)
                (void) tr_pid_start_ticks(rec.pids[k], &ticks[k]);

        tr_kill_result res;
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, 10 * SEC, &res, &err), 0);
        printf("\n    kill (%s): %zu recorded, method %s, rounds %u, empty %d, %.1f ms\n", tag, rec.n, res.method,
               res.rounds, res.empty, (double) res.elapsed_usec / 1000.0);
        CU_ASSERT_TRUE(res.empty);
        CU_ASSERT_EQUAL(res.survivors.n, 0);
        tr_kill_result_free(&res);
        waitpid(a, NULL, 0);
        size_t alive = 0;
        for (size_t k = 0; k < rec.n; k++)
                if (ticks[k] && alive_same(rec.pids[k], ticks[k])) {
                        printf("    still alive: %d\n", (int) rec.pids[k]);
                        alive++;
                }
        CU_ASSERT_EQUAL(alive, 0);
        free(ticks);
        bool pop = true;
        CU_ASSERT_EQUAL(tr_cgroup_populated(cg, &pop, &err), 0);
        CU_ASSERT_FALSE(pop);
        ts_reap_orphans(0); /* the escapers' orphans, reparented to us */
        kill_destroy(cg);
        ts_reap_orphans(0);
}

static int run_many(void *arg)
{
        int n = (int) (intptr_t) arg;
        for (int i = 0; i < n; i++)
                if (fork() == 0)
                        for (;;)
                                pause();
        for (;;)
                pause();
        return 0;
}

/* Membership through the kept-open v2 cgroup.procs when it is longer than one seq_file
 * buffer (4096 bytes: ~800 pids of 5 digits), and a child cgroup appearing after the first
 * read (the "no subdirectory" shortcut must notice it). */
static void check_members_large(const tr_hierarchies *hs, const char *tag)
{
        char name[64], sub[80];
        snprintf(name, sizeof name, "large-%s", tag);
        tr_cgroup *cg = make_cg(hs, name);
        if (!cg)
                return;
        pid_t a = start_gated(cg, run_many, (void *) (intptr_t) 900);
        size_t n = wait_members(cg, 901, 30000);
        CU_ASSERT_EQUAL(n, 901);
        int v2 = hs->v2;
        _cleanup_free_ char *text = NULL;
        if (v2 >= 0 && tr_cgroup_dirfd(cg, v2) >= 0) {
                size_t len = 0;
                CU_ASSERT(tr_read_file_alloc_at(tr_cgroup_dirfd(cg, v2), "cgroup.procs", &text, &len, NULL) > 0);
                printf("\n    cgroup.procs (%s): %zu bytes, %zu members\n", tag, len, n);
        }
        tr_usage u;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_EQUAL(u.num_procs.value, 901);
        /* a child cgroup made after the first reads, with one process */
        snprintf(sub, sizeof sub, "%s/later", name);
        _cleanup_cgroup_ tr_cgroup *child = make_cg(hs, sub);
        CU_ASSERT_FATAL(child != NULL);
        pid_t c = start_in(child, run_sleeper, NULL);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 902);
        CU_ASSERT_TRUE(tr_pidset_contains(&m, c));
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_EQUAL(u.num_procs.value, 902);
        kill_destroy(cg);
        waitpid(a, NULL, 0);
        ts_kill_reap(c);
        ts_reap_orphans(0);
}

/* Measurement only (no timed assertion): kill-to-empty of a few hundred sleepers. */
static void check_kill_many(const tr_hierarchies *hs, const char *tag)
{
        char name[64];
        snprintf(name, sizeof name, "many-%s", tag);
        tr_cgroup *cg = make_cg(hs, name);
        if (!cg)
                return;
        pid_t a = start_gated(cg, run_many, (void *) (intptr_t) 300);
        size_t n = wait_members(cg, 301, 20000);
        CU_ASSERT_EQUAL(n, 301);
        tr_kill_result res;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, 20 * SEC, &res, &err), 0);
        printf("\n    kill %zu sleepers (%s): method %s, rounds %u, %.1f ms\n", n, tag, res.method, res.rounds,
               (double) res.elapsed_usec / 1000.0);
        CU_ASSERT_TRUE(res.empty);
        tr_kill_result_free(&res);
        waitpid(a, NULL, 0);
        ts_reap_orphans(0);
        kill_destroy(cg);
        ts_reap_orphans(0);
}

/* The bound: a member frozen by a v1 freezer cgroup the handle does not know cannot die;
 * kill must return at the timeout and name it. */
static void check_kill_timeout(const tr_hierarchies *hs, const char *tag)
{
        int fi = hs->v1_of[TR_CTRL_FREEZER];
        if (fi < 0) {
                printf("\n    SKIP kill timeout (%s): no v1 freezer to hold a member\n", tag);
                return;
        }
        char name[64], fname[64];
        snprintf(name, sizeof name, "kt-%s", tag);
        snprintf(fname, sizeof fname, "ktfrz-%s", tag);
        tr_cgroup *cg = make_cg(hs, name);
        tr_cgroup *frz = make_cg(hs, fname);
        if (!cg || !frz)
                return;
        pid_t p = start_in(cg, run_sleeper, NULL);
        pid_t q = start_in(cg, run_sleeper, NULL);
        char v[32];
        snprintf(v, sizeof v, "%d", (int) p);
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_write(frz, fi, "cgroup.procs", v, &err), 0);
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_write(frz, fi, "freezer.state", "FROZEN", &err), 0);
        char buf[64] = "";
        for (int i = 0; i < 200; i++) {
                if (tr_cgroup_read(frz, fi, "freezer.state", buf, sizeof buf, NULL) > 0 &&
                    strncmp(buf, "FROZEN", 6) == 0)
                        break;
                msleep(10);
        }
        CU_ASSERT_STRING_EQUAL(buf, "FROZEN\n");

        tr_kill_result res;
        uint64_t timeout = 300000;
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, timeout, &res, &err), 0);
        printf("\n    kill timeout (%s): method %s, rounds %u, empty %d, survivors %zu, %.1f ms\n", tag, res.method,
               res.rounds, res.empty, res.survivors.n, (double) res.elapsed_usec / 1000.0);
        CU_ASSERT_FALSE(res.empty);
        CU_ASSERT_EQUAL(res.survivors.n, 1);
        CU_ASSERT_TRUE(res.survivors.n == 1 && res.survivors.pids[0] == p);
        CU_ASSERT(res.elapsed_usec >= timeout);
        CU_ASSERT(res.elapsed_usec < timeout + 2 * SEC);
        tr_kill_result_free(&res);
        CU_ASSERT_FALSE(ts_alive(q)); /* the other member died */

        CU_ASSERT_EQUAL(tr_cgroup_write(frz, fi, "freezer.state", "THAWED", &err), 0);
        kill_destroy(cg);
        kill_destroy(frz);
        ts_kill_reap(p);
        ts_kill_reap(q);
}

/* ---- signal ------------------------------------------------------------------------- */

static bool wait_state(pid_t pid, char want)
{
        for (int i = 0; i < 200; i++) {
                if (proc_state(pid) == want)
                        return true;
                msleep(10);
        }
        return false;
}

static void check_signal(const tr_hierarchies *hs, const char *tag)
{
        char name[64];
        snprintf(name, sizeof name, "sig-%s", tag);
        tr_cgroup *cg = make_cg(hs, name);
        if (!cg)
                return;
        pid_t a = start_in(cg, run_sleeper, NULL);
        pid_t b = start_in(cg, run_sleeper, NULL);
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGSTOP, &err), 0);
        CU_ASSERT_TRUE(wait_state(a, 'T'));
        CU_ASSERT_TRUE(wait_state(b, 'T'));
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGCONT, &err), 0);
        CU_ASSERT_TRUE(wait_state(a, 'S'));
        CU_ASSERT_TRUE(wait_state(b, 'S'));
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGTERM, &err), 0);
        int sa = ts_wait(a, 5000), sb = ts_wait(b, 5000);
        CU_ASSERT(sa >= 0 && WIFSIGNALED(sa) && WTERMSIG(sa) == SIGTERM);
        CU_ASSERT(sb >= 0 && WIFSIGNALED(sb) && WTERMSIG(sb) == SIGTERM);
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, 999, &err), -EINVAL);
        kill_destroy(cg);
}

/* Pid reuse between listing and signalling: the hook (run after the members are listed,
 * before any is signalled) kills member A, reaps it and starts a stranger outside the
 * cgroup with A's very pid (clone3 set_tid).  The signal must reach member B and never the
 * stranger.  Run where no freezer holds the family ("nofreezer" view) and on the host's v2
 * freezer (a frozen v2 member still dies of SIGKILL, so its pid can be freed there too). */
struct reuse_ctx {
        pid_t victim;
        pid_t stranger; /* > 0 once started; -errno when set_tid failed */
        bool done;
};

struct ts_clone_args {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
                set_tid_size, cgroup;
};

static pid_t fork_with_pid(pid_t want)
{
        pid_t tid = want;
        struct ts_clone_args a;
        memset(&a, 0, sizeof a);
        a.exit_signal = SIGCHLD;
        a.set_tid = (uint64_t) (uintptr_t) &tid;
        a.set_tid_size = 1;
        fflush(NULL);
        long r = syscall(SYS_clone3, &a, sizeof a);
        if (r == 0) {
                for (;;)
                        pause();
        }
        return r < 0 ? -errno : (pid_t) r;
}

static void reuse_hook(void *ud)
{
        struct reuse_ctx *c = ud;
        if (c->done)
                return;
        c->done = true;
        if (c->victim <= 1)
                return;
        kill(c->victim, SIGKILL); /* our own child */
        waitpid(c->victim, NULL, 0);
        c->stranger = fork_with_pid(c->victim);
}

static void check_signal_reuse(const tr_hierarchies *hs, const char *tag)
{
        char name[64];
        snprintf(name, sizeof name, "sigreuse-%s", tag);
        tr_cgroup *cg = make_cg(hs, name);
        if (!cg)
                return;
        pid_t a = start_in(cg, run_sleeper, NULL);
        pid_t b = start_in(cg, run_sleeper, NULL);
        msleep(50); /* the stranger's start time (10 ms ticks) must differ from A's */
        struct reuse_ctx ctx = { .victim = a };
        tr_cgroup_set_signal_hook(reuse_hook, &ctx);
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGTERM, &err), 0);
        tr_cgroup_set_signal_hook(NULL, NULL);
        CU_ASSERT_TRUE(ctx.done);
        int sb = ts_wait(b, 5000);
        CU_ASSERT(sb >= 0 && WIFSIGNALED(sb) && WTERMSIG(sb) == SIGTERM);
        if (ctx.stranger > 1) {
                CU_ASSERT_EQUAL(ctx.stranger, a);
                msleep(50);
                CU_ASSERT_TRUE(ts_alive(ctx.stranger)); /* the reused pid was not signalled */
                CU_ASSERT_EQUAL(ts_wait(ctx.stranger, 0), -ETIMEDOUT);
                ts_kill_reap(ctx.stranger);
        } else {
                printf("\n    SKIP pid reuse (%s): clone3 set_tid: %s\n", tag, strerror(-ctx.stranger));
        }
        kill_destroy(cg);
}

/* ---- destroy ------------------------------------------------------------------------ */

static void check_destroy(const tr_hierarchies *hs, const char *tag)
{
        char name[64], deep[96];
        snprintf(name, sizeof name, "d-%s", tag);
        snprintf(deep, sizeof deep, "%s/a/b/c", name);
        _cleanup_cgroup_ tr_cgroup *cg = make_cg(hs, name);
        _cleanup_cgroup_ tr_cgroup *dc = make_cg(hs, deep);
        snprintf(deep, sizeof deep, "%s/a2", name);
        _cleanup_cgroup_ tr_cgroup *d2 = make_cg(hs, deep);
        if (!cg || !dc || !d2)
                return;
        tr_error err = { 0 };
        /* busy: a process inside - EBUSY at the bound, nothing lost */
        pid_t p = start_in(dc, run_sleeper, NULL);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, 100000, &err), -EBUSY);
        assert_everywhere(dc, true);
        ts_kill_reap(p);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, 5 * SEC, &err), 0);
        assert_everywhere(cg, false);
        assert_everywhere(dc, false);
        assert_everywhere(d2, false);
        /* already gone: fine */
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, SEC, &err), 0);
        tr_usage u;
        CU_ASSERT(tr_cgroup_usage(cg, &u, &err) < 0); /* gone everywhere: an error, not zeros */
        /* acting on a removed cgroup is reported, never a false "empty" (the family may
         * have been moved out before the rmdir: the caller falls back to /proc) */
        tr_kill_result res;
        tr_freeze_state st;
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, SEC, &res, &err), -ENODEV);
        tr_kill_result_free(&res);
        CU_ASSERT_EQUAL(tr_cgroup_freeze(cg, SEC, &st, &err), -ENODEV);
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGTERM, &err), -ENODEV);
        bool pop = true;
        int r = tr_cgroup_populated(cg, &pop, &err);
        CU_ASSERT(r < 0 || !pop);
}

/* ---- safety ------------------------------------------------------------------------- */

static int refusals(tr_cgroup *cg, bool destroy_too)
{
        tr_kill_result res;
        tr_freeze_state st;
        int bad = 0;
        if (tr_cgroup_kill(cg, SEC, &res, NULL) != -EPERM)
                bad |= 1;
        tr_kill_result_free(&res);
        if (tr_cgroup_freeze(cg, SEC, &st, NULL) != -EPERM)
                bad |= 2;
        if (tr_cgroup_thaw(cg, SEC, &st, NULL) != -EPERM)
                bad |= 4;
        if (tr_cgroup_signal(cg, SIGCONT, NULL) != -EPERM)
                bad |= 8;
        if (destroy_too && tr_cgroup_destroy(cg, SEC, NULL) != -EPERM)
                bad |= 16;
        return bad;
}

typedef struct self_arg {
        const tr_hierarchies *hs;
        const char *path;
} self_arg;

/* In a child: move ourselves into the cgroup, then every destructive op must refuse. */
static int run_self_check(void *arg)
{
        self_arg *sa = arg;
        tr_cgroup *cg = NULL;
        if (tr_cgroup_open(sa->hs, sa->path, TR_CG_MAY_ACT | TR_CG_OWNED, &cg, NULL) < 0)
                return 100;
        if (tr_cgroup_attach(cg, getpid(), NULL) < 0)
                return 101;
        int bad = refusals(cg, true);
        tr_cgroup_free(cg);
        return bad;
}

typedef struct anc_arg {
        const tr_hierarchies *hs;
        const char *parent_cg; /* A sits here */
        const char *child_cg;  /* B moves here */
} anc_arg;

static int run_anc_child(void *arg)
{
        anc_arg *aa = arg;
        tr_cgroup *mine = NULL, *theirs = NULL;
        if (tr_cgroup_open(aa->hs, aa->child_cg, TR_CG_MAY_ACT, &mine, NULL) < 0 ||
            tr_cgroup_attach(mine, getpid(), NULL) < 0)
                return 100;
        if (tr_cgroup_open(aa->hs, aa->parent_cg, TR_CG_MAY_ACT | TR_CG_OWNED, &theirs, NULL) < 0)
                return 101;
        int bad = refusals(theirs, false);
        tr_cgroup_free(theirs);
        tr_cgroup_free(mine);
        return bad;
}

/* A moves itself into parent_cg and forks B; B moves to child_cg: parent_cg no longer holds
 * B but holds its parent A, so B must refuse to kill/freeze/signal it. */
static int run_anc_parent(void *arg)
{
        anc_arg *aa = arg;
        tr_cgroup *cg = NULL;
        if (tr_cgroup_open(aa->hs, aa->parent_cg, TR_CG_MAY_ACT, &cg, NULL) < 0 ||
            tr_cgroup_attach(cg, getpid(), NULL) < 0)
                return 110;
        tr_cgroup_free(cg);
        pid_t b = ts_fork(run_anc_child, aa);
        if (b <= 1)
                return 111;
        int st = ts_wait(b, 20000);
        return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 112;
}

static void check_safety(const tr_hierarchies *hs, const char *tag)
{
        tr_error err = { 0 };
        /* hierarchy roots */
        _cleanup_cgroup_ tr_cgroup *root = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(hs, "/", TR_CG_MAY_ACT | TR_CG_OWNED, &root, &err), 0);
        CU_ASSERT_EQUAL(refusals(root, true), 0);
        CU_ASSERT_EQUAL(tr_cgroup_kill(root, SEC, &(tr_kill_result){ 0 }, &err), -EPERM);
        CU_ASSERT_EQUAL(err.code, EPERM);

        char name[64], path[PATH_MAX];
        snprintf(name, sizeof name, "safe-%s", tag);
        tr_cgroup *mine = make_cg(hs, name);
        if (!mine)
                return;
        ts_cgroup_path(path, sizeof path, name);
        /* without MAY_ACT */
        _cleanup_cgroup_ tr_cgroup *ro = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(hs, path, 0, &ro, &err), 0);
        CU_ASSERT_EQUAL(refusals(ro, true), 0);
        /* attach and write change the cgroup: refused too */
        pid_t outsider = ts_fork(run_sleeper, NULL);
        CU_ASSERT_FATAL(outsider > 1);
        CU_ASSERT_EQUAL(tr_cgroup_attach(ro, outsider, &err), -EPERM);
        CU_ASSERT_EQUAL(err.code, EPERM);
        for (int i = 0; i < hs->n; i++) {
                if (tr_cgroup_dirfd(ro, i) < 0)
                        continue;
                char v[32];
                snprintf(v, sizeof v, "%d", (int) outsider);
                CU_ASSERT_EQUAL(tr_cgroup_write(ro, i, "cgroup.procs", v, &err), -EPERM);
        }
        _cleanup_pidset_ tr_pidset none = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_cgroup_members(ro, &none, &err), 0);
        CU_ASSERT_FALSE(tr_pidset_contains(&none, outsider));
        ts_kill_reap(outsider);
        tr_usage u; /* reading is fine */
        CU_ASSERT_EQUAL(tr_cgroup_usage(ro, &u, &err), 0);

        /* a cgroup holding the caller */
        self_arg sa = { hs, path };
        pid_t c = ts_fork(run_self_check, &sa);
        CU_ASSERT_FATAL(c > 1);
        int st = ts_wait(c, 20000);
        CU_ASSERT(st >= 0 && WIFEXITED(st));
        if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st))
                printf("\n    self-check child: status %d\n", WEXITSTATUS(st));
        CU_ASSERT_EQUAL(WEXITSTATUS(st), 0);

        /* a cgroup holding an ancestor process of the caller (its parent) */
        char aname[64], apath[PATH_MAX], bpath[PATH_MAX];
        snprintf(aname, sizeof aname, "safe-anc-%s", tag);
        tr_cgroup *acg = make_cg(hs, aname);
        snprintf(aname, sizeof aname, "safe-anc-b-%s", tag);
        tr_cgroup *bcg = make_cg(hs, aname);
        if (acg && bcg) {
                anc_arg aa = { hs, tr_cgroup_path(acg, 0), tr_cgroup_path(bcg, 0) };
                snprintf(apath, sizeof apath, "%s", aa.parent_cg);
                snprintf(bpath, sizeof bpath, "%s", aa.child_cg);
                aa.parent_cg = apath;
                aa.child_cg = bpath;
                pid_t a = ts_fork(run_anc_parent, &aa);
                CU_ASSERT_FATAL(a > 1);
                st = ts_wait(a, 30000);
                if (!(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0))
                        printf("\n    ancestor check: status 0x%x\n", st);
                CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        kill_destroy(acg);
        kill_destroy(bcg);

        /* bad paths */
        tr_cgroup *x = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open(hs, "relative", 0, &x, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_open(hs, "/a/../b", 0, &x, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_create(hs, "/x/..", &x, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_create(hs, "/", &x, &err), -EINVAL);
        ts_cgroup_path(path, sizeof path, "never-created");
        CU_ASSERT_EQUAL(tr_cgroup_open(hs, path, 0, &x, &err), -ENOENT);
        CU_ASSERT_PTR_NULL(x);
        kill_destroy(mine);
}


/* ---- the handle on fixture trees (no root): pure v2 and pure v1 file selection ------- */

/* Regular files stand in for cgroupfs: the handle only openat()s and pread()s them.  This
 * runs the pure-v2 usage path that this hybrid host cannot run live (FACTS). */

static void put_file(const char *dir, const char *name, const char *text)
{
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "we");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(text, f);
        fclose(f);
}

static void put_fixture(const char *dir, const char *name, const char *rel)
{
        _cleanup_free_ char *t = ts_read_fixture(rel);
        put_file(dir, name, t);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) ftw;
        return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static void mkdirs(const char *a, const char *b)
{
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", a, b);
        for (char *p = path + strlen(a) + 1;; p++) {
                if (*p == '/' || *p == '\0') {
                        char c = *p;
                        *p = '\0';
                        CU_ASSERT_FATAL(mkdir(path, 0755) == 0 || errno == EEXIST);
                        *p = c;
                        if (!c)
                                break;
                }
        }
}

static int count_fds(void)
{
        _cleanup_closedir_ DIR *d = opendir("/proc/self/fd");
        int n = 0;
        if (!d)
                return -1;
        while (readdir(d))
                n++;
        return n;
}

static void test_fixture_tree_v2(void)
{
        int fds0 = count_fds();
        char tmp[] = "/tmp/procd-cgfx.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char root[PATH_MAX], job[PATH_MAX], sub[PATH_MAX], mi[PATH_MAX * 2];
        snprintf(root, sizeof root, "%s/cg2", tmp);
        mkdirs(tmp, "cg2/job/a/b");
        snprintf(job, sizeof job, "%s/job", root);
        snprintf(sub, sizeof sub, "%s/job/a/b", root);
        static const char *const files[] = { "cpu.stat", "memory.current", "memory.peak", "memory.stat",
                                             "memory.events", "io.stat", "cpu.pressure", "memory.pressure",
                                             "io.pressure", "cgroup.events" };
        for (size_t k = 0; k < TR_ARRAY_SIZE(files); k++) {
                char rel[64];
                snprintf(rel, sizeof rel, "v2/%s", files[k]);
                put_fixture(job, files[k], rel);
        }
        put_file(job, "pids.current", "5\n");
        put_file(job, "pids.peak", "9\n");
        put_file(job, "cgroup.procs", "300\n100\n");
        put_file(sub, "cgroup.procs", "200\n100\n");
        snprintf(mi, sizeof mi, "26 22 0:23 / %s rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n", root);
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V2);
        _cleanup_free_ char *ctl = ts_read_fixture("v2/cgroup.controllers");
        tr_hierarchies_set_v2_controllers(&hs, ctl);

        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg, &err), 0);
        CU_ASSERT(tr_cgroup_dirfd(cg, 0) >= 0);
        CU_ASSERT(tr_cgroup_v2_fd(cg) >= 0);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 3); /* 100, 200, 300: deduplicated over the subtree */
        bool pop = false;
        CU_ASSERT_EQUAL(tr_cgroup_populated(cg, &pop, &err), 0);
        CU_ASSERT_TRUE(pop);
        for (int round = 0; round < 2; round++) { /* the second through kept-open fds */
                tr_usage u;
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage(cg, &u, &err), 0);
                CU_ASSERT_EQUAL(u.sources, TR_SRC_CGROUP_V2);
                CU_ASSERT_EQUAL(u.num_procs.value, 3);
                CU_ASSERT_EQUAL(u.cpu_usec.value, 8123456);
                CU_ASSERT_EQUAL(u.cpu_user_usec.value, 6100000);
                CU_ASSERT_EQUAL(u.memory_current_bytes.value, 268435456);
                CU_ASSERT_EQUAL(u.memory_peak_bytes.value, 314572800);
                CU_ASSERT_EQUAL(u.rss_bytes.value, 209715200 + 10485760);
                CU_ASSERT_EQUAL(u.memory_file_bytes.value, 52428800 - 10485760);
                CU_ASSERT_EQUAL(u.oom_kills.value, 2);
                CU_ASSERT_EQUAL(u.oom_group_kills.value, 1);
                CU_ASSERT_EQUAL(u.io_read_bytes.value, 1459200 + 40960);
                CU_ASSERT_EQUAL(u.io_write_bytes.value, 314773504 + 4096);
                CU_ASSERT_EQUAL(u.pids_current.value, 5);
                CU_ASSERT_EQUAL(u.pids_peak.value, 9);
                CU_ASSERT_EQUAL(u.psi_cpu_some_usec.value, 173504);
                CU_ASSERT_EQUAL(u.psi_memory_full_usec.value, 1870);
                CU_ASSERT_EQUAL(u.psi_io_some_usec.value, 90213);
                CU_ASSERT_TRUE(u.psi_io_full_usec.available);
                CU_ASSERT_FALSE(u.image_size_bytes.available); /* /proc only */
        }
        /* the counter changes between reads: pread from offset 0 sees the new value */
        put_file(job, "memory.current", "4096\n");
        tr_usage u;
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_EQUAL(u.memory_current_bytes.value, 4096);
        /* read/write/has_file */
        char buf[64];
        CU_ASSERT_EQUAL(tr_cgroup_read(cg, 0, "pids.peak", buf, sizeof buf, &err), 2);
        CU_ASSERT_TRUE(tr_cgroup_has_file(cg, 0, "memory.peak"));
        CU_ASSERT_FALSE(tr_cgroup_has_file(cg, 0, "memory.max"));
        CU_ASSERT_FALSE(tr_cgroup_has_file(cg, 3, "memory.peak"));
        CU_ASSERT_EQUAL(tr_cgroup_read(cg, 0, "../x", buf, sizeof buf, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_write(cg, 0, "pids.max", "5", &err), -EPERM); /* no MAY_ACT */
        {
                _cleanup_cgroup_ tr_cgroup *rw = NULL;
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", TR_CG_MAY_ACT, &rw, &err), 0);
                CU_ASSERT_EQUAL(tr_cgroup_write(rw, 1, "pids.max", "5", &err), -ENOENT);
                CU_ASSERT_EQUAL(tr_cgroup_write(rw, 0, "../x", "5", &err), -EINVAL);
        }
        /* the kept-open cgroup.procs: longer than its first buffer, then rewritten shorter
         * (each read starts at offset 0 and sees the current content) */
        {
                size_t cap = 3000 * 8 + 1, off = 0;
                _cleanup_free_ char *big = malloc(cap);
                CU_ASSERT_PTR_NOT_NULL_FATAL(big);
                for (int pid = 1000; pid < 4000; pid++)
                        off += (size_t) snprintf(big + off, cap - off, "%d\n", pid);
                put_file(job, "cgroup.procs", big);
                CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
                CU_ASSERT_EQUAL(m.n, 3000 + 2); /* + 100, 200 of the subtree */
                CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
                CU_ASSERT_EQUAL(u.num_procs.value, 3002);
                put_file(job, "cgroup.procs", "300\n100\n");
                CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
                CU_ASSERT_EQUAL(m.n, 3);
        }
        /* a child vanishing mid-walk is not an error; the handle's own cgroup vanishing is */
        rm_tree(sub);
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 2);
        /* open_pid maps "0::/job" of a fixture cgroup file */
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL(tr_pid_cgroups_parse(&hs, "0::/job\n", &pc, NULL), 0);
        CU_ASSERT_STRING_EQUAL(pc.paths[0], "/job");
        tr_pid_cgroups_clear(&pc);
        tr_cgroup_free(TR_TAKE_PTR(cg));
        CU_ASSERT_EQUAL(count_fds(), fds0); /* the handle closed every fd it kept */
        rm_tree(tmp);
}

static void test_fixture_tree_v1(void)
{
        char tmp[] = "/tmp/procd-cgfx.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char d[PATH_MAX], mi[4 * PATH_MAX];
        mkdirs(tmp, "cpu,cpuacct/job");
        mkdirs(tmp, "memory/job/sub");
        mkdirs(tmp, "blkio/job");
        mkdirs(tmp, "systemd");
        snprintf(d, sizeof d, "%s/cpu,cpuacct/job", tmp);
        put_fixture(d, "cpuacct.usage", "v1/cpuacct.usage");
        put_fixture(d, "cpuacct.stat", "v1/cpuacct.stat");
        put_file(d, "cgroup.procs", "11\n12\n");
        snprintf(d, sizeof d, "%s/memory/job", tmp);
        put_fixture(d, "memory.usage_in_bytes", "v1/memory.usage_in_bytes");
        put_fixture(d, "memory.max_usage_in_bytes", "v1/memory.max_usage_in_bytes");
        put_fixture(d, "memory.stat", "v1/memory.stat");
        put_fixture(d, "memory.oom_control", "v1/memory.oom_control");
        put_file(d, "cgroup.procs", "10\n11\n");
        snprintf(d, sizeof d, "%s/memory/job/sub", tmp);
        put_file(d, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
        put_file(d, "cgroup.procs", "13\n");
        snprintf(d, sizeof d, "%s/blkio/job", tmp);
        put_fixture(d, "blkio.throttle.io_service_bytes_recursive", "v1/blkio.throttle.io_service_bytes_recursive");
        put_file(d, "cgroup.procs", "");
        snprintf(mi, sizeof mi,
                 "29 24 0:25 / %s/cpu\\054cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
                 "30 24 0:26 / %s/memory rw - cgroup cgroup rw,memory\n"
                 "31 24 0:27 / %s/blkio rw - cgroup cgroup rw,blkio\n"
                 "25 24 0:21 / %s/systemd rw - cgroup cgroup rw,xattr,name=systemd\n",
                 tmp, tmp, tmp, tmp);
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V1);
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg, &err), 0);
        CU_ASSERT_EQUAL(tr_cgroup_dirfd(cg, 3), -1); /* not in name=systemd */
        CU_ASSERT_PTR_NULL(tr_cgroup_path(cg, 3));
        CU_ASSERT_EQUAL(tr_cgroup_v2_fd(cg), -1);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 4); /* union of the v1 hierarchies: 10..13 */
        tr_usage u;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_EQUAL(u.sources, TR_SRC_CGROUP_V1);
        CU_ASSERT_EQUAL(u.cpu_usec.value, 62310048);
        if (sysconf(_SC_CLK_TCK) == 100)
                CU_ASSERT_EQUAL(u.cpu_user_usec.value, 47210000);
        CU_ASSERT_EQUAL(u.memory_current_bytes.value, 650117120);
        CU_ASSERT_EQUAL(u.memory_peak_bytes.value, 702545920);
        CU_ASSERT_EQUAL(u.rss_bytes.value, 524288000 + 16777216);
        CU_ASSERT_EQUAL(u.oom_kills.value, 3); /* 1 + 2 in the child: summed */
        CU_ASSERT_EQUAL(u.io_read_bytes.value, 1048576 + 524288);
        CU_ASSERT_FALSE(u.psi_cpu_some_usec.available);
        CU_ASSERT_FALSE(u.pids_current.available);
        /* a kernel without the oom_kill counter (before 4.13): unknown, not 0 */
        snprintf(d, sizeof d, "%s/memory/job", tmp);
        put_file(d, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_FALSE(u.oom_kills.available);
        CU_ASSERT_TRUE(u.memory_current_bytes.available);
        bool pop = false;
        CU_ASSERT_EQUAL(tr_cgroup_populated(cg, &pop, &err), 0);
        CU_ASSERT_TRUE(pop);
        tr_cgroup_free(TR_TAKE_PTR(cg));
        rm_tree(tmp);
}

/* A PSI file that answers EOPNOTSUPP (psi=0 kernels that still show the files) is dropped
 * and not retried.  Stand-in for such a file: cgroup.procs of a threaded v2 cgroup, which
 * refuses reads with EOPNOTSUPP (cgroup_procs_start), reached through a symlink named
 * io.pressure in a fixture tree.  After each usage call no fd of ours may point at it. */
static bool fd_open_on(const char *target)
{
        _cleanup_closedir_ DIR *d = opendir("/proc/self/fd");
        if (!d)
                return false;
        struct dirent *de;
        while ((de = readdir(d))) {
                char link[PATH_MAX], path[64];
                snprintf(path, sizeof path, "/proc/self/fd/%s", de->d_name);
                ssize_t n = readlink(path, link, sizeof link - 1);
                if (n <= 0)
                        continue;
                link[n] = '\0';
                if (strcmp(link, target) == 0)
                        return true;
        }
        return false;
}

static void test_psi_unsupported(void)
{
        if (!ts_cgroup_base()) {
                printf("SKIP psi unsupported: needs root and the test base\n");
                return;
        }
        const tr_hierarchies *host = ts_hierarchies();
        char thr[PATH_MAX], dom[PATH_MAX], procs[PATH_MAX];
        if (host->v2 < 0 ||
            tr_hierarchy_fs_path(&host->h[host->v2], ts_cgroup_base(), dom, sizeof dom, NULL) < 0) {
                printf("SKIP psi unsupported: no v2 tree\n");
                return;
        }
        strncat(dom, "/psi-dom", sizeof dom - strlen(dom) - 1);
        snprintf(thr, sizeof thr, "%s/t", dom);
        snprintf(procs, sizeof procs, "%s/cgroup.procs", thr);
        CU_ASSERT_FATAL(mkdir(dom, 0755) == 0 || errno == EEXIST);
        CU_ASSERT_FATAL(mkdir(thr, 0755) == 0 || errno == EEXIST);
        char tpath[PATH_MAX + 16];
        snprintf(tpath, sizeof tpath, "%s/cgroup.type", thr);
        char buf[256];
        int fd = -1;
        if (tr_write_file_at(AT_FDCWD, tpath, "threaded", NULL) < 0 ||
            (fd = open(procs, O_RDONLY | O_CLOEXEC)) < 0 || read(fd, buf, sizeof buf) >= 0 || errno != EOPNOTSUPP) {
                printf("SKIP psi unsupported: a threaded cgroup's cgroup.procs does not answer EOPNOTSUPP here\n");
                if (fd >= 0)
                        close(fd);
                rmdir(thr);
                rmdir(dom);
                return;
        }
        close(fd);

        char tmp[] = "/tmp/procd-cgfx.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char root[PATH_MAX], job[PATH_MAX], link[PATH_MAX + 32], mi[PATH_MAX * 2];
        snprintf(root, sizeof root, "%s/cg2", tmp);
        mkdirs(tmp, "cg2/job");
        snprintf(job, sizeof job, "%s/job", root);
        put_fixture(job, "cpu.stat", "v2/cpu.stat");
        put_fixture(job, "cpu.pressure", "v2/cpu.pressure");
        put_file(job, "cgroup.procs", "");
        snprintf(link, sizeof link, "%s/io.pressure", job);
        CU_ASSERT_EQUAL_FATAL(symlink(procs, link), 0);
        snprintf(mi, sizeof mi, "26 22 0:23 / %s rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n", root);
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        {
                _cleanup_cgroup_ tr_cgroup *cg = NULL;
                tr_error err = { 0 };
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg, &err), 0);
                for (int round = 0; round < 3; round++) {
                        tr_usage u;
                        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
                        CU_ASSERT_TRUE(u.psi_cpu_some_usec.available);
                        CU_ASSERT_FALSE(u.psi_io_some_usec.available);
                        /* dropped after the first EOPNOTSUPP and never reopened */
                        CU_ASSERT_FALSE(fd_open_on(procs));
                }
        }
        rm_tree(tmp);
        rmdir(thr);
        rmdir(dom);
}

/* ---- suites ----------------------------------------------------------------------- */

static const tr_hierarchies *v1hs(void)
{
        static tr_hierarchies hs;
        static int state; /* 0 unknown, 1 ok, -1 none */
        if (state == 0)
                state = v1_view(&hs) ? 1 : -1;
        return state > 0 ? &hs : NULL;
}

#define HOST_TEST(fn, what)                                                                   \
        static void host_##fn(void)                                                           \
        {                                                                                     \
                if (root_and_base(what))                                                      \
                        check_##fn(ts_hierarchies(), "host");                                 \
        }                                                                                     \
        static void v1_##fn(void)                                                             \
        {                                                                                     \
                if (!root_and_base(what))                                                     \
                        return;                                                               \
                if (!v1hs() || ts_hierarchies()->mode != TR_MODE_HYBRID) {                    \
                        printf("SKIP %s (v1 view): host is not hybrid\n", what);              \
                        return;                                                               \
                }                                                                             \
                check_##fn(v1hs(), "v1");                                                     \
        }

HOST_TEST(create_members, "create/attach/members")
HOST_TEST(freeze, "freeze")
HOST_TEST(peak_memory, "peak memory")
HOST_TEST(oom, "oom")
HOST_TEST(kill_escapers, "kill escapers")
HOST_TEST(kill_many, "kill many")
HOST_TEST(members_large, "members beyond one seq_file buffer")
HOST_TEST(kill_timeout, "kill timeout")
HOST_TEST(signal, "signal")

static const tr_hierarchies *nofreezer_hs(void)
{
        static tr_hierarchies hs;
        static int state; /* 0 unknown, 1 ok, -1 none */
        if (state == 0)
                state = v1_view_ex(&hs, true) ? 1 : -1;
        return state > 0 ? &hs : NULL;
}

static void host_signal_reuse(void)
{
        if (root_and_base("signal with pid reuse (v2 freezer)"))
                check_signal_reuse(ts_hierarchies(), "host");
}

static void nofreezer_signal_reuse(void)
{
        if (!root_and_base("signal with pid reuse (no freezer)"))
                return;
        if (!nofreezer_hs()) {
                printf("SKIP signal with pid reuse (no freezer): no v1 view without a freezer\n");
                return;
        }
        check_signal_reuse(nofreezer_hs(), "nofrz");
}

static void nofreezer_signal(void)
{
        if (!root_and_base("signal (no freezer)"))
                return;
        if (!nofreezer_hs()) {
                printf("SKIP signal (no freezer): no v1 view without a freezer\n");
                return;
        }
        check_signal(nofreezer_hs(), "nofrz");
}
HOST_TEST(destroy, "destroy")
HOST_TEST(safety, "safety")

int main(void)
{
        CU_TestInfo host[] = {
                { "create_members", host_create_members },
                { "freeze", host_freeze },
                { "peak_memory", host_peak_memory },
                { "oom", host_oom },
                { "kill_escapers", host_kill_escapers },
                { "kill_many", host_kill_many },
                { "members_large", host_members_large },
                { "kill_timeout", host_kill_timeout },
                { "signal", host_signal },
                { "signal_reuse", host_signal_reuse },
                { "destroy", host_destroy },
                { "safety", host_safety },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo v1[] = {
                { "create_members", v1_create_members },
                { "freeze", v1_freeze },
                { "peak_memory", v1_peak_memory },
                { "oom", v1_oom },
                { "kill_escapers", v1_kill_escapers },
                { "kill_many", v1_kill_many },
                { "members_large", v1_members_large },
                { "kill_timeout", v1_kill_timeout },
                { "signal", v1_signal },
                { "destroy", v1_destroy },
                { "safety", v1_safety },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo nofrz[] = {
                { "signal", nofreezer_signal },
                { "signal_reuse", nofreezer_signal_reuse },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo trees[] = {
                { "pure_v2_tree", test_fixture_tree_v2 },
                { "pure_v1_tree", test_fixture_tree_v1 },
                { "psi_unsupported", test_psi_unsupported },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "cgroup-host", NULL, NULL, NULL, NULL, host },
                { "cgroup-v1-view", NULL, NULL, NULL, NULL, v1 },
                { "cgroup-no-freezer-view", NULL, NULL, NULL, NULL, nofrz },
                { "cgroup-fixture-trees", NULL, NULL, NULL, NULL, trees },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
