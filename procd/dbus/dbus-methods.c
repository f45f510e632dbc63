/* dbus-methods.c - ProcFamily1 method table: signature, decoding, reply encoding. */
#include "dbus-methods.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procd/core/command-jobs.h"
#include "procd/core/command-query.h"
#include "procd/core/metrics.h"
#include "procd/core/stats.h"
#include "procd/wire.h"
#include "trackers/util.h"

typedef struct call {
        DBusConnection *c;
        DBusMessage *m;
        pd_commands *cm;
        pd_caller who;
        DBusMessage *reply; /* set by a handler on success (NULL: empty reply) */
        procd_error err;
        bool deferred;      /* the handler replies later */
} call;

typedef procd_status (*method_fn)(call *k);

/* libdbus refuses strings that are not UTF-8; our messages may carry cut text. */
static void ascii_only(char *s)
{
        for (; *s; s++)
                if ((unsigned char) *s >= 0x80 || (unsigned char) *s < 0x20)
                        *s = '?';
}

/* A D-Bus string from text in any encoding (a cgroup path): valid UTF-8 is kept, each byte
 * that is not, and each control character, is written \xNN.  Returned malloc'd. */
static char *utf8_escaped(const char *s)
{
        GString *out = g_string_new(NULL);
        const char *p = s, *end = s + strlen(s), *bad;
        while (p < end) {
                g_utf8_validate(p, end - p, &bad);
                for (; p < bad; p++) {
                        if ((unsigned char) *p < 0x20)
                                g_string_append_printf(out, "\\x%02X", (unsigned char) *p);
                        else
                                g_string_append_c(out, *p);
                }
                if (p < end)
                        g_string_append_printf(out, "\\x%02X", (unsigned char) *p++);
        }
        return g_string_free(out, FALSE);
}

static procd_status get_args(call *k, int first_type, ...)
{
        DBusError derr;
        dbus_error_init(&derr);
        va_list ap;
        va_start(ap, first_type);
        dbus_bool_t ok = dbus_message_get_args_valist(k->m, &derr, first_type, ap);
        va_end(ap);
        if (!ok) {
                procd_error_set(&k->err, PROCD_E_BAD_ARGUMENT, "bad arguments: %s", derr.message ? derr.message : "?");
                dbus_error_free(&derr);
                return PROCD_E_BAD_ARGUMENT;
        }
        return PROCD_OK;
}

static procd_status m_register(call *k)
{
        dbus_int32_t root, watcher;
        dbus_uint32_t interval;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &root, DBUS_TYPE_INT32, &watcher, DBUS_TYPE_UINT32, &interval,
                                  DBUS_TYPE_INVALID);
        if (s == PROCD_OK)
                s = pd_cmd_register_subfamily(k->cm, &k->who, root, watcher, interval, &k->err);
        return s;
}

static procd_status m_register_flags(call *k)
{
        dbus_int32_t root, watcher;
        dbus_uint32_t interval, flags;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &root, DBUS_TYPE_INT32, &watcher, DBUS_TYPE_UINT32, &interval,
                                  DBUS_TYPE_UINT32, &flags, DBUS_TYPE_INVALID);
        if (s == PROCD_OK)
                s = pd_cmd_register_subfamily_flags(k->cm, &k->who, root, watcher, interval, flags, &k->err);
        return s;
}

/* RegisterJob (iiuussu): root, watcher, interval, flags, cgroup, job id, owner uid. */
static procd_status m_register_job(call *k)
{
        dbus_int32_t root, watcher;
        dbus_uint32_t interval, flags, owner;
        const char *cgroup = NULL, *job = NULL;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &root, DBUS_TYPE_INT32, &watcher, DBUS_TYPE_UINT32, &interval,
                                  DBUS_TYPE_UINT32, &flags, DBUS_TYPE_STRING, &cgroup, DBUS_TYPE_STRING, &job,
                                  DBUS_TYPE_UINT32, &owner, DBUS_TYPE_INVALID);
        pd_job_registration j = { .root_pid = root, .watcher_pid = watcher, .interval_sec = interval, .flags = flags,
                                  .cgroup = cgroup, .job_id = job, .owner_uid = owner };
        if (s == PROCD_OK)
                s = pd_cmd_register_job(k->cm, &k->who, &j, &k->err);
        return s;
}

typedef procd_status (*track_str_fn)(pd_commands *, const pd_caller *, pid_t, const char *, procd_error *);

