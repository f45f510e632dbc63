/* test_starter_early_kill.c - no window where a job runs unsupervised: procd-starter is
 * SIGKILLed 0..200 ms after it was started, in 10 ms steps, with procd (a daemon this test
 * starts) and without (--no-procd), its job a shell that double-forks a setsid escaper at
 * once, with --private-tmp=DIR.  After each kill, before any other starter runs, nothing of
 * that job may remain once a bounded wait is over (a bound on waiting, not a claim on
 * speed): no process whose environment or command line holds the round's marker (the job's
 * processes, the starter's child before its exec, the guard), no member of its job cgroup,
 * and - unless the kill came before the starter's guard existed (guard.h) - no cgroup of it
 * and no DIR/procd-tmp.* directory (counted).  Then a starter on the same base sweeps: after
 * it nothing of the round may be left at all.  The test kills any marked process by pid and
 * removes DIR before the next round.
 *
 * Each case prints its counts beside /proc/loadavg.  PROCD_EARLY_KILL_LOAD=N runs N busy
 * loops meanwhile (default 0: the machine's own load); PROCD_TEST_STARTER_BIN runs another
 * build of procd-starter (how the figures before the gate and the guard were measured). */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "starter-run.h"
#include "testsupport.h"
#include "trackers/util.h"

#define ROUNDS 21       /* 0, 10, ..., 200 ms */
#define STEP_MS 10
#define GONE_WAIT_MS 3000
#define MAX_PIDS 64

#define ESCAPER_JOB "/bin/sh", "-c", "(setsid sleep 60 &) ; sleep 60"

/* Whether /proc/<pid>/<file> holds mark (its NUL-separated text searched whole). */
static bool proc_file_has(pid_t pid, const char *file, const char *mark)
{
        char path[64], buf[65536];
        snprintf(path, sizeof path, "/proc/%d/%s", (int) pid, file);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, sizeof buf);
        close(fd);
        return n > 0 && memmem(buf, (size_t) n, mark, strlen(mark)) != NULL;
}

static void add_pid(pid_t *pids, int *n, pid_t p)
{
        if (p <= 1 || p == getpid() || !ts_alive(p))
                return;
        for (int i = 0; i < *n; i++)
                if (pids[i] == p)
                        return;
        if (*n < MAX_PIDS)
                pids[(*n)++] = p;
}

/* The live processes of the round: marked ones, and the members of <base>/<tag>/job in any
 * hierarchy.  Their number; pids filled. */
static int round_procs(const char *mark, const char *tag, pid_t *pids)
{
        int n = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
                pid_t p = (pid_t) atoi(e->d_name);
                if (p > 1 && (proc_file_has(p, "environ", mark) || proc_file_has(p, "cmdline", mark)))
                        add_pid(pids, &n, p);
        }
        if (d)
                closedir(d);
        const tr_hierarchies *hs = ts_hierarchies();
        char cg[PATH_MAX], job[PATH_MAX + 8], dir[PATH_MAX], f[PATH_MAX + 16], procs[4096];
        snprintf(job, sizeof job, "%s/job", ts_cgroup_path(cg, sizeof cg, tag));
        for (int i = 0; i < hs->n; i++) {
                if (tr_hierarchy_fs_path(&hs->h[i], job, dir, sizeof dir, NULL) < 0)
                        continue;
                snprintf(f, sizeof f, "%s/cgroup.procs", dir);
                procs[0] = '\0';
                if (tr_read_file_at(AT_FDCWD, f, procs, sizeof procs, NULL) <= 0)
                        continue;
                for (char *save = NULL, *t = strtok_r(procs, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
                        add_pid(pids, &n, (pid_t) atoi(t));
        }
        return n;
}

typedef struct tally {
        int kills;
        int procs_left;   /* rounds that left a process of the job alive */
        int cgroups_left; /* rounds that left a cgroup of the job for the next starter */
        int tmp_left;     /* rounds that left DIR/procd-tmp.* for the next starter */
        int swept_left;   /* rounds where something was left even after the sweep */
} tally;

/* After the checks: a new starter on the base sweeps what is left, which must be all of it;
 * then the test cleans up after a failure, for the next round. */
static void clean_round(const char *mark, const char *tag, const char *tmpdir, tally *t)
{
        const char *sweep[] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "ek-sweep",
                                "--", "/bin/true", NULL };
        CU_ASSERT_EQUAL(sr_wait_code(sr_spawn("ek-sweep", sweep), 30000), 0);
        bool cg = sr_cgroup_exists(tag, NULL, true);
        int tmp = sr_count_entries(tmpdir, "procd-tmp.");
        if (cg || tmp)
                printf("%s: left after the sweep:%s%s\n", tag, cg ? " cgroup" : "", tmp ? " private tmp dir" : "");
        t->swept_left += cg || tmp > 0;
        pid_t pids[MAX_PIDS];
        int n = round_procs(mark, tag, pids);
        for (int i = 0; i < n; i++)
                if (pids[i] > 1)
                        kill(pids[i], SIGKILL); /* marked with this run's unique marker: ours */
        ts_reap_orphans(n ? 2000 : 0);
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        CU_ASSERT_EQUAL(system(cmd), 0);
}

