#!/usr/bin/env bash
# work.sh: gpupack-work on a real GPU. Builds it, runs every mode, and checks
# what each one says against what it must say (and against nvidia-smi).
# Read-only for the card: no setting is changed, no MPS daemon is started.
#
#   bash tests/gpu/work.sh            (from the repository root, or anywhere)
#   B=build-gpu  the build directory (default build-gpu)
#   OUT=dir      also write the report to $OUT/work.txt
#
# Prints PASS/FAIL lines, the JSON line of every run, a block of measurements
# and a final summary; exits 0 when every check passed, 1 otherwise.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build-gpu}
W=$B/gpupack-work
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	exec > >(tee "$OUT/work.txt") 2>&1
fi

npass=0
nfail=0
MEAS=""

pass() { npass=$((npass + 1)); echo "PASS: $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL: $*"; }
# check STATUS NAME: PASS when STATUS is 0
check() { if [ "$1" -eq 0 ]; then pass "$2"; else fail "$2"; fi; }
sec() { printf '\n=== %s\n' "$*"; }
measure() { MEAS="$MEAS$*"$'\n'; }

# runw ARGS...: run gpupack-work, keep stdout in $out, stderr in $err, status in $rc
runw() {
	echo "\$ gpupack-work $*"
	out=$("$W" "$@" 2>"$B/.work-err")
	rc=$?
	err=$(cat "$B/.work-err")
	echo "  rc=$rc"
	[ -n "$out" ] && echo "  $out"
	[ -n "$err" ] && echo "  stderr: $err"
	return 0
}

# jget KEY [LINE]: the value of KEY in a flat JSON line (default $out), quotes removed
jget() {
	printf '%s' "${2:-$out}" | sed -n 's/.*"'"$1"'":\("[^"]*"\|[^,}]*\).*/\1/p' | sed 's/^"\(.*\)"$/\1/'
}

# is_json NAME: $out is one line holding one JSON object (python3 parses it when present)
is_json() {
	local lines
	lines=$(printf '%s\n' "$out" | wc -l)
	if [ "$lines" -ne 1 ] || [ "${out:0:1}" != "{" ]; then
		fail "$1: one JSON line on stdout (got $lines lines)"
		return
	fi
	if command -v python3 >/dev/null 2>&1; then
		printf '%s' "$out" | python3 -c 'import json,sys; o=json.loads(sys.stdin.read()); assert isinstance(o, dict)' \
			>/dev/null 2>&1
		check $? "$1: stdout parses as JSON"
	fi
}

# awk_true EXPR VAR=VALUE...: exit 0 when the awk expression holds
awk_true() {
	local expr=$1
	shift
	local args=()
	for a in "$@"; do args+=(-v "$a"); done
	awk "${args[@]}" "BEGIN { exit !($expr) }"
}

# expect_ok NAME: exit 0, "ok":true, one JSON line
expect_ok() {
	is_json "$1"
	[ "$rc" -eq 0 ] && [ "$(jget ok)" = true ]
	check $? "$1: exit 0 and ok true"
}

sec setup
date -u
nvidia-smi --query-gpu=index,uuid,name,memory.total,compute_mode,mig.mode.current,driver_version --format=csv
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$NVCC" --version | tail -2
if ! make --no-print-directory B="$B" work; then
	fail "make B=$B work"
fi
if [ ! -x "$W" ]; then
	fail "gpupack-work built at $W"
	echo "SUMMARY: work.sh: $npass passed, $nfail failed"
	echo "RESULT: FAIL"
	exit 1
fi
pass "gpupack-work built at $W"

