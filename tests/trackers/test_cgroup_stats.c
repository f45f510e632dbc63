/* test_cgroup_stats.c - members and usage (cgroup-stats.c): 200 MB peak, OOM counted over
 * the subtree, members beyond one seq_file buffer live (root); the pure v2 and pure v1 file
 * selection on fixture trees (no root); a PSI file that refuses reads (see cgtest.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "cgtest.h"
#include "trackers/cgroup-notify.h"
#include "trackers/util.h"

static void check_peak_memory(const tr_hierarchies *hs, const char *tag)
{
        tr_cgroup *cg = make_cg_tagged(hs, "mem", tag);
        if (!cg)
                return;
        pid_t p = start_gated(cg, run_touch, (void *) (uintptr_t) (200 * MB));
        int st = ts_wait(p, 60000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        tr_usage u;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        if (!u.memory_peak_bytes.available) {
                ts_skip("peak memory", "%s: no memory.peak / max_usage_in_bytes here", tag);
        } else {
                printf("\n    peak (%s): %llu MB\n", tag, (unsigned long long) (u.memory_peak_bytes.value / MB));
                CU_ASSERT(u.memory_peak_bytes.value >= 200 * MB);
        }
        CU_ASSERT_EQUAL(u.num_procs.value, 0);
        kill_destroy(cg);
}

/* The classic record's RSS (TR_WANT_RSS: v1 memory.numa_stat's anon LRU pages, v2
 * memory.stat) against memory.stat's rss + shmem, read the moment before, of a process
 * holding 64 MB: the same figure but for pages still in a CPU's LRU-add batch (seen: 10-30
 * pages short; at most a batch of small pages per CPU). */
static void check_rss_sources(const tr_hierarchies *hs, const char *tag)
{
        tr_cgroup *cg = make_cg_tagged(hs, "rss", tag);
        if (!cg)
                return;
        pid_t p = start_gated(cg, run_hold, (void *) (uintptr_t) (64 * MB));
        tr_usage cheap, full;
        tr_error err = { 0 };
        bool held = false;
        for (int i = 0; i < 500 && !held; i++) { /* until the 64 MB are touched */
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage_want(cg, TR_WANT_MEMORY_STAT | TR_WANT_MEMORY, &full, &err), 0);
                held = full.rss_bytes.available && full.rss_bytes.value >= 64 * MB;
                if (!held)
                        usleep(10000);
        }
        CU_ASSERT_EQUAL(tr_cgroup_usage_want(cg, TR_WANT_RSS | TR_WANT_MEMORY, &cheap, &err), 0);
        printf("\n    rss (%s): %llu bytes cheap, %llu bytes memory.stat; current %llu / %llu\n", tag,
               (unsigned long long) cheap.rss_bytes.value, (unsigned long long) full.rss_bytes.value,
               (unsigned long long) cheap.memory_current_bytes.value, (unsigned long long) full.memory_current_bytes.value);
        CU_ASSERT_TRUE(held);
        CU_ASSERT_TRUE(full.rss_bytes.available && cheap.memory_current_bytes.available);
        uint64_t a = cheap.rss_bytes.value, b = full.rss_bytes.value;
        CU_ASSERT((a > b ? a - b : b - a) <= 2 * MB);
        CU_ASSERT(cheap.memory_current_bytes.value >= cheap.rss_bytes.value);
        if (tr_hierarchies_best(hs, TR_CTRL_MEMORY) != hs->v2) /* v1 memory: memory.stat was not read */
                CU_ASSERT_FALSE(cheap.memory_anon_bytes.available);
        ts_kill_reap(p);
        kill_destroy(cg);
}

