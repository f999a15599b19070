#!/bin/bash
# fresh-debian-debs.sh: the Debian packages installed, used and purged in a
# fresh Debian 12 (as tests/fresh-debian.sh does for README's steps).
#
#   sudo packaging/fresh-debian-debs.sh [--debs DIR] [--root DIR] [--mirror URL] [--keep]
#
# Builds the packages first (packaging/build-debs.sh) unless --debs names a
# directory that has them; makes a minimal Debian 12 with debootstrap
# (--variant=minbase); copies in the packages (/debs) and the committed tree
# (/src: tests/slurm/lib.sh brings up the Slurm); and runs
# packaging/in-chroot.sh there: install both packages, gpupack --version, a
# simulated MPS farm with the packaged stand-in, the packaged plugin loaded by
# slurmd in a four-node Slurm, purge, nothing left. The transcript is this
# script's output (bench/results/ keeps one). Needs root, debootstrap and a
# Debian mirror (the one this machine's apt uses). Exit 0 when every step passed.
set -u
cd "$(dirname "$0")/.." || exit 3
DEBS='' ROOT='' MIRROR='' KEEP=0
while [ $# -gt 0 ]; do
	case $1 in
	--debs) DEBS=$2; shift ;;
	--root) ROOT=$2; shift ;;
	--mirror) MIRROR=$2; shift ;;
	--keep) KEEP=1 ;;
	*) echo "fresh-debian-debs: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian-debs: needs root (debootstrap, chroot)" >&2; exit 3; }
command -v debootstrap >/dev/null || { echo "fresh-debian-debs: debootstrap is not installed" >&2; exit 3; }
if [ -z "$DEBS" ]; then
	DEBS=build/debs
	packaging/build-debs.sh --out "$DEBS" >/dev/null || { echo "fresh-debian-debs: the packages did not build" >&2; exit 1; }
fi
ls "$DEBS"/gpupack_*.deb "$DEBS"/gpupack-slurm-plugin_*.deb >/dev/null 2>&1 ||
	{ echo "fresh-debian-debs: no gpupack_*.deb and gpupack-slurm-plugin_*.deb in $DEBS" >&2; exit 2; }
if [ -z "$MIRROR" ]; then
	MIRROR=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p; s/^deb \(http[^ ]*debian\) bookworm .*/\1/p' \
	    /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
if [ -z "$ROOT" ]; then
	ROOT=$(mktemp -d /var/tmp/fresh-debs.XXXXXX) || exit 3
	chmod 755 "$ROOT"
fi
cleanup() {
	for m in dev/pts dev proc sys tmp; do
		mountpoint -q "$ROOT/$m" && umount -R -l "$ROOT/$m"
	done
	[ "$KEEP" -eq 1 ] || rm -rf --one-file-system "$ROOT"
}
trap cleanup EXIT

echo "fresh-debian-debs: $(date -u +%Y-%m-%dT%H:%M:%SZ), tree $(git rev-parse --short HEAD)" \
    "$(git diff --quiet HEAD || echo '(uncommitted changes are NOT in it)'), mirror $MIRROR"
echo "packages: $(cd "$DEBS" && ls gpupack_*.deb gpupack-slurm-plugin_*.deb | tr '\n' ' ')"
echo "host: $(uname -sr), $(nproc) CPUs"
t=$(date +%s)
if ! debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1; then
	echo "fresh-debian-debs: debootstrap failed (no network to $MIRROR?): see $ROOT.debootstrap.log" >&2
	exit 3
fi
rm -f "$ROOT.debootstrap.log"
echo "== debootstrap --variant=minbase bookworm: $(($(date +%s) - t)) s"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# minbase has no /etc/hosts: Slurm's SlurmctldHost=localhost needs one
[ -e "$ROOT/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n' >"$ROOT/etc/hosts"
# this machine's sources inside (its updates and security too), else the mirror's main
if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
	cp /etc/apt/sources.list.d/*.sources "$ROOT/etc/apt/sources.list.d/"
	: >"$ROOT/etc/apt/sources.list"
else
	echo "deb $MIRROR bookworm main" >"$ROOT/etc/apt/sources.list"
fi
mount -t proc proc "$ROOT/proc"
# /sys with its cgroup filesystem: slurmd will not start without /sys/fs/cgroup
mount --rbind /sys "$ROOT/sys"
mount --bind /dev "$ROOT/dev"
mount -t devpts devpts "$ROOT/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$ROOT/tmp"
mkdir -p "$ROOT/debs" "$ROOT/src"
cp "$DEBS"/gpupack_*.deb "$DEBS"/gpupack-slurm-plugin_*.deb "$ROOT/debs/"
git archive HEAD | tar -x -C "$ROOT/src"
chroot "$ROOT" env -i HOME=/root TERM=dumb bash /src/packaging/in-chroot.sh 2>&1
