/* regtest.h - what the tests of procd/core/'s registry layer share: a registry whose root
 * family is the test program itself (its processes are the root family's), /proc families
 * (no family cgroups), registrations that assert. */
#pragma once

#include <sys/types.h>

#include "procd/core/registry.h"

/* Suite init: the host's hierarchies, discovered once. */
int rt_suite_init(void);
/* A fresh registry (CU_ASSERT_FATAL when it cannot be made). */
pd_registry *rt_registry(void);
/* Register pid (no watcher, interval 60 s); the family, or NULL with the assertion failed. */
pd_family *rt_register(pd_registry *r, pid_t pid);
