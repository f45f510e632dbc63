/* jobcg-systemd.c - the job cgroup as a transient scope with Delegate=yes, asked from the
 * systemd manager over libdbus-1 (peer-to-peer on its private socket, or a bus address).
 *
 * Steps: connect (loop read_write until authenticated: on the p2p socket the reply to the
 * first call is lost otherwise), Subscribe, fork a parked helper (blocks in read() on a
 * pipe), StartTransientUnit("procd-<name>.scope", "fail", PIDs=[helper], Delegate=yes), wait
 * for JobRemoved of that job (result "done") and for the scope's ControlGroup, all bounded by
 * --systemd-timeout; then the helper moves to <scope>/starter so <scope> is an inner node.
 * Teardown: close the pipe (the helper exits), reap it by pid; StopUnit for the empty scope,
 * which systemd then removes.
 */
#include <dbus/dbus.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobcg.h"
#include "trackers/util.h"

#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"

typedef struct sd_state {
        DBusConnection *conn;
        bool bus; /* a message bus (needs a destination) rather than the p2p socket */
        int helper_wfd;
        pid_t helper;
        char unit[256];
        char job[512];         /* job object path from StartTransientUnit */
        bool job_removed;
        char job_result[64];
        uint64_t deadline;
} sd_state;

static int remaining_ms(const sd_state *s)
{
        uint64_t now = tr_now_usec();
        if (now >= s->deadline)
                return 0;
        return (int) ((s->deadline - now) / 1000) + 1;
}

static void note_signal(sd_state *s, DBusMessage *m)
{
        if (!dbus_message_is_signal(m, SD_MANAGER, "JobRemoved"))
                return;
        dbus_uint32_t id;
        const char *job, *unit, *result;
        if (!dbus_message_get_args(m, NULL, DBUS_TYPE_UINT32, &id, DBUS_TYPE_OBJECT_PATH, &job, DBUS_TYPE_STRING,
                                   &unit, DBUS_TYPE_STRING, &result, DBUS_TYPE_INVALID))
                return;
        if (strcmp(unit, s->unit) != 0)
                return;
        if (s->job[0] && strcmp(job, s->job) != 0)
                return;
        s->job_removed = true;
        snprintf(s->job_result, sizeof s->job_result, "%s", result);
}

/* Pump the connection until the reply to `serial` arrives (returned, caller unrefs) or the
 * deadline passes (NULL). Signals seen meanwhile are noted. */
static DBusMessage *wait_reply(sd_state *s, dbus_uint32_t serial, uint64_t until, tr_error *err)
{
        for (;;) {
                DBusMessage *m;
                while ((m = dbus_connection_pop_message(s->conn))) {
                        int t = dbus_message_get_type(m);
                        if ((t == DBUS_MESSAGE_TYPE_METHOD_RETURN || t == DBUS_MESSAGE_TYPE_ERROR) &&
                            dbus_message_get_reply_serial(m) == serial)
                                return m;
                        if (t == DBUS_MESSAGE_TYPE_SIGNAL)
                                note_signal(s, m);
                        dbus_message_unref(m);
                }
                int ms = remaining_ms(s);
                uint64_t now = tr_now_usec();
                if (until && (now >= until || (int) ((until - now) / 1000) < ms))
                        ms = now >= until ? 0 : (int) ((until - now) / 1000) + 1;
                if (ms <= 0) {
                        tr_error_set(err, ETIMEDOUT, "no reply from the systemd manager in time");
                        return NULL;
                }
                if (!dbus_connection_read_write(s->conn, ms > 100 ? 100 : ms)) {
                        tr_error_set(err, ECONNRESET, "connection to the systemd manager closed");
                        return NULL;
                }
        }
}

static int call_until(sd_state *s, DBusMessage *msg, DBusMessage **reply, uint64_t until, tr_error *err)
{
        if (s->bus)
                dbus_message_set_destination(msg, "org.freedesktop.systemd1");
        dbus_uint32_t serial;
        if (!dbus_connection_send(s->conn, msg, &serial)) {
                dbus_message_unref(msg);
                return tr_error_set(err, ENOMEM, "D-Bus send failed");
        }
        char member[64];
        snprintf(member, sizeof member, "%s", dbus_message_get_member(msg) ?: "?");
        dbus_message_unref(msg);
        dbus_connection_flush(s->conn);
        DBusMessage *m = wait_reply(s, serial, until, err);
        if (!m)
                return tr_error_prefix(err, "%s", member);
        if (dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_ERROR) {
                const char *text = NULL;
                dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &text, DBUS_TYPE_INVALID);
                tr_error_set(err, EIO, "%s: %s: %s", member, dbus_message_get_error_name(m) ?: "error",
                             text ?: "");
                dbus_message_unref(m);
                return -EIO;
        }
        if (reply)
                *reply = m;
        else
                dbus_message_unref(m);
        return 0;
}

