/* test_starter_crash.c - a starter SIGKILLed does not leave its job unsupervised, and a
 * starter outlives a procd restart, with the real binaries:
 *  - with procd: the family was registered kill-on-watcher-exit, so procd kills the job and
 *    removes the job cgroup; the next starter on the base removes the rest;
 *  - embedded (--no-procd): the next starter on the same base finds the job cgroup whose
 *    starter is gone (its lock is free), kills the job and removes the cgroups; a live
 *    starter's job is left alone;
 *  - procd SIGKILLed and started again mid-job: the starter reconnects and reports
 *    "tracker": "procd"; started again without its state file, procd has forgotten the job
 *    and the starter reports "embedded". */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procd/client.h"
#include "testsupport.h"
#include "trackers/util.h"

static char tmpdir[PATH_MAX];

static void tmp_path(char *buf, size_t size, const char *tag, const char *ext)
{
        snprintf(buf, size, "%s/%s%s", tmpdir, tag, ext);
}

/* procd-starter with args (NULL-terminated, no argv[0]); stdout/stderr to tmp/tag.{out,err}. */
static pid_t spawn_starter(const char *tag, const char *const *args)
{
        char bin[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
        snprintf(bin, sizeof bin, "%s/starter/procd-starter", ts_build_dir());
        tmp_path(out, sizeof out, tag, ".out");
        tmp_path(err, sizeof err, tag, ".err");
        const char *argv[64];
        int n = 0;
        argv[n++] = bin;
        for (int i = 0; args[i] && n < 63; i++)
                argv[n++] = args[i];
        argv[n] = NULL;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                int in = open("/dev/null", O_RDONLY);
                if (o < 0 || e < 0 || in < 0)
                        _exit(99);
                dup2(in, 0);
                dup2(o, 1);
                dup2(e, 2);
                execv(argv[0], (char **) argv);
                _exit(98);
        }
        return pid;
}

static bool file_has(const char *tag, const char *ext, const char *needle)
{
        char p[PATH_MAX], buf[16384] = "";
        tmp_path(p, sizeof p, tag, ext);
        tr_read_file_at(AT_FDCWD, p, buf, sizeof buf, NULL);
        bool has = strstr(buf, needle) != NULL;
        if (!has)
                printf("\n[%s%s] has no \"%s\":\n%s\n", tag, ext, needle, buf);
        return has;
}

/* Directory of <base>/<tag>[/sub] in the v2 tree (else the first hierarchy). */
static void cg_dir(const char *tag, const char *sub, char *buf, size_t size)
{
        const tr_hierarchies *hs = ts_hierarchies();
        char cg[PATH_MAX], path[PATH_MAX + 64];
        ts_cgroup_path(cg, sizeof cg, tag);
        snprintf(path, sizeof path, "%s%s%s", cg, sub ? "/" : "", sub ? sub : "");
        int hi = hs->v2 >= 0 ? hs->v2 : 0;
        tr_hierarchy_fs_path(&hs->h[hi], path, buf, size, NULL);
}

static bool cg_exists_anywhere(const char *tag, const char *sub)
{
        const tr_hierarchies *hs = ts_hierarchies();
        char cg[PATH_MAX], path[PATH_MAX + 64], dir[PATH_MAX];
        ts_cgroup_path(cg, sizeof cg, tag);
        snprintf(path, sizeof path, "%s%s%s", cg, sub ? "/" : "", sub ? sub : "");
        for (int i = 0; i < hs->n; i++)
                if (tr_hierarchy_fs_path(&hs->h[i], path, dir, sizeof dir, NULL) >= 0 && access(dir, F_OK) == 0)
                        return true;
        return false;
}

/* The job's root: the first pid of <base>/<tag>/job, waiting until it shows. */
static pid_t job_root(const char *tag)
{
        char dir[PATH_MAX], f[PATH_MAX + 16], procs[256];
        cg_dir(tag, "job", dir, sizeof dir);
        snprintf(f, sizeof f, "%s/cgroup.procs", dir);
        for (int i = 0; i < 1000; i++) {
                procs[0] = '\0';
                if (tr_read_file_at(AT_FDCWD, f, procs, sizeof procs, NULL) > 0 && atoi(procs) > 1)
                        return (pid_t) atoi(procs);
                usleep(10000);
        }
        return -1;
}

static bool wait_until(bool (*cond)(const void *), const void *arg, int timeout_ms)
{
        for (int t = 0; t < timeout_ms; t += 20) {
                if (cond(arg))
                        return true;
                usleep(20000);
        }
        return cond(arg);
}

