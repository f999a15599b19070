#!/bin/bash
# spank.t: gpupack_spank.so in a real Slurm (tests/slurm/lib.sh: four slurmd
# nodes with four fake GPUs each, the MPS control double, jobs as gpslurm).
# Per job and node: one private daemon per allocated GPU, the job user's, with
# the asked limits, each task pointed at its own GPU's daemon; nothing left
# after a normal end, scancel, a killed task or a killed step; nothing for a
# job that did not ask; one clear line for a bad SPEC, bad plugin arguments
# and a daemon that will not start; leftovers of a crashed node cleaned, a
# live job's daemons untouched; `gpupack run` inside the job using the job's
# daemons.
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
. "$GPUPACK_SRC/tests/slurm/lib.sh"

slurm_up || { ok 1 "the cluster comes up"; exit 1; }
ok 0 "a four-node Slurm comes up (plugin: $SL_ARGS)"
PROBE="$GPUPACK_SRC/tests/slurm/probe.sh"
O="$SL_DIR/jobs/out"
mkdir -m 1777 "$O"
export PROBE_CLIENT="$TOOLS/fake-mps-client" PROBE_OUT="$O"

submit() { as_user sbatch --parsable -o "$O/job-%j.out" -e "$O/job-%j.out" "$@"; }
node_of() { squeue -h -j "$1" -o %N; }
# wait_file FILE [SECONDS]
wait_file() { wait_until "${2:-60}" test -e "$1"; }
release() { touch "$O/release-$1"; }
# a job script that runs its steps, then waits for the test to release it
hold='i=0; while [ ! -e "$PROBE_OUT/release-$SLURM_JOB_ID" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done'
uid_of() { stat -c %u "$1" 2>/dev/null; }
mode_of() { stat -c %a "$1" 2>/dev/null; }
rec_pid() { sed -n 's/^pid=//p' "$1/daemon" 2>/dev/null; }

# ---- one daemon per GPU, private, the user's, tasks on their own GPU's daemon ---
S=$(job_script four.sh <<EOF
#!/bin/sh
srun -n4 --gpus-per-task=1 $PROBE
touch "\$PROBE_OUT/steps-\$SLURM_JOB_ID"
$hold
EOF
)
J=$(submit -N1 -n4 --gres=gpu:4 --gpupack-mps=sm=25,mem=1G "$S")
wait_file "$O/steps-$J"
ok $? "job $J with --gpupack-mps=sm=25,mem=1G ran its step"
N=$(node_of "$J")
JD="$SL_MPS/$N/$J"
DAEMONS=$(ls -d "$JD"/GPU-* 2>/dev/null)
is "$(echo "$DAEMONS" | grep -c .)" 4 "one daemon directory per allocated GPU (4)"
bad=""
for d in $DAEMONS; do
	p=$(rec_pid "$d")
	[ -n "$p" ] && [ -d "/proc/$p" ] || bad="$bad no-daemon:$d"
	[ "$(uid_of "/proc/$p")" = "$SL_UID" ] || bad="$bad daemon-uid:$p"
	for sub in "$d" "$d/pipe" "$d/log"; do
		[ "$(uid_of "$sub"):$(mode_of "$sub")" = "$SL_UID:700" ] || bad="$bad $sub:$(uid_of "$sub"):$(mode_of "$sub")"
	done
done
is "$bad" "" "each daemon runs as the job user, in 0700 directories the user owns"
is "$(uid_of "$JD"):$(mode_of "$JD")" "$SL_UID:700" "the job's directory is the user's, 0700"
is "$(stat -c %U:%a "$SL_MPS/$N/$J.job")" "root:644" "the job's record is root's (the user cannot change it)"
T4=$(cat "$O"/task-"$J".0.* 2>/dev/null)
is "$(echo "$T4" | grep -c '^client .*mps=1 .*sm=25.0 mem=1544M')" 4 \
	"each of the 4 tasks is an MPS client held to sm 25% and 1G (+520M of context)"
