/* pid-watch.c - process exits watched through one epoll fd (see pid-watch.h): each pidfd an
 * entry of the fd mux (fd-mux.h), ended at its first readiness. */
#include "pid-watch.h"

#include <errno.h>
#include <glib.h>
#include <stdlib.h>

struct pd_pid_watch_entry {
        pd_pid_watch *w;
        pd_fd_mux_entry *in_mux;
        pd_pid_watch_fn fn, destroy;
        void *data;
        pd_pid_watch_entry *prev, *next;
};

struct pd_pid_watch {
        pd_fd_mux *mux;
        pd_fd_mux *own;           /* the mux made here when none was given */
        pd_pid_watch_entry *head; /* what a free cancels */
};

/* Out of the mux and the list; the caller frees.  A mux entry removed while the mux runs
 * callbacks is skipped if it was ready too: a callback may cancel other watches. */
static void unlink_entry(pd_pid_watch_entry *e)
{
        pd_pid_watch *w = e->w;
        pd_fd_mux_remove(e->in_mux);
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

/* The process exited: the watch ends first, then its callback runs. */
static gboolean on_exit_ready(gint fd, GIOCondition cond, gpointer data)
{
        (void) fd;
        (void) cond;
        pd_pid_watch_entry *e = data;
        unlink_entry(e);
        e->fn(e->data);
        if (e->destroy)
                e->destroy(e->data);
        free(e);
        return G_SOURCE_REMOVE; /* removed already: a no-op */
}

pd_pid_watch *pd_pid_watch_new(pd_fd_mux *mux)
{
        pd_fd_mux *own = mux ? NULL : pd_fd_mux_new();
        if (!mux && !own)
                return NULL;
        pd_pid_watch *w = g_new0(pd_pid_watch, 1);
        w->mux = mux ? mux : own;
        w->own = own;
        return w;
}

void pd_pid_watch_free(pd_pid_watch *w)
{
        if (!w)
                return;
        while (w->head)
                end_entry(w->head);
        pd_fd_mux_free(w->own);
        g_free(w);
}

pd_pid_watch_entry *pd_pid_watch_add(pd_pid_watch *w, int pidfd, pd_pid_watch_fn fn, void *data,
                                     pd_pid_watch_fn destroy)
{
        pd_pid_watch_entry *e = calloc(1, sizeof *e);
        if (!e)
                return NULL;
        *e = (pd_pid_watch_entry){ .w = w, .fn = fn, .destroy = destroy, .data = data, .next = w->head };
        e->in_mux = pd_fd_mux_add(w->mux, pidfd, G_IO_IN, on_exit_ready, e);
        if (!e->in_mux) {
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
