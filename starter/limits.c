/* limits.c - limits: v2 and v1 file for each option. */
#include "joblimits.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "trackers/util.h"

unsigned long long st_weight_to_shares(uint64_t weight)
{
        unsigned long long s = (unsigned long long) weight * 1024ULL / 100ULL;
        if (s < 2)
                s = 2;
        if (s > 262144)
                s = 262144;
        return s;
}

typedef struct ctx {
        tr_cgroup *cg;
        const tr_hierarchies *hs;
        bool best_effort;
        tr_error *err;
} ctx;

/* Where controller c lives for this cgroup: fills *idx and whether it is v2. */
static int locate(ctx *c, tr_controller ctrl, int *idx)
{
        int i = tr_hierarchies_best(c->hs, ctrl);
        if (ctrl == TR_CTRL_IO && (i < 0 || !c->hs->h[i].is_v2))
                i = tr_hierarchies_best(c->hs, TR_CTRL_BLKIO);
        if (ctrl == TR_CTRL_BLKIO && i < 0)
                i = tr_hierarchies_best(c->hs, TR_CTRL_IO);
        *idx = i;
        return i;
}

static int unavailable(ctx *c, const char *opt, const char *why)
{
        if (c->best_effort) {
                fprintf(stderr, "procd-starter: warning: --%s ignored: %s\n", opt, why);
                return 0;
        }
        return tr_error_set(c->err, EOPNOTSUPP, "--%s cannot be applied: %s (--best-effort to go on without it)",
                            opt, why);
}

/* Pick the file for ctrl: v2file on a v2 hierarchy, v1file on a v1 one.  Returns the
 * hierarchy index (>= 0), or 0-with-*skip after a best-effort warning, or -errno. */
static int pick(ctx *c, const char *opt, tr_controller ctrl, const char *v2file, const char *v1file, int *idx,
                const char **file, bool *skip)
{
        *skip = false;
        char why[256];
        if (locate(c, ctrl, idx) < 0) {
                snprintf(why, sizeof why, "no %s controller on this host", tr_controller_name(ctrl));
                *skip = true;
                return unavailable(c, opt, why);
        }
        bool v2 = c->hs->h[*idx].is_v2;
        *file = v2 ? v2file : v1file;
        if (!*file) {
                snprintf(why, sizeof why, "it is a cgroup v2 knob (%s) and the %s controller here is in a v1 hierarchy (%s)",
                         v2file, tr_controller_name(ctrl), c->hs->h[*idx].mount_point);
                *skip = true;
                return unavailable(c, opt, why);
        }
        if (!tr_cgroup_has_file(c->cg, *idx, *file)) {
                snprintf(why, sizeof why, "%s is missing in the job cgroup (%s hierarchy %s)", *file,
                         v2 ? "v2" : "v1", c->hs->h[*idx].mount_point);
                *skip = true;
                return unavailable(c, opt, why);
        }
        return *idx;
}

static int put(ctx *c, const char *opt, int idx, const char *file, const char *value)
{
        int r = tr_cgroup_write(c->cg, idx, file, value, c->err);
        if (r < 0)
                return tr_error_prefix(c->err, "--%s: writing '%s' to %s", opt, value, file);
        return 0;
}

static void fmt_bytes(char *buf, size_t size, uint64_t v, bool v2)
{
        if (v == UINT64_MAX)
                snprintf(buf, size, "%s", v2 ? "max" : "-1");
        else
                snprintf(buf, size, "%" PRIu64, v);
}

