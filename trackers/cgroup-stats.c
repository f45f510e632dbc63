/* cgroup-stats.c - what a cgroup says about its family: members (the v2 cgroup.procs kept
 * open, the v1 ones read afresh, descendants walked) and usage from the counter files kept
 * open by the handle, each field from the best hierarchy. */
#include "cgroup-internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgparse.h"
#include "cgroup-walk.h"
#include "util.h"

/* ---- members ------------------------------------------------------------------------ */

static int add_pids(tr_pidset *set, char *text)
{
        for (char *p = text; *p;) {
                size_t len = strcspn(p, "\n");
                char save = p[len];
                p[len] = '\0';
                pid_t pid;
                if (len && tr_parse_pid(p, &pid) == 0 && tr_pidset_add(set, pid) < 0)
                        return -ENOMEM;
                p[len] = save;
                p += len;
                if (*p)
                        p++;
        }
        return 0;
}

/* cgroup.procs of dfd, opened afresh: -ENOENT/-ENODEV when that cgroup is gone. */
static int read_procs_at(int dfd, tr_pidset *set)
{
        _cleanup_free_ char *text = NULL;
        int r = tr_read_file_alloc_at(dfd, "cgroup.procs", &text, NULL, NULL);
        return r < 0 ? r : add_pids(set, text);
}

/* Pre callback of the member walk: a descendant vanishing mid-walk is not an error. */
static int collect_procs(int dfd, void *ud)
{
        int r = read_procs_at(dfd, ud);
        return tr_cg_is_gone_errno(-r) ? 0 : r;
}

/* The handle's own v2 cgroup.procs through the fd kept open (see H_PROCS).  Kernel quirk:
 * cgroup.procs is a multi-record seq_file, so one read returns at most one seq buffer
 * (PAGE_SIZE, >= 4096 bytes) and a short read is not EOF by itself.  Each request here is
 * at least 4096 bytes, so a read that came back short with room left in a 4096-byte buffer
 * for another record (<= 12 bytes) ended because the iterator did: EOF, without the extra
 * pread that would return 0.  (A regular file - the fixture trees - ends there too.) */
