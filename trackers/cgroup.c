/* cgroup.c - a family's cgroup handle (see cgroup.h).
 *
 * One O_PATH dirfd per hierarchy; every file is reached with openat() from it, so a
 * cgroup renamed or a path component replaced by a symlink after open cannot redirect us.
 * Counter files read on every GetUsage are opened once and pread() from offset 0 (kernfs
 * regenerates the seq_file content on a read at offset 0): 1.5 us per value here instead
 * of 5.7 us for openat+read+close (FACTS).
 *
 * Lifetime: the handle keeps a pointer to the tr_hierarchies it was opened with; that
 * object must outlive the handle (procd and the tests keep one discovered at start).
 */
#include "cgroup.h"
#include "procscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgparse.h"
#include "util.h"

/* Counter files kept open.  The v2 ones live in the v2 hierarchy; the v1 ones in the v1
 * hierarchy holding `ctrl`. */
enum hot_file {
        H_CPU_STAT,
        H_MEM_CURRENT,
        H_MEM_PEAK,
        H_MEM_STAT,
        H_MEM_EVENTS,
        H_IO_STAT,
        H_PIDS_CURRENT,
        H_PIDS_PEAK,
        H_CPU_PRESSURE,
        H_MEM_PRESSURE,
        H_IO_PRESSURE,
        H_EVENTS,
        H_PROCS,
        H1_MEM_USAGE,
        H1_MEM_MAX,
        H1_MEM_STAT,
        H1_CPUACCT_USAGE,
        H1_CPUACCT_USER,
        H1_CPUACCT_SYS,
        H1_CPUACCT_STAT,
        H1_BLKIO,
        H1_PIDS_CURRENT,
        H1_PIDS_PEAK,
        H1_FREEZER_STATE,
        H1_MEM_OOM,
        H_COUNT
};

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
        [H1_CPUACCT_USAGE] = { "cpuacct.usage", false, TR_CTRL_CPUACCT },
        [H1_CPUACCT_USER] = { "cpuacct.usage_user", false, TR_CTRL_CPUACCT },
        [H1_CPUACCT_SYS] = { "cpuacct.usage_sys", false, TR_CTRL_CPUACCT },
        [H1_CPUACCT_STAT] = { "cpuacct.stat", false, TR_CTRL_CPUACCT },
        [H1_BLKIO] = { "blkio.throttle.io_service_bytes_recursive", false, TR_CTRL_BLKIO },
        [H1_PIDS_CURRENT] = { "pids.current", false, TR_CTRL_PIDS },
        [H1_PIDS_PEAK] = { "pids.peak", false, TR_CTRL_PIDS },
        [H1_FREEZER_STATE] = { "freezer.state", false, TR_CTRL_FREEZER },
        [H1_MEM_OOM] = { "memory.oom_control", false, TR_CTRL_MEMORY },
};

#define HOT_UNTRIED (-2)
#define HOT_ABSENT (-1)

struct tr_cgroup {
        const tr_hierarchies *hs;
        unsigned flags;
        char *path[TR_MAX_HIER];
        int dirfd[TR_MAX_HIER];
        int v2_fd; /* O_RDONLY, for clone3(CLONE_INTO_CGROUP) */
        int hot[H_COUNT];
        char *procs_buf; /* text of the v2 cgroup.procs, reused across calls */
        size_t procs_cap;
};

/* ---- small helpers ----------------------------------------------------------------- */

static void sleep_usec(uint64_t usec)
{
        struct timespec ts = { .tv_sec = (time_t) (usec / 1000000u), .tv_nsec = (long) (usec % 1000000u) * 1000 };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Poll backoff: 1 ms doubling to 16 ms, never past the deadline. */
static void backoff(uint64_t *step, uint64_t deadline)
{
        uint64_t now = tr_now_usec();
        uint64_t s = *step;
        if (now + s > deadline)
                s = deadline > now ? deadline - now : 0;
        if (s)
                sleep_usec(s);
        if (*step < 16000)
                *step *= 2;
}

static bool is_gone_errno(int e) { return e == ENOENT || e == ENODEV; }

static int v2_index(const tr_cgroup *cg)
{
        int i = cg->hs->v2;
        return (i >= 0 && cg->dirfd[i] >= 0) ? i : -1;
}

static int v1_index(const tr_cgroup *cg, tr_controller c)
{
        if ((unsigned) c >= TR_CTRL_COUNT)
                return -1;
        int i = cg->hs->v1_of[c];
        return (i >= 0 && cg->dirfd[i] >= 0) ? i : -1;
}

static int hot_index(const tr_cgroup *cg, enum hot_file h)
{
        return hot_files[h].v2 ? v2_index(cg) : v1_index(cg, hot_files[h].ctrl);
}

/* pread a counter file through the fd kept open (opened on first use).  -ENOENT when the
 * file does not exist in this cgroup (remembered), -ENODEV when the cgroup was removed
 * under the open fd. */
static int hot_fd(tr_cgroup *cg, enum hot_file h)
{
        if (cg->hot[h] == HOT_ABSENT)
                return -ENOENT;
        if (cg->hot[h] == HOT_UNTRIED) {
                int i = hot_index(cg, h);
                if (i < 0) {
                        cg->hot[h] = HOT_ABSENT;
                        return -ENOENT;
                }
                int fd = openat(cg->dirfd[i], hot_files[h].name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0) {
                        int e = errno;
                        if (e == ENOENT)
                                cg->hot[h] = HOT_ABSENT;
                        return -e;
                }
                cg->hot[h] = fd;
        }
        return cg->hot[h];
}

static int hot_read(tr_cgroup *cg, enum hot_file h, char *buf, size_t size)
{
        int fd = hot_fd(cg, h);
        return fd < 0 ? fd : tr_pread_all(fd, buf, size);
}

/* A PSI file that answers EOPNOTSUPP never will (kernels that show the files with psi=0
 * on the command line refuse the read in psi_show): drop the fd and remember the file as
 * absent for this handle, so that usage does not retry it on every call. */
static int psi_read(tr_cgroup *cg, enum hot_file h, char *buf, size_t size)
{
        int r = hot_read(cg, h, buf, size);
        if (r == -EOPNOTSUPP) {
                if (cg->hot[h] >= 0)
                        close(cg->hot[h]);
                cg->hot[h] = HOT_ABSENT;
        }
        return r;
}

static void hot_close_all(tr_cgroup *cg)
{
        for (int h = 0; h < H_COUNT; h++) {
                if (cg->hot[h] >= 0)
                        close(cg->hot[h]);
                cg->hot[h] = HOT_UNTRIED;
        }
}

static bool path_ok(const char *path)
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
                cg->hot[h] = HOT_UNTRIED;
        return cg;
}

