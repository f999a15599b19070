#!/bin/sh
# shellcheck disable=SC2016,SC2086 # jq programs are literal
# run-usage.t: what each task used (--json's usage list, --results' usage.json,
# the summary's bound and heaviest tasks), against the NVML double's simulated
# device (fake-work's farm tasks) and a simulated topology: every field, each
# share of the driver's per-process data (per process, MPS's server only,
# none), and the unknown cases. The splits themselves are test_farm_usage's.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

cd "$T" || exit 1
FAKE_LIB="$GPUPACK_BUILD/tests/fakenvml/libnvidia-ml.so.1"
D="$T/dev"
WORK="$TOOLS/fake-work"
unset FAKENVML_MACHINE FAKENVML_FAIL FAKENVML_OLD FAKENVML_NPROCS FAKENVML_PROC_UTIL FAKENVML_ENERGY_STEP_MS
mkdir -p "$D/proc"
printf '%s\n' curve=1:1,8:8 sm=1:0.1,8:1 start_ms=100 start_cpu=1 gpu_cpu=0 ncpu=16 task_mib=2000 \
	dev_mib=80000 >"$D/config"
A() {
	FAKENVML_DEVICE="$D" FAKE_DEVICE="$D" GPUPACK_PROC_DIR="$D/proc" GPUPACK_NVML_LIB="$FAKE_LIB" \
		FAKENVML_ENERGY_STEP_MS=20 $GPUPACK run --share timeslice -j 3 --json "$@"
}
j() { printf '%s\n' "$out" | tail -n 1 | jq -r "$1"; }

# --- per-process samples: every field -------------------------------------------------------
run A --results res "$WORK" farm --work 1 ::: 1 2 3 4 5 6
is "$rc" 0 "a farm of 6 simulated GPU tasks succeeds"
is "$(j '.usage | length')" 6 "a usage record per task"
is "$(j '[.usage[].seq] | sort | map(tostring) | join(" ")')" "1 2 3 4 5 6" "each task once, by seq"
is "$(j '[.usage[] | .exit, .device] | unique | map(tostring) | join(" ")')" "0" "exit 0 on device 0"
is "$(j '[.usage[] | select(.wall_s > 0.5 and .cpu_s >= 0)] | length')" 6 "wall and CPU seconds"
is "$(j '[.usage[].gpu_mem_peak] | unique | map(tostring) | join(" ")')" "$((2000 * 1048576))" \
	"peak memory: each task's 2000 MiB, from the driver's per-process list"
is "$(j '[.usage[].basis.cpu_s.basis] | unique | join(" ")')" exact "CPU time is the kernel's: exact"
is "$(j '[.usage[].basis.gpu_mem_peak.basis] | unique | join(" ")')" estimate "peak memory: sampled, an estimate"
is "$(j '[.usage[].basis.gpu_s.how] | unique | join(" ")')" "device busy time split by per-process utilization" \
	"GPU time: by the driver's per-process samples"
is "$(j '[.usage[].joules | select(. > 0)] | length')" 6 "joules for every task (lives over 10 counter updates)"
is "$(j '(([.usage[].joules] | add) + .unattributed_j) / .energy_j * 1000 | round')" 1000 \
	"the tasks' joules and the unattributed add up to the device's counter over the farm"
# (busy time the driver reports in an interval after the last task ended is the device's, no task's)
is "$(j '(([.usage[].gpu_s] | add) / .gpu_busy_s) as $r | $r >= 0.9 and $r <= 1.001')" true \
	"GPU times add up to the busy time (within 10%, never more)"
is "$(j '.energy_step[0].period_s < 0.1 and .energy_step[0].step_mj > 0')" true \
	"the counter's resolution, measured at the start"
is "$(j '.bound | (.s > 0) and (.limit != null) and (.cores > 0) and (.gpus == 1) and (.makespan_ratio >= 1)')" true \
	"the bound, what sets it and the makespan over it"
is "$(j '.bound.s == ([.bound.cpu_s, .bound.gpu_s, .bound.longest_s] | max)')" true \
	"the bound is the largest of CPU/cores, GPU/GPUs and the longest task"
n=0
for s in 1 2 3 4 5 6; do
	[ "$(jq -r .seq "res/1/$s/usage.json" 2>/dev/null)" = "$s" ] && n=$((n + 1))
done
is "$n" 6 "--results DIR: a usage.json beside each task's stdout"
is "$(jq -r '.basis.joules.basis' res/1/1/usage.json)" estimate "with its basis"

