/* Unit tests of trackers/pidref.c: open (pidfd + start time), same-process checks, signal
 * through the pidfd or after a start-time recheck, close (cleanup attribute), and the
 * safety rules: pid <= 1 never signalled, pid <= 0 never opened, a thread id refused, a
 * reference whose pid changed hands reaches nobody.  Every process signalled here is a
 * child this test started. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/pidref.h"

static bool fd_open(int fd) { return fd >= 0 && fcntl(fd, F_GETFD) >= 0; }

static void test_open_self(void)
{
        tr_pidref ref;
        uint64_t st = 0;
        CU_ASSERT_FATAL(tr_pid_start_ticks(getpid(), &st) == 0);
        CU_ASSERT_EQUAL(tr_pidref_open(getpid(), 0, &ref), 0);
        CU_ASSERT_EQUAL(ref.pid, getpid());
        CU_ASSERT_EQUAL(ref.start_ticks, st);
        if (ref.pidfd < 0)
                printf("note: no pidfd_open here: references hold pid + start time alone\n");
        else
                CU_ASSERT(fcntl(ref.pidfd, F_GETFD) & FD_CLOEXEC);
        CU_ASSERT_EQUAL(tr_pidref_check(&ref), 0);
        CU_ASSERT(tr_pidref_alive(&ref));
        CU_ASSERT(tr_pidref_same(&ref, &ref));
        tr_pidref other = { .pid = getpid(), .start_ticks = st + 1, .pidfd = -1 };
        CU_ASSERT(!tr_pidref_same(&ref, &other));
        CU_ASSERT_EQUAL(tr_pidref_signal(&ref, 0), 0); /* a probe */
        int fd = ref.pidfd;
        tr_pidref_close(&ref);
        CU_ASSERT(!fd_open(fd));
        CU_ASSERT_EQUAL(ref.pid, 0);
        CU_ASSERT_EQUAL(ref.pidfd, -1);
        tr_pidref_close(&ref); /* again: a no-op */
        /* an expected start time that is not the process's: another process */
        CU_ASSERT_EQUAL(tr_pidref_open(getpid(), st + 1, &ref), -ESRCH);
        CU_ASSERT_EQUAL(ref.pid, 0);
        CU_ASSERT_EQUAL(ref.pidfd, -1);
}

static void check_refused_open(pid_t pid)
{
        tr_pidref ref;
        int r = tr_pidref_open(pid, 0, &ref);
        if (r != -EINVAL)
                fprintf(stderr, "tr_pidref_open(%d): %d, want -EINVAL\n", (int) pid, r);
        CU_ASSERT(r == -EINVAL && ref.pid == 0 && ref.pidfd == -1);
}

static void check_refused_signal(pid_t pid)
{
        tr_pidref ref = { .pid = pid, .start_ticks = 1, .pidfd = -1 };
        int r = tr_pidref_signal(&ref, 0), k = tr_safe_kill(pid, 0, 0);
        if (r != -EPERM || k != -EPERM)
                fprintf(stderr, "signal to %d: %d / tr_safe_kill %d, want -EPERM\n", (int) pid, r, k);
        CU_ASSERT(r == -EPERM && k == -EPERM);
}

static void test_safety(void)
{
        check_refused_open(0);
        check_refused_open(-1);
        check_refused_open(-12345);
        check_refused_signal(1);
        check_refused_signal(0);
        check_refused_signal(-1);
        /* init may be referred to (it is watched, read), never signalled, even through a
         * pidfd */
        tr_pidref init;
        if (tr_pidref_open(1, 0, &init) == 0) {
                CU_ASSERT_EQUAL(tr_pidref_signal(&init, 0), -EPERM);
                tr_pidref_close(&init);
        }
}

static void *thread_main(void *arg)
{
        pid_t *tid = arg;
        __atomic_store_n(tid, (pid_t) syscall(SYS_gettid), __ATOMIC_SEQ_CST);
        pause();
        return NULL;
}

static void test_thread_id(void)
{
        pid_t tid = 0;
        pthread_t th;
        CU_ASSERT_FATAL(pthread_create(&th, NULL, thread_main, &tid) == 0);
        while (__atomic_load_n(&tid, __ATOMIC_SEQ_CST) == 0)
                sched_yield();
        tr_pidref ref;
        int r = tr_pidref_open(tid, 0, &ref);
        /* where pidfd_open is missing the thread id reads like a process: only the pidfd
         * probe tells them apart */
        if (r == 0) {
                CU_ASSERT_EQUAL(ref.pidfd, -1);
                tr_pidref_close(&ref);
        } else {
                CU_ASSERT_EQUAL(r, -EINVAL);
        }
        pthread_cancel(th);
        pthread_join(th, NULL);
}

static void test_child(void)
{
        pid_t c = ts_sleeper();
        CU_ASSERT_FATAL(c > 1);
        int fd;
        {
                _cleanup_pidref_ tr_pidref ref = TR_PIDREF_EMPTY;
                CU_ASSERT_FATAL(tr_pidref_open(c, 0, &ref) == 0);
                fd = ref.pidfd;
                CU_ASSERT_EQUAL(tr_pidref_signal(&ref, 0), 0);
                CU_ASSERT_EQUAL(tr_pidref_signal(&ref, SIGKILL), 0);
                int st = 0;
                CU_ASSERT_EQUAL(waitpid(c, &st, 0), c);
                CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
                /* reaped: the reference reaches nobody, even should the pid be reused */
                CU_ASSERT_EQUAL(tr_pidref_check(&ref), -ESRCH);
                CU_ASSERT(!tr_pidref_alive(&ref));
                CU_ASSERT_EQUAL(tr_pidref_signal(&ref, SIGKILL), -ESRCH);
        }
        CU_ASSERT(!fd_open(fd)); /* the cleanup attribute closed it */
}

/* Without a pidfd the start time is read again before kill(): a reference whose start
 * time is not the live process's (as after a reuse of its pid) signals nothing. */
static void test_no_pidfd_recheck(void)
{
        pid_t c = ts_sleeper();
        CU_ASSERT_FATAL(c > 1);
        uint64_t st = 0;
        CU_ASSERT_FATAL(tr_pid_start_ticks(c, &st) == 0);
        tr_pidref stale = { .pid = c, .start_ticks = st + 1, .pidfd = -1 };
        CU_ASSERT_EQUAL(tr_pidref_check(&stale), -ESRCH);
        CU_ASSERT_EQUAL(tr_pidref_signal(&stale, SIGKILL), -ESRCH);
        CU_ASSERT_EQUAL(tr_safe_kill(c, st + 1, SIGKILL), -ESRCH);
        CU_ASSERT(ts_alive(c));
        tr_pidref bare = { .pid = c, .start_ticks = st, .pidfd = -1 };
        CU_ASSERT_EQUAL(tr_pidref_signal(&bare, SIGKILL), 0);
        int status = 0;
        CU_ASSERT_EQUAL(waitpid(c, &status, 0), c);
        CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "open, check and close this process", test_open_self },
                { "pid <= 1 never signalled, pid <= 0 never opened", test_safety },
                { "a thread id is refused", test_thread_id },
                { "a child: signal, reap, then nobody", test_child },
                { "without a pidfd: start time read again", test_no_pidfd_recheck },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("pidref", NULL, NULL, tests);
}
