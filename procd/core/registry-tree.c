/* registry-tree.c - where a family sits: condor_procd's placement of a new subfamily (the
 * family whose root is its root's nearest ancestor, but not through a child kept at
 * registration; a cgroup family holding the root when deeper), registration with its
 * cgroup of its own, folding into the parent at unregistration, and the lookup of the
 * deepest cgroup family holding a process. */
#include "registry-internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trackers/proc-read.h"
#include "trackers/util.h"

static bool is_ancestor(const pd_family *a, const pd_family *f)
{
        for (; f; f = f->parent)
                if (f == a)
                        return true;
        return false;
}

/* Whether f left the process (a child of f's root) to its parent at registration. */
static bool kept_by(const pd_family *f, pd_ident c)
{
        for (guint i = 0; i < f->kept->len; i++) {
                const pd_ident *k = &g_array_index(f->kept, pd_ident, i);
                if (k->pid == c.pid && k->start_ticks == c.start_ticks)
                        return true;
        }
        return false;
}

/* The family that holds pid (started at start_ticks; its parent is ppid), condor_procd's
 * rule for a new subfamily's parent: the family pid is a member of.  For /proc families
 * that is their last snapshot (a member stays one until it exits, orphans included: a
 * family registered at or below a member orphaned out of a family whose root died goes
 * under that family); a process the last snapshot has not seen belongs to the family of
 * its nearest ancestor that roots a family or is a /proc family's member, unless the path
 * to that root passes through a child the family kept at registration (that child and its
 * descendants are its parent's).  A cgroup family holding pid (pc: its cgroups, NULL: read
 * them) wins when it lies below that one (a root placed into a job's cgroup by clone3 or a
 * write to cgroup.procs belongs to that job even when its parent is not the job's root). */
static pd_family *find_parent(pd_registry *r, pid_t pid, uint64_t start_ticks, pid_t ppid, const tr_pid_cgroups *pc)
{
        pd_family *by_tree = pd_reg_proc_family_holding(r, pid, start_ticks);
        tr_proc p = { .ppid = ppid };
        pd_ident c = { pid, start_ticks }; /* the child of pp on the path */
        /* a family counts only while its root is the same process (pid + start time): a
         * dead root's pid reused by an ancestor must not adopt the new family */
        for (int depth = 0; depth < 4096 && !by_tree && p.ppid > 0; depth++) {
                pid_t pp = p.ppid;
                if (tr_proc_stat_read(pp, &p) < 0)
                        break;
                pd_family *f = g_hash_table_lookup(r->by_root, GINT_TO_POINTER(pp));
                if (f && f->root_start_ticks == p.start_ticks)
                        by_tree = f->parent && kept_by(f, c) ? f->parent : f;
                else
                        by_tree = pd_reg_proc_family_holding(r, pp, p.start_ticks);
                c = (pd_ident) { pp, p.start_ticks };
                /* pp's ancestors started no later than pp: none roots a family when pp is
                 * older than every root */
                if (pp == 1 || p.start_ticks < r->min_root_start)
                        break;
        }
        if (!by_tree)
                by_tree = r->root;
        if (r->n_cgroup == 0)
                return by_tree;
        tr_pid_cgroups own = { { 0 } };
        if (!pc && tr_pid_cgroups_read(r->hs, pid, &own, NULL) >= 0)
                pc = &own;
        pd_family *by_cg = pc ? pd_reg_cgroup_family_of(r, pc) : NULL;
        tr_pid_cgroups_clear(&own);
        return by_cg && is_ancestor(by_tree, by_cg) ? by_cg : by_tree;
}

/* The parent pid of pid (0 when gone), for find_parent's callers that have not read it. */
static pid_t ppid_of(pid_t pid)
{
        pid_t ppid = 0;
        return tr_proc_ppid(pid, &ppid) < 0 ? 0 : ppid;
}

