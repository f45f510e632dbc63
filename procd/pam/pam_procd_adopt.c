/* pam_procd_adopt.c - account module: put the process of an incoming session (sshd's
 * per-connection process, then everything it starts) into the cgroup of the connecting
 * user's job on this node, through procd (ListJobs + AdoptProcess), as pam_slurm_adopt does
 * for Slurm.  The session then counts in the job's usage, is held by its limits and dies
 * with it.
 *
 *   account  requisite  pam_procd_adopt.so [action_no_jobs=deny|ignore]
 *            [action_unknown=newest|allow|deny] [action_adopt_failure=allow|deny]
 *            [action_generic_failure=ignore|allow|deny] [ignore_root=1|0]
 *            [service=PROCD_SOCKET] [log_level=quiet|error|info|debug]
 *
 * Which job: the families procd knows as jobs of the user (SetFamilyJob by procd-starter,
 * procd_spank.so).  One -> that one; several -> action_unknown (newest: the one named last;
 * allow: let the session in without adopting it; deny); none -> action_no_jobs.  The steps
 * of one Slurm job count as one job, whose extern step is joined (job-pick.h).  Messages go to syslog
 * (LOG_AUTHPRIV) and, on a denial, to the user.
 */
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#define PAM_SM_ACCOUNT
#include <security/pam_ext.h>
#include <security/pam_modules.h>

#include "job-pick.h"
#include "procd/client.h"

enum { LOG_Q = 0, LOG_E, LOG_I, LOG_D };
typedef enum { ACT_ALLOW, ACT_DENY, ACT_IGNORE, ACT_NEWEST } action;

typedef struct opts {
        action no_jobs, unknown, adopt_failure, generic_failure;
        bool ignore_root;
        const char *socket;
        int log_level;
} opts;

