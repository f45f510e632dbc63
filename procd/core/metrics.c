/* metrics.c - the Prometheus text exposition of procd and its families (see metrics.h). */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procd/core/command-jobs.h"
#include "procd/core/command-query.h"
#include "procd/core/events.h"
#include "procd/core/stats.h"
#include "procd/version.h"
#include "trackers/cglimits.h"
#include "trackers/util.h"

/* One registered subfamily, read once per rendering. */
typedef struct fam_row {
        char labels[512]; /* root_pid="..",job="..",user=".." (escaped) */
        const char *state;
        tr_usage u;
        tr_limits_now lim;
} fam_row;

/* A label value: valid UTF-8 (invalid bytes become U+FFFD, as the format requires), with
 * backslash, double quote and newline escaped. */
static void put_label_value(GString *out, const char *v)
{
        g_autofree char *valid = g_utf8_make_valid(v ? v : "", -1);
        for (const char *p = valid; *p; p++) {
                if (*p == '\\' || *p == '"')
                        g_string_append_c(out, '\\');
                if (*p == '\n')
                        g_string_append(out, "\\n");
                else
                        g_string_append_c(out, *p);
        }
}

static void put_label(GString *out, const char *name, const char *value, bool first)
{
        g_string_append_printf(out, "%s%s=\"", first ? "" : ",", name);
        put_label_value(out, value);
        g_string_append_c(out, '"');
}

