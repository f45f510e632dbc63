/* cgparse.c - pure parsers of cgroup file formats (kernel Documentation/admin-guide/
 * cgroup-v2.rst, cgroup-v1/{memory,cpuacct,blkio-controller}.rst, accounting/psi.rst). */
#include "cgparse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *next_line(const char *p)
{
        const char *nl = strchr(p, '\n');
        return nl ? nl + 1 : p + strlen(p);
}

int tr_keyed_u64s(const char *text, const char *const *keys, size_t n, uint64_t *vals, uint32_t *found)
{
        *found = 0;
        if (!text || n > 32)
                return -EINVAL;
        size_t klens[32];
        uint64_t first[4] = { 0 }; /* the keys' first bytes (a bit each): other lines are skipped whole */
        for (size_t i = 0; i < n; i++) {
                klens[i] = strlen(keys[i]);
                unsigned char c = (unsigned char) keys[i][0];
                first[c >> 6] |= 1ull << (c & 63);
        }
        uint32_t all = n == 32 ? UINT32_MAX : (1u << n) - 1;
        /* one pass: each line's key is compared, by length first, with the keys still
         * missing (memory.stat has ~40 lines: a pass per key with strncmp cost ~8k
         * instructions per GET_USAGE) */
        for (const char *p = text; *p && *found != all; p = next_line(p)) {
                unsigned char c0 = (unsigned char) *p;
                if (!(first[c0 >> 6] & (1ull << (c0 & 63))))
                        continue;
                size_t klen = strcspn(p, " \t\n"); /* glibc's is vectorized: ~8 instructions a byte by hand */
                if (p[klen] != ' ' && p[klen] != '\t')
                        continue;
                for (size_t i = 0; i < n; i++) {
                        if (klens[i] != klen || (*found & (1u << i)) || memcmp(p, keys[i], klen) != 0)
                                continue;
                        const char *v = p + klen;
                        while (*v == ' ' || *v == '\t')
                                v++;
                        if (tr_take_u64(&v, &vals[i]) < 0 || (*v != '\n' && *v != '\0' && *v != ' '))
                                return -EINVAL;
                        *found |= 1u << i;
                        break;
                }
        }
        return 0;
}

int tr_keyed_u64(const char *text, const char *key, uint64_t *out)
{
        if (!text || !key)
                return -EINVAL;
        uint32_t found;
        int r = tr_keyed_u64s(text, &key, 1, out, &found);
        return r < 0 ? r : found ? 0 : -ENOENT;
}

/* Set field from key when present; -EINVAL only when present and malformed. */
static int set_keyed(tr_usage *u, tr_u64 *field, const char *text, const char *key, tr_source src)
{
        uint64_t v;
        int r = tr_keyed_u64(text, key, &v);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return -EINVAL;
        tr_u64_set(u, field, v, src);
        return 0;
}

/* The length of the line at p, its newline apart. */
static size_t line_len(const char *p)
{
        const char *nl = strchr(p, '\n');
        return nl ? (size_t) (nl - p) : strlen(p);
}

/* Whether s begins with the n bytes of lit (no NUL among them): byte by byte, stopping at
 * the first that differs, so that no byte past the end of s is read. */
static bool starts_with(const char *s, const char *lit, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (s[i] != lit[i])
                        return false;
        return true;
}

/* "KEY VALUE\n" (or at the end of the text) at *p, with key's length given: *p moved past
 * it.  False, *p unmoved, for anything else. */
static bool take_keyed_line(const char **p, const char *key, size_t klen, uint64_t *v)
{
        const char *s = *p;
        if (!starts_with(s, key, klen) || s[klen] != ' ')
                return false;
        s += klen + 1;
        if (tr_take_u64(&s, v) < 0 || (*s != '\n' && *s != '\0'))
                return false;
        *p = *s ? s + 1 : s;
        return true;
}

#define TAKE_KEYED_LINE(p, key, v) take_keyed_line((p), key, sizeof key - 1, (v))

