/* classic-client.c - see classic-client.h.  Every field is put at and read from its spec
 * offset with memcpy (host order), never through a struct that mirrors the wire. */
#include "classic-client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testsupport.h"

#define CC_DEFAULT_TIMEOUT_MS 30000
#define CC_MAX_REQUEST 8192
#define CC_MAX_DUMP_ITEMS 1000000

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void put32(uint8_t *b, size_t off, int32_t v) { memcpy(b + off, &v, 4); }
static void put64(uint8_t *b, size_t off, uint64_t v) { memcpy(b + off, &v, 8); }
static int32_t get32(const uint8_t *b, size_t off) { int32_t v; memcpy(&v, b + off, 4); return v; }
static int64_t get64(const uint8_t *b, size_t off) { int64_t v; memcpy(&v, b + off, 8); return v; }
static double getd(const uint8_t *b, size_t off) { double v; memcpy(&v, b + off, 8); return v; }

int cc_open(cc_client *c, const char *addr, pid_t hdr_pid, uint32_t serial)
{
        memset(c, 0, sizeof *c);
        c->watchdog_fd = -1;
        if (strlen(addr) >= sizeof c->addr)
                return -ENAMETOOLONG;
        snprintf(c->addr, sizeof c->addr, "%s", addr);
        c->hdr_pid = hdr_pid > 0 ? hdr_pid : getpid();
        c->serial = serial;
        c->timeout_ms = CC_DEFAULT_TIMEOUT_MS;
        snprintf(c->reply_path, sizeof c->reply_path, "%s.%u.%u", addr, (unsigned) c->hdr_pid, (unsigned) serial);
        char wd[256];
        snprintf(wd, sizeof wd, "%s.watchdog", addr);
        c->watchdog_fd = open(wd, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        return c->watchdog_fd < 0 ? -errno : 0;
}

void cc_close(cc_client *c)
{
        if (c->watchdog_fd >= 0)
                close(c->watchdog_fd);
        c->watchdog_fd = -1;
}

/* Wait until fd is ready for `events`; the watchdog reporting EOF while fd is not ready
 * means the daemon is gone. */
static int wait_ready(int fd, short events, int watchdog_fd, int64_t deadline)
{
        for (;;) {
                struct pollfd p[2] = { { .fd = fd, .events = events }, { .fd = watchdog_fd, .events = POLLIN } };
                int64_t left = deadline - now_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                int r = poll(p, watchdog_fd >= 0 ? 2 : 1, (int) left);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (p[0].revents)
                        return 0;
                if (r > 0 && p[1].revents)
                        return -EPIPE;
        }
}

static int write_all(int fd, const uint8_t *b, size_t len, int watchdog_fd, int timeout_ms)
{
        int64_t deadline = now_ms() + timeout_ms;
        size_t done = 0;
        while (done < len) {
                ssize_t w = write(fd, b + done, len - done);
                if (w > 0) {
                        done += (size_t) w;
                        continue;
                }
                if (w < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                int r = wait_ready(fd, POLLOUT, watchdog_fd, deadline);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int write_request(const char *addr, const uint8_t *b, size_t len, int watchdog_fd, int timeout_ms)
{
        int fd = open(addr, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, b, len, watchdog_fd, timeout_ms);
        close(fd);
        return r;
}

int cc_write_raw(const char *addr, const void *bytes, size_t len)
{
        return write_request(addr, bytes, len, -1, CC_DEFAULT_TIMEOUT_MS);
}

int cc_wait_drained(const char *addr, int timeout_ms)
{
        int fd = open(addr, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int64_t deadline = now_ms() + timeout_ms;
        int r = 0, pending = 0;
        while ((r = ioctl(fd, FIONREAD, &pending)) == 0 && pending > 0 && now_ms() < deadline)
                usleep(2000);
        r = r < 0 ? -errno : pending > 0 ? -ETIMEDOUT : 0;
        close(fd);
        return r;
}

size_t cc_frame(const cc_client *c, int32_t cmd, const void *args, size_t args_len, uint8_t *buf, size_t size)
{
        if (12 + args_len > size)
                return 0;
        put32(buf, 0, c->hdr_pid);
        put32(buf, 4, (int32_t) c->serial);
        put32(buf, 8, cmd);
        if (args_len)
                memcpy(buf + 12, args, args_len);
        return 12 + args_len;
}

/* One reply in progress: its FIFO (read end) and, until the error word arrived, the
 * dummy write end that keeps read() from seeing EOF before the daemon opens it. */
typedef struct cc_reply {
        cc_client *c;
        int fd, dummy;
        int64_t deadline;
} cc_reply;

static void reply_end(cc_reply *r)
{
        if (r->fd >= 0)
                close(r->fd);
        if (r->dummy >= 0)
                close(r->dummy);
        r->fd = r->dummy = -1;
        unlink(r->c->reply_path);
}

/* Exactly n bytes; -EPROTO on EOF before them. */
static int reply_read(cc_reply *r, void *buf, size_t n)
{
        size_t got = 0;
        while (got < n) {
                ssize_t k = read(r->fd, (uint8_t *) buf + got, n - got);
                if (k > 0) {
                        got += (size_t) k;
                        continue;
                }
                if (k == 0)
                        return -EPROTO;
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                int w = wait_ready(r->fd, POLLIN, r->c->watchdog_fd, r->deadline);
                if (w < 0)
                        return w;
        }
        return 0;
}

/* The reply must end here: EOF once the daemon closed its end, no byte more. */
static int reply_expect_eof(cc_reply *r)
{
        uint8_t b;
        for (;;) {
                ssize_t k = read(r->fd, &b, 1);
                if (k == 0)
                        return 0;
                if (k > 0)
                        return -EPROTO;
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                int w = wait_ready(r->fd, POLLIN, -1, r->deadline);
                if (w < 0)
                        return w;
        }
}

/* Make the reply FIFO as HTCondor's client does (unlink, mkfifo 0600, read end plus a
 * dummy write end), send the request, read the error word. */
static int reply_begin(cc_reply *r, cc_client *c, int32_t cmd, const void *args, size_t args_len, int32_t *err)
{
        r->c = c;
        r->fd = r->dummy = -1;
        r->deadline = now_ms() + c->timeout_ms;
        uint8_t req[CC_MAX_REQUEST];
        size_t len = cc_frame(c, cmd, args, args_len, req, sizeof req);
        if (!len)
                return -EMSGSIZE;
        unlink(c->reply_path);
        if (mkfifo(c->reply_path, 0600) < 0)
                return -errno;
        r->fd = open(c->reply_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (r->fd >= 0)
                r->dummy = open(c->reply_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (r->fd < 0 || r->dummy < 0) {
                int e = -errno;
                reply_end(r);
                return e;
        }
        int rc = write_request(c->addr, req, len, c->watchdog_fd, c->timeout_ms);
        if (rc == 0)
                rc = reply_read(r, err, 4);
        if (rc < 0) {
                reply_end(r);
                return rc;
        }
        close(r->dummy);
        r->dummy = -1;
        return 0;
}

int cc_call(cc_client *c, int32_t cmd, const void *args, size_t args_len, void *extra, size_t extra_len)
{
        cc_reply r;
        int32_t err = -1;
        int rc = reply_begin(&r, c, cmd, args, args_len, &err);
        if (rc < 0)
                return rc;
        if (err < 0) {
                reply_end(&r);
                return -EPROTO;
        }
        if (err == 0 && extra_len)
                rc = reply_read(&r, extra, extra_len);
        if (rc == 0)
                rc = reply_expect_eof(&r);
        reply_end(&r);
        return rc < 0 ? rc : err;
}

int cc_register(cc_client *c, pid_t root, pid_t watcher, int32_t max_snapshot_interval)
{
        uint8_t a[12];
        put32(a, 0, root);
        put32(a, 4, watcher);
        put32(a, 8, max_snapshot_interval);
        return cc_call(c, CC_REGISTER_SUBFAMILY, a, sizeof a, NULL, 0);
}

int cc_simple(cc_client *c, int32_t cmd, pid_t pid)
{
        uint8_t a[4];
        put32(a, 0, pid);
        return cc_call(c, cmd, a, sizeof a, NULL, 0);
}

int cc_signal(cc_client *c, pid_t pid, int32_t signo)
{
        uint8_t a[8];
        put32(a, 0, pid);
        put32(a, 4, signo);
        return cc_call(c, CC_SIGNAL_PROCESS, a, sizeof a, NULL, 0);
}

void cc_usage_decode(const uint8_t b[CC_USAGE_BYTES], cc_usage *u)
{
        u->user_cpu_sec = get64(b, 0);
        u->sys_cpu_sec = get64(b, 8);
        u->percent_cpu = getd(b, 16);
        u->max_image_kb = (uint64_t) get64(b, 24);
        u->total_image_kb = (uint64_t) get64(b, 32);
        u->rss_kb = (uint64_t) get64(b, 40);
        u->pss_kb = (uint64_t) get64(b, 48);
        u->pss_available = b[56] != 0;
        memcpy(u->pad, b + 57, 3);
        u->num_procs = get32(b, 60);
        u->block_reads = get64(b, 64);
        u->block_writes = get64(b, 72);
        u->block_read_bytes = get64(b, 80);
        u->block_write_bytes = get64(b, 88);
        u->instructions = get64(b, 96);
        u->io_wait = getd(b, 104);
}

int cc_get_usage(cc_client *c, pid_t pid, cc_usage *out)
{
        uint8_t a[4], b[CC_USAGE_BYTES];
        put32(a, 0, pid);
        int rc = cc_call(c, CC_GET_USAGE, a, sizeof a, b, sizeof b);
        if (rc == 0)
                cc_usage_decode(b, out);
        return rc;
}

int cc_snapshot(cc_client *c) { return cc_call(c, CC_TAKE_SNAPSHOT, NULL, 0, NULL, 0); }
int cc_quit(cc_client *c) { return cc_call(c, CC_QUIT, NULL, 0, NULL, 0); }

void cc_pidenvid(uint8_t out[CC_PIDENVID_BYTES], const char *const *envids, int nentries)
{
        memset(out, 0, CC_PIDENVID_BYTES);
        put32(out, 0, CC_PIDENVID_MAX);
        for (int i = 0; i < nentries && i < CC_PIDENVID_MAX; i++) {
                uint8_t *e = out + 4 + (size_t) i * (1 + CC_ENVID_SIZE);
                e[0] = 1;
                strncpy((char *) e + 1, envids[i], CC_ENVID_SIZE - 1);
        }
}

int cc_track_env(cc_client *c, pid_t pid, const uint8_t payload[CC_PIDENVID_BYTES])
{
        uint8_t a[8 + CC_PIDENVID_BYTES];
        put32(a, 0, pid);
        put32(a, 4, CC_PIDENVID_BYTES);
        memcpy(a + 8, payload, CC_PIDENVID_BYTES);
        return cc_call(c, CC_TRACK_VIA_ENVIRONMENT, a, sizeof a, NULL, 0);
}

int cc_track_login(cc_client *c, pid_t pid, const char *login)
{
        uint8_t a[8 + 256];
        size_t n = strlen(login) + 1;
        if (n > 256)
                return -ENAMETOOLONG;
        put32(a, 0, pid);
        put32(a, 4, (int32_t) n);
        memcpy(a + 8, login, n);
        return cc_call(c, CC_TRACK_VIA_LOGIN, a, 8 + n, NULL, 0);
}

int cc_track_alloc_gid(cc_client *c, pid_t pid, gid_t *gid_out)
{
        uint8_t a[4], g[4];
        put32(a, 0, pid);
        int rc = cc_call(c, CC_TRACK_VIA_ALLOCATED_GID, a, sizeof a, g, sizeof g);
        if (rc == 0)
                *gid_out = (gid_t) get32(g, 0);
        return rc;
}

int cc_track_assoc_gid(cc_client *c, pid_t pid, gid_t gid)
{
        uint8_t a[8];
        put32(a, 0, pid);
        put32(a, 4, (int32_t) gid);
        return cc_call(c, CC_TRACK_VIA_ASSOCIATED_GID, a, sizeof a, NULL, 0);
}

int cc_track_cgroup(cc_client *c, pid_t pid, const char *name)
{
        uint8_t a[12 + 1024];
        size_t n = strlen(name);
        if (n > 1024)
                return -ENAMETOOLONG;
        put32(a, 0, pid);
        put64(a, 4, n);
        memcpy(a + 12, name, n);
        return cc_call(c, CC_TRACK_VIA_CGROUP, a, 12 + n, NULL, 0);
}

void cc_dump_free(cc_dump_family *f, size_t n)
{
        for (size_t i = 0; f && i < n; i++)
                free(f[i].procs);
        free(f);
}

static int dump_read(cc_reply *r, cc_dump_family **out, size_t *n)
{
        int32_t nfam;
        int rc = reply_read(r, &nfam, 4);
        if (rc < 0)
                return rc;
        if (nfam < 0 || nfam > CC_MAX_DUMP_ITEMS)
                return -EPROTO;
        cc_dump_family *f = calloc((size_t) nfam + 1, sizeof *f);
        if (!f)
                return -ENOMEM;
        *out = f;
        *n = 0;
        for (int32_t i = 0; i < nfam; i++) {
                uint8_t h[16];
                if ((rc = reply_read(r, h, sizeof h)) < 0)
                        return rc;
                f[i].parent_root = get32(h, 0);
                f[i].root = get32(h, 4);
                f[i].watcher = get32(h, 8);
                f[i].nproc = get32(h, 12);
                *n = (size_t) i + 1;
                if (f[i].nproc < 0 || f[i].nproc > CC_MAX_DUMP_ITEMS)
                        return -EPROTO;
                f[i].procs = calloc((size_t) f[i].nproc + 1, sizeof *f[i].procs);
                if (!f[i].procs)
                        return -ENOMEM;
                for (int32_t j = 0; j < f[i].nproc; j++) {
                        uint8_t p[CC_DUMP_PROC_BYTES];
                        if ((rc = reply_read(r, p, sizeof p)) < 0)
                                return rc;
                        f[i].procs[j] = (cc_dump_proc) {
                                .pid = get32(p, 0), .ppid = get32(p, 4), .birthday = (uint64_t) get64(p, 8),
                                .user_sec = get64(p, 16), .sys_sec = get64(p, 24),
                        };
                }
        }
        return 0;
}

int cc_dump(cc_client *c, pid_t pid, cc_dump_family **out, size_t *n)
{
        *out = NULL;
        *n = 0;
        uint8_t a[4];
        put32(a, 0, pid);
        cc_reply r;
        int32_t err = -1;
        int rc = reply_begin(&r, c, CC_DUMP, a, sizeof a, &err);
        if (rc < 0)
                return rc;
        if (err == 0)
                rc = dump_read(&r, out, n);
        if (rc == 0)
                rc = reply_expect_eof(&r);
        reply_end(&r);
        if (rc < 0 || err != 0) {
                cc_dump_free(*out, *n);
                *out = NULL;
                *n = 0;
        }
        return rc < 0 ? rc : err;
}

const cc_dump_family *cc_dump_find(const cc_dump_family *f, size_t n, pid_t root)
{
        for (size_t i = 0; i < n; i++)
                if (f[i].root == root)
                        return &f[i];
        return NULL;
}

/* ---- the daemon, started as ProcFamilyProxy starts it ---- */

const char *cc_daemon_exe(void)
{
        static char path[PATH_MAX];
        const char *env = getenv("PROCD_CLASSIC_DAEMON");
        if (env && *env)
                return env;
        const char *bd = getenv("PROCD_BUILD_DIR");
        if (bd && *bd) {
                snprintf(path, sizeof path, "%s/procd/procd", bd);
                return path;
        }
        /* tests/<area>/<program> in the build tree */
        char self[PATH_MAX];
        ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
        if (k <= 0)
                return "procd";
        self[k] = '\0';
        snprintf(path, sizeof path, "%s/../../procd/procd", dirname(self));
        return path;
}

bool cc_daemon_is_condor(void)
{
        const char *e = cc_daemon_exe();
        const char *b = strrchr(e, '/');
        return strcmp(b ? b + 1 : e, "condor_procd") == 0;
}

bool cc_in_root_cgroup(void)
{
        const tr_hierarchies *hs = ts_hierarchies();
        int idx = hs->v2;
        for (int i = 0; i < hs->n && idx < 0; i++)
                if (strcmp(hs->h[i].key, "name=systemd") == 0)
                        idx = i;
        if (idx < 0)
                idx = hs->n > 0 ? 0 : -1;
        tr_pid_cgroups pc;
        if (idx < 0 || tr_pid_cgroups_read(hs, 0, &pc, NULL) < 0)
                return false;
        bool root = pc.paths[idx] && tr_cgroup_is_root(&hs->h[idx], pc.paths[idx]);
        tr_pid_cgroups_clear(&pc);
        return root;
}

bool cc_keeps_no_family_cgroups(const char *const *extra, bool placed)
{
        for (int i = 0; extra && extra[i]; i++)
                if (strstr(extra[i], "family-cgroup"))
                        return false; /* the test chose */
        return !placed && cc_in_root_cgroup();
}

void cc_daemon_cleanup_dir(cc_daemon *d)
{
        if (!d->dir[0])
                return;
        DIR *dir = opendir(d->dir);
        if (dir) {
                struct dirent *e;
                while ((e = readdir(dir)))
                        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                                unlinkat(dirfd(dir), e->d_name, 0);
                closedir(dir);
        }
        rmdir(d->dir);
        d->dir[0] = '\0';
}

int cc_daemon_start(cc_daemon *d, const char *const *extra)
{
        return cc_daemon_start_with(d, extra, NULL, NULL);
}

int cc_daemon_start_with(cc_daemon *d, const char *const *extra, void (*pre_exec)(void *arg), void *arg)
{
        memset(d, 0, sizeof *d);
        snprintf(d->dir, sizeof d->dir, "/tmp/procd-classic.XXXXXX");
        if (!mkdtemp(d->dir))
                return -errno;
        chmod(d->dir, 0755);
        snprintf(d->addr, sizeof d->addr, "%s/procd_pipe", d->dir);
        const char *exe = cc_daemon_exe();
        char exe_copy[PATH_MAX];
        snprintf(exe_copy, sizeof exe_copy, "%s", exe);
        const char *argv[48];
        int n = 0;
        argv[n++] = basename(exe_copy);
        argv[n++] = "-A";
        argv[n++] = d->addr;
        char log[sizeof d->dir + 16];
        snprintf(log, sizeof log, "%s/procd.log", d->dir);
        for (int i = 0; extra && extra[i] && n < 46; i++)
                argv[n++] = strcmp(extra[i], "@LOG") == 0 ? log : extra[i];
        if (!cc_daemon_is_condor() && cc_keeps_no_family_cgroups(extra, pre_exec != NULL))
                argv[n++] = "--no-family-cgroups";
        argv[n] = NULL;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
                int e = -errno;
                close(p[0]);
                close(p[1]);
                return e;
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR);
                dup2(null, 0);
                dup2(null, 1);
                dup2(p[1], 2);
                if (pre_exec)
                        pre_exec(arg);
                execv(exe, (char *const *) argv);
                dprintf(2, "exec %s: %s", exe, strerror(errno));
                _exit(127);
        }
        close(p[1]);
        d->pid = pid;
        /* Readiness: EOF on the daemon's stderr with nothing written (any byte is an error
         * message, as ProcFamilyProxy reads it). */
        size_t got = 0;
        int rc = 0;
        int64_t deadline = now_ms() + CC_DEFAULT_TIMEOUT_MS;
        for (;;) {
                int w = wait_ready(p[0], POLLIN, -1, deadline);
                if (w < 0) {
                        rc = w;
                        snprintf(d->errtext, sizeof d->errtext, "no readiness within %d ms", CC_DEFAULT_TIMEOUT_MS);
                        break;
                }
                ssize_t k = read(p[0], d->errtext + got, sizeof d->errtext - 1 - got);
                if (k > 0) {
                        got += (size_t) k;
                        rc = -EPROTO;
                        if (got < sizeof d->errtext - 1)
                                continue;
                }
                break;
        }
        close(p[0]);
        d->errtext[got] = '\0';
        if (rc == 0 && waitpid(pid, NULL, WNOHANG) == pid) {
                d->pid = 0;
                snprintf(d->errtext, sizeof d->errtext, "exited before readiness");
                rc = -EPROTO;
        }
        if (rc < 0) {
                ts_kill_reap(d->pid);
                d->pid = 0;
                cc_daemon_cleanup_dir(d);
        }
        return rc;
}

int cc_daemon_stop(cc_daemon *d)
{
        int st = -ESRCH;
        if (d->pid > 1) {
                cc_client c;
                if (cc_open(&c, d->addr, 0, 0) == 0) {
                        c.timeout_ms = 10000;
                        cc_quit(&c);
                }
                cc_close(&c);
                st = ts_wait(d->pid, 10000);
                if (st == -ETIMEDOUT)
                        ts_kill_reap(d->pid);
                d->pid = 0;
        }
        cc_daemon_cleanup_dir(d);
        return st;
}

int cc_can_run(const char *what, const char *const *extra)
{
        if (!ts_need_root(what))
                return TS_SKIP_EXIT;
        cc_daemon probe;
        int r = cc_daemon_start(&probe, extra);
        if (r < 0)
                return ts_skip_program(what, "%s does not serve the classic protocol: %s", cc_daemon_exe(),
                                       probe.errtext[0] ? probe.errtext : strerror(-r));
        cc_daemon_stop(&probe);
        return 0;
}
