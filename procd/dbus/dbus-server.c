/* dbus-server.c - DBusServer, connection lifecycle and limits. */
#include "dbus-server.h"

#include "procd/core/stats.h"

#include <errno.h>
#include <stdbool.h>
#include <glib.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "procd/wire.h"
#include "procd/dbus/dbus-loop.h"
#include "procd/dbus/dbus-methods.h"
#include "procd/dbus/dbus-signals.h"
#include "procd/core/events.h"
#include "trackers/util.h"

struct pd_dbus_server {
        DBusServer *server;
        char *path;
        pd_commands *cm;
        GPtrArray *conns; /* pd_conn * */
        unsigned next_serial;
        pd_admission *adm;        /* connection caps (procd/core/admission.h) */
};

typedef struct pd_conn {
        pd_dbus_server *srv;
        DBusConnection *c;
        pd_dbus_loop *loop;
        guint reap_idle;
        bool dropped;
        bool overflowed;   /* dropped for unread replies: memory is trimmed at reap */
        gint64 last_active_usec; /* monotonic: last message from the peer (or accept) */
        pd_slot *slot;     /* its admission: the uid from SO_PEERCRED at accept, then the
                              authenticated one */
        guint auth_timer;
        bool subscribed;   /* Subscribe: events are sent to it */
        uint64_t lost;     /* events lost to its bound since the last one it got */
} pd_conn;

/* A connection dropped by procd or closed by its peer: reaped at the next idle. */
static bool conn_leaving(void *owner)
{
        const pd_conn *o = owner;
        return o->dropped || !dbus_connection_get_is_connected(o->c);
}

/* Called by libdbus once the peer has authenticated (never again for that connection):
 * the uid from SO_PEERCRED at accept is confirmed; were it another, the quotas are checked
 * again for the authenticated one.  FALSE: libdbus disconnects the peer. */
static dbus_bool_t allow_uid(DBusConnection *c, unsigned long uid, void *data)
{
        pd_conn *pc = data;
        (void) c; /* libdbus calls this with the connection unlocked: do not use it here */
        /* admitted at accept; authorization is per call, from the uid */
        if (!pd_admission_confirm(pc->srv->adm, pc->slot, (uid_t) uid)) {
                pc->dropped = true;
                return FALSE;
        }
        return TRUE;
}

/* Queue one event for a subscriber, within its bound. */
static void send_event(pd_conn *pc, const pd_event *e)
{
        pd_events *ev = pc->srv->cm->events;
        if (dbus_connection_get_outgoing_size(pc->c) > PD_DBUS_MAX_EVENT_BYTES) {
                pc->lost++;
                pd_events_count_dropped(ev, 1);
                return;
        }
        DBusMessage *sig = pd_dbus_event_signal(e, pc->lost);
        if (!sig || !dbus_connection_send(pc->c, sig, NULL)) {
                pc->lost++;
                pd_events_count_dropped(ev, 1);
        } else {
                pc->lost = 0;
        }
        if (sig)
                dbus_message_unref(sig);
}

/* A connection events go to: subscribed, not flagged as dropped, still connected. */
static bool listens(const pd_conn *pc)
{
        return pc->subscribed && !pc->dropped && dbus_connection_get_is_connected(pc->c);
}

/* The events sink: every live subscriber. */
static void events_sink(void *data, const pd_event *e)
{
        pd_dbus_server *s = data;
        for (guint i = 0; i < s->conns->len; i++)
                if (listens(s->conns->pdata[i]))
                        send_event(s->conns->pdata[i], e);
}

/* Whether the sink has a live subscriber (pd_events_listened). */
static bool events_listening(void *data)
{
        const pd_dbus_server *s = data;
        for (guint i = 0; i < s->conns->len; i++)
                if (listens(s->conns->pdata[i]))
                        return true;
        return false;
}

/* Subscribe / Unsubscribe (no arguments): the connection's own state, so handled here.
 * A new subscriber first gets the start event (FamiliesRestored) when procd restored
 * families: it cannot have been connected when that happened.  false: not one of them. */
