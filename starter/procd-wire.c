/* procd-wire.c - a D-Bus peer client for procd's socket without libdbus (procd-wire.h). */
#include "procd-wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "trackers/util.h"

#define PW_ALIGN(x, a) (((x) + (a) - 1) & ~((size_t) (a) - 1))
#define PW_CALL_MAX 8192            /* a call's bytes (a cgroup path is at most 4096) */
#define PW_AUTH_MAX 64
#define PW_CALL_TIMEOUT_MS 120000   /* as libprocd-client: a KillFamily waits for the family */
#define PW_RECONNECT_MS 10000
#define PW_RECONNECT_PAUSE_MS 50

enum { F_PATH = 1, F_INTERFACE = 2, F_MEMBER = 3, F_ERROR_NAME = 4, F_REPLY_SERIAL = 5, F_SIGNATURE = 8 };

/* ---- marshalling (always little-endian) ---- */

typedef struct pw_out {
        uint8_t *p;
        size_t n, cap;
} pw_out;

static bool out_pad(pw_out *o, size_t a)
{
        size_t t = PW_ALIGN(o->n, a);
        if (t > o->cap)
                return false;
        memset(o->p + o->n, 0, t - o->n);
        o->n = t;
        return true;
}

static bool out_bytes(pw_out *o, const void *b, size_t n)
{
        if (n > o->cap - o->n)
                return false;
        if (n)
                memcpy(o->p + o->n, b, n);
        o->n += n;
        return true;
}

static void put_le32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
        p[2] = (uint8_t) (v >> 16);
        p[3] = (uint8_t) (v >> 24);
}

static bool out_u32(pw_out *o, uint32_t v)
{
        uint8_t b[4];
        put_le32(b, v);
        return out_pad(o, 4) && out_bytes(o, b, 4);
}

static bool out_str(pw_out *o, const void *s, size_t n)
{
        return out_u32(o, (uint32_t) n) && out_bytes(o, s, n) && out_bytes(o, "", 1);
}

static bool out_sig(pw_out *o, const char *s)
{
        uint8_t n = (uint8_t) strlen(s);
        return out_bytes(o, &n, 1) && out_bytes(o, s, n) && out_bytes(o, "", 1);
}

/* a header field: (code, variant of one basic type) */
static bool out_field(pw_out *o, uint8_t code, char type, const char *s)
{
        char sig[2] = { type, 0 };
        if (!out_pad(o, 8) || !out_bytes(o, &code, 1) || !out_sig(o, sig))
                return false;
        return type == 'g' ? out_sig(o, s) : out_str(o, s, strlen(s));
}

/* UTF-8 as D-Bus wants it: well formed, no NUL (the string ends there), no surrogates, at
 * most U+10FFFF, shortest form. */
