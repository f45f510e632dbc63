/* test_classic_model.c - a model-based check of the family tree over the classic protocol,
 * after the shape of HTCondor's own procd test (its controller and drones): a tree of
 * "drone" processes grows and shrinks by commands (SPAWN a child of a drone, KILL a drone,
 * REGISTER a drone as a family root with an optional watcher drone, UNREGISTER, SNAPSHOT),
 * a reference model applies the same commands, and after every REGISTER, UNREGISTER and
 * SNAPSHOT the daemon's DUMP must show the model's families: the same roots, watchers and
 * parents.  The model's rules (condor_procd's): a process is in the family of the process
 * that spawned it and stays there until it exits; REGISTER moves the process alone into a
 * new family under the family it was in; UNREGISTER folds a family (its processes and
 * subfamilies) into its parent; a family whose watcher exits is unregistered.
 *
 * This test process is INIT: the daemon's parent (so the root family's root) and the
 * subreaper that adopts orphans, as init adopts them on a node.  The command lists are
 * generated from fixed seeds (7 of them), with a SNAPSHOT before every KILL (an orphan no
 * snapshot saw has no right answer for a /proc tracker), biased towards what tells trackers
 * apart: children spawned inside subfamilies, kills that orphan a subfamily's member, and
 * registrations of those orphans.  Run with family cgroups off (the
 * /proc tracker answers) and on (the daemon in a cgroup of its own, as a service manager
 * would place it).  One line per failing input names its seed and the command. */
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

#include "classic-client.h"
#include "classic-procs.h"
#include "testsupport.h"
#include "trackers/cgroup.h"
#include "trackers/proc-read.h"

#define MAX_TAGS 160
#define N_SEEDS 7
#define N_COMMANDS 80

/* ---- drones ---------------------------------------------------------------------------- */

/* A drone waits on its command FIFO for the name (a number) of a FIFO to give its next
 * child, forks that child and goes on; the child opens its FIFO, reports its pid on the
 * report pipe every drone inherited, and serves.  Children that exit are reaped by the
 * kernel (SIGCHLD ignored). */
static void drone_serve(const char *dir, int cmd_fd, int report_fd)
{
        signal(SIGCHLD, SIG_IGN);
        for (;;) {
                int32_t n;
                if (read(cmd_fd, &n, sizeof n) != sizeof n)
                        _exit(0); /* the test closed it: gone */
                pid_t c = fork();
                if (c != 0)
                        continue;
                close(cmd_fd);
                char path[256];
                snprintf(path, sizeof path, "%s/%d", dir, (int) n);
                cmd_fd = open(path, O_RDONLY | O_CLOEXEC);
                pid_t me = getpid();
                int32_t msg[2] = { n, me };
                if (cmd_fd < 0 || write(report_fd, msg, sizeof msg) != sizeof msg)
                        _exit(1);
        }
}

typedef struct drones {
        char dir[64];
        int report_rd, report_wr;
        pid_t pid[MAX_TAGS];
        uint64_t start[MAX_TAGS];
        int cmd[MAX_TAGS]; /* write end of the drone's FIFO, -1: none */
} drones;

static int drones_init(drones *d)
{
        memset(d, 0, sizeof *d);
        for (int i = 0; i < MAX_TAGS; i++)
                d->cmd[i] = -1;
        snprintf(d->dir, sizeof d->dir, "/tmp/procd-model.XXXXXX");
        if (!mkdtemp(d->dir))
                return -errno;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        d->report_rd = p[0];
        d->report_wr = p[1];
        return 0;
}

/* Tag t as a new drone, the child of drone parent (-1: of this process).  0 or -errno. */
static int drone_spawn(drones *d, int t, int parent)
{
        char path[256];
        snprintf(path, sizeof path, "%s/%d", d->dir, t);
        if (mkfifo(path, 0600) < 0)
                return -errno;
        if (parent < 0) {
                pid_t c = fork();
                if (c < 0)
                        return -errno;
                if (c == 0) {
                        int fd = open(path, O_RDONLY | O_CLOEXEC);
                        int32_t msg[2] = { t, getpid() };
                        if (fd < 0 || write(d->report_wr, msg, sizeof msg) != sizeof msg)
                                _exit(1);
                        /* the report pipe is O_CLOEXEC only across exec: drones keep it */
                        drone_serve(d->dir, fd, d->report_wr);
                }
        } else {
                int32_t n = t;
                if (write(d->cmd[parent], &n, sizeof n) != sizeof n)
                        return -EPIPE;
        }
        d->cmd[t] = open(path, O_WRONLY | O_CLOEXEC); /* waits for the child to open it */
        int32_t msg[2];
        if (d->cmd[t] < 0 || read(d->report_rd, msg, sizeof msg) != sizeof msg || msg[0] != t || msg[1] <= 1)
                return -EPROTO;
        unlink(path);
        d->pid[t] = msg[1];
        return tr_pid_start_ticks(d->pid[t], &d->start[t]);
}

