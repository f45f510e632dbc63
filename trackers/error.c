#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>

static int vset(tr_error *err, int errnum, int with_strerror, const char *fmt, va_list ap)
{
        if (errnum <= 0)
                errnum = EINVAL;
        if (err) {
                err->code = errnum;
                int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
                if (with_strerror && n >= 0 && (size_t) n < sizeof err->msg)
                        snprintf(err->msg + n, sizeof err->msg - (size_t) n, ": %s", strerror(errnum));
        }
        return -errnum;
}

int tr_error_set(tr_error *err, int errnum, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = vset(err, errnum, 0, fmt, ap);
        va_end(ap);
        return r;
}

int tr_error_setx(tr_error *err, int errnum, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = vset(err, errnum, 1, fmt, ap);
        va_end(ap);
        return r;
}

int tr_error_prefix(tr_error *err, const char *fmt, ...)
{
        if (!err)
                return -EINVAL;
        char prefix[256], old[sizeof err->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
        memcpy(old, err->msg, sizeof old);
        snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old);
        return -(err->code > 0 ? err->code : EINVAL);
}

void tr_error_clear(tr_error *err)
{
        if (err) {
                err->code = 0;
                err->msg[0] = '\0';
        }
}