static bool pid_gone(const void *p) { return !ts_alive(*(const pid_t *) p); }
static bool job_cg_gone(const void *tag) { return !cg_exists_anywhere(tag, "job"); }
static bool top_cg_gone(const void *tag) { return !cg_exists_anywhere(tag, NULL); }

static pid_t procd_start(const char *sock, const char *tag)
{
        char bin[PATH_MAX], log[PATH_MAX];
        snprintf(bin, sizeof bin, "%s/procd/procd", ts_build_dir());
        tmp_path(log, sizeof log, tag, ".log");
        unlink(sock);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                int in = open("/dev/null", O_RDONLY), o = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
                if (in < 0 || o < 0)
                        _exit(99);
                dup2(in, 0);
                dup2(o, 1);
                dup2(o, 2);
                execl(bin, "procd", "--socket", sock, "--foreground", (char *) NULL);
                _exit(98);
        }
        procd_client *c = NULL;
        for (int i = 0; pid > 0 && i < 500; i++) {
                if (procd_connect(sock, &c, NULL) == PROCD_OK) {
                        procd_disconnect(c);
                        return pid;
                }
                if (ts_wait(pid, 10) != -ETIMEDOUT)
                        return -1;
        }
        if (pid > 0)
                ts_kill_reap(pid);
        return -1;
}

static void procd_stop(pid_t pid, const char *sock)
{
        procd_client *c = NULL;
        if (procd_connect(sock, &c, NULL) == PROCD_OK) {
                procd_quit(c, NULL);
                procd_disconnect(c);
        }
        if (pid > 1 && ts_wait(pid, 5000) == -ETIMEDOUT)
                ts_kill_reap(pid);
}

/* One more starter on the same base: it sweeps what dead starters left. */
static void sweep_with_starter(const char *tag, const char *const *mode)
{
        const char *args[16];
        int n = 0;
        for (int i = 0; mode[i]; i++)
                args[n++] = mode[i];
        const char *rest[] = { "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", tag, "--", "/bin/true",
                               NULL };
        for (int i = 0; rest[i]; i++)
                args[n++] = rest[i];
        args[n] = NULL;
        pid_t p = spawn_starter(tag, args);
        int st = ts_wait(p, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_embedded_sigkill(void)
{
        if (!ts_need_root("starter crash tests") || !ts_cgroup_base())
                return;
        const char *a[] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "emb-dead",
                            "--", "/bin/sleep", "1000", NULL };
        const char *b[] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "emb-live",
                            "--", "/bin/sleep", "1000", NULL };
        pid_t sa = spawn_starter("emb-dead", a), sb = spawn_starter("emb-live", b);
        pid_t ja = job_root("emb-dead"), jb = job_root("emb-live");
        CU_ASSERT_FATAL(ja > 1 && jb > 1);
        ts_kill_reap(sa); /* SIGKILL: no cleanup of its own */
        usleep(100000);
        CU_ASSERT(ts_alive(ja)); /* unsupervised until the next starter comes */
        static const char *const embedded[] = { "--no-procd", NULL };
        sweep_with_starter("emb-next", embedded);
        CU_ASSERT(file_has("emb-next", ".err", "was left by a starter that is gone"));
        CU_ASSERT(wait_until(pid_gone, &ja, 5000));
        CU_ASSERT(top_cg_gone("emb-dead"));
        /* the live starter's job is untouched, and it ends normally */
        CU_ASSERT(ts_alive(jb) && ts_alive(sb));
        CU_ASSERT(cg_exists_anywhere("emb-live", "job"));
        kill(sb, SIGTERM);
        int st = ts_wait(sb, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st));
        CU_ASSERT(wait_until(pid_gone, &jb, 5000));
        CU_ASSERT(top_cg_gone("emb-live"));
        if (ts_alive(ja))
                ts_kill_reap(ja);
}

