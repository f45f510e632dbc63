/* test_placement.c - procd never undoes another manager's placement (issue 16): a process
 * placed in a memory-limited cgroup that is not its parent's (the v1 memory controller alone
 * on hybrid and pure v1 hosts, as Slurm's cgroup/v1 places a task; memory.max in the v2
 * tree on pure v2), registered with procd, stays there in every hierarchy (no fam.* cgroup
 * is made), is OOM-killed exactly as without procd (SIGKILL, the cgroup's oom_kill count
 * rose), and procd reports the OOM through the placed cgroup; the same after a procd
 * restart; AdoptProcess never takes a placed process out of its cgroup.  The cgroups are
 * made under the run's test base and removed with it. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "procd/core/state.h"
#include "testsupport.h"
#include "trackers/proc-read.h"
#include "trackers/util.h"

#define LIMIT_BYTES (32u << 20)

static ph_daemon D;
static procd_client *C;
static char BASE[256]; /* the daemon's --family-cgroup-base */

static int suite_init(void)
{
        if (!ts_cgroup_base())
                return 0; /* each test skips with the printed reason */
        ts_cgroup_path(BASE, sizeof BASE, "fams");
        const char *extra[] = { "--family-cgroup-base", BASE, NULL };
        if (ph_start(&D, extra, NULL, 10000) < 0)
                return 1;
        return procd_connect(D.socket, &C, NULL) == PROCD_OK ? 0 : 1;
}

static int suite_clean(void) { return ph_suite_stop(&D, &C); }

#define NEED()                                         \
        do {                                           \
                if (!ts_need_root("placement") || !C) \
                        return;                        \
        } while (0)

#define EXPECT PH_EXPECT

/* The hierarchy the memory limit is set in: the v1 memory hierarchy when there is one
 * (hybrid, v1), else the v2 tree when it offers memory; -1 (printed) when neither. */
static int memory_hierarchy(void)
{
        const tr_hierarchies *hs = ts_hierarchies();
        if (hs->v1_of[TR_CTRL_MEMORY] >= 0)
                return hs->v1_of[TR_CTRL_MEMORY];
        if (hs->v2 >= 0 && (hs->h[hs->v2].controllers & (1u << TR_CTRL_MEMORY)))
                return hs->v2;
        printf("\n  SKIP placement case: no memory controller here\n");
        return -1;
}

/* A memory-limited cgroup <base>/<name> in hierarchy mi alone (as another manager would make
 * it), no swap beyond the limit; NULL handle on failure (printed). */
static tr_cgroup *limited_cgroup(int mi, const char *name, char *path, size_t size)
{
        const tr_hierarchies *hs = ts_hierarchies();
        ts_cgroup_path(path, size, name);
        tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        if (tr_cgroup_create_in(hs, path, 1u << mi, &cg, &err) < 0) {
                fprintf(stderr, "create %s: %s\n", path, err.msg);
                return NULL;
        }
        char v[32];
        snprintf(v, sizeof v, "%u", LIMIT_BYTES);
        bool v2 = hs->h[mi].is_v2;
        int k = tr_cgroup_write(cg, mi, v2 ? "memory.max" : "memory.limit_in_bytes", v, &err);
        if (k >= 0 && v2 && tr_cgroup_has_file(cg, mi, "memory.swap.max"))
                k = tr_cgroup_write(cg, mi, "memory.swap.max", "0", &err);
        if (k >= 0 && !v2 && tr_cgroup_has_file(cg, mi, "memory.memsw.limit_in_bytes"))
                k = tr_cgroup_write(cg, mi, "memory.memsw.limit_in_bytes", v, &err);
        if (k < 0) {
                fprintf(stderr, "limit %s: %s\n", path, err.msg);
                tr_cgroup_destroy(cg, 2000000, NULL);
                tr_cgroup_free(cg);
                return NULL;
        }
        return cg;
}

/* The cgroup's OOM kill count: memory.events oom_kill (v2), memory.oom_control oom_kill
 * (v1); -1 when unreadable. */
