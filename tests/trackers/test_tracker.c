/* test_tracker.c - tr_family: the cgroup tracker and the /proc tracker side by side, and the
 * fallback rule, with real processes in real cgroups under the run's base. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/tracker.h"
#include "trackers/pidref.h"
#include "trackers/util.h"

#define SEC 1000000ull

/* Burn `usec` of this process's own CPU time. */
static void burn_cpu(uint64_t usec)
{
        struct timespec t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        uint64_t start = (uint64_t) t.tv_sec * SEC + (uint64_t) t.tv_nsec / 1000;
        volatile uint64_t x = 0;
        for (;;) {
                for (int i = 0; i < 10000; i++)
                        x += (uint64_t) i;
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
                if ((uint64_t) t.tv_sec * SEC + (uint64_t) t.tv_nsec / 1000 - start >= usec)
                        break;
        }
}

/* Wait (up to 2 s) until fam has n members, listed in m; asserts it has. */
static void wait_members(tr_family *fam, tr_pidset *m, size_t n)
{
        for (int i = 0; i < 200; i++) {
                tr_pidset_clear(m);
                if (tr_family_members(fam, m, NULL) >= 0 && m->n == n)
                        break;
                usleep(10000);
        }
        CU_ASSERT_EQUAL(m->n, n);
}

/* --- CPU accuracy: 20 short-lived double-forked children, 100 ms of CPU each ---
 * The truth is the kernel's own per-process account of every process of the job: the
 * root's rusage at reap (it includes the middles it reaped) plus each burner's (burners are
 * reparented to this test, the subreaper, which reaps them by the pid they sent).  The job's
 * fork and exit work counts too, so the truth exceeds 20 x 100 ms, much more so under
 * emulation: a fixed bound around 2 s was wrong, the comparison is with the truth. */

typedef struct burner_pipes {
        int done_fd; /* inherited by every burner: EOF once the last one exited */
        int pid_fd;  /* each burner writes its pid here (to the test) */
} burner_pipes;

static int double_fork_burner(const burner_pipes *bp)
{
        pid_t mid = fork();
        if (mid < 0)
                return -1;
        if (mid == 0) {
                if (fork() == 0) { /* grandchild: detached from the tree, burns, exits */
                        setsid();
                        pid_t self = getpid();
                        if (write(bp->pid_fd, &self, sizeof self) != (ssize_t) sizeof self)
                                _exit(1);
                        burn_cpu(100000);
                        _exit(0);
                }
                _exit(0); /* the middle exits at once: the burner is reparented */
        }
        waitpid(mid, NULL, 0);
        return 0;
}

static int job_twenty_burners(void *arg)
{
        const int *pid_fd = arg;
        int done[2];
        if (pipe(done) < 0)
                return 1;
        burner_pipes bp = { done[1], *pid_fd };
        for (int i = 0; i < 20; i++) {
                double_fork_burner(&bp);
                usleep(60000); /* short-lived and staggered: at most ~2 burn at once */
        }
        close(done[1]);
        char c;
        while (read(done[0], &c, 1) > 0) /* returns 0 once the last burner has exited */
                ;
        return 0;
}

