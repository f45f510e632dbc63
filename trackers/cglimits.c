/* cglimits.c - the limit knobs table and their value formats (see cglimits.h). */
#include "cglimits.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cgparse.h"
#include "cgroup-walk.h"
#include "util.h"

static const tr_limit_knob knobs[TR_LIMIT_COUNT] = {
        /* option, controller, v2 file, v1 file, v2 format, v1 format, optional */
        [TR_LIMIT_MEMORY_MAX] = { "memory-max", TR_CTRL_MEMORY, "memory.max", "memory.limit_in_bytes", TR_FMT_MAX_OR_U64, TR_FMT_M1_OR_U64, false },
        [TR_LIMIT_MEMORY_SWAP_MAX] = { "memory-swap-max", TR_CTRL_MEMORY, "memory.swap.max", "memory.memsw.limit_in_bytes", TR_FMT_MAX_OR_U64, TR_FMT_MEMSW, false },
        [TR_LIMIT_MEMORY_HIGH] = { "memory-high", TR_CTRL_MEMORY, "memory.high", NULL, TR_FMT_MAX_OR_U64, TR_FMT_NONE, false },
        /* v2 only, where it exists; silently absent elsewhere (the starter kills the whole
         * family when the root dies anyway) */
        [TR_LIMIT_MEMORY_OOM_GROUP] = { "memory-oom-group", TR_CTRL_MEMORY, "memory.oom.group", NULL, TR_FMT_ONE, TR_FMT_NONE, true },
        [TR_LIMIT_CPUS] = { "cpus", TR_CTRL_CPU, "cpu.max", "cpu.cfs_quota_us", TR_FMT_QUOTA_PERIOD, TR_FMT_CFS, false },
        [TR_LIMIT_CPU_WEIGHT] = { "cpu-weight", TR_CTRL_CPU, "cpu.weight", "cpu.shares", TR_FMT_U64, TR_FMT_SHARES, false },
        [TR_LIMIT_CPUSET_CPUS] = { "cpuset-cpus", TR_CTRL_CPUSET, "cpuset.cpus", "cpuset.cpus", TR_FMT_TEXT, TR_FMT_TEXT, false },
        [TR_LIMIT_CPUSET_MEMS] = { "cpuset-mems", TR_CTRL_CPUSET, "cpuset.mems", "cpuset.mems", TR_FMT_TEXT, TR_FMT_TEXT, false },
        [TR_LIMIT_PIDS_MAX] = { "pids-max", TR_CTRL_PIDS, "pids.max", "pids.max", TR_FMT_MAX_OR_U64, TR_FMT_MAX_OR_U64, false },
        [TR_LIMIT_IO_MAX] = { "io-max", TR_CTRL_IO, "io.max", "blkio.throttle.read_bps_device", TR_FMT_IO_LINE, TR_FMT_IO_PER_KEY, false },
};

const tr_limit_knob *tr_limit_knob_get(tr_limit_id id)
{
        return (unsigned) id < TR_LIMIT_COUNT ? &knobs[id] : NULL;
}

unsigned long long tr_weight_to_shares(uint64_t weight)
{
        unsigned long long s = (unsigned long long) weight * 1024ULL / 100ULL;
        if (s < 2)
                s = 2;
        if (s > 262144)
                s = 262144;
        return s;
}

int tr_limit_hierarchy(const tr_hierarchies *hs, tr_controller ctrl)
{
        int i = tr_hierarchies_best(hs, ctrl);
        if (ctrl == TR_CTRL_IO && (i < 0 || !hs->h[i].is_v2))
                i = tr_hierarchies_best(hs, TR_CTRL_BLKIO);
        if (ctrl == TR_CTRL_BLKIO && i < 0)
                i = tr_hierarchies_best(hs, TR_CTRL_IO);
        return i;
}

static void put_u64(tr_limit_write *w, const char *file, uint64_t v, const char *unlimited)
{
        w->file = file;
        if (v == UINT64_MAX && unlimited)
                snprintf(w->value, sizeof w->value, "%s", unlimited);
        else
                snprintf(w->value, sizeof w->value, "%" PRIu64, v);
}

static const struct {
        const char *key, *v1file;
} io_keys[] = {
        { "rbps", "blkio.throttle.read_bps_device" },
        { "wbps", "blkio.throttle.write_bps_device" },
        { "riops", "blkio.throttle.read_iops_device" },
        { "wiops", "blkio.throttle.write_iops_device" },
};

/* "MAJ:MIN key=value..." (values: sizes with K/M/G/T, or "max").  v2: one io.max line of
 * plain numbers; v1: one write per key ("max" is 0 there: no limit). */
