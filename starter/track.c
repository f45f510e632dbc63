/* track.c - embedded (tr_family) and procd tracking behind one ops table. */
#include "track.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <stdarg.h>
#include <unistd.h>

#include "procd-wire.h"
#include "procd/client.h"
#include "procd/wire.h"
#include "trackers/util.h"

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
        .end = emb_kill,
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
                st_pw_close(t->client);
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
        st_pw_arg a = ST_PW_I(t->root);
        if (st_pw_call(t->client, "KillFamily", &a, 1, NULL, &perr) == PROCD_OK) {
                *empty = true;
                return 0;
        }
        pd_fail(t, "KillFamily", &perr, err);
        return emb_kill(t, timeout_usec, empty, err);
}

/* Whether procd answered the last call with UnknownMethod: a procd older than the call. */
static bool procd_lacks_method(const st_pw *c)
{
        return strcmp(st_pw_last_error(c), "org.freedesktop.DBus.Error.UnknownMethod") == 0;
}

/* The end of the job: KillAndUnregisterFamily answers once the family is empty and
 * unregistered, so close has nothing left to send (one round trip and one state write in
 * procd instead of two).  An older procd: KillFamily now, UnregisterFamily at close.  A kill
 * that fails leaves the family registered: close unregisters it, as after KillFamily. */
static int pd_end(st_track *t, uint64_t timeout_usec, bool *empty, tr_error *err)
{
        procd_error perr = { 0 };
        st_pw_arg a = ST_PW_I(t->root);
        if (st_pw_call(t->client, "KillAndUnregisterFamily", &a, 1, NULL, &perr) == PROCD_OK) {
                *empty = true;
                st_pw_close(t->client);
                t->client = NULL;
                return 0;
        }
        if (procd_lacks_method(t->client))
                return pd_kill(t, timeout_usec, empty, err);
        pd_fail(t, "KillAndUnregisterFamily", &perr, err);
        return emb_kill(t, timeout_usec, empty, err);
}

static int pd_freeze(st_track *t, tr_error *err)
{
        procd_error perr = { 0 };
        st_pw_arg a = ST_PW_I(t->root);
        if (st_pw_call(t->client, "SuspendFamily", &a, 1, NULL, &perr) == PROCD_OK)
                return 0;
        pd_fail(t, "SuspendFamily", &perr, err);
        return emb_freeze(t, err);
}

static int pd_thaw(st_track *t, tr_error *err)
{
        procd_error perr = { 0 };
        st_pw_arg a = ST_PW_I(t->root);
        if (st_pw_call(t->client, "ContinueFamily", &a, 1, NULL, &perr) == PROCD_OK)
                return 0;
        pd_fail(t, "ContinueFamily", &perr, err);
        return emb_thaw(t, err);
}

static void pd_close(st_track *t)
{
        if (!t->client)
                return;
        procd_error perr = { 0 };
        st_pw_arg a = ST_PW_I(t->root);
        procd_status s = st_pw_call(t->client, "UnregisterFamily", &a, 1, NULL, &perr);
        if (s != PROCD_OK && s != PROCD_E_FAMILY_NOT_FOUND)
                fprintf(stderr, "procd-starter: warning: procd UnregisterFamily: %s\n", perr.msg);
        st_pw_close(t->client);
        t->client = NULL;
}

