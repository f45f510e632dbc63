/* fd-mux.c - procd's fds watched through one epoll fd, and the main loop's wait (see fd-mux.h). */
#include "fd-mux.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "trackers/util.h"

struct pd_fd_mux_entry {
        pd_fd_mux *m;
        int fd;
        GUnixFDSourceFunc fn;
        void *data;
        GSourceFunc timer_fn; /* a timer: fd is its timerfd (owned), data the entry */
        void *timer_data;
        bool removed; /* removed while callbacks run: freed after them */
        guint source; /* m NULL: the main-loop source of its own (fd or timer) */
        pd_fd_mux_entry *prev, *next;
        pd_fd_mux_entry *next_dead;
};

struct pd_fd_mux {
        int epfd;
        guint source;
        unsigned n;
        pd_fd_mux_entry *head;
        bool dispatching;         /* callbacks run: removed entries wait in dead */
        pd_fd_mux_entry *dead;
        /* pd_fd_mux_run: what its turn's epoll_wait returned, for on_ready (n_ready < 0:
         * nothing fetched this turn; an entry removed meanwhile is NULL here) */
        struct epoll_event ready[PD_FD_MUX_PER_TURN];
        int n_ready;
        /* pd_fd_mux_run: the main context's wakeup eventfd, also in the set (-1: not), and
         * the marker its events carry */
        int wakeup_fd;
        bool wakeup_tried;
        pd_fd_mux_entry wakeup;
        unsigned fast_waits; /* turns that waited in one epoll_wait (tests) */
        unsigned direct_turns; /* turns that dispatched the set without GLib's check (tests) */
};

static void unlink_entry(pd_fd_mux_entry *e)
{
        pd_fd_mux *m = e->m;
        epoll_ctl(m->epfd, EPOLL_CTL_DEL, e->fd, NULL);
        for (int i = 0; i < m->n_ready; i++)
                if (m->ready[i].data.ptr == e)
                        m->ready[i].data.ptr = NULL;
        if (e->timer_fn) {
                close(e->fd);
                e->fd = -1;
        }
        if (e->prev)
                e->prev->next = e->next;
        else
                m->head = e->next;
        if (e->next)
                e->next->prev = e->prev;
        m->n--;
}

static GIOCondition cond_of(uint32_t events)
{
        GIOCondition c = 0;
        if (events & EPOLLIN)
                c |= G_IO_IN;
        if (events & EPOLLOUT)
                c |= G_IO_OUT;
        if (events & EPOLLHUP)
                c |= G_IO_HUP;
        if (events & EPOLLERR)
                c |= G_IO_ERR;
        return c;
}

/* One epoll_wait a turn (pd_fd_mux_run's, when it made the turn's wait): each ready
 * entry at most once (a callback that leaves its fd readable runs again next turn, after
 * the other sources).  A callback may remove any entry, one of this batch included:
 * removed entries are skipped and freed at the end. */
static gboolean on_ready(gint fd, GIOCondition cond, gpointer data)
{
        (void) fd;
        (void) cond;
        pd_fd_mux *m = data;
        struct epoll_event evs[PD_FD_MUX_PER_TURN];
        int n = m->n_ready;
        m->n_ready = -1;
        if (n >= 0)
                memcpy(evs, m->ready, (size_t) n * sizeof *evs);
        else
                do
                        n = epoll_wait(m->epfd, evs, PD_FD_MUX_PER_TURN, 0);
                while (n < 0 && errno == EINTR);
        m->dispatching = true;
        for (int i = 0; i < n; i++) {
                pd_fd_mux_entry *e = evs[i].data.ptr;
                if (!e || e->removed || e == &m->wakeup)
                        continue;
                if (!e->fn(e->fd, cond_of(evs[i].events), e->data))
                        pd_fd_mux_remove(e);
        }
        m->dispatching = false;
        while (m->dead) {
                pd_fd_mux_entry *e = m->dead;
                m->dead = e->next_dead;
                free(e);
        }
        return G_SOURCE_CONTINUE;
}

