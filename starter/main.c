/* main.c - procd-starter: options -> job cgroup -> private /tmp dir -> guard -> limits -> launch
 * (to the gate) -> track -> open the gate -> wait loop
 * (pidfd + signalfd) -> end of job (kill strays, usage, report, remove cgroups). */
#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jobcg.h"
#include "procd/client.h"
#include "guard.h"
#include "jobdevices.h"
#include "orphans.h"
#include "launch.h"
#include "joblimits.h"
#include "options.h"
#include "report.h"
#include "track.h"
#include "trackers/pidref.h"
#include "trackers/util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define END_KILL_TIMEOUT_USEC 10000000ULL
#define DESTROY_TIMEOUT_USEC 5000000ULL
#define REAP_TIMEOUT_USEC 1000000ULL

/* ---- orphans ----
 * The starter is a child subreaper (PR_SET_CHILD_SUBREAPER): the job's orphans - a
 * double-forked or setsid'd escaper whose parent exited - are reparented to it instead of to
 * PID 1.  PID 1 does not always reap (it does not on some execute nodes, e.g. a container
 * init or a minimal one): killed orphans would stay zombies for ever, still charged to the
 * job's pids.current and holding their pids.  So the starter reaps them: on SIGCHLD while the
 * job runs, and after the family is killed.
 *
 * Every child of the starter is the job's root, a reparented orphan of the job, or the
 * systemd helper (jobcg-systemd.c, parked until teardown).  waitid(WNOWAIT) peeks at one
 * exited child and that very pid is reaped.  The root is never reaped here: the wait loop
 * reaps it through its pidfd, for its status.  The helper is alive until teardown, which
 * reaps it by pid; if it died early and was reaped here, jc->helper_reaped tells teardown. */

/* Reap every exited child except `keep` (stops at it: the caller reaps it soon). */
static void reap_strays(pid_t keep, st_jobcg *jc)
{
        for (;;) {
                siginfo_t si;
                memset(&si, 0, sizeof si);
                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 || si.si_pid <= 0)
                        return; /* no child (ECHILD), or none exited */
                if (si.si_pid == keep)
                        return;
                if (waitpid(si.si_pid, NULL, WNOHANG | __WALL) != si.si_pid)
                        return;
                if (jc && si.si_pid == jc->helper_pid)
                        jc->helper_reaped = true;
        }
}

/* At the end, after the family was killed and the helper torn down: reap until no child is
 * left.  Killed tasks leave the cgroup (cgroup_exit) a moment before they are reparented and
 * become zombies (exit_notify), so poll, bounded. */
static void reap_all(st_jobcg *jc)
{
        uint64_t end = tr_now_usec() + REAP_TIMEOUT_USEC;
        for (;;) {
                reap_strays(-1, jc);
                siginfo_t si;
                memset(&si, 0, sizeof si);
                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0)
                        return; /* ECHILD: nothing left */
                if (tr_now_usec() >= end) {
                        fprintf(stderr, "procd-starter: warning: a child of the job is still running after "
                                        "the family was killed; leaving it\n");
                        return;
                }
                if (si.si_pid <= 0)
                        usleep(2000);
        }
}

static int launch_exit_code(int r)
{
        switch (-r) {
        case ENOENT:
                return ST_EXIT_NOTFOUND;
        case EACCES:
        case ENOEXEC:
        case EISDIR:
        case ETXTBSY:
        case ENOTDIR:
                return ST_EXIT_NOEXEC;
        default:
                return ST_EXIT_FAILURE;
        }
}

static uint64_t realtime_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* --user, else the starter's own user (name, or the uid). */
static const char *job_user(const st_options *o, char *buf, size_t size)
{
        if (o->user)
                return o->user;
        struct passwd *pw = getpwuid(getuid());
        if (pw)
                snprintf(buf, size, "%s", pw->pw_name);
        else
                snprintf(buf, size, "%u", (unsigned) getuid());
        return buf;
}

/* The job could not run: say why on stderr and, with --report, in the report (a scheduler
 * reading only the report must learn it too).  Returns code. */
static int failed(const st_options *o, const char *stage, const tr_error *err, int code, bool cgroups_removed)
{
        const char *why = err->msg[0] ? err->msg : strerror(err->code);
        fprintf(stderr, "procd-starter: %s: %s\n", stage, why);
        if (o->report_path) {
                tr_error rerr = { 0 };
                if (st_report_write_failure_json(o->report_path, code, stage, why, cgroups_removed, &rerr) < 0)
                        fprintf(stderr, "procd-starter: warning: %s\n", rerr.msg);
        }
        return code;
}