static bool subscription_call(pd_conn *pc, DBusMessage *m)
{
        const char *iface = dbus_message_get_interface(m);
        bool sub = dbus_message_is_method_call(m, PROCD_DBUS_INTERFACE, "Subscribe") ||
                   (!iface && dbus_message_has_member(m, "Subscribe"));
        bool unsub = dbus_message_is_method_call(m, PROCD_DBUS_INTERFACE, "Unsubscribe") ||
                     (!iface && dbus_message_has_member(m, "Unsubscribe"));
        if ((!sub && !unsub) || !dbus_message_has_signature(m, ""))
                return false;
        pd_events *ev = pc->srv->cm->events;
        DBusMessage *reply = ev ? dbus_message_new_method_return(m)
                                : dbus_message_new_error(m, procd_status_dbus_name(PROCD_E_INTERNAL),
                                                         "this procd has no events");
        if (reply && !dbus_message_get_no_reply(m))
                dbus_connection_send(pc->c, reply, NULL);
        if (reply)
                dbus_message_unref(reply);
        if (!ev)
                return true;
        bool was = pc->subscribed;
        pc->subscribed = sub;
        pd_event start;
        if (sub && !was && pd_events_start_event(ev, &start))
                send_event(pc, &start);
        return true;
}

static DBusHandlerResult object_message(DBusConnection *c, DBusMessage *m, void *data)
{
        pd_conn *pc = data;
        /* calls still queued from a peer we dropped (or that left) are not run */
        if (pc->dropped || !dbus_connection_get_is_connected(c))
                return DBUS_HANDLER_RESULT_HANDLED;
        if (dbus_message_get_type(m) != DBUS_MESSAGE_TYPE_METHOD_CALL) {
                pd_dbus_handle_message(c, m, pc->srv->cm);
                return DBUS_HANDLER_RESULT_HANDLED;
        }
        /* a peer that leaves its replies unread past the bound is dropped: what is queued
         * for it is freed with the connection (an error reply per refused call would only
         * grow the queue) */
        long out = dbus_connection_get_outgoing_size(c);
        if (out > PD_DBUS_MAX_OUTGOING_BYTES) {
                g_warning("dropping a client that leaves %ld bytes of replies unread (limit %d)", out,
                          PD_DBUS_MAX_OUTGOING_BYTES);
                pc->dropped = pc->overflowed = true;
                dbus_connection_close(c);
                return DBUS_HANDLER_RESULT_HANDLED;
        }
        if (subscription_call(pc, m))
                return DBUS_HANDLER_RESULT_HANDLED;
        pd_dbus_handle_message(c, m, pc->srv->cm);
        return DBUS_HANDLER_RESULT_HANDLED;
}

static const DBusObjectPathVTable object_vtable = { .message_function = object_message };

static DBusHandlerResult filter(DBusConnection *c, DBusMessage *m, void *data);

static void conn_free(pd_conn *pc)
{
        if (pc->reap_idle)
                g_source_remove(pc->reap_idle);
        if (pc->auth_timer)
                g_source_remove(pc->auth_timer);
        dbus_connection_remove_filter(pc->c, filter, pc);
        pd_dbus_loop_detach(pc->loop);
        dbus_connection_unregister_object_path(pc->c, PROCD_DBUS_PATH);
        dbus_connection_close(pc->c);
        dbus_connection_unref(pc->c);
        pd_admission_release(pc->srv->adm, pc->slot);
        if (pc->srv->cm->stats && pc->srv->cm->stats->connections_now)
                pc->srv->cm->stats->connections_now--;
        g_free(pc);
}

static gboolean reap_cb(gpointer data)
{
        pd_conn *pc = data;
        pd_dbus_server *s = pc->srv;
        bool trim = pc->overflowed;
        pc->reap_idle = 0;
        g_ptr_array_remove(s->conns, pc);
        conn_free(pc);
        /* the queues of a dropped peer, or of the last client, go back to the system (glibc
         * keeps freed heap otherwise) */
        if (trim || s->conns->len == 0)
                malloc_trim(0);
        return G_SOURCE_REMOVE;
}

static uint64_t conn_idle_usec(void *owner)
{
        const pd_conn *pc = owner;
        return (uint64_t) (g_get_monotonic_time() - pc->last_active_usec);
}

/* Eviction (procd/core/admission.h): drop an idle peer and give its slot back now. */
static void conn_evict(void *owner)
{
        pd_conn *pc = owner;
        pc->dropped = true;
        dbus_connection_close(pc->c);
        pd_admission_release(pc->srv->adm, pc->slot);
        pc->slot = NULL;
        if (!pc->reap_idle)
                pc->reap_idle = g_idle_add(reap_cb, pc);
}

