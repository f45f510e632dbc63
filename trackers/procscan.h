/* procscan.h - one pass over /proc (openat on a /proc dirfd).
 *
 * stat is read for every process; status (uid, Groups) and environ only when a family
 * needs them (opts->want).  Identity is pid + start time.  The parsers (proc-read.h) take
 * text so unit tests run on fixture files.  Each scan carries a children index (parent -> children,
 * CSR) so that a family can walk its subtrees instead of the whole scan.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "proc-read.h"

enum {
        TR_SCAN_STATUS = 1u << 0,  /* read /proc/PID/status: uid, Groups */
        TR_SCAN_ENVIRON = 1u << 1, /* read /proc/PID/environ, match the markers */
        TR_SCAN_IO = 1u << 2,      /* read /proc/PID/io: read_bytes, write_bytes */
};

#define TR_SCAN_MAX_MARKERS 64

typedef struct tr_scan {
        tr_proc *procs;  /* sorted by pid */
        size_t n, cap;
        uint64_t taken_usec; /* tr_now_usec() when the scan ended */
        uint64_t cost_usec;  /* how long the scan took */
        long clk_tck;        /* sysconf(_SC_CLK_TCK) */
        long page_size;
        /* Children index (tr_scan_index; tr_scan_take* build it): CSR over the raw ppid
         * relation.  parent[i] is the index of the proc whose pid is procs[i].ppid
         * (TR_SCAN_NONE when ppid <= 0, ppid == pid, or absent from the scan); the
         * children of procs[i] are procs[kids[kid_off[i]]] .. procs[kids[kid_off[i + 1] - 1]],
         * ascending pid.  No start-time rule is applied here (callers decide whether a
         * parent born after its child counts).  Valid while indexed && n_indexed == n;
         * whoever edits procs by hand calls tr_scan_index again (or clears indexed). */
        size_t *parent;   /* n entries */
        size_t *kid_off;  /* n + 1 entries */
        size_t *kids;     /* n entries */
        size_t index_cap; /* entries allocated in each of the three */
        size_t n_indexed;
        bool indexed;
} tr_scan;

#define TR_SCAN_NONE SIZE_MAX

typedef struct tr_scan_opts {
        unsigned want;                   /* TR_SCAN_* */
        const char *const *env_markers;  /* "NAME=VALUE" strings, at most TR_SCAN_MAX_MARKERS */
        size_t n_markers;
} tr_scan_opts;

/* Scan /proc.  Processes vanishing mid-scan are skipped.  scan is reused (memory kept). */
int tr_scan_take(tr_scan *scan, const tr_scan_opts *opts, tr_error *err);
/* Same on a dirfd of a proc-like tree (tests pass a fixture directory). */
int tr_scan_take_at(int proc_dirfd, tr_scan *scan, const tr_scan_opts *opts, tr_error *err);
const tr_proc *tr_scan_find(const tr_scan *scan, pid_t pid); /* NULL when absent */
/* (Re)build the children index of scan->procs (sorted by pid) in O(n log n): one binary
 * search per process for its parent, then a counting sort by parent.  Memory is kept
 * across scans.  0 or -ENOMEM (then indexed is false). */
int tr_scan_index(tr_scan *scan);
/* Whether the children index matches procs (see tr_scan). */
bool tr_scan_has_index(const tr_scan *scan);
/* Children of procs[i] through the index (must be present): *kids receives the first of
 * the returned number of indices into procs. */
size_t tr_scan_children(const tr_scan *scan, size_t i, const size_t **kids);
void tr_scan_free(tr_scan *scan);
