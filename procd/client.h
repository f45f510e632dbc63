/* client.h - procd client library: one synchronous call per ProcFamily operation, over
 * the D-Bus peer-to-peer socket.  Used by procctl, procd-starter and the tests.
 *
 * Every call returns a procd_status (PROCD_OK == 0) and, on failure, fills err (may be
 * NULL) with the status and the daemon's (or transport's) message.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trackers/usage.h"

#define PROCD_DEFAULT_SOCKET "/run/procd/procd.sock"
#define PROCD_DBUS_INTERFACE "org.procd.ProcFamily1"
#define PROCD_DBUS_PATH "/org/procd/ProcFamily"

typedef enum procd_status {
        PROCD_OK = 0,
        PROCD_E_BAD_ROOT_PID,       /* org.procd.Error.BadRootPid */
        PROCD_E_BAD_WATCHER_PID,    /* org.procd.Error.BadWatcherPid */
        PROCD_E_BAD_INTERVAL,       /* org.procd.Error.BadInterval */
        PROCD_E_ALREADY_REGISTERED, /* org.procd.Error.AlreadyRegistered */
        PROCD_E_FAMILY_NOT_FOUND,   /* org.procd.Error.FamilyNotFound */
        PROCD_E_PROCESS_NOT_FOUND,  /* org.procd.Error.ProcessNotFound */
        PROCD_E_NOT_IN_FAMILY,      /* org.procd.Error.NotInFamily */
        PROCD_E_ROOT_FAMILY,        /* org.procd.Error.RootFamily: cannot unregister it */
        PROCD_E_BAD_CGROUP,         /* org.procd.Error.BadCgroup */
        PROCD_E_NO_GID,             /* org.procd.Error.NoGidAvailable */
        PROCD_E_PERMISSION,         /* org.procd.Error.PermissionDenied */
        PROCD_E_BAD_ARGUMENT,       /* org.procd.Error.BadArgument (signal out of range...) */
        PROCD_E_UNKILLABLE,         /* org.procd.Error.Unkillable: kill bound hit, pids named */
        PROCD_E_INTERNAL,           /* org.procd.Error.Internal */
        PROCD_E_TRANSPORT,          /* no daemon, connection lost, malformed reply (client side) */
        PROCD_STATUS_COUNT
} procd_status;

const char *procd_status_dbus_name(procd_status s); /* "org.procd.Error.BadRootPid" */
procd_status procd_status_from_dbus_name(const char *name);

typedef struct procd_error {
        procd_status status;
        char msg[512];
} procd_error;

typedef struct procd_client procd_client;

/* Connect to the daemon's socket (NULL: PROCD_DEFAULT_SOCKET); PROCD_E_TRANSPORT when no
 * daemon listens. */
procd_status procd_connect(const char *socket_path, procd_client **out, procd_error *err);
void procd_disconnect(procd_client *c);
/* When procd restarts (or crashes and is started again) the connection is lost: the next
 * call reconnects, trying every 100 ms for up to timeout_ms (default 10000; 0: never),
 * then sends the call (again, for a call lost with the connection, except SignalProcess
 * and Quit; a repeated registration answered AlreadyRegistered counts as done). */
void procd_set_reconnect(procd_client *c, unsigned timeout_ms);
/* How many times the client reconnected. */
unsigned procd_reconnects(const procd_client *c);

procd_status procd_register_subfamily(procd_client *c, pid_t root_pid, pid_t watcher_pid,
                                      uint32_t max_snapshot_interval_sec, procd_error *err);
/* RegisterSubfamily with flags (RegisterSubfamilyWithFlags on the wire). */
#define PROCD_REGISTER_KILL_ON_WATCHER_EXIT 1u /* the watcher's exit kills the family and
                                                  removes its cgroup (default: unregister) */
procd_status procd_register_subfamily_flags(procd_client *c, pid_t root_pid, pid_t watcher_pid,
                                            uint32_t max_snapshot_interval_sec, uint32_t flags, procd_error *err);
procd_status procd_track_via_cgroup(procd_client *c, pid_t root_pid, const char *cgroup, procd_error *err);
procd_status procd_track_via_environment(procd_client *c, pid_t root_pid, const char *marker, procd_error *err);
procd_status procd_track_via_login(procd_client *c, pid_t root_pid, const char *login, procd_error *err);
/* Allocated group: the daemon picks a gid from its --gid-range and returns it. */
procd_status procd_track_via_allocated_group(procd_client *c, pid_t root_pid, gid_t *gid_out, procd_error *err);
procd_status procd_track_via_associated_group(procd_client *c, pid_t root_pid, gid_t gid, procd_error *err);

/* pid 0 = the root family.  The record says which source answered. */
procd_status procd_get_usage(procd_client *c, pid_t pid, tr_usage *out, procd_error *err);
procd_status procd_signal_process(procd_client *c, pid_t pid, int sig, procd_error *err);
procd_status procd_suspend_family(procd_client *c, pid_t pid, procd_error *err);
procd_status procd_continue_family(procd_client *c, pid_t pid, procd_error *err);
/* Replies once the family and its subfamilies are empty, or PROCD_E_UNKILLABLE naming what
 * would not die. */
procd_status procd_kill_family(procd_client *c, pid_t pid, procd_error *err);
procd_status procd_unregister_family(procd_client *c, pid_t pid, procd_error *err);
procd_status procd_snapshot(procd_client *c, procd_error *err);
procd_status procd_quit(procd_client *c, procd_error *err);

typedef struct procd_family_info {
        pid_t root_pid;
        uint64_t root_start_ticks;
        pid_t watcher_pid;
        pid_t parent_root_pid;   /* 0 for the root family */
        char tracking[128];      /* "cgroup:/jobs/job_42", "environment:K=V", "login:alice",
                                    "gid:5012", "parent" (the /proc parent tree) */
        char source[32];         /* tracker answering now: "cgroup", "proc" */
        char state[16];          /* "running", "frozen" (suspended), "killing" */
        pid_t *members;
        size_t n_members;
} procd_family_info;

/* Dump(pid; 0 = all families). */
procd_status procd_dump(procd_client *c, pid_t pid, procd_family_info **out, size_t *n, procd_error *err);
void procd_family_info_free(procd_family_info *infos, size_t n);
