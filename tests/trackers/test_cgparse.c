/* test_cgparse.c - every parser of cgparse.h on the v2, hybrid and v1 fixture sets (unit). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testsupport.h"
#include "trackers/cgparse.h"
#include "trackers/util.h"

#define ASSERT_FIELD(u, f, v, src)                                                            \
        do {                                                                                  \
                CU_ASSERT_TRUE((u).f.available);                                              \
                CU_ASSERT_EQUAL((u).f.value, (uint64_t) (v));                                 \
                CU_ASSERT_EQUAL((u).f.source, (src));                                         \
        } while (0)

static void test_keyed_u64(void)
{
        _cleanup_free_ char *ev = ts_read_fixture("v2/memory.events");
        uint64_t v = 0;
        CU_ASSERT_EQUAL(tr_keyed_u64(ev, "max", &v), 0);
        CU_ASSERT_EQUAL(v, 41);
        CU_ASSERT_EQUAL(tr_keyed_u64(ev, "oom", &v), 0); /* not confused with oom_kill */
        CU_ASSERT_EQUAL(v, 3);
        CU_ASSERT_EQUAL(tr_keyed_u64(ev, "oom_group_kill", &v), 0);
        CU_ASSERT_EQUAL(v, 1);
        CU_ASSERT_EQUAL(tr_keyed_u64(ev, "missing", &v), -ENOENT);
        CU_ASSERT_EQUAL(tr_keyed_u64(ev, "oo", &v), -ENOENT);
        CU_ASSERT_EQUAL(tr_keyed_u64("a x\n", "a", &v), -EINVAL);
        CU_ASSERT_EQUAL(tr_keyed_u64("a 12x\n", "a", &v), -EINVAL);
        CU_ASSERT_EQUAL(tr_keyed_u64("a 7", "a", &v), 0); /* no final newline */
        CU_ASSERT_EQUAL(v, 7);
        CU_ASSERT_EQUAL(tr_keyed_u64("", "a", &v), -ENOENT);
        _cleanup_free_ char *pe = ts_read_fixture("hybrid/pids.events");
        CU_ASSERT_EQUAL(tr_keyed_u64(pe, "max", &v), 0);
        CU_ASSERT_EQUAL(v, 0);
}

/* ---- v2 ---- */

/* Parse the fixture file rel into a fresh u with parse (which must succeed). */
static void parse_fixture(const char *rel, int (*parse)(const char *text, tr_usage *u), tr_usage *u)
{
        _cleanup_free_ char *t = ts_read_fixture(rel);
        tr_usage_init(u);
        CU_ASSERT_EQUAL_FATAL(parse(t, u), 0);
}

static void test_v2_cpu_stat(void)
{
        tr_usage u;
        parse_fixture("v2/cpu.stat", tr_parse_cpu_stat, &u);
        ASSERT_FIELD(u, cpu_usec, 8123456, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, cpu_user_usec, 6100000, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, cpu_system_usec, 2023456, TR_SRC_CGROUP_V2);
        CU_ASSERT_EQUAL(u.sources, TR_SRC_CGROUP_V2);
        CU_ASSERT_FALSE(u.memory_current_bytes.available);
        /* a missing key leaves the field unavailable */
        tr_usage_init(&u);
        CU_ASSERT_EQUAL(tr_parse_cpu_stat("nr_periods 0\n", &u), 0);
        CU_ASSERT_FALSE(u.cpu_usec.available);
        CU_ASSERT_EQUAL(tr_parse_cpu_stat("usage_usec abc\n", &u), -EINVAL);
}

