/* test_hierarchy.c - mountinfo parsing, mode detection, pid -> cgroup, fs paths (unit, on
 * fixture files from v2, hybrid and v1 hosts) and tr_cgroup_holds_self/_any (live, read-only). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/hierarchy.h"
#include "trackers/util.h"

static void parse_fixture(const char *rel, tr_hierarchies *hs)
{
        _cleanup_free_ char *text = ts_read_fixture(rel);
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(hs, text, &err), 0);
}

static int find_mount(const tr_hierarchies *hs, const char *mp)
{
        for (int i = 0; i < hs->n; i++)
                if (strcmp(hs->h[i].mount_point, mp) == 0)
                        return i;
        return -1;
}

static void test_controller_names(void)
{
        for (int c = 0; c < TR_CTRL_COUNT; c++)
                CU_ASSERT_EQUAL(tr_controller_from_name(tr_controller_name((tr_controller) c)), c);
        CU_ASSERT_STRING_EQUAL(tr_controller_name(TR_CTRL_MEMORY), "memory");
        CU_ASSERT_STRING_EQUAL(tr_controller_name(TR_CTRL_BLKIO), "blkio");
        CU_ASSERT_STRING_EQUAL(tr_controller_name(TR_CTRL_IO), "io");
        CU_ASSERT_EQUAL(tr_controller_from_name("bogus"), -1);
        CU_ASSERT_EQUAL(tr_controller_from_name("name=systemd"), -1);
        CU_ASSERT_EQUAL(tr_controller_from_name(NULL), -1);
        CU_ASSERT_STRING_EQUAL(tr_cgroup_mode_name(TR_MODE_V2), "v2");
        CU_ASSERT_STRING_EQUAL(tr_cgroup_mode_name(TR_MODE_HYBRID), "hybrid");
        CU_ASSERT_STRING_EQUAL(tr_cgroup_mode_name(TR_MODE_V1), "v1");
        CU_ASSERT_STRING_EQUAL(tr_cgroup_mode_name(TR_MODE_NONE), "none");
}

static void test_mode_v2(void)
{
        tr_hierarchies hs;
        parse_fixture("v2/mountinfo", &hs);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V2);
        CU_ASSERT_EQUAL_FATAL(hs.n, 1);
        CU_ASSERT_EQUAL(hs.v2, 0);
        CU_ASSERT_TRUE(hs.h[0].is_v2);
        CU_ASSERT_STRING_EQUAL(hs.h[0].mount_point, "/sys/fs/cgroup");
        CU_ASSERT_STRING_EQUAL(hs.h[0].mount_root, "/");
        CU_ASSERT_STRING_EQUAL(hs.h[0].key, "");
        CU_ASSERT_EQUAL(hs.h[0].controllers, 0u);
        for (int c = 0; c < TR_CTRL_COUNT; c++)
                CU_ASSERT_EQUAL(hs.v1_of[c], -1);
        _cleanup_free_ char *ctl = ts_read_fixture("v2/cgroup.controllers");
        tr_hierarchies_set_v2_controllers(&hs, ctl);
        uint32_t want = (1u << TR_CTRL_CPUSET) | (1u << TR_CTRL_CPU) | (1u << TR_CTRL_IO) | (1u << TR_CTRL_MEMORY) |
                        (1u << TR_CTRL_HUGETLB) | (1u << TR_CTRL_PIDS) | (1u << TR_CTRL_RDMA) | (1u << TR_CTRL_MISC);
        CU_ASSERT_EQUAL(hs.h[0].controllers, want);
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_MEMORY), 0);
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_IO), 0);
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_CPU), 0);
        /* pure v2: the v2 tree even for a controller not offered (cpu.stat is core) */
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_FREEZER), 0);
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_COUNT), -1);
}

