/* family-cgroup.c - a cgroup of its own for every registered family (see the header). */
#include "family-cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trackers/procscan.h"
#include "trackers/util.h"

#define PENDING_SWEEP_SEC 2
#define PENDING_PER_TICK 32 /* rmdir attempts per sweep tick: bounded work with many pending */

typedef struct pending_cg {
        char *path;
        bool has_leaf;
        uint32_t mask; /* hierarchies it was made in */
} pending_cg;

struct pd_famcg {
        const tr_hierarchies *hs;
        char *base;             /* NULL: off or unavailable */
        char off_reason[256];
        char note[PATH_MAX + 160]; /* why this base (a root cgroup's own), "" otherwise */
        uint32_t mask;          /* hierarchies family cgroups are made in (pd_famcg_mask) */
        tr_cgroup *base_cg;     /* the base, open in those hierarchies */
        bool base_enabled;      /* v2 controllers enabled in the base's subtree_control once */
        GPtrArray *pending;     /* pending_cg *, owned */
        guint cursor;           /* where the next sweep tick starts in pending */
        guint timer;
};

int pd_famcg_primary(const tr_hierarchies *hs)
{
        if (hs->v2 >= 0)
                return hs->v2;
        for (int i = 0; i < hs->n; i++)
                if (strcmp(hs->h[i].key, "name=systemd") == 0)
                        return i;
        return hs->n > 0 ? 0 : -1;
}

int pd_famcg_pid_cgroup(const tr_hierarchies *hs, pid_t pid, char **out)
{
        int idx = pd_famcg_primary(hs);
        if (idx < 0)
                return -ENOENT;
        tr_pid_cgroups pc = { { 0 } };
        int k = tr_pid_cgroups_read(hs, pid, &pc, NULL);
        if (k < 0)
                return k == -ENOENT ? -ESRCH : k;
        k = -ENOENT;
        if (pc.paths[idx]) {
                *out = strdup(pc.paths[idx]);
                k = *out ? 0 : -ENOMEM;
        }
        tr_pid_cgroups_clear(&pc);
        return k;
}

static void pending_free(gpointer p)
{
        pending_cg *c = p;
        free(c->path);
        free(c);
}

/* The hierarchies a family cgroup is made in: those procd reads or acts through, nothing
 * else (see the header).  The v2 tree when mounted (membership, cgroup.kill, the freezer,
 * cpu.stat, and each controller it offers at the base); a v1 hierarchy only for what the
 * v2 tree cannot give there: memory, blkio (io bytes), pids, cpuacct (CPU) and the freezer.
 * Without v2, also the hierarchy families are matched by (name=systemd).  Never cpu,
 * cpuset, devices, net_cls, net_prio, perf_event, hugetlb, rdma, misc: procd reads nothing
 * there, so the root keeps the cgroup its launcher gave it in those (limits, pinning,
 * device rules stay in force).  The base is made in v2 first so that what it offers is known. */