sec info
runw info
expect_ok "info"
UUID=$(jget uuid)
SMS=$(jget sms)
MEM_TOTAL=$(jget mem_total)
SMI_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$UUID" 2>/dev/null)
SMI_MEM=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i "$UUID" 2>/dev/null)
[ -n "$SMI_NAME" ]
check $? "info: uuid $UUID is a GPU nvidia-smi knows"
[ "$(jget device)" = "$SMI_NAME" ]
check $? "info: device name '$(jget device)' = nvidia-smi's '$SMI_NAME'"
awk_true 'm > 0 && s > 0 && t / 1048576 > s * 0.97 && t / 1048576 <= s * 1.001' "t=$MEM_TOTAL" "s=${SMI_MEM:-0}" "m=${SMS:-0}"
check $? "info: mem_total $MEM_TOTAL B within 3% below nvidia-smi's ${SMI_MEM:-?} MiB, sms $SMS > 0"
[[ "$(jget cc)" =~ ^[0-9]+\.[0-9]+$ ]]
check $? "info: cc '$(jget cc)' looks like major.minor"
awk_true 'd >= r && r >= 13000' "d=$(jget driver_version)" "r=$(jget runtime_version)"
check $? "info: driver_version $(jget driver_version) >= runtime_version $(jget runtime_version) >= 13000"
[ "$(jget mig)" = false ] || [[ "$UUID" == MIG-* ]]
check $? "info: mig flag agrees with the uuid prefix"
measure "info: device=$(jget device) uuid=$UUID sms=$SMS cc=$(jget cc) mem_total=$MEM_TOTAL mem_free=$(jget mem_free) context_mem_used=$(jget context_mem_used) clock_khz=$(jget clock_khz) runtime=$(jget runtime_version) driver=$(jget driver_version)"

out=$(CUDA_VISIBLE_DEVICES=$UUID "$W" info 2>/dev/null)
rc=$?
echo "\$ CUDA_VISIBLE_DEVICES=$UUID gpupack-work info"
echo "  $out"
[ "$rc" -eq 0 ] && [ "$(jget uuid)" = "$UUID" ]
check $? "info under CUDA_VISIBLE_DEVICES=<uuid> reports that uuid"

runw --device 99 info
[ "$rc" -eq 2 ] && [[ "$(jget error)" == *"out of range"* ]]
check $? "info --device 99: exit 2, out of range"

sec smcount
runw smcount
expect_ok "smcount"
[ "$(jget sms_attr)" = "$SMS" ] && [ "$(jget sms_seen)" = "$SMS" ]
check $? "smcount: sms_attr $(jget sms_attr) = sms_seen $(jget sms_seen) = info's $SMS (no MPS cap)"
measure "smcount: sms_attr=$(jget sms_attr) sms_seen=$(jget sms_seen) smid_max=$(jget smid_max) seconds=$(jget seconds)"

sec spin
runw spin --ms 500
expect_ok "spin --ms 500"
awk_true 's >= 0.5 && s < 1.5' "s=$(jget seconds)"
check $? "spin --ms 500: seconds $(jget seconds) in [0.5, 1.5)"
awk_true 'm > 100' "m=$(jget sm_mhz)"
check $? "spin: sm_mhz $(jget sm_mhz) measured"
measure "spin 500 ms: seconds=$(jget seconds) sm_mhz=$(jget sm_mhz) blocks=$(jget blocks)"
runw spin --ms 200 --cpu-ms 300
expect_ok "spin --ms 200 --cpu-ms 300"
awk_true 's >= 0.5' "s=$(jget seconds)"
check $? "spin with --cpu-ms: seconds $(jget seconds) >= 0.5 (GPU then CPU)"

sec alloc
runw alloc --mib 1024 --hold-ms 200
expect_ok "alloc --mib 1024"
[ "$(jget alloc_ok)" = true ] && awk_true 's >= 0.2' "s=$(jget seconds)"
check $? "alloc: alloc_ok true, held >= 0.2 s"
BIG=$(( ${MEM_TOTAL:-0} * 2 / 1048576 + 1024 ))
runw alloc --mib "$BIG"
is_json "alloc too big"
[ "$rc" -eq 1 ] && [ "$(jget ok)" = false ] && [ "$(jget alloc_ok)" = false ] &&
	[[ "$(jget error)" == cudaErrorMemoryAllocation* ]]
check $? "alloc --mib $BIG (twice the device): exit 1, alloc_ok false, cudaErrorMemoryAllocation"

sec fault
runw fault
is_json "fault"
[ "$rc" -eq 1 ] && [ "$(jget ok)" = false ] && [ "$(jget fault_seen)" = true ] &&
	[ "$(jget cuda_error)" = 700 ] && [[ "$(jget error)" == cudaErrorIllegalAddress:* ]]
check $? "fault: exit 1, fault_seen, cuda_error 700, error cudaErrorIllegalAddress"
measure "fault: error=$(jget error)"
runw info
[ "$rc" -eq 0 ]
check $? "the next process after a fault runs normally"

