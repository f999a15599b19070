#!/usr/bin/env bash
# fault-rounds.sh: bench/auto.sh's fault class (16 PyTorch trainings, seeds 5 and 11 die of a
# device-side assert) under -j auto and -j 16, ROUNDS (2) times alternating, each from an empty
# state directory: makespans, the hang watch's lines, the MPS server's log. Reports to $OUT.
# Never changes a card setting; every MPS daemon started is stopped.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/fault-rounds}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 FAULT_SEEDS=5,11
make -j"$(nproc)" build/gpupack >"$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
G=$PWD/build/gpupack
rep=$OUT/fault-rounds.md
echo "| round | -j | makespan (s) | ok | failed | hung reruns |" >"$rep"
echo "|---|---|---|---|---|---|" >>"$rep"
for r in $(seq "${ROUNDS:-2}"); do
	for j in auto 16; do
		st=$(mktemp -d /tmp/fr.XXXXXX)
		n=r$r-j$j
		t0=$(date +%s.%N)
		GPUPACK_STATE_DIR=$st timeout -k 10 "${LIMIT:-120}" "$G" run -j "$j" --json --joblog "$OUT/$n.joblog" \
			python3 bench/auto/train.py ::: $(seq 16) >"$OUT/$n.out" 2>"$OUT/$n.err"
		t1=$(date +%s.%N)
		GPUPACK_STATE_DIR=$st "$G" mps stop --all --force >/dev/null 2>&1
		find "$st" -name server.log -exec cp {} "$OUT/$n.server.log" \; 2>/dev/null
		tail -n 1 "$OUT/$n.out" >"$OUT/$n.json"
		rm -f "$OUT/$n.out"
		ok=$(awk -F'\t' 'NR > 1 && $7 == 0' "$OUT/$n.joblog" | wc -l)
		failed=$(awk -F'\t' 'NR > 1 && $7 != 0' "$OUT/$n.joblog" | wc -l)
		hung=$(jq -r '.rerun_reasons["hung beside an MPS fault"] // 0' "$OUT/$n.json" 2>/dev/null)
		echo "| $r | $j | $(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.1f", a - b }') | $ok | $failed | ${hung:-?} |" >>"$rep"
		grep -h "gpupack" "$OUT/$n.err" | sed "s/^/$n: /" >>"$OUT/warnings.txt"
		rm -rf "$st"
	done
done
left=$(pgrep -f 'nvidia-cuda-mps-(control|server)' | wc -l)
echo "MPS daemons left: $left" >>"$rep"
[ "$left" = 0 ] || pkill -f 'nvidia-cuda-mps-(control|server)'
cat "$rep" "$OUT/warnings.txt" 2>/dev/null
