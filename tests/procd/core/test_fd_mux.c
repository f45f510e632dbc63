/* test_fd_mux.c - rare fds through one epoll fd: a callback per turn while its fd is
 * readable, G_SOURCE_REMOVE and removal from any callback (its own entry or another
 * ready one), at most PD_FD_MUX_PER_TURN callbacks a turn, free removes what is left, a
 * pid-watch set inside the mux, a timer, an edge-triggered entry (once per write, read or
 * not), and pd_fd_mux_run's turns (the set's entries,
 * GLib timeouts, an fd outside the set, a wakeup from another thread, an entry removed
 * after its turn's wait fetched it, a turn that dispatches the set without GLib's check
 * and the sources its callback adds). */
#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <glib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procd/core/fd-mux.h"
#include "procd/core/pid-watch.h"
#include "testsupport.h"

#define N_PIPES (PD_FD_MUX_PER_TURN + 4)

typedef enum action { KEEP, DRAIN, STOP, REMOVE_SELF, REMOVE_OTHER } action;

typedef struct pipe_slot {
        int fds[2];
        pd_fd_mux_entry *e;
        int fired;
        action act;
        struct pipe_slot *other; /* REMOVE_OTHER: removed by this slot's callback */
} pipe_slot;

static gboolean on_readable(gint fd, GIOCondition cond, gpointer data)
{
        pipe_slot *p = data;
        p->fired++;
        CU_ASSERT(cond & G_IO_IN);
        char b[16];
        switch (p->act) {
        case KEEP: /* leaves the byte: level-triggered, called again next turn */
                return G_SOURCE_CONTINUE;
        case DRAIN:
                CU_ASSERT(read(fd, b, sizeof b) > 0);
                return G_SOURCE_CONTINUE;
        case STOP:
                p->e = NULL;
                return G_SOURCE_REMOVE;
        case REMOVE_SELF:
                pd_fd_mux_remove(p->e);
                p->e = NULL;
                return G_SOURCE_CONTINUE; /* removed already: the return value no longer counts */
        case REMOVE_OTHER:
                pd_fd_mux_remove(p->other->e);
                p->other->e = NULL;
                return G_SOURCE_CONTINUE;
        }
        return G_SOURCE_CONTINUE;
}

static void open_slots(pd_fd_mux *m, pipe_slot *p, int n)
{
        for (int i = 0; i < n; i++) {
                p[i] = (pipe_slot){ .act = KEEP };
                CU_ASSERT_EQUAL_FATAL(pipe2(p[i].fds, O_CLOEXEC | O_NONBLOCK), 0);
                p[i].e = pd_fd_mux_add(m, p[i].fds[0], G_IO_IN, on_readable, &p[i]);
                CU_ASSERT_PTR_NOT_NULL_FATAL(p[i].e);
        }
}

static void close_slots(pipe_slot *p, int n)
{
        for (int i = 0; i < n; i++) {
                close(p[i].fds[0]);
                close(p[i].fds[1]);
        }
}

static void make_ready(pipe_slot *p) { CU_ASSERT_EQUAL(write(p->fds[1], "x", 1), 1); }

/* Main-loop turns without blocking (the mux's fd was readable before each). */
static void turns(int n)
{
        for (int i = 0; i < n; i++)
                g_main_context_iteration(NULL, FALSE);
}

/* One slot of each action, its fd made readable; after three turns: calls seen, entries
 * left.  A callback that leaves its byte runs every turn; one that reads it, once.
 * own: without a set (pd_fd_mux_add with NULL: a main-loop source of its own), the same. */
static void check_action(action act, int want_fired, unsigned want_left, bool own)
{
        pd_fd_mux *m = own ? NULL : pd_fd_mux_new();
        CU_ASSERT_FATAL(own || m != NULL);
        pipe_slot p[1];
        open_slots(m, p, 1);
        p[0].act = act;
        make_ready(&p[0]);
        turns(3);
        CU_ASSERT_EQUAL(p[0].fired, want_fired);
        CU_ASSERT_EQUAL(own ? (p[0].e != NULL) : pd_fd_mux_count(m), want_left);
        if (own)
                pd_fd_mux_remove(p[0].e);
        pd_fd_mux_free(m);
        close_slots(p, 1);
}

static void test_actions(void)
{
        check_action(KEEP, 3, 1, false);
        check_action(DRAIN, 1, 1, false);
        check_action(STOP, 1, 0, false);
        check_action(REMOVE_SELF, 1, 0, false);
        check_action(KEEP, 3, 1, true);
        check_action(DRAIN, 1, 1, true);
        check_action(STOP, 1, 0, true);
        check_action(REMOVE_SELF, 1, 0, true);
}

