/* guard.c - the guard that ends a killed starter's job (see guard.h). */
#include "guard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trackers/util.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_execveat
#define SYS_execveat 322
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

#define GUARD_KILL_TIMEOUT_USEC 10000000ULL
#define GUARD_DESTROY_TIMEOUT_USEC 5000000ULL
#define GUARD_LOOK_USEC 100000
#define GUARD_STACK_BYTES (16 * 1024) /* it polls, then execs: a few hundred bytes */
#define CLEANUP_FLAG "--guard-cleanup"

/* Until the starter is gone: its pidfd polls readable when it exits. */
static void wait_on_pidfd(int pfd)
{
        struct pollfd p = { pfd, POLLIN, 0 };
        while (poll(&p, 1, -1) < 0 && errno == EINTR)
                ;
}

/* The fork guard's wait.  Without pidfd_open (before Linux 5.3), look at the parent every
 * GUARD_LOOK_USEC. */
static void wait_for_starter(pid_t starter)
{
        int pfd = (int) syscall(SYS_pidfd_open, starter, 0);
        if (pfd < 0) {
                while (getppid() == starter)
                        usleep(GUARD_LOOK_USEC);
                return;
        }
        /* the pidfd names the starter only if it was still our parent after it was opened */
        if (getppid() == starter)
                wait_on_pidfd(pfd);
        close(pfd);
}

/* The starter is gone: kill the job, remove the private /tmp directory and the cgroups the
 * starter made, say so; the guard's exit code. */
static int end_job(pid_t starter, st_jobcg *jc, st_jobns *ns)
{
        tr_error err = { 0 };
        tr_kill_result kr;
        memset(&kr, 0, sizeof kr);
        /* ENOENT: procd (the watcher's exit) removed the job cgroup already */
        if (jc->job && tr_cgroup_kill(jc->job, GUARD_KILL_TIMEOUT_USEC, &kr, &err) < 0 && err.code != ENOENT)
                fprintf(stderr, "procd-starter: guard: killing the job: %s\n", err.msg);
        tr_kill_result_free(&kr);
        st_jobns_remove_dir(ns);
        int left = st_jobcg_abandon(jc, GUARD_DESTROY_TIMEOUT_USEC);
        fprintf(stderr, "procd-starter: guard: the starter (pid %d) is gone: job %s killed, %s\n", (int) starter,
                jc->job_path, left ? "some of its cgroups left" : "its cgroups removed");
        return left ? 1 : 0;
}

/* ---- the fork guard: a copy of the starter that does the cleanup itself ---- */

static __attribute__((noreturn)) void guard_run(pid_t starter, st_jobcg jc, st_jobns ns, int drop_fd)
{
        prctl(PR_SET_NAME, "procd-guard", 0, 0, 0);
        if (drop_fd >= 0)
                close(drop_fd);
        int own = jc.ops ? jc.ops->guard_drop_fd(&jc) : -1;
        if (own >= 0)
                close(own);
        wait_for_starter(starter);
        _exit(end_job(starter, &jc, &ns));
}

static int start_fork(st_guard *g, pid_t starter, const st_jobcg *jc, const st_jobns *ns, int drop_fd,
                      tr_error *err)
{
        fflush(NULL); /* nothing buffered is written twice */
        pid_t pid = fork();
        if (pid < 0)
                return tr_error_setx(err, errno, "fork (guard)");
        if (pid == 0)
                guard_run(starter, *jc, *ns, drop_fd);
        int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                int e = errno;
                /* our own unreaped child: its pid cannot be reused before the waitpid */
                if (pid > 1)
                        kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                return tr_error_setx(err, e, "pidfd_open (guard)");
        }
        g->pid = pid;
        g->pidfd = pidfd;
        return 0;
}

/* ---- the CLONE_VM guard: waits on the starter's memory, execs the cleanup ---- */

/* What the CLONE_VM guard reads, all made before the clone and left alone by the starter
 * until st_guard_stop reaped the guard.  The guard shares the starter's fd table too
 * (CLONE_FILES): nothing is copied at the clone or closed at its exit, and the starter keeps
 * these fds open until then.  The table goes with the exec (which unshares it and closes
 * the O_CLOEXEC fds): the procd connection and the systemd helper's pipe end there, just
 * after the starter. */
struct vm_guard_args {
        int starter_pidfd; /* the starter's own pidfd */
        int exe_fd;        /* O_PATH fd of the procd-starter binary */
        int lock_fd;       /* the lock on <top>, kept across the exec (-1: none) */
        char **argv;
};

/* System calls only (clone-vm.h); errno is touched only where a call fails, and then the
 * starter is gone or waits in no call that reads it. */
