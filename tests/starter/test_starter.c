/* Integration tests of procd-starter: the real binary, real cgroups under the run's test base
 * (ts_cgroup_base), and a real systemd --user manager in a private mount namespace.
 *
 * The jobs are mostly this test program itself re-executed as a helper ("helper alloc N",
 * "helper burn MS", ...), so that no test depends on a shell's quoting. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "starter-run.h"
#include "testsupport.h"
#include "trackers/util.h"
#include "procd/client.h"


/* ---------------------------------------------------------------- helpers (job side) */

static void write_str(const char *path, const char *s)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
                ssize_t w = write(fd, s, strlen(s));
                (void) w;
                close(fd);
        }
}

static const char *term_file;
static void on_term(int sig)
{
        (void) sig;
        if (term_file)
                write_str(term_file, "TERM\n");
}

static int helper(int argc, char **argv)
{
        const char *what = argv[2];
        if (strcmp(what, "alloc") == 0 && argc > 3) { /* touch N MiB */
                size_t mb = (size_t) atol(argv[3]);
                for (size_t i = 0; i < mb; i++) {
                        char *p = malloc(1 << 20);
                        if (!p)
                                return 3;
                        memset(p, (int) i + 1, 1 << 20);
                }
                return 0;
        }
        if (strcmp(what, "burn") == 0 && argc > 3) { /* busy loop for MS of wall time */
                uint64_t end = tr_now_usec() + (uint64_t) atol(argv[3]) * 1000;
                volatile unsigned long x = 0;
                while (tr_now_usec() < end)
                        for (int i = 0; i < 10000; i++)
                                x++;
                return 0;
        }
        if (strcmp(what, "forkn") == 0 && argc > 3) { /* fork N sleepers; 0 if a fork failed */
                int n = atoi(argv[3]), ok = 0, failed = 0, eagain = 0;
                for (int i = 0; i < n; i++) {
                        pid_t p = fork();
                        if (p == 0) {
                                sleep(30);
                                _exit(0);
                        }
                        if (p > 0)
                                ok++;
                        else {
                                failed++;
                                eagain += errno == EAGAIN;
                        }
                }
                printf("forked %d failed %d eagain %d\n", ok, failed, eagain);
                fflush(stdout);
                return failed > 0 && eagain == failed ? 0 : 1;
        }
        if (strcmp(what, "escape") == 0 && argc > 3) { /* setsid child + double fork, pids to FILE */
                const char *file = argv[3];
                pid_t a = fork();
                if (a == 0) {
                        setsid();
                        char buf[32];
                        snprintf(buf, sizeof buf, "%d\n", (int) getpid());
                        write_str(file, buf);
                        sleep(60);
                        _exit(0);
                }
                pid_t b = fork();
                if (b == 0) {
                        setsid();
                        if (fork() == 0) {
                                char buf[32];
                                snprintf(buf, sizeof buf, "%d\n", (int) getpid());
                                write_str(file, buf);
                                sleep(60);
                                _exit(0);
                        }
                        _exit(0);
                }
                waitpid(b, NULL, 0);
                for (int i = 0; i < 200; i++) { /* until both wrote */
                        char text[256] = "";
                        tr_read_file_at(AT_FDCWD, file, text, sizeof text, NULL);
                        int lines = 0;
                        for (char *c = text; *c; c++)
                                lines += *c == '\n';
                        if (lines >= 2)
                                break;
                        usleep(10000);
                }
                return 0; /* the root exits; the escapers are left behind */
        }
        if (strcmp(what, "ignore-term") == 0 && argc > 3) { /* log SIGTERM to FILE, keep running */
                term_file = argv[3];
                struct sigaction sa = { .sa_handler = on_term };
                sigaction(SIGTERM, &sa, NULL);
                char ready[PATH_MAX];
                snprintf(ready, sizeof ready, "%s.ready", term_file);
                write_str(ready, "ready\n");
                for (;;)
                        pause();
        }
        if (strcmp(what, "spin") == 0 && argc > 3) { /* ready file, then busy loop for ever */
                write_str(argv[3], "ready\n");
                volatile unsigned long x = 0;
                for (;;)
                        x++;
        }
        if (strcmp(what, "scopefds") == 0) { /* the fds of the systemd scope's parked helper */
                /* the job sits in <scope>/job; the helper in <scope>/starter (the starter,
                 * our parent, is not in the scope, but skip it anyway) */
                char text[4096] = "", scope[PATH_MAX] = "";
                tr_read_file_at(AT_FDCWD, "/proc/self/cgroup", text, sizeof text, NULL);
                /* systemd's hierarchy: cgroup2, or name=systemd on pure v1 */
                const char *key = "0::", *l = strstr(text, key);
                if (!l)
                        l = strstr(text, key = ":name=systemd:");
                if (!l)
                        return 3;
                l += strlen(key);
                snprintf(scope, sizeof scope, "%.*s", (int) strcspn(l, "\n"), l);
                char *slash = strrchr(scope, '/');
                if (!slash)
                        return 3;
                snprintf(slash, sizeof scope - (size_t) (slash - scope), "/starter");
                const tr_hierarchies *hs = ts_hierarchies();
                int sd = hs->v2;
                for (int i = 0; sd < 0 && i < hs->n; i++)
                        if (strcmp(hs->h[i].key, "name=systemd") == 0)
                                sd = i;
                char dir[PATH_MAX], procs[8192] = "";
                if (sd < 0 || tr_hierarchy_fs_path(&hs->h[sd], scope, dir, sizeof dir, NULL) < 0)
                        return 4;
                strncat(dir, "/cgroup.procs", sizeof dir - strlen(dir) - 1);
                if (tr_read_file_at(AT_FDCWD, dir, procs, sizeof procs, NULL) < 0)
                        return 5;
                int helpers = 0;
                for (char *save = NULL, *t = strtok_r(procs, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
                        int pid = atoi(t);
                        if (pid <= 1 || pid == (int) getppid())
                                continue;
                        helpers++;
                        char fdd[64];
                        snprintf(fdd, sizeof fdd, "/proc/%d/fd", pid);
                        DIR *d = opendir(fdd);
                        if (!d)
                                return 6;
                        struct dirent *de;
                        while ((de = readdir(d))) {
                                if (de->d_name[0] == '.')
                                        continue;
                                char lp[128], target[PATH_MAX] = "";
                                snprintf(lp, sizeof lp, "%s/%s", fdd, de->d_name);
                                ssize_t n = readlink(lp, target, sizeof target - 1);
                                target[n > 0 ? n : 0] = '\0';
                                printf("helperfd %d %s %s\n", pid, de->d_name, target);
                        }
                        closedir(d);
                }
                printf("helpers %d\n", helpers);
                return 0;
        }
        fprintf(stderr, "unknown helper %s\n", what);
        return 2;
}

/* ---------------------------------------------------------------- test side */

typedef struct run {
        int code;       /* exit code of the starter, -1 when signalled, -2 on timeout */
        char out[16384];
        char err[16384];
        uint64_t elapsed_usec;
} run;

static void finish(pid_t pid, const char *tag, run *r, int timeout_ms, uint64_t t0)
{
        r->code = sr_wait_code(pid, timeout_ms);
        r->elapsed_usec = tr_now_usec() - t0;
        sr_read(tag, ".out", r->out, sizeof r->out);
        sr_read(tag, ".err", r->err, sizeof r->err);
        if (r->code != 0)
                printf("\n[%s] exit %d\n--- stdout\n%s--- stderr\n%s---\n", tag, r->code, r->out, r->err);
}

/* Run procd-starter with the common cgroupfs options (--no-procd --systemd=no, base under
 * the test base, --name tag, --report tmp/tag.json) followed by `args`. */
static void run_starter(run *r, const char *tag, int timeout_ms, const char *const *args)
{
        char report[PATH_MAX];
        sr_path(report, sizeof report, tag, ".json");
        unlink(report);
        const char *all[96] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", tag,
                                "--report", report };
        int n = 8;
        for (int i = 0; args[i] && n < 95; i++)
                all[n++] = args[i];
        all[n] = NULL;
        uint64_t t0 = tr_now_usec();
        pid_t pid = sr_spawn(tag, all);
        CU_ASSERT_FATAL(pid > 1);
        finish(pid, tag, r, timeout_ms, t0);
}

/* the job cgroup <base>/<tag> is gone from every hierarchy */
static bool cg_gone(const char *tag)
{
        return !sr_cgroup_exists(tag, NULL, true);
}

/* "key": number from the report; false when missing */
static bool report_num(const char *tag, const char *key, long long *out)
{
        char path[PATH_MAX], text[32768], pat[128];
        sr_path(path, sizeof path, tag, ".json");
        if (tr_read_file_at(AT_FDCWD, path, text, sizeof text, NULL) < 0)
                return false;
        snprintf(pat, sizeof pat, "\"%s\": ", key);
        char *p = strstr(text, pat);
        if (!p)
                return false;
        p += strlen(pat);
        if (strncmp(p, "true", 4) == 0)
                *out = 1;
        else if (strncmp(p, "false", 5) == 0)
                *out = 0;
        else
                *out = strtoll(p, NULL, 10);
        return true;
}

