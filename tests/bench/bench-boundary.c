/* bench-boundary - what the job-boundary options add to a launch.
 *
 *  1. the device filter alone, in-process: tr_dev_filter_apply (generate + load + attach the
 *     BPF program, v1 writes on hybrid) + free (detach) on an existing cgroup; median of 100
 *  2. the launch path of procd-starter in-process (prepare, device rules, place, clone3 with
 *     the namespace flags, mounts, exec of /bin/true, until it exited), with no option and
 *     with each boundary option; median of RUNS, the variants alternating within each run so
 *     that the machine's noise hits all alike; "extra" is the median minus the plain one.
 *
 * Everything lives under /procd-bench-boundary.<pid> and is removed at the end.  Needs root.
 * Run once; prints one table (quoted in NOTES). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "starter/jobdevices.h"
#include "starter/launch.h"
#include "trackers/cgroup.h"
#include "trackers/devices.h"
#include "trackers/util.h"
#include "benchutil.h"

#define RUNS 201

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static uint64_t filter_once(tr_cgroup *cg, const tr_dev_rules *rs)
{
        tr_dev_filter *f = NULL;
        tr_error err = { 0 };
        uint64_t t0 = tr_now_usec();
        if (tr_dev_filter_apply(&f, cg, rs, &err) < 0) {
                fprintf(stderr, "apply: %s\n", err.msg);
                exit(1);
        }
        tr_dev_filter_free(f);
        return tr_now_usec() - t0;
}

/* One launch of /bin/true with the boundary options opts into cg, the way procd-starter
 * does it (prepare, device rules, place, clone3, exec) until the job has exited; teardown
 * (detach, per-job dir removal) not counted. */
static uint64_t launch_once(tr_cgroup *cg, const char *const *opts)
{
        char *argv[32] = { "bench" };
        int n = 1;
        for (int i = 0; opts[i]; i++)
                argv[n++] = (char *) opts[i];
        argv[n++] = "--";
        argv[n++] = "/bin/true";
        argv[n] = NULL;
        st_options o;
        tr_error err = { 0 };
        if (st_options_parse(n, argv, &o, &err) < 0) {
                fprintf(stderr, "options: %s\n", err.msg);
                exit(1);
        }
        st_launch l;
        tr_dev_rules rules = { 0 };
        tr_dev_filter *f = NULL;
        pid_t pid;
        int pidfd;
        uint64_t t0 = tr_now_usec();
        if (st_launch_prepare(&l, &o, &err) < 0 || st_devices_apply(cg, &o, &rules, &f, &err) < 0 ||
            st_launch_place(&l, cg, &err) < 0 || st_launch_start(&l, &pid, &pidfd, &err) < 0 ||
            st_launch_release(&l, pid, &pidfd, &err) < 0) { /* the gate: the child waits for it to exec */
                fprintf(stderr, "launch: %s\n", err.msg);
                exit(1);
        }
        siginfo_t si;
        waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED);
        uint64_t dt = tr_now_usec() - t0;
        close(pidfd);
        tr_dev_filter_free(f);
        tr_dev_rules_free(&rules);
        st_launch_free(&l);
        st_options_free(&o);
        return dt;
}

int main(void)
{
        if (geteuid() != 0) {
                fprintf(stderr, "bench-boundary needs root\n");
                return 77;
        }
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        tr_hierarchies hs;
        tr_error err = { 0 };
        if (tr_hierarchies_discover(&hs, &err) < 0) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
        }
        char base[64], path[128];
        snprintf(base, sizeof base, "/procd-bench-boundary.%d", (int) getpid());
        snprintf(path, sizeof path, "%s/filter", base);
        tr_cgroup *cg = NULL;
        if (tr_cgroup_create(&hs, path, &cg, &err) < 0) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
        }

        /* 1 */
        tr_dev_rules one = { 0 }, ten = { 0 };
        tr_dev_rule r;
        tr_dev_rule_parse("c:1:3:rwm", false, &r, NULL);
        tr_dev_rules_add(&one, &r, NULL);
        for (int i = 0; i < 10; i++) {
                char t[32];
                snprintf(t, sizeof t, "c:195:%d:rwm", i);
                tr_dev_rule_parse(t, false, &r, NULL);
                tr_dev_rules_add(&ten, &r, NULL);
        }
        uint64_t v1[100], v10[100];
        for (int i = 0; i < 100; i++) {
                v1[i] = filter_once(cg, &one);
                v10[i] = filter_once(cg, &ten);
        }
        printf("device filter in-process (%s)\n", tr_cgroup_mode_name(hs.mode));
        printf("  1 rule:    apply+free median %6.1f us\n", (double) bench_median(v1, 100));
        printf("  10 rules:  apply+free median %6.1f us\n", (double) bench_median(v10, 100));

        /* 2 */
        static const char *const variants[][6] = {
                { NULL },
                { "--device-deny", "c:1:3:rwm", NULL },
                { "--hide-gpus", NULL },
                { "--private-tmp", NULL },
                { "--private-tmp=/var/tmp", NULL },
                { "--pid-namespace", NULL },
                { "--pid-namespace", "--private-tmp", NULL },
        };
        static const char *const names[] = { "plain", "--device-deny c:1:3:rwm", "--hide-gpus", "--private-tmp (tmpfs)",
                                             "--private-tmp=/var/tmp", "--pid-namespace",
                                             "--pid-namespace --private-tmp" };
        enum { NV = sizeof names / sizeof names[0] };
        static uint64_t t[NV][RUNS];
        for (int run = 0; run < RUNS; run++)
                for (int v = 0; v < NV; v++)
                        t[v][run] = launch_once(cg, variants[v]);
        printf("launch of /bin/true into the job cgroup until it exited, median of %d\n", RUNS);
        uint64_t plain = bench_median(t[0], RUNS);
        for (int v = 0; v < NV; v++) {
                uint64_t m = v == 0 ? plain : bench_median(t[v], RUNS);
                printf("  %-28s %7.2f ms  extra %+6.2f ms\n", names[v], (double) m / 1000.0,
                       ((double) m - (double) plain) / 1000.0);
        }
        tr_cgroup_destroy(cg, 5000000, NULL);
        tr_cgroup_free(cg);
        tr_dev_rules_free(&one);
        tr_dev_rules_free(&ten);
        /* the base in every hierarchy (the starter removed its own job cgroups) */
        tr_cgroup *b = NULL;
        if (tr_cgroup_open(&hs, base, TR_CG_MAY_ACT | TR_CG_OWNED, &b, NULL) == 0) {
                tr_cgroup_destroy(b, 5000000, NULL);
                tr_cgroup_free(b);
        }
        return 0;
}
