/* family-cgroup.c - a cgroup of its own for every registered family (see the header). */
#include "family-cgroup.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trackers/procscan.h"
#include "trackers/util.h"

#define PENDING_SWEEP_SEC 2

typedef struct pending_cg {
        char *path;
        bool has_leaf;
} pending_cg;

struct pd_famcg {
        const tr_hierarchies *hs;
        char *base;             /* NULL: off or unavailable */
        char off_reason[256];
        GPtrArray *pending;     /* pending_cg *, owned */
        guint timer;
};

int pd_famcg_primary(const tr_hierarchies *hs)
{
        if (hs->v2 >= 0)
                return hs->v2;
        for (int i = 0; i < hs->n; i++)
                if (strcmp(hs->h[i].key, "name=systemd") == 0)
                        return i;
        return hs->n > 0 ? 0 : -1;
}

int pd_famcg_pid_cgroup(const tr_hierarchies *hs, pid_t pid, char **out)
{
        int idx = pd_famcg_primary(hs);
        if (idx < 0)
                return -ENOENT;
        tr_pid_cgroups pc = { { 0 } };
        int k = tr_pid_cgroups_read(hs, pid, &pc, NULL);
        if (k < 0)
                return k == -ENOENT ? -ESRCH : k;
        k = -ENOENT;
        if (pc.paths[idx]) {
                *out = strdup(pc.paths[idx]);
                k = *out ? 0 : -ENOMEM;
        }
        tr_pid_cgroups_clear(&pc);
        return k;
}

static void pending_free(gpointer p)
{
        pending_cg *c = p;
        free(c->path);
        free(c);
}

int pd_famcg_new(const tr_hierarchies *hs, const pd_famcg_options *o, pd_famcg **out)
{
        pd_famcg *fc = calloc(1, sizeof *fc);
        if (!fc)
                return -ENOMEM;
        fc->hs = hs;
        fc->pending = g_ptr_array_new_with_free_func(pending_free);
        *out = fc;
        if (o->disabled) {
                snprintf(fc->off_reason, sizeof fc->off_reason, "family cgroups are off (--no-family-cgroups)");
                return 0;
        }
        int idx = pd_famcg_primary(hs);
        if (hs->mode == TR_MODE_NONE || idx < 0) {
                snprintf(fc->off_reason, sizeof fc->off_reason, "no cgroup hierarchy is mounted");
                return 0;
        }
        _cleanup_free_ char *base = NULL;
        if (o->base) {
                base = strdup(o->base);
        } else {
                _cleanup_free_ char *own = NULL;
                int k = pd_famcg_pid_cgroup(hs, getpid(), &own);
                if (k < 0) {
                        snprintf(fc->off_reason, sizeof fc->off_reason, "cannot read procd's own cgroup: %s",
                                 strerror(-k));
                        return 0;
                }
                if (tr_cgroup_is_root(&hs->h[idx], own)) {
                        snprintf(fc->off_reason, sizeof fc->off_reason,
                                 "procd runs in the root cgroup: it has no delegated cgroup "
                                 "(give --family-cgroup-base)");
                        return 0;
                }
                size_t n = strlen(own) + sizeof PD_FAMCG_DEFAULT_SUBTREE + 1;
                base = malloc(n);
                if (base)
                        snprintf(base, n, "%s/%s", own, PD_FAMCG_DEFAULT_SUBTREE);
        }
        if (!base)
                return -ENOMEM;
        tr_error err = { 0 };
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        if (tr_cgroup_create(hs, base, &cg, &err) < 0) {
                snprintf(fc->off_reason, sizeof fc->off_reason, "cannot make the family cgroup base %s: %s", base,
                         err.msg);
                return 0;
        }
        fc->base = TR_TAKE_PTR(base);
        return 0;
}

void pd_famcg_free(pd_famcg *fc)
{
        if (!fc)
                return;
        if (fc->timer)
                g_source_remove(fc->timer);
        g_ptr_array_free(fc->pending, TRUE);
        free(fc->base);
        free(fc);
}

const char *pd_famcg_base(const pd_famcg *fc) { return fc ? fc->base : NULL; }

const char *pd_famcg_off_reason(const pd_famcg *fc)
{
        if (!fc)
                return "family cgroups are off";
        return fc->base ? NULL : fc->off_reason;
}

size_t pd_famcg_pending(const pd_famcg *fc) { return fc ? fc->pending->len : 0; }

/* rmdir path (its leaf first) in every hierarchy.  0 when gone everywhere, -EBUSY when
 * something is still there (processes, a subfamily's cgroup). */
static int remove_now(const tr_hierarchies *hs, const char *path, bool has_leaf)
{
        bool busy = false;
        for (int pass = has_leaf ? 0 : 1; pass < 2; pass++) {
                char cg[PATH_MAX];
                int n = snprintf(cg, sizeof cg, "%s%s", path, pass == 0 ? "/" PD_FAMCG_LEAF : "");
                if (n < 0 || (size_t) n >= sizeof cg)
                        return -ENAMETOOLONG;
                for (int i = 0; i < hs->n; i++) {
                        char fs[PATH_MAX];
                        if (tr_hierarchy_fs_path(&hs->h[i], cg, fs, sizeof fs, NULL) < 0)
                                continue;
                        if (rmdir(fs) == 0 || errno == ENOENT)
                                continue;
                        if (errno != EBUSY && errno != ENOTEMPTY)
                                g_message("removing cgroup %s: %s", fs, strerror(errno));
                        busy = true;
                }
        }
        return busy ? -EBUSY : 0;
}

