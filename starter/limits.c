/* limits.c - the job's limits: which value each option asks for.  Which file and which
 * syntax in which cgroup version is the trackers' table (trackers/cglimits.h). */
#include "joblimits.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trackers/cglimits.h"

typedef struct ctx {
        tr_cgroup *cg;
        const tr_hierarchies *hs;
        bool best_effort;
        st_limits_record *rec;
        st_limit_applied *cur; /* the record's entry of the option being applied, or NULL */
        tr_error *err;
} ctx;

void st_limits_record_free(st_limits_record *rec)
{
        free(rec->a);
        rec->a = NULL;
        rec->n = 0;
}

/* A new entry for option with value (NULL when there is no record or no memory: the report
 * is then without it, the limit is still applied). */
static st_limit_applied *record(ctx *c, const char *option, const char *value)
{
        if (!c->rec)
                return NULL;
        st_limit_applied *a = realloc(c->rec->a, (c->rec->n + 1) * sizeof *a);
        if (!a)
                return NULL;
        c->rec->a = a;
        a = &a[c->rec->n++];
        memset(a, 0, sizeof *a);
        a->option = option;
        snprintf(a->value, sizeof a->value, "%s", value);
        return a;
}

static int unavailable(ctx *c, const char *opt, const char *why)
{
        if (c->best_effort) {
                fprintf(stderr, "procd-starter: warning: --%s ignored: %s\n", opt, why);
                if (c->cur && !c->cur->n_writes) {
                        c->cur->applied = false;
                        snprintf(c->cur->why, sizeof c->cur->why, "%s", why);
                }
                return 0;
        }
        return tr_error_set(c->err, EOPNOTSUPP, "--%s cannot be applied: %s (--best-effort to go on without it)",
                            opt, why);
}

/* Set knob id to v in the hierarchy holding its controller: each of the table's writes,
 * in order.  A missing controller or file is unavailable() (an error, or a warning with
 * --best-effort); an optional knob whose file is missing is skipped silently. */
static int apply_knob(ctx *c, tr_limit_id id, const tr_limit_value *v)
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
                st_limit_applied *a = c->cur;
                if (!a || a->n_writes >= TR_LIMIT_MAX_WRITES)
                        continue;
                char dir[PATH_MAX];
                const char *cgpath = tr_cgroup_path(c->cg, idx);
                if (!cgpath || tr_hierarchy_fs_path(&c->hs->h[idx], cgpath, dir, sizeof dir, NULL) < 0)
                        snprintf(dir, sizeof dir, "%s", c->hs->h[idx].mount_point);
                a->applied = true;
                a->v2 = v2;
                snprintf(a->w[a->n_writes].path, sizeof a->w[a->n_writes].path, "%.*s/%s",
                         (int) (sizeof a->w[0].path - strlen(w[i].file) - 2), dir, w[i].file);
                snprintf(a->w[a->n_writes].value, sizeof a->w[a->n_writes].value, "%s", w[i].value);
                a->n_writes++;
        }
        return 0;
}

/* apply_knob with an entry in the record for the option's value as text; an optional knob
 * skipped silently (nothing written, no reason) leaves no entry. */
static int apply(ctx *c, tr_limit_id id, const tr_limit_value *v, const char *value, bool bytes)
{
        size_t before = c->rec ? c->rec->n : 0;
        c->cur = record(c, tr_limit_knob_get(id)->option, value);
        if (c->cur)
                c->cur->bytes = bytes;
        int r = apply_knob(c, id, v);
        if (c->cur && !c->cur->applied && !c->cur->why[0])
                c->rec->n = before;
        c->cur = NULL;
        return r;
}

/* a byte count or pids.max as the report shows it: decimal, or "max" */
static const char *u64_text(uint64_t v, char *buf, size_t size)
{
        if (v == UINT64_MAX)
                snprintf(buf, size, "max");
        else
                snprintf(buf, size, "%" PRIu64, v);
        return buf;
}

