/* options.c - procd's options from the configuration file and the command line.
 *
 * One table names every option; a key in the file is the long option's name.  Both
 * sources go through the same setter, so a value means the same wherever it is written. */
#include "procd/options.h"

#include <errno.h>
#include <getopt.h>
#include <glib.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procd/wire.h"
#include "procd/core/command.h"
#include "procd/dbus/dbus-server.h"
#include "procd/version.h"
#include "trackers/util.h"

#ifndef PROCD_CONFIG_FILE
#define PROCD_CONFIG_FILE "/etc/procd/procd.conf"
#endif
#define PD_CONFIG_GROUP "procd"

enum { OPT_CONFIG = 1000, OPT_VERSION, OPT_CLASSIC_CGROUP_BASE, OPT_FAMILY_CGROUP_BASE_DEFAULT };

static const struct option longopts[] = {
        { "socket", required_argument, NULL, 's' },
        { "group", required_argument, NULL, 'g' },
        { "root-pid", required_argument, NULL, 'r' },
        { "gid-range", required_argument, NULL, 'G' },
        { "snapshot-interval", required_argument, NULL, 'i' },
        { "kill-timeout", required_argument, NULL, 'k' },
        { "freeze-timeout", required_argument, NULL, 'F' },
        { "log", required_argument, NULL, 'l' },
        { "max-connections-per-uid", required_argument, NULL, 'C' },
        { "evict-idle-after", required_argument, NULL, 'E' },
        { "foreground", no_argument, NULL, 'f' },
        { "family-cgroup-base", required_argument, NULL, 'B' },
        { "no-family-cgroups", no_argument, NULL, 'N' },
        { "state-file", required_argument, NULL, 'S' },
        { "classic-cgroup-base", required_argument, NULL, OPT_CLASSIC_CGROUP_BASE },
        { "metrics-textfile", required_argument, NULL, 'M' },
        { "metrics-interval", required_argument, NULL, 'T' },
        { "pidfile", required_argument, NULL, 'P' },
        /* command line only (not keys of the file) */
        { "ready-fd", required_argument, NULL, 'R' },
        { "family-cgroup-base-default", required_argument, NULL, OPT_FAMILY_CGROUP_BASE_DEFAULT },
        { "config", required_argument, NULL, OPT_CONFIG },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, OPT_VERSION },
        { 0 },
};
#define N_FILE_KEYS 18 /* the first entries of longopts */

static void usage(FILE *f)
{
        fprintf(f, "usage: procd [--config FILE] [--socket PATH] [--group GROUP] [--root-pid PID]\n"
                   "             [--gid-range MIN-MAX] [--snapshot-interval SEC] [--kill-timeout SEC]\n"
                   "             [--freeze-timeout SEC] [--log stderr|syslog|journal] [--max-connections-per-uid N]\n"
                   "             [--evict-idle-after SEC] [--foreground] [--family-cgroup-base CGROUP | --no-family-cgroups]\n"
                   "             [--state-file PATH] [--classic-cgroup-base CGROUP] [--metrics-textfile PATH]\n"
                   "             [--metrics-interval SEC] [--pidfile PATH] [--ready-fd N] [--version]\n"
                   "  --config FILE           key file with a [procd] group (default " PROCD_CONFIG_FILE
                   ",\n"
                   "                          read when it exists); options given here override it\n"
                   "  --socket PATH           D-Bus peer-to-peer socket (default " PROCD_DEFAULT_SOCKET ")\n"
                   "  --group GROUP           group of the socket (mode 0660)\n"
                   "  --root-pid PID          root of the root family (default: procd's parent)\n"
                   "  --gid-range MIN-MAX     gids for TrackFamilyViaAllocatedGroup\n"
                   "  --snapshot-interval S   max age of the root family's /proc data (default 60)\n"
                   "  --kill-timeout S        KillFamily gives up (Unkillable) after S seconds (default 10)\n"
                   "  --freeze-timeout S      Suspend/ContinueFamily answer after at most S seconds even when\n"
                   "                          a member has not stopped yet (default 2)\n"
                   "  --log stderr|syslog|journal\n"
                   "                          where log messages go (default: stderr with --foreground,\n"
                   "                          the journal when that stderr is a journal stream;\n"
                   "                          syslog when procd detaches)\n"
                   "  --max-connections-per-uid N\n"
                   "                          connections one non-root uid may hold (1..%d, default %d;\n"
                   "                          non-root uids share %d, the last %d are root's)\n"
                   "  --evict-idle-after S    when the connections are full, one idle for S seconds or\n"
                   "                          more gives way to a new one (default %d)\n"
                   "  --family-cgroup-base CGROUP\n"
                   "                          where each registered family gets a cgroup of its own\n"
                   "                          (default: <procd's own cgroup>/" PD_FAMCG_DEFAULT_SUBTREE ")\n"
                   "  --family-cgroup-base-default CGROUP\n"
                   "                          the base when no --family-cgroup-base, key or\n"
                   "                          " PD_ENV_FAMILY_CGROUP_BASE " names one (the systemd unit:\n"
                   "                          procd-families.service's cgroup, outside procd's own)\n"
                   "  --no-family-cgroups     families get no cgroup unless a client names one\n"
                   "  --state-file PATH       registered families, kept across restarts (default: beside\n"
                   "                          the socket, named after it (procd.sock -> procd.state);\n"
                   "                          with -A ADDRESS, ADDRESS.state; \"\" keeps none)\n"
                   "  --classic-cgroup-base CGROUP\n"
                   "                          condor_procd's TRACK_FAMILY_VIA_CGROUP (-A) may also name\n"
                   "                          cgroups below this one (default: only below the family base)\n"
                   "  --metrics-textfile PATH write procd's metrics (Prometheus text, as `procctl metrics`)\n"
                   "                          to PATH every --metrics-interval seconds, atomically, for\n"
                   "                          node-exporter's textfile collector (PATH ends in .prom)\n"
                   "  --metrics-interval S    seconds between two writes of the textfile (default 30)\n"
                   "  --pidfile PATH          write procd's pid to PATH once listening (removed at exit)\n"
                   "  --foreground            do not detach\n"
                   "  --ready-fd N            close fd N once listening\n"
                   "  --version               print the version and exit\n",
                PD_DBUS_MAX_CONNECTIONS, PD_DBUS_DEFAULT_MAX_CONNECTIONS_PER_UID,
                PD_DBUS_MAX_CONNECTIONS - PD_DBUS_ROOT_RESERVED_CONNECTIONS, PD_DBUS_ROOT_RESERVED_CONNECTIONS,
                PD_ADMISSION_EVICT_MIN_IDLE_SEC);
}

