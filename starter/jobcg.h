/* jobcg.h - the job's cgroup: one strategy per file behind a small ops table (as crun's
 * cgroup managers): jobcg-cgroupfs.c (mkdir under --cgroup-base) and jobcg-systemd.c (a
 * transient scope with Delegate=yes from the systemd manager over libdbus-1).
 *
 * Layout either way (v2 "processes only in leaves"; as Slurm splits user/ and slurm/):
 *     <top>/job       the job's processes; limits are written here
 *     <top>/starter   anything of the starter's (systemd mode: the parked helper)
 * In hybrid/v1, the same paths exist in the v1 hierarchies the job needs (st_jobcg_create).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "options.h"
#include "trackers/cgroup.h"
#include "trackers/error.h"
#include "trackers/hierarchy.h"

typedef struct st_jobcg st_jobcg;

typedef struct st_jobcg_ops {
        const char *name; /* "cgroupfs", "systemd" */
        /* Decide (and for systemd create) <top>; fill jc->top.  A strategy whose own
         * process sits in <top> (the systemd helper) moves it into <top>/starter here, before
         * any controller is enabled below <top>, sets helper_pid and want_starter_leaf. */
        int (*setup)(st_jobcg *jc, const st_options *o, tr_error *err);
        /* After the job leaf is destroyed: release what setup made (helper, scope). */
        void (*teardown)(st_jobcg *jc);
        /* The fd the guard (guard.h) closes at once, in its own fd table: what must end
         * with the starter (the systemd helper's pipe, which the helper reads until EOF);
         * -1: none. */
        int (*guard_drop_fd)(const st_jobcg *jc);
} st_jobcg_ops;

extern const st_jobcg_ops st_jobcg_cgroupfs_ops;
extern const st_jobcg_ops st_jobcg_systemd_ops;

struct st_jobcg {
        const st_jobcg_ops *ops;
        const tr_hierarchies *hs;
        bool verbose;
        char top[PATH_MAX];       /* "/procd/job.1234" or the scope's ControlGroup */
        char job_path[PATH_MAX];  /* <top>/job */
        char starter_path[PATH_MAX];
        tr_cgroup *job;           /* handle of <top>/job (MAY_ACT|OWNED) */
        tr_cgroup *starter;       /* handle of <top>/starter, or NULL */
        uint32_t mask;            /* hierarchies <top>/job and <top>/starter are made in
                                     (bit i: hs->h[i]; st_jobcg_create says which) */
        bool top_created[TR_MAX_HIER]; /* <top> did not exist before in hierarchy i */
        bool want_starter_leaf;
        pid_t helper_pid;         /* a process of the strategy to keep in <top>/starter */
        bool helper_reaped;       /* the starter's stray reaping already reaped it (it died
                                     early): teardown must not wait for it */
        void *priv;               /* strategy state */
        int top_lock_fd;          /* cgroupfs: flock on <top> held while the starter lives
                                     (starter/orphans.h), else -1 */
};

/* Pick the strategy (systemd per o->systemd, falling back to cgroupfs with a warning),
 * build <top>/job (and <top>/starter), make v1 cpusets usable.  cgroupfs: hold <top>'s
 * lock (starter/orphans.h); a <top> that exists already is swept first if a dead starter
 * left it, then tried again. */
int st_jobcg_create(st_jobcg *jc, const tr_hierarchies *hs, const st_options *o, tr_error *err);
/* Clean the job cgroups of dead starters under --cgroup-base (st_orphans_sweep; a failure
 * is a warning on stderr).  The starter runs it once its job runs, while the job's exec and
 * startup take their time: off the launch's path (NOTES 14.30).  How many were cleaned. */
int st_jobcg_sweep(const tr_hierarchies *hs, const st_options *o);

/* Destroy the job leaf, then the rest (starter leaf, <top> where we made it, strategy
 * state).  Returns the number of cgroup directories that could not be removed. */
int st_jobcg_destroy(st_jobcg *jc, uint64_t timeout_usec);
/* The same in the guard (guard.h), the starter dead: no strategy teardown (a systemd scope
 * left empty is stopped by systemd; its helper died with the starter). */
int st_jobcg_abandon(st_jobcg *jc, uint64_t timeout_usec);

/* Fill empty cpuset.cpus/cpuset.mems along `path` in the v1 cpuset hierarchy from each
 * parent (a new v1 cpuset cgroup is unusable until both are set). */
int st_cpuset_fill(const tr_hierarchies *hs, const char *path, tr_error *err);
