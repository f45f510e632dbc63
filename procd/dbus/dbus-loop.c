/* dbus-loop.c - libdbus-1 watches, timeouts and dispatch in the GLib main loop. */
#include "dbus-loop.h"

#include <glib.h>

#define DISPATCH_PER_TURN 8

struct pd_dbus_loop {
        DBusConnection *c;
        guint dispatch_idle;
};

static gboolean watch_cb(gint fd, GIOCondition cond, gpointer data)
{
        DBusWatch *w = data;
        unsigned flags = 0;
        (void) fd;
        if (cond & G_IO_IN)
                flags |= DBUS_WATCH_READABLE;
        if (cond & G_IO_OUT)
                flags |= DBUS_WATCH_WRITABLE;
        if (cond & G_IO_HUP)
                flags |= DBUS_WATCH_HANGUP;
        if (cond & G_IO_ERR)
                flags |= DBUS_WATCH_ERROR;
        /* may remove (and free) w and this very source: touch nothing afterwards */
        dbus_watch_handle(w, flags);
        return G_SOURCE_CONTINUE;
}

/* data: procd's fd set (fd-mux.h), or NULL.  A connection's socket sits in the set too,
 * though it carries requests: a source of its own cost every classic request ~1 us (GLib's
 * prepare and check of one more source, one more fd in every poll; NOTES 14.20), where in
 * the set its messages come through the main loop's one epoll_wait (pd_fd_mux_run).  The set's
 * rules keep it fair: each ready entry runs once a turn, and dispatch is an idle source of
 * DISPATCH_PER_TURN messages.  A socket's read and write watches share its fd, and an
 * epoll set holds an fd once: the read watch joins the set, the write watch (enabled only
 * while the socket will not take what libdbus has to send) is a source of its own. */
static dbus_bool_t add_watch(DBusWatch *w, void *data)
{
        if (!dbus_watch_get_enabled(w))
                return TRUE;
        unsigned flags = dbus_watch_get_flags(w);
        GIOCondition cond = G_IO_HUP | G_IO_ERR;
        if (flags & DBUS_WATCH_READABLE)
                cond |= G_IO_IN;
        if (flags & DBUS_WATCH_WRITABLE)
                cond |= G_IO_OUT;
        pd_fd_mux *set = (flags & DBUS_WATCH_WRITABLE) ? NULL : data;
        pd_fd_mux_entry *e = pd_fd_mux_add(set, dbus_watch_get_unix_fd(w), cond, watch_cb, w);
        dbus_watch_set_data(w, e, NULL);
        return e != NULL;
}

static void remove_watch(DBusWatch *w, void *data)
{
        (void) data;
        pd_fd_mux_remove(dbus_watch_get_data(w)); /* NULL (never added: disabled) is a no-op */
        dbus_watch_set_data(w, NULL, NULL);
}

static void toggle_watch(DBusWatch *w, void *data)
{
        remove_watch(w, data);
        add_watch(w, data);
}

static gboolean timeout_cb(gpointer data)
{
        dbus_timeout_handle(data);
        return G_SOURCE_CONTINUE;
}

static dbus_bool_t add_timeout(DBusTimeout *t, void *data)
{
        (void) data;
        if (!dbus_timeout_get_enabled(t))
                return TRUE;
        guint id = g_timeout_add((guint) dbus_timeout_get_interval(t), timeout_cb, t);
        dbus_timeout_set_data(t, GUINT_TO_POINTER(id), NULL);
        return TRUE;
}

static void remove_timeout(DBusTimeout *t, void *data)
{
        (void) data;
        guint id = GPOINTER_TO_UINT(dbus_timeout_get_data(t));
        if (id)
                g_source_remove(id);
        dbus_timeout_set_data(t, NULL, NULL);
}

static void toggle_timeout(DBusTimeout *t, void *data)
{
        remove_timeout(t, data);
        add_timeout(t, data);
}

static gboolean dispatch_cb(gpointer data)
{
        pd_dbus_loop *l = data;
        /* keep the connection alive while dispatching: a handler may drop the last ref */
        DBusConnection *c = dbus_connection_ref(l->c);
        DBusDispatchStatus st = DBUS_DISPATCH_COMPLETE;
        for (int i = 0; i < DISPATCH_PER_TURN; i++) {
                st = dbus_connection_dispatch(c);
                if (st != DBUS_DISPATCH_DATA_REMAINS)
                        break;
        }
        dbus_connection_unref(c);
        if (st == DBUS_DISPATCH_DATA_REMAINS)
                return G_SOURCE_CONTINUE;
        l->dispatch_idle = 0;
        return G_SOURCE_REMOVE;
}

static void dispatch_status_cb(DBusConnection *c, DBusDispatchStatus st, void *data)
{
        pd_dbus_loop *l = data;
        (void) c;
        if (st == DBUS_DISPATCH_DATA_REMAINS && !l->dispatch_idle)
                l->dispatch_idle = g_idle_add_full(G_PRIORITY_DEFAULT, dispatch_cb, l, NULL);
}

pd_dbus_loop *pd_dbus_loop_attach_connection(DBusConnection *c, pd_fd_mux *mux)
{
        pd_dbus_loop *l = g_new0(pd_dbus_loop, 1);
        l->c = c;
        if (!dbus_connection_set_watch_functions(c, add_watch, remove_watch, toggle_watch, mux, NULL) ||
            !dbus_connection_set_timeout_functions(c, add_timeout, remove_timeout, toggle_timeout, NULL, NULL)) {
                pd_dbus_loop_detach(l);
                return NULL;
        }
        dbus_connection_set_dispatch_status_function(c, dispatch_status_cb, l, NULL);
        dispatch_status_cb(c, dbus_connection_get_dispatch_status(c), l);
        return l;
}

void pd_dbus_loop_detach(pd_dbus_loop *l)
{
        if (!l)
                return;
        dbus_connection_set_dispatch_status_function(l->c, NULL, NULL, NULL);
        dbus_connection_set_watch_functions(l->c, NULL, NULL, NULL, NULL, NULL);
        dbus_connection_set_timeout_functions(l->c, NULL, NULL, NULL, NULL, NULL);
        if (l->dispatch_idle)
                g_source_remove(l->dispatch_idle);
        g_free(l);
}

bool pd_dbus_loop_attach_server(DBusServer *s, pd_fd_mux *mux)
{
        return dbus_server_set_watch_functions(s, add_watch, remove_watch, toggle_watch, mux, NULL) &&
               dbus_server_set_timeout_functions(s, add_timeout, remove_timeout, toggle_timeout, NULL, NULL);
}

void pd_dbus_loop_detach_server(DBusServer *s)
{
        dbus_server_set_watch_functions(s, NULL, NULL, NULL, NULL, NULL);
        dbus_server_set_timeout_functions(s, NULL, NULL, NULL, NULL, NULL);
}
