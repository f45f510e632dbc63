/* cgroup-stats.c - what a cgroup says about its family: members (the v2 cgroup.procs kept
 * open, the v1 ones read afresh, descendants through cgroup-subtree.h) and usage from the
 * counter files kept open by the handle, each field from the best hierarchy, only for the
 * groups of fields asked for. */
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgparse.h"
#include "util.h"

/* ---- members ------------------------------------------------------------------------ */

/* The pids of cgroup.procs text, one a line; a line that is not one (never written by the
 * kernel) is skipped.  In one pass, digits by hand: the line's split and its parse were
 * ~150 instructions a pid of every GET_USAGE (issue 20). */
static int add_pids(tr_pidset *set, const char *text)
{
        for (const char *p = text; *p;) {
                const char *d = p;
                uint64_t v = 0;
                while ((unsigned) (*d - '0') < 10u && d - p < 11) /* 11 digits: no overflow, > INT32_MAX */
                        v = v * 10u + (unsigned) (*d++ - '0');
                if (d > p && (*d == '\n' || *d == '\0') && v > 0 && v <= INT32_MAX && tr_pidset_add(set, (pid_t) v) < 0)
                        return -ENOMEM;
                while (*d && *d != '\n')
                        d++;
                p = *d ? d + 1 : d;
        }
        return 0;
}

/* The text of cgroup.procs from fd into cg->procs_buf (pread from offset 0), pids into set.
 * Kernel quirk: cgroup.procs is a multi-record seq_file, so one read returns at most one
 * seq buffer (PAGE_SIZE, >= 4096 bytes) and a short read is not EOF by itself.  Each
 * request here is at least 4096 bytes, so a read that came back short with room left in a
 * 4096-byte buffer for another record (<= 12 bytes) ended because the iterator did: EOF,
 * without the extra pread that would return 0.  v1's pid list iterates the same way
 * (cgroup_pidlist_start/next under the same seq_read_iter), so a v1 file opened afresh
 * ends there too: one read where there were two (issue 20).  (A regular file - the fixture
 * trees - ends there as well.) */
static int read_procs_fd(tr_cgroup *cg, int fd, tr_pidset *set)
{
        size_t off = 0;
        for (;;) {
                if (cg->procs_cap - off < 4096 + 1) {
                        size_t cap = cg->procs_cap ? cg->procs_cap * 2 : 8192;
                        char *nb = realloc(cg->procs_buf, cap);
                        if (!nb)
                                return -ENOMEM;
                        cg->procs_buf = nb;
                        cg->procs_cap = cap;
                }
                size_t want = cg->procs_cap - 1 - off;
                ssize_t n = pread(fd, cg->procs_buf + off, want, (off_t) off);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                off += (size_t) n;
                if (n == 0 || ((size_t) n < want && (size_t) n + 64 <= 4096))
                        break;
        }
        cg->procs_buf[off] = '\0';
        return add_pids(set, cg->procs_buf);
}

/* The handle's own cgroup.procs in hierarchy i: the v2 one through the fd kept open (see
 * H_PROCS), a v1 one opened afresh (see hot_files in cgroup.c). */
