/* family-cgroup.h - a cgroup of its own for every registered family (issue 7).
 *
 * At RegisterSubfamily procd makes a cgroup for the new family and moves the root process
 * (only the root: descendants it already had stay in the parent family, as condor_procd
 * keeps them) into it, so that a client that never names a cgroup still gets cgroup-exact
 * usage, cgroup.kill and the freezer.  Layout, in the hierarchies procd reads or acts
 * through (pd_famcg_mask, below):
 *
 *   <base>/fam.<pid>.<start>/self              the family's own processes (a leaf; v2 only)
 *   <base>/fam.<pid>.<start>/fam.<pid2>.<s2>/  a subfamily: inside its parent's cgroup, so
 *                                              the parent's usage, kill and freeze include it
 *   <handed>/fam.<pid>.<start>/self            a subfamily of a family tracked through a
 *                                              cgroup it named (TrackFamilyViaCgroup)
 *
 * The family's tracker is the fam.* directory (hierarchical).  In the v2 tree its processes
 * sit in the self leaf, so the no-internal-processes rule holds for every cgroup procd
 * makes; v1 has no such rule, so there they sit in fam.* itself (one mkdir less each).
 *
 * base: --family-cgroup-base, else "<procd's own cgroup>/families" (under systemd with
 * Delegate=yes, a subtree of procd's delegated unit).  procd in a hierarchy's root cgroup
 * has no delegated cgroup of its own: as HTCondor's procd (-A, root) it takes a base of its
 * own (pd_famcg_root_base: /procd-families/<address>), made only in the hierarchies where
 * procd itself sits in the root cgroup (never out of a cgroup its launcher placed it in);
 * otherwise no family gets a cgroup unless a base is given.
 * Where no cgroup can be made the family stays on the /proc tracker and the reason is kept
 * for its usage record.
 *
 * Hierarchies: the v2 tree when mounted (membership, cgroup.kill, cgroup.freeze, cpu.stat
 * and the controllers it offers at the base), and a v1 hierarchy only for what the v2 tree
 * cannot give there: memory, blkio, pids, cpuacct, freezer (and, without v2, the
 * hierarchy families are matched by, name=systemd).  Not cpu, cpuset, devices, net_cls,
 * net_prio, perf_event, hugetlb, rdma, misc: procd reads nothing there, so the root keeps
 * the cgroup its launcher placed it in for those (its limits stay in force), and REGISTER
 * pays no mkdir there (v1 cpuset's cpus/mems writes rebuild the scheduler domains).
 *
 * A family's cgroup is removed at unregister when it is empty; one still holding processes
 * (or a subfamily's cgroup) is retried by a 2 s timer that runs only while such cgroups
 * exist, a bounded number per tick.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "trackers/cgroup.h"
#include "trackers/error.h"
#include "trackers/hierarchy.h"
#include "trackers/pidset.h"
#include "trackers/proc-read.h"

#define PD_FAMCG_LEAF "self"
#define PD_FAMCG_DEFAULT_SUBTREE "families"

typedef struct pd_famcg pd_famcg;

typedef struct pd_famcg_options {
        bool disabled;    /* --no-family-cgroups */
        const char *base; /* --family-cgroup-base; NULL: <procd's own cgroup>/families */
        /* procd in a hierarchy's root cgroup (no delegated cgroup of its own) with no base
         * given: this base of its own (pd_famcg_root_base; NULL: no family cgroups then) */
        const char *root_base;
} pd_famcg_options;

/* The base a procd in a root cgroup takes as HTCondor's procd (issue 19: safe by default,
 * not an environment variable the admin has to know): PD_FAMCG_ROOT_PARENT/<its address,
 * '/' as '-'>, one per daemon (two procds never sweep each other's families) and the same
 * across its restarts (the restore sweep finds what a crash left).  Into buf; NULL when it
 * does not fit. */
#define PD_FAMCG_ROOT_PARENT "/procd-families"
const char *pd_famcg_root_base(const char *address, char *buf, size_t size);
/* Why the base is what it is, for the log (procd in a root cgroup took a base of its own),
 * or NULL. */
const char *pd_famcg_note(const pd_famcg *fc);

