/* command.c - ProcFamily operations: validation, authorization, then the registry. */
#include "command.h"

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procd/status.h"
#include "trackers/util.h"

#define MAX_SURVIVORS_NAMED 32

static procd_status need_root(const pd_caller *who, const char *op, procd_error *err)
{
        if (who->uid == 0)
                return PROCD_OK;
        return pd_error_set(err, PROCD_E_PERMISSION, "%s: only root may do this (caller uid %u)", op,
                            (unsigned) who->uid);
}

/* Whether pid is procd itself or one of its ancestors (registering it would make procd a
 * member of a family it may kill or freeze). */
static bool holds_procd(pid_t pid)
{
        pid_t p = getpid();
        for (int depth = 0; depth < 4096 && p > 1; depth++) {
                if (p == pid)
                        return true;
                if (pd_proc_ppid(p, &p) < 0)
                        break;
        }
        return false;
}

/* Registered subfamily whose root is pid (the tracking calls never touch the root family). */
static procd_status find_subfamily(pd_commands *cm, pid_t pid, pd_family **out, procd_error *err)
{
        if (pid < 0 || pid == 1)
                return pd_error_set(err, PROCD_E_BAD_ROOT_PID, "bad root pid %d", (int) pid);
        pd_family *f = pd_registry_find(cm->reg, pid);
        if (f && !f->parent)
                return pd_error_set(err, PROCD_E_ROOT_FAMILY, "pid %d is the root family", (int) pid);
        if (!f)
                return pd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "no family with root pid %d", (int) pid);
        *out = f;
        return PROCD_OK;
}

/* Any family (0 = the root family). */
static procd_status find_family(pd_commands *cm, pid_t pid, pd_family **out, procd_error *err)
{
        if (pid < 0 || pid == 1)
                return pd_error_set(err, PROCD_E_BAD_ROOT_PID, "bad root pid %d", (int) pid);
        pd_family *f = pd_registry_find(cm->reg, pid);
        if (!f)
                return pd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "no family with root pid %d", (int) pid);
        if (!f->tf)
                return pd_error_set(err, PROCD_E_FAMILY_NOT_FOUND,
                                    "the root family (pid %d) has no trackable root process", (int) f->root_pid);
        *out = f;
        return PROCD_OK;
}

static uid_t family_owner(pd_family *f)
{
        uint64_t start;
        uid_t uid;
        if (tr_pid_start_ticks(f->root_pid, &start) == 0 && start == f->root_start_ticks &&
            pd_proc_uid(f->root_pid, &uid) == 0)
                f->root_uid = uid;
        return f->root_uid;
}

static procd_status may_act_on(const pd_caller *who, pd_family *f, const char *op, procd_error *err)
{
        if (who->uid == 0)
                return PROCD_OK;
        uid_t owner = family_owner(f);
        if (owner == who->uid)
                return PROCD_OK;
        return pd_error_set(err, PROCD_E_PERMISSION, "%s: family %d belongs to uid %u, caller is uid %u", op,
                            (int) f->root_pid, (unsigned) owner, (unsigned) who->uid);
}

/* Suspend/continue/kill act on a family and its subfamilies, never on the root family
 * (it holds procd and its parent). */
static procd_status find_actionable(pd_commands *cm, const pd_caller *who, pid_t pid, const char *op,
                                    pd_family **out, procd_error *err)
{
        if (pid == 0)
                return pd_error_set(err, PROCD_E_ROOT_FAMILY, "%s: refusing the root family (it holds procd)", op);
        procd_status s = find_subfamily(cm, pid, out, err);
        if (s != PROCD_OK)
                return s;
        return may_act_on(who, *out, op, err);
}

