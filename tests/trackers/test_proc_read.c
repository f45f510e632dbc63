/* Unit tests of trackers/proc-read.c: the readers of one pid (start time, liveness, parent,
 * uid, thread group, own threads, children, age, the file it runs) on this process, its thread and children
 * it started, and on a pid that is gone.  The parsers are tested in test_procscan.c. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/proc-read.h"

/* A pid that named a child of ours and is gone now (reaped). */
static pid_t gone_pid(void)
{
        pid_t p = ts_sleeper();
        CU_ASSERT_FATAL(p > 1);
        ts_kill_reap(p);
        return p;
}

static void test_self(void)
{
        pid_t self = getpid(), ppid = 0, tgid = 0;
        uint64_t st = 0;
        uid_t uid = 12345;
        CU_ASSERT_EQUAL(tr_pid_start_ticks(self, &st), 0);
        CU_ASSERT(st > 0);
        CU_ASSERT(tr_pid_alive(self));
        CU_ASSERT(tr_pid_alive_as(self, st));
        CU_ASSERT(!tr_pid_alive_as(self, st + 1));
        CU_ASSERT_EQUAL(tr_proc_ppid(self, &ppid), 0);
        CU_ASSERT_EQUAL(ppid, getppid());
        CU_ASSERT_EQUAL(tr_proc_uid(self, &uid), 0);
        CU_ASSERT_EQUAL(uid, getuid());
        uid = 12345;
        CU_ASSERT_EQUAL(tr_proc_uid_checked(self, st, &uid), 0);
        CU_ASSERT_EQUAL(uid, getuid());
        CU_ASSERT_EQUAL(tr_proc_uid_checked(self, st + 1, &uid), -ESRCH); /* another process */
        CU_ASSERT_EQUAL(tr_proc_tgid(self, &tgid), 0);
        CU_ASSERT_EQUAL(tgid, self);
        CU_ASSERT(!tr_proc_is_thread(self));
        CU_ASSERT(tr_proc_is_own_thread(self));
        CU_ASSERT(!tr_proc_is_own_thread(getppid()));
        double age = -1;
        CU_ASSERT_EQUAL(tr_proc_age_seconds(st, &age), 0);
        CU_ASSERT(age >= 0);
        CU_ASSERT_EQUAL(tr_proc_age_seconds(0, &age), -EINVAL);
}

typedef struct thread_box {
        pid_t tid;
        int stop_fd[2];
} thread_box;

static void *thread_main(void *arg)
{
        thread_box *b = arg;
        __atomic_store_n(&b->tid, (pid_t) syscall(SYS_gettid), __ATOMIC_SEQ_CST);
        char c;
        (void) !read(b->stop_fd[0], &c, 1);
        return NULL;
}

static void test_thread(void)
{
        thread_box b = { .tid = 0 };
        CU_ASSERT_FATAL(pipe(b.stop_fd) == 0);
        pthread_t th;
        CU_ASSERT_FATAL(pthread_create(&th, NULL, thread_main, &b) == 0);
        while (__atomic_load_n(&b.tid, __ATOMIC_SEQ_CST) == 0)
                sched_yield();
        pid_t tgid = 0;
        CU_ASSERT_EQUAL(tr_proc_tgid(b.tid, &tgid), 0);
        CU_ASSERT_EQUAL(tgid, getpid());
        CU_ASSERT(tr_proc_is_thread(b.tid));
        CU_ASSERT(tr_proc_is_own_thread(b.tid));
        (void) !write(b.stop_fd[1], "x", 1);
        pthread_join(th, NULL);
        close(b.stop_fd[0]);
        close(b.stop_fd[1]);
}

static bool holds(const tr_proc_ident *ids, size_t n, pid_t pid, uint64_t st)
{
        for (size_t i = 0; i < n; i++)
                if (ids[i].pid == pid && ids[i].start_ticks == st)
                        return true;
        return false;
}

