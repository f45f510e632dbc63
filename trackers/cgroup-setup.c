/* cgroup-setup.c - making and unmaking a cgroup: create (mkdir -p in every hierarchy,
 * v2 subtree_control top-down, v1 cpuset inheritance), attach, destroy. */
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backoff.h"
#include "cgroup-walk.h"
#include "util.h"

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

/* The O_PATH fd of dfd's child TR_CG_LEAF, made if missing; -errno. */
static int open_leaf(int dfd, tr_error *err)
{
        if (mkdirat(dfd, TR_CG_LEAF, 0755) < 0 && errno != EEXIST)
                return tr_error_setx(err, errno, "mkdir %s", TR_CG_LEAF);
        int fd = openat(dfd, TR_CG_LEAF, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? tr_error_setx(err, errno, "open %s", TR_CG_LEAF) : fd;
}

/* Move the processes listed in dfd's cgroup.procs one by one into its child TR_CG_LEAF
 * (made on the first one).  Returns how many were listed (a process that exited meanwhile
 * counts), or -errno. */
static int move_procs(int dfd, int *ldfd, tr_error *err)
{
        _cleanup_free_ char *text = NULL;
        int r = tr_read_file_alloc_at(dfd, "cgroup.procs", &text, NULL, err);
        if (r < 0)
                return r;
        int n = 0;
        for (char *p = text, *end; *p; p = end) {
                end = p + strcspn(p, "\n");
                if (*end)
                        *end++ = '\0';
                pid_t pid;
                if (tr_parse_pid(p, &pid) < 0)
                        continue;
                if (*ldfd < 0 && (*ldfd = open_leaf(dfd, err)) < 0)
                        return *ldfd;
                n++;
                r = tr_write_file_at(*ldfd, "cgroup.procs", p, NULL);
                if (r < 0 && r != -ESRCH) /* ESRCH: it exited */
                        return tr_error_setx(err, -r, "moving pid %d into %s", (int) pid, TR_CG_LEAF);
        }
        return n;
}

int tr_cg_v2_vacate(int dfd, tr_error *err)
{
        _cleanup_close_ int ldfd = -1;
        /* a member forking while we move: its child lands in the parent; list again until
         * a listing is empty (bounded: a fork bomb is the pids controller's business) */
        for (int round = 0; round < 64; round++) {
                int n = move_procs(dfd, &ldfd, err);
                if (n <= 0)
                        return n;
        }
        return tr_error_set(err, EBUSY, "processes keep appearing in the cgroup while they move to %s", TR_CG_LEAF);
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
 * v2's no-internal-processes rule: a non-root cgroup with controllers in its
 * subtree_control holds no process (EBUSY both ways: enabling while it holds some, and
 * attaching once enabled).  So before enabling, the processes a non-root parent holds
 * move into its leaf child TR_CG_LEAF (a job cgroup that nests a cgroup under its own keeps
 * its processes there); usage, kill and freeze of the parent still cover them (they are in
 * its subtree).  Nothing moves when there is nothing to enable (hybrid hosts).
 *
 * Other errors are ignored: a controller that cannot be enabled only makes some usage
 * field unavailable (then /proc answers). */
static void enable_subtree(const tr_hierarchies *hs, int pfd, bool is_root)
{
        /* read only what can change the answer: nothing at a hybrid root, and no
         * subtree_control where nothing is offered (a hybrid host's v2 cgroups below the
         * root): 4 of a hybrid job start's 6 reads */
        if (is_root && hs->mode != TR_MODE_V2)
                return;
        uint32_t offered = controllers_mask(pfd, "cgroup.controllers");
        if (is_root)
                offered &= NEEDED_AT_ROOT;
        if (!offered)
                return;
        uint32_t want = offered & ~controllers_mask(pfd, "cgroup.subtree_control");
        if (!want)
                return;
        if (!is_root)
                (void) tr_cg_v2_vacate(pfd, NULL);
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

/* Make (if missing) and open child `name` of pfd in hierarchy i: v2 controllers enabled
 * in pfd's subtree_control first when enable (pfd_is_root: pfd is the hierarchy root), v1
 * cpuset filled from pfd.  The child's O_PATH fd, or -errno (message names `name`). */
static int make_child(const tr_hierarchies *hs, int i, int pfd, const char *name, bool pfd_is_root, bool enable,
                      tr_error *err)
{
        const tr_hierarchy *h = &hs->h[i];
        if (h->is_v2 && enable)
                enable_subtree(hs, pfd, pfd_is_root);
        if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST)
                return tr_error_setx(err, errno, "mkdir %s", name);
        int cfd = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd < 0)
                return tr_error_setx(err, errno, "open %s", name);
        if (!h->is_v2 && (h->controllers & (1u << TR_CTRL_CPUSET))) {
                int r = cpuset_inherit(pfd, cfd, err);
                if (r < 0) {
                        close(cfd);
                        return tr_error_prefix(err, "cpuset of %s", name);
                }
        }
        return cfd;
}

/* mkdir -p path in hierarchy i: 0 with its directory's O_PATH fd in *dirfd (kept for the
 * handle: no second walk by path), 1 outside what the mount shows, or -errno. */
static int mkdir_p_one(const tr_hierarchies *hs, int i, const char *path, int *dirfd, tr_error *err)
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
                int cfd = make_child(hs, i, fd, comp, at_root, true, err);
                if (cfd < 0)
                        return tr_error_prefix(err, "%s", fs);
                close(fd);
                fd = cfd;
                at_root = false;
        }
        *dirfd = TR_TAKE_FD(fd);
        return 0;
}

