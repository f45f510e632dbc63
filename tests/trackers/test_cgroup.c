/* test_cgroup.c - the cgroup handle (cgroup.c): open by path, by pid, TrackFamilyViaCgroup's
 * lookup, the dirfds in every hierarchy, a first usage through the kept-open files
 * (integration, root; see cgtest.h). */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgtest.h"
#include "trackers/util.h"

static void check_create_members(const tr_hierarchies *hs, const char *tag)
{
        char name[64];
        snprintf(name, sizeof name, "ca-%s", tag);
        tr_cgroup *top = make_cg(hs, name);
        if (!top)
                return;
        assert_everywhere(top, true);
        char sub[80], deep[96];
        snprintf(sub, sizeof sub, "%s/sub1", name);
        snprintf(deep, sizeof deep, "%s/sub2/deep", name);
        _cleanup_cgroup_ tr_cgroup *c1 = make_cg(hs, sub);
        _cleanup_cgroup_ tr_cgroup *c2 = make_cg(hs, deep);
        CU_ASSERT_FATAL(c1 && c2);
        assert_everywhere(c2, true);

        pid_t p0 = start_in(top, ts_sleep_forever, NULL);
        pid_t p1 = start_in(c1, ts_sleep_forever, NULL);
        pid_t p2 = start_in(c2, ts_sleep_forever, NULL);

        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_members(top, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 3);
        CU_ASSERT_TRUE(tr_pidset_contains(&m, p0));
        CU_ASSERT_TRUE(tr_pidset_contains(&m, p1));
        CU_ASSERT_TRUE(tr_pidset_contains(&m, p2));
        CU_ASSERT_EQUAL(tr_cgroup_members(c2, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 1);

        /* p2 sits in .../sub2/deep in every hierarchy */
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_read(hs, p2, &pc, NULL), 0);
        for (int i = 0; i < hs->n; i++) {
                CU_ASSERT_PTR_NOT_NULL(pc.paths[i]);
                if (pc.paths[i])
                        CU_ASSERT_STRING_EQUAL(pc.paths[i], tr_cgroup_path(c2, i));
        }
        tr_pid_cgroups_clear(&pc);
        _cleanup_cgroup_ tr_cgroup *byp = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open_pid(hs, p2, 0, &byp, &err), 0);
        if (byp)
                for (int i = 0; i < hs->n; i++)
                        CU_ASSERT_STRING_EQUAL(tr_cgroup_path(byp, i), tr_cgroup_path(c2, i));
        /* TrackFamilyViaCgroup lookup: where the root sits deeper than the path, its
         * most-specific cgroup is used; a pid outside the path gets the path as named */
        _cleanup_cgroup_ tr_cgroup *fp = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open_for_pid(hs, tr_cgroup_path(top, 0), p2, 0, &fp, &err), 0);
        if (fp)
                for (int i = 0; i < hs->n; i++)
                        CU_ASSERT_STRING_EQUAL(tr_cgroup_path(fp, i), tr_cgroup_path(c2, i));
        _cleanup_cgroup_ tr_cgroup *fo = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open_for_pid(hs, tr_cgroup_path(top, 0), getpid(), 0, &fo, &err), 0);
        if (fo)
                for (int i = 0; i < hs->n; i++)
                        CU_ASSERT_STRING_EQUAL(tr_cgroup_path(fo, i), tr_cgroup_path(top, i));

        bool pop = false;
        CU_ASSERT_EQUAL(tr_cgroup_populated(top, &pop, &err), 0);
        CU_ASSERT_TRUE(pop);

        tr_usage u;
        CU_ASSERT_EQUAL(tr_cgroup_usage(top, &u, &err), 0);
        CU_ASSERT_TRUE(u.num_procs.available);
        CU_ASSERT_EQUAL(u.num_procs.value, 3);
        CU_ASSERT_TRUE(u.cpu_usec.available);
        CU_ASSERT_TRUE(u.memory_current_bytes.available);
        CU_ASSERT_TRUE(u.rss_bytes.available);
        CU_ASSERT_TRUE(u.pids_current.available);
        if (u.pids_current.available)
                CU_ASSERT(u.pids_current.value >= 3);
        if (hs->mode == TR_MODE_HYBRID) {
                /* each field from the best place: cpu.stat and PSI from v2, memory from v1 */
                CU_ASSERT_EQUAL(u.cpu_usec.source, TR_SRC_CGROUP_V2);
                CU_ASSERT_EQUAL(u.memory_current_bytes.source, TR_SRC_CGROUP_V1);
                CU_ASSERT_TRUE(u.psi_cpu_some_usec.available);
                CU_ASSERT_TRUE(u.oom_kills.available);
        } else if (hs->mode == TR_MODE_V1) {
                CU_ASSERT_EQUAL(u.cpu_usec.source, TR_SRC_CGROUP_V1);
                CU_ASSERT_FALSE(u.psi_cpu_some_usec.available);
        }
        char srcs[64];
        printf("\n    usage sources (%s): %s\n", tag, tr_usage_source_name(&u, srcs, sizeof srcs));
        /* a second read goes through the kept-open files */
        CU_ASSERT_EQUAL(tr_cgroup_usage(top, &u, &err), 0);
        CU_ASSERT_EQUAL(u.num_procs.value, 3);

        kill_destroy(top); /* c1, c2 go with it; their handles are freed at scope exit */
        ts_kill_reap(p0);
        ts_kill_reap(p1);
        ts_kill_reap(p2);
}

