/* state.c - the state file: format, parse, atomic write, setting a bad file aside. */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trackers/util.h"

/* Keep a parse from being fed a runaway file. */
#define STATE_MAX_BYTES (256u << 20)

void pd_state_family_clear(pd_state_family *f)
{
        free(f->cgroup);
        free(f->env_marker);
        free(f->login);
        free(f->no_cgroup_reason);
        free(f->members);
        free(f->kept);
        memset(f, 0, sizeof *f);
}

void pd_state_clear(pd_state *s)
{
        for (size_t i = 0; i < s->n; i++)
                pd_state_family_clear(&s->fams[i]);
        free(s->fams);
        s->fams = NULL;
        s->n = 0;
        s->version = 0;
}

/* A family line is written in place (the save's hot path: no printf, no call per field):
 * room for its longest form reserved first, then each field copied. */

/* Room for everything of a line but its strings, members and kept: "family", 16 numeric
 * "\tkey=" (keys under 21 bytes) of up to 20 digits, 6 string keys, the newline. */
#define LINE_FIXED_MAX (6 + 16 * (2 + 21 + 20) + 6 * (2 + 10) + 1)
#define MEMBER_MAX (1 + 11 + 1 + 20) /* ",-2147483648:18446744073709551615" */

static char *w_bytes(char *w, const char *s, size_t n)
{
        memcpy(w, s, n);
        return w + n;
}

#define W_KEY(w, key) w_bytes(w, "\t" key "=", sizeof("\t" key "=") - 1)
#define W_U64(w, key, v) tr_put_u64(W_KEY(w, key), (v))

/* Whether g_strescape would change v: a control byte, DEL or above, a backslash or a quote. */
static bool needs_escape(const char *v)
{
        for (const unsigned char *p = (const unsigned char *) v; *p; p++)
                if (*p < 0x20 || *p >= 0x7f || *p == '\\' || *p == '"')
                        return true;
        return false;
}

/* A string value as written: v itself, or g_strescape's form of it (in *owned). */
typedef struct w_str {
        const char *text;
        size_t len;
        char *owned;
} w_str;

static size_t w_str_prepare(w_str *ws, const char *v)
{
        ws->owned = v && needs_escape(v) ? g_strescape(v, NULL) : NULL;
        ws->text = ws->owned ? ws->owned : v;
        ws->len = ws->text ? strlen(ws->text) : 0;
        return ws->len;
}

static char *w_str_put(char *w, const char *key_eq, size_t key_len, const w_str *ws)
{
        if (!ws->text)
                return w;
        return w_bytes(w_bytes(w, key_eq, key_len), ws->text, ws->len);
}

#define W_STR(w, key, ws) w_str_put(w, "\t" key "=", sizeof("\t" key "=") - 1, ws)

/* pid:start,pid:start... */
static char *w_idents(char *w, const pd_state_member *m, size_t n)
{
        for (size_t j = 0; j < n; j++) {
                pid_t pid = m[j].pid;
                if (j)
                        *w++ = ',';
                if (pid < 0) /* never written (pids are > 1); as %d prints it */
                        *w++ = '-';
                w = tr_put_u64(w, pid < 0 ? (uint64_t) -(int64_t) pid : (uint64_t) pid);
                *w++ = ':';
                w = tr_put_u64(w, m[j].start_ticks);
        }
        return w;
}

static void put_dec(GString *out, uint64_t v)
{
        char buf[20];
        g_string_append_len(out, buf, tr_put_u64(buf, v) - buf);
}

void pd_state_format_header(GString *out)
{
        g_string_append(out, PD_STATE_MAGIC "\t");
        put_dec(out, PD_STATE_VERSION);
        g_string_append_c(out, '\n');
}