static int io_writes(const char *line, bool v2, tr_limit_write *out, tr_error *err)
{
        if (!line)
                return tr_error_set(err, EINVAL, "--io-max: no value");
        unsigned maj, min;
        int n = 0;
        if (sscanf(line, "%u:%u%n", &maj, &min, &n) != 2)
                return tr_error_set(err, EINVAL, "--io-max '%s': expected \"MAJ:MIN key=value...\"", line);
        char copy[512];
        if ((size_t) snprintf(copy, sizeof copy, "%s", line + n) >= sizeof copy)
                return tr_error_set(err, EINVAL, "--io-max '%s': too long", line);
        char *v2line = out[0].value;
        size_t cap = sizeof out[0].value;
        size_t off = (size_t) snprintf(v2line, cap, "%u:%u", maj, min);
        int nw = 0, nkeys = 0;
        char *save = NULL;
        for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
                char *eq = strchr(tok, '=');
                if (!eq)
                        return tr_error_set(err, EINVAL, "--io-max '%s': '%s' is not key=value", line, tok);
                *eq = '\0';
                const char *val = eq + 1;
                size_t k;
                for (k = 0; k < TR_ARRAY_SIZE(io_keys); k++)
                        if (strcmp(tok, io_keys[k].key) == 0)
                                break;
                if (k == TR_ARRAY_SIZE(io_keys))
                        return tr_error_set(err, EINVAL, "--io-max '%s': unknown key '%s' (rbps wbps riops wiops)",
                                            line, tok);
                uint64_t v;
                if (strcmp(val, "max") == 0)
                        v = UINT64_MAX;
                else if (tr_parse_size(val, &v) < 0)
                        return tr_error_set(err, EINVAL, "--io-max '%s': bad value '%s'", line, val);
                if (++nkeys > TR_LIMIT_MAX_WRITES)
                        return tr_error_set(err, EINVAL, "--io-max '%s': more than %d keys", line,
                                            TR_LIMIT_MAX_WRITES);
                if (v2) {
                        if (v == UINT64_MAX)
                                off += (size_t) snprintf(v2line + off, cap - off, " %s=max", io_keys[k].key);
                        else
                                off += (size_t) snprintf(v2line + off, cap - off, " %s=%" PRIu64, io_keys[k].key,
                                                         v);
                        if (off >= cap)
                                return tr_error_set(err, EINVAL, "--io-max '%s': too long", line);
                        continue;
                }
                out[nw].file = io_keys[k].v1file;
                snprintf(out[nw].value, sizeof out[nw].value, "%u:%u %" PRIu64, maj, min, v == UINT64_MAX ? 0 : v);
                nw++;
        }
        if (!nkeys)
                return tr_error_set(err, EINVAL, "--io-max '%s': no limit given", line);
        if (v2) {
                out[0].file = knobs[TR_LIMIT_IO_MAX].v2_file;
                return 1;
        }
        return nw;
}

int tr_limit_writes(tr_limit_id id, bool v2, const tr_limit_value *v, tr_limit_write *out, tr_error *err)
{
        const tr_limit_knob *k = tr_limit_knob_get(id);
        if (!k)
                return tr_error_set(err, EINVAL, "unknown limit %d", (int) id);
        const char *file = v2 ? k->v2_file : k->v1_file;
        switch (v2 ? k->v2_fmt : k->v1_fmt) {
        case TR_FMT_NONE:
                break;
        case TR_FMT_MAX_OR_U64:
                put_u64(out, file, v->u64, "max");
                return 1;
        case TR_FMT_M1_OR_U64:
                put_u64(out, file, v->u64, "-1");
                return 1;
        case TR_FMT_MEMSW:
                /* v1 limits memory+swap together */
                if (!v->has_b)
                        return tr_error_set(err, EINVAL,
                                            "--%s needs --memory-max on a v1 memory hierarchy (memsw = memory + swap)",
                                            k->option);
                put_u64(out, file, (v->u64 == UINT64_MAX || v->u64_b == UINT64_MAX) ? UINT64_MAX : v->u64 + v->u64_b,
                        "-1");
                return 1;
        case TR_FMT_U64:
                put_u64(out, file, v->u64, NULL);
                return 1;
        case TR_FMT_SHARES:
                put_u64(out, file, tr_weight_to_shares(v->u64), NULL);
                return 1;
        case TR_FMT_QUOTA_PERIOD:
                out[0].file = file;
                snprintf(out[0].value, sizeof out[0].value, "%" PRIu64 " %" PRIu64, v->u64, v->u64_b);
                return 1;
        case TR_FMT_CFS:
                put_u64(&out[0], "cpu.cfs_period_us", v->u64_b, NULL);
                put_u64(&out[1], file, v->u64, NULL);
                return 2;
        case TR_FMT_TEXT:
                if (!v->text)
                        return tr_error_set(err, EINVAL, "--%s: no value", k->option);
                out[0].file = file;
                if ((size_t) snprintf(out[0].value, sizeof out[0].value, "%s", v->text) >= sizeof out[0].value)
                        return tr_error_set(err, EINVAL, "--%s: value too long", k->option);
                return 1;
        case TR_FMT_ONE:
                out[0].file = file;
                snprintf(out[0].value, sizeof out[0].value, "1");
                return 1;
        case TR_FMT_IO_LINE:
        case TR_FMT_IO_PER_KEY:
                return io_writes(v->text, v2, out, err);
        }
        return tr_error_set(err, EOPNOTSUPP, "--%s has no cgroup %s knob", k->option, v2 ? "v2" : "v1");
}

