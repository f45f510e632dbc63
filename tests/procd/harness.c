#include "harness.h"

#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/util.h"

int ph_start(ph_daemon *d, const char *const *extra, const char *const *wrapper, int timeout_ms)
{
        memset(d, 0, sizeof *d);
        snprintf(d->dir, sizeof d->dir, "/tmp/procd-test.XXXXXX");
        if (!mkdtemp(d->dir))
                return -errno;
        chmod(d->dir, 0755);
        snprintf(d->socket, sizeof d->socket, "%s/procd.sock", d->dir);
        int p[2];
        if (pipe(p) < 0)
                return -errno;
        char exe[512], fdarg[16];
        snprintf(exe, sizeof exe, "%s/procd/procd", ts_build_dir());
        snprintf(fdarg, sizeof fdarg, "%d", p[1]);
        const char *argv[64];
        int n = 0;
        for (int i = 0; wrapper && wrapper[i] && n < 40; i++)
                argv[n++] = wrapper[i];
        argv[n++] = exe;
        argv[n++] = "--foreground";
        argv[n++] = "--socket";
        argv[n++] = d->socket;
        argv[n++] = "--ready-fd";
        argv[n++] = fdarg;
        for (int i = 0; extra && extra[i] && n < 62; i++)
                argv[n++] = extra[i];
        argv[n] = NULL;
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                close(p[0]);
                execvp(argv[0], (char *const *) argv);
                _exit(127);
        }
        close(p[1]);
        d->pid = pid;
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        int r = poll(&pfd, 1, timeout_ms);
        char c;
        ssize_t got = r > 0 ? read(p[0], &c, 1) : -1;
        close(p[0]);
        if (r <= 0 || got != 0 || !ts_alive(pid)) {
                fprintf(stderr, "procd did not become ready\n");
                ts_kill_reap(pid);
                d->pid = 0;
                return -EIO;
        }
        return 0;
}

int ph_stop(ph_daemon *d, int timeout_ms)
{
        if (d->pid <= 1)
                return -ESRCH;
        procd_client *c = NULL;
        if (procd_connect(d->socket, &c, NULL) == PROCD_OK) {
                procd_quit(c, NULL);
                procd_disconnect(c);
        } else {
                kill(d->pid, SIGTERM);
        }
        int st = ts_wait(d->pid, timeout_ms);
        if (st == -ETIMEDOUT) {
                ts_kill_reap(d->pid);
        }
        d->pid = 0;
        unlink(d->socket);
        rmdir(d->dir);
        return st;
}

procd_client *ph_connect(const ph_daemon *d)
{
        procd_client *c = NULL;
        procd_error e = { 0 };
        /* the client gives authentication 5 s; a daemon under valgrind in an emulated guest
         * can need more for its first connection, so a live daemon gets a few attempts */
        procd_status s = PROCD_E_TRANSPORT;
        for (int attempt = 0; attempt < 4 && s == PROCD_E_TRANSPORT && (attempt == 0 || ts_alive(d->pid)); attempt++)
                s = procd_connect(d->socket, &c, &e);
        if (s != PROCD_OK) {
                fprintf(stderr, "connect: %s\n", e.msg);
                CU_FAIL("connect to procd");
                return NULL;
        }
        return c;
}

static int sleep_fn(void *arg)
{
        (void) arg;
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
                pause();
        return 0;
}

static int spin_fn(void *arg)
{
        (void) arg;
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        volatile unsigned long x = 0;
        for (;;)
                x++;
        return 0;
}

pid_t ph_sleeper(void) { return ts_fork(sleep_fn, NULL); }
pid_t ph_spinner(void) { return ts_fork(spin_fn, NULL); }

