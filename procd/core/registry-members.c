/* registry-members.c - the membership of /proc-tracked families: one shared snapshot
 * updating every family (subfamilies first, each excluding its subfamilies' members and the
 * children its root had at registration), its timer, and the family a process belongs to. */
#include "registry-internal.h"

#include <string.h>

#include "trackers/proc-read.h"
#include "trackers/util.h"

static gboolean snapshot_timer_cb(gpointer data)
{
        pd_registry *r = data;
        tr_error err = { 0 };
        if (pd_registry_snapshot(r, &err) < 0)
                pd_reg_log(r, "snapshot failed: %s", err.msg);
        return G_SOURCE_CONTINUE;
}

/* The periodic snapshot runs only while some registered subfamily is /proc-tracked, at
 * the smallest interval asked. */
void pd_reg_update_timer(pd_registry *r)
{
        uint32_t min = 0;
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, r->proc_intervals);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
                uint32_t v = GPOINTER_TO_UINT(key);
                if (min == 0 || v < min)
                        min = v;
        }
        if (min == r->timer_interval)
                return;
        if (r->timer)
                g_source_remove(r->timer);
        r->timer = 0;
        r->timer_interval = min;
        if (min)
                r->timer = g_timeout_add_seconds(min, snapshot_timer_cb, r);
}

uint32_t pd_registry_timer_interval(const pd_registry *r) { return r->timer_interval; }

uint64_t pd_registry_snapshot_start_ticks(const pd_registry *r, pid_t pid)
{
        const tr_proc *p = tr_scan_find(&r->scan, pid);
        return p ? p->start_ticks : 0;
}

static void carry(pd_family *to, pid_t pid, uint64_t start_ticks)
{
        if (pid > 1 && start_ticks)
                g_array_append_val(to->carry, ((pd_ident) { pid, start_ticks }));
}

void pd_reg_carry_members(pd_registry *r, const pd_family *from, pd_family *to)
{
        if (!pd_reg_has_proc_tracker(to))
                return;
        if (tr_pid_alive_as(from->root_pid, from->root_start_ticks))
                carry(to, from->root_pid, from->root_start_ticks);
        if (from->proc_tracked) {
                for (size_t i = 0; i < from->last_members.n; i++) {
                        pid_t pid = from->last_members.pids[i];
                        carry(to, pid, pd_registry_snapshot_start_ticks(r, pid));
                }
        } else if (from->tf) {
                _cleanup_pidset_ tr_pidset now = TR_PIDSET_INIT;
                tr_family_members(from->tf, &now, NULL);
                for (size_t i = 0; i < now.n; i++) {
                        uint64_t st = 0;
                        if (tr_pid_start_ticks(now.pids[i], &st) == 0)
                                carry(to, now.pids[i], st);
                }
        }
        for (guint i = 0; i < from->strays->len; i++) {
                const pd_ident *s = &g_array_index(from->strays, pd_ident, i);
                carry(to, s->pid, s->start_ticks);
        }
        to->updated_usec = 0;
}

/* The carried members still alive in scan (same start time) appended to seeds; the carry
 * is spent (from now on they are the family's earlier members, kept by its tracker). */
static void spend_carry(const tr_scan *scan, GArray *carried, tr_pidset *seeds)
{
        for (guint i = 0; i < carried->len; i++) {
                const pd_ident *id = &g_array_index(carried, pd_ident, i);
                const tr_proc *p = tr_scan_find(scan, id->pid);
                if (p && p->start_ticks == id->start_ticks)
                        tr_pidset_add(seeds, id->pid);
        }
        g_array_set_size(carried, 0);
}

pd_family *pd_reg_proc_family_holding(pd_registry *r, pid_t pid, uint64_t start_ticks)
{
        gpointer root = g_hash_table_lookup(r->member_of, GINT_TO_POINTER(pid));
        pd_family *c = root ? g_hash_table_lookup(r->by_root, root) : NULL;
        if (!c || !c->parent || !pd_reg_has_proc_tracker(c) || !tr_pidset_contains(&c->last_members, pid))
                return NULL;
        const tr_proc *p = tr_scan_find(&r->scan, pid);
        return p && p->start_ticks == start_ticks ? c : NULL;
}

typedef struct scan_markers {
        const char *m[TR_SCAN_MAX_MARKERS];
        size_t n;
        unsigned want;
        bool overflow;
} scan_markers;

static int marker_index(const scan_markers *sm, const char *marker)
{
        if (!marker)
                return -1;
        for (size_t i = 0; i < sm->n; i++)
                if (strcmp(sm->m[i], marker) == 0)
                        return (int) i;
        return -1;
}