static const struct option *find_option(int code)
{
        for (const struct option *lo = longopts; lo->name; lo++)
                if (lo->val == code)
                        return lo;
        return NULL;
}

/* where: "" for the command line, "FILE: " for the configuration file */
static int bad(const char *where, int code, const char *value, const char *hint)
{
        const struct option *lo = find_option(code);
        fprintf(stderr, "procd: %s%s%s: bad value '%s'%s%s\n", where, *where ? "" : "--", lo ? lo->name : "?", value,
                hint ? ": " : "", hint ? hint : "");
        return -EINVAL;
}

static int parse_bool(const char *s, bool *out)
{
        static const char *const yes[] = { "true", "yes", "1", "on" }, *const no[] = { "false", "no", "0", "off" };
        for (size_t i = 0; i < 4; i++) {
                if (strcasecmp(s, yes[i]) == 0)
                        return *out = true, 0;
                if (strcasecmp(s, no[i]) == 0)
                        return *out = false, 0;
        }
        return -EINVAL;
}

/* A number of seconds in 1..max into *out. */
static int seconds(const char *where, int code, const char *v, uint32_t max, uint32_t *out)
{
        uint64_t n;
        char hint[32];
        snprintf(hint, sizeof hint, "1..%u seconds", (unsigned) max);
        if (tr_parse_u64(v, &n) < 0 || n == 0 || n > max)
                return bad(where, code, v, hint);
        *out = (uint32_t) n;
        return 0;
}

