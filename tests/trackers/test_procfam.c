/* test_procfam.c - /proc families.
 *
 * Unit: membership and accounting on the fake tree (tests/fixtures/proc/tree, tree2) through
 * tr_scan_take_at + tr_procfam_update; the walk over the scan's children index against the
 * whole-scan walk (a scan without the index) on the fixtures and on random hand-built trees.
 * Integration (real processes): fork trees, double fork + setsid, env marker, login uid, gid,
 * seeds, signal, kill spree against a fork loop, freeze/thaw, the measured CPU loss of a
 * member that exits between scans, and the measured update cost of many families over one
 * shared scan (PROCD_BENCH_ROOTS, PROCD_BENCH_FAMILIES scale it).
 *
 * The test process is a child subreaper so that every process a test starts (and every
 * orphan of it) can be reaped by pid; each test kills and reaps only what it started.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/procfam.h"
#include "trackers/pidref.h"
#include "trackers/util.h"

#define HOUR_USEC (3600ull * 1000000ull)

/* ---- unit: the fake tree ------------------------------------------------------------ */

typedef struct fake {
        tr_scan s;
        tr_procfam *f;
} fake;

/* A family on the fake tree: root 100 (start 1000); max_age an hour so that nothing
 * rescans the live /proc behind the test's back. */
static tr_procfam *fake_family(const char *marker, bool by_login, uid_t uid, bool by_gid, gid_t gid)
{
        tr_procfam_spec spec = { .root_pid = 100, .root_start_ticks = 1000, .env_marker = marker,
                                 .by_login = by_login, .login_uid = uid, .by_gid = by_gid, .gid = gid,
                                 .max_age_usec = HOUR_USEC };
        tr_procfam *f = NULL;
        tr_error err = { 0 };
        if (tr_procfam_new(&spec, &f, &err) < 0) {
                fprintf(stderr, "tr_procfam_new: %s\n", err.msg);
                exit(2);
        }
        return f;
}

static void fake_update(tr_procfam *f, tr_scan *s, const char *tree, const tr_pidset *exclude)
{
        _cleanup_close_ int dfd = ts_open_fixture_dir(tree);
        const char *m = tr_procfam_env_marker(f);
        const char *const markers[] = { "OTHER=1", m };
        tr_scan_opts o = { tr_procfam_scan_wants(f), markers, m ? 2 : 1 };
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_scan_take_at(dfd, s, &o, &err), 0);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_update(f, s, m ? 1 : -1, exclude), 0);
}

static bool same_set(const tr_pidset *got, const pid_t *want, size_t n)
{
        if (got->n != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!tr_pidset_contains(got, want[i]))
                        return false;
        return true;
}

static void print_set(const char *what, const tr_pidset *s)
{
        printf("\n  %s:", what);
        for (size_t i = 0; i < s->n; i++)
                printf(" %d", (int) s->pids[i]);
}

static void test_fake_tree_members(void)
{
        tr_scan s = { 0 };
        tr_procfam *f = fake_family(NULL, false, 0, false, 0);
        CU_ASSERT_EQUAL(tr_procfam_scan_wants(f), TR_SCAN_IO);
        fake_update(f, &s, "proc/tree", NULL);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, &err), 0);
        /* 103 is a zombie member (not listed), 50 is the reused-pid stranger */
        static const pid_t want[] = { 100, 101, 102 };
        CU_ASSERT_TRUE(same_set(&m, want, TR_ARRAY_SIZE(want)));
        if (!same_set(&m, want, TR_ARRAY_SIZE(want)))
                print_set("members", &m);

        tr_usage u;
        tr_usage_init(&u);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_usage(f, &u, &err), 0);
        long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
        CU_ASSERT_TRUE(u.num_procs.available);
        CU_ASSERT_EQUAL(u.num_procs.value, 3);
        CU_ASSERT_EQUAL(u.num_procs.source, TR_SRC_PROC);
        /* user 10+20+30+7 (zombie), system 5+10+0+3 */
        CU_ASSERT_EQUAL(u.cpu_user_usec.value, 67ull * 1000000ull / (uint64_t) hz);
        CU_ASSERT_EQUAL(u.cpu_system_usec.value, 18ull * 1000000ull / (uint64_t) hz);
        CU_ASSERT_EQUAL(u.cpu_usec.value, 85ull * 1000000ull / (uint64_t) hz);
        CU_ASSERT_EQUAL(u.rss_bytes.value, 3ull * 100ull * (uint64_t) page);
        CU_ASSERT_EQUAL(u.image_size_bytes.value, 3ull * 4096000ull);
        CU_ASSERT_TRUE(u.io_read_bytes.available);
        /* io: the three live members and the zombie's final counters */
        CU_ASSERT_EQUAL(u.io_read_bytes.value, 4ull * 4096ull);
        CU_ASSERT_EQUAL(u.io_write_bytes.value, 4ull * 8192ull);
        CU_ASSERT_FALSE(u.memory_peak_bytes.available); /* not claimed from /proc */
        CU_ASSERT_FALSE(u.memory_current_bytes.available);
        CU_ASSERT_EQUAL(u.sources, TR_SRC_PROC);
        CU_ASSERT_EQUAL(tr_procfam_exited_cpu_usec(f), 0);

        tr_procfam_free(f);
        tr_scan_free(&s);
}

static void test_fake_tree_sticky_and_exited(void)
{
        tr_scan s = { 0 };
        tr_procfam *f = fake_family(NULL, false, 0, false, 0);
        fake_update(f, &s, "proc/tree", NULL);
        fake_update(f, &s, "proc/tree2", NULL);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, &err), 0);
        /* 102 was reparented to 1 but was seen in the tree: still a member, and so is its
         * new child 104; pid 101 now names a stranger born later: not a member */
        static const pid_t want[] = { 100, 102, 104 };
        CU_ASSERT_TRUE(same_set(&m, want, TR_ARRAY_SIZE(want)));
        if (!same_set(&m, want, TR_ARRAY_SIZE(want)))
                print_set("members", &m);
        long hz = sysconf(_SC_CLK_TCK);
        /* exited: 101 (20+10) and 103 (7+3) from their last seen values */
        CU_ASSERT_EQUAL(tr_procfam_exited_cpu_usec(f), 40ull * 1000000ull / (uint64_t) hz);
        tr_usage u;
        tr_usage_init(&u);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_usage(f, &u, &err), 0);
        /* live: 100 (12+6), 102 (40+0), 104 (1+1); 101 and 103 were reaped by 100, whose
         * cutime/cstime grew by 57/13: their whole CPU, including the 30 user ticks 101
         * used after its last scan (classic accounting would have 100 ticks: 18+40+2+40) */
        CU_ASSERT_EQUAL(u.cpu_usec.value, 130ull * 1000000ull / (uint64_t) hz);
        CU_ASSERT_EQUAL(u.cpu_user_usec.value, (12ull + 40 + 1 + 57) * 1000000ull / (uint64_t) hz);
        CU_ASSERT_EQUAL(u.cpu_system_usec.value, (6ull + 0 + 1 + 13) * 1000000ull / (uint64_t) hz);
        CU_ASSERT_EQUAL(u.num_procs.value, 3);
        /* io: 100's io holds what it reaped (3x4096), plus 102 and 104; the exited
         * members' last seen io is not added again */
        CU_ASSERT_EQUAL(u.io_read_bytes.value, 5ull * 4096ull);
        CU_ASSERT_EQUAL(u.io_write_bytes.value, 5ull * 8192ull);

        /* the same scan again: nothing more exits, nothing counted twice */
        fake_update(f, &s, "proc/tree2", NULL);
        CU_ASSERT_EQUAL(tr_procfam_exited_cpu_usec(f), 40ull * 1000000ull / (uint64_t) hz);
        CU_ASSERT_EQUAL(tr_procfam_usage(f, &u, &err), 0);
        CU_ASSERT_EQUAL(u.cpu_usec.value, 130ull * 1000000ull / (uint64_t) hz);

        /* reports never go down, even when a later scan would give less */
        _cleanup_pidset_ tr_pidset ex = TR_PIDSET_INIT;
        tr_pidset_add(&ex, 200);
        fake_update(f, &s, "proc/tree2", &ex);
        CU_ASSERT_EQUAL(tr_procfam_usage(f, &u, &err), 0);
        CU_ASSERT_EQUAL(u.cpu_usec.value, 130ull * 1000000ull / (uint64_t) hz);
        tr_procfam_free(f);

        /* with an exclude set in force: the classic sum (a subfamily reaped by a member
         * would otherwise count twice): 18+40+2 live + 40 last seen */
        f = fake_family(NULL, false, 0, false, 0);
        fake_update(f, &s, "proc/tree", &ex);
        fake_update(f, &s, "proc/tree2", &ex);
        CU_ASSERT_EQUAL(tr_procfam_usage(f, &u, &err), 0);
        CU_ASSERT_EQUAL(u.cpu_usec.value, 100ull * 1000000ull / (uint64_t) hz);
        tr_procfam_free(f);
        tr_scan_free(&s);
}