static uint64_t rusage_usec(const struct rusage *ru)
{
        return (uint64_t) (ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * SEC +
               (uint64_t) (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec);
}

/* Reaps the burners whose pids came through fd (reparented to us): their CPU, usec. */
static uint64_t reap_burners(int fd, int *n)
{
        uint64_t usec = 0;
        pid_t pid;
        *n = 0;
        while (read(fd, &pid, sizeof pid) == (ssize_t) sizeof pid) {
                struct rusage ru;
                if (pid > 1 && wait4(pid, NULL, 0, &ru) == pid) {
                        usec += rusage_usec(&ru);
                        (*n)++;
                }
        }
        return usec;
}

static void test_cpu_accuracy(void)
{
        if (!ts_cgroup_base())
                return;
        char path[256];
        tr_error err = { 0 };
        tr_cgroup *cg = NULL;
        CU_ASSERT_FATAL(tr_cgroup_create(ts_hierarchies(), ts_cgroup_path(path, sizeof path, "cpu"), &cg, &err) == 0);

        int pids[2];
        CU_ASSERT_FATAL(pipe2(pids, O_CLOEXEC) == 0);
        pid_t root = ts_spawn_in(cg, job_twenty_burners, &pids[1]);
        close(pids[1]);
        CU_ASSERT_FATAL(root > 1);

        tr_procfam_spec spec = { .root_pid = root };
        tr_family *cgfam = NULL, *procfam = NULL;
        CU_ASSERT_FATAL(tr_family_new(&spec, cg, &cgfam, &err) == 0);
        CU_ASSERT_FATAL(tr_family_new(&spec, NULL, &procfam, &err) == 0); /* scans on every call */

        /* the /proc tracker only knows what its scans saw: poll it as a classic procd would */
        tr_usage pu, cu;
        struct rusage root_ru;
        pid_t w;
        while ((w = wait4(root, NULL, WNOHANG, &root_ru)) == 0) {
                tr_family_usage(procfam, &pu, NULL);
                usleep(50000);
        }
        CU_ASSERT_FATAL(w == root);
        int n_burners;
        uint64_t truth_usec = rusage_usec(&root_ru) + reap_burners(pids[0], &n_burners);
        close(pids[0]);
        CU_ASSERT_EQUAL(n_burners, 20);
        tr_family_usage(procfam, &pu, NULL);
        CU_ASSERT_FATAL(tr_family_usage(cgfam, &cu, &err) == 0);
        CU_ASSERT(cu.cpu_usec.available);
        CU_ASSERT(cu.cpu_usec.source & (TR_SRC_CGROUP_V2 | TR_SRC_CGROUP_V1));
        double cg_sec = (double) cu.cpu_usec.value / 1e6, truth_sec = (double) truth_usec / 1e6;
        double proc_sec = pu.cpu_usec.available ? (double) pu.cpu_usec.value / 1e6 : -1;
        printf("\n    CPU of 20 x 100 ms double-forked burners: cgroup %.3f s, /proc tracker %.3f s, "
               "truth %.3f s (the kernel's per-process rusage; /proc misses exited and escaped CPU)\n",
               cg_sec, proc_sec, truth_sec);
        CU_ASSERT(truth_sec >= 2.0);
        /* the same scheduler clock on both sides; only the root's few instructions before it
         * entered the cgroup are outside it, and rusage rounds each process down to 1 us.
         * Above: a process's exit path runs on after it signalled its parent (exit_notify,
         * then the last schedule-out in do_task_dead): the cgroup is charged for it, the
         * reaper's rusage never sees it.  Allow 100 us of that per process (41 here: the root,
         * 20 burners and their 20 forking parents), which under emulation added 3 ms (the
         * hybrid guest lane: cgroup 2.262 s, truth 2.259 s); another process's burner (100 ms)
         * counted by mistake is still far above it. */
        double exit_slack_sec = 0.001 + 41 * 0.0001;
        CU_ASSERT(cg_sec >= truth_sec * 0.99 - 0.01 && cg_sec <= truth_sec + exit_slack_sec);

        tr_kill_result kr = { 0 };
        tr_family_kill(cgfam, 5 * SEC, &kr, NULL);
        tr_kill_result_free(&kr);
        CU_ASSERT(tr_cgroup_destroy(tr_family_cgroup(cgfam), 5 * SEC, &err) == 0);
        tr_family_free(cgfam);
        tr_family_free(procfam);
}

/* --- Fallback: the family's cgroup disappears under it --- */

__attribute__((noreturn)) static int job_sleepers(void *arg)
{
        int n = *(int *) arg;
        for (int i = 0; i < n; i++)
                if (fork() == 0) {
                        for (;;)
                                pause();
                }
        for (;;)
                pause();
}

struct log_count {
        int lines;
        char last[300];
};

static void count_log(void *userdata, const char *message)
{
        struct log_count *lc = userdata;
        lc->lines++;
        snprintf(lc->last, sizeof lc->last, "%s", message);
}

/* Move every process of cgroup `from` (each hierarchy) to `to`, then rmdir `from`. */
static int move_and_remove(const tr_hierarchies *hs, const char *from, const char *to)
{
        for (int i = 0; i < hs->n; i++) {
                char src[PATH_MAX], dst[PATH_MAX], procs[PATH_MAX + 32], into[PATH_MAX + 32];
                if (tr_hierarchy_fs_path(&hs->h[i], from, src, sizeof src, NULL) < 0 ||
                    tr_hierarchy_fs_path(&hs->h[i], to, dst, sizeof dst, NULL) < 0)
                        continue;
                if (access(src, F_OK) != 0)
                        continue;
                if (mkdir(dst, 0755) < 0 && errno != EEXIST)
                        return -errno;
                snprintf(procs, sizeof procs, "%s/cgroup.procs", src);
                snprintf(into, sizeof into, "%s/cgroup.procs", dst);
                if (!hs->h[i].is_v2 && (hs->h[i].controllers & (1u << TR_CTRL_CPUSET))) {
                        char v[256], f[PATH_MAX + 32];
                        snprintf(f, sizeof f, "%s/cpuset.cpus", src);
                        if (tr_read_file_at(AT_FDCWD, f, v, sizeof v, NULL) >= 0) {
                                snprintf(f, sizeof f, "%s/cpuset.cpus", dst);
                                tr_write_file_at(AT_FDCWD, f, v, NULL);
                        }
                        snprintf(f, sizeof f, "%s/cpuset.mems", src);
                        if (tr_read_file_at(AT_FDCWD, f, v, sizeof v, NULL) >= 0) {
                                snprintf(f, sizeof f, "%s/cpuset.mems", dst);
                                tr_write_file_at(AT_FDCWD, f, v, NULL);
                        }
                }
                FILE *fp = fopen(procs, "re");
                long pid;
                while (fp && fscanf(fp, "%ld", &pid) == 1) {
                        char num[32];
                        snprintf(num, sizeof num, "%ld", pid);
                        tr_write_file_at(AT_FDCWD, into, num, NULL);
                }
                if (fp)
                        fclose(fp);
                if (rmdir(src) < 0)
                        return -errno;
        }
        return 0;
}

static void test_fallback_when_cgroup_removed(void)
{
        if (!ts_cgroup_base())
                return;
        const tr_hierarchies *hs = ts_hierarchies();
        char path[256], moved[256];
        ts_cgroup_path(path, sizeof path, "fb");
        ts_cgroup_path(moved, sizeof moved, "fb-moved");
        tr_error err = { 0 };
        tr_cgroup *cg = NULL;
        CU_ASSERT_FATAL(tr_cgroup_create(hs, path, &cg, &err) == 0);
        int kids = 5;
        pid_t root = ts_spawn_in(cg, job_sleepers, &kids);
        CU_ASSERT_FATAL(root > 1);

        tr_procfam_spec spec = { .root_pid = root };
        tr_family *fam = NULL;
        struct log_count lc = { 0 };
        CU_ASSERT_FATAL(tr_family_new(&spec, cg, &fam, &err) == 0);
        tr_family_set_log(fam, count_log, &lc);

        /* wait for the tree to be complete, through the cgroup */
        tr_pidset m = TR_PIDSET_INIT;
        wait_members(fam, &m, (size_t) kids + 1);
        tr_usage u;
        CU_ASSERT(tr_family_usage(fam, &u, &err) == 0);
        CU_ASSERT(u.sources & (TR_SRC_CGROUP_V2 | TR_SRC_CGROUP_V1));

        /* take the cgroup away under the family */
        CU_ASSERT_FATAL(move_and_remove(hs, path, moved) == 0);

        CU_ASSERT(tr_family_usage(fam, &u, &err) == 0);
        CU_ASSERT(u.fallback);
        CU_ASSERT(u.sources == TR_SRC_PROC);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == (uint64_t) kids + 1);
        printf("\n    after removal: usage source=proc, fallback reason: %s\n", u.fallback_reason);

        tr_pidset_clear(&m);
        CU_ASSERT(tr_family_members(fam, &m, &err) >= 0);
        CU_ASSERT_EQUAL(m.n, (size_t) kids + 1);

        tr_kill_result kr = { 0 };
        CU_ASSERT(tr_family_kill(fam, 5 * SEC, &kr, &err) >= 0);
        CU_ASSERT(kr.empty);
        CU_ASSERT(kr.method && strcmp(kr.method, "proc spree") == 0);
        if (ts_wait(root, 5000) < 0) {
                CU_FAIL("the root survived the /proc kill");
                printf("    kill said: method %s, empty %d, error %s\n", kr.method ? kr.method : "?", kr.empty, err.msg);
                ts_kill_reap(root);
        }
        for (size_t i = 0; i < m.n; i++)
                CU_ASSERT(!ts_alive(m.pids[i]));

        tr_kill_result_free(&kr);
        /* the reason was logged once per operation, not per call */
        CU_ASSERT(lc.lines >= 1 && lc.lines <= 3);
        printf("    logged %d line(s), last: %s\n", lc.lines, lc.last);
        tr_family_usage(fam, &u, NULL);
        tr_family_usage(fam, &u, NULL);
        CU_ASSERT(lc.lines <= 3);

        tr_pidset_free(&m);
        tr_family_free(fam);
}