sec matmul
runw matmul --n 4096 --iters 20
expect_ok "matmul --n 4096 --iters 20"
[ "$(jget checksum_ok)" = true ] && awk_true 'e < 1e-6' "e=$(jget max_rel_err)"
check $? "matmul 4096: checksum_ok, max_rel_err $(jget max_rel_err) < 1e-6 (FP32, not TF32)"
[ "$(jget flops)" = $((2 * 4096 * 4096 * 4096 * 20)) ]
check $? "matmul 4096: flops = 2 N^3 K"
measure "matmul n=4096 iters=20: tflops=$(jget tflops) seconds=$(jget seconds) max_rel_err=$(jget max_rel_err)"
runw matmul --n 8192 --iters 10
expect_ok "matmul --n 8192 --iters 10"
[ "$(jget checksum_ok)" = true ]
check $? "matmul 8192: checksum_ok"
measure "matmul n=8192 iters=10: tflops=$(jget tflops) seconds=$(jget seconds) max_rel_err=$(jget max_rel_err)"
for args in "--n 1 --iters 1 --warmup 0" "--n 1000 --iters 3" "--n 333 --iters 2 --batched 7" \
	"--n 2048 --iters 10 --streams 4" "--n 512 --iters 10 --batched 64" "--n 128 --iters 4 --batched 200" \
	"--n 256 --iters 5 --streams 64"; do
	# shellcheck disable=SC2086 # the words of $args are the options
	runw matmul $args
	expect_ok "matmul $args"
	[ "$(jget checksum_ok)" = true ]
	check $? "matmul $args: checksum_ok (max_rel_err $(jget max_rel_err))"
	measure "matmul $args: tflops=$(jget tflops) seconds=$(jget seconds)"
done
runw matmul --n 2048 --iters 10 --streams 4
[ "$(jget flops)" = $((2 * 2048 * 2048 * 2048 * 10 * 4)) ]
check $? "matmul --streams 4: flops counts every stream"

echo "\$ GPUPACK_WORK_SPOIL=1 gpupack-work matmul --n 256 --iters 1"
out=$(GPUPACK_WORK_SPOIL=1 "$W" matmul --n 256 --iters 1 2>/dev/null)
rc=$?
echo "  rc=$rc"
echo "  $out"
[ "$rc" -eq 1 ] && [ "$(jget checksum_ok)" = false ] && [[ "$(jget error)" == "checksum mismatch"* ]]
check $? "matmul: a spoiled entry fails the checksum, exit 1"

runw matmul --n 65536 --iters 1 --streams 64
is_json "matmul too large"
[ "$rc" -eq 2 ] && [ "$(jget ok)" = false ] && [[ "$(jget error)" == "too large"* ]]
check $? "matmul beyond device memory: refused with exit 2"

runw matmul --n 1024 --iters 10 --cpu-ms 20
expect_ok "matmul --cpu-ms 20"
awk_true 's >= 0.2' "s=$(jget seconds)"
check $? "matmul --cpu-ms 20 x 10 iterations: seconds $(jget seconds) >= 0.2"
measure "matmul n=1024 iters=10 cpu_ms=20: seconds=$(jget seconds)"

sec start-at
runw matmul --n 4096 --iters 30
SOLO=$(jget seconds)
T=$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + 5 }')
pids=()
for k in 1 2 3; do
	"$W" matmul --n 4096 --iters 30 --start-at "$T" >"$B/.work-c$k" 2>/dev/null &
	pids+=($!)
done
# each pid for its status (a bare wait would also wait for the tee behind $OUT)
rcs=()
for k in 0 1 2; do
	wait "${pids[k]}"
	rcs+=($?)
done
MIN_END=""
MAX_START=""
for k in 1 2 3; do
	out=$(cat "$B/.work-c$k")
	rc=${rcs[k - 1]}
	echo "  concurrent $k: $out"
	expect_ok "concurrent matmul $k"
	[ -z "$(jget late_ms)" ] && awk_true 's >= t && s - t < 0.05' "s=$(jget t_start)" "t=$T"
	check $? "concurrent $k: started on time (t_start $(jget t_start), --start-at $T)"
	MAX_START=$(awk -v a="${MAX_START:-0}" -v b="$(jget t_start)" 'BEGIN { print (b > a ? b : a) }')
	MIN_END=$(awk -v a="${MIN_END:-1e18}" -v b="$(jget t_end)" 'BEGIN { print (b < a ? b : a) }')
	measure "concurrent matmul $k/3 n=4096 iters=30: seconds=$(jget seconds) (solo $SOLO)"