/* st_jobns_record_fn: the private /tmp directory's path kept on <top> for a sweep (cgroupfs:
 * a systemd scope is no sweep's, the guard alone removes it) */
static int record_tmp(void *arg, const char *path, tr_error *err)
{
        const st_jobcg *jc = arg;
        (void) err;
        if (jc->top_lock_fd < 0)
                return 0;
        tr_error rerr = { 0 };
        /* not root: no trusted.* attribute, the guard alone removes the directory */
        if (st_orphans_record_tmp(jc->hs, jc->top, path, &rerr) < 0 && geteuid() == 0)
                fprintf(stderr, "procd-starter: warning: %s (only the guard would remove it)\n", rerr.msg);
        return 0;
}

typedef struct loop_state {
        bool terminating, killed, frozen;
        uint64_t kill_at;
} loop_state;

static void on_signal(st_track *t, const st_options *o, loop_state *ls, int sig)
{
        tr_error err = { 0 };
        switch (sig) {
        case SIGTERM:
        case SIGINT:
        case SIGHUP:
        case SIGQUIT:
                if (ls->frozen) {
                        if (t->ops->thaw(t, &err) < 0)
                                fprintf(stderr, "procd-starter: warning: thaw: %s\n", err.msg);
                        ls->frozen = false;
                }
                if (!ls->terminating) {
                        ls->terminating = true;
                        ls->kill_at = tr_now_usec() + o->kill_grace_usec;
                        if (!o->quiet)
                                fprintf(stderr, "procd-starter: %s: SIGTERM to the job family, kill in %.1f s\n",
                                        strsignal(sig), (double) o->kill_grace_usec / 1e6);
                        if (t->ops->signal(t, SIGTERM, &err) < 0)
                                fprintf(stderr, "procd-starter: warning: SIGTERM to the family: %s\n", err.msg);
                } else {
                        ls->kill_at = tr_now_usec(); /* a second request: kill now */
                }
                break;
        case SIGTSTP:
                if (!ls->frozen && !ls->terminating) {
                        if (t->ops->freeze(t, &err) < 0)
                                fprintf(stderr, "procd-starter: warning: suspend: %s\n", err.msg);
                        else
                                ls->frozen = true;
                }
                break;
        case SIGCONT:
                if (ls->frozen) {
                        if (t->ops->thaw(t, &err) < 0)
                                fprintf(stderr, "procd-starter: warning: continue: %s\n", err.msg);
                        else
                                ls->frozen = false;
                }
                break;
        default:
                break;
        }
}

/* Wait for the root; returns its siginfo.  Handles signals to the starter meanwhile, and
 * reaps the job's orphans as they exit (SIGCHLD). */