/* Two ready entries, each removing the other: whichever runs first, the other never runs. */
static void test_remove_other_ready(void)
{
        pd_fd_mux *m = pd_fd_mux_new();
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        pipe_slot p[2];
        open_slots(m, p, 2);
        p[0].act = p[1].act = REMOVE_OTHER;
        p[0].other = &p[1];
        p[1].other = &p[0];
        make_ready(&p[0]);
        make_ready(&p[1]);
        turns(1);
        CU_ASSERT_EQUAL(p[0].fired + p[1].fired, 1);
        CU_ASSERT_EQUAL(pd_fd_mux_count(m), 1); /* the one that ran stays */
        pd_fd_mux_free(m);
        close_slots(p, 2);
}

/* More ready entries than a turn serves: the rest run on the next turn, and a free removes
 * every entry left. */
static void test_per_turn_bound(void)
{
        pd_fd_mux *m = pd_fd_mux_new();
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        pipe_slot p[N_PIPES];
        open_slots(m, p, N_PIPES);
        for (int i = 0; i < N_PIPES; i++) {
                p[i].act = DRAIN;
                make_ready(&p[i]);
        }
        int fired = 0;
        turns(1);
        for (int i = 0; i < N_PIPES; i++)
                fired += p[i].fired;
        CU_ASSERT_EQUAL(fired, PD_FD_MUX_PER_TURN);
        turns(1);
        fired = 0;
        for (int i = 0; i < N_PIPES; i++)
                fired += p[i].fired;
        CU_ASSERT_EQUAL(fired, N_PIPES);
        CU_ASSERT_EQUAL(pd_fd_mux_count(m), N_PIPES);
        pd_fd_mux_free(m);
        close_slots(p, N_PIPES);
}

