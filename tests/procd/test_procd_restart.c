/* test_procd_restart.c - procd SIGKILLed and started again on the same state file, with
 * real processes: 600 families (fewer in the guest lanes: PROCD_TEST_RESTART_PER_KIND) of
 * six tracking kinds (cgroup, parent tree, environment, login, allocated gid, associated
 * gid) answer usage, suspend and continue as before, and ten of each kind are killed (each
 * its own root only);
 * none lost, none killed by the restart; frozen ones still frozen; watchers re-armed.
 * SIGKILL in the middle of a KillFamily and of a SuspendFamily; what cannot be restored
 * (root gone, cgroup gone, root moved out) is dropped and the rest goes on; an untrusted
 * state file is set aside. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "procd/core/family-cgroup.h"
#include "procd/core/state.h"
#include "testsupport.h"
#include "trackers/util.h"

/* Families per kind: 100 on the host; PROCD_TEST_RESTART_PER_KIND (a multiple of 10 in
 * 20..190: ten of each kind are killed among the first 20, the gid range holds 200) makes
 * fewer in the guest lanes, where each /proc family's registration and restore read /proc of
 * every process under emulation. */
static int PER_KIND = 100;
#define N_KINDS 6
static const char *const KIND[N_KINDS] = { "cgroup", "parent", "environment", "login", "allocated-gid",
                                           "associated-gid" };
static const char *const RESTART_ARGS[] = { "--gid-range", "72000-72199", NULL };

typedef struct fam {
        pid_t root;
        int kind;
        tr_cgroup *cg;
        char tracking[128], source[32], state[16];
        char usage_source[48]; /* which files answered GetUsage before the crash */
        pid_t parent;
        pid_t *members;
        size_t n_members;
} fam;

static bool need_setup(void)
{
        return ts_need_root("procd restart tests") && ts_cgroup_base() != NULL;
}

static procd_family_info *find_info(procd_family_info *fi, size_t n, pid_t root)
{
        for (size_t i = 0; i < n; i++)
                if (fi[i].root_pid == root)
                        return &fi[i];
        return NULL;
}

/* Remember what Dump says of each family. */
static void record(procd_client *c, fam *fs, size_t n)
{
        procd_family_info *fi = NULL;
        size_t nfi = 0;
        CU_ASSERT_EQUAL_FATAL(procd_dump(c, 0, &fi, &nfi, NULL), PROCD_OK);
        for (size_t i = 0; i < n; i++) {
                procd_family_info *x = find_info(fi, nfi, fs[i].root);
                CU_ASSERT_PTR_NOT_NULL_FATAL(x);
                snprintf(fs[i].tracking, sizeof fs[i].tracking, "%s", x->tracking);
                snprintf(fs[i].source, sizeof fs[i].source, "%s", x->source);
                snprintf(fs[i].state, sizeof fs[i].state, "%s", x->state);
                fs[i].parent = x->parent_root_pid;
                free(fs[i].members);
                fs[i].members = NULL;
                fs[i].n_members = x->n_members;
                if (x->n_members) {
                        fs[i].members = malloc(x->n_members * sizeof(pid_t));
                        memcpy(fs[i].members, x->members, x->n_members * sizeof(pid_t));
                }
        }
        procd_family_info_free(fi, nfi);
}

/* After the restart Dump must say the same of every family; returns how many differ. */
static size_t compare(procd_client *c, const fam *fs, size_t n)
{
        procd_family_info *fi = NULL;
        size_t nfi = 0, bad = 0;
        CU_ASSERT_EQUAL_FATAL(procd_dump(c, 0, &fi, &nfi, NULL), PROCD_OK);
        for (size_t i = 0; i < n; i++) {
                procd_family_info *x = find_info(fi, nfi, fs[i].root);
                bool same = x && strcmp(x->tracking, fs[i].tracking) == 0 && strcmp(x->source, fs[i].source) == 0 &&
                            strcmp(x->state, fs[i].state) == 0 && x->parent_root_pid == fs[i].parent &&
                            x->n_members == fs[i].n_members &&
                            (x->n_members == 0 || memcmp(x->members, fs[i].members, x->n_members * sizeof(pid_t)) == 0);
                if (!same) {
                        bad++;
                        fprintf(stderr, "family %d (%s) differs after restart: %s\n", (int) fs[i].root,
                                KIND[fs[i].kind], x ? x->tracking : "missing");
                }
        }
        procd_family_info_free(fi, nfi);
        return bad;
}

static const char *family_state(procd_client *c, pid_t root, char *buf, size_t size)
{
        procd_family_info *fi = NULL;
        size_t n = 0;
        snprintf(buf, size, "%s", "missing");
        if (procd_dump(c, root, &fi, &n, NULL) == PROCD_OK && n > 0)
                snprintf(buf, size, "%s", fi[0].state);
        procd_family_info_free(fi, n);
        return buf;
}

static bool wait_state(procd_client *c, pid_t root, const char *want, int timeout_ms)
{
        char st[32];
        for (int t = 0; t < timeout_ms; t += 20) {
                if (strcmp(family_state(c, root, st, sizeof st), want) == 0)
                        return true;
                usleep(20000);
        }
        return strcmp(family_state(c, root, st, sizeof st), want) == 0;
}

static void free_fams(fam *fs, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (fs[i].root > 1) {
                        kill(fs[i].root, SIGCONT);
                        ts_kill_reap(fs[i].root);
                }
                if (fs[i].cg) {
                        tr_cgroup_thaw(fs[i].cg, 1000000, &(tr_freeze_state) { 0 }, NULL);
                        tr_cgroup_destroy(fs[i].cg, 2000000, NULL);
                        tr_cgroup_free(fs[i].cg);
                }
                free(fs[i].members);
        }
        free(fs);
}

