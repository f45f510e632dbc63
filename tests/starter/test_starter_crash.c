/* test_starter_crash.c - a starter SIGKILLed does not leave its job unsupervised, and a
 * starter outlives a procd restart, with the real binaries:
 *  - with procd: the family was registered kill-on-watcher-exit, so procd kills the job and
 *    removes the job cgroup; the next starter on the base removes the rest;
 *  - embedded (--no-procd): the starter's guard kills the job and removes its cgroups and
 *    its --private-tmp=DIR directory; a live starter's job is left alone;
 *  - the starter and its guard SIGKILLed: the next starter on the same base finds the job
 *    cgroup whose starter is gone (its lock is free), kills the job and removes the cgroups
 *    and the private /tmp directory recorded on them;
 *  - procd SIGKILLed and started again mid-job: the starter reconnects and reports
 *    "tracker": "procd"; started again without its state file, procd has forgotten the job
 *    and the starter reports "embedded". */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procd/client.h"
#include "starter-run.h"
#include "testsupport.h"
#include "trackers/util.h"

static bool file_has(const char *tag, const char *ext, const char *needle)
{
        char buf[16384];
        sr_read(tag, ext, buf, sizeof buf);
        bool has = strstr(buf, needle) != NULL;
        if (!has)
                printf("\n[%s%s] has no \"%s\":\n%s\n", tag, ext, needle, buf);
        return has;
}

static bool wait_until(bool (*cond)(const void *), const void *arg, int timeout_ms)
{
        for (int t = 0; t < timeout_ms; t += 20) {
                if (cond(arg))
                        return true;
                usleep(20000);
        }
        return cond(arg);
}

static bool pid_gone(const void *p) { return !ts_alive(*(const pid_t *) p); }
static bool job_cg_gone(const void *tag) { return !sr_cgroup_exists(tag, "job", false); }
static bool top_cg_gone(const void *tag) { return !sr_cgroup_exists(tag, NULL, false); }

/* Until procd tracks the starter's job `tag` (root pid root) via its job cgroup: the
 * starter's RegisterSubfamily and TrackFamilyViaCgroup are both done (bounded at 30 s). */
static bool procd_tracks_job(const char *sock, pid_t root, const char *tag)
{
        procd_client *c = NULL;
        if (procd_connect(sock, &c, NULL) != PROCD_OK)
                return false;
        char want[96];
        snprintf(want, sizeof want, "/%s/job", tag);
        bool tracked = false;
        for (int i = 0; i < 3000 && !tracked; i++) {
                procd_family_info *fi = NULL;
                size_t n = 0;
                if (procd_dump(c, root, &fi, &n, NULL) == PROCD_OK)
                        for (size_t k = 0; k < n; k++) {
                                const char *t = fi[k].tracking;
                                size_t len = strlen(t), wl = strlen(want);
                                tracked = tracked || (fi[k].root_pid == root && strncmp(t, "cgroup:", 7) == 0 &&
                                                      len >= wl && strcmp(t + len - wl, want) == 0);
                        }
                procd_family_info_free(fi, n);
                if (!tracked)
                        usleep(10000);
        }
        procd_disconnect(c);
        if (!tracked)
                printf("\nprocd does not track %s (root %d) via its job cgroup\n", tag, (int) root);
        return tracked;
}

