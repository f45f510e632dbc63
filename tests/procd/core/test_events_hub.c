/* test_events_hub.c - the events hub: every sink is told, a job is looked up, and whether
 * anyone listens (what decides if FamilyEmptied reads the final usage). */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "procd/core/events.h"
#include "testsupport.h"

typedef struct seen {
        int n;
        bool listening;
        char job[32];
} seen;

static void sink(void *data, const pd_event *e)
{
        seen *s = data;
        s->n++;
        snprintf(s->job, sizeof s->job, "%s", e->job);
}

static bool listening(void *data) { return ((seen *) data)->listening; }

static const char *job_of(void *data, pid_t root) { return root == 42 ? data : NULL; }

static void check_listened(pd_events *ev, bool want, const char *why)
{
        CU_ASSERT_EQUAL(pd_events_listened(ev), want);
        if (pd_events_listened(ev) != want)
                printf("\n  listened: want %d: %s", want, why);
}

static void test_listened(void)
{
        check_listened(NULL, false, "no hub");
        pd_events *ev = pd_events_new();
        seen a = { 0 }, b = { 0 };
        check_listened(ev, false, "no sink");
        pd_events_add_sink(ev, sink, listening, &a);
        check_listened(ev, false, "a sink without a subscriber");
        a.listening = true;
        check_listened(ev, true, "a sink with a subscriber");
        a.listening = false;
        pd_events_add_sink(ev, sink, NULL, &b);
        check_listened(ev, true, "a sink that always listens");
        pd_events_remove_sink(ev, sink, &b);
        check_listened(ev, false, "that sink removed");
        /* told whether or not it listens: the sink decides whom it passes an event to */
        pd_events_family(ev, PD_EVENT_REGISTERED, 7);
        CU_ASSERT_EQUAL(a.n, 1);
        CU_ASSERT_EQUAL(b.n, 0);
        pd_events_stats st;
        pd_events_stats_get(ev, &st);
        CU_ASSERT_EQUAL(st.emitted[PD_EVENT_REGISTERED], 1);
        pd_events_free(ev);
}

static void test_job_lookup(void)
{
        pd_events *ev = pd_events_new();
        seen a = { .listening = true };
        pd_events_add_sink(ev, sink, listening, &a);
        pd_events_set_job_lookup(ev, job_of, "job.42");
        pd_events_family(ev, PD_EVENT_EMPTIED, 42);
        CU_ASSERT_STRING_EQUAL(a.job, "job.42");
        pd_events_family(ev, PD_EVENT_EMPTIED, 43);
        CU_ASSERT_STRING_EQUAL(a.job, "");
        pd_event e = { .kind = PD_EVENT_KILLING, .root_pid = 42, .job = "given" };
        pd_events_emit(ev, &e);
        CU_ASSERT_STRING_EQUAL(a.job, "given");
        CU_ASSERT_EQUAL(a.n, 3);
        pd_events_free(ev);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "listened: no sink, no subscriber, a subscriber, always", test_listened },
                { "a job looked up by root pid, or given", test_job_lookup },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("events hub", NULL, NULL, tests);
}
