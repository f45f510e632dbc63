/* test_procd_dbus.c - the D-Bus transport with raw libdbus: wrong signatures, huge strings,
 * bad pids and signals, unknown methods/interfaces/objects, introspection (also through
 * stock gdbus), a client that disconnects mid-call, a client that floods, too many
 * connections.  After each, the daemon answers other clients. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testsupport.h"
#include "trackers/util.h"

static ph_daemon D;

static int suite_init(void) { return ph_start(&D, NULL, NULL, 10000) < 0; }

static int suite_clean(void)
{
        int st = ph_stop(&D, 10000);
        return !(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static DBusMessage *msg(const char *method)
{
        return dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, method);
}

/* The daemon still answers a fresh client. */
static bool served_once(void)
{
        procd_client *c = NULL;
        if (procd_connect(D.socket, &c, NULL) != PROCD_OK)
                return false;
        procd_usage u;
        bool ok = procd_get_usage(c, 0, &u, NULL) == PROCD_OK;
        procd_disconnect(c);
        return ok;
}

/* The daemon lives on and answers a new client: once it has seen the connections a test
 * closed (all slots may be held until then; under emulation that takes a while). */
static bool daemon_alive(void)
{
        for (int waited_ms = 0; waited_ms < 30000 && ts_alive(D.pid); waited_ms += 100) {
                if (served_once())
                        return true;
                usleep(100000);
        }
        return false;
}

static const char *call_i(DBusConnection *c, const char *method, dbus_int32_t v)
{
        DBusMessage *m = msg(method);
        dbus_message_append_args(m, DBUS_TYPE_INT32, &v, DBUS_TYPE_INVALID);
        const char *r = ph_raw_call(c, m, 10000);
        dbus_message_unref(m);
        return r;
}

#define ERR_IS(got, want)                                                              \
        do {                                                                           \
                const char *g_ = (got);                                                \
                if (!g_ || strcmp(g_, want) != 0)                                      \
                        fprintf(stderr, "line %d: got %s want %s\n", __LINE__, g_ ? g_ : "(ok)", want); \
                CU_ASSERT(g_ && strcmp(g_, want) == 0);                                \
        } while (0)

