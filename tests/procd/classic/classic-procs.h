/* classic-procs.h - processes the classic-protocol tests drive: a "forker" that makes
 * children on request (so a family grows after its registration), CPU burners, and a
 * check that a process is held (stopped by a signal or in a frozen cgroup). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "classic-client.h"

typedef struct cp_forker {
        pid_t pid;
        int cmd_fd, resp_fd;
} cp_forker;

/* A child of the caller that waits for requests. 0 or -errno. */
int cp_forker_start(cp_forker *f);
/* Ask it for a sleeping child ('s'), a child that burns `burn_ms` of CPU time and exits
 * ('b'; returns its pid once it has exited and been reaped by the forker), or a
 * double-forked setsid grandchild that sleeps ('d', orphaned at once).  Returns the pid or
 * -errno. */
pid_t cp_forker_spawn(cp_forker *f, char what, int burn_ms);
/* SIGKILL the forker and every pid it reported (by pid), reap the forker. */
void cp_forker_kill(cp_forker *f);

/* Burn CPU (user time) in the calling process until it used `ms` of CPU time. */
void cp_burn_cpu_ms(int ms);
/* CPU time (utime + stime) of a live process in clock ticks, -1 when gone. */
long long cp_cpu_ticks(pid_t pid);
/* Stopped ('T'/'t') or in a frozen cgroup (v2 cgroup.events "frozen 1" or v1 freezer
 * FROZEN). */
bool cp_held(pid_t pid);
/* The pid's v2 cgroup path ("0::" line), false when none. */
bool cp_v2_cgroup(pid_t pid, char *out, size_t size);

/* The cgroup "<test base>/<name>" (made in every hierarchy), where a daemon under test is
 * placed as a site's service manager would place it (its families then get cgroups below
 * it); NULL with a printed reason when none can be made. */
struct tr_cgroup *cp_service_cgroup(const char *name);
/* pre_exec hook for cc_daemon_start_with: move the calling process into the tr_cgroup. */
void cp_enter_cgroup(void *cg);

/* A daemon for the family-tree tests (the model and the HTCondor-format inputs), with a
 * client open on it: family cgroups off (PROCD_FAMILY_CGROUPS=off, inherited) or on (the
 * daemon in the service cgroup `cg_name`, as a service manager would place it; cg stays
 * NULL when none can be made here). */
typedef struct cp_tree_daemon {
        cc_daemon d;
        cc_client c;
        struct tr_cgroup *cg;
} cp_tree_daemon;

/* 0, or 1 when it did not start (a CUnit suite init's answer). */
int cp_tree_daemon_start(cp_tree_daemon *t, bool family_cgroups, const char *cg_name, const char *const *args);
/* Quit it; 0 when it exited 0, else 1.  Frees the cgroup. */
int cp_tree_daemon_stop(cp_tree_daemon *t);
