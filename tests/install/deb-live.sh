#!/usr/bin/env bash
# tests/install/deb-live.sh DEBDIR [MODE] - `make test-deb-live`: the packages of DEBDIR
# (procd and libprocd-client1, as `make deb` builds them) installed with dpkg -i on a fresh
# Debian 12 whose PID 1 is systemd: a qemu guest (tests/vm/run MODE --init systemd, MODE v2
# by default) on a throw-away overlay of this host's root, where procd is not installed.
# Checked there: the package enables and starts procd.service; procctl and procd-starter
# talk to the daemon; a registered family lives in procd-families.service's cgroup, never
# in procd.service's (which holds procd alone) and outlives systemctl restart procd; a configuration error stops the unit without a restart loop; stop
# keeps a running job; dpkg --purge leaves no file, unit, configuration, runtime directory,
# procd process or cgroup behind.  One line per check; exit 0 when all pass, 1 when one
# fails, 77 when it cannot run here (reason printed).
#   deb-live.sh --in-guest DEBDIR   what the guest runs
set -u
cd "$(dirname "$0")/../.."

if [ "${1:-}" != --in-guest ]; then
  debdir=$(realpath -m "${1:?usage: tests/install/deb-live.sh DEBDIR [MODE]}")
  mode=${2:-v2}
  if dpkg-query -W -f '${Status}' procd 2>/dev/null | grep -q installed; then
    echo "SKIP: procd is installed on this host: the guest (an overlay of this root) would not be a fresh system"
    exit 77
  fi
  for p in procd libprocd-client1; do
    compgen -G "$debdir/${p}_*.deb" >/dev/null || { echo "deb-live: no ${p}_*.deb in $debdir (make deb)"; exit 1; }
  done
  case $debdir/ in
    "$PWD"/*) ;;
    /tmp/*|/var/tmp/*) echo "deb-live: $debdir is under /tmp, which the guest's boot empties: use a build directory"; exit 1 ;;
  esac
  PROCD_VM_TIMES=1 exec tests/vm/run "$mode" --init systemd --timeout "${PROCD_DEB_LIVE_TIMEOUT:-1800}" \
    -- tests/install/deb-live.sh --in-guest "$debdir"
fi

debdir=$2
fails=0
check() {
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
# poll CMD... for up to 90 s (systemd under emulation is slow; no timing is asserted)
eventually() {
  local end=$((SECONDS + 90))
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.5; done
  "$@"
}
unit_is() { [ "$(systemctl show -P "$1" procd.service)" = "$2" ]; }
no_procd_process() { ! grep -qx procd /proc/[0-9]*/comm 2>/dev/null; }
absent() { local p; for p in "$@"; do [ ! -e "$p" ] && [ ! -L "$p" ] || { echo "     still there: $p"; return 1; }; done; }
cgroup_dir() { # cgroup_dir [UNIT]: the unit's cgroup directory on the systemd-managed hierarchy
  local unit=${1:-procd.service}
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo /sys/fs/cgroup/system.slice/$unit
  elif [ -d /sys/fs/cgroup/unified ]; then echo /sys/fs/cgroup/unified/system.slice/$unit
  else echo /sys/fs/cgroup/systemd/system.slice/$unit; fi
}
unit_of_is() { [ "$(systemctl show -P "$2" "$1")" = "$3" ]; } # unit_of_is UNIT PROPERTY VALUE
# every pid in the cgroup tree of UNIT, one a line
unit_pids() { find "$(cgroup_dir "$1")" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -n; }

