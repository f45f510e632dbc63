/* command.h - the transport-independent command layer: one function per ProcFamily
 * operation, typed arguments, typed errors (procd_status from types.h).
 *
 * A transport (D-Bus today) decodes a request, fills a pd_caller from the peer's
 * credentials and calls one of these; it never touches the registry itself.
 *
 * Authorization: uid 0 may do everything (a confined caller, pd_caller.confined, within
 * condor_procd's limits only).  Any other uid may GetUsage and Dump, and may
 * SignalProcess / SuspendFamily / ContinueFamily / KillFamily / UnregisterFamily only for
 * families whose root process it owns (real uid).  Nobody can signal a process outside a
 * registered family, nor pid <= 1, nor procd itself.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "procd/types.h"
#include "procd/core/registry.h"
#include "procd/core/usage-meter.h"
#include "trackers/usage.h"

typedef struct pd_caller {
        uid_t uid;
        pid_t pid; /* 0 when unknown */
        /* No more authority than condor_procd gave (classic requests): RegisterSubfamily
         * only of a process inside the root family's tree (else PROCD_E_NOT_IN_FAMILY,
         * nothing moved); TrackFamilyViaCgroup only of a cgroup below the family cgroup
         * base or cm->classic_cgroup_base (else PROCD_E_BAD_CGROUP, nothing made). */
        bool confined;
        /* For the audit trail (audit.h): the face that asked, "dbus" or "classic" (NULL:
         * procd itself or an in-process caller), and for a classic request the reply FIFO's
         * owner (uid is what that maps to: the principal counts as root). */
        const char *via;
        uid_t fifo_uid;
} pd_caller;

typedef struct pd_job pd_job;
typedef struct pd_stats pd_stats;

typedef struct pd_commands {
        pd_registry *reg;
        gid_t gid_min, gid_max;     /* --gid-range; gid_max < gid_min: none */
        uint64_t kill_timeout_usec; /* bound of KillFamily per family */
        uint64_t freeze_timeout_usec;
        void (*quit)(void *userdata);
        void *quit_data;
        GSList *pending_jobs;       /* pd_job *, owned (asynchronous Kill/Suspend/ContinueFamily) */
        GHashTable *jobs;           /* root pid -> job record (command-jobs.c), NULL until used */
        pd_usage_meter *meter;      /* GetUsage's earlier readings, for every transport; NULL until used */
        const char *classic_cgroup_base; /* a confined caller's other cgroup base (NULL: none) */
        pd_stats *stats;            /* procd's own counters (stats.h), NULL: not counted */
        struct pd_events *events;   /* frozen/thawed/killing/unkillable go there (NULL: none) */
} pd_commands;

/* KillFamily from the main loop: rounds of PD_KILL_ROUND_USEC per family, a pause of
 * PD_KILL_ROUND_PAUSE_MS between them (other clients are served), until the family and
 * its subfamilies are empty or kill_timeout_usec has passed. */
#define PD_KILL_ROUND_USEC 500000u
#define PD_KILL_ROUND_PAUSE_MS 50u
/* SuspendFamily/ContinueFamily from the main loop: rounds of PD_FREEZE_ROUND_USEC per
 * family, PD_FREEZE_ROUND_PAUSE_MS between them, until every family reached the state or
 * freeze_timeout_usec has passed (then answered OK: the freeze was asked, a member in D
 * state delays it, as the synchronous call). */
#define PD_FREEZE_ROUND_USEC 20000u
#define PD_FREEZE_ROUND_PAUSE_MS 20u
/* Asynchronous calls in progress at once: non-root callers share PD_MAX_PENDING_JOBS, at
 * most PD_MAX_PENDING_JOBS_PER_UID each; root has PD_MAX_PENDING_JOBS_ROOT more on top. */
#define PD_MAX_PENDING_JOBS 256
#define PD_MAX_PENDING_JOBS_PER_UID 16
#define PD_MAX_PENDING_JOBS_ROOT 256

/* Limits the command layer enforces on string arguments. */
#define PD_MAX_CGROUP_LEN 4096
#define PD_MAX_MARKER_LEN 4096
#define PD_MAX_LOGIN_LEN 256
#define PD_MAX_INTERVAL_SEC 86400u

procd_status pd_cmd_register_subfamily(pd_commands *cm, const pd_caller *who, pid_t root_pid, pid_t watcher_pid,
                                       uint32_t max_snapshot_interval_sec, procd_error *err);
/* flags: PROCD_REGISTER_* (client.h); BadArgument for unknown bits. */
procd_status pd_cmd_register_subfamily_flags(pd_commands *cm, const pd_caller *who, pid_t root_pid,
                                             pid_t watcher_pid, uint32_t max_snapshot_interval_sec, uint32_t flags,
                                             procd_error *err);
procd_status pd_cmd_track_cgroup(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *cgroup,
                                 procd_error *err);
