/* family-cgroup-sweep.c - removing the family cgroups no family owns (see the header). */
#include "family-cgroup-sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trackers/cgroup-walk.h"
#include "trackers/util.h"

typedef struct sweep {
        const tr_hierarchies *hs;
        GHashTable *owned;
        pd_famcg_sweep_stats *st;
} sweep;

/* Whether a registered family's cgroup is path or lies below it. */
static bool holds_owned(const sweep *s, const char *path)
{
        if (g_hash_table_contains(s->owned, path))
                return true;
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, s->owned);
        while (g_hash_table_iter_next(&it, &key, NULL))
                if (tr_cgroup_path_under(key, path))
                        return true;
        return false;
}

/* An orphan whose fam.* descendants are orphans too: removed when nothing runs in it. */
static void remove_orphan(sweep *s, const char *path)
{
        tr_error err = { 0 };
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        bool populated = true;
        if (tr_cgroup_open(s->hs, path, TR_CG_MAY_ACT | TR_CG_OWNED, &cg, &err) < 0 ||
            tr_cgroup_populated(cg, &populated, &err) < 0) {
                if (err.code != ENOENT && err.code != ENODEV)
                        g_warning("family cgroup %s (no family owns it): %s; left in place", path, err.msg);
                return;
        }
        if (populated) {
                s->st->left++;
                g_warning("family cgroup %s holds processes but no family owns it: left in place, its processes "
                          "are not tracked (see cgroup.procs there)",
                          path);
                return;
        }
        if (tr_cgroup_destroy(cg, 0, &err) < 0) {
                g_warning("family cgroup %s (no family owns it, empty): not removed: %s", path, err.msg);
                return;
        }
        s->st->removed++;
        g_message("removed family cgroup %s: no family owns it and it is empty", path);
}

/* The fam.* children of directory `name` in dfd (cgroup path), deepest first.  The
 * orphans among them go (remove_orphan) unless something below them must stay. */
static void sweep_children(sweep *s, int dfd, const char *name, const char *path, int depth)
{
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return; /* gone meanwhile */
        }
        for (struct dirent *e; (e = readdir(d));) {
                if (strncmp(e->d_name, "fam.", 4) != 0 || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
                        continue;
                char child[PATH_MAX];
                if (snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= (int) sizeof child)
                        continue;
                if (depth < TR_CG_WALK_MAX_DEPTH)
                        sweep_children(s, dirfd(d), e->d_name, child, depth + 1);
                if (!holds_owned(s, child))
                        remove_orphan(s, child);
        }
        closedir(d);
}

void pd_famcg_sweep(pd_famcg *fc, const tr_hierarchies *hs, GHashTable *owned, pd_famcg_sweep_stats *st)
{
        memset(st, 0, sizeof *st);
        const char *base = pd_famcg_base(fc);
        int idx = pd_famcg_primary(hs);
        char fs[PATH_MAX];
        if (!base || idx < 0 || tr_hierarchy_fs_path(&hs->h[idx], base, fs, sizeof fs, NULL) < 0)
                return;
        sweep s = { hs, owned, st };
        sweep_children(&s, AT_FDCWD, fs, base, 0);
}
