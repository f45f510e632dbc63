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
 * has no delegated cgroup of its own: then no family gets a cgroup unless a base is given.
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
} pd_famcg_options;

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
 * in err) when off, when the root was placed in another cgroup than its parent process's
 * (a job cgroup some manager made: procd leaves it there), when mkdir or the move fails;
 * nothing is left behind then. */
typedef struct pd_famcg_root {
        pid_t pid;
        uint64_t start_ticks;
        pid_t ppid;          /* 0: read here */
        const char *cgroup;  /* in the hierarchy families are matched by; NULL: read here */
} pd_famcg_root;
int pd_famcg_create(pd_famcg *fc, const pd_famcg_root *root, tr_cgroup *parent_cg, const char *parent_path,
                    char **path_out, tr_cgroup **cg_out, tr_error *err);

/* Move pid into a family cgroup procd made (fam: its handle): into its leaf in the v2
 * tree, into the cgroup itself in v1 hierarchies. */
int pd_famcg_attach(tr_cgroup *fam, pid_t pid, tr_error *err);

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

/* Move every pid of pids into cg (every hierarchy of the handle), skipping those already
 * in cg's cgroup or below it (in the matching hierarchy) and those that are gone.  Pids
 * that could not be moved are appended to failed (pd_ident, pid + start time) when failed
 * is not NULL.  *moved counts the moves.  0 when every live pid is in cg now, else the
 * negative errno of the first failure (message in err). */
int pd_famcg_move(tr_cgroup *cg, const tr_pidset *pids, GArray *failed, size_t *moved, tr_error *err);
