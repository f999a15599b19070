#!/usr/bin/env bash
# farm.sh: `gpupack run` on the real GPU (run by the lead on the device; needs
# build/gpupack and build/gpupack-work, e.g. through tests/gpu/all.sh farm).
#
#   bash tests/gpu/farm.sh            report in $OUT/farm.md
#
# Checks: 64 matmul tasks complete with correct checksums in each share mode;
# --share mps beats --share timeslice on small matrices (ratio reported); one
# faulting task under MPS loses no other task; killing the MPS server mid-run
# loses no task (--retries 3: three tries in all, as GNU parallel counts); on two GPUs a farm keeps both busy and each task
# sees only its own GPU. Measures the per-client context memory with and
# without MPS and the MPS server's memory, for farm/cost.h.
#
# Never changes a card setting. Every MPS daemon is started by gpupack run
# itself in a private state directory and stopped by it; the script checks
# none is left.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/gpu/lib.sh
. tests/gpu/lib.sh
export GPU_COMMAND="bash tests/gpu/farm.sh"
gpu_init farm

G=${GPUPACK:-$PWD/build/gpupack}
W=${GPUPACK_WORK:-$PWD/build/gpupack-work}
TMP=$(mktemp -d /tmp/gpupack-farm.XXXXXX)
chmod 700 "$TMP"
export GPUPACK_STATE_DIR="$TMP/state"
NTASKS=${NTASKS:-64}