static void collect_scan_wants(pd_family *f, scan_markers *sm)
{
        if (pd_reg_has_proc_tracker(f)) {
                tr_procfam *pf = tr_family_procfam(f->tf);
                sm->want |= tr_procfam_scan_wants(pf);
                const char *m = tr_procfam_env_marker(pf);
                if (m && marker_index(sm, m) < 0) {
                        if (sm->n < TR_SCAN_MAX_MARKERS)
                                sm->m[sm->n++] = m;
                        else
                                sm->overflow = true;
                }
        }
        for (guint i = 0; i < f->children->len; i++)
                collect_scan_wants(f->children->pdata[i], sm);
}

static bool pidset_equal(const tr_pidset *a, const tr_pidset *b)
{
        return a->n == b->n && (a->n == 0 || memcmp(a->pids, b->pids, a->n * sizeof a->pids[0]) == 0);
}

static void pidset_swap(tr_pidset *a, tr_pidset *b)
{
        tr_pidset t = *a;
        *a = *b;
        *b = t;
}

/* Children of excluded processes (subfamilies' members) that are no subfamily's: a cgroup
 * subfamily holds only its root and what it forked after registration, so descendants the
 * root had before stay in the parent (condor_procd's model).  Handed to the parent as
 * seeds, since its walk by parent tree does not go through the excluded root. */
static void left_behind(const tr_scan *scan, const tr_pidset *excl, tr_pidset *out)
{
        if (!tr_scan_has_index(scan))
                return;
        for (size_t i = 0; i < excl->n; i++) {
                const tr_proc *x = tr_scan_find(scan, excl->pids[i]);
                if (!x)
                        continue;
                const size_t *kids;
                size_t nk = tr_scan_children(scan, (size_t) (x - scan->procs), &kids);
                for (size_t k = 0; k < nk; k++) {
                        const tr_proc *c = &scan->procs[kids[k]];
                        if (c->start_ticks >= x->start_ticks && !tr_pidset_contains(excl, c->pid))
                                tr_pidset_add(out, c->pid);
                }
        }
}

/* Drop from kept the processes gone from scan (or whose pid names another one now); when
 * some are left, out = excl + their pids (normalized) and true. */
static bool kept_alive(const tr_scan *scan, GArray *kept, const tr_pidset *excl, tr_pidset *out)
{
        for (guint i = kept->len; i-- > 0;) {
                const pd_ident *id = &g_array_index(kept, pd_ident, i);
                const tr_proc *p = tr_scan_find(scan, id->pid);
                if (!p || p->start_ticks != id->start_ticks)
                        g_array_remove_index_fast(kept, i);
        }
        if (!kept->len)
                return false;
        tr_pidset_add_all(out, excl);
        for (guint i = 0; i < kept->len; i++)
                tr_pidset_add(out, g_array_index(kept, pd_ident, i).pid);
        tr_pidset_normalize(out);
        return true;
}

/* Post-order: subfamilies first, so that each family excludes its subfamilies' members.
 * subtree receives the members of f and of its subfamilies. */
static void update_subtree(pd_registry *r, pd_family *f, const scan_markers *sm, bool need_members,
                           uint64_t now, tr_pidset *subtree)
{
        _cleanup_pidset_ tr_pidset excl = TR_PIDSET_INIT;
        bool child_need = need_members || pd_reg_has_proc_tracker(f);
        for (guint i = 0; i < f->children->len; i++)
                update_subtree(r, f->children->pdata[i], sm, child_need, now, &excl);
        tr_pidset_normalize(&excl);
        if (pd_reg_has_proc_tracker(f)) {
                tr_procfam *pf = tr_family_procfam(f->tf);
                _cleanup_pidset_ tr_pidset seeds = TR_PIDSET_INIT;
                left_behind(&r->scan, &excl, &seeds);
                if (f->carry->len)
                        spend_carry(&r->scan, f->carry, &seeds);
                if (seeds.n || f->seeded)
                        tr_procfam_set_seeds_at(pf, &r->scan, &seeds);
                f->seeded = seeds.n > 0;
                /* the root's children at registration are the parent's: not walked into */
                _cleanup_pidset_ tr_pidset excl_kept = TR_PIDSET_INIT;
                const tr_pidset *ex = &excl;
                if (f->kept->len && kept_alive(&r->scan, f->kept, &excl, &excl_kept))
                        ex = &excl_kept;
                int k = tr_procfam_update(pf, &r->scan, marker_index(sm, tr_procfam_env_marker(pf)), ex);
                if (k < 0)
                        pd_reg_log(r, "family %d: update from snapshot: %s", (int) f->root_pid, strerror(-k));
                _cleanup_pidset_ tr_pidset now_members = TR_PIDSET_INIT;
                tr_procfam_members(pf, &now_members, NULL);
                tr_pidset_normalize(&now_members);
                if (f->parent && !pidset_equal(&now_members, &f->last_members))
                        r->members_changed = true; /* saved: restored as seeds after a restart */
                if (f->parent && f->last_members.n && !now_members.n)
                        pd_reg_family_changed(r, f, PD_FAMILY_EMPTIED); /* polled: the snapshot found it */
                pidset_swap(&f->last_members, &now_members);
                for (size_t i = 0; f->parent && i < f->last_members.n; i++)
                        g_hash_table_insert(r->member_of, GINT_TO_POINTER(f->last_members.pids[i]),
                                            GINT_TO_POINTER(f->root_pid));
                f->updated_usec = now;
        } else if (f->tf && need_members) {
                tr_pidset_clear(&f->last_members);
                tr_family_members(f->tf, &f->last_members, NULL);
                tr_pidset_normalize(&f->last_members);
        }
        if (subtree) {
                tr_pidset_add_all(subtree, &excl);
                tr_pidset_add_all(subtree, &f->last_members);
        }
}

