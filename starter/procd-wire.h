/* procd-wire.h - procd-starter's own D-Bus peer client for procd's socket, without libdbus.
 *
 * procd's socket is a peer-to-peer D-Bus server (no bus daemon): a connection is an
 * AF_UNIX stream, SASL EXTERNAL with the caller's uid, then D-Bus messages.  The starter
 * makes a handful of calls with flat arguments (int32, uint32, string, byte array) and reads
 * a METHOD_RETURN or an ERROR back; this is all of it, so the starter never loads libdbus and
 * what that pulls in for a job procd tracks (dbus-dlopen.c keeps libdbus for the systemd
 * scope path).  Messages are sent little-endian; replies of either byte order are read, with
 * every length and offset checked against the message: anything malformed is an error that
 * says what was wrong (PROCD_E_TRANSPORT), never a read past the end.
 *
 * The first call carries the authentication in the same write ("\0AUTH EXTERNAL <hex uid>",
 * "BEGIN", the call); its reply is read after the server's "OK <guid>" line.  A connection
 * found closed during a call (procd restarted) is made again for up to 10 s and the call
 * sent once more, as libprocd-client does. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procd/wire.h"

/* One argument of a call: 'i' int32, 'u' uint32, 's' string (UTF-8, no NUL inside), 'y' an
 * array of bytes (signature "ay"; bytes + len). */
typedef struct st_pw_arg {
        char type;
        int32_t i;
        uint32_t u;
        const char *s;
        const void *bytes;
        size_t len;
} st_pw_arg;

#define ST_PW_I(v) ((st_pw_arg){ .type = 'i', .i = (v) })
#define ST_PW_U(v) ((st_pw_arg){ .type = 'u', .u = (v) })
#define ST_PW_S(v) ((st_pw_arg){ .type = 's', .s = (v) })
#define ST_PW_AY(p, n) ((st_pw_arg){ .type = 'y', .bytes = (p), .len = (n) })

/* A message read back: what the starter looks at.  body points into the buffer parsed. */
typedef struct st_pw_msg {
        uint8_t type;            /* 1 call, 2 return, 3 error, 4 signal */
        bool big_endian;
        uint32_t serial;
        uint32_t reply_serial;   /* 0: none */
        char error_name[256];    /* ERROR: its name */
        char signature[256];     /* the body's ("" when none) */
        const uint8_t *body;
        size_t body_len;
} st_pw_msg;

/* Largest message read (a Dump of a family with many members stays far below). */
#define ST_PW_MAX_MESSAGE (16u << 20)

/* Marshal a METHOD_CALL to procd's object and interface, little-endian, into buf (cap
 * bytes): 0 and *len, or -EINVAL (a bad argument: the reason in err) / -E2BIG. */
int st_pw_marshal_call(uint32_t serial, const char *method, const st_pw_arg *args, size_t n, uint8_t *buf, size_t cap,
                       size_t *len, procd_error *err);
/* From a message's first 16 bytes: its whole length.  PROCD_E_TRANSPORT when malformed. */
procd_status st_pw_message_size(const uint8_t *b, size_t n, size_t *total, procd_error *err);
/* Parse one whole message of n bytes (n from st_pw_message_size). */
procd_status st_pw_parse(const uint8_t *b, size_t n, st_pw_msg *m, procd_error *err);
/* An ERROR's text: the body's first string when the body starts with one, else the name. */
void st_pw_error_text(const st_pw_msg *m, char *buf, size_t size);
/* A Dump reply (a(itiissais)): how many families, and the first one's root pid and state. */
procd_status st_pw_dump_first(const st_pw_msg *m, size_t *n, pid_t *root, char *state, size_t size, procd_error *err);

typedef struct st_pw st_pw;

/* Open a connection (NULL path: PROCD_DEFAULT_SOCKET); PROCD_E_TRANSPORT when nobody
 * listens.  The authentication goes with the first call. */
procd_status st_pw_connect(const char *path, st_pw **out, procd_error *err);
void st_pw_close(st_pw *c);
int st_pw_fd(const st_pw *c); /* -1 for NULL */
/* Call method; PROCD_OK with *reply (NULL: not wanted) valid until the next call, or the
 * status the error name maps to (procd_status_from_dbus_name) with its text in err.  The
 * error's name stays readable with st_pw_last_error (empty after a success). */
procd_status st_pw_call(st_pw *c, const char *method, const st_pw_arg *args, size_t n, st_pw_msg *reply,
                        procd_error *err);
const char *st_pw_last_error(const st_pw *c);

