#!/usr/bin/env bash
# mps-faults.sh: MPS itself failing under a real farm (issue #13), on the lent
# GPU. Two runs of `gpupack run --share mps --retries 1` (one try: no task may
# be charged), each with real CUDA clients (gpupack-work spin); mid-run the
# first has its real MPS server killed, the second its real control daemon.
# Report: $OUT/mps-faults.md.
#
#   bash tests/gpu/all.sh mps-faults      (GPU 0; GPUPACK_MPS_GPU=N for another)
#
# Checks, for each run:
#  - exit 0 and every task journaled exactly once, done (none lost, none charged);
#  - gpupack said it noticed the fault and restarted the daemon (one line), and
#    --json counts the reruns and mps_restarts 1;
#  - every task's final attempt ran as an MPS client: its pid was seen in the
#    daemon's own client lists (`gpupack mps status --json`, sampled every
#    0.3 s while the farm ran) or in the daemon's control.log;
#  - at the end no MPS process of ours and no state directory is left.
# What is killed is found by pid (the server from the daemon's list, the daemon
# from its record) and checked against its name before the kill; nothing is
# killed by name. No card setting is changed.
set -u
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/gpu/lib.sh
. tests/gpu/lib.sh

GP=${GPUPACK:-$PWD/build/gpupack}
GW=${GPUPACK_WORK:-$PWD/build/gpupack-work}
DEV=${GPUPACK_MPS_GPU:-0}
# short: the daemon's unix sockets live below it (108-byte limit)
GPUPACK_STATE_DIR=$(mktemp -d /tmp/gpmf.XXXXXX)
export GPUPACK_STATE_DIR
W="$GPUPACK_STATE_DIR.work"
mkdir -p "$W"
# a hung daemon is noticed in 5 s rather than 10
export GPUPACK_MPS_TIMEOUT=5

faults_cleanup() {
	local f p
	"$GP" mps stop --all --force --timeout 5 >/dev/null 2>&1
	for f in "$GPUPACK_STATE_DIR"/mps/*/daemon; do
		[ -f "$f" ] || continue
		p=$(sed -n 's/^pid=//p' "$f")
		[ -n "$p" ] && kill -9 "$p" 2>/dev/null
	done
	gpu_cleanup
	rm -rf "$GPUPACK_STATE_DIR" "$W"
}

gpu_init mps-faults
trap 'faults_cleanup' EXIT
info "GPU $DEV; state $GPUPACK_STATE_DIR; GPUPACK_MPS_TIMEOUT=$GPUPACK_MPS_TIMEOUT"
# the task's work: 4 s on every SM (MPS_FAULTS_TASK: another command, to try this
# script without a GPU against tests/tools/fake-mps-control and its fake-mps-client)
TASK=${MPS_FAULTS_TASK:-"$GW spin --ms 4000"}
if [ -z "${MPS_FAULTS_TASK:-}" ] && [ ! -x "$GW" ]; then
	fail "gpupack-work built" "$GW missing"
	gpu_finish
fi

# the task: the work, and its client's pid and result in attempts
cat >"$W/task.sh" <<'SH'
#!/bin/sh
# the client's own pid goes in attempts: it is what the daemon lists
$TASK >/dev/null 2>&1 &
c=$!
echo "$GPUPACK_SEQ $c start $(date +%s.%N)" >>"$ATTEMPTS"
wait "$c"
rc=$?
echo "$GPUPACK_SEQ $c end $rc $(date +%s.%N)" >>"$ATTEMPTS"
exit $rc
SH
chmod +x "$W/task.sh"
export GW TASK

# sample NAME: the client pids the daemon lists, every 0.3 s, into $W/NAME.clients
sampler() {
	while :; do
		"$GP" mps status --json 2>/dev/null |
			python3 -c 'import json,sys
try:
    d = json.load(sys.stdin)
    for dm in d.get("daemons", []):
        for s in dm.get("servers") or []:
            for c in s.get("clients") or []:
                print(c["pid"])
except Exception:
    pass' >>"$W/$1.clients"
		cp "$GPUPACK_STATE_DIR"/mps/*/log/control.log "$W/$1.control.$(date +%s%N)" 2>/dev/null
		sleep 0.3
	done
}

