/* test_audit.c - the audit trail (issue 17 §2): every changing call, over D-Bus and over
 * the classic FIFO, is logged once with the operation, the family, the job, the caller
 * (uid, pid, face) and the result; with --log journal the record reaches the journal's
 * socket with its structured fields (a socket the test binds, mounted over
 * /run/systemd/journal in procd's own mount namespace). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classic-client.h"
#include "harness.h"
#include "testsupport.h"

static char *slurp(const char *path)
{
        FILE *f = fopen(path, "r");
        if (!f)
                return strdup("");
        char *buf = NULL;
        size_t cap = 0, len = 0;
        char chunk[4096];
        size_t k;
        while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
                buf = realloc(buf, cap = len + k + 1);
                memcpy(buf + len, chunk, k);
                len += k;
        }
        fclose(f);
        if (!buf)
                return strdup("");
        buf[len] = 0;
        (void) cap;
        return buf;
}

static int count(const char *text, const char *needle)
{
        int n = 0;
        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* One line per case: the record of op on family exactly once, with its caller and result. */
static void check_once(const char *log, const char *op, pid_t family, const char *rest)
{
        char want[512];
        snprintf(want, sizeof want, "audit: %s family=%d%s", op, (int) family, rest);
        int n = count(log, want);
        if (n != 1)
                printf("\n  audit record \"%s\": %d times\n", want, n);
        CU_ASSERT_EQUAL(n, 1);
}

/* procd's stderr into a file while it is started (the child inherits it) */
static int start_logged(ph_daemon *d, const char *log, const char *const *extra, const char *const *wrapper)
{
        fflush(stderr);
        int saved = dup(2);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (saved < 0 || fd < 0)
                return -errno;
        dup2(fd, 2);
        close(fd);
        int r = ph_start(d, extra, wrapper, 10000);
        dup2(saved, 2);
        close(saved);
        return r;
}

