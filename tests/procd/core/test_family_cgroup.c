/* test_family_cgroup.c - a cgroup of its own for every registered family (procd/core/family-cgroup.c),
 * in-process and through a procd on the D-Bus transport, real processes in real cgroups
 * under the run's test base: REGISTER moves only the root, children forked later follow it,
 * earlier descendants stay in the parent family, unregister and watcher death remove the
 * cgroup once empty, TrackFamilyViaCgroup moves every member, its refusals, nested families
 * counted and killed with their parent, KillFamily never OK while a known member lives,
 * the off switch, and the /proc fallback with its reason when the base is not writable. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "procd/core/family-cgroup.h"
#include "testsupport.h"
#include "trackers/pidref.h"
#include "trackers/util.h"

static ph_daemon D;
static procd_client *C;
static char BASE[256]; /* <test base>/fams: the daemon's --family-cgroup-base */

#define EXPECT PH_EXPECT

static int suite_init(void)
{
        if (!ts_cgroup_base())
                return 0; /* each test skips with the printed reason */
        ts_cgroup_path(BASE, sizeof BASE, "fams");
        const char *extra[] = { "--family-cgroup-base", BASE, "--snapshot-interval", "1", NULL };
        if (ph_start(&D, extra, NULL, 10000) < 0)
                return 1;
        return procd_connect(D.socket, &C, NULL) == PROCD_OK ? 0 : 1;
}

static int suite_clean(void) { return ph_suite_stop(&D, &C); }

/* ---- helpers ------------------------------------------------------------------------ */

/* A child that forks a sleeping child of its own each time it reads 'f' from its pipe,
 * and reports the new pid.  Its children are reaped by it (SIGCHLD default + waitpid on
 * each read) or, once it is gone, by the test (subreaper). */
typedef struct forker {
        pid_t pid;
        int cmd_w, rep_r;
} forker;

static int forker_main(int cmd_r, int rep_w)
{
        char c;
        while (read(cmd_r, &c, 1) == 1) {
                while (waitpid(-1, NULL, WNOHANG) > 0) /* its own children only */
                        ;
                pid_t k = fork();
                if (k == 0) {
                        close(cmd_r);
                        close(rep_w);
                        for (;;)
                                pause();
                }
                if (write(rep_w, &k, sizeof k) != (ssize_t) sizeof k)
                        return 1;
        }
        return 0;
}

static bool forker_start(forker *fk)
{
        int cmd[2], rep[2];
        if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0)
                return false;
        fflush(NULL);
        pid_t p = fork();
        if (p < 0)
                return false;
        if (p == 0) {
                close(cmd[1]);
                close(rep[0]);
                _exit(forker_main(cmd[0], rep[1]));
        }
        close(cmd[0]);
        close(rep[1]);
        *fk = (forker) { p, cmd[1], rep[0] };
        return true;
}

static pid_t forker_fork(forker *fk)
{
        pid_t k = -1;
        if (write(fk->cmd_w, "f", 1) != 1 || read(fk->rep_r, &k, sizeof k) != (ssize_t) sizeof k)
                return -1;
        return k;
}

/* Kill the forker and the children it made (pids this test started), reap them. */
static void forker_stop(forker *fk, const pid_t *kids, int n)
{
        for (int i = 0; i < n; i++)
                if (kids[i] > 1 && ts_alive(kids[i]))
                        tr_safe_kill(kids[i], 0, SIGKILL);
        close(fk->cmd_w);
        close(fk->rep_r);
        ts_kill_reap(fk->pid);
        ts_reap_orphans(500);
}

/* A forker that forks kids[0], is registered through c (procd having seen kids[0]),
 * then forks kids[1]. */
static bool register_between_kids(procd_client *c, forker *fk, pid_t kids[2])
{
        if (!forker_start(fk))
                return false;
        kids[0] = forker_fork(fk);
        EXPECT(procd_snapshot(c, &e_), PROCD_OK); /* procd knows the earlier child */
        EXPECT(procd_register_subfamily(c, fk->pid, 0, 1, &e_), PROCD_OK);
        kids[1] = forker_fork(fk);
        return kids[0] > 1 && kids[1] > 1;
}

/* pid's cgroup (v2 when mounted) into buf; "" when gone. */
static const char *cg_of(pid_t pid, char *buf, size_t size)
{
        char *p = NULL;
        buf[0] = '\0';
        if (pd_famcg_pid_cgroup(ts_hierarchies(), pid, &p) == 0) {
                snprintf(buf, size, "%s", p);
                free(p);
        }
        return buf;
}

/* The family cgroup procd makes for root under parent (NULL: the base). */
static const char *fam_path(const char *parent, pid_t root, char *buf, size_t size)
{
        uint64_t start = 0;
        tr_pid_start_ticks(root, &start);
        snprintf(buf, size, "%s/fam.%d.%llu", parent ? parent : BASE, (int) root, (unsigned long long) start);
        return buf;
}

/* Where a family's root sits in the hierarchy cg_of reads: the leaf in v2, the family's
 * cgroup itself in v1 (family-cgroup.h). */
static const char *own_path(const char *fam, char *buf, size_t size)
{
        const tr_hierarchies *hs = ts_hierarchies();
        snprintf(buf, size, "%s%s", fam, pd_famcg_primary(hs) == hs->v2 ? "/" PD_FAMCG_LEAF : "");
        return buf;
}

/* Whether cgroup path exists in any hierarchy. */
static bool cg_exists(const char *path)
{
        const tr_hierarchies *hs = ts_hierarchies();
        for (int i = 0; i < hs->n; i++) {
                char fs[1024];
                struct stat st;
                if (tr_hierarchy_fs_path(&hs->h[i], path, fs, sizeof fs, NULL) == 0 && stat(fs, &st) == 0)
                        return true;
        }
        return false;
}

