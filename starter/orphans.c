/* orphans.c - locks held by live starters, and the sweep of job cgroups left by dead ones. */
#include "orphans.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "jobns.h"
#include "trackers/cgroup.h"
#include "trackers/util.h"

#define LOCK_WAIT_USEC 1000000u
/* what a job's starter made outside its cgroups, kept on <top> (trusted.*: only a process
 * with CAP_SYS_ADMIN can set it, so a sweep running as root never removes a path someone
 * else chose) */
#define XATTR_PRIVATE_TMP "trusted.procd.private-tmp"

/* The hierarchy whose directories carry the locks: v2 when mounted, else the first one
 * where path exists. */
static int lock_dir_path(const tr_hierarchies *hs, const char *cg, char *buf, size_t size)
{
        if (hs->v2 >= 0 && tr_hierarchy_fs_path(&hs->h[hs->v2], cg, buf, size, NULL) >= 0)
                return 0;
        for (int i = 0; i < hs->n; i++)
                if (tr_hierarchy_fs_path(&hs->h[i], cg, buf, size, NULL) >= 0 && access(buf, F_OK) == 0)
                        return 0;
        return -ENOENT;
}

static int lock_dir(const tr_hierarchies *hs, const char *cg, int op, bool wait, tr_error *err)
{
        char dir[PATH_MAX];
        if (lock_dir_path(hs, cg, dir, sizeof dir) < 0)
                return tr_error_set(err, ENOENT, "no cgroup directory for %s", cg);
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return tr_error_setx(err, errno, "open %s", dir);
        uint64_t deadline = tr_now_usec() + LOCK_WAIT_USEC;
        while (flock(fd, op | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK || !wait || tr_now_usec() >= deadline)
                        return tr_error_setx(err, errno, "flock %s", dir);
                usleep(10000);
        }
        return TR_TAKE_FD(fd);
}

int st_lock_hierarchy(const tr_hierarchies *hs)
{
        return hs->v2 >= 0 ? hs->v2 : 0;
}

int st_base_lock(const tr_hierarchies *hs, const char *base, bool exclusive, tr_error *err)
{
        return lock_dir(hs, strcmp(base, "") == 0 ? "/" : base, exclusive ? LOCK_EX : LOCK_SH, true, err);
}

int st_top_lock(const tr_hierarchies *hs, const char *top, tr_error *err)
{
        return lock_dir(hs, top, LOCK_EX, false, err);
}

int st_orphans_record_tmp(const tr_hierarchies *hs, const char *top, const char *path, tr_error *err)
{
        char dir[PATH_MAX];
        if (lock_dir_path(hs, top, dir, sizeof dir) < 0)
                return tr_error_set(err, ENOENT, "no cgroup directory for %s", top);
        if (setxattr(dir, XATTR_PRIVATE_TMP, path, strlen(path), 0) < 0)
                return tr_error_setx(err, errno, "recording %s on %s", path, dir);
        return 0;
}

/* The private /tmp directory recorded on <top>, removed; quiet when none was recorded. */
static void remove_recorded_tmp(const tr_hierarchies *hs, const char *top)
{
        char dir[PATH_MAX], path[PATH_MAX];
        if (lock_dir_path(hs, top, dir, sizeof dir) < 0)
                return;
        ssize_t n = getxattr(dir, XATTR_PRIVATE_TMP, path, sizeof path - 1);
        if (n <= 0)
                return;
        path[n] = '\0';
        if (!st_jobns_remove_path(path))
                fprintf(stderr, "procd-starter: warning: could not remove %s of the job cgroup %s\n", path, top);
}

/* Kill what is left in <top>/job, remove the private /tmp directory recorded on <top>, then
 * <top>'s cgroups (deepest first) everywhere. */
