/* test_state.c - the state file (procd/core/state.c) on fixture files: a good file (version 2),
 * an earlier procd's version-1 file, files that must not be trusted (truncated, foreign, a
 * later version, bad values), a round trip, the atomic write and setting a bad file aside,
 * the formatter's bytes against a reference. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procd/core/state.h"
#include "testsupport.h"

/* What good.state and v1.state both say of their two families (the fields of version 1). */
static void check_v1_fields(const pd_state *s)
{
        CU_ASSERT_EQUAL_FATAL(s->n, 2);
        const pd_state_family *a = &s->fams[0], *b = &s->fams[1];
        CU_ASSERT_EQUAL(a->root_pid, 4242);
        CU_ASSERT_EQUAL(a->root_start_ticks, 123456);
        CU_ASSERT_EQUAL(a->parent_root_pid, 0);
        CU_ASSERT_EQUAL(a->root_uid, 1000);
        CU_ASSERT_EQUAL(a->watcher_pid, 4200);
        CU_ASSERT_EQUAL(a->watcher_start_ticks, 123000);
        CU_ASSERT_EQUAL(a->interval_sec, 5);
        CU_ASSERT_STRING_EQUAL(a->cgroup, "/jobs/job\t42");
        CU_ASSERT(a->kill_on_watcher_exit);
        CU_ASSERT(!a->frozen && !a->by_gid && !a->login && !a->env_marker && a->n_members == 0);
        CU_ASSERT_EQUAL(b->root_pid, 4300);
        CU_ASSERT_EQUAL(b->parent_root_pid, 4242);
        CU_ASSERT_EQUAL(b->watcher_pid, 0);
        CU_ASSERT_PTR_NULL(b->cgroup);
        CU_ASSERT_STRING_EQUAL(b->env_marker, "CONDOR_JOB=42 \"x\"\nnext");
        CU_ASSERT_STRING_EQUAL(b->login, "alice");
        CU_ASSERT_EQUAL(b->login_uid, 1001);
        CU_ASSERT(b->by_gid && b->gid == 5012 && b->gid_allocated);
        CU_ASSERT(b->frozen && b->killing && !b->suspending && !b->kill_on_watcher_exit);
        CU_ASSERT_STRING_EQUAL(b->no_cgroup_reason, "no delegated cgroup");
        CU_ASSERT_EQUAL(a->cgroup_origin, 2); /* the family's own cgroup */
        CU_ASSERT_EQUAL_FATAL(b->n_members, 2);
        CU_ASSERT(b->members[0].pid == 4300 && b->members[0].start_ticks == 124000);
        CU_ASSERT(b->members[1].pid == 4301 && b->members[1].start_ticks == 124010);
}

/* A fixture parsed: it must be accepted, of that version, with the two families above. */
static void parse_fixture(const char *rel, unsigned version, pd_state *s)
{
        char *text = ts_read_fixture(rel);
        tr_error err = { 0 };
        int r = pd_state_parse(text, strlen(text), s, &err);
        free(text);
        CU_ASSERT_EQUAL_FATAL(r, 0);
        CU_ASSERT_EQUAL(s->version, version);
        check_v1_fields(s);
}

static void test_good(void)
{
        pd_state s;
        tr_error err = { 0 };
        parse_fixture("state/good.state", 2, &s);
        const pd_state_family *a = &s.fams[0], *b = &s.fams[1];
        /* version 2's: killed, the root's children at registration */
        CU_ASSERT(!a->killed && b->killed);
        CU_ASSERT_EQUAL_FATAL(a->n_kept, 1);
        CU_ASSERT(a->kept[0].pid == 4250 && a->kept[0].start_ticks == 123500);
        CU_ASSERT_EQUAL_FATAL(b->n_kept, 2);
        CU_ASSERT(b->kept[0].pid == 4302 && b->kept[0].start_ticks == 124005);
        CU_ASSERT(b->kept[1].pid == 4303 && b->kept[1].start_ticks == 124006);

        /* round trip: what is written reads back the same, byte for byte */
        GString *out = g_string_new(NULL);
        pd_state_format(&s, out);
        pd_state s2;
        CU_ASSERT_EQUAL_FATAL(pd_state_parse(out->str, out->len, &s2, &err), 0);
        GString *out2 = g_string_new(NULL);
        pd_state_format(&s2, out2);
        CU_ASSERT_STRING_EQUAL(out->str, out2->str);
        CU_ASSERT_EQUAL(s2.n, 2);
        CU_ASSERT(s2.fams[1].killed && s2.fams[1].n_kept == 2);
        g_string_free(out, TRUE);
        g_string_free(out2, TRUE);
        pd_state_clear(&s2);
        pd_state_clear(&s);
}

