/* client.c - client.h over libdbus-1 on procd's peer-to-peer socket. */
#include "procd/client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dbus/dbus.h>


#define CONNECT_TIMEOUT_MS 5000
/* KillFamily waits until the family is empty (bounded by the daemon): allow for it. */
#define CALL_TIMEOUT_MS 120000

/* After procd restarts: reconnect for up to this long (every RECONNECT_PAUSE_MS). */
#define RECONNECT_DEFAULT_MS 10000
#define RECONNECT_PAUSE_MS 100

struct procd_client {
        DBusConnection *c;
        char *socket_path;
        unsigned reconnect_ms;
        unsigned reconnects; /* successful reconnections so far */
};

static long now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

const char *procd_client_version(void)
{
        return PROCD_VERSION;
}

/* One authenticated private connection to socket_path. */
static procd_status open_connection(const char *socket_path, DBusConnection **out, procd_error *err)
{
        *out = NULL;
        char *esc = dbus_address_escape_value(socket_path);
        if (!esc)
                return procd_error_set(err, PROCD_E_TRANSPORT, "out of memory");
        size_t len = strlen(esc) + 16;
        char *addr = malloc(len);
        if (!addr) {
                dbus_free(esc);
                return procd_error_set(err, PROCD_E_TRANSPORT, "out of memory");
        }
        snprintf(addr, len, "unix:path=%s", esc);
        dbus_free(esc);
        DBusError derr;
        dbus_error_init(&derr);
        DBusConnection *c = dbus_connection_open_private(addr, &derr);
        free(addr);
        if (!c) {
                procd_status s = procd_error_set(err, PROCD_E_TRANSPORT, "cannot connect to procd at %s: %s", socket_path,
                                              derr.message ? derr.message : "?");
                dbus_error_free(&derr);
                return s;
        }
        dbus_connection_set_exit_on_disconnect(c, FALSE);
        /* On a peer-to-peer socket the first reply can be lost unless authentication is
         * finished before the first call (FACTS). */
        long deadline = now_ms() + CONNECT_TIMEOUT_MS;
        while (!dbus_connection_get_is_authenticated(c)) {
                if (!dbus_connection_get_is_connected(c) || now_ms() > deadline ||
                    !dbus_connection_read_write(c, 100)) {
                        dbus_connection_close(c);
                        dbus_connection_unref(c);
                        return procd_error_set(err, PROCD_E_TRANSPORT, "procd at %s: authentication failed",
                                            socket_path);
                }
        }
        *out = c;
        return PROCD_OK;
}

procd_status procd_connect(const char *socket_path, procd_client **out, procd_error *err)
{
        *out = NULL;
        if (!socket_path)
                socket_path = PROCD_DEFAULT_SOCKET;
        DBusConnection *c = NULL;
        procd_status s = open_connection(socket_path, &c, err);
        if (s != PROCD_OK)
                return s;
        procd_client *pc = calloc(1, sizeof *pc);
        if (!pc || !(pc->socket_path = strdup(socket_path))) {
                free(pc);
                dbus_connection_close(c);
                dbus_connection_unref(c);
                return procd_error_set(err, PROCD_E_TRANSPORT, "out of memory");
        }
        pc->c = c;
        pc->reconnect_ms = RECONNECT_DEFAULT_MS;
        *out = pc;
        return PROCD_OK;
}

void procd_set_reconnect(procd_client *c, unsigned timeout_ms)
{
        if (c)
                c->reconnect_ms = timeout_ms;
}

unsigned procd_reconnects(const procd_client *c) { return c ? c->reconnects : 0; }

