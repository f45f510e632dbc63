/* registry-track.c - a family's tracking methods (cgroup, environment marker, login, gid)
 * made into its tr_family, the index of cgroup families, and TrackFamilyViaCgroup's move of
 * the current members into the cgroup. */
#include "registry-internal.h"

#include <errno.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "trackers/proc-read.h"
#include "trackers/util.h"

static void tracker_log(void *userdata, const char *message)
{
        pd_family *f = userdata;
        g_message("family %d: %s", (int) f->root_pid, message);
}

/* Counters behind the timer rule, kept per change (no tree walk per registration). */
void pd_reg_account(pd_registry *r, pd_family *f, bool add)
{
        if (add == f->counted || !f->parent || !f->tf)
                return;
        if (add) {
                f->counted_proc = f->proc_tracked;
                f->counted_interval = f->interval_sec;
        }
        if (f->counted_proc) {
                gpointer key = GUINT_TO_POINTER(f->counted_interval);
                guint n = GPOINTER_TO_UINT(g_hash_table_lookup(r->proc_intervals, key));
                n = add ? n + 1 : n - 1;
                if (n)
                        g_hash_table_insert(r->proc_intervals, key, GUINT_TO_POINTER(n));
                else
                        g_hash_table_remove(r->proc_intervals, key);
        } else {
                r->n_cgroup = add ? r->n_cgroup + 1 : r->n_cgroup - 1;
        }
        f->counted = add;
}

tr_procfam_spec pd_reg_family_spec(const pd_family *f)
{
        return (tr_procfam_spec) {
                .root_pid = f->root_pid,
                .root_start_ticks = f->root_start_ticks,
                .env_marker = f->env_marker,
                .by_login = f->by_login,
                .login_uid = f->login_uid,
                .by_gid = f->by_gid,
                .gid = f->gid,
        };
}

/* Add f to (or drop it from) the index of cgroup families, keyed "<hierarchy>:<path>" by
 * the cgroup its membership is matched by. */
void pd_reg_cg_index(pd_registry *r, pd_family *f, bool add)
{
        if (!add) {
                if (f->cg_key && f->cg_key_dup)
                        r->by_cgroup_dups--;
                else if (f->cg_key)
                        g_hash_table_remove(r->by_cgroup, f->cg_key);
                g_free(f->cg_key);
                f->cg_key = NULL;
                f->cg_key_dup = false;
                return;
        }
        tr_cgroup *cg = f->tf && !f->proc_tracked ? tr_family_cgroup(f->tf) : NULL;
        int idx = cg ? tr_cgroup_primary_index(cg) : -1;
        if (idx < 0 || f->cg_key)
                return;
        f->cg_key = g_strdup_printf("%d:%s", idx, tr_cgroup_path(cg, idx));
        f->cg_key_dup = g_hash_table_contains(r->by_cgroup, f->cg_key);
        if (f->cg_key_dup)
                r->by_cgroup_dups++;
        else
                g_hash_table_insert(r->by_cgroup, f->cg_key, f);
}

/* Build (or rebuild) f's tr_family from its tracking methods.  made: the handle of the
 * cgroup procd just made for f (consumed), NULL to open f->cgroup_path. */
int pd_reg_build_tracker(pd_registry *r, pd_family *f, tr_cgroup *made, tr_error *err)
{
        return pd_reg_build_tracker_seen(r, f, made, NULL, err);
}