/* An earlier procd's file (version 1) reads as it did: the same families, and the keys of
 * version 2 that it carries (killed, kept) ignored; written again it is version 2. */
static void test_v1(void)
{
        pd_state s;
        tr_error err = { 0 };
        parse_fixture("state/v1.state", 1, &s);
        for (size_t i = 0; i < s.n; i++)
                CU_ASSERT(!s.fams[i].killed && s.fams[i].n_kept == 0 && s.fams[i].kept == NULL);
        g_autoptr(GString) out = g_string_new(NULL);
        pd_state_format(&s, out);
        CU_ASSERT(g_str_has_prefix(out->str, "procd-state\t2\n"));
        pd_state back;
        CU_ASSERT_EQUAL_FATAL(pd_state_parse(out->str, out->len, &back, &err), 0);
        CU_ASSERT_EQUAL(back.version, 2);
        check_v1_fields(&back);
        pd_state_clear(&back);
        pd_state_clear(&s);
}

/* One line per case: the fixture and the error it must give (0: accepted). */
static void check_file(const char *rel, int want, const char *kind)
{
        char *text = ts_read_fixture(rel);
        pd_state s;
        tr_error err = { 0 };
        int r = pd_state_parse(text, strlen(text), &s, &err);
        if (r != want)
                fprintf(stderr, "%s: got %d (%s), want %d\n", rel, r, err.msg, want);
        CU_ASSERT_EQUAL(r, want);
        if (r < 0) {
                CU_ASSERT(err.msg[0] != '\0');
                CU_ASSERT_EQUAL(s.n, 0);
                CU_ASSERT_PTR_NULL(s.fams);
                CU_ASSERT_STRING_EQUAL(pd_state_error_kind(r), kind);
        }
        pd_state_clear(&s);
        free(text);
}

static void test_untrusted(void)
{
        check_file("state/truncated.state", -EBADMSG, "corrupt");
        check_file("state/no-end.state", -EBADMSG, "corrupt");
        check_file("state/foreign.state", -EPROTO, "foreign");
        check_file("state/future.state", -EPROTONOSUPPORT, "version");
        check_file("state/bad-root.state", -EBADMSG, "corrupt");
        check_file("state/duplicate.state", -EBADMSG, "corrupt");
        check_file("state/bad-kept.state", -EBADMSG, "corrupt");
        check_file("state/kept-twice.state", -EBADMSG, "corrupt");
        check_file("state/bad-killed.state", -EBADMSG, "corrupt");
        check_file("state/empty.state", 0, NULL);
        check_file("state/v1.state", 0, NULL);
}

/* Every prefix of the good file is refused (a write cut anywhere). */
static void test_every_truncation(void)
{
        char *text = ts_read_fixture("state/good.state");
        size_t len = strlen(text), refused = 0;
        for (size_t n = 0; n < len; n++) {
                pd_state s;
                if (pd_state_parse(text, n, &s, NULL) < 0)
                        refused++;
                pd_state_clear(&s);
        }
        /* the only prefix that parses is the whole file minus its last newline */
        CU_ASSERT_EQUAL(refused, len - 1);
        free(text);
}

