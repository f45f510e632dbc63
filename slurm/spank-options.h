/* spank-options.h - the plugin's arguments on its plugstack.conf line:
 *   socket=PATH         procd's socket (default PROCD_DEFAULT_SOCKET)
 *   accounting=PATH     append one JSON line per step to PATH (default: none)
 *   unreachable=refuse  a step whose node cannot reach procd is refused (default)
 *   unreachable=allow   it runs untracked, with a warning in slurmd's log
 *   interval=SEC        procd's snapshot interval for the step's /proc fallback (default 5) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ps_options {
        char socket[256];
        char accounting[256]; /* "" = no accounting file */
        bool allow_unreachable;
        uint32_t interval_sec;
} ps_options;

/* Parse argv (the words after the plugin's path); 0, or -EINVAL with why in err. */
int ps_options_parse(ps_options *o, int argc, char *const argv[], char *err, size_t err_size);