procd_status pd_cmd_register_subfamily(pd_commands *cm, const pd_caller *who, pid_t root_pid, pid_t watcher_pid,
                                       uint32_t interval, procd_error *err)
{
        procd_status s = need_root(who, "RegisterSubfamily", err);
        if (s != PROCD_OK)
                return s;
        if (root_pid <= 1)
                return pd_error_set(err, PROCD_E_BAD_ROOT_PID, "bad root pid %d (must be > 1)", (int) root_pid);
        if (watcher_pid < 0)
                return pd_error_set(err, PROCD_E_BAD_WATCHER_PID, "bad watcher pid %d", (int) watcher_pid);
        if (interval == 0 || interval > PD_MAX_INTERVAL_SEC)
                return pd_error_set(err, PROCD_E_BAD_INTERVAL, "bad snapshot interval %u s (1..%u)", interval,
                                    PD_MAX_INTERVAL_SEC);
        if (pd_registry_find(cm->reg, root_pid))
                return pd_error_set(err, PROCD_E_ALREADY_REGISTERED, "pid %d already roots a family", (int) root_pid);
        if (holds_procd(root_pid))
                return pd_error_set(err, PROCD_E_BAD_ROOT_PID, "pid %d is procd or one of its ancestors",
                                    (int) root_pid);
        tr_error terr = { 0 };
        bool bad_watcher = false;
        pd_family *f = NULL;
        int k = pd_registry_register(cm->reg, root_pid, watcher_pid, interval, &f, &bad_watcher, &terr);
        if (k < 0) {
                if (bad_watcher)
                        return pd_error_set(err, PROCD_E_BAD_WATCHER_PID, "%s", terr.msg);
                if (k == -ESRCH)
                        return pd_error_set(err, PROCD_E_BAD_ROOT_PID, "%s", terr.msg);
                return pd_error_set(err, PROCD_E_INTERNAL, "registering %d: %s", (int) root_pid, terr.msg);
        }
        g_info("registered family %d (watcher %d, interval %u s, parent %d)", (int) root_pid, (int) watcher_pid,
               interval, (int) f->parent->root_pid);
        return PROCD_OK;
}

static bool cgroup_path_ok(const char *p)
{
        if (!p || p[0] != '/' || strlen(p) > PD_MAX_CGROUP_LEN)
                return false;
        for (const char *c = p; *c; c++)
                if ((unsigned char) *c < 0x20)
                        return false;
        /* no "." or ".." component */
        const char *s = p;
        while (*s) {
                while (*s == '/')
                        s++;
                const char *e = strchrnul(s, '/');
                size_t n = (size_t) (e - s);
                if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                        return false;
                s = e;
        }
        return true;
}

procd_status pd_cmd_track_cgroup(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *cgroup,
                                 procd_error *err)
{
        procd_status s = need_root(who, "TrackFamilyViaCgroup", err);
        pd_family *f = NULL;
        if (s == PROCD_OK)
                s = find_subfamily(cm, root_pid, &f, err);
        if (s != PROCD_OK)
                return s;
        if (!cgroup_path_ok(cgroup) || strcmp(cgroup, "/") == 0)
                return pd_error_set(err, PROCD_E_BAD_CGROUP,
                                    "bad cgroup path (absolute, no '.'/'..', not '/', at most %d bytes)",
                                    PD_MAX_CGROUP_LEN);
        tr_hierarchies hs;
        /* never accept a cgroup that holds procd: acting on it would hit procd */
        if (tr_hierarchies_discover(&hs, NULL) >= 0)
                for (int i = 0; i < hs.n; i++)
                        if (tr_cgroup_holds_self(&hs, i, cgroup))
                                return pd_error_set(err, PROCD_E_BAD_CGROUP, "cgroup %s holds procd itself", cgroup);
        tr_error terr = { 0 };
        int k = pd_registry_track_cgroup(cm->reg, f, cgroup, &terr);
        if (k < 0)
                return pd_error_set(err, PROCD_E_BAD_CGROUP, "cgroup %s: %s", cgroup, terr.msg);
        g_info("family %d tracked via cgroup %s", (int) root_pid, cgroup);
        return PROCD_OK;
}

procd_status pd_cmd_track_environment(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *marker,
                                      procd_error *err)
{
        procd_status s = need_root(who, "TrackFamilyViaEnvironment", err);
        pd_family *f = NULL;
        if (s == PROCD_OK)
                s = find_subfamily(cm, root_pid, &f, err);
        if (s != PROCD_OK)
                return s;
        const char *eq = marker ? strchr(marker, '=') : NULL;
        if (!eq || eq == marker || strlen(marker) > PD_MAX_MARKER_LEN)
                return pd_error_set(err, PROCD_E_BAD_ARGUMENT, "bad environment marker (NAME=VALUE, at most %d bytes)",
                                    PD_MAX_MARKER_LEN);
        tr_error terr = { 0 };
        if (pd_registry_track_environment(cm->reg, f, marker, &terr) < 0)
                return pd_error_set(err, PROCD_E_INTERNAL, "environment tracking: %s", terr.msg);
        return PROCD_OK;
}