static long oom_kills(tr_cgroup *cg, int mi)
{
        bool v2 = tr_cgroup_hierarchies(cg)->h[mi].is_v2;
        char buf[1024];
        if (tr_cgroup_read(cg, mi, v2 ? "memory.events" : "memory.oom_control", buf, sizeof buf, NULL) < 0)
                return -1;
        const char *p = strstr(buf, "oom_kill ");
        return p ? strtol(p + 9, NULL, 10) : -1;
}

/* A child that waits for a byte on its pipe, then allocates and touches 3x the limit
 * (exit 0 only if it survived that). */
static int grow_main(void *arg)
{
        int go_r = *(int *) arg;
        char c;
        if (read(go_r, &c, 1) != 1)
                return 2;
        size_t n = 3 * (size_t) LIMIT_BYTES;
        char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return 3;
        for (size_t i = 0; i < n; i += 4096)
                p[i] = (char) i;
        return 0;
}

/* pid's /proc/PID/cgroup, whole (every hierarchy). */
static const char *cgroups_of(pid_t pid, char *buf, size_t size)
{
        char f[64];
        snprintf(f, sizeof f, "/proc/%d/cgroup", (int) pid);
        if (tr_read_file_at(AT_FDCWD, f, buf, size, NULL) < 0)
                buf[0] = '\0';
        return buf;
}

/* A sleeper placed in a fresh limited cgroup <base>/<name> of hierarchy mi (its parent, this
 * test, is elsewhere); its /proc/PID/cgroup into before.  *cg: the cgroup (NULL: failed). */
static pid_t placed_sleeper(int mi, const char *name, char *path, size_t size, tr_cgroup **cg, char *before,
                            size_t bsize)
{
        *cg = limited_cgroup(mi, name, path, size);
        if (!*cg)
                return -1;
        pid_t s = ts_sleeper();
        tr_error err = { 0 };
        if (s <= 1 || tr_cgroup_attach(*cg, s, &err) < 0) {
                fprintf(stderr, "placing %d in %s: %s\n", (int) s, path, err.msg);
                return -1;
        }
        cgroups_of(s, before, bsize);
        return s;
}

/* Whether the family base holds a fam.<pid>.* cgroup in any hierarchy. */
static bool fam_cgroup_exists(pid_t pid)
{
        const tr_hierarchies *hs = ts_hierarchies();
        char prefix[64];
        int n = snprintf(prefix, sizeof prefix, "fam.%d.", (int) pid);
        bool found = false;
        for (int i = 0; i < hs->n && !found; i++) {
                char fs[512];
                DIR *d = tr_hierarchy_fs_path(&hs->h[i], BASE, fs, sizeof fs, NULL) == 0 ? opendir(fs) : NULL;
                for (struct dirent *e; d && !found && (e = readdir(d));)
                        found = strncmp(e->d_name, prefix, (size_t) n) == 0;
                if (d)
                        closedir(d);
        }
        return found;
}

/* One run: a grower placed in a fresh limited cgroup, registered with procd when
 * `registered`; it must die of SIGKILL by the OOM killer, never moved meanwhile. */