static bool report_has(const char *tag, const char *needle)
{
        char path[PATH_MAX], text[32768];
        sr_path(path, sizeof path, tag, ".json");
        if (tr_read_file_at(AT_FDCWD, path, text, sizeof text, NULL) < 0)
                return false;
        return strstr(text, needle) != NULL;
}

static bool wait_file(const char *path, int timeout_ms)
{
        for (int i = 0; i < timeout_ms / 10; i++) {
                if (access(path, F_OK) == 0)
                        return true;
                usleep(10000);
        }
        return false;
}

/* every line of /proc/self/cgroup output names `want` */
/* Whether the job cgroup is made in the hierarchy of this /proc/PID/cgroup line's
 * controller list: v2 (empty list), and v1 memory, blkio and pids (what the report reads
 * and v2 does not give on a hybrid host).  cpu, cpuset, devices, name=systemd... only for
 * a limit or device rule there (none in these tests; v2 gives cpu.stat and cgroup.freeze
 * on the kernels tested, so not cpuacct or freezer either): the job keeps the starter's. */
static bool job_hierarchy(const char *ctrls)
{
        if (!*ctrls || ts_hierarchies()->v2 < 0) /* without v2: every hierarchy */
                return true;
        char copy[256];
        snprintf(copy, sizeof copy, "%s", ctrls);
        char *save = NULL;
        for (char *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save))
                if (strcmp(c, "memory") == 0 || strcmp(c, "blkio") == 0 || strcmp(c, "pids") == 0)
                        return true;
        return false;
}

/* How many hierarchies job_hierarchy() names on this host. */
static int job_hierarchies(void)
{
        const tr_hierarchies *hs = ts_hierarchies();
        int n = 0;
        for (int i = 0; i < hs->n; i++)
                n += hs->v2 < 0 || hs->h[i].is_v2 ||
                     (hs->h[i].controllers & (1u << TR_CTRL_MEMORY | 1u << TR_CTRL_BLKIO | 1u << TR_CTRL_PIDS));
        return n;
}

static int check_cgroup_lines(const char *text, const char *want, int *lines)
{
        int bad = 0;
        *lines = 0;
        char copy[16384];
        snprintf(copy, sizeof copy, "%s", text);
        char *save = NULL;
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char *c1 = strchr(l, ':');
                char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c2 = '\0';
                bool needed = job_hierarchy(c1 + 1);
                *c2 = ':';
                if (!needed)
                        continue;
                (*lines)++;
                if (strcmp(c2 + 1, want) != 0) {
                        printf("\nnot in the job cgroup: %s (want %s)\n", l, want);
                        bad++;
                }
        }
        return bad;
}

#define NEED_ROOT()                                 \
        do {                                        \
                if (!ts_need_root(__func__))        \
                        return;                     \
        } while (0)

/* ---------------------------------------------------------------- tests */

static void atomicity(const char *tag, const char *launch)
{
        run r;
        const char *args[] = { launch, "--", "/bin/cat", "/proc/self/cgroup", NULL };
        run_starter(&r, tag, 30000, args);
        CU_ASSERT_EQUAL(r.code, 0);
        char want[PATH_MAX], cg[PATH_MAX];
        snprintf(want, sizeof want, "%s/job", ts_cgroup_path(cg, sizeof cg, tag));
        int lines;
        CU_ASSERT_EQUAL(check_cgroup_lines(r.out, want, &lines), 0);
        CU_ASSERT_EQUAL(lines, job_hierarchies());
        CU_ASSERT_TRUE(cg_gone(tag));
}

static void test_atomicity_clone3(void)
{
        NEED_ROOT();
        atomicity("atom-clone3", "--launch=clone3");
}

/* The lines of /proc/PID/cgroup (text) whose controller list holds `ctrl`: each must name
 * want.  The number of such lines, or -1 when one names another cgroup. */
static int ctrl_lines_in(const char *text, const char *ctrl, const char *want)
{
        char copy[16384];
        snprintf(copy, sizeof copy, "%s", text);
        int n = 0;
        char *save = NULL;
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char *c1 = strchr(l, ':');
                char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c2 = '\0';
                char *save2 = NULL;
                bool has = false;
                for (char *c = strtok_r(c1 + 1, ",", &save2); c; c = strtok_r(NULL, ",", &save2))
                        has = has || strcmp(c, ctrl) == 0;
                if (!has)
                        continue;
                if (strcmp(c2 + 1, want) != 0) {
                        printf("\n%s: %s, want %s\n", ctrl, c2 + 1, want);
                        return -1;
                }
                n++;
        }
        return n;
}

/* Each controller's lines in the /proc/self/cgroup output `out` of job `tag`: in the job's
 * cgroup (in_job 1) or in another (-1); none without such a v1 hierarchy. */
typedef struct {
        const char *name;
        tr_controller c;
        int in_job;
} ctrl_want;

static void check_ctrls(const char *out, const char *tag, const ctrl_want *w, size_t n)
{
        const tr_hierarchies *hs = ts_hierarchies();
        char want[PATH_MAX], cg[PATH_MAX];
        snprintf(want, sizeof want, "%s/job", ts_cgroup_path(cg, sizeof cg, tag));
        for (size_t k = 0; k < n; k++)
                CU_ASSERT_EQUAL(ctrl_lines_in(out, w[k].name, want), hs->v1_of[w[k].c] < 0 ? 0 : w[k].in_job);
}

/* The job cgroup is made in the v1 hierarchies of the limits asked (cpu, cpuset), not
 * only in those every job gets: the job runs there and the limits land. */
static void test_limit_hierarchies(void)
{
        NEED_ROOT();
        run r;
        const char *args[] = { "--cpus", "0.5", "--cpuset-cpus", "0", "--", "/bin/cat", "/proc/self/cgroup", NULL };
        run_starter(&r, "limhier", 30000, args);
        CU_ASSERT_EQUAL(r.code, 0);
        static const ctrl_want w[] = { { "cpu", TR_CTRL_CPU, 1 }, { "cpuset", TR_CTRL_CPUSET, 1 } };
        check_ctrls(r.out, "limhier", w, TR_ARRAY_SIZE(w));
        CU_ASSERT_TRUE(cg_gone("limhier"));
}

/* --no-procd --quiet without --report: nothing reads the job's io or pids figures, so on a
 * hybrid host its cgroup is made in v2 and v1 memory only (memory's OOM kill count sets the
 * exit code); without v2, in every hierarchy as always.  atomicity() checks the reporting
 * case: memory, blkio and pids. */
static void test_quiet_hierarchies(void)
{
        NEED_ROOT();
        const char *all[] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "quiethier",
                              "--quiet", "--", "/bin/cat", "/proc/self/cgroup", NULL };
        run r;
        finish(sr_spawn("quiethier", all), "quiethier", &r, 30000, tr_now_usec());
        CU_ASSERT_EQUAL(r.code, 0);
        int other = ts_hierarchies()->v2 < 0 ? 1 : -1; /* -1: the line names the starter's */
        const ctrl_want w[] = { { "memory", TR_CTRL_MEMORY, 1 }, { "blkio", TR_CTRL_BLKIO, other },
                                { "pids", TR_CTRL_PIDS, other } };
        check_ctrls(r.out, "quiethier", w, TR_ARRAY_SIZE(w));
        CU_ASSERT_TRUE(cg_gone("quiethier"));
}

static void test_atomicity_fork(void)
{
        NEED_ROOT();
        atomicity("atom-fork", "--launch=fork");
}

