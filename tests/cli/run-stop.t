#!/bin/sh
# shellcheck disable=SC2086,SC2046 # pid lists split on purpose
# run-stop.t: a task killed because the farm was told to stop is not recorded,
# and --resume runs it again (as GNU parallel): signals to gpupack, to its
# tasks or to both, in either order, once or twice, SIGHUP too. A task that
# ended on its own before the stop is recorded; a task killed from outside
# while gpupack was told nothing is recorded as killed (as parallel).
# tests/unit/test_farm_stop.c drives the rule's clock; these are the wiring
# checks, with margins far from the 2 s grace.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

PROBE="$TOOLS/farm-probe"
cd "$T" || exit 1

# start N MS: N probes of MS ms (read from ./ms by the task's shell, so that --resume runs the same
# command with shorter tasks), 4 at a time, joblog jl.$case; gpupack's pid in $gpid
start() {
	n=$1
	echo "$2" >ms
	rm -f "jl.$case" "log.$case"
	# shellcheck disable=SC2046,SC2016
	$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 4 --joblog "jl.$case" \
		"$PROBE" "log.$case" '$(cat ms)' 0 ::: $(seq "$n") >"out.$case" 2>"err.$case" &
	gpid=$!
	i=0
	while k=$(grep -c '^start' "log.$case" 2>/dev/null); [ "${k:-0}" -lt 4 ] && [ $i -lt 400 ]; do
		sleep 0.02
		i=$((i + 1))
	done
}
# the pids of the tasks running now (started, not ended)
tasks() {
	awk '$1 == "start" { p[$4] = $6 } $1 == "end" { delete p[$4] } END { for (s in p) print p[s] }' "log.$case"
}
# records SEQ: how many records the joblog has for SEQ
records() { awk -F'\t' -v s="$1" 'NR > 1 && $1 == s' "jl.$case" | wc -l; }
# every recorded task ran to its end, each input has one record: "lost twice"
audit() {
	lost=0 twice=0
	for s in $(seq "$1"); do
		r=$(records "$s")
		[ "$r" -gt 1 ] && twice=$((twice + 1))
		# a recorded success whose probe never wrote "end" did not finish: lost
		if [ "$r" -eq 0 ] || ! awk -v s="$s" '$1 == "end" && $4 == s { f = 1 } END { exit !f }' "log.$case"; then
			lost=$((lost + 1))
		fi
	done
	echo "$lost $twice"
}
resume() {
	echo 10 >ms
	# shellcheck disable=SC2046,SC2016
	$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 4 --joblog "jl.$case" --resume \
		"$PROBE" "log.$case" '$(cat ms)' 0 ::: $(seq 8) >/dev/null 2>&1
}

# ---- Slurm's way: TERM to gpupack and to every task at once (time limit, scancel) -------------
case=both
start 8 30000
killed=$(tasks)
kill -TERM $gpid $killed
wait "$gpid"
is "$?" 255 "TERM to gpupack and its tasks: exit 255"
n=0
for p in $killed; do
	s=$(awk -v p="$p" '$1 == "start" && $6 == p { print $4 }' "log.$case")
	n=$((n + $(records "$s")))
done
is "$n" 0 "none of the 4 killed tasks has a record"
like "$(cat err.$case)" "4 tasks the stop ended are not recorded: --resume runs them again" "it says so"
resume
is "$?" 0 "--resume completes"
is "$(audit 8)" "0 0" "every input ran to its end, one record each"

# ---- the tasks first, gpupack 0.3 s later (the grace is 2 s) ----------------------------------
case=tasks-first
start 8 30000
killed=$(tasks)
kill -TERM $killed
sleep 0.3
kill -TERM $gpid
wait "$gpid"
is "$?" 255 "TERM to the tasks, then to gpupack: exit 255"
is "$(awk -F'\t' 'NR > 1' "jl.$case" | wc -l)" 0 "the killed tasks are not recorded"
resume
is "$(audit 8)" "0 0" "--resume runs them: every input once, to its end"

# ---- gpupack first, its tasks 0.3 s later (it waits for them: the first signal) ----------------
case=farm-first
start 8 30000
killed=$(tasks)
kill -INT $gpid
sleep 0.3
kill -KILL $killed
wait "$gpid"
is "$?" 255 "INT to gpupack, then KILL to its tasks: exit 255"
is "$(awk -F'\t' 'NR > 1' "jl.$case" | wc -l)" 0 "the killed tasks are not recorded"
resume
is "$(audit 8)" "0 0" "--resume runs them"

# ---- twice: the second signal ends the running tasks; they are not recorded ---------------------
case=twice
start 8 30000
kill -TERM $gpid
# the second once gpupack has taken the first (it says so): two pending TERMs would be one
i=0
while ! grep -q 'no new tasks' "err.$case" && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM $gpid
wait "$gpid"
is "$?" 255 "two TERMs to gpupack: exit 255"
is "$(awk -F'\t' 'NR > 1' "jl.$case" | wc -l)" 0 "the tasks it ended are not recorded (GNU parallel neither)"
resume
is "$(audit 8)" "0 0" "--resume runs them"

