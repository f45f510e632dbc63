/* devices.c - device rules (parse, format, reference verdict), the filter that picks the
 * strategies for a cgroup, and the GPU node finder.  See devices.h. */
#include "devices.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util.h"

#define TR_DEV_MAJOR_MAX 4095u    /* 12 bits */
#define TR_DEV_MINOR_MAX 1048575u /* 20 bits */

static int parse_num(const char *s, size_t len, uint32_t max, uint32_t *out)
{
        if (len == 1 && s[0] == '*') {
                *out = TR_DEV_ANY;
                return 0;
        }
        if (len == 0 || len > 7)
                return -EINVAL;
        uint32_t v = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (uint32_t) (s[i] - '0');
        }
        if (v > max)
                return -ERANGE;
        *out = v;
        return 0;
}

int tr_dev_rule_parse(const char *text, bool allow, tr_dev_rule *out, tr_error *err)
{
        const char *what = allow ? "--device-allow" : "--device-deny";
        const char *p[4];
        size_t len[4];
        const char *s = text;
        for (int i = 0; i < 4; i++) {
                const char *c = i < 3 ? strchr(s, ':') : s + strlen(s);
                if (!c)
                        return tr_error_set(err, EINVAL, "%s '%s': want TYPE:MAJOR:MINOR:ACCESS", what, text);
                p[i] = s;
                len[i] = (size_t) (c - s);
                s = c + 1;
        }
        memset(out, 0, sizeof *out);
        out->allow = allow;
        if (len[0] != 1 || !strchr("abc", p[0][0]))
                return tr_error_set(err, EINVAL, "%s '%s': TYPE must be a, b or c", what, text);
        out->type = p[0][0];
        if (parse_num(p[1], len[1], TR_DEV_MAJOR_MAX, &out->major) < 0)
                return tr_error_set(err, EINVAL, "%s '%s': MAJOR must be * or 0..%u", what, text, TR_DEV_MAJOR_MAX);
        if (parse_num(p[2], len[2], TR_DEV_MINOR_MAX, &out->minor) < 0)
                return tr_error_set(err, EINVAL, "%s '%s': MINOR must be * or 0..%u", what, text, TR_DEV_MINOR_MAX);
        if (out->type == 'a' && (out->major != TR_DEV_ANY || out->minor != TR_DEV_ANY))
                return tr_error_set(err, EINVAL, "%s '%s': type a means every device, write a:*:*:ACCESS", what, text);
        if (len[3] == 0 || len[3] > 3)
                return tr_error_set(err, EINVAL, "%s '%s': ACCESS must be a non-empty subset of rwm", what, text);
        for (size_t i = 0; i < len[3]; i++) {
                unsigned bit = p[3][i] == 'r' ? TR_DEV_READ : p[3][i] == 'w' ? TR_DEV_WRITE
                             : p[3][i] == 'm' ? TR_DEV_MKNOD : 0;
                if (!bit || (out->access & bit))
                        return tr_error_set(err, EINVAL, "%s '%s': ACCESS must be a non-empty subset of rwm", what,
                                            text);
                out->access |= bit;
        }
        return 0;
}

static void fmt_num(char *buf, size_t size, uint32_t v)
{
        if (v == TR_DEV_ANY)
                snprintf(buf, size, "*");
        else
                snprintf(buf, size, "%u", v);
}

static void fmt_access(char *buf, unsigned access)
{
        int n = 0;
        if (access & TR_DEV_READ)
                buf[n++] = 'r';
        if (access & TR_DEV_WRITE)
                buf[n++] = 'w';
        if (access & TR_DEV_MKNOD)
                buf[n++] = 'm';
        buf[n] = '\0';
}

void tr_dev_rule_format(const tr_dev_rule *r, char *buf, size_t size)
{
        char maj[16], min[16], acc[4];
        fmt_num(maj, sizeof maj, r->major);
        fmt_num(min, sizeof min, r->minor);
        fmt_access(acc, r->access);
        snprintf(buf, size, "%s %c:%s:%s:%s", r->allow ? "allow" : "deny", r->type, maj, min, acc);
}

int tr_dev_rules_add(tr_dev_rules *rs, const tr_dev_rule *r, tr_error *err)
{
        if (rs->n == rs->cap) {
                size_t cap = rs->cap ? rs->cap * 2 : 8;
                tr_dev_rule *nr = realloc(rs->r, cap * sizeof *nr);
                if (!nr)
                        return tr_error_set(err, ENOMEM, "out of memory");
                rs->r = nr;
                rs->cap = cap;
        }
        rs->r[rs->n++] = *r;
        return 0;
}

void tr_dev_rules_free(tr_dev_rules *rs)
{
        free(rs->r);
        memset(rs, 0, sizeof *rs);
}

bool tr_dev_rule_matches(const tr_dev_rule *r, char type, uint32_t major, uint32_t minor, unsigned access)
{
        if (r->type != 'a' && r->type != type)
                return false;
        if (r->major != TR_DEV_ANY && r->major != major)
                return false;
        if (r->minor != TR_DEV_ANY && r->minor != minor)
                return false;
        return r->allow ? (access & ~r->access) == 0 : (access & r->access) != 0;
}

bool tr_dev_rules_allow(const tr_dev_rules *rs, char type, uint32_t major, uint32_t minor, unsigned access)
{
        for (size_t i = rs->n; i-- > 0;)
                if (tr_dev_rule_matches(&rs->r[i], type, major, minor, access))
                        return rs->r[i].allow;
        return true;
}

