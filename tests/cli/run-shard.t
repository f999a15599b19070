#!/bin/sh
# shellcheck disable=SC2016,SC1083,SC2086 # the tasks' own $VARS and {#} are literal; $GPUPACK may be a word list
# run-shard.t: --shard K/N and --shard slurm: one run split over several
# gpupack instances (one per node under srun). Each runs inputs K, K+N, ...
# numbered from 0, keeps the run's global {#}, its own joblog through
# {shard}, and resumes its own share; together they run every input once.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
cd "$T" || exit 1
unset SLURM_PROCID SLURM_NTASKS

# --- three shards make the whole run ------------------------------------------------
: >all
for k in 0 1 2; do
	run R -k --shard "$k/3" --joblog 'jobs.{shard}.log' echo {#} {} ::: a b c d e f g h i j
	is "$rc" 0 "shard $k/3: exit 0"
	printf '%s\n' "$out" >"out.$k"
	cat "out.$k" >>all
done
is "$(sort -n all | tr '\n' ' ')" "1 a 2 b 3 c 4 d 5 e 6 f 7 g 8 h 9 i 10 j " \
	"the shards together ran every input once, with the run's own {#}"
is "$(tr '\n' ' ' <out.1)" "2 b 5 e 8 h " "shard 1/3: inputs 1, 4, 7 counted from 0, in order with -k"
ok "$([ -f jobs.0.log ] && [ -f jobs.1.log ] && [ -f jobs.2.log ] && echo 0 || echo 1)" \
	"{shard} in --joblog: one joblog per shard"
is "$(awk -F'\t' 'NR > 1 { print $1 }' jobs.2.log | sort -n | tr '\n' ' ')" "3 6 9 " "a shard's joblog holds its own tasks (in the order they ended)"

# --- slurm: SLURM_PROCID of SLURM_NTASKS ----------------------------------------------
run env SLURM_PROCID=1 SLURM_NTASKS=2 $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice \
	-k --json --shard slurm echo {} ::: a b c d e
is "$rc" 0 "--shard slurm: exit 0"
is "$(printf '%s\n' "$err" | head -n 2 | tr '\n' ' ')" "b d " "--shard slurm: task 1 of 2 runs the second and fourth"
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r '.shard + " " + (.tasks | tostring) + " " + (.skipped | tostring)')" \
	"1/2 2 0" "the JSON summary names the shard and counts its own tasks only"
run env SLURM_PROCID=0 SLURM_NTASKS=2 $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice \
	--shard slurm --joblog one.log echo ::: a b
is "$rc" 0 "one joblog for every srun task: still runs"
like "$err" "every shard writes the one joblog one.log" "one joblog for every srun task: a warning says so"

# --- resume a shard --------------------------------------------------------------------
rm -f jobs.* fixed
run R --shard 0/2 --joblog 'jobs.{shard}.log' 'echo {}; [ {} != c ] || [ -e fixed ]' ::: a b c d e
is "$rc" 1 "shard 0/2 with a failing task: exit 1 (one failed)"
: >fixed
run R --shard 0/2 --joblog 'jobs.{shard}.log' --resume-failed 'echo {}; [ {} != c ] || [ -e fixed ]' ::: a b c d e
is "$rc:$out" "0:c" "--resume-failed on the shard reruns its failed task alone"
run R --shard 0/2 --joblog 'jobs.{shard}.log' --resume 'echo {}; [ {} != c ] || [ -e fixed ]' ::: a b c d e
is "$rc:$out" "0:" "--resume after that: nothing left in the shard"
run R --shard 1/2 --joblog 'jobs.{shard}.log' --resume 'echo {}' ::: a b c d e
is "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" "b d " "the other shard's journal is its own"

# --- bad specs: exit 255, one line, nothing run, no joblog --------------------------------
for spec in 3/3 1/0 a/2 -1/2 1/2/3 "" /2 2/ 1 " 1/2" 1/1000001 99999999999/2; do
	rm -f bad.log
	run R --shard "$spec" --joblog bad.log echo ran ::: x
	is "$rc" 255 "--shard '$spec': exit 255"
	one_line "$err" "--shard '$spec': one line"
	ok "$([ -z "$out" ] && [ ! -e bad.log ] && echo 0 || echo 1)" "--shard '$spec': nothing ran, no joblog"
done
like "$err" "want K/N with 0 <= K < N" "the message says what is wanted"
run R --shard slurm echo ::: x
is "$rc" 255 "--shard slurm outside srun: exit 255"
like "$err" "SLURM_PROCID and SLURM_NTASKS are not set" "--shard slurm outside srun: says why"
run env SLURM_PROCID=2 SLURM_NTASKS=2 $GPUPACK --sim "$TOPO/h100-80gb.topo" run --shard slurm echo ::: x
is "$rc" 255 "SLURM_PROCID not below SLURM_NTASKS: exit 255"
like "$err" "is not a task number below the task count" "SLURM_PROCID not below SLURM_NTASKS: says why"
run R --joblog 'j.{shard}.log' echo ::: x
is "$rc" 255 "{shard} without --shard: exit 255"
like "$err" "{shard} without --shard" "{shard} without --shard: says so"
run R --shard 0/1 -k echo {} ::: x y
is "$(printf '%s\n' "$out" | tr '\n' ' ')" "x y " "--shard 0/1 is the whole run"