static DBusHandlerResult filter(DBusConnection *c, DBusMessage *m, void *data)
{
        pd_conn *pc = data;
        (void) c;
        pc->last_active_usec = g_get_monotonic_time();
        /* Stock tools (gdbus --address) assume a bus and say Hello first: answer it with a
         * unique name so that they work peer-to-peer. */
        if (dbus_message_is_method_call(m, DBUS_INTERFACE_DBUS, "Hello")) {
                DBusMessage *reply = dbus_message_new_method_return(m);
                char name[32];
                snprintf(name, sizeof name, ":1.%u", ++pc->srv->next_serial);
                const char *np = name;
                if (reply && dbus_message_append_args(reply, DBUS_TYPE_STRING, &np, DBUS_TYPE_INVALID))
                        dbus_connection_send(c, reply, NULL);
                if (reply)
                        dbus_message_unref(reply);
                return DBUS_HANDLER_RESULT_HANDLED;
        }
        if (dbus_message_is_signal(m, DBUS_INTERFACE_LOCAL, "Disconnected")) {
                if (!pc->reap_idle)
                        pc->reap_idle = g_idle_add(reap_cb, pc);
                return DBUS_HANDLER_RESULT_HANDLED;
        }
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
}

/* A peer that has not authenticated within the bound loses its slot. */
static gboolean auth_timeout_cb(gpointer data)
{
        pd_conn *pc = data;
        pc->auth_timer = 0;
        if (!dbus_connection_get_is_authenticated(pc->c)) {
                g_warning("dropping a client that did not authenticate within %d s", PD_ADMISSION_AUTH_TIMEOUT_SEC);
                pc->dropped = true;
                dbus_connection_close(pc->c);
        }
        return G_SOURCE_REMOVE;
}

/* The peer's uid from the kernel (fixed at connect(2)); false when it cannot be read. */
static bool peer_uid(DBusConnection *c, uid_t *uid)
{
        int fd = -1;
        struct ucred cr;
        socklen_t len = sizeof cr;
        if (!dbus_connection_get_unix_fd(c, &fd) || fd < 0 ||
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || len != sizeof cr)
                return false;
        *uid = cr.uid;
        return true;
}

static void new_connection(DBusServer *server, DBusConnection *c, void *data)
{
        pd_dbus_server *s = data;
        (void) server;
        uid_t uid = (uid_t) -1;
        bool known = peer_uid(c, &uid);
        pd_conn *pc = g_new0(pd_conn, 1);
        pc->slot = pd_admission_take(s->adm, known, uid, pc);
        if (!pc->slot) {
                g_free(pc);
                dbus_connection_close(c);
                return; /* not referenced: libdbus frees it */
        }
        pc->srv = s;
        pc->last_active_usec = g_get_monotonic_time();
        pc->c = dbus_connection_ref(c);
        dbus_connection_set_exit_on_disconnect(c, FALSE);
        dbus_connection_set_unix_user_function(c, allow_uid, pc, NULL);
        dbus_connection_set_max_message_size(c, PD_DBUS_MAX_MESSAGE_BYTES);
        dbus_connection_set_max_received_size(c, PD_DBUS_MAX_RECEIVED_BYTES);
        /* no method takes a file descriptor: bound what a peer can park in our fd table */
        dbus_connection_set_max_message_unix_fds(c, PD_DBUS_MAX_MESSAGE_FDS);
        dbus_connection_set_max_received_unix_fds(c, PD_DBUS_MAX_RECEIVED_FDS);
        if (!dbus_connection_register_object_path(c, PROCD_DBUS_PATH, &object_vtable, pc) ||
            !dbus_connection_add_filter(c, filter, pc, NULL) || !(pc->loop = pd_dbus_loop_attach_connection(c, pd_registry_fd_mux(s->cm->reg)))) {
                g_warning("out of memory setting up a connection");
                dbus_connection_remove_filter(c, filter, pc);
                dbus_connection_unregister_object_path(c, PROCD_DBUS_PATH);
                dbus_connection_close(c);
                dbus_connection_unref(c);
                pd_admission_release(s->adm, pc->slot);
                g_free(pc);
                return;
        }
        pc->auth_timer = g_timeout_add_seconds(PD_ADMISSION_AUTH_TIMEOUT_SEC, auth_timeout_cb, pc);
        g_ptr_array_add(s->conns, pc);
        if (s->cm->stats) {
                s->cm->stats->connections_now++;
                s->cm->stats->connections_total++;
        }
}

