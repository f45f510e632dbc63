#!/usr/bin/env bash
# test_deb.sh PATHS - `make deb` (cmake/make-deb.sh, debhelper) builds procd,
# libprocd-client1, libprocd-client-dev, procd-condor-compat and procd-slurm; dpkg-deb -c shows each package's files at
# Debian's paths (/usr/sbin, /lib/systemd/system, multiarch libdir), the unit's
# maintainer scripts come from dh_installsystemd, the configuration is a conffile.  The
# packages are NOT installed on the host (the machine is shared): see NOTES for the manual
# run.  procd-condor-compat's diversion of HTCondor's condor_procd is installed and removed
# in a scratch root (dpkg --root) beside a stand-in condor package, in both orders.
set -u
. "$1"
for tool in dpkg-buildpackage dh dpkg-deb; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool missing (apt-get install dpkg-dev debhelper, or make deps)"
    exit 77
  fi
done
fails=0
check() {
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
out=$(mktemp -d /tmp/procd-test-deb.XXXXXX)
trap 'rm -rf "$out"' EXIT
if ! "$src_dir/cmake/make-deb.sh" "$out" >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  echo "FAIL make-deb.sh"
  exit 1
fi
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
files() { # the regular files and links of a package, one path a line, sorted
  dpkg-deb -c "$1" | awk '$1 !~ /^d/ { p = $6; sub(/^\./, "", p); print p }' | sort
}
expect() { # expect PACKAGE PATH...
  local deb="$out/$1_${version}_$arch.deb"; shift
  if [ ! -f "$deb" ]; then
    check "$(basename "$deb") built" false
    return
  fi
  printf '%s\n' "$@" | sort >"$out/expected"
  files "$deb" >"$out/got"
  check "$(basename "$deb") holds the expected files" diff -u "$out/expected" "$out/got"
}
expect procd \
  /usr/sbin/procd /usr/bin/procctl /usr/bin/procd-starter \
  "/lib/$ma/security/pam_procd_adopt.so" \
  /lib/systemd/system/procd.service /lib/systemd/system/procd-families.service /etc/procd/procd.conf \
  /usr/share/man/man8/procd.8.gz /usr/share/man/man1/procctl.1.gz /usr/share/man/man1/procd-starter.1.gz \
  /usr/share/man/man5/procd.conf.5.gz /usr/share/man/man8/pam_procd_adopt.8.gz \
  /usr/share/man/man7/procd-dbus.7.gz \
  /usr/share/bash-completion/completions/procd \
  /usr/share/bash-completion/completions/procctl /usr/share/bash-completion/completions/procd-starter \
  /usr/share/procd/procd-alerts.yml /usr/share/procd/procd-dashboard.json \
  /usr/share/doc/procd/README.md.gz /usr/share/doc/procd/NOTES.gz /usr/share/doc/procd/changelog.gz \
  /usr/share/doc/procd/copyright
expect libprocd-client1 \
  "/usr/lib/$ma/libprocd-client.so.$version" "/usr/lib/$ma/libprocd-client.so.$soversion" \
  /usr/share/doc/libprocd-client1/changelog.gz /usr/share/doc/libprocd-client1/copyright
expect libprocd-client-dev \
  "/usr/lib/$ma/libprocd-client.so" "/usr/lib/$ma/pkgconfig/libprocd-client.pc" \
  "/usr/include/procd-client-$soversion/procd/client.h" "/usr/include/procd-client-$soversion/procd/version.h" \
  "/usr/include/procd-client-$soversion/procd/types.h" \
  "/usr/include/procd-client-$soversion/procd/job-info.h" \
  "/usr/include/procd-client-$soversion/procd/usage.h" \
  "/usr/include/procd-client-$soversion/procd/wire.h" \
  /usr/share/man/man3/libprocd-client.3.gz \
  /usr/share/doc/libprocd-client-dev/changelog.gz /usr/share/doc/libprocd-client-dev/copyright
expect procd-slurm \
  "/usr/lib/$ma/slurm-wlm/procd_spank.so" /etc/slurm/plugstack.conf.d/procd.conf \
  /usr/share/doc/procd-slurm/changelog.gz /usr/share/doc/procd-slurm/copyright

deb="$out/procd_${version}_$arch.deb"
if [ -f "$deb" ]; then
  dpkg-deb -x "$deb" "$out/x"
  dpkg-deb -e "$deb" "$out/ctl"
  check "unit runs /usr/sbin/procd" grep -q "^ExecStart=/usr/sbin/procd --foreground --log journal " "$out/x/lib/systemd/system/procd.service"
  check "postinst enables and starts the unit (dh_installsystemd)" \
    bash -c "grep -q 'deb-systemd-helper' '$out/ctl/postinst' && grep -q 'procd.service' '$out/ctl/postinst'"
  check "postrm purges the unit's state" grep -q 'deb-systemd-helper purge' "$out/ctl/postrm"
  check "procd.conf is a conffile" grep -qx /etc/procd/procd.conf "$out/ctl/conffiles"
  check "the programs print the version" test "$("$out/x/usr/sbin/procd" --version)" = "procd $version"
fi
lib="$out/libprocd-client1_${version}_$arch.deb"
if [ -f "$lib" ]; then
  dpkg-deb -x "$lib" "$out/l"
  check "libprocd-client1 has the SONAME" \
    bash -c "readelf -d '$out/l/usr/lib/$ma/libprocd-client.so.$version' | grep -q 'SONAME.*libprocd-client.so.$soversion'"
  check "libprocd-client1 has a shlibs file" bash -c "dpkg-deb -I '$lib' shlibs | grep -q 'libprocd-client $soversion libprocd-client1'"
fi
expect procd-condor-compat \
  /usr/sbin/condor_procd /usr/share/doc/procd-condor-compat/changelog.gz /usr/share/doc/procd-condor-compat/copyright

# Beside HTCondor's condor package, which owns /usr/sbin/condor_procd: in a scratch root
# with its own dpkg database (dpkg --root), never the host's.  procd is unpacked (its
# postinst enables a systemd unit: not here); the compat package's scripts only call
# dpkg-divert, which acts on $DPKG_ROOT, so they run chrootless.
compat="$out/procd-condor-compat_${version}_$arch.deb"
if [ -f "$deb" ] && [ -f "$compat" ]; then
  R=$out/root
  mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
  : >"$R/var/lib/dpkg/status"
  standin() { # standin NAME: a package NAME that owns /usr/sbin/condor_procd (a script)
    local d=$out/$1
    mkdir -p "$d/DEBIAN" "$d/usr/sbin"
    printf '#!/bin/sh\necho htcondor condor_procd\n' >"$d/usr/sbin/condor_procd"
    chmod 755 "$d/usr/sbin/condor_procd"
    printf 'Package: %s\nVersion: 23.0.0-1\nArchitecture: all\nMaintainer: test <test@example.invalid>\nDescription: stand-in owning /usr/sbin/condor_procd\n' \
      "$1" >"$d/DEBIAN/control"
    dpkg-deb --root-owner-group --build "$d" "$out/$1.deb" >/dev/null
  }
  standin condor
  standin condor-clash # a second owner: what dpkg refused with procd's old link
  dpkgr() { dpkg --root="$R" --log=/dev/null --force-depends --force-script-chrootless "$@" >>"$out/dpkg.log" 2>&1; }
  htcondor() { [ "$("$R/usr/sbin/$1")" = "htcondor condor_procd" ]; }
  ours() { [ "$(readlink "$R/usr/sbin/condor_procd")" = procd ]; }
  diverted() { dpkg-divert --root="$R" --list | grep -q "diversion of /usr/sbin/condor_procd to /usr/sbin/condor_procd.htcondor by procd-condor-compat"; }
  check "condor (stand-in) installs first" dpkgr -i "$out/condor.deb"
  check "a second owner of condor_procd is refused (the collision)" bash -c "! dpkg --root='$R' --log=/dev/null -i '$out/condor-clash.deb' >>'$out/dpkg.log' 2>&1"
  check "procd unpacks beside condor" dpkgr --unpack "$deb"
  check "condor_procd is still HTCondor's" htcondor condor_procd
  check "procd-condor-compat installs" dpkgr -i "$compat"
  check "... diverting HTCondor's condor_procd" diverted
  check "... to condor_procd.htcondor, intact" htcondor condor_procd.htcondor
  check "... and condor_procd is procd" ours
  check "dpkg -S names the compat package" bash -c "dpkg --root='$R' -S /usr/sbin/condor_procd | tee -a '$out/dpkg.log' | grep -q 'procd-condor-compat.*: /usr/sbin/condor_procd\$'"
  reinstall() { dpkgr -i "$compat" && ours && diverted; }
  check "reinstalling the compat package keeps it so" reinstall
  check "removing the compat package" dpkgr -r procd-condor-compat
  check "... puts HTCondor's condor_procd back" htcondor condor_procd
  check "... and drops the diversion" bash -c "! dpkg-divert --root='$R' --list | grep -q condor_procd && [ ! -e '$R/usr/sbin/condor_procd.htcondor' ]"
  # the other order: the compat package first, then condor
  check "purge condor" dpkgr -P condor
  check "compat installs without condor" dpkgr -i "$compat"
  check "condor installs after it" dpkgr -i "$out/condor.deb"
  check "... its condor_procd lands diverted" htcondor condor_procd.htcondor
  check "... condor_procd stays procd" ours
  remove_compat() { dpkgr -r procd-condor-compat && htcondor condor_procd; }
  check "removing the compat package puts condor's back" remove_compat
  [ "$fails" -eq 0 ] || tail -30 "$out/dpkg.log"
fi

slurm="$out/procd-slurm_${version}_$arch.deb"
if [ -f "$slurm" ]; then
  check "procd-slurm depends on procd and libprocd-client1" \
    bash -c "dpkg-deb -f '$slurm' Depends | grep -q 'procd (= $version)' && dpkg-deb -f '$slurm' Depends | grep -q libprocd-client1"
  check "its plugstack.conf line is a conffile" \
    bash -c "dpkg-deb -e '$slurm' '$out/sctl' && grep -qx /etc/slurm/plugstack.conf.d/procd.conf '$out/sctl/conffiles'"
fi
[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all .deb checks passed"
