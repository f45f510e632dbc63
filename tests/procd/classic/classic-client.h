/* classic-client.h - a test client of condor_procd's named-pipe protocol, written from
 * the byte layout in condor-procd-protocol.md (x86_64, little-endian) and sharing nothing
 * with the daemon's encoder.  Unlike HTCondor's client it bounds every wait, so a daemon
 * that never answers fails a test instead of hanging it.
 *
 * Calls return the protocol's error number (>= 0, CC_SUCCESS == 0) or, when the exchange
 * itself failed, -errno: -ETIMEDOUT (no answer in time), -EPIPE (watchdog closed: the
 * daemon is gone), -EPROTO (a short or overlong reply), -ENXIO (no daemon reads ADDR). */
#pragma once

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum cc_command {
        CC_REGISTER_SUBFAMILY = 0,
        CC_TRACK_VIA_ENVIRONMENT = 1,
        CC_TRACK_VIA_LOGIN = 2,
        CC_TRACK_VIA_ALLOCATED_GID = 3,
        CC_TRACK_VIA_ASSOCIATED_GID = 4,
        CC_SIGNAL_PROCESS = 5,
        CC_SUSPEND_FAMILY = 6,
        CC_CONTINUE_FAMILY = 7,
        CC_KILL_FAMILY = 8,
        CC_GET_USAGE = 9,
        CC_UNREGISTER_FAMILY = 10,
        CC_TAKE_SNAPSHOT = 11,
        CC_DUMP = 12,
        CC_QUIT = 13,
        CC_TRACK_VIA_CGROUP = 14,
};

enum cc_error {
        CC_SUCCESS = 0,
        CC_BAD_ROOT_PID = 1,
        CC_BAD_WATCHER_PID = 2,
        CC_BAD_SNAPSHOT_INTERVAL = 3,
        CC_ALREADY_REGISTERED = 4,
        CC_FAMILY_NOT_FOUND = 5,
        CC_PROCESS_NOT_FOUND = 6,
        CC_PROCESS_NOT_FAMILY = 7,
        CC_UNREGISTER_ROOT = 8,
        CC_BAD_ENVIRONMENT_INFO = 9,
        CC_BAD_LOGIN_INFO = 10,
        CC_NO_GROUP_ID_AVAILABLE = 12,
        CC_NO_CGROUP_ID_AVAILABLE = 14,
        CC_UNEXPECTED = 15, /* procd's alone: REGISTER failed on procd's side (its log says why) */
};

#define CC_USAGE_BYTES 112
#define CC_PIDENVID_BYTES 2372
#define CC_PIDENVID_MAX 32
#define CC_ENVID_SIZE 73
#define CC_DUMP_PROC_BYTES 32

/* ProcFamilyUsage, decoded field by field from its 112 bytes. */
typedef struct cc_usage {
        int64_t user_cpu_sec, sys_cpu_sec;
        double percent_cpu;
        uint64_t max_image_kb, total_image_kb, rss_kb, pss_kb;
        bool pss_available;
        uint8_t pad[3];
        int32_t num_procs;
        int64_t block_reads, block_writes, block_read_bytes, block_write_bytes;
        int64_t instructions;
        double io_wait;
} cc_usage;

typedef struct cc_dump_proc {
        pid_t pid, ppid;
        uint64_t birthday;
        int64_t user_sec, sys_sec;
} cc_dump_proc;

typedef struct cc_dump_family {
        pid_t parent_root, root, watcher;
        int32_t nproc;
        cc_dump_proc *procs;
} cc_dump_family;

typedef struct cc_client {
        char addr[200];
        char reply_path[240];
        pid_t hdr_pid;      /* the header's client pid: names the reply FIFO */
        uint32_t serial;
        int watchdog_fd;
        int timeout_ms;     /* bound on each wait (default 30 s) */
} cc_client;

/* Open the watchdog FIFO of ADDR; hdr_pid 0 = getpid(). 0 or -errno. */
int cc_open(cc_client *c, const char *addr, pid_t hdr_pid, uint32_t serial);
void cc_close(cc_client *c);

/* Raw exchange: write `len` request bytes as one write() to ADDR (the caller builds the
 * header, or garbage); no reply FIFO is made.  0 or -errno. */
int cc_write_raw(const char *addr, const void *bytes, size_t len);
/* Wait (bounded) until the daemon has read everything in ADDR, so that the next write is
 * read on its own: a truncated request followed at once by another client's request would
 * otherwise reach the daemon as one run of bytes, which no framing can split.  0 or -errno. */
int cc_wait_drained(const char *addr, int timeout_ms);
/* Put the 12-byte header (hdr_pid, serial, cmd) and args into buf; returns the length. */
size_t cc_frame(const cc_client *c, int32_t cmd, const void *args, size_t args_len, uint8_t *buf, size_t size);