/* SIGKILL drone t (started by this test, pid > 1) and wait until it is gone. */
static void drone_kill(drones *d, int t)
{
        if (d->pid[t] <= 1)
                return;
        kill(d->pid[t], SIGKILL);
        close(d->cmd[t]);
        d->cmd[t] = -1;
        for (int i = 0; i < 5000 && tr_pid_alive_as(d->pid[t], d->start[t]); i++) {
                ts_reap_orphans(0); /* ours when it was an orphan */
                usleep(1000);       /* a bound, not a timing: SIGKILL is on its way */
        }
        ts_reap_orphans(0);
}

static void drones_end(drones *d)
{
        for (int t = MAX_TAGS; t-- > 0;)
                if (d->pid[t] > 1 && tr_pid_alive_as(d->pid[t], d->start[t]))
                        drone_kill(d, t);
        close(d->report_rd);
        close(d->report_wr);
        rmdir(d->dir);
        ts_reap_orphans(1000);
}

/* ---- the reference model --------------------------------------------------------------- */

/* Family f is rooted at tag f (INIT: tag 0, the root family). */
typedef struct model {
        bool alive[MAX_TAGS];
        int spawner[MAX_TAGS];    /* the tag that spawned it */
        int family_of[MAX_TAGS];  /* the family (its root tag) a live process is in */
        bool registered[MAX_TAGS];
        int parent[MAX_TAGS];     /* a registered family's parent family */
        int watcher[MAX_TAGS];    /* its watcher tag, -1: none */
        int n_tags;
} model;

static void m_unregister(model *m, int f)
{
        int p = m->parent[f];
        for (int t = 0; t < m->n_tags; t++) {
                if (m->alive[t] && m->family_of[t] == f)
                        m->family_of[t] = p;
                if (m->registered[t] && m->parent[t] == f)
                        m->parent[t] = p;
        }
        m->registered[f] = false;
}

static void m_kill(model *m, int t)
{
        m->alive[t] = false;
        for (bool again = true; again;) { /* families whose watcher is gone */
                again = false;
                for (int f = 1; f < m->n_tags; f++)
                        if (m->registered[f] && m->watcher[f] >= 0 && !m->alive[m->watcher[f]]) {
                                m_unregister(m, f);
                                again = true;
                        }
        }
}

/* ---- commands -------------------------------------------------------------------------- */

typedef enum { C_SPAWN, C_KILL, C_REGISTER, C_UNREGISTER, C_SNAPSHOT } cmd_kind;
typedef struct command {
        cmd_kind kind;
        int a, b; /* SPAWN a b: a child of b; REGISTER a [b: watcher, -1 none]; KILL/UNREGISTER a */
} command;

static const char *cmd_name(cmd_kind k)
{
        static const char *const n[] = { "SPAWN", "KILL", "REGISTER", "UNREGISTER", "SNAPSHOT" };
        return n[k];
}

static int pick(unsigned *seed, const model *m, bool (*ok)(const model *m, int t))
{
        int cand[MAX_TAGS], n = 0;
        for (int t = 0; t < m->n_tags; t++)
                if (ok(m, t))
                        cand[n++] = t;
        return n ? cand[rand_r(seed) % n] : -1;
}

static bool is_live(const model *m, int t) { return m->alive[t]; }
static bool is_live_drone(const model *m, int t) { return t > 0 && m->alive[t]; }
static bool is_registrable(const model *m, int t) { return t > 0 && m->alive[t] && !m->registered[t]; }
static bool is_registered(const model *m, int t) { return t > 0 && m->registered[t]; }
static bool in_subfamily(const model *m, int t) { return t > 0 && m->alive[t] && m->family_of[t] != 0; }
/* a drone in a subfamily with a live child: killing it orphans a subfamily's member */
static bool orphans_when_killed(const model *m, int t)
{
        if (!in_subfamily(m, t))
                return false;
        for (int u = t + 1; u < m->n_tags; u++)
                if (m->alive[u] && m->spawner[u] == t)
                        return true;
        return false;
}