static void check_oom(const tr_hierarchies *hs, const char *tag)
{
        char name[64], sub[80];
        snprintf(name, sizeof name, "oom-%s", tag);
        snprintf(sub, sizeof sub, "%s/sub", name);
        tr_cgroup *cg = make_cg(hs, name);
        _cleanup_cgroup_ tr_cgroup *child = make_cg(hs, sub);
        if (!cg || !child)
                return;
        tr_error err = { 0 };
        int mi = tr_hierarchies_best(hs, TR_CTRL_MEMORY);
        int r;
        if (tr_cgroup_has_file(cg, mi, "memory.limit_in_bytes")) {
                r = tr_cgroup_write(cg, mi, "memory.limit_in_bytes", "67108864", &err);
                if (r == 0 && tr_cgroup_has_file(cg, mi, "memory.memsw.limit_in_bytes"))
                        r = tr_cgroup_write(cg, mi, "memory.memsw.limit_in_bytes", "67108864", &err);
        } else if (tr_cgroup_has_file(cg, mi, "memory.max")) {
                r = tr_cgroup_write(cg, mi, "memory.max", "67108864", &err);
                if (r == 0 && tr_cgroup_has_file(cg, mi, "memory.swap.max"))
                        r = tr_cgroup_write(cg, mi, "memory.swap.max", "0", &err);
        } else {
                ts_skip("oom", "%s: no memory limit file", tag);
                kill_destroy(cg);
                return;
        }
        if (r < 0)
                printf("\n    limit: %s\n", err.msg);
        CU_ASSERT_EQUAL_FATAL(r, 0);
        /* the victim sits in a child cgroup: v1 counts the kill there only */
        pid_t p = start_gated(child, run_touch, (void *) (uintptr_t) (512 * MB));
        int st = ts_wait(p, 60000);
        CU_ASSERT(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        tr_usage u;
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_TRUE(u.oom_kills.available);
        printf("\n    oom_kills (%s): %llu\n", tag, (unsigned long long) u.oom_kills.value);
        CU_ASSERT(u.oom_kills.value >= 1);
        kill_destroy(cg);
}

/* Membership through the kept-open v2 cgroup.procs when it is longer than one seq_file
 * buffer (4096 bytes: ~800 pids of 5 digits), and a child cgroup appearing after the first
 * read (the "no subdirectory" shortcut must notice it). */
static void check_members_large(const tr_hierarchies *hs, const char *tag)
{
        char name[64], sub[80];
        snprintf(name, sizeof name, "large-%s", tag);
        tr_cgroup *cg = make_cg(hs, name);
        if (!cg)
                return;
        pid_t a = start_gated(cg, run_many, (void *) (intptr_t) 900);
        size_t n = wait_members(cg, 901, 30000);
        CU_ASSERT_EQUAL(n, 901);
        int v2 = hs->v2;
        _cleanup_free_ char *text = NULL;
        if (v2 >= 0 && tr_cgroup_dirfd(cg, v2) >= 0) {
                size_t len = 0;
                CU_ASSERT(tr_read_file_alloc_at(tr_cgroup_dirfd(cg, v2), "cgroup.procs", &text, &len, NULL) > 0);
                printf("\n    cgroup.procs (%s): %zu bytes, %zu members\n", tag, len, n);
        }
        tr_usage u;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_EQUAL(u.num_procs.value, 901);
        /* a child cgroup made after the first reads, with one process */
        snprintf(sub, sizeof sub, "%s/later", name);
        _cleanup_cgroup_ tr_cgroup *child = make_cg(hs, sub);
        CU_ASSERT_FATAL(child != NULL);
        pid_t c = start_in(child, ts_sleep_forever, NULL);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 902);
        CU_ASSERT_TRUE(tr_pidset_contains(&m, c));
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_EQUAL(u.num_procs.value, 902);
        kill_destroy(cg);
        waitpid(a, NULL, 0);
        ts_kill_reap(c);
        ts_reap_orphans(0);
}

/* ---- the handle on fixture trees (no root): pure v2 and pure v1 file selection ------- */

/* Regular files stand in for cgroupfs: the handle only openat()s and pread()s them.  This
 * runs the pure-v2 usage path that this hybrid host cannot run live (FACTS). */

