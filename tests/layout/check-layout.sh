#!/usr/bin/env bash
# check-layout.sh SRCDIR BUILDDIR - the layout rules of NOTES "Layout", checked on the
# sources and on the built binaries:
#   trackers/ includes nothing from above it; libprocd-client/ includes neither the daemon
#   nor trackers/; procd/core/ includes neither face (dbus/, classic/) nor libdbus; the faces
#   do not include each other; no daemon file includes procd/client.h (procd/wire.h is the
#   contract); the procd binary does not link the client; libprocd-client.so exports
#   procd_* only; no file under procd/ names a /proc path (trackers/ reads /proc: proc-read,
#   procscan, hierarchy).
set -u
src=${1:?source dir}
build=${2:?build dir}
fails=0
check() { # check "what" command...: one line per rule
  local what=$1; shift
  if "$@"; then echo "ok    $what"; else echo "FAIL  $what"; fails=$((fails + 1)); fi
}
# includes "FILES..." PATTERN: no line of FILES includes a header matching PATTERN
none_include() {
  local pattern=$1; shift
  local hits
  hits=$(grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]($pattern)" "$@" 2>/dev/null)
  [ -z "$hits" ] || { printf '      %s\n' "$hits"; return 1; }
}
cd "$src" || exit 1
mapfile -t trackers < <(ls trackers/*.[ch])
mapfile -t client < <(ls libprocd-client/*.c libprocd-client/include/procd/*.h)
mapfile -t core < <(ls procd/core/*.[ch])
mapfile -t dbus < <(ls procd/dbus/*.[ch])
mapfile -t classic < <(ls procd/classic/*.[ch])
mapfile -t daemon < <(ls procd/*.[ch] procd/core/*.[ch] procd/dbus/*.[ch] procd/classic/*.[ch])

check "trackers/ includes nothing from above it" none_include 'procd/|libprocd-client/|starter/|slurm/' "${trackers[@]}"
check "libprocd-client/ includes neither the daemon nor trackers/" \
  none_include 'procd/(core|dbus|classic|options|log-file|main)|trackers/|starter/' "${client[@]}"
check "procd/core/ includes neither face nor libdbus" none_include 'procd/(dbus|classic)/|dbus/dbus\.h' "${core[@]}"
check "procd/dbus/ does not include procd/classic/" none_include 'procd/classic/' "${dbus[@]}"
check "procd/classic/ does not include procd/dbus/ nor libdbus" none_include 'procd/dbus/|dbus/dbus\.h' "${classic[@]}"
check "no daemon file includes procd/client.h" none_include 'procd/client\.h' "${daemon[@]}"
# a "/proc/..." or "/proc" string literal in procd/ would be a reader beside trackers/
proc_paths() {
  local hits
  hits=$(grep -rHnE '"/proc(/|")' procd --include='*.c' --include='*.h' 2>/dev/null)
  [ -z "$hits" ] || { printf '      %s\n' "$hits"; return 1; }
}
check "only trackers/ reads /proc (no /proc path under procd/)" proc_paths

if [ -x "$build/procd/procd" ]; then
  check "the procd binary does not link the client" \
    bash -c "! nm '$build/procd/procd' | grep -qE ' [TtDdBb] (procd_connect|procd_get_usage|procd_register_subfamily)\$'"
else
  echo "FAIL  no built procd at $build/procd/procd"; fails=$((fails + 1))
fi
lib=$build/libprocd-client/libprocd-client.so
if [ -e "$lib" ]; then
  others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -vE '^(procd_|PROCD_CLIENT_)')
  check "libprocd-client.so exports procd_* only${others:+ (not: $(echo $others))}" test -z "$others"
else
  echo "FAIL  no built library at $lib"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] || { echo "$fails layout rule(s) broken"; exit 1; }
echo "all layout rules hold"