/* pick by the preferred rule most of the time, else (or when none fits) by the plain one */
static int pick2(unsigned *seed, const model *m, bool (*pref)(const model *m, int t), bool (*ok)(const model *m, int t))
{
        int t = rand_r(seed) % 3 ? pick(seed, m, pref) : -1;
        return t >= 0 ? t : pick(seed, m, ok);
}

/* The next valid command on the model as it is (the generator runs the model too). */
static command next_command(unsigned *seed, const model *m)
{
        for (;;) {
                int r = rand_r(seed) % 100;
                command c = { C_SNAPSHOT, -1, -1 };
                if (r < 40 && m->n_tags < MAX_TAGS) {
                        c = (command) { C_SPAWN, m->n_tags, pick2(seed, m, in_subfamily, is_live) };
                } else if (r < 52) {
                        c = (command) { C_KILL, pick2(seed, m, orphans_when_killed, is_live_drone), -1 };
                } else if (r < 74) {
                        c = (command) { C_REGISTER, pick(seed, m, is_registrable), -1 };
                        if (rand_r(seed) % 2)
                                c.b = pick(seed, m, is_live_drone);
                        if (c.b == c.a)
                                c.b = -1;
                } else if (r < 84) {
                        c = (command) { C_UNREGISTER, pick(seed, m, is_registered), -1 };
                }
                if (c.kind == C_SNAPSHOT || c.a >= 0)
                        return c;
        }
}

/* ---- one input ------------------------------------------------------------------------- */

static cc_client C;

/* The daemon's families against the model's: the same roots, parents and watchers. */
static bool state_matches(const drones *d, const model *m, char *why, size_t size)
{
        cc_dump_family *f = NULL;
        size_t n = 0;
        int k = cc_dump(&C, 0, &f, &n);
        if (k != CC_SUCCESS) {
                snprintf(why, size, "DUMP answered %d", k);
                return false;
        }
        size_t want = 1;
        bool ok = n >= 1 && f[0].root == getpid();
        if (!ok)
                snprintf(why, size, "the root family is not rooted at this test");
        for (int t = 1; t < m->n_tags && ok; t++) {
                if (!m->registered[t])
                        continue;
                want++;
                const cc_dump_family *x = cc_dump_find(f, n, d->pid[t]);
                pid_t parent = m->parent[t] ? d->pid[m->parent[t]] : getpid();
                pid_t watcher = m->watcher[t] >= 0 ? d->pid[m->watcher[t]] : 0;
                if (!x)
                        snprintf(why, size, "family P%d (pid %d) missing", t, (int) d->pid[t]);
                else if (x->parent_root != parent)
                        snprintf(why, size, "family P%d under %d, the model says %d (P%d)", t, (int) x->parent_root,
                                 (int) parent, m->parent[t]);
                else if (x->watcher != watcher)
                        snprintf(why, size, "family P%d watched by %d, the model says %d", t, (int) x->watcher,
                                 (int) watcher);
                ok = x && x->parent_root == parent && x->watcher == watcher;
        }
        if (ok && n != want) {
                snprintf(why, size, "%zu families, the model has %zu", n, want);
                ok = false;
        }
        cc_dump_free(f, n);
        return ok;
}

/* A watcher's exit reaches the daemon as an event of its own: the check looks again a
 * bounded number of times before it calls a difference a failure. */
static bool check_state(const drones *d, const model *m, char *why, size_t size)
{
        for (int i = 0; i < 100; i++) {
                if (state_matches(d, m, why, size))
                        return true;
                usleep(10000);
        }
        return false;
}

