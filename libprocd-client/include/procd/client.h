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

#include "procd/job-info.h"
#include "procd/version.h"
#include "procd/types.h"
#include "procd/usage.h"
#include "procd/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct procd_client procd_client;

/* The library's version, PROCD_VERSION of the build that made it ("0.1.0"). */
const char *procd_client_version(void);

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
procd_status procd_register_subfamily_flags(procd_client *c, pid_t root_pid, pid_t watcher_pid,
                                            uint32_t max_snapshot_interval_sec, uint32_t flags, procd_error *err);
/* RegisterJob (libprocd-client 0.1.1 on, node PROCD_CLIENT_1.1): register_subfamily_flags +
 * track_via_cgroup + set_family_job in one call, for a job root_pid its starter already
 * placed in cgroup: tracked through that cgroup (no family cgroup made, nothing moved),
 * named job_id of owner_uid.  The same checks as the three calls.  A procd without it answers
 * PROCD_E_BAD_ARGUMENT with "unknown method RegisterJob": make the three calls then.  cgroup
 * must be UTF-8 (PROCD_E_BAD_ARGUMENT, nothing sent, otherwise: the three calls take it). */
procd_status procd_register_job(procd_client *c, pid_t root_pid, pid_t watcher_pid, uint32_t max_snapshot_interval_sec,
                                uint32_t flags, const char *cgroup, const char *job_id, uid_t owner_uid,
                                procd_error *err);
/* A cgroup path that is not UTF-8 is sent as bytes (TrackFamilyViaCgroupBytes). */
procd_status procd_track_via_cgroup(procd_client *c, pid_t root_pid, const char *cgroup, procd_error *err);
procd_status procd_track_via_environment(procd_client *c, pid_t root_pid, const char *marker, procd_error *err);
procd_status procd_track_via_login(procd_client *c, pid_t root_pid, const char *login, procd_error *err);
/* Allocated group: the daemon picks a gid from its --gid-range and returns it. */
procd_status procd_track_via_allocated_group(procd_client *c, pid_t root_pid, gid_t *gid_out, procd_error *err);
procd_status procd_track_via_associated_group(procd_client *c, pid_t root_pid, gid_t gid, procd_error *err);

/* What GetUsage tells beyond the usage record. */
typedef struct procd_usage_extra {
        bool cpu_percent_available;        /* false on the first GetUsage of a family */
        double cpu_percent;                /* 100 = one core busy, over the interval below */
        uint64_t cpu_percent_interval_usec; /* since the previous GetUsage of this family
                                              (any client): procd's two readings */
        /* the limits set on the family's cgroup, each available only where set */
        procd_u64 memory_max_bytes;        /* memory.max (v1 memory.limit_in_bytes) */
        procd_u64 cpu_max_quota_usec;      /* cpu.max: quota / period = cores */
        procd_u64 cpu_max_period_usec;
        procd_u64 pids_max;
} procd_usage_extra;

/* GetUsage with the extras (extra may be NULL: then it is procd_get_usage). */
procd_status procd_get_usage_extra(procd_client *c, pid_t pid, procd_usage *out, procd_usage_extra *extra,
                                   procd_error *err);

/* pid 0 = the root family.  The record says which source answered. */
procd_status procd_get_usage(procd_client *c, pid_t pid, procd_usage *out, procd_error *err);
procd_status procd_signal_process(procd_client *c, pid_t pid, int sig, procd_error *err);
procd_status procd_suspend_family(procd_client *c, pid_t pid, procd_error *err);
procd_status procd_continue_family(procd_client *c, pid_t pid, procd_error *err);
/* Replies once the family and its subfamilies are empty, or PROCD_E_UNKILLABLE naming what
 * would not die. */
