#!/usr/bin/env bash
# auto.sh: -j auto (the default) against fixed counts on this machine's GPUs,
# class by class, in one call: builds gpupack and gpupack-work (make), then for
# each class runs the default (auto, nothing remembered), auto again with what
# the first run remembered, and fixed -j counts, and writes a markdown report:
# best fixed / auto per class, out-of-memory reruns, tasks that waited at the
# GPU's door, joules per task at each count, the energy-best count beside the
# fastest, the farm's bound (the makespan no count could beat, from the tasks'
# own CPU and GPU time and the longest task: gpupack run --json's "bound") for
# auto and the best fixed count with each one's makespan over it, and the auto
# runs' decisions.
#
#   bash bench/auto.sh                        report in $OUT/auto.md (OUT=./auto-out)
#   CLASSES="python memory" bash bench/auto.sh
#   BUDGET=460 bash bench/auto.sh             seconds for the whole call, build included
#   MAXFIXED=6 AUTO2="python memory" ...      more fixed counts a class, a second auto run for more
#   ENERGY="gpu python"                       the classes that also run -j auto:energy (default gpu)
#   PYN=32                                    PyTorch trainings per GPU in the python class (16)
#   PHN=4                                     the phases class PHN times as long (12 SGEMM, 8 trainings)
#   CUDA_VISIBLE_DEVICES=0 taskset -c 0-15 bash bench/auto.sh   one GPU and 16 cores of a larger machine
#   FAKE=1 bash bench/auto.sh                 no GPU: the classes on simulated devices (its test:
#                                             tests/cli/bench-auto.t, with BUILD=DIR NOBUILD=1: the
#                                             binaries already built in DIR, default build)
#   VARIANTS="nogate:farm.start_over_pct=-1"  more auto runs a class, each NAME:KNOBS run with
#                                             GPUPACK_KNOBS=KNOBS (`gpupack --knobs`): a tuning compared
#                                             side by side with the default; rows "auto (NAME)"
#   REPS=3                                    after the search, the best fixed count, auto (nothing
#                                             remembered) and each variant again, in turn, fixed first,
#                                             until each ran REPS times: the summary compares medians
#
# The classes (bench/auto/classes.sh, sized by the GPUs and CPUs here):
#   python   PyTorch trainings bound by their start-up (import torch, CUDA context)
#   memory   PyTorch tasks holding 3-22 GiB each (admission by memory)
#   gpu      SGEMM n=4096: one task fills the GPU
#   fault    PyTorch trainings, two of which die of a GPU fault
#   phases   SGEMM tasks, then PyTorch trainings
#
# The fixed counts: -j N is per device. The grid 1 2 3 4 6 8 12 16 24 32 48
# (neighbours at most 1.5x apart) is searched from the point nearest the count
# auto settled on: both neighbours, then on in the direction that was faster
# until a point is slower. A farm's makespan over the count is unimodal (rising
# while more tasks overlap, falling past the GPU's, the CPUs' or memory's
# knee: bench/results/*auto*.md, test_farm_control's farms), so this finds the
# grid's best; every count measured is in the report. A fixed run slower than
# CUT (1.15) x the class's best so far (auto included) is ended and reported
# as "> T": it cannot be the best. A fixed count whose tasks fail (out of
# memory), beyond the class's own failures, is no candidate. The budget is
# checked before each run: a class that does not fit is reported as not run;
# at most MAXFIXED (4) fixed counts a class (the search ends there).
#
# Never changes a card setting; every MPS daemon gpupack starts is stopped.
# shellcheck disable=SC2030,SC2031 # the fake device's variables are exported in the runs' subshells on purpose
set -u
cd "$(dirname "$0")/.." || exit 1
START=$(date +%s)
OUT=${OUT:-$PWD/auto-out}
REPORT=${1:-$OUT/auto.md}
BUDGET=${BUDGET:-460}
CLASSES=${CLASSES:-"python memory gpu fault phases"}
GRID=${GRID:-"1 2 3 4 6 8 12 16 24 32 48"}
CUT=${CUT:-1.15}
AUTO2=${AUTO2:-"python"}
ENERGY=${ENERGY:-"gpu"}
VARIANTS=${VARIANTS:-}
MAXFIXED=${MAXFIXED:-4}
REPS=${REPS:-1}
FAKE=${FAKE:-0}
BUILD=${BUILD:-build}
NOBUILD=${NOBUILD:-0}
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT" "$(dirname "$REPORT")"
# short: the MPS pipe directory under each run's state directory must fit a unix socket path
TMP=$(mktemp -d /tmp/ga.XXXXXX)
chmod 700 "$TMP"
RAW=$OUT/auto-raw
mkdir -p "$RAW"
trap 'rm -rf "$TMP"' EXIT
NRUN=0