static int call(sd_state *s, DBusMessage *msg, DBusMessage **reply, tr_error *err)
{
        return call_until(s, msg, reply, 0, err);
}

static DBusMessage *new_call(const char *path, const char *iface, const char *method)
{
        return dbus_message_new_method_call(NULL, path, iface, method);
}

/* Right after authentication on the manager's p2p socket the reply to the first call is
 * sometimes not delivered until the next message goes out (seen here about every other run,
 * even after looping read_write until authenticated).  Ping (idempotent) with short, growing
 * per-try bounds (2, 4, 8 ... 200 ms) until one reply arrives; a late reply to an earlier Ping
 * is simply dropped by wait_reply. */
static int prime(sd_state *s, tr_error *err)
{
        uint64_t step = 2000;
        for (;;) {
                DBusMessage *m = new_call(SD_PATH, "org.freedesktop.DBus.Peer", "Ping");
                if (!m)
                        return tr_error_set(err, ENOMEM, "out of memory");
                int r = call_until(s, m, NULL, tr_now_usec() + step, err);
                if (r != -ETIMEDOUT)
                        return r;
                if (remaining_ms(s) <= 0)
                        return r;
                tr_error_clear(err);
                if (step < 200000)
                        step *= 2;
        }
}

static int append_prop_bool(DBusMessageIter *arr, const char *name, dbus_bool_t v)
{
        DBusMessageIter st, var;
        if (!dbus_message_iter_open_container(arr, DBUS_TYPE_STRUCT, NULL, &st) ||
            !dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &name) ||
            !dbus_message_iter_open_container(&st, DBUS_TYPE_VARIANT, "b", &var) ||
            !dbus_message_iter_append_basic(&var, DBUS_TYPE_BOOLEAN, &v) ||
            !dbus_message_iter_close_container(&st, &var) || !dbus_message_iter_close_container(arr, &st))
                return -ENOMEM;
        return 0;
}

static int append_prop_string(DBusMessageIter *arr, const char *name, const char *v)
{
        DBusMessageIter st, var;
        if (!dbus_message_iter_open_container(arr, DBUS_TYPE_STRUCT, NULL, &st) ||
            !dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &name) ||
            !dbus_message_iter_open_container(&st, DBUS_TYPE_VARIANT, "s", &var) ||
            !dbus_message_iter_append_basic(&var, DBUS_TYPE_STRING, &v) ||
            !dbus_message_iter_close_container(&st, &var) || !dbus_message_iter_close_container(arr, &st))
                return -ENOMEM;
        return 0;
}

static int append_prop_pids(DBusMessageIter *arr, dbus_uint32_t pid)
{
        DBusMessageIter st, var, au;
        const char *name = "PIDs";
        if (!dbus_message_iter_open_container(arr, DBUS_TYPE_STRUCT, NULL, &st) ||
            !dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &name) ||
            !dbus_message_iter_open_container(&st, DBUS_TYPE_VARIANT, "au", &var) ||
            !dbus_message_iter_open_container(&var, DBUS_TYPE_ARRAY, "u", &au) ||
            !dbus_message_iter_append_basic(&au, DBUS_TYPE_UINT32, &pid) ||
            !dbus_message_iter_close_container(&var, &au) || !dbus_message_iter_close_container(&st, &var) ||
            !dbus_message_iter_close_container(arr, &st))
                return -ENOMEM;
        return 0;
}

