/* tracker.c - a family: the cgroup tracker when there is a cgroup, the /proc tracker always,
 * and the fallback rule between them (see tracker.h). */
#include "tracker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

enum tr_op { OP_MEMBERS, OP_USAGE, OP_SIGNAL, OP_KILL, OP_FREEZE, OP_THAW, OP_POPULATED, OP_COUNT };

static const char *const op_names[OP_COUNT] = {
        [OP_MEMBERS] = "members", [OP_USAGE] = "usage",   [OP_SIGNAL] = "signal",
        [OP_KILL] = "kill",       [OP_FREEZE] = "freeze", [OP_THAW] = "thaw",
        [OP_POPULATED] = "populated",
};

struct tr_family {
        tr_cgroup *cg; /* NULL: a /proc family */
        tr_procfam *pf;
        /* primary answers while it works (the cgroup tracker, or none for a /proc family);
         * fallback answers where it fails (always the /proc tracker). */
        const tr_tracker_ops *primary;
        void *primary_self;
        const tr_tracker_ops *fallback;
        pid_t root_pid;
        bool logged[OP_COUNT]; /* fallback reason logged once per operation */
        tr_log_fn log;
        void *log_userdata;
};

static void log_stderr(void *userdata, const char *message)
{
        (void) userdata;
        fprintf(stderr, "procd trackers: %s\n", message);
}