int tr_parse_cpu_stat(const char *text, tr_usage *u)
{
        if (!text)
                return -EINVAL;
        static const char *const keys[] = { "usage_usec", "user_usec", "system_usec" };
        tr_u64 *const fields[] = { &u->cpu_usec, &u->cpu_user_usec, &u->cpu_system_usec };
        uint64_t v[3];
        uint32_t found = 7;
        /* the kernel's order (cgroup_base_stat_cputime_show, every kernel with cgroup2's
         * cpu.stat): its three first lines, read as such; any other text by key (~900
         * instructions of every GET_USAGE against ~300, issue 20) */
        const char *p = text;
        if (!TAKE_KEYED_LINE(&p, "usage_usec", &v[0]) || !TAKE_KEYED_LINE(&p, "user_usec", &v[1]) ||
            !TAKE_KEYED_LINE(&p, "system_usec", &v[2])) {
                if (tr_keyed_u64s(text, keys, 3, v, &found) < 0)
                        return -EINVAL;
        }
        for (size_t i = 0; i < 3; i++)
                if (found & (1u << i))
                        tr_u64_set(u, fields[i], v[i], TR_SRC_CGROUP_V2);
        return 0;
}

int tr_parse_cpuacct_stat(const char *text, long user_hz, tr_usage *u)
{
        if (!text || user_hz <= 0)
                return -EINVAL;
        uint64_t ticks;
        int r = tr_keyed_u64(text, "user", &ticks);
        if (r == -EINVAL)
                return r;
        if (r == 0)
                tr_u64_set(u, &u->cpu_user_usec, ticks * 1000000u / (uint64_t) user_hz, TR_SRC_CGROUP_V1);
        r = tr_keyed_u64(text, "system", &ticks);
        if (r == -EINVAL)
                return r;
        if (r == 0)
                tr_u64_set(u, &u->cpu_system_usec, ticks * 1000000u / (uint64_t) user_hz, TR_SRC_CGROUP_V1);
        return 0;
}

int tr_parse_cpuacct_usage(const char *text, tr_usage *u)
{
        uint64_t ns;
        if (!text || tr_parse_u64(text, &ns) < 0)
                return -EINVAL;
        tr_u64_set(u, &u->cpu_usec, ns / 1000u, TR_SRC_CGROUP_V1);
        return 0;
}

/* cpuacct.usage_all: a "cpu user system" header, then "CPU USER_NS SYSTEM_NS" a CPU; the
 * sums into cpu_user_usec and cpu_system_usec.  The same counters as cpuacct.usage_user
 * and cpuacct.usage_sys (cpuacct_cpuusage_read, Linux 4.7+), in one read.  Kernel quirk
 * (Linux 6.18, kernel/sched/cpuacct.c cpuacct_cpuusage_read; the fixture hybrid/usage_all):
 * user and system are the tick-sampled cputime, while cpuacct.usage is the scheduler's
 * exact runtime, so user + system is not the total: the total stays cpuacct.usage's. */
int tr_parse_cpuacct_usage_all(const char *text, tr_usage *u)
{
        static const char header[] = "cpu user system\n";
        if (!text || strncmp(text, header, sizeof header - 1) != 0)
                return -EINVAL;
        uint64_t sum[2] = { 0, 0 };
        const char *p = text + sizeof header - 1;
        if (!*p)
                return -EINVAL; /* a CPU a line: none is a cut text */
        while (*p) {
                uint64_t v[3]; /* the CPU's number, user, system */
                for (int k = 0; k < 3; k++) {
                        int r = tr_take_u64(&p, &v[k]);
                        if (r < 0)
                                return r;
                        if (*p != (k < 2 ? ' ' : '\n') && !(k == 2 && *p == '\0'))
                                return -EINVAL;
                        if (*p)
                                p++;
                }
                for (int k = 0; k < 2; k++)
                        if (__builtin_add_overflow(sum[k], v[k + 1], &sum[k]))
                                return -ERANGE;
        }
        tr_u64_set(u, &u->cpu_user_usec, sum[0] / 1000u, TR_SRC_CGROUP_V1);
        tr_u64_set(u, &u->cpu_system_usec, sum[1] / 1000u, TR_SRC_CGROUP_V1);
        return 0;
}

/* Shared tail of both memory.stat parsers.  shmem is counted in the kernel's page cache
 * ("file" in v2, "cache" in v1) but cannot be dropped like cache: it belongs with rss. */
static void set_memory(tr_usage *u, tr_source src, bool has_anon, uint64_t anon, bool has_file, uint64_t file,
                       bool has_shmem, uint64_t shmem)
{
        if (has_anon)
                tr_u64_set(u, &u->memory_anon_bytes, anon, src);
        if (has_shmem)
                tr_u64_set(u, &u->memory_shmem_bytes, shmem, src);
        if (has_file)
                tr_u64_set(u, &u->memory_file_bytes, file - (has_shmem && shmem <= file ? shmem : 0), src);
        if (has_anon)
                tr_u64_set(u, &u->rss_bytes, anon + (has_shmem ? shmem : 0), src);
}