static void test_fixture_tree_v2(void)
{
        int fds0 = count_fds();
        char tmp[] = "/tmp/procd-cgfx.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char root[PATH_MAX], job[PATH_MAX], sub[PATH_MAX], mi[PATH_MAX * 2];
        snprintf(root, sizeof root, "%s/cg2", tmp);
        mkdirs(tmp, "cg2/job/a/b");
        snprintf(job, sizeof job, "%s/job", root);
        snprintf(sub, sizeof sub, "%s/job/a/b", root);
        static const char *const files[] = { "cpu.stat", "memory.current", "memory.peak", "memory.stat",
                                             "memory.events", "io.stat", "cpu.pressure", "memory.pressure",
                                             "io.pressure", "cgroup.events" };
        for (size_t k = 0; k < TR_ARRAY_SIZE(files); k++) {
                char rel[64];
                snprintf(rel, sizeof rel, "v2/%s", files[k]);
                put_fixture(job, files[k], rel);
        }
        put_file(job, "pids.current", "5\n");
        put_file(job, "pids.peak", "9\n");
        put_file(job, "cgroup.procs", "300\n100\n");
        put_file(sub, "cgroup.procs", "200\n100\n");
        snprintf(mi, sizeof mi, "26 22 0:23 / %s rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n", root);
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V2);
        _cleanup_free_ char *ctl = ts_read_fixture("v2/cgroup.controllers");
        tr_hierarchies_set_v2_controllers(&hs, ctl);

        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg, &err), 0);
        CU_ASSERT(tr_cgroup_dirfd(cg, 0) >= 0);
        CU_ASSERT(tr_cgroup_v2_fd(cg) >= 0);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 3); /* 100, 200, 300: deduplicated over the subtree */
        bool pop = false;
        CU_ASSERT_EQUAL(tr_cgroup_populated(cg, &pop, &err), 0);
        CU_ASSERT_TRUE(pop);
        for (int round = 0; round < 2; round++) { /* the second through kept-open fds */
                tr_usage u;
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage(cg, &u, &err), 0);
                CU_ASSERT_EQUAL(u.sources, TR_SRC_CGROUP_V2);
                CU_ASSERT_EQUAL(u.num_procs.value, 3);
                CU_ASSERT_EQUAL(u.cpu_usec.value, 8123456);
                CU_ASSERT_EQUAL(u.cpu_user_usec.value, 6100000);
                CU_ASSERT_EQUAL(u.memory_current_bytes.value, 268435456);
                CU_ASSERT_EQUAL(u.memory_peak_bytes.value, 314572800);
                CU_ASSERT_EQUAL(u.rss_bytes.value, 209715200 + 10485760);
                CU_ASSERT_EQUAL(u.memory_file_bytes.value, 52428800 - 10485760);
                CU_ASSERT_EQUAL(u.oom_kills.value, 2);
                CU_ASSERT_EQUAL(u.oom_group_kills.value, 1);
                CU_ASSERT_EQUAL(u.io_read_bytes.value, 1459200 + 40960);
                CU_ASSERT_EQUAL(u.io_write_bytes.value, 314773504 + 4096);
                CU_ASSERT_EQUAL(u.pids_current.value, 5);
                CU_ASSERT_EQUAL(u.pids_peak.value, 9);
                CU_ASSERT_EQUAL(u.psi_cpu_some_usec.value, 173504);
                CU_ASSERT_EQUAL(u.psi_memory_full_usec.value, 1870);
                CU_ASSERT_EQUAL(u.psi_io_some_usec.value, 90213);
                CU_ASSERT_TRUE(u.psi_io_full_usec.available);
                CU_ASSERT_FALSE(u.image_size_bytes.available); /* /proc only */
        }
        /* the counter changes between reads: pread from offset 0 sees the new value */
        put_file(job, "memory.current", "4096\n");
        tr_usage u;
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_EQUAL(u.memory_current_bytes.value, 4096);
        /* read/write/has_file */
        char buf[64];
        CU_ASSERT_EQUAL(tr_cgroup_read(cg, 0, "pids.peak", buf, sizeof buf, &err), 2);
        CU_ASSERT_TRUE(tr_cgroup_has_file(cg, 0, "memory.peak"));
        CU_ASSERT_FALSE(tr_cgroup_has_file(cg, 0, "memory.max"));
        CU_ASSERT_FALSE(tr_cgroup_has_file(cg, 3, "memory.peak"));
        CU_ASSERT_EQUAL(tr_cgroup_read(cg, 0, "../x", buf, sizeof buf, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_write(cg, 0, "pids.max", "5", &err), -EPERM); /* no MAY_ACT */
        {
                _cleanup_cgroup_ tr_cgroup *rw = NULL;
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", TR_CG_MAY_ACT, &rw, &err), 0);
                CU_ASSERT_EQUAL(tr_cgroup_write(rw, 1, "pids.max", "5", &err), -ENOENT);
                CU_ASSERT_EQUAL(tr_cgroup_write(rw, 0, "../x", "5", &err), -EINVAL);
        }
        /* the kept-open cgroup.procs: longer than its first buffer, then rewritten shorter
         * (each read starts at offset 0 and sees the current content) */
        {
                size_t cap = 3000 * 8 + 1, off = 0;
                _cleanup_free_ char *big = malloc(cap);
                CU_ASSERT_PTR_NOT_NULL_FATAL(big);
                for (int pid = 1000; pid < 4000; pid++)
                        off += (size_t) snprintf(big + off, cap - off, "%d\n", pid);
                put_file(job, "cgroup.procs", big);
                CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
                CU_ASSERT_EQUAL(m.n, 3000 + 2); /* + 100, 200 of the subtree */
                CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
                CU_ASSERT_EQUAL(u.num_procs.value, 3002);
                put_file(job, "cgroup.procs", "300\n100\n");
                CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
                CU_ASSERT_EQUAL(m.n, 3);
        }
        /* a child vanishing mid-walk is not an error; the handle's own cgroup vanishing is */
        rm_tree(sub);
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 2);
        /* open_pid maps "0::/job" of a fixture cgroup file */
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL(tr_pid_cgroups_parse(&hs, "0::/job\n", &pc, NULL), 0);
        CU_ASSERT_STRING_EQUAL(pc.paths[0], "/job");
        tr_pid_cgroups_clear(&pc);
        tr_cgroup_free(TR_TAKE_PTR(cg));
        CU_ASSERT_EQUAL(count_fds(), fds0); /* the handle closed every fd it kept */
        rm_tree(tmp);
}

