/* types.h - procd's transport-neutral types: the status of every operation, the error
 * object, and one family's description.  Shared by the command layer, every transport
 * (D-Bus, classic FIFO) and the client library; it needs no transport library. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* Every status but PROCD_OK with its short name, the last part of its D-Bus error name
 * (wire.h): one list, so that the names cannot drift from the enum. */
#define PROCD_STATUS_NAMES(X)                                \
        X(PROCD_E_BAD_ROOT_PID, "BadRootPid")               \
        X(PROCD_E_BAD_WATCHER_PID, "BadWatcherPid")         \
        X(PROCD_E_BAD_INTERVAL, "BadInterval")              \
        X(PROCD_E_ALREADY_REGISTERED, "AlreadyRegistered")  \
        X(PROCD_E_FAMILY_NOT_FOUND, "FamilyNotFound")       \
        X(PROCD_E_PROCESS_NOT_FOUND, "ProcessNotFound")     \
        X(PROCD_E_NOT_IN_FAMILY, "NotInFamily")             \
        X(PROCD_E_ROOT_FAMILY, "RootFamily")                \
        X(PROCD_E_BAD_CGROUP, "BadCgroup")                  \
        X(PROCD_E_NO_GID, "NoGidAvailable")                 \
        X(PROCD_E_PERMISSION, "PermissionDenied")           \
        X(PROCD_E_BAD_ARGUMENT, "BadArgument")              \
        X(PROCD_E_UNKILLABLE, "Unkillable")                 \
        X(PROCD_E_INTERNAL, "Internal")                     \
        X(PROCD_E_TRANSPORT, "Transport")

typedef struct procd_error {
        procd_status status;
        char msg[512];
} procd_error;

/* RegisterSubfamily flags (RegisterSubfamilyWithFlags). */
#define PROCD_REGISTER_KILL_ON_WATCHER_EXIT 1u /* the watcher's exit kills the family and
                                                  removes its cgroup (default: unregister) */

typedef struct procd_family_info {
        pid_t root_pid;
        uint64_t root_start_ticks;
        pid_t watcher_pid;
        pid_t parent_root_pid;   /* 0 for the root family */
        char tracking[128];      /* "cgroup:/jobs/job_42", "environment:K=V", "login:alice",
                                    "gid:5012", "parent" (the /proc parent tree) */
        char source[32];         /* tracker answering now: "cgroup", "proc" */
        char state[16];          /* "running", "frozen" (suspended), "killing", "killed" (a
                                    KillFamily was done) */
        pid_t *members;
        size_t n_members;
} procd_family_info;

void procd_family_info_free(procd_family_info *infos, size_t n);

#ifdef __cplusplus
}
#endif