/* Register one family of the given kind (procd_status of the first failing call). */
static procd_status make_family(procd_client *c, fam *f, int kind, int i)
{
        char name[64], path[256], marker[64];
        f->kind = kind;
        if (kind == 0) {
                snprintf(name, sizeof name, "rs-%d", i);
                f->root = ph_sleeper_in_cgroup(name, path, sizeof path, &f->cg);
        } else {
                f->root = ts_sleeper();
        }
        if (f->root <= 1)
                return PROCD_E_INTERNAL;
        /* half of them watched by this program (a pidfd re-armed after the restart) */
        procd_status s = procd_register_subfamily(c, f->root, i % 2 ? 0 : getpid(), 60, NULL);
        if (s != PROCD_OK)
                return s;
        gid_t g;
        switch (kind) {
        case 0:
                return procd_track_via_cgroup(c, f->root, path, NULL);
        case 2:
                snprintf(marker, sizeof marker, "PROCD_RESTART_TEST=%d", (int) getpid());
                return procd_track_via_environment(c, f->root, marker, NULL);
        case 3:
                return procd_track_via_login(c, f->root, "games", NULL);
        case 4:
                return procd_track_via_allocated_group(c, f->root, &g, NULL);
        case 5:
                return procd_track_via_associated_group(c, f->root, (gid_t) (73000 + i), NULL);
        default:
                return PROCD_OK;
        }
}

