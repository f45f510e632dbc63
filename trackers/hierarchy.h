/* hierarchy.h - cgroup mounts and mode (pure v2 / hybrid / pure v1), and pid -> cgroup.
 *
 * All knowledge of "which hierarchy holds what" lives here (hybrid handled in one place,
 * as in systemd's cgroup-util).  Discovery reads /proc/self/mountinfo; the parsers take
 * text so that unit tests run on fixture files captured from real hosts.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

typedef enum tr_controller {
        TR_CTRL_CPU,
        TR_CTRL_CPUACCT,
        TR_CTRL_CPUSET,
        TR_CTRL_MEMORY,
        TR_CTRL_DEVICES,
        TR_CTRL_FREEZER,
        TR_CTRL_BLKIO, /* v1 */
        TR_CTRL_IO,    /* v2 */
        TR_CTRL_PIDS,
        TR_CTRL_HUGETLB,
        TR_CTRL_NET_CLS,
        TR_CTRL_NET_PRIO,
        TR_CTRL_PERF_EVENT,
        TR_CTRL_RDMA,
        TR_CTRL_MISC,
        TR_CTRL_COUNT
} tr_controller;

const char *tr_controller_name(tr_controller c);  /* "cpu", "memory", ... */
int tr_controller_from_name(const char *name);     /* tr_controller or -1 */

typedef enum tr_cgroup_mode {
        TR_MODE_NONE = 0, /* no cgroup filesystem mounted */
        TR_MODE_V1,       /* only v1 hierarchies */
        TR_MODE_HYBRID,   /* v1 controller hierarchies plus a cgroup2 mount (often .../unified) */
        TR_MODE_V2,       /* only cgroup2 (v1 named hierarchies without controllers allowed) */
} tr_cgroup_mode;

const char *tr_cgroup_mode_name(tr_cgroup_mode m); /* "v2", "hybrid", "v1", "none" */

#define TR_MAX_HIER 16

/* The longest mount point or mount root a hierarchy may have, with its NUL: far above any
 * real cgroup mount (/sys/fs/cgroup/..., a container's /kubepods/.../<64 hex digits> root),
 * and a quarter of PATH_MAX, so tr_hierarchies is ~37 KB, not ~135 KB.  A longer one fails
 * discovery (ENAMETOOLONG). */
#define TR_MOUNT_PATH_MAX 1024

/* The short fields first, and discovery writes each string only as long as it is and no
 * slot past n: a fresh process (procd-starter) faults in few of tr_hierarchies' pages
 * (procd-starter on a 13-hierarchy host: 111 -> 94 page faults per job with
 * TR_MOUNT_PATH_MAX, 237 -> 231 for the order). */
typedef struct tr_hierarchy {
        bool is_v2;
        bool favordynmods;    /* v2 mounted with favordynmods (kernel 6.0+): a migration
                                 does not wait for an RCU grace period */
        uint32_t controllers; /* bit (1u << tr_controller); v2: from the mount root's
                                 cgroup.controllers when discovered live, else 0 */
        char key[256];      /* how /proc/PID/cgroup names it: "" (v2), "cpu,cpuacct", "name=systemd" */
        char mount_point[TR_MOUNT_PATH_MAX]; /* e.g. /sys/fs/cgroup/memory */
        char mount_root[TR_MOUNT_PATH_MAX];  /* mountinfo field 4, "/" unless a namespace/bind mount */
} tr_hierarchy;

typedef struct tr_ancestry tr_ancestry; /* ancestry.h */

typedef struct tr_hierarchies {
        tr_cgroup_mode mode;
        int n;
        tr_hierarchy h[TR_MAX_HIER];
        int v2;                    /* index of the cgroup2 mount, or -1 */
        int v1_of[TR_CTRL_COUNT];  /* index of the v1 hierarchy holding each controller, or -1 */
        /* the caller's ancestors, held for the gate (cgroup-gate.c) by a long-lived user
         * (procd), which attaches it after discovery and frees it; NULL: walked by pid */
        tr_ancestry *ancestry;
        /* watches on family cgroups' directories that stand in for the usage call's checks
         * (cgroup-notify.h), attached and freed the same way; NULL: every call checks */
        struct tr_cg_notify *notify;
} tr_hierarchies;

