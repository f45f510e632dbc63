/* hierarchy.c - cgroup mounts and mode, pid -> cgroup, filesystem paths.
 *
 * mountinfo line (proc(5)):
 *   36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - cgroup cgroup rw,memory
 *   (1)(2)(3)   (4)   (5)         (6)      (7...)    - (8)    (9)    (10)
 * Optional fields (7) end at a lone "-"; (4) root and (5) mount point use octal escapes
 * (\040 for space, \011 tab, \012 newline, \134 backslash).  For a v1 hierarchy the super
 * options (10) name its controllers and "name=X" for a named hierarchy.
 */
#include "hierarchy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const ctrl_names[TR_CTRL_COUNT] = {
        [TR_CTRL_CPU] = "cpu",
        [TR_CTRL_CPUACCT] = "cpuacct",
        [TR_CTRL_CPUSET] = "cpuset",
        [TR_CTRL_MEMORY] = "memory",
        [TR_CTRL_DEVICES] = "devices",
        [TR_CTRL_FREEZER] = "freezer",
        [TR_CTRL_BLKIO] = "blkio",
        [TR_CTRL_IO] = "io",
        [TR_CTRL_PIDS] = "pids",
        [TR_CTRL_HUGETLB] = "hugetlb",
        [TR_CTRL_NET_CLS] = "net_cls",
        [TR_CTRL_NET_PRIO] = "net_prio",
        [TR_CTRL_PERF_EVENT] = "perf_event",
        [TR_CTRL_RDMA] = "rdma",
        [TR_CTRL_MISC] = "misc",
};

const char *tr_controller_name(tr_controller c)
{
        return (unsigned) c < TR_CTRL_COUNT ? ctrl_names[c] : "?";
}

int tr_controller_from_name(const char *name)
{
        if (!name)
                return -1;
        for (int c = 0; c < TR_CTRL_COUNT; c++)
                if (strcmp(name, ctrl_names[c]) == 0)
                        return c;
        return -1;
}

static int ctrl_from_span(const char *s, size_t len)
{
        for (int c = 0; c < TR_CTRL_COUNT; c++)
                if (strlen(ctrl_names[c]) == len && memcmp(s, ctrl_names[c], len) == 0)
                        return c;
        return -1;
}

const char *tr_cgroup_mode_name(tr_cgroup_mode m)
{
        switch (m) {
        case TR_MODE_V2: return "v2";
        case TR_MODE_HYBRID: return "hybrid";
        case TR_MODE_V1: return "v1";
        case TR_MODE_NONE: break;
        }
        return "none";
}

/* Undo mountinfo's octal escapes (\ooo) in place. */
static void unescape_octal(char *s)
{
        char *w = s;
        for (const char *r = s; *r;) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
                    r[3] <= '7') {
                        *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
                        r += 4;
                } else {
                        *w++ = *r++;
                }
        }
        *w = '\0';
}

/* Split line into whitespace-separated fields (in place).  Returns the count. */
static int split_fields(char *line, char **f, int max)
{
        int n = 0;
        char *save = NULL;
        for (char *t = strtok_r(line, " \t", &save); t && n < max; t = strtok_r(NULL, " \t", &save))
                f[n++] = t;
        return n;
}

/* Two comma lists naming the same set ("cpu,cpuacct" == "cpuacct,cpu"). */
static bool comma_sets_equal(const char *a, const char *b)
{
        size_t na = 0, nb = 0;
        for (int pass = 0; pass < 2; pass++) {
                const char *x = pass ? b : a, *y = pass ? a : b;
                for (const char *p = x; *p;) {
                        size_t len = strcspn(p, ",");
                        bool found = false;
                        for (const char *q = y; *q;) {
                                size_t l2 = strcspn(q, ",");
                                if (l2 == len && memcmp(p, q, len) == 0)
                                        found = true;
                                q += l2;
                                if (*q == ',')
                                        q++;
                        }
                        if (!found)
                                return false;
                        if (pass)
                                nb++;
                        else
                                na++;
                        p += len;
                        if (*p == ',')
                                p++;
                }
        }
        return na == nb;
}