int tr_cgroup_create(const tr_hierarchies *hs, const char *path, tr_cgroup **out, tr_error *err)
{
        return tr_cgroup_create_in(hs, path, TR_HIER_ALL, out, err);
}

int tr_cgroup_create_in(const tr_hierarchies *hs, const char *path, uint32_t hier_mask, tr_cgroup **out,
                        tr_error *err)
{
        if (!tr_cg_path_ok(path))
                return tr_error_set(err, EINVAL, "bad cgroup path '%s' (must be absolute, without '..')",
                                    path ? path : "");
        if (path[strspn(path, "/")] == '\0')
                return tr_error_set(err, EINVAL, "cannot create the root cgroup");
        /* the handle holds path as given (tr_cg_adopt joins parent and name) */
        char parent[PATH_MAX];
        size_t len = strlen(path);
        while (len > 1 && path[len - 1] == '/')
                len--;
        if (len >= sizeof parent)
                return tr_error_set(err, ENAMETOOLONG, "cgroup path too long: %s", path);
        memcpy(parent, path, len);
        parent[len] = '\0';
        char *slash = strrchr(parent, '/');
        const char *name = path + (slash - parent) + 1;
        char namebuf[NAME_MAX + 1];
        snprintf(namebuf, sizeof namebuf, "%.*s", (int) (len - (size_t) (name - path)), name);
        slash[slash == parent ? 1 : 0] = '\0';
        _cleanup_cgroup_ tr_cgroup *cg = tr_cg_new(hs, TR_CG_MAY_ACT | TR_CG_OWNED);
        if (!cg)
                return tr_error_set(err, ENOMEM, "out of memory");
        bool any = false;
        for (int i = 0; i < hs->n; i++) {
                if (!(hier_mask & (1u << i)))
                        continue;
                int fd = -1;
                int r = mkdir_p_one(hs, i, path, &fd, err);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                if (tr_cg_adopt(cg, i, parent, namebuf, fd) < 0) {
                        close(fd);
                        return tr_error_set(err, ENOMEM, "out of memory");
                }
                any = true;
        }
        if (!any)
                return tr_error_set(err, ENOENT, "cgroup %s exists in no hierarchy", path);
        *out = TR_TAKE_PTR(cg);
        return 0;
}

int tr_cgroup_create_child(tr_cgroup *parent, const char *name, uint32_t hier_mask, bool enable_in_parent,
                           tr_cgroup **out, tr_error *err)
{
        int r = tr_cg_check_may_change(parent, "create a child", err);
        if (r < 0)
                return r;
        if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
            strlen(name) > NAME_MAX)
                return tr_error_set(err, EINVAL, "bad cgroup name '%s'", name ? name : "");
        const tr_hierarchies *hs = parent->hs;
        _cleanup_cgroup_ tr_cgroup *cg = tr_cg_new(hs, TR_CG_MAY_ACT | TR_CG_OWNED);
        if (!cg)
                return tr_error_set(err, ENOMEM, "out of memory");
        bool any = false;
        for (int i = 0; i < hs->n; i++) {
                if (!(hier_mask & (1u << i)) || tr_cg_dirfd(parent, i) < 0)
                        continue;
                bool pfd_is_root = tr_cgroup_is_root(&hs->h[i], parent->path[i]);
                int fd = make_child(hs, i, tr_cg_dirfd(parent, i), name, pfd_is_root, enable_in_parent, err);
                if (fd < 0)
                        return tr_error_prefix(err, "in %s:%s", hs->h[i].mount_point, parent->path[i]);
                if (tr_cg_adopt(cg, i, parent->path[i], name, fd) < 0) {
                        close(fd);
                        return tr_error_set(err, ENOMEM, "out of memory");
                }
                any = true;
        }
        if (!any)
                return tr_error_set(err, ENOENT, "parent cgroup is in none of the hierarchies asked for");
        *out = TR_TAKE_PTR(cg);
        return 0;
}