/* The connection was lost (procd restarted or crashed): connect again, for a bounded time. */
static bool reconnect(procd_client *c)
{
        if (c->reconnect_ms == 0)
                return false;
        long deadline = now_ms() + (long) c->reconnect_ms;
        for (;;) {
                DBusConnection *nc = NULL;
                if (open_connection(c->socket_path, &nc, NULL) == PROCD_OK) {
                        dbus_connection_close(c->c);
                        dbus_connection_unref(c->c);
                        c->c = nc;
                        c->reconnects++;
                        return true;
                }
                if (now_ms() >= deadline)
                        return false;
                struct timespec ts = { 0, RECONNECT_PAUSE_MS * 1000000L };
                nanosleep(&ts, NULL);
        }
}

void procd_disconnect(procd_client *c)
{
        if (!c)
                return;
        dbus_connection_close(c->c);
        dbus_connection_unref(c->c);
        free(c->socket_path);
        free(c);
}

/* Call method with the given arguments; on success *reply holds the reply (unref it). */
static procd_status call(procd_client *c, const char *method, DBusMessage **reply, procd_error *err, int first_type,
                         ...)
{
        if (reply)
                *reply = NULL;
        if (!c)
                return procd_error_set(err, PROCD_E_TRANSPORT, "not connected");
        DBusMessage *m = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, method);
        if (!m)
                return procd_error_set(err, PROCD_E_TRANSPORT, "out of memory");
        va_list ap;
        va_start(ap, first_type);
        dbus_bool_t ok = dbus_message_append_args_valist(m, first_type, ap);
        va_end(ap);
        if (!ok) {
                dbus_message_unref(m);
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "%s: cannot encode the arguments", method);
        }
        DBusError derr;
        dbus_error_init(&derr);
        /* a connection found closed before the call (procd restarted meanwhile) is made
         * again and the call sent; a call lost with its connection is sent once more unless
         * repeating it would do something twice (SignalProcess, Quit) */
        bool retried = false;
        if (!dbus_connection_get_is_connected(c->c))
                reconnect(c);
        DBusMessage *again = dbus_message_copy(m); /* a fresh serial for a second sending */
        DBusMessage *r = dbus_connection_send_with_reply_and_block(c->c, m, CALL_TIMEOUT_MS, &derr);
        if (!r && again && !dbus_connection_get_is_connected(c->c) && strcmp(method, "SignalProcess") != 0 &&
            strcmp(method, "Quit") != 0 && reconnect(c)) {
                dbus_error_free(&derr);
                dbus_error_init(&derr);
                retried = true;
                r = dbus_connection_send_with_reply_and_block(c->c, again, CALL_TIMEOUT_MS, &derr);
        }
        if (again)
                dbus_message_unref(again);
        dbus_message_unref(m);
        /* a registration repeated after a lost reply: the first one went through */
        if (!r && retried && strncmp(method, "Register", 8) == 0 && derr.name &&
            procd_status_from_dbus_name(derr.name) == PROCD_E_ALREADY_REGISTERED) {
                dbus_error_free(&derr);
                return PROCD_OK;
        }
        if (!r) {
                procd_status s = procd_status_from_dbus_name(derr.name);
                procd_error_set(err, s, "%s", derr.message ? derr.message : derr.name ? derr.name : "no reply");
                dbus_error_free(&derr);
                return s;
        }
        if (reply)
                *reply = r;
        else
                dbus_message_unref(r);
        return PROCD_OK;
}

static procd_status bad_reply(DBusMessage *r, const char *method, procd_error *err)
{
        if (r)
                dbus_message_unref(r);
        return procd_error_set(err, PROCD_E_TRANSPORT, "%s: malformed reply", method);
}

procd_status procd_register_subfamily(procd_client *c, pid_t root_pid, pid_t watcher_pid,
                                      uint32_t max_snapshot_interval_sec, procd_error *err)
{
        dbus_int32_t r = root_pid, w = watcher_pid;
        dbus_uint32_t i = max_snapshot_interval_sec;
        return call(c, "RegisterSubfamily", NULL, err, DBUS_TYPE_INT32, &r, DBUS_TYPE_INT32, &w, DBUS_TYPE_UINT32, &i,
                    DBUS_TYPE_INVALID);
}

