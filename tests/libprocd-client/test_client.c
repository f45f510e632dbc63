/* test_client.c - libprocd-client (libprocd-client/client.c) call by call: with no daemon
 * every call path ends in PROCD_E_TRANSPORT with a message; against a procd started by the
 * harness each public call once, its success and the daemon's error names mapped back to
 * procd_status (the wire contract, libprocd-client/include/procd/wire.h). */
#include <CUnit/CUnit.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "procd/client.h"
#include "testsupport.h"
#include "trackers/cgroup.h"

/* One line per call: call's status is want; err (e_) filled on failure. */
#define EXPECT(call, want)                                                                               \
        do {                                                                                             \
                procd_error e_ = { 0 };                                                                  \
                procd_status s_ = (call);                                                                \
                if (s_ != (want))                                                                        \
                        fprintf(stderr, "%s:%d: %s -> %s (%s), want %s\n", __FILE__, __LINE__, #call,    \
                                procd_status_name(s_), e_.msg, procd_status_name(want));                 \
                CU_ASSERT_EQUAL(s_, (want));                                                             \
                if (s_ != PROCD_OK)                                                                      \
                        CU_ASSERT_EQUAL(e_.status, s_);                                                  \
        } while (0)

static void test_no_daemon(void)
{
        char dir[] = "/tmp/procd-client-test.XXXXXX", sock[64];
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
        snprintf(sock, sizeof sock, "%s/none.sock", dir);
        procd_client *c = (procd_client *) 1;
        procd_error e = { 0 };
        CU_ASSERT_EQUAL(procd_connect(sock, &c, &e), PROCD_E_TRANSPORT);
        CU_ASSERT_EQUAL(e.status, PROCD_E_TRANSPORT);
        CU_ASSERT(e.msg[0] != '\0');
        CU_ASSERT_STRING_EQUAL(procd_status_name(PROCD_E_TRANSPORT), "Transport");
        CU_ASSERT_STRING_EQUAL(procd_status_name(PROCD_OK), "Ok");
        CU_ASSERT_STRING_EQUAL(procd_status_name((procd_status) 9999), "Unknown");
        CU_ASSERT_STRING_EQUAL(procd_client_version(), PROCD_VERSION);
        /* every error status round-trips through its D-Bus error name */
        for (int s = 1; s < PROCD_STATUS_COUNT; s++)
                CU_ASSERT_EQUAL(procd_status_from_dbus_name(procd_status_dbus_name((procd_status) s)), s);
        CU_ASSERT_EQUAL(procd_status_from_dbus_name(NULL), PROCD_E_TRANSPORT);
        CU_ASSERT_EQUAL(procd_status_from_dbus_name("org.freedesktop.DBus.Error.NoReply"), PROCD_E_TRANSPORT);
        CU_ASSERT_EQUAL(procd_status_from_dbus_name("org.freedesktop.DBus.Error.UnknownMethod"), PROCD_E_BAD_ARGUMENT);
        CU_ASSERT_EQUAL(procd_status_from_dbus_name("org.freedesktop.DBus.Error.AccessDenied"), PROCD_E_PERMISSION);
        CU_ASSERT_EQUAL(procd_status_from_dbus_name(PROCD_DBUS_ERROR_PREFIX "FromANewerDaemon"), PROCD_E_INTERNAL);
        rmdir(dir);
}

static ph_daemon D;

static int suite_init(void)
{
        static const char *const extra[] = { "--gid-range", "70300-70300", NULL };
        return ph_start(&D, extra, NULL, 10000) < 0 ? 1 : 0;
}

static int suite_clean(void)
{
        if (D.pid > 1)
                ph_stop(&D, 10000);
        return 0;
}

/* Whether pid sits in cgroup path (a line of /proc/PID/cgroup ends in it). */
static bool in_cgroup(pid_t pid, const char *path)
{
        char f[64], line[4096];
        snprintf(f, sizeof f, "/proc/%d/cgroup", (int) pid);
        FILE *fp = fopen(f, "r");
        bool found = false;
        size_t n = strlen(path);
        while (fp && fgets(line, sizeof line, fp)) {
                size_t l = strcspn(line, "\n");
                found |= l >= n && strncmp(line + l - n, path, n) == 0 && line[l - n - 1] == ':';
        }
        if (fp)
                fclose(fp);
        return found;
}