static int start_scope(sd_state *s, tr_error *err)
{
        DBusMessage *msg = new_call(SD_PATH, SD_MANAGER, "StartTransientUnit");
        if (!msg)
                return tr_error_set(err, ENOMEM, "out of memory");
        const char *unit = s->unit, *mode = "fail";
        DBusMessageIter it, arr, aux;
        dbus_message_iter_init_append(msg, &it);
        bool ok = dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &unit) &&
                  dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &mode) &&
                  dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "(sv)", &arr) &&
                  append_prop_pids(&arr, (dbus_uint32_t) s->helper) == 0 &&
                  append_prop_bool(&arr, "Delegate", TRUE) == 0 &&
                  append_prop_string(&arr, "Description", "procd-starter job") == 0 &&
                  dbus_message_iter_close_container(&it, &arr) &&
                  dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "(sa(sv))", &aux) &&
                  dbus_message_iter_close_container(&it, &aux);
        if (!ok) {
                dbus_message_unref(msg);
                return tr_error_set(err, ENOMEM, "building StartTransientUnit");
        }
        DBusMessage *reply = NULL;
        int r = call(s, msg, &reply, err);
        if (r < 0)
                return r;
        const char *job = NULL;
        if (!dbus_message_get_args(reply, NULL, DBUS_TYPE_OBJECT_PATH, &job, DBUS_TYPE_INVALID)) {
                dbus_message_unref(reply);
                return tr_error_set(err, EPROTO, "StartTransientUnit: unexpected reply");
        }
        snprintf(s->job, sizeof s->job, "%s", job);
        dbus_message_unref(reply);
        return 0;
}

static int wait_job_removed(sd_state *s, tr_error *err)
{
        while (!s->job_removed) {
                DBusMessage *m;
                while ((m = dbus_connection_pop_message(s->conn))) {
                        if (dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_SIGNAL)
                                note_signal(s, m);
                        dbus_message_unref(m);
                }
                if (s->job_removed)
                        break;
                int ms = remaining_ms(s);
                if (ms <= 0)
                        return tr_error_set(err, ETIMEDOUT, "no JobRemoved for %s in time", s->unit);
                if (!dbus_connection_read_write(s->conn, ms > 100 ? 100 : ms))
                        return tr_error_set(err, ECONNRESET, "connection to the systemd manager closed");
        }
        if (strcmp(s->job_result, "done") != 0)
                return tr_error_set(err, EIO, "starting %s: job result '%s'", s->unit, s->job_result);
        return 0;
}

static int get_control_group(sd_state *s, char *out, size_t size, tr_error *err)
{
        DBusMessage *msg = new_call(SD_PATH, SD_MANAGER, "GetUnit");
        if (!msg)
                return tr_error_set(err, ENOMEM, "out of memory");
        const char *unit = s->unit;
        dbus_message_append_args(msg, DBUS_TYPE_STRING, &unit, DBUS_TYPE_INVALID);
        DBusMessage *reply = NULL;
        int r = call(s, msg, &reply, err);
        if (r < 0)
                return r;
        const char *upath = NULL;
        char path[512];
        if (!dbus_message_get_args(reply, NULL, DBUS_TYPE_OBJECT_PATH, &upath, DBUS_TYPE_INVALID)) {
                dbus_message_unref(reply);
                return tr_error_set(err, EPROTO, "GetUnit: unexpected reply");
        }
        snprintf(path, sizeof path, "%s", upath);
        dbus_message_unref(reply);

        for (;;) {
                msg = new_call(path, "org.freedesktop.DBus.Properties", "Get");
                if (!msg)
                        return tr_error_set(err, ENOMEM, "out of memory");
                const char *iface = "org.freedesktop.systemd1.Scope", *prop = "ControlGroup";
                dbus_message_append_args(msg, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &prop, DBUS_TYPE_INVALID);
                r = call(s, msg, &reply, err);
                if (r < 0)
                        return r;
                DBusMessageIter it, var;
                const char *cg = NULL;
                if (dbus_message_iter_init(reply, &it) && dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_VARIANT) {
                        dbus_message_iter_recurse(&it, &var);
                        if (dbus_message_iter_get_arg_type(&var) == DBUS_TYPE_STRING)
                                dbus_message_iter_get_basic(&var, &cg);
                }
                if (cg && cg[0] == '/') {
                        snprintf(out, size, "%s", cg);
                        dbus_message_unref(reply);
                        return 0;
                }
                dbus_message_unref(reply);
                if (remaining_ms(s) <= 0)
                        return tr_error_set(err, ETIMEDOUT, "scope %s has no ControlGroup in time", s->unit);
                usleep(10000);
        }
}

/* In the forked helper (async-signal-safe calls only): keep nothing of the starter's but
 * the pipe's read end, moved to fd 3, and the stdio fds, pointed at /dev/null.  Otherwise
 * the parked helper would hold the D-Bus socket, the job's stdio files, the report file...
 * open until teardown. */
static void helper_close_fds(int rfd)
{
        if (rfd != 3 && dup2(rfd, 3) < 0)
                _exit(1);
        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC); /* not 3: that is taken now */
        if (devnull >= 0) {
                for (int fd = 0; fd < 3; fd++)
                        if (devnull != fd)
                                dup2(devnull, fd);
        }
        if (syscall(SYS_close_range, 4u, ~0u, 0u) < 0) {
                /* close_range needs Linux 5.9: close one by one up to the fd limit */
                struct rlimit rl;
                unsigned max = 65536;
                if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < max)
                        max = (unsigned) rl.rlim_cur;
                for (unsigned fd = 4; fd < max; fd++)
                        close((int) fd);
        }
}

