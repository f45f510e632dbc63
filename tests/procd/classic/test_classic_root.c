/* test_classic_root.c - HTCondor's launch sequence from the root cgroup (issue 19): procd
 * started as condor_master starts it (-A ADDRESS -L LOG -S 60, no family-cgroup option, no
 * environment for it) by a process in the root cgroup of the hierarchy families are matched
 * in, as on a node without systemd, makes family cgroups by default under a base of its own
 * (/procd-families/<address>) and logs where; a fast setsid double-fork escaper registered
 * through the classic protocol then dies at KILL_FAMILY.
 *
 * Safety on a shared machine: when this test does not sit in that root cgroup itself, only
 * procd (a child of this test, ended by it) is moved there, in that hierarchy alone, before
 * exec; its base is made only in the hierarchies where procd sits in the root cgroup (never
 * out of a cgroup its launcher placed it in), is unique per run (the address holds a fresh
 * temporary directory), and is removed at the end even on failure (/procd-families too when
 * empty).  Only processes this test started are signalled, by pid. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classic-client.h"
#include "procd/core/family-cgroup.h"
#include "testsupport.h"
#include "trackers/pidref.h"
#include "trackers/util.h"

static char BASE[PATH_MAX]; /* the base procd takes; removed at exit */

/* Index of the hierarchy procd matches families in (as the daemon picks it). */
static int primary(void) { return pd_famcg_primary(ts_hierarchies()); }

/* pre_exec: procd into the root cgroup of that hierarchy when this test is elsewhere. */
static void enter_root(void *arg)
{
        (void) arg;
        if (cc_in_root_cgroup())
                return;
        const tr_hierarchy *h = &ts_hierarchies()->h[primary()];
        char f[PATH_MAX + 16];
        snprintf(f, sizeof f, "%s/cgroup.procs", h->mount_point);
        int fd = open(f, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "0", 1) != 1)
                dprintf(2, "moving procd into the root cgroup %s: %s\n", h->mount_point, strerror(errno));
        if (fd >= 0)
                close(fd);
}

/* Remove BASE (and its fam.* children) in every hierarchy, then /procd-families when empty. */
static void remove_base(void)
{
        if (!BASE[0])
                return;
        const tr_hierarchies *hs = ts_hierarchies();
        for (int i = 0; i < hs->n; i++) {
                char fs[PATH_MAX];
                if (tr_hierarchy_fs_path(&hs->h[i], BASE, fs, sizeof fs, NULL) < 0)
                        continue;
                DIR *d = opendir(fs);
                for (struct dirent *e; d && (e = readdir(d));) {
                        if (strncmp(e->d_name, "fam.", 4) != 0)
                                continue;
                        char sub[PATH_MAX + 300];
                        snprintf(sub, sizeof sub, "%s/%s/" PD_FAMCG_LEAF, fs, e->d_name);
                        rmdir(sub);
                        snprintf(sub, sizeof sub, "%s/%s", fs, e->d_name);
                        rmdir(sub);
                }
                if (d)
                        closedir(d);
                rmdir(fs);
                char *slash = strrchr(fs, '/');
                if (slash) {
                        *slash = '\0';
                        rmdir(fs); /* PD_FAMCG_ROOT_PARENT: only when no other daemon's base is there */
                }
        }
        BASE[0] = '\0';
}

/* The root to register: waits for a byte, then runs the fast escaper (HTCondor's scenario). */
static int escaper_main(void *arg)
{
        int fd = *(int *) arg;
        char c;
        if (read(fd, &c, 1) != 1)
                return 2;
        execl("/bin/sh", "sh", "-c", "(setsid sh -c 'sleep 60' &)", (char *) NULL);
        return 127;
}

/* This test's live children other than skip (procd), the escapers reparented to it (ts_run
 * makes it the subreaper), and their children, into out (up to max). */
