/* report.c - end-of-job report. */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procd/usage.h"
#include "trackers/error.h"
#include "trackers/util.h"

int st_exit_code(const st_result *r)
{
        bool failed = r->exit_signal != 0 || r->exit_status != 0;
        if (r->oom_killed && failed)
                return ST_EXIT_OOM;
        if (r->exit_signal)
                return 128 + r->exit_signal;
        return r->exit_status & 0xff;
}

static void field(FILE *f, const char *label, const tr_u64 *v, double scale, const char *unit)
{
        if (v->available)
                fprintf(f, " %s %.*f%s", label, scale == 1 ? 0 : 2, (double) v->value / scale, unit);
        else
                fprintf(f, " %s n/a", label);
}

/* a byte count in binary units (the same everywhere in the text report) */
static void bytes_field(FILE *f, const char *label, const tr_u64 *v, const char *sep)
{
        char b[32] = "n/a";
        if (v->available)
                tr_format_bytes(v->value, b, sizeof b);
        fprintf(f, " %s %s%s", label, b, sep);
}

/* "2026-11-23T15:30:00.123456Z" */
static void rfc3339(uint64_t usec, char *buf, size_t size)
{
        time_t t = (time_t) (usec / 1000000u);
        struct tm tm;
        char base[32] = "?";
        if (gmtime_r(&t, &tm))
                strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, size, "%s.%06uZ", base, (unsigned) (usec % 1000000u));
}

/* "procd-starter: limit --memory-max 32.00 MiB: PATH = VALUE" per limit, then the hits */
static void limits_print(FILE *f, const st_result *r)
{
        for (size_t i = 0; r->limits && i < r->limits->n; i++) {
                const st_limit_applied *a = &r->limits->a[i];
                char v[64];
                uint64_t bytes;
                if (a->bytes && tr_parse_size(a->value, &bytes) == 0 && bytes != UINT64_MAX)
                        tr_format_bytes(bytes, v, sizeof v);
                else
                        snprintf(v, sizeof v, "%s", a->value);
                fprintf(f, "procd-starter: limit --%s %s", a->option, v);
                if (!a->applied)
                        fprintf(f, " not applied: %s", a->why);
                for (int w = 0; a->applied && w < a->n_writes; w++)
                        fprintf(f, "%s %s = %s", w ? "," : ":", a->w[w].path, a->w[w].value);
                fputc('\n', f);
        }
        const tr_u64 *e = r->events.v;
        bool known = false;
        for (int k = 0; k < TR_EVENT_COUNT; k++)
                known |= e[k].available;
        if (!known)
                return;
        unsigned hits = tr_limit_events_hits(&r->events);
        fprintf(f, "procd-starter: limits hit:%s", hits ? "" : " none");
        const char *sep = " ";
        if (hits & TR_HIT_OOM) {
                fprintf(f, "%soom (", sep);
                if (e[TR_EVENT_OOM].available)
                        fprintf(f, "oom %llu, ", (unsigned long long) e[TR_EVENT_OOM].value);
                fprintf(f, "oom_kill %llu)", (unsigned long long) e[TR_EVENT_OOM_KILL].value);
                sep = ", ";
        }
        if (hits & TR_HIT_PIDS_MAX) {
                fprintf(f, "%spids-max (%llu forks refused)", sep, (unsigned long long) e[TR_EVENT_PIDS_MAX].value);
                sep = ", ";
        }
        if (hits & TR_HIT_CPU_THROTTLED) {
                fprintf(f, "%scpu-throttled (%llu", sep, (unsigned long long) e[TR_EVENT_CPU_THROTTLED].value);
                if (e[TR_EVENT_CPU_PERIODS].available)
                        fprintf(f, " of %llu", (unsigned long long) e[TR_EVENT_CPU_PERIODS].value);
                fprintf(f, " periods");
                if (e[TR_EVENT_CPU_THROTTLED_USEC].available)
                        fprintf(f, ", %.2f s", (double) e[TR_EVENT_CPU_THROTTLED_USEC].value / 1e6);
                fprintf(f, ")");
        }
        fputc('\n', f);
}

