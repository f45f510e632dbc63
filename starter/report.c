/* report.c - end-of-job report. */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trackers/error.h"

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
        fprintf(f, "; wall %.3f s; exit code %d\n", (double) r->wall_usec / 1e6, r->exit_code);
        fprintf(f, "procd-starter:");
        field(f, "cpu user", &u->cpu_user_usec, 1e6, " s,");
        field(f, "system", &u->cpu_system_usec, 1e6, " s,");
        field(f, "total", &u->cpu_usec, 1e6, " s;");
        field(f, "memory peak", &u->memory_peak_bytes, 1048576.0, " MiB;");
        field(f, "oom kills", &u->oom_kills, 1, ";");
        field(f, "pids peak", &u->pids_peak, 1, ";");
        field(f, "io read", &u->io_read_bytes, 1, " B,");
        field(f, "write", &u->io_write_bytes, 1, " B");
        fprintf(f, "\nprocd-starter: cgroup %s (%s), tracker %s, source %s%s%s%s\n", r->cgroup ? r->cgroup : "?",
                r->mode ? r->mode : "?", r->tracker ? r->tracker : "?", tr_usage_source_name(u, src, sizeof src),
                r->strays_killed ? ", stray processes killed" : "", r->terminated ? ", terminated by signal" : "",
                r->clean ? "" : ", CGROUPS LEFT BEHIND");
        if (r->devices && r->devices->n) {
                fprintf(f, "procd-starter: devices (%s):", r->device_method ? r->device_method : "?");
                for (size_t i = 0; i < r->devices->n; i++) {
                        char rule[64];
                        tr_dev_rule_format(&r->devices->r[i], rule, sizeof rule);
                        fprintf(f, "%s %s", i ? "," : "", rule);
                }
                fputc('\n', f);
        }
}

/* "devices": {"method": "bpf+v1", "bpf_prog_id": N, "rules": ["deny c:1:3:rwm", ...]} */
static void devices_json(FILE *f, const st_result *r)
{
        if (!r->devices || !r->devices->n)
                return;
        fputs(", \"devices\": {\"method\": ", f);
        tr_json_write_string(f, r->device_method ? r->device_method : "");
        fprintf(f, ", \"bpf_prog_id\": %u, \"rules\": [", r->device_prog_id);
        for (size_t i = 0; i < r->devices->n; i++) {
                char rule[64];
                tr_dev_rule_format(&r->devices->r[i], rule, sizeof rule);
                fputs(i ? ", " : "", f);
                tr_json_write_string(f, rule);
        }
        fputs("]}", f);
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
        tr_json_write_string(f, stage);
        fputs(", \"error\": ", f);
        tr_json_write_string(f, error);
        fprintf(f, ", \"cgroups_removed\": %s}\n", cgroups_removed ? "true" : "false");
        return commit_report(f, tmp, path, err);
}

int st_report_write_json(const char *path, const st_result *r, const tr_usage *u, tr_error *err)
{
        char tmp[4096];
        FILE *f;
        int rc = open_report(path, tmp, sizeof tmp, &f, err);
        if (rc < 0)
                return rc;
        fputs("{", f);
        tr_usage_write_json_members(u, f, false);
        fprintf(f, ", \"exit_status\": %d, \"exit_signal\": %d, \"oom_killed\": %s, \"wall_usec\": %llu",
                r->exit_status, r->exit_signal, r->oom_killed ? "true" : "false", (unsigned long long) r->wall_usec);
        fprintf(f, ", \"exit_code\": %d, \"pid\": %d, \"terminated\": %s, \"strays_killed\": %s, \"cgroups_removed\": %s",
                r->exit_code, (int) r->pid, r->terminated ? "true" : "false", r->strays_killed ? "true" : "false",
                r->clean ? "true" : "false");
        fputs(", \"cgroup\": ", f);
        tr_json_write_string(f, r->cgroup);
        fputs(", \"mode\": ", f);
        tr_json_write_string(f, r->mode);
        fputs(", \"tracker\": ", f);
        tr_json_write_string(f, r->tracker);
        devices_json(f, r);
        fputs("}\n", f);
        return commit_report(f, tmp, path, err);
}
