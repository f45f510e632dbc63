/* cgroup-kill.c - the destructive side: signal (freeze, signal the listed members by pid +
 * start time, thaw), kill (v2 cgroup.kill, else freeze+SIGKILL rounds) and populated.  Each
 * passes the safety gate first (cgroup-gate.c). */
#include "cgroup-internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backoff.h"
#include "cgparse.h"
#include "pidref.h"
#include "procscan.h"
#include "util.h"

/* ---- signal / kill ------------------------------------------------------------------ */

static bool has_freezer(tr_cgroup *cg) { return tr_cg_has_v2_freeze(cg) || tr_cg_v1_freezer(cg) >= 0; }

static tr_cgroup_hook_fn signal_hook;
static void *signal_hook_ud;

void tr_cgroup_set_signal_hook(tr_cgroup_hook_fn fn, void *ud)
{
        signal_hook = fn;
        signal_hook_ud = ud;
}

/* List the family into *members and send sig to each member except ourselves, never to a
 * process that merely reuses a listed pid.  Returns 0 or the listing's -errno.
 *
 * Each member's start time is read right after the listing, and the signal goes through
 * tr_safe_kill(pid, start), which signals only the process with that start time (through
 * a pidfd).  A pid that was reused between the listing and the start-time read is caught
 * by listing again: only pids listed both before and after their start times were read are
 * signalled (a stranger that took a member's pid is not in the cgroup; one that took it
 * and is in the cgroup is a member).  A pid gone by the start-time read is skipped.
 *
 * This matters where no freezer holds the family still (no freezer, or the freeze only
 * reached FREEZING): members exit and pids get reused while we list.  It is done on the
 * frozen path too: a frozen task cannot exit on its own, but a fatal signal from elsewhere
 * gets through the v2 freezer, so a listed pid can still be freed and reused there.  The
 * cost is one /proc/PID/stat read per member (two, with tr_safe_kill's own check) and one
 * more listing: small next to the freeze wait, and only on signal/kill. */
static int signal_members(tr_cgroup *cg, int sig, tr_pidset *members, tr_error *err)
{
        int r = tr_cgroup_members(cg, members, err);
        if (r < 0)
                return r;
        if (members->n == 0)
                return 0;
        _cleanup_free_ uint64_t *ticks = calloc(members->n, sizeof *ticks);
        if (!ticks)
                return tr_error_set(err, ENOMEM, "out of memory");
        for (size_t k = 0; k < members->n; k++)
                if (tr_pid_start_ticks(members->pids[k], &ticks[k]) < 0)
                        ticks[k] = 0; /* gone: not signalled */
        _cleanup_pidset_ tr_pidset again = TR_PIDSET_INIT;
        r = tr_cgroup_members(cg, &again, err);
        if (r < 0)
                return r;
        if (signal_hook)
                signal_hook(signal_hook_ud);
        pid_t self = getpid();
        for (size_t k = 0; k < members->n; k++) {
                pid_t pid = members->pids[k];
                if (pid == self || ticks[k] == 0 || !tr_pidset_contains(&again, pid))
                        continue;
                (void) tr_safe_kill(pid, ticks[k], sig);
        }
        return 0;
}

int tr_cgroup_signal(tr_cgroup *cg, int sig, tr_error *err)
{
        int r = tr_cg_check_may_act(cg, "signal", false, err);
        if (r == 0)
                r = tr_cg_check_exists(cg, "signal", err);
        if (r < 0)
                return r;
        if (sig < 0 || sig >= NSIG)
                return tr_error_set(err, EINVAL, "bad signal %d", sig);
        bool froze = false;
        tr_freeze_state st = TR_THAWED;
        if (has_freezer(cg) && tr_cg_current_state(cg) == TR_THAWED) {
                r = tr_cg_do_freeze(cg, TR_CG_FREEZE_BOUND_USEC, &st, err);
                if (r < 0)
                        return r;
                froze = true;
        }
        _cleanup_pidset_ tr_pidset members = TR_PIDSET_INIT;
        r = signal_members(cg, sig, &members, err);
        /* Thaw only what we froze: a family frozen by the caller stays frozen (its SIGCONT
         * or SIGSTOP is delivered and takes effect at thaw, as with a stopped process). */
        if (froze) {
                tr_error terr = { 0 };
                int t = tr_cg_do_thaw(cg, TR_CG_FREEZE_BOUND_USEC, &st, &terr);
                if (t < 0 && r == 0) {
                        if (err)
                                *err = terr;
                        r = t;
                }
        }
        return r;
}

void tr_kill_result_free(tr_kill_result *r)
{
        if (r)
                tr_pidset_free(&r->survivors);
}

/* Empty: no member in the membership source. */
static int is_empty(tr_cgroup *cg, bool *empty)
{
        bool populated;
        int r = tr_cgroup_populated(cg, &populated, NULL);
        if (r == -ENODEV || r == -ENOENT) {
                *empty = true; /* the cgroup itself is gone: so are its processes */
                return 0;
        }
        if (r < 0)
                return r;
        *empty = !populated;
        return 0;
}

