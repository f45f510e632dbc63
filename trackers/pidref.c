/* pidref.c - a reference to one process (see pidref.h). */
#include "pidref.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int tr_pidref_open(pid_t pid, uint64_t start_ticks, tr_pidref *out)
{
        *out = TR_PIDREF_EMPTY;
        if (pid <= 0)
                return -EINVAL;
        /* Only "unavailable" goes on without a pidfd: ENOSYS (kernel < 5.3), or EPERM, which
         * the kernel never returns for pidfd_open but a seccomp filter denying it does.
         * EINVAL (kernels before 6.9) or ENOENT (seen on 6.18) means pid is a thread id that
         * leads no thread group: refused.  Other failures (ESRCH, EMFILE...) are returned. */
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0 && (errno == EINVAL || errno == ENOENT))
                return -EINVAL;
        if (fd < 0 && errno != ENOSYS && errno != EPERM)
                return -errno;
        if (fd >= 0)
                (void) fcntl(fd, F_SETFD, FD_CLOEXEC); /* pidfd_open sets it; older kernels too */
        /* read after the pidfd: the pidfd names the process whose start time is checked */
        uint64_t now = 0;
        int r = tr_pid_start_ticks(pid, &now);
        if (r == 0 && start_ticks != 0 && now != start_ticks)
                r = -ESRCH; /* the pid was reused */
        if (r < 0) {
                if (fd >= 0)
                        close(fd);
                return r;
        }
        *out = (tr_pidref) { .pid = pid, .start_ticks = now, .pidfd = fd };
        return 0;
}

void tr_pidref_close(tr_pidref *ref)
{
        if (ref->pidfd >= 0)
                close(ref->pidfd);
        *ref = TR_PIDREF_EMPTY;
}

int tr_pidref_check(const tr_pidref *ref)
{
        uint64_t now = 0;
        if (ref->pid <= 0)
                return -ESRCH;
        int r = tr_pid_start_ticks(ref->pid, &now);
        if (r < 0)
                return r;
        return now == ref->start_ticks ? 0 : -ESRCH;
}

bool tr_pidref_alive(const tr_pidref *ref)
{
        return ref->pid > 0 && tr_pid_alive_as(ref->pid, ref->start_ticks);
}

bool tr_pidref_same(const tr_pidref *a, const tr_pidref *b)
{
        return a->pid > 0 && a->pid == b->pid && a->start_ticks == b->start_ticks;
}

int tr_pidref_signal(const tr_pidref *ref, int sig)
{
        if (ref->pid <= 1)
                return -EPERM; /* never pid 1, never kill() with pid <= 0 */
        if (ref->pidfd >= 0)
                return syscall(SYS_pidfd_send_signal, ref->pidfd, sig, NULL, 0) < 0 ? -errno : 0;
        /* no pidfd: the start time read right before kill() is all the check there is */
        int r = tr_pidref_check(ref);
        if (r < 0)
                return r;
        return kill(ref->pid, sig) < 0 ? -errno : 0;
}

int tr_safe_kill(pid_t pid, uint64_t start_ticks, int sig)
{
        if (pid <= 1)
                return -EPERM;
        _cleanup_pidref_ tr_pidref ref = TR_PIDREF_EMPTY;
        int r = tr_pidref_open(pid, start_ticks, &ref);
        if (r < 0)
                return r;
        return tr_pidref_signal(&ref, sig);
}