static void test_dbus(void)
{
        char log[] = "/tmp/procd-audit-XXXXXX";
        int lfd = mkstemp(log);
        CU_ASSERT_FATAL(lfd >= 0);
        close(lfd);
        ph_daemon d;
        if (start_logged(&d, log, NULL, NULL) < 0) {
                CU_FAIL("procd did not start");
                unlink(log);
                return;
        }
        procd_client *c = ph_connect(&d);
        pid_t a = ts_sleeper(), b = ts_sleeper();
        CU_ASSERT_EQUAL(procd_register_subfamily(c, a, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_set_family_job(c, a, "job-a", 0, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_track_via_environment(c, a, "PROCD_AUDIT=1", NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_signal_process(c, a, SIGCONT, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_suspend_family(c, a, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_continue_family(c, a, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_kill_family(c, a, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, b, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_unregister_family(c, b, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_unregister_family(c, b, NULL), PROCD_E_FAMILY_NOT_FOUND); /* a refusal too */
        CU_ASSERT_EQUAL(procd_adopt_process(c, b, a, NULL) != PROCD_OK, true); /* no cgroup: refused, logged */
        procd_usage u;
        CU_ASSERT_EQUAL(procd_get_usage(c, 0, &u, NULL), PROCD_OK); /* changes nothing: not logged */
        procd_disconnect(c);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0); /* Quit */
        char *text = slurp(log);
        char me[96];
        snprintf(me, sizeof me, " caller_uid=%u caller_pid=%d via=dbus: ", (unsigned) getuid(), (int) getpid());
        char ok[128], rest[256];
        snprintf(ok, sizeof ok, "%sOK", me);
        check_once(text, "register", a, ok);
        check_once(text, "register", b, ok);
        snprintf(rest, sizeof rest, " job=job-a%s", ok);
        check_once(text, "set-job", a, rest);
        check_once(text, "track-environment", a, rest);
        snprintf(rest, sizeof rest, " job=job-a pid=%d signal=%d%s", (int) a, SIGCONT, ok);
        check_once(text, "signal", a, rest);
        snprintf(rest, sizeof rest, " job=job-a%s", ok);
        check_once(text, "suspend", a, rest);
        check_once(text, "continue", a, rest);
        check_once(text, "kill", a, rest);
        check_once(text, "unregister", b, ok);
        snprintf(rest, sizeof rest, "%sFamilyNotFound", me);
        check_once(text, "unregister", b, rest);
        snprintf(rest, sizeof rest, " job=job-a pid=%d%s", (int) b, me);
        check_once(text, "adopt", a, rest);
        check_once(text, "quit", 0, ok);
        CU_ASSERT_EQUAL(count(text, "audit: "), 12);
        CU_ASSERT_EQUAL(count(text, "audit: get"), 0);
        free(text);
        unlink(log);
        ts_kill_reap(a);
        ts_kill_reap(b);
}

static void test_classic(void)
{
        static const char *const extra[] = { "-L", "@LOG", NULL };
        if (cc_can_run("classic audit", extra) != 0)
                return;
        cc_daemon d;
        CU_ASSERT_FATAL(cc_daemon_start(&d, extra) == 0);
        char logpath[200];
        snprintf(logpath, sizeof logpath, "%s/procd.log", d.dir);
        cc_client c;
        CU_ASSERT_FATAL(cc_open(&c, d.addr, 0, 1) == 0);
        pid_t a = ts_sleeper();
        CU_ASSERT_EQUAL(cc_register(&c, a, getpid(), 60), CC_SUCCESS);
        CU_ASSERT_EQUAL(cc_signal(&c, a, SIGCONT), CC_SUCCESS);
        CU_ASSERT_EQUAL(cc_simple(&c, CC_SUSPEND_FAMILY, a), CC_SUCCESS);
        CU_ASSERT_EQUAL(cc_simple(&c, CC_CONTINUE_FAMILY, a), CC_SUCCESS);
        CU_ASSERT_EQUAL(cc_simple(&c, CC_KILL_FAMILY, a), CC_SUCCESS);
        CU_ASSERT_EQUAL(cc_simple(&c, CC_UNREGISTER_FAMILY, a), CC_SUCCESS);
        char *text = slurp(logpath); /* before QUIT: stop removes the directory */
        cc_close(&c);
        /* the FIFO's owner (this test's uid) and the pid the request names */
        char ok[128], rest[192];
        snprintf(ok, sizeof ok, " caller_uid=%u caller_pid=%d via=classic: OK", (unsigned) getuid(), (int) getpid());
        check_once(text, "register", a, ok);
        snprintf(rest, sizeof rest, " pid=%d signal=%d%s", (int) a, SIGCONT, ok);
        check_once(text, "signal", a, rest);
        check_once(text, "suspend", a, ok);
        check_once(text, "continue", a, ok);
        check_once(text, "kill", a, ok);
        check_once(text, "unregister", a, ok);
        CU_ASSERT_EQUAL(count(text, "audit: "), 6);
        free(text);
        CU_ASSERT(cc_daemon_stop(&d) >= 0);
        ts_kill_reap(a);
}

/* journald's native protocol: KEY=VALUE lines (no binary values in ours) */
static bool field_is(const char *dgram, const char *key, const char *value)
{
        char want[256];
        snprintf(want, sizeof want, "\n%s=%s\n", key, value);
        return strncmp(dgram, want + 1, strlen(want + 1)) == 0 || strstr(dgram, want) != NULL;
}

static void test_journal(void)
{
        if (!ts_need_private_mounts("journal socket in a private mount namespace"))
                return;
        if (system("command -v unshare >/dev/null 2>&1") != 0) {
                ts_skip("journal socket in a private mount namespace", "no unshare(1)");
                return;
        }
        char dir[] = "/tmp/procd-journal-XXXXXX";
        CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
        char sock[200];
        snprintf(sock, sizeof sock, "%s/socket", dir);
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
        CU_ASSERT_FATAL(fd >= 0 && bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0);
        int big = 1 << 20;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
        char script[512];
        snprintf(script, sizeof script,
                 "mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal && "
                 "mount --bind %s /run/systemd/journal && exec \"$@\"",
                 dir);
        const char *const wrapper[] = { "unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", NULL };
        const char *const extra[] = { "--log", "journal", NULL };
        ph_daemon d;
        if (ph_start(&d, extra, wrapper, 10000) < 0) {
                CU_FAIL("procd did not start in its own mount namespace");
                close(fd);
                unlink(sock);
                rmdir(dir);
                return;
        }
        procd_client *c = ph_connect(&d);
        pid_t a = ts_sleeper();
        CU_ASSERT_EQUAL(procd_register_subfamily(c, a, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_set_family_job(c, a, "job-j", 0, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_kill_family(c, a, NULL), PROCD_OK);
        procd_disconnect(c);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
        char family[16], pid[16], uid[16];
        snprintf(family, sizeof family, "%d", (int) a);
        snprintf(pid, sizeof pid, "%d", (int) getpid());
        snprintf(uid, sizeof uid, "%u", (unsigned) getuid());
        bool found = false;
        int records = 0;
        char buf[8192];
        struct pollfd p = { .fd = fd, .events = POLLIN };
        while (!found && poll(&p, 1, 2000) > 0) {
                ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
                if (n <= 0)
                        break;
                buf[n] = 0;
                records++;
                if (!field_is(buf, "PROCD_OP", "kill") || !field_is(buf, "PROCD_FAMILY", family))
                        continue;
                found = true;
                CU_ASSERT(field_is(buf, "PROCD_JOB", "job-j"));
                CU_ASSERT(field_is(buf, "PROCD_CALLER_UID", uid));
                CU_ASSERT(field_is(buf, "PROCD_CALLER_PID", pid));
                CU_ASSERT(field_is(buf, "PROCD_CALLER_VIA", "dbus"));
                CU_ASSERT(field_is(buf, "PROCD_RESULT", "OK"));
                CU_ASSERT(field_is(buf, "PRIORITY", "5"));
                CU_ASSERT_PTR_NOT_NULL(strstr(buf, "MESSAGE=audit: kill family="));
        }
        if (!found)
                printf("\n  no PROCD_OP=kill record among %d journal datagrams\n", records);
        CU_ASSERT(found);
        close(fd);
        unlink(sock);
        rmdir(dir);
        ts_kill_reap(a);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "D-Bus calls: one audit record each (stderr)", test_dbus },
                { "classic FIFO requests: one audit record each (-L FILE)", test_classic },
                { "--log journal: the fields on a journal socket", test_journal },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = { { "audit", NULL, NULL, NULL, NULL, tests }, CU_SUITE_INFO_NULL };
        return ts_run(suites);
}
