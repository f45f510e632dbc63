/* test_procctl.c - the procctl CLI: exit codes (0 ok, 1 daemon error, 2 usage / no
 * daemon), human and --json output, every command. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testsupport.h"

static ph_daemon D;
static char out[65536], errbuf[8192];

static int suite_init(void)
{
        static const char *const extra[] = { "--gid-range", "70200-70200", NULL };
        return ph_start(&D, extra, NULL, 10000) < 0;
}

static int suite_clean(void)
{
        int st = ph_stop(&D, 10000);
        return !(st >= 0 && WIFEXITED(st));
}

static void slurp(int fd, char *buf, size_t size)
{
        size_t n = 0;
        ssize_t r;
        while (n + 1 < size && (r = read(fd, buf + n, size - 1 - n)) > 0)
                n += (size_t) r;
        buf[n] = '\0';
}

/* Run procctl with the given arguments (NULL-terminated); returns its exit code. */
static int run(const char *first, ...)
{
        const char *argv[32];
        char exe[512];
        snprintf(exe, sizeof exe, "%s/procd/procctl", ts_build_dir());
        int n = 0;
        argv[n++] = exe;
        va_list ap;
        va_start(ap, first);
        for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
                argv[n++] = a;
        va_end(ap);
        argv[n] = NULL;
        int po[2], pe[2];
        if (pipe(po) < 0 || pipe(pe) < 0)
                return -1;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                dup2(po[1], 1);
                dup2(pe[1], 2);
                close(po[0]);
                close(pe[0]);
                execv(exe, (char *const *) argv);
                _exit(127);
        }
        close(po[1]);
        close(pe[1]);
        slurp(po[0], out, sizeof out);
        slurp(pe[0], errbuf, sizeof errbuf);
        close(po[0]);
        close(pe[0]);
        int st = ts_wait(pid, 20000);
        if (st < 0) {
                ts_kill_reap(pid);
                return -1;
        }
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define S D.socket

static void test_usage_errors(void)
{
        CU_ASSERT_EQUAL(run(NULL), 2);
        CU_ASSERT_EQUAL(run("--socket", S, "frobnicate", NULL), 2);
        CU_ASSERT_EQUAL(run("--socket", S, "register", NULL), 2);
        CU_ASSERT_EQUAL(run("--socket", S, "register", "abc", NULL), 2);
        CU_ASSERT_EQUAL(run("--socket", S, "signal", "123", "NOSIG", NULL), 2);
        CU_ASSERT_EQUAL(run("--socket", S, "usage", "1", "2", NULL), 2);
        CU_ASSERT_EQUAL(run("--socket", "/tmp/procd-test-nonexistent.sock", "usage", NULL), 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "procctl"));
        CU_ASSERT_EQUAL(run("--help", NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "track-cgroup"));
}

static void test_usage_json(void)
{
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "usage", NULL), 0);
        CU_ASSERT(out[0] == '{');
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"source\": \"proc\""));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"num_procs\": "));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"cpu_usec\": "));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"rss_bytes\": "));
        /* unavailable from /proc: left out */
        CU_ASSERT_PTR_NULL(strstr(out, "memory_peak_bytes"));
        CU_ASSERT_EQUAL(run("--socket", S, "usage", "0", NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "num_procs"));
        CU_ASSERT_EQUAL(run("--socket", S, "usage", "999999", NULL), 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "FamilyNotFound"));
        /* --json after the command; every field the text shows (image size: /proc only) */
        CU_ASSERT_EQUAL(run("--socket", S, "usage", "0", "--json", NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "{\"pid\": 0, \"source\": "));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"image_size_bytes\": "));
        /* errors as JSON too, same exit status */
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "usage", "999999", NULL), 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "{\"error\": \"FamilyNotFound\", \"message\": \""));
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "usage", "1", "2", NULL), 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "{\"error\": \"Usage\""));
        CU_ASSERT_EQUAL(run("--socket", "/tmp/procd-test-nonexistent.sock", "--json", "list", NULL), 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "{\"error\": \"Transport\""));
}

/* percent CPU from procd's two readings; a family whose processes all exited before any
 * scan has no CPU value (unknown is not zero); list and top columns; the states frozen
 * and killed */