# ---- SIGHUP stops the farm as TERM does ---------------------------------------------------------
case=hup
start 8 30000
killed=$(tasks)
kill -HUP $gpid $killed
wait "$gpid"
is "$?" 255 "HUP to gpupack and its tasks: exit 255"
is "$(awk -F'\t' 'NR > 1' "jl.$case" | wc -l)" 0 "the killed tasks are not recorded"
like "$(cat err.$case)" "HUP: no new tasks" "HUP: no new tasks"

# ---- a task that ended on its own before the stop is recorded -----------------------------------
case=ended
rm -f "jl.$case" "log.$case"
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 2 --joblog "jl.$case" \
	"$PROBE" "log.$case" {} 0 ::: 50 30000 >/dev/null 2>&1 &
gpid=$!
i=0
while k=$(grep -c '^end' "log.$case" 2>/dev/null); [ "${k:-0}" -lt 1 ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i + 1)); done
i=0
while k=$(awk -F'\t' 'NR > 1' "jl.$case" 2>/dev/null | wc -l); [ "$k" -lt 1 ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i + 1)); done
kill -TERM $gpid $(tasks)
wait "$gpid"
is "$(awk -F'\t' 'NR > 1 { print $1, $7, $8 }' "jl.$case")" "1 0 0" \
	"the task that had finished keeps its record; the killed one has none"

# ---- killed from outside, gpupack told nothing: the task's own end (recorded, as parallel) -----
case=outside
rm -f "jl.$case" "log.$case"
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 1 --joblog "jl.$case" \
	"$PROBE" "log.$case" 30000 0 ::: 1 >/dev/null 2>&1 &
gpid=$!
i=0
while ! grep -q '^start' "log.$case" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.02; i=$((i + 1)); done
kill -TERM $(tasks)
wait "$gpid"
is "$?" 1 "TERM to the task alone: it failed (exit 1)"
is "$(awk -F'\t' 'NR > 1 { print $1, $7, $8 }' "jl.$case")" "1 0 15" "recorded as killed by signal 15"

# ---- what a task the stop ended printed: a second signal shows it, --halt now drops it ----------
# (farm/verdict.h: unrecorded either way; GNU parallel prints the first's and not the second's)
rm -f ready jl.print
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 1 --joblog jl.print \
	--shell 'echo printed-{}; touch ready; exec sleep 30' ::: 1 >out.print 2>err.print &
gpid=$!
i=0
while [ ! -e ready ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
kill -TERM $gpid
i=0
while ! grep -q 'no new tasks' err.print && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
kill -TERM $gpid
wait "$gpid"
is "$?:$(awk -F'\t' 'NR > 1' jl.print | wc -l)" "255:0" "two TERMs: the task ended, not recorded (exit 255)"
is "$(cat out.print)" "printed-1" "what it printed is shown"
rm -f ready jl.print
# shellcheck disable=SC2016
run $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 2 --halt now,fail=1 --joblog jl.print \
	--shell 'if [ {} = 2 ]; then while [ ! -e ready ]; do sleep 0.01; done; exit 1; fi;
	echo printed-{}; touch ready; exec sleep 30' ::: 1 2
is "$rc:$(awk -F'\t' 'NR > 1 { print $1 }' jl.print)" "1:2" "--halt now,fail=1: the failure recorded, the task it ended not"
is "$out" "" "what the ended task printed is dropped"

# ---- --halt now: tasks that exit 0 at the instant of the failure are recorded (issue 42, 8) ----
# Twelve tasks wait for ./go; the last to start writes it and fails; the others exit 0 at once
# after it (TERM ignored, so that gpupack's ending them cannot race their exit). A task that
# exited 0 did its work: it is recorded done, never left for --resume (GNU parallel 20221122
# records those that ended before it saw the failure, and leaves out those that end after:
# doc/run.md's table of differences).
rm -f go ends jl.halt
# shellcheck disable=SC2016
run $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 12 --halt now,fail=1 --joblog jl.halt \
	--shell 'trap "" TERM; if [ {} = 12 ]; then while [ "$(ls ready.* 2>/dev/null | wc -l)" -lt 11 ]; do
	sleep 0.01; done; touch go; exit 1; fi; touch ready.{}; while [ ! -e go ]; do sleep 0.01; done;
	echo {} >>ends; exit 0' ::: $(seq 12)
is "$rc" 1 "--halt now,fail=1: exit 1 (the failure's status)"
is "$(awk -F'\t' 'NR > 1 && $7 == 0 { print $1 }' jl.halt | sort -n | tr '\n' ' ')" \
	"$(sort -n ends | tr '\n' ' ')" "every task that exited 0 is recorded done"
is "$(awk -F'\t' 'NR > 1 && $7 != 0 { print $1 }' jl.halt)" 12 "and the failure is recorded"