static int set_option(pd_options *o, int code, const char *v, const char *where)
{
        uint64_t n;
        switch (code) {
        case 's':
                if (!*v || strlen(v) >= sizeof o->socket_path)
                        return bad(where, code, v, "empty or too long");
                snprintf(o->socket_path, sizeof o->socket_path, "%s", v);
                o->socket_given = true;
                return 0;
        case 'g': {
                struct group *gr = getgrnam(v);
                if (gr)
                        o->group = gr->gr_gid;
                else if (tr_parse_u64(v, &n) == 0 && n < UINT32_MAX)
                        o->group = (gid_t) n;
                else
                        return bad(where, code, v, "no such group");
                return 0;
        }
        case 'r':
                return tr_parse_pid(v, &o->root_pid) < 0 ? bad(where, code, v, NULL) : 0;
        case 'G': {
                unsigned long a, b;
                char tail;
                if (sscanf(v, "%lu-%lu%c", &a, &b, &tail) != 2 || a == 0 || b < a || b >= UINT32_MAX)
                        return bad(where, code, v, "MIN-MAX, 0 < MIN <= MAX");
                o->gid_min = (gid_t) a;
                o->gid_max = (gid_t) b;
                return 0;
        }
        case 'i':
                return seconds(where, code, v, PD_MAX_INTERVAL_SEC, &o->snapshot_interval);
        case 'k':
                return seconds(where, code, v, 3600, &o->kill_timeout);
        case 'F':
                return seconds(where, code, v, 3600, &o->freeze_timeout);
        case 'l':
                if (strcmp(v, "syslog") != 0 && strcmp(v, "stderr") != 0 && strcmp(v, "journal") != 0)
                        return bad(where, code, v, "stderr, syslog or journal");
                o->syslog = strcmp(v, "syslog") == 0;
                o->log_given = true;
                o->journal = strcmp(v, "journal") == 0;
                return 0;
        case 'C':
                if (tr_parse_u64(v, &n) < 0 || n == 0 || n > PD_DBUS_MAX_CONNECTIONS)
                        return bad(where, code, v, "1..256");
                o->max_conns_per_uid = (unsigned) n;
                return 0;
        case 'E':
                return seconds(where, code, v, 86400, &o->evict_idle_sec);
        case 'f':
                return parse_bool(v, &o->foreground) < 0 ? bad(where, code, v, "true or false") : 0;
        case 'B':
                if (v[0] != '/' || v[strspn(v, "/")] == '\0' || strlen(v) >= sizeof o->famcg_base)
                        return bad(where, code, v, "an absolute cgroup path, not /");
                snprintf(o->famcg_base, sizeof o->famcg_base, "%s", v);
                o->famcg.base = o->famcg_base;
                return 0;
        case OPT_CLASSIC_CGROUP_BASE:
                if (v[0] != '/' || v[strspn(v, "/")] == '\0' || strlen(v) >= sizeof o->classic_cgroup_base)
                        return bad(where, code, v, "an absolute cgroup path, not /");
                snprintf(o->classic_cgroup_base, sizeof o->classic_cgroup_base, "%s", v);
                return 0;
        case 'N':
                return parse_bool(v, &o->famcg.disabled) < 0 ? bad(where, code, v, "true or false") : 0;
        case 'S':
                if (strlen(v) >= sizeof o->state_file || (*v && v[0] != '/'))
                        return bad(where, code, v, "an absolute path, or empty for none");
                snprintf(o->state_file, sizeof o->state_file, "%s", v);
                o->state_file_given = true;
                return 0;
        case 'M':
        case 'P': {
                char *dst = code == 'M' ? o->metrics_textfile : o->pidfile;
                if (strlen(v) >= sizeof o->pidfile || (*v && v[0] != '/'))
                        return bad(where, code, v, "an absolute path, or empty for none");
                snprintf(dst, sizeof o->pidfile, "%s", v);
                return 0;
        }
        case 'T':
                return seconds(where, code, v, 86400, &o->metrics_interval);
        case OPT_FAMILY_CGROUP_BASE_DEFAULT:
                if (v[0] != '/' || v[strspn(v, "/")] == '\0' || strlen(v) >= sizeof o->famcg_base_default)
                        return bad(where, code, v, "an absolute cgroup path, not /");
                snprintf(o->famcg_base_default, sizeof o->famcg_base_default, "%s", v);
                return 0;
        case 'R':
                if (tr_parse_u64(v, &n) < 0 || n < 3 || n > INT32_MAX)
                        return bad(where, code, v, NULL);
                o->ready_fd = (int) n;
                return 0;
        }
        return -EINVAL;
}

/* Keys of the file condor_procd's mode leaves out: its command line names these. */
static bool classic_ignores(int code) { return code == 's' || code == 'r' || code == 'l' || code == 'S'; }

static void note_ignored(pd_options *o, const char *key)
{
        size_t n = strlen(o->file_ignored);
        snprintf(o->file_ignored + n, sizeof o->file_ignored - n, "%s%s", n ? ", " : "", key);
}

