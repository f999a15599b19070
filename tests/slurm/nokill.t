#!/bin/bash
# nokill.t: a node that goes DOWN under one farm over four nodes, in a real
# Slurm (tests/slurm/lib.sh), as doc/slurm.md says: with `sbatch --no-kill`
# and `srun --no-kill` the job and the step's other gpupacks go on, take over
# the lost node's inputs, and every input ends; with `sbatch --no-kill`
# alone, srun ends the step (every gpupack) when the node fails.
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
. "$GPUPACK_SRC/tests/slurm/lib.sh"

slurm_up || { ok 1 "the cluster comes up"; exit 1; }
ok 0 "a four-node Slurm comes up"
O="$SL_DIR/jobs/nk"
mkdir -m 1777 "$O"
N=400
seq 1 "$N" >"$O/in"
chmod 644 "$O/in"
submit() { as_user sbatch --parsable -o "$O/job-%j.out" -e "$O/job-%j.out" "$@"; }
marks() { ls "$O/$1.marks" 2>/dev/null | wc -l; }

# farm NAME SRUN-OPTS [LOST]: one gpupack per node, 100 ms tasks, a silent node declared lost after
# LOST seconds (3)
farm() {
	mkdir -m 1777 "$O/$1.marks"
	job_script "$1.sh" <<EOF
#!/bin/sh
export GPUPACK_SIM=$SL_TOPO GPUPACK_FARM_LOST=${3:-3}
srun $2 --ntasks-per-node=1 sh -c '
	export GPUPACK_STATE_DIR=$O/state-$1.\$SLURMD_NODENAME
	exec $GPUPACK run --share timeslice -j 2 --joblog $O/$1.log \
		$TOOLS/farm-task --ms 100 --mark $O/$1.marks :::: $O/in'
echo srun-rc=\$?
EOF
}

# down JOB NAME: n4 goes DOWN once a tenth of the inputs ran
down() {
	wait_until 120 sh -c "[ \$(ls '$O/$2.marks' | wc -l) -ge $((N / 10)) ]"
	scontrol update nodename=n4 state=down reason=nokill-test
}
resume_n4() { scontrol update nodename=n4 state=resume >/dev/null 2>&1; wait_until 60 all_idle; }

# ---- sbatch --no-kill and srun --no-kill: the farm goes on -------------------------------------
S=$(farm both --no-kill)
J=$(submit --no-kill -N4 --ntasks-per-node=1 --gres=gpu:1 "$S")
down "$J" both
job_wait "$J" 300
ok $? "the job ends"
is "$(marks both)" "$N" "every input ran to its end, the lost node's taken over"
is "$(tail -n +2 "$O/both.log" | cut -f1 | sort -un | wc -l)" "$N" "the farm's joblog has every input"
diag "srun: $(grep srun-rc "$O/job-$J.out"); n4 ran $(tail -n +2 "$O/both.log" | awk -F'\t' '$2 == "n4"' | wc -l)"
resume_n4

# ---- sbatch --no-kill alone: srun ends the step ------------------------------------------------
S=$(farm alone "")
J=$(submit --no-kill -N4 --ntasks-per-node=1 --gres=gpu:1 "$S")
down "$J" alone
job_wait "$J" 300
M=$(marks alone)
diag "sbatch --no-kill alone: $M of $N inputs ran; srun: $(grep srun-rc "$O/job-$J.out")"
ok "$([ "$M" -lt "$N" ] && echo 0 || echo 1)" "sbatch --no-kill alone: the step ended with the node ($M of $N ran)"
resume_n4

# ---- the default GPUPACK_FARM_LOST: Slurm says n4 is DOWN, the others take over in seconds ------
S=$(farm asked --no-kill 600)
J=$(submit --no-kill -N4 --ntasks-per-node=1 --gres=gpu:1 "$S")
down "$J" asked
T0=$(date +%s.%N)
wait_until 60 sh -c "ls '$O/asked.log.farm/'*/lost/ 2>/dev/null | grep -q '^n4\\.'"
ok $? "n4's gpupack declared lost with GPUPACK_FARM_LOST at 600 s"
diag "n4 DOWN -> declared lost in $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
job_wait "$J" 300
ok $? "the job ends"
is "$(marks asked)" "$N" "every input ran to its end, n4's taken over"
is "$(tail -n +2 "$O/asked.log" | cut -f1 | sort -un | wc -l)" "$N" "the farm's joblog has every input"
like "$(cat "$O/job-$J.out")" "(Slurm says its node n4 is lost|n4[.0-9]* was killed)" "the others said why"
diag "$(grep -m1 -E 'Slurm says its node n4|was killed' "$O/job-$J.out")"
resume_n4