pd_fd_mux *pd_fd_mux_new(void)
{
        int epfd = epoll_create1(EPOLL_CLOEXEC);
        if (epfd < 0)
                return NULL;
        pd_fd_mux *m = g_new0(pd_fd_mux, 1);
        m->epfd = epfd;
        m->n_ready = -1;
        m->wakeup_fd = -1;
        m->source = g_unix_fd_add(epfd, G_IO_IN, on_ready, m);
        /* no nested main loop in procd: without can-recurse GLib would take the fd out of
         * the poll set and put it back around each dispatch (a wakeup each) */
        g_source_set_can_recurse(g_main_context_find_source_by_id(NULL, m->source), TRUE);
        return m;
}

void pd_fd_mux_free(pd_fd_mux *m)
{
        if (!m)
                return;
        while (m->head) {
                pd_fd_mux_entry *e = m->head;
                unlink_entry(e);
                free(e);
        }
        g_source_remove(m->source);
        close(m->epfd);
        g_free(m);
}

/* fd in m's epoll set (edge: EPOLLET); NULL on failure (errno set) */
static pd_fd_mux_entry *add_in_set(pd_fd_mux *m, int fd, GIOCondition cond, uint32_t edge, GUnixFDSourceFunc fn,
                                   void *data)
{
        pd_fd_mux_entry *e = calloc(1, sizeof *e);
        if (!e)
                return NULL;
        *e = (pd_fd_mux_entry){ .m = m, .fd = fd, .fn = fn, .data = data, .next = m->head };
        struct epoll_event ev = { .events = ((cond & G_IO_IN) ? EPOLLIN : 0) | ((cond & G_IO_OUT) ? EPOLLOUT : 0) | edge,
                                  .data.ptr = e };
        if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                int saved = errno;
                free(e);
                errno = saved;
                return NULL;
        }
        if (m->head)
                m->head->prev = e;
        m->head = e;
        m->n++;
        return e;
}

void pd_fd_mux_remove(pd_fd_mux_entry *e)
{
        if (e && !e->m) {
                g_source_remove(e->source); /* its destroy notify frees e */
                return;
        }
        if (!e || e->removed)
                return;
        pd_fd_mux *m = e->m;
        unlink_entry(e);
        if (!m->dispatching) {
                free(e);
                return;
        }
        e->removed = true; /* an event of this batch may still name it: freed after it */
        e->next_dead = m->dead;
        m->dead = e;
}

/* A timer's expiry: its count read (the fd is drained), then the callback. */
static gboolean on_timer(gint fd, GIOCondition cond, gpointer data)
{
        (void) cond;
        pd_fd_mux_entry *e = data;
        uint64_t expiries;
        if (read(fd, &expiries, sizeof expiries) != (ssize_t) sizeof expiries)
                return G_SOURCE_CONTINUE; /* EAGAIN: not due after all */
        return e->timer_fn(e->timer_data);
}

/* a timerfd in m's epoll set; NULL on failure (errno set) */
static pd_fd_mux_entry *add_timer_in_set(pd_fd_mux *m, unsigned interval_ms, GSourceFunc fn, void *data)
{
        int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (tfd < 0)
                return NULL;
        struct timespec every = { (time_t) (interval_ms / 1000), (long) (interval_ms % 1000) * 1000000L };
        if (!interval_ms)
                every.tv_nsec = 1; /* 0 would disarm it */
        struct itimerspec its = { .it_interval = every, .it_value = every };
        pd_fd_mux_entry *e = NULL;
        if (timerfd_settime(tfd, 0, &its, NULL) == 0)
                e = add_in_set(m, tfd, G_IO_IN, 0, on_timer, NULL);
        if (!e) {
                int saved = errno;
                close(tfd);
                errno = saved;
                return NULL;
        }
        e->data = e; /* on_timer gets the entry; the caller's data goes to fn */
        e->timer_fn = fn;
        e->timer_data = data;
        return e;
}

/* ---- an entry with a main-loop source of its own (no set, or the set refused it) ---- */

static void own_free(gpointer data) { free(data); }

static gboolean own_fd_cb(gint fd, GIOCondition cond, gpointer data)
{
        pd_fd_mux_entry *e = data;
        return e->fn(fd, cond, e->data); /* e lives until after this dispatch (own_free) */
}

static gboolean own_timer_cb(gpointer data)
{
        pd_fd_mux_entry *e = data;
        return e->timer_fn(e->timer_data);
}

static pd_fd_mux_entry *own_entry(void)
{
        pd_fd_mux_entry *e = calloc(1, sizeof *e);
        if (e)
                e->fd = -1;
        return e;
}

