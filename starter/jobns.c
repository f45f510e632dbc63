/* jobns.c - the job's private /tmp and PID namespace (see jobns.h). */
#include "jobns.h"

#include "trackers/util.h"

#include <errno.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

int st_jobns_prepare(st_jobns *ns, const st_options *o, tr_error *err)
{
        memset(ns, 0, sizeof *ns);
        ns->private_tmp = o->private_tmp;
        ns->pid_ns = o->pid_namespace;
        if (!ns->private_tmp)
                return 0;
        if (!o->private_tmp_dir) {
                uint64_t size = o->private_tmp_size ? o->private_tmp_size
                              : o->limits.has_memory_max && o->limits.memory_max != UINT64_MAX ? o->limits.memory_max
                                                                                               : 0;
                if (size)
                        snprintf(ns->tmpfs_opts, sizeof ns->tmpfs_opts, "mode=1777,size=%llu", (unsigned long long) size);
                else
                        snprintf(ns->tmpfs_opts, sizeof ns->tmpfs_opts, "mode=1777");
                return 0;
        }
        /* checked now, made after the job cgroup (st_jobns_make_dir) */
        struct stat st;
        if (stat(o->private_tmp_dir, &st) < 0)
                return tr_error_setx(err, errno, "--private-tmp=%s", o->private_tmp_dir);
        if (!S_ISDIR(st.st_mode))
                return tr_error_set(err, ENOTDIR, "--private-tmp=%s: not a directory", o->private_tmp_dir);
        ns->parent_dir = o->private_tmp_dir;
        return 0;
}

/* "procd-tmp." and six random characters, the way mkdtemp names its directories */
static int random_name(char *buf, size_t size)
{
        static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        unsigned char rnd[6];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd)
                return -EIO;
        char suffix[7];
        for (size_t i = 0; i < sizeof rnd; i++)
                suffix[i] = chars[rnd[i] % (sizeof chars - 1)];
        suffix[6] = '\0';
        snprintf(buf, size, "%s%s", ST_JOBNS_DIR_PREFIX, suffix);
        return 0;
}

int st_jobns_make_dir(st_jobns *ns, st_jobns_record_fn record, void *arg, tr_error *err)
{
        if (!ns->private_tmp || !ns->parent_dir)
                return 0;
        for (int tries = 0; !ns->job_dir; tries++) {
                char name[32];
                if (tries == 100 || random_name(name, sizeof name) < 0)
                        return tr_error_set(err, EEXIST, "--private-tmp=%s: no free name for the job's directory",
                                            ns->parent_dir);
                char *path;
                if (asprintf(&path, "%s/%s", ns->parent_dir, name) < 0)
                        return tr_error_set(err, ENOMEM, "out of memory");
                /* recorded first: a sweep finds whatever part of it exists, whenever the
                 * starter dies */
                int r = record ? record(arg, path, err) : 0;
                if (r < 0) {
                        free(path);
                        return r;
                }
                if (mkdir(path, 0700) == 0) {
                        ns->job_dir = path;
                        break;
                }
                int e = errno;
                free(path);
                if (e != EEXIST)
                        return tr_error_setx(err, e, "--private-tmp=%s: making the job's directory", ns->parent_dir);
        }
        static const char *const names[2] = { "tmp", "var-tmp" };
        for (int i = 0; i < 2; i++) {
                char *path = ns->src[i];
                snprintf(path, sizeof ns->src[i], "%s/%s", ns->job_dir, names[i]);
                if (mkdir(path, 0700) < 0 || chmod(path, 01777) < 0)
                        return tr_error_setx(err, errno, "--private-tmp: mkdir %s", path);
        }
        return 0;
}

/* "/proc/self/fd/N" into buf (32 bytes), async-signal-safe */
static void fd_path(char *buf, int fd)
{
        static const char pre[] = "/proc/self/fd/";
        char digits[12];
        int n = 0;
        do
                digits[n++] = (char) ('0' + fd % 10);
        while ((fd /= 10) > 0);
        memcpy(buf, pre, sizeof pre - 1);
        for (int i = 0; i < n; i++)
                buf[sizeof pre - 1 + (size_t) i] = digits[n - 1 - i];
        buf[sizeof pre - 1 + (size_t) n] = '\0';
}

