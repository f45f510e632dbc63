/* test_classic_authority.c - a classic request has no more authority than condor_procd
 * gave, even from the -C uid (which procd treats as root): REGISTER_SUBFAMILY of a process
 * outside the root family's tree (-P's) answers PROCESS_NOT_FAMILY and moves nothing;
 * TRACK_FAMILY_VIA_CGROUP names only cgroups below the family base or the site's
 * --classic-cgroup-base, and makes none elsewhere.  The client runs as the -C uid (a forked
 * child that setuid()s), as HTCondor's daemons do. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classic-client.h"
#include "classic-procs.h"
#include "harness.h"
#include "testsupport.h"
#include "trackers/cgroup.h"

#define CONDOR_UID 65534

static cc_daemon D;
static cp_forker F;                 /* -P: the root family is its tree */
static struct tr_cgroup *service_cg; /* procd's own cgroup: its families' base lies below */
static struct tr_cgroup *classic_cg; /* --classic-cgroup-base */
static char classic_base[256], elsewhere[256];

static int suite_init(void)
{
        if (cp_forker_start(&F) < 0)
                return 1;
        service_cg = cp_service_cgroup("procd");
        classic_cg = cp_service_cgroup("condor");
        ts_cgroup_path(classic_base, sizeof classic_base, "condor");
        ts_cgroup_path(elsewhere, sizeof elsewhere, "elsewhere");
        char pid[16];
        snprintf(pid, sizeof pid, "%d", (int) F.pid);
        const char *args[] = { "-S", "60", "-P", pid, "-C", "65534", "-L", "@LOG", "--classic-cgroup-base",
                               classic_base, NULL };
        if (cc_daemon_start_with(&D, args, service_cg ? cp_enter_cgroup : NULL, service_cg) < 0) {
                fprintf(stderr, "daemon: %s\n", D.errtext);
                return 1;
        }
        /* the -C uid makes its reply FIFOs in the address folder, as condor's daemons do in
         * $(LOCK) or $(RUN), which the condor uid owns */
        return chown(D.dir, CONDOR_UID, (gid_t) -1) < 0;
}

static int suite_clean(void)
{
        int st = cc_daemon_stop(&D);
        cp_forker_kill(&F);
        tr_cgroup_free(service_cg);
        tr_cgroup_free(classic_cg);
        return !(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

typedef struct call {
        int cmd;
        pid_t pid;
        const char *text; /* TRACK_VIA_CGROUP's name */
} call;

/* One request as the -C uid: the protocol's answer, or -1 when the exchange failed. */
static int as_condor(call c)
{
        fflush(NULL);
        pid_t child = fork();
        if (child == 0) {
                if (setgroups(0, NULL) < 0 || setgid(CONDOR_UID) < 0 || setuid(CONDOR_UID) < 0)
                        _exit(101);
                cc_client cl;
                if (cc_open(&cl, D.addr, 0, 0) < 0)
                        _exit(102);
                int r = c.cmd == CC_REGISTER_SUBFAMILY ? cc_register(&cl, c.pid, 0, -1)
                        : c.cmd == CC_TRACK_VIA_CGROUP ? cc_track_cgroup(&cl, c.pid, c.text)
                                                       : cc_simple(&cl, c.cmd, c.pid);
                cc_close(&cl);
                _exit(r >= 0 && r < 100 ? r : 103);
        }
        int st = ts_wait(child, 30000);
        return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) < 100 ? WEXITSTATUS(st) : -1;
}

#define CHECK_CALL(c, expect)                                                                        \
        do {                                                                                         \
                int _r = as_condor(c);                                                               \
                if (_r != (expect))                                                                  \
                        fprintf(stderr, "%s:%d: %s -> %d, expected %d\n", __FILE__, __LINE__, #c, _r, \
                                (int) (expect));                                                     \
                CU_ASSERT_EQUAL(_r, (expect));                                                       \
        } while (0)

static void read_cgroup(pid_t pid, char *buf, size_t size)
{
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/cgroup", (int) pid);
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, size - 1, f) : 0;
        buf[n] = '\0';
        if (f)
                fclose(f);
}

/* A process outside -P's tree (this program's child) is refused with 7 and stays where it
 * was; one inside (the forker's child) is registered. */
