/* procd-spank.c - procd as the step tracker of a Slurm node (a SPANK plugin).
 *
 * In slurmstepd (remote context) each step of a job (batch, extern, srun steps) becomes one
 * procd family: the first task is registered in task_post_fork (root, before the task
 * execs) with slurmstepd as the watcher and kill-on-watcher-exit, the node's later tasks
 * are adopted into it, and the family is named "JOBID.STEPID" with the job's uid.  When
 * the node's last task of the step exits (task_exit, not exit: slurmstepd calls exit only
 * after waiting up to 60 s for a step's stdout, which a setsid escaper may hold), the
 * step's usage is logged and appended to the accounting file, the family is killed and
 * unregistered.  The extern step, which has no task, ends in slurm_spank_exit.
 *
 * Reachability is checked in slurm_spank_init.  unreachable=refuse (the default) makes
 * every task of the step fail in slurm_spank_task_init, before it execs (an error returned
 * by task_post_fork is only logged: the task runs); unreachable=allow lets the step run
 * untracked with a warning in slurmd's log.
 *
 * SPANK hands a plugin no per-step pointer: the step's state is the one static below, one
 * per slurmstepd (one step); slurmstepd calls the task hooks one at a time. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "procd/client.h"
#include "spank-child.h"
#include "spank-options.h"
#include "spank-usage.h"

SPANK_PLUGIN(procd, 1);

/* Slurm's reserved step ids (slurm/slurm.h), named as Slurm names them. */
#define PS_STEP_BATCH 0xfffffffbu
#define PS_STEP_EXTERN 0xfffffffcu
#define PS_STEP_INTERACTIVE 0xfffffffau

typedef struct ps_step {
        ps_options opts;
        procd_client *client;  /* NULL: procd unreachable (allowed) or not in slurmstepd */
        uint32_t job_id, step_id;
        uid_t uid;
        char name[48];         /* "JOBID.STEPID" */
        pid_t root;            /* the family's root: the first task; 0 before it */
        uint32_t local_tasks;
        uint32_t exited;
        uint64_t start_usec;
        const char *refused;   /* why the step's tasks must not run (NULL: they may) */
        bool done;
} ps_step;

static ps_step step_state;

static uint64_t now_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static void step_name(char *buf, size_t size, uint32_t job_id, uint32_t step_id)
{
        if (step_id == PS_STEP_BATCH)
                snprintf(buf, size, "%u.batch", job_id);
        else if (step_id == PS_STEP_EXTERN)
                snprintf(buf, size, "%u.extern", job_id);
        else if (step_id == PS_STEP_INTERACTIVE)
                snprintf(buf, size, "%u.interactive", job_id);
        else
                snprintf(buf, size, "%u.%u", job_id, step_id);
}

static int step_ids(spank_t sp, ps_step *s)
{
        uint32_t local = 0;
        if (spank_get_item(sp, S_JOB_ID, &s->job_id) != ESPANK_SUCCESS ||
            spank_get_item(sp, S_JOB_STEPID, &s->step_id) != ESPANK_SUCCESS ||
            spank_get_item(sp, S_JOB_UID, &s->uid) != ESPANK_SUCCESS)
                return -EINVAL;
        if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) == ESPANK_SUCCESS)
                s->local_tasks = local;
        step_name(s->name, sizeof s->name, s->job_id, s->step_id);
        return 0;
}

int slurm_spank_init(spank_t sp, int ac, char *av[])
{
        if (spank_context() != S_CTX_REMOTE)
                return 0;
        ps_step *s = &step_state;
        memset(s, 0, sizeof *s);
        char why[320];
        /* errors fail the tasks (slurm_spank_task_init), not this hook: see there */
        if (step_ids(sp, s) < 0) {
                slurm_error("procd: cannot read the job and step ids: step refused");
                s->refused = "the job and step ids could not be read";
                return 0;
        }
        if (ps_options_parse(&s->opts, ac, av, why, sizeof why) < 0) {
                slurm_error("procd: plugstack.conf: %s: step %s refused", why, s->name);
                s->refused = "bad procd_spank.so options in plugstack.conf (slurmd's log names them)";
                return 0;
        }
        procd_error err = { 0 };
        if (procd_connect(s->opts.socket, &s->client, &err) == PROCD_OK) {
                procd_set_reconnect(s->client, 2000);
                return 0;
        }
        s->client = NULL;
        /* the extern step has no task to fail: it runs untracked; the job's other steps are
         * refused */
        if (!s->opts.allow_unreachable && s->step_id != PS_STEP_EXTERN)
                s->refused = "procd is not reachable on this node (unreachable=refuse)";
        slurm_error("procd: %s: step %s %s", err.msg, s->name,
                    s->refused                      ? "refused (unreachable=refuse)"
                    : !s->opts.allow_unreachable ? "runs untracked (an extern step has no task to refuse)"
                                                 : "runs untracked (unreachable=allow)");
        return 0;
}