static bool utf8_valid(const unsigned char *s, size_t n)
{
        for (size_t i = 0; i < n;) {
                unsigned c = s[i];
                size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
                if (k == 0 || c == 0 || k > n - i)
                        return false;
                uint32_t cp = k == 1 ? c : c & (0x7fu >> k);
                for (size_t j = 1; j < k; j++) {
                        if ((s[i + j] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (s[i + j] & 0x3f);
                }
                static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
                if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                i += k;
        }
        return true;
}

int st_pw_marshal_call(uint32_t serial, const char *method, const st_pw_arg *args, size_t n, uint8_t *buf, size_t cap,
                       size_t *len, procd_error *err)
{
        char sig[64];
        size_t sl = 0;
        for (size_t i = 0; i < n; i++) {
                const char *t = args[i].type == 'y' ? "ay" : args[i].type == 'i' || args[i].type == 'u' || args[i].type == 's'
                                                                 ? (const char[]){ args[i].type, 0 }
                                                                 : NULL;
                if (!t || sl + strlen(t) >= sizeof sig) {
                        procd_error_set(err, PROCD_E_BAD_ARGUMENT, "%s: argument %zu: unsupported type", method, i + 1);
                        return -EINVAL;
                }
                memcpy(sig + sl, t, strlen(t));
                sl += strlen(t);
                if (args[i].type == 's' && (!args[i].s || !utf8_valid((const unsigned char *) args[i].s, strlen(args[i].s)))) {
                        procd_error_set(err, PROCD_E_BAD_ARGUMENT, "%s: argument %zu: not a UTF-8 string", method, i + 1);
                        return -EINVAL;
                }
        }
        sig[sl] = '\0';
        pw_out o = { buf, 0, cap };
        static const uint8_t fixed[4] = { 'l', 1 /* METHOD_CALL */, 0, 1 };
        bool ok = out_bytes(&o, fixed, 4) && out_u32(&o, 0 /* body length, below */) && out_u32(&o, serial) &&
                  out_u32(&o, 0 /* fields' length, below */);
        size_t fields = o.n;
        ok = ok && out_field(&o, F_PATH, 'o', PROCD_DBUS_PATH) && out_field(&o, F_INTERFACE, 's', PROCD_DBUS_INTERFACE) &&
             out_field(&o, F_MEMBER, 's', method) && (n == 0 || out_field(&o, F_SIGNATURE, 'g', sig));
        size_t fields_len = o.n - fields;
        ok = ok && out_pad(&o, 8);
        size_t body = o.n;
        for (size_t i = 0; ok && i < n; i++) {
                const st_pw_arg *a = &args[i];
                switch (a->type) {
                case 'i': ok = out_u32(&o, (uint32_t) a->i); break;
                case 'u': ok = out_u32(&o, a->u); break;
                case 's': ok = out_str(&o, a->s, strlen(a->s)); break;
                default: ok = out_u32(&o, (uint32_t) a->len) && out_bytes(&o, a->bytes, a->len); break;
                }
        }
        if (!ok) {
                procd_error_set(err, PROCD_E_BAD_ARGUMENT, "%s: the call exceeds %zu bytes", method, cap);
                return -E2BIG;
        }
        put_le32(buf + 4, (uint32_t) (o.n - body));
        put_le32(buf + 12, (uint32_t) fields_len);
        *len = o.n;
        return 0;
}

/* ---- parsing (either byte order, every offset checked) ---- */

typedef struct pw_in {
        const uint8_t *p;
        size_t n, pos;
        bool be;
} pw_in;

static uint32_t get32(const uint8_t *p, bool be)
{
        return be ? (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3]
                  : (uint32_t) p[3] << 24 | (uint32_t) p[2] << 16 | (uint32_t) p[1] << 8 | p[0];
}

static bool in_align(pw_in *r, size_t a)
{
        size_t t = PW_ALIGN(r->pos, a);
        if (t > r->n)
                return false;
        for (size_t i = r->pos; i < t; i++)
                if (r->p[i]) /* padding is zero */
                        return false;
        r->pos = t;
        return true;
}

static bool in_fixed(pw_in *r, size_t size, uint64_t *v)
{
        if (!in_align(r, size) || size > r->n - r->pos)
                return false;
        uint64_t x = 0;
        for (size_t i = 0; i < size; i++)
                x |= (uint64_t) r->p[r->pos + i] << (8 * (r->be ? size - 1 - i : i));
        r->pos += size;
        *v = x;
        return true;
}

static bool in_u32(pw_in *r, uint32_t *v)
{
        uint64_t x;
        if (!in_fixed(r, 4, &x))
                return false;
        *v = (uint32_t) x;
        return true;
}

/* a string or object path (u32 length) or a signature (byte length): NUL-terminated, no
 * NUL inside */
static bool in_text(pw_in *r, bool sig, const char **s, size_t *len)
{
        uint64_t n;
        if (!(sig ? in_fixed(r, 1, &n) : in_fixed(r, 4, &n)) || n >= r->n - r->pos || r->p[r->pos + n] != 0 ||
            memchr(r->p + r->pos, 0, n))
                return false;
        *s = (const char *) r->p + r->pos;
        *len = (size_t) n;
        r->pos += n + 1;
        return true;
}

/* the fixed size of a basic type, 0 for s/o/g, -1 for what the parser does not take */
static int basic_size(char t)
{
        switch (t) {
        case 'y': return 1;
        case 'n': case 'q': return 2;
        case 'b': case 'i': case 'u': case 'h': return 4;
        case 'x': case 't': case 'd': return 8;
        case 's': case 'o': case 'g': return 0;
        default: return -1;
        }
}

static procd_status malformed(procd_error *err, const char *what)
{
        return procd_error_set(err, PROCD_E_TRANSPORT, "malformed D-Bus message from procd: %s", what);
}

procd_status st_pw_message_size(const uint8_t *b, size_t n, size_t *total, procd_error *err)
{
        if (n < 16)
                return malformed(err, "shorter than a header");
        if (b[0] != 'l' && b[0] != 'B')
                return malformed(err, "bad byte order mark");
        if (b[3] != 1)
                return malformed(err, "protocol version is not 1");
        bool be = b[0] == 'B';
        uint64_t body = get32(b + 4, be), fields = get32(b + 12, be);
        uint64_t t = PW_ALIGN(16 + fields, 8) + body;
        if (t > ST_PW_MAX_MESSAGE)
                return malformed(err, "longer than the limit");
        *total = (size_t) t;
        return PROCD_OK;
}

static procd_status parse_field(pw_in *r, st_pw_msg *m, procd_error *err)
{
        uint64_t code;
        const char *sig, *s;
        size_t sl, len;
        if (!in_align(r, 8) || !in_fixed(r, 1, &code) || !in_text(r, true, &sig, &sl))
                return malformed(err, "truncated header field");
        if (sl != 1 || basic_size(sig[0]) < 0)
                return malformed(err, "header field of an unexpected type");
        char t = sig[0];
        static const char want[10] = { 0, 'o', 's', 's', 's', 'u', 's', 's', 'g', 'u' };
        if (code >= 1 && code <= 9 && t != want[code])
                return malformed(err, "header field of the wrong type");
        if (basic_size(t) > 0) {
                uint64_t v;
                if (!in_fixed(r, (size_t) basic_size(t), &v))
                        return malformed(err, "truncated header field");
                if (code == F_REPLY_SERIAL)
                        m->reply_serial = (uint32_t) v;
                return PROCD_OK;
        }
        if (!in_text(r, t == 'g', &s, &len))
                return malformed(err, "truncated header field string");
        if (code == F_ERROR_NAME || code == F_SIGNATURE) {
                char *dst = code == F_ERROR_NAME ? m->error_name : m->signature;
                if (len >= sizeof m->error_name)
                        return malformed(err, "header field too long");
                memcpy(dst, s, len);
                dst[len] = '\0';
        }
        return PROCD_OK;
}

procd_status st_pw_parse(const uint8_t *b, size_t n, st_pw_msg *m, procd_error *err)
{
        memset(m, 0, sizeof *m);
        size_t total = 0;
        procd_status s = st_pw_message_size(b, n, &total, err);
        if (s != PROCD_OK)
                return s;
        if (total != n)
                return malformed(err, "length does not match the header");
        m->big_endian = b[0] == 'B';
        m->type = b[1];
        if (m->type < 1 || m->type > 4)
                return malformed(err, "unknown message type");
        m->serial = get32(b + 8, m->big_endian);
        if (m->serial == 0)
                return malformed(err, "serial 0");
        size_t fields_end = 16 + get32(b + 12, m->big_endian);
        pw_in r = { b, fields_end, 16, m->big_endian };
        while (r.pos < fields_end) {
                s = parse_field(&r, m, err);
                if (s != PROCD_OK)
                        return s;
        }
        size_t body = PW_ALIGN(fields_end, 8);
        for (size_t i = fields_end; i < body; i++)
                if (b[i])
                        return malformed(err, "non-zero header padding");
        m->body = b + body;
        m->body_len = n - body;
        if ((m->type == 2 || m->type == 3) && m->reply_serial == 0)
                return malformed(err, "reply without a reply serial");
        if (m->type == 3 && !m->error_name[0])
                return malformed(err, "error without a name");
        if (m->body_len && !m->signature[0])
                return malformed(err, "body without a signature");
        return PROCD_OK;
}

void st_pw_error_text(const st_pw_msg *m, char *buf, size_t size)
{
        pw_in r = { m->body, m->body_len, 0, m->big_endian };
        const char *s;
        size_t len;
        if (m->signature[0] == 's' && in_text(&r, false, &s, &len))
                snprintf(buf, size, "%.*s", (int) len, s);
        else
                snprintf(buf, size, "%s", m->error_name);
}

procd_status st_pw_dump_first(const st_pw_msg *m, size_t *n, pid_t *root, char *state, size_t size, procd_error *err)
{
        *n = 0;
        if (strcmp(m->signature, "a(itiissais)") != 0)
                return malformed(err, "Dump reply of another signature");
        pw_in r = { m->body, m->body_len, 0, m->big_endian };
        uint32_t alen;
        if (!in_u32(&r, &alen) || !in_align(&r, 8) || alen > r.n - r.pos)
                return malformed(err, "Dump array length");
        size_t end = r.pos + alen;
        r.n = end; /* nothing of the array is read past its end */
        for (size_t i = 0; r.pos < end; i++) {
                uint32_t pid, w, parent, mlen;
                uint64_t start;
                const char *s;
                size_t len;
                if (!in_align(&r, 8) || !in_u32(&r, &pid) || !in_fixed(&r, 8, &start) || !in_u32(&r, &w) ||
                    !in_u32(&r, &parent) || !in_text(&r, false, &s, &len) || !in_text(&r, false, &s, &len) ||
                    !in_u32(&r, &mlen) || mlen % 4 || mlen > r.n - r.pos)
                        return malformed(err, "Dump family record");
                r.pos += mlen;
                if (!in_text(&r, false, &s, &len))
                        return malformed(err, "Dump family state");
                if (i == 0) {
                        *root = (pid_t) pid;
                        snprintf(state, size, "%.*s", (int) len, s);
                }
                (*n)++;
        }
        return PROCD_OK;
}

/* ---- the connection ---- */

struct st_pw {
        int fd;
        uint32_t serial;
        bool auth_sent, authed;
        char *path;
        uint8_t *in; /* bytes read and not yet consumed */
        size_t in_n, in_cap;
        size_t kept; /* the last reply's bytes at the head of in, until the next call */
        char last_error[256];
};

static int open_socket(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        struct timeval tv = { PW_CALL_TIMEOUT_MS / 1000, 0 };
        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
            connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                int e = errno;
                close(fd);
                return -e;
        }
        return fd;
}

procd_status st_pw_connect(const char *path, st_pw **out, procd_error *err)
{
        *out = NULL;
        if (!path)
                path = PROCD_DEFAULT_SOCKET;
        int fd = open_socket(path);
        if (fd < 0)
                return procd_error_set(err, PROCD_E_TRANSPORT, "cannot connect to procd at %s: %s", path, strerror(-fd));
        st_pw *c = calloc(1, sizeof *c);
        if (!c || !(c->path = strdup(path))) {
                free(c);
                close(fd);
                return procd_error_set(err, PROCD_E_TRANSPORT, "out of memory");
        }
        c->fd = fd;
        *out = c;
        return PROCD_OK;
}

void st_pw_close(st_pw *c)
{
        if (!c)
                return;
        if (c->fd >= 0)
                close(c->fd);
        free(c->in);
        free(c->path);
        free(c);
}

int st_pw_fd(const st_pw *c) { return c ? c->fd : -1; }

const char *st_pw_last_error(const st_pw *c) { return c ? c->last_error : ""; }

static long now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A connection lost: -EPIPE (the caller may connect again). */
static int send_all(int fd, const uint8_t *p, size_t n)
{
        while (n) {
                ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return errno == ECONNRESET ? -EPIPE : -errno;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

/* Read more bytes into c->in: 0, -EPIPE at end of stream or reset, -ETIMEDOUT (no byte
 * for PW_CALL_TIMEOUT_MS, the socket's receive timeout), -ENOMEM, -errno. */
static int read_more(st_pw *c)
{
        if (c->in_cap - c->in_n < 4096) {
                size_t cap = c->in_cap ? c->in_cap * 2 : 16384;
                if (cap > ST_PW_MAX_MESSAGE + 4096)
                        return -ENOMEM;
                uint8_t *p = realloc(c->in, cap);
                if (!p)
                        return -ENOMEM;
                c->in = p;
                c->in_cap = cap;
        }
        for (;;) {
                ssize_t k = read(c->fd, c->in + c->in_n, c->in_cap - c->in_n);
                if (k > 0) {
                        c->in_n += (size_t) k;
                        return 0;
                }
                if (k == 0 || errno == ECONNRESET)
                        return -EPIPE;
                if (errno == EINTR)
                        continue;
                return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno; /* SO_RCVTIMEO */
        }
}

static void consume(st_pw *c, size_t n)
{
        if (n == 0) /* c->in is still NULL before the first read */
                return;
        memmove(c->in, c->in + n, c->in_n - n);
        c->in_n -= n;
}

/* The server's answer to the authentication: "OK <guid>\r\n". */
static procd_status read_auth(st_pw *c, procd_error *err)
{
        for (;;) {
                uint8_t *nl = c->in_n ? memchr(c->in, '\n', c->in_n) : NULL;
                if (nl) {
                        size_t len = (size_t) (nl - c->in) + 1;
                        bool ok = len >= 5 && memcmp(c->in, "OK ", 3) == 0 && nl[-1] == '\r';
                        if (!ok)
                                return procd_error_set(err, PROCD_E_TRANSPORT, "procd at %s: authentication failed (%.*s)",
                                                       c->path, (int) (len > 80 ? 80 : len - 1), (const char *) c->in);
                        consume(c, len);
                        c->authed = true;
                        return PROCD_OK;
                }
                if (c->in_n > 512)
                        return procd_error_set(err, PROCD_E_TRANSPORT, "procd at %s: authentication: no line", c->path);
                int k = read_more(c);
                if (k < 0)
                        return procd_error_set(err, PROCD_E_TRANSPORT, "procd at %s: authentication: %s", c->path,
                                               strerror(-k));
        }
}

/* Read until the reply to serial; *used: its length in c->in (consumed by the next read). */
static int read_reply(st_pw *c, uint32_t serial, st_pw_msg *m, size_t *used, procd_error *err)
{
        if (!c->authed && read_auth(c, err) != PROCD_OK)
                return -EPROTO;
        for (;;) {
                size_t total = 0;
                if (c->in_n >= 16) {
                        if (st_pw_message_size(c->in, c->in_n, &total, err) != PROCD_OK)
                                return -EPROTO;
                        if (c->in_n >= total) {
                                if (st_pw_parse(c->in, total, m, err) != PROCD_OK)
                                        return -EPROTO;
                                if ((m->type == 2 || m->type == 3) && m->reply_serial == serial) {
                                        *used = total;
                                        return 0;
                                }
                                consume(c, total); /* a signal, or a reply to a call given up on */
                                continue;
                        }
                }
                int k = read_more(c);
                if (k < 0) {
                        procd_error_set(err, PROCD_E_TRANSPORT, "procd at %s: %s", c->path,
                                        k == -EPIPE ? "connection closed" : strerror(-k));
                        return k;
                }
        }
}

/* The auth prefix of a connection's first write, "" after. */
static size_t auth_prefix(st_pw *c, char *buf, size_t size)
{
        if (c->auth_sent)
                return 0;
        char uid[16];
        int ul = snprintf(uid, sizeof uid, "%u", (unsigned) getuid());
        size_t n = 0;
        n += (size_t) snprintf(buf + n, size - n, "%cAUTH EXTERNAL ", 0);
        for (int i = 0; i < ul; i++)
                n += (size_t) snprintf(buf + n, size - n, "%02x", (unsigned char) uid[i]);
        n += (size_t) snprintf(buf + n, size - n, "\r\nBEGIN\r\n");
        c->auth_sent = true;
        return n;
}

/* Connect again (procd restarted): up to PW_RECONNECT_MS. */
static bool reconnect(st_pw *c)
{
        long deadline = now_ms() + PW_RECONNECT_MS;
        for (;;) {
                int fd = open_socket(c->path);
                if (fd >= 0) {
                        close(c->fd);
                        c->fd = fd;
                        c->auth_sent = c->authed = false;
                        c->in_n = c->kept = 0;
                        return true;
                }
                if (now_ms() >= deadline)
                        return false;
                struct timespec ts = { 0, PW_RECONNECT_PAUSE_MS * 1000000L };
                nanosleep(&ts, NULL);
        }
}

/* Send one call (after the authentication when due): 0, or -errno (-EINVAL: refused, err
 * says why, nothing sent). */
static int send_call(st_pw *c, const char *method, const st_pw_arg *args, size_t n, uint32_t *serial,
                     procd_error *err)
{
        uint8_t buf[PW_AUTH_MAX + PW_CALL_MAX];
        size_t len = auth_prefix(c, (char *) buf, PW_AUTH_MAX), l = 0;
        c->serial = c->serial + 1 ? c->serial + 1 : 1;
        *serial = c->serial;
        if (st_pw_marshal_call(*serial, method, args, n, buf + len, PW_CALL_MAX, &l, err) < 0)
                return -EINVAL;
        return send_all(c->fd, buf, len + l);
}

/* One call, its reply read.  A connection lost before the reply: connect again once and
 * send it again (a registration answered AlreadyRegistered then went through the first
 * time).  reply: kept in c->in until the next call.  Calls are one at a time: procd answers
 * KillFamily, SuspendFamily and ContinueFamily once done, after calls sent later. */
procd_status st_pw_call(st_pw *c, const char *method, const st_pw_arg *args, size_t n, st_pw_msg *reply,
                        procd_error *err)
{
        if (!c)
                return procd_error_set(err, PROCD_E_TRANSPORT, "not connected");
        consume(c, c->kept);
        c->kept = 0;
        c->last_error[0] = '\0';
        for (bool retried = false;; retried = true) {
                uint32_t serial = 0;
                procd_error rerr = { 0 };
                st_pw_msg m, *mp = reply ? reply : &m;
                size_t used = 0;
                int k = send_call(c, method, args, n, &serial, err);
                if (k == -EINVAL)
                        return err && err->status != PROCD_OK ? err->status : PROCD_E_BAD_ARGUMENT;
                if (k == 0)
                        k = read_reply(c, serial, mp, &used, &rerr);
                if (k == 0) {
                        if (reply)
                                c->kept = used;
                        else
                                consume(c, used);
                        if (mp->type != 3)
                                return PROCD_OK;
                        char text[sizeof rerr.msg];
                        st_pw_error_text(mp, text, sizeof text);
                        snprintf(c->last_error, sizeof c->last_error, "%s", mp->error_name);
                        procd_status s = procd_status_from_dbus_name(mp->error_name);
                        if (retried && s == PROCD_E_ALREADY_REGISTERED && strncmp(method, "Register", 8) == 0)
                                return PROCD_OK;
                        return procd_error_set(err, s, "%s", text);
                }
                if (k != -EPIPE || retried || !reconnect(c))
                        return procd_error_set(err, PROCD_E_TRANSPORT, "%s: %s", method,
                                               rerr.msg[0] ? rerr.msg : strerror(-k));
        }
}
