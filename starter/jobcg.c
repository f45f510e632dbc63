/* jobcg.c - strategy choice and the common job subtree (<top>/job, <top>/starter). */
#include "jobcg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "joblimits.h"
#include "orphans.h"
#include "track.h"
#include "trackers/util.h"

static int fs_path(const tr_hierarchies *hs, int i, const char *cg, char *buf, size_t size)
{
        return tr_hierarchy_fs_path(&hs->h[i], cg, buf, size, NULL);
}

int st_cpuset_fill(const tr_hierarchies *hs, const char *path, tr_error *err)
{
        int i = hs->v1_of[TR_CTRL_CPUSET];
        if (i < 0)
                return 0;
        char prefix[PATH_MAX];
        size_t len = strlen(path);
        if (len >= sizeof prefix)
                return tr_error_set(err, ENAMETOOLONG, "cgroup path too long: %s", path);
        for (size_t k = 1; k <= len; k++) {
                if (k != len && path[k] != '/')
                        continue;
                memcpy(prefix, path, k);
                prefix[k] = '\0';
                char dir[PATH_MAX], parent[PATH_MAX];
                if (fs_path(hs, i, prefix, dir, sizeof dir) < 0)
                        continue;
                snprintf(parent, sizeof parent, "%s", dir);
                char *slash = strrchr(parent, '/');
                if (!slash || slash == parent)
                        continue;
                *slash = '\0';
                _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                _cleanup_close_ int pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0 || pfd < 0)
                        continue; /* outside what this mount shows, or not there */
                static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
                for (size_t f = 0; f < 2; f++) {
                        char val[1024];
                        int r = tr_read_file_at(dfd, files[f], val, sizeof val, err);
                        if (r < 0)
                                return r;
                        if (val[0] && val[0] != '\n')
                                continue;
                        r = tr_read_file_at(pfd, files[f], val, sizeof val, err);
                        if (r < 0)
                                return r;
                        r = tr_write_file_at(dfd, files[f], val, err);
                        if (r < 0)
                                return tr_error_prefix(err, "cpuset %s", dir);
                }
        }
        return 0;
}

/* The hierarchies the job's cgroups are made in, as procd's family cgroups pick theirs
 * (procd/core/family-cgroup.c): the v2 tree (the lock, membership, CLONE_INTO_CGROUP,
 * cgroup.kill, the freezer, cpu.stat); a v1 hierarchy for what the report reads and v2
 * cannot give here (memory, blkio, pids; cpuacct and freezer only where <top> in v2 has no
 * cpu.stat or cgroup.freeze); the hierarchies the requested limits are written in; v1
 * devices for device rules.  Without procd and without a report (--no-procd --quiet, no
 * --report) nobody reads the job's io or pids figures: of those three only memory, whose
 * OOM kill count sets the exit code (st_track_usage_wanted; ~0.14 ms of a job start on a
 * hybrid host, NOTES 14.32).  Not cpu, cpuset, net_cls, perf_event, name=systemd...
 * unless a limit needs them: the job keeps the starter's cgroup there (a mkdir, an open, a
 * cgroup.procs write and an rmdir fewer each).  Without v2: every hierarchy.  top_v2_fd:
 * <top>'s directory in v2 when held (its files looked up there), else -1. */