/* v1 super options -> controllers bitmask and key ("cpu,cpuacct", "name=systemd"). */
static void v1_key_from_options(char *opts, uint32_t *ctrls, char *key, size_t keysz)
{
        char named[256] = "";
        size_t off = 0;
        *ctrls = 0;
        key[0] = '\0';
        char *save = NULL;
        for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
                if (strncmp(o, "name=", 5) == 0) {
                        snprintf(named, sizeof named, "%s", o);
                        continue;
                }
                int c = ctrl_from_span(o, strlen(o));
                if (c < 0)
                        continue; /* rw, noprefix, xattr, clone_children, release_agent=... */
                *ctrls |= 1u << c;
                int n = snprintf(key + off, keysz > off ? keysz - off : 0, "%s%s", off ? "," : "", o);
                if (n > 0)
                        off += (size_t) n;
        }
        /* /proc/PID/cgroup prints the controllers, then name=X, comma separated. */
        if (named[0])
                snprintf(key + off, keysz > off ? keysz - off : 0, "%s%s", off ? "," : "", named);
}

static int find_dup(const tr_hierarchies *hs, bool is_v2, const char *key)
{
        for (int i = 0; i < hs->n; i++) {
                if (hs->h[i].is_v2 != is_v2)
                        continue;
                if (is_v2 || comma_sets_equal(hs->h[i].key, key))
                        return i;
        }
        return -1;
}

