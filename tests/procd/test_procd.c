/* test_procd.c - procd end to end through the client library: a procd started on a
 * temporary socket (the test program is its parent, so the root family), every operation
 * and every error, permissions, cgroup and /proc families side by side, watcher death,
 * nested subfamilies and unregister folding, 1,000 families (PROCD_TEST_FAMILIES in the
 * guest lanes). */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testsupport.h"
#include "trackers/util.h"

#define NOBODY 65534

static ph_daemon D;
static procd_client *C;

static int suite_init(void)
{
        static const char *const extra[] = { "--gid-range", "70100-70101", "--group", "65534", "--snapshot-interval",
                                             "1", NULL };
        if (ph_start(&D, extra, NULL, 10000) < 0)
                return 1;
        if (procd_connect(D.socket, &C, NULL) != PROCD_OK)
                return 1;
        return 0;
}

static int suite_clean(void)
{
        procd_disconnect(C);
        C = NULL;
        int st = ph_stop(&D, 10000);
        if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "procd did not exit cleanly (status %d)\n", st);
                return 1;
        }
        return 0;
}

#define EXPECT(call, status)                                                                        \
        do {                                                                                        \
                procd_error e_ = { 0 };                                                             \
                procd_status s_ = (call);                                                           \
                (void) e_;                                                                          \
                if (s_ != (status))                                                                 \
                        fprintf(stderr, "%s:%d: got %d, want %d\n", __FILE__, __LINE__, s_, status); \
                CU_ASSERT_EQUAL(s_, status);                                                        \
        } while (0)

static size_t family_count(void)
{
        procd_family_info *fi = NULL;
        size_t n = 0;
        if (procd_dump(C, 0, &fi, &n, NULL) != PROCD_OK)
                return 0;
        procd_family_info_free(fi, n);
        return n;
}

static bool dump_one(pid_t pid, procd_family_info *out) { return ph_dump_one(C, pid, out); }
static bool family_has_member(pid_t fam, pid_t pid) { return ph_has_member(C, fam, pid); }

static void test_no_daemon(void)
{
        procd_client *c = NULL;
        procd_error e = { 0 };
        CU_ASSERT_EQUAL(procd_connect("/tmp/procd-test-nonexistent.sock", &c, &e), PROCD_E_TRANSPORT);
        CU_ASSERT_PTR_NULL(c);
        CU_ASSERT(strlen(e.msg) > 0);
        CU_ASSERT_STRING_EQUAL(procd_status_dbus_name(PROCD_E_BAD_ROOT_PID), "org.procd.Error.BadRootPid");
        CU_ASSERT_EQUAL(procd_status_from_dbus_name("org.procd.Error.Unkillable"), PROCD_E_UNKILLABLE);
}

static void test_socket_mode(void)
{
        struct stat st;
        CU_ASSERT_EQUAL_FATAL(stat(D.socket, &st), 0);
        CU_ASSERT_EQUAL(st.st_mode & 0777, 0660);
        CU_ASSERT_EQUAL(st.st_gid, (gid_t) NOBODY);
}

static void test_register_errors(void)
{
        pid_t a = ts_sleeper(), w = ts_sleeper();
        pid_t gone = ts_sleeper();
        ts_kill_reap(gone);
        EXPECT(procd_register_subfamily(C, 0, 0, 60, &e_), PROCD_E_BAD_ROOT_PID);
        EXPECT(procd_register_subfamily(C, 1, 0, 60, &e_), PROCD_E_BAD_ROOT_PID);
        EXPECT(procd_register_subfamily(C, -5, 0, 60, &e_), PROCD_E_BAD_ROOT_PID);
        EXPECT(procd_register_subfamily(C, gone, 0, 60, &e_), PROCD_E_BAD_ROOT_PID);
        EXPECT(procd_register_subfamily(C, D.pid, 0, 60, &e_), PROCD_E_BAD_ROOT_PID);   /* procd itself */
        EXPECT(procd_register_subfamily(C, getppid(), 0, 60, &e_), PROCD_E_BAD_ROOT_PID); /* its ancestor */
        EXPECT(procd_register_subfamily(C, getpid(), 0, 60, &e_), PROCD_E_ALREADY_REGISTERED); /* root family */
        EXPECT(procd_register_subfamily(C, a, -3, 60, &e_), PROCD_E_BAD_WATCHER_PID);
        EXPECT(procd_register_subfamily(C, a, gone, 60, &e_), PROCD_E_BAD_WATCHER_PID);
        EXPECT(procd_register_subfamily(C, a, w, 0, &e_), PROCD_E_BAD_INTERVAL);
        EXPECT(procd_register_subfamily(C, a, w, 100000, &e_), PROCD_E_BAD_INTERVAL);
        EXPECT(procd_register_subfamily(C, a, w, 5, &e_), PROCD_OK);
        EXPECT(procd_register_subfamily(C, a, w, 5, &e_), PROCD_E_ALREADY_REGISTERED);
        procd_family_info fi;
        CU_ASSERT_FATAL(dump_one(a, &fi));
        CU_ASSERT_EQUAL(fi.watcher_pid, w);
        CU_ASSERT_EQUAL(fi.parent_root_pid, getpid());
        CU_ASSERT_STRING_EQUAL(fi.tracking, "parent");
        CU_ASSERT_STRING_EQUAL(fi.source, "proc");
        CU_ASSERT(fi.root_start_ticks > 0);
        EXPECT(procd_unregister_family(C, a, &e_), PROCD_OK);
        EXPECT(procd_unregister_family(C, a, &e_), PROCD_E_FAMILY_NOT_FOUND);
        EXPECT(procd_unregister_family(C, 0, &e_), PROCD_E_ROOT_FAMILY);
        EXPECT(procd_unregister_family(C, getpid(), &e_), PROCD_E_ROOT_FAMILY);
        EXPECT(procd_unregister_family(C, 1, &e_), PROCD_E_BAD_ROOT_PID);
        ts_kill_reap(a);
        ts_kill_reap(w);
}

