#!/bin/sh
# run-nodes.t: one farm over several gpupacks (src/farm/nodes.c), here as
# processes of one machine that share a directory, as srun's tasks on the
# nodes of an allocation share a filesystem (GPUPACK_FARM_RUN names the run
# that Slurm's job and step ids name under srun; tests/slurm/farm.t runs the
# same under a real Slurm). Each input runs to its end exactly once (the
# tasks mark it, and a second run to the end fails), a slow gpupack takes
# fewer, a killed one's inputs run again elsewhere, a stopped farm resumes
# with another number of gpupacks, and the joblog has one record per input.
# shellcheck disable=SC2086
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"

export GPUPACK_SIM="$TOPO/h100-80gb-x8.topo"
TASK="$TOOLS/farm-task"
L="$T/log"
N=300
seq 1 $N >"$T/in"
PIDS=""
_nodes_cleanup() { for p in $PIDS; do kill -9 "$p" 2>/dev/null; done; return 0; }
CLEANUP=_nodes_cleanup

# member NAME PROCID [VAR=VALUE...] -- GPUPACK-RUN-ARGS...: one gpupack of the farm, in the background
member() {
	name=$1 id=$2
	shift 2
	while [ "$1" != -- ]; do export_list="${export_list:-} $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env SLURMD_NODENAME="$name" SLURM_PROCID="$id" ${export_list:-} "$GPUPACK" run "$@" \
		>"$T/out.$name" 2>"$T/err.$name" &
	LAST=$!
	PIDS="$PIDS $LAST"
	export_list=""
}
marks() { ls "$T/marks" | wc -l; }
# records SEQ-COLUMN: how many records, how many distinct inputs
records() { tail -n +2 "$L" | cut -f1 | sort -n | uniq | wc -l; }
dups() { tail -n +2 "$L" | cut -f1 | sort -n | uniq -d | wc -l; }

# ---- three gpupacks, one with one slot of three times slower tasks ----------------------
# (its capacity is a 24th of the others': a loaded machine cannot hide that)
mkdir "$T/marks"
for k in 0 1 2; do
	if [ $k = 2 ]; then sc=3 slots="--gpus 0 -j 1"; else sc=1 slots="--gpus 0,1 -j 4"; fi
	member n$k $k GPUPACK_FARM_RUN=r1 FARM_TASK_SCALE=$sc -- $slots --share timeslice \
		--joblog "$L" "$TASK" --ms 40 --mark "$T/marks" :::: "$T/in"
done
wait
is "$(cat "$T"/err.n*)" "" "three gpupacks, one farm: no error"
is "$(marks)" $N "every input ran to its end"
is "$(grep -c 'ran twice' "$T"/out.n* "$T"/err.n* | awk -F: '{s+=$2} END {print s}')" 0 "none twice"
is "$(tail -n +2 "$L" | wc -l):$(records)" "$N:$N" "the joblog has one record per input"
is "$(tail -n +2 "$L" | cut -f7,8 | sort -u | tr '\t' ' ')" "0 0" "all ended well"
tail -n +2 "$L" | cut -f1 | sort -n -c 2>/dev/null
ok $? "the merged joblog is in Seq order"
is "$(head -n 1 "$L")" "$(printf 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand')" \
	"it is a GNU parallel joblog"
SLOW=$(tail -n +2 "$L" | awk -F'\t' '$2 == "n2"' | wc -l)
FAST=$(tail -n +2 "$L" | awk -F'\t' '$2 == "n0"' | wc -l)
ok "$([ "$SLOW" -gt 0 ] && [ $((SLOW * 2)) -lt "$FAST" ] && echo 0 || echo 1)" \
	"the slow gpupack took fewer ($SLOW) than a fast one ($FAST): each takes work as it frees up"
is "$(tail -n +2 "$L" | cut -f2 | sort -u | tr '\n' ' ')" "n0 n1 n2 " "the Host column names each record's node"
ls "$L.farm/r1/log" | grep -qv gpupack
ok $? "each gpupack kept its own log in $L.farm"