/* Parse mountinfo text.  Duplicate mounts of one hierarchy keep the first.  Fails only on
 * unparsable text; a host without cgroups yields TR_MODE_NONE.  Only h[0..n-1] are written
 * (each string up to its NUL); ancestry is set to NULL. */
int tr_hierarchies_parse(tr_hierarchies *out, const char *mountinfo, tr_error *err);

/* Set controllers of the v2 hierarchy from the text of its root cgroup.controllers. */
void tr_hierarchies_set_v2_controllers(tr_hierarchies *hs, const char *controllers_text);

/* Read /proc/self/mountinfo and the v2 root's cgroup.controllers. */
int tr_hierarchies_discover(tr_hierarchies *out, tr_error *err);

/* Index of the hierarchy to use for controller c: on v2 (or hybrid when the v2 mount lists
 * c) the v2 index, else the v1 hierarchy holding c, else -1.  "Each field from the best
 * place": callers still check whether the wanted file exists in the cgroup. */
int tr_hierarchies_best(const tr_hierarchies *hs, tr_controller c);

/* A pid's cgroup path in each hierarchy, as /proc/PID/cgroup names it ("/jobs/job_42").
 * paths[i] is NULL for a hierarchy the file does not list. */
typedef struct tr_pid_cgroups {
        char *paths[TR_MAX_HIER];
} tr_pid_cgroups;

int tr_pid_cgroups_parse(const tr_hierarchies *hs, const char *text, tr_pid_cgroups *out, tr_error *err);
int tr_pid_cgroups_read(const tr_hierarchies *hs, pid_t pid, tr_pid_cgroups *out, tr_error *err);
/* The same from a file of that format (/proc/PID/cgroup itself, or a copy of one). */
int tr_pid_cgroups_read_file(const tr_hierarchies *hs, const char *file, tr_pid_cgroups *out, tr_error *err);
/* The same through an fd of the process's /proc/PID directory (-ESRCH once it is gone). */
int tr_pid_cgroups_read_at(const tr_hierarchies *hs, int proc_dirfd, tr_pid_cgroups *out, tr_error *err);
void tr_pid_cgroups_clear(tr_pid_cgroups *pc);

/* Filesystem path of cgroup path `cg_path` (as /proc/PID/cgroup names it) in hierarchy h:
 * mount_point + (cg_path relative to mount_root).  -ENOENT when cg_path lies outside what
 * this mount shows. */
int tr_hierarchy_fs_path(const tr_hierarchy *h, const char *cg_path, char *buf, size_t size, tr_error *err);

/* Whether cgroup path `path` is `prefix` or below it, component-wise ("/a/bc" is not under
 * "/a/b"). */
bool tr_cgroup_path_under(const char *path, const char *prefix);

/* True when cgroup `cg_path` is the root of hierarchy h, or the root of what this mount
 * shows or above it, or not a valid absolute path (refuse rather than risk it). */
bool tr_cgroup_is_root(const tr_hierarchy *h, const char *cg_path);

/* The calling process's own cgroups into *buf (cleared, then read from /proc/self/cgroup):
 * buf, or NULL when unreadable.  tr_pid_cgroups_clear(buf) after, either way. */
const tr_pid_cgroups *tr_self_cgroups(const tr_hierarchies *hs, tr_pid_cgroups *buf);
/* True when cgroup `cg_path` of hierarchy i is the hierarchy root, or equals or is an
 * ancestor of the caller's cgroup there, `self` from tr_self_cgroups (so freezing/killing
 * it would hit us); NULL self (unreadable) holds everything.  Read self once for a check
 * over several hierarchies. */
bool tr_cgroup_holds_self(const tr_hierarchies *hs, const tr_pid_cgroups *self, int i, const char *cg_path);
/* Whether cgroup `cg_path` holds the caller in any hierarchy (reads /proc/self/cgroup). */
bool tr_cgroup_holds_self_any(const tr_hierarchies *hs, const char *cg_path);
