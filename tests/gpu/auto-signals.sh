#!/usr/bin/env bash
# auto-signals.sh: what the signals of the farm's concurrency controller
# (-j auto) read on the real GPU, under time-slicing and under MPS, and how
# fast they answer; plus one task of each bench/auto.sh class alone, to size
# the classes. Run through tests/gpu/all.sh auto-signals.
#
# Each experiment samples tests/tools/gpu-signals every 100 ms while known
# work runs (gpupack-work matmul n=512 and n=4096, 1 and 4 at once, the
# PyTorch task of bench/auto/train.py, alloc tasks that run out of memory)
# and keeps the samples (sig-*.jsonl) and the tasks' own lines (out-*.txt).
#
# Never changes a card setting; the one MPS daemon (gpupack mps start) is
# stopped before the script ends.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/gpu/lib.sh
. tests/gpu/lib.sh
export GPU_COMMAND="bash tests/gpu/auto-signals.sh"
gpu_init auto-signals

G=$PWD/build/gpupack
W=$PWD/build/gpupack-work
SIG=$PWD/build/tests/tools/gpu-signals
TMP=$(mktemp -d /tmp/gpupack-auto.XXXXXX)
chmod 700 "$TMP"
export GPUPACK_STATE_DIR="$TMP/state"
D=$OUT/auto-signals
mkdir -p "$D"

cleanup_auto() {
	gpu_cleanup
	"$G" mps stop --all --force >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup_auto EXIT

[ -x "$SIG" ] || { fail "gpu-signals built" "$SIG missing"; gpu_finish; }
MEM_MIB=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
info "GPU memory ${MEM_MIB} MiB; CPUs $(nproc)"

# experiment NAME SECONDS CMD...: sample for SECONDS while CMD runs (started 0.5 s in)
experiment() {
	local name=$1 secs=$2
	shift 2
	"$SIG" --ms 100 --seconds "$secs" >"$D/sig-$name.jsonl" 2>"$D/sig-$name.err" &
	local sp=$!
	sleep 0.5
	local t0=$(date +%s.%N)
	"$@" >"$D/out-$name.txt" 2>&1
	local rc=$?
	local t1=$(date +%s.%N)
	wait "$sp"
	info "$name: rc=$rc, $(echo "$t1 - $t0" | bc -l | cut -c1-6) s"
	python3 - "$D/sig-$name.jsonl" "$name" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if not rows:
    print("SUMMARY", sys.argv[2], "no samples"); sys.exit()
def mx(k): return max(r[k] for r in rows)
procs = max(r["nprocs"] for r in rows)
pm = max((p[1] for r in rows for p in r["procs"]), default=0)
first_busy = next((r["t"] for r in rows if r["busy"] > 0.05), None)
first_sm = next((r["t"] for r in rows if r["sm_active"] > 0.05), None)
first_proc = next((r["t"] for r in rows if r["nprocs"] > 0), None)
act = [r["sm_active"] for r in rows if r["sm_active"] >= 0]
mid = sorted(act)[len(act)//2] if act else -1
print("SUMMARY %s: busy max %.2f; sm_active max %.3f median %.3f; occupancy max %.3f; procs max %d (max %d MiB each); mem_used max %d MiB; cpu_busy max %.2f; first busy %s s, first sm %s s, first proc %s s; call_ms max %.2f; gpm_span median %.3f" % (
    sys.argv[2], mx("busy"), mx("sm_active"), mid, mx("sm_occupancy"), procs, pm, mx("mem_used"), mx("cpu_busy"),
    first_busy, first_sm, first_proc, mx("call_ms"), sorted(r["gpm_span"] for r in rows)[len(rows)//2]))
EOF
}

# together N CMD...: N copies of CMD at once (each its own line of output)
together() {
	local n=$1
	shift
	for _ in $(seq "$n"); do "$@" & done
	wait
}

experiment idle 1.5 true

# ---- time-slicing (no MPS daemon) ----
experiment ts-512x1 4 "$W" matmul --n 512 --iters 60000
experiment ts-512x4 6 together 4 "$W" matmul --n 512 --iters 60000
experiment ts-4096x1 4 "$W" matmul --n 4096 --iters 300
experiment ts-4096x2 6 together 2 "$W" matmul --n 4096 --iters 300
experiment ts-torch1 10 python3 bench/auto/train.py 1 200

# ---- MPS ----
out=$("$G" mps start --gpu 0 2>&1)
check $? "mps start" "$out"
envs=$("$G" mps env --gpu 0)
mps() { ( eval "$envs"; "$@" ); }
experiment mps-512x1 4 mps "$W" matmul --n 512 --iters 60000
experiment mps-512x4 5 mps together 4 "$W" matmul --n 512 --iters 60000
experiment mps-512x8 6 mps together 8 "$W" matmul --n 512 --iters 60000
experiment mps-4096x1 4 mps "$W" matmul --n 4096 --iters 300
experiment mps-4096x2 6 mps together 2 "$W" matmul --n 4096 --iters 300
experiment mps-torch16 25 mps together 16 python3 bench/auto/train.py 1 200
SIXTH=$((MEM_MIB / 6))
experiment mps-oom7 8 mps together 7 "$W" alloc --mib "$SIXTH" --hold-ms 3000
grep -h "error\|memory" "$D/out-mps-oom7.txt" | sort | uniq -c | head -5 | while read -r l; do info "oom line: $l"; done
experiment mps-mixed4 8 mps together 4 "$W" matmul --n 4096 --iters 100 --cpu-ms 4
out=$("$G" mps stop --gpu 0 2>&1)
check $? "mps stop" "$out"

# ---- one task of each class alone (sizes for bench/auto.sh), time-sliced ----
for c in "matmul --n 512 --iters 30000" "matmul --n 4096 --iters 200" "matmul --n 1024 --iters 5000" \
	"matmul --n 4096 --iters 100 --cpu-ms 4" "alloc --mib $SIXTH --hold-ms 1500"; do
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	"$W" $c >/dev/null 2>&1
	info "alone: $c: $(echo "$(date +%s.%N) - $t0" | bc -l | cut -c1-6) s"
done
t0=$(date +%s.%N)
python3 bench/auto/train.py 1 200 >"$D/out-torch-alone.txt" 2>&1
info "alone: train.py 200 steps: $(echo "$(date +%s.%N) - $t0" | bc -l | cut -c1-6) s: $(tail -1 "$D/out-torch-alone.txt")"
tar -C "$OUT" -czf "$OUT/auto-signals.tgz" auto-signals
gpu_finish
