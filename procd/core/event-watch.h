/* event-watch.h - the kernel's own notifications of a family's cgroup, turned into events
 * (events.h), and the registry's family hook (registered, restored, re-tracked, removed,
 * a /proc family found empty).
 *
 * Per cgroup family, armed when it gets its cgroup and disarmed when it is unregistered:
 *   v2 cgroup.events    inotify IN_MODIFY: "populated 0" is the family's last process gone
 *                       (FamilyEmptied with the usage read then);
 *   v2 memory.events    inotify IN_MODIFY: oom_kill grew (FamilyOomKill);
 *   v1 memory           an eventfd registered through cgroup.event_control on
 *                       memory.oom_control: the OOM notifier fires before the kill, so the
 *                       oom_kill counter is read then and re-read up to
 *                       PD_EVENT_WATCH_OOM_RECHECKS times, PD_EVENT_WATCH_OOM_RECHECK_MS
 *                       apart, until it grew.
 * One inotify fd and one epoll fd (the eventfds) for all families, both in procd's fd set
 * (fd-mux.h) when there is one, else two GLib sources.  Each
 * wakeup reads the one file it concerns (openat on the family's cgroup dirfd), nothing else.
 * Nothing is polled, except: a /proc-tracked family (no cgroup) is found empty by the
 * registry's snapshots it already takes, and a cgroup family without a v2 cgroup (v1 only)
 * has no emptiness notification (release_agent is host-wide): no FamilyEmptied for it.
 */
#pragma once

#include "procd/core/events.h"
#include "procd/core/registry.h"

#define PD_EVENT_WATCH_OOM_RECHECKS 10
#define PD_EVENT_WATCH_OOM_RECHECK_MS 20

typedef struct pd_event_watch pd_event_watch;

/* Sets reg's family hook; NULL when neither inotify nor epoll is available (no events
 * from the kernel then; the command layer's events still flow). */
pd_event_watch *pd_event_watch_new(pd_registry *reg, pd_events *ev);
void pd_event_watch_free(pd_event_watch *w);
/* Families armed now (tests). */
unsigned pd_event_watch_armed(const pd_event_watch *w);
