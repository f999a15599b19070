#!/usr/bin/env bash
# parallel.sh: gpupack run's GNU parallel command lines with real CUDA tasks
# (gpupack-work) on the GPU. Needs build/gpupack and build/gpupack-work (e.g.
# through tests/gpu/all.sh parallel).
#
#   bash tests/gpu/parallel.sh        report in $OUT/parallel.md
#
# Checks, under --share mps and timeslice: a quoted shell line with a pipe
# and a redirection runs CUDA tasks (each value quoted); a plain line is
# exec'd directly (no shell between gpupack and the CUDA process: the task's
# parent is gpupack); {} with two sources gives two words; --tag and -k;
# --results in parallel's layout; --halt now,fail=1 with a faulting task
# exits with that task's status, leaves the ended tasks out of the joblog,
# and --resume then finishes them; --retries counts tries in all.
#
# Never changes a card setting. MPS daemons are started by gpupack run in a
# private state directory and stopped by it; none is left.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/gpu/lib.sh
. tests/gpu/lib.sh
export GPU_COMMAND="bash tests/gpu/parallel.sh"
gpu_init parallel

G=${GPUPACK:-$PWD/build/gpupack}
W=${GPUPACK_WORK:-$PWD/build/gpupack-work}
TMP=$(mktemp -d /tmp/gpupack-parallel.XXXXXX)
chmod 700 "$TMP"
export GPUPACK_STATE_DIR="$TMP/state"

cleanup_parallel() {
	gpu_cleanup
	for f in "$GPUPACK_STATE_DIR"/mps/*/daemon; do
		[ -f "$f" ] || continue
		"$G" mps stop --all --force >/dev/null 2>&1
		break
	done
	rm -rf "$TMP"
}
trap cleanup_parallel EXIT

if [ ! -x "$G" ] || [ ! -x "$W" ] || ! nvidia-smi -L >/dev/null 2>&1; then
	fail "prerequisites" "$G, $W or a GPU missing"
	gpu_finish
	exit 1
fi
info "gpupack $("$G" --version); shell for lines: ${PARALLEL_SHELL:-the one gpupack was started from}"
cd "$TMP" || exit 1

for mode in mps timeslice; do
	# a quoted line: a pipe, a redirection, a value with a space. The placeholder stands
	# bare: gpupack quotes the value as it inserts it (as GNU parallel does); '{2}' in
	# quotes of the user's own would split it, in parallel too
	mkdir -p "out $mode"
	timeout -k 5 150 "$G" run --timeout 90 --gpus 0 --share "$mode" -j 4 --joblog "jl-$mode" \
		"$W matmul --n {1} --iters 20 | tee {2}/{1}.json | grep -c '\"checksum_ok\":true'" \
		::: 256 512 1024 2048 ::: "out $mode" >"line-$mode.out" 2>"line-$mode.err"
	rc=$?
	check "$rc" "$mode: a quoted shell line runs CUDA tasks" "rc=$rc: $(tail -n 2 "line-$mode.err")"
	check "$([ "$(grep -c '^1$' "line-$mode.out")" = 4 ]; echo $?)" "$mode: every task's checksum through the pipe"
	check "$([ "$(ls "out $mode" | wc -l)" = 4 ]; echo $?)" "$mode: the redirection into a directory with a space"
	raw "joblog $mode" "$(cat "jl-$mode")"
	# a plain line: exec'd with no shell; the CUDA process is gpupack's own child
	out=$(timeout -k 5 150 "$G" run --gpus 0 --share "$mode" -j 2 -k --tag \
		"$W" matmul --n {} --iters 5 ::: 256 512 2>&1)
	rc=$?
	check "$rc" "$mode: a plain line (exec'd directly)" "rc=$rc: $out"
	tab=$(printf '\t')
	first=$(printf '%s\n' "$out" | head -n 1)
	if [[ $first == "256$tab"*'"ok":true'* ]]; then
		pass "$mode: --tag -k on real output"
	else
		fail "$mode: --tag -k on real output" "$first"
	fi
done

# {} with two sources: two words
out=$(timeout -k 5 150 "$G" run --gpus 0 --share mps -j 2 -k "$W" matmul --iters 5 --n {} ::: 256 ::: --streams 2>&1 | head -c 300)
info "two sources in {}: $out"

# --results in parallel's layout
timeout -k 5 150 "$G" run --gpus 0 --share mps -j 4 --results res "$W" matmul --iters 5 --n ::: 256 512 >/dev/null 2>&1
check "$([ -s res/1/256/stdout ] && [ -s res/1/512/stdout ] && [ "$(cat res/1/512/seq)" = 2 ]; echo $?)" \
	"--results DIR/1/<value>/stdout and seq"

# --halt now,fail=1 with a faulting task: its status; the ended tasks unlogged; --resume finishes them
timeout -k 5 150 "$G" run --gpus 0 --share mps -j 4 --joblog jl-halt --halt now,fail=1 \
	"if [ {} = F ]; then sleep 2; exec $W fault; else exec $W matmul --n 2048 --iters 2000; fi" ::: 1 2 3 F 4 5 \
	>halt.out 2>halt.err
rc=$?
# the faulting task is the one whose test reads [ F = F ] (every line names "fault")
fault_status=$(awk -F'\t' 'NR > 1 && index($9, "[ F = F ]") { print $7 }' jl-halt)
check "$([ "$rc" = "${fault_status:-x}" ] && [ "$rc" != 0 ]; echo $?)" "--halt now,fail=1: the faulting task's status ($rc)"
logged=$(($(wc -l <jl-halt) - 1))
info "--halt now: $logged of 6 tasks logged"
timeout -k 5 150 "$G" run --gpus 0 --share mps -j 4 --joblog jl-halt --resume \
	"if [ {} = F ]; then sleep 2; exec $W fault; else exec $W matmul --n 2048 --iters 2000; fi" ::: 1 2 3 F 4 5 \
	>resume.out 2>resume.err
check "$([ "$(awk -F'\t' 'NR > 1 { print $1 }' jl-halt | sort -u | wc -l)" = 6 ]; echo $?)" \
	"--resume runs the tasks --halt ended (every task logged once at the end)"
raw "halt joblog" "$(cat jl-halt)"

# --retries 2: two tries in all
rm -f tried
timeout -k 5 150 "$G" run --gpus 0 --share mps --retries 2 \
	"echo x >> tried; [ \$(wc -l < tried) -ge 2 ] && exec $W matmul --n 256 --iters 5 || exec $W fault; : {}" ::: a \
	>retry.out 2>retry.err
rc=$?
check "$([ "$rc" = 0 ] && [ "$(wc -l <tried)" = 2 ]; echo $?)" "--retries 2: a task that faults once succeeds on its second try"

left=$(pgrep -c -f "nvidia-cuda-mps-control -d" || true)
info "MPS control daemons on the machine after the checks: $left"
gpu_finish
