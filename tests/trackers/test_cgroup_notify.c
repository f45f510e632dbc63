/* test_cgroup_notify.c - which directories changed, told by inotify (cgroup-notify.c): a
 * mark is quiet only when it was proven and nothing happened to its directory since; on a
 * tmpfs tree (inotify reports it as it reports cgroupfs: the VFS makes the events) and, as
 * root, on a real cgroup whose cgroup.procs is written. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgtest.h"
#include "trackers/cgroup-notify.h"
#include "trackers/cgroup-tick.h"

typedef struct tree {
        char path[64];
        int fd; /* O_PATH of path */
} tree;

static void tree_make(tree *t)
{
        snprintf(t->path, sizeof t->path, "/dev/shm/procd-notify.XXXXXX");
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(t->path));
        t->fd = open(t->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CU_ASSERT_FATAL(t->fd >= 0);
}

static void tree_rm(tree *t)
{
        close(t->fd);
        rm_tree(t->path);
}

/* One case: after a sync, m is quiet or not. */
static void check_quiet(tr_cg_notify *n, const tr_cg_mark *m, bool want, const char *what)
{
        CU_ASSERT_EQUAL(tr_cg_notify_sync(n), 0);
        bool q = tr_cg_notify_quiet(n, m);
        CU_ASSERT_EQUAL(q, want);
        if (q != want)
                printf("\n  case '%s': quiet %d, want %d", what, q, want);
}

static void sub(const tree *t, const char *rel, char *out, size_t size) { snprintf(out, size, "%s/%s", t->path, rel); }

static void test_subdirs(void)
{
        tr_cg_notify *n = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cg_notify_new(&n), 0);
        tree t;
        tree_make(&t);
        put_file(t.path, "v", "0\n"); /* made before the watch: a file made is IN_CREATE too */
        tr_cg_mark m = TR_CG_MARK_INIT;
        check_quiet(n, &m, false, "no watch: never quiet");
        CU_ASSERT_EQUAL(tr_cg_notify_watch(n, t.fd, false, &m), 0);
        check_quiet(n, &m, false, "watched, not proven yet");
        tr_cg_notify_prove(n, &m);
        check_quiet(n, &m, true, "proven, nothing since");
        char p[PATH_MAX], q[PATH_MAX];
        sub(&t, "a", p, sizeof p);
        CU_ASSERT_EQUAL(mkdir(p, 0755), 0);
        check_quiet(n, &m, false, "subdirectory made");
        tr_cg_notify_prove(n, &m);
        check_quiet(n, &m, true, "proven again");
        put_file(t.path, "v", "1\n");
        check_quiet(n, &m, true, "a file written: not a subdirectory change");
        sub(&t, "b", q, sizeof q);
        CU_ASSERT_EQUAL(rename(p, q), 0);
        check_quiet(n, &m, false, "subdirectory renamed");
        tr_cg_notify_prove(n, &m);
        CU_ASSERT_EQUAL(rmdir(q), 0);
        check_quiet(n, &m, false, "subdirectory removed");
        tr_cg_notify_prove(n, &m);
        sub(&t, "c/d", p, sizeof p);
        mkdirs(t.path, "c");
        check_quiet(n, &m, false, "another subdirectory made");
        tr_cg_notify_prove(n, &m); /* as of that sync */
        CU_ASSERT_EQUAL(mkdir(p, 0755), 0);
        check_quiet(n, &m, true, "a grandchild: the child's watch tells, not this one");
        CU_ASSERT_EQUAL(tr_cg_notify_watches(n), 1u);
        tr_cg_notify_unwatch(n, &m);
        CU_ASSERT_EQUAL(tr_cg_notify_watches(n), 0u);
        check_quiet(n, &m, false, "unwatched");
        tree_rm(&t);
        tr_cg_notify_free(n);
}