static void sweep(pd_famcg *fc)
{
        for (guint i = fc->pending->len; i-- > 0;) {
                pending_cg *c = fc->pending->pdata[i];
                if (remove_now(fc->hs, c->path, c->has_leaf) == 0) {
                        g_info("removed family cgroup %s (empty now)", c->path);
                        g_ptr_array_remove_index(fc->pending, i);
                }
        }
}

static gboolean sweep_cb(gpointer data)
{
        pd_famcg *fc = data;
        sweep(fc);
        if (fc->pending->len)
                return G_SOURCE_CONTINUE;
        fc->timer = 0;
        return G_SOURCE_REMOVE;
}

void pd_famcg_release(pd_famcg *fc, const char *path, bool has_leaf)
{
        if (!fc || !path)
                return;
        if (remove_now(fc->hs, path, has_leaf) < 0) {
                pending_cg *c = calloc(1, sizeof *c);
                if (c)
                        c->path = strdup(path);
                if (!c || !c->path) {
                        free(c);
                        g_message("cgroup %s left behind (out of memory)", path);
                        return;
                }
                c->has_leaf = has_leaf;
                g_ptr_array_add(fc->pending, c);
                g_info("family cgroup %s is not empty: removed once it is", path);
        }
        sweep(fc); /* an earlier one may have waited for this one (a subfamily's cgroup) */
        if (fc->pending->len && !fc->timer)
                fc->timer = g_timeout_add_seconds(PENDING_SWEEP_SEC, sweep_cb, fc);
}

int pd_famcg_create(pd_famcg *fc, pid_t root, uint64_t root_start, const char *parent_path, char **path_out,
                    tr_error *err)
{
        if (!fc || !fc->base)
                return tr_error_set(err, EOPNOTSUPP, "%s", pd_famcg_off_reason(fc));
        /* a root some manager placed in a cgroup of its own (a job cgroup made with
         * clone3(CLONE_INTO_CGROUP) or a cgroup.procs write) stays where it was put */
        _cleanup_free_ char *cur = NULL, *pcur = NULL;
        int k = pd_famcg_pid_cgroup(fc->hs, root, &cur);
        if (k < 0)
                return tr_error_set(err, -k, "cgroup of root pid %d: %s", (int) root, strerror(-k));
        tr_proc p;
        if (tr_proc_stat_read(root, &p) < 0 || p.start_ticks != root_start)
                return tr_error_set(err, ESRCH, "root pid %d is gone", (int) root);
        if (p.ppid > 0 && pd_famcg_pid_cgroup(fc->hs, p.ppid, &pcur) == 0 && strcmp(cur, pcur) != 0)
                return tr_error_set(err, EBUSY, "root was placed in cgroup %s, its parent is in %s: left there", cur,
                                    pcur);
        char path[PATH_MAX], leaf[PATH_MAX];
        int n = snprintf(path, sizeof path, "%s/fam.%d.%llu", parent_path ? parent_path : fc->base, (int) root,
                         (unsigned long long) root_start);
        if (n < 0 || (size_t) n + sizeof "/" PD_FAMCG_LEAF > sizeof path)
                return tr_error_set(err, ENAMETOOLONG, "family cgroup path too long under %s",
                                    parent_path ? parent_path : fc->base);
        snprintf(leaf, sizeof leaf, "%s/%s", path, PD_FAMCG_LEAF);
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        k = tr_cgroup_create(fc->hs, leaf, &cg, err);
        if (k >= 0)
                k = tr_cgroup_attach(cg, root, err);
        uint64_t now = 0;
        if (k >= 0 && (tr_pid_start_ticks(root, &now) < 0 || now != root_start))
                k = tr_error_set(err, ESRCH, "root pid %d exited while being moved", (int) root);
        if (k < 0) {
                tr_cgroup_free(TR_TAKE_PTR(cg));
                if (remove_now(fc->hs, path, true) < 0)
                        pd_famcg_release(fc, path, true);
                return k;
        }
        *path_out = strdup(path);
        if (!*path_out) {
                pd_famcg_release(fc, path, true);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

int pd_famcg_move(tr_cgroup *cg, const tr_pidset *pids, GArray *failed, size_t *moved, tr_error *err)
{
        const tr_hierarchies *hs = tr_cgroup_hierarchies(cg);
        int idx = pd_famcg_primary(hs);
        const char *target = idx >= 0 ? tr_cgroup_path(cg, idx) : NULL;
        int first = 0;
        *moved = 0;
        for (size_t i = 0; i < pids->n; i++) {
                pid_t pid = pids->pids[i];
                uint64_t start = 0;
                if (pid <= 1 || pid == getpid() || tr_pid_start_ticks(pid, &start) < 0)
                        continue; /* never init or procd; gone is fine */
                if (target) {
                        _cleanup_free_ char *cur = NULL;
                        if (pd_famcg_pid_cgroup(hs, pid, &cur) < 0)
                                continue;
                        if (tr_cgroup_path_under(cur, target))
                                continue;
                }
                tr_error e = { 0 };
                int k = tr_cgroup_attach(cg, pid, &e);
                uint64_t now = 0;
                if (k >= 0) {
                        (*moved)++;
                        continue;
                }
                if (tr_pid_start_ticks(pid, &now) < 0 || now != start)
                        continue; /* exited meanwhile */
                if (failed) {
                        pd_ident id = { pid, start };
                        g_array_append_val(failed, id);
                }
                if (first == 0) {
                        first = k;
                        tr_error_set(err, -k, "%s", e.msg);
                }
        }
        return first;
}