static void test_report_and_status(void)
{
        NEED_ROOT();
        run r;
        const char *args[] = { "--", "/bin/sh", "-c", "echo out; exit 3", NULL };
        run_starter(&r, "report", 30000, args);
        CU_ASSERT_EQUAL(r.code, 3);
        long long v;
        const char *keys[] = { "source", "num_procs", "cpu_user_usec", "cpu_system_usec", "cpu_usec",
                               "memory_peak_bytes", "oom_kills", "pids_peak",
                               "exit_status", "exit_signal", "oom_killed", "wall_usec", "job_cgroups_removed",
                               "cgroup_base", "start_time", "start_usec", "end_time", "end_usec", "user",
                               "job_name", "host", "tracker_reason" };
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
                char needle[64];
                snprintf(needle, sizeof needle, "\"%s\": ", keys[i]);
                if (!report_has("report", needle))
                        printf("\nreport lacks %s\n", keys[i]);
                CU_ASSERT_TRUE(report_has("report", needle));
        }
        CU_ASSERT_TRUE(report_num("report", "exit_status", &v) && v == 3);
        CU_ASSERT_TRUE(report_num("report", "exit_signal", &v) && v == 0);
        CU_ASSERT_TRUE(report_num("report", "terminated", &v) && v == 0);
        CU_ASSERT_FALSE(report_has("report", "\"terminated_by\""));
        CU_ASSERT_TRUE(report_num("report", "oom_killed", &v) && v == 0);
        CU_ASSERT_TRUE(report_num("report", "wall_usec", &v) && v > 0);
        CU_ASSERT_TRUE(report_num("report", "job_cgroups_removed", &v) && v == 1);
        /* the base is a parent shared by jobs: it stays, and the report says so */
        CU_ASSERT_TRUE(report_num("report", "cgroup_base_kept", &v) && v == 1);
        CU_ASSERT_FALSE(report_has("report", "\"cgroups_removed\""));
        CU_ASSERT_TRUE(report_has("report", "\"mode\": \"cgroupfs\""));
        CU_ASSERT_TRUE(report_has("report", "\"tracker\": \"embedded\""));
        CU_ASSERT_TRUE(report_has("report", "\"tracker_reason\": \"--no-procd\""));
        CU_ASSERT_TRUE(report_has("report", "\"job_name\": \"report\""));
        long long t1 = 0, t2 = 0;
        CU_ASSERT_TRUE(report_num("report", "start_usec", &t1) && report_num("report", "end_usec", &t2) && t1 > 0 &&
                       t2 >= t1);
        CU_ASSERT_TRUE(report_has("report", "\"start_time\": \"20") && report_has("report", "Z\", \"start_usec\""));
        /* the text report: bytes in binary units */
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "memory peak "));
        CU_ASSERT_PTR_NULL(strstr(r.err, " B,  write"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "cgroup base "));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "out\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "exited with status 3"));
        CU_ASSERT_TRUE(cg_gone("report"));

        /* killed by a signal: 128+N */
        const char *args2[] = { "--", "/bin/sh", "-c", "kill -USR1 $$", NULL };
        run_starter(&r, "report-sig", 30000, args2);
        CU_ASSERT_EQUAL(r.code, 128 + SIGUSR1);
        CU_ASSERT_TRUE(report_num("report-sig", "exit_signal", &v) && v == SIGUSR1);
        /* no exit status; terminated by a signal whose sender the starter does not know */
        CU_ASSERT_TRUE(report_has("report-sig", "\"exit_status\": null"));
        CU_ASSERT_TRUE(report_num("report-sig", "terminated", &v) && v == 1);
        CU_ASSERT_TRUE(report_has("report-sig", "\"terminated_by\": \"signal\""));
        CU_ASSERT_TRUE(cg_gone("report-sig"));
}

static void test_exec_failures(void)
{
        NEED_ROOT();
        run r;
        const char *a1[] = { "--", "/nonexistent/command", NULL };
        run_starter(&r, "noexec1", 30000, a1);
        CU_ASSERT_EQUAL(r.code, 127);
        /* the job never ran: the report still says so, and why */
        long long v;
        CU_ASSERT_TRUE(report_num("noexec1", "exit_code", &v) && v == 127);
        CU_ASSERT_TRUE(report_has("noexec1", "\"stage\": \"launch\""));
        CU_ASSERT_TRUE(report_has("noexec1", "/nonexistent/command"));
        CU_ASSERT_TRUE(report_num("noexec1", "job_cgroups_removed", &v) && v == 1);
        const char *a2[] = { "--", "procd-no-such-command-xyz", NULL };
        run_starter(&r, "noexec2", 30000, a2);
        CU_ASSERT_EQUAL(r.code, 127);
        const char *a3[] = { "--", "/etc/hostname", NULL }; /* not executable */
        run_starter(&r, "noexec3", 30000, a3);
        CU_ASSERT_EQUAL(r.code, 126);
        CU_ASSERT_TRUE(cg_gone("noexec1") && cg_gone("noexec2") && cg_gone("noexec3"));
        /* a failure in the child before exec is the starter's (125), with the step named */
        char priv[PATH_MAX];
        sr_path(priv, sizeof priv, "private-dir", "");
        mkdir(priv, 0700);
        const char *a5[] = { "--user", "nobody", "--cwd", priv, "--", "/bin/true", NULL };
        run_starter(&r, "nochdir", 30000, a5);
        CU_ASSERT_EQUAL(r.code, 125);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "chdir: Permission denied"));
        CU_ASSERT_TRUE(cg_gone("nochdir"));
        CU_ASSERT_TRUE(report_num("nochdir", "exit_code", &v) && v == 125);
        CU_ASSERT_TRUE(report_has("nochdir", "chdir: Permission denied"));
        CU_ASSERT_TRUE(report_num("nochdir", "job_cgroups_removed", &v) && v == 1);
        const char *a4[] = { "--memory-max", "lots", "--", "true", NULL };
        run_starter(&r, "badopt", 30000, a4);
        CU_ASSERT_EQUAL(r.code, 125);
}

/* The limits that applied: option's entry in tag's report names the file of this host's
 * mode (the hierarchy holding ctrl: v2file with v2value there, else v1file with v1value) in
 * the job cgroup, and so does the text report. */
static void check_limit_file(const run *r, const char *tag, const char *option, tr_controller ctrl,
                             const char *v2file, const char *v2value, const char *v1file, const char *v1value)
{
        const tr_hierarchies *hs = ts_hierarchies();
        int h = tr_hierarchies_best(hs, ctrl);
        CU_ASSERT_FATAL(h >= 0);
        char cg[PATH_MAX], job[PATH_MAX], dir[PATH_MAX], want[3 * PATH_MAX];
        snprintf(job, sizeof job, "%s/job", ts_cgroup_path(cg, sizeof cg, tag));
        CU_ASSERT_FATAL(tr_hierarchy_fs_path(&hs->h[h], job, dir, sizeof dir, NULL) == 0);
        const char *file = hs->h[h].is_v2 ? v2file : v1file, *value = hs->h[h].is_v2 ? v2value : v1value;
        snprintf(want, sizeof want, "{\"option\": \"%s\", \"value\": ", option);
        bool listed = report_has(tag, want);
        snprintf(want, sizeof want, "{\"path\": \"%s/%s\", \"value\": \"%s\"}", dir, file, value);
        bool json = report_has(tag, want);
        snprintf(want, sizeof want, "procd-starter: limit --%s ", option);
        bool text = strstr(r->err, want) != NULL;
        snprintf(want, sizeof want, " %s/%s = %s", dir, file, value);
        text = text && strstr(r->err, want) != NULL;
        if (!listed || !json || !text)
                printf("\n%s: --%s: listed %d, %s/%s = %s in the JSON %d, in the text %d\n", tag, option, listed, dir,
                       file, value, json, text);
        CU_ASSERT_TRUE(listed && json && text);
}

/* Which limits were hit: "limits_hit": hits_json in the report, text_line in the text report. */
static void check_hits(const run *r, const char *tag, const char *hits_json, const char *text_line)
{
        char want[256];
        snprintf(want, sizeof want, "\"limits_hit\": %s", hits_json);
        bool json = report_has(tag, want), text = strstr(r->err, text_line) != NULL;
        if (!json || !text)
                printf("\n%s: %s in the JSON %d, '%s' in the text %d\n", tag, want, json, text_line, text);
        CU_ASSERT_TRUE(json && text);
}

static void test_memory_oom(void)
{
        NEED_ROOT();
        run r;
        const char *args[] = { "--memory-max", "32M", "--memory-swap-max", "0", "--best-effort", "--",
                               sr_self_exe(), "helper", "alloc", "256", NULL };
        run_starter(&r, "oom", 60000, args);
        CU_ASSERT_EQUAL(r.code, 122);
        long long v;
        CU_ASSERT_TRUE(report_num("oom", "oom_killed", &v) && v == 1);
        CU_ASSERT_TRUE(report_num("oom", "oom_kills", &v) && v >= 1);
        CU_ASSERT_TRUE(report_num("oom", "memory_peak_bytes", &v) && v <= 33 * 1024 * 1024);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "OOM"));
        CU_ASSERT_TRUE(cg_gone("oom"));
        check_limit_file(&r, "oom", "memory-max", TR_CTRL_MEMORY, "memory.max", "33554432", "memory.limit_in_bytes",
                         "33554432");
        check_hits(&r, "oom", "[\"oom\"]", "procd-starter: limits hit: oom (");
        CU_ASSERT_TRUE(report_has("oom", "\"terminated_by\": \"oom-killer\""));
        CU_ASSERT_TRUE(report_num("oom", "oom_kill", &v) && v >= 1);

        /* within all its limits: nothing hit */
        const char *ok[] = { "--memory-max", "64M", "--pids-max", "64", "--cpus", "2", "--",
                             sr_self_exe(), "helper", "alloc", "8", NULL };
        run_starter(&r, "within", 60000, ok);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_TRUE(report_num("within", "oom_killed", &v) && v == 0);
        CU_ASSERT_TRUE(cg_gone("within"));
        check_limit_file(&r, "within", "memory-max", TR_CTRL_MEMORY, "memory.max", "67108864", "memory.limit_in_bytes",
                         "67108864");
        check_limit_file(&r, "within", "pids-max", TR_CTRL_PIDS, "pids.max", "64", "pids.max", "64");
        check_limit_file(&r, "within", "cpus", TR_CTRL_CPU, "cpu.max", "200000 100000", "cpu.cfs_quota_us", "200000");
        check_hits(&r, "within", "[]", "procd-starter: limits hit: none\n");
        CU_ASSERT_TRUE(report_num("within", "oom_kill", &v) && v == 0);
        CU_ASSERT_TRUE(report_num("within", "pids_max", &v) && v == 0);
        CU_ASSERT_TRUE(report_num("within", "cpu_nr_throttled", &v) && v == 0);
}

