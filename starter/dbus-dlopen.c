/* dbus-dlopen.c - libdbus-1 loaded when the starter first calls it, not at every start.
 *
 * Only procd-starter links this file (not the procd_starter library the tests link): it
 * defines every libdbus function the starter's code can reach (the systemd strategy,
 * jobcg-systemd.c: 31 functions; procd is reached without libdbus, procd-wire.c) as a
 * trampoline into libdbus-1.so.3, opened on the first call.  The binary then carries no
 * DT_NEEDED entry for libdbus-1 (linked --as-needed: a function missing here would add one,
 * which test_starter sees), so a job run outside a systemd scope never maps libdbus and
 * what it pulls in (libsystemd, libgcrypt, liblzma, libzstd, liblz4, libcap, libgpg-error):
 * ~0.55 ms of dynamic loading per start on the issue-20 host.  The table is the one mutable
 * global: loaded once, read after.  Whoever needs D-Bus and wants a clean error calls
 * st_dbus_load() first; a trampoline that finds no library says why and exits 125. */
#include "dbus-dlopen.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <dbus/dbus.h>

#include "report.h"

#define ST_LIBDBUS "libdbus-1.so.3"

/* ret, name, (parameters), (arguments); V for void functions */
#define ST_DBUS_FUNCTIONS(R, V) \
        V(void, dbus_bus_add_match, (DBusConnection *connection, const char *rule, DBusError *error), (connection, rule, error)) \
        R(dbus_bool_t, dbus_bus_register, (DBusConnection *connection, DBusError *error), (connection, error)) \
        V(void, dbus_connection_close, (DBusConnection *connection), (connection)) \
        V(void, dbus_connection_flush, (DBusConnection *connection), (connection)) \
        R(dbus_bool_t, dbus_connection_get_is_authenticated, (DBusConnection *connection), (connection)) \
        R(DBusConnection *, dbus_connection_open_private, (const char *address, DBusError *error), (address, error)) \
        R(DBusMessage *, dbus_connection_pop_message, (DBusConnection *connection), (connection)) \
        R(dbus_bool_t, dbus_connection_read_write, (DBusConnection *connection, int timeout_milliseconds), (connection, timeout_milliseconds)) \
        R(dbus_bool_t, dbus_connection_send, (DBusConnection *connection, DBusMessage *message, dbus_uint32_t *client_serial), (connection, message, client_serial)) \
        V(void, dbus_connection_set_exit_on_disconnect, (DBusConnection *connection, dbus_bool_t exit_on_disconnect), (connection, exit_on_disconnect)) \
        V(void, dbus_connection_unref, (DBusConnection *connection), (connection)) \
        V(void, dbus_error_free, (DBusError *error), (error)) \
        V(void, dbus_error_init, (DBusError *error), (error)) \
        R(dbus_bool_t, dbus_message_append_args_valist, (DBusMessage *message, int first_arg_type, va_list var_args), (message, first_arg_type, var_args)) \
        R(dbus_bool_t, dbus_message_get_args_valist, (DBusMessage *message, DBusError *error, int first_arg_type, va_list var_args), (message, error, first_arg_type, var_args)) \
        R(const char *, dbus_message_get_error_name, (DBusMessage *message), (message)) \
        R(const char *, dbus_message_get_member, (DBusMessage *message), (message)) \
        R(dbus_uint32_t, dbus_message_get_reply_serial, (DBusMessage *message), (message)) \
        R(int, dbus_message_get_type, (DBusMessage *message), (message)) \
        R(dbus_bool_t, dbus_message_is_signal, (DBusMessage *message, const char *iface, const char *signal_name), (message, iface, signal_name)) \
        R(dbus_bool_t, dbus_message_iter_append_basic, (DBusMessageIter *iter, int type, const void *value), (iter, type, value)) \
        R(dbus_bool_t, dbus_message_iter_close_container, (DBusMessageIter *iter, DBusMessageIter *sub), (iter, sub)) \
        R(int, dbus_message_iter_get_arg_type, (DBusMessageIter *iter), (iter)) \
        V(void, dbus_message_iter_get_basic, (DBusMessageIter *iter, void *value), (iter, value)) \
        R(dbus_bool_t, dbus_message_iter_init, (DBusMessage *message, DBusMessageIter *iter), (message, iter)) \
        V(void, dbus_message_iter_init_append, (DBusMessage *message, DBusMessageIter *iter), (message, iter)) \
        R(dbus_bool_t, dbus_message_iter_open_container, (DBusMessageIter *iter, int type, const char *contained_signature, DBusMessageIter *sub), (iter, type, contained_signature, sub)) \
        V(void, dbus_message_iter_recurse, (DBusMessageIter *iter, DBusMessageIter *sub), (iter, sub)) \
        R(DBusMessage *, dbus_message_new_method_call, (const char *bus_name, const char *path, const char *iface, const char *method), (bus_name, path, iface, method)) \
        R(dbus_bool_t, dbus_message_set_destination, (DBusMessage *message, const char *destination), (message, destination)) \
        V(void, dbus_message_unref, (DBusMessage *message), (message)) \


#define FIELD(ret_, name_, params_, args_) ret_(*name_) params_;
static struct {
        bool loaded;
        ST_DBUS_FUNCTIONS(FIELD, FIELD)
} syms;
#undef FIELD

int st_dbus_load(tr_error *err)
{
        if (syms.loaded)
                return 0;
        void *lib = dlopen(ST_LIBDBUS, RTLD_NOW | RTLD_LOCAL);
        if (!lib)
                return tr_error_set(err, ENOENT, "loading %s: %s", ST_LIBDBUS, dlerror());
#define RESOLVE(ret_, name_, params_, args_)                                                            \
        *(void **) &syms.name_ = dlsym(lib, #name_);                                                    \
        if (!syms.name_)                                                                                \
                return tr_error_set(err, ENOENT, "%s has no %s: %s", ST_LIBDBUS, #name_, dlerror());
        ST_DBUS_FUNCTIONS(RESOLVE, RESOLVE)
#undef RESOLVE
        syms.loaded = true; /* the handle stays open for the process's life */
        return 0;
}

/* The table, loaded: a starter that cannot load libdbus cannot go on (its guard, if any,
 * cleans up after it). */
static void need(void)
{
        tr_error err = { 0 };
        if (st_dbus_load(&err) < 0) {
                fprintf(stderr, "procd-starter: %s (needed to talk to procd or systemd)\n", err.msg);
                _exit(ST_EXIT_FAILURE);
        }
}

#define TRAMPOLINE_R(ret_, name_, params_, args_) \
        ret_ name_ params_                        \
        {                                         \
                need();                           \
                return syms.name_ args_;          \
        }
#define TRAMPOLINE_V(ret_, name_, params_, args_) \
        void name_ params_                        \
        {                                         \
                need();                           \
                syms.name_ args_;                 \
        }
ST_DBUS_FUNCTIONS(TRAMPOLINE_R, TRAMPOLINE_V)

/* the two variadic ones, through their va_list forms */
dbus_bool_t dbus_message_append_args(DBusMessage *message, int first_arg_type, ...)
{
        va_list ap;
        va_start(ap, first_arg_type);
        dbus_bool_t r = dbus_message_append_args_valist(message, first_arg_type, ap);
        va_end(ap);
        return r;
}

dbus_bool_t dbus_message_get_args(DBusMessage *message, DBusError *error, int first_arg_type, ...)
{
        va_list ap;
        va_start(ap, first_arg_type);
        dbus_bool_t r = dbus_message_get_args_valist(message, error, first_arg_type, ap);
        va_end(ap);
        return r;
}
