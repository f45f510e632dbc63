/* test_boundary.c - the job's boundary beyond processes, through the real procd-starter:
 * device rules (--device-allow/--device-deny/--hide-gpus), and what lives in its own file
 * for the namespaces.  Jobs are this program re-executed as a helper ("helper open PATH"). */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "starter-run.h"
#include "testsupport.h"
#include "trackers/util.h"


/* ---- job side ---- */

/* one line "dir: a b c" in readdir order (numeric names only for /proc) */
static void list_dir(const char *dir)
{
        DIR *d = opendir(dir);
        printf("%s:", dir);
        if (d) {
                struct dirent *de;
                bool proc = strcmp(dir, "/proc") == 0;
                while ((de = readdir(d)))
                        if (de->d_name[0] != '.' && (!proc || strspn(de->d_name, "0123456789") == strlen(de->d_name)))
                                printf(" %s", de->d_name);
                closedir(d);
        }
        printf("\n");
}

static volatile sig_atomic_t got_usr1;
static void on_usr1(int sig)
{
        (void) sig;
        got_usr1 = 1;
}

static int helper(int argc, char **argv)
{
        const char *what = argv[2];
        if (strcmp(what, "open") == 0) { /* open each PATH read-write: "PATH ok" or "PATH errno N" */
                for (int i = 3; i < argc; i++) {
                        int fd = open(argv[i], O_RDWR | O_CLOEXEC);
                        if (fd >= 0) {
                                printf("%s ok\n", argv[i]);
                                close(fd);
                        } else {
                                printf("%s errno %d\n", argv[i], errno);
                        }
                }
                return 0;
        }
        if (strcmp(what, "tmp-hold") == 0 && argc > 4) { /* MARKER GATEDIR: write, ready, wait go, ls */
                char p[PATH_MAX];
                snprintf(p, sizeof p, "/tmp/%s", argv[3]);
                close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
                snprintf(p, sizeof p, "/var/tmp/%s", argv[3]);
                close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
                snprintf(p, sizeof p, "%s/ready", argv[4]);
                close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
                snprintf(p, sizeof p, "%s/go", argv[4]);
                for (int i = 0; i < 3000 && access(p, F_OK) != 0; i++)
                        usleep(10000);
                list_dir("/tmp");
                list_dir("/var/tmp");
                return 0;
        }
        if (strcmp(what, "tmp-look") == 0 && argc > 3) { /* MARKER: is another job's file visible? */
                char p[PATH_MAX];
                snprintf(p, sizeof p, "/tmp/%s", argv[3]);
                printf("/tmp marker %s\n", access(p, F_OK) == 0 ? "visible" : "absent");
                snprintf(p, sizeof p, "/var/tmp/%s", argv[3]);
                printf("/var/tmp marker %s\n", access(p, F_OK) == 0 ? "visible" : "absent");
                return 0;
        }
        if (strcmp(what, "pidns") == 0) { /* my pid and the pids /proc shows */
                printf("pid %d ppid %d\n", (int) getpid(), (int) getppid());
                list_dir("/proc");
                return 0;
        }
        if (strcmp(what, "usr1-wait") == 0 && argc > 3) { /* GATEDIR: ready, wait for SIGUSR1 */
                struct sigaction sa;
                memset(&sa, 0, sizeof sa);
                sa.sa_handler = on_usr1;
                sigaction(SIGUSR1, &sa, NULL);
                char p[PATH_MAX];
                snprintf(p, sizeof p, "%s/ready", argv[3]);
                close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
                for (int i = 0; i < 3000 && !got_usr1; i++)
                        usleep(10000);
                printf("%s\n", got_usr1 ? "usr1" : "no signal");
                return 0;
        }
        if (strcmp(what, "escape") == 0) { /* setsid child and a double-forked one, then exit */
                if (fork() == 0) {
                        setsid();
                        sleep(60);
                        _exit(0);
                }
                if (fork() == 0) {
                        setsid();
                        if (fork() == 0) {
                                sleep(60);
                                _exit(0);
                        }
                        _exit(0);
                }
                usleep(100000);
                return 0;
        }
        fprintf(stderr, "unknown helper %s\n", what);
        return 2;
}

