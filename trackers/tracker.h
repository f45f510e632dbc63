/* tracker.h - the small ops table both trackers implement, and the fallback rule.
 *
 * A tr_family has a primary tracker (the cgroup one, when a cgroup was given) and always a
 * /proc tracker.  When a cgroup operation fails for the family (cgroup removed, EACCES, a
 * controller missing for a field), that operation is answered by the /proc tracker, the
 * reason is logged once per operation, and the usage record says so (fallback, reason,
 * per-field source).  Members the cgroup lists are handed to the /proc tracker as seeds so
 * that a later fallback still finds processes that left the root's parent tree.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cgroup.h"
#include "error.h"
#include "pidset.h"
#include "procfam.h"
#include "usage.h"

typedef struct tr_tracker_ops {
        const char *name; /* "cgroup", "proc" */
        int (*members)(void *self, tr_pidset *out, tr_error *err);
        /* want: enum tr_usage_want (a tracker may give more) */
        int (*usage)(void *self, unsigned want, tr_usage *out, tr_error *err);
        int (*signal)(void *self, int sig, tr_error *err);
        int (*kill)(void *self, uint64_t timeout_usec, tr_kill_result *res, tr_error *err);
        int (*freeze)(void *self, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err);
        int (*thaw)(void *self, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err);
        int (*populated)(void *self, bool *populated, tr_error *err);
} tr_tracker_ops;

extern const tr_tracker_ops tr_cgroup_tracker_ops; /* self: tr_cgroup * */
extern const tr_tracker_ops tr_proc_tracker_ops;   /* self: tr_procfam * */

typedef void (*tr_log_fn)(void *userdata, const char *message);

typedef struct tr_family tr_family;

/* spec describes the /proc side (always built).  cg may be NULL (pure /proc family); the
 * family takes ownership of cg. */
int tr_family_new(const tr_procfam_spec *spec, tr_cgroup *cg, tr_family **out, tr_error *err);
void tr_family_free(tr_family *f);
static inline void tr_family_freep(tr_family **f)
{
        if (*f)
                tr_family_free(*f);
}
#define _cleanup_family_ __attribute__((cleanup(tr_family_freep)))

/* Where fallback reasons go (once per operation kind); default: stderr. */
void tr_family_set_log(tr_family *f, tr_log_fn fn, void *userdata);

tr_cgroup *tr_family_cgroup(tr_family *f);   /* NULL for a /proc family */
tr_procfam *tr_family_procfam(tr_family *f);
/* "cgroup" or "proc": which tracker answers while nothing fails. */
const char *tr_family_primary_name(const tr_family *f);

int tr_family_members(tr_family *f, tr_pidset *out, tr_error *err);
int tr_family_usage(tr_family *f, tr_usage *out, tr_error *err);
/* Only the groups of fields in want (enum tr_usage_want) are asked of the cgroup; /proc
 * gives what its snapshot has, and fills what the cgroup cannot give of num_procs,
 * cpu_usec and rss_bytes when they are wanted. */
int tr_family_usage_want(tr_family *f, unsigned want, tr_usage *out, tr_error *err);
int tr_family_signal(tr_family *f, int sig, tr_error *err);
int tr_family_kill(tr_family *f, uint64_t timeout_usec, tr_kill_result *res, tr_error *err);
int tr_family_freeze(tr_family *f, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err);
int tr_family_thaw(tr_family *f, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err);
int tr_family_populated(tr_family *f, bool *populated, tr_error *err);