int tr_parse_memory_stat_v2(const char *text, tr_usage *u)
{
        if (!text)
                return -EINVAL;
        static const char *const keys[] = { "anon", "file", "shmem" };
        uint64_t v[3] = { 0 };
        uint32_t f;
        if (tr_keyed_u64s(text, keys, 3, v, &f) < 0)
                return -EINVAL;
        set_memory(u, TR_SRC_CGROUP_V2, f & 1, v[0], f & 2, v[1], f & 4, v[2]);
        return 0;
}

int tr_parse_memory_stat_v1(const char *text, tr_usage *u)
{
        if (!text)
                return -EINVAL;
        /* total_* are hierarchical (this cgroup and its descendants); the plain keys count
         * only this cgroup's own pages.  Take the plain ones only if total_* are missing. */
        static const char *const keys[] = { "total_rss", "total_cache", "total_shmem", "rss", "cache", "shmem" };
        uint64_t v[6] = { 0 };
        uint32_t f;
        if (tr_keyed_u64s(text, keys, 6, v, &f) < 0)
                return -EINVAL;
        unsigned o = (f & 7) ? 0 : 3; /* the totals, else the plain keys */
        /* v1 "rss" is anonymous memory (rss_huge is already included in it). */
        set_memory(u, TR_SRC_CGROUP_V1, f & (1u << o), v[o], f & (2u << o), v[o + 1], f & (4u << o), v[o + 2]);
        return 0;
}

int tr_parse_memory_numa_stat_v1(const char *text, long page_size, uint64_t *anon_bytes, uint64_t *total_bytes)
{
        if (!text || page_size <= 0)
                return -EINVAL;
        static const char prefix[] = "hierarchical_"; /* the lines without it: this cgroup alone */
        const size_t np = sizeof prefix - 1;
        uint64_t *const outs[] = { total_bytes, anon_bytes };
        unsigned found = 0;
        for (const char *p = text, *next; *p && found != 3; p = next) {
                size_t len = line_len(p);
                next = p[len] ? p + len + 1 : p + len;
                /* most lines: one byte decides; the fixed keys compared within the line (by
                 * strncmp, ~700 instructions of every v1 GET_USAGE) */
                if (*p != 'h' || len < np + 5 || memcmp(p, prefix, np) != 0)
                        continue;
                const char *v = p + np;
                unsigned i;
                if (len >= np + 6 && memcmp(v, "total=", 6) == 0)
                        i = 0, v += 6;
                else if (memcmp(v, "anon=", 5) == 0)
                        i = 1, v += 5;
                else
                        continue;
                uint64_t pages;
                int r = tr_take_u64(&v, &pages);
                if (r < 0)
                        return r;
                if (*v != ' ' && *v != '\n' && *v != '\0')
                        return -EINVAL;
                if (pages > UINT64_MAX / (uint64_t) page_size)
                        return -ERANGE;
                *outs[i] = pages * (uint64_t) page_size;
                found |= 1u << i;
        }
        return found == 3 ? 0 : -EINVAL;
}

int tr_parse_memory_events(const char *text, tr_usage *u)
{
        if (!text)
                return -EINVAL;
        int r = set_keyed(u, &u->oom_kills, text, "oom_kill", TR_SRC_CGROUP_V2);
        r |= set_keyed(u, &u->oom_group_kills, text, "oom_group_kill", TR_SRC_CGROUP_V2);
        return r ? -EINVAL : 0;
}

int tr_parse_oom_control_v1(const char *text, uint64_t *oom_kill)
{
        if (!text)
                return -EINVAL;
        /* "oom_kill" appeared in 4.13; older kernels have only oom_kill_disable/under_oom. */
        int r = tr_keyed_u64(text, "oom_kill", oom_kill);
        return r == -ENOENT ? -EINVAL : r;
}

