#!/bin/sh
# shellcheck disable=SC2016,SC2013,SC2086 # the tasks' own $VARS are literal; pid and uuid lists split on purpose
# run-signals.t: a first SIGINT, SIGTERM or SIGUSR1 stops launching and lets
# running tasks finish; a second ends them (process group: children too);
# nothing outlives gpupack.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

alive() {
	st=$(ps -o stat= -p "$1" 2>/dev/null)
	[ -n "$st" ] && [ "${st#Z}" = "$st" ]
}
PROBE="$TOOLS/farm-probe"
cd "$T" || exit 1

# start_farm LOG MS [EXTRA...]: 12 probes, 2 at a time, gpupack's pid in $gpid
start_farm() {
	log=$1 ms=$2
	shift 2
	# shellcheck disable=SC2086
	$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 2 "$@" "$PROBE" "$log" "$ms" 0 \
		::: 1 2 3 4 5 6 7 8 9 10 11 12 >"$log.out" 2>"$log.err" &
	gpid=$!
	i=0
	while n=$(grep -c '^start' "$log" 2>/dev/null); [ "${n:-0}" -lt 2 ] && [ $i -lt 200 ]; do
		sleep 0.02
		i=$((i + 1))
	done
}

for sig in INT TERM USR1; do
	# (tasks of 3 s: the signal comes before either ends, however busy the machine)
	start_farm "once-$sig" 3000
	kill -"$sig" "$gpid"
	wait "$gpid"
	rc=$?
	is "$rc" 255 "one SIG$sig: exit 255 (stopped before the end)"
	is "$(grep -c '^start' "once-$sig")" 2 "SIG$sig: no new task after it"
	is "$(grep -c '^end' "once-$sig")" 2 "SIG$sig: the running tasks finished"
	like "$(cat "once-$sig.err")" "no new tasks" "SIG$sig: says so on stderr"
done

# SIGHUP (parallel's documented kill -HUP $PARALLEL_PID): no new tasks, and the exit status of
# the tasks that ran, as GNU parallel's
start_farm once-HUP 3000
kill -HUP "$gpid"
wait "$gpid"
is "$?" 0 "one SIGHUP: exit 0, the status of the tasks that ran (as GNU parallel)"
is "$(grep -c '^start' once-HUP) $(grep -c '^end' once-HUP)" "2 2" "SIGHUP: no new task after it, the running ones finished"

start_farm twice 30000
kill -TERM "$gpid"
# the second once gpupack has taken the first (it says so)
i=0
while ! grep -q 'no new tasks' twice.err && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM "$gpid"
wait "$gpid"
is "$?" 255 "two SIGTERMs: exit 255"
is "$(grep -c '^end' twice)" 0 "the running tasks were ended"
left=0
for p in $(awk '$1 == "start" { print $6 }' twice); do alive "$p" && left=$((left + 1)); done
is "$left" 0 "none of them is left"

# a second signal reaches a task's children through its process group
# shellcheck disable=SC2086
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice --shell 'sleep 300 & echo $! >child{}; wait' ::: a \
	>/dev/null 2>childa.err &
gpid=$!
i=0
while [ ! -s childa ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i + 1)); done
kill -INT "$gpid"
i=0
while ! grep -q 'no new tasks' childa.err && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
kill -INT "$gpid"
wait "$gpid"
i=0
while alive "$(cat childa)" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
alive "$(cat childa)"
ok $((! $?)) "the task's own child was ended with it"

# kill -9 of gpupack: each task's first process dies with it (PR_SET_PDEATHSIG)
start_farm nine 30000
kill -9 "$gpid"
wait "$gpid" 2>/dev/null
i=0
while [ $i -lt 100 ]; do
	left=0
	for p in $(awk '$1 == "start" { print $6 }' nine); do alive "$p" && left=$((left + 1)); done
	[ "$left" -eq 0 ] && break
	sleep 0.05
	i=$((i + 1))
done
is "$left" 0 "after kill -9 of gpupack no task is left running"
for p in $(awk '$1 == "start" { print $6 }' nine); do kill -9 "$p" 2>/dev/null; done
