/* cglimits.h - the limit knobs: for each option its controller, its v2 file, its v1 file
 * and the value format in each version.  All knowledge of "which file, which syntax, in
 * which cgroup version" for limits lives in this table (the starter only says what value
 * it wants); the unit test checks every row.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cgroup.h"
#include "error.h"
#include "hierarchy.h"

typedef enum tr_limit_id {
        TR_LIMIT_MEMORY_MAX,
        TR_LIMIT_MEMORY_SWAP_MAX,
        TR_LIMIT_MEMORY_HIGH,
        TR_LIMIT_MEMORY_OOM_GROUP,
        TR_LIMIT_CPUS,
        TR_LIMIT_CPU_WEIGHT,
        TR_LIMIT_CPUSET_CPUS,
        TR_LIMIT_CPUSET_MEMS,
        TR_LIMIT_PIDS_MAX,
        TR_LIMIT_IO_MAX,
        TR_LIMIT_COUNT
} tr_limit_id;

/* How a value is written (u64 = tr_limit_value.u64; UINT64_MAX means unlimited). */
typedef enum tr_limit_format {
        TR_FMT_NONE = 0,      /* no such knob in this version */
        TR_FMT_MAX_OR_U64,    /* "max" or decimal (v2 sizes, pids.max) */
        TR_FMT_M1_OR_U64,     /* "-1" or decimal (v1 sizes) */
        TR_FMT_MEMSW,         /* v1 memory+swap: u64 (swap) + u64_b (memory.max), "-1" if either is */
        TR_FMT_U64,           /* decimal (v2 cpu.weight) */
        TR_FMT_SHARES,        /* v1 cpu.shares from a v2 weight: w * 1024 / 100 in [2, 262144] */
        TR_FMT_QUOTA_PERIOD,  /* v2 cpu.max "QUOTA PERIOD" (u64 quota usec, u64_b period usec) */
        TR_FMT_CFS,           /* v1 cpu.cfs_period_us = u64_b, then cpu.cfs_quota_us = u64 */
        TR_FMT_TEXT,          /* text as given (cpuset lists) */
        TR_FMT_ONE,           /* "1" (a switch) */
        TR_FMT_IO_LINE,       /* v2 io.max "MAJ:MIN rbps=N wbps=N riops=N wiops=N" (text) */
        TR_FMT_IO_PER_KEY,    /* v1 blkio.throttle.{read,write}_{bps,iops}_device "MAJ:MIN N", one per key */
} tr_limit_format;

typedef struct tr_limit_knob {
        const char *option; /* the starter's option: "memory-max" */
        tr_controller ctrl;
        const char *v2_file, *v1_file; /* NULL: none in that version */
        tr_limit_format v2_fmt, v1_fmt;
        bool optional;      /* where the file is missing the knob is skipped, silently */
} tr_limit_knob;

const tr_limit_knob *tr_limit_knob_get(tr_limit_id id);

typedef struct tr_limit_value {
        uint64_t u64;     /* bytes, count, weight, cpu quota usec; UINT64_MAX = unlimited */
        uint64_t u64_b;   /* cpu period usec; memory.max for v1 memsw */
        bool has_b;       /* u64_b given (v1 memsw needs memory.max) */
        const char *text; /* cpuset list, io-max line */
} tr_limit_value;

#define TR_LIMIT_MAX_WRITES 4

typedef struct tr_limit_write {
        const char *file; /* static */
        char value[512];
} tr_limit_write;

/* The writes that set knob id to v in a hierarchy of version v2 (true) or v1: 1 to
 * TR_LIMIT_MAX_WRITES (file, value) pairs, to be written in order.  Returns their number,
 * -EINVAL for a bad value (err names --option and why), -EOPNOTSUPP when the knob has no
 * file in that version. */
int tr_limit_writes(tr_limit_id id, bool v2, const tr_limit_value *v, tr_limit_write *out, tr_error *err);

/* The hierarchy where a limit on ctrl is written: tr_hierarchies_best, with io and blkio
 * standing in for each other (v2 io, else v1 blkio).  -1 when none. */
int tr_limit_hierarchy(const tr_hierarchies *hs, tr_controller ctrl);

/* v1 cpu.shares for a v2 cpu.weight (100 -> 1024, clamped to [2, 262144]). */
unsigned long long tr_weight_to_shares(uint64_t weight);

/* ---- what the limits did ----
 * The counters the kernel keeps where a limit is written (the hierarchy tr_limit_hierarchy
 * picks for the controller): one row per counter with its v2 file and key, its v1 file and
 * key, the v1 unit and whether the v1 counter is local to each cgroup (then the job cgroup's
 * descendants are summed). */
typedef enum tr_limit_event_id {
        TR_EVENT_OOM,               /* v2 memory.events oom: memory.max hit, reclaim failed */
        TR_EVENT_OOM_KILL,          /* processes the OOM killer killed */
        TR_EVENT_PIDS_MAX,          /* forks refused at pids.max */
        TR_EVENT_CPU_PERIODS,       /* CFS bandwidth periods while runnable */
        TR_EVENT_CPU_THROTTLED,     /* of them, periods the quota ran out */
        TR_EVENT_CPU_THROTTLED_USEC,/* time throttled */
        TR_EVENT_COUNT
} tr_limit_event_id;

typedef struct tr_limit_event_row {
        const char *name; /* report key: "oom_kill", "cpu_throttled_usec" */
        tr_controller ctrl;
        const char *v2_file, *v2_key;
        const char *v1_file, *v1_key; /* NULL: no such counter in v1 */
        uint32_t v1_divisor;          /* v1 value / this: ns -> usec */
        bool v1_local;                /* v1 counts per cgroup: sum the descendants */
} tr_limit_event_row;

const tr_limit_event_row *tr_limit_event_get(tr_limit_event_id id);

typedef struct tr_limit_events {
        tr_u64 v[TR_EVENT_COUNT]; /* unavailable where the file or key is missing */
} tr_limit_events;

/* Read every counter of cg (a job cgroup, before it is removed).  A counter whose
 * controller, file or key is missing here, or whose cgroup is gone, stays unavailable:
 * unknown, not 0. */
void tr_cgroup_limit_events(tr_cgroup *cg, tr_limit_events *ev);

/* The limits the counters say were hit: OOM (oom or oom_kill > 0), pids.max (a fork
 * refused), CPU quota (a throttled period). */
typedef enum tr_limit_hit {
        TR_HIT_OOM = 1u << 0,
        TR_HIT_PIDS_MAX = 1u << 1,
        TR_HIT_CPU_THROTTLED = 1u << 2,
} tr_limit_hit;
unsigned tr_limit_events_hits(const tr_limit_events *ev);
/* "oom", "pids-max", "cpu-throttled" */
const char *tr_limit_hit_name(tr_limit_hit h);

/* ---- the limits in force ----
 * Read back from a cgroup (a family's, for `procctl list`): memory.max, cpu.max, pids.max,
 * or their v1 files, in the hierarchy tr_limit_hierarchy picks.  A field is available only
 * where a limit is set: "max", "-1" and v1's unlimited page count leave it unavailable, as
 * does a missing controller or file. */
typedef struct tr_limits_now {
        tr_u64 memory_max_bytes;
        tr_u64 cpu_quota_usec;  /* with cpu_period_usec: quota / period = cores */
        tr_u64 cpu_period_usec;
        tr_u64 pids_max;
} tr_limits_now;

void tr_cgroup_limits_now(tr_cgroup *cg, tr_limits_now *out);