/* Link a built family into the tree under parent (NULL: the usual placement). */
void pd_reg_link_family(pd_registry *r, pd_family *f, pd_family *parent)
{
        pd_reg_arm_watcher(r, f);
        f->parent = parent ? parent : find_parent(r, f->root_pid, f->root_start_ticks, ppid_of(f->root_pid), NULL);
        g_ptr_array_add(f->parent->children, f);
        g_hash_table_insert(r->by_root, GINT_TO_POINTER(f->root_pid), f);
        pd_reg_cg_index(r, f, true);
        if (f->root_start_ticks < r->min_root_start)
                r->min_root_start = f->root_start_ticks;
        r->n_sub++;
        pd_reg_account(r, f, true);
        /* the parent loses the new family's members at the next snapshot */
        f->parent->updated_usec = 0;
        pd_reg_update_timer(r);
}

/* A cgroup of its own for a new family (family-cgroup.h): inside the parent's cgroup when
 * the parent has one, else under the base.  Returns its handle (for the tracker), or NULL
 * when none can be made: then the family stays on the /proc tracker and keeps the reason
 * for its usage record. */
static tr_cgroup *give_cgroup(pd_registry *r, pd_family *f, pd_family *parent, const pd_famcg_root *rt)
{
        bool has_cg = parent->cgroup_path && parent->tf && !parent->proc_tracked;
        const char *parent_path = has_cg ? parent->cgroup_path : NULL;
        tr_cgroup *parent_cg = has_cg && parent->cgroup_origin == PD_CG_FAMILY ? tr_family_cgroup(parent->tf) : NULL;
        tr_error err = { 0 };
        char *path = NULL;
        tr_cgroup *cg = NULL;
        pd_cgroup_origin origin = PD_CG_FAMILY;
        int k = pd_famcg_create(r->fc, rt, parent_cg, parent_path, &path, &cg, &err);
        tr_error perr = { 0 };
        if (k == -EBUSY && pd_famcg_track_placed(r->fc, rt, &path, &cg, &perr) == 0) {
                origin = PD_CG_PLACED; /* tracked through the cgroups its root was placed in */
                g_info("family %d: %s; tracked through them", (int) f->root_pid, err.msg);
        } else if (k < 0) {
                f->no_cgroup_reason = strdup(err.msg);
                g_info("family %d: no cgroup of its own: %s", (int) f->root_pid, err.msg);
                return NULL;
        }
        f->cgroup_path = path;
        f->cgroup_origin = origin;
        if (origin == PD_CG_FAMILY) {
                f->flags |= PD_FAMILY_MOVED_IN; /* the root moved in with what it had charged */
                /* read after the move: an exec in between keeps the flag (the safe side) */
                f->moved_exe_known = tr_proc_exe_id(f->root_pid, &f->moved_exe) == 0;
        }
        return cg;
}

/* Remove the cgroup procd made for f (now, or once empty). */
static void release_cgroup(pd_registry *r, pd_family *f)
{
        if (f->cgroup_path && pd_cgroup_made_by_procd(f->cgroup_origin))
                pd_famcg_release(r->fc, f->cgroup_path, f->cgroup_origin == PD_CG_FAMILY);
}

/* The children of pid now (tr_proc_children), appended to kept (pd_ident).  -ENOMEM. */
static int read_kept(pid_t pid, GArray *kept)
{
        _cleanup_free_ tr_proc_ident *kids = NULL;
        size_t n = 0, cap = 0;
        int k = tr_proc_children(pid, &kids, &n, &cap);
        if (n)
                g_array_append_vals(kept, kids, (guint) n);
        return k;
}

int pd_registry_register(pd_registry *r, pid_t root_pid, const tr_proc *root_stat, pid_t watcher_pid,
                         uint32_t interval_sec, pd_family **out, bool *bad_watcher, tr_error *err)
{
        bool in_cgroup;
        return pd_registry_register_in(r, root_pid, root_stat, watcher_pid, interval_sec, NULL, 0, out, &in_cgroup,
                                       bad_watcher, err);
}

