/* tracker-cgroup.c - the cgroup tracker behind the ops table (self: tr_cgroup *). */
#include "tracker.h"

static int cg_members(void *self, tr_pidset *out, tr_error *err) { return tr_cgroup_members(self, out, err); }
static int cg_usage(void *self, unsigned want, tr_usage *out, tr_error *err)
{
        return tr_cgroup_usage_want(self, want, out, err);
}
static int cg_signal(void *self, int sig, tr_error *err) { return tr_cgroup_signal(self, sig, err); }

static int cg_kill(void *self, uint64_t timeout_usec, tr_kill_result *res, tr_error *err)
{
        return tr_cgroup_kill(self, timeout_usec, res, err);
}

static int cg_freeze(void *self, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        return tr_cgroup_freeze(self, timeout_usec, reached, err);
}

static int cg_thaw(void *self, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        return tr_cgroup_thaw(self, timeout_usec, reached, err);
}

static int cg_populated(void *self, bool *populated, tr_error *err) { return tr_cgroup_populated(self, populated, err); }

const tr_tracker_ops tr_cgroup_tracker_ops = {
        .name = "cgroup",
        .members = cg_members,
        .usage = cg_usage,
        .signal = cg_signal,
        .kill = cg_kill,
        .freeze = cg_freeze,
        .thaw = cg_thaw,
        .populated = cg_populated,
};
