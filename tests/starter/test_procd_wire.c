/* test_procd_wire.c - starter/procd-wire.c, the starter's D-Bus peer client without
 * libdbus: its calls read back by libdbus (dbus_message_demarshal, an independent reader),
 * replies made by libdbus parsed by it, malformed replies refused (one line per case
 * through a checker), and the live path against a real procd: pipelined authentication,
 * RegisterJob, Dump, a procd restart (the call sent again), the end of a job. */
#include <CUnit/CUnit.h>
#include <dbus/dbus.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "starter/procd-wire.h"
#include "testsupport.h"
#include "trackers/cgroup.h"

/* ---- marshalling, read back by libdbus ---- */

static DBusMessage *demarshal(const st_pw_arg *args, size_t n, const char *method)
{
        uint8_t buf[9000];
        size_t len = 0;
        procd_error e = { 0 };
        CU_ASSERT_EQUAL_FATAL(st_pw_marshal_call(7, method, args, n, buf, sizeof buf, &len, &e), 0);
        DBusError de;
        dbus_error_init(&de);
        DBusMessage *m = dbus_message_demarshal((const char *) buf, (int) len, &de);
        if (!m)
                fprintf(stderr, "demarshal: %s\n", de.message);
        dbus_error_free(&de);
        return m;
}

static void test_marshal(void)
{
        st_pw_arg reg[] = { ST_PW_I(-3), ST_PW_I(42), ST_PW_U(5), ST_PW_U(1), ST_PW_S("/a/b\xc3\xa9"), ST_PW_S("job-1"),
                            ST_PW_U(1000) };
        DBusMessage *m = demarshal(reg, 7, "RegisterJob");
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_EQUAL(dbus_message_get_type(m), DBUS_MESSAGE_TYPE_METHOD_CALL);
        CU_ASSERT_EQUAL(dbus_message_get_serial(m), 7);
        CU_ASSERT_STRING_EQUAL(dbus_message_get_path(m), PROCD_DBUS_PATH);
        CU_ASSERT_STRING_EQUAL(dbus_message_get_interface(m), PROCD_DBUS_INTERFACE);
        CU_ASSERT_STRING_EQUAL(dbus_message_get_member(m), "RegisterJob");
        CU_ASSERT_STRING_EQUAL(dbus_message_get_signature(m), "iiuussu");
        dbus_int32_t r, w;
        dbus_uint32_t i, f, o;
        const char *cg, *job;
        CU_ASSERT_TRUE(dbus_message_get_args(m, NULL, DBUS_TYPE_INT32, &r, DBUS_TYPE_INT32, &w, DBUS_TYPE_UINT32, &i,
                                             DBUS_TYPE_UINT32, &f, DBUS_TYPE_STRING, &cg, DBUS_TYPE_STRING, &job,
                                             DBUS_TYPE_UINT32, &o, DBUS_TYPE_INVALID));
        CU_ASSERT(r == -3 && w == 42 && i == 5 && f == 1 && o == 1000);
        CU_ASSERT_STRING_EQUAL(cg, "/a/b\xc3\xa9");
        CU_ASSERT_STRING_EQUAL(job, "job-1");
        dbus_message_unref(m);

        /* bytes (ay), and a call without arguments (no SIGNATURE field) */
        st_pw_arg by[] = { ST_PW_I(9), ST_PW_AY("p\xe9", 2) };
        m = demarshal(by, 2, "TrackFamilyViaCgroupBytes");
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_STRING_EQUAL(dbus_message_get_signature(m), "iay");
        const char *bytes;
        int nb = 0;
        CU_ASSERT_TRUE(dbus_message_get_args(m, NULL, DBUS_TYPE_INT32, &r, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &bytes, &nb,
                                             DBUS_TYPE_INVALID));
        CU_ASSERT(r == 9 && nb == 2 && memcmp(bytes, "p\xe9", 2) == 0);
        dbus_message_unref(m);
        m = demarshal(NULL, 0, "Snapshot");
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_STRING_EQUAL(dbus_message_get_signature(m), "");
        dbus_message_unref(m);

        /* refused before anything is sent: not UTF-8, an unknown type, too big */
        uint8_t buf[64];
        size_t len;
        procd_error e = { 0 };
        st_pw_arg bad[] = { ST_PW_S("p\xe9") };
        CU_ASSERT_EQUAL(st_pw_marshal_call(1, "X", bad, 1, buf, sizeof buf, &len, &e), -EINVAL);
        CU_ASSERT_EQUAL(e.status, PROCD_E_BAD_ARGUMENT);
        st_pw_arg odd[] = { { .type = 'd' } };
        CU_ASSERT_EQUAL(st_pw_marshal_call(1, "X", odd, 1, buf, sizeof buf, &len, &e), -EINVAL);
        st_pw_arg big[] = { ST_PW_S("a long string that does not fit in sixty-four bytes with the header") };
        CU_ASSERT_EQUAL(st_pw_marshal_call(1, "X", big, 1, buf, sizeof buf, &len, &e), -E2BIG);
}