static int parse_mount_line(tr_hierarchies *out, char *line, tr_error *err)
{
        char *f[64];
        int n = split_fields(line, f, (int) TR_ARRAY_SIZE(f));
        if (n == 0)
                return 0; /* blank line */
        int sep = -1;
        for (int i = 6; i < n; i++)
                if (strcmp(f[i], "-") == 0) {
                        sep = i;
                        break;
                }
        if (n < 6 || sep < 0 || sep + 3 > n)
                return tr_error_set(err, EINVAL, "mountinfo: malformed line '%s'", f[0]);
        const char *fstype = f[sep + 1];
        bool is_v2 = strcmp(fstype, "cgroup2") == 0;
        if (!is_v2 && strcmp(fstype, "cgroup") != 0)
                return 0;

        unescape_octal(f[3]);
        unescape_octal(f[4]);
        if (strlen(f[3]) >= sizeof out->h[0].mount_root || strlen(f[4]) >= sizeof out->h[0].mount_point)
                return tr_error_set(err, ENAMETOOLONG,
                                    "mountinfo: a cgroup mount's path is longer than %d bytes: %.60s...",
                                    TR_MOUNT_PATH_MAX - 1,
                                    strlen(f[4]) >= sizeof out->h[0].mount_point ? f[4] : f[3]);
        if (out->n >= TR_MAX_HIER)
                return 0;
        /* filled in the next free slot, counted once kept (no whole-struct copy: see
         * tr_hierarchy) */
        tr_hierarchy *h = &out->h[out->n];
        h->is_v2 = is_v2;
        h->favordynmods = false;
        h->controllers = 0;
        h->key[0] = '\0';
        strcpy(h->mount_root, f[3]);
        strcpy(h->mount_point, f[4]);
        if (is_v2 && sep + 3 < n) {
                _cleanup_free_ char *opts = strdup(f[sep + 3]);
                for (char *save = NULL, *t = opts ? strtok_r(opts, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
                        h->favordynmods = h->favordynmods || strcmp(t, "favordynmods") == 0;
        }
        if (!is_v2) {
                char *opts = sep + 3 < n ? f[sep + 3] : (char *) "";
                v1_key_from_options(opts, &h->controllers, h->key, sizeof h->key);
                if (!h->key[0])
                        return 0; /* a v1 mount with neither controllers nor a name: ignore */
        }
        if (find_dup(out, is_v2, h->key) >= 0)
                return 0; /* the same hierarchy mounted again (bind mount): keep the first */
        out->n++;
        return 0;
}

static void finish(tr_hierarchies *out)
{
        bool v1_ctrl = false, v1_any = false;
        out->v2 = -1;
        for (int c = 0; c < TR_CTRL_COUNT; c++)
                out->v1_of[c] = -1;
        for (int i = 0; i < out->n; i++) {
                const tr_hierarchy *h = &out->h[i];
                if (h->is_v2) {
                        if (out->v2 < 0)
                                out->v2 = i;
                        continue;
                }
                v1_any = true;
                if (h->controllers)
                        v1_ctrl = true;
                for (int c = 0; c < TR_CTRL_COUNT; c++)
                        if ((h->controllers & (1u << c)) && out->v1_of[c] < 0)
                                out->v1_of[c] = i;
        }
        /* A cgroup2 mount with only named v1 hierarchies beside it (name=systemd kept for
         * old tools) is a v2 host: every controller lives in the v2 tree. */
        if (out->v2 >= 0)
                out->mode = v1_ctrl ? TR_MODE_HYBRID : TR_MODE_V2;
        else
                out->mode = v1_any ? TR_MODE_V1 : TR_MODE_NONE;
}

int tr_hierarchies_parse(tr_hierarchies *out, const char *mountinfo, tr_error *err)
{
        /* not memset whole: ~37 KB, ~10 pages a fresh process would fault in (tr_hierarchy) */
        out->mode = TR_MODE_NONE;
        out->n = 0;
        out->ancestry = NULL;
        out->notify = NULL;
        finish(out); /* v2 and v1_of: none yet (a parse error leaves a consistent empty set) */
        const char *p = mountinfo ? mountinfo : "";
        while (*p) {
                size_t len = strcspn(p, "\n");
                _cleanup_free_ char *line = strndup(p, len);
                if (!line)
                        return tr_error_set(err, ENOMEM, "out of memory parsing mountinfo");
                int r = parse_mount_line(out, line, err);
                if (r < 0)
                        return r;
                p += len;
                if (*p == '\n')
                        p++;
        }
        finish(out);
        return 0;
}

void tr_hierarchies_set_v2_controllers(tr_hierarchies *hs, const char *text)
{
        if (hs->v2 < 0 || !text)
                return;
        uint32_t mask = 0;
        for (const char *p = text; *p;) {
                p += strspn(p, " \t\n");
                size_t len = strcspn(p, " \t\n");
                if (!len)
                        break;
                int c = ctrl_from_span(p, len);
                if (c >= 0)
                        mask |= 1u << c;
                p += len;
        }
        hs->h[hs->v2].controllers = mask;
}

int tr_hierarchies_discover(tr_hierarchies *out, tr_error *err)
{
        _cleanup_free_ char *text = NULL;
        int r = tr_read_file_alloc_at(AT_FDCWD, "/proc/self/mountinfo", &text, NULL, err);
        if (r < 0)
                return r;
        r = tr_hierarchies_parse(out, text, err);
        if (r < 0)
                return r;
        if (out->v2 >= 0) {
                char buf[1024];
                _cleanup_close_ int fd = open(out->h[out->v2].mount_point,
                                              O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0 && tr_read_file_at(fd, "cgroup.controllers", buf, sizeof buf, NULL) >= 0)
                        tr_hierarchies_set_v2_controllers(out, buf);
        }
        return 0;
}

int tr_hierarchies_best(const tr_hierarchies *hs, tr_controller c)
{
        if ((unsigned) c >= TR_CTRL_COUNT)
                return -1;
        if (hs->v2 >= 0 && (hs->mode == TR_MODE_V2 || (hs->h[hs->v2].controllers & (1u << c))))
                return hs->v2;
        if (hs->v1_of[c] >= 0)
                return hs->v1_of[c];
        /* the same resource under its other version's name */
        if (c == TR_CTRL_IO)
                return hs->v1_of[TR_CTRL_BLKIO];
        return -1;
}

/* ---- /proc/PID/cgroup ----------------------------------------------------------- */

void tr_pid_cgroups_clear(tr_pid_cgroups *pc)
{
        for (int i = 0; i < TR_MAX_HIER; i++) {
                free(pc->paths[i]);
                pc->paths[i] = NULL;
        }
}

static int match_hierarchy(const tr_hierarchies *hs, const char *ctrls)
{
        for (int i = 0; i < hs->n; i++) {
                if (hs->h[i].is_v2 ? ctrls[0] == '\0' : (ctrls[0] && comma_sets_equal(hs->h[i].key, ctrls)))
                        return i;
        }
        return -1;
}

int tr_pid_cgroups_parse(const tr_hierarchies *hs, const char *text, tr_pid_cgroups *out, tr_error *err)
{
        memset(out, 0, sizeof *out);
        for (const char *p = text ? text : ""; *p;) {
                size_t len = strcspn(p, "\n");
                _cleanup_free_ char *line = strndup(p, len);
                p += len;
                if (*p == '\n')
                        p++;
                if (!line) {
                        tr_pid_cgroups_clear(out);
                        return tr_error_set(err, ENOMEM, "out of memory");
                }
                if (!line[0])
                        continue;
                /* "hierarchy-ID:controller-list:cgroup-path"; the path may hold ':' */
                char *c1 = strchr(line, ':');
                char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2 || c2[1] != '/') {
                        tr_pid_cgroups_clear(out);
                        return tr_error_set(err, EINVAL, "malformed cgroup line '%s'", line);
                }
                *c2 = '\0';
                char *path = c2 + 1;
                /* Kernel quirk: v2 appends " (deleted)" when the process sits in a removed
                 * cgroup (proc_cgroup_show); the path itself is what matters. */
                size_t pl = strlen(path);
                static const char deleted[] = " (deleted)";
                if (pl > sizeof deleted - 1 && strcmp(path + pl - (sizeof deleted - 1), deleted) == 0)
                        path[pl - (sizeof deleted - 1)] = '\0';
                int i = match_hierarchy(hs, c1 + 1);
                if (i < 0 || out->paths[i])
                        continue; /* a hierarchy not mounted here */
                out->paths[i] = strdup(path);
                if (!out->paths[i]) {
                        tr_pid_cgroups_clear(out);
                        return tr_error_set(err, ENOMEM, "out of memory");
                }
        }
        return 0;
}

static int read_cgroup_file(const tr_hierarchies *hs, int dirfd, const char *file, tr_pid_cgroups *out, tr_error *err)
{
        /* one pread for the usual text (tr_pread_all: a short read of this single-record
         * seq_file is its end); a longer one (deep paths: EFBIG) read again whole */
        char small[4096];
        _cleanup_free_ char *text = NULL;
        int r = tr_read_file_at(dirfd, file, small, sizeof small, NULL);
        if (r == -EFBIG)
                r = tr_read_file_alloc_at(dirfd, file, &text, NULL, err);
        else if (r < 0)
                return tr_error_setx(err, -r, "read %s", file);
        if (r < 0)
                return r;
        return tr_pid_cgroups_parse(hs, text ? text : small, out, err);
}

int tr_pid_cgroups_read_file(const tr_hierarchies *hs, const char *file, tr_pid_cgroups *out, tr_error *err)
{
        return read_cgroup_file(hs, AT_FDCWD, file, out, err);
}

int tr_pid_cgroups_read_at(const tr_hierarchies *hs, int proc_dirfd, tr_pid_cgroups *out, tr_error *err)
{
        int r = read_cgroup_file(hs, proc_dirfd, "cgroup", out, err);
        return r == -ENOENT ? tr_error_set(err, ESRCH, "the process is gone") : r;
}

int tr_pid_cgroups_read(const tr_hierarchies *hs, pid_t pid, tr_pid_cgroups *out, tr_error *err)
{
        char file[64];
        if (pid < 0)
                return tr_error_set(err, EINVAL, "bad pid %d", (int) pid);
        if (pid == 0)
                snprintf(file, sizeof file, "/proc/self/cgroup");
        else
                snprintf(file, sizeof file, "/proc/%d/cgroup", (int) pid);
        int r = tr_pid_cgroups_read_file(hs, file, out, err);
        return r == -ENOENT ? tr_error_set(err, ESRCH, "pid %d is gone", (int) pid) : r;
}

bool tr_cgroup_path_under(const char *path, const char *prefix)
{
        size_t n = strlen(prefix);
        while (n > 1 && prefix[n - 1] == '/')
                n--;
        if (n == 1 && prefix[0] == '/')
                return path[0] == '/';
        return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int tr_hierarchy_fs_path(const tr_hierarchy *h, const char *cg_path, char *buf, size_t size, tr_error *err)
{
        if (!cg_path || cg_path[0] != '/')
                return tr_error_set(err, EINVAL, "cgroup path '%s' is not absolute", cg_path ? cg_path : "");
        if (!tr_cgroup_path_under(cg_path, h->mount_root))
                return tr_error_set(err, ENOENT, "cgroup %s lies outside mount %s (root %s)", cg_path,
                                    h->mount_point, h->mount_root);
        const char *rest = cg_path;
        if (strcmp(h->mount_root, "/") != 0)
                rest = cg_path + strlen(h->mount_root);
        while (*rest == '/')
                rest++;
        size_t mlen = strlen(h->mount_point);
        while (mlen > 1 && h->mount_point[mlen - 1] == '/')
                mlen--;
        int n;
        if (!*rest)
                n = snprintf(buf, size, "%.*s", (int) mlen, h->mount_point);
        else
                n = snprintf(buf, size, "%.*s%s%s", (int) mlen, h->mount_point,
                             (mlen == 1 && h->mount_point[0] == '/') ? "" : "/", rest);
        /* strip a trailing slash left by "/a/b/" */
        if (n > 1 && (size_t) n < size && buf[n - 1] == '/')
                buf[--n] = '\0';
        if (n < 0 || (size_t) n >= size)
                return tr_error_set(err, ENAMETOOLONG, "path of cgroup %s too long", cg_path);
        return 0;
}

bool tr_cgroup_is_root(const tr_hierarchy *h, const char *cg_path)
{
        if (!cg_path || cg_path[0] != '/')
                return true; /* unknown: refuse rather than risk it */
        const char *p = cg_path + strspn(cg_path, "/");
        if (!*p)
                return true; /* the hierarchy root */
        /* the root of what this mount shows, or above it */
        return strcmp(h->mount_root, "/") != 0 && tr_cgroup_path_under(h->mount_root, cg_path);
}

const tr_pid_cgroups *tr_self_cgroups(const tr_hierarchies *hs, tr_pid_cgroups *buf)
{
        memset(buf, 0, sizeof *buf);
        return tr_pid_cgroups_read(hs, 0, buf, NULL) == 0 ? buf : NULL;
}

bool tr_cgroup_holds_self(const tr_hierarchies *hs, const tr_pid_cgroups *self, int i, const char *cg_path)
{
        if (i < 0 || i >= hs->n || tr_cgroup_is_root(&hs->h[i], cg_path) || !self)
                return true;
        return self->paths[i] && tr_cgroup_path_under(self->paths[i], cg_path);
}

bool tr_cgroup_holds_self_any(const tr_hierarchies *hs, const char *cg_path)
{
        tr_pid_cgroups buf;
        const tr_pid_cgroups *self = tr_self_cgroups(hs, &buf);
        bool held = false;
        for (int i = 0; i < hs->n && !held; i++)
                held = tr_cgroup_holds_self(hs, self, i, cg_path);
        tr_pid_cgroups_clear(&buf);
        return held;
}