static void test_mode_v2_named(void)
{
        tr_hierarchies hs;
        parse_fixture("v2/mountinfo-named", &hs);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V2);
        CU_ASSERT_EQUAL_FATAL(hs.n, 2);
        CU_ASSERT_STRING_EQUAL(hs.h[hs.v2].mount_point, "/sys/fs/cgroup/unified");
        int s = find_mount(&hs, "/sys/fs/cgroup/systemd");
        CU_ASSERT_FATAL(s >= 0);
        CU_ASSERT_FALSE(hs.h[s].is_v2);
        CU_ASSERT_STRING_EQUAL(hs.h[s].key, "name=systemd");
        CU_ASSERT_EQUAL(hs.h[s].controllers, 0u);
        for (int c = 0; c < TR_CTRL_COUNT; c++)
                CU_ASSERT_EQUAL(hs.v1_of[c], -1);
}

static void test_mode_container_escapes(void)
{
        tr_hierarchies hs;
        parse_fixture("v2/mountinfo-container", &hs);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V2);
        CU_ASSERT_EQUAL_FATAL(hs.n, 1); /* the duplicate mount is ignored, the first kept */
        CU_ASSERT_STRING_EQUAL(hs.h[0].mount_point, "/sys/fs/cgroup x");
        CU_ASSERT_STRING_EQUAL(hs.h[0].mount_root, "/kubepods.slice/pod one.slice/cri-abc");

        /* every escape the kernel emits (space, tab, newline, backslash) */
        const char *line = "30 24 0:26 /a\\134b /mnt/c\\011g\\012x\\040y rw - cgroup2 cgroup2 rw\n";
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, line, NULL), 0);
        CU_ASSERT_EQUAL_FATAL(hs.n, 1);
        CU_ASSERT_STRING_EQUAL(hs.h[0].mount_point, "/mnt/c\tg\nx y");
        CU_ASSERT_STRING_EQUAL(hs.h[0].mount_root, "/a\\b");
        CU_ASSERT_FALSE(hs.h[0].favordynmods);
        /* the super options say whether a migration waits for an RCU grace period */
        line = "26 22 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate,favordynmods,memory_recursiveprot\n";
        CU_ASSERT_EQUAL_FATAL(tr_hierarchies_parse(&hs, line, NULL), 0);
        CU_ASSERT_TRUE(hs.h[0].favordynmods);
}

static void test_mode_hybrid(void)
{
        tr_hierarchies hs;
        parse_fixture("hybrid/mountinfo", &hs);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_HYBRID);
        CU_ASSERT_EQUAL(hs.n, 10);
        CU_ASSERT_FATAL(hs.v2 >= 0);
        CU_ASSERT_STRING_EQUAL(hs.h[hs.v2].mount_point, "/sys/fs/cgroup/unified");
        static const struct {
                tr_controller c;
                const char *mp;
        } want[] = {
                { TR_CTRL_CPU, "/sys/fs/cgroup/cpu" },       { TR_CTRL_CPUACCT, "/sys/fs/cgroup/cpuacct" },
                { TR_CTRL_CPUSET, "/sys/fs/cgroup/cpuset" }, { TR_CTRL_MEMORY, "/sys/fs/cgroup/memory" },
                { TR_CTRL_DEVICES, "/sys/fs/cgroup/devices" }, { TR_CTRL_FREEZER, "/sys/fs/cgroup/freezer" },
                { TR_CTRL_BLKIO, "/sys/fs/cgroup/blkio" },   { TR_CTRL_PIDS, "/sys/fs/cgroup/pids" },
        };
        for (size_t k = 0; k < TR_ARRAY_SIZE(want); k++) {
                int i = hs.v1_of[want[k].c];
                CU_ASSERT_FATAL(i >= 0);
                CU_ASSERT_STRING_EQUAL(hs.h[i].mount_point, want[k].mp);
                CU_ASSERT_STRING_EQUAL(hs.h[i].key, tr_controller_name(want[k].c));
                CU_ASSERT_EQUAL(hs.h[i].controllers, 1u << want[k].c);
                /* nothing offered on v2 here: each controller from its v1 hierarchy */
                CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, want[k].c), i);
        }
        CU_ASSERT_NOT_EQUAL(hs.v1_of[TR_CTRL_CPU], hs.v1_of[TR_CTRL_CPUACCT]); /* not co-mounted */
        CU_ASSERT_EQUAL(hs.v1_of[TR_CTRL_IO], -1);
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_IO), hs.v1_of[TR_CTRL_BLKIO]);
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_HUGETLB), -1);
        tr_hierarchies_set_v2_controllers(&hs, "hugetlb\n");
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_HUGETLB), hs.v2);
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_MEMORY), hs.v1_of[TR_CTRL_MEMORY]);
        int s = find_mount(&hs, "/sys/fs/cgroup/systemd");
        CU_ASSERT_FATAL(s >= 0);
        CU_ASSERT_STRING_EQUAL(hs.h[s].key, "name=systemd");
}

