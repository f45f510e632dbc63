/* test_procscan.c - /proc parsers on captured and hand-written fixtures, scans of the fake
 * tree (tests/fixtures/proc/tree), and scans of the live /proc (cost printed). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/procscan.h"
#include "trackers/util.h"

/* ---- parsers ------------------------------------------------------------------------ */

static void test_stat_captured(void)
{
        _cleanup_free_ char *t = ts_read_fixture("proc/captured/sleep.stat");
        tr_proc p = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_parse_proc_stat(t, 4096, &p), 0);
        CU_ASSERT_EQUAL(p.pid, 6184);
        CU_ASSERT_EQUAL(p.ppid, 6181);
        CU_ASSERT_EQUAL(p.pgrp, 6181);
        CU_ASSERT_EQUAL(p.session, 2696);
        CU_ASSERT_EQUAL(p.state, 'S');
        CU_ASSERT_EQUAL(p.utime_ticks, 0);
        CU_ASSERT_EQUAL(p.stime_ticks, 0);
        CU_ASSERT_EQUAL(p.start_ticks, 67831);
        CU_ASSERT_EQUAL(p.vsize_bytes, 2560000);
        CU_ASSERT_EQUAL(p.rss_bytes, 307u * 4096u);
        CU_ASSERT_EQUAL(p.cutime_ticks, 0);
        /* a shell's background job: SIGINT and SIGQUIT ignored */
        CU_ASSERT_EQUAL(p.sigignore, (1u << (SIGINT - 1)) | (1u << (SIGQUIT - 1)));
}

static void test_stat_paren_comm(void)
{
        _cleanup_free_ char *t = ts_read_fixture("proc/handmade/paren.stat");
        tr_proc p = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_parse_proc_stat(t, 8192, &p), 0);
        CU_ASSERT_EQUAL(p.pid, 4242);
        CU_ASSERT_EQUAL(p.state, 't');
        CU_ASSERT_EQUAL(p.ppid, 1);
        CU_ASSERT_EQUAL(p.utime_ticks, 123);
        CU_ASSERT_EQUAL(p.stime_ticks, 45);
        CU_ASSERT_EQUAL(p.start_ticks, 987654);
        CU_ASSERT_EQUAL(p.vsize_bytes, 8192000);
        CU_ASSERT_EQUAL(p.rss_bytes, 250u * 8192u);
        CU_ASSERT_EQUAL(p.cutime_ticks, 6);
        CU_ASSERT_EQUAL(p.cstime_ticks, 7);
        CU_ASSERT_EQUAL(p.sigignore, 1u << (SIGCHLD - 1));
}

static void test_stat_malformed(void)
{
        static const char *bad[] = {
                "",
                "12",
                "12 (abc",
                "12 (abc) R 1 12 12",                         /* truncated */
                "x (abc) R 1 12 12 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 5 6 7",
                "12 (abc) R 1 12 12 0 -1 0 0 0 0 0 -1 2 0 0 20 0 1 0 5 6 7", /* negative utime */
                "12 (abc) R 1 12 12 0 -1 0 0 0 0 0 1x 2 0 0 20 0 1 0 5 6 7",
        };
        for (size_t i = 0; i < TR_ARRAY_SIZE(bad); i++) {
                tr_proc p = { 0 };
                CU_ASSERT_EQUAL(tr_parse_proc_stat(bad[i], 4096, &p), -EINVAL);
        }
        tr_proc p = { 0 };
        CU_ASSERT_EQUAL(tr_parse_proc_stat("12 (a b) Z 1 12 12 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 5 6 -1\n", 4096, &p), 0);
        CU_ASSERT_EQUAL(p.state, 'Z');
        CU_ASSERT_EQUAL(p.rss_bytes, 0);
        CU_ASSERT_EQUAL(p.sigignore, 0); /* the line stops before sigignore */
}

