#!/usr/bin/env bash
# auto.sh: -j auto (the default) against fixed counts, on the GPU, for six
# classes of farm. For each class, in one go: the makespan of the default
# (auto, with no remembered count) and of -j 32 16 8 4 2 1 (mps, the default
# share), and best-fixed / auto. -j 4 under mps was the default before auto.
#
#   bench/auto.sh [OUT.md]                 (default bench/results/auto.md)
#   CLASSES="small python" JS="16 4" bench/auto.sh /tmp/x.md
#   SHARE=timeslice bench/auto.sh /tmp/ts.md     (every run under --share timeslice)
#
# Needs build/gpupack, build/gpupack-work (make) and python3 with PyTorch.
# The classes (bench/auto/classes.sh holds their commands):
#   small   SGEMM n=512 tasks: small kernels, several fit on the GPU at once
#   large   SGEMM n=4096 tasks: one task saturates the GPU
#   python  PyTorch trainings whose wall time is mostly start-up (import torch,
#           CUDA context): more tasks than the CPUs can start at once
#   memory  tasks that each hold a sixth of the device's memory
#   mixed   SGEMM n=4096 with 4 ms of CPU work after each iteration
#   hetero  SGEMM n=1024 of very different lengths (a few 10x longer)
#
# Each class first runs one task untimed (a cold page cache would slow its
# first timed run, auto's). A fixed count that is clearly not the best is cut: once it runs CUT (1.25)
# times longer than the best run of its class so far, it is ended (two
# SIGTERMs: gpupack ends its tasks and stops its MPS daemon) and reported as
# "> T" (its makespan is at least that, so it cannot be the best). A run
# whose tasks failed (a fixed count beyond memory) is reported with its
# failures and is not a candidate for the best.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${1:-bench/results/auto.md}
CLASSES=${CLASSES:-"small large python memory mixed hetero"}
JS=${JS:-"32 16 8 4 2 1"}
CUT=${CUT:-1.25}
SHARE=${SHARE:-}
G=${GPUPACK:-$PWD/build/gpupack}
W=${GPUPACK_WORK:-$PWD/build/gpupack-work}
# short: the MPS pipe directory under each run's state directory must fit a unix socket path
TMP=$(mktemp -d /tmp/ga.XXXXXX)
chmod 700 "$TMP"
RAW=$TMP/raw
mkdir -p "$RAW"
trap 'rm -rf "$TMP"' EXIT
export NCCL_NVLS_ENABLE=0

[ -x "$G" ] && [ -x "$W" ] || { echo "auto.sh: build gpupack and gpupack-work first (make)" >&2; exit 1; }
# shellcheck source=bench/auto/classes.sh
. bench/auto/classes.sh

NRUN=0
now() { date +%s.%N; }
fmt() { awk -v x="$1" 'BEGIN { printf "%.1f", x }'; }

# farm NAME JOBS LIMIT: run the class's farm once with -j JOBS ("" for the default), ended after
# LIMIT seconds (0: no limit); prints "makespan ok failed cut"
farm() {
	local name=$1 jobs=$2 limit=$3 t0 t1 pid cut=0 st
	NRUN=$((NRUN + 1))
	st=$TMP/s$NRUN
	rm -rf "$st"
	t0=$(now)
	# shellcheck disable=SC2086
	GPUPACK_STATE_DIR=$st "$G" run ${SHARE:+--share $SHARE} ${jobs:+-j $jobs} --json --joblog "$RAW/$name-${jobs:-auto}.joblog" \
		"${CMD[@]}" ::: "${INPUTS[@]}" >"$RAW/$name-${jobs:-auto}.out" 2>"$RAW/$name-${jobs:-auto}.err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$limit" != 0 ] && awk -v a="$(now)" -v b="$t0" -v l="$limit" 'BEGIN { exit !(a - b > l) }'; then
			# not the best: end it the way a user would (twice: end the running tasks too)
			cut=1
			kill -TERM "$pid" 2>/dev/null
			sleep 0.3
			kill -TERM "$pid" 2>/dev/null
			for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null
			GPUPACK_STATE_DIR=$st "$G" mps stop --all --force >/dev/null 2>&1
			break
		fi
		sleep 0.1
	done
	wait "$pid" 2>/dev/null
	t1=$(now)
	local ok failed
	ok=$(awk -F'\t' 'NR > 1 && $7 == 0 && $8 == 0' "$RAW/$name-${jobs:-auto}.joblog" 2>/dev/null | wc -l)
	failed=$(awk -F'\t' 'NR > 1 && ($7 != 0 || $8 != 0)' "$RAW/$name-${jobs:-auto}.joblog" 2>/dev/null | wc -l)
	echo "$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }') $ok $failed $cut"
}

{
	echo "# -j auto against fixed counts"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- CPUs: $(nproc); host memory: $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "- command: \`bench/auto.sh\` (CLASSES=\"$CLASSES\" JS=\"$JS\" CUT=$CUT)"
	echo "- share: ${SHARE:-mps (the default)}; each run with an empty state directory (no remembered count)"
	echo
	echo "| class | tasks | auto (s) | settled | $(for j in $JS; do printf -- '-j %s | ' "$j"; done)best fixed | best/auto | old default (-j 4)/auto |"
	echo "|---|---|---|---|$(for _ in $JS; do printf -- '---|'; done)---|---|---|"
} >"$TMP/table"

