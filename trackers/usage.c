#include "usage.h"

#include <stddef.h>
#include <string.h>

static const struct {
        const char *name;
        size_t offset;
        bool json;
} fields[] = {
#define TR_USAGE_ROW(n, j) { #n, offsetof(tr_usage, n), j },
        TR_USAGE_FIELDS(TR_USAGE_ROW)
#undef TR_USAGE_ROW
};

size_t tr_usage_field_count(void) { return sizeof fields / sizeof fields[0]; }
const char *tr_usage_field_name(size_t i) { return i < tr_usage_field_count() ? fields[i].name : NULL; }
bool tr_usage_field_is_json(size_t i) { return i < tr_usage_field_count() && fields[i].json; }

const tr_u64 *tr_usage_field(const tr_usage *u, size_t i)
{
        return i < tr_usage_field_count() ? (const tr_u64 *) ((const char *) u + fields[i].offset) : NULL;
}

void tr_usage_init(tr_usage *u) { memset(u, 0, sizeof *u); }

void tr_u64_set(tr_usage *u, tr_u64 *field, uint64_t value, tr_source src)
{
        field->value = value;
        field->available = true;
        field->source = (uint8_t) src;
        u->sources |= src;
}

void tr_usage_fill_missing(tr_usage *dst, const tr_usage *src)
{
        for (size_t i = 0; i < tr_usage_field_count(); i++) {
                tr_u64 *d = (tr_u64 *) ((char *) dst + fields[i].offset);
                const tr_u64 *s = tr_usage_field(src, i);
                if (!d->available && s->available)
                        tr_u64_set(dst, d, s->value, (tr_source) s->source);
        }
}

/* Fields whose value for two disjoint groups is not the sum of theirs. */
static bool is_additive(size_t offset)
{
        static const size_t not_sums[] = {
                offsetof(tr_usage, memory_peak_bytes),    offsetof(tr_usage, pids_peak),
                offsetof(tr_usage, psi_cpu_some_usec),    offsetof(tr_usage, psi_cpu_full_usec),
                offsetof(tr_usage, psi_memory_some_usec), offsetof(tr_usage, psi_memory_full_usec),
                offsetof(tr_usage, psi_io_some_usec),     offsetof(tr_usage, psi_io_full_usec),
        };
        for (size_t i = 0; i < sizeof not_sums / sizeof not_sums[0]; i++)
                if (not_sums[i] == offset)
                        return false;
        return true;
}

void tr_usage_zero(tr_usage *u)
{
        tr_usage_init(u);
        for (size_t i = 0; i < tr_usage_field_count(); i++)
                if (is_additive(fields[i].offset))
                        ((tr_u64 *) ((char *) u + fields[i].offset))->available = true;
}

void tr_usage_add(tr_usage *dst, const tr_usage *src)
{
        for (size_t i = 0; i < tr_usage_field_count(); i++) {
                tr_u64 *d = (tr_u64 *) ((char *) dst + fields[i].offset);
                const tr_u64 *s = tr_usage_field(src, i);
                if (!d->available || !s->available || !is_additive(fields[i].offset)) {
                        *d = (tr_u64){ 0 };
                        continue;
                }
                d->value = d->value + s->value < d->value ? UINT64_MAX : d->value + s->value;
                d->source |= s->source; /* e.g. cgroup + proc */
        }
        dst->sources |= src->sources;
        if (src->fallback && !dst->fallback) {
                dst->fallback = true;
                memcpy(dst->fallback_reason, src->fallback_reason, sizeof dst->fallback_reason);
        }
}

const char *tr_usage_source_name(const tr_usage *u, char *buf, size_t size)
{
        static const struct {
                unsigned bit;
                const char *name;
        } names[] = { { TR_SRC_CGROUP_V2, "cgroup" }, { TR_SRC_CGROUP_V1, "cgroup-v1" }, { TR_SRC_PROC, "proc" } };
        size_t off = 0;
        if (size)
                buf[0] = '\0';
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                if (!(u->sources & names[i].bit))
                        continue;
                int n = snprintf(buf + off, size > off ? size - off : 0, "%s%s", off ? "+" : "", names[i].name);
                if (n > 0)
                        off += (size_t) n;
        }
        if (off == 0 && size)
                snprintf(buf, size, "none");
        return buf;
}
