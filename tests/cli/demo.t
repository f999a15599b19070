#!/bin/sh
# demo.t: bench/demo, README's first command (issue 32). Without a GPU: a
# SIMULATION, said on its first line, whose printed commands paste back as
# they ran (their quotes kept). With a driver (the fake NVML) and a worker
# (fake-work): the farm run three ways, each time, every task's result, and
# gpupack's gain; the real figures come from the lent GPU (bench/results/).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

DEMO="$GPUPACK_SRC/bench/demo"
export B="$GPUPACK_BUILD"

# ---- no GPU ----------------------------------------------------------------
run env GPUPACK_NVML_LIB="$T/no-such-lib.so" "$DEMO"
is "$rc" 0 "no GPU: exit 0"
like "$(printf '%s\n' "$out" | head -n 1)" "^gpupack demo: no NVIDIA GPU here, so what follows is a SIMULATION\.$" \
    "no GPU: the first line says so, and that what follows is simulated"
like "$(printf '%s\n' "$out" | sed -n 2p)" "^  why: NVIDIA driver not found" "no GPU: the second line says why"
is "$(printf '%s\n' "$out" | grep -c '^SIMULATED exercise')" 1 "no GPU: the benchmark's tables say simulated"
like "$out" "3\.5x over one at a time" "no GPU: says what the GPU demo measured on an H100, and why"
# every command shown pastes back as it ran: the farm's line has quotes and a ';'
line=$(printf '%s\n' "$out" | sed -n 's/^\$ gpupack //p' | grep -- ' run ')
like "$line" "'echo \"task \{\} on GPU \\\$CUDA_VISIBLE_DEVICES\"; sleep 0.2'" "the farm's command keeps its quotes"
printf '%s\n' "$out" | grep '^task [0-9] on GPU ' >"$T/shown"
eval "set -- $line"
"$GPUPACK" "$@" >"$T/pasted" 2>/dev/null
[ -s "$T/shown" ] && cmp -s "$T/shown" "$T/pasted"
ok $? "pasting the shown farm command prints what the demo printed"
run "$DEMO" --sim
is "$rc" 0 "--sim: exit 0"
like "$out" "^={5,}" "--sim: the simulation's banner"
run "$DEMO" --bogus
is "$rc" 2 "an unknown argument: exit 2"

# ---- a driver and a worker (fake NVML, fake-work) -------------------------------
run env GPUPACK_NVML_LIB="$GPUPACK_BUILD/tests/fakenvml/libnvidia-ml.so.1" \
    GPUPACK_WORK="$TOOLS/fake-work" GPUPACK_MPS_CONTROL="$TOOLS/fake-mps-control" \
    DEMO_TASKS=6 "$DEMO" --no-bench --out "$T/demo"
is "$rc" 0 "a GPU: exit 0"
ok "$(printf '%s' "$out" | grep -q SIMULAT; [ $? -eq 1 ]; echo $?)" "a GPU: nothing says simulated"
for way in "one at a time" "all at once, time-sliced" "gpupack run \(defaults: mps, -j auto\)"; do
	like "$out" "  ${way}[^0-9]* +[0-9]+\.[0-9]{2} +6/6 +([0-9.]+x|-)" "a GPU: '$way': its time and 6 of 6 tasks right"
done
like "$out" "^RESULT demo: 6 tasks; one at a time [0-9.]+ s, all at once [0-9.]+ s, gpupack run [0-9.]+ s \(share mps\); gain" \
    "a GPU: the RESULT line"
is "$(wc -l <"$T/demo/joblog" | tr -d ' ')" 7 "a GPU: gpupack run's joblog has the 6 tasks (--out keeps it)"
is "$(grep -c '"ok":true' "$T/demo/one.out")" 6 "a GPU: the one-at-a-time tasks ran"
# a task that fails is counted as such, not as a gain
run env GPUPACK_NVML_LIB="$GPUPACK_BUILD/tests/fakenvml/libnvidia-ml.so.1" \
    GPUPACK_WORK="$TOOLS/fake-work" FAKE_WORK_FAIL_N=64 DEMO_N=64 DEMO_TASKS=3 "$DEMO" --no-bench
like "$out" "one at a time[^0-9]* +[0-9.]+ +0/3 " "failed tasks: 0 of 3 right, said"
like "$err" "gpupack run exited 3" "failed tasks: gpupack run's exit said"
