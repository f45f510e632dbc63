/* Unit tests of procd-starter's option parsing, limit mapping and exit-code rule. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trackers/cgroup.h"
#include "trackers/util.h"

#include "starter/jobns.h"
#include "starter/joblimits.h"
#include "starter/options.h"
#include "starter/report.h"
#include "testsupport.h"

static int parse(st_options *o, tr_error *err, char **argv)
{
        int argc = 0;
        while (argv[argc])
                argc++;
        return st_options_parse(argc, argv, o, err);
}

static void test_defaults(void)
{
        st_options o;
        tr_error err = { 0 };
        char *argv[] = { "procd-starter", "--", "true", NULL };
        CU_ASSERT_EQUAL(parse(&o, &err, argv), 0);
        CU_ASSERT_STRING_EQUAL(o.cgroup_base, "/procd");
        CU_ASSERT_EQUAL(o.kill_grace_usec, 5000000);
        CU_ASSERT_EQUAL(o.systemd, ST_SYSTEMD_AUTO);
        CU_ASSERT_TRUE(o.limits.oom_group);
        CU_ASSERT_FALSE(o.no_procd);
        CU_ASSERT_STRING_EQUAL(o.argv[0], "true");
        st_options_free(&o);
}

static void test_all_options(void)
{
        st_options o;
        tr_error err = { 0 };
        char *argv[] = { "procd-starter", "--systemd=no", "--cgroup-base", "/x/y", "--name", "j1", "--env", "A=1",
                         "--env", "B=2", "--memory-max", "64M", "--memory-high", "1G", "--memory-swap-max", "0",
                         "--cpus", "1.5", "--cpu-weight", "200", "--cpuset-cpus", "0-1", "--cpuset-mems", "0",
                         "--pids-max", "max", "--io-max", "8:0 rbps=1M", "--kill-grace", "0.5", "--no-procd",
                         "--no-oom-group", "--best-effort", "--report", "/tmp/r.json", "--launch=fork",
                         "--", "sh", "-c", "exit 3", NULL };
        CU_ASSERT_EQUAL_FATAL(parse(&o, &err, argv), 0);
        CU_ASSERT_EQUAL(o.systemd, ST_SYSTEMD_NO);
        CU_ASSERT_STRING_EQUAL(o.cgroup_base, "/x/y");
        CU_ASSERT_EQUAL(o.n_env, 2);
        CU_ASSERT_EQUAL(o.limits.memory_max, 64ULL << 20);
        CU_ASSERT_EQUAL(o.limits.memory_high, 1ULL << 30);
        CU_ASSERT_TRUE(o.limits.has_memory_swap_max);
        CU_ASSERT_EQUAL(o.limits.memory_swap_max, 0);
        CU_ASSERT_DOUBLE_EQUAL(o.limits.cpus, 1.5, 1e-9);
        CU_ASSERT_EQUAL(o.limits.cpu_weight, 200);
        CU_ASSERT_EQUAL(o.limits.pids_max, UINT64_MAX);
        CU_ASSERT_EQUAL(o.limits.n_io_max, 1);
        CU_ASSERT_EQUAL(o.kill_grace_usec, 500000);
        CU_ASSERT_FALSE(o.limits.oom_group);
        CU_ASSERT_TRUE(o.best_effort);
        CU_ASSERT_EQUAL(o.launch, ST_LAUNCH_FORK);
        CU_ASSERT_STRING_EQUAL(o.argv[2], "exit 3");
        st_options_free(&o);
}

static void test_bad_options(void)
{
        char *bad[][6] = {
                { "s", "--memory-max", "12Q", "--", "true", NULL },
                { "s", "--cpus", "0", "--", "true", NULL },
                { "s", "--cpu-weight", "0", "--", "true", NULL },
                { "s", "--pids-max", "0", "--", "true", NULL },
                { "s", "--cgroup-base", "rel", "--", "true", NULL },
                { "s", "--cgroup-base", "/a/../b", "--", "true", NULL },
                { "s", "--name", "a/b", "--", "true", NULL },
                { "s", "--env", "NOEQUALS", "--", "true", NULL },
                { "s", "--systemd=maybe", "--", "true", NULL, NULL },
                { "s", "--bogus", "--", "true", NULL, NULL },
                { "s", "--no-procd", NULL, NULL, NULL, NULL }, /* no command */
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                st_options o;
                tr_error err = { 0 };
                int r = parse(&o, &err, bad[i]);
                CU_ASSERT_EQUAL(r, -EINVAL);
                CU_ASSERT_TRUE(err.msg[0] != '\0');
                st_options_free(&o);
        }
}

