/* audit.c - one structured log record per changing call (see audit.h). */
#include "audit.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "procd/wire.h"

uid_t pd_audit_caller_uid(const pd_caller *who)
{
        if (!who)
                return 0;
        return who->via && g_str_equal(who->via, "classic") ? who->fifo_uid : who->uid;
}

const char *pd_audit_caller_via(const pd_caller *who)
{
        return who && who->via ? who->via : "procd";
}

/* printable ASCII only (an error message may quote what a client sent) */
static void printable(char *s)
{
        for (; *s; s++)
                if ((unsigned char) *s >= 0x7f || (unsigned char) *s < 0x20)
                        *s = '?';
}

void pd_audit_log(const pd_audit_record *r)
{
        char family[16], target[16], sig[16], uid[16], pid[16], msg[768], why[512] = "";
        const char *job = r->job && r->job[0] ? r->job : NULL;
        const char *via = pd_audit_caller_via(r->who);
        const char *result = r->result == PROCD_OK ? "OK" : procd_status_name(r->result);
        snprintf(family, sizeof family, "%d", (int) r->family);
        snprintf(target, sizeof target, "%d", (int) r->target);
        snprintf(sig, sizeof sig, "%d", r->signal);
        snprintf(uid, sizeof uid, "%u", (unsigned) pd_audit_caller_uid(r->who));
        snprintf(pid, sizeof pid, "%d", r->who ? (int) r->who->pid : 0);
        if (r->result != PROCD_OK && r->message && r->message[0]) {
                snprintf(why, sizeof why, " (%s)", r->message);
                printable(why);
        }
        char tgt[48] = "";
        if (r->target)
                snprintf(tgt, sizeof tgt, " pid=%d", (int) r->target);
        if (r->signal)
                snprintf(tgt + strlen(tgt), sizeof tgt - strlen(tgt), " signal=%d", r->signal);
        snprintf(msg, sizeof msg, "audit: %s family=%s%s%s%s caller_uid=%s caller_pid=%s via=%s: %s%s", r->op, family,
                 job ? " job=" : "", job ? job : "", tgt, uid, pid, via, result, why);
        GLogField fields[] = {
                { "MESSAGE", msg, -1 },
                { "PRIORITY", "5", -1 },
                { "GLIB_DOMAIN", "procd", -1 },
                { "PROCD_OP", r->op, -1 },
                { "PROCD_FAMILY", family, -1 },
                { "PROCD_CALLER_UID", uid, -1 },
                { "PROCD_CALLER_PID", pid, -1 },
                { "PROCD_CALLER_VIA", via, -1 },
                { "PROCD_RESULT", result, -1 },
                { 0 }, /* PROCD_JOB, PROCD_PID, PROCD_SIGNAL: only when there is one */
                { 0 },
                { 0 },
        };
        gsize n = G_N_ELEMENTS(fields) - 3;
        if (job)
                fields[n++] = (GLogField) { "PROCD_JOB", job, -1 };
        if (r->target)
                fields[n++] = (GLogField) { "PROCD_PID", target, -1 };
        if (r->signal)
                fields[n++] = (GLogField) { "PROCD_SIGNAL", sig, -1 };
        g_log_structured_array(G_LOG_LEVEL_MESSAGE, fields, n);
}
