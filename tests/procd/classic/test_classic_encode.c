/* test_classic_encode.c - replies of condor_procd's protocol against byte fixtures: the
 * ProcFamilyUsage record from a tr_usage, DUMP's stream, item batching, error numbers. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "classic-hex.h"
#include "procd/classic/classic-decode.h"
#include "procd/classic/classic-encode.h"
#include "testsupport.h"

static void expect_bytes(const pd_cl_reply *r, const char *fixture)
{
        size_t n;
        uint8_t *want = ch_read_hex(fixture, &n);
        CU_ASSERT_EQUAL(r->bytes->len, n);
        if (r->bytes->len == n) {
                for (size_t i = 0; i < n; i++)
                        if (r->bytes->data[i] != want[i]) {
                                printf("\n  %s: byte %zu is %02x, expected %02x\n", fixture, i, r->bytes->data[i],
                                       want[i]);
                                CU_FAIL("bytes differ");
                                break;
                        }
        }
        free(want);
}

/* A cgroup-tracked family: no image size of its own. */
static void cgroup_usage(tr_usage *u)
{
        tr_usage_init(u);
        tr_u64_set(u, &u->cpu_user_usec, 3700000, TR_SRC_CGROUP_V2);
        tr_u64_set(u, &u->cpu_system_usec, 1200000, TR_SRC_CGROUP_V2);
        tr_u64_set(u, &u->memory_current_bytes, 10u << 20, TR_SRC_CGROUP_V2);
        tr_u64_set(u, &u->memory_peak_bytes, 20u << 20, TR_SRC_CGROUP_V2);
        tr_u64_set(u, &u->rss_bytes, 4u << 20, TR_SRC_CGROUP_V2);
        tr_u64_set(u, &u->num_procs, 3, TR_SRC_CGROUP_V2);
        tr_u64_set(u, &u->io_read_bytes, 8192, TR_SRC_CGROUP_V2);
}

static void test_usage_record(void)
{
        tr_usage u;
        cgroup_usage(&u);
        /* two queries one second apart, 0.5 s of CPU between them: 50 % */
        pd_usage_meter *m = pd_usage_meter_new();
        pd_usage_reading rd;
        pd_usage_meter_update(m, 4096, pd_usage_cpu_usec(&u) - 500000, 1u << 20, 1000000, &rd);
        CU_ASSERT_EQUAL(rd.percent_cpu, 0.0); /* the first query has no earlier reading */
        pd_usage_meter_update(m, 4096, pd_usage_cpu_usec(&u), pd_usage_image_bytes(&u), 2000000, &rd);
        CU_ASSERT_DOUBLE_EQUAL(rd.percent_cpu, 50.0, 1e-9);
        pd_usage_meter_free(m);
        pd_cl_usage cu;
        pd_cl_usage_from(&u, &rd, &cu);
        pd_cl_reply r;
        pd_cl_reply_init(&r);
        pd_cl_reply_usage(&r, &cu);
        expect_bytes(&r, "usage");
        pd_cl_reply_clear(&r);
}

/* A /proc family: the image is the VSZ sum; unknown fields stay unknown, never 0. */
static void test_usage_proc(void)
{
        tr_usage u;
        tr_usage_init(&u);
        tr_u64_set(&u, &u.image_size_bytes, 3u << 20, TR_SRC_PROC);
        tr_u64_set(&u, &u.memory_current_bytes, 99u << 20, TR_SRC_PROC);
        pd_usage_reading rd = { .percent_cpu = 12.5, .max_image_bytes = 5u << 20 };
        pd_cl_usage cu;
        pd_cl_usage_from(&u, &rd, &cu);
        CU_ASSERT_EQUAL(cu.total_image_size, 3072);
        CU_ASSERT_EQUAL(cu.max_image_size, 5120);
        CU_ASSERT_EQUAL(cu.percent_cpu, 12.5);
        CU_ASSERT_EQUAL(cu.block_read_bytes, -1);
        CU_ASSERT_EQUAL(cu.block_write_bytes, -1);
        CU_ASSERT_EQUAL(cu.block_reads, -1);
        CU_ASSERT_EQUAL(cu.m_instructions, -1);
        CU_ASSERT_EQUAL(cu.io_wait, -1.0);
        CU_ASSERT_EQUAL(cu.total_proportional_set_size_available, 0);
        CU_ASSERT_EQUAL(pd_usage_image_bytes(&u), 3u << 20);
}

static void test_dump(void)
{
        pd_cl_reply r;
        pd_cl_reply_init(&r);
        pd_cl_reply_error(&r, PD_CL_SUCCESS);
        pd_cl_reply_u32(&r, 1);
        pd_cl_reply_dump_family(&r, 0, 4096, 4660, 1);
        pd_cl_dump_proc p = { .pid = 4096, .ppid = 4660, .birthday = 123456, .user_time = 2, .sys_time = 1 };
        pd_cl_reply_dump_proc(&r, &p);
        expect_bytes(&r, "dump");
        CU_ASSERT_EQUAL(pd_cl_reply_chunks(&r), 1);
        pd_cl_reply_clear(&r);
}

