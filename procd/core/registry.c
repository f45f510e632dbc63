/* registry.c - the daemon's tree of families, watcher pidfds and the snapshot timer. */
#include "registry.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procd/core/state.h"
#include "trackers/util.h"

struct pd_registry {
        const tr_hierarchies *hs;
        pd_famcg *fc;             /* family cgroups (not owned), NULL: none */
        pd_pid_watch *pid_watch;  /* the watchers' pidfds, made at the first watcher */
        pd_family *root;
        GHashTable *by_root;      /* GINT_TO_POINTER(root pid) -> pd_family */
        GHashTable *by_cgroup;    /* cgroup key (cg_key) -> cgroup-tracked pd_family */
        size_t by_cgroup_dups;    /* families whose key another one holds: then a full scan */
        uint64_t min_root_start;  /* no subfamily root started earlier (a bound, never raised
                                     while families exist): find_parent's walk stops there */
        size_t n_sub;
        size_t n_cgroup;          /* cgroup-tracked subfamilies */
        GHashTable *proc_intervals; /* interval -> number of /proc-tracked subfamilies */
        tr_scan scan;
        uint64_t last_snapshot_usec;
        guint timer;
        uint32_t timer_interval;
        pd_registry_log_fn log;
        void *log_data;
        pd_registry_changed_fn changed;
        void *changed_data;
        pd_registry_watcher_fn watcher_exit;
        void *watcher_exit_data;
        bool members_changed;     /* set by a snapshot */
};

static void changed(pd_registry *r)
{
        if (r->changed)
                r->changed(r->changed_data);
}

void pd_registry_set_changed_hook(pd_registry *r, pd_registry_changed_fn fn, void *userdata)
{
        r->changed = fn;
        r->changed_data = userdata;
}

void pd_registry_set_watcher_hook(pd_registry *r, pd_registry_watcher_fn fn, void *userdata)
{
        r->watcher_exit = fn;
        r->watcher_exit_data = userdata;
}

void pd_registry_set_flag(pd_registry *r, pd_family *f, unsigned flag, bool on)
{
        unsigned v = on ? f->flags | flag : f->flags & ~flag;
        if (v == f->flags)
                return;
        f->flags = v;
        changed(r);
}