static void test_mode_v1(void)
{
        tr_hierarchies hs;
        parse_fixture("v1/mountinfo", &hs);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V1);
        CU_ASSERT_EQUAL(hs.v2, -1);
        CU_ASSERT_EQUAL(hs.n, 11); /* the bind mount of memory is a duplicate */
        int cpu = hs.v1_of[TR_CTRL_CPU];
        CU_ASSERT_FATAL(cpu >= 0);
        CU_ASSERT_EQUAL(hs.v1_of[TR_CTRL_CPUACCT], cpu);
        CU_ASSERT_STRING_EQUAL(hs.h[cpu].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
        CU_ASSERT_STRING_EQUAL(hs.h[cpu].key, "cpuacct,cpu");
        CU_ASSERT_EQUAL(hs.h[cpu].controllers, (1u << TR_CTRL_CPU) | (1u << TR_CTRL_CPUACCT));
        int mem = hs.v1_of[TR_CTRL_MEMORY];
        CU_ASSERT_FATAL(mem >= 0);
        CU_ASSERT_STRING_EQUAL(hs.h[mem].mount_point, "/sys/fs/cgroup/memory");
        CU_ASSERT_EQUAL(hs.v1_of[TR_CTRL_NET_CLS], hs.v1_of[TR_CTRL_NET_PRIO]);
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_MEMORY), mem);
        CU_ASSERT_EQUAL(tr_hierarchies_best(&hs, TR_CTRL_IO), hs.v1_of[TR_CTRL_BLKIO]);
        int s = find_mount(&hs, "/sys/fs/cgroup/systemd");
        CU_ASSERT_FATAL(s >= 0);
        CU_ASSERT_STRING_EQUAL(hs.h[s].key, "name=systemd"); /* release_agent=, xattr dropped */
        tr_hierarchies_set_v2_controllers(&hs, "memory"); /* no v2 mount: no effect */
        CU_ASSERT_EQUAL(hs.v2, -1);
}