static pd_fd_mux_entry *add_fd(pd_fd_mux *m, int fd, GIOCondition cond, uint32_t edge, GUnixFDSourceFunc fn,
                               void *data)
{
        pd_fd_mux_entry *e = m ? add_in_set(m, fd, cond, edge, fn, data) : NULL;
        if (e || !(e = own_entry()))
                return e;
        e->fd = fd;
        e->fn = fn;
        e->data = data;
        e->source = g_unix_fd_add_full(G_PRIORITY_DEFAULT, fd, cond, own_fd_cb, e, own_free);
        /* no nested main loop in procd (see pd_fd_mux_new): no fd taken out of the poll set
         * and put back around each dispatch */
        g_source_set_can_recurse(g_main_context_find_source_by_id(NULL, e->source), TRUE);
        return e;
}

pd_fd_mux_entry *pd_fd_mux_add(pd_fd_mux *m, int fd, GIOCondition cond, GUnixFDSourceFunc fn, void *data)
{
        return add_fd(m, fd, cond, 0, fn, data);
}

/* Edge-triggered: a level-triggered entry stays on epoll's ready list after each report,
 * so the next turn's wait polls it once more (and takes the set's lock twice) before it
 * sleeps; an edge-triggered one is polled once a request.  A source of its own, when it
 * comes to that, is level-triggered: a superset. */
pd_fd_mux_entry *pd_fd_mux_add_drained(pd_fd_mux *m, int fd, GUnixFDSourceFunc fn, void *data)
{
        return add_fd(m, fd, G_IO_IN, EPOLLET, fn, data);
}

pd_fd_mux_entry *pd_fd_mux_add_timer(pd_fd_mux *m, unsigned interval_ms, GSourceFunc fn, void *data)
{
        pd_fd_mux_entry *e = m ? add_timer_in_set(m, interval_ms, fn, data) : NULL;
        if (e || !(e = own_entry()))
                return e;
        e->timer_fn = fn;
        e->timer_data = data;
        e->source = interval_ms && interval_ms % 1000 == 0
                            ? g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, interval_ms / 1000, own_timer_cb, e, own_free)
                            : g_timeout_add_full(G_PRIORITY_DEFAULT, interval_ms, own_timer_cb, e, own_free);
        return e;
}

unsigned pd_fd_mux_count(const pd_fd_mux *m) { return m ? m->n : 0; }

unsigned pd_fd_mux_fast_waits(const pd_fd_mux *m) { return m ? m->fast_waits : 0; }

unsigned pd_fd_mux_direct_turns(const pd_fd_mux *m) { return m ? m->direct_turns : 0; }

/* ---- the main loop: one epoll_wait a turn ------------------------------------------ */

/* The context's wakeup fd into the set, found on a turn that polls the set (both are
 * polled at the default priority): woken on purpose, it is the one eventfd among the fds
 * GLib polls that is readable now (GLib makes its GWakeup an eventfd on Linux; the check
 * that each is one reads /proc/self/fd).  Unsure (none, several, or epoll refuses it): -1,
 * and every turn polls as GLib would.  The wakeup is acknowledged by GLib's check of this
 * turn or the next (level-triggered). */
static void adopt_wakeup(pd_fd_mux *m, GMainContext *ctx, const GPollFD *fds, int n)
{
        g_main_context_wakeup(ctx);
        int found = -1, count = 0;
        for (int i = 0; i < n; i++) {
                struct pollfd p = { .fd = fds[i].fd, .events = POLLIN };
                if (fds[i].fd != m->epfd && poll(&p, 1, 0) == 1 && (p.revents & POLLIN) &&
                    tr_fd_is_eventfd(fds[i].fd)) {
                        found = fds[i].fd;
                        count++;
                }
        }
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &m->wakeup };
        if (count == 1 && epoll_ctl(m->epfd, EPOLL_CTL_ADD, found, &ev) == 0)
                m->wakeup_fd = found;
}

/* The turn's wait.  When GLib asks for nothing but the set and its wakeup fd, one
 * epoll_wait on the set: the ready entries are kept for on_ready (no second epoll_wait in
 * its dispatch), the wakeup's readiness goes to its GPollFD.  Otherwise (a source of its
 * own with an fd, or a higher-priority source ready so that the set is not asked for)
 * GLib's poll over what it asked.  True when that one epoll_wait fetched the set's
 * entries and nothing else fired (not the wakeup): the set alone is ready. */
