/* cgroup-walk.h - the one walk over a cgroup directory's descendants.
 *
 * Membership, the v1 oom_kill sum and destroy all visit the child cgroups of a cgroup the
 * same way: O_PATH|O_NOFOLLOW dirfds reached with openat(), children that vanish during the
 * walk skipped, depth bounded.  Callbacks say what is done at each directory.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TR_CG_WALK_MAX_DEPTH 256 /* levels below the start (bounded recursion and fds) */

typedef struct tr_cg_walk {
        /* On each descendant before its own children (parents first), with its O_PATH dirfd.
         * May be NULL. */
        int (*pre)(int dfd, void *ud);
        /* Instead of pre when set: also told the depth (1 = a child of the start). */
        int (*pre_depth)(int dfd, int depth, void *ud);
        /* On each descendant after its children (deepest first), with its parent's dirfd
         * and its name: what rmdir needs.  May be NULL. */
        int (*post)(int parent_dfd, const char *name, void *ud);
        void *ud;
        /* false: the first negative callback value stops the walk.  true: the walk goes on
         * through the siblings (not into the failed directory's parent's post) and returns
         * the first error. */
        bool keep_going;
        /* Deeper than TR_CG_WALK_MAX_DEPTH: true: -ELOOP; false: not visited, no error. */
        bool deep_is_error;
        /* Optional: the name of the directory where the first error happened. */
        char *failed;
        size_t failed_size;
} tr_cg_walk;

/* Walk the descendants of the cgroup directory dfd (not dfd itself).  A child that
 * vanishes during the walk (ENOENT, or ENODEV from a removed kernfs node) is skipped.
 * Returns 0 or the first negative value (a callback's, or -errno of the walk). */
int tr_cg_walk_children(int dfd, const tr_cg_walk *w);
