/* benchutil.h - helpers the benchmark programs share (sleepers, kill and reap: tests/support). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "testsupport.h"

/* Median of v[0..n) (sorts v in place); n > 0. */
uint64_t bench_median(uint64_t *v, size_t n);
/* The 1-minute load average (-1 when unknown). */
double bench_loadavg(void);
/* "load 0.42" into buf, with a warning when above 2 (timed figures from a loaded machine are
 * not figures): printed beside every figure. */
const char *bench_load_note(char *buf, size_t size);
/* CPU process pid has used: utime+stime of /proc/PID/stat (clock ticks) and the sum over
 * its threads of schedstat's time on CPU (ns); 0 for what cannot be read. */
void bench_proc_cpu(pid_t pid, uint64_t *ticks, uint64_t *run_ns);
/* The read- and write-like system calls process pid's threads made (syscr + syscw of
 * /proc/PID/io): a count the machine's load does not change. */
uint64_t bench_proc_rw_syscalls(pid_t pid);
/* For cc_daemon_start_with's pre_exec: the daemon enters cgroup handle cg (a tr_cgroup *),
 * as a service manager places a service. */
void bench_enter_cgroup(void *cg);
/* What a benchmark that runs a daemon needs first: root (2 when not), SIGPIPE ignored,
 * orphans reaped by us (child subreaper), the hierarchies discovered (1 when not); 0. */
struct tr_hierarchies;
int bench_daemon_setup(const char *prog, struct tr_hierarchies *hs);
/* A tmpfs mounted at /tmp/<prog>-state.<pid> for a daemon's state file (a packaged procd
 * keeps it under /run, a tmpfs on Debian nodes, where fsync costs nothing): 0 with dir
 * filled, or -errno (printed, nothing left behind).  _drop unmounts and removes it ("": nothing). */
int bench_tmpfs_mount(const char *prog, char *dir, size_t size);
void bench_tmpfs_drop(const char *dir);
