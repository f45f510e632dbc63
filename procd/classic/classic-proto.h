/* classic-proto.h - condor_procd's named-pipe protocol (HTCondor's ProcFamily wire format,
 * x86_64 Linux): command and error numbers, sizes, and the raw records of the replies.
 * Integers are host order (little-endian), records are naturally aligned C structs; there
 * is no magic, version or length prefix.  See /work/shared/condor-procd-protocol.md. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define PD_CL_HEADER_BYTES 12        /* int32 client_pid, int32 serial, int32 command */
#define PD_CL_MAX_REQUEST_BYTES 4096 /* PIPE_BUF: one request is one atomic write() */
#define PD_CL_PIDENVID_MAX 32        /* PidEnvID: int32 num + 32 x {bool active; char envid[73]} */
#define PD_CL_ENVID_BYTES 73
#define PD_CL_PIDENVID_BYTES (4 + PD_CL_PIDENVID_MAX * (1 + PD_CL_ENVID_BYTES)) /* 2372 */
#define PD_CL_WATCHDOG_SUFFIX ".watchdog"

typedef enum pd_cl_command {
        PD_CL_REGISTER_SUBFAMILY = 0,
        PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT = 1,
        PD_CL_TRACK_FAMILY_VIA_LOGIN = 2,
        PD_CL_TRACK_FAMILY_VIA_ALLOCATED_SUPPLEMENTARY_GROUP = 3,
        PD_CL_TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP = 4,
        PD_CL_SIGNAL_PROCESS = 5,
        PD_CL_SUSPEND_FAMILY = 6,
        PD_CL_CONTINUE_FAMILY = 7,
        PD_CL_KILL_FAMILY = 8,
        PD_CL_GET_USAGE = 9,
        PD_CL_UNREGISTER_FAMILY = 10,
        PD_CL_TAKE_SNAPSHOT = 11,
        PD_CL_DUMP = 12,
        PD_CL_QUIT = 13,
        PD_CL_TRACK_FAMILY_VIA_CGROUP = 14,
        PD_CL_COMMAND_COUNT
} pd_cl_command;

typedef enum pd_cl_error {
        PD_CL_SUCCESS = 0,
        PD_CL_BAD_ROOT_PID = 1,
        PD_CL_BAD_WATCHER_PID = 2,
        PD_CL_BAD_SNAPSHOT_INTERVAL = 3,
        PD_CL_ALREADY_REGISTERED = 4,
        PD_CL_FAMILY_NOT_FOUND = 5,
        PD_CL_PROCESS_NOT_FOUND = 6, /* never sent by condor_procd, nor by procd */
        PD_CL_PROCESS_NOT_FAMILY = 7,
        PD_CL_UNREGISTER_ROOT = 8,
        PD_CL_BAD_ENVIRONMENT_INFO = 9,
        PD_CL_BAD_LOGIN_INFO = 10,
        PD_CL_BAD_GLEXEC_INFO = 11,
        PD_CL_NO_GROUP_ID_AVAILABLE = 12,
        PD_CL_NO_GLEXEC = 13,
        PD_CL_NO_CGROUP_ID_AVAILABLE = 14,
        /* not condor_procd's: one past its last number, which HTCondor's client logs as
         * "Unexpected return code"; REGISTER's answer to a failure of procd's own (out of
         * file descriptors...), which none of the numbers above names (procd's log says why) */
        PD_CL_UNEXPECTED = 15,
} pd_cl_error;
#define PD_CL_ERROR_COUNT 16 /* the numbers above (per-error tables) */
_Static_assert(PD_CL_UNEXPECTED + 1 == PD_CL_ERROR_COUNT, "PD_CL_ERROR_COUNT");

/* GET_USAGE's ProcFamilyUsage (HAVE_PSS build): 112 bytes, align 8. */
typedef struct pd_cl_usage {
        int64_t user_cpu_time;            /* long, seconds */
        int64_t sys_cpu_time;             /* long, seconds */
        double percent_cpu;
        uint64_t max_image_size;          /* KB */
        uint64_t total_image_size;        /* KB */
        uint64_t total_resident_set_size; /* KB */
        uint64_t total_proportional_set_size; /* KB */
        uint8_t total_proportional_set_size_available;
        uint8_t pad[3];
        int32_t num_procs;
        int64_t block_reads;              /* -1: unknown */
        int64_t block_writes;
        int64_t block_read_bytes;
        int64_t block_write_bytes;
        int64_t m_instructions;           /* -1: unknown */
        double io_wait;                   /* -1.0: unknown */
} pd_cl_usage;

_Static_assert(sizeof(pd_cl_usage) == 112, "ProcFamilyUsage is 112 bytes");
_Static_assert(offsetof(pd_cl_usage, total_proportional_set_size_available) == 56, "pss flag at 56");
_Static_assert(offsetof(pd_cl_usage, num_procs) == 60, "num_procs at 60");
_Static_assert(offsetof(pd_cl_usage, block_reads) == 64, "block_reads at 64");
_Static_assert(offsetof(pd_cl_usage, io_wait) == 104, "io_wait at 104");

/* DUMP: per family int32 parent_root, root_pid, watcher_pid, nproc; then nproc of these. */
typedef struct pd_cl_dump_proc {
        int32_t pid;
        int32_t ppid;
        uint64_t birthday;  /* /proc/PID/stat starttime, clock ticks since boot */
        int64_t user_time;  /* long, seconds */
        int64_t sys_time;
} pd_cl_dump_proc;

_Static_assert(sizeof(pd_cl_dump_proc) == 32, "ProcFamilyProcessDump is 32 bytes");