static void test_fake_tree_reuse_without_history(void)
{
        /* a family that first scans tree2: 102 (ppid 1) is no member, 101 (a later-born
         * child of 200) neither; 50 claims parent 100 but is older than it */
        tr_scan s = { 0 };
        tr_procfam *f = fake_family(NULL, false, 0, false, 0);
        fake_update(f, &s, "proc/tree2", NULL);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, NULL), 0);
        static const pid_t want[] = { 100 };
        CU_ASSERT_TRUE(same_set(&m, want, 1));
        tr_procfam_free(f);

        /* a root whose start time does not match (the pid was reused): no member at all */
        tr_procfam_spec spec = { .root_pid = 100, .root_start_ticks = 999, .max_age_usec = HOUR_USEC };
        CU_ASSERT_EQUAL_FATAL(tr_procfam_new(&spec, &f, NULL), 0);
        fake_update(f, &s, "proc/tree", NULL);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, NULL), 0);
        CU_ASSERT_EQUAL(m.n, 0);
        tr_procfam_free(f);
        tr_scan_free(&s);
}

static void test_fake_tree_marker_login_gid(void)
{
        tr_scan s = { 0 };
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;

        tr_procfam *f = fake_family("PROCD_MARKER=job42", false, 0, false, 0);
        CU_ASSERT_EQUAL(tr_procfam_scan_wants(f), TR_SCAN_IO | TR_SCAN_ENVIRON);
        CU_ASSERT_STRING_EQUAL(tr_procfam_env_marker(f), "PROCD_MARKER=job42");
        fake_update(f, &s, "proc/tree", NULL);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, NULL), 0);
        static const pid_t w1[] = { 100, 101, 102, 300, 301 }; /* 302: near misses only */
        CU_ASSERT_TRUE(same_set(&m, w1, TR_ARRAY_SIZE(w1)));
        if (!same_set(&m, w1, TR_ARRAY_SIZE(w1)))
                print_set("marker members", &m);
        tr_procfam_free(f);

        f = fake_family(NULL, true, 65534, false, 0);
        CU_ASSERT_EQUAL(tr_procfam_scan_wants(f), TR_SCAN_IO | TR_SCAN_STATUS);
        fake_update(f, &s, "proc/tree", NULL);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, NULL), 0);
        static const pid_t w2[] = { 100, 101, 102, 400 };
        CU_ASSERT_TRUE(same_set(&m, w2, TR_ARRAY_SIZE(w2)));
        tr_procfam_free(f);

        f = fake_family(NULL, false, 0, true, 4242);
        fake_update(f, &s, "proc/tree", NULL);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, NULL), 0);
        static const pid_t w3[] = { 100, 101, 102, 500 };
        CU_ASSERT_TRUE(same_set(&m, w3, TR_ARRAY_SIZE(w3)));
        tr_procfam_free(f);

        /* a marker the scan was not asked for (marker_index -1): no match */
        f = fake_family(NULL, false, 0, false, 0);
        _cleanup_close_ int dfd = ts_open_fixture_dir("proc/tree");
        static const char *const markers[] = { "PROCD_MARKER=job42" };
        tr_scan_opts o = { TR_SCAN_ENVIRON, markers, 1 };
        CU_ASSERT_EQUAL_FATAL(tr_scan_take_at(dfd, &s, &o, NULL), 0);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_update(f, &s, -1, NULL), 0);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, NULL), 0);
        CU_ASSERT_FALSE(tr_pidset_contains(&m, 300));
        tr_procfam_free(f);
        tr_scan_free(&s);
}

static void test_fake_tree_exclude(void)
{
        tr_scan s = { 0 };
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT, ex = TR_PIDSET_INIT;
        tr_procfam *f = fake_family(NULL, false, 0, false, 0);
        tr_pidset_add(&ex, 102);
        tr_pidset_add(&ex, 101);
        tr_pidset_normalize(&ex);
        fake_update(f, &s, "proc/tree", &ex);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, NULL), 0);
        static const pid_t w[] = { 100 };
        CU_ASSERT_TRUE(same_set(&m, w, 1));
        /* the subfamily goes away: 101 and 102 come back by the tree */
        fake_update(f, &s, "proc/tree", NULL);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, NULL), 0);
        static const pid_t w2[] = { 100, 101, 102 };
        CU_ASSERT_TRUE(same_set(&m, w2, 3));
        /* excluded again: they leave without being counted as exited */
        fake_update(f, &s, "proc/tree", &ex);
        CU_ASSERT_EQUAL(tr_procfam_exited_cpu_usec(f), 0);
        tr_procfam_free(f);
        tr_scan_free(&s);
}

/* ---- unit: the children index gives the same members as the whole-scan walk ---------- */

/* The same scan without its children index: tr_procfam_update then takes the whole-scan
 * walk (the algorithm every update used before the index; the brute-force reference).
 * A shallow copy: shares s's memory, never freed. */
static tr_scan unindexed(const tr_scan *s)
{
        tr_scan c = *s;
        c.indexed = false;
        return c;
}

/* a and b agree: live members, usage (which also sums zombie members), exited CPU. */
static bool same_family(tr_procfam *a, tr_procfam *b)
{
        _cleanup_pidset_ tr_pidset ma = TR_PIDSET_INIT, mb = TR_PIDSET_INIT;
        if (tr_procfam_members(a, &ma, NULL) < 0 || tr_procfam_members(b, &mb, NULL) < 0)
                return false;
        bool same = ma.n == mb.n && (ma.n == 0 || memcmp(ma.pids, mb.pids, ma.n * sizeof *ma.pids) == 0);
        tr_usage ua, ub;
        tr_usage_init(&ua);
        tr_usage_init(&ub);
        if (tr_procfam_usage(a, &ua, NULL) < 0 || tr_procfam_usage(b, &ub, NULL) < 0)
                return false;
        same = same && ua.num_procs.value == ub.num_procs.value && ua.cpu_user_usec.value == ub.cpu_user_usec.value &&
               ua.cpu_system_usec.value == ub.cpu_system_usec.value && ua.rss_bytes.value == ub.rss_bytes.value &&
               ua.image_size_bytes.value == ub.image_size_bytes.value &&
               ua.io_read_bytes.available == ub.io_read_bytes.available &&
               ua.io_read_bytes.value == ub.io_read_bytes.value && ua.io_write_bytes.value == ub.io_write_bytes.value &&
               tr_procfam_exited_cpu_usec(a) == tr_procfam_exited_cpu_usec(b);
        if (!same) {
                print_set("index walk", &ma);
                print_set("whole-scan walk", &mb);
        }
        return same;
}

static void set_pids(tr_pidset *set, const pid_t *pids, size_t n)
{
        tr_pidset_clear(set);
        for (size_t i = 0; i < n && pids[i]; i++)
                tr_pidset_add(set, pids[i]);
        tr_pidset_normalize(set);
}

static void test_fake_tree_index_vs_walk(void)
{
        static const char *const markers[] = { "OTHER=1", "PROCD_MARKER=job42" };
        tr_scan_opts o = { TR_SCAN_STATUS | TR_SCAN_ENVIRON | TR_SCAN_IO, markers, 2 };
        static const char *const seqs[][4] = {
                { "proc/tree", "proc/tree2", "proc/tree2", "proc/tree" },
                { "proc/tree2", "proc/tree", "proc/tree", NULL },
                { "proc/tree", "proc/tree", NULL, NULL },
        };
        static const pid_t excludes[][3] = { { 0 }, { 101 }, { 102 }, { 101, 102 }, { 200 }, { 100 }, { 300, 201 } };
        static const pid_t seedsets[][3] = { { 0 }, { 300 }, { 200 }, { 102 }, { 50 }, { 103, 400 }, { 1, 999 } };
        _cleanup_close_ int dfd1 = ts_open_fixture_dir("proc/tree");
        _cleanup_close_ int dfd2 = ts_open_fixture_dir("proc/tree2");
        tr_scan s = { 0 };
        _cleanup_pidset_ tr_pidset ex = TR_PIDSET_INIT, seeds = TR_PIDSET_INIT;
        int runs = 0, bad = 0;
        for (int spec = 0; spec < 5; spec++)
                for (size_t q = 0; q < TR_ARRAY_SIZE(seqs); q++)
                        for (size_t e = 0; e < TR_ARRAY_SIZE(excludes); e++)
                                for (size_t d = 0; d < TR_ARRAY_SIZE(seedsets); d++) {
                                        const char *marker = spec == 1 ? "PROCD_MARKER=job42" : NULL;
                                        tr_procfam *fi = fake_family(marker, spec == 2, spec == 4 ? 1000 : 65534,
                                                                     spec == 3, 4242);
                                        tr_procfam *fw = fake_family(marker, spec == 2, spec == 4 ? 1000 : 65534,
                                                                     spec == 3, 4242);
                                        set_pids(&ex, excludes[e], 3);
                                        for (int k = 0; k < 4 && seqs[q][k]; k++) {
                                                bool two = strcmp(seqs[q][k], "proc/tree2") == 0;
                                                CU_ASSERT_EQUAL_FATAL(tr_scan_take_at(two ? dfd2 : dfd1, &s, &o, NULL), 0);
                                                CU_ASSERT_TRUE_FATAL(tr_scan_has_index(&s));
                                                if (k == 0) { /* seeds pinned in the first scan */
                                                        set_pids(&seeds, seedsets[d], 3);
                                                        CU_ASSERT_EQUAL(tr_procfam_set_seeds_at(fi, &s, &seeds), 0);
                                                        CU_ASSERT_EQUAL(tr_procfam_set_seeds_at(fw, &s, &seeds), 0);
                                                }
                                                tr_scan plain = unindexed(&s);
                                                /* the exclude set only on some steps: members come and go */
                                                const tr_pidset *x = k % 2 ? NULL : &ex;
                                                int mi = marker ? 1 : -1;
                                                CU_ASSERT_EQUAL_FATAL(tr_procfam_update(fi, &s, mi, x), 0);
                                                CU_ASSERT_EQUAL_FATAL(tr_procfam_update(fw, &plain, mi, x), 0);
                                                runs++;
                                                if (!same_family(fi, fw)) {
                                                        bad++;
                                                        printf("\n  differ: spec %d, sequence %zu step %d, exclude %zu, seeds %zu\n",
                                                               spec, q, k, e, d);
                                                }
                                        }
                                        tr_procfam_free(fi);
                                        tr_procfam_free(fw);
                                }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_TRUE(runs > 1000);
        tr_scan_free(&s);
}

