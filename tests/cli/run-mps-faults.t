#!/bin/sh
# shellcheck disable=SC2016,SC2086 # the tasks' own $VARS are literal; lists split on purpose
# run-mps-faults.t: MPS faults of every kind handled as one, against the
# control double: the control daemon killed, the daemon hung, the server
# hung, and the restart limit. Each time: the device takes no task while
# its daemon is down, the daemon is restarted, the tasks the fault took run
# again without spending --retries (--retries 1 here), no task is lost, and
# none ran outside MPS (the client prints mps=1 only with a daemon).
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"
. "$GPUPACK_SRC/tests/cli/mps-lib.sh"

cd "$T" || exit 1
# shellcheck disable=SC2086
R() { $G run --gpus 0 "$@"; }
export CLIENT PEERS

# The faults come once the other tasks' clients are registered with the daemon ($PEERS of
# them: the fault takes them, whatever the machine's speed), never after a fixed sleep. A
# client works 1.5 s before the fault (so that it is there when the fault comes) and 0.1 s
# after it (the fault task made "fault"): the tasks the fault took run again quickly.
cp "$GPUPACK_SRC/tests/cli/mps-task-lib.sh" lib.sh
# task.sh NAME: a client; "k*" kills the daemon (once), "h" hangs it, "s" hangs its server,
# "K" kills the daemon every time it runs
cat >task.sh <<'SH'
. ./lib.sh
pd=$CUDA_MPS_PIPE_DIRECTORY
case $1 in
k*)	[ -e killed ] && exit 0   # run again after its fault: no peers to wait for
	peers
	touch killed fault
	kill -9 "$(cat "$pd/nvidia-cuda-mps-control.pid")"
	exit 0 ;;
K)	[ -e calm ] && client
	peers
	touch fault
	kill -9 "$(cat "$pd/nvidia-cuda-mps-control.pid")"
	exit 0 ;;
h)	[ -e hung ] && exit 0
	peers
	touch hung fault
	echo x_hang | timeout 1 "$GPUPACK_MPS_CONTROL" >/dev/null 2>&1
	exit 0 ;;
s)	[ -e hung ] && exit 0
	peers
	touch hung fault
	echo x_hang_server | timeout 1 "$GPUPACK_MPS_CONTROL" >/dev/null 2>&1
	exit 0 ;;
f)	peers
	touch hung
	echo "CUDA error: an illegal memory access was encountered" >&2
	echo x_fault_own 100 | timeout 1 "$GPUPACK_MPS_CONTROL" >/dev/null 2>&1
	echo "x_hang $SLOW_MS" | timeout 1 "$GPUPACK_MPS_CONTROL" >/dev/null 2>&1
	exit 1 ;;
w)	client 8000 ;;
esac
client
SH
# outside OUT: each task's last output line, one per input; all must say mps=1
outside() { printf '%s\n' "$1" | grep -c '^mps=0'; }
clients() { printf '%s\n' "$1" | grep -c '^mps=1 '; }
summary() { printf '%s\n' "$1" | tail -n 1; }

# --- the control daemon killed mid-run ------------------------------------------------------
PEERS=3
run R -j 4 --retries 1 --json --joblog jl1 sh task.sh ::: 1 2 3 k 4 5 6
is "$rc" 0 "the control daemon killed mid-run: no task lost (--retries 1: no retry)"
# why, when it failed: what the farm said and its journal
[ "$rc" -eq 0 ] || { printf '%s\n' "$err" "$(summary "$out")"; cat jl1; } | sed 's/^/#   /'
ok "$([ -e killed ]; echo $?)" "(the daemon was killed)"
is "$(clients "$err")" 6 "every client task ended done, as a client of an MPS daemon"
is "$(outside "$err")" 0 "none ran without MPS"
ok "$(summary "$out" | jq -e '.retries == 0 and .failed == 0 and .reruns >= 1 and
	.devices[0].mps_restarts >= 1' >/dev/null; echo $?)" "the tasks it took ran again, no --retries spent"
like "$err" "MPS on $U0: its control daemon \\(pid [0-9]+\\) died; daemon restarted \\(1 of 3\\)" \
	"one line says what happened"
