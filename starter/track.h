/* track.h - who tracks the job family: the embedded tracker (tr_family over the job cgroup,
 * with the /proc fallback; no daemon) or the procd daemon (RegisterSubfamily with the
 * starter as watcher + TrackFamilyViaCgroup).  Small ops table, one implementation each.
 *
 * The embedded family is always built: the final usage is read from it (the starter owns
 * the cgroup, so this is exact and needs no round trip) and it answers whenever a procd
 * call fails. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "jobcg.h"
#include "options.h"
#include "procd-wire.h"
#include "trackers/tracker.h"

typedef struct st_track st_track;

typedef struct st_track_ops {
        const char *name; /* "embedded", "procd" */
        int (*signal)(st_track *t, int sig, tr_error *err);
        int (*kill)(st_track *t, uint64_t timeout_usec, bool *empty, tr_error *err);
        /* the end of job's kill, after the root is gone: kill; procd also forgets the
         * family then (KillAndUnregisterFamily), so close sends nothing more */
        int (*end)(st_track *t, uint64_t timeout_usec, bool *empty, tr_error *err);
        int (*freeze)(st_track *t, tr_error *err);
        int (*thaw)(st_track *t, tr_error *err);
        void (*close)(st_track *t);
} st_track_ops;

struct st_track {
        const st_track_ops *ops;
        tr_family *family;  /* always */
        pid_t root;
        st_pw *client;      /* procd mode: the connection (procd-wire.h) */
        char reason[600];   /* embedded: why not procd, or why procd stopped tracking the job */
        bool procd_killed;  /* st_track_confirm: procd says a KillFamily was asked for the job
                               (procctl kill): Dump state "killing" or "killed" */
};

/* Build the embedded family; then, unless o->no_procd, try procd at o->socket_path (a warning
 * and the embedded path when no daemon answers, the reason in t->reason; with
 * o->require_procd that is an error instead).  With procd the family is also named as job
 * o->job_id (default: the job's --name, else its cgroup's) of owner_uid (RegisterJob; an older
 * procd: RegisterSubfamilyWithFlags, TrackFamilyViaCgroup, SetFamilyJob), so
 * that ssh sessions of that user can be adopted into it (pam_procd_adopt).  conn: a
 * connection to procd opened already (--require-procd's check), taken over in any case;
 * NULL: connect here. */
int st_track_open(st_track *t, const st_options *o, st_jobcg *jc, pid_t root, uint64_t root_ticks, uid_t owner_uid,
                  st_pw *conn, tr_error *err);
/* In procd mode: check that procd still knows the family (after a procd restart it may
 * not); if not, switch to the embedded tracker with t->reason set.  Sets t->procd_killed.
 * Call it before the starter's own end-of-job kill (itself a KillFamily). */
void st_track_confirm(st_track *t);
/* The groups of usage fields (enum tr_usage_want) the end of a job needs: everything when
 * the report is shown (not --quiet) or written (--report); else only the OOM kills, which
 * the exit code needs (ST_EXIT_OOM).  A quiet job without a report reads 1-2 files instead
 * of ~15. */
unsigned st_track_usage_wanted(const st_options *o);
int st_track_usage(st_track *t, unsigned want, tr_usage *u, tr_error *err);
void st_track_close(st_track *t);
