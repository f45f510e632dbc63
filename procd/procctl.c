/* procctl - command-line client of procd.
 *
 * procctl [--socket PATH] [--json] COMMAND [ARGS]
 * Exit status: 0 success, 1 procd answered with an error (message on stderr), 2 usage
 * error or no daemon.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procd/client.h"
#include "procd/status.h"
#include "trackers/util.h"

#define EXIT_DAEMON_ERROR 1
#define EXIT_USAGE 2

typedef struct ctl {
        const char *socket_path;
        bool json;
        procd_client *client;
} ctl;

static void usage(FILE *f)
{
        fputs("usage: procctl [--socket PATH] [--json] COMMAND [ARGS]\n"
              "commands:\n"
              "  register ROOT [--watcher PID] [--interval S]   register a subfamily\n"
              "  track-cgroup ROOT CGROUP                       track via a cgroup (/jobs/job_42)\n"
              "  track-env ROOT NAME=VALUE                      track via an environment marker\n"
              "  track-login ROOT LOGIN                         track every process of a user\n"
              "  track-gid ROOT [GID]                           track via a supplementary group\n"
              "                                                 (allocated from --gid-range without GID)\n"
              "  usage [PID]                                    usage of a family (0/none: root family)\n"
              "  signal PID SIGNAL                              signal a process of a family (TERM, 15...)\n"
              "  suspend PID | continue PID | kill PID          act on a family and its subfamilies\n"
              "  unregister PID                                 forget a family (members fold into parent)\n"
              "  snapshot                                       take a /proc snapshot now\n"
              "  dump [PID]                                     families with their members\n"
              "  list [PID]                                     families, one line each\n"
              "  quit                                           stop procd\n"
              "options:\n"
              "  --socket PATH   procd's socket (default " PROCD_DEFAULT_SOCKET ")\n"
              "  --json          one JSON object on stdout\n"
              "  --version       print the version and exit\n",
              f);
}

static int usage_error(const char *fmt, const char *arg)
{
        fprintf(stderr, "procctl: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\n(procctl --help for usage)\n");
        return EXIT_USAGE;
}

static int parse_pid_arg(const char *s, pid_t *out, bool zero_ok)
{
        if (zero_ok && strcmp(s, "0") == 0) {
                *out = 0;
                return 0;
        }
        return tr_parse_pid(s, out);
}

static int parse_signal(const char *s, int *out)
{
        uint64_t v;
        if (tr_parse_u64(s, &v) == 0) {
                if (v > (uint64_t) SIGRTMAX)
                        return -EINVAL;
                *out = (int) v;
                return 0;
        }
        if (strncasecmp(s, "SIG", 3) == 0)
                s += 3;
        for (int i = 1; i < SIGRTMIN; i++) {
                const char *abbr = sigabbrev_np(i);
                if (abbr && strcasecmp(abbr, s) == 0) {
                        *out = i;
                        return 0;
                }
        }
        int off;
        if (strncasecmp(s, "RTMIN", 5) == 0) {
                off = s[5] == '\0' ? 0 : (s[5] == '+' ? atoi(s + 6) : -1);
                if (off >= 0 && SIGRTMIN + off <= SIGRTMAX) {
                        *out = SIGRTMIN + off;
                        return 0;
                }
        }
        return -EINVAL;
}

static int daemon_error(const procd_error *e)
{
        fprintf(stderr, "procctl: %s: %s\n", pd_status_name(e->status), e->msg);
        return e->status == PROCD_E_TRANSPORT ? EXIT_USAGE : EXIT_DAEMON_ERROR;
}

static int ok(ctl *c)
{
        if (c->json)
                printf("{\"ok\": true}\n");
        return 0;
}

static void human_size(uint64_t v, char *buf, size_t size)
{
        const char *units = "KMGT";
        double d = (double) v;
        int u = -1;
        while (d >= 1024 && u < 3) {
                d /= 1024;
                u++;
        }
        if (u < 0)
                snprintf(buf, size, "%llu", (unsigned long long) v);
        else
                snprintf(buf, size, "%.1f%c", d, units[u]);
}

static void print_usage_human(pid_t pid, const tr_usage *u)
{
        char src[64];
        printf("family %d\n", (int) pid);
        printf("  %-22s %s\n", "source", tr_usage_source_name(u, src, sizeof src));
        if (u->fallback)
                printf("  %-22s %s\n", "fallback", u->fallback_reason);
        for (size_t i = 0; i < tr_usage_field_count(); i++) {
                const tr_u64 *v = tr_usage_field(u, i);
                const char *name = tr_usage_field_name(i);
                if (!v->available)
                        continue;
                char extra[64] = "";
                size_t len = strlen(name);
                if (len > 6 && strcmp(name + len - 6, "_bytes") == 0 && v->value >= 1024) {
                        char hs[32];
                        human_size(v->value, hs, sizeof hs);
                        snprintf(extra, sizeof extra, "  (%s)", hs);
                } else if (len > 5 && strcmp(name + len - 5, "_usec") == 0 && v->value > 0) {
                        snprintf(extra, sizeof extra, "  (%.3f s)", (double) v->value / 1e6);
                }
                printf("  %-22s %llu%s\n", name, (unsigned long long) v->value, extra);
        }
}

static int cmd_usage(ctl *c, int argc, char **argv)
{
        pid_t pid = 0;
        if (argc > 2)
                return usage_error("usage takes at most one PID%s", "");
        if (argc == 2 && parse_pid_arg(argv[1], &pid, true) < 0)
                return usage_error("bad pid: %s", argv[1]);
        tr_usage u;
        procd_error e = { 0 };
        if (procd_get_usage(c->client, pid, &u, &e) != PROCD_OK)
                return daemon_error(&e);
        if (c->json) {
                fputc('{', stdout);
                tr_usage_write_json_members(&u, stdout, false);
                fputs("}\n", stdout);
        } else {
                print_usage_human(pid, &u);
        }
        return 0;
}

static int cmd_register(ctl *c, int argc, char **argv)
{
        pid_t root = 0, watcher = 0;
        uint64_t interval = 60;
        if (argc < 2 || tr_parse_pid(argv[1], &root) < 0)
                return usage_error("register ROOT [--watcher PID] [--interval S]%s", "");
        for (int i = 2; i < argc; i++) {
                if (strcmp(argv[i], "--watcher") == 0 && i + 1 < argc) {
                        if (parse_pid_arg(argv[++i], &watcher, true) < 0)
                                return usage_error("bad watcher pid: %s", argv[i]);
                } else if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc) {
                        if (tr_parse_u64(argv[++i], &interval) < 0 || interval > UINT32_MAX)
                                return usage_error("bad interval: %s", argv[i]);
                } else {
                        return usage_error("register: unexpected argument %s", argv[i]);
                }
        }
        procd_error e = { 0 };
        if (procd_register_subfamily(c->client, root, watcher, (uint32_t) interval, &e) != PROCD_OK)
                return daemon_error(&e);
        return ok(c);
}

static int cmd_track(ctl *c, int argc, char **argv)
{
        const char *cmd = argv[0];
        pid_t root;
        if (argc < 2 || tr_parse_pid(argv[1], &root) < 0)
                return usage_error("%s: ROOT pid expected", cmd);
        procd_error e = { 0 };
        procd_status s;
        if (strcmp(cmd, "track-gid") == 0) {
                if (argc > 3)
                        return usage_error("track-gid ROOT [GID]%s", "");
                gid_t gid = 0;
                if (argc == 3) {
                        uint64_t v;
                        if (tr_parse_u64(argv[2], &v) < 0 || v == 0 || v >= UINT32_MAX)
                                return usage_error("bad gid: %s", argv[2]);
                        gid = (gid_t) v;
                        s = procd_track_via_associated_group(c->client, root, gid, &e);
                } else {
                        s = procd_track_via_allocated_group(c->client, root, &gid, &e);
                }
                if (s != PROCD_OK)
                        return daemon_error(&e);
                if (c->json)
                        printf("{\"ok\": true, \"gid\": %u}\n", (unsigned) gid);
                else
                        printf("family %d tracked via gid %u\n", (int) root, (unsigned) gid);
                return 0;
        }
        if (argc != 3)
                return usage_error("%s ROOT ARG", cmd);
        if (strcmp(cmd, "track-cgroup") == 0)
                s = procd_track_via_cgroup(c->client, root, argv[2], &e);
        else if (strcmp(cmd, "track-env") == 0)
                s = procd_track_via_environment(c->client, root, argv[2], &e);
        else
                s = procd_track_via_login(c->client, root, argv[2], &e);
        if (s != PROCD_OK)
                return daemon_error(&e);
        return ok(c);
}

static int cmd_signal(ctl *c, int argc, char **argv)
{
        pid_t pid;
        int sig;
        if (argc != 3)
                return usage_error("signal PID SIGNAL%s", "");
        if (tr_parse_pid(argv[1], &pid) < 0)
                return usage_error("bad pid: %s", argv[1]);
        if (parse_signal(argv[2], &sig) < 0)
                return usage_error("bad signal: %s", argv[2]);
        procd_error e = { 0 };
        if (procd_signal_process(c->client, pid, sig, &e) != PROCD_OK)
                return daemon_error(&e);
        return ok(c);
}

static int cmd_family_op(ctl *c, int argc, char **argv)
{
        pid_t pid;
        if (argc != 2 || parse_pid_arg(argv[1], &pid, true) < 0)
                return usage_error("%s PID", argv[0]);
        procd_error e = { 0 };
        procd_status s;
        if (strcmp(argv[0], "suspend") == 0)
                s = procd_suspend_family(c->client, pid, &e);
        else if (strcmp(argv[0], "continue") == 0)
                s = procd_continue_family(c->client, pid, &e);
        else if (strcmp(argv[0], "kill") == 0)
                s = procd_kill_family(c->client, pid, &e);
        else
                s = procd_unregister_family(c->client, pid, &e);
        if (s != PROCD_OK)
                return daemon_error(&e);
        return ok(c);
}

static int cmd_simple(ctl *c, int argc, char **argv)
{
        if (argc != 1)
                return usage_error("%s takes no arguments", argv[0]);
        procd_error e = { 0 };
        procd_status s = strcmp(argv[0], "quit") == 0 ? procd_quit(c->client, &e) : procd_snapshot(c->client, &e);
        if (s != PROCD_OK)
                return daemon_error(&e);
        return ok(c);
}

static int cmd_dump(ctl *c, int argc, char **argv)
{
        bool list = strcmp(argv[0], "list") == 0;
        pid_t pid = 0;
        if (argc > 2 || (argc == 2 && parse_pid_arg(argv[1], &pid, true) < 0))
                return usage_error("%s [PID]", argv[0]);
        procd_family_info *infos = NULL;
        size_t n = 0;
        procd_error e = { 0 };
        if (procd_dump(c->client, pid, &infos, &n, &e) != PROCD_OK)
                return daemon_error(&e);
        if (c->json) {
                printf("{\"families\": [");
                for (size_t i = 0; i < n; i++) {
                        const procd_family_info *fi = &infos[i];
                        printf("%s{\"root_pid\": %d, \"root_start_ticks\": %llu, \"watcher_pid\": %d, "
                               "\"parent_root_pid\": %d, \"tracking\": ",
                               i ? ", " : "", (int) fi->root_pid, (unsigned long long) fi->root_start_ticks,
                               (int) fi->watcher_pid, (int) fi->parent_root_pid);
                        tr_json_write_string(stdout, fi->tracking);
                        printf(", \"source\": ");
                        tr_json_write_string(stdout, fi->source);
                        printf(", \"num_members\": %zu", fi->n_members);
                        if (!list) {
                                printf(", \"members\": [");
                                for (size_t j = 0; j < fi->n_members; j++)
                                        printf("%s%d", j ? ", " : "", (int) fi->members[j]);
                                printf("]");
                        }
                        printf("}");
                }
                printf("]}\n");
        } else {
                printf("%-8s %-8s %-8s %-7s %-7s %s\n", "ROOT", "PARENT", "WATCHER", "SOURCE", "PROCS", "TRACKING");
                for (size_t i = 0; i < n; i++) {
                        const procd_family_info *fi = &infos[i];
                        printf("%-8d %-8d %-8d %-7s %-7zu %s\n", (int) fi->root_pid, (int) fi->parent_root_pid,
                               (int) fi->watcher_pid, fi->source, fi->n_members, fi->tracking);
                        if (!list && fi->n_members) {
                                printf("         members:");
                                for (size_t j = 0; j < fi->n_members; j++)
                                        printf(" %d", (int) fi->members[j]);
                                printf("\n");
                        }
                }
        }
        procd_family_info_free(infos, n);
        return 0;
}

static const struct command {
        const char *name;
        int (*fn)(ctl *c, int argc, char **argv);
} commands[] = {
        { "register", cmd_register },   { "track-cgroup", cmd_track }, { "track-env", cmd_track },
        { "track-login", cmd_track },   { "track-gid", cmd_track },    { "usage", cmd_usage },
        { "signal", cmd_signal },       { "suspend", cmd_family_op },  { "continue", cmd_family_op },
        { "kill", cmd_family_op },      { "unregister", cmd_family_op }, { "snapshot", cmd_simple },
        { "dump", cmd_dump },           { "list", cmd_dump },          { "quit", cmd_simple },
};

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
                { "socket", required_argument, NULL, 's' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { 0 },
        };
        ctl c = { .socket_path = NULL };
        int o;
        signal(SIGPIPE, SIG_IGN);
        while ((o = getopt_long(argc, argv, "+s:jhV", longopts, NULL)) != -1) {
                switch (o) {
                case 's':
                        c.socket_path = optarg;
                        break;
                case 'j':
                        c.json = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case 'V':
                        printf("procctl %s\n", PROCD_VERSION);
                        return 0;
                default:
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                usage(stderr);
                return EXIT_USAGE;
        }
        const struct command *cmd = NULL;
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (strcmp(commands[i].name, argv[optind]) == 0)
                        cmd = &commands[i];
        if (!cmd)
                return usage_error("unknown command: %s", argv[optind]);
        procd_error e = { 0 };
        if (procd_connect(c.socket_path, &c.client, &e) != PROCD_OK) {
                fprintf(stderr, "procctl: %s\n", e.msg);
                return EXIT_USAGE;
        }
        int rc = cmd->fn(&c, argc - optind, argv + optind);
        procd_disconnect(c.client);
        return rc;
}