/* The job of root in ListJobs, "" when none. */
static void job_of(procd_client *c, pid_t root, char *out, size_t size)
{
        procd_job_info *jobs = NULL;
        size_t n = 0;
        out[0] = '\0';
        if (procd_list_jobs(c, (uid_t) -1, &jobs, &n, NULL) == PROCD_OK)
                for (size_t i = 0; i < n; i++)
                        if (jobs[i].root_pid == root)
                                snprintf(out, size, "%s", jobs[i].job_id);
        free(jobs);
}

/* RegisterJob: a root already in its cgroup is tracked through it as it sits (nothing
 * moved, named at once, kill-on-watcher-exit set); a root outside it is moved in as
 * TrackFamilyViaCgroup would; every refusal of the three calls, with nothing registered.
 * KillAndUnregisterFamily ends the job: its cgroup emptied and the family gone at the answer. */
static void test_register_job(void)
{
        if (!ts_need_root("RegisterJob against procd") || !ts_cgroup_base())
                return;
        procd_client *c = ph_connect(&D);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        char p1[256], p2[256], job[PROCD_JOB_ID_MAX];
        tr_cgroup *cg1 = NULL, *cg2 = NULL;
        pid_t s1 = ph_sleeper_in_cgroup("rj-in", p1, sizeof p1, &cg1);
        pid_t s2 = ph_sleeper_in_cgroup("rj-move", p2, sizeof p2, &cg2);
        pid_t out = ts_sleeper(), w = ts_sleeper(), other = ts_sleeper(), gone = ts_sleeper();
        CU_ASSERT_FATAL(s1 > 1 && s2 > 1 && out > 1 && w > 1 && other > 1 && gone > 1);
        ts_kill_reap(gone);
        uint32_t kill = PROCD_REGISTER_KILL_ON_WATCHER_EXIT;

        /* refused, nothing registered (one line per case) */
        EXPECT(procd_register_job(c, other, w, 5, kill, p1, "", 0, &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_register_job(c, other, w, 5, kill, "relative", "rj", 0, &e_), PROCD_E_BAD_CGROUP);
        EXPECT(procd_register_job(c, other, w, 5, kill, "/", "rj", 0, &e_), PROCD_E_BAD_CGROUP);
        EXPECT(procd_register_job(c, other, w, 5, 0x80, p1, "rj", 0, &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_register_job(c, other, 0, 5, kill, p1, "rj", 0, &e_), PROCD_E_BAD_WATCHER_PID);
        EXPECT(procd_register_job(c, other, gone, 5, kill, p1, "rj", 0, &e_), PROCD_E_BAD_WATCHER_PID);
        EXPECT(procd_register_job(c, other, w, 0, kill, p1, "rj", 0, &e_), PROCD_E_BAD_INTERVAL);
        EXPECT(procd_register_job(c, gone, w, 5, kill, p1, "rj", 0, &e_), PROCD_E_BAD_ROOT_PID);
        EXPECT(procd_register_job(c, getpid(), w, 5, kill, p1, "rj", 0, &e_), PROCD_E_ALREADY_REGISTERED); /* procd's parent: the root family's root */
        EXPECT(procd_dump(c, other, &(procd_family_info *){ NULL }, &(size_t){ 0 }, &e_), PROCD_E_FAMILY_NOT_FOUND);
        job_of(c, other, job, sizeof job);
        CU_ASSERT_STRING_EQUAL(job, "");

        /* in its cgroup already: tracked through it, nothing moved, named */
        EXPECT(procd_register_job(c, s1, w, 5, kill, p1, "rj-one", 0, &e_), PROCD_OK);
        procd_family_info fi;
        CU_ASSERT_TRUE(ph_dump_one(c, s1, &fi));
        CU_ASSERT_PTR_NOT_NULL(strstr(fi.tracking, p1));
        CU_ASSERT_STRING_EQUAL(fi.source, "cgroup");
        CU_ASSERT_TRUE(in_cgroup(s1, p1));
        job_of(c, s1, job, sizeof job);
        CU_ASSERT_STRING_EQUAL(job, "rj-one");
        EXPECT(procd_register_job(c, s1, w, 5, kill, p1, "rj-one", 0, &e_), PROCD_E_ALREADY_REGISTERED);
        EXPECT(procd_register_job(c, other, w, 5, kill, p1, "rj", 0, &e_), PROCD_E_BAD_CGROUP); /* s1's cgroup */

        /* outside it: moved in (the other manager's sleeper s2 stays there too) */
        EXPECT(procd_register_job(c, out, 0, 5, 0, p2, "rj-two", 0, &e_), PROCD_OK);
        CU_ASSERT_TRUE(in_cgroup(out, p2));
        job_of(c, out, job, sizeof job);
        CU_ASSERT_STRING_EQUAL(job, "rj-two");

        /* kill-on-watcher-exit: the watcher's end kills s1's family */
        ts_kill_reap(w);
        CU_ASSERT_TRUE(ph_wait_gone(s1, 10000));
        ts_wait(s1, 5000);
        /* the starter's end of job: one call kills the job's cgroup (s2 with it) and
         * unregisters the family; the answer comes after both */
        EXPECT(procd_kill_and_unregister_family(c, out, &e_), PROCD_OK);
        CU_ASSERT_FALSE(ts_alive(out));
        CU_ASSERT_FALSE(ts_alive(s2));
        EXPECT(procd_dump(c, out, &(procd_family_info *){ NULL }, &(size_t){ 0 }, &e_), PROCD_E_FAMILY_NOT_FOUND);
        job_of(c, out, job, sizeof job);
        CU_ASSERT_STRING_EQUAL(job, "");
        EXPECT(procd_kill_and_unregister_family(c, out, &e_), PROCD_E_FAMILY_NOT_FOUND);
        ts_kill_reap(out);
        ts_kill_reap(s2);
        ts_kill_reap(other);
        procd_disconnect(c);
        tr_cgroup_destroy(cg1, 5000000, NULL);
        tr_cgroup_destroy(cg2, 5000000, NULL);
        tr_cgroup_free(cg1);
        tr_cgroup_free(cg2);
}

static void test_each_call(void)
{
        if (!ts_need_root("client calls against procd")) /* procd takes registrations from root */
                return;
        procd_client *c = ph_connect(&D);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        pid_t a = ts_sleeper(), b = ts_sleeper(), gone = ts_sleeper();
        CU_ASSERT_FATAL(a > 1 && b > 1 && gone > 1);
        ts_kill_reap(gone);

        EXPECT(procd_register_subfamily(c, a, 0, 60, &e_), PROCD_OK);
        EXPECT(procd_register_subfamily(c, a, 0, 60, &e_), PROCD_E_ALREADY_REGISTERED);
        EXPECT(procd_register_subfamily(c, gone, 0, 60, &e_), PROCD_E_BAD_ROOT_PID);
        EXPECT(procd_register_subfamily(c, b, gone, 60, &e_), PROCD_E_BAD_WATCHER_PID);
        EXPECT(procd_register_subfamily_flags(c, b, 0, 60, 0, &e_), PROCD_OK);

        EXPECT(procd_track_via_environment(c, a, "PROCD_CLIENT_TEST=1", &e_), PROCD_OK);
        EXPECT(procd_track_via_login(c, a, "no-such-user-xyz", &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_track_via_associated_group(c, a, 4243, &e_), PROCD_OK);
        gid_t g = 0;
        EXPECT(procd_track_via_allocated_group(c, b, &g, &e_), PROCD_OK);
        CU_ASSERT_EQUAL(g, 70300);
        EXPECT(procd_track_via_allocated_group(c, a, &g, &e_), PROCD_E_NO_GID); /* the range is spent */
        EXPECT(procd_track_via_cgroup(c, a, "relative/not/absolute", &e_), PROCD_E_BAD_CGROUP);

        procd_usage u;
        EXPECT(procd_get_usage(c, a, &u, &e_), PROCD_OK);
        procd_usage_extra x;
        EXPECT(procd_get_usage_extra(c, 0, &u, &x, &e_), PROCD_OK); /* 0: the root family */
        EXPECT(procd_get_usage(c, gone, &u, &e_), PROCD_E_FAMILY_NOT_FOUND);

        EXPECT(procd_signal_process(c, a, SIGCONT, &e_), PROCD_OK);
        EXPECT(procd_signal_process(c, a, 0, &e_), PROCD_E_BAD_ARGUMENT); /* 1..64 */
        EXPECT(procd_suspend_family(c, a, &e_), PROCD_OK);
        EXPECT(procd_continue_family(c, a, &e_), PROCD_OK);
        EXPECT(procd_suspend_family(c, 0, &e_), PROCD_E_ROOT_FAMILY);
        EXPECT(procd_snapshot(c, &e_), PROCD_OK);

        procd_family_info *fi = NULL;
        size_t n = 0;
        EXPECT(procd_dump(c, 0, &fi, &n, &e_), PROCD_OK);
        CU_ASSERT(n >= 3); /* the root family, a and b */
        procd_family_info_free(fi, n);

        EXPECT(procd_set_family_job(c, a, "client-test-job", getuid(), &e_), PROCD_OK);
        procd_job_info *jobs = NULL;
        size_t nj = 0;
        EXPECT(procd_list_jobs(c, getuid(), &jobs, &nj, &e_), PROCD_OK);
        bool listed = false;
        for (size_t i = 0; i < nj; i++)
                listed |= jobs[i].root_pid == a && strcmp(jobs[i].job_id, "client-test-job") == 0;
        CU_ASSERT_TRUE(listed);
        free(jobs);
        EXPECT(procd_adopt_process(c, a, gone, &e_), PROCD_E_FAMILY_NOT_FOUND);
        EXPECT(procd_adopt_process(c, getpid(), a, &e_), PROCD_E_BAD_ARGUMENT); /* procd's ancestor */

        EXPECT(procd_kill_and_unregister_family(c, 0, &e_), PROCD_E_ROOT_FAMILY);
        EXPECT(procd_kill_and_unregister_family(c, gone, &e_), PROCD_E_FAMILY_NOT_FOUND);
        CU_ASSERT_TRUE(ph_dump_one(c, a, &(procd_family_info){ 0 })); /* a still registered */
        EXPECT(procd_kill_family(c, b, &e_), PROCD_OK);
        CU_ASSERT_TRUE(ph_wait_gone(b, 5000));
        CU_ASSERT(ts_wait(b, 5000) >= 0); /* reaped: killed by procd */
        EXPECT(procd_unregister_family(c, b, &e_), PROCD_OK);
        EXPECT(procd_unregister_family(c, a, &e_), PROCD_OK);
        EXPECT(procd_unregister_family(c, a, &e_), PROCD_E_FAMILY_NOT_FOUND);
        EXPECT(procd_unregister_family(c, 0, &e_), PROCD_E_ROOT_FAMILY);

        /* Quit, then a call on the lost connection with reconnecting off: transport */
        procd_set_reconnect(c, 0);
        EXPECT(procd_quit(c, &e_), PROCD_OK);
        CU_ASSERT(ts_wait(D.pid, 10000) >= 0);
        D.pid = 0;
        ph_remove_dir(&D);
        EXPECT(procd_get_usage(c, 0, &u, &e_), PROCD_E_TRANSPORT);
        CU_ASSERT_EQUAL(procd_reconnects(c), 0);
        procd_disconnect(c);
        ts_kill_reap(a);
}

int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        CU_TestInfo offline[] = {
                { "no daemon: PROCD_E_TRANSPORT, names, version", test_no_daemon },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo online[] = {
                { "RegisterJob: in its cgroup, moved in, refusals", test_register_job },
                { "each call once against procd, errors mapped", test_each_call },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "client without a daemon", NULL, NULL, NULL, NULL, offline },
                { "client with procd", suite_init, suite_clean, NULL, NULL, online },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
