/* guard.h - the starter's guard: what ends the job when the starter is killed.
 *
 * A fork of the starter, made once the job cgroup exists (and, cgroupfs, is locked) and the
 * private /tmp directory is made, before the job is started.  It holds nothing of its own:
 * it shares the starter's lock on <top> (the same open file description), so a sweep by
 * another starter leaves the job to it, and waits on the starter's pidfd.  When the starter
 * exits without stopping it (SIGKILL, a crash), the guard does what the starter's normal end
 * would: kill the job cgroup, remove the private /tmp directory and the job's cgroups, then
 * exit (its lock goes with it).  procd's kill-on-watcher-exit does the killing too when
 * procd tracks the job; the two are idempotent.  Killed together with the starter (a
 * process-group SIGKILL), the guard leaves the job to the next starter's sweep
 * (orphans.h), which finds the lock free.  Before the gate opens (launch.h) the job's
 * child dies with the starter by itself.
 *
 * The starter stops the guard (SIGKILL through its pidfd, then reaps it) at its normal end,
 * after its own cleanup. */
#pragma once

#include <sys/types.h>

#include "jobcg.h"
#include "jobns.h"
#include "trackers/error.h"

typedef struct st_guard {
        pid_t pid;
        int pidfd; /* -1: no guard */
} st_guard;

/* Start the guard for jc and ns (copied into the fork as they are now); drop_fd (-1: none)
 * is closed in the guard at once (the starter's procd connection, which must end with the
 * starter).  0 or -errno. */
int st_guard_start(st_guard *g, st_jobcg *jc, st_jobns *ns, int drop_fd, tr_error *err);
/* Stop it (the starter ends normally, or gave up); idempotent, and harmless when the
 * starter's stray reaping already reaped a guard that died. */
void st_guard_stop(st_guard *g);