static const st_track_ops procd_ops = {
        .name = "procd",
        .signal = pd_signal,
        .kill = pd_kill,
        .end = pd_end,
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

/* The three calls an older procd (no RegisterJob) takes: RegisterSubfamilyWithFlags (or,
 * older still, RegisterSubfamily), TrackFamilyViaCgroup(Bytes), SetFamilyJob. */
static int register_in_three(st_track *t, st_jobcg *jc, st_pw *c, const char *id, uid_t owner_uid)
{
        procd_error perr = { 0 };
        st_pw_arg reg[] = { ST_PW_I(t->root), ST_PW_I(getpid()), ST_PW_U(5), ST_PW_U(PROCD_REGISTER_KILL_ON_WATCHER_EXIT) };
        if (st_pw_call(c, "RegisterSubfamilyWithFlags", reg, 4, NULL, &perr) != PROCD_OK) {
                procd_error perr2 = { 0 };
                if (perr.status == PROCD_E_BAD_ROOT_PID || perr.status == PROCD_E_ALREADY_REGISTERED ||
                    st_pw_call(c, "RegisterSubfamily", reg, 3, NULL, &perr2) != PROCD_OK) {
                        st_pw_close(c);
                        return no_procd(t, -EIO, "procd RegisterSubfamily: %s", perr2.msg[0] ? perr2.msg : perr.msg);
                }
                fprintf(stderr, "procd-starter: warning: procd without kill-on-watcher-exit (%s): the job would "
                                "outlive a killed starter\n",
                        perr.msg);
        }
        /* a path that is not UTF-8 (a job name in another encoding) goes as bytes */
        st_pw_arg tr[] = { ST_PW_I(t->root), ST_PW_S(jc->job_path) };
        procd_status s = st_pw_call(c, "TrackFamilyViaCgroup", tr, 2, NULL, &perr);
        if (s == PROCD_E_BAD_ARGUMENT && !st_pw_last_error(c)[0]) {
                tr[1] = ST_PW_AY(jc->job_path, strlen(jc->job_path));
                s = st_pw_call(c, "TrackFamilyViaCgroupBytes", tr, 2, NULL, &perr);
        }
        if (s != PROCD_OK) {
                st_pw_arg a = ST_PW_I(t->root);
                st_pw_call(c, "UnregisterFamily", &a, 1, NULL, NULL);
                st_pw_close(c);
                return no_procd(t, -EIO, "procd TrackFamilyViaCgroup %s: %s", jc->job_path, perr.msg);
        }
        st_pw_arg job[] = { ST_PW_I(t->root), ST_PW_S(id), ST_PW_U(owner_uid) };
        if (st_pw_call(c, "SetFamilyJob", job, 3, NULL, &perr) != PROCD_OK)
                fprintf(stderr, "procd-starter: warning: procd SetFamilyJob %s: %s (the job cannot adopt ssh sessions)\n",
                        id, perr.msg);
        return 0;
}

static int try_procd(st_track *t, const st_options *o, st_jobcg *jc, uid_t owner_uid, st_pw *conn)
{
        st_pw *c = conn;
        procd_error perr = { 0 };
        if (!c && st_pw_connect(o->socket_path, &c, &perr) != PROCD_OK)
                return no_procd(t, -ECONNREFUSED, "no procd at %s (%s)",
                                o->socket_path ? o->socket_path : PROCD_DEFAULT_SOCKET, perr.msg);
        char idbuf[PROCD_JOB_ID_MAX];
        const char *id = job_id(o, jc, idbuf, sizeof idbuf);
        /* one call: registered in the job cgroup it already sits in, named as the job, and
         * the starter its watcher: the starter's exit, even by SIGKILL, kills the job and
         * removes the job cgroup.  An older procd (UnknownMethod), or a job cgroup path
         * that is not UTF-8, takes the three calls. */
        st_pw_arg reg[] = { ST_PW_I(t->root), ST_PW_I(getpid()), ST_PW_U(5), ST_PW_U(PROCD_REGISTER_KILL_ON_WATCHER_EXIT),
                            ST_PW_S(jc->job_path), ST_PW_S(id), ST_PW_U(owner_uid) };
        procd_status s = st_pw_call(c, "RegisterJob", reg, TR_ARRAY_SIZE(reg), NULL, &perr);
        bool older = s != PROCD_OK &&
                     (procd_lacks_method(c) || (s == PROCD_E_BAD_ARGUMENT && !st_pw_last_error(c)[0]));
        if (older && register_in_three(t, jc, c, id, owner_uid) < 0)
                return -EIO;
        if (s != PROCD_OK && !older) {
                st_pw_close(c);
                return no_procd(t, -EIO, "procd RegisterJob: %s", perr.msg);
        }
        t->client = c;
        t->ops = &procd_ops;
        return 0;
}

int st_track_open(st_track *t, const st_options *o, st_jobcg *jc, pid_t root, uint64_t root_ticks, uid_t owner_uid,
                  st_pw *conn, tr_error *err)
{
        memset(t, 0, sizeof *t);
        t->root = root;
        t->ops = &embedded_ops;
        tr_cgroup *cg = NULL;
        /* the job cgroup's own directories (made where jc->mask says), their fds duplicated:
         * no path walked again */
        int r = tr_cgroup_open_same(jc->job, TR_CG_MAY_ACT, &cg, err);
        if (r < 0) {
                st_pw_close(conn);
                return tr_error_prefix(err, "opening the job cgroup %s", jc->job_path);
        }
        tr_procfam_spec spec = { .root_pid = root, .root_start_ticks = root_ticks, .max_age_usec = 0 };
        r = tr_family_new(&spec, cg, &t->family, err);
        if (r < 0) { /* the family owns cg even when it fails */
                st_pw_close(conn);
                return tr_error_prefix(err, "tracking the job family");
        }
        if (o->no_procd) {
                st_pw_close(conn);
                snprintf(t->reason, sizeof t->reason, "--no-procd");
        } else if (try_procd(t, o, jc, owner_uid, conn) < 0 && o->require_procd)
                return tr_error_set(err, ECONNREFUSED, "--require-procd: %s", t->reason);
        return 0;
}

void st_track_confirm(st_track *t)
{
        if (t->ops != &procd_ops)
                return;
        procd_error perr = { 0 };
        st_pw_msg m;
        st_pw_arg a = ST_PW_I(t->root);
        size_t n = 0;
        pid_t root = 0;
        char state[32] = "";
        if (st_pw_call(t->client, "Dump", &a, 1, &m, &perr) == PROCD_OK &&
            st_pw_dump_first(&m, &n, &root, state, sizeof state, &perr) == PROCD_OK && n > 0 && root == t->root) {
                t->procd_killed = strcmp(state, "killed") == 0 || strcmp(state, "killing") == 0;
                return;
        }
        if (perr.status == PROCD_OK)
                procd_error_set(&perr, PROCD_E_FAMILY_NOT_FOUND, "family %d is not listed", (int) t->root);
        tr_error err = { 0 };
        pd_fail(t, "Dump", &perr, &err);
}

unsigned st_track_usage_wanted(const st_options *o)
{
        return !o->quiet || o->report_path ? TR_WANT_ALL : TR_WANT_OOM;
}

int st_track_usage(st_track *t, unsigned want, tr_usage *u, tr_error *err)
{
        tr_usage_init(u);
        return tr_family_usage_want(t->family, want, u, err);
}

void st_track_close(st_track *t)
{
        if (t->ops)
                t->ops->close(t);
        if (t->family)
                tr_family_free(t->family);
        t->family = NULL;
}