static void check_overgrow(int mi, const char *name, bool registered)
{
        char path[256], before[2048], now[2048];
        tr_cgroup *cg = limited_cgroup(mi, name, path, sizeof path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(cg);
        int go[2];
        CU_ASSERT_EQUAL_FATAL(pipe2(go, O_CLOEXEC), 0);
        pid_t gp = ts_fork(grow_main, &go[0]);
        close(go[0]);
        CU_ASSERT_FATAL(gp > 1);
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_attach(cg, gp, &err), 0); /* placed: its parent is elsewhere */
        cgroups_of(gp, before, sizeof before);
        long oom0 = oom_kills(cg, mi);
        if (registered) {
                EXPECT(procd_register_subfamily(C, gp, 0, 1, &e_), PROCD_OK);
                CU_ASSERT_STRING_EQUAL(cgroups_of(gp, now, sizeof now), before); /* never moved */
                CU_ASSERT_FALSE(fam_cgroup_exists(gp));
                procd_family_info fi;
                CU_ASSERT_FATAL(ph_dump_one(C, gp, &fi));
                printf("\n  %s: tracking %s, source %s", name, fi.tracking, fi.source);
                CU_ASSERT(strncmp(fi.tracking, "placed:", 7) == 0 && strstr(fi.tracking, path));
                CU_ASSERT_STRING_EQUAL(fi.source, "cgroup");
                procd_usage u;
                EXPECT(procd_get_usage(C, gp, &u, &e_), PROCD_OK);
                CU_ASSERT(u.num_procs.available && u.num_procs.value == 1);
                CU_ASSERT_STRING_EQUAL(cgroups_of(gp, now, sizeof now), before);
        }
        CU_ASSERT_EQUAL(write(go[1], "g", 1), 1);
        close(go[1]);
        int st = ts_wait(gp, 120000);
        CU_ASSERT(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        long oom1 = oom_kills(cg, mi);
        printf("\n  %s: %s, cgroup oom_kill %ld -> %ld", name,
               st >= 0 && WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "not killed", oom0, oom1);
        CU_ASSERT(oom0 >= 0 && oom1 > oom0);
        if (registered) {
                procd_usage u;
                EXPECT(procd_get_usage(C, gp, &u, &e_), PROCD_OK);
                char src[64];
                printf("\n  %s: procd reports oom_kills %s%llu (source %s%s%s)", name,
                       u.oom_kills.available ? "" : "unavailable ", (unsigned long long) u.oom_kills.value,
                       procd_usage_source_name(&u, src, sizeof src), u.fallback ? "; " : "",
                       u.fallback ? u.fallback_reason : "");
                CU_ASSERT(u.oom_kills.available && u.oom_kills.value >= 1);
                /* which cgroups answered: the placed one, by name, wherever /proc helped */
                CU_ASSERT(!u.fallback || strstr(u.fallback_reason, path));
                EXPECT(procd_unregister_family(C, gp, &e_), PROCD_OK);
        }
        printf("\n");
        tr_cgroup_destroy(cg, 5000000, NULL);
        tr_cgroup_free(cg);
}

static void test_oom_without_procd(void)
{
        NEED();
        int mi = memory_hierarchy();
        if (mi >= 0)
                check_overgrow(mi, "oom-bare", false);
}

static void test_oom_registered(void)
{
        NEED();
        int mi = memory_hierarchy();
        if (mi >= 0)
                check_overgrow(mi, "oom-placed", true);
}

/* A root placed in some hierarchies only (v1 memory; the v2 tree and the other v1
 * hierarchies where its parent is): no fam.* cgroup anywhere, tracked through the placed
 * memory cgroup, and usage names it beside the fields /proc gave.  Adopted into another
 * family, and that family tracked through a cgroup, it moves everywhere but in memory. */
static void test_partial_placement(void)
{
        NEED();
        const tr_hierarchies *hs = ts_hierarchies();
        int mi = hs->v1_of[TR_CTRL_MEMORY];
        if (mi < 0) {
                printf("\n  SKIP partial placement: pure v2, one hierarchy holds every controller\n");
                return;
        }
        char path[256], before[2048], now[2048];
        tr_cgroup *cg = NULL;
        pid_t s = placed_sleeper(mi, "partial", path, sizeof path, &cg, before, sizeof before);
        CU_ASSERT_FATAL(s > 1);
        EXPECT(procd_register_subfamily(C, s, 0, 1, &e_), PROCD_OK);
        CU_ASSERT_STRING_EQUAL(cgroups_of(s, now, sizeof now), before);
        CU_ASSERT_FALSE(fam_cgroup_exists(s));
        procd_family_info fi;
        CU_ASSERT_FATAL(ph_dump_one(C, s, &fi));
        char want[300];
        snprintf(want, sizeof want, "placed:%s:%s", hs->h[mi].key, path);
        CU_ASSERT_STRING_EQUAL(fi.tracking, want);
        procd_usage u;
        EXPECT(procd_get_usage(C, s, &u, &e_), PROCD_OK);
        char src[64];
        printf("\n  usage source %s, fallback %s\n", procd_usage_source_name(&u, src, sizeof src), u.fallback_reason);
        CU_ASSERT(u.memory_current_bytes.available && (u.sources & PROCD_SRC_CGROUP_V1));
        CU_ASSERT(u.cpu_usec.available);
        CU_ASSERT(u.fallback && strstr(u.fallback_reason, want + 7));
        /* AdoptProcess into a family procd made a cgroup for: a process placed in the
         * memory cgroup moves in the v2 tree (its parent's there), never out of memory */
        pid_t r = ts_sleeper();
        EXPECT(procd_register_subfamily(C, r, 0, 1, &e_), PROCD_OK);
        EXPECT(procd_adopt_process(C, s, r, &e_), PROCD_OK);
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_read(hs, s, &pc, NULL), 0);
        CU_ASSERT_STRING_EQUAL(pc.paths[mi], path);
        if (hs->v2 >= 0)
                CU_ASSERT(strstr(pc.paths[hs->v2], "/fam.") != NULL);
        tr_pid_cgroups_clear(&pc);
        /* TrackFamilyViaCgroup: the members follow, each only where it is not placed */
        char trk[256];
        ts_cgroup_path(trk, sizeof trk, "trk-placed");
        EXPECT(procd_track_via_cgroup(C, r, trk, &e_), PROCD_OK);
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_read(hs, s, &pc, NULL), 0);
        CU_ASSERT_STRING_EQUAL(pc.paths[mi], path);
        if (hs->v2 >= 0)
                CU_ASSERT_STRING_EQUAL(pc.paths[hs->v2], trk);
        tr_pid_cgroups_clear(&pc);
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_read(hs, r, &pc, NULL), 0);
        CU_ASSERT_STRING_EQUAL(pc.paths[mi], trk); /* the root was procd's to move */
        tr_pid_cgroups_clear(&pc);
        EXPECT(procd_unregister_family(C, r, &e_), PROCD_OK);
        EXPECT(procd_unregister_family(C, s, &e_), PROCD_OK);
        ts_kill_reap(r);
        ts_kill_reap(s);
        tr_cgroup_destroy(cg, 5000000, NULL);
        tr_cgroup_free(cg);
}

