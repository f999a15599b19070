#!/bin/bash
# build-debs.sh: the Debian packages from the committed tree.
#
#   packaging/build-debs.sh [--out DIR]
#
# Exports HEAD (git archive: what a clone gets, nothing of the work tree's
# builds), runs dpkg-buildpackage -b (binary packages: gpupack and
# gpupack-slurm-plugin, the latter against the installed libslurm-dev), then
# lintian on them. The packages, the build log and lintian's output go to DIR
# (default build/debs). Needs dpkg-dev, debhelper, libslurm-dev, lintian
# (packaging/README.md); exit 0 when the build succeeds and lintian reports
# no error or warning.
set -u
cd "$(dirname "$0")/.." || exit 3
OUT=build/debs
while [ $# -gt 0 ]; do
	case $1 in
	--out) OUT=$2; shift ;;
	*) echo "build-debs: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
for t in dpkg-buildpackage dh lintian git; do
	command -v "$t" >/dev/null || { echo "build-debs: $t is not installed (packaging/README.md)" >&2; exit 3; }
done
[ -f /usr/include/slurm/spank.h ] || { echo "build-debs: libslurm-dev is not installed" >&2; exit 3; }
VERSION=$(dpkg-parsechangelog -S Version)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d /tmp/gpupack-debs.XXXXXX)
trap 'rm -rf "$W"' EXIT
git archive --prefix="gpupack-$VERSION/" HEAD | tar -x -C "$W"
echo "build-debs: tree $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (uncommitted changes are NOT in it)'), version $VERSION"
(cd "$W/gpupack-$VERSION" && dpkg-buildpackage -us -uc -b) >"$OUT/build.log" 2>&1
rc=$?
tail -n 5 "$OUT/build.log"
[ "$rc" -eq 0 ] || { echo "build-debs: dpkg-buildpackage failed (exit $rc): $OUT/build.log" >&2; exit 1; }
rm -f "$OUT"/*.deb
cp "$W"/*.deb "$W"/*.changes "$W"/*.buildinfo "$OUT"/
lintian --info --display-info --pedantic "$W"/*.changes >"$OUT/lintian.txt" 2>&1
echo "build-debs: lintian ($(wc -l <"$OUT/lintian.txt") lines: $OUT/lintian.txt)"
cat "$OUT/lintian.txt"
ls -l "$OUT"/*.deb
if grep -q '^[EW]: ' "$OUT/lintian.txt"; then
	echo "build-debs: lintian reports errors or warnings" >&2
	exit 1
fi
