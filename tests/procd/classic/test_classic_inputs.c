/* test_classic_inputs.c - runs input files in the format of HTCondor's model-based procd
 * test (src/condor_procd: procd_test_input, and what procd_test_generate.py makes) against
 * the daemon over the classic protocol.  The format, as HTCondor's controller reads it: one
 * command a line, on process "tags" (INIT: the daemon's parent, the root family's root):
 *   SPAWN <child> <parent>      a new drone process, the child of drone <parent>
 *   KILL <tag>                  the drone exits (SIGKILL); its children are orphaned
 *   REGISTER <tag> [<watcher>]  REGISTER_FAMILY of the drone, watched by <watcher> (none: 0)
 *   UNREGISTER <tag>            UNREGISTER_FAMILY
 *   SNAPSHOT                    SNAPSHOT
 * and the input ends at its first empty line (or its end).  After every REGISTER,
 * UNREGISTER and SNAPSHOT the daemon's DUMP must show the reference's families: the same
 * roots, each with the same parent family and watcher (the processes of a family are not
 * compared, as in HTCondor's check).  The reference follows HTCondor's procd_test_state.py:
 * a process is in its spawner's family for life (orphaned or not); REGISTER moves it alone
 * into a new family under the one it was in; UNREGISTER folds the family's processes and
 * subfamilies into its parent; a family whose watcher exits is unregistered.  Lines starting
 * with '#' are comments (this runner's addition, for the fixture).
 *
 * This runner is INIT, as the daemon's parent (cc_daemon_start), and a subreaper (ts_run):
 * orphans come to it.  Inputs: the files named on the command line, else the fixture
 * tests/fixtures/classic/model-input.  Two suites: family cgroups off (the /proc tracker
 * answers) and on (the daemon in a service cgroup of its own, as in test_classic_model).
 * Per input one line: passed, or the first mismatch (command, line, expected vs got). */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classic-client.h"
#include "classic-procs.h"
#include "testsupport.h"
#include "trackers/cgroup.h"
#include "trackers/proc-read.h"

#define MAX_TAGS 1024
#define TAG_LEN 32

/* ---- drones: each serves one socket to this runner ------------------------------------- */

/* A drone reads, on its socket, a socket end (SCM_RIGHTS) for its next child, forks that
 * child and goes on; the child serves the received end and first writes its pid there.
 * EOF: the drone exits.  Exited children are reaped by the kernel (SIGCHLD ignored). */
static int recv_fd(int sock)
{
        char byte;
        struct iovec iov = { &byte, 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } u;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
        if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
                return -1;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (!c || c->cmsg_type != SCM_RIGHTS)
                return -1;
        int fd;
        memcpy(&fd, CMSG_DATA(c), sizeof fd);
        return fd;
}