/* cpu.stat text -> result and the three fields (UINT64_MAX: unavailable). */
static void check_cpu_stat(const char *text, int want_r, uint64_t usage, uint64_t user, uint64_t sys)
{
        tr_usage u;
        tr_usage_init(&u);
        int r = tr_parse_cpu_stat(text, &u);
        const tr_u64 *f[] = { &u.cpu_usec, &u.cpu_user_usec, &u.cpu_system_usec };
        uint64_t want[] = { usage, user, sys };
        bool ok = r == want_r;
        for (int i = 0; ok && r == 0 && i < 3; i++)
                ok = want[i] == UINT64_MAX ? !f[i]->available : f[i]->available && f[i]->value == want[i];
        if (!ok)
                fprintf(stderr, "cpu.stat \"%.40s\": %d %llu %llu %llu\n", text, r, (unsigned long long) f[0]->value,
                        (unsigned long long) f[1]->value, (unsigned long long) f[2]->value);
        CU_ASSERT(ok);
}

/* The kernel's line order is read as such; any other text by key, with the same answer. */
static void test_v2_cpu_stat_forms(void)
{
        const uint64_t NA = UINT64_MAX;
        check_cpu_stat("usage_usec 3\nuser_usec 2\nsystem_usec 1\n", 0, 3, 2, 1);
        check_cpu_stat("usage_usec 3\nuser_usec 2\nsystem_usec 1", 0, 3, 2, 1); /* no last newline */
        check_cpu_stat("user_usec 2\nsystem_usec 1\nusage_usec 3\n", 0, 3, 2, 1); /* other order */
        check_cpu_stat("nr_periods 0\nusage_usec 3\nuser_usec 2\nsystem_usec 1\n", 0, 3, 2, 1);
        check_cpu_stat("usage_usec 3\nuser_usec 2\n", 0, 3, 2, NA);
        check_cpu_stat("usage_usec 3\nuser_usecs 2\nsystem_usec 1\n", 0, 3, NA, 1);
        check_cpu_stat("usage_usec 3 \nuser_usec 2\nsystem_usec 1\n", 0, 3, 2, 1); /* a trailing blank */
        check_cpu_stat("usage_usec 3x\nuser_usec 2\nsystem_usec 1\n", -EINVAL, 0, 0, 0);
        check_cpu_stat("usage_usec 18446744073709551616\n", -EINVAL, 0, 0, 0);
        check_cpu_stat("usage_usec", 0, NA, NA, NA);
        check_cpu_stat("", 0, NA, NA, NA);
}

static void test_v2_memory_stat(void)
{
        tr_usage u;
        parse_fixture("v2/memory.stat", tr_parse_memory_stat_v2, &u);
        ASSERT_FIELD(u, memory_anon_bytes, 209715200, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, memory_shmem_bytes, 10485760, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, memory_file_bytes, 52428800 - 10485760, TR_SRC_CGROUP_V2); /* cache apart from shmem */
        ASSERT_FIELD(u, rss_bytes, 209715200 + 10485760, TR_SRC_CGROUP_V2);
        CU_ASSERT_FALSE(u.memory_current_bytes.available);
        tr_usage_init(&u);
        CU_ASSERT_EQUAL(tr_parse_memory_stat_v2("anon 10\n", &u), 0);
        ASSERT_FIELD(u, rss_bytes, 10, TR_SRC_CGROUP_V2);
        CU_ASSERT_FALSE(u.memory_file_bytes.available);
        CU_ASSERT_EQUAL(tr_parse_memory_stat_v2("anon -1\n", &u), -EINVAL);
}

static void test_v2_memory_events(void)
{
        tr_usage u;
        parse_fixture("v2/memory.events", tr_parse_memory_events, &u);
        ASSERT_FIELD(u, oom_kills, 2, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, oom_group_kills, 1, TR_SRC_CGROUP_V2);
        tr_usage_init(&u);
        /* before 5.x there is no oom_group_kill */
        CU_ASSERT_EQUAL(tr_parse_memory_events("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n", &u), 0);
        ASSERT_FIELD(u, oom_kills, 0, TR_SRC_CGROUP_V2);
        CU_ASSERT_FALSE(u.oom_group_kills.available);
}

