/* limits.c - the job's limits: which value each option asks for.  Which file and which
 * syntax in which cgroup version is the trackers' table (trackers/cglimits.h). */
#include "joblimits.h"

#include <errno.h>
#include <stdio.h>

#include "trackers/cglimits.h"

typedef struct ctx {
        tr_cgroup *cg;
        const tr_hierarchies *hs;
        bool best_effort;
        tr_error *err;
} ctx;

static int unavailable(ctx *c, const char *opt, const char *why)
{
        if (c->best_effort) {
                fprintf(stderr, "procd-starter: warning: --%s ignored: %s\n", opt, why);
                return 0;
        }
        return tr_error_set(c->err, EOPNOTSUPP, "--%s cannot be applied: %s (--best-effort to go on without it)",
                            opt, why);
}

/* Set knob id to v in the hierarchy holding its controller: each of the table's writes,
 * in order.  A missing controller or file is unavailable() (an error, or a warning with
 * --best-effort); an optional knob whose file is missing is skipped silently. */
static int apply(ctx *c, tr_limit_id id, const tr_limit_value *v)
{
        const tr_limit_knob *k = tr_limit_knob_get(id);
        char why[256];
        int idx = tr_limit_hierarchy(c->hs, k->ctrl);
        if (idx < 0) {
                if (k->optional)
                        return 0;
                snprintf(why, sizeof why, "no %s controller on this host", tr_controller_name(k->ctrl));
                return unavailable(c, k->option, why);
        }
        bool v2 = c->hs->h[idx].is_v2;
        const char *file = v2 ? k->v2_file : k->v1_file;
        if (!file && k->optional)
                return 0;
        if (!file) {
                snprintf(why, sizeof why, "it is a cgroup v2 knob (%s) and the %s controller here is in a v1 hierarchy (%s)",
                         k->v2_file, tr_controller_name(k->ctrl), c->hs->h[idx].mount_point);
                return unavailable(c, k->option, why);
        }
        if (!tr_cgroup_has_file(c->cg, idx, file)) {
                if (k->optional)
                        return 0;
                snprintf(why, sizeof why, "%s is missing in the job cgroup (%s hierarchy %s)", file, v2 ? "v2" : "v1",
                         c->hs->h[idx].mount_point);
                return unavailable(c, k->option, why);
        }
        tr_limit_write w[TR_LIMIT_MAX_WRITES];
        int n = tr_limit_writes(id, v2, v, w, c->err);
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                if (w[i].file != file && !tr_cgroup_has_file(c->cg, idx, w[i].file)) {
                        snprintf(why, sizeof why, "%s is missing", w[i].file);
                        int r = unavailable(c, k->option, why);
                        if (r < 0)
                                return r;
                        continue;
                }
                int r = tr_cgroup_write(c->cg, idx, w[i].file, w[i].value, c->err);
                if (r < 0)
                        return tr_error_prefix(c->err, "--%s: writing '%s' to %s", k->option, w[i].value, w[i].file);
        }
        return 0;
}

int st_limits_apply(tr_cgroup *job, const tr_hierarchies *hs, const st_limits *l, bool best_effort, tr_error *err)
{
        ctx c = { .cg = job, .hs = hs, .best_effort = best_effort, .err = err };
        int r = 0;
        if (l->has_memory_max)
                r = apply(&c, TR_LIMIT_MEMORY_MAX, &(tr_limit_value){ .u64 = l->memory_max });
        if (r == 0 && l->has_memory_swap_max)
                r = apply(&c, TR_LIMIT_MEMORY_SWAP_MAX,
                          &(tr_limit_value){ .u64 = l->memory_swap_max, .u64_b = l->memory_max, .has_b = l->has_memory_max });
        if (r == 0 && l->has_memory_high)
                r = apply(&c, TR_LIMIT_MEMORY_HIGH, &(tr_limit_value){ .u64 = l->memory_high });
        if (r == 0 && l->oom_group)
                r = apply(&c, TR_LIMIT_MEMORY_OOM_GROUP, &(tr_limit_value){ 0 });
        if (r == 0 && l->has_cpus) {
                uint64_t period = l->cpu_period_usec ? l->cpu_period_usec : 100000;
                uint64_t quota = (uint64_t) (l->cpus * (double) period + 0.5);
                if (quota < 1000)
                        quota = 1000; /* kernel minimum 1 ms */
                r = apply(&c, TR_LIMIT_CPUS, &(tr_limit_value){ .u64 = quota, .u64_b = period, .has_b = true });
        }
        if (r == 0 && l->has_cpu_weight)
                r = apply(&c, TR_LIMIT_CPU_WEIGHT, &(tr_limit_value){ .u64 = l->cpu_weight });
        if (r == 0 && l->cpuset_cpus)
                r = apply(&c, TR_LIMIT_CPUSET_CPUS, &(tr_limit_value){ .text = l->cpuset_cpus });
        if (r == 0 && l->cpuset_mems)
                r = apply(&c, TR_LIMIT_CPUSET_MEMS, &(tr_limit_value){ .text = l->cpuset_mems });
        if (r == 0 && l->has_pids_max)
                r = apply(&c, TR_LIMIT_PIDS_MAX, &(tr_limit_value){ .u64 = l->pids_max });
        for (size_t k = 0; r == 0 && k < l->n_io_max; k++)
                r = apply(&c, TR_LIMIT_IO_MAX, &(tr_limit_value){ .text = l->io_max[k] });
        return r;
}
