/* command.c - ProcFamily operations: validation, authorization, then the registry. */
#include "command.h"

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "procd/core/command-jobs.h"
#include "procd/core/audit.h"
#include "procd/core/command-query.h"
#include "procd/core/events.h"
#include "procd/core/family-usage.h"
#include "procd/wire.h"
#include "trackers/util.h"

#define MAX_SURVIVORS_NAMED 32

static procd_status need_root(const pd_caller *who, const char *op, procd_error *err)
{
        if (who->uid == 0)
                return PROCD_OK;
        return procd_error_set(err, PROCD_E_PERMISSION, "%s: only root may do this (caller uid %u)", op,
                            (unsigned) who->uid);
}

/* Whether pid is procd itself or one of its ancestors (registering it would make procd a
 * member of a family it may kill or freeze). */
static bool holds_procd_started(pid_t pid, uint64_t theirs)
{
        pid_t p = getpid();
        if (pid == p)
                return true;
        for (int depth = 0; depth < 4096 && p > 1; depth++) {
                if (p == pid)
                        return true;
                tr_proc st;
                if (tr_proc_stat_read(p, &st) < 0)
                        break;
                /* p and every ancestor of it started no later than p: when p is older than
                 * pid, pid is none of them (the walk stops at once for a younger root) */
                if (st.start_ticks < theirs)
                        break;
                p = st.ppid;
        }
        return false;
}

bool pd_holds_procd(pid_t pid)
{
        uint64_t theirs = 0;
        if (pid == getpid())
                return true;
        if (pid <= 0 || tr_pid_start_ticks(pid, &theirs) < 0)
                return false; /* gone: no ancestor of a live procd */
        return holds_procd_started(pid, theirs);
}

/* Registered subfamily whose root is pid (the tracking calls never touch the root family). */
static procd_status find_subfamily(pd_commands *cm, pid_t pid, pd_family **out, procd_error *err)
{
        if (pid < 0 || pid == 1)
                return procd_error_set(err, PROCD_E_BAD_ROOT_PID, "bad root pid %d", (int) pid);
        pd_family *f = pd_registry_find(cm->reg, pid);
        if (f && !f->parent)
                return procd_error_set(err, PROCD_E_ROOT_FAMILY, "pid %d is the root family", (int) pid);
        if (!f)
                return procd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "no family with root pid %d", (int) pid);
        *out = f;
        return PROCD_OK;
}

/* Any family (0 = the root family). */
static procd_status find_family(pd_commands *cm, pid_t pid, pd_family **out, procd_error *err)
{
        if (pid < 0 || pid == 1)
                return procd_error_set(err, PROCD_E_BAD_ROOT_PID, "bad root pid %d", (int) pid);
        pd_family *f = pd_registry_find(cm->reg, pid);
        if (!f)
                return procd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "no family with root pid %d", (int) pid);
        if (!f->tf)
                return procd_error_set(err, PROCD_E_FAMILY_NOT_FOUND,
                                    "the root family (pid %d) has no trackable root process", (int) f->root_pid);
        *out = f;
        return PROCD_OK;
}

static uid_t family_owner(pd_family *f)
{
        uid_t uid;
        /* the uid is read, then the start time checked: a reused pid never lends its uid */
        if (tr_proc_uid_checked(f->root_pid, f->root_start_ticks, &uid) == 0)
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
        return procd_error_set(err, PROCD_E_PERMISSION, "%s: family %d belongs to uid %u, caller is uid %u", op,
                            (int) f->root_pid, (unsigned) owner, (unsigned) who->uid);
}

/* Suspend/continue/kill act on a family and on every subfamily below it: a non-root
 * caller must own each of them (owning the top family does not lend a say over a
 * subfamily another uid owns). */
static procd_status may_act_on_subtree(const pd_caller *who, pd_family *f, const char *op, procd_error *err)
{
        if (who->uid == 0)
                return PROCD_OK;
        g_autoptr(GPtrArray) fams = g_ptr_array_new();
        pd_registry_subtree(f, fams);
        for (guint i = fams->len; i-- > 0;) { /* f itself first (post-order: last) */
                procd_status s = may_act_on(who, fams->pdata[i], op, err);
                if (s != PROCD_OK)
                        return s;
        }
        return PROCD_OK;
}

/* Suspend/continue/kill act on a family and its subfamilies, never on the root family
 * (it holds procd and its parent). */
static procd_status find_actionable(pd_commands *cm, const pd_caller *who, pid_t pid, const char *op,
                                    pd_family **out, procd_error *err)
{
        if (pid == 0)
                return procd_error_set(err, PROCD_E_ROOT_FAMILY, "%s: refusing the root family (it holds procd)", op);
        procd_status s = find_subfamily(cm, pid, out, err);
        if (s != PROCD_OK)
                return s;
        return may_act_on_subtree(who, *out, op, err);
}

/* Whether f has no member of its own now (a fresh snapshot for a /proc family). */
static bool family_empty(pd_commands *cm, pd_family *f)
{
        if (f->proc_tracked && pd_registry_snapshot(cm->reg, NULL) < 0)
                return false;
        _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
        if (pd_registry_members(cm->reg, f, &m, NULL) < 0)
                return false;
        return m.n == 0;
}

/* Whether pid lies inside the root family's tree, as condor_procd's "a tracked member"
 * (its root's descendants, or a member procd already knows of, e.g. an orphan seen in a
 * snapshot or a process in a family's cgroup).  A root family rooted at pid 1 (procd's
 * parent is init) holds every process, as condor_procd's would. */
static bool in_root_tree(pd_commands *cm, pid_t pid, const tr_proc *self)
{
        pd_family *root = pd_registry_root(cm->reg);
        if (root->root_pid <= 1)
                return true;
        if (pid == root->root_pid)
                return self->start_ticks == root->root_start_ticks;
        if (self->start_ticks < root->root_start_ticks)
                return pd_registry_family_of(cm->reg, pid) != NULL; /* older than the root */
        tr_proc p = *self; /* pid's own stat, read by the caller: the walk starts at its parent */
        for (int depth = 0; depth < 4096 && p.ppid > 1; depth++) {
                pid_t cur = p.ppid;
                if (tr_proc_stat_read(cur, &p) < 0)
                        break;
                if (cur == root->root_pid)
                        return p.start_ticks == root->root_start_ticks;
                if (p.start_ticks < root->root_start_ticks)
                        break; /* older than the root: none of its ancestors is the root */
        }
        return pd_registry_family_of(cm->reg, pid) != NULL;
}

procd_status pd_cmd_register_subfamily(pd_commands *cm, const pd_caller *who, pid_t root_pid, pid_t watcher_pid,
                                       uint32_t interval, procd_error *err)
{
        return pd_cmd_register_subfamily_flags(cm, who, root_pid, watcher_pid, interval, 0, err);
}

/* RegisterSubfamily(WithFlags), and RegisterJob when j->cgroup is set (its cgroup and job
 * checked by the caller): *f the family, *in_cgroup whether it is tracked through j->cgroup
 * already. */
