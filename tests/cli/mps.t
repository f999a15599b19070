#!/bin/sh
# mps.t: the MPS daemon lifecycle against the control double
# (tests/tools/fake-mps-control.c: real sockets, real processes): start,
# idempotence, limits, status, stale state, stop with clients, --force, env,
# and attacks on the state directory. exec has its own file (mps-exec.t).
# $G is a command line on purpose (gpupack --sim FILE): split it.
# shellcheck disable=SC2086
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
. "$GPUPACK_SRC/tests/cli/mps-lib.sh"

# ---- start, idempotence, limits -------------------------------------------
run $G mps start --gpu 0
is "$rc" 0 "start --gpu 0 succeeds"
like "$out" "^started $U0: daemon [0-9]+" "start says it started a daemon"
P1=$(daemon_pid "$U0")
alive "$P1" 2>/dev/null
ok $? "the daemon process runs"
is "$(stat -c %a "$STATE/mps/$U0/pipe")" 700 "pipe directory is 0700"
is "$(stat -c %a "$STATE/mps/$U0/log")" 700 "log directory is 0700"

run $G mps start --gpu 0
is "$rc" 0 "start again with the same limits succeeds"
like "$out" "^already running $U0: daemon $P1" "second start reports the running daemon"
is "$(daemon_pid "$U0")" "$P1" "the same daemon is left alone"
is "$(count_daemons)" 1 "one daemon, not two"

run $G mps start --gpu 0 --sm 50
is "$rc" 2 "start with other limits is an error"
one_line "$err" "other limits: one line"
like "$err" "other limits" "the error says why"
is "$(daemon_pid "$U0")" "$P1" "the running daemon is untouched"

run $G mps start --gpu "$U0" --sm 25 --mem 1G --priority low --restart
is "$rc" 0 "--restart with new limits succeeds"
P2=$(daemon_pid "$U0")
[ "$P2" != "$P1" ] && ! alive "$P1" 2>/dev/null
ok $? "--restart replaced the daemon (old pid gone)"

run $G mps status --json
is "$rc" 0 "status --json succeeds"
is "$(printf '%s' "$out" | jq -r '.daemons | length')" 1 "status lists one daemon"
is "$(printf '%s' "$out" | jq -r '.daemons[0].uuid')" "$U0" "status: device uuid"
is "$(printf '%s' "$out" | jq -r '.daemons[0].pid')" "$P2" "status: daemon pid"
is "$(printf '%s' "$out" | jq -r '.daemons[0].state')" running "status: running (the word devices uses)"
is "$(printf '%s' "$out" | jq -r '.daemons[0].limits.sm_pct')" 25 "status: recorded sm limit"
is "$(printf '%s' "$out" | jq -r '.daemons[0].limits.mem_bytes')" 1073741824 "status: recorded mem limit"
is "$(printf '%s' "$out" | jq -r '.daemons[0].limits.priority')" low "status: recorded priority"
is "$(printf '%s' "$out" | jq -r '.daemons[0].reported.sm_pct')" 25.0 "the daemon was told sm 25"
is "$(printf '%s' "$out" | jq -r '.daemons[0].reported.mem')" 1544M "the daemon was told 1G plus the context's 520M for ordinal 0"
is "$(printf '%s' "$out" | jq -r '.daemons[0].reported.priority')" 1 "the daemon was told priority 1 (low)"
is "$(printf '%s' "$out" | jq -r '.daemons[0].pipe_dir')" "$STATE/mps/$U0/pipe" "status: pipe directory"

run $G devices --json
is "$(printf '%s' "$out" | jq -r '.mps_daemons[0] | "\(.uuid) \(.pid) \(.state) \(.limits.sm_pct) \(.limits.mem_bytes) \(.limits.priority)"')" \
	"$U0 $P2 running 25 1073741824 low" "devices --json lists the daemon with its limits"
run $G devices
like "$out" "^ +0 +$P2 +running +$U0 +25% +1(\\.0)? GiB +low +$STATE/mps/$U0/pipe" "devices lists the daemon in its MPS section"

# ---- env, clients, status with clients --------------------------------------
run $G mps env --gpu 0
is "$rc" 0 "env succeeds"
(
	eval "$out"
	printf '%s|%s|%s\n' "$CUDA_VISIBLE_DEVICES" "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
) >"$T/envvars"
is "$(cat "$T/envvars")" "$U0|$STATE/mps/$U0/pipe|$STATE/mps/$U0/log" "env output eval'd in sh sets the three variables"