static int vm_guard(void *arg)
{
        const struct vm_guard_args *a = arg;
        static char *const no_env[] = { NULL };
        prctl(PR_SET_NAME, "procd-guard", 0, 0, 0);
        wait_on_pidfd(a->starter_pidfd);
        /* the starter is gone: the fd table is the guard's alone now */
        if (a->lock_fd >= 0)
                fcntl(a->lock_fd, F_SETFD, 0); /* the lock goes on into the cleanup */
        syscall(SYS_execveat, a->exe_fd, "", a->argv, no_env, AT_EMPTY_PATH);
        static const char msg[] = "procd-starter: guard: cannot exec the cleanup: the next starter's sweep "
                                  "ends the job\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void) w;
        _exit(127);
}

/* One allocation: the pointer array, then the strings.  Mount points name the hierarchies
 * (the cleanup discovers them again; indexes could differ): "J" before each one the job's
 * (and the starter leaf's) cgroup is in, "T" before each one <top> was made in. */
static char **cleanup_argv(pid_t starter, int lock_fd, const st_jobcg *jc, const st_jobns *ns)
{
        const tr_hierarchies *hs = jc->hs;
        char pid_s[24], lock_s[24];
        snprintf(pid_s, sizeof pid_s, "%d", (int) starter);
        snprintf(lock_s, sizeof lock_s, "%d", lock_fd);
        const char *fixed[] = { "procd-guard",  CLEANUP_FLAG,     pid_s, lock_s, jc->top, jc->job_path,
                                jc->starter ? jc->starter_path : "", ns->job_dir ? ns->job_dir : "" };
        size_t nfixed = TR_ARRAY_SIZE(fixed), n = nfixed, bytes = 0;
        for (size_t i = 0; i < nfixed; i++)
                bytes += strlen(fixed[i]) + 1;
        for (int i = 0; hs && i < hs->n; i++) {
                int times = (jc->job && tr_cgroup_dirfd(jc->job, i) >= 0) + jc->top_created[i];
                n += 2 * (size_t) times;
                bytes += (size_t) times * (2 + strlen(hs->h[i].mount_point) + 1);
        }
        char **v = malloc((n + 1) * sizeof *v + bytes);
        if (!v)
                return NULL;
        char *p = (char *) (v + n + 1);
        size_t k = 0;
#define PUT(str)                                      \
        do {                                          \
                size_t len_ = strlen(str) + 1;        \
                memcpy(p, (str), len_);               \
                v[k++] = p;                           \
                p += len_;                            \
        } while (0)
        for (size_t i = 0; i < nfixed; i++)
                PUT(fixed[i]);
        for (int i = 0; hs && i < hs->n; i++) {
                if (jc->job && tr_cgroup_dirfd(jc->job, i) >= 0) {
                        PUT("J");
                        PUT(hs->h[i].mount_point);
                }
                if (jc->top_created[i]) {
                        PUT("T");
                        PUT(hs->h[i].mount_point);
                }
        }
#undef PUT
        v[k] = NULL;
        return v;
}

static int start_vm(st_guard *g, pid_t starter, const st_jobcg *jc, const st_jobns *ns, const char *exe,
                    tr_error *err)
{
        g->exe_fd = open(exe, O_PATH | O_CLOEXEC);
        if (g->exe_fd < 0)
                return tr_error_setx(err, errno, "guard: opening %s", exe);
        g->self_pidfd = (int) syscall(SYS_pidfd_open, starter, 0);
        if (g->self_pidfd < 0)
                return tr_error_setx(err, errno, "guard: pidfd_open of the starter");
        /* close-on-exec already: pidfd_open(2) and CLONE_PIDFD always set it */
        g->cleanup_argv = cleanup_argv(starter, jc->top_lock_fd, jc, ns);
        if (!g->cleanup_argv)
                return tr_error_set(err, ENOMEM, "guard: out of memory");
        int r = st_vm_stack_map(&g->stack, GUARD_STACK_BYTES + sizeof(struct vm_guard_args), err);
        if (r < 0)
                return r;
        struct vm_guard_args *a = st_vm_stack_data(&g->stack, sizeof *a);
        a->starter_pidfd = g->self_pidfd;
        a->exe_fd = g->exe_fd;
        a->lock_fd = jc->top_lock_fd;
        a->argv = g->cleanup_argv;
        int pidfd = -1;
        pid_t pid = clone(vm_guard, a, CLONE_VM | CLONE_FILES | CLONE_PIDFD | SIGCHLD, a, &pidfd);
        if (pid < 0)
                return tr_error_setx(err, errno, "clone (guard)");
        g->pid = pid;
        g->pidfd = pidfd;
        return 0;
}

int st_guard_start(st_guard *g, const st_jobcg *jc, const st_jobns *ns, int drop_fd, const char *cleanup_exe,
                   tr_error *err)
{
        *g = (st_guard) ST_GUARD_INIT;
        pid_t starter = getpid();
        if (!cleanup_exe || !st_clone_vm_allowed())
                return start_fork(g, starter, jc, ns, drop_fd, err);
        tr_error verr = { 0 };
        if (start_vm(g, starter, jc, ns, cleanup_exe, &verr) == 0)
                return 0;
        /* no CLONE_PIDFD (before Linux 5.2), no pidfd_open, no binary to exec: a fork guard */
        st_guard_stop(g); /* what start_vm made before it failed */
        return start_fork(g, starter, jc, ns, drop_fd, err);
}