static procd_status track_str(procd_client *c, const char *method, pid_t root_pid, const char *s, procd_error *err)
{
        dbus_int32_t r = root_pid;
        if (!s)
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "%s: NULL string", method);
        /* libdbus aborts on invalid UTF-8: refuse it here */
        if (!dbus_validate_utf8(s, NULL))
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "%s: string is not UTF-8", method);
        return call(c, method, NULL, err, DBUS_TYPE_INT32, &r, DBUS_TYPE_STRING, &s, DBUS_TYPE_INVALID);
}

procd_status procd_register_subfamily_flags(procd_client *c, pid_t root_pid, pid_t watcher_pid,
                                            uint32_t max_snapshot_interval_sec, uint32_t flags, procd_error *err)
{
        dbus_int32_t r = root_pid, w = watcher_pid;
        dbus_uint32_t i = max_snapshot_interval_sec, fl = flags;
        return call(c, "RegisterSubfamilyWithFlags", NULL, err, DBUS_TYPE_INT32, &r, DBUS_TYPE_INT32, &w,
                    DBUS_TYPE_UINT32, &i, DBUS_TYPE_UINT32, &fl, DBUS_TYPE_INVALID);
}

procd_status procd_register_job(procd_client *c, pid_t root_pid, pid_t watcher_pid, uint32_t max_snapshot_interval_sec,
                                uint32_t flags, const char *cgroup, const char *job_id, uid_t owner_uid,
                                procd_error *err)
{
        if (!cgroup || !dbus_validate_utf8(cgroup, NULL))
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "RegisterJob: the cgroup path is not UTF-8");
        if (!procd_job_id_valid(job_id))
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "a job id is 1..%d printable characters",
                                       PROCD_JOB_ID_MAX - 1);
        dbus_int32_t r = root_pid, w = watcher_pid;
        dbus_uint32_t i = max_snapshot_interval_sec, fl = flags, owner = owner_uid;
        return call(c, "RegisterJob", NULL, err, DBUS_TYPE_INT32, &r, DBUS_TYPE_INT32, &w, DBUS_TYPE_UINT32, &i,
                    DBUS_TYPE_UINT32, &fl, DBUS_TYPE_STRING, &cgroup, DBUS_TYPE_STRING, &job_id, DBUS_TYPE_UINT32,
                    &owner, DBUS_TYPE_INVALID);
}

/* A path that is not UTF-8 (a job name in another encoding) goes as bytes: D-Bus strings
 * must be UTF-8, an array of bytes need not. */
procd_status procd_track_via_cgroup(procd_client *c, pid_t root_pid, const char *cgroup, procd_error *err)
{
        if (!cgroup || dbus_validate_utf8(cgroup, NULL))
                return track_str(c, "TrackFamilyViaCgroup", root_pid, cgroup, err);
        dbus_int32_t r = root_pid;
        const char *bytes = cgroup;
        size_t len = strlen(cgroup);
        if (len > 1u << 16) /* far past any cgroup path: refused, not cut */
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "TrackFamilyViaCgroupBytes: a path of %zu bytes",
                                       len);
        int n = (int) len;
        return call(c, "TrackFamilyViaCgroupBytes", NULL, err, DBUS_TYPE_INT32, &r, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE,
                    &bytes, n, DBUS_TYPE_INVALID);
}

procd_status procd_track_via_environment(procd_client *c, pid_t root_pid, const char *marker, procd_error *err)
{
        return track_str(c, "TrackFamilyViaEnvironment", root_pid, marker, err);
}

procd_status procd_track_via_login(procd_client *c, pid_t root_pid, const char *login, procd_error *err)
{
        return track_str(c, "TrackFamilyViaLogin", root_pid, login, err);
}

