/* test_pam_adopt.c - pam_procd_adopt.so with pamtester against a real procd and real jobs
 * (procd-starter --user U --job-id ID -- sleep), for a test user and PAM service files this
 * test creates and removes.
 *
 * The service: "account requisite pam_procd_adopt.so service=SOCK ..." then, where the
 * session must stay to be looked at, "account required pam_exec.so THIS helper hold FILE":
 * pamtester blocks in that child (forked after the adoption, so in the same cgroup) until
 * the test kills the job.  Exits 77 (skip) without root or pamtester. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testsupport.h"
#include "trackers/util.h"

static char self_exe[PATH_MAX];
static char tmpdir[PATH_MAX];
static char user[32];
static uid_t user_uid;
static bool user_made;
static char service[64];
static ph_daemon d;
static procd_client *cl;

/* ---- setup ---- */

static void remove_service(void)
{
        char p[128];
        snprintf(p, sizeof p, "/etc/pam.d/%s", service);
        unlink(p);
}

static void cleanup(void)
{
        remove_service();
        if (user_made) {
                char cmd[96];
                snprintf(cmd, sizeof cmd, "userdel %s 2>/dev/null", user);
                if (system(cmd) != 0)
                        fprintf(stderr, "could not remove the test user %s\n", user);
                user_made = false;
        }
}

/* the service file: our module with opts, then the holding child when hold */
static void write_service(const char *opts, bool hold, const char *gate)
{
        char p[128], so[PATH_MAX];
        snprintf(p, sizeof p, "/etc/pam.d/%s", service);
        snprintf(so, sizeof so, "%s/procd/pam/pam_procd_adopt.so", ts_build_dir());
        FILE *f = fopen(p, "we");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fprintf(f, "account requisite %s service=%s log_level=debug %s\n", so, d.socket, opts);
        if (hold)
                fprintf(f, "account required pam_exec.so quiet %s helper hold %s\n", self_exe, gate);
        else
                fprintf(f, "account required pam_permit.so\n");
        fclose(f);
}

/* ---- jobs ---- */

typedef struct job {
        pid_t starter;
        pid_t root;
        char name[32];
} job;

