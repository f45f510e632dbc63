/* cgroup-subtree.h - a cgroup's descendants kept open between usage calls.
 *
 * Counting a family's processes (cgroup.procs of every descendant) and the v1 oom_kill sum
 * visit every descendant cgroup.  Walking them each time costs an open, two getdents and a
 * close per directory (about 25 us for a family cgroup with its one `self` leaf here); this
 * cache keeps each descendant's O_PATH dirfd (and the counter file's fd) and proves on
 * every pass that the set has not changed, for one fstat per directory:
 *
 *   - kernfs (and tmpfs, ext4) give a directory st_nlink = 2 + its subdirectories;
 *   - a descendant cached at the last listing is still there when its kept file reads
 *     (a removed cgroup's files answer ENODEV; a removed directory elsewhere has nlink 0).
 *
 * When every cached directory still has exactly the subdirectories cached under it and
 * each of them is still there, the cached set is the current set: none can have been added
 * (the counts would differ) and none replaced (its fd would be gone).  Anything else lists
 * the subtree again.  A filesystem that does not keep nlink this way, or a subtree larger
 * than TR_CG_SUBTREE_MAX, is walked every time.
 *
 * With a tr_cg_notify (v->notify, synced by the caller before the call), each directory
 * is watched from before its subdirectories were first listed, and a pass whose
 * directories had no event since they were last proven skips the fstats: the cached set
 * is proven by the watches (cgroup-notify.h).  A directory with no subdirectory is
 * proven the same way, so a cgroup without descendants costs no system call at all.
 */
#pragma once

#include <stdbool.h>

#include "cgroup-notify.h"

#define TR_CG_SUBTREE_MAX 64 /* descendants kept open per cache */

typedef struct tr_cg_subtree tr_cg_subtree;

typedef struct tr_cg_subtree_visit {
        const char *file;   /* read in every descendant, e.g. "cgroup.procs" */
        bool keep_open;     /* false: opened afresh on every pass (v1 cgroup.procs) */
        /* One descendant's file: 0, or -errno (-ENODEV/-ENOENT: that cgroup is gone). */
        int (*read)(int fd, void *ud);
        /* Forget what read() gave during this call: the pass starts again. */
        void (*restart)(void *ud);
        void *ud;
        /* NULL, or the watches that may stand in for the fstats (the same one on every
         * call with this cache; synced by the caller) */
        tr_cg_notify *notify;
} tr_cg_subtree_visit;

/* Run v->read on `file` of every descendant of the cgroup directory top (not top itself),
 * through the cache *st (made on first use; top must stay the same directory).  A
 * descendant that vanishes meanwhile is left out.  0 or -errno. */
int tr_cg_subtree_each(tr_cg_subtree **st, int top, const tr_cg_subtree_visit *v);
void tr_cg_subtree_free(tr_cg_subtree *st);
/* How many times the subtree was listed (the cache made) since *st was made; for tests. */
unsigned tr_cg_subtree_listings(const tr_cg_subtree *st);
/* Descendants cached at the last call (0: none, or not cached). */
unsigned tr_cg_subtree_cached(const tr_cg_subtree *st);
/* How many calls the watches proved without an fstat (v->notify); for tests. */
unsigned tr_cg_subtree_quiet_calls(const tr_cg_subtree *st);
