/* registry.h - the daemon's tree of families.
 *
 * The root family is procd's parent (or --root-pid); every registered subfamily has a root
 * process (pid + start time), an optional watcher (a pidfd in the GLib main loop: its exit
 * unregisters the family; only where pidfd_open is missing - kernel < 5.3, valgrind - is
 * it checked once a second by start time), a max snapshot interval, a parent family and its tracking
 * methods.  Each family owns a tr_family (trackers/tracker.h) doing the real work.
 *
 * /proc snapshots: one shared tr_scan feeds every /proc-tracked family
 * (tr_procfam_update, exclude = the members of its subfamilies).  The periodic snapshot
 * timer runs only while some registered subfamily is tracked by /proc, at the smallest
 * interval asked; cgroup-tracked families need none (their usage is read fresh per call).
 * A /proc family whose data is older than its interval is refreshed by a shared snapshot
 * on demand before it answers.
 *
 * Placement (condor_procd's): a new subfamily's parent is the family that holds its root:
 * the /proc subfamily whose last snapshot lists it (or lists its nearest listed ancestor),
 * else the nearest registered family whose root is an ancestor of the new root (parent
 * tree), but that family's parent when the path passes through a child it kept at
 * registration (below), else the root family.  So a family registered at or below a member
 * orphaned out of a family whose root died goes under that family.
 *
 * One rule for both kinds of family (condor_procd's): REGISTER takes only the root; the
 * descendants it had then stay in the parent family (the root's children are recorded at
 * registration, f->kept), and what the root forks afterwards is the new family's.  With
 * family cgroups (family-cgroup.h) the new family gets a cgroup of its own inside its
 * parent's and only the root moves into it.  A /proc-tracked family excludes the recorded
 * children (and so their subtrees) from its walk, and a /proc parent gets them back as
 * seeds.  Unregistering folds members and subfamilies into the parent and removes the
 * cgroup procd made once it is empty.
 *
 * Membership (condor_procd's): a member of a /proc family stays one until it exits, also
 * when orphaned, when a new tracking method rebuilds the family's tracker (its members are
 * carried into the new one), or when its subfamily is unregistered (its members, the
 * orphaned root included, are carried into the parent).
 *
 * Single-threaded: everything runs in the GLib main loop.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "procd/core/family-cgroup.h"
#include "procd/core/fd-mux.h"
#include "procd/core/pid-watch.h"
#include "trackers/hierarchy.h"
#include "trackers/pidref.h"
#include "trackers/pidset.h"
#include "trackers/procscan.h"
#include "trackers/tracker.h"

typedef struct pd_family pd_family;

typedef enum pd_cgroup_origin {
        PD_CG_HANDED = 0, /* named by TrackFamilyViaCgroup, existed: never removed by procd */
        PD_CG_CREATED,    /* named by TrackFamilyViaCgroup, made by procd: removed when empty */
        PD_CG_FAMILY,     /* made at RegisterSubfamily (with its leaf): removed when empty */
        PD_CG_PLACED,     /* the cgroups another manager placed the root in (issue 16):
                             cgroup_path holds them as /proc/PID/cgroup lines
                             (pd_famcg_track_placed); read, never acted on nor removed */
} pd_cgroup_origin;
/* procd made the cgroup (and removes it once empty). */
static inline bool pd_cgroup_made_by_procd(pd_cgroup_origin o) { return o == PD_CG_CREATED || o == PD_CG_FAMILY; }
typedef struct pd_registry pd_registry;

/* Read-only for everything but the registry's files (registry*.c). */
struct pd_family {
        pid_t root_pid;           /* 0 never; the root family's root may be 1 (no tracker) */
        uint64_t root_start_ticks;
        uid_t root_uid;           /* last seen real uid of the root process */
        tr_pidref watcher;        /* pid 0: no watcher; pidfd -1 without pidfd_open: then
                                     polled by start time */
        guint watcher_source;     /* a pidfd without pid_watch: a GLib source */
        bool watcher_polled;      /* no pidfd: the registry's one poll timer checks it */
        pd_pid_watch_entry *watcher_watch; /* the pidfd in the registry's pid-watch set */
        uint32_t interval_sec;    /* max snapshot interval */
        pd_family *parent;        /* NULL for the root family */
        GPtrArray *children;      /* pd_family *, not owned */

