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

static const char *const command_names[PD_CL_COMMAND_COUNT] = {
        "REGISTER_SUBFAMILY",
        "TRACK_FAMILY_VIA_ENVIRONMENT",
        "TRACK_FAMILY_VIA_LOGIN",
        "TRACK_FAMILY_VIA_ALLOCATED_SUPPLEMENTARY_GROUP",
        "TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP",
        "SIGNAL_PROCESS",
        "SUSPEND_FAMILY",
        "CONTINUE_FAMILY",
        "KILL_FAMILY",
        "GET_USAGE",
        "UNREGISTER_FAMILY",
        "TAKE_SNAPSHOT",
        "DUMP",
        "QUIT",
        "TRACK_FAMILY_VIA_CGROUP",
};

const char *pd_cl_command_name(int32_t command)
{
        if (command < 0 || command >= PD_CL_COMMAND_COUNT)
                return "UNKNOWN";
        return command_names[command];
}

/* Fixed sizes (0: depends on the arguments). */
static size_t fixed_size(int32_t command)
{
        switch (command) {
        case PD_CL_REGISTER_SUBFAMILY:
                return PD_CL_HEADER_BYTES + 12;
        case PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT:
        case PD_CL_TRACK_FAMILY_VIA_LOGIN:
        case PD_CL_TRACK_FAMILY_VIA_CGROUP:
                return 0;
        case PD_CL_TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP:
        case PD_CL_SIGNAL_PROCESS:
                return PD_CL_HEADER_BYTES + 8;
        case PD_CL_TAKE_SNAPSHOT:
        case PD_CL_QUIT:
                return PD_CL_HEADER_BYTES;
        default:
                return PD_CL_HEADER_BYTES + 4;
        }
}

static void reject(pd_cl_request *r, pd_cl_error e, size_t size, const char *why)
{
        r->reject = e;
        r->size = size;
        snprintf(r->why, sizeof r->why, "%s", why);
}

/* PidEnvID: active entries first, the first inactive one ends the list. */
static void decode_envids(const uint8_t *p, pd_cl_request *r)
{
        r->n_envids = 0;
        r->text[0] = '\0';
        for (int i = 0; i < PD_CL_PIDENVID_MAX; i++) {
                const uint8_t *e = p + 4 + (size_t) i * (1 + PD_CL_ENVID_BYTES);
                if (!e[0])
                        break;
                size_t n = strnlen((const char *) e + 1, PD_CL_ENVID_BYTES);
                memcpy(r->text, e + 1, n);
                r->text[n] = '\0';
                r->n_envids++;
        }
        if (r->n_envids && !strchr(r->text, '='))
                reject(r, PD_CL_BAD_ENVIRONMENT_INFO, r->size, "an ancestor entry without '='");
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
        const uint8_t *a = buf + PD_CL_HEADER_BYTES;
        size_t need = fixed_size(r->command);
        if (need == 0) {
                /* the length field decides */
                size_t lenbytes = r->command == PD_CL_TRACK_FAMILY_VIA_CGROUP ? 8 : 4; /* size_t / int */
                r->size = PD_CL_HEADER_BYTES + 4 + lenbytes;
                if (n < r->size)
                        return PD_CL_INCOMPLETE;
                r->pid = get_i32(a);
                size_t head = r->size;
                if (r->command == PD_CL_TRACK_FAMILY_VIA_CGROUP) {
                        uint64_t len = get_u64(a + 4);
                        r->len = len > INT64_MAX ? INT64_MAX : (int64_t) len;
                        if (len == 0 || len > PD_CL_MAX_REQUEST_BYTES - head) {
                                reject(r, PD_CL_NO_CGROUP_ID_AVAILABLE, head, "cgroup name length out of range");
                                return PD_CL_DECODED;
                        }
                        need = head + (size_t) len;
                } else {
                        r->len = get_i32(a + 4);
                        if (r->command == PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT && r->len != PD_CL_PIDENVID_BYTES) {
                                /* as condor_procd: answered without reading a payload */
                                reject(r, PD_CL_BAD_ENVIRONMENT_INFO, head, "PidEnvID length is not 2372");
                                return PD_CL_DECODED;
                        }
                        if (r->command == PD_CL_TRACK_FAMILY_VIA_LOGIN &&
                            (r->len <= 0 || (size_t) r->len > PD_CL_MAX_REQUEST_BYTES - head)) {
                                reject(r, PD_CL_BAD_LOGIN_INFO, head, "login length out of range");
                                return PD_CL_DECODED;
                        }
                        need = head + (size_t) r->len;
                }
                r->size = need;
                if (n < need)
                        return PD_CL_INCOMPLETE;
                const uint8_t *payload = buf + head;
                size_t plen = need - head;
                if (r->command == PD_CL_TRACK_FAMILY_VIA_ENVIRONMENT) {
                        decode_envids(payload, r);
                } else if (r->command == PD_CL_TRACK_FAMILY_VIA_LOGIN) {
                        if (!memchr(payload, '\0', plen))
                                reject(r, PD_CL_BAD_LOGIN_INFO, need, "login not NUL-terminated");
                        else
                                memcpy(r->text, payload, plen);
                } else {
                        if (memchr(payload, '\0', plen)) {
                                reject(r, PD_CL_NO_CGROUP_ID_AVAILABLE, need, "cgroup name holds a NUL");
                        } else {
                                memcpy(r->text, payload, plen);
                                r->text[plen] = '\0';
                        }
                }
                return PD_CL_DECODED;
        }
        r->size = need;
        if (n < need)
                return PD_CL_INCOMPLETE;
        if (need > PD_CL_HEADER_BYTES)
                r->pid = get_i32(a);
        switch (r->command) {
        case PD_CL_REGISTER_SUBFAMILY:
                r->watcher = get_i32(a + 4);
                r->interval = get_i32(a + 8);
                break;
        case PD_CL_SIGNAL_PROCESS:
                r->signo = get_i32(a + 4);
                break;
        case PD_CL_TRACK_FAMILY_VIA_ASSOCIATED_SUPPLEMENTARY_GROUP:
                r->gid = (uint32_t) get_i32(a + 4);
                break;
        default:
                break;
        }
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
        size_t off = pd_cl_overtaken(buf, n, n, live, data);
        return off ? off : n;
}

size_t pd_cl_overtaken(const uint8_t *buf, size_t n, size_t size,
                       bool (*live)(int32_t client_pid, uint32_t serial, void *data), void *data)
{
        for (size_t off = 1; off < size && off + PD_CL_HEADER_BYTES <= n; off++) {
                if (!pd_cl_header_plausible(buf + off, n - off))
                        continue;
                if (live(get_i32(buf + off), (uint32_t) get_i32(buf + off + 4), data))
                        return off;
        }
        return 0;
}