int pd_reg_build_tracker_seen(pd_registry *r, pd_family *f, tr_cgroup *made, const tr_pid_cgroups *root_pc,
                              tr_error *err)
{
        _cleanup_cgroup_ tr_cgroup *cg = made;
        if (f->root_pid <= 1)
                return 0; /* a root family rooted at init: nothing to track */
        tr_procfam_spec spec = pd_reg_family_spec(f);
        if (f->cgroup_path && f->cgroup_origin == PD_CG_PLACED) {
                /* another manager placed the root there: read through, never acted on */
                int k = cg ? 0 : pd_famcg_open_placed(r->hs, f->cgroup_path, &cg, err);
                if (k < 0)
                        return k;
                spec.max_age_usec = (uint64_t) f->interval_sec * 1000000u;
        } else if (f->cgroup_path && f->cgroup_origin != PD_CG_HANDED) {
                /* procd made it: the family is that directory (its root sits in the leaf,
                 * subfamilies in child cgroups: all counted) */
                int k = cg ? 0 : tr_cgroup_open(r->hs, f->cgroup_path, TR_CG_MAY_ACT | TR_CG_OWNED, &cg, err);
                if (k < 0)
                        return k;
                spec.max_age_usec = (uint64_t) f->interval_sec * 1000000u;
        } else if (f->cgroup_path && root_pc) {
                /* the root's own (deeper) cgroup, from what the caller read of it */
                int k = cg ? 0
                           : tr_cgroup_open_for_cgroups(r->hs, NULL, f->cgroup_path, root_pc, f->cgroup_path,
                                                        TR_CG_MAY_ACT, &cg, err);
                if (k < 0)
                        return k;
                spec.max_age_usec = (uint64_t) f->interval_sec * 1000000u;
        } else if (f->cgroup_path) {
                /* the root's own (deeper) cgroup only while the pid is still the root: a
                 * gone root, or its pid reused by a stranger, gets the path as named */
                uint64_t start = 0;
                bool same = tr_pid_start_ticks(f->root_pid, &start) == 0 && start == f->root_start_ticks;
                int k = same ? tr_cgroup_open_for_pid(r->hs, f->cgroup_path, f->root_pid, TR_CG_MAY_ACT, &cg, err)
                             : -ESRCH;
                if (k >= 0 && (tr_pid_start_ticks(f->root_pid, &start) < 0 || start != f->root_start_ticks)) {
                        tr_cgroup_free(TR_TAKE_PTR(cg)); /* the pid changed hands meanwhile */
                        k = -ESRCH;
                }
                if (k == -ESRCH || (k < 0 && !same))
                        k = tr_cgroup_open(r->hs, f->cgroup_path, TR_CG_MAY_ACT, &cg, err);
                if (k < 0)
                        return k;
                /* cgroup families: the /proc side is only a fallback with its own scans */
                spec.max_age_usec = (uint64_t) f->interval_sec * 1000000u;
        } else {
                /* /proc families are kept fresh by the registry's shared snapshots */
                spec.max_age_usec = UINT64_MAX;
        }
        return pd_reg_install_tracker(r, f, &spec, TR_TAKE_PTR(cg), err);
}

/* Give f the tracker of spec and cg (taken, may be NULL: /proc). */
int pd_reg_install_tracker(pd_registry *r, pd_family *f, const tr_procfam_spec *spec, tr_cgroup *cg, tr_error *err)
{
        tr_family *tf = NULL;
        int k = tr_family_new(spec, cg, &tf, err);
        if (k < 0)
                return k;
        tr_family_set_log(tf, tracker_log, f);
        pd_reg_account(r, f, false);
        pd_reg_cg_index(r, f, false);
        /* a /proc family keeps its members across the rebuild (the new walk starts from the
         * root: orphans that match no method would be lost) */
        if (f->tf && f->proc_tracked && !f->cgroup_path)
                pd_reg_carry_members(r, f, f);
        if (f->tf)
                tr_family_free(f->tf);
        f->tf = tf;
        f->proc_tracked = f->cgroup_path == NULL;
        f->updated_usec = 0;
        pd_reg_account(r, f, true);
        if (f->parent) /* a family being registered is indexed when it is linked */
                pd_reg_cg_index(r, f, true);
        return 0;
}

static int set_str(char **dst, const char *src)
{
        char *s = strdup(src);
        if (!s)
                return -ENOMEM;
        free(*dst);
        *dst = s;
        return 0;
}

bool pd_reg_pid_in_cgroup(const tr_hierarchies *hs, pid_t pid, const char *path)
{
        _cleanup_free_ char *cur = NULL;
        return pd_famcg_pid_cgroup(hs, pid, &cur) == 0 && tr_cgroup_path_under(cur, path);
}

/* f's own members now, without its subfamilies' (a cgroup family's cgroup also lists the
 * subfamilies nested in it).  A /proc family's come from a fresh snapshot when fresh. */