static int wait_loop(st_track *t, const st_options *o, int pidfd, int sfd, siginfo_t *si, loop_state *ls,
                     pid_t root, st_jobcg *jc)
{
        for (;;) {
                int timeout = -1;
                if (ls->terminating && !ls->killed) {
                        uint64_t now = tr_now_usec();
                        timeout = now >= ls->kill_at ? 0 : (int) ((ls->kill_at - now + 999) / 1000);
                }
                struct pollfd p[2] = { { pidfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
                int n = poll(p, 2, timeout);
                if (n < 0 && errno != EINTR)
                        return -errno;
                if (n > 0 && (p[0].revents & (POLLIN | POLLHUP))) {
                        memset(si, 0, sizeof *si);
                        if (waitid((idtype_t) P_PIDFD, (id_t) pidfd, si, WEXITED) < 0)
                                return -errno;
                        return 0;
                }
                if (n > 0 && (p[1].revents & POLLIN)) {
                        struct signalfd_siginfo ssi;
                        if (read(sfd, &ssi, sizeof ssi) == (ssize_t) sizeof ssi) {
                                if (ssi.ssi_signo == SIGCHLD)
                                        reap_strays(root, jc);
                                else
                                        on_signal(t, o, ls, (int) ssi.ssi_signo);
                        }
                }
                if (ls->terminating && !ls->killed && tr_now_usec() >= ls->kill_at) {
                        tr_error err = { 0 };
                        bool empty = false;
                        ls->killed = true;
                        if (t->ops->kill(t, END_KILL_TIMEOUT_USEC, &empty, &err) < 0)
                                fprintf(stderr, "procd-starter: warning: kill: %s\n", err.msg);
                }
        }
}

/* Who ended the job (st_result.terminated_by): the starter on a signal to it; when the root
 * died of a signal, procd if it was asked to kill the family (Dump, read before the
 * starter's own end-of-job KillFamily), the OOM killer if it killed in the job and the root
 * died of SIGKILL, else an unknown sender; NULL when the job exited by itself. */
static const char *job_ender(const st_result *res, const loop_state *ls, bool procd_killed)
{
        if (ls->terminating)
                return "starter";
        if (!res->exit_signal)
                return NULL;
        if (procd_killed)
                return "procd";
        if (res->oom_killed && res->exit_signal == SIGKILL)
                return "oom-killer";
        return "signal";
}

int main(int argc, char **argv)
{
        /* the guard's cleanup, exec'd by a guard whose starter is gone (guard.h) */
        if (argc > 1 && strcmp(argv[1], "--guard-cleanup") == 0)
                return st_guard_cleanup_main(argc, argv);
        st_options o;
        tr_error err = { 0 };
        int r = st_options_parse(argc, argv, &o, &err);
        if (r == 1) {
                st_options_free(&o);
                return 0;
        }
        if (r < 0) {
                fprintf(stderr, "procd-starter: %s\n", err.msg);
                st_options_free(&o);
                return ST_EXIT_FAILURE;
        }

        /* see "orphans" above: before anything is forked */
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                fprintf(stderr, "procd-starter: warning: PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));

        /* --require-procd: no job starts when procd does not answer (the registration after
         * the launch can still fail: the job is then killed at once).  The connection is the
         * one the job is registered on (one connection and authentication per job). */
        st_pw *pc = NULL;
        if (o.require_procd) {
                procd_error pe = { 0 };
                if (st_pw_connect(o.socket_path, &pc, &pe) != PROCD_OK) {
                        tr_error_set(&err, ECONNREFUSED, "--require-procd: %s", pe.msg);
                        r = failed(&o, "procd", &err, ST_EXIT_FAILURE, true);
                        st_options_free(&o);
                        return r;
                }
        }

        tr_hierarchies hs;
        if (tr_hierarchies_discover(&hs, &err) < 0) {
                st_pw_close(pc);
                r = failed(&o, "cgroup hierarchies", &err, ST_EXIT_FAILURE, true);
                st_options_free(&o);
                return r;
        }

        st_launch l;
        r = st_launch_prepare(&l, &o, &err);
        if (r < 0) {
                st_pw_close(pc);
                r = failed(&o, "launch", &err, launch_exit_code(r), true);
                st_launch_free(&l);
                st_options_free(&o);
                return r;
        }

        /* a closed stderr must not kill the starter before it cleans up; the job gets SIGPIPE's
         * disposition back */
        struct sigaction ign, old_pipe;
        memset(&ign, 0, sizeof ign);
        ign.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &ign, &old_pipe);
        l.sigpipe_default = old_pipe.sa_handler == SIG_DFL;

        /* signals to the starter are read from a signalfd; the job gets the old mask back */
        sigset_t mask;
        sigemptyset(&mask);
        int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT, SIGCHLD };
        for (size_t i = 0; i < TR_ARRAY_SIZE(sigs); i++)
                sigaddset(&mask, sigs[i]);
        sigprocmask(SIG_BLOCK, &mask, &l.child_mask);
        _cleanup_close_ int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0) {
                tr_error_setx(&err, errno, "signalfd");
                st_pw_close(pc);
                r = failed(&o, "signals", &err, ST_EXIT_FAILURE, true);
                st_launch_free(&l);
                st_options_free(&o);
                return r;
        }

        int code = ST_EXIT_FAILURE;
        const char *stage = NULL; /* what failed, for the message and the report */
        st_jobcg jc;
        st_track t;
        memset(&t, 0, sizeof t);
        pid_t pid = -1;
        _cleanup_close_ int pidfd = -1;
        st_guard guard = ST_GUARD_INIT;
        tr_dev_rules dev_rules = { 0 };
        tr_dev_filter *dev_filter = NULL;
        st_limits_record limits = { 0 };

        r = st_jobcg_create(&jc, &hs, &o, &err);
        if (r < 0) {
                stage = "job cgroup";
                goto out;
        }
        r = st_jobns_make_dir(&l.ns, record_tmp, &jc, &err);
        if (r < 0) {
                stage = "private tmp";
                goto out;
        }
        /* the procd connection must end with the starter, not with its guard (guard.h) */
        r = st_guard_start(&guard, &jc, &l.ns, st_pw_fd(pc), "/proc/self/exe", &err);
        if (r < 0) {
                stage = "guard";
                goto out;
        }
        r = st_limits_apply(jc.job, &hs, &o.limits, o.best_effort, &limits, &err);
        if (r < 0) {
                stage = "limits";
                goto out;
        }
        r = st_devices_apply(jc.job, &o, &dev_rules, &dev_filter, &err);
        if (r < 0) {
                stage = "devices";
                goto out;
        }
        r = st_launch_place(&l, jc.job, &err);
        if (r < 0) {
                stage = "launch";
                goto out;
        }
        uint64_t t0 = tr_now_usec();
        uint64_t start_real_usec = realtime_usec();
        r = st_launch_start(&l, &pid, &pidfd, &err);
        if (r < 0) {
                stage = "launch";
                code = launch_exit_code(r);
                pid = -1;
                goto out;
        }
        uint64_t ticks = 0;
        tr_pid_start_ticks(pid, &ticks);
        r = st_track_open(&t, &o, &jc, pid, ticks, l.set_ids ? l.uid : getuid(), pc, &err);
        pc = NULL; /* the tracker's now */
        if (r < 0) {
                stage = "tracking";
                st_launch_close_gate(&l); /* the child ends there, never execs */
                tr_kill_result kr;
                memset(&kr, 0, sizeof kr);
                tr_error kerr = { 0 };
                if (tr_cgroup_kill(jc.job, END_KILL_TIMEOUT_USEC, &kr, &kerr) < 0) {
                        /* borrows the launch's pidfd (closed with it) */
                        tr_pidref job = { .pid = pid, .start_ticks = ticks, .pidfd = pidfd };
                        (void) tr_pidref_signal(&job, SIGKILL);
                }
                tr_kill_result_free(&kr);
                siginfo_t si;
                waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED);
                goto out;
        }
        /* tracked (procd's watcher, or this starter and its guard): the command may run */
        r = st_launch_release(&l, pid, &pidfd, &err);
        if (r < 0) {
                stage = "launch";
                code = launch_exit_code(r);
                pid = -1;
                goto out;
        }
        /* the job runs: the orphans of dead starters are swept while its exec goes on */
        st_jobcg_sweep(&hs, &o);

        loop_state ls = { 0 };
        siginfo_t si;
        r = wait_loop(&t, &o, pidfd, sfd, &si, &ls, pid, &jc);
        uint64_t wall = tr_now_usec() - t0;
        if (r < 0) {
                tr_error_setx(&err, -r, "waiting for the job");
                stage = "wait";
                bool empty;
                tr_error kerr = { 0 };
                t.ops->kill(&t, END_KILL_TIMEOUT_USEC, &empty, &kerr);
                goto out;
        }

        st_result res;
        memset(&res, 0, sizeof res);
        res.pid = pid;
        res.wall_usec = wall;
        res.mode = jc.ops->name;
        res.start_usec = start_real_usec;
        char user[64], host[256] = "";
        res.user = o.report_path ? job_user(&o, user, sizeof user) : NULL; /* the JSON report's only */
        if (gethostname(host, sizeof host - 1) == 0)
                res.host = host;
        const char *slash = strrchr(jc.top, '/');
        res.name = slash ? slash + 1 : jc.top;
        res.cgroup_base = jc.ops == &st_jobcg_cgroupfs_ops ? o.cgroup_base : NULL;
        res.cgroup = jc.job_path;
        res.devices = &dev_rules;
        char dev_method[sizeof dev_filter->method] = "";
        if (dev_filter)
                snprintf(dev_method, sizeof dev_method, "%s", dev_filter->method);
        res.device_method = dev_method;
        res.device_prog_id = dev_filter ? dev_filter->bpf_prog_id : 0;
        if (si.si_code == CLD_EXITED) {
                res.exit_status = si.si_status;
        } else {
                res.exit_status = -1;
                res.exit_signal = si.si_status;
                res.core_dumped = si.si_code == CLD_DUMPED;
        }

        /* the root is gone: nothing of the family may outlive it.  A root killed by a signal:
         * first ask procd whether it killed the family and still tracks it (a procd restarted
         * without it does not).  A root that exited needs no such round trip: the end-of-job
         * KillFamily answers FamilyNotFound from such a procd, which switches to the embedded
         * tracker the same way */
        if (si.si_code != CLD_EXITED)
                st_track_confirm(&t);
        tr_error kerr = { 0 };
        if (ls.frozen)
                t.ops->thaw(&t, &kerr);
        bool populated = false;
        if (tr_family_populated(t.family, &populated, &kerr) < 0)
                populated = true;
        res.strays_killed = populated;
        bool empty = true;
        /* an empty job cgroup tracked here has nothing left to kill (nothing enters a cgroup
         * without a process of its own but by a migration); procd is still told */
        bool kill = populated || t.client;
        if (kill && (t.ops->end(&t, END_KILL_TIMEOUT_USEC, &empty, &kerr) < 0 || !empty))
                fprintf(stderr, "procd-starter: warning: killing what is left of the job: %s\n",
                        kerr.msg[0] ? kerr.msg : "not empty at the bound");
        reap_strays(-1, &jc);

        tr_usage u;
        tr_error uerr = { 0 };
        unsigned want = st_track_usage_wanted(&o);
        if (st_track_usage(&t, want, &u, &uerr) < 0)
                fprintf(stderr, "procd-starter: warning: final usage: %s\n", uerr.msg);
        res.oom_killed = u.oom_kills.available && u.oom_kills.value > 0;
        res.terminated_by = job_ender(&res, &ls, t.procd_killed);
        res.terminated = res.terminated_by != NULL;
        res.limits = &limits;
        if (want == TR_WANT_ALL) /* the report's only */
                tr_cgroup_limit_events(jc.job, &res.events); /* before the job cgroup goes */
        res.tracker = t.ops->name; /* after the last procd call: "procd" only if it still tracked the job */
        res.tracker_reason = t.ops == NULL || strcmp(t.ops->name, "procd") != 0 ? t.reason : NULL;
        st_track_close(&t);
        /* the job is over: the guard dies while the cgroups and directory go (guard.h) */
        st_guard_dismiss(&guard);
        tr_dev_filter_free(dev_filter); /* detach the device program while the cgroup exists */
        dev_filter = NULL;
        st_jobns_remove_dir(&l.ns); /* before <top>, which carries its record */
        res.clean = st_jobcg_destroy(&jc, DESTROY_TIMEOUT_USEC) == 0;
        st_guard_stop(&guard); /* all done: nothing left for it */
        reap_all(&jc);
        res.end_usec = realtime_usec();
        res.exit_code = st_exit_code(&res);
        if (!o.quiet) {
                /* the report in one write: stderr is unbuffered (a write per fragment) */
                char *text = NULL;
                size_t len = 0;
                FILE *mf = open_memstream(&text, &len);
                bool built = false;
                if (mf) {
                        st_report_print(mf, &res, &u);
                        built = fclose(mf) == 0;
                }
                if (built)
                        fwrite(text, 1, len, stderr);
                else
                        st_report_print(stderr, &res, &u);
                free(text);
        }
        if (o.report_path && st_report_write_json(o.report_path, &res, &u, &err) < 0)
                fprintf(stderr, "procd-starter: warning: %s\n", err.msg);
        code = res.exit_code;
        st_limits_record_free(&limits);
        tr_dev_rules_free(&dev_rules);
        st_launch_free(&l);
        st_options_free(&o);
        return code;

out:
        st_pw_close(pc); /* when the job never got to st_track_open */
        st_limits_record_free(&limits);
        st_track_close(&t);
        tr_dev_filter_free(dev_filter);
        tr_dev_rules_free(&dev_rules);
        st_jobns_remove_dir(&l.ns);
        bool clean = st_jobcg_destroy(&jc, DESTROY_TIMEOUT_USEC) == 0;
        st_guard_stop(&guard);
        reap_all(&jc);
        failed(&o, stage ? stage : "starter", &err, code, clean);
        st_launch_free(&l);
        st_options_free(&o);
        return code;
}
