/* classic-encode.h - condor_procd's replies: the error word, GET_USAGE's ProcFamilyUsage,
 * the gid of command 3 and DUMP's stream, as items a client reads one read() each.  Items
 * are batched into chunks of at most PIPE_BUF bytes, never split across two write()s. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "procd/classic/classic-proto.h"
#include "procd/types.h"
#include "procd/core/usage-meter.h"
#include "trackers/usage.h"

typedef struct pd_cl_reply {
        GByteArray *bytes;
        GArray *cuts; /* size_t: offsets where a write() must end (the last one is bytes->len);
                       * NULL until the first cut */
} pd_cl_reply;

void pd_cl_reply_init(pd_cl_reply *r);
void pd_cl_reply_clear(pd_cl_reply *r);
/* Empty again for the next reply, its byte buffer kept (r was initialized). */
void pd_cl_reply_reset(pd_cl_reply *r);
/* Append one item (at most PIPE_BUF bytes). */
void pd_cl_reply_item(pd_cl_reply *r, const void *item, size_t n);
/* End of chunk i (0-based); n_chunks chunks in all. */
size_t pd_cl_reply_chunks(const pd_cl_reply *r);
size_t pd_cl_reply_chunk_end(const pd_cl_reply *r, size_t i);

void pd_cl_reply_error(pd_cl_reply *r, pd_cl_error e);
void pd_cl_reply_u32(pd_cl_reply *r, uint32_t v);
void pd_cl_reply_usage(pd_cl_reply *r, const pd_cl_usage *u);
void pd_cl_reply_dump_family(pd_cl_reply *r, int32_t parent_root, int32_t root, int32_t watcher, int32_t nproc);
void pd_cl_reply_dump_proc(pd_cl_reply *r, const pd_cl_dump_proc *p);

/* ProcFamilyUsage from procd's record and the meter's reading (README, "Using procd with
 * HTCondor", lists the mapping field by field). */
void pd_cl_usage_from(const tr_usage *u, const pd_usage_reading *m, pd_cl_usage *out);

/* The classic error number for a command layer status of this command. */
pd_cl_error pd_cl_error_from_status(int32_t command, procd_status s);