static void test_v2_io_stat(void)
{
        tr_usage u;
        parse_fixture("v2/io.stat", tr_parse_io_stat, &u);
        ASSERT_FIELD(u, io_read_bytes, 1459200 + 40960, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, io_write_bytes, 314773504 + 4096, TR_SRC_CGROUP_V2);
        tr_usage_init(&u);
        CU_ASSERT_EQUAL(tr_parse_io_stat("", &u), 0); /* no I/O yet: no lines, zero */
        ASSERT_FIELD(u, io_read_bytes, 0, TR_SRC_CGROUP_V2);
        CU_ASSERT_EQUAL(tr_parse_io_stat("garbage\n", &u), -EINVAL);
        CU_ASSERT_EQUAL(tr_parse_io_stat("8:0 rbytes=x\n", &u), -EINVAL);
        CU_ASSERT_EQUAL(tr_parse_io_stat("8:0 rbytes\n", &u), -EINVAL);
        CU_ASSERT_EQUAL(tr_parse_io_stat("8:0 rbytes=5x wbytes=1\n", &u), -EINVAL);
        /* keys of other policies with values that are not plain numbers (blk-iocost at the
         * root, blk-iolatency and use_delay with blkcg.debug_stats): skipped, not fatal */
        tr_usage_init(&u);
        CU_ASSERT_EQUAL(tr_parse_io_stat("8:0 rbytes=100 wbytes=200 rios=1 wios=2 dbytes=0 dios=0 cost.vrate=100.00 "
                                         "cost.usage=5 use_delay=-1 delay_nsec=0 missed=0 total=0 depth=max "
                                         "avg_lat=0 win=0\n"
                                         "8:16 rbytes=1 wbytes=2 rios=1 wios=1 dbytes=0 dios=0\n",
                                         &u),
                        0);
        ASSERT_FIELD(u, io_read_bytes, 101, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, io_write_bytes, 202, TR_SRC_CGROUP_V2);
}

static void check_pressure(const char *rel, uint64_t some, uint64_t full)
{
        _cleanup_free_ char *t = ts_read_fixture(rel);
        uint64_t s = 1, f = 1;
        bool has_full = false;
        CU_ASSERT_EQUAL_FATAL(tr_parse_pressure(t, &s, &f, &has_full), 0);
        CU_ASSERT_EQUAL(s, some);
        CU_ASSERT_TRUE(has_full);
        CU_ASSERT_EQUAL(f, full);
}