/* Resolve and create the base.  Never fails for lack of a base: pd_famcg_off_reason then
 * says why no family gets a cgroup.  -ENOMEM only. */
int pd_famcg_new(const tr_hierarchies *hs, const pd_famcg_options *o, pd_famcg **out);
/* Leaves every cgroup in place (the families' processes live on after procd). */
void pd_famcg_free(pd_famcg *fc);

/* The base ("/system.slice/procd.service/families"), NULL when off or unavailable. */
const char *pd_famcg_base(const pd_famcg *fc);
/* Why no family gets a cgroup (off, no delegated cgroup, base not creatable), or NULL. */
const char *pd_famcg_off_reason(const pd_famcg *fc);

/* The hierarchies family cgroups are made in (bit i: hs->h[i]); 0 when off. */
uint32_t pd_famcg_mask(const pd_famcg *fc);

/* Make the cgroup of a new family rooted at root (pid + start ticks; its parent pid and
 * cgroup when the caller read them already) and move the root into its leaf.  parent_path: the cgroup of the parent family when it has one (the new
 * cgroup goes inside it), NULL otherwise (it goes under the base); parent_cg: that
 * cgroup's open handle when procd made it (the new one is made relative to it), else NULL.
 * *path_out (malloc'd): the family's cgroup (without the leaf); *cg_out: its handle
 * (TR_CG_MAY_ACT|TR_CG_OWNED), for the family's tracker.  Refused (negative errno, reason
 * in err) when off, -EBUSY when the root was placed (pd_famcg_placed) in any hierarchy (a
 * job cgroup some manager made: procd leaves it there; pd_famcg_track_placed gives the
 * family's tracker then), when mkdir or the move fails; nothing is left behind then. */
typedef struct pd_famcg_root {
        pid_t pid;
        uint64_t start_ticks;
        pid_t ppid;          /* 0: read here */
        pid_t came_from;     /* the root of the family procd counts the root in (its parent
                              * family), 0: none; see pd_famcg_placed */
} pd_famcg_root;
int pd_famcg_create(pd_famcg *fc, const pd_famcg_root *root, tr_cgroup *parent_cg, const char *parent_path,
                    char **path_out, tr_cgroup **cg_out, tr_error *err);

/* Move pid into a family cgroup procd made (fam: its handle): into its leaf in the v2
 * tree, into the cgroup itself in v1 hierarchies.  _in: in the hierarchies of hier_mask. */
int pd_famcg_attach(tr_cgroup *fam, pid_t pid, tr_error *err);
int pd_famcg_attach_in(tr_cgroup *fam, pid_t pid, uint32_t hier_mask, tr_error *err);

/* Placement (issue 16): never undo another manager's placement.  In EVERY hierarchy, a
 * process that sits in another cgroup than its parent process was placed there by someone
 * (Slurm's task cgroup, HTCondor's v1 job cgroups, a systemd scope, a container runtime)
 * and stays where it was put: procd moves it in no hierarchy where it is placed, so no
 * limit, cpuset or device rule of another manager is escaped.  When moving members, what
 * procd or the family's client placed is no evidence: pid in a cgroup under one of own (the
 * family's current cgroup, procd's family base), or its parent already in moved_to (the
 * move's target: moved there by procd, maybe in this very operation), does not count.
 *
 * Nor is a difference in a hierarchy where the parent sits under procd_base (procd's
 * family base: procd moved the parent, or an ancestor, into a family cgroup) and pid sits
 * exactly where came_from (the root of the family procd counts pid in) sits: pid was forked
 * before that move and stayed where its family is (its parent registered, maybe unregistered
 * since, its cgroup kept).  A pid anywhere else (HTCondor's v1 job cgroup of a job whose
 * starter sits in a family cgroup) was placed there by someone and stays.
 *
 * pd_famcg_placed: the hierarchies where pid (parent ppid; 0: read it) is placed: their
 * paths in *placed (others NULL; clear it), labelled in where ("memory:/slurm/job_10
 * cgroup2:/a", may be NULL).  own, moved_to, procd_base may be NULL, came_from 0.  Returns
 * how many, 0 when the parent cannot be read (no evidence), -ESRCH when pid is gone. */