HOST_TEST(create_members, "create/attach/members")

/* Through an opener (a restart reopening its families): the handle is opened in its primary
 * hierarchy alone, the others keep their path and open on first use; one gone there by then
 * drops out (path NULL, dirfd -1) and the rest works as with a handle opened everywhere. */
static void check_opener_lazy(const tr_hierarchies *hs, const char *tag)
{
        char name[64], sub[80];
        snprintf(name, sizeof name, "ol-%s", tag);
        snprintf(sub, sizeof sub, "%s/empty", name);
        tr_cgroup *top = make_cg(hs, name);
        _cleanup_cgroup_ tr_cgroup *made = top ? make_cg(hs, sub) : NULL;
        CU_ASSERT_FATAL(top && made);
        pid_t p = start_in(top, ts_sleep_forever, NULL);
        tr_pid_cgroups pc;
        CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_read(hs, p, &pc, NULL), 0);
        int primary = tr_cgroup_primary_index(top), other = primary == 0 ? 1 : 0;
        CU_ASSERT_FATAL(primary >= 0);
        if (hs->n < 2) /* pure v2: the primary is the only hierarchy */
                ts_skip("opener", "%s: other hierarchies opened on first use: one hierarchy here", tag);

        int fds0 = count_fds();
        tr_error err = { 0 };
        tr_cg_opener *o = tr_cg_opener_new(hs);
        _cleanup_cgroup_ tr_cgroup *cg = NULL, *empty = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open_for_cgroups(hs, o, tr_cgroup_path(top, primary), &pc, NULL, TR_CG_MAY_ACT, &cg,
                                                   &err),
                        0);
        CU_ASSERT_EQUAL(tr_cgroup_open_for_cgroups(hs, o, tr_cgroup_path(made, primary), NULL, NULL, TR_CG_MAY_ACT,
                                                   &empty, &err),
                        0);
        tr_cg_opener_free(o);
        CU_ASSERT_FATAL(cg && empty);
        CU_ASSERT_EQUAL(count_fds(), fds0 + 2); /* one dirfd each, nothing else yet */
        CU_ASSERT_EQUAL(tr_cgroup_primary_index(cg), primary);
        for (int i = 0; i < hs->n; i++) {
                /* the sleeper's own cgroup where it is below top (a leaf in a v2 tree with
                 * controllers: no internal processes), else top */
                const char *want = pc.paths[i] && tr_cgroup_path_under(pc.paths[i], tr_cgroup_path(top, i))
                                           ? pc.paths[i]
                                           : tr_cgroup_path(top, i);
                CU_ASSERT_STRING_EQUAL(tr_cgroup_path(cg, i), want);
                CU_ASSERT_STRING_EQUAL(tr_cgroup_path(empty, i), tr_cgroup_path(made, i));
        }
        tr_pid_cgroups_clear(&pc);

        /* gone in another hierarchy before its first use */
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        if (hs->n >= 2) {
                char fs[PATH_MAX];
                CU_ASSERT_EQUAL_FATAL(
                        tr_hierarchy_fs_path(&hs->h[other], tr_cgroup_path(made, other), fs, sizeof fs, NULL), 0);
                CU_ASSERT_EQUAL(rmdir(fs), 0);
                CU_ASSERT_EQUAL(tr_cgroup_dirfd(empty, other), -1);
                CU_ASSERT_PTR_NULL(tr_cgroup_path(empty, other));
        }
        CU_ASSERT(tr_cgroup_dirfd(empty, primary) >= 0);
        CU_ASSERT_EQUAL(tr_cgroup_members(empty, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 0);

        /* usage, members and kill through the hierarchies opened on first use */
        if (hs->n >= 2)
                CU_ASSERT(tr_cgroup_dirfd(cg, other) >= 0);
        tr_usage u, want;
        CU_ASSERT_EQUAL(tr_cgroup_usage(cg, &u, &err), 0);
        CU_ASSERT_EQUAL(tr_cgroup_usage(top, &want, &err), 0);
        CU_ASSERT_TRUE(u.num_procs.available && u.num_procs.value == 1);
        CU_ASSERT_EQUAL(u.cpu_usec.source, want.cpu_usec.source);
        CU_ASSERT_EQUAL(u.memory_current_bytes.source, want.memory_current_bytes.source);
        CU_ASSERT_EQUAL(u.pids_current.available, want.pids_current.available);
        CU_ASSERT_EQUAL(tr_cgroup_members(cg, &m, &err), 0);
        CU_ASSERT_TRUE(m.n == 1 && tr_pidset_contains(&m, p));
        tr_kill_result res = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, 10000000, &res, &err), 0);
        CU_ASSERT_TRUE(res.empty);
        tr_kill_result_free(&res);
        ts_kill_reap(p); /* reaps it (killed above) */
        kill_destroy(top);
}

