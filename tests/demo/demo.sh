#!/usr/bin/env bash
# make demo: the main job.  procd in the background on a private socket, a job launched by
# procd-starter into its own cgroup and registered with procd, procctl usage / suspend /
# continue / kill, zero survivors, clean shutdown.  Needs root.  Everything it creates is under
# the cgroup /procd-demo.<pid> and a temporary directory, and is removed at the end.  Exit 0
# when no member survived the kill, no job cgroup is left and procd quit cleanly; 77 (skip)
# without root.  ctest runs it as test_demo.
set -euo pipefail
B=${1:-build}
PROCD=$B/procd/procd PROCCTL=$B/procd/procctl STARTER=$B/starter/procd-starter
for x in "$PROCD" "$PROCCTL" "$STARTER" "$B/tests/demo/procd-demo"; do
  [ -x "$x" ] || { echo "demo: $x is not built (run make build)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP demo: needs root (cgroups)"; exit 77; }

echo "== 1. the tracker library alone: both trackers side by side on one job"
"$B/tests/demo/procd-demo"

echo
echo "== 2. procd + procd-starter + procctl"
T=$(mktemp -d /tmp/procd-demo.XXXXXX)
SOCK=$T/procd.sock
BASE=/procd-demo.$$
procd_pid="" starter_pid=""
cleanup() {
  # only what this script started, by pid
  [ -n "$starter_pid" ] && kill -TERM "$starter_pid" 2>/dev/null && wait "$starter_pid" 2>/dev/null
  [ -n "$procd_pid" ] && kill -TERM "$procd_pid" 2>/dev/null && wait "$procd_pid" 2>/dev/null
  for m in $(awk '$9=="cgroup"||$9=="cgroup2"{print $5}' /proc/self/mountinfo); do
    [ -d "$m$BASE" ] && find "$m$BASE" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  rm -rf "$T"
  return 0
}
trap cleanup EXIT
ctl() { "$PROCCTL" --socket "$SOCK" "$@"; }

"$PROCD" --foreground --socket "$SOCK" --log stderr 2>"$T/procd.log" &
procd_pid=$!
for _ in $(seq 100); do ctl list >/dev/null 2>&1 && break; sleep 0.05; done
echo "procd $procd_pid listening on $SOCK"

# the job: two light workers and a double-forked setsid escaper that a /proc scanner would lose
JOB='for i in 1 2; do (while :; do n=0; while [ $n -lt 3000 ]; do n=$((n+1)); done; sleep 0.05; done) & done
     (setsid sh -c "while :; do sleep 0.2; done" &)
     wait'
"$STARTER" --socket "$SOCK" --cgroup-base "$BASE" --name job --kill-grace 1 \
  --report "$T/report.json" -- sh -c "$JOB" 2>"$T/starter.log" &
starter_pid=$!

root=""
for _ in $(seq 100); do
  root=$(ctl list 2>/dev/null | awk '$NF ~ /^cgroup:/ {print $1; exit}')
  [ -n "$root" ] && break; sleep 0.05
done
[ -n "$root" ] || { echo "demo: the job did not register"; cat "$T/starter.log"; exit 1; }
sleep 0.5
echo; echo "\$ procctl list"; ctl list
echo; echo "\$ procctl usage $root"; ctl usage "$root"
members=$(ctl dump "$root" | awk '/members/ {for (i=2;i<=NF;i++) print $i}' | tr -d ',')
echo "members: $(echo $members)"

echo; echo "\$ procctl suspend $root"; ctl suspend "$root"
c1=$(ctl --json usage "$root" | sed -n 's/.*"cpu_usec": \([0-9]*\).*/\1/p'); sleep 0.5
c2=$(ctl --json usage "$root" | sed -n 's/.*"cpu_usec": \([0-9]*\).*/\1/p')
echo "cpu while suspended: $c1 -> $c2 usec over 0.5 s"
echo "\$ procctl continue $root"; ctl continue "$root"; sleep 0.5
c3=$(ctl --json usage "$root" | sed -n 's/.*"cpu_usec": \([0-9]*\).*/\1/p')
echo "cpu after continue: $c2 -> $c3 usec over 0.5 s"

echo; echo "\$ procctl kill $root"; ctl kill "$root"
wait "$starter_pid" && st=0 || st=$?
starter_pid=""
echo "procd-starter exited with $st (128+9: the job was killed)"
sed 's/^/  /' "$T/starter.log"
alive=0
for p in $members; do
  state=$( (sed 's/.*) //' "/proc/$p/stat" | cut -d' ' -f1) 2>/dev/null || true)
  case "$state" in ""|Z|X) ;; *) echo "  still alive: $p ($state)"; alive=$((alive+1)) ;; esac
done
echo "survivors among the recorded members: $alive"
echo; echo "\$ cat report.json"; cat "$T/report.json"; echo

echo; echo "\$ procctl quit"; ctl quit
wait "$procd_pid" && pst=0 || pst=$?
procd_pid=""
left=0
for m in $(awk '$9=="cgroup"||$9=="cgroup2"{print $5}' /proc/self/mountinfo); do
  [ -d "$m$BASE/job" ] && left=$((left+1))
done
echo "procd exited with $pst; job cgroups left: $left"
[ "$alive" -eq 0 ] && [ "$left" -eq 0 ] && [ "$pst" -eq 0 ]
