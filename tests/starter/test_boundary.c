/* test_boundary.c - the job's boundary beyond processes, through the real procd-starter:
 * device rules (--device-allow/--device-deny/--hide-gpus), and what lives in its own file
 * for the namespaces.  Jobs are this program re-executed as a helper ("helper open PATH"). */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/util.h"

static char self_exe[PATH_MAX];
static char tmpdir[PATH_MAX];

/* ---- job side ---- */

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

static void path_of(char *buf, size_t size, const char *tag, const char *ext)
{
        snprintf(buf, size, "%s/%s%s", tmpdir, tag, ext);
}

/* procd-starter --no-procd --systemd=no --cgroup-base <test base> --name tag --report ...
 * --stdout tag.out <opts...> -- <cmd...>; both lists NULL-terminated. */
static void run_job(job *j, const char *tag, const char *const *opts, const char *const *cmd)
{
        char report[PATH_MAX], out[PATH_MAX], err[PATH_MAX], bin[PATH_MAX];
        path_of(report, sizeof report, tag, ".json");
        path_of(out, sizeof out, tag, ".out");
        path_of(err, sizeof err, tag, ".err");
        snprintf(bin, sizeof bin, "%s/starter/procd-starter", ts_build_dir());
        const char *argv[64] = { bin, "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", tag,
                                 "--report", report, "--stdout", out };
        int n = 11;
        for (int i = 0; opts[i] && n < 40; i++)
                argv[n++] = opts[i];
        argv[n++] = "--";
        for (int i = 0; cmd[i] && n < 62; i++)
                argv[n++] = cmd[i];
        argv[n] = NULL;
        unlink(report);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (e < 0 || in < 0 || dup2(in, 0) < 0 || dup2(e, 2) < 0)
                        _exit(99);
                execv(argv[0], (char **) argv);
                _exit(98);
        }
        CU_ASSERT_FATAL(pid > 1);
        int st = ts_wait(pid, 60000);
        if (st == -ETIMEDOUT) {
                ts_kill_reap(pid);
                j->code = -2;
        } else {
                j->code = st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        }
        j->out[0] = j->err[0] = j->report[0] = '\0';
        tr_read_file_at(AT_FDCWD, out, j->out, sizeof j->out, NULL);
        tr_read_file_at(AT_FDCWD, err, j->err, sizeof j->err, NULL);
        tr_read_file_at(AT_FDCWD, report, j->report, sizeof j->report, NULL);
        if (j->code != 0)
                printf("\n[%s] exit %d\n--- job stdout\n%s--- stderr\n%s---\n", tag, j->code, j->out, j->err);
}

/* the job cgroup <base>/<tag> is gone from every hierarchy */
static bool job_cgroup_gone(const char *tag)
{
        const tr_hierarchies *hs = ts_hierarchies();
        char cg[PATH_MAX];
        ts_cgroup_path(cg, sizeof cg, tag);
        for (int i = 0; i < hs->n; i++) {
                char dir[PATH_MAX];
                if (tr_hierarchy_fs_path(&hs->h[i], cg, dir, sizeof dir, NULL) == 0 && access(dir, F_OK) == 0) {
                        printf("\nleft behind: %s\n", dir);
                        return false;
                }
        }
        return true;
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
        const char *cmd[] = { self_exe, "helper", "open", "/dev/null", "/dev/zero", NULL };
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
        const char *cmd[] = { self_exe, "helper", "open", "/dev/null", "/dev/zero", NULL };
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

int main(int argc, char **argv)
{
        if (argc > 2 && strcmp(argv[1], "helper") == 0) {
                int rc = helper(argc, argv);
                fflush(NULL);
                _exit(rc);
        }
        ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        if (n <= 0)
                return 2;
        self_exe[n] = '\0';
        snprintf(tmpdir, sizeof tmpdir, "/tmp/procd-boundary-test.XXXXXX");
        if (!mkdtemp(tmpdir))
                return 2;
        chmod(tmpdir, 0755);
        CU_TestInfo devices[] = {
                { "--device-deny: EPERM, rules in the report, program gone after", test_device_deny },
                { "--device-deny a + --device-allow: whitelist", test_device_whitelist },
                { "bad or inexpressible rule: 125 before the job", test_device_bad_rule },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "starter devices", NULL, NULL, NULL, NULL, devices },
                CU_SUITE_INFO_NULL,
        };
        int rc = ts_run(suites);
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (rc == 0 && system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", tmpdir);
        return rc;
}
