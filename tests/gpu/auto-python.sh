#!/usr/bin/env bash
# auto-python.sh: the start-up-bound PyTorch class of bench/auto.sh (20
# trainings of bench/auto/train.py), -j auto against -j 32, alternated
# three times each after one untimed task, so that neither pays for a cold
# page cache or runs always first. In bench/auto.sh's one-shot runs on the
# H100, auto (run first) came out at 0.81 of -j 32 although it had all 20
# tasks started within 1.5 s; every auto run's training phase took ~11 s
# per task where -j 32's spread from 1 to 8 s. This tells order and chance
# from a real effect of -j auto (its NVML sampling while 20 MPS clients
# start, for one). Run through tests/gpu/all.sh auto-python.
# On the H100 it told: auto 0.99, 0.97, 0.95 of -j 32, training phases
# spread alike: order and a cold machine (bench/results/2026-11-22-auto-python-h100.md).
#
# Never changes a card setting; gpupack run starts and stops its own MPS
# daemon each time.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/gpu/lib.sh
. tests/gpu/lib.sh
export GPU_COMMAND="bash tests/gpu/auto-python.sh"
gpu_init auto-python

G=$PWD/build/gpupack
TMP=$(mktemp -d /tmp/gap.XXXXXX)
chmod 700 "$TMP"
trap 'gpu_cleanup; rm -rf "$TMP"' EXIT
N=${N:-20}

one() {
	local st=$TMP/s$RANDOM t0 t1
	t0=$(date +%s.%N)
	GPUPACK_STATE_DIR=$st "$G" run $1 --json python3 bench/auto/train.py ::: $(seq "$N") >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	t1=$(date +%s.%N)
	GPUPACK_STATE_DIR=$st "$G" mps stop --all --force >/dev/null 2>&1
	check $rc "${1:-auto}: all $N trainings succeed" "$(tail -n 2 "$TMP/err")"
	# --json: the summary alone on stdout, the tasks' lines on stderr
	python3 - "$TMP/err" "$1" "$t0" "$t1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"seed"')]
tr = sorted(r["train_s"] for r in rows)
ini = sorted(r["init_s"] for r in rows)
print("RESULT %-8s makespan %.1f s; init %.1f-%.1f s; train %.1f-%.1f s (median %.1f)" % (
    sys.argv[2] or "auto", float(sys.argv[4]) - float(sys.argv[3]), ini[0], ini[-1], tr[0], tr[-1], tr[len(tr) // 2]))
PY
	raw "${1:-auto} summary" "$(tail -n 1 "$TMP/out")"
}

"$G" run -j 1 python3 bench/auto/train.py ::: 0 >/dev/null 2>&1
for _ in 1 2 3; do
	one ""
	one "-j 32"
done
gpu_finish