static void test_status(void)
{
        _cleanup_free_ char *t = ts_read_fixture("proc/captured/sleep.status");
        tr_proc p = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_parse_proc_status(t, &p), 0);
        CU_ASSERT_TRUE(p.has_status);
        CU_ASSERT_EQUAL(p.uid, 0);
        CU_ASSERT_EQUAL_FATAL(p.ngroups, 2);
        CU_ASSERT_EQUAL(p.groups[0], 27);
        CU_ASSERT_EQUAL(p.groups[1], 100);

        _cleanup_free_ char *t2 = ts_read_fixture("proc/handmade/nogroups.status");
        tr_proc q = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_parse_proc_status(t2, &q), 0);
        CU_ASSERT_EQUAL(q.uid, 65534);
        CU_ASSERT_EQUAL(q.ngroups, 0);

        tr_proc r = { 0 };
        CU_ASSERT_EQUAL(tr_parse_proc_status("Name:\tx\nGid:\t0\t0\t0\t0\n", &r), -EINVAL);
        CU_ASSERT_FALSE(r.has_status);
        /* "Uid:" must start a line */
        CU_ASSERT_EQUAL(tr_parse_proc_status("XUid:\t5\t5\t5\t5\n", &r), -EINVAL);
}

static void test_status_many_groups(void)
{
        char buf[8192] = "Uid:\t1\t1\t1\t1\nGroups:\t";
        for (int g = 1; g <= TR_SCAN_MAX_GROUPS + 10; g++)
                snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%d ", g);
        strcat(buf, "\n");
        tr_proc p = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_parse_proc_status(buf, &p), 0);
        CU_ASSERT_EQUAL(p.ngroups, TR_SCAN_MAX_GROUPS); /* the rest is not recorded */
        CU_ASSERT_EQUAL(p.groups[TR_SCAN_MAX_GROUPS - 1], TR_SCAN_MAX_GROUPS);
}

static void test_io(void)
{
        _cleanup_free_ char *t = ts_read_fixture("proc/captured/sleep.io");
        tr_proc p = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_parse_proc_io(t, &p), 0);
        CU_ASSERT_TRUE(p.has_io);
        CU_ASSERT_EQUAL(p.io_read_bytes, 442368);
        CU_ASSERT_EQUAL(p.io_write_bytes, 0);

        _cleanup_free_ char *t2 = ts_read_fixture("proc/handmade/noio.io");
        tr_proc q = { 0 };
        CU_ASSERT_EQUAL(tr_parse_proc_io(t2, &q), -EINVAL);
        CU_ASSERT_FALSE(q.has_io);
}

static void test_environ(void)
{
        char path[4096];
        _cleanup_free_ char *env = NULL;
        size_t len = 0;
        CU_ASSERT_FATAL(tr_read_file_alloc_at(AT_FDCWD, ts_fixture_path(path, sizeof path, "proc/captured/sleep.environ"),
                                              &env, &len, NULL) > 0);
        CU_ASSERT_TRUE(tr_environ_has(env, len, "PROCD_MARKER=job42"));
        CU_ASSERT_TRUE(tr_environ_has(env, len, "PATH=/usr/bin:/bin"));
        CU_ASSERT_TRUE(tr_environ_has(env, len, "LANG=C")); /* the last entry */
        CU_ASSERT_FALSE(tr_environ_has(env, len, "PROCD_MARKER=job4"));
        CU_ASSERT_FALSE(tr_environ_has(env, len, "PROCD_MARKER=job421"));
        CU_ASSERT_FALSE(tr_environ_has(env, len, "ROCD_MARKER=job42"));
        CU_ASSERT_FALSE(tr_environ_has(env, len, "PROCD_MARKER"));
        CU_ASSERT_FALSE(tr_environ_has(env, len, ""));
        /* the last entry without its NUL (a truncated read) still matches exactly */
        CU_ASSERT_TRUE(tr_environ_has(env, len - 1, "LANG=C"));
        CU_ASSERT_FALSE(tr_environ_has(env, len - 2, "LANG=C"));
        CU_ASSERT_FALSE(tr_environ_has(NULL, 0, "A=B"));
        static const char two[] = "A=1\0B=2";
        CU_ASSERT_TRUE(tr_environ_has(two, sizeof two - 1, "B=2"));
        CU_ASSERT_TRUE(tr_environ_has(two, sizeof two - 1, "A=1"));
        CU_ASSERT_FALSE(tr_environ_has(two, sizeof two - 1, "A=1B=2"));
        CU_ASSERT_FALSE(tr_environ_has(two, 2, "A=1")); /* cut inside the entry */
}