static procd_status register_impl(pd_commands *cm, const pd_caller *who, const pd_job_registration *j,
                                  pd_family **fout, bool *in_cgroup, procd_error *err)
{
        pid_t root_pid = j->root_pid, watcher_pid = j->watcher_pid;
        uint32_t interval = j->interval_sec, flags = j->flags;
        procd_status s = need_root(who, j->cgroup ? "RegisterJob" : "RegisterSubfamily", err);
        if (s != PROCD_OK)
                return s;
        if (flags & ~(uint32_t) PROCD_REGISTER_KILL_ON_WATCHER_EXIT)
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "unknown RegisterSubfamily flags 0x%x", flags);
        if ((flags & PROCD_REGISTER_KILL_ON_WATCHER_EXIT) && watcher_pid == 0)
                return procd_error_set(err, PROCD_E_BAD_WATCHER_PID, "kill-on-watcher-exit needs a watcher");
        if (root_pid <= 1)
                return procd_error_set(err, PROCD_E_BAD_ROOT_PID, "bad root pid %d (must be > 1)", (int) root_pid);
        if (watcher_pid < 0 || watcher_pid == 1 || watcher_pid == getpid())
                return procd_error_set(err, PROCD_E_BAD_WATCHER_PID, "bad watcher pid %d%s", (int) watcher_pid,
                                    watcher_pid == 1      ? " (init never exits)"
                                    : watcher_pid > 1     ? " (procd itself)"
                                                          : "");
        if (interval == 0 || interval > PD_MAX_INTERVAL_SEC)
                return procd_error_set(err, PROCD_E_BAD_INTERVAL, "bad snapshot interval %u s (1..%u)", interval,
                                    PD_MAX_INTERVAL_SEC);
        /* identity is pid + start time: a family whose root was an earlier process with
         * this pid is stale.  When nothing of it is left it gives way (folded into its
         * parent); with members left it stays, so that its owner can still kill or
         * unregister it. */
        /* the root's stat, read once here for every check below and handed to the registry
         * (which reads it once more after moving the root) */
        tr_proc rp;
        if (tr_proc_stat_read(root_pid, &rp) < 0)
                return who->confined ? procd_error_set(err, PROCD_E_NOT_IN_FAMILY,
                                                       "process %d is not inside the root family's tree", (int) root_pid)
                                     : procd_error_set(err, PROCD_E_BAD_ROOT_PID, "root pid %d: no such process",
                                                       (int) root_pid);
        if (who->confined && !in_root_tree(cm, root_pid, &rp))
                return procd_error_set(err, PROCD_E_NOT_IN_FAMILY, "process %d is not inside the root family's tree",
                                    (int) root_pid);
        pd_family *old = pd_registry_find(cm->reg, root_pid);
        if (old && (!old->parent || rp.start_ticks == old->root_start_ticks))
                return procd_error_set(err, PROCD_E_ALREADY_REGISTERED, "pid %d already roots a family", (int) root_pid);
        pid_t tgid = 0;
        if (tr_proc_is_thread(root_pid) && tr_proc_tgid(root_pid, &tgid) == 0 && tgid != root_pid)
                return procd_error_set(err, PROCD_E_BAD_ROOT_PID, "pid %d is a thread of process %d, not a process",
                                    (int) root_pid, (int) tgid);
        if (holds_procd_started(root_pid, rp.start_ticks))
                return procd_error_set(err, PROCD_E_BAD_ROOT_PID, "pid %d is procd or one of its ancestors",
                                    (int) root_pid);
        if (old) {
                if (!family_empty(cm, old))
                        return procd_error_set(err, PROCD_E_ALREADY_REGISTERED,
                                            "pid %d roots a family of an earlier process with this pid that still has "
                                            "members: kill or unregister it first",
                                            (int) root_pid);
                g_message("pid %d was reused: the empty family of its earlier process is unregistered", (int) root_pid);
                pd_registry_unregister(cm->reg, old);
        }
        tr_error terr = { 0 };
        bool bad_watcher = false;
        pd_family *f = NULL;
        /* the job is named before the family is registered: the "registered" event carries it */
        if (j->cgroup)
                pd_cmd_record_job(cm, root_pid, rp.start_ticks, j->job_id, j->owner_uid);
        /* the flag is set before the family is first saved (one state write, not two) */
        unsigned fl = (flags & PROCD_REGISTER_KILL_ON_WATCHER_EXIT) ? PD_FAMILY_KILL_ON_WATCHER_EXIT : 0;
        int k = pd_registry_register_in(cm->reg, root_pid, &rp, watcher_pid, interval, j->cgroup, fl, &f, in_cgroup,
                                        &bad_watcher, &terr);
        if (k < 0 && j->cgroup)
                pd_cmd_forget_job(cm, root_pid);
        if (k == -EMFILE || k == -ENFILE) {
                /* procd's own limit, not the caller's fault: never BAD_WATCHER_PID for it */
                struct rlimit rl = { 0 };
                (void) getrlimit(RLIMIT_NOFILE, &rl);
                g_warning("registering %d: out of file descriptors (errno %d, %s; %s limit %llu): %s", (int) root_pid,
                          -k, k == -EMFILE ? "EMFILE" : "ENFILE", k == -EMFILE ? "procd's" : "the system's",
                          (unsigned long long) rl.rlim_cur, terr.msg);
                return procd_error_set(err, PROCD_E_INTERNAL, "registering %d: procd is out of file descriptors (%s): %s",
                                       (int) root_pid, k == -EMFILE ? "EMFILE" : "ENFILE", terr.msg);
        }
        if (k < 0) {
                if (bad_watcher)
                        return procd_error_set(err, PROCD_E_BAD_WATCHER_PID, "%s", terr.msg);
                if (k == -ESRCH)
                        return procd_error_set(err, PROCD_E_BAD_ROOT_PID, "%s", terr.msg);
                return procd_error_set(err, PROCD_E_INTERNAL, "registering %d: %s", (int) root_pid, terr.msg);
        }
        pd_registry_cg_touch(cm->reg, f); /* its cgroup's fds: in the bounded awake set */
        *fout = f;
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

procd_status pd_cmd_cgroup_acceptable(pd_commands *cm, const char *cgroup, const pd_family *f, procd_error *err)
{
        if (!cgroup_path_ok(cgroup) || cgroup[strspn(cgroup, "/")] == '\0')
                return procd_error_set(err, PROCD_E_BAD_CGROUP,
                                    "bad cgroup path (absolute, no '.'/'..', not '/', at most %d bytes)",
                                    PD_MAX_CGROUP_LEN);
        /* never accept a cgroup that holds procd: acting on it would hit procd */
        const tr_hierarchies *hs = pd_registry_hierarchies(cm->reg);
        if (tr_cgroup_holds_self_any(hs, cgroup))
                return procd_error_set(err, PROCD_E_BAD_CGROUP, "cgroup %s holds procd itself", cgroup);
        /* a second family on one cgroup: a KillFamily of either would kill both */
        pd_family *other = pd_registry_cgroup_owner(cm->reg, cgroup, f);
        if (other)
                return procd_error_set(err, PROCD_E_BAD_CGROUP, "cgroup %s is family %d's", cgroup, (int) other->root_pid);
        return PROCD_OK;
}