static void test_writes_and_sharing(void)
{
        tr_cg_notify *n = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cg_notify_new(&n), 0);
        tree t;
        tree_make(&t);
        put_file(t.path, "memory.events", "oom 0\n"); /* made before the watch: made is IN_CREATE */
        put_file(t.path, "cgroup.procs", "");
        put_file(t.path, "cgroup.threads", "");
        tr_cg_mark dirs = TR_CG_MARK_INIT, writes = TR_CG_MARK_INIT;
        CU_ASSERT_EQUAL(tr_cg_notify_watch(n, t.fd, false, &dirs), 0);
        CU_ASSERT_EQUAL(tr_cg_notify_watch(n, t.fd, true, &writes), 0);
        CU_ASSERT_EQUAL(tr_cg_notify_watches(n), 1u); /* one directory, one watch */
        tr_cg_notify_prove(n, &dirs);
        tr_cg_notify_prove(n, &writes);
        check_quiet(n, &writes, true, "with writes: proven, nothing since");
        put_file(t.path, "memory.events", "oom 1\n");
        check_quiet(n, &writes, true, "another file written (the kernel's event files): no change");
        put_file(t.path, "cgroup.procs", "123\n");
        check_quiet(n, &writes, false, "cgroup.procs written (a process moved in)");
        tr_cg_notify_prove(n, &writes);
        put_file(t.path, "cgroup.threads", "124\n");
        check_quiet(n, &writes, false, "cgroup.threads written (a thread moved in)");
        check_quiet(n, &dirs, false, "the shared watch: the other mark proves again too");
        tr_cg_notify_prove(n, &writes);
        char p[PATH_MAX];
        sub(&t, "cgroup.procs", p, sizeof p);
        CU_ASSERT_EQUAL(chmod(p, 0666), 0);
        check_quiet(n, &writes, false, "a file's mode changed (a delegation)");
        /* one mark given up: the watch stays for the other */
        tr_cg_notify_unwatch(n, &dirs);
        CU_ASSERT_EQUAL(tr_cg_notify_watches(n), 1u);
        tr_cg_notify_prove(n, &writes);
        check_quiet(n, &writes, true, "the other mark still watched");
        tr_cg_notify_unwatch(n, &writes);
        CU_ASSERT_EQUAL(tr_cg_notify_watches(n), 0u);
        tree_rm(&t);
        tr_cg_notify_free(n);
}

static void test_removed_dir(void)
{
        tr_cg_notify *n = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cg_notify_new(&n), 0);
        tree t;
        tree_make(&t);
        mkdirs(t.path, "gone");
        char p[PATH_MAX];
        sub(&t, "gone", p, sizeof p);
        int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CU_ASSERT_FATAL(fd >= 0);
        tr_cg_mark m = TR_CG_MARK_INIT;
        CU_ASSERT_EQUAL(tr_cg_notify_watch(n, fd, false, &m), 0);
        tr_cg_notify_prove(n, &m);
        CU_ASSERT_EQUAL(rmdir(p), 0);
        /* tmpfs: IN_DELETE_SELF comes when the directory's last reference goes
         * (fsnotify_inoderemove, from dentry_unlink_inode), not at rmdir while an fd holds
         * it (on cgroupfs never: cgroup-notify.h); the parent's watch tells the removal */
        check_quiet(n, &m, true, "removed, its fd still held: no event of its own yet");
        close(fd);
        check_quiet(n, &m, false, "the directory removed");
        tr_cg_notify_prove(n, &m);
        check_quiet(n, &m, false, "a dropped watch is never quiet again");
        CU_ASSERT_EQUAL(tr_cg_notify_watches(n), 0u); /* the kernel's IN_IGNORED: no longer looked up */
        tr_cg_notify_unwatch(n, &m);
        tree_rm(&t);
        tr_cg_notify_free(n);
}