# ---- the same again: no --resume, a new run of everything -------------------------------
rm -rf "$T/marks" && mkdir "$T/marks"
for k in 0 1; do
	member m$k $k GPUPACK_FARM_RUN=r2 -- --gpus 0 --share timeslice -j 4 --joblog "$L" "$TASK" --ms 10 \
		--mark "$T/marks" :::: "$T/in"
done
wait
is "$(marks):$(tail -n +2 "$L" | wc -l)" "$N:$N" "without --resume the farm runs everything again, FILE has that run only"
is "$(readlink "$L.farm/r2/parent")" "none" "and its run has no parent"

# ---- a gpupack killed midway: its inputs run elsewhere --------------------------------------
# A task that finished on it just before may have lost its record with it and
# run again: at least once, recorded once. So the tasks count their ends here.
# n2's tasks are held at their end (FARM_TASK_HOLD) until it is killed, so that it surely
# dies with inputs in flight: killed once it holds a claim and the others have done 60.
rm -rf "$T/marks" "$L" "$L.farm" && mkdir "$T/marks"
touch "$T/hold.n2"
for k in 0 1 2; do
	hold=
	[ $k -eq 2 ] && hold="FARM_TASK_HOLD=$T/hold.n2"
	member n$k $k GPUPACK_FARM_RUN=lost GPUPACK_FARM_LOST=2 $hold -- --gpus 0,1 --share timeslice -j 4 \
		--joblog "$L" "$TASK" --ms 40 --count "$T/marks" :::: "$T/in"
	eval "P$k=$LAST"
