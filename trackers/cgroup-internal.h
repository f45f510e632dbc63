/* cgroup-internal.h - what the cgroup handle's files share (not for callers: they use
 * cgroup.h).
 *
 * The handle (cgroup.c) owns the dirfds and the counter files kept open; setup
 * (cgroup-setup.c: create, subtree_control, cpuset, attach, destroy), stats (cgroup-stats.c:
 * members, usage), the safety gate (cgroup-gate.c), the freezer (cgroup-freezer.c: uses the
 * gate) and kill (cgroup-kill.c: signal, kill, populated; uses the gate and the freezer)
 * reach them through the helpers below.
 */
#pragma once

#include <errno.h>

#include "cgroup-subtree.h"
#include "cgroup.h"

/* Counter files kept open.  The v2 ones live in the v2 hierarchy; the v1 ones in the v1
 * hierarchy holding `ctrl`. */
enum tr_cg_hot {
        H_CPU_STAT,
        H_MEM_CURRENT,
        H_MEM_PEAK,
        H_MEM_STAT,
        H_MEM_EVENTS,
        H_IO_STAT,
        H_PIDS_CURRENT,
        H_PIDS_PEAK,
        H_CPU_PRESSURE,
        H_MEM_PRESSURE,
        H_IO_PRESSURE,
        H_EVENTS,
        H_PROCS,
        H1_MEM_USAGE,
        H1_MEM_MAX,
        H1_MEM_STAT,
        H1_MEM_NUMA_STAT,
        H1_CPUACCT_USAGE,
        H1_CPUACCT_USER,
        H1_CPUACCT_SYS,
        H1_CPUACCT_ALL,
        H1_CPUACCT_STAT,
        H1_BLKIO,
        H1_PIDS_CURRENT,
        H1_PIDS_PEAK,
        H1_FREEZER_STATE,
        H1_MEM_OOM,
        /* the limits in force (cglimits-read.c: procctl list, D-Bus GetUsage) */
        H_MEM_MAX,
        H_PIDS_MAX,
        H_CPU_MAX,
        H1_MEM_LIMIT,
        H1_PIDS_MAX,
        H1_CPU_QUOTA,
        H1_CPU_PERIOD,
        H_COUNT
};

#define TR_CG_HOT_UNTRIED (-2)
#define TR_CG_HOT_ABSENT (-1)


struct tr_cgroup {
        const tr_hierarchies *hs;
        unsigned flags;
        char *path[TR_MAX_HIER];
        int dirfd[TR_MAX_HIER];
        int v2_fd; /* O_RDONLY, for clone3(CLONE_INTO_CGROUP) */
        int hot[H_COUNT];     /* fd, or TR_CG_HOT_UNTRIED / TR_CG_HOT_ABSENT */
        char *procs_buf; /* text of a cgroup.procs, reused across calls */
        size_t procs_cap;
        /* descendants kept open (cgroup-subtree.h): members per hierarchy, v1 oom sum */
        tr_cg_subtree *procs_tree[TR_MAX_HIER];
        tr_cg_subtree *oom_tree;
        /* an owned cgroup's own v2 cgroup.procs found empty, and the watch on its directory
         * (writes included) that keeps it proven so (cgroup-notify.h, cgroup-stats.c) */
        tr_cg_mark own_mark;
        bool own_empty;
        bool own_unwatched; /* no watch to be had (the share taken): not asked until rest */
        unsigned own_skipped; /* reads it spared (tests) */
        /* at rest (tr_cgroup_rest): the inode each closed dirfd had, so that only the
         * same directory is opened again at its path */
        uint64_t rest_ino[TR_MAX_HIER];
        /* the budget the handle is awake in (cgroup-budget.c), its neighbours there; home:
         * the budget it was last touched in, which it wakes into again when opened at rest */
        tr_cg_budget *budget, *home;
        tr_cgroup *awake_prev, *awake_next;
};

static inline bool tr_cg_is_gone_errno(int e) { return e == ENOENT || e == ENODEV; }

/* ---- the handle (cgroup.c) ---------------------------------------------------------- */

/* dirfd[i]: a slot whose path is known but not opened yet (the hierarchies after the
 * primary one of a handle opened through a tr_cg_opener).  path[i] is set exactly when
 * dirfd[i] is an fd or TR_CG_DIR_LAZY. */
#define TR_CG_DIR_LAZY (-2)
/* dirfd[i]: closed by tr_cgroup_rest, opened again at path[i] on first use when the
 * directory there is still the one it was (rest_ino[i]); another one there, or none: the
 * handle is not in hierarchy i any more (as a lazy slot whose cgroup is gone). */
#define TR_CG_DIR_REST (-3)