static void test_usage_and_lookup_errors(void)
{
        procd_usage u;
        EXPECT(procd_get_usage(C, 0, &u, &e_), PROCD_OK); /* the root family: this program */
        CU_ASSERT(u.num_procs.available && u.num_procs.value >= 1);
        CU_ASSERT(u.sources & PROCD_SRC_PROC);
        EXPECT(procd_get_usage(C, 1, &u, &e_), PROCD_E_BAD_ROOT_PID);
        EXPECT(procd_get_usage(C, -5, &u, &e_), PROCD_E_BAD_ROOT_PID);
        EXPECT(procd_get_usage(C, 999999, &u, &e_), PROCD_E_FAMILY_NOT_FOUND);
        procd_family_info *fi = NULL;
        size_t n = 0;
        EXPECT(procd_dump(C, 999999, &fi, &n, &e_), PROCD_E_FAMILY_NOT_FOUND);
        EXPECT(procd_dump(C, -5, &fi, &n, &e_), PROCD_E_BAD_ROOT_PID);
        EXPECT(procd_snapshot(C, &e_), PROCD_OK);
}

/* A /proc family: a chain of 3 forked after REGISTER; usage counts every member; CPU
 * grows with a spinner. */
static void test_proc_family(void)
{
        pid_t chain[4];
        int fds[2];
        CU_ASSERT_FATAL(ph_chain_start(3, chain, fds) == 0);
        EXPECT(procd_register_subfamily(C, chain[0], 0, 1, &e_), PROCD_OK);
        CU_ASSERT_FATAL(ph_chain_grow(3, chain, fds) == 0);
        EXPECT(procd_snapshot(C, &e_), PROCD_OK);
        procd_usage u;
        EXPECT(procd_get_usage(C, chain[0], &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available);
        CU_ASSERT_EQUAL(u.num_procs.value, 4);
        CU_ASSERT_EQUAL(u.sources, PROCD_SRC_PROC);
        CU_ASSERT(u.rss_bytes.available && u.rss_bytes.value > 0);
        CU_ASSERT(family_has_member(chain[0], chain[3]));
        /* the root family no longer counts them */
        CU_ASSERT_FALSE(family_has_member(getpid(), chain[2]));
        EXPECT(procd_unregister_family(C, chain[0], &e_), PROCD_OK);
        ph_chain_kill(3, chain);

        pid_t sp = ph_spinner();
        EXPECT(procd_register_subfamily(C, sp, 0, 1, &e_), PROCD_OK);
        /* the spinner's CPU grows with each snapshot (polled up to 60 s: on a loaded host a
         * spinner may get a small share of a core) */
        for (int i = 0; i < 600; i++) {
                usleep(100000);
                EXPECT(procd_snapshot(C, &e_), PROCD_OK);
                EXPECT(procd_get_usage(C, sp, &u, &e_), PROCD_OK);
                if (u.cpu_usec.available && u.cpu_usec.value >= 100000)
                        break;
        }
        CU_ASSERT(u.cpu_usec.available && u.cpu_usec.value >= 100000);
        EXPECT(procd_kill_family(C, sp, &e_), PROCD_OK);
        CU_ASSERT(ts_wait(sp, 2000) >= 0);
        EXPECT(procd_unregister_family(C, sp, &e_), PROCD_OK);
}

/* cgroup and /proc families side by side. */
static void test_cgroup_and_proc_side_by_side(void)
{
        if (!ts_need_root("cgroup family"))
                return;
        char path[256];
        tr_cgroup *cg = NULL;
        pid_t cp = ph_sleeper_in_cgroup("pd-side", path, sizeof path, &cg);
        CU_ASSERT_FATAL(cp > 1);
        pid_t pp = ts_sleeper();
        EXPECT(procd_register_subfamily(C, cp, 0, 60, &e_), PROCD_OK);
        EXPECT(procd_track_via_cgroup(C, cp, path, &e_), PROCD_OK);
        EXPECT(procd_register_subfamily(C, pp, 0, 60, &e_), PROCD_OK);
        procd_usage u;
        EXPECT(procd_get_usage(C, cp, &u, &e_), PROCD_OK);
        CU_ASSERT(u.sources & (PROCD_SRC_CGROUP_V2 | PROCD_SRC_CGROUP_V1));
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 1);
        EXPECT(procd_get_usage(C, pp, &u, &e_), PROCD_OK);
        CU_ASSERT_EQUAL(u.sources, PROCD_SRC_PROC);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 1);
        procd_family_info fi;
        CU_ASSERT_FATAL(dump_one(cp, &fi));
        char want[300];
        snprintf(want, sizeof want, "cgroup:%s", path);
        CU_ASSERT_STRING_EQUAL(fi.tracking, want);
        CU_ASSERT_STRING_EQUAL(fi.source, "cgroup");
        CU_ASSERT(family_has_member(cp, cp));
        CU_ASSERT_FALSE(family_has_member(pp, cp));
        /* a process placed in the cgroup (not the root's descendant) is the family's */
        pid_t extra = ts_sleeper();
        tr_error terr = { 0 };
        CU_ASSERT(tr_cgroup_attach(cg, extra, &terr) >= 0);
        EXPECT(procd_signal_process(C, extra, SIGSTOP, &e_), PROCD_OK);
        for (int i = 0; i < 100 && ts_proc_state(extra) != 'T'; i++)
                usleep(10000);
        CU_ASSERT_EQUAL(ts_proc_state(extra), 'T');
        /* a family rooted inside the cgroup is placed below the cgroup family */
        EXPECT(procd_register_subfamily(C, extra, 0, 60, &e_), PROCD_OK);
        CU_ASSERT_FATAL(dump_one(extra, &fi));
        CU_ASSERT_EQUAL(fi.parent_root_pid, cp);
        EXPECT(procd_unregister_family(C, extra, &e_), PROCD_OK);
        EXPECT(procd_signal_process(C, extra, SIGKILL, &e_), PROCD_OK);
        CU_ASSERT(ts_wait(extra, 2000) >= 0);

        /* suspend / continue / kill through the cgroup */
        EXPECT(procd_suspend_family(C, cp, &e_), PROCD_OK);
        char events[512] = "";
        char fsdir[512];
        const tr_hierarchies *hs = ts_hierarchies();
        if (hs->v2 >= 0 && tr_hierarchy_fs_path(&hs->h[hs->v2], path, fsdir, sizeof fsdir, NULL) >= 0) {
                char f[600];
                snprintf(f, sizeof f, "%s/cgroup.events", fsdir);
                tr_read_file_at(AT_FDCWD, f, events, sizeof events, NULL);
                CU_ASSERT_PTR_NOT_NULL(strstr(events, "frozen 1"));
        }
        EXPECT(procd_continue_family(C, cp, &e_), PROCD_OK);
        if (events[0]) {
                char f[600];
                snprintf(f, sizeof f, "%s/cgroup.events", fsdir);
                tr_read_file_at(AT_FDCWD, f, events, sizeof events, NULL);
                CU_ASSERT_PTR_NOT_NULL(strstr(events, "frozen 0"));
        }
        EXPECT(procd_kill_family(C, cp, &e_), PROCD_OK);
        CU_ASSERT(ts_wait(cp, 2000) >= 0);
        EXPECT(procd_get_usage(C, cp, &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 0);
        EXPECT(procd_unregister_family(C, cp, &e_), PROCD_OK);
        EXPECT(procd_unregister_family(C, pp, &e_), PROCD_OK);
        ts_kill_reap(pp);
        tr_cgroup_destroy(cg, 2000000, NULL);
        tr_cgroup_free(cg);
}

