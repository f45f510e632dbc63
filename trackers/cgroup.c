/* cgroup.c - a family's cgroup handle (see cgroup.h): open, free, the dirfds, the counter
 * files kept open, read/write of one file.
 *
 * One O_PATH dirfd per hierarchy; every file is reached with openat() from it, so a
 * cgroup renamed or a path component replaced by a symlink after open cannot redirect us.
 * Counter files read on every GetUsage are opened once and pread() from offset 0 (kernfs
 * regenerates the seq_file content on a read at offset 0): 1.5 us per value here instead
 * of 5.7 us for openat+read+close (FACTS).
 *
 * The other concerns live in files of their own, on the same handle (cgroup-internal.h):
 * cgroup-setup.c (create, subtree_control, cpuset, attach, destroy), cgroup-stats.c
 * (members, usage), cgroup-freezer.c, cgroup-kill.c (safety gate, signal, kill, populated).
 *
 * Lifetime: the handle keeps a pointer to the tr_hierarchies it was opened with; that
 * object must outlive the handle (procd and the tests keep one discovered at start).
 */
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procscan.h"
#include "util.h"

static const struct {
        const char *name;
        bool v2;
        tr_controller ctrl; /* v1 hierarchy to look in */
} hot_files[H_COUNT] = {
        [H_CPU_STAT] = { "cpu.stat", true, TR_CTRL_CPU },
        [H_MEM_CURRENT] = { "memory.current", true, TR_CTRL_MEMORY },
        [H_MEM_PEAK] = { "memory.peak", true, TR_CTRL_MEMORY },
        [H_MEM_STAT] = { "memory.stat", true, TR_CTRL_MEMORY },
        [H_MEM_EVENTS] = { "memory.events", true, TR_CTRL_MEMORY },
        [H_IO_STAT] = { "io.stat", true, TR_CTRL_IO },
        [H_PIDS_CURRENT] = { "pids.current", true, TR_CTRL_PIDS },
        [H_PIDS_PEAK] = { "pids.peak", true, TR_CTRL_PIDS },
        [H_CPU_PRESSURE] = { "cpu.pressure", true, TR_CTRL_CPU },
        [H_MEM_PRESSURE] = { "memory.pressure", true, TR_CTRL_MEMORY },
        [H_IO_PRESSURE] = { "io.pressure", true, TR_CTRL_IO },
        [H_EVENTS] = { "cgroup.events", true, TR_CTRL_COUNT },
        /* v2 only: re-reading a kept v2 cgroup.procs from offset 0 restarts the kernel's task
         * iterator (__cgroup_procs_start).  v1 is NOT kept open: its per-open pidlist is
         * cached and reused by a re-read for up to a second (cgroup_pidlist_start): seen on
         * this 6.18 host, a pread at 0 of a kept v1 fd missed a pid added meanwhile that a
         * fresh open listed.  v1 opens it afresh each time. */
        [H_PROCS] = { "cgroup.procs", true, TR_CTRL_COUNT },
        [H1_MEM_USAGE] = { "memory.usage_in_bytes", false, TR_CTRL_MEMORY },
        [H1_MEM_MAX] = { "memory.max_usage_in_bytes", false, TR_CTRL_MEMORY },
        [H1_MEM_STAT] = { "memory.stat", false, TR_CTRL_MEMORY },
        [H1_MEM_NUMA_STAT] = { "memory.numa_stat", false, TR_CTRL_MEMORY }, /* CONFIG_NUMA */
        [H1_CPUACCT_USAGE] = { "cpuacct.usage", false, TR_CTRL_CPUACCT },
        [H1_CPUACCT_USER] = { "cpuacct.usage_user", false, TR_CTRL_CPUACCT },
        [H1_CPUACCT_SYS] = { "cpuacct.usage_sys", false, TR_CTRL_CPUACCT },
        [H1_CPUACCT_ALL] = { "cpuacct.usage_all", false, TR_CTRL_CPUACCT }, /* 4.7+ */
        [H1_CPUACCT_STAT] = { "cpuacct.stat", false, TR_CTRL_CPUACCT },
        [H1_BLKIO] = { "blkio.throttle.io_service_bytes_recursive", false, TR_CTRL_BLKIO },
        [H1_PIDS_CURRENT] = { "pids.current", false, TR_CTRL_PIDS },
        [H1_PIDS_PEAK] = { "pids.peak", false, TR_CTRL_PIDS },
        [H1_FREEZER_STATE] = { "freezer.state", false, TR_CTRL_FREEZER },
        [H1_MEM_OOM] = { "memory.oom_control", false, TR_CTRL_MEMORY },
        [H_MEM_MAX] = { "memory.max", true, TR_CTRL_MEMORY },
        [H_PIDS_MAX] = { "pids.max", true, TR_CTRL_PIDS },
        [H_CPU_MAX] = { "cpu.max", true, TR_CTRL_CPU },
        [H1_MEM_LIMIT] = { "memory.limit_in_bytes", false, TR_CTRL_MEMORY },
        [H1_PIDS_MAX] = { "pids.max", false, TR_CTRL_PIDS },
        [H1_CPU_QUOTA] = { "cpu.cfs_quota_us", false, TR_CTRL_CPU },
        [H1_CPU_PERIOD] = { "cpu.cfs_period_us", false, TR_CTRL_CPU },
};