static void test_pressure(void)
{
        check_pressure("v2/cpu.pressure", 173504, 61201);
        check_pressure("v2/memory.pressure", 2049, 1870);
        check_pressure("v2/io.pressure", 90213, 88104);
        check_pressure("hybrid/cpu.pressure", 239, 104);
        check_pressure("hybrid/memory.pressure", 0, 0);
        check_pressure("hybrid/io.pressure", 578, 511);
        uint64_t s, f;
        bool has_full = true;
        /* cpu.pressure before 5.13 has no "full" line */
        CU_ASSERT_EQUAL(tr_parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", &s, &f, &has_full), 0);
        CU_ASSERT_EQUAL(s, 5);
        CU_ASSERT_FALSE(has_full);
        CU_ASSERT_EQUAL(tr_parse_pressure("", &s, &f, &has_full), -EINVAL);
        CU_ASSERT_EQUAL(tr_parse_pressure("some avg10=0.00\n", &s, &f, &has_full), -EINVAL);
}

static void test_cgroup_events(void)
{
        int p = 9, f = 9;
        _cleanup_free_ char *v2 = ts_read_fixture("v2/cgroup.events");
        CU_ASSERT_EQUAL(tr_parse_cgroup_events(v2, &p, &f), 0);
        CU_ASSERT_EQUAL(p, 1);
        CU_ASSERT_EQUAL(f, 0);
        _cleanup_free_ char *hy = ts_read_fixture("hybrid/cgroup.events");
        CU_ASSERT_EQUAL(tr_parse_cgroup_events(hy, &p, &f), 0);
        CU_ASSERT_EQUAL(p, 1);
        CU_ASSERT_EQUAL(f, 0);
        CU_ASSERT_EQUAL(tr_parse_cgroup_events("populated 0\n", &p, &f), 0); /* before 5.2: no frozen */
        CU_ASSERT_EQUAL(p, 0);
        CU_ASSERT_EQUAL(f, -1);
        CU_ASSERT_EQUAL(tr_parse_cgroup_events("populated 0\nfrozen 1\n", &p, &f), 0);
        CU_ASSERT_EQUAL(f, 1);
        CU_ASSERT_EQUAL(tr_parse_cgroup_events("", &p, &f), 0);
        CU_ASSERT_EQUAL(p, -1);
        CU_ASSERT_EQUAL(tr_parse_cgroup_events("populated x\n", &p, &f), -EINVAL);
}

/* ---- hybrid (captured) ---- */

static void test_hybrid_cpu(void)
{
        _cleanup_free_ char *cs = ts_read_fixture("hybrid/cpu.stat");
        _cleanup_free_ char *st = ts_read_fixture("hybrid/cpuacct.stat");
        _cleanup_free_ char *us = ts_read_fixture("hybrid/cpuacct.usage");
        tr_usage a, b;
        tr_usage_init(&a);
        tr_usage_init(&b);
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpu_stat(cs, &a), 0);
        ASSERT_FIELD(a, cpu_usec, 154978, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(a, cpu_user_usec, 127161, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(a, cpu_system_usec, 27816, TR_SRC_CGROUP_V2);
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpuacct_stat(st, 100, &b), 0);
        ASSERT_FIELD(b, cpu_user_usec, 120000, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(b, cpu_system_usec, 20000, TR_SRC_CGROUP_V1);
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpuacct_usage(us, &b), 0);
        ASSERT_FIELD(b, cpu_usec, 154978, TR_SRC_CGROUP_V1);
        /* captured together: v2 core accounting and v1 cpuacct agree */
        CU_ASSERT_EQUAL(a.cpu_usec.value, b.cpu_usec.value);
        CU_ASSERT_EQUAL(tr_parse_cpuacct_stat(st, 0, &b), -EINVAL);
        CU_ASSERT_EQUAL(tr_parse_cpuacct_usage("12a\n", &b), -EINVAL);
}

/* cpuacct.usage_all: its sums are usage_user and usage_sys, captured together; they are
 * tick-sampled, so they do not add up to cpuacct.usage (cgparse.c) */
static void test_hybrid_usage_all(void)
{
        _cleanup_free_ char *all = ts_read_fixture("hybrid/usage_all/cpuacct.usage_all");
        _cleanup_free_ char *us = ts_read_fixture("hybrid/usage_all/cpuacct.usage");
        _cleanup_free_ char *user = ts_read_fixture("hybrid/usage_all/cpuacct.usage_user");
        _cleanup_free_ char *sys = ts_read_fixture("hybrid/usage_all/cpuacct.usage_sys");
        uint64_t user_ns, sys_ns;
        CU_ASSERT_FATAL(tr_parse_u64(user, &user_ns) == 0 && tr_parse_u64(sys, &sys_ns) == 0);
        tr_usage u;
        tr_usage_init(&u);
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpuacct_usage_all(all, &u), 0);
        ASSERT_FIELD(u, cpu_user_usec, user_ns / 1000, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, cpu_system_usec, sys_ns / 1000, TR_SRC_CGROUP_V1);
        CU_ASSERT_FALSE(u.cpu_usec.available); /* the total is cpuacct.usage's alone */
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpuacct_usage(us, &u), 0);
        CU_ASSERT_NOT_EQUAL(u.cpu_usec.value, u.cpu_user_usec.value + u.cpu_system_usec.value);
}