static void early_kill_round(const char *mode, const char *const *mode_args, int round, tally *t)
{
        char tag[64], mark[96], tmpdir[PATH_MAX], tmpopt[PATH_MAX + 16];
        snprintf(tag, sizeof tag, "ek-%s-%d", mode, round);
        snprintf(mark, sizeof mark, "PROCD_EARLY_KILL=%d-%s-%d", (int) getpid(), mode, round);
        sr_path(tmpdir, sizeof tmpdir, tag, ".tmp");
        CU_ASSERT_EQUAL_FATAL(mkdir(tmpdir, 0755), 0);
        snprintf(tmpopt, sizeof tmpopt, "--private-tmp=%s", tmpdir);
        const char *args[32];
        int n = 0;
        for (int i = 0; mode_args[i]; i++)
                args[n++] = mode_args[i];
        const char *rest[] = { "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", tag, "--env", mark, tmpopt,
                               "--", ESCAPER_JOB, NULL };
        for (int i = 0; rest[i]; i++)
                args[n++] = rest[i];
        args[n] = NULL;
        int delay_ms = round * STEP_MS;
        pid_t s = sr_spawn(tag, args);
        CU_ASSERT_FATAL(s > 1);
        usleep((useconds_t) delay_ms * 1000);
        ts_kill_reap(s);
        t->kills++;
        pid_t pids[MAX_PIDS];
        int left = 0;
        bool cg = true;
        int tmp = 0;
        for (int waited = 0; waited <= GONE_WAIT_MS; waited += 20) {
                left = round_procs(mark, tag, pids);
                cg = sr_cgroup_exists(tag, NULL, false);
                tmp = sr_count_entries(tmpdir, "procd-tmp.");
                if (!left && !cg && !tmp)
                        break;
                usleep(20000);
        }
        if (left || cg || tmp) {
                printf("\n%s: killed at %d ms, after %d ms more:", tag, delay_ms, GONE_WAIT_MS);
                for (int i = 0; i < left; i++) {
                        char comm[64] = "";
                        char f[64];
                        snprintf(f, sizeof f, "/proc/%d/comm", (int) pids[i]);
                        tr_read_file_at(AT_FDCWD, f, comm, sizeof comm, NULL);
                        comm[strcspn(comm, "\n")] = '\0';
                        printf(" pid %d (%s)", (int) pids[i], comm);
                }
                printf("%s%s\n", cg ? " cgroup left" : "", tmp ? " private tmp dir left" : "");
        }
        t->procs_left += left > 0;
        t->cgroups_left += cg;
        t->tmp_left += tmp > 0;
        clean_round(mark, tag, tmpdir, t);
}

/* N busy loops (PROCD_EARLY_KILL_LOAD), each ended by the test or by its alarm */
static int busy(void *arg)
{
        (void) arg;
        alarm(600);
        for (volatile unsigned long i = 0;; i++)
                ;
        return 0;
}

static void early_kill_case(const char *mode, const char *const *mode_args)
{
        long load = ts_scale("PROCD_EARLY_KILL_LOAD", 0, 0, 64, 1);
        pid_t busy_pids[64];
        for (long i = 0; i < load; i++)
                busy_pids[i] = ts_fork(busy, NULL);
        tally t = { 0 };
        for (int round = 0; round < ROUNDS; round++)
                early_kill_round(mode, mode_args, round, &t);
        for (long i = 0; i < load; i++)
                if (busy_pids[i] > 1)
                        ts_kill_reap(busy_pids[i]);
        char loadavg[128] = "";
        tr_read_file_at(AT_FDCWD, "/proc/loadavg", loadavg, sizeof loadavg, NULL);
        loadavg[strcspn(loadavg, "\n")] = '\0';
        printf("\nearly kill, %s (%s): of %d kills at 0-%d ms, %d left processes of the job alive; for the next "
               "starter's sweep %d left cgroups, %d the private tmp dir; %d left something the sweep did not remove "
               "(loadavg %s, %ld busy loops)\n",
               mode, sr_starter_bin(), t.kills, (ROUNDS - 1) * STEP_MS, t.procs_left, t.cgroups_left, t.tmp_left,
               t.swept_left, loadavg, load);
        /* cgroups and the directory made before the guard started (a few ms) are the sweep's:
         * counted, not asserted; but nothing survives the sweep */
        CU_ASSERT_EQUAL(t.procs_left, 0);
        CU_ASSERT_EQUAL(t.swept_left, 0);
}

static void test_early_kill_embedded(void)
{
        if (!ts_need_private_mounts("early-kill tests") || !ts_cgroup_base()) /* --private-tmp */
                return;
        static const char *const embedded[] = { "--no-procd", NULL };
        early_kill_case("embedded", embedded);
}

static void test_early_kill_procd(void)
{
        if (!ts_need_private_mounts("early-kill tests") || !ts_cgroup_base()) /* --private-tmp */
                return;
        char sock[PATH_MAX];
        sr_path(sock, sizeof sock, "ekpd", "");
        mkdir(sock, 0755);
        strcat(sock, "/procd.sock");
        pid_t pd = sr_procd_start(sock, "ekpd");
        if (pd <= 1) {
                ts_skip("early kill with procd", "procd did not start");
                return;
        }
        const char *with_procd[] = { "--socket", sock, NULL };
        early_kill_case("procd", with_procd);
        sr_procd_stop(pd, sock);
}

int main(int argc, char **argv)
{
        CU_TestInfo tests[] = {
                { "embedded: SIGKILL at 0-200 ms leaves nothing of the job", test_early_kill_embedded },
                { "procd: SIGKILL at 0-200 ms leaves nothing of the job", test_early_kill_procd },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = { { "starter early kill", NULL, NULL, NULL, NULL, tests }, CU_SUITE_INFO_NULL };
        return sr_main(argc, argv, "procd-starter-early-kill", NULL, suites);
}