static void test_children(void)
{
        pid_t a = ts_sleeper(), b = ts_sleeper();
        CU_ASSERT_FATAL(a > 1 && b > 1);
        uint64_t sa = 0, sb = 0;
        CU_ASSERT_EQUAL(tr_pid_start_ticks(a, &sa), 0);
        CU_ASSERT_EQUAL(tr_pid_start_ticks(b, &sb), 0);
        tr_proc_ident *ids = NULL;
        size_t n = 0, cap = 0;
        CU_ASSERT_EQUAL(tr_proc_children(getpid(), &ids, &n, &cap), 0);
        CU_ASSERT(holds(ids, n, a, sa));
        CU_ASSERT(holds(ids, n, b, sb));
        size_t before = n;
        CU_ASSERT_EQUAL(tr_proc_children(a, &ids, &n, &cap), 0); /* a sleeper has none */
        CU_ASSERT_EQUAL(n, before);
        free(ids);
        ts_kill_reap(a);
        ts_kill_reap(b);
}

static void test_gone(void)
{
        pid_t p = gone_pid(), ppid;
        uint64_t st;
        uid_t uid;
        pid_t tgid;
        CU_ASSERT_EQUAL(tr_pid_start_ticks(p, &st), -ESRCH);
        CU_ASSERT(!tr_pid_alive(p));
        CU_ASSERT_EQUAL(tr_proc_ppid(p, &ppid), -ESRCH);
        CU_ASSERT_EQUAL(tr_proc_uid(p, &uid), -ESRCH);
        CU_ASSERT_EQUAL(tr_proc_tgid(p, &tgid), -ESRCH);
        CU_ASSERT(!tr_proc_is_thread(p));
        tr_proc_ident *ids = NULL;
        size_t n = 0, cap = 0;
        CU_ASSERT_EQUAL(tr_proc_children(p, &ids, &n, &cap), 0);
        CU_ASSERT_EQUAL(n, 0);
        free(ids);
        /* pid 0 and negative pids name no process */
        CU_ASSERT_EQUAL(tr_pid_start_ticks(0, &st), -EINVAL);
        CU_ASSERT_EQUAL(tr_proc_uid(-1, &uid), -EINVAL);
        CU_ASSERT(!tr_pid_alive(0));
}

/* The file a process runs: this test's binary; a forked child runs it too until it execs
 * /bin/sleep; a pid gone has none. */
static void test_exe(void)
{
        struct stat self, sleep_bin;
        CU_ASSERT_EQUAL_FATAL(stat("/proc/self/exe", &self), 0);
        CU_ASSERT_EQUAL_FATAL(stat("/bin/sleep", &sleep_bin), 0);
        tr_exe_id me, kid;
        CU_ASSERT_EQUAL(tr_proc_exe_id(getpid(), &me), 0);
        CU_ASSERT(me.dev == (uint64_t) self.st_dev && me.ino == (uint64_t) self.st_ino);
        int go[2];
        CU_ASSERT_EQUAL_FATAL(pipe2(go, O_CLOEXEC), 0);
        pid_t p = ts_fork(ts_exec_sleep_at_gate, go);
        close(go[0]);
        CU_ASSERT_FATAL(p > 1);
        CU_ASSERT_EQUAL(tr_proc_exe_id(p, &kid), 0);
        CU_ASSERT(tr_exe_id_equal(kid, me));
        CU_ASSERT_EQUAL(write(go[1], "x", 1), 1);
        close(go[1]);
        for (int i = 0; i < 500 && tr_proc_exe_id(p, &kid) == 0 && tr_exe_id_equal(kid, me); i++)
                ts_msleep(10);
        CU_ASSERT_EQUAL(tr_proc_exe_id(p, &kid), 0);
        CU_ASSERT(kid.dev == (uint64_t) sleep_bin.st_dev && kid.ino == (uint64_t) sleep_bin.st_ino);
        ts_kill_reap(p);
        CU_ASSERT_EQUAL(tr_proc_exe_id(p, &kid), -ESRCH);
        CU_ASSERT_EQUAL(tr_proc_exe_id(0, &kid), -EINVAL);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "this process", test_self },
                { "a thread of this process", test_thread },
                { "children with start times", test_children },
                { "a pid that is gone", test_gone },
                { "the file a process runs, before and after its exec", test_exe },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("proc-read", NULL, NULL, tests);
}
