#include "harness.h"

#include <CUnit/CUnit.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/util.h"

int ph_main(const char *name, CU_InitializeFunc init, CU_CleanupFunc clean, CU_TestInfo *tests)
{
        if (!ts_need_root(name)) /* procd takes registrations from root only */
                return TS_SKIP_EXIT;
        signal(SIGPIPE, SIG_IGN);
        return ts_run_suite(name, init, clean, tests);
}

int ph_start(ph_daemon *d, const char *const *extra, const char *const *wrapper, int timeout_ms)
{
        memset(d, 0, sizeof *d);
        snprintf(d->dir, sizeof d->dir, "/tmp/procd-test.XXXXXX");
        if (!mkdtemp(d->dir))
                return -errno;
        chmod(d->dir, 0755);
        snprintf(d->socket, sizeof d->socket, "%s/procd.sock", d->dir);
        return ph_start_in(d, extra, wrapper, timeout_ms);
}

int ph_start_in(ph_daemon *d, const char *const *extra, const char *const *wrapper, int timeout_ms)
{
        d->pid = 0;
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
                int log = d->log[0] ? open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
                if (log >= 0 && (dup2(log, 1) < 0 || dup2(log, 2) < 0))
                        _exit(126);
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

void ph_crash(ph_daemon *d)
{
        if (d->pid > 1)
                ts_kill_reap(d->pid);
        d->pid = 0;
}

int ph_suite_stop(ph_daemon *d, procd_client **c)
{
        if (!*c)
                return 0;
        procd_disconnect(*c);
        *c = NULL;
        int st = ph_stop(d, 10000);
        return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
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
        ph_remove_dir(d);
        return st;
}

void ph_remove_dir(const ph_daemon *d)
{
        if (!d->dir[0])
                return;
        DIR *dir = opendir(d->dir);
        struct dirent *e;
        while (dir && (e = readdir(dir))) {
                if (e->d_name[0] == '.')
                        continue;
                char p[512];
                snprintf(p, sizeof p, "%s/%s", d->dir, e->d_name);
                unlink(p);
        }
        if (dir)
                closedir(dir);
        rmdir(d->dir);
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

static int spin_fn(void *arg)
{
        (void) arg;
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        volatile unsigned long x = 0;
        for (;;)
                x++;
        return 0;
}

pid_t ph_spinner(void) { return ts_fork(spin_fn, NULL); }

int ph_chain_start(int depth, pid_t *pids, int fds[2])
{
        int go[2], rep[2];
        int r = ts_pipes(go, rep);
        if (r < 0)
                return r;
        fflush(NULL);
        pid_t top = fork();
        if (top < 0)
                return -errno;
        if (top == 0) {
                close(go[1]);
                close(rep[0]);
                char c;
                if (read(go[0], &c, 1) != 1)
                        _exit(1);
                close(go[0]);
                for (int i = 0; i < depth; i++) {
                        pid_t k = fork();
                        if (k < 0)
                                _exit(1);
                        if (k > 0)
                                break; /* this generation sleeps */
                        pid_t me = getpid();
                        if (write(rep[1], &me, sizeof me) != sizeof me)
                                _exit(1);
                }
                close(rep[1]);
                for (;;)
                        pause();
        }
        close(go[0]);
        close(rep[1]);
        pids[0] = top;
        fds[0] = go[1];
        fds[1] = rep[0];
        return 0;
}

int ph_chain_grow(int depth, pid_t *pids, int fds[2])
{
        int r = write(fds[0], "g", 1) == 1 ? 0 : -EIO;
        for (int i = 1; i <= depth && r == 0; i++)
                if (read(fds[1], &pids[i], sizeof pids[i]) != sizeof pids[i])
                        r = -EIO;
        close(fds[0]);
        close(fds[1]);
        return r;
}

int ph_chain(int depth, pid_t *pids)
{
        int fds[2];
        int r = ph_chain_start(depth, pids, fds);
        return r < 0 ? r : ph_chain_grow(depth, pids, fds);
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
        pid_t pid = ts_sleeper();
        if (pid > 0 && tr_cgroup_attach(cg, pid, &err) < 0)
                fprintf(stderr, "attach %d: %s\n", (int) pid, err.msg);
        *cg_out = cg;
        return pid;
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

int ph_raw_session(const ph_daemon *d, bool begin, bool nonblock)
{
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", d->socket);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                goto fail;
        if (!begin)
                return fd;
        char uid[16], hex[40] = "", auth[96];
        snprintf(uid, sizeof uid, "%u", (unsigned) getuid());
        for (size_t i = 0; uid[i]; i++)
                snprintf(hex + 2 * i, sizeof hex - 2 * i, "%02x", (unsigned char) uid[i]);
        int n = snprintf(auth, sizeof auth, "%cAUTH EXTERNAL %s\r\n", 0, hex);
        if (write(fd, auth, (size_t) n) != n)
                goto fail;
        char line[256];
        size_t got = 0;
        while (got < sizeof line - 1 && !memchr(line, '\n', got)) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, 10000) != 1)
                        goto fail;
                ssize_t r = read(fd, line + got, sizeof line - 1 - got);
                if (r <= 0)
                        goto fail;
                got += (size_t) r;
        }
        if (got < 3 || strncmp(line, "OK ", 3) != 0 || write(fd, "BEGIN\r\n", 7) != 7)
                goto fail;
        if (nonblock)
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        return fd;
fail:
        if (fd >= 0)
                close(fd);
        return -1;
}

bool ph_answers(const ph_daemon *d)
{
        procd_client *c = NULL;
        if (procd_connect(d->socket, &c, NULL) != PROCD_OK)
                return false;
        procd_usage u;
        bool ok = procd_get_usage(c, 0, &u, NULL) == PROCD_OK;
        procd_disconnect(c);
        return ok && d->pid > 0 && kill(d->pid, 0) == 0;
}

bool ph_frozen_victim_start(ph_frozen_victim *fv, const char *name, const char *what)
{
        const tr_hierarchies *hs = ts_hierarchies();
        int fz = hs->v1_of[TR_CTRL_FREEZER];
        if (!ts_cgroup_base() || fz < 0) {
                ts_skip(what, "needs root and a v1 freezer hierarchy");
                return false;
        }
        char path[256], procs[600], pidbuf[16];
        ts_cgroup_path(path, sizeof path, name);
        CU_ASSERT_FATAL(tr_hierarchy_fs_path(&hs->h[fz], path, fv->dir, sizeof fv->dir, NULL) >= 0);
        CU_ASSERT_FATAL(mkdir(fv->dir, 0755) == 0 || errno == EEXIST);
        fv->pid = ts_sleeper();
        snprintf(pidbuf, sizeof pidbuf, "%d", (int) fv->pid);
        snprintf(procs, sizeof procs, "%s/cgroup.procs", fv->dir);
        CU_ASSERT_FATAL(tr_write_file_at(AT_FDCWD, procs, pidbuf, NULL) == 0);
        snprintf(fv->state, sizeof fv->state, "%s/freezer.state", fv->dir);
        CU_ASSERT_FATAL(tr_write_file_at(AT_FDCWD, fv->state, "FROZEN", NULL) == 0);
        return true;
}

void ph_frozen_victim_end(ph_frozen_victim *fv)
{
        tr_write_file_at(AT_FDCWD, fv->state, "THAWED", NULL);
        if (fv->pid > 1)
                kill(fv->pid, SIGCONT);
        ts_kill_reap(fv->pid);
        rmdir(fv->dir);
}
