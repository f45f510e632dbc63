/* launch.h - start the job inside its cgroup.
 *
 * clone3(CLONE_INTO_CGROUP | CLONE_PIDFD) into the v2 leaf: the job never runs an instruction
 * outside it.  In hybrid/v1 it joins its v1 cgroups (cgroup.procs fds the parent opened)
 * before the gate opens; an exec-error pipe (O_CLOEXEC) tells the parent that all of that
 * happened (EOF) or what failed.  Without clone3 (ENOSYS/E2BIG): fork, the child writes
 * itself into the v2 leaf first.  Everything that allocates (passwd lookup, PATH search,
 * environment) happens before the clone; the child makes system calls only.
 *
 * Where clone-vm.h allows it and the job gets no PID namespace, the child is a CLONE_VM one
 * on a stack of its own (a copy of this launch at its top): no page tables copied, no
 * copy-on-write faults in the starter, nothing to tear down at the exec.  The starter then
 * writes the child's pid into the v1 cgroup.procs itself, while the child starts; the child
 * forks nothing before its exec, so nothing it makes is left behind.  With a PID namespace
 * the child's init forks the command before the gate and lives on, so that child is a
 * fork-style one that joins its v1 cgroups itself, before that fork.
 *
 * The gate: the job never runs its command untracked.  The child dies with the starter
 * (PR_SET_PDEATHSIG SIGKILL, set again after the ids change, which clears it; getppid()
 * checked against the starter after the prctl) and, everything else done, says "ready" on
 * the exec-error pipe and blocks reading the gate pipe.  The starter registers the job
 * (procd with the starter as kill-on-watcher-exit watcher, or the embedded tracker; the
 * guard, guard.h, is alive already) and only then writes the gate's byte
 * (st_launch_release); the child clears its parent-death signal and execs.  EOF on the
 * gate - the starter died, or gave up on the job (st_launch_close_gate) - ends the child
 * without exec.  A setsid escaper can only come from the command, after the exec: by then
 * the job is tracked.  In a PID namespace the init keeps the parent-death signal for the
 * job's life: the starter's death ends the namespace.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "clone-vm.h"
#include "jobns.h"
#include "options.h"
#include "trackers/cgroup.h"

typedef struct st_launch {
        char *exec_path;      /* argv[0] resolved against PATH */
        char **argv;          /* borrowed from options */
        char **envp;          /* owned array; strings owned when envp_owned[i] */
        char **env_alloc;     /* strings we allocated */
        size_t n_env_alloc;
        int stdio[3];         /* -1: inherit */
        const char *cwd;
        bool set_ids;
        uid_t uid;
        gid_t gid;
        gid_t *groups;
        int ngroups;
        st_launch_mode mode;
        sigset_t child_mask;  /* the mask to restore in the child */
        bool sigpipe_default; /* SIGPIPE was SIG_DFL before the starter ignored it */
        /* filled by st_launch_place */
        int v2_fd;                      /* borrowed from the cgroup handle */
        int v2_procs_fd;                /* fork fallback only */
        int v1_procs_fds[TR_MAX_HIER];
        int n_v1;
        bool used_fork;                 /* what st_launch_start did */
        pid_t starter_pid;              /* the child's parent, checked after its prctl */
        int gate_r, gate_w;             /* the gate pipe: the child's end, the starter's */
        int efd;                        /* exec-error pipe's read end between start and release */
        st_jobns ns;                    /* private /tmp, PID namespace (jobns.h) */
        st_vm_stack vm_stack;           /* the CLONE_VM child's stack (clone-vm.h) */
        bool vm_child_live;             /* a CLONE_VM child may still run on it */
} st_launch;

/* Resolve user/group/command/environment/stdio.  Fails early, before any cgroup exists:
 * -ENOENT (command not found: exit 127), -EACCES (126), others (125). */
int st_launch_prepare(st_launch *l, const st_options *o, tr_error *err);

/* Open what the child needs to join `job` (v2 fd, v1 cgroup.procs fds). */
int st_launch_place(st_launch *l, tr_cgroup *job, tr_error *err);

/* Start the job up to the gate.  On success *pid and *pidfd (CLOEXEC) are set and the child
 * waits at the gate, everything done but the exec (or it died meanwhile: its pidfd tells).
 * On failure the child (if any) is reaped and -errno returned: -ECANCELED when a step in
 * the child failed (cgroup join, ids, chdir; err says which and why). */
int st_launch_start(st_launch *l, pid_t *pid, int *pidfd, tr_error *err);
/* Open the gate once the job is tracked: the child execs.  0 when it did (or died at the
 * gate: the wait loop sees that end); when exec failed the child is reaped, *pidfd closed
 * and set to -1, and execve's -errno returned. */
int st_launch_release(st_launch *l, pid_t pid, int *pidfd, tr_error *err);
/* Give up on the job before the gate opened: the child ends without exec.  Idempotent. */
void st_launch_close_gate(st_launch *l);

void st_launch_free(st_launch *l);
