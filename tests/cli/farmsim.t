#!/bin/sh
# farmsim.t: the farm over nodes (src/farm/nodes.c), simulated: 16 nodes in
# one process through the farm's real coordination code (tests/tools/
# farmsim: the link wraps its file calls, its clock and its lock), 3 of them
# killed at random moments, over a shared directory with each weaker
# semantics the simulator emulates. Every input is recorded exactly once in
# the merged joblog (farmsim exits 1 otherwise), every member exits with the
# farm's status, and the coordination stays cheap. Deterministic: a
# simulated clock, a seeded draw; bench/farmsim.sh runs the large ones.
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"

SIM="$TOOLS/farmsim"
# field NAME: the figure after NAME in farmsim's report (NAME starts a line or follows two spaces)
field() { printf '%s\n' "$out" | sed 's/  /\n/g' | awk -v k="$1" '$1 == k {print $2; exit}'; }

# the sanitizer pass repeats the first's draws: one seed there
seeds="1 2"
[ "${GPUPACK_TEST_PASS:-}" = san ] && seeds=1
for fs in "" "--ttl 3" "--ttl 3 --nocto" "--append-delay 5" "--nolocks" "--ttl 3 --nocto --append-delay 5 --nolocks"; do
	for seed in $seeds; do
		# shellcheck disable=SC2086
		run "$SIM" -n 16 -t 6000 -s 4 --kills 3 --spread 0.5 --seed "$seed" $fs
		is "$rc:$(field lost):$(field twice):$(field nonzero_exits)" "0:0:0:0" \
			"16 nodes, 3 killed, ${fs:-a coherent filesystem} (seed $seed): 0 lost, 0 twice, every status the farm's"
	done
done

# the cost: a few metadata operations a task, whatever the farm's size
for n in 4 64; do
	run "$SIM" -n "$n" -t 50000 -s 4
	ops=$(field meta_ops/task)
	ratio=$(field ratio)
	ok "$(awk -v o="$ops" -v r="$ratio" 'BEGIN {exit !(o < 10 && r < 1.02)}'; echo $?)" \
		"$n nodes: $ops metadata operations a task (under 10), makespan ${ratio}x the ideal (under 1.02)"
done
# the tail: the last tasks go to whichever node is free (one 3x slower node does not hold the end)
run "$SIM" -n 8 -t 20000 -s 4 --slow 1:3
ok "$(awk -v t="$(field tail)" -v r="$(field ratio)" 'BEGIN {exit !(t < 4 && r < 1.02)}'; echo $?)" \
	"one node 3x slower: tail $(field tail) s, makespan $(field ratio)x the ideal"

# a known loss (--known 1: the killed nodes' watchdogs, or Slurm, say so a second after each kill):
# the others take over then, not after GPUPACK_FARM_LOST (60 s); still 0 lost, 0 twice
kills_ratio() { printf '%s\n' "$out" | awk '/^ideal given the kills/ {print $8}'; }
for fs in "" "--ttl 3 --nocto --append-delay 5 --nolocks"; do
	# shellcheck disable=SC2086
	run "$SIM" -n 16 -t 6000 -s 4 --kills 3 --spread 0.5 --seed 1 $fs
	slow=$(kills_ratio)
	# shellcheck disable=SC2086
	run "$SIM" -n 16 -t 6000 -s 4 --kills 3 --spread 0.5 --seed 1 --known 1 $fs
	fast=$(kills_ratio)
	is "$rc:$(field lost):$(field twice):$(field nonzero_exits)" "0:0:0:0" \
		"3 of 16 killed, known 1 s after, ${fs:-a coherent filesystem}: 0 lost, 0 twice, every status the farm's"
	ok "$(awk -v f="$fast" -v s="$slow" 'BEGIN {exit !(f < 1.05 && f < s)}'; echo $?)" \
		"makespan ${fast}x the ideal given the kills (under 1.05), ${slow}x by the 60 s rule alone"
done