static void test_bad_calls(void)
{
        DBusConnection *c = ph_raw_connect(&D);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        /* wrong signature */
        DBusMessage *m = msg("RegisterSubfamily");
        const char *s = "x";
        dbus_message_append_args(m, DBUS_TYPE_STRING, &s, DBUS_TYPE_INVALID);
        ERR_IS(ph_raw_call(c, m, 5000), DBUS_ERROR_INVALID_ARGS);
        dbus_message_unref(m);
        m = msg("GetUsage"); /* no argument */
        ERR_IS(ph_raw_call(c, m, 5000), DBUS_ERROR_INVALID_ARGS);
        dbus_message_unref(m);
        m = msg("GetUsage"); /* uint64 instead of int32 */
        dbus_uint64_t big = 1ull << 40;
        dbus_message_append_args(m, DBUS_TYPE_UINT64, &big, DBUS_TYPE_INVALID);
        ERR_IS(ph_raw_call(c, m, 5000), DBUS_ERROR_INVALID_ARGS);
        dbus_message_unref(m);
        /* a file descriptor where none is taken */
        m = msg("GetUsage");
        dbus_int32_t zero_pid = 0;
        int fdarg = 0;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &zero_pid, DBUS_TYPE_UNIX_FD, &fdarg, DBUS_TYPE_INVALID);
        ERR_IS(ph_raw_call(c, m, 5000), DBUS_ERROR_INVALID_ARGS);
        dbus_message_unref(m);
        /* bad pids */
        ERR_IS(call_i(c, "GetUsage", -5), "org.procd.Error.BadRootPid");
        ERR_IS(call_i(c, "GetUsage", 1), "org.procd.Error.BadRootPid");
        CU_ASSERT_PTR_NULL(call_i(c, "GetUsage", 0));
        ERR_IS(call_i(c, "KillFamily", 0), "org.procd.Error.RootFamily");
        ERR_IS(call_i(c, "KillFamily", 1), "org.procd.Error.BadRootPid");
        ERR_IS(call_i(c, "KillFamily", -5), "org.procd.Error.BadRootPid");
        ERR_IS(call_i(c, "SuspendFamily", 1), "org.procd.Error.BadRootPid");
        ERR_IS(call_i(c, "UnregisterFamily", 0), "org.procd.Error.RootFamily");
        m = msg("RegisterSubfamily");
        dbus_int32_t r0 = 0, w = 0;
        dbus_uint32_t iv = 60;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &r0, DBUS_TYPE_INT32, &w, DBUS_TYPE_UINT32, &iv, DBUS_TYPE_INVALID);
        ERR_IS(ph_raw_call(c, m, 5000), "org.procd.Error.BadRootPid");
        dbus_message_unref(m);
        /* signal out of range, pid 0/1/-5 */
        dbus_int32_t pids[] = { getpid(), 0, 1, -5 }, sigs[] = { 999, 15, 15, 15 };
        for (int i = 0; i < 4; i++) {
                m = msg("SignalProcess");
                dbus_message_append_args(m, DBUS_TYPE_INT32, &pids[i], DBUS_TYPE_INT32, &sigs[i], DBUS_TYPE_INVALID);
                ERR_IS(ph_raw_call(c, m, 5000), "org.procd.Error.BadArgument");
                dbus_message_unref(m);
        }
        /* huge string (200 KB): refused with a typed error */
        size_t n = 200 * 1024;
        char *huge = malloc(n + 1);
        memset(huge, 'a', n);
        huge[0] = '/';
        huge[n] = '\0';
        pid_t a = ts_sleeper();
        procd_client *pc = NULL;
        CU_ASSERT_EQUAL_FATAL(procd_connect(D.socket, &pc, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(pc, a, 0, 60, NULL), PROCD_OK);
        m = msg("TrackFamilyViaCgroup");
        dbus_int32_t ai = a;
        const char *hp = huge;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &ai, DBUS_TYPE_STRING, &hp, DBUS_TYPE_INVALID);
        ERR_IS(ph_raw_call(c, m, 5000), "org.procd.Error.BadCgroup");
        dbus_message_unref(m);
        m = msg("TrackFamilyViaEnvironment");
        huge[10] = '=';
        dbus_message_append_args(m, DBUS_TYPE_INT32, &ai, DBUS_TYPE_STRING, &hp, DBUS_TYPE_INVALID);
        ERR_IS(ph_raw_call(c, m, 5000), "org.procd.Error.BadArgument");
        dbus_message_unref(m);
        free(huge);
        /* unknown method, unknown interface, unknown object */
        m = msg("NoSuchMethod");
        ERR_IS(ph_raw_call(c, m, 5000), DBUS_ERROR_UNKNOWN_METHOD);
        dbus_message_unref(m);
        m = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, "org.example.Nope", "GetUsage");
        ERR_IS(ph_raw_call(c, m, 5000), DBUS_ERROR_UNKNOWN_INTERFACE);
        dbus_message_unref(m);
        m = dbus_message_new_method_call(NULL, "/org/nowhere", PROCD_DBUS_INTERFACE, "GetUsage");
        dbus_int32_t zero = 0;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &zero, DBUS_TYPE_INVALID);
        CU_ASSERT_PTR_NOT_NULL(ph_raw_call(c, m, 5000));
        dbus_message_unref(m);
        CU_ASSERT_EQUAL(procd_unregister_family(pc, a, NULL), PROCD_OK);
        procd_disconnect(pc);
        ts_kill_reap(a);
        dbus_connection_close(c);
        dbus_connection_unref(c);
        CU_ASSERT(daemon_alive());
}

/* Larger than the per-message limit: the daemon drops that peer and lives on. */
static void test_oversized_message(void)
{
        DBusConnection *c = ph_raw_connect(&D);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        size_t n = 3 * 1024 * 1024;
        char *huge = malloc(n + 1);
        memset(huge, 'b', n);
        huge[n] = '\0';
        DBusMessage *m = msg("TrackFamilyViaLogin");
        dbus_int32_t ai = 12345;
        const char *hp = huge;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &ai, DBUS_TYPE_STRING, &hp, DBUS_TYPE_INVALID);
        CU_ASSERT_PTR_NOT_NULL(ph_raw_call(c, m, 5000)); /* an error or a disconnect */
        dbus_message_unref(m);
        free(huge);
        dbus_connection_close(c);
        dbus_connection_unref(c);
        CU_ASSERT(daemon_alive());
}

