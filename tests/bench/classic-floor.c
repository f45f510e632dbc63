/* classic-floor.c - the cheapest daemon condor_procd's named-pipe protocol allows: it
 * answers every request with success (GET_USAGE: an all-zero ProcFamilyUsage) and does
 * nothing else, so that its server CPU per call is what the protocol itself costs on this
 * machine, the floor under any implementation's GET_USAGE (run by hand through
 * `bench-classic --daemon build/tests/bench/classic-floor`; not a test).
 *
 *   classic-floor -A ADDR [any other condor_procd option, ignored with its argument]
 *
 * Per request, only what the protocol requires: a poll for the command FIFO to become
 * readable, the read of the request, the open of the client's reply FIFO ADDR.<pid>.<serial>,
 * one write of the reply and the close.  Both FIFOs are made and held as the protocol
 * says (a dummy writer on the command FIFO, the watchdog's write end kept), and readiness is
 * stderr closed.  Only the fixed-size commands are understood; any other request ends it.
 * With CLASSIC_FLOOR_READS set (bench-classic --exact-reads), each GET_USAGE also reads
 * the files it names: the floor under any daemon that reads the counters per request.  A
 * name that begins with '@' is opened, read once and closed per request instead of kept
 * open: a v1 cgroup.procs, whose kept fd rereads a pid list the kernel caches for up to
 * 1 s, so that an exact reader opens it each time (a fresh open's first read returns the
 * whole list when it fits the buffer).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define USAGE_BYTES 112
#define QUIT 13
#define MAX_READS 32

/* request bytes after the 12-byte header of the fixed-size commands, -1: not served */
static int args_bytes(int32_t cmd)
{
        switch (cmd) {
        case 0: /* REGISTER_SUBFAMILY */
                return 12;
        case 5: /* SIGNAL_PROCESS */
        case 4: /* TRACK_VIA_ASSOCIATED_GID */
                return 8;
        case 3: case 6: case 7: case 8: case 9: case 10: /* one pid */
                return 4;
        case 11: case QUIT:
                return 0;
        default:
                return -1;
        }
}

static int make_fifo(const char *path, int *rd, int *dummy_wr)
{
        unlink(path);
        if (mkfifo(path, 0600) < 0)
                return -1;
        *rd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        *dummy_wr = *rd >= 0 ? open(path, O_WRONLY | O_CLOEXEC) : -1;
        return *dummy_wr >= 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
        const char *addr = NULL;
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "-A") && i + 1 < argc)
                        addr = argv[++i];
                else if (argv[i][0] == '-' && i + 1 < argc && argv[i + 1][0] != '-')
                        i++; /* another option and its argument: ignored */
        }
        if (!addr) {
                fprintf(stderr, "usage: classic-floor -A ADDR\n");
                return 2;
        }
        char wd_path[4200];
        snprintf(wd_path, sizeof wd_path, "%s.watchdog", addr);
        int cmd_fd, cmd_dummy, wd_rd, wd_wr;
        if (make_fifo(addr, &cmd_fd, &cmd_dummy) < 0 || make_fifo(wd_path, &wd_rd, &wd_wr) < 0) {
                fprintf(stderr, "classic-floor: %s: %s\n", addr, strerror(errno));
                return 1;
        }
        /* CLASSIC_FLOOR_READS="FILE ...": per GET_USAGE, a pread of each FILE (opened once
         * here; "@FILE" opened, read and closed each time; at most MAX_READS in all), the
         * kernel files an exact answer needs, unparsed: the floor plus the counters
         * (bench-classic --exact-reads) */
        int reads[MAX_READS], n_reads = 0, n_fresh = 0;
        const char *fresh[MAX_READS]; /* into list, kept for the program's life */
        char rbuf[16384];
        const char *env = getenv("CLASSIC_FLOOR_READS");
        char *list = env ? strdup(env) : NULL;
        for (char *save = NULL, *t = list ? strtok_r(list, " ", &save) : NULL; t; t = strtok_r(NULL, " ", &save)) {
                bool each_time = t[0] == '@';
                t += each_time;
                bool room = n_reads + n_fresh < MAX_READS;
                int fd = room ? open(t, O_RDONLY | O_CLOEXEC) : -1;
                if (fd < 0) {
                        fprintf(stderr, "classic-floor: CLASSIC_FLOOR_READS: %s: %s\n", t,
                                room ? strerror(errno) : "too many files");
                        return 1;
                }
                if (each_time) {
                        close(fd); /* it exists: opened again per request */
                        fresh[n_fresh++] = t;
                } else {
                        reads[n_reads++] = fd;
                }
        }
        int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (devnull < 0 || dup2(devnull, 2) < 0) /* readiness: the launcher's pipe sees EOF */
                return 1;
        uint8_t buf[4096], reply[4 + USAGE_BYTES] = { 0 };
        size_t have = 0;
        for (;;) {
                struct pollfd p = { .fd = cmd_fd, .events = POLLIN };
                if (poll(&p, 1, -1) < 0 && errno != EINTR)
                        return 1;
                ssize_t n = read(cmd_fd, buf + have, sizeof buf - have);
                if (n <= 0)
                        continue;
                have += (size_t) n;
                size_t off = 0;
                while (have - off >= 12) {
                        int32_t hdr[3];
                        memcpy(hdr, buf + off, sizeof hdr);
                        int extra = args_bytes(hdr[2]);
                        if (extra < 0)
                                return 1; /* not a floor request */
                        if (have - off < 12 + (size_t) extra)
                                break; /* the rest is still to come */
                        off += 12 + (size_t) extra;
                        char path[4300];
                        snprintf(path, sizeof path, "%s.%u.%u", addr, (unsigned) hdr[0], (unsigned) hdr[1]);
                        int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
                        if (fd < 0)
                                continue; /* the client is gone */
                        for (int r = 0; hdr[2] == 9 && r < n_reads; r++)
                                if (pread(reads[r], rbuf, sizeof rbuf, 0) < 0)
                                        return 1;
                        for (int r = 0; hdr[2] == 9 && r < n_fresh; r++) {
                                int ffd = open(fresh[r], O_RDONLY | O_CLOEXEC);
                                if (ffd < 0 || read(ffd, rbuf, sizeof rbuf) < 0)
                                        return 1;
                                close(ffd);
                        }
                        size_t len = hdr[2] == 9 ? sizeof reply : 4;
                        if (write(fd, reply, len) != (ssize_t) len)
                                fprintf(stderr, "classic-floor: short reply\n");
                        close(fd);
                        if (hdr[2] == QUIT) {
                                unlink(addr);
                                unlink(wd_path);
                                return 0;
                        }
                }
                memmove(buf, buf + off, have - off);
                have -= off;
        }
}
