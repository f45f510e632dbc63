#!/usr/bin/env bash
# test_slurm.sh PLUGIN PROCD PROCCTL LIST_JOBS PAM_MODULE - procd_spank.so in a live Slurm node.
#
# Starts, as root, a munged with its own key and socket, Debian's slurmctld and slurmd on
# private ports, state and spool folders (one node, SlurmUser=root), and the build's procd on
# a private socket, then runs srun/sbatch cases against the plugin; stops everything it
# started (by pid) and removes its folders and cgroups, even on failure.  77 = skipped: no
# root, or Slurm/munge not installed or not starting (the reason is printed).
# PROCD_SLURM_MEASURE=1: also the figures for NOTES (srun with an escaper with and without
# the plugin, a step's CPU from procd vs the burner's own count); a minute more.
# KEEP_SLURM_DIR=1: keep the run's folder (logs, configuration, accounting file).
set -u
plugin=$(realpath "$1") procd_bin=$(realpath "$2") procctl_bin=$(realpath "$3") list_jobs=$(realpath "$4") pam_module=$(realpath "$5")
measure=${PROCD_SLURM_MEASURE:-0}
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (slurmd runs jobs as root here)"
for b in munged slurmctld slurmd srun sbatch scancel squeue sinfo scontrol; do
  command -v "$b" >/dev/null || skip "$b missing (apt-get install slurmctld slurmd slurm-client munge)"
done
for b in jq bc ss; do
  command -v "$b" >/dev/null || { echo "FAIL $b missing (make deps installs it)"; exit 1; }
done

