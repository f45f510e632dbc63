/* jobns.h - the job's private /tmp and PID namespace.
 *
 * --private-tmp[=DIR]: the job gets its own mount namespace (mounts of the host still
 * propagate in: / is made a recursive slave) with a fresh /tmp and /var/tmp - two tmpfs
 * (pages charged to the job's memory cgroup, size --private-tmp-size, default --memory-max
 * when given), or bind mounts of DIR/procd-tmp.XXXXXX/{tmp,var-tmp} made before the launch and
 * removed after the job.  A tmpfs goes with the namespace's last process.  The per-job
 * directory is made once the job cgroup exists, its path recorded there first (orphans.h)
 * so that whoever ends a job whose starter died removes it too: the guard (guard.h), else
 * the next starter's sweep.
 *
 * --pid-namespace: clone3(CLONE_NEWPID | CLONE_NEWNS | CLONE_INTO_CGROUP): the starter's child
 * is PID 1 of a new PID namespace, placed in the job cgroup from its first instruction.  It
 * mounts a fresh /proc, starts the command as PID 2 and stays as a minimal init: it reaps
 * every orphan of the namespace, forwards TERM/INT/HUP/QUIT/USR1/USR2/ALRM/WINCH/CONT/TSTP
 * to the command, and exits with the command's status (128+N when a signal N killed it);
 * its exit kills whatever is left in the namespace.  The starter, procd and the report see
 * host pids (the init's is the job's pid); kill, suspend and usage go through the cgroup
 * as without a namespace.
 *
 * Everything the child does is a raw system call (no allocation after the clone).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "options.h"
#include "trackers/error.h"

typedef struct st_jobns {
        bool private_tmp;
        bool pid_ns;
        const char *parent_dir; /* DIR (bind mode), borrowed from the options */
        char *job_dir;         /* DIR/procd-tmp.XXXXXX (bind mode), removed by st_jobns_free */
        char src[2][PATH_MAX]; /* job_dir/tmp, job_dir/var-tmp */
        char tmpfs_opts[64];   /* "mode=1777,size=N" (tmpfs mode) */
} st_jobns;

#define ST_JOBNS_DIR_PREFIX "procd-tmp."

/* From the options (no directory made yet).  -errno with err filled. */
int st_jobns_prepare(st_jobns *ns, const st_options *o, tr_error *err);

/* Keeps path where a sweep finds it; 0 or -errno. */
typedef int (*st_jobns_record_fn)(void *arg, const char *path, tr_error *err);
/* Bind mode: choose DIR/procd-tmp.XXXXXX, hand it to record (when not NULL), then make it
 * (0700) with its tmp and var-tmp (1777).  Nothing to do otherwise.  -errno with err. */
int st_jobns_make_dir(st_jobns *ns, st_jobns_record_fn record, void *arg, tr_error *err);

/* Whether the child needs a new mount namespace (unshare when the clone did not give one). */
static inline bool st_jobns_wants_mounts(const st_jobns *ns)
{
        return ns->private_tmp || ns->pid_ns;
}

/* In the child, before dropping privileges: make / a recursive slave, mount the private
 * /tmp and /var/tmp, and (PID namespace) a fresh /proc.  0 or -errno. */
int st_jobns_mount(const st_jobns *ns);

/* In the child that is PID 1 of the new namespace: start the command's process.  Returns 0
 * in that process (which goes on to exec); the init itself never returns: it reaps and
 * forwards signals until the command's process exits, then _exits with its status.  -errno
 * when the clone fails.  keep_fd (the exec-error pipe) stays open in the command's process
 * and is closed in the init. */
int st_jobns_init(int keep_fd);

/* Remove a per-job directory by path (a record's): only an absolute path whose last
 * component starts with procd-tmp.; no symlink followed, no other filesystem entered.
 * Whether it is gone. */
bool st_jobns_remove_path(const char *path);
/* Remove the per-job directory now (after the job's processes are gone); idempotent. */
void st_jobns_remove_dir(st_jobns *ns);
/* st_jobns_remove_dir, and free. */
void st_jobns_free(st_jobns *ns);