/* Whether path lies strictly below base ("/a/b" below "/a"). */
static bool cgroup_below(const char *path, const char *base)
{
        if (!base || !*base)
                return false;
        size_t n = strlen(base);
        while (n > 1 && base[n - 1] == '/')
                n--;
        if (n == 1) /* "/": no base */
                return false;
        return strncmp(path, base, n) == 0 && path[n] == '/' && path[n + 1 + strspn(path + n + 1, "/")] != '\0';
}

/* Whether who may have family f (NULL: a new one) tracked through cgroup. */
static procd_status cgroup_for(pd_commands *cm, const pd_caller *who, const char *cgroup, const pd_family *f,
                               procd_error *err)
{
        procd_status s = pd_cmd_cgroup_acceptable(cm, cgroup, f, err);
        if (s != PROCD_OK || !who->confined)
                return s;
        const char *famcg = pd_famcg_base(pd_registry_family_cgroups(cm->reg));
        if (!cgroup_below(cgroup, famcg) && !cgroup_below(cgroup, cm->classic_cgroup_base))
                return procd_error_set(err, PROCD_E_BAD_CGROUP,
                                       "cgroup %s is below neither the family cgroup base (%s) nor the classic "
                                       "cgroup base (%s)",
                                       cgroup, famcg ? famcg : "none",
                                       cm->classic_cgroup_base ? cm->classic_cgroup_base : "none");
        return PROCD_OK;
}

static procd_status track_cgroup_impl(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *cgroup,
                                 procd_error *err)
{
        procd_status s = need_root(who, "TrackFamilyViaCgroup", err);
        pd_family *f = NULL;
        if (s == PROCD_OK)
                s = find_subfamily(cm, root_pid, &f, err);
        if (s != PROCD_OK)
                return s;
        s = cgroup_for(cm, who, cgroup, f, err);
        if (s != PROCD_OK)
                return s;
        tr_error terr = { 0 };
        int k = pd_registry_track_cgroup(cm->reg, f, cgroup, &terr);
        if (k < 0)
                return procd_error_set(err, PROCD_E_BAD_CGROUP, "cgroup %s: %s", cgroup, terr.msg);
        g_info("family %d tracked via cgroup %s", (int) root_pid, cgroup);
        return PROCD_OK;
}

static procd_status track_environment_impl(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *marker,
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
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "bad environment marker (NAME=VALUE, at most %d bytes)",
                                    PD_MAX_MARKER_LEN);
        tr_error terr = { 0 };
        if (pd_registry_track_environment(cm->reg, f, marker, &terr) < 0)
                return procd_error_set(err, PROCD_E_INTERNAL, "environment tracking: %s", terr.msg);
        return PROCD_OK;
}

static procd_status track_login_impl(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *login,
                                procd_error *err)
{
        procd_status s = need_root(who, "TrackFamilyViaLogin", err);
        pd_family *f = NULL;
        if (s == PROCD_OK)
                s = find_subfamily(cm, root_pid, &f, err);
        if (s != PROCD_OK)
                return s;
        if (!login || !*login || strlen(login) > PD_MAX_LOGIN_LEN)
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "bad login name");
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwnam_r(login, &pw, buf, sizeof buf, &res) != 0 || !res)
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "no such user: %s", login);
        if (pw.pw_uid == 0)
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "refusing to track every process of root");
        tr_error terr = { 0 };
        if (pd_registry_track_login(cm->reg, f, login, pw.pw_uid, &terr) < 0)
                return procd_error_set(err, PROCD_E_INTERNAL, "login tracking: %s", terr.msg);
        return PROCD_OK;
}

static procd_status track_allocated_group_impl(pd_commands *cm, const pd_caller *who, pid_t root_pid, gid_t *gid_out,
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
                return procd_error_set(err, PROCD_E_NO_GID, "no --gid-range configured");
        for (gid_t g = cm->gid_min; g <= cm->gid_max && g >= cm->gid_min; g++) {
                if (pd_registry_gid_in_use(cm->reg, g))
                        continue;
                tr_error terr = { 0 };
                if (pd_registry_track_gid(cm->reg, f, g, true, &terr) < 0)
                        return procd_error_set(err, PROCD_E_INTERNAL, "gid tracking: %s", terr.msg);
                *gid_out = g;
                return PROCD_OK;
        }
        return procd_error_set(err, PROCD_E_NO_GID, "every gid of %u-%u is in use", (unsigned) cm->gid_min,
                            (unsigned) cm->gid_max);
}

static procd_status track_associated_group_impl(pd_commands *cm, const pd_caller *who, pid_t root_pid, gid_t gid,
                                           procd_error *err)
{
        procd_status s = need_root(who, "TrackFamilyViaAssociatedGroup", err);
        pd_family *f = NULL;
        if (s == PROCD_OK)
                s = find_subfamily(cm, root_pid, &f, err);
        if (s != PROCD_OK)
                return s;
        if (gid == 0 || gid == (gid_t) -1)
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "bad gid %u", (unsigned) gid);
        tr_error terr = { 0 };
        if (pd_registry_track_gid(cm->reg, f, gid, false, &terr) < 0)
                return procd_error_set(err, PROCD_E_INTERNAL, "gid tracking: %s", terr.msg);
        return PROCD_OK;
}

procd_status pd_cmd_get_usage(pd_commands *cm, const pd_caller *who, pid_t pid, unsigned want, tr_usage *out,
                              pd_usage_reading *reading, procd_error *err)
{
        (void) who;
        pd_family *f = NULL;
        tr_usage_init(out);
        /* pid 0 answers even when the root family has no trackable root (procd's parent is
         * PID 1, as under systemd): then its usage is that of every family (family-usage.h) */
        procd_status s = PROCD_OK;
        if (pid != 0 || !(f = pd_registry_find(cm->reg, 0)) || f->tf)
                s = find_family(cm, pid, &f, err);
        if (s != PROCD_OK)
                return s;
        tr_error terr = { 0 };
        if (pd_family_usage(cm->reg, f, want, out, &terr) < 0)
                return procd_error_set(err, PROCD_E_INTERNAL, "usage of family %d: %s", (int) f->root_pid, terr.msg);
        if (reading) {
                if (!cm->meter)
                        cm->meter = pd_usage_meter_new();
                pd_usage_meter_update(cm->meter, f->parent ? f->root_pid : 0, pd_usage_cpu_usec(out),
                                      pd_usage_image_bytes(out), tr_now_usec(), reading);
                if (!out->cpu_usec.available && !out->cpu_user_usec.available && !out->cpu_system_usec.available)
                        reading->percent_cpu_known = false; /* no CPU reading: no percentage either */
        }
        return PROCD_OK;
}

