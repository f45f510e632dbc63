#include "job-pick.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

static bool all_digits(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (!isdigit((unsigned char) *s))
                        return false;
        return true;
}

/* The length of the job part of a name shaped like a Slurm step ("12" of "12.0",
 * "12.batch", "12.extern", "12.interactive"); *named_step: the step is one of the named
 * ones.  0 for any other name. */
static size_t step_shape(const char *id, bool *named_step)
{
        size_t i = 0;
        while (isdigit((unsigned char) id[i]))
                i++;
        *named_step = false;
        if (i == 0 || id[i] != '.')
                return 0;
        const char *step = id + i + 1;
        *named_step = strcmp(step, "batch") == 0 || strcmp(step, "extern") == 0 || strcmp(step, "interactive") == 0;
        return *named_step || all_digits(step) ? i : 0;
}

/* The job part's length when jobs[k] is a Slurm step: shaped like one, and its job has a
 * batch, extern or interactive step here (so that HTCondor's "1234.0" and "1234.1", two
 * jobs of one cluster, stay two jobs).  0 otherwise. */
static size_t slurm_job_len(const procd_job_info *jobs, size_t n, size_t k)
{
        bool named;
        size_t len = step_shape(jobs[k].job_id, &named);
        for (size_t i = 0; len && !named && i < n; i++) {
                bool other_named;
                named = step_shape(jobs[i].job_id, &other_named) == len && other_named &&
                        strncmp(jobs[i].job_id, jobs[k].job_id, len) == 0;
        }
        return named ? len : 0;
}

/* Whether jobs[a] and jobs[b] are families of the same job. */
static bool same_job(const procd_job_info *jobs, size_t n, size_t a, size_t b)
{
        size_t la = slurm_job_len(jobs, n, a), lb = slurm_job_len(jobs, n, b);
        if (la == 0 || lb == 0)
                return a == b;
        return la == lb && strncmp(jobs[a].job_id, jobs[b].job_id, la) == 0;
}

const procd_job_info *pam_job_pick(const procd_job_info *jobs, size_t n, size_t *distinct)
{
        *distinct = 0;
        for (size_t i = 0; i < n; i++) {
                bool seen = false;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = same_job(jobs, n, i, j);
                *distinct += !seen;
        }
        size_t newest = n - 1, len = slurm_job_len(jobs, n, newest);
        for (size_t i = 0; len && i < n; i++)
                if (same_job(jobs, n, i, newest) && strcmp(jobs[i].job_id + len, ".extern") == 0)
                        return &jobs[i];
        return &jobs[newest];
}