static int read_procs_hot(tr_cgroup *cg, tr_pidset *set)
{
        int fd = tr_cg_hot_fd(cg, H_PROCS);
        if (fd < 0)
                return fd;
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

int tr_cgroup_members(tr_cgroup *cg, tr_pidset *out, tr_error *err)
{
        tr_pidset_clear(out);
        int v2 = tr_cg_v2_index(cg);
        bool any = false;
        for (int i = 0; i < cg->hs->n; i++) {
                if (cg->dirfd[i] < 0 || (v2 >= 0 && i != v2))
                        continue;
                /* a gone top-level cgroup: cgroup.procs is ENOENT (openat) or ENODEV (read on
                 * the kept fd) there */
                int r = i == v2 ? read_procs_hot(cg, out) : read_procs_at(cg->dirfd[i], out);
                if (tr_cg_is_gone_errno(-r))
                        continue;
                if (r == 0)
                        r = tr_cg_walk_children(cg->dirfd[i], &(tr_cg_walk){ .pre = collect_procs, .ud = out });
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

/* ---- usage ------------------------------------------------------------------------- */

static int sum_oom_v1(int dfd, void *ud)
{
        uint64_t *sum = ud, v;
        char buf[256];
        if (tr_read_file_at(dfd, "memory.oom_control", buf, sizeof buf, NULL) >= 0 &&
            tr_parse_oom_control_v1(buf, &v) == 0)
                *sum += v;
        return 0;
}

static void usage_cpu(tr_cgroup *cg, tr_usage *u, char *buf, size_t size)
{
        /* cpu.stat is core accounting in v2: present in every v2 cgroup without the cpu
         * controller, so on hybrid hosts it comes from the v2 tree too. */
        if (tr_cg_hot_read(cg, H_CPU_STAT, buf, size) >= 0 && tr_parse_cpu_stat(buf, u) == 0 && u->cpu_usec.available)
                return;
        uint64_t v;
        if (tr_cg_hot_u64(cg, H1_CPUACCT_USAGE, &v))
                tr_u64_set(u, &u->cpu_usec, v / 1000u, TR_SRC_CGROUP_V1);
        /* cpuacct.usage_user/_sys (ns, 4.x+) are finer than cpuacct.stat's USER_HZ ticks */
        uint64_t us, sy;
        if (tr_cg_hot_u64(cg, H1_CPUACCT_USER, &us) && tr_cg_hot_u64(cg, H1_CPUACCT_SYS, &sy)) {
                tr_u64_set(u, &u->cpu_user_usec, us / 1000u, TR_SRC_CGROUP_V1);
                tr_u64_set(u, &u->cpu_system_usec, sy / 1000u, TR_SRC_CGROUP_V1);
        } else if (tr_cg_hot_read(cg, H1_CPUACCT_STAT, buf, size) >= 0) {
                (void) tr_parse_cpuacct_stat(buf, sysconf(_SC_CLK_TCK), u);
        }
}

static void usage_memory(tr_cgroup *cg, tr_usage *u, char *buf, size_t size)
{
        uint64_t v;
        if (tr_cg_hot_u64(cg, H_MEM_CURRENT, &v)) {
                tr_u64_set(u, &u->memory_current_bytes, v, TR_SRC_CGROUP_V2);
                if (tr_cg_hot_u64(cg, H_MEM_PEAK, &v)) /* memory.peak: 5.19+ */
                        tr_u64_set(u, &u->memory_peak_bytes, v, TR_SRC_CGROUP_V2);
                if (tr_cg_hot_read(cg, H_MEM_STAT, buf, size) >= 0)
                        (void) tr_parse_memory_stat_v2(buf, u);
                /* memory.events is hierarchical (memory.events.local is not) */
                if (tr_cg_hot_read(cg, H_MEM_EVENTS, buf, size) >= 0)
                        (void) tr_parse_memory_events(buf, u);
                return;
        }
        if (tr_cg_hot_u64(cg, H1_MEM_USAGE, &v))
                tr_u64_set(u, &u->memory_current_bytes, v, TR_SRC_CGROUP_V1);
        if (tr_cg_hot_u64(cg, H1_MEM_MAX, &v))
                tr_u64_set(u, &u->memory_peak_bytes, v, TR_SRC_CGROUP_V1);
        if (tr_cg_hot_read(cg, H1_MEM_STAT, buf, size) >= 0)
                (void) tr_parse_memory_stat_v1(buf, u);
        /* Kernel quirk: v1 memory.oom_control's oom_kill counts only kills in that very
         * cgroup, not its descendants (memcg_memory_event stops at the first level on v1):
         * sum the subtree.  The own file is kept open; descendants are walked only when the
         * directory has subdirectories.  No oom_kill line (kernels before 4.13): unknown. */
        uint64_t sum;
        int i = tr_cg_v1_index(cg, TR_CTRL_MEMORY);
        if (i >= 0 && tr_cg_hot_read(cg, H1_MEM_OOM, buf, size) >= 0 && tr_parse_oom_control_v1(buf, &sum) == 0 &&
            tr_cg_walk_children(cg->dirfd[i], &(tr_cg_walk){ .pre = sum_oom_v1, .ud = &sum }) == 0)
                tr_u64_set(u, &u->oom_kills, sum, TR_SRC_CGROUP_V1);
}

static void usage_pids_io_psi(tr_cgroup *cg, tr_usage *u, char *buf, size_t size)
{
        uint64_t v;
        if (tr_cg_hot_u64(cg, H_PIDS_CURRENT, &v))
                tr_u64_set(u, &u->pids_current, v, TR_SRC_CGROUP_V2);
        else if (tr_cg_hot_u64(cg, H1_PIDS_CURRENT, &v))
                tr_u64_set(u, &u->pids_current, v, TR_SRC_CGROUP_V1);
        if (tr_cg_hot_u64(cg, H_PIDS_PEAK, &v))
                tr_u64_set(u, &u->pids_peak, v, TR_SRC_CGROUP_V2);
        else if (tr_cg_hot_u64(cg, H1_PIDS_PEAK, &v))
                tr_u64_set(u, &u->pids_peak, v, TR_SRC_CGROUP_V1);

        if (tr_cg_hot_read(cg, H_IO_STAT, buf, size) >= 0)
                (void) tr_parse_io_stat(buf, u);
        else if (tr_cg_hot_read(cg, H1_BLKIO, buf, size) >= 0)
                /* Observed on this 6.18 host: blkio.throttle.* count only on devices that
                 * have a throttle rule in the cgroup; otherwise they stay "Total 0". */
                (void) tr_parse_blkio_bytes(buf, u);

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

int tr_cgroup_usage(tr_cgroup *cg, tr_usage *out, tr_error *err)
{
        char buf[16384];
        tr_usage_init(out);
        usage_cpu(cg, out, buf, sizeof buf);
        usage_memory(cg, out, buf, sizeof buf);
        usage_pids_io_psi(cg, out, buf, sizeof buf);
        _cleanup_pidset_ tr_pidset members = TR_PIDSET_INIT;
        int r = tr_cgroup_members(cg, &members, err);
        if (r == 0) {
                int src = tr_cg_v2_index(cg) >= 0 ? TR_SRC_CGROUP_V2 : TR_SRC_CGROUP_V1;
                tr_u64_set(out, &out->num_procs, members.n, (tr_source) src);
        }
        if (out->sources == 0)
                return tr_error_set(err, ENODEV, "cgroup is gone in every hierarchy it had");
        tr_error_clear(err);
        return 0;
}
