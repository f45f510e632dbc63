/* usage.h - a family's usage record.
 *
 * Unknown is not zero: every field carries `available`; a field the kernel cannot give
 * (controller missing, file absent, process gone) stays unavailable.  Every field also
 * says which source answered it, and the record says whether the /proc fallback was used
 * and why.
 *
 * The field list is one X-macro so that the struct, JSON output and tests cannot drift.
 * X(name, json): json = 1 for the keys of `procctl usage --json` / starter reports (written
 * through libprocd-client's procd_usage, whose field list matches this one: test_usage_record).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum tr_source {
        TR_SRC_NONE = 0,
        TR_SRC_CGROUP_V2 = 1u << 0, /* a v2 cgroup file */
        TR_SRC_CGROUP_V1 = 1u << 1, /* a v1 hierarchy file */
        TR_SRC_PROC = 1u << 2,      /* a /proc scan */
} tr_source;

typedef struct tr_u64 {
        uint64_t value;
        bool available;
        uint8_t source; /* the tr_source bit that answered (bits of each, for a sum) */
} tr_u64;

#define TR_USAGE_FIELDS(X)                                                                    \
        X(num_procs, 1)            /* processes in the family now */                          \
        X(cpu_user_usec, 1)        /* CPU in user mode, lifetime of the family */             \
        X(cpu_system_usec, 1)      /* CPU in kernel mode */                                   \
        X(cpu_usec, 1)             /* total CPU (v2 usage_usec, v1 cpuacct.usage) */          \
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

typedef struct tr_usage {
#define TR_USAGE_MEMBER(name, json) tr_u64 name;
        TR_USAGE_FIELDS(TR_USAGE_MEMBER)
#undef TR_USAGE_MEMBER
        unsigned sources;          /* OR of the tr_source bits that answered some field */
        bool fallback;             /* the /proc tracker answered where the cgroup failed */
        char fallback_reason[160]; /* why, when fallback */
} tr_usage;

/* What a usage query asks for, by group of fields: each group costs the reads it needs
 * (see NOTES "GET_USAGE cost").  A field not asked for may stay unavailable. */
enum tr_usage_want {
        TR_WANT_CPU = 1u << 0,         /* cpu_user_usec, cpu_system_usec, cpu_usec */
        TR_WANT_MEMORY = 1u << 1,      /* memory_current_bytes, memory_peak_bytes */
        TR_WANT_MEMORY_STAT = 1u << 2, /* rss_bytes, memory_anon/file/shmem_bytes (see TR_WANT_RSS) */
        TR_WANT_PROCS = 1u << 3,       /* num_procs */
        TR_WANT_IO = 1u << 4,          /* io_read_bytes, io_write_bytes */
        TR_WANT_PIDS = 1u << 5,        /* pids_current, pids_peak */
        TR_WANT_OOM = 1u << 6,         /* oom_kills, oom_group_kills */
        TR_WANT_PSI = 1u << 7,         /* psi_* */
        /* io_read/write_bytes from v1 blkio.throttle.io_service_bytes_recursive as well
         * (where v2 io.stat is not there): those count only devices that have a throttle rule
         * in the cgroup ("Total 0" otherwise, on hybrid hosts too): a partial figure, so
         * neither GET_USAGE nor GetUsage asks for it */
        TR_WANT_IO_THROTTLE = 1u << 8,
        /* rss_bytes alone (and memory_current_bytes with TR_WANT_MEMORY), from the cheapest
         * file that has it: v2 memory.stat (there is no other), v1 memory.numa_stat's
         * hierarchical LRU counts (~3 us against ~6.5 us for the ~40 formatted lines of v1
         * memory.stat on 6.18: NOTES 14.13).  With TR_WANT_MEMORY_STAT memory.stat answers. */
        TR_WANT_RSS = 1u << 9,
        /* cpu_user_usec and cpu_system_usec alone (cpu_usec too where the same file gives
         * it), from the fewest files that have them: v2 cpu.stat, v1 cpuacct.usage_all.  On
         * v1 the total, cpuacct.usage, is one more read, and the classic record has no total
         * (issue 20); it is read only when no file gives the split.  With TR_WANT_CPU every
         * CPU field. */
        TR_WANT_CPU_SPLIT = 1u << 10,
        TR_WANT_ALL = 0x7ffu,
};

void tr_usage_init(tr_usage *u); /* every field unavailable */

/* Set a field: value, available, source; also ORs source into u->sources. */
void tr_u64_set(tr_usage *u, tr_u64 *field, uint64_t value, tr_source src);

/* For each field unavailable in dst but available in src, copy it (with its source). */
void tr_usage_fill_missing(tr_usage *dst, const tr_usage *src);

/* dst += src, for records of disjoint sets of processes (a family and a subfamily it does
 * not hold).  A field stays available only when both have it (unknown is not zero).  A
 * peak or a pressure total is no sum: memory_peak_bytes, pids_peak and psi_* become
 * unavailable.  sources and fallback are merged (dst's reason kept when both have one). */
void tr_usage_add(tr_usage *dst, const tr_usage *src);

/* The usage of no process at all, a sum's start: every field tr_usage_add sums known and 0
 * (peaks and pressure totals unknown), no source. */
void tr_usage_zero(tr_usage *u);

/* "cgroup", "cgroup-v1", "cgroup+cgroup-v1", "proc", "cgroup+proc", ... from u->sources */
const char *tr_usage_source_name(const tr_usage *u, char *buf, size_t size);

/* Name of each field in X-macro order, and a pointer to it; for iteration in tests/output. */
size_t tr_usage_field_count(void);
const char *tr_usage_field_name(size_t i);
bool tr_usage_field_is_json(size_t i);
const tr_u64 *tr_usage_field(const tr_usage *u, size_t i);