static int fork_helper(sd_state *s, tr_error *err)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return tr_error_setx(err, errno, "pipe");
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(p[0]);
                close(p[1]);
                return tr_error_setx(err, e, "fork (scope helper)");
        }
        if (pid == 0) {
                /* parked until the starter closes the pipe (or dies); async-signal-safe only */
                char c;
                close(p[1]);
                helper_close_fds(p[0]);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent) /* the starter died before the prctl */
                        _exit(0);
                while (read(3, &c, 1) < 0 && errno == EINTR)
                        ;
                _exit(0);
        }
        close(p[0]);
        s->helper_wfd = p[1];
        s->helper = pid;
        return 0;
}

static void sanitize_unit_name(char *name)
{
        for (char *c = name; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      *c == ':' || *c == '_' || *c == '.' || *c == '-'))
                        *c = '_';
}

/* Move the helper into <top>/starter in the hierarchies systemd placed it in (the v2 tree and
 * name=systemd), before anything enables controllers below <top>. */
static int move_helper(st_jobcg *jc, sd_state *s, tr_error *err)
{
        char cgpath[PATH_MAX], pidbuf[32];
        snprintf(cgpath, sizeof cgpath, "%s/starter", jc->top);
        snprintf(pidbuf, sizeof pidbuf, "%d", (int) s->helper);
        int moved = 0;
        for (int i = 0; i < jc->hs->n; i++) {
                const tr_hierarchy *h = &jc->hs->h[i];
                if (!h->is_v2 && strcmp(h->key, "name=systemd") != 0)
                        continue;
                char top[PATH_MAX], dir[PATH_MAX];
                if (tr_hierarchy_fs_path(h, jc->top, top, sizeof top, NULL) < 0 || access(top, F_OK) != 0)
                        continue;
                if (tr_hierarchy_fs_path(h, cgpath, dir, sizeof dir, NULL) < 0)
                        continue;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return tr_error_setx(err, errno, "mkdir %s", dir);
                _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0)
                        return tr_error_setx(err, errno, "open %s", dir);
                int r = tr_write_file_at(dfd, "cgroup.procs", pidbuf, err);
                if (r < 0)
                        return tr_error_prefix(err, "moving the scope helper to %s", dir);
                moved++;
        }
        if (!moved)
                return tr_error_set(err, ENOENT, "scope cgroup %s not found in any hierarchy", jc->top);
        return 0;
}

static int systemd_setup(st_jobcg *jc, const st_options *o, tr_error *err)
{
        sd_state *s = calloc(1, sizeof *s);
        if (!s)
                return tr_error_set(err, ENOMEM, "out of memory");
        s->helper_wfd = -1;
        s->helper = -1;
        jc->priv = s;
        s->deadline = tr_now_usec() + (uint64_t) o->systemd_timeout_ms * 1000;
        char name[200];
        if (o->name)
                snprintf(name, sizeof name, "%s", o->name);
        else
                snprintf(name, sizeof name, "job.%d", (int) getpid());
        snprintf(s->unit, sizeof s->unit, "procd-%s.scope", name);
        sanitize_unit_name(s->unit);

        const char *addr = o->systemd_address ? o->systemd_address : "unix:path=/run/systemd/private";
        DBusError derr;
        dbus_error_init(&derr);
        s->conn = dbus_connection_open_private(addr, &derr);
        if (!s->conn) {
                tr_error_set(err, ECONNREFUSED, "cannot connect to %s: %s", addr, derr.message ?: "?");
                dbus_error_free(&derr);
                return -ECONNREFUSED;
        }
        dbus_connection_set_exit_on_disconnect(s->conn, FALSE);
        while (!dbus_connection_get_is_authenticated(s->conn)) {
                if (remaining_ms(s) <= 0)
                        return tr_error_set(err, ETIMEDOUT, "authenticating to %s timed out", addr);
                if (!dbus_connection_read_write(s->conn, 100))
                        return tr_error_set(err, ECONNRESET, "connection to %s closed during authentication", addr);
        }
        /* The manager's private socket is peer-to-peer; any other address is taken to be a
         * message bus (Hello, destination, a match rule for the signal). */
        if (!strstr(addr, "systemd/private")) {
                s->bus = true;
                if (!dbus_bus_register(s->conn, &derr)) {
                        tr_error_set(err, ECONNREFUSED, "Hello on %s: %s", addr, derr.message ?: "?");
                        dbus_error_free(&derr);
                        return -ECONNREFUSED;
                }
                dbus_bus_add_match(s->conn,
                                   "type='signal',interface='" SD_MANAGER "',member='JobRemoved'", NULL);
        }

        int r = prime(s, err);
        if (r < 0)
                return r;
        r = call(s, new_call(SD_PATH, SD_MANAGER, "Subscribe"), NULL, err);
        if (r < 0)
                return r;
        r = fork_helper(s, err);
        if (r < 0)
                return r;
        r = start_scope(s, err);
        if (r < 0)
                return r;
        r = wait_job_removed(s, err);
        if (r < 0)
                return r;
        r = get_control_group(s, jc->top, sizeof jc->top, err);
        if (r < 0)
                return r;
        r = move_helper(jc, s, err);
        if (r < 0)
                return r;
        jc->want_starter_leaf = true;
        jc->helper_pid = s->helper;
        return 0;
}

