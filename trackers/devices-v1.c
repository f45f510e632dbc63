/* devices-v1.c - v1 device filter: devices.allow / devices.deny in the devices hierarchy.
 *
 * A v1 device cgroup has a default (allow or deny everything) and exceptions.  Writing
 * "a" to devices.allow/deny sets the default and drops the exceptions; any other rule
 * written to the file opposite the default adds an exception (merging access bits with an
 * identical one), written to the default's own file removes access bits from an identical
 * exception only.  The plan: the last rule that matches everything sets the default (allow
 * when there is none), each later rule against it becomes an exception, and a later rule
 * in the default's direction must cancel an exception exactly.
 */
#include "devices.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static bool all_devices(const tr_dev_rule *r)
{
        return r->type == 'a' && r->access == TR_DEV_RWM;
}

static bool same_device(const tr_dev_rule *a, const tr_dev_rule *b)
{
        return a->type == b->type && a->major == b->major && a->minor == b->minor;
}

static bool overlap(const tr_dev_rule *a, const tr_dev_rule *b)
{
        return a->type == b->type && (a->major == TR_DEV_ANY || b->major == TR_DEV_ANY || a->major == b->major) &&
               (a->minor == TR_DEV_ANY || b->minor == TR_DEV_ANY || a->minor == b->minor);
}

static void v1_value(const tr_dev_rule *r, char *buf, size_t size)
{
        char text[64];
        tr_dev_rule_format(r, text, sizeof text); /* "allow c:1:3:rw" */
        const char *t = strchr(text, ' ') + 1;    /* "c:1:3:rw" -> "c 1:3 rw" */
        const char *maj_end = strchr(t + 2, ':');
        const char *min_end = strchr(maj_end + 1, ':');
        snprintf(buf, size, "%c %.*s:%.*s %s", t[0], (int) (maj_end - t - 2), t + 2, (int) (min_end - maj_end - 1),
                 maj_end + 1, min_end + 1);
}

int tr_dev_v1_plan(const tr_dev_rules *rs, tr_dev_v1_write **out, size_t *np, tr_error *err)
{
        *out = NULL;
        *np = 0;
        size_t start = 0;
        bool default_allow = true;
        for (size_t i = rs->n; i-- > 0;)
                if (all_devices(&rs->r[i])) {
                        default_allow = rs->r[i].allow;
                        start = i + 1;
                        break;
                }
        _cleanup_free_ tr_dev_v1_write *w = calloc(rs->n + 1, sizeof *w);
        if (!w)
                return tr_error_set(err, ENOMEM, "out of memory");
        size_t n = 0;
        w[n].file = default_allow ? "devices.allow" : "devices.deny";
        snprintf(w[n++].value, sizeof w[0].value, "a");
        for (size_t j = start; j < rs->n; j++) {
                const tr_dev_rule *r = &rs->r[j];
                char text[64];
                tr_dev_rule_format(r, text, sizeof text);
                if (r->type == 'a')
                        return tr_error_set(err, EOPNOTSUPP,
                                            "device rule '%s': a v1 devices cgroup cannot take an all-devices rule "
                                            "with partial access", text);
                bool cancels = false;
                for (size_t i = start; i < j; i++) {
                        const tr_dev_rule *e = &rs->r[i];
                        if (e->allow == default_allow || !overlap(e, r))
                                continue; /* not an exception, or another device */
                        if (!same_device(e, r))
                                return tr_error_set(err, EOPNOTSUPP,
                                                    "device rule '%s' overlaps an earlier rule on other devices; v1 "
                                                    "devices cgroups can only add or exactly remove exceptions",
                                                    text);
                        if (r->allow != default_allow && r->allow && e->access != r->access)
                                return tr_error_set(err, EOPNOTSUPP,
                                                    "device rule '%s': v1 merges allow rules on one device; give "
                                                    "one rule with all its access", text);
                        cancels = true;
                }
                if (r->allow == default_allow && !cancels)
                        continue; /* the default already says so */
                w[n].file = r->allow ? "devices.allow" : "devices.deny";
                v1_value(r, w[n].value, sizeof w[n].value);
                n++;
        }
        *out = TR_TAKE_PTR(w);
        *np = n;
        return 0;
}

static int v1_apply(tr_dev_filter *f, tr_cgroup *cg, const tr_dev_rules *rs, tr_error *err)
{
        (void) f;
        _cleanup_free_ tr_dev_v1_write *w = NULL;
        size_t n = 0;
        int r = tr_dev_v1_plan(rs, &w, &n, err);
        if (r < 0)
                return r;
        int idx = tr_cgroup_hierarchies(cg)->v1_of[TR_CTRL_DEVICES];
        for (size_t i = 0; i < n; i++) {
                r = tr_cgroup_write(cg, idx, w[i].file, w[i].value, err);
                if (r < 0)
                        return tr_error_prefix(err, "%s '%s': ", w[i].file, w[i].value);
        }
        return 0;
}

static void v1_remove(tr_dev_filter *f)
{
        (void) f; /* the rules go with the cgroup directory */
}

const tr_dev_ops tr_dev_v1_ops = { "v1", v1_apply, v1_remove };
