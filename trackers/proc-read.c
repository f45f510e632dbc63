/* proc-read.c - the parsers of one process's /proc files and the small readers of one
 * pid (see proc-read.h). */
#include "proc-read.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* ---- parsers ------------------------------------------------------------------------ */

/* Next space-separated field as signed / unsigned; *p advances past it. */
static int next_i64(const char **p, long long *out)
{
        const char *s = *p;
        while (*s == ' ')
                s++;
        if (*s == '\0' || *s == '\n')
                return -EINVAL;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || (*end != ' ' && *end != '\n' && *end != '\0'))
                return -EINVAL;
        *out = v;
        *p = end;
        return 0;
}

static int next_u64(const char **p, uint64_t *out)
{
        const char *s = *p;
        while (*s == ' ')
                s++;
        if (*s < '0' || *s > '9')
                return -EINVAL;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || (*end != ' ' && *end != '\n' && *end != '\0'))
                return -EINVAL;
        *out = v;
        *p = end;
        return 0;
}

int tr_parse_proc_stat(const char *text, long page_size, tr_proc *out)
{
        /* "pid (comm) S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
         *  utime stime cutime cstime priority nice threads itreal starttime vsize rss ..."
         * comm may hold spaces and ')': the fixed fields restart after the LAST ')'. */
        const char *p = text;
        long long v;
        if (next_i64(&p, &v) < 0 || v <= 0 || v > INT32_MAX)
                return -EINVAL;
        pid_t pid = (pid_t) v;
        if (strncmp(p, " (", 2) != 0)
                return -EINVAL;
        const char *close = strrchr(p, ')');
        if (!close || close[1] != ' ' || close[2] == '\0')
                return -EINVAL;
        p = close + 2;
        char state = *p++;
        if (!isalpha((unsigned char) state) || *p != ' ')
                return -EINVAL;

        long long f[22]; /* fields 4..21 (signed), then 22.. unsigned below */
        for (int field = 4; field <= 21; field++)
                if (next_i64(&p, &f[field]) < 0)
                        return -EINVAL;
        uint64_t start, vsize;
        long long rss;
        if (next_u64(&p, &start) < 0 || next_u64(&p, &vsize) < 0 || next_i64(&p, &rss) < 0)
                return -EINVAL;
        if (f[14] < 0 || f[15] < 0)
                return -EINVAL;
        /* 25 rsslim .. 32 blocked, 33 sigignore: optional (older formats may stop early) */
        uint64_t sigignore = 0, x;
        int field = 25;
        for (; field <= 33 && next_u64(&p, &x) == 0; field++)
                if (field == 33)
                        sigignore = x;

        out->pid = pid;
        out->state = state;
        out->ppid = (pid_t) f[4];
        out->pgrp = (pid_t) f[5];
        out->session = (pid_t) f[6];
        out->utime_ticks = (uint64_t) f[14];
        out->stime_ticks = (uint64_t) f[15];
        out->cutime_ticks = f[16] > 0 ? (uint64_t) f[16] : 0;
        out->cstime_ticks = f[17] > 0 ? (uint64_t) f[17] : 0;
        out->sigignore = field > 33 ? sigignore : 0;
        out->start_ticks = start;
        out->vsize_bytes = vsize;
        out->rss_bytes = rss > 0 ? (uint64_t) rss * (uint64_t) (page_size > 0 ? page_size : 4096) : 0;
        return 0;
}