echo "deb-live: PID 1 is $(cat /proc/1/comm), $(systemctl is-system-running 2>/dev/null), kernel $(uname -r), $(stat -fc %T /sys/fs/cgroup)"
[ "$(cat /proc/1/comm)" = systemd ] || { echo "FAIL PID 1 is not systemd"; exit 1; }
check "procd is not installed (fresh system)" bash -c "! dpkg-query -W -f '\${Status}' procd 2>/dev/null | grep -q installed"
# A docker image's policy-rc.d (exit 101) forbids starting services; a fresh Debian has none.
if [ -e /usr/sbin/policy-rc.d ]; then
  echo "     removing /usr/sbin/policy-rc.d (a container image's, not Debian's) in the guest"
  rm -f /usr/sbin/policy-rc.d
fi
# man-db's trigger re-indexes every manual page (minutes over 9p under emulation; nothing
# of procd's depends on it): off, as Debian's own switch for it says
rm -f /var/lib/man-db/auto-update

# what the daemon or the maintainer scripts could leave outside the packages' file lists (a
# find over all of /usr through 9p takes minutes under emulation)
named_procd() {
  find /etc /run /var/lib/systemd /var/lib/dpkg/info /var/log /lib/systemd /usr/lib/systemd \
    -xdev -name '*procd*' -prune -print 2>/dev/null | grep -v '^/run/procd-vm' | sort
}
before=$(named_procd)
debs=("$debdir"/procd_*.deb "$debdir"/libprocd-client1_*.deb)
check "dpkg -i procd libprocd-client1" dpkg -i "${debs[@]}"
check "procd.service is enabled" test "$(systemctl is-enabled procd.service 2>&1)" = enabled
check "procd.service is active" eventually unit_is ActiveState active
main_pid=$(systemctl show -P MainPID procd.service)
check "its main process is /usr/sbin/procd" test "$(readlink "/proc/$main_pid/exe" 2>/dev/null)" = /usr/sbin/procd
check "the socket is /run/procd/procd.sock" test -S /run/procd/procd.sock
check "procctl list" procctl list
# procd's parent is PID 1 under systemd, which procd does not track: usage 0 is then the
# sum of every family procd tracks (none yet: zero processes)
check "procctl usage 0: no family yet, 0 processes" \
  bash -c 'procctl --json usage 0 | grep -q "\"num_procs\": *0[,}]"'
out=$(mktemp -d /var/tmp/deb-live.XXXXXX)  # the guest's disk
report=$out/report.json
check "procd-starter --require-procd runs a job procd tracks" \
  procd-starter --require-procd --quiet --report "$report" -- sh -c 'echo job; sleep 1'
check "the report says tracker procd" grep -q '"tracker": *"procd"' "$report"
echo "     report: $(tr -d '\n' <"$report" | cut -c1-300)"

# the families live in procd-families.service's delegated cgroup, not in procd.service's
check "procd-families.service is active" eventually unit_of_is procd-families.service ActiveState active
sleep 600 &
reg=$!
check "procctl register a process" procctl register "$reg"
fam_cg=$(sed -n 's/^0:://p' "/proc/$reg/cgroup")
echo "     the family's cgroup: $fam_cg"
check "its cgroup is under procd-families.service" \
  bash -c "case '$fam_cg' in /system.slice/procd-families.service/families/*) true ;; *) false ;; esac"
check "procd.service's cgroup holds procd alone" \
  test "$(unit_pids procd.service)" = "$(systemctl show -P MainPID procd.service)"
check "procd.service's task count is procd's" \
  test "$(systemctl show -P TasksCurrent procd.service)" -le "$(ls /proc/"$(systemctl show -P MainPID procd.service)"/task | wc -l)"
check "systemctl restart procd" systemctl restart procd.service
check "procd is active after the restart" eventually unit_is ActiveState active
check "the registered process outlives the restart" kill -0 "$reg"
check "the restarted procd tracks it" bash -c "procctl --json usage $reg | grep -q '\"num_procs\": *1'"
check "procd.service still holds procd alone" \
  test "$(unit_pids procd.service)" = "$(systemctl show -P MainPID procd.service)"
check "procd-families.service holds no process of its own" test -z "$(unit_pids procd-families.service | grep -vx "$reg")"
kill "$reg"; wait "$reg" 2>/dev/null