        /* tracking methods (the /proc spec; the cgroup when attached) */
        char *cgroup_path;        /* NULL: not cgroup-tracked */
        pd_cgroup_origin cgroup_origin; /* who made cgroup_path */
        char *no_cgroup_reason;   /* why RegisterSubfamily gave it no cgroup (NULL: it has one) */
        GArray *strays;           /* pd_ident: members TrackFamilyViaCgroup could not move */
        GArray *kept;             /* pd_ident: the root's children at registration; they and
                                     their descendants stay in the parent family */
        GArray *carry;            /* pd_ident: members handed over (an unregistered
                                     subfamily's, or its own before its tracker was rebuilt):
                                     seeds of a /proc family at its next snapshot */
        char *env_marker;         /* "NAME=VALUE" or NULL */
        bool by_login;
        uid_t login_uid;
        char *login_name;
        bool by_gid;
        gid_t gid;
        bool gid_allocated;       /* gid came from --gid-range (released on unregister) */

        tr_family *tf;            /* NULL only for a root family whose root is pid 1 */
        bool proc_tracked;        /* answered by the /proc tracker (no cgroup) */
        uint64_t updated_usec;    /* last shared-snapshot update (proc_tracked), 0: never */
        tr_pidset last_members;   /* from the last snapshot (normalized) */
        bool counted, counted_proc; /* registry bookkeeping for the timer rule */
        bool seeded;              /* its /proc side holds seeds left behind by subfamilies */
        char *cg_key;             /* its key in the registry's cgroup index, NULL: not in it */
        bool cg_key_dup;          /* another family holds that key */
        uint32_t counted_interval;

        /* kept across restarts (procd/core/state.h) */
        unsigned flags;            /* PD_FAMILY_* */
        tr_exe_id moved_exe;       /* PD_FAMILY_MOVED_IN at REGISTER: the file the root ran
                                      when procd moved it (moved_exe_known) */
        bool moved_exe_known;
};

enum {
        PD_FAMILY_KILL_ON_WATCHER_EXIT = 1u << 0, /* watcher exit kills, removes the cgroup */
        PD_FAMILY_FROZEN = 1u << 1,               /* SuspendFamily asked, no ContinueFamily since */
        PD_FAMILY_KILLING = 1u << 2,              /* a KillFamily is in progress */
        PD_FAMILY_SUSPENDING = 1u << 3,           /* a SuspendFamily is in progress */
        PD_FAMILY_KILLED = 1u << 4,               /* a KillFamily was asked (Dump: "killed" once
                                                     done; kept across a restart since state
                                                     format version 2) */
        PD_FAMILY_MOVED_IN = 1u << 5,             /* procd moved processes into its cgroup
                                                     (REGISTER's root, TrackFamilyViaCgroup,
                                                     AdoptProcess) after they had allocated
                                                     elsewhere: their memory charge stayed
                                                     behind (family-usage.h) */
};

typedef void (*pd_registry_log_fn)(void *userdata, const char *message);

/* root_pid: the root family's root (procd's parent by default). */
int pd_registry_new(const tr_hierarchies *hs, pid_t root_pid, uint32_t root_interval_sec,
                    pd_registry **out, tr_error *err);
/* Family cgroups (not owned; NULL: none).  Set before the first registration. */
void pd_registry_set_family_cgroups(pd_registry *r, pd_famcg *fc);
pd_famcg *pd_registry_family_cgroups(const pd_registry *r);
/* The cgroup hierarchies the registry was made with (discovered once, at start-up). */
const tr_hierarchies *pd_registry_hierarchies(const pd_registry *r);
void pd_registry_free(pd_registry *r);

pd_family *pd_registry_root(pd_registry *r);
/* The family whose root is pid (0: the root family); NULL when none. */
pd_family *pd_registry_find(pd_registry *r, pid_t root_pid);
size_t pd_registry_count(const pd_registry *r); /* registered subfamilies */

