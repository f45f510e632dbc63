/* cgroup.h - a family's cgroup handle: one O_PATH|O_DIRECTORY|O_NOFOLLOW dirfd per
 * hierarchy where the cgroup exists, hot counter files kept open and pread().
 *
 * On hybrid hosts a family lives in the v2 tree (membership, kill, freeze, cpu.stat, PSI)
 * and in v1 trees (memory, pids, cpuacct, freezer, blkio) at once; each field comes from the
 * best place.  ENOENT/ENODEV from a cgroup that vanished is reported, never fatal.
 *
 * Safety: every destructive operation (signal, kill, freeze, destroy) refuses a handle
 * without TR_CG_MAY_ACT, a hierarchy root, and a cgroup that holds the caller (-EPERM).
 * attach and write need TR_CG_MAY_ACT too.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "hierarchy.h"
#include "pidset.h"
#include "usage.h"

typedef struct tr_cgroup tr_cgroup;

enum {
        TR_CG_MAY_ACT = 1u << 0, /* we created it or were handed it: may signal/kill/freeze */
        TR_CG_OWNED = 1u << 1,   /* we created it: destroy may rmdir it */
};

/* Open the cgroup `path` (as /proc/PID/cgroup names it, e.g. "/jobs/job_42") in every
 * hierarchy where it exists.  -ENOENT when it exists in none; -EINVAL for a path that is
 * not absolute or holds "..". */
int tr_cgroup_open(const tr_hierarchies *hs, const char *path, unsigned flags, tr_cgroup **out,
                   tr_error *err);

/* Hierarchy masks: bit i stands for hs->h[i]. */
#define TR_HIER_ALL UINT32_MAX

/* tr_cgroup_open limited to the hierarchies of hier_mask. */
int tr_cgroup_open_in(const tr_hierarchies *hs, const char *path, uint32_t hier_mask, unsigned flags,
                      tr_cgroup **out, tr_error *err);

/* A second handle on src's cgroup, with flags of its own: src's directory fds duplicated
 * (no path walked again), its paths copied. */
int tr_cgroup_open_same(const tr_cgroup *src, unsigned flags, tr_cgroup **out, tr_error *err);

/* Move from's hierarchies that into has no cgroup in into into (one handle on a cgroup made
 * in parts: a child made from one parent handle in some hierarchies, by path in others).
 * from is freed either way; -EINVAL when the two handles differ in hierarchies or flags. */
int tr_cgroup_join(tr_cgroup *into, tr_cgroup *from, tr_error *err);

/* Open pid's most-specific cgroup in every hierarchy (paths may differ per hierarchy). */
int tr_cgroup_open_pid(const tr_hierarchies *hs, pid_t pid, unsigned flags, tr_cgroup **out,
                       tr_error *err);

/* Like tr_cgroup_open, but in each hierarchy where pid's cgroup is `path` or below it, use
 * pid's most-specific cgroup there; elsewhere `path` itself; where the hierarchy holds
 * neither, leave it out.  (TrackFamilyViaCgroup's lookup rule.) */
int tr_cgroup_open_for_pid(const tr_hierarchies *hs, const char *path, pid_t pid, unsigned flags,
                           tr_cgroup **out, tr_error *err);
/* Many cgroups opened one after another, most of them siblings (a restarted daemon reopens
 * its families): an opener keeps the last parent directory of each hierarchy open, so that
 * each open is a lookup of one name.  A handle opened through it is opened now only in its
 * first hierarchy that has the cgroup (v2 first, as tr_cgroup_primary_index): that proves
 * the cgroup exists; its other hierarchies keep their path and are opened on first use
 * (tr_cgroup_dirfd and every operation; one gone by then is left out, as a hierarchy the
 * cgroup was never made in).  Not thread-safe; free it when done (the handles stay valid). */
typedef struct tr_cg_opener tr_cg_opener;
tr_cg_opener *tr_cg_opener_new(const tr_hierarchies *hs);
void tr_cg_opener_free(tr_cg_opener *o);

/* tr_cgroup_open_for_pid with pid's cgroups already read (pc, from tr_pid_cgroups_read;
 * NULL: tr_cgroup_open of path), through opener o when not NULL; what names the cgroup in
 * the error when it exists in no hierarchy (NULL: path). */
int tr_cgroup_open_for_cgroups(const tr_hierarchies *hs, tr_cg_opener *o, const char *path, const tr_pid_cgroups *pc,
                               const char *what, unsigned flags, tr_cgroup **out, tr_error *err);

/* mkdir -p `path` in the v2 hierarchy and in every v1 hierarchy with controllers (and
 * name=systemd), enabling in each v2 parent's cgroup.subtree_control the controllers its
 * cgroup.controllers offers (v2 rule: top-down, as far as offered).  Already existing is
 * fine.  The handle gets TR_CG_MAY_ACT|TR_CG_OWNED.
 *
 * v2 no-internal-processes rule: processes live only in leaves.  A non-root parent on the
 * path that holds processes, and gets controllers enabled for its children here, first has
 * its processes moved into its child TR_CG_LEAF. */
