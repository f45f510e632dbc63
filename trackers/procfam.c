/* procfam.c - a family found by scanning /proc (see procfam.h for the contract).
 *
 * State kept between scans: the member table (pid + start time + last seen counters, sorted
 * by pid), the seeds (pid + start time, pinned when handed over), the last exclude set, and
 * the counters of members that have exited (their last seen values).
 *
 * Membership of one scan:
 *   1. initial members: the root (pid + start), every earlier member still there with the
 *      same start time (sticky: a double-forked process that a scan saw in the tree stays a
 *      member after its parent exits and it is reparented), seeds, and the processes the
 *      spec matches (env marker, login uid, supplementary gid);
 *   2. closure by parent: a process is a member when its parent is one and the parent was
 *      not born after it (start_ticks parent <= child), so a stale ppid that now names a
 *      reused pid cannot adopt a stranger;
 *   3. pids in the exclude set (members of more specific subfamilies) are not members and
 *      membership does not flow through them: their descendants are the subfamily's.
 *      An earlier member that becomes excluded leaves without its CPU being kept here (the
 *      subfamily accounts for it).
 * Cost: with the scan's children index (tr_scan_take builds it) step 1 finds the root,
 * earlier members and seeds by binary search and step 2 walks down from them, so a family
 * tracked by tree/seeds costs O(its members and their children, x log n), not O(scan):
 * many families over one shared scan no longer cost families x processes.  A family that
 * matches by marker/login/gid still looks at every process once.  A scan without the index
 * (built by hand) takes the whole-scan walk (each process decided by its ancestors), which
 * gives the same members (tested on fixtures and random trees).
 *
 * Known limits (inherent to scanning; the integration test measures the CPU loss):
 *  - usage is as fresh as the last scan (max_age_usec);
 *  - CPU a member used between its last scan and its exit is lost, UNLESS a live member
 *    reaps it with wait() (the usual shell/starter case): its full CPU then reaches that
 *    member's cutime/cstime, which usage counts (growth since first seen).  Still lost: a
 *    member reaped by a non-member (the root reaped by the starter; orphans reaped by
 *    init/a subreaper), by a parent that exits before the next scan, or auto-reaped
 *    (SIGCHLD ignored: detected via sigignore; SA_NOCLDWAIT alone is not visible in /proc
 *    and then even its last seen CPU is lost); all of it while an exclude set is in force
 *    (classic accounting, see usage).  I/O of exited members: last seen values only;
 *  - a member first seen with a non-zero cutime (an adopted older process): that
 *    baseline (children reaped before we knew it) is not the family's and is excluded;
 *  - a process forked and detached (double fork, parent exits) between two scans was never
 *    seen in the tree and escapes (unless env marker / login / gid tracking catches it);
 *  - membership by env marker/login/gid matches the spec at scan time; the exclude set is
 *    the one handed to the last shared update (a pid in it reused by a newcomer is
 *    excluded until the next shared update);
 *  - memory_peak_bytes is not given: a max of rss sums taken at scan instants is neither
 *    the cgroup's charged-memory peak nor a true peak, so the field stays unavailable.
 */
#include "procfam.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backoff.h"
#include "pidref.h"
#include "util.h"

typedef struct member {
        pid_t pid, ppid;
        char state;
        bool has_io;
        bool ignores_sigchld;  /* its children are reaped by the kernel, not waited for */
        uint64_t start_ticks;
        uint64_t utime, stime; /* ticks */
        uint64_t cutime, cstime;   /* reaped children's CPU now (ticks) */
        uint64_t cutime0, cstime0; /* ... when first seen as a member */
        uint64_t rss, vsize;   /* bytes */
        uint64_t io_read, io_write;
} member;

typedef struct ident {
        pid_t pid;
        uint64_t start_ticks;
} ident;

struct tr_procfam {
        tr_procfam_spec spec;
        char *env_marker;

        member *m, *old; /* current table and the previous one (swapped each update) */
        size_t n, cap, n_old, cap_old;
        size_t n_new;    /* members of the last update that were not members before */

        ident *seeds;    /* sorted by pid */
        size_t n_seeds;

        tr_pidset exclude; /* copy of the last exclude set, normalized */

        size_t *idx;     /* per-update scratch: scan indices of the members, then sorted */
        size_t n_idx, cap_idx;

        uint8_t *mark;   /* whole-scan walk only (scan without index): one per proc */
        size_t *path;    /* ... ancestor walk */
        size_t scratch_cap;

        /* classic: exited members' last seen utime/stime */
        uint64_t exited_user_ticks, exited_sys_ticks;
        /* reaped-children accounting (see usage): exited members not reaped by a live
         * member (last seen utime/stime + cutime growth), and the baselines to take back
         * for those that were */
        uint64_t credit_user_ticks, credit_sys_ticks;
        uint64_t uncount_user_ticks, uncount_sys_ticks;
        uint64_t exited_io_read, exited_io_write; /* exited members no live member reaped */
        /* lifetime counters as last reported: reports never go down (see usage) */
        uint64_t rep_user_ticks, rep_sys_ticks, rep_io_read, rep_io_write;

