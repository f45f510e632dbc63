/* cgroup-gate.c - the safety gate every destructive operation on a cgroup handle passes
 * (signal, kill, freeze, thaw, destroy; attach and write pass the milder may-change check in
 * cgroup.c): a handle procd made or was handed, not a hierarchy root, not a cgroup holding
 * procd or one of its ancestors, and a cgroup that still exists.  Below both the freezer
 * and kill (cgroup-freezer.c, cgroup-kill.c), which call it and each other only downwards. */
#include "cgroup-internal.h"

#include <errno.h>
#include <unistd.h>

#include "ancestry.h"
#include "proc-read.h"

/* The cgroup still exists in some hierarchy of the handle (a removed directory's cgroup.procs
 * is gone even though our O_PATH fd still names it). */
static bool cg_exists(tr_cgroup *cg)
{
        for (int i = 0; i < cg->hs->n; i++)
                if (tr_cg_dirfd(cg, i) >= 0 && faccessat(tr_cg_dirfd(cg, i), "cgroup.procs", F_OK, 0) == 0)
                        return true;
        return false;
}

/* Destructive operations on a cgroup that was removed under the handle report -ENODEV (the
 * family may live on elsewhere: the caller falls back to /proc), never a false success. */
int tr_cg_check_exists(tr_cgroup *cg, const char *op, tr_error *err)
{
        return cg_exists(cg) ? 0 : tr_error_set(err, ENODEV, "%s: cgroup is gone in every hierarchy it had", op);
}

/* Whether a process whose cgroups are pc sits in the handle's cgroup or below it. */
static bool cgroups_held(const tr_cgroup *cg, const tr_pid_cgroups *pc)
{
        for (int i = 0; i < cg->hs->n; i++)
                if (cg->path[i] && pc->paths[i] && tr_cgroup_path_under(pc->paths[i], cg->path[i]))
                        return true;
        return false;
}

/* tr_ancestor_fn: the ancestor's cgroups through its /proc/PID fd */
static int ancestor_held(int proc_dirfd, pid_t pid, void *arg)
{
        const tr_cgroup *cg = arg;
        (void) pid;
        tr_pid_cgroups pc;
        if (tr_pid_cgroups_read_at(cg->hs, proc_dirfd, &pc, NULL) < 0)
                return -1; /* gone: the chain is walked again */
        bool held = cgroups_held(cg, &pc);
        tr_pid_cgroups_clear(&pc);
        return held ? 1 : 0;
}

/* Which process among the caller and its ancestors (its parent chain up to PID 1, at most
 * 64 steps: the shell, batch daemon or init that started us) sits in the handle's cgroup or
 * below it, or 0 when none: freezing or killing that would stop ourselves or our parents.
 * self_only: look at the caller alone.  The ancestors through the chain held for the
 * hierarchies (ancestry.h: one cgroup read per ancestor); without one, or when it cannot be
 * walked, by pid (a cgroup and a stat read per ancestor). */
static pid_t holds_self_or_ancestor(const tr_cgroup *cg, bool self_only)
{
        pid_t pid = getpid();
        if (!self_only && cg->hs->ancestry) {
                tr_pid_cgroups pc;
                if (tr_pid_cgroups_read(cg->hs, pid, &pc, NULL) < 0)
                        return pid; /* our own cgroup unknown: refuse */
                bool held = cgroups_held(cg, &pc);
                tr_pid_cgroups_clear(&pc);
                if (held)
                        return pid;
                pid_t holder = tr_ancestry_find(cg->hs->ancestry, ancestor_held, (void *) cg);
                if (holder >= 0)
                        return holder;
                pid = getppid(); /* the chain could not be held: walk it by pid */
        }
        for (int depth = 0; pid >= 1 && depth < 64; depth++) {
                tr_pid_cgroups pc;
                if (tr_pid_cgroups_read(cg->hs, pid, &pc, NULL) < 0)
                        return pid == getpid() ? pid : 0; /* our own cgroup unknown: refuse */
                bool held = cgroups_held(cg, &pc);
                tr_pid_cgroups_clear(&pc);
                if (held)
                        return pid;
                if (self_only || pid == 1)
                        break;
                if (tr_proc_ppid(pid, &pid) < 0)
                        break; /* an ancestor that exited meanwhile ends the chain */
        }
        return 0;
}

int tr_cg_check_may_act(tr_cgroup *cg, const char *op, bool destroy, tr_error *err)
{
        if (!(cg->flags & TR_CG_MAY_ACT) && !(destroy && (cg->flags & TR_CG_OWNED)))
                return tr_error_set(err, EPERM, "%s: cgroup handle was not created or handed to us", op);
        for (int i = 0; i < cg->hs->n; i++)
                if (cg->path[i] && tr_cgroup_is_root(&cg->hs->h[i], cg->path[i]))
                        return tr_error_set(err, EPERM, "%s: %s:%s is a hierarchy root", op,
                                            cg->hs->h[i].mount_point, cg->path[i]);
        int r = tr_cg_open_all(cg, op, err);
        if (r < 0)
                return r;
        /* destroy only rmdirs (a cgroup holding a process cannot be removed anyway): the
         * caller alone is checked there */
        pid_t holder = holds_self_or_ancestor(cg, destroy);
        if (holder == getpid())
                return tr_error_set(err, EPERM, "%s: the cgroup holds this process", op);
        if (holder > 0)
                return tr_error_set(err, EPERM, "%s: the cgroup holds pid %d, an ancestor of this process", op,
                                    (int) holder);
        return 0;
}