#define TR_CG_LEAF "leaf"
int tr_cgroup_create(const tr_hierarchies *hs, const char *path, tr_cgroup **out, tr_error *err);
/* tr_cgroup_create limited to the hierarchies of hier_mask (the handle holds only those). */
int tr_cgroup_create_in(const tr_hierarchies *hs, const char *path, uint32_t hier_mask, tr_cgroup **out,
                        tr_error *err);

/* Make the child cgroup `name` (one path component) of an open handle, relative to its
 * dirfds (no walk from the mount point), in each hierarchy of hier_mask the parent is in.
 * v2: when enable_in_parent, the controllers the parent's cgroup.controllers offers are
 * enabled in its subtree_control first, as tr_cgroup_create does (its processes moved into
 * its TR_CG_LEAF first); without it the child gets no controllers of its own (a leaf that
 * only holds processes: usage is read from the parent).  v1 cpuset: filled.  Existing is
 * fine.  Needs TR_CG_MAY_ACT on parent; the handle gets TR_CG_MAY_ACT|TR_CG_OWNED.  On
 * failure directories made in other hierarchies stay (the caller removes them). */
int tr_cgroup_create_child(tr_cgroup *parent, const char *name, uint32_t hier_mask, bool enable_in_parent,
                           tr_cgroup **out, tr_error *err);

void tr_cgroup_free(tr_cgroup *cg);

/* Rest: close every fd the handle holds (dirfds, counter files, descendants kept open, the
 * v2 O_RDONLY fd) and keep what names it: each hierarchy's path and its directory's inode.
 * Any use opens what it needs again (one open and fstat per hierarchy, then the counter
 * files), and only the directory it was: a cgroup removed, or made again at the path,
 * since is a hierarchy the handle is not in any more. */
void tr_cgroup_rest(tr_cgroup *cg);

/* A bound on the fds that handles keep open: the max_awake handles used last (touched)
 * keep theirs, the one used least recently beyond that goes to rest.  A handle once
 * touched keeps its budget as its home: whatever use opens it again after rest (a freeze,
 * a kill, a member listing, not only the touched paths) puts it back in that budget, so
 * the bound holds for every request.  Not thread-safe.  Handles unlink themselves at rest
 * and at free; free the budget after its handles, or they keep a pointer to it. */
typedef struct tr_cg_budget tr_cg_budget;
tr_cg_budget *tr_cg_budget_new(size_t max_awake);
void tr_cg_budget_free(tr_cg_budget *b);
/* cg was used: first in b's list (added when not in it); the last beyond max_awake rests. */
void tr_cg_budget_touch(tr_cg_budget *b, tr_cgroup *cg);
size_t tr_cg_budget_awake(const tr_cg_budget *b);
/* max_awake for a process whose open-file limit is nofile: an eighth of the fds for awake
 * handles at about 12 fds each (a hybrid family polled: 4 dirfds, 6 counter files, a leaf
 * kept open with its cgroup.procs), at least 4, at most 1,024. */
size_t tr_cg_budget_max_for(unsigned long nofile);

static inline void tr_cgroup_freep(tr_cgroup **cg)
{
        if (*cg)
                tr_cgroup_free(*cg);
}
#define _cleanup_cgroup_ __attribute__((cleanup(tr_cgroup_freep)))

const tr_hierarchies *tr_cgroup_hierarchies(const tr_cgroup *cg);
/* Path in hierarchy i ("/jobs/job_42"), NULL when the cgroup is not in that hierarchy (for
 * one a handle left for later: the path it is opened at, until a use finds it gone). */
const char *tr_cgroup_path(const tr_cgroup *cg, int i);
/* The hierarchy a cgroup is matched in (membership, nesting): v2 when it has a path there,
 * else its first hierarchy; -1 when it is in none. */
int tr_cgroup_primary_index(const tr_cgroup *cg);
/* The O_PATH dirfd in hierarchy i, or -1.  Owned by the handle.  (A hierarchy a handle
 * left for later is opened here; gone there: -1, and its path drops out.) */
int tr_cgroup_dirfd(tr_cgroup *cg, int i);
/* An O_RDONLY|O_DIRECTORY fd of the v2 cgroup for clone3(CLONE_INTO_CGROUP), or -1 when
 * there is no v2 cgroup.  Owned by the handle. */
int tr_cgroup_v2_fd(tr_cgroup *cg);

