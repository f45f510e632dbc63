/* classic-fifo.h - the daemon's named pipes of condor_procd's protocol: the command FIFO
 * and the watchdog FIFO.  Each is (re)created 0600 (a stale one from a dead daemon is
 * replaced), opened for reading (non-blocking, for the main loop) and held open by a
 * dummy writer: the command FIFO never reports EOF, and the watchdog FIFO reads EOF in
 * clients exactly when procd is gone.  The writer is O_CLOEXEC and never written to. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "trackers/error.h"

typedef struct pd_cl_fifo {
        char *path;
        int rfd;  /* read end, O_NONBLOCK */
        int wfd;  /* the dummy writer */
        dev_t dev;
        ino_t ino;
} pd_cl_fifo;

#define PD_CL_FIFO_INIT { .rfd = -1, .wfd = -1 }

/* Create and open path; owner != (uid_t)-1: chown it to owner.  A path that exists and is
 * not a FIFO is refused (-EEXIST). */
int pd_cl_fifo_create(const char *path, uid_t owner, pd_cl_fifo *out, tr_error *err);
/* Close both ends; unlink the path when it is still ours. */
void pd_cl_fifo_close(pd_cl_fifo *f, bool unlink_it);
/* Housekeeping (each timer tick): touch the FIFO (tmpwatch) and check that the path still
 * names it.  -ESTALE when it was removed or replaced. */
int pd_cl_fifo_touch(pd_cl_fifo *f, tr_error *err);