/* ---- what the limits did ---- */

static const tr_limit_event_row events[TR_EVENT_COUNT] = {
        /* name, controller, v2 file, v2 key, v1 file, v1 key, v1 divisor, v1 local */
        /* v1 has no "oom" counter (under_oom is a state, not a count) */
        [TR_EVENT_OOM] = { "oom", TR_CTRL_MEMORY, "memory.events", "oom", NULL, NULL, 1, false },
        /* v2 memory.events is hierarchical; v1 oom_kill is not (cgroup-stats.c) */
        [TR_EVENT_OOM_KILL] = { "oom_kill", TR_CTRL_MEMORY, "memory.events", "oom_kill", "memory.oom_control",
                                "oom_kill", 1, true },
        /* v1 pids.events counts the refused forks in the forking cgroup itself */
        [TR_EVENT_PIDS_MAX] = { "pids_max", TR_CTRL_PIDS, "pids.events", "max", "pids.events", "max", 1, true },
        /* the quota is the job cgroup's own: its cpu.stat counts its throttling */
        [TR_EVENT_CPU_PERIODS] = { "cpu_nr_periods", TR_CTRL_CPU, "cpu.stat", "nr_periods", "cpu.stat", "nr_periods",
                                   1, false },
        [TR_EVENT_CPU_THROTTLED] = { "cpu_nr_throttled", TR_CTRL_CPU, "cpu.stat", "nr_throttled", "cpu.stat",
                                     "nr_throttled", 1, false },
        [TR_EVENT_CPU_THROTTLED_USEC] = { "cpu_throttled_usec", TR_CTRL_CPU, "cpu.stat", "throttled_usec", "cpu.stat",
                                          "throttled_time", 1000, false },
};

const tr_limit_event_row *tr_limit_event_get(tr_limit_event_id id)
{
        return (unsigned) id < TR_EVENT_COUNT ? &events[id] : NULL;
}

typedef struct event_sum {
        const char *file, *key;
        uint64_t sum;
} event_sum;

/* Pre callback of the descendant walk: add a child's counter (a child without the file or
 * key, or vanishing, adds nothing). */
static int add_child_event(int dfd, void *ud)
{
        event_sum *s = ud;
        char buf[1024];
        uint64_t v;
        if (tr_read_file_at(dfd, s->file, buf, sizeof buf, NULL) >= 0 && tr_keyed_u64(buf, s->key, &v) == 0)
                s->sum += v;
        return 0;
}

void tr_cgroup_limit_events(tr_cgroup *cg, tr_limit_events *ev)
{
        memset(ev, 0, sizeof *ev);
        const tr_hierarchies *hs = tr_cgroup_hierarchies(cg);
        for (int id = 0; id < TR_EVENT_COUNT; id++) {
                const tr_limit_event_row *row = &events[id];
                int i = tr_limit_hierarchy(hs, row->ctrl);
                if (i < 0 || tr_cgroup_dirfd(cg, i) < 0)
                        continue;
                bool v2 = hs->h[i].is_v2;
                const char *file = v2 ? row->v2_file : row->v1_file, *key = v2 ? row->v2_key : row->v1_key;
                if (!file)
                        continue;
                char buf[4096];
                if (tr_cgroup_read(cg, i, file, buf, sizeof buf, NULL) < 0)
                        continue;
                event_sum s = { file, key, 0 };
                if (tr_keyed_u64(buf, key, &s.sum) < 0)
                        continue;
                if (!v2 && row->v1_local &&
                    tr_cg_walk_children(tr_cgroup_dirfd(cg, i), &(tr_cg_walk){ .pre = add_child_event, .ud = &s }) < 0)
                        continue;
                ev->v[id] = (tr_u64){ .value = s.sum / (v2 ? 1 : row->v1_divisor),
                                      .available = true,
                                      .source = v2 ? TR_SRC_CGROUP_V2 : TR_SRC_CGROUP_V1 };
        }
}

static bool positive(const tr_u64 *v) { return v->available && v->value > 0; }

unsigned tr_limit_events_hits(const tr_limit_events *ev)
{
        unsigned h = 0;
        if (positive(&ev->v[TR_EVENT_OOM]) || positive(&ev->v[TR_EVENT_OOM_KILL]))
                h |= TR_HIT_OOM;
        if (positive(&ev->v[TR_EVENT_PIDS_MAX]))
                h |= TR_HIT_PIDS_MAX;
        if (positive(&ev->v[TR_EVENT_CPU_THROTTLED]))
                h |= TR_HIT_CPU_THROTTLED;
        return h;
}

const char *tr_limit_hit_name(tr_limit_hit h)
{
        switch (h) {
        case TR_HIT_OOM:
                return "oom";
        case TR_HIT_PIDS_MAX:
                return "pids-max";
        case TR_HIT_CPU_THROTTLED:
                return "cpu-throttled";
        }
        return "?";
}