static void test_fixture_tree_v1(void)
{
        char tmp[] = "/tmp/procd-cgfx.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char d[PATH_MAX], mi[4 * PATH_MAX];
        mkdirs(tmp, "cpu,cpuacct/job");
        mkdirs(tmp, "memory/job/sub");
        mkdirs(tmp, "blkio/job");
        mkdirs(tmp, "systemd");
        snprintf(d, sizeof d, "%s/cpu,cpuacct/job", tmp);
        put_fixture(d, "cpuacct.usage", "v1/cpuacct.usage");
        put_fixture(d, "cpuacct.stat", "v1/cpuacct.stat");
        put_file(d, "cgroup.procs", "11\n12"); /* no last newline */
        snprintf(d, sizeof d, "%s/memory/job", tmp);
        put_fixture(d, "memory.usage_in_bytes", "v1/memory.usage_in_bytes");
        put_fixture(d, "memory.max_usage_in_bytes", "v1/memory.max_usage_in_bytes");
        put_fixture(d, "memory.stat", "v1/memory.stat");
        put_fixture(d, "memory.oom_control", "v1/memory.oom_control");
        put_file(d, "cgroup.procs", "10\n11\n");
        snprintf(d, sizeof d, "%s/memory/job/sub", tmp);
        put_file(d, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
        /* lines that are no pid (the kernel writes none): skipped, 13 alone counted */
        put_file(d, "cgroup.procs", "13\nx1\n0\n2147483648\n99999999999999\n\n 7\n8 \n");
        snprintf(d, sizeof d, "%s/blkio/job", tmp);
        put_fixture(d, "blkio.throttle.io_service_bytes_recursive", "v1/blkio.throttle.io_service_bytes_recursive");
        put_file(d, "cgroup.procs", "");
        snprintf(mi, sizeof mi,
                 "29 24 0:25 / %s/cpu\\054cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
                 "30 24 0:26 / %s/memory rw - cgroup cgroup rw,memory\n"
                 "31 24 0:27 / %s/blkio rw - cgroup cgroup rw,blkio\n"
                 "25 24 0:21 / %s/systemd rw - cgroup cgroup rw,xattr,name=systemd\n",
                 tmp, tmp, tmp, tmp);
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V1);
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg, &err), 0);
        CU_ASSERT_EQUAL(tr_cgroup_dirfd(cg, 3), -1); /* not in name=systemd */
        CU_ASSERT_PTR_NULL(tr_cgroup_path(cg, 3));
        CU_ASSERT_EQUAL(tr_cgroup_v2_fd(cg), -1);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 4); /* union of the v1 hierarchies: 10..13 */
        tr_usage u;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_EQUAL(u.sources, TR_SRC_CGROUP_V1);
        CU_ASSERT_EQUAL(u.cpu_usec.value, 62310048);
        if (sysconf(_SC_CLK_TCK) == 100)
                CU_ASSERT_EQUAL(u.cpu_user_usec.value, 47210000);
        /* total_rss + total_cache of memory.stat (the exact figure), not usage_in_bytes */
        CU_ASSERT_EQUAL(u.memory_current_bytes.value, 524288000 + 115343360);
        CU_ASSERT_EQUAL(u.memory_peak_bytes.value, 702545920);
        CU_ASSERT_EQUAL(u.rss_bytes.value, 524288000 + 16777216);
        CU_ASSERT_EQUAL(u.oom_kills.value, 3); /* 1 + 2 in the child: summed */
        CU_ASSERT_EQUAL(u.io_read_bytes.value, 1048576 + 524288);
        /* the classic record's reads: without memory.numa_stat (no CONFIG_NUMA) memory.stat
         * answers; with it, its hierarchical LRU counts do */
        unsigned classic = TR_WANT_CPU_SPLIT | TR_WANT_MEMORY | TR_WANT_RSS | TR_WANT_PROCS | TR_WANT_IO;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage_want(cg, classic, &u, &err), 0);
        CU_ASSERT_EQUAL(u.rss_bytes.value, 524288000 + 16777216);
        CU_ASSERT_TRUE(u.cpu_user_usec.available && u.cpu_system_usec.available); /* cpuacct.stat's */
        CU_ASSERT_FALSE(u.cpu_usec.available);                                    /* no total read */
        CU_ASSERT_EQUAL(u.memory_current_bytes.value, 524288000 + 115343360);
        snprintf(d, sizeof d, "%s/memory/job", tmp);
        put_fixture(d, "memory.numa_stat", "hybrid/numa/memory.numa_stat");
        _cleanup_cgroup_ tr_cgroup *cg2 = NULL; /* hot files are looked for once per handle */
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg2, &err), 0);
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage_want(cg2, classic, &u, &err), 0);
        uint64_t page = (uint64_t) sysconf(_SC_PAGESIZE);
        CU_ASSERT_EQUAL(u.rss_bytes.value, 5950 * page);
        CU_ASSERT_EQUAL(u.memory_current_bytes.value, 7054 * page);
        CU_ASSERT_FALSE(u.memory_anon_bytes.available);
        CU_ASSERT_EQUAL(u.memory_peak_bytes.value, 702545920);
        CU_ASSERT_FALSE(u.psi_cpu_some_usec.available);
        CU_ASSERT_FALSE(u.pids_current.available);
        /* a kernel without the oom_kill counter (before 4.13): unknown, not 0 */
        snprintf(d, sizeof d, "%s/memory/job", tmp);
        put_file(d, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_FALSE(u.oom_kills.available);
        CU_ASSERT_TRUE(u.memory_current_bytes.available);
        /* memory without memory.stat: usage_in_bytes */
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage_want(cg, TR_WANT_MEMORY, &u, &err), 0);
        CU_ASSERT_EQUAL(u.memory_current_bytes.value, 650117120);
        /* io only where asked for blkio.throttle */
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage_want(cg, TR_WANT_CPU | TR_WANT_IO, &u, &err), 0);
        CU_ASSERT_FALSE(u.io_read_bytes.available);
        bool pop = false;
        CU_ASSERT_EQUAL(tr_cgroup_populated(cg, &pop, &err), 0);
        CU_ASSERT_TRUE(pop);
        tr_cgroup_free(TR_TAKE_PTR(cg));
        rm_tree(tmp);
}

