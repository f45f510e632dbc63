/* classic-decode.c - request framing and argument decoding of condor_procd's protocol. */
#include "classic-decode.h"

#include <stdio.h>
#include <string.h>

static int32_t get_i32(const uint8_t *p)
{
        int32_t v;
        memcpy(&v, p, sizeof v);
        return v;
}

static uint64_t get_u64(const uint8_t *p)
{
        uint64_t v;
        memcpy(&v, p, sizeof v);
        return v;
}

static void reject(pd_cl_request *r, pd_cl_error e, size_t size, const char *why)
{
        r->reject = e;
        r->size = size;
        snprintf(r->why, sizeof r->why, "%s", why);
}

/* ---- fixed arguments (a: the bytes after the header) ---- */

static void args_pid(const uint8_t *a, pd_cl_request *r) { r->pid = get_i32(a); }

static void args_register(const uint8_t *a, pd_cl_request *r)
{
        r->pid = get_i32(a);
        r->watcher = get_i32(a + 4);
        r->interval = get_i32(a + 8);
}

static void args_signal(const uint8_t *a, pd_cl_request *r)
{
        r->pid = get_i32(a);
        r->signo = get_i32(a + 4);
}

static void args_gid(const uint8_t *a, pd_cl_request *r)
{
        r->pid = get_i32(a);
        r->gid = (uint32_t) get_i32(a + 4);
}

static void args_pid_len32(const uint8_t *a, pd_cl_request *r)
{
        r->pid = get_i32(a);
        r->len = get_i32(a + 4);
}

static void args_pid_len64(const uint8_t *a, pd_cl_request *r)
{
        r->pid = get_i32(a);
        uint64_t len = get_u64(a + 4);
        r->len = len > INT64_MAX ? INT64_MAX : (int64_t) len;
}

/* ---- payloads after a length field (head: header + fixed arguments) ---- */

/* PidEnvID: active entries first, the first inactive one ends the list. */
static void payload_environment(const uint8_t *p, size_t n, pd_cl_request *r)
{
        (void) n;
        r->n_envids = 0;
        r->text[0] = '\0';
        for (int i = 0; i < PD_CL_PIDENVID_MAX; i++) {
                const uint8_t *e = p + 4 + (size_t) i * (1 + PD_CL_ENVID_BYTES);
                if (!e[0])
                        break;
                size_t len = strnlen((const char *) e + 1, PD_CL_ENVID_BYTES);
                memcpy(r->text, e + 1, len);
                r->text[len] = '\0';
                r->n_envids++;
        }
        if (r->n_envids && !strchr(r->text, '='))
                reject(r, PD_CL_BAD_ENVIRONMENT_INFO, r->size, "an ancestor entry without '='");
}

static void payload_login(const uint8_t *p, size_t n, pd_cl_request *r)
{
        if (!memchr(p, '\0', n))
                reject(r, PD_CL_BAD_LOGIN_INFO, r->size, "login not NUL-terminated");
        else
                memcpy(r->text, p, n);
}

static void payload_cgroup(const uint8_t *p, size_t n, pd_cl_request *r)
{
        if (memchr(p, '\0', n)) {
                reject(r, PD_CL_NO_CGROUP_ID_AVAILABLE, r->size, "cgroup name holds a NUL");
                return;
        }
        memcpy(r->text, p, n);
        r->text[n] = '\0';
}

/* The payload's length from r->len, or a rejection (answered without reading a payload,
 * as condor_procd does for a bad PidEnvID length). */
static bool length_environment(pd_cl_request *r, size_t head, size_t *len)
{
        if (r->len != PD_CL_PIDENVID_BYTES) {
                reject(r, PD_CL_BAD_ENVIRONMENT_INFO, head, "PidEnvID length is not 2372");
                return false;
        }
        *len = PD_CL_PIDENVID_BYTES;
        return true;
}

