/* track.c - embedded (tr_family) and procd tracking behind one ops table. */
#include "track.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "trackers/util.h"
#include <stdarg.h>
#include <stdio.h>

#include "procd/client.h"
#include "procd/wire.h"

#define FREEZE_TIMEOUT_USEC 2000000

/* ---- embedded ---- */

static int emb_signal(st_track *t, int sig, tr_error *err) { return tr_family_signal(t->family, sig, err); }

static int emb_kill(st_track *t, uint64_t timeout_usec, bool *empty, tr_error *err)
{
        tr_kill_result res;
        memset(&res, 0, sizeof res);
        int r = tr_family_kill(t->family, timeout_usec, &res, err);
        *empty = r >= 0 && res.empty;
        tr_kill_result_free(&res);
        return r;
}

static int emb_freeze(st_track *t, tr_error *err)
{
        tr_freeze_state st;
        return tr_family_freeze(t->family, FREEZE_TIMEOUT_USEC, &st, err);
}

static int emb_thaw(st_track *t, tr_error *err)
{
        tr_freeze_state st;
        return tr_family_thaw(t->family, FREEZE_TIMEOUT_USEC, &st, err);
}

static void emb_close(st_track *t) { (void) t; }

static const st_track_ops embedded_ops = {
        .name = "embedded",
        .signal = emb_signal,
        .kill = emb_kill,
        .freeze = emb_freeze,
        .thaw = emb_thaw,
        .close = emb_close,
};

/* ---- procd ---- */

/* A procd call failed: the embedded tracker answers this call.  When procd no longer
 * knows the family (it restarted without it) or cannot be reached even after the client's
 * reconnection, the starter tracks the job itself from now on and reports "embedded". */
static int pd_fail(st_track *t, const char *what, procd_error *perr, tr_error *err)
{
        fprintf(stderr, "procd-starter: warning: procd %s: %s; using the embedded tracker\n", what, perr->msg);
        if (perr->status == PROCD_E_FAMILY_NOT_FOUND || perr->status == PROCD_E_TRANSPORT) {
                snprintf(t->reason, sizeof t->reason, "procd %s: %s", what, perr->msg);
                procd_disconnect(t->client);
                t->client = NULL;
                t->ops = &embedded_ops;
        }
        (void) err;
        return -EIO;
}

static int pd_signal(st_track *t, int sig, tr_error *err)
{
        procd_error perr = { 0 };
        /* SignalProcess signals one process; the family needs each member: embedded signal
         * (cgroup: freeze, signal all, thaw) is the exact operation. */
        (void) perr;
        return tr_family_signal(t->family, sig, err);
}

static int pd_kill(st_track *t, uint64_t timeout_usec, bool *empty, tr_error *err)
{
        procd_error perr = { 0 };
        if (procd_kill_family(t->client, t->root, &perr) == PROCD_OK) {
                *empty = true;
                return 0;
        }
        pd_fail(t, "KillFamily", &perr, err);
        return emb_kill(t, timeout_usec, empty, err);
}

static int pd_freeze(st_track *t, tr_error *err)
{
        procd_error perr = { 0 };
        if (procd_suspend_family(t->client, t->root, &perr) == PROCD_OK)
                return 0;
        pd_fail(t, "SuspendFamily", &perr, err);
        return emb_freeze(t, err);
}

static int pd_thaw(st_track *t, tr_error *err)
{
        procd_error perr = { 0 };
        if (procd_continue_family(t->client, t->root, &perr) == PROCD_OK)
                return 0;
        pd_fail(t, "ContinueFamily", &perr, err);
        return emb_thaw(t, err);
}

static void pd_close(st_track *t)
{
        if (!t->client)
                return;
        procd_error perr = { 0 };
        procd_status s = procd_unregister_family(t->client, t->root, &perr);
        if (s != PROCD_OK && s != PROCD_E_FAMILY_NOT_FOUND)
                fprintf(stderr, "procd-starter: warning: procd UnregisterFamily: %s\n", perr.msg);
        procd_disconnect(t->client);
        t->client = NULL;
}

static const st_track_ops procd_ops = {
        .name = "procd",
        .signal = pd_signal,
        .kill = pd_kill,
        .freeze = pd_freeze,
        .thaw = pd_thaw,
        .close = pd_close,
};

/* Not tracked by procd: the reason goes to t->reason (the report) and, as a warning, to
 * stderr. */
static int no_procd(st_track *t, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int no_procd(st_track *t, int r, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->reason, sizeof t->reason, fmt, ap);
        va_end(ap);
        fprintf(stderr, "procd-starter: warning: %s; tracking in-process\n", t->reason);
        return r;
}

/* the job id: --job-id, else --name, else the last component of the job's top cgroup */
/* The job's id for procd: --job-id as given; else the cgroup name, which may hold any byte
 * but '/': a name that is not a valid job id (a byte outside printable ASCII: another
 * encoding) has those bytes and '%' written %XX, so that the job is still listed
 * (percent-decoding gives the name back). */