static void test_write_read_set_aside(void)
{
        char dir[] = "/tmp/procd-state-test.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
        char path[256], tmp[300], aside[512];
        snprintf(path, sizeof path, "%s/procd.state", dir);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        pd_state s;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(pd_state_read(path, &s, &err), -ENOENT);

        char *text = ts_read_fixture("state/good.state");
        CU_ASSERT_EQUAL_FATAL(pd_state_parse(text, strlen(text), &s, &err), 0);
        CU_ASSERT_EQUAL(pd_state_write(path, &s, &err), 0);
        CU_ASSERT(access(tmp, F_OK) < 0); /* renamed away */
        struct stat st;
        CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
        pd_state back;
        CU_ASSERT_EQUAL(pd_state_read(path, &back, &err), 0);
        CU_ASSERT_EQUAL(back.n, 2);
        pd_state_clear(&back);
        /* a second write replaces the file whole */
        s.n = 1;
        CU_ASSERT_EQUAL(pd_state_write(path, &s, &err), 0);
        s.n = 2;
        CU_ASSERT_EQUAL(pd_state_read(path, &back, &err), 0);
        CU_ASSERT_EQUAL(back.n, 1);
        pd_state_clear(&back);
        pd_state_clear(&s);

        /* a foreign file: refused, then set aside under a new name, nothing deleted */
        FILE *f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs("not a state file\n", f);
        fclose(f);
        int r = pd_state_read(path, &back, &err);
        CU_ASSERT_EQUAL(r, -EPROTO);
        CU_ASSERT_EQUAL(pd_state_set_aside(path, pd_state_error_kind(r), aside, sizeof aside, &err), 0);
        CU_ASSERT(access(path, F_OK) < 0);
        CU_ASSERT(strstr(aside, "procd.state.bad-foreign-") != NULL);
        CU_ASSERT(access(aside, F_OK) == 0);
        unlink(aside);
        rmdir(dir);
        free(text);
}

/* The formatter as it was written before the decimal appender (printf and g_strescape for
 * every value), with version 2's keys: the new one must give the same bytes. */
static void ref_put_str(GString *out, const char *key, const char *v)
{
        if (!v)
                return;
        g_autofree char *e = g_strescape(v, NULL);
        g_string_append_printf(out, "\t%s=%s", key, e);
}

static void ref_put_u64(GString *out, const char *key, uint64_t v) { g_string_append_printf(out, "\t%s=%" PRIu64, key, v); }

static void ref_put_idents(GString *out, const char *key, const pd_state_member *m, size_t n)
{
        if (!n)
                return;
        g_string_append_printf(out, "\t%s=", key);
        for (size_t j = 0; j < n; j++)
                g_string_append_printf(out, "%s%d:%" PRIu64, j ? "," : "", (int) m[j].pid, m[j].start_ticks);
}

static void reference_format(const pd_state *s, GString *out)
{
        g_string_append_printf(out, "%s\t%u\n", PD_STATE_MAGIC, PD_STATE_VERSION);
        for (size_t i = 0; i < s->n; i++) {
                const pd_state_family *f = &s->fams[i];
                g_string_append(out, "family");
                ref_put_u64(out, "root", (uint64_t) f->root_pid);
                ref_put_u64(out, "start", f->root_start_ticks);
                ref_put_u64(out, "parent", (uint64_t) f->parent_root_pid);
                ref_put_u64(out, "uid", f->root_uid);
                if (f->watcher_pid > 0) {
                        ref_put_u64(out, "watcher", (uint64_t) f->watcher_pid);
                        ref_put_u64(out, "watcher_start", f->watcher_start_ticks);
                }
                ref_put_u64(out, "interval", f->interval_sec);
                ref_put_str(out, "cgroup", f->cgroup);
                if (f->cgroup && f->cgroup_origin)
                        ref_put_u64(out, "cgroup_origin", f->cgroup_origin);
                ref_put_str(out, "no_cgroup", f->no_cgroup_reason);
                ref_put_str(out, "env", f->env_marker);
                if (f->login) {
                        ref_put_str(out, "login", f->login);
                        ref_put_u64(out, "login_uid", f->login_uid);
                }
                if (f->by_gid) {
                        ref_put_u64(out, "gid", f->gid);
                        ref_put_u64(out, "gid_allocated", f->gid_allocated);
                }
                if (f->kill_on_watcher_exit)
                        ref_put_u64(out, "kill_on_watcher_exit", 1);
                if (f->frozen)
                        ref_put_u64(out, "frozen", 1);
                if (f->killing)
                        ref_put_u64(out, "killing", 1);
                if (f->suspending)
                        ref_put_u64(out, "suspending", 1);
                if (f->killed)
                        ref_put_u64(out, "killed", 1);
                if (f->moved_in)
                        ref_put_u64(out, "moved_in", 1);
                if (f->moved_in && f->moved_exe_known) {
                        ref_put_u64(out, "moved_exe_dev", f->moved_exe_dev);
                        ref_put_u64(out, "moved_exe_ino", f->moved_exe_ino);
                }
                ref_put_idents(out, "members", f->members, f->n_members);
                ref_put_idents(out, "kept", f->kept, f->n_kept);
                g_string_append_c(out, '\n');
        }
        g_string_append_printf(out, "end\t%zu\n", s->n);
}

