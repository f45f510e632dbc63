/* command-query.c - lookups for transports. */
#include "command-query.h"

#include "procd/wire.h"

procd_status pd_cmd_family_root(pd_commands *cm, pid_t pid, pid_t *root_out, procd_error *err)
{
        pd_family *f = pid >= 0 ? pd_registry_find(cm->reg, pid) : NULL;
        if (!f)
                return procd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "no family with root pid %d", (int) pid);
        *root_out = f->root_pid;
        return PROCD_OK;
}