/* Register a subfamily (checks done by the caller: pid > 1, not registered, not procd or
 * its ancestor).  root_stat: the root's /proc/PID/stat as the caller read it for those
 * checks (NULL: read it here).  watcher_pid 0: no watcher.  -ESRCH when root or watcher is
 * gone (*bad_watcher says which). */
int pd_registry_register(pd_registry *r, pid_t root_pid, const tr_proc *root_stat, pid_t watcher_pid,
                         uint32_t interval_sec, pd_family **out, bool *bad_watcher, tr_error *err);
/* The same, for a root already placed in a cgroup of its own (RegisterJob): when the root
 * sits in cgroup (or below it), the family is tracked through it as handed
 * (TrackFamilyViaCgroup's PD_CG_HANDED: nothing moved, no cgroup made) and *in_cgroup is
 * set; else registered as above (the caller then moves it with track_cgroup).  flags
 * (PD_FAMILY_*) are set before the family is first saved. */
int pd_registry_register_in(pd_registry *r, pid_t root_pid, const tr_proc *root_stat, pid_t watcher_pid,
                            uint32_t interval_sec, const char *cgroup, unsigned flags, pd_family **out, bool *in_cgroup,
                            bool *bad_watcher, tr_error *err);
/* Fold f's members and subfamilies into its parent and free it.  -EINVAL for the root. */
int pd_registry_unregister(pd_registry *r, pd_family *f);

/* Tracking methods: rebuild f's tr_family with the new method added.
 * track_cgroup first moves every current member of f (not of its subfamilies) into the
 * cgroup, making it when it does not exist; members that cannot be moved are kept in
 * f->strays (KillFamily still kills them). */
int pd_registry_track_cgroup(pd_registry *r, pd_family *f, const char *cgroup, tr_error *err);
/* The family (other than f) whose cgroup is exactly path, or NULL. */
pd_family *pd_registry_cgroup_owner(pd_registry *r, const char *path, const pd_family *f);
int pd_registry_track_environment(pd_registry *r, pd_family *f, const char *marker, tr_error *err);
int pd_registry_track_login(pd_registry *r, pd_family *f, const char *login, uid_t uid, tr_error *err);
int pd_registry_track_gid(pd_registry *r, pd_family *f, gid_t gid, bool allocated, tr_error *err);
/* Whether some family tracks gid. */
bool pd_registry_gid_in_use(pd_registry *r, gid_t gid);

/* One shared /proc scan, every /proc-tracked family updated (subfamilies first). */
int pd_registry_snapshot(pd_registry *r, tr_error *err);
/* Snapshot when f is /proc-tracked and its data is older than its interval. */
int pd_registry_ensure_fresh(pd_registry *r, pd_family *f, tr_error *err);
/* f's cgroup was used (registered, usage read): its fds stay open among the families used
 * last, a bounded set (tr_cg_budget: an eighth of the fd limit); the family used least
 * recently beyond it rests (tr_cgroup_rest: no fd until its next use). */
void pd_registry_cg_touch(pd_registry *r, pd_family *f);

/* Current members of f (cgroup: read now; /proc: the last snapshot). */
int pd_registry_members(pd_registry *r, pd_family *f, tr_pidset *out, tr_error *err);
/* The most specific family holding pid (the root family included), or NULL.  cgroup
 * families match by pid's cgroup path, /proc families by the last snapshot. */
pd_family *pd_registry_family_of(pd_registry *r, pid_t pid);

/* f and its subfamilies, subfamilies first (post-order). */
void pd_registry_subtree(pd_family *f, GPtrArray *out);
/* Every family, the root first (pre-order). */
void pd_registry_all(pd_registry *r, GPtrArray *out);

/* "cgroup:/jobs/job_42", "environment:K=V", "login:alice", "gid:5012", "parent";
 * several methods joined by ','. */
const char *pd_family_tracking(const pd_family *f, char *buf, size_t size);
/* Which tracker answers: "cgroup", "proc", "none". */
const char *pd_family_source(const pd_family *f);