static bool str_same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static bool family_same(const pd_state_family *a, const pd_state_family *b)
{
        bool same = a->root_pid == b->root_pid && a->root_start_ticks == b->root_start_ticks &&
                    a->parent_root_pid == b->parent_root_pid && a->root_uid == b->root_uid &&
                    a->watcher_pid == b->watcher_pid && a->watcher_start_ticks == b->watcher_start_ticks &&
                    a->interval_sec == b->interval_sec && str_same(a->cgroup, b->cgroup) &&
                    a->cgroup_origin == b->cgroup_origin && str_same(a->no_cgroup_reason, b->no_cgroup_reason) &&
                    str_same(a->env_marker, b->env_marker) && str_same(a->login, b->login) &&
                    a->login_uid == b->login_uid && a->by_gid == b->by_gid && a->gid == b->gid &&
                    a->gid_allocated == b->gid_allocated && a->kill_on_watcher_exit == b->kill_on_watcher_exit &&
                    a->frozen == b->frozen && a->killing == b->killing && a->suspending == b->suspending &&
                    a->killed == b->killed && a->moved_in == b->moved_in && a->moved_exe_known == b->moved_exe_known &&
                    a->moved_exe_dev == b->moved_exe_dev && a->moved_exe_ino == b->moved_exe_ino && a->n_members == b->n_members && a->n_kept == b->n_kept;
        for (size_t i = 0; same && i < a->n_members; i++)
                same = a->members[i].pid == b->members[i].pid && a->members[i].start_ticks == b->members[i].start_ticks;
        for (size_t i = 0; same && i < a->n_kept; i++)
                same = a->kept[i].pid == b->kept[i].pid && a->kept[i].start_ticks == b->kept[i].start_ticks;
        return same;
}

/* One line per case: the family formatted alone is the reference formatter's bytes, and
 * parses back to the same family. */
static void check_format(const char *name, pd_state_family f)
{
        pd_state s = { .fams = &f, .n = 1 };
        g_autoptr(GString) got = g_string_new(NULL), want = g_string_new(NULL);
        pd_state_format(&s, got);
        reference_format(&s, want);
        if (strcmp(got->str, want->str) != 0)
                fprintf(stderr, "%s: formatted\n%s\nwant\n%s\n", name, got->str, want->str);
        CU_ASSERT_STRING_EQUAL(got->str, want->str);
        pd_state back;
        tr_error err = { 0 };
        int r = pd_state_parse(got->str, got->len, &back, &err);
        if (r < 0)
                fprintf(stderr, "%s: does not parse back: %s\n", name, err.msg);
        CU_ASSERT_EQUAL_FATAL(r, 0);
        CU_ASSERT_EQUAL_FATAL(back.n, 1);
        if (!family_same(&back.fams[0], &f))
                fprintf(stderr, "%s: parsed back differently\n", name);
        CU_ASSERT(family_same(&back.fams[0], &f));
        pd_state_clear(&back);
}

