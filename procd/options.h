/* options.h - procd's options: defaults, then the configuration file (a GLib key file,
 * group [procd], one key per long option), then the command line, which wins. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "procd/core/family-cgroup.h"

typedef struct pd_options {
        char socket_path[PATH_MAX];
        bool socket_given;           /* socket set (file or command line): with -A, serve D-Bus too */
        gid_t group;                 /* (gid_t) -1: the socket keeps procd's group */
        pid_t root_pid;              /* 0: procd's parent */
        gid_t gid_min, gid_max;      /* gid_max < gid_min: no range */
        uint32_t snapshot_interval;  /* seconds */
        uint32_t kill_timeout;       /* seconds */
        uint32_t freeze_timeout;     /* seconds */
        unsigned max_conns_per_uid;
        uint32_t evict_idle_sec;     /* a connection idle this long gives way when slots are full */
        bool syslog;
        bool journal; /* --log journal: the journal's native protocol, with the audit's fields */
        bool foreground;
        int ready_fd;                /* -1: none (command line only) */
        pd_famcg_options famcg;      /* famcg.base points into famcg_base */
        char famcg_base[PATH_MAX];
        char famcg_base_default[PATH_MAX]; /* --family-cgroup-base-default: the base when no
                                              option, key or variable names one ("": none) */
        char classic_cgroup_base[PATH_MAX]; /* "": none (TRACK_FAMILY_VIA_CGROUP only below the family base) */
        char config_path[PATH_MAX];  /* the file read, "" when none */
        char file_ignored[128];      /* keys of the file left out in condor_procd's mode ("" none) */
        char state_file[PATH_MAX];   /* "": none (when given) */
        bool state_file_given;       /* else procd.state next to the socket */
        bool log_given;              /* --log set (file or command line) */
        char metrics_textfile[PATH_MAX]; /* "": none (issue 17 §3) */
        uint32_t metrics_interval;   /* seconds between rewrites of metrics_textfile */
        char pidfile[PATH_MAX];      /* "": none */
} pd_options;

/* Environment variables for the family cgroup settings, read after the file and before
 * the command line: PROCD_FAMILY_CGROUPS=on|off (also yes/no, true/false, 1/0) and
 * PROCD_FAMILY_CGROUP_BASE=CGROUP. */
#define PD_ENV_FAMILY_CGROUPS "PROCD_FAMILY_CGROUPS"
#define PD_ENV_FAMILY_CGROUP_BASE "PROCD_FAMILY_CGROUP_BASE"

/* Fill o.  The file is --config PATH when given (it must exist), else PROCD_CONFIG_FILE
 * when it exists, in either mode.  classic: condor_procd's mode (-A), whose command line
 * names the daemon's address, root family and log: the file's socket, root-pid, log and
 * state-file keys are then left out (named in o->file_ignored for the log), so that a file
 * shared with the D-Bus procd never points this one at that one's socket or families.
 * Returns 0 to run, 1 when --help/--version was printed, -EINVAL after printing what is
 * wrong to stderr (procd then exits 2, which its unit does not restart). */
int pd_options_parse(int argc, char **argv, bool classic, pd_options *o);
