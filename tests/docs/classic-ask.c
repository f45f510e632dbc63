/* classic-ask.c - one request of condor_procd's named-pipe protocol from the command line,
 * through the test client of tests/procd (classic-client.h), for shell tests:
 *
 *   classic-ask ADDRESS snapshot       TAKE_SNAPSHOT
 *   classic-ask ADDRESS usage PID      GET_USAGE of the family rooted at PID
 *
 * Prints the answer on one line.  Exit status: 0 procd answered success, 1 it answered an
 * error (the protocol's number is printed), 2 usage error or the exchange itself failed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classic-client.h"

static int answer(const char *what, int r)
{
        if (r < 0) {
                printf("%s: no answer: %s\n", what, strerror(-r));
                return 2;
        }
        if (r > 0) {
                printf("%s: error %d\n", what, r);
                return 1;
        }
        return 0;
}

static int ask_usage(cc_client *c, const char *arg)
{
        char *end = NULL;
        long pid = strtol(arg, &end, 10);
        if (!*arg || *end || pid < 0 || pid > 0x7fffffff) {
                fprintf(stderr, "classic-ask: bad pid %s\n", arg);
                return 2;
        }
        cc_usage u;
        int st = answer("usage", cc_get_usage(c, (pid_t) pid, &u));
        if (st == 0)
                printf("usage of %ld: num_procs %d, user_cpu %lld s, sys_cpu %lld s, rss %llu kB\n", pid, u.num_procs,
                       (long long) u.user_cpu_sec, (long long) u.sys_cpu_sec, (unsigned long long) u.rss_kb);
        return st;
}

int main(int argc, char **argv)
{
        if (argc < 3 || (strcmp(argv[2], "usage") == 0) != (argc == 4) ||
            (strcmp(argv[2], "usage") != 0 && strcmp(argv[2], "snapshot") != 0)) {
                fprintf(stderr, "usage: classic-ask ADDRESS snapshot | classic-ask ADDRESS usage PID\n");
                return 2;
        }
        cc_client c;
        int r = cc_open(&c, argv[1], 0, 1);
        if (r < 0) {
                printf("%s: cannot open the watchdog FIFO: %s\n", argv[1], strerror(-r));
                return 2;
        }
        int st;
        if (strcmp(argv[2], "usage") == 0) {
                st = ask_usage(&c, argv[3]);
        } else {
                st = answer("snapshot", cc_snapshot(&c));
                if (st == 0)
                        printf("snapshot: done\n");
        }
        cc_close(&c);
        return st;
}
