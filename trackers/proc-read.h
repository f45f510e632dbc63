/* proc-read.h - what procd knows of one process, read from /proc: the parsers of its
 * files (text in, so unit tests run on fixture files) and the small readers of one pid
 * (stat, status, task/TID/children).  With procscan.h (the pass over every process) and
 * hierarchy.h (/proc/PID/cgroup, mountinfo) these are the only readers of /proc in procd:
 * the daemon and the starter read a process through them.
 *
 * Identity is pid + start time (field 22 of stat, clock ticks since boot); pidref.h holds
 * the reference that acts on a process.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define TR_SCAN_MAX_GROUPS 64

typedef struct tr_proc {
        pid_t pid, ppid, pgrp, session;
        char state;                 /* R S D Z T ... */
        uint64_t start_ticks;       /* since boot, clock ticks: identity with pid */
        uint64_t utime_ticks, stime_ticks;
        uint64_t cutime_ticks, cstime_ticks; /* CPU of waited-for (reaped) children */
        uint64_t sigignore;         /* ignored signals bitmap (bit sig-1); 0 when absent */
        uint64_t vsize_bytes, rss_bytes;
        bool has_status;            /* uid and groups are valid */
        uid_t uid;                  /* real uid */
        int ngroups;
        gid_t groups[TR_SCAN_MAX_GROUPS];
        bool has_io;
        uint64_t io_read_bytes, io_write_bytes;
        uint64_t env_match;         /* bit i: environ holds opts->env_markers[i] */
} tr_proc;

/* A process as a pair: pid and its start time (the identity everywhere). */
typedef struct tr_proc_ident {
        pid_t pid;
        uint64_t start_ticks;
} tr_proc_ident;

/* /proc/PID/stat text -> pid, ppid, pgrp, session, state, utime, stime, cutime, cstime,
 * start, vsize, rss (pages * page_size), sigignore.  comm may hold spaces and ')'. */
int tr_parse_proc_stat(const char *text, long page_size, tr_proc *out);
/* Read and parse /proc/PID/stat of one process (page size from sysconf).  0, -ESRCH when
 * the process is gone, or -errno. */
int tr_proc_stat_read(pid_t pid, tr_proc *out);
/* The same through an fd of the process's /proc/PID directory (-ESRCH once it is gone,
 * even when its pid names another process now). */
int tr_proc_stat_read_at(int proc_dirfd, tr_proc *out);
/* /proc/PID/status text -> uid (Uid: real), groups (Groups:); sets has_status. */
int tr_parse_proc_status(const char *text, tr_proc *out);
/* /proc/PID/io text -> read_bytes, write_bytes; sets has_io. */
int tr_parse_proc_io(const char *text, tr_proc *out);
/* Whether a NUL-separated environ block holds exactly the entry `marker` ("NAME=VALUE"). */
bool tr_environ_has(const char *env, size_t len, const char *marker);

/* Start time of pid in clock ticks since boot (field 22 of /proc/PID/stat); 0 or -errno
 * (-ESRCH when gone).  Pid identity everywhere is pid + start time. */
int tr_pid_start_ticks(pid_t pid, uint64_t *out);
/* Whether pid exists and is not a zombie (a killed process its parent has not reaped yet
 * counts as dead). */
bool tr_pid_alive(pid_t pid);
/* Whether pid still names the process started at start_ticks and it is not a zombie. */
bool tr_pid_alive_as(pid_t pid, uint64_t start_ticks);

/* The file a process runs: /proc/PID/exe followed to its device and inode. */
typedef struct tr_exe_id {
        uint64_t dev, ino;
} tr_exe_id;
/* The file pid runs now; 0, -ESRCH when gone (a zombie has none), or -errno.  A change
 * means the process exec'd since (or swapped its exe by prctl PR_SET_MM_EXE_FILE, which
 * needs CAP_SYS_RESOURCE); an exec of the same file leaves it as it was. */
int tr_proc_exe_id(pid_t pid, tr_exe_id *out);
static inline bool tr_exe_id_equal(tr_exe_id a, tr_exe_id b) { return a.dev == b.dev && a.ino == b.ino; }

/* Parent pid of pid (stat); -ESRCH when gone. */
int tr_proc_ppid(pid_t pid, pid_t *ppid);
/* Real uid of pid (status); -ESRCH when gone. */
int tr_proc_uid(pid_t pid, uid_t *uid);
/* Real uid of pid, only while pid is still the process started at start_ticks (-ESRCH):
 * the start time is read after the uid. */
int tr_proc_uid_checked(pid_t pid, uint64_t start_ticks, uid_t *uid);
/* Thread group of pid (/proc/PID/status Tgid): pid itself for a process, another for a
 * thread id (/proc/TID exists too, hidden from readdir). */
int tr_proc_tgid(pid_t pid, pid_t *tgid);
/* Whether pid is a thread id that leads no thread group (a pidfd_open probe, /proc/PID/status
 * where pidfds are missing); false when gone. */
bool tr_proc_is_thread(pid_t pid);
/* Whether pid is one of the calling process's own threads (/proc/self/task/PID). */
bool tr_proc_is_own_thread(pid_t pid);
/* Seconds since a process started at start_ticks (/proc/uptime), never below 0.  -EINVAL
 * for start_ticks 0 (unknown), or -errno. */
int tr_proc_age_seconds(uint64_t start_ticks, double *out);
/* The children of pid (of each of its threads: /proc/PID/task/TID/children) with their
 * start times, appended to *out (grown with realloc; *n entries, *cap allocated).  0, or
 * -ENOMEM; a kernel without the files, or a pid gone, adds nothing. */
int tr_proc_children(pid_t pid, tr_proc_ident **out, size_t *n, size_t *cap);