static void test_exit_codes(void)
{
        st_result r;
        memset(&r, 0, sizeof r);
        CU_ASSERT_EQUAL(st_exit_code(&r), 0);
        r.exit_status = 3;
        CU_ASSERT_EQUAL(st_exit_code(&r), 3);
        r.exit_status = -1;
        r.exit_signal = 9;
        CU_ASSERT_EQUAL(st_exit_code(&r), 137);
        r.oom_killed = true;
        CU_ASSERT_EQUAL(st_exit_code(&r), ST_EXIT_OOM);
        r.exit_signal = 0;
        r.exit_status = 0; /* a member was OOM-killed but the job succeeded */
        CU_ASSERT_EQUAL(st_exit_code(&r), 0);
}

/* Pure v2 (the main path on production nodes, not runnable on this hybrid host): a fake
 * cgroup2 mount in a temp dir, files as a v2 leaf has them; the limits land in the v2 files. */
static const char *const v2_files[] = { "memory.max", "memory.high", "memory.swap.max", "memory.oom.group",
                                        "cpu.max", "cpu.weight", "cpuset.cpus", "cpuset.mems", "pids.max",
                                        "io.max", "cgroup.procs" };

static int fake_v2(char *root, size_t size, tr_hierarchies *hs, tr_cgroup **cg, const char *skip_file)
{
        snprintf(root, size, "/tmp/procd-starter-unit.XXXXXX");
        if (!mkdtemp(root))
                return -1;
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/j", root);
        mkdir(dir, 0755);
        snprintf(dir, sizeof dir, "%s/j/job", root);
        mkdir(dir, 0755);
        for (size_t i = 0; i < sizeof v2_files / sizeof v2_files[0]; i++) {
                if (skip_file && strcmp(skip_file, v2_files[i]) == 0)
                        continue;
                char f[PATH_MAX + 64];
                snprintf(f, sizeof f, "%s/%s", dir, v2_files[i]);
                int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd < 0)
                        return -1;
                close(fd);
        }
        char mi[PATH_MAX + 256];
        snprintf(mi, sizeof mi,
                 "26 22 0:23 / %s rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n", root);
        tr_error err = { 0 };
        if (tr_hierarchies_parse(hs, mi, &err) < 0)
                return -1;
        tr_hierarchies_set_v2_controllers(hs, "cpuset cpu io memory hugetlb pids rdma misc\n");
        return tr_cgroup_open(hs, "/j/job", TR_CG_MAY_ACT, cg, &err);
}

static void rm_fake(const char *root)
{
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        int rc = system(cmd);
        (void) rc;
}

static void expect_file(const char *root, const char *file, const char *want)
{
        char f[PATH_MAX + 64], text[256] = "";
        snprintf(f, sizeof f, "%s/j/job/%s", root, file);
        tr_read_file_at(AT_FDCWD, f, text, sizeof text, NULL);
        if (strcmp(text, want) != 0)
                printf("\n%s: '%s', want '%s'\n", file, text, want);
        CU_ASSERT_STRING_EQUAL(text, want);
}