/* A family with the required fields; a case names what it sets (overriding a default). */
#define FAM(...) ((pd_state_family) { .root_pid = 4242, .root_start_ticks = 123456, .interval_sec = 5, __VA_ARGS__ })
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"

static void test_format_same_bytes(void)
{
        pd_state_member one[] = { { 4243, 1 } };
        pd_state_member many[] = { { 2, 0 + 1 }, { 99999, 123456789 }, { INT32_MAX, UINT64_MAX }, { 4300, 10 } };
        check_format("minimal", FAM());
        check_format("largest numbers", FAM(.root_pid = INT32_MAX, .root_start_ticks = UINT64_MAX,
                                            .parent_root_pid = INT32_MAX - 1, .root_uid = UINT32_MAX,
                                            .interval_sec = UINT32_MAX));
        check_format("zero start, uid 0", FAM(.root_start_ticks = 0, .root_uid = 0));
        check_format("watcher", FAM(.watcher_pid = 4200, .watcher_start_ticks = 123000, .kill_on_watcher_exit = true));
        check_format("child family", FAM(.parent_root_pid = 4000, .root_uid = 1000));
        check_format("cgroup handed", FAM(.cgroup = "/jobs/job42", .cgroup_origin = 0));
        check_format("cgroup made", FAM(.cgroup = "/procd/fam.4242", .cgroup_origin = 1));
        check_format("cgroup own", FAM(.cgroup = "/procd/fam.4242/fam.4243", .cgroup_origin = 2));
        check_format("cgroup placed", FAM(.cgroup = "4:memory:/slurm/uid_0/job_10/step_0/task_0\n0::/a\n",
                                          .cgroup_origin = 3, .moved_in = false));
        check_format("moved in", FAM(.cgroup = "/procd/fam.4242", .cgroup_origin = 2, .moved_in = true));
        check_format("moved in, the root's exe", FAM(.cgroup = "/procd/fam.4242", .cgroup_origin = 2, .moved_in = true,
                                                     .moved_exe_known = true, .moved_exe_dev = 2049,
                                                     .moved_exe_ino = UINT64_MAX));
        check_format("cgroup with tab", FAM(.cgroup = "/jobs/job\t42", .cgroup_origin = 2));
        check_format("cgroup escapes", FAM(.cgroup = "/a\"b\\c\nd\re\bf\fg\vh\001i\177j", .cgroup_origin = 1));
        check_format("cgroup utf-8", FAM(.cgroup = "/jobs/caf\xc3\xa9/\xe2\x82\xac"));
        check_format("cgroup printable", FAM(.cgroup = "/ !#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~"));
        check_format("no cgroup reason", FAM(.no_cgroup_reason = "no delegated cgroup"));
        check_format("no cgroup reason escaped", FAM(.no_cgroup_reason = "mkdir \"fam.1\": No space\n"));
        check_format("env", FAM(.env_marker = "CONDOR_JOB=42"));
        check_format("env escaped", FAM(.env_marker = "CONDOR_JOB=42 \"x\"\nnext\\"));
        check_format("env high byte", FAM(.env_marker = "K=\xff\x80"));
        check_format("login", FAM(.login = "alice", .login_uid = 1001));
        check_format("login unknown", FAM(.login = "?", .login_uid = 0));
        check_format("login escaped", FAM(.login = "b\tob", .login_uid = 7));
        check_format("gid", FAM(.by_gid = true, .gid = 5012));
        check_format("gid allocated", FAM(.by_gid = true, .gid = 5012, .gid_allocated = true));
        check_format("gid largest", FAM(.by_gid = true, .gid = UINT32_MAX - 1, .gid_allocated = true));
        check_format("frozen", FAM(.frozen = true));
        check_format("killing", FAM(.killing = true));
        check_format("suspending", FAM(.suspending = true));
        check_format("killed", FAM(.killed = true));
        check_format("killing and killed", FAM(.killing = true, .killed = true));
        check_format("all flags", FAM(.kill_on_watcher_exit = true, .frozen = true, .killing = true,
                                      .suspending = true, .killed = true, .watcher_pid = 1, .watcher_start_ticks = 1));
        check_format("one member", FAM(.members = one, .n_members = 1));
        check_format("members", FAM(.members = many, .n_members = G_N_ELEMENTS(many)));
        check_format("one kept", FAM(.kept = one, .n_kept = 1));
        check_format("kept", FAM(.kept = many, .n_kept = G_N_ELEMENTS(many)));
        check_format("members and kept", FAM(.members = one, .n_members = 1, .kept = many, .n_kept = G_N_ELEMENTS(many)));
        check_format("a cgroup family killed with kept", FAM(.cgroup = "/jobs/job42", .killed = true, .kept = one,
                                                            .n_kept = 1));
        check_format("everything", FAM(.parent_root_pid = 17, .root_uid = 1000, .watcher_pid = 4200,
                                       .watcher_start_ticks = 9, .cgroup = "/x y/\"z\"", .cgroup_origin = 2,
                                       .no_cgroup_reason = NULL, .env_marker = "A=B", .login = "carol",
                                       .login_uid = 1002, .by_gid = true, .gid = 70000, .gid_allocated = true,
                                       .kill_on_watcher_exit = true, .frozen = true, .killing = true,
                                       .suspending = true, .killed = true, .members = many,
                                       .n_members = G_N_ELEMENTS(many), .kept = many, .n_kept = G_N_ELEMENTS(many)));

        /* a whole file (the fixture's families, and none) */
        char *text = ts_read_fixture("state/good.state");
        pd_state s, none = { .fams = NULL };
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(pd_state_parse(text, strlen(text), &s, &err), 0);
        const pd_state *cases[] = { &s, &none };
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(GString) got = g_string_new(NULL), want = g_string_new(NULL);
                pd_state_format(cases[i], got);
                reference_format(cases[i], want);
                CU_ASSERT_STRING_EQUAL(got->str, want->str);
        }
        pd_state_clear(&s);
        free(text);
}
#pragma GCC diagnostic pop