static int choose_hierarchies(pd_famcg *fc, const char *base, tr_error *err)
{
        const tr_hierarchies *hs = fc->hs;
        uint32_t mask = 1u << pd_famcg_primary(hs);
        bool v2_cpu = false, v2_freeze = false, v2_ctrl[TR_CTRL_COUNT] = { false };
        if (hs->v2 >= 0) {
                _cleanup_cgroup_ tr_cgroup *cg = NULL;
                int k = tr_cgroup_create_in(hs, base, 1u << hs->v2, &cg, err);
                if (k < 0)
                        return k;
                char buf[512];
                if (tr_cgroup_read(cg, hs->v2, "cgroup.controllers", buf, sizeof buf, NULL) >= 0)
                        for (char *save = NULL, *t = strtok_r(buf, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
                                int c = tr_controller_from_name(t);
                                if (c >= 0)
                                        v2_ctrl[c] = true;
                        }
                v2_cpu = tr_cgroup_has_file(cg, hs->v2, "cpu.stat");
                v2_freeze = tr_cgroup_has_file(cg, hs->v2, "cgroup.freeze");
        }
        const struct {
                tr_controller c;
                bool in_v2;
        } v1[] = {
                { TR_CTRL_MEMORY, v2_ctrl[TR_CTRL_MEMORY] },
                { TR_CTRL_BLKIO, v2_ctrl[TR_CTRL_IO] },
                { TR_CTRL_PIDS, v2_ctrl[TR_CTRL_PIDS] },
                { TR_CTRL_CPUACCT, v2_cpu },
                { TR_CTRL_FREEZER, v2_freeze },
        };
        for (size_t k = 0; k < TR_ARRAY_SIZE(v1); k++)
                if (!v1[k].in_v2 && hs->v1_of[v1[k].c] >= 0)
                        mask |= 1u << hs->v1_of[v1[k].c];
        fc->mask = mask;
        return 0;
}

static bool under_any(const char *path, const char *const *own)
{
        for (; own && *own; own++)
                if (tr_cgroup_path_under(path, *own))
                        return true;
        return false;
}

/* "memory:/slurm/job_10" (the v2 tree: "cgroup2:/a/b") appended to buf at *off. */
static void append_label(char *buf, size_t size, size_t *off, const char *key, const char *path)
{
        int n = snprintf(buf + *off, size > *off ? size - *off : 0, "%s%s:%s", *off ? " " : "",
                         key[0] ? key : "cgroup2", path);
        if (n > 0)
                *off += (size_t) n;
        if (*off >= size)
                *off = size ? size - 1 : 0;
}

/* A base of procd's own in the root cgroup: only in the hierarchies where procd sits in the
 * root cgroup.  Where its launcher placed it in a cgroup of its own (the v1 memory limit of
 * a session, a batch system's memory cgroup) the families stay in it: a base at the top
 * would take them out of that limit. */
static int keep_root_hierarchies(pd_famcg *fc, const char *base, tr_error *err)
{
        const tr_hierarchies *hs = fc->hs;
        tr_pid_cgroups self;
        int k = tr_pid_cgroups_read(hs, 0, &self, err);
        if (k < 0)
                return k;
        char left[256] = "";
        size_t off = 0;
        for (int i = 0; i < hs->n; i++) {
                if (!(fc->mask & (1u << i)) || (self.paths[i] && tr_cgroup_is_root(&hs->h[i], self.paths[i])))
                        continue;
                fc->mask &= ~(1u << i);
                append_label(left, sizeof left, &off, hs->h[i].key, self.paths[i] ? self.paths[i] : "?");
        }
        tr_pid_cgroups_clear(&self);
        snprintf(fc->note, sizeof fc->note,
                 "procd runs in the root cgroup with no delegated cgroup: family cgroups under a base of its own, %s%s%s "
                 "(--no-family-cgroups turns them off)",
                 base, off ? "; not in hierarchies where procd was placed: " : "", left);
        return 0;
}

const char *pd_famcg_root_base(const char *address, char *buf, size_t size)
{
        size_t off = (size_t) snprintf(buf, size, "%s/", PD_FAMCG_ROOT_PARENT);
        const char *a = address ? address + strspn(address, "/") : "";
        if (!*a)
                a = "procd";
        for (; *a && off + 1 < size; a++) {
                char c = *a;
                buf[off++] = c == '/' ? '-' : (g_ascii_isalnum(c) || c == '_' || c == '.' || c == '-') ? c : '_';
        }
        if (*a || off >= size)
                return NULL;
        buf[off] = '\0';
        if (buf[off - 1] == '.')
                buf[off - 1] = '_'; /* never "." nor ".." */
        return buf;
}

const char *pd_famcg_note(const pd_famcg *fc) { return fc && fc->base && fc->note[0] ? fc->note : NULL; }

uint32_t pd_famcg_mask(const pd_famcg *fc) { return fc && fc->base ? fc->mask : 0; }

int pd_famcg_new(const tr_hierarchies *hs, const pd_famcg_options *o, pd_famcg **out)
{
        pd_famcg *fc = calloc(1, sizeof *fc);
        if (!fc)
                return -ENOMEM;
        fc->hs = hs;
        fc->pending = g_ptr_array_new_with_free_func(pending_free);
        *out = fc;
        if (o->disabled) {
                snprintf(fc->off_reason, sizeof fc->off_reason, "family cgroups are off (--no-family-cgroups)");
                return 0;
        }
        int idx = pd_famcg_primary(hs);
        if (hs->mode == TR_MODE_NONE || idx < 0) {
                snprintf(fc->off_reason, sizeof fc->off_reason, "no cgroup hierarchy is mounted");
                return 0;
        }
        _cleanup_free_ char *base = NULL;
        bool root_own = false;
        if (o->base) {
                base = strdup(o->base);
        } else {
                _cleanup_free_ char *own = NULL;
                int k = pd_famcg_pid_cgroup(hs, getpid(), &own);
                if (k < 0) {
                        snprintf(fc->off_reason, sizeof fc->off_reason, "cannot read procd's own cgroup: %s",
                                 strerror(-k));
                        return 0;
                }
                if (tr_cgroup_is_root(&hs->h[idx], own) && !o->root_base) {
                        snprintf(fc->off_reason, sizeof fc->off_reason,
                                 "procd runs in the root cgroup: it has no delegated cgroup "
                                 "(give --family-cgroup-base)");
                        return 0;
                }
                if (tr_cgroup_is_root(&hs->h[idx], own)) {
                        base = strdup(o->root_base);
                        root_own = true;
                } else {
                        size_t n = strlen(own) + sizeof PD_FAMCG_DEFAULT_SUBTREE + 1;
                        base = malloc(n);
                        if (base)
                                snprintf(base, n, "%s/%s", own, PD_FAMCG_DEFAULT_SUBTREE);
                }
        }
        if (!base)
                return -ENOMEM;
        tr_error err = { 0 };
        int k = choose_hierarchies(fc, base, &err);
        if (k >= 0 && root_own)
                k = keep_root_hierarchies(fc, base, &err);
        if (k < 0 || tr_cgroup_create_in(hs, base, fc->mask, &fc->base_cg, &err) < 0) {
                snprintf(fc->off_reason, sizeof fc->off_reason, "cannot make the family cgroup base %s: %s", base,
                         err.msg);
                return 0;
        }
        fc->base = TR_TAKE_PTR(base);
        return 0;
}

void pd_famcg_free(pd_famcg *fc)
{
        if (!fc)
                return;
        if (fc->timer)
                g_source_remove(fc->timer);
        g_ptr_array_free(fc->pending, TRUE);
        tr_cgroup_free(fc->base_cg);
        free(fc->base);
        free(fc);
}

const char *pd_famcg_base(const pd_famcg *fc) { return fc ? fc->base : NULL; }

const char *pd_famcg_off_reason(const pd_famcg *fc)
{
        if (!fc)
                return "family cgroups are off";
        return fc->base ? NULL : fc->off_reason;
}

size_t pd_famcg_pending(const pd_famcg *fc) { return fc ? fc->pending->len : 0; }

/* rmdir path (its leaf first) in the hierarchies of mask.  0 when gone everywhere, -EBUSY
 * when something is still there (processes, a subfamily's cgroup). */
static int remove_now(const tr_hierarchies *hs, const char *path, bool has_leaf, uint32_t mask)
{
        bool busy = false;
        for (int pass = has_leaf ? 0 : 1; pass < 2; pass++) {
                char cg[PATH_MAX];
                int n = snprintf(cg, sizeof cg, "%s%s", path, pass == 0 ? "/" PD_FAMCG_LEAF : "");
                if (n < 0 || (size_t) n >= sizeof cg)
                        return -ENAMETOOLONG;
                for (int i = 0; i < hs->n; i++) {
                        char fs[PATH_MAX];
                        if (!(mask & (1u << i)) || tr_hierarchy_fs_path(&hs->h[i], cg, fs, sizeof fs, NULL) < 0)
                                continue;
                        if (rmdir(fs) == 0 || errno == ENOENT)
                                continue;
                        if (errno != EBUSY && errno != ENOTEMPTY)
                                g_message("removing cgroup %s: %s", fs, strerror(errno));
                        busy = true;
                }
        }
        return busy ? -EBUSY : 0;
}

/* One tick of the 2 s timer: at most PENDING_PER_TICK rmdir attempts, going round the
 * pending list from where the last tick stopped (a list of 1,000 cgroups whose processes
 * live on costs 32 attempts per tick, not 1,000). */
static void sweep(pd_famcg *fc)
{
        guint n = fc->pending->len < PENDING_PER_TICK ? fc->pending->len : PENDING_PER_TICK;
        for (guint done = 0; done < n && fc->pending->len; done++) {
                if (fc->cursor >= fc->pending->len)
                        fc->cursor = 0;
                pending_cg *c = fc->pending->pdata[fc->cursor];
                if (remove_now(fc->hs, c->path, c->has_leaf, c->mask) == 0) {
                        g_info("removed family cgroup %s (empty now)", c->path);
                        g_ptr_array_remove_index_fast(fc->pending, fc->cursor); /* the last one moves here */
                } else {
                        fc->cursor++;
                }
        }
}

static gboolean sweep_cb(gpointer data)
{
        pd_famcg *fc = data;
        sweep(fc);
        if (fc->pending->len)
                return G_SOURCE_CONTINUE;
        fc->timer = 0;
        return G_SOURCE_REMOVE;
}

void pd_famcg_release(pd_famcg *fc, const char *path, bool has_leaf)
{
        if (!fc || !path)
                return;
        /* a family cgroup was made in fc's hierarchies; one TrackFamilyViaCgroup made
         * (tr_cgroup_create) in every hierarchy */
        uint32_t mask = has_leaf ? fc->mask : TR_HIER_ALL;
        if (remove_now(fc->hs, path, has_leaf, mask) == 0)
                return;
        pending_cg *c = calloc(1, sizeof *c);
        if (c)
                c->path = strdup(path);
        if (!c || !c->path) {
                free(c);
                g_message("cgroup %s left behind (out of memory)", path);
                return;
        }
        c->has_leaf = has_leaf;
        c->mask = mask;
        g_ptr_array_add(fc->pending, c);
        g_info("family cgroup %s is not empty: removed once it is", path);
        /* retried only by the timer (bounded work per tick), never by later releases */
        if (!fc->timer)
                fc->timer = g_timeout_add_seconds(PENDING_SWEEP_SEC, sweep_cb, fc);
}

int pd_famcg_attach_in(tr_cgroup *fam, pid_t pid, uint32_t hier_mask, tr_error *err)
{
        if (pid <= 1)
                return tr_error_set(err, EINVAL, "bad pid %d", (int) pid);
        const tr_hierarchies *hs = tr_cgroup_hierarchies(fam);
        char v[32];
        snprintf(v, sizeof v, "%d", (int) pid);
        for (int i = 0; i < hs->n; i++) {
                int dfd = (hier_mask & (1u << i)) ? tr_cgroup_dirfd(fam, i) : -1;
                if (dfd < 0)
                        continue;
                _cleanup_close_ int leaf = -1;
                if (hs->h[i].is_v2) {
                        leaf = openat(dfd, PD_FAMCG_LEAF, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (leaf < 0)
                                return tr_error_setx(err, errno, "open %s/%s", tr_cgroup_path(fam, i), PD_FAMCG_LEAF);
                }
                int k = tr_write_file_at(leaf >= 0 ? leaf : dfd, "cgroup.procs", v, err);
                if (k < 0)
                        return tr_error_prefix(err, "moving pid %d into %s:%s", (int) pid, hs->h[i].mount_point,
                                               tr_cgroup_path(fam, i));
        }
        return 0;
}

int pd_famcg_attach(tr_cgroup *fam, pid_t pid, tr_error *err) { return pd_famcg_attach_in(fam, pid, TR_HIER_ALL, err); }

/* ---- placement (issue 16) ------------------------------------------------------------ */

int pd_famcg_placed(const tr_hierarchies *hs, pid_t pid, pid_t ppid, const char *const *own, tr_cgroup *moved_to,
                    const char *procd_base, pid_t came_from, tr_pid_cgroups *placed, char *where, size_t size)
{
        memset(placed, 0, sizeof *placed);
        if (where && size)
                where[0] = '\0';
        if (ppid <= 0) {
                tr_proc p;
                if (tr_proc_stat_read(pid, &p) < 0)
                        return -ESRCH;
                ppid = p.ppid;
        }
        tr_pid_cgroups pc = { { 0 } }, ppc = { { 0 } }, fam = { { 0 } };
        if (tr_pid_cgroups_read(hs, pid, &pc, NULL) < 0)
                return -ESRCH;
        if (procd_base && came_from > 0 && tr_pid_cgroups_read(hs, came_from, &fam, NULL) < 0)
                memset(&fam, 0, sizeof fam); /* gone: no such excuse */
        int n = 0;
        size_t off = 0;
        /* a parent that cannot be read (gone, pid 0: a process of another namespace) gives
         * no evidence of a placement */
        if (ppid > 0 && tr_pid_cgroups_read(hs, ppid, &ppc, NULL) >= 0) {
                for (int i = 0; i < hs->n; i++) {
                        const char *to = moved_to ? tr_cgroup_path(moved_to, i) : NULL;
                        if (!pc.paths[i] || !ppc.paths[i] || strcmp(pc.paths[i], ppc.paths[i]) == 0 ||
                            under_any(pc.paths[i], own) || (to && tr_cgroup_path_under(ppc.paths[i], to)) ||
                            (procd_base && tr_cgroup_path_under(ppc.paths[i], procd_base) && fam.paths[i] &&
                             strcmp(pc.paths[i], fam.paths[i]) == 0))
                                continue;
                        placed->paths[i] = TR_TAKE_PTR(pc.paths[i]);
                        n++;
                        if (where)
                                append_label(where, size, &off, hs->h[i].key, placed->paths[i]);
                }
        }
        tr_pid_cgroups_clear(&pc);
        tr_pid_cgroups_clear(&ppc);
        tr_pid_cgroups_clear(&fam);
        return n;
}

/* Why procd never reads a family through placed cgroup `path` of hierarchy i, or NULL: a
 * hierarchy root or a cgroup holding procd (their members are not the family's), one under
 * procd's family base (a family's cgroup, shared with its other processes). */
static const char *placed_refusal(const tr_hierarchies *hs, const tr_pid_cgroups *self, const char *base, int i,
                                  const char *path)
{
        if (tr_cgroup_holds_self(hs, self, i, path))
                return "the hierarchy's root or a cgroup holding procd";
        if (base && tr_cgroup_path_under(path, base))
                return "under procd's family base";
        return NULL;
}

int pd_famcg_placed_acceptable(const tr_hierarchies *hs, const pd_famcg *fc, const char *text, char *why, size_t size)
{
        tr_pid_cgroups pc;
        tr_error err = { 0 };
        if (tr_pid_cgroups_parse(hs, text, &pc, &err) < 0) {
                snprintf(why, size, "placed cgroups unreadable: %s", err.msg);
                return -EINVAL;
        }
        tr_pid_cgroups self_buf; /* procd's own, read once for every hierarchy */
        const tr_pid_cgroups *self = tr_self_cgroups(hs, &self_buf);
        int k = 0, n = 0;
        for (int i = 0; i < hs->n && k == 0; i++) {
                const char *r = pc.paths[i] ? placed_refusal(hs, self, pd_famcg_base(fc), i, pc.paths[i]) : NULL;
                n += pc.paths[i] != NULL;
                if (r) {
                        snprintf(why, size, "placed cgroup %s:%s is %s", hs->h[i].key[0] ? hs->h[i].key : "cgroup2",
                                 pc.paths[i], r);
                        k = -EPERM;
                }
        }
        tr_pid_cgroups_clear(&pc);
        tr_pid_cgroups_clear(&self_buf);
        if (k == 0 && n == 0) {
                snprintf(why, size, "no placed cgroup in a mounted hierarchy");
                k = -EINVAL;
        }
        return k;
}

int pd_famcg_open_placed(const tr_hierarchies *hs, const char *text, tr_cgroup **out, tr_error *err)
{
        tr_pid_cgroups pc;
        int k = tr_pid_cgroups_parse(hs, text, &pc, err);
        if (k < 0)
                return k;
        /* flags 0: read (members, usage), never acted on (no freeze, cgroup.kill, attach):
         * another manager's cgroup, whose freezer state and membership are its own */
        k = tr_cgroup_open_for_cgroups(hs, NULL, NULL, &pc, "placed cgroups", 0, out, err);
        tr_pid_cgroups_clear(&pc);
        return k;
}

int pd_famcg_track_placed(pd_famcg *fc, const pd_famcg_root *rt, char **text_out, tr_cgroup **cg_out, tr_error *err)
{
        const tr_hierarchies *hs = fc->hs;
        pid_t pid = rt->pid;
        tr_pid_cgroups placed;
        char where[512];
        int k = pd_famcg_placed(hs, pid, rt->ppid, NULL, NULL, fc->base, rt->came_from, &placed, where, sizeof where);
        if (k <= 0) {
                tr_pid_cgroups_clear(&placed);
                return k < 0 ? tr_error_set(err, -k, "root pid %d is gone", (int) pid)
                             : tr_error_set(err, EINVAL, "root pid %d was placed nowhere", (int) pid);
        }
        /* never through a hierarchy's root, a cgroup holding procd, nor one of procd's own
         * family cgroups (a root left in the cgroup of a family it was the root of, or
         * moved along with one): their members are not the family's alone */
        GString *text = g_string_new(NULL);
        tr_pid_cgroups self_buf; /* procd's own, read once for every hierarchy */
        const tr_pid_cgroups *self = tr_self_cgroups(hs, &self_buf);
        for (int i = 0; i < hs->n; i++) {
                if (!placed.paths[i] || placed_refusal(hs, self, fc->base, i, placed.paths[i]))
                        continue;
                g_string_append_printf(text, "%d:%s:%s\n", i, hs->h[i].key, placed.paths[i]);
        }
        tr_pid_cgroups_clear(&self_buf);
        tr_pid_cgroups_clear(&placed);
        if (text->len == 0) {
                g_string_free(text, TRUE);
                return tr_error_set(err, EBUSY, "root was placed in %s, none of which procd may read through",
                                    where);
        }
        k = pd_famcg_open_placed(hs, text->str, cg_out, err);
        if (k < 0) {
                g_string_free(text, TRUE);
                return k;
        }
        *text_out = strdup(text->str);
        g_string_free(text, TRUE);
        if (!*text_out) {
                tr_cgroup_free(TR_TAKE_PTR(*cg_out));
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

const char *pd_famcg_placed_label(const tr_hierarchies *hs, const char *text, char *buf, size_t size)
{
        tr_pid_cgroups pc;
        size_t off = 0;
        if (size)
                buf[0] = '\0';
        if (!hs || tr_pid_cgroups_parse(hs, text, &pc, NULL) < 0) {
                snprintf(buf, size, "%s", text); /* as saved */
                for (char *nl; (nl = strchr(buf, '\n'));)
                        *nl = nl[1] ? ' ' : '\0';
                return buf;
        }
        for (int i = 0; i < hs->n; i++)
                if (pc.paths[i])
                        append_label(buf, size, &off, hs->h[i].key, pc.paths[i]);
        tr_pid_cgroups_clear(&pc);
        return buf;
}

int pd_famcg_attach_unplaced(tr_cgroup *to, pid_t pid, const char *const *own, bool family, uint32_t *left,
                             char *where, size_t size, tr_error *err)
{
        int primary = tr_cgroup_primary_index(to);
        const tr_hierarchies *hs = tr_cgroup_hierarchies(to);
        tr_pid_cgroups placed, now;
        int k = pd_famcg_placed(hs, pid, 0, own, to, NULL, 0, &placed, where, size);
        if (k < 0 || tr_pid_cgroups_read(hs, pid, &now, NULL) < 0) {
                tr_pid_cgroups_clear(&placed);
                return tr_error_set(err, ESRCH, "pid %d is gone", (int) pid);
        }
        uint32_t mask = 0;
        *left = 0;
        for (int i = 0; i < hs->n; i++) {
                const char *target = tr_cgroup_path(to, i);
                if (!target || (now.paths[i] && tr_cgroup_path_under(now.paths[i], target)))
                        continue; /* not made there, or already there (or below): nothing to move */
                if (placed.paths[i])
                        *left |= 1u << i; /* placed elsewhere by another manager: left there */
                else
                        mask |= 1u << i;
        }
        tr_pid_cgroups_clear(&placed);
        tr_pid_cgroups_clear(&now);
        if (primary >= 0 && (*left & (1u << primary)))
                return tr_error_set(err, EBUSY, "pid %d was placed in %s by another manager: left there", (int) pid,
                                    where ? where : "a cgroup");
        if (!mask)
                return 0;
        return family ? pd_famcg_attach_in(to, pid, mask, err) : tr_cgroup_attach_in(to, pid, mask, err);
}

/* A name no cgroup has yet in parent: fam.ROOT.START, else with a suffix (.2, .3, ...).
 * The name is taken when an earlier family of the same root (registered, unregistered,
 * registered again) left its cgroup behind because it was not empty: what it still holds
 * folded into that family's parent (condor_procd's rule) and must not be counted in the
 * new family, whose root alone moves in.  0, or -EEXIST after FRESH_NAME_TRIES names. */
#define FRESH_NAME_TRIES 64
static int fresh_name(pd_famcg *fc, tr_cgroup *parent, pid_t root, uint64_t start, char *name, size_t size,
                      tr_error *err)
{
        for (unsigned t = 1; t <= FRESH_NAME_TRIES; t++) {
                if (t == 1)
                        snprintf(name, size, "fam.%d.%llu", (int) root, (unsigned long long) start);
                else
                        snprintf(name, size, "fam.%d.%llu.%u", (int) root, (unsigned long long) start, t);
                bool taken = false;
                for (int i = 0; i < fc->hs->n && !taken; i++) {
                        int dfd = (fc->mask & (1u << i)) ? tr_cgroup_dirfd(parent, i) : -1;
                        taken = dfd >= 0 && faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
                }
                if (!taken)
                        return 0;
        }
        return tr_error_set(err, EEXIST, "family cgroups fam.%d.%llu.* all taken", (int) root,
                            (unsigned long long) start);
}

int pd_famcg_create(pd_famcg *fc, const pd_famcg_root *rt, tr_cgroup *parent_cg, const char *parent_path,
                    char **path_out, tr_cgroup **cg_out, tr_error *err)
{
        if (!fc || !fc->base)
                return tr_error_set(err, EOPNOTSUPP, "%s", pd_famcg_off_reason(fc));
        pid_t root = rt->pid;
        uint64_t root_start = rt->start_ticks;
        pid_t ppid = rt->ppid;
        tr_proc p;
        if (ppid == 0 && (tr_proc_stat_read(root, &p) < 0 || p.start_ticks != root_start))
                return tr_error_set(err, ESRCH, "root pid %d is gone", (int) root);
        if (ppid == 0)
                ppid = p.ppid;
        /* a root some manager placed in a cgroup of its own (a job cgroup made with
         * clone3(CLONE_INTO_CGROUP) or a cgroup.procs write) stays where it was put, in every
         * hierarchy: a placement in v1 controllers alone (Slurm's cgroup/v1 memory limit on a
         * hybrid host) counts as much as one in the v2 tree */
        tr_pid_cgroups placed = { { 0 } };
        char where[512];
        int k = pd_famcg_placed(fc->hs, root, ppid, NULL, NULL, fc->base, rt->came_from, &placed, where, sizeof where);
        tr_pid_cgroups_clear(&placed);
        if (k < 0)
                return tr_error_set(err, -k, "root pid %d is gone", (int) root);
        if (k > 0)
                return tr_error_set(err, EBUSY, "root was placed in %s (its parent is elsewhere): left there", where);
        const char *under = parent_path ? parent_path : fc->base;
        /* made relative to the parent's open directories: the base, or the parent family's
         * cgroup; a cgroup the parent was handed is opened (made where missing) by path */
        _cleanup_cgroup_ tr_cgroup *handed = NULL, *cg = NULL, *leaf = NULL;
        tr_cgroup *parent = parent_cg;
        if (!parent && parent_path) {
                k = tr_cgroup_create_in(fc->hs, parent_path, fc->mask, &handed, err);
                parent = handed;
        }
        bool under_base = !parent;
        if (under_base)
                parent = fc->base_cg;
        char name[64], path[PATH_MAX];
        if (k >= 0)
                k = fresh_name(fc, parent, root, root_start, name, sizeof name, err);
        if (k < 0)
                return k;
        int n = snprintf(path, sizeof path, "%s/%s", under, name);
        if (n < 0 || (size_t) n + sizeof "/" PD_FAMCG_LEAF > sizeof path)
                return tr_error_set(err, ENAMETOOLONG, "family cgroup path too long under %s", under);
        k = tr_cgroup_create_child(parent, name, fc->mask, !(under_base && fc->base_enabled), &cg, err);
        if (k >= 0 && under_base)
                fc->base_enabled = true;
        /* the leaf, in the v2 tree only (v1 has no no-internal-processes rule: there the
         * root sits in the family's cgroup itself), gets no controllers of its own (usage
         * is read from the family's cgroup): they are enabled in the family's cgroup only
         * when a subfamily is made inside it */
        int v2 = fc->hs->v2;
        if (k >= 0 && v2 >= 0)
                k = tr_cgroup_create_child(cg, PD_FAMCG_LEAF, 1u << v2, false, &leaf, err);
        tr_cgroup_free(TR_TAKE_PTR(leaf));
        if (k >= 0)
                k = pd_famcg_attach(cg, root, err);
        uint64_t now = 0;
        if (k >= 0 && (tr_pid_start_ticks(root, &now) < 0 || now != root_start))
                k = tr_error_set(err, ESRCH, "root pid %d exited while being moved", (int) root);
        if (k >= 0 && !(*path_out = strdup(path)))
                k = tr_error_set(err, ENOMEM, "out of memory");
        if (k < 0) {
                tr_cgroup_free(TR_TAKE_PTR(cg));
                pd_famcg_release(fc, path, true); /* the root went back or is gone: empty */
                return k;
        }
        *cg_out = TR_TAKE_PTR(cg);
        return 0;
}

int pd_famcg_move(tr_cgroup *cg, const tr_pidset *pids, const char *const *own, GArray *failed, size_t *moved,
                  tr_error *err)
{
        const tr_hierarchies *hs = tr_cgroup_hierarchies(cg);
        int idx = pd_famcg_primary(hs);
        const char *target = idx >= 0 ? tr_cgroup_path(cg, idx) : NULL;
        int first = 0;
        *moved = 0;
        for (size_t i = 0; i < pids->n; i++) {
                pid_t pid = pids->pids[i];
                uint64_t start = 0;
                if (pid <= 1 || pid == getpid() || tr_pid_start_ticks(pid, &start) < 0)
                        continue; /* never init or procd; gone is fine */
                if (target) {
                        _cleanup_free_ char *cur = NULL;
                        if (pd_famcg_pid_cgroup(hs, pid, &cur) < 0)
                                continue;
                        if (tr_cgroup_path_under(cur, target))
                                continue;
                }
                tr_error e = { 0 };
                uint32_t left = 0;
                char where[256];
                int k = pd_famcg_attach_unplaced(cg, pid, own, false, &left, where, sizeof where, &e);
                uint64_t now = 0;
                if (k >= 0 && left)
                        g_info("pid %d moved, but left in %s (placed there by another manager)", (int) pid, where);
                if (k >= 0) {
                        (*moved)++;
                        continue;
                }
                if (tr_pid_start_ticks(pid, &now) < 0 || now != start)
                        continue; /* exited meanwhile */
                if (failed) {
                        pd_ident id = { pid, start };
                        g_array_append_val(failed, id);
                }
                if (first == 0) {
                        first = k;
                        tr_error_set(err, -k, "%s", e.msg);
                }
        }
        return first;
}
