#!/bin/bash
# shellcheck disable=SC2016  # the blocks' script has single-quoted $ on purpose: it runs in the chroot
# fresh-debian.sh: README.md's steps, literally and in order, on a fresh Debian 12 (issue 32).
#
#   sudo tests/fresh-debian.sh [--root DIR] [--mirror URL] [--keep] [--check-limit SECONDS]
#
# Makes a minimal Debian 12 with debootstrap (--variant=minbase: less than a stock install, so a
# package the README forgets shows), copies in the committed tree (git archive HEAD: what a clone
# gets), and runs the commands of README.md's first two sh blocks as they are written: the first
# block's install step as root, everything else as a plain user in their home, in one shell per
# block (so the Install block's export PATH holds for its next lines). Each command is echoed,
# timed and its exit status printed; the summary at the end lists them. No GPU is used.
#
# The mirror is the one this machine's apt uses (/etc/apt/sources.list*), else deb.debian.org.
# --check-limit stops `make check` after SECONDS (0: no limit), for machines too slow for it.
# Needs root (debootstrap, chroot, mounts). Not part of make check or CI: it downloads Debian.
set -u
cd "$(dirname "$0")/.." || exit 3
SRC=$PWD
ROOT='' MIRROR='' KEEP=0 LIMIT=0
while [ $# -gt 0 ]; do
	case $1 in
	--root) ROOT=$2; shift ;;
	--mirror) MIRROR=$2; shift ;;
	--keep) KEEP=1 ;;
	--check-limit) LIMIT=$2; shift ;;
	*) echo "fresh-debian: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian: needs root (debootstrap, chroot)" >&2; exit 3; }
command -v debootstrap >/dev/null || { echo "fresh-debian: debootstrap is not installed" >&2; exit 3; }
if [ -z "$MIRROR" ]; then
	MIRROR=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p; s/^deb \(http[^ ]*debian\) bookworm .*/\1/p' \
	    /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
if [ -z "$ROOT" ]; then
	ROOT=$(mktemp -d /var/tmp/fresh-debian.XXXXXX) || exit 3
	chmod 755 "$ROOT"   # the chroot's /: the plain user must get through it
fi
U=newbie
H=/home/$U

now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'; }
SUMMARY=()
note() { SUMMARY+=("$1"); }

cleanup() {
	for m in dev/pts dev proc sys tmp; do
		mountpoint -q "$ROOT/$m" && umount -l "$ROOT/$m"
	done
	[ "$KEEP" -eq 1 ] || rm -rf --one-file-system "$ROOT"
}
trap cleanup EXIT

echo "fresh-debian: $(date -u +%Y-%m-%dT%H:%M:%SZ), tree $(git rev-parse --short HEAD)" \
    "$(git diff --quiet HEAD || echo '(uncommitted changes are NOT in it)'), mirror $MIRROR, root $ROOT"
echo "host: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- a fresh Debian ----------------------------------------------------------
t=$(now)
if ! debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1; then
	echo "fresh-debian: debootstrap failed (no network to $MIRROR?): see $ROOT.debootstrap.log" >&2
	exit 3
fi
rm -f "$ROOT.debootstrap.log"
note "debootstrap --variant=minbase bookworm: $(took "$t") s"
echo "== debootstrap --variant=minbase bookworm $MIRROR: $(took "$t") s"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mount -t proc proc "$ROOT/proc"
mount -t sysfs sys "$ROOT/sys"
mount --bind /dev "$ROOT/dev"
mount -t devpts devpts "$ROOT/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$ROOT/tmp"
: >"$ROOT/tmp/steps"
chmod 666 "$ROOT/tmp/steps"
chroot "$ROOT" useradd -m -s /bin/bash "$U"
uid=$(awk -F: -v u="$U" '$1 == u { print $3 }' "$ROOT/etc/passwd")
# what a clone has: the committed tree
mkdir -p "$ROOT$H/gpupack"
git archive HEAD | tar -x -C "$ROOT$H/gpupack"
chroot "$ROOT" chown -R "$U:$U" "$H/gpupack"

# ---- README's commands ------------------------------------------------------------
# The sh blocks of README.md, in order: block N's lines, continuation lines joined.
block() {
	awk -v want="$1" '
		/^```sh$/ { n++; inb = (n == want); next }
		/^```/ { inb = 0; next }
		inb { print }' "$SRC/README.md" | awk '
		/\\$/ { sub(/\\$/, ""); line = line $0; next }
		{ print line $0; line = "" }'
}

# run_block N WHO: one shell runs the block; each command echoed, timed, its status said
run_block() {
	local n=$1 who=$2 script=$ROOT/tmp/block$1.sh cmd
	{
		echo 'cd "$HOME/gpupack" 2>/dev/null || cd'
		echo 'export DEBIAN_FRONTEND=noninteractive'
		while IFS= read -r cmd; do
			case $cmd in ''|'#'*) continue ;; esac
			printf 'echo; echo %q\n' "\$ $cmd"
			echo 't0=$(date +%s.%N)'
			if [ "$cmd" = "make check" ] && [ "$LIMIT" -gt 0 ]; then
				echo "timeout -s INT $LIMIT $cmd"
			else
				echo "$cmd"
			fi
			echo 'rc=$?'
			printf 'echo "[exit $rc, $(awk -v a=$t0 -v b=$(date +%%s.%%N) %q)]"\n' \
			    'BEGIN { printf "%.0f s", b - a }'
			printf 'printf "STEP rc=%%s %%s\\n" "$rc" %q >>/tmp/steps\n' "$cmd"
		done < <(block "$n" | if [ "$who" = root ]; then grep '^apt-get\|^#'; else grep -v '^apt-get'; fi)
	} >"$script"
	if [ "$who" = root ]; then
		chroot "$ROOT" env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb bash "/tmp/block$n.sh"
	else
		chroot --userspec="$uid:$uid" "$ROOT" env -i HOME=$H USER=$U LOGNAME=$U SHELL=/bin/bash \
		    PATH=/usr/local/bin:/usr/bin:/bin TERM=dumb LANG=C.UTF-8 bash "/tmp/block$n.sh"
	fi 2>&1 | shorten
}

# the compiler's command lines run to 3,000 characters: the log keeps their start and end
shorten() {
	awk '{ if (length($0) > 300) print substr($0, 1, 200) " [...] " substr($0, length($0) - 60); else print; fflush() }'
}

echo
echo "== README.md, block 1 (install step as root; the two commands as $U)"
t=$(now)
run_block 1 root
note "block 1, install step: $(took "$t") s"
t=$(now)
run_block 1 user
note "block 1, make && bench/demo; make check: $(took "$t") s"
echo
echo "== README.md, block 2: Install (as $U)"
t=$(now)
run_block 2 user
note "block 2, install, man page, uninstall: $(took "$t") s"
# what uninstall left in ~/.local (it must be nothing of gpupack's)
left=$(cd "$ROOT$H" && find .local -type f 2>/dev/null | sort)
echo
echo "== after make uninstall, files left under ~/.local: ${left:-none}"

echo
echo "== summary"
cat "$ROOT/tmp/steps"
printf '%s\n' "${SUMMARY[@]}"
want=$( (block 1; block 2) | grep -cv '^#\|^$')
ran=$(grep -c '^STEP' "$ROOT/tmp/steps")
fails=$(grep -vc '^STEP rc=0 ' "$ROOT/tmp/steps")
echo "RESULT fresh-debian: $ran of README's $want commands ran, $fails failed"
[ "$ran" -eq "$want" ] && [ "$fails" -eq 0 ] && [ -z "$left" ]
