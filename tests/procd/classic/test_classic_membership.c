/* test_classic_membership.c - membership of /proc-tracked families as condor_procd keeps
 * it, over the classic protocol with family cgroups off (PROCD_FAMILY_CGROUPS=off):
 *  - a member stays one until it exits: orphaned (its parent killed, it is reparented to
 *    this test, the subreaper and the root family's root), then after
 *    TRACK_FAMILY_VIA_ENVIRONMENT with a marker it lacks;
 *  - UNREGISTER of a subfamily whose root was orphaned folds that root into the parent;
 *  - a family registered below (or at) a member orphaned out of a family whose root is
 *    dead is placed under that family, not under the root family;
 *  - KILL_FAMILY answers success only once those members are dead.
 *
 * The processes are chains this test forks: R -> M -> G -> H (each the child of the one
 * before, all sleeping; R forks M once registered); killing M orphans G (and H stays G's
 * child).  Every process is
 * ended by pid here (pid > 1), started by this test.  $PROCD_CLASSIC_DAEMON runs the same
 * cases against HTCondor's condor_procd. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classic-client.h"
#include "testsupport.h"
#include "trackers/proc-read.h"

static cc_daemon D;
static cc_client C;

/* family cgroups off: every family is answered by the /proc tracker */
static const char *const daemon_args[] = { "-S", "60", NULL };

static int suite_init(void)
{
        if (cc_daemon_start(&D, daemon_args) < 0)
                return 1;
        return cc_open(&C, D.addr, 0, 0) < 0;
}