/* Wait until empty or the deadline. */
static int check_empty(void *ud)
{
        bool empty = false;
        return is_empty(ud, &empty) == 0 && empty;
}

static bool wait_empty(tr_cgroup *cg, uint64_t deadline)
{
        return tr_poll_until(deadline, 500, check_empty, cg) > 0;
}

static int kill_via_cgroup_kill(tr_cgroup *cg, uint64_t deadline, tr_kill_result *res, tr_error *err)
{
        res->method = "cgroup.kill";
        /* cgroup.kill (5.14+) SIGKILLs the whole subtree in the kernel and makes forks
         * racing it fail, so one write suffices. */
        int r = tr_write_file_at(tr_cg_dirfd(cg, cg->hs->v2), "cgroup.kill", "1", err);
        if (r < 0)
                return r;
        /* A v1 freezer left FROZEN keeps the killed tasks from dying until thawed. */
        int i = tr_cg_v1_freezer(cg);
        if (i >= 0 && tr_cg_v1_state(cg) != TR_THAWED)
                (void) tr_write_file_at(tr_cg_dirfd(cg, i), "freezer.state", "THAWED", NULL);
        res->empty = wait_empty(cg, deadline);
        return 0;
}

static int kill_via_freeze(tr_cgroup *cg, uint64_t deadline, tr_kill_result *res, tr_error *err)
{
        bool freezer = has_freezer(cg);
        res->method = freezer ? "freeze+kill" : "kill";
        _cleanup_pidset_ tr_pidset members = TR_PIDSET_INIT;
        for (;;) {
                tr_freeze_state st;
                res->rounds++;
                uint64_t now = tr_now_usec();
                uint64_t left = deadline > now ? deadline - now : 0;
                if (freezer)
                        (void) tr_cg_do_freeze(cg, left < TR_CG_FREEZE_BOUND_USEC ? left : TR_CG_FREEZE_BOUND_USEC, &st, NULL);
                /* SIGKILL is queued to frozen tasks; they die when thawed (v1) or at once
                 * (v2 lets fatal signals through its freezer). */
                int r = signal_members(cg, SIGKILL, &members, err);
                if (r == -ENODEV || r == -ENOENT) {
                        res->empty = true;
                        return 0;
                }
                if (r < 0) {
                        /* never leave the family frozen behind an error */
                        if (freezer)
                                (void) tr_cg_do_thaw(cg, TR_CG_FREEZE_BOUND_USEC, &st, NULL);
                        return r;
                }
                if (freezer)
                        (void) tr_cg_do_thaw(cg, TR_CG_FREEZE_BOUND_USEC, &st, NULL);
                uint64_t round_end = tr_now_usec() + 50000;
                if (wait_empty(cg, round_end < deadline ? round_end : deadline)) {
                        res->empty = true;
                        return 0;
                }
                if (tr_now_usec() >= deadline)
                        return 0;
        }
}

int tr_cgroup_kill(tr_cgroup *cg, uint64_t timeout_usec, tr_kill_result *res, tr_error *err)
{
        memset(res, 0, sizeof *res);
        res->method = "none";
        int r = tr_cg_check_may_act(cg, "kill", false, err);
        if (r == 0)
                r = tr_cg_check_exists(cg, "kill", err);
        if (r < 0)
                return r;
        uint64_t start = tr_now_usec(), deadline = start + timeout_usec;
        r = -EOPNOTSUPP;
        if (tr_cgroup_has_file(cg, cg->hs->v2, "cgroup.kill"))
                r = kill_via_cgroup_kill(cg, deadline, res, err);
        /* cgroup.kill refuses threaded cgroups with EOPNOTSUPP (cgroup_kill_write): the
         * freeze+kill rounds still work there. */
        if (r == -EOPNOTSUPP) {
                tr_error_clear(err);
                r = kill_via_freeze(cg, deadline, res, err);
        }
        res->elapsed_usec = tr_now_usec() - start;
        if (r < 0)
                return r;
        if (!res->empty) {
                /* Survivors at the bound (tasks in D state, or still exiting). */
                if (tr_cgroup_members(cg, &res->survivors, NULL) < 0)
                        tr_pidset_clear(&res->survivors);
                res->empty = res->survivors.n == 0;
        }
        return 0;
}

/* ---- populated ---------------------------------------------------------------------- */

int tr_cgroup_populated(tr_cgroup *cg, bool *populated, tr_error *err)
{
        int v2 = tr_cg_v2_index(cg);
        if (v2 >= 0) {
                char buf[256];
                int pop, frozen;
                int r = tr_cg_hot_read(cg, H_EVENTS, buf, sizeof buf);
                if (r >= 0 && tr_parse_cgroup_events(buf, &pop, &frozen) == 0 && pop >= 0) {
                        *populated = pop == 1;
                        return 0;
                }
                if (tr_cg_is_gone_errno(-r))
                        return tr_error_set(err, ENODEV, "cgroup %s is gone", cg->path[v2]);
        }
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        int r = tr_cgroup_members(cg, &m, err);
        if (r < 0)
                return r;
        *populated = m.n > 0;
        return 0;
}

