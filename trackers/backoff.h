/* backoff.h - the one poll backoff of the tracker library.
 *
 * Every "wait until the kernel says so" loop (freeze confirmed, cgroup empty, rmdir no
 * longer EBUSY, /proc family stopped) sleeps with the same schedule: a first step doubling
 * up to 16 ms, never past the deadline.  Deadlines are tr_now_usec() values.
 */
#pragma once

#include <stdint.h>

#define TR_BACKOFF_MAX_USEC 16000u

/* nanosleep usec, resumed after EINTR. */
void tr_sleep_usec(uint64_t usec);

/* Sleep *step_usec (cut to what is left before the deadline), then double *step_usec up to
 * TR_BACKOFF_MAX_USEC. */
void tr_backoff(uint64_t *step_usec, uint64_t deadline_usec);

/* Call check(ud) until it returns non-zero or the deadline has passed, with tr_backoff
 * (starting at step_usec) between calls; check runs at least once, and once more at the
 * deadline.  Returns check's non-zero value (> 0: reached; < 0: its error, the poll stops)
 * or 0 when the deadline passed first. */
int tr_poll_until(uint64_t deadline_usec, uint64_t step_usec, int (*check)(void *ud), void *ud);