static gboolean on_tick(gpointer data)
{
        int *ticks = data;
        return ++*ticks < 2 ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

/* A periodic timer: called each interval until it returns G_SOURCE_REMOVE, then gone
 * (its timerfd closed by the mux). */
static void test_timer(void)
{
        pd_fd_mux *m = pd_fd_mux_new();
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        int ticks = 0;
        CU_ASSERT_PTR_NOT_NULL_FATAL(pd_fd_mux_add_timer(m, 5, on_tick, &ticks));
        CU_ASSERT_EQUAL(pd_fd_mux_count(m), 1);
        for (int i = 0; i < 1000 && pd_fd_mux_count(m); i++)
                g_main_context_iteration(NULL, TRUE);
        CU_ASSERT_EQUAL(ticks, 2);
        CU_ASSERT_EQUAL(pd_fd_mux_count(m), 0);
        pd_fd_mux_free(m);
        /* without a set: a GLib timer of its own, the same two ticks */
        ticks = 0;
        CU_ASSERT_PTR_NOT_NULL_FATAL(pd_fd_mux_add_timer(NULL, 5, on_tick, &ticks));
        for (int i = 0; i < 1000 && ticks < 2; i++)
                g_main_context_iteration(NULL, TRUE);
        CU_ASSERT_EQUAL(ticks, 2);
        usleep(20000); /* four intervals: a timer still running would be due */
        turns(3);       /* ended by its G_SOURCE_REMOVE: no third tick */
        CU_ASSERT_EQUAL(ticks, 2);
}

static void on_exit_cb(void *data) { ++*(int *) data; }

/* A pid-watch set whose pidfds sit in the mux: the exit ends the entry. */
static void test_pid_watch_inside(void)
{
        pd_fd_mux *m = pd_fd_mux_new();
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        pd_pid_watch *w = pd_pid_watch_new(m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT_EQUAL(pd_fd_mux_count(m), 0);
        pid_t pid = ts_sleeper();
        CU_ASSERT_FATAL(pid > 1);
        int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                ts_kill_reap(pid);
                pd_pid_watch_free(w);
                pd_fd_mux_free(m);
                CU_PASS("no pidfd_open here (valgrind): the exit path is not exercised");
                return;
        }
        int fired = 0;
        CU_ASSERT_PTR_NOT_NULL_FATAL(pd_pid_watch_add(w, pidfd, on_exit_cb, &fired, NULL));
        CU_ASSERT_EQUAL(pd_fd_mux_count(m), 1); /* the pidfd itself, in the mux's set */
        kill(pid, SIGKILL);
        for (int i = 0; i < 1000 && !fired; i++)
                g_main_context_iteration(NULL, TRUE);
        CU_ASSERT_EQUAL(fired, 1);
        CU_ASSERT_EQUAL(pd_fd_mux_count(m), 0); /* one-shot: gone with the exit */
        pd_pid_watch_free(w);
        pd_fd_mux_free(m);
        ts_kill_reap(pid);
        close(pidfd);
}

/* pd_fd_mux_add_drained: edge-triggered in the set, so once per write whether the callback
 * drained the pipe or not (the contract is that it does); without a set, level-triggered. */
static void check_drained(action act, bool own, int want_min, int want_max)
{
        pd_fd_mux *m = own ? NULL : pd_fd_mux_new();
        CU_ASSERT_FATAL(own || m != NULL);
        pipe_slot p = { .act = act };
        CU_ASSERT_EQUAL_FATAL(pipe2(p.fds, O_CLOEXEC | O_NONBLOCK), 0);
        p.e = pd_fd_mux_add_drained(m, p.fds[0], on_readable, &p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p.e);
        make_ready(&p);
        turns(3);
        make_ready(&p);
        turns(3);
        CU_ASSERT(p.fired >= want_min && p.fired <= want_max);
        pd_fd_mux_remove(p.e);
        pd_fd_mux_free(m);
        close_slots(&p, 1);
}

static void test_drained(void)
{
        check_drained(DRAIN, false, 2, 2); /* each write an edge */
        /* edges only, not every turn: a write to a pipe that is not empty is an edge again
         * from Linux 5.14 on (3a34b13a88ca), not on 5.5-5.13 (1b6b26ae7053) */
        check_drained(KEEP, false, 1, 2);
        check_drained(DRAIN, true, 2, 2);
        check_drained(KEEP, true, 6, 6); /* a source of its own: level-triggered */
}

/* ---- pd_fd_mux_run ------------------------------------------------------------------- */

typedef struct run_ctx {
        GMainLoop *loop;
        int fired, ticks;
        bool guard_hit;
        pd_fd_mux_entry *victim; /* removed by remove_victim */
        pd_fd_mux *m;
        int wfd;                 /* write_later writes here */
        unsigned direct_at_read; /* pd_fd_mux_direct_turns when add_on_read ran */
        int late_ticks, idles;   /* sources add_on_read added, run */
} run_ctx;

static gboolean quit_on_read(gint fd, GIOCondition cond, gpointer data)
{
        (void) cond;
        run_ctx *c = data;
        char b[16];
        CU_ASSERT(read(fd, b, sizeof b) > 0);
        c->fired++;
        g_main_loop_quit(c->loop);
        return G_SOURCE_CONTINUE;
}

static gboolean quit_cb(gpointer data)
{
        run_ctx *c = data;
        c->ticks++;
        g_main_loop_quit(c->loop);
        return G_SOURCE_REMOVE;
}

static gboolean guard_cb(gpointer data)
{
        run_ctx *c = data;
        c->guard_hit = true;
        g_main_loop_quit(c->loop);
        return G_SOURCE_REMOVE;
}

/* run until quit, bounded: a 5 s timer fails the case if the loop would hang */
static void run_bounded(pd_fd_mux *m, run_ctx *c, int *timed_out)
{
        c->guard_hit = false;
        guint guard = g_timeout_add_seconds(5, guard_cb, c);
        pd_fd_mux_run(m, c->loop);
        *timed_out = c->guard_hit;
        if (!*timed_out)
                g_source_remove(guard);
        g_main_loop_unref(c->loop);
        c->loop = g_main_loop_new(NULL, TRUE);
}

static void *wake_from_thread(void *data)
{
        usleep(50000); /* the loop is asleep in its wait by now */
        g_idle_add(quit_cb, data); /* attaching from another thread wakes the context */
        return NULL;
}

/* A timeout and an idle source added by add_on_read: the second of them to run quits. */
static gboolean late_tick(gpointer data)
{
        run_ctx *c = data;
        c->late_ticks++;
        if (c->idles)
                g_main_loop_quit(c->loop);
        return G_SOURCE_REMOVE;
}

static gboolean late_idle(gpointer data)
{
        run_ctx *c = data;
        c->idles++;
        if (c->late_ticks)
                g_main_loop_quit(c->loop);
        return G_SOURCE_REMOVE;
}

/* An entry of the set that adds GLib sources from this thread (no wakeup: GLib wakes the
 * context only for another thread) */
static gboolean add_on_read(gint fd, GIOCondition cond, gpointer data)
{
        (void) cond;
        run_ctx *c = data;
        char b[16];
        CU_ASSERT(read(fd, b, sizeof b) > 0);
        c->direct_at_read = pd_fd_mux_direct_turns(c->m);
        g_timeout_add(1, late_tick, c);
        g_idle_add(late_idle, c);
        return G_SOURCE_CONTINUE;
}

/* a GLib timer that makes an entry of the set readable: no wakeup either */
static gboolean write_later(gpointer data)
{
        run_ctx *c = data;
        CU_ASSERT(write(c->wfd, "x", 1) == 1);
        return G_SOURCE_REMOVE;
}

static gboolean remove_victim(gpointer data)
{
        run_ctx *c = data;
        pd_fd_mux_remove(c->victim);
        c->victim = NULL;
        return G_SOURCE_REMOVE;
}

static void test_run(void)
{
        run_ctx c = { .loop = g_main_loop_new(NULL, TRUE) };
        int timed_out = 0;
        /* a source removed before the set is made runs first among equals: remove_victim,
         * due at once, then the set's dispatch with the event its wait fetched */
        g_timeout_add(0, remove_victim, &c);
        pd_fd_mux *m = pd_fd_mux_new();
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        pipe_slot victim[1], p[1];
        open_slots(m, victim, 1);
        c.victim = victim[0].e;
        make_ready(&victim[0]);
        int fds[2];
        CU_ASSERT_EQUAL_FATAL(pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
        pd_fd_mux_entry *e = pd_fd_mux_add(m, fds[0], G_IO_IN, quit_on_read, &c);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_EQUAL(write(fds[1], "x", 1), 1);
        run_bounded(m, &c, &timed_out);
        CU_ASSERT_EQUAL(timed_out, 0);
        CU_ASSERT(pd_fd_mux_fast_waits(m) > 0);  /* GLib's wakeup fd found: one wait a turn */
        CU_ASSERT_EQUAL(c.fired, 1);             /* an entry of the set, then the quit */
        CU_ASSERT_PTR_NULL(c.victim);            /* removed by the early source ... */
        CU_ASSERT_EQUAL(victim[0].fired, 0);     /* ... before its fetched event ran */

        /* a GLib timeout: the wait's timeout */
        g_timeout_add(20, quit_cb, &c);
        run_bounded(m, &c, &timed_out);
        CU_ASSERT_EQUAL(timed_out, 0);
        CU_ASSERT_EQUAL(c.ticks, 1);

        /* an fd outside the set (a source of its own): GLib's poll that turn */
        open_slots(NULL, p, 1);
        p[0].act = STOP;
        make_ready(&p[0]);
        CU_ASSERT_EQUAL(write(fds[1], "x", 1), 1);
        run_bounded(m, &c, &timed_out);
        CU_ASSERT_EQUAL(timed_out, 0);
        CU_ASSERT_EQUAL(p[0].fired, 1);
        CU_ASSERT_EQUAL(c.fired, 2);

        /* nothing due, nothing readable: only another thread's wakeup ends the wait */
        pthread_t t;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, wake_from_thread, &c), 0);
        run_bounded(m, &c, &timed_out);
        pthread_join(t, NULL);
        CU_ASSERT_EQUAL(timed_out, 0);
        CU_ASSERT_EQUAL(c.ticks, 2);

        /* the set alone ready, nothing due: the set dispatched without GLib's check; a
         * timeout and an idle source its callback adds still run.  The readiness comes
         * from a timer of this thread, a turn after the previous quit's wakeup was taken */
        pd_fd_mux_remove(e);
        c.m = m;
        c.wfd = fds[1];
        e = pd_fd_mux_add(m, fds[0], G_IO_IN, add_on_read, &c);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        unsigned direct = pd_fd_mux_direct_turns(m);
        g_timeout_add(20, write_later, &c);
        run_bounded(m, &c, &timed_out);
        CU_ASSERT_EQUAL(timed_out, 0);
        CU_ASSERT(c.direct_at_read > direct); /* add_on_read ran in a direct turn */
        CU_ASSERT_EQUAL(c.late_ticks, 1);
        CU_ASSERT_EQUAL(c.idles, 1);

        pd_fd_mux_remove(e);
        pd_fd_mux_free(m);
        close(fds[0]);
        close(fds[1]);
        close_slots(victim, 1);
        close_slots(p, 1);
        g_main_loop_unref(c.loop);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "each callback action, three turns, in a set and without one", test_actions },
                { "a callback removes another ready entry", test_remove_other_ready },
                { "at most PD_FD_MUX_PER_TURN callbacks a turn", test_per_turn_bound },
                { "a pid-watch set inside the mux", test_pid_watch_inside },
                { "a timer until it returns G_SOURCE_REMOVE, in a set and without one", test_timer },
                { "an edge-triggered entry, in a set and without one", test_drained },
                { "pd_fd_mux_run: the set, timeouts, an fd outside, another thread's wakeup, direct turns", test_run },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("fd mux", NULL, NULL, tests);
}