/* ---- the filter ---- */

int tr_dev_filter_apply(tr_dev_filter **fp, tr_cgroup *cg, const tr_dev_rules *rs, tr_error *err)
{
        tr_dev_filter *f = *fp;
        if (!f) {
                const tr_hierarchies *hs = tr_cgroup_hierarchies(cg);
                f = calloc(1, sizeof *f);
                if (!f)
                        return tr_error_set(err, ENOMEM, "out of memory");
                f->bpf_prog_fd = f->bpf_cg_fd = -1;
                f->cg = cg;
                if (hs->v2 >= 0 && tr_cgroup_dirfd(cg, hs->v2) >= 0)
                        f->ops[f->n_ops++] = &tr_dev_bpf_ops;
                int v1 = hs->v1_of[TR_CTRL_DEVICES];
                if (v1 >= 0 && tr_cgroup_dirfd(cg, v1) >= 0)
                        f->ops[f->n_ops++] = &tr_dev_v1_ops;
                if (f->n_ops == 0) {
                        free(f);
                        return tr_error_set(err, EOPNOTSUPP, "no v2 cgroup and no v1 devices hierarchy to filter devices");
                }
                snprintf(f->method, sizeof f->method, "%s%s%s", f->ops[0]->name, f->n_ops > 1 ? "+" : "",
                         f->n_ops > 1 ? f->ops[1]->name : "");
                *fp = f;
        } else if (f->cg != cg) {
                return tr_error_set(err, EINVAL, "device filter belongs to another cgroup");
        }
        for (int i = 0; i < f->n_ops; i++) {
                int r = f->ops[i]->apply(f, cg, rs, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

void tr_dev_filter_free(tr_dev_filter *f)
{
        if (!f)
                return;
        for (int i = 0; i < f->n_ops; i++)
                f->ops[i]->remove(f);
        free(f);
}

/* ---- GPU nodes ---- */

static int gpu_index(const char *dir, const char *name)
{
        static const struct {
                const char *dir, *prefix;
                int base;
        } numbered[] = { { "", "nvidia", 0 }, { "dri", "renderD", 128 }, { "dri", "card", 0 } };
        for (size_t i = 0; i < TR_ARRAY_SIZE(numbered); i++) {
                size_t pl = strlen(numbered[i].prefix);
                if (strcmp(dir, numbered[i].dir) != 0 || strncmp(name, numbered[i].prefix, pl) != 0)
                        continue;
                const char *d = name + pl;
                uint64_t v;
                if (!*d || strspn(d, "0123456789") != strlen(d) || tr_parse_u64(d, &v) < 0 || v > 65535 ||
                    (int) v < numbered[i].base)
                        return -2;
                return (int) v - numbered[i].base;
        }
        return -2; /* not a GPU node */
}

static bool gpu_shared(const char *dir, const char *name)
{
        if (strcmp(dir, "nvidia-caps") == 0)
                return true;
        if (strcmp(dir, "") != 0)
                return false;
        return strcmp(name, "nvidiactl") == 0 || strncmp(name, "nvidia-uvm", 10) == 0 ||
               strcmp(name, "nvidia-modeset") == 0 || strcmp(name, "kfd") == 0;
}

static int scan_dir(const char *dev_root, const char *sub, tr_gpu_node **out, size_t *n, size_t *cap, tr_error *err)
{
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s%s%s", dev_root, *sub ? "/" : "", sub);
        _cleanup_closedir_ DIR *d = opendir(path);
        if (!d)
                return errno == ENOENT || errno == ENOTDIR ? 0 : tr_error_setx(err, errno, "opendir %s", path);
        struct dirent *de;
        while ((de = readdir(d))) {
                int idx = gpu_index(sub, de->d_name);
                if (idx == -2 && !gpu_shared(sub, de->d_name))
                        continue;
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISCHR(st.st_mode))
                        continue;
                if (*n == *cap) {
                        size_t nc = *cap ? *cap * 2 : 8;
                        tr_gpu_node *nn = realloc(*out, nc * sizeof *nn);
                        if (!nn)
                                return tr_error_set(err, ENOMEM, "out of memory");
                        *out = nn;
                        *cap = nc;
                }
                tr_gpu_node *g = &(*out)[(*n)++];
                snprintf(g->path, sizeof g->path, "%s/%s", path, de->d_name);
                g->major = major(st.st_rdev);
                g->minor = minor(st.st_rdev);
                g->index = idx == -2 ? -1 : idx;
        }
        return 0;
}

static int node_cmp(const void *a, const void *b)
{
        return strcmp(((const tr_gpu_node *) a)->path, ((const tr_gpu_node *) b)->path);
}

int tr_gpu_nodes_find(const char *dev_root, tr_gpu_node **out, size_t *n, tr_error *err)
{
        *out = NULL;
        *n = 0;
        size_t cap = 0;
        static const char *const subs[] = { "", "dri", "nvidia-caps" };
        for (size_t i = 0; i < TR_ARRAY_SIZE(subs); i++) {
                int r = scan_dir(dev_root, subs[i], out, n, &cap, err);
                if (r < 0) {
                        free(*out);
                        *out = NULL;
                        *n = 0;
                        return r;
                }
        }
        if (*n > 1)
                qsort(*out, *n, sizeof **out, node_cmp);
        return 0;
}
