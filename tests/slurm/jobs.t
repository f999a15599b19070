#!/bin/bash
# jobs.t: gpupack_spank.so across jobs, in a real Slurm (tests/slurm/lib.sh).
# What a job whose epilog never ran left (its daemons still running) is swept
# by the next job's prolog, whatever that job asked, while a job that still
# runs on the node, with no step there, is not touched; bad arguments on the
# nodes' plugstack.conf line fail only the jobs that ask for MPS, and drain
# no node; a step's own --gpupack-mps lowers its tasks' limits, says off, or
# is refused with one line; and doc/slurm.md's 8-GPU job scripts, taken from
# the page itself, run under the MPS double.
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
. "$GPUPACK_SRC/tests/slurm/lib.sh"

slurm_up || { ok 1 "the cluster comes up"; exit 1; }
ok 0 "a four-node Slurm comes up (plugin: $SL_ARGS)"
PROBE="$GPUPACK_SRC/tests/slurm/probe.sh"
CLIENT="$TOOLS/fake-mps-client"
O="$SL_DIR/jobs/out"
mkdir -m 1777 "$O"
export PROBE_CLIENT="$CLIENT" PROBE_OUT="$O"
submit() { as_user sbatch --parsable -o "$O/job-%j.out" -e "$O/job-%j.out" "$@"; }
wait_file() { wait_until "${2:-60}" test -e "$1"; }
release() { touch "$O/release-$1"; }
hold='i=0; while [ ! -e "$PROBE_OUT/release-$SLURM_JOB_ID" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done'
rec_pid() { sed -n 's/^pid=//p' "$1/daemon" 2>/dev/null; }
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
state_of() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
# leftover NODE JOB: what a job whose epilog never ran leaves: its record, its directory, its
# daemons running as the job user (started as the plugin's prolog starts them)
leftover() {
	env GPUPACK_SIM="$SL_TOPO" GPUPACK_MPS_TIMEOUT=10 "$TOOLS/jobmps-driver" prolog --job "$2" \
		--user "$SL_USER" --node "$1" --gpus 0,1 -- $SL_ARGS >/dev/null
}
daemons_of() { for d in "$SL_MPS/$1/$2"/GPU-*; do rec_pid "$d"; done; }

# ---- a job whose epilog never ran: swept by the next job, with or without MPS ---------------
leftover n3 990
leftover n4 991
P990=$(daemons_of n3 990)
P991=$(daemons_of n4 991)
ok "$(for p in $P990 $P991; do alive "$p" || exit 1; done; echo 0)" \
	"two leftovers whose daemons still run (jobs 990 on n3, 991 on n4; Slurm never ran them)"
J=$(submit -w n3 -N1 -n1 --wrap true)
job_wait "$J"
ok "$([ ! -e "$SL_MPS/n3/990" ] && [ ! -e "$SL_MPS/n3/990.job" ] && echo 0 || echo 1)" \
	"a job without --gpupack-mps (and without GPUs) sweeps the leftover on its node"
is "$(for p in $P990; do alive "$p" && echo "$p"; done)" "" "and its daemons are ended"
J=$(submit -w n4 -N1 -n1 --gres=gpu:1 --gpupack-mps --wrap "srun -n1 $PROBE")
job_wait "$J"
ok "$([ ! -e "$SL_MPS/n4/991" ] && [ ! -e "$SL_MPS/n4/991.job" ] && echo 0 || echo 1)" \
	"a job with --gpupack-mps sweeps it too, before its own daemons start"
is "$(for p in $P991; do alive "$p" && echo "$p"; done)" "" "and its daemons are ended"
like "$(cat "$O/task-$J.0.0")" "client .*mps=1" "and then gets its own"

# a job that runs on the node with no step there now: its prolog ran (a step came and went)
A=$(submit -w n3,n4 -N2 -n2 --gres=gpu:1 --gpupack-mps --wrap "srun -N2 -n2 true; touch \$PROBE_OUT/steps-\$SLURM_JOB_ID; $hold")
wait_file "$O/steps-$A"
AP=$(daemons_of n4 "$A")
ok "$([ -n "$AP" ] && alive "$AP" && echo 0 || echo 1)" "job $A runs on n4 with no step there, its daemon up"
J=$(submit -w n4 -N1 -n1 --wrap true)
job_wait "$J"
ok "$([ -d "$SL_MPS/n4/$A" ] && alive "$AP" && echo 0 || echo 1)" "the next job's prolog on n4 leaves it alone"
release "$A"
job_wait "$A"
is "$(all_left)" "" "nothing left"

# ---- bad arguments on the nodes: only jobs that ask for MPS fail; no node drained ------------
PS="$SL_DIR/etc/plugstack.conf"
cp "$PS" "$SL_DIR/etc/good-plugstack.conf"
chmod 644 "$SL_DIR/etc/good-plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$SL_DIR/etc/good-plugstack.conf|" "$SLURM_CONF" >"$SL_DIR/etc/good.conf"
chmod 644 "$SL_DIR/etc/good.conf"
echo "required $GPUPACK_BUILD/gpupack_spank.so $SL_ARGS bogus=1" >"$PS"
gsubmit() { as_user env SLURM_CONF="$SL_DIR/etc/good.conf" sbatch --parsable -o "$O/job-%j.out" -e "$O/job-%j.out" "$@"; }
C=$(gsubmit -w n2 -N1 -n1 --gres=gpu:1 --wrap "srun -n1 $PROBE; echo step-rc=\$?")
M=$(gsubmit -w n2 -N1 -n1 --gres=gpu:1 --gpupack-mps --wrap "srun -n1 $PROBE; echo step-rc=\$?")
job_wait "$C"
job_wait "$M"
is "$(state_of "$C")" COMPLETED "nodes' plugin arguments wrong: a job without MPS runs"
like "$(cat "$O/job-$C.out")" "step-rc=0" "its step too"
out=$(cat "$O/job-$M.out")
is "$(echo "$out" | grep -c '^gpupack: spank: ')" 1 "a job that asks for MPS: one line of ours"
like "$out" "plugstack.conf line is wrong: unknown argument 'bogus=1'" "saying what is wrong, and whose it is to fix"
is "$(state_of "$M")" FAILED "and it fails"
is "$(sinfo -h -N -o %T | sort -u)" "idle" "no node was drained"
like "$(cat "$SL_DIR"/log/slurmd-n2.log)" "gpupack: spank: .*plugstack.conf: unknown argument 'bogus=1'" \
	"slurmd's log says it"
