/* test_classic_server.c - procd started as HTCondor's launcher starts condor_procd (-A on a
 * temporary directory, stderr a pipe whose EOF is readiness), driven through its FIFOs with
 * a minimal raw writer of its own: commands, malformed input, the watchdog, QUIT, the
 * parent's exit, requests after the housekeeping and after the address folder was
 * replaced, and both transports on one registry. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classic-client.h"
#include "harness.h"
#include "testsupport.h"
#include "trackers/proc-read.h"
#include "trackers/util.h"

#define WAIT_MS 20000
/* valgrind under emulation (the guest lanes) needs far longer to start and answer */
#define VALGRIND_WAIT_MS 240000

typedef struct cl_daemon {
        pid_t pid;
        char dir[64];
        char addr[128];
} cl_daemon;

static cl_daemon D;
static unsigned next_serial = 1;
static int reply_wait_ms = WAIT_MS; /* bound on each reply; longer while D is under valgrind */

/* Exec procd with argv, stderr on a pipe; wait up to wait_ms for EOF on it (HTCondor's
 * readiness).  Returns the number of bytes that came on stderr before EOF (0: ready), or
 * -1 (no EOF in time included: silence is not readiness). */
static int start_wrapped(cl_daemon *d, const char *const *wrapper, const char *const *extra, char *msg,
                         size_t msgsize, int wait_ms);

static int start_classic(cl_daemon *d, const char *const *extra, char *msg, size_t msgsize)
{
        return start_wrapped(d, NULL, extra, msg, msgsize, WAIT_MS);
}

/* wrapper (may be NULL): argv put in front of procd's (valgrind ...). */
static int start_wrapped(cl_daemon *d, const char *const *wrapper, const char *const *extra, char *msg,
                         size_t msgsize, int wait_ms)
{
        snprintf(d->dir, sizeof d->dir, "/tmp/procd-classic.XXXXXX");
        if (!mkdtemp(d->dir))
                return -1;
        snprintf(d->addr, sizeof d->addr, "%s/procd_pipe", d->dir);
        char exe[512], log[128];
        snprintf(exe, sizeof exe, "%s/procd/procd", ts_build_dir());
        snprintf(log, sizeof log, "%s/ProcLog", d->dir);
        const char *argv[48];
        int n = 0;
        for (int i = 0; wrapper && wrapper[i] && n < 16; i++)
                argv[n++] = wrapper[i];
        const char *const mine[] = { n ? exe : "condor_procd", "-A", d->addr, "-L", log, "-S", "2", NULL };
        for (int i = 0; mine[i]; i++)
                argv[n++] = mine[i];
        for (int i = 0; extra && extra[i] && n < 46; i++)
                argv[n++] = extra[i];
        if (cc_keeps_no_family_cgroups(extra, false))
                argv[n++] = "--no-family-cgroups"; /* cgroups only under the run's test base */
        argv[n] = NULL;
        const char *path = wrapper && wrapper[0] ? wrapper[0] : exe;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        pid_t pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                dup2(p[1], 2);
                execv(path, (char *const *) argv);
                _exit(127);
        }
        close(p[1]);
        d->pid = pid;
        size_t got = 0;
        bool ended = false;
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        while (poll(&pfd, 1, wait_ms) > 0) {
                ssize_t r = read(p[0], msg + got, msgsize - 1 - got);
                if (r <= 0) {
                        ended = true;
                        break;
                }
                got += (size_t) r;
                if (got >= msgsize - 1) {
                        ended = true;
                        break;
                }
        }
        msg[got] = '\0';
        close(p[0]);
        if (!ended)
                fprintf(stderr, "procd gave no readiness (EOF on stderr) within %d ms\n", wait_ms);
        return ended ? (int) got : -1;
}

static void cleanup_dir(cl_daemon *d)
{
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", d->dir);
}

/* A client's reply FIFO: made (0600), opened for reading and held by a dummy writer. */
typedef struct cl_reply {
        char path[256];
        int rfd, wfd;
        unsigned serial;
} cl_reply;

