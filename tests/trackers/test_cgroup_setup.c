/* test_cgroup_setup.c - create, attach, destroy (cgroup-setup.c) on real cgroups, and a
 * handle joined from parts or opened again from another (cgroup.c) (integration, root; see
 * cgtest.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgtest.h"
#include "trackers/util.h"

static void check_destroy(const tr_hierarchies *hs, const char *tag)
{
        char name[64], deep[96];
        snprintf(name, sizeof name, "d-%s", tag);
        snprintf(deep, sizeof deep, "%s/a/b/c", name);
        _cleanup_cgroup_ tr_cgroup *cg = make_cg(hs, name);
        _cleanup_cgroup_ tr_cgroup *dc = make_cg(hs, deep);
        snprintf(deep, sizeof deep, "%s/a2", name);
        _cleanup_cgroup_ tr_cgroup *d2 = make_cg(hs, deep);
        if (!cg || !dc || !d2)
                return;
        tr_error err = { 0 };
        /* busy: a process inside - EBUSY at the bound, nothing lost */
        pid_t p = start_in(dc, ts_sleep_forever, NULL);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, 100000, &err), -EBUSY);
        assert_everywhere(dc, true);
        ts_kill_reap(p);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, 5 * SEC, &err), 0);
        assert_everywhere(cg, false);
        assert_everywhere(dc, false);
        assert_everywhere(d2, false);
        /* already gone: fine */
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, SEC, &err), 0);
        tr_usage u;
        CU_ASSERT(tr_cgroup_usage(cg, &u, &err) < 0); /* gone everywhere: an error, not zeros */
        /* acting on a removed cgroup is reported, never a false "empty" (the family may
         * have been moved out before the rmdir: the caller falls back to /proc) */
        tr_kill_result res;
        tr_freeze_state st;
        CU_ASSERT_EQUAL(tr_cgroup_kill(cg, SEC, &res, &err), -ENODEV);
        tr_kill_result_free(&res);
        CU_ASSERT_EQUAL(tr_cgroup_freeze(cg, SEC, &st, &err), -ENODEV);
        CU_ASSERT_EQUAL(tr_cgroup_signal(cg, SIGTERM, &err), -ENODEV);
        bool pop = true;
        int r = tr_cgroup_populated(cg, &pop, &err);
        CU_ASSERT(r < 0 || !pop);
}

/* v2's no-internal-processes rule: a job cgroup holding a process gets a child cgroup
 * (its processes move into its leaf child, controllers are enabled for the children), and
 * a process attached to it afterwards goes to that leaf.  The family still covers all. */
static void check_leaves(const tr_hierarchies *hs, const char *tag)
{
        char name[64], sub[80];
        snprintf(name, sizeof name, "leaves-%s", tag);
        snprintf(sub, sizeof sub, "%s/sub", name);
        tr_cgroup *top = make_cg(hs, name);
        if (!top)
                return;
        pid_t p0 = start_in(top, ts_sleep_forever, NULL);
        _cleanup_cgroup_ tr_cgroup *child = make_cg(hs, sub);
        CU_ASSERT_FATAL(child != NULL);
        pid_t p1 = start_in(child, ts_sleep_forever, NULL);
        pid_t p2 = start_in(top, ts_sleep_forever, NULL); /* after the child exists */
        int v2 = hs->v2;
        char ctl[256] = "";
        if (v2 >= 0)
                (void) tr_cgroup_read(top, v2, "cgroup.subtree_control", ctl, sizeof ctl, NULL);
        bool enabled = ctl[0] && ctl[0] != '\n';
        printf("\n    leaves (%s): subtree_control of the job: '%.*s'\n", tag, (int) strcspn(ctl, "\n"), ctl);
        if (enabled) {
                /* the kernel's rule held: the job itself holds no process, its leaf does */
                char procs[256] = "x";
                CU_ASSERT(tr_cgroup_read(top, v2, "cgroup.procs", procs, sizeof procs, NULL) >= 0);
                CU_ASSERT_STRING_EQUAL(procs, "");
                tr_pid_cgroups pc;
                CU_ASSERT_EQUAL_FATAL(tr_pid_cgroups_read(hs, p0, &pc, NULL), 0);
                char want[PATH_MAX];
                snprintf(want, sizeof want, "%s/" TR_CG_LEAF, tr_cgroup_path(top, v2));
                CU_ASSERT_STRING_EQUAL(pc.paths[v2] ? pc.paths[v2] : "", want);
                tr_pid_cgroups_clear(&pc);
                /* and the child got controllers */
                char cc[256] = "";
                CU_ASSERT(tr_cgroup_read(child, v2, "cgroup.controllers", cc, sizeof cc, NULL) > 1);
        } else {
                printf("    (no controller to enable for children here: processes stay where attached)\n");
        }
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_members(top, &m, &err), 0);
        CU_ASSERT_EQUAL(m.n, 3);
        CU_ASSERT_TRUE(tr_pidset_contains(&m, p0) && tr_pidset_contains(&m, p1) && tr_pidset_contains(&m, p2));
        tr_usage u;
        CU_ASSERT_EQUAL(tr_cgroup_usage(top, &u, &err), 0);
        CU_ASSERT_EQUAL(u.num_procs.value, 3);
        kill_destroy(top); /* kill covers the leaf and the child; destroy removes both */
        ts_kill_reap(p0);
        ts_kill_reap(p1);
        ts_kill_reap(p2);
}

