/* events.h - what happened to families, told to whoever subscribed (issue 17 §1).
 *
 * The hub: places where things happen call pd_events_emit (the command layer: frozen,
 * thawed, killing, unkillable; the registry's family hook: registered, and for /proc
 * families the snapshot that finds one empty; event-watch.c: the kernel's notifications of
 * a family cgroup, empty and OOM kills; restore: restored N).  Each event goes to every
 * sink (a face: the D-Bus server sends it to its subscribers).  A sink that could not pass
 * an event on (a subscriber's queue full) says so with pd_events_count_dropped; the hub
 * counts what it emitted and what was dropped (for metrics: pd_events_stats).
 *
 * Single-threaded: the GLib main loop.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procd/core/registry.h"
#include "trackers/usage.h"

typedef enum pd_event_kind {
        PD_EVENT_REGISTERED = 0, /* a family was registered */
        PD_EVENT_EMPTIED,        /* a family's last process is gone (usage: the final usage) */
        PD_EVENT_OOM_KILL,       /* the kernel's OOM killer killed in the family (count, total) */
        PD_EVENT_FROZEN,         /* SuspendFamily done */
        PD_EVENT_THAWED,         /* ContinueFamily done */
        PD_EVENT_KILLING,        /* KillFamily started */
        PD_EVENT_UNKILLABLE,     /* KillFamily gave up after the kill timeout (message) */
        PD_EVENT_RESTORED,       /* procd restored count families at start (root_pid 0) */
        PD_EVENT_KIND_COUNT
} pd_event_kind;

typedef struct pd_event {
        pd_event_kind kind;
        pid_t root_pid;         /* the family's root; 0 for PD_EVENT_RESTORED */
        const char *job;        /* the family's job id (SetFamilyJob), "" when none */
        uint64_t count;         /* OOM_KILL: kills since the previous event; RESTORED: families */
        uint64_t total;         /* OOM_KILL: the family cgroup's oom_kill counter */
        const tr_usage *usage;  /* EMPTIED: the final usage, NULL when it could not be read */
        const char *message;    /* UNKILLABLE: what would not die; else NULL */
} pd_event;

/* The D-Bus signal name of a kind: "FamilyRegistered", "FamilyEmptied", "FamilyOomKill",
 * "FamilyFrozen", "FamilyThawed", "FamilyKilling", "FamilyUnkillable", "FamiliesRestored". */
const char *pd_event_name(pd_event_kind kind);

typedef struct pd_events pd_events;
typedef void (*pd_event_sink_fn)(void *userdata, const pd_event *ev);
/* The job id of the family rooted at root_pid, NULL when none (command-jobs.c). */
typedef const char *(*pd_event_job_fn)(void *userdata, pid_t root_pid);

pd_events *pd_events_new(void);
void pd_events_free(pd_events *ev);
void pd_events_set_job_lookup(pd_events *ev, pd_event_job_fn fn, void *userdata);
/* Whether a sink has anyone to pass events to now (a face with no subscriber: false). */
typedef bool (*pd_event_listening_fn)(void *userdata);
/* At most a few sinks (one per face); listening NULL: always listening. */
void pd_events_add_sink(pd_events *ev, pd_event_sink_fn fn, pd_event_listening_fn listening, void *userdata);
void pd_events_remove_sink(pd_events *ev, pd_event_sink_fn fn, void *userdata);

/* Tell every sink.  ev->job NULL: looked up by root pid.  ev NULL-safe hub (NULL: nothing). */
void pd_events_emit(pd_events *ev, const pd_event *e);
/* Whether any sink has a listener: data only an event carries (FamilyEmptied's final
 * usage, a dozen cgroup files per job) is read only then. */
bool pd_events_listened(const pd_events *ev);
/* Shorthand for the family events without data. */
void pd_events_family(pd_events *ev, pd_event_kind kind, pid_t root_pid);
/* procd restored n families at start: emitted, and kept as the start event that a new
 * subscriber gets first (it cannot have been connected when it happened). */
void pd_events_restored(pd_events *ev, size_t n);
/* The start event (PD_EVENT_RESTORED) when there was a restore; false otherwise. */
bool pd_events_start_event(const pd_events *ev, pd_event *out);

/* A sink lost n events (a subscriber's bound). */
void pd_events_count_dropped(pd_events *ev, uint64_t n);

typedef struct pd_events_stats {
        uint64_t emitted[PD_EVENT_KIND_COUNT]; /* per kind, since start */
        uint64_t dropped;                      /* lost by sinks, all subscribers */
        uint64_t kernel_wakeups;               /* inotify/eventfd reads (event-watch.c) */
        uint64_t kernel_reads;                 /* cgroup files read after a wakeup */
} pd_events_stats;
/* Counters for metrics and tests (issue 17 §3 reads them). */
void pd_events_stats_get(const pd_events *ev, pd_events_stats *out);
/* event-watch.c's share of the counters. */
void pd_events_count_kernel(pd_events *ev, uint64_t wakeups, uint64_t reads);