/* Wait (bounded, not timed: the bound only ends a broken run) until path is gone. */
static bool cg_gone_within(const char *path, int ms)
{
        for (int t = 0; t < ms; t += 20) {
                if (!cg_exists(path))
                        return true;
                usleep(20000);
        }
        return !cg_exists(path);
}

static bool registered(procd_client *c, pid_t pid)
{
        procd_family_info fi;
        return ph_dump_one(c, pid, &fi);
}

#define NEED(what)                                \
        do {                                      \
                if (!ts_need_root(what) || !C)    \
                        return;                   \
        } while (0)

/* ---- in-process ---------------------------------------------------------------------- */

/* The family cgroup exists exactly in the hierarchies of the mask (the handle too) and
 * holds the root there; the v2 tree is always one when mounted, a v1 hierarchy only when
 * it holds memory, blkio, pids, cpuacct or the freezer (and v2 cannot give that), and
 * cpuset/devices/net_cls/perf_event/hugetlb never. */
static void check_hierarchies(const pd_famcg *fc, tr_cgroup *cg, const char *path, pid_t root)
{
        const tr_hierarchies *hs = ts_hierarchies();
        uint32_t mask = pd_famcg_mask(fc);
        if (hs->v2 >= 0)
                CU_ASSERT(mask & (1u << hs->v2));
        const uint32_t never = (1u << TR_CTRL_CPU) | (1u << TR_CTRL_CPUSET) | (1u << TR_CTRL_DEVICES) |
                               (1u << TR_CTRL_NET_CLS) | (1u << TR_CTRL_NET_PRIO) | (1u << TR_CTRL_PERF_EVENT) |
                               (1u << TR_CTRL_HUGETLB) | (1u << TR_CTRL_RDMA) | (1u << TR_CTRL_MISC);
        const uint32_t used = (1u << TR_CTRL_CPUACCT) | (1u << TR_CTRL_MEMORY) | (1u << TR_CTRL_BLKIO) |
                              (1u << TR_CTRL_PIDS) | (1u << TR_CTRL_FREEZER);
        tr_pid_cgroups pc = { { 0 } };
        CU_ASSERT_FATAL(tr_pid_cgroups_read(hs, root, &pc, NULL) == 0);
        char leaf[600];
        snprintf(leaf, sizeof leaf, "%s/%s", path, PD_FAMCG_LEAF);
        for (int i = 0; i < hs->n; i++) {
                const tr_hierarchy *h = &hs->h[i];
                bool in = mask & (1u << i);
                char fs[1024];
                struct stat st;
                bool exists = tr_hierarchy_fs_path(h, path, fs, sizeof fs, NULL) == 0 && stat(fs, &st) == 0;
                if (exists != in || (tr_cgroup_path(cg, i) != NULL) != in)
                        fprintf(stderr, "hierarchy %s: in mask %d, exists %d\n", h->mount_point, in, exists);
                CU_ASSERT_EQUAL(exists, in);
                CU_ASSERT_EQUAL(tr_cgroup_path(cg, i) != NULL, in);
                /* the root moved only there: into the leaf in v2, the cgroup itself in v1 */
                CU_ASSERT_EQUAL(pc.paths[i] && strcmp(pc.paths[i], h->is_v2 ? leaf : path) == 0, in);
                if (!h->is_v2 && (h->controllers & used) == 0 && in)
                        CU_ASSERT(hs->v2 < 0); /* pure v1: the hierarchy families are matched by */
                if (!h->is_v2 && (h->controllers & never) && !(h->controllers & used))
                        CU_ASSERT_FALSE(in);
        }
        tr_pid_cgroups_clear(&pc);
}