void pd_state_format_family(const pd_state_family *f, GString *out)
{
        w_str cgroup, no_cgroup, env, login;
        size_t room = LINE_FIXED_MAX + (f->n_members + f->n_kept) * MEMBER_MAX + w_str_prepare(&cgroup, f->cgroup) +
                      w_str_prepare(&no_cgroup, f->no_cgroup_reason) + w_str_prepare(&env, f->env_marker) +
                      w_str_prepare(&login, f->login);
        size_t at = out->len;
        g_string_set_size(out, at + room);
        char *w = w_bytes(out->str + at, "family", 6);
        w = W_U64(w, "root", (uint64_t) f->root_pid);
        w = W_U64(w, "start", f->root_start_ticks);
        w = W_U64(w, "parent", (uint64_t) f->parent_root_pid);
        w = W_U64(w, "uid", f->root_uid);
        if (f->watcher_pid > 0) {
                w = W_U64(w, "watcher", (uint64_t) f->watcher_pid);
                w = W_U64(w, "watcher_start", f->watcher_start_ticks);
        }
        w = W_U64(w, "interval", f->interval_sec);
        w = W_STR(w, "cgroup", &cgroup);
        if (f->cgroup && f->cgroup_origin)
                w = W_U64(w, "cgroup_origin", f->cgroup_origin);
        w = W_STR(w, "no_cgroup", &no_cgroup);
        w = W_STR(w, "env", &env);
        if (f->login) {
                w = W_STR(w, "login", &login);
                w = W_U64(w, "login_uid", f->login_uid);
        }
        if (f->by_gid) {
                w = W_U64(w, "gid", f->gid);
                w = W_U64(w, "gid_allocated", f->gid_allocated);
        }
        if (f->kill_on_watcher_exit)
                w = W_U64(w, "kill_on_watcher_exit", 1);
        if (f->frozen)
                w = W_U64(w, "frozen", 1);
        if (f->killing)
                w = W_U64(w, "killing", 1);
        if (f->suspending)
                w = W_U64(w, "suspending", 1);
        if (f->killed)
                w = W_U64(w, "killed", 1);
        if (f->moved_in)
                w = W_U64(w, "moved_in", 1);
        if (f->moved_in && f->moved_exe_known) {
                w = W_U64(w, "moved_exe_dev", f->moved_exe_dev);
                w = W_U64(w, "moved_exe_ino", f->moved_exe_ino);
        }
        if (f->n_members)
                w = w_idents(W_KEY(w, "members"), f->members, f->n_members);
        if (f->n_kept)
                w = w_idents(W_KEY(w, "kept"), f->kept, f->n_kept);
        *w++ = '\n';
        g_string_truncate(out, (gsize) (w - out->str));
        g_free(cgroup.owned);
        g_free(no_cgroup.owned);
        g_free(env.owned);
        g_free(login.owned);
}

void pd_state_format_end(size_t n, GString *out)
{
        g_string_append(out, "end\t");
        put_dec(out, n);
        g_string_append_c(out, '\n');
}

void pd_state_format(const pd_state *s, GString *out)
{
        pd_state_format_header(out);
        for (size_t i = 0; i < s->n; i++)
                pd_state_format_family(&s->fams[i], out);
        pd_state_format_end(s->n, out);
}

static int parse_u64_max(const char *v, uint64_t max, uint64_t *out)
{
        uint64_t x;
        if (tr_parse_u64(v, &x) < 0 || x > max)
                return -EINVAL;
        *out = x;
        return 0;
}

/* pid:start,pid:start... into *out (given only once per line), *n. */
static int parse_idents(const char *v, pd_state_member **out, size_t *n)
{
        if (*out)
                return -EINVAL;
        size_t cap = 1;
        for (const char *p = v; *p; p++)
                cap += *p == ',';
        *out = calloc(cap, sizeof **out);
        if (!*out)
                return -ENOMEM;
        g_auto(GStrv) items = g_strsplit(v, ",", -1);
        for (size_t i = 0; items[i]; i++) {
                char *colon = strchr(items[i], ':');
                uint64_t pid, start;
                if (!colon)
                        return -EINVAL;
                *colon = '\0';
                if (parse_u64_max(items[i], INT32_MAX, &pid) < 0 || pid < 2 || parse_u64_max(colon + 1, UINT64_MAX, &start) < 0)
                        return -EINVAL;
                (*out)[(*n)++] = (pd_state_member) { (pid_t) pid, start };
        }
        return 0;
}

