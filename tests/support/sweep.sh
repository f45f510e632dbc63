#!/usr/bin/env bash
# sweep.sh before|after - remove cgroups named /procd-test.<pid> whose creating test
# program is gone (a crashed run), thawing them and killing (by pid) the processes those
# tests started inside them, and test_pam_adopt's PAM service files and test users whose
# test program is gone.  'after' fails when it had to remove anything: a test leaked.
set -u
mode=${1:-before}
found=0
mapfile -t mounts < <(awk '$9=="cgroup"||$9=="cgroup2"{print $5}' /proc/self/mountinfo 2>/dev/null)
for m in "${mounts[@]}"; do
  for d in "$m"/procd-test.*; do
    [ -d "$d" ] || continue
    pid=${d##*.}
    if [ -d "/proc/$pid" ] && grep -q . "/proc/$pid/cmdline" 2>/dev/null; then continue; fi
    found=$((found + 1))
    echo "sweep($mode): removing leftover $d"
    while IFS= read -r sub; do
      [ -f "$sub/cgroup.freeze" ] && echo 0 > "$sub/cgroup.freeze" 2>/dev/null
      [ -f "$sub/freezer.state" ] && echo THAWED > "$sub/freezer.state" 2>/dev/null
      while read -r p; do [ "$p" -gt 1 ] 2>/dev/null && kill -9 "$p" 2>/dev/null; done < "$sub/cgroup.procs"
    done < <(find "$d" -depth -type d)
    for i in 1 2 3 4 5 6 7 8 9 10; do
      find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
      [ -d "$d" ] || break
      sleep 0.1
    done
  done
done
# test_pam_adopt's PAM service file and test user, named for its pid: left by a run that
# crashed (the program removes both itself otherwise).
gone() { ! { [ -d "/proc/$1" ] && grep -q . "/proc/$1/cmdline" 2>/dev/null; }; }
for f in /etc/pam.d/procd-pam-test.*; do
  [ -f "$f" ] && gone "${f##*.}" || continue
  found=$((found + 1))
  echo "sweep($mode): removing leftover $f"
  rm -f "$f"
done
while IFS=: read -r name _; do
  case $name in procdpam[0-9]*) ;; *) continue ;; esac
  gone "${name#procdpam}" || continue
  found=$((found + 1))
  echo "sweep($mode): removing leftover test user $name"
  userdel "$name" 2>/dev/null
done < /etc/passwd
if [ "$mode" = after ] && [ "$found" -gt 0 ]; then
  echo "sweep: $found test cgroup tree(s) were left behind"
  exit 1
fi
exit 0