static bool length_login(pd_cl_request *r, size_t head, size_t *len)
{
        if (r->len <= 0 || (size_t) r->len > PD_CL_MAX_REQUEST_BYTES - head) {
                reject(r, PD_CL_BAD_LOGIN_INFO, head, "login length out of range");
                return false;
        }
        *len = (size_t) r->len;
        return true;
}

static bool length_cgroup(pd_cl_request *r, size_t head, size_t *len)
{
        if (r->len <= 0 || (size_t) r->len > PD_CL_MAX_REQUEST_BYTES - head) {
                reject(r, PD_CL_NO_CGROUP_ID_AVAILABLE, head, "cgroup name length out of range");
                return false;
        }
        *len = (size_t) r->len;
        return true;
}

/* Each command's shape: the fixed argument bytes after the header, their decoder, and for
 * the three commands with a length field the payload's length check and decoder. */
typedef struct command_shape {
        const char *name;
        size_t args;                                  /* bytes after the header */
        void (*decode_args)(const uint8_t *a, pd_cl_request *r);
        bool (*payload_len)(pd_cl_request *r, size_t head, size_t *len); /* NULL: none */
        void (*decode_payload)(const uint8_t *p, size_t n, pd_cl_request *r);
} command_shape;

static const command_shape shapes[PD_CL_COMMAND_COUNT] = {
        [PD_CL_REGISTER_SUBFAMILY] = { "REGISTER_SUBFAMILY", 12, args_register, NULL, NULL },
        [PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT] = { "TRACK_FAMILY_VIA_ENVIRONMENT", 8, args_pid_len32, length_environment,
                                                 payload_environment },
        [PD_CL_TRACK_FAMILY_VIA_LOGIN] = { "TRACK_FAMILY_VIA_LOGIN", 8, args_pid_len32, length_login, payload_login },
        [PD_CL_TRACK_FAMILY_VIA_ALLOCATED_SUPPLEMENTARY_GROUP] = { "TRACK_FAMILY_VIA_ALLOCATED_SUPPLEMENTARY_GROUP", 4,
                                                                   args_pid, NULL, NULL },
        [PD_CL_TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP] = { "TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP", 8,
                                                                    args_gid, NULL, NULL },
        [PD_CL_SIGNAL_PROCESS] = { "SIGNAL_PROCESS", 8, args_signal, NULL, NULL },
        [PD_CL_SUSPEND_FAMILY] = { "SUSPEND_FAMILY", 4, args_pid, NULL, NULL },
        [PD_CL_CONTINUE_FAMILY] = { "CONTINUE_FAMILY", 4, args_pid, NULL, NULL },
        [PD_CL_KILL_FAMILY] = { "KILL_FAMILY", 4, args_pid, NULL, NULL },
        [PD_CL_GET_USAGE] = { "GET_USAGE", 4, args_pid, NULL, NULL },
        [PD_CL_UNREGISTER_FAMILY] = { "UNREGISTER_FAMILY", 4, args_pid, NULL, NULL },
        [PD_CL_TAKE_SNAPSHOT] = { "TAKE_SNAPSHOT", 0, NULL, NULL, NULL },
        [PD_CL_DUMP] = { "DUMP", 4, args_pid, NULL, NULL },
        [PD_CL_QUIT] = { "QUIT", 0, NULL, NULL, NULL },
        [PD_CL_TRACK_FAMILY_VIA_CGROUP] = { "TRACK_FAMILY_VIA_CGROUP", 12, args_pid_len64, length_cgroup,
                                            payload_cgroup },
};

const char *pd_cl_command_name(int32_t command)
{
        if (command < 0 || command >= PD_CL_COMMAND_COUNT)
                return "UNKNOWN";
        return shapes[command].name;
}

