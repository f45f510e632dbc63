/* joblimits.h - resource limits on the job leaf.  Each option's v2 file, v1 file and value
 * formats come from the trackers' table (trackers/cglimits.h); the hierarchy that actually
 * has the controller for this cgroup is used (tr_limit_hierarchy + tr_cgroup_has_file).  A limit that cannot be applied is an error
 * (-EOPNOTSUPP, err names the option and why) unless best_effort, then a warning. */
#pragma once

#include <stdbool.h>

#include "options.h"
#include "trackers/cgroup.h"

int st_limits_apply(tr_cgroup *job, const tr_hierarchies *hs, const st_limits *l, bool best_effort, tr_error *err);
