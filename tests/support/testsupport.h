/* testsupport.h - what every CUnit test program shares: the run's cgroup base, root checks
 * that print why they skip, fixture files, and the suite runner. */
#pragma once

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <sys/types.h>

#include "trackers/cgroup.h"
#include "trackers/hierarchy.h"

/* The live hierarchies (discovered once per program). */
const tr_hierarchies *ts_hierarchies(void);

/* ctest's skip code (SKIP_RETURN_CODE in cmake/ProcdTest.cmake): a program that cannot run
 * here at all returns it from main, after printing why. */
#define TS_SKIP_EXIT 77

/* The one way a test says it cannot run here: prints "SKIP <what>: <why>" on one line and
 * counts it.  A case that skips returns after it (its program still exits 0 when other
 * cases ran); a program in which every case skipped and nothing was asserted exits 77
 * (ts_run). */
void ts_skip(const char *what, const char *why_fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a whole program that cannot run here: returns TS_SKIP_EXIT for main. */
int ts_skip_program(const char *what, const char *why_fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when running as root; otherwise ts_skip(what, "needs root ..."). */
bool ts_need_root(const char *what);
/* Whether "/" is a mount point in this process's view (/proc/self/mountinfo).  It is not in a
 * chroot into a plain directory: changing the propagation of "/" (a private mount namespace,
 * unshare --propagation, procd-starter --private-tmp / --pid-namespace) then fails with
 * EINVAL. */
bool ts_root_is_mount_point(void);
/* True when this program may set up a private mount namespace here: root, and "/" a mount
 * point; otherwise ts_skip(what, why). */
bool ts_need_private_mounts(const char *what);

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
/* "--suppressions=<the fixtures' valgrind/procd.supp>" into buf, for a valgrind run of
 * procd (its false positives, each explained there); returns buf. */
const char *ts_valgrind_suppressions(char *buf, size_t size);
/* O_PATH directory fd of a fixture directory; aborts the test program when missing. */
int ts_open_fixture_dir(const char *rel);
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

/* Run the suites (as child subreaper); prints the CUnit summary; returns the exit code for
 * ctest: 1 on any failure, 2 when the registry could not be built, 77 when every case
 * skipped (ts_skip called, nothing asserted), else 0. */
int ts_run(CU_SuiteInfo *suites);
/* ts_run of one suite. */
int ts_run_suite(const char *name, CU_InitializeFunc init, CU_CleanupFunc clean, CU_TestInfo *tests);

/* Two O_CLOEXEC pipes (a parent-child conversation both ways); 0, or -errno with none left
 * open. */
int ts_pipes(int a[2], int b[2]);
/* Start a child that runs fn(arg) then _exit(rc); returns its pid (> 1) or -errno. */
pid_t ts_fork(int (*fn)(void *arg), void *arg);
/* Start a child that waits until this program placed it in cg, then runs fn(arg) and
 * _exit()s with its result: its first instruction after the handshake is in the cgroup.
 * The pid, or -errno (the child killed and reaped when it could not be placed). */
pid_t ts_spawn_in(struct tr_cgroup *cg, int (*fn)(void *arg), void *arg);
/* A ts_fork body that sleeps until killed (and dies with the test program: PDEATHSIG). */
int ts_sleep_forever(void *arg);
/* A child of the test that sleeps until killed: ts_fork(ts_sleep_forever). */
pid_t ts_sleeper(void);
/* ts_fork body of a job child as HTCondor's starter makes one, registered before it execs:
 * arg is an int[2] pipe (the gate); the child closes gate[1], waits for one byte on
 * gate[0], then execs /bin/sleep (dies with the test: PR_SET_PDEATHSIG, kept across exec). */
int ts_exec_sleep_at_gate(void *arg);
/* Sleep ms milliseconds. */
void ts_msleep(unsigned ms);
/* Wait for pid with a bound; returns exit status as from waitpid, or -ETIMEDOUT. */
int ts_wait(pid_t pid, int timeout_ms);
/* Kill a pid this test started (pid > 1 checked) with SIGKILL and reap it. */
void ts_kill_reap(pid_t pid);
/* Whether pid exists and is not a zombie. */
bool ts_alive(pid_t pid);
/* The state letter of /proc/PID/stat (R, S, T, Z, ...), '?' when pid is gone. */
char ts_proc_state(pid_t pid);
