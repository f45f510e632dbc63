/* cgroup-notify.c - which cgroup directories changed, told by inotify (see cgroup-notify.h). */
#include "cgroup-notify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/inotify.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup-tick.h"
#include "util.h"

/* One watched directory: shared by every mark on it. */
typedef struct tr_cg_watched watch;
struct tr_cg_watched {
        int wd;
        unsigned refs;
        uint64_t changes; /* events seen for it (IN_IGNORED: one more, and gone) */
        bool gone;        /* the kernel dropped the watch: never quiet again */
        bool foreign;     /* not in cgroupfs (a test's tree): the tick does not see it */
};

struct tr_cg_notify {
        int fd;
        size_t max; /* watches at most: a share of the user's limit (tr_cg_notify_new) */
        bool unsynced; /* the last read failed: nothing is proven until one succeeds */
        uint64_t overflows;
        watch **by_wd; /* sorted by wd: the kernel hands wds out in increasing order */
        size_t n, cap;
        tr_cg_tick *tick;    /* owned; NULL: every sync reads (tr_cg_notify_use_tick) */
        uint64_t tick_seen;  /* its count before the last read that drained the queue */
        bool tick_valid;     /* tick_seen is one */
        size_t foreign;      /* watches outside cgroupfs: every sync reads while any */
        unsigned tick_skips; /* syncs the tick answered (tests) */
};

#define SUBDIR_EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)
/* a write to cgroup.procs or cgroup.threads moves a process in; IN_ATTRIB: a chown or
 * chmod there (a delegation) */
#define WRITE_EVENTS (IN_MODIFY | IN_ATTRIB)

int tr_cg_notify_new(tr_cg_notify **out)
{
        *out = NULL;
        int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd < 0)
                return -errno;
        tr_cg_notify *n = calloc(1, sizeof *n);
        if (!n) {
                close(fd);
                return -ENOMEM;
        }
        n->fd = fd;
        /* The watch limit is per user (root's is shared with systemd, udev and every
         * other root daemon on the node): procd takes a quarter of it at most, and proves
         * the cgroups beyond that by fstat as before.  Unreadable: the kernel's floor. */
        char text[32];
        uint64_t limit = 8192;
        if (tr_read_file_at(AT_FDCWD, "/proc/sys/fs/inotify/max_user_watches", text, sizeof text, NULL) >= 0)
                (void) tr_parse_u64(text, &limit);
        n->max = (size_t) (limit / 4);
        *out = n;
        return 0;
}

void tr_cg_notify_free(tr_cg_notify *n)
{
        if (!n)
                return;
        for (size_t i = 0; i < n->n; i++)
                free(n->by_wd[i]);
        free(n->by_wd);
        close(n->fd);
        tr_cg_tick_free(n->tick);
        free(n);
}

void tr_cg_notify_use_tick(tr_cg_notify *n, tr_cg_tick *t)
{
        tr_cg_tick_free(n->tick);
        n->tick = t;
        n->tick_valid = false;
}

unsigned tr_cg_notify_tick_skips(const tr_cg_notify *n) { return n ? n->tick_skips : 0; }

/* Index of wd in by_wd, or where it would go (*found false). */
static size_t find(const tr_cg_notify *n, int wd, bool *found)
{
        size_t lo = 0, hi = n->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (n->by_wd[mid]->wd < wd)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < n->n && n->by_wd[lo]->wd == wd;
        return lo;
}

static void forget(tr_cg_notify *n, const watch *w)
{
        bool found;
        size_t i = find(n, w->wd, &found);
        if (!found || n->by_wd[i] != w)
                return;
        memmove(&n->by_wd[i], &n->by_wd[i + 1], (n->n - i - 1) * sizeof *n->by_wd);
        n->n--;
}

int tr_cg_notify_watch(tr_cg_notify *n, int dirfd, bool with_writes, tr_cg_mark *m)
{
        *m = TR_CG_MARK_INIT;
        if (!n)
                return -EINVAL;
        /* full: refused before the kernel is asked (a directory watched already would
         * have shared its watch, but asking costs a path lookup and a removal each time) */
        if (n->n >= n->max)
                return -ENOSPC;
        /* the directory itself, whatever its path is now: an O_PATH fd through /proc */
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", dirfd);
        uint32_t mask = SUBDIR_EVENTS | (with_writes ? WRITE_EVENTS : 0) | IN_ONLYDIR | IN_MASK_ADD;
        int wd = inotify_add_watch(n->fd, self, mask);
        if (wd < 0)
                return -errno;
        bool found;
        size_t i = find(n, wd, &found);
        if (!found) {
                if (n->n == n->cap) {
                        size_t cap = n->cap ? n->cap * 2 : 64;
                        watch **nb = realloc(n->by_wd, cap * sizeof *nb);
                        if (!nb)
                                goto nomem;
                        n->by_wd = nb;
                        n->cap = cap;
                }
                watch *w = calloc(1, sizeof *w);
                if (!w)
                        goto nomem;
                w->wd = wd;
                struct statfs sf;
                w->foreign = fstatfs(dirfd, &sf) < 0 ||
                             (sf.f_type != CGROUP2_SUPER_MAGIC && sf.f_type != CGROUP_SUPER_MAGIC);
                n->foreign += w->foreign;
                memmove(&n->by_wd[i + 1], &n->by_wd[i], (n->n - i) * sizeof *n->by_wd);
                n->by_wd[i] = w;
                n->n++;
        }
        n->by_wd[i]->refs++;
        m->w = n->by_wd[i];
        tr_cg_mark_unprove(m);
        return 0;
nomem:
        inotify_rm_watch(n->fd, wd);
        return -ENOMEM;
}