int pd_registry_snapshot(pd_registry *r, tr_error *err)
{
        scan_markers sm = { .n = 0 };
        collect_scan_wants(r->root, &sm);
        if (sm.overflow)
                pd_reg_log(r, "more than %d distinct environment markers: the rest are not matched",
                           TR_SCAN_MAX_MARKERS);
        tr_scan_opts opts = { .want = sm.want, .env_markers = sm.m, .n_markers = sm.n };
        int k = tr_scan_take(&r->scan, &opts, err);
        if (k < 0)
                return k;
        uint64_t now = tr_now_usec();
        r->members_changed = false;
        g_hash_table_remove_all(r->member_of);
        update_subtree(r, r->root, &sm, false, now, NULL);
        r->last_snapshot_usec = now;
        if (r->members_changed)
                pd_reg_changed(r);
        return 0;
}

int pd_registry_ensure_fresh(pd_registry *r, pd_family *f, tr_error *err)
{
        if (!pd_reg_has_proc_tracker(f))
                return 0;
        uint64_t now = tr_now_usec();
        if (f->updated_usec != 0 && now - f->updated_usec <= (uint64_t) f->interval_sec * 1000000u)
                return 0;
        return pd_registry_snapshot(r, err);
}

int pd_registry_members(pd_registry *r, pd_family *f, tr_pidset *out, tr_error *err)
{
        if (!f->tf)
                return 0;
        if (f->proc_tracked) {
                int k = pd_registry_ensure_fresh(r, f, err);
                if (k < 0)
                        return k;
                tr_pidset_add_all(out, &f->last_members);
                return 0;
        }
        return tr_family_members(f->tf, out, err);
}

pd_family *pd_registry_family_of(pd_registry *r, pid_t pid)
{
        /* a family's root, unless the pid now names another process (reused) */
        pd_family *f = g_hash_table_lookup(r->by_root, GINT_TO_POINTER(pid));
        uint64_t start = 0;
        if (tr_pid_start_ticks(pid, &start) < 0)
                return NULL;
        if (f && start == f->root_start_ticks)
                return f;
        tr_pid_cgroups pc = { { 0 } };
        bool have_pc = tr_pid_cgroups_read(r->hs, pid, &pc, NULL) >= 0;
        /* subfamilies before their parents: the first family holding pid is the most
         * specific one.  cgroup families: by pid's cgroup path (no cgroup.procs walk);
         * /proc families: the last snapshot, refreshed when stale. */
        g_autoptr(GPtrArray) all = g_ptr_array_new();
        pd_registry_subtree(r->root, all);
        pd_family *found = NULL;
        for (guint i = 0; i < all->len && !found; i++) {
                pd_family *c = all->pdata[i];
                if (!c->tf)
                        continue;
                if (!c->proc_tracked) {
                        if (have_pc && pd_reg_cgroup_holds(c, &pc))
                                found = c;
                        continue;
                }
                if (pd_registry_ensure_fresh(r, c, NULL) < 0)
                        continue;
                /* the snapshot's process at pid must still be this one */
                const tr_proc *tp = tr_scan_find(&r->scan, pid);
                if (tr_pidset_contains(&c->last_members, pid) && tp && tp->start_ticks == start)
                        found = c;
        }
        if (have_pc)
                tr_pid_cgroups_clear(&pc);
        return found;
}
