/* classic-server.c - condor_procd's protocol over the command layer: reading and framing
 * requests, reply FIFOs, dispatch, replies. */
#include "classic-server.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procd/core/admission.h"
#include "procd/classic/classic-decode.h"
#include "procd/classic/classic-encode.h"
#include "procd/core/stats.h"
#include "procd/classic/classic-fifo.h"
#include "procd/core/command-query.h"
#include "procd/core/fd-mux.h"
#include "procd/core/registry.h"
#include "procd/wire.h"
#include "trackers/procscan.h"
#include "trackers/util.h"

#define READ_CHUNK 65536                 /* a pipe's capacity: one read drains it */
#define OPEN_RETRY_MS 10                 /* reply FIFO not open for reading yet */
#define SPARE_REPLY_MAX 4096             /* a kept record's reply buffer at most this full */

struct pd_classic_server {
        pd_classic_options o;
        char *address;
        char *dir;                /* the address folder's path ("." for a bare name) */
        int dirfd;                /* that folder, opened at start (O_PATH): reply FIFOs are
                                   * opened under it; reopened by housekeeping when the path
                                   * names another folder */
        size_t base;              /* offset of the address's last component in address */
        pd_commands *cm;
        pd_cl_fifo cmd, wd;
        pd_fd_mux_entry *in_watch; /* the command FIFO, in the registry's fd set */
        guint partial_timer;
        pd_fd_mux_entry *hk_timer; /* the housekeeping timer (the registry's fd mux) */
        GByteArray *in;           /* unparsed request bytes */
        bool read_full;           /* the last read filled rbuf: the pipe may hold the rest */
        bool debug;               /* debug lines are kept: asked once, at start (asking reads
                                   * G_MESSAGES_DEBUG from the environment each time) */
        GPtrArray *reqs;          /* creq *: requests in progress */
        struct creq *spare;       /* the last request's record, kept for the next one */
        pd_admission *adm;
        pd_cl_request scratch;    /* the request being decoded (take_requests) */
        uint64_t *counters[PD_CL_COMMAND_COUNT][PD_CL_ERROR_COUNT]; /* count(): kept, NULL until used */
        bool statx_null_path;     /* the reply FIFO's statx takes a NULL path (tr_fstat_untimed) */
        uint8_t rbuf[READ_CHUNK];
};

typedef struct creq {
        pd_classic_server *s;
        char *path;               /* ADDR.<pid>.<serial> */
        int fd;
        uid_t owner;              /* of the reply FIFO */
        pd_slot *slot;
        bool admitted;            /* owner, who and slot are set */
        pd_caller who;
        gint64 deadline_usec;     /* opening the reply FIFO (0 until an open finds no
                                   * reader), then each wait to write */
        guint timer, out_src;
        pd_cl_reply reply;
        size_t chunk, off;        /* next chunk to write, bytes of it written */
        bool replying;
        pd_cl_request r; /* last: copied only up to its text's end (start_request) */
} creq;

static void creq_free(creq *q)
{
        if (q->timer)
                g_source_remove(q->timer);
        if (q->out_src)
                g_source_remove(q->out_src);
        if (q->fd >= 0)
                close(q->fd);
        pd_admission_release(q->s->adm, q->slot);
        /* one record kept for the next request, with its path buffer (always the same
         * size) and its reply buffer unless a big reply grew it: a creq is ~4.3 KB, and
         * glibc's malloc of a chunk that size first consolidates the fastbins the request's
         * small frees filled (malloc_consolidate on every request); with the path and the
         * reply's two blocks, ~1,100 instructions a request (issue 20) */
        if (!q->s->spare && q->reply.bytes && q->reply.bytes->len <= SPARE_REPLY_MAX) {
                pd_cl_reply_reset(&q->reply);
                q->s->spare = q;
                return;
        }
        pd_cl_reply_clear(&q->reply);
        g_free(q->path);
        g_free(q);
}

static void creq_done(creq *q)
{
        g_ptr_array_remove_fast(q->s->reqs, q);
        creq_free(q);
}

/* The size of every reply path's buffer. */
static size_t reply_path_size(const pd_classic_server *s) { return strlen(s->address) + 2 * (1 + 10) + 1; }

/* ADDR.<pid>.<serial> into path (reply_path_size bytes), by hand: a g_strdup_printf was
 * ~1,600 instructions of every request (issue 20). */
static char *put_reply_path(const pd_classic_server *s, char *path, int32_t client_pid, uint32_t serial)
{
        size_t na = strlen(s->address);
        char *w = path + na;
        memcpy(path, s->address, na);
        *w++ = '.';
        w = tr_put_u64(w, (uint32_t) client_pid);
        *w++ = '.';
        w = tr_put_u64(w, serial);
        *w = '\0';
        return path;
}

/* A reply path's name under s->dirfd (its last component). */
static const char *reply_name(const pd_classic_server *s, const char *path) { return path + s->base; }

