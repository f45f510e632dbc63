/* main.c - procd: options, logging, readiness, signals, the main loop. */
#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <syslog.h>
#include <unistd.h>

#include <dbus/dbus.h>

#include "procd/classic/classic-args.h"
#include "procd/classic/classic-server.h"
#include "procd/wire.h"
#include "procd/core/command.h"
#include "procd/core/command-jobs.h"
#include "procd/dbus/dbus-server.h"
#include "procd/core/family-cgroup.h"
#include "procd/core/fd-mux.h"
#include "procd/log-file.h"
#include "procd/options.h"
#include "procd/core/registry.h"
#include "procd/core/metrics.h"
#include "procd/core/restore.h"
#include "procd/core/stats.h"
#include "procd/core/event-watch.h"
#include "procd/core/events.h"
#include "procd/version.h"
#include "trackers/ancestry.h"
#include "trackers/cgroup-notify.h"
#include "trackers/cgroup-tick.h"
#include "trackers/hierarchy.h"
#include "trackers/util.h"

/* The daemon's context: the only mutable state, passed to every callback. */
typedef struct pd_daemon {
        pd_options opt;
        GMainLoop *loop;
        tr_hierarchies hs;
        pd_registry *reg;
        pd_famcg *famcg;
        pd_events *events;        /* what happened, to subscribers (issue 17) */
        pd_event_watch *event_watch; /* the kernel's notifications of family cgroups */
        pd_commands cm;
        pd_dbus_server *server;
        pd_classic_args classic;  /* condor_procd's command line (-A ...) */
        pd_classic_server *classic_server;
        pd_log_file *log_file;
        bool watch_parent;        /* classic mode without -P: the parent's exit ends procd */
        int parent_pidfd;         /* -1 without pidfd_open (valgrind): getppid() polled */
        pd_fd_mux_entry *parent_watch; /* the parent's pidfd, or the getppid() poll (fd_mux) */
        pd_fd_mux *fd_mux;        /* procd's fd set, and the main loop's wait (fd-mux.h) */
        int signal_fd;
        int exit_code;
        char state_path[4096]; /* "" when no state is kept */
        bool state_failing;     /* the last save failed (logged once until it works again) */
        pd_persist persist;     /* the save's buffers, kept from one save to the next */
        pd_stats stats;         /* procd's own counters (metrics) */
        guint metrics_src;      /* --metrics-textfile timer */
        bool metrics_failing;   /* the last textfile write failed (logged once) */
        bool pidfile_written;
        bool log_echo_stderr;   /* detached, syslog: warnings also on the inherited stderr
                                   until ready (a failed start is seen where it was asked) */
} pd_daemon;

/* data: NULL, or a bool * that, while true, copies warnings and errors to stderr */
static GLogWriterOutput syslog_writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data)
{
        const bool *echo = data;
        if (echo && *echo && (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING)))
                g_log_writer_standard_streams(level, fields, n, NULL);
        const char *msg = "";
        for (gsize i = 0; i < n; i++)
                if (strcmp(fields[i].key, "MESSAGE") == 0)
                        msg = fields[i].value;
        int prio = LOG_INFO;
        if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
                prio = LOG_ERR;
        else if (level & G_LOG_LEVEL_WARNING)
                prio = LOG_WARNING;
        else if (level & G_LOG_LEVEL_MESSAGE)
                prio = LOG_NOTICE;
        else if (level & G_LOG_LEVEL_DEBUG) {
                if (!g_log_writer_default_would_drop(level, G_LOG_DOMAIN))
                        prio = LOG_DEBUG;
                else
                        return G_LOG_WRITER_HANDLED;
        } else if ((level & G_LOG_LEVEL_INFO) && g_log_writer_default_would_drop(level, G_LOG_DOMAIN))
                return G_LOG_WRITER_HANDLED;
        syslog(prio, "%s", msg);
        return G_LOG_WRITER_HANDLED;
}

