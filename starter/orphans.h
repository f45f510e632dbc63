/* orphans.h - job cgroups whose starter is gone (SIGKILLed, crashed) are found and cleaned
 * by the next starter that uses the same --cgroup-base.
 *
 * A starter holds, while alive, an exclusive flock on its <top> cgroup directory (in the
 * v2 tree, else the first hierarchy that has it): the kernel drops the lock when the
 * starter dies however it dies.  Creating <top> and taking that lock happen under a shared
 * flock on the base directory; a sweep holds the base exclusively, so it never sees a
 * <top> between its mkdir and its lock.  A directory of the base whose lock can be taken
 * is an orphan: with a "job" child, the job is killed and the cgroups removed; without one
 * (procd already killed the job and removed <top>/job) it is removed only when no process
 * is in it.  What the starter made outside its cgroups (the --private-tmp=DIR directory) is
 * recorded on <top> as an extended attribute before it is made, and the sweep removes it
 * before <top>.
 */
#pragma once

#include <stdbool.h>

#include "trackers/error.h"
#include "trackers/hierarchy.h"

/* The base directory locked (LOCK_SH for a creator, LOCK_EX for a sweep), waiting up to
 * about a second; an fd to close, or -errno. */
int st_base_lock(const tr_hierarchies *hs, const char *base, bool exclusive, tr_error *err);
/* The hierarchy a new <top> is made in first (and removed from last), where its lock is:
 * v2 when mounted, else the first. */
int st_lock_hierarchy(const tr_hierarchies *hs);
/* Lock <top> exclusively for the starter's life (the fd must stay open); fd or -errno. */
int st_top_lock(const tr_hierarchies *hs, const char *top, tr_error *err);
/* Record on <top> the private /tmp directory path (made right after); 0 or -errno (needs
 * CAP_SYS_ADMIN: a trusted.* attribute). */
int st_orphans_record_tmp(const tr_hierarchies *hs, const char *top, const char *path, tr_error *err);
/* Kill and remove every orphaned job cgroup under base; returns how many were cleaned
 * (each one reported on stderr), or -errno when the base cannot be locked or read. */
int st_orphans_sweep(const tr_hierarchies *hs, const char *base, tr_error *err);
