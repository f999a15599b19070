# shellcheck shell=sh
# mps-task-lib.sh: what the tasks of run-mps.t and run-mps-faults.t source (copied into
# their directory as lib.sh). They wait on what the fake MPS daemon says, never on a fixed
# sleep; each wait gives up after 20 s.

# peers: $PEERS clients are registered with the daemon
peers() {
	i=0
	while [ "$(echo ps | "$GPUPACK_MPS_CONTROL" 2>/dev/null | grep -c fake-mps-client)" -lt "$PEERS" ] &&
		[ $i -lt 400 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
# looked: gpupack asked the daemon for its server since now: it knows the server the
# clients reached (a server killed before gpupack ever saw it is beyond what it can tell)
looked() {
	l=$CUDA_MPS_LOG_DIRECTORY/control.log
	n=$(grep -c 'Accepting command: get_server_list' "$l" 2>/dev/null)
	i=0
	while [ "$(grep -c 'Accepting command: get_server_list' "$l" 2>/dev/null)" -lt $((n + 1)) ] &&
		[ $i -lt 400 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
# client [MS]: a client working MS ms (1500), 100 once a fault happened ("fault" exists)
client() {
	[ -e fault ] && exec "$CLIENT" --ms 100
	exec "$CLIENT" --ms "${1:-1500}"
}