static void test_mode_none_and_malformed(void)
{
        tr_hierarchies hs;
        CU_ASSERT_EQUAL(tr_hierarchies_parse(&hs, "", NULL), 0);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_NONE);
        CU_ASSERT_EQUAL(hs.n, 0);
        CU_ASSERT_EQUAL(hs.v2, -1);
        CU_ASSERT_EQUAL(tr_hierarchies_parse(&hs, "22 27 0:21 / /proc rw,relatime - proc proc rw\n", NULL), 0);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_NONE);
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_hierarchies_parse(&hs, "22 27 0:21 / /proc rw,relatime proc proc rw\n", &err), -EINVAL);
        CU_ASSERT_EQUAL(err.code, EINVAL);
        CU_ASSERT_EQUAL(tr_hierarchies_parse(&hs, "garbage\n", NULL), -EINVAL);
        /* optional fields before the separator */
        CU_ASSERT_EQUAL(tr_hierarchies_parse(&hs, "1 2 0:3 / /c rw shared:4 master:5 - cgroup cgroup rw,pids\n", NULL), 0);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V1);
        CU_ASSERT_EQUAL(hs.v1_of[TR_CTRL_PIDS], 0);
        /* a cgroup mount path at the limit parses; one byte more is refused, saying why */
        char longest[TR_MOUNT_PATH_MAX], line[2 * TR_MOUNT_PATH_MAX + 64];
        memset(longest, 'a', sizeof longest - 1);
        longest[0] = '/';
        longest[sizeof longest - 1] = '\0';
        snprintf(line, sizeof line, "1 2 0:3 / %s rw - cgroup2 cgroup2 rw\n", longest);
        CU_ASSERT_EQUAL(tr_hierarchies_parse(&hs, line, NULL), 0);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V2);
        CU_ASSERT_EQUAL(strlen(hs.h[0].mount_point), TR_MOUNT_PATH_MAX - 1);
        snprintf(line, sizeof line, "1 2 0:3 / %sb rw - cgroup2 cgroup2 rw\n", longest);
        tr_error_clear(&err);
        CU_ASSERT_EQUAL(tr_hierarchies_parse(&hs, line, &err), -ENAMETOOLONG);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "longer than 1023 bytes"));
        snprintf(line, sizeof line, "1 2 0:3 %sb /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", longest);
        CU_ASSERT_EQUAL(tr_hierarchies_parse(&hs, line, NULL), -ENAMETOOLONG);
        /* a mount that is not a cgroup one is not held to it */
        snprintf(line, sizeof line, "1 2 0:3 / %sb rw - tmpfs tmpfs rw\n", longest);
        CU_ASSERT_EQUAL(tr_hierarchies_parse(&hs, line, NULL), 0);
}

static void test_pid_cgroups_v2(void)
{
        tr_hierarchies hs;
        parse_fixture("v2/mountinfo", &hs);
        _cleanup_free_ char *text = ts_read_fixture("v2/proc-pid-cgroup");
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_parse(&hs, text, &pc, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(pc.paths[0]);
        CU_ASSERT_STRING_EQUAL(pc.paths[0], "/system.slice/condor.service/job_42");
        char buf[PATH_MAX];
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(&hs.h[0], pc.paths[0], buf, sizeof buf, NULL), 0);
        CU_ASSERT_STRING_EQUAL(buf, "/sys/fs/cgroup/system.slice/condor.service/job_42");
        tr_pid_cgroups_clear(&pc);

        /* " (deleted)": the process sits in a removed v2 cgroup */
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_parse(&hs, "0::/a/b (deleted)\n", &pc, NULL), 0);
        CU_ASSERT_STRING_EQUAL(pc.paths[0], "/a/b");
        tr_pid_cgroups_clear(&pc);
        /* a path holding ':' */
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_parse(&hs, "0::/x:y/z\n", &pc, NULL), 0);
        CU_ASSERT_STRING_EQUAL(pc.paths[0], "/x:y/z");
        tr_pid_cgroups_clear(&pc);
        CU_ASSERT_EQUAL(tr_pid_cgroups_parse(&hs, "nonsense\n", &pc, NULL), -EINVAL);
}

static void test_pid_cgroups_hybrid(void)
{
        tr_hierarchies hs;
        parse_fixture("hybrid/mountinfo", &hs);
        _cleanup_free_ char *text = ts_read_fixture("hybrid/proc-pid-cgroup");
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_parse(&hs, text, &pc, NULL), 0);
        for (int i = 0; i < hs.n; i++) {
                CU_ASSERT_PTR_NOT_NULL_FATAL(pc.paths[i]);
                CU_ASSERT_STRING_EQUAL(pc.paths[i], "/procd-fixture.2759");
        }
        char buf[PATH_MAX];
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(&hs.h[hs.v1_of[TR_CTRL_MEMORY]], pc.paths[hs.v1_of[TR_CTRL_MEMORY]], buf,
                                             sizeof buf, NULL), 0);
        CU_ASSERT_STRING_EQUAL(buf, "/sys/fs/cgroup/memory/procd-fixture.2759");
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(&hs.h[hs.v2], pc.paths[hs.v2], buf, sizeof buf, NULL), 0);
        CU_ASSERT_STRING_EQUAL(buf, "/sys/fs/cgroup/unified/procd-fixture.2759");
        tr_pid_cgroups_clear(&pc);
}