static int orphans(pid_t skip, pid_t *out, int max)
{
        int n = 0;
        pid_t queue[64];
        int qn = 0;
        queue[qn++] = getpid();
        for (int q = 0; q < qn; q++) {
                char f[96];
                snprintf(f, sizeof f, "/proc/%d/task/%d/children", (int) queue[q], (int) queue[q]);
                char buf[1024];
                if (tr_read_file_at(AT_FDCWD, f, buf, sizeof buf, NULL) < 0)
                        continue;
                for (char *save = NULL, *t = strtok_r(buf, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
                        pid_t p = (pid_t) atoi(t);
                        if (p <= 1 || p == skip || !ts_alive(p))
                                continue;
                        if (n < max)
                                out[n++] = p;
                        if (q == 0 && qn < 64)
                                queue[qn++] = p; /* an escaper reparented here: its children too */
                }
        }
        return n;
}

static void test_root_launch_kills_escaper(void)
{
        if (!ts_need_root("HTCondor's launch from the root cgroup"))
                return;
        const tr_hierarchies *hs = ts_hierarchies();
        if (hs->mode == TR_MODE_NONE || primary() < 0) {
                printf("\n  SKIP launch from the root cgroup: no cgroup hierarchy mounted\n");
                return;
        }
        const char *extra[] = { "-L", "@LOG", "-S", "60", NULL };
        cc_daemon d;
        CU_ASSERT_EQUAL_FATAL(cc_daemon_start_with(&d, extra, enter_root, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(pd_famcg_root_base(d.addr, BASE, sizeof BASE));
        /* the log says where */
        char log[PATH_MAX], text[8192] = "";
        snprintf(log, sizeof log, "%s/procd.log", d.dir);
        tr_read_file_at(AT_FDCWD, log, text, sizeof text, NULL);
        const char *line = strstr(text, "family cgroups under a base of its own");
        CU_ASSERT_PTR_NOT_NULL(line);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, BASE));
        if (line) {
                const char *nl = strchr(line, '\n');
                printf("\n  log: %.*s", nl ? (int) (nl - line) : (int) strlen(line), line);
        }

        /* register the root from its parent (the starter's role), watcher = the parent */
        int go[2];
        CU_ASSERT_EQUAL_FATAL(pipe2(go, O_CLOEXEC), 0);
        pid_t root = ts_fork(escaper_main, &go[0]);
        close(go[0]);
        CU_ASSERT_FATAL(root > 1);
        cc_client c;
        CU_ASSERT_EQUAL_FATAL(cc_open(&c, d.addr, 0, 0), 0);
        CU_ASSERT_EQUAL(cc_register(&c, root, getpid(), 60), CC_SUCCESS);
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_read(hs, root, &pc, NULL), 0);
        char fam[PATH_MAX];
        snprintf(fam, sizeof fam, "%s/fam.%d.", BASE, (int) root);
        CU_ASSERT(pc.paths[primary()] && strncmp(pc.paths[primary()], fam, strlen(fam)) == 0);
        printf("\n  root %d in %s", (int) root, pc.paths[primary()] ? pc.paths[primary()] : "?");
        tr_pid_cgroups_clear(&pc);

        /* the fast escaper: sh forks a subshell that starts a setsid sh and exits at once */
        CU_ASSERT_EQUAL(write(go[1], "g", 1), 1);
        close(go[1]);
        int st = ts_wait(root, 30000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        pid_t esc[8];
        int n = 0;
        for (int t = 0; t < 500 && n == 0; t++) { /* until the escaper exists: a 5 s bound */
                n = orphans(d.pid, esc, 8);
                if (n == 0)
                        usleep(10000);
        }
        CU_ASSERT_FATAL(n >= 1);
        for (int i = 0; i < n; i++)
                printf("\n  escaper %d (session %d) left the root's tree", (int) esc[i], (int) getsid(esc[i]));

        CU_ASSERT_EQUAL(cc_simple(&c, CC_KILL_FAMILY, root), CC_SUCCESS);
        for (int i = 0; i < n; i++) {
                bool gone = false;
                for (int t = 0; t < 500 && !gone; t++) { /* SIGKILLed: gone at once; a 5 s bound */
                        gone = !ts_alive(esc[i]);
                        if (!gone)
                                usleep(10000);
                }
                CU_ASSERT(gone);
                if (!gone)
                        tr_safe_kill(esc[i], 0, SIGKILL);
        }
        printf("\n  after KILL_FAMILY: %d escaper(s) dead\n", n);
        CU_ASSERT_EQUAL(cc_simple(&c, CC_UNREGISTER_FAMILY, root), CC_SUCCESS);
        cc_close(&c);
        ts_reap_orphans(2000);
        st = cc_daemon_stop(&d);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        remove_base();
}

/* Explicitly off: --no-family-cgroups keeps procd from making any (log says so). */
static void test_off_switch(void)
{
        if (!ts_need_root("HTCondor's launch from the root cgroup, off"))
                return;
        const char *extra[] = { "-L", "@LOG", "--no-family-cgroups", NULL };
        cc_daemon d;
        CU_ASSERT_EQUAL_FATAL(cc_daemon_start_with(&d, extra, enter_root, NULL), 0);
        char log[PATH_MAX], text[8192] = "";
        snprintf(log, sizeof log, "%s/procd.log", d.dir);
        tr_read_file_at(AT_FDCWD, log, text, sizeof text, NULL);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "no family cgroups: family cgroups are off"));
        char base[PATH_MAX], fs[PATH_MAX];
        CU_ASSERT_PTR_NOT_NULL_FATAL(pd_famcg_root_base(d.addr, base, sizeof base));
        const tr_hierarchies *hs = ts_hierarchies();
        if (primary() >= 0 && tr_hierarchy_fs_path(&hs->h[primary()], base, fs, sizeof fs, NULL) == 0)
                CU_ASSERT(access(fs, F_OK) < 0);
        int st = cc_daemon_stop(&d);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
        if (!ts_need_root("test_classic_root"))
                return 77;
        if (cc_daemon_is_condor()) {
                printf("SKIP test_classic_root: procd's own default (PROCD_CLASSIC_DAEMON names condor_procd)\n");
                return 77;
        }
        atexit(remove_base);
        CU_TestInfo tests[] = {
                { "launch from the root cgroup: family cgroups by default, escaper killed", test_root_launch_kills_escaper },
                { "--no-family-cgroups turns it off", test_off_switch },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "HTCondor's launch from the root cgroup", NULL, NULL, NULL, NULL, tests },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