is "$(awk -F'\t' 'NR > 1 { print $1 }' jl1 | sort -n | uniq -d)" "" "each task journaled once"
is "$(awk -F'\t' 'NR > 1 && $7 == 0' jl1 | wc -l | tr -d ' ')" 7 "and done"
is "$(count_daemons)" 0 "the restarted daemon is stopped at the end"

# --- the server killed beside one gpupack was not told of ---------------------------------------
# FAKE_MPS_SPARE_SERVER: the first daemon also runs a server no record names, which outlives it
# and then removes the control socket at its pipe path, as a real server left by a replaced daemon
# was seen to do on an H100. The restart must end the old daemon's servers too, or the new daemon
# is broken a moment later (a second restart, tasks run again for nothing).
cat >srvkill.sh <<'SH'
. ./lib.sh
if [ "$1" = k ]; then
	peers
	looked
	touch fault
	d=$(cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid")
	pkill -9 -P "$d" -f fake-mps-server
	exit 0
fi
client
SH
rm -f fault
run env FAKE_MPS_SPARE_SERVER="$T/spare" $G run --gpus 0 -j 4 --retries 1 --json sh srvkill.sh ::: 1 2 3 k 4 5 6 7 8
is "$rc" 0 "the server killed beside one no record names: no task lost"
is "$(outside "$err")" 0 "none ran without MPS"
ok "$(summary "$out" | jq -e '.retries == 0 and .failed == 0 and .devices[0].mps_restarts == 1' \
	>/dev/null; echo $?)" "one restart: the old daemon's other server was ended with it"
is "$(printf '%s\n' "$err" | grep -c 'MPS on')" 1 "one line, for the one restart"
is "$(count_daemons)" 0 "nothing left running"

# --- the daemon hung: noticed by its deadline (2 s: 20 times what a command takes, loaded) ----
rm -f hung fault
run env GPUPACK_MPS_TIMEOUT=2 $G run --gpus 0 -j 4 --retries 1 --json sh task.sh ::: 1 2 h 3 4
is "$rc" 0 "a hung control daemon: no task lost, the run ends (--retries 1: no retry, no --timeout)"
is "$(clients "$err")" 4 "every client task done, under MPS"
is "$(outside "$err")" 0 "none ran without MPS"
like "$err" "its control daemon did not answer" "the hang is noticed by its deadline"
ok "$(summary "$out" | jq -e '.retries == 0 and .failed == 0 and .devices[0].mps_restarts >= 1' \
	>/dev/null; echo $?)" "restarted, nothing charged"
is "$(count_daemons)" 0 "and nothing left running"

# --- the server hung: its daemon waits on it and does not answer either ------------------------
rm -f hung fault
run env GPUPACK_MPS_TIMEOUT=2 $G run --gpus 0 -j 4 --retries 1 --json sh task.sh ::: 1 2 s 3 4
is "$rc" 0 "a hung server: no task lost"
is "$(clients "$err")" 4 "every client task done, under MPS"
like "$err" "did not answer" "noticed by the deadline"
is "$(count_daemons)" 0 "and nothing left running"

# --- a daemon slow to answer right after a fault: busy with it, not hung ----------------------
# Seen on an H200: after an illegal address the control daemon stayed silent more than 10 s;
# taking that for a hang killed the 11 clients running on and restarted the daemon. Within
# farm.fault_grace_s of a fault a silent daemon is asked again later; past it, restarted.
rm -f hung fault
run env GPUPACK_MPS_TIMEOUT=1 SLOW_MS=3000 $G run --gpus 0 -j 4 --retries 1 --json sh task.sh ::: w w w f
is "$rc" 1 "a daemon silent 3 s after a fault: only the faulting task fails (exit 1)"
ok "$(summary "$out" | jq -e '.done == 3 and .failed == 1 and .reruns == 0 and .devices[0].mps_restarts == 0' \
	>/dev/null; echo $?)" "no client killed, no restart"
like "$err" "did not answer .* after a fault: taken as busy with it" "said once"
is "$(printf '%s\n' "$err" | grep -c 'taken as busy')" 1 "once per fault"
is "$(count_daemons)" 0 "nothing left running"
# past the grace, the silent daemon is a fault of the device as before
rm -f hung fault
run env GPUPACK_MPS_TIMEOUT=1 SLOW_MS=0 GPUPACK_KNOBS=farm.fault_grace_s=2 $G run --gpus 0 -j 4 --retries 1 --json \
	sh task.sh ::: w w w f
is "$rc" 1 "a daemon silent for good after a fault: only the faulting task fails"
ok "$(summary "$out" | jq -e '.done == 3 and .failed == 1 and .devices[0].mps_restarts == 1' >/dev/null; echo $?)" \
	"restarted once the grace is over, the clients it took run again"
is "$(count_daemons)" 0 "nothing left running"

# --- the restart limit --------------------------------------------------------------------------
rm -f killed fault
PEERS=1
run env GPUPACK_MPS_RESTARTS=1 $G run --gpus 0 -j 2 --retries 1 --joblog jl2 sh task.sh ::: 1 K 2 K 3 4 5 6
is "$rc" 255 "a daemon that keeps dying: past the restart limit the run stops (exit 255)"
is "$(printf '%s\n' "$err" | grep -c 'MPS on')" 2 "one line for the restart, one for the stop"
like "$err" "gpupack: run: MPS on $U0: its control daemon \\(pid [0-9]+\\) died, after 1 restart of its daemon; stopping the run \\(--resume runs the tasks it took\\)" \
	"the stop says why"
is "$(awk -F'\t' 'NR > 1 && $7 != 0' jl2 | wc -l | tr -d ' ')" 0 "no task was recorded as failed"
is "$(count_daemons)" 0 "nothing left running"
touch calm
run R -j 2 --retries 1 --joblog jl2 --resume sh task.sh ::: 1 K 2 K 3 4 5 6
is "$rc" 0 "--resume then finishes the run"
is "$(awk -F'\t' 'NR > 1 { print $1 }' jl2 | sort -n | tr '\n' ' ')" "1 2 3 4 5 6 7 8 " \
	"every task ended exactly once"

# GPUPACK_MPS_RESTARTS=0: no restart, the first fault stops the run
rm -f killed fault
run env GPUPACK_MPS_RESTARTS=0 $G run --gpus 0 -j 2 --retries 1 sh task.sh ::: 1 k 2
is "$rc" 255 "GPUPACK_MPS_RESTARTS=0: the first daemon death stops the run"
like "$err" "after 0 restarts of its daemon; stopping the run" "saying so"
is "$(count_daemons)" 0 "nothing left running"

# --- a daemon that cannot be restarted: the run stops with one line, nothing lost -----------------
# The control program refuses to start a daemon once "nostart" exists; the task that kills the
# daemon creates it first, so the restart fails: the device cannot run tasks under MPS any more.
cat >ctl.sh <<SH
#!/bin/sh
[ "\$1" = -d ] && [ -e "$T/nostart" ] && { echo "ctl.sh: refusing to start" >&2; exit 1; }
exec "$GPUPACK_MPS_CONTROL" "\$@"
SH
chmod +x ctl.sh
cat >nostart.sh <<'SH'
. ./lib.sh
if [ "$1" = k ]; then
	peers
	touch "$NOSTART" fault
	kill -9 "$(cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid")"
	exit 0
fi
client
SH
rm -f nostart fault
run env GPUPACK_MPS_CONTROL="$T/ctl.sh" NOSTART="$T/nostart" timeout 60 $G run --gpus 0 -j 2 --retries 1 \
	--joblog jl3 sh nostart.sh ::: 1 k 2 3 4
is "$rc" 255 "a daemon that cannot be restarted: the run stops (exit 255), not waits for ever"
like "$err" "gpupack: run: MPS on $U0: its control daemon \\(pid [0-9]+\\) died; restarting its daemon: " \
	"one line says what failed"
is "$(awk -F'\t' 'NR > 1 { print $1 }' jl3 | sort -n | uniq -d)" "" "no task journaled twice"
is "$(awk -F'\t' 'NR > 1 && $7 != 0' jl3 | wc -l | tr -d ' ')" 0 "none recorded as failed: --resume runs them"
is "$(count_daemons)" 0 "nothing left running"