/* The file read: the usual text in one read, a long one (deep paths, more than the first
 * read's 4 KiB) read whole. */
static void test_pid_cgroups_read_file(void)
{
        tr_hierarchies hs;
        parse_fixture("hybrid/mountinfo", &hs);
        _cleanup_free_ char *fixture = ts_read_fixture("hybrid/proc-pid-cgroup");
        for (size_t depth = 1; depth <= 40; depth += 39) {
                /* every hierarchy's line names /000.../001...: levels of 100 characters */
                char path[40 * 100 + 1] = "", text[TR_MAX_HIER * sizeof path + 1024] = "";
                for (size_t d = 0; d < depth; d++)
                        snprintf(path + strlen(path), sizeof path - strlen(path), "/%03zu%096d", d, 0);
                for (char *line = fixture, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
                        char *colon = memchr(line, ':', (size_t) (nl - line));
                        char *second = colon ? memchr(colon + 1, ':', (size_t) (nl - colon - 1)) : NULL;
                        if (second)
                                snprintf(text + strlen(text), sizeof text - strlen(text), "%.*s%s\n",
                                         (int) (second + 1 - line), line, path);
                }
                char file[] = "/tmp/procd-test-pid-cgroup.XXXXXX";
                int fd = mkstemp(file);
                CU_ASSERT_TRUE_FATAL(fd >= 0);
                CU_ASSERT_EQUAL(write(fd, text, strlen(text)), (ssize_t) strlen(text));
                close(fd);
                printf("\n    %zu levels: %zu bytes", depth, strlen(text));
                tr_pid_cgroups pc;
                int r = tr_pid_cgroups_read_file(&hs, file, &pc, NULL);
                unlink(file);
                CU_ASSERT_EQUAL_FATAL(r, 0);
                for (int i = 0; i < hs.n; i++) {
                        CU_ASSERT_PTR_NOT_NULL_FATAL(pc.paths[i]);
                        CU_ASSERT_STRING_EQUAL(pc.paths[i], path);
                }
                tr_pid_cgroups_clear(&pc);
        }
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL(tr_pid_cgroups_read_file(&hs, "/nonexistent/procd-test", &pc, NULL), -ENOENT);
}

static void test_pid_cgroups_v1(void)
{
        tr_hierarchies hs;
        parse_fixture("v1/mountinfo", &hs);
        _cleanup_free_ char *text = ts_read_fixture("v1/proc-pid-cgroup");
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_parse(&hs, text, &pc, NULL), 0);
        const char *job = "/htcondor/condor_var_lib_condor_execute_slot1_1@node01";
        int cpu = hs.v1_of[TR_CTRL_CPU], mem = hs.v1_of[TR_CTRL_MEMORY];
        CU_ASSERT_STRING_EQUAL(pc.paths[cpu], job);
        CU_ASSERT_STRING_EQUAL(pc.paths[mem], job);
        CU_ASSERT_STRING_EQUAL(pc.paths[hs.v1_of[TR_CTRL_CPUSET]], "/");
        CU_ASSERT_STRING_EQUAL(pc.paths[hs.v1_of[TR_CTRL_NET_CLS]], "/");
        CU_ASSERT_STRING_EQUAL(pc.paths[find_mount(&hs, "/sys/fs/cgroup/systemd")], "/system.slice/condor.service");
        char buf[PATH_MAX];
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(&hs.h[cpu], pc.paths[cpu], buf, sizeof buf, NULL), 0);
        CU_ASSERT_STRING_EQUAL(buf, "/sys/fs/cgroup/cpu,cpuacct/htcondor/condor_var_lib_condor_execute_slot1_1@node01");
        tr_pid_cgroups_clear(&pc);
        /* the controller list is a set: order in /proc/PID/cgroup need not match mountinfo */
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_parse(&hs, "4:cpu,cpuacct:/x\n3:net_cls,net_prio:/y\n", &pc, NULL), 0);
        CU_ASSERT_STRING_EQUAL(pc.paths[cpu], "/x");
        CU_ASSERT_STRING_EQUAL(pc.paths[hs.v1_of[TR_CTRL_NET_PRIO]], "/y");
        CU_ASSERT_PTR_NULL(pc.paths[mem]);
        tr_pid_cgroups_clear(&pc);
        /* a hierarchy that is not mounted here, and a subset, are not matched */
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_parse(&hs, "12:rdma:/r\n4:cpu:/c\n", &pc, NULL), 0);
        for (int i = 0; i < hs.n; i++)
                CU_ASSERT_PTR_NULL(pc.paths[i]);
        tr_pid_cgroups_clear(&pc);
}

