/* spank-child.h - the extern step's container process: slurmstepd forks one `sleep` for
 * the extern step and calls task_post_fork without a task (no S_TASK_PID). */
#pragma once

#include <sys/types.h>

/* The only child of process `parent` (its threads' children lists together); 0 when it
 * has none or several, -errno when /proc cannot be read. */
pid_t ps_only_child(pid_t parent);
