/* classic-procs.c - see classic-procs.h. */
#include "classic-procs.h"

#include "testsupport.h"
#include "trackers/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CP_MAX_PIDS 256

static pid_t reported[CP_MAX_PIDS];
static int nreported;

void cp_burn_cpu_ms(int ms)
{
        struct timespec ts;
        volatile unsigned long x = 0;
        for (;;) {
                for (int i = 0; i < 100000; i++)
                        x++;
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
                if (ts.tv_sec * 1000 + ts.tv_nsec / 1000000 >= ms)
                        return;
        }
}

static _Noreturn void forker_child(char what, int burn_ms, int resp)
{
        if (what == 'b') {
                cp_burn_cpu_ms(burn_ms);
                _exit(0);
        }
        if (what == 'd') {
                pid_t m = fork();
                if (m != 0)
                        _exit(m < 0);
                setsid();
        }
        pid_t me = getpid();
        if (write(resp, &me, sizeof me) != sizeof me)
                _exit(1);
        close(resp);
        for (;;)
                pause();
}

static _Noreturn void forker_loop(int cmd, int resp)
{
        for (;;) {
                char req[8];
                if (read(cmd, req, sizeof req) != sizeof req)
                        _exit(0);
                int burn_ms;
                memcpy(&burn_ms, req + 4, sizeof burn_ms);
                int p[2];
                if (pipe(p) < 0)
                        _exit(1);
                pid_t c = fork();
                if (c < 0)
                        _exit(1);
                if (c == 0) {
                        close(p[0]);
                        forker_child(req[0], burn_ms, p[1]);
                }
                close(p[1]);
                pid_t got = c;
                if (req[0] == 'b') {
                        waitpid(c, NULL, 0);
                } else {
                        if (read(p[0], &got, sizeof got) != sizeof got)
                                got = -EIO;
                        if (req[0] == 'd')
                                waitpid(c, NULL, 0); /* the middle process exited */
                }
                close(p[0]);
                if (write(resp, &got, sizeof got) != sizeof got)
                        _exit(1);
        }
}

int cp_forker_start(cp_forker *f)
{
        int a[2], b[2];
        int r = ts_pipes(a, b);
        if (r < 0)
                return r;
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                close(a[1]);
                close(b[0]);
                forker_loop(a[0], b[1]);
        }
        close(a[0]);
        close(b[1]);
        f->pid = pid;
        f->cmd_fd = a[1];
        f->resp_fd = b[0];
        return 0;
}

pid_t cp_forker_spawn(cp_forker *f, char what, int burn_ms)
{
        char req[8] = { what };
        memcpy(req + 4, &burn_ms, sizeof burn_ms);
        pid_t got;
        if (write(f->cmd_fd, req, sizeof req) != sizeof req)
                return -EIO;
        if (read(f->resp_fd, &got, sizeof got) != sizeof got)
                return -EIO;
        if (got > 1 && what != 'b' && nreported < CP_MAX_PIDS)
                reported[nreported++] = got;
        return got;
}

void cp_forker_kill(cp_forker *f)
{
        for (int i = 0; i < nreported; i++)
                if (reported[i] > 1)
                        kill(reported[i], SIGKILL);
        nreported = 0;
        if (f->pid > 1) {
                kill(f->pid, SIGKILL);
                waitpid(f->pid, NULL, 0);
        }
        close(f->cmd_fd);
        close(f->resp_fd);
        f->pid = 0;
}

static int read_small(const char *path, char *buf, size_t size)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return (int) n;
}

static const char *stat_after_comm(pid_t pid, char *buf, size_t size)
{
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        if (read_small(path, buf, size) < 0)
                return NULL;
        const char *p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p + 2 : NULL;
}

long long cp_cpu_ticks(pid_t pid)
{
        char buf[1024];
        const char *p = stat_after_comm(pid, buf, sizeof buf);
        /* p is at field 3 (state); utime and stime are fields 14 and 15 */
        for (int field = 3; field < 14 && p; field++) {
                p = strchr(p, ' ');
                if (p)
                        p++;
        }
        unsigned long long ut = 0, st = 0;
        if (!p || sscanf(p, "%llu %llu", &ut, &st) != 2)
                return -1;
        return (long long) (ut + st);
}

/* The pid's cgroup in one hierarchy: key "" is the v2 line, else a v1 controller. */
static bool cgroup_line(pid_t pid, const char *key, char *out, size_t size)
{
        char path[64], buf[4096];
        snprintf(path, sizeof path, "/proc/%d/cgroup", (int) pid);
        if (read_small(path, buf, sizeof buf) < 0)
                return false;
        char *save = NULL;
        for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *c1 = strchr(line, ':');
                char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c2 = '\0';
                if (strcmp(c1 + 1, key) == 0) {
                        snprintf(out, size, "%s", c2 + 1);
                        return true;
                }
        }
        return false;
}

bool cp_v2_cgroup(pid_t pid, char *out, size_t size)
{
        return cgroup_line(pid, "", out, size);
}

bool cp_held(pid_t pid)
{
        char buf[1024];
        const char *p = stat_after_comm(pid, buf, sizeof buf);
        if (p && (*p == 'T' || *p == 't'))
                return true;
        char cg[1024], path[1200], val[256];
        static const char *const v2_mounts[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
        if (cgroup_line(pid, "", cg, sizeof cg))
                for (size_t i = 0; i < 2; i++) {
                        snprintf(path, sizeof path, "%s%s/cgroup.events", v2_mounts[i], cg);
                        if (read_small(path, val, sizeof val) > 0) {
                                if (strstr(val, "frozen 1"))
                                        return true;
                                break;
                        }
                }
        if (cgroup_line(pid, "freezer", cg, sizeof cg)) {
                snprintf(path, sizeof path, "/sys/fs/cgroup/freezer%s/freezer.state", cg);
                if (read_small(path, val, sizeof val) > 0 && strncmp(val, "FROZEN", 6) == 0)
                        return true;
        }
        return false;
}

struct tr_cgroup *cp_service_cgroup(const char *name)
{
        if (!ts_cgroup_base())
                return NULL;
        char path[512];
        ts_cgroup_path(path, sizeof path, name);
        tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        if (tr_cgroup_create(ts_hierarchies(), path, &cg, &err) < 0) {
                printf("  cannot make cgroup %s: %s\n", path, err.msg);
                return NULL;
        }
        return cg;
}

void cp_enter_cgroup(void *cg)
{
        tr_error err = { 0 };
        if (cg && tr_cgroup_attach(cg, getpid(), &err) < 0)
                dprintf(2, "attach to the service cgroup: %s\n", err.msg);
}

int cp_tree_daemon_start(cp_tree_daemon *t, bool family_cgroups, const char *cg_name, const char *const *args)
{
        t->cg = NULL;
        if (family_cgroups) {
                unsetenv("PROCD_FAMILY_CGROUPS");
                t->cg = cp_service_cgroup(cg_name);
        } else {
                setenv("PROCD_FAMILY_CGROUPS", "off", 1); /* inherited by the daemon */
        }
        if (cc_daemon_start_with(&t->d, args, t->cg ? cp_enter_cgroup : NULL, t->cg) < 0)
                return 1;
        return cc_open(&t->c, t->d.addr, 0, 0) < 0;
}

int cp_tree_daemon_stop(cp_tree_daemon *t)
{
        cc_close(&t->c);
        int st = cc_daemon_stop(&t->d);
        tr_cgroup_free(t->cg);
        t->cg = NULL;
        return !(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
