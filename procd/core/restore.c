/* restore.c - the registry to and from the state file. */
#include "restore.h"

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "procd/core/family-cgroup.h"
#include "trackers/procscan.h"
#include "trackers/util.h"

_Static_assert(sizeof(pd_ident) == sizeof(pd_state_member) && offsetof(pd_ident, pid) == offsetof(pd_state_member, pid) &&
                       offsetof(pd_ident, start_ticks) == offsetof(pd_state_member, start_ticks),
               "a family's kept list is saved as it is");

/* f as a state record whose strings are f's own (borrowed, not to be freed) and whose
 * members go to the reused array members (the snapshot's start times: no /proc read). */
static void family_view(pd_registry *r, const pd_family *f, GArray *members, pd_state_family *sf)
{
        *sf = (pd_state_family) {
                .root_pid = f->root_pid,
                .root_start_ticks = f->root_start_ticks,
                .parent_root_pid = f->parent && f->parent->parent ? f->parent->root_pid : 0,
                .root_uid = f->root_uid,
                .watcher_pid = f->watcher.pid,
                .watcher_start_ticks = f->watcher.start_ticks,
                .interval_sec = f->interval_sec,
                .cgroup = f->cgroup_path,
                .cgroup_origin = f->cgroup_path ? (unsigned) f->cgroup_origin : 0,
                .no_cgroup_reason = f->no_cgroup_reason,
                .env_marker = f->env_marker,
                .login = f->by_login ? (f->login_name ? f->login_name : (char *) "?") : NULL,
                .login_uid = f->login_uid,
                .by_gid = f->by_gid,
                .gid = f->gid,
                .gid_allocated = f->gid_allocated,
                .kill_on_watcher_exit = f->flags & PD_FAMILY_KILL_ON_WATCHER_EXIT,
                .frozen = f->flags & PD_FAMILY_FROZEN,
                .killing = f->flags & PD_FAMILY_KILLING,
                .suspending = f->flags & PD_FAMILY_SUSPENDING,
                .killed = f->flags & PD_FAMILY_KILLED,
                .moved_in = f->flags & PD_FAMILY_MOVED_IN,
                .moved_exe_known = f->moved_exe_known,
                .moved_exe_dev = f->moved_exe.dev,
                .moved_exe_ino = f->moved_exe.ino,
                /* the registry's own array, borrowed: the same layout */
                .kept = (pd_state_member *) (void *) f->kept->data,
                .n_kept = f->kept->len,
        };
        g_array_set_size(members, 0);
        if (f->proc_tracked) {
                for (size_t i = 0; i < f->last_members.n; i++) {
                        pid_t pid = f->last_members.pids[i];
                        uint64_t start = pd_registry_snapshot_start_ticks(r, pid);
                        if (pid > 1 && start)
                                g_array_append_val(members, ((pd_state_member) { pid, start }));
                }
        }
        sf->members = (pd_state_member *) (void *) members->data;
        sf->n_members = members->len;
}

void pd_persist_init(pd_persist *p)
{
        p->text = g_string_sized_new(4096);
        p->all = g_ptr_array_new();
        p->members = g_array_new(FALSE, FALSE, sizeof(pd_state_member));
}

void pd_persist_clear(pd_persist *p)
{
        if (p->text)
                g_string_free(p->text, TRUE);
        if (p->all)
                g_ptr_array_free(p->all, TRUE);
        if (p->members)
                g_array_free(p->members, TRUE);
        memset(p, 0, sizeof *p);
}

const GString *pd_persist_format(pd_persist *p, pd_registry *r)
{
        g_string_truncate(p->text, 0);
        g_ptr_array_set_size(p->all, 0);
        pd_registry_all(r, p->all); /* pre-order: parents first, the root family first */
        pd_state_format_header(p->text);
        size_t n = 0;
        for (guint i = 0; i < p->all->len; i++) {
                const pd_family *f = p->all->pdata[i];
                if (!f->parent)
                        continue; /* the root family is procd's parent: rebuilt from options */
                pd_state_family sf;
                family_view(r, f, p->members, &sf);
                pd_state_format_family(&sf, p->text);
                n++;
        }
        pd_state_format_end(n, p->text);
        return p->text;
}

int pd_persist_save(pd_persist *p, pd_registry *r, const char *path, tr_error *err)
{
        const GString *text = pd_persist_format(p, r);
        return pd_state_write_text(path, text->str, text->len, err);
}

/* The root is still the process saved (pid + start time); *alive: it has not exited (a
 * zombie has).  One read of /proc/PID/stat, made after everything else read about the
 * root, so that those reads were of the same process. */
