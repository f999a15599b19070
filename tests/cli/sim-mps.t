#!/bin/sh
# sim-mps.t: MPS tried without a GPU (issue 45): on a simulated machine
# (--sim), --share mps and the mps commands use gpupack's stand-in daemon
# (tests/tools/fake-mps-control, installed as libexec/gpupack/sim-mps-control)
# with no GPUPACK_MPS_CONTROL and no nvidia-cuda-mps-control on PATH; the
# tasks are its clients, held to the limits asked; every output says
# simulated; nothing is left running.
# shellcheck disable=SC2086
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
unset GPUPACK_MPS_CONTROL
export PATH=/usr/bin:/bin
G="$GPUPACK --sim h100-80gb"
CLIENT="$TOOLS/fake-mps-client"
# the stand-in's daemons of this test (their pipe directories lie in its state directory)
ours() {
	for p in $(ls /proc | grep '^[0-9]*$'); do
		tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -q "^CUDA_MPS_PIPE_DIRECTORY=$GPUPACK_STATE_DIR/" &&
			! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null && echo "$p"
	done
}

run $G run --share mps -j 4 --sm 25 --summary "$CLIENT" --ms 2{} ::: 1 2 3 4 5 6
is "$rc" 0 "--sim h100-80gb run --share mps: exit 0, without a GPU or nvidia-cuda-mps-control"
is "$(printf '%s\n' "$out" | grep -c '^mps=1 .*sm=25.0')" 6 "each task an MPS client of the stand-in, held to --sm 25"
like "$err" "share mps \(SIMULATED GPUs, gpupack's MPS stand-in\)" "the summary says simulated"
run $G run --share mps --json true ::: 1 2
is "$(printf '%s' "$out" | jq -c '[.simulated, .share, .devices[0].mps_daemon_started]')" '[true,"mps",true]' \
    "--json: simulated true, share mps, a daemon started"
is "$(ours)" "" "no daemon left running after the farms"
run $G run --json true ::: 1
is "$(printf '%s' "$out" | jq -c '[.simulated, .share]')" '[true,"timeslice"]' \
    "without --share: time-sliced, as without a GPU's MPS (and labelled simulated)"

# ---- the mps commands ------------------------------------------------------------------
run $G mps start --gpus 0 --sm 50
is "$rc" 0 "mps start on a simulated GPU: exit 0"
like "$out" "^started GPU-.*sm 50%.*\(SIMULATED: gpupack's MPS stand-in\)$" "says simulated"
run $G mps status
like "$out" "^SIMULATED machine: the daemons are gpupack's MPS stand-in" "status: says simulated"
is "$($G mps status --json | jq -r .simulated)" true "status --json: simulated true"
run sh -c "eval \"\$($G mps env --gpus 0)\" && $CLIENT --ms 10"
like "$out" "^mps=1 .*sm=50.0" "a client through mps env: held to the daemon's 50%"
run $G mps stop --gpus 0
like "$out" "^stopped GPU-.*\(SIMULATED: gpupack's MPS stand-in\)$" "mps stop: says simulated"
run $G mps exec --gpus 0 --sm 20 -- "$CLIENT" --ms 10
like "$out" "^mps=1 .*sm=20.0" "mps exec --sm 20 on a simulated GPU"
is "$(ours)" "" "nothing left running"

# ---- an explicit GPUPACK_MPS_CONTROL still wins ---------------------------------------------
run env GPUPACK_MPS_CONTROL=/nonexistent/ctl $G run --share mps true ::: 1
like "$err" "GPUPACK_MPS_CONTROL=/nonexistent/ctl is not an executable file" "GPUPACK_MPS_CONTROL set: used as it is"