static void test_base_rules(void)
{
        if (!ts_need_root("family cgroup base") || !ts_cgroup_base())
                return;
        const tr_hierarchies *hs = ts_hierarchies();
        pd_famcg *fc = NULL;
        pd_famcg_options off = { .disabled = true };
        CU_ASSERT_EQUAL_FATAL(pd_famcg_new(hs, &off, &fc), 0);
        CU_ASSERT_PTR_NULL(pd_famcg_base(fc));
        CU_ASSERT_PTR_NOT_NULL(strstr(pd_famcg_off_reason(fc), "--no-family-cgroups"));
        tr_error err = { 0 };
        char *path = NULL;
        tr_cgroup *fcg = NULL;
        CU_ASSERT(pd_famcg_create(fc, &(pd_famcg_root){ getpid(), 1, 0, 0 }, NULL, NULL, &path, &fcg, &err) < 0);
        pd_famcg_free(fc);

        /* default: <own cgroup>/families, refused when procd sits in a root cgroup */
        char own[512];
        cg_of(getpid(), own, sizeof own);
        pd_famcg_options dflt = { 0 };
        CU_ASSERT_EQUAL_FATAL(pd_famcg_new(hs, &dflt, &fc), 0);
        if (strcmp(own, "/") == 0) {
                CU_ASSERT_PTR_NULL(pd_famcg_base(fc));
                CU_ASSERT_PTR_NOT_NULL(strstr(pd_famcg_off_reason(fc), "root cgroup"));
        } else {
                printf("\n  (procd's own cgroup here is %s: default base not exercised)\n", own);
        }
        pd_famcg_free(fc);

        /* a base of our own: create for a sleeper, refused for a root placed elsewhere */
        char base[256];
        pd_famcg_options o = { .base = ts_cgroup_path(base, sizeof base, "unit") };
        CU_ASSERT_EQUAL_FATAL(pd_famcg_new(hs, &o, &fc), 0);
        CU_ASSERT_STRING_EQUAL(pd_famcg_base(fc), base);
        pid_t s = ts_sleeper();
        uint64_t start = 0;
        tr_pid_start_ticks(s, &start);
        CU_ASSERT_EQUAL(pd_famcg_create(fc, &(pd_famcg_root){ s, start + 1, 0, 0 }, NULL, NULL, &path, &fcg, &err), -ESRCH); /* not that process */
        CU_ASSERT_EQUAL_FATAL(pd_famcg_create(fc, &(pd_famcg_root){ s, start, 0, 0 }, NULL, NULL, &path, &fcg, &err), 0);
        char want[512], leaf[600], got[512];
        CU_ASSERT_STRING_EQUAL(path, fam_path(base, s, want, sizeof want));
        CU_ASSERT_STRING_EQUAL(cg_of(s, got, sizeof got), own_path(path, leaf, sizeof leaf));
        check_hierarchies(fc, fcg, path, s);
        /* another process in it (as one adopted into the family would be) */
        pid_t s2 = ts_sleeper();
        CU_ASSERT_EQUAL(pd_famcg_attach(fcg, s2, &err), 0);
        tr_cgroup_free(fcg);
        fcg = NULL;
        /* its cgroup holds a process: removal waits until it is empty (the 2 s sweep) */
        pd_famcg_release(fc, path, true);
        CU_ASSERT_EQUAL(pd_famcg_pending(fc), 1);
        CU_ASSERT(cg_exists(path));
        /* the same root registered again meanwhile (given s2 as its parent: no placement,
         * both sit in the old cgroup): a cgroup of a new name, the old one holds what folded
         * into the parent family, never the new family's */
        char *again = NULL;
        CU_ASSERT_EQUAL(pd_famcg_create(fc, &(pd_famcg_root){ s, start, s2, 0 }, NULL, NULL, &again, &fcg, &err), 0);
        CU_ASSERT(again && strcmp(again, path) != 0 && strncmp(again, path, strlen(path)) == 0);
        CU_ASSERT_STRING_EQUAL(cg_of(s, got, sizeof got), own_path(again ? again : "", leaf, sizeof leaf));
        tr_cgroup_free(fcg);
        fcg = NULL;
        pd_famcg_release(fc, again, true);
        free(again);
        CU_ASSERT_EQUAL(pd_famcg_pending(fc), 2);
        ts_kill_reap(s);
        ts_kill_reap(s2);
        for (int i = 0; i < 3000 && pd_famcg_pending(fc); i++) { /* a 60 s bound */
                g_main_context_iteration(NULL, FALSE);
                usleep(20000);
        }
        CU_ASSERT_EQUAL(pd_famcg_pending(fc), 0);
        CU_ASSERT_FALSE(cg_exists(path));
        free(path);
        path = NULL;

        /* a root placed in a cgroup its parent is not in is left there */
        char elsewhere[256];
        tr_cgroup *cg = NULL;
        pid_t p = ph_sleeper_in_cgroup("placed", elsewhere, sizeof elsewhere, &cg);
        CU_ASSERT_FATAL(p > 1);
        tr_pid_start_ticks(p, &start);
        CU_ASSERT_EQUAL(pd_famcg_create(fc, &(pd_famcg_root){ p, start, 0, 0 }, NULL, NULL, &path, &fcg, &err), -EBUSY);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "left there"));
        CU_ASSERT_STRING_EQUAL(cg_of(p, got, sizeof got), elsewhere);
        CU_ASSERT_FALSE(cg_exists(fam_path(base, p, want, sizeof want)));
        ts_kill_reap(p);
        tr_cgroup_destroy(cg, 2000000, NULL);
        tr_cgroup_free(cg);
        pd_famcg_free(fc);
}

/* ---- through procd ------------------------------------------------------------------- */

/* REGISTER moves the root alone; a child forked afterwards is in the family's cgroup, one
 * forked before stays in the parent family; usage is the cgroup's; unregister of an empty
 * family removes its cgroup at once. */
static void test_register_moves_root_only(void)
{
        NEED("family cgroups");
        forker fk;
        pid_t kids[2];
        CU_ASSERT_FATAL(register_between_kids(C, &fk, kids));
        char fam[512], leaf[600], got[512], mine[512];
        fam_path(NULL, fk.pid, fam, sizeof fam);
        own_path(fam, leaf, sizeof leaf);
        CU_ASSERT_STRING_EQUAL(cg_of(fk.pid, got, sizeof got), leaf);
        CU_ASSERT_STRING_EQUAL(cg_of(kids[1], got, sizeof got), leaf);
        CU_ASSERT_STRING_EQUAL(cg_of(kids[0], got, sizeof got), cg_of(getpid(), mine, sizeof mine));
        procd_family_info fi;
        CU_ASSERT_FATAL(ph_dump_one(C, fk.pid, &fi));
        char want[600];
        snprintf(want, sizeof want, "cgroup:%s", fam);
        CU_ASSERT_STRING_EQUAL(fi.tracking, want);
        CU_ASSERT_STRING_EQUAL(fi.source, "cgroup");
        CU_ASSERT(ph_has_member(C, fk.pid, fk.pid));
        CU_ASSERT(ph_has_member(C, fk.pid, kids[1]));
        CU_ASSERT_FALSE(ph_has_member(C, fk.pid, kids[0]));
        EXPECT(procd_snapshot(C, &e_), PROCD_OK);
        CU_ASSERT(ph_has_member(C, getpid(), kids[0])); /* the earlier child stayed in the parent family */
        CU_ASSERT_FALSE(ph_has_member(C, getpid(), kids[1]));
        procd_usage u;
        EXPECT(procd_get_usage(C, fk.pid, &u, &e_), PROCD_OK);
        CU_ASSERT(u.sources & (PROCD_SRC_CGROUP_V2 | PROCD_SRC_CGROUP_V1));
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 2);
        CU_ASSERT_FALSE(u.fallback && strstr(u.fallback_reason, "no family cgroup"));
        /* kill: the family's two processes, not the earlier child */
        EXPECT(procd_kill_family(C, fk.pid, &e_), PROCD_OK);
        CU_ASSERT_FALSE(ts_alive(fk.pid));
        CU_ASSERT_FALSE(ts_alive(kids[1]));
        CU_ASSERT(ts_alive(kids[0]));
        EXPECT(procd_unregister_family(C, fk.pid, &e_), PROCD_OK);
        CU_ASSERT_FALSE(cg_exists(fam)); /* empty: removed with the family */
        forker_stop(&fk, kids, 2);
}