static int own_members(pd_registry *r, pd_family *f, bool fresh, tr_pidset *out, tr_error *err)
{
        if (!f->tf)
                return 0;
        if (f->proc_tracked) {
                if (fresh) {
                        int k = pd_registry_snapshot(r, err);
                        if (k < 0)
                                return k;
                }
                tr_pidset_add_all(out, &f->last_members);
        } else {
                int k = tr_family_members(f->tf, out, err);
                if (k < 0)
                        return k;
                g_autoptr(GPtrArray) sub = g_ptr_array_new();
                pd_registry_subtree(f, sub);
                _cleanup_pidset_ tr_pidset theirs = TR_PIDSET_INIT;
                for (guint i = 0; i + 1 < sub->len; i++) /* post-order: f itself is last */
                        pd_registry_members(r, sub->pdata[i], &theirs, NULL);
                tr_pidset_normalize(&theirs);
                size_t n = 0;
                for (size_t i = 0; i < out->n; i++)
                        if (!tr_pidset_contains(&theirs, out->pids[i]))
                                out->pids[n++] = out->pids[i];
                out->n = n;
        }
        uint64_t start = 0;
        if (tr_pid_start_ticks(f->root_pid, &start) == 0 && start == f->root_start_ticks)
                tr_pidset_add(out, f->root_pid);
        for (guint i = 0; i < f->strays->len; i++) /* earlier failures: try again */
                tr_pidset_add(out, g_array_index(f->strays, pd_ident, i).pid);
        tr_pidset_normalize(out);
        return 0;
}

pd_family *pd_registry_cgroup_owner(pd_registry *r, const char *path, const pd_family *f)
{
        g_autoptr(GPtrArray) all = g_ptr_array_new();
        pd_registry_all(r, all);
        for (guint i = 0; i < all->len; i++) {
                pd_family *g = all->pdata[i];
                if (g == f || !g->cgroup_path)
                        continue;
                size_t n = strlen(g->cgroup_path);
                if (strcmp(g->cgroup_path, path) == 0 ||
                    (g->cgroup_origin == PD_CG_FAMILY && strncmp(path, g->cgroup_path, n) == 0 &&
                     strcmp(path + n, "/" PD_FAMCG_LEAF) == 0))
                        return g;
        }
        return NULL;
}

/* TrackFamilyViaCgroup: every current member of f moves into the cgroup (made when it does
 * not exist), then f is tracked by it.  Rounds until a listing finds nobody left outside
 * (a member forking while it is moved leaves its child behind): up to 8 for a cgroup
 * family (a cheap listing), 2 for a /proc family (a snapshot each).  A /proc family whose
 * root already sits in the cgroup (a starter placed the job there) is not rescanned. */
int pd_registry_track_cgroup(pd_registry *r, pd_family *f, const char *cgroup, tr_error *err)
{
        if (f->cgroup_path && strcmp(f->cgroup_path, cgroup) == 0 && f->tf && !f->proc_tracked)
                return 0; /* already */
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        pd_cgroup_origin origin = PD_CG_HANDED;
        int k = tr_cgroup_open(r->hs, cgroup, TR_CG_MAY_ACT, &cg, err);
        if (k == -ENOENT) {
                tr_error_clear(err);
                k = tr_cgroup_create(r->hs, cgroup, &cg, err);
                origin = PD_CG_CREATED;
        }
        if (k < 0)
                return k;
        bool proc = !f->tf || f->proc_tracked;
        bool root_inside = pd_reg_pid_in_cgroup(r->hs, f->root_pid, cgroup);
        GArray *failed = g_array_new(FALSE, FALSE, sizeof(pd_ident));
        size_t total = 0;
        for (int round = 0; round < (proc ? 2 : 8); round++) {
                _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
                tr_error merr = { 0 };
                if (own_members(r, f, proc && (round > 0 || !root_inside), &m, &merr) < 0) {
                        pd_reg_log(r, "family %d: listing members to move: %s", (int) f->root_pid, merr.msg);
                        break;
                }
                size_t moved = 0;
                g_array_set_size(failed, 0);
                tr_error merr2 = { 0 };
                /* placements of other managers stay (family-cgroup.h); the family's own
                 * cgroup and procd's base are no such placement */
                const char *own[] = { f->cgroup_origin == PD_CG_PLACED ? NULL : f->cgroup_path,
                                      pd_famcg_base(r->fc), NULL };
                if (pd_famcg_move(cg, &m, own[0] ? own : own + 1, failed, &moved, &merr2) < 0)
                        pd_reg_log(r, "family %d: %u member(s) could not be moved into %s: %s", (int) f->root_pid,
                                   failed->len, cgroup, merr2.msg);
                total += moved;
                if (moved == 0)
                        break;
        }
        char *old = f->cgroup_path ? strdup(f->cgroup_path) : NULL;
        pd_cgroup_origin old_origin = f->cgroup_origin;
        k = set_str(&f->cgroup_path, cgroup);
        f->cgroup_origin = origin;
        if (k >= 0)
                k = pd_reg_build_tracker(r, f, NULL, err);
        if (k < 0) {
                free(f->cgroup_path);
                f->cgroup_path = old;
                f->cgroup_origin = old_origin;
                if (origin == PD_CG_CREATED)
                        pd_famcg_release(r->fc, cgroup, false);
                g_array_free(failed, TRUE);
                pd_reg_update_timer(r);
                return k;
        }
        g_array_free(f->strays, TRUE);
        f->strays = failed;
        if (old && pd_cgroup_made_by_procd(old_origin))
                pd_famcg_release(r->fc, old, old_origin == PD_CG_FAMILY);
        free(old);
        free(f->no_cgroup_reason);
        f->no_cgroup_reason = NULL;
        if (total) {
                g_info("family %d: %zu member(s) moved into %s", (int) f->root_pid, total, cgroup);
                f->flags |= PD_FAMILY_MOVED_IN;
        }
        pd_reg_update_timer(r);
        pd_reg_changed(r);
        pd_reg_family_changed(r, f, PD_FAMILY_RETRACKED);
        return 0;
}