static procd_status track_str(call *k, track_str_fn fn)
{
        dbus_int32_t root;
        const char *str = NULL;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &root, DBUS_TYPE_STRING, &str, DBUS_TYPE_INVALID);
        if (s == PROCD_OK)
                s = fn(k->cm, &k->who, root, str, &k->err);
        return s;
}

static procd_status m_track_cgroup(call *k) { return track_str(k, pd_cmd_track_cgroup); }

/* TrackFamilyViaCgroupBytes (iay): the cgroup path as bytes, for a path that is not UTF-8
 * (D-Bus strings must be); no NUL inside, no terminating NUL needed. */
static procd_status m_track_cgroup_bytes(call *k)
{
        dbus_int32_t root;
        const char *bytes = NULL;
        int n = 0;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &root, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &bytes, &n,
                                  DBUS_TYPE_INVALID);
        if (s != PROCD_OK)
                return s;
        if (n <= 0 || n > PD_MAX_CGROUP_LEN || memchr(bytes, 0, (size_t) n))
                return procd_error_set(&k->err, PROCD_E_BAD_CGROUP, "cgroup path: 1..%d bytes without NUL",
                                       PD_MAX_CGROUP_LEN);
        g_autofree char *path = g_strndup(bytes, (gsize) n);
        return pd_cmd_track_cgroup(k->cm, &k->who, root, path, &k->err);
}
static procd_status m_track_env(call *k) { return track_str(k, pd_cmd_track_environment); }
static procd_status m_track_login(call *k) { return track_str(k, pd_cmd_track_login); }

static procd_status m_track_alloc_gid(call *k)
{
        dbus_int32_t root;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &root, DBUS_TYPE_INVALID);
        gid_t gid = 0;
        if (s == PROCD_OK)
                s = pd_cmd_track_allocated_group(k->cm, &k->who, root, &gid, &k->err);
        if (s == PROCD_OK) {
                dbus_uint32_t g = gid;
                k->reply = dbus_message_new_method_return(k->m);
                if (!k->reply || !dbus_message_append_args(k->reply, DBUS_TYPE_UINT32, &g, DBUS_TYPE_INVALID))
                        return procd_error_set(&k->err, PROCD_E_INTERNAL, "out of memory");
        }
        return s;
}

static procd_status m_track_assoc_gid(call *k)
{
        dbus_int32_t root;
        dbus_uint32_t gid;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &root, DBUS_TYPE_UINT32, &gid, DBUS_TYPE_INVALID);
        if (s == PROCD_OK)
                s = pd_cmd_track_associated_group(k->cm, &k->who, root, gid, &k->err);
        return s;
}

bool pd_dbus_dict_entry(DBusMessageIter *dict, const char *key, int type, const void *value)
{
        DBusMessageIter e, v;
        const char sig[2] = { (char) type, 0 };
        return dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, &e) &&
               dbus_message_iter_append_basic(&e, DBUS_TYPE_STRING, &key) &&
               dbus_message_iter_open_container(&e, DBUS_TYPE_VARIANT, sig, &v) &&
               dbus_message_iter_append_basic(&v, type, value) && dbus_message_iter_close_container(&e, &v) &&
               dbus_message_iter_close_container(dict, &e);
}

/* percent CPU over the interval since the previous GetUsage of this family (any client):
 * two readings taken by procd, keys left out when there is no earlier reading */
static bool append_percent(DBusMessageIter *dict, const pd_usage_reading *r)
{
        if (!r || !r->percent_cpu_known)
                return true;
        double pct = r->percent_cpu;
        dbus_uint64_t iv = r->interval_usec;
        return pd_dbus_dict_entry(dict, "cpu_percent", DBUS_TYPE_DOUBLE, &pct) &&
               pd_dbus_dict_entry(dict, "cpu_percent_interval_usec", DBUS_TYPE_UINT64, &iv);
}

bool pd_dbus_append_usage_entries(DBusMessageIter *dict, const tr_usage *u)
{
        char src[64];
        const char *srcp = tr_usage_source_name(u, src, sizeof src);
        bool ok = pd_dbus_dict_entry(dict, "source", DBUS_TYPE_STRING, &srcp);
        if (ok && u->fallback) {
                char reason[sizeof u->fallback_reason];
                snprintf(reason, sizeof reason, "%s", u->fallback_reason);
                ascii_only(reason);
                const char *rp = reason;
                ok = pd_dbus_dict_entry(dict, "fallback_reason", DBUS_TYPE_STRING, &rp);
        }
        for (size_t i = 0; ok && i < tr_usage_field_count(); i++) {
                const tr_u64 *v = tr_usage_field(u, i);
                if (!v->available)
                        continue;
                dbus_uint64_t val = v->value;
                ok = pd_dbus_dict_entry(dict, tr_usage_field_name(i), DBUS_TYPE_UINT64, &val);
        }
        return ok;
}

