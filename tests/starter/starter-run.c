/* starter-run.c - see starter-run.h. */
#include "starter-run.h"
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procd/client.h"
#include "testsupport.h"
#include "trackers/util.h"

/* Set once by sr_main before any test runs. */
static char scratch[PATH_MAX];
static char self_exe[PATH_MAX];

const char *sr_self_exe(void)
{
        return self_exe;
}

const char *sr_starter_bin(void)
{
        static char bin[PATH_MAX];
        const char *other = getenv("PROCD_TEST_STARTER_BIN");
        if (other && *other)
                snprintf(bin, sizeof bin, "%s", other);
        else
                snprintf(bin, sizeof bin, "%s/starter/procd-starter", ts_build_dir());
        return bin;
}

void sr_path(char *buf, size_t size, const char *tag, const char *ext)
{
        snprintf(buf, size, "%s/%s%s", scratch, tag, ext);
}

/* fork + exec argv with stdin /dev/null and stdout, stderr to the given files. */
static pid_t spawn_to(const char *const *argv, const char *out, const char *err, int out_flags)
{
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                int o = open(out, O_WRONLY | O_CREAT | out_flags, 0644);
                int e = strcmp(out, err) == 0 ? o : open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                int in = open("/dev/null", O_RDONLY);
                if (o < 0 || e < 0 || in < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
                        _exit(99);
                execv(argv[0], (char **) argv);
                _exit(98);
        }
        return pid;
}

pid_t sr_spawn(const char *tag, const char *const *args)
{
        char out[PATH_MAX], err[PATH_MAX];
        sr_path(out, sizeof out, tag, ".out");
        sr_path(err, sizeof err, tag, ".err");
        const char *argv[96];
        int n = 0;
        argv[n++] = sr_starter_bin();
        for (int i = 0; args[i] && n < 95; i++)
                argv[n++] = args[i];
        argv[n] = NULL;
        return spawn_to(argv, out, err, O_TRUNC);
}

int sr_wait_code(pid_t pid, int timeout_ms)
{
        int st = ts_wait(pid, timeout_ms);
        if (st == -ETIMEDOUT) {
                ts_kill_reap(pid);
                return -2;
        }
        return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void sr_read(const char *tag, const char *ext, char *buf, size_t size)
{
        char p[PATH_MAX];
        sr_path(p, sizeof p, tag, ext);
        buf[0] = '\0';
        tr_read_file_at(AT_FDCWD, p, buf, size, NULL);
}

bool sr_cgroup_exists(const char *tag, const char *sub, bool say)
{
        const tr_hierarchies *hs = ts_hierarchies();
        char cg[PATH_MAX], path[PATH_MAX + 64], dir[PATH_MAX];
        ts_cgroup_path(cg, sizeof cg, tag);
        snprintf(path, sizeof path, "%s%s%s", cg, sub ? "/" : "", sub ? sub : "");
        for (int i = 0; i < hs->n; i++) {
                if (tr_hierarchy_fs_path(&hs->h[i], path, dir, sizeof dir, NULL) < 0 || access(dir, F_OK) != 0)
                        continue;
                if (say)
                        printf("\nleft behind: %s\n", dir);
                return true;
        }
        return false;
}

pid_t sr_job_root(const char *tag)
{
        const tr_hierarchies *hs = ts_hierarchies();
        char cg[PATH_MAX], job[PATH_MAX + 8], dir[PATH_MAX], f[PATH_MAX + 16], procs[256];
        snprintf(job, sizeof job, "%s/job", ts_cgroup_path(cg, sizeof cg, tag));
        tr_hierarchy_fs_path(&hs->h[hs->v2 >= 0 ? hs->v2 : 0], job, dir, sizeof dir, NULL);
        snprintf(f, sizeof f, "%s/cgroup.procs", dir);
        for (int i = 0; i < 1000; i++) {
                procs[0] = '\0';
                if (tr_read_file_at(AT_FDCWD, f, procs, sizeof procs, NULL) > 0 && atoi(procs) > 1)
                        return (pid_t) atoi(procs);
                usleep(10000);
        }
        return -1;
}

int sr_count_entries(const char *dir, const char *prefix)
{
        DIR *d = opendir(dir);
        int n = 0;
        struct dirent *de;
        while (d && (de = readdir(d)))
                n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
        if (d)
                closedir(d);
        return n;
}

bool sr_runs(pid_t pid, const char *comm)
{
        char f[64], text[64] = "";
        snprintf(f, sizeof f, "/proc/%d/comm", (int) pid);
        tr_read_file_at(AT_FDCWD, f, text, sizeof text, NULL);
        text[strcspn(text, "\n")] = '\0';
        return strcmp(text, comm) == 0;
}

pid_t sr_procd_start(const char *sock, const char *logtag)
{
        ph_daemon d = { 0 };
        snprintf(d.socket, sizeof d.socket, "%s", sock);
        sr_path(d.log, sizeof d.log, logtag, ".log");
        unlink(sock);
        return ph_start_in(&d, NULL, NULL, 5000) == 0 ? d.pid : -1;
}

void sr_procd_stop(pid_t pid, const char *sock)
{
        ph_daemon d = { .pid = pid }; /* no directory of its own: the scratch dir stays */
        snprintf(d.socket, sizeof d.socket, "%s", sock);
        ph_stop(&d, 5000);
}

int sr_main(int argc, char **argv, const char *prefix, int (*helper)(int argc, char **argv), CU_SuiteInfo *suites)
{
        if (helper && argc > 2 && strcmp(argv[1], "helper") == 0) {
                int rc = helper(argc, argv);
                fflush(NULL);
                _exit(rc);
        }
        if (!ts_need_root(prefix)) /* job cgroups, other users' jobs */
                return TS_SKIP_EXIT;
        ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        if (n <= 0)
                return 2;
        self_exe[n] = '\0';
        snprintf(scratch, sizeof scratch, "/tmp/%s.XXXXXX", prefix);
        if (!mkdtemp(scratch))
                return 2;
        chmod(scratch, 0755);
        if (access(sr_starter_bin(), X_OK) != 0) {
                fprintf(stderr, "procd-starter not built at %s\n", sr_starter_bin());
                return 2;
        }
        int rc = ts_run(suites);
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
        if (rc == 0 && system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", scratch);
        return rc;
}