HOST_TEST(opener_lazy, "opener: primary now, the rest on first use")

/* top opened again as a restart does (through an opener, for its process p): its
 * primary hierarchy now, the others left for later.  NULL on failure (asserted). */
static tr_cgroup *open_restored(const tr_hierarchies *hs, tr_cgroup *top, pid_t p)
{
        tr_pid_cgroups pc;
        if (tr_pid_cgroups_read(hs, p, &pc, NULL) < 0) {
                CU_FAIL("cannot read the sleeper's cgroups");
                return NULL;
        }
        tr_cg_opener *o = tr_cg_opener_new(hs);
        tr_cgroup *cg = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open_for_cgroups(hs, o, tr_cgroup_path(top, tr_cgroup_primary_index(top)), &pc, NULL,
                                                   TR_CG_MAY_ACT, &cg, NULL),
                        0);
        tr_cg_opener_free(o);
        tr_pid_cgroups_clear(&pc);
        return cg;
}

/* Fill every fd number below a lowered RLIMIT_NOFILE (so the next open fails with EMFILE);
 * returns how many dups were made (undo with fill_fds_undo). */
static int fill_fds(struct rlimit *saved, int *dups, int max)
{
        CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_NOFILE, saved), 0);
        struct rlimit low = { (rlim_t) (count_fds() + 8), saved->rlim_max };
        CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_NOFILE, &low), 0);
        int n = 0;
        while (n < max && (dups[n] = fcntl(0, F_DUPFD_CLOEXEC, 0)) >= 0)
                n++;
        CU_ASSERT_EQUAL(errno, EMFILE);
        return n;
}

static void fill_fds_undo(const struct rlimit *saved, const int *dups, int n)
{
        for (int i = 0; i < n; i++)
                close(dups[i]);
        CU_ASSERT_EQUAL(setrlimit(RLIMIT_NOFILE, saved), 0);
}

/* A hierarchy left for later that cannot be opened for a passing reason (EMFILE) fails the
 * operations that act on every hierarchy, instead of their skipping it as one the cgroup is
 * not in; the slot stays, and once fds are free again the same handle works. */
static void check_lazy_transient(const tr_hierarchies *hs, const char *tag)
{
        if (hs->n < 2) {
                ts_skip("lazy open failing with EMFILE", "%s: one hierarchy here, none opened later", tag);
                return;
        }
        tr_cgroup *top = make_cg_tagged(hs, "lt", tag);
        CU_ASSERT_FATAL(top != NULL);
        pid_t p = start_in(top, ts_sleep_forever, NULL);
        int primary = tr_cgroup_primary_index(top), other = primary == 0 ? 1 : 0;
        _cleanup_cgroup_ tr_cgroup *cg = open_restored(hs, top, p);
        CU_ASSERT_FATAL(cg != NULL);

        struct rlimit saved;
        int dups[256];
        int n = fill_fds(&saved, dups, 256);
        tr_error err = { 0 };
        tr_kill_result res = { 0 };
        int attach = tr_cgroup_attach(cg, p, &err);
        int write = tr_cgroup_write(cg, primary, "cgroup.procs", "0", NULL);
        int sig = tr_cgroup_signal(cg, 0, NULL);
        int freeze = tr_cgroup_freeze(cg, 1000000, NULL, NULL);
        int kill = tr_cgroup_kill(cg, 1000000, &res, NULL);
        int destroy = tr_cgroup_destroy(cg, 1000000, NULL);
        fill_fds_undo(&saved, dups, n);
        tr_kill_result_free(&res);
        printf("\n    (%s) with no fd free: attach %d (%s), write %d, signal %d, freeze %d, kill %d, destroy %d\n", tag,
               attach, err.msg, write, sig, freeze, kill, destroy);
        CU_ASSERT_EQUAL(attach, -EMFILE);
        CU_ASSERT_EQUAL(write, -EMFILE);
        CU_ASSERT_EQUAL(sig, -EMFILE);
        CU_ASSERT_EQUAL(freeze, -EMFILE);
        CU_ASSERT_EQUAL(kill, -EMFILE);
        CU_ASSERT_EQUAL(destroy, -EMFILE);
        CU_ASSERT_TRUE(ts_alive(p));
        CU_ASSERT_PTR_NOT_NULL(tr_cgroup_path(cg, other)); /* kept for the next use */

        /* fds free again: the same handle opens it and acts */
        CU_ASSERT_EQUAL(tr_cgroup_attach(cg, p, &err), 0);
        CU_ASSERT(tr_cgroup_dirfd(cg, other) >= 0);
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, 10000000, &res, &err), 0);
        CU_ASSERT_TRUE(res.empty);
        tr_kill_result_free(&res);
        ts_kill_reap(p);
        kill_destroy(top);
}

