#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* half of the smallest page size */
#define TR_SEQ_EOF_BELOW 2048

int tr_pread_all(int fd, char *buf, size_t size)
{
        if (size == 0)
                return -EINVAL;
        size_t off = 0;
        for (;;) {
                ssize_t n = pread(fd, buf + off, size - 1 - off, (off_t) off);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                off += (size_t) n;
                /* cgroup (kernfs) and /proc files are seq_files.  A single-record one
                 * (cpu.stat, memory.stat, /proc/PID/stat) hands its whole text to one read;
                 * an iterating one (cgroup.procs) stops a read only when its page cannot
                 * hold the next record, i.e. within one record of a full page.  So a read
                 * of less than half a page is EOF (every record here is far shorter), and
                 * the second pread that would only return 0 is saved.  A read near a page
                 * boundary is not EOF: 682 five-digit pids fill a page of cgroup.procs. */
                if ((size_t) n < TR_SEQ_EOF_BELOW && off < size - 1)
                        break;
                if (off == size - 1) {
                        char c;
                        ssize_t more = pread(fd, &c, 1, (off_t) off);
                        buf[off] = '\0';
                        if (more > 0)
                                return -EFBIG;
                        break;
                }
        }
        buf[off] = '\0';
        return (int) off;
}

int tr_read_file_at(int dirfd, const char *name, char *buf, size_t size, tr_error *err)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return tr_error_setx(err, errno, "open %s", name);
        int r = tr_pread_all(fd, buf, size);
        if (r < 0)
                return tr_error_setx(err, -r, "read %s", name);
        return r;
}

int tr_read_fd_grow(int fd, char **buf, size_t *cap)
{
        size_t off = 0;
        for (;;) {
                if (*cap - off < 2) {
                        size_t ncap = *cap ? *cap * 2 : 4096;
                        char *nb = realloc(*buf, ncap);
                        if (!nb)
                                return -ENOMEM;
                        *buf = nb;
                        *cap = ncap;
                }
                ssize_t n = read(fd, *buf + off, *cap - 1 - off);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                off += (size_t) n;
        }
        (*buf)[off] = '\0';
        return off > INT32_MAX ? INT32_MAX : (int) off;
}

int tr_read_file_alloc_at(int dirfd, const char *name, char **out, size_t *len, tr_error *err)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return tr_error_setx(err, errno, "open %s", name);
        _cleanup_free_ char *buf = NULL;
        size_t cap = 0;
        int r = tr_read_fd_grow(fd, &buf, &cap);
        if (r < 0)
                return tr_error_setx(err, -r, "read %s", name);
        if (len)
                *len = (size_t) r;
        *out = TR_TAKE_PTR(buf);
        return r;
}

int tr_write_file_at(int dirfd, const char *name, const char *value, tr_error *err)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return tr_error_setx(err, errno, "open %s for writing", name);
        size_t len = strlen(value);
        ssize_t n;
        do
                n = write(fd, value, len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return tr_error_setx(err, errno, "write '%s' to %s", value, name);
        if ((size_t) n != len)
                return tr_error_set(err, EIO, "short write of '%s' to %s", value, name);
        return 0;
}

char *tr_put_u64(char *w, uint64_t v)
{
        char buf[20]; /* UINT64_MAX has 20 digits */
        size_t i = sizeof buf;
        do {
                buf[--i] = (char) ('0' + v % 10);
                v /= 10;
        } while (v);
        memcpy(w, buf + i, sizeof buf - i);
        return w + (sizeof buf - i);
}

int tr_take_u64(const char **p, uint64_t *out)
{
        const char *s = *p;
        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        /* by hand: strtoull (locale, errno, sign and base handling) was ~150 instructions
         * a number, and a classic GET_USAGE parses ~11 (issue 20) */
        uint64_t v = 0;
        /* 19 digits cannot overflow (10^19 - 1 < 2^64): no check per digit (issue 20) */
        for (int n = 0; n < 19 && (unsigned) (*s - '0') < 10u; n++, s++)
                v = v * 10u + (unsigned) (*s - '0');
        for (; (unsigned) (*s - '0') < 10u; s++) {
                unsigned d = (unsigned) (*s - '0');
                if (v > (UINT64_MAX - d) / 10u)
                        return -ERANGE;
                v = v * 10u + d;
        }
        *out = v;
        *p = s;
        return 0;
}