/* ---- replies made by libdbus ---- */

static size_t marshal_reply(DBusMessage *m, uint8_t *out, size_t cap)
{
        dbus_message_set_serial(m, 99);
        char *b = NULL;
        int n = 0;
        CU_ASSERT_TRUE_FATAL(dbus_message_marshal(m, &b, &n));
        CU_ASSERT_FATAL((size_t) n <= cap);
        memcpy(out, b, (size_t) n);
        dbus_free(b);
        dbus_message_unref(m);
        return (size_t) n;
}

static DBusMessage *a_call(void)
{
        DBusMessage *c = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, "Dump");
        dbus_message_set_serial(c, 5);
        return c;
}

/* an ERROR with its text */
static size_t error_reply(uint8_t *out, size_t cap)
{
        DBusMessage *c = a_call();
        DBusMessage *m = dbus_message_new_error(c, PROCD_DBUS_ERROR_PREFIX "FamilyNotFound", "no family with root pid 5");
        dbus_message_unref(c);
        return marshal_reply(m, out, cap);
}

/* a Dump reply of two families */
static size_t dump_reply(uint8_t *out, size_t cap)
{
        DBusMessage *c = a_call();
        DBusMessage *m = dbus_message_new_method_return(c);
        dbus_message_unref(c);
        DBusMessageIter it, arr, st, mem;
        dbus_message_iter_init_append(m, &it);
        dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "(itiissais)", &arr);
        for (int k = 0; k < 2; k++) {
                dbus_int32_t root = 100 + k, w = 7, parent = 0, pids[3] = { 100 + k, 200, 300 };
                dbus_uint64_t start = 12345;
                const char *tr = "cgroup /x/job", *src = "cgroup", *state = k ? "running" : "killing";
                const dbus_int32_t *pp = pids;
                dbus_message_iter_open_container(&arr, DBUS_TYPE_STRUCT, NULL, &st);
                dbus_message_iter_append_basic(&st, DBUS_TYPE_INT32, &root);
                dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT64, &start);
                dbus_message_iter_append_basic(&st, DBUS_TYPE_INT32, &w);
                dbus_message_iter_append_basic(&st, DBUS_TYPE_INT32, &parent);
                dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &tr);
                dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &src);
                dbus_message_iter_open_container(&st, DBUS_TYPE_ARRAY, "i", &mem);
                dbus_message_iter_append_fixed_array(&mem, DBUS_TYPE_INT32, &pp, 3);
                dbus_message_iter_close_container(&st, &mem);
                dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &state);
                dbus_message_iter_close_container(&arr, &st);
        }
        dbus_message_iter_close_container(&it, &arr);
        return marshal_reply(m, out, cap);
}