/* Open cgroup `path` of hierarchy i into the handle.  0 when opened, 1 when it does not
 * exist there (or lies outside that mount), -errno on other failures. */
static int open_one(tr_cgroup *cg, int i, const char *path, tr_error *err)
{
        char fs[PATH_MAX];
        int r = tr_hierarchy_fs_path(&cg->hs->h[i], path, fs, sizeof fs, NULL);
        if (r == -ENOENT)
                return 1;
        if (r < 0)
                return tr_error_set(err, -r, "cgroup path %s: %s", path, strerror(-r));
        int fd = open(fs, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 1;
                return tr_error_setx(err, errno, "open cgroup %s", fs);
        }
        cg->path[i] = strdup(path);
        if (cg->path[i]) { /* "/a/b/" -> "/a/b" (destroy needs the last component) */
                size_t n = strlen(cg->path[i]);
                while (n > 1 && cg->path[i][n - 1] == '/')
                        cg->path[i][--n] = '\0';
        }
        if (!cg->path[i]) {
                close(fd);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        cg->dirfd[i] = fd;
        return 0;
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
        if (!path_ok(path))
                return tr_error_set(err, EINVAL, "bad cgroup path '%s' (must be absolute, without '..')",
                                    path ? path : "");
        _cleanup_cgroup_ tr_cgroup *cg = cg_new(hs, flags);
        if (!cg)
                return tr_error_set(err, ENOMEM, "out of memory");
        for (int i = 0; i < hs->n; i++) {
                int r = open_one(cg, i, path, err);
                if (r < 0)
                        return r;
        }
        return cg_finish_open(&cg, out, path, err);
}

int tr_cgroup_open_pid(const tr_hierarchies *hs, pid_t pid, unsigned flags, tr_cgroup **out, tr_error *err)
{
        return tr_cgroup_open_for_pid(hs, NULL, pid, flags, out, err);
}

int tr_cgroup_open_for_pid(const tr_hierarchies *hs, const char *path, pid_t pid, unsigned flags,
                           tr_cgroup **out, tr_error *err)
{
        if (path && !path_ok(path))
                return tr_error_set(err, EINVAL, "bad cgroup path '%s' (must be absolute, without '..')", path);
        if (pid <= 0)
                return tr_error_set(err, EINVAL, "bad pid %d", (int) pid);
        tr_pid_cgroups pc;
        int r = tr_pid_cgroups_read(hs, pid, &pc, err);
        if (r < 0)
                return r;
        _cleanup_cgroup_ tr_cgroup *cg = cg_new(hs, flags);
        if (!cg) {
                tr_pid_cgroups_clear(&pc);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        for (int i = 0; i < hs->n && r >= 0; i++) {
                /* pid's own cgroup wins where it is `path` or below it: the family is tied
                 * to its most-specific cgroup (without path: always pid's cgroup); elsewhere
                 * `path` as named, when this hierarchy has it. */
                if (pc.paths[i] && (!path || tr_cgroup_path_under(pc.paths[i], path)))
                        r = open_one(cg, i, pc.paths[i], err);
                else
                        r = path ? open_one(cg, i, path, err) : 1;
        }
        tr_pid_cgroups_clear(&pc);
        if (r < 0)
                return r;
        char what[PATH_MAX + 32];
        snprintf(what, sizeof what, "%s (pid %d)", path ? path : "", (int) pid);
        return cg_finish_open(&cg, out, what, err);
}

void tr_cgroup_free(tr_cgroup *cg)
{
        if (!cg)
                return;
        hot_close_all(cg);
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

int tr_cgroup_dirfd(const tr_cgroup *cg, int i)
{
        return (i >= 0 && i < TR_MAX_HIER) ? cg->dirfd[i] : -1;
}

int tr_cgroup_v2_fd(tr_cgroup *cg)
{
        int i = v2_index(cg);
        if (i < 0)
                return -1;
        if (cg->v2_fd < 0)
                cg->v2_fd = openat(cg->dirfd[i], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return cg->v2_fd;
}

/* ---- create ------------------------------------------------------------------------ */

/* Controllers procd needs from a pure-v2 root when the init system did not enable them. */
#define NEEDED_AT_ROOT \
        ((1u << TR_CTRL_CPU) | (1u << TR_CTRL_MEMORY) | (1u << TR_CTRL_IO) | (1u << TR_CTRL_PIDS))

static uint32_t controllers_mask(int dfd, const char *file)
{
        char buf[1024];
        if (tr_read_file_at(dfd, file, buf, sizeof buf, NULL) < 0)
                return 0;
        uint32_t mask = 0;
        for (const char *p = buf; *p;) {
                p += strspn(p, " \t\n");
                size_t len = strcspn(p, " \t\n");
                if (!len)
                        break;
                char name[32];
                snprintf(name, sizeof name, "%.*s", (int) (len < 31 ? len : 31), p);
                int c = tr_controller_from_name(name);
                if (c >= 0)
                        mask |= 1u << c;
                p += len;
        }
        return mask;
}

/* v2 rule: a child gets controller X only if the parent's subtree_control has +X, which
 * needs X in the parent's cgroup.controllers.  Enable what is offered, one controller per
 * write so that one refusal does not block the others.
 *
 * At the hierarchy root we write nothing on a hybrid host (its v2 root offers only
 * hugetlb here; "+hugetlb" at the root would change every cgroup on the host, and every
 * controller we use lives in v1) and, on a pure v2 host, only the controllers procd needs
 * (cpu, memory, io, pids) that the init system has not already enabled (systemd always
 * has, so normally this writes nothing either).
 *
 * Errors are ignored on purpose: EBUSY is the "no internal processes" rule (the parent
 * already holds processes, e.g. a job that nests cgroups under its own), and a controller
 * that cannot be enabled only makes some usage field unavailable (then /proc answers). */
static void enable_subtree(const tr_hierarchies *hs, int pfd, bool is_root)
{
        uint32_t offered = controllers_mask(pfd, "cgroup.controllers");
        uint32_t enabled = controllers_mask(pfd, "cgroup.subtree_control");
        uint32_t want = offered & ~enabled;
        if (is_root)
                want = hs->mode == TR_MODE_V2 ? (want & NEEDED_AT_ROOT) : 0;
        for (int c = 0; c < TR_CTRL_COUNT; c++) {
                if (!(want & (1u << c)))
                        continue;
                char v[40];
                snprintf(v, sizeof v, "+%s", tr_controller_name((tr_controller) c));
                (void) tr_write_file_at(pfd, "cgroup.subtree_control", v, NULL);
        }
}

/* v1 cpuset quirk: a new cgroup starts with empty cpuset.cpus/mems and refuses tasks
 * (ENOSPC) until they are set; copy the parent's (unless cgroup.clone_children did). */
static int cpuset_inherit(int pfd, int cfd, tr_error *err)
{
        static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
        for (size_t k = 0; k < TR_ARRAY_SIZE(files); k++) {
                char cur[4096], val[4096];
                if (tr_read_file_at(cfd, files[k], cur, sizeof cur, NULL) >= 0 && cur[0] != '\n' && cur[0])
                        continue;
                int r = tr_read_file_at(pfd, files[k], val, sizeof val, err);
                if (r < 0)
                        return r;
                r = tr_write_file_at(cfd, files[k], val, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int mkdir_p_one(const tr_hierarchies *hs, int i, const char *path, tr_error *err)
{
        const tr_hierarchy *h = &hs->h[i];
        char fs[PATH_MAX];
        if (tr_hierarchy_fs_path(h, path, fs, sizeof fs, NULL) < 0)
                return 1; /* outside what this mount shows */
        const char *rel = path;
        if (strcmp(h->mount_root, "/") != 0)
                rel = path + strlen(h->mount_root);
        _cleanup_close_ int fd = open(h->mount_point, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return tr_error_setx(err, errno, "open %s", h->mount_point);
        bool is_cpuset = !h->is_v2 && (h->controllers & (1u << TR_CTRL_CPUSET));
        bool at_root = true;
        for (const char *p = rel; *p;) {
                p += strspn(p, "/");
                size_t len = strcspn(p, "/");
                if (!len)
                        break;
                char comp[NAME_MAX + 1];
                if (len > NAME_MAX)
                        return tr_error_set(err, ENAMETOOLONG, "cgroup path component too long in %s", path);
                memcpy(comp, p, len);
                comp[len] = '\0';
                p += len;
                if (h->is_v2)
                        enable_subtree(hs, fd, at_root);
                bool created = mkdirat(fd, comp, 0755) == 0;
                if (!created && errno != EEXIST)
                        return tr_error_setx(err, errno, "mkdir %s (component %s)", fs, comp);
                int cfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd < 0)
                        return tr_error_setx(err, errno, "open %s (component %s)", fs, comp);
                if (is_cpuset) {
                        int r = cpuset_inherit(fd, cfd, err);
                        if (r < 0) {
                                close(cfd);
                                return tr_error_prefix(err, "cpuset of %s", fs);
                        }
                }
                close(fd);
                fd = cfd;
                at_root = false;
        }
        return 0;
}

int tr_cgroup_create(const tr_hierarchies *hs, const char *path, tr_cgroup **out, tr_error *err)
{
        if (!path_ok(path))
                return tr_error_set(err, EINVAL, "bad cgroup path '%s' (must be absolute, without '..')",
                                    path ? path : "");
        if (path[strspn(path, "/")] == '\0')
                return tr_error_set(err, EINVAL, "cannot create the root cgroup");
        for (int i = 0; i < hs->n; i++) {
                int r = mkdir_p_one(hs, i, path, err);
                if (r < 0)
                        return r;
        }
        return tr_cgroup_open(hs, path, TR_CG_MAY_ACT | TR_CG_OWNED, out, err);
}

/* ---- read / write / attach --------------------------------------------------------- */

static int check_index(const tr_cgroup *cg, int i, tr_error *err)
{
        if (i < 0 || i >= cg->hs->n || cg->dirfd[i] < 0)
                return tr_error_set(err, ENOENT, "cgroup not present in hierarchy %d", i);
        return 0;
}

/* attach and write change the cgroup (membership, limits, freezer.state...): like every
 * mutating operation they need TR_CG_MAY_ACT.  Only the flag: unlike kill/freeze they may
 * target a cgroup holding the caller (a process attaching itself, a limit on its own job). */
static int check_may_change(const tr_cgroup *cg, const char *op, tr_error *err)
{
        if (!(cg->flags & TR_CG_MAY_ACT))
                return tr_error_set(err, EPERM, "%s: cgroup handle was not created or handed to us", op);
        return 0;
}

int tr_cgroup_write(tr_cgroup *cg, int i, const char *file, const char *value, tr_error *err)
{
        int r = check_may_change(cg, "write", err);
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
        if (i < 0 || i >= cg->hs->n || cg->dirfd[i] < 0 || !file)
                return false;
        return faccessat(cg->dirfd[i], file, F_OK, 0) == 0;
}

int tr_cgroup_attach(tr_cgroup *cg, pid_t pid, tr_error *err)
{
        int r = check_may_change(cg, "attach", err);
        if (r < 0)
                return r;
        if (pid <= 0)
                return tr_error_set(err, EINVAL, "bad pid %d", (int) pid);
        char v[32];
        snprintf(v, sizeof v, "%d", (int) pid);
        for (int i = 0; i < cg->hs->n; i++) {
                if (cg->dirfd[i] < 0)
                        continue;
                r = tr_write_file_at(cg->dirfd[i], "cgroup.procs", v, err);
                if (r < 0)
                        return tr_error_prefix(err, "attach pid %d to %s:%s", (int) pid, cg->hs->h[i].mount_point,
                                               cg->path[i]);
        }
        return 0;
}

/* ---- walking a cgroup tree --------------------------------------------------------- */

/* A subdirectory entry (cgroupfs fills d_type; other filesystems may say DT_UNKNOWN). */
static bool is_subdir(DIR *d, const struct dirent *de)
{
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                return false;
        if (de->d_type != DT_UNKNOWN)
                return de->d_type == DT_DIR;
        struct stat st;
        return fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

typedef int (*walk_fn)(int dfd, void *ud);

#define MAX_DEPTH 256 /* walks and destroy stop descending here (bounded recursion, fds) */

/* Kernel fact: kernfs (cgroupfs) gives a directory st_nlink = 2 + its number of
 * subdirectories (kernfs_refresh_inode), as ext4 and tmpfs do.  So nlink == 2 means "no child
 * cgroup" for one fstat() on the O_PATH fd instead of open + getdents + close; any other value
 * (children, or a filesystem such as btrfs that always says 1) means: look. */
static bool may_have_subdirs(int dfd)
{
        struct stat st;
        return fstat(dfd, &st) < 0 || st.st_nlink != 2;
}

static int walk_tree(int dfd, walk_fn fn, void *ud, int depth);

/* Call walk_tree on every child cgroup directory of dfd.  A child that vanishes during the
 * walk (rmdir racing us: ENOENT, or ENODEV from a removed kernfs node) is skipped. */
/* A readable DIR over the cgroup directory dfd (an O_PATH fd cannot be read).  1 with *out
 * set, 0 when the cgroup vanished meanwhile, or -errno. */
static int open_dir(int dfd, DIR **out)
{
        int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rfd < 0)
                return is_gone_errno(errno) ? 0 : -errno;
        *out = fdopendir(rfd);
        if (!*out) {
                int e = errno;
                close(rfd);
                return -e;
        }
        return 1;
}

static int walk_children(int dfd, walk_fn fn, void *ud, int depth)
{
        if (depth > MAX_DEPTH || !may_have_subdirs(dfd))
                return 0;
        _cleanup_closedir_ DIR *d = NULL;
        int r = open_dir(dfd, &d);
        if (r <= 0)
                return r;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!is_subdir(d, de))
                        continue;
                _cleanup_close_ int cfd = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd < 0) {
                        if (is_gone_errno(errno))
                                continue;
                        return -errno;
                }
                r = walk_tree(cfd, fn, ud, depth + 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Call fn on dfd and every descendant cgroup directory (parents first).  fn returning < 0
 * stops the walk. */
static int walk_tree(int dfd, walk_fn fn, void *ud, int depth)
{
        int r = fn(dfd, ud);
        if (r < 0)
                return r;
        return walk_children(dfd, fn, ud, depth);
}

/* Add the pids of cgroup.procs text to set. */
static int add_pids(tr_pidset *set, char *text)
{
        for (char *p = text; *p;) {
                size_t len = strcspn(p, "\n");
                char save = p[len];
                p[len] = '\0';
                pid_t pid;
                if (len && tr_parse_pid(p, &pid) == 0 && tr_pidset_add(set, pid) < 0)
                        return -ENOMEM;
                p[len] = save;
                p += len;
                if (*p)
                        p++;
        }
        return 0;
}

/* cgroup.procs of dfd, opened afresh: -ENOENT/-ENODEV when that cgroup is gone. */
static int read_procs_at(int dfd, tr_pidset *set)
{
        _cleanup_free_ char *text = NULL;
        int r = tr_read_file_alloc_at(dfd, "cgroup.procs", &text, NULL, NULL);
        return r < 0 ? r : add_pids(set, text);
}

/* walk_fn for descendants: one vanishing mid-walk is not an error. */
static int collect_procs(int dfd, void *ud)
{
        int r = read_procs_at(dfd, ud);
        return is_gone_errno(-r) ? 0 : r;
}

/* The handle's own v2 cgroup.procs through the fd kept open (see H_PROCS).  Kernel quirk:
 * cgroup.procs is a multi-record seq_file, so one read returns at most one seq buffer
 * (PAGE_SIZE, >= 4096 bytes) and a short read is not EOF by itself.  Each request here is
 * at least 4096 bytes, so a read that came back short with room left in a 4096-byte buffer
 * for another record (<= 12 bytes) ended because the iterator did: EOF, without the extra
 * pread that would return 0.  (A regular file - the fixture trees - ends there too.) */
static int read_procs_hot(tr_cgroup *cg, tr_pidset *set)
{
        int fd = hot_fd(cg, H_PROCS);
        if (fd < 0)
                return fd;
        size_t off = 0;
        for (;;) {
                if (cg->procs_cap - off < 4096 + 1) {
                        size_t cap = cg->procs_cap ? cg->procs_cap * 2 : 8192;
                        char *nb = realloc(cg->procs_buf, cap);
                        if (!nb)
                                return -ENOMEM;
                        cg->procs_buf = nb;
                        cg->procs_cap = cap;
                }
                size_t want = cg->procs_cap - 1 - off;
                ssize_t n = pread(fd, cg->procs_buf + off, want, (off_t) off);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                off += (size_t) n;
                if (n == 0 || ((size_t) n < want && (size_t) n + 64 <= 4096))
                        break;
        }
        cg->procs_buf[off] = '\0';
        return add_pids(set, cg->procs_buf);
}

int tr_cgroup_members(tr_cgroup *cg, tr_pidset *out, tr_error *err)
{
        tr_pidset_clear(out);
        int v2 = v2_index(cg);
        bool any = false;
        for (int i = 0; i < cg->hs->n; i++) {
                if (cg->dirfd[i] < 0 || (v2 >= 0 && i != v2))
                        continue;
                /* a gone top-level cgroup: cgroup.procs is ENOENT (openat) or ENODEV (read on
                 * the kept fd) there */
                int r = i == v2 ? read_procs_hot(cg, out) : read_procs_at(cg->dirfd[i], out);
                if (is_gone_errno(-r))
                        continue;
                if (r == 0)
                        r = walk_children(cg->dirfd[i], collect_procs, out, 1);
                if (r < 0)
                        return tr_error_setx(err, -r, "listing members of %s:%s", cg->hs->h[i].mount_point,
                                             cg->path[i]);
                any = true;
        }
        if (!any)
                return tr_error_set(err, ENODEV, "cgroup is gone in every hierarchy");
        tr_pidset_normalize(out);
        return 0;
}

/* ---- usage ------------------------------------------------------------------------- */

static int sum_oom_v1(int dfd, void *ud)
{
        uint64_t *sum = ud, v;
        char buf[256];
        if (tr_read_file_at(dfd, "memory.oom_control", buf, sizeof buf, NULL) >= 0 &&
            tr_parse_oom_control_v1(buf, &v) == 0)
                *sum += v;
        return 0;
}

static bool hot_u64(tr_cgroup *cg, enum hot_file h, uint64_t *v)
{
        char buf[64];
        return hot_read(cg, h, buf, sizeof buf) >= 0 && tr_parse_u64(buf, v) == 0;
}

static void usage_cpu(tr_cgroup *cg, tr_usage *u, char *buf, size_t size)
{
        /* cpu.stat is core accounting in v2: present in every v2 cgroup without the cpu
         * controller, so on hybrid hosts it comes from the v2 tree too. */
        if (hot_read(cg, H_CPU_STAT, buf, size) >= 0 && tr_parse_cpu_stat(buf, u) == 0 && u->cpu_usec.available)
                return;
        uint64_t v;
        if (hot_u64(cg, H1_CPUACCT_USAGE, &v))
                tr_u64_set(u, &u->cpu_usec, v / 1000u, TR_SRC_CGROUP_V1);
        /* cpuacct.usage_user/_sys (ns, 4.x+) are finer than cpuacct.stat's USER_HZ ticks */
        uint64_t us, sy;
        if (hot_u64(cg, H1_CPUACCT_USER, &us) && hot_u64(cg, H1_CPUACCT_SYS, &sy)) {
                tr_u64_set(u, &u->cpu_user_usec, us / 1000u, TR_SRC_CGROUP_V1);
                tr_u64_set(u, &u->cpu_system_usec, sy / 1000u, TR_SRC_CGROUP_V1);
        } else if (hot_read(cg, H1_CPUACCT_STAT, buf, size) >= 0) {
                (void) tr_parse_cpuacct_stat(buf, sysconf(_SC_CLK_TCK), u);
        }
}

static void usage_memory(tr_cgroup *cg, tr_usage *u, char *buf, size_t size)
{
        uint64_t v;
        if (hot_u64(cg, H_MEM_CURRENT, &v)) {
                tr_u64_set(u, &u->memory_current_bytes, v, TR_SRC_CGROUP_V2);
                if (hot_u64(cg, H_MEM_PEAK, &v)) /* memory.peak: 5.19+ */
                        tr_u64_set(u, &u->memory_peak_bytes, v, TR_SRC_CGROUP_V2);
                if (hot_read(cg, H_MEM_STAT, buf, size) >= 0)
                        (void) tr_parse_memory_stat_v2(buf, u);
                /* memory.events is hierarchical (memory.events.local is not) */
                if (hot_read(cg, H_MEM_EVENTS, buf, size) >= 0)
                        (void) tr_parse_memory_events(buf, u);
                return;
        }
        if (hot_u64(cg, H1_MEM_USAGE, &v))
                tr_u64_set(u, &u->memory_current_bytes, v, TR_SRC_CGROUP_V1);
        if (hot_u64(cg, H1_MEM_MAX, &v))
                tr_u64_set(u, &u->memory_peak_bytes, v, TR_SRC_CGROUP_V1);
        if (hot_read(cg, H1_MEM_STAT, buf, size) >= 0)
                (void) tr_parse_memory_stat_v1(buf, u);
        /* Kernel quirk: v1 memory.oom_control's oom_kill counts only kills in that very
         * cgroup, not its descendants (memcg_memory_event stops at the first level on v1):
         * sum the subtree.  The own file is kept open; descendants are walked only when the
         * directory has subdirectories.  No oom_kill line (kernels before 4.13): unknown. */
        uint64_t sum;
        int i = v1_index(cg, TR_CTRL_MEMORY);
        if (i >= 0 && hot_read(cg, H1_MEM_OOM, buf, size) >= 0 && tr_parse_oom_control_v1(buf, &sum) == 0 &&
            walk_children(cg->dirfd[i], sum_oom_v1, &sum, 1) == 0)
                tr_u64_set(u, &u->oom_kills, sum, TR_SRC_CGROUP_V1);
}

static void usage_pids_io_psi(tr_cgroup *cg, tr_usage *u, char *buf, size_t size)
{
        uint64_t v;
        if (hot_u64(cg, H_PIDS_CURRENT, &v))
                tr_u64_set(u, &u->pids_current, v, TR_SRC_CGROUP_V2);
        else if (hot_u64(cg, H1_PIDS_CURRENT, &v))
                tr_u64_set(u, &u->pids_current, v, TR_SRC_CGROUP_V1);
        if (hot_u64(cg, H_PIDS_PEAK, &v))
                tr_u64_set(u, &u->pids_peak, v, TR_SRC_CGROUP_V2);
        else if (hot_u64(cg, H1_PIDS_PEAK, &v))
                tr_u64_set(u, &u->pids_peak, v, TR_SRC_CGROUP_V1);

        if (hot_read(cg, H_IO_STAT, buf, size) >= 0)
                (void) tr_parse_io_stat(buf, u);
        else if (hot_read(cg, H1_BLKIO, buf, size) >= 0)
                /* Observed on this 6.18 host: blkio.throttle.* count only on devices that
                 * have a throttle rule in the cgroup; otherwise they stay "Total 0". */
                (void) tr_parse_blkio_bytes(buf, u);

        static const struct {
                enum hot_file h;
                size_t some, full; /* offsets of the tr_u64 fields */
        } psi[] = {
                { H_CPU_PRESSURE, offsetof(tr_usage, psi_cpu_some_usec), offsetof(tr_usage, psi_cpu_full_usec) },
                { H_MEM_PRESSURE, offsetof(tr_usage, psi_memory_some_usec), offsetof(tr_usage, psi_memory_full_usec) },
                { H_IO_PRESSURE, offsetof(tr_usage, psi_io_some_usec), offsetof(tr_usage, psi_io_full_usec) },
        };
        for (size_t k = 0; k < TR_ARRAY_SIZE(psi); k++) {
                uint64_t some = 0, full = 0;
                bool has_full = false;
                if (psi_read(cg, psi[k].h, buf, size) < 0 || tr_parse_pressure(buf, &some, &full, &has_full) < 0)
                        continue;
                tr_u64_set(u, (tr_u64 *) ((char *) u + psi[k].some), some, TR_SRC_CGROUP_V2);
                if (has_full)
                        tr_u64_set(u, (tr_u64 *) ((char *) u + psi[k].full), full, TR_SRC_CGROUP_V2);
        }
}

int tr_cgroup_usage(tr_cgroup *cg, tr_usage *out, tr_error *err)
{
        char buf[16384];
        tr_usage_init(out);
        usage_cpu(cg, out, buf, sizeof buf);
        usage_memory(cg, out, buf, sizeof buf);
        usage_pids_io_psi(cg, out, buf, sizeof buf);
        _cleanup_pidset_ tr_pidset members = TR_PIDSET_INIT;
        int r = tr_cgroup_members(cg, &members, err);
        if (r == 0) {
                int src = v2_index(cg) >= 0 ? TR_SRC_CGROUP_V2 : TR_SRC_CGROUP_V1;
                tr_u64_set(out, &out->num_procs, members.n, (tr_source) src);
        }
        if (out->sources == 0)
                return tr_error_set(err, ENODEV, "cgroup is gone in every hierarchy it had");
        tr_error_clear(err);
        return 0;
}

/* ---- safety ------------------------------------------------------------------------ */

/* The cgroup still exists in some hierarchy of the handle (a removed directory's cgroup.procs
 * is gone even though our O_PATH fd still names it). */
static bool cg_exists(tr_cgroup *cg)
{
        for (int i = 0; i < cg->hs->n; i++)
                if (cg->dirfd[i] >= 0 && faccessat(cg->dirfd[i], "cgroup.procs", F_OK, 0) == 0)
                        return true;
        return false;
}

/* Destructive operations on a cgroup that was removed under the handle report -ENODEV (the
 * family may live on elsewhere: the caller falls back to /proc), never a false success. */
static int check_exists(tr_cgroup *cg, const char *op, tr_error *err)
{
        return cg_exists(cg) ? 0 : tr_error_set(err, ENODEV, "%s: cgroup is gone in every hierarchy it had", op);
}

/* Which process among the caller and its ancestors (its parent chain up to PID 1, at most
 * 64 steps: the shell, batch daemon or init that started us) sits in the handle's cgroup or
 * below it, or 0 when none: freezing or killing that would stop ourselves or our parents.
 * self_only: look at the caller alone.  One /proc/PID/cgroup read per process looked at. */
static pid_t holds_self_or_ancestor(const tr_cgroup *cg, bool self_only)
{
        pid_t pid = getpid();
        for (int depth = 0; pid >= 1 && depth < 64; depth++) {
                tr_pid_cgroups pc;
                if (tr_pid_cgroups_read(cg->hs, pid, &pc, NULL) < 0)
                        return depth == 0 ? pid : 0; /* our own cgroup unknown: refuse */
                bool held = false;
                for (int i = 0; i < cg->hs->n && !held; i++)
                        held = cg->dirfd[i] >= 0 && cg->path[i] && pc.paths[i] &&
                               tr_cgroup_path_under(pc.paths[i], cg->path[i]);
                tr_pid_cgroups_clear(&pc);
                if (held)
                        return pid;
                if (self_only || pid == 1)
                        break;
                tr_proc p;
                if (tr_proc_stat_read(pid, &p) < 0)
                        break; /* an ancestor that exited meanwhile ends the chain */
                pid = p.ppid;
        }
        return 0;
}

static int check_may_act(tr_cgroup *cg, const char *op, bool destroy, tr_error *err)
{
        if (!(cg->flags & TR_CG_MAY_ACT) && !(destroy && (cg->flags & TR_CG_OWNED)))
                return tr_error_set(err, EPERM, "%s: cgroup handle was not created or handed to us", op);
        for (int i = 0; i < cg->hs->n; i++)
                if (cg->dirfd[i] >= 0 && tr_cgroup_is_root(&cg->hs->h[i], cg->path[i]))
                        return tr_error_set(err, EPERM, "%s: %s:%s is a hierarchy root", op,
                                            cg->hs->h[i].mount_point, cg->path[i]);
        /* destroy only rmdirs (a cgroup holding a process cannot be removed anyway): the
         * caller alone is checked there */
        pid_t holder = holds_self_or_ancestor(cg, destroy);
        if (holder == getpid())
                return tr_error_set(err, EPERM, "%s: the cgroup holds this process", op);
        if (holder > 0)
                return tr_error_set(err, EPERM, "%s: the cgroup holds pid %d, an ancestor of this process", op,
                                    (int) holder);
        return 0;
}

/* ---- freeze / thaw ----------------------------------------------------------------- */

const char *tr_freeze_state_name(tr_freeze_state s)
{
        switch (s) {
        case TR_THAWED: return "thawed";
        case TR_FREEZING: return "freezing";
        case TR_FROZEN: return "frozen";
        }
        return "?";
}

static bool has_v2_freeze(tr_cgroup *cg)
{
        return tr_cgroup_has_file(cg, cg->hs->v2, "cgroup.freeze");
}

static int v1_freezer(tr_cgroup *cg)
{
        int i = v1_index(cg, TR_CTRL_FREEZER);
        return (i >= 0 && tr_cgroup_has_file(cg, i, "freezer.state")) ? i : -1;
}

/* v2: "frozen" of cgroup.events, -1 unknown. */
static int v2_frozen(tr_cgroup *cg)
{
        char buf[256];
        int populated, frozen;
        if (hot_read(cg, H_EVENTS, buf, sizeof buf) < 0 || tr_parse_cgroup_events(buf, &populated, &frozen) < 0)
                return -1;
        return frozen;
}

/* v1: freezer.state as a tr_freeze_state; -errno on failure.  Reading it is what moves
 * FREEZING to FROZEN in the kernel (update_if_frozen), so polling it is required. */
static int v1_state(tr_cgroup *cg)
{
        char buf[64];
        int r = hot_read(cg, H1_FREEZER_STATE, buf, sizeof buf);
        if (r < 0)
                return r;
        if (strncmp(buf, "FROZEN", 6) == 0)
                return TR_FROZEN;
        if (strncmp(buf, "FREEZING", 8) == 0)
                return TR_FREEZING;
        return TR_THAWED;
}

/* Current freeze state of the freezer the handle uses (v2 preferred). */
static tr_freeze_state current_state(tr_cgroup *cg)
{
        if (has_v2_freeze(cg)) {
                char buf[16];
                bool asked = tr_read_file_at(cg->dirfd[cg->hs->v2], "cgroup.freeze", buf, sizeof buf, NULL) > 0 &&
                             buf[0] == '1';
                if (v2_frozen(cg) == 1)
                        return TR_FROZEN;
                return asked ? TR_FREEZING : TR_THAWED;
        }
        int s = v1_state(cg);
        return s < 0 ? TR_THAWED : (tr_freeze_state) s;
}

static int do_freeze(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        uint64_t deadline = tr_now_usec() + timeout_usec, step = 1000;
        *reached = TR_THAWED;
        if (has_v2_freeze(cg)) {
                int r = tr_write_file_at(cg->dirfd[cg->hs->v2], "cgroup.freeze", "1", err);
                if (r < 0)
                        return r;
                /* "frozen 1" appears in cgroup.events once every task stopped; a task in
                 * uninterruptible sleep delays it. */
                for (;;) {
                        int f = v2_frozen(cg);
                        if (f == 1) {
                                *reached = TR_FROZEN;
                                return 0;
                        }
                        if (tr_now_usec() >= deadline) {
                                *reached = TR_FREEZING;
                                return 0;
                        }
                        backoff(&step, deadline);
                }
        }
        int i = v1_freezer(cg);
        if (i < 0)
                return tr_error_set(err, EOPNOTSUPP, "no freezer for this cgroup");
        int r = tr_write_file_at(cg->dirfd[i], "freezer.state", "FROZEN", err);
        if (r < 0)
                return r;
        for (;;) {
                int s = v1_state(cg);
                if (s < 0)
                        return tr_error_setx(err, -s, "reading freezer.state");
                if (s == TR_FROZEN || tr_now_usec() >= deadline) {
                        *reached = s == TR_FROZEN ? TR_FROZEN : TR_FREEZING;
                        return 0;
                }
                backoff(&step, deadline);
        }
}

/* Thaw both freezers (a v1 FROZEN state left by anyone would keep tasks stopped even
 * when the v2 cgroup is thawed). */
static int do_thaw(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        uint64_t deadline = tr_now_usec() + timeout_usec, step = 1000;
        bool v2 = has_v2_freeze(cg);
        int i = v1_freezer(cg);
        if (!v2 && i < 0)
                return tr_error_set(err, EOPNOTSUPP, "no freezer for this cgroup");
        if (v2) {
                int r = tr_write_file_at(cg->dirfd[cg->hs->v2], "cgroup.freeze", "0", err);
                if (r < 0)
                        return r;
        }
        if (i >= 0 && v1_state(cg) != TR_THAWED) {
                int r = tr_write_file_at(cg->dirfd[i], "freezer.state", "THAWED", err);
                if (r < 0)
                        return r;
        }
        for (;;) {
                bool v2_done = !v2 || v2_frozen(cg) != 1;
                bool v1_done = i < 0 || v1_state(cg) == TR_THAWED;
                if (v2_done && v1_done) {
                        *reached = TR_THAWED;
                        return 0;
                }
                if (tr_now_usec() >= deadline) {
                        /* not confirmed thawed: report what the freezer says (a v1
                         * FREEZING is not FROZEN) */
                        *reached = current_state(cg);
                        if (*reached == TR_THAWED)
                                *reached = TR_FREEZING;
                        return 0;
                }
                backoff(&step, deadline);
        }
}

static int freeze_or_thaw(tr_cgroup *cg, bool freeze, uint64_t timeout_usec, tr_freeze_state *reached,
                          tr_error *err)
{
        const char *what = freeze ? "freeze" : "thaw";
        tr_freeze_state dummy;
        int r = check_may_act(cg, what, false, err);
        if (r == 0)
                r = check_exists(cg, what, err);
        if (r < 0)
                return r;
        if (!reached)
                reached = &dummy;
        return freeze ? do_freeze(cg, timeout_usec, reached, err) : do_thaw(cg, timeout_usec, reached, err);
}

int tr_cgroup_freeze(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        return freeze_or_thaw(cg, true, timeout_usec, reached, err);
}

int tr_cgroup_thaw(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        return freeze_or_thaw(cg, false, timeout_usec, reached, err);
}

/* ---- signal / kill ----------------------------------------------------------------- */

#define FREEZE_BOUND_USEC 200000u /* how long signal/kill wait for one freeze */

static bool has_freezer(tr_cgroup *cg) { return has_v2_freeze(cg) || v1_freezer(cg) >= 0; }

static tr_cgroup_hook_fn signal_hook;
static void *signal_hook_ud;

void tr_cgroup_set_signal_hook(tr_cgroup_hook_fn fn, void *ud)
{
        signal_hook = fn;
        signal_hook_ud = ud;
}

/* List the family into *members and send sig to each member except ourselves, never to a
 * process that merely reuses a listed pid.  Returns 0 or the listing's -errno.
 *
 * Each member's start time is read right after the listing, and the signal goes through
 * tr_safe_kill(pid, start), which signals only the process with that start time (through
 * a pidfd).  A pid that was reused between the listing and the start-time read is caught
 * by listing again: only pids listed both before and after their start times were read are
 * signalled (a stranger that took a member's pid is not in the cgroup; one that took it
 * and is in the cgroup is a member).  A pid gone by the start-time read is skipped.
 *
 * This matters where no freezer holds the family still (no freezer, or the freeze only
 * reached FREEZING): members exit and pids get reused while we list.  It is done on the
 * frozen path too: a frozen task cannot exit on its own, but a fatal signal from elsewhere
 * gets through the v2 freezer, so a listed pid can still be freed and reused there.  The
 * cost is one /proc/PID/stat read per member (two, with tr_safe_kill's own check) and one
 * more listing: small next to the freeze wait, and only on signal/kill. */
static int signal_members(tr_cgroup *cg, int sig, tr_pidset *members, tr_error *err)
{
        int r = tr_cgroup_members(cg, members, err);
        if (r < 0)
                return r;
        if (members->n == 0)
                return 0;
        _cleanup_free_ uint64_t *ticks = calloc(members->n, sizeof *ticks);
        if (!ticks)
                return tr_error_set(err, ENOMEM, "out of memory");
        for (size_t k = 0; k < members->n; k++)
                if (tr_pid_start_ticks(members->pids[k], &ticks[k]) < 0)
                        ticks[k] = 0; /* gone: not signalled */
        _cleanup_pidset_ tr_pidset again = TR_PIDSET_INIT;
        r = tr_cgroup_members(cg, &again, err);
        if (r < 0)
                return r;
        if (signal_hook)
                signal_hook(signal_hook_ud);
        pid_t self = getpid();
        for (size_t k = 0; k < members->n; k++) {
                pid_t pid = members->pids[k];
                if (pid == self || ticks[k] == 0 || !tr_pidset_contains(&again, pid))
                        continue;
                (void) tr_safe_kill(pid, ticks[k], sig);
        }
        return 0;
}

int tr_cgroup_signal(tr_cgroup *cg, int sig, tr_error *err)
{
        int r = check_may_act(cg, "signal", false, err);
        if (r == 0)
                r = check_exists(cg, "signal", err);
        if (r < 0)
                return r;
        if (sig < 0 || sig >= NSIG)
                return tr_error_set(err, EINVAL, "bad signal %d", sig);
        bool froze = false;
        tr_freeze_state st = TR_THAWED;
        if (has_freezer(cg) && current_state(cg) == TR_THAWED) {
                r = do_freeze(cg, FREEZE_BOUND_USEC, &st, err);
                if (r < 0)
                        return r;
                froze = true;
        }
        _cleanup_pidset_ tr_pidset members = TR_PIDSET_INIT;
        r = signal_members(cg, sig, &members, err);
        /* Thaw only what we froze: a family frozen by the caller stays frozen (its SIGCONT
         * or SIGSTOP is delivered and takes effect at thaw, as with a stopped process). */
        if (froze) {
                tr_error terr = { 0 };
                int t = do_thaw(cg, FREEZE_BOUND_USEC, &st, &terr);
                if (t < 0 && r == 0) {
                        if (err)
                                *err = terr;
                        r = t;
                }
        }
        return r;
}

void tr_kill_result_free(tr_kill_result *r)
{
        if (r)
                tr_pidset_free(&r->survivors);
}

/* Empty: no member in the membership source. */
static int is_empty(tr_cgroup *cg, bool *empty)
{
        bool populated;
        int r = tr_cgroup_populated(cg, &populated, NULL);
        if (r == -ENODEV || r == -ENOENT) {
                *empty = true; /* the cgroup itself is gone: so are its processes */
                return 0;
        }
        if (r < 0)
                return r;
        *empty = !populated;
        return 0;
}

/* Wait until empty or the deadline. */
static bool wait_empty(tr_cgroup *cg, uint64_t deadline)
{
        uint64_t step = 500;
        for (;;) {
                bool empty = false;
                if (is_empty(cg, &empty) == 0 && empty)
                        return true;
                if (tr_now_usec() >= deadline)
                        return false;
                backoff(&step, deadline);
        }
}

static int kill_via_cgroup_kill(tr_cgroup *cg, uint64_t deadline, tr_kill_result *res, tr_error *err)
{
        res->method = "cgroup.kill";
        /* cgroup.kill (5.14+) SIGKILLs the whole subtree in the kernel and makes forks
         * racing it fail, so one write suffices. */
        int r = tr_write_file_at(cg->dirfd[cg->hs->v2], "cgroup.kill", "1", err);
        if (r < 0)
                return r;
        /* A v1 freezer left FROZEN keeps the killed tasks from dying until thawed. */
        int i = v1_freezer(cg);
        if (i >= 0 && v1_state(cg) != TR_THAWED)
                (void) tr_write_file_at(cg->dirfd[i], "freezer.state", "THAWED", NULL);
        res->empty = wait_empty(cg, deadline);
        return 0;
}

static int kill_via_freeze(tr_cgroup *cg, uint64_t deadline, tr_kill_result *res, tr_error *err)
{
        bool freezer = has_freezer(cg);
        res->method = freezer ? "freeze+kill" : "kill";
        _cleanup_pidset_ tr_pidset members = TR_PIDSET_INIT;
        for (;;) {
                tr_freeze_state st;
                res->rounds++;
                uint64_t now = tr_now_usec();
                uint64_t left = deadline > now ? deadline - now : 0;
                if (freezer)
                        (void) do_freeze(cg, left < FREEZE_BOUND_USEC ? left : FREEZE_BOUND_USEC, &st, NULL);
                /* SIGKILL is queued to frozen tasks; they die when thawed (v1) or at once
                 * (v2 lets fatal signals through its freezer). */
                int r = signal_members(cg, SIGKILL, &members, err);
                if (r == -ENODEV || r == -ENOENT) {
                        res->empty = true;
                        return 0;
                }
                if (r < 0) {
                        /* never leave the family frozen behind an error */
                        if (freezer)
                                (void) do_thaw(cg, FREEZE_BOUND_USEC, &st, NULL);
                        return r;
                }
                if (freezer)
                        (void) do_thaw(cg, FREEZE_BOUND_USEC, &st, NULL);
                uint64_t round_end = tr_now_usec() + 50000;
                if (wait_empty(cg, round_end < deadline ? round_end : deadline)) {
                        res->empty = true;
                        return 0;
                }
                if (tr_now_usec() >= deadline)
                        return 0;
        }
}

int tr_cgroup_kill(tr_cgroup *cg, uint64_t timeout_usec, tr_kill_result *res, tr_error *err)
{
        memset(res, 0, sizeof *res);
        res->method = "none";
        int r = check_may_act(cg, "kill", false, err);
        if (r == 0)
                r = check_exists(cg, "kill", err);
        if (r < 0)
                return r;
        uint64_t start = tr_now_usec(), deadline = start + timeout_usec;
        r = -EOPNOTSUPP;
        if (tr_cgroup_has_file(cg, cg->hs->v2, "cgroup.kill"))
                r = kill_via_cgroup_kill(cg, deadline, res, err);
        /* cgroup.kill refuses threaded cgroups with EOPNOTSUPP (cgroup_kill_write): the
         * freeze+kill rounds still work there. */
        if (r == -EOPNOTSUPP) {
                tr_error_clear(err);
                r = kill_via_freeze(cg, deadline, res, err);
        }
        res->elapsed_usec = tr_now_usec() - start;
        if (r < 0)
                return r;
        if (!res->empty) {
                /* Survivors at the bound (tasks in D state, or still exiting). */
                if (tr_cgroup_members(cg, &res->survivors, NULL) < 0)
                        tr_pidset_clear(&res->survivors);
                res->empty = res->survivors.n == 0;
        }
        return 0;
}

/* ---- populated / destroy ----------------------------------------------------------- */

int tr_cgroup_populated(tr_cgroup *cg, bool *populated, tr_error *err)
{
        int v2 = v2_index(cg);
        if (v2 >= 0) {
                char buf[256];
                int pop, frozen;
                int r = hot_read(cg, H_EVENTS, buf, sizeof buf);
                if (r >= 0 && tr_parse_cgroup_events(buf, &pop, &frozen) == 0 && pop >= 0) {
                        *populated = pop == 1;
                        return 0;
                }
                if (is_gone_errno(-r))
                        return tr_error_set(err, ENODEV, "cgroup %s is gone", cg->path[v2]);
        }
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        int r = tr_cgroup_members(cg, &m, err);
        if (r < 0)
                return r;
        *populated = m.n > 0;
        return 0;
}

/* rmdir dfd/name, retrying EBUSY (tasks still exiting) until the deadline. */
static int rmdir_retry(int dfd, const char *name, uint64_t deadline)
{
        uint64_t step = 1000;
        for (;;) {
                if (unlinkat(dfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                        return 0;
                if (errno != EBUSY || tr_now_usec() >= deadline)
                        return -errno;
                backoff(&step, deadline);
        }
}

/* Remove every descendant directory of dfd, deepest first (at most MAX_DEPTH levels: a
 * deeper tree is reported, not recursed into without bound). */
static int rmdir_children(int dfd, uint64_t deadline, char *failed, size_t fsz, int depth)
{
        if (depth > MAX_DEPTH)
                return -ELOOP;
        _cleanup_closedir_ DIR *d = NULL;
        int result = open_dir(dfd, &d);
        if (result <= 0)
                return result;
        result = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!is_subdir(d, de))
                        continue;
                _cleanup_close_ int cfd = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd < 0) {
                        if (!is_gone_errno(errno) && !result)
                                result = -errno;
                        continue;
                }
                int r = rmdir_children(cfd, deadline, failed, fsz, depth + 1);
                if (r == 0)
                        r = rmdir_retry(dirfd(d), de->d_name, deadline);
                if (r < 0 && !result) {
                        result = r;
                        snprintf(failed, fsz, "%s", de->d_name);
                }
        }
        return result;
}

int tr_cgroup_destroy(tr_cgroup *cg, uint64_t timeout_usec, tr_error *err)
{
        int r = check_may_act(cg, "destroy", true, err);
        if (r < 0)
                return r;
        uint64_t deadline = tr_now_usec() + timeout_usec;
        hot_close_all(cg); /* open files do not keep a cgroup busy, but they are useless now */
        if (cg->v2_fd >= 0) {
                close(cg->v2_fd);
                cg->v2_fd = -1;
        }
        int result = 0;
        for (int i = 0; i < cg->hs->n; i++) {
                if (cg->dirfd[i] < 0)
                        continue;
                char failed[NAME_MAX + 1] = "";
                r = rmdir_children(cg->dirfd[i], deadline, failed, sizeof failed, 0);
                if (r == 0) {
                        const char *base = strrchr(cg->path[i], '/');
                        base = base ? base + 1 : cg->path[i];
                        _cleanup_close_ int pfd = openat(cg->dirfd[i], "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (pfd < 0)
                                r = is_gone_errno(errno) ? 0 : -errno;
                        else
                                r = rmdir_retry(pfd, base, deadline);
                        snprintf(failed, sizeof failed, "%s", base);
                }
                if (r < 0 && result == 0)
                        result = tr_error_setx(err, -r, "rmdir in %s:%s (at %s)", cg->hs->h[i].mount_point,
                                               cg->path[i], failed);
        }
        return result;
}
