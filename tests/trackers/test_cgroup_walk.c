/* test_cgroup_walk.c - the one walk over a cgroup directory's descendants (cgroup-walk.c),
 * on a plain directory tree (unit, no root). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgtest.h"
#include "trackers/cgroup-walk.h"
#include "trackers/util.h"

typedef struct visit {
        char order[32][16]; /* post order of names */
        int n_post, n_pre;
        const char *fail_at; /* post returns -EACCES for this name */
} visit;

static int count_pre(int dfd, void *ud)
{
        (void) dfd;
        ((visit *) ud)->n_pre++;
        return 0;
}

static int record_post(int parent_dfd, const char *name, void *ud)
{
        (void) parent_dfd;
        visit *v = ud;
        if (v->fail_at && strcmp(name, v->fail_at) == 0)
                return -EACCES;
        if (v->n_post < 32)
                snprintf(v->order[v->n_post], sizeof v->order[0], "%s", name);
        v->n_post++;
        return 0;
}

static int pos(const visit *v, const char *name)
{
        for (int k = 0; k < v->n_post && k < 32; k++)
                if (strcmp(v->order[k], name) == 0)
                        return k;
        return -1;
}

/* tmp/{a/{b/c, d}, e} and a regular file a/f (not a directory: never visited) */
static int make_tree(char *tmp)
{
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        mkdirs(tmp, "a/b/c");
        mkdirs(tmp, "a/d");
        mkdirs(tmp, "e");
        char a[PATH_MAX];
        snprintf(a, sizeof a, "%s/a", tmp);
        put_file(a, "f", "x\n");
        return open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static void test_orders(void)
{
        char tmp[] = "/tmp/procd-walk.XXXXXX";
        _cleanup_close_ int fd = make_tree(tmp);
        visit v = { 0 };
        tr_cg_walk w = { .pre = count_pre, .post = record_post, .ud = &v };
        CU_ASSERT_EQUAL(tr_cg_walk_children(fd, &w), 0);
        CU_ASSERT_EQUAL(v.n_pre, 5);
        CU_ASSERT_EQUAL(v.n_post, 5);
        /* deepest first: a child before its parent */
        CU_ASSERT(pos(&v, "c") >= 0 && pos(&v, "c") < pos(&v, "b"));
        CU_ASSERT(pos(&v, "b") < pos(&v, "a"));
        CU_ASSERT(pos(&v, "d") >= 0 && pos(&v, "d") < pos(&v, "a"));
        CU_ASSERT(pos(&v, "e") >= 0);
        rm_tree(tmp);
}

static void check_error(bool keep_going, int want_posts, const char *want_failed, bool e_posted)
{
        char tmp[] = "/tmp/procd-walk.XXXXXX";
        _cleanup_close_ int fd = make_tree(tmp);
        visit v = { .fail_at = "b" };
        char failed[NAME_MAX + 1] = "";
        tr_cg_walk w = { .post = record_post, .ud = &v, .keep_going = keep_going, .failed = failed,
                         .failed_size = sizeof failed };
        CU_ASSERT_EQUAL(tr_cg_walk_children(fd, &w), -EACCES);
        CU_ASSERT_STRING_EQUAL(failed, want_failed);
        CU_ASSERT_EQUAL(pos(&v, "a"), -1); /* a failed subtree: no post for its parent */
        if (keep_going) {
                CU_ASSERT_EQUAL(v.n_post, want_posts); /* c, d, e */
                CU_ASSERT_EQUAL(pos(&v, "e") >= 0, e_posted);
        }
        rm_tree(tmp);
}

static void test_errors(void)
{
        check_error(true, 3, "b", true);   /* the siblings are still visited */
        check_error(false, 0, "b", false); /* the first error stops the walk */
}

static void test_depth(void)
{
        char tmp[] = "/tmp/procd-walk.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        /* TR_CG_WALK_MAX_DEPTH + 2 levels of "x" */
        char rel[2 * (TR_CG_WALK_MAX_DEPTH + 2) + 1] = "";
        for (int k = 0; k < TR_CG_WALK_MAX_DEPTH + 2; k++)
                strcat(rel, k ? "/x" : "x");
        mkdirs(tmp, rel);
        _cleanup_close_ int fd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
        visit v = { 0 };
        tr_cg_walk w = { .pre = count_pre, .ud = &v };
        CU_ASSERT_EQUAL(tr_cg_walk_children(fd, &w), 0); /* bounded: the deeper ones not visited */
        CU_ASSERT_EQUAL(v.n_pre, TR_CG_WALK_MAX_DEPTH);
        w.deep_is_error = true;
        CU_ASSERT_EQUAL(tr_cg_walk_children(fd, &w), -ELOOP);
        rm_tree(tmp);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "orders", test_orders },
                { "errors", test_errors },
                { "depth", test_depth },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("cgroup-walk", NULL, NULL, tests);
}