static void test_v2_mapping(void)
{
        char root[PATH_MAX];
        tr_hierarchies hs;
        tr_cgroup *cg = NULL;
        CU_ASSERT_EQUAL_FATAL(fake_v2(root, sizeof root, &hs, &cg, NULL), 0);
        CU_ASSERT_EQUAL(hs.mode, TR_MODE_V2);
        st_options o;
        tr_error err = { 0 };
        char *argv[] = { "s", "--memory-max", "1G", "--memory-high", "768M", "--memory-swap-max", "0", "--cpus", "2.5",
                         "--cpu-weight", "300", "--cpuset-cpus", "0-3", "--cpuset-mems", "0", "--pids-max", "100",
                         "--io-max", "8:0 rbps=1M wiops=max", "--", "true", NULL };
        CU_ASSERT_EQUAL_FATAL(parse(&o, &err, argv), 0);
        st_limits_record rec = { 0 };
        int r = st_limits_apply(cg, &hs, &o.limits, false, &rec, &err);
        if (r < 0)
                printf("\n%s\n", err.msg);
        CU_ASSERT_EQUAL(r, 0);
        /* the record: each option, its value, the v2 file written (full path) */
        const char *want[][3] = { { "memory-max", "1073741824", "memory.max=1073741824" },
                                  { "memory-swap-max", "0", "memory.swap.max=0" },
                                  { "memory-high", "805306368", "memory.high=805306368" },
                                  { "memory-oom-group", "1", "memory.oom.group=1" },
                                  { "cpus", "2.5", "cpu.max=250000 100000" },
                                  { "cpu-weight", "300", "cpu.weight=300" },
                                  { "cpuset-cpus", "0-3", "cpuset.cpus=0-3" },
                                  { "cpuset-mems", "0", "cpuset.mems=0" },
                                  { "pids-max", "100", "pids.max=100" },
                                  { "io-max", "8:0 rbps=1M wiops=max", "io.max=8:0 rbps=1048576 wiops=max" } };
        CU_ASSERT_EQUAL_FATAL(rec.n, sizeof want / sizeof want[0]);
        for (size_t i = 0; i < rec.n; i++) {
                const st_limit_applied *a = &rec.a[i];
                char got[PATH_MAX + 600], w[PATH_MAX + 600];
                snprintf(got, sizeof got, "%s %s %d %d %s=%s", a->option, a->value, a->applied, a->v2,
                         a->n_writes ? a->w[0].path : "", a->n_writes ? a->w[0].value : "");
                snprintf(w, sizeof w, "%s %s 1 1 %s/j/job/%s", want[i][0], want[i][1], root, want[i][2]);
                if (strcmp(got, w) != 0)
                        printf("\nrecord %zu: '%s', want '%s'\n", i, got, w);
                CU_ASSERT_STRING_EQUAL(got, w);
                CU_ASSERT_EQUAL(a->n_writes, 1);
        }
        st_limits_record_free(&rec);
        expect_file(root, "memory.max", "1073741824");
        expect_file(root, "memory.high", "805306368");
        expect_file(root, "memory.swap.max", "0");
        expect_file(root, "memory.oom.group", "1");
        expect_file(root, "cpu.max", "250000 100000");
        expect_file(root, "cpu.weight", "300");
        expect_file(root, "cpuset.cpus", "0-3");
        expect_file(root, "cpuset.mems", "0");
        expect_file(root, "pids.max", "100");
        expect_file(root, "io.max", "8:0 rbps=1048576 wiops=max");
        st_options_free(&o);
        tr_cgroup_free(cg);
        rm_fake(root);
}

static void test_v2_missing_file(void)
{
        char root[PATH_MAX];
        tr_hierarchies hs;
        tr_cgroup *cg = NULL;
        /* no memory.swap.max (swap accounting off): an error naming the option, or a warning */
        CU_ASSERT_EQUAL_FATAL(fake_v2(root, sizeof root, &hs, &cg, "memory.swap.max"), 0);
        st_options o;
        tr_error err = { 0 };
        char *argv[] = { "s", "--memory-swap-max", "1G", "--pids-max", "max", "--no-oom-group", "--", "true", NULL };
        CU_ASSERT_EQUAL_FATAL(parse(&o, &err, argv), 0);
        CU_ASSERT_EQUAL(st_limits_apply(cg, &hs, &o.limits, false, NULL, &err), -EOPNOTSUPP);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--memory-swap-max"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "memory.swap.max is missing"));
        tr_error_clear(&err);
        st_limits_record rec = { 0 };
        CU_ASSERT_EQUAL(st_limits_apply(cg, &hs, &o.limits, true, &rec, &err), 0);
        /* the record: the option left out with why, the one written; --no-oom-group: none */
        CU_ASSERT_EQUAL_FATAL(rec.n, 2);
        CU_ASSERT_STRING_EQUAL(rec.a[0].option, "memory-swap-max");
        CU_ASSERT_FALSE(rec.a[0].applied);
        CU_ASSERT_PTR_NOT_NULL(strstr(rec.a[0].why, "memory.swap.max is missing"));
        CU_ASSERT_STRING_EQUAL(rec.a[1].option, "pids-max");
        CU_ASSERT_STRING_EQUAL(rec.a[1].value, "max");
        CU_ASSERT_TRUE(rec.a[1].applied);
        st_limits_record_free(&rec);
        expect_file(root, "pids.max", "max");
        expect_file(root, "memory.oom.group", "");
        /* bad --io-max lines are errors whatever the hierarchy */
        const char *bad_io[] = { "8:0", "8:0 rbps", "8:0 speed=1", "x:y rbps=1", "8:0 rbps=fast" };
        for (size_t i = 0; i < sizeof bad_io / sizeof bad_io[0]; i++) {
                st_limits l;
                memset(&l, 0, sizeof l);
                l.io_max[0] = bad_io[i];
                l.n_io_max = 1;
                CU_ASSERT_EQUAL(st_limits_apply(cg, &hs, &l, false, NULL, &err), -EINVAL);
        }
        st_options_free(&o);
        tr_cgroup_free(cg);
        rm_fake(root);
}