procd_status procd_track_via_allocated_group(procd_client *c, pid_t root_pid, gid_t *gid_out, procd_error *err)
{
        dbus_int32_t r = root_pid;
        DBusMessage *reply = NULL;
        procd_status s = call(c, "TrackFamilyViaAllocatedGroup", &reply, err, DBUS_TYPE_INT32, &r, DBUS_TYPE_INVALID);
        if (s != PROCD_OK)
                return s;
        dbus_uint32_t g;
        if (!dbus_message_get_args(reply, NULL, DBUS_TYPE_UINT32, &g, DBUS_TYPE_INVALID))
                return bad_reply(reply, "TrackFamilyViaAllocatedGroup", err);
        dbus_message_unref(reply);
        if (gid_out)
                *gid_out = g;
        return PROCD_OK;
}

procd_status procd_track_via_associated_group(procd_client *c, pid_t root_pid, gid_t gid, procd_error *err)
{
        dbus_int32_t r = root_pid;
        dbus_uint32_t g = gid;
        return call(c, "TrackFamilyViaAssociatedGroup", NULL, err, DBUS_TYPE_INT32, &r, DBUS_TYPE_UINT32, &g,
                    DBUS_TYPE_INVALID);
}

/* The limit of extra named by a GetUsage key, NULL for another key. */
static procd_u64 *limit_field(procd_usage_extra *x, const char *key)
{
        return strcmp(key, "memory_max_bytes") == 0      ? &x->memory_max_bytes
               : strcmp(key, "cpu_max_quota_usec") == 0  ? &x->cpu_max_quota_usec
               : strcmp(key, "cpu_max_period_usec") == 0 ? &x->cpu_max_period_usec
               : strcmp(key, "pids_max") == 0            ? &x->pids_max
                                                         : NULL;
}

/* The usage entries of an a{sv} at it (GetUsage's reply, FamilyEmptied's data); other keys
 * are left alone. */
static bool parse_usage_dict(DBusMessageIter *it, procd_usage *out, procd_usage_extra *extra)
{
        DBusMessageIter arr;
        procd_usage_init(out);
        if (dbus_message_iter_get_arg_type(it) != DBUS_TYPE_ARRAY)
                return false;
        dbus_message_iter_recurse(it, &arr);
        unsigned sources = 0;
        while (dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_DICT_ENTRY) {
                DBusMessageIter e, v;
                const char *key;
                dbus_message_iter_recurse(&arr, &e);
                if (dbus_message_iter_get_arg_type(&e) != DBUS_TYPE_STRING)
                        return false;
                dbus_message_iter_get_basic(&e, &key);
                dbus_message_iter_next(&e);
                if (dbus_message_iter_get_arg_type(&e) != DBUS_TYPE_VARIANT)
                        return false;
                dbus_message_iter_recurse(&e, &v);
                int t = dbus_message_iter_get_arg_type(&v);
                if (t == DBUS_TYPE_STRING) {
                        const char *sv;
                        dbus_message_iter_get_basic(&v, &sv);
                        if (strcmp(key, "source") == 0) {
                                sources = procd_usage_sources_from_name(sv);
                        } else if (strcmp(key, "fallback_reason") == 0) {
                                out->fallback = true;
                                snprintf(out->fallback_reason, sizeof out->fallback_reason, "%s", sv);
                        }
                } else if (t == DBUS_TYPE_DOUBLE && strcmp(key, "cpu_percent") == 0) {
                        if (extra) {
                                dbus_message_iter_get_basic(&v, &extra->cpu_percent);
                                extra->cpu_percent_available = true;
                        }
                } else if (t == DBUS_TYPE_UINT64 && strcmp(key, "cpu_percent_interval_usec") == 0) {
                        if (extra) {
                                dbus_uint64_t val;
                                dbus_message_iter_get_basic(&v, &val);
                                extra->cpu_percent_interval_usec = val;
                        }
                } else if (t == DBUS_TYPE_UINT64 && extra && limit_field(extra, key)) {
                        dbus_uint64_t val;
                        dbus_message_iter_get_basic(&v, &val);
                        *limit_field(extra, key) = (procd_u64){ .value = val, .available = true };
                } else if (t == DBUS_TYPE_UINT64) {
                        dbus_uint64_t val;
                        dbus_message_iter_get_basic(&v, &val);
                        for (size_t i = 0; i < procd_usage_field_count(); i++) {
                                if (strcmp(procd_usage_field_name(i), key) != 0)
                                        continue;
                                procd_u64 *f = procd_usage_field_mut(out, i);
                                f->value = val;
                                f->available = true;
                                break;
                        }
                } /* unknown keys and types: a newer daemon; ignored */
                dbus_message_iter_next(&arr);
        }
        /* per-field source: the one source when there is one, else unknown (0) */
        out->sources = sources;
        for (size_t i = 0; i < procd_usage_field_count(); i++) {
                procd_u64 *f = procd_usage_field_mut(out, i);
                if (f->available && (sources & (sources - 1)) == 0)
                        f->source = (uint8_t) sources;
        }
        return true;
}

