/* dbus-methods.h - org.procd.ProcFamily1 over libdbus-1: decode a method call, check its
 * signature, call the command layer, encode the reply or the typed D-Bus error. */
#pragma once

#include <dbus/dbus.h>

#include "procd/core/command.h"
#include "procd/core/usage-meter.h"

/* The introspection XML (procd/dbus/org.procd.ProcFamily1.xml, embedded at build time). */
extern const char pd_introspection_xml[];

/* Handle one message addressed to PROCD_DBUS_PATH.  The caller is identified from the
 * connection's peer credentials.  meter: the readings GetUsage computes percent CPU from
 * (the CPU used since the previous GetUsage of that family, on any connection). */
DBusHandlerResult pd_dbus_handle_message(DBusConnection *c, DBusMessage *m, pd_commands *cm, pd_usage_meter *meter);
