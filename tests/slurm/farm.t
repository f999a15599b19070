#!/bin/bash
# farm.t: one farm over all nodes of an allocation, under a real Slurm
# (tests/slurm/lib.sh): `srun gpupack run --joblog FILE ...`, one gpupack per
# node, FILE.farm on a filesystem they share (here all four nodes are one
# host). 10,000 tasks over 4 nodes, node n4 three times slower: each input
# runs to its end exactly once, and the makespan is within 1.15x of the
# ideal (the tasks over the nodes' measured speeds) plus one task. Then
# scancel in the middle, and --resume on 2 nodes: still exactly once.
#
# The makespan is compared with an ideal computed from the same run's
# measured task times (a loaded machine slows both alike); the figures are
# printed as diagnostics. Four fake nodes share 2 CPU cores here: the tasks
# sleep, so that the cores only start them and keep the records.
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
. "$GPUPACK_SRC/tests/slurm/lib.sh"

slurm_up || { ok 1 "the cluster comes up"; exit 1; }
ok 0 "a four-node Slurm comes up"
O="$SL_DIR/jobs/farm"
mkdir -m 1777 "$O"
N=${FARM_TASKS:-10000}
MS=200        # a task on a fast node
J=4           # tasks per GPU: 16 slots a node
seq 1 "$N" >"$O/in"
chmod 644 "$O/in"

# farm_job NAME MS EXTRA...: a job script running one gpupack per node, n4 3x slower
farm_job() {
	local name=$1 ms=$2
	shift 2
	job_script "$name.sh" <<EOF
#!/bin/sh
export GPUPACK_SIM=$SL_TOPO
# each node's gpupack keeps its own state (the watchdog's record of the run), the job user's:
# the test's own GPUPACK_STATE_DIR (root's) is exported into the job and is not
srun --ntasks-per-node=1 sh -c '
	export GPUPACK_STATE_DIR=$O/state-$name.\$SLURMD_NODENAME
	[ "\$SLURMD_NODENAME" = n4 ] && export FARM_TASK_SCALE=3
	exec $GPUPACK run --share timeslice -j $J $* --joblog $O/$name.log \
		$TOOLS/farm-task --ms $ms --mark $O/$name.marks :::: $O/in'
EOF
}
submit() { as_user sbatch --parsable -o "$O/job-%j.out" -e "$O/job-%j.out" "$@"; }
marks() { ls "$O/$1.marks" 2>/dev/null | wc -l; }
ran_twice() { grep -c 'ran twice' "$O"/job-*.out 2>/dev/null | awk -F: '{s+=$2} END {print s + 0}'; }

# why an input ran twice or failed (on stderr, for the record of a failed run)
explain() {
	local seq
	for seq in $(grep -ho 'input [0-9]* ran twice' "$O"/job-*.out | awk '{print $2}' | sort -un | head -n 5); do
		echo "# input $seq ran twice: mark $(cat "$O/$1.marks/$seq"); claims:" \
			"$(for r in "$O/$1.log.farm"/*/; do printf '%s ' "$(basename "$r"):$(readlink "$r/claim/$seq")"; done)" \
			"records: $(cat "$O/$1.log.farm"/*/log/* 2>/dev/null | awk -F'\t' -v s="$seq" '$1 == s' | tr '\t\n' ' |')" >&2
	done
}

if [ "${FARM_PART:-all}" = all ]; then
# ---- 10,000 tasks over 4 nodes, one three times slower ---------------------------------
mkdir -m 1777 "$O/big.marks"
S=$(farm_job big "$MS")
J1=$(submit -N4 --ntasks-per-node=1 --gres=gpu:4 "$S")
job_wait "$J1" 900
ok $? "the farm job ends"
L="$O/big.log"
is "$(marks big)" "$N" "every input ran to its end"
is "$(ran_twice)" 0 "none twice"
is "$(tail -n +2 "$L" | wc -l):$(tail -n +2 "$L" | cut -f1 | sort -n | uniq | wc -l)" "$N:$N" \
	"the joblog has one record per input"
is "$(tail -n +2 "$L" | cut -f7,8 | sort -u | tr '\t' ' ')" "0 0" "all ended well"
is "$(tail -n +2 "$L" | cut -f2 | sort -u | tr '\n' ' ')" "n1 n2 n3 n4 " "all four nodes took part"
# makespan against the ideal: N tasks over the nodes' capacities (slots / mean task time)
read -r M IDEAL NOMINAL LONGEST SLOW <<<"$(awk -F'\t' -v slots=$((4 * J)) -v ms="$MS" -v n="$N" '
	NR > 1 { s = $3; e = $3 + $4; if (min == "" || s < min) min = s; if (e > max) max = e
		 k[$2]++; rt[$2] += $4; if ($4 > longest) longest = $4 }
	END { for (h in k) cap += slots / (rt[h] / k[h])
	      printf "%.2f %.2f %.2f %.3f %d\n", max - min, n / cap, n * ms / 1000 / (slots * (3 + 1 / 3)), longest, k["n4"] }' "$L")"
diag "makespan $M s; ideal $IDEAL s from the measured task times (nominal $NOMINAL s); longest task $LONGEST s; n4 ran $SLOW of $N"
ok "$(awk -v m="$M" -v i="$IDEAL" -v l="$LONGEST" 'BEGIN {print (m <= 1.15 * i + l) ? 0 : 1}')" \
	"makespan $M s is within 1.15 x the ideal $IDEAL s plus one task ($LONGEST s)"
ok "$([ "$SLOW" -lt $((N * 2 / 10)) ] && echo 0 || echo 1)" "the slow node took a small share ($SLOW; a fair one is $((N / 10)))"
is "$(all_left)" "" "nothing of the plugin's left on the nodes"
fi

# ---- scancel in the middle, then --resume on 2 nodes ------------------------------------------
mkdir -m 1777 "$O/cut.marks"
S=$(farm_job cut 50)
J2=$(submit -N4 --ntasks-per-node=1 --gres=gpu:4 "$S")
wait_until 300 sh -c "[ \$(ls '$O/cut.marks' | wc -l) -ge $((N * 3 / 10)) ]"
as_user scancel "$J2"
job_wait "$J2" 120
ok $? "scancel in the middle: the job ends"
M1=$(marks cut)
ok "$([ "$M1" -lt "$N" ] && echo 0 || echo 1)" "it stopped midway ($M1 of $N ran)"
S=$(farm_job cut 50 --resume)
J3=$(submit -N2 --ntasks-per-node=1 --gres=gpu:4 "$S")
job_wait "$J3" 900
ok $? "the job resumed on 2 nodes ends"
L="$O/cut.log"
is "$(marks cut)" "$N" "every input ran to its end"
is "$(ran_twice)" 0 "none twice: --resume ran only what no node finished"
[ "$(ran_twice)" = 0 ] || explain cut
is "$(tail -n +2 "$L" | wc -l):$(tail -n +2 "$L" | cut -f1 | sort -n | uniq | wc -l)" "$N:$N" \
	"the joblog has one record per input, across both jobs"
is "$(tail -n +2 "$L" | cut -f7,8 | sort -u | tr '\t' ' ')" "0 0" "all ended well (scancel's kills are not records)"
is "$(readlink "$L.farm/$J3.0/parent")" "$J2.0" "the resumed run names the cancelled one as its parent"
is "$(cat $(ls -d "$L.farm/$J2.0"/log/* | grep -v '\.gpupack$') | grep -v '^Seq' | grep -c .)" "$M1" \
	"the cancelled run recorded exactly the $M1 inputs that had ended"