static void test_fake_tree_seeds_at(void)
{
        /* seeds pinned from the scan (not the live /proc): a seed and its descendants count,
         * the tree rules apply below it, an excluded seed names nobody */
        _cleanup_close_ int dfd = ts_open_fixture_dir("proc/tree");
        tr_scan s = { 0 };
        tr_scan_opts o = { TR_SCAN_IO, NULL, 0 };
        CU_ASSERT_EQUAL_FATAL(tr_scan_take_at(dfd, &s, &o, NULL), 0);
        _cleanup_pidset_ tr_pidset seeds = TR_PIDSET_INIT, m = TR_PIDSET_INIT, ex = TR_PIDSET_INIT;
        static const pid_t sd[] = { 300, 200, 999 }; /* 999: not in the scan */
        set_pids(&seeds, sd, 3);
        static const pid_t x[] = { 201 };
        set_pids(&ex, x, 1);
        tr_procfam *f = fake_family(NULL, false, 0, false, 0);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_set_seeds_at(f, &s, &seeds), 0);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_update(f, &s, -1, &ex), 0);
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, NULL), 0);
        static const pid_t want[] = { 100, 101, 102, 200, 300, 301 };
        CU_ASSERT_TRUE(same_set(&m, want, TR_ARRAY_SIZE(want)));
        if (!same_set(&m, want, TR_ARRAY_SIZE(want)))
                print_set("members", &m);
        tr_procfam_free(f);
        tr_scan_free(&s);
}

typedef struct rng {
        uint64_t s;
} rng;

static uint32_t rnd(rng *r, uint32_t n)
{
        r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
        return (uint32_t) (r->s >> 33) % n;
}

#define RU 48 /* pids in the random universe */

/* A random proc-like world: pids 1 and 2 + 3k, start times, ppids (reparenting, cycles,
 * self, absent parents, reused pids younger than their children), zombies, spec fields. */
typedef struct world {
        pid_t pid[RU];
        uint64_t start[RU];
        pid_t ppid[RU];
} world;

static pid_t random_ppid(rng *r, const world *w, int k)
{
        switch (rnd(r, 10)) {
        case 0:
                return 0;
        case 1:
                return 1;
        case 2:
                return w->pid[k];
        case 3:
                return 9999;
        default:
                return w->pid[rnd(r, RU)];
        }
}

/* One round: the world moves on, s is rebuilt by hand (present pids, sorted) and indexed. */
static void world_scan(rng *r, world *w, tr_scan *s)
{
        if (s->cap < RU) {
                s->procs = realloc(s->procs, RU * sizeof *s->procs);
                CU_ASSERT_PTR_NOT_NULL_FATAL(s->procs);
                s->cap = RU;
        }
        s->n = 0;
        for (int k = 0; k < RU; k++) {
                if (k > 0 && rnd(r, 12) == 0)
                        w->start[k] += 1 + rnd(r, 60); /* pid reused */
                if (k > 0 && rnd(r, 4) == 0)
                        w->ppid[k] = random_ppid(r, w, k);
                if (k > 0 && rnd(r, 7) == 0)
                        continue; /* not there this time */
                tr_proc *p = &s->procs[s->n++];
                memset(p, 0, sizeof *p);
                p->pid = w->pid[k];
                p->ppid = w->ppid[k];
                p->start_ticks = w->start[k];
                p->state = rnd(r, 10) == 0 ? 'Z' : 'S';
                p->utime_ticks = rnd(r, 1000);
                p->stime_ticks = rnd(r, 1000);
                p->cutime_ticks = rnd(r, 3) ? 0 : rnd(r, 100);
                p->rss_bytes = 4096u * rnd(r, 100);
                p->vsize_bytes = 4096u * rnd(r, 1000);
                p->has_io = rnd(r, 20) != 0;
                p->io_read_bytes = rnd(r, 100000);
                p->env_match = rnd(r, 8) == 0 ? 1 : 0;
                p->has_status = rnd(r, 10) != 0;
                p->uid = 1000 + rnd(r, 4);
                p->ngroups = (int) rnd(r, 3);
                for (int g = 0; g < p->ngroups; g++)
                        p->groups[g] = 70 + rnd(r, 10);
        }
        s->clk_tck = 100;
        s->page_size = 4096;
        s->taken_usec = tr_now_usec(); /* fresh: members/usage never rescan the live /proc */
        CU_ASSERT_EQUAL_FATAL(tr_scan_index(s), 0);
}

static void test_random_trees_index_vs_walk(void)
{
        tr_scan s = { 0 };
        _cleanup_pidset_ tr_pidset ex = TR_PIDSET_INIT, seeds = TR_PIDSET_INIT;
        int runs = 0, bad = 0;
        uint64_t members = 0;
        for (uint64_t trial = 0; trial < 400; trial++) {
                rng r = { trial * 7919u + 17u };
                world w;
                for (int k = 0; k < RU; k++) {
                        w.pid[k] = k ? 2 + 3 * k : 1;
                        w.start[k] = k ? 1 + rnd(&r, 100) : 1;
                }
                for (int k = 0; k < RU; k++)
                        w.ppid[k] = k ? random_ppid(&r, &w, k) : 0;
                int root = 1 + (int) rnd(&r, RU - 1);
                tr_procfam_spec spec = { .root_pid = w.pid[root],
                                         .root_start_ticks = w.start[root] + (rnd(&r, 8) == 0),
                                         .by_login = rnd(&r, 6) == 0,
                                         .login_uid = 1001,
                                         .by_gid = rnd(&r, 6) == 0,
                                         .gid = 72,
                                         .max_age_usec = HOUR_USEC };
                int mi = rnd(&r, 5) == 0 ? 0 : -1;
                tr_procfam *fi = NULL, *fw = NULL;
                CU_ASSERT_EQUAL_FATAL(tr_procfam_new(&spec, &fi, NULL), 0);
                CU_ASSERT_EQUAL_FATAL(tr_procfam_new(&spec, &fw, NULL), 0);
                for (int round = 0; round < 8; round++) {
                        world_scan(&r, &w, &s);
                        tr_pidset_clear(&ex);
                        for (int k = 0; k < RU; k++)
                                if (rnd(&r, 14) == 0)
                                        tr_pidset_add(&ex, w.pid[k]);
                        tr_pidset_normalize(&ex);
                        if (round == 0 || rnd(&r, 4) == 0) {
                                tr_pidset_clear(&seeds);
                                for (uint32_t j = rnd(&r, 4); j > 0; j--)
                                        tr_pidset_add(&seeds, w.pid[rnd(&r, RU)]);
                                tr_pidset_normalize(&seeds);
                                CU_ASSERT_EQUAL(tr_procfam_set_seeds_at(fi, &s, &seeds), 0);
                                CU_ASSERT_EQUAL(tr_procfam_set_seeds_at(fw, &s, &seeds), 0);
                        }
                        tr_scan plain = unindexed(&s);
                        const tr_pidset *x = rnd(&r, 3) ? &ex : NULL;
                        CU_ASSERT_EQUAL_FATAL(tr_procfam_update(fi, &s, mi, x), 0);
                        CU_ASSERT_EQUAL_FATAL(tr_procfam_update(fw, &plain, mi, x), 0);
                        runs++;
                        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
                        CU_ASSERT_EQUAL(tr_procfam_members(fi, &m, NULL), 0);
                        members += m.n;
                        if (!same_family(fi, fw)) {
                                bad++;
                                printf("\n  differ: trial %llu round %d\n", (unsigned long long) trial, round);
                        }
                }
                tr_procfam_free(fi);
                tr_procfam_free(fw);
        }
        CU_ASSERT_EQUAL(bad, 0);
        printf("\n  %d random updates compared, %.1f live members on average\n", runs,
               runs ? (double) members / runs : 0.0);
        CU_ASSERT_TRUE(members > (uint64_t) runs); /* not trivially empty families */
        tr_scan_free(&s);
}

