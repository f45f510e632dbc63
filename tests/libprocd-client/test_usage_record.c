/* test_usage_record.c - the public usage record (libprocd-client/usage.c): its field list
 * is the wire contract with the daemon's trackers/usage.h (GetUsage's keys), so both lists
 * must agree name for name, in order, with the same JSON flag (procd-starter writes its
 * embedded tracker's record through this one's JSON writer); the source names; the JSON
 * string writer. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procd/usage.h"
#include "testsupport.h"
#include "trackers/usage.h"

static void test_fields_match_trackers(void)
{
        CU_ASSERT_EQUAL(procd_usage_field_count(), tr_usage_field_count());
        for (size_t i = 0; i < procd_usage_field_count() && i < tr_usage_field_count(); i++) {
                bool same = strcmp(procd_usage_field_name(i), tr_usage_field_name(i)) == 0 &&
                            procd_usage_field_is_json(i) == tr_usage_field_is_json(i);
                CU_ASSERT(same);
                if (!same)
                        printf("\n  field %zu: client %s (json %d), trackers %s (json %d)", i,
                               procd_usage_field_name(i), procd_usage_field_is_json(i), tr_usage_field_name(i),
                               tr_usage_field_is_json(i));
        }
        CU_ASSERT_PTR_NULL(procd_usage_field_name(procd_usage_field_count()));
}

/* one line per source name: name -> bits -> the same name again */
static void check_sources(const char *name, unsigned bits)
{
        procd_usage u;
        procd_usage_init(&u);
        u.sources = procd_usage_sources_from_name(name);
        CU_ASSERT_EQUAL(u.sources, bits);
        char buf[64];
        CU_ASSERT_STRING_EQUAL(procd_usage_source_name(&u, buf, sizeof buf), name);
}

static void test_source_names(void)
{
        check_sources("cgroup", PROCD_SRC_CGROUP_V2);
        check_sources("cgroup-v1", PROCD_SRC_CGROUP_V1);
        check_sources("proc", PROCD_SRC_PROC);
        check_sources("cgroup+cgroup-v1+proc", PROCD_SRC_CGROUP_V2 | PROCD_SRC_CGROUP_V1 | PROCD_SRC_PROC);
        check_sources("none", 0);
        CU_ASSERT_EQUAL(procd_usage_sources_from_name("cgroup+bogus"), PROCD_SRC_CGROUP_V2);
        CU_ASSERT_EQUAL(procd_usage_sources_from_name(NULL), 0);
}

/* The JSON string writer, one case a line: the expected literal (valid UTF-8 whatever the
 * input), and the member writer's KEY_hex exactly when the input is not UTF-8. */
typedef void (*write_member_fn)(FILE *f, const char *key, const char *s);

static char *written(write_member_fn fn, const char *s)
{
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);
        CU_ASSERT_FATAL(f != NULL);
        fn(f, "k", s);
        fclose(f);
        return out;
}

static void check_json(const char *in, const char *expected)
{
        char *a = written(procd_json_write_member, in);
        if (strcmp(a, expected) != 0)
                printf("\n  input %s:\n    want %s\n    got  %s", expected, expected, a);
        CU_ASSERT_STRING_EQUAL(a, expected);
        free(a);
}

static void test_json_utf8(void)
{
        check_json("plain", "\"k\": \"plain\"");
        check_json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"k\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
        check_json("q\"b\\\n\x01", "\"k\": \"q\\\"b\\\\\\u000a\\u0001\"");
        check_json("caf\xe9", "\"k\": \"caf\\ufffd\", \"k_hex\": \"636166e9\"");
        check_json("\xff\xfe", "\"k\": \"\\ufffd\\ufffd\", \"k_hex\": \"fffe\"");
        /* overlong '/', a surrogate, above U+10FFFF, a cut sequence */
        check_json("\xc0\xaf", "\"k\": \"\\ufffd\\ufffd\", \"k_hex\": \"c0af\"");
        check_json("\xed\xa0\x80", "\"k\": \"\\ufffd\\ufffd\\ufffd\", \"k_hex\": \"eda080\"");
        check_json("\xf4\x90\x80\x80", "\"k\": \"\\ufffd\\ufffd\\ufffd\\ufffd\", \"k_hex\": \"f4908080\"");
        check_json("a\xe2\x82", "\"k\": \"a\\ufffd\\ufffd\", \"k_hex\": \"61e282\"");
}

int main(void)
{
        static CU_TestInfo tests[] = {
                { "fields_match_trackers", test_fields_match_trackers },
                { "source_names", test_source_names },
                { "json_utf8", test_json_utf8 },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "usage_record", NULL, NULL, NULL, NULL, tests },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
