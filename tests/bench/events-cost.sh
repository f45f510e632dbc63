#!/bin/bash
# events-cost.sh BUILD_DIR - syscalls procd makes per event (strace -c on the running
# daemon around one event, one subscriber connected).  Counts, not times: fit for a loaded
# machine.  Root; makes cgroups /procd-evcost.$$ (unified v2 and v1 memory) and removes them.
set -u
B=${1:-build}
P=$B/procd/procd; C=$B/procd/procctl
D=$(mktemp -d /tmp/procd-evcost.XXXXXX); S=$D/procd.sock
CG=/procd-evcost.$$
V2=$(awk '$3=="cgroup2"{print $2; exit}' /proc/mounts)
MEM=$(awk '$3=="cgroup" && $4 ~ /(^|,)memory(,|$)/{print $2; exit}' /proc/mounts)
[ -z "$MEM" ] && [ -n "$V2" ] && grep -qw memory "$V2/cgroup.controllers" && MEM=$V2
cleanup() {
  [ -n "${SUBPID:-}" ] && kill "$SUBPID" 2>/dev/null
  [ -n "${PD:-}" ] && kill "$PD" 2>/dev/null; wait 2>/dev/null
  for h in $V2 $MEM; do rmdir "$h$CG" 2>/dev/null; done
  rm -rf "$D"
}
trap cleanup EXIT
"$P" --foreground --socket "$S" --state-file "" 2>"$D/log" & PD=$!
for i in $(seq 100); do [ -S "$S" ] && break; sleep 0.1; done
"$C" --socket "$S" events > "$D/events" & SUBPID=$!
sleep 0.5
mkfam() { # a sleeper (or a hog) in a fresh cgroup, registered and tracked
  for h in $V2 $MEM; do mkdir -p "$h$CG"; done
  if [ "$MEM" != "$V2" ]; then echo 33554432 > "$MEM$CG/memory.limit_in_bytes"; echo 33554432 > "$MEM$CG/memory.memsw.limit_in_bytes" 2>/dev/null; echo 0 > "$MEM$CG/memory.swappiness"
  else echo 33554432 > "$V2$CG/memory.max"; echo 0 > "$V2$CG/memory.swap.max" 2>/dev/null; fi
  sh -c "for h in $V2 $MEM; do echo \$\$ > \$h$CG/cgroup.procs; done; read x < $D/go; exec $1" & FP=$!
  mkfifo "$D/go" 2>/dev/null
  "$C" --socket "$S" register $FP >/dev/null; "$C" --socket "$S" track-cgroup $FP $CG >/dev/null
}
measure() { # what, then the action in $2
  strace -c -f -p $PD -o "$D/strace" & ST=$!; sleep 1
  eval "$2"; sleep 1.5
  kill -INT $ST; wait $ST 2>/dev/null
  # strace -c rows: % time, seconds, usecs/call, calls, [errors,] syscall
  printf '%-30s' "$1"
  grep -E "^ *[0-9]" "$D/strace" | awk '{printf " %s:%s", $NF, $4}'; echo
}
measure "idle (baseline)" ":"
measure "register+track-cgroup (arming)" 'mkfam "sleep 1000"'
echo go > "$D/go" &
sleep 0.5
measure "suspend+continue (Frozen/Thawed)" '"$C" --socket "$S" suspend $FP; "$C" --socket "$S" continue $FP'
measure "FamilyEmptied (v2 inotify)" "kill $FP; wait $FP 2>/dev/null"
"$C" --socket "$S" unregister $FP >/dev/null
for h in $V2 $MEM; do rmdir "$h$CG" 2>/dev/null; done
mkfam "dd if=/dev/zero of=/dev/null bs=256M count=4"
measure "FamilyOomKill + FamilyEmptied" "echo go > $D/go; wait $FP 2>/dev/null"
"$C" --socket "$S" unregister $FP >/dev/null
echo "events seen by the subscriber:"; cat "$D/events"