static uint32_t job_hierarchies(const tr_hierarchies *hs, const st_options *o, const char *top, int top_v2_fd)
{
        if (hs->v2 < 0)
                return TR_HIER_ALL;
        uint32_t mask = 1u << hs->v2 | st_limits_hierarchies(hs, &o->limits);
        static const tr_controller acct[] = { TR_CTRL_MEMORY, TR_CTRL_BLKIO, TR_CTRL_PIDS };
        size_t n_acct = o->no_procd && st_track_usage_wanted(o) == TR_WANT_OOM ? 1 : TR_ARRAY_SIZE(acct);
        for (size_t k = 0; k < n_acct; k++)
                if (hs->v1_of[acct[k]] >= 0)
                        mask |= 1u << hs->v1_of[acct[k]];
        char dir[PATH_MAX], file[PATH_MAX + 16];
        bool have_dir = top[0] && fs_path(hs, hs->v2, top, dir, sizeof dir) >= 0;
        static const struct {
                tr_controller c;
                const char *v2_file;
        } v2_or_v1[] = { { TR_CTRL_CPUACCT, "cpu.stat" }, { TR_CTRL_FREEZER, "cgroup.freeze" } };
        for (size_t k = 0; k < TR_ARRAY_SIZE(v2_or_v1); k++) {
                if (hs->v1_of[v2_or_v1[k].c] < 0)
                        continue;
                snprintf(file, sizeof file, "%s/%s", dir, v2_or_v1[k].v2_file);
                bool in_v2 = top_v2_fd >= 0 ? faccessat(top_v2_fd, v2_or_v1[k].v2_file, F_OK, 0) == 0
                                            : have_dir && access(file, F_OK) == 0;
                if (!in_v2)
                        mask |= 1u << hs->v1_of[v2_or_v1[k].c];
        }
        if (o->devices.n > 0 && hs->v1_of[TR_CTRL_DEVICES] >= 0)
                mask |= 1u << hs->v1_of[TR_CTRL_DEVICES];
        return mask;
}

/* <top>/job in every hierarchy of jc->mask.  In the lock hierarchy, where <top> was just
 * made (lockcg), as its child: no walk from the hierarchy root again (its and the base's
 * cgroup.controllers and subtree_control read a second time, two mkdirs that meet EEXIST). */
static int create_job(st_jobcg *jc, tr_cgroup *lockcg, tr_error *err)
{
        const tr_hierarchies *hs = jc->hs;
        uint32_t lock_bit = lockcg ? 1u << st_lock_hierarchy(hs) : 0;
        if (!(jc->mask & lock_bit))
                return tr_cgroup_create_in(hs, jc->job_path, jc->mask, &jc->job, err);
        /* the others: hierarchies that exist (the mask is TR_HIER_ALL without v2) and show
         * the path (tr_cgroup_create_in skips the rest, and fails when it makes nothing:
         * one call over all of them succeeded through the lock hierarchy alone) */
        uint32_t others = 0;
        char fs[PATH_MAX];
        for (int i = 0; i < hs->n; i++)
                if ((jc->mask & ~lock_bit & (1u << i)) &&
                    tr_hierarchy_fs_path(&hs->h[i], jc->job_path, fs, sizeof fs, NULL) >= 0)
                        others |= 1u << i;
        tr_cgroup *in_lock = NULL;
        int r = tr_cgroup_create_child(lockcg, "job", lock_bit, true, &in_lock, err);
        if (r < 0)
                return r;
        if (!others) {
                jc->job = in_lock;
                return 0;
        }
        r = tr_cgroup_create_in(hs, jc->job_path, others, &jc->job, err);
        if (r < 0) {
                tr_error ignored = { 0 };
                (void) tr_cgroup_destroy(in_lock, 0, &ignored); /* <top> stays removable */
                tr_cgroup_free(in_lock);
                return r;
        }
        return tr_cgroup_join(jc->job, in_lock, err);
}

static bool systemd_wanted(const st_options *o)
{
        switch (o->systemd) {
        case ST_SYSTEMD_YES:
                return true;
        case ST_SYSTEMD_NO:
                return false;
        case ST_SYSTEMD_AUTO:
        default:
                return o->systemd_address || access("/run/systemd/system", F_OK) == 0;
        }
}

int st_jobcg_sweep(const tr_hierarchies *hs, const st_options *o)
{
        tr_error err = { 0 };
        int r = st_orphans_sweep(hs, o->cgroup_base, &err);
        if (r < 0)
                fprintf(stderr, "procd-starter: warning: looking for job cgroups of dead starters: %s\n", err.msg);
        return r;
}