static int reply_open(cl_reply *r, const char *addr)
{
        r->serial = next_serial++;
        snprintf(r->path, sizeof r->path, "%s.%u.%u", addr, (unsigned) getpid(), r->serial);
        unlink(r->path);
        if (mkfifo(r->path, 0600) < 0)
                return -errno;
        r->rfd = open(r->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        r->wfd = open(r->path, O_WRONLY | O_CLOEXEC);
        return r->rfd >= 0 && r->wfd >= 0 ? 0 : -errno;
}

static void reply_close(cl_reply *r)
{
        close(r->rfd);
        close(r->wfd);
        unlink(r->path);
}

/* One write() of header + args to the command FIFO. */
static int send_raw(const char *addr, const void *bytes, size_t n)
{
        int fd = open(addr, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t w = write(fd, bytes, n);
        close(fd);
        return w == (ssize_t) n ? 0 : -EIO;
}

static int send_req(const char *addr, const cl_reply *r, int32_t cmd, const int32_t *args, size_t nargs)
{
        int32_t buf[16] = { (int32_t) getpid(), (int32_t) r->serial, cmd };
        if (nargs)
                memcpy(buf + 3, args, nargs * sizeof *args);
        return send_raw(addr, buf, (3 + nargs) * sizeof(int32_t));
}

/* Read exactly n bytes of the reply (bounded wait). */
static int read_exact(const cl_reply *r, void *out, size_t n)
{
        size_t got = 0;
        while (got < n) {
                struct pollfd pfd = { .fd = r->rfd, .events = POLLIN };
                if (poll(&pfd, 1, reply_wait_ms) <= 0)
                        return -ETIMEDOUT;
                ssize_t k = read(r->rfd, (char *) out + got, n - got);
                if (k < 0 && errno == EAGAIN)
                        continue;
                if (k <= 0)
                        return -EIO;
                got += (size_t) k;
        }
        return 0;
}

/* A whole call: the error word (or -errno), extra reply bytes into out. */
static int call(int32_t cmd, const int32_t *args, size_t nargs, void *out, size_t outsize)
{
        cl_reply r;
        if (reply_open(&r, D.addr) < 0)
                return -EIO;
        int32_t err = -1;
        int k = send_req(D.addr, &r, cmd, args, nargs);
        if (k == 0)
                k = read_exact(&r, &err, sizeof err);
        if (k == 0 && err == 0 && outsize)
                k = read_exact(&r, out, outsize);
        reply_close(&r);
        return k < 0 ? k : err;
}

/* ProcFamilyUsage as the test reads it (its own layout, not the daemon's header). */
typedef struct usage112 {
        int64_t user, sys;
        double pct;
        uint64_t max_image, image, rss, pss;
        uint8_t pss_ok, pad[3];
        int32_t nprocs;
        int64_t breads, bwrites, brbytes, bwbytes, instr;
        double iowait;
} usage112;

static int suite_init(void)
{
        char msg[128];
        int n = start_classic(&D, NULL, msg, sizeof msg);
        if (n != 0)
                fprintf(stderr, "procd said on stderr: %s\n", msg);
        return n == 0 ? 0 : -1;
}

static int suite_clean(void)
{
        if (D.pid > 0) {
                int err = call(13, NULL, 0, NULL, 0);
                if (err != 0)
                        kill(D.pid, SIGTERM);
                ts_wait(D.pid, WAIT_MS);
                cleanup_dir(&D);
        }
        return 0;
}

static void test_fifos(void)
{
        struct stat st;
        CU_ASSERT_FATAL(lstat(D.addr, &st) == 0);
        CU_ASSERT(S_ISFIFO(st.st_mode));
        CU_ASSERT_EQUAL(st.st_mode & 07777, 0600);
        char wd[256];
        snprintf(wd, sizeof wd, "%s.watchdog", D.addr);
        CU_ASSERT_FATAL(lstat(wd, &st) == 0);
        CU_ASSERT(S_ISFIFO(st.st_mode));
        /* the watchdog never reads anything while procd lives */
        int fd = open(wd, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        CU_ASSERT_FATAL(fd >= 0);
        char b;
        CU_ASSERT(read(fd, &b, 1) < 0 && errno == EAGAIN);
        close(fd);
}

static void test_family_life(void)
{
        pid_t child = ts_sleeper();
        int32_t reg[3] = { child, (int32_t) getpid(), 15 };
        CU_ASSERT_EQUAL(call(0, reg, 3, NULL, 0), 0);
        CU_ASSERT_EQUAL(call(0, reg, 3, NULL, 0), 4); /* ALREADY_REGISTERED */
        int32_t bad1[3] = { 0, 1, 15 }, bad2[3] = { child, -1, 15 }, bad3[3] = { child, 1, -2 };
        CU_ASSERT_EQUAL(call(0, bad1, 3, NULL, 0), 1);
        CU_ASSERT_EQUAL(call(0, bad2, 3, NULL, 0), 2);
        CU_ASSERT_EQUAL(call(0, bad3, 3, NULL, 0), 3);
        int32_t pid = child;
        usage112 u;
        CU_ASSERT_EQUAL(call(9, &pid, 1, &u, sizeof u), 0);
        CU_ASSERT_EQUAL(u.nprocs, 1);
        CU_ASSERT_EQUAL(u.breads, -1);
        CU_ASSERT_EQUAL(u.instr, -1);
        CU_ASSERT_EQUAL(u.iowait, -1.0);
        /* DUMP of the family: err, nfam 1, (parent, root, watcher, nproc), records */
        cl_reply r;
        CU_ASSERT_FATAL(reply_open(&r, D.addr) == 0);
        CU_ASSERT_EQUAL(send_req(D.addr, &r, 12, &pid, 1), 0);
        int32_t w[6];
        CU_ASSERT_EQUAL_FATAL(read_exact(&r, w, sizeof w), 0);
        CU_ASSERT_EQUAL(w[0], 0);
        CU_ASSERT_EQUAL(w[1], 1);
        CU_ASSERT_EQUAL(w[3], child);
        CU_ASSERT_EQUAL(w[4], getpid());
        CU_ASSERT_EQUAL(w[5], 1);
        struct {
                int32_t pid, ppid;
                uint64_t birthday;
                int64_t ut, st;
        } rec;
        CU_ASSERT_EQUAL(read_exact(&r, &rec, sizeof rec), 0);
        CU_ASSERT_EQUAL(rec.pid, child);
        CU_ASSERT_EQUAL(rec.ppid, getpid());
        uint64_t start = 0;
        CU_ASSERT_EQUAL(tr_pid_start_ticks(child, &start), 0);
        CU_ASSERT_EQUAL(rec.birthday, start);
        reply_close(&r);
        /* SIGNAL_PROCESS signal 0 probes the family's root, as condor_procd's kill(root, 0) */
        int32_t sig0[2] = { child, 0 }, sig0root[2] = { 0, 0 };
        CU_ASSERT_EQUAL(call(5, sig0, 2, NULL, 0), 0);
        CU_ASSERT_EQUAL(call(5, sig0root, 2, NULL, 0), 0);
        /* SUSPEND, CONTINUE, KILL; the family stays registered */
        CU_ASSERT_EQUAL(call(6, &pid, 1, NULL, 0), 0);
        CU_ASSERT_EQUAL(call(7, &pid, 1, NULL, 0), 0);
        CU_ASSERT_EQUAL(call(8, &pid, 1, NULL, 0), 0);
        CU_ASSERT(ts_wait(child, WAIT_MS) >= 0);
        CU_ASSERT_EQUAL(call(10, &pid, 1, NULL, 0), 0);
        CU_ASSERT_EQUAL(call(10, &pid, 1, NULL, 0), 5); /* FAMILY_NOT_FOUND */
        int32_t zero = 0;
        CU_ASSERT_EQUAL(call(10, &zero, 1, NULL, 0), 5);
        CU_ASSERT_EQUAL(call(11, NULL, 0, NULL, 0), 0); /* TAKE_SNAPSHOT */
        /* the root family (pid 0): its usage and its DUMP */
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        CU_ASSERT(u.nprocs >= 1);
        /* without -G: commands 3 and 4 answer 12 */
        int32_t gargs[2] = { child, 5000 };
        CU_ASSERT_EQUAL(call(3, gargs, 1, NULL, 0), 12);
        CU_ASSERT_EQUAL(call(4, gargs, 2, NULL, 0), 12);
}

/* A truncated request, garbage, an unknown command and an unopened reply FIFO: each is
 * logged and answered where it can be; the next client is served. */
static void test_bad_input(void)
{
        int32_t zero = 0;
        usage112 u;
        /* GET_USAGE without its pid, then a whole request: both answered */
        cl_reply t;
        CU_ASSERT_FATAL(reply_open(&t, D.addr) == 0);
        CU_ASSERT_EQUAL(send_req(D.addr, &t, 9, NULL, 0), 0);
        CU_ASSERT_EQUAL(cc_wait_drained(D.addr, WAIT_MS), 0); /* else one run of bytes: no framing splits it */
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        int32_t err = -1;
        CU_ASSERT_EQUAL(read_exact(&t, &err, sizeof err), 0);
        CU_ASSERT_EQUAL(err, 5);
        reply_close(&t);
        /* a truncated request alone: answered once its rest did not come */
        CU_ASSERT_FATAL(reply_open(&t, D.addr) == 0);
        CU_ASSERT_EQUAL(send_req(D.addr, &t, 0, &zero, 1), 0);
        err = -1;
        CU_ASSERT_EQUAL(read_exact(&t, &err, sizeof err), 0);
        CU_ASSERT_EQUAL(err, 7);
        reply_close(&t);
        /* garbage and a 6-byte scrap */
        uint8_t junk[37];
        memset(junk, 0xff, sizeof junk);
        CU_ASSERT_EQUAL(send_raw(D.addr, junk, sizeof junk), 0);
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        CU_ASSERT_EQUAL(send_raw(D.addr, junk, 6), 0);
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        /* an unknown command: an error, not an exit */
        CU_ASSERT_EQUAL(call(99, &zero, 1, NULL, 0), 5);
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        /* a reply FIFO nobody opens, then one that does not exist */
        char dead[256];
        snprintf(dead, sizeof dead, "%s.%u.%u", D.addr, 4242u, 7u);
        CU_ASSERT_FATAL(mkfifo(dead, 0600) == 0);
        int32_t req[4] = { 4242, 7, 9, 0 };
        CU_ASSERT_EQUAL(send_raw(D.addr, req, sizeof req), 0);
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        unlink(dead);
        req[0] = 4343;
        CU_ASSERT_EQUAL(send_raw(D.addr, req, sizeof req), 0);
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        /* two requests in one write: both answered, in order */
        cl_reply r;
        CU_ASSERT_FATAL(reply_open(&r, D.addr) == 0);
        int32_t two[7] = { (int32_t) getpid(), (int32_t) r.serial, 11, (int32_t) getpid(), (int32_t) r.serial, 9, 0 };
        CU_ASSERT_EQUAL(send_raw(D.addr, two, sizeof two), 0);
        int32_t e1 = -1, e2 = -1;
        CU_ASSERT_EQUAL(read_exact(&r, &e1, 4), 0);
        CU_ASSERT_EQUAL(read_exact(&r, &e2, 4), 0);
        CU_ASSERT_EQUAL(read_exact(&r, &u, sizeof u), 0);
        CU_ASSERT_EQUAL(e1, 0);
        CU_ASSERT_EQUAL(e2, 0);
        reply_close(&r);
        /* a client that dies before reading: procd goes on */
        pid_t sp = fork();
        if (sp == 0) {
                cl_reply q;
                if (reply_open(&q, D.addr) == 0)
                        send_req(D.addr, &q, 12, &zero, 1);
                _exit(0); /* its FIFO stays, nobody reads it */
        }
        CU_ASSERT(ts_wait(sp, WAIT_MS) >= 0);
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        CU_ASSERT(ts_alive(D.pid));
}

/* condor_procd without -P ends with its parent (the root family's watcher). */
static void test_parent_exit(void)
{
        int p[2];
        CU_ASSERT_FATAL(pipe(p) == 0);
        pid_t parent = fork();
        if (parent == 0) {
                close(p[0]);
                cl_daemon c;
                char msg[128];
                int n = start_classic(&c, NULL, msg, sizeof msg);
                ssize_t w = write(p[1], &c, sizeof c);
                (void) w;
                if (n != 0)
                        _exit(1);
                pause(); /* until the test kills it */
                _exit(0);
        }
        close(p[1]);
        cl_daemon c = { 0 };
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        CU_ASSERT_FATAL(poll(&pfd, 1, WAIT_MS) > 0);
        CU_ASSERT_FATAL(read(p[0], &c, sizeof c) == (ssize_t) sizeof c);
        close(p[0]);
        CU_ASSERT_FATAL(c.pid > 1);
        ts_kill_reap(parent);
        /* procd is reparented to this test (the subreaper) and exits on its own */
        int st = ts_wait(c.pid, WAIT_MS);
        CU_ASSERT(st >= 0 && WIFEXITED(st));
        if (st < 0)
                ts_kill_reap(c.pid);
        cleanup_dir(&c);
}

/* Refused at start: an error message on stderr before EOF, exit status 1 (a bad option,
 * an address folder that cannot be opened). */
static void test_startup_error(void)
{
        cl_daemon c;
        char msg[256];
        const char *const extra[] = { "-Z", NULL };
        CU_ASSERT(start_classic(&c, extra, msg, sizeof msg) > 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "illegal option"));
        int st = ts_wait(c.pid, WAIT_MS);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1);
        cleanup_dir(&c);
        /* an address in a folder that does not exist (the last -A counts) */
        const char *const nodir[] = { "-A", "/nonexistent-procd-test/procd_pipe", NULL };
        CU_ASSERT(start_classic(&c, nodir, msg, sizeof msg) > 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "address folder /nonexistent-procd-test"));
        st = ts_wait(c.pid, WAIT_MS);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1);
        cleanup_dir(&c);
}

