/* report.h - the end-of-job report (stderr text and --report JSON) and the exit status. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sys/types.h>

#include "joblimits.h"
#include "trackers/cglimits.h"
#include "trackers/devices.h"
#include "trackers/error.h"
#include "trackers/usage.h"

/* Exit statuses of procd-starter besides the job's own (0..255, 128+N for signal N). */
#define ST_EXIT_OOM 122      /* the OOM killer killed a member and the job did not succeed */
#define ST_EXIT_FAILURE 125  /* the starter itself failed (options, cgroup, launch) */
#define ST_EXIT_NOEXEC 126   /* the command could not be executed */
#define ST_EXIT_NOTFOUND 127 /* the command was not found */

typedef struct st_result {
        int exit_status;    /* the root's exit code, -1 when killed by a signal (JSON null) */
        int exit_signal;    /* the signal that killed the root, 0 when it exited */
        bool core_dumped;
        bool oom_killed;    /* oom_kills > 0 */
        uint64_t wall_usec;
        int exit_code;      /* what procd-starter exits with */
        const char *mode;   /* "cgroupfs", "systemd" */
        const char *tracker;/* "embedded", "procd" */
        const char *tracker_reason; /* why embedded ("--no-procd", "no procd at ..."), NULL for procd */
        uint64_t start_usec, end_usec; /* wall clock (CLOCK_REALTIME) at launch and at the end */
        const char *user;   /* the job's user */
        const char *name;   /* the job's name (its cgroup's) */
        const char *host;
        const char *cgroup_base; /* cgroupfs: the shared parent, kept; NULL in systemd mode */
        const char *cgroup; /* the job leaf */
        pid_t pid;
        bool terminated;    /* the job was ended from outside: terminated_by != NULL */
        const char *terminated_by; /* "starter" (a signal to the starter ended it), else when the
                                      root died of a signal: "procd" (KillFamily: procctl kill),
                                      "oom-killer", or "signal" (sender unknown: kill(1), the job
                                      itself, a crash); NULL when the job exited by itself */
        bool strays_killed; /* processes were left after the root exited */
        bool clean;         /* every cgroup of the job removed (job_cgroups_removed) */
        const tr_dev_rules *devices; /* the device rules enforced, NULL or empty: none */
        const char *device_method;   /* "bpf", "v1", "bpf+v1" */
        uint32_t device_prog_id;     /* the BPF program's id (0: none) */
        const st_limits_record *limits; /* the limits the job ran with (NULL: none) */
        tr_limit_events events;      /* what they did (counters; unavailable: unknown) */
} st_result;

/* exit_status/exit_signal/oom -> exit_code (documented in --help and the README). */
int st_exit_code(const st_result *r);

void st_report_print(FILE *f, const st_result *r, const tr_usage *u);
/* --report when the starter failed before the job ran (or could not be run): one JSON object
 * {"exit_code": N, "stage": "...", "error": "...", "job_cgroups_removed": bool}, so a scheduler
 * reading the report learns why.  Written to path.tmp then renamed. */
int st_report_write_failure_json(const char *path, int exit_code, const char *stage, const char *error,
                                 bool cgroups_removed, tr_error *err);

/* JSON object: procd_usage_write_json_members keys plus exit_status, exit_signal, oom_killed,
 * wall_usec and a few starter keys.  Written to path.tmp then renamed. */
int st_report_write_json(const char *path, const st_result *r, const tr_usage *u, tr_error *err);
