/* event-watch.c - kernel notifications of family cgroups -> events (see event-watch.h). */
#include "event-watch.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "trackers/cgroup.h"
#include "trackers/util.h"

typedef struct fam_watch {
        pd_event_watch *w;
        pid_t root_pid;
        uint64_t root_start;
        int wd_events;      /* v2 cgroup.events, -1: none */
        int wd_memory;      /* v2 memory.events, -1: none */
        int efd;            /* v1 OOM eventfd, -1: none */
        bool populated;     /* last seen (true until the kernel says otherwise) */
        uint64_t oom_total; /* last seen oom_kills of the family */
        guint recheck;      /* v1: re-read of oom_kill after the notifier */
        int rechecks_left;
} fam_watch;

struct pd_event_watch {
        pd_registry *reg;
        pd_events *ev;
        int ifd, epfd;
        pd_fd_mux_entry *iwatch, *ewatch; /* ifd and epfd (the registry's fd mux) */
        GHashTable *by_root; /* root pid -> fam_watch (owned) */
        GHashTable *by_wd;   /* wd -> fam_watch */
        bool warned_watches; /* fs.inotify.max_user_watches reached: said once */
};

/* The family the watch was made for, while it is still registered with that root. */
static pd_family *watched_family(fam_watch *fw)
{
        pd_family *f = pd_registry_find(fw->w->reg, fw->root_pid);
        return f && f->parent && f->root_start_ticks == fw->root_start && f->tf ? f : NULL;
}

static bool read_oom_total(pd_family *f, uint64_t *out)
{
        tr_usage u;
        tr_usage_init(&u);
        if (tr_family_usage_want(f->tf, TR_WANT_OOM, &u, NULL) < 0 || !u.oom_kills.available)
                return false;
        *out = u.oom_kills.value;
        return true;
}

/* true when the counter grew (the event was emitted) */
static bool check_oom(fam_watch *fw)
{
        pd_family *f = watched_family(fw);
        uint64_t total;
        pd_events_count_kernel(fw->w->ev, 0, 1);
        if (!f || !read_oom_total(f, &total) || total <= fw->oom_total)
                return false;
        pd_event e = { .kind = PD_EVENT_OOM_KILL, .root_pid = fw->root_pid, .count = total - fw->oom_total,
                       .total = total };
        fw->oom_total = total;
        pd_events_emit(fw->w->ev, &e);
        return true;
}

static void check_populated(fam_watch *fw)
{
        pd_family *f = watched_family(fw);
        bool populated = true;
        pd_events_count_kernel(fw->w->ev, 0, 1);
        if (!f || tr_family_populated(f->tf, &populated, NULL) < 0)
                return;
        if (populated || !fw->populated) {
                fw->populated = populated;
                return;
        }
        fw->populated = false;
        tr_usage u;
        tr_usage_init(&u);
        bool have = pd_events_listened(fw->w->ev) && tr_family_usage(f->tf, &u, NULL) >= 0;
        pd_event e = { .kind = PD_EVENT_EMPTIED, .root_pid = fw->root_pid, .usage = have ? &u : NULL };
        pd_events_emit(fw->w->ev, &e);
}

static void disarm(fam_watch *fw)
{
        pd_event_watch *w = fw->w;
        if (fw->wd_events >= 0) {
                g_hash_table_remove(w->by_wd, GINT_TO_POINTER(fw->wd_events));
                inotify_rm_watch(w->ifd, fw->wd_events);
        }
        if (fw->wd_memory >= 0) {
                g_hash_table_remove(w->by_wd, GINT_TO_POINTER(fw->wd_memory));
                inotify_rm_watch(w->ifd, fw->wd_memory);
        }
        if (fw->efd >= 0) {
                epoll_ctl(w->epfd, EPOLL_CTL_DEL, fw->efd, NULL);
                close(fw->efd);
        }
        if (fw->recheck)
                g_source_remove(fw->recheck);
        g_free(fw);
}

static void fam_watch_free(gpointer p) { disarm(p); }

/* An inotify watch on file in the cgroup's v2 directory; -1 when it cannot be had (a wd
 * another family holds - two families on one cgroup - is left to that one). */
