#!/usr/bin/env bash
# usage.sh: issue 44's must-shows for per-task usage on the lent GPU, written
# to $OUT/usage.md. Farms of identical PyTorch trainings (bench/auto/train.py)
# under exclusive (one at a time), timeslice (the default policy, never
# changed) and mps (gpupack starts and stops its own daemon):
#   - the sum of per-task joules within 5% of the device's counter over the farm
#   - a task's peak memory within 5% (or 64 MiB) of the same task run alone
#   - per-task GPU time within 10% of each other, their sum within 10% of busy time
#     (a GPU-bound CUDA binary, gpupack-work matmul, under each mode: the
#     trainings' spread is told, not judged: their GPU work is a fraction of
#     a second after seconds of Python start-up)
# and the bound and makespan/bound on three farms: PyTorch trainings, a
# memory-heavy farm (gpupack-work alloc), the GPU-bound binary. Knobs: N
# (tasks a farm, default 8), STEPS and WIDTH (train.py's, default 300 and
# 2048), ITERS (matmul's at n=4096, default 2000: seconds a task on an
# H200), LIMIT (seconds a farm may take, 120), ONLY (farm names to run, the rest skipped: e.g.
# ONLY="matmul-timeslice matmul-timeslice-all"). Each farm's --json in $OUT/usage-json.tgz.
# DRY=1 runs the checks' arithmetic on a --sim farm of sleeps (no GPU).
# Never changes a card setting. About 400 s on an H200.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/gpu/lib.sh
. tests/gpu/lib.sh
export GPU_COMMAND="bash tests/gpu/usage.sh"
gpu_init usage

G=$PWD/build/gpupack
B=$PWD/build
N=${N:-8}
STEPS=${STEPS:-300}
WIDTH=${WIDTH:-2048}
LIMIT=${LIMIT:-120}
DRY=${DRY:-}
TMP=$(mktemp -d /tmp/gusage.XXXXXX)
chmod 700 "$TMP"
trap 'gpu_cleanup; rm -rf "$TMP"' EXIT
SIM=()
[ -n "$DRY" ] && SIM=(--sim topologies/h200-141gb.topo)
TRAIN=(python3 bench/auto/train.py)
[ -n "$DRY" ] && TRAIN=(sh -c "'sleep 0.5'" x)

ONLY=${ONLY:-}
# want NAME: is farm NAME to run (ONLY unset, or naming it)?
want() {
	[ -z "$ONLY" ] && return 0
	case " $ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}

# farm NAME SHARE JOBS CMD...: a farm of N tasks; its --json summary in $TMP/NAME.json
farm() {
	local name=$1 share=$2 jobs=$3
	shift 3
	want "$name" || return 0
	GPUPACK_STATE_DIR=$TMP/st-$name timeout "$LIMIT" "$G" "${SIM[@]}" run --share "$share" -j "$jobs" --json \
		--summary "$@" >"$TMP/$name.json" 2>"$TMP/$name.err"
	local rc=$?
	GPUPACK_STATE_DIR=$TMP/st-$name "$G" mps stop --all --force >/dev/null 2>&1
	check $rc "$name: $N tasks succeed" "$(tail -n 3 "$TMP/$name.err")"
	raw "$name summary" "$(grep '^gpupack: run:' "$TMP/$name.err")"
}

# judge NAME ALONE_PEAK [spread]: the checks on one farm's figures (python3: jq is not on every lent
# machine); the GPU time spread is a check only with "spread" (identical GPU-bound tasks), else told
judge() {
	python3 - "$TMP/$1.json" "$2" "$1" "${3:-}" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
alone, name, gate = float(sys.argv[2]), sys.argv[3], sys.argv[4] == "spread"
u = s.get("usage", [])
def known(k): return [r[k] for r in u if r.get(k) is not None]
j, g, m = known("joules"), known("gpu_s"), known("gpu_mem_peak")
out = []
def check(ok, what): out.append(("PASS " if ok else "FAIL ") + name + ": " + what)
e = s.get("energy_j")
ua = s.get("unattributed_j") or 0
if e and len(j) == len(u) and u:
    check(abs(sum(j) + ua - e) <= 0.05 * e, "sum of per-task J %.1f + unattributed %.1f within 5%% of the counter %.1f" % (sum(j), ua, e))
else:
    out.append("FAIL %s: joules unknown for %d of %d tasks (counter %s)" % (name, len(u) - len(j), len(u), e))
if m and alone > 0:
    worst = max(abs(x - alone) for x in m)
    check(worst <= max(0.05 * alone, 64 << 20), "peak memory within 5%% or 64 MiB of alone (%.0f MiB, worst off %.0f MiB)" % (alone / 2**20, worst / 2**20))
elif alone > 0:
    out.append("FAIL %s: no per-task peak memory" % name)
busy = s.get("gpu_busy_s")
if g and len(g) == len(u):
    spread = (max(g) - min(g)) / (sum(g) / len(g)) if sum(g) > 0 else float("inf")
    (check if gate else lambda ok, what: out.append("INFO " + name + ": " + what))(spread <= 0.10, "per-task GPU time spread %.1f%% (%.2f-%.2f s)" % (100 * spread, min(g), max(g)))
    if busy:
        check(abs(sum(g) - busy) <= 0.10 * busy, "GPU time sum %.1f s within 10%% of busy %.1f s" % (sum(g), busy))
else:
    out.append("FAIL %s: GPU time unknown for %d of %d tasks" % (name, len(u) - len(g), len(u)))
b = s.get("bound") or {}
print("INFO %s: makespan %.2f s, bound %s s (%s), makespan/bound %s; basis %s" % (name, s.get("makespan_s", 0),
      b.get("s"), b.get("limit"), b.get("makespan_ratio"), u[0]["basis"]["gpu_s"]["how"] if u else "-"))
print("\n".join(out))
PY
}

# record the judge's lines as checks (fed by < <(...): a pipe's subshell would lose the counts)
verdicts() {
	while IFS= read -r line; do
		case $line in
		PASS\ *) pass "${line#PASS }" ;;
		FAIL\ *) fail "${line#FAIL }" ;;
		INFO\ *) info "${line#INFO }" ;;
		esac
	done
}

