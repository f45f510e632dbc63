#!/usr/bin/env bash
# test_detach.sh BUILD_DIR - procd on a node without systemd (issue 17 §5): started without
# --foreground it detaches (the starting command returns once procd listens), writes
# --pidfile, logs to syslog and no longer to the stderr it inherited; a start that fails
# says why on that stderr.  Syslog is a datagram socket of this test, bound over /dev/log in
# a private mount namespace (the host's /dev is untouched); procd is stopped by the pid in
# its pidfile, after checking that pid is the procd this test started.
set -u
build=${1:?build dir}
procd=$build/procd/procd
procctl=$build/procd/procctl
for p in unshare python3; do
  command -v "$p" >/dev/null || { echo "SKIP: $p is not installed"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (mount namespace)"; exit 77; }
. "$(dirname "$0")/../support/checks.sh"
tmp=$(mktemp -d /tmp/procd-test-detach.XXXXXX)
base=/procd-test.$$
receiver= daemon=
cleanup() {
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null
  [ -n "$receiver" ] && kill "$receiver" 2>/dev/null && wait "$receiver" 2>/dev/null
  remove_cgroup_base "$base"
  rm -rf "$tmp"
}
trap cleanup EXIT
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(s.recv(65536) + b"\n")
' "$tmp/log.sock" "$tmp/syslog.txt" &
receiver=$!
wait_for 30 test -S "$tmp/log.sock" || { echo "FAIL the syslog receiver did not start"; exit 1; }
# run_detached ARGS...: procd without --foreground, /dev/log = the receiver, stderr to a file
run_detached() {
  unshare --mount --propagation private bash -c '
    tmp=$1; shift
    mkdir -p "$tmp/dev" && mount --rbind /dev "$tmp/dev" && mount -t tmpfs -o mode=0755 tmpfs /dev || exit 99
    for n in null zero random urandom; do touch "/dev/$n" && mount --bind "$tmp/dev/$n" "/dev/$n" || exit 99; done
    touch /dev/log && mount --bind "$tmp/log.sock" /dev/log || exit 99
    exec "$@"' run "$tmp" "$procd" --socket "$tmp/procd.sock" --state-file "" --family-cgroup-base "$base" "$@"
}
run_detached --pidfile "$tmp/procd.pid" 2>"$tmp/stderr.txt"
rc=$?
check "the starting command returns 0 once procd listens" test "$rc" -eq 0
check "--pidfile names a live procd" bash -c "read -r p <'$tmp/procd.pid' && [ \"\$(cat /proc/\$p/comm)\" = procd ]"
read -r daemon <"$tmp/procd.pid" 2>/dev/null || daemon=
check "it answers" "$procctl" --socket "$tmp/procd.sock" list
check "it logs to syslog" wait_for 30 grep -q "procd\\[$daemon\\]: procd .* listening on $tmp/procd.sock" "$tmp/syslog.txt"
check "nothing on the stderr it inherited" test ! -s "$tmp/stderr.txt"
# a second procd on the same socket cannot start: it says so where it was started
run_detached 2>"$tmp/stderr2.txt"
rc=$?
check "a failed start exits non-zero" test "$rc" -ne 0
check "... and says why on its stderr" grep -q "procd.sock" "$tmp/stderr2.txt"
if [ -n "$daemon" ] && [ "$(cat "/proc/$daemon/comm" 2>/dev/null)" = procd ]; then
  kill "$daemon"
  check "procd stops on SIGTERM" wait_for 30 test ! -e "/proc/$daemon"
  daemon=
fi
check "the pidfile is removed when procd stops" test ! -e "$tmp/procd.pid"
[ "$fails" -eq 0 ] || { echo "$fails case(s) failed"; echo "--- stderr"; cat "$tmp/stderr.txt"; echo "--- stderr2";
  cat "$tmp/stderr2.txt"; echo "--- syslog"; cat "$tmp/syslog.txt"; exit 1; }
echo "all detach cases pass"
