/* test_error.c - trackers/error.c: the error object (negative errno returned, positive errno
 * and message kept), strerror appended, context prepended, NULL tolerated. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <string.h>

#include "testsupport.h"
#include "trackers/error.h"

static void test_set_and_setx(void)
{
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_error_set(&err, ENOENT, "opening %s", "cgroup.procs"), -ENOENT);
        CU_ASSERT_EQUAL(err.code, ENOENT);
        CU_ASSERT_STRING_EQUAL(err.msg, "opening cgroup.procs");
        CU_ASSERT_EQUAL(tr_error_setx(&err, EACCES, "pid %d", 42), -EACCES);
        CU_ASSERT_EQUAL(err.code, EACCES);
        char want[128];
        snprintf(want, sizeof want, "pid 42: %s", strerror(EACCES));
        CU_ASSERT_STRING_EQUAL(err.msg, want);
        /* a non-positive errnum is a caller's slip: EINVAL, never a success value */
        CU_ASSERT_EQUAL(tr_error_set(&err, 0, "oops"), -EINVAL);
        CU_ASSERT_EQUAL(err.code, EINVAL);
        /* NULL: only the return value */
        CU_ASSERT_EQUAL(tr_error_set(NULL, ESRCH, "gone"), -ESRCH);
        CU_ASSERT_EQUAL(tr_error_setx(NULL, ESRCH, "gone"), -ESRCH);
}

static void test_prefix_and_clear(void)
{
        tr_error err = { 0 };
        tr_error_set(&err, EBUSY, "rmdir");
        CU_ASSERT_EQUAL(tr_error_prefix(&err, "family %d", 7), -EBUSY);
        CU_ASSERT_STRING_EQUAL(err.msg, "family 7: rmdir");
        CU_ASSERT_EQUAL(tr_error_prefix(NULL, "x"), -EINVAL);
        /* a long message is cut at the buffer, still terminated */
        char big[2 * sizeof err.msg];
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        tr_error_setx(&err, EIO, "%s", big);
        CU_ASSERT_EQUAL(strlen(err.msg), sizeof err.msg - 1);
        tr_error_clear(&err);
        CU_ASSERT_EQUAL(err.code, 0);
        CU_ASSERT_STRING_EQUAL(err.msg, "");
        CU_ASSERT_EQUAL(tr_error_prefix(&err, "ctx"), -EINVAL); /* nothing set: EINVAL */
        tr_error_clear(NULL);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "set, setx", test_set_and_setx },
                { "prefix, clear", test_prefix_and_clear },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("error", NULL, NULL, tests);
}