/* Captured in qemu guests on Debian 12's kernel 6.1 (tests/vm/capture-fixtures): the
 * mountinfo and /proc/PID/cgroup of a process in /procd-fixture.<pid>. */
static void test_guest_v2(void)
{
        tr_hierarchies hs;
        parse_fixture("v2-guest/mountinfo", &hs);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V2);
        CU_ASSERT_EQUAL_FATAL(hs.n, 1);
        CU_ASSERT_STRING_EQUAL(hs.h[0].mount_point, "/sys/fs/cgroup");
        _cleanup_free_ char *ctl = ts_read_fixture("v2-guest/cgroup.controllers");
        tr_hierarchies_set_v2_controllers(&hs, ctl);
        uint32_t want = (1u << TR_CTRL_CPUSET) | (1u << TR_CTRL_CPU) | (1u << TR_CTRL_IO) | (1u << TR_CTRL_MEMORY) |
                        (1u << TR_CTRL_PIDS);
        CU_ASSERT_EQUAL(hs.h[0].controllers, want);
        _cleanup_free_ char *text = ts_read_fixture("v2-guest/proc-pid-cgroup");
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_parse(&hs, text, &pc, NULL), 0);
        CU_ASSERT_STRING_EQUAL(pc.paths[0], "/procd-fixture.165");
        tr_pid_cgroups_clear(&pc);
}

static void test_guest_v1(void)
{
        tr_hierarchies hs;
        parse_fixture("v1-guest/mountinfo", &hs);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V1);
        CU_ASSERT_EQUAL(hs.v2, -1);
        CU_ASSERT_EQUAL(hs.n, 13); /* 12 controller hierarchies + name=systemd */
        int cpu = hs.v1_of[TR_CTRL_CPU];
        CU_ASSERT_FATAL(cpu >= 0);
        CU_ASSERT_EQUAL(hs.v1_of[TR_CTRL_CPUACCT], cpu);
        CU_ASSERT_STRING_EQUAL(hs.h[cpu].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
        CU_ASSERT_EQUAL(hs.v1_of[TR_CTRL_NET_CLS], hs.v1_of[TR_CTRL_NET_PRIO]);
        _cleanup_free_ char *text = ts_read_fixture("v1-guest/proc-pid-cgroup");
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_parse(&hs, text, &pc, NULL), 0);
        static const tr_controller in_job[] = { TR_CTRL_CPU, TR_CTRL_MEMORY, TR_CTRL_BLKIO, TR_CTRL_PIDS, TR_CTRL_FREEZER };
        for (size_t i = 0; i < TR_ARRAY_SIZE(in_job); i++)
                CU_ASSERT_STRING_EQUAL(pc.paths[hs.v1_of[in_job[i]]], "/procd-fixture.199");
        CU_ASSERT_STRING_EQUAL(pc.paths[hs.v1_of[TR_CTRL_CPUSET]], "/");
        CU_ASSERT_STRING_EQUAL(pc.paths[find_mount(&hs, "/sys/fs/cgroup/systemd")], "/");
        tr_pid_cgroups_clear(&pc);
}