/* ---- scans of the fake tree --------------------------------------------------------- */

static void test_scan_fixture_tree(void)
{
        _cleanup_close_ int dfd = ts_open_fixture_dir("proc/tree");
        static const char *const markers[] = { "PROCD_MARKER=job42", "HOME=/home/u" };
        tr_scan_opts o = { TR_SCAN_STATUS | TR_SCAN_ENVIRON | TR_SCAN_IO, markers, 2 };
        tr_scan s = { 0 };
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_scan_take_at(dfd, &s, &o, &err), 0);
        CU_ASSERT_EQUAL(s.n, 13); /* 999 (no stat) and "self" skipped */
        for (size_t i = 1; i < s.n; i++)
                CU_ASSERT(s.procs[i - 1].pid < s.procs[i].pid);
        CU_ASSERT_TRUE(s.clk_tck > 0);
        CU_ASSERT_TRUE(s.taken_usec > 0);
        CU_ASSERT_PTR_NULL(tr_scan_find(&s, 999));
        CU_ASSERT_PTR_NULL(tr_scan_find(&s, 0));
        CU_ASSERT_PTR_NULL(tr_scan_find(&s, 100000));

        const tr_proc *p = tr_scan_find(&s, 102);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL(p->ppid, 101);
        CU_ASSERT_EQUAL(p->state, 'R');
        CU_ASSERT_EQUAL(p->utime_ticks, 30);
        CU_ASSERT_EQUAL(p->start_ticks, 1020);
        CU_ASSERT_TRUE(p->has_status && p->has_io);
        CU_ASSERT_EQUAL(p->uid, 1000);
        CU_ASSERT_EQUAL(p->io_read_bytes, 4096);
        CU_ASSERT_EQUAL(p->io_write_bytes, 8192);
        CU_ASSERT_EQUAL(p->env_match, 2); /* HOME=/home/u only */

        p = tr_scan_find(&s, 300);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL(p->env_match, 1);
        p = tr_scan_find(&s, 302);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL(p->env_match, 0);
        p = tr_scan_find(&s, 400);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL(p->uid, 65534);
        p = tr_scan_find(&s, 500);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL_FATAL(p->ngroups, 3);
        CU_ASSERT_EQUAL(p->groups[1], 4242);
        p = tr_scan_find(&s, 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL(p->ngroups, 0);

        /* stat only: nothing else filled */
        tr_proc *before = s.procs;
        size_t cap = s.cap;
        tr_scan_opts so = { 0, NULL, 0 };
        CU_ASSERT_EQUAL_FATAL(tr_scan_take_at(dfd, &s, &so, &err), 0);
        CU_ASSERT_EQUAL(s.n, 13);
        CU_ASSERT_PTR_EQUAL(s.procs, before); /* memory reused */
        CU_ASSERT_EQUAL(s.cap, cap);
        p = tr_scan_find(&s, 300);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_FALSE(p->has_status);
        CU_ASSERT_FALSE(p->has_io);
        CU_ASSERT_EQUAL(p->env_match, 0);
        /* NULL opts: stat only */
        CU_ASSERT_EQUAL(tr_scan_take_at(dfd, &s, NULL, &err), 0);
        CU_ASSERT_EQUAL(s.n, 13);
        tr_scan_free(&s);
        CU_ASSERT_PTR_NULL(s.procs);
}

/* Pids of the children of pid through the index, ascending, into out ("" when none). */
static void kids_of(const tr_scan *s, pid_t pid, char *out, size_t size)
{
        out[0] = '\0';
        const tr_proc *p = tr_scan_find(s, pid);
        if (!p)
                return;
        const size_t *k;
        size_t n = tr_scan_children(s, (size_t) (p - s->procs), &k);
        for (size_t i = 0; i < n; i++)
                snprintf(out + strlen(out), size - strlen(out), "%s%d", i ? " " : "", (int) s->procs[k[i]].pid);
}

