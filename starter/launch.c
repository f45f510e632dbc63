/* launch.c - clone3 into the job cgroup; fork fallback; privilege drop; stdio. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clone-vm.h"
#include "trackers/util.h"

extern char **environ;

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static int resolve_ids(st_launch *l, const st_options *o, tr_error *err)
{
        if (!o->user && !o->group)
                return 0;
        l->set_ids = true;
        l->uid = getuid();
        l->gid = getgid();
        const char *uname = NULL;
        if (o->user) {
                struct passwd *pw = getpwnam(o->user);
                uint64_t v;
                if (pw) {
                        l->uid = pw->pw_uid;
                        l->gid = pw->pw_gid;
                        uname = pw->pw_name;
                } else if (tr_parse_u64(o->user, &v) == 0 && v < UINT32_MAX) {
                        l->uid = (uid_t) v;
                        pw = getpwuid(l->uid);
                        l->gid = pw ? pw->pw_gid : (gid_t) v;
                        uname = pw ? pw->pw_name : NULL;
                } else {
                        return tr_error_set(err, ESRCH, "--user %s: no such user", o->user);
                }
        }
        if (o->group) {
                struct group *gr = getgrnam(o->group);
                uint64_t v;
                if (gr)
                        l->gid = gr->gr_gid;
                else if (tr_parse_u64(o->group, &v) == 0 && v < UINT32_MAX)
                        l->gid = (gid_t) v;
                else
                        return tr_error_set(err, ESRCH, "--group %s: no such group", o->group);
        }
        int n = 64;
        for (;;) {
                free(l->groups);
                l->groups = calloc((size_t) n, sizeof(gid_t));
                if (!l->groups)
                        return tr_error_set(err, ENOMEM, "out of memory");
                if (!uname) {
                        l->groups[0] = l->gid;
                        l->ngroups = 1;
                        break;
                }
                int got = n;
                if (getgrouplist(uname, l->gid, l->groups, &got) >= 0) {
                        l->ngroups = got;
                        break;
                }
                if (got <= n || got > 65536)
                        return tr_error_set(err, EINVAL, "getgrouplist(%s) failed", uname);
                n = got;
        }
        if (geteuid() != 0 && (l->uid != geteuid() || l->gid != getegid()))
                return tr_error_set(err, EPERM, "--user/--group need root");
        return 0;
}

static const char *env_get(char **envp, const char *key)
{
        size_t k = strlen(key);
        for (char **e = envp; *e; e++)
                if (strncmp(*e, key, k) == 0 && (*e)[k] == '=')
                        return *e + k + 1;
        return NULL;
}

static void env_set(st_launch *l, size_t *n, const char *kv)
{
        const char *eq = strchr(kv, '=');
        size_t k = (size_t) (eq - kv);
        for (size_t i = 0; i < *n; i++)
                if (strncmp(l->envp[i], kv, k) == 0 && l->envp[i][k] == '=') {
                        l->envp[i] = (char *) kv;
                        return;
                }
        l->envp[(*n)++] = (char *) kv;
        l->envp[*n] = NULL;
}

static int build_env(st_launch *l, const st_options *o, tr_error *err)
{
        size_t count = 0;
        for (char **e = environ; *e; e++)
                count++;
        l->envp = calloc(count + o->n_env + 8, sizeof(char *));
        l->env_alloc = calloc(8, sizeof(char *));
        if (!l->envp || !l->env_alloc)
                return tr_error_set(err, ENOMEM, "out of memory");
        size_t n = 0;
        for (char **e = environ; *e; e++)
                l->envp[n++] = *e;
        l->envp[n] = NULL;
        if (o->user && l->set_ids) {
                struct passwd *pw = getpwuid(l->uid);
                if (pw) {
                        const char *vars[3][2] = { { "USER", pw->pw_name }, { "LOGNAME", pw->pw_name }, { "HOME", pw->pw_dir } };
                        for (int i = 0; i < 3; i++) {
                                char *s;
                                if (asprintf(&s, "%s=%s", vars[i][0], vars[i][1]) < 0)
                                        return tr_error_set(err, ENOMEM, "out of memory");
                                l->env_alloc[l->n_env_alloc++] = s;
                                env_set(l, &n, s);
                        }
                }
        }
        for (size_t i = 0; i < o->n_env; i++)
                env_set(l, &n, o->env[i]);
        return 0;
}

static int resolve_exec(st_launch *l, tr_error *err)
{
        const char *cmd = l->argv[0];
        if (!cmd || !cmd[0])
                return tr_error_set(err, ENOENT, "empty command");
        if (strchr(cmd, '/')) {
                l->exec_path = strdup(cmd);
                if (!l->exec_path)
                        return tr_error_set(err, ENOMEM, "out of memory");
                if (access(cmd, F_OK) < 0)
                        return tr_error_setx(err, errno, "%s", cmd);
                return 0;
        }
        const char *path = env_get(l->envp, "PATH");
        if (!path)
                path = "/usr/local/bin:/usr/bin:/bin";
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return tr_error_set(err, ENOMEM, "out of memory");
        int first_err = ENOENT;
        char *save = NULL;
        for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
                char *cand;
                if (asprintf(&cand, "%s/%s", *dir ? dir : ".", cmd) < 0)
                        return tr_error_set(err, ENOMEM, "out of memory");
                struct stat st;
                if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
                        if (access(cand, X_OK) == 0) {
                                l->exec_path = cand;
                                return 0;
                        }
                        first_err = EACCES;
                }
                free(cand);
        }
        return tr_error_set(err, first_err, "%s: %s", cmd,
                            first_err == ENOENT ? "command not found" : "permission denied");
}

static int open_stdio(st_launch *l, const st_options *o, tr_error *err)
{
        const char *paths[3] = { o->stdin_path, o->stdout_path, o->stderr_path };
        for (int i = 0; i < 3; i++) {
                if (!paths[i])
                        continue;
                int fd = i == 0 ? open(paths[i], O_RDONLY | O_CLOEXEC | O_NOCTTY)
                                : open(paths[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
                if (fd < 0)
                        return tr_error_setx(err, errno, "--%s %s", i == 0 ? "stdin" : i == 1 ? "stdout" : "stderr",
                                             paths[i]);
                if (i > 0 && l->set_ids && o->user) {
                        struct stat st;
                        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fchown(fd, l->uid, l->gid) < 0) {
                                int e = errno;
                                close(fd);
                                return tr_error_setx(err, e, "chown %s", paths[i]);
                        }
                }
                l->stdio[i] = fd;
        }
        return 0;
}

int st_launch_prepare(st_launch *l, const st_options *o, tr_error *err)
{
        memset(l, 0, sizeof *l);
        l->stdio[0] = l->stdio[1] = l->stdio[2] = -1;
        l->v2_fd = -1;
        l->v2_procs_fd = -1;
        l->gate_r = l->gate_w = l->efd = -1;
        for (int i = 0; i < TR_MAX_HIER; i++)
                l->v1_procs_fds[i] = -1;
        l->argv = o->argv;
        l->cwd = o->cwd;
        l->mode = o->launch;
        sigemptyset(&l->child_mask);
        int r = resolve_ids(l, o, err);
        if (r < 0)
                return r;
        r = build_env(l, o, err);
        if (r < 0)
                return r;
        r = resolve_exec(l, err);
        if (r < 0)
                return r;
        r = st_jobns_prepare(&l->ns, o, err);
        if (r < 0)
                return r;
        if (l->cwd) {
                struct stat st;
                if (stat(l->cwd, &st) < 0)
                        return tr_error_setx(err, errno, "--cwd %s", l->cwd);
                if (!S_ISDIR(st.st_mode))
                        return tr_error_set(err, ENOTDIR, "--cwd %s: not a directory", l->cwd);
        }
        return open_stdio(l, o, err);
}

int st_launch_place(st_launch *l, tr_cgroup *job, tr_error *err)
{
        const tr_hierarchies *hs = tr_cgroup_hierarchies(job);
        l->v2_fd = tr_cgroup_v2_fd(job);
        if (hs->v2 >= 0 && tr_cgroup_dirfd(job, hs->v2) >= 0) {
                l->v2_procs_fd = openat(tr_cgroup_dirfd(job, hs->v2), "cgroup.procs", O_WRONLY | O_CLOEXEC);
                if (l->v2_procs_fd < 0)
                        return tr_error_setx(err, errno, "opening cgroup.procs of %s (v2)", tr_cgroup_path(job, hs->v2));
        }
        for (int i = 0; i < hs->n; i++) {
                if (i == hs->v2 || tr_cgroup_dirfd(job, i) < 0)
                        continue;
                int fd = openat(tr_cgroup_dirfd(job, i), "cgroup.procs", O_WRONLY | O_CLOEXEC);
                if (fd < 0)
                        return tr_error_setx(err, errno, "opening cgroup.procs of %s in %s", tr_cgroup_path(job, i),
                                             hs->h[i].mount_point);
                l->v1_procs_fds[l->n_v1++] = fd;
        }
        return 0;
}

/* ---- the child: raw system calls only from here to execve ---- */