static void test_fs_path_mount_root(void)
{
        tr_hierarchies hs;
        parse_fixture("v2/mountinfo-container", &hs);
        const tr_hierarchy *h = &hs.h[0];
        char buf[PATH_MAX];
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(h, "/kubepods.slice/pod one.slice/cri-abc/job/x", buf, sizeof buf, NULL), 0);
        CU_ASSERT_STRING_EQUAL(buf, "/sys/fs/cgroup x/job/x");
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(h, "/kubepods.slice/pod one.slice/cri-abc", buf, sizeof buf, NULL), 0);
        CU_ASSERT_STRING_EQUAL(buf, "/sys/fs/cgroup x");
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(h, "/kubepods.slice/pod one.slice/cri-abc/", buf, sizeof buf, NULL), 0);
        CU_ASSERT_STRING_EQUAL(buf, "/sys/fs/cgroup x");
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(h, "/kubepods.slice/pod one.slice/cri-abcdef", buf, sizeof buf, &err),
                        -ENOENT);
        CU_ASSERT_EQUAL(err.code, ENOENT);
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(h, "/", buf, sizeof buf, NULL), -ENOENT);
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(h, "relative", buf, sizeof buf, NULL), -EINVAL);
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(h, "/kubepods.slice/pod one.slice/cri-abc/j", buf, 8, NULL), -ENAMETOOLONG);

        /* v1 bind mount of a subtree: /var/lib/condor/memory cg shows /condor */
        tr_hierarchy b = { .is_v2 = false };
        snprintf(b.mount_point, sizeof b.mount_point, "/var/lib/condor/memory cg");
        snprintf(b.mount_root, sizeof b.mount_root, "/condor");
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(&b, "/condor/slot1", buf, sizeof buf, NULL), 0);
        CU_ASSERT_STRING_EQUAL(buf, "/var/lib/condor/memory cg/slot1");
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(&b, "/other", buf, sizeof buf, NULL), -ENOENT);
        /* root mount */
        tr_hierarchy r = { .is_v2 = true };
        snprintf(r.mount_point, sizeof r.mount_point, "/sys/fs/cgroup");
        snprintf(r.mount_root, sizeof r.mount_root, "/");
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(&r, "/", buf, sizeof buf, NULL), 0);
        CU_ASSERT_STRING_EQUAL(buf, "/sys/fs/cgroup");
        CU_ASSERT_EQUAL(tr_hierarchy_fs_path(&r, "/a/b", buf, sizeof buf, NULL), 0);
        CU_ASSERT_STRING_EQUAL(buf, "/sys/fs/cgroup/a/b");
}

/* Live and read-only: discovery of this host, and holds_self on paths we only name. */
static void test_live_discover_holds_self(void)
{
        const tr_hierarchies *hs = ts_hierarchies();
        printf("\n    host mode: %s, %d hierarchies\n", tr_cgroup_mode_name(hs->mode), hs->n);
        if (hs->mode == TR_MODE_NONE)
                return;
        tr_pid_cgroups self;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_read(hs, 0, &self, NULL), 0);
        for (int i = 0; i < hs->n; i++) {
                CU_ASSERT_TRUE(tr_cgroup_holds_self(hs, &self, i, "/"));
                if (!self.paths[i])
                        continue;
                CU_ASSERT_TRUE(tr_cgroup_holds_self(hs, &self, i, self.paths[i]));
                char sib[PATH_MAX];
                snprintf(sib, sizeof sib, "%s%sprocd-never-%d", self.paths[i],
                         strcmp(self.paths[i], "/") ? "-" : "", (int) getpid());
                CU_ASSERT_FALSE(tr_cgroup_holds_self(hs, &self, i, sib));
                char child[PATH_MAX];
                snprintf(child, sizeof child, "%s/procd-child", strcmp(self.paths[i], "/") ? self.paths[i] : "");
                CU_ASSERT_FALSE(tr_cgroup_holds_self(hs, &self, i, child));
        }
        CU_ASSERT_TRUE(tr_cgroup_holds_self(hs, &self, -1, "/x"));
        CU_ASSERT_TRUE(tr_cgroup_holds_self(hs, &self, 0, "relative"));
        CU_ASSERT_TRUE(tr_cgroup_holds_self(hs, NULL, 0, "/procd-never")); /* unreadable self: held */
        /* any hierarchy: the root and our own cgroup hold us; a name nobody has does not */
        CU_ASSERT_TRUE(tr_cgroup_holds_self_any(hs, "/"));
        for (int i = 0; i < hs->n; i++)
                if (self.paths[i])
                        CU_ASSERT_TRUE(tr_cgroup_holds_self_any(hs, self.paths[i]));
        char never[64];
        snprintf(never, sizeof never, "/procd-never-%d/x", (int) getpid());
        CU_ASSERT_FALSE(tr_cgroup_holds_self_any(hs, never));
        tr_pid_cgroups_clear(&self);
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL(tr_pid_cgroups_read(hs, 1, &pc, NULL), 0); /* init is readable */
        tr_pid_cgroups_clear(&pc);
}