static bool parse_usage(DBusMessage *reply, procd_usage *out, procd_usage_extra *extra)
{
        DBusMessageIter it;
        return dbus_message_iter_init(reply, &it) && parse_usage_dict(&it, out, extra);
}

procd_status procd_get_usage_extra(procd_client *c, pid_t pid, procd_usage *out, procd_usage_extra *extra,
                                   procd_error *err)
{
        dbus_int32_t p = pid;
        DBusMessage *reply = NULL;
        if (extra)
                *extra = (procd_usage_extra) { 0 };
        procd_status s = call(c, "GetUsage", &reply, err, DBUS_TYPE_INT32, &p, DBUS_TYPE_INVALID);
        if (s != PROCD_OK)
                return s;
        if (!parse_usage(reply, out, extra))
                return bad_reply(reply, "GetUsage", err);
        dbus_message_unref(reply);
        return PROCD_OK;
}

procd_status procd_get_usage(procd_client *c, pid_t pid, procd_usage *out, procd_error *err)
{
        return procd_get_usage_extra(c, pid, out, NULL, err);
}

procd_status procd_signal_process(procd_client *c, pid_t pid, int sig, procd_error *err)
{
        dbus_int32_t p = pid, s = sig;
        return call(c, "SignalProcess", NULL, err, DBUS_TYPE_INT32, &p, DBUS_TYPE_INT32, &s, DBUS_TYPE_INVALID);
}

static procd_status pid_call(procd_client *c, const char *method, pid_t pid, procd_error *err)
{
        dbus_int32_t p = pid;
        return call(c, method, NULL, err, DBUS_TYPE_INT32, &p, DBUS_TYPE_INVALID);
}

procd_status procd_suspend_family(procd_client *c, pid_t pid, procd_error *err)
{
        return pid_call(c, "SuspendFamily", pid, err);
}

procd_status procd_continue_family(procd_client *c, pid_t pid, procd_error *err)
{
        return pid_call(c, "ContinueFamily", pid, err);
}

procd_status procd_kill_family(procd_client *c, pid_t pid, procd_error *err)
{
        return pid_call(c, "KillFamily", pid, err);
}

procd_status procd_unregister_family(procd_client *c, pid_t pid, procd_error *err)
{
        return pid_call(c, "UnregisterFamily", pid, err);
}

procd_status procd_kill_and_unregister_family(procd_client *c, pid_t pid, procd_error *err)
{
        return pid_call(c, "KillAndUnregisterFamily", pid, err);
}

procd_status procd_snapshot(procd_client *c, procd_error *err)
{
        return call(c, "Snapshot", NULL, err, DBUS_TYPE_INVALID);
}

procd_status procd_quit(procd_client *c, procd_error *err)
{
        return call(c, "Quit", NULL, err, DBUS_TYPE_INVALID);
}

