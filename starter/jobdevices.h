/* jobdevices.h - the job's device rules: GPU nodes hidden by --hide-gpus first, then the
 * --device-allow/--device-deny rules in command-line order (so the user's rules win), enforced
 * on the job leaf before the job's first instruction (trackers/devices.h). */
#pragma once

#include "options.h"
#include "trackers/devices.h"

/* Build the rule list for o into *out (empty: no filter needed).  dev_root is "/dev". */
int st_devices_rules(const st_options *o, const char *dev_root, tr_dev_rules *out, tr_error *err);

/* Build and enforce; *f stays NULL when there is no rule.  The caller frees *f (detaches)
 * before destroying the job cgroup, and rules with tr_dev_rules_free. */
int st_devices_apply(tr_cgroup *job, const st_options *o, tr_dev_rules *rules, tr_dev_filter **f, tr_error *err);
