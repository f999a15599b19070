#!/usr/bin/env bash
# dispatch.sh: dispatch overhead of gpupack run against xargs -P and GNU
# parallel: N no-op tasks (`true`) at the same concurrency, run side by
# side, alternating the order each round; medians of the wall times. Then
# the same with a command line that needs a shell (`true {}; true`): gpupack
# and parallel start the shell for each task, as xargs running `bash -c`
# does; that shell's start is the floor they are compared with.
#
#   bench/dispatch.sh [OUT.md]        (default bench/results/dispatch.md)
#   N=20000 J=8 ROUNDS=3 PN=2000 GPUPACK=build/gpupack bench/dispatch.sh
#
# gpupack runs on a simulated H100 (--sim, --share timeslice -j J): the farm
# is the same code with or without a GPU; no joblog, so no fsync per task
# (with --joblog each task's end is fdatasync'd: measured separately below).
# GNU parallel runs PN tasks (default N; its rate does not depend on N, and
# at 20,000 it takes minutes a round): compared as tasks per second.
# gpupack-auto is gpupack without -j: the default, -j auto, choosing the
# count itself (on a simulated device from the CPUs and completions).
# TOOLS="gpupack-auto gpupack xargs" runs a subset (the report then names
# only the ratios it has).
set -u
cd "$(dirname "$0")/.." || exit 1
N=${N:-20000}
PN=${PN:-$N}
J=${J:-8}
ROUNDS=${ROUNDS:-3}
GPUPACK=${GPUPACK:-build/gpupack}
OUT=${1:-bench/results/dispatch.md}
TOPO=topologies/h100-80gb.topo
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
seq "$N" >"$TMP/in"
seq "$PN" >"$TMP/pin"
SH=$(command -v bash)
export GPUPACK_STATE_DIR="$TMP/state"

[ -x "$GPUPACK" ] || { echo "dispatch.sh: $GPUPACK not built (make)" >&2; exit 1; }
case " ${TOOLS:-parallel} " in
*" parallel"*) command -v parallel >/dev/null || { echo "dispatch.sh: GNU parallel not installed" >&2; exit 1; } ;;
esac
mkdir -p ~/.parallel && touch ~/.parallel/will-cite

now() { date +%s.%N; }

# run NAME: one timed run, appended to $TMP/NAME.times
run() {
	local t0 t1 rc
	t0=$(now)
	case $1 in
	gpupack) "$GPUPACK" --sim "$TOPO" run --share timeslice -j "$J" -a "$TMP/in" true >/dev/null ;;
	gpupack-auto) "$GPUPACK" --sim "$TOPO" run --share timeslice -a "$TMP/in" true >/dev/null ;;
	gpupack-joblog) "$GPUPACK" --sim "$TOPO" run --share timeslice -j "$J" --joblog "$TMP/jl" -a "$TMP/in" true >/dev/null ;;
	xargs) xargs -P "$J" -n 1 true <"$TMP/in" ;;
	parallel) parallel --will-cite -j "$J" true <"$TMP/pin" >/dev/null ;;
	# a line with shell syntax: each task is one start of the shell (bash: this script's, which
	# gpupack and parallel both pick as the shell they were started from)
	gpupack-sh) "$GPUPACK" --sim "$TOPO" run --share timeslice -j "$J" -a "$TMP/in" 'true {}; true' >/dev/null ;;
	xargs-sh) xargs -P "$J" -n 1 "$SH" -c 'true "$1"; true' _ <"$TMP/in" ;;
	parallel-sh) parallel --will-cite -j "$J" 'true {}; true' <"$TMP/pin" >/dev/null ;;
	esac
	rc=$?
	t1=$(now)
	[ "$rc" -eq 0 ] || { echo "dispatch.sh: $1 exited $rc" >&2; exit 1; }
	echo "$t1 - $t0" | bc -l >>"$TMP/$1.times"
	printf '%-15s round %d: %.2f s\n' "$1" "$2" "$(tail -n 1 "$TMP/$1.times")" >&2
}

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

