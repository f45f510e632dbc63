/* util.h - ownership helpers (cleanup attributes) and small file I/O on dirfds.
 *
 * Ownership shows in the declaration: `_cleanup_close_ int fd = -1;` closes on scope exit,
 * `_cleanup_free_ char *s = NULL;` frees.  Hand ownership on with TR_TAKE_FD / TR_TAKE_PTR.
 */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "error.h"

static inline void tr_closep(int *fd)
{
        if (*fd >= 0)
                close(*fd);
}
static inline void tr_freep(void *p) { free(*(void **) p); }
static inline void tr_fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}
static inline void tr_closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

#define _cleanup_close_ __attribute__((cleanup(tr_closep)))
#define _cleanup_free_ __attribute__((cleanup(tr_freep)))
#define _cleanup_fclose_ __attribute__((cleanup(tr_fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(tr_closedirp)))

static inline int tr_take_fd(int *fd)
{
        int r = *fd;
        *fd = -1;
        return r;
}
static inline void *tr_take_ptr(void *pp)
{
        void *r = *(void **) pp;
        *(void **) pp = NULL;
        return r;
}
#define TR_TAKE_FD(fd) tr_take_fd(&(fd))
#define TR_TAKE_PTR(p) tr_take_ptr(&(p))

#define TR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Read a whole small file at dirfd/name (dirfd may be AT_FDCWD) into buf, NUL-terminated.
 * Returns bytes read (>= 0) or -errno.  Truncation (file larger than size-1) is -EFBIG. */
int tr_read_file_at(int dirfd, const char *name, char *buf, size_t size, tr_error *err);

/* Read a whole file of any size into a malloc'd, NUL-terminated buffer (*out).  Returns the
 * length or -errno. */
int tr_read_file_alloc_at(int dirfd, const char *name, char **out, size_t *len, tr_error *err);

/* pread() from offset 0 of an fd kept open (cgroup counter files); NUL-terminated.
 * Returns bytes read or -errno.  -EFBIG when the value does not fit (buf then holds the
 * first size-1 bytes, NUL-terminated). */
int tr_pread_all(int fd, char *buf, size_t size);

/* Read fd to EOF into *buf, grown with realloc as needed (*buf and *cap may start as NULL and 0, and
 * are reused across calls: the /proc scanner keeps one buffer for every environ).
 * NUL-terminated; returns the length or -errno. */
int tr_read_fd_grow(int fd, char **buf, size_t *cap);

/* Write value to dirfd/name (O_WRONLY|O_CLOEXEC, single write).  Returns 0 or -errno. */
int tr_write_file_at(int dirfd, const char *name, const char *value, tr_error *err);

/* Write v in decimal (what "%" PRIu64 prints, up to 20 digits, no NUL) at w; the end is
 * returned.  For hot paths where a printf costs more than the rest. */
char *tr_put_u64(char *w, uint64_t v);

/* Parse the unsigned decimal at *p and advance *p past it.  0, or -EINVAL when *p holds no
 * digit, -ERANGE on overflow. */
int tr_take_u64(const char **p, uint64_t *out);

/* Parse an unsigned decimal (whole string, optional trailing newline).  0 or -EINVAL/-ERANGE. */
int tr_parse_u64(const char *s, uint64_t *out);

/* Parse a size with optional K/M/G/T suffix (powers of 1024; "max" -> UINT64_MAX); with a
 * suffix the number may have a fraction ("1.5G", rounded down to a byte).  0 or
 * -EINVAL/-ERANGE. */
int tr_parse_size(const char *s, uint64_t *out);

/* Bytes in binary units for people: "512 B", "1.5 KiB", "32.0 MiB", "2.0 GiB", "1.1 TiB". */
void tr_format_bytes(uint64_t v, char *buf, size_t size);

/* Parse a pid: decimal, > 0.  0 or -EINVAL. (pid <= 1 is the caller's to refuse.) */
int tr_parse_pid(const char *s, pid_t *out);

/* Monotonic clock in microseconds. */
uint64_t tr_now_usec(void);

/* Whether fd is an eventfd (its /proc/self/fd link says so). */
bool tr_fd_is_eventfd(int fd);

/* fstat(2) of fd, without a path: 0 or -errno.  For hot paths (see util.c). */
int tr_fstat(int fd, struct stat *st);

/* What tr_stat_untimed tells of a file. */
typedef struct tr_stat {
        mode_t mode; /* the type bits, and the permissions where STATX_MODE was asked */
        uid_t uid;
        uint64_t size_bytes;
} tr_stat;

/* A file's type, owner or size (want: STATX_TYPE, STATX_MODE, STATX_UID, STATX_SIZE) without
 * asking for its times, for files written right after (a reply FIFO, a log): see util.c.
 * path NULL or "": the file of dirfd itself; else path under dirfd (AT_FDCWD: as open
 * would), a symlink not followed.  0, -errno, or -ENODATA when a field asked for is not
 * known there. */
int tr_stat_untimed(int dirfd, const char *path, unsigned want, tr_stat *out);
/* The same for fd itself, asked with a NULL path where the kernel takes one (Linux 6.11:
 * statx with AT_EMPTY_PATH and no path skips copying and looking up ""; 0.36 against
 * 0.46-0.50 us here, once a GET_USAGE: issue 20).  *null_path is the caller's to keep, true
 * to begin with: made false at the first EFAULT (a kernel before 6.11), the fstat system
 * call from then on (the times it returns cost nothing before 6.13: see util.c). */
int tr_fstat_untimed(int fd, unsigned want, tr_stat *out, bool *null_path);
