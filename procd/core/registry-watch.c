/* registry-watch.c - watchers: a family's watcher process as a tr_pidref, its pidfd in the
 * registry's pid-watch set (one epoll fd for all), polled by start time where pidfds are
 * missing (one timer for all of them); its exit runs the watcher hook or unregisters the
 * family. */
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

/* Without pidfds (kernels before 5.3, valgrind): every watcher is polled by its start time
 * once a second, by one timer for all families.  A GLib source per family cost every
 * request, classic or D-Bus, a walk over them all in GLib's prepare and check (~200
 * instructions a family).  Watchers found gone are handled after the walk, each family
 * looked up again: an exit may unregister others. */
/* The families polled now; with gone, those whose watcher is gone are added to it. */
static size_t polled_watchers(pd_registry *r, GArray *gone)
{
        size_t polled = 0;
        GHashTableIter it;
        gpointer v;
        g_hash_table_iter_init(&it, r->by_root);
        while (g_hash_table_iter_next(&it, NULL, &v)) {
                pd_family *f = v;
                if (!f->watcher_polled)
                        continue;
                polled++;
                if (gone && !tr_pidref_alive(&f->watcher))
                        g_array_append_val(gone, ((tr_proc_ident){ f->root_pid, f->root_start_ticks }));
        }
        return polled;
}

static gboolean poll_watchers_cb(gpointer data)
{
        pd_registry *r = data;
        g_autoptr(GArray) gone = g_array_new(FALSE, FALSE, sizeof(tr_proc_ident));
        size_t polled = polled_watchers(r, gone);
        for (guint i = 0; i < gone->len; i++) {
                tr_proc_ident id = g_array_index(gone, tr_proc_ident, i);
                pd_family *f = pd_registry_find(r, id.pid);
                if (!f || f->root_start_ticks != id.start_ticks || !f->watcher_polled)
                        continue;
                f->watcher_polled = false;
                pd_registry_watcher_exited(r, f);
        }
        /* counted again: an exit's hook may have unregistered or registered polled families */
        if (gone->len)
                polled = polled_watchers(r, NULL);
        if (polled)
                return G_SOURCE_CONTINUE;
        r->watcher_poll = NULL; /* G_SOURCE_REMOVE ends it */
        return G_SOURCE_REMOVE;
}

static void poll_watcher(pd_registry *r, pd_family *f)
{
        f->watcher_polled = true;
        if (!r->watcher_poll)
                r->watcher_poll = pd_fd_mux_add_timer(r->fd_mux, 1000, poll_watchers_cb, r);
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
        if (f->watcher.pidfd < 0) {
                poll_watcher(r, f);
                return;
        }
        watch_ctx *w = g_new0(watch_ctx, 1);
        w->r = r;
        w->f = f;
        /* one epoll fd for every watcher: the main loop's cost must not grow with families */
        if (!r->pid_watch)
                r->pid_watch = pd_pid_watch_new(r->fd_mux);
        if (r->pid_watch)
                f->watcher_watch = pd_pid_watch_add(r->pid_watch, f->watcher.pidfd, watcher_exit_cb, w, g_free);
        if (!f->watcher_watch)
                f->watcher_source =
                        g_unix_fd_add_full(G_PRIORITY_DEFAULT, f->watcher.pidfd, G_IO_IN, watcher_cb, w, g_free);
}
