/* job-info.h - a job as procd knows it: a registered family that its starter named
 * (SetFamilyJob), for callers that look a user's jobs up (the PAM adoption module). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROCD_JOB_ID_MAX 128

typedef struct procd_job_info {
        pid_t root_pid;                 /* the family's root */
        uid_t owner_uid;                /* the user the job runs for */
        char job_id[PROCD_JOB_ID_MAX];  /* the scheduler's id ("1234.0", "slurm-77") */
        uint64_t registered_usec;       /* when it was named (CLOCK_REALTIME, microseconds) */
} procd_job_info;

/* A job id is 1..PROCD_JOB_ID_MAX-1 printable ASCII characters without spaces. */
static inline bool procd_job_id_valid(const char *s)
{
        size_t n = s ? strlen(s) : 0;
        if (n == 0 || n >= PROCD_JOB_ID_MAX)
                return false;
        for (; *s; s++)
                if ((unsigned char) *s < 0x21 || (unsigned char) *s > 0x7e)
                        return false;
        return true;
}

#ifdef __cplusplus
}
#endif
