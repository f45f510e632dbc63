/* classic-fifo.c - creation, identity and housekeeping of the daemon's FIFOs. */
#include "classic-fifo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

int pd_cl_fifo_create(const char *path, uid_t owner, pd_cl_fifo *out, tr_error *err)
{
        *out = (pd_cl_fifo) PD_CL_FIFO_INIT;
        struct stat st;
        if (lstat(path, &st) == 0) {
                if (!S_ISFIFO(st.st_mode))
                        return tr_error_set(err, EEXIST, "%s exists and is not a FIFO", path);
                if (unlink(path) < 0)
                        return tr_error_setx(err, errno, "removing the stale FIFO %s", path);
        } else if (errno != ENOENT) {
                return tr_error_setx(err, errno, "%s", path);
        }
        mode_t old = umask(0177); /* never wider than 0600, even for a moment */
        int k = mkfifo(path, 0600);
        umask(old);
        if (k < 0)
                return tr_error_setx(err, errno, "mkfifo %s", path);
        out->rfd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (out->rfd < 0) {
                k = tr_error_setx(err, errno, "opening %s", path);
                goto fail;
        }
        struct stat rst, wst;
        out->wfd = open(path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (out->wfd < 0) {
                k = tr_error_setx(err, errno, "opening %s for writing", path);
                goto fail;
        }
        if (fstat(out->rfd, &rst) < 0 || fstat(out->wfd, &wst) < 0 || !S_ISFIFO(rst.st_mode) ||
            rst.st_dev != wst.st_dev || rst.st_ino != wst.st_ino) {
                k = tr_error_set(err, EEXIST, "%s was replaced while procd created it", path);
                goto fail;
        }
        if (owner != (uid_t) -1 && rst.st_uid != owner && fchown(out->rfd, owner, (gid_t) -1) < 0) {
                k = tr_error_setx(err, errno, "chown %s to uid %u", path, (unsigned) owner);
                goto fail;
        }
        out->dev = rst.st_dev;
        out->ino = rst.st_ino;
        out->path = strdup(path);
        if (!out->path) {
                k = tr_error_set(err, ENOMEM, "out of memory");
                goto fail;
        }
        return 0;
fail:
        pd_cl_fifo_close(out, false);
        unlink(path);
        return k;
}

static bool still_ours(const pd_cl_fifo *f)
{
        struct stat st;
        return f->path && lstat(f->path, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

void pd_cl_fifo_close(pd_cl_fifo *f, bool unlink_it)
{
        if (unlink_it && still_ours(f))
                unlink(f->path);
        if (f->rfd >= 0)
                close(f->rfd);
        if (f->wfd >= 0)
                close(f->wfd);
        free(f->path);
        *f = (pd_cl_fifo) PD_CL_FIFO_INIT;
}

int pd_cl_fifo_touch(pd_cl_fifo *f, tr_error *err)
{
        if (!still_ours(f))
                return tr_error_set(err, ESTALE, "%s was removed or replaced", f->path);
        /* through the fd: never follows whatever the path names */
        if (futimens(f->rfd, NULL) < 0)
                return tr_error_setx(err, errno, "touching %s", f->path);
        return 0;
}