static void systemd_teardown(st_jobcg *jc)
{
        sd_state *s = jc->priv;
        if (!s)
                return;
        if (s->helper_wfd >= 0)
                close(s->helper_wfd);
        /* reaped by pid; the starter's stray reaper (main.c) leaves the helper to us while
         * it lives, and says so when it reaped a helper that died early */
        if (s->helper > 1 && !(jc->helper_reaped && jc->helper_pid == s->helper)) {
                int st;
                uint64_t end = tr_now_usec() + 2000000;
                while (waitpid(s->helper, &st, WNOHANG) == 0) {
                        if (tr_now_usec() > end) {
                                /* our unreaped child (pid not reusable): plain kill, so
                                 * that the blocking waitpid cannot hang on a refused
                                 * tr_safe_kill (pidfd_open failing with EMFILE...) */
                                kill(s->helper, SIGKILL);
                                waitpid(s->helper, &st, 0);
                                break;
                        }
                        usleep(2000);
                }
        }
        /* the empty scope: stopped, and its cgroup removed, by systemd.  Asked explicitly:
         * systemd stops an empty scope by itself only when told it is empty (cgroup.events
         * in the v2 tree; on pure v1 only PID 1 hears of it, from the release agent, so a
         * user manager or a host without the agent keeps the unit for ever).  "No such
         * unit" (gone already) and a late reply change nothing.  Then wait a little, in the
         * hierarchy systemd tracks units in, so that nothing of this job is left when the
         * starter exits. */
        if (jc->top[0] && jc->hs && s->conn && s->job_removed) {
                s->deadline = tr_now_usec() + 2000000;
                DBusMessage *msg = new_call(SD_PATH, SD_MANAGER, "StopUnit");
                const char *unit = s->unit, *mode = "replace";
                if (msg && dbus_message_append_args(msg, DBUS_TYPE_STRING, &unit, DBUS_TYPE_STRING, &mode,
                                                    DBUS_TYPE_INVALID))
                        call(s, msg, NULL, NULL);
                else if (msg)
                        dbus_message_unref(msg);
                int tracked = jc->hs->v2;
                for (int i = 0; tracked < 0 && i < jc->hs->n; i++)
                        if (strcmp(jc->hs->h[i].key, "name=systemd") == 0)
                                tracked = i;
                char dir[PATH_MAX];
                if (tracked >= 0 &&
                    tr_hierarchy_fs_path(&jc->hs->h[tracked], jc->top, dir, sizeof dir, NULL) >= 0) {
                        while (access(dir, F_OK) == 0 && remaining_ms(s) > 0) {
                                if (!dbus_connection_read_write(s->conn, 10))
                                        usleep(10000); /* closed: only the directory to watch */
                                DBusMessage *m;
                                while ((m = dbus_connection_pop_message(s->conn)))
                                        dbus_message_unref(m);
                        }
                }
        }
        if (s->conn) {
                dbus_connection_close(s->conn);
                dbus_connection_unref(s->conn);
        }
        free(s);
        jc->priv = NULL;
}

static int systemd_guard_drop_fd(const st_jobcg *jc)
{
        const sd_state *s = jc->priv;
        return s ? s->helper_wfd : -1;
}

const st_jobcg_ops st_jobcg_systemd_ops = {
        .name = "systemd",
        .setup = systemd_setup,
        .teardown = systemd_teardown,
        .guard_drop_fd = systemd_guard_drop_fd,
};