/* procd-starter --user U --job-id name -- sleep 300, registered with our procd */
static bool job_start(job *j, const char *name)
{
        snprintf(j->name, sizeof j->name, "%s", name);
        j->root = -1;
        char bin[PATH_MAX], log[PATH_MAX];
        snprintf(bin, sizeof bin, "%s/starter/procd-starter", ts_build_dir());
        snprintf(log, sizeof log, "%s/%s.log", tmpdir, name);
        fflush(NULL);
        j->starter = fork();
        if (j->starter == 0) {
                int o = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (o < 0 || in < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
                        _exit(99);
                execl(bin, bin, "--socket", d.socket, "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", name,
                      "--job-id", name, "--user", user, "--quiet", "--kill-grace", "0", "--", "/bin/sleep", "300",
                      (char *) NULL);
                _exit(98);
        }
        if (j->starter <= 1)
                return false;
        /* registered and named: ListJobs shows it */
        for (int i = 0; i < 1000; i++) {
                procd_job_info *v = NULL;
                size_t n = 0;
                if (procd_list_jobs(cl, user_uid, &v, &n, NULL) == PROCD_OK)
                        for (size_t k = 0; k < n; k++)
                                if (strcmp(v[k].job_id, name) == 0) {
                                        j->root = v[k].root_pid;
                                        CU_ASSERT_EQUAL(v[k].owner_uid, user_uid);
                                }
                free(v);
                if (j->root > 1)
                        return true;
                if (ts_wait(j->starter, 10) != -ETIMEDOUT) {
                        printf("\nstarter of %s ended early\n", name);
                        return false;
                }
        }
        return false;
}

/* KillFamily on the job; its starter then ends */
static void job_kill(job *j)
{
        if (j->root > 1)
                CU_ASSERT_EQUAL(procd_kill_family(cl, j->root, NULL), PROCD_OK);
        if (j->starter > 1 && ts_wait(j->starter, 30000) == -ETIMEDOUT)
                ts_kill_reap(j->starter);
        j->starter = j->root = -1;
}

/* ---- pamtester ---- */

static pid_t pamtester_start(const char *tag)
{
        char out[PATH_MAX];
        snprintf(out, sizeof out, "%s/%s.pam", tmpdir, tag);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (o < 0 || in < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
                        _exit(99);
#ifdef PROCD_ASAN_RUNTIME
                /* sanitizer build: the module needs the ASan runtime loaded first; pamtester's
                 * own leaks are not ours to report */
                setenv("LD_PRELOAD", PROCD_ASAN_RUNTIME, 1);
                setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
#endif
                execlp("pamtester", "pamtester", "-v", service, user, "acct_mgmt", (char *) NULL);
                _exit(98);
        }
        return pid;
}

static void pamtester_output(const char *tag, char *buf, size_t size)
{
        char out[PATH_MAX];
        snprintf(out, sizeof out, "%s/%s.pam", tmpdir, tag);
        buf[0] = '\0';
        tr_read_file_at(AT_FDCWD, out, buf, size, NULL);
}

/* run pamtester to its end; its exit code (-1 signalled, -2 timeout) and output */
static int pamtester_run(const char *tag, char *buf, size_t size)
{
        pid_t p = pamtester_start(tag);
        CU_ASSERT_FATAL(p > 1);
        int st = ts_wait(p, 30000);
        if (st == -ETIMEDOUT)
                ts_kill_reap(p);
        pamtester_output(tag, buf, size);
        int code = st == -ETIMEDOUT ? -2 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (code != 0)
                printf("\n[%s] pamtester %d: %s\n", tag, code, buf);
        return code;
}

/* the holding helper's pid, once it runs (it writes it to gate) */
static pid_t wait_hold(const char *gate, pid_t pamtester)
{
        for (int i = 0; i < 3000; i++) {
                char text[32] = "";
                if (tr_read_file_at(AT_FDCWD, gate, text, sizeof text, NULL) > 0 && strchr(text, '\n'))
                        return atoi(text);
                if (!ts_alive(pamtester))
                        return -1;
                usleep(10000);
        }
        return -1;
}

/* every cgroup line of pid names the job's leaf <base>/<name>/job */
/* The hierarchy line of /proc/PID/cgroup ("4:memory:/path") whose first two fields are
 * `key` ("4:memory:"), its path copied into out; false when there is none. */
static bool cgroup_line(const char *text, const char *key, char *out, size_t size)
{
        size_t n = strlen(key);
        for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
                if (strncmp(l, key, n) == 0) {
                        size_t len = strcspn(l + n, "\n");
                        snprintf(out, size, "%.*s", (int) len, l + n);
                        return true;
                }
        return false;
}

/* In how many of the hierarchies the job's cgroup was made in (the job root's lines that
 * name <base>/<name>/job; procd-starter makes it only in the hierarchies the job needs) pid
 * sits in it; *lines: how many there are.  -1 when a file cannot be read. */
static int job_cgroup_hits(pid_t pid, const job *j, int *lines_out)
{
        char p[64], mine[4096] = "", theirs[4096] = "", want[PATH_MAX];
        snprintf(p, sizeof p, "/proc/%d/cgroup", (int) pid);
        if (tr_read_file_at(AT_FDCWD, p, mine, sizeof mine, NULL) <= 0)
                return -1;
        snprintf(p, sizeof p, "/proc/%d/cgroup", (int) j->root);
        if (tr_read_file_at(AT_FDCWD, p, theirs, sizeof theirs, NULL) <= 0)
                return -1;
        snprintf(want, sizeof want, "%s/%s/job", ts_cgroup_base(), j->name);
        int lines = 0, hits = 0;
        for (char *save = NULL, *l = strtok_r(theirs, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char *path = strchr(strchr(l, ':') + 1, ':') + 1;
                if (strcmp(path, want) != 0)
                        continue; /* a hierarchy the job cgroup is not made in */
                char key[256], got[PATH_MAX];
                snprintf(key, sizeof key, "%.*s", (int) (path - l), l);
                lines++;
                hits += cgroup_line(mine, key, got, sizeof got) && strcmp(got, want) == 0;
        }
        *lines_out = lines;
        return hits;
}

/* adopted: in the job's cgroup wherever the job's cgroup is */
static bool in_job_cgroup(pid_t pid, const job *j)
{
        int lines = 0, hits = job_cgroup_hits(pid, j, &lines);
        if (hits != lines || lines == 0)
                printf("\npid %d: in job %s's cgroup in %d of its %d hierarchies\n", (int) pid, j->name, hits, lines);
        return lines > 0 && hits == lines;
}

/* not adopted: in the job's cgroup nowhere */
static bool outside_job_cgroup(pid_t pid, const job *j)
{
        int lines = 0;
        return job_cgroup_hits(pid, j, &lines) == 0 && lines > 0;
}

/* ---- cases ---- */

static void test_no_job(void)
{
        char out[4096];
        write_service("", false, NULL);
        CU_ASSERT_NOT_EQUAL(pamtester_run("nojob", out, sizeof out), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "no active job on this node"));
        write_service("action_no_jobs=ignore", false, NULL);
        CU_ASSERT_EQUAL(pamtester_run("nojob-ignore", out, sizeof out), 0);
}

static void test_one_job(void)
{
        job a;
        CU_ASSERT_TRUE_FATAL(job_start(&a, "pamA"));
        char gate[PATH_MAX];
        snprintf(gate, sizeof gate, "%s/one.gate", tmpdir);
        write_service("", true, gate);
        pid_t p = pamtester_start("one");
        CU_ASSERT_FATAL(p > 1);
        pid_t held = wait_hold(gate, p);
        CU_ASSERT_TRUE(held > 1);
        CU_ASSERT_TRUE(in_job_cgroup(p, &a));
        if (held > 1)
                CU_ASSERT_TRUE(in_job_cgroup(held, &a));
        /* the session counts in the job: KillFamily ends it */
        job_kill(&a);
        int st = ts_wait(p, 30000);
        CU_ASSERT_TRUE(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        if (st == -ETIMEDOUT)
                ts_kill_reap(p);
        ts_reap_orphans(2000);
        if (held > 1)
                CU_ASSERT_FALSE(ts_alive(held));
}

static void test_two_jobs(void)
{
        job b, c;
        CU_ASSERT_TRUE_FATAL(job_start(&b, "pamB"));
        CU_ASSERT_TRUE_FATAL(job_start(&c, "pamC")); /* named after B: the newest */
        char gate[PATH_MAX], out[4096];
        snprintf(gate, sizeof gate, "%s/two.gate", tmpdir);

        /* newest (the default) */
        write_service("", true, gate);
        pid_t p = pamtester_start("newest");
        CU_ASSERT_FATAL(p > 1);
        pid_t held = wait_hold(gate, p);
        CU_ASSERT_TRUE(held > 1);
        CU_ASSERT_TRUE(in_job_cgroup(p, &c));
        job_kill(&c);
        int st = ts_wait(p, 30000);
        CU_ASSERT_TRUE(st >= 0 && WIFSIGNALED(st));
        if (st == -ETIMEDOUT)
                ts_kill_reap(p);
        ts_reap_orphans(2000);

        job e;
        CU_ASSERT_TRUE_FATAL(job_start(&e, "pamE"));
        /* deny: two jobs, none chosen */
        write_service("action_unknown=deny", false, NULL);
        CU_ASSERT_NOT_EQUAL(pamtester_run("deny", out, sizeof out), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "you have 2 jobs on this node"));
        /* allow: let in, not adopted */
        write_service("action_unknown=allow", false, NULL);
        CU_ASSERT_EQUAL(pamtester_run("allow", out, sizeof out), 0);
        unlink(gate);
        write_service("action_unknown=allow", true, gate);
        p = pamtester_start("allow-hold");
        CU_ASSERT_FATAL(p > 1);
        held = wait_hold(gate, p);
        CU_ASSERT_TRUE(held > 1);
        CU_ASSERT_TRUE(outside_job_cgroup(p, &b));
        CU_ASSERT_TRUE(outside_job_cgroup(p, &e));
        ts_kill_reap(p);
        if (held > 1)
                ts_kill_reap(held); /* our orphan now (subreaper) */
        job_kill(&b);
        job_kill(&e);
        ts_reap_orphans(2000);
}

/* AdoptProcess and ListJobs for everyone are root's */
static int try_as_user(void *arg)
{
        job *j = arg;
        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(user_uid) < 0)
                return 90;
        procd_client *c = NULL;
        procd_error e = { 0 };
        if (procd_connect(d.socket, &c, &e) != PROCD_OK) {
                printf("\nconnect as uid %u: %s\n", (unsigned) user_uid, e.msg);
                return 91;
        }
        int rc = 0;
        if (procd_adopt_process(c, getpid(), j->root, &e) != PROCD_E_PERMISSION)
                rc |= 1;
        procd_job_info *v = NULL;
        size_t n = 0;
        if (procd_list_jobs(c, (uid_t) -1, &v, &n, &e) != PROCD_E_PERMISSION)
                rc |= 2;
        if (procd_list_jobs(c, user_uid, &v, &n, &e) != PROCD_OK || n != 1) /* its own: fine */
                rc |= 4;
        free(v);
        procd_disconnect(c);
        return rc;
}

