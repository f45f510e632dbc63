#!/usr/bin/env bash
# test_install.sh PATHS - `cmake --install` into a scratch root (DESTDIR) installs exactly
# the expected files; the installed programs print their version; procd starts with the
# installed example configuration; a program built against the installed header and
# pkg-config file links libprocd-client.so.SOVERSION and calls it, from C and from C++ (g++).
set -u
. "$1"
fails=0
check() { # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
root=$(mktemp -d /tmp/procd-test-install.XXXXXX)
daemon=
cleanup() {
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  rm -rf "$root"
}
trap cleanup EXIT

if ! DESTDIR="$root/dest" cmake --install "$build_dir" >"$root/install.log" 2>&1; then
  cat "$root/install.log"
  echo "FAIL cmake --install"
  exit 1
fi
d="$root/dest"
expected=(
  "$sbindir/procd"
  "$sbindir/condor_procd"
  "$bindir/procctl"
  "$bindir/procd-starter"
  "$unitdir/procd.service"
  "$unitdir/procd-families.service"
  "$sysconfdir/procd/procd.conf"
  "$mandir/man8/procd.8"
  "$mandir/man1/procctl.1"
  "$mandir/man1/procd-starter.1"
  "$mandir/man5/procd.conf.5"
  "$mandir/man8/pam_procd_adopt.8"
  "$mandir/man7/procd-dbus.7"
  "$mandir/man3/libprocd-client.3"
  "$datadir/bash-completion/completions/procd"
  "$datadir/bash-completion/completions/procctl"
  "$datadir/bash-completion/completions/procd-starter"
  "$datadir/procd/procd-alerts.yml"
  "$datadir/procd/procd-dashboard.json"
  "$libdir/libprocd-client.so.$version"
  "$libdir/libprocd-client.so.$soversion"
  "$libdir/libprocd-client.so"
  "$libdir/pkgconfig/libprocd-client.pc"
  "$includedir/procd-client-$soversion/procd/client.h"
  "$includedir/procd-client-$soversion/procd/types.h"
  "$includedir/procd-client-$soversion/procd/job-info.h"
  "$libdir/security/pam_procd_adopt.so"
  "$includedir/procd-client-$soversion/procd/version.h"
  "$includedir/procd-client-$soversion/procd/usage.h"
  "$includedir/procd-client-$soversion/procd/wire.h"
)
if [ "$spank" = 1 ]; then
  expected+=("$spankdir/procd_spank.so" "$sysconfdir/slurm/plugstack.conf.d/procd.conf")
fi
printf '%s\n' "${expected[@]}" | sort >"$root/expected"
(cd "$d" && find . -type f -o -type l) | sed 's|^\.||' | sort >"$root/got"
check "installed file list is the expected one" diff -u "$root/expected" "$root/got"

for p in "$sbindir/procd" "$bindir/procctl" "$bindir/procd-starter"; do
  name=${p##*/}
  check "$name --version" test "$("$d$p" --version)" = "$name $version"
done
check "unit runs the installed procd" grep -qx "ExecStart=$sbindir/procd --foreground --log journal --family-cgroup-base-default /system.slice/procd-families.service/families" "$d$unitdir/procd.service"
check "unit wants procd-families.service" grep -qx "Wants=procd-families.service" "$d$unitdir/procd.service"
check "procd.service delegates nothing (families live elsewhere)" bash -c "! grep -q '^Delegate=' '$d$unitdir/procd.service'"
check "procd-families.service is delegated" grep -qx "Delegate=yes" "$d$unitdir/procd-families.service"
check "stopping procd-families.service kills no job" grep -qx "KillMode=process" "$d$unitdir/procd-families.service"
check "unit names no group" bash -c "! grep -q -- '--group' '$d$unitdir/procd.service'"
check "unit does not restart on a configuration error" grep -qx "RestartPreventExitStatus=2" "$d$unitdir/procd.service"
for m in man8/procd.8 man1/procctl.1 man1/procd-starter.1 man5/procd.conf.5 man8/pam_procd_adopt.8 \
  man7/procd-dbus.7 man3/libprocd-client.3; do
  check "$m is a man page" grep -q '^\.TH' "$d$mandir/$m"
done
for c in procd procctl procd-starter; do
  check "completion for $c loads" bash -c ". '$d$datadir/bash-completion/completions/$c' 2>/dev/null || true; type -t _init_completion >/dev/null || _init_completion() { :; }; complete -p $c >/dev/null"
done
check "example configuration: every key commented" bash -c "! grep -Ev '^(#|\\[procd\\]|\$)' '$d$sysconfdir/procd/procd.conf'"

# procd reads the installed example configuration; a bad one stops it with status 2
if [ "$(id -u)" -eq 0 ]; then
  sock="$root/procd.sock"
  "$d$sbindir/procd" --config "$d$sysconfdir/procd/procd.conf" --foreground --socket "$sock" \
    2>"$root/procd.log" &
  daemon=$!
  for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.1; done
  check "procd starts with the example configuration" "$d$bindir/procctl" --socket "$sock" list
  check "procd logs the configuration it read" grep -q "configuration $d$sysconfdir/procd/procd.conf" "$root/procd.log"
  "$d$bindir/procctl" --socket "$sock" quit >/dev/null
  wait "$daemon"
  check "procd quit cleanly" test $? -eq 0
  daemon=
else
  echo "skip procd start (needs root)"
fi
printf '[procd]\nkill-timeout=0\n' >"$root/bad.conf"
"$d$sbindir/procd" --config "$root/bad.conf" --foreground --socket "$root/x.sock" 2>"$root/bad.log"
check "a bad configuration exits 2" test $? -eq 2
check "... and says which key" grep -q "bad.conf: kill-timeout: bad value '0'" "$root/bad.log"

# a client program built from the installed header and pkg-config file
cat >"$root/client.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <procd/client.h>
int main(void)
{
        procd_client *c = NULL;
        procd_error e = { 0 };
        if (strcmp(procd_client_version(), PROCD_VERSION) != 0)
                return 1;
        if (procd_connect("/nonexistent/procd.sock", &c, &e) != PROCD_E_TRANSPORT)
                return 2;
        procd_usage u;
        procd_usage_init(&u);
        if (procd_usage_field_count() == 0 || strcmp(procd_status_name(PROCD_E_BAD_ROOT_PID), "BadRootPid") != 0)
                return 3;
        printf("%s %d\n", procd_client_version(), PROCD_CLIENT_SOVERSION);
        return 0;
}
C
export PKG_CONFIG_PATH="$d$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$d"
if flags=$(pkg-config --cflags --libs libprocd-client) &&
  cc -Wall -Werror ${PROCD_TEST_CFLAGS:-} -o "$root/client" "$root/client.c" $flags 2>"$root/cc.log"; then
  check "client program runs against the installed library" \
    test "$(LD_LIBRARY_PATH="$d$libdir" "$root/client")" = "$version $soversion"
  check "it links the SONAME" bash -c "readelf -d '$root/client' | grep -q 'NEEDED.*libprocd-client.so.$soversion'"
  check "the library exports procd_* only" \
    bash -c "! nm -D --defined-only '$d$libdir/libprocd-client.so.$soversion' | awk '{print \$3}' | grep -v '^procd_' | grep -v '^PROCD_CLIENT_' | grep -q ."
else
  cat "$root/cc.log"
  check "client program builds from pkg-config" false
fi

# the same from C++: every public header in one translation unit, built and linked with g++
# through the pkg-config file; the calls resolve to the C symbols (extern "C")
cat >"$root/client.cpp" <<'CXX'
#include <cstdio>
#include <cstring>
#include <string>
#include <procd/client.h>
#include <procd/job-info.h>
#include <procd/types.h>
#include <procd/usage.h>
#include <procd/wire.h>
int main()
{
        procd_client *c = nullptr;
        procd_error e{};
        if (std::string(procd_client_version()) != PROCD_VERSION)
                return 1;
        if (procd_connect("/nonexistent/procd.sock", &c, &e) != PROCD_E_TRANSPORT)
                return 2;
        procd_usage u;
        procd_usage_init(&u);
        procd_usage_extra x{};
        if (procd_usage_field_count() == 0 || std::strcmp(procd_status_name(PROCD_E_BAD_ROOT_PID), "BadRootPid") != 0 ||
            !procd_job_id_valid("1234.0") || x.memory_max_bytes.available)
                return 3;
        procd_json_write_member(stdout, "k", "v");
        std::printf(" %s %d\n", procd_client_version(), PROCD_CLIENT_SOVERSION);
        return 0;
}
CXX
if flags=$(pkg-config --cflags --libs libprocd-client) &&
  g++ -std=c++17 -Wall -Wextra -Werror ${PROCD_TEST_CFLAGS:-} -o "$root/clientxx" "$root/client.cpp" $flags \
    2>"$root/cxx.log"; then
  check "C++ client program runs against the installed library" \
    test "$(LD_LIBRARY_PATH="$d$libdir" "$root/clientxx")" = "\"k\": \"v\" $version $soversion"
  check "it calls the C symbols (no C++ mangling)" \
    bash -c "nm -D --undefined-only '$root/clientxx' | grep -qE ' U procd_connect(@|\$)'"
else
  cat "$root/cxx.log"
  check "C++ client program builds from pkg-config with g++" false
fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all install checks passed"