static procd_status signal_process_impl(pd_commands *cm, const pd_caller *who, pid_t pid, int sig, procd_error *err)
{
        if (pid <= 1)
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "refusing to signal pid %d", (int) pid);
        if (sig < 1 || sig > SIGRTMAX)
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "bad signal %d (1..%d)", sig, SIGRTMAX);
        if (pid == getpid() || tr_proc_is_own_thread(pid)) /* procd or one of its threads */
                return procd_error_set(err, PROCD_E_PERMISSION, "refusing to signal procd itself");
        uint64_t start;
        if (tr_pid_start_ticks(pid, &start) < 0)
                return procd_error_set(err, PROCD_E_PROCESS_NOT_FOUND, "no process %d", (int) pid);
        pd_family *f = pd_registry_family_of(cm->reg, pid);
        if (!f || !f->parent)
                return procd_error_set(err, PROCD_E_NOT_IN_FAMILY, "process %d is in no registered family%s", (int) pid,
                                    f ? " (only in the root family)" : "");
        procd_status s = may_act_on(who, f, "SignalProcess", err);
        if (s != PROCD_OK)
                return s;
        /* and, as the kernel would ask of the caller itself, the process must be the
         * caller's (a root-owned helper inside a user's job stays out of the user's reach) */
        uid_t puid = 0;
        if (who->uid != 0 && (tr_proc_uid_checked(pid, start, &puid) < 0 || puid != who->uid))
                return procd_error_set(err, PROCD_E_PERMISSION, "SignalProcess: process %d belongs to uid %u, caller is uid %u",
                                    (int) pid, (unsigned) puid, (unsigned) who->uid);
        int k = tr_safe_kill(pid, start, sig);
        if (k == -ESRCH)
                return procd_error_set(err, PROCD_E_PROCESS_NOT_FOUND, "process %d is gone", (int) pid);
        if (k == -EINVAL) /* a thread id, not a process (tr_safe_kill refuses those) */
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "SignalProcess: %d is a thread id, not a process",
                                    (int) pid);
        if (k < 0)
                return procd_error_set(err, k == -EPERM ? PROCD_E_PERMISSION : PROCD_E_INTERNAL, "signal %d to %d: %s",
                                    sig, (int) pid, strerror(-k));
        return PROCD_OK;
}

static void mark_stale(GPtrArray *fams)
{
        for (guint i = 0; i < fams->len; i++)
                ((pd_family *) fams->pdata[i])->updated_usec = 0;
}

/* One freeze (or thaw) pass over f's subtree, each family bounded by bound_usec.  Freeze:
 * subfamilies first, stops at the first failure.  Thaw: parents first, goes on past a
 * failure so that nothing stays stopped by our hand.  *done: every family reached the
 * state (frozen / thawed). */
static procd_status freeze_round(pd_commands *cm, pd_family *f, bool freeze, uint64_t bound_usec, bool *done,
                                 procd_error *err)
{
        g_autoptr(GPtrArray) fams = g_ptr_array_new();
        pd_registry_subtree(f, fams);
        if (freeze)
                pd_registry_ensure_fresh(cm->reg, f, NULL);
        procd_status first = PROCD_OK;
        *done = true;
        for (guint n = 0; n < fams->len; n++) {
                pd_family *c = fams->pdata[freeze ? n : fams->len - 1 - n];
                tr_freeze_state reached = freeze ? TR_THAWED : TR_FROZEN;
                tr_error terr = { 0 };
                int k = freeze ? tr_family_freeze(c->tf, bound_usec, &reached, &terr)
                               : tr_family_thaw(c->tf, bound_usec, &reached, &terr);
                if (k < 0) {
                        if (first == PROCD_OK)
                                first = procd_error_set(err, PROCD_E_INTERNAL, "%s family %d: %s",
                                                     freeze ? "suspending" : "continuing", (int) c->root_pid, terr.msg);
                        *done = false;
                        if (freeze)
                                break;
                        continue;
                }
                if (reached != (freeze ? TR_FROZEN : TR_THAWED))
                        *done = false;
        }
        return first;
}

/* Remembered (and saved) as asked: a family suspended before a restart is still frozen
 * after it. */
static void mark_frozen(pd_commands *cm, pd_family *f, bool frozen)
{
        g_autoptr(GPtrArray) fams = g_ptr_array_new();
        pd_registry_subtree(f, fams);
        for (guint i = 0; i < fams->len; i++) {
                pd_family *c = fams->pdata[i];
                pd_registry_set_flag(cm->reg, c, PD_FAMILY_FROZEN, frozen);
        }
}

static procd_status suspend_family_impl(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        pd_family *f = NULL;
        procd_status s = find_actionable(cm, who, pid, "SuspendFamily", &f, err);
        if (s != PROCD_OK)
                return s;
        mark_frozen(cm, f, true);
        bool done;
        s = freeze_round(cm, f, true, cm->freeze_timeout_usec, &done, err);
        if (s == PROCD_OK)
                pd_events_family(cm->events, PD_EVENT_FROZEN, f->root_pid);
        return s;
}

static procd_status continue_family_impl(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        pd_family *f = NULL;
        procd_status s = find_actionable(cm, who, pid, "ContinueFamily", &f, err);
        if (s != PROCD_OK)
                return s;
        mark_frozen(cm, f, false);
        bool done;
        s = freeze_round(cm, f, false, cm->freeze_timeout_usec, &done, err);
        if (s == PROCD_OK)
                pd_events_family(cm->events, PD_EVENT_THAWED, f->root_pid);
        return s;
}

/* After the tracker's kill: the root, the members TrackFamilyViaCgroup could not move and,
 * for a /proc family, the members of its last snapshot are killed by pid + start time, so
 * that KillFamily never answers OK while a process procd knew as a member lives (a root
 * moved out of the family's cgroup, a stray, an orphan the kill's own scan missed).  The
 * ones still alive after a short wait (20 ms: this runs in the main loop; the asynchronous
 * KillFamily tries again next round) are appended to survivors. */
