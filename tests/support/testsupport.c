#include "testsupport.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trackers/procscan.h"
#include "trackers/util.h"

static tr_hierarchies hs;
static bool hs_ok;
static char base[64];
static bool base_made;
static unsigned skips;

static void vskip(const char *what, const char *fmt, va_list ap)
{
        printf("SKIP %s: ", what);
        vprintf(fmt, ap);
        putchar('\n');
        fflush(stdout);
        skips++;
}

void ts_skip(const char *what, const char *why_fmt, ...)
{
        va_list ap;
        va_start(ap, why_fmt);
        vskip(what, why_fmt, ap);
        va_end(ap);
}

int ts_skip_program(const char *what, const char *why_fmt, ...)
{
        va_list ap;
        va_start(ap, why_fmt);
        vskip(what, why_fmt, ap);
        va_end(ap);
        return TS_SKIP_EXIT;
}

bool ts_root_is_mount_point(void)
{
        FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return true; /* no /proc: nothing to say against it */
        char line[4096];
        bool found = false;
        /* "id parent major:minor root mount-point ...": the fifth field, relative to our root */
        while (!found && fgets(line, sizeof line, f)) {
                char mp[4096];
                if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && strcmp(mp, "/") == 0)
                        found = true;
        }
        fclose(f);
        return found;
}

bool ts_need_private_mounts(const char *what)
{
        if (!ts_need_root(what))
                return false;
        if (ts_root_is_mount_point())
                return true;
        ts_skip(what, "/ is not a mount point here (a chroot?): a private mount namespace cannot change "
                      "its propagation (EINVAL)");
        return false;
}

const tr_hierarchies *ts_hierarchies(void)
{
        if (!hs_ok) {
                tr_error err = { 0 };
                if (tr_hierarchies_discover(&hs, &err) < 0) {
                        fprintf(stderr, "cannot discover cgroup hierarchies: %s\n", err.msg);
                        exit(2);
                }
                hs_ok = true;
        }
        return &hs;
}

bool ts_need_root(const char *what)
{
        if (geteuid() == 0)
                return true;
        ts_skip(what, "needs root (cgroups and other users' processes)");
        return false;
}

static void kill_procs_in(const char *dir)
{
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/cgroup.procs", dir);
        FILE *f = fopen(path, "re");
        if (!f)
                return;
        long pid;
        while (fscanf(f, "%ld", &pid) == 1)
                if (pid > 1 && pid != getpid())
                        kill((pid_t) pid, SIGKILL);
        fclose(f);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) ftw;
        if (flag == FTW_DP) {
                /* thaw first: a frozen cgroup's processes cannot die */
                char f[PATH_MAX];
                snprintf(f, sizeof f, "%s/cgroup.freeze", path);
                if (access(f, F_OK) == 0)
                        tr_write_file_at(AT_FDCWD, f, "0", NULL);
                snprintf(f, sizeof f, "%s/freezer.state", path);
                if (access(f, F_OK) == 0)
                        tr_write_file_at(AT_FDCWD, f, "THAWED", NULL);
                kill_procs_in(path);
        }
        return 0;
}

static int rmdir_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) ftw;
        if (flag == FTW_DP)
                for (int i = 0; i < 50 && rmdir(path) < 0 && errno == EBUSY; i++)
                        usleep(20000);
        return 0;
}

int ts_cleanup_base(void)
{
        if (!base_made)
                return 0;
        int left = 0;
        for (int i = 0; i < hs.n; i++) {
                char dir[PATH_MAX];
                if (tr_hierarchy_fs_path(&hs.h[i], base, dir, sizeof dir, NULL) < 0)
                        continue;
                if (access(dir, F_OK) != 0)
                        continue;
                nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
                nftw(dir, rmdir_one, 16, FTW_DEPTH | FTW_PHYS);
                if (access(dir, F_OK) == 0) {
                        fprintf(stderr, "test cleanup: could not remove %s\n", dir);
                        left++;
                }
        }
        base_made = false;
        return left;
}

static void cleanup_at_exit(void) { ts_cleanup_base(); }

