#!/bin/bash
# requeue.t: a requeued job under gpupack_spank.so, in a real Slurm
# (tests/slurm/lib.sh), as doc/slurm.md ("Requeue") says: scontrol requeue
# ends the job's first run (its epilog quits its daemons), the job runs again
# from the top of its script with the same id and fresh daemons, and a farm
# written with --resume goes on from its joblog: inputs that ended in the
# first run do not run again.
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
. "$GPUPACK_SRC/tests/slurm/lib.sh"

slurm_up || { ok 1 "the cluster comes up"; exit 1; }
ok 0 "a four-node Slurm comes up (plugin: $SL_ARGS)"
O="$SL_DIR/jobs/rq"
mkdir -m 1777 "$O"
rec_pid() { sed -n 's/^pid=//p' "$1/daemon" 2>/dev/null; }
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
state_of() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }

# inputs 1-3 end at once; 4-6 wait for $O/go (the first run is requeued while 4 waits)
S=$(job_script rq.sh <<EOF
#!/bin/sh
echo "start \$SLURM_JOB_ID" >>$O/starts
export GPUPACK_SIM=$SL_TOPO GPUPACK_MPS_CONTROL=$TOOLS/fake-mps-control GPUPACK_STATE_DIR=$O/state-\${SLURM_RESTART_COUNT:-0}
$GPUPACK run --share mps -j 1 --resume --joblog $O/rq.log \
	'echo {} >>$O/ran; [ {} -le 3 ] && exit 0; while [ ! -e $O/go ]; do sleep 0.1; done' ::: 1 2 3 4 5 6
echo rc=\$?
EOF
)
J=$(as_user sbatch --parsable --requeue -w n2 -N1 -n1 --gres=gpu:1 --gpupack-mps=sm=50 -o "$O/job.out" "$S")
wait_until 60 sh -c "[ \$(wc -l <$O/ran 2>/dev/null || echo 0) -ge 4 ]"
ok $? "the first run: inputs 1-3 ended, 4 waits"
P1=$(for d in "$SL_MPS/n2/$J"/GPU-*; do rec_pid "$d"; done)
ok "$([ -n "$P1" ] && alive "$P1" && echo 0 || echo 1)" "the first run's daemon runs"
scontrol requeue "$J"
ok $? "scontrol requeue $J"
# Slurm holds a requeued job (its BeginTime) for AuthInfo's cred_expire (30 s here, 120 s by
# default) and 1 s: a node runs a job's prolog once per credential, so a start forced earlier
# (scontrol update starttime=now) would find no daemons (the step says so)
t0=$(date +%s)
wait_until 200 sh -c "[ \$(grep -c start $O/starts) -ge 2 ]"
ok $? "the job runs again, from the top of its script"
diag "the second run started $(($(date +%s) - t0)) s after the requeue"
touch "$O/go"
chmod 644 "$O/go"
job_wait "$J" 120
is "$(state_of "$J")" COMPLETED "the requeued job completes"
is "$(sort "$O/starts" | uniq -c | awk '{print $1, $3}')" "2 $J" "twice, with the same id"
ok "$(alive "$P1" && echo 1 || echo 0)" "the first run's daemon was ended (its epilog ran)"
like "$(cat "$O/job.out")" "rc=0" "the farm's second run succeeds"
is "$(sort -n "$O/ran" | tr '\n' ' ')" "1 2 3 4 4 5 6 " \
	"--resume: inputs that ended in the first run did not run again (4 was stopped, and ran again)"
is "$(tail -n +2 "$O/rq.log" | wc -l)" 6 "the joblog has each input once"
is "$(all_left)" "" "nothing left"
