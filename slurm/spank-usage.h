/* spank-usage.h - what the plugin records for a step at its last task's exit: one line for
 * slurmd's log and one JSON line appended to the accounting file. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "procd/client.h"

typedef struct ps_step_usage {
        const char *step;       /* "JOBID.STEPID" ("12.0", "12.batch") */
        uint32_t job_id;
        uid_t uid;
        uint32_t tasks;         /* tasks of this node that exited (0: the extern step) */
        uint64_t start_usec;    /* first task registered (CLOCK_REALTIME) */
        uint64_t end_usec;      /* last task exited */
        bool left_known;
        uint64_t left;          /* processes still in the family when the last task exited */
        bool killed;            /* KillFamily succeeded */
        const procd_usage *usage;  /* NULL: procd gave none */
        const char *error;      /* why usage or the kill failed ("" or NULL: no error) */
} ps_step_usage;

/* The log line: "step 12.0: 2 tasks, cpu 6.52 s (user 6.50, system 0.02), peak memory
 * 3.1 MiB, 1 process left and killed, source cgroup". */
void ps_usage_log_line(const ps_step_usage *s, char *buf, size_t size);

/* Append one JSON object and a newline to path (created 0640) in a single write. 0 or
 * -errno. */
int ps_usage_append_json(const ps_step_usage *s, const char *node, const char *path);
