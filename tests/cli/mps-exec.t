#!/bin/sh
# mps-exec.t: `gpupack mps exec` against the control double: the command's
# environment, its exit status passed through (as a shell reports it), signal
# forwarding, the daemon stopped afterwards (or left alone when it was
# already running), and bad input refused before anything starts.
# $G is a command line on purpose (gpupack --sim FILE): split it; the single
# quoted sh -c scripts are expanded by the command's shell, not this one.
# shellcheck disable=SC2086,SC2016
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
. "$GPUPACK_SRC/tests/cli/mps-lib.sh"

no_state() { [ -z "$(ls -A "$STATE/mps" 2>/dev/null)" ]; }

# ---- environment and exit codes -----------------------------------------------
run $G mps exec --gpu 1 -- sh -c 'echo "$CUDA_VISIBLE_DEVICES|$CUDA_MPS_PIPE_DIRECTORY|$CUDA_MPS_LOG_DIRECTORY"'
is "$rc" 0 "exec of a command that succeeds exits 0"
is "$out" "$U1|$STATE/mps/$U1/pipe|$STATE/mps/$U1/log" "the command sees the device and the daemon's directories"
no_state
ok $? "the daemon exec started is gone with its directories"

for code in 3 77; do
	run $G mps exec -- sh -c "exit $code"
	is "$rc" "$code" "exec passes exit status $code through"
done
no_state
ok $? "nothing left after the exits"

run $G mps exec -- sh -c 'kill -TERM $$'
is "$rc" 143 "a command killed by SIGTERM: exit 128+15"

run $G mps exec -- /nonexistent/program
is "$rc" 127 "a command that does not exist: exit 127"

run $G mps exec --sm 30 --mem 2G -- "$CLIENT" --ms 10
is "$rc" 0 "a client under exec succeeds"
like "$out" "^mps=1 pid=[0-9]+ server=[0-9]+ sm=30.0 mem=2568M" "the client reached the daemon and got its limits (2G for it, 520M for its context)"

run $G mps exec --mem 1G -- "$CLIENT" --alloc-mib 2048
is "$rc" 1 "a client over the memory limit fails, and exec says so"
run $G mps exec --mem 1G -- "$CLIENT" --alloc-mib 512 --ms 10
is "$rc" 0 "a client within the memory limit succeeds"
no_state
ok $? "no state left after exec runs"

# ---- signal forwarding -----------------------------------------------------------
$G mps exec --gpu 0 -- sh -c 'trap "echo TERM >\"$0\"; exit 5" TERM; echo ready >"$0.ready"; while :; do sleep 0.05; done' \
	"$T/sig" >/dev/null 2>&1 &