say() { echo "$*" >&2; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
# what is left, less 20 s for the report, at least 1: a run's limit
budget_left() { local l=$(($(left) - 20)); echo $((l > 1 ? l : 1)); }
now() { date +%s.%N; }
fmt() { awk -v x="$1" 'BEGIN { printf "%.1f", x }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# --- the build and the machine -------------------------------------------------------------
# make's goals as the Makefile names them ($BUILD/...); the runs use the absolute $B
if [ "$FAKE" = 1 ]; then
	TOOLS=("$BUILD/gpupack" "$BUILD/tests/tools/fake-work" "$BUILD/tests/tools/fake-mps-control"
	    "$BUILD/tests/fakenvml/libnvidia-ml.so.1")
else
	TOOLS=("$BUILD/gpupack" "$BUILD/gpupack-work")
fi
t=$(date +%s)
if [ "$NOBUILD" = 1 ]; then
	for f in "${TOOLS[@]}"; do
		[ -e "$f" ] || { say "auto.sh: NOBUILD=1 but $f is not built"; exit 1; }
	done
elif ! make -j"$(nproc)" B="$BUILD" "${TOOLS[@]}" >"$OUT/auto-build.log" 2>&1; then
	say "auto.sh: the build failed (see $OUT/auto-build.log)"
	tail -n 20 "$OUT/auto-build.log" >&2
	exit 1
fi
BUILD_S=$(($(date +%s) - t))
B=$(cd "$BUILD" && pwd) || exit 1
G=$B/gpupack
W=$B/gpupack-work
NCPU=$(nproc)
if [ "$FAKE" = 1 ]; then
	NGPU=1
	FAKE_DIR=$TMP/fake
	FAKE_TASK=$TMP/fake-task
	# a fake task: fake-work's farm task on the class's simulated device; FAULT_SEEDS fail
	cat >"$FAKE_TASK" <<EOF
#!/bin/sh
case ",\${FAULT_SEEDS:-}," in *",\$1,"*) sleep 0.3; echo "fake: device-side assert triggered (CUDA error)" >&2; exit 1 ;; esac
exec $B/tests/tools/fake-work farm \$FAKE_ARGS "\$1"
EOF
	chmod +x "$FAKE_TASK"
	export GPUPACK_NVML_LIB=$B/tests/fakenvml/libnvidia-ml.so.1
	export GPUPACK_MPS_CONTROL=$B/tests/tools/fake-mps-control
	unset FAKENVML_MACHINE FAKENVML_FAIL FAKENVML_OLD FAKENVML_NPROCS
	GPU_LINE="simulated (FAKE=1: fake-work on tests/tools/fakedev.h, the fake NVML)"
else
	NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
	# CUDA_VISIBLE_DEVICES=0 (indices or UUIDs): the farms use those GPUs only, as gpupack does
	[ -n "${CUDA_VISIBLE_DEVICES:-}" ] && NGPU=$(printf '%s\n' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
	GPU_LINE="$NGPU x $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
	if [ "$NGPU" -lt 1 ]; then
		say "auto.sh: no GPU (nvidia-smi -L lists none)"
		exit 1
	fi
fi
# shellcheck source=bench/auto/classes.sh
. bench/auto/classes.sh

# --- one farm ---------------------------------------------------------------------------------

# farm NAME JOBS LIMIT [STATE]: the class's farm once (JOBS "" for the default), ended after LIMIT
# seconds (0: none); its --json summary in $RAW/NAME.json. Sets FARM to "makespan ok failed cut".
farm() {
	local name=$1 jobs=$2 limit=$3 st=${4:-} t0 t1 pid cut=0 ok failed
	NRUN=$((NRUN + 1))
	[ -n "$st" ] || { st=$TMP/s$NRUN; rm -rf "$st"; }
	t0=$(now)
	(
		[ -n "${FAULT_SEEDS:-}" ] && export FAULT_SEEDS
		if [ "$FAKE" = 1 ]; then
			export FAKENVML_DEVICE=$FAKE_DEVICE_DIR FAKE_DEVICE=$FAKE_DEVICE_DIR \
			    GPUPACK_PROC_DIR=$FAKE_DEVICE_DIR/proc FAKE_ARGS
		fi
		export W
		exec env GPUPACK_STATE_DIR="$st" ${KNOBS:+GPUPACK_KNOBS="$KNOBS"} "$G" run ${jobs:+-j "$jobs"} --json --joblog "$RAW/$name.joblog" \
		    "${CMD[@]}" ::: "${INPUTS[@]}" >"$RAW/$name.out" 2>"$RAW/$name.err"
	) &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$limit" != 0 ] && ! lt "$(awk -v a="$(now)" -v b="$t0" 'BEGIN { print a - b }')" "$limit"; then
			# not the best: ended the way a user would (twice: the running tasks too)
			cut=1
			kill -TERM "$pid" 2>/dev/null
			sleep 0.3
			kill -TERM "$pid" 2>/dev/null
			for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null
			break
		fi
		sleep 0.1
	done
	wait "$pid" 2>/dev/null
	t1=$(now)
	GPUPACK_STATE_DIR=$st "$G" mps stop --all --force >/dev/null 2>&1
	tail -n 1 "$RAW/$name.out" 2>/dev/null >"$RAW/$name.json"
	ok=$(awk -F'\t' 'NR > 1 && $7 == 0 && $8 == 0' "$RAW/$name.joblog" 2>/dev/null | wc -l)
	failed=$(awk -F'\t' 'NR > 1 && ($7 != 0 || $8 != 0)' "$RAW/$name.joblog" 2>/dev/null | wc -l)
	# the raw output is big (every task's lines): the summary and the joblog stay
	rm -f "$RAW/$name.out"
	FARM="$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }') $ok $failed $cut"
}

# jget NAME EXPR: a figure from a run's --json summary (python3: no jq on the device)
jget() {
	python3 - "$RAW/$1.json" "$2" <<'PY' 2>/dev/null || echo "-"
import json, statistics, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print("-"); sys.exit(0)
devs = [x for x in d.get("devices", []) if x.get("auto")]
def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None
r = {
    "jpt": d.get("j_per_task"),
    "oom": d.get("rerun_reasons", {}).get("out of memory", 0),
    "reruns": d.get("reruns"),
    "settled": med([x["auto"]["settled"] for x in devs]),
    "settled_all": " ".join(str(x["auto"]["settled"]) for x in devs),
    "max": max([max(e["limit"] for e in x["auto"]["decisions"]) for x in devs], default=None),
    "waited": sum(x["auto"].get("waited", 0) for x in devs),
    "cores": med([x["auto"].get("cores_start") for x in devs]),
    # the farm's bound: seconds (what limits it); its makespan over the bound
    "bound": None if not (d.get("bound") or {}).get("s") else
             "%.3g (%s)" % (d["bound"]["s"], d["bound"].get("limit") or "-"),
    "bratio": (d.get("bound") or {}).get("makespan_ratio"),
}[sys.argv[2]]
if r is None:
    print("-")
elif isinstance(r, float):
    print("%.3g" % r)
else:
    print(r)
PY
}

# --- the report --------------------------------------------------------------------------------
SUMMARY=$TMP/summary
DETAIL=$TMP/detail
{
	echo "| class | tasks | auto (s) | auto, remembered (s) | settled | OOM reruns | waited at the door | best fixed (s) | best fixed / auto | bound, auto (s) | auto / bound | bound, best fixed (s) | best fixed / bound | J/task auto | J/task best fixed | fewest J/task (fixed) |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$SUMMARY"
: >"$DETAIL"

report() {
	{
		echo "# -j auto against fixed counts"
		echo
		echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
		echo "- GPUs: $GPU_LINE"
		echo "- CPUs: $NCPU$([ "$NCPU" -lt "$(getconf _NPROCESSORS_ONLN)" ] && echo " of the machine's $(getconf _NPROCESSORS_ONLN) (taskset: $(taskset -pc $$ | sed 's/.*: //'))"); host memory: $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
		echo "- command: \`bash bench/auto.sh\` (CLASSES=\"$CLASSES\" GRID=\"$GRID\" CUT=$CUT BUDGET=$BUDGET); build ${BUILD_S} s"
		echo "- share: mps (the default). auto: an empty state directory (nothing remembered); auto,"
		echo "  remembered: a second run with what the first remembered. -j N: N per device."
		[ "$REPS" -gt 1 ] && echo "- REPS=$REPS: auto, the best fixed count and each variant ran up to $REPS times each, in turn" \
		    "(the later rounds fixed first); auto (s), best fixed (s) and their ratio are medians over the runs" \
		    "(the detail lists each)."
		echo
		cat "$SUMMARY"
		echo
		echo "\"> T\": a fixed count ended at CUT x the class's best so far (it cannot be the best)."
		echo "\"(N failed)\": tasks that failed beyond the class's own (out of memory at that count): no candidate."
		echo "OOM reruns: tasks that ran out of memory beside others, run again without spending --retries."
		echo "J/task: the GPUs' energy counters over the farm (NVML total energy), per task."
		echo "bound: the makespan no count could beat, from that run's tasks (their CPU time over the cores,"
		echo "their GPU time over the GPUs, the longest task; what limits it in brackets); X / bound: that"
		echo "run's makespan (gpupack's own) over it, 1.00 at the bound. - where a figure is unknown."
		cat "$DETAIL"
	} >"$REPORT"
}

# detail CLASS: each count measured, and the auto run's decisions
detail_class() {
	local c=$1
	{
		echo
		echo "## $c: $WHAT, ${#INPUTS[@]} tasks"
		echo
		echo "| -j | makespan (s) | J/task | failed | bound (s) | makespan / bound |"
		echo "|---|---|---|---|---|---|"
		cat "$TMP/$c.rows"
		echo
		echo '```'
		python3 - "$RAW/$c-auto.json" <<'PY' 2>&1
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print("auto: no summary (the run was ended before it printed one)"); sys.exit(0)
print("auto: makespan %.2f s, %d done, %d failed, reruns %d %s" % (d["makespan_s"], d["done"], d["failed"],
      d["reruns"], d.get("rerun_reasons")))
b = d.get("bound") or {}
if b.get("s"):
    print("bound %.2f s (%s): CPU %s s, GPU %s s, longest task %s s; makespan / bound %s" % (b["s"], b.get("limit"),
          *["-" if b.get(k) is None else "%.2f" % b[k] for k in ("cpu_s", "gpu_s", "longest_s", "makespan_ratio")]))
else:
    print("bound: unknown")
for x in d["devices"]:
    a = x.get("auto")
    if not a:
        continue
    print("device %s: start %d, max %d, final %d, settled %d, footprint %d MiB, waited %d, cores %.2f/%.2f" % (
        x["uuid"][:12], a["start"], a["max"], a["final"], a["settled"], a["footprint"] >> 20, a.get("waited", 0),
        a.get("cores_start", 0), a.get("cores_run", 0)))
    for e in a["decisions"][:40]:
        f = lambda v: "-" if v is None else "%.2f" % v
        print("  %7.2f s  %3d  rate %6s  gpu %5s  cpu %5s  %s" % (e["t"], e["limit"], f(e["rate"]), f(e["gpu"]),
              f(e["cpu"]), e["why"]))
PY
		echo '```'
	} >>"$DETAIL"
}

# --- the classes --------------------------------------------------------------------------------
index_of() { local i=0; for j in $GRID; do [ "$j" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo -1; }
grid_at() { local i=0; for j in $GRID; do [ $i = "$1" ] && { echo "$j"; return; }; i=$((i + 1)); done; }
nearest() {
	local best=0 bd=999999 i=0
	for j in $GRID; do
		d=$(awk -v a="$j" -v b="$1" 'BEGIN { d = a > b ? a / b : b / a; print int(d * 1000) }')
		[ "$d" -lt "$bd" ] && { bd=$d; best=$i; }
		i=$((i + 1))
	done
	echo $best
}
NG=$(echo "$GRID" | wc -w)

# one fixed count of the class: its row; RES: its makespan, or slower, failed, time
fixed() {
	local c=$1 j=$2 lim t okn fn cut cell jpt
	if [ -n "${TRIED[$j]:-}" ]; then RES=${TRIED[$j]}; return; fi
	# at most MAXFIXED counts a class: the call's time is shared by the classes
	if [ "${#TRIED[@]}" -ge "$MAXFIXED" ]; then RES="time"; return; fi
	lim=$(awk -v b="$BEST" -v k="$CUT" 'BEGIN { print b * k }')
	if [ "$(left)" -lt "$(awk -v l="$lim" 'BEGIN { printf "%d", l + 15 }')" ]; then
		TRIED[$j]="time"
		RES="time"
		echo "| $j | not run: the call's time was spent | | | | |" >>"$TMP/$c.rows"
		return
	fi
	farm "$c-j$j" "$j" "$lim"
	read -r t okn fn cut <<<"$FARM"
	jpt=$(jget "$c-j$j" jpt)
	if [ "$cut" = 1 ]; then
		cell="> $(fmt "$t")"
		TRIED[$j]="slower"
	elif [ "$fn" -gt "$FAILS" ] || [ $((okn + fn)) -lt "$N" ]; then
		cell="$(fmt "$t") ($((fn - FAILS)) failed)"
		TRIED[$j]="failed"
	else
		cell=$(fmt "$t")
		TRIED[$j]=$t
		if [ -z "$BESTJ" ] || lt "$t" "$BESTF"; then BESTF=$t; BESTJ=$j; BESTJPT=$jpt; fi
		lt "$t" "$BEST" && BEST=$t
		if [ "$jpt" != "-" ] && { [ -z "$EJ" ] || lt "$jpt" "$EJPT"; }; then EJ=$j; EJPT=$jpt; ET=$t; fi
	fi
	echo "| $j | $cell | $jpt | $((fn > FAILS ? fn - FAILS : 0)) | $(jget "$c-j$j" bound) | $(jget "$c-j$j" bratio) |" >>"$TMP/$c.rows"
	say "   -j $j: $cell (J/task $jpt)"
	RES=${TRIED[$j]}
}

# The grid search from index i0: both neighbours, then on while faster. Up, tasks that fail (out
# of memory) end it too; down, they do not: fewer may fit.
search() {
	local c=$1 i0=$2 i
	fixed "$c" "$(grid_at "$i0")"
	for dir in 1 -1; do
		i=$((i0 + dir))
		while [ "$i" -ge 0 ] && [ "$i" -lt "$NG" ]; do
			fixed "$c" "$(grid_at "$i")"
			case $RES in
			slower | time) break ;;
			failed) [ "$dir" = 1 ] && break ;;
			*) [ "$(grid_at "$i")" = "$BESTJ" ] || break ;;
			esac
			i=$((i + dir))
		done
	done
}

# the untimed warm-up of each class: a cold page cache must not be the first timed run's
warm() {
	NRUN=$((NRUN + 1))
	(
		[ "$FAKE" = 1 ] && export FAKENVML_DEVICE=$FAKE_DEVICE_DIR FAKE_DEVICE=$FAKE_DEVICE_DIR \
		    GPUPACK_PROC_DIR=$FAKE_DEVICE_DIR/proc FAKE_ARGS
		export W
		# the first input and the last: a class of two kinds (phases) warms both (the page cache
		# holds torch for the first farm as for the later ones)
		GPUPACK_STATE_DIR=$TMP/warm "$G" run -j 2 "${CMD[@]}" ::: "${INPUTS[0]}" "${INPUTS[-1]}" >/dev/null 2>&1
		GPUPACK_STATE_DIR=$TMP/warm "$G" mps stop --all --force >/dev/null 2>&1
	)
}

for c in $CLASSES; do
	unset FAULT_SEEDS
	declare -A TRIED=()
	if ! declare -f "class_$c" >/dev/null; then
		say "auto.sh: no class $c"
		continue
	fi
	class_"$c"
	N=${#INPUTS[@]}
	: >"$TMP/$c.rows"
	say "== $c ($N tasks; $(left) s left)"
	if [ "$(left)" -lt 60 ]; then
		echo "| $c | $N | not run: the call's time was spent | | | | | | | | | | | | | |" >>"$SUMMARY"
		report
		continue
	fi
	warm
	# no farm outlives the call's budget (a farm that hangs ends as cut: "> T", and the report is written)
	farm "$c-auto" "" "$(budget_left)" "$TMP/st-$c"
	read -r ta oka fa _ <<<"$FARM"
	settled=$(jget "$c-auto" settled)
	say "   auto: $(fmt "$ta") s, $oka ok, $fa failed, settled $(jget "$c-auto" settled_all), max $(jget "$c-auto" max)"
	ta2=-
	if [[ " $AUTO2 " == *" $c "* ]] && [ "$(left)" -gt "$(awk -v t="$ta" 'BEGIN { printf "%d", 3 * t + 30 }')" ]; then
		cp "$RAW/$c-auto.json" "$TMP/$c-auto1.json"
		farm "$c-auto2" "" "$(budget_left)" "$TMP/st-$c"
		read -r ta2 _ _ _ <<<"$FARM"
		cp "$TMP/$c-auto1.json" "$RAW/$c-auto.json"
		say "   auto, remembered: $(fmt "$ta2") s (settled $(jget "$c-auto2" settled_all))"
		ta2=$(fmt "$ta2")
	fi
	declare -A LV=()
	for v in $VARIANTS; do
		[ "$(left)" -gt "$(awk -v t="$ta" 'BEGIN { printf "%d", 2 * t + 30 }')" ] || break
		KNOBS=${v#*:} farm "$c-${v%%:*}" "" "$(budget_left)"
		read -r tv _ fv _ <<<"$FARM"
		[ "$fv" -gt "$FAILS" ] || LV[${v%%:*}]=$tv
		echo "| auto (${v%%:*}: ${v#*:}) | $(fmt "$tv") | $(jget "$c-${v%%:*}" jpt) | $((fv > FAILS ? fv - FAILS : 0)) |" \
		    "$(jget "$c-${v%%:*}" bound) | $(jget "$c-${v%%:*}" bratio) |" >>"$TMP/$c.rows"
		say "   auto (${v%%:*}): $(fmt "$tv") s, $fv failed, settled $(jget "$c-${v%%:*}" settled_all), max $(jget "$c-${v%%:*}" max)"
	done
	BEST=$ta BESTJ='' BESTF='' BESTJPT=- EJ='' EJPT='' ET=
	[ "$settled" = - ] && settled=4
	search "$c" "$(nearest "$settled")"
	if [ -n "$BESTJ" ]; then
		ratio=$(awk -v b="$BESTF" -v a="$ta" 'BEGIN { printf "%.3f", b / a }')
		bcell="$(fmt "$BESTF") (-j $BESTJ)"
	else
		ratio="-"
		bcell="none measured"
		for j in "${!TRIED[@]}"; do
			[ "${TRIED[$j]}" = slower ] && ratio="> $CUT" && bcell="every fixed count measured was cut"
		done
	fi
	# the energy goal: the fewest joules per task within 5% of the fastest
	if [[ " $ENERGY " == *" $c "* ]] && [ "$(left)" -gt "$(awk -v t="$ta" 'BEGIN { printf "%d", 2 * t + 30 }')" ]; then
		farm "$c-energy" auto:energy "$(budget_left)"
		read -r te _ _ _ <<<"$FARM"
		echo "| auto:energy | $(fmt "$te") | $(jget "$c-energy" jpt) | 0 | $(jget "$c-energy" bound) | $(jget "$c-energy" bratio) |" \
		    >>"$TMP/$c.rows"
		say "   -j auto:energy: $(fmt "$te") s (J/task $(jget "$c-energy" jpt), auto's $(jget "$c-auto" jpt))"
	fi
	# REPS: the best fixed count, auto and each variant again, in turn (fixed first: auto ran first before)
	if [ "$REPS" -gt 1 ] && [ -n "$BESTJ" ]; then
		la=("$ta") lf=("$BESTF")
		nv=$(wc -w <<<"$VARIANTS")
		for r in $(seq 2 "$REPS"); do
			[ "$(left)" -gt "$(awk -v a="$ta" -v b="$BESTF" -v n="$nv" 'BEGIN { m = a > b ? a : b; printf "%d", (n + 1) * m + b + 40 }')" ] || break
			farm "$c-j$BESTJ-r$r" "$BESTJ" "$(budget_left)"
			read -r tf _ ff _ <<<"$FARM"
			farm "$c-auto-r$r" "" "$(budget_left)"
			read -r tr _ fr _ <<<"$FARM"
			[ "$ff" -gt "$FAILS" ] || lf+=("$tf")
			[ "$fr" -gt "$FAILS" ] || la+=("$tr")
			line="round $r: $BESTJ, auto" vals="$(fmt "$tf"), $(fmt "$tr")"
			for v in $VARIANTS; do
				KNOBS=${v#*:} farm "$c-${v%%:*}-r$r" "" "$(budget_left)"
				read -r tv _ fv _ <<<"$FARM"
				[ "$fv" -gt "$FAILS" ] || LV[${v%%:*}]="${LV[${v%%:*}]} $tv"
				line="$line, ${v%%:*}" vals="$vals, $(fmt "$tv")"
			done
			echo "| $line | $vals | $(jget "$c-j$BESTJ-r$r" jpt), $(jget "$c-auto-r$r" jpt) | $((ff > FAILS ? ff - FAILS : 0)), $((fr > FAILS ? fr - FAILS : 0)) |" \
			    "$(jget "$c-j$BESTJ-r$r" bound), $(jget "$c-auto-r$r" bound) | $(jget "$c-j$BESTJ-r$r" bratio), $(jget "$c-auto-r$r" bratio) |" \
			    >>"$TMP/$c.rows"
			say "   round $r: -j $BESTJ $(fmt "$tf") s, auto $(fmt "$tr") s (settled $(jget "$c-auto-r$r" settled_all)); $vals"
		done
		ta=$(med "${la[@]}")
		BESTF=$(med "${lf[@]}")
		ratio=$(awk -v b="$BESTF" -v a="$ta" 'BEGIN { printf "%.3f", b / a }')
		bcell="$(fmt "$BESTF") (-j $BESTJ, median of ${#lf[@]})"
		echo "RESULT $c: auto runs ${la[*]}; -j $BESTJ runs ${lf[*]}"
		for v in $VARIANTS; do
			# shellcheck disable=SC2086 # the runs, one word each
			set -- ${LV[${v%%:*}]}
			[ $# -gt 0 ] || continue
			echo "RESULT $c: auto (${v%%:*}) runs $*; median $(fmt "$(med "$@")"), -j $BESTJ / it $(awk -v b="$BESTF" -v a="$(med "$@")" 'BEGIN { printf "%.3f", b / a }')"
			echo "| auto (${v%%:*}), median of $# | $(fmt "$(med "$@")") | | | | |" >>"$TMP/$c.rows"
		done
	fi
	acell=$(fmt "$ta")
	[ "$REPS" -gt 1 ] && [ -n "$BESTJ" ] && acell="$acell (median of ${#la[@]})"
	[ "$fa" -gt "$FAILS" ] && acell="$acell ($((fa - FAILS)) failed)"
	ecell=-
	[ -n "$EJ" ] && ecell="$EJPT (-j $EJ, $(fmt "$ET") s)"
	# the bound and the distance to it: the first auto run's, the best fixed count's (its first run)
	fb=- fr=-
	[ -n "$BESTJ" ] && fb=$(jget "$c-j$BESTJ" bound) && fr=$(jget "$c-j$BESTJ" bratio)
	echo "| $c | $N | $acell | $ta2 | $(jget "$c-auto" settled_all) | $(jget "$c-auto" oom) | $(jget "$c-auto" waited) | $bcell | $ratio | $(jget "$c-auto" bound) | $(jget "$c-auto" bratio) | $fb | $fr | $(jget "$c-auto" jpt) | $BESTJPT | $ecell |" >>"$SUMMARY"
	echo "RESULT $c: auto $(fmt "$ta") s, best fixed $bcell, best/auto $ratio; bound $(jget "$c-auto" bound), auto/bound $(jget "$c-auto" bratio), best fixed/bound $fr"
	detail_class "$c"
	report
done
report
cat "$SUMMARY"
say "auto.sh: report in $REPORT ($(($(date +%s) - START)) s)"
