/* cgroup-notify.h - which cgroup directories changed, told by inotify, so that a usage
 * call can skip the checks that only prove nothing changed.
 *
 * A GET_USAGE proves on every call that the family's cgroup set is the one it read last
 * time (one fstat per directory: cgroup-subtree.h) and lists the family cgroup's own
 * cgroup.procs, which holds nobody in procd's layout (the root sits in its leaf).  On a
 * hybrid host those three system calls were ~1.6 us of the ~18.8 us a request cost
 * (issue 20).  With a watch on each such directory, one read of the inotify fd (EAGAIN when
 * nothing happened) proves the same for every family at once:
 *
 *   - a subdirectory made, removed or renamed is IN_CREATE / IN_DELETE / IN_MOVED_* on
 *     the directory (the VFS reports mkdir, rmdir and rename of cgroupfs as of any
 *     filesystem: fs/namei.c, fsnotify_mkdir and its kin);
 *   - a process moved in by a write to cgroup.procs (or cgroup.threads) is IN_MODIFY of
 *     that file, told to the directory's watch: write(2) reports every write it made
 *     (vfs_write, fsnotify_modify); IN_MODIFY of the other files (the kernel's own
 *     cgroup.events and memory.events notifications) is not counted;
 *   - the event is queued before the writer's system call returns, so one read after the
 *     request arrived sees every change made before it was sent.
 *
 * What no event tells: a process placed with clone3(CLONE_INTO_CGROUP), and writes made
 * through native AIO (io_submit: aio_complete_rw calls no fsnotify) or, before Linux 6.4,
 * splice(2).  Each needs write access to the cgroup's cgroup.procs, so the skip of the own
 * cgroup.procs is kept to cgroups procd made whose cgroup.procs only root may write
 * (checked with every read that finds it empty: cgroup-stats.c).  A queue overflow
 * (IN_Q_OVERFLOW: 16,384 events unread by default) counts as a change everywhere.  Kernel
 * fact: a cgroup directory removed is no event of its own (kernfs keeps i_nlink at 2 +
 * subdirectories, so dentry_unlink_inode never calls fsnotify_inoderemove: no
 * IN_DELETE_SELF, no IN_IGNORED, even at the last close); its removal is its parent's
 * IN_DELETE.  So a subtree is watched from its top down, and the own-procs skip needs a
 * cached child (whose removal is the directory's event); a removed top is told by its
 * files (ENODEV), as before.  On other filesystems (tmpfs, the tests' trees) a removal is
 * IN_DELETE_SELF and IN_IGNORED once the last reference goes: a watch the kernel dropped
 * counts as a change of its own.
 *
 * A mark is one directory's watch and the count of its changes when it was last proven
 * unchanged.  Single-threaded; no fd beyond the one inotify fd per tr_cg_notify, which is
 * freed after every mark was given up (marks point into it).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct tr_cg_notify tr_cg_notify;
typedef struct tr_cg_watched tr_cg_watched;
typedef struct tr_cg_tick tr_cg_tick;

typedef struct tr_cg_mark {
        tr_cg_watched *w;      /* NULL: no watch (none asked, or the kernel refused one) */
        uint64_t stamp;        /* the watch's change count plus overflows when last proven */
} tr_cg_mark;

#define TR_CG_MARK_INIT ((tr_cg_mark){ .w = NULL, .stamp = 0 })

/* 0, or -errno (inotify_init1 failed: no watches then, every call proves as before). */
int tr_cg_notify_new(tr_cg_notify **out);
void tr_cg_notify_free(tr_cg_notify *n);

/* Watch the directory dirfd (an O_PATH fd will do).  with_writes: a write to any file in
 * it counts too (moving a process in); without, only subdirectories made, removed or
 * renamed.  A directory watched twice shares one watch (its events the union).  The mark
 * starts unproven.  0, or -errno (ENOSPC: a quarter of fs.inotify.max_user_watches held
 * already, the rest left to the node's other root daemons, or the limit itself reached);
 * *m is left without a watch on failure. */
int tr_cg_notify_watch(tr_cg_notify *n, int dirfd, bool with_writes, tr_cg_mark *m);
/* The mark's watch given up (the kernel's dropped when no other mark shares it). */
void tr_cg_notify_unwatch(tr_cg_notify *n, tr_cg_mark *m);

/* A count of cgroup changes (cgroup-tick.h), owned from now on: a sync that finds it where
 * the last read left it reads nothing, while every watch is in cgroupfs (fstatfs at the
 * watch; a test's tmpfs tree is read each time). */
void tr_cg_notify_use_tick(tr_cg_notify *n, tr_cg_tick *t);
/* Read every event queued: once before the marks are asked.  0, or -errno (then every
 * mark counts as changed until a read succeeds). */
int tr_cg_notify_sync(tr_cg_notify *n);
/* Syncs that the tick answered without a read (tests). */
unsigned tr_cg_notify_tick_skips(const tr_cg_notify *n);
/* Whether nothing happened to m's directory since m was last proven (as of the last
 * sync).  False without a watch. */
bool tr_cg_notify_quiet(const tr_cg_notify *n, const tr_cg_mark *m);
/* m proven now: what the caller read after the last sync is the current state. */
void tr_cg_notify_prove(const tr_cg_notify *n, tr_cg_mark *m);
/* m no longer proven (what it stood for was dropped): quiet again only once proven. */
static inline void tr_cg_mark_unprove(tr_cg_mark *m) { m->stamp = UINT64_MAX; }

/* Watches held (tests). */
unsigned tr_cg_notify_watches(const tr_cg_notify *n);
