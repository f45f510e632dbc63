/* test_cgroup_gate.c - the safety gate (cgroup-gate.c): every destructive operation
 * (kill, freeze, thaw, signal, destroy) refuses a hierarchy root, a handle opened without
 * TR_CG_MAY_ACT (attach and write too), a cgroup holding the caller and one holding the
 * caller's parent (its chain walked by pid, and held by /proc/PID fds as procd holds it);
 * bad paths are refused at open (integration, root; see cgtest.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgtest.h"
#include "trackers/ancestry.h"

static int refusals(tr_cgroup *cg, bool destroy_too)
{
        tr_kill_result res;
        tr_freeze_state st;
        int bad = 0;
        if (tr_cgroup_kill(cg, SEC, &res, NULL) != -EPERM)
                bad |= 1;
        tr_kill_result_free(&res);
        if (tr_cgroup_freeze(cg, SEC, &st, NULL) != -EPERM)
                bad |= 2;
        if (tr_cgroup_thaw(cg, SEC, &st, NULL) != -EPERM)
                bad |= 4;
        if (tr_cgroup_signal(cg, SIGCONT, NULL) != -EPERM)
                bad |= 8;
        if (destroy_too && tr_cgroup_destroy(cg, SEC, NULL) != -EPERM)
                bad |= 16;
        return bad;
}

typedef struct self_arg {
        const tr_hierarchies *hs;
        const char *path;
} self_arg;

/* In a child: move ourselves into the cgroup, then every destructive op must refuse. */
static int run_self_check(void *arg)
{
        self_arg *sa = arg;
        tr_cgroup *cg = NULL;
        if (tr_cgroup_open(sa->hs, sa->path, TR_CG_MAY_ACT | TR_CG_OWNED, &cg, NULL) < 0)
                return 100;
        if (tr_cgroup_attach(cg, getpid(), NULL) < 0)
                return 101;
        int bad = refusals(cg, true);
        tr_cgroup_free(cg);
        return bad;
}

typedef struct anc_arg {
        const tr_hierarchies *hs;
        const char *parent_cg; /* A sits here */
        const char *child_cg;  /* B moves here */
} anc_arg;

static int run_anc_child(void *arg)
{
        anc_arg *aa = arg;
        tr_cgroup *mine = NULL, *theirs = NULL;
        if (tr_cgroup_open(aa->hs, aa->child_cg, TR_CG_MAY_ACT, &mine, NULL) < 0 ||
            tr_cgroup_attach(mine, getpid(), NULL) < 0)
                return 100;
        if (tr_cgroup_open(aa->hs, aa->parent_cg, TR_CG_MAY_ACT | TR_CG_OWNED, &theirs, NULL) < 0)
                return 101;
        int bad = refusals(theirs, false);
        tr_cgroup_free(theirs);
        /* the same through the chain held by /proc/PID fds (procd's way, ancestry.h):
         * walked at the first check, held at the others, still refusing */
        static tr_hierarchies held;
        held = *aa->hs;
        if (tr_ancestry_new(&held.ancestry) < 0 ||
            tr_cgroup_open(&held, aa->parent_cg, TR_CG_MAY_ACT | TR_CG_OWNED, &theirs, NULL) < 0)
                return 102;
        bad |= refusals(theirs, false) << 4;
        bool walked_once = tr_ancestry_walks(held.ancestry) == 1;
        tr_cgroup_free(theirs);
        tr_ancestry_free(held.ancestry);
        tr_cgroup_free(mine);
        return bad ? bad : walked_once ? 0 : 103;
}

/* A moves itself into parent_cg and forks B; B moves to child_cg: parent_cg no longer holds
 * B but holds its parent A, so B must refuse to kill/freeze/signal it. */
static int run_anc_parent(void *arg)
{
        anc_arg *aa = arg;
        tr_cgroup *cg = NULL;
        if (tr_cgroup_open(aa->hs, aa->parent_cg, TR_CG_MAY_ACT, &cg, NULL) < 0 ||
            tr_cgroup_attach(cg, getpid(), NULL) < 0)
                return 110;
        tr_cgroup_free(cg);
        pid_t b = ts_fork(run_anc_child, aa);
        if (b <= 1)
                return 111;
        int st = ts_wait(b, 20000);
        return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 112;
}