/* Whether the reply FIFO a header names exists (a live client made it). */
static bool reply_fifo_exists(int32_t client_pid, uint32_t serial, void *data)
{
        pd_classic_server *s = data;
        if (client_pid <= 0)
                return false;
        g_autofree char *p = put_reply_path(s, g_malloc(reply_path_size(s)), client_pid, serial);
        struct stat st;
        return fstatat(s->dirfd, reply_name(s, p), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISFIFO(st.st_mode);
}

/* ---- writing the reply ---- */

static gboolean write_more(gint fd, GIOCondition cond, gpointer data);
static gboolean write_timeout(gpointer data);

/* Write what the pipe takes of the reply: 1 when all is written, 0 when the pipe is full
 * (EAGAIN), -errno on failure. */
static int write_some(creq *q)
{
        size_t n = pd_cl_reply_chunks(&q->reply);
        while (q->chunk < n) {
                size_t start = q->chunk ? pd_cl_reply_chunk_end(&q->reply, q->chunk - 1) : 0;
                size_t end = pd_cl_reply_chunk_end(&q->reply, q->chunk);
                ssize_t w = write(q->fd, q->reply.bytes->data + start + q->off, end - start - q->off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return errno == EAGAIN ? 0 : -errno;
                q->off += (size_t) w;
                if (start + q->off >= end) {
                        q->chunk++;
                        q->off = 0;
                }
        }
        return 1;
}

static void write_reply(creq *q)
{
        q->replying = true;
        int k = write_some(q);
        if (k == 0) {
                /* the client drains a long DUMP: wait in the loop, bounded */
                q->deadline_usec = g_get_monotonic_time() + PD_CL_REPLY_TIMEOUT_SEC * G_USEC_PER_SEC;
                if (!q->out_src)
                        q->out_src = g_unix_fd_add(q->fd, G_IO_OUT | G_IO_ERR, write_more, q);
                if (!q->timer)
                        q->timer = g_timeout_add_seconds(PD_CL_REPLY_TIMEOUT_SEC, write_timeout, q);
                return;
        }
        if (k < 0)
                g_message("classic: %s reply to pid %d: %s (client gone?)", pd_cl_command_name(q->r.command),
                          (int) q->r.client_pid, strerror(-k));
        creq_done(q);
}

static gboolean write_more(gint fd, GIOCondition cond, gpointer data)
{
        creq *q = data;
        (void) fd;
        (void) cond;
        q->out_src = 0;
        if (q->timer) {
                g_source_remove(q->timer);
                q->timer = 0;
        }
        write_reply(q);
        return G_SOURCE_REMOVE;
}

static gboolean write_timeout(gpointer data)
{
        creq *q = data;
        q->timer = 0;
        g_warning("classic: pid %d did not read its %s reply within %d s: dropped", (int) q->r.client_pid,
                  pd_cl_command_name(q->r.command), PD_CL_REPLY_TIMEOUT_SEC);
        creq_done(q);
        return G_SOURCE_REMOVE;
}

/* procd's request counters (metrics): condor_procd's command and error names; each
 * pair's counter found once and kept (pd_stats_request_counter) */
static void count(creq *q, pd_cl_error e)
{
        pd_classic_server *s = q->s;
        int32_t c = q->r.command;
        bool known = c >= 0 && c < PD_CL_COMMAND_COUNT && (int) e >= 0 && (int) e < PD_CL_ERROR_COUNT;
        uint64_t **slot = known ? &s->counters[c][e] : NULL;
        uint64_t *n = slot && *slot ? *slot
                                    : pd_stats_request_counter(s->cm->stats, pd_cl_command_name(c), pd_cl_error_name(e));
        if (slot)
                *slot = n;
        if (n)
                (*n)++;
}

static void count_malformed(pd_classic_server *s)
{
        if (s->cm->stats)
                s->cm->stats->malformed_requests++;
}

static void reply_error(creq *q, pd_cl_error e)
{
        count(q, e);
        pd_cl_reply_error(&q->reply, e);
        write_reply(q);
}

/* ---- dispatch ---- */

static void log_failure(creq *q, pd_cl_error e, const procd_error *err)
{
        if (e != PD_CL_SUCCESS)
                g_info("classic: %s %d from pid %d: error %d (%s)", pd_cl_command_name(q->r.command), (int) q->r.pid,
                       (int) q->r.client_pid, (int) e, err && err->msg[0] ? err->msg : "");
}

static void answer_status(creq *q, procd_status st, const procd_error *err)
{
        pd_cl_error e = pd_cl_error_from_status(q->r.command, st);
        log_failure(q, e, err);
        reply_error(q, e);
}

static void async_done(procd_status st, const procd_error *err, void *data)
{
        answer_status(data, st, err);
}

static void h_get_usage(creq *q)
{
        procd_error err = { 0 };
        tr_usage u;
        pd_usage_reading m;
        /* only what the 112-byte record carries (no PSI, pids or OOM reads, and no CPU
         * total: its user and system times) */
        unsigned want = TR_WANT_CPU_SPLIT | TR_WANT_MEMORY | TR_WANT_RSS | TR_WANT_PROCS | TR_WANT_IO;
        procd_status st = pd_cmd_get_usage(q->s->cm, &q->who, q->r.pid, want, &u, &m, &err);
        pd_cl_error e = pd_cl_error_from_status(q->r.command, st);
        if (e != PD_CL_SUCCESS) {
                log_failure(q, e, &err);
                reply_error(q, e);
                return;
        }
        pd_cl_usage cu;
        pd_cl_usage_from(&u, &m, &cu);
        count(q, PD_CL_SUCCESS);
        pd_cl_reply_error(&q->reply, PD_CL_SUCCESS);
        pd_cl_reply_usage(&q->reply, &cu);
        write_reply(q);
}

/* The families of a DUMP in pre-order from family i: order[] gets their indexes. */
static void dump_order(const procd_family_info *infos, size_t n, size_t i, bool *seen, GArray *order)
{
        if (seen[i])
                return;
        seen[i] = true;
        g_array_append_val(order, i);
        for (size_t j = 0; j < n; j++)
                if (j != i && infos[j].parent_root_pid == infos[i].root_pid)
                        dump_order(infos, n, j, seen, order);
}

/* One family of a DUMP: its own processes only.  A cgroup family's members include its
 * subfamilies' (membership is hierarchical); as condor_procd, each process is listed once,
 * under the deepest family holding it (owner: pid -> index + 1). */
static void dump_family(creq *q, const procd_family_info *fi, size_t i, GHashTable *owner, long hz)
{
        g_autofree pd_cl_dump_proc *procs = g_new0(pd_cl_dump_proc, fi->n_members ? fi->n_members : 1);
        int32_t np = 0;
        for (size_t k = 0; k < fi->n_members; k++) {
                tr_proc p;
                if (GPOINTER_TO_SIZE(g_hash_table_lookup(owner, GINT_TO_POINTER(fi->members[k]))) != i + 1)
                        continue; /* listed under a subfamily */
                if (tr_proc_stat_read(fi->members[k], &p) < 0)
                        continue; /* gone since */
                procs[np++] = (pd_cl_dump_proc) {
                        .pid = p.pid,
                        .ppid = p.ppid,
                        .birthday = p.start_ticks,
                        .user_time = (int64_t) (p.utime_ticks / (uint64_t) hz),
                        .sys_time = (int64_t) (p.stime_ticks / (uint64_t) hz),
                };
        }
        pid_t watcher = fi->parent_root_pid == 0 ? q->s->o.root_watcher : fi->watcher_pid;
        pd_cl_reply_dump_family(&q->reply, fi->parent_root_pid, fi->root_pid, watcher, np);
        for (int32_t k = 0; k < np; k++)
                pd_cl_reply_dump_proc(&q->reply, &procs[k]);
}

static void h_dump(creq *q)
{
        procd_error err = { 0 };
        procd_family_info *infos = NULL;
        size_t n = 0;
        procd_status st = pd_cmd_dump(q->s->cm, &q->who, q->r.pid, &infos, &n, &err);
        pd_cl_error e = pd_cl_error_from_status(q->r.command, st);
        if (e == PD_CL_SUCCESS && n == 0)
                e = PD_CL_FAMILY_NOT_FOUND;
        if (e != PD_CL_SUCCESS) {
                procd_family_info_free(infos, n);
                log_failure(q, e, &err);
                reply_error(q, e);
                return;
        }
        long hz = sysconf(_SC_CLK_TCK);
        if (hz <= 0)
                hz = 100;
        g_autofree bool *seen = g_new0(bool, n);
        g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(size_t));
        /* infos[0] is the family asked for (the root family for 0) */
        for (size_t i = 0; i < n; i++) /* i > 0: parent not in the set, never expected, still sent */
                dump_order(infos, n, i, seen, order);
        g_autoptr(GHashTable) owner = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (guint k = 0; k < order->len; k++) { /* pre-order: deeper families come later and win */
                size_t i = g_array_index(order, size_t, k);
                for (size_t m = 0; m < infos[i].n_members; m++)
                        g_hash_table_insert(owner, GINT_TO_POINTER(infos[i].members[m]), GSIZE_TO_POINTER(i + 1));
        }
        int32_t nfam = (int32_t) n;
        count(q, PD_CL_SUCCESS);
        pd_cl_reply_error(&q->reply, PD_CL_SUCCESS);
        pd_cl_reply_item(&q->reply, &nfam, sizeof nfam);
        for (guint k = 0; k < order->len; k++) {
                size_t i = g_array_index(order, size_t, k);
                dump_family(q, &infos[i], i, owner, hz);
        }
        procd_family_info_free(infos, n);
        write_reply(q);
}

/* An envid list / login the command layer has nothing to track for: accepted, as
 * condor_procd does, once the family is known. */
static void accept_untracked(creq *q, const char *what)
{
        procd_error err = { 0 };
        pid_t root;
        procd_status st = pd_cmd_family_root(q->s->cm, q->r.pid, &root, &err);
        if (st == PROCD_OK)
                g_info("classic: %s for family %d: %s: nothing to track", pd_cl_command_name(q->r.command),
                       (int) q->r.pid, what);
        answer_status(q, st, &err);
}

static void h_register(creq *q)
{
        const pd_cl_request *r = &q->r;
        /* condor_procd's order of checks */
        if (r->pid <= 0) {
                reply_error(q, PD_CL_BAD_ROOT_PID);
                return;
        }
        if (r->watcher < 0) {
                reply_error(q, PD_CL_BAD_WATCHER_PID);
                return;
        }
        if (r->interval < -1) {
                reply_error(q, PD_CL_BAD_SNAPSHOT_INTERVAL);
                return;
        }
        uint32_t iv = r->interval == -1 ? PD_MAX_INTERVAL_SEC
                      : r->interval == 0 ? 1
                                         : (uint32_t) MIN((uint32_t) r->interval, PD_MAX_INTERVAL_SEC);
        procd_error err = { 0 };
        procd_status st = pd_cmd_register_subfamily(q->s->cm, &q->who, r->pid, r->watcher, iv, &err);
        answer_status(q, st, &err);
}

static void h_track_environment(creq *q)
{
        if (q->r.n_envids == 0) {
                accept_untracked(q, "empty ancestor list");
                return;
        }
        procd_error err = { 0 };
        procd_status st = pd_cmd_track_environment(q->s->cm, &q->who, q->r.pid, q->r.text, &err);
        answer_status(q, st, &err);
}

static void h_track_login(creq *q)
{
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwnam_r(q->r.text, &pw, buf, sizeof buf, &res) != 0 || !res) {
                accept_untracked(q, "unknown login");
                return;
        }
        procd_error err = { 0 };
        procd_status st = pd_cmd_track_login(q->s->cm, &q->who, q->r.pid, q->r.text, &err);
        answer_status(q, st, &err);
}

