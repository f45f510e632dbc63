/* pidset.h - a growable set of pids (members of a family). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct tr_pidset {
        pid_t *pids;
        size_t n, cap;
        bool borrowed; /* pids is the caller's storage (TR_PIDSET_ON): never freed here */
} tr_pidset;

#define TR_PIDSET_INIT { NULL, 0, 0, false }
/* A set that starts in the caller's array (e.g. on the stack) and moves to the heap only
 * when it outgrows it: a count of members then costs no malloc (issue 20).  Its pids must
 * not be kept past the array's life. */
#define TR_PIDSET_ON(array) { (array), 0, sizeof(array) / sizeof((array)[0]), true }

/* Append (duplicates allowed until tr_pidset_normalize).  0 or -ENOMEM. */
int tr_pidset_add(tr_pidset *s, pid_t pid);
/* Append every pid of src.  0 or -ENOMEM. */
int tr_pidset_add_all(tr_pidset *dst, const tr_pidset *src);
/* Sort and drop duplicates; afterwards tr_pidset_contains is a binary search. */
void tr_pidset_normalize(tr_pidset *s);
bool tr_pidset_contains(const tr_pidset *s, pid_t pid); /* s must be normalized */
void tr_pidset_clear(tr_pidset *s);                       /* n = 0, keeps memory */
void tr_pidset_free(tr_pidset *s);                        /* releases memory */

static inline void tr_pidset_freep(tr_pidset *s) { tr_pidset_free(s); }
#define _cleanup_pidset_ __attribute__((cleanup(tr_pidset_freep)))