# --- the summary ------------------------------------------------------------------------------
run A --summary "$WORK" farm --work 1 ::: 1 2 3
printf '%s\n' "$err" | grep -q '^gpupack: run: makespan .* s, bound .* s (.*): CPU .* over .* cores, GPU .* over 1 GPU'
ok $? "the summary prints the bound beside the makespan"
printf '%s\n' "$err" | grep -q '^gpupack: run: heaviest by GPU memory (MiB): seq [0-9]* 2000'
ok $? "and the heaviest tasks by memory"
printf '%s\n' "$err" | grep -q '^gpupack: run: heaviest by energy (J): seq '
ok $? "and by joules"

# --- under MPS the driver gives the server's samples, none of its clients' -------------------
run env FAKENVML_PROC_UTIL=mps FAKENVML_DEVICE="$D" FAKE_DEVICE="$D" GPUPACK_PROC_DIR="$D/proc" \
	GPUPACK_NVML_LIB="$FAKE_LIB" FAKENVML_ENERGY_STEP_MS=20 $GPUPACK run --share timeslice -j 3 --json \
	"$WORK" farm --work 1 ::: 1 2 3
is "$(j '[.usage[].basis.gpu_s.how] | unique | join(" ")')" "device busy time split evenly among the tasks running" \
	"no per-client samples: GPU time split evenly, and it says so"
is "$(j '[.usage[].basis.joules.how] | unique | join(" ")')" "device energy split evenly among the tasks running" \
	"and so are the joules"

# --- a driver with no per-process data: nothing invented --------------------------------------
run env FAKENVML_PROC_UTIL=none FAKENVML_NPROCS=0 GPUPACK_NVML_LIB="$FAKE_LIB" \
	$GPUPACK run --share timeslice -j 2 --json 'sleep 0.3' ::: 1 2
is "$rc" 0 "a farm on a driver without per-process data"
is "$(j '[.usage[].gpu_mem_peak] | unique | map(tostring) | join(" ")')" null "peak memory: null, not 0"
is "$(j '[.usage[].basis.gpu_mem_peak.basis] | unique | join(" ")')" unknown "its basis says unknown"
is "$(j '[.usage[].basis.gpu_mem_peak.how] | unique | join(" ")')" "the driver lists no per-process memory" \
	"and why"
is "$(j '[.usage[].basis.gpu_s.how] | unique | join(" ")')" "device busy time split evenly among the tasks running" \
	"GPU time: an even split, said so"

# --- a task too short for the counter's resolution: joules unknown, never 0 --------------------
run env FAKENVML_ENERGY_STEP_MS=200 GPUPACK_NVML_LIB="$FAKE_LIB" $GPUPACK run -j 1 --json true ::: 1
is "$(j '.usage[0].joules')" null "a task shorter than 10 updates of the counter: joules null"
is "$(j '.usage[0].basis.joules.basis')" unknown "its basis unknown"

# --- the simulated GPUs ------------------------------------------------------------------------
run $GPUPACK --sim "$TOPO/h200-141gb.topo" run --share timeslice -j 2 --json 'sleep 0.5' ::: 1 2
is "$rc" 0 "a farm on a simulated GPU"
is "$(j '.usage | length')" 2 "a usage record per task there too"
is "$(j '.simulated')" true "labelled simulated"
is "$(j '[.usage[].basis.gpu_mem_peak.basis] | unique | join(" ")')" unknown \
	"the simulated GPU lists no per-process memory: unknown"

# --- a counter that steps between two reads of it (a slow driver): the farm's joules are the usage
# sample's own reading, so the split still adds up to them (two reads, a step apart: 1.009-1.018)
run env FAKENVML_SLOW=nvmlDeviceGetTotalEnergyConsumption=60 FAKENVML_DEVICE="$D" FAKE_DEVICE="$D" \
	GPUPACK_PROC_DIR="$D/proc" GPUPACK_NVML_LIB="$FAKE_LIB" FAKENVML_ENERGY_STEP_MS=100 \
	$GPUPACK run --share timeslice -j 3 --json "$WORK" farm --work 1.5 ::: 1 2 3
is "$rc" 0 "a slow energy counter: the farm runs"
is "$(j '(([.usage[].joules] | add) + .unattributed_j) / .energy_j * 1000 | round')" 1000 \
	"the tasks' joules and the unattributed still add up to the farm's"

# --- farm.usage_off (fault-farm.sh's arm without the sampler): the driver is not read for it ---
rm -f "$T/calls.log"
GPUPACK_KNOBS=farm.usage_off=1 FAKENVML_CALLS="$T/calls.log" run A "$WORK" farm --work 1 ::: 1 2 3
is "$rc" 0 "the sampler off: the farm runs"
is "$(j '.usage | length')" 0 "no usage records"
is "$(awk '$2 ~ /ProcessUtilization|RunningProcesses|UtilizationRates/' "$T/calls.log" | wc -l | tr -d ' ')" \
	0 "no per-process or utilization reading"
is "$(grep -c MemoryInfo "$T/calls.log")" 1 "the device's memory read once, when the devices are found"