int pd_registry_register_in(pd_registry *r, pid_t root_pid, const tr_proc *root_stat, pid_t watcher_pid,
                            uint32_t interval_sec, const char *cgroup, unsigned flags, pd_family **out, bool *in_cgroup,
                            bool *bad_watcher, tr_error *err)
{
        *bad_watcher = false;
        *in_cgroup = false;
        pd_family *f = pd_reg_family_alloc();
        if (!f)
                return tr_error_set(err, ENOMEM, "out of memory");
        f->root_pid = root_pid;
        f->interval_sec = interval_sec;
        /* what the root is, read once: start time and parent (stat, the caller's when it read
         * it), uid (status, checked by start time), cgroups (for the parent's lookup and its
         * own cgroup) */
        tr_proc p;
        int k = 0;
        if (root_stat)
                p = *root_stat;
        else
                k = tr_proc_stat_read(root_pid, &p);
        if (k < 0) {
                pd_reg_family_free(f);
                return tr_error_setx(err, -k, "root pid %d", (int) root_pid);
        }
        f->root_start_ticks = p.start_ticks;
        /* the root's cgroups, read before its uid: the uid's start-time check after both
         * says they were the root's (the tracker opens its cgroup from them) */
        tr_pid_cgroups pc = { { 0 } };
        bool have_pc = tr_pid_cgroups_read(r->hs, root_pid, &pc, NULL) >= 0;
        bool pc_checked = tr_proc_uid_checked(root_pid, f->root_start_ticks, &f->root_uid) == 0 && have_pc;
        /* condor_procd's rule: what the root forked before now stays in the parent family */
        if (read_kept(root_pid, f->kept) < 0) {
                tr_pid_cgroups_clear(&pc);
                pd_reg_family_free(f);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        if (watcher_pid > 0 && (k = pd_reg_open_watcher(f, watcher_pid, 0)) < 0) {
                tr_pid_cgroups_clear(&pc);
                pd_reg_family_free(f);
                *bad_watcher = true;
                return tr_error_setx(err, -k, "watcher pid %d", (int) watcher_pid);
        }
        pd_family *parent = find_parent(r, root_pid, p.start_ticks, p.ppid, have_pc ? &pc : NULL);
        tr_cgroup *made = NULL;
        /* the root's cgroups as just read, in the hierarchy families are matched by
         * (pd_reg_pid_in_cgroup's test without reading them again) */
        int prim = pd_famcg_primary(r->hs);
        if (cgroup && have_pc && prim >= 0 && pc.paths[prim] && tr_cgroup_path_under(pc.paths[prim], cgroup)) {
                /* placed by its starter: tracked as TrackFamilyViaCgroup would leave it */
                f->cgroup_path = strdup(cgroup);
                if (!f->cgroup_path) {
                        tr_pid_cgroups_clear(&pc);
                        pd_reg_family_free(f);
                        return tr_error_set(err, ENOMEM, "out of memory");
                }
                f->cgroup_origin = PD_CG_HANDED;
                *in_cgroup = true;
        } else {
                pd_famcg_root rt = { root_pid, f->root_start_ticks, p.ppid, parent->root_pid };
                made = give_cgroup(r, f, parent, &rt);
        }
        f->flags |= flags;
        k = pd_reg_build_tracker_seen(r, f, made, pc_checked && *in_cgroup ? &pc : NULL, err);
        tr_pid_cgroups_clear(&pc);
        if (k < 0) {
                release_cgroup(r, f);
                pd_reg_family_free(f);
                return k;
        }
        pd_reg_link_family(r, f, parent);
        pd_reg_changed(r);
        pd_reg_family_changed(r, f, PD_FAMILY_REGISTERED);
        *out = f;
        return 0;
}

/* f folds into its parent p: f's root and members are p's from now on, even those that
 * p had left to its own parent at registration (p->kept). */
static void unkeep(pd_family *p, const pd_family *f)
{
        for (guint i = p->kept->len; i-- > 0;) {
                pid_t pid = g_array_index(p->kept, pd_ident, i).pid;
                if (pid == f->root_pid || tr_pidset_contains(&f->last_members, pid))
                        g_array_remove_index_fast(p->kept, i);
        }
}

int pd_registry_unregister(pd_registry *r, pd_family *f)
{
        if (!f->parent)
                return -EINVAL;
        pd_reg_family_changed(r, f, PD_FAMILY_REMOVED);
        pd_family *p = f->parent;
        for (guint i = 0; i < f->children->len; i++) {
                pd_family *c = f->children->pdata[i];
                c->parent = p;
                g_ptr_array_add(p->children, c);
        }
        g_ptr_array_set_size(f->children, 0);
        g_ptr_array_remove(p->children, f);
        unkeep(p, f);
        g_hash_table_remove(r->by_root, GINT_TO_POINTER(f->root_pid));
        pd_reg_cg_index(r, f, false);
        if (--r->n_sub == 0)
                r->min_root_start = UINT64_MAX;
        pd_reg_account(r, f, false);
        /* members fold into the parent at its next refresh, those it could not find by its
         * methods (orphans) too */
        pd_reg_carry_members(r, f, p);
        p->updated_usec = 0;
        release_cgroup(r, f);
        pd_reg_family_free(f);
        pd_reg_update_timer(r);
        pd_reg_changed(r);
        return 0;
}

/* Whether pid's cgroup (as /proc/PID/cgroup names it) is f's cgroup or below it, in the
 * hierarchy holds_index names. */
bool pd_reg_cgroup_holds(pd_family *f, const tr_pid_cgroups *pc)
{
        tr_cgroup *cg = tr_family_cgroup(f->tf);
        int idx = cg ? tr_cgroup_primary_index(cg) : -1;
        if (idx < 0 || !pc->paths[idx])
                return false;
        const char *fp = tr_cgroup_path(cg, idx), *pp = pc->paths[idx];
        size_t n = strlen(fp);
        return strncmp(fp, pp, n) == 0 && (pp[n] == '\0' || pp[n] == '/');
}

/* The deepest cgroup family whose cgroup holds a process with cgroups pc, or NULL.  By the
 * index: each ancestor path of the process's cgroup looked up (no walk over the families);
 * a full scan only while two families share a key. */
pd_family *pd_reg_cgroup_family_of(pd_registry *r, const tr_pid_cgroups *pc)
{
        if (r->n_cgroup == 0)
                return NULL;
        pd_family *found = NULL;
        if (r->by_cgroup_dups == 0) {
                size_t found_depth = 0;
                for (int i = 0; i < r->hs->n; i++) {
                        if (!pc->paths[i])
                                continue;
                        char key[PATH_MAX + 16];
                        int n = snprintf(key, sizeof key, "%d:%s", i, pc->paths[i]);
                        if (n < 0 || (size_t) n >= sizeof key)
                                continue;
                        size_t stop = (size_t) (strchr(key, ':') - key) + 1; /* the path's leading '/' */
                        for (size_t len = (size_t) n;;) {
                                key[len] = '\0';
                                pd_family *c = g_hash_table_lookup(r->by_cgroup, key);
                                if (c && pd_reg_cgroup_holds(c, pc)) {
                                        size_t depth = 0;
                                        for (pd_family *a = c; a; a = a->parent)
                                                depth++;
                                        if (!found || depth > found_depth) {
                                                found = c;
                                                found_depth = depth;
                                        }
                                        break;
                                }
                                if (len <= stop + 1)
                                        break; /* "/" was the last */
                                size_t slash = len - 1; /* "/a/b" -> "/a", "/a" -> "/" */
                                while (slash > stop && key[slash] != '/')
                                        slash--;
                                len = slash > stop ? slash : stop + 1;
                        }
                }
                return found;
        }
        g_autoptr(GPtrArray) all = g_ptr_array_new();
        pd_registry_subtree(r->root, all);
        for (guint i = 0; i < all->len && !found; i++) {
                pd_family *c = all->pdata[i];
                if (c->tf && !c->proc_tracked && pd_reg_cgroup_holds(c, pc))
                        found = c;
        }
        return found;
}