static void test_register_outside_root_tree(void)
{
        pid_t outsider = ts_sleeper();
        CU_ASSERT_FATAL(outsider > 1);
        char before[4096], after[4096];
        read_cgroup(outsider, before, sizeof before);
        CHECK_CALL(((call) { CC_REGISTER_SUBFAMILY, outsider, NULL }), CC_PROCESS_NOT_FAMILY);
        read_cgroup(outsider, after, sizeof after);
        CU_ASSERT_STRING_EQUAL(before, after); /* moved nowhere */
        CHECK_CALL(((call) { CC_KILL_FAMILY, outsider, NULL }), CC_FAMILY_NOT_FOUND);
        CU_ASSERT(ts_alive(outsider));

        pid_t member = cp_forker_spawn(&F, 's', 0);
        CU_ASSERT_FATAL(member > 1);
        CHECK_CALL(((call) { CC_REGISTER_SUBFAMILY, member, NULL }), CC_SUCCESS);
        CHECK_CALL(((call) { CC_UNREGISTER_FAMILY, member, NULL }), CC_SUCCESS);
        /* the root family's own root (-P) is inside too, but it roots the root family */
        CHECK_CALL(((call) { CC_REGISTER_SUBFAMILY, F.pid, NULL }), CC_ALREADY_REGISTERED);
        ts_kill_reap(outsider);
}

static bool exists_anywhere(const char *cgroup)
{
        const tr_hierarchies *hs = ts_hierarchies();
        for (int i = 0; i < hs->n; i++) {
                char p[8192];
                snprintf(p, sizeof p, "%s%s", hs->h[i].mount_point, cgroup);
                struct stat st;
                if (stat(p, &st) == 0)
                        return true;
        }
        return false;
}

/* TRACK_FAMILY_VIA_CGROUP: refused (14) outside the bases, and nothing is made there;
 * accepted below --classic-cgroup-base, relative (libcgroup-era) or absolute. */
static void test_cgroup_bases(void)
{
        if (!classic_cg) {
                ts_skip("cgroup bases", "no test cgroup could be made");
                return;
        }
        pid_t member = cp_forker_spawn(&F, 's', 0);
        CU_ASSERT_FATAL(member > 1);
        CHECK_CALL(((call) { CC_REGISTER_SUBFAMILY, member, NULL }), CC_SUCCESS);
        char name[512];
        snprintf(name, sizeof name, "%s/job", elsewhere);
        CHECK_CALL(((call) { CC_TRACK_VIA_CGROUP, member, name }), CC_NO_CGROUP_ID_AVAILABLE);
        CU_ASSERT_FALSE(exists_anywhere(elsewhere));
        CHECK_CALL(((call) { CC_TRACK_VIA_CGROUP, member, "procd-authority-test-top" }), CC_NO_CGROUP_ID_AVAILABLE);
        CU_ASSERT_FALSE(exists_anywhere("/procd-authority-test-top"));
        CHECK_CALL(((call) { CC_TRACK_VIA_CGROUP, member, classic_base }), CC_NO_CGROUP_ID_AVAILABLE); /* the base itself */
        snprintf(name, sizeof name, "%s/slot1", classic_base + 1); /* relative, as libcgroup named them */
        CHECK_CALL(((call) { CC_TRACK_VIA_CGROUP, member, name }), CC_SUCCESS);
        char own[512];
        CU_ASSERT(cp_v2_cgroup(member, own, sizeof own) == false || strstr(own, "/condor/slot1") != NULL);
        CHECK_CALL(((call) { CC_KILL_FAMILY, member, NULL }), CC_SUCCESS);
        CU_ASSERT(ph_wait_gone(member, 10000));
        CHECK_CALL(((call) { CC_UNREGISTER_FAMILY, member, NULL }), CC_SUCCESS);
}

static CU_TestInfo tests[] = {
        { "REGISTER outside the root family's tree: 7, nothing moved", test_register_outside_root_tree },
        { "TRACK_FAMILY_VIA_CGROUP only below the bases", test_cgroup_bases },
        CU_TEST_INFO_NULL,
};


int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        if (cc_daemon_is_condor())
                return ts_skip_program("classic authority", "procd's own limits (condor_procd has no command 14)");
        static const char *const probe[] = { "-S", "60", NULL };
        int r = cc_can_run("classic authority", probe);
        if (r)
                return r;
        return ts_run_suite("classic authority (as the -C uid)", suite_init, suite_clean, tests);
}