int st_limits_apply(tr_cgroup *job, const tr_hierarchies *hs, const st_limits *l, bool best_effort,
                    st_limits_record *rec, tr_error *err)
{
        ctx c = { .cg = job, .hs = hs, .best_effort = best_effort, .rec = rec, .err = err };
        char t[32];
        int r = 0;
        if (l->has_memory_max)
                r = apply(&c, TR_LIMIT_MEMORY_MAX, &(tr_limit_value){ .u64 = l->memory_max },
                          u64_text(l->memory_max, t, sizeof t), true);
        if (r == 0 && l->has_memory_swap_max)
                r = apply(&c, TR_LIMIT_MEMORY_SWAP_MAX,
                          &(tr_limit_value){ .u64 = l->memory_swap_max, .u64_b = l->memory_max, .has_b = l->has_memory_max },
                          u64_text(l->memory_swap_max, t, sizeof t), true);
        if (r == 0 && l->has_memory_high)
                r = apply(&c, TR_LIMIT_MEMORY_HIGH, &(tr_limit_value){ .u64 = l->memory_high },
                          u64_text(l->memory_high, t, sizeof t), true);
        if (r == 0 && l->oom_group)
                r = apply(&c, TR_LIMIT_MEMORY_OOM_GROUP, &(tr_limit_value){ 0 }, "1", false);
        if (r == 0 && l->has_cpus) {
                uint64_t period = l->cpu_period_usec ? l->cpu_period_usec : 100000;
                uint64_t quota = (uint64_t) (l->cpus * (double) period + 0.5);
                if (quota < 1000)
                        quota = 1000; /* kernel minimum 1 ms */
                snprintf(t, sizeof t, "%g", l->cpus);
                r = apply(&c, TR_LIMIT_CPUS, &(tr_limit_value){ .u64 = quota, .u64_b = period, .has_b = true }, t, false);
        }
        if (r == 0 && l->has_cpu_weight)
                r = apply(&c, TR_LIMIT_CPU_WEIGHT, &(tr_limit_value){ .u64 = l->cpu_weight },
                          u64_text(l->cpu_weight, t, sizeof t), false);
        if (r == 0 && l->cpuset_cpus)
                r = apply(&c, TR_LIMIT_CPUSET_CPUS, &(tr_limit_value){ .text = l->cpuset_cpus }, l->cpuset_cpus, false);
        if (r == 0 && l->cpuset_mems)
                r = apply(&c, TR_LIMIT_CPUSET_MEMS, &(tr_limit_value){ .text = l->cpuset_mems }, l->cpuset_mems, false);
        if (r == 0 && l->has_pids_max)
                r = apply(&c, TR_LIMIT_PIDS_MAX, &(tr_limit_value){ .u64 = l->pids_max },
                          u64_text(l->pids_max, t, sizeof t), false);
        for (size_t k = 0; r == 0 && k < l->n_io_max; k++)
                r = apply(&c, TR_LIMIT_IO_MAX, &(tr_limit_value){ .text = l->io_max[k] }, l->io_max[k], false);
        return r;
}

uint32_t st_limits_hierarchies(const tr_hierarchies *hs, const st_limits *l)
{
        const struct {
                bool asked;
                tr_limit_id id;
        } set[] = {
                { l->has_memory_max || l->has_memory_swap_max || l->has_memory_high || l->oom_group, TR_LIMIT_MEMORY_MAX },
                { l->has_cpus || l->has_cpu_weight, TR_LIMIT_CPUS },
                { l->cpuset_cpus || l->cpuset_mems, TR_LIMIT_CPUSET_CPUS },
                { l->has_pids_max, TR_LIMIT_PIDS_MAX },
                { l->n_io_max > 0, TR_LIMIT_IO_MAX },
        };
        uint32_t mask = 0;
        for (size_t k = 0; k < sizeof set / sizeof set[0]; k++) {
                int i = set[k].asked ? tr_limit_hierarchy(hs, tr_limit_knob_get(set[k].id)->ctrl) : -1;
                if (i >= 0)
                        mask |= 1u << i;
        }
        return mask;
}
