/* cgroup-walk.c - the one walk over a cgroup directory's descendants (see cgroup-walk.h). */
#include "cgroup-walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static bool is_gone_errno(int e) { return e == ENOENT || e == ENODEV; }

/* A subdirectory entry (cgroupfs fills d_type; other filesystems may say DT_UNKNOWN). */
static bool is_subdir(DIR *d, const struct dirent *de)
{
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                return false;
        if (de->d_type != DT_UNKNOWN)
                return de->d_type == DT_DIR;
        struct stat st;
        return fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* Kernel fact: kernfs (cgroupfs) gives a directory st_nlink = 2 + its number of
 * subdirectories (kernfs_refresh_inode), as ext4 and tmpfs do.  So nlink == 2 means "no child
 * cgroup" for one fstat() on the O_PATH fd instead of open + getdents + close; any other value
 * (children, or a filesystem such as btrfs that always says 1) means: look. */
static bool may_have_subdirs(int dfd)
{
        struct stat st;
        return tr_fstat(dfd, &st) < 0 || st.st_nlink != 2;
}

/* A readable DIR over the cgroup directory dfd (an O_PATH fd cannot be read).  1 with *out
 * set, 0 when the cgroup vanished meanwhile, or -errno. */
static int open_dir(int dfd, DIR **out)
{
        int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rfd < 0)
                return is_gone_errno(errno) ? 0 : -errno;
        *out = fdopendir(rfd);
        if (!*out) {
                int e = errno;
                close(rfd);
                return -e;
        }
        return 1;
}

/* Remember where the first error of the walk happened. */
static void note_failed(const tr_cg_walk *w, bool *noted, const char *name)
{
        if (*noted)
                return;
        *noted = true;
        if (w->failed && w->failed_size)
                snprintf(w->failed, w->failed_size, "%s", name);
}

/* Returns 0, or the first error in this subtree (after walking the rest of it when
 * keep_going): a directory whose subtree failed gets no post call (its rmdir would be
 * EBUSY anyway). */
static int walk_level(int dfd, const tr_cg_walk *w, int depth, bool *noted)
{
        if (depth > TR_CG_WALK_MAX_DEPTH)
                return w->deep_is_error ? -ELOOP : 0;
        if (!may_have_subdirs(dfd))
                return 0;
        _cleanup_closedir_ DIR *d = NULL;
        int r = open_dir(dfd, &d);
        if (r <= 0)
                return r;
        int result = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!is_subdir(d, de))
                        continue;
                _cleanup_close_ int cfd = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd < 0) {
                        if (is_gone_errno(errno))
                                continue;
                        r = -errno;
                } else {
                        r = w->pre_depth ? w->pre_depth(cfd, depth, w->ud) : w->pre ? w->pre(cfd, w->ud) : 0;
                        if (r == 0)
                                r = walk_level(cfd, w, depth + 1, noted);
                        if (r == 0 && w->post)
                                r = w->post(dirfd(d), de->d_name, w->ud);
                }
                if (r < 0) {
                        note_failed(w, noted, de->d_name);
                        if (!w->keep_going)
                                return r;
                        if (result == 0)
                                result = r;
                }
        }
        return result;
}

int tr_cg_walk_children(int dfd, const tr_cg_walk *w)
{
        bool noted = false;
        return walk_level(dfd, w, 1, &noted);
}