HOST_TEST(lazy_transient, "opener: a lazy open failing with EMFILE fails the operation")

/* A restored handle whose cgroup is removed and made again at the same path (a job
 * cgroup's path reused for the next job in the slot) before the handle's first use of its
 * other hierarchies: nothing done through the old handle reaches the new cgroup or its
 * process, in the primary hierarchy or in one left for later. */
static void check_lazy_reused_path(const tr_hierarchies *hs, const char *tag)
{
        char name[64];
        snprintf(name, sizeof name, "lr-%s", tag);
        tr_cgroup *top = make_cg(hs, name);
        CU_ASSERT_FATAL(top != NULL);
        pid_t p = start_in(top, ts_sleep_forever, NULL);
        int primary = tr_cgroup_primary_index(top), other = primary == 0 ? 1 : 0;
        _cleanup_cgroup_ tr_cgroup *cg = open_restored(hs, top, p);
        CU_ASSERT_FATAL(cg != NULL);

        /* the job ends and its cgroup goes; the next job's cgroup takes the same path */
        ts_kill_reap(p);
        kill_destroy(top);
        tr_cgroup *next = make_cg(hs, name);
        CU_ASSERT_FATAL(next != NULL);
        pid_t q = start_in(next, ts_sleep_forever, NULL);
        _cleanup_pidset_ tr_pidset before = TR_PIDSET_INIT, m = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_cgroup_members(next, &before, NULL), 0);
        CU_ASSERT_TRUE(before.n == 1 && tr_pidset_contains(&before, q));

        /* the old handle: its lazily kept hierarchies drop out instead of opening the new
         * cgroup by name, and whatever it is asked to do misses q */
        if (hs->n >= 2) {
                CU_ASSERT_EQUAL(tr_cgroup_dirfd(cg, other), -1);
                CU_ASSERT_PTR_NULL(tr_cgroup_path(cg, other));
        } else {
                ts_skip("reused path", "%s: hierarchies opened later: one hierarchy here", tag);
        }
        int members = tr_cgroup_members(cg, &m, NULL);
        CU_ASSERT_TRUE(members < 0 || m.n == 0);
        tr_kill_result res = { 0 };
        int kill = tr_cgroup_kill(cg, 2000000, &res, NULL);
        CU_ASSERT_TRUE(kill < 0 || res.survivors.n == 0);
        tr_kill_result_free(&res);
        CU_ASSERT(tr_cgroup_freeze(cg, 1000000, NULL, NULL) < 0 || ts_proc_state(q) != 'T');
        CU_ASSERT(tr_cgroup_signal(cg, SIGKILL, NULL) <= 0);
        CU_ASSERT_TRUE(tr_cgroup_attach(cg, q, NULL) < 0);
        usleep(100000);
        CU_ASSERT_TRUE(ts_alive(q));
        tr_freeze_state st = TR_THAWED;
        CU_ASSERT_EQUAL(tr_cgroup_thaw(next, 1000000, &st, NULL), 0); /* in case: q must not stay frozen */
        CU_ASSERT_EQUAL(tr_cgroup_members(next, &m, NULL), 0);
        CU_ASSERT_TRUE(m.n == 1 && tr_pidset_contains(&m, q)); /* q still in the new cgroup */
        printf("\n    (%s) old handle on a reused path: members %d, kill %d; q alive and in the new cgroup\n", tag,
               members, kill);
        ts_kill_reap(q);
        kill_destroy(next);
}

HOST_TEST(lazy_reused_path, "opener: a removed and remade path is not reached by the old handle")

int main(void)
{
        CU_TestInfo host[] = {
                { "create_members", host_create_members },
                { "opener_lazy", host_opener_lazy },
                { "lazy_transient", host_lazy_transient },
                { "lazy_reused_path", host_lazy_reused_path },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo v1[] = {
                { "create_members", v1_create_members },
                { "opener_lazy", v1_opener_lazy },
                { "lazy_transient", v1_lazy_transient },
                { "lazy_reused_path", v1_lazy_reused_path },
                CU_TEST_INFO_NULL,
        };
        return cgt_run("cgroup", host, v1, NULL);
}
