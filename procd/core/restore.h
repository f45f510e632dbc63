/* restore.h - procd's registry to and from its state file (procd/core/state.h).
 *
 * Save: every registered subfamily (parents first) with its identity, watcher, tracking
 * methods, flags and, for /proc families, the members of the last snapshot.
 *
 * Restore (at start-up, before procd listens): each family whose root is still the same
 * process (pid + start time) is re-created; cgroup families need their cgroup (still there,
 * the root still in it); a watcher that exited meanwhile gets the watcher-exit rule now; a
 * KillFamily cut short by the crash is finished, a suspend re-applied.  What cannot be
 * restored is logged by root pid and reason and dropped; the rest goes on.  An untrusted
 * file (foreign, later version, corrupt) is set aside and procd starts empty.  Then the
 * empty fam.* cgroups no family owns are removed (family-cgroup-sweep.h).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "procd/core/command.h"
#include "procd/core/family-cgroup-sweep.h"
#include "procd/core/registry.h"
#include "procd/core/state.h"

/* What a save reuses from one save to the next (the daemon keeps one): the text, the
 * list of families, a family's members.  A save formats straight from the registry's
 * families (their strings borrowed, nothing copied per family) into the kept text. */
typedef struct pd_persist {
        GString *text;
        GPtrArray *all;
        GArray *members; /* of pd_state_member */
} pd_persist;

void pd_persist_init(pd_persist *p);
void pd_persist_clear(pd_persist *p);
/* The state file's text of the registry now (in p->text, valid until the next call). */
const GString *pd_persist_format(pd_persist *p, pd_registry *r);
/* Format and write path atomically (state.h: write, fsync, rename, directory fsync). */
int pd_persist_save(pd_persist *p, pd_registry *r, const char *path, tr_error *err);

typedef struct pd_restore_stats {
        size_t in_file;       /* families in the file */
        size_t restored;
        size_t dropped;       /* logged by name */
        size_t watcher_gone;  /* restored, then the watcher-exit rule applied */
        bool set_aside;       /* the file was not trusted */
        uint64_t wall_usec;   /* the whole restore, read to the last family */
        uint64_t cpu_usec;    /* procd's CPU time (user + system) meanwhile */
        pd_famcg_sweep_stats sweep; /* then: family cgroups no family owns (family-cgroup-sweep.h) */
} pd_restore_stats;

/* Restore the families of path into cm->reg.  Never fails: a missing file is a first
 * start; every problem is logged. */
void pd_restore(pd_commands *cm, const char *path, pd_restore_stats *st);
