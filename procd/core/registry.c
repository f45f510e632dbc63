/* registry.c - the daemon's table of families: the root family, families by root pid,
 * their lifetime, hooks and flags, walks over the tree, and how a family describes its
 * tracking.  Placement is registry-tree.c's, tracking methods registry-track.c's, /proc
 * membership registry-members.c's, watchers registry-watch.c's, restore registry-restore.c's. */
#include "registry-internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trackers/proc-read.h"

void pd_reg_changed(pd_registry *r)
{
        if (r->saves_held)
                r->save_due = true;
        else if (r->changed)
                r->changed(r->changed_data);
}

void pd_registry_hold_saves(pd_registry *r) { r->saves_held++; }

void pd_registry_flush_saves(pd_registry *r)
{
        if (!r->save_due)
                return;
        r->save_due = false;
        if (r->changed)
                r->changed(r->changed_data);
}

void pd_registry_release_saves(pd_registry *r)
{
        if (r->saves_held && --r->saves_held == 0)
                pd_registry_flush_saves(r);
}

void pd_registry_set_changed_hook(pd_registry *r, pd_registry_changed_fn fn, void *userdata)
{
        r->changed = fn;
        r->changed_data = userdata;
}

void pd_registry_set_family_hook(pd_registry *r, pd_registry_family_fn fn, void *userdata)
{
        r->family_hook = fn;
        r->family_hook_data = userdata;
}

void pd_reg_family_changed(pd_registry *r, pd_family *f, pd_family_change what)
{
        if (r->family_hook)
                r->family_hook(r->family_hook_data, f, what);
}

void pd_registry_set_fd_mux(pd_registry *r, pd_fd_mux *mux) { r->fd_mux = mux; }

pd_fd_mux *pd_registry_fd_mux(const pd_registry *r) { return r ? r->fd_mux : NULL; }

void pd_registry_set_watcher_hook(pd_registry *r, pd_registry_watcher_fn fn, void *userdata)
{
        r->watcher_exit = fn;
        r->watcher_exit_data = userdata;
}

bool pd_registry_moved_in(pd_registry *r, pd_family *f)
{
        if (!(f->flags & PD_FAMILY_MOVED_IN))
                return false;
        tr_exe_id now;
        if (!f->moved_exe_known || tr_proc_exe_id(f->root_pid, &now) < 0 || tr_exe_id_equal(now, f->moved_exe) ||
            !tr_pid_alive_as(f->root_pid, f->root_start_ticks))
                return true; /* no exec seen (or the root is gone, or its pid reused): kept */
        f->moved_exe_known = false;
        pd_registry_set_flag(r, f, PD_FAMILY_MOVED_IN, false);
        return false;
}

