/* procscan.c - one pass over /proc through a dirfd.
 *
 * For every numeric entry: stat always (one openat "PID/stat" relative to the /proc dirfd
 * when nothing else is wanted); when status/environ/io are wanted the process directory is
 * opened once (O_PATH) and the files are read relative to it, so that all of one process's
 * fields come from that process even if its pid is reused mid-scan (reads on a dead
 * process's directory fail with ENOENT/ESRCH instead of reading the new one).
 *
 * Vanishing processes (ENOENT/ESRCH) are skipped; EACCES/EPERM on environ or io of another
 * user's process (when not root) leaves that field absent.  The procs array is reused across
 * scans and sorted by pid (readdir order is the kernel's, fixture directories are not
 * sorted), so tr_scan_find is a binary search.  The children index (tr_scan_index) is built
 * after sorting: parent of each proc by binary search, then a counting sort by parent into
 * kid_off/kids (CSR), so a family walks parent -> children without touching the rest.
 */
#include "procscan.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* ---- the scan ----------------------------------------------------------------------- */

typedef struct scratch {
        char *buf; /* environ, grown as needed */
        size_t cap;
} scratch;

static bool vanished(int r) { return r == -ENOENT || r == -ESRCH; }

/* Whole file at dirfd/name into s->buf (grown, reused); returns length or -errno. */
static int read_grow(int dirfd, const char *name, scratch *s)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return tr_read_fd_grow(fd, &s->buf, &s->cap);
}

/* A small /proc seq_file (stat, status, io) in one read(): seq_read fills the buffer until
 * the record ends, so a short read is the whole file and no second read is needed to see
 * EOF (one syscall fewer per file, per process, per scan).  Returns length or -errno;
 * -EFBIG when the buffer filled up. */
static int read_once_at(int dirfd, const char *name, char *buf, size_t size)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        ssize_t n;
        do
                n = read(fd, buf, size - 1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t) n == size - 1)
                return -EFBIG;
        buf[n] = '\0';
        return (int) n;
}