/* A parent that forks a child, reports its pid on the pipe and waits. */
static int parent_main(void *arg)
{
        int w = *(int *) arg;
        pid_t c = fork();
        if (c == 0)
                for (;;)
                        pause();
        if (c < 0 || write(w, &c, sizeof c) != sizeof c)
                return 1;
        for (;;)
                pause();
}

/* A registered parent (procd moved it into its family cgroup) and its child forked before
 * that move, registered next.  Left where it was (where the test, its family's root, is),
 * the difference from its parent is procd's own: it gets a family cgroup of its own, never
 * tracked through the cgroup the test shares with the root family.  Placed by another
 * manager (a memory cgroup, as HTCondor places a job whose starter sits in a family
 * cgroup), it stays there and is tracked through it. */
static void check_child_of_moved_parent(int mi, bool placed_by_other)
{
        int p[2];
        CU_ASSERT_EQUAL_FATAL(pipe2(p, O_CLOEXEC), 0);
        pid_t par = ts_fork(parent_main, &p[1]);
        close(p[1]);
        pid_t c = 0;
        bool got = par > 1 && read(p[0], &c, sizeof c) == sizeof c && c > 1;
        close(p[0]);
        CU_ASSERT_FATAL(got);
        EXPECT(procd_register_subfamily(C, par, 0, 1, &e_), PROCD_OK);
        char path[256] = "", before[2048], now[2048];
        tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        if (placed_by_other) {
                cg = limited_cgroup(mi, "child-placed", path, sizeof path);
                CU_ASSERT(cg && tr_cgroup_attach(cg, c, &err) == 0);
        }
        cgroups_of(c, before, sizeof before);
        EXPECT(procd_register_subfamily(C, c, 0, 1, &e_), PROCD_OK);
        procd_family_info fi;
        if (ph_dump_one(C, c, &fi)) {
                printf("\n  child %s: tracking %s", placed_by_other ? "placed by another manager" : "left behind",
                       fi.tracking);
                if (placed_by_other) {
                        CU_ASSERT_STRING_EQUAL(cgroups_of(c, now, sizeof now), before);
                        CU_ASSERT(strncmp(fi.tracking, "placed:", 7) == 0 && strstr(fi.tracking, path));
                        CU_ASSERT_FALSE(fam_cgroup_exists(c));
                } else {
                        CU_ASSERT(strncmp(fi.tracking, "cgroup:", 7) == 0);
                        CU_ASSERT(fam_cgroup_exists(c));
                }
        } else {
                CU_FAIL("the child's family is missing from the dump");
        }
        EXPECT(procd_unregister_family(C, c, &e_), PROCD_OK);
        EXPECT(procd_unregister_family(C, par, &e_), PROCD_OK);
        kill(c, SIGKILL); /* c > 1: the test's grandchild */
        ts_kill_reap(par);
        ts_reap_orphans(100);
        printf("\n");
        if (cg) {
                tr_cgroup_destroy(cg, 5000000, NULL);
                tr_cgroup_free(cg);
        }
}

