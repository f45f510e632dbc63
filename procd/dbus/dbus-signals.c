/* dbus-signals.c - events as D-Bus signals (see dbus-signals.h). */
#include "dbus-signals.h"

#include <stdio.h>

#include "procd/dbus/dbus-methods.h"
#include "procd/wire.h"

static bool u64_entry(DBusMessageIter *dict, const char *key, uint64_t v)
{
        dbus_uint64_t val = v;
        return pd_dbus_dict_entry(dict, key, DBUS_TYPE_UINT64, &val);
}

/* printable ASCII only: libdbus refuses what is not UTF-8, and a message may be cut */
static void printable(char *s)
{
        for (; *s; s++)
                if ((unsigned char) *s >= 0x7f || (unsigned char) *s < 0x20)
                        *s = '?';
}

static bool append_data(DBusMessageIter *dict, const pd_event *e, uint64_t dropped)
{
        bool ok = !dropped || u64_entry(dict, "dropped", dropped);
        switch (e->kind) {
        case PD_EVENT_OOM_KILL:
                ok = ok && u64_entry(dict, "oom_kills", e->count) && u64_entry(dict, "oom_kills_total", e->total);
                break;
        case PD_EVENT_RESTORED:
                ok = ok && u64_entry(dict, "families", e->count);
                break;
        case PD_EVENT_UNKILLABLE:
                if (ok && e->message) {
                        char msg[512];
                        snprintf(msg, sizeof msg, "%s", e->message);
                        printable(msg);
                        const char *mp = msg;
                        ok = pd_dbus_dict_entry(dict, "message", DBUS_TYPE_STRING, &mp);
                }
                break;
        case PD_EVENT_EMPTIED:
                ok = ok && (!e->usage || pd_dbus_append_usage_entries(dict, e->usage));
                break;
        default:
                break;
        }
        return ok;
}

DBusMessage *pd_dbus_event_signal(const pd_event *e, uint64_t dropped)
{
        DBusMessage *m = dbus_message_new_signal(PROCD_DBUS_PATH, PROCD_DBUS_INTERFACE, pd_event_name(e->kind));
        if (!m)
                return NULL;
        char job[128];
        snprintf(job, sizeof job, "%s", e->job ? e->job : "");
        printable(job);
        dbus_int32_t root = e->root_pid;
        const char *jp = job;
        DBusMessageIter it, dict;
        dbus_message_iter_init_append(m, &it);
        bool ok = dbus_message_iter_append_basic(&it, DBUS_TYPE_INT32, &root) &&
                  dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &jp) &&
                  dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &dict);
        if (ok) {
                ok = append_data(&dict, e, dropped);
                ok = dbus_message_iter_close_container(&it, &dict) && ok;
        }
        if (!ok) {
                dbus_message_unref(m);
                return NULL;
        }
        dbus_message_set_no_reply(m, TRUE);
        return m;
}
