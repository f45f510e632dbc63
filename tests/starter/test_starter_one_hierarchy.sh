#!/usr/bin/env bash
# test_starter_one_hierarchy.sh STARTER - procd-starter where a single cgroup v1 hierarchy is
# mounted (a v1 host or container with one hierarchy): in a private mount namespace every
# cgroup mount but one v1 hierarchy is unmounted, then a job runs /bin/true under a per-run
# base.  Without v2 the job's hierarchies are "all of them"; the job cgroup is made in the
# lock hierarchy as <top>'s child and by path in the others (starter/jobcg.c create_job), and
# with no other hierarchy it is the lock part alone.  Checks: exit 0, nothing of the job left
# under the base (the regression: "exists in no hierarchy", exit 125, <top>/job left behind),
# and the final usage not taken for a vanished cgroup (a quiet job reads only the OOM kills,
# which no memory hierarchy gives here).
set -u
starter=${1:?usage: test_starter_one_hierarchy.sh PROCD_STARTER}
# mountinfo's file system type is the field after the "-" (optional fields come before it;
# $9 is the mount's source, "cgroup" for a tmpfs mounted as `mount -t tmpfs cgroup ...` too)
fstype='function fstype(  i) { for (i = 7; i <= NF; i++) if ($i == "-") return $(i + 1); return "" }'
v1=$(awk "$fstype"' fstype() == "cgroup" && $5 !~ /systemd$/ { print $5; exit }' /proc/self/mountinfo)
[ -n "$v1" ] || { echo "SKIP: no cgroup v1 controller hierarchy is mounted here (pure v2): none to keep alone"; exit 77; }
command -v unshare >/dev/null || { echo "SKIP: unshare(1) is missing"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (mount namespace, cgroups)"; exit 77; }
base=/procd-test.$$
cleanup() { [ -d "$v1$base" ] && find "$v1$base" -depth -type d -exec rmdir {} + 2>/dev/null; }
trap cleanup EXIT

out=$(unshare -m --propagation private bash -c '
  v1=$1 starter=$2 base=$3 fstype=$4
  cgroup_mounts() { awk "$fstype"'\'' fstype() == "cgroup" || fstype() == "cgroup2" { print $5 }'\'' /proc/self/mountinfo; }
  for m in $(cgroup_mounts | sort -r); do
    [ "$m" = "$v1" ] || umount "$m" || { echo "umount $m failed"; exit 90; }
  done
  echo "hierarchies: $(cgroup_mounts | paste -sd " ")"
  "$starter" --no-procd --quiet --cgroup-base "$base" -- /bin/true
  echo "exit $?"
' one-hierarchy "$v1" "$starter" "$base" "$fstype" 2>&1)
echo "$out"
fail=0
grep -qx "hierarchies: $v1" <<<"$out" || { echo "FAIL: the namespace should show $v1 alone"; fail=1; }
grep -qx 'exit 0' <<<"$out" || { echo "FAIL: procd-starter should exit 0"; fail=1; }
! grep -q 'gone in every hierarchy' <<<"$out" || { echo "FAIL: the job cgroup was taken for gone (no memory hierarchy for the OOM kills is not an error)"; fail=1; }
left=$(find "$v1$base" -mindepth 1 -type d 2>/dev/null)
[ -z "$left" ] || { echo "FAIL: left under the base: $left"; fail=1; }
[ $fail = 0 ] && echo "PASS: a job on a single v1 hierarchy ($v1)"
exit $fail