static int load_file(pd_options *o, const char *path, bool must_exist, bool classic)
{
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_autoptr(GError) gerr = NULL;
        if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &gerr)) {
                if (!must_exist && g_error_matches(gerr, G_FILE_ERROR, G_FILE_ERROR_NOENT))
                        return 0;
                fprintf(stderr, "procd: %s: %s\n", path, gerr->message);
                return -EINVAL;
        }
        snprintf(o->config_path, sizeof o->config_path, "%s", path);
        char where[PATH_MAX + 16];
        gsize n_groups = 0;
        g_auto(GStrv) groups = g_key_file_get_groups(kf, &n_groups);
        for (gsize g = 0; g < n_groups; g++) {
                if (strcmp(groups[g], PD_CONFIG_GROUP) != 0) {
                        fprintf(stderr, "procd: %s: unknown group [%s] (only [" PD_CONFIG_GROUP "])\n", path, groups[g]);
                        return -EINVAL;
                }
                gsize n_keys = 0;
                g_auto(GStrv) keys = g_key_file_get_keys(kf, groups[g], &n_keys, NULL);
                for (gsize k = 0; k < n_keys; k++) {
                        int code = 0;
                        for (size_t i = 0; i < N_FILE_KEYS; i++)
                                if (strcmp(longopts[i].name, keys[k]) == 0)
                                        code = longopts[i].val;
                        if (!code) {
                                fprintf(stderr, "procd: %s: unknown key '%s' in [" PD_CONFIG_GROUP "]\n", path, keys[k]);
                                return -EINVAL;
                        }
                        if (classic && classic_ignores(code)) {
                                note_ignored(o, keys[k]);
                                continue;
                        }
                        g_autofree char *value = g_key_file_get_string(kf, groups[g], keys[k], &gerr);
                        if (!value) {
                                fprintf(stderr, "procd: %s: %s: %s\n", path, keys[k], gerr->message);
                                return -EINVAL;
                        }
                        snprintf(where, sizeof where, "%s: ", path);
                        if (set_option(o, code, value, where) < 0)
                                return -EINVAL;
                }
        }
        return 0;
}

/* The family cgroup settings from the environment (over the file, under the command line):
 * condor_master starts procd with a fixed argv and no file. */
static int load_env(pd_options *o)
{
        const char *v = getenv(PD_ENV_FAMILY_CGROUPS);
        bool on;
        if (v && *v) {
                if (parse_bool(v, &on) < 0) {
                        fprintf(stderr, "procd: " PD_ENV_FAMILY_CGROUPS ": bad value '%s': on or off\n", v);
                        return -EINVAL;
                }
                o->famcg.disabled = !on;
        }
        v = getenv(PD_ENV_FAMILY_CGROUP_BASE);
        if (v && *v && set_option(o, 'B', v, PD_ENV_FAMILY_CGROUP_BASE ": ") < 0)
                return -EINVAL;
        return 0;
}

int pd_options_parse(int argc, char **argv, bool classic, pd_options *o)
{
        *o = (pd_options) { .group = (gid_t) -1, .snapshot_interval = 60, .kill_timeout = 10,
                            .freeze_timeout = 2, .ready_fd = -1, .metrics_interval = 30,
                            .max_conns_per_uid = PD_DBUS_DEFAULT_MAX_CONNECTIONS_PER_UID,
                            .evict_idle_sec = PD_ADMISSION_EVICT_MIN_IDLE_SEC, .gid_max = 0, .gid_min = 1 };
        snprintf(o->socket_path, sizeof o->socket_path, "%s", PROCD_DEFAULT_SOCKET);

        /* the command line first, kept aside: it is applied after the file */
        g_autofree int *codes = g_new0(int, (gsize) argc + 1);
        g_autofree const char **values = g_new0(const char *, (gsize) argc + 1);
        size_t n = 0;
        const char *config = NULL;
        int c;
        optind = 0; /* glibc: re-initialise, parse may run more than once (tests) */
        while ((c = getopt_long(argc, argv, "s:g:r:G:i:k:l:fR:hV", longopts, NULL)) != -1) {
                switch (c) {
                case 'h':
                        usage(stdout);
                        return 1;
                case 'V':
                case OPT_VERSION:
                        printf("procd %s\n", PROCD_VERSION);
                        return 1;
                case OPT_CONFIG:
                        config = optarg;
                        break;
                case '?':
                case ':':
                        usage(stderr);
                        return -EINVAL;
                default:
                        codes[n] = c;
                        values[n++] = optarg ? optarg : "true";
                }
        }
        if (optind < argc) {
                fprintf(stderr, "procd: unexpected argument: %s\n", argv[optind]);
                return -EINVAL;
        }
        if (load_file(o, config ? config : PROCD_CONFIG_FILE, config != NULL, classic) < 0)
                return -EINVAL;
        if (load_env(o) < 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (set_option(o, codes[i], values[i], "") < 0)
                        return -EINVAL;
        /* the lowest rank: only where nothing above named a base */
        if (!o->famcg.base && o->famcg_base_default[0]) {
                snprintf(o->famcg_base, sizeof o->famcg_base, "%s", o->famcg_base_default);
                o->famcg.base = o->famcg_base;
        }
        return 0;
}
