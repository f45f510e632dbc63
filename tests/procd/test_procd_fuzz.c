/* test_procd_fuzz.c - malformed D-Bus traffic, kept as a test: per run a few thousand
 * messages in three batches, procd alive and answering after each batch.
 *  1. well-framed calls with random members, interfaces, paths and argument lists (a
 *     method that acts on processes only ever gets a signature other than its own, so it
 *     refuses before acting: the machine is shared);
 *  2. a valid call, marshalled, with random bytes flipped, lengths broken or cut short, each
 *     on a fresh authenticated connection;
 *  3. random bytes and broken lines in the authentication phase.
 * PROCD_FUZZ_SEED=N repeats a run (the seed is printed). */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "testsupport.h"

#define PER_BATCH 1000

static ph_daemon D;
static bool started;
static bool clean_exit = true; /* procd exited 0 at the end (checked after the suite) */
static unsigned seed;

static int setup(void)
{
        const char *s = getenv("PROCD_FUZZ_SEED");
        seed = s ? (unsigned) strtoul(s, NULL, 10) : (unsigned) time(NULL) ^ (unsigned) getpid();
        printf("\n    PROCD_FUZZ_SEED=%u\n", seed);
        srandom(seed);
        started = ph_start(&D, NULL, NULL, 20000) == 0;
        return 0;
}

static int teardown(void)
{
        if (started) {
                int st = ph_stop(&D, 10000);
                clean_exit = st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        }
        return 0;
}

static long rnd(long n) { return random() % n; }

static void random_string(char *buf, size_t size)
{
        size_t len = (size_t) rnd((long) size - 1);
        for (size_t i = 0; i < len; i++)
                buf[i] = (char) (rnd(2) ? 'a' + rnd(26) : 1 + rnd(255));
        buf[len] = '\0';
}

/* Methods that act on processes or on procd, with their own signatures: fuzzed calls to
 * them always carry another signature. */
static const struct {
        const char *name, *signature;
} acting[] = {
        { "RegisterSubfamily", "iiu" },  { "TrackFamilyViaCgroup", "is" },  { "TrackFamilyViaEnvironment", "is" },
        { "TrackFamilyViaLogin", "is" }, { "TrackFamilyViaAllocatedGroup", "i" }, { "TrackFamilyViaAssociatedGroup", "iu" },
        { "SignalProcess", "ii" },       { "SuspendFamily", "i" },         { "ContinueFamily", "i" },
        { "KillFamily", "i" },           { "UnregisterFamily", "i" },      { "Quit", "" },
};
static const char *const harmless[] = { "GetUsage", "Dump", "Snapshot", "Introspect", "Ping", "GetAll", "Get", "Hello" };

static void append_random_arg(DBusMessageIter *it)
{
        dbus_int32_t i32 = (dbus_int32_t) (random() - RAND_MAX / 2);
        dbus_uint64_t u64 = ((dbus_uint64_t) random() << 33) ^ (dbus_uint64_t) random();
        double d = (double) random() / 7.0;
        dbus_bool_t b = (dbus_bool_t) rnd(2);
        char s[64];
        random_string(s, sizeof s);
        if (!dbus_validate_utf8(s, NULL))
                snprintf(s, sizeof s, "x%ld", random());
        const char *sp = s;
        DBusMessageIter sub;
        switch (rnd(8)) {
        case 0: dbus_message_iter_append_basic(it, DBUS_TYPE_INT32, &i32); break;
        case 1: dbus_message_iter_append_basic(it, DBUS_TYPE_UINT32, &i32); break;
        case 2: dbus_message_iter_append_basic(it, DBUS_TYPE_UINT64, &u64); break;
        case 3: dbus_message_iter_append_basic(it, DBUS_TYPE_DOUBLE, &d); break;
        case 4: dbus_message_iter_append_basic(it, DBUS_TYPE_BOOLEAN, &b); break;
        case 5: dbus_message_iter_append_basic(it, DBUS_TYPE_STRING, &sp); break;
        case 6:
                dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "i", &sub);
                for (long k = rnd(50); k > 0; k--)
                        dbus_message_iter_append_basic(&sub, DBUS_TYPE_INT32, &i32);
                dbus_message_iter_close_container(it, &sub);
                break;
        default:
                dbus_message_iter_open_container(it, DBUS_TYPE_VARIANT, "s", &sub);
                dbus_message_iter_append_basic(&sub, DBUS_TYPE_STRING, &sp);
                dbus_message_iter_close_container(it, &sub);
        }
}

static DBusMessage *random_call(void)
{
        static const char *const ifaces[] = { PROCD_DBUS_INTERFACE, "org.freedesktop.DBus.Introspectable",
                                              "org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Properties",
                                              "org.procd.Nope", NULL };
        static const char *const paths[] = { PROCD_DBUS_PATH, "/", "/org/procd", "/org/procd/ProcFamily/x" };
        const char *member;
        const char *forbidden = NULL;
        char bogus[32];
        long kind = rnd(3);
        if (kind == 0) {
                size_t k = (size_t) rnd((long) (sizeof acting / sizeof acting[0]));
                member = acting[k].name;
                forbidden = acting[k].signature;
        } else if (kind == 1) {
                member = harmless[rnd((long) (sizeof harmless / sizeof harmless[0]))];
        } else {
                snprintf(bogus, sizeof bogus, "M%ld", random());
                member = bogus;
        }
        for (;;) {
                DBusMessage *m = dbus_message_new_method_call(NULL, paths[rnd(4)], ifaces[rnd(6)], member);
                if (!m)
                        return NULL;
                DBusMessageIter it;
                dbus_message_iter_init_append(m, &it);
                for (long n = rnd(5); n > 0; n--)
                        append_random_arg(&it);
                /* an acting method never gets its own signature (whatever the interface) */
                if (forbidden && strcmp(dbus_message_get_signature(m), forbidden) == 0) {
                        dbus_message_unref(m);
                        continue;
                }
                if (rnd(2))
                        dbus_message_set_no_reply(m, TRUE);
                return m;
        }
}

