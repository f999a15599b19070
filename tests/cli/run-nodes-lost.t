#!/bin/sh
# run-nodes-lost.t: a farm over nodes (src/farm/nodes.c) that loses several
# gpupacks, one after another: the second declared lost while a survivor's
# pass is taking over the first's inputs, a survivor lost in the middle of
# its takeover, and two lost together. Each input runs to its end once where
# no lost gpupack had finished it, never again where one had, and the joblog
# holds one record per input. Every gpupack of the farm exits with the
# farm's status (srun exits with the worst of its tasks'), the one declared
# lost too: it waits for the others to end the farm.
#
# Time is the test's, not the clock's: the tasks end when the test opens
# their gates (tests/tools/farm-task.c --hold, FARM_TASK_HOLD), and a
# gpupack killed with -9 is made silent for long by setting its heartbeat's
# mtime far back (the others compare mtimes, never a clock): it is declared
# lost at the survivors' next look, with the default GPUPACK_FARM_LOST of 60 s.
# shellcheck disable=SC2086
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"

export GPUPACK_SIM="$TOPO/h100-80gb-x8.topo"
TASK="$TOOLS/farm-task"
L="$T/log"
PIDS=""
_lost_cleanup() { for p in $PIDS; do kill -9 "$p" 2>/dev/null; done; return 0; }
CLEANUP=_lost_cleanup