procd_status procd_get_metrics(procd_client *c, char **text, procd_error *err)
{
        DBusMessage *reply = NULL;
        *text = NULL;
        procd_status s = call(c, "GetMetrics", &reply, err, DBUS_TYPE_INVALID);
        if (s != PROCD_OK)
                return s;
        const char *t = NULL;
        if (!dbus_message_get_args(reply, NULL, DBUS_TYPE_STRING, &t, DBUS_TYPE_INVALID))
                return bad_reply(reply, "GetMetrics", err);
        *text = strdup(t);
        dbus_message_unref(reply);
        return *text ? PROCD_OK : procd_error_set(err, PROCD_E_TRANSPORT, "out of memory");
}

static bool parse_family(DBusMessageIter *st, procd_family_info *fi)
{
        DBusMessageIter f;
        dbus_message_iter_recurse(st, &f);
        static const int types[] = { DBUS_TYPE_INT32, DBUS_TYPE_UINT64, DBUS_TYPE_INT32, DBUS_TYPE_INT32,
                                     DBUS_TYPE_STRING, DBUS_TYPE_STRING, DBUS_TYPE_ARRAY, DBUS_TYPE_STRING };
        dbus_int32_t i32;
        dbus_uint64_t u64;
        const char *str;
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
                if (dbus_message_iter_get_arg_type(&f) != types[i])
                        return false;
                switch (i) {
                case 0:
                        dbus_message_iter_get_basic(&f, &i32);
                        fi->root_pid = i32;
                        break;
                case 1:
                        dbus_message_iter_get_basic(&f, &u64);
                        fi->root_start_ticks = u64;
                        break;
                case 2:
                        dbus_message_iter_get_basic(&f, &i32);
                        fi->watcher_pid = i32;
                        break;
                case 3:
                        dbus_message_iter_get_basic(&f, &i32);
                        fi->parent_root_pid = i32;
                        break;
                case 4:
                        dbus_message_iter_get_basic(&f, &str);
                        snprintf(fi->tracking, sizeof fi->tracking, "%s", str);
                        break;
                case 5:
                        dbus_message_iter_get_basic(&f, &str);
                        snprintf(fi->source, sizeof fi->source, "%s", str);
                        break;
                case 6: {
                        DBusMessageIter a;
                        if (dbus_message_iter_get_element_type(&f) != DBUS_TYPE_INT32)
                                return false;
                        dbus_message_iter_recurse(&f, &a);
                        const dbus_int32_t *pids = NULL;
                        int n = 0;
                        dbus_message_iter_get_fixed_array(&a, &pids, &n);
                        if (n > 0) {
                                fi->members = malloc((size_t) n * sizeof(pid_t));
                                if (!fi->members)
                                        return false;
                                for (int j = 0; j < n; j++)
                                        fi->members[j] = pids[j];
                                fi->n_members = (size_t) n;
                        }
                        break;
                }
                case 7:
                        dbus_message_iter_get_basic(&f, &str);
                        snprintf(fi->state, sizeof fi->state, "%s", str);
                        break;
                }
                dbus_message_iter_next(&f);
        }
        return true;
}