procd_status pd_cmd_track_login(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *login,
                                procd_error *err)
{
        procd_status s = need_root(who, "TrackFamilyViaLogin", err);
        pd_family *f = NULL;
        if (s == PROCD_OK)
                s = find_subfamily(cm, root_pid, &f, err);
        if (s != PROCD_OK)
                return s;
        if (!login || !*login || strlen(login) > PD_MAX_LOGIN_LEN)
                return pd_error_set(err, PROCD_E_BAD_ARGUMENT, "bad login name");
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwnam_r(login, &pw, buf, sizeof buf, &res) != 0 || !res)
                return pd_error_set(err, PROCD_E_BAD_ARGUMENT, "no such user: %s", login);
        if (pw.pw_uid == 0)
                return pd_error_set(err, PROCD_E_BAD_ARGUMENT, "refusing to track every process of root");
        tr_error terr = { 0 };
        if (pd_registry_track_login(cm->reg, f, login, pw.pw_uid, &terr) < 0)
                return pd_error_set(err, PROCD_E_INTERNAL, "login tracking: %s", terr.msg);
        return PROCD_OK;
}

procd_status pd_cmd_track_allocated_group(pd_commands *cm, const pd_caller *who, pid_t root_pid, gid_t *gid_out,
                                          procd_error *err)
{
        procd_status s = need_root(who, "TrackFamilyViaAllocatedGroup", err);
        pd_family *f = NULL;
        if (s == PROCD_OK)
                s = find_subfamily(cm, root_pid, &f, err);
        if (s != PROCD_OK)
                return s;
        if (f->by_gid && f->gid_allocated) {
                *gid_out = f->gid;
                return PROCD_OK;
        }
        if (cm->gid_max < cm->gid_min || cm->gid_min == 0)
                return pd_error_set(err, PROCD_E_NO_GID, "no --gid-range configured");
        for (gid_t g = cm->gid_min; g <= cm->gid_max && g >= cm->gid_min; g++) {
                if (pd_registry_gid_in_use(cm->reg, g))
                        continue;
                tr_error terr = { 0 };
                if (pd_registry_track_gid(cm->reg, f, g, true, &terr) < 0)
                        return pd_error_set(err, PROCD_E_INTERNAL, "gid tracking: %s", terr.msg);
                *gid_out = g;
                return PROCD_OK;
        }
        return pd_error_set(err, PROCD_E_NO_GID, "every gid of %u-%u is in use", (unsigned) cm->gid_min,
                            (unsigned) cm->gid_max);
}

procd_status pd_cmd_track_associated_group(pd_commands *cm, const pd_caller *who, pid_t root_pid, gid_t gid,
                                           procd_error *err)
{
        procd_status s = need_root(who, "TrackFamilyViaAssociatedGroup", err);
        pd_family *f = NULL;
        if (s == PROCD_OK)
                s = find_subfamily(cm, root_pid, &f, err);
        if (s != PROCD_OK)
                return s;
        if (gid == 0 || gid == (gid_t) -1)
                return pd_error_set(err, PROCD_E_BAD_ARGUMENT, "bad gid %u", (unsigned) gid);
        tr_error terr = { 0 };
        if (pd_registry_track_gid(cm->reg, f, gid, false, &terr) < 0)
                return pd_error_set(err, PROCD_E_INTERNAL, "gid tracking: %s", terr.msg);
        return PROCD_OK;
}

procd_status pd_cmd_get_usage(pd_commands *cm, const pd_caller *who, pid_t pid, tr_usage *out, procd_error *err)
{
        pd_family *f = NULL;
        procd_status s = find_family(cm, pid, &f, err);
        if (s != PROCD_OK)
                return s;
        tr_error terr = { 0 };
        if (pd_registry_ensure_fresh(cm->reg, f, &terr) < 0)
                return pd_error_set(err, PROCD_E_INTERNAL, "snapshot: %s", terr.msg);
        tr_usage_init(out);
        if (tr_family_usage(f->tf, out, &terr) < 0)
                return pd_error_set(err, PROCD_E_INTERNAL, "usage of family %d: %s", (int) f->root_pid, terr.msg);
        return PROCD_OK;
}