static void test_pids_max(void)
{
        NEED_ROOT();
        run r;
        const char *args[] = { "--pids-max", "4", "--", sr_self_exe(), "helper", "forkn", "10", NULL };
        run_starter(&r, "pids", 60000, args);
        CU_ASSERT_EQUAL(r.code, 0); /* the helper saw EAGAIN from fork */
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "forked 3 failed 7 eagain 7"));
        long long v;
        CU_ASSERT_TRUE(report_num("pids", "pids_peak", &v) && v <= 4);
        CU_ASSERT_TRUE(report_num("pids", "strays_killed", &v) && v == 1);
        CU_ASSERT_TRUE(cg_gone("pids"));
        check_limit_file(&r, "pids", "pids-max", TR_CTRL_PIDS, "pids.max", "4", "pids.max", "4");
        check_hits(&r, "pids", "[\"pids-max\"]", "procd-starter: limits hit: pids-max (7 forks refused)");
        CU_ASSERT_TRUE(report_num("pids", "pids_max", &v) && v == 7); /* pids.events: the 7 refused */
}

static void test_cpu_quota(void)
{
        NEED_ROOT();
        run r;
        const char *args[] = { "--cpus", "0.2", "--", sr_self_exe(), "helper", "burn", "1000", NULL };
        run_starter(&r, "cpu", 60000, args);
        CU_ASSERT_EQUAL(r.code, 0);
        long long cpu = 0, wall = 0;
        CU_ASSERT_TRUE(report_num("cpu", "cpu_usec", &cpu));
        CU_ASSERT_TRUE(report_num("cpu", "wall_usec", &wall));
        printf("\ncpu quota 0.2: cpu %lld us over wall %lld us (%.2f CPUs)\n", cpu, wall,
               wall ? (double) cpu / (double) wall : 0.0);
        CU_ASSERT_TRUE(wall >= 900000);
        CU_ASSERT_TRUE(cpu <= wall * 3 / 10 + 20000); /* 0.2 CPUs, slack for one period */
        CU_ASSERT_TRUE(cg_gone("cpu"));

        /* a burner throttled by its quota (1 ms per 100 ms: reached in every period even on
         * a loaded host), and the report says so */
        const char *a1[] = { "--cpus", "0.01", "--", sr_self_exe(), "helper", "burn", "300", NULL };
        run_starter(&r, "throttle", 60000, a1);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_TRUE(cg_gone("throttle"));
        check_limit_file(&r, "throttle", "cpus", TR_CTRL_CPU, "cpu.max", "1000 100000", "cpu.cfs_quota_us", "1000");
        check_hits(&r, "throttle", "[\"cpu-throttled\"]", "procd-starter: limits hit: cpu-throttled (");
        long long periods = 0, throttled = 0, tusec = 0;
        CU_ASSERT_TRUE(report_num("throttle", "cpu_nr_periods", &periods) &&
                       report_num("throttle", "cpu_nr_throttled", &throttled) &&
                       report_num("throttle", "cpu_throttled_usec", &tusec));
        printf("\ncpu quota 0.01: throttled in %lld of %lld periods, %lld us\n", throttled, periods, tusec);
        CU_ASSERT_TRUE(throttled >= 1 && throttled <= periods && tusec > 0);

        /* weight and cpuset are written (v1 here: cpu.shares, cpuset.cpus) */
        const char *a2[] = { "--cpu-weight", "50", "--cpuset-cpus", "0", "--cpuset-mems", "0", "--", "/bin/sh", "-c",
                             "grep Cpus_allowed_list /proc/self/status", NULL };
        run_starter(&r, "cpuw", 30000, a2);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Cpus_allowed_list:\t0\n"));
        CU_ASSERT_TRUE(cg_gone("cpuw"));
}

/* the job's own limit files, read from inside the job (its cgroup is gone afterwards) */
typedef struct limit_check {
        tr_controller ctrl;
        const char *v2file, *v2want, *v1file, *v1want;
} limit_check;

static void test_limit_mapping(void)
{
        NEED_ROOT();
        const tr_hierarchies *hs = ts_hierarchies();
        char dev[32] = "";
        DIR *d = opendir("/sys/block");
        struct dirent *de;
        while (d && (de = readdir(d)) && !dev[0]) {
                if (de->d_name[0] == '.' || !strncmp(de->d_name, "loop", 4) || !strncmp(de->d_name, "zram", 4) ||
                    !strncmp(de->d_name, "ram", 3))
                        continue;
                char f[PATH_MAX], t[32] = "";
                snprintf(f, sizeof f, "/sys/block/%s/dev", de->d_name);
                if (tr_read_file_at(AT_FDCWD, f, t, sizeof t, NULL) > 0) {
                        t[strcspn(t, "\n")] = '\0';
                        snprintf(dev, sizeof dev, "%s", t);
                }
        }
        if (d)
                closedir(d);
        char io_arg[64], io_v1[64], io_v2[128];
        snprintf(io_arg, sizeof io_arg, "%s rbps=1M", dev);
        snprintf(io_v1, sizeof io_v1, "%s 1048576", dev);
        snprintf(io_v2, sizeof io_v2, "%s rbps=1048576 wbps=max riops=max wiops=max", dev);
        limit_check checks[] = {
                { TR_CTRL_MEMORY, "memory.max", "104857600", "memory.limit_in_bytes", "104857600" },
                { TR_CTRL_MEMORY, "memory.swap.max", "52428800", "memory.memsw.limit_in_bytes", "157286400" },
                { TR_CTRL_CPU, "cpu.max", "150000 100000", "cpu.cfs_quota_us", "150000" },
                { TR_CTRL_CPU, "cpu.weight", "200", "cpu.shares", "2048" },
                { TR_CTRL_PIDS, "pids.max", "77", "pids.max", "77" },
                { TR_CTRL_IO, "io.max", io_v2, "blkio.throttle.read_bps_device", io_v1 },
        };
        size_t nchecks = dev[0] ? 6 : 5;
        char script[8192] = "";
        size_t off = 0;
        const char *want[8];
        for (size_t i = 0; i < nchecks; i++) {
                int h = tr_hierarchies_best(hs, checks[i].ctrl);
                if (checks[i].ctrl == TR_CTRL_IO && (h < 0 || !hs->h[h].is_v2))
                        h = tr_hierarchies_best(hs, TR_CTRL_BLKIO);
                CU_ASSERT_FATAL(h >= 0);
                bool v2 = hs->h[h].is_v2;
                const char *file = v2 ? checks[i].v2file : checks[i].v1file;
                want[i] = v2 ? checks[i].v2want : checks[i].v1want;
                off += (size_t) snprintf(script + off, sizeof script - off,
                                         "p=$(awk -F: '$2==\"%s\"{print $3}' /proc/self/cgroup); "
                                         "echo \"%s=$(cat %s$p/%s)\"; ",
                                         hs->h[h].key, file, hs->h[h].mount_point, file);
        }
        const char *args[] = { "--memory-max", "100M", "--memory-swap-max", "50M", "--cpus", "1.5", "--cpu-weight",
                               "200", "--pids-max", "77", dev[0] ? "--io-max" : "--best-effort",
                               dev[0] ? io_arg : "--best-effort", "--", "/bin/sh", "-c", script, NULL };
        run r;
        run_starter(&r, "mapping", 30000, args);
        CU_ASSERT_EQUAL(r.code, 0);
        for (size_t i = 0; i < nchecks; i++) {
                int h = tr_hierarchies_best(hs, checks[i].ctrl);
                if (checks[i].ctrl == TR_CTRL_IO && (h < 0 || !hs->h[h].is_v2))
                        h = tr_hierarchies_best(hs, TR_CTRL_BLKIO);
                char line[256];
                snprintf(line, sizeof line, "%s=%s\n", hs->h[h].is_v2 ? checks[i].v2file : checks[i].v1file, want[i]);
                if (!strstr(r.out, line))
                        printf("\nmissing '%s' in:\n%s", line, r.out);
                CU_ASSERT_PTR_NOT_NULL(strstr(r.out, line));
        }
        CU_ASSERT_TRUE(cg_gone("mapping"));
}

static void test_missing_controller(void)
{
        NEED_ROOT();
        const tr_hierarchies *hs = ts_hierarchies();
        int mem = tr_hierarchies_best(hs, TR_CTRL_MEMORY);
        if (mem >= 0 && hs->h[mem].is_v2) {
                ts_skip("memory.high fallback", "memory.high is available on this host (v2 memory)");
                return;
        }
        run r;
        const char *a1[] = { "--memory-high", "10M", "--", "true", NULL };
        run_starter(&r, "v2only", 30000, a1);
        CU_ASSERT_EQUAL(r.code, 125);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--memory-high cannot be applied"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--best-effort"));
        CU_ASSERT_TRUE(cg_gone("v2only"));
        const char *a2[] = { "--memory-high", "10M", "--best-effort", "--", "true", NULL };
        run_starter(&r, "v2only-be", 30000, a2);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "warning: --memory-high ignored"));
        CU_ASSERT_TRUE(cg_gone("v2only-be"));
}

/* The job's escapers (setsid, double fork) die with the job, and leave no zombie: the
 * starter is a child subreaper and reaps them.  This test program is a subreaper too (ts_run)
 * and does not reap here: without the starter's reaping, the killed escapers would be
 * reparented to us as zombies and /proc/PID would still exist after the starter exited (on a
 * host whose PID 1 does not reap, for ever). */
