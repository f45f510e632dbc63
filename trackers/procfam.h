/* procfam.h - the /proc tracker: a family found by scanning /proc.  The fallback for any
 * cgroup operation that fails, and the classic way (HTCondor's procd) for families with no
 * cgroup.
 *
 * Membership: the root (pid + start time) and its descendants by parent tree (a parent not
 * born after its child, so pid reuse cannot adopt strangers), plus descendants of seed pids
 * (members the cgroup reported last), plus any process whose environ holds the marker, whose
 * real uid is the login uid, or whose supplementary groups hold the gid.
 *
 * Known limits, inherent to scanning (stated in the API docs and measured in NOTES):
 *  - usage is as fresh as the last scan (max_age_usec);
 *  - CPU a member used between its last scan and its exit is lost: an exited member's CPU
 *    is kept only from its last seen values -- except when a live member reaps it (wait()):
 *    its full CPU then shows in the reaper's cutime/cstime, which usage counts (procfam.c);
 *  - a double-forked, setsid'd process that appears and leaves between scans escapes.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h" /* tr_kill_result, tr_freeze_state */
#include "error.h"
#include "pidset.h"
#include "procscan.h"
#include "usage.h"

typedef struct tr_procfam_spec {
        pid_t root_pid;             /* > 1 */
        uint64_t root_start_ticks;  /* 0: read it now (then the root must be alive) */
        const char *env_marker;     /* "NAME=VALUE" or NULL */
        bool by_login;
        uid_t login_uid;
        bool by_gid;
        gid_t gid;
        uint64_t max_age_usec;      /* members/usage rescan when the last scan is older (0: always) */
} tr_procfam_spec;

typedef struct tr_procfam tr_procfam;

int tr_procfam_new(const tr_procfam_spec *spec, tr_procfam **out, tr_error *err);
void tr_procfam_free(tr_procfam *f);

/* TR_SCAN_* bits a scan must carry for this family, and its marker (or NULL). */
unsigned tr_procfam_scan_wants(const tr_procfam *f);
const char *tr_procfam_env_marker(const tr_procfam *f);

/* Recompute membership and accounting from a scan shared by many families.  marker_index is
 * the index of this family's marker in the scan's env_markers (-1: none).  Pids in
 * `exclude` (members of more specific subfamilies; may be NULL) are not members.
 * With the scan's children index (tr_scan_has_index) a family tracked by tree/seeds costs
 * O(members + their children) (x log n), independent of the other processes; with a
 * marker (marker_index >= 0), login uid or gid it also looks at every process. */
int tr_procfam_update(tr_procfam *f, const tr_scan *scan, int marker_index, const tr_pidset *exclude);

/* Take a private scan when the last update is older than max_age_usec. */
int tr_procfam_refresh(tr_procfam *f, tr_error *err);

/* Known members (e.g. what the cgroup listed last): they and their descendants count. */
int tr_procfam_set_seeds(tr_procfam *f, const tr_pidset *pids);
/* Same, the seeds' start times taken from scan instead of the live /proc (a pid absent
 * from scan names nobody): for a caller holding a scan, and for fixture trees. */
int tr_procfam_set_seeds_at(tr_procfam *f, const tr_scan *scan, const tr_pidset *pids);

/* After tr_procfam_refresh (done inside when stale): */
int tr_procfam_members(tr_procfam *f, tr_pidset *out, tr_error *err);
/* CPU = live members' utime+stime + exited members' last seen values, plus (when no
 * exclude set is in force) the CPU of members reaped by live members, taken from the
 * reapers' cutime/cstime growth; rss/vsize summed over live members; io = members' io
 * (which includes what they reaped) + last seen io of exited members no member reaped;
 * num_procs = live members.  CPU and io reports never decrease.  Fields TR_SRC_PROC. */
int tr_procfam_usage(tr_procfam *f, tr_usage *out, tr_error *err);
/* Signal every member (pid + start time checked through a pidfd). */
int tr_procfam_signal(tr_procfam *f, int sig, tr_error *err);
/* Kill spree: SIGSTOP members, rescan until no new member appears, SIGKILL, SIGCONT; repeat
 * until the family is empty or timeout_usec.  method = "proc spree". */
int tr_procfam_kill(tr_procfam *f, uint64_t timeout_usec, tr_kill_result *res, tr_error *err);
/* Freeze = SIGSTOP to every member, rescanning until no new member; thaw = SIGCONT. */
int tr_procfam_freeze(tr_procfam *f, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err);
int tr_procfam_thaw(tr_procfam *f, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err);
int tr_procfam_populated(tr_procfam *f, bool *populated, tr_error *err);

/* CPU (usec) kept from members seen earlier that have since exited, by their last seen
 * utime+stime only (the classic accounting; for tests/NOTES). */
uint64_t tr_procfam_exited_cpu_usec(const tr_procfam *f);