/* Whether every backslash of raw starts a whole escape (a cut value ends in one). */
static bool escapes_whole(const char *raw)
{
        for (const char *p = raw; *p; p++) {
                if (*p != '\\')
                        continue;
                p++;
                if (!*p)
                        return false;
                if (*p >= '0' && *p <= '7') /* up to three octal digits */
                        for (int i = 0; i < 2 && p[1] >= '0' && p[1] <= '7'; i++)
                                p++;
        }
        return true;
}

/* One "key=value" of a family line of a file of the given version into f; unknown keys
 * (those of a later version included) are ignored. */
static int parse_field(unsigned version, const char *key, const char *raw, pd_state_family *f, unsigned *seen)
{
        static const char *const numeric_keys[] = { "root", "start", "parent", "uid", "watcher", "watcher_start",
                                                    "interval", "login_uid", "gid", "gid_allocated",
                                                    "cgroup_origin", "kill_on_watcher_exit", "frozen", "killing",
                                                    "suspending", "killed", "moved_in", "moved_exe_dev",
                                                    "moved_exe_ino" };
        static const char *const string_keys[] = { "cgroup", "env", "login", "no_cgroup", "members", "kept" };
        bool numeric = false, known = false;
        for (size_t i = 0; i < G_N_ELEMENTS(numeric_keys) && !known; i++)
                known = numeric = strcmp(key, numeric_keys[i]) == 0;
        for (size_t i = 0; i < G_N_ELEMENTS(string_keys) && !known; i++)
                known = strcmp(key, string_keys[i]) == 0;
        if (known && version < 2 && (strcmp(key, "killed") == 0 || strcmp(key, "kept") == 0))
                known = false; /* version 2's: a version-1 file restores as it always did */
        if (!known)
                return 0; /* a key added later within this version */
        uint64_t v = 0;
        if (numeric && parse_u64_max(raw, UINT64_MAX, &v) < 0)
                return -EINVAL;
#define PID_OK(x) ((x) <= INT32_MAX)
        if (strcmp(key, "root") == 0) {
                if (v < 2 || !PID_OK(v))
                        return -EINVAL;
                f->root_pid = (pid_t) v;
                *seen |= 1;
        } else if (strcmp(key, "start") == 0) {
                f->root_start_ticks = v;
                *seen |= 2;
        } else if (strcmp(key, "parent") == 0) {
                if (!PID_OK(v) || v == 1)
                        return -EINVAL;
                f->parent_root_pid = (pid_t) v;
        } else if (strcmp(key, "uid") == 0) {
                if (v > UINT32_MAX)
                        return -EINVAL;
                f->root_uid = (uid_t) v;
        } else if (strcmp(key, "watcher") == 0) {
                if (!PID_OK(v))
                        return -EINVAL;
                f->watcher_pid = (pid_t) v;
        } else if (strcmp(key, "watcher_start") == 0) {
                f->watcher_start_ticks = v;
        } else if (strcmp(key, "interval") == 0) {
                if (v == 0 || v > UINT32_MAX)
                        return -EINVAL;
                f->interval_sec = (uint32_t) v;
        } else if (strcmp(key, "login_uid") == 0) {
                if (v > UINT32_MAX)
                        return -EINVAL;
                f->login_uid = (uid_t) v;
        } else if (strcmp(key, "gid") == 0) {
                if (v == 0 || v >= UINT32_MAX)
                        return -EINVAL;
                f->by_gid = true;
                f->gid = (gid_t) v;
        } else if (strcmp(key, "gid_allocated") == 0) {
                f->gid_allocated = v != 0;
        } else if (strcmp(key, "cgroup_origin") == 0) {
                if (v > 3)
                        return -EINVAL;
                f->cgroup_origin = (unsigned) v;
        } else if (strcmp(key, "kill_on_watcher_exit") == 0) {
                f->kill_on_watcher_exit = v != 0;
        } else if (strcmp(key, "frozen") == 0) {
                f->frozen = v != 0;
        } else if (strcmp(key, "killing") == 0) {
                f->killing = v != 0;
        } else if (strcmp(key, "suspending") == 0) {
                f->suspending = v != 0;
        } else if (strcmp(key, "killed") == 0) {
                f->killed = v != 0;
        } else if (strcmp(key, "moved_in") == 0) {
                f->moved_in = v != 0;
        } else if (strcmp(key, "moved_exe_dev") == 0) {
                f->moved_exe_dev = v;
                *seen |= 4;
        } else if (strcmp(key, "moved_exe_ino") == 0) {
                f->moved_exe_ino = v;
                *seen |= 8;
        } else if (strcmp(key, "members") == 0) {
                return parse_idents(raw, &f->members, &f->n_members);
        } else if (strcmp(key, "kept") == 0) {
                return parse_idents(raw, &f->kept, &f->n_kept);
        } else if (!numeric) {
                char **dst = strcmp(key, "cgroup") == 0      ? &f->cgroup
                             : strcmp(key, "env") == 0       ? &f->env_marker
                             : strcmp(key, "no_cgroup") == 0 ? &f->no_cgroup_reason
                                                             : &f->login;
                if (*dst || !escapes_whole(raw))
                        return -EINVAL;
                char *s = g_strcompress(raw);
                *dst = strdup(s);
                g_free(s);
                if (!*dst)
                        return -ENOMEM;
                if (!**dst)
                        return -EINVAL;
        }
#undef PID_OK
        return 0;
}