/* Write pid into cgroup.procs of every hierarchy of the handle.  Needs TR_CG_MAY_ACT
 * (-EPERM); unlike the destructive operations it may target a cgroup holding the caller.
 * v2: where the cgroup has controllers enabled for children (EBUSY), pid goes into its
 * leaf child TR_CG_LEAF instead (still in the family: members, usage, kill, freeze cover
 * the subtree). */
int tr_cgroup_attach(tr_cgroup *cg, pid_t pid, tr_error *err);
/* tr_cgroup_attach in the hierarchies of hier_mask only (bit i: hs->h[i]). */
int tr_cgroup_attach_in(tr_cgroup *cg, pid_t pid, uint32_t hier_mask, tr_error *err);

/* Write value to file in hierarchy i of the handle (limits: "memory.max", "pids.max"...).
 * Needs TR_CG_MAY_ACT (-EPERM). */
int tr_cgroup_write(tr_cgroup *cg, int i, const char *file, const char *value, tr_error *err);
/* Read file in hierarchy i into buf (NUL-terminated).  Returns length or -errno. */
int tr_cgroup_read(tr_cgroup *cg, int i, const char *file, char *buf, size_t size, tr_error *err);
/* Whether hierarchy i of the handle has file (e.g. "memory.max"). */
bool tr_cgroup_has_file(tr_cgroup *cg, int i, const char *file);

/* Every pid in the cgroup and its descendants, deduplicated (normalized).  The v2 tree is
 * the membership source when present, else the union of the v1 hierarchies.  A child
 * cgroup vanishing mid-walk is not an error. */
int tr_cgroup_members(tr_cgroup *cg, tr_pidset *out, tr_error *err);
/* How many times an owned cgroup's own empty v2 cgroup.procs was not read again, its
 * watch proving it still empty (hs->notify: cgroup-stats.c); for tests. */
unsigned tr_cgroup_own_procs_skipped(const tr_cgroup *cg);

/* Usage from cgroup files; fields it cannot give stay unavailable.  Fails (-ENOENT/-ENODEV)
 * only when the cgroup itself is gone in every hierarchy it had. */
int tr_cgroup_usage(tr_cgroup *cg, tr_usage *out, tr_error *err);
/* The same for the groups of fields in want (enum tr_usage_want) only. */
int tr_cgroup_usage_want(tr_cgroup *cg, unsigned want, tr_usage *out, tr_error *err);

typedef enum tr_freeze_state {
        TR_THAWED = 0,
        TR_FREEZING, /* asked, not confirmed within the bound (a member in D state) */
        TR_FROZEN,
} tr_freeze_state;

const char *tr_freeze_state_name(tr_freeze_state s);

/* Freeze: v2 cgroup.freeze=1 confirmed by "frozen 1" in cgroup.events; else v1
 * freezer.state FROZEN.  Waits up to timeout_usec; *reached says what was reached.
 * -EOPNOTSUPP when no freezer exists for this cgroup. */
int tr_cgroup_freeze(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err);
int tr_cgroup_thaw(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err);

/* Signal every member: freeze first where a freezer exists (no fork escapes between
 * listing and signalling), signal, thaw.  SIGSTOP/SIGCONT keep their meaning. */
int tr_cgroup_signal(tr_cgroup *cg, int sig, tr_error *err);

/* Test seam: when set, called by signal and kill after the members are listed (and their
 * start times read) and before any is signalled, so that a test can free a member's pid and
 * have a stranger take it.  NULL (the default) disables it.  Not for production use. */
typedef void (*tr_cgroup_hook_fn)(void *ud);
void tr_cgroup_set_signal_hook(tr_cgroup_hook_fn fn, void *ud);

typedef struct tr_kill_result {
        bool empty;             /* nothing left in the family */
        unsigned rounds;        /* freeze/kill/thaw rounds (0 with cgroup.kill alone) */
        uint64_t elapsed_usec;
        const char *method;     /* "cgroup.kill", "freeze+kill", "proc spree" (static) */
        tr_pidset survivors;    /* pids still there at the bound (D state...) */
} tr_kill_result;

void tr_kill_result_free(tr_kill_result *r);

/* Kill every member: v2 cgroup.kill when present; otherwise freeze, SIGKILL all, thaw,
 * repeated until empty.  Bounded by timeout_usec; survivors reported, not waited on. */
int tr_cgroup_kill(tr_cgroup *cg, uint64_t timeout_usec, tr_kill_result *res, tr_error *err);

/* populated: v2 cgroup.events, else no pid in cgroup.procs of it and its descendants. */
int tr_cgroup_populated(tr_cgroup *cg, bool *populated, tr_error *err);

/* rmdir the cgroup and its descendants deepest-first in every hierarchy; EBUSY retried with
 * backoff up to timeout_usec; ENOENT is fine.  Needs TR_CG_OWNED or TR_CG_MAY_ACT. */
int tr_cgroup_destroy(tr_cgroup *cg, uint64_t timeout_usec, tr_error *err);