static int apply_io(ctx *c, const char *line)
{
        int idx;
        const char *file;
        bool skip;
        int r = pick(c, "io-max", TR_CTRL_IO, "io.max", "blkio.throttle.read_bps_device", &idx, &file, &skip);
        if (r < 0 || skip)
                return r;
        unsigned maj, min;
        int n = 0;
        if (sscanf(line, "%u:%u%n", &maj, &min, &n) != 2)
                return tr_error_set(c->err, EINVAL, "--io-max '%s': expected \"MAJ:MIN key=value...\"", line);
        /* validate keys for both versions */
        char copy[512];
        snprintf(copy, sizeof copy, "%s", line + n);
        static const struct {
                const char *key, *v1file;
        } keys[] = {
                { "rbps", "blkio.throttle.read_bps_device" },
                { "wbps", "blkio.throttle.write_bps_device" },
                { "riops", "blkio.throttle.read_iops_device" },
                { "wiops", "blkio.throttle.write_iops_device" },
        };
        bool v2 = c->hs->h[idx].is_v2;
        char *save = NULL;
        int nkeys = 0;
        /* v2 io.max takes plain numbers: the line is rebuilt from the parsed values */
        char v2line[512];
        size_t off = (size_t) snprintf(v2line, sizeof v2line, "%u:%u", maj, min);
        for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
                char *eq = strchr(tok, '=');
                if (!eq)
                        return tr_error_set(c->err, EINVAL, "--io-max '%s': '%s' is not key=value", line, tok);
                *eq = '\0';
                const char *val = eq + 1;
                size_t k;
                for (k = 0; k < TR_ARRAY_SIZE(keys); k++)
                        if (strcmp(tok, keys[k].key) == 0)
                                break;
                if (k == TR_ARRAY_SIZE(keys))
                        return tr_error_set(c->err, EINVAL, "--io-max '%s': unknown key '%s' (rbps wbps riops wiops)",
                                            line, tok);
                uint64_t v;
                if (strcmp(val, "max") == 0)
                        v = UINT64_MAX;
                else if (tr_parse_size(val, &v) < 0)
                        return tr_error_set(c->err, EINVAL, "--io-max '%s': bad value '%s'", line, val);
                nkeys++;
                if (v2) {
                        if (v == UINT64_MAX)
                                off += (size_t) snprintf(v2line + off, sizeof v2line - off, " %s=max", keys[k].key);
                        else
                                off += (size_t) snprintf(v2line + off, sizeof v2line - off, " %s=%" PRIu64,
                                                         keys[k].key, v);
                        if (off >= sizeof v2line)
                                return tr_error_set(c->err, EINVAL, "--io-max '%s': too long", line);
                        continue;
                }
                if (!tr_cgroup_has_file(c->cg, idx, keys[k].v1file)) {
                        char why[200];
                        snprintf(why, sizeof why, "%s is missing", keys[k].v1file);
                        r = unavailable(c, "io-max", why);
                        if (r < 0)
                                return r;
                        continue;
                }
                char buf[96];
                snprintf(buf, sizeof buf, "%u:%u %" PRIu64, maj, min, v == UINT64_MAX ? 0 : v);
                r = put(c, "io-max", idx, keys[k].v1file, buf);
                if (r < 0)
                        return r;
        }
        if (!nkeys)
                return tr_error_set(c->err, EINVAL, "--io-max '%s': no limit given", line);
        if (v2)
                return put(c, "io-max", idx, file, v2line);
        return 0;
}