/* One more starter on the same base: it sweeps what dead starters left. */
static void sweep_with_starter(const char *tag, const char *const *mode)
{
        const char *args[16];
        int n = 0;
        for (int i = 0; mode[i]; i++)
                args[n++] = mode[i];
        const char *rest[] = { "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", tag, "--", "/bin/true",
                               NULL };
        for (int i = 0; rest[i]; i++)
                args[n++] = rest[i];
        args[n] = NULL;
        pid_t p = sr_spawn(tag, args);
        int st = ts_wait(p, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static bool no_tmp_dirs(const void *dir) { return sr_count_entries(dir, "procd-tmp.") == 0; }

/* The guard writes its line after it has removed the cgroups and the private /tmp directory,
 * so a look at the .err right after those are gone can come before the line. */
static bool guard_reported(const void *tag)
{
        char buf[16384];
        sr_read(tag, ".err", buf, sizeof buf);
        return strstr(buf, "guard: the starter") != NULL;
}

/* The starter's guard (guard.h): its child named procd-guard; -1 when none. */
static pid_t guard_of(pid_t starter)
{
        char f[64], kids[1024] = "";
        snprintf(f, sizeof f, "/proc/%d/task/%d/children", (int) starter, (int) starter);
        tr_read_file_at(AT_FDCWD, f, kids, sizeof kids, NULL);
        for (char *save = NULL, *t = strtok_r(kids, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
                char comm[32] = "";
                snprintf(f, sizeof f, "/proc/%s/comm", t);
                tr_read_file_at(AT_FDCWD, f, comm, sizeof comm, NULL);
                if (strcmp(comm, "procd-guard\n") == 0)
                        return (pid_t) atoi(t);
        }
        return -1;
}

/* the job exec'd /bin/sleep: the starter opened the gate (sr_job_root shows the child as
 * soon as it is in its cgroup, still at the gate) */
static bool runs_sleep(const void *p) { return sr_runs(*(const pid_t *) p, "sleep"); }

static void tmp_base(char *buf, size_t size, const char *tag)
{
        sr_path(buf, size, tag, ".tmpbase");
        CU_ASSERT_EQUAL_FATAL(mkdir(buf, 0755), 0);
}

static void test_embedded_sigkill(void)
{
        if (!ts_need_root("starter crash tests") || !ts_cgroup_base())
                return;
        char dir[PATH_MAX], opt[PATH_MAX + 16];
        tmp_base(dir, sizeof dir, "emb-dead");
        snprintf(opt, sizeof opt, "--private-tmp=%s", dir);
        const char *a[] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "emb-dead",
                            opt, "--", "/bin/sleep", "1000", NULL };
        const char *b[] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "emb-live",
                            "--", "/bin/sleep", "1000", NULL };
        pid_t sa = sr_spawn("emb-dead", a), sb = sr_spawn("emb-live", b);
        pid_t ja = sr_job_root("emb-dead"), jb = sr_job_root("emb-live");
        CU_ASSERT_FATAL(ja > 1 && jb > 1);
        CU_ASSERT_FATAL(wait_until(runs_sleep, &ja, 10000) && wait_until(runs_sleep, &jb, 10000));
        CU_ASSERT_EQUAL(sr_count_entries(dir, "procd-tmp."), 1);
        ts_kill_reap(sa); /* SIGKILL: no cleanup of its own */
        /* its guard ends the job and removes what the starter made, no other starter needed */
        CU_ASSERT(wait_until(pid_gone, &ja, 10000));
        CU_ASSERT(wait_until(top_cg_gone, "emb-dead", 10000));
        CU_ASSERT(wait_until(no_tmp_dirs, dir, 10000));
        CU_ASSERT(wait_until(guard_reported, "emb-dead", 10000) || file_has("emb-dead", ".err", "guard: the starter"));
        /* the live starter's job is untouched, and it ends normally */
        CU_ASSERT(ts_alive(jb) && ts_alive(sb));
        CU_ASSERT(sr_cgroup_exists("emb-live", "job", false));
        kill(sb, SIGTERM);
        int st = ts_wait(sb, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st));
        CU_ASSERT(wait_until(pid_gone, &jb, 5000));
        CU_ASSERT(top_cg_gone("emb-live"));
        if (ts_alive(ja))
                ts_kill_reap(ja);
        rmdir(dir);
}

/* The starter and its guard both SIGKILLed: the job runs on until the next starter on the
 * base sweeps it: job killed, cgroups and the recorded private /tmp directory removed. */
