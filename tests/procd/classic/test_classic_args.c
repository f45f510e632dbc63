/* test_classic_args.c - condor_procd's command line. */
#include <CUnit/CUnit.h>
#include <glib.h>
#include <string.h>

#include "procd/classic/classic-args.h"
#include "testsupport.h"

/* The strings of the last line parsed (the parsed values point into them). */
static GStrv last_line;

static int parse(pd_classic_args *a, const char *line)
{
        g_strfreev(last_line);
        GStrv v = last_line = g_strsplit(line, " ", -1);
        char why[256] = "";
        int r = pd_classic_args_parse((int) g_strv_length(v), v, a, why, sizeof why);
        if (r < 0)
                printf("[%s] ", why);
        g_free(a->argv);
        a->argv = NULL;
        return r;
}

/* HTCondor's launcher line (proc_family_proxy.cpp). */
static void test_launcher_line(void)
{
        pd_classic_args a;
        CU_ASSERT_EQUAL(parse(&a, "condor_procd -A /var/run/condor/procd_pipe -L /var/log/condor/ProcLog -R 1000000 "
                                  "-S 60 -C 105"),
                        0);
        CU_ASSERT(a.classic);
        CU_ASSERT_STRING_EQUAL(a.address, "/var/run/condor/procd_pipe");
        CU_ASSERT_STRING_EQUAL(a.log, "/var/log/condor/ProcLog");
        CU_ASSERT_EQUAL(a.log_max_bytes, 1000000);
        CU_ASSERT_EQUAL(a.interval_sec, 60);
        CU_ASSERT(a.principal_set);
        CU_ASSERT_EQUAL(a.principal, 105);
        CU_ASSERT_EQUAL(a.root_pid, 0);
        CU_ASSERT_EQUAL(a.argc, 1);
}

static void test_options(void)
{
        pd_classic_args a;
        CU_ASSERT_EQUAL(parse(&a, "procd -A x -G 5000 5100 -E -P 4242 -S -1 -R 10 -D -L SYSLOG"), 0);
        CU_ASSERT(a.gid_tracking && a.gid_external);
        CU_ASSERT_EQUAL(a.gid_min, 5000);
        CU_ASSERT_EQUAL(a.gid_max, 5100);
        CU_ASSERT_EQUAL(a.root_pid, 4242);
        CU_ASSERT_EQUAL(a.interval_sec, -1);
        CU_ASSERT_EQUAL(a.log_max_bytes, 65536); /* raised to the minimum */
        CU_ASSERT(a.debug_wait);
        CU_ASSERT_STRING_EQUAL(a.log, "SYSLOG");
        /* only the second character counts */
        CU_ASSERT_EQUAL(parse(&a, "procd -Address x -Sfoo 5"), 0);
        CU_ASSERT_STRING_EQUAL(a.address, "x");
        CU_ASSERT_EQUAL(a.interval_sec, 5);
}

/* procd's own long options mixed in stay for getopt_long. */
static void test_long_options_kept(void)
{
        pd_classic_args a;
        g_auto(GStrv) v = g_strsplit("procd -A /tmp/p --socket /tmp/s.sock -S 5 --kill-timeout 3", " ", -1);
        char why[256];
        CU_ASSERT_EQUAL_FATAL(pd_classic_args_parse((int) g_strv_length(v), v, &a, why, sizeof why), 0);
        CU_ASSERT_EQUAL(a.argc, 5);
        CU_ASSERT_STRING_EQUAL(a.argv[1], "--socket");
        CU_ASSERT_STRING_EQUAL(a.argv[2], "/tmp/s.sock");
        CU_ASSERT_STRING_EQUAL(a.argv[3], "--kill-timeout");
        CU_ASSERT_PTR_NULL(a.argv[5]);
        g_free(a.argv);
        /* no -A, not condor_procd: procd's own command line, untouched */
        g_auto(GStrv) w = g_strsplit("procd --socket /tmp/s -f", " ", -1);
        CU_ASSERT_EQUAL_FATAL(pd_classic_args_parse((int) g_strv_length(w), w, &a, why, sizeof why), 0);
        CU_ASSERT_FALSE(a.classic);
        CU_ASSERT_EQUAL(a.argc, 4);
        g_free(a.argv);
}

static void test_errors(void)
{
        static const char *const bad[] = {
                "condor_procd -L x",          /* no -A */
                "procd -A x -h",              /* -h is illegal for condor_procd */
                "procd -A x -K 5",            /* Windows only */
                "procd -A x -I",              /* there is no -I */
                "procd -A x -S -2",           /* < -1 */
                "procd -A x -P 1",            /* 0 or 1 */
                "procd -A x -P 0",
                "procd -A x -G 5",            /* needs two */
                "procd -A x -G 10 5",         /* max < min */
                "procd -A x -E",              /* -E without -G */
                "procd -A",                   /* no value */
                "procd -A x -C nosuchuser_zz",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                pd_classic_args a;
                int r = parse(&a, bad[i]);
                if (r == 0)
                        printf("\n  accepted: %s\n", bad[i]);
                CU_ASSERT(r < 0);
        }
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "HTCondor's launcher line", test_launcher_line },
                { "every option", test_options },
                { "long options kept", test_long_options_kept },
                { "illegal and bad options", test_errors },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = { { "classic args", NULL, NULL, NULL, NULL, tests }, CU_SUITE_INFO_NULL };
        int rc = ts_run(suites);
        g_strfreev(last_line);
        return rc;
}