int ph_chain(int depth, pid_t *pids)
{
        int p[2];
        if (pipe(p) < 0)
                return -errno;
        fflush(NULL);
        pid_t top = fork();
        if (top < 0)
                return -errno;
        if (top == 0) {
                close(p[0]);
                for (int i = 0; i < depth; i++) {
                        pid_t c = fork();
                        if (c < 0)
                                _exit(1);
                        if (c > 0)
                                break; /* this generation sleeps */
                        pid_t me = getpid();
                        if (write(p[1], &me, sizeof me) != sizeof me)
                                _exit(1);
                }
                close(p[1]);
                for (;;)
                        pause();
        }
        close(p[1]);
        pids[0] = top;
        for (int i = 1; i <= depth; i++)
                if (read(p[0], &pids[i], sizeof pids[i]) != sizeof pids[i]) {
                        close(p[0]);
                        return -EIO;
                }
        close(p[0]);
        return 0;
}

void ph_chain_kill(int depth, const pid_t *pids)
{
        for (int i = depth; i >= 1; i--)
                if (pids[i] > 1)
                        kill(pids[i], SIGKILL);
        ts_kill_reap(pids[0]);
}

pid_t ph_sleeper_in_cgroup(const char *name, char *path_out, size_t size, tr_cgroup **cg_out)
{
        ts_cgroup_path(path_out, size, name);
        tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        if (tr_cgroup_create(ts_hierarchies(), path_out, &cg, &err) < 0) {
                fprintf(stderr, "create %s: %s\n", path_out, err.msg);
                return -EIO;
        }
        pid_t pid = ph_sleeper();
        if (pid > 0 && tr_cgroup_attach(cg, pid, &err) < 0)
                fprintf(stderr, "attach %d: %s\n", (int) pid, err.msg);
        *cg_out = cg;
        return pid;
}

char ph_state(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        if (tr_read_file_at(AT_FDCWD, path, buf, sizeof buf, NULL) < 0)
                return '?';
        const char *p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : '?';
}

bool ph_wait_gone(pid_t pid, int timeout_ms)
{
        for (int t = 0; t < timeout_ms; t += 10) {
                if (!ts_alive(pid))
                        return true;
                usleep(10000);
        }
        return !ts_alive(pid);
}

DBusConnection *ph_raw_connect(const ph_daemon *d)
{
        char addr[256];
        snprintf(addr, sizeof addr, "unix:path=%s", d->socket);
        DBusError e;
        dbus_error_init(&e);
        DBusConnection *c = dbus_connection_open_private(addr, &e);
        if (!c) {
                dbus_error_free(&e);
                return NULL;
        }
        dbus_connection_set_exit_on_disconnect(c, FALSE);
        for (int i = 0; i < 100 && !dbus_connection_get_is_authenticated(c); i++)
                if (!dbus_connection_read_write(c, 100))
                        break;
        return c;
}

const char *ph_raw_call(DBusConnection *c, DBusMessage *m, int timeout_ms)
{
        static char name[256];
        DBusError e;
        dbus_error_init(&e);
        DBusMessage *r = dbus_connection_send_with_reply_and_block(c, m, timeout_ms, &e);
        if (r) {
                dbus_message_unref(r);
                return NULL;
        }
        snprintf(name, sizeof name, "%s", e.name ? e.name : "?");
        dbus_error_free(&e);
        return name;
}

bool ph_dump_one(procd_client *c, pid_t pid, procd_family_info *out)
{
        procd_family_info *fi = NULL;
        size_t n = 0;
        if (procd_dump(c, pid, &fi, &n, NULL) != PROCD_OK || n < 1)
                return false;
        *out = fi[0];
        out->members = NULL;
        out->n_members = 0;
        bool ok = fi[0].root_pid == pid;
        procd_family_info_free(fi, n);
        return ok;
}

bool ph_has_member(procd_client *c, pid_t fam, pid_t pid)
{
        procd_family_info *fi = NULL;
        size_t n = 0;
        bool found = false;
        if (procd_dump(c, fam, &fi, &n, NULL) != PROCD_OK)
                return false;
        for (size_t j = 0; n && j < fi[0].n_members; j++)
                found |= fi[0].members[j] == pid;
        procd_family_info_free(fi, n);
        return found;
}
