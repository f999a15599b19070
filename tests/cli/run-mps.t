#!/bin/sh
# shellcheck disable=SC2016,SC2013,SC2086 # the tasks' own $VARS are literal; pid and uuid lists split on purpose
# run-mps.t: `gpupack run --share mps` against the MPS control double
# (tests/tools/fake-mps-control, real processes on a real socket): each
# client's environment and limits, the private daemon's lifecycle, a daemon
# that was already running, the client limit, a fatal fault of one client
# (others retried without spending --retries), a killed server (tasks
# retried, none lost), and terminate_client on a second signal.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"
. "$GPUPACK_SRC/tests/cli/mps-lib.sh"

cd "$T" || exit 1
alive() {
	st=$(ps -o stat= -p "$1" 2>/dev/null)
	[ -n "$st" ] && [ "${st#Z}" = "$st" ]
}
# shellcheck disable=SC2086
R() { $G run --gpus 0 "$@"; }
export CLIENT

# --- environment and limits ----------------------------------------------------------
# the client takes no extra argument: {} goes where it does no harm
run R -j 2 "$CLIENT" --ms 50 --pidfile pid{} ::: 1 2 3
is "$rc" 0 "the default share is mps where the control binary exists"
is "$(printf '%s\n' "$out" | grep -c '^mps=1 ')" 3 "every task is a client of an MPS daemon"
run R --sm 25 --mem 2G "$CLIENT" --ms 10 --pidfile pid{} ::: 1
like "$out" "sm=25.0 mem=2568M" "--sm and --mem reach the client: 2G for the task plus its context's 520M (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, _PINNED_DEVICE_MEM_LIMIT)"
run R 'echo "$CUDA_VISIBLE_DEVICES $CUDA_MPS_PIPE_DIRECTORY"; : {}' ::: 1
like "$out" "^$U0 $STATE/mps/.*/pipe\$" "CUDA_VISIBLE_DEVICES and the daemon's pipe directory"

# --- lifecycle -----------------------------------------------------------------------------
run R --shell 'cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid"; : {}' ::: 1
dpid=$(printf '%s\n' "$out" | head -n 1)
ok "$( [ -n "$dpid" ]; echo $?)" "a daemon ran during the run (pid $dpid)"
gone "$dpid"
ok $? "the run's own daemon is stopped at its end"
is "$(count_daemons)" 0 "and no daemon is left"

$G mps start --gpu 0 >/dev/null 2>&1
before=$(daemon_pid "$(ls "$STATE/mps")")
run R "$CLIENT" --ms 10 --pidfile pid{} ::: 1 2
like "$out" "^mps=1" "a daemon started by 'gpupack mps start' is used"
alive "$before"
ok $? "and left running after the run"
$G mps stop --gpu 0 >/dev/null 2>&1

out=$(R -j 100 --json true ::: 1)
is "$(printf '%s' "$out" | jq -r '.devices[0].slots')" 48 "never more clients than the server accepts (48)"

# --- a fatal fault of one client ------------------------------------------------------------
# task f faults the server (x_fault) every time it runs, as a CUDA program with an illegal
# address does, and fails; each fault ends every client of the server. The others must end done:
# the first to show the fault runs again alone; the others (victims, it seems: the culprit may
# be among them) once beside each other, then alone, so the culprit ends up hitting no one but
# itself (seen on the H200: retried together, the culprit's second fault took the others).
# The faulting tasks fault once the others' clients are registered ($PEERS of them: the fault
# must hit them, however slow the machine), not after a fixed sleep. A client works 1.5 s
# before the fault and 0.1 s after it ("fault" exists), so the reruns are quick.
cp "$GPUPACK_SRC/tests/cli/mps-task-lib.sh" lib.sh
export PEERS=4
cat >task.sh <<'SH'
. ./lib.sh
if [ "$1" = f ]; then
	[ -e f.runs ] || peers
	echo "$GPUPACK_SEQ" >>f.runs
	touch fault
	echo x_fault 200 | "$GPUPACK_MPS_CONTROL" >/dev/null
	exit 1
fi
client
SH
run R -j 8 --retries 1 --json --joblog fault.jl sh task.sh ::: a b c d f
is "$rc" 1 "one faulting task: only it fails (--retries 1: no retry)"
is "$(awk -F'\t' 'NR > 1 && $7 == 0' fault.jl | wc -l | tr -d ' ')" 4 "the four clients it hit all end done"
is "$(awk -F'\t' 'NR > 1 && $9 ~ / f$/ { print $7 }' fault.jl)" 1 "the faulting task failed"
json=$(printf '%s\n' "$out" | tail -n 1)
ok "$(printf '%s' "$json" | jq -e '.fault_retries >= 4 and .retries == 0' >/dev/null; echo $?)" \
	"they were retried for free: the fault was the server's (fault_retries, not retries)"