static void test_no_strays_no_zombies(void)
{
        NEED_ROOT();
        char file[PATH_MAX];
        sr_path(file, sizeof file, "strays", ".pids");
        unlink(file);
        run r;
        const char *args[] = { "--", sr_self_exe(), "helper", "escape", file, NULL };
        run_starter(&r, "strays", 60000, args);
        CU_ASSERT_EQUAL(r.code, 0);
        char text[256] = "";
        tr_read_file_at(AT_FDCWD, file, text, sizeof text, NULL);
        int n = 0;
        char *save = NULL;
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                pid_t p = (pid_t) atoi(l);
                CU_ASSERT_TRUE(p > 1);
                if (p <= 1)
                        continue;
                n++;
                if (ts_alive(p))
                        printf("\nescaper %d survived\n", (int) p);
                CU_ASSERT_FALSE(ts_alive(p));
                char proc[64];
                snprintf(proc, sizeof proc, "/proc/%d", (int) p);
                bool present = access(proc, F_OK) == 0;
                if (present)
                        printf("\nescaper %d left behind (%s)\n", (int) p, ts_alive(p) ? "alive" : "zombie");
                CU_ASSERT_FALSE(present);
        }
        CU_ASSERT_EQUAL(n, 2);
        long long v;
        CU_ASSERT_TRUE(report_num("strays", "strays_killed", &v) && v == 1);
        CU_ASSERT_TRUE(cg_gone("strays"));
        ts_reap_orphans(0); /* only if an assertion above failed */
}

/* libdbus-1 (and libsystemd, libgcrypt... behind it) is mapped into the starter only for a
 * systemd scope: never with --no-procd, nor for a job procd tracks (procd-wire.c speaks
 * D-Bus to procd itself): the job reads its parent's (the starter's) maps. */
static void test_libdbus_on_demand(void)
{
        NEED_ROOT();
        const char *count[] = { "--", "/bin/sh", "-c", "grep -c libdbus-1 /proc/$PPID/maps || true", NULL };
        run r;
        run_starter(&r, "nodbus", 30000, count);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_STRING_EQUAL(r.out, "0\n");
        /* tracked by a real procd: not loaded either */
        char sock[PATH_MAX], rep[PATH_MAX];
        sr_path(sock, sizeof sock, "dbus-procd", ".sock");
        sr_path(rep, sizeof rep, "dbus", ".json");
        pid_t pd = sr_procd_start(sock, "dbus-procd");
        CU_ASSERT_FATAL(pd > 1);
        const char *a2[] = { "--socket", sock, "--require-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(),
                             "--name", "dbus", "--report", rep, "--", "/bin/sh", "-c",
                             "grep -c libdbus-1 /proc/$PPID/maps || true", NULL };
        uint64_t t0 = tr_now_usec();
        pid_t sp = sr_spawn("dbus", a2);
        CU_ASSERT_FATAL(sp > 1);
        finish(sp, "dbus", &r, 30000, t0);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_STRING_EQUAL(r.out, "0\n");
        CU_ASSERT_TRUE(report_has("dbus", "\"tracker\": \"procd\""));
        CU_ASSERT_PTR_NULL(strstr(r.err, "warning"));
        sr_procd_stop(pd, sock);
}

static void test_sigterm_grace(void)
{
        NEED_ROOT();
        char file[PATH_MAX], ready[PATH_MAX], report[PATH_MAX];
        sr_path(file, sizeof file, "term", ".log");
        snprintf(ready, sizeof ready, "%s.ready", file);
        unlink(file);
        unlink(ready);
        sr_path(report, sizeof report, "term", ".json");
        const char *args[] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "term",
                               "--report", report, "--kill-grace", "1", "--", sr_self_exe(), "helper", "ignore-term", file,
                               NULL };
        uint64_t t0 = tr_now_usec();
        pid_t pid = sr_spawn("term", args);
        CU_ASSERT_FATAL(pid > 1);
        CU_ASSERT_TRUE(wait_file(ready, 10000));
        uint64_t t1 = tr_now_usec();
        kill(pid, SIGTERM);
        run r;
        finish(pid, "term", &r, 30000, t0);
        uint64_t took = tr_now_usec() - t1;
        printf("\nSIGTERM ignored by the job: starter done %.2f s after SIGTERM\n", (double) took / 1e6);
        CU_ASSERT_EQUAL(r.code, 128 + SIGKILL);
        CU_ASSERT_TRUE(took >= 900000); /* the grace was given (a lower bound: load only adds) */
        char text[256] = "";
        tr_read_file_at(AT_FDCWD, file, text, sizeof text, NULL);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "TERM"));
        long long v;
        CU_ASSERT_TRUE(report_num("term", "terminated", &v) && v == 1);
        CU_ASSERT_TRUE(report_has("term", "\"terminated_by\": \"starter\""));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "; terminated by starter"));
        CU_ASSERT_TRUE(cg_gone("term"));

        /* a job that dies of SIGTERM: no wait for the grace */
        sr_path(ready, sizeof ready, "term2", ".ready");
        unlink(ready);
        /* a grace of 600 s against finish()'s 30 s wait: only "no wait for the grace" passes */
        const char *a2[] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "term2",
                             "--kill-grace", "600", "--", sr_self_exe(), "helper", "spin", ready, NULL };
        t0 = tr_now_usec();
        pid = sr_spawn("term2", a2);
        CU_ASSERT_FATAL(pid > 1);
        CU_ASSERT_TRUE(wait_file(ready, 10000));
        kill(pid, SIGINT);
        finish(pid, "term2", &r, 30000, t0);
        CU_ASSERT_EQUAL(r.code, 128 + SIGTERM);
        CU_ASSERT_TRUE(cg_gone("term2"));
}

static bool job_frozen(const char *tag, bool *known)
{
        const tr_hierarchies *hs = ts_hierarchies();
        char cg[PATH_MAX], job[PATH_MAX], dir[PATH_MAX], text[256];
        snprintf(job, sizeof job, "%s/job", ts_cgroup_path(cg, sizeof cg, tag));
        *known = false;
        if (hs->v2 >= 0 && tr_hierarchy_fs_path(&hs->h[hs->v2], job, dir, sizeof dir, NULL) >= 0) {
                char f[PATH_MAX + 32];
                snprintf(f, sizeof f, "%s/cgroup.events", dir);
                if (tr_read_file_at(AT_FDCWD, f, text, sizeof text, NULL) >= 0) {
                        *known = true;
                        if (strstr(text, "frozen 1"))
                                return true;
                }
        }
        int fr = hs->v1_of[TR_CTRL_FREEZER];
        if (fr >= 0 && tr_hierarchy_fs_path(&hs->h[fr], job, dir, sizeof dir, NULL) >= 0) {
                char f[PATH_MAX + 32];
                snprintf(f, sizeof f, "%s/freezer.state", dir);
                if (tr_read_file_at(AT_FDCWD, f, text, sizeof text, NULL) >= 0) {
                        *known = true;
                        if (strstr(text, "FROZEN"))
                                return true;
                }
        }
        return false;
}

static void test_suspend_continue(void)
{
        NEED_ROOT();
        char ready[PATH_MAX];
        sr_path(ready, sizeof ready, "tstp", ".ready");
        unlink(ready);
        const char *args[] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "tstp",
                               "--kill-grace", "1", "--", sr_self_exe(), "helper", "spin", ready, NULL };
        uint64_t t0 = tr_now_usec();
        pid_t pid = sr_spawn("tstp", args);
        CU_ASSERT_FATAL(pid > 1);
        CU_ASSERT_TRUE(wait_file(ready, 10000));
        bool known = false, frozen = false;
        kill(pid, SIGTSTP);
        for (int i = 0; i < 300 && !frozen; i++, usleep(10000))
                frozen = job_frozen("tstp", &known);
        CU_ASSERT_TRUE(known);
        CU_ASSERT_TRUE(frozen);
        kill(pid, SIGCONT);
        for (int i = 0; i < 300 && frozen; i++, usleep(10000))
                frozen = job_frozen("tstp", &known);
        CU_ASSERT_FALSE(frozen);
        /* SIGTERM while suspended also works: thaw, TERM */
        kill(pid, SIGTSTP);
        usleep(200000);
        kill(pid, SIGTERM);
        run r;
        finish(pid, "tstp", &r, 30000, t0);
        CU_ASSERT_EQUAL(r.code, 128 + SIGTERM);
        CU_ASSERT_TRUE(cg_gone("tstp"));
}