/* The daemon under valgrind through a session with bad input: no error, no leak. */
static void test_valgrind(void)
{
#ifdef PROCD_SANITIZE
        ts_skip("valgrind run of the classic transport", "this is the ASan+UBSan build; make test runs it");
        return;
#endif
        if (access("/usr/bin/valgrind", X_OK) != 0) {
                ts_skip("valgrind run of the classic transport", "valgrind is not installed");
                return;
        }
        char vglog[160], logopt[192], msg[256];
        cl_daemon c;
        snprintf(vglog, sizeof vglog, "/tmp/procd-classic-vg.%d.log", (int) getpid());
        snprintf(logopt, sizeof logopt, "--log-file=%s", vglog); /* not stderr: that is readiness */
        char supp[PATH_MAX + 32];
        const char *const wrapper[] = { "/usr/bin/valgrind", "--error-exitcode=9", "--leak-check=full",
                                        "--errors-for-leak-kinds=definite,indirect", logopt,
                                        ts_valgrind_suppressions(supp, sizeof supp), NULL };
        setenv("G_SLICE", "always-malloc", 1);
        /* a procd long option beside condor_procd's; valgrind on a busy machine is slow */
        const char *const extra[] = { "--kill-timeout", "120", NULL };
        CU_ASSERT_FATAL(start_wrapped(&c, wrapper, extra, msg, sizeof msg, VALGRIND_WAIT_MS) == 0);
        cl_daemon saved = D;
        D = c;
        reply_wait_ms = VALGRIND_WAIT_MS;
        pid_t child = ts_sleeper();
        int32_t reg[3] = { child, (int32_t) getpid(), 15 }, pid = child, zero = 0;
        usage112 u;
        CU_ASSERT_EQUAL(call(0, reg, 3, NULL, 0), 0);
        CU_ASSERT_EQUAL(call(9, &pid, 1, &u, sizeof u), 0);
        CU_ASSERT_EQUAL(call(12, &zero, 1, NULL, 0), 0); /* the DUMP is left unread */
        CU_ASSERT_EQUAL(call(99, &zero, 1, NULL, 0), 5);
        cl_reply t;
        CU_ASSERT_FATAL(reply_open(&t, D.addr) == 0);
        CU_ASSERT_EQUAL(send_req(D.addr, &t, 9, NULL, 0), 0); /* truncated */
        int32_t err = -1;
        CU_ASSERT_EQUAL(read_exact(&t, &err, sizeof err), 0);
        reply_close(&t);
        CU_ASSERT_EQUAL(call(8, &pid, 1, NULL, 0), 0);
        CU_ASSERT(ts_wait(child, WAIT_MS) >= 0);
        CU_ASSERT_EQUAL(call(10, &pid, 1, NULL, 0), 0);
        CU_ASSERT_EQUAL(call(13, NULL, 0, NULL, 0), 0);
        int st = ts_wait(c.pid, VALGRIND_WAIT_MS);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (!(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
                fprintf(stderr, "procd under valgrind: status %d, see %s\n", st, vglog);
                if (st < 0)
                        ts_kill_reap(c.pid);
        } else {
                unlink(vglog);
        }
        D = saved;
        reply_wait_ms = WAIT_MS;
        cleanup_dir(&c);
}

/* Wait until d's housekeeping has run once more: it touches the watchdog FIFO, which
 * nothing else writes.  0, or -errno (-ETIMEDOUT). */
static int wait_housekeeping(const cl_daemon *d)
{
        char wd[160];
        snprintf(wd, sizeof wd, "%s.watchdog", d->addr);
        struct stat a, b;
        if (stat(wd, &a) < 0)
                return -errno;
        for (int waited = 0; waited < WAIT_MS; waited += 20) {
                ts_msleep(20);
                if (stat(wd, &b) < 0)
                        return -errno;
                if (b.st_mtim.tv_sec != a.st_mtim.tv_sec || b.st_mtim.tv_nsec != a.st_mtim.tv_nsec)
                        return 0;
        }
        return -ETIMEDOUT;
}

/* Lines of a file that hold needle; -1 when it cannot be read. */
static int count_lines(const char *path, const char *needle)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        char line[1024];
        int n = 0;
        while (fgets(line, sizeof line, f))
                n += strstr(line, needle) != NULL;
        fclose(f);
        return n;
}