static int clean_orphan(const tr_hierarchies *hs, const char *top, tr_error *err)
{
        char job[PATH_MAX];
        snprintf(job, sizeof job, "%s/job", top);
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        int r = tr_cgroup_open(hs, job, TR_CG_MAY_ACT | TR_CG_OWNED, &cg, err);
        size_t killed = 0;
        if (r >= 0) {
                tr_kill_result kr;
                memset(&kr, 0, sizeof kr);
                _cleanup_pidset_ tr_pidset m = TR_PIDSET_INIT;
                if (tr_cgroup_members(cg, &m, NULL) >= 0)
                        killed = m.n;
                r = tr_cgroup_kill(cg, 5000000, &kr, err);
                bool empty = kr.empty;
                tr_kill_result_free(&kr);
                if (r < 0)
                        return r;
                if (!empty)
                        return tr_error_set(err, EBUSY, "%s: processes left after the kill", job);
        } else if (r != -ENOENT) {
                return r;
        }
        remove_recorded_tmp(hs, top);
        _cleanup_cgroup_ tr_cgroup *topcg = NULL;
        r = tr_cgroup_open(hs, top, TR_CG_MAY_ACT | TR_CG_OWNED, &topcg, err);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        r = tr_cgroup_destroy(topcg, 2000000, err);
        if (r < 0)
                return r;
        fprintf(stderr, "procd-starter: job cgroup %s was left by a starter that is gone: %zu process(es) killed, "
                        "cgroups removed\n",
                top, killed);
        return 0;
}

/* What is left of <top> in any hierarchy after its job was dealt with, or what a starter
 * killed while it made <top> left (the job is started only once every directory and the
 * lock exist; <top> is made in the lock's hierarchy first and removed there last, so a
 * partial <top> always has its lock directory): rmdir only, deepest first - a cgroup with a
 * process or another child in it stays.  Whether nothing of <top> is left. */
static bool remove_remains(const tr_hierarchies *hs, const char *top)
{
        static const char *const subs[] = { "/job", "/starter", "" };
        bool gone = true;
        for (int i = 0; i < hs->n; i++)
                for (size_t k = 0; k < TR_ARRAY_SIZE(subs); k++) {
                        char cg[PATH_MAX], dir[PATH_MAX];
                        snprintf(cg, sizeof cg, "%s%s", top, subs[k]);
                        if (tr_hierarchy_fs_path(&hs->h[i], cg, dir, sizeof dir, NULL) < 0)
                                continue;
                        if (rmdir(dir) < 0 && errno != ENOENT && k == TR_ARRAY_SIZE(subs) - 1)
                                gone = false;
                }
        return gone;
}

/* One directory of the base whose lock was free: its job killed and everything of it
 * removed.  Without a job leaf (procd removed it when the starter died, or the starter died
 * before making it) nothing is killed: what holds a process stays. */
static int sweep_one(const tr_hierarchies *hs, const char *top, bool has_job)
{
        tr_error cerr = { 0 };
        if (has_job && clean_orphan(hs, top, &cerr) < 0) {
                fprintf(stderr, "procd-starter: warning: orphaned job cgroup %s: %s\n", top, cerr.msg);
                return 0;
        }
        if (!has_job)
                remove_recorded_tmp(hs, top);
        if (!remove_remains(hs, top)) {
                if (has_job)
                        fprintf(stderr, "procd-starter: warning: orphaned job cgroup %s: not empty, left\n", top);
                return 0;
        }
        return 1;
}

int st_orphans_sweep(const tr_hierarchies *hs, const char *base, tr_error *err)
{
        const char *b = strcmp(base, "/") == 0 ? "" : base;
        _cleanup_close_ int bfd = st_base_lock(hs, base, true, err);
        if (bfd < 0)
                return bfd == -ENOENT ? 0 : bfd; /* no base yet: nothing to sweep */
        char dir[PATH_MAX];
        if (lock_dir_path(hs, base, dir, sizeof dir) < 0)
                return 0;
        _cleanup_closedir_ DIR *d = opendir(dir);
        if (!d)
                return tr_error_setx(err, errno, "opendir %s", dir);
        int cleaned = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
                if (e->d_type != DT_DIR || e->d_name[0] == '.')
                        continue;
                char top[PATH_MAX], jobdir[PATH_MAX + 8];
                snprintf(top, sizeof top, "%s/%s", b, e->d_name);
                snprintf(jobdir, sizeof jobdir, "%s/%s/job", dir, e->d_name);
                bool has_job = access(jobdir, F_OK) == 0;
                _cleanup_close_ int tfd = st_top_lock(hs, top, NULL);
                if (tfd < 0)
                        continue; /* its starter is alive (or it vanished meanwhile) */
                cleaned += sweep_one(hs, top, has_job);
        }
        return cleaned;
}