static void kill_known(pd_registry *reg, pd_family *f, tr_pidset *survivors)
{
        g_autoptr(GArray) known = g_array_new(FALSE, FALSE, sizeof(pd_ident));
        g_array_append_val(known, ((pd_ident) { f->root_pid, f->root_start_ticks }));
        g_array_append_vals(known, f->strays->data, f->strays->len);
        for (size_t i = 0; f->proc_tracked && i < f->last_members.n; i++) {
                pid_t pid = f->last_members.pids[i];
                uint64_t st = pd_registry_snapshot_start_ticks(reg, pid);
                if (pid != f->root_pid && st)
                        g_array_append_val(known, ((pd_ident) { pid, st }));
        }
        const pd_ident *k = (const pd_ident *) (void *) known->data;
        size_t n = known->len;
        bool any = false;
        for (size_t i = 0; i < n; i++)
                if (k[i].pid != getpid() && tr_safe_kill(k[i].pid, k[i].start_ticks, SIGKILL) == 0)
                        any = true;
        for (int wait_ms = 0; any && wait_ms < 20; wait_ms += 2) {
                any = false;
                for (size_t i = 0; i < n && !any; i++)
                        any = tr_pid_alive_as(k[i].pid, k[i].start_ticks);
                if (any)
                        usleep(2000);
        }
        for (size_t i = 0; i < n; i++) {
                bool listed = false;
                for (size_t j = 0; j < survivors->n && !listed; j++)
                        listed = survivors->pids[j] == k[i].pid;
                if (!listed && tr_pid_alive_as(k[i].pid, k[i].start_ticks))
                        tr_pidset_add(survivors, k[i].pid);
        }
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
                if (k >= 0 && c->parent) {
                        size_t before = res.survivors.n;
                        kill_known(cm->reg, c, &res.survivors);
                        if (res.survivors.n > before)
                                res.empty = false;
                }
                if (k < 0 && first == PROCD_OK)
                        first = procd_error_set(err, PROCD_E_INTERNAL, "killing family %d: %s", (int) c->root_pid,
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
                return procd_error_set(err, PROCD_E_UNKILLABLE, "%zu process(es) of family %d would not die: %s%s",
                                    n_left, (int) pid, named[0] ? named : "(not named)",
                                    n_left > MAX_SURVIVORS_NAMED ? " ..." : "");
        return PROCD_OK;
}

static procd_status kill_family_impl(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        pd_family *f = NULL;
        procd_status s = find_actionable(cm, who, pid, "KillFamily", &f, err);
        if (s != PROCD_OK)
                return s;
        pd_registry_set_flag(cm->reg, f, PD_FAMILY_KILLED, true);
        pid_t root = f->root_pid;
        pd_events_family(cm->events, PD_EVENT_KILLING, root);
        s = kill_round(cm, f, pid, cm->kill_timeout_usec, err);
        if (s == PROCD_E_UNKILLABLE) {
                pd_event e = { .kind = PD_EVENT_UNKILLABLE, .root_pid = root, .message = err ? err->msg : NULL };
                pd_events_emit(cm->events, &e);
        }
        return s;
}

/* KillFamily, SuspendFamily and ContinueFamily from the main loop: short rounds, the loop
 * (other clients, watchers) runs between them.  The family is looked up again (pid + start
 * time) and the caller's right re-checked before every round. */
struct pd_job {
        pd_commands *cm;
        pd_job_kind kind;
        bool unregister; /* KillAndUnregisterFamily: unregistered once the kill is done */
        pd_caller who;
        pid_t pid;
        uint64_t root_start;
        uint64_t deadline_usec;
        guint source;
        pd_job_done_fn done;
        void *userdata;
};

static const char *job_op(pd_job_kind kind, bool unregister)
{
        if (unregister)
                return "KillAndUnregisterFamily";
        return kind == PD_JOB_KILL ? "KillFamily" : kind == PD_JOB_SUSPEND ? "SuspendFamily" : "ContinueFamily";
}

static void unregister_now(pd_commands *cm, pd_family *f);

static pd_family *job_family(pd_job *j);

/* What a finished job tells the subscribers. */
static void job_event(pd_job *j, procd_status s, const procd_error *err)
{
        if (s == PROCD_OK && j->kind != PD_JOB_KILL) {
                pd_events_family(j->cm->events, j->kind == PD_JOB_SUSPEND ? PD_EVENT_FROZEN : PD_EVENT_THAWED, j->pid);
        } else if (s == PROCD_E_UNKILLABLE) {
                pd_event e = { .kind = PD_EVENT_UNKILLABLE, .root_pid = j->pid, .message = err ? err->msg : NULL };
                pd_events_emit(j->cm->events, &e);
        }
}

/* The flag cleared, and for KillAndUnregisterFamily whose kill succeeded the family
 * unregistered (its rights were checked before this round), saved once, then answered. */
static void job_finish(pd_job *j, procd_status s, const procd_error *err)
{
        pd_registry *reg = j->cm->reg;
        pd_registry_hold_saves(reg); /* whatever done() changes joins the save below it */
        j->cm->pending_jobs = g_slist_remove(j->cm->pending_jobs, j);
        job_event(j, s, err);
        pd_family *f = j->kind != PD_JOB_CONTINUE ? job_family(j) : NULL;
        if (f)
                pd_registry_set_flag(reg, f, j->kind == PD_JOB_KILL ? PD_FAMILY_KILLING : PD_FAMILY_SUSPENDING, false);
        if (f && j->unregister && s == PROCD_OK)
                unregister_now(j->cm, f);
        if (j->source)
                g_source_remove(j->source);
        j->source = 0;
        pd_registry_flush_saves(reg); /* saved before the answer */
        j->done(s, err, j->userdata);
        g_free(j);
        pd_registry_release_saves(reg);
}

/* The job's family, while it is still the one the call named. */
static pd_family *job_family(pd_job *j)
{
        pd_family *f = pd_registry_find(j->cm->reg, j->pid);
        return f && f->parent && f->root_start_ticks == j->root_start ? f : NULL;
}

static gboolean job_round(gpointer data)
{
        pd_job *j = data;
        j->source = 0;
        procd_error err = { 0 };
        pd_family *f = job_family(j);
        if (!f) {
                procd_error_set(&err, PROCD_E_FAMILY_NOT_FOUND, "%s: family %d was unregistered meanwhile",
                             job_op(j->kind, j->unregister), (int) j->pid);
                job_finish(j, err.status, &err);
                return G_SOURCE_REMOVE;
        }
        /* a subfamily another uid owns may have been registered below it since */
        procd_status s = may_act_on_subtree(&j->who, f, job_op(j->kind, j->unregister), &err);
        if (s != PROCD_OK) {
                job_finish(j, s, &err);
                return G_SOURCE_REMOVE;
        }
        bool again;
        guint pause_ms;
        if (j->kind == PD_JOB_KILL) {
                s = kill_round(j->cm, f, j->pid, PD_KILL_ROUND_USEC, &err);
                again = s == PROCD_E_UNKILLABLE;
                pause_ms = PD_KILL_ROUND_PAUSE_MS;
        } else {
                bool done = false;
                s = freeze_round(j->cm, f, j->kind == PD_JOB_SUSPEND, PD_FREEZE_ROUND_USEC, &done, &err);
                again = s == PROCD_OK && !done;
                pause_ms = PD_FREEZE_ROUND_PAUSE_MS;
        }
        if (again && tr_now_usec() < j->deadline_usec) {
                j->source = g_timeout_add(pause_ms, job_round, j);
                return G_SOURCE_REMOVE;
        }
        if (again && j->kind != PD_JOB_KILL)
                /* asked, not confirmed within the bound (a member in D state): the freezer
                 * finishes on its own; as the synchronous call always answered */
                g_message("%s %d: not confirmed within %.1f s", job_op(j->kind, false), (int) j->pid,
                          (double) j->cm->freeze_timeout_usec / 1e6);
        job_finish(j, s, &err);
        return G_SOURCE_REMOVE;
}

static bool overlaps(pd_family *a, pd_family *b)
{
        for (pd_family *x = a; x; x = x->parent)
                if (x == b)
                        return true;
        for (pd_family *x = b; x; x = x->parent)
                if (x == a)
                        return true;
        return false;
}

/* Whether a new call by who on f ends the pending job j: a suspend/continue on the same
 * family, a subfamily or a parent, whose next round would undo the new call (a continue
 * followed by a re-freeze).  Only root, or the uid that made j, ends j: a user's call never
 * cuts short a call of root's or another user's. */
static bool ends(pd_job *j, pd_family *f, const pd_caller *who)
{
        if (j->kind == PD_JOB_KILL || (who->uid != 0 && who->uid != j->who.uid))
                return false;
        pd_family *g = job_family(j);
        return g && overlaps(f, g);
}

/* End the jobs a new call on f replaces; they are answered OK (what they asked was done,
 * then the later call took over). */
static void supersede(pd_commands *cm, pd_family *f, const pd_caller *who)
{
        bool again = true;
        while (again) {
                again = false;
                for (GSList *l = cm->pending_jobs; l; l = l->next) {
                        pd_job *j = l->data;
                        if (ends(j, f, who)) {
                                job_finish(j, PROCD_OK, NULL); /* edits the list: start over */
                                again = true;
                                break;
                        }
                }
        }
}

/* unregister (KillAndUnregisterFamily; kind PD_JOB_KILL): the rights KillFamily asks (the
 * family and every subfamily) cover UnregisterFamily's (the family), so one check here
 * before anything changes, and again before every round, stands for both. */
static void family_async_impl(pd_commands *cm, const pd_caller *who, pd_job_kind kind, bool unregister, pid_t pid,
                              pd_job_done_fn done, void *userdata)
{
        procd_error err = { 0 };
        pd_family *f = NULL;
        procd_status s = find_actionable(cm, who, pid, job_op(kind, unregister), &f, &err);
        if (s != PROCD_OK) {
                done(s, &err, userdata);
                return;
        }
        /* one uid cannot take every slot: a user's calls on its own family whose member
         * does not die must leave room for root's and other users' calls */
        guint total = 0, mine = 0;
        for (GSList *l = cm->pending_jobs; l; l = l->next) {
                pd_job *o = l->data;
                if (ends(o, f, who))
                        continue; /* this call ends it (below) */
                total++;
                mine += o->who.uid == who->uid;
        }
        if (who->uid != 0 ? (total >= PD_MAX_PENDING_JOBS || mine >= PD_MAX_PENDING_JOBS_PER_UID)
                          : total >= PD_MAX_PENDING_JOBS + PD_MAX_PENDING_JOBS_ROOT) {
                procd_error_set(&err, PROCD_E_INTERNAL,
                             "too many KillFamily/SuspendFamily/ContinueFamily calls in progress (%u, %u of uid %u): "
                             "try again later",
                             total, mine, (unsigned) who->uid);
                done(err.status, &err, userdata);
                return;
        }
        /* the flags set here and cleared when the first round finishes the call: one save
         * (before the answer, job_finish), not two; a call left for later rounds is saved
         * when this returns, before the main loop runs again */
        pd_registry_hold_saves(cm->reg);
        supersede(cm, f, who);
        if (kind == PD_JOB_KILL) {
                pd_registry_set_flag(cm->reg, f, PD_FAMILY_KILLING | PD_FAMILY_KILLED, true);
                pd_events_family(cm->events, PD_EVENT_KILLING, f->root_pid);
        } else {
                mark_frozen(cm, f, kind == PD_JOB_SUSPEND);
                pd_registry_set_flag(cm->reg, f, PD_FAMILY_SUSPENDING, kind == PD_JOB_SUSPEND);
        }
        pd_job *j = g_new0(pd_job, 1);
        j->cm = cm;
        j->kind = kind;
        j->unregister = unregister;
        j->who = *who;
        j->pid = pid;
        j->root_start = f->root_start_ticks;
        j->deadline_usec =
                tr_now_usec() + (kind == PD_JOB_KILL ? cm->kill_timeout_usec : cm->freeze_timeout_usec);
        j->done = done;
        j->userdata = userdata;
        cm->pending_jobs = g_slist_prepend(cm->pending_jobs, j);
        job_round(j); /* the first round now: most calls are done after it */
        pd_registry_release_saves(cm->reg);
}

void pd_cmd_cancel_pending(pd_commands *cm)
{
        while (cm->pending_jobs) {
                procd_error err = { 0 };
                procd_error_set(&err, PROCD_E_INTERNAL, "procd is shutting down");
                job_finish(cm->pending_jobs->data, err.status, &err);
        }
}

static procd_status unregister_family_impl(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        if (pid == 0)
                return procd_error_set(err, PROCD_E_ROOT_FAMILY, "cannot unregister the root family");
        pd_family *f = NULL;
        procd_status s = find_subfamily(cm, pid, &f, err);
        if (s == PROCD_OK)
                s = may_act_on(who, f, "UnregisterFamily", err);
        if (s != PROCD_OK)
                return s;
        unregister_now(cm, f);
        return PROCD_OK;
}

static void unregister_now(pd_commands *cm, pd_family *f)
{
        pid_t root = f->root_pid;
        pd_registry_unregister(cm->reg, f);
        if (cm->meter)
                pd_usage_meter_forget(cm->meter, root);
        g_info("unregistered family %d", (int) root);
}

procd_status pd_cmd_snapshot(pd_commands *cm, const pd_caller *who, procd_error *err)
{
        procd_status s = need_root(who, "Snapshot", err);
        if (s != PROCD_OK)
                return s;
        tr_error terr = { 0 };
        if (pd_registry_snapshot(cm->reg, &terr) < 0)
                return procd_error_set(err, PROCD_E_INTERNAL, "snapshot: %s", terr.msg);
        return PROCD_OK;
}

static int fill_info(pd_commands *cm, pd_family *f, procd_family_info *fi)
{
        memset(fi, 0, sizeof *fi);
        fi->root_pid = f->root_pid;
        fi->root_start_ticks = f->root_start_ticks;
        fi->watcher_pid = f->watcher.pid;
        fi->parent_root_pid = f->parent ? f->parent->root_pid : 0;
        pd_family_tracking(f, fi->tracking, sizeof fi->tracking);
        snprintf(fi->source, sizeof fi->source, "%s", pd_family_source(f));
        snprintf(fi->state, sizeof fi->state, "%s", pd_family_state_name(f));
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
                        return procd_error_set(err, PROCD_E_BAD_ROOT_PID, "bad root pid %d", (int) pid);
                pd_family *f = pd_registry_find(cm->reg, pid);
                if (!f)
                        return procd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "no family with root pid %d", (int) pid);
                pd_registry_subtree(f, fams);
                /* the family itself first, then its subfamilies */
                g_ptr_array_remove_index(fams, fams->len - 1);
                g_ptr_array_insert(fams, 0, f);
        }
        procd_family_info *infos = calloc(fams->len ? fams->len : 1, sizeof *infos);
        if (!infos)
                return procd_error_set(err, PROCD_E_INTERNAL, "out of memory");
        for (guint i = 0; i < fams->len; i++) {
                if (fill_info(cm, fams->pdata[i], &infos[i]) < 0) {
                        procd_family_info_free(infos, i + 1);
                        return procd_error_set(err, PROCD_E_INTERNAL, "out of memory");
                }
        }
        *out = infos;
        *n = fams->len;
        return PROCD_OK;
}

