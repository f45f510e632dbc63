/* tracker-proc.c - the /proc-scan tracker behind the ops table (self: tr_procfam *). */
#include "tracker.h"

static int pf_members(void *self, tr_pidset *out, tr_error *err) { return tr_procfam_members(self, out, err); }
/* one refresh gives every field: want changes nothing */
static int pf_usage(void *self, unsigned want, tr_usage *out, tr_error *err)
{
        (void) want;
        return tr_procfam_usage(self, out, err);
}
static int pf_signal(void *self, int sig, tr_error *err) { return tr_procfam_signal(self, sig, err); }

static int pf_kill(void *self, uint64_t timeout_usec, tr_kill_result *res, tr_error *err)
{
        return tr_procfam_kill(self, timeout_usec, res, err);
}

static int pf_freeze(void *self, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        return tr_procfam_freeze(self, timeout_usec, reached, err);
}

static int pf_thaw(void *self, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        return tr_procfam_thaw(self, timeout_usec, reached, err);
}

static int pf_populated(void *self, bool *populated, tr_error *err) { return tr_procfam_populated(self, populated, err); }

const tr_tracker_ops tr_proc_tracker_ops = {
        .name = "proc",
        .members = pf_members,
        .usage = pf_usage,
        .signal = pf_signal,
        .kill = pf_kill,
        .freeze = pf_freeze,
        .thaw = pf_thaw,
        .populated = pf_populated,
};
