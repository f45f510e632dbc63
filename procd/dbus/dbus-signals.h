/* dbus-signals.h - events (procd/core/events.h) as org.procd.ProcFamily1 signals.
 *
 * Every signal has one shape, (i root_pid, s job, a{sv} data): root_pid 0 for
 * FamiliesRestored, job "" when the family has no job.  data: "dropped" (t) when events were
 * lost for this subscriber since the previous signal it got; FamilyOomKill: "oom_kills" (t,
 * since the previous one), "oom_kills_total" (t); FamiliesRestored: "families" (t);
 * FamilyUnkillable: "message" (s); FamilyEmptied: the final usage as GetUsage gives it
 * ("source", the fields) when it could be read. */
#pragma once

#include <dbus/dbus.h>
#include <stdint.h>

#include "procd/core/events.h"

/* NULL when out of memory. */
DBusMessage *pd_dbus_event_signal(const pd_event *e, uint64_t dropped);
