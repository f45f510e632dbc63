/* bench-usage-files.c - what each kernel file a usage query may read costs on this host
 * (run by hand as root; not a test).
 *
 *   bench-usage-files [--reads N] [--procs N]
 *
 * Makes <base>/fam/self in every hierarchy (as procd makes a family cgroup) under
 * /procd-bench-usage-files.<pid>, puts N sleepers (default 1) in self, and for every counter
 * file present there reports the CPU time (user + kernel, this process's clock) of one read:
 * pread on an fd kept open, and openat + read + close.  Then the whole usage record
 * (tr_cgroup_usage) and the member listing, and the /proc files a /proc tracker or PSS
 * would read per member.  Everything it made is removed and every sleeper killed by pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "trackers/cgroup.h"
#include "trackers/pidset.h"
#include "trackers/util.h"

static uint64_t cpu_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static char buf[65536];

/* CPU ns per read of `name` under dirfd dfd: kept fd (pread at 0) and open/read/close. */
static void one_file(const char *where, int dfd, const char *name, int reads)
{
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        ssize_t len = pread(fd, buf, sizeof buf, 0);
        if (len < 0) {
                printf("  %-10s %-44s read fails: %s\n", where, name, strerror(errno));
                close(fd);
                return;
        }
        uint64_t t0 = cpu_ns();
        for (int i = 0; i < reads; i++)
                if (pread(fd, buf, sizeof buf, 0) < 0)
                        break;
        uint64_t t1 = cpu_ns();
        close(fd);
        for (int i = 0; i < reads; i++) {
                int f = openat(dfd, name, O_RDONLY | O_CLOEXEC);
                if (f < 0)
                        break;
                if (read(f, buf, sizeof buf) < 0) {
                        close(f);
                        break;
                }
                close(f);
        }
        uint64_t t2 = cpu_ns();
        printf("  %-10s %-44s %6zd bytes  kept fd %6.2f us  open+read+close %6.2f us\n", where, name, len,
               (double) (t1 - t0) / 1e3 / reads, (double) (t2 - t1) / 1e3 / reads);
}

static const char *const files[] = {
        "cgroup.procs", "cgroup.threads", "cgroup.stat", "cgroup.events", "tasks",
        "cpu.stat", "cpu.stat.local", "cpuacct.usage", "cpuacct.usage_user", "cpuacct.usage_sys", "cpuacct.stat",
        "memory.current", "memory.peak", "memory.stat", "memory.numa_stat", "memory.events", "memory.usage_in_bytes",
        "memory.max_usage_in_bytes", "memory.oom_control", "pids.current", "pids.peak", "io.stat",
        "blkio.throttle.io_service_bytes_recursive", "blkio.throttle.io_serviced_recursive",
        "cpu.pressure", "memory.pressure", "io.pressure", "freezer.state",
};

int main(int argc, char **argv)
{
        int reads = 2000, nprocs = 1;
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--reads") && i + 1 < argc)
                        reads = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--procs") && i + 1 < argc)
                        nprocs = atoi(argv[++i]);
                else {
                        fprintf(stderr, "usage: bench-usage-files [--reads N] [--procs N]\n");
                        return 2;
                }
        }
        if (geteuid() != 0) {
                fprintf(stderr, "bench-usage-files: needs root\n");
                return 2;
        }
        if (reads < 1)
                reads = 1;
        if (nprocs < 1)
                nprocs = 1;
        tr_hierarchies hs;
        tr_error err = { 0 };
        if (tr_hierarchies_discover(&hs, &err) < 0) {
                fprintf(stderr, "bench-usage-files: %s\n", err.msg);
                return 1;
        }
        char base[64], fam[96], self[128];
        snprintf(base, sizeof base, "/procd-bench-usage-files.%d", (int) getpid());
        snprintf(fam, sizeof fam, "%s/fam", base);
        snprintf(self, sizeof self, "%s/self", fam);
        tr_cgroup *self_cg = NULL, *fam_cg = NULL;
        if (tr_cgroup_create(&hs, self, &self_cg, &err) < 0 ||
            tr_cgroup_open(&hs, fam, 0, &fam_cg, &err) < 0) {
                fprintf(stderr, "bench-usage-files: cgroup %s: %s\n", self, err.msg);
                tr_cgroup_free(self_cg);
                return 1;
        }
        pid_t *pids = calloc((size_t) nprocs, sizeof *pids);
        int rc = 1;
        for (int i = 0; i < nprocs; i++) {
                pids[i] = ts_sleeper();
                if (pids[i] < 0 || tr_cgroup_attach(self_cg, pids[i], &err) < 0) {
                        fprintf(stderr, "bench-usage-files: sleeper: %s\n", err.msg);
                        goto out;
                }
        }
        printf("bench-usage-files: %s mode, %d hierarchies, %d process(es) in %s, %d reads each; CPU time per read\n",
               tr_cgroup_mode_name(hs.mode), hs.n, nprocs, self, reads);
        printf("the family directory (%s; a child 'self' holds the processes):\n", fam);
        for (int i = 0; i < hs.n; i++) {
                int dfd = tr_cgroup_dirfd(fam_cg, i);
                if (dfd < 0)
                        continue;
                for (size_t k = 0; k < sizeof files / sizeof files[0]; k++)
                        one_file(hs.h[i].is_v2 ? "v2" : hs.h[i].key, dfd, files[k], reads);
        }

        tr_usage u;
        tr_pidset members = TR_PIDSET_INIT;
        uint64_t t0 = cpu_ns();
        for (int i = 0; i < reads; i++)
                tr_cgroup_usage(fam_cg, &u, NULL);
        uint64_t t1 = cpu_ns();
        for (int i = 0; i < reads; i++)
                tr_cgroup_members(fam_cg, &members, NULL);
        uint64_t t2 = cpu_ns();
        /* what the classic GET_USAGE record needs (procd/classic/classic-server.c) */
        unsigned classic = TR_WANT_CPU_SPLIT | TR_WANT_MEMORY | TR_WANT_RSS | TR_WANT_PROCS | TR_WANT_IO;
        for (int i = 0; i < reads; i++)
                tr_cgroup_usage_want(fam_cg, classic, &u, NULL);
        uint64_t t3 = cpu_ns();
        printf("the handle: tr_cgroup_usage %.2f us (every field), the classic record's fields %.2f us, "
               "tr_cgroup_members %.2f us (%zu pids)\n",
               (double) (t1 - t0) / 1e3 / reads, (double) (t3 - t2) / 1e3 / reads, (double) (t2 - t1) / 1e3 / reads,
               members.n);
        tr_pidset_free(&members);

        printf("/proc files of one member (pid %d):\n", (int) pids[0]);
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d", (int) pids[0]);
        int pfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        static const char *const proc_files[] = { "stat", "statm", "status", "io", "smaps_rollup", "cgroup" };
        for (size_t k = 0; pfd >= 0 && k < sizeof proc_files / sizeof proc_files[0]; k++)
                one_file("proc", pfd, proc_files[k], reads);
        if (pfd >= 0)
                close(pfd);
        rc = 0;
out:
        for (int i = 0; i < nprocs; i++)
                ts_kill_reap(pids[i]);
        free(pids);
        tr_cgroup_free(self_cg);
        tr_cgroup_free(fam_cg);
        tr_cgroup *bcg = NULL;
        if (tr_cgroup_open(&hs, base, TR_CG_MAY_ACT | TR_CG_OWNED, &bcg, NULL) >= 0) {
                tr_cgroup_destroy(bcg, 5000000, NULL);
                tr_cgroup_free(bcg);
        }
        return rc;
}
