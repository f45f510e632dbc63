/* dbus-server.h - the peer-to-peer D-Bus transport: a libdbus-1 DBusServer on a UNIX
 * socket (created 0660, group from --group), every connection served from the GLib main
 * loop, with per-connection limits.  A thin adapter over the command layer. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "procd/core/admission.h"
#include "procd/core/command.h"
#include "trackers/error.h"

/* Limits per connection. */
#define PD_DBUS_MAX_CONNECTIONS PD_ADMISSION_MAX_SLOTS
/* Connection quotas (procd/core/admission.h): the peer's uid is read with SO_PEERCRED at accept
 * (the credential libdbus's EXTERNAL authentication uses) and confirmed once authenticated.
 * Peers of non-zero uid (and peers whose uid could not be read) share
 * PD_DBUS_MAX_CONNECTIONS - PD_DBUS_ROOT_RESERVED_CONNECTIONS slots, at most
 * --max-connections-per-uid each; uid 0 may take every slot, the last ones are its alone.
 * Unauthenticated peers are dropped after PD_ADMISSION_AUTH_TIMEOUT_SEC.  When the caps are
 * reached, a connection idle for --evict-idle-after seconds (default
 * PD_ADMISSION_EVICT_MIN_IDLE_SEC) or more gives way to the new one (root's newcomers
 * displace anyone's, others only their own uid's). */
#define PD_DBUS_ROOT_RESERVED_CONNECTIONS PD_ADMISSION_ROOT_RESERVED
#define PD_DBUS_DEFAULT_MAX_CONNECTIONS_PER_UID PD_ADMISSION_DEFAULT_PER_UID
/* What procd holds for one peer, bounded so that 32 peers that send calls and never read
 * the replies cost procd a few MB (NOTES: measured): */
#define PD_DBUS_MAX_MESSAGE_BYTES (256 * 1024)           /* a call larger: libdbus drops the peer */
#define PD_DBUS_MAX_RECEIVED_BYTES (256 * 1024)          /* queued unread calls: backpressure */
#define PD_DBUS_MAX_MESSAGE_FDS 4                         /* fds in one message (none is used) */
#define PD_DBUS_MAX_RECEIVED_FDS 8                        /* fds queued per connection */
/* Replies the peer has not read yet, checked when its next call arrives (so one large reply,
 * a Dump of many families, is always sent): above it the peer is dropped and its memory
 * freed.  (libdbus keeps several times the wire size per queued message.) */
#define PD_DBUS_MAX_OUTGOING_BYTES (64 * 1024)
/* Events (Subscribe): a signal is queued for a subscriber only while what it has not read
 * stays below this (under PD_DBUS_MAX_OUTGOING_BYTES, so that events alone never get a
 * subscriber dropped); past it the event is lost for that subscriber, counted
 * (pd_events_count_dropped), and the next signal it gets says how many with "dropped". */
#define PD_DBUS_MAX_EVENT_BYTES (32 * 1024)

typedef struct pd_dbus_server pd_dbus_server;

/* Listen on socket_path (its directory is created 0755 when missing; a stale socket is
 * replaced, a live one is -EADDRINUSE).  group (gid_t)-1: keep procd's group.
 * max_per_uid: connections one non-root uid may hold (1..PD_DBUS_MAX_CONNECTIONS; 0: the
 * default).  evict_idle_sec: how long a connection must have been idle to give way. */
int pd_dbus_server_new(const char *socket_path, gid_t group, unsigned max_per_uid, unsigned evict_idle_sec,
                       pd_commands *cm, pd_dbus_server **out, tr_error *err);
/* Flush pending replies, close every connection, stop listening, unlink the socket. */
void pd_dbus_server_free(pd_dbus_server *s);
size_t pd_dbus_server_connections(const pd_dbus_server *s);