int pd_registry_track_environment(pd_registry *r, pd_family *f, const char *marker, tr_error *err)
{
        char *old = f->env_marker ? strdup(f->env_marker) : NULL;
        int k = set_str(&f->env_marker, marker);
        if (k >= 0)
                k = pd_reg_build_tracker(r, f, NULL, err);
        if (k < 0) {
                free(f->env_marker);
                f->env_marker = old;
        } else {
                free(old);
                pd_reg_changed(r);
        }
        return k;
}

int pd_registry_track_login(pd_registry *r, pd_family *f, const char *login, uid_t uid, tr_error *err)
{
        bool old_by = f->by_login;
        uid_t old_uid = f->login_uid;
        char *old_name = f->login_name ? strdup(f->login_name) : NULL;
        int k = set_str(&f->login_name, login);
        if (k < 0) {
                free(old_name);
                return k;
        }
        f->by_login = true;
        f->login_uid = uid;
        k = pd_reg_build_tracker(r, f, NULL, err);
        if (k < 0) {
                f->by_login = old_by;
                f->login_uid = old_uid;
                free(f->login_name);
                f->login_name = old_name;
        } else {
                free(old_name);
                pd_reg_changed(r);
        }
        return k;
}

int pd_registry_track_gid(pd_registry *r, pd_family *f, gid_t gid, bool allocated, tr_error *err)
{
        bool old_by = f->by_gid, old_alloc = f->gid_allocated;
        gid_t old = f->gid;
        f->by_gid = true;
        f->gid = gid;
        f->gid_allocated = allocated;
        int k = pd_reg_build_tracker(r, f, NULL, err);
        if (k < 0) {
                f->by_gid = old_by;
                f->gid = old;
                f->gid_allocated = old_alloc;
        } else {
                pd_reg_changed(r);
        }
        return k;
}

static bool gid_in_use(const pd_family *f, gid_t gid)
{
        if (f->by_gid && f->gid == gid)
                return true;
        for (guint i = 0; i < f->children->len; i++)
                if (gid_in_use(f->children->pdata[i], gid))
                        return true;
        return false;
}

bool pd_registry_gid_in_use(pd_registry *r, gid_t gid) { return gid_in_use(r->root, gid); }

void pd_registry_cg_touch(pd_registry *r, pd_family *f)
{
        tr_cgroup *cg = f->tf ? tr_family_cgroup(f->tf) : NULL;
        if (!cg)
                return;
        if (!r->cg_budget) {
                struct rlimit rl = { 0 };
                (void) getrlimit(RLIMIT_NOFILE, &rl);
                size_t max = tr_cg_budget_max_for((unsigned long) rl.rlim_cur);
                r->cg_budget = tr_cg_budget_new(max);
                g_message("family cgroups: the %zu families used last keep their files open, the others rest "
                          "(fd limit %llu)",
                          max, (unsigned long long) rl.rlim_cur);
        }
        tr_cg_budget_touch(r->cg_budget, cg);
}
