/* test_procd_options_default.c - the default configuration file (here: the good.conf
 * fixture, built in as PROCD_CONFIG_FILE) is read in condor_procd's mode (-A) as in the
 * D-Bus mode, without --config; -A leaves out the keys its command line names. */
#include <string.h>

#include "procd/options.h"
#include "testsupport.h"

static void test_default_file_both_modes(void)
{
        char *argv[] = { "procd", NULL };
        pd_options o;
        for (int classic = 0; classic < 2; classic++) {
                CU_ASSERT_EQUAL_FATAL(pd_options_parse(1, argv, classic, &o), 0);
                CU_ASSERT_STRING_EQUAL(o.config_path, PROCD_CONFIG_FILE);
                CU_ASSERT_STRING_EQUAL(o.famcg.base, "/procd-fixture/families");
                CU_ASSERT_EQUAL(o.kill_timeout, 20);
                CU_ASSERT_EQUAL(o.socket_given, !classic);
                CU_ASSERT_STRING_EQUAL(o.file_ignored, classic ? "socket, root-pid, log, state-file" : "");
        }
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "the default file in both modes", test_default_file_both_modes },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = { { "procd options: default file", NULL, NULL, NULL, NULL, tests }, CU_SUITE_INFO_NULL };
        return ts_run(suites);
}