/* A PSI file that answers EOPNOTSUPP (psi=0 kernels that still show the files) is dropped
 * and not retried.  Stand-in for such a file: cgroup.procs of a threaded v2 cgroup, which
 * refuses reads with EOPNOTSUPP (cgroup_procs_start), reached through a symlink named
 * io.pressure in a fixture tree.  After each usage call no fd of ours may point at it. */
static bool fd_open_on(const char *target)
{
        _cleanup_closedir_ DIR *d = opendir("/proc/self/fd");
        if (!d)
                return false;
        struct dirent *de;
        while ((de = readdir(d))) {
                char link[PATH_MAX], path[64];
                snprintf(path, sizeof path, "/proc/self/fd/%s", de->d_name);
                ssize_t n = readlink(path, link, sizeof link - 1);
                if (n <= 0)
                        continue;
                link[n] = '\0';
                if (strcmp(link, target) == 0)
                        return true;
        }
        return false;
}

/* v1 CPU: user and system from cpuacct.usage_all where it is (one read for the two), the
 * total from cpuacct.usage still; a usage_all past the read buffer (more CPUs than it
 * holds) is dropped for the handle and cpuacct.stat answers. */
static void test_v1_usage_all(void)
{
        char tmp[] = "/tmp/procd-cgfx.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char d[PATH_MAX], mi[2 * PATH_MAX], all[PATH_MAX + 32];
        mkdirs(tmp, "cpu,cpuacct/job");
        snprintf(d, sizeof d, "%s/cpu,cpuacct/job", tmp);
        snprintf(all, sizeof all, "%s/cpuacct.usage_all", d);
        put_fixture(d, "cpuacct.usage", "hybrid/usage_all/cpuacct.usage");
        put_fixture(d, "cpuacct.usage_all", "hybrid/usage_all/cpuacct.usage_all");
        put_fixture(d, "cpuacct.stat", "v1/cpuacct.stat");
        put_file(d, "cgroup.procs", "11\n");
        snprintf(mi, sizeof mi, "29 24 0:25 / %s/cpu\\054cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n", tmp);
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        tr_error err = { 0 };
        tr_usage u;
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg, &err), 0);
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage_want(cg, TR_WANT_CPU, &u, &err), 0);
        CU_ASSERT_EQUAL(u.cpu_usec.value, 1098318);
        CU_ASSERT_EQUAL(u.cpu_user_usec.value, 1027983);
        CU_ASSERT_EQUAL(u.cpu_system_usec.value, 68000);
        /* the classic record's CPU: the split from usage_all, the total not read */
        char usage[PATH_MAX + 32];
        snprintf(usage, sizeof usage, "%s/cpuacct.usage", d);
        tr_cgroup_free(TR_TAKE_PTR(cg));
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg, &err), 0);
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage_want(cg, TR_WANT_CPU_SPLIT, &u, &err), 0);
        CU_ASSERT_EQUAL(u.cpu_user_usec.value, 1027983);
        CU_ASSERT_EQUAL(u.cpu_system_usec.value, 68000);
        CU_ASSERT_FALSE(u.cpu_usec.available);
        CU_ASSERT_FALSE(fd_open_on(usage)); /* never opened */
        tr_cgroup_free(TR_TAKE_PTR(cg)); /* its fd on the file closed */
        /* 600 CPUs' lines: more than the 16 KiB read holds */
        static char big[32768];
        size_t n = (size_t) snprintf(big, sizeof big, "cpu user system\n");
        for (int c = 0; c < 600; c++)
                n += (size_t) snprintf(big + n, sizeof big - n, "%d 1000000000000 2000000000000\n", c);
        CU_ASSERT_FATAL(n > 16384 && n < sizeof big);
        put_file(d, "cpuacct.usage_all", big);
        _cleanup_cgroup_ tr_cgroup *cg2 = NULL; /* hot files are looked for once per handle */
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg2, &err), 0);
        for (int round = 0; round < 2; round++) {
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage_want(cg2, TR_WANT_CPU, &u, &err), 0);
                CU_ASSERT_EQUAL(u.cpu_usec.value, 1098318);
                if (sysconf(_SC_CLK_TCK) == 100)
                        CU_ASSERT_EQUAL(u.cpu_user_usec.value, 47210000); /* cpuacct.stat's */
                CU_ASSERT_FALSE(fd_open_on(all));                       /* dropped, not kept */
        }
        tr_cgroup_free(TR_TAKE_PTR(cg2));
        /* no file with the split: the total is the CPU figure there is, asked for or not */
        char stat_file[PATH_MAX + 32];
        snprintf(stat_file, sizeof stat_file, "%s/cpuacct.stat", d);
        CU_ASSERT_EQUAL(unlink(all), 0);
        CU_ASSERT_EQUAL(unlink(stat_file), 0);
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg2, &err), 0);
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_usage_want(cg2, TR_WANT_CPU_SPLIT, &u, &err), 0);
        CU_ASSERT_EQUAL(u.cpu_usec.value, 1098318);
        CU_ASSERT_FALSE(u.cpu_user_usec.available);
        tr_cgroup_free(TR_TAKE_PTR(cg2));
        rm_tree(tmp);
}