# stop keeps what procd tracks (KillMode=process); start again restores it from the state file
procd-starter --require-procd --quiet -- sleep 600 &
starter=$!
job_usage() { job=$(pgrep -P "$starter" -x sleep) && procctl --json usage "$job" | grep -q '"num_procs": *1'; }
check "procctl usage of a running job" eventually job_usage
check "procctl usage 0 counts it" bash -c 'procctl --json usage 0 | grep -q "\"num_procs\": *[1-9]"'
check "systemctl stop procd" systemctl stop procd.service
check "the job outlives procd's stop" kill -0 "$starter"
check "systemctl start procd" systemctl start procd.service
check "procd is active again" eventually unit_is ActiveState active
check "the restarted procd still tracks the job" job_usage
kill -TERM "$starter" 2>/dev/null; wait "$starter" 2>/dev/null

# a configuration error: exit 2, no restart loop (RestartPreventExitStatus=2)
cp /etc/procd/procd.conf "$out/procd.conf.orig"
printf '[procd]\nno-such-key=1\n' >>/etc/procd/procd.conf
systemctl restart procd.service 2>/dev/null
check "a bad configuration fails the unit" eventually unit_is ActiveState failed
sleep 5  # longer than RestartSec=2s: a restart would have happened by now
check "and it is not restarted (NRestarts 0)" unit_is NRestarts 0
check "  exit status 2" unit_is ExecMainStatus 2
check "  still failed" unit_is ActiveState failed
check "  the journal names the bad key" \
  eventually bash -c 'journalctl -u procd.service --no-pager -o cat | grep -q no-such-key'
journalctl -u procd.service --no-pager -o cat | grep -m 2 no-such-key | sed 's/^/     journal: /'
cp "$out/procd.conf.orig" /etc/procd/procd.conf
systemctl reset-failed procd.service
check "fixed configuration: procd starts" systemctl start procd.service
check "active" eventually unit_is ActiveState active

# purge
cgdir=$(cgroup_dir)
check "the unit's cgroup exists while active ($cgdir)" test -d "$cgdir"
files=$(dpkg -L procd libprocd-client1 | while read -r f; do [ -d "$f" ] || echo "$f"; done)
dpkg --purge procd libprocd-client1 >"$out/purge.log" 2>&1; purge=$?
cat "$out/purge.log"
check "dpkg --purge procd libprocd-client1" test "$purge" = 0
check "  without a warning" bash -c "! grep -qi warning '$out/purge.log'"
check "dpkg knows neither package" bash -c "! dpkg-query -W -f '\${Status}' procd libprocd-client1 2>/dev/null | grep -q installed"
check "no file of the packages is left" absent $files
check "no configuration, runtime or maintainer files" \
  absent /etc/procd /run/procd /var/lib/dpkg/info/procd.list /var/lib/dpkg/info/procd.conffiles
check "no unit: procd.service not found" unit_is LoadState not-found
check "no unit: procd-families.service not found" unit_of_is procd-families.service LoadState not-found
check "no cgroup of procd-families.service" eventually absent "$(cgroup_dir procd-families.service)"
check "no enablement symlink or deb-systemd-helper state" \
  absent /etc/systemd/system/multi-user.target.wants/procd.service \
         /var/lib/systemd/deb-systemd-helper-enabled/procd.service.dsh-also \
         /var/lib/systemd/deb-systemd-helper-enabled/multi-user.target.wants/procd.service
check "no procd process" eventually no_procd_process
check "no cgroup of the unit" eventually absent "$cgdir"
left=$(comm -13 <(echo "$before") <(named_procd) | head -n 20)
check "nothing new named *procd* in /etc /run /var/lib/{systemd,dpkg/info} /var/log /lib/systemd" test -z "$left"
[ -z "$left" ] || echo "$left" | sed 's/^/     /'

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all live .deb checks passed"
