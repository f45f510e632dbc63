#include "spank-options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procd/client.h"

/* Copy value into dst (an absolute path); -EINVAL when it is not one or does not fit. */
static int option_path(char *dst, size_t size, const char *key, const char *value, char *err, size_t err_size)
{
        if (value[0] != '/' || strlen(value) >= size) {
                snprintf(err, err_size, "%s=%s: an absolute path shorter than %zu bytes is needed", key, value, size);
                return -EINVAL;
        }
        strcpy(dst, value);
        return 0;
}

static int option_one(ps_options *o, const char *arg, char *err, size_t err_size)
{
        const char *eq = strchr(arg, '=');
        if (!eq) {
                snprintf(err, err_size, "'%s': options are KEY=VALUE (socket, accounting, unreachable, interval)", arg);
                return -EINVAL;
        }
        size_t klen = (size_t) (eq - arg);
        const char *value = eq + 1;
        if (klen == 6 && strncmp(arg, "socket", klen) == 0)
                return option_path(o->socket, sizeof o->socket, "socket", value, err, err_size);
        if (klen == 10 && strncmp(arg, "accounting", klen) == 0)
                return option_path(o->accounting, sizeof o->accounting, "accounting", value, err, err_size);
        if (klen == 11 && strncmp(arg, "unreachable", klen) == 0) {
                if (strcmp(value, "refuse") == 0 || strcmp(value, "allow") == 0) {
                        o->allow_unreachable = strcmp(value, "allow") == 0;
                        return 0;
                }
                snprintf(err, err_size, "unreachable=%s: refuse or allow", value);
                return -EINVAL;
        }
        if (klen == 8 && strncmp(arg, "interval", klen) == 0) {
                char *end = NULL;
                unsigned long v = strtoul(value, &end, 10);
                if (*value && end && !*end && v >= 1 && v <= 3600) {
                        o->interval_sec = (uint32_t) v;
                        return 0;
                }
                snprintf(err, err_size, "interval=%s: seconds, 1..3600", value);
                return -EINVAL;
        }
        snprintf(err, err_size, "unknown option '%.*s' (socket, accounting, unreachable, interval)", (int) klen, arg);
        return -EINVAL;
}

int ps_options_parse(ps_options *o, int argc, char *const argv[], char *err, size_t err_size)
{
        memset(o, 0, sizeof *o);
        snprintf(o->socket, sizeof o->socket, "%s", PROCD_DEFAULT_SOCKET);
        o->interval_sec = 5;
        for (int i = 0; i < argc; i++) {
                int r = option_one(o, argv[i], err, err_size);
                if (r < 0)
                        return r;
        }
        return 0;
}