static void check_usage_all(const char *text, int want, uint64_t user_usec, uint64_t system_usec)
{
        tr_usage u;
        tr_usage_init(&u);
        int r = tr_parse_cpuacct_usage_all(text, &u);
        CU_ASSERT_EQUAL(r, want);
        if (r != want)
                fprintf(stderr, "usage_all %s: %d, want %d\n", text ? text : "(null)", r, want);
        if (want == 0) {
                CU_ASSERT_EQUAL(u.cpu_user_usec.value, user_usec);
                CU_ASSERT_EQUAL(u.cpu_system_usec.value, system_usec);
        } else {
                CU_ASSERT_FALSE(u.cpu_user_usec.available || u.cpu_system_usec.available);
        }
}

static void test_usage_all_forms(void)
{
        check_usage_all("cpu user system\n0 1000 2000\n1 3000 4000\n", 0, 4, 6);
        check_usage_all("cpu user system\n0 1000 2000", 0, 1, 2); /* no last newline */
        check_usage_all("cpu user system\n0 18446744073709551615 0\n", 0, 18446744073709551, 0);
        check_usage_all("cpu user system\n0 18446744073709551615 0\n1 1 0\n", -ERANGE, 0, 0);
        check_usage_all("cpu user system\n0 18446744073709551616 0\n", -ERANGE, 0, 0);
        check_usage_all("cpu user system\n", -EINVAL, 0, 0);      /* cut after the header */
        check_usage_all("cpu user system\n0 1000\n", -EINVAL, 0, 0); /* cut within a line */
        check_usage_all("cpu user system\n0 1000 2000 5\n", -EINVAL, 0, 0);
        check_usage_all("cpu user system\n0 -1 2000\n", -EINVAL, 0, 0);
        check_usage_all("cpu system user\n0 1000 2000\n", -EINVAL, 0, 0); /* another layout */
        check_usage_all("", -EINVAL, 0, 0);
        check_usage_all(NULL, -EINVAL, 0, 0);
}

static void test_hybrid_memory(void)
{
        tr_usage u;
        parse_fixture("hybrid/memory.stat", tr_parse_memory_stat_v1, &u);
        ASSERT_FIELD(u, memory_anon_bytes, 40443904, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, memory_shmem_bytes, 0, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, memory_file_bytes, 651264, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, rss_bytes, 40443904, TR_SRC_CGROUP_V1);
        _cleanup_free_ char *oc = ts_read_fixture("hybrid/memory.oom_control");
        uint64_t k = 9;
        CU_ASSERT_EQUAL(tr_parse_oom_control_v1(oc, &k), 0);
        CU_ASSERT_EQUAL(k, 0);
        _cleanup_free_ char *cur = ts_read_fixture("hybrid/memory.usage_in_bytes");
        uint64_t v;
        CU_ASSERT_EQUAL(tr_parse_u64(cur, &v), 0);
        CU_ASSERT(v >= 40443904); /* charged memory includes rss */
}

/* memory.numa_stat's hierarchical LRU counts against memory.stat read the moment before,
 * and malformed inputs. */
static void check_numa(const char *text, long page_size, int want_r, uint64_t anon, uint64_t total)
{
        uint64_t a = 0, t = 0;
        int r = tr_parse_memory_numa_stat_v1(text, page_size, &a, &t);
        if (r != want_r || (r == 0 && (a != anon || t != total)))
                fprintf(stderr, "numa_stat \"%.40s\": %d %llu %llu, want %d %llu %llu\n", text ? text : "(null)", r,
                        (unsigned long long) a, (unsigned long long) t, want_r, (unsigned long long) anon,
                        (unsigned long long) total);
        CU_ASSERT(r == want_r && (r != 0 || (a == anon && t == total)));
}