static void test_many_families(void)
{
        if (!need_setup())
                return;
        if (!getpwnam("games")) {
                ts_skip("restart of login families", "no user games");
                return;
        }
        PER_KIND = (int) ts_scale("PROCD_TEST_RESTART_PER_KIND", 100, 20, 190, 10);
        ph_daemon d;
        CU_ASSERT_EQUAL_FATAL(ph_start(&d, RESTART_ARGS, NULL, 10000), 0);
        procd_client *c = ph_connect(&d);
        size_t n = N_KINDS * PER_KIND;
        fam *fs = calloc(n + 1, sizeof *fs);
        size_t failed = 0;
        for (int k = 0; k < N_KINDS; k++)
                for (int i = 0; i < PER_KIND; i++)
                        failed += make_family(c, &fs[k * PER_KIND + i], k, i) != PROCD_OK;
        CU_ASSERT_EQUAL(failed, 0);
        /* a subfamily below a family (kept below it), and a family watched by another process */
        fam *watched = &fs[n];
        pid_t watcher = ts_sleeper();
        watched->root = ts_sleeper();
        watched->kind = 1;
        CU_ASSERT_EQUAL(procd_register_subfamily(c, watched->root, watcher, 60, NULL), PROCD_OK);
        /* one family in ten suspended before the crash */
        size_t suspended = 0;
        for (size_t i = 0; i < n; i += 10)
                suspended += procd_suspend_family(c, fs[i].root, NULL) == PROCD_OK;
        CU_ASSERT_EQUAL(suspended, n / 10);
        CU_ASSERT_EQUAL(procd_snapshot(c, NULL), PROCD_OK);
        record(c, fs, n + 1);
        procd_usage u;
        size_t usage_ok = 0;
        for (size_t i = 0; i < n; i++) {
                usage_ok += procd_get_usage(c, fs[i].root, &u, NULL) == PROCD_OK;
                procd_usage_source_name(&u, fs[i].usage_source, sizeof fs[i].usage_source);
        }
        CU_ASSERT_EQUAL(usage_ok, n);
        procd_disconnect(c);

        ph_crash(&d);
        size_t alive = 0;
        for (size_t i = 0; i < n; i++)
                alive += ts_alive(fs[i].root);
        CU_ASSERT_EQUAL(alive, n);
        CU_ASSERT_EQUAL_FATAL(ph_start_in(&d, RESTART_ARGS, NULL, 30000), 0);
        c = ph_connect(&d);

        /* none lost, none killed: the same families, tracking, parents, states, members */
        alive = 0;
        for (size_t i = 0; i < n; i++)
                alive += ts_alive(fs[i].root);
        CU_ASSERT_EQUAL(alive, n);
        CU_ASSERT_EQUAL(compare(c, fs, n + 1), 0);
        size_t frozen = 0, stopped = 0;
        for (size_t i = 0; i < n; i++) {
                frozen += strcmp(fs[i].state, "frozen") == 0;
                stopped += fs[i].kind != 0 && ts_proc_state(fs[i].root) == 'T';
        }
        CU_ASSERT_EQUAL(frozen, n / 10);
        CU_ASSERT_EQUAL(stopped, n / 10 - PER_KIND / 10); /* the /proc ones by SIGSTOP */

        /* usage from the same source; continue the frozen, suspend/continue one of each kind */
        size_t same_source = 0, continued = 0, cycled = 0;
        for (size_t i = 0; i < n; i++) {
                char src[48];
                if (procd_get_usage(c, fs[i].root, &u, NULL) == PROCD_OK &&
                    strcmp(procd_usage_source_name(&u, src, sizeof src), fs[i].usage_source) == 0)
                        same_source++;
                else
                        fprintf(stderr, "family %d: usage from %s, before the crash from %s\n", (int) fs[i].root,
                                src, fs[i].usage_source);
        }
        CU_ASSERT_EQUAL(same_source, n);
        for (size_t i = 0; i < n; i += 10)
                continued += procd_continue_family(c, fs[i].root, NULL) == PROCD_OK && ts_proc_state(fs[i].root) != 'T';
        CU_ASSERT_EQUAL(continued, n / 10);
        char st[32];
        for (int k = 0; k < N_KINDS; k++) {
                pid_t r = fs[k * PER_KIND + 1].root;
                bool ok = procd_suspend_family(c, r, NULL) == PROCD_OK &&
                          strcmp(family_state(c, r, st, sizeof st), "frozen") == 0 &&
                          (k == 0 || ts_proc_state(r) == 'T') && procd_continue_family(c, r, NULL) == PROCD_OK &&
                          strcmp(family_state(c, r, st, sizeof st), "running") == 0 && ts_proc_state(r) != 'T';
                if (!ok)
                        fprintf(stderr, "suspend/continue of a %s family after restart failed\n", KIND[k]);
                cycled += ok;
        }
        CU_ASSERT_EQUAL(cycled, N_KINDS);

        /* the other watcher's pidfd was re-armed: its exit unregisters the family */
        ts_kill_reap(watcher);
        CU_ASSERT(wait_state(c, watched->root, "missing", 5000));
        /* a new allocation does not hand out a gid a restored family holds */
        gid_t g = 0;
        pid_t extra = ts_sleeper();
        CU_ASSERT_EQUAL(procd_register_subfamily(c, extra, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_track_via_allocated_group(c, extra, &g, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(g, 72000 + PER_KIND);
        CU_ASSERT_EQUAL(procd_kill_family(c, extra, NULL), PROCD_OK);
        ts_kill_reap(extra);

        /* kill: each family's root and nothing else (ten of each kind: a /proc family's
         * kill takes two scans of the host's /proc; the rest are killed by the test) */
        size_t killed = 0, bystanders = 0;
        for (int k = 0; k < N_KINDS; k++)
                for (int i = 0; i < 10; i++) {
                        fam *f = &fs[k * PER_KIND + 2 * i];
                        if (procd_kill_family(c, f->root, NULL) == PROCD_OK && ph_wait_gone(f->root, 5000))
                                killed++;
                }
        for (size_t i = 0; i < n; i++)
                bystanders += (i % PER_KIND >= 20 || i % 2 == 1) && ts_alive(fs[i].root);
        CU_ASSERT_EQUAL(killed, N_KINDS * 10);
        CU_ASSERT_EQUAL(bystanders, n - N_KINDS * 10);
        procd_disconnect(c);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
        free_fams(fs, n + 1);
}

/* A sleeper inside a v1 freezer cgroup frozen by this test (procd was not handed it):
 * procd's SIGKILL or SIGSTOP does not take effect until the test thaws it. */
typedef struct v1frozen {
        pid_t pid;
        char dir[512];
} v1frozen;

static bool v1frozen_start(v1frozen *v, const char *name)
{
        const tr_hierarchies *hs = ts_hierarchies();
        int fz = hs->v1_of[TR_CTRL_FREEZER];
        char path[256], f[600], pidbuf[16];
        v->pid = 0;
        if (fz < 0)
                return false;
        ts_cgroup_path(path, sizeof path, name);
        if (tr_hierarchy_fs_path(&hs->h[fz], path, v->dir, sizeof v->dir, NULL) < 0 ||
            (mkdir(v->dir, 0755) < 0 && errno != EEXIST))
                return false;
        v->pid = ts_sleeper();
        snprintf(pidbuf, sizeof pidbuf, "%d", (int) v->pid);
        snprintf(f, sizeof f, "%s/cgroup.procs", v->dir);
        tr_write_file_at(AT_FDCWD, f, pidbuf, NULL);
        snprintf(f, sizeof f, "%s/freezer.state", v->dir);
        return tr_write_file_at(AT_FDCWD, f, "FROZEN", NULL) >= 0;
}

static void v1frozen_thaw(v1frozen *v)
{
        char f[600];
        snprintf(f, sizeof f, "%s/freezer.state", v->dir);
        tr_write_file_at(AT_FDCWD, f, "THAWED", NULL);
}

static void v1frozen_end(v1frozen *v)
{
        v1frozen_thaw(v);
        if (v->pid > 1) {
                kill(v->pid, SIGCONT);
                ts_kill_reap(v->pid);
        }
        rmdir(v->dir);
}

static void send_call(DBusConnection *raw, const char *method, pid_t pid)
{
        DBusMessage *m = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, method);
        dbus_int32_t p = pid;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &p, DBUS_TYPE_INVALID);
        dbus_connection_send(raw, m, NULL);
        dbus_connection_flush(raw);
        dbus_message_unref(m);
}

static void test_crash_mid_kill_and_suspend(void)
{
        if (!need_setup())
                return;
        v1frozen vk, vs;
        if (!v1frozen_start(&vk, "rs-kill") || !v1frozen_start(&vs, "rs-susp")) {
                ts_skip("crash mid-KillFamily/SuspendFamily", "needs a v1 freezer hierarchy");
                v1frozen_end(&vk);
                v1frozen_end(&vs);
                return;
        }
        ph_daemon d;
        CU_ASSERT_EQUAL_FATAL(ph_start(&d, NULL, NULL, 10000), 0);
        procd_client *c = ph_connect(&d);
        /* K and S each hold one member frozen elsewhere: KillFamily on K and SuspendFamily on
         * S go on in rounds until it thaws.  Two bystander families are not touched. */
        pid_t s_root = ts_sleeper(), bystander = ts_sleeper();
        CU_ASSERT_EQUAL(procd_register_subfamily(c, vk.pid, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, vs.pid, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, s_root, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, bystander, 0, 60, NULL), PROCD_OK);
        DBusConnection *raw = ph_raw_connect(&d);
        CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
        send_call(raw, "KillFamily", vk.pid);
        send_call(raw, "SuspendFamily", vs.pid);
        CU_ASSERT(wait_state(c, vk.pid, "killing", 5000));
        CU_ASSERT(wait_state(c, vs.pid, "frozen", 5000));
        procd_disconnect(c);
        ph_crash(&d); /* both calls still going on */
        dbus_connection_close(raw);
        dbus_connection_unref(raw);
        CU_ASSERT(ts_alive(vk.pid) && ts_alive(s_root) && ts_alive(bystander) && ts_alive(vs.pid));

        CU_ASSERT_EQUAL_FATAL(ph_start_in(&d, NULL, NULL, 10000), 0);
        c = ph_connect(&d);
        char st[32];
        CU_ASSERT_STRING_EQUAL(family_state(c, vk.pid, st, sizeof st), "killing");
        CU_ASSERT_STRING_EQUAL(family_state(c, vs.pid, st, sizeof st), "frozen");
        CU_ASSERT_STRING_EQUAL(family_state(c, bystander, st, sizeof st), "running");
        CU_ASSERT_STRING_EQUAL(family_state(c, s_root, st, sizeof st), "running");
        /* the restarted procd finishes the kill once the member can die */
        v1frozen_thaw(&vk);
        CU_ASSERT(ph_wait_gone(vk.pid, 10000));
        CU_ASSERT(wait_state(c, vk.pid, "killed", 10000));
        /* and the suspend: once thawed elsewhere the member ends up stopped, then continued */
        v1frozen_thaw(&vs);
        bool stopped = false;
        for (int t = 0; t < 5000 && !stopped; t += 20, usleep(20000))
                stopped = ts_proc_state(vs.pid) == 'T';
        CU_ASSERT(stopped);
        CU_ASSERT_EQUAL(procd_continue_family(c, vs.pid, NULL), PROCD_OK);
        CU_ASSERT(ts_proc_state(vs.pid) != 'T');
        CU_ASSERT_STRING_EQUAL(family_state(c, vs.pid, st, sizeof st), "running");
        CU_ASSERT(ts_alive(bystander) && ts_alive(s_root));
        procd_disconnect(c);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
        ts_kill_reap(s_root);
        ts_kill_reap(bystander);
        v1frozen_end(&vk);
        v1frozen_end(&vs);
}

static size_t count_set_aside(const ph_daemon *d, const char *kind)
{
        char prefix[64];
        snprintf(prefix, sizeof prefix, "procd.state.bad-%s-", kind);
        size_t n = 0;
        DIR *dir = opendir(d->dir);
        struct dirent *e;
        while (dir && (e = readdir(dir)))
                n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
        if (dir)
                closedir(dir);
        return n;
}

static void test_dropped_and_untrusted(void)
{
        if (!need_setup())
                return;
        ph_daemon d;
        CU_ASSERT_EQUAL_FATAL(ph_start(&d, NULL, NULL, 10000), 0);
        procd_client *c = ph_connect(&d);
        char p1[256], p2[256];
        tr_cgroup *cg1 = NULL, *cg2 = NULL;
        pid_t gone = ts_sleeper(), keep = ts_sleeper();
        pid_t cg_gone = ph_sleeper_in_cgroup("rs-gone", p1, sizeof p1, &cg1);
        pid_t moved = ph_sleeper_in_cgroup("rs-moved", p2, sizeof p2, &cg2);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, gone, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, keep, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, cg_gone, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_track_via_cgroup(c, cg_gone, p1, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, moved, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_track_via_cgroup(c, moved, p2, NULL), PROCD_OK);
        procd_disconnect(c);
        ph_crash(&d);
        /* meanwhile: a root exits, a cgroup is removed, a root moves to another cgroup */
        ts_kill_reap(gone);
        ts_kill_reap(cg_gone);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg1, 2000000, NULL), 0);
        tr_cgroup *base = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open(ts_hierarchies(), ts_cgroup_base(), TR_CG_MAY_ACT, &base, NULL), 0);
        if (base)
                CU_ASSERT_EQUAL(tr_cgroup_attach(base, moved, NULL), 0);
        CU_ASSERT_EQUAL_FATAL(ph_start_in(&d, NULL, NULL, 10000), 0);
        c = ph_connect(&d);
        procd_family_info *fi = NULL;
        size_t n = 0;
        CU_ASSERT_EQUAL(procd_dump(c, 0, &fi, &n, NULL), PROCD_OK);
        CU_ASSERT_PTR_NOT_NULL(find_info(fi, n, keep));
        CU_ASSERT_PTR_NULL(find_info(fi, n, gone));
        CU_ASSERT_PTR_NULL(find_info(fi, n, cg_gone));
        CU_ASSERT_PTR_NULL(find_info(fi, n, moved));
        CU_ASSERT(ts_alive(moved) && ts_alive(keep)); /* dropped is not killed */
        procd_family_info_free(fi, n);
        procd_disconnect(c);
        ph_crash(&d);

        /* untrusted files: set aside, procd starts empty, and then saves a good file */
        static const char *const bad[][2] = {
                { "foreign", "[Unit]\nDescription=not ours\n" },
                { "version", "procd-state\t99\nend\t0\n" },
                { "corrupt", "procd-state\t1\nfamily\troot=12" },
        };
        char path[256];
        snprintf(path, sizeof path, "%s/procd.state", d.dir);
        for (size_t i = 0; i < TR_ARRAY_SIZE(bad); i++) {
                FILE *f = fopen(path, "w");
                CU_ASSERT_PTR_NOT_NULL_FATAL(f);
                fputs(bad[i][1], f);
                fclose(f);
                CU_ASSERT_EQUAL_FATAL(ph_start_in(&d, NULL, NULL, 10000), 0);
                c = ph_connect(&d);
                CU_ASSERT_EQUAL(procd_dump(c, 0, &fi, &n, NULL), PROCD_OK);
                CU_ASSERT_EQUAL(n, 1); /* the root family only */
                procd_family_info_free(fi, n);
                procd_disconnect(c);
                ph_crash(&d);
                CU_ASSERT_EQUAL(count_set_aside(&d, bad[i][0]), 1);
                pd_state s;
                CU_ASSERT_EQUAL(pd_state_read(path, &s, NULL), 0);
                CU_ASSERT_EQUAL(s.n, 0);
                pd_state_clear(&s);
        }
        ph_remove_dir(&d);
        ts_kill_reap(keep);
        ts_kill_reap(moved);
        tr_cgroup_destroy(cg2, 2000000, NULL);
        tr_cgroup_free(cg1);
        tr_cgroup_free(cg2);
        tr_cgroup_free(base);
}

