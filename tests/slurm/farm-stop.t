#!/bin/bash
# farm-stop.t: a farm over nodes (`srun gpupack run --joblog FILE`) that Slurm
# or a node stops, under a real Slurm (tests/slurm/lib.sh). A job that hits
# its time limit mid-farm, resubmitted with --resume: every input ends
# exactly once. Meanwhile, on the other two nodes: a gpupack declared lost
# (stopped, its heartbeat made old) comes back, stops its tasks, waits, and
# exits with the farm's status, so srun exits 0 and the job is COMPLETED; a
# gpupack killed outright makes srun exit 137, and the fallback doc/slurm.md
# gives (`|| gpupack run --resume-failed ...`) makes the job COMPLETED.
#
# Slurm's time limits are whole minutes, checked every 30 s or so: once the
# first job's farm is under way its limit is lowered to 0 (scontrol update),
# and the farm is long enough (1,600 tasks of 1 s on 32 slots: at least 50 s)
# that Slurm's next check always falls in its middle.
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
. "$GPUPACK_SRC/tests/slurm/lib.sh"

slurm_up || { ok 1 "the cluster comes up"; exit 1; }
ok 0 "a four-node Slurm comes up"
O="$SL_DIR/jobs/stop"
mkdir -m 1777 "$O"
TASK="$TOOLS/farm-task"
submit() { as_user sbatch --parsable -o "$O/job-%j.out" -e "$O/job-%j.out" "$@"; }
state_of() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
# farm_job NAME NODE-ENV POST GPUPACK-ARGS...: a job script, one gpupack per node; POST after srun
farm_job() {
	local name=$1 nodeenv=$2 post=$3
	shift 3
	job_script "$name.sh" <<EOF
#!/bin/sh
export GPUPACK_SIM=$SL_TOPO
srun --ntasks-per-node=1 sh -c '
	export GPUPACK_STATE_DIR=$O/state-$name.\$SLURMD_NODENAME
	$nodeenv
	exec $GPUPACK run --share timeslice $*'
rc=\$?
echo srun-rc=\$rc
$post
EOF
}
records() { tail -n +2 "$1" | wc -l; }
distinct() { tail -n +2 "$1" | cut -f1 | sort -un | wc -l; }

# ---- the time limit, mid-farm (n1, n2) ------------------------------------------------------
N=1600
seq 1 $N >"$O/tl.in"
mkdir -m 1777 "$O/tl.marks"
chmod 644 "$O/tl.in"
S=$(farm_job tl "" "" -j 2 --joblog $O/tl.log $TASK --ms 1000 --mark $O/tl.marks :::: $O/tl.in)
TL=$(submit -w n1,n2 -N2 --ntasks-per-node=1 --gres=gpu:8 --time=10 "$S")
wait_until 120 sh -c "[ \$(ls '$O/tl.marks' | wc -l) -ge 100 ]"
scontrol update jobid="$TL" TimeLimit=0

