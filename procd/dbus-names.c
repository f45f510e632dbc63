/* dbus-names.c - procd_status <-> org.procd.Error.* names (the D-Bus transport's error
 * names, used by the daemon's D-Bus adapter and by the client library). */
#include <string.h>

#include "procd/client.h"

#define PD_ERROR_PREFIX "org.procd.Error."

static const char *const dbus_names[PROCD_STATUS_COUNT] = {
        [PROCD_OK] = NULL,
        [PROCD_E_BAD_ROOT_PID] = PD_ERROR_PREFIX "BadRootPid",
        [PROCD_E_BAD_WATCHER_PID] = PD_ERROR_PREFIX "BadWatcherPid",
        [PROCD_E_BAD_INTERVAL] = PD_ERROR_PREFIX "BadInterval",
        [PROCD_E_ALREADY_REGISTERED] = PD_ERROR_PREFIX "AlreadyRegistered",
        [PROCD_E_FAMILY_NOT_FOUND] = PD_ERROR_PREFIX "FamilyNotFound",
        [PROCD_E_PROCESS_NOT_FOUND] = PD_ERROR_PREFIX "ProcessNotFound",
        [PROCD_E_NOT_IN_FAMILY] = PD_ERROR_PREFIX "NotInFamily",
        [PROCD_E_ROOT_FAMILY] = PD_ERROR_PREFIX "RootFamily",
        [PROCD_E_BAD_CGROUP] = PD_ERROR_PREFIX "BadCgroup",
        [PROCD_E_NO_GID] = PD_ERROR_PREFIX "NoGidAvailable",
        [PROCD_E_PERMISSION] = PD_ERROR_PREFIX "PermissionDenied",
        [PROCD_E_BAD_ARGUMENT] = PD_ERROR_PREFIX "BadArgument",
        [PROCD_E_UNKILLABLE] = PD_ERROR_PREFIX "Unkillable",
        [PROCD_E_INTERNAL] = PD_ERROR_PREFIX "Internal",
        [PROCD_E_TRANSPORT] = PD_ERROR_PREFIX "Transport",
};

const char *procd_status_dbus_name(procd_status s)
{
        if ((unsigned) s >= PROCD_STATUS_COUNT || s == PROCD_OK)
                return dbus_names[PROCD_E_INTERNAL];
        return dbus_names[s];
}

procd_status procd_status_from_dbus_name(const char *name)
{
        if (!name)
                return PROCD_E_TRANSPORT;
        for (int s = 1; s < PROCD_STATUS_COUNT; s++)
                if (strcmp(dbus_names[s], name) == 0)
                        return (procd_status) s;
        /* org.freedesktop.DBus.Error.* (unknown method, invalid args, no reply...):
         * InvalidArgs/UnknownMethod are the caller's fault, the rest is transport */
        if (strcmp(name, "org.freedesktop.DBus.Error.InvalidArgs") == 0 ||
            strcmp(name, "org.freedesktop.DBus.Error.UnknownMethod") == 0)
                return PROCD_E_BAD_ARGUMENT;
        if (strcmp(name, "org.freedesktop.DBus.Error.AccessDenied") == 0)
                return PROCD_E_PERMISSION;
        if (strncmp(name, PD_ERROR_PREFIX, strlen(PD_ERROR_PREFIX)) == 0)
                return PROCD_E_INTERNAL;
        return PROCD_E_TRANSPORT;
}