static procd_status quit_impl(pd_commands *cm, const pd_caller *who, procd_error *err)
{
        procd_status s = need_root(who, "Quit", err);
        if (s != PROCD_OK)
                return s;
        g_message("quit requested by uid %u pid %d", (unsigned) who->uid, (int) who->pid);
        if (cm->quit)
                cm->quit(cm->quit_data);
        return PROCD_OK;
}

void pd_cmd_clear(pd_commands *cm)
{
        pd_cmd_jobs_free(cm);
        pd_usage_meter_free(cm->meter);
        cm->meter = NULL;
}

/* ---- watcher exit and restart ---- */

typedef struct watcher_kill {
        pd_commands *cm;
        pid_t pid;
        uint64_t start;
} watcher_kill;

static const pd_caller procd_itself = { .uid = 0, .pid = 0 };

/* The family asked to die with its watcher: now empty, its cgroup is removed (the one it
 * was handed, as named) and it is unregistered.  Survivors keep it registered. */
static void watcher_kill_done(procd_status s, const procd_error *err, void *data)
{
        watcher_kill *wk = data;
        pd_family *f = pd_registry_find(wk->cm->reg, wk->pid);
        if (f && (!f->parent || f->root_start_ticks != wk->start))
                f = NULL;
        if (s != PROCD_OK) {
                g_warning("family %d: kill after its watcher exited: %s%s", (int) wk->pid, err ? err->msg : "failed",
                          f ? " (the family stays registered)" : "");
        } else if (f) {
                if (f->cgroup_path) {
                        const tr_hierarchies *hs = pd_registry_hierarchies(wk->cm->reg);
                        _cleanup_cgroup_ tr_cgroup *cg = NULL;
                        tr_error terr = { 0 };
                        if (tr_cgroup_open(hs, f->cgroup_path, TR_CG_MAY_ACT, &cg, &terr) < 0 ||
                            tr_cgroup_destroy(cg, 2000000, &terr) < 0) {
                                if (terr.code != ENOENT)
                                        g_warning("family %d: removing cgroup %s: %s", (int) wk->pid, f->cgroup_path,
                                                  terr.msg);
                        } else {
                                g_message("family %d: cgroup %s removed", (int) wk->pid, f->cgroup_path);
                        }
                }
                pd_registry_unregister(wk->cm->reg, f);
        }
        g_free(wk);
}

