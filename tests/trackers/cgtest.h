/* cgtest.h - what the cgroup handle's test programs share (one test program per source
 * file of the handle: test_cgroup.c, test_cgroup_setup.c, test_cgroup_stats.c,
 * test_cgroup_freezer.c, test_cgroup_kill.c).
 *
 * Every cgroup lives under ts_cgroup_base(); every process signalled is one the program
 * started (or a descendant of one).  On a hybrid host the live tests also run against a
 * "v1 view" of the host (the mountinfo without its cgroup2 line) so that the v1 paths -
 * freezer.state, freeze+kill rounds, v1 membership - run for real too.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "testsupport.h"
#include "trackers/cgroup.h"

#define SEC 1000000ull
#define MB (1024ull * 1024ull)

/* Children's payloads (ts_fork; a sleeper: ts_sleep_forever). */
int run_spinner(void *arg);
int run_touch(void *arg); /* touches (size_t) arg bytes of anonymous memory, exits 0 */
int run_hold(void *arg);  /* touches (size_t) arg bytes of anonymous memory, then sleeps */
int run_many(void *arg);  /* forks (intptr_t) arg sleepers, then sleeps */

/* The host seen as pure v1 (hybrid hosts only), and without its v1 freezer too; NULL when
 * there is no such view. */
const tr_hierarchies *v1hs(void);
const tr_hierarchies *nofreezer_hs(void);

/* Root and a test base: else prints SKIP for `what` and returns false. */
bool root_and_base(const char *what);

tr_cgroup *make_cg(const tr_hierarchies *hs, const char *name); /* under the test base */
/* make_cg of "<prefix>-<tag>" (a case run once per hierarchy view, tag naming the view). */
tr_cgroup *make_cg_tagged(const tr_hierarchies *hs, const char *prefix, const char *tag);
pid_t start_in(tr_cgroup *cg, int (*fn)(void *), void *arg);
/* Attached before it runs fn (its first instruction of payload is in the cgroup). */
pid_t start_gated(tr_cgroup *cg, int (*fn)(void *), void *arg);
void assert_everywhere(tr_cgroup *cg, bool present); /* in every hierarchy of the handle */
void kill_destroy(tr_cgroup *cg);                    /* kill, destroy, assert gone, free */

long long cpu_ticks(pid_t pid); /* utime + stime, or -1 */
size_t wait_members(tr_cgroup *cg, size_t n, unsigned timeout_ms);
bool alive_same(pid_t pid, uint64_t ticks); /* still that process and not a zombie */

/* Fixture trees: regular files stand in for cgroupfs. */
void put_file(const char *dir, const char *name, const char *text);
void put_fixture(const char *dir, const char *name, const char *rel);
void rm_tree(const char *dir);
void mkdirs(const char *a, const char *b); /* mkdir -p a/b */
int count_fds(void);

/* check_NAME(hs, tag) run on the host and on the v1 view: host_NAME() and v1_NAME(). */
#define HOST_TEST(fn, what)                                                                   \
        static void host_##fn(void)                                                           \
        {                                                                                     \
                if (root_and_base(what))                                                      \
                        check_##fn(ts_hierarchies(), "host");                                 \
        }                                                                                     \
        static void v1_##fn(void)                                                             \
        {                                                                                     \
                if (!root_and_base(what))                                                     \
                        return;                                                               \
                if (!v1hs() || ts_hierarchies()->mode != TR_MODE_HYBRID) {                    \
                        ts_skip(what, "(v1 view) the host is not hybrid");                   \
                        return;                                                               \
                }                                                                             \
                check_##fn(v1hs(), "v1");                                                     \
        }

/* Run the suites "NAME-host" and "NAME-v1-view" (the host[] and v1[] tests), then `extra`
 * (NULL, or suites ended by CU_SUITE_INFO_NULL; at most 4). */
int cgt_run(const char *name, CU_TestInfo *host, CU_TestInfo *v1, const CU_SuiteInfo *extra);