static void test_parse_replies(void)
{
        uint8_t b[4096];
        size_t n = error_reply(b, sizeof b), total = 0;
        procd_error e = { 0 };
        st_pw_msg m;
        CU_ASSERT_EQUAL(st_pw_message_size(b, n, &total, &e), PROCD_OK);
        CU_ASSERT_EQUAL(total, n);
        CU_ASSERT_EQUAL_FATAL(st_pw_parse(b, n, &m, &e), PROCD_OK);
        CU_ASSERT_EQUAL(m.type, 3);
        CU_ASSERT_EQUAL(m.reply_serial, 5);
        CU_ASSERT_EQUAL(m.serial, 99);
        CU_ASSERT_STRING_EQUAL(m.error_name, PROCD_DBUS_ERROR_PREFIX "FamilyNotFound");
        char text[128];
        st_pw_error_text(&m, text, sizeof text);
        CU_ASSERT_STRING_EQUAL(text, "no family with root pid 5");

        n = dump_reply(b, sizeof b);
        CU_ASSERT_EQUAL_FATAL(st_pw_parse(b, n, &m, &e), PROCD_OK);
        CU_ASSERT_EQUAL(m.type, 2);
        size_t nf = 0;
        pid_t root = 0;
        char state[32];
        CU_ASSERT_EQUAL(st_pw_dump_first(&m, &nf, &root, state, sizeof state, &e), PROCD_OK);
        CU_ASSERT_EQUAL(nf, 2);
        CU_ASSERT_EQUAL(root, 100);
        CU_ASSERT_STRING_EQUAL(state, "killing");

        /* the same error, big-endian, by hand: header, REPLY_SERIAL 5, ERROR_NAME, SIGNATURE s */
        static const uint8_t be[] = { 'B', 3, 1, 1, 0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0, 31,
                                      5, 1, 'u', 0, 0, 0, 0, 5,
                                      4, 1, 's', 0, 0, 0, 0, 5, 'a', '.', 'b', '.', 'c', 0, 0, 0,
                                      8, 1, 'g', 0, 1, 's', 0, 0,
                                      0, 0, 0, 3, 'o', 'o', 'f', 0 };
        CU_ASSERT_EQUAL_FATAL(st_pw_parse(be, sizeof be, &m, &e), PROCD_OK);
        CU_ASSERT(m.big_endian && m.type == 3 && m.serial == 9 && m.reply_serial == 5);
        CU_ASSERT_STRING_EQUAL(m.error_name, "a.b.c");
        st_pw_error_text(&m, text, sizeof text);
        CU_ASSERT_STRING_EQUAL(text, "oof");
}

/* Offset of the header field with this code and type in a libdbus message (0: none). */
static size_t field_at(const uint8_t *b, uint8_t code, char type)
{
        size_t end = 16 + (b[12] | (size_t) b[13] << 8);
        for (size_t o = 16; o + 4 <= end; o += 8)
                if (b[o] == code && b[o + 1] == 1 && b[o + 2] == (uint8_t) type && b[o + 3] == 0)
                        return o;
        return 0;
}

static size_t body_at(const uint8_t *b)
{
        size_t end = 16 + (b[12] | (size_t) b[13] << 8);
        return (end + 7) & ~(size_t) 7;
}

typedef enum { REPLY_ERROR, REPLY_DUMP } base_reply;

/* One malformed case: a reply made by libdbus, bytes patched, parsed (then read as a Dump):
 * refused with PROCD_E_TRANSPORT and a message naming the fault. */
static void check_malformed(const char *what, base_reply base, void (*patch)(uint8_t *b, size_t *n), const char *want)
{
        uint8_t b[4096];
        size_t n = base == REPLY_ERROR ? error_reply(b, sizeof b) : dump_reply(b, sizeof b);
        patch(b, &n);
        procd_error e = { 0 };
        st_pw_msg m;
        size_t total = 0, nf = 0;
        pid_t root;
        char state[32];
        procd_status s = st_pw_message_size(b, n, &total, &e);
        if (s == PROCD_OK)
                s = st_pw_parse(b, n, &m, &e);
        if (s == PROCD_OK && base == REPLY_DUMP)
                s = st_pw_dump_first(&m, &nf, &root, state, sizeof state, &e);
        if (s != PROCD_E_TRANSPORT || !strstr(e.msg, want))
                fprintf(stderr, "case %s: %s (%s), want \"%s\"\n", what, procd_status_name(s), e.msg, want);
        CU_ASSERT_EQUAL(s, PROCD_E_TRANSPORT);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, want));
}

