/* family-usage.h - a family's usage with its whole subtree of families, each process
 * counted once.
 *
 * condor_procd's GET_USAGE sums the asked family and every subfamily below it (each
 * process belongs to exactly one family there).  Here a family's own record already holds
 * part of its subtree:
 *   - a cgroup family's counters include every cgroup below its own: the nested cgroups
 *     of its subfamilies (family cgroups are made inside the parent's), and any family
 *     whose handed cgroup lies below it;
 *   - a /proc family's members exclude its subfamilies' members (registry.c hands each
 *     /proc family the members of its subfamilies as the exclude set), and an excluded
 *     member's CPU goes with it.
 * So a subfamily is added unless a cgroup family between the asked one and it (the asked
 * one included) already holds it: its cgroup path lies below that family's cgroup, or, for
 * a /proc subfamily, its root process sits in that cgroup (read from /proc/ROOT/cgroup;
 * only a subfamily whose root could not be moved into a nested cgroup is in that case).
 * Sums follow tr_usage_add: a field stays known only where every part knows it.
 *
 * Memory charged before a move (issue 19): a cgroup holds the charge of what was allocated
 * inside it; a process procd moved in (REGISTER's root, TrackFamilyViaCgroup's members,
 * AdoptProcess: PD_FAMILY_MOVED_IN) leaves the charge of its pages behind (v2 never moves a
 * charge; v1 only with memory.move_charge_at_immigrate, which procd never sets and 6.x
 * deprecates).  The cgroup's rss is then too small, 0 for a process that allocated
 * everything before, so for such a family rss_bytes is the sum of its members' own RSS and
 * image_size_bytes the sum of their virtual sizes (/proc/PID/stat, condor_procd's figures),
 * each field's source says proc, and fallback_reason says why.
 * Until the root execs (issue 20): REGISTER's root is HTCondor's job child, registered
 * before its exec; the exec drops the old image with every page charged elsewhere, so once
 * the file /proc/ROOT/exe names differs from the one recorded at the move (the root still
 * the same process), the flag goes and the cgroup answers alone (pd_registry_moved_in).
 * TrackFamilyViaCgroup and AdoptProcess record no exe: their families keep the flag.
 */
#pragma once

#include "procd/core/registry.h"
#include "trackers/usage.h"

/* f's own record (refreshed by a snapshot when it is /proc-tracked and stale), with the
 * reason when RegisterSubfamily could not give it a cgroup.  0 or -errno. */
int pd_family_own_usage(pd_registry *r, pd_family *f, unsigned want, tr_usage *out, tr_error *err);

/* f's own record plus the subfamilies it does not hold (see above).  want: enum
 * tr_usage_want.  0, or -errno when f's own record cannot be read (a subfamily that cannot
 * be read makes the sum's fields unknown instead).  The root family without a trackable
 * root (PID 1) has no record of its own: its usage is the sum of every family (zero, known,
 * when there is none). */
int pd_family_usage(pd_registry *r, pd_family *f, unsigned want, tr_usage *out, tr_error *err);