/* Where registry events (watcher exits, fallback reasons) are logged. */
void pd_registry_set_log(pd_registry *r, pd_registry_log_fn fn, void *userdata);

/* Called after every change worth persisting (registration, tracking, unregistration,
 * flags, a /proc family's membership after a snapshot): procd saves its state file. */
typedef void (*pd_registry_changed_fn)(void *userdata);
void pd_registry_set_changed_hook(pd_registry *r, pd_registry_changed_fn fn, void *userdata);
/* Changes made between hold and release call the hook once, at the release, or earlier at
 * a flush: whoever answers a client while holding flushes first, so that an answer never
 * goes out before the change it reports is saved.  Nested holds count. */
void pd_registry_hold_saves(pd_registry *r);
void pd_registry_flush_saves(pd_registry *r);
void pd_registry_release_saves(pd_registry *r);
/* procd's fd set (fd-mux.h, not owned) the watchers' epoll fd joins instead of a main loop
 * source of its own; set before the first registration.  The getter gives it to the set's
 * other users (event-watch.c, the classic server, D-Bus connections). */
void pd_registry_set_fd_mux(pd_registry *r, pd_fd_mux *mux);
pd_fd_mux *pd_registry_fd_mux(const pd_registry *r);
/* Called instead of the default (unregister) when a family's watcher exits. */
typedef void (*pd_registry_watcher_fn)(void *userdata, pd_family *f);
void pd_registry_set_watcher_hook(pd_registry *r, pd_registry_watcher_fn fn, void *userdata);
/* What happened to a family, for the events (procd/core/event-watch.c): registered,
 * restored from the state file, given another cgroup (TrackFamilyViaCgroup), about to be
 * unregistered (f still valid), a /proc family whose members a snapshot found all gone. */
typedef enum pd_family_change {
        PD_FAMILY_REGISTERED,
        PD_FAMILY_RESTORED,
        PD_FAMILY_RETRACKED,
        PD_FAMILY_REMOVED,
        PD_FAMILY_EMPTIED,
} pd_family_change;
typedef void (*pd_registry_family_fn)(void *userdata, pd_family *f, pd_family_change what);
void pd_registry_set_family_hook(pd_registry *r, pd_registry_family_fn fn, void *userdata);
/* PD_FAMILY_MOVED_IN of a family whose root procd moved at REGISTER goes once the root has
 * exec'd (family-usage.h); true while it stays. */
bool pd_registry_moved_in(pd_registry *r, pd_family *f);
/* Set or clear PD_FAMILY_* flags (they survive a restart); a change calls the changed hook. */
void pd_registry_set_flag(pd_registry *r, pd_family *f, unsigned flag, bool on);

/* Re-create a family from a state-file record (procd/core/restore.c).  The caller has checked
 * the root's identity (pid + start time, read after anything else it read about the root)
 * and, for a cgroup family, opened and checked its cgroup: cg (taken; NULL for a /proc
 * family).  The watcher is re-armed through a pidfd (a duplicate of like's when like, a
 * family restored before, watches the same process; *watcher_gone when it exited meanwhile
 * or its pid names another process: the caller applies the watcher-exit rule);
 * seeds for a /proc family from members still alive with the same start time; the root's
 * children at registration (f->kept) those still alive with the same start time, the
 * others logged and dropped; the uid is
 * the saved one (read at registration).  The parent is the root family when the record
 * says so, the restored family rooted at parent_root_pid, else the usual placement. */
struct pd_state_family;
int pd_registry_restore(pd_registry *r, const struct pd_state_family *sf, tr_cgroup *cg, const pd_family *like,
                        pd_family **out, bool *watcher_gone, tr_error *err);

/* Start time of pid in the last shared snapshot (0: not in it). */
uint64_t pd_registry_snapshot_start_ticks(const pd_registry *r, pid_t pid);
/* What a watcher exit does: the watcher hook when one is set, else unregister. */
void pd_registry_watcher_exited(pd_registry *r, pd_family *f);

/* The interval the snapshot timer runs at now (0: not running). */
uint32_t pd_registry_timer_interval(const pd_registry *r);