static GLogWriterOutput stderr_writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data)
{
        (void) data;
        if (g_log_writer_default_would_drop(level, G_LOG_DOMAIN))
                return G_LOG_WRITER_HANDLED;
        /* plain streams, never the journal: tests and foreground runs read stderr */
        return g_log_writer_standard_streams(level, fields, n, NULL);
}

/* The journal with every structured field (the audit's PROCD_*): --log journal, or stderr
 * when it is a journal stream (JOURNAL_STREAM names it); the same levels as stderr_writer.
 * Where journald does not answer, stderr. */
static GLogWriterOutput journal_writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data)
{
        (void) data;
        if (g_log_writer_default_would_drop(level, G_LOG_DOMAIN))
                return G_LOG_WRITER_HANDLED;
        if (g_log_writer_journald(level, fields, n, NULL) == G_LOG_WRITER_HANDLED)
                return G_LOG_WRITER_HANDLED;
        return g_log_writer_standard_streams(level, fields, n, NULL);
}

/* READY=1 to $NOTIFY_SOCKET (a plain AF_UNIX datagram; '@' = abstract namespace). */
static void notify_ready(void)
{
        const char *p = getenv("NOTIFY_SOCKET");
        if (!p || !*p)
                return;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len = strlen(p);
        if (len >= sizeof sa.sun_path)
                return;
        memcpy(sa.sun_path, p, len);
        if (sa.sun_path[0] == '@')
                sa.sun_path[0] = '\0';
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return;
        static const char msg[] = "READY=1";
        if (sendto(fd, msg, sizeof msg - 1, MSG_NOSIGNAL, (struct sockaddr *) &sa,
                   (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len)) < 0)
                g_warning("NOTIFY_SOCKET %s: %s", p, strerror(errno));
}

static gboolean signal_cb(gint fd, GIOCondition cond, gpointer data)
{
        pd_daemon *d = data;
        struct signalfd_siginfo si;
        (void) cond;
        if (read(fd, &si, sizeof si) == (ssize_t) sizeof si)
                g_message("signal %u: shutting down", si.ssi_signo);
        g_main_loop_quit(d->loop);
        return G_SOURCE_CONTINUE;
}

/* The events' job lookup (events.h): the command layer's job records. */
static const char *events_job_of(void *data, pid_t root_pid)
{
        return pd_cmd_job_of(data, root_pid);
}

static void quit_cb(void *data)
{
        pd_daemon *d = data;
        g_main_loop_quit(d->loop);
}

/* The registry changed: write the state file (atomic; a failure is logged, never fatal). */
static void save_state(void *data)
{
        pd_daemon *d = data;
        if (!d->state_path[0])
                return;
        tr_error err = { 0 };
        if (pd_persist_save(&d->persist, d->reg, d->state_path, &err) < 0) {
                if (!d->state_failing)
                        g_warning("state file not saved: %s (a restart would lose the families)", err.msg);
                d->state_failing = true;
        } else if (d->state_failing) {
                g_message("state file %s saved again", d->state_path);
                d->state_failing = false;
        }
}

/* The state file belongs to one daemon: its default name derives from the daemon's own
 * address, beside it, so that two procds whose addresses share a folder never adopt each
 * other's families.  condor_procd's mode: ADDR.state (the FIFO address, also with
 * --socket); D-Bus: the socket's name with ".sock" replaced by ".state" (procd.sock ->
 * procd.state, the packaged name), or ".state" appended. */
static void state_path_init(pd_daemon *d)
{
        if (d->opt.state_file_given) {
                snprintf(d->state_path, sizeof d->state_path, "%s", d->opt.state_file);
                return;
        }
        if (d->classic.classic) {
                snprintf(d->state_path, sizeof d->state_path, "%s.state", d->classic.address);
                return;
        }
        const char *sock = d->opt.socket_path;
        size_t n = strlen(sock);
        if (n > 5 && strcmp(sock + n - 5, ".sock") == 0 && sock[n - 6] != '/')
                n -= 5;
        snprintf(d->state_path, sizeof d->state_path, "%.*s.state", (int) n, sock);
}

