/* classic-args.c - condor_procd's command line. */
#include "classic-args.h"

#include <errno.h>
#include <glib.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pd_classic_args_usage(FILE *f)
{
        fprintf(f, "usage: condor_procd -A ADDRESS [-C UID] [-L LOGFILE|SYSLOG] [-R MAXLOGBYTES] [-S MAXSNAPSHOT]\n"
                   "                    [-P PID] [-G MINGID MAXGID [-E]] [-D]  (plus procd's --long options)\n");
}

static bool parse_i64(const char *s, int64_t *out)
{
        char *end = NULL;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || *end)
                return false;
        *out = v;
        return true;
}

static bool is_classic_option(const char *a) { return a[0] == '-' && a[1] && a[1] != '-'; }

int pd_classic_args_parse(int argc, char **argv, pd_classic_args *o, char *why, size_t size)
{
        *o = (pd_classic_args) { .interval_sec = 60 };
        const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
        base = base ? base + 1 : (argc > 0 && argv[0] ? argv[0] : "");
        o->classic = strcmp(base, "condor_procd") == 0;
        for (int i = 1; i < argc; i++)
                if (is_classic_option(argv[i]) && argv[i][1] == 'A')
                        o->classic = true;
        o->argv = g_new0(char *, argc + 1);
        o->argc = 0;
        if (argc > 0)
                o->argv[o->argc++] = argv[0];
        if (!o->classic) {
                for (int i = 1; i < argc; i++)
                        o->argv[o->argc++] = argv[i];
                return 0;
        }
#define NEED(n)                                                                                                  \
        do {                                                                                                     \
                if (i + (n) >= argc) {                                                                           \
                        snprintf(why, size, "option %s needs %d argument(s)", argv[i], (n));                    \
                        return -EINVAL;                                                                          \
                }                                                                                                \
        } while (0)
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (!is_classic_option(a)) {
                        o->argv[o->argc++] = argv[i]; /* a --long option or its value */
                        continue;
                }
                int64_t v = 0, w = 0;
                switch (a[1]) {
                case 'A':
                        NEED(1);
                        o->address = argv[++i];
                        break;
                case 'C': {
                        NEED(1);
                        const char *u = argv[++i];
                        struct passwd *pw;
                        if (parse_i64(u, &v) && v >= 0 && v < (int64_t) UINT32_MAX)
                                o->principal = (uid_t) v;
                        else if ((pw = getpwnam(u)))
                                o->principal = pw->pw_uid;
                        else {
                                snprintf(why, size, "-C: no such uid: %s", u);
                                return -EINVAL;
                        }
                        o->principal_set = true;
                        break;
                }
                case 'L':
                        NEED(1);
                        o->log = argv[++i];
                        break;
                case 'R':
                        NEED(1);
                        if (!parse_i64(argv[++i], &v)) {
                                snprintf(why, size, "-R: bad size: %s", argv[i]);
                                return -EINVAL;
                        }
                        o->log_max_bytes = v <= 0 ? 0 : v < 65536 ? 65536 : (uint64_t) v;
                        break;
                case 'S':
                        NEED(1);
                        if (!parse_i64(argv[++i], &v) || v < -1) {
                                snprintf(why, size, "-S: bad maximum snapshot interval: %s", argv[i]);
                                return -EINVAL;
                        }
                        o->interval_sec = v;
                        break;
                case 'P':
                        NEED(1);
                        if (!parse_i64(argv[++i], &v) || v <= 1 || v > INT32_MAX) {
                                snprintf(why, size, "-P: bad root pid: %s", argv[i]);
                                return -EINVAL;
                        }
                        o->root_pid = (pid_t) v;
                        break;
                case 'G':
                        NEED(2);
                        if (!parse_i64(argv[i + 1], &v) || !parse_i64(argv[i + 2], &w) || v <= 0 || w < v ||
                            w >= (int64_t) UINT32_MAX) {
                                snprintf(why, size, "-G: bad gid range: %s %s", argv[i + 1], argv[i + 2]);
                                return -EINVAL;
                        }
                        i += 2;
                        o->gid_tracking = true;
                        o->gid_min = (gid_t) v;
                        o->gid_max = (gid_t) w;
                        break;
                case 'E':
                        o->gid_external = true;
                        break;
                case 'D':
                        o->debug_wait = true;
                        break;
                default:
                        snprintf(why, size, "illegal option: %s", a);
                        return -EINVAL;
                }
        }
#undef NEED
        if (!o->address) {
                snprintf(why, size, "the -A option is required");
                return -EINVAL;
        }
        if (o->gid_external && !o->gid_tracking) {
                snprintf(why, size, "-E needs -G");
                return -EINVAL;
        }
        return 0;
}