static void test_random_calls(void)
{
        CU_ASSERT_FATAL(started);
        DBusConnection *c = ph_raw_connect(&D);
        CU_ASSERT_FATAL(c != NULL);
        int sent = 0, reconnects = 0;
        for (int i = 0; i < PER_BATCH; i++) {
                if (!dbus_connection_get_is_connected(c)) {
                        dbus_connection_unref(c);
                        c = ph_raw_connect(&D);
                        CU_ASSERT_FATAL(c != NULL);
                        reconnects++;
                }
                DBusMessage *m = random_call();
                if (!m)
                        continue;
                if (dbus_message_get_no_reply(m))
                        dbus_connection_send(c, m, NULL);
                else
                        ph_raw_call(c, m, 5000);
                dbus_message_unref(m);
                sent++;
        }
        dbus_connection_flush(c);
        dbus_connection_close(c);
        dbus_connection_unref(c);
        printf("\n    %d random calls (%d reconnects)", sent, reconnects);
        CU_ASSERT(ph_answers(&D));
}

static void drain_and_close(int fd)
{
        /* read what procd answers (an error, or nothing when it drops us) for a moment */
        char buf[4096];
        struct pollfd p = { .fd = fd, .events = POLLIN };
        while (poll(&p, 1, 20) == 1 && read(fd, buf, sizeof buf) > 0)
                ;
        close(fd);
}

static void test_corrupt_wire(void)
{
        CU_ASSERT_FATAL(started);
        DBusMessage *m = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, "GetUsage");
        dbus_int32_t z = 0;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &z, DBUS_TYPE_INVALID);
        dbus_message_set_serial(m, 7);
        char *good = NULL;
        int len = 0;
        CU_ASSERT_FATAL(dbus_message_marshal(m, &good, &len));
        dbus_message_unref(m);
        int sessions = 0;
        for (int i = 0; i < PER_BATCH; i++) {
                char buf[512];
                int n = len < (int) sizeof buf ? len : (int) sizeof buf;
                memcpy(buf, good, (size_t) n);
                switch (rnd(4)) {
                case 0: /* flip bytes */
                        for (long k = 1 + rnd(8); k > 0; k--)
                                buf[rnd(n)] ^= (char) (1 + rnd(255));
                        break;
                case 1: /* a huge body or header length */
                        memset(buf + (rnd(2) ? 4 : 12), 0xff, 4);
                        break;
                case 2: /* cut short */
                        n = 1 + (int) rnd(n - 1);
                        break;
                default: /* random bytes after a valid fixed header */
                        for (int k = 16; k < n; k++)
                                buf[k] = (char) rnd(256);
                }
                int fd = ph_raw_session(&D, true, false);
                if (fd < 0)
                        continue;
                sessions++;
                ssize_t w = send(fd, buf, (size_t) n, MSG_NOSIGNAL);
                (void) w;
                drain_and_close(fd);
        }
        dbus_free(good);
        printf("\n    %d corrupted messages, each on its own connection", sessions);
        CU_ASSERT(sessions > PER_BATCH / 2);
        CU_ASSERT(ph_answers(&D));
}

static void test_broken_auth(void)
{
        CU_ASSERT_FATAL(started);
        static const char *const lines[] = { "AUTH\r\n", "AUTH EXTERNAL zz\r\n", "AUTH DBUS_COOKIE_SHA1 30\r\n",
                                             "BEGIN\r\n", "DATA 41414141\r\n", "NEGOTIATE_UNIX_FD\r\n",
                                             "AUTH EXTERNAL 3130303030\r\n", "ERROR\r\n", "CANCEL\r\n" };
        int done = 0;
        for (int i = 0; i < PER_BATCH; i++) {
                int fd = ph_raw_session(&D, false, false);
                if (fd < 0)
                        continue;
                char buf[600];
                size_t n = 0;
                if (rnd(3) == 0) { /* random bytes */
                        n = (size_t) (1 + rnd((long) sizeof buf - 1));
                        for (size_t k = 0; k < n; k++)
                                buf[k] = (char) rnd(256);
                } else { /* the NUL byte, then broken or out-of-order lines */
                        buf[n++] = rnd(4) ? '\0' : 'x';
                        for (long k = 1 + rnd(4); k > 0; k--) {
                                const char *l = lines[rnd((long) (sizeof lines / sizeof lines[0]))];
                                size_t ll = strlen(l);
                                if (n + ll < sizeof buf) {
                                        memcpy(buf + n, l, ll);
                                        n += ll;
                                }
                        }
                }
                ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
                (void) w;
                drain_and_close(fd);
                done++;
        }
        printf("\n    %d broken authentications", done);
        CU_ASSERT(done > PER_BATCH / 2);
        CU_ASSERT(ph_answers(&D));
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "random well-framed calls", test_random_calls },
                { "corrupted wire messages", test_corrupt_wire },
                { "broken authentication", test_broken_auth },
                CU_TEST_INFO_NULL,
        };
        int r = ph_main("procd fuzz", setup, teardown, tests);
        if (r == 0 && !clean_exit) {
                fprintf(stderr, "procd did not exit 0 after the fuzzing\n");
                return 1;
        }
        return r;
}
