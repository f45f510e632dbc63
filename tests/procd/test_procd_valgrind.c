/* test_procd_valgrind.c - the daemon under valgrind (--error-exitcode=1 --leak-check=full)
 * through a short client session that touches every operation, bad input, a watcher's
 * death, a client that disconnects mid-call and a non-root client refused over its
 * connection quota (--max-connections-per-uid 1); procd must exit 0 (no error, no definite
 * or indirect leak).  Skips with a printed reason when valgrind is missing. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testsupport.h"
#include "trackers/util.h"

static const char *valgrind_path(void)
{
        static const char *const cands[] = { "/usr/bin/valgrind", "/usr/local/bin/valgrind" };
        for (size_t i = 0; i < 2; i++)
                if (access(cands[i], X_OK) == 0)
                        return cands[i];
        return NULL;
}


/* A member frozen in a v1 freezer cgroup procd was not handed: SuspendFamily on its family
 * stays pending (rounds from the main loop) up to the freeze bound. */
static pid_t frozen_victim;
static char frozen_dir[512];
static DBusConnection *pending_raw; /* left with a SuspendFamily pending at Quit */

static void frozen_start(void)
{
        const tr_hierarchies *hs = ts_hierarchies();
        int fz = hs->v1_of[TR_CTRL_FREEZER];
        char path[256], f[600], pidbuf[16];
        if (!ts_cgroup_base() || fz < 0)
                return;
        ts_cgroup_path(path, sizeof path, "pd-vg-frozen");
        if (tr_hierarchy_fs_path(&hs->h[fz], path, frozen_dir, sizeof frozen_dir, NULL) < 0 ||
            (mkdir(frozen_dir, 0755) < 0 && errno != EEXIST))
                return;
        frozen_victim = ts_sleeper();
        snprintf(pidbuf, sizeof pidbuf, "%d", (int) frozen_victim);
        snprintf(f, sizeof f, "%s/cgroup.procs", frozen_dir);
        tr_write_file_at(AT_FDCWD, f, pidbuf, NULL);
        snprintf(f, sizeof f, "%s/freezer.state", frozen_dir);
        tr_write_file_at(AT_FDCWD, f, "FROZEN", NULL);
}

static void frozen_end(void)
{
        char f[600];
        if (pending_raw) {
                dbus_connection_close(pending_raw);
                dbus_connection_unref(pending_raw);
                pending_raw = NULL;
        }
        if (frozen_victim <= 1)
                return;
        snprintf(f, sizeof f, "%s/freezer.state", frozen_dir);
        tr_write_file_at(AT_FDCWD, f, "THAWED", NULL);
        kill(frozen_victim, SIGCONT);
        ts_kill_reap(frozen_victim);
        rmdir(frozen_dir);
        frozen_victim = 0;
}

static void send_suspend(DBusConnection *raw, pid_t pid)
{
        DBusMessage *m = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, "SuspendFamily");
        dbus_int32_t p = pid;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &p, DBUS_TYPE_INVALID);
        dbus_connection_send(raw, m, NULL);
        dbus_connection_flush(raw);
        dbus_message_unref(m);
}

/* Deferred SuspendFamily calls: one whose client leaves mid-call, one answered by a later
 * ContinueFamily, one still pending when procd quits. */
static void pending_suspends(ph_daemon *d, procd_client *c)
{
        frozen_start();
        if (frozen_victim <= 1)
                return;
        CU_ASSERT_EQUAL(procd_register_subfamily(c, frozen_victim, 0, 60, NULL), PROCD_OK);
        DBusConnection *raw = ph_raw_connect(d);
        if (raw) {
                send_suspend(raw, frozen_victim);
                usleep(200000);
                dbus_connection_close(raw);
                dbus_connection_unref(raw);
        }
        raw = ph_raw_connect(d);
        if (raw) {
                send_suspend(raw, frozen_victim);
                usleep(200000);
                CU_ASSERT_EQUAL(procd_continue_family(c, frozen_victim, NULL), PROCD_OK);
                dbus_connection_close(raw);
                dbus_connection_unref(raw);
        }
        pending_raw = ph_raw_connect(d);
        if (pending_raw)
                send_suspend(pending_raw, frozen_victim);
}