/* pid's children in s, as "a b c", equal to want (one line per case). */
#define CHECK_KIDS(s, pid, want)                                  \
        do {                                                      \
                char kids_[256];                                  \
                kids_of((s), (pid), kids_, sizeof kids_);         \
                CU_ASSERT_STRING_EQUAL(kids_, (want));            \
        } while (0)

/* Every proc is listed once, under the proc its ppid names (a brute-force check). */
static bool index_consistent(const tr_scan *s)
{
        if (!tr_scan_has_index(s) || s->kid_off[0] != 0)
                return false;
        size_t listed = 0;
        for (size_t i = 0; i < s->n; i++) {
                const tr_proc *c = &s->procs[i];
                const tr_proc *par = c->ppid > 0 && c->ppid != c->pid ? tr_scan_find(s, c->ppid) : NULL;
                size_t want = par ? (size_t) (par - s->procs) : TR_SCAN_NONE;
                if (s->parent[i] != want)
                        return false;
                const size_t *k;
                size_t n = tr_scan_children(s, i, &k);
                for (size_t j = 0; j < n; j++) {
                        if (s->parent[k[j]] != i || (j && k[j - 1] >= k[j]))
                                return false;
                }
                listed += n;
                if (par) {
                        n = tr_scan_children(s, want, &k);
                        bool found = false;
                        for (size_t j = 0; j < n; j++)
                                found = found || k[j] == i;
                        if (!found)
                                return false;
                }
        }
        size_t with_parent = 0;
        for (size_t i = 0; i < s->n; i++)
                with_parent += s->parent[i] != TR_SCAN_NONE;
        return listed == with_parent && s->kid_off[s->n] == listed;
}

static void test_scan_children_index(void)
{
        _cleanup_close_ int dfd = ts_open_fixture_dir("proc/tree");
        tr_scan s = { 0 };
        CU_ASSERT_FALSE(tr_scan_has_index(&s));
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_scan_take_at(dfd, &s, NULL, &err), 0);
        CU_ASSERT_TRUE_FATAL(tr_scan_has_index(&s));
        CU_ASSERT_TRUE(index_consistent(&s));
        CHECK_KIDS(&s, 1, "100 200 300 302 400 500");
        /* raw ppid relation: 50 (older than 100, a stale ppid) is listed; procfam drops it */
        CHECK_KIDS(&s, 100, "50 101 103");
        CHECK_KIDS(&s, 101, "102");
        CHECK_KIDS(&s, 102, "");
        CU_ASSERT_EQUAL(s.parent[tr_scan_find(&s, 1) - s.procs], TR_SCAN_NONE); /* ppid 0 */

        /* a rescan (another tree) rebuilds it, memory kept */
        _cleanup_close_ int dfd2 = ts_open_fixture_dir("proc/tree2");
        size_t *kids_before = s.kids;
        CU_ASSERT_EQUAL_FATAL(tr_scan_take_at(dfd2, &s, NULL, &err), 0);
        CU_ASSERT_PTR_EQUAL(s.kids, kids_before);
        CU_ASSERT_TRUE(index_consistent(&s));
        CHECK_KIDS(&s, 102, "104");
        CHECK_KIDS(&s, 200, "101");
        CHECK_KIDS(&s, 100, "50");

        /* edited by hand: stale until indexed again (n changed), then right; a ppid naming
         * the proc itself or an absent pid has no parent, a cycle is indexed as it is */
        s.n--;
        CU_ASSERT_FALSE(tr_scan_has_index(&s));
        s.n++;
        s.procs[tr_scan_find(&s, 104) - s.procs].ppid = 104;
        s.procs[tr_scan_find(&s, 102) - s.procs].ppid = 31337;
        s.procs[tr_scan_find(&s, 50) - s.procs].ppid = 101;
        s.procs[tr_scan_find(&s, 101) - s.procs].ppid = 50;
        CU_ASSERT_EQUAL_FATAL(tr_scan_index(&s), 0);
        CU_ASSERT_TRUE(index_consistent(&s));
        CHECK_KIDS(&s, 102, "");
        CHECK_KIDS(&s, 104, "");
        CHECK_KIDS(&s, 50, "101");
        CHECK_KIDS(&s, 101, "50");

        /* failed scan: no index */
        CU_ASSERT_EQUAL(tr_scan_take_at(-1, &s, NULL, &err), -EBADF);
        CU_ASSERT_FALSE(tr_scan_has_index(&s));
        tr_scan_free(&s);
        CU_ASSERT_PTR_NULL(s.kids);
        CU_ASSERT_FALSE(tr_scan_has_index(&s));

        /* an empty scan indexes too */
        CU_ASSERT_EQUAL_FATAL(tr_scan_index(&s), 0);
        CU_ASSERT_TRUE(tr_scan_has_index(&s));
        CU_ASSERT_EQUAL(s.kid_off[0], 0);
        tr_scan_free(&s);
}