static void logm(pam_handle_t *pamh, const opts *o, int level, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void logm(pam_handle_t *pamh, const opts *o, int level, const char *fmt, ...)
{
        if (level > o->log_level)
                return;
        va_list ap;
        va_start(ap, fmt);
        pam_vsyslog(pamh, LOG_AUTHPRIV | (level == LOG_E ? LOG_ERR : level == LOG_I ? LOG_INFO : LOG_DEBUG), fmt, ap);
        va_end(ap);
}

/* "name=value" against the allowed words; false on an unknown word */
static bool word(const char *arg, const char *name, const char *const *words, const action *acts, action *out)
{
        size_t n = strlen(name);
        if (strncmp(arg, name, n) != 0 || arg[n] != '=')
                return false;
        for (int i = 0; words[i]; i++)
                if (strcmp(arg + n + 1, words[i]) == 0) {
                        *out = acts[i];
                        return true;
                }
        return false;
}

static int parse(pam_handle_t *pamh, int argc, const char **argv, opts *o)
{
        *o = (opts){ .no_jobs = ACT_DENY, .unknown = ACT_NEWEST, .adopt_failure = ACT_ALLOW,
                     .generic_failure = ACT_IGNORE, .ignore_root = true, .log_level = LOG_I };
        static const char *const nj[] = { "deny", "ignore", NULL };
        static const action nja[] = { ACT_DENY, ACT_IGNORE };
        static const char *const un[] = { "newest", "allow", "deny", NULL };
        static const action una[] = { ACT_NEWEST, ACT_ALLOW, ACT_DENY };
        static const char *const ad[] = { "allow", "deny", NULL };
        static const action ada[] = { ACT_ALLOW, ACT_DENY };
        static const char *const ge[] = { "ignore", "allow", "deny", NULL };
        static const action gea[] = { ACT_IGNORE, ACT_ALLOW, ACT_DENY };
        static const char *const lv[] = { "quiet", "error", "info", "debug", NULL };
        for (int i = 0; i < argc; i++) {
                const char *a = argv[i];
                if (word(a, "action_no_jobs", nj, nja, &o->no_jobs) || word(a, "action_unknown", un, una, &o->unknown) ||
                    word(a, "action_adopt_failure", ad, ada, &o->adopt_failure) ||
                    word(a, "action_generic_failure", ge, gea, &o->generic_failure))
                        continue;
                if (strncmp(a, "log_level=", 10) == 0) {
                        int l = -1;
                        for (int k = 0; lv[k]; k++)
                                if (strcmp(a + 10, lv[k]) == 0)
                                        l = k; /* LOG_Q..LOG_D in order */
                        if (l >= 0) {
                                o->log_level = l;
                                continue;
                        }
                }
                if (strcmp(a, "ignore_root=1") == 0 || strcmp(a, "ignore_root=0") == 0) {
                        o->ignore_root = a[12] == '1';
                        continue;
                }
                if (strncmp(a, "service=", 8) == 0 && a[8] == '/') {
                        o->socket = a + 8;
                        continue;
                }
                pam_syslog(pamh, LOG_AUTHPRIV | LOG_ERR, "pam_procd_adopt: unknown or bad option '%s'", a);
                return -1;
        }
        return 0;
}

static int verdict(action a)
{
        return a == ACT_ALLOW ? PAM_SUCCESS : a == ACT_IGNORE ? PAM_IGNORE : PAM_PERM_DENIED;
}

/* something went wrong that is nobody's decision: action_generic_failure */
static int generic(pam_handle_t *pamh, const opts *o, const char *what)
{
        logm(pamh, o, LOG_E, "pam_procd_adopt: %s (action_generic_failure: %s)", what,
             o->generic_failure == ACT_ALLOW ? "allow" : o->generic_failure == ACT_IGNORE ? "ignore" : "deny");
        if (o->generic_failure == ACT_DENY)
                pam_error(pamh, "Access denied: the job tracker on this node cannot be asked (%s).", what);
        return verdict(o->generic_failure);
}

PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
        (void) flags;
        opts o;
        if (parse(pamh, argc, argv, &o) < 0)
                return PAM_SERVICE_ERR;
        const char *user = NULL;
        if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS || !user || !*user)
                return generic(pamh, &o, "no user name");
        struct passwd *pw = getpwnam(user);
        if (!pw)
                return generic(pamh, &o, "unknown user");
        uid_t uid = pw->pw_uid;
        if (uid == 0 && o.ignore_root) {
                logm(pamh, &o, LOG_D, "pam_procd_adopt: root, ignored");
                return PAM_IGNORE;
        }
        procd_client *c = NULL;
        procd_error perr = { 0 };
        if (procd_connect(o.socket, &c, &perr) != PROCD_OK) {
                char what[600];
                snprintf(what, sizeof what, "cannot reach procd: %s", perr.msg);
                return generic(pamh, &o, what);
        }
        procd_job_info *jobs = NULL;
        size_t n = 0;
        int rc;
        if (procd_list_jobs(c, uid, &jobs, &n, &perr) != PROCD_OK) {
                char what[600];
                snprintf(what, sizeof what, "ListJobs: %s", perr.msg);
                rc = generic(pamh, &o, what);
                goto out;
        }
        logm(pamh, &o, LOG_D, "pam_procd_adopt: %s (uid %u) has %zu job(s)", user, (unsigned) uid, n);
        size_t distinct = 0;
        const procd_job_info *pick = n ? pam_job_pick(jobs, n, &distinct) : NULL;
        if (n == 0) {
                logm(pamh, &o, LOG_I, "pam_procd_adopt: %s has no job on this node (action_no_jobs: %s)", user,
                     o.no_jobs == ACT_DENY ? "deny" : "ignore");
                if (o.no_jobs == ACT_DENY)
                        pam_error(pamh, "Access denied by pam_procd_adopt: you have no active job on this node.");
                rc = verdict(o.no_jobs);
                goto out;
        }
        if (distinct > 1 && o.unknown != ACT_NEWEST) {
                logm(pamh, &o, LOG_I, "pam_procd_adopt: %s has %zu jobs here (action_unknown: %s)", user, distinct,
                     o.unknown == ACT_ALLOW ? "allow, not adopted" : "deny");
                if (o.unknown == ACT_DENY)
                        pam_error(pamh, "Access denied by pam_procd_adopt: you have %zu jobs on this node and "
                                        "the one to join cannot be chosen.", distinct);
                rc = verdict(o.unknown);
                goto out;
        }
        pid_t self = getpid();
        if (procd_adopt_process(c, self, pick->root_pid, &perr) != PROCD_OK) {
                logm(pamh, &o, LOG_E, "pam_procd_adopt: adopting pid %d into job %s (family %d) failed: %s "
                     "(action_adopt_failure: %s)", (int) self, pick->job_id, (int) pick->root_pid, perr.msg,
                     o.adopt_failure == ACT_ALLOW ? "allow" : "deny");
                if (o.adopt_failure == ACT_DENY)
                        pam_error(pamh, "Access denied by pam_procd_adopt: your session could not join job %s.",
                                  pick->job_id);
                rc = verdict(o.adopt_failure);
                goto out;
        }
        logm(pamh, &o, LOG_I, "pam_procd_adopt: pid %d of %s adopted into job %s (family %d)", (int) self, user,
             pick->job_id, (int) pick->root_pid);
        rc = PAM_SUCCESS;
out:
        free(jobs);
        procd_disconnect(c);
        return rc;
}