void st_report_print(FILE *f, const st_result *r, const tr_usage *u)
{
        char src[64];
        fprintf(f, "procd-starter: job %d ", (int) r->pid);
        if (r->exit_signal)
                fprintf(f, "killed by signal %d (%s)%s", r->exit_signal, strsignal(r->exit_signal),
                        r->core_dumped ? ", core dumped" : "");
        else
                fprintf(f, "exited with status %d", r->exit_status);
        if (r->oom_killed)
                fprintf(f, "; OOM killer fired");
        if (r->terminated_by)
                fprintf(f, "; terminated by %s", r->terminated_by);
        fprintf(f, "; wall %.3f s; exit code %d\n", (double) r->wall_usec / 1e6, r->exit_code);
        fprintf(f, "procd-starter:");
        field(f, "cpu user", &u->cpu_user_usec, 1e6, " s,");
        field(f, "system", &u->cpu_system_usec, 1e6, " s,");
        field(f, "total", &u->cpu_usec, 1e6, " s;");
        bytes_field(f, "memory peak", &u->memory_peak_bytes, ";");
        field(f, "oom kills", &u->oom_kills, 1, ";");
        field(f, "pids peak", &u->pids_peak, 1, ";");
        bytes_field(f, "io read", &u->io_read_bytes, ",");
        bytes_field(f, "write", &u->io_write_bytes, "");
        fprintf(f, "\nprocd-starter: cgroup %s (%s), tracker %s%s%s%s, source %s%s%s\n", r->cgroup ? r->cgroup : "?",
                r->mode ? r->mode : "?", r->tracker ? r->tracker : "?", r->tracker_reason ? " (" : "",
                r->tracker_reason ? r->tracker_reason : "", r->tracker_reason ? ")" : "",
                tr_usage_source_name(u, src, sizeof src), r->strays_killed ? ", stray processes killed" : "",
                r->clean ? ", job cgroups removed" : ", JOB CGROUPS LEFT BEHIND");
        if (r->cgroup_base)
                fprintf(f, "procd-starter: cgroup base %s kept (a parent shared by jobs)\n", r->cgroup_base);
        if (r->devices && r->devices->n) {
                fprintf(f, "procd-starter: devices (%s):", r->device_method ? r->device_method : "?");
                for (size_t i = 0; i < r->devices->n; i++) {
                        char rule[64];
                        tr_dev_rule_format(&r->devices->r[i], rule, sizeof rule);
                        fprintf(f, "%s %s", i ? "," : "", rule);
                }
                fputc('\n', f);
        }
        limits_print(f, r);
}

/* "devices": {"method": "bpf+v1", "bpf_prog_id": N, "rules": ["deny c:1:3:rwm", ...]} */
static void devices_json(FILE *f, const st_result *r)
{
        if (!r->devices || !r->devices->n)
                return;
        fputs(", \"devices\": {\"method\": ", f);
        procd_json_write_string(f, r->device_method ? r->device_method : "");
        fprintf(f, ", \"bpf_prog_id\": %u, \"rules\": [", r->device_prog_id);
        for (size_t i = 0; i < r->devices->n; i++) {
                char rule[64];
                tr_dev_rule_format(&r->devices->r[i], rule, sizeof rule);
                fputs(i ? ", " : "", f);
                procd_json_write_string(f, rule);
        }
        fputs("]}", f);
}

/* "limits": [{"option": "memory-max", "value": "33554432", "applied": true, "cgroup": "v1",
 * "files": [{"path": ".../memory.limit_in_bytes", "value": "33554432"}]}, ...],
 * "limits_hit": ["oom"], "limit_events": {"oom_kill": 1, ...} (the counters read) */
static void limits_json(FILE *f, const st_result *r)
{
        fputs(", \"limits\": [", f);
        for (size_t i = 0; r->limits && i < r->limits->n; i++) {
                const st_limit_applied *a = &r->limits->a[i];
                fputs(i ? ", {\"option\": " : "{\"option\": ", f);
                procd_json_write_string(f, a->option);
                fputs(", \"value\": ", f);
                procd_json_write_string(f, a->value);
                fprintf(f, ", \"applied\": %s", a->applied ? "true" : "false");
                if (!a->applied) {
                        fputs(", ", f);
                        procd_json_write_member(f, "reason", a->why);
                        fputs("}", f);
                        continue;
                }
                fprintf(f, ", \"cgroup\": \"%s\", \"files\": [", a->v2 ? "v2" : "v1");
                for (int w = 0; w < a->n_writes; w++) {
                        fputs(w ? ", {" : "{", f);
                        procd_json_write_member(f, "path", a->w[w].path);
                        fputs(", \"value\": ", f);
                        procd_json_write_string(f, a->w[w].value);
                        fputs("}", f);
                }
                fputs("]}", f);
        }
        fputs("]", f);
        bool known = false;
        for (int k = 0; k < TR_EVENT_COUNT; k++)
                known |= r->events.v[k].available;
        if (!known)
                return;
        unsigned hits = tr_limit_events_hits(&r->events);
        fputs(", \"limits_hit\": [", f);
        const char *sep = "";
        for (unsigned h = 1; h <= TR_HIT_CPU_THROTTLED; h <<= 1) {
                if (!(hits & h))
                        continue;
                fprintf(f, "%s\"%s\"", sep, tr_limit_hit_name((tr_limit_hit) h));
                sep = ", ";
        }
        fputs("], \"limit_events\": {", f);
        sep = "";
        for (int k = 0; k < TR_EVENT_COUNT; k++) {
                if (!r->events.v[k].available)
                        continue;
                fprintf(f, "%s\"%s\": %llu", sep, tr_limit_event_get((tr_limit_event_id) k)->name,
                        (unsigned long long) r->events.v[k].value);
                sep = ", ";
        }
        fputs("}", f);
}

/* Open path.tmp for a report into *f; commit_report() renames it into place. */
static int open_report(const char *path, char *tmp, size_t size, FILE **f, tr_error *err)
{
        snprintf(tmp, size, "%s.tmp", path);
        *f = fopen(tmp, "we");
        if (!*f)
                return tr_error_setx(err, errno, "--report %s", tmp);
        return 0;
}

