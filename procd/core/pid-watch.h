/* pid-watch.h - process exits (pidfds) watched through one epoll fd in the GLib main loop.
 *
 * One GLib fd source per watcher made every main-loop iteration cost O(families): GLib
 * prepares and checks each source and poll() visits each fd (measured with 1,000 families:
 * two thirds of a GET_USAGE's server CPU went there, see NOTES "GET_USAGE cost").  Here all
 * pidfds sit in one epoll set, the fd mux's (fd-mux.h: the daemon's fd set, or one of the
 * watch's own), and the main loop polls a single fd.
 *
 * A watch is one-shot: when its pidfd becomes readable (the process exited) the watch is
 * removed, then its callback runs.  Cancelling a watch never closes the pidfd (the caller
 * owns it) and must happen before the caller closes it.  Single-threaded.
 */
#pragma once

#include "procd/core/fd-mux.h"

typedef struct pd_pid_watch pd_pid_watch;
typedef struct pd_pid_watch_entry pd_pid_watch_entry;
typedef void (*pd_pid_watch_fn)(void *data);

/* A set attached to the default main context: its pidfds in mux's set (fd-mux.h), or in a
 * mux of its own when mux is NULL; NULL when no epoll fd can be made. */
pd_pid_watch *pd_pid_watch_new(pd_fd_mux *mux);
/* Cancels what is still watched (their callbacks never run). */
void pd_pid_watch_free(pd_pid_watch *w);

/* Watch pidfd: fn(data) runs once after the process exits.  destroy(data) (may be NULL)
 * runs when the watch ends: after fn, or at its cancel.  NULL on failure (errno set). */
pd_pid_watch_entry *pd_pid_watch_add(pd_pid_watch *w, int pidfd, pd_pid_watch_fn fn, void *data,
                                     pd_pid_watch_fn destroy);
/* Stop watching (before the pidfd is closed); NULL is allowed. */
void pd_pid_watch_cancel(pd_pid_watch_entry *e);
