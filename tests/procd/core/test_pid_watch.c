/* test_pid_watch.c - process exits through one epoll fd: a callback per exit, none after a
 * cancel, a callback that cancels a watch whose process died at the same time. */
#include <CUnit/CUnit.h>
#include <glib.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procd/core/pid-watch.h"
#include "testsupport.h"

#define N_PROCS 3

typedef struct slot {
        pid_t pid;
        int pidfd;
        pd_pid_watch_entry *e;
        int fired, destroyed;
        struct slot *other; /* cancelled by this slot's callback when not NULL */
} slot;

static void on_exit_cb(void *data)
{
        slot *s = data;
        s->fired++;
        s->e = NULL;
        if (s->other && s->other->e) {
                pd_pid_watch_cancel(s->other->e);
                s->other->e = NULL;
        }
}

static void on_destroy(void *data) { ((slot *) data)->destroyed++; }

static gboolean give_up(gpointer data)
{
        *(bool *) data = true;
        return G_SOURCE_REMOVE;
}

/* Iterate the default main context until want callbacks ran in total (bounded at 10 s). */
static void run_until(slot *s, int n, int want)
{
        bool timed_out = false;
        guint t = g_timeout_add_seconds(10, give_up, &timed_out);
        for (;;) {
                int fired = 0;
                for (int i = 0; i < n; i++)
                        fired += s[i].fired;
                if (fired >= want || timed_out)
                        break;
                g_main_context_iteration(NULL, TRUE);
        }
        if (!timed_out)
                g_source_remove(t);
        /* a few more non-blocking rounds: nothing else may fire */
        for (int i = 0; i < 5; i++)
                g_main_context_iteration(NULL, FALSE);
}

static bool start(slot *s, int n, pd_pid_watch *w)
{
        for (int i = 0; i < n; i++) {
                s[i] = (slot){ .pid = ts_sleeper(), .pidfd = -1 };
                if (s[i].pid <= 1)
                        return false;
                s[i].pidfd = (int) syscall(SYS_pidfd_open, s[i].pid, 0);
                if (s[i].pidfd < 0)
                        return false;
                s[i].e = pd_pid_watch_add(w, s[i].pidfd, on_exit_cb, &s[i], on_destroy);
                if (!s[i].e)
                        return false;
        }
        return true;
}

static void finish(slot *s, int n)
{
        for (int i = 0; i < n; i++) {
                if (s[i].pid > 1)
                        ts_kill_reap(s[i].pid);
                if (s[i].pidfd >= 0)
                        close(s[i].pidfd);
        }
}

static void test_exit_and_cancel(void)
{
        pd_pid_watch *w = pd_pid_watch_new(NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        slot s[N_PROCS];
        CU_ASSERT_FATAL(start(s, N_PROCS, w));
        pd_pid_watch_cancel(s[1].e); /* watched no longer: its exit calls nobody */
        s[1].e = NULL;
        CU_ASSERT_EQUAL(s[1].destroyed, 1);
        for (int i = 0; i < N_PROCS; i++)
                kill(s[i].pid, SIGKILL);
        run_until(s, N_PROCS, 2);
        CU_ASSERT_EQUAL(s[0].fired, 1);
        CU_ASSERT_EQUAL(s[1].fired, 0);
        CU_ASSERT_EQUAL(s[2].fired, 1);
        for (int i = 0; i < N_PROCS; i++)
                CU_ASSERT_EQUAL(s[i].destroyed, 1);
        pd_pid_watch_free(w);
        finish(s, N_PROCS);
}

static void test_cancel_from_callback(void)
{
        pd_pid_watch *w = pd_pid_watch_new(NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        slot s[2];
        CU_ASSERT_FATAL(start(s, 2, w));
        s[0].other = &s[1];
        s[1].other = &s[0];
        kill(s[0].pid, SIGKILL);
        kill(s[1].pid, SIGKILL);
        /* both readable before the loop runs: whichever callback runs first cancels the other */
        waitid(P_PID, (id_t) s[0].pid, NULL, WEXITED | WNOWAIT);
        waitid(P_PID, (id_t) s[1].pid, NULL, WEXITED | WNOWAIT);
        run_until(s, 2, 1);
        CU_ASSERT_EQUAL(s[0].fired + s[1].fired, 1);
        CU_ASSERT_EQUAL(s[0].destroyed, 1);
        CU_ASSERT_EQUAL(s[1].destroyed, 1);
        pd_pid_watch_free(w);
        finish(s, 2);
}

static void test_free_cancels(void)
{
        pd_pid_watch *w = pd_pid_watch_new(NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        slot s[2];
        CU_ASSERT_FATAL(start(s, 2, w));
        pd_pid_watch_free(w); /* still watched: destroyed, never called */
        for (int i = 0; i < 2; i++) {
                CU_ASSERT_EQUAL(s[i].fired, 0);
                CU_ASSERT_EQUAL(s[i].destroyed, 1);
        }
        finish(s, 2);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "a callback per exit, none after cancel", test_exit_and_cancel },
                { "a callback cancels a watch that is ready too", test_cancel_from_callback },
                { "free cancels what is left", test_free_cancels },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("pid watch", NULL, NULL, tests);
}
