/* log-file.h - condor_procd's -L FILE: log lines appended to a file, rotated to FILE.old
 * past a size (-R).  A GLog writer; the file is opened O_APPEND|O_CLOEXEC. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "trackers/error.h"

typedef struct pd_log_file pd_log_file;

/* max_bytes 0: never rotated. */
int pd_log_file_open(const char *path, uint64_t max_bytes, pd_log_file **out, tr_error *err);
void pd_log_file_close(pd_log_file *lf);
/* g_log_set_writer_func(pd_log_file_writer, lf, NULL) */
GLogWriterOutput pd_log_file_writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer lf);
/* A writer that drops everything (condor_procd without -L logs nothing). */
GLogWriterOutput pd_log_null_writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data);