struct child_fail {
        int err;
        int stage;
};

/* STAGE_READY is no failure: the child is at the gate (launch.h), everything but the exec done */
enum { STAGE_V2 = 1, STAGE_V1, STAGE_NS, STAGE_STDIO, STAGE_GROUPS, STAGE_GID, STAGE_UID, STAGE_CWD, STAGE_EXEC,
       STAGE_READY };

static const char *stage_name(int s)
{
        switch (s) {
        case STAGE_V2: return "joining the v2 cgroup";
        case STAGE_V1: return "joining a v1 cgroup";
        case STAGE_NS: return "setting up the job's namespaces (private /tmp, PID namespace)";
        case STAGE_STDIO: return "setting up stdio";
        case STAGE_GROUPS: return "setgroups";
        case STAGE_GID: return "setgid";
        case STAGE_UID: return "setuid";
        case STAGE_CWD: return "chdir";
        case STAGE_EXEC: return "exec";
        default: return "?";
        }
}

static __attribute__((noreturn)) void child_fail(int efd, int stage)
{
        struct child_fail f = { errno, stage };
        ssize_t w = write(efd, &f, sizeof f);
        (void) w;
        _exit(127);
}

static __attribute__((noreturn)) void child_fail_r(int efd, int stage, int r)
{
        errno = -r;
        child_fail(efd, stage);
}

