/* jobcg-cgroupfs.c - the job cgroup made with mkdir: <--cgroup-base>/<name> in the v2 tree and
 * in the v1 hierarchies the job needs (jc->mask, st_jobcg_create). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>

#include "jobcg.h"

static int cgroupfs_setup(st_jobcg *jc, const st_options *o, tr_error *err)
{
        char name[128];
        if (o->name)
                snprintf(name, sizeof name, "%s", o->name);
        else
                snprintf(name, sizeof name, "job.%d", (int) getpid());
        const char *base = strcmp(o->cgroup_base, "/") == 0 ? "" : o->cgroup_base;
        int n = snprintf(jc->top, sizeof jc->top, "%s/%s", base, name);
        if (n < 0 || (size_t) n >= sizeof jc->top)
                return tr_error_set(err, ENAMETOOLONG, "job cgroup path too long");
        /* another job's cgroup of that name: refuse rather than share it */
        for (int i = 0; i < jc->hs->n; i++) {
                char dir[PATH_MAX];
                if (!(jc->mask & (1u << i)))
                        continue;
                if (tr_hierarchy_fs_path(&jc->hs->h[i], jc->top, dir, sizeof dir, NULL) < 0)
                        continue;
                if (access(dir, F_OK) == 0)
                        return tr_error_set(err, EEXIST, "job cgroup %s already exists (%s)", jc->top, dir);
        }
        return 0;
}

static void cgroupfs_teardown(st_jobcg *jc) { (void) jc; }
static int cgroupfs_guard_drop_fd(const st_jobcg *jc) { (void) jc; return -1; }

const st_jobcg_ops st_jobcg_cgroupfs_ops = {
        .name = "cgroupfs",
        .setup = cgroupfs_setup,
        .teardown = cgroupfs_teardown,
        .guard_drop_fd = cgroupfs_guard_drop_fd,
};
