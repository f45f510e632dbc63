/* procctl - command-line client of procd.
 *
 * procctl [--socket PATH] [--json] COMMAND [ARGS]
 * Exit status: 0 success, 1 procd answered with an error (message on stderr), 2 usage
 * error or no daemon.
 */
#include <errno.h>
#include <pwd.h>
#include <time.h>
#include <unistd.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procd/client.h"
#include "procd/wire.h"
#include "trackers/proc-read.h"
#include "procd/procctl/procctl-events.h"
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
              "                                                 (without GID: procd allocates one from its gid range)\n"
              "  usage [PID]                                    usage of a family (0/none: root family)\n"
              "  signal PID SIGNAL                              signal a process of a family (TERM, 15...)\n"
              "  suspend PID | continue PID | kill PID          act on a family and its subfamilies\n"
              "  unregister PID                                 forget a family (members fold into parent)\n"
              "  snapshot                                       take a /proc snapshot now\n"
              "  dump [PID]                                     families with their members\n"
              "  list [PID]                                     families, one line each: job, state, source,\n"
              "                                                 processes, CPU, memory and its limit, CPU\n"
              "                                                 limit, pids limit, OOM kills, user, age\n"
              "  top [-d SECONDS] [-n COUNT]                    the list, redrawn in place until interrupted\n"
              "                                                 (or COUNT times); %CPU over the interval\n"
              "  metrics                                        procd and its families in the Prometheus\n"
              "                                                 text format (for a textfile collector)\n"
              "  events [-n COUNT]                              procd's events, one line each, until\n"
              "                                                 interrupted (--json: one object each)\n"
              "  quit                                           stop procd\n"
              "options:\n"
              "  --socket PATH   procd's socket (default " PROCD_DEFAULT_SOCKET ")\n"
              "  --json          one JSON object on stdout\n"
              "  --version       print the version and exit\n",
              f);
}

/* --json: errors are JSON on stdout too ({"error": NAME, "message": ...}), so a script
 * reads one object whatever happened; the exit status says the same as without --json. */
static bool json_errors;

static void error_out(const char *name, const char *msg)
{
        if (json_errors) {
                fputs("{\"error\": ", stdout);
                procd_json_write_string(stdout, name);
                fputs(", ", stdout);
                procd_json_write_member(stdout, "message", msg);
                fputs("}\n", stdout);
        }
        fprintf(stderr, "procctl: %s%s%s\n", json_errors ? name : "", json_errors ? ": " : "", msg);
}

static int usage_error(const char *fmt, const char *arg)
{
        char msg[512];
        snprintf(msg, sizeof msg, fmt, arg);
        error_out("Usage", msg);
        if (!json_errors)
                fprintf(stderr, "(procctl --help for usage)\n");
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
        if (json_errors) {
                error_out(procd_status_name(e->status), e->msg);
        } else {
                char msg[600];
                snprintf(msg, sizeof msg, "%s: %s", procd_status_name(e->status), e->msg);
                error_out("", msg);
        }
        return e->status == PROCD_E_TRANSPORT ? EXIT_USAGE : EXIT_DAEMON_ERROR;
}

static int ok(ctl *c)
{
        if (c->json)
                printf("{\"ok\": true}\n");
        return 0;
}