static void test_new_rejects(void)
{
        tr_procfam *f = NULL;
        tr_error err = { 0 };
        tr_procfam_spec spec = { .root_pid = 1 };
        CU_ASSERT_EQUAL(tr_procfam_new(&spec, &f, &err), -EINVAL);
        spec.root_pid = 0;
        CU_ASSERT_EQUAL(tr_procfam_new(&spec, &f, &err), -EINVAL);
        spec.root_pid = 100;
        spec.root_start_ticks = 5;
        spec.env_marker = "NOEQUALS";
        CU_ASSERT_EQUAL(tr_procfam_new(&spec, &f, &err), -EINVAL);
        /* start time read now: the root must be alive */
        tr_procfam_spec dead = { .root_pid = 0x3ffffff0 };
        CU_ASSERT_EQUAL(tr_procfam_new(&dead, &f, &err), -ESRCH);
        CU_ASSERT_PTR_NULL(f);
}

/* ---- integration helpers ------------------------------------------------------------ */

typedef struct rec {
        pid_t pid;
        uint64_t start;
} rec;

typedef struct shared {
        int n;
        int fd;           /* write end of the report pipe (the tests that use one) */
        int go;           /* pipe read end children wait on, -1 when none */
        int mode;         /* test-specific */
        char path[64];    /* test-specific */
        rec r[4000];
} shared;

static shared *shared_new(void)
{
        shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (s == MAP_FAILED) {
                perror("mmap");
                exit(2);
        }
        s->go = -1;
        return s;
}

/* Record the calling process (in the child). */
static void record_self(shared *sh)
{
        rec r = { getpid(), 0 };
        tr_pid_start_ticks(r.pid, &r.start);
        int i = __atomic_fetch_add(&sh->n, 1, __ATOMIC_SEQ_CST);
        if (i < (int) TR_ARRAY_SIZE(sh->r)) {
                sh->r[i].start = r.start;
                __atomic_store_n(&sh->r[i].pid, r.pid, __ATOMIC_SEQ_CST);
        }
}

static void pause_forever(void)
{
        for (;;)
                pause();
}

static bool wait_count(shared *sh, int n, int timeout_ms)
{
        for (int t = 0; t < timeout_ms; t += 2) {
                int k = __atomic_load_n(&sh->n, __ATOMIC_SEQ_CST);
                if (k >= n) {
                        bool all = true;
                        for (int i = 0; i < n && all; i++)
                                all = __atomic_load_n(&sh->r[i].pid, __ATOMIC_SEQ_CST) > 0;
                        if (all)
                                return true;
                }
                usleep(2000);
        }
        return false;
}

/* Still running: same start time and not a zombie. */
static bool rec_alive(const rec *r)
{
        uint64_t st;
        return r->pid > 1 && tr_pid_start_ticks(r->pid, &st) == 0 && st == r->start && ts_alive(r->pid);
}

/* Kill every recorded process (pid + start time) and reap it: direct children and the
 * orphans this subreaper inherits; processes reaped by their own parents just vanish. */
static void cleanup_recs(shared *sh)
{
        int n = sh->n < (int) TR_ARRAY_SIZE(sh->r) ? sh->n : (int) TR_ARRAY_SIZE(sh->r);
        for (int i = 0; i < n; i++)
                if (sh->r[i].pid > 1 && sh->r[i].pid != getpid())
                        tr_safe_kill(sh->r[i].pid, sh->r[i].start, SIGKILL);
        for (int i = 0; i < n; i++) {
                pid_t pid = sh->r[i].pid;
                if (pid <= 1)
                        continue;
                for (int t = 0; t < 2000; t++) {
                        pid_t w = waitpid(pid, NULL, WNOHANG | __WALL);
                        if (w == pid)
                                break;
                        uint64_t st;
                        if (w < 0 && (tr_pid_start_ticks(pid, &st) < 0 || st != sh->r[i].start))
                                break; /* gone (reaped by its parent) */
                        usleep(1000);
                }
        }
        munmap(sh, sizeof *sh);
        ts_reap_orphans(500);
}

static tr_procfam *live_family(pid_t root, const char *marker, uint64_t max_age)
{
        tr_procfam_spec spec = { .root_pid = root, .env_marker = marker, .max_age_usec = max_age };
        tr_procfam *f = NULL;
        tr_error err = { 0 };
        if (tr_procfam_new(&spec, &f, &err) < 0) {
                printf("\n  tr_procfam_new: %s\n", err.msg);
                return NULL;
        }
        return f;
}

static bool members_hold(tr_procfam *f, const shared *sh, int n)
{
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        if (tr_procfam_members(f, &m, NULL) < 0)
                return false;
        for (int i = 0; i < n; i++)
                if (!tr_pidset_contains(&m, sh->r[i].pid))
                        return false;
        return true;
}

/* root + 2 children + 1 grandchild, all pausing */
static int tree4(void *arg)
{
        shared *sh = arg;
        record_self(sh);
        if (fork() == 0) {
                record_self(sh);
                if (fork() == 0) {
                        record_self(sh);
                        pause_forever();
                }
                pause_forever();
        }
        if (fork() == 0) {
                record_self(sh);
                pause_forever();
        }
        pause_forever();
        return 0;
}

static void test_live_tree(void)
{
        shared *sh = shared_new();
        pid_t root = ts_fork(tree4, sh);
        CU_ASSERT_FATAL(root > 1);
        CU_ASSERT_FATAL(wait_count(sh, 4, 5000));
        tr_procfam *f = live_family(root, NULL, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_procfam_members(f, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 4);
        CU_ASSERT_TRUE(members_hold(f, sh, 4));
        CU_ASSERT_FALSE(tr_pidset_contains(&m, getpid()));
        tr_usage u;
        tr_usage_init(&u);
        CU_ASSERT_EQUAL(tr_procfam_usage(f, &u, &err), 0);
        CU_ASSERT_EQUAL(u.num_procs.value, 4);
        CU_ASSERT_TRUE(u.rss_bytes.value > 0);
        CU_ASSERT_TRUE(u.io_read_bytes.available); /* root reads every io */
        bool pop = false;
        CU_ASSERT_EQUAL(tr_procfam_populated(f, &pop, &err), 0);
        CU_ASSERT_TRUE(pop);

        /* signal: SIGTERM ends them all (default action) */
        CU_ASSERT_EQUAL(tr_procfam_signal(f, SIGTERM, &err), 0);
        for (int i = 0; i < 200 && pop; i++) {
                usleep(5000);
                CU_ASSERT_EQUAL(tr_procfam_populated(f, &pop, &err), 0);
        }
        CU_ASSERT_FALSE(pop);
        tr_procfam_free(f);
        cleanup_recs(sh);
}

/* root R forks A; A does setsid and forks B; A exits when told (pipe), B pauses. */
static int double_forker(void *arg)
{
        shared *sh = arg;
        record_self(sh);
        if (fork() == 0) {
                setsid();
                record_self(sh);
                if (fork() == 0) {
                        record_self(sh);
                        pause_forever();
                }
                char c;
                while (read(sh->go, &c, 1) < 0 && errno == EINTR)
                        ;
                _exit(0);
        }
        for (;;) { /* reap A when it exits */
                if (wait(NULL) < 0 && errno == ECHILD)
                        pause_forever();
        }
        return 0;
}

static void test_live_double_fork(void)
{
        shared *sh = shared_new();
        int go[2];
        CU_ASSERT_FATAL(pipe2(go, O_CLOEXEC) == 0);
        sh->go = go[0];
        pid_t root = ts_fork(double_forker, sh);
        CU_ASSERT_FATAL(root > 1);
        CU_ASSERT_FATAL(wait_count(sh, 3, 5000));
        close(go[0]);
        tr_procfam *f = live_family(root, NULL, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_TRUE(members_hold(f, sh, 3)); /* a scan sees B in the tree */
        /* A exits: B is reparented (to this subreaper) in another session */
        CU_ASSERT(write(go[1], "x", 1) == 1);
        close(go[1]);
        rec a = sh->r[1];
        for (int i = 0; i < 400 && rec_alive(&a); i++)
                usleep(5000);
        CU_ASSERT_FALSE(rec_alive(&a));
        usleep(20000);
        pid_t b = sh->r[2].pid;
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) b);
        CU_ASSERT_FATAL(tr_read_file_at(AT_FDCWD, path, buf, sizeof buf, NULL) > 0);
        tr_proc p;
        CU_ASSERT_EQUAL_FATAL(tr_parse_proc_stat(buf, 4096, &p), 0);
        CU_ASSERT_NOT_EQUAL(p.ppid, sh->r[1].pid);
        CU_ASSERT_NOT_EQUAL(p.session, getsid(0));
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_procfam_members(f, &m, NULL), 0);
        CU_ASSERT_TRUE(tr_pidset_contains(&m, b)); /* sticky: still a member */
        CU_ASSERT_TRUE(tr_pidset_contains(&m, root));
        CU_ASSERT_FALSE(tr_pidset_contains(&m, sh->r[1].pid));

        /* a fresh family that never saw B in the tree: B escapes (the known limit) */
        tr_procfam *g = live_family(root, NULL, 0);
        CU_ASSERT_EQUAL(tr_procfam_members(g, &m, NULL), 0);
        printf("\n  known limit: a double-forked process never seen in the tree %s",
               tr_pidset_contains(&m, b) ? "was found (unexpected)" : "escapes a family that never saw it");
        CU_ASSERT_FALSE(tr_pidset_contains(&m, b));
        tr_procfam_free(g);

        /* kill reaches B through the sticky membership */
        tr_kill_result res = { 0 };
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_procfam_kill(f, 5000000, &res, &err), 0);
        CU_ASSERT_TRUE(res.empty);
        CU_ASSERT_FALSE(rec_alive(&sh->r[2]));
        tr_pidset_free(&res.survivors);
        tr_procfam_free(f);
        cleanup_recs(sh);
}