procd_status pd_cmd_signal_process(pd_commands *cm, const pd_caller *who, pid_t pid, int sig, procd_error *err)
{
        if (pid <= 1)
                return pd_error_set(err, PROCD_E_BAD_ARGUMENT, "refusing to signal pid %d", (int) pid);
        if (sig < 1 || sig > SIGRTMAX)
                return pd_error_set(err, PROCD_E_BAD_ARGUMENT, "bad signal %d (1..%d)", sig, SIGRTMAX);
        if (pid == getpid())
                return pd_error_set(err, PROCD_E_PERMISSION, "refusing to signal procd itself");
        uint64_t start;
        if (tr_pid_start_ticks(pid, &start) < 0)
                return pd_error_set(err, PROCD_E_PROCESS_NOT_FOUND, "no process %d", (int) pid);
        pd_family *f = pd_registry_family_of(cm->reg, pid);
        if (!f || !f->parent)
                return pd_error_set(err, PROCD_E_NOT_IN_FAMILY, "process %d is in no registered family%s", (int) pid,
                                    f ? " (only in the root family)" : "");
        procd_status s = may_act_on(who, f, "SignalProcess", err);
        if (s != PROCD_OK)
                return s;
        int k = tr_safe_kill(pid, start, sig);
        if (k == -ESRCH)
                return pd_error_set(err, PROCD_E_PROCESS_NOT_FOUND, "process %d is gone", (int) pid);
        if (k < 0)
                return pd_error_set(err, k == -EPERM ? PROCD_E_PERMISSION : PROCD_E_INTERNAL, "signal %d to %d: %s",
                                    sig, (int) pid, strerror(-k));
        return PROCD_OK;
}

static void mark_stale(GPtrArray *fams)
{
        for (guint i = 0; i < fams->len; i++)
                ((pd_family *) fams->pdata[i])->updated_usec = 0;
}

procd_status pd_cmd_suspend_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        pd_family *f = NULL;
        procd_status s = find_actionable(cm, who, pid, "SuspendFamily", &f, err);
        if (s != PROCD_OK)
                return s;
        g_autoptr(GPtrArray) fams = g_ptr_array_new();
        pd_registry_subtree(f, fams);
        pd_registry_ensure_fresh(cm->reg, f, NULL);
        for (guint i = 0; i < fams->len; i++) {
                pd_family *c = fams->pdata[i];
                tr_freeze_state reached = TR_THAWED;
                tr_error terr = { 0 };
                if (tr_family_freeze(c->tf, cm->freeze_timeout_usec, &reached, &terr) < 0)
                        return pd_error_set(err, PROCD_E_INTERNAL, "suspending family %d: %s", (int) c->root_pid,
                                            terr.msg);
        }
        return PROCD_OK;
}

procd_status pd_cmd_continue_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        pd_family *f = NULL;
        procd_status s = find_actionable(cm, who, pid, "ContinueFamily", &f, err);
        if (s != PROCD_OK)
                return s;
        g_autoptr(GPtrArray) fams = g_ptr_array_new();
        pd_registry_subtree(f, fams);
        procd_status first = PROCD_OK;
        /* parents first; go on past a failure so nothing stays stopped by our hand */
        for (guint i = fams->len; i-- > 0;) {
                pd_family *c = fams->pdata[i];
                tr_freeze_state reached = TR_THAWED;
                tr_error terr = { 0 };
                if (tr_family_thaw(c->tf, cm->freeze_timeout_usec, &reached, &terr) < 0 && first == PROCD_OK)
                        first = pd_error_set(err, PROCD_E_INTERNAL, "continuing family %d: %s", (int) c->root_pid,
                                             terr.msg);
        }
        return first;
}

/* One kill round over f's subtree (subfamilies first), each family bounded by bound_usec.
 * PROCD_OK when all are empty; PROCD_E_UNKILLABLE naming survivors; INTERNAL on failure. */