static void test_track_errors(void)
{
        pid_t a = ts_sleeper(), b = ts_sleeper(), c = ts_sleeper();
        EXPECT(procd_track_via_cgroup(C, a, "/x", &e_), PROCD_E_FAMILY_NOT_FOUND);
        EXPECT(procd_register_subfamily(C, a, 0, 60, &e_), PROCD_OK);
        EXPECT(procd_register_subfamily(C, b, 0, 60, &e_), PROCD_OK);
        EXPECT(procd_register_subfamily(C, c, 0, 60, &e_), PROCD_OK);
        EXPECT(procd_track_via_cgroup(C, a, "relative", &e_), PROCD_E_BAD_CGROUP);
        EXPECT(procd_track_via_cgroup(C, a, "/a/../b", &e_), PROCD_E_BAD_CGROUP);
        EXPECT(procd_track_via_cgroup(C, a, "/", &e_), PROCD_E_BAD_CGROUP);
        if (ts_cgroup_base()) { /* a cgroup that cannot be made (a missing one is made) */
                char bad[300];
                snprintf(bad, sizeof bad, "%s/cgroup.procs/x", ts_cgroup_base());
                EXPECT(procd_track_via_cgroup(C, a, bad, &e_), PROCD_E_BAD_CGROUP);
        }
        EXPECT(procd_track_via_cgroup(C, getpid(), "/x", &e_), PROCD_E_ROOT_FAMILY);
        EXPECT(procd_track_via_cgroup(C, 1, "/x", &e_), PROCD_E_BAD_ROOT_PID);
        EXPECT(procd_track_via_environment(C, a, "NOEQUALS", &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_track_via_environment(C, a, "=x", &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_track_via_environment(C, a, "PROCD_TEST_MARK=1", &e_), PROCD_OK);
        EXPECT(procd_track_via_login(C, a, "no-such-user-xyz", &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_track_via_login(C, b, "nobody", &e_), PROCD_OK);
        EXPECT(procd_track_via_associated_group(C, a, 0, &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_track_via_associated_group(C, a, 4242, &e_), PROCD_OK);
        gid_t g1 = 0, g2 = 0, g3 = 0;
        EXPECT(procd_track_via_allocated_group(C, b, &g1, &e_), PROCD_OK);
        EXPECT(procd_track_via_allocated_group(C, c, &g2, &e_), PROCD_OK);
        CU_ASSERT(g1 >= 70100 && g1 <= 70101 && g2 >= 70100 && g2 <= 70101 && g1 != g2);
        pid_t d = ts_sleeper();
        EXPECT(procd_register_subfamily(C, d, 0, 60, &e_), PROCD_OK);
        EXPECT(procd_track_via_allocated_group(C, d, &g3, &e_), PROCD_E_NO_GID);
        EXPECT(procd_unregister_family(C, b, &e_), PROCD_OK); /* releases g1 */
        EXPECT(procd_track_via_allocated_group(C, d, &g3, &e_), PROCD_OK);
        CU_ASSERT_EQUAL(g3, g1);
        procd_family_info fi;
        CU_ASSERT_FATAL(dump_one(a, &fi));
        CU_ASSERT_PTR_NOT_NULL(strstr(fi.tracking, "environment:PROCD_TEST_MARK=1"));
        CU_ASSERT_PTR_NOT_NULL(strstr(fi.tracking, "gid:4242"));
        procd_usage u;
        EXPECT(procd_get_usage(C, a, &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value >= 1);
        pid_t fams[] = { a, c, d };
        for (size_t i = 0; i < 3; i++) {
                EXPECT(procd_unregister_family(C, fams[i], &e_), PROCD_OK);
                ts_kill_reap(fams[i]);
        }
        ts_kill_reap(b);
}

static void test_signal(void)
{
        pid_t a = ts_sleeper();
        pid_t gone = ts_sleeper();
        ts_kill_reap(gone);
        EXPECT(procd_register_subfamily(C, a, 0, 60, &e_), PROCD_OK);
        EXPECT(procd_signal_process(C, a, 999, &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_signal_process(C, a, 0, &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_signal_process(C, a, -1, &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_signal_process(C, 0, SIGTERM, &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_signal_process(C, 1, SIGTERM, &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_signal_process(C, -5, SIGTERM, &e_), PROCD_E_BAD_ARGUMENT);
        EXPECT(procd_signal_process(C, gone, SIGTERM, &e_), PROCD_E_PROCESS_NOT_FOUND);
        EXPECT(procd_signal_process(C, D.pid, SIGCONT, &e_), PROCD_E_PERMISSION);
        /* the test's parent (ctest, a shell) is in no family */
        EXPECT(procd_signal_process(C, getppid(), SIGCONT, &e_), PROCD_E_NOT_IN_FAMILY);
        /* only in the root family (this program): not a registered family */
        EXPECT(procd_signal_process(C, getpid(), SIGCONT, &e_), PROCD_E_NOT_IN_FAMILY);
        EXPECT(procd_signal_process(C, a, SIGSTOP, &e_), PROCD_OK);
        for (int i = 0; i < 100 && ts_proc_state(a) != 'T'; i++)
                usleep(10000);
        CU_ASSERT_EQUAL(ts_proc_state(a), 'T');
        EXPECT(procd_signal_process(C, a, SIGCONT, &e_), PROCD_OK);
        EXPECT(procd_signal_process(C, a, SIGTERM, &e_), PROCD_OK);
        CU_ASSERT(ts_wait(a, 2000) >= 0);
        EXPECT(procd_unregister_family(C, a, &e_), PROCD_OK);
}

static void test_suspend_continue_kill_proc(void)
{
        pid_t chain[3];
        int fds[2];
        CU_ASSERT_FATAL(ph_chain_start(2, chain, fds) == 0);
        EXPECT(procd_register_subfamily(C, chain[0], 0, 1, &e_), PROCD_OK);
        CU_ASSERT_FATAL(ph_chain_grow(2, chain, fds) == 0);
        EXPECT(procd_suspend_family(C, chain[0], &e_), PROCD_OK);
        for (int i = 0; i < 3; i++)
                CU_ASSERT_EQUAL(ts_proc_state(chain[i]), 'T');
        EXPECT(procd_continue_family(C, chain[0], &e_), PROCD_OK);
        for (int i = 0; i < 3; i++)
                CU_ASSERT_NOT_EQUAL(ts_proc_state(chain[i]), 'T');
        EXPECT(procd_suspend_family(C, 0, &e_), PROCD_E_ROOT_FAMILY);
        EXPECT(procd_continue_family(C, getpid(), &e_), PROCD_E_ROOT_FAMILY);
        EXPECT(procd_kill_family(C, 0, &e_), PROCD_E_ROOT_FAMILY);
        EXPECT(procd_kill_family(C, 999999, &e_), PROCD_E_FAMILY_NOT_FOUND);
        EXPECT(procd_kill_family(C, chain[0], &e_), PROCD_OK);
        CU_ASSERT(ts_wait(chain[0], 2000) >= 0);
        CU_ASSERT(ph_wait_gone(chain[1], 2000));
        CU_ASSERT(ph_wait_gone(chain[2], 2000));
        EXPECT(procd_unregister_family(C, chain[0], &e_), PROCD_OK);
}

/* Subfamilies of a chain p0 -> p1 -> p2 -> p3 -> p4: A = p0 registered before the chain
 * grew, B = p1 and C = p3 once it exists.  Each takes its root alone (what it had forked
 * stays in the family that held it); C's parent is the family that holds p3 (condor_procd's
 * register_subfamily): A, since B left p2 and so p3 to A.  Unregistering B folds its
 * members into A; A's usage covers its subfamilies (condor_procd's sum), each process once,
 * before and after the fold; KillFamily(A) takes the subfamilies along.  (A subfamily
 * nested in a subfamily, and its fold: test_family_cgroup's "nested families".) */
static void test_nested_and_fold(void)
{
        pid_t p[5];
        int fds[2];
        CU_ASSERT_FATAL(ph_chain_start(4, p, fds) == 0);
        EXPECT(procd_register_subfamily(C, p[0], 0, 1, &e_), PROCD_OK);
        CU_ASSERT_FATAL(ph_chain_grow(4, p, fds) == 0);
        EXPECT(procd_register_subfamily(C, p[1], 0, 1, &e_), PROCD_OK);
        EXPECT(procd_register_subfamily(C, p[3], 0, 1, &e_), PROCD_OK);
        procd_family_info fi;
        CU_ASSERT_FATAL(dump_one(p[1], &fi));
        CU_ASSERT_EQUAL(fi.parent_root_pid, p[0]);
        CU_ASSERT_FATAL(dump_one(p[3], &fi));
        CU_ASSERT_EQUAL(fi.parent_root_pid, p[0]);
        EXPECT(procd_snapshot(C, &e_), PROCD_OK);
        /* B took its root alone: p[2] stayed in A; C holds p[3] alone */
        CU_ASSERT_FALSE(family_has_member(p[1], p[2]));
        CU_ASSERT(family_has_member(p[0], p[2]));
        CU_ASSERT(family_has_member(p[1], p[1]));
        CU_ASSERT(family_has_member(p[3], p[3]));
        CU_ASSERT_FALSE(family_has_member(p[3], p[4]));
        CU_ASSERT(family_has_member(p[0], p[4])); /* C left it to the family that held p3: A */
        procd_usage u;
        EXPECT(procd_get_usage(C, p[0], &u, &e_), PROCD_OK);
        CU_ASSERT_EQUAL(u.num_procs.value, 5); /* A's p0, p2, p4 + B's p1 + C's p3 */
        EXPECT(procd_unregister_family(C, p[1], &e_), PROCD_OK);
        CU_ASSERT_FATAL(dump_one(p[3], &fi));
        CU_ASSERT_EQUAL(fi.parent_root_pid, p[0]);
        EXPECT(procd_snapshot(C, &e_), PROCD_OK);
        CU_ASSERT(family_has_member(p[0], p[1]));
        CU_ASSERT(family_has_member(p[0], p[2]));
        CU_ASSERT(family_has_member(p[0], p[4]));
        CU_ASSERT_FALSE(family_has_member(p[0], p[3]));
        EXPECT(procd_get_usage(C, p[0], &u, &e_), PROCD_OK);
        CU_ASSERT_EQUAL(u.num_procs.value, 5); /* A's p0-p2, p4 + C's p3 */
        EXPECT(procd_kill_family(C, p[0], &e_), PROCD_OK);
        CU_ASSERT(ts_wait(p[0], 2000) >= 0);
        for (int i = 1; i <= 4; i++)
                CU_ASSERT(ph_wait_gone(p[i], 2000));
        EXPECT(procd_unregister_family(C, p[0], &e_), PROCD_OK);
        EXPECT(procd_unregister_family(C, p[3], &e_), PROCD_OK);
}

static void test_watcher_death(void)
{
        pid_t a = ts_sleeper(), w = ts_sleeper();
        size_t before = family_count();
        EXPECT(procd_register_subfamily(C, a, w, 60, &e_), PROCD_OK);
        CU_ASSERT_EQUAL(family_count(), before + 1);
        ts_kill_reap(w);
        bool gone = false;
        for (int i = 0; i < 200 && !gone; i++) {
                procd_family_info fi;
                gone = !dump_one(a, &fi);
                if (!gone)
                        usleep(10000);
        }
        CU_ASSERT(gone);
        CU_ASSERT_EQUAL(family_count(), before);
        CU_ASSERT(ts_alive(a)); /* the family is forgotten, not killed */
        ts_kill_reap(a);
}

/* Permissions: a client forked and setuid to nobody. */
typedef struct perm_args {
        pid_t root_owned, nobody_owned;
} perm_args;

static int as_nobody(void *arg)
{
        perm_args *pa = arg;
        if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
                return 100;
        procd_client *c = NULL;
        if (procd_connect(D.socket, &c, NULL) != PROCD_OK)
                return 101;
        int step = 0;
        procd_usage u;
        procd_family_info *fi = NULL;
        size_t n = 0;
        gid_t g;
#define STEP(call, want)                 \
        do {                             \
                step++;                  \
                if ((call) != (want))    \
                        return step;     \
        } while (0)
        STEP(procd_get_usage(c, pa->root_owned, &u, NULL), PROCD_OK);
        STEP(procd_get_usage(c, 0, &u, NULL), PROCD_OK);
        STEP(procd_dump(c, 0, &fi, &n, NULL), PROCD_OK);
        procd_family_info_free(fi, n);
        STEP(procd_register_subfamily(c, pa->nobody_owned, 0, 60, NULL), PROCD_E_PERMISSION);
        STEP(procd_track_via_cgroup(c, pa->root_owned, "/x", NULL), PROCD_E_PERMISSION);
        STEP(procd_track_via_allocated_group(c, pa->root_owned, &g, NULL), PROCD_E_PERMISSION);
        STEP(procd_signal_process(c, pa->root_owned, SIGCONT, NULL), PROCD_E_PERMISSION);
        STEP(procd_suspend_family(c, pa->root_owned, NULL), PROCD_E_PERMISSION);
        STEP(procd_continue_family(c, pa->root_owned, NULL), PROCD_E_PERMISSION);
        STEP(procd_kill_family(c, pa->root_owned, NULL), PROCD_E_PERMISSION);
        STEP(procd_unregister_family(c, pa->root_owned, NULL), PROCD_E_PERMISSION);
        STEP(procd_snapshot(c, NULL), PROCD_E_PERMISSION);
        STEP(procd_quit(c, NULL), PROCD_E_PERMISSION);
        /* its own family: allowed */
        STEP(procd_signal_process(c, pa->nobody_owned, SIGCONT, NULL), PROCD_OK);
        STEP(procd_suspend_family(c, pa->nobody_owned, NULL), PROCD_OK);
        STEP(procd_continue_family(c, pa->nobody_owned, NULL), PROCD_OK);
        STEP(procd_kill_family(c, pa->nobody_owned, NULL), PROCD_OK);
        STEP(procd_unregister_family(c, pa->nobody_owned, NULL), PROCD_OK);
#undef STEP
        procd_disconnect(c);
        return 0;
}

static int nobody_sleeper(void *arg)
{
        (void) arg;
        if (setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
                return 1;
        for (;;)
                pause();
}

static void test_permissions(void)
{
        if (!ts_need_root("permissions"))
                return;
        perm_args pa = { .root_owned = ts_sleeper(), .nobody_owned = ts_fork(nobody_sleeper, NULL) };
        usleep(50000);
        EXPECT(procd_register_subfamily(C, pa.root_owned, 0, 60, &e_), PROCD_OK);
        EXPECT(procd_register_subfamily(C, pa.nobody_owned, 0, 60, &e_), PROCD_OK);
        pid_t cl = ts_fork(as_nobody, &pa);
        int st = ts_wait(cl, 20000);
        CU_ASSERT(st >= 0 && WIFEXITED(st));
        if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) != 0)
                fprintf(stderr, "nobody client failed at step %d\n", WEXITSTATUS(st));
        CU_ASSERT_EQUAL(WEXITSTATUS(st), 0);
        CU_ASSERT(ts_wait(pa.nobody_owned, 2000) >= 0);
        EXPECT(procd_unregister_family(C, pa.root_owned, &e_), PROCD_OK);
        ts_kill_reap(pa.root_owned);
        if (ts_alive(pa.nobody_owned))
                ts_kill_reap(pa.nobody_owned);
}

static void test_thousand_families(void)
{
        /* PROCD_TEST_FAMILIES: 1,000 on the host; the guest lanes make fewer (each
         * registration reads /proc of every process, ~50x dearer under emulation) */
        enum { N_MAX = 1000 };
        static pid_t kids[N_MAX];
        const int N = (int) ts_scale("PROCD_TEST_FAMILIES", N_MAX, 10, N_MAX, 1);
        size_t before = family_count();
        int made = 0;
        for (int i = 0; i < N; i++) {
                kids[i] = ts_sleeper();
                if (kids[i] <= 1)
                        break;
                made++;
        }
        CU_ASSERT_EQUAL_FATAL(made, N);
        int ok = 0;
        for (int i = 0; i < N; i++)
                ok += procd_register_subfamily(C, kids[i], 0, 60, NULL) == PROCD_OK;
        CU_ASSERT_EQUAL(ok, N);
        CU_ASSERT_EQUAL(family_count(), before + N);
        procd_usage u;
        EXPECT(procd_get_usage(C, kids[N / 2], &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 1);
        EXPECT(procd_get_usage(C, 0, &u, &e_), PROCD_OK);
        int un = 0;
        for (int i = 0; i < N; i++)
                un += procd_unregister_family(C, kids[i], NULL) == PROCD_OK;
        CU_ASSERT_EQUAL(un, N);
        for (int i = 0; i < N; i++)
                kill(kids[i], SIGKILL);
        for (int i = 0; i < N; i++)
                waitpid(kids[i], NULL, 0);
        CU_ASSERT_EQUAL(family_count(), before);
}

static void test_second_daemon_refused(void)
{
        /* a live socket is not taken over */
        char exe[512];
        snprintf(exe, sizeof exe, "%s/procd/procd", ts_build_dir());
        pid_t pid = fork();
        if (pid == 0) {
                int nul = open("/dev/null", O_WRONLY);
                dup2(nul, 2);
                execl(exe, exe, "--foreground", "--socket", D.socket, (char *) NULL);
                _exit(127);
        }
        int st = ts_wait(pid, 5000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1);
        if (st == -ETIMEDOUT)
                ts_kill_reap(pid);
        procd_usage u;
        EXPECT(procd_get_usage(C, 0, &u, &e_), PROCD_OK);
}

static void test_sigterm_shutdown(void)
{
        ph_daemon d2;
        CU_ASSERT_FATAL(ph_start(&d2, NULL, NULL, 10000) == 0);
        CU_ASSERT_EQUAL(access(d2.socket, F_OK), 0);
        kill(d2.pid, SIGTERM);
        int st = ts_wait(d2.pid, 5000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CU_ASSERT_NOT_EQUAL(access(d2.socket, F_OK), 0); /* socket removed */
        rmdir(d2.dir);
}

/* procd under systemd: its parent is PID 1, which it never tracks.  Usage of pid 0 is then
 * the sum of every family: zero (known) with none, then what the families hold. */
static void test_root_family_pid1(void)
{
        static const char *const extra[] = { "--root-pid", "1", NULL };
        ph_daemon d2;
        CU_ASSERT_FATAL(ph_start(&d2, extra, NULL, 10000) == 0);
        procd_client *c2 = ph_connect(&d2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
        procd_usage u;
        EXPECT(procd_get_usage(c2, 0, &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 0);
        CU_ASSERT(u.cpu_usec.available && u.cpu_usec.value == 0);
        CU_ASSERT_FALSE(u.memory_peak_bytes.available); /* a peak is no sum */
        EXPECT(procd_get_usage(c2, 1, &u, &e_), PROCD_E_BAD_ROOT_PID);

        pid_t chain[3], sp = ph_spinner();
        int fds[2];
        CU_ASSERT_FATAL(ph_chain_start(2, chain, fds) == 0);
        EXPECT(procd_register_subfamily(c2, chain[0], 0, 1, &e_), PROCD_OK);
        CU_ASSERT_FATAL(ph_chain_grow(2, chain, fds) == 0);
        EXPECT(procd_register_subfamily(c2, sp, 0, 1, &e_), PROCD_OK);
        procd_usage a, b;
        bool burned = false;
        for (int i = 0; i < 600 && !burned; i++) { /* the spinner's CPU, polled up to 60 s */
                usleep(100000);
                EXPECT(procd_snapshot(c2, &e_), PROCD_OK);
                EXPECT(procd_get_usage(c2, sp, &b, &e_), PROCD_OK);
                burned = b.cpu_usec.available && b.cpu_usec.value >= 100000;
        }
        CU_ASSERT(burned);
        EXPECT(procd_get_usage(c2, chain[0], &a, &e_), PROCD_OK);
        EXPECT(procd_get_usage(c2, 0, &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 4); /* chain of 3 + the spinner */
        CU_ASSERT(a.num_procs.value == 3 && b.num_procs.value == 1);
        CU_ASSERT(u.cpu_usec.available && u.cpu_usec.value >= a.cpu_usec.value + b.cpu_usec.value);

        EXPECT(procd_kill_family(c2, sp, &e_), PROCD_OK);
        CU_ASSERT(ts_wait(sp, 5000) >= 0);
        EXPECT(procd_kill_family(c2, chain[0], &e_), PROCD_OK);
        CU_ASSERT(ts_wait(chain[0], 5000) >= 0);
        for (int i = 1; i < 3; i++)
                CU_ASSERT(ph_wait_gone(chain[i], 5000));
        procd_disconnect(c2);
        int st = ph_stop(&d2, 10000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* READY=1 arrives on $NOTIFY_SOCKET (a plain datagram), as systemd's Type=notify wants. */
static void test_notify_socket(void)
{
        char path[108];
        snprintf(path, sizeof path, "%s/notify.sock", D.dir);
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        CU_ASSERT_FATAL(fd >= 0 && bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0);
        setenv("NOTIFY_SOCKET", path, 1);
        ph_daemon d2;
        int r = ph_start(&d2, NULL, NULL, 10000);
        unsetenv("NOTIFY_SOCKET");
        CU_ASSERT_EQUAL_FATAL(r, 0);
        char buf[64] = "";
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll(&pfd, 1, 5000) > 0) {
                ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
                buf[n > 0 ? n : 0] = '\0';
        }
        CU_ASSERT_STRING_EQUAL(buf, "READY=1");
        close(fd);
        unlink(path);
        int st = ph_stop(&d2, 5000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Without --foreground procd detaches: the launcher exits 0 once the daemon listens; the
 * root family is still the launcher's parent (this program). */
static void test_detach(void)
{
        char exe[512], dir[] = "/tmp/procd-test.XXXXXX", sock[128];
        snprintf(exe, sizeof exe, "%s/procd/procd", ts_build_dir());
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
        snprintf(sock, sizeof sock, "%s/procd.sock", dir);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                int nul = open("/dev/null", O_WRONLY);
                dup2(nul, 2);
                execl(exe, exe, "--socket", sock, "--log", "syslog", (char *) NULL);
                _exit(127);
        }
        int st = ts_wait(pid, 10000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        procd_client *c = NULL;
        CU_ASSERT_EQUAL_FATAL(procd_connect(sock, &c, NULL), PROCD_OK);
        procd_family_info *all = NULL;
        size_t n = 0;
        CU_ASSERT_EQUAL(procd_dump(c, 0, &all, &n, NULL), PROCD_OK);
        CU_ASSERT(n >= 1 && all[0].root_pid == getpid());
        procd_family_info_free(all, n);
        CU_ASSERT_EQUAL(procd_quit(c, NULL), PROCD_OK);
        procd_disconnect(c);
        for (int i = 0; i < 200 && access(sock, F_OK) == 0; i++)
                usleep(10000);
        CU_ASSERT_NOT_EQUAL(access(sock, F_OK), 0);
        rmdir(dir);
}

/* A member procd cannot kill (frozen in a v1 freezer cgroup procd was not handed): the
 * reply is Unkillable naming it, after --kill-timeout; meanwhile the daemon serves other
 * clients (KillFamily runs in rounds from the main loop). */
typedef struct kill_args {
        const char *socket;
        pid_t pid;
} kill_args;

static int kill_client(void *arg)
{
        kill_args *ka = arg;
        procd_client *c = NULL;
        procd_error e = { 0 };
        if (procd_connect(ka->socket, &c, NULL) != PROCD_OK)
                return 10;
        procd_status s = procd_kill_family(c, ka->pid, &e);
        char want[32];
        snprintf(want, sizeof want, "%d", (int) ka->pid);
        int rc = s == PROCD_E_UNKILLABLE && strstr(e.msg, want) ? 0 : 11;
        if (rc)
                fprintf(stderr, "kill: status %d: %s\n", s, e.msg);
        procd_disconnect(c);
        return rc;
}

static void test_unkillable(void)
{
        ph_frozen_victim fv;
        if (!ph_frozen_victim_start(&fv, "pd-frozen", "unkillable"))
                return;
        pid_t victim = fv.pid;

        /* The kill bound (8 s) is long against the steps below, so that the usage call is
         * answered while the kill is still pending (no timed assertion: the order is checked). */
        static const char *const extra[] = { "--kill-timeout", "8", NULL };
        ph_daemon d2;
        CU_ASSERT_FATAL(ph_start(&d2, extra, NULL, 10000) == 0);
        procd_client *c = ph_connect(&d2);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, victim, 0, 60, NULL), PROCD_OK);
        kill_args ka = { d2.socket, victim };
        pid_t killer = ts_fork(kill_client, &ka);
        usleep(300000);
        /* the kill is in progress: other calls are answered meanwhile */
        procd_usage u;
        CU_ASSERT_EQUAL(procd_get_usage(c, 0, &u, NULL), PROCD_OK);
        CU_ASSERT(ts_alive(killer)); /* answered before the pending kill was */
        int st = ts_wait(killer, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (st == -ETIMEDOUT)
                ts_kill_reap(killer);
        CU_ASSERT(ts_alive(victim) || ts_proc_state(victim) == 'D');
        CU_ASSERT_EQUAL(procd_unregister_family(c, victim, NULL), PROCD_OK);
        procd_disconnect(c);
        ph_stop(&d2, 5000);
        ph_frozen_victim_end(&fv);
}


/* SuspendFamily runs in rounds from the main loop: a member procd cannot stop (frozen in
 * a v1 freezer cgroup procd was not handed) keeps the call open up to the freeze bound
 * (2 s) while other clients are answered at once; a ContinueFamily meanwhile answers the
 * pending suspend (it would otherwise stop the family again after the continue). */
static int suspend_client(void *arg)
{
        kill_args *ka = arg;
        procd_client *c = NULL;
        procd_error e = { 0 };
        if (procd_connect(ka->socket, &c, NULL) != PROCD_OK)
                return 10;
        procd_status s = procd_suspend_family(c, ka->pid, &e);
        if (s != PROCD_OK)
                fprintf(stderr, "suspend: status %d: %s\n", s, e.msg);
        procd_disconnect(c);
        return s == PROCD_OK ? 0 : 11;
}

static void test_suspend_does_not_block(void)
{
        ph_frozen_victim fv;
        if (!ph_frozen_victim_start(&fv, "pd-frozen-susp", "suspend rounds"))
                return;
        pid_t victim = fv.pid;

        EXPECT(procd_register_subfamily(C, victim, 0, 60, &e_), PROCD_OK);
        kill_args ka = { D.socket, victim };
        uint64_t t0 = tr_now_usec();
        pid_t sus = ts_fork(suspend_client, &ka);
        usleep(300000);
        CU_ASSERT(ts_alive(sus)); /* still waiting for the member to stop */
        procd_usage u;
        EXPECT(procd_get_usage(C, 0, &u, &e_), PROCD_OK);
        CU_ASSERT(ts_alive(sus)); /* the usage call was answered while the suspend is pending */
        int st = ts_wait(sus, 10000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (st == -ETIMEDOUT)
                ts_kill_reap(sus);
        /* a lower bound only (load can only lengthen it): answered at the freeze bound */
        CU_ASSERT(tr_now_usec() - t0 >= 1500000);
        EXPECT(procd_unregister_family(C, victim, &e_), PROCD_OK);

        /* A continue while a suspend is pending answers the suspend.  This daemon's freeze
         * bound (600 s) is far beyond the wait below, so only the continue can answer it. */
        static const char *const extra[] = { "--freeze-timeout", "600", NULL };
        ph_daemon d2;
        CU_ASSERT_FATAL(ph_start(&d2, extra, NULL, 10000) == 0);
        procd_client *c = ph_connect(&d2);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, victim, 0, 60, NULL), PROCD_OK);
        ka.socket = d2.socket;
        sus = ts_fork(suspend_client, &ka);
        usleep(300000);
        CU_ASSERT(ts_alive(sus));
        CU_ASSERT_EQUAL(procd_continue_family(c, victim, NULL), PROCD_OK);
        st = ts_wait(sus, 60000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (st == -ETIMEDOUT)
                ts_kill_reap(sus);
        CU_ASSERT_EQUAL(procd_unregister_family(c, victim, NULL), PROCD_OK);
        procd_disconnect(c);
        ph_stop(&d2, 5000);
        ph_frozen_victim_end(&fv);
}

static CU_TestInfo tests[] = {
        { "no daemon", test_no_daemon },
        { "socket mode and group", test_socket_mode },
        { "register errors", test_register_errors },
        { "usage and lookup errors", test_usage_and_lookup_errors },
        { "/proc family", test_proc_family },
        { "cgroup and /proc families side by side", test_cgroup_and_proc_side_by_side },
        { "tracking methods and errors", test_track_errors },
        { "signal", test_signal },
        { "suspend continue kill (/proc)", test_suspend_continue_kill_proc },
        { "nested subfamilies and unregister folding", test_nested_and_fold },
        { "watcher death unregisters", test_watcher_death },
        { "permissions (nobody)", test_permissions },
        { "1,000 families", test_thousand_families },
        { "second daemon refused", test_second_daemon_refused },
        { "SIGTERM shutdown", test_sigterm_shutdown },
        { "root family PID 1 (systemd): usage 0 sums every family", test_root_family_pid1 },
        { "READY=1 on NOTIFY_SOCKET", test_notify_socket },
        { "detach without --foreground, syslog", test_detach },
        { "unkillable member: Unkillable reply, daemon responsive", test_unkillable },
        { "suspend in rounds: daemon responsive, continue answers it", test_suspend_does_not_block },
        CU_TEST_INFO_NULL,
};


int main(void)
{
        return ph_main("procd end to end", suite_init, suite_clean, tests);
}
