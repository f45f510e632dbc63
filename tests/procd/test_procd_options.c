/* Unit tests of procd's options: defaults, the key file, the command line over it, and
 * the errors a careless configuration gets (fixtures in tests/fixtures/config). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procd/dbus/dbus-server.h"
#include "procd/options.h"
#include "testsupport.h"

static int parse_as(pd_options *o, const char *const *args, bool classic)
{
        char *argv[32] = { "procd" };
        int argc = 1;
        for (; args[argc - 1]; argc++)
                argv[argc] = (char *) args[argc - 1];
        return pd_options_parse(argc, argv, classic, o);
}

static int parse(pd_options *o, const char *const *args) { return parse_as(o, args, false); }

static const char *fixture(const char *name)
{
        static char buf[4096];
        char rel[128];
        snprintf(rel, sizeof rel, "config/%s", name);
        return ts_fixture_path(buf, sizeof buf, rel);
}

static void test_defaults(void)
{
        pd_options o;
        const char *args[] = { NULL };
        /* PROCD_CONFIG_FILE of this test does not exist: no file is not an error */
        CU_ASSERT_EQUAL_FATAL(parse(&o, args), 0);
        CU_ASSERT_STRING_EQUAL(o.socket_path, "/run/procd/procd.sock");
        CU_ASSERT_EQUAL(o.group, (gid_t) -1);
        CU_ASSERT_EQUAL(o.root_pid, 0);
        CU_ASSERT_TRUE(o.gid_max < o.gid_min);
        CU_ASSERT_EQUAL(o.snapshot_interval, 60);
        CU_ASSERT_EQUAL(o.kill_timeout, 10);
        CU_ASSERT_EQUAL(o.max_conns_per_uid, PD_DBUS_DEFAULT_MAX_CONNECTIONS_PER_UID);
        CU_ASSERT_EQUAL(o.evict_idle_sec, PD_ADMISSION_EVICT_MIN_IDLE_SEC);
        CU_ASSERT_FALSE(o.syslog);
        CU_ASSERT_FALSE(o.foreground);
        CU_ASSERT_EQUAL(o.ready_fd, -1);
        CU_ASSERT_STRING_EQUAL(o.config_path, "");
        CU_ASSERT_PTR_NULL(o.famcg.base);
        CU_ASSERT_FALSE(o.famcg.disabled);
}

static void test_every_key(void)
{
        pd_options o;
        const char *args[] = { "--config", fixture("good.conf"), NULL };
        CU_ASSERT_EQUAL_FATAL(parse(&o, args), 0);
        CU_ASSERT_STRING_EQUAL(o.socket_path, "/tmp/procd-fixture.sock");
        CU_ASSERT_EQUAL(o.group, 0);
        CU_ASSERT_EQUAL(o.root_pid, 4242);
        CU_ASSERT_EQUAL(o.gid_min, 70000);
        CU_ASSERT_EQUAL(o.gid_max, 70999);
        CU_ASSERT_EQUAL(o.snapshot_interval, 30);
        CU_ASSERT_EQUAL(o.kill_timeout, 20);
        CU_ASSERT_TRUE(o.syslog);
        CU_ASSERT_EQUAL(o.max_conns_per_uid, 8);
        CU_ASSERT_EQUAL(o.evict_idle_sec, 600);
        CU_ASSERT_TRUE(o.foreground);
        CU_ASSERT_STRING_EQUAL(o.famcg.base, "/procd-fixture/families");
        CU_ASSERT_TRUE(o.famcg.disabled);
        CU_ASSERT_TRUE(o.state_file_given);
        CU_ASSERT_STRING_EQUAL(o.state_file, "/tmp/procd-fixture.state");
        CU_ASSERT_STRING_EQUAL(o.classic_cgroup_base, "/procd-fixture/condor");
        CU_ASSERT_STRING_EQUAL(o.metrics_textfile, "/tmp/procd-fixture/procd.prom");
        CU_ASSERT_EQUAL(o.metrics_interval, 15);
        CU_ASSERT_STRING_EQUAL(o.pidfile, "/tmp/procd-fixture.pid");
        CU_ASSERT_TRUE(o.log_given);
        CU_ASSERT_STRING_EQUAL(o.config_path, fixture("good.conf"));
}

/* condor_procd's mode (-A) reads the file too, but leaves out the keys its command line
 * names (socket, root-pid, log, state-file) and says which. */
static void test_classic_mode_file(void)
{
        pd_options o;
        const char *args[] = { "--config", fixture("good.conf"), NULL };
        CU_ASSERT_EQUAL_FATAL(parse_as(&o, args, true), 0);
        CU_ASSERT_STRING_EQUAL(o.config_path, fixture("good.conf"));
        CU_ASSERT_STRING_EQUAL(o.famcg.base, "/procd-fixture/families");
        CU_ASSERT_STRING_EQUAL(o.classic_cgroup_base, "/procd-fixture/condor");
        CU_ASSERT_EQUAL(o.kill_timeout, 20);
        CU_ASSERT_STRING_EQUAL(o.socket_path, "/run/procd/procd.sock"); /* left out */
        CU_ASSERT_FALSE(o.socket_given);
        CU_ASSERT_EQUAL(o.root_pid, 0);
        CU_ASSERT_FALSE(o.syslog);
        CU_ASSERT_FALSE(o.state_file_given);
        CU_ASSERT_STRING_EQUAL(o.file_ignored, "socket, root-pid, log, state-file");
}

/* --family-cgroup-base-default (the systemd unit's) ranks below the key, the variable and
 * --family-cgroup-base: one line per source */