static int parse_family(unsigned version, char *line, pd_state_family *f)
{
        unsigned seen = 0;
        char *save = NULL;
        for (char *tok = strtok_r(line, "\t", &save); tok; tok = strtok_r(NULL, "\t", &save)) {
                char *eq = strchr(tok, '=');
                if (!eq)
                        return -EINVAL;
                *eq = '\0';
                int r = parse_field(version, tok, eq + 1, f, &seen);
                if (r < 0)
                        return r;
        }
        f->moved_exe_known = (seen & 12) == 12; /* both halves, or neither counts */
        if ((seen & 3) != 3 || f->interval_sec == 0 || (f->watcher_pid > 0 && f->watcher_start_ticks == 0))
                return -EINVAL;
        /* a cgroup path, or (origin 3) the placed cgroups as /proc/PID/cgroup lines */
        if (f->cgroup && (f->cgroup_origin == 3 ? !strstr(f->cgroup, ":/") : f->cgroup[0] != '/'))
                return -EINVAL;
        return 0;
}

int pd_state_parse(const char *buf, size_t len, pd_state *out, tr_error *err)
{
        memset(out, 0, sizeof *out);
        if (memchr(buf, '\0', len))
                return tr_error_set(err, EBADMSG, "state file holds a NUL byte");
        g_autofree char *text = g_strndup(buf, len);
        char *save = NULL;
        char *line = strtok_r(text, "\n", &save);
        size_t magic_len = strlen(PD_STATE_MAGIC);
        if (!line || strncmp(line, PD_STATE_MAGIC, magic_len) != 0 || line[magic_len] != '\t')
                return tr_error_set(err, EPROTO, "not a procd state file (no \"%s\" header)", PD_STATE_MAGIC);
        uint64_t version;
        if (tr_parse_u64(line + magic_len + 1, &version) < 0)
                return tr_error_set(err, EBADMSG, "state file: bad version line");
        if (version < PD_STATE_VERSION_MIN || version > PD_STATE_VERSION)
                return tr_error_set(err, EPROTONOSUPPORT, "state file version %" PRIu64 " (this procd reads %u to %u)",
                                    version, PD_STATE_VERSION_MIN, PD_STATE_VERSION);
        out->version = (unsigned) version;
        size_t cap = 0, lineno = 1;
        bool ended = false;
        g_autoptr(GHashTable) roots = g_hash_table_new(g_direct_hash, g_direct_equal);
        int r = 0;
        while ((line = strtok_r(NULL, "\n", &save))) {
                lineno++;
                if (ended) {
                        r = tr_error_set(err, EBADMSG, "state file line %zu: data after the end line", lineno);
                        break;
                }
                if (strncmp(line, "end\t", 4) == 0) {
                        uint64_t n;
                        if (tr_parse_u64(line + 4, &n) < 0 || n != out->n) {
                                r = tr_error_set(err, EBADMSG, "state file line %zu: end says %s families, %zu read",
                                                 lineno, line + 4, out->n);
                                break;
                        }
                        ended = true;
                        continue;
                }
                if (strncmp(line, "family\t", 7) != 0) {
                        r = tr_error_set(err, EBADMSG, "state file line %zu: unknown record", lineno);
                        break;
                }
                if (out->n == cap) {
                        size_t ncap = cap ? cap * 2 : 16;
                        pd_state_family *nf = realloc(out->fams, ncap * sizeof *nf);
                        if (!nf) {
                                r = tr_error_set(err, ENOMEM, "state file: out of memory");
                                break;
                        }
                        out->fams = nf;
                        cap = ncap;
                }
                pd_state_family *f = &out->fams[out->n++];
                memset(f, 0, sizeof *f);
                int k = parse_family(out->version, line + 7, f);
                if (k == -ENOMEM) {
                        r = tr_error_set(err, ENOMEM, "state file: out of memory");
                        break;
                }
                if (k < 0) {
                        r = tr_error_set(err, EBADMSG, "state file line %zu: bad family record", lineno);
                        break;
                }
                if (!g_hash_table_add(roots, GINT_TO_POINTER(f->root_pid))) {
                        r = tr_error_set(err, EBADMSG, "state file line %zu: family %d twice", lineno,
                                         (int) f->root_pid);
                        break;
                }
        }
        if (r == 0 && !ended)
                r = tr_error_set(err, EBADMSG, "state file truncated (no end line after %zu families)", out->n);
        if (r < 0)
                pd_state_clear(out);
        return r;
}

