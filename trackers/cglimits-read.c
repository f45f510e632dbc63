/* cglimits-read.c - the limits in force on a cgroup, read back (see cglimits.h,
 * tr_cgroup_limits_now): what `procctl list` shows beside the usage. */
#include "cglimits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-internal.h"
#include "util.h"

/* v1 writes "-1" as PAGE_COUNTER_MAX pages (9223372036854771712 on 4 KiB pages): any value
 * from 2^62 up is no limit. */
#define V1_UNLIMITED_FROM (1ULL << 62)

/* The first word of text as a limit: "max", "-1" or >= 2^62 -> unlimited (false). */
static bool parse_limit_word(const char *text, uint64_t *out)
{
        char word[32];
        if (sscanf(text, "%31s", word) != 1 || strcmp(word, "max") == 0 || word[0] == '-')
                return false;
        uint64_t v;
        if (tr_parse_u64(word, &v) < 0 || v >= V1_UNLIMITED_FROM)
                return false;
        *out = v;
        return true;
}

/* The kept-open file (cgroup-internal.h) of knob id in v2 or v1; period: v1's
 * cpu.cfs_period_us beside cpu.cfs_quota_us. */
static enum tr_cg_hot knob_file(tr_limit_id id, bool v2, bool period)
{
        switch (id) {
        case TR_LIMIT_MEMORY_MAX:
                return v2 ? H_MEM_MAX : H1_MEM_LIMIT;
        case TR_LIMIT_PIDS_MAX:
                return v2 ? H_PIDS_MAX : H1_PIDS_MAX;
        case TR_LIMIT_CPUS:
        default:
                return v2 ? H_CPU_MAX : period ? H1_CPU_PERIOD : H1_CPU_QUOTA;
        }
}

/* Read knob id's file (v2 or v1, wherever the controller is) in cg through the fd the
 * handle keeps (a pread per call; closed at rest): buf holds its text, *v2 says which
 * version answered.  false when missing. */
static bool read_knob(tr_cgroup *cg, tr_limit_id id, bool period, char *buf, size_t size, bool *v2)
{
        const tr_limit_knob *k = tr_limit_knob_get(id);
        const tr_hierarchies *hs = tr_cgroup_hierarchies(cg);
        int i = tr_limit_hierarchy(hs, k->ctrl);
        if (i < 0 || tr_cgroup_dirfd(cg, i) < 0)
                return false;
        *v2 = hs->h[i].is_v2;
        return tr_cg_hot_read(cg, knob_file(id, *v2, period), buf, size) >= 0;
}

static void set(tr_u64 *dst, uint64_t v, bool v2)
{
        *dst = (tr_u64){ .value = v, .available = true, .source = v2 ? TR_SRC_CGROUP_V2 : TR_SRC_CGROUP_V1 };
}

void tr_cgroup_limits_now(tr_cgroup *cg, tr_limits_now *out)
{
        memset(out, 0, sizeof *out);
        char buf[128];
        bool v2;
        uint64_t v;
        if (read_knob(cg, TR_LIMIT_MEMORY_MAX, false, buf, sizeof buf, &v2) && parse_limit_word(buf, &v))
                set(&out->memory_max_bytes, v, v2);
        if (read_knob(cg, TR_LIMIT_PIDS_MAX, false, buf, sizeof buf, &v2) && parse_limit_word(buf, &v))
                set(&out->pids_max, v, v2);
        /* v2 cpu.max "QUOTA PERIOD"; v1 cpu.cfs_quota_us (-1: none) and cpu.cfs_period_us */
        if (read_knob(cg, TR_LIMIT_CPUS, false, buf, sizeof buf, &v2) && parse_limit_word(buf, &v)) {
                uint64_t period = 0;
                char pbuf[64];
                const char *p = v2 ? strchr(buf, ' ') : NULL;
                if (v2 && p)
                        parse_limit_word(p + 1, &period);
                else if (!v2 && read_knob(cg, TR_LIMIT_CPUS, true, pbuf, sizeof pbuf, &v2))
                        parse_limit_word(pbuf, &period);
                if (period > 0) {
                        set(&out->cpu_quota_usec, v, v2);
                        set(&out->cpu_period_usec, period, v2);
                }
        }
}