/* More events than the kernel queues (fs.inotify.max_queued_events): every mark changed. */
static void test_overflow(void)
{
        tr_cg_notify *n = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cg_notify_new(&n), 0);
        tree t, other;
        tree_make(&t);
        tree_make(&other);
        tr_cg_mark busy = TR_CG_MARK_INIT, calm = TR_CG_MARK_INIT;
        CU_ASSERT_EQUAL(tr_cg_notify_watch(n, t.fd, false, &busy), 0);
        CU_ASSERT_EQUAL(tr_cg_notify_watch(n, other.fd, false, &calm), 0);
        CU_ASSERT_EQUAL(tr_cg_notify_sync(n), 0);
        tr_cg_notify_prove(n, &busy);
        tr_cg_notify_prove(n, &calm);
        char text[32] = "16384";
        long queued = 16384;
        int qfd = open("/proc/sys/fs/inotify/max_queued_events", O_RDONLY | O_CLOEXEC);
        if (qfd >= 0) {
                ssize_t k = read(qfd, text, sizeof text - 1);
                text[k > 0 ? k : 0] = '\0';
                queued = strtol(text, NULL, 10);
                close(qfd);
        }
        char p[PATH_MAX];
        sub(&t, "f", p, sizeof p);
        for (long i = 0; i <= queued / 2; i++) { /* a create and a delete each */
                int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                CU_ASSERT_FATAL(fd >= 0);
                close(fd);
                unlink(p);
        }
        check_quiet(n, &calm, false, "a queue overflow: the calm directory counts as changed too");
        tr_cg_notify_prove(n, &calm);
        check_quiet(n, &calm, true, "proven after the overflow");
        tr_cg_notify_unwatch(n, &busy);
        tr_cg_notify_unwatch(n, &calm);
        tree_rm(&t);
        tree_rm(&other);
        tr_cg_notify_free(n);
}

/* A notify with a tick (cgroup-tick.h); NULL, skipped as `what`, where none can be made. */
static tr_cg_notify *notify_with_tick(const char *what)
{
        tr_cg_tick *t = NULL;
        int r = tr_cg_tick_new(&t);
        if (r < 0) {
                ts_skip(what, "no cgroup tick here: %s", strerror(-r));
                return NULL;
        }
        tr_cg_notify *n = NULL;
        CU_ASSERT_EQUAL_FATAL(tr_cg_notify_new(&n), 0);
        tr_cg_notify_use_tick(n, t);
        return n;
}

/* Whether some sync, with nothing changed here, was answered by the tick alone, m quiet
 * then.  Other programs change cgroups too: a sync after the tick moved counts every mark
 * as changed, and m is proven again (nothing changed in this cgroup) for the next try. */
static bool tick_answers(tr_cg_notify *n, tr_cg_mark *m)
{
        for (int i = 0; i < 200; i++) {
                unsigned before = tr_cg_notify_tick_skips(n);
                CU_ASSERT_EQUAL(tr_cg_notify_sync(n), 0);
                if (tr_cg_notify_tick_skips(n) > before) {
                        CU_ASSERT_TRUE(tr_cg_notify_quiet(n, m));
                        return true;
                }
                CU_ASSERT_FALSE(tr_cg_notify_quiet(n, m)); /* the tick moved: changed */
                tr_cg_notify_prove(n, m);
                usleep(1000);
        }
        return false;
}

/* A real cgroup: a pid written to its cgroup.procs, and a child cgroup made, are events;
 * with the tick (cgroup-tick.h) too, where syncs with nothing changed read nothing. */