int pd_state_write(const char *path, const pd_state *s, tr_error *err)
{
        g_autoptr(GString) text = g_string_sized_new(256 + s->n * 160);
        pd_state_format(s, text);
        return pd_state_write_text(path, text->str, text->len, err);
}

int pd_state_write_text(const char *path, const char *text, size_t len, tr_error *err)
{
        char tmp[4096];
        if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int) sizeof tmp)
                return tr_error_set(err, ENAMETOOLONG, "state file path too long");
        _cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return tr_error_setx(err, errno, "creating %s", tmp);
        for (size_t off = 0; off < len;) {
                ssize_t w = write(fd, text + off, len - off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        int e = errno;
                        unlink(tmp);
                        return tr_error_setx(err, e, "writing %s", tmp);
                }
                off += (size_t) w;
        }
        if (fsync(fd) < 0) {
                int e = errno;
                unlink(tmp);
                return tr_error_setx(err, e, "fsync %s", tmp);
        }
        if (rename(tmp, path) < 0) {
                int e = errno;
                unlink(tmp);
                return tr_error_setx(err, e, "renaming %s to %s", tmp, path);
        }
        g_autofree char *dir = g_path_get_dirname(path);
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd) < 0)
                return tr_error_setx(err, errno, "fsync of directory %s", dir);
        return 0;
}

int pd_state_read(const char *path, pd_state *out, tr_error *err)
{
        memset(out, 0, sizeof *out);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = tr_read_file_alloc_at(AT_FDCWD, path, &buf, &len, err);
        if (r < 0)
                return r;
        if (len > STATE_MAX_BYTES)
                return tr_error_set(err, EBADMSG, "%s: larger than %u bytes", path, STATE_MAX_BYTES);
        r = pd_state_parse(buf, len, out, err);
        if (r < 0)
                tr_error_prefix(err, "%s", path);
        return r;
}

const char *pd_state_error_kind(int r)
{
        return r == -EPROTO ? "foreign" : r == -EPROTONOSUPPORT ? "version" : "corrupt";
}

int pd_state_set_aside(const char *path, const char *why, char *newpath, size_t size, tr_error *err)
{
        if (snprintf(newpath, size, "%s.bad-%s-%lld", path, why, (long long) time(NULL)) >= (int) size)
                return tr_error_set(err, ENAMETOOLONG, "state file path too long");
        if (rename(path, newpath) < 0)
                return tr_error_setx(err, errno, "renaming %s to %s", path, newpath);
        return 0;
}