int pd_famcg_placed(const tr_hierarchies *hs, pid_t pid, pid_t ppid, const char *const *own, tr_cgroup *moved_to,
                    const char *procd_base, pid_t came_from, tr_pid_cgroups *placed, char *where, size_t size);

/* A root placed in some hierarchy gets no family cgroup at all (a family cgroup in the other
 * hierarchies would split its members and usage across two managers' trees).  It is tracked
 * through the cgroups it was placed in, its own (most specific) cgroup in each placed
 * hierarchy, never a hierarchy root, a cgroup holding procd nor one under procd's family
 * base (a family's cgroup, shared with its other processes): a handle without
 * TR_CG_MAY_ACT (members and usage read there; signal, kill and freeze answered by the /proc
 * tracker: another manager's freezer state is its own).  *text_out (malloc'd): those cgroups
 * as /proc/PID/cgroup lines ("4:memory:/slurm/task_0\n"), kept as the family's cgroup_path
 * and in the state file; pd_famcg_open_placed opens it again.  -EBUSY when no placed
 * hierarchy may be read through.  rt: as pd_famcg_create had it. */
int pd_famcg_track_placed(pd_famcg *fc, const pd_famcg_root *rt, char **text_out, tr_cgroup **cg_out, tr_error *err);
int pd_famcg_open_placed(const tr_hierarchies *hs, const char *text, tr_cgroup **out, tr_error *err);
/* Whether every cgroup of such a text (a state file's) passes pd_famcg_track_placed's
 * refusals (fc may be NULL: no base); 0, or -errno with the reason in why. */
int pd_famcg_placed_acceptable(const tr_hierarchies *hs, const pd_famcg *fc, const char *text, char *why, size_t size);
/* That text for people: "memory:/slurm/task_0 cgroup2:/a" (in buf). */
const char *pd_famcg_placed_label(const tr_hierarchies *hs, const char *text, char *buf, size_t size);

/* Move pid into `to` in each hierarchy of the handle where it is not placed (above) and not
 * in `to` or below it already (family: `to` is a family cgroup, pd_famcg_attach_in; else
 * tr_cgroup_attach_in).  *left: the hierarchies where it stays placed elsewhere (where:
 * their labels).  Placed in the handle's primary hierarchy (the one membership is read in):
 * -EBUSY and nothing moved (it would not become a member). */
int pd_famcg_attach_unplaced(tr_cgroup *to, pid_t pid, const char *const *own, bool family, uint32_t *left,
                             char *where, size_t size, tr_error *err);

/* Remove a cgroup procd made (a family's, with its leaf, when has_leaf; else one
 * TrackFamilyViaCgroup made in every hierarchy), now when empty, else later by the timer. */
void pd_famcg_release(pd_famcg *fc, const char *path, bool has_leaf);
/* Cgroups waiting for removal (tests, logs). */
size_t pd_famcg_pending(const pd_famcg *fc);

/* Index of the hierarchy families are matched by: v2 when mounted, else name=systemd,
 * else the first; -1 without any. */
int pd_famcg_primary(const tr_hierarchies *hs);

/* The cgroup of pid in that hierarchy, malloc'd; -ESRCH when pid is gone. */
int pd_famcg_pid_cgroup(const tr_hierarchies *hs, pid_t pid, char **out);

typedef tr_proc_ident pd_ident; /* pid + start time (trackers/proc-read.h) */

/* Move every pid of pids into cg (every hierarchy of the handle where it is not placed by
 * another manager: pd_famcg_attach_unplaced with own), skipping those already in cg's
 * cgroup or below it (in the matching hierarchy) and those that are gone.  Pids that could
 * not be moved (placed elsewhere in the matching hierarchy included: -EBUSY) are appended
 * to failed (pd_ident, pid + start time) when failed is not NULL.  *moved counts the moves.
 * 0 when every live pid is in cg now, else the negative errno of the first failure (message
 * in err). */
int pd_famcg_move(tr_cgroup *cg, const tr_pidset *pids, const char *const *own, GArray *failed, size_t *moved,
                  tr_error *err);
