/* test_procd_quota.c - per-uid connection quotas: a client running as nobody (65534) that
 * opens more connections than --max-connections-per-uid is refused beyond its quota (bare
 * sockets too, at once rather than after the 10 s authentication bound) while another uid
 * and root are served; non-root uids together never take the slots reserved for root.
 * The daemon stays up throughout and exits 0. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "procd/dbus/dbus-server.h"
#include "testsupport.h"

#define NOBODY 65534
#define OTHER_UID 65533

/* Whether GetUsage(0) is answered on c (false: refused, i.e. disconnected). */
static bool served(DBusConnection *c)
{
        if (!c)
                return false;
        DBusMessage *m = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, "GetUsage");
        dbus_int32_t z = 0;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &z, DBUS_TYPE_INVALID);
        const char *r = ph_raw_call(c, m, 5000);
        dbus_message_unref(m);
        return r == NULL;
}

static void close_raw(DBusConnection *c)
{
        if (!c)
                return;
        dbus_connection_close(c);
        dbus_connection_unref(c);
}

/* A bare socket (never authenticates) that the daemon closes within 2 s. */
static bool bare_closed_fast(const char *path)
{
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        if (fd < 0)
                return false;
        bool closed = false;
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                char b;
                closed = poll(&pfd, 1, 2000) == 1 && read(fd, &b, 1) <= 0;
        }
        close(fd);
        return closed;
}

typedef struct client_job {
        const ph_daemon *d;
        uid_t uid;
        int conns;     /* raw connections to open, each asked GetUsage */
        int bare;      /* then bare sockets expected to be closed at once */
        int result_fd; /* gets a result record */
        int hold_fd;   /* the child keeps its connections until this reads EOF */
        int parent_fds[2]; /* the parent's ends, closed in the child */
} client_job;

typedef struct client_result {
        int served, refused, bare_closed;
} client_result;

static int client_fn(void *arg)
{
        client_job *j = arg;
        close(j->parent_fds[0]);
        close(j->parent_fds[1]);
        if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(j->uid) < 0)
                return 20;
        DBusConnection **cs = calloc((size_t) j->conns, sizeof *cs);
        client_result r = { 0 };
        for (int i = 0; i < j->conns; i++) {
                cs[i] = ph_raw_connect(j->d);
                if (served(cs[i]))
                        r.served++;
                else
                        r.refused++;
        }
        for (int i = 0; i < j->bare; i++)
                r.bare_closed += bare_closed_fast(j->d->socket);
        if (write(j->result_fd, &r, sizeof r) != (ssize_t) sizeof r)
                return 21;
        char b;
        while (read(j->hold_fd, &b, 1) > 0)
                ;
        for (int i = 0; i < j->conns; i++)
                close_raw(cs[i]);
        free(cs);
        return 0;
}

typedef struct client {
        pid_t pid;
        int hold_w;
        client_result r;
        bool have_result;
} client;

/* Start a client as uid and wait for its result; it holds its connections until
 * client_release. */
static void client_start(client *cl, const ph_daemon *d, uid_t uid, int conns, int bare)
{
        int res[2], hold[2];
        memset(cl, 0, sizeof *cl);
        cl->hold_w = -1;
        CU_ASSERT_FATAL(pipe(res) == 0 && pipe(hold) == 0);
        client_job j = { .d = d, .uid = uid, .conns = conns, .bare = bare, .result_fd = res[1], .hold_fd = hold[0],
                       .parent_fds = { res[0], hold[1] } };
        cl->pid = ts_fork(client_fn, &j);
        close(res[1]);
        close(hold[0]);
        cl->hold_w = hold[1];
        CU_ASSERT_FATAL(cl->pid > 1);
        struct pollfd pfd = { .fd = res[0], .events = POLLIN };
        if (poll(&pfd, 1, 120000) == 1 && read(res[0], &cl->r, sizeof cl->r) == (ssize_t) sizeof cl->r)
                cl->have_result = true;
        close(res[0]);
        CU_ASSERT(cl->have_result);
        printf("uid %u: %d connections served, %d refused, %d bare sockets closed at once\n", (unsigned) uid,
               cl->r.served, cl->r.refused, cl->r.bare_closed);
}

static void client_release(client *cl)
{
        if (cl->hold_w >= 0)
                close(cl->hold_w);
        cl->hold_w = -1;
        if (cl->pid <= 1)
                return;
        int st = ts_wait(cl->pid, 30000);
        if (st == -ETIMEDOUT)
                ts_kill_reap(cl->pid);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        cl->pid = 0;
}

/* Root is served again once procd has seen a slot freed: it notices a closed connection
 * when its main loop runs next, which under emulation can take a while (polled, not slept). */
