/* test_cgroup_subtree.c - descendants kept open between calls (cgroup-subtree.c): the sum of
 * a file over the subtree stays right when directories are added, removed or replaced, and
 * an unchanged subtree is not listed again.  On a tmpfs tree (which counts subdirectories
 * in st_nlink as cgroupfs does) and, as root, on real cgroups (cgroup.procs). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgtest.h"
#include "trackers/cgroup-subtree.h"
#include "trackers/util.h"

typedef struct sum {
        long total;
        int reads, restarts;
        int fail_once; /* read returns -ENODEV once when it reads this value */
} sum;

static int add_value(int fd, void *ud)
{
        sum *s = ud;
        char buf[64];
        int r = tr_pread_all(fd, buf, sizeof buf);
        if (r < 0)
                return r;
        long v = strtol(buf, NULL, 10);
        if (s->fail_once && v == s->fail_once) {
                s->fail_once = 0;
                return -ENODEV;
        }
        s->total += v;
        s->reads++;
        return 0;
}

static void restart(void *ud)
{
        sum *s = ud;
        s->total = 0;
        s->restarts++;
}

/* The watches of the current run_changes (NULL: proven by fstat alone). */
static tr_cg_notify *notify;

/* One case: the sum over top's descendants is `want` and the subtree was listed `listings`
 * times in all. */
static void check_sum(tr_cg_subtree **st, int top, bool keep, sum *s, long want, unsigned listings, const char *what)
{
        s->total = 0;
        s->reads = 0;
        if (notify)
                CU_ASSERT_EQUAL(tr_cg_notify_sync(notify), 0);
        tr_cg_subtree_visit v = { .file = "v", .keep_open = keep, .read = add_value, .restart = restart, .ud = s,
                                  .notify = notify };
        int r = tr_cg_subtree_each(st, top, &v);
        CU_ASSERT_EQUAL(r, 0);
        CU_ASSERT_EQUAL(s->total, want);
        CU_ASSERT_EQUAL(tr_cg_subtree_listings(*st), listings);
        if (r != 0 || s->total != want || tr_cg_subtree_listings(*st) != listings)
                printf("\n  case '%s' (%s): r %d, sum %ld (want %ld), listings %u (want %u)", what,
                       keep ? "kept" : "reopened", r, s->total, want, tr_cg_subtree_listings(*st), listings);
}

static void put_value(const char *top, const char *rel, long v)
{
        char dir[PATH_MAX], text[32];
        snprintf(dir, sizeof dir, "%s/%s", top, rel);
        snprintf(text, sizeof text, "%ld\n", v);
        put_file(dir, "v", text);
}

static void rm_dir(const char *top, const char *rel)
{
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", top, rel);
        rm_tree(dir);
}

/* Proven by the watches: the same sums and listings, and the unchanged calls skip the
 * fstats (counted). */
static void run_changes(bool keep, bool watched)
{
        notify = NULL;
        if (watched)
                CU_ASSERT_EQUAL_FATAL(tr_cg_notify_new(&notify), 0);
        char tmp[] = "/dev/shm/procd-subtree.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        int top = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CU_ASSERT_FATAL(top >= 0);
        tr_cg_subtree *st = NULL;
        sum s = { 0 };
        check_sum(&st, top, keep, &s, 0, 0, "no subdirectory: nothing listed");
        check_sum(&st, top, keep, &s, 0, 0, "still none");
        CU_ASSERT_EQUAL(tr_cg_subtree_quiet_calls(st), watched ? 1u : 0u);
        mkdirs(tmp, "a/b");
        mkdirs(tmp, "c");
        put_value(tmp, "a", 1);
        put_value(tmp, "a/b", 10);
        put_value(tmp, "c", 100);
        check_sum(&st, top, keep, &s, 111, 1, "first call lists");
        check_sum(&st, top, keep, &s, 111, 1, "unchanged: cached");
        put_value(tmp, "a/b", 20); /* same file rewritten in place */
        check_sum(&st, top, keep, &s, 121, 1, "value changed: cached");
        CU_ASSERT_EQUAL(tr_cg_subtree_quiet_calls(st), watched ? 3u : 0u);
        mkdirs(tmp, "a/b/d");
        put_value(tmp, "a/b/d", 1000);
        check_sum(&st, top, keep, &s, 1121, 2, "grandchild added");
        rm_dir(tmp, "c");
        check_sum(&st, top, keep, &s, 1021, 3, "child removed");
        rm_dir(tmp, "a/b/d");
        mkdirs(tmp, "a/b/d");
        put_value(tmp, "a/b/d", 5000);
        check_sum(&st, top, keep, &s, 5021, 4, "grandchild replaced by a new one of the same name");
        rm_dir(tmp, "a/b");
        mkdirs(tmp, "a/x");
        put_value(tmp, "a/x", 7);
        check_sum(&st, top, keep, &s, 8, 5, "child replaced by another name (same count)");
        s.fail_once = 7;
        s.restarts = 0;
        check_sum(&st, top, keep, &s, 8, 6, "a cached cgroup answers ENODEV: listed again");
        CU_ASSERT_EQUAL(s.restarts, 1);
        tr_cg_subtree_free(st);
        if (watched)
                CU_ASSERT_EQUAL(tr_cg_notify_watches(notify), 0u); /* every watch given up */
        tr_cg_notify_free(notify);
        notify = NULL;
        close(top);
        rm_tree(tmp);
}