/* ---- attach ------------------------------------------------------------------------ */

static int attach_leaf(int dfd, const char *pid, tr_error *err)
{
        tr_error_clear(err);
        _cleanup_close_ int ldfd = open_leaf(dfd, err);
        if (ldfd < 0)
                return ldfd;
        return tr_write_file_at(ldfd, "cgroup.procs", pid, err);
}

int tr_cgroup_attach(tr_cgroup *cg, pid_t pid, tr_error *err) { return tr_cgroup_attach_in(cg, pid, TR_HIER_ALL, err); }

int tr_cgroup_attach_in(tr_cgroup *cg, pid_t pid, uint32_t hier_mask, tr_error *err)
{
        int r = tr_cg_check_may_change(cg, "attach", err);
        if (r < 0)
                return r;
        if (pid <= 0)
                return tr_error_set(err, EINVAL, "bad pid %d", (int) pid);
        char v[32];
        snprintf(v, sizeof v, "%d", (int) pid);
        for (int i = 0; i < cg->hs->n; i++) {
                if (!(hier_mask & (1u << i)) || tr_cg_dirfd(cg, i) < 0)
                        continue;
                r = tr_write_file_at(tr_cg_dirfd(cg, i), "cgroup.procs", v, err);
                if (r == -EBUSY && i == cg->hs->v2)
                        /* v2: the cgroup has controllers enabled for children, so it holds
                         * no process itself (no-internal-processes rule): its leaf does */
                        r = attach_leaf(tr_cg_dirfd(cg, i), v, err);
                if (r < 0)
                        return tr_error_prefix(err, "attach pid %d to %s:%s", (int) pid, cg->hs->h[i].mount_point,
                                               cg->path[i]);
        }
        return 0;
}

/* ---- destroy ----------------------------------------------------------------------- */

struct rmdir_ctx {
        int dfd;
        const char *name;
};

/* 1 removed (or already gone), 0 still EBUSY (tasks still exiting), -errno otherwise. */
static int try_rmdir(void *ud)
{
        struct rmdir_ctx *c = ud;
        if (unlinkat(c->dfd, c->name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                return 1;
        return errno == EBUSY ? 0 : -errno;
}

/* rmdir dfd/name, retrying EBUSY until the deadline. */
static int rmdir_retry(int dfd, const char *name, uint64_t deadline)
{
        struct rmdir_ctx c = { dfd, name };
        int r = tr_poll_until(deadline, 1000, try_rmdir, &c);
        return r > 0 ? 0 : r == 0 ? -EBUSY : r;
}

static int rmdir_post(int parent_dfd, const char *name, void *ud)
{
        return rmdir_retry(parent_dfd, name, *(const uint64_t *) ud);
}

int tr_cgroup_destroy(tr_cgroup *cg, uint64_t timeout_usec, tr_error *err)
{
        int r = tr_cg_check_may_act(cg, "destroy", true, err);
        if (r < 0)
                return r;
        uint64_t deadline = tr_now_usec() + timeout_usec;
        tr_cg_hot_close_all(cg); /* open files do not keep a cgroup busy, but they are useless now */
        if (cg->v2_fd >= 0) {
                close(cg->v2_fd);
                cg->v2_fd = -1;
        }
        int result = 0;
        for (int i = 0; i < cg->hs->n; i++) {
                if (tr_cg_dirfd(cg, i) < 0)
                        continue;
                /* every descendant, deepest first; a failed one is reported, its siblings
                 * are still removed */
                char failed[NAME_MAX + 1] = "";
                tr_cg_walk w = { .post = rmdir_post, .ud = &deadline, .keep_going = true, .deep_is_error = true,
                                 .failed = failed, .failed_size = sizeof failed };
                r = tr_cg_walk_children(tr_cg_dirfd(cg, i), &w);
                if (r == 0) {
                        const char *base = strrchr(cg->path[i], '/');
                        base = base ? base + 1 : cg->path[i];
                        _cleanup_close_ int pfd = openat(tr_cg_dirfd(cg, i), "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (pfd < 0)
                                r = tr_cg_is_gone_errno(errno) ? 0 : -errno;
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