static void test_root_only(void)
{
        job a;
        CU_ASSERT_TRUE_FATAL(job_start(&a, "pamR"));
        /* let the user reach the socket (procd's default mode keeps others out) */
        CU_ASSERT_EQUAL(chmod(d.dir, 0711), 0);
        CU_ASSERT_EQUAL(chmod(d.socket, 0666), 0);
        pid_t p = ts_fork(try_as_user, &a);
        int st = ts_wait(p, 20000);
        CU_ASSERT_TRUE(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st))
                printf("\nas user: %d\n", WEXITSTATUS(st));
        job_kill(&a);
}

/* ---- main ---- */

static int helper(int argc, char **argv)
{
        if (strcmp(argv[2], "hold") == 0 && argc > 3) { /* FILE: write my pid, sleep until killed */
                char buf[32];
                snprintf(buf, sizeof buf, "%d\n", (int) getpid());
                int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0 || write(fd, buf, strlen(buf)) < 0)
                        return 3;
                close(fd);
                for (int i = 0; i < 600; i++)
                        sleep(1);
                return 0;
        }
        return 2;
}

int main(int argc, char **argv)
{
        if (argc > 2 && strcmp(argv[1], "helper") == 0)
                _exit(helper(argc, argv));
        if (geteuid() != 0)
                return ts_skip_program("pam_procd_adopt", "needs root (a test user, /etc/pam.d)");
        if (system("command -v pamtester >/dev/null 2>&1") != 0)
                return ts_skip_program("pam_procd_adopt", "pamtester is not installed (apt-get install pamtester)");
        ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        if (n <= 0)
                return 2;
        self_exe[n] = '\0';
        snprintf(tmpdir, sizeof tmpdir, "/tmp/procd-pam-test.XXXXXX");
        if (!mkdtemp(tmpdir))
                return 2;
        chmod(tmpdir, 0755);
        snprintf(user, sizeof user, "procdpam%d", (int) getpid());
        snprintf(service, sizeof service, "procd-pam-test.%d", (int) getpid());
        atexit(cleanup);
        char cmd[160];
        snprintf(cmd, sizeof cmd, "useradd -M -N -g 65534 -d /nonexistent -s /usr/sbin/nologin %s", user);
        if (system(cmd) != 0)
                return ts_skip_program("pam_procd_adopt", "useradd failed");
        user_made = true;
        struct passwd *pw = getpwnam(user);
        if (!pw)
                return 2;
        user_uid = pw->pw_uid;
        if (!ts_cgroup_base() || ph_start(&d, NULL, NULL, 20000) < 0) {
                printf("could not start procd\n");
                return 1;
        }
        cl = ph_connect(&d);
        CU_TestInfo tests[] = {
                { "no job: denied with a message; action_no_jobs=ignore", test_no_job },
                { "one job: adopted in every hierarchy, killed with the job", test_one_job },
                { "two jobs: newest; action_unknown=deny / allow", test_two_jobs },
                { "AdoptProcess and ListJobs of others: root only", test_root_only },
                CU_TEST_INFO_NULL,
        };
        int rc = ts_run_suite("pam_procd_adopt", NULL, NULL, tests);
        procd_disconnect(cl);
        ph_stop(&d, 10000);
        cleanup();
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (rc == 0 && system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", tmpdir);
        return rc;
}
