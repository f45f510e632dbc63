/* pid-watch.c - process exits watched through one epoll fd (see pid-watch.h). */
#include "pid-watch.h"

#include <errno.h>
#include <glib-unix.h>
#include <glib.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

struct pd_pid_watch_entry {
        pd_pid_watch *w;
        int pidfd;
        pd_pid_watch_fn fn, destroy;
        void *data;
        pd_pid_watch_entry *prev, *next;
};

struct pd_pid_watch {
        int epfd;
        guint source;             /* without a mux: a source of its own */
        pd_fd_mux_entry *in_mux;  /* with one: its epoll fd in the mux's set */
        pd_pid_watch_entry *head;
};

/* Out of the epoll set and the list; the caller frees. */
static void unlink_entry(pd_pid_watch_entry *e)
{
        pd_pid_watch *w = e->w;
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, e->pidfd, NULL);
        if (e->prev)
                e->prev->next = e->next;
        else
                w->head = e->next;
        if (e->next)
                e->next->prev = e->prev;
}

static void end_entry(pd_pid_watch_entry *e)
{
        unlink_entry(e);
        if (e->destroy)
                e->destroy(e->data);
        free(e);
}

/* One event per epoll_wait: a callback may cancel other watches (unregistering a family
 * frees its subfamilies), and a cancelled watch leaves the kernel's ready list at once, so
 * no event read here can name an entry already freed. */
static gboolean on_ready(gint fd, GIOCondition cond, gpointer data)
{
        (void) fd;
        (void) cond;
        pd_pid_watch *w = data;
        struct epoll_event ev;
        for (;;) {
                int n = epoll_wait(w->epfd, &ev, 1, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                pd_pid_watch_entry *e = ev.data.ptr;
                unlink_entry(e);
                e->fn(e->data);
                if (e->destroy)
                        e->destroy(e->data);
                free(e);
        }
        return G_SOURCE_CONTINUE;
}

pd_pid_watch *pd_pid_watch_new(pd_fd_mux *mux)
{
        int epfd = epoll_create1(EPOLL_CLOEXEC);
        if (epfd < 0)
                return NULL;
        pd_pid_watch *w = g_new0(pd_pid_watch, 1);
        w->epfd = epfd;
        if (mux)
                w->in_mux = pd_fd_mux_add(mux, epfd, G_IO_IN, on_ready, w);
        if (!w->in_mux)
                w->source = g_unix_fd_add(epfd, G_IO_IN, on_ready, w);
        return w;
}

void pd_pid_watch_free(pd_pid_watch *w)
{
        if (!w)
                return;
        while (w->head)
                end_entry(w->head);
        if (w->in_mux)
                pd_fd_mux_remove(w->in_mux);
        else
                g_source_remove(w->source);
        close(w->epfd);
        g_free(w);
}

pd_pid_watch_entry *pd_pid_watch_add(pd_pid_watch *w, int pidfd, pd_pid_watch_fn fn, void *data,
                                     pd_pid_watch_fn destroy)
{
        pd_pid_watch_entry *e = calloc(1, sizeof *e);
        if (!e)
                return NULL;
        *e = (pd_pid_watch_entry){ .w = w, .pidfd = pidfd, .fn = fn, .destroy = destroy, .data = data, .next = w->head };
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = e };
        if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, pidfd, &ev) < 0) {
                int saved = errno;
                free(e);
                errno = saved;
                return NULL;
        }
        if (w->head)
                w->head->prev = e;
        w->head = e;
        return e;
}

void pd_pid_watch_cancel(pd_pid_watch_entry *e)
{
        if (e)
                end_entry(e);
}
