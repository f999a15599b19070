#!/usr/bin/env bash
# mps-exec.sh: what `gpupack mps exec` costs against the job-script recipe it
# replaces, side by side on one GPU (run on the device machine, as root, from
# the repository root, with build/gpupack and build/gpupack-work built).
#
#   bash bench/mps-exec.sh [N]        (N runs of each, default 10)
#
# Each run starts a private MPS daemon, runs `gpupack-work info` as its client,
# and stops the daemon, waiting until it has exited:
#   gpupack:  gpupack mps exec --gpu 0 -- gpupack-work info
#   recipe:   export CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY; mkdir;
#             nvidia-cuda-mps-control -d; gpupack-work info;
#             echo quit | nvidia-cuda-mps-control; wait for the daemon to exit
# The two alternate (ABAB..., then BABA... for the second half) after one
# untimed warm-up of each. Result: medians and their ratio, with every run,
# in $OUT/mps-exec.md (default ./gpu-out). Passes when gpupack's median is
# within 1.2x of the recipe's. Stops every daemon it started, even on failure;
# changes no card setting.
set -u
cd "$(dirname "$0")/.." || exit 2

N=${1:-10}
OUT=${OUT:-$PWD/gpu-out}
GP=${GPUPACK:-$PWD/build/gpupack}
GW=${GPUPACK_WORK:-$PWD/build/gpupack-work}
CTL=${GPUPACK_MPS_CONTROL:-$(command -v nvidia-cuda-mps-control)}
for c in /usr/local/nvidia/bin/nvidia-cuda-mps-control /usr/bin/nvidia-cuda-mps-control; do
	[ -z "$CTL" ] && [ -x "$c" ] && CTL=$c
done
WORK=$(mktemp -d /tmp/gpbench.XXXXXX)
export GPUPACK_STATE_DIR="$WORK/state"
REPORT="$OUT/mps-exec.md"
HAND_PID=""

cleanup() {
	"$GP" mps stop --all --force --timeout 5 >/dev/null 2>&1
	if [ -n "$HAND_PID" ] && [ -e "/proc/$HAND_PID" ]; then
		echo quit | CUDA_MPS_PIPE_DIRECTORY="$WORK/hand/pipe" "$CTL" >/dev/null 2>&1
		sleep 1
		kill -9 "$HAND_PID" 2>/dev/null
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() {
	echo "FAIL $*"
	mkdir -p "$OUT" && printf '# mps-exec\n\nFAIL %s\n' "$*" >"$REPORT"
	exit 1
}

[ -x "$GP" ] || die "$GP not built"
[ -x "$GW" ] || die "$GW not built"
if [ -z "$CTL" ] || [ ! -x "$CTL" ]; then die "nvidia-cuda-mps-control not found"; fi
command -v python3 >/dev/null 2>&1 || die "python3 needed for the statistics"
mkdir -p "$OUT" || die "cannot create $OUT"
UUID=${GPUPACK_BENCH_UUID:-$(nvidia-smi -i 0 --query-gpu=uuid --format=csv,noheader 2>/dev/null | head -n 1)}
[ -n "$UUID" ] || die "nvidia-smi does not name GPU 0"

now() { date +%s.%N; }

# alive PID: running and not a zombie
alive() {
	local s
	s=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]
}

run_gpupack() {
	"$GP" mps exec --gpu 0 -- "$GW" info >"$WORK/gp.out" 2>&1
}