static void test_child_of_moved_parent(void)
{
        NEED();
        int mi = memory_hierarchy();
        if (mi < 0)
                return;
        check_child_of_moved_parent(mi, false);
        check_child_of_moved_parent(mi, true);
}

/* Placed in the hierarchy membership is read in (v2 on v2 and hybrid): AdoptProcess refuses
 * and moves nothing. */
static void test_adopt_refuses_placed(void)
{
        NEED();
        char path[256], before[2048], now[2048];
        tr_cgroup *cg = NULL;
        pid_t s = ph_sleeper_in_cgroup("adoptee", path, sizeof path, &cg); /* every hierarchy */
        CU_ASSERT_FATAL(s > 1);
        cgroups_of(s, before, sizeof before);
        pid_t r = ts_sleeper();
        EXPECT(procd_register_subfamily(C, r, 0, 1, &e_), PROCD_OK);
        procd_error e = { 0 };
        CU_ASSERT_EQUAL(procd_adopt_process(C, s, r, &e), PROCD_E_BAD_CGROUP);
        printf("\n  %s\n", e.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "another manager"));
        CU_ASSERT_STRING_EQUAL(cgroups_of(s, now, sizeof now), before);
        EXPECT(procd_unregister_family(C, r, &e_), PROCD_OK);
        ts_kill_reap(r);
        ts_kill_reap(s);
        tr_cgroup_destroy(cg, 5000000, NULL);
        tr_cgroup_free(cg);
}

/* A placed family survives a procd crash as it was: restored through the same placed
 * cgroups, its root still where it was put. */
static void test_restore_keeps_placement(void)
{
        NEED();
        int mi = memory_hierarchy();
        if (mi < 0)
                return;
        char path[256], before[2048], now[2048];
        tr_cgroup *cg = NULL;
        pid_t s = placed_sleeper(mi, "restored", path, sizeof path, &cg, before, sizeof before);
        CU_ASSERT_FATAL(s > 1);
        EXPECT(procd_register_subfamily(C, s, 0, 1, &e_), PROCD_OK);
        procd_family_info fi;
        CU_ASSERT_FATAL(ph_dump_one(C, s, &fi));
        char tracking[sizeof fi.tracking];
        snprintf(tracking, sizeof tracking, "%s", fi.tracking);
        procd_disconnect(C);
        C = NULL;
        ph_crash(&D);
        const char *extra[] = { "--family-cgroup-base", BASE, NULL };
        CU_ASSERT_EQUAL_FATAL(ph_start_in(&D, extra, NULL, 10000), 0);
        CU_ASSERT_EQUAL_FATAL(procd_connect(D.socket, &C, NULL), PROCD_OK);
        CU_ASSERT_FATAL(ph_dump_one(C, s, &fi));
        CU_ASSERT_STRING_EQUAL(fi.tracking, tracking);
        CU_ASSERT_STRING_EQUAL(fi.source, "cgroup");
        CU_ASSERT_STRING_EQUAL(cgroups_of(s, now, sizeof now), before);
        EXPECT(procd_kill_family(C, s, &e_), PROCD_OK); /* through /proc: the cgroup is not procd's */
        CU_ASSERT_FALSE(ts_alive(s));
        EXPECT(procd_unregister_family(C, s, &e_), PROCD_OK);
        ts_kill_reap(s);
        tr_cgroup_destroy(cg, 5000000, NULL);
        tr_cgroup_free(cg);
}