const char *pd_cl_error_name(int32_t error)
{
        static const char *const names[] = {
                [PD_CL_SUCCESS] = "OK",
                [PD_CL_BAD_ROOT_PID] = "BAD_ROOT_PID",
                [PD_CL_BAD_WATCHER_PID] = "BAD_WATCHER_PID",
                [PD_CL_BAD_SNAPSHOT_INTERVAL] = "BAD_SNAPSHOT_INTERVAL",
                [PD_CL_ALREADY_REGISTERED] = "ALREADY_REGISTERED",
                [PD_CL_FAMILY_NOT_FOUND] = "FAMILY_NOT_FOUND",
                [PD_CL_PROCESS_NOT_FOUND] = "PROCESS_NOT_FOUND",
                [PD_CL_PROCESS_NOT_FAMILY] = "PROCESS_NOT_FAMILY",
                [PD_CL_UNREGISTER_ROOT] = "UNREGISTER_ROOT",
                [PD_CL_BAD_ENVIRONMENT_INFO] = "BAD_ENVIRONMENT_INFO",
                [PD_CL_BAD_LOGIN_INFO] = "BAD_LOGIN_INFO",
                [PD_CL_BAD_GLEXEC_INFO] = "BAD_GLEXEC_INFO",
                [PD_CL_NO_GROUP_ID_AVAILABLE] = "NO_GROUP_ID_AVAILABLE",
                [PD_CL_NO_GLEXEC] = "NO_GLEXEC",
                [PD_CL_NO_CGROUP_ID_AVAILABLE] = "NO_CGROUP_ID_AVAILABLE",
                [PD_CL_UNEXPECTED] = "UNEXPECTED",
        };
        return error >= 0 && (size_t) error < sizeof names / sizeof names[0] && names[error] ? names[error] : "UNKNOWN";
}

pd_cl_decode_result pd_cl_decode(const uint8_t *buf, size_t n, pd_cl_request *r)
{
        memset(r, 0, offsetof(pd_cl_request, text));
        r->text[0] = '\0';
        r->why[0] = '\0';
        r->reject = PD_CL_SUCCESS;
        r->size = PD_CL_HEADER_BYTES;
        if (n >= 8) {
                r->client_pid = get_i32(buf);
                r->serial = (uint32_t) get_i32(buf + 4);
        }
        if (n < PD_CL_HEADER_BYTES)
                return PD_CL_INCOMPLETE;
        r->command = get_i32(buf + 8);
        if (r->command < 0 || r->command >= PD_CL_COMMAND_COUNT)
                return PD_CL_UNKNOWN_COMMAND;
        const command_shape *sh = &shapes[r->command];
        size_t head = PD_CL_HEADER_BYTES + sh->args;
        r->size = head;
        if (n < head)
                return PD_CL_INCOMPLETE;
        if (sh->decode_args)
                sh->decode_args(buf + PD_CL_HEADER_BYTES, r);
        size_t len = 0;
        if (!sh->payload_len || !sh->payload_len(r, head, &len))
                return PD_CL_DECODED; /* no payload, or rejected before it */
        r->size = head + len;
        if (n < r->size)
                return PD_CL_INCOMPLETE;
        sh->decode_payload(buf + head, len, r);
        return PD_CL_DECODED;
}

bool pd_cl_header_plausible(const uint8_t *buf, size_t n)
{
        if (n < PD_CL_HEADER_BYTES)
                return false;
        int32_t pid = get_i32(buf), cmd = get_i32(buf + 8);
        return pid > 0 && pid <= PD_CL_PID_MAX_LIMIT && cmd >= 0 && cmd < PD_CL_COMMAND_COUNT;
}

size_t pd_cl_resync(const uint8_t *buf, size_t n, bool (*live)(int32_t client_pid, uint32_t serial, void *data),
                    void *data)
{
        for (size_t off = 1; off + PD_CL_HEADER_BYTES <= n; off++) {
                if (!pd_cl_header_plausible(buf + off, n - off))
                        continue;
                if (live(get_i32(buf + off), (uint32_t) get_i32(buf + off + 4), data))
                        return off;
        }
        return n;
}
