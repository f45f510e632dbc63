/* testsupport.h - what every CUnit test program shares: the run's cgroup base, root checks
 * that print why they skip, fixture files, and the suite runner. */
#pragma once

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <sys/types.h>

#include "trackers/hierarchy.h"

/* The live hierarchies (discovered once per program). */
const tr_hierarchies *ts_hierarchies(void);

/* True when running as root; otherwise prints "SKIP <what>: needs root" once per call. */
bool ts_need_root(const char *what);

/* The per-run cgroup base, "/procd-test.<pid>", created in the v2 tree and every v1
 * hierarchy on first use.  Removed (its processes killed by pid, deepest-first rmdir) at
 * exit, even when tests fail.  NULL (with a printed reason) when not root. */
const char *ts_cgroup_base(void);

/* "<base>/<name>" into buf; returns buf. */
const char *ts_cgroup_path(char *buf, size_t size, const char *name);

/* Remove the base now (also done atexit); returns the number of cgroup dirs that could not
 * be removed. */
int ts_cleanup_base(void);

/* Path of a fixture file (tests/fixtures/<rel>) into buf. */
const char *ts_fixture_path(char *buf, size_t size, const char *rel);
/* Whole fixture file, malloc'd and NUL-terminated; aborts the test program when missing. */
char *ts_read_fixture(const char *rel);

/* Directory of the build tree (for programs the tests run: procd, procctl, starter). */
const char *ts_build_dir(void);

/* A test's scale (how many families a scale case makes): the environment variable `name`
 * when it holds a whole number in [min, max] that is a multiple of `step`, else `dflt`
 * (the host's full count).  The guest lanes set small counts (tests/vm/lanes --ci); a
 * value that does not fit is reported and ignored. */
long ts_scale(const char *name, long dflt, long min, long max, long step);

/* Reap, by pid, this program's exited children (it is the subreaper of its descendants'
 * orphans, set by ts_run); while live children remain, keep looking for up to wait_ms
 * (killed ones still dying). */
void ts_reap_orphans(int wait_ms);

/* Run the suites (as child subreaper); prints the CUnit summary; returns the exit code for ctest (non-zero on
 * any failure, or when the registry could not be built). */
int ts_run(CU_SuiteInfo *suites);

/* Start a child that runs fn(arg) then _exit(rc); returns its pid (> 1) or -errno. */
pid_t ts_fork(int (*fn)(void *arg), void *arg);
/* Wait for pid with a bound; returns exit status as from waitpid, or -ETIMEDOUT. */
int ts_wait(pid_t pid, int timeout_ms);
/* Kill a pid this test started (pid > 1 checked) with SIGKILL and reap it. */
void ts_kill_reap(pid_t pid);
/* Whether pid exists and is not a zombie. */
bool ts_alive(pid_t pid);
/* The state letter of /proc/PID/stat (R, S, T, Z, ...), '?' when pid is gone. */
char ts_proc_state(pid_t pid);
