/* jobdevices.c - the job's device rules (see jobdevices.h). */
#include "jobdevices.h"

#include <stdlib.h>
#include <string.h>

#include "trackers/util.h"

static bool given(const st_options *o, const tr_gpu_node *g)
{
        if (g->index < 0)
                return o->n_gpus > 0; /* control nodes come with any GPU */
        for (size_t i = 0; i < o->n_gpus; i++)
                if (o->gpus[i] == g->index)
                        return true;
        for (size_t i = 0; i < o->devices.n; i++) {
                const tr_dev_rule *r = &o->devices.r[i];
                if (r->allow && tr_dev_rule_matches(r, 'c', g->major, g->minor, r->access))
                        return true;
        }
        return false;
}

int st_devices_rules(const st_options *o, const char *dev_root, tr_dev_rules *out, tr_error *err)
{
        memset(out, 0, sizeof *out);
        int r;
        if (o->hide_gpus) {
                _cleanup_free_ tr_gpu_node *g = NULL;
                size_t n = 0;
                r = tr_gpu_nodes_find(dev_root, &g, &n, err);
                if (r < 0)
                        return tr_error_prefix(err, "--hide-gpus: ");
                for (size_t i = 0; i < n; i++) {
                        if (given(o, &g[i]))
                                continue;
                        tr_dev_rule d = { .allow = false, .type = 'c', .major = g[i].major, .minor = g[i].minor,
                                          .access = TR_DEV_RWM };
                        if ((r = tr_dev_rules_add(out, &d, err)) < 0)
                                goto fail;
                }
        }
        for (size_t i = 0; i < o->devices.n; i++)
                if ((r = tr_dev_rules_add(out, &o->devices.r[i], err)) < 0)
                        goto fail;
        return 0;
fail:
        tr_dev_rules_free(out);
        return r;
}

int st_devices_apply(tr_cgroup *job, const st_options *o, tr_dev_rules *rules, tr_dev_filter **f, tr_error *err)
{
        *f = NULL;
        int r = st_devices_rules(o, "/dev", rules, err);
        if (r < 0 || rules->n == 0)
                return r;
        return tr_dev_filter_apply(f, job, rules, err);
}