static void test_guard_and_starter_sigkill(void)
{
        if (!ts_need_root("starter crash tests") || !ts_cgroup_base())
                return;
        char dir[PATH_MAX], opt[PATH_MAX + 16];
        tmp_base(dir, sizeof dir, "emb-orphan");
        snprintf(opt, sizeof opt, "--private-tmp=%s", dir);
        const char *a[] = { "--no-procd", "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "emb-orphan",
                            opt, "--", "/bin/sleep", "1000", NULL };
        pid_t sa = sr_spawn("emb-orphan", a);
        pid_t ja = sr_job_root("emb-orphan");
        CU_ASSERT_FATAL(ja > 1);
        CU_ASSERT_FATAL(wait_until(runs_sleep, &ja, 10000));
        pid_t g = guard_of(sa);
        CU_ASSERT_FATAL(g > 1);
        int gfd = (int) syscall(SYS_pidfd_open, g, 0); /* the guard, not a reused pid */
        CU_ASSERT_FATAL(gfd >= 0);
        CU_ASSERT_EQUAL(syscall(SYS_pidfd_send_signal, gfd, SIGKILL, NULL, 0), 0);
        close(gfd);
        ts_kill_reap(sa);
        usleep(100000);
        CU_ASSERT(ts_alive(ja)); /* nobody left to end it */
        CU_ASSERT_EQUAL(sr_count_entries(dir, "procd-tmp."), 1);
        static const char *const embedded[] = { "--no-procd", NULL };
        sweep_with_starter("emb-sweeper", embedded);
        CU_ASSERT(file_has("emb-sweeper", ".err", "was left by a starter that is gone"));
        CU_ASSERT(wait_until(pid_gone, &ja, 5000));
        CU_ASSERT(top_cg_gone("emb-orphan"));
        CU_ASSERT_EQUAL(sr_count_entries(dir, "procd-tmp."), 0);
        if (ts_alive(ja))
                ts_kill_reap(ja);
        rmdir(dir);
}

static void test_procd_sigkill(void)
{
        if (!ts_need_root("starter crash tests") || !ts_cgroup_base())
                return;
        char sock[PATH_MAX];
        sr_path(sock, sizeof sock, "pd1", "");
        mkdir(sock, 0755);
        strcat(sock, "/procd.sock");
        pid_t pd = sr_procd_start(sock, "pd1");
        CU_ASSERT_FATAL(pd > 1);
        const char *a[] = { "--socket", sock, "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "pd-dead",
                            "--", "/bin/sleep", "1000", NULL };
        pid_t sa = sr_spawn("pd-dead", a);
        pid_t ja = sr_job_root("pd-dead");
        CU_ASSERT_FATAL(ja > 1);
        procd_client *c = NULL;
        CU_ASSERT_EQUAL_FATAL(procd_connect(sock, &c, NULL), PROCD_OK);
        procd_family_info *fi = NULL;
        size_t n = 0;
        bool registered = false;
        for (int i = 0; i < 200 && !registered; i++, usleep(10000)) {
                registered = procd_dump(c, ja, &fi, &n, NULL) == PROCD_OK && n > 0;
                procd_family_info_free(fi, n);
        }
        CU_ASSERT_FATAL(registered);
        ts_kill_reap(sa);
        /* procd: the watcher's exit kills the job and removes the job cgroup */
        CU_ASSERT(wait_until(pid_gone, &ja, 10000));
        CU_ASSERT(wait_until(job_cg_gone, "pd-dead", 10000));
        CU_ASSERT(procd_dump(c, ja, &fi, &n, NULL) == PROCD_E_FAMILY_NOT_FOUND);
        procd_disconnect(c);
        CU_ASSERT(file_has("pd1", ".log", "killing the family"));
        /* the rest of its cgroups (procd was not handed them): the next starter */
        const char *with_procd[] = { "--socket", sock, NULL };
        sweep_with_starter("pd-next", with_procd);
        CU_ASSERT(top_cg_gone("pd-dead"));
        sr_procd_stop(pd, sock);
}

/* A job that runs until the test lets it end, whatever the time taken meanwhile: a shell
 * blocked reading the FIFO gate (made here, per run).  Its argv is job_argv. */
static void make_gate(const char *tag, char *gate, size_t size)
{
        sr_path(gate, size, tag, ".gate");
        unlink(gate);
        CU_ASSERT_EQUAL_FATAL(mkfifo(gate, 0600), 0);
}

#define GATED_JOB(gate) "/bin/sh", "-c", "read line < \"$0\"", (gate)

/* Let the job waiting on gate end, then remove the FIFO.  The job may not have opened it
 * yet (ENXIO: no reader; the starter opens its own gate only after the registration that
 * procd_tracks_job sees): retried for up to 10 s. */