bad=""
for f in "$O"/task-"$J".0.?; do
	cvd=$(sed -n 's/.* cvd=\([^ ]*\) .*/\1/p' "$f")
	pipe=$(sed -n 's/.* pipe=\([^ ]*\) .*/\1/p' "$f")
	dev=$(sed -n 's/.* dev=\([^ ]*\).*/\1/p' "$f")
	[ "$pipe" = "$JD/$cvd/pipe" ] && [ "$dev" = "$cvd" ] || bad="$bad [$cvd $pipe $dev]"
done
is "$bad" "" "each task's pipe directory is its own GPU's daemon (CUDA_VISIBLE_DEVICES is that GPU's UUID)"
is "$(sed -n 's/.* cvd=\([^ ]*\) .*/\1/p' "$O"/task-"$J".0.? | sort -u | wc -l)" 4 "the 4 tasks have 4 different GPUs"
release "$J"
job_wait "$J"
ok $? "the job ends"
is "$(all_left)" "" "after a normal end: no daemon, no directory, no record left"

# ---- a task that sees several GPUs gets one daemon for them all --------------
J=$(submit -N1 -n1 --gres=gpu:2 --gpupack-mps=mem=2G --wrap "srun -n1 $PROBE")
job_wait "$J"
f=$(ls "$O"/task-"$J".0.0 2>/dev/null)
cvd=$(sed -n 's/.* cvd=\([^ ]*\) .*/\1/p' "$f")
like "$cvd" "^GPU-[^,]+,GPU-[^,]+$" "a task with two GPUs sees both, by UUID"
like "$(cat "$f")" "client .*mps=1 .*mem=2568M .*dev=$cvd\$" "its daemon serves both GPUs, with the limits"
like "$(sed -n 's/.* pipe=\([^ ]*\) .*/\1/p' "$f")" "/$J/set-[0-9a-f]+/pipe$" "its pipe directory is the daemon of that set"
is "$(all_left)" "" "nothing left after it"

# ---- a job without the option gets nothing --------------------------------------
J=$(submit -N1 -n1 --gres=gpu:2 --wrap "srun -n1 $PROBE")
job_wait "$J"
like "$(cat "$O/task-$J.0.0" 2>/dev/null)" "pipe= mpsdir=" "a job without --gpupack-mps: no MPS variables"
like "$(cat "$O/task-$J.0.0" 2>/dev/null)" "client .*mps=0" "its task is no MPS client"
is "$(cat "$SL_DIR"/log/slurmd-n*.log | grep -v ': GPU usage: ' | grep -c "gpupack: spank: job $J[: ]")" 0 \
	"the plugin did nothing for it but its GPU usage (no other log line)"