cleanup_farm() {
	gpu_cleanup
	# a daemon of this script's state directory must not outlive it
	for f in "$GPUPACK_STATE_DIR"/mps/*/daemon; do
		[ -f "$f" ] || continue
		"$G" mps stop --all --force >/dev/null 2>&1
		break
	done
	rm -rf "$TMP"
}
trap cleanup_farm EXIT

if [ ! -x "$G" ] || [ ! -x "$W" ]; then
	fail "prerequisites" "$G or $W not built (make)"
	gpu_finish
	exit 1
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
	fail "prerequisites" "nvidia-smi -L fails: no GPU"
	gpu_finish
	exit 1
fi
NGPU=$(nvidia-smi -L | grep -c '^GPU ')
info "GPUs: $NGPU; gpupack $("$G" --version)"
servers_before=$(pgrep -c -f nvidia-cuda-mps-server || true)

# json_num JSON KEY: the first number under "KEY" in a JSON line
json_num() { printf '%s' "$1" | grep -o "\"$2\":[-0-9.eE+]*" | head -n 1 | cut -d: -f2; }
# summary FILE: the last line of gpupack's stdout (the --json summary)
summary() { tail -n 1 "$1"; }

# check_results DIR N NAME: N results, each one JSON line with ok and checksum_ok
check_results() {
	local dir=$1 n=$2 name=$3 good bad
	good=$(cat "$dir"/1/*/stdout 2>/dev/null | grep '"mode":"matmul"' | grep '"ok":true' | grep -c '"checksum_ok":true')
	bad=$(cat "$dir"/1/*/stdout 2>/dev/null | grep '"mode":"matmul"' | grep -c '"ok":false')
	check $((good == n && bad == 0 ? 0 : 1)) "$name: $n tasks with correct checksums" "$good good, $bad bad"
}

# every farm here is bounded (timeout 150 s): a hang is a failure with a log, not a lost call

# --- 1. each share mode: 64 tasks, correct checksums -----------------------------------------
declare -A SPAN
for mode in exclusive timeslice mps; do
	j=8
	[ "$mode" = exclusive ] && j=1
	d="$TMP/res-$mode"
	timeout -k 5 150 "$G" run --timeout 90 --share "$mode" -j "$j" --results "$d" --json --joblog "$TMP/jl-$mode" \
		--shell ": {}; exec $W matmul --n 512 --iters 20" ::: $(seq "$NTASKS") >"$TMP/$mode.out" 2>"$TMP/$mode.err"
	rc=$?
	check "$rc" "share $mode: gpupack run exits 0" "rc=$rc: $(tail -n 3 "$TMP/$mode.err")"
	check_results "$d" "$NTASKS" "share $mode"
	SPAN[$mode]=$(json_num "$(summary "$TMP/$mode.out")" makespan_s)
	info "share $mode (-j $j, matmul --n 512 --iters 20): makespan ${SPAN[$mode]} s"
	raw "summary $mode" "$(summary "$TMP/$mode.out")"
	raw "one result ($mode)" "$(head -n 1 "$d/1/1/stdout" 2>/dev/null)"
done

# --- 2. mps vs timeslice on small matrices ----------------------------------------------------------
for mode in timeslice mps; do
	timeout -k 5 150 "$G" run --timeout 90 --share "$mode" -j 8 --json --results "$TMP/cmp-$mode" \
		--shell ": {}; exec $W matmul --n 256 --iters 400" ::: $(seq "$NTASKS") >"$TMP/cmp-$mode.out" 2>&1
	SPAN[cmp-$mode]=$(json_num "$(summary "$TMP/cmp-$mode.out")" makespan_s)
	check_results "$TMP/cmp-$mode" "$NTASKS" "compare $mode"
done
# awk, not bc: the device machine may lack bc
ratio=$(awk -v t="${SPAN[cmp-timeslice]:-0}" -v m="${SPAN[cmp-mps]:-0}" 'BEGIN { printf "%.3f", (m > 0 ? t / m : 0) }')
info "RESULT mps vs timeslice, $NTASKS x matmul --n 256 --iters 400, -j 8: makespan timeslice ${SPAN[cmp-timeslice]:-?} s, mps ${SPAN[cmp-mps]:-?} s, ratio ${ratio}x"
check "$(awk -v r="$ratio" 'BEGIN { exit !(r > 1) }'; echo $?)" "mps beats timeslice on small matrices (ratio ${ratio:-?})"

# --- 3. one faulting task under MPS -------------------------------------------------------------------
timeout -k 5 150 "$G" run --timeout 90 --share mps -j 8 --retries 1 --json --joblog "$TMP/jl-fault" --results "$TMP/res-fault" \
	--shell "if [ {} = F ]; then exec $W fault; else exec $W matmul --n 1024 --iters 300; fi" \
	::: $(seq 15) F $(seq 16 30) >"$TMP/fault.out" 2>"$TMP/fault.err"
rc=$?
check $((rc == 1 ? 0 : 1)) "fault under mps: exactly one task failed (exit 1)" "rc=$rc"
nfailed=$(awk -F'\t' 'NR > 1 && $7 != 0' "$TMP/jl-fault" | wc -l)
# the fault task is input F: seq 16
fault_rc=$(awk -F'\t' 'NR > 1 && $1 == 16 { print $7 }' "$TMP/jl-fault")
check $((nfailed == 1 ? 0 : 1)) "fault under mps: no other task lost" "$nfailed failed"
check $((fault_rc != 0 ? 0 : 1)) "fault under mps: the fault task itself failed" "exit ${fault_rc:-none}"
check_results "$TMP/res-fault" 30 "fault under mps: the 30 matmuls"
raw "fault summary" "$(summary "$TMP/fault.out")"
raw "fault task output" "$(grep -l '"mode":"fault"' "$TMP"/res-fault/1/*/stdout 2>/dev/null | head -n 1 | xargs cat 2>/dev/null)"

# --- 4. the MPS server killed mid-run ------------------------------------------------------------------
bg timeout -k 5 150 "$G" run --timeout 90 --share mps -j 8 --retries 3 --json --joblog "$TMP/jl-kill" --results "$TMP/res-kill" \
	--shell ": {}; exec $W matmul --n 2048 --iters 200" ::: $(seq 32) >"$TMP/kill.out" 2>"$TMP/kill.err"
