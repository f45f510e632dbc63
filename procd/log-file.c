/* log-file.c - appending log file with rotation. */
#include "log-file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trackers/util.h"

struct pd_log_file {
        char *path;
        uint64_t max_bytes;
        int fd;
        /* the local time zone, read once: GLib's g_date_time_new_now_local() looks at
         * /etc/localtime again for every line when TZ is unset (2 stats and a readlink,
         * glib 2.74), ~30 us of every audit line; a zone changed later shows after a restart */
        GTimeZone *tz;
};

static int open_log(const char *path) { return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644); }

int pd_log_file_open(const char *path, uint64_t max_bytes, pd_log_file **out, tr_error *err)
{
        int fd = open_log(path);
        if (fd < 0)
                return tr_error_setx(err, errno, "opening log %s", path);
        pd_log_file *lf = g_new0(pd_log_file, 1);
        lf->path = g_strdup(path);
        lf->max_bytes = max_bytes;
        lf->fd = fd;
        lf->tz = g_time_zone_new_local();
        *out = lf;
        return 0;
}

void pd_log_file_close(pd_log_file *lf)
{
        if (!lf)
                return;
        if (lf->fd >= 0)
                close(lf->fd);
        g_time_zone_unref(lf->tz);
        g_free(lf->path);
        g_free(lf);
}

static void rotate_if_big(pd_log_file *lf)
{
        tr_stat st; /* the size alone: the line written next keeps a coarse mtime */
        if (!lf->max_bytes || tr_stat_untimed(lf->fd, NULL, STATX_SIZE, &st) < 0 || st.size_bytes < lf->max_bytes)
                return;
        g_autofree char *old = g_strconcat(lf->path, ".old", NULL);
        if (rename(lf->path, old) < 0)
                return;
        int fd = open_log(lf->path);
        if (fd >= 0) {
                close(lf->fd);
                lf->fd = fd;
        }
}

static const char *level_name(GLogLevelFlags level)
{
        if (level & G_LOG_LEVEL_ERROR)
                return "ERROR";
        if (level & G_LOG_LEVEL_CRITICAL)
                return "CRITICAL";
        if (level & G_LOG_LEVEL_WARNING)
                return "WARNING";
        if (level & G_LOG_LEVEL_MESSAGE)
                return "MESSAGE";
        if (level & G_LOG_LEVEL_INFO)
                return "INFO";
        return "DEBUG";
}

GLogWriterOutput pd_log_file_writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data)
{
        pd_log_file *lf = data;
        if (g_log_writer_default_would_drop(level, G_LOG_DOMAIN))
                return G_LOG_WRITER_HANDLED;
        const char *msg = "";
        for (gsize i = 0; i < n; i++)
                if (strcmp(fields[i].key, "MESSAGE") == 0)
                        msg = fields[i].value;
        g_autoptr(GDateTime) now = g_date_time_new_now(lf->tz);
        g_autofree char *ts = g_date_time_format(now, "%m/%d/%y %H:%M:%S");
        g_autofree char *line = g_strdup_printf("%s %s: %s\n", ts, level_name(level), msg);
        size_t len = strlen(line);
        ssize_t w = write(lf->fd, line, len);
        (void) w;
        rotate_if_big(lf);
        return G_LOG_WRITER_HANDLED;
}

GLogWriterOutput pd_log_null_writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data)
{
        (void) level;
        (void) fields;
        (void) n;
        (void) data;
        return G_LOG_WRITER_HANDLED;
}
