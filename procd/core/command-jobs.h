/* command-jobs.h - jobs and adoption in the command layer (issue 10): name a family as a
 * job, list a user's jobs, move a process into a family's cgroup.
 *
 * Job records live beside the registry (cm->jobs, keyed by root pid): a record whose
 * family is gone or whose root pid now belongs to another process (start time) is dropped
 * when met.  RegisterSubfamily stays what it was (SetFamilyJob names a family after it); RegisterJob
 * (command.h) names the family as it registers it.
 */
#pragma once

#include "procd/core/command.h"
#include "procd/job-info.h"

/* Name the subfamily rooted at root_pid as job job_id (printable ASCII, 1..127 bytes)
 * running for owner_uid.  Root may name any family for any uid; another caller only a
 * family it owns, for itself.  Naming again replaces the record (and its time). */
procd_status pd_cmd_set_family_job(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *job_id,
                                   uid_t owner_uid, procd_error *err);

/* The record behind SetFamilyJob, without its checks: root_pid (started at start_ticks) is
 * job job_id (valid) of owner_uid.  RegisterJob writes it before the family is registered
 * (so that the "registered" event carries the job) and drops it (pd_cmd_forget_job) when the
 * registration fails. */
void pd_cmd_record_job(pd_commands *cm, pid_t root_pid, uint64_t start_ticks, const char *job_id, uid_t owner_uid);
void pd_cmd_forget_job(pd_commands *cm, pid_t root_pid);

/* The jobs of uid ((uid_t) -1: every job, root only; a non-root caller may list only its
 * own), oldest first.  *out malloc'd (free()). */
procd_status pd_cmd_list_jobs(pd_commands *cm, const pd_caller *who, uid_t uid, procd_job_info **out, size_t *n,
                              procd_error *err);

/* Root only: move process pid into the cgroup of the subfamily rooted at family_root, in
 * every hierarchy where that cgroup exists (the family's own leaf when procd made its
 * cgroup).  Refused for pid <= 1, procd and its ancestors, and families without a cgroup. */
procd_status pd_cmd_adopt_process(pd_commands *cm, const pd_caller *who, pid_t pid, pid_t family_root,
                                  procd_error *err);

/* The job id of the family rooted at root_pid, NULL when it was not named (or its record
 * is stale).  Valid until the next call that changes the records. */
const char *pd_cmd_job_of(pd_commands *cm, pid_t root_pid);

/* Free the job records (shutdown). */
void pd_cmd_jobs_free(pd_commands *cm);
