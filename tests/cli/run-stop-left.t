#!/bin/sh
# shellcheck disable=SC2016,SC2086 # the tasks' own $! is literal; pid lists split on purpose
# run-stop-left.t: nothing a stopped run started survives it, descendants that
# left the task's process group with setsid included, with the run's token in
# their environment or without (env -i): after two SIGTERMs, a --timeout,
# --halt now, and tasks killed by the stop. A run that ends normally leaves a
# task's background children alone, as GNU parallel does.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

cd "$T" || exit 1
R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
alive() {
	st=$(ps -o stat= -p "$1" 2>/dev/null)
	[ -n "$st" ] && [ "${st#Z}" = "$st" ]
}
LEFT=""
_left_cleanup() { for p in $LEFT; do kill -9 "$p" 2>/dev/null; done; return 0; }
CLEANUP=_left_cleanup
# each task: two setsid'd grandchildren, one without any environment, then a long sleep
SPAWN='setsid sleep 300 & echo $! >gc.{}; setsid env -i sleep 301 & echo $! >gce.{}; sleep 300'
# wait_for FILES...: until each exists and is not empty
wait_for() {
	i=0
	for f in "$@"; do
		while [ ! -s "$f" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
	done
}
# left: how many of the grandchildren are alive (after up to 2 s for the kills to land)
left() {
	pids=$(cat gc.* gce.* 2>/dev/null)
	LEFT="$LEFT $pids"
	i=0
	while [ $i -lt 40 ]; do
		n=0
		for p in $pids; do alive "$p" && n=$((n + 1)); done
		[ $n -eq 0 ] && break
		sleep 0.05
		i=$((i + 1))
	done
	echo "$n"
}

# ---- two SIGTERMs ----------------------------------------------------------------------------
rm -f gc.* gce.*
# not through R(): $! must be gpupack itself
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 2 --shell "$SPAWN" ::: 1 2 >/dev/null 2>two.err &
gpid=$!
wait_for gce.1 gce.2
kill -TERM $gpid
# the second once gpupack has taken the first (it says so): two pending TERMs would be one
i=0
while ! grep -q 'no new tasks' two.err && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM $gpid
wait $gpid
is "$(left)" 0 "two SIGTERMs: no setsid'd descendant is left, with the token or without"

# ---- --timeout ----------------------------------------------------------------------------------
rm -f gc.* gce.*
R -j 2 --timeout 2 --shell "$SPAWN" ::: 1 2 >/dev/null 2>&1
is "$?" 2 "--timeout: both tasks timed out"
is "$(left)" 0 "--timeout: none of their descendants is left"

# ---- --halt now -----------------------------------------------------------------------------------
rm -f gc.* gce.*
R -j 2 --halt now,fail=1 --shell 'if [ {} = 1 ]; then '"$SPAWN"'; else while [ ! -s gce.1 ]; do sleep 0.02; done; exit 1; fi' \
	::: 1 2 >/dev/null 2>&1
is "$?" 1 "--halt now,fail=1: halted with the failure's status"
is "$(left)" 0 "--halt now: the running task's descendants are not left"

# ---- the stop kills the tasks (Slurm's TERM to every process), gpupack waits for none ------------
rm -f gc.* gce.*
# not through R(): $! must be gpupack itself
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 2 --shell "$SPAWN" ::: 1 2 >/dev/null 2>&1 &
gpid=$!
wait_for gce.1 gce.2
# the task leaders: the shells exec their last command (sleep)
kill -TERM $gpid $(pgrep -P $gpid -x sleep)
wait $gpid
is "$?" 255 "TERM to gpupack and its tasks: exit 255"
is "$(left)" 0 "the killed tasks' descendants are not left"

# ---- a normal end: background children stay, as with parallel --------------------------------------
rm -f gc.* gce.*
R -j 1 --shell 'setsid sleep 300 & echo $! >gc.{}' ::: 1 >/dev/null 2>&1
is "$?" 0 "a task that leaves a background child ends normally"
p=$(cat gc.1)
LEFT="$LEFT $p"
alive "$p"
ok $? "after a normal end its background child is left alone (parallel does the same)"
kill -9 "$p" 2>/dev/null