static void h_track_allocated_group(creq *q)
{
        if (!q->s->o.gid_allocate) {
                reply_error(q, PD_CL_NO_GROUP_ID_AVAILABLE);
                return;
        }
        procd_error err = { 0 };
        gid_t gid = 0;
        procd_status st = pd_cmd_track_allocated_group(q->s->cm, &q->who, q->r.pid, &gid, &err);
        if (st != PROCD_OK) {
                answer_status(q, st, &err);
                return;
        }
        pd_cl_reply_error(&q->reply, PD_CL_SUCCESS);
        pd_cl_reply_u32(&q->reply, (uint32_t) gid);
        write_reply(q);
}

static void h_track_associated_group(creq *q)
{
        if (!q->s->o.gid_associate) {
                reply_error(q, PD_CL_NO_GROUP_ID_AVAILABLE);
                return;
        }
        procd_error err = { 0 };
        procd_status st = pd_cmd_track_associated_group(q->s->cm, &q->who, q->r.pid, (gid_t) q->r.gid, &err);
        answer_status(q, st, &err);
}

/* To the family's root only, as condor_procd. */
static void h_signal(creq *q)
{
        procd_error err = { 0 };
        pid_t root = 0;
        procd_status st = pd_cmd_family_root(q->s->cm, q->r.pid, &root, &err);
        if (st == PROCD_OK && q->r.signo == 0) /* a probe: condor_procd's kill(root, 0) */
                st = tr_pid_alive(root) ? PROCD_OK
                                        : procd_error_set(&err, PROCD_E_PROCESS_NOT_FOUND, "no process %d", (int) root);
        else if (st == PROCD_OK)
                st = pd_cmd_signal_process(q->s->cm, &q->who, root, q->r.signo, &err);
        answer_status(q, st, &err);
}