static void run_cgroup(bool with_tick)
{
        const char *what = with_tick ? "notify on a cgroup, with the tick" : "notify on a cgroup";
        if (!root_and_base(what))
                return;
        tr_cg_notify *n = NULL;
        if (with_tick) {
                if (!(n = notify_with_tick(what)))
                        return;
        } else {
                CU_ASSERT_EQUAL_FATAL(tr_cg_notify_new(&n), 0);
        }
        const tr_hierarchies *hs = ts_hierarchies();
        tr_cgroup *cg = make_cg(hs, with_tick ? "notify-tick" : "notify");
        CU_ASSERT_PTR_NOT_NULL_FATAL(cg);
        int i = hs->v2 >= 0 ? hs->v2 : tr_cgroup_primary_index(cg);
        tr_cg_mark m = TR_CG_MARK_INIT;
        CU_ASSERT_EQUAL(tr_cg_notify_watch(n, tr_cgroup_dirfd(cg, i), true, &m), 0);
        CU_ASSERT_EQUAL(tr_cg_notify_sync(n), 0); /* a usage call's order: sync, read, prove */
        tr_cg_notify_prove(n, &m);
        if (with_tick) {
                CU_ASSERT_TRUE(tick_answers(n, &m));
        } else {
                check_quiet(n, &m, true, "cgroup: proven, nothing since");
        }
        pid_t p = ts_fork(ts_sleep_forever, NULL);
        CU_ASSERT_FATAL(p > 1);
        char v[16];
        snprintf(v, sizeof v, "%d", (int) p);
        tr_error err = { 0 };
        CU_ASSERT_EQUAL(tr_cgroup_write(cg, i, "cgroup.procs", v, &err), 0); /* its own cgroup.procs */
        check_quiet(n, &m, false, "cgroup: a process moved in");
        tr_cg_notify_prove(n, &m);
        if (with_tick)
                CU_ASSERT_TRUE(tick_answers(n, &m));
        char child_name[32];
        snprintf(child_name, sizeof child_name, "%s/child", with_tick ? "notify-tick" : "notify");
        tr_cgroup *child = make_cg(hs, child_name);
        CU_ASSERT_PTR_NOT_NULL(child);
        check_quiet(n, &m, false, "cgroup: a child cgroup made");
        tr_cg_notify_unwatch(n, &m);
        tr_cg_notify_free(n);
        ts_kill_reap(p);
        if (child)
                kill_destroy(child);
        kill_destroy(cg);
}

static void test_cgroup(void) { run_cgroup(false); }
static void test_cgroup_tick(void) { run_cgroup(true); }

/* A watch outside cgroupfs (this tmpfs tree) is no change the tick sees: with one, every
 * sync reads the queue, and its events count as without a tick. */
static void test_tick_foreign(void)
{
        if (!ts_need_root("the tick beside a tmpfs watch"))
                return;
        tr_cg_notify *n = notify_with_tick("the tick beside a tmpfs watch");
        if (!n)
                return;
        tree tr;
        tree_make(&tr);
        tr_cg_mark m = TR_CG_MARK_INIT;
        CU_ASSERT_EQUAL_FATAL(tr_cg_notify_watch(n, tr.fd, false, &m), 0);
        CU_ASSERT_EQUAL(tr_cg_notify_sync(n), 0);
        tr_cg_notify_prove(n, &m);
        check_quiet(n, &m, true, "tmpfs beside the tick: proven");
        char d[PATH_MAX];
        sub(&tr, "x", d, sizeof d);
        CU_ASSERT_EQUAL(mkdir(d, 0700), 0);
        check_quiet(n, &m, false, "tmpfs beside the tick: a subdirectory made");
        CU_ASSERT_EQUAL(tr_cg_notify_tick_skips(n), 0);
        tr_cg_notify_unwatch(n, &m);
        tr_cg_notify_free(n);
        tree_rm(&tr);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "subdirectories made, renamed, removed", test_subdirs },
                { "writes, and one watch shared by two marks", test_writes_and_sharing },
                { "the watched directory removed", test_removed_dir },
                { "a queue overflow", test_overflow },
                { "a real cgroup: a process moved in, a child made", test_cgroup },
                { "the same with the tick", test_cgroup_tick },
                { "the tick beside a tmpfs watch", test_tick_foreign },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("cgroup notify", NULL, NULL, tests);
}
