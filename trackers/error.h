/* error.h - the error object every fallible trackers/ function fills.
 *
 * Convention (as in crun's libcrun): a fallible function returns a negative errno
 * value on failure and, when the caller passed a non-NULL tr_error, fills it with the
 * positive errno and a human-readable message.  Success is >= 0.
 */
#pragma once

#include <stddef.h>

typedef struct tr_error {
        int code;      /* positive errno of the failure, 0 when unset */
        char msg[512]; /* what failed, with the file or pid involved */
} tr_error;

/* Fill err (may be NULL) and return -errnum.  errnum must be > 0. */
int tr_error_set(tr_error *err, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Same, appending ": strerror(errnum)" to the message. */
int tr_error_setx(tr_error *err, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prepend context ("opening family 42: ") to an error already set; returns -err->code. */
int tr_error_prefix(tr_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void tr_error_clear(tr_error *err);
