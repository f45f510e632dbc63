/* procctl-events.h - procctl events [--json]: procd's events, one line each, until
 * interrupted (or until the connection is lost). */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "procd/client.h"

/* Subscribe on c and print each event to out (flushed per line); returns only on an error
 * (the connection lost: PROCD_E_TRANSPORT) or when max_events (0: no limit) were printed. */
procd_status procctl_events(procd_client *c, bool json, unsigned long max_events, FILE *out, procd_error *err);
/* One event as a line: "FamilyOomKill root=123 job=j1 oom_kills=1 oom_kills_total=1", or its
 * JSON object ({"event": ..., "root_pid": ..., "job": ..., data keys, "usage": {...}}). */
void procctl_event_write(const procd_event *ev, bool json, FILE *out);
