#!/bin/sh
# install.t: make install puts the binary, man page, completion and
# topologies under DESTDIR/PREFIX; --sim NAME finds an installed topology
# by its name; make uninstall takes away exactly what install put there.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

if ! command -v make >/dev/null 2>&1; then
	echo "1..0 # SKIP make is not installed"
	trap - EXIT
	rm -rf "$T"
	exit 0
fi
# make install would rebuild a binary whose sources changed since it was built, with this
# make's flags (not the sanitizer pass's): then say so rather than break the build under test
if ! make -s -q -C "$GPUPACK_SRC" B="$GPUPACK_BUILD" "$GPUPACK_BUILD/gpupack" 2>/dev/null; then
	ok 1 "$GPUPACK_BUILD/gpupack is up to date with its sources (rebuild it: make)"
	exit 1
fi
D="$T/inst"
mkdir -p "$D/usr/share/gpupack/keep"
touch "$D/usr/share/gpupack/keep/mine"
# the sanitizer build has no Slurm plugin (make check leaves it out): install without it there
nospank=
[ "${GPUPACK_TEST_PASS:-}" = san ] && nospank=SPANK_H=
# shellcheck disable=SC2086 # $nospank: nothing or one word
run make -s -C "$GPUPACK_SRC" install B="$GPUPACK_BUILD" DESTDIR="$D" PREFIX=/usr $nospank
is "$rc" 0 "make install"
for f in bin/gpupack share/man/man1/gpupack.1 share/bash-completion/completions/gpupack \
	share/zsh/site-functions/_gpupack share/gpupack/topologies/h100-80gb.topo \
	libexec/gpupack/sim-mps-control libexec/gpupack/sim-mps-client; do
	ok "$([ -f "$D/usr/$f" ]; echo $?)" "installed $f"
done
if [ -z "$nospank" ] && [ -f "$GPUPACK_BUILD/gpupack_spank.so" ]; then
	ok "$([ -f "$D/usr/lib/gpupack/gpupack_spank.so" ]; echo $?)" "installed the Slurm plugin"
else
	ok 0 "# SKIP no Slurm plugin in this build"
fi
cd "$T" || exit 1
run "$D/usr/bin/gpupack" --sim h100-80gb devices
is "$rc" 0 "--sim NAME: an installed topology by its name"
like "$out" "simulated: $D/usr/bin/../share/gpupack/topologies/h100-80gb.topo" "found beside the installed binary"
run "$D/usr/bin/gpupack" --sim h200-141gb-x2.topo devices --json
is "$(printf '%s' "$out" | jq -r '.gpus | length')" 2 "--sim NAME.topo too"
# a simulated machine's MPS: the installed stand-in, found beside the installed binary
run env -u GPUPACK_MPS_CONTROL PATH=/usr/bin:/bin "$D/usr/bin/gpupack" --sim h100-80gb mps start --gpus 0
pid=$(printf '%s' "$out" | sed -n 's/.*daemon \([0-9]*\),.*/\1/p')
is "$(readlink "/proc/$pid/exe" 2>/dev/null)" "$D/usr/libexec/gpupack/sim-mps-control" \
	"--sim ... mps start: the installed stand-in daemon"
run env -u GPUPACK_MPS_CONTROL PATH=/usr/bin:/bin "$D/usr/bin/gpupack" --sim h100-80gb run --share mps \
	"$D/usr/libexec/gpupack/sim-mps-client" --ms 1{} ::: 1 2
is "$rc:$(printf '%s\n' "$out" | grep -c '^mps=1')" "0:2" "--sim ... run --share mps: two clients of it"
env -u GPUPACK_MPS_CONTROL "$D/usr/bin/gpupack" --sim h100-80gb mps stop --gpus 0 >/dev/null 2>&1
run "$D/usr/bin/gpupack" --sim no-such-machine devices
is "$rc" 2 "an unknown name: exit 2"
one_line "$err" "an unknown name: one line"
# shellcheck disable=SC2086
run make -s -C "$GPUPACK_SRC" uninstall B="$GPUPACK_BUILD" DESTDIR="$D" PREFIX=/usr $nospank
is "$rc" 0 "make uninstall"
is "$(cd "$D" && find . -type f | sort | tr '\n' ' ')" "./usr/share/gpupack/keep/mine " \
	"every file install put there is gone, and only those"
ok "$([ ! -d "$D/usr/share/gpupack/topologies" ]; echo $?)" "the topologies directory too"
