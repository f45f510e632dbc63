/* classic-encode.c - reply items of condor_procd's protocol and the status mapping. */
#include "classic-encode.h"

#include <string.h>

/* A reply of one chunk (every reply but a long DUMP's) needs no cut list: it is made at
 * the first cut.  Sized for a GET_USAGE (4 + 112 bytes) without a realloc. */
void pd_cl_reply_init(pd_cl_reply *r)
{
        r->bytes = g_byte_array_sized_new(128);
        r->cuts = NULL;
}

static size_t n_cuts(const pd_cl_reply *r) { return r->cuts ? r->cuts->len : 0; }

void pd_cl_reply_clear(pd_cl_reply *r)
{
        if (r->bytes)
                g_byte_array_free(r->bytes, TRUE);
        if (r->cuts)
                g_array_free(r->cuts, TRUE);
        r->bytes = NULL;
        r->cuts = NULL;
}

void pd_cl_reply_reset(pd_cl_reply *r)
{
        g_byte_array_set_size(r->bytes, 0);
        if (r->cuts)
                g_array_free(r->cuts, TRUE);
        r->cuts = NULL;
}

void pd_cl_reply_item(pd_cl_reply *r, const void *item, size_t n)
{
        size_t start = n_cuts(r) ? g_array_index(r->cuts, size_t, r->cuts->len - 1) : 0;
        if (r->bytes->len > start && r->bytes->len - start + n > PD_CL_MAX_REQUEST_BYTES) {
                size_t cut = r->bytes->len;
                if (!r->cuts)
                        r->cuts = g_array_new(FALSE, FALSE, sizeof(size_t));
                g_array_append_val(r->cuts, cut);
        }
        g_byte_array_append(r->bytes, item, (guint) n);
}

size_t pd_cl_reply_chunks(const pd_cl_reply *r)
{
        size_t last = n_cuts(r) ? g_array_index(r->cuts, size_t, r->cuts->len - 1) : 0;
        return n_cuts(r) + (r->bytes->len > last ? 1 : 0);
}

size_t pd_cl_reply_chunk_end(const pd_cl_reply *r, size_t i)
{
        return i < n_cuts(r) ? g_array_index(r->cuts, size_t, i) : r->bytes->len;
}

void pd_cl_reply_error(pd_cl_reply *r, pd_cl_error e)
{
        int32_t v = (int32_t) e;
        pd_cl_reply_item(r, &v, sizeof v);
}

void pd_cl_reply_u32(pd_cl_reply *r, uint32_t v) { pd_cl_reply_item(r, &v, sizeof v); }

void pd_cl_reply_usage(pd_cl_reply *r, const pd_cl_usage *u) { pd_cl_reply_item(r, u, sizeof *u); }

void pd_cl_reply_dump_family(pd_cl_reply *r, int32_t parent_root, int32_t root, int32_t watcher, int32_t nproc)
{
        /* four items of 4 bytes: procd_ctl reads each with its own read() */
        int32_t v[4] = { parent_root, root, watcher, nproc };
        for (int i = 0; i < 4; i++)
                pd_cl_reply_item(r, &v[i], sizeof v[i]);
}

void pd_cl_reply_dump_proc(pd_cl_reply *r, const pd_cl_dump_proc *p) { pd_cl_reply_item(r, p, sizeof *p); }

static uint64_t kb(const tr_u64 *f) { return f->available ? f->value / 1024 : 0; }