/* Reply FIFOs are opened under the address folder's fd kept from start: after the
 * housekeeping (every 2 s here: -S) requests are still answered. */
static void test_after_housekeeping(void)
{
        int32_t zero = 0;
        usage112 u;
        CU_ASSERT_EQUAL_FATAL(wait_housekeeping(&D), 0);
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        CU_ASSERT(ts_alive(D.pid));
}

/* The address folder replaced by another of the same name, the FIFOs in it: condor_procd
 * resolves each reply FIFO's path, so clients making them in the new folder are answered
 * once the housekeeping has reopened it (said once in the log).  The new folder is made
 * beside and swapped in by one rename (RENAME_EXCHANGE), the FIFOs hard-linked into it
 * first: a moment without them at the address would have the housekeeping report procd
 * unreachable, and procd exit. */
static void test_address_folder_replaced(void)
{
        cl_daemon c;
        char msg[128], away[96], link_cmd[160], link_wd[160], from[160], log[128];
        const char *const extra[] = { "-S", "1", NULL }; /* housekeeping every second */
        CU_ASSERT_FATAL(start_classic(&c, extra, msg, sizeof msg) == 0);
        cl_daemon saved = D;
        D = c;
        int32_t zero = 0;
        usage112 u;
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        snprintf(away, sizeof away, "%s.away", c.dir);
        snprintf(link_cmd, sizeof link_cmd, "%s/procd_pipe", away);
        snprintf(link_wd, sizeof link_wd, "%s/procd_pipe.watchdog", away);
        snprintf(from, sizeof from, "%s.watchdog", c.addr);
        CU_ASSERT_FATAL(mkdir(away, 0700) == 0);
        CU_ASSERT_FATAL(link(c.addr, link_cmd) == 0);
        CU_ASSERT_FATAL(link(from, link_wd) == 0);
        struct stat before, after;
        CU_ASSERT_FATAL(stat(c.dir, &before) == 0);
        /* c.dir is the new folder from here, away the one procd opened (with its log) */
        CU_ASSERT_FATAL(renameat2(AT_FDCWD, away, AT_FDCWD, c.dir, RENAME_EXCHANGE) == 0);
        CU_ASSERT_FATAL(stat(c.dir, &after) == 0);
        CU_ASSERT(before.st_ino != after.st_ino);
        CU_ASSERT_EQUAL(wait_housekeeping(&c), 0);
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        CU_ASSERT_EQUAL(wait_housekeeping(&c), 0); /* a second run: nothing to reopen */
        CU_ASSERT_EQUAL(call(9, &zero, 1, &u, sizeof u), 0);
        snprintf(log, sizeof log, "%s/ProcLog", away);
        CU_ASSERT_EQUAL(count_lines(log, "was replaced: reopened"), 1);
        CU_ASSERT(ts_alive(c.pid));
        CU_ASSERT_EQUAL(call(13, NULL, 0, NULL, 0), 0);
        int st = ts_wait(c.pid, WAIT_MS);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (st < 0)
                ts_kill_reap(c.pid);
        D = saved;
        cleanup_dir(&c);
        snprintf(c.dir, sizeof c.dir, "%s", away);
        cleanup_dir(&c);
}

