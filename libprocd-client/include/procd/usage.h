/* usage.h - a family's usage as GetUsage returns it: the public record of libprocd-client.
 *
 * Unknown is not zero: every field carries `available`; a field procd could not read stays
 * unavailable.  The field names are the keys of GetUsage's a{sv} reply (docs/dbus-api.md)
 * and of `procctl usage --json`.  X(name, json): json = 1 for the keys written by
 * procd_usage_write_json_members unless all fields are asked for.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which kind of source answered (the record's `sources`, each field's `source`). */
enum procd_source {
        PROCD_SRC_CGROUP_V2 = 1u << 0,
        PROCD_SRC_CGROUP_V1 = 1u << 1,
        PROCD_SRC_PROC = 1u << 2,
};

typedef struct procd_u64 {
        uint64_t value;
        bool available;
        uint8_t source; /* the procd_source bit that answered, when the record has one */
} procd_u64;

#define PROCD_USAGE_FIELDS(X)                                                                 \
        X(num_procs, 1)            /* processes in the family now */                          \
        X(cpu_user_usec, 1)        /* CPU in user mode, lifetime of the family */             \
        X(cpu_system_usec, 1)      /* CPU in kernel mode */                                   \
        X(cpu_usec, 1)             /* total CPU */                                            \
        X(memory_current_bytes, 1) /* charged memory now, page cache included */              \
        X(memory_peak_bytes, 1)    /* high-water mark of memory_current */                    \
        X(memory_anon_bytes, 0)                                                              \
        X(memory_file_bytes, 0)    /* page cache, reported apart from rss */                  \
        X(memory_shmem_bytes, 0)                                                             \
        X(rss_bytes, 1)            /* anon + shmem (cgroup); sum of VmRSS (/proc) */          \
        X(image_size_bytes, 0)     /* sum of virtual sizes (/proc only) */                    \
        X(pids_current, 0)                                                                   \
        X(pids_peak, 1)                                                                      \
        X(oom_kills, 1)            /* processes killed by the OOM killer in the family */     \
        X(oom_group_kills, 0)                                                                \
        X(io_read_bytes, 1)                                                                  \
        X(io_write_bytes, 1)                                                                 \
        X(psi_cpu_some_usec, 0)    /* pressure stall totals */                                \
        X(psi_cpu_full_usec, 0)                                                              \
        X(psi_memory_some_usec, 0)                                                           \
        X(psi_memory_full_usec, 0)                                                           \
        X(psi_io_some_usec, 0)                                                               \
        X(psi_io_full_usec, 0)

typedef struct procd_usage {
#define PROCD_USAGE_MEMBER(name, json) procd_u64 name;
        PROCD_USAGE_FIELDS(PROCD_USAGE_MEMBER)
#undef PROCD_USAGE_MEMBER
        unsigned sources;          /* OR of the procd_source bits that answered some field */
        bool fallback;             /* the /proc tracker answered where the cgroup failed */
        char fallback_reason[160]; /* why, when fallback */
} procd_usage;

void procd_usage_init(procd_usage *u); /* every field unavailable */

/* The fields in X-macro order: name, whether `procctl usage --json` shows it, a pointer. */
size_t procd_usage_field_count(void);
const char *procd_usage_field_name(size_t i);
bool procd_usage_field_is_json(size_t i);
const procd_u64 *procd_usage_field(const procd_usage *u, size_t i);
procd_u64 *procd_usage_field_mut(procd_usage *u, size_t i);

/* "cgroup", "cgroup-v1", "cgroup+cgroup-v1", "proc", ... from u->sources */
const char *procd_usage_source_name(const procd_usage *u, char *buf, size_t size);
/* the procd_source bits of such a name (the daemon's "source" key); 0 when unknown */
unsigned procd_usage_sources_from_name(const char *name);

/* Write `"source": "...", "key": value, ...` for the json=1 fields that are available (all
 * fields when all_fields), without braces, to f.  Returns the number of keys. */
int procd_usage_write_json_members(const procd_usage *u, FILE *f, bool all_fields);

/* Write s as a JSON string literal: quotes, backslashes and control characters escaped, and
 * every byte that is not part of valid UTF-8 written as \ufffd (U+FFFD), so the output is
 * always valid UTF-8 JSON whatever s holds. */
void procd_json_write_string(FILE *f, const char *s);
/* Write "key": "s" the same way; when s is not valid UTF-8, also "key_hex": its raw bytes
 * in hex (lower case, two digits a byte), from which a reader recovers them exactly
 * (`xxd -r -p`, bytes.fromhex). */
void procd_json_write_member(FILE *f, const char *key, const char *s);

#ifdef __cplusplus
}
#endif
