/* metrics.h - procd and its families in the Prometheus text exposition format (0.0.4),
 * issue 17 §3: what `procctl metrics` prints (GetMetrics) and what --metrics-textfile
 * writes for node-exporter's textfile collector.  One writer, so both say the same.
 *
 * Per registered subfamily (the root family is left out: it is "everything else"), labels
 * root_pid, job_id (SetFamilyJob's id, "" when unnamed: not "job", which Prometheus keeps
 * for the scrape target and would rename exported_job) and user (the root's owner):
 * CPU user/system seconds, memory current/peak/anon/rss bytes, processes, OOM kills, I/O
 * bytes, pressure stall seconds, the limits set on its cgroup, its state.  procd's own:
 * families by tracking and source, connections, requests by operation and status, malformed
 * requests, the restore at start, start time, version.  Fields procd cannot read are left
 * out (unknown is not zero). */
#pragma once

#include <glib.h>

#include "procd/core/command.h"
#include "trackers/error.h"

/* Append the exposition to out. */
void pd_metrics_render(pd_commands *cm, GString *out);

/* Write it to path atomically (path.tmp.PID, then rename: the collector never reads a
 * half-written file).  Returns 0 or a negative errno (err says what). */
int pd_metrics_write_file(pd_commands *cm, const char *path, tr_error *err);