static void print_usage_human(pid_t pid, const procd_usage *u)
{
        char src[64];
        printf("family %d\n", (int) pid);
        printf("  %-22s %s\n", "source", procd_usage_source_name(u, src, sizeof src));
        if (u->fallback)
                printf("  %-22s %s\n", "fallback", u->fallback_reason);
        for (size_t i = 0; i < procd_usage_field_count(); i++) {
                const procd_u64 *v = procd_usage_field(u, i);
                const char *name = procd_usage_field_name(i);
                if (!v->available)
                        continue;
                char extra[64] = "";
                size_t len = strlen(name);
                if (len > 6 && strcmp(name + len - 6, "_bytes") == 0 && v->value >= 1024) {
                        char hs[32];
                        tr_format_bytes(v->value, hs, sizeof hs);
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
        procd_usage u;
        procd_usage_extra x;
        procd_error e = { 0 };
        if (procd_get_usage_extra(c->client, pid, &u, &x, &e) != PROCD_OK)
                return daemon_error(&e);
        if (c->json) {
                /* every available field, the text output's included (anon, file, shmem,
                 * pressure, pids); unavailable ones are left out (unknown is not zero) */
                printf("{\"pid\": %d, ", (int) pid);
                procd_usage_write_json_members(&u, stdout, true);
                if (x.cpu_percent_available)
                        printf(", \"cpu_percent\": %.2f, \"cpu_percent_interval_usec\": %llu", x.cpu_percent,
                               (unsigned long long) x.cpu_percent_interval_usec);
                fputs("}\n", stdout);
        } else {
                print_usage_human(pid, &u);
                if (x.cpu_percent_available)
                        printf("  %-22s %.1f  (over the last %.1f s)\n", "cpu_percent", x.cpu_percent,
                               (double) x.cpu_percent_interval_usec / 1e6);
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
                        procd_json_write_string(stdout, fi->tracking);
                        printf(", \"state\": ");
                        procd_json_write_string(stdout, fi->state);
                        printf(", \"source\": ");
                        procd_json_write_string(stdout, fi->source);
                        printf(", \"num_members\": %zu, \"members\": [", fi->n_members);
                        for (size_t j = 0; j < fi->n_members; j++)
                                printf("%s%d", j ? ", " : "", (int) fi->members[j]);
                        printf("]}");
                }
                printf("]}\n");
        } else {
                printf("%-8s %-8s %-8s %-7s %-7s %s\n", "ROOT", "PARENT", "WATCHER", "SOURCE", "PROCS", "TRACKING");
                for (size_t i = 0; i < n; i++) {
                        const procd_family_info *fi = &infos[i];
                        printf("%-8d %-8d %-8d %-7s %-7zu %s\n", (int) fi->root_pid, (int) fi->parent_root_pid,
                               (int) fi->watcher_pid, fi->source, fi->n_members, fi->tracking);
                        if (fi->n_members) {
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

/* ---- list and top ---------------------------------------------------------------- */

typedef struct list_row {
        const procd_family_info *fi;
        bool have_usage;
        procd_usage u;
        procd_usage_extra x;
        char user[32];
        double age_sec; /* < 0: unknown */
        const char *job; /* SetFamilyJob's id, NULL: unnamed (or not listable by this uid) */
} list_row;

/* Owner of a live process (its real uid), "?" when gone. */
static void proc_user(pid_t pid, char *buf, size_t size)
{
        uid_t uid;
        snprintf(buf, size, "?");
        if (tr_proc_uid(pid, &uid) < 0)
                return;
        struct passwd *pw = getpwuid(uid);
        if (pw)
                snprintf(buf, size, "%s", pw->pw_name);
        else
                snprintf(buf, size, "%lu", (unsigned long) uid);
}

/* Seconds since the process started (start ticks after boot), < 0 when unknown. */
static double age_seconds(uint64_t start_ticks)
{
        double age;
        return tr_proc_age_seconds(start_ticks, &age) < 0 ? -1 : age;
}

/* The daemon's state of the family (frozen, killing, killed) first; then oom when the
 * kernel's OOM killer killed a member; an empty family says so (as procd_family_state in
 * the metrics). */
static const char *row_state(const list_row *r)
{
        static const char *const daemon_states[] = { "frozen", "killing", "killed" };
        for (size_t i = 0; i < TR_ARRAY_SIZE(daemon_states); i++)
                if (strcmp(r->fi->state, daemon_states[i]) == 0)
                        return r->fi->state;
        if (r->have_usage && r->u.oom_kills.available && r->u.oom_kills.value > 0)
                return "oom";
        if (r->have_usage && r->u.num_procs.available && r->u.num_procs.value == 0)
                return "empty";
        return "running";
}

/* CPU limit in cores (quota / period), false when none is set. */
static bool row_cpu_limit(const list_row *r, double *cores)
{
        const procd_usage_extra *x = &r->x;
        if (!r->have_usage || !x->cpu_max_quota_usec.available || !x->cpu_max_period_usec.value)
                return false;
        *cores = (double) x->cpu_max_quota_usec.value / (double) x->cpu_max_period_usec.value;
        return true;
}

/* memory without page cache: anon + shmem (cgroup), rss (/proc) */
static bool row_memory(const list_row *r, uint64_t *out)
{
        const procd_usage *u = &r->u;
        if (!r->have_usage)
                return false;
        if (u->memory_anon_bytes.available) {
                *out = u->memory_anon_bytes.value + (u->memory_shmem_bytes.available ? u->memory_shmem_bytes.value : 0);
                return true;
        }
        if (u->rss_bytes.available) {
                *out = u->rss_bytes.value;
                return true;
        }
        return false;
}

static void fmt_age(double sec, char *buf, size_t size)
{
        if (sec < 0)
                snprintf(buf, size, "-");
        else if (sec < 120)
                snprintf(buf, size, "%.0fs", sec);
        else if (sec < 7200)
                snprintf(buf, size, "%.0fm", sec / 60);
        else if (sec < 172800)
                snprintf(buf, size, "%.1fh", sec / 3600);
        else
                snprintf(buf, size, "%.1fd", sec / 86400);
}

static void print_rows_text(const list_row *rows, size_t n)
{
        printf("%-8s %-12s %-8s %-7s %6s %10s %6s %10s %10s %6s %7s %4s %-10s %6s %s\n", "ROOT", "JOB", "STATE",
               "SOURCE", "PROCS", "CPU(s)", "%CPU", "MEM", "MEM.MAX", "CPUS", "PIDS.MX", "OOM", "USER", "AGE",
               "TRACKING");
        for (size_t i = 0; i < n; i++) {
                const list_row *r = &rows[i];
                const procd_usage *u = &r->u;
                const procd_usage_extra *x = &r->x;
                char procs[16] = "-", cpu[24] = "-", pct[16] = "-", mem[16] = "-", memmax[16] = "-", cpus[16] = "-",
                     pidsmax[24] = "-", oom[24] = "-", age[16];
                uint64_t m;
                double cores;
                if (r->have_usage && u->num_procs.available)
                        snprintf(procs, sizeof procs, "%llu", (unsigned long long) u->num_procs.value);
                if (r->have_usage && u->cpu_usec.available)
                        snprintf(cpu, sizeof cpu, "%.1f", (double) u->cpu_usec.value / 1e6);
                if (r->have_usage && x->cpu_percent_available)
                        snprintf(pct, sizeof pct, "%.1f", x->cpu_percent);
                if (row_memory(r, &m))
                        tr_format_bytes(m, mem, sizeof mem);
                if (r->have_usage && x->memory_max_bytes.available)
                        tr_format_bytes(x->memory_max_bytes.value, memmax, sizeof memmax);
                if (row_cpu_limit(r, &cores))
                        snprintf(cpus, sizeof cpus, "%.2f", cores);
                if (r->have_usage && x->pids_max.available)
                        snprintf(pidsmax, sizeof pidsmax, "%llu", (unsigned long long) x->pids_max.value);
                if (r->have_usage && u->oom_kills.available)
                        snprintf(oom, sizeof oom, "%llu", (unsigned long long) u->oom_kills.value);
                fmt_age(r->age_sec, age, sizeof age);
                /* the tracking may hold a cgroup path in any encoding: procd sent it as ASCII */
                printf("%-8d %-12s %-8s %-7s %6s %10s %6s %10s %10s %6s %7s %4s %-10s %6s %s\n", (int) r->fi->root_pid,
                       r->job ? r->job : "-", row_state(r), r->fi->source, procs, cpu, pct, mem, memmax, cpus, pidsmax,
                       oom, r->user, age, r->fi->tracking);
        }
}

static void json_u64(const char *key, const procd_u64 *v, bool have)
{
        if (have && v->available)
                printf(", \"%s\": %llu", key, (unsigned long long) v->value);
}

static void print_rows_json(const list_row *rows, size_t n)
{
        printf("{\"families\": [");
        for (size_t i = 0; i < n; i++) {
                const list_row *r = &rows[i];
                const procd_usage *u = &r->u;
                const procd_usage_extra *x = &r->x;
                uint64_t m;
                double cores;
                printf("%s{\"root_pid\": %d, \"parent_root_pid\": %d, \"state\": \"%s\", ", i ? ", " : "",
                       (int) r->fi->root_pid, (int) r->fi->parent_root_pid, row_state(r));
                if (r->job) {
                        procd_json_write_member(stdout, "job", r->job);
                        fputs(", ", stdout);
                }
                procd_json_write_member(stdout, "tracking", r->fi->tracking);
                printf(", \"source\": ");
                procd_json_write_string(stdout, r->fi->source);
                printf(", ");
                procd_json_write_member(stdout, "user", r->user);
                if (r->age_sec >= 0)
                        printf(", \"age_sec\": %.0f", r->age_sec);
                json_u64("num_procs", &u->num_procs, r->have_usage);
                json_u64("cpu_usec", &u->cpu_usec, r->have_usage);
                if (r->have_usage && x->cpu_percent_available)
                        printf(", \"cpu_percent\": %.2f", x->cpu_percent);
                if (row_memory(r, &m))
                        printf(", \"memory_bytes\": %llu", (unsigned long long) m);
                json_u64("memory_max_bytes", &x->memory_max_bytes, r->have_usage);
                json_u64("cpu_max_quota_usec", &x->cpu_max_quota_usec, r->have_usage);
                json_u64("cpu_max_period_usec", &x->cpu_max_period_usec, r->have_usage);
                if (row_cpu_limit(r, &cores))
                        printf(", \"cpu_max_cores\": %.4f", cores);
                json_u64("pids_max", &x->pids_max, r->have_usage);
                json_u64("oom_kills", &u->oom_kills, r->have_usage);
                printf("}");
        }
        printf("]}\n");
}

/* One Dump, then GetUsage of each family (a family gone meanwhile keeps its row, with
 * dashes). */
static int list_once(ctl *c, pid_t pid, bool json)
{
        procd_family_info *infos = NULL;
        size_t n = 0;
        procd_error e = { 0 };
        if (procd_dump(c->client, pid, &infos, &n, &e) != PROCD_OK)
                return daemon_error(&e);
        list_row *rows = calloc(n ? n : 1, sizeof *rows);
        if (!rows) {
                procd_family_info_free(infos, n);
                error_out("Internal", "out of memory");
                return EXIT_DAEMON_ERROR;
        }
        /* the JOB column: every job for root, a user's own otherwise (ListJobs' rule) */
        procd_job_info *jobs = NULL;
        size_t n_jobs = 0;
        procd_error je = { 0 };
        if (procd_list_jobs(c->client, getuid() == 0 ? (uid_t) -1 : getuid(), &jobs, &n_jobs, &je) != PROCD_OK)
                n_jobs = 0;
        for (size_t i = 0; i < n; i++) {
                list_row *r = &rows[i];
                r->fi = &infos[i];
                for (size_t j = 0; j < n_jobs; j++)
                        if (jobs[j].root_pid == infos[i].root_pid)
                                r->job = jobs[j].job_id;
                procd_error ue = { 0 };
                r->have_usage = procd_get_usage_extra(c->client, infos[i].parent_root_pid ? infos[i].root_pid : 0, &r->u,
                                                      &r->x, &ue) == PROCD_OK;
                proc_user(infos[i].root_pid, r->user, sizeof r->user);
                r->age_sec = age_seconds(infos[i].root_start_ticks);
        }
        if (json)
                print_rows_json(rows, n);
        else
                print_rows_text(rows, n);
        free(rows);
        free(jobs);
        procd_family_info_free(infos, n);
        return 0;
}

static int cmd_list(ctl *c, int argc, char **argv)
{
        pid_t pid = 0;
        if (argc > 2 || (argc == 2 && parse_pid_arg(argv[1], &pid, true) < 0))
                return usage_error("list [PID]%s", "");
        return list_once(c, pid, c->json);
}

/* top [-d SECONDS] [-n COUNT]: the list redrawn in place every interval (CPU percent over that
 * interval, computed by procd from its two readings) until interrupted. */
static int cmd_top(ctl *c, int argc, char **argv)
{
        double interval = 2.0;
        uint64_t rounds = 0; /* 0: until interrupted */
        for (int i = 1; i < argc; i++) {
                char *end;
                if ((strcmp(argv[i], "-d") == 0 || strcmp(argv[i], "--delay") == 0) && i + 1 < argc) {
                        interval = strtod(argv[++i], &end);
                        if (*end || !(interval >= 0.1 && interval <= 3600))
                                return usage_error("bad delay: %s (0.1..3600 seconds)", argv[i]);
                } else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
                        if (tr_parse_u64(argv[++i], &rounds) < 0 || rounds == 0)
                                return usage_error("bad count: %s", argv[i]);
                } else {
                        return usage_error("top [-d SECONDS] [-n COUNT]: unexpected %s", argv[i]);
                }
        }
        bool tty = isatty(STDOUT_FILENO);
        for (;;) {
                if (tty)
                        fputs("\033[H\033[J", stdout); /* home, clear to the end */
                time_t now = time(NULL);
                char ts[32];
                strftime(ts, sizeof ts, "%H:%M:%S", localtime(&now));
                if (!c->json)
                        printf("procctl top - %s, every %.1f s (Ctrl-C ends)\n", ts, interval);
                int rc = list_once(c, 0, c->json);
                fflush(stdout);
                if (rc != 0 || (rounds && --rounds == 0))
                        return rc;
                struct timespec d = { .tv_sec = (time_t) interval,
                                      .tv_nsec = (long) ((interval - (double) (time_t) interval) * 1e9) };
                while (nanosleep(&d, &d) < 0 && errno == EINTR)
                        ;
        }
}

/* metrics: procd's GetMetrics text as it is (Prometheus text format 0.0.4). */
static int cmd_metrics(ctl *c, int argc, char **argv)
{
        if (argc != 1)
                return usage_error("%s takes no arguments", argv[0]);
        char *text = NULL;
        procd_error e = { 0 };
        if (procd_get_metrics(c->client, &text, &e) != PROCD_OK)
                return daemon_error(&e);
        fputs(text, stdout);
        free(text);
        return 0;
}

/* events [-n COUNT]: one line per event (procctl-events.c) until interrupted */
static int cmd_events(ctl *c, int argc, char **argv)
{
        uint64_t max = 0;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
                        if (tr_parse_u64(argv[++i], &max) < 0 || max == 0)
                                return usage_error("bad count: %s", argv[i]);
                } else {
                        return usage_error("events [-n COUNT]: unexpected %s", argv[i]);
                }
        }
        procd_error e = { 0 };
        if (procctl_events(c->client, c->json, (unsigned long) max, stdout, &e) != PROCD_OK)
                return daemon_error(&e);
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
        { "dump", cmd_dump },           { "list", cmd_list },          { "top", cmd_top },
        { "quit", cmd_simple },         { "metrics", cmd_metrics },    { "events", cmd_events },
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
        /* --json is accepted after the command too (procctl usage 0 --json) */
        int w = optind + 1;
        for (int i = optind + 1; i < argc; i++) {
                if (strcmp(argv[i], "--json") == 0)
                        c.json = true;
                else
                        argv[w++] = argv[i];
        }
        argc = w;
        argv[argc] = NULL;
        json_errors = c.json;
        const struct command *cmd = NULL;
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (strcmp(commands[i].name, argv[optind]) == 0)
                        cmd = &commands[i];
        if (!cmd)
                return usage_error("unknown command: %s", argv[optind]);
        procd_error e = { 0 };
        if (procd_connect(c.socket_path, &c.client, &e) != PROCD_OK)
                return daemon_error(&e);
        int rc = cmd->fn(&c, argc - optind, argv + optind);
        procd_disconnect(c.client);
        return rc;
}
