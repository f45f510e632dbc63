/* list-jobs SOCKET - print procd's named families (ListJobs, all uids), one per line:
 * "JOB_ID ROOT_PID OWNER_UID".  procctl has no command for it. */
#include <stdio.h>
#include <stdlib.h>

#include "procd/client.h"

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: list-jobs SOCKET\n");
                return 2;
        }
        procd_client *c = NULL;
        procd_error err = { 0 };
        procd_job_info *jobs = NULL;
        size_t n = 0;
        if (procd_connect(argv[1], &c, &err) != PROCD_OK || procd_list_jobs(c, (uid_t) -1, &jobs, &n, &err) != PROCD_OK) {
                fprintf(stderr, "list-jobs: %s\n", err.msg);
                procd_disconnect(c);
                return 1;
        }
        for (size_t i = 0; i < n; i++)
                printf("%s %d %u\n", jobs[i].job_id, (int) jobs[i].root_pid, (unsigned) jobs[i].owner_uid);
        free(jobs);
        procd_disconnect(c);
        return 0;
}
