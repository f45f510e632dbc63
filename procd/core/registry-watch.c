/* registry-watch.c - watchers: a family's watcher process as a tr_pidref, its pidfd in the
 * registry's pid-watch set (one epoll fd for all), polled by start time where pidfds are
 * missing; its exit runs the watcher hook or unregisters the family. */
#include "registry-internal.h"

#include <glib-unix.h>

void pd_registry_watcher_exited(pd_registry *r, pd_family *f)
{
        if (r->watcher_exit) {
                r->watcher_exit(r->watcher_exit_data, f);
                return;
        }
        pd_reg_log(r, "watcher %d of family %d exited: unregistering the family", (int) f->watcher.pid,
                   (int) f->root_pid);
        pd_registry_unregister(r, f);
}

typedef struct watch_ctx {
        pd_registry *r;
        pd_family *f;
} watch_ctx;

static gboolean watcher_cb(gint fd, GIOCondition cond, gpointer data)
{
        watch_ctx *w = data;
        pd_family *f = w->f;
        (void) fd;
        (void) cond;
        f->watcher_source = 0; /* G_SOURCE_REMOVE below removes it */
        f->watcher_watch = NULL; /* a pid-watch entry ends after its callback */
        pd_registry_watcher_exited(w->r, f);
        return G_SOURCE_REMOVE;
}

static void watcher_exit_cb(void *data) { watcher_cb(-1, 0, data); }

/* Fallback without pidfds only: the watcher is gone when its start time changed. */
static gboolean watcher_poll_cb(gpointer data)
{
        watch_ctx *w = data;
        if (tr_pidref_alive(&w->f->watcher))
                return G_SOURCE_CONTINUE;
        return watcher_cb(-1, 0, data);
}

/* Open the watcher (tr_pidref: a pidfd checked against its start time, 0: read it now;
 * without pidfd_open, identity by start time alone).  -ESRCH when gone or when the pid
 * names another process. */
int pd_reg_open_watcher(pd_family *f, pid_t watcher_pid, uint64_t start_ticks)
{
        return tr_pidref_open(watcher_pid, start_ticks, &f->watcher);
}

void pd_reg_arm_watcher(pd_registry *r, pd_family *f)
{
        if (f->watcher.pid <= 0)
                return;
        watch_ctx *w = g_new0(watch_ctx, 1);
        w->r = r;
        w->f = f;
        /* one epoll fd for every watcher: the main loop's cost must not grow with families */
        if (f->watcher.pidfd >= 0 && !r->pid_watch)
                r->pid_watch = pd_pid_watch_new(r->fd_mux);
        if (f->watcher.pidfd >= 0 && r->pid_watch)
                f->watcher_watch = pd_pid_watch_add(r->pid_watch, f->watcher.pidfd, watcher_exit_cb, w, g_free);
        if (f->watcher_watch)
                return;
        if (f->watcher.pidfd >= 0)
                f->watcher_source = g_unix_fd_add_full(G_PRIORITY_DEFAULT, f->watcher.pidfd, G_IO_IN, watcher_cb,
                                                       w, g_free);
        else
                f->watcher_source = g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, 1, watcher_poll_cb, w, g_free);
}