done
awk_true 's < e' "s=$MAX_START" "e=$MIN_END"
check $? "the three timed parts overlap (last start $MAX_START < first end $MIN_END)"
PAST=$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t - 10 }')
runw info --start-at "$PAST"
expect_ok "info --start-at in the past"
awk_true 'l >= 10000' "l=$(jget late_ms)"
check $? "a past --start-at starts at once and says late_ms $(jget late_ms) >= 10000"

sec serve
# one process, many commands: a ready line, then one line per command, the same pid
SERVE_IN=$(printf 'matmul --n 1024 --iters 20\nmatmul --n 512 --iters 10 --batched 4\n\ninfo\nmatmul --n 256 --iters 5 --streams 3 --start-at %s\n' \
	"$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + 2 }')")
echo "\$ gpupack-work serve <<< 4 commands"
out=$(printf '%s\n' "$SERVE_IN" | "$W" serve 2>"$B/.work-err")
rc=$?
echo "  rc=$rc"
printf '%s\n' "$out" | sed 's/^/  /'
[ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 5 ]
check $? "serve: exit 0 at end of input, 5 lines (ready + 4 commands; a blank line is skipped)"
READY=$(printf '%s\n' "$out" | sed -n 1p)
[ "$(jget mode "$READY")" = serve ] && [ "$(jget ok "$READY")" = true ] && [ -n "$(jget t_ready "$READY")" ]
check $? "serve: the ready line says mode serve, ok, t_ready"
[ "$(printf '%s\n' "$out" | sed -n 's/.*"pid":\([0-9]*\).*/\1/p' | sort -u | wc -l)" -eq 1 ]
check $? "serve: every line from one process"
[ "$(printf '%s\n' "$out" | grep -c '"checksum_ok":true')" -eq 3 ] && [ "$(printf '%s\n' "$out" | grep -c '"ok":true')" -eq 5 ]
check $? "serve: 3 matmuls with correct checksums, info ok"
LAST=$(printf '%s\n' "$out" | sed -n 5p)
[ -z "$(jget late_ms "$LAST")" ] && awk_true 's >= t && s - t < 0.05' "s=$(jget t_start "$LAST")" "t=$(jget start_at "$LAST")"
check $? "serve: --start-at honoured in a served command"
out=$(printf 'alloc --mib %s\nmatmul --n 64 --iters 1\n' "$((SMI_MEM * 2))" | "$W" serve 2>/dev/null)
rc=$?
[ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ]
check $? "serve: a failed command prints its line and ends the server with its code (rc $rc)"
printf 'matmul --n 64\n' | "$W" serve >/dev/null 2>&1
check "$([ $? -eq 2 ] && echo 0 || echo 1)" "serve: a bad command is a usage error (exit 2)"
# why bench keeps workers: 8 one-shot runs against 8 commands to one server
t0=$(date +%s.%N)
for k in 1 2 3 4 5 6 7 8; do "$W" matmul --n 512 --iters 10 >/dev/null 2>&1; done
t1=$(date +%s.%N)
for k in 1 2 3 4 5 6 7 8; do echo "matmul --n 512 --iters 10"; done | "$W" serve >/dev/null 2>&1
t2=$(date +%s.%N)
ONESHOT=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 8 }')
SERVED=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.3f", (b - a) / 8 }')
echo "RESULT serve: matmul n=512 x10: ${ONESHOT} s a one-shot process, ${SERVED} s a served command (incl. the server's start)"
measure "serve: one-shot ${ONESHOT} s/run, served ${SERVED} s/command (8 each, n=512 iters=10)"
awk_true 'b < a' "a=$ONESHOT" "b=$SERVED"
check $? "serve: a served command costs less than a process"

sec usage
runw matmul --n 64
[ "$rc" -eq 2 ] && [ -z "$out" ]
check $? "usage error: exit 2, no JSON"

rm -f "$B/.work-err" "$B"/.work-c[123]
sec measurements
printf '%s' "$MEAS"
echo
echo "SUMMARY: work.sh: $npass passed, $nfail failed"
if [ "$nfail" -eq 0 ]; then
	echo "RESULT: PASS"
	exit 0
fi
echo "RESULT: FAIL"
exit 1