read -r -a tools <<<"${TOOLS:-gpupack gpupack-auto xargs parallel gpupack-joblog gpupack-sh xargs-sh parallel-sh}"
nt=${#tools[@]}
# the machine may be shared: the report says how loaded it was
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$ROUNDS"); do
	# rotate the order each round so that no tool always runs first (or warm)
	for i in $(seq 0 $((nt - 1))); do
		run "${tools[$(((i + r) % nt))]}" "$r"
	done
done
tasks_of() { case $1 in parallel*) echo "$PN" ;; *) echo "$N" ;; esac; }
# rate NAME: tasks per second of the median round
rate() { echo "$(tasks_of "$1") / $(median "$TMP/$1.times")" | bc -l; }

has() { case " ${tools[*]} " in *" $1 "*) return 0 ;; esac; return 1; }
load1=$(cut -d' ' -f1-3 /proc/loadavg)
# ratio A B: B's time per task over A's (the inverse rates); empty when either did not run
ratio() { has "$1" && has "$2" && echo "$(rate "$1") / $(rate "$2")" | bc -l; }
{
	echo "# Dispatch overhead: gpupack run vs xargs -P vs GNU parallel"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')),"
	echo "$(uname -sr), gpupack $("$GPUPACK" --version | cut -d' ' -f2),$(has parallel && echo " $(parallel --version | head -n 1),") $(xargs --version | head -n 1)."
	echo "Load average (1, 5, 15 min) before: $load0; after: $load1."
	echo
	echo "$N tasks of \`true\`$(has parallel && echo " ($PN for GNU parallel)"), concurrency $J, $ROUNDS rounds side by side (order"
	echo "rotated each round), medians$(has gpupack-sh && echo "; then the same with a line that needs a shell (\`true {}; true\`)")."
	echo "Command: \`N=$N PN=$PN J=$J ROUNDS=$ROUNDS TOOLS=\"${tools[*]}\" bench/dispatch.sh\`"
	echo
	echo "| tool | tasks | median wall s | all rounds s | tasks/s |"
	echo "|---|---:|---:|---:|---:|"
	for t in "${tools[@]}"; do
		m=$(median "$TMP/$t.times")
		printf '| %s | %d | %.2f | %s | %.0f |\n' "$t" "$(tasks_of "$t")" "$m" \
			"$(xargs printf '%.2f ' <"$TMP/$t.times")" "$(rate "$t")"
	done
	echo
	# verdict X GOAL: met when X is within the goal (an awk comparison such as "<= 1.3")
	verdict() { [ "$(echo "$1 $2" | bc -l)" = 1 ] && echo met || echo NOT met; }
	for t in gpupack gpupack-auto; do
		r=$(ratio xargs "$t") || continue
		printf -- '- %s / xargs -P (time per task): **%.2fx** (goal: within 1.0x): %s; round by round %s\n' "$t" "$r" \
			"$(verdict "$r" "<= 1.0")" "$(paste -d/ "$TMP/$t.times" "$TMP/xargs.times" | bc -l | xargs printf '%.2f ')"
	done
	if r=$(ratio gpupack parallel); then
		printf -- '- GNU parallel / gpupack: **%.2fx** (goal: at least 3x): %s\n' "$r" "$(verdict "$r" ">= 3")"
	fi
	if rsx=$(ratio xargs-sh gpupack-sh) && rsp=$(ratio parallel-sh gpupack-sh); then
		printf -- '- a shell line, gpupack / xargs running bash -c: **%.2fx**; gpupack / GNU parallel: **%.2fx** (goal: at most what parallel'"'"'s own shell costs, 1x): %s\n' \
			"$rsx" "$rsp" "$(verdict "$rsp" "<= 1")"
	fi
	has gpupack-joblog && printf -- '- gpupack with --joblog (one fdatasync per task end, joblog in %s): %.2f s\n' "$TMP" \
		"$(median "$TMP/gpupack-joblog.times")"
	echo
	echo "gpupack: \`gpupack --sim $TOPO run --share timeslice -j $J -a FILE true\` (a plain line: exec'd"
	echo "directly; gpupack-auto the same without -j: -j auto) and \`... 'true {}; true'\` (run by $SH -c, the shell it was started from);"
	echo "xargs: \`xargs -P $J -n 1 true <FILE\` and \`xargs -P $J -n 1 $SH -c 'true \"\$1\"; true' _\`;"
	echo "parallel: \`parallel -j $J true <FILE\` and \`parallel -j $J 'true {}; true'\`."
} >"$OUT"
cat "$OUT"
