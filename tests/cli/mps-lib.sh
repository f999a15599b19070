# mps-lib.sh: shared setup of the MPS tests (sourced after tests/lib.sh).
# A two-GPU simulated machine with known UUIDs, the control double, helpers,
# and a cleanup that kills every daemon and client the test started, even
# when the test fails half way.
# shellcheck shell=sh disable=SC2034  # its variables are used by the tests that source it
export GPUPACK_MPS_CONTROL="$TOOLS/fake-mps-control"
export GPUPACK_MPS_TIMEOUT=5
CLIENT="$TOOLS/fake-mps-client"
STATE="$GPUPACK_STATE_DIR"
U0=GPU-0a0a0a0a-1111-2222-3333-444444444444
U1=GPU-1b1b1b1b-5555-6666-7777-888888888888
cat >"$T/machine.topo" <<TOPO
gpupack-topology 1
driver 580.159.04
cuda 13.0
gpu 0
uuid $U0
name NVIDIA H100 80GB HBM3
memory total=81559MiB
sms 132
compute-capability 9.0
mig current=disabled pending=disabled
gpu 1
uuid $U1
name NVIDIA H100 80GB HBM3
memory total=81559MiB
sms 132
compute-capability 9.0
mig current=disabled pending=disabled
TOPO
G="$GPUPACK --sim $T/machine.topo"
_mps_pids=""

# every daemon pid we can find: records, pid files (also those of foreign test daemons)
_mps_cleanup() {
	for f in "$T"/*/mps/*/daemon "$T"/*/mps/*/pipe/nvidia-cuda-mps-control.pid \
		"$T"/foreign/nvidia-cuda-mps-control.pid; do
		[ -f "$f" ] || continue
		p=$(sed -n 's/^pid=//p; /^[0-9][0-9]*$/p' "$f" | head -n 1)
		[ -n "$p" ] && kill -9 "$p" 2>/dev/null
	done
	for p in $_mps_pids; do kill -9 "$p" 2>/dev/null; done
	return 0
}
CLEANUP=_mps_cleanup

daemon_pid() { sed -n 's/^pid=//p' "$STATE/mps/$1/daemon" 2>/dev/null; }

count_daemons() {
	n=0
	for f in "$STATE"/mps/*/daemon; do
		[ -f "$f" ] || continue
		p=$(sed -n 's/^pid=//p' "$f")
		alive "$p" && n=$((n + 1))
	done
	echo "$n"
}

# alive PID: the process exists and is not a zombie (PID 1 here may be slow to reap)
alive() {
	s=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]
}

# gone PID: true once the process has ended (waits up to 5 s)
gone() {
	i=0
	while alive "$1"; do
		i=$((i + 1))
		[ "$i" -gt 100 ] && return 1
		sleep 0.05
	done
	return 0
}

# start_client NAME [ARGS]: a fake client of the daemon of GPU 0 (env from
# gpupack mps env), in the background; sets $NAME in upper case to its pid
# and waits until it has registered (printed its line).
start_client() {
	name=$1
	shift
	envs=$($G mps env --gpu 0)
	( eval "$envs"; exec "$CLIENT" "$@" ) >"$T/$name.out" 2>"$T/$name.err" &
	pid=$!
	_mps_pids="$_mps_pids $pid"
	eval "$(echo "$name" | tr '[:lower:]' '[:upper:]')=$pid"
	i=0
	while [ ! -s "$T/$name.out" ] && [ "$i" -lt 600 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
