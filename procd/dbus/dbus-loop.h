/* dbus-loop.h - libdbus-1 wired into the GLib main loop by hand: a read DBusWatch -> an
 * entry of procd's fd set (fd-mux.h), a write one -> a source of its own, DBusTimeout ->
 * g_timeout_add, dispatch from an idle source (a few messages per turn, so that one busy
 * connection cannot starve the others). */
#pragma once

#include <dbus/dbus.h>
#include <stdbool.h>

#include "procd/core/fd-mux.h"

typedef struct pd_dbus_loop pd_dbus_loop;

/* Attach a connection to the default main context, its socket in mux's set (NULL: a
 * source of its own); NULL on out-of-memory. */
pd_dbus_loop *pd_dbus_loop_attach_connection(DBusConnection *c, pd_fd_mux *mux);
/* Detach (watches and timeouts removed, idle dispatch cancelled) and free. */
void pd_dbus_loop_detach(pd_dbus_loop *l);

/* Attach a server's listening socket: in mux's set when mux is not NULL (new connections
 * are rare; fd-mux.h), else a source of its own. */
bool pd_dbus_loop_attach_server(DBusServer *s, pd_fd_mux *mux);
void pd_dbus_loop_detach_server(DBusServer *s);