/* A socket file left by a dead procd is replaced; a live one is not. */
static int check_existing(const char *path, tr_error *err)
{
        struct stat st;
        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : tr_error_setx(err, errno, "%s", path);
        if (!S_ISSOCK(st.st_mode))
                return tr_error_set(err, EEXIST, "%s exists and is not a socket", path);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof sa.sun_path)
                return tr_error_set(err, ENAMETOOLONG, "socket path too long: %s", path);
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return tr_error_setx(err, errno, "socket");
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0)
                return tr_error_set(err, EADDRINUSE, "another procd listens on %s", path);
        if (unlink(path) < 0 && errno != ENOENT)
                return tr_error_setx(err, errno, "removing stale %s", path);
        return 0;
}

int pd_dbus_server_new(const char *socket_path, gid_t group, unsigned max_per_uid, unsigned evict_idle_sec,
                       pd_commands *cm, pd_dbus_server **out, tr_error *err)
{
        if (max_per_uid > PD_DBUS_MAX_CONNECTIONS)
                return tr_error_set(err, EINVAL, "max connections per uid %u > %d", max_per_uid,
                                    PD_DBUS_MAX_CONNECTIONS);
        g_autofree char *dir = g_path_get_dirname(socket_path);
        if (g_mkdir_with_parents(dir, 0755) < 0)
                return tr_error_setx(err, errno, "creating %s", dir);
        int k = check_existing(socket_path, err);
        if (k < 0)
                return k;
        char *esc = dbus_address_escape_value(socket_path);
        if (!esc)
                return tr_error_set(err, ENOMEM, "out of memory");
        g_autofree char *addr = g_strdup_printf("unix:path=%s", esc);
        dbus_free(esc);

        DBusError derr;
        dbus_error_init(&derr);
        mode_t old = umask(0117); /* the socket is never wider than 0660, even for a moment */
        DBusServer *server = dbus_server_listen(addr, &derr);
        umask(old);
        if (!server) {
                k = tr_error_set(err, EADDRNOTAVAIL, "listening on %s: %s", socket_path, derr.message);
                dbus_error_free(&derr);
                return k;
        }
        pd_dbus_server *s = g_new0(pd_dbus_server, 1);
        s->server = server;
        s->path = g_strdup(socket_path);
        s->cm = cm;
        s->adm = pd_admission_new("connection", PD_DBUS_MAX_CONNECTIONS, PD_DBUS_ROOT_RESERVED_CONNECTIONS,
                                  max_per_uid ? max_per_uid : PD_DBUS_DEFAULT_MAX_CONNECTIONS_PER_UID, conn_leaving);
        pd_admission_set_eviction(s->adm, evict_idle_sec, conn_idle_usec, conn_evict);
        s->conns = g_ptr_array_new();
        /* the umask made it 0660 at bind; never follow a symlink swapped in since (a
         * --socket in a directory others can write) */
        struct stat st;
        if (lstat(socket_path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
                k = tr_error_set(err, EEXIST, "%s is not the socket procd created", socket_path);
                pd_dbus_server_free(s);
                return k;
        }
        if (((st.st_mode & 07777) != 0660 && chmod(socket_path, 0660) < 0) ||
            (group != (gid_t) -1 && lchown(socket_path, (uid_t) -1, group) < 0)) {
                k = tr_error_setx(err, errno, "setting mode/group of %s", socket_path);
                pd_dbus_server_free(s);
                return k;
        }
        const char *mechs[] = { "EXTERNAL", NULL };
        if (!dbus_server_set_auth_mechanisms(server, mechs) || !pd_dbus_loop_attach_server(server, pd_registry_fd_mux(cm->reg))) {
                pd_dbus_server_free(s);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        dbus_server_set_new_connection_function(server, new_connection, s, NULL);
        if (cm->events)
                pd_events_add_sink(cm->events, events_sink, events_listening, s);
        *out = s;
        return 0;
}

void pd_dbus_server_free(pd_dbus_server *s)
{
        if (!s)
                return;
        if (s->cm->events)
                pd_events_remove_sink(s->cm->events, events_sink, s);
        for (guint i = 0; i < s->conns->len; i++) {
                pd_conn *pc = s->conns->pdata[i];
                if (dbus_connection_get_is_connected(pc->c))
                        dbus_connection_flush(pc->c); /* the reply to Quit, say */
                conn_free(pc);
        }
        g_ptr_array_free(s->conns, TRUE);
        pd_admission_free(s->adm);
        if (s->server) {
                dbus_server_set_new_connection_function(s->server, NULL, NULL, NULL);
                pd_dbus_loop_detach_server(s->server);
                dbus_server_disconnect(s->server);
                dbus_server_unref(s->server);
                unlink(s->path);
        }
        g_free(s->path);
        g_free(s);
}

size_t pd_dbus_server_connections(const pd_dbus_server *s) { return s->conns->len; }