static void family_job(creq *q, pd_job_kind kind) { pd_cmd_family_async(q->s->cm, &q->who, kind, q->r.pid, async_done, q); }
static void h_suspend(creq *q) { family_job(q, PD_JOB_SUSPEND); }
static void h_continue(creq *q) { family_job(q, PD_JOB_CONTINUE); }
static void h_kill(creq *q) { family_job(q, PD_JOB_KILL); }

static void h_unregister(creq *q)
{
        if (q->r.pid == 0) { /* pid 0 names the root family only for commands 1-9 and 12 */
                reply_error(q, PD_CL_FAMILY_NOT_FOUND);
                return;
        }
        procd_error err = { 0 };
        procd_status st = pd_cmd_unregister_family(q->s->cm, &q->who, q->r.pid, &err);
        answer_status(q, st, &err);
}

static void h_snapshot(creq *q)
{
        procd_error err = { 0 };
        if (pd_cmd_snapshot(q->s->cm, &q->who, &err) != PROCD_OK)
                g_warning("classic: TAKE_SNAPSHOT: %s", err.msg);
        reply_error(q, PD_CL_SUCCESS); /* condor_procd always answers 0 */
}

static void h_quit(creq *q)
{
        procd_error err = { 0 };
        procd_status st = pd_cmd_quit(q->s->cm, &q->who, &err);
        answer_status(q, st, &err);
}