static procd_status kill_round(pd_commands *cm, pd_family *f, pid_t pid, uint64_t bound_usec, procd_error *err)
{
        g_autoptr(GPtrArray) fams = g_ptr_array_new();
        pd_registry_subtree(f, fams);
        pd_registry_ensure_fresh(cm->reg, f, NULL);
        char named[400] = "";
        size_t off = 0, n_left = 0;
        procd_status first = PROCD_OK;
        for (guint i = 0; i < fams->len; i++) {
                pd_family *c = fams->pdata[i];
                tr_kill_result res = { 0 };
                tr_error terr = { 0 };
                int k = tr_family_kill(c->tf, bound_usec, &res, &terr);
                if (k < 0 && first == PROCD_OK)
                        first = pd_error_set(err, PROCD_E_INTERNAL, "killing family %d: %s", (int) c->root_pid,
                                             terr.msg);
                if (k >= 0 && !res.empty) {
                        for (size_t j = 0; j < res.survivors.n; j++, n_left++) {
                                if (n_left >= MAX_SURVIVORS_NAMED)
                                        continue;
                                int w = snprintf(named + off, sizeof named > off ? sizeof named - off : 0, "%s%d",
                                                 off ? " " : "", (int) res.survivors.pids[j]);
                                if (w > 0)
                                        off += (size_t) w;
                        }
                        if (res.survivors.n == 0)
                                n_left++; /* not empty, nobody named: still a failure */
                }
                tr_kill_result_free(&res);
        }
        mark_stale(fams);
        if (f->parent)
                f->parent->updated_usec = 0;
        if (first != PROCD_OK)
                return first;
        if (n_left)
                return pd_error_set(err, PROCD_E_UNKILLABLE, "%zu process(es) of family %d would not die: %s%s",
                                    n_left, (int) pid, named[0] ? named : "(not named)",
                                    n_left > MAX_SURVIVORS_NAMED ? " ..." : "");
        return PROCD_OK;
}

procd_status pd_cmd_kill_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        pd_family *f = NULL;
        procd_status s = find_actionable(cm, who, pid, "KillFamily", &f, err);
        if (s != PROCD_OK)
                return s;
        return kill_round(cm, f, pid, cm->kill_timeout_usec, err);
}

/* KillFamily from the main loop: short rounds, the loop (other clients, watchers) runs
 * between them. */
struct pd_kill_job {
        pd_commands *cm;
        pid_t pid;
        uint64_t root_start;
        uint64_t deadline_usec;
        guint source;
        pd_kill_done_fn done;
        void *userdata;
};

static void kill_job_finish(pd_kill_job *j, procd_status s, const procd_error *err)
{
        j->cm->pending_kills = g_slist_remove(j->cm->pending_kills, j);
        if (j->source)
                g_source_remove(j->source);
        j->done(s, err, j->userdata);
        g_free(j);
}

static gboolean kill_job_round(gpointer data)
{
        pd_kill_job *j = data;
        j->source = 0;
        procd_error err = { 0 };
        pd_family *f = pd_registry_find(j->cm->reg, j->pid);
        if (!f || f->root_start_ticks != j->root_start) {
                pd_error_set(&err, PROCD_E_FAMILY_NOT_FOUND, "family %d was unregistered while being killed",
                             (int) j->pid);
                kill_job_finish(j, err.status, &err);
                return G_SOURCE_REMOVE;
        }
        procd_status s = kill_round(j->cm, f, j->pid, PD_KILL_ROUND_USEC, &err);
        if (s == PROCD_E_UNKILLABLE && tr_now_usec() < j->deadline_usec) {
                j->source = g_timeout_add(PD_KILL_ROUND_PAUSE_MS, kill_job_round, j);
                return G_SOURCE_REMOVE;
        }
        kill_job_finish(j, s, &err);
        return G_SOURCE_REMOVE;
}

void pd_cmd_kill_family_async(pd_commands *cm, const pd_caller *who, pid_t pid, pd_kill_done_fn done, void *userdata)
{
        procd_error err = { 0 };
        pd_family *f = NULL;
        procd_status s = find_actionable(cm, who, pid, "KillFamily", &f, &err);
        if (s != PROCD_OK) {
                done(s, &err, userdata);
                return;
        }
        if (g_slist_length(cm->pending_kills) >= PD_MAX_PENDING_KILLS) {
                pd_error_set(&err, PROCD_E_INTERNAL, "%d KillFamily calls in progress: try again later",
                             PD_MAX_PENDING_KILLS);
                done(err.status, &err, userdata);
                return;
        }
        pd_kill_job *j = g_new0(pd_kill_job, 1);
        j->cm = cm;
        j->pid = pid;
        j->root_start = f->root_start_ticks;
        j->deadline_usec = tr_now_usec() + cm->kill_timeout_usec;
        j->done = done;
        j->userdata = userdata;
        cm->pending_kills = g_slist_prepend(cm->pending_kills, j);
        kill_job_round(j); /* the first round now: most families are empty after it */
}