static void test_user_env_cwd_stdio(void)
{
        NEED_ROOT();
        char out[PATH_MAX], in[PATH_MAX];
        sr_path(out, sizeof out, "user", ".job-stdout");
        sr_path(in, sizeof in, "user", ".job-stdin");
        unlink(out);
        tr_write_file_at(AT_FDCWD, in, "from-stdin\n", NULL);
        int fd = open(in, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
                ssize_t w = write(fd, "from-stdin\n", 11);
                (void) w;
                close(fd);
        }
        run r;
        const char *args[] = { "--user", "nobody", "--cwd", "/tmp", "--env", "FOO=bar baz", "--stdin", in,
                               "--stdout", out, "--", "/bin/sh", "-c",
                               "id -u; id -G; pwd; echo \"$FOO\"; echo \"$USER\"; cat", NULL };
        run_starter(&r, "user", 30000, args);
        CU_ASSERT_EQUAL(r.code, 0);
        char text[1024] = "";
        tr_read_file_at(AT_FDCWD, out, text, sizeof text, NULL);
        char want[256];
        struct stat st;
        CU_ASSERT_EQUAL(stat(out, &st), 0);
        snprintf(want, sizeof want, "%u\n", (unsigned) st.st_uid); /* chowned to the user */
        CU_ASSERT_TRUE(strncmp(text, want, strlen(want)) == 0 && st.st_uid != 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n/tmp\nbar baz\nnobody\nfrom-stdin\n"));
        /* supplementary groups: root's (0) must be gone */
        char *groups = strchr(text, '\n');
        CU_ASSERT_TRUE(groups && strncmp(groups + 1, "0", 1) != 0 && !strstr(groups + 1, " 0 "));
        if (strcmp(r.out, "") != 0)
                printf("\nunexpected stdout: %s\n", r.out);
        CU_ASSERT_TRUE(cg_gone("user"));

        /* --group (numeric: no such group needed): primary and only supplementary group */
        const char *a2[] = { "--user", "nobody", "--group", "12345", "--", "/bin/sh", "-c", "id -g; id -G", NULL };
        run_starter(&r, "group", 30000, a2);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_TRUE(strncmp(r.out, "12345\n", 6) == 0);
        CU_ASSERT_PTR_NULL(strstr(r.out, "\n0\n"));
        CU_ASSERT_TRUE(cg_gone("group"));
}

/* ---------------------------------------------------------------- systemd */

static char sd_rt[PATH_MAX];
static pid_t sd_pid = -1;

static bool sd_state_ok(void)
{
        char cmd[PATH_MAX + 128];
        snprintf(cmd, sizeof cmd, "XDG_RUNTIME_DIR=%s systemctl --user show -p SystemState --value 2>/dev/null",
                 sd_rt);
        FILE *p = popen(cmd, "r");
        if (!p)
                return false;
        char buf[64] = "";
        if (!fgets(buf, sizeof buf, p))
                buf[0] = '\0';
        pclose(p);
        return strncmp(buf, "running", 7) == 0 || strncmp(buf, "degraded", 8) == 0;
}

/* A real systemd --user manager (FACTS.md): private mount namespace with a tmpfs on
 * /run/systemd, its cgroup <base>/sdT in name=systemd and the v2 tree. */
static int sd_start(void)
{
        if (!ts_need_private_mounts("systemd")) /* its private mount namespace */
                return -2;
        if (access("/lib/systemd/systemd", X_OK) != 0 || access("/usr/bin/unshare", X_OK) != 0) {
                ts_skip("systemd", "/lib/systemd/systemd or unshare missing");
                return -2;
        }
        const tr_hierarchies *hs = ts_hierarchies();
        char cg[PATH_MAX], sysd[PATH_MAX] = "", v2[PATH_MAX] = "";
        ts_cgroup_path(cg, sizeof cg, "sdT");
        for (int i = 0; i < hs->n; i++) {
                char *dst = hs->h[i].is_v2 ? v2 : strcmp(hs->h[i].key, "name=systemd") == 0 ? sysd : NULL;
                if (!dst)
                        continue;
                if (tr_hierarchy_fs_path(&hs->h[i], cg, dst, PATH_MAX, NULL) < 0 ||
                    (mkdir(dst, 0755) < 0 && errno != EEXIST))
                        return -1;
        }
        if (!v2[0] && !sysd[0]) {
                ts_skip("systemd", "needs the v2 tree or name=systemd");
                return -2;
        }
        sr_path(sd_rt, sizeof sd_rt, "rt", "");
        mkdir(sd_rt, 0700);
        char script[4 * PATH_MAX], log[PATH_MAX];
        snprintf(script, sizeof script,
                 "mount -t tmpfs -o mode=0755 tmpfs /run/systemd && mkdir /run/systemd/system && "
                 "%s%s%s %s%s%s exec /lib/systemd/systemd --user",
                 sysd[0] ? "echo $$ > " : "", sysd, sysd[0] ? "/cgroup.procs &&" : "",
                 v2[0] ? "echo $$ > " : "", v2, v2[0] ? "/cgroup.procs &&" : "");
        sr_path(log, sizeof log, "systemd", ".log");
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                setenv("XDG_RUNTIME_DIR", sd_rt, 1);
                int in = open("/dev/null", O_RDONLY), o = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (in < 0 || o < 0)
                        _exit(99);
                dup2(in, 0);
                dup2(o, 1);
                dup2(o, 2);
                execl("/usr/bin/unshare", "unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                      (char *) NULL);
                _exit(98);
        }
        if (pid < 0)
                return -1;
        sd_pid = pid;
        for (int i = 0; i < 100; i++) {
                if (sd_state_ok())
                        return 0;
                if (ts_wait(pid, 100) != -ETIMEDOUT) {
                        sd_pid = -1;
                        break;
                }
        }
        printf("systemd --user did not come up (see %s)\n", log);
        return -1;
}

static void sd_stop(void)
{
        if (sd_pid <= 1)
                return;
        char cmd[PATH_MAX + 64];
        snprintf(cmd, sizeof cmd, "XDG_RUNTIME_DIR=%s systemctl --user exit >/dev/null 2>&1", sd_rt);
        int rc = system(cmd);
        (void) rc;
        if (ts_wait(sd_pid, 10000) == -ETIMEDOUT) {
                printf("systemd --user did not exit: killing it\n");
                ts_kill_reap(sd_pid);
        }
        sd_pid = -1;
        /* its cgroup <base>/sdT, now empty (the test base cleanup would also take it) */
        const tr_hierarchies *hs = ts_hierarchies();
        char cg[PATH_MAX];
        ts_cgroup_path(cg, sizeof cg, "sdT");
        for (int i = 0; i < hs->n; i++) {
                char dir[PATH_MAX], cmd2[PATH_MAX + 64];
                if (tr_hierarchy_fs_path(&hs->h[i], cg, dir, sizeof dir, NULL) < 0 || access(dir, F_OK) != 0)
                        continue;
                snprintf(cmd2, sizeof cmd2, "find '%s' -depth -type d -exec rmdir {} + 2>/dev/null", dir);
                rc = system(cmd2);
        }
}

static void test_systemd_scope(void)
{
        NEED_ROOT();
        int sr = sd_start();
        if (sr == -2)
                return;
        if (sr < 0) {
                sd_stop();
                CU_FAIL("could not start a systemd --user manager");
                return;
        }
        char addr[PATH_MAX + 32], report[PATH_MAX];
        snprintf(addr, sizeof addr, "unix:path=%s/systemd/private", sd_rt);
        sr_path(report, sizeof report, "sd", ".json");
        const char *args[] = { "--no-procd", "--systemd=yes", "--systemd-address", addr, "--name", "sdjob",
                               "--report", report, "--pids-max", "50", "--", "/bin/cat", "/proc/self/cgroup", NULL };
        uint64_t t0 = tr_now_usec();
        pid_t pid = sr_spawn("sd", args);
        CU_ASSERT_FATAL(pid > 1);
        run r;
        finish(pid, "sd", &r, 60000, t0);
        printf("\nsystemd mode: %.3f s for the whole run\n", (double) r.elapsed_usec / 1e6);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_TRUE(report_has("sd", "\"mode\": \"systemd\""));
        CU_ASSERT_PTR_NULL(strstr(r.err, "falling back"));
        /* the job's cgroup is <base>/sdT/.../procd-sdjob.scope/job in the hierarchy systemd
         * manages (cgroup2, or name=systemd on pure v1), and every hierarchy names the same
         * path (v1 controllers mirrored by the starter) */
        const char *sdline = strstr(r.out, "0::");
        size_t skip = 3;
        if (!sdline && (sdline = strstr(r.out, ":name=systemd:")) != NULL)
                skip = strlen(":name=systemd:");
        CU_ASSERT_PTR_NOT_NULL_FATAL(sdline);
        char job[PATH_MAX];
        snprintf(job, sizeof job, "%s", sdline + skip);
        char *nl = strchr(job, '\n');
        if (nl)
                *nl = '\0';
        char cg[PATH_MAX];
        ts_cgroup_path(cg, sizeof cg, "sdT/");
        CU_ASSERT_TRUE(strncmp(job, cg, strlen(cg)) == 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(job, "/procd-sdjob.scope/job"));
        int lines;
        CU_ASSERT_EQUAL(check_cgroup_lines(r.out, job, &lines), 0);
        CU_ASSERT_EQUAL(lines, job_hierarchies());
        /* the scope is gone (systemd removed it once empty) and so is the job leaf */
        const tr_hierarchies *hs = ts_hierarchies();
        char scope[PATH_MAX];
        snprintf(scope, sizeof scope, "%s", job);
        *strrchr(scope, '/') = '\0';
        for (int i = 0; i < hs->n; i++) {
                char dir[PATH_MAX];
                if (tr_hierarchy_fs_path(&hs->h[i], scope, dir, sizeof dir, NULL) < 0)
                        continue;
                bool gone = false;
                for (int k = 0; k < 200 && !gone; k++, usleep(10000))
                        gone = access(dir, F_OK) != 0;
                if (!gone)
                        printf("\nleft behind: %s\n", dir);
                CU_ASSERT_TRUE(gone);
        }
        /* the manager forgot the unit */
        char cmd[PATH_MAX + 128];
        snprintf(cmd, sizeof cmd,
                 "XDG_RUNTIME_DIR=%s systemctl --user list-units --all --no-legend 'procd-*' 2>/dev/null | grep -q .",
                 sd_rt);
        CU_ASSERT_NOT_EQUAL(system(cmd), 0);

        /* the same manager, a job that leaves strays and gets a signal report */
        const char *a2[] = { "--no-procd", "--systemd=yes", "--systemd-address", addr, "--name", "sdjob2", "--",
                             "/bin/sh", "-c", "sleep 60 & setsid sleep 61 & exit 4", NULL };
        t0 = tr_now_usec();
        pid = sr_spawn("sd2", a2);
        finish(pid, "sd2", &r, 60000, t0);
        CU_ASSERT_EQUAL(r.code, 4);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "(systemd)"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "stray processes killed"));

        /* the parked scope helper keeps no fd of the starter's (D-Bus socket, job stdio,
         * report): only stdio on /dev/null and its pipe */
        const char *a3[] = { "--no-procd", "--systemd=yes", "--systemd-address", addr, "--name", "sdjob3",
                             "--report", report, "--", sr_self_exe(), "helper", "scopefds", NULL };
        t0 = tr_now_usec();
        pid = sr_spawn("sd3", a3);
        finish(pid, "sd3", &r, 60000, t0);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "helpers 1\n"));
        int nfds = 0, pipes = 0, bad = 0;
        char copy[16384];
        snprintf(copy, sizeof copy, "%s", r.out);
        for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                int hp, fd;
                char target[PATH_MAX];
                if (sscanf(l, "helperfd %d %d %4095s", &hp, &fd, target) != 3)
                        continue;
                nfds++;
                if (fd <= 2 ? strcmp(target, "/dev/null") != 0 : strncmp(target, "pipe:", 5) != 0) {
                        printf("\nscope helper holds fd %d -> %s\n", fd, target);
                        bad++;
                }
                pipes += fd > 2;
        }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_EQUAL(nfds, 4);
        CU_ASSERT_EQUAL(pipes, 1);
        sd_stop();
}

