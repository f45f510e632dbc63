/* test_usage.c - the usage record (usage.c): fill_missing and the sum of two records of
 * disjoint processes (a family and a subfamily it does not hold). */
#include <CUnit/CUnit.h>
#include <string.h>

#include "testsupport.h"
#include "trackers/usage.h"

/* One line per field: the sum's value and availability. */
static void check_field(const tr_u64 *f, bool available, uint64_t value, const char *name)
{
        CU_ASSERT_EQUAL(f->available, available);
        if (available)
                CU_ASSERT_EQUAL(f->value, value);
        if (f->available != available || (available && f->value != value))
                printf("\n  field %s: %s %llu (want %s %llu)", name, f->available ? "known" : "unknown",
                       (unsigned long long) f->value, available ? "known" : "unknown", (unsigned long long) value);
}

static void test_add(void)
{
        tr_usage a, b;
        tr_usage_init(&a);
        tr_usage_init(&b);
        tr_u64_set(&a, &a.num_procs, 2, TR_SRC_PROC);
        tr_u64_set(&a, &a.cpu_user_usec, 1000, TR_SRC_PROC);
        tr_u64_set(&a, &a.rss_bytes, 4096, TR_SRC_PROC);
        tr_u64_set(&a, &a.image_size_bytes, 8192, TR_SRC_PROC); /* /proc only */
        tr_u64_set(&a, &a.io_read_bytes, 5, TR_SRC_PROC);
        tr_u64_set(&b, &b.num_procs, 3, TR_SRC_CGROUP_V2);
        tr_u64_set(&b, &b.cpu_user_usec, 500, TR_SRC_CGROUP_V2);
        tr_u64_set(&b, &b.rss_bytes, 100, TR_SRC_CGROUP_V2);
        tr_u64_set(&b, &b.memory_current_bytes, 300, TR_SRC_CGROUP_V2); /* cgroup only */
        tr_u64_set(&b, &b.memory_peak_bytes, 900, TR_SRC_CGROUP_V2);
        tr_u64_set(&b, &b.io_read_bytes, UINT64_MAX, TR_SRC_CGROUP_V2);
        b.fallback = true;
        snprintf(b.fallback_reason, sizeof b.fallback_reason, "why");
        tr_usage_add(&a, &b);
        check_field(&a.num_procs, true, 5, "num_procs");
        check_field(&a.cpu_user_usec, true, 1500, "cpu_user_usec");
        check_field(&a.rss_bytes, true, 4196, "rss_bytes");
        check_field(&a.image_size_bytes, false, 0, "image_size_bytes (one side unknown)");
        check_field(&a.memory_current_bytes, false, 0, "memory_current_bytes (one side unknown)");
        check_field(&a.memory_peak_bytes, false, 0, "memory_peak_bytes (no sum)");
        check_field(&a.io_read_bytes, true, UINT64_MAX, "io_read_bytes (saturates)");
        check_field(&a.cpu_system_usec, false, 0, "cpu_system_usec (both unknown)");
        CU_ASSERT_EQUAL(a.num_procs.source, TR_SRC_PROC | TR_SRC_CGROUP_V2);
        CU_ASSERT_EQUAL(a.sources, TR_SRC_PROC | TR_SRC_CGROUP_V2);
        CU_ASSERT(a.fallback);
        CU_ASSERT_STRING_EQUAL(a.fallback_reason, "why");
}

static void test_add_peaks(void)
{
        /* a peak or a pressure total of two groups is not the sum of theirs */
        tr_usage a, b;
        tr_usage_init(&a);
        tr_usage_init(&b);
        tr_u64_set(&a, &a.pids_peak, 4, TR_SRC_CGROUP_V2);
        tr_u64_set(&b, &b.pids_peak, 4, TR_SRC_CGROUP_V2);
        tr_u64_set(&a, &a.psi_cpu_some_usec, 10, TR_SRC_CGROUP_V2);
        tr_u64_set(&b, &b.psi_cpu_some_usec, 10, TR_SRC_CGROUP_V2);
        tr_u64_set(&a, &a.oom_kills, 1, TR_SRC_CGROUP_V2);
        tr_u64_set(&b, &b.oom_kills, 2, TR_SRC_CGROUP_V1);
        tr_usage_add(&a, &b);
        check_field(&a.pids_peak, false, 0, "pids_peak");
        check_field(&a.psi_cpu_some_usec, false, 0, "psi_cpu_some_usec");
        check_field(&a.oom_kills, true, 3, "oom_kills");
}

static void test_fill_missing(void)
{
        tr_usage a, b;
        tr_usage_init(&a);
        tr_usage_init(&b);
        tr_u64_set(&a, &a.num_procs, 1, TR_SRC_CGROUP_V2);
        tr_u64_set(&b, &b.num_procs, 7, TR_SRC_PROC);
        tr_u64_set(&b, &b.rss_bytes, 9, TR_SRC_PROC);
        tr_usage_fill_missing(&a, &b);
        check_field(&a.num_procs, true, 1, "num_procs (kept)");
        check_field(&a.rss_bytes, true, 9, "rss_bytes (filled)");
        CU_ASSERT_EQUAL(a.rss_bytes.source, TR_SRC_PROC);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "sum of two records", test_add },
                { "peaks and pressure are no sums", test_add_peaks },
                { "fill missing fields", test_fill_missing },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("usage record", NULL, NULL, tests);
}