# --- one task alone: its peak memory ---------------------------------------------------------
farm alone exclusive 1 "${TRAIN[@]}" {} "$STEPS" "$WIDTH" ::: 1
[ -s "$TMP/alone.json" ] && ALONE=$(python3 -c 'import json,sys; u=json.load(open(sys.argv[1]))["usage"]; print(u[0]["gpu_mem_peak"] or 0)' "$TMP/alone.json" 2>/dev/null || echo 0)
ALONE=${ALONE:-0}
want alone && info "one training alone: peak $((${ALONE%.*} / 1048576)) MiB"

# --- identical trainings under each share mode ------------------------------------------------
for share in exclusive timeslice mps; do
	jobs=$N
	[ "$share" = exclusive ] && jobs=1
	farm "train-$share" "$share" "$jobs" "${TRAIN[@]}" {} "$STEPS" "$WIDTH" ::: $(seq "$N")
	[ -s "$TMP/train-$share.json" ] && verdicts < <(judge "train-$share" "$ALONE")
done

# --- the bound on a memory-heavy farm and a GPU-bound CUDA binary -----------------------------
W=$B/gpupack-work
if [ -z "$DRY" ] && ! make --no-print-directory -s work >/dev/null 2>&1; then
	skip "memory-heavy and GPU-bound farms" "gpupack-work did not build here"
elif [ -n "$DRY" ] || [ -x "$W" ]; then
	if [ -n "$DRY" ]; then
		farm mem timeslice 4 sh -c "'sleep 0.3'" x ::: $(seq "$N")
		for share in exclusive timeslice mps; do
			jobs=4
			[ "$share" = exclusive ] && jobs=1
			farm "matmul-$share" "$share" "$jobs" sh -c "'sleep 0.3'" x ::: $(seq "$N")
		done
		farm matmul-timeslice-all timeslice "$N" sh -c "'sleep 0.3'" x ::: $(seq "$N")
	else
		# the input goes to sh as $1, unused (gpupack-work takes no stray argument: the H200 run
		# of 2026-12-03 failed all 12 with a usage error)
		farm mem timeslice 4 sh -c "'\"\$0\" alloc --mib 16384 --hold-ms 3000'" "$W" ::: $(seq "$N")
		for share in exclusive timeslice mps; do
			jobs=4
			[ "$share" = exclusive ] && jobs=1
			farm "matmul-$share" "$share" "$jobs" sh -c "'\"\$0\" matmul --n 4096 --iters ${ITERS:-2000}'" "$W" \
				::: $(seq "$N")
		done
		# every task under the same crowding (-j N): the timeslice must-show's farm of identical
		# tasks. At -j 4 the last two ran two at a time, and time-slicing's switches cost GPU
		# time by the crowding (on the H200, 36.3 s busy against 32.5 s exclusive): that farm's
		# spread is told
		farm matmul-timeslice-all timeslice "$N" sh -c "'\"\$0\" matmul --n 4096 --iters ${ITERS:-2000}'" \
			"$W" ::: $(seq "$N")
	fi
	[ -s "$TMP/mem.json" ] && verdicts < <(judge mem 0 | grep '^INFO')
	for share in exclusive mps timeslice-all; do
		[ -s "$TMP/matmul-$share.json" ] && verdicts < <(judge "matmul-$share" 0 spread)
	done
	[ -s "$TMP/matmul-timeslice.json" ] && verdicts < <(judge matmul-timeslice 0)
fi
# each farm's --json (its per-task usage list) beside the report
(cd "$TMP" && tar -czf "$OUT/usage-json.tgz" ./*.json 2>/dev/null)
gpu_finish