int st_limits_apply(tr_cgroup *job, const tr_hierarchies *hs, const st_limits *l, bool best_effort, tr_error *err)
{
        ctx c = { .cg = job, .hs = hs, .best_effort = best_effort, .err = err };
        int idx, r;
        const char *file;
        bool skip;
        char buf[128];

        if (l->has_memory_max) {
                r = pick(&c, "memory-max", TR_CTRL_MEMORY, "memory.max", "memory.limit_in_bytes", &idx, &file, &skip);
                if (r < 0)
                        return r;
                if (!skip) {
                        fmt_bytes(buf, sizeof buf, l->memory_max, hs->h[idx].is_v2);
                        if ((r = put(&c, "memory-max", idx, file, buf)) < 0)
                                return r;
                }
        }
        if (l->has_memory_swap_max) {
                r = pick(&c, "memory-swap-max", TR_CTRL_MEMORY, "memory.swap.max", "memory.memsw.limit_in_bytes", &idx,
                         &file, &skip);
                if (r < 0)
                        return r;
                if (!skip) {
                        bool v2 = hs->h[idx].is_v2;
                        uint64_t v = l->memory_swap_max;
                        if (!v2) {
                                /* v1 limits memory+swap together */
                                if (!l->has_memory_max)
                                        return tr_error_set(err, EINVAL,
                                                            "--memory-swap-max needs --memory-max on a v1 memory "
                                                            "hierarchy (memsw = memory + swap)");
                                v = (l->memory_max == UINT64_MAX || v == UINT64_MAX) ? UINT64_MAX : l->memory_max + v;
                        }
                        fmt_bytes(buf, sizeof buf, v, v2);
                        if ((r = put(&c, "memory-swap-max", idx, file, buf)) < 0)
                                return r;
                }
        }
        if (l->has_memory_high) {
                r = pick(&c, "memory-high", TR_CTRL_MEMORY, "memory.high", NULL, &idx, &file, &skip);
                if (r < 0)
                        return r;
                if (!skip) {
                        fmt_bytes(buf, sizeof buf, l->memory_high, true);
                        if ((r = put(&c, "memory-high", idx, file, buf)) < 0)
                                return r;
                }
        }
        if (l->oom_group) {
                /* v2 only, where it exists; silently absent elsewhere (the starter kills the
                 * whole family when the root dies anyway). */
                idx = tr_hierarchies_best(hs, TR_CTRL_MEMORY);
                if (idx >= 0 && hs->h[idx].is_v2 && tr_cgroup_has_file(job, idx, "memory.oom.group")) {
                        if ((r = put(&c, "memory-oom-group", idx, "memory.oom.group", "1")) < 0)
                                return r;
                }
        }
        if (l->has_cpus) {
                uint64_t period = l->cpu_period_usec ? l->cpu_period_usec : 100000;
                uint64_t quota = (uint64_t) (l->cpus * (double) period + 0.5);
                if (quota < 1000)
                        quota = 1000; /* kernel minimum 1 ms */
                r = pick(&c, "cpus", TR_CTRL_CPU, "cpu.max", "cpu.cfs_quota_us", &idx, &file, &skip);
                if (r < 0)
                        return r;
                if (!skip) {
                        if (hs->h[idx].is_v2) {
                                snprintf(buf, sizeof buf, "%" PRIu64 " %" PRIu64, quota, period);
                                if ((r = put(&c, "cpus", idx, file, buf)) < 0)
                                        return r;
                        } else {
                                snprintf(buf, sizeof buf, "%" PRIu64, period);
                                if ((r = put(&c, "cpus", idx, "cpu.cfs_period_us", buf)) < 0)
                                        return r;
                                snprintf(buf, sizeof buf, "%" PRIu64, quota);
                                if ((r = put(&c, "cpus", idx, file, buf)) < 0)
                                        return r;
                        }
                }
        }
        if (l->has_cpu_weight) {
                r = pick(&c, "cpu-weight", TR_CTRL_CPU, "cpu.weight", "cpu.shares", &idx, &file, &skip);
                if (r < 0)
                        return r;
                if (!skip) {
                        if (hs->h[idx].is_v2)
                                snprintf(buf, sizeof buf, "%" PRIu64, l->cpu_weight);
                        else
                                snprintf(buf, sizeof buf, "%llu", st_weight_to_shares(l->cpu_weight));
                        if ((r = put(&c, "cpu-weight", idx, file, buf)) < 0)
                                return r;
                }
        }
        if (l->cpuset_cpus) {
                r = pick(&c, "cpuset-cpus", TR_CTRL_CPUSET, "cpuset.cpus", "cpuset.cpus", &idx, &file, &skip);
                if (r < 0)
                        return r;
                if (!skip && (r = put(&c, "cpuset-cpus", idx, file, l->cpuset_cpus)) < 0)
                        return r;
        }
        if (l->cpuset_mems) {
                r = pick(&c, "cpuset-mems", TR_CTRL_CPUSET, "cpuset.mems", "cpuset.mems", &idx, &file, &skip);
                if (r < 0)
                        return r;
                if (!skip && (r = put(&c, "cpuset-mems", idx, file, l->cpuset_mems)) < 0)
                        return r;
        }
        if (l->has_pids_max) {
                r = pick(&c, "pids-max", TR_CTRL_PIDS, "pids.max", "pids.max", &idx, &file, &skip);
                if (r < 0)
                        return r;
                if (!skip) {
                        if (l->pids_max == UINT64_MAX)
                                snprintf(buf, sizeof buf, "max");
                        else
                                snprintf(buf, sizeof buf, "%" PRIu64, l->pids_max);
                        if ((r = put(&c, "pids-max", idx, file, buf)) < 0)
                                return r;
                }
        }
        for (size_t k = 0; k < l->n_io_max; k++) {
                r = apply_io(&c, l->io_max[k]);
                if (r < 0)
                        return r;
        }
        return 0;
}
