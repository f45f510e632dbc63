/* status.c - procd_status names and the error object: no transport in here. */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[PROCD_STATUS_COUNT] = {
        [PROCD_OK] = "Ok",
        [PROCD_E_BAD_ROOT_PID] = "BadRootPid",
        [PROCD_E_BAD_WATCHER_PID] = "BadWatcherPid",
        [PROCD_E_BAD_INTERVAL] = "BadInterval",
        [PROCD_E_ALREADY_REGISTERED] = "AlreadyRegistered",
        [PROCD_E_FAMILY_NOT_FOUND] = "FamilyNotFound",
        [PROCD_E_PROCESS_NOT_FOUND] = "ProcessNotFound",
        [PROCD_E_NOT_IN_FAMILY] = "NotInFamily",
        [PROCD_E_ROOT_FAMILY] = "RootFamily",
        [PROCD_E_BAD_CGROUP] = "BadCgroup",
        [PROCD_E_NO_GID] = "NoGidAvailable",
        [PROCD_E_PERMISSION] = "PermissionDenied",
        [PROCD_E_BAD_ARGUMENT] = "BadArgument",
        [PROCD_E_UNKILLABLE] = "Unkillable",
        [PROCD_E_INTERNAL] = "Internal",
        [PROCD_E_TRANSPORT] = "Transport",
};

const char *pd_status_name(procd_status s)
{
        if ((unsigned) s >= PROCD_STATUS_COUNT)
                return "Unknown";
        return names[s];
}

procd_status pd_error_set(procd_error *err, procd_status s, const char *fmt, ...)
{
        if (err) {
                err->status = s;
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err->msg, sizeof err->msg, fmt, ap);
                va_end(ap);
        }
        return s;
}

void procd_family_info_free(procd_family_info *infos, size_t n)
{
        if (!infos)
                return;
        for (size_t i = 0; i < n; i++)
                free(infos[i].members);
        free(infos);
}