/* the limits set on the family's cgroup (issue 17 §4): a key only where a limit is set */
static bool append_limits(DBusMessageIter *dict, const tr_limits_now *l)
{
        const struct {
                const char *key;
                const tr_u64 *v;
        } keys[] = {
                { "memory_max_bytes", &l->memory_max_bytes },
                { "cpu_max_quota_usec", &l->cpu_quota_usec },
                { "cpu_max_period_usec", &l->cpu_period_usec },
                { "pids_max", &l->pids_max },
        };
        bool ok = true;
        for (size_t i = 0; ok && i < TR_ARRAY_SIZE(keys); i++) {
                dbus_uint64_t v = keys[i].v->value;
                if (keys[i].v->available)
                        ok = pd_dbus_dict_entry(dict, keys[i].key, DBUS_TYPE_UINT64, &v);
        }
        return ok;
}

static bool append_usage(DBusMessage *reply, const tr_usage *u, const tr_limits_now *lim, const pd_usage_reading *pr)
{
        DBusMessageIter it, dict;
        dbus_message_iter_init_append(reply, &it);
        if (!dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &dict))
                return false;
        bool ok = pd_dbus_append_usage_entries(&dict, u);
        ok = ok && append_percent(&dict, pr) && append_limits(&dict, lim);
        return dbus_message_iter_close_container(&it, &dict) && ok;
}

static procd_status m_get_usage(call *k)
{
        dbus_int32_t pid;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &pid, DBUS_TYPE_INVALID);
        tr_usage u;
        pd_usage_reading r;
        if (s == PROCD_OK)
                /* every field but v1 blkio.throttle's partial io bytes (as GET_USAGE) */
                s = pd_cmd_get_usage(k->cm, &k->who, pid, TR_WANT_ALL & ~(unsigned) TR_WANT_IO_THROTTLE, &u, &r,
                                     &k->err);
        if (s == PROCD_OK) {
                tr_limits_now lim;
                pd_cmd_get_limits(k->cm, &k->who, pid, &lim, NULL);
                k->reply = dbus_message_new_method_return(k->m);
                if (!k->reply || !append_usage(k->reply, &u, &lim, &r))
                        return procd_error_set(&k->err, PROCD_E_INTERNAL, "out of memory");
        }
        return s;
}

/* Methods taking (int32 pid, int32 n): SignalProcess (n = the signal), AdoptProcess (n = the
 * family's root pid); pid_t is int on Linux, so one shape serves both commands. */
typedef procd_status (*pid_int_fn)(pd_commands *, const pd_caller *, pid_t, int, procd_error *);

static procd_status pid_and_int(call *k, pid_int_fn fn)
{
        dbus_int32_t pid, n;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &pid, DBUS_TYPE_INT32, &n, DBUS_TYPE_INVALID);
        if (s == PROCD_OK)
                s = fn(k->cm, &k->who, pid, n, &k->err);
        return s;
}

static procd_status m_signal(call *k) { return pid_and_int(k, pd_cmd_signal_process); }

typedef procd_status (*pid_fn)(pd_commands *, const pd_caller *, pid_t, procd_error *);

static procd_status pid_only(call *k, pid_fn fn)
{
        dbus_int32_t pid;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &pid, DBUS_TYPE_INVALID);
        if (s == PROCD_OK)
                s = fn(k->cm, &k->who, pid, &k->err);
        return s;
}

/* KillFamily, KillAndUnregisterFamily, SuspendFamily and ContinueFamily reply once done: the call is kept (message
 * and connection referenced) and answered from the main loop. */
typedef struct deferred_call {
        DBusConnection *c;
        DBusMessage *m;
        pd_stats *stats;
} deferred_call;