/* Unregister folds the members into the parent; the cgroup goes once they are gone. */
static void test_unregister_folds(void)
{
        NEED("family cgroups");
        pid_t s = ts_sleeper();
        EXPECT(procd_register_subfamily(C, s, 0, 60, &e_), PROCD_OK);
        char fam[512];
        fam_path(NULL, s, fam, sizeof fam);
        CU_ASSERT(cg_exists(fam));
        EXPECT(procd_unregister_family(C, s, &e_), PROCD_OK);
        CU_ASSERT(cg_exists(fam)); /* s still lives in it */
        EXPECT(procd_snapshot(C, &e_), PROCD_OK);
        CU_ASSERT(ph_has_member(C, getpid(), s)); /* folded into the root family */
        ts_kill_reap(s);
        CU_ASSERT(cg_gone_within(fam, 60000)); /* the sweep finds it empty */
}

/* A watcher's exit unregisters its family; the family's cgroup goes once empty. */
static void test_watcher_death(void)
{
        NEED("family cgroups");
        pid_t s = ts_sleeper(), w = ts_sleeper();
        EXPECT(procd_register_subfamily(C, s, w, 60, &e_), PROCD_OK);
        char fam[512];
        fam_path(NULL, s, fam, sizeof fam);
        CU_ASSERT(cg_exists(fam));
        ts_kill_reap(w);
        bool gone = false;
        for (int i = 0; i < 6000 && !gone; i++) { /* a bound (60 s), not a timing */
                gone = !registered(C, s);
                if (!gone)
                        usleep(10000);
        }
        CU_ASSERT(gone);
        ts_kill_reap(s);
        CU_ASSERT(cg_gone_within(fam, 60000));
}

/* TrackFamilyViaCgroup moves every member (a cgroup it makes); the old family cgroup goes;
 * refusals: another family's cgroup, watcher 1, procd's pid. */