static int send_fd(int sock, int fd)
{
        char byte = 's';
        struct iovec iov = { &byte, 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } u;
        memset(&u, 0, sizeof u);
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
        return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

static __attribute__((noreturn)) void drone_main(int sock)
{
        signal(SIGCHLD, SIG_IGN);
        pid_t me = getpid();
        if (write(sock, &me, sizeof me) != sizeof me)
                _exit(1);
        for (;;) {
                int child_sock = recv_fd(sock);
                if (child_sock < 0)
                        _exit(0);
                pid_t c = fork();
                if (c == 0) {
                        close(sock);
                        drone_main(child_sock);
                }
                close(child_sock);
        }
}

typedef struct drone {
        pid_t pid;
        uint64_t start;
        int sock; /* -1: none */
} drone;

/* A new drone, the child of `parent` (NULL: of this runner).  0 or -errno. */
static int drone_spawn(drone *out, const drone *parent)
{
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        if (parent) {
                int r = send_fd(parent->sock, sv[1]);
                close(sv[1]);
                if (r < 0) {
                        close(sv[0]);
                        return r;
                }
        } else {
                pid_t c = fork();
                if (c < 0)
                        return -errno;
                if (c == 0) {
                        close(sv[0]);
                        drone_main(sv[1]);
                }
                close(sv[1]);
        }
        out->sock = sv[0];
        struct pollfd p = { sv[0], POLLIN, 0 };
        if (poll(&p, 1, 10000) != 1 || read(sv[0], &out->pid, sizeof out->pid) != sizeof out->pid || out->pid <= 1)
                return -EPROTO;
        return tr_pid_start_ticks(out->pid, &out->start);
}

/* SIGKILL a drone this runner started (pid > 1) and wait until it is gone (reaped by its
 * drone parent, or by this runner when it is ours or an orphan). */
static void drone_kill(drone *d)
{
        if (d->pid <= 1 || d->sock < 0)
                return;
        kill(d->pid, SIGKILL);
        close(d->sock);
        d->sock = -1;
        for (int i = 0; i < 5000 && tr_pid_alive_as(d->pid, d->start); i++) {
                waitpid(d->pid, NULL, WNOHANG);
                ts_reap_orphans(0);
                usleep(1000); /* a bound, not a timing: SIGKILL is on its way */
        }
        waitpid(d->pid, NULL, WNOHANG);
        ts_reap_orphans(0);
}

/* ---- tags and the reference (procd_test_state.py's rules) ------------------------------- */

typedef struct run {
        char tag[MAX_TAGS][TAG_LEN];
        drone dr[MAX_TAGS];
        bool alive[MAX_TAGS];
        int family[MAX_TAGS];  /* the root tag of the family a process is in */
        bool registered[MAX_TAGS];
        int parent[MAX_TAGS];  /* a registered family's parent family */
        int watcher[MAX_TAGS]; /* its watcher, -1: none */
        int n;                 /* tag 0: INIT (this runner) */
        bool watcher_died;     /* the daemon learns of it by an event: look again */
} run;

static int tag_find(const run *r, const char *name)
{
        for (int t = 0; t < r->n; t++)
                if (strcmp(r->tag[t], name) == 0)
                        return t;
        return -1;
}

static pid_t tag_pid(const run *r, int t) { return t == 0 ? getpid() : r->dr[t].pid; }

static void ref_unregister(run *r, int f)
{
        int up = r->parent[f];
        for (int t = 0; t < r->n; t++) {
                if (r->alive[t] && r->family[t] == f)
                        r->family[t] = up;
                if (r->registered[t] && r->parent[t] == f)
                        r->parent[t] = up;
        }
        r->registered[f] = false;
}

static void ref_exit(run *r, int t)
{
        r->alive[t] = false;
        for (bool again = true; again;) {
                again = false;
                for (int f = 1; f < r->n; f++)
                        if (r->registered[f] && r->watcher[f] >= 0 && !r->alive[r->watcher[f]]) {
                                ref_unregister(r, f);
                                r->watcher_died = again = true;
                        }
        }
}

/* ---- the comparison ---------------------------------------------------------------------- */

static cp_tree_daemon T; /* the daemon under test and the client open on it */

static const char *pid_name(const run *r, pid_t pid, char *buf, size_t size)
{
        for (int t = 0; t < r->n; t++)
                if (tag_pid(r, t) == pid && (t == 0 || r->dr[t].pid > 1)) {
                        snprintf(buf, size, "%s", r->tag[t]);
                        return buf;
                }
        snprintf(buf, size, "%d", (int) pid);
        return buf;
}

/* "ROOT<PARENT,w=WATCHER>" for each family (the root family first), as tags. */
static void describe_ref(const run *r, char *out, size_t size)
{
        size_t len = (size_t) snprintf(out, size, "INIT");
        for (int t = 1; t < r->n && len < size; t++)
                if (r->registered[t])
                        len += (size_t) snprintf(out + len, size - len, " %s<%s,w=%s>", r->tag[t],
                                                 r->tag[r->parent[t]], r->watcher[t] >= 0 ? r->tag[r->watcher[t]] : "0");
}

static void describe_dump(const run *r, const cc_dump_family *f, size_t n, char *out, size_t size)
{
        size_t len = 0;
        out[0] = 0;
        for (size_t i = 0; i < n && len < size; i++) {
                char a[TAG_LEN], b[TAG_LEN], w[TAG_LEN];
                if (i == 0)
                        len += (size_t) snprintf(out, size, "%s", pid_name(r, f[i].root, a, sizeof a));
                else
                        len += (size_t) snprintf(out + len, size - len, " %s<%s,w=%s>", pid_name(r, f[i].root, a, sizeof a),
                                                 pid_name(r, f[i].parent_root, b, sizeof b),
                                                 f[i].watcher ? pid_name(r, f[i].watcher, w, sizeof w) : "0");
        }
}

/* The daemon's families against the reference: 1 same, 0 different (why: expected vs got),
 * -1 DUMP failed. */
static int compare(const run *r, char *why, size_t size)
{
        cc_dump_family *f = NULL;
        size_t n = 0;
        int k = cc_dump(&T.c, 0, &f, &n);
        if (k != CC_SUCCESS) {
                snprintf(why, size, "DUMP answered %d", k);
                return -1;
        }
        size_t want = 1;
        bool same = n >= 1 && f[0].root == getpid();
        for (int t = 1; t < r->n && same; t++) {
                if (!r->registered[t])
                        continue;
                want++;
                const cc_dump_family *x = cc_dump_find(f, n, r->dr[t].pid);
                same = x && x->parent_root == tag_pid(r, r->parent[t]) &&
                       x->watcher == (r->watcher[t] >= 0 ? tag_pid(r, r->watcher[t]) : 0);
        }
        same = same && n == want;
        if (!same) {
                char exp[600], got[600];
                describe_ref(r, exp, sizeof exp);
                describe_dump(r, f, n, got, sizeof got);
                snprintf(why, size, "expected [%s] got [%s]", exp, got);
        }
        cc_dump_free(f, n);
        return same;
}

static bool check(run *r, char *why, size_t size)
{
        int tries = r->watcher_died ? 100 : 1; /* a watcher's exit reaches the daemon later */
        for (int i = 0; i < tries; i++) {
                int c = compare(r, why, size);
                if (c != 0)
                        return c > 0;
                if (i + 1 < tries)
                        usleep(10000);
        }
        return false;
}

/* ---- one input ------------------------------------------------------------------------- */

/* One command line; 0 done, 1 to check, -1 failed (why). */
static int step(run *r, char *tok[3], int ntok, char *why, size_t size)
{
        int a = ntok > 1 ? tag_find(r, tok[1]) : -1, b = ntok > 2 ? tag_find(r, tok[2]) : -1;
        if (strcmp(tok[0], "SPAWN") == 0 && ntok == 3) {
                if (a >= 0 || b < 0 || !r->alive[b] || r->n == MAX_TAGS) {
                        snprintf(why, size, "input: bad SPAWN");
                        return -1;
                }
                int t = r->n++;
                snprintf(r->tag[t], TAG_LEN, "%s", tok[1]);
                int k = drone_spawn(&r->dr[t], b == 0 ? NULL : &r->dr[b]);
                r->alive[t] = true;
                r->family[t] = r->family[b];
                if (k < 0)
                        snprintf(why, size, "drone spawn: %s", strerror(-k));
                return k < 0 ? -1 : 0;
        }
        if (strcmp(tok[0], "KILL") == 0 && ntok == 2 && a > 0 && r->alive[a]) {
                drone_kill(&r->dr[a]);
                ref_exit(r, a);
                return 0;
        }
        int k = 0;
        if (strcmp(tok[0], "REGISTER") == 0 && a > 0 && r->alive[a] && !r->registered[a] &&
            (ntok == 2 || (ntok == 3 && b > 0 && r->alive[b]))) {
                k = cc_register(&T.c, r->dr[a].pid, ntok == 3 ? r->dr[b].pid : 0, -1);
                r->registered[a] = true;
                r->parent[a] = r->family[a];
                r->watcher[a] = ntok == 3 ? b : -1;
                r->family[a] = a;
        } else if (strcmp(tok[0], "UNREGISTER") == 0 && ntok == 2 && a > 0 && r->registered[a]) {
                k = cc_simple(&T.c, CC_UNREGISTER_FAMILY, r->dr[a].pid);
                ref_unregister(r, a);
        } else if (strcmp(tok[0], "SNAPSHOT") == 0 && ntok == 1) {
                k = cc_snapshot(&T.c);
        } else {
                snprintf(why, size, "input: not a valid command here");
                return -1;
        }
        if (k != 0)
                snprintf(why, size, "answered %d", k);
        return k != 0 ? -1 : 1;
}

/* Runs one input file; true when every check matched (else why: the first mismatch). */
static bool run_file(const char *path, int *n_checks, char *why, size_t size)
{
        FILE *in = fopen(path, "r");
        if (!in) {
                snprintf(why, size, "cannot open: %s", strerror(errno));
                return false;
        }
        run *r = calloc(1, sizeof *r);
        if (!r) {
                fclose(in);
                snprintf(why, size, "out of memory");
                return false;
        }
        snprintf(r->tag[0], TAG_LEN, "INIT");
        r->alive[0] = true;
        r->n = 1;
        bool ok = true;
        char line[256];
        for (int lineno = 1; ok && fgets(line, sizeof line, in); lineno++) {
                char copy[256], *save = NULL, *tok[4] = { 0 };
                snprintf(copy, sizeof copy, "%s", line);
                int ntok = 0;
                for (char *t = strtok_r(copy, " \t\r\n", &save); t && ntok < 4; t = strtok_r(NULL, " \t\r\n", &save))
                        tok[ntok++] = t;
                if (ntok == 0)
                        break; /* the controller's end of input */
                if (tok[0][0] == '#')
                        continue;
                char what[1400] = "";
                int s = ntok <= 3 ? step(r, tok, ntok, what, sizeof what) : -1;
                r->watcher_died = r->watcher_died && s == 0;
                if (s == 1) {
                        (*n_checks)++;
                        s = check(r, what, sizeof what) ? 0 : -1;
                }
                if (s < 0) {
                        line[strcspn(line, "\r\n")] = 0;
                        snprintf(why, size, "line %d '%s' (check %d): %s", lineno, line, *n_checks,
                                 what[0] ? what : "bad line");
                        ok = false;
                }
        }
        fclose(in);
        /* leave no family behind (the daemon serves the next input) and no drone */
        for (int t = r->n; t-- > 1;)
                if (r->registered[t])
                        cc_simple(&T.c, CC_UNREGISTER_FAMILY, r->dr[t].pid);
        for (int t = r->n; t-- > 1;)
                if (r->alive[t])
                        drone_kill(&r->dr[t]);
        free(r);
        ts_reap_orphans(1000);
        return ok;
}

/* ---- suites ---------------------------------------------------------------------------- */

static char **inputs;
static int n_inputs;

static void run_inputs(const char *mode)
{
        int passed = 0;
        for (int i = 0; i < n_inputs; i++) {
                char why[1600] = "";
                int n_checks = 0;
                bool ok = run_file(inputs[i], &n_checks, why, sizeof why);
                passed += ok;
                if (ok)
                        printf("\n    %s: %s: passed (%d checks)", mode, inputs[i], n_checks);
                else
                        printf("\n    %s: %s: FAILED at %s", mode, inputs[i], why);
                CU_ASSERT(ok);
        }
        printf("\n    %s: %d of %d inputs pass\n", mode, passed, n_inputs);
}

static const char *const daemon_args[] = { "-S", "-1", NULL };

static int stop(void) { return cp_tree_daemon_stop(&T); }
static int init_proc(void) { return cp_tree_daemon_start(&T, false, "inputs-procd", daemon_args); }
static int init_cgroup(void) { return cp_tree_daemon_start(&T, true, "inputs-procd", daemon_args); }
static void test_proc(void) { run_inputs("family cgroups off"); }

static void test_cgroup(void)
{
        if (cc_daemon_is_condor() || !T.cg) {
                ts_skip("inputs with family cgroups on", "%s",
                        cc_daemon_is_condor() ? "condor_procd makes none" : "no service cgroup here");
                return;
        }
        run_inputs("family cgroups on");
}

static CU_TestInfo proc_tests[] = { { "input files", test_proc }, CU_TEST_INFO_NULL };
static CU_TestInfo cgroup_tests[] = { { "input files", test_cgroup }, CU_TEST_INFO_NULL };

static CU_SuiteInfo suites[] = {
        { "HTCondor-format inputs, family cgroups off", init_proc, stop, NULL, NULL, proc_tests },
        { "HTCondor-format inputs, family cgroups on", init_cgroup, stop, NULL, NULL, cgroup_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
        signal(SIGPIPE, SIG_IGN);
        static char fixture[4096];
        static char *fixture_only[] = { fixture };
        if (argc > 1) {
                inputs = argv + 1;
                n_inputs = argc - 1;
        } else {
                ts_fixture_path(fixture, sizeof fixture, "classic/model-input");
                inputs = fixture_only;
                n_inputs = 1;
        }
        int skip = cc_can_run("HTCondor-format model inputs", daemon_args);
        return skip ? skip : ts_run(suites);
}