/* ---- test side ---- */

typedef struct job {
        int code;         /* starter exit code; -1 signalled, -2 timeout */
        char out[8192];   /* the job's stdout (--stdout file) */
        char err[8192];   /* the starter's stderr */
        char report[8192];
} job;

/* Start procd-starter --no-procd --systemd=no --cgroup-base <test base> --name tag --report
 * tag.json --stdout tag.job <opts...> -- <cmd...> (both lists NULL-terminated); its pid. */
static pid_t job_start(const char *tag, const char *const *opts, const char *const *cmd)
{
        char report[PATH_MAX], out[PATH_MAX];
        sr_path(report, sizeof report, tag, ".json");
        sr_path(out, sizeof out, tag, ".job");
        const char *argv[64] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", tag,
                                 "--report", report, "--stdout", out };
        int n = 10;
        for (int i = 0; opts[i] && n < 40; i++)
                argv[n++] = opts[i];
        argv[n++] = "--";
        for (int i = 0; cmd[i] && n < 62; i++)
                argv[n++] = cmd[i];
        argv[n] = NULL;
        unlink(report);
        return sr_spawn(tag, argv);
}

static void job_finish(job *j, pid_t pid, const char *tag)
{
        j->code = sr_wait_code(pid, 60000);
        sr_read(tag, ".job", j->out, sizeof j->out);
        sr_read(tag, ".err", j->err, sizeof j->err);
        sr_read(tag, ".json", j->report, sizeof j->report);
        if (j->code != 0)
                printf("\n[%s] exit %d\n--- job stdout\n%s--- stderr\n%s---\n", tag, j->code, j->out, j->err);
}

static void run_job(job *j, const char *tag, const char *const *opts, const char *const *cmd)
{
        pid_t pid = job_start(tag, opts, cmd);
        CU_ASSERT_FATAL(pid > 1);
        job_finish(j, pid, tag);
}

/* the job cgroup <base>/<tag> is gone from every hierarchy */
static bool job_cgroup_gone(const char *tag)
{
        return !sr_cgroup_exists(tag, NULL, true);
}