        long clk_tck;
        bool seen_members;     /* some scan found a member: before that CPU and I/O are unknown */
        bool updated;
        uint64_t updated_usec; /* taken_usec of the scan of the last update */

        tr_scan scan; /* private scans */
};

enum { M_UNKNOWN = 0, M_VISITING, M_MEMBER, M_NOT, M_EXCLUDED };

static bool is_live(const member *x) { return x->state != 'Z' && x->state != 'X'; }

/* Never signalled: init, pid <= 1, and the calling process itself. */
static bool signalable(pid_t pid) { return pid > 1 && pid != getpid(); }

/* ---- lifetime ----------------------------------------------------------------------- */

int tr_procfam_new(const tr_procfam_spec *spec, tr_procfam **out, tr_error *err)
{
        if (!spec || spec->root_pid <= 1)
                return tr_error_set(err, EINVAL, "procfam: root pid %d is not > 1", spec ? (int) spec->root_pid : 0);
        if (spec->env_marker && !strchr(spec->env_marker, '='))
                return tr_error_set(err, EINVAL, "procfam: env marker '%s' is not NAME=VALUE", spec->env_marker);
        _cleanup_free_ tr_procfam *f = calloc(1, sizeof *f);
        if (!f)
                return tr_error_set(err, ENOMEM, "procfam: out of memory");
        f->spec = *spec;
        if (f->spec.root_start_ticks == 0) {
                int r = tr_pid_start_ticks(spec->root_pid, &f->spec.root_start_ticks);
                if (r < 0)
                        return tr_error_setx(err, -r, "procfam: start time of root %d", (int) spec->root_pid);
        }
        if (spec->env_marker) {
                f->env_marker = strdup(spec->env_marker);
                if (!f->env_marker)
                        return tr_error_set(err, ENOMEM, "procfam: out of memory");
        }
        f->spec.env_marker = f->env_marker;
        f->clk_tck = sysconf(_SC_CLK_TCK);
        if (f->clk_tck <= 0)
                f->clk_tck = 100;
        *out = TR_TAKE_PTR(f);
        return 0;
}

void tr_procfam_free(tr_procfam *f)
{
        if (!f)
                return;
        free(f->env_marker);
        free(f->m);
        free(f->old);
        free(f->seeds);
        free(f->idx);
        free(f->mark);
        free(f->path);
        tr_pidset_free(&f->exclude);
        tr_scan_free(&f->scan);
        free(f);
}

unsigned tr_procfam_scan_wants(const tr_procfam *f)
{
        /* io for the usage record; status for login/gid; environ for the marker */
        unsigned w = TR_SCAN_IO;
        if (f->spec.by_login || f->spec.by_gid)
                w |= TR_SCAN_STATUS;
        if (f->env_marker)
                w |= TR_SCAN_ENVIRON;
        return w;
}

const char *tr_procfam_env_marker(const tr_procfam *f) { return f->env_marker; }

uint64_t tr_procfam_exited_cpu_usec(const tr_procfam *f)
{
        return (f->exited_user_ticks + f->exited_sys_ticks) * 1000000u / (uint64_t) f->clk_tck;
}

/* ---- membership --------------------------------------------------------------------- */