/* --- A /proc family alone: the classic way --- */

static void test_proc_family_kill(void)
{
        if (!ts_need_root("proc family kill"))
                return;
        int kids = 4;
        pid_t root = ts_fork(job_sleepers, &kids);
        CU_ASSERT_FATAL(root > 1);
        tr_procfam_spec spec = { .root_pid = root };
        tr_family *fam = NULL;
        tr_error err = { 0 };
        CU_ASSERT_FATAL(tr_family_new(&spec, NULL, &fam, &err) == 0);
        CU_ASSERT_STRING_EQUAL(tr_family_primary_name(fam), "proc");
        tr_pidset m = TR_PIDSET_INIT;
        wait_members(fam, &m, (size_t) kids + 1);
        tr_usage u;
        CU_ASSERT(tr_family_usage(fam, &u, &err) == 0);
        CU_ASSERT(!u.fallback && u.sources == TR_SRC_PROC);
        tr_kill_result kr = { 0 };
        CU_ASSERT(tr_family_kill(fam, 5 * SEC, &kr, &err) >= 0);
        CU_ASSERT(kr.empty);
        tr_kill_result_free(&kr);
        if (ts_wait(root, 5000) < 0) {
                CU_FAIL("the root survived the /proc kill");
                ts_kill_reap(root);
        }
        for (size_t i = 0; i < m.n; i++)
                CU_ASSERT(!ts_alive(m.pids[i]));
        tr_pidset_free(&m);
        tr_family_free(fam);
}