void pd_cmd_cancel_pending(pd_commands *cm)
{
        while (cm->pending_kills) {
                procd_error err = { 0 };
                pd_error_set(&err, PROCD_E_INTERNAL, "procd is shutting down");
                kill_job_finish(cm->pending_kills->data, err.status, &err);
        }
}

procd_status pd_cmd_unregister_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        if (pid == 0)
                return pd_error_set(err, PROCD_E_ROOT_FAMILY, "cannot unregister the root family");
        pd_family *f = NULL;
        procd_status s = find_subfamily(cm, pid, &f, err);
        if (s == PROCD_OK)
                s = may_act_on(who, f, "UnregisterFamily", err);
        if (s != PROCD_OK)
                return s;
        pd_registry_unregister(cm->reg, f);
        g_info("unregistered family %d", (int) pid);
        return PROCD_OK;
}

procd_status pd_cmd_snapshot(pd_commands *cm, const pd_caller *who, procd_error *err)
{
        procd_status s = need_root(who, "Snapshot", err);
        if (s != PROCD_OK)
                return s;
        tr_error terr = { 0 };
        if (pd_registry_snapshot(cm->reg, &terr) < 0)
                return pd_error_set(err, PROCD_E_INTERNAL, "snapshot: %s", terr.msg);
        return PROCD_OK;
}

static int fill_info(pd_commands *cm, pd_family *f, procd_family_info *fi)
{
        memset(fi, 0, sizeof *fi);
        fi->root_pid = f->root_pid;
        fi->root_start_ticks = f->root_start_ticks;
        fi->watcher_pid = f->watcher_pid;
        fi->parent_root_pid = f->parent ? f->parent->root_pid : 0;
        pd_family_tracking(f, fi->tracking, sizeof fi->tracking);
        snprintf(fi->source, sizeof fi->source, "%s", pd_family_source(f));
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        pd_registry_members(cm->reg, f, &m, NULL);
        tr_pidset_normalize(&m);
        if (m.n) {
                fi->members = malloc(m.n * sizeof(pid_t));
                if (!fi->members)
                        return -ENOMEM;
                memcpy(fi->members, m.pids, m.n * sizeof(pid_t));
                fi->n_members = m.n;
        }
        return 0;
}

procd_status pd_cmd_dump(pd_commands *cm, const pd_caller *who, pid_t pid, procd_family_info **out, size_t *n,
                         procd_error *err)
{
        *out = NULL;
        *n = 0;
        g_autoptr(GPtrArray) fams = g_ptr_array_new();
        if (pid == 0) {
                pd_registry_all(cm->reg, fams);
        } else {
                if (pid < 0 || pid == 1)
                        return pd_error_set(err, PROCD_E_BAD_ROOT_PID, "bad root pid %d", (int) pid);
                pd_family *f = pd_registry_find(cm->reg, pid);
                if (!f)
                        return pd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "no family with root pid %d", (int) pid);
                pd_registry_subtree(f, fams);
                /* the family itself first, then its subfamilies */
                g_ptr_array_remove_index(fams, fams->len - 1);
                g_ptr_array_insert(fams, 0, f);
        }
        procd_family_info *infos = calloc(fams->len ? fams->len : 1, sizeof *infos);
        if (!infos)
                return pd_error_set(err, PROCD_E_INTERNAL, "out of memory");
        for (guint i = 0; i < fams->len; i++) {
                if (fill_info(cm, fams->pdata[i], &infos[i]) < 0) {
                        procd_family_info_free(infos, i + 1);
                        return pd_error_set(err, PROCD_E_INTERNAL, "out of memory");
                }
        }
        *out = infos;
        *n = fams->len;
        return PROCD_OK;
}

procd_status pd_cmd_quit(pd_commands *cm, const pd_caller *who, procd_error *err)
{
        procd_status s = need_root(who, "Quit", err);
        if (s != PROCD_OK)
                return s;
        g_message("quit requested by uid %u pid %d", (unsigned) who->uid, (int) who->pid);
        if (cm->quit)
                cm->quit(cm->quit_data);
        return PROCD_OK;
}
