/* pidref.h - a reference to one process: pid + start time (+ a pidfd where the kernel has
 * them).  The only way procd acts on a pid: a pid read earlier is never signalled bare.
 *
 * Opened, the reference names the process whose start time it holds: the pidfd is opened
 * first and the start time read after it, so the pidfd names that very process (a pid
 * reused later cannot be reached through it).  Without pidfd_open (kernel < 5.3, or a
 * seccomp filter answering EPERM) the reference holds pid + start time alone, and each
 * signal re-reads the start time right before kill().
 *
 * Safety: pid 0 and negative pids are refused when opening (-EINVAL); a signal to pid 1
 * (or 0, or below) is refused with -EPERM; kill() is never called with pid <= 0.  A thread
 * id that leads no thread group is refused (-EINVAL): kill() on it would hit its whole
 * process.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc-read.h"

typedef struct tr_pidref {
        pid_t pid;            /* 0: empty */
        uint64_t start_ticks; /* /proc/PID/stat field 22 */
        int pidfd;            /* -1: none (no pidfd_open here) */
} tr_pidref;

#define TR_PIDREF_EMPTY ((tr_pidref) { .pid = 0, .start_ticks = 0, .pidfd = -1 })

/* Open a reference to pid.  start_ticks 0: whatever process pid names now; else pid must
 * still name the process started then (-ESRCH when gone or reused).  -EINVAL for pid <= 0
 * or a thread id; -errno otherwise.  *out is TR_PIDREF_EMPTY on failure. */
int tr_pidref_open(pid_t pid, uint64_t start_ticks, tr_pidref *out);
/* Close the pidfd and empty the reference (safe on an empty one). */
void tr_pidref_close(tr_pidref *ref);
#define _cleanup_pidref_ __attribute__((cleanup(tr_pidref_close)))

/* 0 while the reference names a live process (its pid still has its start time; a zombie
 * counts as alive: not reaped yet), -ESRCH when it exited and was reaped or the pid names
 * another process now. */
int tr_pidref_check(const tr_pidref *ref);
/* Whether the referenced process still runs (same start time, not a zombie). */
bool tr_pidref_alive(const tr_pidref *ref);
/* Whether two references name the same process (pid and start time). */
bool tr_pidref_same(const tr_pidref *a, const tr_pidref *b);

/* Send sig (0: probe) to the referenced process: through the pidfd, else kill() after the
 * start time was read again.  -EPERM for pid <= 1, -ESRCH when gone or reused, -errno. */
int tr_pidref_signal(const tr_pidref *ref, int sig);

/* One-shot: open (start_ticks as tr_pidref_open), signal, close.  -EPERM for pid <= 1. */
int tr_safe_kill(pid_t pid, uint64_t start_ticks, int sig);
