/* classic-server.h - condor_procd's named-pipe transport, a second adapter over the command
 * layer (procd/core/command.h), served from the GLib main loop beside (or instead of) D-Bus.
 *
 * ADDR is the command FIFO, ADDR.watchdog the liveness FIFO (classic-fifo.h); each request
 * is answered on the client's FIFO ADDR.<pid>.<serial>, named by the request header.
 * Framing.  Every request is one write() of at most PIPE_BUF bytes, so it reaches the pipe
 * whole; procd reads with a buffer as large as the pipe, so a read that returns less than
 * the buffer drained the pipe and the next read begins with the start of a write.  The bytes
 * are split by each command's size (classic-decode.c's table) and nothing else: no byte
 * inside a complete request is ever read as a header.  A request cut short by the end of the
 * data waits for its rest, bounded by PD_CL_PARTIAL_TIMEOUT_MS, and is dropped when the next
 * write begins instead (its writer sent less than its command needs): answered with an
 * error when its reply FIFO is known.  A whole request whose reply FIFO does not exist is
 * skipped by its size.  Only after an unknown command (no size known) are bytes skipped up
 * to the next header whose reply FIFO exists.  A reply FIFO is opened non-blocking, retried
 * until PD_ADMISSION_AUTH_TIMEOUT_SEC, by its name under the address folder opened at start
 * (the housekeeping reopens the folder when its path names another one, as condor_procd
 * resolves the path each time); replies are written as whole items, waiting (in the
 * loop) while a client drains a long DUMP.  An address folder that users other than root
 * and the principal may write is logged as a warning at start: whoever writes there can
 * make reply FIFOs of other clients' names.
 *
 * Authorization as condor_procd: the FIFO is 0600, owned by root or by the -C principal, so
 * only they can write requests; the caller is the owner of the reply FIFO: root and the
 * principal act as uid 0 in the command layer, any other owner as itself.  Requests in
 * progress are bounded per uid (root and the principal counting as root) by the admission
 * module. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "procd/core/command.h"
#include "trackers/error.h"

#define PD_CL_PARTIAL_TIMEOUT_MS 1000   /* the rest of a request must come within this */
#define PD_CL_REPLY_TIMEOUT_SEC 30      /* a client that stops draining its reply is dropped */
#define PD_CL_MAX_REQUESTS 256          /* requests in progress (admission slots) */

typedef struct pd_classic_server pd_classic_server;

typedef struct pd_classic_options {
        const char *address;   /* ADDR */
        uid_t principal;       /* -C: its requests act as root's; (uid_t)-1: none */
        uid_t chown_to;        /* owner given to the FIFOs; (uid_t)-1: procd's */
        bool gid_allocate;     /* -G: TRACK_FAMILY_VIA_ALLOCATED_SUPPLEMENTARY_GROUP */
        bool gid_associate;    /* -G -E: TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP */
        pid_t root_watcher;    /* DUMP's watcher of the root family (the parent, or 0 with -P) */
        unsigned housekeeping_sec; /* touch and check the FIFOs this often (0: 60) */
        void (*lost)(void *data);  /* the command FIFO was removed or replaced */
        void *lost_data;
} pd_classic_options;

int pd_classic_server_new(const pd_classic_options *o, pd_commands *cm, pd_classic_server **out, tr_error *err);
/* Finish what can be written of pending replies, close and unlink both FIFOs. */
void pd_classic_server_free(pd_classic_server *s);
