/* benchutil.c - helpers the benchmark programs share. */
#include "benchutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trackers/cgroup.h"

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return (x > y) - (x < y);
}

uint64_t bench_median(uint64_t *v, size_t n)
{
        qsort(v, n, sizeof *v, cmp_u64);
        return v[n / 2];
}

double bench_loadavg(void)
{
        double l[1] = { -1.0 };
        return getloadavg(l, 1) == 1 ? l[0] : -1.0;
}

const char *bench_load_note(char *buf, size_t size)
{
        double l = bench_loadavg();
        snprintf(buf, size, "load %.2f%s", l, l > 2.0 ? " WARNING: load above 2, not a figure" : "");
        return buf;
}

/* A small /proc file into buf, NUL-terminated: false when it cannot be read or is empty. */
static bool read_small(const char *path, char *buf, size_t size)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, size - 1);
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        return true;
}

/* field (1-based) of a one-line /proc file; in a stat file counted after the command's ')' */
static uint64_t proc_field(const char *path, int field)
{
        char buf[2048];
        if (!read_small(path, buf, sizeof buf))
                return 0;
        const char *p = buf;
        if (field > 2) {
                p = strrchr(buf, ')');
                for (int f = 2; p && f < field; f++)
                        p = strchr(p + 1, ' ');
                if (p)
                        p++;
        }
        return p ? strtoull(p, NULL, 10) : 0;
}

void bench_proc_cpu(pid_t pid, uint64_t *ticks, uint64_t *run_ns)
{
        char path[128];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        *ticks = proc_field(path, 14) + proc_field(path, 15);
        *run_ns = 0;
        snprintf(path, sizeof path, "/proc/%d/task", (int) pid);
        DIR *d = opendir(path);
        for (struct dirent *e; d && (e = readdir(d));) {
                if (e->d_name[0] == '.')
                        continue;
                char ss[300];
                snprintf(ss, sizeof ss, "%s/%s/schedstat", path, e->d_name);
                *run_ns += proc_field(ss, 1);
        }
        if (d)
                closedir(d);
}

uint64_t bench_proc_rw_syscalls(pid_t pid)
{
        char path[128], buf[512];
        snprintf(path, sizeof path, "/proc/%d/io", (int) pid);
        if (!read_small(path, buf, sizeof buf))
                return 0;
        uint64_t calls = 0;
        for (const char *key = buf; (key = strstr(key, "sysc")); key += 4)
                if (!strncmp(key, "syscr: ", 7) || !strncmp(key, "syscw: ", 7))
                        calls += strtoull(key + 7, NULL, 10);
        return calls;
}

void bench_enter_cgroup(void *cg)
{
        if (cg && tr_cgroup_attach(cg, getpid(), NULL) < 0)
                dprintf(2, "cannot enter the service cgroup");
}

int bench_daemon_setup(const char *prog, tr_hierarchies *hs)
{
        if (geteuid() != 0) {
                fprintf(stderr, "%s: needs root\n", prog);
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        tr_error err = { 0 };
        if (tr_hierarchies_discover(hs, &err) < 0) {
                fprintf(stderr, "%s: %s\n", prog, err.msg);
                return 1;
        }
        return 0;
}

int bench_tmpfs_mount(const char *prog, char *dir, size_t size)
{
        snprintf(dir, size, "/tmp/%s-state.%d", prog, (int) getpid());
        if (mkdir(dir, 0700) < 0 || mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m") < 0) {
                int e = errno;
                fprintf(stderr, "%s: tmpfs at %s: %s\n", prog, dir, strerror(e));
                rmdir(dir);
                dir[0] = '\0';
                return -e;
        }
        return 0;
}

void bench_tmpfs_drop(const char *dir)
{
        if (!*dir)
                return;
        umount2(dir, MNT_DETACH);
        rmdir(dir);
}