# ---- meanwhile (n3, n4): one declared lost comes back; one killed ----------------------------
M=200
seq 1 $M >"$O/in"
chmod 644 "$O/in"
# lose NAME MODE: a farm on n3 and n4 whose n4 gpupack holds its tasks, then is stopped (MODE
# stop: and continued once declared lost) or killed (MODE kill); its heartbeat is made old
lose() {
	local name=$1 mode=$2 j f pid i=0
	mkdir -m 1777 "$O/$name.count"
	touch "$O/$name.hold"
	chmod 644 "$O/$name.hold"
	local args="-j 1 --joblog $O/$name.log $TASK --ms 50 --count $O/$name.count :::: $O/in" post=""
	# the fallback doc/slurm.md gives: what srun left, on the batch node; its status is the farm's
	[ "$mode" = kill ] && post="[ \$rc = 0 ] || { GPUPACK_STATE_DIR=$O/state-$name.batch $GPUPACK run --resume-failed --share timeslice $args; rc=\$?; }
echo rc=\$rc"
	S=$(farm_job "$name" "[ \$SLURMD_NODENAME = n4 ] && export FARM_TASK_HOLD=$O/$name.hold" "$post" $args)
	j=$(submit -w n3,n4 -N2 --ntasks-per-node=1 --gres=gpu:8 "$S")
	# n4's gpupack: its heartbeat file names it (node.procid.pid)
	until f=$(ls "$O/$name.log.farm"/[0-9]*/alive/n4.* 2>/dev/null) && [ -n "$f" ] &&
		[ "$(ls "$O/$name.log.farm"/[0-9]*/claim 2>/dev/null | wc -l)" -gt 100 ]; do
		i=$((i + 1))
		[ $i -lt 1200 ] || break
		sleep 0.1
	done
	pid=${f##*.}
	if [ "$mode" = stop ]; then kill -STOP "$pid"; else kill -KILL "$pid"; fi
	touch -h -d @1000000000 "$f"
	wait_until 60 test -L "${f%/alive/*}/lost/$(basename "$f")"
	ok $? "$name: n4's gpupack ($mode) is declared lost by n3's"
	[ "$mode" = stop ] && kill -CONT "$pid"
	job_wait "$j" 120
	J=$j
}

lose fence stop
out=$(cat "$O/job-$J.out")
like "$out" "srun-rc=0" "fence: srun exits 0: the gpupack declared lost exits with the farm's status"
like "$out" "declared this one lost .* waiting for the farm's end" "fence: it said why it stopped"
is "$(state_of "$J")" COMPLETED "fence: the job is COMPLETED (afterok holds)"
is "$(ls "$O/fence.count" | wc -l):$(cat "$O"/fence.count/* | wc -l)" "$M:$M" "fence: every input ran to its end once"
is "$(records "$O/fence.log"):$(distinct "$O/fence.log")" "$M:$M" "fence: one record each"

lose killed kill
out=$(cat "$O/job-$J.out")
like "$out" "srun-rc=137" "killed: srun exits 137 (a task killed outright: srun's rule)"
like "$out" "rc=0" "killed: the fallback that doc/slurm.md gives exits 0, the farm's status"
is "$(state_of "$J")" COMPLETED "killed: the job is COMPLETED"
is "$(ls "$O/killed.count" | wc -l)" "$M" "killed: every input ran to its end"
is "$(records "$O/killed.log"):$(distinct "$O/killed.log")" "$M:$M" "killed: one record each"

# ---- the time limit: then --resume --------------------------------------------------------------
job_wait "$TL" 300
ok $? "the farm job ends"
is "$(state_of "$TL")" TIMEOUT "it hit its time limit"
M1=$(ls "$O/tl.marks" | wc -l)
ok "$([ "$M1" -gt 0 ] && [ "$M1" -lt $N ] && echo 0 || echo 1)" "in the middle of the farm ($M1 of $N ran)"
S=$(farm_job tl2 "" "" -j 4 --resume --joblog $O/tl.log $TASK --ms 1000 --mark $O/tl.marks :::: $O/tl.in)
R=$(submit -N4 --ntasks-per-node=1 --gres=gpu:8 "$S")
job_wait "$R" 300
like "$(cat "$O/job-$R.out")" "srun-rc=0" "resubmitted with --resume on 4 nodes: srun exits 0"
is "$(ls "$O/tl.marks" | wc -l)" $N "every input ran to its end"
is "$(grep -c 'ran twice' "$O"/job-"$TL".out "$O"/job-"$R".out | awk -F: '{s += $2} END {print s}')" 0 \
	"none twice: a task the time limit killed was not recorded, and ran again"
is "$(records "$O/tl.log"):$(distinct "$O/tl.log")" "$N:$N" "the joblog: one record per input, across both jobs"
is "$(tail -n +2 "$O/tl.log" | cut -f7,8 | sort -u | tr '\t' ' ')" "0 0" "all ended well (the limit's kills are not records)"