/* Whether two fds name the same directory. */
static bool same_dir(int a, int b)
{
        struct stat sa, sb;
        return a >= 0 && b >= 0 && a != b && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
               sa.st_ino == sb.st_ino;
}

/* A cgroup made in parts (one hierarchy as a child of a parent handle, the others by path)
 * joined into one handle (tr_cgroup_join, as procd-starter makes its job cgroup), and a
 * second handle on it with its fds duplicated (tr_cgroup_open_same). */
static void check_join(const tr_hierarchies *hs, const char *tag)
{
        char name[64], sub[96];
        snprintf(name, sizeof name, "j-%s", tag);
        tr_cgroup *top = make_cg(hs, name);
        if (!top)
                return;
        int first = tr_cgroup_primary_index(top);
        uint32_t one = 1u << first;
        tr_error err = { 0 };
        tr_cgroup *part = NULL, *rest = NULL, *same = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_create_child(top, "c", one, true, &part, &err), 0);
        ts_cgroup_path(sub, sizeof sub, name);
        snprintf(sub + strlen(sub), sizeof sub - strlen(sub), "/c");
        bool others = false;
        for (int i = 0; i < hs->n; i++)
                others = others || (i != first && tr_cgroup_path(top, i));
        if (others) {
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_create_in(hs, sub, TR_HIER_ALL & ~one, &rest, &err), 0);
                CU_ASSERT_PTR_NULL(tr_cgroup_path(rest, first));
                /* other rights: refused, and the part freed */
                tr_cgroup *ro = NULL;
                CU_ASSERT_EQUAL_FATAL(tr_cgroup_open_in(hs, sub, one, 0, &ro, &err), 0);
                CU_ASSERT_EQUAL(tr_cgroup_join(rest, ro, &err), -EINVAL);
                CU_ASSERT_PTR_NULL(tr_cgroup_path(rest, first));
                CU_ASSERT_EQUAL(tr_cgroup_join(rest, part, &err), 0);
        } else {
                rest = part; /* one hierarchy: nothing to join */
        }
        for (int i = 0; i < hs->n; i++) {
                if (!tr_cgroup_path(top, i))
                        continue;
                CU_ASSERT_PTR_NOT_NULL_FATAL(tr_cgroup_path(rest, i));
                CU_ASSERT(strcmp(tr_cgroup_path(rest, i), sub) == 0);
                CU_ASSERT(tr_cgroup_dirfd(rest, i) >= 0);
        }
        assert_everywhere(rest, true);
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open_same(rest, TR_CG_MAY_ACT, &same, &err), 0);
        for (int i = 0; i < hs->n; i++) {
                if (!tr_cgroup_path(rest, i)) {
                        CU_ASSERT_PTR_NULL(tr_cgroup_path(same, i));
                        continue;
                }
                CU_ASSERT(strcmp(tr_cgroup_path(same, i), tr_cgroup_path(rest, i)) == 0);
                CU_ASSERT(same_dir(tr_cgroup_dirfd(same, i), tr_cgroup_dirfd(rest, i)));
                CU_ASSERT(fcntl(tr_cgroup_dirfd(same, i), F_GETFD) & FD_CLOEXEC);
        }
        /* the copy acts on the cgroup: a process started through it is a member of both */
        pid_t p = start_in(same, ts_sleep_forever, NULL);
        CU_ASSERT_EQUAL(wait_members(rest, 1, 5000), 1u);
        ts_kill_reap(p);
        tr_cgroup_free(same);
        kill_destroy(rest);
        kill_destroy(top);
}

HOST_TEST(destroy, "destroy")
HOST_TEST(leaves, "v2 processes in leaves")
HOST_TEST(join, "join and open_same")

int main(void)
{
        CU_TestInfo host[] = {
                { "destroy", host_destroy },
                { "leaves", host_leaves },
                { "a cgroup made in parts joined, a second handle on it", host_join },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo v1[] = {
                { "destroy", v1_destroy },
                { "leaves", v1_leaves },
                { "a cgroup made in parts joined, a second handle on it", v1_join },
                CU_TEST_INFO_NULL,
        };
        return cgt_run("cgroup-setup", host, v1, NULL);
}