void pd_cmd_watcher_exited(void *data, pd_family *f)
{
        pd_commands *cm = data;
        if (!(f->flags & PD_FAMILY_KILL_ON_WATCHER_EXIT)) {
                g_message("watcher %d of family %d exited: unregistering the family", (int) f->watcher.pid,
                          (int) f->root_pid);
                pd_registry_unregister(cm->reg, f);
                return;
        }
        g_message("watcher %d of family %d exited: killing the family (registered kill-on-watcher-exit)",
                  (int) f->watcher.pid, (int) f->root_pid);
        watcher_kill *wk = g_new0(watcher_kill, 1);
        wk->cm = cm;
        wk->pid = f->root_pid;
        wk->start = f->root_start_ticks;
        pd_cmd_family_async(cm, &procd_itself, PD_JOB_KILL, f->root_pid, watcher_kill_done, wk);
}

static void resumed_done(procd_status s, const procd_error *err, void *data)
{
        pid_t pid = GPOINTER_TO_INT(data);
        if (s != PROCD_OK)
                g_warning("family %d: resumed call after restart: %s", (int) pid, err ? err->msg : "failed");
}

void pd_cmd_resume(pd_commands *cm, pd_family *f)
{
        if (f->flags & PD_FAMILY_KILLING) {
                g_message("family %d: a KillFamily was in progress before the restart: finishing it", (int) f->root_pid);
                pd_cmd_family_async(cm, &procd_itself, PD_JOB_KILL, f->root_pid, resumed_done,
                                    GINT_TO_POINTER(f->root_pid));
        } else if (f->flags & PD_FAMILY_SUSPENDING) {
                /* a suspend cut short by the crash is finished (a completed one needs
                 * nothing: the kernel kept the processes stopped or the cgroup frozen) */
                g_message("family %d: a SuspendFamily was in progress before the restart: finishing it",
                          (int) f->root_pid);
                pd_cmd_family_async(cm, &procd_itself, PD_JOB_SUSPEND, f->root_pid, resumed_done,
                                    GINT_TO_POINTER(f->root_pid));
        }
}

/* ---- the audit trail (audit.h): one record per changing call, whichever face asked ---- */

/* The job of the family rooted at root, read before the call (an unregistration drops it). */
static const char *job_before(pd_commands *cm, pid_t root, char *buf, size_t size)
{
        const char *j = root > 1 ? pd_cmd_job_of(cm, root) : NULL;
        snprintf(buf, size, "%s", j ? j : "");
        return buf;
}

static procd_status audited(const char *op, const pd_caller *who, pid_t family, const char *job, pid_t target,
                            procd_status s, const procd_error *err)
{
        pd_audit_record r = { .op = op, .family = family, .job = job, .target = target, .who = who, .result = s,
                              .message = err ? err->msg : NULL };
        pd_audit_log(&r);
        return s;
}

procd_status pd_cmd_register_subfamily_flags(pd_commands *cm, const pd_caller *who, pid_t root_pid,
                                             pid_t watcher_pid, uint32_t interval, uint32_t flags, procd_error *err)
{
        pd_job_registration j = { .root_pid = root_pid, .watcher_pid = watcher_pid, .interval_sec = interval,
                                  .flags = flags };
        pd_family *f = NULL;
        bool in_cgroup = false;
        procd_status s = register_impl(cm, who, &j, &f, &in_cgroup, err);
        return audited("register", who, root_pid, NULL, 0, s, err);
}