procd_status procd_kill_family(procd_client *c, pid_t pid, procd_error *err);
procd_status procd_unregister_family(procd_client *c, pid_t pid, procd_error *err);
/* KillAndUnregisterFamily (libprocd-client 0.1.1 on, node PROCD_CLIENT_1.1): kill_family,
 * then unregister_family once the family is empty, in one call; returns after both.  Refused
 * (nothing changed) where kill_family would be; a kill that fails (PROCD_E_UNKILLABLE) leaves
 * the family registered.  A procd without it answers PROCD_E_BAD_ARGUMENT with "unknown
 * method KillAndUnregisterFamily": make the two calls then. */
procd_status procd_kill_and_unregister_family(procd_client *c, pid_t pid, procd_error *err);
procd_status procd_snapshot(procd_client *c, procd_error *err);
procd_status procd_quit(procd_client *c, procd_error *err);

/* Dump(pid; 0 = all families). */
procd_status procd_dump(procd_client *c, pid_t pid, procd_family_info **out, size_t *n, procd_error *err);

/* Jobs and adoption (command-jobs.h): name a family as a job, list a uid's jobs ((uid_t) -1:
 * all, root only; *out malloc'd, oldest first), move a process into a family's cgroup
 * (root only). */
procd_status procd_set_family_job(procd_client *c, pid_t root_pid, const char *job_id, uid_t owner_uid,
                                  procd_error *err);
procd_status procd_list_jobs(procd_client *c, uid_t uid, procd_job_info **out, size_t *n, procd_error *err);
procd_status procd_adopt_process(procd_client *c, pid_t pid, pid_t family_root, procd_error *err);

/* GetMetrics: procd and its families in the Prometheus text format (what `procctl metrics`
 * prints); *text malloc'd (free()). */
procd_status procd_get_metrics(procd_client *c, char **text, procd_error *err);

/* Events: procd's signals (org.procd.ProcFamily1, procd-dbus(7)), read by blocking.
 *
 *   procd_subscribe(c, &err);
 *   for (;;) {
 *           procd_event ev;
 *           bool got;
 *           if (procd_next_event(c, -1, &ev, &got, &err) != PROCD_OK)
 *                   break;                    // connection lost: connect and subscribe again
 *           ...ev.name, ev.root_pid, ev.job...
 *   }
 *
 * procd_next_event waits up to timeout_ms (-1: no limit; 0: only what has arrived) and
 * returns PROCD_OK with *got true and *out filled, or PROCD_OK with *got false when the time
 * ran out, or PROCD_E_TRANSPORT when the connection is lost (a subscription does not survive
 * a reconnection).  Calls made on the same client meanwhile keep the events that arrive
 * during them for the next procd_next_event.  procd never waits for a subscriber: one that
 * reads too slowly loses events, and the next event it gets says how many (dropped).  To
 * wait in a poll loop of your own, use a client of its own for events and call
 * procd_next_event(c, 0, ...) when procd_client_fd(c) is readable. */
typedef struct procd_event {
        char name[32];        /* the signal: "FamilyRegistered", "FamilyEmptied", "FamilyOomKill",
                                 "FamilyFrozen", "FamilyThawed", "FamilyKilling",
                                 "FamilyUnkillable", "FamiliesRestored" */
        pid_t root_pid;       /* the family; 0 for FamiliesRestored */
        char job[128];        /* its job id (SetFamilyJob), "" when none */
        uint64_t dropped;     /* events this subscriber lost just before this one */
        uint64_t oom_kills;   /* FamilyOomKill: kills since the previous FamilyOomKill */
        uint64_t oom_kills_total; /* FamilyOomKill: the family's count */
        uint64_t families;    /* FamiliesRestored: families restored at start */
        char message[512];    /* FamilyUnkillable: what would not die */
        bool has_usage;       /* FamilyEmptied: usage is the family's final usage */
        procd_usage usage;
} procd_event;

procd_status procd_subscribe(procd_client *c, procd_error *err);
procd_status procd_unsubscribe(procd_client *c, procd_error *err);
procd_status procd_next_event(procd_client *c, int timeout_ms, procd_event *out, bool *got, procd_error *err);
/* The connection's socket (for poll), -1 when there is none. */
int procd_client_fd(procd_client *c);

#ifdef __cplusplus
}
#endif