static void test_changes_kept(void) { run_changes(true, false); }
static void test_changes_reopened(void) { run_changes(false, false); }
static void test_changes_watched(void) { run_changes(true, true); }
static void test_changes_watched_reopened(void) { run_changes(false, true); }

static void test_too_big(void)
{
        char tmp[] = "/dev/shm/procd-subtree.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
        int n = TR_CG_SUBTREE_MAX + 5;
        long want = 0;
        for (int i = 0; i < n; i++) {
                char rel[32];
                snprintf(rel, sizeof rel, "d%d", i);
                mkdirs(tmp, rel);
                put_value(tmp, rel, i + 1);
                want += i + 1;
        }
        int top = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CU_ASSERT_FATAL(top >= 0);
        int fds = count_fds();
        tr_cg_subtree *st = NULL;
        sum s = { 0 };
        check_sum(&st, top, true, &s, want, 1, "more than the cache holds");
        check_sum(&st, top, true, &s, want, 2, "walked again, right again");
        CU_ASSERT_EQUAL(count_fds(), fds); /* nothing kept open for a subtree too big */
        mkdirs(tmp, "extra");
        put_value(tmp, "extra", 1000);
        check_sum(&st, top, true, &s, want + 1000, 3, "and after a change");
        tr_cg_subtree_free(st);
        close(top);
        rm_tree(tmp);
}

/* Real cgroups: the processes of a cgroup's descendants (cgroup.procs kept open), while
 * child cgroups come and go. */
typedef struct procs {
        int lines;
} procs;

static int count_lines(int fd, void *ud)
{
        char buf[4096];
        int r = tr_pread_all(fd, buf, sizeof buf);
        if (r < 0)
                return r;
        for (char *p = buf; *p; p++)
                ((procs *) ud)->lines += *p == '\n';
        return 0;
}

static void reset_lines(void *ud) { ((procs *) ud)->lines = 0; }

static int procs_below(tr_cg_subtree **st, tr_cgroup *cg, int i)
{
        procs p = { 0 };
        tr_cg_subtree_visit v = { .file = "cgroup.procs", .keep_open = true, .read = count_lines,
                                  .restart = reset_lines, .ud = &p };
        int r = tr_cg_subtree_each(st, tr_cgroup_dirfd(cg, i), &v);
        return r < 0 ? r : p.lines;
}

static void test_cgroups(void)
{
        if (!root_and_base("subtree on cgroups"))
                return;
        const tr_hierarchies *hs = ts_hierarchies();
        tr_cgroup *top = make_cg(hs, "subtree");
        tr_cgroup *a = make_cg(hs, "subtree/a");
        CU_ASSERT_PTR_NOT_NULL_FATAL(top);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        int i = hs->v2 >= 0 ? hs->v2 : 0;
        pid_t p1 = start_in(a, ts_sleep_forever, NULL);
        tr_cg_subtree *st = NULL;
        CU_ASSERT_EQUAL(procs_below(&st, top, i), 1);
        CU_ASSERT_EQUAL(procs_below(&st, top, i), 1);
        CU_ASSERT_EQUAL(tr_cg_subtree_listings(st), 1); /* cgroupfs: nlink counts subdirectories */
        /* b replaces a (same number of children): a's kept cgroup.procs answers ENODEV */
        tr_cgroup *b = make_cg(hs, "subtree/b");
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        pid_t p2 = start_in(b, ts_sleep_forever, NULL);
        pid_t p3 = start_in(b, ts_sleep_forever, NULL);
        ts_kill_reap(p1);
        kill_destroy(a);
        CU_ASSERT_EQUAL(procs_below(&st, top, i), 2);
        CU_ASSERT_EQUAL(tr_cg_subtree_listings(st), 2);
        CU_ASSERT_EQUAL(procs_below(&st, top, i), 2);
        CU_ASSERT_EQUAL(tr_cg_subtree_listings(st), 2);
        tr_cg_subtree_free(st);
        ts_kill_reap(p2);
        ts_kill_reap(p3);
        kill_destroy(b);
        kill_destroy(top);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "changes, files kept open", test_changes_kept },
                { "changes, files opened per pass", test_changes_reopened },
                { "changes, proven by watches", test_changes_watched },
                { "changes, proven by watches, files opened per pass", test_changes_watched_reopened },
                { "a subtree larger than the cache", test_too_big },
                { "real cgroups come and go", test_cgroups },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("cgroup subtree", NULL, NULL, tests);
}
