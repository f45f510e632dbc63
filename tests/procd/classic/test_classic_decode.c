/* test_classic_decode.c - request framing of condor_procd's protocol on byte fixtures. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "classic-hex.h"
#include "procd/classic/classic-decode.h"
#include "testsupport.h"

static pd_cl_request R;

static void test_register(void)
{
        size_t n;
        uint8_t *b = ch_read_hex("register", &n);
        CU_ASSERT_EQUAL_FATAL(n, 24);
        CU_ASSERT_EQUAL(pd_cl_decode(b, n, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.client_pid, 4660);
        CU_ASSERT_EQUAL(R.serial, 2);
        CU_ASSERT_EQUAL(R.command, PD_CL_REGISTER_SUBFAMILY);
        CU_ASSERT_EQUAL(R.pid, 4096);
        CU_ASSERT_EQUAL(R.watcher, 4660);
        CU_ASSERT_EQUAL(R.interval, 15);
        CU_ASSERT_EQUAL(R.size, 24);
        CU_ASSERT_EQUAL(R.reject, PD_CL_SUCCESS);
        /* every shorter prefix is incomplete, never a request */
        for (size_t k = 0; k < n; k++)
                CU_ASSERT_EQUAL(pd_cl_decode(b, k, &R), PD_CL_INCOMPLETE);
        free(b);
}

