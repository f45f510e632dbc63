/* test_log_file.c - procd/log-file.c: condor_procd's -L FILE (lines appended with a time
 * stamp and a level) and -R SIZE (rotated to FILE.old past the size). */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procd/log-file.h"
#include "testsupport.h"
#include "trackers/util.h"

static char dir[] = "/tmp/procd-log-test.XXXXXX";

static int suite_init(void) { return mkdtemp(dir) ? 0 : 1; }

static int suite_clean(void)
{
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : 1;
}

/* One message through the writer, as GLib hands it over. */
static void log_line(pd_log_file *lf, GLogLevelFlags level, const char *msg)
{
        const GLogField fields[] = {
                { "GLIB_DOMAIN", "procd", -1 },
                { "MESSAGE", msg, -1 },
        };
        CU_ASSERT_EQUAL(pd_log_file_writer(level, fields, G_N_ELEMENTS(fields), lf), G_LOG_WRITER_HANDLED);
}

/* Whether the file at path holds needle: one line per check. */
static bool file_has(const char *path, const char *needle)
{
        g_autofree char *text = NULL;
        if (tr_read_file_alloc_at(AT_FDCWD, path, &text, NULL, NULL) < 0)
                return false;
        return strstr(text, needle) != NULL;
}

static void test_append(void)
{
        char path[128];
        snprintf(path, sizeof path, "%s/append.log", dir);
        pd_log_file *lf = NULL;
        CU_ASSERT_EQUAL_FATAL(pd_log_file_open(path, 0, &lf, NULL), 0);
        log_line(lf, G_LOG_LEVEL_MESSAGE, "first");
        log_line(lf, G_LOG_LEVEL_WARNING, "second");
        pd_log_file_close(lf);
        CU_ASSERT_TRUE(file_has(path, " MESSAGE: first\n"));
        CU_ASSERT_TRUE(file_has(path, " WARNING: second\n"));
        g_autofree char *text = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_read_file_alloc_at(AT_FDCWD, path, &text, NULL, NULL) >= 0, true);
        CU_ASSERT(strstr(text, "first") < strstr(text, "second")); /* in the order written */
        /* opened again: appended, not truncated */
        CU_ASSERT_EQUAL_FATAL(pd_log_file_open(path, 0, &lf, NULL), 0);
        log_line(lf, G_LOG_LEVEL_CRITICAL, "third");
        pd_log_file_close(lf);
        CU_ASSERT_TRUE(file_has(path, " MESSAGE: first\n"));
        CU_ASSERT_TRUE(file_has(path, " CRITICAL: third\n"));
}

static void test_rotate(void)
{
        char path[128], old[136];
        snprintf(path, sizeof path, "%s/rotate.log", dir);
        snprintf(old, sizeof old, "%s.old", path);
        pd_log_file *lf = NULL;
        CU_ASSERT_EQUAL_FATAL(pd_log_file_open(path, 64, &lf, NULL), 0);
        log_line(lf, G_LOG_LEVEL_MESSAGE, "a line long enough to pass the sixty-four byte bound");
        /* past the size: the file moved to .old, a fresh one in its place */
        CU_ASSERT_TRUE(file_has(old, "sixty-four"));
        struct stat st;
        CU_ASSERT_EQUAL(stat(path, &st), 0);
        CU_ASSERT_EQUAL(st.st_size, 0);
        log_line(lf, G_LOG_LEVEL_MESSAGE, "short");
        pd_log_file_close(lf);
        CU_ASSERT_TRUE(file_has(path, " MESSAGE: short\n"));
        CU_ASSERT_FALSE(file_has(path, "sixty-four"));
}

static void test_open_fails_and_null(void)
{
        char path[160];
        snprintf(path, sizeof path, "%s/no/such/dir/x.log", dir);
        pd_log_file *lf = NULL;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(pd_log_file_open(path, 0, &lf, &err), -ENOENT);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
        CU_ASSERT_PTR_NULL(lf);
        pd_log_file_close(NULL); /* harmless */
        const GLogField f = { "MESSAGE", "dropped", -1 };
        CU_ASSERT_EQUAL(pd_log_null_writer(G_LOG_LEVEL_WARNING, &f, 1, NULL), G_LOG_WRITER_HANDLED);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "lines appended with their level", test_append },
                { "rotated to .old past the size", test_rotate },
                { "open failure named; the null writer", test_open_fails_and_null },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("log file", suite_init, suite_clean, tests);
}