start_client c1 --ms 30000
start_client c2 --ms 30000
like "$(cat "$T/c1.out")" "^mps=1 pid=$C1 server=[0-9]+ sm=25.0 mem=1544M priority=1" \
	"a client got the daemon's limits"
run $G mps status --json
is "$(printf '%s' "$out" | jq -r '.daemons[0].servers | length')" 1 "status: one server"
is "$(printf '%s' "$out" | jq -r '.daemons[0].servers[0].state')" active "status: server active"
is "$(printf '%s' "$out" | jq -r '[.daemons[0].servers[0].clients[].pid] | sort | join(" ")')" \
	"$(printf '%s\n' "$C1" "$C2" | sort -n | tr '\n' ' ' | sed 's/ $//')" "status: both client pids"
like "$(printf '%s' "$out" | jq -r '.daemons[0].servers[0].clients[0].command')" "fake-mps-client" \
	"status: client command"
run $G mps status
like "$out" "$C1 +[^ ]*fake-mps-client" "human status lists a client with its command"
like "$out" "$U0 +0 +$P2 +running +25% +1(\\.0)? GiB +low" "human status lists daemon, limits"

# ---- stop with running clients ----------------------------------------------
run $G mps stop --gpu 0 --timeout 0.5
is "$rc" 1 "stop with clients and no --force exits 1"
one_line "$err" "stop with clients: one line"
like "$err" "$C1" "the error names the client pids"
alive "$P2" && alive "$C1" 2>/dev/null
ok $? "daemon and clients left running"

run $G mps stop --gpu 0 --timeout 0.2 --force
is "$rc" 0 "stop --force succeeds"
like "$out" "^stopped $U0" "stop says so"
wait "$C1"
is "$?" 1 "client 1 was terminated (error 810: exit 1)"
wait "$C2"
is "$?" 1 "client 2 was terminated"
like "$(cat "$T/c1.err")" "error 810" "terminate_client reached the client"
gone "$P2"
ok $? "the daemon exited"
[ ! -e "$STATE/mps/$U0" ]
ok $? "its directories are removed"

# clients that leave within the timeout: stop waits for them, no --force needed
$G mps start --gpu 0 >/dev/null 2>&1
P3=$(daemon_pid "$U0")
start_client c3 --ms 300
run $G mps stop --gpu 0 --timeout 20
is "$rc" 0 "stop waits for a client that ends within the timeout"
wait "$C3"
is "$?" 0 "that client ended by itself"
gone "$P3"
ok $? "then the daemon exited"

# ---- stale state --------------------------------------------------------------
$G mps start --gpu 1 >/dev/null 2>&1
P4=$(daemon_pid "$U1")
kill -9 "$P4"
gone "$P4"
run $G mps status --json
is "$(printf '%s' "$out" | jq -r '.daemons[0].state')" stale "a killed daemon is reported stale"
run $G mps status
like "$out" "$U1 +1 +$P4 +stale" "human status says stale"
run $G mps env --gpu 1
is "$rc" 3 "env for a stale daemon exits 3"
run $G mps stop --gpu 1
is "$rc" 0 "stop cleans a stale entry"
like "$out" "^cleaned $U1" "stop says it cleaned"
[ ! -e "$STATE/mps/$U1" ]
ok $? "stale directories removed"

# a daemon that no longer answers (hung) is stale too, and stop ends it
$G mps start --gpu 1 >/dev/null 2>&1
P5=$(daemon_pid "$U1")
(echo x_hang | CUDA_MPS_PIPE_DIRECTORY="$STATE/mps/$U1/pipe" "$GPUPACK_MPS_CONTROL" >/dev/null 2>&1 &)
# until it hangs: a command it no longer answers within 0.5 s (10 s at most)
i=0
while echo get_server_list | CUDA_MPS_PIPE_DIRECTORY="$STATE/mps/$U1/pipe" \
	timeout 0.5 "$GPUPACK_MPS_CONTROL" >/dev/null 2>&1 && [ $i -lt 20 ]; do
	i=$((i + 1))
done
run env GPUPACK_MPS_TIMEOUT=1 $G mps status --json
is "$rc" 0 "status with a hung daemon still answers"
is "$(printf '%s' "$out" | jq -r '.daemons[0].state')" stale "a hung daemon is stale"
run env GPUPACK_MPS_TIMEOUT=1 $G mps stop --gpu 1
is "$rc" 0 "stop cleans a hung daemon"
gone "$P5"
ok $? "the hung daemon (ours, verified by start time) was ended"