/* A handle at rest holds no fd, reads the same again and wakes into its budget; one whose
 * directory was replaced at its path since is not in that hierarchy any more; a budget
 * keeps the handles used last awake, the others at rest. */
static void test_rest_and_budget(void)
{
        char tmp[] = "/tmp/procd-cgrest.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char root[PATH_MAX], dir[PATH_MAX], mi[PATH_MAX * 2];
        snprintf(root, sizeof root, "%s/cg2", tmp);
        mkdirs(tmp, "cg2/j0/self");
        mkdirs(tmp, "cg2/j1/self");
        mkdirs(tmp, "cg2/j2/self");
        for (int j = 0; j < 3; j++) {
                snprintf(dir, sizeof dir, "%s/j%d", root, j);
                put_fixture(dir, "cpu.stat", "v2/cpu.stat");
                put_file(dir, "cgroup.procs", "");
                snprintf(dir, sizeof dir, "%s/j%d/self", root, j);
                put_file(dir, "cgroup.procs", "100\n101\n");
        }
        snprintf(mi, sizeof mi, "26 22 0:23 / %s rw,relatime - cgroup2 cgroup2 rw\n", root);
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        tr_error err = { 0 };
        tr_cgroup *cg[3] = { NULL };
        tr_cg_budget *b = tr_cg_budget_new(2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        int fds0 = count_fds();
        for (int j = 0; j < 3; j++) {
                char path[16];
                snprintf(path, sizeof path, "/j%d", j);
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, path, 0, &cg[j], &err), 0);
                tr_usage u;
                CU_ASSERT_EQUAL(tr_cgroup_usage_want(cg[j], TR_WANT_CPU | TR_WANT_PROCS, &u, &err), 0);
                CU_ASSERT_EQUAL(u.num_procs.value, 2);
        }
        int awake = count_fds() - fds0; /* 3 handles, each dirfd + cpu.stat + procs + self kept */
        CU_ASSERT(awake >= 3 * 4);
        for (int j = 0; j < 3; j++)
                tr_cg_budget_touch(b, cg[j]);
        CU_ASSERT_EQUAL(tr_cg_budget_awake(b), 2);
        CU_ASSERT_EQUAL(count_fds() - fds0, awake / 3 * 2); /* j0 rests: no fd */
        /* j0 at rest reads the same again, and wakes */
        tr_usage u;
        CU_ASSERT_EQUAL(tr_cgroup_usage_want(cg[0], TR_WANT_CPU | TR_WANT_PROCS, &u, &err), 0);
        CU_ASSERT_EQUAL(u.num_procs.value, 2);
        CU_ASSERT_EQUAL(u.cpu_usec.value, 8123456);
        CU_ASSERT_STRING_EQUAL(tr_cgroup_path(cg[0], 0), "/j0");
        /* with no touch: the use woke it into its home budget, so j1 rests (the bound holds
         * whatever the use: a freeze, a kill, a member listing) */
        CU_ASSERT_EQUAL(tr_cg_budget_awake(b), 2);
        CU_ASSERT_EQUAL(count_fds() - fds0, awake / 3 * 2);
        tr_cg_budget_touch(b, cg[0]); /* first already: nothing changes */
        CU_ASSERT_EQUAL(tr_cg_budget_awake(b), 2);
        CU_ASSERT_EQUAL(count_fds() - fds0, awake / 3 * 2);
        /* j1's directory replaced at its path while it rests: gone for the handle */
        char old[PATH_MAX], moved[PATH_MAX];
        snprintf(old, sizeof old, "%s/j1", root);
        snprintf(moved, sizeof moved, "%s/j1-old", root);
        CU_ASSERT_EQUAL_FATAL(rename(old, moved), 0);
        mkdirs(tmp, "cg2/j1");
        put_fixture(old, "cpu.stat", "v2/cpu.stat");
        CU_ASSERT_EQUAL(tr_cgroup_usage_want(cg[1], TR_WANT_CPU, &u, &err), -ENODEV);
        CU_ASSERT_PTR_NULL(tr_cgroup_path(cg[1], 0));
        /* free unlinks from the budget; the budget is freed after its handles */
        for (int j = 0; j < 3; j++)
                tr_cgroup_free(cg[j]);
        CU_ASSERT_EQUAL(tr_cg_budget_awake(b), 0);
        tr_cg_budget_free(b);
        CU_ASSERT_EQUAL(count_fds(), fds0);
        rm_tree(tmp);
}

/* One case of the watched tree: num_procs, and how many own reads were spared so far. */
static void check_watched(tr_hierarchies *hs, tr_cgroup *cg, uint64_t procs, unsigned skipped, const char *what)
{
        tr_error err = { 0 };
        tr_usage u;
        int r = tr_cgroup_usage_want(cg, TR_WANT_PROCS, &u, &err);
        CU_ASSERT_EQUAL(r, 0);
        CU_ASSERT_EQUAL(u.num_procs.value, procs);
        CU_ASSERT_EQUAL(tr_cgroup_own_procs_skipped(cg), skipped);
        if (r != 0 || u.num_procs.value != procs || tr_cgroup_own_procs_skipped(cg) != skipped)
                printf("\n  case '%s' (%s): r %d, procs %llu (want %llu), skipped %u (want %u)", what,
                       hs->notify ? "watched" : "unwatched", r, (unsigned long long) u.num_procs.value,
                       (unsigned long long) procs, tr_cgroup_own_procs_skipped(cg), skipped);
}