static void test_is_root(void)
{
        tr_hierarchy h = { .mount_root = "/" };
        CU_ASSERT_TRUE(tr_cgroup_is_root(&h, "/"));
        CU_ASSERT_TRUE(tr_cgroup_is_root(&h, "//"));
        CU_ASSERT_TRUE(tr_cgroup_is_root(&h, "relative"));
        CU_ASSERT_TRUE(tr_cgroup_is_root(&h, NULL));
        CU_ASSERT_FALSE(tr_cgroup_is_root(&h, "/jobs"));
        /* a container's mount shows /lxc/c1 as its root: it and everything above are roots */
        tr_hierarchy c = { .mount_root = "/lxc/c1" };
        CU_ASSERT_TRUE(tr_cgroup_is_root(&c, "/lxc/c1"));
        CU_ASSERT_TRUE(tr_cgroup_is_root(&c, "/lxc"));
        CU_ASSERT_FALSE(tr_cgroup_is_root(&c, "/lxc/c1/job"));
}

static void test_path_under(void)
{
        CU_ASSERT_TRUE(tr_cgroup_path_under("/a/b", "/a/b"));
        CU_ASSERT_TRUE(tr_cgroup_path_under("/a/b/c", "/a/b"));
        CU_ASSERT_TRUE(tr_cgroup_path_under("/a/b/c", "/a/b/"));
        CU_ASSERT_TRUE(tr_cgroup_path_under("/x", "/"));
        CU_ASSERT_FALSE(tr_cgroup_path_under("/a/bc", "/a/b"));
        CU_ASSERT_FALSE(tr_cgroup_path_under("/a", "/a/b"));
        CU_ASSERT_FALSE(tr_cgroup_path_under("/b/a", "/a"));
}

int main(void)
{
        CU_TestInfo unit[] = {
                { "controller_names", test_controller_names },
                { "mode_v2", test_mode_v2 },
                { "mode_v2_named", test_mode_v2_named },
                { "mode_container_escapes", test_mode_container_escapes },
                { "mode_hybrid", test_mode_hybrid },
                { "mode_v1", test_mode_v1 },
                { "mode_none_and_malformed", test_mode_none_and_malformed },
                { "pid_cgroups_v2", test_pid_cgroups_v2 },
                { "pid_cgroups_hybrid", test_pid_cgroups_hybrid },
                { "pid_cgroups_v1", test_pid_cgroups_v1 },
                { "pid_cgroups_read_file", test_pid_cgroups_read_file },
                { "guest_v2 (captured, 6.1)", test_guest_v2 },
                { "guest_v1 (captured, 6.1)", test_guest_v1 },
                { "fs_path_mount_root", test_fs_path_mount_root },
                { "path_under", test_path_under },
                { "is_root", test_is_root },
                { "live_discover_holds_self", test_live_discover_holds_self },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("hierarchy", NULL, NULL, unit);
}