static void p_short(uint8_t *b, size_t *n) { (void) b; *n = 15; }
static void p_order(uint8_t *b, size_t *n) { (void) n; b[0] = 'x'; }
static void p_version(uint8_t *b, size_t *n) { (void) n; b[3] = 2; }
static void p_cut(uint8_t *b, size_t *n) { (void) b; *n -= 1; }
static void p_huge(uint8_t *b, size_t *n) { (void) n; memset(b + 4, 0xff, 4); }
static void p_type(uint8_t *b, size_t *n) { (void) n; b[1] = 9; }
static void p_serial0(uint8_t *b, size_t *n) { (void) n; memset(b + 8, 0, 4); }
static void p_no_reply_serial(uint8_t *b, size_t *n) { (void) n; b[field_at(b, 5, 'u')] = 9; /* UNIX_FDS */ }
static void p_reply_serial_as_string(uint8_t *b, size_t *n) { (void) n; b[field_at(b, 5, 'u') + 2] = 's'; }
static void p_no_error_name(uint8_t *b, size_t *n) { (void) n; b[field_at(b, 4, 's')] = 7; /* SENDER */ }
static void p_no_signature(uint8_t *b, size_t *n) { (void) n; b[field_at(b, 8, 'g')] = 200; /* unknown: skipped */ }
static void p_field_container(uint8_t *b, size_t *n) { (void) n; b[field_at(b, 8, 'g') + 2] = 'a'; }
static void p_name_unterminated(uint8_t *b, size_t *n)
{
        (void) n;
        size_t o = field_at(b, 4, 's') + 4;
        uint32_t len = b[o] | (uint32_t) b[o + 1] << 8;
        b[o + 4 + len] = 'x';
}
static void p_name_past_end(uint8_t *b, size_t *n) { (void) n; memset(b + field_at(b, 4, 's') + 4, 0x7f, 2); }
static void p_fields_past_end(uint8_t *b, size_t *n) { (void) n; b[13] = 0x10; }
static void p_dump_array_long(uint8_t *b, size_t *n) { (void) n; b[body_at(b)] += 8; }
static void p_dump_cut(uint8_t *b, size_t *n)
{
        /* the whole message one byte shorter, lengths kept consistent: the last state is cut */
        size_t o = body_at(b);
        b[o] -= 1;
        b[4] -= 1;
        *n -= 1;
}
static void p_dump_signature(uint8_t *b, size_t *n)
{
        (void) n;
        size_t o = field_at(b, 8, 'g');
        b[o + 7] = 'u'; /* a(utiissais) */
}

static void test_malformed(void)
{
        check_malformed("shorter than a header", REPLY_ERROR, p_short, "shorter than a header");
        check_malformed("byte order", REPLY_ERROR, p_order, "byte order");
        check_malformed("version", REPLY_ERROR, p_version, "version");
        check_malformed("length", REPLY_ERROR, p_cut, "length does not match");
        check_malformed("huge body", REPLY_ERROR, p_huge, "longer than the limit");
        check_malformed("message type", REPLY_ERROR, p_type, "unknown message type");
        check_malformed("serial 0", REPLY_ERROR, p_serial0, "serial 0");
        check_malformed("no reply serial", REPLY_ERROR, p_no_reply_serial, "without a reply serial");
        check_malformed("reply serial as a string", REPLY_ERROR, p_reply_serial_as_string, "wrong type");
        check_malformed("error without a name", REPLY_ERROR, p_no_error_name, "error without a name");
        check_malformed("body without a signature", REPLY_ERROR, p_no_signature, "body without a signature");
        check_malformed("a container in a header field", REPLY_ERROR, p_field_container, "unexpected type");
        check_malformed("name without its NUL", REPLY_ERROR, p_name_unterminated, "header field string");
        check_malformed("name past the end", REPLY_ERROR, p_name_past_end, "header field string");
        check_malformed("fields past the end", REPLY_ERROR, p_fields_past_end, "length does not match");
        check_malformed("Dump array past the body", REPLY_DUMP, p_dump_array_long, "Dump array length");
        check_malformed("Dump record cut", REPLY_DUMP, p_dump_cut, "Dump family");
        check_malformed("Dump of another signature", REPLY_DUMP, p_dump_signature, "another signature");
}

/* ---- live, against procd ---- */

static ph_daemon D;

static int suite_init(void) { return ph_start(&D, NULL, NULL, 10000) < 0; }

static int suite_clean(void)
{
        if (D.pid > 1)
                ph_stop(&D, 10000);
        return 0;
}