/* The classic command FIFO was removed or replaced: condor_procd exits then. */
static void classic_lost_cb(void *data)
{
        pd_daemon *d = data;
        d->exit_code = 1;
        g_main_loop_quit(d->loop);
}

/* Classic mode without -P: the parent (the root family's watcher) exited. */
static void parent_gone(pd_daemon *d)
{
        g_message("watcher pid %d (procd's parent) exited, so procd is exiting", (int) d->classic.root_pid);
        d->parent_watch = NULL; /* the caller's G_SOURCE_REMOVE ends it */
        d->exit_code = 1;
        g_main_loop_quit(d->loop);
}

static gboolean parent_exit_cb(gint fd, GIOCondition cond, gpointer data)
{
        (void) fd;
        (void) cond;
        parent_gone(data);
        return G_SOURCE_REMOVE;
}

/* Without pidfd_open (kernels before 5.3, valgrind): the parent is gone when procd is
 * reparented. */
static gboolean parent_poll_cb(gpointer data)
{
        pd_daemon *d = data;
        if (getppid() == d->classic.root_pid)
                return G_SOURCE_CONTINUE;
        parent_gone(d);
        return G_SOURCE_REMOVE;
}

/* Classic mode: the log is -L FILE, -L SYSLOG or nothing, and never stderr (any byte on
 * stderr before readiness is an error message to HTCondor's launcher). */
static int classic_logging(pd_daemon *d)
{
        const char *log = d->classic.log;
        if (log && strcmp(log, "SYSLOG") == 0) {
                openlog("procd", LOG_PID, LOG_DAEMON);
                g_log_set_writer_func(syslog_writer, NULL, NULL);
                return 0;
        }
        if (!log) {
                g_log_set_writer_func(pd_log_null_writer, NULL, NULL);
                return 0;
        }
        tr_error err = { 0 };
        if (pd_log_file_open(log, d->classic.log_max_bytes, &d->log_file, &err) < 0) {
                fprintf(stderr, "procd: %s\n", err.msg);
                return -1;
        }
        g_log_set_writer_func(pd_log_file_writer, d->log_file, NULL);
        return 0;
}

/* -C, as condor_procd: a root procd chowns its FIFOs to the principal (without -C: to its
 * real uid); a non-root procd can only serve its own uid. */
static int classic_principal(const pd_classic_args *a, uid_t *principal, uid_t *chown_to)
{
        uid_t euid = geteuid();
        *principal = a->principal_set ? a->principal : euid == 0 ? getuid() : euid;
        if (euid != 0 && *principal != euid) {
                fprintf(stderr, "procd: -C %u: only root may serve another uid\n", (unsigned) *principal);
                return -1;
        }
        *chown_to = euid == 0 && *principal != 0 ? *principal : (uid_t) -1;
        return 0;
}

/* --metrics-textfile: rewrite the file (a failure is logged once until a write works). */
static gboolean metrics_cb(gpointer data)
{
        pd_daemon *d = data;
        tr_error err = { 0 };
        if (pd_metrics_write_file(&d->cm, d->opt.metrics_textfile, &err) < 0) {
                if (!d->metrics_failing)
                        g_warning("metrics textfile: %s", err.msg);
                d->metrics_failing = true;
        } else {
                if (d->metrics_failing)
                        g_message("metrics textfile %s written again", d->opt.metrics_textfile);
                d->metrics_failing = false;
        }
        return G_SOURCE_CONTINUE;
}

