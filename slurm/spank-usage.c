#include "spank-usage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
}

static void free_buf(char **p)
{
        free(*p);
}

static void close_file(FILE **f)
{
        if (*f)
                fclose(*f);
}

void ps_usage_log_line(const ps_step_usage *s, char *buf, size_t size)
{
        const procd_usage *u = s->usage;
        char cpu[96] = "cpu unknown", mem[48] = "", oom[48] = "", left[64] = "", src[64] = "none";
        if (u && u->cpu_usec.available)
                snprintf(cpu, sizeof cpu, "cpu %.2f s", (double) u->cpu_usec.value / 1e6);
        if (u && u->cpu_user_usec.available && u->cpu_system_usec.available) {
                size_t n = strlen(cpu);
                snprintf(cpu + n, sizeof cpu - n, " (user %.2f, system %.2f)", (double) u->cpu_user_usec.value / 1e6,
                         (double) u->cpu_system_usec.value / 1e6);
        }
        if (u && u->memory_peak_bytes.available)
                snprintf(mem, sizeof mem, ", peak memory %.1f MiB", (double) u->memory_peak_bytes.value / 1048576.0);
        if (u && u->oom_kills.available && u->oom_kills.value)
                snprintf(oom, sizeof oom, ", %llu OOM kill%s", (unsigned long long) u->oom_kills.value,
                         u->oom_kills.value == 1 ? "" : "s");
        if (s->left_known)
                snprintf(left, sizeof left, ", %llu process%s left%s", (unsigned long long) s->left,
                         s->left == 1 ? "" : "es", s->left && s->killed ? " and killed" : "");
        if (u)
                procd_usage_source_name(u, src, sizeof src);
        snprintf(buf, size, "step %s: %u task%s, %s%s%s%s, source %s%s%s", s->step, s->tasks, s->tasks == 1 ? "" : "s", cpu,
                 mem, oom, left, src, s->error && *s->error ? ": " : "", s->error ? s->error : "");
}

int ps_usage_append_json(const ps_step_usage *s, const char *node, const char *path)
{
        __attribute__((cleanup(free_buf))) char *line = NULL;
        size_t len = 0;
        {
                __attribute__((cleanup(close_file))) FILE *f = open_memstream(&line, &len);
                if (!f)
                        return -errno;
                fputs("{\"step\": ", f);
                procd_json_write_string(f, s->step);
                fprintf(f, ", \"job_id\": %u, \"uid\": %u, \"node\": ", s->job_id, (unsigned) s->uid);
                procd_json_write_string(f, node);
                fprintf(f, ", \"tasks\": %u, \"start_usec\": %llu, \"end_usec\": %llu", s->tasks,
                        (unsigned long long) s->start_usec, (unsigned long long) s->end_usec);
                if (s->left_known)
                        fprintf(f, ", \"left_at_end\": %llu", (unsigned long long) s->left);
                fprintf(f, ", \"killed\": %s", s->killed ? "true" : "false");
                if (s->usage) {
                        fputs(", ", f);
                        procd_usage_write_json_members(s->usage, f, false);
                }
                if (s->error && *s->error) {
                        fputs(", \"error\": ", f);
                        procd_json_write_string(f, s->error);
                }
                fputs("}\n", f);
                if (fflush(f) != 0)
                        return -EIO;
        }
        __attribute__((cleanup(close_fd))) int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
        if (fd < 0)
                return -errno;
        ssize_t w = write(fd, line, len); /* one write: lines of concurrent steps never interleave */
        if (w < 0)
                return -errno;
        return (size_t) w == len ? 0 : -EIO;
}
