/* test_state.c - the state file (procd/state.c) on fixture files: a good file, files that
 * must not be trusted (truncated, foreign, a later version, bad values), a round trip, the
 * atomic write and setting a bad file aside. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procd/state.h"
#include "testsupport.h"

static void test_good(void)
{
        char *text = ts_read_fixture("state/good.state");
        pd_state s;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(pd_state_parse(text, strlen(text), &s, &err), 0);
        CU_ASSERT_EQUAL_FATAL(s.n, 2);
        const pd_state_family *a = &s.fams[0], *b = &s.fams[1];
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

        /* round trip: what is written reads back the same, byte for byte */
        GString *out = g_string_new(NULL);
        pd_state_format(&s, out);
        pd_state s2;
        CU_ASSERT_EQUAL_FATAL(pd_state_parse(out->str, out->len, &s2, &err), 0);
        GString *out2 = g_string_new(NULL);
        pd_state_format(&s2, out2);
        CU_ASSERT_STRING_EQUAL(out->str, out2->str);
        CU_ASSERT_EQUAL(s2.n, 2);
        g_string_free(out, TRUE);
        g_string_free(out2, TRUE);
        pd_state_clear(&s2);
        pd_state_clear(&s);
        free(text);
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
        check_file("state/empty.state", 0, NULL);
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

int main(void)
{
        CU_TestInfo tests[] = {
                { "good file, round trip", test_good },
                { "untrusted files refused", test_untrusted },
                { "every truncation refused", test_every_truncation },
                { "atomic write, read, set aside", test_write_read_set_aside },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = { { "state", NULL, NULL, NULL, NULL, tests }, CU_SUITE_INFO_NULL };
        return ts_run(suites);
}
