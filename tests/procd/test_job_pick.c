/* pam_procd_adopt's choice of the job a login joins (procd/pam/job-pick.c): one line per
 * case through check_pick. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "../../procd/pam/job-pick.h"
#include "testsupport.h"

/* names: the user's named families, oldest first, separated by spaces. */
static void check_pick(const char *names, const char *want, size_t want_distinct)
{
        procd_job_info jobs[8];
        size_t n = 0;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", names);
        for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < 8; t = strtok_r(NULL, " ", &save)) {
                memset(&jobs[n], 0, sizeof jobs[n]);
                snprintf(jobs[n].job_id, sizeof jobs[n].job_id, "%s", t);
                jobs[n].root_pid = (pid_t) (100 + n);
                n++;
        }
        size_t distinct = 0;
        const procd_job_info *got = pam_job_pick(jobs, n, &distinct);
        if (strcmp(got->job_id, want) != 0 || distinct != want_distinct)
                printf("\n  [%s]: got %s (%zu jobs), want %s (%zu jobs)\n", names, got->job_id, distinct, want,
                       want_distinct);
        CU_ASSERT_STRING_EQUAL(got->job_id, want);
        CU_ASSERT_EQUAL(distinct, want_distinct);
}

static void test_pick(void)
{
        check_pick("job-a", "job-a", 1);
        check_pick("job-a job-b", "job-b", 2);
        check_pick("12.extern 12.batch 12.0", "12.extern", 1);       /* one Slurm job: its extern step */
        check_pick("12.batch 12.0 12.1", "12.1", 1);                 /* no extern step: the newest */
        check_pick("12.extern 12.batch 13.extern 13.batch", "13.extern", 2);
        check_pick("13.extern 13.batch 12.0", "12.0", 2);            /* 12 has no named step: its own job */
        check_pick("1234.0 1234.1", "1234.1", 2);                    /* HTCondor's cluster.proc: two jobs */
        check_pick("12.interactive 12.0", "12.0", 1);
        check_pick("12.batch job-x", "job-x", 2);
        check_pick("12.extern 123.batch", "123.batch", 2);           /* 12 is no prefix of 123 */
        check_pick("x12.extern x12.batch", "x12.batch", 2);          /* not a Slurm step name */
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "which family a login joins", test_pick },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = { { "pam job pick", NULL, NULL, NULL, NULL, tests }, CU_SUITE_INFO_NULL };
        return ts_run(suites);
}
