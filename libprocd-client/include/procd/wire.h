/* wire.h - the contract between procd and its clients: where the daemon listens, the D-Bus
 * interface and object path, and the names of procd's errors on the wire.  The daemon's
 * D-Bus face and the client library both include this header (and types.h); the daemon
 * never includes client.h. */
#pragma once

#include <stdarg.h>

#include "procd/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PROCD_DEFAULT_SOCKET "/run/procd/procd.sock"
#define PROCD_DBUS_INTERFACE "org.procd.ProcFamily1"
#define PROCD_DBUS_PATH "/org/procd/ProcFamily"
#define PROCD_DBUS_ERROR_PREFIX "org.procd.Error."

/* Short name of a status ("BadRootPid"); the D-Bus error is PROCD_DBUS_ERROR_PREFIX + it. */
const char *procd_status_name(procd_status s);
/* "org.procd.Error.BadRootPid"; PROCD_OK and out-of-range statuses map to Internal. */
const char *procd_status_dbus_name(procd_status s);
/* The status of a D-Bus error name: org.procd.Error.*, a few org.freedesktop.DBus.Error.*
 * that are the caller's fault (BadArgument, PermissionDenied), else Transport. */
procd_status procd_status_from_dbus_name(const char *name);

/* Fill err (may be NULL) with s and a message; returns s. */
procd_status procd_error_set(procd_error *err, procd_status s, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
