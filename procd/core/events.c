/* events.c - the events hub (see events.h). */
#include "events.h"

#include <glib.h>
#include <string.h>

typedef struct sink {
        pd_event_sink_fn fn;
        pd_event_listening_fn listening;
        void *userdata;
} sink;

struct pd_events {
        GArray *sinks; /* sink */
        pd_event_job_fn job_of;
        void *job_data;
        bool restored;
        uint64_t restored_n;
        pd_events_stats stats;
};

static const char *const names[PD_EVENT_KIND_COUNT] = {
        [PD_EVENT_REGISTERED] = "FamilyRegistered", [PD_EVENT_EMPTIED] = "FamilyEmptied",
        [PD_EVENT_OOM_KILL] = "FamilyOomKill",      [PD_EVENT_FROZEN] = "FamilyFrozen",
        [PD_EVENT_THAWED] = "FamilyThawed",         [PD_EVENT_KILLING] = "FamilyKilling",
        [PD_EVENT_UNKILLABLE] = "FamilyUnkillable", [PD_EVENT_RESTORED] = "FamiliesRestored",
};

const char *pd_event_name(pd_event_kind kind)
{
        return (unsigned) kind < PD_EVENT_KIND_COUNT ? names[kind] : "Unknown";
}

pd_events *pd_events_new(void)
{
        pd_events *ev = g_new0(pd_events, 1);
        ev->sinks = g_array_new(FALSE, FALSE, sizeof(sink));
        return ev;
}

void pd_events_free(pd_events *ev)
{
        if (!ev)
                return;
        g_array_free(ev->sinks, TRUE);
        g_free(ev);
}

void pd_events_set_job_lookup(pd_events *ev, pd_event_job_fn fn, void *userdata)
{
        ev->job_of = fn;
        ev->job_data = userdata;
}

void pd_events_add_sink(pd_events *ev, pd_event_sink_fn fn, pd_event_listening_fn listening, void *userdata)
{
        sink s = { fn, listening, userdata };
        g_array_append_val(ev->sinks, s);
}

void pd_events_remove_sink(pd_events *ev, pd_event_sink_fn fn, void *userdata)
{
        for (guint i = ev->sinks->len; i-- > 0;) {
                const sink *s = &g_array_index(ev->sinks, sink, i);
                if (s->fn == fn && s->userdata == userdata)
                        g_array_remove_index(ev->sinks, i);
        }
}

void pd_events_emit(pd_events *ev, const pd_event *e)
{
        if (!ev || (unsigned) e->kind >= PD_EVENT_KIND_COUNT)
                return;
        pd_event copy = *e;
        if (!copy.job) {
                const char *j = ev->job_of && copy.root_pid > 0 ? ev->job_of(ev->job_data, copy.root_pid) : NULL;
                copy.job = j ? j : "";
        }
        ev->stats.emitted[copy.kind]++;
        g_debug("event %s family %d job '%s'", pd_event_name(copy.kind), (int) copy.root_pid, copy.job);
        for (guint i = 0; i < ev->sinks->len; i++) {
                const sink *s = &g_array_index(ev->sinks, sink, i);
                s->fn(s->userdata, &copy);
        }
}

bool pd_events_listened(const pd_events *ev)
{
        if (!ev)
                return false;
        for (guint i = 0; i < ev->sinks->len; i++) {
                const sink *s = &g_array_index(ev->sinks, sink, i);
                if (!s->listening || s->listening(s->userdata))
                        return true;
        }
        return false;
}

void pd_events_family(pd_events *ev, pd_event_kind kind, pid_t root_pid)
{
        pd_event e = { .kind = kind, .root_pid = root_pid };
        pd_events_emit(ev, &e);
}

void pd_events_restored(pd_events *ev, size_t n)
{
        if (!ev)
                return;
        ev->restored = true;
        ev->restored_n = n;
        pd_event e = { .kind = PD_EVENT_RESTORED, .count = n, .job = "" };
        pd_events_emit(ev, &e);
}

bool pd_events_start_event(const pd_events *ev, pd_event *out)
{
        if (!ev || !ev->restored)
                return false;
        *out = (pd_event) { .kind = PD_EVENT_RESTORED, .count = ev->restored_n, .job = "" };
        return true;
}

void pd_events_count_dropped(pd_events *ev, uint64_t n)
{
        if (ev)
                ev->stats.dropped += n;
}

void pd_events_count_kernel(pd_events *ev, uint64_t wakeups, uint64_t reads)
{
        if (!ev)
                return;
        ev->stats.kernel_wakeups += wakeups;
        ev->stats.kernel_reads += reads;
}

void pd_events_stats_get(const pd_events *ev, pd_events_stats *out)
{
        if (ev)
                *out = ev->stats;
        else
                memset(out, 0, sizeof *out);
}
