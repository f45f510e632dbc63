/* registry-restore.c - a family re-created from its state-file record (restore.c checked
 * the root's identity and opened its cgroup): watcher, seeds, kept children, placement. */
#include "registry-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procd/core/state.h"
#include "trackers/proc-read.h"
#include "trackers/util.h"

static int dup_opt(char **dst, const char *src)
{
        if (src && !(*dst = strdup(src)))
                return -ENOMEM;
        return 0;
}

/* f's watcher through like's pidfd when like watches the same process (pid + start time,
 * checked when like was restored), else a fresh pidfd.  -ESRCH when gone or reused. */
static int restore_watcher(pd_family *f, const pd_state_family *sf, const pd_family *like)
{
        if (like && like->watcher.pidfd >= 0 && like->watcher.pid == sf->watcher_pid &&
            like->watcher.start_ticks == sf->watcher_start_ticks) {
                f->watcher.pidfd = fcntl(like->watcher.pidfd, F_DUPFD_CLOEXEC, 0);
                if (f->watcher.pidfd >= 0) {
                        f->watcher.pid = like->watcher.pid;
                        f->watcher.start_ticks = like->watcher.start_ticks;
                        return 0;
                }
        }
        return pd_reg_open_watcher(f, sf->watcher_pid, sf->watcher_start_ticks);
}

/* The root's children at registration as saved, those whose pid still names the same
 * process; the others (gone, or the pid reused) are logged.  A /proc family's snapshots
 * drop gone ones without a save, so a child logged here may have gone before the crash. */
static void restore_kept(pd_registry *r, pd_family *f, const pd_state_family *sf)
{
        char dropped[256] = "";
        size_t n_dropped = 0, at = 0;
        for (size_t i = 0; i < sf->n_kept; i++) {
                const pd_state_member *m = &sf->kept[i];
                uint64_t st = 0;
                if (m->pid > 1 && tr_pid_start_ticks(m->pid, &st) == 0 && st == m->start_ticks) {
                        g_array_append_val(f->kept, ((pd_ident) { m->pid, m->start_ticks }));
                        continue;
                }
                n_dropped++;
                if (at < sizeof dropped - 16)
                        at += (size_t) snprintf(dropped + at, sizeof dropped - at, "%s%d", at ? " " : "", (int) m->pid);
                else if (dropped[at - 1] != '.')
                        at += (size_t) snprintf(dropped + at, sizeof dropped - at, " ...");
        }
        if (n_dropped)
                pd_reg_log(r,
                           "family %d: %zu of the children its root had at registration are gone or their pid "
                           "names another process now: dropped (%s)",
                           (int) f->root_pid, n_dropped, dropped);
}

int pd_registry_restore(pd_registry *r, const pd_state_family *sf, tr_cgroup *cg, const pd_family *like,
                        pd_family **out, bool *watcher_gone, tr_error *err)
{
        _cleanup_cgroup_ tr_cgroup *handle = cg;
        *watcher_gone = false;
        if (sf->root_pid <= 1 || (sf->cgroup != NULL) != (cg != NULL))
                return tr_error_set(err, EINVAL, "family %d: bad restore record", (int) sf->root_pid);
        if (g_hash_table_lookup(r->by_root, GINT_TO_POINTER(sf->root_pid)))
                return tr_error_set(err, EEXIST, "pid %d already roots a family", (int) sf->root_pid);
        pd_family *f = pd_reg_family_alloc();
        if (!f)
                return tr_error_set(err, ENOMEM, "out of memory");
        f->root_pid = sf->root_pid;
        f->root_start_ticks = sf->root_start_ticks;
        f->root_uid = sf->root_uid; /* read at registration, as before the restart */
        f->interval_sec = sf->interval_sec;
        f->by_login = sf->login != NULL;
        f->login_uid = sf->login_uid;
        f->by_gid = sf->by_gid;
        f->gid = sf->gid;
        f->gid_allocated = sf->gid_allocated;
        f->flags = (sf->kill_on_watcher_exit ? PD_FAMILY_KILL_ON_WATCHER_EXIT : 0) | (sf->frozen ? PD_FAMILY_FROZEN : 0) |
                   (sf->killing ? PD_FAMILY_KILLING : 0) | (sf->suspending ? PD_FAMILY_SUSPENDING : 0) |
                   (sf->killed ? PD_FAMILY_KILLED : 0) | (sf->moved_in ? PD_FAMILY_MOVED_IN : 0);
        f->moved_exe_known = sf->moved_in && sf->moved_exe_known;
        f->moved_exe = (tr_exe_id) { sf->moved_exe_dev, sf->moved_exe_ino };
        f->cgroup_origin = sf->cgroup && sf->cgroup_origin <= PD_CG_PLACED ? (pd_cgroup_origin) sf->cgroup_origin
                                                                             : PD_CG_HANDED;
        if (dup_opt(&f->cgroup_path, sf->cgroup) < 0 || dup_opt(&f->env_marker, sf->env_marker) < 0 ||
            dup_opt(&f->login_name, sf->login) < 0 || dup_opt(&f->no_cgroup_reason, sf->no_cgroup_reason) < 0) {
                pd_reg_family_free(f);
                return tr_error_set(err, ENOMEM, "out of memory");
        }
        if (sf->watcher_pid > 0 && restore_watcher(f, sf, like) < 0) {
                *watcher_gone = true; /* the family is restored; the caller applies the exit rule */
                f->watcher.pid = 0;   /* not armed */
        }
        tr_procfam_spec spec = pd_reg_family_spec(f);
        /* cgroup families: the /proc side is only a fallback with its own scans; /proc
         * families are kept fresh by the registry's shared snapshots */
        spec.max_age_usec = handle ? (uint64_t) f->interval_sec * 1000000u : UINT64_MAX;
        int k = pd_reg_install_tracker(r, f, &spec, TR_TAKE_PTR(handle), err);
        if (k < 0) {
                pd_reg_family_free(f);
                return k;
        }
        if (f->proc_tracked && sf->n_members) {
                /* members found earlier (orphans that left the parent tree included), only
                 * those whose pid still names the same process (the root: checked by the
                 * caller) */
                _cleanup_pidset_ tr_pidset seeds = TR_PIDSET_INIT;
                for (size_t i = 0; i < sf->n_members; i++) {
                        const pd_state_member *m = &sf->members[i];
                        uint64_t st = 0;
                        if ((m->pid == f->root_pid && m->start_ticks == f->root_start_ticks) ||
                            (m->pid != f->root_pid && tr_pid_start_ticks(m->pid, &st) == 0 && st == m->start_ticks))
                                tr_pidset_add(&seeds, m->pid);
                }
                if (seeds.n)
                        tr_procfam_set_seeds(tr_family_procfam(f->tf), &seeds);
        }
        restore_kept(r, f, sf);
        /* the tree as saved: under the root family, or under the saved parent when it was
         * restored (else the usual placement) */
        pd_family *parent = r->root;
        if (sf->parent_root_pid > 0) {
                pd_family *p = g_hash_table_lookup(r->by_root, GINT_TO_POINTER(sf->parent_root_pid));
                parent = p && p->parent ? p : NULL;
        }
        pd_reg_link_family(r, f, parent);
        if (*watcher_gone) {
                f->watcher.pid = sf->watcher_pid;
                f->watcher.start_ticks = sf->watcher_start_ticks;
        }
        pd_reg_family_changed(r, f, PD_FAMILY_RESTORED);
        *out = f;
        return 0;
}