static void h_track_cgroup(creq *q)
{
        /* libcgroup-era names are relative to the controller mounts */
        g_autofree char *path = q->r.text[0] == '/' ? g_strdup(q->r.text) : g_strconcat("/", q->r.text, NULL);
        procd_error err = { 0 };
        procd_status st = pd_cmd_track_cgroup(q->s->cm, &q->who, q->r.pid, path, &err);
        answer_status(q, st, &err);
}

/* The dispatch: one handler per command number (the request's shape and size are
 * classic-decode.c's table); each handler answers exactly once, now or later. */
typedef void (*command_handler)(creq *q);

static const command_handler handlers[PD_CL_COMMAND_COUNT] = {
        [PD_CL_REGISTER_SUBFAMILY] = h_register,
        [PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT] = h_track_environment,
        [PD_CL_TRACK_FAMILY_VIA_LOGIN] = h_track_login,
        [PD_CL_TRACK_FAMILY_VIA_ALLOCATED_SUPPLEMENTARY_GROUP] = h_track_allocated_group,
        [PD_CL_TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP] = h_track_associated_group,
        [PD_CL_SIGNAL_PROCESS] = h_signal,
        [PD_CL_SUSPEND_FAMILY] = h_suspend,
        [PD_CL_CONTINUE_FAMILY] = h_continue,
        [PD_CL_KILL_FAMILY] = h_kill,
        [PD_CL_GET_USAGE] = h_get_usage,
        [PD_CL_UNREGISTER_FAMILY] = h_unregister,
        [PD_CL_TAKE_SNAPSHOT] = h_snapshot,
        [PD_CL_DUMP] = h_dump,
        [PD_CL_QUIT] = h_quit,
        [PD_CL_TRACK_FAMILY_VIA_CGROUP] = h_track_cgroup,
};

static void run(creq *q)
{
        const pd_cl_request *r = &q->r;
        /* g_debug formats its line before the writer drops it: only when it is kept */
        if (q->s->debug)
                g_debug("classic: %s %d from pid %d", pd_cl_command_name(r->command), (int) r->pid,
                        (int) r->client_pid);
        if (r->reject != PD_CL_SUCCESS) {
                g_message("classic: %s from pid %d: %s: error %d", pd_cl_command_name(r->command),
                          (int) r->client_pid, r->why, (int) r->reject);
                reply_error(q, r->reject);
                return;
        }
        if (r->command < 0 || r->command >= PD_CL_COMMAND_COUNT || !handlers[r->command]) {
                reply_error(q, PD_CL_FAMILY_NOT_FOUND);
                return;
        }
        handlers[r->command](q);
}

/* ---- accepting a request ---- */

static gboolean open_retry(gpointer data);

/* The caller is the reply FIFO's owner: root and the principal may do what root may. */
static void admit(creq *q, uid_t owner)
{
        pd_classic_server *s = q->s;
        q->admitted = true;
        q->owner = owner;
        q->who.uid = owner == 0 || owner == s->o.principal ? 0 : owner;
        q->who.pid = q->r.client_pid;
        q->who.confined = true; /* condor_procd's authority, whoever asks (command.h) */
        q->who.via = "classic";
        q->who.fifo_uid = owner;
        /* the principal counts as root here too: HTCondor's daemons are its clients */
        q->slot = pd_admission_take(s->adm, true, q->who.uid, q); /* NULL: answered with an error */
}

/* The reply FIFO is opened without a look first (condor_procd's order: open, then the
 * command): O_NOFOLLOW refuses a symlink, O_NONBLOCK an open that would wait, O_NOCTTY a
 * terminal, and the stat below anything but a FIFO (a regular file opened for writing
 * without O_TRUNC is left as it was; only root can make device nodes).  A lstat before it
 * cost one path walk per request; that stat asks for the type and owner alone, since one
 * that returns the times makes the reply's write dirty the FIFO's inode (issue 20,
 * tr_stat_untimed).  The FIFO is opened by its name under the address folder's kept fd:
 * its full path walked every component on every request (issue 20, measured ~0.3 us a
 * request); housekeeping keeps the fd on the folder the path names (condor_procd's
 * meaning: the path resolved each time). */