static void test_procd_sigkill(void)
{
        if (!ts_need_root("starter crash tests") || !ts_cgroup_base())
                return;
        char sock[PATH_MAX];
        tmp_path(sock, sizeof sock, "pd1", "");
        mkdir(sock, 0755);
        strcat(sock, "/procd.sock");
        pid_t pd = procd_start(sock, "pd1");
        CU_ASSERT_FATAL(pd > 1);
        const char *a[] = { "--socket", sock, "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "pd-dead",
                            "--", "/bin/sleep", "1000", NULL };
        pid_t sa = spawn_starter("pd-dead", a);
        pid_t ja = job_root("pd-dead");
        CU_ASSERT_FATAL(ja > 1);
        procd_client *c = NULL;
        CU_ASSERT_EQUAL_FATAL(procd_connect(sock, &c, NULL), PROCD_OK);
        procd_family_info *fi = NULL;
        size_t n = 0;
        bool registered = false;
        for (int i = 0; i < 200 && !registered; i++, usleep(10000)) {
                registered = procd_dump(c, ja, &fi, &n, NULL) == PROCD_OK && n > 0;
                procd_family_info_free(fi, n);
        }
        CU_ASSERT_FATAL(registered);
        ts_kill_reap(sa);
        /* procd: the watcher's exit kills the job and removes the job cgroup */
        CU_ASSERT(wait_until(pid_gone, &ja, 10000));
        CU_ASSERT(wait_until(job_cg_gone, "pd-dead", 10000));
        CU_ASSERT(procd_dump(c, ja, &fi, &n, NULL) == PROCD_E_FAMILY_NOT_FOUND);
        procd_disconnect(c);
        CU_ASSERT(file_has("pd1", ".log", "killing the family"));
        /* the rest of its cgroups (procd was not handed them): the next starter */
        const char *with_procd[] = { "--socket", sock, NULL };
        sweep_with_starter("pd-next", with_procd);
        CU_ASSERT(top_cg_gone("pd-dead"));
        procd_stop(pd, sock);
}

static void test_procd_restart_mid_job(void)
{
        if (!ts_need_root("starter crash tests") || !ts_cgroup_base())
                return;
        char sock[PATH_MAX], state[PATH_MAX], rep[PATH_MAX], rep2[PATH_MAX];
        tmp_path(sock, sizeof sock, "pd2", "");
        mkdir(sock, 0755);
        snprintf(state, sizeof state, "%s/procd.state", sock);
        strcat(sock, "/procd.sock");
        tmp_path(rep, sizeof rep, "pd-restart", ".json");
        tmp_path(rep2, sizeof rep2, "pd-forgot", ".json");
        pid_t pd = procd_start(sock, "pd2");
        CU_ASSERT_FATAL(pd > 1);
        const char *a[] = { "--socket", sock, "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name",
                            "pd-restart", "--report", rep, "--", "/bin/sleep", "3", NULL };
        pid_t sa = spawn_starter("pd-restart", a);
        CU_ASSERT_FATAL(job_root("pd-restart") > 1);
        usleep(300000); /* registered by now (the job sleeps 3 s) */
        ts_kill_reap(pd);
        pd = procd_start(sock, "pd2");
        CU_ASSERT_FATAL(pd > 1);
        int st = ts_wait(sa, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CU_ASSERT(file_has("pd-restart", ".json", "\"tracker\": \"procd\""));
        CU_ASSERT(top_cg_gone("pd-restart"));

        /* started again without its state: the job is forgotten, the report says so */
        const char *b[] = { "--socket", sock, "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "pd-forgot",
                            "--report", rep2, "--", "/bin/sleep", "3", NULL };
        pid_t sb = spawn_starter("pd-forgot", b);
        CU_ASSERT_FATAL(job_root("pd-forgot") > 1);
        usleep(300000);
        ts_kill_reap(pd);
        unlink(state);
        pd = procd_start(sock, "pd2");
        CU_ASSERT_FATAL(pd > 1);
        st = ts_wait(sb, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CU_ASSERT(file_has("pd-forgot", ".json", "\"tracker\": \"embedded\""));
        CU_ASSERT(file_has("pd-forgot", ".err", "using the embedded tracker"));
        CU_ASSERT(top_cg_gone("pd-forgot"));
        procd_stop(pd, sock);
}

int main(void)
{
        snprintf(tmpdir, sizeof tmpdir, "/tmp/procd-starter-crash.XXXXXX");
        if (!mkdtemp(tmpdir))
                return 2;
        chmod(tmpdir, 0755);
        CU_TestInfo tests[] = {
                { "embedded: a SIGKILLed starter's job is swept by the next", test_embedded_sigkill },
                { "procd: a SIGKILLed starter's job is killed by procd", test_procd_sigkill },
                { "procd restarted mid-job: reconnect, or embedded when forgotten", test_procd_restart_mid_job },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = { { "starter crash", NULL, NULL, NULL, NULL, tests }, CU_SUITE_INFO_NULL };
        int rc = ts_run(suites);
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", tmpdir);
        return rc;
}