static const char *job_id(const st_options *o, const st_jobcg *jc, char *buf, size_t size)
{
        if (o->job_id)
                return o->job_id;
        const char *name = o->name;
        if (!name) {
                const char *slash = strrchr(jc->top, '/');
                name = slash && slash[1] ? slash + 1 : jc->top;
        }
        if (procd_job_id_valid(name))
                return name;
        size_t off = 0;
        for (const unsigned char *p = (const unsigned char *) name; *p && off + 4 <= size; p++) {
                if (*p > 0x20 && *p < 0x7f && *p != '%')
                        buf[off++] = (char) *p;
                else
                        off += (size_t) snprintf(buf + off, size - off, "%%%02X", *p);
        }
        buf[off] = '\0';
        return buf;
}

static int try_procd(st_track *t, const st_options *o, st_jobcg *jc, uid_t owner_uid, procd_client *conn)
{
        procd_client *c = conn;
        procd_error perr = { 0 };
        if (!c && procd_connect(o->socket_path, &c, &perr) != PROCD_OK)
                return no_procd(t, -ECONNREFUSED, "no procd at %s (%s)",
                                o->socket_path ? o->socket_path : PROCD_DEFAULT_SOCKET, perr.msg);
        /* the starter is the watcher: its exit, even by SIGKILL, kills the job and removes
         * the job cgroup (an older procd without the flag only unregisters it) */
        if (procd_register_subfamily_flags(c, t->root, getpid(), 5, PROCD_REGISTER_KILL_ON_WATCHER_EXIT, &perr) !=
            PROCD_OK) {
                procd_error perr2 = { 0 };
                if (perr.status == PROCD_E_BAD_ROOT_PID || perr.status == PROCD_E_ALREADY_REGISTERED ||
                    procd_register_subfamily(c, t->root, getpid(), 5, &perr2) != PROCD_OK) {
                        procd_disconnect(c);
                        return no_procd(t, -EIO, "procd RegisterSubfamily: %s", perr2.msg[0] ? perr2.msg : perr.msg);
                }
                fprintf(stderr, "procd-starter: warning: procd without kill-on-watcher-exit (%s): the job would "
                                "outlive a killed starter\n",
                        perr.msg);
        }
        if (procd_track_via_cgroup(c, t->root, jc->job_path, &perr) != PROCD_OK) {
                procd_unregister_family(c, t->root, NULL);
                procd_disconnect(c);
                return no_procd(t, -EIO, "procd TrackFamilyViaCgroup %s: %s", jc->job_path, perr.msg);
        }
        char idbuf[PROCD_JOB_ID_MAX];
        const char *id = job_id(o, jc, idbuf, sizeof idbuf);
        if (procd_set_family_job(c, t->root, id, owner_uid, &perr) != PROCD_OK)
                fprintf(stderr, "procd-starter: warning: procd SetFamilyJob %s: %s (the job cannot adopt ssh sessions)\n",
                        id, perr.msg);
        t->client = c;
        t->ops = &procd_ops;
        return 0;
}

int st_track_open(st_track *t, const st_options *o, st_jobcg *jc, pid_t root, uint64_t root_ticks, uid_t owner_uid,
                  procd_client *conn, tr_error *err)
{
        memset(t, 0, sizeof *t);
        t->root = root;
        t->ops = &embedded_ops;
        tr_cgroup *cg = NULL;
        /* only where the job cgroup was made (jc->mask): no lookups that fail */
        int r = tr_cgroup_open_in(jc->hs, jc->job_path, jc->mask, TR_CG_MAY_ACT, &cg, err);
        if (r < 0) {
                procd_disconnect(conn);
                return tr_error_prefix(err, "opening the job cgroup %s", jc->job_path);
        }
        tr_procfam_spec spec = { .root_pid = root, .root_start_ticks = root_ticks, .max_age_usec = 0 };
        r = tr_family_new(&spec, cg, &t->family, err);
        if (r < 0) { /* the family owns cg even when it fails */
                procd_disconnect(conn);
                return tr_error_prefix(err, "tracking the job family");
        }
        if (o->no_procd) {
                procd_disconnect(conn);
                snprintf(t->reason, sizeof t->reason, "--no-procd");
        } else if (try_procd(t, o, jc, owner_uid, conn) < 0 && o->require_procd)
                return tr_error_set(err, ECONNREFUSED, "--require-procd: %s", t->reason);
        return 0;
}

void st_track_confirm(st_track *t)
{
        if (t->ops != &procd_ops)
                return;
        procd_family_info *fi = NULL;
        size_t n = 0;
        procd_error perr = { 0 };
        if (procd_dump(t->client, t->root, &fi, &n, &perr) == PROCD_OK && n > 0 &&
            fi[0].root_pid == t->root) {
                t->procd_killed = strcmp(fi[0].state, "killed") == 0 || strcmp(fi[0].state, "killing") == 0;
                procd_family_info_free(fi, n);
                return;
        }
        procd_family_info_free(fi, n);
        if (perr.status == PROCD_OK)
                procd_error_set(&perr, PROCD_E_FAMILY_NOT_FOUND, "family %d is not listed", (int) t->root);
        tr_error err = { 0 };
        pd_fail(t, "Dump", &perr, &err);
}

int st_track_usage(st_track *t, tr_usage *u, tr_error *err)
{
        tr_usage_init(u);
        return tr_family_usage(t->family, u, err);
}

void st_track_close(st_track *t)
{
        if (t->ops)
                t->ops->close(t);
        if (t->family)
                tr_family_free(t->family);
        t->family = NULL;
}
