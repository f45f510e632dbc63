/* cgtest.c - what the cgroup handle's test programs share (see cgtest.h). */
#include "cgtest.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trackers/proc-read.h"
#include "trackers/util.h"

int run_spinner(void *arg)
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

tr_cgroup *make_cg(const tr_hierarchies *hs, const char *name)
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

tr_cgroup *make_cg_tagged(const tr_hierarchies *hs, const char *prefix, const char *tag)
{
        char name[64];
        snprintf(name, sizeof name, "%s-%s", prefix, tag);
        return make_cg(hs, name);
}

pid_t start_in(tr_cgroup *cg, int (*fn)(void *), void *arg)
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
void assert_everywhere(tr_cgroup *cg, bool present)
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

void kill_destroy(tr_cgroup *cg)
{
        if (!cg)
                return;
        tr_kill_result res;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, 60 * SEC, &res, &err), 0); /* a bound: returns once empty */
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
long long cpu_ticks(pid_t pid)
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

/* Wait until the cgroup lists at least n members (bounded). */
size_t wait_members(tr_cgroup *cg, size_t n, unsigned timeout_ms)
{
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        for (unsigned waited = 0;; waited += 10) {
                if (tr_cgroup_members(cg, &m, NULL) == 0 && m.n >= n)
                        return m.n;
                if (waited >= timeout_ms)
                        return m.n;
                ts_msleep(10);
        }
}

pid_t start_gated(tr_cgroup *cg, int (*fn)(void *), void *arg)
{
        pid_t pid = ts_spawn_in(cg, fn, arg);
        if (pid < 0)
                printf("\n    start in a cgroup: %s\n", strerror((int) -pid));
        CU_ASSERT_FATAL(pid > 1);
        return pid;
}

/* n bytes of anonymous memory, every page touched; NULL when the mapping fails */
static char *touch(size_t n)
{
        char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return NULL;
        for (size_t off = 0; off < n; off += 4096)
                p[off] = 1;
        return p;
}

int run_touch(void *arg)
{
        size_t n = (size_t) (uintptr_t) arg;
        char *p = touch(n);
        if (!p)
                return 3;
        munmap(p, n);
        return 0;
}

int run_hold(void *arg)
{
        if (!touch((size_t) (uintptr_t) arg))
                return 3;
        for (;;)
                pause();
}

int run_many(void *arg)
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

/* pid still the process that had start time `ticks`, and not a zombie */
bool alive_same(pid_t pid, uint64_t ticks)
{
        uint64_t now;
        return tr_pid_start_ticks(pid, &now) == 0 && now == ticks && ts_alive(pid);
}

bool root_and_base(const char *what)
{
        return ts_need_root(what) && ts_cgroup_base() != NULL;
}

void put_file(const char *dir, const char *name, const char *text)
{
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "we");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(text, f);
        fclose(f);
}

void put_fixture(const char *dir, const char *name, const char *rel)
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

void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

void mkdirs(const char *a, const char *b)
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

int count_fds(void)
{
        _cleanup_closedir_ DIR *d = opendir("/proc/self/fd");
        int n = 0;
        if (!d)
                return -1;
        while (readdir(d))
                n++;
        return n;
}

/* The v1 view (without the freezer when no_freezer), discovered once per program. */
static const tr_hierarchies *v1_view_once(bool no_freezer)
{
        static tr_hierarchies hs[2];
        static int state[2]; /* 0 unknown, 1 ok, -1 none */
        if (state[no_freezer] == 0)
                state[no_freezer] = v1_view_ex(&hs[no_freezer], no_freezer) ? 1 : -1;
        return state[no_freezer] > 0 ? &hs[no_freezer] : NULL;
}

const tr_hierarchies *v1hs(void) { return v1_view_once(false); }
const tr_hierarchies *nofreezer_hs(void) { return v1_view_once(true); }

int cgt_run(const char *name, CU_TestInfo *host, CU_TestInfo *v1, const CU_SuiteInfo *extra)
{
        static char host_name[64], v1_name[64];
        snprintf(host_name, sizeof host_name, "%s-host", name);
        snprintf(v1_name, sizeof v1_name, "%s-v1-view", name);
        CU_SuiteInfo suites[7] = {
                { host_name, NULL, NULL, NULL, NULL, host },
                { v1_name, NULL, NULL, NULL, NULL, v1 },
        };
        for (int k = 0; extra && extra[k].pName && k < 4; k++)
                suites[2 + k] = extra[k];
        return ts_run(suites);
}
