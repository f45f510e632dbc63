/* dbus-methods.h - org.procd.ProcFamily1 over libdbus-1: decode a method call, check its
 * signature, call the command layer, encode the reply or the typed D-Bus error. */
#pragma once

#include <dbus/dbus.h>

#include "procd/core/command.h"
#include "trackers/usage.h"

/* The introspection XML (procd/dbus/org.procd.ProcFamily1.xml, embedded at build time). */
extern const char pd_introspection_xml[];

/* One {sv} entry of a dictionary being written. */
bool pd_dbus_dict_entry(DBusMessageIter *dict, const char *key, int type, const void *value);
/* GetUsage's entries ("source", "fallback_reason", each available field as t) into an open
 * a{sv} (also FamilyEmptied's final usage). */
bool pd_dbus_append_usage_entries(DBusMessageIter *dict, const tr_usage *u);

/* Handle one message addressed to PROCD_DBUS_PATH.  The caller is identified from the
 * connection's peer credentials.  GetUsage's percent CPU comes from the command layer's
 * one usage meter (the CPU used since the previous query of that family, by any client of
 * either transport). */
DBusHandlerResult pd_dbus_handle_message(DBusConnection *c, DBusMessage *m, pd_commands *cm);
