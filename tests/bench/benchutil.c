/* benchutil.c - helpers the benchmark programs share. */
#include "benchutil.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return (x > y) - (x < y);
}

uint64_t bench_median(uint64_t *v, size_t n)
{
        qsort(v, n, sizeof *v, cmp_u64);
        return v[n / 2];
}

pid_t bench_sleeper(void)
{
        pid_t pid = fork();
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;)
                        pause();
        }
        return pid;
}

void bench_kill_reap(pid_t pid)
{
        if (pid <= 1)
                return;
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}