# one_run NAME WHAT: a farm of 12 tasks, 4 at a time; WHAT (server|daemon) killed after 6 s
one_run() {
	local name=$1 what=$2 victim="" comm="" i=0 rc
	export ATTEMPTS="$W/$name.attempts"
	: >"$ATTEMPTS"
	: >"$W/$name.clients"
	sampler "$name" &
	local sp=$!
	GPU_BG_PIDS="$GPU_BG_PIDS $sp"
	"$GP" run --gpus "$DEV" --share mps -j 4 --retries 1 --json --joblog "$W/$name.jl" \
		"$W/task.sh" ::: $(seq 12) >"$W/$name.out" 2>"$W/$name.err" &
	local gp=$!
	GPU_BG_PIDS="$GPU_BG_PIDS $gp"
	sleep 6
	if [ "$what" = daemon ]; then
		victim=$(sed -n 's/^pid=//p' "$GPUPACK_STATE_DIR"/mps/*/daemon 2>/dev/null | head -n 1)
	else
		victim=$("$GP" mps status --json 2>/dev/null | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(d["daemons"][0]["servers"][0]["pid"])' 2>/dev/null)
	fi
	# what it runs (argv[0]), so that only an MPS process of this run is ever killed
	[ -n "$victim" ] && comm=$(tr '\0' '\n' <"/proc/$victim/cmdline" 2>/dev/null | head -n 1)
	comm=${comm##*/}
	case "$what:$comm" in
	daemon:nvidia-cuda-mps-control|server:nvidia-cuda-mps-server|daemon:fake-mps-control|server:fake-mps-server)
		kill -9 "$victim"
		info "$name: killed the MPS $what, pid $victim ($comm), 6 s into the run" ;;
	*)
		fail "$name: found the MPS $what to kill" "pid '${victim}' comm '${comm}'" ;;
	esac
	while kill -0 "$gp" 2>/dev/null && [ $i -lt 240 ]; do sleep 0.5; i=$((i + 1)); done
	wait "$gp"
	rc=$?
	kill "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	raw "$name: stderr" "$(cat "$W/$name.err")"
	raw "$name: --json" "$(tail -n 1 "$W/$name.out")"
	raw "$name: attempts" "$(cat "$ATTEMPTS")"
	check "$rc" "$name: the run completes (exit $rc) with --retries 1 (no retry)"
	check "$([ "$(awk -F'\t' 'NR > 1 { print $1 }' "$W/$name.jl" | sort -n | tr '\n' ' ')" = \
		"$(seq 12 | tr '\n' ' ')" ]; echo $?)" "$name: every task journaled exactly once"
	check "$([ "$(awk -F'\t' 'NR > 1 && ($7 != 0 || $8 != 0)' "$W/$name.jl" | wc -l)" -eq 0 ]; echo $?)" \
		"$name: and done (none lost, none charged)"
	grep -q "MPS on .*: its .* died; daemon restarted (1 of 3)" "$W/$name.err"
	check $? "$name: the fault was noticed and the daemon restarted" "$(grep 'MPS on' "$W/$name.err")"
	tail -n 1 "$W/$name.out" | python3 -c 'import json,sys
d = json.loads(sys.stdin.read())
sys.exit(0 if d["retries"] == 0 and d["failed"] == 0 and d["devices"][0]["mps_restarts"] == 1 else 1)' 2>/dev/null
	check $? "$name: --json: no retry spent, 0 failed, mps_restarts 1"
	# the final attempt of each task: its pid must have been an MPS client
	local missing=0 seen=0 p
	for p in $(awk '$3 == "end" && $4 == 0 { print $2 }' "$ATTEMPTS"); do
		if grep -qx "$p" "$W/$name.clients" || cat "$W/$name".control.* 2>/dev/null | grep -q "client $p\b\|Client $p\b"; then
			seen=$((seen + 1))
		else
			missing=$((missing + 1))
		fi
	done
	info "$name: $seen final attempts seen as MPS clients, $missing not; $(sort -u "$W/$name.clients" | wc -l) client pids sampled"
	check "$([ "$missing" -eq 0 ] && [ "$seen" -eq 12 ]; echo $?)" \
		"$name: every task's final attempt ran as an MPS client (none outside MPS)"
	"$GP" mps status --json >"$W/$name.after" 2>/dev/null
	check "$(python3 -c 'import json,sys; sys.exit(len(json.load(open(sys.argv[1]))["daemons"]))' \
		"$W/$name.after" 2>/dev/null; echo $?)" "$name: no daemon of ours left at the end"
	check "$([ -z "$(ls -A "$GPUPACK_STATE_DIR/mps" 2>/dev/null)" ]; echo $?)" "$name: no MPS state left"
}

one_run server-killed server
one_run daemon-killed daemon
gpu_finish
