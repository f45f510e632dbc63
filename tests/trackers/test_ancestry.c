/* Unit tests of trackers/ancestry.c: the caller's parent chain held by /proc/PID fds is the
 * chain getppid() walks; it is walked once and then used as held; walked again when an
 * ancestor exited (the orphan goes to this test, a subreaper), when a read through an fd
 * failed, and in a forked child (another caller, another chain).  Every process here is a
 * child or grandchild this test started. */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/ancestry.h"
#include "trackers/proc-read.h"

static int count_each(int dirfd, pid_t pid, void *arg)
{
        (void) dirfd;
        (void) pid;
        ++*(int *) arg;
        return 0;
}

static int match_pid(int dirfd, pid_t pid, void *arg)
{
        (void) dirfd;
        return pid == *(pid_t *) arg ? 1 : 0;
}

/* reads the ancestor's stat through its fd, as the gate reads its cgroup file: -1 when gone */
static int read_each(int dirfd, pid_t pid, void *arg)
{
        (void) pid;
        tr_proc p;
        if (tr_proc_stat_read_at(dirfd, &p) < 0)
                return -1;
        ++*(int *) arg;
        return 0;
}

/* -1 (as for a read that failed) on the first call, 0 after */
static int fail_once(int dirfd, pid_t pid, void *arg)
{
        (void) dirfd;
        (void) pid;
        return (*(int *) arg)++ == 0 ? -1 : 0;
}

static void test_chain(void)
{
        tr_ancestry *a = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_ancestry_new(&a), 0);
        pid_t pids[TR_ANCESTRY_MAX];
        int n = tr_ancestry_pids(a, pids, TR_ANCESTRY_MAX);
        CU_ASSERT_FATAL(n >= 1);
        /* link by link what the pids say */
        pid_t want = getppid();
        for (int k = 0; k < n; k++) {
                CU_ASSERT_EQUAL(pids[k], want);
                pid_t up = 0;
                if (pids[k] == 1 || tr_proc_ppid(pids[k], &up) < 0)
                        break;
                want = up;
        }
        CU_ASSERT(pids[n - 1] == 1 || want == 0);
        CU_ASSERT_EQUAL(tr_ancestry_walks(a), 1u);
        int seen = 0;
        CU_ASSERT_EQUAL(tr_ancestry_find(a, count_each, &seen), 0);
        CU_ASSERT_EQUAL(seen, n);
        CU_ASSERT_EQUAL(tr_ancestry_find(a, match_pid, &pids[n - 1]), pids[n - 1]);
        CU_ASSERT_EQUAL(tr_ancestry_walks(a), 1u); /* all alive: held, not walked again */
        int calls = 0;
        CU_ASSERT_EQUAL(tr_ancestry_find(a, fail_once, &calls), 0);
        CU_ASSERT_EQUAL(tr_ancestry_walks(a), 2u); /* a failed read: walked again */
        tr_ancestry_free(a);
        tr_ancestry_free(NULL);
}

typedef struct orphan_arg {
        pid_t test;
        int go[2];     /* B -> A: exit now; then test -> B: A is reaped */
        int result[2]; /* B -> test: its pid, then its verdict */
} orphan_arg;

/* B, A's child: holds its chain (A, the test, ...); A exits; B, now the test's child, finds
 * A's fd dead and walks again.  0, or the bit of the first check that failed. */
static int run_b(void *arg)
{
        orphan_arg *o = arg;
        pid_t self = getpid(), a_pid = getppid();
        if (write(o->result[1], &self, sizeof self) != (ssize_t) sizeof self)
                return 64;
        tr_ancestry *a = NULL;
        if (tr_ancestry_new(&a) < 0)
                return 1;
        pid_t pids[TR_ANCESTRY_MAX];
        int n = tr_ancestry_pids(a, pids, TR_ANCESTRY_MAX);
        int bad = n >= 2 && pids[0] == a_pid && pids[1] == o->test ? 0 : 2;
        if (write(o->go[1], "x", 1) != 1)
                bad |= 64;
        for (int i = 0; i < 5000 && getppid() == a_pid; i++)
                ts_msleep(1);
        if (getppid() != o->test)
                bad |= 4; /* not reparented to the test (a subreaper) */
        char c;
        if (read(o->go[0], &c, 1) != 1) /* A reaped: its /proc/PID is gone */
                bad |= 64;
        int seen = 0;
        if (tr_ancestry_find(a, read_each, &seen) != 0 || tr_ancestry_walks(a) != 2)
                bad |= 8;
        n = tr_ancestry_pids(a, pids, TR_ANCESTRY_MAX);
        if (n < 1 || pids[0] != o->test || seen != n)
                bad |= 16;
        if (tr_ancestry_find(a, match_pid, &a_pid) != 0)
                bad |= 32; /* the dead ancestor is no longer in the chain */
        tr_ancestry_free(a);
        char v = (char) bad;
        if (write(o->result[1], &v, 1) != 1)
                return 64;
        return bad;
}

static int run_a(void *arg)
{
        orphan_arg *o = arg;
        if (ts_fork(run_b, o) <= 1)
                return 1;
        char c;
        return read(o->go[0], &c, 1) == 1 ? 0 : 2;
}

static void test_dead_ancestor(void)
{
        orphan_arg o = { .test = getpid() };
        CU_ASSERT_EQUAL_FATAL(ts_pipes(o.go, o.result), 0);
        pid_t a = ts_fork(run_a, &o);
        CU_ASSERT_FATAL(a > 1);
        pid_t b = 0;
        char verdict = 127;
        CU_ASSERT_EQUAL(read(o.result[0], &b, sizeof b), (ssize_t) sizeof b);
        int st = ts_wait(a, 10000); /* A exits once B held its chain */
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CU_ASSERT_EQUAL(write(o.go[1], "r", 1), 1);
        CU_ASSERT_EQUAL(read(o.result[0], &verdict, 1), 1);
        if (verdict)
                printf("\n    orphan's checks: 0x%x\n", verdict);
        CU_ASSERT_EQUAL(verdict, 0);
        if (b > 1) /* ours since A exited */
                CU_ASSERT_EQUAL(ts_wait(b, 10000) >= 0, true);
        for (int i = 0; i < 2; i++) {
                close(o.go[i]);
                close(o.result[i]);
        }
}

/* A forked child given the parent's chain walks its own: its parent (the test) first. */
static int run_forked(void *arg)
{
        tr_ancestry *a = arg;
        pid_t pids[TR_ANCESTRY_MAX];
        int n = tr_ancestry_pids(a, pids, TR_ANCESTRY_MAX);
        return n >= 2 && pids[0] == getppid() && tr_ancestry_walks(a) == 2 ? 0 : 1;
}

static void test_after_fork(void)
{
        tr_ancestry *a = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_ancestry_new(&a), 0);
        pid_t pids[TR_ANCESTRY_MAX];
        CU_ASSERT(tr_ancestry_pids(a, pids, TR_ANCESTRY_MAX) >= 1);
        pid_t c = ts_fork(run_forked, a);
        CU_ASSERT_FATAL(c > 1);
        int st = ts_wait(c, 10000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CU_ASSERT_EQUAL(tr_ancestry_pids(a, pids, TR_ANCESTRY_MAX) >= 1 && pids[0] == getppid(), true);
        CU_ASSERT_EQUAL(tr_ancestry_walks(a), 1u); /* the child's walk was its own */
        tr_ancestry_free(a);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "the chain is getppid()'s, walked once", test_chain },
                { "an ancestor exits: walked again", test_dead_ancestor },
                { "a forked child walks its own chain", test_after_fork },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("ancestry", NULL, NULL, tests);
}
