#!/usr/bin/env bash
# auto-x4.sh: bench/auto.sh on a four-GPU host (nvidia-h200-x4: 64 CPUs) in one
# device call: the python class on all four GPUs (one farm, one CPU budget),
# then classes on one GPU and 16 of the CPUs (CUDA_VISIBLE_DEVICES=0 and
# taskset: gpupack takes the CPUs it may run on as its host), as a one-GPU,
# 16-core machine. Reports and a tarball of the raw runs go to $OUT.
#
#   bash tests/gpu/auto-x4.sh [PART...]     PART: x4 (python on every GPU), one (CLASSES1 on GPU 0)
#   CLASSES1="python memory gpu" PYN1=32 B4=170 B1=380 ...
#
# Never changes a card setting; bench/auto.sh stops every MPS daemon it starts,
# and any left over is stopped here before returning.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/auto-x4-out}
W=/tmp/auto-x4
rm -rf "$W"
mkdir -p "$W" "$OUT"
export NCCL_NVLS_ENABLE=0
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(x4 one)
nvidia-smi --query-gpu=index,name,driver_version,memory.total,mig.mode.current,compute_mode --format=csv \
	>"$OUT/setup.txt" 2>&1
echo "CPUs: $(nproc); commit: $(git rev-parse --short HEAD 2>/dev/null) + $(git status --porcelain 2>/dev/null | wc -l) changed" \
	>>"$OUT/setup.txt"
make -j"$(nproc)" build/gpupack build/gpupack-work >"$W/build.log" 2>&1 || { tail -n 20 "$W/build.log"; exit 1; }
for p in "${parts[@]}"; do
	case $p in
	x4)
		OUT=$W/x4 CLASSES=python BUDGET=${B4:-170} AUTO2=python bash bench/auto.sh "$OUT/auto-x4.md" ;;
	one)
		CUDA_VISIBLE_DEVICES=0 OUT=$W/one CLASSES=${CLASSES1:-"python memory gpu"} PYN=${PYN1:-32} \
			BUDGET=${B1:-380} taskset -c 0-15 bash bench/auto.sh "$OUT/auto-one.md" ;;
	*) echo "auto-x4.sh: unknown part $p" >&2 ;;
	esac
	echo "=== $p: $(date -u +%T)"
done
# nothing of ours left running
left=$(pgrep -f 'nvidia-cuda-mps-(control|server)' | wc -l)
echo "MPS daemons left: $left"
[ "$left" = 0 ] || { pgrep -af nvidia-cuda-mps; pkill -f 'nvidia-cuda-mps-(control|server)'; }
tar -C "$W" -czf "$OUT/auto-x4-raw.tgz" x4 one 2>/dev/null
ls -la "$OUT"