static void test_scan_live_index(void)
{
        tr_scan s = { 0 };
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_scan_take(&s, NULL, &err), 0);
        CU_ASSERT_TRUE(index_consistent(&s));
        /* this process is listed under its parent */
        const tr_proc *me = tr_scan_find(&s, getpid());
        CU_ASSERT_PTR_NOT_NULL_FATAL(me);
        size_t mi = (size_t) (me - s.procs);
        CU_ASSERT_NOT_EQUAL_FATAL(s.parent[mi], TR_SCAN_NONE);
        CU_ASSERT_EQUAL(s.procs[s.parent[mi]].pid, getppid());
        /* cost of the index alone (rebuilt on the same scan) */
        uint64_t t0 = tr_now_usec();
        for (int i = 0; i < 20; i++)
                CU_ASSERT_EQUAL(tr_scan_index(&s), 0);
        uint64_t per = (tr_now_usec() - t0) / 20;
        printf("\n  MEASURE children index: %zu processes, %llu us per build (scan %llu us)\n", s.n,
               (unsigned long long) per, (unsigned long long) s.cost_usec);
        tr_scan_free(&s);
}

static void test_scan_bad_dir(void)
{
        tr_scan s = { 0 };
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_scan_take_at(-1, &s, NULL, &err), -EBADF);
        CU_ASSERT_EQUAL(err.code, EBADF);
        tr_scan_free(&s);
}

/* ---- live /proc --------------------------------------------------------------------- */

static void test_scan_live_self(void)
{
        tr_scan s = { 0 };
        tr_error err = { 0 };
        static const char *const markers[] = { "PROCD_NO_SUCH=1" };
        tr_scan_opts o = { TR_SCAN_STATUS | TR_SCAN_ENVIRON | TR_SCAN_IO, markers, 1 };
        CU_ASSERT_EQUAL_FATAL(tr_scan_take(&s, &o, &err), 0);
        const tr_proc *me = tr_scan_find(&s, getpid());
        CU_ASSERT_PTR_NOT_NULL_FATAL(me);
        uint64_t st = 0;
        CU_ASSERT_EQUAL(tr_pid_start_ticks(getpid(), &st), 0);
        CU_ASSERT_EQUAL(me->start_ticks, st);
        CU_ASSERT_EQUAL(me->ppid, getppid());
        CU_ASSERT_EQUAL(me->state, 'R');
        CU_ASSERT_TRUE(me->has_status);
        CU_ASSERT_EQUAL(me->uid, getuid());
        CU_ASSERT_TRUE(me->has_io);
        CU_ASSERT_EQUAL(me->env_match, 0);
        CU_ASSERT_TRUE(me->rss_bytes > 0);
        bool sorted = true;
        for (size_t i = 1; i < s.n; i++)
                sorted = sorted && s.procs[i - 1].pid < s.procs[i].pid;
        CU_ASSERT_TRUE(sorted);
        tr_scan_free(&s);
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return (x > y) - (x < y);
}