void pd_registry_set_flag(pd_registry *r, pd_family *f, unsigned flag, bool on)
{
        unsigned v = on ? f->flags | flag : f->flags & ~flag;
        if (v == f->flags)
                return;
        f->flags = v;
        pd_reg_changed(r);
}
void pd_reg_log(pd_registry *r, const char *fmt, ...)
{
        char msg[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (r->log)
                r->log(r->log_data, msg);
        else
                g_message("%s", msg);
}

void pd_registry_set_log(pd_registry *r, pd_registry_log_fn fn, void *userdata)
{
        r->log = fn;
        r->log_data = userdata;
}

void pd_reg_family_free(pd_family *f)
{
        if (!f)
                return;
        if (f->watcher_source)
                g_source_remove(f->watcher_source);
        pd_pid_watch_cancel(f->watcher_watch);
        tr_pidref_close(&f->watcher);
        if (f->tf)
                tr_family_free(f->tf);
        tr_pidset_free(&f->last_members);
        g_ptr_array_free(f->children, TRUE);
        g_array_free(f->strays, TRUE);
        g_array_free(f->kept, TRUE);
        g_array_free(f->carry, TRUE);
        free(f->cgroup_path);
        g_free(f->cg_key);
        free(f->no_cgroup_reason);
        free(f->env_marker);
        free(f->login_name);
        free(f);
}

pd_family *pd_reg_family_alloc(void)
{
        pd_family *f = calloc(1, sizeof *f);
        if (!f)
                return NULL;
        f->watcher = TR_PIDREF_EMPTY;
        f->children = g_ptr_array_new();
        f->strays = g_array_new(FALSE, FALSE, sizeof(pd_ident));
        f->kept = g_array_new(FALSE, FALSE, sizeof(pd_ident));
        f->carry = g_array_new(FALSE, FALSE, sizeof(pd_ident));
        return f;
}

const tr_hierarchies *pd_registry_hierarchies(const pd_registry *r) { return r->hs; }
void pd_registry_set_family_cgroups(pd_registry *r, pd_famcg *fc) { r->fc = fc; }
pd_famcg *pd_registry_family_cgroups(const pd_registry *r) { return r->fc; }

int pd_registry_new(const tr_hierarchies *hs, pid_t root_pid, uint32_t root_interval_sec, pd_registry **out,
                    tr_error *err)
{
        pd_registry *r = calloc(1, sizeof *r);
        if (!r)
                return tr_error_set(err, ENOMEM, "out of memory");
        r->hs = hs;
        r->by_root = g_hash_table_new(g_direct_hash, g_direct_equal);
        r->by_cgroup = g_hash_table_new(g_str_hash, g_str_equal);
        r->min_root_start = UINT64_MAX;
        r->proc_intervals = g_hash_table_new(g_direct_hash, g_direct_equal);
        r->member_of = g_hash_table_new(g_direct_hash, g_direct_equal);
        r->root = pd_reg_family_alloc();
        if (!r->root) {
                pd_registry_free(r);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        pd_family *f = r->root;
        f->root_pid = root_pid;
        f->interval_sec = root_interval_sec ? root_interval_sec : 60;
        f->proc_tracked = true;
        if (root_pid > 1) {
                int k = tr_pid_start_ticks(root_pid, &f->root_start_ticks);
                if (k < 0) {
                        pd_registry_free(r);
                        return tr_error_setx(err, -k, "root family: pid %d", (int) root_pid);
                }
                tr_proc_uid_checked(root_pid, f->root_start_ticks, &f->root_uid);
                k = pd_reg_build_tracker(r, f, NULL, err);
                if (k < 0) {
                        pd_registry_free(r);
                        return k;
                }
                g_hash_table_insert(r->by_root, GINT_TO_POINTER(root_pid), f);
        }
        *out = r;
        return 0;
}

static void free_tree(pd_family *f)
{
        for (guint i = 0; i < f->children->len; i++)
                free_tree(f->children->pdata[i]);
        pd_reg_family_free(f);
}

void pd_registry_free(pd_registry *r)
{
        if (!r)
                return;
        if (r->timer)
                g_source_remove(r->timer);
        pd_fd_mux_remove(r->watcher_poll);
        if (r->root)
                free_tree(r->root);
        tr_cg_budget_free(r->cg_budget); /* after the handles in it */
        pd_pid_watch_free(r->pid_watch);
        g_hash_table_destroy(r->by_root);
        g_hash_table_destroy(r->by_cgroup);
        g_hash_table_destroy(r->proc_intervals);
        g_hash_table_destroy(r->member_of);
        tr_scan_free(&r->scan);
        free(r);
}

pd_family *pd_registry_root(pd_registry *r) { return r->root; }
size_t pd_registry_count(const pd_registry *r) { return r->n_sub; }

pd_family *pd_registry_find(pd_registry *r, pid_t root_pid)
{
        if (root_pid == 0)
                return r->root;
        return g_hash_table_lookup(r->by_root, GINT_TO_POINTER(root_pid));
}

static void post_order(pd_family *f, GPtrArray *out)
{
        for (guint i = 0; i < f->children->len; i++)
                post_order(f->children->pdata[i], out);
        g_ptr_array_add(out, f);
}

static void pre_order(pd_family *f, GPtrArray *out)
{
        g_ptr_array_add(out, f);
        for (guint i = 0; i < f->children->len; i++)
                pre_order(f->children->pdata[i], out);
}

void pd_registry_subtree(pd_family *f, GPtrArray *out) { post_order(f, out); }
void pd_registry_all(pd_registry *r, GPtrArray *out) { pre_order(r->root, out); }

const char *pd_family_tracking(const pd_family *f, char *buf, size_t size)
{
        size_t off = 0;
        buf[0] = '\0';
#define APPEND(...)                                                                             \
        do {                                                                                    \
                int n_ = snprintf(buf + off, size > off ? size - off : 0, "%s", off ? "," : ""); \
                if (n_ > 0)                                                                     \
                        off += (size_t) n_;                                                     \
                n_ = snprintf(buf + off, size > off ? size - off : 0, __VA_ARGS__);             \
                if (n_ > 0)                                                                     \
                        off += (size_t) n_;                                                     \
        } while (0)
        char placed[400];
        if (f->cgroup_path && f->cgroup_origin == PD_CG_PLACED)
                APPEND("placed:%s", pd_famcg_placed_label(f->tf ? tr_cgroup_hierarchies(tr_family_cgroup(f->tf)) : NULL,
                                                          f->cgroup_path, placed, sizeof placed));
        else if (f->cgroup_path)
                APPEND("cgroup:%s", f->cgroup_path);
        if (f->env_marker)
                APPEND("environment:%s", f->env_marker);
        if (f->by_login)
                APPEND("login:%s", f->login_name ? f->login_name : "?");
        if (f->by_gid)
                APPEND("gid:%u", (unsigned) f->gid);
        if (!f->cgroup_path)
                APPEND("parent");
#undef APPEND
        return buf;
}

const char *pd_family_source(const pd_family *f)
{
        if (!f->tf)
                return "none";
        return tr_family_primary_name(f->tf);
}