typedef struct exec_arg {
        shared *sh;
        const char *env;
} exec_arg;

static int exec_sleeper(void *arg)
{
        exec_arg *a = arg;
        record_self(a->sh);
        char *envp[] = { "PATH=/usr/bin:/bin", (char *) a->env, NULL };
        execle("/bin/sleep", "sleep", "600", (char *) NULL, envp);
        return 127;
}

static int plain_pauser(void *arg)
{
        record_self(arg);
        pause_forever();
        return 0;
}

static void test_live_env_marker(void)
{
        char marker[64];
        snprintf(marker, sizeof marker, "PROCD_TEST_MARKER=%d", (int) getpid());
        shared *sh = shared_new();
        pid_t root = ts_fork(plain_pauser, sh);
        CU_ASSERT_FATAL(wait_count(sh, 1, 5000));
        exec_arg with = { sh, marker }, without = { sh, "PROCD_TEST_MARKER=other" };
        pid_t m1 = ts_fork(exec_sleeper, &with);
        pid_t m2 = ts_fork(exec_sleeper, &without);
        CU_ASSERT_FATAL(m1 > 1 && m2 > 1);
        CU_ASSERT_FATAL(wait_count(sh, 3, 5000));
        /* wait for the execs (environ is the exec'd one) */
        for (int i = 0; i < 200; i++) {
                char path[64], comm[64] = "";
                snprintf(path, sizeof path, "/proc/%d/comm", (int) m2);
                tr_read_file_at(AT_FDCWD, path, comm, sizeof comm, NULL);
                snprintf(path, sizeof path, "/proc/%d/comm", (int) m1);
                char comm1[64] = "";
                tr_read_file_at(AT_FDCWD, path, comm1, sizeof comm1, NULL);
                if (strncmp(comm, "sleep", 5) == 0 && strncmp(comm1, "sleep", 5) == 0)
                        break;
                usleep(5000);
        }
        tr_procfam *f = live_family(root, marker, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_procfam_members(f, &m, NULL), 0);
        CU_ASSERT_TRUE(tr_pidset_contains(&m, root));
        CU_ASSERT_TRUE(tr_pidset_contains(&m, m1));
        CU_ASSERT_FALSE(tr_pidset_contains(&m, m2));
        CU_ASSERT_FALSE(tr_pidset_contains(&m, getpid()));
        CU_ASSERT_EQUAL(m.n, 2);
        tr_procfam_free(f);
        cleanup_recs(sh);
}

static int setuid_pauser(void *arg)
{
        shared *sh = arg;
        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
                _exit(3);
        record_self(sh);
        pause_forever();
        return 0;
}

/* a gid of this run only: concurrent test runs must not adopt (and kill) each other's */
static gid_t run_gid(void) { return (gid_t) (3000000 + getpid()); }

static int setgroups_pauser(void *arg)
{
        shared *sh = arg;
        gid_t g[] = { 54321, (gid_t) sh->mode }; /* run_gid() of the test process */
        if (setgroups(2, g) < 0)
                _exit(3);
        record_self(sh);
        pause_forever();
        return 0;
}

static void test_live_login_uid(void)
{
        if (!ts_need_root("procfam login uid (setuid to nobody)"))
                return;
        shared *sh = shared_new();
        pid_t root = ts_fork(plain_pauser, sh);
        CU_ASSERT_FATAL(wait_count(sh, 1, 5000));
        pid_t nob = ts_fork(setuid_pauser, sh);
        CU_ASSERT_FATAL(nob > 1);
        CU_ASSERT_FATAL(wait_count(sh, 2, 5000));
        tr_procfam_spec spec = { .root_pid = root, .by_login = true, .login_uid = 65534 };
        tr_procfam *f = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_procfam_new(&spec, &f, NULL), 0);
        CU_ASSERT_TRUE(tr_procfam_scan_wants(f) & TR_SCAN_STATUS);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_procfam_members(f, &m, NULL), 0);
        CU_ASSERT_TRUE(tr_pidset_contains(&m, root));
        CU_ASSERT_TRUE(tr_pidset_contains(&m, nob));
        CU_ASSERT_FALSE(tr_pidset_contains(&m, getpid()));
        tr_procfam_free(f); /* not signalled: other nobody processes of the host match too */
        cleanup_recs(sh);
}

static void test_live_gid(void)
{
        if (!ts_need_root("procfam supplementary gid (setgroups)"))
                return;
        shared *sh = shared_new();
        sh->mode = (int) run_gid();
        pid_t root = ts_fork(plain_pauser, sh);
        CU_ASSERT_FATAL(wait_count(sh, 1, 5000));
        pid_t g = ts_fork(setgroups_pauser, sh);
        CU_ASSERT_FATAL(g > 1);
        CU_ASSERT_FATAL(wait_count(sh, 2, 5000));
        tr_procfam_spec spec = { .root_pid = root, .by_gid = true, .gid = run_gid() };
        tr_procfam *f = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_procfam_new(&spec, &f, NULL), 0);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_procfam_members(f, &m, NULL), 0);
        CU_ASSERT_TRUE(tr_pidset_contains(&m, root));
        CU_ASSERT_TRUE(tr_pidset_contains(&m, g));
        CU_ASSERT_EQUAL(m.n, 2);
        /* signals reach the gid member too */
        tr_kill_result res = { 0 };
        CU_ASSERT_EQUAL(tr_procfam_kill(f, 5000000, &res, NULL), 0);
        CU_ASSERT_TRUE(res.empty);
        CU_ASSERT_FALSE(rec_alive(&sh->r[1]));
        tr_pidset_free(&res.survivors);
        tr_procfam_free(f);
        cleanup_recs(sh);
}

static int seed_parent(void *arg)
{
        shared *sh = arg;
        record_self(sh);
        if (fork() == 0) {
                record_self(sh);
                pause_forever();
        }
        pause_forever();
        return 0;
}

static void test_live_seeds(void)
{
        shared *sh = shared_new();
        pid_t root = ts_fork(plain_pauser, sh);
        CU_ASSERT_FATAL(wait_count(sh, 1, 5000));
        pid_t s = ts_fork(seed_parent, sh);
        CU_ASSERT_FATAL(s > 1);
        CU_ASSERT_FATAL(wait_count(sh, 3, 5000));
        tr_procfam *f = live_family(root, NULL, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT, seeds = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_procfam_members(f, &m, NULL), 0);
        CU_ASSERT_EQUAL(m.n, 1);
        tr_pidset_add(&seeds, s);
        tr_pidset_add(&seeds, 0x3ffffff0); /* gone: ignored */
        CU_ASSERT_EQUAL(tr_procfam_set_seeds(f, &seeds), 0);
        CU_ASSERT_EQUAL(tr_procfam_members(f, &m, NULL), 0);
        CU_ASSERT_EQUAL(m.n, 3); /* root, seed, seed's child */
        CU_ASSERT_TRUE(members_hold(f, sh, 3));
        tr_procfam_free(f);
        cleanup_recs(sh);
}

static volatile sig_atomic_t usr1_self;
static void on_usr1(int sig)
{
        (void) sig;
        usr1_self++;
}

static int usr1_ignorer(void *arg)
{
        signal(SIGUSR1, SIG_IGN);
        record_self(arg);
        pause_forever();
        return 0;
}

