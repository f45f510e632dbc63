/* test_cglimits.c - every row of the limit knobs table (trackers/cglimits.c): the writes
 * each option makes in a v2 and in a v1 hierarchy, and the refusals (unit). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "testsupport.h"
#include "trackers/cglimits.h"

#define MAXV UINT64_MAX

/* One line per case: the writes of knob id for value v, as "file=value;file=value", or
 * the expected -errno. */
static void check(tr_limit_id id, bool v2, tr_limit_value v, const char *want, int want_r)
{
        tr_limit_write w[TR_LIMIT_MAX_WRITES];
        tr_error err = { 0 };
        int n = tr_limit_writes(id, v2, &v, w, &err);
        char got[2048] = "";
        size_t off = 0;
        for (int i = 0; i < n && i < TR_LIMIT_MAX_WRITES; i++)
                off += (size_t) snprintf(got + off, sizeof got - off, "%s%s=%s", i ? ";" : "", w[i].file, w[i].value);
        if (want_r < 0) {
                if (n != want_r)
                        printf("\n    %s (%s): %d, want %d\n", tr_limit_knob_get(id)->option, v2 ? "v2" : "v1", n, want_r);
                CU_ASSERT_EQUAL(n, want_r);
                CU_ASSERT_TRUE(err.msg[0] != '\0'); /* says why */
                return;
        }
        if (strcmp(got, want) != 0)
                printf("\n    %s (%s): '%s', want '%s' (%s)\n", tr_limit_knob_get(id)->option, v2 ? "v2" : "v1", got,
                       want, err.msg);
        CU_ASSERT_STRING_EQUAL(got, want);
}

#define U(x) ((tr_limit_value){ .u64 = (x) })
#define UB(x, b) ((tr_limit_value){ .u64 = (x), .u64_b = (b), .has_b = true })
#define T(s) ((tr_limit_value){ .text = (s) })

static void test_writes(void)
{
        check(TR_LIMIT_MEMORY_MAX, true, U(1073741824), "memory.max=1073741824", 0);
        check(TR_LIMIT_MEMORY_MAX, true, U(MAXV), "memory.max=max", 0);
        check(TR_LIMIT_MEMORY_MAX, false, U(1073741824), "memory.limit_in_bytes=1073741824", 0);
        check(TR_LIMIT_MEMORY_MAX, false, U(MAXV), "memory.limit_in_bytes=-1", 0);
        check(TR_LIMIT_MEMORY_SWAP_MAX, true, U(0), "memory.swap.max=0", 0);
        check(TR_LIMIT_MEMORY_SWAP_MAX, false, UB(1024, 4096), "memory.memsw.limit_in_bytes=5120", 0);
        check(TR_LIMIT_MEMORY_SWAP_MAX, false, UB(MAXV, 4096), "memory.memsw.limit_in_bytes=-1", 0);
        check(TR_LIMIT_MEMORY_SWAP_MAX, false, UB(1024, MAXV), "memory.memsw.limit_in_bytes=-1", 0);
        check(TR_LIMIT_MEMORY_SWAP_MAX, false, U(1024), "", -EINVAL); /* memsw needs memory.max */
        check(TR_LIMIT_MEMORY_HIGH, true, U(805306368), "memory.high=805306368", 0);
        check(TR_LIMIT_MEMORY_HIGH, false, U(805306368), "", -EOPNOTSUPP); /* no v1 knob */
        check(TR_LIMIT_MEMORY_OOM_GROUP, true, U(0), "memory.oom.group=1", 0);
        check(TR_LIMIT_MEMORY_OOM_GROUP, false, U(0), "", -EOPNOTSUPP);
        check(TR_LIMIT_CPUS, true, UB(250000, 100000), "cpu.max=250000 100000", 0);
        check(TR_LIMIT_CPUS, false, UB(250000, 100000), "cpu.cfs_period_us=100000;cpu.cfs_quota_us=250000", 0);
        check(TR_LIMIT_CPU_WEIGHT, true, U(300), "cpu.weight=300", 0);
        check(TR_LIMIT_CPU_WEIGHT, false, U(300), "cpu.shares=3072", 0);
        check(TR_LIMIT_CPUSET_CPUS, true, T("0-3"), "cpuset.cpus=0-3", 0);
        check(TR_LIMIT_CPUSET_CPUS, false, T("0-3"), "cpuset.cpus=0-3", 0);
        check(TR_LIMIT_CPUSET_MEMS, true, T("0"), "cpuset.mems=0", 0);
        check(TR_LIMIT_CPUSET_MEMS, false, T("0"), "cpuset.mems=0", 0);
        check(TR_LIMIT_PIDS_MAX, true, U(100), "pids.max=100", 0);
        check(TR_LIMIT_PIDS_MAX, false, U(MAXV), "pids.max=max", 0);
        check(TR_LIMIT_IO_MAX, true, T("8:0 rbps=1M wiops=max"), "io.max=8:0 rbps=1048576 wiops=max", 0);
        check(TR_LIMIT_IO_MAX, false, T("8:0 rbps=1M wiops=max"),
              "blkio.throttle.read_bps_device=8:0 1048576;blkio.throttle.write_iops_device=8:0 0", 0);
        check(TR_LIMIT_IO_MAX, false, T("8:16 wbps=2K riops=10"),
              "blkio.throttle.write_bps_device=8:16 2048;blkio.throttle.read_iops_device=8:16 10", 0);
        /* bad io-max lines, whatever the version */
        check(TR_LIMIT_IO_MAX, true, T("8:0"), "", -EINVAL);
        check(TR_LIMIT_IO_MAX, false, T("8:0 rbps"), "", -EINVAL);
        check(TR_LIMIT_IO_MAX, true, T("8:0 speed=1"), "", -EINVAL);
        check(TR_LIMIT_IO_MAX, false, T("x:y rbps=1"), "", -EINVAL);
        check(TR_LIMIT_IO_MAX, true, T("8:0 rbps=fast"), "", -EINVAL);
        check(TR_LIMIT_IO_MAX, true, T("8:0 rbps=1 wbps=1 riops=1 wiops=1 rbps=2"), "", -EINVAL);
        check(TR_LIMIT_COUNT, true, U(1), "", -EINVAL);
}