static int check_root(const pd_state_family *sf, bool *alive, tr_error *err)
{
        tr_proc now;
        if (sf->root_pid <= 1 || tr_proc_stat_read(sf->root_pid, &now) < 0)
                return tr_error_set(err, ESRCH, "root %d is gone", (int) sf->root_pid);
        if (now.start_ticks != sf->root_start_ticks)
                return tr_error_set(err, ESRCH, "pid %d now names another process (start %llu, saved %llu)",
                                    (int) sf->root_pid, (unsigned long long) now.start_ticks,
                                    (unsigned long long) sf->root_start_ticks);
        if (alive)
                *alive = now.state != 'Z' && now.state != 'X';
        return 0;
}

/* The root listed in the cgroup.procs where procd put it (the family's leaf in a v2
 * hierarchy, the cgroup itself in v1), read in the handle's primary hierarchy: proof that
 * it is in the cgroup, cheaper than /proc/PID/cgroup, which formats the path of every
 * hierarchy.  Not listed proves nothing (moved below, a zombie, past the buffer): the
 * caller makes the full check.  Only whole lines count. */
static bool listed_in_family_cgroup(tr_cgroup *cg, pid_t pid)
{
        int i = tr_cgroup_primary_index(cg);
        int dirfd = i >= 0 ? tr_cgroup_dirfd(cg, i) : -1;
        if (dirfd < 0)
                return false;
        char buf[4096];
        bool v2 = tr_cgroup_hierarchies(cg)->h[i].is_v2;
        int n = tr_read_file_at(dirfd, v2 ? PD_FAMCG_LEAF "/cgroup.procs" : "cgroup.procs", buf, sizeof buf, NULL);
        for (char *line = buf, *nl; n > 0 && (nl = memchr(line, '\n', (size_t) (buf + n - line))); line = nl + 1) {
                char *end;
                long v = strtol(line, &end, 10);
                if (end == nl && end != line && v == pid)
                        return true;
        }
        return false;
}

/* A cgroup family's cgroup, opened once (the handle goes to the tracker): it must still
 * exist, and hold the root (its own cgroup is the saved one or below it in every hierarchy
 * that has the saved one).  The root's identity is checked after its cgroups are read. */
static int open_cgroup(const tr_hierarchies *hs, tr_cg_opener *o, const pd_state_family *sf, tr_cgroup **out,
                       tr_error *err)
{
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        tr_pid_cgroups pc = { { 0 } };
        bool handed = sf->cgroup_origin == PD_CG_HANDED;
        bool placed = sf->cgroup_origin == PD_CG_PLACED;
        bool inside = false, compared = false;
        int k = 0;
        if (placed) {
                /* the cgroups another manager placed the root in: read only, and the root
                 * must still be there (procd never moves it back) */
                char label[400];
                k = pd_famcg_open_placed(hs, sf->cgroup, &cg, err);
                if (k < 0)
                        return tr_error_set(err, -k, "placed cgroups %s are gone",
                                            pd_famcg_placed_label(hs, sf->cgroup, label, sizeof label));
        } else if (!handed) {
                /* one procd made: opened as named */
                k = tr_cgroup_open_for_cgroups(hs, o, sf->cgroup, NULL, NULL, TR_CG_MAY_ACT | TR_CG_OWNED, &cg, err);
                if (k < 0)
                        return tr_error_set(err, -k, "cgroup %s is gone", sf->cgroup);
                if (sf->cgroup_origin == PD_CG_FAMILY)
                        inside = compared = listed_in_family_cgroup(cg, sf->root_pid);
        }
        if (!inside && tr_pid_cgroups_read(hs, sf->root_pid, &pc, NULL) < 0)
                return tr_error_set(err, ESRCH, "root %d is gone", (int) sf->root_pid);
        bool alive = false;
        k = check_root(sf, &alive, err);
        if (k >= 0 && handed) {
                /* as the tracker opens it: at the root's own (deeper) cgroup */
                k = tr_cgroup_open_for_cgroups(hs, o, sf->cgroup, &pc, NULL, TR_CG_MAY_ACT, &cg, err);
                if (k < 0)
                        tr_error_set(err, -k, "cgroup %s is gone", sf->cgroup);
        }
        /* an exited root (a zombie: a killed family not reaped yet) reads "/" in every v1
         * hierarchy, where the kernel reports exited tasks in the root cgroup; only the v2
         * tree keeps its path.  No proof there that it left.  (Alive at the stat read, made
         * after the cgroup read, means alive at that read: the v1 lines were its own.) */
        for (int i = 0; k >= 0 && i < hs->n && !inside; i++) {
                if (!tr_cgroup_path(cg, i) || !pc.paths[i] || (!alive && !hs->h[i].is_v2))
                        continue;
                compared = true;
                inside = tr_cgroup_path_under(pc.paths[i], placed ? tr_cgroup_path(cg, i) : sf->cgroup);
        }
        tr_pid_cgroups_clear(&pc);
        if (k < 0)
                return k;
        if (compared && !inside)
                return tr_error_set(err, ESRCH, "root %d is no longer in cgroup %s", (int) sf->root_pid, sf->cgroup);
        *out = TR_TAKE_PTR(cg);
        return 0;
}