static void test_introspection(void)
{
        DBusConnection *c = ph_raw_connect(&D);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        const char *paths[] = { "/", "/org", "/org/procd", PROCD_DBUS_PATH };
        const char *want[] = { "<node name=\"org\"", "<node name=\"procd\"", "<node name=\"ProcFamily\"",
                               "org.procd.ProcFamily1" };
        for (int i = 0; i < 4; i++) {
                DBusMessage *m = dbus_message_new_method_call(NULL, paths[i], DBUS_INTERFACE_INTROSPECTABLE, "Introspect");
                DBusMessage *r = dbus_connection_send_with_reply_and_block(c, m, 5000, NULL);
                dbus_message_unref(m);
                CU_ASSERT_PTR_NOT_NULL(r);
                const char *xml = NULL;
                if (r && dbus_message_get_args(r, NULL, DBUS_TYPE_STRING, &xml, DBUS_TYPE_INVALID)) {
                        if (!strstr(xml, want[i]))
                                fprintf(stderr, "introspect %s: %s\n", paths[i], xml);
                        CU_ASSERT_PTR_NOT_NULL(strstr(xml, want[i]));
                }
                if (r)
                        dbus_message_unref(r);
        }
        dbus_connection_close(c);
        dbus_connection_unref(c);
        /* stock gdbus (when installed) */
        if (access("/usr/bin/gdbus", X_OK) != 0) {
                ts_skip("gdbus introspect", "/usr/bin/gdbus missing");
                return;
        }
        char cmd[512];
        snprintf(cmd, sizeof cmd,
                 "timeout 10 gdbus introspect --address unix:path=%s --dest org.procd --object-path / --recurse "
                 "| grep -q 'interface org.procd.ProcFamily1'",
                 D.socket);
        CU_ASSERT_EQUAL(system(cmd), 0);
        snprintf(cmd, sizeof cmd,
                 "timeout 10 gdbus call --address unix:path=%s --dest org.procd --object-path /org/procd/ProcFamily "
                 "--method org.procd.ProcFamily1.GetUsage 0 | grep -q num_procs",
                 D.socket);
        CU_ASSERT_EQUAL(system(cmd), 0);
}

/* A client sends calls and disconnects without reading the replies. */
static void test_disconnect_mid_call(void)
{
        for (int round = 0; round < 20; round++) {
                DBusConnection *c = ph_raw_connect(&D);
                CU_ASSERT_PTR_NOT_NULL_FATAL(c);
                DBusMessage *m = msg(round % 2 ? "Snapshot" : "Dump");
                if (round % 2 == 0) {
                        dbus_int32_t z = 0;
                        dbus_message_append_args(m, DBUS_TYPE_INT32, &z, DBUS_TYPE_INVALID);
                }
                dbus_connection_send(c, m, NULL);
                dbus_connection_flush(c);
                dbus_message_unref(m);
                dbus_connection_close(c);
                dbus_connection_unref(c);
        }
        CU_ASSERT(daemon_alive());
}

/* A flooding client (sends 20,000 calls before reading any reply) is dropped once its
 * unread replies pass PD_DBUS_MAX_OUTGOING_BYTES, and does not stop another client. */