cp "$SL_DIR/etc/good-plugstack.conf" "$PS"

# ---- a step's own --gpupack-mps in a job with sm=50 ---------------------------------------------
S=$(job_script steps.sh <<EOF
#!/bin/sh
srun -n1 --gpupack-mps=sm=10 $PROBE; echo low-rc=\$?
srun -n1 --gpupack-mps=off $PROBE; echo off-rc=\$?
srun -n1 --gpupack-mps=sm=80 $PROBE; echo high-rc=\$?
EOF
)
J=$(submit -N1 -n1 --gres=gpu:1 --gpupack-mps=sm=50 "$S")
job_wait "$J"
out=$(cat "$O/job-$J.out")
like "$(cat "$O/task-$J.0.0")" "client .*mps=1 .*sm=10.0" "a step's sm=10 in a job with sm=50: its task is held to 10%"
like "$(cat "$O/task-$J.1.0")" "client .*mps=0" "a step's off: its task runs without MPS"
is "$(echo "$out" | grep -c -x -e low-rc=0 -e off-rc=0)" 2 "both steps succeed"
is "$(echo "$out" | grep -c '^gpupack: spank: ')" 1 "a step's sm=80 in a job with sm=50: one line"
like "$out" "sm=80 on a step: the job's daemons hold sm=50, and a step can only lower it" "saying why"
like "$out" "high-rc=[1-9]" "and that step fails"
run as_user srun -n1 --gres=gpu:1 --gpupack-mps=sm=10,sm=20 true
is "$rc:$(echo "$err" | wc -l)" "2:1" "--gpupack-mps=sm=10,sm=20: refused with one line"
like "$err" "sm= given twice" "saying why"
is "$(all_left)" "" "nothing left"

# ---- doc/slurm.md's 8-GPU job scripts, as the page shows them ------------------------------------
# doc_script MARKER: the ```sh block of doc/slurm.md that holds MARKER
doc_script() {
	awk -v m="$1" '/^```sh$/ {b = ""; inb = 1; next} /^```$/ {if (inb && index(b, m)) printf "%s", b; inb = 0; next}
		inb {b = b $0 "\n"}' "$GPUPACK_SRC/doc/slurm.md"
}
R8=$(doc_script "--ntasks=8 --gpus-per-task=1")
P8=$(doc_script "--gpupack-mps=sm=50,mem=8G")
ok "$([ -n "$R8" ] && [ -n "$P8" ] && echo 0 || echo 1)" "doc/slurm.md has both 8-GPU scripts"
printf '%s' "$R8" | sed "s|\\./rank|$PROBE|" | job_script rank8.sh >/dev/null
J=$(submit "$SL_DIR/jobs/rank8.sh")
job_wait "$J"
T8=$(cat "$O"/task-"$J".0.? 2>/dev/null)
is "$(echo "$T8" | grep -c '^client .*mps=1 .*mem=16904M')" 8 \
	"one rank per GPU: 8 ranks, each an MPS client held to 16G (+520M of context)"
is "$(echo "$T8" | sed -n 's/.* dev=\([^ ]*\)$/\1/p' | sort -u | wc -l)" 8 "each on its own GPU's daemon"
printf '%s\n' $(seq 1 64) >"$O/configs.txt"
chmod 644 "$O/configs.txt"
printf '%s' "$P8" | sed -e "s|^gpupack run|export GPUPACK_SIM=$SL_TOPO GPUPACK_MPS_CONTROL=$TOOLS/fake-mps-control GPUPACK_STATE_DIR=\$PROBE_OUT/state-\$SLURM_JOB_ID\\n$GPUPACK run|" \
	-e "s|\\./train --config {}|$CLIENT --ms 100 --pidfile $O/p8.{}|" -e "s|configs.txt|$O/configs.txt|" \
	-e "s|runs.log|$O/runs-\$SLURM_JOB_ID.log|" -e "\$a echo rc=\$?" | job_script pack8.sh >/dev/null
J=$(submit "$SL_DIR/jobs/pack8.sh")
job_wait "$J" 300
out=$(cat "$O/job-$J.out")
like "$out" "rc=0" "packed by gpupack over 8 GPUs: the run succeeds"
is "$(echo "$out" | grep -c '^mps=1 .*sm=50.0 mem=8712M')" 64 "its 64 tasks are clients of the job's daemons (sm 50%, 8G)"
is "$(echo "$out" | sed -n 's/.* dev=\([^ ]*\)$/\1/p' | sort -u | wc -l)" 8 "spread over the 8 GPUs"
is "$(tail -n +2 "$O/runs-$J.log" | wc -l)" 64 "and its joblog has them all"
is "$(all_left)" "" "nothing left"
