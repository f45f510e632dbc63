/* wire.c - the contract's code, linked by the daemon and by the client library alike:
 * status names, their D-Bus error names, the error object.  No transport in here. */
#include "procd/wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHORT_NAME(s, n) [s] = n,
static const char *const names[PROCD_STATUS_COUNT] = { [PROCD_OK] = "Ok", PROCD_STATUS_NAMES(SHORT_NAME) };
#undef SHORT_NAME

const char *procd_status_name(procd_status s)
{
        if ((unsigned) s >= PROCD_STATUS_COUNT)
                return "Unknown";
        return names[s];
}

procd_status procd_error_set(procd_error *err, procd_status s, const char *fmt, ...)
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

/* "org.procd.Error." + the short name, for every status but PROCD_OK */
#define DBUS_NAME(s, n) [s] = PROCD_DBUS_ERROR_PREFIX n,
static const char *const dbus_names[PROCD_STATUS_COUNT] = { PROCD_STATUS_NAMES(DBUS_NAME) };
#undef DBUS_NAME

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
        if (strncmp(name, PROCD_DBUS_ERROR_PREFIX, strlen(PROCD_DBUS_ERROR_PREFIX)) == 0)
                return PROCD_E_INTERNAL;
        return PROCD_E_TRANSPORT;
}