static void test_hybrid_numa_stat(void)
{
        _cleanup_free_ char *numa = ts_read_fixture("hybrid/numa/memory.numa_stat");
        check_numa(numa, 4096, 0, 5950ull * 4096, 7054ull * 4096);
        /* the same moment's memory.stat: anon LRU = total_rss + total_shmem exactly; all LRU
         * pages = total_rss + total_cache but for 4 pages still in an LRU-add batch */
        tr_usage u;
        parse_fixture("hybrid/numa/memory.stat", tr_parse_memory_stat_v1, &u);
        CU_ASSERT_EQUAL(u.rss_bytes.value, 5950ull * 4096);
        CU_ASSERT_EQUAL(u.memory_anon_bytes.value + u.memory_file_bytes.value + u.memory_shmem_bytes.value,
                        7058ull * 4096);
        check_numa("hierarchical_total=3 N0=3\nhierarchical_anon=2 N0=2\n", 65536, 0, 2ull * 65536, 3ull * 65536);
        check_numa("hierarchical_total=3\nhierarchical_anon=2", 4096, 0, 8192, 12288); /* no node columns */
        check_numa("hierarchical_anon=2\nhierarchical_total=3\n", 4096, 0, 8192, 12288); /* other order */
        check_numa("hierarchical_totals=9\nhierarchical_total=3\nhierarchical_anon=2\n", 4096, 0, 8192, 12288);
        check_numa("hierarchical_total=3\nhierarchical_", 4096, -EINVAL, 0, 0); /* cut short */
        check_numa("hierarchical_total=3\nh", 4096, -EINVAL, 0, 0);
        check_numa("total=3 N0=3\nanon=2 N0=2\n", 4096, -EINVAL, 0, 0); /* no hierarchical lines */
        check_numa("hierarchical_total=3 N0=3\n", 4096, -EINVAL, 0, 0);
        check_numa("hierarchical_total=x\nhierarchical_anon=2\n", 4096, -EINVAL, 0, 0);
        check_numa("hierarchical_total=3x\nhierarchical_anon=2\n", 4096, -EINVAL, 0, 0);
        check_numa("hierarchical_total=18446744073709551615\nhierarchical_anon=2\n", 4096, -ERANGE, 0, 0);
        check_numa("hierarchical_total=3\nhierarchical_anon=2\n", 0, -EINVAL, 0, 0);
        check_numa(NULL, 4096, -EINVAL, 0, 0);
}

static void test_hybrid_blkio(void)
{
        tr_usage u;
        parse_fixture("hybrid/blkio.throttle.io_service_bytes_recursive", tr_parse_blkio_bytes, &u);
        ASSERT_FIELD(u, io_read_bytes, 0, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, io_write_bytes, 2097152, TR_SRC_CGROUP_V1);
        /* "Total 0" alone: no device is counted, so I/O is unknown, not 0 */
        tr_usage_init(&u);
        CU_ASSERT_EQUAL(tr_parse_blkio_bytes("Total 0\n", &u), 0);
        CU_ASSERT_FALSE(u.io_read_bytes.available);
        CU_ASSERT_FALSE(u.io_write_bytes.available);
        CU_ASSERT_EQUAL(tr_parse_blkio_bytes("8:0 Read x\n", &u), -EINVAL);
        CU_ASSERT_EQUAL(tr_parse_blkio_bytes("junk line here\n", &u), -EINVAL);
}

/* ---- v1 (from the docs) ---- */

static void test_v1_cpuacct(void)
{
        _cleanup_free_ char *st = ts_read_fixture("v1/cpuacct.stat");
        _cleanup_free_ char *us = ts_read_fixture("v1/cpuacct.usage");
        tr_usage u;
        tr_usage_init(&u);
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpuacct_stat(st, 100, &u), 0);
        ASSERT_FIELD(u, cpu_user_usec, 47210000, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, cpu_system_usec, 13080000, TR_SRC_CGROUP_V1);
        tr_usage_init(&u);
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpuacct_stat(st, 250, &u), 0);
        ASSERT_FIELD(u, cpu_user_usec, 18884000, TR_SRC_CGROUP_V1);
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpuacct_usage(us, &u), 0);
        ASSERT_FIELD(u, cpu_usec, 62310048, TR_SRC_CGROUP_V1);
}