static long long json_num(const char *text, const char *key)
{
        char pat[64];
        snprintf(pat, sizeof pat, "\"%s\": ", key);
        const char *p = strstr(text, pat);
        return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* ---- devices ---- */

static void test_device_deny(void)
{
        if (!ts_need_root("device rules"))
                return;
        job j;
        const char *opts[] = { "--device-deny", "c:1:3:rwm", NULL };
        const char *cmd[] = { sr_self_exe(), "helper", "open", "/dev/null", "/dev/zero", NULL };
        run_job(&j, "devdeny", opts, cmd);
        CU_ASSERT_EQUAL(j.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(j.out, "/dev/null errno 1\n")); /* EPERM */
        CU_ASSERT_PTR_NOT_NULL(strstr(j.out, "/dev/zero ok\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(j.report, "\"rules\": [\"deny c:1:3:rwm\"]"));
        CU_ASSERT_PTR_NOT_NULL(strstr(j.err, "devices ("));
        /* the program was detached and freed with the job: its id names nothing */
        long long id = json_num(j.report, "bpf_prog_id");
        if (ts_hierarchies()->v2 >= 0) {
                CU_ASSERT_TRUE(id > 0);
                int fd = bpf_prog_get_fd_by_id((uint32_t) id);
                CU_ASSERT_TRUE(fd < 0 && errno == ENOENT);
                if (fd >= 0)
                        close(fd);
        }
        CU_ASSERT_TRUE(job_cgroup_gone("devdeny"));
}

static void test_device_whitelist(void)
{
        if (!ts_need_root("device rules"))
                return;
        job j;
        const char *opts[] = { "--device-deny", "a:*:*:rwm", "--device-allow", "c:1:3:rw", NULL };
        const char *cmd[] = { sr_self_exe(), "helper", "open", "/dev/null", "/dev/zero", NULL };
        run_job(&j, "devallow", opts, cmd);
        CU_ASSERT_EQUAL(j.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(j.out, "/dev/null ok\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(j.out, "/dev/zero errno 1\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(j.report, "\"rules\": [\"deny a:*:*:rwm\", \"allow c:1:3:rw\"]"));
        CU_ASSERT_TRUE(job_cgroup_gone("devallow"));
}

/* bad rule: refused before any cgroup exists, with the rule named */
static void test_device_bad_rule(void)
{
        if (!ts_need_root("device rules"))
                return;
        job j;
        const char *opts[] = { "--device-allow", "c:1:x:rw", NULL };
        const char *cmd[] = { "/bin/true", NULL };
        run_job(&j, "devbad", opts, cmd);
        CU_ASSERT_EQUAL(j.code, 125);
        CU_ASSERT_PTR_NOT_NULL(strstr(j.err, "--device-allow 'c:1:x:rw'"));
        /* a carve-out v1 cannot express fails on hybrid/v1 hosts, before the job runs */
        if (ts_hierarchies()->v1_of[TR_CTRL_DEVICES] >= 0) {
                const char *o2[] = { "--device-deny", "c:1:*:rwm", "--device-allow", "c:1:3:rw", NULL };
                run_job(&j, "devv1", o2, cmd);
                CU_ASSERT_EQUAL(j.code, 125);
                CU_ASSERT_PTR_NOT_NULL(strstr(j.err, "devices:"));
                CU_ASSERT_PTR_NOT_NULL(strstr(j.report, "\"stage\": \"devices\""));
                CU_ASSERT_TRUE(job_cgroup_gone("devv1"));
        }
}


/* ---- namespaces ---- */

/* A directory the jobs and the test both see (the jobs' /tmp is private): under the build
 * tree.  Removed by gate_remove. */
static void gate_make(char *buf, size_t size, const char *tag)
{
        snprintf(buf, size, "%s/gate-%d-%s", ts_build_dir(), (int) getpid(), tag);
        mkdir(buf, 0755);
}

static void gate_remove(const char *dir)
{
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CU_ASSERT_EQUAL(system(cmd), 0);
}

static bool gate_wait(const char *dir, const char *name)
{
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        for (int i = 0; i < 3000; i++) {
                if (access(p, F_OK) == 0)
                        return true;
                usleep(10000);
        }
        return false;
}

static void gate_open(const char *dir, const char *name)
{
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
}

/* job A writes /tmp/M and /var/tmp/M and holds; job B, at the same time, must not see them,
 * nor the host; after A, nothing is left.  base: --private-tmp=base, or NULL for tmpfs. */
/* Below /tmp or /var/tmp, which --private-tmp replaces in the job's view. */
static bool hidden_by_private_tmp(const char *path)
{
        return strncmp(path, "/tmp/", 5) == 0 || strncmp(path, "/var/tmp/", 9) == 0;
}

static void private_tmp_case(const char *tag, const char *base)
{
        char gate[PATH_MAX], marker[64], opt[PATH_MAX + 16], host[PATH_MAX], tagb[64];
        /* the job runs this binary and meets its gates in the build tree */
        if (hidden_by_private_tmp(sr_self_exe()) || hidden_by_private_tmp(ts_build_dir())) {
                ts_skip(tag, "the build tree %s lies under /tmp or /var/tmp, which --private-tmp hides from the job",
                        ts_build_dir());
                return;
        }
        gate_make(gate, sizeof gate, tag);
        snprintf(marker, sizeof marker, "procd-marker-%d-%s", (int) getpid(), tag);
        snprintf(opt, sizeof opt, base ? "--private-tmp=%s" : "--private-tmp", base);
        snprintf(tagb, sizeof tagb, "%s-b", tag);
        const char *opts[] = { opt, NULL };
        const char *cmd_a[] = { sr_self_exe(), "helper", "tmp-hold", marker, gate, NULL };
        pid_t a = job_start(tag, opts, cmd_a);
        CU_ASSERT_FATAL(a > 1);
        CU_ASSERT_TRUE(gate_wait(gate, "ready"));
        /* A holds its files now */
        snprintf(host, sizeof host, "/tmp/%s", marker);
        CU_ASSERT_NOT_EQUAL(access(host, F_OK), 0);
        snprintf(host, sizeof host, "/var/tmp/%s", marker);
        CU_ASSERT_NOT_EQUAL(access(host, F_OK), 0);
        if (base)
                CU_ASSERT_EQUAL(sr_count_entries(base, "procd-tmp."), 1);
        job b;
        const char *cmd_b[] = { sr_self_exe(), "helper", "tmp-look", marker, NULL };
        run_job(&b, tagb, opts, cmd_b);
        CU_ASSERT_EQUAL(b.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(b.out, "/tmp marker absent\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(b.out, "/var/tmp marker absent\n"));
        gate_open(gate, "go");
        job ja;
        job_finish(&ja, a, tag);
        CU_ASSERT_EQUAL(ja.code, 0);
        char want[128];
        snprintf(want, sizeof want, "/tmp: %s\n", marker); /* its own file, alone */
        CU_ASSERT_PTR_NOT_NULL(strstr(ja.out, want));
        snprintf(want, sizeof want, "/var/tmp: %s\n", marker);
        CU_ASSERT_PTR_NOT_NULL(strstr(ja.out, want));
        if (base)
                CU_ASSERT_EQUAL(sr_count_entries(base, "procd-tmp."), 0); /* removed after */
        CU_ASSERT_TRUE(job_cgroup_gone(tag));
        gate_remove(gate);
}

static void test_private_tmp_tmpfs(void)
{
        if (ts_need_private_mounts("--private-tmp"))
                private_tmp_case("ptmpfs", NULL);
}

static void test_private_tmp_dir(void)
{
        if (!ts_need_private_mounts("--private-tmp=DIR"))
                return;
        char base[PATH_MAX];
        sr_path(base, sizeof base, "tmpbase", "");
        CU_ASSERT_EQUAL_FATAL(mkdir(base, 0755), 0);
        private_tmp_case("ptdir", base);
        rmdir(base);
}

/* What --private-tmp isolates, exactly as docs/starter.md ("What --private-tmp isolates") says.  Job A (user
 * nobody, --private-tmp=DIR) writes /tmp/<marker> and holds.  Each reader job cats it through
 * /proc/<A's pid>/root/tmp/<marker>:
 *  - another user (daemon): denied (the kernel's ptrace access check on /proc/PID/root);
 *  - the same user without --pid-namespace: READS IT (documented: not isolated);
 *  - the same user with --pid-namespace: A's pid is not in its /proc;
 *  - the same user through the host path DIR/procd-tmp.XXXXXX/tmp: denied (root's 0700). */
static bool reader_got(const char *tag, const char *const *opts, const char *path, const char *secret)
{
        const char *cmd[] = { "/bin/sh", "-c", "cat \"$0\" 2>&1 || echo unreadable", path, NULL };
        job j;
        run_job(&j, tag, opts, cmd);
        CU_ASSERT_EQUAL(j.code, 0);
        bool got = strstr(j.out, secret) != NULL;
        printf("\n[%s] %s: %s", tag, path, j.out);
        return got;
}

static void test_private_tmp_reach(void)
{
        if (!ts_need_private_mounts("--private-tmp reach"))
                return;
        if (!getpwnam("nobody") || !getpwnam("daemon")) {
                ts_skip("--private-tmp reach", "needs the users nobody and daemon");
                return;
        }
        char base[PATH_MAX], opt[PATH_MAX + 16], secret[64], cmd_a[128];
        sr_path(base, sizeof base, "reachbase", "");
        CU_ASSERT_EQUAL_FATAL(mkdir(base, 0755), 0);
        snprintf(opt, sizeof opt, "--private-tmp=%s", base);
        snprintf(secret, sizeof secret, "secret-%d", (int) getpid());
        snprintf(cmd_a, sizeof cmd_a, "echo %s > /tmp/m && exec sleep 120", secret);
        const char *opts_a[] = { "--user", "nobody", opt, NULL };
        const char *a_cmd[] = { "/bin/sh", "-c", cmd_a, NULL };
        pid_t sa = job_start("reach-a", opts_a, a_cmd);
        CU_ASSERT_FATAL(sa > 1);
        pid_t ja = sr_job_root("reach-a");
        CU_ASSERT_FATAL(ja > 1);
        for (int i = 0; i < 1000 && !sr_runs(ja, "sleep"); i++)
                usleep(10000);
        CU_ASSERT_FATAL(sr_runs(ja, "sleep")); /* /tmp/m written */
        char via_proc[64], via_host[PATH_MAX + 64] = "";
        snprintf(via_proc, sizeof via_proc, "/proc/%d/root/tmp/m", (int) ja);
        DIR *d = opendir(base);
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (strncmp(de->d_name, "procd-tmp.", 10) == 0)
                        snprintf(via_host, sizeof via_host, "%s/%s/tmp/m", base, de->d_name);
        if (d)
                closedir(d);
        CU_ASSERT_FATAL(via_host[0] != '\0');
        const char *other_user[] = { "--user", "daemon", NULL };
        const char *same_user[] = { "--user", "nobody", NULL };
        const char *same_user_pidns[] = { "--user", "nobody", "--pid-namespace", NULL };
        CU_ASSERT_FALSE(reader_got("reach-other", other_user, via_proc, secret));
        CU_ASSERT_TRUE(reader_got("reach-same", same_user, via_proc, secret));
        CU_ASSERT_FALSE(reader_got("reach-pidns", same_user_pidns, via_proc, secret));
        CU_ASSERT_FALSE(reader_got("reach-host", same_user, via_host, secret));
        kill(sa, SIGTERM);
        CU_ASSERT_EQUAL(sr_wait_code(sa, 60000), 128 + SIGTERM); /* the family got SIGTERM */
        CU_ASSERT_TRUE(job_cgroup_gone("reach-a"));
        CU_ASSERT_EQUAL(sr_count_entries(base, "procd-tmp."), 0);
        rmdir(base);
}

/* inside: the command is pid 2 under the init (pid 1) and /proc shows nothing else; the
 * report has the host pid */
static void test_pid_namespace(void)
{
        if (!ts_need_private_mounts("--pid-namespace"))
                return;
        job j;
        const char *opts[] = { "--pid-namespace", NULL };
        const char *cmd[] = { sr_self_exe(), "helper", "pidns", NULL };
        run_job(&j, "pidns", opts, cmd);
        CU_ASSERT_EQUAL(j.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(j.out, "pid 2 ppid 1\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(j.out, "/proc: 1 2\n"));
        long long pid = json_num(j.report, "pid");
        CU_ASSERT_TRUE(pid > 2 && pid != (long long) getpid());
        CU_ASSERT_TRUE(job_cgroup_gone("pidns"));
        /* ps, when installed, agrees */
        if (access("/bin/ps", X_OK) == 0) {
                const char *ps[] = { "/bin/ps", "-e", "-o", "pid=", NULL };
                run_job(&j, "pidns-ps", opts, ps);
                CU_ASSERT_EQUAL(j.code, 0);
                int lines = 0;
                for (char *c = j.out; *c; c++)
                        lines += *c == '\n';
                CU_ASSERT_EQUAL(lines, 2); /* the init and ps itself */
        }
}

/* the escapers of test_starter, inside a PID namespace: killed and reaped, nothing left */
static void test_pid_namespace_escapers(void)
{
        if (!ts_need_private_mounts("--pid-namespace"))
                return;
        job j;
        const char *opts[] = { "--pid-namespace", NULL };
        const char *cmd[] = { sr_self_exe(), "helper", "escape", NULL };
        run_job(&j, "pidesc", opts, cmd);
        CU_ASSERT_EQUAL(j.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(j.report, "\"job_cgroups_removed\": true"));
        CU_ASSERT_TRUE(job_cgroup_gone("pidesc"));
        /* exit statuses pass through the init */
        const char *fail[] = { "/bin/sh", "-c", "exit 7", NULL };
        run_job(&j, "pidexit", opts, fail);
        CU_ASSERT_EQUAL(j.code, 7);
        const char *sig[] = { "/bin/sh", "-c", "kill -KILL $$", NULL };
        run_job(&j, "pidsig", opts, sig);
        CU_ASSERT_EQUAL(j.code, 137);
        const char *missing[] = { "/nonexistent-procd-cmd", NULL };
        run_job(&j, "pidmiss", opts, missing);
        CU_ASSERT_EQUAL(j.code, 127);
}

/* a signal to the init (host pid) reaches the command */
static void test_pid_namespace_forward(void)
{
        if (!ts_need_private_mounts("--pid-namespace"))
                return;
        char gate[PATH_MAX];
        gate_make(gate, sizeof gate, "fwd");
        const char *opts[] = { "--pid-namespace", NULL };
        const char *cmd[] = { sr_self_exe(), "helper", "usr1-wait", gate, NULL };
        pid_t s = job_start("pidfwd", opts, cmd);
        CU_ASSERT_FATAL(s > 1);
        CU_ASSERT_TRUE(gate_wait(gate, "ready"));
        /* the init: the member of the job leaf whose innermost pid is 1 */
        const tr_hierarchies *hs = ts_hierarchies();
        char cg[PATH_MAX], dir[PATH_MAX], procs[4096] = "";
        ts_cgroup_path(cg, sizeof cg, "pidfwd/job");
        int idx = hs->v2 >= 0 ? hs->v2 : hs->v1_of[TR_CTRL_PIDS];
        pid_t init = -1;
        if (idx >= 0 && tr_hierarchy_fs_path(&hs->h[idx], cg, dir, sizeof dir, NULL) == 0) {
                strncat(dir, "/cgroup.procs", sizeof dir - strlen(dir) - 1);
                tr_read_file_at(AT_FDCWD, dir, procs, sizeof procs, NULL);
        }
        for (char *save = NULL, *t = strtok_r(procs, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
                char st[PATH_MAX], text[4096] = "";
                snprintf(st, sizeof st, "/proc/%s/status", t);
                tr_read_file_at(AT_FDCWD, st, text, sizeof text, NULL);
                char *ns = strstr(text, "NSpid:");
                char *nl = ns ? strchr(ns, '\n') : NULL;
                if (nl && nl - ns > 2 && strncmp(nl - 2, "\t1", 2) == 0)
                        init = atoi(t);
        }
        CU_ASSERT_TRUE(init > 1);
        if (init > 1)
                CU_ASSERT_EQUAL(kill(init, SIGUSR1), 0);
        job j;
        job_finish(&j, s, "pidfwd");
        CU_ASSERT_EQUAL(j.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(j.out, "usr1\n"));
        gate_remove(gate);
}

int main(int argc, char **argv)
{
        CU_TestInfo devices[] = {
                { "--device-deny: EPERM, rules in the report, program gone after", test_device_deny },
                { "--device-deny a + --device-allow: whitelist", test_device_whitelist },
                { "bad or inexpressible rule: 125 before the job", test_device_bad_rule },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo namespaces[] = {
                { "--private-tmp (tmpfs): A's files invisible to B and the host", test_private_tmp_tmpfs },
                { "--private-tmp=DIR: the same, the per-job dir removed after", test_private_tmp_dir },
                { "--private-tmp: other users denied, same user only with --pid-namespace", test_private_tmp_reach },
                { "--pid-namespace: pid 2 under init, own /proc, host pid in the report", test_pid_namespace },
                { "--pid-namespace: escapers killed, exit statuses", test_pid_namespace_escapers },
                { "--pid-namespace: signals to the init reach the command", test_pid_namespace_forward },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "starter devices", NULL, NULL, NULL, NULL, devices },
                { "starter namespaces", NULL, NULL, NULL, NULL, namespaces },
                CU_SUITE_INFO_NULL,
        };
        return sr_main(argc, argv, "procd-boundary-test", helper, suites);
}