/* One request and its whole reply: the reply FIFO is made, the request written, the
 * error word read, then (only when it is 0) `extra_len` bytes into `extra` (exactly; a
 * reply that then carries more bytes, or any after an error, is -EPROTO). */
int cc_call(cc_client *c, int32_t cmd, const void *args, size_t args_len, void *extra, size_t extra_len);

int cc_register(cc_client *c, pid_t root, pid_t watcher, int32_t max_snapshot_interval);
int cc_simple(cc_client *c, int32_t cmd, pid_t pid); /* SUSPEND, CONTINUE, KILL, UNREGISTER */
int cc_signal(cc_client *c, pid_t pid, int32_t signo);
int cc_get_usage(cc_client *c, pid_t pid, cc_usage *out);
int cc_snapshot(cc_client *c);
int cc_quit(cc_client *c);
/* PidEnvID payload: num = 32, then `nentries` active entries from envids[]. */
void cc_pidenvid(uint8_t out[CC_PIDENVID_BYTES], const char *const *envids, int nentries);
int cc_track_env(cc_client *c, pid_t pid, const uint8_t payload[CC_PIDENVID_BYTES]);
int cc_track_login(cc_client *c, pid_t pid, const char *login);
int cc_track_alloc_gid(cc_client *c, pid_t pid, gid_t *gid_out);
int cc_track_assoc_gid(cc_client *c, pid_t pid, gid_t gid);
int cc_track_cgroup(cc_client *c, pid_t pid, const char *name);
/* DUMP: families (malloc'd, free with cc_dump_free). */
int cc_dump(cc_client *c, pid_t pid, cc_dump_family **out, size_t *n);
void cc_dump_free(cc_dump_family *f, size_t n);
const cc_dump_family *cc_dump_find(const cc_dump_family *f, size_t n, pid_t root);

/* Decode 112 bytes (exported for the layout check). */
void cc_usage_decode(const uint8_t b[CC_USAGE_BYTES], cc_usage *u);

/* A daemon started as HTCondor's ProcFamilyProxy starts one: argv[0] = basename, stdin and
 * stdout /dev/null, stderr a pipe that must reach EOF with no byte written (readiness). */
typedef struct cc_daemon {
        pid_t pid;
        char dir[64];       /* temporary directory holding the FIFOs and the log */
        char addr[128];     /* dir/procd_pipe */
        char errtext[256];  /* what the daemon wrote to stderr instead of readiness */
} cc_daemon;

/* The daemon binary: $PROCD_CLASSIC_DAEMON, else <build>/procd/procd. */
const char *cc_daemon_exe(void);
/* True when the daemon binary is HTCondor's condor_procd (basename), for the cases where
 * procd is meant to behave better than it. */
bool cc_daemon_is_condor(void);
/* Whether this test process sits in the root cgroup of the hierarchy procd matches families
 * in (v2, else name=systemd, else the first). */
bool cc_in_root_cgroup(void);
/* Whether a procd started with extra (placed: a pre_exec hook puts it in a cgroup) gets
 * --no-family-cgroups: it would sit in the root cgroup, where procd as HTCondor's procd
 * takes a base of its own (/procd-families/..., outside the run's test base), and the test
 * named no family-cgroup option.  Tests keep their cgroups under the run's base. */
bool cc_keeps_no_family_cgroups(const char *const *extra, bool placed);
/* Start `exe -A dir/procd_pipe extra...` (an extra "@LOG" becomes dir/procd.log) and wait (bounded) for readiness.  0 when ready;
 * -EPROTO with errtext filled when it wrote to stderr or exited; -errno else. */
int cc_daemon_start(cc_daemon *d, const char *const *extra);
/* The same, running pre_exec(arg) in the daemon's process before exec (e.g. to place it in
 * a cgroup, as a site's service manager would). */
int cc_daemon_start_with(cc_daemon *d, const char *const *extra, void (*pre_exec)(void *arg), void *arg);
/* QUIT (or SIGKILL when it does not answer) and reap; returns the waitpid status or -errno;
 * removes the directory. */
int cc_daemon_stop(cc_daemon *d);
/* Reply FIFOs, watchdog and command FIFO paths left in d->dir are removed. */
void cc_daemon_cleanup_dir(cc_daemon *d);
/* Whether a classic-protocol test program can run: root (else prints why via
 * ts_need_root(what)) and a daemon started with `extra` that serves the protocol (else
 * prints why).  0 when it can, 77 (ctest's skip code) otherwise. */
int cc_can_run(const char *what, const char *const *extra);

/* One line per case: the call's answer against the expected error number. */
#define CHECK_ERR(call, expect)                                                                \
        do {                                                                                   \
                int _r = (call);                                                               \
                if (_r != (expect))                                                            \
                        fprintf(stderr, "%s:%d: %s -> %d, expected %d\n", __FILE__, __LINE__, #call, _r, \
                                (int) (expect));                                               \
                CU_ASSERT_EQUAL(_r, (expect));                                                 \
        } while (0)