void pd_cl_usage_from(const tr_usage *u, const pd_usage_reading *m, pd_cl_usage *out)
{
        memset(out, 0, sizeof *out); /* the pad bytes go on the wire too */
        out->user_cpu_time = u->cpu_user_usec.available ? (int64_t) (u->cpu_user_usec.value / 1000000u) : 0;
        out->sys_cpu_time = u->cpu_system_usec.available ? (int64_t) (u->cpu_system_usec.value / 1000000u) : 0;
        out->percent_cpu = m->percent_cpu;
        out->total_image_size = pd_usage_image_bytes(u) / 1024;
        uint64_t max_kb = m->max_image_bytes / 1024;
        if (!u->image_size_bytes.available && u->memory_peak_bytes.available && kb(&u->memory_peak_bytes) > max_kb)
                max_kb = kb(&u->memory_peak_bytes);
        out->max_image_size = max_kb > out->total_image_size ? max_kb : out->total_image_size;
        out->total_resident_set_size = kb(&u->rss_bytes);
        out->total_proportional_set_size = 0; /* procd does not read smaps: unavailable */
        out->total_proportional_set_size_available = 0;
        out->num_procs = u->num_procs.available ? (int32_t) MIN(u->num_procs.value, (uint64_t) INT32_MAX) : 0;
        out->block_reads = -1; /* I/O operation counts: procd has none */
        out->block_writes = -1;
        out->block_read_bytes = u->io_read_bytes.available ? (int64_t) MIN(u->io_read_bytes.value, (uint64_t) INT64_MAX) : -1;
        out->block_write_bytes =
                u->io_write_bytes.available ? (int64_t) MIN(u->io_write_bytes.value, (uint64_t) INT64_MAX) : -1;
        out->m_instructions = -1;
        out->io_wait = -1.0;
}

/* Per command, the number for a failure the protocol has no closer name for. */
static pd_cl_error fallback(int32_t command)
{
        switch (command) {
        case PD_CL_REGISTER_SUBFAMILY:
                return PD_CL_PROCESS_NOT_FAMILY;
        case PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT:
                return PD_CL_BAD_ENVIRONMENT_INFO;
        case PD_CL_TRACK_FAMILY_VIA_LOGIN:
                return PD_CL_BAD_LOGIN_INFO;
        case PD_CL_TRACK_FAMILY_VIA_ALLOCATED_SUPPLEMENTARY_GROUP:
        case PD_CL_TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP:
                return PD_CL_NO_GROUP_ID_AVAILABLE;
        case PD_CL_TRACK_FAMILY_VIA_CGROUP:
                return PD_CL_NO_CGROUP_ID_AVAILABLE;
        default:
                return PD_CL_FAMILY_NOT_FOUND;
        }
}

pd_cl_error pd_cl_error_from_status(int32_t command, procd_status s)
{
        switch (s) {
        case PROCD_OK:
                return PD_CL_SUCCESS;
        case PROCD_E_FAMILY_NOT_FOUND:
                return PD_CL_FAMILY_NOT_FOUND;
        case PROCD_E_ALREADY_REGISTERED:
                return PD_CL_ALREADY_REGISTERED;
        case PROCD_E_BAD_WATCHER_PID:
                return command == PD_CL_REGISTER_SUBFAMILY ? PD_CL_BAD_WATCHER_PID : fallback(command);
        case PROCD_E_BAD_INTERVAL:
                return command == PD_CL_REGISTER_SUBFAMILY ? PD_CL_BAD_SNAPSHOT_INTERVAL : fallback(command);
        case PROCD_E_ROOT_FAMILY:
                return command == PD_CL_UNREGISTER_FAMILY ? PD_CL_UNREGISTER_ROOT : fallback(command);
        case PROCD_E_NO_GID:
                return PD_CL_NO_GROUP_ID_AVAILABLE;
        case PROCD_E_BAD_CGROUP:
                return PD_CL_NO_CGROUP_ID_AVAILABLE;
        case PROCD_E_BAD_ROOT_PID:
        case PROCD_E_PROCESS_NOT_FOUND:
        case PROCD_E_NOT_IN_FAMILY:
                /* REGISTER: a root that does not exist or procd may not take is "not a
                 * tracked process" (7), as condor_procd answers it; elsewhere no family */
                return command == PD_CL_REGISTER_SUBFAMILY ? PD_CL_PROCESS_NOT_FAMILY : fallback(command);
        case PROCD_E_INTERNAL:
                /* REGISTER: procd's own failure (out of file descriptors...) is not "not a
                 * tracked process" (7): a number HTCondor's client logs as unexpected */
                return command == PD_CL_REGISTER_SUBFAMILY ? PD_CL_UNEXPECTED : fallback(command);
        default:
                return fallback(command);
        }
}
