/* test_usage_meter.c - percent CPU between two queries and the running image maximum. */
#include <CUnit/CUnit.h>

#include "procd/core/usage-meter.h"
#include "testsupport.h"

static void test_meter(void)
{
        pd_usage_meter *m = pd_usage_meter_new();
        pd_usage_reading rd;
        pd_usage_meter_update(m, 7, 1000000, 100, 0, &rd);
        pd_usage_meter_update(m, 7, 3000000, 50, 1000000, &rd); /* 2 s of CPU in 1 s: two cores */
        CU_ASSERT_DOUBLE_EQUAL(rd.percent_cpu, 200.0, 1e-9);
        CU_ASSERT_EQUAL(rd.max_image_bytes, 100);
        pd_usage_meter_update(m, 7, 10, 40, 2000000, &rd); /* less CPU: another family */
        CU_ASSERT_EQUAL(rd.percent_cpu, 0.0);
        CU_ASSERT_EQUAL(rd.max_image_bytes, 40);
        pd_usage_meter_forget(m, 7);
        pd_usage_meter_update(m, 7, 5000000, 30, 3000000, &rd);
        CU_ASSERT_EQUAL(rd.percent_cpu, 0.0);
        CU_ASSERT_EQUAL(rd.max_image_bytes, 30);
        pd_usage_meter_free(m);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "percent CPU, maximum image, a new family", test_meter },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("usage meter", NULL, NULL, tests);
}