static void test_track_moves_all(void)
{
        NEED("family cgroups");
        forker fk;
        CU_ASSERT_FATAL(forker_start(&fk));
        EXPECT(procd_register_subfamily(C, fk.pid, 0, 60, &e_), PROCD_OK);
        pid_t kids[2] = { forker_fork(&fk), forker_fork(&fk) };
        char fam[512], trk[256], got[512];
        fam_path(NULL, fk.pid, fam, sizeof fam);
        ts_cgroup_path(trk, sizeof trk, "trk");
        CU_ASSERT_FALSE(cg_exists(trk));
        EXPECT(procd_track_via_cgroup(C, fk.pid, trk, &e_), PROCD_OK);
        CU_ASSERT_STRING_EQUAL(cg_of(fk.pid, got, sizeof got), trk);
        CU_ASSERT_STRING_EQUAL(cg_of(kids[0], got, sizeof got), trk);
        CU_ASSERT_STRING_EQUAL(cg_of(kids[1], got, sizeof got), trk);
        CU_ASSERT(cg_gone_within(fam, 60000)); /* the family cgroup procd made is empty now */
        procd_usage u;
        EXPECT(procd_get_usage(C, fk.pid, &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 3);

        /* refusals */
        pid_t other = ts_sleeper();
        EXPECT(procd_register_subfamily(C, other, 0, 60, &e_), PROCD_OK);
        char ofam[512];
        fam_path(NULL, other, ofam, sizeof ofam);
        EXPECT(procd_track_via_cgroup(C, other, trk, &e_), PROCD_E_BAD_CGROUP);
        EXPECT(procd_track_via_cgroup(C, fk.pid, ofam, &e_), PROCD_E_BAD_CGROUP);
        char oleaf[600];
        snprintf(oleaf, sizeof oleaf, "%s/%s", ofam, PD_FAMCG_LEAF);
        EXPECT(procd_track_via_cgroup(C, fk.pid, oleaf, &e_), PROCD_E_BAD_CGROUP);
        char bad[300];
        snprintf(bad, sizeof bad, "%s/cgroup.procs/x", ts_cgroup_base()); /* cannot be made */
        EXPECT(procd_track_via_cgroup(C, other, bad, &e_), PROCD_E_BAD_CGROUP);
        pid_t s2 = ts_sleeper();
        EXPECT(procd_register_subfamily(C, s2, 1, 60, &e_), PROCD_E_BAD_WATCHER_PID);
        EXPECT(procd_register_subfamily(C, s2, D.pid, 60, &e_), PROCD_E_BAD_WATCHER_PID);
        CU_ASSERT_FALSE(registered(C, s2));

        EXPECT(procd_kill_family(C, fk.pid, &e_), PROCD_OK);
        CU_ASSERT_FALSE(ts_alive(fk.pid) || ts_alive(kids[0]) || ts_alive(kids[1]));
        EXPECT(procd_unregister_family(C, fk.pid, &e_), PROCD_OK);
        CU_ASSERT(cg_gone_within(trk, 60000)); /* procd made it: removed once empty */
        EXPECT(procd_kill_family(C, other, &e_), PROCD_OK);
        EXPECT(procd_unregister_family(C, other, &e_), PROCD_OK);
        CU_ASSERT(cg_gone_within(ofam, 60000));
        ts_kill_reap(other);
        ts_kill_reap(s2);
        forker_stop(&fk, kids, 2);
}

/* A subfamily's cgroup is inside its parent's; the parent's usage and kill include it; the
 * parent's own processes sit in its leaf (v2: no processes in an inner cgroup). */
static void test_nested(void)
{
        NEED("family cgroups");
        forker fk;
        CU_ASSERT_FATAL(forker_start(&fk));
        EXPECT(procd_register_subfamily(C, fk.pid, 0, 60, &e_), PROCD_OK);
        pid_t kids[1] = { forker_fork(&fk) };
        CU_ASSERT_FATAL(kids[0] > 1);
        EXPECT(procd_register_subfamily(C, kids[0], 0, 60, &e_), PROCD_OK);
        char pfam[512], cfam[512], leaf[600], got[512];
        fam_path(NULL, fk.pid, pfam, sizeof pfam);
        fam_path(pfam, kids[0], cfam, sizeof cfam);
        own_path(cfam, leaf, sizeof leaf);
        CU_ASSERT_STRING_EQUAL(cg_of(kids[0], got, sizeof got), leaf);
        procd_family_info fi;
        CU_ASSERT_FATAL(ph_dump_one(C, kids[0], &fi));
        CU_ASSERT_EQUAL(fi.parent_root_pid, fk.pid);
        const tr_hierarchies *hs = ts_hierarchies();
        if (hs->v2 >= 0) {
                char fs[1024], procs[256] = "x";
                tr_hierarchy_fs_path(&hs->h[hs->v2], pfam, fs, sizeof fs, NULL);
                strcat(fs, "/cgroup.procs");
                CU_ASSERT(tr_read_file_at(AT_FDCWD, fs, procs, sizeof procs, NULL) == 0);
        }
        procd_usage u;
        EXPECT(procd_get_usage(C, fk.pid, &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 2); /* its root and the subfamily's */
        EXPECT(procd_get_usage(C, kids[0], &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 1);
        EXPECT(procd_kill_family(C, fk.pid, &e_), PROCD_OK);
        CU_ASSERT_FALSE(ts_alive(fk.pid) || ts_alive(kids[0]));
        EXPECT(procd_unregister_family(C, fk.pid, &e_), PROCD_OK); /* the subfamily folds up */
        CU_ASSERT(cg_exists(cfam) || !cg_exists(pfam));
        EXPECT(procd_unregister_family(C, kids[0], &e_), PROCD_OK);
        CU_ASSERT(cg_gone_within(pfam, 60000)); /* both gone once the inner one went */
        forker_stop(&fk, kids, 1);
}

/* KillFamily never answers OK while a member procd knew of lives: here the root was moved
 * out of the family's cgroup behind procd's back, so cgroup.kill alone would miss it. */
static void test_kill_known_member(void)
{
        NEED("family cgroups");
        pid_t s = ts_sleeper();
        EXPECT(procd_register_subfamily(C, s, 0, 60, &e_), PROCD_OK);
        char away[256];
        tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        CU_ASSERT_FATAL(tr_cgroup_create(ts_hierarchies(), ts_cgroup_path(away, sizeof away, "away"), &cg, &err) >= 0);
        CU_ASSERT_FATAL(tr_cgroup_attach(cg, s, &err) >= 0);
        EXPECT(procd_kill_family(C, s, &e_), PROCD_OK);
        CU_ASSERT_FALSE(ts_alive(s));
        EXPECT(procd_unregister_family(C, s, &e_), PROCD_OK);
        ts_kill_reap(s);
        tr_cgroup_destroy(cg, 2000000, NULL);
        tr_cgroup_free(cg);
}

/* condor_procd's rule, one scenario for both kinds of family: a child the root forked
 * before REGISTER stays in the parent family (here the daemon's root family: this test
 * process), one forked after is the new family's; KILL takes the family's, not the earlier
 * child; UNREGISTER folds the family into the parent.  source: "cgroup" or "proc". */
static void check_register_rule(procd_client *c, const char *source)
{
        forker fk;
        pid_t kids[2];
        CU_ASSERT_FATAL(register_between_kids(c, &fk, kids));
        procd_family_info fi;
        CU_ASSERT_FATAL(ph_dump_one(c, fk.pid, &fi));
        CU_ASSERT_STRING_EQUAL(fi.source, source);
        EXPECT(procd_snapshot(c, &e_), PROCD_OK);
        CU_ASSERT(ph_has_member(c, fk.pid, fk.pid));
        CU_ASSERT(ph_has_member(c, fk.pid, kids[1]));
        CU_ASSERT_FALSE(ph_has_member(c, fk.pid, kids[0]));
        CU_ASSERT(ph_has_member(c, getpid(), kids[0]));
        CU_ASSERT_FALSE(ph_has_member(c, getpid(), kids[1]));
        procd_usage u;
        EXPECT(procd_get_usage(c, fk.pid, &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 2);
        /* a subfamily's parent is the family that holds its root (condor_procd's
         * register_subfamily): the kept child's is the parent family, the later child's
         * the new family */
        EXPECT(procd_register_subfamily(c, kids[0], 0, 1, &e_), PROCD_OK);
        EXPECT(procd_register_subfamily(c, kids[1], 0, 1, &e_), PROCD_OK);
        CU_ASSERT_FATAL(ph_dump_one(c, kids[0], &fi));
        CU_ASSERT_EQUAL(fi.parent_root_pid, getpid());
        CU_ASSERT_FATAL(ph_dump_one(c, kids[1], &fi));
        CU_ASSERT_EQUAL(fi.parent_root_pid, fk.pid);
        EXPECT(procd_unregister_family(c, kids[0], &e_), PROCD_OK);
        EXPECT(procd_unregister_family(c, kids[1], &e_), PROCD_OK);
        /* unregister folds the family's processes into the parent; register again takes
         * the root alone once more (both children existed before) */
        EXPECT(procd_unregister_family(c, fk.pid, &e_), PROCD_OK);
        EXPECT(procd_snapshot(c, &e_), PROCD_OK);
        CU_ASSERT(ph_has_member(c, getpid(), fk.pid));
        CU_ASSERT(ph_has_member(c, getpid(), kids[1]));
        EXPECT(procd_register_subfamily(c, fk.pid, 0, 1, &e_), PROCD_OK);
        EXPECT(procd_snapshot(c, &e_), PROCD_OK);
        CU_ASSERT(ph_has_member(c, fk.pid, fk.pid));
        CU_ASSERT_FALSE(ph_has_member(c, fk.pid, kids[0]) || ph_has_member(c, fk.pid, kids[1]));
        EXPECT(procd_unregister_family(c, fk.pid, &e_), PROCD_OK);
        EXPECT(procd_register_subfamily(c, fk.pid, 0, 1, &e_), PROCD_OK);
        pid_t kid2 = forker_fork(&fk);
        CU_ASSERT_FATAL(kid2 > 1);
        EXPECT(procd_kill_family(c, fk.pid, &e_), PROCD_OK); /* the root and what it forked since */
        CU_ASSERT_FALSE(ts_alive(fk.pid) || ts_alive(kid2));
        CU_ASSERT(ts_alive(kids[0]) && ts_alive(kids[1]));
        EXPECT(procd_unregister_family(c, fk.pid, &e_), PROCD_OK);
        pid_t all[3] = { kids[0], kids[1], kid2 };
        forker_stop(&fk, all, 3);
}

static void test_rule_cgroup_family(void)
{
        NEED("family cgroups");
        check_register_rule(C, "cgroup");
}

/* The same rule for a family left on /proc (--no-family-cgroups). */
static void test_rule_proc_family(void)
{
        NEED("family cgroups");
        ph_daemon d2;
        const char *extra[] = { "--no-family-cgroups", "--snapshot-interval", "1", NULL };
        CU_ASSERT_FATAL(ph_start(&d2, extra, NULL, 10000) == 0);
        procd_client *c2 = ph_connect(&d2);
        CU_ASSERT_FATAL(c2 != NULL);
        check_register_rule(c2, "proc");
        procd_disconnect(c2);
        int st = ph_stop(&d2, 10000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* --no-family-cgroups: the family stays on /proc (and takes nothing along on its own), usage
 * says why; TrackFamilyViaCgroup then moves the root and the children it forked. */
static void test_off_switch(void)
{
        NEED("family cgroups");
        ph_daemon d2;
        const char *extra[] = { "--no-family-cgroups", "--family-cgroup-base", BASE, NULL };
        CU_ASSERT_FATAL(ph_start(&d2, extra, NULL, 10000) == 0);
        procd_client *c2 = ph_connect(&d2);
        CU_ASSERT_FATAL(c2 != NULL);
        forker fk;
        CU_ASSERT_FATAL(forker_start(&fk));
        EXPECT(procd_register_subfamily(c2, fk.pid, 0, 1, &e_), PROCD_OK);
        pid_t kids[2] = { forker_fork(&fk), forker_fork(&fk) };
        char got[512], mine[512], fam[512];
        CU_ASSERT_STRING_EQUAL(cg_of(fk.pid, got, sizeof got), cg_of(getpid(), mine, sizeof mine));
        CU_ASSERT_FALSE(cg_exists(fam_path(NULL, fk.pid, fam, sizeof fam)));
        procd_family_info fi;
        CU_ASSERT_FATAL(ph_dump_one(c2, fk.pid, &fi));
        CU_ASSERT_STRING_EQUAL(fi.source, "proc");
        procd_usage u;
        EXPECT(procd_get_usage(c2, fk.pid, &u, &e_), PROCD_OK);
        CU_ASSERT(u.fallback);
        CU_ASSERT_PTR_NOT_NULL(strstr(u.fallback_reason, "off"));
        /* the classic bug: root tracked by a cgroup alone, forked children outside */
        char trk[256];
        ts_cgroup_path(trk, sizeof trk, "trk-off");
        EXPECT(procd_track_via_cgroup(c2, fk.pid, trk, &e_), PROCD_OK);
        CU_ASSERT_STRING_EQUAL(cg_of(kids[0], got, sizeof got), trk);
        CU_ASSERT_STRING_EQUAL(cg_of(kids[1], got, sizeof got), trk);
        EXPECT(procd_get_usage(c2, fk.pid, &u, &e_), PROCD_OK);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 3);
        CU_ASSERT_FALSE(u.fallback && strstr(u.fallback_reason, "no family cgroup"));
        EXPECT(procd_kill_family(c2, fk.pid, &e_), PROCD_OK);
        CU_ASSERT_FALSE(ts_alive(fk.pid) || ts_alive(kids[0]) || ts_alive(kids[1]));
        EXPECT(procd_unregister_family(c2, fk.pid, &e_), PROCD_OK);
        CU_ASSERT(cg_gone_within(trk, 60000));
        procd_disconnect(c2);
        int st = ph_stop(&d2, 10000);
        CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        forker_stop(&fk, kids, 2);
}

/* A base procd cannot write in (procd without CAP_DAC_OVERRIDE, the base 0555): families
 * fall back to /proc and their usage says why. */
static void test_base_not_writable(void)
{
        NEED("family cgroups");
        if (access("/usr/bin/setpriv", X_OK) != 0) {
                CU_FAIL("setpriv (util-linux) is missing: cannot drop CAP_DAC_OVERRIDE for this case");
                return;
        }
        char ro[256];
        tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        CU_ASSERT_FATAL(tr_cgroup_create(ts_hierarchies(), ts_cgroup_path(ro, sizeof ro, "ro"), &cg, &err) >= 0);
        const tr_hierarchies *hs = ts_hierarchies();
        for (int i = 0; i < hs->n; i++) {
                char fs[1024];
                if (tr_hierarchy_fs_path(&hs->h[i], ro, fs, sizeof fs, NULL) == 0)
                        chmod(fs, 0555);
        }
        ph_daemon d3;
        const char *wrap[] = { "/usr/bin/setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner", NULL };
        const char *extra[] = { "--family-cgroup-base", ro, NULL };
        CU_ASSERT_FATAL(ph_start(&d3, extra, wrap, 10000) == 0);
        procd_client *c3 = ph_connect(&d3);
        CU_ASSERT_FATAL(c3 != NULL);
        pid_t s = ts_sleeper();
        EXPECT(procd_register_subfamily(c3, s, 0, 1, &e_), PROCD_OK);
        char got[512], mine[512];
        CU_ASSERT_STRING_EQUAL(cg_of(s, got, sizeof got), cg_of(getpid(), mine, sizeof mine));
        procd_usage u;
        EXPECT(procd_get_usage(c3, s, &u, &e_), PROCD_OK);
        CU_ASSERT(u.fallback);
        CU_ASSERT_PTR_NOT_NULL(strstr(u.fallback_reason, "no family cgroup"));
        CU_ASSERT_PTR_NOT_NULL(strstr(u.fallback_reason, "Permission denied"));
        printf("\n  usage reason: %s\n", u.fallback_reason);
        CU_ASSERT(u.num_procs.available && u.num_procs.value == 1);
        EXPECT(procd_kill_family(c3, s, &e_), PROCD_OK);
        EXPECT(procd_unregister_family(c3, s, &e_), PROCD_OK);
        procd_disconnect(c3);
        ph_stop(&d3, 10000);
        ts_kill_reap(s);
        for (int i = 0; i < hs->n; i++) {
                char fs[1024];
                if (tr_hierarchy_fs_path(&hs->h[i], ro, fs, sizeof fs, NULL) == 0)
                        chmod(fs, 0755);
        }
        tr_cgroup_destroy(cg, 2000000, NULL);
        tr_cgroup_free(cg);
}

/* Exit status of procd started with name=value in its environment (-1: did not exit). */
static int bad_env_exit(const char *name, const char *value)
{
        char exe[512];
        snprintf(exe, sizeof exe, "%s/procd/procd", ts_build_dir());
        fflush(NULL);
        pid_t p = fork();
        if (p == 0) {
                setenv(name, value, 1);
                int nul = open("/dev/null", O_WRONLY);
                if (nul >= 0)
                        dup2(nul, 2);
                execl(exe, "procd", "--foreground", "--socket", "/nonexistent-procd-dir/s", (char *) NULL);
                _exit(127);
        }
        int st = p > 0 ? ts_wait(p, 10000) : -1;
        if (st == -ETIMEDOUT)
                ts_kill_reap(p);
        return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The cost of RegisterSubfamily with the cgroup made and the root moved, against a
 * --no-family-cgroups daemon (printed for NOTES; never asserted). */
static void test_register_cost(void)
{
        NEED("family cgroups");
        enum { N = 100 };
        pid_t s[N];
        for (int i = 0; i < N; i++)
                s[i] = ts_sleeper();
        uint64_t t0 = tr_now_usec();
        for (int i = 0; i < N; i++)
                EXPECT(procd_register_subfamily(C, s[i], 0, 60, &e_), PROCD_OK);
        uint64_t with = tr_now_usec() - t0;
        for (int i = 0; i < N; i++)
                EXPECT(procd_unregister_family(C, s[i], &e_), PROCD_OK);
        /* the switch from the environment this time (what a site sets for condor_master) */
        ph_daemon d2;
        CU_ASSERT_EQUAL(bad_env_exit("PROCD_FAMILY_CGROUPS", "maybe"), 2); /* a bad value stops procd */
        CU_ASSERT_EQUAL(bad_env_exit("PROCD_FAMILY_CGROUP_BASE", "relative"), 2);
        setenv("PROCD_FAMILY_CGROUPS", "off", 1);
        int started = ph_start(&d2, NULL, NULL, 10000);
        unsetenv("PROCD_FAMILY_CGROUPS");
        CU_ASSERT_FATAL(started == 0);
        procd_client *c2 = ph_connect(&d2);
        t0 = tr_now_usec();
        for (int i = 0; i < N; i++)
                EXPECT(procd_register_subfamily(c2, s[i], 0, 60, &e_), PROCD_OK);
        uint64_t without = tr_now_usec() - t0;
        procd_family_info fi;
        CU_ASSERT(ph_dump_one(c2, s[0], &fi) && strcmp(fi.source, "proc") == 0);
        printf("\n  RegisterSubfamily, mean of %d over D-Bus: %.0f us with the family cgroup "
               "(mkdir in the family hierarchies + move), %.0f us without\n",
               N, (double) with / N, (double) without / N);
        procd_disconnect(c2);
        ph_stop(&d2, 10000);
        for (int i = 0; i < N; i++)
                ts_kill_reap(s[i]);
}

/* A process that allocated and touched 64 MiB before it was registered: REGISTER moves it
 * into the family's cgroup, but its charge stays behind (v2 never moves it, v1 only with
 * move_charge_at_immigrate): rss and image come from its own /proc figures, and usage says
 * so (issue 19).  Once it execs (as HTCondor's job does after its REGISTER), its old pages
 * are gone and the cgroup's counters are the family's again: usage comes from the cgroup
 * (issue 20). */
static int precharged_main(void *arg)
{
        const int *fds = arg; /* [0]: "go" read end (exec), [1]: "ready" write end */
        int fd = fds[1];
        size_t n = 64u << 20;
        char *p = malloc(n);
        if (!p)
                return 2;
        for (size_t i = 0; i < n; i += 4096)
                p[i] = 1;
        if (write(fd, "r", 1) != 1)
                return 3;
        char c;
        if (read(fds[0], &c, 1) != 1)
                return 4;
        execl("/bin/sleep", "sleep", "1000", (char *) NULL);
        return 5;
}

/* /proc/PID/comm with its newline, "" when gone. */
static void read_comm(pid_t pid, char *buf, size_t size)
{
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/comm", (int) pid);
        buf[0] = '\0';
        FILE *f = fopen(path, "re");
        if (f) {
                if (!fgets(buf, (int) size, f))
                        buf[0] = '\0';
                fclose(f);
        }
}

static void test_precharged_usage(void)
{
        NEED("family cgroups");
        int ready[2], go[2];
        CU_ASSERT_EQUAL_FATAL(pipe2(ready, O_CLOEXEC), 0);
        CU_ASSERT_EQUAL_FATAL(pipe2(go, O_CLOEXEC), 0);
        int child_fds[2] = { go[0], ready[1] };
        pid_t p = ts_fork(precharged_main, child_fds);
        close(ready[1]);
        close(go[0]);
        CU_ASSERT_FATAL(p > 1);
        char c;
        CU_ASSERT_EQUAL_FATAL(read(ready[0], &c, 1), 1);
        close(ready[0]);
        EXPECT(procd_register_subfamily(C, p, 0, 1, &e_), PROCD_OK);
        procd_family_info fi;
        CU_ASSERT_FATAL(ph_dump_one(C, p, &fi));
        CU_ASSERT_STRING_EQUAL(fi.source, "cgroup");
        procd_usage u;
        EXPECT(procd_get_usage(C, p, &u, &e_), PROCD_OK);
        char src[64];
        printf("\n  rss %llu kB, image %llu kB, cgroup memory %llu kB; source %s; %s\n",
               (unsigned long long) u.rss_bytes.value / 1024, (unsigned long long) u.image_size_bytes.value / 1024,
               (unsigned long long) u.memory_current_bytes.value / 1024, procd_usage_source_name(&u, src, sizeof src),
               u.fallback_reason);
        CU_ASSERT(u.rss_bytes.available && u.rss_bytes.value >= (64u << 20));
        CU_ASSERT(u.image_size_bytes.available && u.image_size_bytes.value >= u.rss_bytes.value);
        CU_ASSERT(u.sources & PROCD_SRC_PROC);
        CU_ASSERT(u.fallback && strstr(u.fallback_reason, "rss and image from /proc"));
        /* the root execs: its pre-move pages go with its old image */
        CU_ASSERT_EQUAL(write(go[1], "e", 1), 1);
        close(go[1]);
        char comm[32] = "";
        for (int i = 0; i < 500 && strncmp(comm, "sleep", 5) != 0; i++) {
                ts_msleep(10);
                read_comm(p, comm, sizeof comm);
        }
        CU_ASSERT_STRING_EQUAL(comm, "sleep\n");
        EXPECT(procd_get_usage(C, p, &u, &e_), PROCD_OK);
        printf("  after exec: rss %llu kB; source %s; fallback %s\n", (unsigned long long) u.rss_bytes.value / 1024,
               procd_usage_source_name(&u, src, sizeof src), u.fallback ? u.fallback_reason : "none");
        CU_ASSERT(u.rss_bytes.available && u.rss_bytes.value < (64u << 20));
        CU_ASSERT_FALSE(u.sources & PROCD_SRC_PROC);
        CU_ASSERT_FALSE(u.fallback);
        EXPECT(procd_unregister_family(C, p, &e_), PROCD_OK);
        ts_kill_reap(p);
}

int main(void)
{
        CU_TestInfo unit[] = {
                { "base rules, create, release, placed root", test_base_rules },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo daemon[] = {
                { "register moves only the root", test_register_moves_root_only },
                { "unregister folds, cgroup removed once empty", test_unregister_folds },
                { "watcher death unregisters and removes", test_watcher_death },
                { "track via cgroup moves every member; refusals", test_track_moves_all },
                { "nested families", test_nested },
                { "kill never OK with a known member alive", test_kill_known_member },
                { "--no-family-cgroups", test_off_switch },
                { "register takes the root alone: cgroup family", test_rule_cgroup_family },
                { "register takes the root alone: /proc family", test_rule_proc_family },
                { "base not writable: /proc with a reason", test_base_not_writable },
                { "pre-charged family: rss and image from /proc", test_precharged_usage },
                { "register cost (printed)", test_register_cost },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "family cgroups in-process", NULL, NULL, NULL, NULL, unit },
                { "family cgroups through procd", suite_init, suite_clean, NULL, NULL, daemon },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
