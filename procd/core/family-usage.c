/* family-usage.c - a family's usage with its whole subtree of families (see
 * family-usage.h). */
#include "family-usage.h"

#include <errno.h>
#include <stdio.h>

#include "trackers/cgroup.h"
#include "trackers/hierarchy.h"

/* rss and image of a family whose members were charged before procd moved them in: their
 * own RSS and virtual sizes (see the header). */
static void count_moved_in(pd_family *f, tr_usage *out)
{
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        if (tr_family_members(f->tf, &m, NULL) < 0)
                return;
        uint64_t rss = 0, image = 0;
        for (size_t i = 0; i < m.n; i++) {
                tr_proc p;
                if (tr_proc_stat_read(m.pids[i], &p) < 0 || p.state == 'Z')
                        continue; /* gone: nothing resident */
                rss += p.rss_bytes;
                image += p.vsize_bytes;
        }
        tr_u64_set(out, &out->rss_bytes, rss, TR_SRC_PROC);
        tr_u64_set(out, &out->image_size_bytes, image, TR_SRC_PROC);
        if (!out->fallback) {
                out->fallback = true;
                snprintf(out->fallback_reason, sizeof out->fallback_reason,
                         "members moved into the cgroup after they allocated (their charge stayed behind): rss and "
                         "image from /proc");
        }
}

int pd_family_own_usage(pd_registry *r, pd_family *f, unsigned want, tr_usage *out, tr_error *err)
{
        tr_usage_init(out);
        if (!f->tf)
                return tr_error_set(err, ENOENT, "family %d has no tracker", (int) f->root_pid);
        int k = pd_registry_ensure_fresh(r, f, err);
        if (k < 0)
                return k;
        pd_registry_cg_touch(r, f); /* before the read: another family rests first */
        k = tr_family_usage_want(f->tf, want, out, err);
        if (k < 0)
                return k;
        if (!f->proc_tracked && (want & (TR_WANT_MEMORY_STAT | TR_WANT_RSS)) && pd_registry_moved_in(r, f))
                count_moved_in(f, out);
        if (f->cgroup_origin == PD_CG_PLACED && f->cgroup_path && out->fallback) {
                /* say which cgroups answered: those another manager placed the root in */
                char label[200];
                pd_famcg_placed_label(pd_registry_hierarchies(r), f->cgroup_path, label, sizeof label);
                snprintf(out->fallback_reason, sizeof out->fallback_reason, "placed: %s; other fields from /proc",
                         label);
        }
        if (f->proc_tracked && f->no_cgroup_reason && !out->fallback) {
                /* the /proc tracker answers because the family could not get a cgroup */
                out->fallback = true;
                snprintf(out->fallback_reason, sizeof out->fallback_reason, "no family cgroup: %s",
                         f->no_cgroup_reason);
        }
        return 0;
}

/* The cgroup families between the asked family and the one being visited. */
typedef struct holders {
        pd_family *f;
        const struct holders *up;
} holders;

/* Whether cgroup family a's counters already hold subfamily c's processes. */
static bool holds(pd_family *a, pd_family *c)
{
        tr_cgroup *acg = tr_family_cgroup(a->tf);
        int i = acg ? tr_cgroup_primary_index(acg) : -1;
        if (i < 0)
                return false;
        const char *apath = tr_cgroup_path(acg, i);
        tr_cgroup *ccg = c->tf ? tr_family_cgroup(c->tf) : NULL;
        if (ccg) {
                const char *cpath = tr_cgroup_path(ccg, i);
                return cpath && tr_cgroup_path_under(cpath, apath);
        }
        /* a /proc subfamily: where its root is now */
        tr_pid_cgroups pc;
        if (tr_pid_cgroups_read(tr_cgroup_hierarchies(acg), c->root_pid, &pc, NULL) < 0)
                return false;
        bool in = pc.paths[i] && tr_cgroup_path_under(pc.paths[i], apath);
        tr_pid_cgroups_clear(&pc);
        return in;
}

static bool held(const holders *h, pd_family *c)
{
        for (; h; h = h->up)
                if (holds(h->f, c))
                        return true;
        return false;
}

/* Add the subfamilies of f that no holder holds (f itself is counted by the caller). */
static void add_subfamilies(pd_registry *r, pd_family *f, unsigned want, const holders *up, tr_usage *sum)
{
        holders here = { .f = f, .up = up };
        const holders *h = f->proc_tracked || !f->tf ? up : &here;
        for (guint k = 0; k < f->children->len; k++) {
                pd_family *c = f->children->pdata[k];
                if (!held(h, c)) {
                        tr_usage cu;
                        if (pd_family_own_usage(r, c, want, &cu, NULL) < 0)
                                tr_usage_init(&cu); /* unknown: the sum's fields become unknown */
                        tr_usage_add(sum, &cu);
                }
                add_subfamilies(r, c, want, h, sum);
        }
}

int pd_family_usage(pd_registry *r, pd_family *f, unsigned want, tr_usage *out, tr_error *err)
{
        if (!f->parent && !f->tf) {
                /* the root family without a trackable root process (procd's parent is PID 1,
                 * as under systemd, and no root-pid= is set): the sum of every family */
                tr_usage_zero(out);
                add_subfamilies(r, f, want, NULL, out);
                return 0;
        }
        int k = pd_family_own_usage(r, f, want, out, err);
        if (k < 0)
                return k;
        add_subfamilies(r, f, want, NULL, out);
        return 0;
}
