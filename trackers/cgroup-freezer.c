/* cgroup-freezer.c - freeze and thaw: v2 cgroup.freeze confirmed by cgroup.events, else v1
 * freezer.state polled until FROZEN. */
#include "cgroup-internal.h"

#include <errno.h>
#include <string.h>

#include "backoff.h"
#include "cgparse.h"
#include "util.h"

const char *tr_freeze_state_name(tr_freeze_state s)
{
        switch (s) {
        case TR_THAWED: return "thawed";
        case TR_FREEZING: return "freezing";
        case TR_FROZEN: return "frozen";
        }
        return "?";
}

bool tr_cg_has_v2_freeze(tr_cgroup *cg)
{
        return tr_cgroup_has_file(cg, cg->hs->v2, "cgroup.freeze");
}

int tr_cg_v1_freezer(tr_cgroup *cg)
{
        int i = tr_cg_v1_index(cg, TR_CTRL_FREEZER);
        return (i >= 0 && tr_cgroup_has_file(cg, i, "freezer.state")) ? i : -1;
}

/* v2: "frozen" of cgroup.events, -1 unknown. */
static int v2_frozen(tr_cgroup *cg)
{
        char buf[256];
        int populated, frozen;
        if (tr_cg_hot_read(cg, H_EVENTS, buf, sizeof buf) < 0 || tr_parse_cgroup_events(buf, &populated, &frozen) < 0)
                return -1;
        return frozen;
}

/* v1: freezer.state as a tr_freeze_state; -errno on failure.  Reading it is what moves
 * FREEZING to FROZEN in the kernel (update_if_frozen), so polling it is required. */
int tr_cg_v1_state(tr_cgroup *cg)
{
        char buf[64];
        int r = tr_cg_hot_read(cg, H1_FREEZER_STATE, buf, sizeof buf);
        if (r < 0)
                return r;
        if (strncmp(buf, "FROZEN", 6) == 0)
                return TR_FROZEN;
        if (strncmp(buf, "FREEZING", 8) == 0)
                return TR_FREEZING;
        return TR_THAWED;
}

/* Current freeze state of the freezer the handle uses (v2 preferred). */
tr_freeze_state tr_cg_current_state(tr_cgroup *cg)
{
        if (tr_cg_has_v2_freeze(cg)) {
                char buf[16];
                bool asked = tr_read_file_at(tr_cg_dirfd(cg, cg->hs->v2), "cgroup.freeze", buf, sizeof buf, NULL) > 0 &&
                             buf[0] == '1';
                if (v2_frozen(cg) == 1)
                        return TR_FROZEN;
                return asked ? TR_FREEZING : TR_THAWED;
        }
        int s = tr_cg_v1_state(cg);
        return s < 0 ? TR_THAWED : (tr_freeze_state) s;
}

/* Poll checks: 1 reached, 0 not yet, -errno. */
static int is_v2_frozen(void *ud) { return v2_frozen(ud) == 1; }

static int is_v1_frozen(void *ud)
{
        int s = tr_cg_v1_state(ud);
        return s < 0 ? s : s == TR_FROZEN;
}

int tr_cg_do_freeze(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        uint64_t deadline = tr_now_usec() + timeout_usec;
        *reached = TR_THAWED;
        if (tr_cg_has_v2_freeze(cg)) {
                int r = tr_write_file_at(tr_cg_dirfd(cg, cg->hs->v2), "cgroup.freeze", "1", err);
                if (r < 0)
                        return r;
                /* "frozen 1" appears in cgroup.events once every task stopped; a task in
                 * uninterruptible sleep delays it. */
                *reached = tr_poll_until(deadline, 1000, is_v2_frozen, cg) > 0 ? TR_FROZEN : TR_FREEZING;
                return 0;
        }
        int i = tr_cg_v1_freezer(cg);
        if (i < 0)
                return tr_error_set(err, EOPNOTSUPP, "no freezer for this cgroup");
        int r = tr_write_file_at(tr_cg_dirfd(cg, i), "freezer.state", "FROZEN", err);
        if (r < 0)
                return r;
        r = tr_poll_until(deadline, 1000, is_v1_frozen, cg);
        if (r < 0)
                return tr_error_setx(err, -r, "reading freezer.state");
        *reached = r > 0 ? TR_FROZEN : TR_FREEZING;
        return 0;
}

struct thaw_ctx {
        tr_cgroup *cg;
        bool v2;
        int v1; /* index of the v1 freezer hierarchy, or -1 */
};

static int is_thawed(void *ud)
{
        struct thaw_ctx *c = ud;
        bool v2_done = !c->v2 || v2_frozen(c->cg) != 1;
        bool v1_done = c->v1 < 0 || tr_cg_v1_state(c->cg) == TR_THAWED;
        return v2_done && v1_done;
}

/* Thaw both freezers (a v1 FROZEN state left by anyone would keep tasks stopped even
 * when the v2 cgroup is thawed). */
int tr_cg_do_thaw(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        uint64_t deadline = tr_now_usec() + timeout_usec;
        struct thaw_ctx c = { cg, tr_cg_has_v2_freeze(cg), tr_cg_v1_freezer(cg) };
        if (!c.v2 && c.v1 < 0)
                return tr_error_set(err, EOPNOTSUPP, "no freezer for this cgroup");
        if (c.v2) {
                int r = tr_write_file_at(tr_cg_dirfd(cg, cg->hs->v2), "cgroup.freeze", "0", err);
                if (r < 0)
                        return r;
        }
        if (c.v1 >= 0 && tr_cg_v1_state(cg) != TR_THAWED) {
                int r = tr_write_file_at(tr_cg_dirfd(cg, c.v1), "freezer.state", "THAWED", err);
                if (r < 0)
                        return r;
        }
        if (tr_poll_until(deadline, 1000, is_thawed, &c) > 0) {
                *reached = TR_THAWED;
                return 0;
        }
        /* not confirmed thawed: report what the freezer says (a v1 FREEZING is not FROZEN) */
        *reached = tr_cg_current_state(cg);
        if (*reached == TR_THAWED)
                *reached = TR_FREEZING;
        return 0;
}

static int freeze_or_thaw(tr_cgroup *cg, bool freeze, uint64_t timeout_usec, tr_freeze_state *reached,
                          tr_error *err)
{
        const char *what = freeze ? "freeze" : "thaw";
        tr_freeze_state dummy;
        int r = tr_cg_check_may_act(cg, what, false, err);
        if (r == 0)
                r = tr_cg_check_exists(cg, what, err);
        if (r < 0)
                return r;
        if (!reached)
                reached = &dummy;
        return freeze ? tr_cg_do_freeze(cg, timeout_usec, reached, err) : tr_cg_do_thaw(cg, timeout_usec, reached, err);
}

int tr_cgroup_freeze(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        return freeze_or_thaw(cg, true, timeout_usec, reached, err);
}

int tr_cgroup_thaw(tr_cgroup *cg, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        return freeze_or_thaw(cg, false, timeout_usec, reached, err);
}
