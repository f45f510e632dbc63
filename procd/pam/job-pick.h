/* job-pick.h - which of a user's named families a login joins.  Slurm's steps (named
 * "JOBID.STEPID" by procd_spank.so: "12.0", "12.batch", "12.extern") are families of one
 * job: they count as one job, and a login joins the job's extern step (it lives as long as
 * the job, as pam_slurm_adopt's choice), else the job's newest step. */
#pragma once

#include <stddef.h>

#include "procd/job-info.h"

/* jobs: oldest first (ListJobs), n > 0.  Returns the family to join in the newest job and
 * sets *distinct to the number of jobs (Slurm's steps of one job counted once). */
const procd_job_info *pam_job_pick(const procd_job_info *jobs, size_t n, size_t *distinct);
