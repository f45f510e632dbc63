/* family-cgroup-sweep.h - after a restart, the family cgroups no family owns any more.
 *
 * A crash leaves fam.* cgroups behind (procd/core/family-cgroup.h): those of families dropped
 * at the restore (their root exited while procd was down), those whose removal was still
 * pending, those of a registration cut short.  At start, after the restore, every fam.*
 * directory under the family base (nested ones included) that no registered family owns
 * is examined, deepest first: an empty one (no process in its subtree) is removed in
 * every hierarchy and logged by name; a populated one is logged by name and left as it is
 * (its processes are not signalled: nobody tracks them any more, an admin decides).
 * A directory that holds an owned family's cgroup stays.  The walk runs in the hierarchy
 * families are matched by (pd_famcg_pid_cgroup's).
 */
#pragma once

#include <glib.h>
#include <stddef.h>

#include "procd/core/family-cgroup.h"
#include "trackers/hierarchy.h"

typedef struct pd_famcg_sweep_stats {
        size_t removed; /* empty orphans removed */
        size_t left;    /* populated orphans left in place */
} pd_famcg_sweep_stats;

/* owned: the cgroup paths (char *) of the registered families.  Nothing happens when
 * family cgroups are off. */
void pd_famcg_sweep(pd_famcg *fc, const tr_hierarchies *hs, GHashTable *owned, pd_famcg_sweep_stats *st);
