#!/usr/bin/env bash
# make-deb.sh OUTDIR - build procd's Debian packages (procd, libprocd-client1,
# libprocd-client-dev, procd-slurm) with debhelper from a copy of this source tree in OUTDIR/src, so
# that neither the tree nor its parent directory gets build products.  The .debs land in
# OUTDIR.  Needs dpkg-dev, debhelper and libslurm-dev (make deps installs them).
set -eu
out=$(realpath -m "${1:?usage: make-deb.sh OUTDIR}")
top=$(cd "$(dirname "$0")/.." && pwd)
for tool in dpkg-buildpackage dh; do
  command -v "$tool" >/dev/null || { echo "make-deb.sh: $tool missing (apt-get install dpkg-dev debhelper)" >&2; exit 1; }
done
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src="$out/src/procd-$version"
rm -rf "$out/src"
mkdir -p "$src"
# the files of the tree, without build directories (git's list when it is a checkout)
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$top" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$src")
else
  tar -C "$top" --exclude='./build*' --exclude='./debian/tmp' -cf - . | tar -C "$src" -xf -
fi
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
(cd "$src" && dpkg-buildpackage -b -us -uc)
# dpkg-buildpackage writes next to the source directory
mv "$out/src"/*.deb "$out/src"/*.buildinfo "$out/src"/*.changes "$out/"
rm -rf "$out/src"
ls "$out"/*.deb