static void reply_error(DBusConnection *c, DBusMessage *m, const char *name, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void send_and_unref(DBusConnection *c, DBusMessage *call_msg, DBusMessage *reply);

static void deferred_done(procd_status s, const procd_error *err, void *data)
{
        deferred_call *d = data;
        pd_stats_request(d->stats, dbus_message_get_member(d->m), s);
        if (s == PROCD_OK)
                send_and_unref(d->c, d->m, dbus_message_new_method_return(d->m));
        else
                reply_error(d->c, d->m, procd_status_dbus_name(s), "%s", err ? err->msg : "");
        dbus_message_unref(d->m);
        dbus_connection_unref(d->c);
        g_free(d);
}

/* kind: PD_JOB_KILL + unregister is KillAndUnregisterFamily */
static procd_status deferred(call *k, pd_job_kind kind, bool unregister)
{
        dbus_int32_t pid;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &pid, DBUS_TYPE_INVALID);
        if (s != PROCD_OK)
                return s;
        deferred_call *d = g_new0(deferred_call, 1);
        d->c = dbus_connection_ref(k->c);
        d->m = dbus_message_ref(k->m);
        d->stats = k->cm->stats;
        k->deferred = true;
        if (unregister)
                pd_cmd_kill_and_unregister_async(k->cm, &k->who, pid, deferred_done, d);
        else
                pd_cmd_family_async(k->cm, &k->who, kind, pid, deferred_done, d);
        return PROCD_OK;
}

static procd_status m_suspend(call *k) { return deferred(k, PD_JOB_SUSPEND, false); }
static procd_status m_continue(call *k) { return deferred(k, PD_JOB_CONTINUE, false); }
static procd_status m_kill(call *k) { return deferred(k, PD_JOB_KILL, false); }
static procd_status m_kill_unregister(call *k) { return deferred(k, PD_JOB_KILL, true); }
static procd_status m_unregister(call *k) { return pid_only(k, pd_cmd_unregister_family); }
static procd_status m_snapshot(call *k) { return pd_cmd_snapshot(k->cm, &k->who, &k->err); }
static procd_status m_quit(call *k) { return pd_cmd_quit(k->cm, &k->who, &k->err); }

static bool append_family(DBusMessageIter *arr, const procd_family_info *fi)
{
        DBusMessageIter st, mem;
        dbus_int32_t root = fi->root_pid, watcher = fi->watcher_pid, parent = fi->parent_root_pid;
        dbus_uint64_t start = fi->root_start_ticks;
        /* the tracking holds a cgroup path in any encoding: invalid bytes as \xNN */
        g_autofree char *tracking = utf8_escaped(fi->tracking);
        char source[sizeof fi->source];
        snprintf(source, sizeof source, "%s", fi->source);
        ascii_only(source);
        const char *tp = tracking, *sp = source, *state = fi->state;
        const dbus_int32_t *pids = (const dbus_int32_t *) fi->members;
        return dbus_message_iter_open_container(arr, DBUS_TYPE_STRUCT, NULL, &st) &&
               dbus_message_iter_append_basic(&st, DBUS_TYPE_INT32, &root) &&
               dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT64, &start) &&
               dbus_message_iter_append_basic(&st, DBUS_TYPE_INT32, &watcher) &&
               dbus_message_iter_append_basic(&st, DBUS_TYPE_INT32, &parent) &&
               dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &tp) &&
               dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &sp) &&
               dbus_message_iter_open_container(&st, DBUS_TYPE_ARRAY, "i", &mem) &&
               (fi->n_members == 0 ||
                dbus_message_iter_append_fixed_array(&mem, DBUS_TYPE_INT32, &pids, (int) fi->n_members)) &&
               dbus_message_iter_close_container(&st, &mem) &&
               dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &state) &&
               dbus_message_iter_close_container(arr, &st);
}

_Static_assert(sizeof(pid_t) == sizeof(dbus_int32_t), "pid_t is 32-bit");

static procd_status m_dump(call *k)
{
        dbus_int32_t pid;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &pid, DBUS_TYPE_INVALID);
        procd_family_info *infos = NULL;
        size_t n = 0;
        if (s == PROCD_OK)
                s = pd_cmd_dump(k->cm, &k->who, pid, &infos, &n, &k->err);
        if (s != PROCD_OK)
                return s;
        k->reply = dbus_message_new_method_return(k->m);
        DBusMessageIter it, arr;
        bool ok = k->reply != NULL;
        if (ok) {
                dbus_message_iter_init_append(k->reply, &it);
                ok = dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "(itiissais)", &arr);
                for (size_t i = 0; ok && i < n; i++)
                        ok = append_family(&arr, &infos[i]);
                ok = dbus_message_iter_close_container(&it, &arr) && ok;
        }
        procd_family_info_free(infos, n);
        if (!ok)
                return procd_error_set(&k->err, PROCD_E_INTERNAL, "out of memory");
        return PROCD_OK;
}

