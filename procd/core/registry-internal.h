/* registry-internal.h - what the registry's files share (callers use registry.h).
 *
 *   registry.c          the table: families by root pid, lifetime, hooks, flags, walks
 *   registry-tree.c     placement, registration, folding at unregistration, cgroup lookup
 *   registry-track.c    tracking methods made into each family's tr_family; cgroup index
 *   registry-members.c  /proc membership: the shared snapshot, its timer, family_of
 *   registry-watch.c    watchers (tr_pidref; pidfds in the pid-watch set, else polled)
 *   registry-restore.c  families re-created from state-file records
 *
 * Arrows: tree, members, watch and restore use track (a family's tracker) and the table;
 * track uses members only through the public snapshot.  Single-threaded (GLib main loop).
 */
#pragma once

#include "registry.h"

struct pd_registry {
        const tr_hierarchies *hs;
        pd_famcg *fc;             /* family cgroups (not owned), NULL: none */
        pd_pid_watch *pid_watch;  /* the watchers' pidfds, made at the first watcher */
        pd_fd_mux *fd_mux;        /* where pid_watch's epoll fd goes (not owned), NULL: a source */
        pd_fd_mux_entry *watcher_poll; /* without pidfds: the timer polling every watcher (fd_mux) */
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
        unsigned saves_held;      /* pd_registry_hold_saves depth */
        bool save_due;            /* a change while held: the hook runs at the flush */
        pd_registry_watcher_fn watcher_exit;
        void *watcher_exit_data;
        pd_registry_family_fn family_hook; /* events (event-watch.c) */
        void *family_hook_data;
        bool members_changed;     /* set by a snapshot */
        tr_cg_budget *cg_budget;  /* the family cgroups kept awake (made at the first use) */
        GHashTable *member_of;    /* pid -> root pid of the /proc subfamily whose last
                                     snapshot holds it (checked against that family) */
};

/* ---- the table (registry.c) ---------------------------------------------------------- */

/* After every change worth persisting: the changed hook. */
void pd_reg_changed(pd_registry *r);
/* The family hook (events), when one is set. */
void pd_reg_family_changed(pd_registry *r, pd_family *f, pd_family_change what);
/* Through the log hook (else g_message). */
void pd_reg_log(pd_registry *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An empty family (no watcher, empty arrays); NULL when out of memory. */
pd_family *pd_reg_family_alloc(void);
/* Its watcher, tracker, arrays and strings; not its subfamilies. */
void pd_reg_family_free(pd_family *f);

static inline bool pd_reg_has_proc_tracker(const pd_family *f) { return f->tf && f->proc_tracked; }

/* ---- tracking methods (registry-track.c) -------------------------------------------- */

/* Counters behind the timer rule, kept per change (no tree walk per registration). */
void pd_reg_account(pd_registry *r, pd_family *f, bool add);
/* The /proc spec of f's tracking methods. */
tr_procfam_spec pd_reg_family_spec(const pd_family *f);
/* Add f to (or drop it from) the index of cgroup families. */
void pd_reg_cg_index(pd_registry *r, pd_family *f, bool add);
/* Build (or rebuild) f's tr_family from its tracking methods.  made: the handle of the
 * cgroup procd just made for f (taken), NULL to open f->cgroup_path. */
int pd_reg_build_tracker(pd_registry *r, pd_family *f, tr_cgroup *made, tr_error *err);
/* The same for a family whose root's cgroups the caller read while the root was still
 * f's root (a start-time check after the read): a handed cgroup is opened from root_pc,
 * without reading them and the start time again.  root_pc NULL: as pd_reg_build_tracker. */
int pd_reg_build_tracker_seen(pd_registry *r, pd_family *f, tr_cgroup *made, const tr_pid_cgroups *root_pc,
                              tr_error *err);
/* Whether pid sits in cgroup path or below it (in the hierarchy families are matched by). */
bool pd_reg_pid_in_cgroup(const tr_hierarchies *hs, pid_t pid, const char *path);
/* Give f the tracker of spec and cg (taken, may be NULL: /proc). */
int pd_reg_install_tracker(pd_registry *r, pd_family *f, const tr_procfam_spec *spec, tr_cgroup *cg,
                           tr_error *err);

/* ---- placement (registry-tree.c) ---------------------------------------------------- */

/* Link a built family into the tree under parent (NULL: the usual placement). */
void pd_reg_link_family(pd_registry *r, pd_family *f, pd_family *parent);
/* Whether a process with cgroups pc sits in f's cgroup or below it. */
bool pd_reg_cgroup_holds(pd_family *f, const tr_pid_cgroups *pc);
/* The deepest cgroup family holding a process with cgroups pc, or NULL. */
pd_family *pd_reg_cgroup_family_of(pd_registry *r, const tr_pid_cgroups *pc);

/* ---- membership (registry-members.c) ------------------------------------------------ */

/* The snapshot timer at the smallest interval of the /proc-tracked subfamilies (or off). */
void pd_reg_update_timer(pd_registry *r);
/* condor_procd keeps a member until it exits: from's members now (its root, its last
 * snapshot's members or its cgroup's, its strays; pid + start time) are handed to to, a
 * /proc family, as seeds of its next snapshot (to's refresh is due at once).  Used when
 * from folds into to at unregistration, and (from == to) before a /proc family's tracker
 * is rebuilt, whose new walk would otherwise lose orphans that match no method. */
void pd_reg_carry_members(pd_registry *r, const pd_family *from, pd_family *to);
/* The /proc subfamily whose last snapshot holds pid with that start time (condor_procd's
 * member table), or NULL (none, or only the root family). */
pd_family *pd_reg_proc_family_holding(pd_registry *r, pid_t pid, uint64_t start_ticks);

/* ---- watchers (registry-watch.c) ---------------------------------------------------- */

/* f->watcher opened (start_ticks 0: read it now); -ESRCH when gone or reused. */
int pd_reg_open_watcher(pd_family *f, pid_t watcher_pid, uint64_t start_ticks);
/* Its pidfd in the pid-watch set (or a GLib source; polled without a pidfd). */
void pd_reg_arm_watcher(pd_registry *r, pd_family *f);