/* --pidfile: the daemon's pid (after detaching), written atomically, removed at exit. */
static void write_pidfile(pd_daemon *d)
{
        char tmp[PATH_MAX + 32], text[32];
        snprintf(tmp, sizeof tmp, "%s.tmp.%d", d->opt.pidfile, (int) getpid());
        int len = snprintf(text, sizeof text, "%d\n", (int) getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        bool ok = fd >= 0 && write(fd, text, (size_t) len) == len;
        if (fd >= 0 && close(fd) < 0)
                ok = false;
        if (ok && rename(tmp, d->opt.pidfile) == 0) {
                d->pidfile_written = true;
                return;
        }
        g_warning("pidfile %s: %s", d->opt.pidfile, strerror(errno));
        unlink(tmp);
}

static void registry_log(void *data, const char *message)
{
        (void) data;
        g_message("%s", message);
}

/* Without --foreground: fork, the parent exits once the child is listening. */
static int detach(int *ready_pipe_w)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid > 0) {
                close(p[1]);
                char b;
                ssize_t n = read(p[0], &b, 1);
                _exit(n == 1 ? 0 : 1);
        }
        close(p[0]);
        setsid();
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (nul >= 0) {
                dup2(nul, 0);
                dup2(nul, 1);
                close(nul);
        }
        *ready_pipe_w = p[1];
        return 0;
}

/* cgroup2's favordynmods mount option: Linux 6.0 and later. */
static bool kernel_has_favordynmods(void)
{
        struct utsname u;
        int major = 0;
        return uname(&u) == 0 && sscanf(u.release, "%d.", &major) == 1 && major >= 6;
}