void st_guard_dismiss(st_guard *g)
{
        if (g->pidfd >= 0 && !g->dismissed)
                syscall(SYS_pidfd_send_signal, g->pidfd, SIGKILL, NULL, 0);
        g->dismissed = true;
}

void st_guard_stop(st_guard *g)
{
        if (g->pidfd >= 0) {
                st_guard_dismiss(g);
                siginfo_t si;
                memset(&si, 0, sizeof si);
                while (waitid((idtype_t) P_PIDFD, (id_t) g->pidfd, &si, WEXITED) < 0 && errno == EINTR)
                        ;
                close(g->pidfd);
        }
        /* reaped (or never started): nothing runs on these any more */
        free(g->cleanup_argv);
        st_vm_stack_unmap(&g->stack);
        if (g->exe_fd >= 0)
                close(g->exe_fd);
        if (g->self_pidfd >= 0)
                close(g->self_pidfd);
        *g = (st_guard) ST_GUARD_INIT;
}

/* ---- procd-starter --guard-cleanup: the CLONE_VM guard after its exec ---- */

static int find_hierarchy(const tr_hierarchies *hs, const char *mount_point)
{
        for (int i = 0; i < hs->n; i++)
                if (strcmp(hs->h[i].mount_point, mount_point) == 0)
                        return i;
        return -1;
}

static int usage_error(const char *what)
{
        fprintf(stderr, "procd-starter: " CLEANUP_FLAG " is the guard's own (guard.h): %s\n", what);
        return 2;
}

int st_guard_cleanup_main(int argc, char **argv)
{
        prctl(PR_SET_NAME, "procd-guard", 0, 0, 0);
        /* procd-guard --guard-cleanup PID LOCK_FD TOP JOB STARTER_LEAF TMP_DIR [J|T MOUNT]... */
        if (argc < 8 || (argc - 8) % 2 != 0)
                return usage_error("wrong number of arguments");
        uint64_t pid, lock;
        bool no_lock = strcmp(argv[3], "-1") == 0;
        if (tr_parse_u64(argv[2], &pid) < 0 || pid < 2 || pid > INT32_MAX ||
            (!no_lock && (tr_parse_u64(argv[3], &lock) < 0 || lock > INT32_MAX)))
                return usage_error("bad pid or lock fd");
        if (argv[4][0] != '/' || argv[5][0] != '/')
                return usage_error("the cgroup paths must be absolute");
        for (int k = 8; k + 1 < argc; k += 2)
                if (strcmp(argv[k], "J") != 0 && strcmp(argv[k], "T") != 0)
                        return usage_error("expected J or T before a mount point");
        tr_error err = { 0 };
        static tr_hierarchies hs; /* ~37 KB: not on the stack */
        st_jobcg jc;
        memset(&jc, 0, sizeof jc);
        jc.top_lock_fd = no_lock ? -1 : (int) lock;
        if (tr_hierarchies_discover(&hs, &err) < 0) {
                fprintf(stderr, "procd-starter: guard: %s\n", err.msg);
                return 1;
        }
        jc.hs = &hs;
        snprintf(jc.top, sizeof jc.top, "%s", argv[4]);
        snprintf(jc.job_path, sizeof jc.job_path, "%s", argv[5]);
        snprintf(jc.starter_path, sizeof jc.starter_path, "%s", argv[6]);
        uint32_t job_mask = 0;
        for (int k = 8; k + 1 < argc; k += 2) {
                int i = find_hierarchy(&hs, argv[k + 1]);
                if (i < 0) {
                        fprintf(stderr, "procd-starter: guard: no cgroup hierarchy at %s now\n", argv[k + 1]);
                        continue;
                }
                if (strcmp(argv[k], "J") == 0)
                        job_mask |= 1u << i;
                else
                        jc.top_created[i] = true;
        }
        /* the starter made these and handed them to its guard */
        unsigned flags = TR_CG_MAY_ACT | TR_CG_OWNED;
        if (job_mask && tr_cgroup_open_in(&hs, jc.job_path, job_mask, flags, &jc.job, &err) < 0 && err.code != ENOENT)
                fprintf(stderr, "procd-starter: guard: opening %s: %s\n", jc.job_path, err.msg);
        tr_error_clear(&err);
        if (job_mask && argv[6][0] && tr_cgroup_open_in(&hs, jc.starter_path, job_mask, flags, &jc.starter, &err) < 0 &&
            err.code != ENOENT)
                fprintf(stderr, "procd-starter: guard: opening %s: %s\n", jc.starter_path, err.msg);
        st_jobns ns;
        memset(&ns, 0, sizeof ns);
        ns.job_dir = argv[7][0] ? strdup(argv[7]) : NULL;
        return end_job((pid_t) pid, &jc, &ns);
}
