#!/usr/bin/env bash
# Installs the Debian packages procd builds and tests with, only those missing.
set -eu
pkgs=(build-essential cmake pkg-config libglib2.0-dev libglib2.0-bin libdbus-1-dev dbus-bin
      libcunit1-dev libbpf-dev libpam0g-dev pamtester cgroup-tools valgrind systemd scdoc dpkg-dev debhelper
      prometheus prometheus-node-exporter curl python3  # test_metrics: promtool, a real exporter
      libslurm-dev slurmctld slurmd slurm-client munge jq bc  # the SPANK plugin, tests/slurm
      qemu-system-x86 busybox-static cpio xz-utils e2fsprogs)  # the last line: tests/vm/run
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
