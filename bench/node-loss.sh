#!/usr/bin/env bash
# node-loss.sh: how long a farm over nodes takes to take a lost member's
# inputs over (src/farm/nodes.c), on this machine with real gpupacks: two
# members of one farm (GPUPACK_FARM_RUN, 2 slots each, tasks held at their
# end), one of them lost while it holds inputs, and the time from the loss
# to its lost mark (FILE.farm/RUN/lost/OWNER): the others take its inputs
# over from then (the farm then ends; its joblog's inputs are counted).
# Each way a member is lost:
#
#   watchdog  kill -9 of gpupack, its node up: its watchdog marks it lost
#   slurm     its node DOWN (gpupack stopped: silent; a fake scontrol on PATH
#             says State=DOWN, SLURM_JOB_ID set): asked once GPUPACK_FARM_ASK late
#   silent    kill -9 of gpupack and its watchdog (a node that lost power):
#             GPUPACK_FARM_LOST's rule, the only one before (60 s)
#
#   bash bench/node-loss.sh [MODE...]      (TRIALS=3; the silent mode waits a minute a trial)
set -u
cd "$(dirname "$0")/.." || exit 2
make -s -j2 build/gpupack build/tests/tools/farm-task || exit 1
G=$PWD/build/gpupack TASK=$PWD/build/tests/tools/farm-task
T=$(mktemp -d "${TMPDIR:-/tmp}/node-loss.XXXXXX")
PIDS=""
cleanup() { for p in $PIDS; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
mkdir "$T/bin"
cp tests/tools/fake-scontrol.sh "$T/bin/scontrol"
chmod +x "$T/bin/scontrol"
seq 1 40 >"$T/in"
now() { date +%s.%N; }

# trial MODE N: one farm, one member lost; prints "MODE N SECONDS RECORDED"
trial() {
	mode=$1 n=$2 L="$T/log.$1.$2" run="r$2"
	R="$L.farm/$run"
	touch "$T/hold"
	extra=""
	[ "$mode" = slurm ] && extra="PATH=$T/bin:$PATH SLURM_JOB_ID=77 FAKE_SCONTROL=down"
	for k in 0 1; do
		# shellcheck disable=SC2086
		env SLURMD_NODENAME=n$k SLURM_PROCID=$k GPUPACK_FARM_RUN=$run GPUPACK_SIM=$PWD/topologies/h100-80gb-x8.topo \
			FARM_TASK_HOLD="$T/hold" $extra "$G" run --gpus 0 --share timeslice -j 2 --joblog "$L" \
			"$TASK" --ms 1 :::: "$T/in" >/dev/null 2>"$T/err.$mode.$n.$k" &
		eval "P$k=\$!"
		PIDS="$PIDS $!"
	done
	# every slot busy: 4 inputs claimed
	until [ "$(ls "$R/claim" 2>/dev/null | wc -l)" -ge 4 ]; do sleep 0.02; done
	owner=n1.1.$P1
	case $mode in
	watchdog) kill -9 "$P1" ;;
	slurm) kill -STOP "$P1" ;;
	silent)
		# shellcheck disable=SC2046
		kill -9 $(ps -o pid= --ppid "$P1") "$P1" ;;
	esac
	t0=$(now)
	until [ -L "$R/lost/$owner" ]; do sleep 0.02; done
	t1=$(now)
	rm -f "$T/hold"
	[ "$mode" = slurm ] && kill -CONT "$P1"
	wait "$P0" "$P1" 2>/dev/null
	ok=$(tail -n +2 "$L" | cut -f1 | sort -un | wc -l)
	awk -v m="$mode" -v n="$n" -v a="$t0" -v b="$t1" -v k="$ok" 'BEGIN {printf "%-8s %d %6.2f %d\n", m, n, b - a, k}'
}

echo "# $(uname -n), $(nproc) cores, $(git rev-parse --short HEAD); mode trial seconds_to_lost inputs_recorded_of_40"
[ $# -gt 0 ] || set -- watchdog slurm silent
for mode in "$@"; do
	for n in $(seq 1 "${TRIALS:-3}"); do
		trial "$mode" "$n"
	done
done