static void test_stream(void)
{
        size_t n;
        uint8_t *b = ch_read_hex("stream", &n);
        CU_ASSERT_EQUAL_FATAL(n, 69);
        size_t off = 0;
        CU_ASSERT_EQUAL_FATAL(pd_cl_decode(b + off, n - off, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.command, PD_CL_GET_USAGE);
        CU_ASSERT_EQUAL(R.client_pid, 100);
        CU_ASSERT_EQUAL(R.pid, 0);
        CU_ASSERT_EQUAL(R.size, 16);
        off += R.size;
        CU_ASSERT_EQUAL_FATAL(pd_cl_decode(b + off, n - off, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.command, PD_CL_SIGNAL_PROCESS);
        CU_ASSERT_EQUAL(R.serial, 3);
        CU_ASSERT_EQUAL(R.pid, 4096);
        CU_ASSERT_EQUAL(R.signo, 15);
        CU_ASSERT_EQUAL(R.size, 20);
        off += R.size;
        CU_ASSERT_EQUAL_FATAL(pd_cl_decode(b + off, n - off, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.command, PD_CL_TRACK_FAMILY_VIA_LOGIN);
        CU_ASSERT_EQUAL(R.len, 7);
        CU_ASSERT_STRING_EQUAL(R.text, "nobody");
        CU_ASSERT_EQUAL(R.size, 27);
        off += R.size;
        /* the truncated fourth: pid and part of the serial known, no command yet */
        CU_ASSERT_EQUAL(pd_cl_decode(b + off, n - off, &R), PD_CL_INCOMPLETE);
        CU_ASSERT_EQUAL(n - off, 6);
        free(b);
}

static void test_cgroup(void)
{
        size_t n;
        uint8_t *b = ch_read_hex("cgroup", &n);
        CU_ASSERT_EQUAL(pd_cl_decode(b, n, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.command, PD_CL_TRACK_FAMILY_VIA_CGROUP);
        CU_ASSERT_EQUAL(R.len, 26);
        CU_ASSERT_STRING_EQUAL(R.text, "htcondor/condor_exec_slot1");
        CU_ASSERT_EQUAL(R.size, 50);
        CU_ASSERT_EQUAL(pd_cl_decode(b, n - 1, &R), PD_CL_INCOMPLETE);
        CU_ASSERT_EQUAL(R.size, 50); /* says how much it needs */
        /* a NUL inside the name: rejected with 14, the whole request consumed */
        b[30] = 0;
        CU_ASSERT_EQUAL(pd_cl_decode(b, n, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.reject, PD_CL_NO_CGROUP_ID_AVAILABLE);
        CU_ASSERT_EQUAL(R.size, 50);
        /* a length no single write can carry: rejected after the 24 bytes */
        uint64_t big = 5000;
        memcpy(b + 16, &big, sizeof big);
        CU_ASSERT_EQUAL(pd_cl_decode(b, 24, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.reject, PD_CL_NO_CGROUP_ID_AVAILABLE);
        CU_ASSERT_EQUAL(R.size, 24);
        free(b);
}

static void test_bad_env_len(void)
{
        size_t n;
        uint8_t *b = ch_read_hex("bad-env-len", &n);
        CU_ASSERT_EQUAL(pd_cl_decode(b, n, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.command, PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT);
        CU_ASSERT_EQUAL(R.reject, PD_CL_BAD_ENVIRONMENT_INFO);
        CU_ASSERT_EQUAL(R.size, 20);
        free(b);
}

/* A PidEnvID built in memory: the last active entry is the marker; an inactive one ends it. */
static void test_environment(void)
{
        uint8_t b[PD_CL_HEADER_BYTES + 8 + PD_CL_PIDENVID_BYTES] = { 0 };
        int32_t hdr[5] = { 500, 0, PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT, 4096, PD_CL_PIDENVID_BYTES };
        memcpy(b, hdr, sizeof hdr);
        int32_t num = PD_CL_PIDENVID_MAX;
        memcpy(b + 20, &num, 4);
        const char *e[3] = { "_CONDOR_ANCESTOR_1=2:3:4", "_CONDOR_ANCESTOR_2=5:6:7", "_CONDOR_ANCESTOR_9=9:9:9" };
        for (int i = 0; i < 3; i++) {
                uint8_t *slot = b + 24 + (size_t) i * (1 + PD_CL_ENVID_BYTES);
                slot[0] = i != 2; /* the third is inactive: the list ends before it */
                memcpy(slot + 1, e[i], strlen(e[i]));
        }
        CU_ASSERT_EQUAL(sizeof b, 2392);
        CU_ASSERT_EQUAL(pd_cl_decode(b, sizeof b, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.size, 2392);
        CU_ASSERT_EQUAL(R.n_envids, 2);
        CU_ASSERT_STRING_EQUAL(R.text, "_CONDOR_ANCESTOR_2=5:6:7");
        CU_ASSERT_EQUAL(R.reject, PD_CL_SUCCESS);
        b[24] = 0; /* empty list: accepted, nothing to match */
        CU_ASSERT_EQUAL(pd_cl_decode(b, sizeof b, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.n_envids, 0);
        CU_ASSERT_EQUAL(R.reject, PD_CL_SUCCESS);
        CU_ASSERT_EQUAL(pd_cl_decode(b, sizeof b - 1, &R), PD_CL_INCOMPLETE);
}

static void test_login_lengths(void)
{
        int32_t h[5] = { 600, 0, PD_CL_TRACK_FAMILY_VIA_LOGIN, 4096, 0 };
        CU_ASSERT_EQUAL(pd_cl_decode((uint8_t *) h, sizeof h, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.reject, PD_CL_BAD_LOGIN_INFO);
        CU_ASSERT_EQUAL(R.size, 20);
        h[4] = -3;
        CU_ASSERT_EQUAL(pd_cl_decode((uint8_t *) h, sizeof h, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.reject, PD_CL_BAD_LOGIN_INFO);
        h[4] = 1 << 20; /* oversized */
        CU_ASSERT_EQUAL(pd_cl_decode((uint8_t *) h, sizeof h, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.reject, PD_CL_BAD_LOGIN_INFO);
        CU_ASSERT_EQUAL(R.size, 20);
        uint8_t b[24];
        h[4] = 4;
        memcpy(b, h, 20);
        memcpy(b + 20, "abcd", 4); /* no NUL within len */
        CU_ASSERT_EQUAL(pd_cl_decode(b, sizeof b, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.reject, PD_CL_BAD_LOGIN_INFO);
        CU_ASSERT_EQUAL(R.size, 24);
}

/* Fixed sizes of every command without a length field. */
static void test_sizes(void)
{
        static const struct {
                int32_t cmd;
                size_t size;
        } cases[] = {
                { PD_CL_REGISTER_SUBFAMILY, 24 },
                { PD_CL_TRACK_FAMILY_VIA_ALLOCATED_SUPPLEMENTARY_GROUP, 16 },
                { PD_CL_TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP, 20 },
                { PD_CL_SIGNAL_PROCESS, 20 },
                { PD_CL_SUSPEND_FAMILY, 16 },
                { PD_CL_CONTINUE_FAMILY, 16 },
                { PD_CL_KILL_FAMILY, 16 },
                { PD_CL_GET_USAGE, 16 },
                { PD_CL_UNREGISTER_FAMILY, 16 },
                { PD_CL_TAKE_SNAPSHOT, 12 },
                { PD_CL_DUMP, 16 },
                { PD_CL_QUIT, 12 },
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                int32_t b[8] = { 77, 1, cases[i].cmd, 4096, 4242, 15, 0, 0 };
                CU_ASSERT_EQUAL(pd_cl_decode((uint8_t *) b, sizeof b, &R), PD_CL_DECODED);
                if (R.size != cases[i].size)
                        printf("\n  %s: size %zu, expected %zu\n", pd_cl_command_name(cases[i].cmd), R.size,
                               cases[i].size);
                CU_ASSERT_EQUAL(R.size, cases[i].size);
                CU_ASSERT_EQUAL(pd_cl_decode((uint8_t *) b, cases[i].size - 1, &R), PD_CL_INCOMPLETE);
        }
        int32_t a[4] = { 77, 1, PD_CL_TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP, 4096 };
        int32_t full[5] = { 77, 1, PD_CL_TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP, 4096, 5012 };
        CU_ASSERT_EQUAL(pd_cl_decode((uint8_t *) a, sizeof a, &R), PD_CL_INCOMPLETE);
        CU_ASSERT_EQUAL(pd_cl_decode((uint8_t *) full, sizeof full, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.gid, 5012);
}

static bool live_401(int32_t pid, uint32_t serial, void *data)
{
        (void) data;
        return pid == 401 && serial == 0;
}

static void test_unknown_and_resync(void)
{
        size_t n;
        uint8_t *b = ch_read_hex("unknown", &n);
        CU_ASSERT_EQUAL(pd_cl_decode(b, n, &R), PD_CL_UNKNOWN_COMMAND);
        CU_ASSERT_EQUAL(R.client_pid, 400);
        CU_ASSERT_EQUAL(R.command, 99);
        CU_ASSERT_FALSE(pd_cl_header_plausible(b, n));
        CU_ASSERT(pd_cl_header_plausible(b + 24, n - 24));
        size_t off = pd_cl_resync(b, n, live_401, NULL);
        CU_ASSERT_EQUAL(off, 24);
        CU_ASSERT_EQUAL(pd_cl_decode(b + off, n - off, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.command, PD_CL_GET_USAGE);
        /* nothing live: everything goes */
        CU_ASSERT_EQUAL(pd_cl_resync(b, 24, live_401, NULL), 24);
        CU_ASSERT_STRING_EQUAL(pd_cl_command_name(99), "UNKNOWN");
        CU_ASSERT_STRING_EQUAL(pd_cl_command_name(PD_CL_QUIT), "QUIT");
        free(b);
}

/* Framing is by size only: a PidEnvID string ending in two digits and padding holds a
 * REGISTER-shaped header (pid "42\0\0" = 12852, serial 0, command 0); the request is still
 * one request of 2392 bytes, and the next one follows it. */
static void test_header_shaped_payload(void)
{
        static uint8_t b[2392 + 16];
        memset(b, 0, sizeof b);
        int32_t head[4] = { 401, 0, PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT, 4242 };
        memcpy(b, head, sizeof head);
        int32_t len = 2372, num = 32;
        memcpy(b + 16, &len, 4);
        memcpy(b + 20, &num, 4);
        b[24] = 1; /* active */
        const char *envid = "_CONDOR_ANCESTOR_1=2:3:42";
        memcpy(b + 25, envid, strlen(envid));
        int32_t next[4] = { 402, 0, PD_CL_GET_USAGE, 0 };
        memcpy(b + 2392, next, sizeof next);
        const uint8_t *fake = b + 25 + strlen(envid) - 2;
        CU_ASSERT(pd_cl_header_plausible(fake, 12)); /* the bytes do look like a header */
        CU_ASSERT_EQUAL(pd_cl_decode(b, sizeof b, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.size, 2392);
        CU_ASSERT_EQUAL(R.n_envids, 1);
        CU_ASSERT_STRING_EQUAL(R.text, envid);
        CU_ASSERT_EQUAL(pd_cl_decode(b + R.size, sizeof b - 2392, &R), PD_CL_DECODED);
        CU_ASSERT_EQUAL(R.client_pid, 402);
        CU_ASSERT_EQUAL(R.command, PD_CL_GET_USAGE);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "REGISTER_SUBFAMILY", test_register },
                { "requests back to back, a truncated one", test_stream },
                { "TRACK_FAMILY_VIA_CGROUP", test_cgroup },
                { "environment: bad length", test_bad_env_len },
                { "environment: PidEnvID", test_environment },
                { "login lengths", test_login_lengths },
                { "fixed sizes", test_sizes },
                { "unknown command, resync", test_unknown_and_resync },
                { "header-shaped bytes inside a request", test_header_shaped_payload },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("classic decode", NULL, NULL, tests);
}
