/* cgroup-subtree.c - a cgroup's descendants kept open between usage calls (see
 * cgroup-subtree.h). */
#include "cgroup-subtree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-walk.h"
#include "util.h"

typedef struct node {
        int dirfd;       /* O_PATH */
        int fd;          /* the file, when kept open; else -1 */
        unsigned nsub;   /* subdirectories cached under it */
        tr_cg_mark mark; /* its watch (cgroup-notify.h), when there is one */
} node;

enum state { ST_EMPTY, ST_CACHED, ST_UNCACHEABLE };

struct tr_cg_subtree {
        enum state state;
        tr_cg_notify *notify; /* the watches' owner, from the first call that gave one */
        tr_cg_mark top_mark;
        unsigned top_nsub;
        unsigned long too_big_nlink; /* ST_UNCACHEABLE: top's nlink then (a change retries) */
        unsigned listings;
        unsigned quiet_calls;
        size_t n;
        node nodes[TR_CG_SUBTREE_MAX]; /* parents before their children */
};

static bool is_gone(int e) { return e == ENOENT || e == ENODEV; }

/* Subdirectories of directory fd from its link count; -EOPNOTSUPP where the filesystem
 * does not count them (nlink < 2, e.g. btrfs). */
static long subdirs(int fd, unsigned long *nlink)
{
        struct stat st;
        int r = tr_fstat(fd, &st);
        if (r < 0)
                return r;
        if (nlink)
                *nlink = (unsigned long) st.st_nlink;
        return st.st_nlink < 2 ? -EOPNOTSUPP : (long) st.st_nlink - 2;
}

static void drop(tr_cg_subtree *st)
{
        for (size_t i = 0; i < st->n; i++) {
                close(st->nodes[i].dirfd);
                if (st->nodes[i].fd >= 0)
                        close(st->nodes[i].fd);
                tr_cg_notify_unwatch(st->notify, &st->nodes[i].mark);
        }
        st->n = 0;
        st->top_nsub = 0;
        st->state = ST_EMPTY;
        /* "no subdirectories" holds only once a call proves it (a listing that failed
         * drops the cache too) */
        tr_cg_mark_unprove(&st->top_mark);
}

void tr_cg_subtree_free(tr_cg_subtree *st)
{
        if (!st)
                return;
        drop(st);
        tr_cg_notify_unwatch(st->notify, &st->top_mark);
        free(st);
}

/* v->read on file of dirfd dfd opened now; a file gone with its cgroup is skipped.  With
 * keep, the fd is handed back in *kept instead of closed.  0, 1 when gone, or -errno. */
static int read_at(int dfd, const tr_cg_subtree_visit *v, int *kept)
{
        int fd = openat(dfd, v->file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return is_gone(errno) ? 1 : -errno;
        int r = v->read(fd, v->ud);
        if (kept && r == 0)
                *kept = fd;
        else
                close(fd);
        return is_gone(-r) ? 1 : r;
}

typedef struct build {
        tr_cg_subtree *st;
        const tr_cg_subtree_visit *v;
        bool record;                        /* false: only read (the cache is not kept) */
        bool too_big;
        int at_depth[TR_CG_SUBTREE_MAX + 1]; /* node index of the last directory per depth */
        long expect[TR_CG_SUBTREE_MAX];      /* each node's subdirectories by its link count,
                                              * taken before it was listed (< 0: unknown) */
} build;

static int visit_new(int dfd, int depth, void *ud)
{
        build *b = ud;
        tr_cg_subtree *st = b->st;
        if (b->record && st->n == TR_CG_SUBTREE_MAX) {
                b->record = false;
                b->too_big = true;
        }
        int kept = -1;
        int r = read_at(dfd, b->v, b->record && b->v->keep_open ? &kept : NULL);
        if (r < 0)
                return r;
        if (r == 1) { /* gone between listing and reading: do not keep a half listing */
                b->record = false;
                return 0;
        }
        if (!b->record)
                return 0;
        int dup_fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0) {
                if (kept >= 0)
                        close(kept);
                b->record = false; /* out of fds: read on without keeping */
                return 0;
        }
        size_t i = st->n++;
        st->nodes[i] = (node){ .dirfd = dup_fd, .fd = kept, .nsub = 0, .mark = TR_CG_MARK_INIT };
        b->expect[i] = subdirs(dup_fd, NULL); /* before the walk lists it (relist) */
        /* watched before the walk lists its subdirectories (this is the pre-order visit):
         * one made after the listing is an event; one made before, in the listing.  No
         * watch (the limit reached): this directory is proven by its fstat each time. */
        if (st->notify)
                (void) tr_cg_notify_watch(st->notify, dup_fd, false, &st->nodes[i].mark);
        if (depth == 1)
                st->top_nsub++;
        else
                st->nodes[b->at_depth[depth - 1]].nsub++;
        b->at_depth[depth] = (int) i;
        return 0;
}

/* Whether every directory of a listing just kept holds as many subdirectories as its link
 * count said before it was listed.  Kernel fact: a new cgroup counts in its parent's
 * st_nlink (kernfs_add_one) before it can be listed (kernfs_activate, after the
 * cgroup_mkdir tracepoint): a listing made in between misses it, and must not be proven
 * (cgroup-tick.h: the tick has moved already, and nothing else will tell). */