/* A long DUMP: chunks of at most PIPE_BUF bytes, every 32-byte record whole in one. */
static void test_chunks(void)
{
        pd_cl_reply r;
        pd_cl_reply_init(&r);
        pd_cl_reply_error(&r, PD_CL_SUCCESS);
        pd_cl_dump_proc p = { 0 };
        for (int i = 0; i < 1000; i++)
                pd_cl_reply_dump_proc(&r, &p);
        size_t n = pd_cl_reply_chunks(&r), start = 0;
        CU_ASSERT(n >= 8);
        for (size_t i = 0; i < n; i++) {
                size_t end = pd_cl_reply_chunk_end(&r, i);
                CU_ASSERT(end - start <= PD_CL_MAX_REQUEST_BYTES);
                CU_ASSERT(end > start);
                CU_ASSERT_EQUAL((end - 4) % 32, 0); /* ends after a whole record */
                start = end;
        }
        CU_ASSERT_EQUAL(start, 4 + 1000 * 32);
        pd_cl_reply_clear(&r);
}

static void test_error_numbers(void)
{
        static const struct {
                int32_t cmd;
                procd_status s;
                pd_cl_error want;
        } cases[] = {
                { PD_CL_GET_USAGE, PROCD_OK, PD_CL_SUCCESS },
                { PD_CL_REGISTER_SUBFAMILY, PROCD_E_BAD_ROOT_PID, PD_CL_PROCESS_NOT_FAMILY },
                { PD_CL_REGISTER_SUBFAMILY, PROCD_E_ALREADY_REGISTERED, PD_CL_ALREADY_REGISTERED },
                { PD_CL_REGISTER_SUBFAMILY, PROCD_E_BAD_WATCHER_PID, PD_CL_BAD_WATCHER_PID },
                { PD_CL_REGISTER_SUBFAMILY, PROCD_E_BAD_INTERVAL, PD_CL_BAD_SNAPSHOT_INTERVAL },
                { PD_CL_REGISTER_SUBFAMILY, PROCD_E_PERMISSION, PD_CL_PROCESS_NOT_FAMILY },
                { PD_CL_UNREGISTER_FAMILY, PROCD_E_ROOT_FAMILY, PD_CL_UNREGISTER_ROOT },
                { PD_CL_UNREGISTER_FAMILY, PROCD_E_FAMILY_NOT_FOUND, PD_CL_FAMILY_NOT_FOUND },
                { PD_CL_KILL_FAMILY, PROCD_E_ROOT_FAMILY, PD_CL_FAMILY_NOT_FOUND },
                { PD_CL_KILL_FAMILY, PROCD_E_UNKILLABLE, PD_CL_FAMILY_NOT_FOUND },
                { PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT, PROCD_E_BAD_ARGUMENT, PD_CL_BAD_ENVIRONMENT_INFO },
                { PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT, PROCD_E_FAMILY_NOT_FOUND, PD_CL_FAMILY_NOT_FOUND },
                { PD_CL_TRACK_FAMILY_VIA_LOGIN, PROCD_E_BAD_ARGUMENT, PD_CL_BAD_LOGIN_INFO },
                { PD_CL_TRACK_FAMILY_VIA_ALLOCATED_SUPPLEMENTARY_GROUP, PROCD_E_NO_GID, PD_CL_NO_GROUP_ID_AVAILABLE },
                { PD_CL_TRACK_FAMILY_VIA_CGROUP, PROCD_E_BAD_CGROUP, PD_CL_NO_CGROUP_ID_AVAILABLE },
                { PD_CL_SIGNAL_PROCESS, PROCD_E_PROCESS_NOT_FOUND, PD_CL_FAMILY_NOT_FOUND },
                { -1, PROCD_E_INTERNAL, PD_CL_FAMILY_NOT_FOUND },
                { PD_CL_REGISTER_SUBFAMILY, PROCD_E_INTERNAL, PD_CL_UNEXPECTED },
                { PD_CL_GET_USAGE, PROCD_E_INTERNAL, PD_CL_FAMILY_NOT_FOUND },
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                pd_cl_error e = pd_cl_error_from_status(cases[i].cmd, cases[i].s);
                if (e != cases[i].want)
                        printf("\n  %s / status %d: %d, expected %d\n", pd_cl_command_name(cases[i].cmd),
                               (int) cases[i].s, (int) e, (int) cases[i].want);
                CU_ASSERT_EQUAL(e, cases[i].want);
        }
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "ProcFamilyUsage of a cgroup family", test_usage_record },
                { "ProcFamilyUsage of a /proc family", test_usage_proc },
                { "DUMP stream", test_dump },
                { "items never split across writes", test_chunks },
                { "error numbers", test_error_numbers },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("classic encode", NULL, NULL, tests);
}