/* Whether cgroup path exists in any hierarchy. */
static bool cg_exists(const char *path)
{
        tr_cgroup *cg = NULL;
        bool found = tr_cgroup_open(ts_hierarchies(), path, 0, &cg, NULL) == 0;
        tr_cgroup_free(cg);
        return found;
}

/* The fam.* cgroup procd makes for root under parent (read while root lives). */
static void fam_path(const char *parent, pid_t root, char *buf, size_t size)
{
        uint64_t start = 0;
        tr_pid_start_ticks(root, &start);
        snprintf(buf, size, "%s/fam.%d.%llu", parent, (int) root, (unsigned long long) start);
}

/* Move pid (a process of this test) into the family cgroup path where procd keeps a root:
 * its leaf in the v2 tree, the family's cgroup itself in v1 hierarchies (no leaf there). */
static void move_into_family(const char *path, pid_t pid)
{
        tr_cgroup *cg = NULL;
        CU_ASSERT_EQUAL(tr_cgroup_open(ts_hierarchies(), path, TR_CG_MAY_ACT, &cg, NULL), 0);
        if (cg)
                CU_ASSERT_EQUAL(pd_famcg_attach(cg, pid, NULL), 0);
        tr_cgroup_free(cg);
}

static bool log_has(const char *log, const char *a, const char *b)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if (tr_read_file_alloc_at(AT_FDCWD, log, &text, &len, NULL) < 0)
                return false;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
                if (strstr(line, a) && strstr(line, b))
                        return true;
        return false;
}

