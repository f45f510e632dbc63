/* state.h - procd's state file: the registered families, so that a restarted (or crashed
 * and restarted) procd finds them again.
 *
 * Format (version 2), text, one record per line, fields separated by a tab:
 *
 *   procd-state<TAB>2
 *   family<TAB>root=PID<TAB>start=TICKS<TAB>parent=PID<TAB>...key=value...
 *   ...
 *   end<TAB>N
 *
 * Families come parents first (pre-order).  Values are C-escaped (g_strescape: no tab,
 * newline or non-ASCII byte appears raw).  Keys of a family line: root, start (required),
 * parent (0: the root family), uid, watcher, watcher_start, interval, cgroup,
 * cgroup_origin (0: handed by the client, 1: created by procd for TrackFamilyViaCgroup,
 * 2: the family's own cgroup; procd removes 1 and 2; 3: the cgroups another manager placed
 * the root in, as /proc/PID/cgroup lines, read only), no_cgroup (why the family got no
 * cgroup of its own), env, login, login_uid, gid,
 * gid_allocated, kill_on_watcher_exit, frozen, killing, suspending, members (pid:start,pid:start... of a /proc
 * family's last snapshot); moved_in (1: procd moved processes into the family's cgroup
 * after they had allocated elsewhere); since version 2: killed (1: a KillFamily was asked; Dump says
 * "killed"), kept (pid:start,... the root's children at registration, which stay in the
 * parent family).  Unknown keys are ignored (added within a version); a missing
 * "end" line, or one whose count differs, means a truncated file.  A file that does not
 * start with the magic is foreign; a higher version is refused (never guessed at).
 *
 * Version 1 (no killed, no kept) is still read: its families restore as they did (killed and
 * kept, were a version-1 file to carry them, are ignored there as unknown keys).
 *
 * Writing is atomic: PATH.tmp written, fsync'd, renamed over PATH, directory fsync'd.
 * A file that cannot be trusted is set aside (renamed PATH.bad-<why>-<time>), never deleted.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "trackers/error.h"

#define PD_STATE_MAGIC "procd-state"
#define PD_STATE_VERSION 2u     /* written */
#define PD_STATE_VERSION_MIN 1u /* the oldest still read */

typedef struct pd_state_member {
        pid_t pid;
        uint64_t start_ticks;
} pd_state_member;

typedef struct pd_state_family {
        pid_t root_pid;
        uint64_t root_start_ticks;
        pid_t parent_root_pid;      /* 0: the root family */
        uid_t root_uid;
        pid_t watcher_pid;          /* 0: none */
        uint64_t watcher_start_ticks;
        uint32_t interval_sec;
        char *cgroup;               /* NULL: not cgroup-tracked */
        unsigned cgroup_origin;     /* pd_cgroup_origin (registry.h) */
        char *no_cgroup_reason;
        char *env_marker;
        char *login;                /* NULL: not tracked by login */
        uid_t login_uid;
        bool by_gid;
        gid_t gid;
        bool gid_allocated;
        bool kill_on_watcher_exit;
        bool frozen;
        bool killing;               /* a KillFamily was in progress: finished after a restart */
        bool suspending;            /* a SuspendFamily was in progress: re-applied */
        bool killed;                /* a KillFamily was asked (version 2) */
        bool moved_in;              /* procd moved processes into its cgroup after they had
                                       allocated elsewhere (rss and image from /proc) */
        bool moved_exe_known;       /* moved_exe_dev/_ino: the file the root ran when moved */
        uint64_t moved_exe_dev, moved_exe_ino;
        pd_state_member *members;
        size_t n_members;
        pd_state_member *kept;      /* the root's children at registration (version 2) */
        size_t n_kept;
} pd_state_family;

typedef struct pd_state {
        pd_state_family *fams;
        size_t n;
        unsigned version;           /* of the file parsed */
} pd_state;

void pd_state_clear(pd_state *s);
void pd_state_family_clear(pd_state_family *f);

/* Append the text of s to out: the header, each family's line, the end line (the three
 * pieces below, for a writer that formats from its own records without building a
 * pd_state).  Numbers by a decimal appender, strings as they are unless g_strescape would
 * change them (then escaped by it). */
void pd_state_format(const pd_state *s, GString *out);
void pd_state_format_header(GString *out);
void pd_state_format_family(const pd_state_family *f, GString *out);
void pd_state_format_end(size_t n_families, GString *out);

/* Parse a whole file's text.  -EPROTO: foreign (no magic); -EPROTONOSUPPORT: a later
 * version; -EBADMSG: corrupt or truncated.  err says where. */
int pd_state_parse(const char *buf, size_t len, pd_state *out, tr_error *err);

/* Atomic write of s to path (see above). */
int pd_state_write(const char *path, const pd_state *s, tr_error *err);
/* The same for a text already formatted. */
int pd_state_write_text(const char *path, const char *text, size_t len, tr_error *err);

/* Read and parse path.  -ENOENT: no file (a first start).  Other errors as pd_state_parse,
 * or the read's -errno. */
int pd_state_read(const char *path, pd_state *out, tr_error *err);

/* Rename path to path.bad-<why>-<unix time> (why: "foreign", "version", "corrupt"); the
 * new name goes to newpath. */
int pd_state_set_aside(const char *path, const char *why, char *newpath, size_t size, tr_error *err);
/* The "why" for a pd_state_read error. */
const char *pd_state_error_kind(int r);
