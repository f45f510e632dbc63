/* command-query.h - small lookups of the command layer that a transport needs besides the
 * operations of command.h (kept apart from command.c). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "procd/core/command.h"
#include "procd/types.h"

/* The root pid of the family named by pid (0: the root family's root).
 * PROCD_E_FAMILY_NOT_FOUND when no family has that root. */
procd_status pd_cmd_family_root(pd_commands *cm, pid_t pid, pid_t *root_out, procd_error *err);

/* Whether pid is procd itself or one of its ancestors (never to be put in a family). */
bool pd_holds_procd(pid_t pid);