static procd_status register_job_impl(pd_commands *cm, const pd_caller *who, const pd_job_registration *j,
                                      procd_error *err)
{
        /* every check of the three calls before anything changes */
        procd_status s = need_root(who, "RegisterJob", err);
        if (s != PROCD_OK)
                return s;
        if (!j->job_id || !procd_job_id_valid(j->job_id))
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "RegisterJob: a job id is 1..%d printable characters",
                                       PROCD_JOB_ID_MAX - 1);
        /* the root's own family (already registered, or stale) may hold the cgroup: the
         * registration then answers, as RegisterSubfamily would first */
        s = cgroup_for(cm, who, j->cgroup, j->root_pid > 1 ? pd_registry_find(cm->reg, j->root_pid) : NULL, err);
        if (s != PROCD_OK)
                return s;
        pd_family *f = NULL;
        bool in_cgroup = false;
        s = register_impl(cm, who, j, &f, &in_cgroup, err);
        if (s != PROCD_OK || in_cgroup)
                return s;
        /* the root is not in the cgroup (yet): moved in as TrackFamilyViaCgroup does */
        s = track_cgroup_impl(cm, who, j->root_pid, j->cgroup, err);
        if (s != PROCD_OK) {
                pd_cmd_forget_job(cm, j->root_pid);
                pd_registry_unregister(cm->reg, f);
        }
        return s;
}

procd_status pd_cmd_register_job(pd_commands *cm, const pd_caller *who, const pd_job_registration *j,
                                 procd_error *err)
{
        procd_status s = register_job_impl(cm, who, j, err);
        return audited("register", who, j->root_pid, j->job_id && procd_job_id_valid(j->job_id) ? j->job_id : NULL, 0,
                       s, err);
}

typedef procd_status (*track_fn)(pd_commands *, const pd_caller *, pid_t, const char *, procd_error *);

static procd_status track_audited(const char *op, track_fn fn, pd_commands *cm, const pd_caller *who, pid_t root_pid,
                                  const char *arg, procd_error *err)
{
        char job[PROCD_JOB_ID_MAX];
        job_before(cm, root_pid, job, sizeof job);
        return audited(op, who, root_pid, job, 0, fn(cm, who, root_pid, arg, err), err);
}

procd_status pd_cmd_track_cgroup(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *cgroup,
                                 procd_error *err)
{
        return track_audited("track-cgroup", track_cgroup_impl, cm, who, root_pid, cgroup, err);
}

procd_status pd_cmd_track_environment(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *marker,
                                      procd_error *err)
{
        return track_audited("track-environment", track_environment_impl, cm, who, root_pid, marker, err);
}

procd_status pd_cmd_track_login(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *login,
                                procd_error *err)
{
        return track_audited("track-login", track_login_impl, cm, who, root_pid, login, err);
}

procd_status pd_cmd_track_allocated_group(pd_commands *cm, const pd_caller *who, pid_t root_pid, gid_t *gid_out,
                                          procd_error *err)
{
        char job[PROCD_JOB_ID_MAX];
        job_before(cm, root_pid, job, sizeof job);
        procd_status s = track_allocated_group_impl(cm, who, root_pid, gid_out, err);
        return audited("track-allocated-group", who, root_pid, job, 0, s, err);
}

procd_status pd_cmd_track_associated_group(pd_commands *cm, const pd_caller *who, pid_t root_pid, gid_t gid,
                                           procd_error *err)
{
        char job[PROCD_JOB_ID_MAX];
        job_before(cm, root_pid, job, sizeof job);
        procd_status s = track_associated_group_impl(cm, who, root_pid, gid, err);
        return audited("track-associated-group", who, root_pid, job, 0, s, err);
}

procd_status pd_cmd_signal_process(pd_commands *cm, const pd_caller *who, pid_t pid, int sig, procd_error *err)
{
        pd_family *f = pid > 1 ? pd_registry_family_of(cm->reg, pid) : NULL;
        pid_t root = f && f->parent ? f->root_pid : 0;
        char job[PROCD_JOB_ID_MAX];
        job_before(cm, root, job, sizeof job);
        procd_status s = signal_process_impl(cm, who, pid, sig, err);
        pd_audit_record r = { .op = "signal", .family = root, .job = job, .target = pid, .signal = sig, .who = who,
                              .result = s, .message = err ? err->msg : NULL };
        pd_audit_log(&r);
        return s;
}

typedef procd_status (*pid_op_fn)(pd_commands *, const pd_caller *, pid_t, procd_error *);

static procd_status pid_audited(const char *op, pid_op_fn fn, pd_commands *cm, const pd_caller *who, pid_t pid,
                                procd_error *err)
{
        char job[PROCD_JOB_ID_MAX];
        job_before(cm, pid, job, sizeof job);
        return audited(op, who, pid, job, 0, fn(cm, who, pid, err), err);
}

procd_status pd_cmd_suspend_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        return pid_audited("suspend", suspend_family_impl, cm, who, pid, err);
}

procd_status pd_cmd_continue_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        return pid_audited("continue", continue_family_impl, cm, who, pid, err);
}

procd_status pd_cmd_kill_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        return pid_audited("kill", kill_family_impl, cm, who, pid, err);
}

procd_status pd_cmd_unregister_family(pd_commands *cm, const pd_caller *who, pid_t pid, procd_error *err)
{
        return pid_audited("unregister", unregister_family_impl, cm, who, pid, err);
}

procd_status pd_cmd_quit(pd_commands *cm, const pd_caller *who, procd_error *err)
{
        return audited("quit", who, 0, NULL, 0, quit_impl(cm, who, err), err);
}

/* An asynchronous call is logged once, when it is answered. */
typedef struct audit_async {
        pd_caller who;
        pd_job_kind kind;
        bool unregister;
        pid_t pid;
        char job[PROCD_JOB_ID_MAX];
        pd_job_done_fn done;
        void *userdata;
} audit_async;

static void audit_async_done(procd_status s, const procd_error *err, void *data)
{
        audit_async *a = data;
        audited(a->kind == PD_JOB_KILL ? "kill" : a->kind == PD_JOB_SUSPEND ? "suspend" : "continue", &a->who, a->pid,
                a->job, 0, s, err);
        /* KillAndUnregisterFamily: the record UnregisterFamily would add, once it was done */
        if (a->unregister && s == PROCD_OK)
                audited("unregister", &a->who, a->pid, a->job, 0, s, NULL);
        a->done(s, err, a->userdata);
        g_free(a);
}

static void family_async_audited(pd_commands *cm, const pd_caller *who, pd_job_kind kind, bool unregister, pid_t pid,
                                 pd_job_done_fn done, void *userdata)
{
        audit_async *a = g_new0(audit_async, 1);
        a->who = *who;
        a->kind = kind;
        a->unregister = unregister;
        a->pid = pid;
        job_before(cm, pid, a->job, sizeof a->job);
        a->done = done;
        a->userdata = userdata;
        family_async_impl(cm, who, kind, unregister, pid, audit_async_done, a);
}

void pd_cmd_family_async(pd_commands *cm, const pd_caller *who, pd_job_kind kind, pid_t pid, pd_job_done_fn done,
                         void *userdata)
{
        family_async_audited(cm, who, kind, false, pid, done, userdata);
}

void pd_cmd_kill_and_unregister_async(pd_commands *cm, const pd_caller *who, pid_t pid, pd_job_done_fn done,
                                      void *userdata)
{
        family_async_audited(cm, who, PD_JOB_KILL, true, pid, done, userdata);
}
