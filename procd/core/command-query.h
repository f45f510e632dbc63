/* command-query.h - small lookups of the command layer that a transport needs besides the
 * operations of command.h (kept apart from command.c). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "procd/core/command.h"
#include "procd/types.h"
#include "trackers/cglimits.h"

/* The root pid of the family named by pid (0: the root family's root).
 * PROCD_E_FAMILY_NOT_FOUND when no family has that root. */
procd_status pd_cmd_family_root(pd_commands *cm, pid_t pid, pid_t *root_out, procd_error *err);

/* Whether pid is procd itself or one of its ancestors (never to be put in a family). */
bool pd_holds_procd(pid_t pid);

/* The state Dump shows for a family: "killing", "frozen", "killed" or "running". */
const char *pd_family_state_name(const pd_family *f);

/* The limits set on the cgroup of the family named by pid (memory.max, cpu.max, pids.max;
 * issue 17 §4): every field unavailable for a family without a cgroup or where no limit
 * is set.  Any caller (as GetUsage). */
procd_status pd_cmd_get_limits(pd_commands *cm, const pd_caller *who, pid_t pid, tr_limits_now *out,
                               procd_error *err);