int main(int argc, char **argv)
{
        pd_daemon d = { .signal_fd = -1, .parent_pidfd = -1 };
        char why[256];
        if (pd_classic_args_parse(argc, argv, &d.classic, why, sizeof why) < 0) {
                fprintf(stderr, "procd: %s\n", why);
                pd_classic_args_usage(stderr);
                g_free(d.classic.argv);
                return 1;
        }
        /* the configuration file in either mode; condor_procd's command line (-A) names
         * the address, root family and log itself (options.h) */
        int r = pd_options_parse(d.classic.argc, d.classic.argv, d.classic.classic, &d.opt);
        if (r != 0) {
                g_free(d.classic.argv);
                return r > 0 ? 0 : d.classic.classic ? 1 : 2;
        }
        if (d.classic.classic) {
                /* condor_procd's start: stdin and stdout on /dev/null, never detached; stderr
                 * stays the launcher's pipe until the FIFOs exist (readiness, below) */
                int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (nul >= 0) {
                        dup2(nul, 0);
                        dup2(nul, 1);
                        close(nul);
                }
                d.opt.foreground = true;
                if (d.classic.gid_tracking) {
                        d.opt.gid_min = d.classic.gid_min;
                        d.opt.gid_max = d.classic.gid_max;
                }
                int64_t iv = d.classic.interval_sec;
                d.opt.snapshot_interval = iv == -1 ? PD_MAX_INTERVAL_SEC
                                          : iv == 0 ? 1
                                                    : (uint32_t) MIN(iv, (int64_t) PD_MAX_INTERVAL_SEC);
                if (d.classic.root_pid)
                        d.opt.root_pid = d.classic.root_pid;
                if (classic_logging(&d) < 0) {
                        g_free(d.classic.argv);
                        return 1;
                }
                if (d.classic.debug_wait)
                        sleep(30);
        } else if (d.opt.syslog || (!d.opt.foreground && !d.opt.log_given)) {
                /* a detached procd has no terminal to write to: syslog unless told */
                openlog("procd", LOG_PID, LOG_DAEMON);
                d.log_echo_stderr = !d.opt.foreground;
                g_log_set_writer_func(syslog_writer, &d.log_echo_stderr, NULL);
        } else if (d.opt.journal || g_log_writer_is_journald(STDERR_FILENO)) {
                g_log_set_writer_func(journal_writer, NULL, NULL);
        } else {
                g_log_set_writer_func(stderr_writer, NULL, NULL);
        }
        signal(SIGPIPE, SIG_IGN);
        /* watcher pidfds, cgroup dirfds and client sockets: raise the soft fd limit */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                setrlimit(RLIMIT_NOFILE, &rl);
        }

        pid_t root = d.opt.root_pid ? d.opt.root_pid : getppid();
        if (d.classic.classic && !d.classic.root_pid) {
                /* the parent is the root family's watcher: procd ends with it */
                d.watch_parent = true;
                d.parent_pidfd = (int) syscall(SYS_pidfd_open, root, 0);
                if ((d.parent_pidfd < 0 && errno != ENOSYS) || getppid() != root) {
                        fprintf(stderr, "procd: parent %d is gone or cannot be watched\n", (int) root);
                        d.exit_code = 1;
                        goto early_out;
                }
                d.classic.root_pid = root;
        }
        int detach_fd = -1;
        if (!d.opt.foreground && detach(&detach_fd) < 0) {
                g_warning("cannot detach: %s", strerror(errno));
                return 1;
        }

        tr_error err = { 0 };
        if (tr_hierarchies_discover(&d.hs, &err) < 0)
                g_warning("no cgroup hierarchies (%s): /proc tracking only", err.msg);
        /* procd's ancestors held for the gate before every kill/freeze (trackers/ancestry.h);
         * without memory for it they are walked by pid, as before */
        (void) tr_ancestry_new(&d.hs.ancestry);
        /* watches that stand in for each GET_USAGE's proof that a family's cgroups did not
         * change (trackers/cgroup-notify.h); without inotify every call proves it itself */
        int nk = tr_cg_notify_new(&d.hs.notify);
        if (nk < 0)
                g_message("inotify: %s: each usage call checks its cgroups itself", strerror(-nk));
        /* and a count of cgroup changes kept by the kernel, so that a call in which no cgroup
         * changed anywhere skips even the inotify read (trackers/cgroup-tick.h) */
        tr_cg_tick *tick = NULL;
        int tk = d.hs.notify ? tr_cg_tick_new(&tick) : -ENOTSUP;
        if (tk == 0)
                tr_cg_notify_use_tick(d.hs.notify, tick);
        else if (d.hs.notify)
                g_message("cgroup tick (BPF on the cgroup tracepoints): %s: each usage call reads the inotify fd",
                          strerror(-tk));

        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        d.signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (d.signal_fd < 0) {
                g_warning("signalfd: %s", strerror(errno));
                return 1;
        }

        d.loop = g_main_loop_new(NULL, TRUE); /* running: pd_fd_mux_run turns until a quit */
        /* NULL without epoll: each fd then gets a source of its own */
        d.fd_mux = pd_fd_mux_new();
        if (pd_registry_new(&d.hs, root, d.opt.snapshot_interval, &d.reg, &err) < 0) {
                g_warning("registry: %s", err.msg);
                d.exit_code = 1;
                goto out;
        }
        pd_registry_set_fd_mux(d.reg, d.fd_mux);
        pd_registry_set_log(d.reg, registry_log, &d);
        /* HTCondor's procd started by condor_master in a root cgroup (no systemd, no
         * delegated cgroup): family cgroups by default, under a base of its own */
        char root_base[PATH_MAX];
        if (d.classic.classic && geteuid() == 0 && !d.opt.famcg.base)
                d.opt.famcg.root_base = pd_famcg_root_base(d.classic.address, root_base, sizeof root_base);
        if (pd_famcg_new(&d.hs, &d.opt.famcg, &d.famcg) < 0) {
                g_warning("out of memory");
                d.exit_code = 1;
                goto out;
        }
        pd_registry_set_family_cgroups(d.reg, d.famcg);
        if (pd_famcg_note(d.famcg))
                g_message("%s", pd_famcg_note(d.famcg));
        else if (pd_famcg_base(d.famcg))
                g_message("family cgroups under %s", pd_famcg_base(d.famcg));
        if (pd_famcg_base(d.famcg) && d.hs.v2 >= 0 && !d.hs.h[d.hs.v2].favordynmods && kernel_has_favordynmods())
                g_message("cgroup2 at %s is mounted without favordynmods: a REGISTER's move into the family cgroup "
                          "may wait for an RCU grace period (3-14 ms measured); `mount -o remount,favordynmods %s` "
                          "removes that wait (docs/admin.md)",
                          d.hs.h[d.hs.v2].mount_point, d.hs.h[d.hs.v2].mount_point);
        else
                g_message("no family cgroups: %s", pd_famcg_off_reason(d.famcg));
        pd_stats_init(&d.stats);
        d.cm = (pd_commands) {
                .reg = d.reg,
                .stats = &d.stats,
                .gid_min = d.opt.gid_min,
                .gid_max = d.opt.gid_max,
                .kill_timeout_usec = (uint64_t) d.opt.kill_timeout * 1000000ull,
                .freeze_timeout_usec = (uint64_t) d.opt.freeze_timeout * 1000000ull,
                .quit = quit_cb,
                .quit_data = &d,
                .classic_cgroup_base = d.opt.classic_cgroup_base[0] ? d.opt.classic_cgroup_base : NULL,
        };
        d.events = pd_events_new();
        pd_events_set_job_lookup(d.events, events_job_of, &d.cm);
        d.cm.events = d.events;

        pd_registry_set_watcher_hook(d.reg, pd_cmd_watcher_exited, &d.cm);
        if ((!d.classic.classic || d.opt.socket_given) &&
            pd_dbus_server_new(d.opt.socket_path, d.opt.group, d.opt.max_conns_per_uid, d.opt.evict_idle_sec, &d.cm,
                               &d.server, &err) < 0) {
                g_warning("%s", err.msg);
                if (d.classic.classic)
                        fprintf(stderr, "procd: %s\n", err.msg);
                d.exit_code = 1;
                goto out;
        }
        if (d.classic.classic) {
                uid_t principal, chown_to;
                if (classic_principal(&d.classic, &principal, &chown_to) < 0) {
                        d.exit_code = 1;
                        goto out;
                }
                pd_classic_options co = {
                        .address = d.classic.address,
                        .principal = principal,
                        .chown_to = chown_to,
                        .gid_allocate = d.classic.gid_tracking && !d.classic.gid_external,
                        .gid_associate = d.classic.gid_tracking && d.classic.gid_external,
                        .root_watcher = d.watch_parent ? root : 0,
                        .housekeeping_sec = d.opt.snapshot_interval,
                        .lost = classic_lost_cb,
                        .lost_data = &d,
                };
                if (pd_classic_server_new(&co, &d.cm, &d.classic_server, &err) < 0) {
                        g_warning("%s", err.msg);
                        fprintf(stderr, "procd: %s\n", err.msg);
                        d.exit_code = 1;
                        goto out;
                }
                if (d.parent_pidfd >= 0)
                        d.parent_watch = pd_fd_mux_add(d.fd_mux, d.parent_pidfd, G_IO_IN, parent_exit_cb, &d);
                else if (d.watch_parent)
                        d.parent_watch = pd_fd_mux_add_timer(d.fd_mux, 1000, parent_poll_cb, &d);
        }
        /* the kernel's notifications of family cgroups, only where someone can subscribe
         * (the D-Bus face): a classic-only procd keeps no inotify watch or eventfd per family */
        if (d.server) {
                d.event_watch = pd_event_watch_new(d.reg, d.events);
                if (!d.event_watch)
                        g_warning("no inotify or epoll: no events from the kernel (OOM kills, empty families)");
        }
        /* the families of the state file, once the socket is ours (a second procd refused
         * above never reads or writes it); clients are served when the loop runs */
        state_path_init(&d);
        if (d.state_path[0]) {
                pd_restore_stats rs;
                pd_restore(&d.cm, d.state_path, &rs);
                d.stats.restore_wall_usec = rs.wall_usec;
                d.stats.restored_families = rs.restored;
                d.stats.restore_in_file = rs.in_file;
                if (rs.in_file)
                        g_message("restored %zu of %zu families in %.1f ms (CPU %.1f ms)", rs.restored, rs.in_file,
                                  (double) rs.wall_usec / 1000.0, (double) rs.cpu_usec / 1000.0);
                if (rs.in_file) /* kept for every new subscriber (events.h) */
                        pd_events_restored(d.events, rs.restored);
                pd_persist_init(&d.persist);
                pd_registry_set_changed_hook(d.reg, save_state, &d);
                save_state(&d);
        }
        pd_fd_mux_entry *sig_watch = pd_fd_mux_add(d.fd_mux, d.signal_fd, G_IO_IN, signal_cb, &d);

        g_message("procd %s listening on %s%s%s (root family %d, cgroups %s, configuration %s)", PROCD_VERSION,
                  d.server ? d.opt.socket_path : "", d.server && d.classic_server ? " and " : "",
                  d.classic_server ? d.classic.address : "", (int) root, tr_cgroup_mode_name(d.hs.mode),
                  d.opt.config_path[0] ? d.opt.config_path : "none");
        if (d.opt.file_ignored[0])
                g_message("%s: keys left out in condor_procd's mode (its command line names them): %s", d.opt.config_path,
                          d.opt.file_ignored);
        if (d.classic.classic) {
                /* readiness as condor_procd: the launcher reads EOF on our stderr */
                int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (nul >= 0) {
                        dup2(nul, 2);
                        close(nul);
                }
        }
        if (d.opt.metrics_textfile[0]) {
                metrics_cb(&d);
                d.metrics_src = g_timeout_add_seconds(d.opt.metrics_interval, metrics_cb, &d);
        }
        if (d.opt.pidfile[0])
                write_pidfile(&d);
        notify_ready();
        if (d.opt.ready_fd >= 0)
                close(d.opt.ready_fd);
        if (detach_fd >= 0) {
                ssize_t w = write(detach_fd, "R", 1);
                (void) w;
                close(detach_fd);
                /* ready: the inherited stderr is let go (syslog has everything) */
                d.log_echo_stderr = false;
                int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (nul >= 0) {
                        dup2(nul, 2);
                        close(nul);
                }
        }

        pd_fd_mux_run(d.fd_mux, d.loop);
        pd_fd_mux_remove(sig_watch);
        if (d.metrics_src) {
                g_source_remove(d.metrics_src);
                unlink(d.opt.metrics_textfile); /* no stale numbers: the alert sees procd gone */
        }
        if (d.pidfile_written)
                unlink(d.opt.pidfile);
        pd_fd_mux_remove(TR_TAKE_PTR(d.parent_watch));
        pd_cmd_cancel_pending(&d.cm); /* a Kill/Suspend/ContinueFamily in progress gets an error reply */
        pd_cmd_clear(&d.cm);
        g_message("shutting down: %zu families registered", pd_registry_count(d.reg));
out:
        pd_classic_server_free(d.classic_server);
        pd_dbus_server_free(d.server);
        pd_event_watch_free(d.event_watch);
        pd_registry_free(d.reg);
        pd_events_free(d.events);
        pd_persist_clear(&d.persist);
        pd_stats_clear(&d.stats);
        pd_famcg_free(d.famcg);
        pd_fd_mux_free(d.fd_mux); /* after every owner of an entry; before their fds close */
        g_main_loop_unref(d.loop);
        if (d.signal_fd >= 0)
                close(d.signal_fd);
        dbus_shutdown();
early_out:
        if (d.parent_pidfd >= 0)
                close(d.parent_pidfd);
        tr_ancestry_free(d.hs.ancestry);
        tr_cg_notify_free(d.hs.notify);
        pd_log_file_close(d.log_file);
        g_free(d.classic.argv);
        return d.exit_code;
}