static bool wait_turn(pd_fd_mux *m, GPollFD *fds, int n, int timeout_ms)
{
        GPollFD *set = NULL, *wake = NULL;
        bool only_set = true;
        for (int i = 0; i < n; i++) {
                fds[i].revents = 0;
                if (fds[i].fd == m->epfd)
                        set = &fds[i];
                else if (m->wakeup_fd >= 0 && fds[i].fd == m->wakeup_fd)
                        wake = &fds[i];
                else
                        only_set = false;
        }
        /* events fetched by an earlier turn whose dispatch did not reach the set (a
         * higher-priority source took that turn): kept, and this turn does not sleep.  An
         * edge-triggered entry's event would not be reported again. */
        bool pending = m->n_ready > 0;
        if (pending)
                timeout_ms = 0;
        if (!set || !only_set || pending) {
                (void) g_poll(fds, (guint) n, timeout_ms);
                if (pending && set)
                        set->revents |= G_IO_IN;
                return false;
        }
        m->n_ready = -1;
        int k = epoll_wait(m->epfd, m->ready, PD_FD_MUX_PER_TURN, timeout_ms);
        if (k < 0 && errno != EINTR) {
                /* cannot happen with a valid set; said once, and GLib's poll from now on */
                g_warning("fd set: epoll_wait: %s: the main loop polls as GLib does", g_strerror(errno));
                epoll_ctl(m->epfd, EPOLL_CTL_DEL, m->wakeup_fd, NULL);
                m->wakeup_fd = -1;
                return false;
        }
        m->fast_waits++;
        m->n_ready = 0; /* the wakeup's event taken out, the others kept in place */
        bool woken = false;
        for (int i = 0; i < k; i++) {
                if (m->ready[i].data.ptr != &m->wakeup) {
                        m->ready[m->n_ready++] = m->ready[i];
                        continue;
                }
                woken = true;
                if (wake)
                        wake->revents = (gushort) cond_of(m->ready[i].events);
        }
        if (m->n_ready > 0)
                set->revents = G_IO_IN;
        return m->n_ready > 0 && !woken;
}

void pd_fd_mux_run(pd_fd_mux *m, GMainLoop *loop)
{
        GMainContext *ctx = g_main_loop_get_context(loop);
        if (!g_main_loop_is_running(loop))
                return; /* quit before it ran */
        if (!m || ctx != g_main_context_default() || !g_main_context_acquire(ctx)) {
                g_main_loop_run(loop);
                return;
        }
        GPollFD *fds = NULL;
        gint cap = 0;
        while (g_main_loop_is_running(loop)) {
                gint prio = 0, timeout_ms = -1, n;
                gboolean due = g_main_context_prepare(ctx, &prio);
                while ((n = g_main_context_query(ctx, prio, &timeout_ms, fds, cap)) > cap) {
                        cap = n;
                        fds = g_renew(GPollFD, fds, cap);
                }
                if (!m->wakeup_tried)
                        for (int i = 0; i < n && !m->wakeup_tried; i++)
                                if (fds[i].fd == m->epfd) {
                                        adopt_wakeup(m, ctx, fds, n);
                                        m->wakeup_tried = true;
                                }
                /* nothing was due before the wait and the set alone woke it: GLib's check
                 * would only find the set's fd ready and dispatch it, after a walk over
                 * every source (issue 20), so the set is dispatched here.  A turn without
                 * check is one GLib already has: its check dispatches nothing when the
                 * poll set changed (poll_changed), and the next prepare clears whatever
                 * was pending.  A timeout that came due during the wait is found ready by
                 * the next prepare (without the set's events, the timeout would have ended
                 * the wait with none); sources a callback adds from this thread (no
                 * wakeup then) are prepared the next turn as well, and so is what another
                 * thread attached while its wakeup was left out of a full batch of
                 * PD_FD_MUX_PER_TURN events (level-triggered: reported the next turn) */
                if (wait_turn(m, fds, n, timeout_ms) && !due) {
                        m->direct_turns++;
                        (void) on_ready(m->epfd, G_IO_IN, m);
                        continue;
                }
                g_main_context_check(ctx, prio, fds, n);
                g_main_context_dispatch(ctx);
        }
        /* events fetched and not dispatched stay for the set's next dispatch */
        g_main_context_release(ctx);
        g_free(fds);
}