fails=0
check() { # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
note() { echo "     $*"; }

dir=$(mktemp -d /tmp/procd-slurm.XXXXXX)
chmod 755 "$dir"
node=procdt$$
cgbase=/procd-test.$$           # procd's --family-cgroup-base (tests/support/sweep.sh naming)
conf=$dir/slurm.conf
acct=$dir/usage.jsonl
sock=$dir/procd.sock
munged_pid= ctld_pid= slurmd_pid= procd_pid=
pam_service=/etc/pam.d/procd-pam-test.$$  # tests/support/sweep.sh removes it if this run crashes

# Slurm commands see this run's configuration only (its jobs inherit the variable: that is
# how cleanup finds what they left).
# A timeout: a command whose controller is gone retries for minutes.  In a sanitizer build
# the plugin needs the ASan runtime loaded first into whatever loads it (slurmd, slurmstepd,
# srun, sbatch): PROCD_SLURM_PRELOAD names it.
preload=${PROCD_SLURM_PRELOAD:-}
asan=()
[ -n "$preload" ] && asan=(env "LD_PRELOAD=$preload" ASAN_OPTIONS=detect_leaks=0)
sl() { SLURM_CONF=$conf "${asan[@]}" timeout 120 "$@"; }

stop_pid() { # stop_pid PID: TERM, then KILL after 10 s; only a pid this script started
  local p=$1
  [ -n "$p" ] && [ "$p" -gt 1 ] || return 0
  kill -TERM "$p" 2>/dev/null || return 0
  for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$p" 2>/dev/null
  wait "$p" 2>/dev/null
}

# Processes of this run's jobs and steps: their environment names this run's slurm.conf
# (slurmstepd inherits it from slurmd, tasks from srun/sbatch).
run_pids() {
  local e p
  for e in /proc/[0-9]*/environ; do
    p=${e#/proc/}; p=${p%/environ}
    [ "$p" -gt 1 ] && [ "$p" != $$ ] || continue
    { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "SLURM_CONF=$conf" && echo "$p"
  done
}

remove_cgroup_tree() { # remove_cgroup_tree DIR: kill what is in it (by pid), rmdir depth first
  local d=$1 sub p
  [ -d "$d" ] || return 0
  while IFS= read -r sub; do
    [ -f "$sub/freezer.state" ] && echo THAWED >"$sub/freezer.state" 2>/dev/null
    while read -r p; do [ "$p" -gt 1 ] 2>/dev/null && kill -KILL "$p" 2>/dev/null; done <"$sub/cgroup.procs"
  done < <(find "$d" -depth -type d)
  for _ in $(seq 1 20); do
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
    [ -d "$d" ] || return 0
    sleep 0.1
  done
  echo "cleanup: could not remove $d"
}

cleanup() {
  local p d
  [ -n "$ctld_pid" ] && kill -0 "$ctld_pid" 2>/dev/null &&
    SLURM_CONF=$conf timeout 10 scancel --quiet --user=root --partition=procdtest 2>/dev/null
  stop_pid "$slurmd_pid"
  stop_pid "$ctld_pid"
  for p in $(run_pids); do kill -KILL "$p" 2>/dev/null; done
  stop_pid "$procd_pid"
  stop_pid "$munged_pid"
  # Debian's Slurm is built for several slurmd per host: its cgroups are slurm_<node>,
  # this run's own
  for d in /sys/fs/cgroup/*/"${cgbase#/}" /sys/fs/cgroup/*/slurm_"$node"; do
    remove_cgroup_tree "$d"
  done
  rm -f "$pam_service"
  [ -n "${KEEP_SLURM_DIR:-}" ] && { echo "kept $dir"; return; }
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

free_port() { # free_port FROM: the first TCP port >= FROM nobody listens on
  local p=$1
  while ss -Hltn "sport = :$p" | grep -q .; do p=$((p + 1)); done
  echo "$p"
}

start_procd() {
  "$procd_bin" --foreground --socket "$sock" --state-file "" --family-cgroup-base "$cgbase/fams" \
    --snapshot-interval 1 >>"$dir/procd.log" 2>&1 &
  procd_pid=$!
  for _ in $(seq 1 100); do [ -S "$sock" ] && "$procctl_bin" --socket "$sock" list >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}

stop_procd() {
  "$procctl_bin" --socket "$sock" quit >/dev/null 2>&1
  stop_pid "$procd_pid"
  procd_pid=
  rm -f "$sock"
}

plugstack() { # plugstack ARGS...: the plugin line (no ARGS: no plugin)
  if [ $# -eq 0 ]; then : >"$dir/plugstack.conf"; return; fi
  echo "required $plugin $*" >"$dir/plugstack.conf"
}
default_args="socket=$sock accounting=$acct"

write_conf() { # write_conf linuxproc|cgroup
  local proctrack=proctrack/linuxproc task=task/none
  if [ "$1" = cgroup ]; then proctrack=proctrack/cgroup task=task/cgroup; fi
  cat >"$conf" <<EOF
ClusterName=procdtest
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmdDebug=verbose
PlugStackConfig=$dir/plugstack.conf
ProctrackType=$proctrack
TaskPlugin=$task
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MpiDefault=none
PrologFlags=Contain
KillWait=5
NodeName=$node NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=procdtest Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  cat >"$dir/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
AllowedSwapSpace=0
EOF
}

start_slurm() { # start_slurm linuxproc|cgroup: slurmctld and slurmd, until the node is idle
  write_conf "$1"
  slurmctld -D -i -f "$conf" >>"$dir/slurmctld.out" 2>&1 &
  ctld_pid=$!
  "${asan[@]}" slurmd -D -f "$conf" -N "$node" >>"$dir/slurmd.out" 2>&1 &
  slurmd_pid=$!
  for _ in $(seq 1 300); do
    [ "$(sl sinfo -h -n "$node" -o %t 2>/dev/null)" = idle ] && return 0
    kill -0 "$ctld_pid" 2>/dev/null && kill -0 "$slurmd_pid" 2>/dev/null || break
    sleep 0.2
  done
  return 1
}

stop_slurm() {
  stop_pid "$slurmd_pid"
  stop_pid "$ctld_pid"
  slurmd_pid= ctld_pid=
}

show_logs() {
  local f
  for f in munged.log slurmctld.log slurmctld.out slurmd.log slurmd.out procd.log; do
    [ -s "$dir/$f" ] && { echo "--- $f (tail)"; tail -n 25 "$dir/$f"; }
  done
}

# ---- start ----------------------------------------------------------------------------
mkdir -p "$dir/state" "$dir/spool" "$dir/work"
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge.key"
munged --foreground --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
  >>"$dir/munged.out" 2>&1 &
munged_pid=$!
for _ in $(seq 1 50); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
if [ ! -S "$dir/munge.sock" ]; then show_logs; skip "munged did not start"; fi
ctld_port=$(free_port $((20000 + $$ % 20000)))
slurmd_port=$(free_port $((ctld_port + 1)))
start_procd || { show_logs; echo "FAIL procd did not start"; exit 1; }
plugstack $default_args
if ! start_slurm linuxproc; then show_logs; skip "slurmctld/slurmd did not bring node $node up"; fi
echo "node $node up (slurmctld :$ctld_port, slurmd :$slurmd_port), procd pid $procd_pid; load $(cut -d' ' -f1-3 /proc/loadavg)"

W=$dir/work
job_lines() { grep -F "\"step\": \"$1\"" "$acct" 2>/dev/null; }
json_field() { job_lines "$1" | tail -n 1 | jq -r ".$2 // empty"; }
gone() { ! kill -0 "$1" 2>/dev/null; }
wait_file() { for _ in $(seq 1 300); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
wait_gone() { for _ in $(seq 1 100); do gone "$1" && return 0; sleep 0.1; done; return 1; }
nothing_left() { # no process of this run's jobs but slurmstepd's of steps still ending
  local p n=0
  for _ in $(seq 1 100); do
    n=0
    for p in $(run_pids); do grep -q '^slurmstepd' "/proc/$p/cmdline" 2>/dev/null || n=$((n + 1)); done
    [ "$n" -eq 0 ] && return 0
    sleep 0.1
  done
  echo "     left: $(for p in $(run_pids); do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done)"
  return 1
}

# ---- 1. srun with a setsid escaper holding stdout ------------------------------------
t0=$(date +%s.%N)
sl srun -N1 -n1 bash -c "echo \$SLURM_JOB_ID >$W/esc.job; (setsid sleep 300 & echo \$! >$W/esc.pid); sleep 1" >"$W/esc.out" 2>&1
rc=$?
t1=$(date +%s.%N)
secs=$(echo "$t1 - $t0" | bc)
job=$(cat "$W/esc.job" 2>/dev/null)
check "escaper: srun exits 0" test "$rc" -eq 0
# untimed: without the plugin slurmstepd waits EioTimeout (60 s) for the escaper's stdout,
# then logs "Abandoning IO" and returns; srun's time is printed, not asserted
check "escaper: slurmstepd did not abandon the step's I/O" bash -c "! grep -q '\[$job.0\].*Abandoning IO' '$dir/slurmd.log'"
note "srun took $secs s (61 s without the plugin); load $(cut -d' ' -f1-3 /proc/loadavg)"
check "escaper: the escaper is gone" wait_gone "$(cat "$W/esc.pid" 2>/dev/null || echo 0)"
check "escaper: nothing of the job is left" nothing_left
check "escaper: usage line in the accounting file" test -n "$(job_lines "$job.0")"
check "escaper: the line names 1 process left and killed" test "$(json_field "$job.0" left_at_end)/$(json_field "$job.0" killed)" = 1/true
check "escaper: usage line in slurmd's log" grep -q "procd: step $job.0: 1 task, cpu" "$dir/slurmd.log"

# ---- 2. sbatch, then scancel ----------------------------------------------------------
job=$(sl sbatch --parsable -o "$W/batch.out" --wrap "echo \$\$ >$W/batch.pid; (setsid sleep 301 & echo \$! >$W/batch-esc.pid); sleep 302")
wait_file "$W/batch-esc.pid"
bpid=$(cat "$W/batch.pid" 2>/dev/null || echo 0) bepid=$(cat "$W/batch-esc.pid" 2>/dev/null || echo 0)
check "sbatch: procd names the family $job.batch, uid 0, rooted at the script" grep -qx "$job.batch $bpid 0" <("$list_jobs" "$sock" 2>&1)
check "sbatch: the extern step (PrologFlags=Contain) is the family $job.extern" grep -q "^$job.extern [0-9]* 0$" <("$list_jobs" "$sock" 2>&1)
# pam_procd_adopt (the build's) puts a login of the job's user into the job's extern step;
# the job's steps count as one job (action_unknown=deny would refuse several)
ext_root=$("$list_jobs" "$sock" 2>/dev/null | awk -v s="$job.extern" '$1 == s { print $2 }')
if command -v pamtester >/dev/null; then
  echo "account required $pam_module service=$sock ignore_root=0 action_unknown=deny" >"$pam_service"
  "${asan[@]}" pamtester "${pam_service##*/}" root acct_mgmt >"$W/pam.out" 2>&1 &
  pam_pid=$!
  wait "$pam_pid"
  check "pamtester: the login is allowed" test $? -eq 0
  check "pamtester: adopted into the extern step's family" grep -q "adopted pid $pam_pid into family ${ext_root:-none} " "$dir/procd.log"
  rm -f "$pam_service"
else
  note "pamtester missing: the adoption case is not run (apt-get install pamtester)"
fi
sl scancel "$job"
for _ in $(seq 1 150); do [ -z "$(sl squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.2; done
check "sbatch: scancel ends the job" test -z "$(sl squeue -h -j "$job" 2>/dev/null)"
check "sbatch: the batch script is gone" wait_gone "$bpid"
check "sbatch: its escaper is gone" wait_gone "$bepid"
check "sbatch: nothing of the job is left" nothing_left
check "sbatch: usage line in the accounting file" test -n "$(job_lines "$job.batch")"
for _ in $(seq 1 100); do [ -n "$(job_lines "$job.extern")" ] && break; sleep 0.1; done
check "sbatch: the extern step's usage line too" test -n "$(job_lines "$job.extern")"

# ---- 3. a two-task step: one family, both tasks ----------------------------------------
sl srun -N1 -n2 bash -c "echo \$SLURM_JOB_ID >$W/two.job; echo \$\$ >$W/two.\$SLURM_PROCID; sleep 60" >"$W/two.out" 2>&1 &
srun_pid=$!
wait_file "$W/two.0" && wait_file "$W/two.1"
job=$(cat "$W/two.job" 2>/dev/null) t0pid=$(cat "$W/two.0" 2>/dev/null || echo 0) t1pid=$(cat "$W/two.1" 2>/dev/null || echo 0)
"$procctl_bin" --socket "$sock" --json dump >"$W/two.dump" 2>&1
fams=$(jq -r --argjson a "$t0pid" --argjson b "$t1pid" \
  '[.. | objects | select(has("members")) | select((.members | index($a)) or (.members | index($b))) | .root_pid] | unique | length' "$W/two.dump" 2>/dev/null)
check "two tasks: both in one family" test "$fams" = 1
check "two tasks: procd names the family $job.0" grep -qE "^$job.0 ($t0pid|$t1pid) 0\$" <("$list_jobs" "$sock" 2>&1)
sl scancel "$job"
wait "$srun_pid" 2>/dev/null
check "two tasks: nothing left after scancel" nothing_left
check "two tasks: one usage line for 2 tasks" test "$(json_field "$job.0" tasks)" = 2

# ---- 4. procd unreachable: refused (unreachable=refuse) or run with a warning (allow) -----
stop_procd
sl srun -N1 -n1 bash -c "touch $W/refuse.ran" >"$W/refuse.out" 2>&1
rc=$?
check "procd down, unreachable=refuse: srun fails" test "$rc" -ne 0
check "procd down, unreachable=refuse: the task did not run" test ! -e "$W/refuse.ran"
check "procd down, unreachable=refuse: srun shows why" grep -q "step [0-9]*.0 refused: procd is not reachable on this node (unreachable=refuse)" "$W/refuse.out"
check "procd down, unreachable=refuse: slurmd's log says refused" grep -q "refused (unreachable=refuse)" "$dir/slurmd.log"
job=$(sl sbatch --parsable -o "$W/refuse-batch.out" --wrap "touch $W/refuse-batch.ran")
for _ in $(seq 1 100); do [ -z "$(sl squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.2; done
check "procd down, unreachable=refuse: the batch script did not run" test ! -e "$W/refuse-batch.ran"
check "procd down, unreachable=refuse: the batch job FAILED" grep -q "JobState=FAILED" <(sl scontrol show job "$job" 2>&1)
check "procd down, unreachable=refuse: the node is not drained" test "$(sl sinfo -h -n "$node" -o %t)" = idle
plugstack $default_args unreachable=allow
sl srun -N1 -n1 bash -c 'echo ran' >"$W/allow.out" 2>&1
rc=$?
check "procd down, unreachable=allow: srun runs the step" test "$rc" -eq 0 -a "$(cat "$W/allow.out")" = ran
check "procd down, unreachable=allow: slurmd's log warns" grep -q "runs untracked (unreachable=allow)" "$dir/slurmd.log"
start_procd || { echo "FAIL procd did not restart"; exit 1; }
plugstack $default_args unreachable=sometimes
sl srun -N1 -n1 bash -c "touch $W/badopt.ran" >"$W/badopt.out" 2>&1
rc=$?
check "a bad plugin option: the step fails and does not run" test "$rc" -ne 0 -a ! -e "$W/badopt.ran"
check "a bad plugin option: srun says so, slurmd's log names it" \
  bash -c "grep -q 'bad procd_spank.so options' '$W/badopt.out' && grep -q 'unreachable=sometimes: refuse or allow' '$dir/slurmd.log'"
plugstack $default_args

# ---- measurements (PROCD_SLURM_MEASURE=1) ----------------------------------------------------------
if [ "$measure" = 1 ]; then
  echo "measure: load before: $(cat /proc/loadavg)"
  # a burner that counts its own CPU (getrusage of bash and its children: `times`)
  sl srun -N1 -n1 bash -c "echo \$SLURM_JOB_ID >$W/burn.job; timeout 5 bash -c 'while :; do :; done'; times" >"$W/burn.out" 2>&1
  job=$(cat "$W/burn.job")
  echo "measure: burner's own count (bash times: self, then children): $(tr '\n' ' ' <"$W/burn.out")"
  echo "measure: procd's count: cpu_usec=$(json_field "$job.0" cpu_usec) user=$(json_field "$job.0" cpu_user_usec) system=$(json_field "$job.0" cpu_system_usec) source=$(json_field "$job.0" source)"
  echo "measure: load: $(cat /proc/loadavg)"
  plugstack
  t0=$(date +%s.%N)
  sl srun -N1 -n1 bash -c "(setsid sleep 90 & echo \$! >$W/m.pid); sleep 1" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "measure: srun with an escaper, no plugin: $(echo "$t1 - $t0" | bc) s; load $(cat /proc/loadavg)"
  echo "measure: slurmstepd said: $(grep -o 'Abandoning IO.*' "$dir/slurmd.log" | tail -n 1)"
  p=$(cat "$W/m.pid"); gone "$p" || { echo "measure: the escaper $p survived the step (killed now)"; kill -KILL "$p"; }
  plugstack $default_args
  t0=$(date +%s.%N)
  sl srun -N1 -n1 bash -c "(setsid sleep 90 &); sleep 1" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "measure: srun with an escaper, with the plugin: $(echo "$t1 - $t0" | bc) s; load $(cat /proc/loadavg)"
fi

# ---- 5. --mem with Slurm's cgroup/v1 (proctrack/cgroup, task/cgroup) -------------------
stop_slurm
if start_slurm cgroup; then
  hog="head -c 400M /dev/zero | tail >/dev/null"
  plugstack
  sl srun -N1 -n1 --mem=100M bash -c "$hog" >"$W/mem-plain.out" 2>&1
  rc_plain=$?
  plugstack $default_args
  sl srun -N1 -n1 --mem=100M bash -c "echo \$SLURM_JOB_ID >$W/mem.job; $hog" >"$W/mem.out" 2>&1
  rc=$?
  job=$(cat "$W/mem.job" 2>/dev/null)
  note "without procd: srun exit $rc_plain: $(tr '\n' ' ' <"$W/mem-plain.out" | cut -c1-160)"
  note "with procd:    srun exit $rc: $(tr '\n' ' ' <"$W/mem.out" | cut -c1-160)"
  check "--mem, cgroup/v1: OOM-killed without procd (the reference)" test "$rc_plain" -ne 0
  check "--mem, cgroup/v1: OOM-killed with procd, as without" test "$rc" -ne 0
  check "--mem, cgroup/v1: Slurm reports the OOM with procd" grep -qi "oom" "$W/mem.out"
  check "--mem, cgroup/v1: procd names the OOM (oom_kills >= 1)" test "$(json_field "$job.0" oom_kills)" -ge 1 2>/dev/null
  sl srun -N1 -n1 bash -c "echo \$SLURM_JOB_ID >$W/cg-esc.job; (setsid sleep 303 & echo \$! >$W/cg-esc.pid); sleep 1" >"$W/cg-esc.out" 2>&1
  rc=$?
  job=$(cat "$W/cg-esc.job" 2>/dev/null)
  check "escaper, cgroup/v1: srun exits 0" test "$rc" -eq 0
  check "escaper, cgroup/v1: the escaper is gone" wait_gone "$(cat "$W/cg-esc.pid" 2>/dev/null || echo 0)"
  check "escaper, cgroup/v1: nothing of the job is left" nothing_left
  check "escaper, cgroup/v1: usage line in the accounting file" test -n "$(job_lines "$job.0")"
else
  show_logs
  check "Slurm starts with proctrack/cgroup, task/cgroup and cgroup/v1" false
fi

[ "$fails" -eq 0 ] || show_logs
echo "$fails failure(s)"
[ "$fails" -eq 0 ]
