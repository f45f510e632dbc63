/* classic-decode.h - splits condor_procd's request stream into requests.  Requests carry
 * no length: each command's size follows from its arguments (classic-proto.h).  Pure
 * functions over a byte buffer (unit-tested with byte fixtures). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "procd/classic/classic-proto.h"

typedef struct pd_cl_request {
        int32_t client_pid;  /* names the reply FIFO ADDR.<client_pid>.<serial> */
        uint32_t serial;
        int32_t command;
        int32_t pid;         /* the first argument: root / family pid */
        int32_t watcher;     /* REGISTER_SUBFAMILY */
        int32_t interval;    /* REGISTER_SUBFAMILY: max snapshot interval, -1 = none */
        int32_t signo;       /* SIGNAL_PROCESS */
        uint32_t gid;        /* TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP */
        int64_t len;         /* ENVIRONMENT, LOGIN, CGROUP: the length field as sent */
        unsigned n_envids;   /* ENVIRONMENT: active entries */
        pd_cl_error reject;  /* != 0: answer this error without running the command */
        char why[128];       /* the reason of reject, for the log */
        size_t size;         /* bytes the request takes in the stream (INCOMPLETE: needed) */
        /* LOGIN: the login; CGROUP: the cgroup name; ENVIRONMENT: the last (most specific)
         * active envid ("" when the list is empty).  NUL-terminated.  Last, so that a copy
         * of a request can end at the text's end (PD_CL_REQUEST_BYTES). */
        char text[PD_CL_MAX_REQUEST_BYTES];
} pd_cl_request;

/* The bytes of *r that carry something: the fields and the text up to its NUL. */
#define PD_CL_REQUEST_BYTES(r) (offsetof(pd_cl_request, text) + strlen((r)->text) + 1)

typedef enum pd_cl_decode_result {
        PD_CL_DECODED = 0,    /* *out is one whole request of out->size bytes */
        PD_CL_INCOMPLETE,     /* more bytes are needed (header fields set once n >= 8/12) */
        PD_CL_UNKNOWN_COMMAND /* header fields set; size = the header */
} pd_cl_decode_result;

pd_cl_decode_result pd_cl_decode(const uint8_t *buf, size_t n, pd_cl_request *out);

#define PD_CL_PID_MAX_LIMIT 4194304 /* Linux's PID_MAX_LIMIT: no pid is larger */

/* Whether the 12 bytes at buf look like a request header: command known, client pid in
 * 1..PD_CL_PID_MAX_LIMIT. */
bool pd_cl_header_plausible(const uint8_t *buf, size_t n);

/* After an unknown command (garbage: its size is unknown), and only then: the first offset in 1..n-12 holding a plausible header whose reply FIFO
 * live() confirms, or n when none (the rest is dropped). */
size_t pd_cl_resync(const uint8_t *buf, size_t n, bool (*live)(int32_t client_pid, uint32_t serial, void *data),
                    void *data);

const char *pd_cl_command_name(int32_t command);
/* "OK", "BAD_ROOT_PID", ... (HTCondor's names without PROC_FAMILY_ERROR_), "UNKNOWN". */
const char *pd_cl_error_name(int32_t error);
