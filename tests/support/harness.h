/* harness.h - what the tests that run procd share: a procd started on a temporary socket (ready
 * when --ready-fd closes), sleeping children, chains of descendants, raw libdbus calls. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <dbus/dbus.h>

#include "procd/client.h"
#include "testsupport.h"
#include "trackers/cgroup.h"

typedef struct ph_daemon {
        pid_t pid;
        char dir[64];
        char socket[128];
        char log[4096]; /* when set (ph_start_in), procd's stdout and stderr are appended here */
} ph_daemon;

/* The main of a program that drives procd as a whole: skips (77) without root, since procd
 * takes registrations from root only; SIGPIPE ignored (a daemon may drop a connection);
 * ts_run_suite. */
int ph_main(const char *name, CU_InitializeFunc init, CU_CleanupFunc clean, CU_TestInfo *tests);

/* Start build/procd/procd --foreground --socket DIR/procd.sock --ready-fd N extra...;
 * wrapper (may be NULL) is a NULL-terminated argv put in front (valgrind ...).  Waits
 * until ready (timeout_ms).  0 or -errno. */
int ph_start(ph_daemon *d, const char *const *extra, const char *const *wrapper, int timeout_ms);
/* Start procd again on d's directory and socket (after ph_crash: its state file is there). */
int ph_start_in(ph_daemon *d, const char *const *extra, const char *const *wrapper, int timeout_ms);
/* SIGKILL procd and reap it; the directory (socket, state file) stays. */
void ph_crash(ph_daemon *d);
/* Remove d's directory and the files in it (state file, set-aside files). */
void ph_remove_dir(const ph_daemon *d);
/* Quit through the client (or SIGTERM when that fails) and wait; returns the exit status
 * (waitpid form) or -ETIMEDOUT; removes the temporary directory. */
int ph_stop(ph_daemon *d, int timeout_ms);
/* Disconnect *c (when set) and stop d; 0 when procd exited 0 (a suite's clean function). */
int ph_suite_stop(ph_daemon *d, procd_client **c);

/* A client call that must answer `status` (e_: its procd_error, named in the call); the
 * message is printed when it does not. */
#define PH_EXPECT(call, status)                                                                                   \
        do {                                                                                                      \
                procd_error e_ = { 0 };                                                                           \
                procd_status s_ = (call);                                                                         \
                if (s_ != (status))                                                                               \
                        fprintf(stderr, "%s:%d: got %d (%s), want %d\n", __FILE__, __LINE__, s_, e_.msg, status); \
                CU_ASSERT_EQUAL(s_, status);                                                                      \
        } while (0)

/* Connect a client (CU_FAIL when that fails). */
procd_client *ph_connect(const ph_daemon *d);

/* A child that burns CPU until killed. */
pid_t ph_spinner(void);
/* A child that forks `depth` generations below itself, each sleeping; pids[0] is the
 * child, pids[i] the i-th descendant.  0 or -errno. */
int ph_chain(int depth, pid_t *pids);
/* ph_chain in two steps: the top (pids[0]) starts, and forks its generations only at
 * ph_chain_grow, so that a family registered at pids[0] in between holds them all
 * (REGISTER takes the root alone: what it had forked before stays in the parent family).
 * fds: kept between the two calls (closed by grow). */
int ph_chain_start(int depth, pid_t *pids, int fds[2]);
int ph_chain_grow(int depth, pid_t *pids, int fds[2]);
/* Kill (SIGKILL, by pid, only pids this test started) a chain's members and reap the top. */
void ph_chain_kill(int depth, const pid_t *pids);

/* A sleeper placed in a fresh cgroup <base>/<name> (created with TR_CG_OWNED). */
pid_t ph_sleeper_in_cgroup(const char *name, char *path_out, size_t size, tr_cgroup **cg_out);

/* A sleeper held frozen in a v1 freezer cgroup <base>/name procd was not handed, so procd
 * can neither stop nor kill it.  False (SKIP printed, naming what) without root or a v1
 * freezer hierarchy.  _end thaws, kills and reaps it and removes the cgroup. */
typedef struct ph_frozen_victim {
        pid_t pid;
        char dir[512];
        char state[600]; /* its freezer.state */
} ph_frozen_victim;
bool ph_frozen_victim_start(ph_frozen_victim *fv, const char *name, const char *what);
void ph_frozen_victim_end(ph_frozen_victim *fv);

/* Dump(pid) through c: the family's own entry (members not kept) when pid roots one. */
bool ph_dump_one(procd_client *c, pid_t pid, procd_family_info *out);
/* Whether Dump(fam) lists pid among fam's members. */
bool ph_has_member(procd_client *c, pid_t fam, pid_t pid);

/* Wait until cond(pid) or timeout. */
bool ph_wait_gone(pid_t pid, int timeout_ms);

/* Raw libdbus connection (authenticated) to the daemon, NULL on failure. */
DBusConnection *ph_raw_connect(const ph_daemon *d);
/* Send m and wait for the reply; returns the error name (static buffer) or NULL on a
 * method return. */
const char *ph_raw_call(DBusConnection *c, DBusMessage *m, int timeout_ms);
/* A bare socket to the daemon, after EXTERNAL authentication as our uid and BEGIN when
 * begin (then non-blocking when nonblock); -1 on failure.  For clients that must speak the
 * wire protocol themselves (never reading, corrupt bytes). */
int ph_raw_session(const ph_daemon *d, bool begin, bool nonblock);
/* GetUsage(0) answered on a fresh connection, and the daemon alive. */
bool ph_answers(const ph_daemon *d);