static int watch_file(pd_event_watch *w, fam_watch *fw, tr_cgroup *cg, const char *file)
{
        const tr_hierarchies *hs = tr_cgroup_hierarchies(cg);
        const char *path = hs->v2 >= 0 ? tr_cgroup_path(cg, hs->v2) : NULL;
        if (!path || !tr_cgroup_has_file(cg, hs->v2, file))
                return -1;
        char dir[4096], full[4200];
        if (tr_hierarchy_fs_path(&hs->h[hs->v2], path, dir, sizeof dir, NULL) < 0)
                return -1;
        snprintf(full, sizeof full, "%s/%s", dir, file);
        int wd = inotify_add_watch(w->ifd, full, IN_MODIFY);
        if (wd < 0 && errno == ENOSPC && !w->warned_watches) {
                w->warned_watches = true;
                g_warning("family %d: no inotify watch left (fs.inotify.max_user_watches): families from now on "
                          "get no FamilyEmptied/FamilyOomKill from the kernel",
                          (int) fw->root_pid);
        }
        if (wd < 0 || g_hash_table_contains(w->by_wd, GINT_TO_POINTER(wd)))
                return -1;
        g_hash_table_insert(w->by_wd, GINT_TO_POINTER(wd), fw);
        return wd;
}

/* v1: an eventfd told by the memory cgroup's OOM notifier (cgroup.event_control). */
static int oom_eventfd(pd_event_watch *w, fam_watch *fw, tr_cgroup *cg)
{
        const tr_hierarchies *hs = tr_cgroup_hierarchies(cg);
        int i = hs->v1_of[TR_CTRL_MEMORY];
        int dirfd = i >= 0 && tr_cgroup_path(cg, i) ? tr_cgroup_dirfd(cg, i) : -1;
        if (dirfd < 0)
                return -1;
        _cleanup_close_ int ocfd = openat(dirfd, "memory.oom_control", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int ctl = openat(dirfd, "cgroup.event_control", O_WRONLY | O_CLOEXEC);
        _cleanup_close_ int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (ocfd < 0 || ctl < 0 || efd < 0)
                return -1;
        char line[32];
        int n = snprintf(line, sizeof line, "%d %d", efd, ocfd);
        if (write(ctl, line, (size_t) n) != n)
                return -1;
        struct epoll_event ee = { .events = EPOLLIN, .data.ptr = fw };
        if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, efd, &ee) < 0)
                return -1;
        return TR_TAKE_FD(efd);
}

static void arm(pd_event_watch *w, pd_family *f)
{
        g_hash_table_remove(w->by_root, GINT_TO_POINTER(f->root_pid));
        tr_cgroup *cg = f->tf ? tr_family_cgroup(f->tf) : NULL;
        if (!cg)
                return;
        fam_watch *fw = g_new0(fam_watch, 1);
        *fw = (fam_watch) { .w = w, .root_pid = f->root_pid, .root_start = f->root_start_ticks, .wd_events = -1,
                            .wd_memory = -1, .efd = -1, .populated = true };
        bool populated = true;
        if (tr_family_populated(f->tf, &populated, NULL) >= 0)
                fw->populated = populated;
        read_oom_total(f, &fw->oom_total);
        if (w->ifd >= 0) {
                fw->wd_events = watch_file(w, fw, cg, "cgroup.events");
                fw->wd_memory = watch_file(w, fw, cg, "memory.events");
        }
        if (w->epfd >= 0 && fw->wd_memory < 0)
                fw->efd = oom_eventfd(w, fw, cg);
        g_hash_table_insert(w->by_root, GINT_TO_POINTER(f->root_pid), fw);
}

static void family_hook(void *data, pd_family *f, pd_family_change what)
{
        pd_event_watch *w = data;
        switch (what) {
        case PD_FAMILY_REGISTERED:
                arm(w, f);
                pd_events_family(w->ev, PD_EVENT_REGISTERED, f->root_pid);
                break;
        case PD_FAMILY_RESTORED:
        case PD_FAMILY_RETRACKED:
                arm(w, f);
                break;
        case PD_FAMILY_REMOVED:
                g_hash_table_remove(w->by_root, GINT_TO_POINTER(f->root_pid));
                break;
        case PD_FAMILY_EMPTIED: { /* a /proc family, found by a snapshot */
                tr_usage u;
                tr_usage_init(&u);
                bool have = f->tf && pd_events_listened(w->ev) && tr_family_usage(f->tf, &u, NULL) >= 0;
                pd_event e = { .kind = PD_EVENT_EMPTIED, .root_pid = f->root_pid, .usage = have ? &u : NULL };
                pd_events_emit(w->ev, &e);
                break;
        }
        }
}