static int suite_clean(void)
{
        cc_close(&C);
        int st = cc_daemon_stop(&D);
        return !(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- chains of processes -------------------------------------------------------------- */

#define CHAIN_MAX 4

typedef struct chain {
        pid_t pid[CHAIN_MAX]; /* pid[0] our child, pid[i] the child of pid[i - 1] */
        uint64_t start[CHAIN_MAX];
        int n, want;
        int go_fd, pids_fd;   /* R waits for a byte on go; the levels report on pids */
} chain;

/* In the chain's first process: wait for the go (so that the rest is forked after R's
 * registration: what a root had at registration stays in the parent family), then each
 * level forks the next one (but the last), reports it and sleeps; the child goes on one
 * level down. */
static void chain_run(int n, int go_fd, int wfd)
{
        char c0;
        if (read(go_fd, &c0, 1) != 1)
                _exit(1);
        close(go_fd);
        for (int level = 0; level + 1 < n; level++) {
                pid_t c = fork();
                if (c < 0)
                        _exit(1);
                if (c > 0) {
                        /* the levels write in any order: each says which one it forked */
                        pid_t msg[2] = { level + 1, c };
                        if (write(wfd, msg, sizeof msg) != sizeof msg)
                                _exit(1);
                        break;
                }
        }
        close(wfd);
        for (;;)
                pause();
}

/* R alone (it waits for chain_grow); 0 or -errno. */
static int chain_start(chain *ch, int n)
{
        int go[2], p[2];
        memset(ch, 0, sizeof *ch);
        if (pipe(go) < 0)
                return -errno;
        if (pipe(p) < 0) {
                close(go[0]);
                close(go[1]);
                return -errno;
        }
        pid_t r = fork();
        if (r < 0)
                return -errno;
        if (r == 0) {
                close(go[1]);
                close(p[0]);
                chain_run(n, go[0], p[1]);
        }
        close(go[0]);
        close(p[1]);
        ch->go_fd = go[1];
        ch->pids_fd = p[0];
        ch->pid[0] = r;
        ch->n = 1;
        ch->want = n;
        tr_pid_start_ticks(r, &ch->start[0]);
        return 0;
}

/* R forks the rest of the chain; 0 or -EPROTO. */
static int chain_grow(chain *ch)
{
        if (write(ch->go_fd, "g", 1) != 1)
                return -EPROTO;
        close(ch->go_fd);
        pid_t msg[2];
        while (ch->n < ch->want && read(ch->pids_fd, msg, sizeof msg) == sizeof msg && msg[0] > 0 &&
               msg[0] < ch->want && ch->pid[msg[0]] == 0) {
                ch->pid[msg[0]] = msg[1];
                ch->n++;
        }
        close(ch->pids_fd);
        for (int i = 1; i < ch->n; i++)
                tr_pid_start_ticks(ch->pid[i], &ch->start[i]);
        return ch->n == ch->want ? 0 : -EPROTO;
}

/* SIGKILL level i (pid > 1, started by this test); reaped when it is our child. */
static void chain_kill(chain *ch, int i)
{
        pid_t pid = ch->pid[i];
        if (pid <= 1 || !tr_pid_alive_as(pid, ch->start[i]))
                return;
        kill(pid, SIGKILL);
        if (i == 0)
                waitpid(pid, NULL, 0);
        /* reparented to us (the subreaper) when its parent died first */
        for (int t = 0; t < 2000 && tr_pid_alive_as(pid, ch->start[i]); t++)
                usleep(1000); /* a bound, not a timing: the kill is SIGKILL */
        ts_reap_orphans(0);
}

static void chain_end(chain *ch)
{
        for (int i = ch->n; i-- > 0;)
                chain_kill(ch, i);
        ts_reap_orphans(1000);
}

/* Whether pid's parent is now this test (it was orphaned and reparented to us). */
static bool reparented_to_us(pid_t pid)
{
        pid_t pp = 0;
        for (int t = 0; t < 2000; t++) { /* a bound: the reparenting follows the parent's death */
                if (tr_proc_ppid(pid, &pp) == 0 && pp == getpid())
                        return true;
                usleep(1000);
        }
        return false;
}

/* ---- DUMP helpers --------------------------------------------------------------------- */

static bool dump_holds(pid_t family, pid_t pid)
{
        cc_dump_family *f = NULL;
        size_t n = 0;
        if (cc_dump(&C, family, &f, &n) != CC_SUCCESS || n == 0)
                return false;
        bool found = false;
        for (int32_t i = 0; i < f[0].nproc && !found; i++)
                found = f[0].procs[i].pid == pid;
        cc_dump_free(f, n);
        return found;
}

/* parent_root of the family rooted at root, -1 when not found. */
static pid_t dump_parent(pid_t root)
{
        cc_dump_family *f = NULL;
        size_t n = 0;
        if (cc_dump(&C, 0, &f, &n) != CC_SUCCESS)
                return -1;
        const cc_dump_family *x = cc_dump_find(f, n, root);
        pid_t p = x ? x->parent_root : -1;
        cc_dump_free(f, n);
        return p;
}

#define CHECK_MEMBER(family, pid, what)                                                        \
        do {                                                                                   \
                CU_ASSERT_EQUAL(cc_snapshot(&C), CC_SUCCESS);                                  \
                bool _in = dump_holds((family), (pid));                                        \
                if (!_in)                                                                      \
                        fprintf(stderr, "%s:%d: %d is not a member of family %d: %s\n", __FILE__, __LINE__, \
                                (int) (pid), (int) (family), (what));                          \
                CU_ASSERT(_in);                                                                \
        } while (0)

/* R -> M -> G with R registered as a family before G was forked. */
static void registered_chain(chain *ch)
{
        CU_ASSERT_FATAL(chain_start(ch, 3) == 0);
        CHECK_ERR(cc_register(&C, ch->pid[0], getpid(), 60), CC_SUCCESS);
        CU_ASSERT_FATAL(chain_grow(ch) == 0);
}

/* ---- cases ---------------------------------------------------------------------------- */

/* An orphaned member stays one, also after TRACK_FAMILY_VIA_ENVIRONMENT with a marker it
 * lacks; KILL_FAMILY kills it. */
static void test_orphan_after_track_env(void)
{
        chain ch;
        registered_chain(&ch);
        pid_t r = ch.pid[0], g = ch.pid[2];
        CHECK_MEMBER(r, g, "a grandchild of the root");
        chain_kill(&ch, 1); /* G orphaned */
        CU_ASSERT(reparented_to_us(g));
        CHECK_MEMBER(r, g, "orphaned");
        char envid[CC_ENVID_SIZE];
        snprintf(envid, sizeof envid, "_CONDOR_ANCESTOR_%d=%d:%ld:%u", (int) getpid(), (int) r, (long) time(NULL),
                 (unsigned) getpid());
        const char *ids[] = { envid };
        uint8_t env[CC_PIDENVID_BYTES];
        cc_pidenvid(env, ids, 1);
        CHECK_ERR(cc_track_env(&C, r, env), CC_SUCCESS); /* none of the chain has it */
        CHECK_MEMBER(r, g, "orphaned, without the marker, after TRACK_FAMILY_VIA_ENVIRONMENT");
        CHECK_ERR(cc_simple(&C, CC_KILL_FAMILY, r), CC_SUCCESS);
        CU_ASSERT(!tr_pid_alive_as(g, ch.start[2]));
        CU_ASSERT(!tr_pid_alive_as(r, ch.start[0]));
        CHECK_ERR(cc_simple(&C, CC_UNREGISTER_FAMILY, r), CC_SUCCESS);
        chain_end(&ch);
}

/* UNREGISTER of a subfamily whose root was orphaned: the root folds into the parent
 * family, and KILL_FAMILY of the parent kills it. */
static void test_unregister_orphaned_subfamily(void)
{
        chain ch;
        registered_chain(&ch);
        pid_t r = ch.pid[0], g = ch.pid[2];
        CHECK_ERR(cc_register(&C, g, getpid(), 60), CC_SUCCESS); /* G: a subfamily of R's */
        CU_ASSERT_EQUAL(dump_parent(g), r);
        CHECK_MEMBER(g, g, "the subfamily's root");
        chain_kill(&ch, 1); /* G orphaned */
        CU_ASSERT(reparented_to_us(g));
        CHECK_MEMBER(g, g, "its orphaned root");
        CHECK_ERR(cc_simple(&C, CC_UNREGISTER_FAMILY, g), CC_SUCCESS);
        CHECK_MEMBER(r, g, "the orphaned root of an unregistered subfamily");
        CHECK_ERR(cc_simple(&C, CC_KILL_FAMILY, r), CC_SUCCESS);
        CU_ASSERT(!tr_pid_alive_as(g, ch.start[2]));
        CHECK_ERR(cc_simple(&C, CC_UNREGISTER_FAMILY, r), CC_SUCCESS);
        chain_end(&ch);
}

/* A family whose root died keeps its orphaned member G (and G's child H); families
 * registered at G and at H are placed under it, not under the root family. */
static void test_placement_under_dead_root(void)
{
        chain ch;
        CU_ASSERT_FATAL(chain_start(&ch, 4) == 0); /* R -> M -> G -> H */
        pid_t r = ch.pid[0];
        CHECK_ERR(cc_register(&C, r, getpid(), 60), CC_SUCCESS);
        CU_ASSERT_FATAL(chain_grow(&ch) == 0);
        pid_t g = ch.pid[2], h = ch.pid[3];
        CHECK_MEMBER(r, h, "a descendant of the root");
        chain_kill(&ch, 1); /* G orphaned, H still G's child */
        CU_ASSERT(reparented_to_us(g));
        chain_kill(&ch, 0); /* the root dies; the family stays registered */
        CHECK_MEMBER(r, g, "orphaned, the root dead");
        CHECK_MEMBER(r, h, "the child of an orphaned member, the root dead");
        CHECK_ERR(cc_register(&C, h, getpid(), 60), CC_SUCCESS);
        pid_t ph = dump_parent(h);
        if (ph != r)
                fprintf(stderr, "family %d placed under %d, expected %d\n", (int) h, (int) ph, (int) r);
        CU_ASSERT_EQUAL(ph, r);
        CHECK_ERR(cc_register(&C, g, getpid(), 60), CC_SUCCESS);
        pid_t pg = dump_parent(g);
        if (pg != r)
                fprintf(stderr, "family %d placed under %d, expected %d\n", (int) g, (int) pg, (int) r);
        CU_ASSERT_EQUAL(pg, r);
        CHECK_ERR(cc_simple(&C, CC_KILL_FAMILY, r), CC_SUCCESS);
        CU_ASSERT(!tr_pid_alive_as(g, ch.start[2]));
        CU_ASSERT(!tr_pid_alive_as(h, ch.start[3]));
        cc_simple(&C, CC_UNREGISTER_FAMILY, h);
        cc_simple(&C, CC_UNREGISTER_FAMILY, g);
        CHECK_ERR(cc_simple(&C, CC_UNREGISTER_FAMILY, r), CC_SUCCESS);
        chain_end(&ch);
}

static CU_TestInfo tests[] = {
        { "an orphan stays a member after TRACK_FAMILY_VIA_ENVIRONMENT", test_orphan_after_track_env },
        { "an unregistered subfamily's orphaned root folds into the parent", test_unregister_orphaned_subfamily },
        { "placement below a member of a family whose root is dead", test_placement_under_dead_root },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "/proc membership as condor_procd keeps it", suite_init, suite_clean, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        setenv("PROCD_FAMILY_CGROUPS", "off", 1); /* inherited by the daemon */
        int skip = cc_can_run("/proc membership test", daemon_args);
        return skip ? skip : ts_run(suites);
}