/* fam.* cgroups left by a crash: those of families whose processes exited while procd was
 * down are removed at the restart (nested ones first), a populated one no family owns is
 * left with its process alive, the other families answer as before. */
static void test_orphan_family_cgroups(void)
{
        if (!need_setup())
                return;
        char base[256], log[128], redirect[200];
        ts_cgroup_path(base, sizeof base, "rs-fams");
        snprintf(log, sizeof log, "/tmp/procd-restart-sweep.%d.log", (int) getpid());
        snprintf(redirect, sizeof redirect, "exec \"$@\" 2>>%s", log);
        const char *extra[] = { "--family-cgroup-base", base, NULL };
        const char *wrapper[] = { "sh", "-c", redirect, "sh", NULL };
        ph_daemon d;
        CU_ASSERT_EQUAL_FATAL(ph_start(&d, extra, wrapper, 10000), 0);
        procd_client *c = ph_connect(&d);
        /* gone: its root exits; chain: a family and its subfamily (nested cgroup), both exit;
         * busy: its root exits, a process it left behind stays; keep: untouched */
        pid_t gone = ts_sleeper(), busy = ts_sleeper(), keep = ts_sleeper(), stray = ts_sleeper(), chain[2];
        /* left: its root moves out of its family cgroup while procd is down (dropped);
         * deeper: its root moves into a cgroup below its family's (restored) */
        pid_t left = ts_sleeper(), deeper = ts_sleeper();
        char p_left[320], p_deeper[320], p_below[400];
        fam_path(base, left, p_left, sizeof p_left);
        fam_path(base, deeper, p_deeper, sizeof p_deeper);
        snprintf(p_below, sizeof p_below, "%s/below", p_deeper);
        tr_cgroup *below = NULL, *top = NULL;
        CU_ASSERT_EQUAL_FATAL(ph_chain(1, chain), 0);
        char p_gone[320], p_busy[320], p_keep[320], p_top[320], p_sub[400];
        fam_path(base, gone, p_gone, sizeof p_gone);
        fam_path(base, busy, p_busy, sizeof p_busy);
        fam_path(base, keep, p_keep, sizeof p_keep);
        fam_path(base, chain[0], p_top, sizeof p_top);
        fam_path(p_top, chain[1], p_sub, sizeof p_sub);
        bool reaped = false;
        pid_t regs[] = { gone, busy, keep, chain[0], left, deeper };
        for (size_t i = 0; i < TR_ARRAY_SIZE(regs); i++)
                CU_ASSERT_EQUAL(procd_register_subfamily(c, regs[i], 0, 60, NULL), PROCD_OK);
        const char *made[] = { p_gone, p_busy, p_keep, p_top, p_left, p_deeper };
        for (size_t i = 0; i < TR_ARRAY_SIZE(made); i++)
                if (!cg_exists(made[i])) {
                        ts_skip("orphan family cgroups", "procd made no family cgroup %s", made[i]);
                        procd_disconnect(c);
                        ph_stop(&d, 10000);
                        goto out;
                }
        /* the subfamily's root joins its parent's cgroup (as a child forked there would), so
         * that its cgroup is made inside the parent's; a process of busy's family that
         * outlives its root */
        move_into_family(p_top, chain[1]);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, chain[1], 0, 60, NULL), PROCD_OK);
        CU_ASSERT(cg_exists(p_sub));
        move_into_family(p_busy, stray);
        procd_disconnect(c);
        ph_crash(&d);
        ts_kill_reap(gone);
        ts_kill_reap(busy);
        kill(chain[1], SIGKILL);
        ts_kill_reap(chain[0]);
        ts_reap_orphans(2000); /* chain[1], ours as subreaper: no zombie keeps its pid */
        reaped = true;
        CU_ASSERT_EQUAL(tr_cgroup_open(ts_hierarchies(), ts_cgroup_base(), TR_CG_MAY_ACT, &top, NULL), 0);
        if (top)
                CU_ASSERT_EQUAL(tr_cgroup_attach(top, left, NULL), 0);
        CU_ASSERT_EQUAL(tr_cgroup_create(ts_hierarchies(), p_below, &below, NULL), 0);
        if (below)
                CU_ASSERT_EQUAL(tr_cgroup_attach(below, deeper, NULL), 0);
        CU_ASSERT_EQUAL_FATAL(ph_start_in(&d, extra, wrapper, 10000), 0);
        CU_ASSERT(!cg_exists(p_gone));
        CU_ASSERT(!cg_exists(p_sub));
        CU_ASSERT(!cg_exists(p_top));
        CU_ASSERT(cg_exists(p_busy));
        CU_ASSERT(cg_exists(p_keep));
        CU_ASSERT(ts_alive(stray) && ts_alive(keep));
        CU_ASSERT(log_has(log, "removed family cgroup", p_gone));
        CU_ASSERT(log_has(log, "removed family cgroup", p_sub));
        CU_ASSERT(log_has(log, "removed family cgroup", p_top));
        CU_ASSERT(log_has(log, "holds processes but no family owns it", p_busy));
        c = ph_connect(&d);
        procd_family_info *fi = NULL;
        size_t n = 0;
        CU_ASSERT_EQUAL(procd_dump(c, 0, &fi, &n, NULL), PROCD_OK);
        CU_ASSERT_PTR_NULL(find_info(fi, n, left));
        CU_ASSERT_PTR_NOT_NULL(find_info(fi, n, deeper));
        CU_ASSERT(log_has(log, "no longer in cgroup", p_left));
        procd_family_info_free(fi, n);
        CU_ASSERT(ts_alive(left) && ts_alive(deeper)); /* dropped is not killed */
        procd_usage u;
        CU_ASSERT_EQUAL(procd_get_usage(c, keep, &u, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_suspend_family(c, keep, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_continue_family(c, keep, NULL), PROCD_OK);
        procd_disconnect(c);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
out:
        ts_kill_reap(keep);
        ts_kill_reap(stray);
        ts_kill_reap(left);
        ts_kill_reap(deeper);
        if (below)
                CU_ASSERT_EQUAL(tr_cgroup_destroy(below, 2000000, NULL), 0);
        tr_cgroup_free(below);
        tr_cgroup_free(top);
        if (!reaped) {
                ts_kill_reap(gone);
                ts_kill_reap(busy);
                ph_chain_kill(1, chain);
                ts_reap_orphans(2000);
        }
        tr_cgroup *bc = NULL;
        if (tr_cgroup_open(ts_hierarchies(), base, TR_CG_MAY_ACT | TR_CG_OWNED, &bc, NULL) == 0)
                CU_ASSERT_EQUAL(tr_cgroup_destroy(bc, 2000000, NULL), 0);
        tr_cgroup_free(bc);
        unlink(log);
}

/* Whether Dump(root)'s members are exactly want (n of them, in any order). */
static bool members_are(procd_client *c, pid_t root, const pid_t *want, size_t n)
{
        procd_family_info *fi = NULL;
        size_t nfi = 0, found = 0;
        if (procd_dump(c, root, &fi, &nfi, NULL) != PROCD_OK || nfi < 1 || fi[0].root_pid != root)
                return false;
        for (size_t i = 0; i < fi[0].n_members; i++)
                for (size_t j = 0; j < n; j++)
                        found += fi[0].members[i] == want[j];
        bool same = found == n && fi[0].n_members == n;
        if (!same)
                fprintf(stderr, "family %d: %zu members, %zu of the %zu expected\n", (int) root, fi[0].n_members, found,
                        n);
        procd_family_info_free(fi, nfi);
        return same;
}

/* Wait until pid is a zombie (killed, not reaped: a family killed by procd whose root its
 * parent, a starter, has not reaped yet). */
static bool wait_zombie(pid_t pid, int timeout_ms)
{
        for (int t = 0; t < timeout_ms && ts_proc_state(pid) != 'Z'; t += 10)
                usleep(10000);
        return ts_proc_state(pid) == 'Z';
}

/* State file version 2: a family procd killed still says killed after a restart (a /proc
 * family and a handed cgroup one, their roots killed but not reaped yet), and a /proc
 * family does not take the children its root had at REGISTER (they stay in the parent
 * family); a kept child whose pid names another process now is dropped and logged. */
static void test_killed_and_kept(void)
{
        if (!need_setup())
                return;
        char log[128], redirect[200], path[256], cgpath[256];
        snprintf(log, sizeof log, "/tmp/procd-restart-kept.%d.log", (int) getpid());
        snprintf(redirect, sizeof redirect, "exec \"$@\" 2>>%s", log);
        const char *extra[] = { "--no-family-cgroups", NULL };
        const char *wrapper[] = { "sh", "-c", redirect, "sh", NULL };
        ph_daemon d;
        CU_ASSERT_EQUAL_FATAL(ph_start(&d, extra, wrapper, 10000), 0);
        procd_client *c = ph_connect(&d);
        /* killed: k (/proc), kc (a handed cgroup), each killed by procd, not reaped */
        tr_cgroup *cg = NULL;
        pid_t k = ts_sleeper(), kc = ph_sleeper_in_cgroup("rs-killed", cgpath, sizeof cgpath, &cg);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, k, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, kc, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_track_via_cgroup(c, kc, cgpath, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_kill_family(c, k, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_kill_family(c, kc, NULL), PROCD_OK);
        CU_ASSERT(wait_zombie(k, 5000) && wait_zombie(kc, 5000));
        char st[32];
        CU_ASSERT_STRING_EQUAL(family_state(c, k, st, sizeof st), "killed");
        CU_ASSERT_STRING_EQUAL(family_state(c, kc, st, sizeof st), "killed");
        /* kept: a[0] and b[0] each forked a child (and it a grandchild) before REGISTER */
        pid_t a[3] = { 0 }, b[3] = { 0 };
        CU_ASSERT_EQUAL_FATAL(ph_chain(2, a), 0);
        CU_ASSERT_EQUAL_FATAL(ph_chain(2, b), 0);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, a[0], 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, b[0], 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_snapshot(c, NULL), PROCD_OK);
        CU_ASSERT(members_are(c, a[0], a, 1) && members_are(c, b[0], b, 1));
        procd_disconnect(c);
        ph_crash(&d);

        /* meanwhile b[1]'s pid "names another process": its saved start time changed */
        snprintf(path, sizeof path, "%s/procd.state", d.dir);
        pd_state s;
        CU_ASSERT_EQUAL_FATAL(pd_state_read(path, &s, NULL), 0);
        CU_ASSERT_EQUAL(s.version, PD_STATE_VERSION);
        size_t tampered = 0;
        for (size_t i = 0; i < s.n; i++)
                for (size_t j = 0; s.fams[i].root_pid == b[0] && j < s.fams[i].n_kept; j++)
                        if (s.fams[i].kept[j].pid == b[1]) {
                                s.fams[i].kept[j].start_ticks += 1;
                                tampered++;
                        }
        CU_ASSERT_EQUAL(tampered, 1);
        CU_ASSERT_EQUAL(pd_state_write(path, &s, NULL), 0);
        pd_state_clear(&s);

        CU_ASSERT_EQUAL_FATAL(ph_start_in(&d, extra, wrapper, 10000), 0);
        c = ph_connect(&d);
        CU_ASSERT_STRING_EQUAL(family_state(c, k, st, sizeof st), "killed");
        CU_ASSERT_STRING_EQUAL(family_state(c, kc, st, sizeof st), "killed");
        CU_ASSERT_EQUAL(procd_snapshot(c, NULL), PROCD_OK);
        /* a's earlier child and grandchild stay out; b's, no longer known as kept, are taken */
        CU_ASSERT(members_are(c, a[0], a, 1));
        CU_ASSERT(members_are(c, b[0], b, 3));
        char pid_text[16];
        snprintf(pid_text, sizeof pid_text, "(%d)", (int) b[1]);
        CU_ASSERT(log_has(log, "children its root had at registration", pid_text));
        procd_disconnect(c);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
        ts_kill_reap(k);
        ts_kill_reap(kc);
        ph_chain_kill(2, a);
        ph_chain_kill(2, b);
        ts_reap_orphans(2000);
        if (cg)
                tr_cgroup_destroy(cg, 2000000, NULL);
        tr_cgroup_free(cg);
        unlink(log);
}

/* Two procds whose sockets share a folder keep two state files, each named after its own
 * socket: the second never restores (adopts) the first one's family, even after the first
 * was SIGKILLed. */
static void test_two_daemons_one_folder(void)
{
        if (!need_setup())
                return;
        ph_daemon a;
        CU_ASSERT_FATAL(ph_start(&a, NULL, NULL, 20000) == 0);
        procd_client *ca = ph_connect(&a);
        pid_t s = ts_sleeper();
        CU_ASSERT_EQUAL(procd_register_subfamily(ca, s, getpid(), 60, NULL), PROCD_OK);
        procd_disconnect(ca);
        ph_crash(&a); /* its state file stays, holding the family */
        char a_state[256], b_state[256];
        snprintf(a_state, sizeof a_state, "%s/procd.state", a.dir);
        CU_ASSERT(access(a_state, F_OK) == 0);
        ph_daemon b = a;
        snprintf(b.socket, sizeof b.socket, "%s/other.sock", a.dir);
        CU_ASSERT_FATAL(ph_start_in(&b, NULL, NULL, 20000) == 0);
        procd_client *cb = ph_connect(&b);
        procd_family_info *fi = NULL;
        size_t n = 0;
        CU_ASSERT_EQUAL(procd_dump(cb, 0, &fi, &n, NULL), PROCD_OK);
        CU_ASSERT_PTR_NULL(find_info(fi, n, s)); /* not adopted */
        procd_family_info_free(fi, n);
        procd_disconnect(cb);
        snprintf(b_state, sizeof b_state, "%s/other.state", a.dir);
        CU_ASSERT(access(b_state, F_OK) == 0);
        /* and the first one, started again on its own socket, finds its family */
        CU_ASSERT_FATAL(ph_start_in(&a, NULL, NULL, 20000) == 0);
        ca = ph_connect(&a);
        CU_ASSERT_EQUAL(procd_dump(ca, 0, &fi, &n, NULL), PROCD_OK);
        CU_ASSERT_PTR_NOT_NULL(find_info(fi, n, s));
        procd_family_info_free(fi, n);
        CU_ASSERT_EQUAL(procd_unregister_family(ca, s, NULL), PROCD_OK);
        procd_disconnect(ca);
        ph_crash(&b);
        ph_stop(&a, 20000); /* removes the folder, both state files with it */
        ts_kill_reap(s);
}

/* The cgroup's v2 path of this program ("/" when none is read). */
static void own_v2_cgroup(char *out, size_t size)
{
        snprintf(out, size, "/");
        FILE *f = fopen("/proc/self/cgroup", "r");
        char line[4096];
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "0::", 3) == 0) {
                        line[strcspn(line, "\n")] = '\0';
                        snprintf(out, size, "%s", line + 3);
                }
        if (f)
                fclose(f);
}

