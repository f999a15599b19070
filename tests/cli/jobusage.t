#!/bin/sh
# jobusage.t: the Slurm plugin's per-job GPU usage (src/slurm/jobusage.c):
# the prolog starts a sampler for the job, the epilog stops it and logs each
# GPU's energy and peak memory, each exact, estimate or unknown. Driven
# without Slurm by tests/tools/jobmps-driver (usage-start, usage-stop),
# against simulated GPUs and the NVML double (tests/fakenvml).
# shellcheck disable=SC2086
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"

DRV="$TOOLS/jobmps-driver"
X8="$TOPO/h100-80gb-x8.topo"
R=$(mktemp -d /tmp/gpu.XXXXXX)
chmod 755 "$R"
# a sampler left running by a failing check: ended by its recorded pid
_usage_cleanup() {
	for f in "$R"/*/*.sampler; do
		[ -f "$f" ] && kill "$(cut -d' ' -f1 "$f")" 2>/dev/null
	done
	rm -rf "$R"
}
CLEANUP=_usage_cleanup
ARGS="state=$R/%n sim=$X8"
# until_ CMD...: wait for an event (60 s at most: then the check fails), never for a length of time
until_() {
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -lt 1200 ] || { ok 1 "waited 60 s for: $*"; return 1; }
		sleep 0.05
	done
}
# counted JOB NODE: the sampler has read enough counter updates for GPU 0's joules (usage-now)
counted() { "$DRV" usage-now --job "$1" --node "$2" -- $ARGS 2>/dev/null | grep -Eq '^gpu 0 [0-9]+\.[0-9]+J'; }
# answers JOB NODE: the sampler runs and gives its figures so far
answers() { "$DRV" usage-now --job "$1" --node "$2" -- $ARGS >/dev/null 2>&1; }
# gone PID: the process is no more (reaped, or a zombie)
gone() { st=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null); [ -z "$st" ] || [ "$st" = Z ]; }
U0=$("$GPUPACK" --sim "$X8" devices --json | jq -r '.gpus[0].uuid')
U1=$("$GPUPACK" --sim "$X8" devices --json | jq -r '.gpus[1].uuid')

# ---- simulated GPUs: energy known over a long enough job; no per-process memory --------
run env GPUPACK_SIM_ENERGY_STEP_MS=5 "$DRV" usage-start --job 9 --node n1 --gpus 0,1 -- $ARGS
is "$rc:$out" "0:ok" "usage-start: the sampler started for GPUs 0,1"
ok "$([ -s "$R/n1/9.sampler" ] && kill -0 "$(cut -d' ' -f1 "$R/n1/9.sampler")" && echo 0 || echo 1)" \
	"the sampler runs, its pid recorded"
T9=$(date +%s)
sleep 1    # the job lasts a second at least (the joules' lower bound below); then enough readings
until_ counted 9 n1
# a step's end: the figures so far, brief, and the sampler runs on
run "$DRV" usage-now --job 9 --node n1 -- $ARGS
is "$rc" 0 "usage-now: done"
like "$out" "^gpu 0 [0-9]+\\.[0-9]+J estimate - unknown; gpu 1 [0-9]+\\.[0-9]+J estimate - unknown\$" \
	"usage-now: the figures so far, one brief line (what AdminComment gets)"
ok "$(kill -0 "$(cut -d' ' -f1 "$R/n1/9.sampler")" && echo 0 || echo 1)" "the sampler runs on after usage-now"
run "$DRV" usage-stop --job 9 --node n1 -- $ARGS
is "$rc" 0 "usage-stop: done"
like "$out" "^gpu 0 \\($U0\\): energy [0-9]+\\.[0-9]+ J estimate \\(the device's energy counter over its life; whether others used the device is not known\\)" \
	"GPU 0: its energy over the job, an estimate (the simulation lists no processes)"
like "$out" "; gpu 1 \\($U1\\): energy [0-9]+\\.[0-9]+ J estimate" "GPU 1 too, on the same line"
like "$out" "peak memory - unknown \\(the driver gives no per-process memory here\\)" \
	"no per-process or device memory: peak memory unknown, no figure"
J0=$(echo "$out" | sed -n 's/^gpu 0 ([^)]*): energy \([0-9.]*\) J.*/\1/p')
# the simulated GPU draws 70-700 W; the job lasted 1 s and at most the seconds since its start, and one
S9=$(($(date +%s) - T9 + 1))
ok "$(echo "$J0" | awk -v s="$S9" '{ exit !($1 >= 70 * 0.9 && $1 <= 700 * s) }' && echo 0 || echo 1)" \
	"GPU 0's joules are of a 70-700 W GPU over a second or more ($J0 J, at most $S9 s)"
is "$(ls "$R/n1")" "" "the sampler's files are removed"
run "$DRV" usage-stop --job 9 --node n1 -- $ARGS
is "$rc:$out" "0:none" "a second usage-stop: no sampler, nothing logged"
run "$DRV" usage-now --job 9 --node n1 -- $ARGS
is "$rc:$out" "0:none" "usage-now after the end: no sampler, nothing"

# ---- a job shorter than 10 updates of the counter: energy unknown, never 0 ---------------
run env GPUPACK_SIM_ENERGY_STEP_MS=1000 "$DRV" usage-start --job 10 --node n1 --gpus 0 -- $ARGS
run "$DRV" usage-stop --job 10 --node n1 -- $ARGS
like "$out" "^gpu 0 \\($U0\\): energy - unknown \\(" "a short job: energy '-', unknown, with why"
unlike "$out" "energy 0" "never 0 J"

# ---- no GPU, no sampler ------------------------------------------------------------------
run "$DRV" usage-start --job 11 --node n1 -- $ARGS
is "$rc:$out" "0:none" "a job without GPUs here: no sampler"
run "$DRV" usage-start --job 12 --node n1 --gpus 9 -- $ARGS
is "$rc" 3 "a GPU the machine lacks: an error"
like "$err" "GPU usage of job 12: GPU 9 of the job" "naming the job and the GPU"
is "$(ls "$R/n1")" "" "and nothing is left running or written"
# the sampler gone without writing its figures (killed): the epilog says so
run env GPUPACK_SIM_ENERGY_STEP_MS=5 "$DRV" usage-start --job 13 --node n1 --gpus 0 -- $ARGS
P13=$(cut -d' ' -f1 "$R/n1/13.sampler")
kill -9 "$P13"
until_ gone "$P13"
run "$DRV" usage-now --job 13 --node n1 -- $ARGS
is "$rc" 3 "usage-now with the sampler gone: an error"
like "$err" "GPU usage of job 13: its sampler is gone" "saying so"
run "$DRV" usage-stop --job 13 --node n1 -- $ARGS
is "$rc" 3 "a sampler killed before the epilog: an error"
like "$err" "GPU usage of job 13: no figures .*the sampler ended without writing them" "saying what happened"

# ---- a requeued job (no epilog ran here): its earlier run's sampler is ended ----------------
run "$DRV" usage-start --job 30 --node n1 --gpus 0 -- $ARGS
P30=$(cut -d' ' -f1 "$R/n1/30.sampler")
run "$DRV" usage-start --job 30 --node n1 --gpus 0 -- $ARGS
is "$rc:$out" "0:ok" "job 30 again: its sampler starts"
Q30=$(cut -d' ' -f1 "$R/n1/30.sampler")
until_ gone "$P30"
ok "$([ "$Q30" != "$P30" ] && gone "$P30" && kill -0 "$Q30" && echo 0 || echo 1)" \
	"the first run's sampler is gone, the second run has its own"
run "$DRV" usage-stop --job 30 --node n1 -- $ARGS
is "$rc" 0 "and its epilog reads the second run's figures"

# ---- the NVML double: per-process memory, the job alone or not ------------------------------
FAKE="$GPUPACK_BUILD/tests/fakenvml/libnvidia-ml.so.1"
ARGS="state=$R/%n"
# FAKENVML_NPROCS=1: the only process on the GPU is the caller, here the sampler, which has
# the job's SLURM_JOB_ID: the job is alone on the GPU, holding 512 MiB
run env GPUPACK_NVML_LIB="$FAKE" FAKENVML_NPROCS=1 SLURM_JOB_ID=20 "$DRV" usage-start --job 20 --node n2 --gpus 0 -- $ARGS
is "$rc:$out" "0:ok" "NVML double: the sampler started"
until_ counted 20 n2
run "$DRV" usage-stop --job 20 --node n2 -- $ARGS
like "$out" "^gpu 0 \\(GPU-[^)]*\\): energy [0-9]+\\.[0-9]+ J exact, " "the job alone on the GPU: energy exact"
like "$out" "peak memory 512 MiB estimate \\(the most its processes held at once in the driver's per-process samples\\)" \
	"peak memory: its processes' 512 MiB, an estimate (a peak between samples is missed)"
# another process on the GPU (a second, not the job's): energy an estimate
run env GPUPACK_NVML_LIB="$FAKE" FAKENVML_NPROCS=3 SLURM_JOB_ID=21 "$DRV" usage-start --job 21 --node n2 --gpus 0 -- $ARGS
until_ counted 21 n2
run "$DRV" usage-stop --job 21 --node n2 -- $ARGS
like "$out" "energy [0-9]+\\.[0-9]+ J estimate \\(the device's energy counter over its life, other processes' share included\\)" \
	"others on the GPU: energy an estimate, saying why"
# the job's processes never on the GPU: memory unknown
run env GPUPACK_NVML_LIB="$FAKE" FAKENVML_NPROCS=1 SLURM_JOB_ID=99 "$DRV" usage-start --job 22 --node n2 --gpus 0 -- $ARGS
until_ answers 22 n2
run "$DRV" usage-stop --job 22 --node n2 -- $ARGS
like "$out" "peak memory - unknown \\(its processes never appeared in the driver's process list" \
	"the job's processes never on the GPU: peak memory unknown"
# a GPU without an energy counter
run env GPUPACK_NVML_LIB="$FAKE" FAKENVML_FAIL=nvmlDeviceGetTotalEnergyConsumption=3 SLURM_JOB_ID=23 \
	"$DRV" usage-start --job 23 --node n2 --gpus 0 -- $ARGS
until_ answers 23 n2
run "$DRV" usage-stop --job 23 --node n2 -- $ARGS
like "$out" "energy - unknown \\(the GPU keeps no energy counter\\)" "no energy counter: energy unknown"
# no per-process list (the driver refuses it): the device's used memory, an estimate
run env GPUPACK_NVML_LIB="$FAKE" FAKENVML_FAIL=nvmlDeviceGetComputeRunningProcesses_v3=3,nvmlDeviceGetMPSComputeRunningProcesses_v3=3 \
	SLURM_JOB_ID=24 \
	"$DRV" usage-start --job 24 --node n2 --gpus 0 -- $ARGS
until_ counted 24 n2
run "$DRV" usage-stop --job 24 --node n2 -- $ARGS
like "$out" "peak memory [0-9.]+ [GM]iB estimate \\(the device's used memory at its most" \
	"no per-process list: the device's used memory, an estimate, saying so"
like "$out" "energy [0-9.]+ J estimate \\(the device's energy counter over its life; whether others" \
	"and energy cannot be exact: who else used the GPU is not known"
is "$(ls "$R/n2")" "" "nothing left"