static void check_base(const char *name, const char *const *args, const char *env, const char *want)
{
        pd_options o;
        if (env)
                setenv(PD_ENV_FAMILY_CGROUP_BASE, env, 1);
        int r = parse(&o, args);
        unsetenv(PD_ENV_FAMILY_CGROUP_BASE);
        if (r != 0 || !o.famcg.base || strcmp(o.famcg.base, want) != 0)
                fprintf(stderr, "case %s: %d, base %s, want %s\n", name, r, o.famcg.base ? o.famcg.base : "(none)", want);
        CU_ASSERT_EQUAL(r, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(o.famcg.base);
        CU_ASSERT_STRING_EQUAL(o.famcg.base, want);
}

static void test_base_default(void)
{
        const char *alone[] = { "--family-cgroup-base-default", "/system.slice/f.service/families", NULL };
        const char *file[] = { "--family-cgroup-base-default", "/d", "--config", fixture("good.conf"), NULL };
        const char *option[] = { "--family-cgroup-base", "/o", "--family-cgroup-base-default", "/d", NULL };
        check_base("the default alone", alone, NULL, "/system.slice/f.service/families");
        check_base("the key wins", file, NULL, "/procd-fixture/families");
        check_base("the variable wins", alone, "/env", "/env");
        check_base("the option wins", option, NULL, "/o");
        pd_options o;
        const char *none[] = { NULL };
        CU_ASSERT_EQUAL(parse(&o, none), 0);
        CU_ASSERT_PTR_NULL(o.famcg.base);
        CU_ASSERT_STRING_EQUAL(o.metrics_textfile, "");
        CU_ASSERT_EQUAL(o.metrics_interval, 30);
        CU_ASSERT_STRING_EQUAL(o.pidfile, "");
        CU_ASSERT_FALSE(o.log_given);
}

static void test_command_line_wins(void)
{
        pd_options o;
        /* before or after --config: the command line overrides the file either way */
        const char *args[] = { "--kill-timeout", "5", "--config", fixture("good.conf"), "--socket", "/tmp/x.sock",
                               "--log", "stderr", "--gid-range", "5-6", "--ready-fd", "9", NULL };
        CU_ASSERT_EQUAL_FATAL(parse(&o, args), 0);
        CU_ASSERT_EQUAL(o.kill_timeout, 5);
        CU_ASSERT_STRING_EQUAL(o.socket_path, "/tmp/x.sock");
        CU_ASSERT_FALSE(o.syslog);
        CU_ASSERT_EQUAL(o.gid_min, 5);
        CU_ASSERT_EQUAL(o.gid_max, 6);
        CU_ASSERT_EQUAL(o.ready_fd, 9);
        CU_ASSERT_EQUAL(o.snapshot_interval, 30); /* from the file */
        /* --log journal (issue 17): the journal's native protocol, not syslog */
        const char *journal[] = { "--config", fixture("good.conf"), "--log", "journal", NULL };
        CU_ASSERT_EQUAL_FATAL(parse(&o, journal), 0);
        CU_ASSERT_TRUE(o.journal);
        CU_ASSERT_FALSE(o.syslog);
}

static void check_error(const char *name, const char *const *args)
{
        pd_options o;
        int r = parse(&o, args);
        if (r != -EINVAL)
                fprintf(stderr, "case %s: %d, expected -EINVAL\n", name, r);
        CU_ASSERT_EQUAL(r, -EINVAL);
}

static void test_errors(void)
{
        const char *unknown_key[] = { "--config", fixture("unknown-key.conf"), NULL };
        check_error("unknown key", unknown_key);
        const char *unknown_group[] = { "--config", fixture("unknown-group.conf"), NULL };
        check_error("unknown group", unknown_group);
        const char *bad_value[] = { "--config", fixture("bad-value.conf"), NULL };
        check_error("bad value in the file", bad_value);
        const char *malformed[] = { "--config", fixture("malformed.conf"), NULL };
        check_error("not a key file", malformed);
        const char *missing[] = { "--config", "/nonexistent/procd.conf", NULL };
        check_error("--config names a missing file", missing);
        const char *bad_arg[] = { "--kill-timeout", "0", NULL };
        check_error("bad value on the command line", bad_arg);
        const char *no_group[] = { "--group", "no-such-group-procd-test", NULL };
        check_error("no such group", no_group);
        const char *root_base[] = { "--family-cgroup-base", "/", NULL };
        check_error("family cgroup base /", root_base);
        const char *classic_root[] = { "--classic-cgroup-base", "//", NULL };
        check_error("classic cgroup base /", classic_root);
        const char *classic_rel[] = { "--classic-cgroup-base", "htcondor", NULL };
        check_error("classic cgroup base not absolute", classic_rel);
        const char *stray[] = { "stray", NULL };
        check_error("stray argument", stray);
        const char *ready_in_file_only[] = { "--ready-fd", "1", NULL };
        check_error("ready fd below 3", ready_in_file_only);
}

static void test_version_and_help(void)
{
        pd_options o;
        const char *version[] = { "--version", NULL };
        CU_ASSERT_EQUAL(parse(&o, version), 1);
        const char *help[] = { "--help", NULL };
        CU_ASSERT_EQUAL(parse(&o, help), 1);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "defaults without a configuration file", test_defaults },
                { "every key of the file", test_every_key },
                { "condor_procd's mode reads the file", test_classic_mode_file },
                { "the command line overrides the file", test_command_line_wins },
                { "--family-cgroup-base-default ranks last; metrics and pidfile defaults", test_base_default },
                { "errors", test_errors },
                { "--version and --help", test_version_and_help },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("procd options", NULL, NULL, tests);
}