static bool root_served_again(const ph_daemon *d)
{
        for (int waited_ms = 0; waited_ms < 30000; waited_ms += 100) {
                if (ph_answers(d))
                        return true;
                usleep(100000);
        }
        return false;
}

static void stop_ok(ph_daemon *d)
{
        CU_ASSERT(ts_alive(d->pid));
        int st = ph_stop(d, 10000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Default quota (32): nobody gets 32 connections, more are refused (bare sockets at once);
 * another uid and root are served meanwhile; closing frees nobody's quota. */
static void test_per_uid_quota(void)
{
        if (!ts_need_root("per-uid connection quota"))
                return;
        ph_daemon d;
        /* nobody's connections never idle long enough to give way (test_procd_limits tests
         * that): opening them takes far more than 2 s under emulation */
        static const char *const extra[] = { "--group", "65534", "--evict-idle-after", "3600", NULL };
        CU_ASSERT_EQUAL_FATAL(ph_start(&d, extra, NULL, 10000), 0);
        const int q = PD_DBUS_DEFAULT_MAX_CONNECTIONS_PER_UID;

        client a;
        client_start(&a, &d, NOBODY, q + 8, 3);
        CU_ASSERT_EQUAL(a.r.served, q);
        CU_ASSERT_EQUAL(a.r.refused, 8);
        CU_ASSERT_EQUAL(a.r.bare_closed, 3);

        /* other clients are unaffected */
        client b;
        client_start(&b, &d, OTHER_UID, 3, 0);
        CU_ASSERT_EQUAL(b.r.served, 3);
        CU_ASSERT_EQUAL(b.r.refused, 0);
        client_release(&b);
        CU_ASSERT(ph_answers(&d));
        DBusConnection *rc[10];
        int rs = 0;
        for (int i = 0; i < 10; i++) {
                rc[i] = ph_raw_connect(&d);
                rs += served(rc[i]);
        }
        CU_ASSERT_EQUAL(rs, 10);
        for (int i = 0; i < 10; i++)
                close_raw(rc[i]);

        /* nobody's connections closed: its quota is free again */
        client_release(&a);
        usleep(300000);
        client a2;
        client_start(&a2, &d, NOBODY, 2, 0);
        CU_ASSERT_EQUAL(a2.r.served, 2);
        client_release(&a2);
        stop_ok(&d);
}

/* Quota raised to the maximum: non-root uids still leave the last slots to root, which
 * connects and calls while nobody holds everything it may. */
static void test_root_reserve(void)
{
        if (!ts_need_root("root's reserved connections"))
                return;
        ph_daemon d;
        static const char *const extra[] = { "--group", "65534", "--max-connections-per-uid", "256",
                                             "--evict-idle-after", "3600", NULL };
        CU_ASSERT_EQUAL_FATAL(ph_start(&d, extra, NULL, 10000), 0);
        const int pool = PD_DBUS_MAX_CONNECTIONS - PD_DBUS_ROOT_RESERVED_CONNECTIONS;

        client a;
        client_start(&a, &d, NOBODY, pool + 16, 2);
        CU_ASSERT_EQUAL(a.r.served, pool);
        CU_ASSERT_EQUAL(a.r.refused, 16);
        CU_ASSERT_EQUAL(a.r.bare_closed, 2);
        /* another non-root uid finds the shared pool full */
        client b;
        client_start(&b, &d, OTHER_UID, 1, 0);
        CU_ASSERT_EQUAL(b.r.served, 0);
        client_release(&b);

        /* root takes the reserved slots */
        enum { R = PD_DBUS_ROOT_RESERVED_CONNECTIONS };
        DBusConnection *rc[R];
        int rs = 0;
        for (int i = 0; i < R; i++) {
                rc[i] = ph_raw_connect(&d);
                rs += served(rc[i]);
        }
        CU_ASSERT_EQUAL(rs, R);
        /* every slot taken now: even root is refused; one closed, root is served again */
        CU_ASSERT(!ph_answers(&d));
        close_raw(rc[0]);
        rc[0] = NULL;
        CU_ASSERT(root_served_again(&d));
        for (int i = 0; i < R; i++)
                close_raw(rc[i]);
        client_release(&a);
        CU_ASSERT(root_served_again(&d));
        stop_ok(&d);
}

static CU_TestInfo tests[] = {
        { "per-uid connection quota", test_per_uid_quota },
        { "root's reserved connections", test_root_reserve },
        CU_TEST_INFO_NULL,
};


int main(void)
{
        return ph_main("procd connection quotas", NULL, NULL, tests);
}
