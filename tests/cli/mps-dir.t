#!/bin/sh
# mps-dir.t: $GPUPACK_MPS_DIR, where the Slurm plugin keeps a job's daemons.
# gpupack mps and gpupack run inside such a job must find those daemons there,
# use them, and leave them running (they are the job's, stopped at its end).
# shellcheck disable=SC2086
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
. "$GPUPACK_SRC/tests/cli/mps-lib.sh"

J="$T/job"
mkdir -m 700 "$J"
export GPUPACK_MPS_DIR="$J"
_dir_cleanup() {
	for f in "$J"/*/daemon; do
		[ -f "$f" ] && kill -9 "$(sed -n 's/^pid=//p' "$f")" 2>/dev/null
	done
	_mps_cleanup
}
CLEANUP=_dir_cleanup

run $G mps start --gpu 0 --sm 40
is "$rc" 0 "start with GPUPACK_MPS_DIR set succeeds"
[ -d "$J/$U0/pipe" ] && [ ! -e "$STATE/mps" ]
ok $? "the daemon lives in GPUPACK_MPS_DIR, nothing under the state directory"
P=$(sed -n 's/^pid=//p' "$J/$U0/daemon")
alive "$P"
ok $? "its daemon runs"

run $G mps status --json
is "$(printf '%s' "$out" | jq -r '.daemons[0].pipe_dir')" "$J/$U0/pipe" "status finds it there"

# a farm inside the job uses the job's daemon and leaves it running
run $G run --share mps --gpus 0 "$CLIENT" --ms 10 --pidfile "$T/p{}" ::: 1 2
is "$rc" 0 "run inside the job succeeds"
like "$out" "sm=40.0 .*dev=$U0" "its tasks are clients of the job's daemon (its limits)"
alive "$P"
ok $? "the job's daemon is still running after the run"

# GPU 1 has no daemon in the job: the run starts its own there, and stops it
run $G run --share mps --gpus 1 "$CLIENT" --ms 10 --pidfile "$T/q{}" ::: 1
is "$rc" 0 "run on a device without a job daemon succeeds"
like "$out" "sm=100.0 .*dev=$U1" "its task ran under a daemon of the run"
[ ! -e "$J/$U1" ]
ok $? "the run's own daemon is stopped and its directory removed"

chmod 755 "$J"
run $G mps start --gpu 1
is "$rc" 3 "a GPUPACK_MPS_DIR open to others is refused"
one_line "$err" "open GPUPACK_MPS_DIR: one line"
like "$err" "GPUPACK_MPS_DIR.*mode 0755" "open GPUPACK_MPS_DIR: the error says why"
chmod 700 "$J"

run $G mps stop --gpu 0
is "$rc" 0 "stop succeeds"
gone "$P"
ok $? "the daemon is gone"
[ ! -e "$J/$U0" ] && [ -d "$J" ]
ok $? "its directory is removed, GPUPACK_MPS_DIR itself stays"