static void check_safety(const tr_hierarchies *hs, const char *tag)
{
        tr_error err = { 0 };
        /* hierarchy roots */
        _cleanup_cgroup_ tr_cgroup *root = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(hs, "/", TR_CG_MAY_ACT | TR_CG_OWNED, &root, &err), 0);
        CU_ASSERT_EQUAL(refusals(root, true), 0);
        CU_ASSERT_EQUAL(tr_cgroup_kill(root, SEC, &(tr_kill_result){ 0 }, &err), -EPERM);
        CU_ASSERT_EQUAL(err.code, EPERM);

        char name[64], path[PATH_MAX];
        snprintf(name, sizeof name, "safe-%s", tag);
        tr_cgroup *mine = make_cg(hs, name);
        if (!mine)
                return;
        ts_cgroup_path(path, sizeof path, name);
        /* without MAY_ACT */
        _cleanup_cgroup_ tr_cgroup *ro = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cgroup_open(hs, path, 0, &ro, &err), 0);
        CU_ASSERT_EQUAL(refusals(ro, true), 0);
        /* attach and write change the cgroup: refused too */
        pid_t outsider = ts_fork(ts_sleep_forever, NULL);
        CU_ASSERT_FATAL(outsider > 1);
        CU_ASSERT_EQUAL(tr_cgroup_attach(ro, outsider, &err), -EPERM);
        CU_ASSERT_EQUAL(err.code, EPERM);
        for (int i = 0; i < hs->n; i++) {
                if (tr_cgroup_dirfd(ro, i) < 0)
                        continue;
                char v[32];
                snprintf(v, sizeof v, "%d", (int) outsider);
                CU_ASSERT_EQUAL(tr_cgroup_write(ro, i, "cgroup.procs", v, &err), -EPERM);
        }
        _cleanup_pidset_ tr_pidset none = TR_PIDSET_INIT;
        CU_ASSERT_EQUAL(tr_cgroup_members(ro, &none, &err), 0);
        CU_ASSERT_FALSE(tr_pidset_contains(&none, outsider));
        ts_kill_reap(outsider);
        tr_usage u; /* reading is fine */
        CU_ASSERT_EQUAL(tr_cgroup_usage(ro, &u, &err), 0);

        /* a cgroup holding the caller */
        self_arg sa = { hs, path };
        pid_t c = ts_fork(run_self_check, &sa);
        CU_ASSERT_FATAL(c > 1);
        int st = ts_wait(c, 20000);
        CU_ASSERT(st >= 0 && WIFEXITED(st));
        if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st))
                printf("\n    self-check child: status %d\n", WEXITSTATUS(st));
        CU_ASSERT_EQUAL(WEXITSTATUS(st), 0);

        /* a cgroup holding an ancestor process of the caller (its parent) */
        char aname[64], apath[PATH_MAX], bpath[PATH_MAX];
        snprintf(aname, sizeof aname, "safe-anc-%s", tag);
        tr_cgroup *acg = make_cg(hs, aname);
        snprintf(aname, sizeof aname, "safe-anc-b-%s", tag);
        tr_cgroup *bcg = make_cg(hs, aname);
        if (acg && bcg) {
                anc_arg aa = { hs, tr_cgroup_path(acg, 0), tr_cgroup_path(bcg, 0) };
                snprintf(apath, sizeof apath, "%s", aa.parent_cg);
                snprintf(bpath, sizeof bpath, "%s", aa.child_cg);
                aa.parent_cg = apath;
                aa.child_cg = bpath;
                pid_t a = ts_fork(run_anc_parent, &aa);
                CU_ASSERT_FATAL(a > 1);
                st = ts_wait(a, 30000);
                if (!(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0))
                        printf("\n    ancestor check: status 0x%x\n", st);
                CU_ASSERT(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        kill_destroy(acg);
        kill_destroy(bcg);

        /* bad paths */
        tr_cgroup *x = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open(hs, "relative", 0, &x, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_open(hs, "/a/../b", 0, &x, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_create(hs, "/x/..", &x, &err), -EINVAL);
        CU_ASSERT_EQUAL(tr_cgroup_create(hs, "/", &x, &err), -EINVAL);
        ts_cgroup_path(path, sizeof path, "never-created");
        CU_ASSERT_EQUAL(tr_cgroup_open(hs, path, 0, &x, &err), -ENOENT);
        CU_ASSERT_PTR_NULL(x);
        kill_destroy(mine);
}

HOST_TEST(safety, "safety")

int main(void)
{
        CU_TestInfo host[] = {
                { "safety", host_safety },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo v1[] = {
                { "safety", v1_safety },
                CU_TEST_INFO_NULL,
        };
        return cgt_run("cgroup-gate", host, v1, NULL);
}
