/* options.c - procd-starter command line (getopt_long). */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procd/job-info.h"
#include "procd/version.h"
#include "trackers/util.h"

enum {
        OPT_SYSTEMD = 1000,
        OPT_SYSTEMD_ADDRESS,
        OPT_SYSTEMD_TIMEOUT,
        OPT_CGROUP_BASE,
        OPT_NAME,
        OPT_USER,
        OPT_GROUP,
        OPT_CWD,
        OPT_ENV,
        OPT_STDIN,
        OPT_STDOUT,
        OPT_STDERR,
        OPT_MEMORY_MAX,
        OPT_MEMORY_HIGH,
        OPT_MEMORY_SWAP_MAX,
        OPT_CPUS,
        OPT_CPU_WEIGHT,
        OPT_CPUSET_CPUS,
        OPT_CPUSET_MEMS,
        OPT_PIDS_MAX,
        OPT_IO_MAX,
        OPT_NO_OOM_GROUP,
        OPT_BEST_EFFORT,
        OPT_SOCKET,
        OPT_NO_PROCD,
        OPT_REQUIRE_PROCD,
        OPT_KILL_GRACE,
        OPT_REPORT,
        OPT_QUIET,
        OPT_LAUNCH,
        OPT_DEVICE_ALLOW,
        OPT_DEVICE_DENY,
        OPT_HIDE_GPUS,
        OPT_GPU,
        OPT_PRIVATE_TMP,
        OPT_PRIVATE_TMP_SIZE,
        OPT_PID_NAMESPACE,
        OPT_JOB_ID,
        OPT_HELP,
        OPT_VERSION,
};