/* Out of the budget's awake list (cgroup-budget.c), at rest or free. */
void tr_cg_budget_unlink(tr_cgroup *cg);
/* A slot of cg was opened: a handle touched once and resting now goes back to its home
 * budget (first in it), so that no use keeps fds open outside the bound. */
void tr_cg_budget_woke(tr_cgroup *cg);

/* The O_PATH dirfd of hierarchy i, opened now when it was left for later; -1 when the
 * handle is not in hierarchy i (a lazy slot whose cgroup is gone there drops out), or when
 * that open failed for another reason (EMFILE...; the slot stays, for the next use). */
int tr_cg_dirfd(tr_cgroup *cg, int i);
/* Every hierarchy left for later opened now, for an operation `op` that acts on the
 * cgroup in all of them (attach, write, kill, signal, freeze, destroy: the may-act and
 * may-change checks call it): one gone there drops out, one that cannot be opened for
 * another reason (EMFILE...) fails the operation with that errno, rather than letting it
 * skip the hierarchy as one the cgroup is not in. */
int tr_cg_open_all(tr_cgroup *cg, const char *op, tr_error *err);

/* Index of the handle's v2 cgroup, or of the v1 hierarchy holding c, or -1 when absent
 * (a lazy slot is opened). */
int tr_cg_v2_index(tr_cgroup *cg);
int tr_cg_v1_index(tr_cgroup *cg, tr_controller c);

/* The kept-open fd of counter file h (opened on first use).  -ENOENT when the file does not
 * exist in this cgroup (remembered), -ENODEV when the cgroup was removed under the fd. */
int tr_cg_hot_fd(tr_cgroup *cg, enum tr_cg_hot h);
/* pread of h from offset 0, NUL-terminated: length or -errno. */
int tr_cg_hot_read(tr_cgroup *cg, enum tr_cg_hot h, char *buf, size_t size);
bool tr_cg_hot_u64(tr_cgroup *cg, enum tr_cg_hot h, uint64_t *v);
/* hot_read of a PSI file; EOPNOTSUPP drops it for good (see cgroup.c). */
int tr_cg_psi_read(tr_cgroup *cg, enum tr_cg_hot h, char *buf, size_t size);
/* The counter file's fd closed, the file taken as absent for the handle's life. */
void tr_cg_hot_forget(tr_cgroup *cg, enum tr_cg_hot h);
/* Closes the counter files and the descendants kept open. */
void tr_cg_hot_close_all(tr_cgroup *cg);

/* An empty handle (no hierarchy yet) and a child dirfd put into it: slot i gets
 * parent_path + "/" + name and owns fd.  -ENOMEM. */
tr_cgroup *tr_cg_new(const tr_hierarchies *hs, unsigned flags);
int tr_cg_adopt(tr_cgroup *cg, int i, const char *parent_path, const char *name, int fd);

/* Absolute, without "..". */
bool tr_cg_path_ok(const char *path);

/* attach/write: TR_CG_MAY_ACT alone (they may target a cgroup holding the caller). */
int tr_cg_check_may_change(tr_cgroup *cg, const char *op, tr_error *err);

/* ---- setup (cgroup-setup.c) ------------------------------------------------------- */

/* Move every process of the v2 cgroup dfd into its leaf child TR_CG_LEAF (made when there
 * is one to move), so that controllers can be enabled for its children.  0 or -errno. */
int tr_cg_v2_vacate(int dfd, tr_error *err);

/* ---- the safety gate (cgroup-gate.c) ------------------------------------------------ */

/* Every destructive operation: TR_CG_MAY_ACT (or TR_CG_OWNED for destroy), not a hierarchy
 * root, not a cgroup holding the caller (nor, except for destroy, one of its ancestors). */
int tr_cg_check_may_act(tr_cgroup *cg, const char *op, bool destroy, tr_error *err);
/* -ENODEV when the cgroup is gone in every hierarchy of the handle. */
int tr_cg_check_exists(tr_cgroup *cg, const char *op, tr_error *err);

/* ---- the freezer (cgroup-freezer.c), for signal and kill ---------------------------- */

#define TR_CG_FREEZE_BOUND_USEC 200000u /* how long signal/kill wait for one freeze */

bool tr_cg_has_v2_freeze(tr_cgroup *cg);
/* Index of the v1 freezer hierarchy holding the cgroup, or -1. */
int tr_cg_v1_freezer(tr_cgroup *cg);
/* v1 freezer.state as a tr_freeze_state, or -errno. */
int tr_cg_v1_state(tr_cgroup *cg);
tr_freeze_state tr_cg_current_state(tr_cgroup *cg);
/* Without the safety gate (the callers already passed it). */
int tr_cg_do_freeze(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err);
int tr_cg_do_thaw(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err);
