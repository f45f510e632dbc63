/* test_events.c - procd's events (issue 17 §1): a subscriber sees a family registered,
 * frozen, thawed, killing and emptied (with its final usage), an OOM kill in a family with a
 * memory limit, the families restored after a restart; a subscriber that does not read
 * loses events (counted, flagged in the next one) without stalling procd; a connection that
 * did not subscribe gets none; procctl events prints one line per event. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testsupport.h"
#include "trackers/cgroup.h"

#define EVENT_WAIT_MS 20000

/* The next event named name within EVENT_WAIT_MS, skipping others; false when none. */
static bool wait_event(procd_client *c, const char *name, pid_t root, procd_event *out)
{
        for (int tries = 0; tries < 200; tries++) {
                bool got = false;
                if (procd_next_event(c, EVENT_WAIT_MS, out, &got, NULL) != PROCD_OK || !got)
                        return false;
                if (strcmp(out->name, name) == 0 && (root < 0 || out->root_pid == root))
                        return true;
        }
        return false;
}

static bool no_event(procd_client *c, int ms)
{
        procd_event ev;
        bool got = true;
        return procd_next_event(c, ms, &ev, &got, NULL) == PROCD_OK && !got;
}

/* register, track its cgroup, suspend, continue, kill: the events in order, with usage */
static void test_family_life(void)
{
        if (!ts_need_root("family events") || !ts_cgroup_base())
                return;
        ph_daemon d;
        if (ph_start(&d, NULL, NULL, 10000) < 0) {
                CU_FAIL("procd did not start");
                return;
        }
        procd_client *sub = ph_connect(&d), *other = ph_connect(&d);
        CU_ASSERT_EQUAL_FATAL(procd_subscribe(sub, NULL), PROCD_OK);
        char path[256];
        tr_cgroup *cg = NULL;
        pid_t p = ph_sleeper_in_cgroup("ev-life", path, sizeof path, &cg);
        CU_ASSERT_FATAL(p > 0);
        procd_event ev;
        CU_ASSERT_EQUAL(procd_register_subfamily(other, p, 0, 60, NULL), PROCD_OK);
        CU_ASSERT(wait_event(sub, "FamilyRegistered", p, &ev));
        CU_ASSERT_EQUAL(procd_track_via_cgroup(other, p, path, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_set_family_job(other, p, "job-ev-1", 0, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_suspend_family(other, p, NULL), PROCD_OK);
        CU_ASSERT(wait_event(sub, "FamilyFrozen", p, &ev));
        CU_ASSERT_STRING_EQUAL(ev.job, "job-ev-1");
        CU_ASSERT_EQUAL(procd_continue_family(other, p, NULL), PROCD_OK);
        CU_ASSERT(wait_event(sub, "FamilyThawed", p, &ev));
        CU_ASSERT_EQUAL(procd_kill_family(other, p, NULL), PROCD_OK);
        CU_ASSERT(wait_event(sub, "FamilyKilling", p, &ev));
        const tr_hierarchies *hs = ts_hierarchies();
        if (hs->v2 >= 0) {
                CU_ASSERT(wait_event(sub, "FamilyEmptied", p, &ev));
                CU_ASSERT(ev.has_usage);
                CU_ASSERT_STRING_EQUAL(ev.job, "job-ev-1");
        } else {
                ts_skip("FamilyEmptied", "no cgroup v2 tree (v1 has no emptiness notification)");
        }
        /* the connection that made the calls never subscribed: nothing queued for it */
        CU_ASSERT(no_event(other, 200));
        waitpid(p, NULL, 0);
        procd_disconnect(sub);
        procd_disconnect(other);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
        tr_cgroup_destroy(cg, 2000000, NULL);
        tr_cgroup_free(cg);
}

/* KillFamily of a member procd cannot kill (frozen in a v1 freezer cgroup it was not handed):
 * FamilyKilling, then FamilyUnkillable after the kill timeout, naming the process */
static void test_unkillable(void)
{
        ph_frozen_victim fv;
        if (!ph_frozen_victim_start(&fv, "ev-frozen", "unkillable event"))
                return;
        static const char *const extra[] = { "--kill-timeout", "1", NULL };
        ph_daemon d;
        CU_ASSERT_FATAL(ph_start(&d, extra, NULL, 10000) == 0);
        procd_client *sub = ph_connect(&d), *c = ph_connect(&d);
        CU_ASSERT_EQUAL(procd_subscribe(sub, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, fv.pid, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_kill_family(c, fv.pid, NULL), PROCD_E_UNKILLABLE);
        procd_event ev;
        CU_ASSERT(wait_event(sub, "FamilyKilling", fv.pid, &ev));
        CU_ASSERT(wait_event(sub, "FamilyUnkillable", fv.pid, &ev));
        char want[16];
        snprintf(want, sizeof want, "%d", (int) fv.pid);
        CU_ASSERT_PTR_NOT_NULL(strstr(ev.message, want));
        CU_ASSERT_EQUAL(procd_unregister_family(c, fv.pid, NULL), PROCD_OK);
        procd_disconnect(sub);
        procd_disconnect(c);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
        ph_frozen_victim_end(&fv);
}

/* A child in cgroup cg that, once told (a byte on go), touches memory until killed. */
static pid_t hog_in(tr_cgroup *cg, int *go_w)
{
        int go[2];
        if (pipe(go) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid == 0) {
                close(go[1]);
                char b;
                if (read(go[0], &b, 1) != 1)
                        _exit(3);
                for (;;) {
                        char *m = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                        if (m == MAP_FAILED)
                                _exit(4);
                        memset(m, 1, 16 << 20);
                }
        }
        close(go[0]);
        *go_w = go[1];
        if (pid > 0 && tr_cgroup_attach(cg, pid, NULL) < 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                close(go[1]);
                return -EIO;
        }
        return pid;
}

/* the memory limit in whichever hierarchy holds the memory controller (v1: no swap either) */
static bool limit_memory(tr_cgroup *cg)
{
        const tr_hierarchies *hs = tr_cgroup_hierarchies(cg);
        int i = tr_hierarchies_best(hs, TR_CTRL_MEMORY);
        if (i < 0 || !tr_cgroup_path(cg, i))
                return false;
        if (hs->h[i].is_v2)
                return tr_cgroup_write(cg, i, "memory.max", "33554432", NULL) >= 0 &&
                       (!tr_cgroup_has_file(cg, i, "memory.swap.max") ||
                        tr_cgroup_write(cg, i, "memory.swap.max", "0", NULL) >= 0);
        bool ok = tr_cgroup_write(cg, i, "memory.limit_in_bytes", "33554432", NULL) >= 0;
        if (ok && tr_cgroup_has_file(cg, i, "memory.memsw.limit_in_bytes"))
                ok = tr_cgroup_write(cg, i, "memory.memsw.limit_in_bytes", "33554432", NULL) >= 0;
        tr_cgroup_write(cg, i, "memory.swappiness", "0", NULL);
        return ok;
}

static void test_oom_kill(void)
{
        if (!ts_need_root("OOM event") || !ts_cgroup_base())
                return;
        char path[256];
        ts_cgroup_path(path, sizeof path, "ev-oom");
        tr_cgroup *cg = NULL;
        if (tr_cgroup_create(ts_hierarchies(), path, &cg, NULL) < 0) {
                CU_FAIL("cgroup not made");
                return;
        }
        if (!limit_memory(cg)) {
                ts_skip("OOM event", "no memory controller to limit here");
                tr_cgroup_destroy(cg, 2000000, NULL);
                tr_cgroup_free(cg);
                return;
        }
        ph_daemon d;
        CU_ASSERT_FATAL(ph_start(&d, NULL, NULL, 10000) == 0);
        procd_client *sub = ph_connect(&d), *other = ph_connect(&d);
        CU_ASSERT_EQUAL(procd_subscribe(sub, NULL), PROCD_OK);
        int go = -1;
        pid_t p = hog_in(cg, &go);
        CU_ASSERT_FATAL(p > 0);
        CU_ASSERT_EQUAL(procd_register_subfamily(other, p, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_track_via_cgroup(other, p, path, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_set_family_job(other, p, "job-oom", 0, NULL), PROCD_OK);
        CU_ASSERT(write(go, "g", 1) == 1);
        procd_event ev;
        CU_ASSERT(wait_event(sub, "FamilyOomKill", p, &ev));
        CU_ASSERT(ev.oom_kills >= 1);
        CU_ASSERT(ev.oom_kills_total >= ev.oom_kills);
        CU_ASSERT_STRING_EQUAL(ev.job, "job-oom");
        int st = 0;
        CU_ASSERT_EQUAL(waitpid(p, &st, 0), p);
        CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        close(go);
        procd_disconnect(sub);
        procd_disconnect(other);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
        tr_cgroup_destroy(cg, 2000000, NULL);
        tr_cgroup_free(cg);
}

/* procd crashes and starts again: a new subscriber first gets FamiliesRestored */
static void test_restored(void)
{
        ph_daemon d;
        CU_ASSERT_FATAL(ph_start(&d, NULL, NULL, 10000) == 0);
        procd_client *c = ph_connect(&d);
        pid_t a = ts_sleeper(), b = ts_sleeper();
        CU_ASSERT_EQUAL(procd_register_subfamily(c, a, 0, 60, NULL), PROCD_OK);
        CU_ASSERT_EQUAL(procd_register_subfamily(c, b, 0, 60, NULL), PROCD_OK);
        procd_disconnect(c);
        ph_crash(&d);
        CU_ASSERT_FATAL(ph_start_in(&d, NULL, NULL, 10000) == 0);
        c = ph_connect(&d);
        CU_ASSERT_EQUAL(procd_subscribe(c, NULL), PROCD_OK);
        procd_event ev;
        bool got = false;
        CU_ASSERT_EQUAL(procd_next_event(c, EVENT_WAIT_MS, &ev, &got, NULL), PROCD_OK);
        CU_ASSERT(got && strcmp(ev.name, "FamiliesRestored") == 0);
        CU_ASSERT_EQUAL(ev.families, 2);
        CU_ASSERT_EQUAL(ev.root_pid, 0);
        procd_disconnect(c);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
        ts_kill_reap(a);
        ts_kill_reap(b);
}

/* A subscriber that never reads: procd keeps serving, the subscriber's events past its
 * bound are lost and counted, and every event is either received or counted as dropped. */
static void test_slow_subscriber(void)
{
        ph_daemon d;
        CU_ASSERT_FATAL(ph_start(&d, NULL, NULL, 10000) == 0);
        procd_client *slow = ph_connect(&d), *c = ph_connect(&d);
        CU_ASSERT_EQUAL_FATAL(procd_subscribe(slow, NULL), PROCD_OK);
        pid_t p = ts_sleeper();
        CU_ASSERT_EQUAL(procd_register_subfamily(c, p, 0, 60, NULL), PROCD_OK);
        long sent = 1; /* FamilyRegistered */
        const long n = ts_scale("PROCD_TEST_EVENTS", 1200, 100, 100000, 2);
        for (long i = 0; i < n; i += 2) {
                if (procd_suspend_family(c, p, NULL) != PROCD_OK || procd_continue_family(c, p, NULL) != PROCD_OK) {
                        CU_FAIL("suspend/continue failed");
                        break;
                }
                sent += 2;
        }
        CU_ASSERT(ph_answers(&d));
        /* one more event after the slow one starts reading: it carries the count */
        long received = 0, dropped = 0;
        procd_event ev;
        bool got = true;
        while (procd_next_event(slow, 500, &ev, &got, NULL) == PROCD_OK && got) {
                received++;
                dropped += (long) ev.dropped;
        }
        CU_ASSERT_EQUAL(procd_suspend_family(c, p, NULL), PROCD_OK);
        sent++;
        while (procd_next_event(slow, 2000, &ev, &got, NULL) == PROCD_OK && got) {
                received++;
                dropped += (long) ev.dropped;
        }
        printf("\n  %ld events: %ld received, %ld dropped\n", sent, received, dropped);
        if (n >= 1200)
                CU_ASSERT(dropped > 0); /* 1,200 events pass the socket buffer and the bound (about 520 fit: measured) */
        CU_ASSERT_EQUAL(received + dropped, sent);
        CU_ASSERT(no_event(c, 200));
        /* the loss is counted where the admin sees it */
        char *text = NULL, want[64];
        CU_ASSERT_EQUAL(procd_get_metrics(c, &text, NULL), PROCD_OK);
        snprintf(want, sizeof want, "\nprocd_events_dropped_total %ld\n", dropped);
        CU_ASSERT_PTR_NOT_NULL(text ? strstr(text, want) : NULL);
        free(text);
        procd_disconnect(slow);
        procd_disconnect(c);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
        ts_kill_reap(p);
}

/* procctl events --json -n 2: two lines, one JSON object each */
static void test_procctl_events(void)
{
        ph_daemon d;
        CU_ASSERT_FATAL(ph_start(&d, NULL, NULL, 10000) == 0);
        char exe[512];
        snprintf(exe, sizeof exe, "%s/procd/procctl", ts_build_dir());
        int out[2];
        CU_ASSERT_FATAL(pipe(out) == 0);
        pid_t ctl = fork();
        if (ctl == 0) {
                dup2(out[1], 1);
                close(out[0]);
                execl(exe, exe, "--socket", d.socket, "--json", "events", "-n", "2", (char *) NULL);
                _exit(127);
        }
        close(out[1]);
        procd_client *c = ph_connect(&d);
        pid_t p = ts_sleeper();
        CU_ASSERT_EQUAL(procd_register_subfamily(c, p, 0, 60, NULL), PROCD_OK);
        /* procctl subscribes on its own connection, at a moment the test does not see:
         * events until it has printed two and exited */
        int st = 0;
        pid_t w = 0;
        for (int i = 0; i < 1000 && w == 0; i++) {
                procd_suspend_family(c, p, NULL);
                procd_continue_family(c, p, NULL);
                w = waitpid(ctl, &st, WNOHANG);
        }
        if (w == 0) {
                kill(ctl, SIGKILL);
                waitpid(ctl, &st, 0);
        }
        CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        char buf[4096] = "";
        size_t len = 0;
        ssize_t k;
        while (len < sizeof buf - 1 && (k = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
                len += (size_t) k;
        buf[len] = 0;
        char want[128];
        snprintf(want, sizeof want, "{\"event\": \"FamilyFrozen\", \"root_pid\": %d, \"job\": \"\"", (int) p);
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, want));
        int lines = 0;
        for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"), lines++)
                CU_ASSERT(strncmp(l, "{\"event\": \"Family", 17) == 0 && l[strlen(l) - 1] == '}');
        CU_ASSERT_EQUAL(lines, 2);
        close(out[0]);
        procd_disconnect(c);
        CU_ASSERT_EQUAL(ph_stop(&d, 10000), 0);
        ts_kill_reap(p);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "registered, frozen, thawed, killing, emptied with usage", test_family_life },
                { "an OOM kill in a family with a memory limit", test_oom_kill },
                { "unkillable after the kill timeout", test_unkillable },
                { "restored N after a restart", test_restored },
                { "a subscriber that does not read loses events, counted", test_slow_subscriber },
                { "procctl events --json", test_procctl_events },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = { { "events", NULL, NULL, NULL, NULL, tests }, CU_SUITE_INFO_NULL };
        return ts_run(suites);
}