farm=$BG_PID
killed=""
for _ in $(seq 100); do
	sleep 0.2
	dpid=$(sed -n 's/^pid=//p' "$GPUPACK_STATE_DIR"/mps/*/daemon 2>/dev/null | head -n 1)
	[ -n "$dpid" ] || continue
	spid=$(pgrep -P "$dpid" -f nvidia-cuda-mps-server | head -n 1)
	[ -n "$spid" ] || continue
	n=$(grep -c '^[0-9]' "$TMP/jl-kill" 2>/dev/null)
	[ "${n:-0}" -ge 2 ] || continue
	kill -9 "$spid" && killed=$spid
	break
done
wait "$farm"
rc=$?
check "$([ -n "$killed" ]; echo $?)" "server kill: the MPS server was killed mid-run (pid ${killed:-none})"
check "$rc" "server kill: gpupack run exits 0 with --retries 3" "rc=$rc: $(tail -n 2 "$TMP/kill.err")"
check_results "$TMP/res-kill" 32 "server kill: no task lost"
raw "server kill summary" "$(summary "$TMP/kill.out")"

# --- 5. two GPUs ----------------------------------------------------------------------------------------
if [ "$NGPU" -ge 2 ]; then
	timeout -k 5 150 "$G" run --timeout 90 --share mps -j 4 --json --results "$TMP/res-two" \
		--shell ": {}; echo \"want=\$GPUPACK_GPU\"; $W info && exec $W matmul --n 2048 --iters 300" \
		::: $(seq "$NTASKS") >"$TMP/two.out" 2>"$TMP/two.err"
	rc=$?
	check "$rc" "two GPUs: gpupack run exits 0" "rc=$rc"
	check_results "$TMP/res-two" "$NTASKS" "two GPUs"
	mismatch=0
	for f in "$TMP"/res-two/1/*/stdout; do
		want=$(sed -n 's/^want=//p' "$f")
		got=$(grep '"mode":"info"' "$f" | grep -o '"uuid":"[^"]*"' | cut -d'"' -f4)
		[ -n "$want" ] && [ "$want" = "$got" ] || mismatch=$((mismatch + 1))
	done
	check "$mismatch" "two GPUs: each task sees only its own GPU (info uuid == GPUPACK_GPU)" "$mismatch mismatches"
	s=$(summary "$TMP/two.out")
	shares=$(printf '%s' "$s" | grep -o '"busy_share":[0-9.eE+-]*' | cut -d: -f2 | tr '\n' ' ')
	low=$(printf '%s' "$shares" | awk '{ for (i = 1; i <= NF; i++) if ($i < 0.8) n++ } END { print n + 0 }')
	ndev=$(printf '%s' "$shares" | wc -w)
	check $((ndev >= 2 && low == 0 ? 0 : 1)) "two GPUs: both kept busy (busy share > 0.8 each: $shares)"
	info "RESULT two GPUs: busy shares $shares, makespan $(json_num "$s" makespan_s) s"
	raw "two GPUs summary" "$s"
else
	skip "two GPUs" "$NGPU GPU here (run on nvidia-h200-x2)"
fi

# --- 6. memory for the packing constants ------------------------------------------------------------
used_mib() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i "$1" | tr -d ' '; }
gpu0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0)
for mode in timeslice mps; do
	base=$(used_mib 0)
	bg timeout -k 5 150 "$G" run --timeout 90 --gpus 0 --share "$mode" -j 4 --results "$TMP/mem-$mode" \
		--shell ": {}; exec $W alloc --mib 1 --hold-ms 6000" ::: 1 2 3 4 >/dev/null 2>&1
	p=$BG_PID
	sleep 4
	during=$(used_mib 0)
	apps=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader -i 0 2>&1)
	wait "$p"
	per=$(( (during - base - 4) / 4 ))
	info "RESULT memory $mode: GPU used before ${base} MiB, with 4 clients of 1 MiB ${during} MiB: ~${per} MiB per client (server included under mps)"
	raw "compute apps during $mode" "$apps"
	if [ "$mode" = mps ]; then
		srv=$(printf '%s\n' "$apps" | grep -i 'mps-server' | grep -o '[0-9]* MiB' | head -n 1)
		info "RESULT MPS server memory (nvidia-smi compute apps): ${srv:-not listed}"
	fi
done
for mode in timeslice mps; do
	out=$(timeout -k 5 150 "$G" run --gpus 0 --share "$mode" -j 1 --shell ": {}; exec $W info" ::: 1 2>&1)
	info "RESULT gpupack-work info under $mode: context_mem_used $(json_num "$out" context_mem_used) bytes"
	raw "info $mode" "$out"
done
info "farm/cost.h now: FARM_CTX_OVERHEAD 500 MiB, FARM_MPS_SERVER_MEM 66 MiB (device $gpu0)"

# --- 7. nothing left behind -------------------------------------------------------------------------
sleep 1
left=$(find "$GPUPACK_STATE_DIR/mps" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
check "$left" "every daemon the farm started was stopped" "$left left in $GPUPACK_STATE_DIR/mps"
servers_after=$(pgrep -c -f nvidia-cuda-mps-server || true)
check $((servers_after <= servers_before ? 0 : 1)) "no MPS server left running" "before $servers_before, after $servers_after"
gpu_finish
