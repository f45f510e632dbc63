#!/usr/bin/env bash
# test_htcondor_guide.sh GUIDE PROCD CLASSIC_ASK - the HTCondor configuration of
# docs/htcondor.md (between <!-- htcondor-config-begin --> and <!-- htcondor-config-end -->)
# pastes into HTCondor as written and starts procd as condor_master would.
#
# The block is read as HTCondor's configuration reader reads it: a line whose first
# non-blank character is '#' is a comment (a '#' anywhere else is part of the value); in
# 'KEY = value' the value is everything after the first '=', trimmed; a trailing '\' joins
# the next line; $(VAR) is expanded from the block, with RUN and LOG (HTCondor's own
# macros) pointed at a scratch directory.  Then procd is started with the argv that
# condor_master's ProcFamilyProxy::start_procd (HTCondor, src/condor_utils/
# proc_family_proxy.cpp) builds from those knobs: argv[0] the base name of PROCD, -A, -L
# (SYSLOG with LOG_TO_SYSLOG), -R when MAX_PROCD_LOG > 0, -S, -D with PROCD_DEBUG, -C the
# condor uid, -G with USE_GID_PROCESS_TRACKING; stdin and stdout /dev/null, stderr a pipe
# read to EOF (procd's readiness).  The path in PROCD is mapped to the build's procd.  The
# test asks procd over the FIFO, then stops it by pid and removes what it made.
# One line per check; exit 77 (with the reason) when it cannot run here.
set -u
guide=$1 procd_bin=$2 ask=$3
fails=0
check() { # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP test_htcondor_guide: needs root (condor_master starts procd as root, with -C)"
  exit 77
fi
for f in "$guide" "$procd_bin" "$ask"; do
  [ -e "$f" ] || { echo "FAIL $f does not exist"; exit 1; }
done

scratch=$(mktemp -d /tmp/procd-test-htcondor.XXXXXX)
base=/procd-test.$$ # family cgroup base, swept by tests/support/sweep.sh if this run dies
daemon=
cleanup() {
  if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then
    kill -TERM "$daemon" 2>/dev/null
    wait "$daemon" 2>/dev/null
  fi
  for m in $(awk '$9=="cgroup"||$9=="cgroup2"{print $5}' /proc/self/mountinfo); do
    [ -d "$m$base" ] && find "$m$base" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  rm -rf "$scratch"
  return 0
}
trap cleanup EXIT

# ---- the block, as written in the guide
awk '/<!-- htcondor-config-end -->/ { on = 0 } on && !/^```/ { print }
     /<!-- htcondor-config-begin -->/ { on = 1 }' "$guide" >"$scratch/block"
check "the guide has a configuration block" test -s "$scratch/block"

# ---- HTCondor's reading of it
declare -A conf=([RUN]="$scratch/run" [LOG]="$scratch/log")
mkdir -p "$scratch/run" "$scratch/log"
malformed=0 line="" n=0
while IFS= read -r raw || [ -n "$raw" ]; do
  n=$((n + 1))
  if [[ $raw =~ ^[[:space:]]*# ]] && [ -z "$line" ]; then continue; fi
  if [[ $raw == *\\ ]]; then line+="${raw%\\}"; continue; fi
  line+=$raw
  if [[ $line =~ ^[[:space:]]*$ ]]; then line=""; continue; fi
  if [[ $line != *=* ]]; then
    echo "     line $n is neither a comment nor KEY = value: $line"
    malformed=$((malformed + 1)); line=""; continue
  fi
  key=${line%%=*} value=${line#*=}
  key=${key#"${key%%[![:space:]]*}"} key=${key%"${key##*[![:space:]]}"}
  value=${value#"${value%%[![:space:]]*}"} value=${value%"${value##*[![:space:]]}"}
  conf[${key^^}]=$value
  line=""
done <"$scratch/block"
check "every line is a comment or KEY = value" test "$malformed" -eq 0

expand() { # expand VALUE: $(VAR) from the block, as HTCondor's macro expansion
  local v=$1 name depth=0
  while [[ $v =~ \$\(([A-Za-z_][A-Za-z0-9_.]*)\) ]] && [ $depth -lt 32 ]; do
    name=${BASH_REMATCH[1]}
    [ -n "${conf[${name^^}]+x}" ] || { echo "UNDEFINED($name)"; return; }
    v=${v//"\$(${BASH_REMATCH[1]})"/${conf[${name^^}]}}
    depth=$((depth + 1))
  done
  printf '%s\n' "$v"
}
declare -A val
for k in "${!conf[@]}"; do val[$k]=$(expand "${conf[$k]}"); done
get() { printf '%s' "${val[$1]-}"; }
is_bool() { [[ ${1,,} == true || ${1,,} == false ]]; }
is_true() { [[ ${1,,} == true ]]; }

# ---- the values procd's knobs take
for k in $(printf '%s\n' "${!val[@]}" | sort); do
  case $k in RUN | LOG) continue ;; esac
  check "$k = '$(get "$k")': no '#' in the value" bash -c '[[ $1 != *"#"* ]]' _ "$(get "$k")"
  check "$k: no undefined macro" bash -c '[[ $1 != *UNDEFINED\(* ]]' _ "$(get "$k")"
done
for k in USE_PROCD RESTART_PROCD_ON_ERROR PROCD_DEBUG LOG_TO_SYSLOG USE_GID_PROCESS_TRACKING USE_PSS; do
  [ -n "${val[$k]+x}" ] && check "$k is a boolean (true or false)" is_bool "$(get "$k")"
done
check "USE_PROCD is true (else no daemon uses a procd)" is_true "$(get USE_PROCD)"
exe=$(get PROCD)
check "PROCD is the packaged path /usr/sbin/procd" test "$exe" = /usr/sbin/procd
check "PROCD names procd" bash -c '[[ ${1##*/} == procd || ${1##*/} == condor_procd ]]' _ "$exe"
mapped=$(dirname "$procd_bin")/${exe##*/}
check "PROCD mapped to the build ($mapped) exists" test -x "$mapped"
addr=$(get PROCD_ADDRESS)
check "PROCD_ADDRESS is an absolute path ($addr)" bash -c '[[ $1 == /* ]]' _ "$addr"
[ -n "${val[MAX_PROCD_LOG]+x}" ] && check "MAX_PROCD_LOG is a number" bash -c '[[ $1 =~ ^[0-9]+$ ]]' _ "$(get MAX_PROCD_LOG)"
[ -n "${val[PROCD_MAX_SNAPSHOT_INTERVAL]+x}" ] &&
  check "PROCD_MAX_SNAPSHOT_INTERVAL is a number" bash -c '[[ $1 =~ ^-?[0-9]+$ ]]' _ "$(get PROCD_MAX_SNAPSHOT_INTERVAL)"
if [ "$fails" -gt 0 ]; then
  echo "$fails check(s) failed: procd not started"
  exit 1
fi

# ---- the argv condor_master builds (ProcFamilyProxy::start_procd)
condor_uid=$(id -u condor 2>/dev/null || id -u nobody 2>/dev/null || echo 0)
args=(-A "$addr")
if is_true "$(get LOG_TO_SYSLOG)"; then log=SYSLOG; else log=$(get PROCD_LOG); fi
size=${val[MAX_PROCD_LOG]--1}
if [ -n "$log" ] && [ "$size" != 0 ]; then
  args+=(-L "$log")
  [ "$size" -gt 0 ] 2>/dev/null && args+=(-R "$size")
fi
[ -n "${val[PROCD_MAX_SNAPSHOT_INTERVAL]+x}" ] && args+=(-S "$(get PROCD_MAX_SNAPSHOT_INTERVAL)")
is_true "$(get PROCD_DEBUG)" && args+=(-D)
args+=(-C "$condor_uid")
is_true "$(get USE_GID_PROCESS_TRACKING)" && args+=(-G "$(get MIN_TRACKING_GID)" "$(get MAX_TRACKING_GID)")
env_pss=()
is_true "$(get USE_PSS)" && env_pss=(_condor_USE_PSS=TRUE)
echo "     condor_master would run: ${exe##*/} ${args[*]}"

# procd's family cgroups go to a base of this run (the guide's PROCD_FAMILY_CGROUP_BASE)
mkfifo "$scratch/stderr"
(exec env "${env_pss[@]}" PROCD_FAMILY_CGROUP_BASE="$base/families" \
  bash -c 'exec -a "$0" "$@"' "${exe##*/}" "$mapped" "${args[@]}") \
  </dev/null >/dev/null 2>"$scratch/stderr" &
daemon=$!
timeout 60 cat "$scratch/stderr" >"$scratch/errtext"
rc=$?
check "procd closed its stderr without a word (the master's readiness)" \
  bash -c '[ "$1" -eq 0 ] && [ ! -s "$2" ]' _ "$rc" "$scratch/errtext"
[ -s "$scratch/errtext" ] && sed 's/^/     procd said: /' "$scratch/errtext"
check "procd runs" kill -0 "$daemon"
check "the command FIFO exists ($addr)" test -p "$addr"
check "the watchdog FIFO exists" test -p "$addr.watchdog"
check "the FIFOs belong to the condor uid ($condor_uid)" test "$(stat -c %u "$addr")" = "$condor_uid"
if [ "$log" != SYSLOG ] && [ -n "$log" ]; then
  check "procd logs to PROCD_LOG ($log)" grep -q "listening on $addr" "$log"
  if grep -q "no family cgroups: no cgroup hierarchy is mounted" "$log"; then
    echo "skip family cgroups under the base: no cgroup hierarchy is mounted here"
  else
    check "... with its family cgroups under the base" grep -q "family cgroups under $base/families" "$log"
  fi
fi
out=$("$ask" "$addr" snapshot 2>&1)
check "TAKE_SNAPSHOT over the FIFO answers success ($out)" test $? -eq 0
out=$("$ask" "$addr" usage $$ 2>&1)
st=$?
check "GET_USAGE of the root family (this script, procd's parent) answers ($out)" test "$st" -eq 0
check "... and counts its processes" bash -c '[[ $1 =~ num_procs\ ([1-9][0-9]*) ]]' _ "$out"

kill -TERM "$daemon"
wait "$daemon"
st=$?
daemon=
check "procd stopped by pid (SIGTERM) exits 0" test "$st" -eq 0
[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all HTCondor guide checks passed"