static void test_list_top_percent(void)
{
        pid_t a = ts_sleeper(), gone = ts_sleeper();
        char as[16], gs[16];
        snprintf(as, sizeof as, "%d", (int) a);
        snprintf(gs, sizeof gs, "%d", (int) gone);
        CU_ASSERT_EQUAL(run("--socket", S, "register", as, NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "register", gs, NULL), 0);
        ts_kill_reap(gone);
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "usage", gs, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"num_procs\": 0"));
        CU_ASSERT_PTR_NULL(strstr(out, "cpu_usec"));
        CU_ASSERT_PTR_NULL(strstr(out, "cpu_percent"));
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "usage", as, NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "usage", as, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"cpu_percent\": "));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"cpu_percent_interval_usec\": "));
        CU_ASSERT_EQUAL(run("--socket", S, "list", NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "STATE"));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "USER"));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "AGE"));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "empty"));
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "list", NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"state\": \"running\""));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"state\": \"empty\""));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"user\": \"root\"") || getuid() != 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"age_sec\": "));
        /* a suspended family is listed frozen, in text and JSON, until it is continued */
        CU_ASSERT_EQUAL(run("--socket", S, "suspend", as, NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "list", NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "frozen"));
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "list", NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"state\": \"frozen\""));
        CU_ASSERT_EQUAL(run("--socket", S, "continue", as, NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "list", NULL), 0);
        CU_ASSERT_PTR_NULL(strstr(out, "\"state\": \"frozen\""));
        CU_ASSERT_EQUAL(run("--socket", S, "top", "-d", "0.1", "-n", "2", NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "procctl top"));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, as));
        CU_ASSERT_EQUAL(run("--socket", S, "top", "-n", "0", NULL), 2);
        /* a family procd killed is listed killed (not empty), in text and JSON */
        CU_ASSERT_EQUAL(run("--socket", S, "kill", as, NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "list", as, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, " killed "));
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "list", as, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"state\": \"killed\""));
        CU_ASSERT_EQUAL(run("--socket", S, "unregister", as, NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "unregister", gs, NULL), 0);
        ts_kill_reap(a);
}

static void test_family_commands(void)
{
        pid_t a = ts_sleeper(), w = ts_sleeper();
        char as[16], ws[16];
        snprintf(as, sizeof as, "%d", (int) a);
        snprintf(ws, sizeof ws, "%d", (int) w);
        CU_ASSERT_EQUAL(run("--socket", S, "register", as, "--watcher", ws, "--interval", "2", NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "register", as, NULL), 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "AlreadyRegistered"));
        CU_ASSERT_EQUAL(run("--socket", S, "register", as, "--interval", "0", NULL), 1);
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "track-gid", as, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"gid\": 70200"));
        CU_ASSERT_EQUAL(run("--socket", S, "track-env", as, "PROCD_CLI=1", NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "track-env", as, "bad", NULL), 1);
        CU_ASSERT_EQUAL(run("--socket", S, "track-login", as, "nobody", NULL), 0);
        if (ts_cgroup_base()) { /* a cgroup that cannot be made (a missing one is made) */
                char bad[300];
                snprintf(bad, sizeof bad, "%s/cgroup.procs/x", ts_cgroup_base());
                CU_ASSERT_EQUAL(run("--socket", S, "track-cgroup", as, bad, NULL), 1);
                CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "BadCgroup"));
        }
        CU_ASSERT_EQUAL(run("--socket", S, "list", NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, as));
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "dump", as, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"families\": [{\"root_pid\": "));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"members\": ["));
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "gid:70200"));
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "list", NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"num_procs\""));
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "usage", as, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"num_procs\": "));
        CU_ASSERT_EQUAL(run("--socket", S, "signal", as, "CONT", NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "signal", as, "SIGCONT", NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "signal", as, "18", NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "signal", "1", "TERM", NULL), 1); /* the daemon refuses pid 1 */
        CU_ASSERT_EQUAL(run("--socket", S, "suspend", as, NULL), 0);
        CU_ASSERT_EQUAL(ts_proc_state(a), 'T');
        CU_ASSERT_EQUAL(run("--socket", S, "continue", as, NULL), 0);
        CU_ASSERT_NOT_EQUAL(ts_proc_state(a), 'T');
        CU_ASSERT_EQUAL(run("--socket", S, "snapshot", NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "--json", "kill", as, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"ok\": true"));
        CU_ASSERT(ts_wait(a, 2000) >= 0);
        CU_ASSERT_EQUAL(run("--socket", S, "unregister", as, NULL), 0);
        CU_ASSERT_EQUAL(run("--socket", S, "unregister", as, NULL), 1);
        CU_ASSERT_EQUAL(run("--socket", S, "unregister", "0", NULL), 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "RootFamily"));
        ts_kill_reap(w);
}

static void test_quit(void)
{
        CU_ASSERT_EQUAL(run("--socket", S, "quit", NULL), 0);
        int st = ts_wait(D.pid, 5000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (st >= 0)
                D.pid = 0;
        CU_ASSERT_EQUAL(run("--socket", S, "usage", NULL), 2);
        rmdir(D.dir);
        /* restart so that suite_clean has a daemon to stop */
        static const char *const extra[] = { "--gid-range", "70200-70200", NULL };
        CU_ASSERT_EQUAL(ph_start(&D, extra, NULL, 10000), 0);
}

static CU_TestInfo tests[] = {
        { "usage errors and no daemon exit 2", test_usage_errors },
        { "usage --json", test_usage_json },
                { "list, top, percent CPU, unknown CPU of a family gone before a scan", test_list_top_percent },
        { "family commands", test_family_commands },
        { "quit", test_quit },
        CU_TEST_INFO_NULL,
};


int main(void)
{
        return ph_main("procctl", suite_init, suite_clean, tests);
}