/* ---- tr_safe_kill: a thread id is not a process ------------------------------------ */

static void *thread_park(void *arg)
{
        int fd = *(int *) arg;
        pid_t tid = (pid_t) syscall(SYS_gettid);
        if (write(fd, &tid, sizeof tid) != (ssize_t) sizeof tid)
                return NULL;
        for (;;)
                pause();
        return NULL;
}

/* A process with a second thread; the thread writes its tid to the pipe. */
static int run_threaded(void *arg)
{
        pthread_t t;
        if (pthread_create(&t, NULL, thread_park, arg) != 0)
                return 3;
        for (;;)
                pause();
        return 0;
}

/* pidfd_open refuses a thread id that is not a thread-group leader (EINVAL); tr_safe_kill
 * must refuse too, not fall back to kill(tid), which signals the whole process. */
static void test_safe_kill_thread_id(void)
{
        int p[2];
        CU_ASSERT_FATAL(pipe2(p, O_CLOEXEC) == 0);
        pid_t child = ts_fork(run_threaded, &p[1]);
        CU_ASSERT_FATAL(child > 1);
        close(p[1]);
        pid_t tid = 0;
        ssize_t n = read(p[0], &tid, sizeof tid);
        close(p[0]);
        CU_ASSERT_EQUAL(n, (ssize_t) sizeof tid);
        CU_ASSERT(tid > 1 && tid != child);
        if (n == (ssize_t) sizeof tid && tid > 1 && tid != child) {
                uint64_t ticks = 0, tticks = 0;
                CU_ASSERT_EQUAL(tr_pid_start_ticks(child, &ticks), 0);
                CU_ASSERT_EQUAL(tr_pid_start_ticks(tid, &tticks), 0);
                CU_ASSERT_EQUAL(tr_safe_kill(tid, 0, SIGTERM), -EINVAL);
                CU_ASSERT_EQUAL(tr_safe_kill(tid, tticks, SIGTERM), -EINVAL);
                usleep(100000);
                CU_ASSERT_TRUE(ts_alive(child)); /* the process was not signalled */
                CU_ASSERT_EQUAL(ts_wait(child, 0), -ETIMEDOUT);
                /* wrong start time: refused, not signalled */
                CU_ASSERT_EQUAL(tr_safe_kill(child, ticks + 1, SIGTERM), -ESRCH);
                usleep(50000);
                CU_ASSERT_TRUE(ts_alive(child));
                CU_ASSERT_EQUAL(tr_safe_kill(child, ticks, 0), 0);
                CU_ASSERT_EQUAL(tr_safe_kill(child, ticks, SIGTERM), 0);
                int st = ts_wait(child, 5000);
                CU_ASSERT(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
                if (st < 0)
                        ts_kill_reap(child);
                CU_ASSERT_EQUAL(tr_safe_kill(child, ticks, SIGTERM), -ESRCH); /* reaped */
        } else {
                ts_kill_reap(child);
        }
        CU_ASSERT_EQUAL(tr_safe_kill(1, 0, 0), -EPERM);
        CU_ASSERT_EQUAL(tr_safe_kill(0, 0, SIGTERM), -EPERM);
        CU_ASSERT_EQUAL(tr_safe_kill(-1, 0, SIGTERM), -EPERM);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "cpu accuracy: cgroup vs /proc", test_cpu_accuracy },
                { "fallback when the cgroup is removed", test_fallback_when_cgroup_removed },
                { "a /proc family kills its tree", test_proc_family_kill },
                { "tr_safe_kill refuses a thread id", test_safe_kill_thread_id },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("tracker", NULL, NULL, tests);
}
