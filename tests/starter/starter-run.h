/* starter-run.h - what the starter's integration test programs share: their main (a job
 * helper mode and a scratch directory), procd-starter spawned with its output in files
 * there, the job cgroup's presence in every hierarchy, and a procd daemon started and
 * stopped by pid. */
#pragma once

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The whole main of a starter test program.  `prog helper ARGS...` (a job the starter
 * runs) calls helper(argc, argv) and _exits with its code (_exit: no atexit work in a job;
 * LeakSanitizer's exit check needs a thread, which --pids-max may refuse).  Otherwise it
 * makes the scratch directory /tmp/<prefix>.XXXXXX (mode 0755: jobs run as other users
 * write there), checks procd-starter is built, runs the suites, and removes the directory
 * when every test passed (kept for a look otherwise).  helper may be NULL. */
int sr_main(int argc, char **argv, const char *prefix, int (*helper)(int argc, char **argv), CU_SuiteInfo *suites);

/* This program's own path (for `<self> helper ...` jobs). */
const char *sr_self_exe(void);
/* The built procd-starter, or the one PROCD_TEST_STARTER_BIN names (measuring another
 * build against the same tests). */
const char *sr_starter_bin(void);

/* "<scratch>/<tag><ext>" into buf. */
void sr_path(char *buf, size_t size, const char *tag, const char *ext);

/* Start procd-starter with args (NULL-terminated, without argv[0]); stdin /dev/null, its
 * stdout to <tag>.out and stderr to <tag>.err in the scratch directory.  The pid, or -1. */
pid_t sr_spawn(const char *tag, const char *const *args);

/* Wait up to timeout_ms for a spawned starter: its exit code, -1 when signalled, -2 when
 * it ran past the bound (then killed and reaped). */
int sr_wait_code(pid_t pid, int timeout_ms);

/* Whole scratch file <tag><ext> into buf (empty when missing). */
void sr_read(const char *tag, const char *ext, char *buf, size_t size);

/* Whether <base>/<tag>[/sub] exists in any hierarchy; prints where when `say` is set. */
bool sr_cgroup_exists(const char *tag, const char *sub, bool say);

/* How many names in dir start with prefix (0 when dir is missing). */
int sr_count_entries(const char *dir, const char *prefix);
/* Whether pid's comm is `comm` (it exec'd that program). */
bool sr_runs(pid_t pid, const char *comm);

/* Start the built procd on sock (ph_start_in: --foreground, ready when --ready-fd closes),
 * its output appended to <logtag>.log; the pid once ready, or -1. */
pid_t sr_procd_start(const char *sock, const char *logtag);
/* Ask procd on sock to quit; kill and reap it by pid if it has not exited within 5 s. */
void sr_procd_stop(pid_t pid, const char *sock);

/* The first pid of <base>/<tag>/job (the v2 tree, else the first hierarchy), waiting up to
 * 10 s for one to show; -1 when none did. */
pid_t sr_job_root(const char *tag);