static procd_status m_set_job(call *k)
{
        dbus_int32_t root;
        const char *job = NULL;
        dbus_uint32_t owner;
        procd_status s = get_args(k, DBUS_TYPE_INT32, &root, DBUS_TYPE_STRING, &job, DBUS_TYPE_UINT32, &owner,
                                  DBUS_TYPE_INVALID);
        if (s == PROCD_OK)
                s = pd_cmd_set_family_job(k->cm, &k->who, root, job, owner, &k->err);
        return s;
}

static procd_status m_list_jobs(call *k)
{
        dbus_uint32_t uid;
        procd_status s = get_args(k, DBUS_TYPE_UINT32, &uid, DBUS_TYPE_INVALID);
        procd_job_info *jobs = NULL;
        size_t n = 0;
        if (s == PROCD_OK)
                s = pd_cmd_list_jobs(k->cm, &k->who, uid, &jobs, &n, &k->err);
        if (s != PROCD_OK)
                return s;
        k->reply = dbus_message_new_method_return(k->m);
        DBusMessageIter it, arr, st;
        bool ok = k->reply != NULL;
        if (ok) {
                dbus_message_iter_init_append(k->reply, &it);
                ok = dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "(iust)", &arr);
                for (size_t i = 0; ok && i < n; i++) {
                        dbus_int32_t root = jobs[i].root_pid;
                        dbus_uint32_t owner = jobs[i].owner_uid;
                        dbus_uint64_t t = jobs[i].registered_usec;
                        const char *id = jobs[i].job_id; /* printable ASCII (checked when named) */
                        ok = dbus_message_iter_open_container(&arr, DBUS_TYPE_STRUCT, NULL, &st) &&
                             dbus_message_iter_append_basic(&st, DBUS_TYPE_INT32, &root) &&
                             dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT32, &owner) &&
                             dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &id) &&
                             dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT64, &t) &&
                             dbus_message_iter_close_container(&arr, &st);
                }
                ok = dbus_message_iter_close_container(&it, &arr) && ok;
        }
        free(jobs);
        if (!ok)
                return procd_error_set(&k->err, PROCD_E_INTERNAL, "out of memory");
        return PROCD_OK;
}

static procd_status m_adopt(call *k) { return pid_and_int(k, pd_cmd_adopt_process); }

/* GetMetrics: the Prometheus text (procd/core/metrics.h), any caller (as Dump and GetUsage). */
static procd_status m_get_metrics(call *k)
{
        g_autoptr(GString) text = g_string_new(NULL);
        pd_metrics_render(k->cm, text);
        const char *p = text->str; /* label values made UTF-8 by the writer */
        k->reply = dbus_message_new_method_return(k->m);
        if (!k->reply || !dbus_message_append_args(k->reply, DBUS_TYPE_STRING, &p, DBUS_TYPE_INVALID))
                return procd_error_set(&k->err, PROCD_E_INTERNAL, "out of memory");
        return PROCD_OK;
}

static const struct method {
        const char *name;
        const char *signature;
        method_fn fn;
} methods[] = {
        { "RegisterSubfamily", "iiu", m_register },
        { "RegisterSubfamilyWithFlags", "iiuu", m_register_flags },
        { "TrackFamilyViaCgroup", "is", m_track_cgroup },
        { "TrackFamilyViaEnvironment", "is", m_track_env },
        { "TrackFamilyViaLogin", "is", m_track_login },
        { "TrackFamilyViaAllocatedGroup", "i", m_track_alloc_gid },
        { "TrackFamilyViaAssociatedGroup", "iu", m_track_assoc_gid },
        { "GetUsage", "i", m_get_usage },
        { "SignalProcess", "ii", m_signal },
        { "SuspendFamily", "i", m_suspend },
        { "ContinueFamily", "i", m_continue },
        { "KillFamily", "i", m_kill },
        { "UnregisterFamily", "i", m_unregister },
        { "Snapshot", "", m_snapshot },
        { "Dump", "i", m_dump },
        { "Quit", "", m_quit },
        { "SetFamilyJob", "isu", m_set_job },
        { "ListJobs", "u", m_list_jobs },
        { "AdoptProcess", "ii", m_adopt },
        { "TrackFamilyViaCgroupBytes", "iay", m_track_cgroup_bytes },
        { "GetMetrics", "", m_get_metrics },
        { "RegisterJob", "iiuussu", m_register_job },
        { "KillAndUnregisterFamily", "i", m_kill_unregister },
};