static void reg_log(pd_registry *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reg_log(pd_registry *r, const char *fmt, ...)
{
        char msg[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (r->log)
                r->log(r->log_data, msg);
        else
                g_message("%s", msg);
}

static void pidset_append(tr_pidset *dst, const tr_pidset *src);
static void pre_order(pd_family *f, GPtrArray *out);

static void tracker_log(void *userdata, const char *message)
{
        pd_family *f = userdata;
        g_message("family %d: %s", (int) f->root_pid, message);
}

void pd_registry_set_log(pd_registry *r, pd_registry_log_fn fn, void *userdata)
{
        r->log = fn;
        r->log_data = userdata;
}

static bool family_has_tf_proc(const pd_family *f) { return f->tf && f->proc_tracked; }

/* Counters behind the timer rule, kept per change (no tree walk per registration). */
static void account(pd_registry *r, pd_family *f, bool add)
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

static int install_tracker(pd_registry *r, pd_family *f, const tr_procfam_spec *spec, tr_cgroup *cg, tr_error *err);

static tr_procfam_spec family_spec(const pd_family *f)
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
static void cg_index(pd_registry *r, pd_family *f, bool add)
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
static int build_tracker_with(pd_registry *r, pd_family *f, tr_cgroup *made, tr_error *err)
{
        _cleanup_cgroup_ tr_cgroup *cg = made;
        if (f->root_pid <= 1)
                return 0; /* a root family rooted at init: nothing to track */
        tr_procfam_spec spec = family_spec(f);
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
        return install_tracker(r, f, &spec, TR_TAKE_PTR(cg), err);
}

/* Give f the tracker of spec and cg (taken, may be NULL: /proc). */
static int install_tracker(pd_registry *r, pd_family *f, const tr_procfam_spec *spec, tr_cgroup *cg, tr_error *err)
{
        tr_family *tf = NULL;
        int k = tr_family_new(spec, cg, &tf, err);
        if (k < 0)
                return k;
        tr_family_set_log(tf, tracker_log, f);
        account(r, f, false);
        cg_index(r, f, false);
        if (f->tf)
                tr_family_free(f->tf);
        f->tf = tf;
        f->proc_tracked = f->cgroup_path == NULL;
        f->updated_usec = 0;
        account(r, f, true);
        if (f->parent) /* a family being registered is indexed when it is linked */
                cg_index(r, f, true);
        return 0;
}

static int build_tracker(pd_registry *r, pd_family *f, tr_error *err) { return build_tracker_with(r, f, NULL, err); }


static void family_free(pd_family *f)
{
        if (!f)
                return;
        if (f->watcher_source)
                g_source_remove(f->watcher_source);
        pd_pid_watch_cancel(f->watcher_watch);
        tr_pidref_close(&f->watcher);
        if (f->tf)
                tr_family_free(f->tf);
        tr_pidset_free(&f->last_members);
        g_ptr_array_free(f->children, TRUE);
        g_array_free(f->strays, TRUE);
        g_array_free(f->kept, TRUE);
        free(f->cgroup_path);
        g_free(f->cg_key);
        free(f->no_cgroup_reason);
        free(f->env_marker);
        free(f->login_name);
        free(f);
}

static pd_family *family_alloc(void)
{
        pd_family *f = calloc(1, sizeof *f);
        if (!f)
                return NULL;
        f->watcher = TR_PIDREF_EMPTY;
        f->children = g_ptr_array_new();
        f->strays = g_array_new(FALSE, FALSE, sizeof(pd_ident));
        f->kept = g_array_new(FALSE, FALSE, sizeof(pd_ident));
        return f;
}

static gboolean snapshot_timer_cb(gpointer data)
{
        pd_registry *r = data;
        tr_error err = { 0 };
        if (pd_registry_snapshot(r, &err) < 0)
                reg_log(r, "snapshot failed: %s", err.msg);
        return G_SOURCE_CONTINUE;
}

/* The periodic snapshot runs only while some registered subfamily is /proc-tracked, at
 * the smallest interval asked. */
static void update_timer(pd_registry *r)
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

const tr_hierarchies *pd_registry_hierarchies(const pd_registry *r) { return r->hs; }
void pd_registry_set_family_cgroups(pd_registry *r, pd_famcg *fc) { r->fc = fc; }
pd_famcg *pd_registry_family_cgroups(const pd_registry *r) { return r->fc; }

int pd_registry_new(const tr_hierarchies *hs, pid_t root_pid, uint32_t root_interval_sec, pd_registry **out,
                    tr_error *err)
{
        pd_registry *r = calloc(1, sizeof *r);
        if (!r)
                return tr_error_set(err, ENOMEM, "out of memory");
        r->hs = hs;
        r->by_root = g_hash_table_new(g_direct_hash, g_direct_equal);
        r->by_cgroup = g_hash_table_new(g_str_hash, g_str_equal);
        r->min_root_start = UINT64_MAX;
        r->proc_intervals = g_hash_table_new(g_direct_hash, g_direct_equal);
        r->root = family_alloc();
        if (!r->root) {
                pd_registry_free(r);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        pd_family *f = r->root;
        f->root_pid = root_pid;
        f->interval_sec = root_interval_sec ? root_interval_sec : 60;
        f->proc_tracked = true;
        if (root_pid > 1) {
                int k = tr_pid_start_ticks(root_pid, &f->root_start_ticks);
                if (k < 0) {
                        pd_registry_free(r);
                        return tr_error_setx(err, -k, "root family: pid %d", (int) root_pid);
                }
                tr_proc_uid_checked(root_pid, f->root_start_ticks, &f->root_uid);
                k = build_tracker(r, f, err);
                if (k < 0) {
                        pd_registry_free(r);
                        return k;
                }
                g_hash_table_insert(r->by_root, GINT_TO_POINTER(root_pid), f);
        }
        *out = r;
        return 0;
}

static void free_tree(pd_family *f)
{
        for (guint i = 0; i < f->children->len; i++)
                free_tree(f->children->pdata[i]);
        family_free(f);
}

void pd_registry_free(pd_registry *r)
{
        if (!r)
                return;
        if (r->timer)
                g_source_remove(r->timer);
        if (r->root)
                free_tree(r->root);
        pd_pid_watch_free(r->pid_watch);
        g_hash_table_destroy(r->by_root);
        g_hash_table_destroy(r->by_cgroup);
        g_hash_table_destroy(r->proc_intervals);
        tr_scan_free(&r->scan);
        free(r);
}

pd_family *pd_registry_root(pd_registry *r) { return r->root; }
size_t pd_registry_count(const pd_registry *r) { return r->n_sub; }

pd_family *pd_registry_find(pd_registry *r, pid_t root_pid)
{
        if (root_pid == 0)
                return r->root;
        return g_hash_table_lookup(r->by_root, GINT_TO_POINTER(root_pid));
}

void pd_registry_watcher_exited(pd_registry *r, pd_family *f)
{
        if (r->watcher_exit) {
                r->watcher_exit(r->watcher_exit_data, f);
                return;
        }
        reg_log(r, "watcher %d of family %d exited: unregistering the family", (int) f->watcher.pid,
                (int) f->root_pid);
        pd_registry_unregister(r, f);
}

uint64_t pd_registry_snapshot_start_ticks(const pd_registry *r, pid_t pid)
{
        const tr_proc *p = tr_scan_find(&r->scan, pid);
        return p ? p->start_ticks : 0;
}

typedef struct watch_ctx {
        pd_registry *r;
        pd_family *f;
} watch_ctx;

static gboolean watcher_cb(gint fd, GIOCondition cond, gpointer data)
{
        watch_ctx *w = data;
        pd_family *f = w->f;
        (void) fd;
        (void) cond;
        f->watcher_source = 0; /* G_SOURCE_REMOVE below removes it */
        f->watcher_watch = NULL; /* a pid-watch entry ends after its callback */
        pd_registry_watcher_exited(w->r, f);
        return G_SOURCE_REMOVE;
}

static void watcher_exit_cb(void *data) { watcher_cb(-1, 0, data); }

/* Fallback without pidfds only: the watcher is gone when its start time changed. */
static gboolean watcher_poll_cb(gpointer data)
{
        watch_ctx *w = data;
        if (tr_pidref_alive(&w->f->watcher))
                return G_SOURCE_CONTINUE;
        return watcher_cb(-1, 0, data);
}

static pd_family *cgroup_family_of(pd_registry *r, const tr_pid_cgroups *pc);

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
 * rule for a new subfamily's parent: the nearest family whose root is an ancestor of pid,
 * unless the path to that root passes through a child the family kept at registration
 * (that child and its descendants are its parent's).  A cgroup family holding pid (pc: its
 * cgroups, NULL: read them) wins when it lies below that one (a root placed into a job's
 * cgroup by clone3 or a write to cgroup.procs belongs to that job even when its parent is
 * not the job's root). */
static pd_family *find_parent(pd_registry *r, pid_t pid, uint64_t start_ticks, pid_t ppid, const tr_pid_cgroups *pc)
{
        pd_family *by_tree = NULL;
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
        pd_family *by_cg = pc ? cgroup_family_of(r, pc) : NULL;
        tr_pid_cgroups_clear(&own);
        return by_cg && is_ancestor(by_tree, by_cg) ? by_cg : by_tree;
}

/* The parent pid of pid (0 when gone), for find_parent's callers that have not read it. */
static pid_t ppid_of(pid_t pid)
{
        pid_t ppid = 0;
        return tr_proc_ppid(pid, &ppid) < 0 ? 0 : ppid;
}

/* Open the watcher (tr_pidref: a pidfd checked against its start time, 0: read it now;
 * without pidfd_open, identity by start time alone).  -ESRCH when gone or when the pid
 * names another process. */
static int open_watcher(pd_family *f, pid_t watcher_pid, uint64_t start_ticks)
{
        return tr_pidref_open(watcher_pid, start_ticks, &f->watcher);
}

static void arm_watcher(pd_registry *r, pd_family *f)
{
        if (f->watcher.pid <= 0)
                return;
        watch_ctx *w = g_new0(watch_ctx, 1);
        w->r = r;
        w->f = f;
        /* one epoll fd for every watcher: the main loop's cost must not grow with families */
        if (f->watcher.pidfd >= 0 && !r->pid_watch)
                r->pid_watch = pd_pid_watch_new();
        if (f->watcher.pidfd >= 0 && r->pid_watch)
                f->watcher_watch = pd_pid_watch_add(r->pid_watch, f->watcher.pidfd, watcher_exit_cb, w, g_free);
        if (f->watcher_watch)
                return;
        if (f->watcher.pidfd >= 0)
                f->watcher_source = g_unix_fd_add_full(G_PRIORITY_DEFAULT, f->watcher.pidfd, G_IO_IN, watcher_cb,
                                                       w, g_free);
        else
                f->watcher_source = g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, 1, watcher_poll_cb, w, g_free);
}

/* Link a built family into the tree under parent (NULL: the usual placement). */
static void link_family(pd_registry *r, pd_family *f, pd_family *parent)
{
        arm_watcher(r, f);
        f->parent = parent ? parent : find_parent(r, f->root_pid, f->root_start_ticks, ppid_of(f->root_pid), NULL);
        g_ptr_array_add(f->parent->children, f);
        g_hash_table_insert(r->by_root, GINT_TO_POINTER(f->root_pid), f);
        cg_index(r, f, true);
        if (f->root_start_ticks < r->min_root_start)
                r->min_root_start = f->root_start_ticks;
        r->n_sub++;
        account(r, f, true);
        /* the parent loses the new family's members at the next snapshot */
        f->parent->updated_usec = 0;
        update_timer(r);
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
        if (k == -EBUSY && pd_famcg_track_placed(r->fc, rt->pid, rt->ppid, &path, &cg, &perr) == 0) {
                origin = PD_CG_PLACED; /* tracked through the cgroups its root was placed in */
                g_info("family %d: %s; tracked through them", (int) f->root_pid, err.msg);
        } else if (k < 0) {
                f->no_cgroup_reason = strdup(err.msg);
                g_info("family %d: no cgroup of its own: %s", (int) f->root_pid, err.msg);
                return NULL;
        }
        f->cgroup_path = path;
        f->cgroup_origin = origin;
        if (origin == PD_CG_FAMILY)
                f->flags |= PD_FAMILY_MOVED_IN; /* the root moved in with what it had charged */
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

int pd_registry_register(pd_registry *r, pid_t root_pid, pid_t watcher_pid, uint32_t interval_sec,
                         pd_family **out, bool *bad_watcher, tr_error *err)
{
        *bad_watcher = false;
        pd_family *f = family_alloc();
        if (!f)
                return tr_error_set(err, ENOMEM, "out of memory");
        f->root_pid = root_pid;
        f->interval_sec = interval_sec;
        /* what the root is, read once: start time and parent (stat), uid (status, checked
         * by start time), cgroups (for the parent's lookup and its own cgroup) */
        tr_proc p;
        int k = tr_proc_stat_read(root_pid, &p);
        if (k < 0) {
                family_free(f);
                return tr_error_setx(err, -k, "root pid %d", (int) root_pid);
        }
        f->root_start_ticks = p.start_ticks;
        tr_proc_uid_checked(root_pid, f->root_start_ticks, &f->root_uid);
        /* condor_procd's rule: what the root forked before now stays in the parent family */
        if (read_kept(root_pid, f->kept) < 0) {
                family_free(f);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        if (watcher_pid > 0 && (k = open_watcher(f, watcher_pid, 0)) < 0) {
                family_free(f);
                *bad_watcher = true;
                return tr_error_setx(err, -k, "watcher pid %d", (int) watcher_pid);
        }
        tr_pid_cgroups pc = { { 0 } };
        bool have_pc = tr_pid_cgroups_read(r->hs, root_pid, &pc, NULL) >= 0;
        pd_family *parent = find_parent(r, root_pid, p.start_ticks, p.ppid, have_pc ? &pc : NULL);
        pd_famcg_root rt = { root_pid, f->root_start_ticks, p.ppid };
        tr_cgroup *made = give_cgroup(r, f, parent, &rt);
        tr_pid_cgroups_clear(&pc);
        k = build_tracker_with(r, f, made, err);
        if (k < 0) {
                release_cgroup(r, f);
                family_free(f);
                return k;
        }
        link_family(r, f, parent);
        changed(r);
        *out = f;
        return 0;
}

static int dup_opt(char **dst, const char *src)
{
        if (src && !(*dst = strdup(src)))
                return -ENOMEM;
        return 0;
}

/* f's watcher through like's pidfd when like watches the same process (pid + start time,
 * checked when like was restored), else a fresh pidfd.  -ESRCH when gone or reused. */
static int restore_watcher(pd_family *f, const pd_state_family *sf, const pd_family *like)
{
        if (like && like->watcher.pidfd >= 0 && like->watcher.pid == sf->watcher_pid &&
            like->watcher.start_ticks == sf->watcher_start_ticks) {
                f->watcher.pidfd = fcntl(like->watcher.pidfd, F_DUPFD_CLOEXEC, 0);
                if (f->watcher.pidfd >= 0) {
                        f->watcher.pid = like->watcher.pid;
                        f->watcher.start_ticks = like->watcher.start_ticks;
                        return 0;
                }
        }
        return open_watcher(f, sf->watcher_pid, sf->watcher_start_ticks);
}

/* The root's children at registration as saved, those whose pid still names the same
 * process; the others (gone, or the pid reused) are logged.  A /proc family's snapshots
 * drop gone ones without a save, so a child logged here may have gone before the crash. */
static void restore_kept(pd_registry *r, pd_family *f, const pd_state_family *sf)
{
        char dropped[256] = "";
        size_t n_dropped = 0, at = 0;
        for (size_t i = 0; i < sf->n_kept; i++) {
                const pd_state_member *m = &sf->kept[i];
                uint64_t st = 0;
                if (m->pid > 1 && tr_pid_start_ticks(m->pid, &st) == 0 && st == m->start_ticks) {
                        g_array_append_val(f->kept, ((pd_ident) { m->pid, m->start_ticks }));
                        continue;
                }
                n_dropped++;
                if (at < sizeof dropped - 16)
                        at += (size_t) snprintf(dropped + at, sizeof dropped - at, "%s%d", at ? " " : "", (int) m->pid);
                else if (dropped[at - 1] != '.')
                        at += (size_t) snprintf(dropped + at, sizeof dropped - at, " ...");
        }
        if (n_dropped)
                reg_log(r, "family %d: %zu of the children its root had at registration are gone or their pid names "
                           "another process now: dropped (%s)",
                        (int) f->root_pid, n_dropped, dropped);
}

int pd_registry_restore(pd_registry *r, const pd_state_family *sf, tr_cgroup *cg, const pd_family *like,
                        pd_family **out, bool *watcher_gone, tr_error *err)
{
        _cleanup_cgroup_ tr_cgroup *handle = cg;
        *watcher_gone = false;
        if (sf->root_pid <= 1 || (sf->cgroup != NULL) != (cg != NULL))
                return tr_error_set(err, EINVAL, "family %d: bad restore record", (int) sf->root_pid);
        if (g_hash_table_lookup(r->by_root, GINT_TO_POINTER(sf->root_pid)))
                return tr_error_set(err, EEXIST, "pid %d already roots a family", (int) sf->root_pid);
        pd_family *f = family_alloc();
        if (!f)
                return tr_error_set(err, ENOMEM, "out of memory");
        f->root_pid = sf->root_pid;
        f->root_start_ticks = sf->root_start_ticks;
        f->root_uid = sf->root_uid; /* read at registration, as before the restart */
        f->interval_sec = sf->interval_sec;
        f->by_login = sf->login != NULL;
        f->login_uid = sf->login_uid;
        f->by_gid = sf->by_gid;
        f->gid = sf->gid;
        f->gid_allocated = sf->gid_allocated;
        f->flags = (sf->kill_on_watcher_exit ? PD_FAMILY_KILL_ON_WATCHER_EXIT : 0) | (sf->frozen ? PD_FAMILY_FROZEN : 0) |
                   (sf->killing ? PD_FAMILY_KILLING : 0) | (sf->suspending ? PD_FAMILY_SUSPENDING : 0) |
                   (sf->killed ? PD_FAMILY_KILLED : 0) | (sf->moved_in ? PD_FAMILY_MOVED_IN : 0);
        f->cgroup_origin = sf->cgroup && sf->cgroup_origin <= PD_CG_PLACED ? (pd_cgroup_origin) sf->cgroup_origin
                                                                             : PD_CG_HANDED;
        if (dup_opt(&f->cgroup_path, sf->cgroup) < 0 || dup_opt(&f->env_marker, sf->env_marker) < 0 ||
            dup_opt(&f->login_name, sf->login) < 0 || dup_opt(&f->no_cgroup_reason, sf->no_cgroup_reason) < 0) {
                family_free(f);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        if (sf->watcher_pid > 0 && restore_watcher(f, sf, like) < 0) {
                *watcher_gone = true; /* the family is restored; the caller applies the exit rule */
                f->watcher.pid = 0;   /* not armed */
        }
        tr_procfam_spec spec = family_spec(f);
        /* cgroup families: the /proc side is only a fallback with its own scans; /proc
         * families are kept fresh by the registry's shared snapshots */
        spec.max_age_usec = handle ? (uint64_t) f->interval_sec * 1000000u : UINT64_MAX;
        int k = install_tracker(r, f, &spec, TR_TAKE_PTR(handle), err);
        if (k < 0) {
                family_free(f);
                return k;
        }
        if (f->proc_tracked && sf->n_members) {
                /* members found earlier (orphans that left the parent tree included), only
                 * those whose pid still names the same process (the root: checked by the
                 * caller) */
                _cleanup_pidset_ tr_pidset seeds = TR_PIDSET_INIT;
                for (size_t i = 0; i < sf->n_members; i++) {
                        const pd_state_member *m = &sf->members[i];
                        uint64_t st = 0;
                        if ((m->pid == f->root_pid && m->start_ticks == f->root_start_ticks) ||
                            (m->pid != f->root_pid && tr_pid_start_ticks(m->pid, &st) == 0 && st == m->start_ticks))
                                tr_pidset_add(&seeds, m->pid);
                }
                if (seeds.n)
                        tr_procfam_set_seeds(tr_family_procfam(f->tf), &seeds);
        }
        restore_kept(r, f, sf);
        /* the tree as saved: under the root family, or under the saved parent when it was
         * restored (else the usual placement) */
        pd_family *parent = r->root;
        if (sf->parent_root_pid > 0) {
                pd_family *p = g_hash_table_lookup(r->by_root, GINT_TO_POINTER(sf->parent_root_pid));
                parent = p && p->parent ? p : NULL;
        }
        link_family(r, f, parent);
        if (*watcher_gone) {
                f->watcher.pid = sf->watcher_pid;
                f->watcher.start_ticks = sf->watcher_start_ticks;
        }
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
        cg_index(r, f, false);
        if (--r->n_sub == 0)
                r->min_root_start = UINT64_MAX;
        account(r, f, false);
        p->updated_usec = 0; /* members fold into the parent at its next refresh */
        release_cgroup(r, f);
        family_free(f);
        update_timer(r);
        changed(r);
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

/* Whether pid sits in cgroup path or below it (in the hierarchy families are matched by). */
static bool pid_in_cgroup(const tr_hierarchies *hs, pid_t pid, const char *path)
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
                pidset_append(out, &f->last_members);
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
        pre_order(r->root, all);
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
        bool root_inside = pid_in_cgroup(r->hs, f->root_pid, cgroup);
        GArray *failed = g_array_new(FALSE, FALSE, sizeof(pd_ident));
        size_t total = 0;
        for (int round = 0; round < (proc ? 2 : 8); round++) {
                _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
                tr_error merr = { 0 };
                if (own_members(r, f, proc && (round > 0 || !root_inside), &m, &merr) < 0) {
                        reg_log(r, "family %d: listing members to move: %s", (int) f->root_pid, merr.msg);
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
                        reg_log(r, "family %d: %u member(s) could not be moved into %s: %s", (int) f->root_pid,
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
                k = build_tracker(r, f, err);
        if (k < 0) {
                free(f->cgroup_path);
                f->cgroup_path = old;
                f->cgroup_origin = old_origin;
                if (origin == PD_CG_CREATED)
                        pd_famcg_release(r->fc, cgroup, false);
                g_array_free(failed, TRUE);
                update_timer(r);
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
        update_timer(r);
        changed(r);
        return 0;
}

int pd_registry_track_environment(pd_registry *r, pd_family *f, const char *marker, tr_error *err)
{
        char *old = f->env_marker ? strdup(f->env_marker) : NULL;
        int k = set_str(&f->env_marker, marker);
        if (k >= 0)
                k = build_tracker(r, f, err);
        if (k < 0) {
                free(f->env_marker);
                f->env_marker = old;
        } else {
                free(old);
                changed(r);
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
        k = build_tracker(r, f, err);
        if (k < 0) {
                f->by_login = old_by;
                f->login_uid = old_uid;
                free(f->login_name);
                f->login_name = old_name;
        } else {
                free(old_name);
                changed(r);
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
        int k = build_tracker(r, f, err);
        if (k < 0) {
                f->by_gid = old_by;
                f->gid = old;
                f->gid_allocated = old_alloc;
        } else {
                changed(r);
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
        if (family_has_tf_proc(f)) {
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

static void pidset_append(tr_pidset *dst, const tr_pidset *src)
{
        for (size_t i = 0; i < src->n; i++)
                tr_pidset_add(dst, src->pids[i]);
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
        pidset_append(out, excl);
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
        bool child_need = need_members || family_has_tf_proc(f);
        for (guint i = 0; i < f->children->len; i++)
                update_subtree(r, f->children->pdata[i], sm, child_need, now, &excl);
        tr_pidset_normalize(&excl);
        if (family_has_tf_proc(f)) {
                tr_procfam *pf = tr_family_procfam(f->tf);
                _cleanup_pidset_ tr_pidset seeds = TR_PIDSET_INIT;
                left_behind(&r->scan, &excl, &seeds);
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
                        reg_log(r, "family %d: update from snapshot: %s", (int) f->root_pid, strerror(-k));
                _cleanup_pidset_ tr_pidset now_members = TR_PIDSET_INIT;
                tr_procfam_members(pf, &now_members, NULL);
                tr_pidset_normalize(&now_members);
                if (f->parent && !pidset_equal(&now_members, &f->last_members))
                        r->members_changed = true; /* saved: restored as seeds after a restart */
                pidset_swap(&f->last_members, &now_members);
                f->updated_usec = now;
        } else if (f->tf && need_members) {
                tr_pidset_clear(&f->last_members);
                tr_family_members(f->tf, &f->last_members, NULL);
                tr_pidset_normalize(&f->last_members);
        }
        if (subtree) {
                pidset_append(subtree, &excl);
                pidset_append(subtree, &f->last_members);
        }
}

int pd_registry_snapshot(pd_registry *r, tr_error *err)
{
        scan_markers sm = { .n = 0 };
        collect_scan_wants(r->root, &sm);
        if (sm.overflow)
                reg_log(r, "more than %d distinct environment markers: the rest are not matched",
                        TR_SCAN_MAX_MARKERS);
        tr_scan_opts opts = { .want = sm.want, .env_markers = sm.m, .n_markers = sm.n };
        int k = tr_scan_take(&r->scan, &opts, err);
        if (k < 0)
                return k;
        uint64_t now = tr_now_usec();
        r->members_changed = false;
        update_subtree(r, r->root, &sm, false, now, NULL);
        r->last_snapshot_usec = now;
        if (r->members_changed)
                changed(r);
        return 0;
}

int pd_registry_ensure_fresh(pd_registry *r, pd_family *f, tr_error *err)
{
        if (!family_has_tf_proc(f))
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
                pidset_append(out, &f->last_members);
                return 0;
        }
        return tr_family_members(f->tf, out, err);
}

static void post_order(pd_family *f, GPtrArray *out)
{
        for (guint i = 0; i < f->children->len; i++)
                post_order(f->children->pdata[i], out);
        g_ptr_array_add(out, f);
}

static void pre_order(pd_family *f, GPtrArray *out)
{
        g_ptr_array_add(out, f);
        for (guint i = 0; i < f->children->len; i++)
                pre_order(f->children->pdata[i], out);
}

void pd_registry_subtree(pd_family *f, GPtrArray *out) { post_order(f, out); }
void pd_registry_all(pd_registry *r, GPtrArray *out) { pre_order(r->root, out); }

/* Whether pid's cgroup (as /proc/PID/cgroup names it) is f's cgroup or below it, in the
 * hierarchy holds_index names. */
static bool cgroup_holds(pd_family *f, const tr_pid_cgroups *pc)
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
static pd_family *cgroup_family_of(pd_registry *r, const tr_pid_cgroups *pc)
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
                                if (c && cgroup_holds(c, pc)) {
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
        post_order(r->root, all);
        for (guint i = 0; i < all->len && !found; i++) {
                pd_family *c = all->pdata[i];
                if (c->tf && !c->proc_tracked && cgroup_holds(c, pc))
                        found = c;
        }
        return found;
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
        post_order(r->root, all);
        pd_family *found = NULL;
        for (guint i = 0; i < all->len && !found; i++) {
                pd_family *c = all->pdata[i];
                if (!c->tf)
                        continue;
                if (!c->proc_tracked) {
                        if (have_pc && cgroup_holds(c, &pc))
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

const char *pd_family_tracking(const pd_family *f, char *buf, size_t size)
{
        size_t off = 0;
        buf[0] = '\0';
#define APPEND(...)                                                                             \
        do {                                                                                    \
                int n_ = snprintf(buf + off, size > off ? size - off : 0, "%s", off ? "," : ""); \
                if (n_ > 0)                                                                     \
                        off += (size_t) n_;                                                     \
                n_ = snprintf(buf + off, size > off ? size - off : 0, __VA_ARGS__);             \
                if (n_ > 0)                                                                     \
                        off += (size_t) n_;                                                     \
        } while (0)
        char placed[400];
        if (f->cgroup_path && f->cgroup_origin == PD_CG_PLACED)
                APPEND("placed:%s", pd_famcg_placed_label(f->tf ? tr_cgroup_hierarchies(tr_family_cgroup(f->tf)) : NULL,
                                                          f->cgroup_path, placed, sizeof placed));
        else if (f->cgroup_path)
                APPEND("cgroup:%s", f->cgroup_path);
        if (f->env_marker)
                APPEND("environment:%s", f->env_marker);
        if (f->by_login)
                APPEND("login:%s", f->login_name ? f->login_name : "?");
        if (f->by_gid)
                APPEND("gid:%u", (unsigned) f->gid);
        if (!f->cgroup_path)
                APPEND("parent");
#undef APPEND
        return buf;
}

const char *pd_family_source(const pd_family *f)
{
        if (!f->tf)
                return "none";
        return tr_family_primary_name(f->tf);
}