static void measure(const char *what, const tr_scan_opts *o)
{
        tr_scan s = { 0 };
        tr_error err = { 0 };
        uint64_t cost[15];
        size_t n = 0;
        for (size_t i = 0; i < TR_ARRAY_SIZE(cost); i++) {
                CU_ASSERT_EQUAL_FATAL(tr_scan_take(&s, o, &err), 0);
                cost[i] = s.cost_usec;
                n = s.n;
        }
        qsort(cost, TR_ARRAY_SIZE(cost), sizeof cost[0], cmp_u64);
        uint64_t med = cost[TR_ARRAY_SIZE(cost) / 2];
        printf("\n  MEASURE scan cost (%s): %zu processes, median %llu us, min %llu us -> %.2f us/process\n", what, n,
               (unsigned long long) med, (unsigned long long) cost[0], n ? (double) med / (double) n : 0.0);
        tr_scan_free(&s);
}

static void test_scan_cost(void)
{
        /* a few hundred processes so that the per-process figure is not noise */
        pid_t kids[300];
        size_t nk = 0;
        for (; nk < TR_ARRAY_SIZE(kids); nk++) {
                kids[nk] = ts_sleeper();
                if (kids[nk] <= 1)
                        break;
        }
        usleep(100000);
        tr_scan_opts stat_only = { 0, NULL, 0 };
        static const char *const markers[] = { "PROCD_MARKER=job42" };
        tr_scan_opts all = { TR_SCAN_STATUS | TR_SCAN_ENVIRON | TR_SCAN_IO, markers, 1 };
        tr_scan_opts io = { TR_SCAN_IO, NULL, 0 };
        measure("stat only", &stat_only);
        measure("stat+io (a plain family's scan)", &io);
        measure("stat+status+environ+io", &all);
        for (size_t i = 0; i < nk; i++)
                ts_kill_reap(kids[i]);
}

static int churner(void *arg)
{
        (void) arg;
        /* short-lived children, forever: processes vanish while the scans run */
        for (;;) {
                pid_t p = fork();
                if (p == 0)
                        _exit(0);
                if (p > 0)
                        waitpid(p, NULL, 0);
        }
        return 0;
}

static void test_scan_vanishing(void)
{
        pid_t c[2] = { ts_fork(churner, NULL), ts_fork(churner, NULL) };
        CU_ASSERT_FATAL(c[0] > 1 && c[1] > 1);
        tr_scan s = { 0 };
        tr_error err = { 0 };
        static const char *const markers[] = { "X=1" };
        tr_scan_opts o = { TR_SCAN_STATUS | TR_SCAN_ENVIRON | TR_SCAN_IO, markers, 1 };
        int fails = 0;
        for (int i = 0; i < 200; i++)
                if (tr_scan_take(&s, i % 2 ? &o : NULL, &err) < 0) {
                        fails++;
                        printf("\n  scan failed: %s\n", err.msg);
                }
        CU_ASSERT_EQUAL(fails, 0);
        ts_kill_reap(c[0]);
        ts_kill_reap(c[1]);
        ts_reap_orphans(500); /* a churner's last child, orphaned to this subreaper */
        tr_scan_free(&s);
}

int main(void)
{
        /* orphans of the tests' processes come here and are reaped by pid */
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                perror("PR_SET_CHILD_SUBREAPER");
        CU_TestInfo parsers[] = {
                { "stat captured", test_stat_captured },
                { "stat comm with spaces and ')'", test_stat_paren_comm },
                { "stat malformed", test_stat_malformed },
                { "status", test_status },
                { "status many groups", test_status_many_groups },
                { "io", test_io },
                { "environ exact entries", test_environ },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo fixture[] = {
                { "scan fake tree", test_scan_fixture_tree },
                { "scan bad dirfd", test_scan_bad_dir },
                { "children index", test_scan_children_index },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo live[] = {
                { "scan finds self", test_scan_live_self },
                { "children index of the live /proc", test_scan_live_index },
                { "scan with vanishing processes", test_scan_vanishing },
                { "scan cost", test_scan_cost },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "procscan parsers", NULL, NULL, NULL, NULL, parsers },
                { "procscan fixture tree", NULL, NULL, NULL, NULL, fixture },
                { "procscan live", NULL, NULL, NULL, NULL, live },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