const char *ts_cgroup_base(void)
{
        if (base_made)
                return base;
        if (!ts_need_root("cgroup base"))
                return NULL;
        const tr_hierarchies *h = ts_hierarchies();
        snprintf(base, sizeof base, "/procd-test.%d", (int) getpid());
        for (int i = 0; i < h->n; i++) {
                char dir[PATH_MAX];
                if (tr_hierarchy_fs_path(&h->h[i], base, dir, sizeof dir, NULL) < 0)
                        continue;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                        fprintf(stderr, "cannot create test base %s: %s\n", dir, strerror(errno));
                        continue;
                }
                /* v1 cpuset: a new cgroup has empty cpus/mems; copy the parent's so that
                 * processes can be placed in it. */
                if (!h->h[i].is_v2 && (h->h[i].controllers & (1u << TR_CTRL_CPUSET))) {
                        char val[256];
                        int fd = open(h->h[i].mount_point, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (tr_read_file_at(fd, "cpuset.cpus", val, sizeof val, NULL) >= 0)
                                tr_write_file_at(d, "cpuset.cpus", val, NULL);
                        if (tr_read_file_at(fd, "cpuset.mems", val, sizeof val, NULL) >= 0)
                                tr_write_file_at(d, "cpuset.mems", val, NULL);
                        close(fd);
                        close(d);
                }
        }
        base_made = true;
        atexit(cleanup_at_exit);
        return base;
}

const char *ts_cgroup_path(char *buf, size_t size, const char *name)
{
        const char *b = ts_cgroup_base();
        snprintf(buf, size, "%s/%s", b ? b : "/procd-test.none", name);
        return buf;
}

const char *ts_fixture_path(char *buf, size_t size, const char *rel)
{
        const char *dir = getenv("PROCD_FIXTURES");
        snprintf(buf, size, "%s/%s", dir ? dir : "tests/fixtures", rel);
        return buf;
}

const char *ts_valgrind_suppressions(char *buf, size_t size)
{
        char path[PATH_MAX];
        snprintf(buf, size, "--suppressions=%s", ts_fixture_path(path, sizeof path, "valgrind/procd.supp"));
        return buf;
}

int ts_open_fixture_dir(const char *rel)
{
        char path[4096];
        int fd = open(ts_fixture_path(path, sizeof path, rel), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "missing fixture dir %s (set PROCD_FIXTURES)\n", path);
                exit(2);
        }
        return fd;
}

char *ts_read_fixture(const char *rel)
{
        char path[PATH_MAX];
        char *text = NULL;
        tr_error err = { 0 };
        if (tr_read_file_alloc_at(AT_FDCWD, ts_fixture_path(path, sizeof path, rel), &text, NULL, &err) < 0) {
                fprintf(stderr, "missing fixture: %s (set PROCD_FIXTURES)\n", err.msg);
                exit(2);
        }
        return text;
}

const char *ts_build_dir(void)
{
        const char *d = getenv("PROCD_BUILD_DIR");
        return d ? d : ".";
}

long ts_scale(const char *name, long dflt, long min, long max, long step)
{
        const char *v = getenv(name);
        if (!v || !*v)
                return dflt;
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno || *end || n < min || n > max || n % step) {
                printf("%s=%s ignored (a multiple of %ld in %ld..%ld): %ld\n", name, v, step, min, max, dflt);
                return dflt;
        }
        printf("%s=%ld (default %ld)\n", name, n, dflt);
        return n;
}

void ts_reap_orphans(int wait_ms)
{
        /* By pid, never waitpid(-1): a test may still wait for a child of its own.  Orphans
         * never told us their pid, so a /proc scan finds this program's children. */
        tr_scan s = { 0 };
        for (int waited = 0;; waited += 10) {
                if (tr_scan_take(&s, NULL, NULL) < 0)
                        break;
                int live_kids = 0;
                for (size_t i = 0; i < s.n; i++) {
                        const tr_proc *p = &s.procs[i];
                        if (p->ppid != getpid() || p->pid <= 1)
                                continue;
                        if (p->state == 'Z')
                                waitpid(p->pid, NULL, WNOHANG);
                        else
                                live_kids++;
                }
                if (live_kids == 0 || waited >= wait_ms)
                        break;
                usleep(10000); /* killed ones still dying */
        }
        tr_scan_free(&s);
}