static void header(GString *out, const char *name, const char *type, const char *help)
{
        g_string_append_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample: name{labels} value.  Seconds and cores are printed with %.6f, counts exactly. */
static void sample_u64(GString *out, const char *name, const char *labels, uint64_t v)
{
        g_string_append_printf(out, "%s{%s} %llu\n", name, labels, (unsigned long long) v);
}

static void sample_double(GString *out, const char *name, const char *labels, double v)
{
        g_string_append_printf(out, "%s{%s} %.6f\n", name, labels, v);
}

/* The owner of the family's root process, by name when it has one. */
static void user_name(uid_t uid, char *buf, size_t size)
{
        struct passwd *pw = getpwuid(uid);
        if (pw)
                snprintf(buf, size, "%s", pw->pw_name);
        else
                snprintf(buf, size, "%u", (unsigned) uid);
}

/* The state `procctl list` shows: procd's own (killing, frozen, killed) first, then oom when
 * the kernel's OOM killer killed a member, empty when no process is left, else running. */
static const char *row_state(const pd_family *f, const tr_usage *u)
{
        const char *s = pd_family_state_name(f);
        if (strcmp(s, "running") != 0)
                return s;
        if (u->oom_kills.available && u->oom_kills.value > 0)
                return "oom";
        if (u->num_procs.available && u->num_procs.value == 0)
                return "empty";
        return "running";
}

static GArray *read_rows(pd_commands *cm)
{
        GArray *rows = g_array_new(FALSE, TRUE, sizeof(fam_row));
        g_autoptr(GPtrArray) fams = g_ptr_array_new();
        pd_registry_all(cm->reg, fams);
        const pd_caller root = { .uid = 0, .pid = 0 };
        for (guint i = 0; i < fams->len; i++) {
                pd_family *f = fams->pdata[i];
                if (!f->parent)
                        continue;
                fam_row r = { 0 };
                if (pd_cmd_get_usage(cm, &root, f->root_pid, TR_WANT_ALL, &r.u, NULL, NULL) != PROCD_OK)
                        tr_usage_init(&r.u);
                pd_cmd_get_limits(cm, &root, f->root_pid, &r.lim, NULL);
                r.state = row_state(f, &r.u);
                char pid[16], user[64];
                snprintf(pid, sizeof pid, "%d", (int) f->root_pid);
                user_name(f->root_uid, user, sizeof user);
                const char *job = pd_cmd_job_of(cm, f->root_pid);
                g_autoptr(GString) l = g_string_new(NULL);
                put_label(l, "root_pid", pid, true);
                put_label(l, "job_id", job ? job : "", false);
                put_label(l, "user", user, false);
                snprintf(r.labels, sizeof r.labels, "%s", l->str);
                g_array_append_val(rows, r);
        }
        return rows;
}

/* Per-family metrics read from the usage record (offset of the tr_u64 in tr_usage), with the
 * divisor that makes them base units (usec -> seconds). */
static const struct usage_metric {
        const char *name, *type, *help;
        size_t offset;
        double divisor;
} usage_metrics[] = {
        { "procd_family_cpu_user_seconds_total", "counter", "CPU time in user mode of the family's processes.",
          offsetof(tr_usage, cpu_user_usec), 1e6 },
        { "procd_family_cpu_system_seconds_total", "counter", "CPU time in kernel mode of the family's processes.",
          offsetof(tr_usage, cpu_system_usec), 1e6 },
        { "procd_family_memory_current_bytes", "gauge", "Memory charged to the family now, page cache included.",
          offsetof(tr_usage, memory_current_bytes), 0 },
        { "procd_family_memory_peak_bytes", "gauge", "High-water mark of the family's charged memory.",
          offsetof(tr_usage, memory_peak_bytes), 0 },
        { "procd_family_memory_anon_bytes", "gauge", "Anonymous memory of the family.",
          offsetof(tr_usage, memory_anon_bytes), 0 },
        { "procd_family_memory_rss_bytes", "gauge", "Resident memory without page cache (anon + shmem, or VmRSS).",
          offsetof(tr_usage, rss_bytes), 0 },
        { "procd_family_processes", "gauge", "Processes in the family now.", offsetof(tr_usage, num_procs), 0 },
        { "procd_family_oom_kills_total", "counter", "Processes of the family killed by the kernel's OOM killer.",
          offsetof(tr_usage, oom_kills), 0 },
        { "procd_family_io_read_bytes_total", "counter", "Bytes the family read from block devices.",
          offsetof(tr_usage, io_read_bytes), 0 },
        { "procd_family_io_write_bytes_total", "counter", "Bytes the family wrote to block devices.",
          offsetof(tr_usage, io_write_bytes), 0 },
};

static const struct psi_metric {
        const char *resource, *kind;
        size_t offset;
} psi_metrics[] = {
        { "cpu", "some", offsetof(tr_usage, psi_cpu_some_usec) },
        { "cpu", "full", offsetof(tr_usage, psi_cpu_full_usec) },
        { "memory", "some", offsetof(tr_usage, psi_memory_some_usec) },
        { "memory", "full", offsetof(tr_usage, psi_memory_full_usec) },
        { "io", "some", offsetof(tr_usage, psi_io_some_usec) },
        { "io", "full", offsetof(tr_usage, psi_io_full_usec) },
};

static const tr_u64 *usage_at(const tr_usage *u, size_t offset)
{
        return (const tr_u64 *) ((const char *) u + offset);
}

static void render_families(GString *out, const GArray *rows)
{
        for (size_t m = 0; m < TR_ARRAY_SIZE(usage_metrics); m++) {
                const struct usage_metric *um = &usage_metrics[m];
                header(out, um->name, um->type, um->help);
                for (guint i = 0; i < rows->len; i++) {
                        const fam_row *r = &g_array_index(rows, fam_row, i);
                        const tr_u64 *v = usage_at(&r->u, um->offset);
                        if (!v->available)
                                continue;
                        if (um->divisor > 0)
                                sample_double(out, um->name, r->labels, (double) v->value / um->divisor);
                        else
                                sample_u64(out, um->name, r->labels, v->value);
                }
        }
        const char *psi = "procd_family_pressure_stalled_seconds_total";
        header(out, psi, "counter", "Time some or all of the family's tasks stalled on a resource (PSI).");
        for (guint i = 0; i < rows->len; i++) {
                const fam_row *r = &g_array_index(rows, fam_row, i);
                for (size_t p = 0; p < TR_ARRAY_SIZE(psi_metrics); p++) {
                        const tr_u64 *v = usage_at(&r->u, psi_metrics[p].offset);
                        if (v->available)
                                g_string_append_printf(out, "%s{%s,resource=\"%s\",kind=\"%s\"} %.6f\n", psi, r->labels,
                                                       psi_metrics[p].resource, psi_metrics[p].kind,
                                                       (double) v->value / 1e6);
                }
        }
        header(out, "procd_family_memory_max_bytes", "gauge", "memory.max of the family's cgroup, where set.");
        for (guint i = 0; i < rows->len; i++) {
                const fam_row *r = &g_array_index(rows, fam_row, i);
                if (r->lim.memory_max_bytes.available)
                        sample_u64(out, "procd_family_memory_max_bytes", r->labels, r->lim.memory_max_bytes.value);
        }
        header(out, "procd_family_cpu_max_cores", "gauge", "cpu.max of the family's cgroup as cores (quota / period), where set.");
        for (guint i = 0; i < rows->len; i++) {
                const fam_row *r = &g_array_index(rows, fam_row, i);
                if (r->lim.cpu_quota_usec.available && r->lim.cpu_period_usec.value)
                        sample_double(out, "procd_family_cpu_max_cores", r->labels,
                                      (double) r->lim.cpu_quota_usec.value / (double) r->lim.cpu_period_usec.value);
        }
        header(out, "procd_family_pids_max", "gauge", "pids.max of the family's cgroup, where set.");
        for (guint i = 0; i < rows->len; i++) {
                const fam_row *r = &g_array_index(rows, fam_row, i);
                if (r->lim.pids_max.available)
                        sample_u64(out, "procd_family_pids_max", r->labels, r->lim.pids_max.value);
        }
        header(out, "procd_family_state", "gauge",
               "1 for the family's state: running, empty, oom (the OOM killer killed a member), frozen, killing, killed.");
        for (guint i = 0; i < rows->len; i++) {
                const fam_row *r = &g_array_index(rows, fam_row, i);
                g_string_append_printf(out, "procd_family_state{%s,state=\"%s\"} 1\n", r->labels, r->state);
        }
}

/* The kind of tracking a family was registered with (the first of its methods). */
static const char *tracking_kind(const pd_family *f)
{
        if (f->cgroup_path)
                return f->cgroup_origin == PD_CG_FAMILY ? "family-cgroup" : "cgroup";
        if (f->env_marker)
                return "environment";
        if (f->by_login)
                return "login";
        if (f->by_gid)
                return "gid";
        return "parent";
}

static void render_family_counts(GString *out, pd_commands *cm)
{
        g_autoptr(GPtrArray) fams = g_ptr_array_new();
        pd_registry_all(cm->reg, fams);
        g_autoptr(GHashTable) counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (guint i = 0; i < fams->len; i++) {
                const pd_family *f = fams->pdata[i];
                if (!f->parent)
                        continue;
                char *key = g_strdup_printf("tracking=\"%s\",source=\"%s\"", tracking_kind(f), pd_family_source(f));
                guint n = GPOINTER_TO_UINT(g_hash_table_lookup(counts, key));
                g_hash_table_replace(counts, key, GUINT_TO_POINTER(n + 1));
        }
        header(out, "procd_families", "gauge", "Registered subfamilies by tracking method and the source answering.");
        GList *keys = g_list_sort(g_hash_table_get_keys(counts), (GCompareFunc) strcmp);
        for (GList *l = keys; l; l = l->next)
                g_string_append_printf(out, "procd_families{%s} %u\n", (const char *) l->data,
                                       GPOINTER_TO_UINT(g_hash_table_lookup(counts, l->data)));
        g_list_free(keys);
        header(out, "procd_families_registered", "gauge", "Registered subfamilies (all trackings).");
        g_string_append_printf(out, "procd_families_registered %zu\n", pd_registry_count(cm->reg));
}

static void put_request(const char *operation, const char *status, uint64_t count, void *ud)
{
        GString *out = ud;
        g_string_append(out, "procd_requests_total{");
        put_label(out, "operation", operation, true);
        put_label(out, "status", status, false);
        g_string_append_printf(out, "} %llu\n", (unsigned long long) count);
}

/* The events (events.h): sent by kind, lost by slow subscribers, the kernel's wakeups. */
static void render_events(GString *out, const pd_events *ev)
{
        pd_events_stats es;
        pd_events_stats_get(ev, &es);
        header(out, "procd_events_total", "counter", "Events emitted to subscribers, by kind (the D-Bus signal).");
        for (int k = 0; k < PD_EVENT_KIND_COUNT; k++)
                g_string_append_printf(out, "procd_events_total{event=\"%s\"} %llu\n", pd_event_name((pd_event_kind) k),
                                       (unsigned long long) es.emitted[k]);
        header(out, "procd_events_dropped_total", "counter",
               "Events lost for subscribers that did not read (their queue was full).");
        g_string_append_printf(out, "procd_events_dropped_total %llu\n", (unsigned long long) es.dropped);
        header(out, "procd_events_kernel_wakeups_total", "counter",
               "Kernel notifications read (inotify on cgroup.events/memory.events, v1 OOM eventfds).");
        g_string_append_printf(out, "procd_events_kernel_wakeups_total %llu\n", (unsigned long long) es.kernel_wakeups);
}

static void render_daemon(GString *out, pd_commands *cm)
{
        header(out, "procd_build_info", "gauge", "procd's version.");
        g_string_append_printf(out, "procd_build_info{version=\"%s\"} 1\n", PROCD_VERSION);
        render_family_counts(out, cm);
        const pd_stats *st = cm->stats;
        if (!st)
                return;
        header(out, "procd_start_time_seconds", "gauge", "When procd started, seconds since the epoch.");
        g_string_append_printf(out, "procd_start_time_seconds %.6f\n", (double) st->start_realtime_usec / 1e6);
        header(out, "procd_connections", "gauge", "Open D-Bus client connections.");
        g_string_append_printf(out, "procd_connections %llu\n", (unsigned long long) st->connections_now);
        header(out, "procd_connections_accepted_total", "counter", "D-Bus client connections accepted.");
        g_string_append_printf(out, "procd_connections_accepted_total %llu\n", (unsigned long long) st->connections_total);
        header(out, "procd_requests_total", "counter", "Requests answered, by operation and status (OK or the error).");
        pd_stats_foreach_request(st, put_request, out);
        header(out, "procd_malformed_requests_total", "counter",
               "Requests refused before any operation: unknown method, wrong signature, undecodable.");
        g_string_append_printf(out, "procd_malformed_requests_total %llu\n", (unsigned long long) st->malformed_requests);
        header(out, "procd_restore_duration_seconds", "gauge", "Wall time of the state file's restore at start.");
        g_string_append_printf(out, "procd_restore_duration_seconds %.6f\n", (double) st->restore_wall_usec / 1e6);
        header(out, "procd_restored_families", "gauge", "Families restored from the state file at start.");
        g_string_append_printf(out, "procd_restored_families %llu\n", (unsigned long long) st->restored_families);
        if (cm->events)
                render_events(out, cm->events);
}

void pd_metrics_render(pd_commands *cm, GString *out)
{
        g_autoptr(GArray) rows = read_rows(cm);
        render_families(out, rows);
        render_daemon(out, cm);
}

int pd_metrics_write_file(pd_commands *cm, const char *path, tr_error *err)
{
        g_autoptr(GString) text = g_string_new(NULL);
        pd_metrics_render(cm, text);
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int) getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return tr_error_setx(err, errno, "%s", tmp);
        int r = 0;
        for (size_t off = 0; off < text->len && r == 0;) {
                ssize_t w = write(fd, text->str + off, text->len - off);
                if (w < 0 && errno != EINTR)
                        r = -errno;
                else if (w > 0)
                        off += (size_t) w;
        }
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                unlink(tmp);
                return tr_error_setx(err, -r, "writing %s", path);
        }
        return 0;
}
