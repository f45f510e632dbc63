/* ancestry.c - the caller's ancestors held by /proc/PID fds (see ancestry.h). */
#include "ancestry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "proc-read.h"

/* walks of the chain per call before giving up: each retry follows an ancestor's exit */
#define WALK_TRIES 4

struct tr_ancestry {
        pid_t owner;   /* getpid() of the walk's process; 0: to walk */
        int n;
        unsigned walks;
        pid_t pid[TR_ANCESTRY_MAX];
        int fd[TR_ANCESTRY_MAX]; /* O_PATH /proc/PID directories */
};

int tr_ancestry_new(tr_ancestry **out)
{
        *out = calloc(1, sizeof **out);
        return *out ? 0 : -ENOMEM;
}

static void drop(tr_ancestry *a)
{
        for (int k = 0; k < a->n; k++)
                close(a->fd[k]);
        a->n = 0;
        a->owner = 0;
}

void tr_ancestry_free(tr_ancestry *a)
{
        if (!a)
                return;
        drop(a);
        free(a);
}

/* The parent of link k's child (k == 0: of the caller), read through the child's fd. */
static int parent_of_link(const tr_ancestry *a, int k, pid_t *ppid)
{
        if (k == 0) {
                *ppid = getppid();
                return 0;
        }
        tr_proc p;
        int r = tr_proc_stat_read_at(a->fd[k - 1], &p);
        if (r < 0)
                return r;
        *ppid = p.ppid;
        return 0;
}

/* One walk from the caller's parent up: 0, -ESRCH when a process of the chain exited
 * under it (walk again), or -errno. */
static int walk_once(tr_ancestry *a)
{
        drop(a);
        a->walks++;
        pid_t p = 0;
        int r = parent_of_link(a, 0, &p);
        /* ppid 0: the parent lies outside our PID namespace; the chain ends at PID 1 */
        while (r == 0 && p >= 1 && a->n < TR_ANCESTRY_MAX) {
                char path[32];
                snprintf(path, sizeof path, "/proc/%d", (int) p);
                int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return errno == ENOENT ? -ESRCH : -errno;
                /* the child's parent is still p after the open: the fd names that parent */
                pid_t again = 0;
                r = parent_of_link(a, a->n, &again);
                if (r < 0 || again != p) {
                        close(fd);
                        return r < 0 ? r : -ESRCH;
                }
                a->pid[a->n] = p;
                a->fd[a->n++] = fd;
                if (p == 1)
                        break;
                r = parent_of_link(a, a->n, &p);
        }
        if (r < 0)
                return r;
        a->owner = getpid();
        return 0;
}

static int ensure_walked(tr_ancestry *a)
{
        if (a->owner == getpid())
                return 0;
        int r = -ESRCH;
        for (int t = 0; t < WALK_TRIES && r == -ESRCH; t++)
                r = walk_once(a);
        if (r < 0)
                drop(a);
        return r;
}

pid_t tr_ancestry_find(tr_ancestry *a, tr_ancestor_fn fn, void *arg)
{
        for (int t = 0; t < WALK_TRIES; t++) {
                int r = ensure_walked(a);
                if (r < 0)
                        return r;
                bool stale = false;
                for (int k = 0; k < a->n && !stale; k++) {
                        int f = fn(a->fd[k], a->pid[k], arg);
                        if (f > 0)
                                return a->pid[k];
                        stale = f < 0;
                }
                if (!stale)
                        return 0;
                a->owner = 0; /* an ancestor is gone: walk again, then look again */
        }
        drop(a);
        return -ESRCH;
}

int tr_ancestry_pids(tr_ancestry *a, pid_t *pids, int max)
{
        int r = ensure_walked(a);
        if (r < 0)
                return r;
        int n = a->n < max ? a->n : max;
        for (int k = 0; k < n; k++)
                pids[k] = a->pid[k];
        return n;
}

unsigned tr_ancestry_walks(const tr_ancestry *a) { return a->walks; }