# The recipe as job scripts write it, with the wait for the daemon's exit
# that a careful script adds (gpupack waits for it too).
run_recipe() {
	local d="$WORK/hand" rc i
	mkdir -m 700 "$d" "$d/pipe" "$d/log"
	export CUDA_MPS_PIPE_DIRECTORY="$d/pipe" CUDA_MPS_LOG_DIRECTORY="$d/log"
	CUDA_VISIBLE_DEVICES=$UUID "$CTL" -d || { unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY; return 3; }
	for i in $(seq 200); do
		[ -s "$d/pipe/nvidia-cuda-mps-control.pid" ] && break
		sleep 0.005
	done
	HAND_PID=$(cat "$d/pipe/nvidia-cuda-mps-control.pid" 2>/dev/null)
	CUDA_VISIBLE_DEVICES=$UUID "$GW" info >"$WORK/hand.out" 2>&1
	rc=$?
	echo quit | "$CTL" >/dev/null 2>&1
	for i in $(seq 1000); do
		alive "$HAND_PID" || break
		sleep 0.01
	done
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
	HAND_PID=""
	rm -rf "$d"
	return $rc
}

# time_one KIND: the seconds of one run into T (no subshell: the recipe's
# daemon pid must stay visible to the cleanup); fails when the run failed
time_one() {
	local t0 t1
	t0=$(now)
	"run_$1" || return 1
	t1=$(now)
	T=$(python3 -c "print(f'{$t1 - $t0:.4f}')")
}

run_gpupack || die "warm-up of gpupack mps exec failed: $(tail -n 3 "$WORK/gp.out")"
run_recipe || die "warm-up of the recipe failed: $(tail -n 3 "$WORK/hand.out")"

GP_T=""
HAND_T=""
ROWS=""
for i in $(seq "$N"); do
	if [ $((i * 2)) -le "$N" ]; then order="gpupack recipe"; else order="recipe gpupack"; fi
	for k in $order; do
		time_one "$k" || die "run $i of $k failed: $(tail -n 3 "$WORK/gp.out" "$WORK/hand.out" 2>/dev/null)"
		t=$T
		if [ "$k" = gpupack ]; then GP_T="$GP_T $t"; else HAND_T="$HAND_T $t"; fi
		ROWS="$ROWS$i $k $t
"
		echo "run $i $k: $t s"
	done
done

STATS=$(python3 - "$GP_T" "$HAND_T" <<'PY'
import statistics, sys
g = [float(x) for x in sys.argv[1].split()]
h = [float(x) for x in sys.argv[2].split()]
mg, mh = statistics.median(g), statistics.median(h)
print(f"{mg:.4f} {mh:.4f} {mg / mh:.3f} {min(g):.4f} {max(g):.4f} {min(h):.4f} {max(h):.4f}")
PY
)
read -r MG MH RATIO GMIN GMAX HMIN HMAX <<<"$STATS"
VERDICT=$(python3 -c "print('PASS' if $RATIO <= 1.2 else 'FAIL')")

{
	echo "# gpupack mps exec vs the job-script recipe"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader -i 0 2>&1)"
	echo "- command: \`bash bench/mps-exec.sh $N\`, control program $CTL"
	echo "- each run: start a private daemon, \`gpupack-work info\` as its client, stop the daemon and wait for its exit"
	echo "- $N runs each, alternating, after one untimed warm-up of each"
	echo
	echo "| | median s | min s | max s |"
	echo "|---|---|---|---|"
	echo "| gpupack mps exec -- gpupack-work info | $MG | $GMIN | $GMAX |"
	echo "| recipe (mps-control -d; run; quit; wait) | $MH | $HMIN | $HMAX |"
	echo
	echo "ratio gpupack / recipe (medians): **$RATIO** (must be <= 1.2): $VERDICT"
	echo
	echo "## Runs"
	echo
	echo '```'
	printf '%s' "$ROWS"
	echo '```'
	echo
	echo "## Last outputs"
	echo
	echo '```'
	cat "$WORK/gp.out" "$WORK/hand.out" 2>/dev/null
	echo '```'
} >"$REPORT"
echo "RESULT mps-exec median gpupack ${MG}s recipe ${MH}s ratio $RATIO"
echo "$VERDICT mps exec within 1.2x of the recipe (ratio $RATIO)"
echo "report: $REPORT"
[ "$VERDICT" = PASS ]