/* A state file edited to name "/", procd's own cgroup, or a cgroup another family tracks
 * gets no more than registration gives: those families are not restored (logged), the
 * others are.  (procd started by this program runs in its cgroup: "own".) */
static void test_restore_refusals(void)
{
        if (!need_setup())
                return;
        char p1[256], p2[256], own[4096];
        tr_cgroup *c1 = NULL, *c2 = NULL;
        pid_t a = ph_sleeper_in_cgroup("refuse-a", p1, sizeof p1, &c1);
        pid_t b = ph_sleeper_in_cgroup("refuse-b", p2, sizeof p2, &c2);
        pid_t c = ts_sleeper(), d = ts_sleeper();
        CU_ASSERT_FATAL(a > 1 && b > 1 && c > 1 && d > 1 && c1 && c2);
        CU_ASSERT(tr_cgroup_attach(c1, c, NULL) == 0); /* a second root in a's cgroup */
        own_v2_cgroup(own, sizeof own);
        bool own_is_root = strcmp(own, "/") == 0;
        if (own_is_root)
                printf("  (this program runs in the root cgroup: procd's own cgroup is the \"/\" case)\n");
        struct { pid_t root; const char *cgroup; bool restored; } cases[] = {
                { a, p1, true },   /* as registered */
                { b, "/", false }, /* the root cgroup */
                { c, p1, false },  /* a's cgroup */
                { d, own, false },  /* procd's own (or "/") */
        };
        enum { N = sizeof cases / sizeof cases[0] };
        pd_state_family fams[N];
        memset(fams, 0, sizeof fams);
        for (size_t i = 0; i < N; i++) {
                fams[i].root_pid = cases[i].root;
                CU_ASSERT(tr_pid_start_ticks(cases[i].root, &fams[i].root_start_ticks) == 0);
                fams[i].interval_sec = 60;
                fams[i].cgroup = (char *) cases[i].cgroup;
        }
        ph_daemon dd;
        CU_ASSERT_FATAL(ph_start(&dd, NULL, NULL, 20000) == 0);
        ph_crash(&dd);
        char path[256];
        snprintf(path, sizeof path, "%s/procd.state", dd.dir);
        pd_state st = { .fams = fams, .n = N, .version = PD_STATE_VERSION };
        CU_ASSERT_FATAL(pd_state_write(path, &st, NULL) == 0);
        CU_ASSERT_FATAL(ph_start_in(&dd, NULL, NULL, 20000) == 0);
        procd_client *cl = ph_connect(&dd);
        procd_family_info *fi = NULL;
        size_t n = 0;
        CU_ASSERT_EQUAL(procd_dump(cl, 0, &fi, &n, NULL), PROCD_OK);
        for (size_t i = 0; i < N; i++) {
                bool found = find_info(fi, n, cases[i].root) != NULL;
                if (found != cases[i].restored)
                        fprintf(stderr, "family in %s: %s\n", cases[i].cgroup, found ? "restored" : "not restored");
                CU_ASSERT_EQUAL(found, cases[i].restored);
        }
        procd_family_info_free(fi, n);
        procd_disconnect(cl);
        ph_stop(&dd, 20000);
        pid_t all[] = { a, b, c, d };
        for (size_t i = 0; i < N; i++)
                ts_kill_reap(all[i]);
        tr_cgroup_free(c1);
        tr_cgroup_free(c2);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "600 families of six kinds survive SIGKILL", test_many_families },
                { "SIGKILL in the middle of KillFamily and SuspendFamily", test_crash_mid_kill_and_suspend },
                { "dropped families and untrusted state files", test_dropped_and_untrusted },
                { "fam.* cgroups no family owns after a crash", test_orphan_family_cgroups },
                { "killed families and kept children after a crash (state version 2)", test_killed_and_kept },
                { "two procds in one folder: a state file each", test_two_daemons_one_folder },
                { "restore refuses what registration refuses", test_restore_refusals },
                CU_TEST_INFO_NULL,
        };
        return ph_main("restart", NULL, NULL, tests);
}