/* A slot opened at its path now.  A hierarchy left for later (TR_CG_DIR_LAZY, through an
 * opener): if the cgroup the handle's kept dirfds hold still exists.  A slot tr_cgroup_rest
 * closed (TR_CG_DIR_REST): only the directory it was (a cgroup's inode number is not reused
 * on kernfs: the kernel makes it from a 64-bit id).  Gone there (ENOENT/ENOTDIR), ours gone,
 * or another directory at the path: the handle is not in that hierarchy from now on, as
 * when a cgroup is not made in it.  Another failure (EMFILE...): the slot stays for later,
 * tried again on the next use (tr_cg_open_all makes an operation that acts fail on it).
 * Returns the fd or -errno. */
static int open_again(tr_cgroup *cg, int i);

/* Whether the cgroup a kept (or rested) dirfd holds still exists: a lazy slot's path may
 * name a new cgroup made there after ours was removed (job cgroup paths are reused per
 * slot). */
static bool still_ours(tr_cgroup *cg)
{
        for (int j = 0; j < cg->hs->n; j++) {
                if (cg->dirfd[j] == TR_CG_DIR_REST)
                        (void) open_again(cg, j);
                if (cg->dirfd[j] >= 0 &&
                    (faccessat(cg->dirfd[j], "cgroup.procs", F_OK, 0) == 0 || (errno != ENOENT && errno != ENODEV)))
                        return true;
        }
        return false;
}