/* An owned family cgroup with its leaf, under watches (hs->notify): the own cgroup.procs
 * found empty is not read again until its directory has an event; a process written into
 * it, or a cgroup made below, is counted on the next call.  Unwatched: read every time. */
static void run_watched_own(bool watched)
{
        char tmp[] = "/tmp/procd-cgwatch.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char root[PATH_MAX], fam[PATH_MAX], leaf[PATH_MAX], mi[PATH_MAX * 2];
        snprintf(root, sizeof root, "%s/cg2", tmp);
        snprintf(fam, sizeof fam, "%s/fam", root);
        snprintf(leaf, sizeof leaf, "%s/fam/leaf", root);
        mkdirs(tmp, "cg2/fam/leaf");
        put_file(fam, "cgroup.procs", "");
        put_file(leaf, "cgroup.procs", "100\n");
        snprintf(mi, sizeof mi, "26 22 0:23 / %s rw,relatime - cgroup2 cgroup2 rw\n", root);
        static tr_hierarchies hs; /* ~37 KB: not on the stack */
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        if (watched)
                CU_ASSERT_EQUAL_FATAL(tr_cg_notify_new(&hs.notify), 0);
        tr_error err = { 0 };
        tr_cgroup *cg = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/fam", TR_CG_MAY_ACT | TR_CG_OWNED, &cg, &err), 0);
        unsigned w = watched ? 1 : 0;
        check_watched(&hs, cg, 1, 0, "first call reads, and caches the leaf");
        check_watched(&hs, cg, 1, w, "second: proven empty, not read");
        put_file(fam, "cgroup.procs", "200\n");
        check_watched(&hs, cg, 2, w, "a process written into the family cgroup");
        check_watched(&hs, cg, 2, w, "not empty: read again");
        put_file(fam, "cgroup.procs", "");
        check_watched(&hs, cg, 1, w, "moved out again");
        check_watched(&hs, cg, 1, 2 * w, "proven empty again");
        mkdirs(tmp, "cg2/fam/leaf/sub");
        char subdir[PATH_MAX];
        snprintf(subdir, sizeof subdir, "%s/sub", leaf);
        put_file(subdir, "cgroup.procs", "300\n");
        check_watched(&hs, cg, 2, 3 * w, "a cgroup made below the leaf: counted, the own file still spared");
        char procs[PATH_MAX];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", fam);
        CU_ASSERT_EQUAL(chmod(procs, 0666), 0);
        check_watched(&hs, cg, 2, 3 * w, "others may write the own file now: read");
        check_watched(&hs, cg, 2, 3 * w, "and read again (clone3 into it would be no event)");
        tr_cgroup_free(cg);
        tr_cg_notify_free(hs.notify);
        hs.notify = NULL;
        rm_tree(tmp);
}

static void test_watched_own(void) { run_watched_own(true); }

/* The same on real cgroups (the host's v2 tree): the own read spared, and the family
 * cgroup removed (its leaf first, as rmdir demands) still answers ENODEV, not an empty
 * family. */
static void test_watched_own_removed(void)
{
        if (!root_and_base("own cgroup.procs spared on a real cgroup"))
                return;
        if (ts_hierarchies()->v2 < 0) {
                ts_skip("own cgroup.procs spared on a real cgroup", "no v2 tree (the skip is v2's)");
                return;
        }
        static tr_hierarchies hs; /* the host's, with watches of its own */
        hs = *ts_hierarchies();
        CU_ASSERT_EQUAL_FATAL(tr_cg_notify_new(&hs.notify), 0);
        tr_cgroup *fam = make_cg(&hs, "watched-fam");
        CU_ASSERT_PTR_NOT_NULL_FATAL(fam);
        tr_cgroup *leaf = NULL;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_create_child(fam, TR_CG_LEAF, 1u << hs.v2, false, &leaf, &err), 0);
        pid_t p = start_in(leaf, ts_sleep_forever, NULL);
        check_watched(&hs, fam, 1, 0, "real: first call reads");
        check_watched(&hs, fam, 1, 1, "real: proven empty, not read");
        /* a process written into the family cgroup itself (no controllers enabled for
         * its children here: the write is allowed) */
        char v[16];
        snprintf(v, sizeof v, "%d", (int) p);
        CU_ASSERT_EQUAL(tr_cgroup_write(fam, hs.v2, "cgroup.procs", v, &err), 0);
        check_watched(&hs, fam, 1, 1, "real: moved from the leaf into the family cgroup: read, counted");
        CU_ASSERT_EQUAL(tr_cgroup_write(leaf, hs.v2, "cgroup.procs", v, &err), 0);
        check_watched(&hs, fam, 1, 1, "real: back in the leaf: read");
        check_watched(&hs, fam, 1, 2, "real: proven empty again");
        ts_kill_reap(p);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(leaf, 5 * SEC, &err), 0); /* in the v2 tree only */
        tr_cgroup_free(leaf);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(fam, 5 * SEC, &err), 0);
        tr_usage u;
        CU_ASSERT_EQUAL(tr_cgroup_usage_want(fam, TR_WANT_PROCS, &u, &err), -ENODEV);
        tr_pidset members = TR_PIDSET_INIT;
        CU_ASSERT(tr_cgroup_members(fam, &members, &err) < 0);
        tr_pidset_free(&members);
        tr_cgroup_free(fam);
        tr_cg_notify_free(hs.notify);
        hs.notify = NULL;
}
static void test_unwatched_own(void) { run_watched_own(false); }