static const struct option long_options[] = {
        { "systemd", required_argument, NULL, OPT_SYSTEMD },
        { "systemd-address", required_argument, NULL, OPT_SYSTEMD_ADDRESS },
        { "systemd-timeout", required_argument, NULL, OPT_SYSTEMD_TIMEOUT },
        { "cgroup-base", required_argument, NULL, OPT_CGROUP_BASE },
        { "name", required_argument, NULL, OPT_NAME },
        { "user", required_argument, NULL, OPT_USER },
        { "group", required_argument, NULL, OPT_GROUP },
        { "cwd", required_argument, NULL, OPT_CWD },
        { "env", required_argument, NULL, OPT_ENV },
        { "stdin", required_argument, NULL, OPT_STDIN },
        { "stdout", required_argument, NULL, OPT_STDOUT },
        { "stderr", required_argument, NULL, OPT_STDERR },
        { "memory-max", required_argument, NULL, OPT_MEMORY_MAX },
        { "memory-high", required_argument, NULL, OPT_MEMORY_HIGH },
        { "memory-swap-max", required_argument, NULL, OPT_MEMORY_SWAP_MAX },
        { "cpus", required_argument, NULL, OPT_CPUS },
        { "cpu-weight", required_argument, NULL, OPT_CPU_WEIGHT },
        { "cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS },
        { "cpuset-mems", required_argument, NULL, OPT_CPUSET_MEMS },
        { "pids-max", required_argument, NULL, OPT_PIDS_MAX },
        { "io-max", required_argument, NULL, OPT_IO_MAX },
        { "no-oom-group", no_argument, NULL, OPT_NO_OOM_GROUP },
        { "best-effort", no_argument, NULL, OPT_BEST_EFFORT },
        { "socket", required_argument, NULL, OPT_SOCKET },
        { "no-procd", no_argument, NULL, OPT_NO_PROCD },
        { "require-procd", no_argument, NULL, OPT_REQUIRE_PROCD },
        { "kill-grace", required_argument, NULL, OPT_KILL_GRACE },
        { "report", required_argument, NULL, OPT_REPORT },
        { "quiet", no_argument, NULL, OPT_QUIET },
        { "launch", required_argument, NULL, OPT_LAUNCH },
        { "device-allow", required_argument, NULL, OPT_DEVICE_ALLOW },
        { "device-deny", required_argument, NULL, OPT_DEVICE_DENY },
        { "hide-gpus", no_argument, NULL, OPT_HIDE_GPUS },
        { "gpu", required_argument, NULL, OPT_GPU },
        { "private-tmp", optional_argument, NULL, OPT_PRIVATE_TMP },
        { "private-tmp-size", required_argument, NULL, OPT_PRIVATE_TMP_SIZE },
        { "pid-namespace", no_argument, NULL, OPT_PID_NAMESPACE },
        { "job-id", required_argument, NULL, OPT_JOB_ID },
        { "help", no_argument, NULL, OPT_HELP },
        { "version", no_argument, NULL, OPT_VERSION },
        { NULL, 0, NULL, 0 },
};

void st_usage(FILE *f)
{
        fputs("usage: procd-starter [options] -- CMD [ARGS...]\n"
              "\n"
              "Runs CMD in its own cgroup, applies limits, tracks the whole family, kills what\n"
              "is left when CMD exits, prints a usage report and removes the cgroup.\n"
              "\n"
              "cgroup:\n"
              "  --systemd=auto|yes|no     job cgroup in a delegated systemd scope (auto: when\n"
              "                            /run/systemd/system exists); falls back to cgroupfs\n"
              "  --systemd-address ADDR    D-Bus address of the manager (default: the system\n"
              "                            manager's unix:path=/run/systemd/private)\n"
              "  --systemd-timeout MS      wait for the scope at most MS (default 5000)\n"
              "  --cgroup-base PATH        cgroupfs mode: parent of job cgroups (default /procd)\n"
              "  --name NAME               job cgroup name (default job.<starter pid>)\n"
              "process:\n"
              "  --user USER --group GROUP drop privileges (supplementary groups of USER)\n"
              "  --cwd DIR  --env K=V (repeatable)  --stdin/--stdout/--stderr FILE\n"
              "limits (sizes take K/M/G suffixes or \"max\"):\n"
              "  --memory-max SIZE  --memory-high SIZE (v2 only)  --memory-swap-max SIZE\n"
              "  --cpus N (quota, fractional)  --cpu-weight 1..10000  --cpuset-cpus LIST\n"
              "  --cpuset-mems LIST  --pids-max N  --io-max \"MAJ:MIN rbps=N wbps=N riops=N wiops=N\"\n"
              "  --no-oom-group            do not set memory.oom.group=1 (v2)\n"
              "  --best-effort             a limit whose controller is missing is a warning\n"
              "devices (TYPE a|b|c, MAJOR/MINOR number or *, ACCESS subset of rwm; in order,\n"
              "the last matching rule wins, default allow; v2 BPF program, v1 devices.allow/deny):\n"
              "  --device-allow TYPE:MAJOR:MINOR:ACCESS  --device-deny TYPE:MAJOR:MINOR:ACCESS\n"
              "  --hide-gpus               deny the NVIDIA/AMD/Intel GPU nodes under /dev the job was\n"
              "                            not given (by --gpu or --device-allow)\n"
              "  --gpu N[,N...]            GPU numbers the job was given (nvidiaN, dri/cardN,\n"
              "                            dri/renderD(128+N); shared control nodes with any)\n"
              "namespaces:\n"
              "  --private-tmp[=DIR]       fresh /tmp and /var/tmp: tmpfs (charged to the job's memory),\n"
              "                            or bind mounts of a per-job directory under DIR; removed after\n"
              "  --private-tmp-size SIZE   tmpfs size (default: --memory-max when given)\n"
              "  --pid-namespace           the job in its own PID namespace under a minimal init, own /proc\n"
              "tracking and end of job:\n"
              "  --job-id ID               the job's id for procd (ssh adoption; default: --name)\n"
              "  --socket PATH             procd socket (default " "/run/procd/procd.sock" ")\n"
              "  --no-procd                track in-process (embedded tracker)\n"
              "  --require-procd           refuse to run the job unless procd tracks it (without it\n"
              "                            the starter falls back to the embedded tracker, warning)\n"
              "  --kill-grace SECONDS      SIGTERM, then kill after this (default 5)\n"
              "  --report FILE             write the final report as JSON\n"
              "  --quiet                   no report on stderr\n"
              "  --launch=auto|clone3|fork how to place the job (fork: fallback path, for tests)\n"
              "  --version                 print the version and exit\n"
              "\n"
              "exit status: the job's; 128+N when killed by signal N; 122 when the OOM killer\n"
              "killed a member and the job failed; 125 starter failure; 126/127 cannot execute.\n",
              f);
}

static int bad(tr_error *err, const char *opt, const char *arg)
{
        return tr_error_set(err, EINVAL, "invalid value for --%s: '%s'", opt, arg);
}

static int parse_size_opt(const char *opt, const char *arg, bool *has, uint64_t *out, tr_error *err)
{
        if (tr_parse_size(arg, out) < 0)
                return bad(err, opt, arg);
        *has = true;
        return 0;
}

/* "N" or "N,M,...", appended to o->gpus */
static int parse_gpus(const char *arg, st_options *o, tr_error *err)
{
        const char *p = arg;
        for (;;) {
                uint64_t v;
                if (tr_take_u64(&p, &v) < 0 || v > 65535 || (*p && *p != ','))
                        return bad(err, "gpu", arg);
                if (o->n_gpus >= ST_MAX_GPUS)
                        return tr_error_set(err, EINVAL, "too many --gpu (at most %d)", ST_MAX_GPUS);
                o->gpus[o->n_gpus++] = (int) v;
                if (!*p)
                        return 0;
                p++;
        }
}

int st_options_parse(int argc, char **argv, st_options *o, tr_error *err)
{
        memset(o, 0, sizeof *o);
        o->cgroup_base = "/procd";
        o->kill_grace_usec = 5000000;
        o->systemd_timeout_ms = 5000;
        o->limits.oom_group = true;
        o->limits.cpu_period_usec = 100000;
        o->env = calloc((size_t) argc + 1, sizeof *o->env);
        if (!o->env)
                return tr_error_set(err, ENOMEM, "out of memory");

        optind = 1;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, "+h", long_options, NULL)) != -1) {
                const char *name = optind > 1 && optind - 1 < argc ? argv[optind - 1] : "?";
                char *end;
                int r = 0;
                switch (c) {
                case OPT_SYSTEMD:
                        if (strcmp(optarg, "auto") == 0)
                                o->systemd = ST_SYSTEMD_AUTO;
                        else if (strcmp(optarg, "yes") == 0)
                                o->systemd = ST_SYSTEMD_YES;
                        else if (strcmp(optarg, "no") == 0)
                                o->systemd = ST_SYSTEMD_NO;
                        else
                                return bad(err, "systemd", optarg);
                        break;
                case OPT_SYSTEMD_ADDRESS: o->systemd_address = optarg; break;
                case OPT_SYSTEMD_TIMEOUT: {
                        uint64_t v;
                        if (tr_parse_u64(optarg, &v) < 0 || v == 0 || v > 600000)
                                return bad(err, "systemd-timeout", optarg);
                        o->systemd_timeout_ms = (int) v;
                        break;
                }
                case OPT_CGROUP_BASE:
                        if (optarg[0] != '/' || strstr(optarg, ".."))
                                return bad(err, "cgroup-base", optarg);
                        o->cgroup_base = optarg;
                        break;
                case OPT_NAME:
                        if (!optarg[0] || strchr(optarg, '/') || strcmp(optarg, ".") == 0 ||
                            strcmp(optarg, "..") == 0)
                                return bad(err, "name", optarg);
                        o->name = optarg;
                        break;
                case OPT_USER: o->user = optarg; break;
                case OPT_GROUP: o->group = optarg; break;
                case OPT_CWD: o->cwd = optarg; break;
                case OPT_ENV:
                        if (!strchr(optarg, '=') || optarg[0] == '=')
                                return bad(err, "env", optarg);
                        o->env[o->n_env++] = optarg;
                        break;
                case OPT_STDIN: o->stdin_path = optarg; break;
                case OPT_STDOUT: o->stdout_path = optarg; break;
                case OPT_STDERR: o->stderr_path = optarg; break;
                case OPT_MEMORY_MAX:
                        r = parse_size_opt("memory-max", optarg, &o->limits.has_memory_max, &o->limits.memory_max, err);
                        break;
                case OPT_MEMORY_HIGH:
                        r = parse_size_opt("memory-high", optarg, &o->limits.has_memory_high, &o->limits.memory_high, err);
                        break;
                case OPT_MEMORY_SWAP_MAX:
                        r = parse_size_opt("memory-swap-max", optarg, &o->limits.has_memory_swap_max,
                                           &o->limits.memory_swap_max, err);
                        break;
                case OPT_CPUS:
                        errno = 0;
                        o->limits.cpus = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(o->limits.cpus > 0) || o->limits.cpus > 4096 ||
                            isnan(o->limits.cpus))
                                return bad(err, "cpus", optarg);
                        o->limits.has_cpus = true;
                        break;
                case OPT_CPU_WEIGHT:
                        if (tr_parse_u64(optarg, &o->limits.cpu_weight) < 0 || o->limits.cpu_weight < 1 ||
                            o->limits.cpu_weight > 10000)
                                return bad(err, "cpu-weight", optarg);
                        o->limits.has_cpu_weight = true;
                        break;
                case OPT_CPUSET_CPUS:
                        if (!optarg[0] || strspn(optarg, "0123456789,-") != strlen(optarg))
                                return bad(err, "cpuset-cpus", optarg);
                        o->limits.cpuset_cpus = optarg;
                        break;
                case OPT_CPUSET_MEMS:
                        if (!optarg[0] || strspn(optarg, "0123456789,-") != strlen(optarg))
                                return bad(err, "cpuset-mems", optarg);
                        o->limits.cpuset_mems = optarg;
                        break;
                case OPT_PIDS_MAX:
                        if (strcmp(optarg, "max") == 0)
                                o->limits.pids_max = UINT64_MAX;
                        else if (tr_parse_u64(optarg, &o->limits.pids_max) < 0 || o->limits.pids_max == 0)
                                return bad(err, "pids-max", optarg);
                        o->limits.has_pids_max = true;
                        break;
                case OPT_IO_MAX:
                        if (o->limits.n_io_max >= ST_MAX_IO)
                                return tr_error_set(err, EINVAL, "too many --io-max (at most %d)", ST_MAX_IO);
                        o->limits.io_max[o->limits.n_io_max++] = optarg;
                        break;
                case OPT_NO_OOM_GROUP: o->limits.oom_group = false; break;
                case OPT_BEST_EFFORT: o->best_effort = true; break;
                case OPT_SOCKET: o->socket_path = optarg; break;
                case OPT_NO_PROCD: o->no_procd = true; break;
                case OPT_REQUIRE_PROCD: o->require_procd = true; break;
                case OPT_KILL_GRACE: {
                        errno = 0;
                        double s = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(s >= 0) || s > 86400)
                                return bad(err, "kill-grace", optarg);
                        o->kill_grace_usec = (uint64_t) (s * 1e6);
                        break;
                }
                case OPT_REPORT: o->report_path = optarg; break;
                case OPT_QUIET: o->quiet = true; break;
                case OPT_LAUNCH:
                        if (strcmp(optarg, "auto") == 0)
                                o->launch = ST_LAUNCH_AUTO;
                        else if (strcmp(optarg, "clone3") == 0)
                                o->launch = ST_LAUNCH_CLONE3;
                        else if (strcmp(optarg, "fork") == 0)
                                o->launch = ST_LAUNCH_FORK;
                        else
                                return bad(err, "launch", optarg);
                        break;
                case OPT_DEVICE_ALLOW:
                case OPT_DEVICE_DENY: {
                        tr_dev_rule rule;
                        r = tr_dev_rule_parse(optarg, c == OPT_DEVICE_ALLOW, &rule, err);
                        if (r == 0)
                                r = tr_dev_rules_add(&o->devices, &rule, err);
                        break;
                }
                case OPT_HIDE_GPUS: o->hide_gpus = true; break;
                case OPT_GPU:
                        r = parse_gpus(optarg, o, err);
                        break;
                case OPT_PRIVATE_TMP:
                        o->private_tmp = true;
                        if (optarg && (optarg[0] != '/' || strstr(optarg, "..")))
                                return bad(err, "private-tmp", optarg);
                        o->private_tmp_dir = optarg;
                        break;
                case OPT_PRIVATE_TMP_SIZE:
                        if (tr_parse_size(optarg, &o->private_tmp_size) < 0 || o->private_tmp_size == 0 ||
                            o->private_tmp_size == UINT64_MAX)
                                return bad(err, "private-tmp-size", optarg);
                        break;
                case OPT_PID_NAMESPACE: o->pid_namespace = true; break;
                case OPT_JOB_ID:
                        if (!procd_job_id_valid(optarg))
                                return bad(err, "job-id", optarg);
                        o->job_id = optarg;
                        break;
                case 'h':
                case OPT_HELP:
                        st_usage(stdout);
                        return 1;
                case OPT_VERSION:
                        printf("procd-starter %s\n", PROCD_VERSION);
                        return 1;
                case ':':
                        return tr_error_set(err, EINVAL, "option %s needs a value", name);
                default:
                        return tr_error_set(err, EINVAL, "unknown option %s (see --help)", name);
                }
                if (r < 0)
                        return r;
        }
        if (o->no_procd && o->require_procd)
                return tr_error_set(err, EINVAL, "--no-procd and --require-procd contradict each other");
        if (optind >= argc)
                return tr_error_set(err, EINVAL, "no command given (procd-starter [options] -- CMD ARGS...)");
        o->argv = argv + optind;
        if (o->pid_namespace && o->launch == ST_LAUNCH_FORK)
                return tr_error_set(err, EINVAL, "--pid-namespace needs clone3 (not --launch=fork)");
        if (o->private_tmp_size && (!o->private_tmp || o->private_tmp_dir))
                return tr_error_set(err, EINVAL, "--private-tmp-size is for --private-tmp without a DIR (tmpfs)");
        return 0;
}

void st_options_free(st_options *o)
{
        free(o->env);
        o->env = NULL;
        tr_dev_rules_free(&o->devices);
}