int st_jobcg_create(st_jobcg *jc, const tr_hierarchies *hs, const st_options *o, tr_error *err)
{
        memset(jc, 0, sizeof *jc);
        jc->hs = hs;
        jc->helper_pid = -1;
        jc->top_lock_fd = -1;
        int r;
        if (hs->mode == TR_MODE_NONE)
                return tr_error_set(err, ENODEV, "no cgroup filesystem is mounted");
        /* the mask without the checks of <top> in v2 first (a superset): where <top> may be
         * made, so where it must not exist already and where it is new */
        jc->mask = job_hierarchies(hs, o, "", -1);
        jc->ops = &st_jobcg_cgroupfs_ops;
        if (systemd_wanted(o)) {
                jc->ops = &st_jobcg_systemd_ops;
                tr_error serr = { 0 };
                r = jc->ops->setup(jc, o, &serr);
                if (r < 0) {
                        fprintf(stderr, "procd-starter: warning: systemd: %s; falling back to cgroupfs\n",
                                serr.msg);
                        jc->ops->teardown(jc);
                        jc->ops = &st_jobcg_cgroupfs_ops;
                        jc->top[0] = '\0';
                        jc->want_starter_leaf = false;
                        jc->helper_pid = -1;
                }
        }
        _cleanup_close_ int base_fd = -1;
        if (jc->ops == &st_jobcg_cgroupfs_ops) {
                r = jc->ops->setup(jc, o, err);
                /* <top> exists: if a dead starter left it, the sweep (which otherwise runs
                 * once the job runs) takes it now, and <top> is tried again */
                if (r == -EEXIST && st_jobcg_sweep(hs, o) > 0) {
                        tr_error_clear(err);
                        r = jc->ops->setup(jc, o, err);
                }
                if (r < 0)
                        return r;
                /* <top> is made and locked under the base's shared lock: a sweep never
                 * takes a new <top> for an orphan */
                base_fd = st_base_lock(hs, o->cgroup_base, false, err);
                if (base_fd == -ENOENT) {
                        _cleanup_cgroup_ tr_cgroup *b = NULL;
                        if (tr_cgroup_create(hs, o->cgroup_base, &b, err) < 0)
                                return tr_error_prefix(err, "creating the base %s", o->cgroup_base);
                        base_fd = st_base_lock(hs, o->cgroup_base, false, err);
                }
                if (base_fd < 0)
                        return tr_error_prefix(err, "locking the base %s", o->cgroup_base);
        }

        /* cgroupfs: its setup refused a <top> that exists in any of them */
        bool all_new = jc->ops == &st_jobcg_cgroupfs_ops;
        for (int i = 0; i < hs->n; i++) {
                char dir[PATH_MAX];
                jc->top_created[i] = (jc->mask & (1u << i)) && fs_path(hs, i, jc->top, dir, sizeof dir) >= 0 &&
                                     (all_new || access(dir, F_OK) != 0);
        }
        snprintf(jc->job_path, sizeof jc->job_path, "%s/job", jc->top);
        snprintf(jc->starter_path, sizeof jc->starter_path, "%s/starter", jc->top);
        _cleanup_cgroup_ tr_cgroup *lockcg = NULL; /* <top> in the lock hierarchy */
        if (base_fd >= 0) {
                /* <top> locked before anything else of it exists: a sweep meets no part of
                 * it without its lock directory (orphans.h) */
                r = tr_cgroup_create_in(hs, jc->top, 1u << st_lock_hierarchy(hs), &lockcg, err);
                if (r < 0)
                        return tr_error_prefix(err, "creating %s", jc->top);
                jc->top_lock_fd = st_top_lock(hs, jc->top, err);
                if (jc->top_lock_fd < 0)
                        return tr_error_prefix(err, "locking %s", jc->top);
        }
        /* <top> exists in v2 now: whether it gives cpu.stat and cgroup.freeze narrows the mask */
        jc->mask = job_hierarchies(hs, o, jc->top,
                                   lockcg && hs->v2 == st_lock_hierarchy(hs) ? tr_cgroup_dirfd(lockcg, hs->v2) : -1);
        for (int i = 0; i < hs->n; i++)
                if (!(jc->mask & (1u << i)))
                        jc->top_created[i] = false;
        bool cpuset = hs->v1_of[TR_CTRL_CPUSET] >= 0 && (jc->mask & (1u << hs->v1_of[TR_CTRL_CPUSET]));

        if (jc->want_starter_leaf) {
                r = tr_cgroup_create_in(hs, jc->starter_path, jc->mask, &jc->starter, err);
                if (r < 0)
                        return tr_error_prefix(err, "creating %s", jc->starter_path);
                r = cpuset ? st_cpuset_fill(hs, jc->starter_path, err) : 0;
                if (r < 0)
                        return r;
                if (jc->helper_pid > 0) {
                        r = tr_cgroup_attach(jc->starter, jc->helper_pid, err);
                        if (r < 0)
                                return tr_error_prefix(err, "moving the scope helper");
                }
        }
        r = create_job(jc, lockcg, err);
        if (r < 0)
                return tr_error_prefix(err, "creating %s", jc->job_path);
        r = cpuset ? st_cpuset_fill(hs, jc->job_path, err) : 0;
        if (r < 0)
                return r;
        return 0;
}

