/* backoff.c - the one poll backoff (see backoff.h). */
#include "backoff.h"

#include <errno.h>
#include <time.h>

#include "util.h"

void tr_sleep_usec(uint64_t usec)
{
        struct timespec ts = { .tv_sec = (time_t) (usec / 1000000u), .tv_nsec = (long) (usec % 1000000u) * 1000 };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

void tr_backoff(uint64_t *step_usec, uint64_t deadline_usec)
{
        uint64_t now = tr_now_usec();
        uint64_t s = *step_usec;
        if (now + s > deadline_usec)
                s = deadline_usec > now ? deadline_usec - now : 0;
        if (s)
                tr_sleep_usec(s);
        if (*step_usec < TR_BACKOFF_MAX_USEC)
                *step_usec = *step_usec * 2 < TR_BACKOFF_MAX_USEC ? *step_usec * 2 : TR_BACKOFF_MAX_USEC;
}

int tr_poll_until(uint64_t deadline_usec, uint64_t step_usec, int (*check)(void *ud), void *ud)
{
        for (;;) {
                int r = check(ud);
                if (r != 0)
                        return r;
                if (tr_now_usec() >= deadline_usec)
                        return 0;
                tr_backoff(&step_usec, deadline_usec);
        }
}