# ---- daemons gpupack did not start ----------------------------------------------
mkdir -m 700 "$T/foreign"
CUDA_MPS_PIPE_DIRECTORY="$T/foreign" CUDA_MPS_LOG_DIRECTORY="$T/foreign" "$GPUPACK_MPS_CONTROL" -d
i=0
while [ ! -s "$T/foreign/nvidia-cuda-mps-control.pid" ] && [ "$i" -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
PF=$(cat "$T/foreign/nvidia-cuda-mps-control.pid")
run $G mps status --json
is "$(printf '%s' "$out" | jq -r --arg p "$PF" '[.foreign[] | select(.pid == ($p | tonumber)) | .pipe_dir] | join(",")')" \
	"$T/foreign" "status lists a daemon gpupack did not start, with its pipe dir"
run $G mps stop --all
is "$rc" 0 "stop --all with none of ours"
alive "$PF" 2>/dev/null
ok $? "the foreign daemon is never touched"
kill -9 "$PF"

# ---- fault state, as the farm sees it ------------------------------------------
$G mps start --gpu 0 >/dev/null 2>&1
P6=$(daemon_pid "$U0")
start_client c4 --ms 30000
echo "x_fault 20000" | CUDA_MPS_PIPE_DIRECTORY="$STATE/mps/$U0/pipe" "$GPUPACK_MPS_CONTROL" >/dev/null
wait "$C4"
is "$?" 1 "a fault ends the client with an error"
run $G mps status --json
is "$(printf '%s' "$out" | jq -r '.daemons[0].servers[0].state')" fault "status shows the server in FAULT"
grep -q "fatal GPU error" "$STATE/mps/$U0/log/server.log"
ok $? "server.log records the fatal error"
$G mps stop --gpu 0 >/dev/null 2>&1
gone "$P6"
ok $? "stop after a fault"

# ---- MIG: one daemon per MIG device, each seeing only its device -------------------
MIGTOPO="$GPUPACK_SRC/topologies/h100-80gb-mig.topo"
MIGS=$(awk '$1 == "ci" { for (i = 2; i <= NF; i++) if ($i ~ /^uuid=/) print substr($i, 6) }' "$MIGTOPO" | sort)
run $GPUPACK --sim "$MIGTOPO" mps start --gpu 0
is "$rc" 0 "start on a GPU with MIG on"
is "$(cd "$STATE/mps" && printf '%s\n' * | sort | tr '\n' ' ')" "$(printf '%s\n' $MIGS | tr '\n' ' ')" \
	"one daemon directory per MIG device of the topology"
n=0
for m in $MIGS; do
	p=$(daemon_pid "$m")
	tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "CUDA_VISIBLE_DEVICES=$m" && n=$((n + 1))
done
is "$n" "$(printf '%s\n' $MIGS | wc -l)" "each daemon runs with CUDA_VISIBLE_DEVICES=<its MIG uuid>"
run $GPUPACK --sim "$MIGTOPO" mps stop --all
is "$rc" 0 "stop --all stops them"
is "$(count_daemons):$(ls -A "$STATE/mps")" "0:" "no MIG daemon or directory left"

# ---- several devices, the second refused: the first is rolled back ----------------
mkdir -m 777 "$STATE/mps/$U1" && chmod 777 "$STATE/mps/$U1"
run $G mps start --all
is "$rc" 3 "start --all with one device's directory refused: exit 3"
one_line "$err" "partial failure: one line"
is "$(count_daemons)" 0 "the daemon started for the first device was stopped again"
[ ! -e "$STATE/mps/$U0/daemon" ]
ok $? "and its record removed"
rmdir "$STATE/mps/$U1"

# ---- concurrent starts of one device: one daemon ------------------------------------
for i in 1 2 3 4; do $G mps start --gpu 0 >"$T/par$i.out" 2>&1 & done
wait
is "$(cat "$T"/par*.out | grep -c '^started')" 1 "four concurrent starts: one started"
is "$(cat "$T"/par*.out | grep -c '^already running')" 3 "the other three found it running"
is "$(count_daemons)" 1 "one daemon"
$G mps stop >/dev/null 2>&1

# ---- bad input changes nothing ---------------------------------------------------
for a in "--sm 101" "--sm 0" "--sm -5" "--sm abc" "--mem 12X" "--mem 0" "--priority high" "--bogus"; do
	# shellcheck disable=SC2086
	run $G mps start --gpu 0 $a
	is "$rc" 2 "start $a exits 2"
	one_line "$err" "start $a: one line"
done
is "$(count_daemons)" 0 "no daemon was started by bad input"
run $G mps start --gpu 7
is "$rc" 2 "start on a device that does not exist exits 2"
run $G mps frobnicate
is "$rc" 2 "unknown subcommand exits 2"

# ---- the control program is absent -----------------------------------------------
# (a simulated machine's MPS is gpupack's stand-in, always there: tests/cli/sim-mps.t; the driver's
# machine here is the fake NVML's)
run env -u GPUPACK_MPS_CONTROL -u GPUPACK_SIM PATH=/nonexistent \
	GPUPACK_NVML_LIB="$GPUPACK_BUILD/tests/fakenvml/libnvidia-ml.so.1" "$GPUPACK" mps start --gpu 0
if [ -x /usr/local/nvidia/bin/nvidia-cuda-mps-control ] || [ -x /usr/bin/nvidia-cuda-mps-control ] ||
	[ -x /usr/local/cuda/bin/nvidia-cuda-mps-control ]; then
	ok 0 "# skip: a real nvidia-cuda-mps-control is installed here"
	ok 0 "# skip"
else
	is "$rc" 3 "no control program: exit 3"
	one_line "$err" "no control program: one line"
fi
run env GPUPACK_MPS_CONTROL=/nonexistent/ctl $G mps start --gpu 0
is "$rc" 3 "GPUPACK_MPS_CONTROL naming nothing: exit 3"
is "$(count_daemons)" 0 "nothing started without a control program"
printf '#!/bin/sh\necho "NVIDIA control daemon: cannot start: no devices" >&2\nexit 1\n' >"$T/badctl"
chmod +x "$T/badctl"
run env GPUPACK_MPS_CONTROL="$T/badctl" $G mps start --gpu 0
is "$rc" 3 "a control program whose -d fails: exit 3"
like "$err" "-d failed \(status 1\): NVIDIA control daemon: cannot start: no devices" "with its own message"
[ ! -e "$STATE/mps/$U0/pipe" ]
ok $? "and its directories cleaned"

# a state directory so deep that the daemon's sockets would not fit (108 bytes)
LONG="$T/$(printf 'd%.0s' $(seq 60))"
mkdir -m 700 "$LONG"
run env GPUPACK_STATE_DIR="$LONG" $G mps start --gpu 0
is "$rc" 3 "a pipe directory too long for a unix socket: exit 3"
like "$err" "too long for a unix socket" "it says so"

# ---- attacks on the state directory: refused, nothing changed ---------------------
attack() { # NAME STATE_DIR WHY: start must exit 3, one line saying WHY
	run env GPUPACK_STATE_DIR="$2" $G mps start --gpu 0
	is "$rc" 3 "$1: refused with exit 3"
	one_line "$err" "$1: one line"
	like "$err" "$3" "$1: the error says why"
}
mkdir -m 700 "$T/target"
ln -s "$T/target" "$T/link-state"
attack "symlink as the state directory" "$T/link-state" "link-state is a symbolic link"
is "$(ls -A "$T/target")" "" "symlink state dir: its target is untouched"

mkdir -m 700 "$T/s2" "$T/s2/mps"
ln -s "$T/target" "$T/s2/mps/$U0"
attack "symlink at mps/<uuid>" "$T/s2" "mps/$U0 is a symbolic link"
[ -L "$T/s2/mps/$U0" ] && [ -z "$(ls -A "$T/target")" ]
ok $? "symlink at mps/<uuid>: link and target untouched"

mkdir -m 700 "$T/s3" "$T/s3/mps" && mkdir -m 777 "$T/s3/mps/$U0" && chmod 777 "$T/s3/mps/$U0"
attack "mode 0777 at mps/<uuid>" "$T/s3" "mps/$U0 has mode 0777"
is "$(stat -c %a "$T/s3/mps/$U0"):$(ls -A "$T/s3/mps/$U0")" "777:" "mode 0777: mode and contents unchanged"

mkdir -m 777 "$T/s4" && chmod 777 "$T/s4"
attack "mode 0777 state directory" "$T/s4" "s4 has mode 0777"
is "$(stat -c %a "$T/s4"):$(ls -A "$T/s4")" "777:" "0777 state dir: unchanged"

if [ "$(id -u)" -eq 0 ]; then
	mkdir -m 700 "$T/s5" "$T/s5/mps" "$T/s5/mps/$U0" && chown nobody "$T/s5/mps/$U0"
	attack "foreign owner at mps/<uuid>" "$T/s5" "mps/$U0 is owned by uid 65534"
	is "$(stat -c %U:%a "$T/s5/mps/$U0"):$(ls -A "$T/s5/mps/$U0")" "nobody:700:" "foreign owner: unchanged"
else
	for _ in 1 2 3 4; do ok 0 "# skip foreign owner needs root"; done
fi
is "$(count_daemons)" 0 "no daemon was started by any attack"
