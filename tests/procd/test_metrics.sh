#!/usr/bin/env bash
# test_metrics.sh BUILD_DIR SRC_DIR - procd's Prometheus face (issue 17 §3), end to end:
# `procctl metrics` and the --metrics-textfile file pass `promtool check metrics` and carry
# a registered family's series; a real prometheus-node-exporter (Debian's), started here on
# 127.0.0.1:<free port> with the textfile collector alone, serves procd's series; the file
# is removed when procd stops; the alert rules pass `promtool check rules`; every procd_*
# name the rules and the Grafana dashboard use is one procd writes; `procctl list` and its
# --json show the limits set on a family's cgroup, its OOM kills and the state oom.
# A shell test: it drives promtool, node-exporter and curl as an admin would.
set -u
build=${1:?build dir}
src=${2:?source dir}
procd=$build/procd/procd
procctl=$build/procd/procctl
exporter=/usr/bin/prometheus-node-exporter
for p in promtool "$exporter" curl python3 dbus-send; do
  command -v "$p" >/dev/null || { echo "SKIP: $p is not installed (cmake/install-deps.sh installs it)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (procd makes family cgroups)"; exit 77; }
. "$(dirname "$0")/../support/checks.sh"
tmp=$(mktemp -d /tmp/procd-test-metrics.XXXXXX)
base=/procd-test.$$ # swept by tests/support/sweep.sh if this run crashes
daemon= child= nexp=
cleanup() {
  [ -n "$nexp" ] && kill "$nexp" 2>/dev/null && wait "$nexp" 2>/dev/null
  [ -n "$child" ] && kill "$child" 2>/dev/null && wait "$child" 2>/dev/null
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  remove_cgroup_base "$base"
  rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/textfile"
textfile=$tmp/textfile/procd.prom
"$procd" --foreground --socket "$tmp/procd.sock" --state-file "" --family-cgroup-base "$base" \
  --metrics-textfile "$textfile" --metrics-interval 1 --pidfile "$tmp/procd.pid" 2>"$tmp/procd.log" &
daemon=$!
wait_for 30 test -S "$tmp/procd.sock" || { cat "$tmp/procd.log"; echo "FAIL procd did not start"; exit 1; }
check "--pidfile holds procd's pid" wait_for 30 grep -qx "$daemon" "$tmp/procd.pid"
sleep 600 &
child=$!
check "register a family" "$procctl" --socket "$tmp/procd.sock" register "$child"
"$procctl" --socket "$tmp/procd.sock" metrics >"$tmp/metrics.txt"
check "procctl metrics passes promtool check metrics" bash -c "promtool check metrics <'$tmp/metrics.txt'"
check "procctl metrics: the family's process count" \
  grep -q "^procd_family_processes{root_pid=\"$child\",job_id=\"\",user=\"root\"} 1\$" "$tmp/metrics.txt"
check "procctl metrics: the family's state" \
  grep -q "^procd_family_state{root_pid=\"$child\",.*state=\"running\"} 1\$" "$tmp/metrics.txt"
check "procctl metrics: CPU seconds in base units" \
  grep -qE "^procd_family_cpu_user_seconds_total\{root_pid=\"$child\",[^}]*\} [0-9]+\.[0-9]{6}\$" "$tmp/metrics.txt"
check "procctl metrics: families by tracking" grep -q '^procd_families{tracking="family-cgroup",source="cgroup"} 1$' "$tmp/metrics.txt"
check "procctl metrics: requests by operation and status" \
  grep -q '^procd_requests_total{operation="RegisterSubfamily",status="OK"} 1$' "$tmp/metrics.txt"
"$procctl" --socket "$tmp/procd.sock" register 1 >/dev/null 2>&1
dbus-send --peer="unix:path=$tmp/procd.sock" --print-reply /org/procd/ProcFamily \
  org.procd.ProcFamily1.NoSuchMethod >/dev/null 2>&1
"$procctl" --socket "$tmp/procd.sock" metrics >"$tmp/metrics2.txt"
check "procctl metrics: a malformed request counted" grep -q '^procd_malformed_requests_total 1$' "$tmp/metrics2.txt"
check "procctl metrics: a refused request counted by its error" \
  grep -q '^procd_requests_total{operation="RegisterSubfamily",status="BadRootPid"} 1$' "$tmp/metrics2.txt"
# the textfile: written every second, atomically (never a partial file: rename)
check "the textfile appears" wait_for 30 grep -q "root_pid=\"$child\"" "$textfile"
check "the textfile passes promtool check metrics" bash -c "promtool check metrics <'$textfile'"
check "no temporary file is left beside it" bash -c "[ \$(ls '$tmp/textfile' | wc -l) -eq 1 ]"

# node-exporter on a free loopback port, the textfile collector alone
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$exporter" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
  --collector.textfile.directory="$tmp/textfile" >"$tmp/exporter.log" 2>&1 &
nexp=$!
fetch() { curl -fsS "http://127.0.0.1:$port/metrics" >"$tmp/scrape.txt"; }
check "node-exporter answers on 127.0.0.1:$port" wait_for 30 fetch
check "node-exporter serves the family's series" \
  grep -q "^procd_family_processes{job_id=\"\",root_pid=\"$child\",user=\"root\"} 1\$" "$tmp/scrape.txt"
check "node-exporter serves procd's own series" grep -q '^procd_build_info{version=' "$tmp/scrape.txt"
check "node-exporter read the file without error" grep -q '^node_textfile_scrape_error 0$' "$tmp/scrape.txt"
kill "$nexp" && wait "$nexp" 2>/dev/null
nexp=

# the limits set on the family's cgroup and an OOM kill show in list, list --json and metrics
if [ -d /sys/fs/cgroup/memory ]; then # v1 memory and pids hierarchies (hybrid, v1)
  memdir=/sys/fs/cgroup/memory$(awk -F: '$2=="memory"{print $3}' "/proc/$child/cgroup")
  piddir=/sys/fs/cgroup/pids$(awk -F: '$2=="pids"{print $3}' "/proc/$child/cgroup")
  echo 33554432 >"$memdir/memory.limit_in_bytes"
  echo 50 >"$piddir/pids.max"
  joindir=$memdir
else # pure v2: the family's processes sit in its leaf
  leaf=/sys/fs/cgroup$(awk -F: '$1=="0"{print $3}' "/proc/$child/cgroup")
  memdir=${leaf%/self} piddir=${leaf%/self} joindir=$leaf
  echo 33554432 >"$memdir/memory.max"
  echo 50 >"$piddir/pids.max"
fi
# a member that asks for more than the limit: the kernel's OOM killer ends it
sh -c "echo \$\$ >'$joindir/cgroup.procs' && exec python3 -c 'b = bytearray(256 << 20)'" 2>/dev/null
"$procctl" --socket "$tmp/procd.sock" list >"$tmp/list.txt"
"$procctl" --socket "$tmp/procd.sock" list --json >"$tmp/list.json"
"$procctl" --socket "$tmp/procd.sock" metrics >"$tmp/metrics3.txt"
row() { grep "^$child " "$tmp/list.txt"; }
check "list: the header has JOB, MEM.MAX, CPUS, PIDS.MX, OOM" \
  grep -qE '^ROOT +JOB +STATE .* MEM +MEM\.MAX +CPUS +PIDS\.MX +OOM ' "$tmp/list.txt"
check "list: memory.max beside the memory" bash -c "grep '^$child ' '$tmp/list.txt' | grep -q ' 32.0 MiB '"
check "list: state oom after the OOM kill" bash -c "grep '^$child ' '$tmp/list.txt' | grep -qE '^$child +- +oom '"
check "list --json: limits, OOM count and state" python3 -c "
import json, sys
f = [f for f in json.load(open('$tmp/list.json'))['families'] if f['root_pid'] == $child][0]
sys.exit(not (f['memory_max_bytes'] == 33554432 and f['pids_max'] == 50 and f['oom_kills'] >= 1 and f['state'] == 'oom'))"
check "metrics: the limits" bash -c "grep -q '^procd_family_memory_max_bytes{root_pid=\"$child\",[^}]*} 33554432\$' '$tmp/metrics3.txt' &&
  grep -q '^procd_family_pids_max{root_pid=\"$child\",[^}]*} 50\$' '$tmp/metrics3.txt'"
check "metrics: the OOM kill and the state" bash -c "grep -qE '^procd_family_oom_kills_total\{root_pid=\"$child\",[^}]*\} [1-9]' '$tmp/metrics3.txt' &&
  grep -q '^procd_family_state{root_pid=\"$child\",.*state=\"oom\"} 1\$' '$tmp/metrics3.txt'"

# the alert rules and the dashboard use names procd writes
check "promtool check rules accepts the alert rules" promtool check rules "$src/dist/prometheus/procd-alerts.yml"
check "the Grafana dashboard is JSON" python3 -m json.tool "$src/dist/grafana/procd-dashboard.json" >/dev/null
for f in "$src/dist/prometheus/procd-alerts.yml" "$src/dist/grafana/procd-dashboard.json"; do
  for name in $(grep -oE 'procd_[a-z_]+' "$f" | sort -u); do
    [ "$name" = procd_down ] && continue
    check "${f##*/}: $name is a metric procd writes" grep -q "^# TYPE $name " "$tmp/metrics.txt"
  done
done

kill "$child" && wait "$child" 2>/dev/null
child=
kill "$daemon" && wait "$daemon" 2>/dev/null
daemon=
check "the textfile is removed when procd stops" test ! -e "$textfile"
check "the pidfile is removed when procd stops" test ! -e "$tmp/procd.pid"
[ "$fails" -eq 0 ] || { echo "$fails case(s) failed"; grep -h "procd_family_processes" "$tmp/metrics.txt" "$tmp/scrape.txt" 2>/dev/null; cat "$tmp/procd.log"; exit 1; }
echo "all metrics cases pass"
