/* usage.c - the public usage record (procd/usage.h): its field table, source names and
 * JSON form.  The field list is the wire contract with the daemon's trackers/usage.h
 * (GetUsage's keys); test_client checks that the two lists agree name for name. */
#include "procd/usage.h"

#include <string.h>

static const struct {
        const char *name;
        size_t offset;
        bool json;
} fields[] = {
#define ROW(n, j) { #n, offsetof(procd_usage, n), j },
        PROCD_USAGE_FIELDS(ROW)
#undef ROW
};

static const struct {
        unsigned bit;
        const char *name;
} source_names[] = {
        { PROCD_SRC_CGROUP_V2, "cgroup" },
        { PROCD_SRC_CGROUP_V1, "cgroup-v1" },
        { PROCD_SRC_PROC, "proc" },
};

void procd_usage_init(procd_usage *u) { memset(u, 0, sizeof *u); }
size_t procd_usage_field_count(void) { return sizeof fields / sizeof fields[0]; }
const char *procd_usage_field_name(size_t i) { return i < procd_usage_field_count() ? fields[i].name : NULL; }
bool procd_usage_field_is_json(size_t i) { return i < procd_usage_field_count() && fields[i].json; }

procd_u64 *procd_usage_field_mut(procd_usage *u, size_t i)
{
        return i < procd_usage_field_count() ? (procd_u64 *) ((char *) u + fields[i].offset) : NULL;
}

const procd_u64 *procd_usage_field(const procd_usage *u, size_t i)
{
        return procd_usage_field_mut((procd_usage *) u, i);
}

const char *procd_usage_source_name(const procd_usage *u, char *buf, size_t size)
{
        size_t off = 0;
        if (size)
                buf[0] = '\0';
        for (size_t i = 0; i < sizeof source_names / sizeof source_names[0]; i++) {
                if (!(u->sources & source_names[i].bit))
                        continue;
                int n = snprintf(buf + off, size > off ? size - off : 0, "%s%s", off ? "+" : "",
                                 source_names[i].name);
                if (n > 0)
                        off += (size_t) n;
        }
        if (off == 0 && size)
                snprintf(buf, size, "none");
        return buf;
}

unsigned procd_usage_sources_from_name(const char *name)
{
        unsigned bits = 0;
        char buf[64];
        snprintf(buf, sizeof buf, "%s", name ? name : "");
        char *save = NULL;
        for (char *t = strtok_r(buf, "+", &save); t; t = strtok_r(NULL, "+", &save))
                for (size_t i = 0; i < sizeof source_names / sizeof source_names[0]; i++)
                        if (strcmp(t, source_names[i].name) == 0)
                                bits |= source_names[i].bit;
        return bits;
}

/* Length of the valid UTF-8 sequence at p (1..4), 0 when p starts an invalid one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_seq_len(const unsigned char *p)
{
        unsigned c = p[0];
        size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (n <= 1)
                return n;
        unsigned cp = c & (0x7fu >> n);
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3fu);
        }
        static const unsigned min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return n;
}

static bool utf8_valid(const char *s)
{
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = utf8_seq_len(p);
                if (!n)
                        return false;
                p += n;
        }
        return true;
}

/* Write s as a JSON string literal: quotes, backslashes and control characters escaped;
 * every byte that is not part of valid UTF-8 written as U+FFFD, so the output is always
 * valid UTF-8 JSON (the raw bytes: procd_json_write_member's "_hex" key). */
void procd_json_write_string(FILE *f, const char *s)
{
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p;) {
                size_t n = utf8_seq_len(p);
                if (n == 0) {
                        fputs("\\ufffd", f);
                        p++;
                        continue;
                }
                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p < 0x20)
                        fprintf(f, "\\u%04x", *p);
                else
                        fwrite(p, 1, n, f);
                p += n;
        }
        fputc('"', f);
}

void procd_json_write_member(FILE *f, const char *key, const char *s)
{
        procd_json_write_string(f, key);
        fputs(": ", f);
        procd_json_write_string(f, s);
        if (!s || utf8_valid(s))
                return;
        fputs(", ", f);
        fprintf(f, "\"%s_hex\": \"", key);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                fprintf(f, "%02x", *p);
        fputc('"', f);
}

int procd_usage_write_json_members(const procd_usage *u, FILE *f, bool all_fields)
{
        char src[64];
        fprintf(f, "\"source\": \"%s\"", procd_usage_source_name(u, src, sizeof src));
        int keys = 1;
        if (u->fallback) {
                fputs(", \"fallback_reason\": ", f);
                procd_json_write_string(f, u->fallback_reason);
                keys++;
        }
        for (size_t i = 0; i < procd_usage_field_count(); i++) {
                const procd_u64 *v = procd_usage_field(u, i);
                if (!v->available || !(all_fields || fields[i].json))
                        continue;
                fprintf(f, ", \"%s\": %llu", fields[i].name, (unsigned long long) v->value);
                keys++;
        }
        return keys;
}