static void test_live_never_self(void)
{
        shared *sh = shared_new();
        pid_t root = ts_fork(usr1_ignorer, sh);
        CU_ASSERT_FATAL(wait_count(sh, 1, 5000));
        tr_procfam *f = live_family(root, NULL, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        /* seed the test process itself: it becomes a member, yet is never signalled */
        _cleanup_pidset_ tr_pidset seeds = TR_PIDSET_INIT;
        tr_pidset_add(&seeds, getpid());
        CU_ASSERT_EQUAL(tr_procfam_set_seeds(f, &seeds), 0);
        struct sigaction sa = { .sa_handler = on_usr1 }, old;
        sigaction(SIGUSR1, &sa, &old);
        usr1_self = 0;
        CU_ASSERT_EQUAL(tr_procfam_signal(f, SIGUSR1, NULL), 0);
        usleep(20000);
        CU_ASSERT_EQUAL(usr1_self, 0);
        /* kill: everything else dies, the caller is the one survivor, no wait to the bound */
        tr_kill_result res = { 0 };
        CU_ASSERT_EQUAL(tr_procfam_kill(f, 600000000, &res, NULL), 0);
        CU_ASSERT_TRUE(res.elapsed_usec < 600000000); /* returned before its (long) bound */
        CU_ASSERT_FALSE(res.empty);
        CU_ASSERT_EQUAL(res.survivors.n, 1);
        CU_ASSERT_TRUE(tr_pidset_contains(&res.survivors, getpid()));
        CU_ASSERT_FALSE(rec_alive(&sh->r[0]));
        sigaction(SIGUSR1, &old, NULL);
        tr_pidset_free(&res.survivors);
        tr_procfam_free(f);
        cleanup_recs(sh);
}

/* keeps forking: every 1 ms a child that forks a grandchild; both pause */
static int fork_loop(void *arg)
{
        shared *sh = arg;
        record_self(sh);
        for (int i = 0; i < 600; i++) {
                pid_t c = fork();
                if (c == 0) {
                        record_self(sh);
                        if (fork() == 0) {
                                record_self(sh);
                                pause_forever();
                        }
                        pause_forever();
                }
                usleep(1000);
        }
        pause_forever();
        return 0;
}

static void test_live_kill_spree(void)
{
        shared *sh = shared_new();
        pid_t root = ts_fork(fork_loop, sh);
        CU_ASSERT_FATAL(root > 1);
        CU_ASSERT_FATAL(wait_count(sh, 1, 5000));
        usleep(100000); /* the loop is forking when the kill starts */
        tr_procfam *f = live_family(root, NULL, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        tr_kill_result res = { 0 };
        tr_error err = { 0 };
        int before = __atomic_load_n(&sh->n, __ATOMIC_SEQ_CST);
        CU_ASSERT_EQUAL(tr_procfam_kill(f, 20000000, &res, &err), 0);
        int n = __atomic_load_n(&sh->n, __ATOMIC_SEQ_CST);
        CU_ASSERT_TRUE(res.empty);
        CU_ASSERT_STRING_EQUAL(res.method, "proc spree");
        CU_ASSERT_EQUAL(res.survivors.n, 0);
        usleep(50000); /* nothing recorded may come back to life, nor be created late */
        CU_ASSERT_EQUAL(__atomic_load_n(&sh->n, __ATOMIC_SEQ_CST), n);
        int alive = 0;
        for (int i = 0; i < n && i < (int) TR_ARRAY_SIZE(sh->r); i++)
                if (rec_alive(&sh->r[i]))
                        alive++;
        CU_ASSERT_EQUAL(alive, 0);
        printf("\n  MEASURE kill spree: %d processes (%d when it started), %u rounds, %.1f ms, %d alive after",
               n, before, res.rounds, (double) res.elapsed_usec / 1000.0, alive);
        bool pop = true;
        CU_ASSERT_EQUAL(tr_procfam_populated(f, &pop, NULL), 0);
        CU_ASSERT_FALSE(pop);
        tr_pidset_free(&res.survivors);
        tr_procfam_free(f);
        cleanup_recs(sh);
}

static int spin_tree(void *arg)
{
        shared *sh = arg;
        record_self(sh);
        for (int i = 0; i < 2; i++)
                if (fork() == 0) {
                        record_self(sh);
                        for (;;)
                                __asm__ volatile("" ::: "memory");
                }
        pause_forever();
        return 0;
}

static void test_live_freeze_thaw(void)
{
        shared *sh = shared_new();
        pid_t root = ts_fork(spin_tree, sh);
        CU_ASSERT_FATAL(root > 1);
        CU_ASSERT_FATAL(wait_count(sh, 3, 5000));
        tr_procfam *f = live_family(root, NULL, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        tr_freeze_state st = TR_THAWED;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_procfam_freeze(f, 5000000, &st, &err), 0);
        CU_ASSERT_EQUAL(st, TR_FROZEN);
        for (int i = 0; i < 3; i++)
                CU_ASSERT_EQUAL(ts_proc_state(sh->r[i].pid), 'T');
        /* frozen spinners use no CPU */
        tr_usage u1, u2;
        tr_usage_init(&u1);
        tr_usage_init(&u2);
        CU_ASSERT_EQUAL(tr_procfam_usage(f, &u1, NULL), 0);
        usleep(200000);
        CU_ASSERT_EQUAL(tr_procfam_usage(f, &u2, NULL), 0);
        CU_ASSERT_TRUE(u2.cpu_usec.value - u1.cpu_usec.value <= 20000);

        CU_ASSERT_EQUAL(tr_procfam_thaw(f, 5000000, &st, &err), 0);
        CU_ASSERT_EQUAL(st, TR_THAWED);
        usleep(20000);
        for (int i = 0; i < 3; i++) {
                char c = ts_proc_state(sh->r[i].pid);
                CU_ASSERT(c == 'R' || c == 'S');
        }
        tr_kill_result res = { 0 };
        CU_ASSERT_EQUAL(tr_procfam_kill(f, 5000000, &res, NULL), 0);
        CU_ASSERT_TRUE(res.empty);
        tr_pidset_free(&res.survivors);
        tr_procfam_free(f);
        cleanup_recs(sh);
}

/* ---- measured: CPU of a member that exits between scans ----------------------------- */

static void burn_cpu_usec(uint64_t usec)
{
        struct timespec ts;
        for (;;) {
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
                if ((uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u >= usec)
                        return;
        }
}

/* Root: tells its pid, waits for the go, forks a child that burns 300 ms CPU, reports its
 * own CPU (getrusage: the truth, usec) into sh->r[1] and exits.  The root reaps it with
 * waitpid(), or (sh->n_mode 1) ignores SIGCHLD so that the kernel reaps it. */
static int burn_root(void *arg)
{
        shared *sh = arg;
        if (sh->mode == 1)
                signal(SIGCHLD, SIG_IGN);
        record_self(sh);
        char c;
        while (read(sh->go, &c, 1) < 0 && errno == EINTR)
                ;
        pid_t k = fork();
        if (k == 0) {
                burn_cpu_usec(300000);
                struct rusage ru;
                getrusage(RUSAGE_SELF, &ru);
                sh->r[1].start = (uint64_t) ru.ru_utime.tv_sec * 1000000u + (uint64_t) ru.ru_utime.tv_usec +
                                 (uint64_t) ru.ru_stime.tv_sec * 1000000u + (uint64_t) ru.ru_stime.tv_usec;
                __atomic_store_n(&sh->r[1].pid, getpid(), __ATOMIC_SEQ_CST);
                __atomic_fetch_add(&sh->n, 1, __ATOMIC_SEQ_CST);
                _exit(0);
        }
        if (sh->mode == 0)
                waitpid(k, NULL, 0);
        pause_forever();
        return 0;
}

static uint64_t own_cpu_usec(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        tr_proc p;
        if (tr_read_file_at(AT_FDCWD, path, buf, sizeof buf, NULL) < 0 || tr_parse_proc_stat(buf, 4096, &p) < 0)
                return 0;
        return (p.utime_ticks + p.stime_ticks) * 1000000u / (uint64_t) sysconf(_SC_CLK_TCK);
}

typedef struct cpu_run {
        uint64_t truth;   /* the child's own getrusage */
        uint64_t classic; /* tr_procfam_exited_cpu_usec: last seen values */
        uint64_t credited; /* family cpu_usec minus the root's own CPU */
} cpu_run;

/* One run: a snapshot timer scans every interval_usec while the burner runs; after it has
 * exited and been reaped, one more scan; what did the family keep of its CPU? */
static cpu_run exited_cpu_run(uint64_t interval_usec, int mode)
{
        cpu_run out = { 0, 0, 0 };
        shared *sh = shared_new();
        sh->mode = mode;
        int go[2];
        CU_ASSERT_FATAL(pipe2(go, O_CLOEXEC) == 0);
        sh->go = go[0];
        pid_t root = ts_fork(burn_root, sh);
        CU_ASSERT_FATAL(root > 1);
        close(go[0]);
        CU_ASSERT_FATAL(wait_count(sh, 1, 5000));
        tr_procfam *f = live_family(root, NULL, interval_usec);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT(write(go[1], "x", 1) == 1);
        close(go[1]);
        usleep(2000);
        while (__atomic_load_n(&sh->n, __ATOMIC_SEQ_CST) < 2) {
                tr_procfam_refresh(f, NULL);
                usleep(1000);
        }
        /* gone (reaped) */
        for (int i = 0; i < 1000; i++) {
                char path[64];
                snprintf(path, sizeof path, "/proc/%d", (int) sh->r[1].pid);
                if (access(path, F_OK) != 0)
                        break;
                usleep(1000);
        }
        usleep((useconds_t) interval_usec + 1000); /* the timer's next scan */
        tr_usage u;
        tr_usage_init(&u);
        CU_ASSERT_EQUAL(tr_procfam_usage(f, &u, NULL), 0);
        out.truth = sh->r[1].start;
        out.classic = tr_procfam_exited_cpu_usec(f);
        uint64_t own = own_cpu_usec(root);
        out.credited = u.cpu_usec.value > own ? u.cpu_usec.value - own : 0;
        sh->r[1].pid = 0; /* reaped already */
        tr_procfam_free(f);
        cleanup_recs(sh);
        return out;
}

static void print_run(const char *what, uint64_t interval, const cpu_run *r)
{
        uint64_t lc = r->truth > r->classic ? r->truth - r->classic : 0;
        uint64_t lr = r->truth > r->credited ? r->truth - r->credited : 0;
        printf("\n  MEASURE exited CPU (%s, scans every %llu ms): child used %llu us; classic last-seen "
               "keeps %llu us (lost %llu us, %.0f%%); with reaped-children cutime the family keeps %llu us "
               "(lost %llu us, %.0f%%)",
               what, (unsigned long long) (interval / 1000), (unsigned long long) r->truth,
               (unsigned long long) r->classic, (unsigned long long) lc,
               r->truth ? 100.0 * (double) lc / (double) r->truth : 0.0, (unsigned long long) r->credited,
               (unsigned long long) lr, r->truth ? 100.0 * (double) lr / (double) r->truth : 0.0);
}

static void test_measure_exited_cpu(void)
{
        static const uint64_t intervals[] = { 1000000, 100000, 10000 };
        const uint64_t tick = 1000000u / (uint64_t) sysconf(_SC_CLK_TCK);
        for (size_t i = 0; i < TR_ARRAY_SIZE(intervals); i++) {
                cpu_run r = exited_cpu_run(intervals[i], 0);
                print_run("reaped by the root, a member", intervals[i], &r);
                CU_ASSERT_TRUE(r.truth >= 250000);
                CU_ASSERT_TRUE(r.classic <= r.truth + 2 * tick);
                /* reaped by a member: nothing lost beyond tick rounding */
                CU_ASSERT_TRUE(r.credited + 2 * tick >= r.truth && r.credited <= r.truth + 2 * tick);
        }
        /* the root ignores SIGCHLD: the kernel reaps, the classic last-seen value is all */
        cpu_run r = exited_cpu_run(100000, 1);
        print_run("auto-reaped, SIGCHLD ignored", 100000, &r);
        CU_ASSERT_TRUE(r.credited <= r.truth + 2 * tick);
        CU_ASSERT_TRUE(r.credited + 2 * tick >= r.classic);
}

/* Root: waits for the go, forks a child that writes 2 MiB (fsync) to sh->path and exits,
 * reaps it, then reports (sh->n == 2). */
static int io_root(void *arg)
{
        shared *sh = arg;
        record_self(sh);
        char c;
        while (read(sh->go, &c, 1) < 0 && errno == EINTR)
                ;
        pid_t k = fork();
        if (k == 0) {
                int fd = open(sh->path, O_WRONLY | O_CLOEXEC);
                static char block[65536];
                memset(block, 'x', sizeof block);
                for (int i = 0; fd >= 0 && i < 32; i++) {
                        if (write(fd, block, sizeof block) != (ssize_t) sizeof block)
                                _exit(3);
                        usleep(2000);
                }
                _exit(fd >= 0 && fsync(fd) == 0 ? 0 : 3);
        }
        int st = 0;
        waitpid(k, &st, 0);
        sh->mode = st;
        __atomic_fetch_add(&sh->n, 1, __ATOMIC_SEQ_CST);
        pause_forever();
        return 0;
}

static unsigned long long self_write_bytes(void)
{
        unsigned long long v = 0;
        char key[32];
        FILE *f = fopen("/proc/self/io", "re");
        while (f && fscanf(f, "%31s %llu", key, &v) == 2 && strcmp(key, "write_bytes:") != 0)
                ;
        if (f)
                fclose(f);
        return v;
}

/* Whether writes under dir reach a block device (/proc's write_bytes counts them): not on
 * tmpfs, as /tmp and /var/tmp are on many nodes.  Probed with 64 KiB written and synced. */
static bool writes_reach_a_device(const char *dir, char *why, size_t whylen)
{
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/procd-test-probe.XXXXXX", dir);
        int fd = mkstemp(path);
        if (fd < 0) {
                snprintf(why, whylen, "cannot create a file in %s: %s", dir, strerror(errno));
                return false;
        }
        unlink(path);
        static char block[65536];
        unsigned long long before = self_write_bytes();
        bool ok = write(fd, block, sizeof block) == (ssize_t) sizeof block && fsync(fd) == 0;
        ok = ok && self_write_bytes() > before;
        close(fd);
        struct statfs sf;
        if (!ok)
                snprintf(why, whylen, "%s is %s: what is written there is no block device I/O", dir,
                         statfs(dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC ? "a tmpfs" : "not counted by write_bytes");
        return ok;
}

static void test_live_io_of_reaped_member(void)
{
        char why[PATH_MAX + 80];
        if (!writes_reach_a_device("/var/tmp", why, sizeof why)) {
                ts_skip("io of a reaped member", "%s", why);
                return;
        }
        shared *sh = shared_new();
        snprintf(sh->path, sizeof sh->path, "/var/tmp/procd-test-io.XXXXXX");
        int tfd = mkstemp(sh->path);
        CU_ASSERT_FATAL(tfd >= 0);
        close(tfd);
        int go[2];
        CU_ASSERT_FATAL(pipe2(go, O_CLOEXEC) == 0);
        sh->go = go[0];
        pid_t root = ts_fork(io_root, sh);
        CU_ASSERT_FATAL(root > 1);
        close(go[0]);
        CU_ASSERT_FATAL(wait_count(sh, 1, 5000));
        tr_procfam *f = live_family(root, NULL, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        tr_usage u0;
        tr_usage_init(&u0);
        CU_ASSERT_EQUAL(tr_procfam_usage(f, &u0, NULL), 0);
        CU_ASSERT(write(go[1], "x", 1) == 1);
        close(go[1]);
        /* scans while the writer runs: its last seen io is partial */
        while (__atomic_load_n(&sh->n, __ATOMIC_SEQ_CST) < 2) {
                tr_procfam_refresh(f, NULL);
                usleep(3000);
        }
        tr_usage u;
        tr_usage_init(&u);
        CU_ASSERT_EQUAL(tr_procfam_usage(f, &u, NULL), 0);
        CU_ASSERT_EQUAL(sh->mode, 0);
        CU_ASSERT_TRUE(u.io_write_bytes.available);
        uint64_t w = u.io_write_bytes.value - u0.io_write_bytes.value;
        printf("\n  io_write_bytes of the family after a member wrote 2 MiB and was reaped by the root: %llu",
               (unsigned long long) w);
        /* the reaper's io holds the child's, and the child's last seen io is not added again */
        CU_ASSERT_TRUE(w >= 2u * 1024u * 1024u);
        CU_ASSERT_TRUE(w <= 2u * 1024u * 1024u + 512u * 1024u);
        unlink(sh->path);
        tr_procfam_free(f);
        cleanup_recs(sh);
}

/* ---- measure: update cost per family over one shared scan ---------------------------- */

/* Dies with its parent: killed by ctest's timeout, the test must not leave 3,000 processes
 * holding ctest's output pipe open (ctest then waits for them for ever). */
static void die_with_parent(pid_t parent)
{
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(1);
}

static void bench_root(pid_t test)
{
        /* a job-like root with two children, all pausing; its process group is its own */
        die_with_parent(test);
        pid_t self = getpid();
        for (int i = 0; i < 2; i++) {
                pid_t c = fork();
                if (c == 0) {
                        die_with_parent(self);
                        for (;;)
                                pause();
                }
        }
        for (;;)
                pause();
}

/* Mean usec of one snapshot's updates: every family of fs over scan, `rounds` times. */
static double time_updates(tr_procfam **fs, size_t nf, const tr_scan *scan, int rounds)
{
        uint64_t t0 = tr_now_usec();
        for (int r = 0; r < rounds; r++)
                for (size_t i = 0; i < nf; i++)
                        CU_ASSERT_EQUAL(tr_procfam_update(fs[i], scan, -1, NULL), 0);
        return (double) (tr_now_usec() - t0) / rounds;
}

static void test_measure_many_families(void)
{
        /* PROCD_BENCH_ROOTS roots (default 1000), each with 2 children: 3 processes per
         * family, the rest of the host's processes strangers to it.  1, 10, 100, 1000
         * families (at most one per root), and PROCD_BENCH_FAMILIES more (rooted at the
         * roots in turn: several families may share a root) when set. */
        const char *env = getenv("PROCD_BENCH_ROOTS");
        size_t nroots = env ? strtoul(env, NULL, 10) : 1000;
        if (nroots < 1 || nroots > 10000)
                nroots = 1000;
        env = getenv("PROCD_BENCH_FAMILIES");
        size_t extra = env ? strtoul(env, NULL, 10) : 0;
        if (extra > 100000)
                extra = 0;
        pid_t *roots = calloc(nroots, sizeof *roots);
        CU_ASSERT_PTR_NOT_NULL_FATAL(roots);
        size_t nr = 0;
        fflush(NULL);
        pid_t test = getpid();
        for (; nr < nroots; nr++) {
                pid_t c = fork();
                if (c < 0)
                        break;
                if (c == 0) {
                        setpgid(0, 0);
                        bench_root(test);
                }
                setpgid(c, c);
                roots[nr] = c;
        }
        CU_ASSERT_EQUAL(nr, nroots);

        tr_scan s = { 0 };
        tr_scan_opts o = { TR_SCAN_IO, NULL, 0 };
        size_t kids = 0;
        for (int t = 0; t < 3000 && kids < 2 * nr; t++) { /* until every root has its children */
                CU_ASSERT_EQUAL_FATAL(tr_scan_take(&s, &o, NULL), 0);
                kids = 0;
                for (size_t i = 0; i < s.n; i++) {
                        const tr_proc *par = s.parent[i] != TR_SCAN_NONE ? &s.procs[s.parent[i]] : NULL;
                        if (par && par->ppid == getpid() && s.procs[i].state != 'Z')
                                kids++;
                }
                if (kids < 2 * nr)
                        usleep(10000);
        }
        CU_ASSERT_EQUAL(kids, 2 * nr);
        uint64_t t0 = tr_now_usec();
        for (int i = 0; i < 10; i++)
                CU_ASSERT_EQUAL(tr_scan_index(&s), 0);
        double index_usec = (double) (tr_now_usec() - t0) / 10;
        tr_scan plain = unindexed(&s);
        printf("\n  MEASURE update cost over one shared scan of %zu processes (scan %.1f ms, children index %.0f us):",
               s.n, (double) s.cost_usec / 1000.0, index_usec);
        printf("\n    %-34s %9s %14s %14s %14s %14s %8s", "families", "members", "walk ms/snap", "walk us/fam",
               "index ms/snap", "index us/fam", "speedup");

        /* families rooted at the roots (3 members each); then one rooted at this process
         * (every bench process: a big family) and one matching by login uid (looks at
         * every process by nature) */
        size_t counts[] = { 1, 10, 100, 1000, extra };
        size_t top = nr > extra ? nr : extra; /* families kept at most */
        tr_procfam **fi = calloc(top + 2, sizeof *fi), **fw = calloc(top + 2, sizeof *fw);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fi);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fw);
        size_t made = 0;
        bool agree = true;
        for (size_t c = 0; c < TR_ARRAY_SIZE(counts) + 2; c++) {
                bool big = c == TR_ARRAY_SIZE(counts), login = c == TR_ARRAY_SIZE(counts) + 1;
                size_t want = big || login ? 1 : counts[c];
                if (!big && !login && (want == 0 || (c < 4 && (want > nr || (c > 0 && counts[c - 1] >= nr))) ||
                                       (c == 4 && want <= made)))
                        continue;
                tr_procfam **ai = fi, **aw = fw;
                if (big || login) { /* measured on their own */
                        ai = fi + top;
                        aw = fw + top;
                        for (size_t k = 0; k < 2 && ai[k]; k++) {
                                tr_procfam_free(ai[k]);
                                tr_procfam_free(aw[k]);
                                ai[k] = aw[k] = NULL;
                        }
                }
                for (size_t k = big || login ? 0 : made; k < want; k++) {
                        pid_t root = big || login ? getpid() : roots[k % nr];
                        const tr_proc *p = tr_scan_find(&s, root);
                        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
                        tr_procfam_spec spec = { .root_pid = root, .root_start_ticks = p->start_ticks,
                                                 .by_login = login, .login_uid = getuid(),
                                                 .max_age_usec = HOUR_USEC };
                        CU_ASSERT_EQUAL_FATAL(tr_procfam_new(&spec, &ai[k], NULL), 0);
                        CU_ASSERT_EQUAL_FATAL(tr_procfam_new(&spec, &aw[k], NULL), 0);
                        /* first update (no earlier members) outside the timing */
                        CU_ASSERT_EQUAL(tr_procfam_update(ai[k], &s, -1, NULL), 0);
                        CU_ASSERT_EQUAL(tr_procfam_update(aw[k], &plain, -1, NULL), 0);
                }
                if (!big && !login)
                        made = want;
                int rounds = want > 1000 ? 1 : want == 1000 ? 3 : want >= 100 ? 10 : 50;
                double walk = time_updates(aw, want, &plain, rounds);
                double idx = time_updates(ai, want, &s, rounds);
                size_t members = 0;
                for (size_t k = 0; k < want; k++) {
                        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
                        CU_ASSERT_EQUAL(tr_procfam_members(ai[k], &m, NULL), 0);
                        members += m.n;
                        agree = agree && same_family(ai[k], aw[k]);
                }
                char label[64];
                snprintf(label, sizeof label, "%s", big ? "1 rooted at the test (its subtree)"
                                              : login ? "1 by login uid (all processes)" : "");
                if (!big && !login)
                        snprintf(label, sizeof label, "%zu x (root + 2 children)", want);
                printf("\n    %-34s %9zu %14.2f %14.2f %14.3f %14.2f %7.0fx", label, members, walk / 1000.0,
                       walk / (double) want, idx / 1000.0, idx / (double) want, idx > 0 ? walk / idx : 0.0);
                if (!big && !login)
                        CU_ASSERT_EQUAL(members, 3 * want);
        }
        CU_ASSERT_TRUE(agree);
        printf("\n");
        for (size_t k = 0; k < top + 2; k++) {
                tr_procfam_free(fi[k]);
                tr_procfam_free(fw[k]);
        }
        free(fi);
        free(fw);
        tr_scan_free(&s);

        /* kill each root's group, reap the roots, then their children (orphans of this
         * subreaper) */
        for (size_t i = 0; i < nr; i++)
                kill(-roots[i], SIGKILL);
        for (size_t i = 0; i < nr; i++)
                waitpid(roots[i], NULL, 0);
        size_t reaped = 0;
        for (int t = 0; t < 3000 && reaped < 2 * nr; t++) {
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        reaped++;
                if (reaped < 2 * nr)
                        usleep(10000);
        }
        CU_ASSERT_EQUAL(reaped, 2 * nr);
        free(roots);
}

int main(void)
{
        /* orphans of the tests come to this process, which reaps them by pid */
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                perror("PR_SET_CHILD_SUBREAPER");
        CU_TestInfo fake_tests[] = {
                { "members by parent tree, zombie, reused pid", test_fake_tree_members },
                { "sticky after reparent, exited CPU kept", test_fake_tree_sticky_and_exited },
                { "no history: reparented and reused pids", test_fake_tree_reuse_without_history },
                { "env marker, login uid, gid", test_fake_tree_marker_login_gid },
                { "exclude set", test_fake_tree_exclude },
                { "seeds pinned from a scan", test_fake_tree_seeds_at },
                { "children index = whole-scan walk, fixture trees", test_fake_tree_index_vs_walk },
                { "children index = whole-scan walk, random trees", test_random_trees_index_vs_walk },
                { "new rejects bad specs", test_new_rejects },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo live_tests[] = {
                { "fork tree, usage, signal, populated", test_live_tree },
                { "double fork + setsid", test_live_double_fork },
                { "env marker", test_live_env_marker },
                { "login uid", test_live_login_uid },
                { "supplementary gid", test_live_gid },
                { "seeds", test_live_seeds },
                { "never signals itself", test_live_never_self },
                { "kill spree against a fork loop", test_live_kill_spree },
                { "freeze and thaw", test_live_freeze_thaw },
                { "io of a member reaped by a member", test_live_io_of_reaped_member },
                { "measure exited CPU loss", test_measure_exited_cpu },
                { "measure update cost with many families", test_measure_many_families },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "procfam fake tree", NULL, NULL, NULL, NULL, fake_tests },
                { "procfam live", NULL, NULL, NULL, NULL, live_tests },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