/* /tmp or /var/tmp (a target the host lacks is left alone) from src_fd, or a tmpfs */
static int mount_tmp(const st_jobns *ns, const char *target, int src_fd)
{
        struct stat st;
        if (stat(target, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (src_fd >= 0) {
                char src[32];
                fd_path(src, src_fd);
                return mount(src, target, NULL, MS_BIND, NULL) < 0 ? -errno : 0;
        }
        return mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, ns->tmpfs_opts) < 0 ? -errno : 0;
}

static int private_tmp(const st_jobns *ns)
{
        /* both sources opened (in this mount namespace) before the first mount can hide one */
        int fd[2] = { -1, -1 };
        for (int i = 0; ns->job_dir && i < 2; i++) {
                fd[i] = open(ns->src[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd[i] < 0) {
                        int e = -errno;
                        if (i)
                                close(fd[0]);
                        return e;
                }
        }
        int r = mount_tmp(ns, "/tmp", fd[0]);
        if (r == 0)
                r = mount_tmp(ns, "/var/tmp", fd[1]);
        for (int i = 0; i < 2; i++)
                if (fd[i] >= 0)
                        close(fd[i]);
        return r;
}

int st_jobns_mount(const st_jobns *ns)
{
        /* our mounts stay ours; the host's still reach us */
        if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
                return -errno;
        if (ns->private_tmp) {
                int r = private_tmp(ns);
                if (r < 0)
                        return r;
        }
        if (ns->pid_ns && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return -errno;
        return 0;
}

/* The init's one piece of state, for its signal handler (the init is a copy of the starter
 * that never returns to it). */
static volatile pid_t init_child;

static void forward(int sig)
{
        pid_t c = init_child;
        if (c > 1)
                kill(c, sig);
}

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGCONT, SIGTSTP };

int st_jobns_init(int keep_fd)
{
        /* handlers before the command exists: a signal in between is forwarded to nobody
         * (a namespace init ignores signals it has no handler for) */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = forward;
        sa.sa_flags = SA_RESTART;
        for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
                sigaction(forwarded[i], &sa, NULL);
        pid_t c = (pid_t) syscall(SYS_clone, (unsigned long) SIGCHLD, 0UL, NULL, NULL, 0UL);
        if (c < 0)
                return -errno;
        if (c == 0) {
                struct sigaction dfl;
                memset(&dfl, 0, sizeof dfl);
                dfl.sa_handler = SIG_DFL;
                for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
                        sigaction(forwarded[i], &dfl, NULL);
                return 0;
        }
        init_child = c;
        prctl(PR_SET_NAME, "procd-init", 0, 0, 0);
        /* the init holds nothing of the job's: the exec-error pipe must reach EOF when the
         * command execs, the job's files close with it */
        close(keep_fd);
        if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
                for (int fd = 3; fd < 1024; fd++)
                        close(fd);
        for (;;) {
                int st;
                pid_t p = waitpid(-1, &st, __WALL);
                if (p < 0 && errno == EINTR)
                        continue;
                if (p < 0)
                        _exit(127); /* no child left and the command's status never seen */
                if (p != c)
                        continue; /* an orphan of the namespace, reaped */
                if (WIFEXITED(st))
                        _exit(WEXITSTATUS(st));
                if (WIFSIGNALED(st))
                        _exit(128 + WTERMSIG(st));
        }
}

/* Remove name (a directory under dirfd) and everything below it: depth first, no symlink
 * followed, no other filesystem entered.  The filesystem is told by the DIRECTORIES' st_dev
 * only: on overlayfs (a container's /var/tmp, say) a regular file reports the st_dev of the
 * layer that holds it, not the overlay's, so nftw's FTW_MOUNT skipped every file the job
 * wrote there and the directory stayed (seen in a qemu guest whose root is an overlay). */
static void rm_tree_at(int dirfd, const char *name, dev_t dev)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != dev)
                return; /* gone, not a directory, or a mount point: left alone */
        int dfd = dup(fd);
        _cleanup_closedir_ DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d) {
                if (dfd >= 0)
                        close(dfd);
                return;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                bool is_dir = e->d_type == DT_DIR;
                if (e->d_type == DT_UNKNOWN) {
                        struct stat cst;
                        is_dir = fstatat(fd, e->d_name, &cst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(cst.st_mode);
                }
                if (is_dir)
                        rm_tree_at(fd, e->d_name, dev);
                else
                        unlinkat(fd, e->d_name, 0);
        }
        unlinkat(dirfd, name, AT_REMOVEDIR);
}

bool st_jobns_remove_path(const char *path)
{
        const char *slash = strrchr(path, '/');
        if (path[0] != '/' || !slash || strncmp(slash + 1, ST_JOBNS_DIR_PREFIX, strlen(ST_JOBNS_DIR_PREFIX)) != 0)
                return false; /* not a name this starter makes: left alone */
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                rm_tree_at(AT_FDCWD, path, st.st_dev);
        return access(path, F_OK) != 0;
}

void st_jobns_remove_dir(st_jobns *ns)
{
        if (ns->job_dir && !st_jobns_remove_path(ns->job_dir))
                fprintf(stderr, "procd-starter: warning: could not remove %s\n", ns->job_dir);
        free(ns->job_dir);
        ns->job_dir = NULL;
}

void st_jobns_free(st_jobns *ns)
{
        st_jobns_remove_dir(ns);
        memset(ns, 0, sizeof *ns);
}