procd_status procd_dump(procd_client *c, pid_t pid, procd_family_info **out, size_t *n, procd_error *err)
{
        *out = NULL;
        *n = 0;
        dbus_int32_t p = pid;
        DBusMessage *reply = NULL;
        procd_status s = call(c, "Dump", &reply, err, DBUS_TYPE_INT32, &p, DBUS_TYPE_INVALID);
        if (s != PROCD_OK)
                return s;
        DBusMessageIter it, arr;
        if (!dbus_message_iter_init(reply, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_ARRAY)
                return bad_reply(reply, "Dump", err);
        int count = dbus_message_iter_get_element_count(&it);
        procd_family_info *infos = calloc(count > 0 ? (size_t) count : 1, sizeof *infos);
        if (!infos)
                return bad_reply(reply, "Dump", err);
        dbus_message_iter_recurse(&it, &arr);
        size_t k = 0;
        while (dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_STRUCT && k < (size_t) count) {
                if (!parse_family(&arr, &infos[k])) {
                        procd_family_info_free(infos, k + 1);
                        return bad_reply(reply, "Dump", err);
                }
                k++;
                dbus_message_iter_next(&arr);
        }
        dbus_message_unref(reply);
        *out = infos;
        *n = k;
        return PROCD_OK;
}

procd_status procd_set_family_job(procd_client *c, pid_t root_pid, const char *job_id, uid_t owner_uid,
                                  procd_error *err)
{
        if (!procd_job_id_valid(job_id))
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "a job id is 1..%d printable characters",
                                    PROCD_JOB_ID_MAX - 1);
        dbus_int32_t root = root_pid;
        dbus_uint32_t owner = owner_uid;
        return call(c, "SetFamilyJob", NULL, err, DBUS_TYPE_INT32, &root, DBUS_TYPE_STRING, &job_id, DBUS_TYPE_UINT32,
                    &owner, DBUS_TYPE_INVALID);
}

procd_status procd_list_jobs(procd_client *c, uid_t uid, procd_job_info **out, size_t *n, procd_error *err)
{
        *out = NULL;
        *n = 0;
        dbus_uint32_t u = uid;
        DBusMessage *reply = NULL;
        procd_status s = call(c, "ListJobs", &reply, err, DBUS_TYPE_UINT32, &u, DBUS_TYPE_INVALID);
        if (s != PROCD_OK)
                return s;
        DBusMessageIter it, arr;
        if (!dbus_message_iter_init(reply, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_ARRAY ||
            strcmp(dbus_message_get_signature(reply), "a(iust)") != 0)
                return bad_reply(reply, "ListJobs", err);
        size_t cap = 0;
        procd_job_info *v = NULL;
        dbus_message_iter_recurse(&it, &arr);
        while (dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_STRUCT) {
                if (*n == cap) {
                        cap = cap ? cap * 2 : 8;
                        procd_job_info *nv = realloc(v, cap * sizeof *nv);
                        if (!nv) {
                                free(v);
                                dbus_message_unref(reply);
                                return procd_error_set(err, PROCD_E_TRANSPORT, "out of memory");
                        }
                        v = nv;
                }
                procd_job_info *j = &v[(*n)++];
                memset(j, 0, sizeof *j);
                DBusMessageIter st;
                dbus_int32_t root;
                dbus_uint32_t owner;
                const char *id;
                dbus_uint64_t t;
                dbus_message_iter_recurse(&arr, &st);
                dbus_message_iter_get_basic(&st, &root);
                dbus_message_iter_next(&st);
                dbus_message_iter_get_basic(&st, &owner);
                dbus_message_iter_next(&st);
                dbus_message_iter_get_basic(&st, &id);
                dbus_message_iter_next(&st);
                dbus_message_iter_get_basic(&st, &t);
                j->root_pid = root;
                j->owner_uid = owner;
                snprintf(j->job_id, sizeof j->job_id, "%s", id);
                j->registered_usec = t;
                dbus_message_iter_next(&arr);
        }
        dbus_message_unref(reply);
        *out = v;
        return PROCD_OK;
}

procd_status procd_adopt_process(procd_client *c, pid_t pid, pid_t family_root, procd_error *err)
{
        dbus_int32_t p = pid, f = family_root;
        return call(c, "AdoptProcess", NULL, err, DBUS_TYPE_INT32, &p, DBUS_TYPE_INT32, &f, DBUS_TYPE_INVALID);
}

/* ---- events ---- */

procd_status procd_subscribe(procd_client *c, procd_error *err)
{
        return call(c, "Subscribe", NULL, err, DBUS_TYPE_INVALID);
}

procd_status procd_unsubscribe(procd_client *c, procd_error *err)
{
        return call(c, "Unsubscribe", NULL, err, DBUS_TYPE_INVALID);
}

/* data's keys other than the usage fields */
static void parse_event_data(DBusMessageIter *arr, procd_event *ev)
{
        DBusMessageIter d;
        dbus_message_iter_recurse(arr, &d);
        for (; dbus_message_iter_get_arg_type(&d) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&d)) {
                DBusMessageIter e, v;
                const char *key;
                dbus_message_iter_recurse(&d, &e);
                dbus_message_iter_get_basic(&e, &key);
                dbus_message_iter_next(&e);
                dbus_message_iter_recurse(&e, &v);
                int t = dbus_message_iter_get_arg_type(&v);
                if (t == DBUS_TYPE_UINT64) {
                        dbus_uint64_t val;
                        dbus_message_iter_get_basic(&v, &val);
                        if (strcmp(key, "dropped") == 0)
                                ev->dropped = val;
                        else if (strcmp(key, "oom_kills") == 0)
                                ev->oom_kills = val;
                        else if (strcmp(key, "oom_kills_total") == 0)
                                ev->oom_kills_total = val;
                        else if (strcmp(key, "families") == 0)
                                ev->families = val;
                } else if (t == DBUS_TYPE_STRING && strcmp(key, "message") == 0) {
                        const char *sv;
                        dbus_message_iter_get_basic(&v, &sv);
                        snprintf(ev->message, sizeof ev->message, "%s", sv);
                } else if (t == DBUS_TYPE_STRING && strcmp(key, "source") == 0) {
                        ev->has_usage = true;
                }
        }
}