done
n2_claims() { for c in "$L.farm/lost/claim"/*; do [ "$(readlink "$c" 2>/dev/null)" = "n2.2.$P2" ] && return 0; done; return 1; }
i=0
until { [ "$(marks)" -ge 60 ] && n2_claims; } || [ $i -ge 1200 ]; do sleep 0.05; i=$((i + 1)); done
{ kill -9 "$P2"; wait "$P2"; } 2>/dev/null
rm -f "$T/hold.n2"
wait
is "$(marks)" $N "a gpupack killed with -9: every input still ran to its end"
is "$(tail -n +2 "$L" | wc -l):$(records)" "$N:$N" "one record per input"
is "$(tail -n +2 "$L" | cut -f7,8 | sort -u | tr '\t' ' ')" "0 0" "all ended well"
tail -n +2 "$L" | cut -f1 | sort -n -c 2>/dev/null
ok $? "the merged joblog is in Seq order"
like "$(cat "$T"/err.n0 "$T"/err.n1)" "warning: n2\\.2\\.$P2 was killed \\(its watchdog said so once its tasks were gone\\): its unfinished tasks run again elsewhere" \
	"the others said it was lost (its watchdog marked it as it died)"
RC=$(ls "$L.farm/lost/reclaim" | sed 's/\..*//' | sort -n)
ok "$([ -n "$RC" ] && echo 0 || echo 1)" "they took over its unfinished inputs ($(echo "$RC" | wc -l))"
TWICE=$(for f in "$T"/marks/*; do [ "$(wc -l <"$f")" -gt 1 ] && basename "$f"; done | sort -n)
is "$(printf '%s\n' "$TWICE" | grep . | grep -vxF "$RC" | wc -l)" 0 \
	"an input ran twice only if the killed one held it ($(printf '%s' "$TWICE" | grep -c .) did)"
like "$(for s in $RC; do awk -F'\t' -v s="$s" '$1 == s {print $2}' "$L"; done | sort -u | tr '\n' ' ')" "^(n0 |n1 |n0 n1 )$" \
	"their records are the survivors'"

# ---- stopped midway (a signal to each), resumed with another number of gpupacks -------------
rm -rf "$T/marks" "$L" "$L.farm" && mkdir "$T/marks"
for k in 0 1 2; do
	member n$k $k GPUPACK_FARM_RUN=first -- --gpus 0,1 --share timeslice -j 4 --joblog "$L" "$TASK" \
		--ms 40 --mark "$T/marks" :::: "$T/in"
	eval "P$k=$LAST"
done
i=0
while [ "$(marks)" -lt 100 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM "$P0" "$P1" "$P2"
wait
M1=$(marks)
ok "$([ "$M1" -lt $N ] && [ "$M1" -ge 100 ] && echo 0 || echo 1)" "stopped midway ($M1 of $N done)"
ok "$([ ! -s "$L" ] && echo 0 || echo 1)" "a farm that did not end writes nothing in FILE (its records are in $L.farm)"
for k in 0 1; do
	member r$k $k GPUPACK_FARM_RUN=second -- --resume --gpus 0 --share timeslice -j 3 --joblog "$L" "$TASK" \
		--ms 40 --mark "$T/marks" :::: "$T/in"
done
wait
is "$(cat "$T"/err.r*)" "" "resumed with two gpupacks: no error"
is "$(marks)" $N "every input ran to its end"
is "$(grep -c 'ran twice' "$T"/out.r* | awk -F: '{s+=$2} END {print s}')" 0 "none twice: --resume ran only what no gpupack finished"
is "$(tail -n +2 "$L" | wc -l):$(records):$(dups)" "$N:$N:0" "FILE: one record per input, across both runs"
is "$(tail -n +2 "$L" | awk -F'\t' '$2 ~ /^r/' | wc -l)" "$((N - M1))" "the resumed run recorded exactly the rest"
is "$(readlink "$L.farm/second/parent")" "first" "the second run resumes the first"

# ---- a member that comes late: the same run (Slurm's job and step) after the others ended ----
# srun's tasks need not all reach gpupack together (a slow node, a container pulled late): one
# can come when the others have ended the farm, or died. It joins the run: it runs what is left,
# or ends at once with the farm's status. A new run that reuses the name is still refused.
LATE="GPUPACK_FARM_RUN=late SLURM_JOB_ID=77 SLURM_STEP_ID=0"
late() { member "$@" -- --gpus 0 --share timeslice -j 2 --joblog "$L" "$TASK" --ms 1 --mark "$T/marks" :::: "$T/in"; }
rm -rf "$T/marks" "$L" "$L.farm" && mkdir "$T/marks"
late e0 0 $LATE
wait "$LAST"
is "$?:$(marks)" "0:$N" "a farm of job 77's step 0 ran everything"
late e1 1 $LATE
wait "$LAST"
is "$?:$(cat "$T/err.e1")" "0:" "a member of that step that comes after the farm's end: exit 0 (the farm's), no error"
is "$(marks):$(tail -n +2 "$L" | wc -l):$(records)" "$N:$N:$N" "it ran nothing again; the joblog has one record per input"
for other in "SLURM_JOB_ID=77 SLURM_STEP_ID=1" "SLURM_JOB_ID=78 SLURM_STEP_ID=0" ""; do
	run env GPUPACK_FARM_RUN=late $other SLURMD_NODENAME=e2 "$GPUPACK" run --gpus 0 --share timeslice \
		--joblog "$L" "$TASK" --ms 1 --mark "$T/marks" :::: "$T/in"
	is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "the name again from ${other:-outside Slurm}: another run, refused, one line"
done
like "$err" "GPUPACK_FARM_RUN=late: a run of that name already ran on joblog" "it says why"
# the others died (kill -9, their beats old): the late one takes over what they held
rm -rf "$T/marks" "$L" "$L.farm" && mkdir "$T/marks"
touch "$T/hold.e0"
late e0 0 $LATE FARM_TASK_HOLD="$T/hold.e0"
E0=$LAST
i=0
while [ -z "$(ls "$L.farm/late/claim" 2>/dev/null)" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
{ kill -9 "$E0"; wait "$E0"; } 2>/dev/null
rm -f "$T/hold.e0"
touch -h -d @1000000000 "$L.farm/late/alive/e0.0.$E0"
late e1 1 $LATE
wait "$LAST"
is "$?:$(marks)" "0:$N" "a late member of a run whose members died: it runs what they left (exit 0)"
is "$(tail -n +2 "$L" | wc -l):$(records):$(tail -n +2 "$L" | cut -f2 | sort -u)" "$N:$N:e1" \
	"the joblog has one record per input, all the late member's"

# ---- --resume-failed over a chain of three runs: the newest run's record of an input decides --
# Input 2 fails in the first run and ends well in the second; the third skips it, although the
# first run, read after the second, still holds its failed record.
rm -rf "$T/ran" "$T/fixed" "$L" "$L.farm"
FCMD='echo {} >>'"$T"'/ran; [ {} != 2 ] || [ -e '"$T"'/fixed ]'
again='' RCS=''
for r in f1 f2 f3; do
	run env GPUPACK_FARM_RUN=$r SLURMD_NODENAME=f0 "$GPUPACK" run $again --gpus 0 --share timeslice \
		--shell --joblog "$L" "$FCMD" ::: 1 2 3
	RCS="$RCS$rc "
	again=--resume-failed
	touch "$T/fixed"
done
is "$RCS" "1 0 0 " "input 2 failed, then ended well: exit 1, then 0, 0"
is "$(readlink "$L.farm/f3/parent"):$(readlink "$L.farm/f2/parent")" "f2:f1" "each run resumes the one before"
is "$(sort -n "$T/ran" | tr '\n' ' ')" "1 2 2 3 " "the third run ran nothing: the second's record of input 2, ended well, decides"

# reaped PID: until the process is gone, not even a zombie (its parent has seen it end); 10 s at most
reaped() {
	i=0
	while [ -e "/proc/$1" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
}

# ---- a task killed by a signal: scancel's (not recorded), or its own (recorded) ---------------
# scancel signals every process of the step, the tasks maybe before gpupack: a task killed
# by SIGTERM waits a moment for gpupack's own signal before it counts as failed
rm -rf "$L" "$L.farm"
member h0 0 GPUPACK_FARM_RUN=own -- --gpus 0 --share timeslice --shell --joblog "$L" \
	'sleep 0.2; kill -TERM $$' ::: 1
wait "$LAST"
is "$(tail -n +2 "$L" | cut -f1,7,8 | tr '\t' ' ')" "1 0 15" "a task that killed itself with SIGTERM is recorded (signal 15, as parallel writes it)"
rm -rf "$L" "$L.farm"
member h1 0 GPUPACK_FARM_RUN=stopped -- --gpus 0 --share timeslice -j 2 --shell --joblog "$L" \
	'echo $$ >'"$T"'/task{}; exec sleep 30' ::: 1 2
H=$LAST
i=0
while { [ ! -s "$T/task1" ] || [ ! -s "$T/task2" ]; } && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM "$(cat "$T/task1")" "$(cat "$T/task2")"
# gpupack has seen them die (reaped them): it holds their end for NODES_HOLD, 2 s; signal it now
reaped "$(cat "$T/task1")"
reaped "$(cat "$T/task2")"
kill -TERM "$H"
wait "$H"
is "$?" 255 "tasks killed, then gpupack: a stopped farm (exit 255)"
is "$(cat "$L.farm/stopped/log/"h1.* 2>/dev/null | grep -v '^gpupack-run' | tail -n +2 | wc -l)" 0 \
	"the tasks the stop killed are not recorded (--resume runs them)"

# ---- one that the others declared lost stops ---------------------------------------------------
rm -rf "$T/marks" "$L" "$L.farm" && mkdir "$T/marks"
member z0 0 GPUPACK_FARM_RUN=fence -- --gpus 0 --share timeslice -j 2 --joblog "$L" "$TASK" --ms 100 \
	--mark "$T/marks" :::: "$T/in"
Z=$LAST
i=0
while [ ! -d "$L.farm/fence/lost" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.3
ln -s someone "$L.farm/fence/lost/z0.0.$Z"
wait "$Z"
is "$?" 255 "a gpupack declared lost stops (exit 255)"
like "$(cat "$T/err.z0")" "declared this one lost" "and says why"

# ---- refused ----------------------------------------------------------------------------------
for name in none current identity; do
	run env GPUPACK_FARM_RUN=$name "$GPUPACK" run --gpus 0 --joblog "$T/rsv" true ::: 1
	is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "GPUPACK_FARM_RUN=$name, a name the farm's directory uses itself: refused"
done
like "$err" "GPUPACK_FARM_RUN=identity: a reserved name" "it says why"
ok "$([ ! -e "$T/rsv.farm" ] && [ ! -e "$T/rsv" ] && echo 0 || echo 1)" "and creates nothing"
run env GPUPACK_FARM_RUN='az.AZ-09_x y/z' SLURMD_NODENAME='nd.q-7_r s' "$GPUPACK" run --gpus 0 --joblog "$T/nm" true ::: 1
is "$rc:$(ls "$T/nm.farm" | grep -v -e identity -e current)" "0:az.AZ-09_x_y_z" \
	"a run's directory keeps letters, digits, '.', '-', '_' (anything else becomes _)"
ls "$T/nm.farm/az.AZ-09_x_y_z/log" | grep -q '^nd.q-7_r_s'
ok $? "so does a node's name in its log"
run env SLURM_STEP_NUM_TASKS=3 SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_JOB_ID=9 "$GPUPACK" run --gpus 0 true ::: 1
is "$rc" 255 "under srun with 3 tasks, no --joblog: refused"
one_line "$err" "no --joblog: one line"
like "$err" "give --joblog FILE on a filesystem they all share.*or --shard slurm" "it says what to do"
run env SLURM_STEP_NUM_TASKS=3 SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_JOB_ID=9 "$GPUPACK" run --gpus 0 \
	--joblog "$T/x" true <"$T/in"
is "$rc" 255 "inputs on stdin: refused"
like "$err" "not on stdin" "it says why"
for opt in --shuf -X "--joblog -" --retry-failed; do
	run env GPUPACK_FARM_RUN=opt "$GPUPACK" run --gpus 0 --joblog "$T/o" $opt echo ::: 1 2
	is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "$opt in a farm over nodes: refused with one line"
done
like "$err" "--retry-failed: a farm over nodes reruns failed inputs with --resume-failed" "it says what to use"
run env GPUPACK_FARM_RUN=again "$GPUPACK" run --resume --gpus 0 --joblog "$L" echo other ::: 1
is "$rc" 255 "--resume of a farm with another command: refused"
like "$err" "written for another command" "it says why"
run env SLURM_STEP_NUM_TASKS=3 SLURM_NTASKS=3 SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_JOB_ID=9 "$GPUPACK" run --gpus 0 \
	--shard slurm --joblog "$T/s{shard}" true ::: 1 2 3
is "$rc:$(tail -n +2 "$T/s0" | wc -l)" "0:1" "--shard still splits statically (and keeps its own joblog)"

# ---- a task that dies of the signal that is stopping its gpupack (scancel signals both) --------
# is not a failure: its end waits to see the gpupack stop, and the input stays for --resume
rm -f "$T/tpid"
printf '#!/bin/sh\n[ -e "%s.again" ] && { echo again >>"%s.again"; exit 0; }\necho $$ >"%s"\nexec sleep 30\n' \
	"$T/tpid" "$T/tpid" "$T/tpid" >"$T/sigtask"
chmod +x "$T/sigtask"
member s0 0 GPUPACK_FARM_RUN=sig -- --gpus 0 --share timeslice -j 1 --joblog "$T/sig" "$T/sigtask" ::: 1
S=$LAST
i=0
while [ ! -s "$T/tpid" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM "$(cat "$T/tpid")"
reaped "$(cat "$T/tpid")"
kill -TERM "$S"
wait "$S"
touch "$T/tpid.again"
run env GPUPACK_FARM_RUN=sig2 SLURMD_NODENAME=s0 "$GPUPACK" run --resume --gpus 0 --share timeslice -j 1 \
	--joblog "$T/sig" "$T/sigtask" ::: 1
is "$rc:$(grep -c again "$T/tpid.again")" "0:1" \
	"a task killed by the signal that stops the farm is not recorded: --resume runs it"
