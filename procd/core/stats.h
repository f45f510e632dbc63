/* stats.h - what procd counts about itself (issue 17 §3): requests by operation and
 * status, malformed requests, connections, the restore at start.  The transports count
 * (they see the requests); the metrics text (metrics.h) reads the counts.  No locking: the
 * daemon is one GLib main loop. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "procd/types.h"

typedef struct pd_stats {
        GHashTable *requests;        /* "Operation\nStatus" -> uint64_t * count */
        uint64_t malformed_requests; /* unknown method, wrong signature, undecodable */
        uint64_t connections_now;    /* open D-Bus connections */
        uint64_t connections_total;  /* accepted since start */
        uint64_t start_realtime_usec;
        uint64_t restore_wall_usec;  /* the restore of the state file at start */
        uint64_t restored_families, restore_in_file;
} pd_stats;

void pd_stats_init(pd_stats *st);
void pd_stats_clear(pd_stats *st);
/* One request done: operation (the D-Bus method name, or the classic command's:
 * GET_USAGE...) and its status ("OK" or the error's name). */
void pd_stats_request(pd_stats *st, const char *operation, procd_status status);
/* The same with the status by name (a transport's own: the classic protocol's errors). */
void pd_stats_request_named(pd_stats *st, const char *operation, const char *status);
/* The counter of (operation, status), made at 0 when new: a transport that counts the
 * same pairs again and again keeps the pointer (the key's hash and compare were ~300
 * instructions of every classic GET_USAGE, issue 20).  Valid until pd_stats_clear; NULL
 * when st counts nothing. */
uint64_t *pd_stats_request_counter(pd_stats *st, const char *operation, const char *status);

/* Calls fn for each (operation, status name, count), sorted by operation then status. */
typedef void (*pd_stats_request_fn)(const char *operation, const char *status, uint64_t count, void *ud);
void pd_stats_foreach_request(const pd_stats *st, pd_stats_request_fn fn, void *ud);
