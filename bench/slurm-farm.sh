#!/usr/bin/env bash
# slurm-farm.sh: one farm over the nodes of an allocation against the static
# split (--shard slurm), side by side, on the single-host Slurm of the tests
# (tests/slurm/lib.sh: four slurmd nodes, root, Debian's packages). The same
# tasks (sleeps, so that 2 cores can host four nodes' worth of them), one
# node three times slower, in one go: each variant's makespan, the ideal
# from the measured task times (tasks over the nodes' capacities), and the
# ratios. Writes bench/results/<date>-slurm-farm.md (or $1).
#
#   bash bench/slurm-farm.sh [REPORT]     TASKS=4000 MS=200 J=4 (tasks per GPU, 4 GPUs a node)
set -u
cd "$(dirname "$0")/.." || exit 2
export GPUPACK_SRC=$PWD GPUPACK_BUILD=$PWD/build
GPUPACK=$GPUPACK_BUILD/gpupack
TOOLS=$GPUPACK_BUILD/tests/tools
TASKS=${TASKS:-4000}
MS=${MS:-200}
J=${J:-4}
REPORT=${1:-bench/results/$(date -u +%F)-slurm-farm.md}
make -j2 build/gpupack build/gpupack_spank.so build/tests/tools/farm-task >/dev/null || exit 1

# what tests/lib.sh would give the Slurm library
T=$(mktemp -d /tmp/gpupack-bench.XXXXXX)
_tap_n=0 _tap_fail=0
diag() { printf '# %s\n' "$*" >&2; }
CLEANUP=""
trap '[ -n "$CLEANUP" ] && $CLEANUP; rm -rf "$T"' EXIT
# shellcheck source=tests/slurm/lib.sh
. tests/slurm/lib.sh
slurm_up || { echo "the cluster did not come up" >&2; exit 1; }
O="$SL_DIR/jobs/bench"
mkdir -m 1777 "$O"
seq 1 "$TASKS" >"$O/in"
chmod 644 "$O/in"

# variant NAME GPUPACK-RUN-OPTIONS: run it on 4 nodes, n4 three times slower; print its figures
variant() {
	local name=$1 opts=$2 S id
	S=$(job_script "$name.sh" <<EOF
#!/bin/sh
export GPUPACK_SIM=$SL_TOPO
srun --ntasks-per-node=1 sh -c '
	[ "\$SLURMD_NODENAME" = n4 ] && export FARM_TASK_SCALE=3
	exec $GPUPACK run --share timeslice -j $J $opts $TOOLS/farm-task --ms $MS :::: $O/in'
EOF
)
	id=$(as_user sbatch --parsable -N4 --ntasks-per-node=1 --gres=gpu:4 -o "$O/$name.out" "$S")
	job_wait "$id" 1800 || { echo "job $id did not end" >&2; return 1; }
	# the node of a record: its Host column, or for a shard (Host ":") its shard K, on node K+1
	awk -F'\t' -v slots=$((4 * J)) -v n="$TASKS" -v name="$name" '
		$1 ~ /^[0-9]+$/ { h = $2
			if (h == ":") { f = FILENAME; sub(/.*shard/, "", f); sub(/\.log$/, "", f); h = "n" (f + 1) }
			s = $3; e = $3 + $4; if (min == "" || s < min) min = s; if (e > max) max = e
			k[h]++; rt[h] += $4; if (e > last[h]) last[h] = e }
		END { for (h in k) cap += slots / (rt[h] / k[h])
		      printf "%s %.2f %.2f %d %d %d %d %.2f %.2f\n", name, max - min, n / cap,
		          k["n1"], k["n2"], k["n3"], k["n4"], last["n1"] - min, last["n4"] - min }' "$O"/"$name"*.log
}

t0=$(date +%s)
FARM=$(variant farm "--joblog $O/farm.log")
SHARD=$(variant shard "--shard slurm --joblog $O/shard{shard}.log")
read -r _ FM FI F1 F2 F3 F4 FE1 FE4 <<<"$FARM"
read -r _ SM SI S1 S2 S3 S4 SE1 SE4 <<<"$SHARD"
NOMINAL=$(awk -v n="$TASKS" -v ms="$MS" -v s=$((4 * J)) 'BEGIN {printf "%.2f", n * ms / 1000 / (s * (3 + 1 / 3))}')
{
	echo "# One farm over 4 Slurm nodes against --shard slurm, one node 3x slower"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with changes)')"
	echo "- machine: $(nproc) cores ($(uptime | sed 's/.*load average/load average/')), shared with other work"
	echo "- Slurm $(slurmd -V | awk '{print $2}'): four slurmd on one host (tests/slurm/lib.sh), 4 fake GPUs a node"
	echo "- command: \`bash bench/slurm-farm.sh\` (TASKS=$TASKS MS=$MS J=$J: $((4 * J)) slots a node; n4's tasks take 3x)"
	echo "- both variants in one go, one after the other; $(($(date +%s) - t0)) s in all"
	echo
	echo "| variant | makespan s | ideal s (measured task times) | makespan / ideal | tasks n1 n2 n3 n4 | n1 ends at | n4 ends at |"
	echo "|---|---|---|---|---|---|---|"
	echo "| one farm (\`--joblog\`) | $FM | $FI | $(awk -v a="$FM" -v b="$FI" 'BEGIN {printf "%.3f", a / b}') | $F1 $F2 $F3 $F4 | $FE1 | $FE4 |"
	echo "| \`--shard slurm\` | $SM | $SI | $(awk -v a="$SM" -v b="$SI" 'BEGIN {printf "%.3f", a / b}') | $S1 $S2 $S3 $S4 | $SE1 | $SE4 |"
	echo
	echo "Nominal ideal (no load): $NOMINAL s. The static split over the farm: $(awk -v a="$SM" -v b="$FM" 'BEGIN {printf "%.2fx", a / b}') the makespan."
	echo "The ideal is the tasks over the nodes' capacities (slots / mean task time, measured in the same run)."
} >"$REPORT"
cat "$REPORT"