static void test_v1_memory(void)
{
        tr_usage u;
        parse_fixture("v1/memory.stat", tr_parse_memory_stat_v1, &u);
        /* total_* (hierarchical), not the cgroup's own rss 4096 / cache 1048576 */
        ASSERT_FIELD(u, memory_anon_bytes, 524288000, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, memory_shmem_bytes, 16777216, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, memory_file_bytes, 115343360 - 16777216, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, rss_bytes, 524288000 + 16777216, TR_SRC_CGROUP_V1);
        /* without total_* lines: the plain keys */
        tr_usage_init(&u);
        CU_ASSERT_EQUAL(tr_parse_memory_stat_v1("cache 100\nrss 50\nshmem 10\n", &u), 0);
        ASSERT_FIELD(u, rss_bytes, 60, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, memory_file_bytes, 90, TR_SRC_CGROUP_V1);
        _cleanup_free_ char *oc = ts_read_fixture("v1/memory.oom_control");
        uint64_t k = 0;
        CU_ASSERT_EQUAL(tr_parse_oom_control_v1(oc, &k), 0);
        CU_ASSERT_EQUAL(k, 1);
        CU_ASSERT_EQUAL(tr_parse_oom_control_v1("oom_kill_disable 0\nunder_oom 0\n", &k), -EINVAL);
}

static void test_v1_blkio(void)
{
        tr_usage u;
        parse_fixture("v1/blkio.throttle.io_service_bytes_recursive", tr_parse_blkio_bytes, &u);
        ASSERT_FIELD(u, io_read_bytes, 1048576 + 524288, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, io_write_bytes, 3145728, TR_SRC_CGROUP_V1);
}

/* ---- captured in qemu guests on Debian 12's kernel 6.1 (tests/vm/capture-fixtures): a
 * cgroup that spun ~1 s, holds 80 MB anonymous (perl) and 4 MiB of shmem, and wrote 8 MiB
 * with fsync to the guest's virtio disk (254:0) and read it back with O_DIRECT ---- */

static void test_v2_guest(void)
{
        _cleanup_free_ char *cpu = ts_read_fixture("v2-guest/cpu.stat");
        _cleanup_free_ char *mem = ts_read_fixture("v2-guest/memory.stat");
        _cleanup_free_ char *ev = ts_read_fixture("v2-guest/memory.events");
        _cleanup_free_ char *io = ts_read_fixture("v2-guest/io.stat");
        _cleanup_free_ char *cg = ts_read_fixture("v2-guest/cgroup.events");
        _cleanup_free_ char *pr = ts_read_fixture("v2-guest/memory.pressure");
        tr_usage u;
        tr_usage_init(&u);
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpu_stat(cpu, &u), 0);
        ASSERT_FIELD(u, cpu_usec, 3916611, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, cpu_user_usec, 1277521, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, cpu_system_usec, 2639090, TR_SRC_CGROUP_V2);
        CU_ASSERT_EQUAL_FATAL(tr_parse_memory_stat_v2(mem, &u), 0);
        ASSERT_FIELD(u, memory_anon_bytes, 80453632, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, memory_shmem_bytes, 4194304, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, memory_file_bytes, 9490432 - 4194304, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, rss_bytes, 80453632 + 4194304, TR_SRC_CGROUP_V2);
        CU_ASSERT_EQUAL_FATAL(tr_parse_memory_events(ev, &u), 0);
        ASSERT_FIELD(u, oom_kills, 0, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, oom_group_kills, 0, TR_SRC_CGROUP_V2); /* 6.1 has oom_group_kill */
        CU_ASSERT_EQUAL_FATAL(tr_parse_io_stat(io, &u), 0);
        ASSERT_FIELD(u, io_read_bytes, 8392704, TR_SRC_CGROUP_V2);
        ASSERT_FIELD(u, io_write_bytes, 8388608, TR_SRC_CGROUP_V2);
        int populated = -1, frozen = -1;
        CU_ASSERT_EQUAL(tr_parse_cgroup_events(cg, &populated, &frozen), 0);
        CU_ASSERT_EQUAL(populated, 1);
        CU_ASSERT_EQUAL(frozen, 0);
        uint64_t some = 1, full = 1;
        bool has_full = false;
        CU_ASSERT_EQUAL(tr_parse_pressure(pr, &some, &full, &has_full), 0);
        CU_ASSERT(has_full && some == 0 && full == 0);
}

