/* options.h - procd-starter command line. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trackers/devices.h"
#include "trackers/error.h"

typedef enum st_systemd_mode {
        ST_SYSTEMD_AUTO = 0, /* systemd when /run/systemd/system exists */
        ST_SYSTEMD_YES,
        ST_SYSTEMD_NO,
} st_systemd_mode;

typedef enum st_launch_mode {
        ST_LAUNCH_AUTO = 0, /* clone3, fork when the kernel lacks it */
        ST_LAUNCH_CLONE3,
        ST_LAUNCH_FORK,     /* forced fork + attach (tests of the fallback path) */
} st_launch_mode;

#define ST_MAX_IO 16
#define ST_MAX_GPUS 64

typedef struct st_limits {
        bool has_memory_max, has_memory_high, has_memory_swap_max;
        uint64_t memory_max, memory_high, memory_swap_max; /* bytes; UINT64_MAX = "max" */
        bool has_cpus;
        double cpus;               /* CPUs worth of quota */
        uint64_t cpu_period_usec;  /* 100000 */
        bool has_cpu_weight;
        uint64_t cpu_weight;       /* 1..10000 (v2 scale) */
        const char *cpuset_cpus, *cpuset_mems;
        bool has_pids_max;
        uint64_t pids_max;         /* UINT64_MAX = "max" */
        const char *io_max[ST_MAX_IO]; /* "MAJ:MIN rbps=N wbps=N riops=N wiops=N" */
        size_t n_io_max;
        bool oom_group;            /* memory.oom.group=1 where it exists (default on) */
} st_limits;

typedef struct st_options {
        st_systemd_mode systemd;
        const char *systemd_address; /* NULL: the system bus manager's private socket */
        int systemd_timeout_ms;
        const char *cgroup_base;     /* "/procd" */
        const char *name;            /* job cgroup name; default "job.<starter pid>" */
        const char *user, *group, *cwd;
        const char **env;            /* "K=V", n_env of them */
        size_t n_env;
        const char *stdin_path, *stdout_path, *stderr_path;
        st_limits limits;
        bool best_effort;
        const char *socket_path;     /* procd socket; NULL = default */
        bool no_procd;
        bool require_procd;          /* refuse to run a job procd does not track */
        uint64_t kill_grace_usec;
        const char *report_path;
        bool quiet;
        st_launch_mode launch;
        tr_dev_rules devices;        /* --device-allow/--device-deny, in command-line order */
        bool hide_gpus;
        int gpus[ST_MAX_GPUS];       /* --gpu N: GPU numbers the job was given */
        size_t n_gpus;
        bool private_tmp;            /* --private-tmp[=DIR] */
        const char *private_tmp_dir; /* DIR: bind mounts of a per-job directory under it */
        uint64_t private_tmp_size;   /* --private-tmp-size (tmpfs), 0: --memory-max or default */
        bool pid_namespace;          /* --pid-namespace */
        const char *job_id;          /* --job-id: the scheduler's id, told to procd */
        char **argv;                 /* the command, NULL-terminated */
} st_options;

/* Parse argv.  Returns 0 to run, 1 when help/version was printed, -EINVAL with err filled on
 * a bad option.  o->env and o->devices are malloc'd: st_options_free. */
int st_options_parse(int argc, char **argv, st_options *o, tr_error *err);
void st_options_free(st_options *o);
void st_usage(FILE *f);