static void test_live(void)
{
        if (!ts_need_root("procd-wire against procd") || !ts_cgroup_base())
                return;
        char path[256];
        tr_cgroup *cg = NULL;
        pid_t s = ph_sleeper_in_cgroup("pw-live", path, sizeof path, &cg);
        CU_ASSERT_FATAL(s > 1);
        st_pw *c = NULL;
        procd_error e = { 0 };
        CU_ASSERT_EQUAL_FATAL(st_pw_connect(D.socket, &c, &e), PROCD_OK);
        CU_ASSERT(st_pw_fd(c) >= 0);
        /* the first call carries the authentication */
        st_pw_arg reg[] = { ST_PW_I(s), ST_PW_I(0), ST_PW_U(5), ST_PW_U(0), ST_PW_S(path), ST_PW_S("pw-live"), ST_PW_U(0) };
        CU_ASSERT_EQUAL(st_pw_call(c, "RegisterJob", reg, 7, NULL, &e), PROCD_OK);
        CU_ASSERT_EQUAL(st_pw_call(c, "RegisterJob", reg, 7, NULL, &e), PROCD_E_ALREADY_REGISTERED);
        CU_ASSERT_STRING_EQUAL(st_pw_last_error(c), PROCD_DBUS_ERROR_PREFIX "AlreadyRegistered");
        CU_ASSERT_EQUAL(st_pw_call(c, "NoSuchMethod", NULL, 0, NULL, &e), PROCD_E_BAD_ARGUMENT);
        CU_ASSERT_STRING_EQUAL(st_pw_last_error(c), "org.freedesktop.DBus.Error.UnknownMethod");
        st_pw_msg m;
        st_pw_arg a = ST_PW_I(s);
        size_t nf = 0;
        pid_t root = 0;
        char state[32] = "";
        CU_ASSERT_EQUAL(st_pw_call(c, "Dump", &a, 1, &m, &e), PROCD_OK);
        CU_ASSERT_EQUAL(st_pw_dump_first(&m, &nf, &root, state, sizeof state, &e), PROCD_OK);
        CU_ASSERT(nf == 1 && root == s);
        CU_ASSERT_STRING_EQUAL(state, "running");
        CU_ASSERT_STRING_EQUAL(st_pw_last_error(c), "");

        /* procd restarted (state kept): the connection is made again and the call sent again */
        ph_crash(&D);
        CU_ASSERT_FATAL(ph_start_in(&D, NULL, NULL, 10000) >= 0);
        CU_ASSERT_EQUAL(st_pw_call(c, "Dump", &a, 1, &m, &e), PROCD_OK);

        /* the end of a job for an older procd: KillFamily, then UnregisterFamily */
        CU_ASSERT_EQUAL(st_pw_call(c, "KillFamily", &a, 1, NULL, &e), PROCD_OK);
        CU_ASSERT_TRUE(ph_wait_gone(s, 5000));
        ts_wait(s, 5000);
        CU_ASSERT_EQUAL(st_pw_call(c, "UnregisterFamily", &a, 1, NULL, &e), PROCD_OK);
        e.msg[0] = '\0';
        CU_ASSERT_EQUAL(st_pw_call(c, "KillFamily", &a, 1, NULL, &e), PROCD_E_FAMILY_NOT_FOUND);
        CU_ASSERT(e.status == PROCD_E_FAMILY_NOT_FOUND && e.msg[0]);

        /* and for this one: KillAndUnregisterFamily, answered once both are done */
        char path2[256];
        tr_cgroup *cg2 = NULL;
        pid_t s2 = ph_sleeper_in_cgroup("pw-end", path2, sizeof path2, &cg2);
        CU_ASSERT_FATAL(s2 > 1);
        st_pw_arg reg2[] = { ST_PW_I(s2), ST_PW_I(0), ST_PW_U(5), ST_PW_U(0), ST_PW_S(path2), ST_PW_S("pw-end"),
                             ST_PW_U(0) };
        st_pw_arg a2 = ST_PW_I(s2);
        CU_ASSERT_EQUAL(st_pw_call(c, "RegisterJob", reg2, 7, NULL, &e), PROCD_OK);
        CU_ASSERT_EQUAL(st_pw_call(c, "KillAndUnregisterFamily", &a2, 1, NULL, &e), PROCD_OK);
        CU_ASSERT_FALSE(ts_alive(s2));
        CU_ASSERT_EQUAL(st_pw_call(c, "Dump", &a2, 1, &m, &e), PROCD_E_FAMILY_NOT_FOUND);
        ts_wait(s2, 5000);
        st_pw_close(c);
        tr_cgroup_destroy(cg2, 5000000, NULL);
        tr_cgroup_free(cg2);

        /* nobody listening: a clear transport error */
        char none[300];
        snprintf(none, sizeof none, "%s.none", D.socket);
        CU_ASSERT_EQUAL(st_pw_connect(none, &c, &e), PROCD_E_TRANSPORT);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "cannot connect"));
        tr_cgroup_destroy(cg, 5000000, NULL);
        tr_cgroup_free(cg);
}

int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        CU_TestInfo offline[] = {
                { "calls read back by libdbus; refused arguments", test_marshal },
                { "replies made by libdbus (and big-endian) parsed", test_parse_replies },
                { "malformed replies refused, each named", test_malformed },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo online[] = {
                { "live: auth pipelined, RegisterJob, Dump, restart, kill and unregister, KillAndUnregisterFamily", test_live },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "procd-wire offline", NULL, NULL, NULL, NULL, offline },
                { "procd-wire with procd", suite_init, suite_clean, NULL, NULL, online },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