int tr_parse_io_stat(const char *text, tr_usage *u)
{
        if (!text)
                return -EINVAL;
        uint64_t rd = 0, wr = 0;
        /* "MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N", one line per device;
         * no line at all when the cgroup did no I/O.  Other policies append their own keys
         * whose values are not all plain numbers (iocost "cost.vrate=1.00" at the root,
         * iolatency "depth=max" and "use_delay=-1" with blkcg.debug_stats): only rbytes and
         * wbytes must parse; any other token is skipped. */
        for (const char *p = text; *p; p = next_line(p)) {
                size_t len = strcspn(p, "\n");
                if (len == 0)
                        continue;
                const char *end = p + len;
                const char *q = p + strcspn(p, " \n");
                if (!memchr(p, ':', (size_t) (q - p)))
                        return -EINVAL;
                while (q < end) {
                        q += strspn(q, " ");
                        if (q >= end)
                                break;
                        const char *eq = memchr(q, '=', (size_t) (end - q));
                        if (!eq)
                                return -EINVAL;
                        const char *tok_end = q + strcspn(q, " \n");
                        if (eq > tok_end)
                                return -EINVAL; /* a token without '=' */
                        bool rb = eq - q == 6 && memcmp(q, "rbytes", 6) == 0;
                        bool wb = eq - q == 6 && memcmp(q, "wbytes", 6) == 0;
                        if (rb || wb) {
                                const char *v = eq + 1;
                                uint64_t x;
                                if (tr_take_u64(&v, &x) < 0 || v != tok_end)
                                        return -EINVAL;
                                *(rb ? &rd : &wr) += x;
                        }
                        q = tok_end;
                }
        }
        tr_u64_set(u, &u->io_read_bytes, rd, TR_SRC_CGROUP_V2);
        tr_u64_set(u, &u->io_write_bytes, wr, TR_SRC_CGROUP_V2);
        return 0;
}

int tr_parse_blkio_bytes(const char *text, tr_usage *u)
{
        if (!text)
                return -EINVAL;
        uint64_t rd = 0, wr = 0;
        bool devices = false;
        /* "MAJ:MIN Read N" / Write / Sync / Async / Discard / Total per device, then a last
         * "Total N" line for all devices. */
        for (const char *p = text; *p; p = next_line(p)) {
                char dev[32], op[16];
                unsigned long long v;
                if (*p == '\n')
                        continue;
                if (sscanf(p, "%31s %15s %llu", dev, op, &v) == 3) {
                        if (!strchr(dev, ':'))
                                return -EINVAL;
                        devices = true;
                        if (strcmp(op, "Read") == 0)
                                rd += v;
                        else if (strcmp(op, "Write") == 0)
                                wr += v;
                } else if (sscanf(p, "%15s %llu", op, &v) == 2 && strcmp(op, "Total") == 0) {
                        continue;
                } else {
                        return -EINVAL;
                }
        }
        /* Quirk: the v1 throttle counters are kept per device only once the device has a
         * throttle group for this cgroup; a file that is just "Total 0" cannot tell "no I/O"
         * from "not counted here", so the fields stay unavailable (unknown is not zero). */
        if (!devices)
                return 0;
        tr_u64_set(u, &u->io_read_bytes, rd, TR_SRC_CGROUP_V1);
        tr_u64_set(u, &u->io_write_bytes, wr, TR_SRC_CGROUP_V1);
        return 0;
}

static int pressure_total(const char *line, uint64_t *out)
{
        const char *t = strstr(line, "total=");
        const char *nl = strchr(line, '\n');
        if (!t || (nl && t > nl))
                return -EINVAL;
        t += 6;
        return tr_take_u64(&t, out) < 0 ? -EINVAL : 0;
}

int tr_parse_pressure(const char *text, uint64_t *some_usec, uint64_t *full_usec, bool *has_full)
{
        if (!text)
                return -EINVAL;
        bool has_some = false;
        *has_full = false;
        /* "some avg10=0.00 avg60=0.00 avg300=0.00 total=N" and "full ..." (cpu "full" only
         * since 5.13; at the system level it is all zeros). */
        for (const char *p = text; *p; p = next_line(p)) {
                if (strncmp(p, "some ", 5) == 0) {
                        if (pressure_total(p, some_usec) < 0)
                                return -EINVAL;
                        has_some = true;
                } else if (strncmp(p, "full ", 5) == 0) {
                        if (pressure_total(p, full_usec) < 0)
                                return -EINVAL;
                        *has_full = true;
                }
        }
        return has_some ? 0 : -EINVAL;
}

int tr_parse_cgroup_events(const char *text, int *populated, int *frozen)
{
        if (!text)
                return -EINVAL;
        uint64_t v;
        *populated = -1;
        *frozen = -1;
        int r = tr_keyed_u64(text, "populated", &v);
        if (r == -EINVAL)
                return r;
        if (r == 0)
                *populated = v != 0;
        r = tr_keyed_u64(text, "frozen", &v);
        if (r == -EINVAL)
                return r;
        if (r == 0)
                *frozen = v != 0;
        return 0;
}
