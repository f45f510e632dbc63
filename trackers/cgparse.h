/* cgparse.h - pure parsers of cgroup and /proc file formats (no I/O), unit-tested on
 * fixture files from real v2, hybrid and v1 hosts.  Each returns 0 or -EINVAL and sets
 * only the usage fields its text really holds (a missing key leaves the field unavailable). */
#pragma once

#include <stdint.h>

#include "usage.h"

/* Generic "key value\n" lines (cpu.stat, memory.stat, memory.events, pids.events...):
 * 0 and *out set when key is present, -ENOENT when absent, -EINVAL when malformed. */
int tr_keyed_u64(const char *text, const char *key, uint64_t *out);
/* The same for n keys (n <= 32) in one pass over the text: bit i of *found says keys[i]
 * was present (its first line counts) and vals[i] holds its value.  0, or -EINVAL when a
 * key asked for is malformed. */
int tr_keyed_u64s(const char *text, const char *const *keys, size_t n, uint64_t *vals, uint32_t *found);

/* v2 cpu.stat: usage_usec, user_usec, system_usec. */
int tr_parse_cpu_stat(const char *text, tr_usage *u);
/* v1 cpuacct.stat ("user N\nsystem N" in USER_HZ ticks) -> usec, with user_hz ticks/s. */
int tr_parse_cpuacct_stat(const char *text, long user_hz, tr_usage *u);
/* v1 cpuacct.usage (nanoseconds) -> cpu_usec. */
int tr_parse_cpuacct_usage(const char *text, tr_usage *u);
/* v1 cpuacct.usage_all ("cpu user system" header, a line a CPU, ns) -> the sums as
 * cpu_user_usec and cpu_system_usec.  -EINVAL when malformed, -ERANGE on overflow. */
int tr_parse_cpuacct_usage_all(const char *text, tr_usage *u);
/* v2 memory.stat: anon, file, shmem -> memory_*_bytes and rss_bytes = anon + shmem. */
int tr_parse_memory_stat_v2(const char *text, tr_usage *u);
/* v1 memory.stat: total_rss (+total_rss_huge is included in it), total_cache, total_shmem ->
 * anon = total_rss, file = total_cache - total_shmem, shmem, rss = total_rss + total_shmem. */
int tr_parse_memory_stat_v1(const char *text, tr_usage *u);
/* v1 memory.numa_stat (CONFIG_NUMA): the hierarchical_anon and hierarchical_total LRU page
 * counts ("hierarchical_anon=N N0=N ..."), in bytes.  -EINVAL when either is missing or
 * malformed, -ERANGE when it overflows. */
int tr_parse_memory_numa_stat_v1(const char *text, long page_size, uint64_t *anon_bytes, uint64_t *total_bytes);
/* v2 memory.events: oom_kill, oom_group_kill. */
int tr_parse_memory_events(const char *text, tr_usage *u);
/* v1 memory.oom_control: the oom_kill line (NOT hierarchical: callers sum descendants). */
int tr_parse_oom_control_v1(const char *text, uint64_t *oom_kill);
/* v2 io.stat: sum of rbytes= and wbytes= over devices. */
int tr_parse_io_stat(const char *text, tr_usage *u);
/* v1 blkio.throttle.io_service_bytes(_recursive): sum of "MAJ:MIN Read N" / "Write N". */
int tr_parse_blkio_bytes(const char *text, tr_usage *u);
/* cpu/memory/io .pressure: "some ... total=N" and "full ... total=N" (usec). */
int tr_parse_pressure(const char *text, uint64_t *some_usec, uint64_t *full_usec, bool *has_full);
/* v2 cgroup.events: populated, frozen (each -1 when absent). */
int tr_parse_cgroup_events(const char *text, int *populated, int *frozen);
