/* fd-mux.h - procd's fds watched through one epoll fd: one GLib source, and the main
 * loop's wait.
 *
 * GLib walks every source of the context twice per main-loop iteration (prepare, check)
 * and poll() visits every fd, so each source costs every request, classic or D-Bus, a
 * few hundred instructions and a wakeup-queue entry in the kernel (issue 20: 5,000 of a
 * classic GET_USAGE's ~13,900 user-space instructions were GLib's walks over 10 sources).
 * The fds that fire once in a daemon's life or once per job (the signalfd, the parent's
 * pidfd, the watchers' epoll set, inotify and the OOM eventfds' epoll set), the classic
 * command FIFO and D-Bus connections' sockets sit in one epoll set here.  pd_fd_mux_run
 * turns the main loop with one epoll_wait on that set as each turn's wait (the context's
 * wakeup fd joins it), and hands the events it returned to the set's dispatch: a classic
 * request costs one epoll_wait where GLib's poll() of three fds (its wakeup, the set, the
 * FIFO) cost every fd's poll twice and a wait-queue entry each (issue 20: a third of a
 * GET_USAGE in a TCG guest).  Long periodic timers (the classic FIFOs' housekeeping) join
 * the set as timerfds.  An fd can be in the set once: a second entry for it is refused by
 * epoll (EEXIST) and becomes a source of its own (a turn with such a source polls as GLib
 * would).  Fairness: with more than PD_FD_MUX_PER_TURN entries ready, each waits its turn
 * (epoll hands out a level-triggered entry it returned after the ones it did not), so with
 * many busy D-Bus clients each is read every ceil(n / PD_FD_MUX_PER_TURN) turns, where as
 * sources each was read every turn; the classic FIFO shares those turns (with 32 busy D-Bus
 * clients a classic request may wait a turn of 16 D-Bus calls, ~1 ms): a node's D-Bus
 * clients are tools, its classic ones HTCondor's daemons, and neither kind starves.
 *
 * An entry stays until its callback returns G_SOURCE_REMOVE or it is removed; its fd is
 * level-triggered (but pd_fd_mux_add_drained's), so a callback that leaves data unread is
 * called again on the next main-loop turn (each ready entry at most once a turn, at most
 * PD_FD_MUX_PER_TURN entries a turn: the other sources get theirs in between).  Removing
 * an entry never closes the fd (the caller owns it) and must happen before the caller
 * closes it: an event already fetched for the entry is dropped then, where an fd closed
 * first could have the callback run on whatever file reuses its number.  A callback may
 * remove any entry, its own included, but not free the mux.  Single-threaded.
 */
#pragma once

#include <glib-unix.h>
#include <glib.h>
#include <stdbool.h>

#define PD_FD_MUX_PER_TURN 16

typedef struct pd_fd_mux pd_fd_mux;
typedef struct pd_fd_mux_entry pd_fd_mux_entry;

/* A set attached to the default main context; NULL when no epoll fd can be made. */
pd_fd_mux *pd_fd_mux_new(void);
/* Removes what is still in the set (their callbacks never run again). */
void pd_fd_mux_free(pd_fd_mux *m);

/* Watch fd for cond (G_IO_IN and/or G_IO_OUT; errors and hangups always): fn(fd, cond
 * seen, data) as a g_unix_fd_add callback.  Without a set (m NULL: no epoll fd), or where
 * the set refuses the fd or timer, the entry is a main-loop source of its own, with the
 * same rules: the callers hold one kind of handle either way.  NULL only without memory. */
pd_fd_mux_entry *pd_fd_mux_add(pd_fd_mux *m, int fd, GIOCondition cond, GUnixFDSourceFunc fn, void *data);
/* The same for G_IO_IN, edge-triggered in the set: fn reads fd until EAGAIN, or until a
 * read from a pipe returns less than it asked (the pipe was emptied then): an event is
 * reported once, for data that arrived after fn last emptied it. */
pd_fd_mux_entry *pd_fd_mux_add_drained(pd_fd_mux *m, int fd, GUnixFDSourceFunc fn, void *data);
/* A timer in the set (a timerfd it owns): fn(data) every interval_ms as a g_timeout_add
 * callback (G_SOURCE_REMOVE ends it), the first after one interval.  A source of its own
 * as above when there is no set or no timerfd (EMFILE); NULL only without memory. */
pd_fd_mux_entry *pd_fd_mux_add_timer(pd_fd_mux *m, unsigned interval_ms, GSourceFunc fn, void *data);
/* Stop watching (before fd is closed; a timer's timerfd is closed here); NULL is allowed. */
void pd_fd_mux_remove(pd_fd_mux_entry *e);
/* Run loop's context (the default one) until g_main_loop_quit(loop): made running
 * (g_main_loop_new(NULL, TRUE)), else it returns at once (quit before it ran).  Each turn
 * is GLib's (prepare, query, check, dispatch), but its wait is one epoll_wait on the set
 * when GLib asks for nothing but the set and the context's wakeup fd (which joins the set
 * on the first turn that polls the set).  When no source was ready at prepare and that
 * epoll_wait fetched the set's entries and not the wakeup, the turn skips GLib's check
 * and dispatch and dispatches the set itself (the one source check would find ready);
 * a timeout that came due meanwhile, or a source added by a callback, is prepared ready
 * on the next turn.  m NULL or another context: g_main_loop_run.  Single-threaded as
 * GLib's own loop: no nested loop while it runs. */
void pd_fd_mux_run(pd_fd_mux *m, GMainLoop *loop);
/* Entries in the set (tests). */
unsigned pd_fd_mux_count(const pd_fd_mux *m);
/* Turns of pd_fd_mux_run that waited in one epoll_wait on the set (tests). */
unsigned pd_fd_mux_fast_waits(const pd_fd_mux *m);
/* Turns of pd_fd_mux_run that dispatched the set without GLib's check (tests). */
unsigned pd_fd_mux_direct_turns(const pd_fd_mux *m);