static gboolean inotify_cb(gint fd, GIOCondition cond, gpointer data)
{
        pd_event_watch *w = data;
        (void) cond;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t n = read(fd, buf, sizeof buf);
        pd_events_count_kernel(w->ev, 1, 0);
        for (ssize_t off = 0; n > 0 && off < n;) {
                const struct inotify_event *ie = (const void *) (buf + off);
                off += (ssize_t) (sizeof *ie + ie->len);
                fam_watch *fw = g_hash_table_lookup(w->by_wd, GINT_TO_POINTER(ie->wd));
                if (fw && (ie->mask & IN_IGNORED)) {
                        /* the cgroup was removed (a kill-on-watcher-exit family): the wd is
                         * gone, and may be given to another file later */
                        g_hash_table_remove(w->by_wd, GINT_TO_POINTER(ie->wd));
                        if (fw->wd_events == ie->wd)
                                fw->wd_events = -1;
                        if (fw->wd_memory == ie->wd)
                                fw->wd_memory = -1;
                        continue;
                }
                if (!fw || !(ie->mask & IN_MODIFY))
                        continue;
                if (ie->wd == fw->wd_memory)
                        check_oom(fw);
                else
                        check_populated(fw); /* may emit; fw stays (removal happens at unregister) */
        }
        return G_SOURCE_CONTINUE;
}

static gboolean recheck_cb(gpointer data)
{
        fam_watch *fw = data;
        if (check_oom(fw) || --fw->rechecks_left <= 0) {
                fw->recheck = 0;
                return G_SOURCE_REMOVE;
        }
        return G_SOURCE_CONTINUE;
}

static gboolean epoll_cb(gint fd, GIOCondition cond, gpointer data)
{
        pd_event_watch *w = data;
        (void) cond;
        struct epoll_event evs[16];
        int n = epoll_wait(fd, evs, 16, 0);
        pd_events_count_kernel(w->ev, 1, 0);
        for (int i = 0; i < n; i++) {
                fam_watch *fw = evs[i].data.ptr;
                uint64_t v;
                if (read(fw->efd, &v, sizeof v) < 0 && errno != EAGAIN)
                        continue;
                /* the notifier runs before the OOM killer picks its victim */
                if (!check_oom(fw) && !fw->recheck) {
                        fw->rechecks_left = PD_EVENT_WATCH_OOM_RECHECKS;
                        fw->recheck = g_timeout_add(PD_EVENT_WATCH_OOM_RECHECK_MS, recheck_cb, fw);
                }
        }
        return G_SOURCE_CONTINUE;
}

pd_event_watch *pd_event_watch_new(pd_registry *reg, pd_events *ev)
{
        int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        int epfd = epoll_create1(EPOLL_CLOEXEC);
        if (ifd < 0 && epfd < 0)
                return NULL;
        pd_event_watch *w = g_new0(pd_event_watch, 1);
        w->reg = reg;
        w->ev = ev;
        w->ifd = ifd;
        w->epfd = epfd;
        w->by_root = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, fam_watch_free);
        w->by_wd = g_hash_table_new(g_direct_hash, g_direct_equal);
        /* both fire only on a family's events: in procd's fd set when there is one */
        pd_fd_mux *mux = pd_registry_fd_mux(reg);
        if (ifd >= 0)
                w->iwatch = pd_fd_mux_add(mux, ifd, G_IO_IN, inotify_cb, w);
        if (epfd >= 0)
                w->ewatch = pd_fd_mux_add(mux, epfd, G_IO_IN, epoll_cb, w);
        pd_registry_set_family_hook(reg, family_hook, w);
        return w;
}

void pd_event_watch_free(pd_event_watch *w)
{
        if (!w)
                return;
        pd_registry_set_family_hook(w->reg, NULL, NULL);
        g_hash_table_destroy(w->by_root);
        g_hash_table_destroy(w->by_wd);
        pd_fd_mux_remove(w->iwatch);
        pd_fd_mux_remove(w->ewatch);
        if (w->ifd >= 0)
                close(w->ifd);
        if (w->epfd >= 0)
                close(w->epfd);
        g_free(w);
}

unsigned pd_event_watch_armed(const pd_event_watch *w) { return w ? g_hash_table_size(w->by_root) : 0; }