/* A state file whose placed record names a hierarchy's root gets no more than registration
 * gives (pd_famcg_track_placed never reads through one): that family is not restored, a
 * valid placed record beside it is. */
static void test_restore_refuses_root(void)
{
        NEED();
        int mi = memory_hierarchy();
        if (mi < 0)
                return;
        const tr_hierarchies *hs = ts_hierarchies();
        char path[256], before[2048], good[400], bad[400];
        tr_cgroup *cg = NULL;
        pid_t a = placed_sleeper(mi, "refused", path, sizeof path, &cg, before, sizeof before);
        pid_t b = ts_sleeper();
        CU_ASSERT_FATAL(a > 1 && b > 1);
        snprintf(good, sizeof good, "%d:%s:%s\n", mi, hs->h[mi].key, path);
        snprintf(bad, sizeof bad, "%d:%s:/\n", mi, hs->h[mi].key);
        pd_state_family fams[2] = { { .root_pid = a, .interval_sec = 60, .cgroup = good, .cgroup_origin = 3 },
                                    { .root_pid = b, .interval_sec = 60, .cgroup = bad, .cgroup_origin = 3 } };
        CU_ASSERT(tr_pid_start_ticks(a, &fams[0].root_start_ticks) == 0);
        CU_ASSERT(tr_pid_start_ticks(b, &fams[1].root_start_ticks) == 0);
        procd_disconnect(C);
        C = NULL;
        ph_crash(&D);
        char state[256];
        snprintf(state, sizeof state, "%s/procd.state", D.dir);
        pd_state st = { .fams = fams, .n = 2, .version = PD_STATE_VERSION };
        CU_ASSERT_FATAL(pd_state_write(state, &st, NULL) == 0);
        const char *extra[] = { "--family-cgroup-base", BASE, NULL };
        CU_ASSERT_EQUAL_FATAL(ph_start_in(&D, extra, NULL, 10000), 0);
        CU_ASSERT_EQUAL_FATAL(procd_connect(D.socket, &C, NULL), PROCD_OK);
        procd_family_info fi;
        CU_ASSERT(ph_dump_one(C, a, &fi) && strncmp(fi.tracking, "placed:", 7) == 0);
        CU_ASSERT_FALSE(ph_dump_one(C, b, &fi));
        EXPECT(procd_unregister_family(C, a, &e_), PROCD_OK);
        ts_kill_reap(a);
        ts_kill_reap(b);
        tr_cgroup_destroy(cg, 5000000, NULL);
        tr_cgroup_free(cg);
}

int main(void)
{
        if (!ts_need_root("test_placement"))
                return 77;
        CU_TestInfo daemon[] = {
                { "overgrowing without procd: OOM-killed", test_oom_without_procd },
                { "overgrowing registered: OOM-killed, never moved, OOM reported", test_oom_registered },
                { "placed in v1 memory only: no family cgroup, usage names it", test_partial_placement },
                { "a child forked before its parent's move: procd's doing, not a placement", test_child_of_moved_parent },
                { "AdoptProcess leaves a placed process", test_adopt_refuses_placed },
                { "restore keeps the placement", test_restore_keeps_placement },
                { "restore refuses a placed record naming a root", test_restore_refuses_root },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "placement through procd", suite_init, suite_clean, NULL, NULL, daemon },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
