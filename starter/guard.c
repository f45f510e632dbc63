/* guard.c - the guard that ends a killed starter's job (see guard.h). */
#include "guard.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
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
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define GUARD_KILL_TIMEOUT_USEC 10000000ULL
#define GUARD_DESTROY_TIMEOUT_USEC 5000000ULL
#define GUARD_LOOK_USEC 100000

/* Until the starter is gone: its pidfd polls readable when it exits.  Without pidfd_open
 * (before Linux 5.3), look at the parent every GUARD_LOOK_USEC. */
static void wait_for_starter(pid_t starter)
{
        int pfd = (int) syscall(SYS_pidfd_open, starter, 0);
        if (pfd < 0) {
                while (getppid() == starter)
                        usleep(GUARD_LOOK_USEC);
                return;
        }
        /* the pidfd names the starter only if it was still our parent after it was opened */
        if (getppid() == starter) {
                struct pollfd p = { pfd, POLLIN, 0 };
                while (poll(&p, 1, -1) < 0 && errno == EINTR)
                        ;
        }
        close(pfd);
}

static __attribute__((noreturn)) void guard_run(pid_t starter, st_jobcg *jc, st_jobns *ns, int drop_fd)
{
        prctl(PR_SET_NAME, "procd-guard", 0, 0, 0);
        if (drop_fd >= 0)
                close(drop_fd);
        if (jc->ops)
                jc->ops->drop_in_guard(jc);
        wait_for_starter(starter);
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
        _exit(left ? 1 : 0);
}

int st_guard_start(st_guard *g, st_jobcg *jc, st_jobns *ns, int drop_fd, tr_error *err)
{
        g->pid = -1;
        g->pidfd = -1;
        pid_t starter = getpid();
        fflush(NULL); /* nothing buffered is written twice */
        pid_t pid = fork();
        if (pid < 0)
                return tr_error_setx(err, errno, "fork (guard)");
        if (pid == 0)
                guard_run(starter, jc, ns, drop_fd);
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

void st_guard_stop(st_guard *g)
{
        if (g->pidfd < 0)
                return;
        syscall(SYS_pidfd_send_signal, g->pidfd, SIGKILL, NULL, 0);
        siginfo_t si;
        memset(&si, 0, sizeof si);
        while (waitid((idtype_t) P_PIDFD, (id_t) g->pidfd, &si, WEXITED) < 0 && errno == EINTR)
                ;
        close(g->pidfd);
        g->pidfd = -1;
        g->pid = -1;
}