/* The line starting with key (at a line start) or NULL; returns a pointer after the key. */
static const char *find_key(const char *text, const char *key)
{
        size_t klen = strlen(key);
        const char *line = text;
        while (line && *line) {
                if (strncmp(line, key, klen) == 0)
                        return line + klen;
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        return NULL;
}

static int stat_read_file(int dirfd, const char *file, tr_proc *out)
{
        char buf[1024];
        int r = tr_read_file_at(dirfd, file, buf, sizeof buf, NULL);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;
        memset(out, 0, sizeof *out);
        return tr_parse_proc_stat(buf, sysconf(_SC_PAGESIZE), out);
}

int tr_proc_stat_read(pid_t pid, tr_proc *out)
{
        if (pid <= 0)
                return -EINVAL;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        return stat_read_file(AT_FDCWD, path, out);
}

int tr_proc_stat_read_at(int proc_dirfd, tr_proc *out)
{
        return stat_read_file(proc_dirfd, "stat", out);
}

int tr_parse_proc_status(const char *text, tr_proc *out)
{
        const char *u = find_key(text, "Uid:");
        if (!u)
                return -EINVAL;
        char *end;
        errno = 0;
        unsigned long uid = strtoul(u, &end, 10);
        if (errno || end == u)
                return -EINVAL;

        int n = 0;
        const char *g = find_key(text, "Groups:");
        if (g) {
                for (;;) {
                        while (*g == ' ' || *g == '\t')
                                g++;
                        if (*g < '0' || *g > '9')
                                break;
                        errno = 0;
                        unsigned long gid = strtoul(g, &end, 10);
                        if (errno)
                                return -EINVAL;
                        /* more than TR_SCAN_MAX_GROUPS: the rest is not recorded */
                        if (n < TR_SCAN_MAX_GROUPS)
                                out->groups[n++] = (gid_t) gid;
                        g = end;
                }
        }
        out->uid = (uid_t) uid;
        out->ngroups = n;
        out->has_status = true;
        return 0;
}

static int key_u64(const char *text, const char *key, uint64_t *out)
{
        const char *v = find_key(text, key);
        if (!v)
                return -EINVAL;
        while (*v == ' ' || *v == '\t')
                v++;
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || end == v)
                return -EINVAL;
        *out = x;
        return 0;
}

int tr_parse_proc_io(const char *text, tr_proc *out)
{
        uint64_t r, w;
        if (key_u64(text, "read_bytes:", &r) < 0 || key_u64(text, "write_bytes:", &w) < 0)
                return -EINVAL;
        out->io_read_bytes = r;
        out->io_write_bytes = w;
        out->has_io = true;
        return 0;
}

bool tr_environ_has(const char *env, size_t len, const char *marker)
{
        if (!env || !marker)
                return false;
        size_t mlen = strlen(marker);
        const char *p = env, *end = env + len;
        while (p < end) {
                size_t elen = strnlen(p, (size_t) (end - p));
                if (elen == mlen && memcmp(p, marker, mlen) == 0)
                        return true;
                p += elen + 1;
        }
        return false;
}

/* ---- one pid ------------------------------------------------------------------------ */

int tr_pid_start_ticks(pid_t pid, uint64_t *out)
{
        tr_proc p;
        int r = tr_proc_stat_read(pid, &p);
        if (r < 0)
                return r;
        *out = p.start_ticks;
        return 0;
}

bool tr_pid_alive(pid_t pid)
{
        tr_proc p;
        return tr_proc_stat_read(pid, &p) == 0 && p.state != 'Z' && p.state != 'X';
}

bool tr_pid_alive_as(pid_t pid, uint64_t start_ticks)
{
        tr_proc p;
        return tr_proc_stat_read(pid, &p) == 0 && p.start_ticks == start_ticks && p.state != 'Z' && p.state != 'X';
}

