/* command-jobs.c - job records, ListJobs and AdoptProcess (see command-jobs.h). */
#include "command-jobs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "procd/core/audit.h"
#include "procd/core/command-query.h"
#include "procd/core/family-cgroup.h"
#include "procd/wire.h"
#include "trackers/cgroup.h"
#include "trackers/util.h"

typedef struct job_rec {
        procd_job_info info;
        uint64_t root_start_ticks; /* the family's root when it was named */
} job_rec;

static uint64_t realtime_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* The record's family is still registered with the same root process. */
static bool rec_live(pd_commands *cm, const job_rec *j)
{
        pd_family *f = pd_registry_find(cm->reg, j->info.root_pid);
        return f && f->parent && f->root_start_ticks == j->root_start_ticks;
}

static procd_status set_family_job_impl(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *job_id,
                                   uid_t owner_uid, procd_error *err)
{
        if (!procd_job_id_valid(job_id))
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "SetFamilyJob: a job id is 1..%d printable characters",
                                    PROCD_JOB_ID_MAX - 1);
        pd_family *f = root_pid > 1 ? pd_registry_find(cm->reg, root_pid) : NULL;
        if (!f || !f->parent)
                return procd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "SetFamilyJob: no subfamily with root pid %d",
                                    (int) root_pid);
        if (who->uid != 0) {
                uid_t owner;
                if (tr_proc_uid_checked(f->root_pid, f->root_start_ticks, &owner) < 0 || owner != who->uid ||
                    owner_uid != who->uid)
                        return procd_error_set(err, PROCD_E_PERMISSION,
                                            "SetFamilyJob: uid %u may name only its own families, for itself",
                                            (unsigned) who->uid);
        }
        pd_cmd_record_job(cm, root_pid, f->root_start_ticks, job_id, owner_uid);
        return PROCD_OK;
}

void pd_cmd_record_job(pd_commands *cm, pid_t root_pid, uint64_t start_ticks, const char *job_id, uid_t owner_uid)
{
        if (!cm->jobs)
                cm->jobs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        job_rec *j = g_new0(job_rec, 1);
        j->info.root_pid = root_pid;
        j->info.owner_uid = owner_uid;
        snprintf(j->info.job_id, sizeof j->info.job_id, "%s", job_id);
        j->info.registered_usec = realtime_usec();
        j->root_start_ticks = start_ticks;
        g_hash_table_replace(cm->jobs, GINT_TO_POINTER(root_pid), j);
}

void pd_cmd_forget_job(pd_commands *cm, pid_t root_pid)
{
        if (cm->jobs)
                g_hash_table_remove(cm->jobs, GINT_TO_POINTER(root_pid));
}

static int by_time(const void *a, const void *b)
{
        const procd_job_info *x = a, *y = b;
        if (x->registered_usec != y->registered_usec)
                return x->registered_usec < y->registered_usec ? -1 : 1;
        return (x->root_pid > y->root_pid) - (x->root_pid < y->root_pid);
}

static gboolean rec_dead(gpointer key, gpointer value, gpointer cm)
{
        (void) key;
        return !rec_live(cm, value);
}

procd_status pd_cmd_list_jobs(pd_commands *cm, const pd_caller *who, uid_t uid, procd_job_info **out, size_t *n,
                              procd_error *err)
{
        *out = NULL;
        *n = 0;
        if (who->uid != 0 && uid != who->uid)
                return procd_error_set(err, PROCD_E_PERMISSION, "ListJobs: uid %u may list only its own jobs",
                                    (unsigned) who->uid);
        if (!cm->jobs)
                return PROCD_OK;
        g_hash_table_foreach_remove(cm->jobs, rec_dead, cm);
        size_t cap = g_hash_table_size(cm->jobs);
        if (cap == 0)
                return PROCD_OK;
        procd_job_info *v = calloc(cap, sizeof *v);
        if (!v)
                return procd_error_set(err, PROCD_E_INTERNAL, "out of memory");
        GHashTableIter it;
        gpointer key, value;
        g_hash_table_iter_init(&it, cm->jobs);
        while (g_hash_table_iter_next(&it, &key, &value)) {
                const job_rec *j = value;
                if (uid == (uid_t) -1 || j->info.owner_uid == uid)
                        v[(*n)++] = j->info;
        }
        qsort(v, *n, sizeof *v, by_time);
        *out = v;
        return PROCD_OK;
}