static bool is_pid_name(const char *s)
{
        if (*s < '1' || *s > '9')
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

static tr_proc *grow_one(tr_scan *scan)
{
        if (scan->n == scan->cap) {
                size_t cap = scan->cap ? scan->cap * 2 : 512;
                tr_proc *p = realloc(scan->procs, cap * sizeof *p);
                if (!p)
                        return NULL;
                scan->procs = p;
                scan->cap = cap;
        }
        return &scan->procs[scan->n];
}

/* The optional files of one process, relative to its directory fd.  0, 1 (vanished:
 * skip the process) or -errno. */
static int read_extras(int piddir, const char *name, tr_proc *p, const tr_scan_opts *opts, scratch *s,
                       tr_error *err)
{
        if (opts->want & TR_SCAN_STATUS) {
                char buf[8192];
                int r = read_once_at(piddir, "status", buf, sizeof buf);
                if (vanished(r))
                        return 1;
                if (r >= 0 && tr_parse_proc_status(buf, p) < 0)
                        return tr_error_set(err, EINVAL, "cannot parse %s/status", name);
                /* other read errors (EFBIG...) leave has_status false */
        }
        if ((opts->want & TR_SCAN_ENVIRON) && opts->n_markers) {
                int r = read_grow(piddir, "environ", s);
                if (vanished(r))
                        return 1;
                if (r == -ENOMEM)
                        return tr_error_set(err, ENOMEM, "out of memory reading %s/environ", name);
                if (r > 0) {
                        size_t nm = opts->n_markers < TR_SCAN_MAX_MARKERS ? opts->n_markers : TR_SCAN_MAX_MARKERS;
                        for (size_t i = 0; i < nm; i++)
                                if (opts->env_markers[i] && tr_environ_has(s->buf, (size_t) r, opts->env_markers[i]))
                                        p->env_match |= UINT64_C(1) << i;
                }
                /* r < 0 with EACCES/EPERM (or anything else): environ absent, no match */
        }
        if (opts->want & TR_SCAN_IO) {
                char buf[1024];
                int r = read_once_at(piddir, "io", buf, sizeof buf);
                if (vanished(r))
                        return 1;
                if (r >= 0 && tr_parse_proc_io(buf, p) < 0)
                        return tr_error_set(err, EINVAL, "cannot parse %s/io", name);
                /* EACCES/EPERM (another user's process, not root): has_io stays false */
        }
        return 0;
}

/* One process.  0 (recorded or skipped) or -errno. */
static int scan_one(int proc_dirfd, const char *name, tr_scan *scan, const tr_scan_opts *opts, scratch *s,
                    tr_error *err)
{
        tr_proc *p = grow_one(scan);
        if (!p)
                return tr_error_set(err, ENOMEM, "out of memory scanning /proc");
        memset(p, 0, sizeof *p);

        unsigned extra = opts ? opts->want & (TR_SCAN_STATUS | TR_SCAN_ENVIRON | TR_SCAN_IO) : 0;
        char buf[4096];
        int r;
        _cleanup_close_ int piddir = -1;
        if (!extra) {
                char path[32];
                snprintf(path, sizeof path, "%s/stat", name);
                r = read_once_at(proc_dirfd, path, buf, sizeof buf);
        } else {
                piddir = openat(proc_dirfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (piddir < 0)
                        return vanished(-errno) ? 0 : tr_error_setx(err, errno, "open /proc/%s", name);
                r = read_once_at(piddir, "stat", buf, sizeof buf);
        }
        if (vanished(r))
                return 0;
        if (r < 0)
                return tr_error_setx(err, -r, "read %s/stat", name);
        if (tr_parse_proc_stat(buf, scan->page_size, p) < 0)
                return tr_error_set(err, EINVAL, "cannot parse %s/stat", name);
        if (extra) {
                r = read_extras(piddir, name, p, opts, s, err);
                if (r < 0)
                        return r;
                if (r == 1)
                        return 0;
        }
        scan->n++;
        return 0;
}

static int cmp_proc(const void *a, const void *b)
{
        pid_t x = ((const tr_proc *) a)->pid, y = ((const tr_proc *) b)->pid;
        return (x > y) - (x < y);
}

static void sort_procs(tr_scan *scan)
{
        for (size_t i = 1; i < scan->n; i++)
                if (scan->procs[i - 1].pid >= scan->procs[i].pid) {
                        qsort(scan->procs, scan->n, sizeof *scan->procs, cmp_proc);
                        return;
                }
}

int tr_scan_take_at(int proc_dirfd, tr_scan *scan, const tr_scan_opts *opts, tr_error *err)
{
        uint64_t t0 = tr_now_usec();
        scan->n = 0;
        scan->indexed = false;
        if (scan->clk_tck <= 0)
                scan->clk_tck = sysconf(_SC_CLK_TCK);
        if (scan->page_size <= 0)
                scan->page_size = sysconf(_SC_PAGESIZE);

        /* a fresh open file description: its own readdir position */
        int dfd = openat(proc_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return tr_error_setx(err, errno, "open proc directory");
        _cleanup_closedir_ DIR *d = fdopendir(dfd);
        if (!d) {
                int e = errno;
                close(dfd);
                return tr_error_setx(err, e, "fdopendir proc directory");
        }
        scratch s = { NULL, 0 };
        int r = 0;
        for (;;) {
                errno = 0;
                struct dirent *de = readdir(d);
                if (!de) {
                        if (errno)
                                r = tr_error_setx(err, errno, "readdir proc directory");
                        break;
                }
                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                        continue;
                if (!is_pid_name(de->d_name))
                        continue;
                r = scan_one(proc_dirfd, de->d_name, scan, opts, &s, err);
                if (r < 0)
                        break;
        }
        free(s.buf);
        if (r < 0) {
                scan->n = 0;
                return r;
        }
        sort_procs(scan);
        if (tr_scan_index(scan) < 0) {
                scan->n = 0;
                return tr_error_set(err, ENOMEM, "out of memory indexing /proc");
        }
        scan->taken_usec = tr_now_usec();
        scan->cost_usec = scan->taken_usec - t0;
        return 0;
}

int tr_scan_take(tr_scan *scan, const tr_scan_opts *opts, tr_error *err)
{
        _cleanup_close_ int fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return tr_error_setx(err, errno, "open /proc");
        return tr_scan_take_at(fd, scan, opts, err);
}

const tr_proc *tr_scan_find(const tr_scan *scan, pid_t pid)
{
        size_t lo = 0, hi = scan->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                pid_t m = scan->procs[mid].pid;
                if (m == pid)
                        return &scan->procs[mid];
                if (m < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

static bool grow_index(size_t **a, size_t cap)
{
        size_t *p = realloc(*a, cap * sizeof *p);
        if (!p)
                return false;
        *a = p;
        return true;
}

int tr_scan_index(tr_scan *scan)
{
        size_t n = scan->n;
        scan->indexed = false;
        if (n + 1 > scan->index_cap) {
                size_t cap = n + 1 + n / 4 + 64;
                if (!grow_index(&scan->parent, cap) || !grow_index(&scan->kid_off, cap) ||
                    !grow_index(&scan->kids, cap))
                        return -ENOMEM;
                scan->index_cap = cap;
        }
        /* parents; kid_off[p + 1] counts p's children */
        memset(scan->kid_off, 0, (n + 1) * sizeof *scan->kid_off);
        for (size_t i = 0; i < n; i++) {
                const tr_proc *c = &scan->procs[i];
                const tr_proc *par = c->ppid > 0 && c->ppid != c->pid ? tr_scan_find(scan, c->ppid) : NULL;
                scan->parent[i] = par ? (size_t) (par - scan->procs) : TR_SCAN_NONE;
                if (par)
                        scan->kid_off[scan->parent[i] + 1]++;
        }
        for (size_t i = 0; i < n; i++)
                scan->kid_off[i + 1] += scan->kid_off[i];
        /* fill in ascending child order, using kid_off[p] as p's cursor, then shift back */
        for (size_t i = 0; i < n; i++) {
                size_t p = scan->parent[i];
                if (p != TR_SCAN_NONE)
                        scan->kids[scan->kid_off[p]++] = i;
        }
        for (size_t i = n; i > 0; i--)
                scan->kid_off[i] = scan->kid_off[i - 1];
        scan->kid_off[0] = 0;
        scan->n_indexed = n;
        scan->indexed = true;
        return 0;
}

bool tr_scan_has_index(const tr_scan *scan)
{
        return scan->indexed && scan->n_indexed == scan->n && scan->kid_off;
}

size_t tr_scan_children(const tr_scan *scan, size_t i, const size_t **kids)
{
        *kids = scan->kids + scan->kid_off[i];
        return scan->kid_off[i + 1] - scan->kid_off[i];
}

void tr_scan_free(tr_scan *scan)
{
        free(scan->procs);
        free(scan->parent);
        free(scan->kid_off);
        free(scan->kids);
        scan->procs = NULL;
        scan->parent = scan->kid_off = scan->kids = NULL;
        scan->n = scan->cap = scan->index_cap = scan->n_indexed = 0;
        scan->indexed = false;
}