static void open_gate(const char *gate)
{
        int fd = -1;
        for (int i = 0; i < 1000 && fd < 0; i++) {
                fd = open(gate, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0 && errno != ENXIO)
                        break;
                if (fd < 0)
                        usleep(10000);
        }
        CU_ASSERT(fd >= 0);
        if (fd >= 0) {
                CU_ASSERT_EQUAL(write(fd, "go\n", 3), 3);
                close(fd);
        }
        unlink(gate);
}

static void test_procd_restart_mid_job(void)
{
        if (!ts_need_root("starter crash tests") || !ts_cgroup_base())
                return;
        char sock[PATH_MAX], state[PATH_MAX], rep[PATH_MAX], rep2[PATH_MAX];
        sr_path(sock, sizeof sock, "pd2", "");
        mkdir(sock, 0755);
        snprintf(state, sizeof state, "%s/procd.state", sock);
        strcat(sock, "/procd.sock");
        sr_path(rep, sizeof rep, "pd-restart", ".json");
        sr_path(rep2, sizeof rep2, "pd-forgot", ".json");
        pid_t pd = sr_procd_start(sock, "pd2");
        CU_ASSERT_FATAL(pd > 1);
        char gate[PATH_MAX], gate2[PATH_MAX];
        make_gate("pd-restart", gate, sizeof gate);
        make_gate("pd-forgot", gate2, sizeof gate2);
        const char *a[] = { "--socket", sock, "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name",
                            "pd-restart", "--report", rep, "--", GATED_JOB(gate), NULL };
        pid_t sa = sr_spawn("pd-restart", a);
        pid_t ja = sr_job_root("pd-restart");
        CU_ASSERT_FATAL(ja > 1);
        CU_ASSERT_FATAL(procd_tracks_job(sock, ja, "pd-restart")); /* the job waits at its gate */
        ts_kill_reap(pd);
        pd = sr_procd_start(sock, "pd2");
        CU_ASSERT_FATAL(pd > 1);
        CU_ASSERT(ts_alive(ja)); /* still running across the restart */
        open_gate(gate);
        int st = ts_wait(sa, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CU_ASSERT(file_has("pd-restart", ".json", "\"tracker\": \"procd\""));
        CU_ASSERT(top_cg_gone("pd-restart"));

        /* started again without its state: the job is forgotten, the report says so */
        const char *b[] = { "--socket", sock, "--systemd=no", "--cgroup-base", ts_cgroup_base(), "--name", "pd-forgot",
                            "--report", rep2, "--", GATED_JOB(gate2), NULL };
        pid_t sb = sr_spawn("pd-forgot", b);
        pid_t jb = sr_job_root("pd-forgot");
        CU_ASSERT_FATAL(jb > 1);
        CU_ASSERT_FATAL(procd_tracks_job(sock, jb, "pd-forgot"));
        ts_kill_reap(pd);
        unlink(state);
        pd = sr_procd_start(sock, "pd2");
        CU_ASSERT_FATAL(pd > 1);
        CU_ASSERT(ts_alive(jb));
        open_gate(gate2);
        st = ts_wait(sb, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CU_ASSERT(file_has("pd-forgot", ".json", "\"tracker\": \"embedded\""));
        CU_ASSERT(file_has("pd-forgot", ".err", "using the embedded tracker"));
        CU_ASSERT(top_cg_gone("pd-forgot"));
        sr_procd_stop(pd, sock);
}

int main(int argc, char **argv)
{
        CU_TestInfo tests[] = {
                { "embedded: a SIGKILLed starter's guard ends its job, cgroups, private tmp", test_embedded_sigkill },
                { "starter and guard SIGKILLed: the next starter sweeps job, cgroups, private tmp",
                  test_guard_and_starter_sigkill },
                { "procd: a SIGKILLed starter's job is killed by procd", test_procd_sigkill },
                { "procd restarted mid-job: reconnect, or embedded when forgotten", test_procd_restart_mid_job },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = { { "starter crash", NULL, NULL, NULL, NULL, tests }, CU_SUITE_INFO_NULL };
        return sr_main(argc, argv, "procd-starter-crash", NULL, suites);
}