/* A private /tmp directory named by a record (a sweep's input): only an absolute path whose
 * last component is procd-tmp.* is removed, with what is in it; a symlink of that name is
 * not followed. */
static int record_path(void *arg, const char *path, tr_error *err)
{
        (void) err;
        snprintf(arg, PATH_MAX, "%s", path);
        return 0;
}

static void test_private_tmp_removal(void)
{
        char base[] = "/var/tmp/procd-unit.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(base));
        char other[PATH_MAX + 16], target[PATH_MAX + 16], link[PATH_MAX + 32], f[PATH_MAX + 32];
        snprintf(other, sizeof other, "%s/notours", base);
        CU_ASSERT_EQUAL_FATAL(mkdir(other, 0700), 0);
        CU_ASSERT_FALSE(st_jobns_remove_path(other));
        CU_ASSERT_EQUAL(access(other, F_OK), 0);
        /* st_jobns_make_dir records the path before it makes it; removal takes it all */
        st_options o;
        memset(&o, 0, sizeof o);
        o.private_tmp = true;
        o.private_tmp_dir = base;
        st_jobns ns;
        tr_error err = { 0 };
        char recorded[PATH_MAX] = "";
        CU_ASSERT_EQUAL_FATAL(st_jobns_prepare(&ns, &o, &err), 0);
        CU_ASSERT_EQUAL_FATAL(st_jobns_make_dir(&ns, record_path, recorded, &err), 0);
        CU_ASSERT_STRING_EQUAL(recorded, ns.job_dir);
        snprintf(f, sizeof f, "%s/tmp/file", recorded);
        close(open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        CU_ASSERT_TRUE(st_jobns_remove_path(recorded));
        CU_ASSERT_NOT_EQUAL(access(recorded, F_OK), 0);
        free(ns.job_dir);
        ns.job_dir = NULL;
        /* a symlink named procd-tmp.* pointing at a directory: not followed */
        snprintf(target, sizeof target, "%s/target", base);
        CU_ASSERT_EQUAL_FATAL(mkdir(target, 0700), 0);
        snprintf(f, sizeof f, "%s/keep", target);
        close(open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        snprintf(link, sizeof link, "%s/procd-tmp.link", base);
        CU_ASSERT_EQUAL_FATAL(symlink(target, link), 0);
        st_jobns_remove_path(link);
        CU_ASSERT_EQUAL(access(f, F_OK), 0);
        unlink(link);
        unlink(f);
        rmdir(target);
        rmdir(other);
        CU_ASSERT_EQUAL(rmdir(base), 0);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "defaults", test_defaults },
                { "every option", test_all_options },
                { "bad options are errors", test_bad_options },
                { "exit codes", test_exit_codes },
                { "pure v2: limits land in the v2 files (fake mount)", test_v2_mapping },
                { "pure v2: missing file is an error, --best-effort a warning", test_v2_missing_file },
                { "private /tmp directory: recorded before made, removed only by its name", test_private_tmp_removal },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("starter unit", NULL, NULL, tests);
}