static void try_open(creq *q)
{
        pd_classic_server *s = q->s;
        int fd = openat(s->dirfd, reply_name(s, q->path), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        /* the wait's deadline from the first open that found no reader (no clock read on
         * the usual path: in a guest without a TSC clocksource each is a system call) */
        bool no_reader = fd < 0 && errno == ENXIO;
        gint64 now = no_reader ? g_get_monotonic_time() : 0;
        if (no_reader && !q->deadline_usec)
                q->deadline_usec = now + PD_ADMISSION_AUTH_TIMEOUT_SEC * G_USEC_PER_SEC;
        if (no_reader && now < q->deadline_usec) {
                /* the client has not opened its end (yet): never block the loop on it.
                 * Waiting holds an admission slot of the FIFO owner's, as serving does. */
                tr_stat st;
                if (!q->admitted &&
                    tr_stat_untimed(s->dirfd, reply_name(s, q->path), STATX_TYPE | STATX_UID, &st) == 0 &&
                    S_ISFIFO(st.mode))
                        admit(q, st.uid);
                if (!q->slot) {
                        g_message("classic: %s from pid %d: reply FIFO %s not opened and no admission slot: dropped",
                                  pd_cl_command_name(q->r.command), (int) q->r.client_pid, q->path);
                        creq_done(q);
                        return;
                }
                q->timer = g_timeout_add(OPEN_RETRY_MS, open_retry, q);
                return;
        }
        if (fd < 0) {
                if (no_reader)
                        errno = ENXIO;
                if (errno == ENOENT)
                        g_message("classic: %s from pid %d: no reply FIFO %s: dropped",
                                  pd_cl_command_name(q->r.command), (int) q->r.client_pid, q->path);
                else
                        g_message("classic: %s from pid %d: reply FIFO %s: %s: dropped (client gone?)",
                                  pd_cl_command_name(q->r.command), (int) q->r.client_pid, q->path,
                                  errno == ENXIO ? "never opened" : strerror(errno));
                creq_done(q);
                return;
        }
        tr_stat st;
        int sr = tr_fstat_untimed(fd, STATX_TYPE | STATX_UID, &st, &s->statx_null_path);
        if (sr < 0 || !S_ISFIFO(st.mode)) {
                if (sr < 0)
                        g_warning("classic: %s: %s: request of pid %d dropped", q->path, strerror(-sr),
                                  (int) q->r.client_pid);
                else
                        g_warning("classic: %s is not a FIFO: request of pid %d dropped", q->path,
                                  (int) q->r.client_pid);
                close(fd);
                creq_done(q);
                return;
        }
        if (q->admitted && st.uid != q->owner) {
                g_warning("classic: %s was replaced: request of pid %d dropped", q->path, (int) q->r.client_pid);
                close(fd);
                creq_done(q);
                return;
        }
        q->fd = fd;
        if (!q->admitted)
                admit(q, st.uid);
        if (!q->slot) {
                reply_error(q, pd_cl_error_from_status(q->r.command, PROCD_E_INTERNAL));
                return;
        }
        run(q);
}

static gboolean open_retry(gpointer data)
{
        creq *q = data;
        q->timer = 0;
        try_open(q);
        return G_SOURCE_REMOVE;
}

static void start_request(pd_classic_server *s, const pd_cl_request *r)
{
        /* a request's 4 KiB text buffer is neither zeroed nor copied whole: ~9 KB of memory
         * traffic per GET_USAGE that carries 4 bytes of arguments (issue 20) */
        creq *q = s->spare ? TR_TAKE_PTR(s->spare) : NULL;
        char *path = q ? q->path : g_malloc(reply_path_size(s));
        pd_cl_reply reply = { 0 };
        if (q)
                reply = q->reply; /* emptied at creq_free */
        else
                pd_cl_reply_init(&reply);
        if (!q)
                q = g_malloc(sizeof *q);
        memset(q, 0, offsetof(creq, r));
        memcpy(&q->r, r, PD_CL_REQUEST_BYTES(r));
        q->s = s;
        q->fd = -1;
        q->reply = reply;
        q->path = put_reply_path(s, path, r->client_pid, r->serial);
        g_ptr_array_add(s->reqs, q);
        try_open(q);
}

/* A request whose rest never came: answered with the command's error when its reply FIFO
 * is known, then dropped. */
static void drop_partial(pd_classic_server *s, const char *why)
{
        pd_cl_request *r = g_new(pd_cl_request, 1);
        pd_cl_decode_result res = pd_cl_decode(s->in->data, s->in->len, r);
        g_message("classic: dropping %u bytes of a truncated request (%s, pid %d, %s)", s->in->len,
                  pd_cl_command_name(r->command), (int) r->client_pid, why);
        count_malformed(s);
        if (s->in->len >= 8 && reply_fifo_exists(r->client_pid, r->serial, s)) {
                if (res != PD_CL_INCOMPLETE || s->in->len < PD_CL_HEADER_BYTES)
                        r->command = -1;
                r->reject = pd_cl_error_from_status(r->command, PROCD_E_BAD_ARGUMENT);
                snprintf(r->why, sizeof r->why, "truncated request");
                start_request(s, r);
        }
        g_free(r);
        g_byte_array_set_size(s->in, 0);
}

static gboolean partial_timeout(gpointer data)
{
        pd_classic_server *s = data;
        s->partial_timer = 0;
        if (s->in->len)
                drop_partial(s, "its rest did not come");
        return G_SOURCE_REMOVE;
}

/* Split the bytes at data into requests by each command's size: how many were taken (the
 * rest is the start of an incomplete one). */
static size_t take_requests(pd_classic_server *s, const uint8_t *data, size_t len)
{
        pd_cl_request *r = &s->scratch;
        size_t off = 0;
        while (off < len) {
                const uint8_t *p = data + off;
                size_t n = len - off;
                pd_cl_decode_result res = pd_cl_decode(p, n, r);
                if (res == PD_CL_INCOMPLETE)
                        break; /* wait for the rest, bounded */
                if (res == PD_CL_DECODED) {
                        start_request(s, r); /* a missing reply FIFO: dropped there */
                        off += r->size;
                        continue;
                }
                bool live = reply_fifo_exists(r->client_pid, r->serial, s);
                /* an unknown command: its size is unknown, so the rest is skipped up to the
                 * next header of a live client */
                g_message("classic: unknown command %d from pid %d", (int) r->command, (int) r->client_pid);
                if (live) {
                        r->reject = PD_CL_FAMILY_NOT_FOUND;
                        snprintf(r->why, sizeof r->why, "unknown command %d", (int) r->command);
                        start_request(s, r);
                }
                count_malformed(s); /* an unknown command */
                size_t skip = pd_cl_resync(p, n, reply_fifo_exists, s);
                g_message("classic: skipping %zu bytes after an unknown command", skip);
                off += skip;
        }
        return off;
}

/* n bytes just read into s->rbuf: the requests they complete started, the start of an
 * incomplete one kept in s->in.  With nothing kept before, the requests are taken from
 * rbuf itself (a copy into s->in and out of it were ~150 instructions of every request,
 * issue 20). */
static void process_input(pd_classic_server *s, size_t n)
{
        if (!s->in->len) {
                size_t off = take_requests(s, s->rbuf, n);
                if (off < n)
                        g_byte_array_append(s->in, s->rbuf + off, (guint) (n - off));
        } else {
                g_byte_array_append(s->in, s->rbuf, (guint) n);
                size_t off = take_requests(s, s->in->data, s->in->len);
                g_byte_array_remove_range(s->in, 0, (guint) off);
        }
        if (s->in->len && !s->partial_timer)
                s->partial_timer = g_timeout_add(PD_CL_PARTIAL_TIMEOUT_MS, partial_timeout, s);
        else if (!s->in->len && s->partial_timer) {
                g_source_remove(s->partial_timer);
                s->partial_timer = 0;
        }
}

static gboolean on_input(gint fd, GIOCondition cond, gpointer data)
{
        pd_classic_server *s = data;
        (void) cond;
        for (;;) {
                ssize_t n = read(fd, s->rbuf, sizeof s->rbuf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        s->read_full = false; /* EAGAIN: drained (never EOF: procd holds a writer) */
                        break;
                }
                /* the last read drained the pipe: this one begins with a new write, and a
                 * request is one write, so the pending one will never get its rest */
                if (s->in->len && !s->read_full)
                        drop_partial(s, "the next write began");
                s->read_full = (size_t) n == sizeof s->rbuf;
                process_input(s, (size_t) n);
                /* less than asked: the pipe was empty, no read for its EAGAIN (a request
                 * written meanwhile wakes the loop again: the fd set watches this FIFO
                 * edge-triggered, and this loop only ends on an empty pipe) */
                if ((size_t) n < sizeof s->rbuf)
                        break;
        }
        return G_SOURCE_CONTINUE;
}

/* The kept address folder fd on the folder its path names now: condor_procd resolves
 * each reply FIFO's path, so a folder replaced under the same name (procd's FIFOs moved
 * into it, else their touch fails first) is where clients make them.  A path that no
 * longer resolves keeps the old fd: the FIFOs' touch reports that procd cannot be
 * reached; a reopen that fails (raced) is tried again next time. */
static void recheck_address_folder(pd_classic_server *s)
{
        struct stat now, kept;
        if (stat(s->dir, &now) < 0 || fstat(s->dirfd, &kept) < 0)
                return;
        if (now.st_dev == kept.st_dev && now.st_ino == kept.st_ino)
                return;
        int fd = open(s->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        close(s->dirfd);
        s->dirfd = fd;
        g_message("classic: the address folder %s was replaced: reopened", s->dir);
}

static gboolean housekeeping(gpointer data)
{
        pd_classic_server *s = data;
        tr_error err = { 0 };
        if (pd_cl_fifo_touch(&s->cmd, &err) < 0 || pd_cl_fifo_touch(&s->wd, &err) < 0) {
                g_warning("classic: %s: procd cannot be reached any more", err.msg);
                s->hk_timer = NULL; /* G_SOURCE_REMOVE ends it */
                if (s->o.lost)
                        s->o.lost(s->o.lost_data);
                return G_SOURCE_REMOVE;
        }
        recheck_address_folder(s);
        return G_SOURCE_CONTINUE;
}

/* Whoever may write the address folder may make reply FIFOs of other clients' names
 * (ADDR.<pid>.<serial>): said loudly, once, at start. */
static void check_address_folder(const pd_classic_options *o)
{
        g_autofree char *dir = g_path_get_dirname(o->address);
        struct stat st;
        if (stat(dir, &st) < 0) {
                g_warning("classic: address folder %s: %s", dir, strerror(errno));
                return;
        }
        bool trusted_owner = st.st_uid == 0 || st.st_uid == geteuid() || st.st_uid == o->principal;
        if (trusted_owner && !(st.st_mode & (S_IWGRP | S_IWOTH)))
                return;
        g_warning("classic: WARNING: the address folder %s (owner uid %u, mode %04o) may be written by users other "
                  "than root%s: they can plant reply FIFOs named for other clients' requests. Use a folder only root "
                  "and the condor uid may write (HTCondor's $(LOCK) or $(RUN))",
                  dir, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777),
                  o->principal != (uid_t) -1 ? " and the -C uid" : "");
}

int pd_classic_server_new(const pd_classic_options *o, pd_commands *cm, pd_classic_server **out, tr_error *err)
{
        if (!o->address || !*o->address)
                return tr_error_set(err, EINVAL, "no classic address (-A)");
        pd_classic_server *s = g_new0(pd_classic_server, 1);
        s->statx_null_path = true; /* until a kernel refuses it (tr_fstat_untimed) */
        s->o = *o;
        s->address = g_strdup(o->address);
        s->o.address = s->address;
        s->dir = g_path_get_dirname(o->address);
        const char *slash = strrchr(o->address, '/');
        s->base = slash ? (size_t) (slash + 1 - o->address) : 0;
        s->cm = cm;
        s->debug = !g_log_writer_default_would_drop(G_LOG_LEVEL_DEBUG, G_LOG_DOMAIN);
        s->cmd = (pd_cl_fifo) PD_CL_FIFO_INIT;
        s->wd = (pd_cl_fifo) PD_CL_FIFO_INIT;
        s->in = g_byte_array_new();
        s->reqs = g_ptr_array_new();
        s->dirfd = open(s->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (s->dirfd < 0) {
                int k = tr_error_setx(err, errno, "classic: address folder %s", s->dir);
                pd_classic_server_free(s);
                return k;
        }
        check_address_folder(o);
        s->adm = pd_admission_new("request", PD_CL_MAX_REQUESTS, PD_ADMISSION_ROOT_RESERVED,
                                  PD_ADMISSION_DEFAULT_PER_UID, NULL);
        g_autofree char *wd = g_strconcat(o->address, PD_CL_WATCHDOG_SUFFIX, NULL);
        int k = pd_cl_fifo_create(wd, o->chown_to, &s->wd, err);
        if (k >= 0)
                k = pd_cl_fifo_create(o->address, o->chown_to, &s->cmd, err);
        if (k < 0) {
                pd_classic_server_free(s);
                return k;
        }
        /* the command FIFO in the set too: with nothing else polled, a turn of the main loop
         * waits in one epoll_wait and hands its events on (pd_fd_mux_run); edge-triggered,
         * as on_input reads until the pipe is empty */
        s->in_watch = pd_fd_mux_add_drained(pd_registry_fd_mux(cm->reg), s->cmd.rfd, on_input, s);
        if (!s->in_watch) {
                pd_classic_server_free(s);
                return tr_error_set(err, ENOMEM, "classic: the command FIFO's watch");
        }
        /* a timer that fires once a minute need not be walked on every request: a timerfd
         * in procd's fd set when there is one (fd-mux.h) */
        unsigned hk_sec = o->housekeeping_sec ? o->housekeeping_sec : 60;
        s->hk_timer = pd_fd_mux_add_timer(pd_registry_fd_mux(cm->reg), hk_sec * 1000u, housekeeping, s);
        *out = s;
        return 0;
}

/* At shutdown: what a client is still owed, written while its pipe takes it (bounded). */
static void flush_reply(creq *q)
{
        if (q->fd < 0 || !q->replying)
                return;
        for (int waits = 0; waits < 10 && write_some(q) == 0; waits++) {
                struct pollfd pfd = { .fd = q->fd, .events = POLLOUT };
                poll(&pfd, 1, 100);
        }
}

void pd_classic_server_free(pd_classic_server *s)
{
        if (!s)
                return;
        pd_fd_mux_remove(s->in_watch);
        pd_fd_mux_remove(s->hk_timer);
        if (s->partial_timer)
                g_source_remove(s->partial_timer);
        for (guint i = 0; i < s->reqs->len; i++) {
                creq *q = s->reqs->pdata[i];
                flush_reply(q);
                creq_free(q);
        }
        g_ptr_array_free(s->reqs, TRUE);
        if (s->spare) {
                pd_cl_reply_clear(&s->spare->reply);
                g_free(s->spare->path);
                g_free(s->spare);
        }
        pd_cl_fifo_close(&s->cmd, true);
        pd_cl_fifo_close(&s->wd, true);
        g_byte_array_free(s->in, TRUE);
        pd_admission_free(s->adm);
        if (s->dirfd >= 0)
                close(s->dirfd);
        g_free(s->dir);
        g_free(s->address);
        g_free(s);
}
