/* usage-meter.h - what a usage answer needs from earlier queries of the same family, for
 * any transport: percent CPU from the CPU used between two queries (condor_procd's
 * percent_cpu: 100 = one core busy), and the running maximum of the image size. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "trackers/usage.h"

typedef struct pd_usage_meter pd_usage_meter;

typedef struct pd_usage_reading {
        double percent_cpu;       /* 0 on the first query of a family */
        bool percent_cpu_known;   /* false on the first query (or after a reset): no interval */
        uint64_t interval_usec;   /* the interval percent_cpu covers */
        uint64_t max_image_bytes; /* the largest image_bytes seen by queries of this family */
} pd_usage_reading;

pd_usage_meter *pd_usage_meter_new(void);
void pd_usage_meter_free(pd_usage_meter *m);

/* Record a query of the family rooted at root_pid (0: the root family) at now_usec
 * (monotonic): cpu_usec its lifetime CPU (user + system), image_bytes its image size now.
 * A CPU reading below the last one (another family with that root pid) starts afresh. */
void pd_usage_meter_update(pd_usage_meter *m, pid_t root_pid, uint64_t cpu_usec, uint64_t image_bytes,
                           uint64_t now_usec, pd_usage_reading *out);
/* Drop what is kept for root_pid (its family was unregistered). */
void pd_usage_meter_forget(pd_usage_meter *m, pid_t root_pid);

/* What the meter is fed from a usage record, whichever transport asked: lifetime CPU
 * (user + system where both are known, else the total) and the image size (the virtual
 * size sum where /proc gave it; a cgroup has none: its charged memory, else the resident
 * set). */
uint64_t pd_usage_cpu_usec(const tr_usage *u);
uint64_t pd_usage_image_bytes(const tr_usage *u);
