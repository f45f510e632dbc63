/* joblimits.h - resource limits on the job leaf.  Each option's v2 file, v1 file and value
 * formats come from the trackers' table (trackers/cglimits.h); the hierarchy that actually
 * has the controller for this cgroup is used (tr_limit_hierarchy + tr_cgroup_has_file).  A limit that cannot be applied is an error
 * (-EOPNOTSUPP, err names the option and why) unless best_effort, then a warning. */
#pragma once

#include <limits.h>
#include <stdbool.h>

#include "options.h"
#include "trackers/cglimits.h"
#include "trackers/cgroup.h"

/* One limit the job ran with (for the report): the option, its value, the kernel files
 * written in the hierarchy holding its controller; or, with --best-effort, why it was left
 * out. */
typedef struct st_limit_applied {
        const char *option; /* "memory-max" (static) */
        char value[512];    /* the option's value: bytes, a count, CPUs, a list, an io-max line */
        bool bytes;         /* value is a byte count (or "max") */
        bool applied;
        bool v2;            /* the hierarchy written is v2 (else v1) */
        int n_writes;
        struct {
                char path[PATH_MAX]; /* /sys/fs/cgroup/memory/procd/job.1/job/memory.limit_in_bytes */
                char value[512];
        } w[TR_LIMIT_MAX_WRITES];
        char why[256];      /* not applied: why */
} st_limit_applied;

typedef struct st_limits_record {
        st_limit_applied *a;
        size_t n;
} st_limits_record;

void st_limits_record_free(st_limits_record *rec);

/* rec (may be NULL) gets one entry per limit option written or left out. */
int st_limits_apply(tr_cgroup *job, const tr_hierarchies *hs, const st_limits *l, bool best_effort,
                    st_limits_record *rec, tr_error *err);

/* The hierarchies the limits of l are written in (bit i: hs->h[i]); the job cgroup must
 * be made in each of them. */
uint32_t st_limits_hierarchies(const tr_hierarchies *hs, const st_limits *l);