/* teardown: run the strategy's teardown (not in the guard: the systemd strategy's D-Bus
 * connection and helper are the dead starter's) */
static int remove_subtree(st_jobcg *jc, uint64_t timeout_usec, bool teardown)
{
        int left = 0;
        tr_error err = { 0 };
        if (jc->job) {
                if (tr_cgroup_destroy(jc->job, timeout_usec, &err) < 0) {
                        fprintf(stderr, "procd-starter: warning: removing %s: %s\n", jc->job_path, err.msg);
                        left++;
                }
                tr_cgroup_free(jc->job);
                jc->job = NULL;
        }
        if (jc->ops && teardown)
                jc->ops->teardown(jc);
        if (jc->starter) {
                tr_error_clear(&err);
                if (tr_cgroup_destroy(jc->starter, timeout_usec, &err) < 0 && err.code != ENOENT) {
                        fprintf(stderr, "procd-starter: warning: removing %s: %s\n", jc->starter_path, err.msg);
                        left++;
                }
                tr_cgroup_free(jc->starter);
                jc->starter = NULL;
        }
        if (!jc->top[0] || !jc->hs)
                return left;
        /* the lock's hierarchy last: a sweep meets no part of <top> without it */
        int lock_h = st_lock_hierarchy(jc->hs);
        for (int step = 0; step < jc->hs->n; step++) {
                int i = step == jc->hs->n - 1 ? lock_h : step < lock_h ? step : step + 1;
                char dir[PATH_MAX];
                if (!jc->top_created[i] || fs_path(jc->hs, i, jc->top, dir, sizeof dir) < 0)
                        continue;
                int r = -1;
                for (int k = 0; k < 50; k++) {
                        r = rmdir(dir);
                        if (r == 0 || errno != EBUSY)
                                break;
                        usleep(10000);
                }
                if (r < 0 && errno != ENOENT) {
                        fprintf(stderr, "procd-starter: warning: rmdir %s: %s\n", dir, strerror(errno));
                        left++;
                }
                jc->top_created[i] = false;
        }
        if (jc->top_lock_fd >= 0)
                close(jc->top_lock_fd); /* after the rmdirs: no sweep takes it meanwhile */
        jc->top_lock_fd = -1;
        return left;
}

int st_jobcg_destroy(st_jobcg *jc, uint64_t timeout_usec)
{
        return remove_subtree(jc, timeout_usec, true);
}

int st_jobcg_abandon(st_jobcg *jc, uint64_t timeout_usec)
{
        return remove_subtree(jc, timeout_usec, false);
}
