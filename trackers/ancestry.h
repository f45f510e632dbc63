/* ancestry.h - the caller's ancestors (its parent, the parent's parent, ... up to PID 1, at
 * most TR_ANCESTRY_MAX), each held by an fd of its /proc/PID directory.
 *
 * Why: the cgroup gate (cgroup-gate.c) refuses a cgroup holding the caller or any of its
 * ancestors before every kill, freeze and signal.  Walking the chain by pid reads each
 * ancestor's /proc/PID/stat and /proc/PID/cgroup by absolute path every time (procd under
 * a shell: 7 ancestors, 14 reads per kill).  Held, a check reads each ancestor's cgroup file
 * through its fd: no stat, no path walk from /.
 *
 * Why the held chain stays right: a process's parent changes only when that parent exits;
 * the orphan then goes to a subreaper among the dead parent's ancestors or to its PID
 * namespace's init - never to a process outside the chain.  So the chain only shrinks.
 * While every process held is alive the chain held is the chain (with an ancestor that
 * exited but was not reaped yet: a superset of it, which refuses more, never less).  A read
 * through a /proc/PID fd fails once that process is gone, even when its pid was reused:
 * then the chain is walked again.  Built by one process, for it alone: after a fork
 * (getpid() differs) the chain is walked again.
 *
 * Each link is checked when walked: the fd of pid P is opened, then the child's parent is
 * read again and must still be P (P alive at the open, so the fd names it and not a later
 * process given its pid).  One thread uses a chain (procd: its main loop). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#define TR_ANCESTRY_MAX 64

typedef struct tr_ancestry tr_ancestry;

/* An empty chain (walked on first use): 0 or -ENOMEM. */
int tr_ancestry_new(tr_ancestry **out);
/* Close every fd held and free (NULL: nothing). */
void tr_ancestry_free(tr_ancestry *a);

/* Called for each ancestor, the parent first, with its /proc/PID directory fd: 1 to stop
 * there (found), 0 to go on, < 0 when a read through the fd failed (the process is gone:
 * the chain is walked again and fn called again from the parent). */
typedef int (*tr_ancestor_fn)(int proc_dirfd, pid_t pid, void *arg);

/* The pid at which fn returned 1, 0 when it returned 0 for every ancestor, or -errno when
 * the chain could not be walked (an fd could not be opened; an ancestor kept exiting under
 * the walk): the caller then falls back to its own walk by pid. */
pid_t tr_ancestry_find(tr_ancestry *a, tr_ancestor_fn fn, void *arg);

/* The chain as held now (walked first when stale or never walked): up to max pids, parent
 * first; how many, or -errno.  For tests and diagnostics. */
int tr_ancestry_pids(tr_ancestry *a, pid_t *pids, int max);
/* How many times the chain was walked since tr_ancestry_new (tests: a dead ancestor makes
 * one more walk, a live chain none). */
unsigned tr_ancestry_walks(const tr_ancestry *a);