static void test_v1_guest(void)
{
        _cleanup_free_ char *st = ts_read_fixture("v1-guest/cpuacct.stat");
        _cleanup_free_ char *us = ts_read_fixture("v1-guest/cpuacct.usage");
        _cleanup_free_ char *mem = ts_read_fixture("v1-guest/memory.stat");
        _cleanup_free_ char *oc = ts_read_fixture("v1-guest/memory.oom_control");
        _cleanup_free_ char *bl = ts_read_fixture("v1-guest/blkio.throttle.io_service_bytes_recursive");
        tr_usage u;
        tr_usage_init(&u);
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpuacct_stat(st, 100, &u), 0);
        ASSERT_FIELD(u, cpu_user_usec, 1230000, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, cpu_system_usec, 4540000, TR_SRC_CGROUP_V1);
        CU_ASSERT_EQUAL_FATAL(tr_parse_cpuacct_usage(us, &u), 0);
        ASSERT_FIELD(u, cpu_usec, 5781184, TR_SRC_CGROUP_V1);
        CU_ASSERT_EQUAL_FATAL(tr_parse_memory_stat_v1(mem, &u), 0);
        ASSERT_FIELD(u, memory_anon_bytes, 80453632, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, memory_shmem_bytes, 4194304, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, memory_file_bytes, 9453568 - 4194304, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, rss_bytes, 80453632 + 4194304, TR_SRC_CGROUP_V1);
        uint64_t k = 1;
        CU_ASSERT_EQUAL(tr_parse_oom_control_v1(oc, &k), 0); /* 6.1 has oom_kill */
        CU_ASSERT_EQUAL(k, 0);
        CU_ASSERT_EQUAL_FATAL(tr_parse_blkio_bytes(bl, &u), 0);
        ASSERT_FIELD(u, io_read_bytes, 8388608, TR_SRC_CGROUP_V1);
        ASSERT_FIELD(u, io_write_bytes, 8388608, TR_SRC_CGROUP_V1);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "keyed_u64", test_keyed_u64 },
                { "v2_cpu_stat", test_v2_cpu_stat },
                { "v2_cpu_stat_forms", test_v2_cpu_stat_forms },
                { "v2_memory_stat", test_v2_memory_stat },
                { "v2_memory_events", test_v2_memory_events },
                { "v2_io_stat", test_v2_io_stat },
                { "pressure_v2_hybrid", test_pressure },
                { "cgroup_events", test_cgroup_events },
                { "hybrid_cpu", test_hybrid_cpu },
                { "hybrid_usage_all", test_hybrid_usage_all },
                { "usage_all_forms", test_usage_all_forms },
                { "hybrid_memory", test_hybrid_memory },
                { "hybrid_numa_stat", test_hybrid_numa_stat },
                { "hybrid_blkio", test_hybrid_blkio },
                { "v1_cpuacct", test_v1_cpuacct },
                { "v1_memory", test_v1_memory },
                { "v1_blkio", test_v1_blkio },
                { "v2_guest (captured, 6.1)", test_v2_guest },
                { "v1_guest (captured, 6.1)", test_v1_guest },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("cgparse", NULL, NULL, tests);
}
