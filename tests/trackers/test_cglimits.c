/* test_cglimits.c - every row of the limit knobs table (trackers/cglimits.c): the writes
 * each option makes in a v2 and in a v1 hierarchy, and the refusals (unit). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cgtest.h"
#include "testsupport.h"
#include "trackers/cglimits.h"
#include "trackers/util.h"

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

/* ---- what the limits did: the counters, read from fixture trees ---- */

/* one line per counter: "name=value" for the available ones, in table order */
static void check_events(tr_cgroup *cg, const char *want)
{
        tr_limit_events ev;
        tr_cgroup_limit_events(cg, &ev);
        char got[512] = "";
        size_t off = 0;
        for (int k = 0; k < TR_EVENT_COUNT; k++)
                if (ev.v[k].available)
                        off += (size_t) snprintf(got + off, sizeof got - off, "%s%s=%llu", off ? " " : "",
                                                 tr_limit_event_get((tr_limit_event_id) k)->name,
                                                 (unsigned long long) ev.v[k].value);
        if (strcmp(got, want) != 0)
                printf("\n    events '%s', want '%s'\n", got, want);
        CU_ASSERT_STRING_EQUAL(got, want);
}

static void test_events_v2(void)
{
        char tmp[] = "/tmp/procd-cglim.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char job[PATH_MAX], sub[PATH_MAX], mi[PATH_MAX + 128];
        mkdirs(tmp, "job/sub");
        snprintf(job, sizeof job, "%s/job", tmp);
        snprintf(sub, sizeof sub, "%s/job/sub", tmp);
        put_fixture(job, "memory.events", "v2/memory.events"); /* oom 3, oom_kill 2 */
        put_fixture(job, "cpu.stat", "v2/cpu.stat");           /* nothing throttled */
        put_file(job, "pids.events", "max 4\n");
        put_file(sub, "pids.events", "max 9\n"); /* v2 counters are hierarchical: not added */
        snprintf(mi, sizeof mi, "26 22 0:23 / %s rw - cgroup2 cgroup2 rw,nsdelegate\n", tmp);
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        tr_hierarchies_set_v2_controllers(&hs, "cpuset cpu io memory pids\n");
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg, NULL), 0);
        check_events(cg, "oom=3 oom_kill=2 pids_max=4 cpu_nr_periods=0 cpu_nr_throttled=0 cpu_throttled_usec=0");
        tr_limit_events ev;
        tr_cgroup_limit_events(cg, &ev);
        CU_ASSERT_EQUAL(tr_limit_events_hits(&ev), TR_HIT_OOM | TR_HIT_PIDS_MAX);
        /* throttled; no pids.events (no pids controller): unknown, not 0 */
        put_file(job, "cpu.stat", "usage_usec 100\nnr_periods 12\nnr_throttled 10\nthrottled_usec 808402\n");
        snprintf(job, sizeof job, "%s/job/pids.events", tmp);
        unlink(job);
        check_events(cg, "oom=3 oom_kill=2 cpu_nr_periods=12 cpu_nr_throttled=10 cpu_throttled_usec=808402");
        tr_cgroup_limit_events(cg, &ev);
        CU_ASSERT_EQUAL(tr_limit_events_hits(&ev), TR_HIT_OOM | TR_HIT_CPU_THROTTLED);
        /* cpu.stat without the cpu controller (core accounting only, as in a hybrid host's v2
         * tree): no bandwidth keys, unknown */
        snprintf(job, sizeof job, "%s/job", tmp);
        put_fixture(job, "cpu.stat", "hybrid/cpu.stat");
        check_events(cg, "oom=3 oom_kill=2");
        rm_tree(tmp);
}

static void test_events_v1(void)
{
        char tmp[] = "/tmp/procd-cglim.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char d[PATH_MAX], mi[4 * PATH_MAX];
        mkdirs(tmp, "cpu/job");
        mkdirs(tmp, "memory/job/sub");
        mkdirs(tmp, "pids/job/sub");
        snprintf(d, sizeof d, "%s/cpu/job", tmp);
        /* captured on the hybrid host: a busy loop for 0.5 s under a 1 ms quota per 100 ms */
        put_file(d, "cpu.stat", "nr_periods 12\nnr_throttled 10\nthrottled_time 808402917\nnr_bursts 0\nburst_time 0\n");
        snprintf(d, sizeof d, "%s/memory/job", tmp);
        put_fixture(d, "memory.oom_control", "v1/memory.oom_control"); /* oom_kill 1 */
        snprintf(d, sizeof d, "%s/memory/job/sub", tmp);
        put_file(d, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
        snprintf(d, sizeof d, "%s/pids/job", tmp);
        put_fixture(d, "pids.events", "hybrid/pids.events"); /* max 0 */
        snprintf(d, sizeof d, "%s/pids/job/sub", tmp);
        put_file(d, "pids.events", "max 7\n"); /* v1: counted where the fork failed */
        snprintf(mi, sizeof mi,
                 "29 24 0:25 / %s/cpu rw - cgroup cgroup rw,cpu\n"
                 "30 24 0:26 / %s/memory rw - cgroup cgroup rw,memory\n"
                 "31 24 0:27 / %s/pids rw - cgroup cgroup rw,pids\n",
                 tmp, tmp, tmp);
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg, NULL), 0);
        /* v1 has no "oom" counter; oom_kill and pids max summed over the subtree; ns -> usec */
        check_events(cg, "oom_kill=3 pids_max=7 cpu_nr_periods=12 cpu_nr_throttled=10 cpu_throttled_usec=808402");
        tr_limit_events ev;
        tr_cgroup_limit_events(cg, &ev);
        CU_ASSERT_EQUAL(tr_limit_events_hits(&ev), TR_HIT_OOM | TR_HIT_PIDS_MAX | TR_HIT_CPU_THROTTLED);
        rm_tree(tmp);
}

static void test_event_rows(void)
{
        for (int id = 0; id < TR_EVENT_COUNT; id++) {
                const tr_limit_event_row *e = tr_limit_event_get((tr_limit_event_id) id);
                CU_ASSERT_PTR_NOT_NULL_FATAL(e);
                CU_ASSERT_PTR_NOT_NULL(e->name);
                CU_ASSERT_PTR_NOT_NULL(e->v2_file); /* pure v2 is the main path */
                CU_ASSERT_PTR_NOT_NULL(e->v2_key);
                CU_ASSERT_EQUAL(e->v1_file != NULL, e->v1_key != NULL);
                CU_ASSERT(e->v1_divisor >= 1);
        }
        CU_ASSERT_PTR_NULL(tr_limit_event_get(TR_EVENT_COUNT));
        CU_ASSERT_STRING_EQUAL(tr_limit_hit_name(TR_HIT_PIDS_MAX), "pids-max");
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "writes", test_writes },
                { "rows", test_rows },
                { "shares", test_shares },
                { "hierarchy", test_hierarchy },
                { "event rows", test_event_rows },
                { "events: pure v2 tree", test_events_v2 },
                { "events: pure v1 tree", test_events_v1 },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("cglimits", NULL, NULL, tests);
}