int tr_parse_u64(const char *s, uint64_t *out)
{
        uint64_t v;
        int r = tr_take_u64(&s, &v);
        if (r < 0)
                return r;
        if (*s == '\n')
                s++;
        if (*s != '\0')
                return -EINVAL;
        *out = v;
        return 0;
}

void tr_format_bytes(uint64_t v, char *buf, size_t size)
{
        static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
        double d = (double) v;
        int u = -1;
        while (d >= 1024 && u < 4) {
                d /= 1024;
                u++;
        }
        if (u < 0)
                snprintf(buf, size, "%llu B", (unsigned long long) v);
        else
                snprintf(buf, size, "%.1f %s", d, units[u]);
}

int tr_parse_size(const char *s, uint64_t *out)
{
        if (!s)
                return -EINVAL;
        if (strcmp(s, "max") == 0 || strcmp(s, "max\n") == 0) {
                *out = UINT64_MAX;
                return 0;
        }
        uint64_t v;
        const char *end = s;
        int r = tr_take_u64(&end, &v);
        if (r < 0)
                return r;
        /* a fraction ("1.5G"): up to 9 decimals, only with a suffix (bytes are whole) */
        uint64_t frac = 0, frac_den = 1;
        if (*end == '.') {
                end++;
                if (*end < '0' || *end > '9')
                        return -EINVAL;
                for (; *end >= '0' && *end <= '9'; end++) {
                        if (frac_den >= 1000000000u)
                                return -EINVAL;
                        frac = frac * 10 + (uint64_t) (*end - '0');
                        frac_den *= 10;
                }
        }
        unsigned shift = 0;
        switch (*end) {
        case 'k': case 'K': shift = 10; end++; break;
        case 'm': case 'M': shift = 20; end++; break;
        case 'g': case 'G': shift = 30; end++; break;
        case 't': case 'T': shift = 40; end++; break;
        default: break;
        }
        if (shift && (*end == 'b' || *end == 'B'))
                end++;
        if (*end == '\n')
                end++;
        if (*end != '\0' || (frac_den > 1 && !shift))
                return -EINVAL;
        if (shift && v > (UINT64_MAX >> shift))
                return -ERANGE;
        uint64_t whole = (uint64_t) v << shift;
        /* frac < frac_den <= 1e9 < 2^30 and 1 << shift <= 2^40: no overflow in 128 bits */
        uint64_t part = (uint64_t) (((unsigned __int128) frac << shift) / frac_den);
        if (whole > UINT64_MAX - part)
                return -ERANGE;
        *out = whole + part;
        return 0;
}

int tr_parse_pid(const char *s, pid_t *out)
{
        uint64_t v;
        if (tr_parse_u64(s, &v) < 0 || v == 0 || v > INT32_MAX)
                return -EINVAL;
        *out = (pid_t) v;
        return 0;
}

uint64_t tr_now_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

bool tr_fd_is_eventfd(int fd)
{
        char path[40], link[32];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n < 0)
                return false;
        link[n] = 0;
        return strcmp(link, "anon_inode:[eventfd]") == 0;
}

/* glibc 2.33+ makes fstat(fd) a newfstatat(fd, "", AT_EMPTY_PATH), and kernels before
 * 6.11 (which learnt to tell an empty path without copying it: vfs_empty_path) copy that
 * "" into a 4 KiB names_cache buffer first, zeroed where init_on_alloc is on (Debian's
 * default): measured in a Debian 12 guest (6.1), ~5% of a classic GET_USAGE went to its
 * two nlink checks' stats.  The fstat system call takes the fd alone; on x86-64 (and x32)
 * its struct stat is glibc's.  Elsewhere, or where it is refused (a seccomp filter),
 * glibc's fstat.  (The reply FIFO's stat takes it too on those kernels: tr_fstat_untimed.) */