GP=$!
_mps_pids="$_mps_pids $GP"
i=0
while [ ! -s "$T/sig.ready" ] && [ "$i" -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
DP=$(daemon_pid "$U0")
alive "$DP" 2>/dev/null
ok $? "exec runs a daemon while the command runs"
kill -TERM "$GP"
wait "$GP"
is "$?" 5 "SIGTERM to gpupack reaches the command; exec exits with its status"
is "$(cat "$T/sig" 2>/dev/null)" TERM "the command received SIGTERM"
gone "$DP"
ok $? "the daemon was stopped"
no_state
ok $? "its directories are gone"

# a client that dies of the forwarded SIGHUP: 128+1 (SIGINT cannot be tested
# from here: a background job starts with SIGINT ignored, and exec keeps it so;
# nor SIGHUP where the suite was started ignoring it, as under nohup)
if [ $((0x$(awk '/^SigIgn/ { print $2 }' /proc/$$/status) & 1)) -ne 0 ]; then
	skip "SIGHUP is ignored here (started under nohup?): exec keeps it so" 2
else
$G mps exec --gpu 0 -- "$CLIENT" >"$T/hup.out" 2>&1 &
GP=$!
_mps_pids="$_mps_pids $GP"
i=0
while ! grep -q '^mps=1' "$T/hup.out" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -HUP "$GP"
wait "$GP"
is "$?" 129 "SIGHUP forwarded: the client dies of it, exec exits 129"
no_state
ok $? "daemon stopped after SIGHUP"
fi

# ---- an already running daemon is reused and left running --------------------------
$G mps start --gpu 0 >/dev/null 2>&1
P=$(daemon_pid "$U0")
run $G mps exec --gpu 0 -- "$CLIENT" --ms 10
is "$rc" 0 "exec on a device whose daemon runs"
like "$out" "^mps=1" "the command used the running daemon"
is "$(daemon_pid "$U0")" "$P" "the same daemon"
alive "$P" 2>/dev/null
ok $? "and it is left running"
run $G mps exec --gpu 0 --sm 10 -- true
is "$rc" 2 "exec with other limits than the running daemon's: exit 2"
like "$err" "gpupack mps start --gpu $U0 --restart" "it advises a command that takes --restart"
run $G mps exec --gpu 0 --sm 10 --restart -- true
is "$rc" 2 "(exec itself has no --restart)"
run $G mps start --gpu "$U0" --sm 10 --restart
is "$rc" 0 "the advice works: mps start --restart with the limits"
run $G mps exec --gpu 0 --sm 10 -- true
is "$rc" 0 "and then exec with those limits runs"
$G mps stop >/dev/null 2>&1

# ---- --usage and --usage-json: what the command used ---------------------------------
# the simulated GPU's counter moves every 20 ms; 1 s of the command spans >= 10 updates (even where
# a loaded machine reads it so slowly that the period seen is up to 100 ms)
run env GPUPACK_SIM_ENERGY_STEP_MS=20 $G mps exec --usage --usage-json "$T/usage.json" -- sh -c 'sleep 1; echo done'
is "$rc" 0 "exec --usage: the command's exit status"
is "$out" "done" "exec --usage: the command's stdout is its own"
like "$err" "gpupack: mps exec: usage of sh:" "exec --usage: the usage on stderr at the end"
like "$err" "wall +[0-9.]+ s +exact" "exec --usage: wall time, exact"
like "$err" "CPU time +[0-9.]+ s +exact" "exec --usage: CPU time, exact"
like "$err" "peak memory +- +unknown +the driver gives no per-process memory" \
	"exec --usage: the simulated GPU lists no processes: memory unknown, no figure"
like "$err" "GPU energy +[0-9.]+ J +estimate" "exec --usage: the GPU's energy, an estimate"
is "$(jq -r '[.command, .exit_status, .wall_s.quality, .cpu_s.quality, .peak_memory_bytes.quality,
	.peak_memory_bytes.value, .energy_j.quality] | map(tostring) | join(" ")' "$T/usage.json")" \
	"sh 0 exact exact unknown null estimate" "exec --usage-json: each field with its quality"
# the simulated GPU draws 70 to 700 W: joules over the life the wall time measured
is "$(jq '.wall_s.value >= 1 and .energy_j.value >= 0.9 * 70 * 1 and
	.energy_j.value <= 1.1 * 700 * .wall_s.value' "$T/usage.json")" true \
	"exec --usage-json: joules between 70 W and 700 W over the command's wall time"
# a life shorter than 10 counter updates: -, never 0
run env GPUPACK_SIM_ENERGY_STEP_MS=1000 $G mps exec --usage-json - -- sh -c 'exit 4'
is "$rc" 4 "exec --usage-json -: the command's exit status"
is "$(printf '%s\n' "$out" | jq -r '[.exit_status, .energy_j.value, .energy_j.quality] | map(tostring) | join(" ")')" \
	"4 null unknown" "a life under 10 counter updates: energy unknown, not 0"
like "$(printf '%s\n' "$out" | jq -r .energy_j.how)" "resolution is not known|under 10 updates" "and it says why"
run $G mps exec --usage-json "$T/no/such/dir/u.json" -- true
is "$rc" 0 "an unwritable --usage-json: the command's status stands"
like "$err" "--usage-json $T/no/such/dir/u.json: No such file or directory" "and it says why"
run $G mps status --usage
is "$rc" 2 "--usage is exec's only"
no_state
ok $? "nothing left after the usage runs"

# ---- bad input: nothing started, the command not run -------------------------------
for a in "--sm 101" "--sm 0" "--mem 12X"; do
	# shellcheck disable=SC2086
	run $G mps exec $a -- touch "$T/ran"
	is "$rc" 2 "exec $a exits 2"
	one_line "$err" "exec $a: one line"
done
[ ! -e "$T/ran" ]
ok $? "the command never ran"
no_state
ok $? "nothing started by bad input"
run $G mps exec
is "$rc" 2 "exec without a command exits 2"
run env GPUPACK_MPS_CONTROL=/nonexistent $G mps exec -- touch "$T/ran"
is "$rc" 3 "exec without the control program exits 3"
[ ! -e "$T/ran" ]
ok $? "and does not run the command"