/* As nobody, with --max-connections-per-uid 1: the first connection is served, the second
 * refused at accept. */
static int over_quota_fn(void *arg)
{
        const ph_daemon *d = arg;
        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
                return 20;
        DBusConnection *a = ph_raw_connect(d), *b = ph_raw_connect(d);
        int rc = 0;
        if (!a)
                rc = 21;
        else {
                DBusMessage *m = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, "GetUsage");
                dbus_int32_t z = 0;
                dbus_message_append_args(m, DBUS_TYPE_INT32, &z, DBUS_TYPE_INVALID);
                if (ph_raw_call(a, m, 30000))
                        rc = 22;
                dbus_message_unref(m);
        }
        if (b && dbus_connection_get_is_authenticated(b) && dbus_connection_get_is_connected(b))
                rc = 23;
        for (int i = 0; i < 2; i++) {
                DBusConnection *c = i ? b : a;
                if (c) {
                        dbus_connection_close(c);
                        dbus_connection_unref(c);
                }
        }
        return rc;
}

static void session(ph_daemon *d)
{
        procd_client *c = ph_connect(d);
        if (!c)
                return;
        procd_usage u;
        procd_family_info *fi = NULL;
        size_t n = 0;
        gid_t g;
        pid_t a = ts_sleeper(), b = ts_sleeper(), w = ts_sleeper();
        CU_ASSERT_EQUAL(procd_register_subfamily(c, a, 0, 1, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, b, w, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, a, 0, 1, NULL), PROCD_E_ALREADY_REGISTERED);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, 1, 0, 1, NULL), PROCD_E_BAD_ROOT_PID);
        CU_ASSERT_EQUAL(procd_track_via_environment(c, a, "PROCD_VG=1", NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_track_via_allocated_group(c, a, &g, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_track_via_login(c, b, "nobody", NULL), PROCD_OK);
        if (ts_cgroup_base()) { /* a cgroup that cannot be made (a missing one is made) */
                char bad[300];
                snprintf(bad, sizeof bad, "%s/cgroup.procs/x", ts_cgroup_base());
                CU_ASSERT_EQUAL(procd_track_via_cgroup(c, b, bad, NULL), PROCD_E_BAD_CGROUP);
        }
        char path[256];
        tr_cgroup *cg = NULL;
        pid_t cp = ts_cgroup_base() ? ph_sleeper_in_cgroup("pd-vg", path, sizeof path, &cg) : -1;
        if (cp > 1) {
                CU_ASSERT_EQUAL(procd_register_subfamily(c, cp, 0, 60, NULL), PROCD_OK);
                CU_ASSERT_EQUAL(procd_track_via_cgroup(c, cp, path, NULL), PROCD_OK);
                CU_ASSERT_EQUAL(procd_get_usage(c, cp, &u, NULL), PROCD_OK);
                CU_ASSERT_EQUAL(procd_suspend_family(c, cp, NULL), PROCD_OK);
                CU_ASSERT_EQUAL(procd_continue_family(c, cp, NULL), PROCD_OK);
                CU_ASSERT_EQUAL(procd_kill_family(c, cp, NULL), PROCD_OK);
                ts_wait(cp, 5000);
        }
        CU_ASSERT_EQUAL(procd_snapshot(c, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_get_usage(c, a, &u, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_get_usage(c, 0, &u, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_get_usage(c, -5, &u, NULL), PROCD_E_BAD_ROOT_PID);
        CU_ASSERT_EQUAL(procd_dump(c, 0, &fi, &n, NULL), PROCD_OK);
        procd_family_info_free(fi, n);
        CU_ASSERT_EQUAL(procd_signal_process(c, a, 999, NULL), PROCD_E_BAD_ARGUMENT);
        CU_ASSERT_EQUAL(procd_signal_process(c, a, SIGCONT, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_suspend_family(c, a, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_continue_family(c, a, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_kill_family(c, a, NULL), PROCD_OK);
        ts_wait(a, 5000);
        CU_ASSERT_EQUAL(procd_unregister_family(c, a, NULL), PROCD_OK);
        /* watcher death unregisters b */
        ts_kill_reap(w);
        for (int i = 0; i < 500; i++) { /* under valgrind: no pidfd_open, polled once a second */
                if (procd_get_usage(c, b, &u, NULL) == PROCD_E_FAMILY_NOT_FOUND)
                        break;
                usleep(10000);
        }
        CU_ASSERT_EQUAL(procd_get_usage(c, b, &u, NULL), PROCD_E_FAMILY_NOT_FOUND);
        ts_kill_reap(b);
        /* raw bad input and a disconnect mid-call */
        DBusConnection *raw = ph_raw_connect(d);
        if (raw) {
                DBusMessage *m = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, "GetUsage");
                const char *s = "wrong";
                dbus_message_append_args(m, DBUS_TYPE_STRING, &s, DBUS_TYPE_INVALID);
                CU_ASSERT_PTR_NOT_NULL(ph_raw_call(raw, m, 30000));
                dbus_message_unref(m);
                m = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, "Dump");
                dbus_int32_t z = 0;
                dbus_message_append_args(m, DBUS_TYPE_INT32, &z, DBUS_TYPE_INVALID);
                dbus_connection_send(raw, m, NULL);
                dbus_connection_flush(raw);
                dbus_message_unref(m);
                dbus_connection_close(raw);
                dbus_connection_unref(raw);
        }
        pid_t q = ts_fork(over_quota_fn, d);
        int qst = q > 1 ? ts_wait(q, 120000) : -1;
        if (qst == -ETIMEDOUT)
                ts_kill_reap(q);
        if (!(qst >= 0 && WIFEXITED(qst) && WEXITSTATUS(qst) == 0))
                fprintf(stderr, "over-quota client: status %d\n", qst);
        CU_ASSERT(qst >= 0 && WIFEXITED(qst) && WEXITSTATUS(qst) == 0);
        pending_suspends(d, c);
        procd_disconnect(c);
        if (cg) {
                tr_cgroup_destroy(cg, 2000000, NULL);
                tr_cgroup_free(cg);
        }
}

static void test_valgrind(void)
{
#ifdef PROCD_SANITIZE
        /* an ASan-instrumented procd cannot run under valgrind (both replace malloc and
         * shadow memory); the plain build (make test) runs this test */
        ts_skip("valgrind run of procd", "this is the ASan+UBSan build; make test runs it");
        return;
#endif
        const char *vg = valgrind_path();
        if (!vg) {
                ts_skip("valgrind run of procd", "valgrind is not installed");
                return;
        }
        setenv("G_SLICE", "always-malloc", 1);
        setenv("G_DEBUG", "gc-friendly,fatal-criticals", 1);
        char supp[PATH_MAX + 32];
        const char *const wrapper[] = { vg, "--quiet", "--error-exitcode=1", "--leak-check=full",
                                        "--errors-for-leak-kinds=definite,indirect", "--show-leak-kinds=definite,indirect",
                                        ts_valgrind_suppressions(supp, sizeof supp), NULL };
        ph_daemon d;
        /* families get cgroups of their own (made, moved into, removed) when the base exists */
        char fams[256] = "";
        if (ts_cgroup_base())
                ts_cgroup_path(fams, sizeof fams, "vgfams");
        const char *const extra[] = { "--gid-range", "70300-70301", "--group", "65534", "--max-connections-per-uid", "1",
                                      fams[0] ? "--family-cgroup-base" : NULL, fams, NULL };
        /* bounds, not speeds: valgrind in an emulated guest (tests/vm/run) needs minutes */
        CU_ASSERT_EQUAL_FATAL(ph_start(&d, extra, wrapper, 240000), 0);
        session(&d);
        int st = ph_stop(&d, 240000);
        frozen_end();
        CU_ASSERT(st >= 0 && WIFEXITED(st));
        if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) != 0)
                fprintf(stderr, "procd under valgrind exited %d (valgrind errors above)\n", WEXITSTATUS(st));
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static CU_TestInfo tests[] = {
        { "procd under valgrind", test_valgrind },
        CU_TEST_INFO_NULL,
};


int main(void)
{
        return ph_main("procd valgrind", NULL, NULL, tests);
}