/* The table itself: every row names its option, controller and the files its formats
 * write (a version with a format has a file, and the other way round). */
static void test_rows(void)
{
        for (int id = 0; id < TR_LIMIT_COUNT; id++) {
                const tr_limit_knob *k = tr_limit_knob_get((tr_limit_id) id);
                CU_ASSERT_PTR_NOT_NULL_FATAL(k);
                CU_ASSERT_PTR_NOT_NULL(k->option);
                CU_ASSERT((unsigned) k->ctrl < TR_CTRL_COUNT);
                CU_ASSERT_EQUAL(k->v2_file != NULL, k->v2_fmt != TR_FMT_NONE);
                CU_ASSERT_EQUAL(k->v1_file != NULL, k->v1_fmt != TR_FMT_NONE);
                CU_ASSERT_PTR_NOT_NULL(k->v2_file); /* pure v2 is the main path: every option has its v2 knob */
        }
        CU_ASSERT_PTR_NULL(tr_limit_knob_get(TR_LIMIT_COUNT));
}

static void check_shares(uint64_t weight, unsigned long long want)
{
        CU_ASSERT_EQUAL(tr_weight_to_shares(weight), want);
}

static void test_shares(void)
{
        check_shares(100, 1024);
        check_shares(1, 10);
        check_shares(10000, 102400);
        check_shares(50, 512);
        check_shares(0, 2); /* clamped */
}

static void check_hierarchy(const char *mountinfo, tr_controller c, const char *want_mount)
{
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mountinfo, NULL), 0);
        int i = tr_limit_hierarchy(&hs, c);
        CU_ASSERT_STRING_EQUAL(i >= 0 ? hs.h[i].mount_point : "", want_mount);
}

static void test_hierarchy(void)
{
        const char *v1 = "30 24 0:26 / /sys/fs/cgroup/blkio rw - cgroup cgroup rw,blkio\n"
                         "31 24 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        const char *hybrid = "30 24 0:26 / /sys/fs/cgroup/blkio rw - cgroup cgroup rw,blkio\n"
                             "26 22 0:23 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n";
        check_hierarchy(v1, TR_CTRL_IO, "/sys/fs/cgroup/blkio"); /* io stands for blkio on v1 */
        check_hierarchy(v1, TR_CTRL_MEMORY, "/sys/fs/cgroup/memory");
        check_hierarchy(v1, TR_CTRL_PIDS, "");
        check_hierarchy(hybrid, TR_CTRL_IO, "/sys/fs/cgroup/blkio"); /* the v2 tree there has no io */
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "writes", test_writes },
                { "rows", test_rows },
                { "shares", test_shares },
                { "hierarchy", test_hierarchy },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "cglimits", NULL, NULL, NULL, NULL, tests },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