ok "$(n=$(wc -l <f.runs); [ "$n" -ge 2 ] && [ "$n" -le 3 ]; echo $?)" "the culprit ran 2 or 3 times, the last alone (and faulted again)"

# the same without fault detection: the clients' failures spend --retries 1 and are lost,
# which is what the test above would show if gpupack guessed instead of asking the server
rm -f faulted
cat >plain.sh <<'SH'
if [ "$1" = f ]; then sleep 0.3; exit 1; fi
exec "$CLIENT" --ms 300 --exit 0
SH
run R -j 8 --retries 1 sh plain.sh ::: a b f
is "$rc" 1 "without a fault only the failing task fails"

# --- a server that stays in FAULT is restarted ------------------------------------------------
# x_fault 600000: the double refuses clients for 10 minutes; the run restarts the daemon instead
rm -f faulted fault
cat >stuck.sh <<'SH'
. ./lib.sh
if [ "$1" = f ]; then
	[ -e faulted ] || { peers; touch faulted fault; echo x_fault 600000 | "$GPUPACK_MPS_CONTROL" >/dev/null; }
	exit 1
fi
client 800
SH
PEERS=7 GPUPACK_KNOBS=farm.fault_restart_s=1 run R -j 8 --retries 1 --joblog stuck.jl sh stuck.sh ::: a b f c d e g h i
is "$rc" 1 "a server stuck in FAULT: only the faulting task fails"
like "$err" "stayed in FAULT for 1 s: restarting" "the daemon was restarted (after the knob farm.fault_restart_s, 1 s)"
is "$(awk -F'\t' 'NR > 1 && $7 == 0' stuck.jl | wc -l | tr -d ' ')" 8 "every other task ran after the restart"

# --- the MPS server killed mid-run -------------------------------------------------------------
rm -f fault
cat >killer.sh <<'SH'
. ./lib.sh
if [ "$1" = k ]; then
	d=$(cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid")
	[ -e killed ] || { peers; looked; touch killed fault; pkill -9 -P "$d" -f fake-mps-server; }
	exit 0
fi
client 3000
SH
PEERS=3 run R -j 8 --retries 1 --json sh killer.sh ::: a b c k
is "$rc" 0 "a killed MPS server loses no task (--retries 1: no retry)"
ok "$( [ -e killed ]; echo $?)" "(the server was killed)"
ok "$(printf '%s\n' "$out" | tail -n 1 | jq -e '.reruns >= 1 and .retries == 0 and .failed == 0 and
	.rerun_reasons["MPS fault"] == .reruns and .devices[0].mps_restarts >= 1' >/dev/null; echo $?)" \
	"the clients it took ran again, not spending --retries (reruns, not retries)"
like "$err" "its server \(pid [0-9]+\) died; daemon restarted \(1 of 3\), [0-9]+ tasks? it took runs? again" \
	"one line says what happened"

# --- a second signal: terminate_client, then the signal -----------------------------------------
# shellcheck disable=SC2086
rm -f pid1 pid2
# shellcheck disable=SC2086
$G run --gpus 0 -j 2 "$CLIENT" --pidfile pid{} ::: 1 2 >sig.out 2>sig.err &
gpid=$!
i=0
while { [ ! -s pid1 ] || [ ! -s pid2 ]; } && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
# registered with the daemon once both show in its client list
i=0
while [ "$(echo ps | CUDA_MPS_PIPE_DIRECTORY=$(echo "$STATE"/mps/*/pipe) "$GPUPACK_MPS_CONTROL" | grep -c fake-mps-client)" -lt 2 ] &&
	[ $i -lt 1200 ]; do
	sleep 0.05
	i=$((i + 1))
done
kill -TERM "$gpid"
# the second once gpupack has taken the first (it says so), not after a fixed sleep
i=0
while ! grep -q 'no new tasks' sig.err && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM "$gpid"
wait "$gpid"
is "$?" 255 "two signals end the clients"
is "$(grep -c 'error 810' sig.err)" 2 "each through terminate_client first (error 810)"
is "$(count_daemons)" 0 "and the daemon is stopped"

# ---- a refusal that comes after the daemons started keeps its message --------------------------
rm -f gox
$G run --gpus 0 --share timeslice --joblog held --shell 'while [ ! -e go{} ]; do sleep 0.05; done' ::: x \
	>/dev/null 2>&1 &
hpid=$!
i=0
while [ ! -s held.lock ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i + 1)); done
run env GPUPACK_FARM_RUN=other $G run --gpus 0 --share mps --joblog held echo ::: 1
is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "under --share mps, a farm over nodes on a held joblog: refused, one line"
like "$err" "another farm runs on it" "saying why (not 'unknown error')"
is "$(count_daemons)" 0 "and the daemon it started is stopped"
touch gox
wait "$hpid"