int ts_run(CU_SuiteInfo *suites)
{
        /* PID 1 on some hosts (this one included) never reaps orphans: become the
         * subreaper of everything the tests start, and reap it, so killed double-forked
         * escapers do not stay zombies for ever. */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        if (CU_initialize_registry() != CUE_SUCCESS)
                return 2;
        if (CU_register_suites(suites) != CUE_SUCCESS) {
                fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
                CU_cleanup_registry();
                return 2;
        }
        CU_basic_set_mode(CU_BRM_VERBOSE);
        CU_basic_run_tests();
        /* read failures before cleanup: CU_cleanup_registry resets them (FACTS) */
        unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
        unsigned asserts = CU_get_number_of_asserts();
        CU_cleanup_registry();
        int left = ts_cleanup_base();
        ts_reap_orphans(0);
        if (left)
                fprintf(stderr, "FAIL: %d test cgroup(s) left behind\n", left);
        if (fails || left)
                return 1;
        if (skips && !asserts) {
                printf("every case skipped (%u skip(s), no assertion ran): exit %d\n", skips, TS_SKIP_EXIT);
                return TS_SKIP_EXIT;
        }
        return 0;
}

int ts_run_suite(const char *name, CU_InitializeFunc init, CU_CleanupFunc clean, CU_TestInfo *tests)
{
        CU_SuiteInfo suites[] = {
                { name, init, clean, NULL, NULL, tests },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}

int ts_pipes(int a[2], int b[2])
{
        if (pipe2(a, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(b, O_CLOEXEC) < 0) {
                int r = -errno;
                close(a[0]);
                close(a[1]);
                return r;
        }
        return 0;
}

pid_t ts_fork(int (*fn)(void *arg), void *arg)
{
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                _exit(fn(arg));
        return pid;
}

int ts_wait(pid_t pid, int timeout_ms)
{
        if (pid <= 1)
                return -EINVAL;
        for (int waited = 0;; waited += 5) {
                int st;
                pid_t r = waitpid(pid, &st, WNOHANG);
                if (r == pid)
                        return st;
                if (r < 0)
                        return -errno;
                if (waited >= timeout_ms)
                        return -ETIMEDOUT;
                usleep(5000);
        }
}

pid_t ts_spawn_in(struct tr_cgroup *cg, int (*fn)(void *), void *arg)
{
        int go[2];
        if (pipe2(go, O_CLOEXEC) < 0)
                return -errno;
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
                int r = -errno;
                close(go[0]);
                close(go[1]);
                return r;
        }
        if (pid == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) != 1)
                        _exit(99);
                _exit(fn(arg));
        }
        close(go[0]);
        tr_error err = { 0 };
        int r = tr_cgroup_attach(cg, pid, &err);
        if (r < 0)
                fprintf(stderr, "attach %d: %s\n", (int) pid, err.msg);
        if (write(go[1], "g", 1) != 1)
                r = -EIO;
        close(go[1]);
        if (r < 0) {
                ts_kill_reap(pid);
                return r;
        }
        return pid;
}

int ts_sleep_forever(void *arg)
{
        (void) arg;
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
                pause();
        return 0;
}

pid_t ts_sleeper(void) { return ts_fork(ts_sleep_forever, NULL); }

int ts_exec_sleep_at_gate(void *arg)
{
        const int *gate = arg;
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(gate[1]);
        char c;
        if (read(gate[0], &c, 1) != 1)
                return 99;
        execl("/bin/sleep", "sleep", "1000000", (char *) NULL);
        return 98;
}

void ts_msleep(unsigned ms)
{
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

void ts_kill_reap(pid_t pid)
{
        if (pid <= 1)
                return;
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

bool ts_alive(pid_t pid) { return tr_pid_alive(pid); }

char ts_proc_state(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        if (tr_read_file_at(AT_FDCWD, path, buf, sizeof buf, NULL) < 0)
                return '?';
        const char *p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : '?';
}