static const member *table_find(const member *t, size_t n, pid_t pid)
{
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (t[mid].pid == pid)
                        return &t[mid];
                if (t[mid].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

static int cmp_ident(const void *a, const void *b)
{
        pid_t x = ((const ident *) a)->pid, y = ((const ident *) b)->pid;
        return (x > y) - (x < y);
}

static bool is_seed(const tr_procfam *f, const tr_proc *p)
{
        ident key = { p->pid, 0 };
        const ident *s = f->n_seeds ? bsearch(&key, f->seeds, f->n_seeds, sizeof *f->seeds, cmp_ident) : NULL;
        return s && s->start_ticks == p->start_ticks;
}

/* Whether the family matches processes by something other than the tree (then every
 * process of the scan has to be looked at). */
static bool has_spec(const tr_procfam *f, int marker_index)
{
        return (marker_index >= 0 && marker_index < 64) || f->spec.by_login || f->spec.by_gid;
}

static bool spec_matches(const tr_procfam *f, const tr_proc *p, int marker_index)
{
        if (marker_index >= 0 && marker_index < 64 && (p->env_match >> marker_index) & 1u)
                return true;
        if (!p->has_status)
                return false;
        if (f->spec.by_login && p->uid == f->spec.login_uid)
                return true;
        if (f->spec.by_gid)
                for (int i = 0; i < p->ngroups; i++)
                        if (p->groups[i] == f->spec.gid)
                                return true;
        return false;
}

static bool initial_member(const tr_procfam *f, const tr_proc *p, int marker_index)
{
        if (p->pid <= 1)
                return false;
        if (p->pid == f->spec.root_pid && p->start_ticks == f->spec.root_start_ticks)
                return true;
        const member *o = table_find(f->m, f->n, p->pid); /* f->m: the previous table here */
        if (o && o->start_ticks == p->start_ticks)
                return true;
        return is_seed(f, p) || spec_matches(f, p, marker_index);
}

static bool is_excluded(const tr_procfam *f, pid_t pid)
{
        return f->exclude.n && tr_pidset_contains(&f->exclude, pid);
}

static int push_idx(tr_procfam *f, size_t i)
{
        if (f->n_idx == f->cap_idx) {
                size_t cap = f->cap_idx ? f->cap_idx * 2 : 16;
                size_t *p = realloc(f->idx, cap * sizeof *p);
                if (!p)
                        return -ENOMEM;
                f->idx = p;
                f->cap_idx = cap;
        }
        f->idx[f->n_idx++] = i;
        return 0;
}

static int cmp_size(const void *a, const void *b)
{
        size_t x = *(const size_t *) a, y = *(const size_t *) b;
        return (x > y) - (x < y);
}

/* Galloping lower bound: the first position of an ascending sequence of n keys (key(i))
 * not below k, searched outwards from hint: O(log distance), so walks in pid order cost
 * little more than a merge.  [lo, hi) brackets the answer before the binary search. */
#define GALLOP(n, hint, k, key, out)                                                         \
        do {                                                                                 \
                size_t lo_ = 0, hi_ = (hint) < (n) ? (hint) : (n);                            \
                if (hi_ < (n) && key(hi_) < (k)) {                                           \
                        size_t step_ = 1;                                                    \
                        lo_ = hi_ + 1;                                                       \
                        hi_ = lo_;                                                           \
                        while (hi_ < (n) && key(hi_) < (k)) {                                \
                                lo_ = hi_ + 1;                                               \
                                hi_ = lo_ + step_;                                           \
                                step_ *= 2;                                                  \
                        }                                                                    \
                        if (hi_ > (n))                                                       \
                                hi_ = (n);                                                   \
                } else if (hi_ > 0 && key(hi_ - 1) < (k)) {                                  \
                        lo_ = hi_;                                                           \
                }                                                                            \
                while (lo_ < hi_) {                                                          \
                        size_t mid_ = lo_ + (hi_ - lo_) / 2;                                 \
                        if (key(mid_) < (k))                                                 \
                                lo_ = mid_ + 1;                                              \
                        else                                                                 \
                                hi_ = mid_;                                                  \
                }                                                                            \
                (out) = lo_;                                                                 \
        } while (0)

/* Whether the ascending v[0..n) holds i; *hint: where to start, left at i's place. */
static bool idx_holds(const size_t *v, size_t n, size_t *hint, size_t i)
{
#define IDX_KEY(j) v[j]
        GALLOP(n, *hint, i, IDX_KEY, *hint);
#undef IDX_KEY
        return *hint < n && v[*hint] == i;
}

/* tr_scan_find from a hint (scan position), for lookups in pid order; *hint is left at
 * pid's place. */
static const tr_proc *scan_find_from(const tr_scan *scan, size_t *hint, pid_t pid)
{
#define PID_KEY(j) scan->procs[j].pid
        GALLOP(scan->n, *hint, pid, PID_KEY, *hint);
#undef PID_KEY
        return *hint < scan->n && scan->procs[*hint].pid == pid ? &scan->procs[*hint] : NULL;
}

/* Sort f->idx[from..n_idx) unless it already is (the usual case: the sources are runs in
 * pid order, and a steady family's initial members are just its earlier members). */
static void sort_idx(tr_procfam *f, size_t from)
{
        for (size_t k = from + 1; k < f->n_idx; k++)
                if (f->idx[k - 1] > f->idx[k]) {
                        qsort(f->idx + from, f->n_idx - from, sizeof *f->idx, cmp_size);
                        return;
                }
}

/* ---- membership through the scan's children index ---------------------------------- *
 * Cost O((earlier members + seeds) log n + members and their children) for a family
 * tracked by tree/seeds only; a family matching by marker/login/gid also looks at every
 * process once (inherent).  Same result as the whole-scan walk below:
 *   - the initial members (step 1 of the file comment) are located directly: the root, each
 *     earlier member and each seed by binary search on pid (start time checked), the
 *     spec's matches by one pass over the scan; excluded pids and pid <= 1 are dropped;
 *   - closure: breadth-first from them over the index, a child joining when its parent
 *     was not born after it and it is not excluded (an excluded child is not traversed).
 * Every process has one parent in the scan, so a non-initial process is reached at most
 * once (from that parent, itself expanded once): no per-process marks are needed, only
 * "is it initial" (a binary search in the sorted initial prefix).  A ppid cycle is reached
 * only through an initial member on it, which is never re-added. */

static int push_initial(tr_procfam *f, const tr_scan *scan, size_t *hint, pid_t pid, uint64_t start_ticks)
{
        const tr_proc *p = pid > 1 ? scan_find_from(scan, hint, pid) : NULL;
        if (!p || p->start_ticks != start_ticks || is_excluded(f, pid))
                return 0;
        return push_idx(f, (size_t) (p - scan->procs));
}

static int members_by_index(tr_procfam *f, const tr_scan *scan, int marker_index)
{
        f->n_idx = 0;
        /* the root, unless it is an earlier member anyway (keeps the runs in order) */
        const member *o = table_find(f->m, f->n, f->spec.root_pid); /* f->m: the previous table */
        size_t hint = scan->n / 2;
        if ((!o || o->start_ticks != f->spec.root_start_ticks) &&
            push_initial(f, scan, &hint, f->spec.root_pid, f->spec.root_start_ticks) < 0)
                return -ENOMEM;
        hint = 0; /* earlier members and seeds are in pid order: each search starts where
                   * the last ended */
        for (size_t i = 0; i < f->n; i++)
                if (push_initial(f, scan, &hint, f->m[i].pid, f->m[i].start_ticks) < 0)
                        return -ENOMEM;
        hint = 0;
        for (size_t i = 0; i < f->n_seeds; i++)
                if (push_initial(f, scan, &hint, f->seeds[i].pid, f->seeds[i].start_ticks) < 0)
                        return -ENOMEM;
        if (has_spec(f, marker_index))
                for (size_t i = 0; i < scan->n; i++) {
                        const tr_proc *p = &scan->procs[i];
                        if (p->pid > 1 && spec_matches(f, p, marker_index) && !is_excluded(f, p->pid) &&
                            push_idx(f, i) < 0)
                                return -ENOMEM;
                }

        /* sorted and unique: the initial prefix, searched during the closure */
        sort_idx(f, 0);
        size_t n0 = 0;
        for (size_t k = 0; k < f->n_idx; k++)
                if (n0 == 0 || f->idx[n0 - 1] != f->idx[k])
                        f->idx[n0++] = f->idx[k];
        f->n_idx = n0;

        for (size_t q = 0; q < f->n_idx; q++) {
                size_t par = f->idx[q];
                const size_t *kids;
                size_t nk = tr_scan_children(scan, par, &kids);
                size_t at = q < n0 ? q : n0 / 2; /* children are ascending, usually after par */
                for (size_t k = 0; k < nk; k++) {
                        const tr_proc *c = &scan->procs[kids[k]];
                        /* a parent born after its child is a reused pid, not the parent */
                        if (scan->procs[par].start_ticks > c->start_ticks || is_excluded(f, c->pid) ||
                            idx_holds(f->idx, n0, &at, kids[k]))
                                continue;
                        if (push_idx(f, kids[k]) < 0)
                                return -ENOMEM;
                }
        }
        sort_idx(f, 0);
        return 0;
}

/* ---- membership by the whole-scan walk ---------------------------------------------- *
 * Every process is decided by walking up its ancestors until a decided one: O(n) per
 * family (with per-process marks).  Used for a scan without a children index (built by
 * hand); the reference the index walk is tested against. */

static int ensure_scratch(tr_procfam *f, size_t n)
{
        if (n <= f->scratch_cap)
                return 0;
        size_t cap = n + n / 2 + 64;
        uint8_t *mk = realloc(f->mark, cap);
        if (!mk)
                return -ENOMEM;
        f->mark = mk;
        size_t *pa = realloc(f->path, cap * sizeof *pa);
        if (!pa)
                return -ENOMEM;
        f->path = pa;
        f->scratch_cap = cap;
        return 0;
}

/* Decide proc i by walking up its ancestors until a decided one. */
static void resolve(tr_procfam *f, const tr_scan *scan, size_t i)
{
        size_t depth = 0, j = i;
        uint8_t result = M_NOT;
        for (;;) {
                uint8_t mk = f->mark[j];
                if (mk != M_UNKNOWN) {
                        result = mk == M_MEMBER ? M_MEMBER : M_NOT; /* visiting = cycle */
                        break;
                }
                f->mark[j] = M_VISITING;
                f->path[depth++] = j;
                const tr_proc *c = &scan->procs[j];
                const tr_proc *par = c->ppid > 0 && c->ppid != c->pid ? tr_scan_find(scan, c->ppid) : NULL;
                /* a parent born after its child is a reused pid, not the parent */
                if (!par || par->start_ticks > c->start_ticks) {
                        result = M_NOT;
                        break;
                }
                j = (size_t) (par - scan->procs);
        }
        for (size_t k = 0; k < depth; k++)
                f->mark[f->path[k]] = result;
}

static int members_by_walk(tr_procfam *f, const tr_scan *scan, int marker_index)
{
        if (ensure_scratch(f, scan->n) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < scan->n; i++) {
                const tr_proc *p = &scan->procs[i];
                if (is_excluded(f, p->pid))
                        f->mark[i] = M_EXCLUDED;
                else if (initial_member(f, p, marker_index))
                        f->mark[i] = M_MEMBER;
                else
                        f->mark[i] = M_UNKNOWN;
        }
        f->n_idx = 0;
        for (size_t i = 0; i < scan->n; i++) {
                if (f->mark[i] == M_UNKNOWN)
                        resolve(f, scan, i);
                if (f->mark[i] == M_MEMBER && push_idx(f, i) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int grow_table(member **t, size_t *cap, size_t need)
{
        if (need <= *cap)
                return 0;
        size_t c = need + need / 2 + 16;
        member *p = realloc(*t, c * sizeof *p);
        if (!p)
                return -ENOMEM;
        *t = p;
        *cap = c;
        return 0;
}

static int copy_exclude(tr_procfam *f, const tr_pidset *exclude)
{
        if (exclude == &f->exclude)
                return 0;
        tr_pidset_clear(&f->exclude);
        if (!exclude)
                return 0;
        for (size_t i = 0; i < exclude->n; i++)
                if (tr_pidset_add(&f->exclude, exclude->pids[i]) < 0)
                        return -ENOMEM;
        tr_pidset_normalize(&f->exclude);
        return 0;
}

static uint64_t sub0(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

/* Whether an exited member o was reaped by a member: its parent (as last seen) was a
 * member then and is still a live member in the new table (f->old, k entries), and does not
 * ignore SIGCHLD (then the kernel reaps and nothing reaches the parent's cutime). */
static bool reaped_by_member(const tr_procfam *f, const member *o, size_t k)
{
        const member *was = table_find(f->m, f->n, o->ppid);
        if (!was)
                return false;
        const member *now = table_find(f->old, k, o->ppid);
        return now && now->start_ticks == was->start_ticks && is_live(now) && !now->ignores_sigchld;
}

int tr_procfam_update(tr_procfam *f, const tr_scan *scan, int marker_index, const tr_pidset *exclude)
{
        if (copy_exclude(f, exclude) < 0)
                return -ENOMEM;
        if (scan->clk_tck > 0)
                f->clk_tck = scan->clk_tck;

        /* f->idx: the members' scan indices, ascending (= by pid) */
        int r = tr_scan_has_index(scan) ? members_by_index(f, scan, marker_index)
                                        : members_by_walk(f, scan, marker_index);
        if (r < 0)
                return r;
        size_t nm = f->n_idx;

        /* build the new table in f->old, then swap */
        if (grow_table(&f->old, &f->cap_old, nm) < 0)
                return -ENOMEM;
        size_t k = 0, j = 0; /* both in pid order: j walks the previous table along */
        for (size_t q = 0; q < nm; q++) {
                const tr_proc *p = &scan->procs[f->idx[q]];
                while (j < f->n && f->m[j].pid < p->pid)
                        j++;
                const member *was = j < f->n && f->m[j].pid == p->pid ? &f->m[j] : NULL;
                bool known = was && was->start_ticks == p->start_ticks;
                f->old[k++] = (member){
                        .pid = p->pid,
                        .ppid = p->ppid,
                        .state = p->state,
                        .has_io = p->has_io,
                        .ignores_sigchld = (p->sigignore >> (SIGCHLD - 1)) & 1u,
                        .start_ticks = p->start_ticks,
                        .utime = p->utime_ticks,
                        .stime = p->stime_ticks,
                        .cutime = p->cutime_ticks,
                        .cstime = p->cstime_ticks,
                        .cutime0 = known ? was->cutime0 : p->cutime_ticks,
                        .cstime0 = known ? was->cstime0 : p->cstime_ticks,
                        .rss = p->rss_bytes,
                        .vsize = p->vsize_bytes,
                        .io_read = p->io_read_bytes,
                        .io_write = p->io_write_bytes,
                };
        }

        /* earlier members not in the new table have exited (or left for a subfamily) */
        size_t n_new = k;
        j = 0;
        for (size_t i = 0; i < f->n; i++) {
                const member *o = &f->m[i];
                while (j < k && f->old[j].pid < o->pid)
                        j++;
                const member *now = j < k && f->old[j].pid == o->pid ? &f->old[j] : NULL;
                if (now && now->start_ticks == o->start_ticks) {
                        n_new--;
                        continue;
                }
                const tr_proc *p = tr_scan_find(scan, o->pid);
                if (p && p->start_ticks == o->start_ticks)
                        continue; /* still alive, excluded now: the subfamily's */
                f->exited_user_ticks += o->utime;
                f->exited_sys_ticks += o->stime;
                bool covered = reaped_by_member(f, o, k);
                /* /proc/PID/io counts a process's reaped children too: the reaper's io
                 * now holds the exited member's final io, its last seen io would be a
                 * second copy */
                if (o->has_io && !covered) {
                        f->exited_io_read += o->io_read;
                        f->exited_io_write += o->io_write;
                }
                if (covered) {
                        /* its whole CPU lands in the parent's cutime/cstime, including
                         * the baseline we never counted: take that back */
                        f->uncount_user_ticks += o->cutime0;
                        f->uncount_sys_ticks += o->cstime0;
                } else {
                        f->credit_user_ticks += o->utime + sub0(o->cutime, o->cutime0);
                        f->credit_sys_ticks += o->stime + sub0(o->cstime, o->cstime0);
                }
        }

        member *t = f->m;
        size_t tc = f->cap;
        f->m = f->old;
        f->cap = f->cap_old;
        f->n = k;
        if (k)
                f->seen_members = true;
        f->old = t;
        f->cap_old = tc;
        f->n_old = 0;
        f->n_new = n_new;
        f->updated = true;
        f->updated_usec = scan->taken_usec;
        return 0;
}

/* Seeds pinned by start time, read from scan when given, else from the live /proc. */
static int set_seeds(tr_procfam *f, const tr_scan *scan, const tr_pidset *pids)
{
        ident *s = NULL;
        size_t n = 0;
        if (pids && pids->n) {
                s = malloc(pids->n * sizeof *s);
                if (!s)
                        return -ENOMEM;
                for (size_t i = 0; i < pids->n; i++) {
                        pid_t pid = pids->pids[i];
                        uint64_t st;
                        if (pid <= 1)
                                continue;
                        /* pinned now: a seed that is gone (or reused later) names nobody */
                        if (scan) {
                                const tr_proc *p = tr_scan_find(scan, pid);
                                if (!p)
                                        continue;
                                st = p->start_ticks;
                        } else if (tr_pid_start_ticks(pid, &st) < 0) {
                                continue;
                        }
                        s[n++] = (ident){ pid, st };
                }
                qsort(s, n, sizeof *s, cmp_ident);
        }
        free(f->seeds);
        f->seeds = s;
        f->n_seeds = n;
        return 0;
}

int tr_procfam_set_seeds(tr_procfam *f, const tr_pidset *pids) { return set_seeds(f, NULL, pids); }

int tr_procfam_set_seeds_at(tr_procfam *f, const tr_scan *scan, const tr_pidset *pids)
{
        return set_seeds(f, scan, pids);
}

/* ---- scans -------------------------------------------------------------------------- */

static int private_update(tr_procfam *f, tr_error *err)
{
        const char *markers[1] = { f->env_marker };
        tr_scan_opts o = { tr_procfam_scan_wants(f), markers, f->env_marker ? 1 : 0 };
        int r = tr_scan_take(&f->scan, &o, err);
        if (r < 0)
                return r;
        r = tr_procfam_update(f, &f->scan, f->env_marker ? 0 : -1, &f->exclude);
        if (r < 0)
                return tr_error_set(err, -r, "procfam %d: out of memory", (int) f->spec.root_pid);
        return 0;
}

int tr_procfam_refresh(tr_procfam *f, tr_error *err)
{
        if (f->updated && f->spec.max_age_usec) {
                uint64_t now = tr_now_usec();
                if (now >= f->updated_usec && now - f->updated_usec <= f->spec.max_age_usec)
                        return 0;
        }
        return private_update(f, err);
}

static size_t count_live(const tr_procfam *f, bool only_signalable)
{
        size_t n = 0;
        for (size_t i = 0; i < f->n; i++)
                if (is_live(&f->m[i]) && (!only_signalable || signalable(f->m[i].pid)))
                        n++;
        return n;
}

int tr_procfam_members(tr_procfam *f, tr_pidset *out, tr_error *err)
{
        int r = tr_procfam_refresh(f, err);
        if (r < 0)
                return r;
        tr_pidset_clear(out);
        for (size_t i = 0; i < f->n; i++)
                if (is_live(&f->m[i]) && tr_pidset_add(out, f->m[i].pid) < 0)
                        return tr_error_set(err, ENOMEM, "procfam: out of memory");
        tr_pidset_normalize(out);
        return 0;
}

static uint64_t max_keep(uint64_t *kept, uint64_t v)
{
        if (v > *kept)
                *kept = v;
        return *kept;
}

int tr_procfam_usage(tr_procfam *f, tr_usage *out, tr_error *err)
{
        int r = tr_procfam_refresh(f, err);
        if (r < 0)
                return r;
        /* I/O: members' /proc/PID/io (which includes what they reaped) + the last seen io of
         * exited members no live member reaped.
         * CPU.  Classic (what HTCondor's procd does): live members' utime+stime plus exited
         * members' last seen values; everything an exited member used after its last scan
         * is lost.  Better, used when no exclude set is in force: a member's reaped
         * children's CPU reaches its cutime/cstime in full at wait() time, so
         *   live members' utime+stime + their cutime/cstime growth since first seen
         *   + exited members that no live member reaped: last seen utime+stime+growth
         *   - the first-seen baselines of exited members a live member reaped.
         * With an exclude set the growth could hold a subfamily's processes reaped by a
         * member (counted again by the subfamily), so the classic sum is used there. */
        bool reaped = f->exclude.n == 0;
        uint64_t ut = reaped ? f->credit_user_ticks : f->exited_user_ticks;
        uint64_t st = reaped ? f->credit_sys_ticks : f->exited_sys_ticks;
        uint64_t rss = 0, vsize = 0, ior = f->exited_io_read, iow = f->exited_io_write, nlive = 0;
        bool io_ok = true;
        for (size_t i = 0; i < f->n; i++) {
                const member *x = &f->m[i];
                /* zombies still hold their final CPU and io counters until reaped */
                ut += x->utime;
                st += x->stime;
                if (reaped) {
                        ut += sub0(x->cutime, x->cutime0);
                        st += sub0(x->cstime, x->cstime0);
                }
                if (x->has_io) {
                        ior += x->io_read;
                        iow += x->io_write;
                } else {
                        io_ok = false;
                }
                if (!is_live(x))
                        continue;
                nlive++;
                rss += x->rss;
                vsize += x->vsize;
        }
        if (reaped) {
                ut = sub0(ut, f->uncount_user_ticks);
                st = sub0(st, f->uncount_sys_ticks);
        }
        /* Lifetime counters never go down: a child reaped between the reads of its parent
         * and of itself within one scan is missing from both for that scan (or, when its
         * pid is below the parent's after a pid wrap, counted twice); report the max. */
        ut = max_keep(&f->rep_user_ticks, ut);
        st = max_keep(&f->rep_sys_ticks, st);
        if (io_ok) {
                ior = max_keep(&f->rep_io_read, ior);
                iow = max_keep(&f->rep_io_write, iow);
        }
        uint64_t hz = (uint64_t) f->clk_tck;
        uint64_t uu = ut * 1000000u / hz, su = st * 1000000u / hz;
        tr_u64_set(out, &out->num_procs, nlive, TR_SRC_PROC);
        tr_u64_set(out, &out->rss_bytes, rss, TR_SRC_PROC);
        tr_u64_set(out, &out->image_size_bytes, vsize, TR_SRC_PROC);
        if (!f->seen_members)
                return 0; /* every member exited before a scan saw it: its CPU and I/O are
                             unknown, not zero */
        tr_u64_set(out, &out->cpu_user_usec, uu, TR_SRC_PROC);
        tr_u64_set(out, &out->cpu_system_usec, su, TR_SRC_PROC);
        tr_u64_set(out, &out->cpu_usec, (ut + st) * 1000000u / hz, TR_SRC_PROC);
        if (io_ok) { /* unknown is not zero: a member whose io we could not read spoils the sum */
                tr_u64_set(out, &out->io_read_bytes, ior, TR_SRC_PROC);
                tr_u64_set(out, &out->io_write_bytes, iow, TR_SRC_PROC);
        }
        return 0;
}

/* ---- signals ------------------------------------------------------------------------ */

/* Signal every live member; ESRCH (gone, or pid reused) is fine.  Returns the first other
 * failure (-errno, err filled) after trying them all. */
static int signal_members(tr_procfam *f, int sig, tr_error *err)
{
        int first = 0;
        for (size_t i = 0; i < f->n; i++) {
                const member *x = &f->m[i];
                if (!is_live(x) || !signalable(x->pid))
                        continue;
                int r = tr_safe_kill(x->pid, x->start_ticks, sig);
                if (r < 0 && r != -ESRCH && first == 0)
                        first = tr_error_setx(err, -r, "procfam %d: signal %d to %d", (int) f->spec.root_pid, sig,
                                              (int) x->pid);
        }
        return first;
}

int tr_procfam_signal(tr_procfam *f, int sig, tr_error *err)
{
        int r = private_update(f, err); /* signals act on a fresh scan */
        if (r < 0)
                return r;
        return signal_members(f, sig, err);
}

/* Every live member shows stopped (T or t); only_signalable: those we may signal. */
static bool all_stopped(const tr_procfam *f, bool only_signalable)
{
        for (size_t i = 0; i < f->n; i++)
                if (is_live(&f->m[i]) && (!only_signalable || signalable(f->m[i].pid)) && f->m[i].state != 'T' &&
                    f->m[i].state != 't')
                        return false;
        return true;
}

/* SIGSTOP every member and rescan until the family is still: a scan in which every live
 * member we may signal (not pid 1, not ourselves) shows stopped (T or t) and nothing new,
 * then one more scan with nothing new.
 * A member caught inside fork() shows R or D until the fork returns (kernel/fork.c
 * copy_process(): only a fatal signal cancels a fork in progress, a SIGSTOP landing during
 * it is taken after it; Linux 4.20 on, "signal: Don't restart fork when signals come in"),
 * and its child can be attached after the directory listing of the scan that
 * saw the parent stopped: without the second scan that child is never seen, outlives its
 * killed parent, and is reparented out of the tree.  Returns 0 when still or when the
 * deadline passed first. */
static int stop_all(tr_procfam *f, uint64_t deadline, tr_error *err)
{
        bool still = false;
        uint64_t pause = 100;
        for (;;) {
                (void) signal_members(f, SIGSTOP, NULL);
                int r = private_update(f, err);
                if (r < 0)
                        return r;
                if (f->n_new == 0 && still)
                        return 0;
                if (tr_now_usec() >= deadline)
                        return 0;
                still = f->n_new == 0 && all_stopped(f, true);
                if (f->n_new == 0 && !still)
                        tr_backoff(&pause, deadline); /* a member not stopped yet: let it */
        }
}

int tr_procfam_kill(tr_procfam *f, uint64_t timeout_usec, tr_kill_result *res, tr_error *err)
{
        uint64_t t0 = tr_now_usec(), deadline = t0 + timeout_usec;
        res->empty = false;
        res->rounds = 0;
        res->method = "proc spree";
        tr_pidset_clear(&res->survivors);

        int r = private_update(f, err);
        if (r < 0)
                return r;
        while (count_live(f, true) > 0) {
                res->rounds++;
                /* a member that does not stop within a second is stuck (D state), not
                 * forking: kill what is there rather than wait out the whole timeout */
                uint64_t stop_by = tr_now_usec() + 1000000u;
                r = stop_all(f, stop_by < deadline ? stop_by : deadline, err);
                if (r < 0)
                        return r;
                (void) signal_members(f, SIGKILL, NULL);
                (void) signal_members(f, SIGCONT, NULL);
                /* wait for the killed to die; a newcomer means another round */
                uint64_t pause = 500;
                for (;;) {
                        r = private_update(f, err);
                        if (r < 0)
                                return r;
                        if (count_live(f, true) == 0 || f->n_new > 0 || tr_now_usec() >= deadline)
                                break;
                        tr_backoff(&pause, deadline);
                }
                if (tr_now_usec() >= deadline)
                        break;
        }
        res->empty = count_live(f, false) == 0;
        for (size_t i = 0; i < f->n; i++)
                if (is_live(&f->m[i]) && tr_pidset_add(&res->survivors, f->m[i].pid) < 0)
                        return tr_error_set(err, ENOMEM, "procfam: out of memory");
        tr_pidset_normalize(&res->survivors);
        res->elapsed_usec = tr_now_usec() - t0;
        return 0;
}

static bool none_stopped(const tr_procfam *f)
{
        for (size_t i = 0; i < f->n; i++)
                if (is_live(&f->m[i]) && (f->m[i].state == 'T' || f->m[i].state == 't'))
                        return false;
        return true;
}

int tr_procfam_freeze(tr_procfam *f, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        uint64_t deadline = tr_now_usec() + timeout_usec;
        *reached = TR_FREEZING;
        int r = private_update(f, err);
        if (r < 0)
                return r;
        uint64_t pause = 500;
        for (;;) {
                r = stop_all(f, deadline, err);
                if (r < 0)
                        return r;
                if (all_stopped(f, false)) {
                        *reached = TR_FROZEN;
                        return 0;
                }
                if (tr_now_usec() >= deadline)
                        return 0;
                tr_backoff(&pause, deadline);
        }
}

int tr_procfam_thaw(tr_procfam *f, uint64_t timeout_usec, tr_freeze_state *reached, tr_error *err)
{
        uint64_t deadline = tr_now_usec() + timeout_usec;
        *reached = TR_FREEZING;
        uint64_t pause = 500;
        for (;;) {
                int r = private_update(f, err);
                if (r < 0)
                        return r;
                if (none_stopped(f)) {
                        *reached = TR_THAWED;
                        return 0;
                }
                r = signal_members(f, SIGCONT, err);
                if (r < 0)
                        return r;
                if (tr_now_usec() >= deadline)
                        return 0;
                tr_backoff(&pause, deadline);
        }
}

/* Whether the member is still running now: the same start time, not a zombie. */
static bool alive_now(const member *x) { return tr_pid_alive_as(x->pid, x->start_ticks); }

int tr_procfam_populated(tr_procfam *f, bool *populated, tr_error *err)
{
        int r = tr_procfam_refresh(f, err);
        if (r < 0)
                return r;
        /* cheap check first: a known member still alive (pid + start, not a zombie) */
        for (size_t i = 0; i < f->n; i++) {
                const member *x = &f->m[i];
                if (is_live(x) && alive_now(x)) {
                        *populated = true;
                        return 0;
                }
        }
        /* none of them: a fresh scan decides (zombies and newcomers) */
        r = private_update(f, err);
        if (r < 0)
                return r;
        *populated = count_live(f, false) > 0;
        return 0;
}