static int read_own_procs(tr_cgroup *cg, int i, bool v2, tr_pidset *set)
{
        if (v2) {
                int fd = tr_cg_hot_fd(cg, H_PROCS);
                return fd < 0 ? fd : read_procs_fd(cg, fd, set);
        }
        _cleanup_close_ int fd = openat(tr_cg_dirfd(cg, i), "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return fd < 0 ? -errno : read_procs_fd(cg, fd, set);
}

typedef struct procs_visit {
        tr_cgroup *cg;
        tr_pidset *set;
        size_t n0; /* pids of the handle's own cgroup, before the descendants' */
} procs_visit;

static int visit_procs(int fd, void *ud)
{
        procs_visit *pv = ud;
        return read_procs_fd(pv->cg, fd, pv->set);
}

static void restart_procs(void *ud)
{
        procs_visit *pv = ud;
        pv->set->n = pv->n0;
}

/* Whether only root may write the cgroup.procs behind fd: then no one else can move a
 * process in without an event (clone3(CLONE_INTO_CGROUP), AIO and old splice writes need
 * that write access: cgroup-notify.h). */
static bool only_root_writes(int fd)
{
        struct stat st;
        return tr_fstat(fd, &st) == 0 && st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* The handle's own members in hierarchy i.  An owned cgroup's own v2 cgroup.procs, once
 * read empty, stays empty while its directory has no event: a fork needs a member inside,
 * and every way in that only root's write access allows is a write to cgroup.procs or
 * cgroup.threads, told by the watch (procd's own placements included: a family's root
 * goes to its leaf, a tr_cgroup_attach here first).  Only while a child cgroup is cached
 * under it (the leaf): that child's removal is an event of this directory, so the cgroup
 * cannot have been removed unseen (its own removal is no event: cgroup-notify.h; its
 * cgroup.procs read is what says ENODEV).  Any other cgroup, a cgroup.procs others may
 * write, or no watch (the share of watches taken: not asked again until the handle
 * rests): read every time. */
static int own_members(tr_cgroup *cg, int i, bool v2, tr_pidset *set)
{
        tr_cg_notify *notify = cg->hs->notify;
        bool watched = v2 && notify && (cg->flags & TR_CG_OWNED) && !cg->own_unwatched;
        if (watched && cg->own_empty && tr_cg_subtree_cached(cg->procs_tree[i]) > 0 &&
            tr_cg_notify_quiet(notify, &cg->own_mark)) {
                cg->own_skipped++;
                return 0;
        }
        /* watched before it is read: a process moved in after the read is an event */
        if (watched && !cg->own_mark.w && tr_cg_notify_watch(notify, tr_cg_dirfd(cg, i), true, &cg->own_mark) < 0) {
                cg->own_unwatched = true;
                watched = false;
        }
        size_t before = set->n;
        int r = read_own_procs(cg, i, v2, set);
        cg->own_empty = watched && r == 0 && set->n == before && only_root_writes(tr_cg_hot_fd(cg, H_PROCS));
        if (cg->own_empty)
                tr_cg_notify_prove(notify, &cg->own_mark);
        return r;
}

/* The members listed in hierarchy `only` (-1: the v2 tree, or every v1 hierarchy where
 * there is none, their union).  The caller synced the watches (sync_changes). */
static int members_in(tr_cgroup *cg, int only, tr_pidset *out, tr_error *err)
{
        tr_pidset_clear(out);
        int v2 = tr_cg_v2_index(cg);
        bool any = false;
        /* one hierarchy asked for (or the v2 tree): only that one visited */
        int one = only >= 0 ? only : v2;
        int first = one >= 0 ? one : 0, end = one >= 0 ? one + 1 : cg->hs->n;
        for (int i = first; i < end && i < cg->hs->n; i++) {
                if (tr_cg_dirfd(cg, i) < 0)
                        continue;
                /* a gone top-level cgroup: cgroup.procs is ENOENT (openat) or ENODEV (read on
                 * the kept fd) there */
                int r = own_members(cg, i, i == v2, out);
                if (tr_cg_is_gone_errno(-r))
                        continue;
                if (r == 0) {
                        /* descendants through the cache: a v1 cgroup.procs is not kept open */
                        procs_visit pv = { .cg = cg, .set = out, .n0 = out->n };
                        tr_cg_subtree_visit v = { .file = "cgroup.procs", .keep_open = i == v2, .read = visit_procs,
                                                  .restart = restart_procs, .ud = &pv, .notify = cg->hs->notify };
                        r = tr_cg_subtree_each(&cg->procs_tree[i], tr_cg_dirfd(cg, i), &v);
                }
                if (r < 0)
                        return tr_error_setx(err, -r, "listing members of %s:%s", cg->hs->h[i].mount_point,
                                             cg->path[i]);
                any = true;
        }
        if (!any)
                return tr_error_set(err, ENODEV, "cgroup is gone in every hierarchy");
        tr_pidset_normalize(out);
        return 0;
}

/* Every change to the watched directories made before now, taken in: once a call, before
 * any watch is asked (cgroup-notify.h).  A failed read leaves the watches unproven. */
static void sync_changes(tr_cgroup *cg)
{
        if (cg->hs->notify)
                (void) tr_cg_notify_sync(cg->hs->notify);
}

unsigned tr_cgroup_own_procs_skipped(const tr_cgroup *cg) { return cg->own_skipped; }

int tr_cgroup_members(tr_cgroup *cg, tr_pidset *out, tr_error *err)
{
        sync_changes(cg);
        return members_in(cg, -1, out, err);
}

/* The process count of a usage record.  Without a v2 tree, one v1 hierarchy is enough:
 * the first one the cgroup is in (tr_cgroup_primary_index, the one membership is matched
 * in).  A v1 cgroup.procs cannot be kept open (a kept fd rereads the kernel's cached pid
 * list, kept up to 1 s: kernel/cgroup/cgroup-v1.c, cgroup_pidlist_start), so each
 * hierarchy costs an open, two reads, a stat and a close: the union over the 7 v1
 * hierarchies of a pure-v1 node was ~30 system calls per GET_USAGE (issue 20).  The
 * other hierarchies' members are listed where it matters: kill, freeze, DUMP. */
static int count_members(tr_cgroup *cg, tr_pidset *out, tr_error *err)
{
        int i = tr_cg_v2_index(cg) >= 0 ? -1 : tr_cgroup_primary_index(cg);
        int r = members_in(cg, i, out, err);
        if (r < 0 && i >= 0)
                r = members_in(cg, -1, out, err); /* gone there: the union of the others */
        return r;
}

/* ---- usage ------------------------------------------------------------------------- */

typedef struct oom_visit {
        uint64_t own, sum;
} oom_visit;

/* A descendant's memory.oom_control; one without an oom_kill line adds nothing. */
static int visit_oom(int fd, void *ud)
{
        oom_visit *ov = ud;
        char buf[256];
        int r = tr_pread_all(fd, buf, sizeof buf);
        if (r < 0)
                return r;
        uint64_t v;
        if (tr_parse_oom_control_v1(buf, &v) == 0)
                ov->sum += v;
        return 0;
}

static void restart_oom(void *ud)
{
        oom_visit *ov = ud;
        ov->sum = ov->own;
}

static void usage_cpu(tr_cgroup *cg, unsigned want, tr_usage *u, char *buf, size_t size)
{
        /* cpu.stat is core accounting in v2: present in every v2 cgroup without the cpu
         * controller, so on hybrid hosts it comes from the v2 tree too. */
        if (tr_cg_hot_read(cg, H_CPU_STAT, buf, size) >= 0 && tr_parse_cpu_stat(buf, u) == 0 && u->cpu_usec.available)
                return;
        /* cpuacct.usage_user/_sys (ns, 4.7+) are finer than cpuacct.stat's USER_HZ ticks;
         * cpuacct.usage_all holds both, a line a CPU, in one read where they are two (issue
         * 20: a v1 GET_USAGE read 3 cpuacct files).  Past its buffer (~350 CPUs): the two. */
        uint64_t us, sy, v;
        int r = tr_cg_hot_read(cg, H1_CPUACCT_ALL, buf, size);
        bool split = r >= 0 && tr_parse_cpuacct_usage_all(buf, u) == 0;
        if (!split) {
                if (r == -EFBIG)
                        tr_cg_hot_forget(cg, H1_CPUACCT_ALL); /* too many CPUs for buf: not tried again */
                if (tr_cg_hot_u64(cg, H1_CPUACCT_USER, &us) && tr_cg_hot_u64(cg, H1_CPUACCT_SYS, &sy)) {
                        tr_u64_set(u, &u->cpu_user_usec, us / 1000u, TR_SRC_CGROUP_V1);
                        tr_u64_set(u, &u->cpu_system_usec, sy / 1000u, TR_SRC_CGROUP_V1);
                        split = true;
                } else if (tr_cg_hot_read(cg, H1_CPUACCT_STAT, buf, size) >= 0) {
                        split = tr_parse_cpuacct_stat(buf, sysconf(_SC_CLK_TCK), u) == 0 &&
                                u->cpu_user_usec.available;
                }
        }
        /* the total (the scheduler's runtime; the split above is tick-sampled on 6.18, so
         * the two need not add up): asked for, or the only CPU figure there is */
        if (((want & TR_WANT_CPU) || !split) && tr_cg_hot_u64(cg, H1_CPUACCT_USAGE, &v))
                tr_u64_set(u, &u->cpu_usec, v / 1000u, TR_SRC_CGROUP_V1);
}

/* v2 when the handle's v2 cgroup has memory.current, else v1. */
static void usage_memory(tr_cgroup *cg, unsigned want, tr_usage *u, char *buf, size_t size)
{
        uint64_t v;
        bool v2 = tr_cg_hot_u64(cg, H_MEM_CURRENT, &v);
        if (v2) {
                if (want & TR_WANT_MEMORY) {
                        tr_u64_set(u, &u->memory_current_bytes, v, TR_SRC_CGROUP_V2);
                        if (tr_cg_hot_u64(cg, H_MEM_PEAK, &v)) /* memory.peak: 5.19+ */
                                tr_u64_set(u, &u->memory_peak_bytes, v, TR_SRC_CGROUP_V2);
                }
                if ((want & (TR_WANT_MEMORY_STAT | TR_WANT_RSS)) && tr_cg_hot_read(cg, H_MEM_STAT, buf, size) >= 0)
                        (void) tr_parse_memory_stat_v2(buf, u);
                /* memory.events is hierarchical (memory.events.local is not) */
                if ((want & TR_WANT_OOM) && tr_cg_hot_read(cg, H_MEM_EVENTS, buf, size) >= 0)
                        (void) tr_parse_memory_events(buf, u);
                return;
        }
        uint64_t lru_anon, lru_all;
        bool cheap = (want & TR_WANT_RSS) && !(want & TR_WANT_MEMORY_STAT);
        if (cheap && tr_cg_hot_read(cg, H1_MEM_NUMA_STAT, buf, size) >= 0 &&
            tr_parse_memory_numa_stat_v1(buf, getpagesize(), &lru_anon, &lru_all) == 0) {
                /* the hierarchical LRU lists: anon holds rss and shmem (shmem pages are
                 * swap-backed: on the anon lists), all of them rss + cache, as memory.stat's
                 * total_rss + total_shmem and total_rss + total_cache below.  Pages still in a
                 * CPU's LRU-add batch are on no list yet (a few hundred KiB at most). */
                tr_u64_set(u, &u->rss_bytes, lru_anon, TR_SRC_CGROUP_V1);
                if (want & TR_WANT_MEMORY)
                        tr_u64_set(u, &u->memory_current_bytes, lru_all, TR_SRC_CGROUP_V1);
        } else if ((want & (TR_WANT_MEMORY_STAT | TR_WANT_RSS)) && tr_cg_hot_read(cg, H1_MEM_STAT, buf, size) >= 0) {
                /* asked for, or no memory.numa_stat (a kernel without CONFIG_NUMA) */
                (void) tr_parse_memory_stat_v1(buf, u);
        }
        /* v1 memory.usage_in_bytes is a fuzz value (per-CPU charge batches; the kernel's
         * cgroup-v1 memory.rst 5.5 says to take RSS+CACHE from memory.stat for an exact one):
         * with memory.stat read, current = total_rss + total_cache from it, one read fewer.
         * (usage_in_bytes also holds kernel memory; memory.stat has no line for it.) */
        if ((want & TR_WANT_MEMORY) && u->memory_anon_bytes.available && u->memory_file_bytes.available)
                tr_u64_set(u, &u->memory_current_bytes,
                           u->memory_anon_bytes.value + u->memory_file_bytes.value +
                                   (u->memory_shmem_bytes.available ? u->memory_shmem_bytes.value : 0),
                           TR_SRC_CGROUP_V1);
        else if ((want & TR_WANT_MEMORY) && !u->memory_current_bytes.available && tr_cg_hot_u64(cg, H1_MEM_USAGE, &v))
                tr_u64_set(u, &u->memory_current_bytes, v, TR_SRC_CGROUP_V1);
        if ((want & TR_WANT_MEMORY) && tr_cg_hot_u64(cg, H1_MEM_MAX, &v))
                tr_u64_set(u, &u->memory_peak_bytes, v, TR_SRC_CGROUP_V1);
        /* Kernel quirk: v1 memory.oom_control's oom_kill counts only kills in that very
         * cgroup, not its descendants (memcg_memory_event stops at the first level on v1):
         * sum the subtree.  The own file and the descendants' are kept open
         * (cgroup-subtree.h).  No oom_kill line (kernels before 4.13): unknown. */
        int i = tr_cg_v1_index(cg, TR_CTRL_MEMORY);
        oom_visit ov = { 0 };
        if (!(want & TR_WANT_OOM) || i < 0 || tr_cg_hot_read(cg, H1_MEM_OOM, buf, size) < 0 ||
            tr_parse_oom_control_v1(buf, &ov.own) < 0)
                return;
        ov.sum = ov.own;
        tr_cg_subtree_visit sv = { .file = "memory.oom_control", .keep_open = true, .read = visit_oom,
                                   .restart = restart_oom, .ud = &ov, .notify = cg->hs->notify };
        if (tr_cg_subtree_each(&cg->oom_tree, tr_cg_dirfd(cg, i), &sv) == 0)
                tr_u64_set(u, &u->oom_kills, ov.sum, TR_SRC_CGROUP_V1);
}

static void usage_pids_io(tr_cgroup *cg, unsigned want, tr_usage *u, char *buf, size_t size)
{
        uint64_t v;
        if (want & TR_WANT_PIDS) {
                if (tr_cg_hot_u64(cg, H_PIDS_CURRENT, &v))
                        tr_u64_set(u, &u->pids_current, v, TR_SRC_CGROUP_V2);
                else if (tr_cg_hot_u64(cg, H1_PIDS_CURRENT, &v))
                        tr_u64_set(u, &u->pids_current, v, TR_SRC_CGROUP_V1);
                if (tr_cg_hot_u64(cg, H_PIDS_PEAK, &v))
                        tr_u64_set(u, &u->pids_peak, v, TR_SRC_CGROUP_V2);
                else if (tr_cg_hot_u64(cg, H1_PIDS_PEAK, &v))
                        tr_u64_set(u, &u->pids_peak, v, TR_SRC_CGROUP_V1);
        }
        if (!(want & TR_WANT_IO))
                return;
        if (tr_cg_hot_read(cg, H_IO_STAT, buf, size) >= 0)
                (void) tr_parse_io_stat(buf, u);
        else if ((want & TR_WANT_IO_THROTTLE) && tr_cg_hot_read(cg, H1_BLKIO, buf, size) >= 0)
                /* Observed on this 6.18 host: blkio.throttle.* count only on devices that
                 * have a throttle rule in the cgroup; otherwise they stay "Total 0". */
                (void) tr_parse_blkio_bytes(buf, u);
}

static void usage_psi(tr_cgroup *cg, tr_usage *u, char *buf, size_t size)
{

        static const struct {
                enum tr_cg_hot h;
                size_t some, full; /* offsets of the tr_u64 fields */
        } psi[] = {
                { H_CPU_PRESSURE, offsetof(tr_usage, psi_cpu_some_usec), offsetof(tr_usage, psi_cpu_full_usec) },
                { H_MEM_PRESSURE, offsetof(tr_usage, psi_memory_some_usec), offsetof(tr_usage, psi_memory_full_usec) },
                { H_IO_PRESSURE, offsetof(tr_usage, psi_io_some_usec), offsetof(tr_usage, psi_io_full_usec) },
        };
        for (size_t k = 0; k < TR_ARRAY_SIZE(psi); k++) {
                uint64_t some = 0, full = 0;
                bool has_full = false;
                if (tr_cg_psi_read(cg, psi[k].h, buf, size) < 0 || tr_parse_pressure(buf, &some, &full, &has_full) < 0)
                        continue;
                tr_u64_set(u, (tr_u64 *) ((char *) u + psi[k].some), some, TR_SRC_CGROUP_V2);
                if (has_full)
                        tr_u64_set(u, (tr_u64 *) ((char *) u + psi[k].full), full, TR_SRC_CGROUP_V2);
        }
}

int tr_cgroup_usage_want(tr_cgroup *cg, unsigned want, tr_usage *out, tr_error *err)
{
        char buf[16384];
        tr_usage_init(out);
        sync_changes(cg);
        if (want & (TR_WANT_CPU | TR_WANT_CPU_SPLIT))
                usage_cpu(cg, want, out, buf, sizeof buf);
        if (want & (TR_WANT_MEMORY | TR_WANT_MEMORY_STAT | TR_WANT_RSS | TR_WANT_OOM))
                usage_memory(cg, want, out, buf, sizeof buf);
        usage_pids_io(cg, want, out, buf, sizeof buf);
        if (want & TR_WANT_PSI)
                usage_psi(cg, out, buf, sizeof buf);
        /* The process count has no counter file: pids.current counts threads.  The
         * members are listed (descendants kept open, cgroup-subtree.h). */
        if (want & TR_WANT_PROCS) {
                pid_t on_stack[256]; /* most families: no malloc */
                _cleanup_pidset_ tr_pidset members = TR_PIDSET_ON(on_stack);
                if (count_members(cg, &members, err) == 0) {
                        int src = tr_cg_v2_index(cg) >= 0 ? TR_SRC_CGROUP_V2 : TR_SRC_CGROUP_V1;
                        tr_u64_set(out, &out->num_procs, members.n, (tr_source) src);
                }
        }
        /* nothing read: the cgroup is gone, or nothing asked for exists in its hierarchies
         * (the OOM kills alone where no memory hierarchy is mounted): only the first is an
         * error; the second leaves the fields unavailable, as any missing counter */
        if (out->sources == 0 && tr_cg_check_exists(cg, "usage", err) < 0)
                return -ENODEV;
        tr_error_clear(err);
        return 0;
}

int tr_cgroup_usage(tr_cgroup *cg, tr_usage *out, tr_error *err)
{
        return tr_cgroup_usage_want(cg, TR_WANT_ALL, out, err);
}
