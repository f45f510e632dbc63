/* procctl-events.c - procctl events (see procctl-events.h). */
#include "procctl-events.h"

#include <inttypes.h>
#include <string.h>

static void write_text(const procd_event *ev, FILE *out)
{
        fprintf(out, "%s root=%d job=%s", ev->name, (int) ev->root_pid, ev->job[0] ? ev->job : "-");
        if (ev->dropped)
                fprintf(out, " dropped=%" PRIu64, ev->dropped);
        if (strcmp(ev->name, "FamilyOomKill") == 0)
                fprintf(out, " oom_kills=%" PRIu64 " oom_kills_total=%" PRIu64, ev->oom_kills, ev->oom_kills_total);
        if (strcmp(ev->name, "FamiliesRestored") == 0)
                fprintf(out, " families=%" PRIu64, ev->families);
        if (ev->message[0])
                fprintf(out, " message=\"%s\"", ev->message);
        if (ev->has_usage) {
                for (size_t i = 0; i < procd_usage_field_count(); i++) {
                        const procd_u64 *f = procd_usage_field(&ev->usage, i);
                        if (f->available)
                                fprintf(out, " %s=%" PRIu64, procd_usage_field_name(i), f->value);
                }
        }
        fputc('\n', out);
}

static void write_json(const procd_event *ev, FILE *out)
{
        fputs("{\"event\": ", out);
        procd_json_write_string(out, ev->name);
        fprintf(out, ", \"root_pid\": %d, \"job\": ", (int) ev->root_pid);
        procd_json_write_string(out, ev->job);
        fprintf(out, ", \"dropped\": %" PRIu64, ev->dropped);
        if (strcmp(ev->name, "FamilyOomKill") == 0)
                fprintf(out, ", \"oom_kills\": %" PRIu64 ", \"oom_kills_total\": %" PRIu64, ev->oom_kills,
                        ev->oom_kills_total);
        if (strcmp(ev->name, "FamiliesRestored") == 0)
                fprintf(out, ", \"families\": %" PRIu64, ev->families);
        if (ev->message[0]) {
                fputs(", \"message\": ", out);
                procd_json_write_string(out, ev->message);
        }
        if (ev->has_usage) {
                fputs(", \"usage\": {", out);
                procd_usage_write_json_members(&ev->usage, out, true);
                fputc('}', out);
        }
        fputs("}\n", out);
}

void procctl_event_write(const procd_event *ev, bool json, FILE *out)
{
        if (json)
                write_json(ev, out);
        else
                write_text(ev, out);
}

procd_status procctl_events(procd_client *c, bool json, unsigned long max_events, FILE *out, procd_error *err)
{
        procd_status s = procd_subscribe(c, err);
        for (unsigned long n = 0; s == PROCD_OK && (!max_events || n < max_events);) {
                procd_event ev;
                bool got = false;
                s = procd_next_event(c, -1, &ev, &got, err);
                if (s == PROCD_OK && got) {
                        procctl_event_write(&ev, json, out);
                        fflush(out);
                        n++;
                }
        }
        return s;
}
