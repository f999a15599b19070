#!/usr/bin/env bash
# dispatch.sh: dispatch overhead of gpupack run against xargs -P and GNU
# parallel: N no-op tasks (`true`) at the same concurrency, run side by
# side, alternating the order each round; medians of the wall times.
#
#   bench/dispatch.sh [OUT.md]        (default bench/results/dispatch.md)
#   N=20000 J=8 ROUNDS=3 GPUPACK=build/gpupack bench/dispatch.sh
#
# gpupack runs on a simulated H100 (--sim, --share timeslice -j J): the farm
# is the same code with or without a GPU; no joblog, so no fsync per task
# (with --joblog each task's end is fdatasync'd: measured separately below).
set -u
cd "$(dirname "$0")/.." || exit 1
N=${N:-20000}
J=${J:-8}
ROUNDS=${ROUNDS:-3}
GPUPACK=${GPUPACK:-build/gpupack}
OUT=${1:-bench/results/dispatch.md}
TOPO=topologies/h100-80gb.topo
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
seq "$N" >"$TMP/in"
export GPUPACK_STATE_DIR="$TMP/state"

[ -x "$GPUPACK" ] || { echo "dispatch.sh: $GPUPACK not built (make)" >&2; exit 1; }
command -v parallel >/dev/null || { echo "dispatch.sh: GNU parallel not installed" >&2; exit 1; }
mkdir -p ~/.parallel && touch ~/.parallel/will-cite

now() { date +%s.%N; }

# run NAME: one timed run, appended to $TMP/NAME.times
run() {
	local t0 t1 rc
	t0=$(now)
	case $1 in
	gpupack) "$GPUPACK" --sim "$TOPO" run --share timeslice -j "$J" -a "$TMP/in" true >/dev/null ;;
	gpupack-joblog) "$GPUPACK" --sim "$TOPO" run --share timeslice -j "$J" --joblog "$TMP/jl" -a "$TMP/in" true >/dev/null ;;
	xargs) xargs -P "$J" -n 1 true <"$TMP/in" ;;
	parallel) parallel --will-cite -j "$J" true <"$TMP/in" >/dev/null ;;
	esac
	rc=$?
	t1=$(now)
	[ "$rc" -eq 0 ] || { echo "dispatch.sh: $1 exited $rc" >&2; exit 1; }
	echo "$t1 - $t0" | bc -l >>"$TMP/$1.times"
	printf '%-15s round %d: %.2f s\n' "$1" "$2" "$(tail -n 1 "$TMP/$1.times")" >&2
}

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

tools=(gpupack xargs parallel gpupack-joblog)
for r in $(seq "$ROUNDS"); do
	# rotate the order each round so that no tool always runs first (or warm)
	for i in 0 1 2 3; do
		run "${tools[$(((i + r) % 4))]}" "$r"
	done
done

g=$(median "$TMP/gpupack.times")
x=$(median "$TMP/xargs.times")
p=$(median "$TMP/parallel.times")
gj=$(median "$TMP/gpupack-joblog.times")
rx=$(echo "$g / $x" | bc -l)
rp=$(echo "$p / $g" | bc -l)
verdict_x=$(echo "$rx <= 1.3" | bc -l)
verdict_p=$(echo "$rp >= 3" | bc -l)
{
	echo "# Dispatch overhead: gpupack run vs xargs -P vs GNU parallel"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')),"
	echo "$(uname -sr), gpupack $("$GPUPACK" --version | cut -d' ' -f2), $(parallel --version | head -n 1), $(xargs --version | head -n 1)."
	echo
	echo "$N tasks of \`true\`, concurrency $J, $ROUNDS rounds side by side (order rotated each round), medians."
	echo "Command: \`N=$N J=$J ROUNDS=$ROUNDS bench/dispatch.sh\`"
	echo
	echo "| tool | median wall s | all rounds s | tasks/s |"
	echo "|---|---:|---:|---:|"
	for t in gpupack xargs parallel gpupack-joblog; do
		m=$(median "$TMP/$t.times")
		printf '| %s | %.2f | %s | %.0f |\n' "$t" "$m" "$(xargs printf '%.2f ' <"$TMP/$t.times")" "$(echo "$N / $m" | bc -l)"
	done
	echo
	printf -- '- gpupack / xargs -P: **%.2fx** (goal: within 1.3x): %s\n' "$rx" "$([ "$verdict_x" = 1 ] && echo met || echo NOT met)"
	printf -- '- GNU parallel / gpupack: **%.2fx** (goal: at least 3x): %s\n' "$rp" "$([ "$verdict_p" = 1 ] && echo met || echo NOT met)"
	printf -- '- gpupack with --joblog (one fdatasync per task end, joblog in %s): %.2f s\n' "$TMP" "$gj"
	echo
	echo "gpupack: \`gpupack --sim $TOPO run --share timeslice -j $J -a FILE true\`;"
	echo "xargs: \`xargs -P $J -n 1 true <FILE\`; parallel: \`parallel -j $J true <FILE\`."
} >"$OUT"
cat "$OUT"