static bool parse_event(DBusMessage *m, procd_event *ev)
{
        memset(ev, 0, sizeof *ev);
        DBusMessageIter it;
        if (!dbus_message_has_signature(m, "isa{sv}") || !dbus_message_iter_init(m, &it))
                return false;
        snprintf(ev->name, sizeof ev->name, "%s", dbus_message_get_member(m));
        dbus_int32_t root;
        const char *job;
        dbus_message_iter_get_basic(&it, &root);
        dbus_message_iter_next(&it);
        dbus_message_iter_get_basic(&it, &job);
        dbus_message_iter_next(&it);
        ev->root_pid = root;
        snprintf(ev->job, sizeof ev->job, "%s", job);
        parse_event_data(&it, ev);
        if (ev->has_usage)
                parse_usage_dict(&it, &ev->usage, NULL);
        return true;
}

procd_status procd_next_event(procd_client *c, int timeout_ms, procd_event *out, bool *got, procd_error *err)
{
        *got = false;
        if (!c)
                return procd_error_set(err, PROCD_E_TRANSPORT, "not connected");
        long deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : 0;
        for (;;) {
                DBusMessage *m;
                while ((m = dbus_connection_pop_message(c->c))) {
                        bool ours = dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_SIGNAL &&
                                    dbus_message_has_interface(m, PROCD_DBUS_INTERFACE) && parse_event(m, out);
                        dbus_message_unref(m);
                        if (ours) {
                                *got = true;
                                return PROCD_OK;
                        }
                }
                if (!dbus_connection_get_is_connected(c->c))
                        return procd_error_set(err, PROCD_E_TRANSPORT, "connection to procd lost");
                int wait = -1;
                if (timeout_ms >= 0) {
                        long left = deadline - now_ms();
                        if (left <= 0)
                                return PROCD_OK;
                        wait = (int) left;
                }
                if (!dbus_connection_read_write(c->c, wait))
                        return procd_error_set(err, PROCD_E_TRANSPORT, "connection to procd lost");
        }
}

int procd_client_fd(procd_client *c)
{
        int fd = -1;
        if (!c || !c->c || !dbus_connection_get_unix_fd(c->c, &fd))
                return -1;
        return fd;
}
