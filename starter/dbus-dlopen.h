/* dbus-dlopen.h - libdbus-1 opened on first use in procd-starter (see dbus-dlopen.c). */
#pragma once

#include "trackers/error.h"

/* Open libdbus-1 and resolve what the starter calls; 0, or -ENOENT with err saying what is
 * missing.  Idempotent. */
int st_dbus_load(tr_error *err);