static void test_systemd_fallback(void)
{
        NEED_ROOT();
        run r;
        char sockpath[PATH_MAX], addr[PATH_MAX + 32];
        sr_path(sockpath, sizeof sockpath, "no-such-manager", "");
        snprintf(addr, sizeof addr, "unix:path=%s", sockpath);
        const char *args[] = { "--systemd=yes", "--systemd-address", addr, "--systemd-timeout", "2000", "--",
                               "/bin/cat", "/proc/self/cgroup", NULL };
        /* run_starter puts --systemd=no first; the later --systemd=yes wins */
        run_starter(&r, "sdfallback", 30000, args);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "warning: systemd:"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "falling back to cgroupfs"));
        CU_ASSERT_TRUE(report_has("sdfallback", "\"mode\": \"cgroupfs\""));
        char want[PATH_MAX], cg[PATH_MAX];
        snprintf(want, sizeof want, "%s/job", ts_cgroup_path(cg, sizeof cg, "sdfallback"));
        int lines;
        CU_ASSERT_EQUAL(check_cgroup_lines(r.out, want, &lines), 0);
        CU_ASSERT_TRUE(cg_gone("sdfallback"));
}

/* ---------------------------------------------------------------- with procd */

/* the family procd has for root, or NULL */
static bool procd_family(procd_client *c, pid_t root, procd_family_info *out)
{
        procd_family_info *infos = NULL;
        size_t n = 0;
        bool found = false;
        if (procd_dump(c, 0, &infos, &n, NULL) != PROCD_OK)
                return false;
        for (size_t i = 0; i < n; i++)
                if (infos[i].root_pid == root) {
                        *out = infos[i];
                        out->members = NULL;
                        out->n_members = 0;
                        found = true;
                }
        procd_family_info_free(infos, n);
        return found;
}

/* Wait up to 3 s for procd to track root via a cgroup (registration, then
 * TrackFamilyViaCgroup, happen right after the launch); fi: the family as last seen. */
static bool wait_tracked(procd_client *c, pid_t root, procd_family_info *fi)
{
        bool found = false;
        for (int i = 0; i < 300 && !((found = procd_family(c, root, fi)) && strncmp(fi->tracking, "cgroup:", 7) == 0);
             i++)
                usleep(10000);
        return found;
}

/* procd on <tag>.sock and a client of it: procd's pid, or -1 (a failure recorded, nothing
 * left running). */
static pid_t procd_up(const char *tag, char *sock, size_t size, procd_client **c)
{
        sr_path(sock, size, tag, ".sock");
        pid_t pd = sr_procd_start(sock, tag);
        if (pd < 0 || procd_connect(sock, c, NULL) != PROCD_OK) {
                CU_FAIL("procd did not start");
                sr_procd_stop(pd, sock);
                return -1;
        }
        return pd;
}

/* A job whose cgroup name is not UTF-8 (Latin-1 "pdé"): procd tracks it all the same (the
 * path goes as bytes, TrackFamilyViaCgroupBytes), lists it under a percent-encoded job id,
 * and the report is valid UTF-8 JSON with the raw name in job_name_hex. */
static void test_with_procd_not_utf8(void)
{
        NEED_ROOT();
        static const char tag[] = "pd\xe9name";
        char sock[PATH_MAX], ready[PATH_MAX], report[PATH_MAX];
        procd_client *c = NULL;
        pid_t pd = procd_up("procd8", sock, sizeof sock, &c);
        if (pd < 0)
                return;
        sr_path(ready, sizeof ready, "pd8", ".ready");
        sr_path(report, sizeof report, tag, ".json");
        unlink(ready);
        const char *args[] = { "--socket", sock, "--require-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(),
                               "--name", tag, "--report", report, "--kill-grace", "2", "--", sr_self_exe(), "helper",
                               "spin", ready, NULL };
        uint64_t t0 = tr_now_usec();
        pid_t sp = sr_spawn(tag, args);
        CU_ASSERT_FATAL(sp > 1);
        CU_ASSERT_TRUE(wait_file(ready, 10000));
        pid_t root = sr_job_root(tag);
        CU_ASSERT_TRUE(root > 1);
        procd_family_info fi;
        bool found = wait_tracked(c, root, &fi);
        CU_ASSERT_TRUE(found);
        if (found) {
                /* Dump's strings are UTF-8: the byte is shown as \xE9 */
                CU_ASSERT_PTR_NOT_NULL(strstr(fi.tracking, "/pd\\xE9name/job"));
                CU_ASSERT_STRING_EQUAL(fi.source, "cgroup");
        }
        procd_job_info *jobs = NULL;
        size_t n = 0;
        bool listed = false;
        CU_ASSERT_EQUAL(procd_list_jobs(c, (uid_t) -1, &jobs, &n, NULL), PROCD_OK);
        for (size_t i = 0; i < n; i++)
                listed |= jobs[i].root_pid == root && strcmp(jobs[i].job_id, "pd%E9name") == 0;
        free(jobs);
        CU_ASSERT_TRUE(listed);
        kill(sp, SIGTERM);
        run r;
        finish(sp, tag, &r, 30000, t0);
        CU_ASSERT_EQUAL(r.code, 128 + SIGTERM);
        CU_ASSERT_TRUE(report_has(tag, "\"tracker\": \"procd\""));
        CU_ASSERT_TRUE(report_has(tag, "\"job_name\": \"pd\\ufffdname\", \"job_name_hex\": \"7064e96e616d65\""));
        CU_ASSERT_FALSE(report_has(tag, "\xe9")); /* no raw byte: valid UTF-8 */
        CU_ASSERT_TRUE(cg_gone(tag));
        procd_disconnect(c);
        sr_procd_stop(pd, sock);
}