# every GPU job's usage: one line per node in slurmd's log, the figures in its AdminComment
is "$(cat "$SL_DIR"/log/slurmd-n*.log | grep -c "gpupack: spank: job $J on n[0-9]*: GPU usage: gpu [0-9]* (GPU-")" 1 \
	"the epilog logs the job's GPU usage, one line"
like "$(cat "$SL_DIR"/log/slurmd-n*.log | grep "gpupack: spank: job $J on n[0-9]*: GPU usage: ")" \
	"energy ([0-9.]+ J|-) (exact|estimate|unknown).*, peak memory ([0-9.]+ [MG]iB|-) (exact|estimate|unknown)" \
	"each GPU's energy and peak memory, each with its quality"
like "$(scontrol show job "$J" | grep -o 'AdminComment=.*')" \
	"^AdminComment=gpupack n[0-9]+ to step (batch|0): gpu [0-9]+ ([0-9.]+J|-) (exact|estimate|unknown) " \
	"scontrol show job: AdminComment has the figures at the last step's end"

# ---- nothing left after scancel, a killed task, a killed step --------------------
S=$(job_script long.sh <<EOF
#!/bin/sh
PROBE_MS=60000 srun -n2 --gpus-per-task=1 $PROBE
EOF
)
J=$(submit -N1 -n2 --gres=gpu:2 --gpupack-mps "$S")
wait_until 60 sh -c "[ -s '$O/task-$J.0.1.pid' ] && [ -s '$O/task-$J.0.0.pid' ]"
N=$(node_of "$J")
sleep 0.5
ok "$([ "$(ls -d "$SL_MPS/$N/$J"/GPU-* | wc -l)" -eq 2 ] && echo 0 || echo 1)" "scancel: the job runs with 2 daemons"
as_user scancel "$J"
job_wait "$J"
ok $? "scancel: the job ends"
is "$(all_left)" "" "after scancel: no daemon, no client, no directory left"

S=$(job_script killed.sh <<EOF
#!/bin/sh
PROBE_MS=60000 srun -n1 --gpus-per-task=1 $PROBE
touch "\$PROBE_OUT/step0-\$SLURM_JOB_ID"
srun -n1 --gpus-per-task=1 $PROBE
EOF
)
J=$(submit -N1 -n1 --gres=gpu:1 --gpupack-mps "$S")
wait_until 60 test -s "$O/task-$J.0.0.pid"
sleep 0.5
P=$(cat "$O/task-$J.0.0.pid")
kill -KILL $(ps -o pid= --ppid "$P") "$P" 2>/dev/null
wait_file "$O/step0-$J"
ok $? "killed task: its step ends, the job goes on"
job_wait "$J"
like "$(cat "$O/task-$J.1.0" 2>/dev/null)" "client .*mps=1" "killed task: the next step still gets MPS"
is "$(all_left)" "" "after a killed task: nothing left"

J=$(submit -N1 -n1 --gres=gpu:1 --gpupack-mps "$S")
wait_until 60 test -s "$O/task-$J.0.0.pid"
sleep 0.5
as_user scancel "$J.0"
wait_file "$O/step0-$J"
ok $? "killed step (scancel JOB.0): the job goes on"
job_wait "$J"
like "$(cat "$O/task-$J.1.0" 2>/dev/null)" "client .*mps=1" "killed step: the next step still gets MPS"
is "$(all_left)" "" "after a killed step: nothing left"

# ---- gpupack run inside the job uses the job's daemons ---------------------------
S=$(job_script farm.sh <<EOF
#!/bin/sh
export GPUPACK_SIM=$SL_TOPO GPUPACK_MPS_CONTROL=$TOOLS/fake-mps-control
# the user's own state (the run's watchdog record): the test's GPUPACK_STATE_DIR is root's
export GPUPACK_STATE_DIR=\$PROBE_OUT/state-\$SLURM_JOB_ID
for d in \$GPUPACK_MPS_DIR/GPU-*; do sed -n 's/^pid=//p' \$d/daemon; done | sort >"\$PROBE_OUT/before-\$SLURM_JOB_ID"
$GPUPACK run --share mps -j 2 $PROBE_CLIENT --ms 50 --pidfile "\$PROBE_OUT/p-\$SLURM_JOB_ID-{}" ::: 1 2 3 4 5 6 7 8 >"\$PROBE_OUT/farm-\$SLURM_JOB_ID"
echo "rc=\$?" >>"\$PROBE_OUT/farm-\$SLURM_JOB_ID"
for d in \$GPUPACK_MPS_DIR/GPU-*; do sed -n 's/^pid=//p' \$d/daemon; done | sort >"\$PROBE_OUT/after-\$SLURM_JOB_ID"
EOF
)
J=$(submit -N1 -n1 --gres=gpu:4 --gpupack-mps=sm=30 "$S")
job_wait "$J"
F=$(cat "$O/farm-$J" 2>/dev/null)
like "$F" "rc=0" "gpupack run inside the job succeeds"
is "$(echo "$F" | grep -c 'mps=1 .*sm=30.0')" 8 "its 8 tasks are clients of the job's daemons (the job's sm 30%)"
is "$(echo "$F" | sed -n 's/.*dev=\([^ ]*\).*/\1/p' | sort -u | wc -l)" 4 "spread over the job's 4 GPUs"
ok "$([ -s "$O/before-$J" ] && cmp -s "$O/before-$J" "$O/after-$J" && echo 0 || echo 1)" \
	"the job's daemons are the same before and after the run (neither restarted nor stopped)"

# ---- a step that asks in a job that did not --------------------------------------
J=$(submit -N1 -n1 --gres=gpu:1 --wrap "srun --gpupack-mps -n1 $PROBE; echo step-rc=\$?")
job_wait "$J"
out=$(cat "$O/job-$J.out")
is "$(echo "$out" | grep -c '^gpupack: spank: ')" 1 "--gpupack-mps on a step only: one line of ours"
like "$out" "did not ask for MPS: give it to sbatch or salloc" "it says what to do"
like "$out" "step-rc=[1-9]" "and the step fails (no silent run without MPS)"

# ---- bad SPEC, bad arguments: one clear line ---------------------------------------
run as_user sbatch --gres=gpu:1 --gpupack-mps=sm=200 --wrap true
is "$rc" 2 "sbatch --gpupack-mps=sm=200 fails (exit 2)"
one_line "$err" "bad SPEC: one line"
like "$err" "sm=200: a thread percentage must be more than 0 and at most 100" "bad SPEC: it says why"
run as_user srun --gres=gpu:1 --gpupack-mps=sm=25,colour=blue true
is "$rc:$(echo "$err" | wc -l)" "2:1" "srun with an unknown SPEC item: exit 2, one line"
like "$err" "unknown item 'colour'" "unknown item: it says which"
is "$(squeue -h | wc -l)" 0 "no job was queued by either"

# a client's plugstack.conf with bad arguments: only what asks for MPS is refused
sed "s|^PlugStackConfig=.*|PlugStackConfig=$SL_DIR/etc/bad-plugstack.conf|" "$SLURM_CONF" >"$SL_DIR/etc/bad.conf"
chmod 644 "$SL_DIR/etc/bad.conf"
for bad in "bogus=1" "grace=forever" "max=sm=50 default=sm=80" "state=relative/dir" "grace=10 grace=20" \
	"state=/tmp/$(printf 'x%.0s' $(seq 40))"; do
	echo "required $GPUPACK_BUILD/gpupack_spank.so $bad" >"$SL_DIR/etc/bad-plugstack.conf"
	chmod 644 "$SL_DIR/etc/bad-plugstack.conf"
	run as_user env SLURM_CONF="$SL_DIR/etc/bad.conf" sbatch --gres=gpu:1 --gpupack-mps --wrap true
	is "$rc:$(echo "$err" | wc -l)" "2:1" "plugin arguments '$bad': sbatch --gpupack-mps fails with one line"
	like "$err" "^gpupack: spank: plugstack.conf: " "plugin arguments '$bad': the line names plugstack.conf"
done
like "$err" "too long for MPS's socket paths.*give the plugin a shorter state=" "a state= too long: refused at the check, saying so"
run as_user env SLURM_CONF="$SL_DIR/etc/bad.conf" sbatch --parsable -o /dev/null --wrap true
is "$rc:$err" "0:" "a job that does not ask for MPS is submitted as ever"
job_wait "$out"
echo "required $GPUPACK_BUILD/gpupack_spank.so grace=10 grace=20" >"$SL_DIR/etc/bad-plugstack.conf"
run as_user env SLURM_CONF="$SL_DIR/etc/bad.conf" sbatch --gres=gpu:1 --gpupack-mps --wrap true
like "$err" "grace= given twice" "grace=10 grace=20: refused, saying so"

# ---- a daemon that will not start ------------------------------------------------
cat >"$SL_DIR/jobs/broken-control" <<'EOF'
#!/bin/sh
echo "this node's GPUs are resting"
exit 1
EOF
chmod 755 "$SL_DIR/jobs/broken-control"
PS="$SL_DIR/etc/plugstack.conf"
cp "$PS" "$PS.good"
sed -i "s|control=[^ ]*|control=$SL_DIR/jobs/broken-control|" "$PS"
J=$(submit -N1 -n1 --gres=gpu:1 --gpupack-mps --wrap "srun -n1 $PROBE; echo after-step")
job_wait "$J"
out=$(cat "$O/job-$J.out")
is "$(echo "$out" | grep -c '^gpupack: spank: ')" 1 "MPS fails to start: one line of ours in the job's output"
like "$out" "^gpupack: spank: job $J on n[0-9]: MPS daemon for GPU-[^:]*: .*this node's GPUs are resting" \
	"the line says which device and why"
ok "$(echo "$out" | grep -q '^task=' && echo 1 || echo 0)" "no task ran (no silent time-sliced run)"
is "$(grep -h "gpupack: spank: job $J on" "$SL_DIR"/log/slurmd-n*.log | grep -c 'resting')" 1 \
	"slurmd's log has the same line"
is "$(scontrol show job "$J" 2>/dev/null | grep -o 'JobState=[A-Z]*')" "JobState=FAILED" "the job failed"
is "$(sinfo -h -N -o %T | sort -u)" "idle" "no node was drained for it"
is "$(all_left)" "" "nothing left of it"

sed -i "s|\$| on_error=run|" "$PS"
J=$(submit -N1 -n1 --gres=gpu:1 --gpupack-mps --wrap "srun -n1 $PROBE")
job_wait "$J"
out=$(cat "$O/job-$J.out")
like "$out" "^gpupack: spank: warning: job $J on n[0-9]+ runs without MPS: .*resting" \
	"on_error=run: a warning line says it runs without MPS"
like "$out" "client .*mps=0" "on_error=run: the task runs, without MPS"
cp "$PS.good" "$PS"

# ---- what a crashed node left is cleaned, a live job is not touched -----------------
L="$SL_MPS/n2"
mkdir -p "$L/999/GPU-dead/pipe" "$L/998/GPU-dead/pipe"
printf 'jobid=999\nuid=%s\ngid=0\nboot=00000000-0000-0000-0000-000000000000\nstatus=ok\n' "$SL_UID" >"$L/999.job"
printf 'jobid=998\nuid=%s\ngid=0\nboot=%s\nstatus=ok\n' "$SL_UID" "$(cat /proc/sys/kernel/random/boot_id)" >"$L/998.job"
chown -R "$SL_USER" "$L/999" "$L/998"
A=$(submit -w n2 -N1 -n1 --gres=gpu:1 --gpupack-mps --wrap "srun -n1 $PROBE; touch \$PROBE_OUT/steps-\$SLURM_JOB_ID; $hold")
wait_file "$O/steps-$A"
ok "$([ ! -e "$L/999" ] && [ ! -e "$L/999.job" ] && echo 0 || echo 1)" "a job dir from another boot (a crashed node) is removed before the next job's daemons start"
ok "$([ ! -e "$L/998" ] && [ ! -e "$L/998.job" ] && echo 0 || echo 1)" "a dead job's dir (no step, no daemon) is removed"
APID=$(rec_pid "$(ls -d "$L/$A"/GPU-* | head -n 1)")
B=$(submit -w n2 -N1 -n1 --gres=gpu:1 --gpupack-mps --wrap "srun -n1 $PROBE")
job_wait "$B"
like "$(cat "$O/task-$B.0.0")" "client .*mps=1" "a second job on the node gets its own daemons"
ok "$([ -d "$L/$A" ] && [ -d "/proc/$APID" ] && echo 0 || echo 1)" "the running job's directory and daemon are untouched by its prolog"
release "$A"
job_wait "$A"
is "$(all_left)" "" "nothing left at the end"