/* A refused step's tasks end here, in the task before it execs, with status 1: a failed
 * slurm_spank_init would do it earlier, but then srun exits 0 ("launch failed"), and a
 * batch job is recorded COMPLETED with exit code 0 and the node drained (measured, 22.05).
 * The task's stderr is the user's by now. */
int slurm_spank_task_init(spank_t sp, int ac, char *av[])
{
        const ps_step *s = &step_state;
        if (spank_context() != S_CTX_REMOTE || !s->refused)
                return 0;
        fprintf(stderr, "procd: step %s refused: %s\n", s->name, s->refused);
        return -1;
}

/* The step's state in slurmstepd while procd is connected; NULL elsewhere (srun, sbatch,
 * slurmd) and for a step that runs untracked. */
static ps_step *tracked_step(void)
{
        return spank_context() == S_CTX_REMOTE && step_state.client ? &step_state : NULL;
}

/* The task (or the extern step's container) could not be tracked: with unreachable=refuse
 * it must not run untracked, and it has not exec'd yet. */
static int task_untracked(ps_step *s, pid_t pid, const char *what, const procd_error *err)
{
        if (s->opts.allow_unreachable || pid <= 1) {
                slurm_error("procd: step %s: %s %d: %s: it runs untracked (unreachable=allow)", s->name, what, (int) pid,
                            err->msg);
                return 0;
        }
        slurm_error("procd: step %s: %s %d: %s: task killed (unreachable=refuse)", s->name, what, (int) pid, err->msg);
        kill(pid, SIGKILL);
        return -1;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char *av[])
{
        ps_step *s = tracked_step();
        if (!s)
                return 0;
        pid_t pid = 0;
        if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS) {
                if (s->step_id != PS_STEP_EXTERN)
                        return 0;
                pid = ps_only_child(getpid());
                if (pid <= 1) {
                        slurm_error("procd: step %s: no single container process to track", s->name);
                        return 0;
                }
        }
        procd_error err = { 0 };
        if (s->root) {
                if (procd_adopt_process(s->client, pid, s->root, &err) != PROCD_OK)
                        return task_untracked(s, pid, "cannot adopt task", &err);
                return 0;
        }
        if (procd_register_subfamily_flags(s->client, pid, getpid(), s->opts.interval_sec,
                                           PROCD_REGISTER_KILL_ON_WATCHER_EXIT, &err) != PROCD_OK)
                return task_untracked(s, pid, "cannot register task", &err);
        s->root = pid;
        s->start_usec = now_usec();
        if (procd_set_family_job(s->client, pid, s->name, s->uid, &err) != PROCD_OK)
                slurm_error("procd: step %s: SetFamilyJob: %s", s->name, err.msg);
        return 0;
}

/* Usage, then kill and unregister: the step's tasks are gone, what is left escaped them. */
static void step_finish(ps_step *s)
{
        if (s->done || !s->client || !s->root)
                return;
        s->done = true;
        procd_error err = { 0 };
        procd_usage before, after;
        char error[300] = "";
        bool have_before = procd_get_usage(s->client, s->root, &before, &err) == PROCD_OK;
        if (!have_before)
                snprintf(error, sizeof error, "GetUsage: %s", err.msg);
        bool killed = procd_kill_family(s->client, s->root, &err) == PROCD_OK;
        if (!killed)
                snprintf(error, sizeof error, "KillFamily: %s", err.msg);
        /* after the kill: the CPU the leftovers burnt until they died is counted too */
        bool have_after = procd_get_usage(s->client, s->root, &after, &err) == PROCD_OK;
        ps_step_usage rec = {
                .step = s->name,
                .job_id = s->job_id,
                .uid = s->uid,
                .tasks = s->exited,
                .start_usec = s->start_usec,
                .end_usec = now_usec(),
                .left_known = have_before && before.num_procs.available,
                .left = have_before ? before.num_procs.value : 0,
                .killed = killed,
                .usage = have_after ? &after : have_before ? &before : NULL,
                .error = error,
        };
        char line[512];
        ps_usage_log_line(&rec, line, sizeof line);
        slurm_info("procd: %s", line);
        if (s->opts.accounting[0]) {
                char node[256] = "";
                gethostname(node, sizeof node - 1);
                int r = ps_usage_append_json(&rec, node, s->opts.accounting);
                if (r < 0)
                        slurm_error("procd: step %s: cannot append to %s: %s", s->name, s->opts.accounting, strerror(-r));
        }
        if (procd_unregister_family(s->client, s->root, &err) != PROCD_OK)
                slurm_error("procd: step %s: UnregisterFamily: %s", s->name, err.msg);
}

int slurm_spank_task_exit(spank_t sp, int ac, char *av[])
{
        ps_step *s = tracked_step();
        if (!s)
                return 0;
        s->exited++;
        if (s->local_tasks && s->exited >= s->local_tasks)
                step_finish(s);
        return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char *av[])
{
        ps_step *s = tracked_step();
        if (!s)
                return 0;
        step_finish(s); /* the extern step; a step whose task count was not known */
        procd_disconnect(s->client);
        s->client = NULL;
        return 0;
}