/* Dies with the starter from here (a credential change clears it: set again after the ids).
 * Outside a new PID namespace getppid() tells whether the starter died before the prctl; in
 * one it says 0 whatever happens, and the gate's EOF tells instead. */
static void die_with_starter(const st_launch *l, bool new_pidns)
{
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (!new_pidns && getppid() != l->starter_pid)
                _exit(127);
}

/* Tell the starter the child is ready, then wait for its word: one byte, the job is tracked
 * (registered with procd, or held by the starter and its guard).  EOF: the starter is gone
 * or gave up on the job: end here, never exec. */
static void wait_at_gate(int efd, int gate_fd)
{
        struct child_fail ready = { 0, STAGE_READY };
        if (write(efd, &ready, sizeof ready) != (ssize_t) sizeof ready)
                _exit(127);
        char c;
        ssize_t n;
        do
                n = read(gate_fd, &c, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
                _exit(127);
        close(gate_fd);
}

/* join_v2: fork fallback (not yet in the v2 cgroup); new_mntns: the clone gave a mount
 * namespace; new_pidns: the clone made the child PID 1 of a new PID namespace */
static __attribute__((noreturn)) void child(st_launch *l, int efd, bool join_v2, bool new_mntns, bool new_pidns)
{
        die_with_starter(l, new_pidns);
        close(l->gate_w); /* the starter's end: only the starter may hold it */
        sigprocmask(SIG_SETMASK, &l->child_mask, NULL);
        if (l->sigpipe_default) {
                struct sigaction dfl;
                memset(&dfl, 0, sizeof dfl);
                dfl.sa_handler = SIG_DFL;
                sigaction(SIGPIPE, &dfl, NULL);
        }
        if (join_v2 && l->v2_procs_fd >= 0 && write(l->v2_procs_fd, "0", 1) < 0)
                child_fail(efd, STAGE_V2);
        for (int i = 0; i < l->n_v1; i++)
                if (write(l->v1_procs_fds[i], "0", 1) < 0)
                        child_fail(efd, STAGE_V1);
        if (st_jobns_wants_mounts(&l->ns)) {
                if (!new_mntns && unshare(CLONE_NEWNS) < 0)
                        child_fail(efd, STAGE_NS);
                int r = st_jobns_mount(&l->ns);
                if (r < 0)
                        child_fail_r(efd, STAGE_NS, r);
                /* PID 1 of the new namespace: the init stays here, the command goes on */
                if (l->ns.pid_ns && (r = st_jobns_init(efd)) < 0)
                        child_fail_r(efd, STAGE_NS, r);
        }
        for (int i = 0; i < 3; i++) {
                if (l->stdio[i] < 0)
                        continue;
                if (l->stdio[i] == i) {
                        if (fcntl(i, F_SETFD, 0) < 0)
                                child_fail(efd, STAGE_STDIO);
                } else if (dup2(l->stdio[i], i) < 0) {
                        child_fail(efd, STAGE_STDIO);
                }
        }
        if (l->set_ids) {
                if (syscall(SYS_setgroups, (size_t) l->ngroups, l->groups) < 0)
                        child_fail(efd, STAGE_GROUPS);
                if (syscall(SYS_setresgid, l->gid, l->gid, l->gid) < 0)
                        child_fail(efd, STAGE_GID);
                if (syscall(SYS_setresuid, l->uid, l->uid, l->uid) < 0)
                        child_fail(efd, STAGE_UID);
                /* the command's process: its parent is the init in a new PID namespace */
                die_with_starter(l, new_pidns || l->ns.pid_ns);
        }
        if (l->cwd && chdir(l->cwd) < 0)
                child_fail(efd, STAGE_CWD);
        wait_at_gate(efd, l->gate_r);
        /* tracked now (procd's watcher, or the guard): the job's own setting again */
        prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
        execve(l->exec_path, l->argv, l->envp);
        child_fail(efd, STAGE_EXEC);
}

/* The CLONE_VM child's stack: child() and what it calls use under 2 KiB (gcc
 * -fstack-usage), libc's system call wrappers little more; the rest is margin. */
#define VM_STACK_BYTES (64 * 1024)

/* What a CLONE_VM child runs on: its own copy of the launch (the starter goes on closing
 * and resetting fields of its own) and the exec-error pipe's write end. */
struct vm_child_args {
        st_launch l;
        int efd;
};

static int vm_child(void *arg)
{
        struct vm_child_args *a = arg;
        child(&a->l, a->efd, false, false, false);
}

/* Whether the child can be a CLONE_VM one (clone-vm.h): the build has it, the child starts
 * no PID namespace (whose init would live on in this memory for the job's life), and its
 * stack is mapped (once per launch object). */
static bool vm_child_possible(st_launch *l)
{
        if (!st_clone3_vm_supported() || l->ns.pid_ns)
                return false;
        tr_error err = { 0 };
        size_t bytes = VM_STACK_BYTES + sizeof(struct vm_child_args);
        return l->vm_stack.map || st_vm_stack_map(&l->vm_stack, bytes, &err) == 0;
}

/* clone3 sharing the starter's memory: the pid, or -1 with errno set. */
static pid_t clone_vm(st_launch *l, st_clone_args *args, int efd)
{
        struct vm_child_args *a = st_vm_stack_data(&l->vm_stack, sizeof *a);
        a->l = *l;
        a->l.n_v1 = 0; /* the starter writes it into its v1 cgroups (st_launch_start) */
        a->efd = efd;
        long r = st_clone3_vm(args, &l->vm_stack, sizeof *a, vm_child, a);
        if (r < 0) {
                errno = (int) -r;
                return -1;
        }
        l->vm_child_live = true;
        return (pid_t) r;
}

/* The starter writes the child into its v1 cgroups; 0 or the first write's errno (the
 * child's own report, if it failed meanwhile, comes first: ESRCH then). */
static int join_v1(const st_launch *l, pid_t pid)
{
        char s[16];
        int len = snprintf(s, sizeof s, "%d", (int) pid);
        for (int i = 0; i < l->n_v1; i++)
                if (write(l->v1_procs_fds[i], s, (size_t) len) < 0)
                        return errno;
        return 0;
}

/* One struct child_fail from the child, or EOF (it exec'd, or died); EINTR retried. */
static ssize_t read_child(int efd, struct child_fail *f)
{
        ssize_t n;
        do
                n = read(efd, f, sizeof *f);
        while (n < 0 && errno == EINTR);
        return n;
}

/* The child failed before exec and exited (f says where): reap it, say why. */
static int child_failed(st_launch *l, pid_t pid, int pidfd, const struct child_fail *f, tr_error *err)
{
        waitpid(pid, NULL, 0);
        close(pidfd);
        l->vm_child_live = false;
        if (f->stage == STAGE_EXEC)
                return tr_error_set(err, f->err ? f->err : EIO, "exec %s: %s", l->exec_path, strerror(f->err));
        /* not an exec failure: the caller must not turn it into 126/127 */
        tr_error_set(err, ECANCELED, "%s: %s", stage_name(f->stage), strerror(f->err));
        return -ECANCELED;
}

static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

int st_launch_start(st_launch *l, pid_t *pidp, int *pidfdp, tr_error *err)
{
        int ep[2], gp[2];
        if (pipe2(ep, O_CLOEXEC) < 0)
                return tr_error_setx(err, errno, "pipe");
        if (pipe2(gp, O_CLOEXEC) < 0) {
                int e = errno;
                close(ep[0]);
                close(ep[1]);
                return tr_error_setx(err, e, "pipe");
        }
        l->gate_r = gp[0];
        l->gate_w = gp[1];
        l->starter_pid = getpid();
        int pidfd = -1;
        pid_t pid = -1;
        l->used_fork = false;
        bool vm = false;
        if (l->mode != ST_LAUNCH_FORK) {
                st_clone_args args;
                memset(&args, 0, sizeof args);
                args.flags = CLONE_PIDFD;
                args.pidfd = (uint64_t) (uintptr_t) &pidfd;
                args.exit_signal = SIGCHLD;
                if (l->v2_fd >= 0) {
                        args.flags |= CLONE_INTO_CGROUP;
                        args.cgroup = (uint64_t) l->v2_fd;
                }
                if (l->ns.pid_ns)
                        args.flags |= CLONE_NEWPID | CLONE_NEWNS;
                vm = vm_child_possible(l);
                if (vm)
                        pid = clone_vm(l, &args, ep[1]);
                else
                        pid = (pid_t) syscall(SYS_clone3, &args, sizeof args);
                vm = vm && pid > 0;
                if (pid == 0) {
                        close(ep[0]);
                        child(l, ep[1], false, l->ns.pid_ns, l->ns.pid_ns);
                }
                if (pid < 0 && !(l->mode == ST_LAUNCH_AUTO && (errno == ENOSYS || errno == E2BIG) && !l->ns.pid_ns)) {
                        int e = errno;
                        close(ep[0]);
                        close(ep[1]);
                        st_launch_close_gate(l);
                        return tr_error_setx(err, e, "clone3 into the job cgroup");
                }
        }
        if (pid < 0) {
                l->used_fork = true;
                pid = fork();
                if (pid == 0) {
                        close(ep[0]);
                        child(l, ep[1], true, false, false);
                }
                if (pid < 0) {
                        int e = errno;
                        close(ep[0]);
                        close(ep[1]);
                        st_launch_close_gate(l);
                        return tr_error_setx(err, e, "fork");
                }
                pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
                if (pidfd < 0) {
                        int e = errno;
                        close(ep[0]);
                        close(ep[1]);
                        st_launch_close_gate(l); /* the child ends at the gate, if it got there */
                        /* our own unreaped child: its pid cannot be reused before the
                         * waitpid, and tr_safe_kill would refuse now that pidfd_open fails
                         * (EMFILE...), leaving waitpid blocked: plain kill, pid > 1 */
                        if (pid > 1)
                                kill(pid, SIGKILL);
                        waitpid(pid, NULL, 0);
                        return tr_error_setx(err, e, "pidfd_open");
                }
                fcntl(pidfd, F_SETFD, FD_CLOEXEC);
        }
        /* a CLONE_VM child runs no command before the gate and forks nothing (no PID
         * namespace init): the starter writes it into its v1 cgroups while it starts on
         * another CPU, and its "ready" is then mostly written already (NOTES 14.30) */
        int v1_err = vm ? join_v1(l, pid) : 0;
        close(ep[1]);
        close_fd(&l->gate_r);
        struct child_fail f;
        ssize_t n = read_child(ep[0], &f);
        if (v1_err && !(n == (ssize_t) sizeof f && f.stage != STAGE_READY)) {
                st_launch_close_gate(l); /* it ends at the gate */
                f = (struct child_fail) { v1_err, STAGE_V1 };
                n = (ssize_t) sizeof f;
        }
        if (n == (ssize_t) sizeof f && f.stage != STAGE_READY) {
                close(ep[0]);
                st_launch_close_gate(l);
                return child_failed(l, pid, pidfd, &f, err);
        }
        /* ready at the gate; or EOF: it died before (killed): the wait loop sees its end */
        if (n == 0)
                l->vm_child_live = false; /* exited: its stack is free */
        l->efd = ep[0];
        *pidp = pid;
        *pidfdp = pidfd;
        return 0;
}

void st_launch_close_gate(st_launch *l)
{
        close_fd(&l->gate_r);
        close_fd(&l->gate_w);
        close_fd(&l->efd);
}

int st_launch_release(st_launch *l, pid_t pid, int *pidfdp, tr_error *err)
{
        if (l->gate_w < 0)
                return tr_error_set(err, EBADF, "the job's gate is closed");
        char go = 'g';
        ssize_t w;
        do
                w = write(l->gate_w, &go, 1);
        while (w < 0 && errno == EINTR);
        /* EPIPE: the child is gone (killed at the gate): the wait loop sees its end */
        close_fd(&l->gate_w);
        /* wait here for the exec, doing nothing else: until it, a CLONE_VM child may still
         * set errno (a failed execve), which it shares with the starter (clone-vm.h).
         * Reading this after the job instead was tried and dropped (NOTES 14.32). */
        struct child_fail f;
        ssize_t n = l->efd >= 0 ? read_child(l->efd, &f) : 0;
        close_fd(&l->efd);
        /* EOF: the child exec'd (the pipe closes after its new address space is in place)
         * or died: either way it is off the CLONE_VM stack */
        if (n == 0)
                l->vm_child_live = false;
        if (n == (ssize_t) sizeof f && f.stage != STAGE_READY) {
                int r = child_failed(l, pid, *pidfdp, &f, err);
                *pidfdp = -1;
                return r;
        }
        return 0;
}

void st_launch_free(st_launch *l)
{
        free(l->exec_path);
        free(l->envp);
        for (size_t i = 0; i < l->n_env_alloc; i++)
                free(l->env_alloc[i]);
        free(l->env_alloc);
        free(l->groups);
        st_jobns_free(&l->ns);
        for (int i = 0; i < 3; i++)
                if (l->stdio[i] >= 0)
                        close(l->stdio[i]);
        if (l->v2_procs_fd >= 0)
                close(l->v2_procs_fd);
        for (int i = 0; i < l->n_v1; i++)
                close(l->v1_procs_fds[i]);
        st_launch_close_gate(l);
        /* a child still on it (given up at the gate, not reaped) keeps it: a leak, not a
         * crash */
        if (!l->vm_child_live)
                st_vm_stack_unmap(&l->vm_stack);
        memset(l, 0, sizeof *l);
        l->stdio[0] = l->stdio[1] = l->stdio[2] = -1;
        l->v2_procs_fd = -1;
        l->gate_r = l->gate_w = l->efd = -1;
}