static void test_psi_unsupported(void)
{
        if (!ts_cgroup_base()) {
                ts_skip("psi unsupported", "needs root and the test base");
                return;
        }
        const tr_hierarchies *host = ts_hierarchies();
        char thr[PATH_MAX], dom[PATH_MAX], procs[PATH_MAX];
        if (host->v2 < 0 ||
            tr_hierarchy_fs_path(&host->h[host->v2], ts_cgroup_base(), dom, sizeof dom, NULL) < 0) {
                ts_skip("psi unsupported", "no v2 tree");
                return;
        }
        strncat(dom, "/psi-dom", sizeof dom - strlen(dom) - 1);
        snprintf(thr, sizeof thr, "%s/t", dom);
        snprintf(procs, sizeof procs, "%s/cgroup.procs", thr);
        CU_ASSERT_FATAL(mkdir(dom, 0755) == 0 || errno == EEXIST);
        CU_ASSERT_FATAL(mkdir(thr, 0755) == 0 || errno == EEXIST);
        char tpath[PATH_MAX + 16];
        snprintf(tpath, sizeof tpath, "%s/cgroup.type", thr);
        char buf[256];
        int fd = -1;
        if (tr_write_file_at(AT_FDCWD, tpath, "threaded", NULL) < 0 ||
            (fd = open(procs, O_RDONLY | O_CLOEXEC)) < 0 || read(fd, buf, sizeof buf) >= 0 || errno != EOPNOTSUPP) {
                ts_skip("psi unsupported", "a threaded cgroup's cgroup.procs does not answer EOPNOTSUPP here");
                if (fd >= 0)
                        close(fd);
                rmdir(thr);
                rmdir(dom);
                return;
        }
        close(fd);

        char tmp[] = "/tmp/procd-cgfx.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        char root[PATH_MAX], job[PATH_MAX], link[PATH_MAX + 32], mi[PATH_MAX * 2];
        snprintf(root, sizeof root, "%s/cg2", tmp);
        mkdirs(tmp, "cg2/job");
        snprintf(job, sizeof job, "%s/job", root);
        put_fixture(job, "cpu.stat", "v2/cpu.stat");
        put_fixture(job, "cpu.pressure", "v2/cpu.pressure");
        put_file(job, "cgroup.procs", "");
        snprintf(link, sizeof link, "%s/io.pressure", job);
        CU_ASSERT_EQUAL_FATAL(symlink(procs, link), 0);
        snprintf(mi, sizeof mi, "26 22 0:23 / %s rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n", root);
        tr_hierarchies hs;
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, mi, NULL), 0);
        {
                _cleanup_cgroup_ tr_cgroup *cg = NULL;
                tr_error err = { 0 };
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(&hs, "/job", 0, &cg, &err), 0);
                for (int round = 0; round < 3; round++) {
                        tr_usage u;
                        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
                        CU_ASSERT_TRUE(u.psi_cpu_some_usec.available);
                        CU_ASSERT_FALSE(u.psi_io_some_usec.available);
                        /* dropped after the first EOPNOTSUPP and never reopened */
                        CU_ASSERT_FALSE(fd_open_on(procs));
                }
        }
        rm_tree(tmp);
        rmdir(thr);
        rmdir(dom);
}

HOST_TEST(peak_memory, "peak memory")
HOST_TEST(oom, "oom")
HOST_TEST(rss_sources, "rss from the cheapest file")
HOST_TEST(members_large, "members beyond one seq_file buffer")

int main(void)
{
        CU_TestInfo host[] = {
                { "peak_memory", host_peak_memory },
                { "oom", host_oom },
                { "rss_sources", host_rss_sources },
                { "members_large", host_members_large },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo v1[] = {
                { "peak_memory", v1_peak_memory },
                { "oom", v1_oom },
                { "rss_sources", v1_rss_sources },
                { "members_large", v1_members_large },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo trees[] = {
                { "pure_v2_tree", test_fixture_tree_v2 },
                { "pure_v1_tree", test_fixture_tree_v1 },
                { "v1_usage_all", test_v1_usage_all },
                { "psi_unsupported", test_psi_unsupported },
                { "rest_and_budget", test_rest_and_budget },
                { "watched_own_procs", test_watched_own },
                { "watched_own_procs_real_cgroup", test_watched_own_removed },
                { "unwatched_own_procs", test_unwatched_own },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo extra[] = {
                { "cgroup-fixture-trees", NULL, NULL, NULL, NULL, trees },
                CU_SUITE_INFO_NULL,
        };
        return cgt_run("cgroup-stats", host, v1, extra);
}
