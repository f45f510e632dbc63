/* status.h - helpers around procd_status shared by the daemon and the client library. */
#pragma once

#include "procd/types.h"

/* Fill err (may be NULL) with s and a message; returns s. */
procd_status pd_error_set(procd_error *err, procd_status s, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Short human name of a status ("BadRootPid"). */
const char *pd_status_name(procd_status s);
