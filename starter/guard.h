/* guard.h - the starter's guard: what ends the job when the starter is killed.
 *
 * A child of the starter, made once the job cgroup exists (and, cgroupfs, is locked) and
 * the private /tmp directory is made, before the job is started.  Given the procd-starter
 * binary to run (cleanup_exe), it is a CLONE_VM | CLONE_FILES child (clone-vm.h): while the
 * starter lives it only waits, on the starter's memory and fd table, and when the starter
 * is gone it execs `procd-starter --guard-cleanup ...` with what to end and remove in its
 * arguments, so the cleanup runs in an address space of its own (the starter may have died
 * inside malloc).  That spares the starter a fork and an fd table copy, and the guard's
 * exit an address space and a table to tear down (NOTES 14.30).  The shared table stays
 * open from the starter's death to that exec, some microseconds: the gate's write end
 * among it, so a child still at the gate sees its EOF then.  Without cleanup_exe, or where
 * CLONE_VM children are not allowed (ASan) or the kernel refuses one, it is a fork that
 * does the cleanup itself.  It holds nothing of its own:
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
 * At its normal end the starter dismisses the guard (SIGKILL through its pidfd) once the job
 * is over and its usage read, removes the job's cgroups and directory meanwhile, then reaps
 * it: the guard's death overlaps that cleanup (NOTES 14.30).  A starter killed inside that
 * window leaves an empty job cgroup to the next starter's sweep. */
#pragma once

#include <sys/types.h>

#include "clone-vm.h"
#include "jobcg.h"
#include "jobns.h"
#include "trackers/error.h"

typedef struct st_guard {
        pid_t pid;
        int pidfd;          /* -1: no guard */
        char **cleanup_argv; /* the CLONE_VM guard's exec arguments (one allocation) */
        st_vm_stack stack;  /* its stack */
        int exe_fd;         /* the binary it execs, and the starter's own pidfd it polls: */
        int self_pidfd;     /* open while it lives (it shares the fd table) */
        bool dismissed;     /* SIGKILL sent */
} st_guard;

#define ST_GUARD_INIT                                                                                  \
        { .pid = -1, .pidfd = -1, .cleanup_argv = NULL, .stack = ST_VM_STACK_INIT, .exe_fd = -1,        \
          .self_pidfd = -1, .dismissed = false }

/* Start the guard for jc and ns as they are now.  drop_fd (-1: none): the starter's procd
 * connection, which must end with the starter: a fork guard closes its copy at once (and
 * the strategy's guard_drop_fd); the CLONE_VM guard shares the fd table, which its exec
 * gives up.  cleanup_exe: the procd-starter binary the guard execs when the starter is gone
 * (main.c passes /proc/self/exe); NULL: a fork guard.  0 or -errno. */
int st_guard_start(st_guard *g, const st_jobcg *jc, const st_jobns *ns, int drop_fd, const char *cleanup_exe,
                   tr_error *err);
/* `procd-starter --guard-cleanup ...` (argv as st_guard_start made it): end the dead
 * starter's job and remove what it made; the process's exit code. */
int st_guard_cleanup_main(int argc, char **argv);
/* Send it SIGKILL: the job is over, nothing is left for it (idempotent). */
void st_guard_dismiss(st_guard *g);
/* Dismiss it if not yet, reap it and free what it ran on (the starter ends normally, or
 * gave up); idempotent, and harmless when the starter's stray reaping already reaped a
 * guard that died. */
void st_guard_stop(st_guard *g);
