/* joblimits.h - resource limits on the job leaf, each mapped to its v2 file and its v1 file.
 * The hierarchy that actually has the controller for this cgroup is used
 * (tr_hierarchies_best + tr_cgroup_has_file).  A limit that cannot be applied is an error
 * (-EOPNOTSUPP, err names the option and why) unless best_effort, then a warning. */
#pragma once

#include <stdbool.h>

#include "options.h"
#include "trackers/cgroup.h"

int st_limits_apply(tr_cgroup *job, const tr_hierarchies *hs, const st_limits *l, bool best_effort, tr_error *err);

/* v1 cpu.shares for a v2 cpu.weight (100 -> 1024, clamped to [2, 262144]). */
unsigned long long st_weight_to_shares(uint64_t weight);