# member NAME PROCID RUN [VAR=VALUE...]: one gpupack of the farm, 2 slots, in the background
# (RUN empty: the run is named by SLURM_JOB_ID and SLURM_STEP_ID, as under srun)
member() {
	name=$1 id=$2 run=$3
	shift 3
	env SLURMD_NODENAME="$name" SLURM_PROCID="$id" ${run:+GPUPACK_FARM_RUN=$run} "$@" "$GPUPACK" run \
		--gpus 0 --share timeslice -j 2 --joblog "$L" \
		"$TASK" --ms 1 --count "$T/count" --hold "$T/hold" ${TASK_ARGS:-} :::: "$T/in" \
		>"$T/out.$name" 2>"$T/err.$name" &
	LAST=$!
	PIDS="$PIDS $LAST"
}
# until CMD...: wait for a state of the farm (60 s at most; the test fails after)
until_() {
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -lt 1200 ] || { ok 1 "waited 60 s for: $*"; ls -l --time-style=full-iso "$(R)"/lost "$(R)"/alive >&2; cat "$T"/err.* >&2; return 1; }
		sleep 0.05
	done
}
R() { echo "$L.farm/$RUN"; }
# records OWNER: the inputs OWNER's log holds
records() { awk -F'\t' '$1 ~ /^[0-9]+$/ {print $1}' "$(R)/log/$1" 2>/dev/null | sort -n; }
all_records() { cat "$(R)"/log/* 2>/dev/null | awk -F'\t' '$1 ~ /^[0-9]+$/' | wc -l; }
claims() { ls "$(R)/claim" 2>/dev/null | wc -l; }
claims_of() { for c in "$(R)"/claim/*; do [ "$(readlink "$c")" = "$1" ] && basename "$c"; done | sort -n; }
# in flight: claimed, not recorded (every slot busy: the farm stands still)
busy() { [ $(($(claims) - $(all_records))) -eq "$1" ]; }
# lost OWNER: kill it, then make its heartbeat old
lose() {
	kill -9 "$2" 2>/dev/null
	wait "$2" 2>/dev/null
	touch -h -d @1000000000 "$(R)/alive/$1"
}
# killed OWNER PID: kill it and leave its heartbeat alone: its watchdog marks it lost as it dies
# (backdating the heartbeat too would race the watchdog: a look first says "went silent")
killed() {
	kill -9 "$2" 2>/dev/null
	wait "$2" 2>/dev/null
}
declared() { [ -L "$(R)/lost/$1" ]; }
# ran N: the inputs that ran to their end N or more times
ran() { for f in "$T"/count/*; do [ "$(wc -l <"$f")" -ge "$1" ] && basename "$f"; done | sort -n; }
fresh() {
	RUN=$1
	rm -rf "$T/count" "$T/hold" "$L" "$L.farm" "$T"/node.*
	mkdir "$T/count" "$T/hold"
}

# hold_past K: every input past K waits at its end, so that the one gpupack left free cannot
# finish the farm before the test holds it too (a race on a busy machine); release_past K
hold_past() { for s in $(seq $(($1 + 1)) "$N"); do touch "$T/hold/$s"; done; }
release_past() { for s in $(seq $(($1 + 1)) "$N"); do rm -f "$T/hold/$s"; done; }

# ---- B declared lost while S's pass takes over A's inputs ---------------------------------
N=40
seq 1 $N >"$T/in"
fresh second
touch "$T/node.S" "$T/node.A"
hold_past 12
member S 0 second FARM_TASK_HOLD="$T/node.S"; S=$LAST
member A 1 second FARM_TASK_HOLD="$T/node.A"; A=$LAST
member B 2 second FARM_TASK_HOLD="$T/node.B"; B=$LAST
OS=S.0.$S OA=A.1.$A OB=B.2.$B
# B alone ends tasks, up to input 12 (past it, each waits); then it holds too, every slot busy
until_ busy 6
touch "$T/node.B"
release_past 12
until_ busy 6
AC=$(claims_of "$OA")
is "$(echo $AC | wc -w)" 2 "A holds two inputs in flight ($(echo $AC))"
for s in $AC; do touch "$T/hold/$s"; done   # their reruns will wait: S's pass stands at them
lose "$OA" "$A"
until_ declared "$OA"
rm "$T/node.S"                               # S ends its tasks, the rest, then takes over A's
until_ sh -c "for s in $(echo $AC); do [ -L '$L.farm/second/reclaim/'\$s.1 ] || exit 1; done"
is "$(for s in $AC; do readlink "$(R)/reclaim/$s.1"; done | sort -u)" "$OS" "S's pass took over A's inputs"
BR=$(records "$OB")
BC=$(claims_of "$OB")
LATER=$(for s in $BR; do [ "$s" -gt "$(echo $AC | tr ' ' '\n' | tail -n 1)" ] && echo "$s"; done | wc -l)
diag "B finished $(echo $BR | wc -w) inputs, $LATER of them beyond where S's pass stands"
killed "$OB" "$B"
until_ declared "$OB"                        # B is lost in the middle of S's pass
for s in $AC; do rm "$T/hold/$s"; done
wait "$S"
is "$?" 0 "S finishes the farm (exit 0)"
is "$(ls "$T/count" | wc -l)" $N "every input ran to its end"
TWICE=$(ran 2)
is "$(for s in $TWICE; do echo "$BR" | grep -qx "$s" && echo "$s"; done | tr '\n' ' ')" "" \
	"none that B had finished ran again"
BOPEN=$(for s in $BC; do echo "$BR" | grep -qx "$s" || echo "$s"; done)
is "$(echo $TWICE)" "" "none ran twice (A's and B's were held before their end)"
for s in $BOPEN $AC; do [ -e "$T/count/$s" ] || echo "$s"; done >"$T/missing"
is "$(cat "$T/missing" | tr '\n' ' ')" "" "B's and A's unfinished inputs ran elsewhere"
is "$(tail -n +2 "$L" | wc -l):$(tail -n +2 "$L" | cut -f1 | sort -un | wc -l)" "$N:$N" "the joblog has one record per input"
like "$(cat "$T/err.S")" "warning: $OB was killed \(its watchdog said so once its tasks were gone\): its unfinished tasks run again elsewhere" \
	"S said B was lost (B's watchdog marked it as it died)"

# ---- a survivor lost in the middle of its takeover -------------------------------------------
fresh takeover
touch "$T/node.A" "$T/node.U"
hold_past 12
member S 0 takeover FARM_TASK_HOLD="$T/node.S"; S=$LAST
member U 1 takeover FARM_TASK_HOLD="$T/node.U"; U=$LAST
member A 2 takeover FARM_TASK_HOLD="$T/node.A"; A=$LAST
OS=S.0.$S OU=U.1.$U OA=A.2.$A
until_ busy 6
touch "$T/node.S"
release_past 12
until_ busy 6
AC=$(claims_of "$OA")
for s in $AC; do touch "$T/hold/$s"; done
lose "$OA" "$A"
until_ declared "$OA"
rm "$T/node.U"                               # U ends its tasks and the rest, takes A's over
until_ sh -c "for s in $(echo $AC); do [ -L '$L.farm/takeover/reclaim/'\$s.1 ] || exit 1; done"
UTOOK=$(for s in $AC; do readlink "$(R)/reclaim/$s.1"; done | sort -u)
is "$UTOOK" "$OU" "U took A's inputs over"
UR=$(records "$OU")
lose "$OU" "$U"                              # and is lost with them in flight
until_ declared "$OU"
rm "$T/node.S"
for s in $AC; do rm "$T/hold/$s"; done
wait "$S"
is "$?" 0 "S finishes the farm (exit 0)"
is "$(ls "$T/count" | wc -l)" $N "every input ran to its end"
is "$(echo $(ran 2))" "" "none twice: U's finished inputs stayed done, A's ran once, on S"
is "$(for s in $AC; do readlink "$(R)/reclaim/$s.2"; done | sort -u)" "$OS" "S holds A's inputs' third attempt"
is "$(tail -n +2 "$L" | wc -l):$(tail -n +2 "$L" | cut -f1 | sort -un | wc -l)" "$N:$N" "the joblog has one record per input"
is "$(for s in $AC; do awk -F'\t' -v s="$s" '$1 == s {print $2}' "$L"; done | sort -u)" "S" "their records are S's"
is "$(for s in $UR; do awk -F'\t' -v s="$s" '$1 == s {print $2}' "$L"; done | sort -u)" "U" "U's finished inputs keep U's records"

# ---- two lost together ------------------------------------------------------------------------
fresh together
touch "$T/node.S" "$T/node.A"
hold_past 12
member S 0 together FARM_TASK_HOLD="$T/node.S"; S=$LAST
member A 1 together FARM_TASK_HOLD="$T/node.A"; A=$LAST
member B 2 together FARM_TASK_HOLD="$T/node.B"; B=$LAST
OS=S.0.$S OA=A.1.$A OB=B.2.$B
until_ busy 6
touch "$T/node.B"
release_past 12
until_ busy 6
BR=$(records "$OB")
kill -9 "$A" "$B"
wait "$A" "$B" 2>/dev/null
touch -h -d @1000000000 "$(R)/alive/$OA" "$(R)/alive/$OB"
until_ sh -c "[ -L '$(R)/lost/$OA' ] && [ -L '$(R)/lost/$OB' ]"
rm "$T/node.S"
wait "$S"
is "$?" 0 "two lost at once: S finishes the farm (exit 0)"
is "$(ls "$T/count" | wc -l):$(echo $(ran 2))" "$N:" "every input ran to its end, none twice"
is "$(tail -n +2 "$L" | wc -l):$(tail -n +2 "$L" | cut -f1 | sort -un | wc -l)" "$N:$N" "the joblog has one record per input"

# ---- one declared lost that was only stopped: it records nothing more, waits, exits as the farm -
fresh stopped
touch "$T/node.S" "$T/node.Z"
member S 0 stopped FARM_TASK_HOLD="$T/node.S"; S=$LAST
member Z 1 stopped FARM_TASK_HOLD="$T/node.Z"; Z=$LAST
OS=S.0.$S OZ=Z.1.$Z
until_ busy 4
ZC=$(claims_of "$OZ")
kill -STOP "$Z"
touch -h -d @1000000000 "$(R)/alive/$OZ"
until_ declared "$OZ"
ZR=$(records "$OZ")
rm "$T/node.Z"                               # its tasks end while it cannot see them
until_ sh -c "for s in $(echo $ZC); do [ -e '$T/count/'\$s ] || exit 1; done"
kill -CONT "$Z"
until_ grep -q "declared this one lost" "$T/err.Z"
one_line "$(cat "$T/err.Z")" "it says once that it was declared lost"
like "$(cat "$T/err.Z")" "stopping its tasks \(the others run them\) and waiting for the farm's end" "and what it does"
is "$(echo $(records "$OZ"))" "$(echo $ZR)" \
	"its tasks that ended after it was declared lost are not recorded (the others run them)"
kill -0 "$Z" 2>/dev/null
ok $? "it waits while the farm goes on"
rm "$T/node.S"
wait "$S"
is "$?" 0 "S finishes the farm (exit 0)"
wait "$Z"
is "$?" 0 "the one declared lost exits 0 too: the farm's status, so srun's is 0"
is "$(ls "$T/count" | wc -l):$(echo $(ran 2))" "$N:$(echo $ZC)" \
	"every input ran; twice only those in flight on it when it was declared lost"
is "$(tail -n +2 "$L" | wc -l):$(tail -n +2 "$L" | cut -f1 | sort -un | wc -l)" "$N:$N" "the joblog has one record per input"

# ---- a requeued job: the members of its earlier run are lost at once -------------------------
# Slurm requeues a job (scontrol requeue, a node failure, preemption): it ends the job's
# gpupacks and starts its script again, with the same job id and SLURM_RESTART_COUNT one more,
# and its srun step is the same run. The members of the earlier run are dead however fresh
# their last beat: they are declared lost at once, not after GPUPACK_FARM_LOST (an hour here),
# and their unfinished inputs run again, their finished ones not.
fresh 88.0
STEP="SLURM_JOB_ID=88 SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=2 GPUPACK_FARM_LOST=3600"
hold_past 12
member S 0 "" $STEP; S=$LAST
member A 1 "" $STEP; A=$LAST
OS=S.0.$S OA=A.1.$A
recorded() { [ "$(all_records)" -eq "$1" ]; }
until_ recorded 12                           # 1-12 ended and were recorded; past 12, each waits
# Slurm ends every process of the step, the watchdogs (and tasks) with their gpupacks: they first,
# so that no watchdog lives to mark its gpupack lost (the requeued run must know it by itself)
KIDS=$(ps -o pid= --ppid "$S" --ppid "$A")
kill -9 $KIDS "$S" "$A"
wait "$S" "$A" 2>/dev/null
release_past 12
member S 0 "" $STEP SLURM_RESTART_COUNT=1; S1=$LAST
member U 1 "" $STEP SLURM_RESTART_COUNT=1; U1=$LAST
# (before requeued runs knew the earlier one dead, this waited for GPUPACK_FARM_LOST: an hour)
until_ sh -c "[ -L '$(R)/lost/$OS' ] && [ -L '$(R)/lost/$OA' ]" || kill -9 "$S1" "$U1"
wait "$S1"; RS=$?
wait "$U1"; RU=$?
is "$RS:$RU" "0:0" "the requeued run finishes the farm (both exit 0)"
is "$(ls "$(R)/lost" | sort | tr '\n' ' ')" "$(printf '%s\n' "$OA" "$OS" | sort | tr '\n' ' ')" \
	"the earlier run's members were declared lost, none of the requeued run's"
is "$(ls "$T/count" | wc -l):$(echo $(ran 2))" "$N:" "every input ran to its end, none twice: the 12 that ended did not run again"
is "$(tail -n +2 "$L" | wc -l):$(tail -n +2 "$L" | cut -f1 | sort -un | wc -l)" "$N:$N" "the joblog has one record per input"
like "$(cat "$T/err.S" "$T/err.U")" "warning: $OS was a member of this job's run before it was requeued \(this is restart 1\): what it left unfinished runs again" \
	"they say why"

# ---- killed on a node still up: its watchdog marks it lost at once --------------------------------
# (GPUPACK_FARM_LOST is an hour: only the mark can make it lost within this test)
fresh killed
touch "$T/node.S" "$T/node.K"
member S 0 killed GPUPACK_FARM_LOST=3600 FARM_TASK_HOLD="$T/node.S"; S=$LAST
member K 1 killed GPUPACK_FARM_LOST=3600 FARM_TASK_HOLD="$T/node.K"; K=$LAST
OS=S.0.$S OK=K.1.$K
until_ busy 4
KC=$(claims_of "$OK")
TASKS=$(ps -o pid=,comm= --ppid "$K" | awk '$2 != "gpupack-guard" {print $1}')
is "$(echo $TASKS | wc -w)" 2 "K runs two tasks"
kill -9 "$K"
wait "$K" 2>/dev/null
until_ declared "$OK"
is "$(readlink "$(R)/lost/$OK")" "$OK" "K's lost mark names K itself: its watchdog wrote it"
# (a zombie is ended: whoever inherited it has not reaped it yet)
is "$(for p in $TASKS; do ps -o stat= -p "$p" | grep -v '^Z'; done)" "" "after it ended K's tasks"
rm "$T/node.S" "$T/node.K"
wait "$S"
is "$?" 0 "S finishes the farm (exit 0)"
is "$(ls "$T/count" | wc -l):$(echo $(ran 2))" "$N:" "every input ran to its end, none twice (K's were ended before theirs)"
is "$(tail -n +2 "$L" | wc -l):$(tail -n +2 "$L" | cut -f1 | sort -un | wc -l)" "$N:$N" "the joblog has one record per input"
like "$(cat "$T/err.S")" "warning: $OK was killed \(its watchdog said so once its tasks were gone\): its unfinished tasks run again elsewhere" \
	"S says why"

# ---- Slurm says the node is lost: taken over in seconds, not after GPUPACK_FARM_LOST ----------------
# A fake scontrol (tests/tools/fake-scontrol.sh): what it answers is the test's. Z is stopped (SIGSTOP:
# its watchdog sees nothing, as when the node hangs or its network is gone) and its beat set 10 s
# back: late by more than GPUPACK_FARM_ASK (5 s), far from GPUPACK_FARM_LOST (an hour).
mkdir -p "$T/bin" "$T/nobin"
cp "$GPUPACK_SRC/tests/tools/fake-scontrol.sh" "$T/bin/scontrol"
chmod +x "$T/bin/scontrol"
ln -sf /bin/sh "$T/nobin/sh"
# asked_about MODE [VAR=VALUE...]: Z stopped, late 10 s; S asks (FAKE_SCONTROL=MODE)
asked_about() {
	mode=$1
	shift
	fresh "ask-$mode"
	rm -f "$T/asked"
	touch "$T/node.S" "$T/node.Z"
	member S 0 "ask-$mode" SLURM_JOB_ID=77 FAKE_SCONTROL="$mode" FAKE_SCONTROL_LOG="$T/asked" "$@" \
		FARM_TASK_HOLD="$T/node.S"; S=$LAST
	member Z 1 "ask-$mode" SLURM_JOB_ID=77 FAKE_SCONTROL="$mode" "$@" FARM_TASK_HOLD="$T/node.Z"; Z=$LAST
	OS=S.0.$S OZ=Z.1.$Z
	until_ busy 4
	ZC=$(claims_of "$OZ")
	kill -STOP "$Z"
	touch -h -d @$(($(date +%s) - 10)) "$(R)/alive/$OZ"
}
# finish: Z goes on, sees it was declared lost, the farm ends on S
finish() {
	rm -f "$T/node.S" "$T/node.Z"
	kill -CONT "$Z"
	wait "$S"
	is "$?" 0 "$1: S finishes the farm (exit 0)"
	wait "$Z"
	is "$?" 0 "$1: Z exits with the farm's status"
	is "$(ls "$T/count" | wc -l):$(tail -n +2 "$L" | cut -f1 | sort -un | wc -l)" "$N:$N" \
		"$1: every input ran to its end, one record each"
}
for mode in down gone; do
	asked_about $mode PATH="$T/bin:$PATH" GPUPACK_FARM_LOST=3600
	until_ declared "$OZ"
	case $mode in
	down) why="State=DOWN" ;;
	gone) why="the job's NodeList without it" ;;
	esac
	like "$(cat "$T/err.S")" "warning: $OZ: Slurm says its node Z is lost \(its beat [0-9]+ s late\): its unfinished tasks run again elsewhere" \
		"$why: S declares Z lost at once (GPUPACK_FARM_LOST is an hour)"
	like "$(cat "$T/asked")" "show node -o Z" "S asked scontrol about Z's node"
	finish "$why"
done
# scontrol failing, or missing: no answer, no loss; the GPUPACK_FARM_LOST rule (20 s here) stays
for mode in fail missing; do
	if [ $mode = fail ]; then
		asked_about fail PATH="$T/bin:$PATH" GPUPACK_FARM_LOST=20
		until_ sh -c "[ \$(grep -c 'show node' '$T/asked' 2>/dev/null) -ge 2 ]"
		diag "scontrol failing: S asked $(grep -c 'show node -o Z' "$T/asked") times, no loss"
	else
		asked_about missing PATH="$T/nobin" GPUPACK_FARM_LOST=20
		sleep 2
	fi
	declared "$OZ"
	ok "$([ $? -ne 0 ] && echo 0 || echo 1)" "scontrol $mode: Z, 10 s late, is not declared lost"
	touch -h -d @$(($(date +%s) - 100)) "$(R)/alive/$OZ"
	until_ declared "$OZ"
	like "$(cat "$T/err.S")" "warning: $OZ went silent for [0-9]+ s: its unfinished tasks run again elsewhere" \
		"scontrol $mode: Z is lost by GPUPACK_FARM_LOST's rule"
	finish "scontrol $mode"
done

# ---- the farm's status, on every node ---------------------------------------------------------
fresh status
TASK_ARGS="--fail 7"
member S 0 status; S=$LAST
member U 1 status; U=$LAST
wait "$S"; RS=$?
wait "$U"; RU=$?
TASK_ARGS=""
is "$RS:$RU" "1:1" "one input failed on one of two nodes: both exit 1 (the farm's status, GNU parallel's count)"
is "$(awk -F'\t' '$1 == 7 {print $7}' "$L")" 1 "the joblog says which"