static bool listing_complete(const tr_cg_subtree *st, const build *b, long top_expect)
{
        if (top_expect >= 0 && (unsigned long) top_expect != st->top_nsub)
                return false;
        for (size_t i = 0; i < st->n; i++)
                if (b->expect[i] >= 0 && (unsigned long) b->expect[i] != st->nodes[i].nsub)
                        return false;
        return true;
}

/* List the subtree again, reading every file; with record, keep it when that is possible
 * (without, the state stays as it is).  *complete (record): the listing matched the link
 * counts (listing_complete). */
static int relist(tr_cg_subtree *st, int top, const tr_cg_subtree_visit *v, bool record, bool *complete)
{
        if (record)
                drop(st);
        st->listings++;
        build b = { .st = st, .v = v, .record = record };
        long top_expect = record ? subdirs(top, NULL) : -1;
        int r = tr_cg_walk_children(top, &(tr_cg_walk){ .pre_depth = visit_new, .ud = &b });
        if (!record)
                return r;
        if (r < 0 || !b.record) {
                drop(st);
                if (b.too_big) {
                        unsigned long nlink = 0;
                        (void) subdirs(top, &nlink);
                        st->state = ST_UNCACHEABLE;
                        st->too_big_nlink = nlink;
                }
                return r;
        }
        st->state = ST_CACHED;
        if (complete)
                *complete = listing_complete(st, &b, top_expect);
        return 0;
}

/* One pass over the cache: 0, 1 when it no longer matches the directories, or -errno.
 * by_watches: the set is proven by the watches (no fstat); else top has top_subdirs
 * subdirectories now, and each cached directory's count is checked. */
static int cached_pass(tr_cg_subtree *st, long top_subdirs, bool by_watches, const tr_cg_subtree_visit *v)
{
        if (!by_watches && (top_subdirs < 0 || (unsigned long) top_subdirs != st->top_nsub))
                return 1;
        for (size_t i = 0; i < st->n; i++) {
                const node *x = &st->nodes[i];
                if (!by_watches) {
                        long k = subdirs(x->dirfd, NULL);
                        if (k < 0 || (unsigned long) k != x->nsub)
                                return 1;
                }
                int r = x->fd >= 0 ? v->read(x->fd, v->ud) : read_at(x->dirfd, v, NULL);
                if (r == 1 || is_gone(-r))
                        return 1;
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Every cached directory (top's mark apart) without an event since it was proven. */
static bool nodes_quiet(const tr_cg_subtree *st)
{
        for (size_t i = 0; i < st->n; i++)
                if (!tr_cg_notify_quiet(st->notify, &st->nodes[i].mark))
                        return false;
        return true;
}

/* What this call found is the current state as of the caller's sync. */
static void prove_all(tr_cg_subtree *st)
{
        if (!st->notify)
                return;
        tr_cg_notify_prove(st->notify, &st->top_mark);
        for (size_t i = 0; i < st->n; i++)
                tr_cg_notify_prove(st->notify, &st->nodes[i].mark);
}

/* relist with record, and what it kept proven when its listing was complete (else the
 * next call checks the link counts again) */
static int relist_proven(tr_cg_subtree *st, int top, const tr_cg_subtree_visit *v)
{
        bool complete = false;
        int r = relist(st, top, v, true, &complete);
        if (r == 0 && st->state == ST_CACHED && complete)
                prove_all(st);
        return r;
}

unsigned tr_cg_subtree_listings(const tr_cg_subtree *st) { return st ? st->listings : 0; }

unsigned tr_cg_subtree_cached(const tr_cg_subtree *st)
{
        return st && st->state == ST_CACHED ? (unsigned) st->n : 0;
}

unsigned tr_cg_subtree_quiet_calls(const tr_cg_subtree *st) { return st ? st->quiet_calls : 0; }

int tr_cg_subtree_each(tr_cg_subtree **stp, int top, const tr_cg_subtree_visit *v)
{
        if (!*stp) {
                *stp = calloc(1, sizeof **stp);
                if (!*stp)
                        return -ENOMEM;
        }
        tr_cg_subtree *st = *stp;
        if (v->notify && !st->notify) {
                st->notify = v->notify;
                (void) tr_cg_notify_watch(st->notify, top, false, &st->top_mark);
        }
        bool quiet = st->notify && st->state != ST_UNCACHEABLE && tr_cg_notify_quiet(st->notify, &st->top_mark) &&
                     nodes_quiet(st);
        if (quiet)
                st->quiet_calls++;
        if (quiet && st->state == ST_EMPTY)
                return 0; /* proven without subdirectories, and none made since */
        long k = 0;
        if (!quiet) {
                unsigned long nlink = 0;
                k = subdirs(top, &nlink);
                if (k == 0) { /* the common leaf: nothing below */
                        drop(st);
                        prove_all(st);
                        return 0;
                }
                if (k == -EOPNOTSUPP || (st->state == ST_UNCACHEABLE && nlink == st->too_big_nlink))
                        return relist(st, top, v, false, NULL);
        }
        /* quiet: the cache (state ST_CACHED), proven by the watches */
        if (st->state == ST_CACHED) {
                int r = cached_pass(st, k, quiet, v);
                if (r == 0)
                        prove_all(st);
                if (r <= 0)
                        return r;
                if (v->restart)
                        v->restart(v->ud);
        }
        return relist_proven(st, top, v);
}