int tr_family_new(const tr_procfam_spec *spec, tr_cgroup *cg, tr_family **out, tr_error *err)
{
        tr_family *f = calloc(1, sizeof *f);
        if (!f) {
                if (cg)
                        tr_cgroup_free(cg);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        int r = tr_procfam_new(spec, &f->pf, err);
        if (r < 0) {
                if (cg)
                        tr_cgroup_free(cg);
                free(f);
                return r;
        }
        f->cg = cg;
        f->primary = cg ? &tr_cgroup_tracker_ops : NULL;
        f->primary_self = cg;
        f->fallback = &tr_proc_tracker_ops;
        f->root_pid = spec->root_pid;
        f->log = log_stderr;
        *out = f;
        return 0;
}

void tr_family_free(tr_family *f)
{
        if (!f)
                return;
        if (f->cg)
                tr_cgroup_free(f->cg);
        tr_procfam_free(f->pf);
        free(f);
}

void tr_family_set_log(tr_family *f, tr_log_fn fn, void *userdata)
{
        f->log = fn ? fn : log_stderr;
        f->log_userdata = userdata;
}

tr_cgroup *tr_family_cgroup(tr_family *f) { return f->cg; }
tr_procfam *tr_family_procfam(tr_family *f) { return f->pf; }
const char *tr_family_primary_name(const tr_family *f) { return (f->primary ? f->primary : f->fallback)->name; }

/* The fallback rule: the cgroup failed for op; log why once, and let /proc answer. */
static void note_fallback(tr_family *f, enum tr_op op, const tr_error *cg_err, char *reason, size_t size)
{
        char buf[160];
        snprintf(buf, sizeof buf, "cgroup %s failed: %s", op_names[op], cg_err->msg[0] ? cg_err->msg : strerror(cg_err->code));
        if (reason)
                snprintf(reason, size, "%s", buf);
        if (!f->logged[op]) {
                f->logged[op] = true;
                char msg[300];
                snprintf(msg, sizeof msg, "family %d: %s; answering through /proc", (int) f->root_pid, buf);
                f->log(f->log_userdata, msg);
        }
}

/* True when the primary answered (r >= 0); otherwise the fallback rule applies. */
static bool primary_answered(tr_family *f, enum tr_op op, int r, const tr_error *e)
{
        if (r >= 0)
                return true;
        note_fallback(f, op, e, NULL, 0);
        return false;
}

int tr_family_members(tr_family *f, tr_pidset *out, tr_error *err)
{
        if (f->primary) {
                tr_error e = { 0 };
                int r = f->primary->members(f->primary_self, out, &e);
                if (primary_answered(f, OP_MEMBERS, r, &e)) {
                        /* what the cgroup lists now seeds the /proc side for a later fallback */
                        tr_procfam_set_seeds(f->pf, out);
                        return r;
                }
                tr_pidset_clear(out);
        }
        return f->fallback->members(f->pf, out, err);
}

/* Fields every consumer relies on; when the cgroup cannot give one (controller missing on
 * this host), /proc supplies it and the record says so.  Others (pids_peak, oom_kills, PSI)
 * /proc cannot give and stay unavailable: a /proc scan per call for them would cost
 * O(processes on the host) for nothing.  Only the fields asked for count. */
static bool core_field_missing(const tr_usage *u, unsigned want, const char **which)
{
        if ((want & TR_WANT_CPU) && !u->cpu_usec.available)
                *which = "cpu_usec";
        else if ((want & TR_WANT_CPU_SPLIT) && !u->cpu_user_usec.available && !u->cpu_usec.available)
                *which = "cpu_user_usec";
        else if ((want & (TR_WANT_MEMORY_STAT | TR_WANT_RSS)) && !u->rss_bytes.available)
                *which = "rss_bytes";
        else if ((want & TR_WANT_PROCS) && !u->num_procs.available)
                *which = "num_procs";
        else
                return false;
        return true;
}

int tr_family_usage(tr_family *f, tr_usage *out, tr_error *err)
{
        return tr_family_usage_want(f, TR_WANT_ALL, out, err);
}

int tr_family_usage_want(tr_family *f, unsigned want, tr_usage *out, tr_error *err)
{
        tr_usage_init(out);
        if (!f->primary)
                return f->fallback->usage(f->pf, want, out, err);

        tr_error cg_err = { 0 };
        int r = f->primary->usage(f->primary_self, want, out, &cg_err);
        if (r < 0) {
                tr_usage_init(out);
                r = f->fallback->usage(f->pf, want, out, err);
                if (r < 0)
                        return r;
                out->fallback = true;
                note_fallback(f, OP_USAGE, &cg_err, out->fallback_reason, sizeof out->fallback_reason);
                return r;
        }
        const char *which;
        if (core_field_missing(out, want, &which)) {
                tr_usage pu;
                tr_usage_init(&pu);
                if (f->fallback->usage(f->pf, want, &pu, NULL) >= 0) {
                        tr_usage_fill_missing(out, &pu);
                        out->fallback = true;
                        snprintf(out->fallback_reason, sizeof out->fallback_reason,
                                 "cgroup gives no %s here; missing fields from /proc", which);
                        if (!f->logged[OP_USAGE]) {
                                f->logged[OP_USAGE] = true;
                                char msg[256];
                                snprintf(msg, sizeof msg, "family %d: %s", (int) f->root_pid, out->fallback_reason);
                                f->log(f->log_userdata, msg);
                        }
                }
        }
        return r;
}

int tr_family_signal(tr_family *f, int sig, tr_error *err)
{
        tr_error e = { 0 };
        if (f->primary && primary_answered(f, OP_SIGNAL, f->primary->signal(f->primary_self, sig, &e), &e))
                return 0;
        return f->fallback->signal(f->pf, sig, err);
}

int tr_family_kill(tr_family *f, uint64_t timeout_usec, tr_kill_result *res, tr_error *err)
{
        if (f->primary) {
                tr_error e = { 0 };
                uint64_t start = tr_now_usec();
                int r = f->primary->kill(f->primary_self, timeout_usec, res, &e);
                if (primary_answered(f, OP_KILL, r, &e))
                        return r;
                tr_kill_result_free(res);
                uint64_t spent = tr_now_usec() - start;
                timeout_usec = spent < timeout_usec ? timeout_usec - spent : 0;
        }
        return f->fallback->kill(f->pf, timeout_usec, res, err);
}

int tr_family_freeze(tr_family *f, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        tr_error e = { 0 };
        if (f->primary && primary_answered(f, OP_FREEZE, f->primary->freeze(f->primary_self, timeout_usec, reached, &e), &e))
                return 0;
        return f->fallback->freeze(f->pf, timeout_usec, reached, err);
}

int tr_family_thaw(tr_family *f, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        tr_error e = { 0 };
        if (f->primary && primary_answered(f, OP_THAW, f->primary->thaw(f->primary_self, timeout_usec, reached, &e), &e))
                return 0;
        return f->fallback->thaw(f->pf, timeout_usec, reached, err);
}

int tr_family_populated(tr_family *f, bool *populated, tr_error *err)
{
        tr_error e = { 0 };
        if (f->primary && primary_answered(f, OP_POPULATED, f->primary->populated(f->primary_self, populated, &e), &e))
                return 0;
        return f->fallback->populated(f->pf, populated, err);
}