int tr_proc_exe_id(pid_t pid, tr_exe_id *out)
{
        if (pid <= 0)
                return -EINVAL;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/exe", (int) pid);
        struct stat st;
        if (stat(path, &st) < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        out->dev = (uint64_t) st.st_dev;
        out->ino = (uint64_t) st.st_ino;
        return 0;
}

int tr_proc_ppid(pid_t pid, pid_t *ppid)
{
        tr_proc p;
        int r = tr_proc_stat_read(pid, &p);
        if (r < 0)
                return r;
        *ppid = p.ppid;
        return 0;
}

/* /proc/PID/status into buf: its first size - 1 bytes are enough for the fields read here
 * (Tgid: on the 4th line, Uid: near the top), so a cut file is no failure. */
static int read_status_head(pid_t pid, char *buf, size_t size)
{
        if (pid <= 0)
                return -EINVAL;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        int r = tr_read_file_at(AT_FDCWD, path, buf, size, NULL);
        if (r < 0 && r != -EFBIG)
                return r == -ENOENT ? -ESRCH : r;
        buf[size - 1] = '\0';
        return 0;
}

int tr_proc_uid(pid_t pid, uid_t *uid)
{
        char buf[8192];
        int r = read_status_head(pid, buf, sizeof buf);
        if (r < 0)
                return r;
        tr_proc p = { .pid = pid };
        r = tr_parse_proc_status(buf, &p);
        if (r < 0)
                return r;
        *uid = p.uid;
        return 0;
}

int tr_proc_uid_checked(pid_t pid, uint64_t start_ticks, uid_t *uid)
{
        uid_t u;
        uint64_t now;
        int r = tr_proc_uid(pid, &u);
        if (r < 0)
                return r;
        /* read after the uid: the pid named the same process all along */
        r = tr_pid_start_ticks(pid, &now);
        if (r < 0)
                return r;
        if (now != start_ticks)
                return -ESRCH;
        *uid = u;
        return 0;
}

int tr_proc_tgid(pid_t pid, pid_t *tgid)
{
        char buf[1024];
        int r = read_status_head(pid, buf, sizeof buf);
        if (r < 0)
                return r;
        const char *t = strstr(buf, "\nTgid:");
        int v;
        if (!t || sscanf(t + 6, "%d", &v) != 1)
                return -EINVAL;
        *tgid = v;
        return 0;
}

bool tr_proc_is_thread(pid_t pid)
{
        /* pidfd_open refuses a thread that leads no thread group (EINVAL): one cheap call
         * instead of generating /proc/PID/status */
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (fd >= 0) {
                close(fd);
                return false;
        }
        if (errno == ESRCH)
                return false; /* gone */
        /* EINVAL or ENOENT (kernels differ) for a thread; ENOSYS: no pidfds */
        pid_t tgid = 0;
        return tr_proc_tgid(pid, &tgid) == 0 && tgid != pid;
}

bool tr_proc_is_own_thread(pid_t pid)
{
        if (pid <= 0)
                return false;
        char task[64];
        snprintf(task, sizeof task, "/proc/self/task/%d", (int) pid);
        return access(task, F_OK) == 0;
}

int tr_proc_age_seconds(uint64_t start_ticks, double *out)
{
        char buf[128];
        double up;
        long hz = sysconf(_SC_CLK_TCK);
        if (start_ticks == 0 || hz <= 0)
                return -EINVAL;
        int r = tr_read_file_at(AT_FDCWD, "/proc/uptime", buf, sizeof buf, NULL);
        if (r < 0)
                return r;
        if (sscanf(buf, "%lf", &up) != 1)
                return -EINVAL;
        double age = up - (double) start_ticks / (double) hz;
        *out = age < 0 ? 0 : age;
        return 0;
}

static int ident_append(tr_proc_ident **out, size_t *n, size_t *cap, tr_proc_ident id)
{
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 8;
                tr_proc_ident *a = realloc(*out, c * sizeof *a);
                if (!a)
                        return -ENOMEM;
                *out = a;
                *cap = c;
        }
        (*out)[(*n)++] = id;
        return 0;
}

int tr_proc_children(pid_t pid, tr_proc_ident **out, size_t *n, size_t *cap)
{
        if (pid <= 0)
                return 0;
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d/task", (int) pid);
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_closedir_ DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d)
                return 0;
        dfd = -1; /* owned by d now */
        struct dirent *e;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                char name[300];
                snprintf(name, sizeof name, "%s/children", e->d_name);
                _cleanup_free_ char *text = NULL;
                if (tr_read_file_alloc_at(dirfd(d), name, &text, NULL, NULL) < 0)
                        continue;
                for (char *save = NULL, *t = strtok_r(text, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
                        tr_proc_ident id = { 0, 0 };
                        if (tr_parse_pid(t, &id.pid) == 0 && tr_pid_start_ticks(id.pid, &id.start_ticks) == 0 &&
                            ident_append(out, n, cap, id) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}