static void test_with_procd(void)
{
        NEED_ROOT();
        char sock[PATH_MAX], ready[PATH_MAX], report[PATH_MAX];
        procd_client *c = NULL;
        pid_t pd = procd_up("procd", sock, sizeof sock, &c);
        if (pd < 0)
                return;
        sr_path(ready, sizeof ready, "pdreg", ".ready");
        sr_path(report, sizeof report, "pdreg", ".json");
        unlink(ready);
        const char *args[] = { "--socket", sock, "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "pdreg",
                               "--report", report, "--kill-grace", "2", "--", sr_self_exe(), "helper", "spin", ready, NULL };
        uint64_t t0 = tr_now_usec();
        pid_t sp = sr_spawn("pdreg", args);
        CU_ASSERT_FATAL(sp > 1);
        CU_ASSERT_TRUE(wait_file(ready, 10000));
        /* the job's root pid: the only process of <base>/pdreg/job */
        char cg[PATH_MAX], job[PATH_MAX];
        snprintf(job, sizeof job, "%s/job", ts_cgroup_path(cg, sizeof cg, "pdreg"));
        pid_t root = sr_job_root("pdreg");
        CU_ASSERT_TRUE(root > 1);
        procd_family_info fi;
        bool found = wait_tracked(c, root, &fi);
        CU_ASSERT_TRUE(found);
        if (found) {
                char want[PATH_MAX + 16];
                snprintf(want, sizeof want, "cgroup:%s", job);
                CU_ASSERT_STRING_EQUAL(fi.tracking, want);
                CU_ASSERT_EQUAL(fi.watcher_pid, sp);
                CU_ASSERT_STRING_EQUAL(fi.source, "cgroup");
        }
        procd_usage u;
        CU_ASSERT_EQUAL(procd_get_usage(c, root, &u, NULL), PROCD_OK);
        CU_ASSERT_TRUE(u.cpu_usec.available);
        kill(sp, SIGTERM);
        run r;
        finish(sp, "pdreg", &r, 30000, t0);
        CU_ASSERT_EQUAL(r.code, 128 + SIGTERM);
        CU_ASSERT_TRUE(report_has("pdreg", "\"tracker\": \"procd\""));
        CU_ASSERT_FALSE(procd_family(c, root, &fi)); /* unregistered at the end */
        CU_ASSERT_TRUE(cg_gone("pdreg"));
        procd_disconnect(c);
        sr_procd_stop(pd, sock);

        /* no procd at --socket: a warning, the embedded tracker */
        char rep2[PATH_MAX];
        sr_path(rep2, sizeof rep2, "pdnone", ".json");
        const char *a2[] = { "--socket", sock, "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "pdnone",
                             "--report", rep2, "--", "/bin/true", NULL };
        t0 = tr_now_usec();
        sp = sr_spawn("pdnone", a2);
        finish(sp, "pdnone", &r, 30000, t0);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "no procd at"));
        CU_ASSERT_TRUE(report_has("pdnone", "\"tracker\": \"embedded\""));
        CU_ASSERT_TRUE(report_has("pdnone", "\"tracker_reason\": \"no procd at "));
        CU_ASSERT_TRUE(cg_gone("pdnone"));

        /* --require-procd and no procd: the job never runs, exit 125, the report says why */
        char rep3[PATH_MAX], marker[PATH_MAX];
        sr_path(rep3, sizeof rep3, "pdreq", ".json");
        sr_path(marker, sizeof marker, "pdreq", ".ran");
        unlink(marker);
        const char *a3[] = { "--require-procd", "--socket", sock, "--systemd=no", "--cgroup-base", ts_cgroup_base(),
                             "--name", "pdreq", "--report", rep3, "--", "/usr/bin/touch", marker, NULL };
        t0 = tr_now_usec();
        sp = sr_spawn("pdreq", a3);
        finish(sp, "pdreq", &r, 30000, t0);
        CU_ASSERT_EQUAL(r.code, 125);
        CU_ASSERT_NOT_EQUAL(access(marker, F_OK), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--require-procd"));
        CU_ASSERT_TRUE(report_has("pdreq", "\"stage\": \"procd\""));
        CU_ASSERT_TRUE(cg_gone("pdreq"));
}

/* Start a starter registered with procd on sock running a spinning job as tag; the job's
 * root once procd tracks it through its cgroup (-1 when it did not show). */
static pid_t start_procd_job(const char *sock, procd_client *c, const char *tag, pid_t *starter, uint64_t *t0)
{
        char ready[PATH_MAX], report[PATH_MAX];
        sr_path(ready, sizeof ready, tag, ".ready");
        sr_path(report, sizeof report, tag, ".json");
        unlink(ready);
        unlink(report);
        const char *args[] = { "--socket", sock, "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", tag,
                               "--report", report, "--", sr_self_exe(), "helper", "spin", ready, NULL };
        *t0 = tr_now_usec();
        *starter = sr_spawn(tag, args);
        if (*starter <= 1 || !wait_file(ready, 10000))
                return -1;
        pid_t root = sr_job_root(tag);
        procd_family_info fi;
        for (int i = 0; root > 1 && i < 300; i++) {
                if (procd_family(c, root, &fi) && strncmp(fi.tracking, "cgroup:", 7) == 0)
                        return root;
                usleep(10000);
        }
        return -1;
}

/* The report of a job whose root died of SIGKILL without the starter asking: exit code
 * 137, no exit status (null), exit_signal 9, terminated, and by whom. */
static void check_killed(const run *r, const char *tag, const char *by)
{
        long long v;
        char want[64];
        snprintf(want, sizeof want, "\"terminated_by\": \"%s\"", by);
        CU_ASSERT_EQUAL(r->code, 128 + SIGKILL);
        CU_ASSERT_TRUE(report_has(tag, "\"exit_status\": null"));
        CU_ASSERT_TRUE(report_num(tag, "exit_signal", &v) && v == SIGKILL);
        CU_ASSERT_TRUE(report_num(tag, "terminated", &v) && v == 1);
        if (!report_has(tag, want))
                printf("\n%s: no %s in the report\n", tag, want);
        CU_ASSERT_TRUE(report_has(tag, want));
        CU_ASSERT_TRUE(report_has(tag, "\"tracker\": \"procd\""));
        CU_ASSERT_PTR_NOT_NULL(strstr(r->err, "killed by signal 9"));
        snprintf(want, sizeof want, "terminated by %s", by);
        CU_ASSERT_PTR_NOT_NULL(strstr(r->err, want));
        CU_ASSERT_TRUE(cg_gone(tag));
}

/* `procctl kill ROOT` on a job the starter runs with procd: the report says the job died
 * of SIGKILL, was terminated, and by procd; a SIGKILL from elsewhere is not put on procd. */
static void test_procctl_kill(void)
{
        NEED_ROOT();
        char sock[PATH_MAX];
        procd_client *c = NULL;
        pid_t pd = procd_up("pdkill", sock, sizeof sock, &c);
        if (pd < 0)
                return;
        pid_t sp = -1;
        uint64_t t0 = 0;
        run r;
        pid_t root = start_procd_job(sock, c, "pdkill", &sp, &t0);
        CU_ASSERT_FATAL(sp > 1);
        CU_ASSERT(root > 1);
        if (root > 1) {
                char bin[PATH_MAX], pid[16];
                snprintf(bin, sizeof bin, "%s/procd/procctl", ts_build_dir());
                snprintf(pid, sizeof pid, "%d", (int) root);
                fflush(NULL);
                pid_t pc = fork();
                if (pc == 0) {
                        execl(bin, "procctl", "--socket", sock, "kill", pid, (char *) NULL);
                        _exit(98);
                }
                CU_ASSERT_EQUAL(ts_wait(pc, 30000), 0); /* exit status 0 */
        }
        finish(sp, "pdkill", &r, 30000, t0);
        check_killed(&r, "pdkill", "procd");

        /* the same job killed by a plain kill(2): the starter cannot name the sender */
        root = start_procd_job(sock, c, "pdsig", &sp, &t0);
        CU_ASSERT_FATAL(sp > 1);
        CU_ASSERT(root > 1);
        if (root > 1)
                kill(root, SIGKILL);
        finish(sp, "pdsig", &r, 30000, t0);
        check_killed(&r, "pdsig", "signal");
        procd_disconnect(c);
        sr_procd_stop(pd, sock);
}

int main(int argc, char **argv)
{
        CU_TestInfo cgroupfs_tests[] = {
                { "launch atomicity (clone3)", test_atomicity_clone3 },
                { "launch atomicity (fork fallback)", test_atomicity_fork },
                { "limits: the job cgroup is made in their hierarchies", test_limit_hierarchies },
                { "quiet without procd or report: no io or pids cgroups", test_quiet_hierarchies },
                { "report JSON and exit status", test_report_and_status },
                { "exec failures: 127/126/125, nothing left", test_exec_failures },
                { "memory limit: OOM reported", test_memory_oom },
                { "pids limit: fork fails beyond it", test_pids_max },
                { "cpu quota, weight, cpuset", test_cpu_quota },
                { "limits mapped to this host's files", test_limit_mapping },
                { "v2-only knob: error, --best-effort warning", test_missing_controller },
                { "no strays, no zombies: setsid and double fork", test_no_strays_no_zombies },
                { "libdbus loaded only for a systemd scope (not with procd)", test_libdbus_on_demand },
                { "SIGTERM grace then kill", test_sigterm_grace },
                { "SIGTSTP/SIGCONT freeze and thaw", test_suspend_continue },
                { "--user --cwd --env --stdin --stdout", test_user_env_cwd_stdio },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo systemd_tests[] = {
                { "scope from a real systemd --user manager", test_systemd_scope },
                { "fallback when systemd is unreachable", test_systemd_fallback },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo procd_tests[] = {
                { "registered with procd, tracked via the cgroup", test_with_procd },
                { "a job whose cgroup name is not UTF-8 is tracked by procd", test_with_procd_not_utf8 },
                { "procctl kill: exit_status, terminated, by whom", test_procctl_kill },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "starter cgroupfs", NULL, NULL, NULL, NULL, cgroupfs_tests },
                { "starter systemd", NULL, NULL, NULL, NULL, systemd_tests },
                { "starter with procd", NULL, NULL, NULL, NULL, procd_tests },
                CU_SUITE_INFO_NULL,
        };
        return sr_main(argc, argv, "procd-starter-test", helper, suites);
}