static int flood_fn(void *arg)
{
        int wfd = *(int *) arg;
        DBusConnection *c = ph_raw_connect(&D);
        if (!c)
                return 10;
        /* write the calls straight to the socket and read nothing meanwhile */
        int fd = -1;
        if (!dbus_connection_get_unix_fd(c, &fd))
                return 11;
        int fl = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        enum { N = 20000 };
        int sent = 0;
        for (int i = 0; i < N; i++) {
                DBusMessage *m = msg("GetUsage");
                dbus_int32_t z = 0;
                dbus_message_append_args(m, DBUS_TYPE_INT32, &z, DBUS_TYPE_INVALID);
                dbus_message_set_serial(m, (dbus_uint32_t) i + 1000);
                char *buf = NULL;
                int len = 0;
                bool ok = dbus_message_marshal(m, &buf, &len) && write(fd, buf, (size_t) len) == len;
                dbus_free(buf);
                dbus_message_unref(m);
                if (!ok)
                        break;
                sent++;
                if (i == 100 && write(wfd, "x", 1) != 1)
                        return 12;
        }
        fcntl(fd, F_SETFL, fl);
        sleep(3); /* the daemon answers all of them while nobody reads */
        int replies = 0, limited = 0;
        uint64_t deadline = tr_now_usec() + 30000000u;
        while (replies < sent && tr_now_usec() < deadline && dbus_connection_get_is_connected(c)) {
                dbus_connection_read_write(c, 200);
                DBusMessage *m;
                while ((m = dbus_connection_pop_message(c))) {
                        if (dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_METHOD_RETURN)
                                replies++;
                        else if (dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_ERROR) {
                                replies++;
                                limited += dbus_message_is_error(m, DBUS_ERROR_LIMITS_EXCEEDED);
                        }
                        dbus_message_unref(m);
                }
        }
        bool dropped = !dbus_connection_get_is_connected(c);
        printf("flooder: %d calls sent, %d replies, %d LimitsExceeded, %s\n", sent, replies, limited,
               dropped ? "dropped by procd" : "still connected");
        return dropped ? 0 : 13;
}

static void test_flood(void)
{
        int p[2];
        CU_ASSERT_FATAL(pipe(p) == 0);
        pid_t flooder = ts_fork(flood_fn, &p[1]);
        close(p[1]);
        char ch;
        CU_ASSERT_EQUAL(read(p[0], &ch, 1), 1);
        close(p[0]);
        /* while the flood runs, another client is served */
        procd_client *pc = NULL;
        CU_ASSERT_EQUAL_FATAL(procd_connect(D.socket, &pc, NULL), PROCD_OK);
        int served = 0;
        for (int i = 0; i < 50; i++) {
                procd_usage u;
                served += procd_get_usage(pc, 0, &u, NULL) == PROCD_OK;
        }
        CU_ASSERT_EQUAL(served, 50);
        procd_disconnect(pc);
        int st = ts_wait(flooder, 60000);
        if (st == -ETIMEDOUT)
                ts_kill_reap(flooder);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CU_ASSERT(daemon_alive());
}

/* More connections than the limit: the extra ones are refused, the daemon lives on. */
static void test_many_connections(void)
{
        enum { N = 300 };
        DBusConnection **cs = calloc(N, sizeof *cs);
        int ok = 0;
        for (int i = 0; i < N; i++) {
                cs[i] = ph_raw_connect(&D);
                if (cs[i] && dbus_connection_get_is_authenticated(cs[i]))
                        ok++;
        }
        CU_ASSERT(ok >= 200);
        for (int i = 0; i < N; i++)
                if (cs[i]) {
                        dbus_connection_close(cs[i]);
                        dbus_connection_unref(cs[i]);
                }
        free(cs);
        CU_ASSERT(daemon_alive());
}

/* A peer that connects and never authenticates loses its slot after 10 s. */
static void test_unauthenticated_dropped(void)
{
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", D.socket);
        CU_ASSERT_FATAL(fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0);
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        char b;
        CU_ASSERT(poll(&pfd, 1, 20000) == 1 && read(fd, &b, 1) == 0);
        close(fd);
        CU_ASSERT(daemon_alive());
}

static CU_TestInfo tests[] = {
        { "bad calls get typed errors", test_bad_calls },
        { "oversized message", test_oversized_message },
        { "introspection", test_introspection },
        { "disconnect mid-call", test_disconnect_mid_call },
        { "flooding client", test_flood },
        { "many connections", test_many_connections },
        { "unauthenticated peer dropped", test_unauthenticated_dropped },
        CU_TEST_INFO_NULL,
};


int main(void)
{
        return ph_main("procd D-Bus transport", suite_init, suite_clean, tests);
}