/* RegisterJob: RegisterSubfamilyWithFlags + TrackFamilyViaCgroup + SetFamilyJob in one call,
 * with the checks of all three (root only; a confined caller's cgroup below its bases; the
 * cgroup acceptable; a valid job id) made before anything changes.  A root already sitting
 * in the cgroup is registered tracked through it (no family cgroup made, nothing moved,
 * saved once); else as the three calls would (registered, then moved in; unregistered again
 * when the move fails).  Audited as "register" with the job. */
typedef struct pd_job_registration {
        pid_t root_pid, watcher_pid;
        uint32_t interval_sec, flags; /* as RegisterSubfamilyWithFlags */
        const char *cgroup;           /* as TrackFamilyViaCgroup */
        const char *job_id;           /* as SetFamilyJob */
        uid_t owner_uid;
} pd_job_registration;
procd_status pd_cmd_register_job(pd_commands *cm, const pd_caller *who, const pd_job_registration *j,
                                 procd_error *err);
/* The refusals every cgroup a family is to track goes through, at registration and at
 * restore alike: a bad path, "/", a cgroup that holds procd (its own or an ancestor), one
 * another family than f (NULL: any family) tracks.  PROCD_E_BAD_CGROUP with the reason. */
procd_status pd_cmd_cgroup_acceptable(pd_commands *cm, const char *cgroup, const pd_family *f, procd_error *err);
procd_status pd_cmd_track_environment(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *marker,
                                      procd_error *err);
procd_status pd_cmd_track_login(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *login,
                                procd_error *err);
procd_status pd_cmd_track_allocated_group(pd_commands *cm, const pd_caller *who, pid_t root_pid, gid_t *gid_out,
                                          procd_error *err);
procd_status pd_cmd_track_associated_group(pd_commands *cm, const pd_caller *who, pid_t root_pid, gid_t gid,
                                           procd_error *err);
/* The usage of the family of pid (0: the root family), the groups of fields in want (enum
 * tr_usage_want; TR_WANT_ALL: all) only: a transport whose record has fewer fields asks for
 * fewer reads.  reading (NULL: none wanted) gets the one usage meter's reading (percent CPU
 * since the family's last metered query, by whichever transport, and its running maximum
 * image), keyed by the family's root pid (0: the root family). */
procd_status pd_cmd_get_usage(pd_commands *cm, const pd_caller *who, pid_t pid, unsigned want, tr_usage *out,
                              pd_usage_reading *reading, procd_error *err);
procd_status pd_cmd_signal_process(pd_commands *cm, const pd_caller *who, pid_t pid, int sig, procd_error *err);
/* Synchronous (in-process callers): one pass bounded by freeze_timeout_usec per family. */
procd_status pd_cmd_suspend_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err);
procd_status pd_cmd_continue_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err);
/* Synchronous: returns once empty or after kill_timeout_usec per family. */
procd_status pd_cmd_kill_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err);
/* Asynchronous (the D-Bus transport uses these): done() is called exactly once, possibly
 * before this returns (validation errors, a call done after its first round).  The caller's
 * right is checked again before every round.  A new call on a family answers (OK) the
 * pending suspend/continue calls on that family, its subfamilies and its parents that
 * root or the same uid made. */
typedef enum pd_job_kind { PD_JOB_KILL, PD_JOB_SUSPEND, PD_JOB_CONTINUE } pd_job_kind;
typedef void (*pd_job_done_fn)(procd_status s, const procd_error *err, void *userdata);
void pd_cmd_family_async(pd_commands *cm, const pd_caller *who, pd_job_kind kind, pid_t pid, pd_job_done_fn done,
                         void *userdata);
/* KillAndUnregisterFamily: KillFamily, then, once the family is empty, UnregisterFamily, both
 * saved in one state write before done() (OK: killed and unregistered).  Refused (nothing
 * changed) where KillFamily would be: its rights cover UnregisterFamily's.  A kill that fails
 * (Unkillable, an error) leaves the family registered and answers as KillFamily would.
 * Audited "kill", then "unregister" when that was done. */
void pd_cmd_kill_and_unregister_async(pd_commands *cm, const pd_caller *who, pid_t pid, pd_job_done_fn done,
                                      void *userdata);
/* Finish every pending asynchronous call with an error (shutdown). */
void pd_cmd_cancel_pending(pd_commands *cm);
procd_status pd_cmd_unregister_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err);
procd_status pd_cmd_snapshot(pd_commands *cm, const pd_caller *who, procd_error *err);
/* Families rooted at pid and below (0: all); free with procd_family_info_free. */
procd_status pd_cmd_dump(pd_commands *cm, const pd_caller *who, pid_t pid, procd_family_info **out, size_t *n,
                         procd_error *err);
/* The registry's watcher hook (userdata: pd_commands *): unregister, or for a family
 * registered kill-on-watcher-exit, KillFamily then remove its cgroup and unregister. */
void pd_cmd_watcher_exited(void *userdata, pd_family *f);
/* After a restart: finish a KillFamily that was in progress, re-apply a suspend. */
void pd_cmd_resume(pd_commands *cm, pd_family *f);
procd_status pd_cmd_quit(pd_commands *cm, const pd_caller *who, procd_error *err);
/* Free what the command layer keeps (the job records, the usage meter). */
void pd_cmd_clear(pd_commands *cm);