static void send_and_unref(DBusConnection *c, DBusMessage *call_msg, DBusMessage *reply)
{
        if (!reply)
                return;
        if (!dbus_message_get_no_reply(call_msg))
                dbus_connection_send(c, reply, NULL);
        dbus_message_unref(reply);
}

static void reply_error(DBusConnection *c, DBusMessage *m, const char *name, const char *fmt, ...)
{
        if (dbus_message_get_no_reply(m))
                return;
        char msg[600];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        ascii_only(msg);
        send_and_unref(c, m, dbus_message_new_error(m, name, msg));
}

static void fill_caller(DBusConnection *c, pd_caller *who)
{
        unsigned long uid = (unsigned long) -1, pid = 0;
        if (!dbus_connection_get_unix_user(c, &uid))
                uid = (unsigned long) -1; /* unknown: treated as unprivileged */
        if (!dbus_connection_get_unix_process_id(c, &pid))
                pid = 0;
        who->uid = (uid_t) uid;
        who->pid = (pid_t) pid;
        who->via = "dbus";
}

DBusHandlerResult pd_dbus_handle_message(DBusConnection *c, DBusMessage *m, pd_commands *cm)
{
        if (dbus_message_get_type(m) != DBUS_MESSAGE_TYPE_METHOD_CALL)
                return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
        const char *iface = dbus_message_get_interface(m);
        const char *member = dbus_message_get_member(m);
        if (dbus_message_is_method_call(m, DBUS_INTERFACE_INTROSPECTABLE, "Introspect")) {
                DBusMessage *reply = dbus_message_new_method_return(m);
                const char *xml = pd_introspection_xml;
                if (reply && !dbus_message_append_args(reply, DBUS_TYPE_STRING, &xml, DBUS_TYPE_INVALID)) {
                        dbus_message_unref(reply);
                        reply = NULL;
                }
                send_and_unref(c, m, reply);
                return DBUS_HANDLER_RESULT_HANDLED;
        }
        if (iface && strcmp(iface, PROCD_DBUS_INTERFACE) != 0) {
                reply_error(c, m, DBUS_ERROR_UNKNOWN_INTERFACE, "unknown interface %s", iface);
                return DBUS_HANDLER_RESULT_HANDLED;
        }
        const struct method *me = NULL;
        for (size_t i = 0; member && i < sizeof methods / sizeof methods[0]; i++)
                if (strcmp(methods[i].name, member) == 0)
                        me = &methods[i];
        if (!me) {
                if (cm->stats)
                        cm->stats->malformed_requests++;
                reply_error(c, m, DBUS_ERROR_UNKNOWN_METHOD, "unknown method %s", member ? member : "(none)");
                return DBUS_HANDLER_RESULT_HANDLED;
        }
        if (!dbus_message_has_signature(m, me->signature)) {
                if (cm->stats)
                        cm->stats->malformed_requests++;
                reply_error(c, m, DBUS_ERROR_INVALID_ARGS, "%s takes (%s), got (%s)", me->name, me->signature,
                            dbus_message_get_signature(m));
                return DBUS_HANDLER_RESULT_HANDLED;
        }
        call k = { .c = c, .m = m, .cm = cm };
        fill_caller(c, &k.who);
        procd_status s = me->fn(&k);
        if (!k.deferred)
                pd_stats_request(cm->stats, me->name, s);
        if (s != PROCD_OK) {
                if (k.reply)
                        dbus_message_unref(k.reply);
                g_debug("%s from uid %u: %s: %s", me->name, (unsigned) k.who.uid, procd_status_name(s), k.err.msg);
                reply_error(c, m, procd_status_dbus_name(s), "%s", k.err.msg);
                return DBUS_HANDLER_RESULT_HANDLED;
        }
        if (k.deferred)
                return DBUS_HANDLER_RESULT_HANDLED;
        if (!k.reply)
                k.reply = dbus_message_new_method_return(m);
        send_and_unref(c, m, k.reply);
        return DBUS_HANDLER_RESULT_HANDLED;
}