static int commit_report(FILE *f, const char *tmp, const char *path, tr_error *err)
{
        if (ferror(f) | (fclose(f) != 0)) {
                unlink(tmp);
                return tr_error_set(err, EIO, "--report %s: write failed", path);
        }
        if (rename(tmp, path) < 0) {
                int e = errno;
                unlink(tmp);
                return tr_error_setx(err, e, "--report %s", path);
        }
        return 0;
}

int st_report_write_failure_json(const char *path, int exit_code, const char *stage, const char *error,
                                 bool cgroups_removed, tr_error *err)
{
        char tmp[4096];
        FILE *f;
        int r = open_report(path, tmp, sizeof tmp, &f, err);
        if (r < 0)
                return r;
        fprintf(f, "{\"exit_code\": %d, \"stage\": ", exit_code);
        procd_json_write_string(f, stage);
        fputs(", ", f);
        procd_json_write_member(f, "error", error);
        fprintf(f, ", \"job_cgroups_removed\": %s}\n", cgroups_removed ? "true" : "false");
        return commit_report(f, tmp, path, err);
}

/* The embedded tracker's record as the public one, whose JSON writer the report uses: the
 * two field lists are one list, name for name and in order (test_usage_record checks it),
 * and the source bits have the same values. */
_Static_assert((unsigned) TR_SRC_CGROUP_V2 == (unsigned) PROCD_SRC_CGROUP_V2 &&
                       (unsigned) TR_SRC_CGROUP_V1 == (unsigned) PROCD_SRC_CGROUP_V1 &&
                       (unsigned) TR_SRC_PROC == (unsigned) PROCD_SRC_PROC,
               "tr_source and procd_source bits differ");
static void public_usage(const tr_usage *u, procd_usage *out)
{
        procd_usage_init(out);
        for (size_t i = 0; i < tr_usage_field_count() && i < procd_usage_field_count(); i++) {
                const tr_u64 *from = tr_usage_field(u, i);
                procd_u64 *to = procd_usage_field_mut(out, i);
                *to = (procd_u64) { .value = from->value, .available = from->available, .source = from->source };
        }
        out->sources = u->sources;
        out->fallback = u->fallback;
        snprintf(out->fallback_reason, sizeof out->fallback_reason, "%s", u->fallback_reason);
}

int st_report_write_json(const char *path, const st_result *r, const tr_usage *u, tr_error *err)
{
        char tmp[4096];
        FILE *f;
        int rc = open_report(path, tmp, sizeof tmp, &f, err);
        if (rc < 0)
                return rc;
        fputs("{", f);
        procd_usage pu;
        public_usage(u, &pu);
        procd_usage_write_json_members(&pu, f, false);
        /* a job killed by a signal has no exit status */
        if (r->exit_signal)
                fputs(", \"exit_status\": null", f);
        else
                fprintf(f, ", \"exit_status\": %d", r->exit_status);
        fprintf(f, ", \"exit_signal\": %d, \"oom_killed\": %s, \"wall_usec\": %llu", r->exit_signal,
                r->oom_killed ? "true" : "false", (unsigned long long) r->wall_usec);
        fprintf(f, ", \"exit_code\": %d, \"pid\": %d, \"terminated\": %s, \"strays_killed\": %s, \"job_cgroups_removed\": %s",
                r->exit_code, (int) r->pid, r->terminated ? "true" : "false", r->strays_killed ? "true" : "false",
                r->clean ? "true" : "false");
        if (r->cgroup_base) {
                fputs(", ", f);
                procd_json_write_member(f, "cgroup_base", r->cgroup_base);
                fputs(", \"cgroup_base_kept\": true", f);
        }
        char t[48];
        if (r->start_usec) {
                rfc3339(r->start_usec, t, sizeof t);
                fprintf(f, ", \"start_time\": \"%s\", \"start_usec\": %llu", t, (unsigned long long) r->start_usec);
        }
        if (r->end_usec) {
                rfc3339(r->end_usec, t, sizeof t);
                fprintf(f, ", \"end_time\": \"%s\", \"end_usec\": %llu", t, (unsigned long long) r->end_usec);
        }
        const char *const keys[] = { "user", "job_name", "host", "tracker_reason", "terminated_by" };
        const char *const vals[] = { r->user, r->name, r->host, r->tracker_reason, r->terminated_by };
        for (size_t i = 0; i < TR_ARRAY_SIZE(keys); i++) {
                if (!vals[i])
                        continue;
                fputs(", ", f);
                procd_json_write_member(f, keys[i], vals[i]);
        }
        fputs(", ", f);
        procd_json_write_member(f, "cgroup", r->cgroup);
        fputs(", \"mode\": ", f);
        procd_json_write_string(f, r->mode);
        fputs(", \"tracker\": ", f);
        procd_json_write_string(f, r->tracker);
        devices_json(f, r);
        limits_json(f, r);
        fputs("}\n", f);
        return commit_report(f, tmp, path, err);
}