/* What the checks of one record found, before the registry sees it: its cgroup opened
 * (a cgroup family), or why it cannot be restored (msg, k < 0). */
typedef struct checked {
        int k;
        tr_cgroup *cg;
        char *msg;
} checked;

/* The checks of records [from, to) of s, through an opener of their own. */
typedef struct check_range {
        const tr_hierarchies *hs;
        const pd_state *s;
        checked *out;
        size_t from, to;
} check_range;

static gpointer check_records(gpointer data)
{
        const check_range *c = data;
        tr_cg_opener *opener = tr_cg_opener_new(c->hs); /* NULL: each cgroup opened by path */
        for (size_t i = c->from; i < c->to; i++) {
                const pd_state_family *sf = &c->s->fams[i];
                tr_error err = { 0 };
                checked *o = &c->out[i];
                o->k = sf->cgroup ? open_cgroup(c->hs, opener, sf, &o->cg, &err) : check_root(sf, NULL, &err);
                if (o->k < 0)
                        o->msg = g_strdup(err.msg);
        }
        tr_cg_opener_free(opener);
        return NULL;
}

/* Below this many records the checks run on the main thread alone. */
#define PARALLEL_MIN_RECORDS 64
#define MAX_CHECK_THREADS 8

/* The checks of every record, on as many threads as procd may run on (at most 8).  They
 * only read /proc and cgroupfs and open the families' cgroups; nothing is shared but the
 * hierarchies (read only) and each record's own slot in out.  The registry is filled
 * afterwards, on the main thread, in the file's order. */
static void check_all(const tr_hierarchies *hs, const pd_state *s, checked *out)
{
        cpu_set_t set;
        int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
        size_t n_threads = s->n < PARALLEL_MIN_RECORDS ? 1 : (size_t) CLAMP(cpus, 1, MAX_CHECK_THREADS);
        check_range ranges[MAX_CHECK_THREADS];
        GThread *threads[MAX_CHECK_THREADS] = { NULL };
        for (size_t t = 0; t < n_threads; t++) {
                ranges[t] = (check_range) { hs, s, out, s->n * t / n_threads, s->n * (t + 1) / n_threads };
                if (t > 0)
                        threads[t] = g_thread_try_new("procd-restore", check_records, &ranges[t], NULL);
        }
        check_records(&ranges[0]);
        for (size_t t = 1; t < n_threads; t++) {
                if (threads[t])
                        g_thread_join(threads[t]);
                else
                        check_records(&ranges[t]); /* no thread: done here */
        }
}

/* One checked record into the registry (its cgroup handle goes to the tracker). */
static int restore_one(pd_registry *r, GHashTable *watchers, const pd_state_family *sf, checked *c, pd_family **f,
                       bool *watcher_gone, tr_error *err)
{
        /* families of one watcher (a starter's) share its checked pidfd */
        const pd_family *like = sf->watcher_pid > 0 ? g_hash_table_lookup(watchers, GINT_TO_POINTER(sf->watcher_pid)) : NULL;
        int k = pd_registry_restore(r, sf, TR_TAKE_PTR(c->cg), like, f, watcher_gone, err);
        if (k >= 0 && !*watcher_gone && (*f)->watcher.pidfd >= 0)
                g_hash_table_insert(watchers, GINT_TO_POINTER(sf->watcher_pid), *f);
        return k;
}

/* The refusals of registration (pd_cmd_cgroup_acceptable: "/", a cgroup that holds procd,
 * one a family restored before tracks), applied to a record's cgroup: an edited or foreign
 * state file gets no more than a client would.  0, or -EPERM with the reason in c->msg. */
static int refused_cgroup(pd_commands *cm, const pd_state_family *sf, checked *c)
{
        procd_error perr = { 0 };
        if (sf->cgroup_origin == PD_CG_PLACED) {
                /* the cgroups another manager placed the root in: registration's refusals
                 * for those (pd_famcg_track_placed), and never a second family on them */
                pd_family *other = pd_registry_cgroup_owner(cm->reg, sf->cgroup, NULL);
                if (pd_famcg_placed_acceptable(pd_registry_hierarchies(cm->reg), pd_registry_family_cgroups(cm->reg),
                                               sf->cgroup, perr.msg, sizeof perr.msg) == 0 && !other)
                        return 0;
                if (other)
                        snprintf(perr.msg, sizeof perr.msg, "its placed cgroups are family %d's", (int) other->root_pid);
        } else if (pd_cmd_cgroup_acceptable(cm, sf->cgroup, NULL, &perr) == PROCD_OK) {
                return 0;
        }
        tr_cgroup_free(TR_TAKE_PTR(c->cg));
        g_free(c->msg);
        c->msg = g_strdup_printf("refused as at registration: %s", perr.msg);
        return -EPERM;
}