static procd_status adopt_process_impl(pd_commands *cm, const pd_caller *who, pid_t pid, pid_t family_root,
                                  procd_error *err)
{
        if (who->uid != 0)
                return procd_error_set(err, PROCD_E_PERMISSION, "AdoptProcess: only root may do this (caller uid %u)",
                                    (unsigned) who->uid);
        if (pid <= 1)
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "AdoptProcess: bad pid %d", (int) pid);
        pid_t tgid;
        if (tr_proc_tgid(pid, &tgid) < 0)
                return procd_error_set(err, PROCD_E_PROCESS_NOT_FOUND, "AdoptProcess: no process %d", (int) pid);
        if (tgid != pid)
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "AdoptProcess: %d is a thread of %d", (int) pid,
                                    (int) tgid);
        if (pd_holds_procd(pid))
                return procd_error_set(err, PROCD_E_BAD_ARGUMENT, "AdoptProcess: %d is procd or its ancestor", (int) pid);
        pd_family *f = family_root > 1 ? pd_registry_find(cm->reg, family_root) : NULL;
        if (!f || !f->parent)
                return procd_error_set(err, PROCD_E_FAMILY_NOT_FOUND, "AdoptProcess: no subfamily with root pid %d",
                                    (int) family_root);
        if (!f->cgroup_path)
                return procd_error_set(err, PROCD_E_BAD_CGROUP,
                                    "AdoptProcess: family %d has no cgroup (tracked by /proc: %s)", (int) family_root,
                                    f->no_cgroup_reason ? f->no_cgroup_reason : "no cgroup");
        const pd_famcg *fc = pd_registry_family_cgroups(cm->reg);
        const tr_hierarchies *hs = pd_registry_hierarchies(cm->reg);
        const char *target = f->cgroup_path;
        tr_error terr = { 0 };
        _cleanup_cgroup_ tr_cgroup *cg = NULL;
        char label[400], where[256];
        if (f->cgroup_origin == PD_CG_PLACED) {
                /* cgroups another manager placed the family's root in: procd moves nothing
                 * into them (their membership is that manager's); a process already there
                 * is the family's */
                target = pd_famcg_placed_label(hs, f->cgroup_path, label, sizeof label);
                if (pd_famcg_open_placed(hs, f->cgroup_path, &cg, &terr) < 0)
                        return procd_error_set(err, PROCD_E_BAD_CGROUP, "AdoptProcess: family %d: %s", (int) family_root,
                                            terr.msg);
                tr_pid_cgroups pc;
                if (tr_pid_cgroups_read(hs, pid, &pc, NULL) < 0)
                        return procd_error_set(err, PROCD_E_PROCESS_NOT_FOUND, "AdoptProcess: no process %d", (int) pid);
                bool inside = true;
                for (int i = 0; i < hs->n; i++)
                        if (tr_cgroup_path(cg, i) && !(pc.paths[i] && tr_cgroup_path_under(pc.paths[i], tr_cgroup_path(cg, i))))
                                inside = false;
                tr_pid_cgroups_clear(&pc);
                if (!inside)
                        return procd_error_set(err, PROCD_E_BAD_CGROUP,
                                            "AdoptProcess: family %d is tracked through cgroups another manager placed its "
                                            "root in (%s): procd moves no process into them",
                                            (int) family_root, target);
                g_message("adopted pid %d into family %d (already in its placed cgroups %s)", (int) pid,
                          (int) family_root, target);
                return PROCD_OK;
        }
        /* a family cgroup procd made: its leaf in v2, itself in v1 (family-cgroup.h) */
        unsigned how = f->cgroup_origin == PD_CG_FAMILY ? TR_CG_MAY_ACT | TR_CG_OWNED : TR_CG_MAY_ACT;
        if (tr_cgroup_open(hs, target, how, &cg, &terr) < 0)
                return procd_error_set(err, PROCD_E_BAD_CGROUP, "AdoptProcess: family %d: %s", (int) family_root, terr.msg);
        /* never undo another manager's placement (family-cgroup.h): the process moves only
         * in the hierarchies where it sits in its parent's cgroup */
        const char *own[] = { pd_famcg_base(fc), NULL };
        uint32_t left = 0;
        int r = pd_famcg_attach_unplaced(cg, pid, own[0] ? own : NULL, f->cgroup_origin == PD_CG_FAMILY, &left, where,
                                         sizeof where, &terr);
        if (r == -ESRCH)
                return procd_error_set(err, PROCD_E_PROCESS_NOT_FOUND, "AdoptProcess: %s", terr.msg);
        if (r == -EBUSY)
                return procd_error_set(err, PROCD_E_BAD_CGROUP, "AdoptProcess: %s, not adopted", terr.msg);
        if (r < 0)
                return procd_error_set(err, PROCD_E_INTERNAL, "AdoptProcess: moving %d into %s: %s", (int) pid, target,
                                    terr.msg);
        if (left)
                g_message("AdoptProcess: pid %d stays in %s, where another manager placed it", (int) pid, where);
        pd_registry_set_flag(cm->reg, f, PD_FAMILY_MOVED_IN, true); /* its charge stayed behind */
        g_message("adopted pid %d into family %d (cgroup %s)", (int) pid, (int) family_root, target);
        return PROCD_OK;
}

const char *pd_cmd_job_of(pd_commands *cm, pid_t root_pid)
{
        const job_rec *j = cm->jobs ? g_hash_table_lookup(cm->jobs, GINT_TO_POINTER(root_pid)) : NULL;
        return j && rec_live(cm, j) ? j->info.job_id : NULL;
}

void pd_cmd_jobs_free(pd_commands *cm)
{
        if (cm->jobs)
                g_hash_table_destroy(cm->jobs);
        cm->jobs = NULL;
}

/* The audit trail (audit.h): one record per call. */
procd_status pd_cmd_set_family_job(pd_commands *cm, const pd_caller *who, pid_t root_pid, const char *job_id,
                                   uid_t owner_uid, procd_error *err)
{
        procd_status s = set_family_job_impl(cm, who, root_pid, job_id, owner_uid, err);
        pd_audit_record r = { .op = "set-job", .family = root_pid, .job = procd_job_id_valid(job_id) ? job_id : NULL,
                              .who = who, .result = s, .message = err ? err->msg : NULL };
        pd_audit_log(&r);
        return s;
}

procd_status pd_cmd_adopt_process(pd_commands *cm, const pd_caller *who, pid_t pid, pid_t family_root,
                                  procd_error *err)
{
        const char *j = family_root > 1 ? pd_cmd_job_of(cm, family_root) : NULL;
        char job[PROCD_JOB_ID_MAX];
        snprintf(job, sizeof job, "%s", j ? j : "");
        procd_status s = adopt_process_impl(cm, who, pid, family_root, err);
        pd_audit_record r = { .op = "adopt", .family = family_root, .job = job, .target = pid, .who = who,
                              .result = s, .message = err ? err->msg : NULL };
        pd_audit_log(&r);
        return s;
}