static int open_again(tr_cgroup *cg, int i)
{
        bool rest = cg->dirfd[i] == TR_CG_DIR_REST;
        char fs[PATH_MAX];
        int fd = -1, e = ENOENT;
        if ((rest || still_ours(cg)) && tr_hierarchy_fs_path(&cg->hs->h[i], cg->path[i], fs, sizeof fs, NULL) == 0) {
                fd = open(fs, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                e = errno;
        }
        struct stat st;
        if (rest && fd >= 0 && (fstat(fd, &st) < 0 || (uint64_t) st.st_ino != cg->rest_ino[i])) {
                close(fd);
                fd = -1;
                e = ENOENT;
        }
        if (fd >= 0) {
                cg->dirfd[i] = fd;
                tr_cg_budget_woke(cg); /* back in the bound (it may rest another handle) */
        } else if (e == ENOENT || e == ENOTDIR) {
                free(TR_TAKE_PTR(cg->path[i]));
                cg->dirfd[i] = -1;
        }
        return fd >= 0 ? fd : -e;
}

int tr_cg_dirfd(tr_cgroup *cg, int i)
{
        if (i < 0 || i >= TR_MAX_HIER)
                return -1;
        if (cg->dirfd[i] != TR_CG_DIR_LAZY && cg->dirfd[i] != TR_CG_DIR_REST)
                return cg->dirfd[i];
        int fd = open_again(cg, i);
        return fd >= 0 ? fd : -1;
}

int tr_cg_open_all(tr_cgroup *cg, const char *op, tr_error *err)
{
        for (int i = 0; i < cg->hs->n; i++) {
                int was = cg->dirfd[i];
                if (was != TR_CG_DIR_LAZY && was != TR_CG_DIR_REST)
                        continue;
                int fd = open_again(cg, i);
                if (fd < 0 && cg->dirfd[i] == was)
                        return tr_error_setx(err, -fd, "%s: cannot open %s:%s", op, cg->hs->h[i].mount_point,
                                             cg->path[i]);
        }
        return 0;
}

int tr_cg_v2_index(tr_cgroup *cg)
{
        int i = cg->hs->v2;
        return (i >= 0 && tr_cg_dirfd(cg, i) >= 0) ? i : -1;
}

int tr_cg_v1_index(tr_cgroup *cg, tr_controller c)
{
        if ((unsigned) c >= TR_CTRL_COUNT)
                return -1;
        int i = cg->hs->v1_of[c];
        return (i >= 0 && tr_cg_dirfd(cg, i) >= 0) ? i : -1;
}

static int hot_index(tr_cgroup *cg, enum tr_cg_hot h)
{
        return hot_files[h].v2 ? tr_cg_v2_index(cg) : tr_cg_v1_index(cg, hot_files[h].ctrl);
}

/* pread a counter file through the fd kept open (opened on first use).  -ENOENT when the
 * file does not exist in this cgroup (remembered), -ENODEV when the cgroup was removed
 * under the open fd. */
int tr_cg_hot_fd(tr_cgroup *cg, enum tr_cg_hot h)
{
        if (cg->hot[h] == TR_CG_HOT_ABSENT)
                return -ENOENT;
        if (cg->hot[h] == TR_CG_HOT_UNTRIED) {
                int i = hot_index(cg, h);
                if (i < 0) {
                        cg->hot[h] = TR_CG_HOT_ABSENT;
                        return -ENOENT;
                }
                int fd = openat(cg->dirfd[i], hot_files[h].name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0) {
                        int e = errno;
                        if (e == ENOENT)
                                cg->hot[h] = TR_CG_HOT_ABSENT;
                        return -e;
                }
                cg->hot[h] = fd;
        }
        return cg->hot[h];
}

int tr_cg_hot_read(tr_cgroup *cg, enum tr_cg_hot h, char *buf, size_t size)
{
        int fd = tr_cg_hot_fd(cg, h);
        return fd < 0 ? fd : tr_pread_all(fd, buf, size);
}

bool tr_cg_hot_u64(tr_cgroup *cg, enum tr_cg_hot h, uint64_t *v)
{
        char buf[64];
        return tr_cg_hot_read(cg, h, buf, sizeof buf) >= 0 && tr_parse_u64(buf, v) == 0;
}

/* A PSI file that answers EOPNOTSUPP never will (kernels that show the files with psi=0
 * on the command line refuse the read in psi_show): drop the fd and remember the file as
 * absent for this handle, so that usage does not retry it on every call. */
int tr_cg_psi_read(tr_cgroup *cg, enum tr_cg_hot h, char *buf, size_t size)
{
        int r = tr_cg_hot_read(cg, h, buf, size);
        if (r == -EOPNOTSUPP)
                tr_cg_hot_forget(cg, h);
        return r;
}

void tr_cg_hot_forget(tr_cgroup *cg, enum tr_cg_hot h)
{
        if (cg->hot[h] >= 0)
                close(cg->hot[h]);
        cg->hot[h] = TR_CG_HOT_ABSENT;
}

void tr_cg_hot_close_all(tr_cgroup *cg)
{
        for (int h = 0; h < H_COUNT; h++) {
                if (cg->hot[h] >= 0)
                        close(cg->hot[h]);
                cg->hot[h] = TR_CG_HOT_UNTRIED;
        }
        for (int i = 0; i < TR_MAX_HIER; i++) {
                tr_cg_subtree_free(cg->procs_tree[i]);
                cg->procs_tree[i] = NULL;
        }
        tr_cg_subtree_free(cg->oom_tree);
        cg->oom_tree = NULL;
        tr_cg_notify_unwatch(cg->hs->notify, &cg->own_mark);
        cg->own_empty = false;
        cg->own_unwatched = false;
}

bool tr_cg_path_ok(const char *path)
{
        if (!path || path[0] != '/')
                return false;
        for (const char *p = path; *p;) {
                p += strspn(p, "/");
                size_t len = strcspn(p, "/");
                if (len == 2 && p[0] == '.' && p[1] == '.')
                        return false;
                p += len;
        }
        return true;
}

static tr_cgroup *cg_new(const tr_hierarchies *hs, unsigned flags)
{
        tr_cgroup *cg = calloc(1, sizeof *cg);
        if (!cg)
                return NULL;
        cg->hs = hs;
        cg->flags = flags;
        cg->v2_fd = -1;
        for (int i = 0; i < TR_MAX_HIER; i++)
                cg->dirfd[i] = -1;
        for (int h = 0; h < H_COUNT; h++)
                cg->hot[h] = TR_CG_HOT_UNTRIED;
        return cg;
}

struct tr_cg_opener {
        const tr_hierarchies *hs;
        char *parent[TR_MAX_HIER]; /* cgroup path of the kept parent directory, NULL: none */
        int fd[TR_MAX_HIER];       /* its O_PATH dirfd, -1: it does not exist there */
};

tr_cg_opener *tr_cg_opener_new(const tr_hierarchies *hs)
{
        tr_cg_opener *o = calloc(1, sizeof *o);
        if (!o)
                return NULL;
        o->hs = hs;
        for (int i = 0; i < TR_MAX_HIER; i++)
                o->fd[i] = -1;
        return o;
}

void tr_cg_opener_free(tr_cg_opener *o)
{
        if (!o)
                return;
        for (int i = 0; i < TR_MAX_HIER; i++) {
                free(o->parent[i]);
                if (o->fd[i] >= 0)
                        close(o->fd[i]);
        }
        free(o);
}

/* fd of cgroup `path` in hierarchy i through o's kept parent directory: -2 when o cannot
 * serve it (no parent to keep, out of memory, a failed lookup: the caller opens the full
 * path), -1 with errno ENOENT when the parent did not exist there when it was looked up
 * (remembered for the opener's life: hierarchies a cgroup is not made in cost nothing). */
static int opener_open(tr_cg_opener *o, int i, const char *path)
{
        const char *slash = strrchr(path, '/');
        if (!slash || slash == path || !slash[1] || slash[-1] == '/')
                return -2;
        size_t plen = (size_t) (slash - path);
        if (!o->parent[i] || strlen(o->parent[i]) != plen || memcmp(o->parent[i], path, plen) != 0) {
                char *parent = strndup(path, plen), fs[PATH_MAX];
                if (!parent || tr_hierarchy_fs_path(&o->hs->h[i], parent, fs, sizeof fs, NULL) < 0) {
                        free(parent);
                        return -2;
                }
                free(o->parent[i]);
                if (o->fd[i] >= 0)
                        close(o->fd[i]);
                o->parent[i] = parent;
                o->fd[i] = open(fs, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (o->fd[i] < 0 && errno != ENOENT && errno != ENOTDIR) {
                        free(TR_TAKE_PTR(o->parent[i]));
                        return -2;
                }
        }
        if (o->fd[i] < 0) {
                errno = ENOENT;
                return -1;
        }
        int fd = openat(o->fd[i], slash + 1, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        /* a parent removed (and made again) since it was kept: the full path decides */
        return fd < 0 && errno == ENOENT ? -2 : fd;
}

/* path as slot i's path: "/a/b/" -> "/a/b" (destroy needs the last component). */
static int set_path(tr_cgroup *cg, int i, const char *path, tr_error *err)
{
        cg->path[i] = strdup(path);
        if (!cg->path[i])
                return tr_error_set(err, ENOMEM, "out of memory");
        size_t n = strlen(cg->path[i]);
        while (n > 1 && cg->path[i][n - 1] == '/')
                cg->path[i][--n] = '\0';
        return 0;
}

/* Open cgroup `path` of hierarchy i into the handle (through o's kept parent when o is not
 * NULL), or with `later` only keep the path for a first use (tr_cg_dirfd).  0 when opened
 * (kept), 1 when it does not exist there (or lies outside that mount), -errno on other
 * failures. */
static int open_one_with(tr_cgroup *cg, tr_cg_opener *o, int i, const char *path, bool later, tr_error *err)
{
        char fs[PATH_MAX];
        int r = tr_hierarchy_fs_path(&cg->hs->h[i], path, fs, sizeof fs, NULL);
        if (r == -ENOENT)
                return 1;
        if (r < 0)
                return tr_error_set(err, -r, "cgroup path %s: %s", path, strerror(-r));
        if (later) {
                r = set_path(cg, i, path, err);
                if (r == 0)
                        cg->dirfd[i] = TR_CG_DIR_LAZY;
                return r;
        }
        int fd = o ? opener_open(o, i, path) : -2;
        if (fd == -2)
                fd = open(fs, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 1;
                return tr_error_setx(err, errno, "open cgroup %s", fs);
        }
        r = set_path(cg, i, path, err);
        if (r < 0) {
                close(fd);
                return r;
        }
        cg->dirfd[i] = fd;
        return 0;
}

static int open_one(tr_cgroup *cg, int i, const char *path, tr_error *err)
{
        return open_one_with(cg, NULL, i, path, false, err);
}

static int cg_finish_open(tr_cgroup **cgp, tr_cgroup **out, const char *what, tr_error *err)
{
        tr_cgroup *cg = *cgp;
        for (int i = 0; i < cg->hs->n; i++)
                if (cg->dirfd[i] >= 0) {
                        *out = TR_TAKE_PTR(*cgp);
                        return 0;
                }
        return tr_error_set(err, ENOENT, "cgroup %s exists in no hierarchy", what);
}

/* ---- open / free ------------------------------------------------------------------- */

int tr_cgroup_open(const tr_hierarchies *hs, const char *path, unsigned flags, tr_cgroup **out, tr_error *err)
{
        return tr_cgroup_open_in(hs, path, TR_HIER_ALL, flags, out, err);
}

int tr_cgroup_open_in(const tr_hierarchies *hs, const char *path, uint32_t hier_mask, unsigned flags, tr_cgroup **out,
                      tr_error *err)
{
        if (!tr_cg_path_ok(path))
                return tr_error_set(err, EINVAL, "bad cgroup path '%s' (must be absolute, without '..')",
                                    path ? path : "");
        _cleanup_cgroup_ tr_cgroup *cg = cg_new(hs, flags);
        if (!cg)
                return tr_error_set(err, ENOMEM, "out of memory");
        for (int i = 0; i < hs->n; i++) {
                if (!(hier_mask & (1u << i)))
                        continue;
                int r = open_one(cg, i, path, err);
                if (r < 0)
                        return r;
        }
        return cg_finish_open(&cg, out, path, err);
}

int tr_cgroup_open_same(const tr_cgroup *src, unsigned flags, tr_cgroup **out, tr_error *err)
{
        _cleanup_cgroup_ tr_cgroup *cg = cg_new(src->hs, flags);
        if (!cg)
                return tr_error_set(err, ENOMEM, "out of memory");
        for (int i = 0; i < src->hs->n; i++) {
                if (!src->path[i])
                        continue;
                int r = set_path(cg, i, src->path[i], err);
                if (r < 0)
                        return r;
                /* a slot src has not opened: lazy, or at rest with the inode it must find
                 * again (opened at its path on first use) */
                if (src->dirfd[i] < 0) {
                        cg->dirfd[i] = src->dirfd[i] == TR_CG_DIR_REST ? TR_CG_DIR_REST : TR_CG_DIR_LAZY;
                        cg->rest_ino[i] = src->rest_ino[i];
                        continue;
                }
                cg->dirfd[i] = fcntl(src->dirfd[i], F_DUPFD_CLOEXEC, 3);
                if (cg->dirfd[i] < 0)
                        return tr_error_setx(err, errno, "dup of the cgroup %s's fd", src->path[i]);
        }
        return cg_finish_open(&cg, out, src->path[0] ? src->path[0] : "", err);
}

int tr_cgroup_join(tr_cgroup *into, tr_cgroup *from, tr_error *err)
{
        if (into->hs != from->hs || into->flags != from->flags) {
                tr_cgroup_free(from);
                return tr_error_set(err, EINVAL, "joining cgroup handles of other hierarchies or rights");
        }
        for (int i = 0; i < into->hs->n; i++) {
                if (into->path[i] || !from->path[i])
                        continue;
                into->path[i] = TR_TAKE_PTR(from->path[i]);
                into->dirfd[i] = from->dirfd[i];
                into->rest_ino[i] = from->rest_ino[i]; /* a slot at rest keeps its inode */
                from->dirfd[i] = -1;
                if (i == into->hs->v2 && into->v2_fd < 0) {
                        into->v2_fd = from->v2_fd;
                        from->v2_fd = -1;
                }
        }
        tr_cgroup_free(from);
        return 0;
}

tr_cgroup *tr_cg_new(const tr_hierarchies *hs, unsigned flags) { return cg_new(hs, flags); }

int tr_cg_adopt(tr_cgroup *cg, int i, const char *parent_path, const char *name, int fd)
{
        size_t n = strlen(parent_path);
        while (n > 1 && parent_path[n - 1] == '/')
                n--;
        char *p = malloc(n + strlen(name) + 2);
        if (!p)
                return -ENOMEM;
        sprintf(p, "%.*s%s%s", (int) n, parent_path, n == 1 ? "" : "/", name);
        cg->path[i] = p;
        cg->dirfd[i] = fd;
        return 0;
}

int tr_cgroup_open_pid(const tr_hierarchies *hs, pid_t pid, unsigned flags, tr_cgroup **out, tr_error *err)
{
        return tr_cgroup_open_for_pid(hs, NULL, pid, flags, out, err);
}

int tr_cgroup_open_for_pid(const tr_hierarchies *hs, const char *path, pid_t pid, unsigned flags,
                           tr_cgroup **out, tr_error *err)
{
        if (path && !tr_cg_path_ok(path))
                return tr_error_set(err, EINVAL, "bad cgroup path '%s' (must be absolute, without '..')", path);
        if (pid <= 0)
                return tr_error_set(err, EINVAL, "bad pid %d", (int) pid);
        tr_pid_cgroups pc;
        int r = tr_pid_cgroups_read(hs, pid, &pc, err);
        if (r < 0)
                return r;
        char what[PATH_MAX + 32];
        snprintf(what, sizeof what, "%s (pid %d)", path ? path : "", (int) pid);
        r = tr_cgroup_open_for_cgroups(hs, NULL, path, &pc, what, flags, out, err);
        tr_pid_cgroups_clear(&pc);
        return r;
}

int tr_cgroup_open_for_cgroups(const tr_hierarchies *hs, tr_cg_opener *o, const char *path, const tr_pid_cgroups *pc,
                               const char *what, unsigned flags, tr_cgroup **out, tr_error *err)
{
        if ((path || !pc) && !tr_cg_path_ok(path))
                return tr_error_set(err, EINVAL, "bad cgroup path '%s' (must be absolute, without '..')",
                                    path ? path : "");
        _cleanup_cgroup_ tr_cgroup *cg = cg_new(hs, flags);
        if (!cg)
                return tr_error_set(err, ENOMEM, "out of memory");
        bool opened = false;
        for (int k = 0; k < hs->n; k++) {
                /* through an opener: the primary hierarchy's order (v2 first) */
                int i = !o || hs->v2 < 0 ? k : k == 0 ? hs->v2 : k <= hs->v2 ? k - 1 : k;
                /* pid's own cgroup wins where it is `path` or below it: the family is tied
                 * to its most-specific cgroup (without path: always pid's cgroup); elsewhere
                 * `path` as named, when this hierarchy has it. */
                const char *p = pc && pc->paths[i] && (!path || tr_cgroup_path_under(pc->paths[i], path))
                                        ? pc->paths[i]
                                        : path;
                if (!p)
                        continue;
                int r = open_one_with(cg, o, i, p, o && opened, err);
                if (r < 0)
                        return r;
                opened = opened || r == 0;
        }
        return cg_finish_open(&cg, out, what ? what : path ? path : "", err);
}

void tr_cgroup_rest(tr_cgroup *cg)
{
        tr_cg_budget_unlink(cg);
        bool absent[H_COUNT];
        for (int h = 0; h < H_COUNT; h++)
                absent[h] = cg->hot[h] == TR_CG_HOT_ABSENT;
        tr_cg_hot_close_all(cg);
        for (int h = 0; h < H_COUNT; h++) /* a file found missing stays so: not tried again */
                if (absent[h])
                        cg->hot[h] = TR_CG_HOT_ABSENT;
        if (cg->v2_fd >= 0)
                close(TR_TAKE_FD(cg->v2_fd));
        free(TR_TAKE_PTR(cg->procs_buf));
        cg->procs_cap = 0;
        for (int i = 0; i < TR_MAX_HIER; i++) {
                struct stat st;
                if (cg->dirfd[i] < 0 || fstat(cg->dirfd[i], &st) < 0)
                        continue;
                cg->rest_ino[i] = (uint64_t) st.st_ino;
                close(cg->dirfd[i]);
                cg->dirfd[i] = TR_CG_DIR_REST;
        }
}

void tr_cgroup_free(tr_cgroup *cg)
{
        if (!cg)
                return;
        tr_cg_budget_unlink(cg);
        tr_cg_hot_close_all(cg);
        for (int i = 0; i < TR_MAX_HIER; i++) {
                if (cg->dirfd[i] >= 0)
                        close(cg->dirfd[i]);
                free(cg->path[i]);
        }
        if (cg->v2_fd >= 0)
                close(cg->v2_fd);
        free(cg->procs_buf);
        free(cg);
}

const tr_hierarchies *tr_cgroup_hierarchies(const tr_cgroup *cg) { return cg->hs; }

const char *tr_cgroup_path(const tr_cgroup *cg, int i)
{
        return (i >= 0 && i < TR_MAX_HIER) ? cg->path[i] : NULL;
}

int tr_cgroup_primary_index(const tr_cgroup *cg)
{
        if (cg->hs->v2 >= 0 && tr_cgroup_path(cg, cg->hs->v2))
                return cg->hs->v2;
        for (int i = 0; i < cg->hs->n; i++)
                if (tr_cgroup_path(cg, i))
                        return i;
        return -1;
}

int tr_cgroup_dirfd(tr_cgroup *cg, int i) { return tr_cg_dirfd(cg, i); }

int tr_cgroup_v2_fd(tr_cgroup *cg)
{
        int i = tr_cg_v2_index(cg);
        if (i < 0)
                return -1;
        if (cg->v2_fd < 0)
                cg->v2_fd = openat(tr_cg_dirfd(cg, i), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return cg->v2_fd;
}

/* ---- read / write ------------------------------------------------------------------ */

static int check_index(tr_cgroup *cg, int i, tr_error *err)
{
        if (i < 0 || i >= cg->hs->n || tr_cg_dirfd(cg, i) < 0)
                return tr_error_set(err, ENOENT, "cgroup not present in hierarchy %d", i);
        return 0;
}

/* attach and write change the cgroup (membership, limits, freezer.state...): like every
 * mutating operation they need TR_CG_MAY_ACT.  Only the flag: unlike kill/freeze they may
 * target a cgroup holding the caller (a process attaching itself, a limit on its own job). */
int tr_cg_check_may_change(tr_cgroup *cg, const char *op, tr_error *err)
{
        if (!(cg->flags & TR_CG_MAY_ACT))
                return tr_error_set(err, EPERM, "%s: cgroup handle was not created or handed to us", op);
        return tr_cg_open_all(cg, op, err);
}

int tr_cgroup_write(tr_cgroup *cg, int i, const char *file, const char *value, tr_error *err)
{
        int r = tr_cg_check_may_change(cg, "write", err);
        if (r < 0)
                return r;
        r = check_index(cg, i, err);
        if (r < 0)
                return r;
        if (!file || strchr(file, '/'))
                return tr_error_set(err, EINVAL, "bad cgroup file name '%s'", file ? file : "");
        r = tr_write_file_at(cg->dirfd[i], file, value, err);
        return r < 0 ? tr_error_prefix(err, "cgroup %s", cg->path[i]) : 0;
}

int tr_cgroup_read(tr_cgroup *cg, int i, const char *file, char *buf, size_t size, tr_error *err)
{
        int r = check_index(cg, i, err);
        if (r < 0)
                return r;
        if (!file || strchr(file, '/'))
                return tr_error_set(err, EINVAL, "bad cgroup file name '%s'", file ? file : "");
        r = tr_read_file_at(cg->dirfd[i], file, buf, size, err);
        return r < 0 ? tr_error_prefix(err, "cgroup %s", cg->path[i]) : r;
}

bool tr_cgroup_has_file(tr_cgroup *cg, int i, const char *file)
{
        if (i < 0 || i >= cg->hs->n || tr_cg_dirfd(cg, i) < 0 || !file)
                return false;
        return faccessat(cg->dirfd[i], file, F_OK, 0) == 0;
}