static uint64_t cpu_usec(void)
{
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return 0;
        return (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
               (uint64_t) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static void restore_families(pd_commands *cm, const char *path, pd_restore_stats *st);

/* The fam.* cgroups no family owns now (left by a crash): the empty ones go. */
static void sweep_orphans(pd_registry *r, pd_famcg_sweep_stats *st)
{
        g_autoptr(GPtrArray) all = g_ptr_array_new();
        g_autoptr(GHashTable) owned = g_hash_table_new(g_str_hash, g_str_equal);
        pd_registry_all(r, all);
        for (guint i = 0; i < all->len; i++) {
                const pd_family *f = all->pdata[i];
                if (f->cgroup_path)
                        g_hash_table_add(owned, f->cgroup_path);
        }
        pd_famcg_sweep(pd_registry_family_cgroups(r), pd_registry_hierarchies(r), owned, st);
}

void pd_restore(pd_commands *cm, const char *path, pd_restore_stats *st)
{
        memset(st, 0, sizeof *st);
        uint64_t t0 = tr_now_usec(), c0 = cpu_usec();
        restore_families(cm, path, st);
        st->wall_usec = tr_now_usec() - t0;
        st->cpu_usec = cpu_usec() - c0;
        sweep_orphans(cm->reg, &st->sweep);
}

static void restore_families(pd_commands *cm, const char *path, pd_restore_stats *st)
{
        pd_state s;
        tr_error err = { 0 };
        int k = pd_state_read(path, &s, &err);
        if (k == -ENOENT)
                return;
        if (k < 0) {
                char aside[4200];
                tr_error e2 = { 0 };
                if (k == -EPROTO || k == -EPROTONOSUPPORT || k == -EBADMSG) {
                        st->set_aside = true;
                        if (pd_state_set_aside(path, pd_state_error_kind(k), aside, sizeof aside, &e2) == 0)
                                g_warning("state file not trusted (%s): set aside as %s; starting with no family",
                                          err.msg, aside);
                        else
                                g_warning("state file not trusted (%s), and cannot be set aside (%s); starting with "
                                          "no family",
                                          err.msg, e2.msg);
                } else {
                        g_warning("state file unreadable (%s); starting with no family", err.msg);
                }
                return;
        }
        st->in_file = s.n;
        g_autoptr(GPtrArray) gone = g_ptr_array_new();
        g_autoptr(GPtrArray) restored = g_ptr_array_new();
        /* families' cgroups are mostly siblings: one name looked up each (an opener per
         * checking thread) */
        g_autofree checked *checks = g_new0(checked, s.n ? s.n : 1);
        check_all(pd_registry_hierarchies(cm->reg), &s, checks);
        g_autoptr(GHashTable) watchers = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (size_t i = 0; i < s.n; i++) {
                const pd_state_family *sf = &s.fams[i];
                pd_family *f = NULL;
                bool watcher_gone = false;
                tr_error_clear(&err);
                k = checks[i].k;
                if (k >= 0 && sf->cgroup)
                        k = refused_cgroup(cm, sf, &checks[i]);
                if (k >= 0)
                        k = restore_one(cm->reg, watchers, sf, &checks[i], &f, &watcher_gone, &err);
                g_autofree char *why = TR_TAKE_PTR(checks[i].msg);
                if (k < 0) {
                        g_warning("family %d not restored: %s", (int) sf->root_pid, why ? why : err.msg);
                        st->dropped++;
                        continue;
                }
                st->restored++;
                g_ptr_array_add(restored, f);
                if (watcher_gone)
                        g_ptr_array_add(gone, GINT_TO_POINTER(f->root_pid));
        }
        pd_state_clear(&s);
        /* the flags first (a family may go away below) */
        for (guint i = 0; i < restored->len; i++)
                pd_cmd_resume(cm, restored->pdata[i]);
        for (guint i = 0; i < gone->len; i++) {
                pd_family *f = pd_registry_find(cm->reg, GPOINTER_TO_INT(gone->pdata[i]));
                if (!f || !f->parent)
                        continue;
                st->watcher_gone++;
                g_message("family %d: its watcher %d exited while procd was down", (int) f->root_pid,
                          (int) f->watcher.pid);
                pd_registry_watcher_exited(cm->reg, f);
        }
        g_message("state file %s: %zu families restored, %zu dropped", path, st->restored, st->dropped);
}