report() {
mkdir -p "$(dirname "$OUT")"
{
	cat "$TMP/table"
	echo
	echo "Cut runs (\"> T\") were ended at CUT x the best makespan of their class so far: slower than that,"
	echo "they cannot be the best. \"(N failed)\": tasks that failed (out of memory at that count)."
	echo
	echo "## The classes"
	echo
	echo '```'
	sed -n '/^class_/,/^}/p' bench/auto/classes.sh
	echo '```'
	echo
	echo "## Each auto run's decisions (from --json)"
	for c in $CLASSES; do
		[ -f "$RAW/$c-auto.out" ] || continue
		echo
		echo "### $c"
		echo
		echo '```'
		tail -n 1 "$RAW/$c-auto.out" | python3 -c 'import json,sys
d=json.loads(sys.stdin.read())
print("makespan %.2f s, %d done, %d failed, reruns %d %s" % (d["makespan_s"], d["done"], d["failed"], d["reruns"], d.get("rerun_reasons")))
for x in d["devices"]:
    a = x.get("auto")
    if not a: continue
    print("device %s: start %d, max %d, final %d, settled %d, footprint %d MiB" % (x["uuid"], a["start"], a["max"], a["final"], a["settled"], a["footprint"] >> 20))
    for e in a["decisions"]:
        g = "-" if e["gpu"] is None else "%.2f" % e["gpu"]
        cp = "-" if e["cpu"] is None else "%.2f" % e["cpu"]
        r = "-" if e["rate"] is None else "%.2f" % e["rate"]
        print("  %7.2f s  %3d  rate %6s  gpu %5s  cpu %5s  %s" % (e["t"], e["limit"], r, g, cp, e["why"]))' 2>&1
		echo '```'
	done
} >"$OUT"
# every run's joblog, output and --json summary, for a closer look
tar -C "$TMP" -czf "${OUT%.md}-raw.tgz" raw 2>/dev/null
}

for c in $CLASSES; do
	class_"$c" || { echo "auto.sh: no class $c" >&2; continue; }
	n=${#INPUTS[@]}
	echo "== $c: $n tasks: ${CMD[*]}" >&2
	# one task first, untimed: the class's first timed run must not be the one that pays for a
	# cold page cache (PyTorch's libraries, cuBLAS) and the driver's first contexts
	GPUPACK_STATE_DIR=$TMP/warm "$G" run -j 1 "${CMD[@]}" ::: "${INPUTS[0]}" >/dev/null 2>&1
	GPUPACK_STATE_DIR=$TMP/warm "$G" mps stop --all --force >/dev/null 2>&1
	farm "$c" "" 0 >"$TMP/r" && read -r ta oka fa _ <"$TMP/r"
	settled=$(tail -n 1 "$RAW/$c-auto.out" | python3 -c 'import json,sys
d=json.loads(sys.stdin.read())
print(" ".join(str(x["auto"]["settled"]) for x in d["devices"] if x.get("auto")))' 2>/dev/null)
	echo "   auto: $(fmt "$ta") s, $oka ok, $fa failed, settled $settled" >&2
	best=$ta
	bestj=
	row=""
	old=""
	mincut=
	for j in $JS; do
		lim=$(awk -v b="$best" -v c="$CUT" 'BEGIN { print b * c }')
		farm "$c" "$j" "$lim" >"$TMP/r" && read -r t okn fn cut <"$TMP/r"
		if [ "$cut" = 1 ]; then
			cell="> $(fmt "$t")"
			if [ -z "$mincut" ] || awk -v a="$t" -v b="$mincut" 'BEGIN { exit !(a < b) }'; then mincut=$t; fi
		elif [ "$fn" -gt 0 ] || [ "$okn" -lt "$n" ]; then
			cell="$(fmt "$t") ($fn failed)"
		else
			cell=$(fmt "$t")
			if [ -z "$bestj" ] || awk -v a="$t" -v b="$bestt" 'BEGIN { exit !(a < b) }'; then
				bestj=$j
				bestt=$t
			fi
			awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }' && best=$t
		fi
		[ "$j" = 4 ] && old=$cell
		echo "   -j $j: $cell" >&2
		row="$row$cell | "
	done
	if [ -n "$bestj" ]; then
		ratio=$(awk -v b="$bestt" -v a="$ta" 'BEGIN { printf "%.3f", b / a }')
		bcell="$(fmt "$bestt") (-j $bestj)"
	elif [ -n "$mincut" ]; then
		# every fixed count was cut: each ran at least as long as the shortest cut, so best/auto
		# is at least that over auto's
		ratio="> $(awk -v b="$mincut" -v a="$ta" 'BEGIN { printf "%.3f", b / a }')"
		bcell="every fixed count cut"
	else
		ratio="-"
		bcell="none completed"
	fi
	oldv=${old#> }
	oldv=${oldv%% *}
	oldr=$(awk -v o="$oldv" -v a="$ta" 'BEGIN { if (o + 0 > 0) printf "%.3f", o / a; else print "-" }')
	case $old in ">"*) oldr="> $oldr" ;; *failed*) oldr="$oldr (with failures)" ;; esac
	acell=$(fmt "$ta")
	[ "$fa" -gt 0 ] && acell="$acell ($fa failed)"
	echo "| $c | $n | $acell | $settled | $row$bcell | $ratio | $oldr |" >>"$TMP/table"
	echo "RESULT $c: auto $(fmt "$ta") s (settled $settled), best fixed $bcell, best/auto $ratio, old default/auto $oldr"
	# the report so far: a call cut short still leaves the classes it finished
	report
done
cat "$TMP/table"

