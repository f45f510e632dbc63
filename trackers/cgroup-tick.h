/* cgroup-tick.h - a host-wide count of cgroup changes, kept by the kernel and read from
 * memory: no system call to learn that nothing changed.
 *
 * A usage call proves with one read of the inotify fd that the family's cgroups did not
 * change (cgroup-notify.h): ~0.4 us of a ~17 us GET_USAGE on the hybrid host, and a system
 * call emulated in a TCG guest (issue 20).  Here one BPF program, attached to the cgroup
 * core's raw tracepoints, adds one to a counter in a BPF array mapped into procd's memory:
 *
 *   cgroup_attach_task     a process or thread moved by a write to cgroup.procs,
 *                          cgroup.threads or v1's tasks (after the move: the kernel's
 *                          cgroup_attach_task traces only a move that succeeded);
 *   cgroup_transfer_tasks  v1 cpuset moving the tasks of a cgroup left without CPUs;
 *   cgroup_mkdir, cgroup_rmdir, cgroup_rename   a cgroup made, removed, renamed (v1).
 *
 * Each fires inside the system call that made the change, before it returns, so a count
 * read after a request arrived is past every change made before the request was sent.
 * The count where the last sync left it: nothing a watch counts was done since, but for
 * what root alone can do (a chmod or chown in cgroupfs has no tracepoint; the own-procs
 * skip already trusts root, who may clone3(CLONE_INTO_CGROUP) or write through AIO unseen:
 * cgroup-notify.h).  The count moved: every watch counts as changed, not only those the
 * queue names (cgroup-notify.c), since a tracepoint fires before its change's inotify
 * event is queued; and cgroup_mkdir's fires before the new cgroup can be listed, so a
 * listing is proven only when it holds as many subdirectories as the link counts said
 * (cgroup-subtree.c).  On a node where cgroups change between most queries, a query after
 * a change proves its family's cgroups by link counts and its own cgroup.procs, as before
 * the watches (14.23's three system calls on a hybrid host).
 *
 * Needs root (CAP_BPF and CAP_PERFMON) and Linux 5.5 (BPF_F_MMAPABLE); costs procd 5 fds
 * (the tracepoint links) and, on the host, a path formatted per traced cgroup change (the
 * cgroup tracepoints' own cost once enabled: TRACE_CGROUP_PATH).  Without it every call
 * reads the inotify fd, as before. */
#pragma once

#include <stdint.h>

typedef struct tr_cg_tick tr_cg_tick;

/* 0, or -errno (no bpf(2), no permission, a kernel without raw tracepoints or mmapable
 * arrays): then *out is NULL.  Attached to every tracepoint or to none. */
int tr_cg_tick_new(tr_cg_tick **out);
void tr_cg_tick_free(tr_cg_tick *t);

/* The count now (a load with acquire order, no system call). */
uint64_t tr_cg_tick_now(const tr_cg_tick *t);