/* -A and --socket: one registry behind both transports. */
static void test_both_transports(void)
{
        cl_daemon c;
        char sock[160], msg[128];
        snprintf(sock, sizeof sock, "/tmp/procd-classic-both.%d.sock", (int) getpid());
        const char *const extra[] = { "--socket", sock, "-C", "65534", NULL };
        CU_ASSERT_FATAL(start_classic(&c, extra, msg, sizeof msg) == 0);
        struct stat st;
        CU_ASSERT(lstat(c.addr, &st) == 0 && st.st_uid == 65534); /* -C */
        pid_t child = ts_sleeper();
        cl_daemon saved = D;
        D = c;
        int32_t reg[3] = { child, 0, 15 };
        CU_ASSERT_EQUAL(call(0, reg, 3, NULL, 0), 0);
        procd_client *pc = NULL;
        procd_error e = { 0 };
        CU_ASSERT_EQUAL(procd_connect(sock, &pc, &e), PROCD_OK);
        if (pc) {
                procd_usage u;
                CU_ASSERT_EQUAL(procd_get_usage(pc, child, &u, &e), PROCD_OK);
                CU_ASSERT(u.num_procs.available && u.num_procs.value == 1);
                CU_ASSERT_EQUAL(procd_unregister_family(pc, child, &e), PROCD_OK);
                procd_disconnect(pc);
        }
        int32_t pid = child;
        CU_ASSERT_EQUAL(call(9, &pid, 1, NULL, 0), 5); /* gone for the FIFO side too */
        CU_ASSERT_EQUAL(call(13, NULL, 0, NULL, 0), 0);
        int s = ts_wait(c.pid, WAIT_MS);
        CU_ASSERT(s >= 0 && WIFEXITED(s) && WEXITSTATUS(s) == 0);
        CU_ASSERT(lstat(c.addr, &st) < 0 && errno == ENOENT); /* QUIT removes the FIFOs */
        D = saved;
        ts_kill_reap(child);
        unlink(sock);
        cleanup_dir(&c);
}

int main(void)
{
        if (geteuid() != 0)
                return ts_skip_program("test_classic_server", "needs root (the daemon chowns FIFOs, tracks any uid)");
        CU_TestInfo tests[] = {
                { "FIFOs and watchdog", test_fifos },
                { "a family's life", test_family_life },
                { "bad input, the daemon serves on", test_bad_input },
                { "answers after the housekeeping", test_after_housekeeping },
                { "the address folder replaced", test_address_folder_replaced },
                { "exit with the parent", test_parent_exit },
                { "startup error on stderr", test_startup_error },
                { "both transports, -C", test_both_transports },
                { "under valgrind", test_valgrind },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("classic transport", suite_init, suite_clean, tests);
}
