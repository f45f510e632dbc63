/* audit.h - the audit trail (issue 17 §2): every call that changes something (register,
 * track, signal, suspend, continue, kill, unregister, adopt, set job, quit), from either
 * face, logged once with what was asked, of which family, by whom, and the result.
 *
 * One GLib structured log record per call (g_log_structured_array), level MESSAGE
 * (PRIORITY 5), with the fields PROCD_OP, PROCD_FAMILY (the root pid named; 0: the root
 * family), PROCD_JOB (when the family has one), PROCD_PID (SignalProcess/AdoptProcess: the
 * process), PROCD_SIGNAL (SignalProcess), PROCD_CALLER_UID, PROCD_CALLER_PID (0: unknown), PROCD_CALLER_VIA ("dbus",
 * "classic", "procd" for procd's own calls: a watcher exit, a restart), PROCD_RESULT (the
 * status name: "OK", "PermissionDenied", ...), and a MESSAGE that says all of it in words
 * ("audit: kill family=123 job=j1 uid=0 pid=456 via=dbus: OK").  Where the log goes is
 * main.c's writer: the journal keeps the fields (g_log_writer_journald), syslog, stderr and
 * -L FILE get the MESSAGE.
 *
 * Caller identity: D-Bus, the uid and pid of the socket's SO_PEERCRED (libdbus's
 * credentials); classic, the reply FIFO's owner (pd_caller.fifo_uid, before the mapping of
 * the principal to root) and the pid the request names (not proven: the FIFO protocol
 * carries no credentials).
 */
#pragma once

#include <sys/types.h>

#include "procd/types.h"
#include "procd/core/command.h"

typedef struct pd_audit_record {
        const char *op;       /* "register", "track-cgroup", "signal", "kill", ... */
        pid_t family;         /* root pid named by the call (0: the root family, or none) */
        const char *job;      /* the family's job id, NULL or "": none */
        pid_t target;         /* the process acted on (signal, adopt), 0: none */
        int signal;           /* signal: the signal number (PROCD_SIGNAL), 0: none */
        const pd_caller *who; /* NULL: procd itself */
        procd_status result;
        const char *message;  /* the error's message when result != PROCD_OK (may be NULL) */
} pd_audit_record;

void pd_audit_log(const pd_audit_record *r);
/* The caller as the audit names it: uid (the FIFO owner for classic requests), pid, face. */
uid_t pd_audit_caller_uid(const pd_caller *who);
const char *pd_audit_caller_via(const pd_caller *who);