/* One line per case: a family line's moved_exe keys and whether the root's exe counts as
 * known (both halves needed: one alone would compare a made-up device or inode). */
static void check_moved_exe(const char *keys, bool known, uint64_t dev, uint64_t ino)
{
        g_autofree char *text = g_strdup_printf("procd-state\t2\nfamily\troot=4242\tstart=1\tinterval=5\t"
                                                "cgroup=/procd/fam.4242\tcgroup_origin=2\tmoved_in=1%s\nend\t1\n",
                                                keys);
        pd_state st;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(pd_state_parse(text, strlen(text), &st, &err), 0);
        CU_ASSERT_EQUAL(st.fams[0].moved_exe_known, known);
        if (known) {
                CU_ASSERT_EQUAL(st.fams[0].moved_exe_dev, dev);
                CU_ASSERT_EQUAL(st.fams[0].moved_exe_ino, ino);
        }
        pd_state_clear(&st);
}

static void test_moved_exe(void)
{
        check_moved_exe("\tmoved_exe_dev=2049\tmoved_exe_ino=77", true, 2049, 77);
        check_moved_exe("\tmoved_exe_ino=77\tmoved_exe_dev=2049", true, 2049, 77);
        check_moved_exe("\tmoved_exe_ino=77", false, 0, 0);
        check_moved_exe("\tmoved_exe_dev=2049", false, 0, 0);
        check_moved_exe("", false, 0, 0);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "good file, round trip", test_good },
                { "version-1 file read as before", test_v1 },
                { "the moved root's exe: both halves or none", test_moved_exe },
                { "untrusted files refused", test_untrusted },
                { "every truncation refused", test_every_truncation },
                { "atomic write, read, set aside", test_write_read_set_aside },
                { "format: the reference formatter's bytes", test_format_same_bytes },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("state", NULL, NULL, tests);
}
