/* test_backoff.c - the one poll backoff (backoff.c) (unit; no timed assertion). */
#include <errno.h>

#include "testsupport.h"
#include "trackers/backoff.h"
#include "trackers/util.h"

typedef struct counter {
        int calls;
        int done_at; /* return `value` on this call (1-based), 0 before */
        int value;
} counter;

static int check(void *ud)
{
        counter *c = ud;
        c->calls++;
        return c->calls == c->done_at ? c->value : 0;
}

/* One line per case: what tr_poll_until returns and how often it asked. */
static void check_poll(uint64_t timeout_usec, int done_at, int value, int want_r, int want_calls)
{
        counter c = { 0, done_at, value };
        uint64_t deadline = tr_now_usec() + timeout_usec;
        int r = tr_poll_until(deadline, 500, check, &c);
        CU_ASSERT_EQUAL(r, want_r);
        if (want_calls)
                CU_ASSERT_EQUAL(c.calls, want_calls);
        if (r == 0)
                CU_ASSERT(tr_now_usec() >= deadline); /* 0 only once the deadline passed */
}

static void test_poll(void)
{
        check_poll(60 * 1000000ull, 1, 1, 1, 1);     /* reached at once */
        check_poll(60 * 1000000ull, 3, 1, 1, 3);     /* reached on the third look */
        check_poll(60 * 1000000ull, 2, -EIO, -EIO, 2); /* an error stops the poll */
        check_poll(0, 5, 1, 0, 1);                    /* no time: one look, then 0 */
        check_poll(2000, 0, 0, 0, 0);                 /* never: 0 at the deadline */
}

static void check_step(uint64_t from, uint64_t want)
{
        uint64_t step = from;
        tr_backoff(&step, 0); /* a deadline in the past: no sleep */
        CU_ASSERT_EQUAL(step, want);
}

static void test_backoff_steps(void)
{
        check_step(500, 1000);
        check_step(1000, 2000);
        check_step(8000, 16000);
        check_step(12000, TR_BACKOFF_MAX_USEC);
        check_step(TR_BACKOFF_MAX_USEC, TR_BACKOFF_MAX_USEC);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "poll", test_poll },
                { "steps", test_backoff_steps },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("backoff", NULL, NULL, tests);
}
