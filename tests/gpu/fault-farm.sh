#!/usr/bin/env bash
# fault-farm.sh: issue 42's fault farm on the lent GPU. 32 PyTorch trainings
# (bench/auto/train.py), one CUDA program that writes an illegal address
# (gpupack-work fault) and one training that dies of a device-side assert,
# ROUNDS times under gpupack's default (-j auto, MPS), alternating with GNU
# parallel -j 16 beside a hand-started MPS daemon (private pipe and log
# directories) every PAR_EVERY rounds (0: never). Per run: the makespan, the
# neighbours recorded failed (any failed record but the two faulting
# tasks'), the free fault reruns and --retries spent. Report: $OUT/fault-farm-TAG.md;
# the runs' joblogs, stderr, JSON, daemon logs and GPUPACK_TRACE (each attempt's
# start, its end's facts and verdict) in fault-farm-TAG.tgz beside it. Never
# changes a card setting; every daemon started is stopped.
#   ROUNDS=10 PAR_EVERY=3 bash tests/gpu/fault-farm.sh
#   ARMS="auto nousage" ...   each round runs these gpupack arms in turn: auto (GP_ARGS, default
#                             -j auto), nousage (the same with farm.usage_off=1: the per-task
#                             usage sampler reads no driver), j16, j16nousage (-j 16)
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/fault-farm}
TAG=${TAG:-a}
# the runs' files in one archive beside the report (the device brings back few files)
RUNS=$(mktemp -d /tmp/ffr.XXXXXX)
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
make -j"$(nproc)" build/gpupack build/gpupack-work >"$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
G=$PWD/build/gpupack
export PATH=$PATH:$PWD/.tools   # GNU parallel where the machine has none (a copy of the script)
W=$PWD/build/gpupack-work
ROUNDS=${ROUNDS:-10}
PAR_EVERY=${PAR_EVERY:-3}
tasks=$RUNS/tasks
{
	for s in $(seq 32); do echo "python3 bench/auto/train.py $s"; done
	echo "$W fault"
	echo "python3 bench/auto/train.py 99 200 2048 fault"
} >"$tasks"
rep=$OUT/fault-farm-$TAG.md
{
	echo "# fault farm ($TAG): 32 PyTorch trainings + an illegal address + a device-side assert"
	echo
	echo "- date: $(date -u '+%F %T UTC'); commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (uncommitted changes)')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(nproc) CPUs"
	echo "- the card's health before: $(nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT 2>&1 | grep -i -E 'pending|failure|uncorrectable' | tr -s ' ' | paste -sd ';' -)"
	echo
	echo "| run | farm | makespan (s) | done | failed | neighbours failed | fault reruns | retries spent |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$rep"

# failed records that are not the two faulting tasks'
neighbours() { awk -F'\t' 'NR > 1 && ($7 != 0 || $8 != 0) && $9 !~ / fault$/' "$1" | wc -l; }
row() { # name farm t0 t1 joblog json
	local ok failed nb fr rt
	ok=$(awk -F'\t' 'NR > 1 && $7 == 0 && $8 == 0' "$5" | wc -l)
	failed=$(awk -F'\t' 'NR > 1 && ($7 != 0 || $8 != 0)' "$5" | wc -l)
	nb=$(neighbours "$5")
	fr=$(jq -r '.fault_retries // "-"' "$6" 2>/dev/null || echo -)
	rt=$(jq -r '.retries // "-"' "$6" 2>/dev/null || echo -)
	echo "| $1 | $2 | $(awk -v a="$4" -v b="$3" 'BEGIN { printf "%.1f", a - b }') | $ok | $failed | $nb | ${fr:--} | ${rt:--} |" >>"$rep"
}

par_run() { # name
	local d t0 t1
	d=$(mktemp -d /tmp/ffp.XXXXXX)
	chmod 700 "$d"
	mkdir -p "$d/pipe" "$d/log"
	CUDA_MPS_PIPE_DIRECTORY=$d/pipe CUDA_MPS_LOG_DIRECTORY=$d/log nvidia-cuda-mps-control -d
	sleep 1
	t0=$(date +%s.%N)
	CUDA_MPS_PIPE_DIRECTORY=$d/pipe CUDA_MPS_LOG_DIRECTORY=$d/log timeout -k 10 "${LIMIT:-300}" \
		parallel -j 16 --joblog "$RUNS/$1.joblog" <"$tasks" >/dev/null 2>"$RUNS/$1.err"
	t1=$(date +%s.%N)
	echo quit | CUDA_MPS_PIPE_DIRECTORY=$d/pipe CUDA_MPS_LOG_DIRECTORY=$d/log nvidia-cuda-mps-control
	sleep 1
	cp "$d/log/server.log" "$RUNS/$1.server.log" 2>/dev/null
	echo '{}' >"$RUNS/$1.json"
	row "$1" "parallel -j 16 + hand MPS" "$t0" "$t1" "$RUNS/$1.joblog" "$RUNS/$1.json"
	rm -rf "$d"
}

# what a run that has not ended by LIMIT is doing, 12 s before it is killed: every task process
# (state, kernel wait, CPU), the run's daemon's view (server list, clients), the run's MPS logs
stall_dump() { # name state-dir pid
	local d
	sleep $(( ${LIMIT:-300} - 12 ))
	kill -0 "$3" 2>/dev/null || return 0
	{
		echo "--- $(date -u +%T) the run, 12 s before LIMIT"
		ps -eo pid,ppid,pgid,stat,wchan:28,etimes,time,pcpu,args --forest | grep -v -E 'ps -eo|grep' |
			grep -E 'gpupack|python3|nvidia-cuda-mps|sh -c' | cut -c1-220
		for d in "$2"/mps/*/; do
			echo "--- daemon $d"
			cat "$d/daemon" 2>/dev/null
			printf 'get_server_list\n' | CUDA_MPS_PIPE_DIRECTORY=$d/pipe timeout 5 nvidia-cuda-mps-control 2>&1 |
				while read -r s; do
					echo "server $s: $(printf 'get_server_status %s\n' "$s" |
						CUDA_MPS_PIPE_DIRECTORY=$d/pipe timeout 5 nvidia-cuda-mps-control 2>&1)"
					printf 'get_client_list %s\n' "$s" | CUDA_MPS_PIPE_DIRECTORY=$d/pipe timeout 5 \
						nvidia-cuda-mps-control 2>&1 | paste -sd ' ' - | sed 's/^/clients: /'
				done
			tail -n 40 "$d/log/control.log" 2>/dev/null
			tail -n 40 "$d/log/server.log" 2>/dev/null
		done
		nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader 2>&1 | head -n 40
	} >"$RUNS/$1.stall" 2>&1
}

# the run's daemon logs, copied each second while it lasts (its teardown removes them); a
# restarted daemon's earlier log is kept as .1
logs_keep() { # state-dir name pid
	local f to
	while kill -0 "$3" 2>/dev/null; do
		for f in "$1"/mps/*/log/server.log "$1"/mps/*/log/control.log; do
			[ -f "$f" ] || continue
			to=$RUNS/$2.$(basename "$f")
			[ -f "$to" ] && [ "$(stat -c %s "$f")" -lt "$(stat -c %s "$to")" ] && mv "$to" "$to.1"
			cp "$f" "$to" 2>/dev/null
		done
		sleep 1
	done
}

# an arm of the comparison: its gpupack options and knobs (ARMS lists those each round runs)
arm_args() { # arm
	case $1 in
	auto) echo "${GP_ARGS:-}" ;;
	nousage) echo "${GP_ARGS:-}" ;;
	j16) echo "-j 16" ;;
	j16nousage) echo "-j 16" ;;
	*) echo "fault-farm.sh: unknown arm $1 (auto, nousage, j16, j16nousage)" >&2; exit 2 ;;
	esac
}
arm_knobs() { # arm: farm.usage_off=1, the per-task usage sampler reading no driver
	case $1 in *nousage) echo farm.usage_off=1 ;; esac
}
ARMS=${ARMS:-auto}
for a in $ARMS; do arm_args "$a" >/dev/null || exit 2; done

gp_run() { # name arm
	local st t0 t1 pid dump keep
	st=$(mktemp -d /tmp/ffg.XXXXXX)
	t0=$(date +%s.%N)
	# GPUPACK_TRACE: each attempt's start, the facts of its end and the verdict (doc/run.md)
	# shellcheck disable=SC2046 # the arm's options split on purpose
	GPUPACK_KNOBS=$(arm_knobs "$2") GPUPACK_TRACE=$RUNS/$1.trace GPUPACK_STATE_DIR=$st \
		timeout -k 10 "${LIMIT:-300}" "$G" run $(arm_args "$2") \
		--json --joblog "$RUNS/$1.joblog" <"$tasks" >"$RUNS/$1.out" 2>"$RUNS/$1.err" &
	pid=$!
	stall_dump "$1" "$st" "$pid" &
	dump=$!
	logs_keep "$st" "$1" "$pid" &
	keep=$!
	wait "$pid"
	t1=$(date +%s.%N)
	kill "$dump" 2>/dev/null
	wait "$dump" "$keep" 2>/dev/null
	GPUPACK_STATE_DIR=$st "$G" mps stop --all --force >/dev/null 2>&1
	tail -n 1 "$RUNS/$1.out" >"$RUNS/$1.json"
	rm -f "$RUNS/$1.out"
	row "$1" "gpupack $2 ($(arm_args "$2" | grep . || echo '-j auto'), mps$([ -n "$(arm_knobs "$2")" ] && echo ", $(arm_knobs "$2")"))" \
		"$t0" "$t1" "$RUNS/$1.joblog" "$RUNS/$1.json"
	rm -rf "$st"
	# the archive so far: a call stopped at its limit still brings back the runs that ended
	tar -C "$RUNS" -czf "$OUT/fault-farm-$TAG.tgz" . 2>/dev/null
}

# one training alone first, untimed: on a fresh machine the first farm (gpupack's or parallel's)
# met the card's and PyTorch's first-use costs (f1: 3 trainings of 18 s took 82 s, parallel's first
# run 67 s against 28 s); every run below meets a machine past them
w0=$(date +%s.%N)
python3 bench/auto/train.py 0 >/dev/null 2>"$RUNS/warm-up.err"
warm="warm-up before the runs: one training alone, exit $?, $(awk -v a="$(date +%s.%N)" -v b="$w0" \
	'BEGIN { printf "%.1f", a - b }') s"
# DEADLINE (seconds): no round starts after it, so the report comes back within a call's limit
t_begin=$(date +%s)
for r in $(seq "$ROUNDS"); do
	[ $(($(date +%s) - t_begin)) -lt "${DEADLINE:-100000}" ] || break
	for a in $ARMS; do gp_run "$TAG-$a$r" "$a"; done
	if [ "$PAR_EVERY" -gt 0 ] && [ $(( (r - 1) % PAR_EVERY )) = 0 ]; then par_run "$TAG-p$r"; fi
done
left=$(pgrep -f 'nvidia-cuda-mps-(control|server)' | wc -l)
echo >>"$rep"
echo "MPS daemons left: $left; $warm" >>"$rep"
[ "$left" = 0 ] || pkill -f 'nvidia-cuda-mps-(control|server)'
tar -C "$RUNS" -czf "$OUT/fault-farm-$TAG.tgz" . && rm -rf "$RUNS"
cat "$rep"
