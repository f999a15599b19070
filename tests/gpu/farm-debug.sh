#!/usr/bin/env bash
# farm-debug.sh: why a farm's GPU tasks stall: dumps the state of every task
# process of a small farm a few seconds in, next to the same tasks run by xargs.
set -u
cd "$(dirname "$0")/../.." || exit 1
G=$PWD/build/gpupack W=$PWD/build/gpupack-work
OUT=${OUT:-/tmp}
D=$(mktemp -d)
dump() {
	echo "--- $1: process table"
	ps -eo pid,ppid,pgid,stat,wchan:24,etimes,args | grep -E 'gpupack|sh -c' | grep -v grep
	for p in $(pgrep -f 'gpupack-work matmul'); do
		echo "--- pid $p"
		grep -E '^(State|SigBlk|SigIgn|SigCgt|Threads)' "/proc/$p/status"
		echo "wchan: $(cat "/proc/$p/wchan" 2>/dev/null)"
		cat "/proc/$p/stack" 2>/dev/null | head -n 12
		ls -l "/proc/$p/fd" 2>/dev/null | awk '{print $9, $10, $11}' | head -n 40
		tr '\0' '\n' <"/proc/$p/environ" | grep -E '^(CUDA|GPUPACK|HOME|PATH|LD_)' 
		for t in /proc/$p/task/*; do echo "thread $(basename "$t") $(cat "$t/wchan" 2>/dev/null) $(cat "$t/stat" | awk '{print $3}')"; done
	done
}
echo "=== xargs baseline"
time (seq 6 | xargs -P 2 -I{} "$W" matmul --n 512 --iters 20 >"$D/x.out")
grep -c '"ok":true' "$D/x.out"
for mode in timeslice exclusive; do
	echo "=== gpupack run --share $mode"
	timeout 60 "$G" run --share "$mode" -j 2 --timeout 25 --joblog "$D/jl-$mode" --summary "$W" matmul --n 512 --iters 20 ::: 1 2 3 4 5 6 >"$D/$mode.out" 2>"$D/$mode.err" &
	sleep 8
	dump "$mode after 8 s"
	wait
	echo "rc=$? ok lines: $(grep -c '"ok":true' "$D/$mode.out")"
	cat "$D/jl-$mode"; tail -n 5 "$D/$mode.err"
done
echo "=== one task, strace-free timing: env -i"
time env -i PATH=/usr/bin:/bin CUDA_VISIBLE_DEVICES=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1) "$W" matmul --n 512 --iters 20