/* Runs the input of seed; true when every check matched (else *why says the first miss). */
static bool run_input(unsigned seed0, char *why, size_t size)
{
        unsigned seed = seed0;
        drones d;
        model m = { .n_tags = 1 };
        m.alive[0] = true;
        m.family_of[0] = 0;
        if (drones_init(&d) < 0) {
                snprintf(why, size, "no drone directory");
                return false;
        }
        bool ok = true;
        int n_registers = 0, n_orphans = 0;
        for (int i = 0; i < N_COMMANDS && ok; i++) {
                command c = next_command(&seed, &m);
                int k = 0;
                bool check = false;
                if (c.kind == C_KILL) {
                        /* what the kill orphans must have been seen */
                        if ((k = cc_snapshot(&C)) != CC_SUCCESS)
                                break;
                }
                switch (c.kind) {
                case C_SPAWN:
                        k = drone_spawn(&d, c.a, c.b == 0 ? -1 : c.b);
                        m.alive[c.a] = true;
                        m.family_of[c.a] = m.family_of[c.b];
                        m.spawner[c.a] = c.b;
                        m.n_tags = c.a + 1;
                        break;
                case C_KILL:
                        drone_kill(&d, c.a);
                        m_kill(&m, c.a);
                        break;
                case C_REGISTER:
                        n_orphans += !m.alive[m.spawner[c.a]];
                        n_registers++;
                        k = cc_register(&C, d.pid[c.a], c.b >= 0 ? d.pid[c.b] : 0, -1);
                        m.registered[c.a] = true;
                        m.parent[c.a] = m.family_of[c.a];
                        m.watcher[c.a] = c.b;
                        m.family_of[c.a] = c.a;
                        check = true;
                        break;
                case C_UNREGISTER:
                        k = cc_simple(&C, CC_UNREGISTER_FAMILY, d.pid[c.a]);
                        m_unregister(&m, c.a);
                        check = true;
                        break;
                case C_SNAPSHOT:
                        k = cc_snapshot(&C);
                        check = true;
                        break;
                }
                char what[300];
                if (k != 0) {
                        snprintf(what, sizeof what, "command %d %s P%d P%d answered %d", i, cmd_name(c.kind), c.a, c.b,
                                 k);
                        snprintf(why, size, "%s", what);
                        ok = false;
                } else if (check && !check_state(&d, &m, what, sizeof what)) {
                        snprintf(why, size, "after command %d %s P%d P%d: %s", i, cmd_name(c.kind), c.a, c.b, what);
                        ok = false;
                }
        }
        printf("\n    input %u: %d registrations, %d of them orphans", seed0, n_registers, n_orphans);
        /* leave no family behind: the daemon serves the next input */
        for (int t = m.n_tags; t-- > 1;)
                if (m.registered[t])
                        cc_simple(&C, CC_UNREGISTER_FAMILY, d.pid[t]);
        drones_end(&d);
        return ok;
}

static void run_inputs(const char *mode)
{
        int passed = 0;
        for (unsigned s = 1; s <= N_SEEDS; s++) {
                char why[400] = "";
                bool ok = run_input(s, why, sizeof why);
                if (ok)
                        passed++;
                else
                        printf("\n    %s: input %u: %s", mode, s, why);
                CU_ASSERT(ok);
        }
        printf("\n    %s: %d of %d inputs match the model\n", mode, passed, N_SEEDS);
}

/* ---- suites ---------------------------------------------------------------------------- */

static cc_daemon D;
static struct tr_cgroup *service_cg;
static const char *const daemon_args[] = { "-S", "-1", NULL };

static int start(bool family_cgroups)
{
        if (family_cgroups) {
                unsetenv("PROCD_FAMILY_CGROUPS");
                service_cg = cp_service_cgroup("model-procd");
        } else {
                setenv("PROCD_FAMILY_CGROUPS", "off", 1); /* inherited by the daemon */
        }
        if (cc_daemon_start_with(&D, daemon_args, service_cg ? cp_enter_cgroup : NULL, service_cg) < 0)
                return 1;
        return cc_open(&C, D.addr, 0, 0) < 0;
}

static int stop(void)
{
        cc_close(&C);
        int st = cc_daemon_stop(&D);
        tr_cgroup_free(service_cg);
        service_cg = NULL;
        return !(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int init_proc(void) { return start(false); }
static int init_cgroup(void) { return start(true); }

static void test_proc(void) { run_inputs("family cgroups off"); }

static void test_cgroup(void)
{
        if (cc_daemon_is_condor() || !service_cg) {
                ts_skip("model with family cgroups on", "%s",
                        cc_daemon_is_condor() ? "condor_procd makes none" : "no service cgroup here");
                return;
        }
        run_inputs("family cgroups on");
}

static CU_TestInfo proc_tests[] = { { "generated inputs", test_proc }, CU_TEST_INFO_NULL };
static CU_TestInfo cgroup_tests[] = { { "generated inputs", test_cgroup }, CU_TEST_INFO_NULL };

static CU_SuiteInfo suites[] = {
        { "model, family cgroups off", init_proc, stop, NULL, NULL, proc_tests },
        { "model, family cgroups on", init_cgroup, stop, NULL, NULL, cgroup_tests },
        CU_SUITE_INFO_NULL,
};

int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        int skip = cc_can_run("model test", daemon_args);
        return skip ? skip : ts_run(suites);
}
