/* command.h - the transport-independent command layer: one function per ProcFamily
 * operation, typed arguments, typed errors (procd_status from client.h).
 *
 * A transport (D-Bus today) decodes a request, fills a pd_caller from the peer's
 * credentials and calls one of these; it never touches the registry itself.
 *
 * Authorization: uid 0 may do everything.  Any other uid may GetUsage and Dump, and may
 * SignalProcess / SuspendFamily / ContinueFamily / KillFamily / UnregisterFamily only for
 * families whose root process it owns (real uid).  Nobody can signal a process outside a
 * registered family, nor pid <= 1, nor procd itself.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "procd/client.h"
#include "procd/registry.h"
#include "trackers/usage.h"

typedef struct pd_caller {
        uid_t uid;
        pid_t pid; /* 0 when unknown */
} pd_caller;

typedef struct pd_kill_job pd_kill_job;

typedef struct pd_commands {
        pd_registry *reg;
        gid_t gid_min, gid_max;     /* --gid-range; gid_max < gid_min: none */
        uint64_t kill_timeout_usec; /* bound of KillFamily per family */
        uint64_t freeze_timeout_usec;
        void (*quit)(void *userdata);
        void *quit_data;
        GSList *pending_kills;      /* pd_kill_job *, owned (asynchronous KillFamily) */
} pd_commands;

/* KillFamily from the main loop: rounds of PD_KILL_ROUND_USEC per family, a pause of
 * PD_KILL_ROUND_PAUSE_MS between them (other clients are served), until the family and
 * its subfamilies are empty or kill_timeout_usec has passed. */
#define PD_KILL_ROUND_USEC 500000u
#define PD_KILL_ROUND_PAUSE_MS 50u
#define PD_MAX_PENDING_KILLS 256 /* asynchronous KillFamily calls in progress at once */

/* Limits the command layer enforces on string arguments. */
#define PD_MAX_CGROUP_LEN 4096
#define PD_MAX_MARKER_LEN 4096
#define PD_MAX_LOGIN_LEN 256
#define PD_MAX_INTERVAL_SEC 86400u

procd_status pd_cmd_register_subfamily(pd_commands *cm, const pd_caller *who, pid_t root_pid, pid_t watcher_pid,
                                       uint32_t max_snapshot_interval_sec, procd_error *err);
procd_status pd_cmd_track_cgroup(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *cgroup,
                                 procd_error *err);
procd_status pd_cmd_track_environment(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *marker,
                                      procd_error *err);
procd_status pd_cmd_track_login(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *login,
                                procd_error *err);
procd_status pd_cmd_track_allocated_group(pd_commands *cm, const pd_caller *who, pid_t root_pid, gid_t *gid_out,
                                          procd_error *err);
procd_status pd_cmd_track_associated_group(pd_commands *cm, const pd_caller *who, pid_t root_pid, gid_t gid,
                                           procd_error *err);
procd_status pd_cmd_get_usage(pd_commands *cm, const pd_caller *who, pid_t pid, tr_usage *out, procd_error *err);
procd_status pd_cmd_signal_process(pd_commands *cm, const pd_caller *who, pid_t pid, int sig, procd_error *err);
procd_status pd_cmd_suspend_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err);
procd_status pd_cmd_continue_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err);
/* Synchronous: returns once empty or after kill_timeout_usec per family. */
procd_status pd_cmd_kill_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err);
/* Asynchronous (the D-Bus transport uses it): done() is called exactly once, possibly
 * before this returns (validation errors, a family empty after the first round). */
typedef void (*pd_kill_done_fn)(procd_status s, const procd_error *err, void *userdata);
void pd_cmd_kill_family_async(pd_commands *cm, const pd_caller *who, pid_t pid, pd_kill_done_fn done,
                              void *userdata);
/* Finish every pending asynchronous call with an error (shutdown). */
void pd_cmd_cancel_pending(pd_commands *cm);
procd_status pd_cmd_unregister_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err);
procd_status pd_cmd_snapshot(pd_commands *cm, const pd_caller *who, procd_error *err);
/* Families rooted at pid and below (0: all); free with procd_family_info_free. */
procd_status pd_cmd_dump(pd_commands *cm, const pd_caller *who, pid_t pid, procd_family_info **out, size_t *n,
                         procd_error *err);
procd_status pd_cmd_quit(pd_commands *cm, const pd_caller *who, procd_error *err);