void tr_cg_notify_unwatch(tr_cg_notify *n, tr_cg_mark *m)
{
        watch *w = m->w;
        *m = TR_CG_MARK_INIT;
        if (!n || !w || --w->refs > 0)
                return;
        if (!w->gone) {
                forget(n, w);
                (void) inotify_rm_watch(n->fd, w->wd);
        }
        n->foreign -= w->foreign;
        free(w);
}

/* A write that can move a process in: to cgroup.procs or cgroup.threads (IN_MODIFY), or
 * a change of who may write them (IN_ATTRIB).  The kernel's own notifications of
 * cgroup.events, memory.events and pids.events (kernfs_notify, up to one per 10 ms per
 * file under memory pressure) are IN_MODIFY of this directory too: they change nothing a
 * proof stands for. */
static bool counts(const struct inotify_event *ev)
{
        if (!(ev->mask & (IN_MODIFY | IN_ATTRIB)))
                return true; /* made, removed, renamed, the directory's own events */
        if (ev->len == 0)
                return (ev->mask & IN_ATTRIB) != 0; /* the directory's own mode or owner */
        return strcmp(ev->name, "cgroup.procs") == 0 || strcmp(ev->name, "cgroup.threads") == 0;
}

static void take(tr_cg_notify *n, const struct inotify_event *ev)
{
        if (ev->mask & IN_Q_OVERFLOW) {
                n->overflows++;
                return;
        }
        if (!counts(ev))
                return;
        bool found;
        size_t i = find(n, ev->wd, &found);
        if (!found)
                return; /* a watch given up since */
        watch *w = n->by_wd[i];
        w->changes++;
        if (ev->mask & IN_IGNORED) {
                /* the kernel dropped it (the directory was removed): its wd may be handed
                 * out again, so it is no longer looked up; its marks stay unquiet */
                w->gone = true;
                forget(n, w);
        }
}

int tr_cg_notify_sync(tr_cg_notify *n)
{
        if (!n)
                return -EINVAL;
        /* The tick first.  It stood still: no cgroup changed anywhere since it was last
         * read.  It moved: every mark counts as changed (as after a queue overflow), not
         * only those the queue names, because a change's tracepoint fires before its event
         * is queued (fsnotify runs once the write or mkdir returns to the VFS): a sync
         * between the two would take the tick in and leave the event for a sync that the
         * tick would answer without a read.  The queue is drained all the same. */
        uint64_t tick = n->tick ? tr_cg_tick_now(n->tick) : 0;
        bool moved = n->tick && (!n->tick_valid || tick != n->tick_seen);
        if (n->tick && !moved && !n->foreign && !n->unsynced) {
                n->tick_skips++;
                return 0;
        }
        if (moved)
                n->overflows++;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        for (;;) {
                ssize_t k = read(n->fd, buf, sizeof buf);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        break;
                if (k <= 0) {
                        n->unsynced = true;
                        n->tick_valid = false;
                        return k < 0 ? -errno : -EIO;
                }
                for (char *p = buf; p < buf + k;) {
                        const struct inotify_event *ev = (const struct inotify_event *) p;
                        take(n, ev);
                        p += sizeof *ev + ev->len;
                }
        }
        n->unsynced = false;
        n->tick_seen = tick;
        n->tick_valid = n->tick != NULL;
        return 0;
}

static uint64_t stamp_of(const tr_cg_notify *n, const watch *w) { return w->changes + n->overflows; }

bool tr_cg_notify_quiet(const tr_cg_notify *n, const tr_cg_mark *m)
{
        const watch *w = m->w;
        return n && w && !w->gone && !n->unsynced && m->stamp == stamp_of(n, w);
}

void tr_cg_notify_prove(const tr_cg_notify *n, tr_cg_mark *m)
{
        if (n && m->w)
                m->stamp = stamp_of(n, m->w);
}

unsigned tr_cg_notify_watches(const tr_cg_notify *n) { return n ? (unsigned) n->n : 0; }
