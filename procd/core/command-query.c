/* command-query.c - lookups for transports. */
#include "command-query.h"

#include <string.h>

#include "procd/wire.h"
#include "trackers/tracker.h"

procd_status pd_cmd_family_root(pd_commands *cm, pid_t pid, pid_t *root_out, procd_error *err)
{
        pd_family *f = pid >= 0 ? pd_registry_find(cm->reg, pid) : NULL;
        if (!f)
                return procd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "no family with root pid %d", (int) pid);
        *root_out = f->root_pid;
        return PROCD_OK;
}

const char *pd_family_state_name(const pd_family *f)
{
        return f->flags & PD_FAMILY_KILLING  ? "killing"
               : f->flags & PD_FAMILY_FROZEN ? "frozen"
               : f->flags & PD_FAMILY_KILLED ? "killed"
                                             : "running";
}

procd_status pd_cmd_get_limits(pd_commands *cm, const pd_caller *who, pid_t pid, tr_limits_now *out,
                               procd_error *err)
{
        (void) who;
        memset(out, 0, sizeof *out);
        pd_family *f = pid > 0 ? pd_registry_find(cm->reg, pid) : NULL;
        if (!f)
                return pid == 0 ? PROCD_OK /* the root family: no cgroup of its own */
                                : procd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "no family with root pid %d", (int) pid);
        tr_cgroup *cg = f->tf ? tr_family_cgroup(f->tf) : NULL;
        if (cg)
                tr_cgroup_limits_now(cg, out);
        return PROCD_OK;
}