#if defined(__x86_64__) && defined(SYS_fstat)
_Static_assert(sizeof(struct stat) == 144, "x86-64's struct stat is the kernel's");
#endif
int tr_fstat(int fd, struct stat *st)
{
#if defined(__x86_64__) && defined(SYS_fstat)
        if (syscall(SYS_fstat, fd, st) == 0)
                return 0;
        if (errno != ENOSYS && errno != EPERM)
                return -errno;
#endif
        return fstat(fd, st) == 0 ? 0 : -errno;
}

/* Kernel quirk (Linux 6.13, multigrain timestamps; ext4, xfs, btrfs and tmpfs): a stat that
 * returns an inode's ctime or mtime marks the ctime as queried (fs/stat.c, fill_mg_cmtime),
 * so the next write to the file stamps a fine-grained time and dirties the inode - on ext4
 * a journalled inode update - where it would keep the coarse tick's stamp (one update a
 * tick).  fstat asks for every time; statx asks for the fields wanted alone.  procd's fstat
 * of each reply FIFO cost every classic reply ~3 us of ext4 journalling (issue 20, NOTES
 * 14.20).  Where statx itself is refused (a seccomp filter answering EPERM or ENOSYS; glibc
 * 2.28+ emulates it on kernels before 4.11) fstatat answers, with the times, as before. */
static int from_statx(const struct statx *sx, unsigned want, tr_stat *out)
{
        if ((sx->stx_mask & want) != want)
                return -ENODATA;
        out->mode = sx->stx_mode;
        out->uid = sx->stx_uid;
        out->size_bytes = sx->stx_size;
        return 0;
}

int tr_stat_untimed(int dirfd, const char *path, unsigned want, tr_stat *out)
{
        bool self = !path || !*path;
        int flags = AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT | (self ? AT_EMPTY_PATH : 0);
        struct statx sx;
        if (statx(dirfd, self ? "" : path, flags, want, &sx) == 0)
                return from_statx(&sx, want, out);
        if (errno == EBADF || errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == ENAMETOOLONG ||
            errno == ENOMEM)
                return -errno; /* the answer, not a refusal of statx */
        struct stat st;
        if (fstatat(dirfd, self ? "" : path, &st, AT_SYMLINK_NOFOLLOW | (self ? AT_EMPTY_PATH : 0)) < 0)
                return -errno;
        out->mode = st.st_mode;
        out->uid = st.st_uid;
        out->size_bytes = (uint64_t) st.st_size;
        return 0;
}

int tr_fstat_untimed(int fd, unsigned want, tr_stat *out, bool *null_path)
{
        if (*null_path) {
                /* the system call itself: glibc declares statx's path nonnull */
                struct statx sx;
                if (syscall(SYS_statx, fd, NULL, AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT | AT_EMPTY_PATH, want,
                            &sx) == 0)
                        return from_statx(&sx, want, out);
                if (errno != EFAULT)
                        return tr_stat_untimed(fd, NULL, want, out); /* its answer, or its fallbacks */
                *null_path = false;
        }
        /* A kernel that refuses the NULL path is older than 6.11, so older than multigrain
         * timestamps (6.13): a stat that returns the times costs nothing there, and the
         * fstat system call (tr_fstat) skips statx(fd, "")'s copy of "" into a zeroed
         * 4 KiB buffer (see tr_fstat): measured in the Debian 12 guest (6.1), ~5% of a
         * classic GET_USAGE went to that statx (issue 20). */
        struct stat st;
        int r = tr_fstat(fd, &st);
        if (r < 0)
                return r;
        out->mode = st.st_mode;
        out->uid = st.st_uid;
        out->size_bytes = (uint64_t) st.st_size;
        return 0;
}
