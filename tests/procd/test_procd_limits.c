/* test_procd_limits.c - careless clients (procd/dbus/dbus-server.c limits):
 * - 32 clients that send calls and never read the replies: each is dropped once its unread
 *   replies pass PD_DBUS_MAX_OUTGOING_BYTES; procd's peak RSS stays under 64 MB and, once
 *   they are gone, its RSS is back near its idle size (memory bounds, no timing);
 * - 300 idle authenticated root connections: a new connection is still served (an idle
 *   one gives way), and procd answers throughout.
 * Clients are raw sockets speaking the D-Bus wire protocol, so "never reads" is exact. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "procd/dbus/dbus-server.h"
#include "testsupport.h"
#include "trackers/util.h"

#define FLOODERS 32
#define FLOOD_BYTES_PER_CLIENT (4 * 1024 * 1024) /* calls written unless procd drops us first */
#define RSS_LIMIT_KB (64 * 1024)
#define IDLE_CONNS 300

static ph_daemon D;
static bool started;

static int setup(void)
{
        started = ph_start(&D, NULL, NULL, 20000) == 0;
        return 0;
}

static int teardown(void)
{
        if (started)
                ph_stop(&D, 10000);
        return 0;
}

/* VmRSS or VmHWM of pid in kB, 0 when unreadable. */
static unsigned long status_kb(pid_t pid, const char *key)
{
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        FILE *f = fopen(path, "re");
        unsigned long v = 0;
        size_t klen = strlen(key);
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, key, klen) == 0 && line[klen] == ':')
                        v = strtoul(line + klen + 1, NULL, 10);
        if (f)
                fclose(f);
        return v;
}

/* Reset the peak (VmHWM) to the current RSS. */
static void reset_peak(pid_t pid)
{
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/clear_refs", (int) pid);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t w = write(fd, "5", 1);
                (void) w;
                close(fd);
        }
}

/* One marshalled GetUsage(0) call with the given serial. */
static char *marshal_call(dbus_uint32_t serial, int *len)
{
        DBusMessage *m = dbus_message_new_method_call(NULL, PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, "GetUsage");
        dbus_int32_t z = 0;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &z, DBUS_TYPE_INVALID);
        dbus_message_set_serial(m, serial);
        char *buf = NULL;
        if (!dbus_message_marshal(m, &buf, len))
                buf = NULL;
        dbus_message_unref(m);
        return buf;
}

typedef struct flooder {
        int fd;
        size_t sent;
        bool dropped; /* procd closed the connection */
        dbus_uint32_t serial;
} flooder;

static void test_unread_replies(void)
{
        CU_ASSERT_FATAL(started);
        CU_ASSERT_FATAL(ph_answers(&D));
        unsigned long idle_kb = status_kb(D.pid, "VmRSS");
        reset_peak(D.pid);
        flooder fl[FLOODERS];
        int opened = 0;
        for (int i = 0; i < FLOODERS; i++) {
                fl[i] = (flooder) { .fd = ph_raw_session(&D, true, true), .serial = 1 };
                opened += fl[i].fd >= 0;
        }
        CU_ASSERT_EQUAL(opened, FLOODERS);
        /* write calls on every connection until procd drops it or the quota is written;
         * a connection procd stops reading from (backpressure) waits in poll */
        int active = opened;
        for (int rounds = 0; active > 0 && rounds < 200000; rounds++) {
                struct pollfd p[FLOODERS];
                for (int i = 0; i < FLOODERS; i++)
                        p[i] = (struct pollfd) { .fd = fl[i].fd >= 0 && !fl[i].dropped &&
                                                                 fl[i].sent < FLOOD_BYTES_PER_CLIENT
                                                         ? fl[i].fd
                                                         : -1,
                                                 .events = POLLOUT };
                if (poll(p, FLOODERS, 20000) <= 0)
                        break; /* nobody writable for 20 s: procd no longer reads anyone */
                active = 0;
                for (int i = 0; i < FLOODERS; i++) {
                        if (p[i].fd < 0)
                                continue;
                        if (p[i].revents & (POLLERR | POLLHUP)) {
                                fl[i].dropped = true;
                                continue;
                        }
                        active++;
                        if (!(p[i].revents & POLLOUT))
                                continue;
                        int len;
                        char *msg = marshal_call(fl[i].serial++, &len);
                        if (!msg)
                                continue;
                        ssize_t w = send(fl[i].fd, msg, (size_t) len, MSG_NOSIGNAL);
                        dbus_free(msg);
                        if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
                                fl[i].dropped = true;
                        else if (w > 0)
                                fl[i].sent += (size_t) w;
                }
        }
        unsigned long peak_kb = status_kb(D.pid, "VmHWM");
        int dropped = 0;
        size_t total = 0;
        for (int i = 0; i < FLOODERS; i++) {
                dropped += fl[i].dropped;
                total += fl[i].sent;
        }
        printf("\n    %d non-reading clients wrote %zu KB of calls; procd dropped %d; RSS idle %lu kB, "
               "peak %lu kB",
               FLOODERS, total / 1024, dropped, idle_kb, peak_kb);
        CU_ASSERT_EQUAL(dropped, FLOODERS);
        CU_ASSERT(ph_answers(&D)); /* served while they hang around */
        for (int i = 0; i < FLOODERS; i++)
                if (fl[i].fd >= 0)
                        close(fl[i].fd);
        /* procd reaps closed connections from its idle callbacks: wait (bounded) for it */
        unsigned long after_kb = 0;
        for (int i = 0; i < 100; i++) {
                CU_ASSERT(ph_answers(&D));
                after_kb = status_kb(D.pid, "VmRSS");
                if (after_kb < idle_kb + 4096)
                        break;
                usleep(100000);
        }
        printf(", after they left %lu kB\n", after_kb);
#ifndef PROCD_SANITIZE /* ASan's shadow and quarantine make these meaningless */
        CU_ASSERT(peak_kb > 0 && peak_kb < RSS_LIMIT_KB);
        CU_ASSERT(after_kb > 0 && after_kb < idle_kb + 4096); /* near idle: within 4 MB */
#endif
}

static void test_idle_connections(void)
{
        CU_ASSERT_FATAL(started);
        static int fds[IDLE_CONNS];
        int opened = 0;
        for (int i = 0; i < IDLE_CONNS; i++) {
                fds[i] = ph_raw_session(&D, true, true);
                opened += fds[i] >= 0;
        }
        printf("\n    %d of %d idle root connections authenticated", opened, IDLE_CONNS);
        CU_ASSERT(opened >= PD_DBUS_MAX_CONNECTIONS - 8);
        /* once they have been idle for the eviction bound, new clients get in */
        sleep(PD_ADMISSION_EVICT_MIN_IDLE_SEC + 1);
        int served = 0;
        for (int i = 0; i < 5; i++)
                served += ph_answers(&D);
        printf("; then %d of 5 new clients served\n", served);
        CU_ASSERT_EQUAL(served, 5);
        for (int i = 0; i < IDLE_CONNS; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
        CU_ASSERT(ph_answers(&D));
        CU_ASSERT(ts_alive(D.pid));
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "32 clients that never read: dropped, memory bounded and given back", test_unread_replies },
                { "300 idle root connections do not keep a new client out", test_idle_connections },
                CU_TEST_INFO_NULL,
        };
        return ph_main("procd connection limits", setup, teardown, tests);
}
